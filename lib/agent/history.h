/* history.h: a chat's conversation rebuilt from its timeline for the model (docs/agent.md "History"), and its compaction. */
#ifndef SVC_AGENT_HISTORY_H
#define SVC_AGENT_HISTORY_H

#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include "agent/agent.h"
#include "db/db.h"

/*
 * The conversation of chat `chat_id` so far, as struct svc_agent_turn.history:
 * the latest compaction summary (as a user message), then what happened
 * after it (its newest 1000 events, at most about 48 MiB of them:
 * STMT_AGENT_HISTORY_AFTER): user messages with their images
 * (svc_agent_attachments_check() again; earlier images beyond 16 MiB of
 * base64, oldest first, are left out with a note), the tool calls with their
 * results (ids renumbered h1, h2, ...; a call without a result gets an error
 * result), the assistants' final messages. *out_chars gets the characters of
 * it all (an image counts as 1600 tokens, 4 characters each), for the
 * context estimate. On success *out gets a new array the caller puts.
 * Returns 0, or the DB error of either query (SVC_E_UNAVAILABLE for a
 * stalled or lost database): a turn must not run without its history
 * (bench/README.md "Soak" found one that did), so callers answer 503 or retry.
 */
int svc_agent_history_load(struct svc_db *db, const char *chat_id, struct json_object **out, size_t *out_chars);

/*
 * The id of the newest event of chat `chat_id`'s timeline into *out (0 when
 * it has none). Returns 0 or a DB error (*out untouched).
 */
int svc_agent_history_last_event(struct svc_db *db, const char *chat_id, int64_t *out);

/*
 * Compaction of chat `chat_id` before turn `at` runs: when the next request
 * would not fit the model's context window `window` (tokens; 0 or less: no
 * limit), *history (as svc_agent_history_load() made it, with
 * `history_chars`) is summarised by the model (svc_agent_summarize()), the
 * summary stored as covering the events up to `up_to` (the last event id
 * before this turn), and *history replaced by a new array holding only the
 * summary (the old one is put; at->history points at the new one). The
 * estimate is the larger of the tokens the provider reported for the last
 * request and the history's characters / 4, plus the new text / 4 and its
 * images. Emits session.compaction_start {estimatedTokens, contextWindow}
 * and session.compaction_complete {summaryChars, inputTokens, outputTokens}
 * through at->emit. The summary's tokens are added to *spent. Returns 0 (also
 * when nothing needed compacting), what at->emit returned, the errors of
 * svc_agent_summarize() with its message in msg (msgmax bytes), or DB errors.
 */
int svc_agent_compact(struct svc_db *db, const char *chat_id, struct svc_agent_turn *at, int64_t window,
		      size_t history_chars, int64_t up_to, struct json_object **history, struct svc_agent_result *spent,
		      char *msg, size_t msgmax);

#endif
