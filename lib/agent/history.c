/* history.c: a chat's conversation rebuilt from its timeline for the model, and its compaction into a summary when it outgrows the context window. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/agent.h"
#include "agent/check.h"
#include "agent/history.h"
#include "core/err.h"
#include "core/json.h"
#include "core/util.h"
#include "db/db.h"

#define SUMMARY_PREFIX "(Summary of the earlier conversation)\n"

/*
 * The latest compaction summary of a chat: the event id it covers (0 = none)
 * and its text (may be NULL; malloc'd). Returns 0 or the DB error (a chat
 * that cannot be read is not a chat without a summary).
 */
static int latest_summary(struct svc_db *db, const char *chat_id, int64_t *out_up_to, char **out_text)
{
	struct svc_dbv p = svc_dbv_str(chat_id);
	struct svc_rows *rows = NULL;
	uint64_t id;
	int err;

	*out_up_to = 0;
	*out_text = NULL;
	if ((err = svc_db_run(db, STMT_AGENT_SUMMARY_LATEST, &p, 1, &rows, NULL)) < 0)
		return err;
	if (rows && rows->nrows == 1 &&
	    svc_parse_u64(svc_rows_get(rows, 0, SMCOL_UP_TO), (uint64_t)INT64_MAX, &id) == 0) {
		*out_up_to = (int64_t)id;
		*out_text = svc_rows_get(rows, 0, SMCOL_SUMMARY) ? strdup(svc_rows_get(rows, 0, SMCOL_SUMMARY)) : NULL;
	}
	svc_rows_free(rows);
	return 0;
}

static void add_message(struct json_object *arr, const char *role, const char *text)
{
	struct json_object *m = json_object_new_object();

	json_object_object_add(m, "role", json_object_new_string(role));
	json_object_object_add(m, "content", json_object_new_string(text));
	json_object_array_add(arr, m);
}

#define HISTORY_IMAGE_BYTES (16 * 1024 * 1024) /* base64 bytes of earlier images sent again, newest first */
#define IMAGE_TOKENS 1600                       /* what one image counts for in the estimate */
#define HISTORY_CALLS_OPEN 32                   /* tool calls waiting for their results */

/* Rebuilding the conversation from the timeline (svc_agent_history_load). */
struct hist {
	struct json_object *arr;         /* the conversation, as struct svc_agent_turn.history */
	struct json_object *open_calls;  /* tool_calls of the assistant entry collecting calls, or NULL */
	struct {
		char orig[128];          /* the id the provider gave the call */
		char id[24];             /* the id it has in the rebuilt conversation */
		char name[64];
	} pending[HISTORY_CALLS_OPEN];
	size_t npending;
	unsigned ncalls;                 /* calls so far: rebuilt ids are h1, h2, ... */
	size_t chars;                    /* characters of texts, arguments and results */
};

static void hist_tool(struct hist *h, const char *id, const char *name, const char *content, int is_error)
{
	struct json_object *m = json_object_new_object();

	json_object_object_add(m, "role", json_object_new_string("tool"));
	json_object_object_add(m, "tool_call_id", json_object_new_string(id));
	json_object_object_add(m, "name", json_object_new_string(name));
	json_object_object_add(m, "content", json_object_new_string(content));
	json_object_object_add(m, "is_error", json_object_new_boolean(is_error));
	json_object_array_add(h->arr, m);
	h->chars += strlen(content);
}

/* Calls that never got a result (the turn ended between a call and its result) get one, as providers want. */
static void hist_close(struct hist *h)
{
	size_t i;

	for (i = 0; i < h->npending; i++)
		hist_tool(h, h->pending[i].id, h->pending[i].name, "error: the tool did not run: the turn ended first", 1);
	h->npending = 0;
	h->open_calls = NULL;
}

/*
 * A tool.call event {id, tool, args}: added to the assistant entry that
 * collects calls (a new one after a result), with a fresh id, so ids that
 * providers reuse across turns stay unique and fit Anthropic's pattern.
 */
static void hist_call(struct hist *h, struct json_object *ev)
{
	const char *orig = svc_json_str(ev, "id"), *name = svc_json_str(ev, "tool"), *args_text = "{}";
	struct json_object *args = NULL, *m, *c;

	if (!orig || !name || strlen(orig) >= sizeof h->pending[0].orig || strlen(name) >= sizeof h->pending[0].name)
		return;
	if (h->npending == HISTORY_CALLS_OPEN)
		hist_close(h);
	if (!h->open_calls) {
		m = json_object_new_object();
		json_object_object_add(m, "role", json_object_new_string("assistant"));
		json_object_object_add(m, "content", json_object_new_string(""));
		h->open_calls = json_object_new_array();
		json_object_object_add(m, "tool_calls", h->open_calls);
		json_object_array_add(h->arr, m);
	}
	if (json_object_object_get_ex(ev, "args", &args) && json_object_is_type(args, json_type_object))
		args_text = json_object_to_json_string_ext(args, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
	snprintf(h->pending[h->npending].orig, sizeof h->pending[0].orig, "%s", orig);
	snprintf(h->pending[h->npending].id, sizeof h->pending[0].id, "h%u", ++h->ncalls);
	snprintf(h->pending[h->npending].name, sizeof h->pending[0].name, "%s", name);
	c = json_object_new_object();
	json_object_object_add(c, "id", json_object_new_string(h->pending[h->npending].id));
	json_object_object_add(c, "name", json_object_new_string(name));
	json_object_object_add(c, "arguments", json_object_new_string(args_text));
	json_object_array_add(h->open_calls, c);
	h->npending++;
	h->chars += strlen(name) + strlen(args_text);
}

/* A tool.result {id, result} or tool.error {id, error} event; a result without its call is left out. */
static void hist_result(struct hist *h, struct json_object *ev, int is_error)
{
	const char *orig = svc_json_str(ev, "id"), *text = svc_json_str(ev, is_error ? "error" : "result");
	struct svc_buf b;
	size_t i;

	for (i = 0; orig && i < h->npending && strcmp(h->pending[i].orig, orig) != 0; i++)
		;
	if (!orig || i == h->npending)
		return;
	svc_buf_init(&b, 2 * 1024 * 1024);
	/* the model saw an error as "error: <text>" (lib/agent/agent.c run_call) */
	if ((!is_error || svc_buf_adds(&b, "error: ") == 0) && svc_buf_adds(&b, text ? text : "") == 0)
		hist_tool(h, h->pending[i].id, h->pending[i].name, b.data ? b.data : "", is_error);
	svc_buf_dispose(&b);
	memmove(&h->pending[i], &h->pending[i + 1], (h->npending - i - 1) * sizeof h->pending[0]);
	if (--h->npending == 0)
		h->open_calls = NULL; /* the next call starts a new assistant entry */
}

/*
 * Images of earlier user messages are sent again (docs/agent.md "Attachments
 * in the history"), newest first, up to HISTORY_IMAGE_BYTES of base64; older
 * ones are left out with a note in their message. Returns the characters the
 * kept images count for in the estimate.
 */
static size_t hist_trim_images(struct json_object *arr)
{
	size_t i = json_object_array_length(arr), used = 0, chars = 0, k, n, bytes;
	struct json_object *m, *imgs;
	int over = 0;

	while (i-- > 0) {
		m = json_object_array_get_idx(arr, i);
		if (!json_object_object_get_ex(m, "images", &imgs))
			continue;
		n = json_object_array_length(imgs);
		for (k = 0, bytes = 0; k < n; k++) {
			const char *data = svc_json_str(json_object_array_get_idx(imgs, k), "data");
			bytes += data ? strlen(data) : 0;
		}
		if (over || bytes > HISTORY_IMAGE_BYTES - used) {
			struct svc_buf b;
			char note[96];

			over = 1;
			snprintf(note, sizeof note, "\n[%zu image%s of this message no longer shown]", n, n == 1 ? "" : "s");
			svc_buf_init(&b, 2 * 1024 * 1024);
			if (svc_buf_adds(&b, svc_json_str(m, "content") ? svc_json_str(m, "content") : "") == 0 &&
			    svc_buf_adds(&b, note) == 0)
				json_object_object_add(m, "content", json_object_new_string(b.data));
			svc_buf_dispose(&b);
			json_object_object_del(m, "images");
			continue;
		}
		used += bytes;
		chars += n * IMAGE_TOKENS * 4;
	}
	return chars;
}

/*
 * The conversation so far as struct svc_agent_turn.history: the latest
 * compaction summary (as a user message), then what happened after it (its
 * newest 1000 events, at most about 48 MiB of them: STMT_AGENT_HISTORY_AFTER):
 * user messages with their images (svc_agent_attachments_check() again),
 * the tool calls with their results, the assistants' final messages.
 * *out_chars gets the characters of it all (an image counts as
 * IMAGE_TOKENS * 4), for the context estimate.
 */
int svc_agent_history_load(struct svc_db *db, const char *chat_id, struct json_object **out, size_t *out_chars)
{
	struct svc_dbv p[2];
	struct svc_rows *rows = NULL;
	struct hist h;
	struct svc_buf b;
	char *summary = NULL, msg[64];
	int64_t after;
	size_t r;
	int err;

	memset(&h, 0, sizeof h);
	if ((err = latest_summary(db, chat_id, &after, &summary)) < 0)
		return err;
	h.arr = json_object_new_array();
	if (summary) {
		svc_buf_init(&b, 8 * 1024 * 1024);
		if (svc_buf_adds(&b, SUMMARY_PREFIX) == 0 && svc_buf_adds(&b, summary) == 0) {
			add_message(h.arr, "user", b.data);
			h.chars += b.len;
		}
		svc_buf_dispose(&b);
		free(summary);
	}
	p[0] = svc_dbv_str(chat_id);
	p[1] = svc_dbv_i64(after);
	if ((err = svc_db_run(db, STMT_AGENT_HISTORY_AFTER, p, 2, &rows, NULL)) < 0) {
		json_object_put(h.arr);
		return err;
	}
	for (r = 0; rows && r < rows->nrows; r++) {
		struct json_object *ev = NULL, *att = NULL, *images = NULL;
		const char *type = svc_rows_get(rows, r, HCOL_TYPE), *payload = svc_rows_get(rows, r, HCOL_PAYLOAD), *text;

		if (!type || !payload || svc_json_parse_object(payload, strlen(payload), &ev) < 0)
			continue;
		text = svc_json_str(ev, "text");
		if (strcmp(type, "user.message") == 0) {
			hist_close(&h);
			if (text && *text) {
				add_message(h.arr, "user", text);
				h.chars += strlen(text);
				if (json_object_object_get_ex(ev, "attachments", &att) &&
				    svc_agent_attachments_check(att, &images, msg, sizeof msg) == 0 &&
				    json_object_array_length(images) > 0)
					json_object_object_add(json_object_array_get_idx(h.arr, json_object_array_length(h.arr) - 1),
							       "images", json_object_get(images));
				json_object_put(images);
			}
		} else if (json_object_array_length(h.arr) == 0) {
			/* the page of events began inside a turn: start at its next user message */
		} else if (strcmp(type, "assistant.message") == 0) {
			hist_close(&h);
			if (text && *text) {
				add_message(h.arr, "assistant", text);
				h.chars += strlen(text);
			}
		} else if (strcmp(type, "check.result") == 0) {
			/* a check whose errors went to the model is the user message of its fix round */
			struct json_object *f = NULL;
			char *fix;
			if (json_object_object_get_ex(ev, "fixing", &f) && json_object_get_boolean(f) &&
			    (fix = svc_agent_check_message(ev))) {
				hist_close(&h);
				add_message(h.arr, "user", fix);
				h.chars += strlen(fix);
				free(fix);
			}
		} else if (strcmp(type, "tool.call") == 0) {
			hist_call(&h, ev);
		} else if (strcmp(type, "tool.result") == 0 || strcmp(type, "tool.error") == 0) {
			hist_result(&h, ev, strcmp(type, "tool.error") == 0);
		}
		json_object_put(ev);
	}
	hist_close(&h);
	svc_rows_free(rows);
	h.chars += hist_trim_images(h.arr);
	*out = h.arr;
	*out_chars = h.chars;
	return 0;
}

/* The tokens the last request of the chat used (from its stored session.usage_info after `after`), or -1. */
static int64_t last_usage(struct svc_db *db, const char *chat_id, int64_t after)
{
	struct svc_dbv p[2] = { svc_dbv_str(chat_id), svc_dbv_i64(after) };
	struct svc_rows *rows = NULL;
	struct json_object *ev = NULL, *v;
	const char *payload;
	int64_t n = -1;

	if (svc_db_run(db, STMT_AGENT_LAST_USAGE, p, 2, &rows, NULL) == 0 && rows && rows->nrows == 1 &&
	    (payload = svc_rows_get(rows, 0, LUCOL_PAYLOAD)) && svc_json_parse_object(payload, strlen(payload), &ev) == 0) {
		n = 0;
		if (json_object_object_get_ex(ev, "inputTokens", &v))
			n += json_object_get_int64(v);
		if (json_object_object_get_ex(ev, "outputTokens", &v))
			n += json_object_get_int64(v);
	}
	json_object_put(ev);
	svc_rows_free(rows);
	return n;
}

int svc_agent_history_last_event(struct svc_db *db, const char *chat_id, int64_t *out)
{
	struct svc_dbv p = svc_dbv_str(chat_id);
	struct svc_rows *rows = NULL;
	uint64_t id = 0;
	int err;

	if ((err = svc_db_run(db, STMT_AGENT_LAST_EVENT_ID, &p, 1, &rows, NULL)) < 0)
		return err;
	if (rows && rows->nrows == 1 && svc_parse_u64(svc_rows_get(rows, 0, LECOL_ID), (uint64_t)INT64_MAX, &id) < 0)
		id = 0;
	svc_rows_free(rows);
	*out = (int64_t)id;
	return 0;
}

/*
 * Compaction: when the next request would not fit the model's context
 * window, the history is summarised first and replaced by the summary. The
 * estimate is the larger of the tokens the provider reported for the last
 * turn and the history's characters / 4 (texts, tool calls and results,
 * images as IMAGE_TOKENS each: a provider that reports no usage, or a
 * turn whose tool output the provider's count does not show yet), plus the
 * new text / 4 and its images. `up_to` is the last event before this turn.
 */
int svc_agent_compact(struct svc_db *db, const char *chat_id, struct svc_agent_turn *at, int64_t window,
		      size_t history_chars, int64_t up_to, struct json_object **history, struct svc_agent_result *spent,
		      char *msg, size_t msgmax)
{
	struct svc_agent_result r;
	struct json_object *ev, *fresh;
	struct svc_dbv p[3];
	struct svc_buf b;
	char *summary = NULL, *old = NULL;
	int64_t after, est;
	int err;

	if (window <= 0 || json_object_array_length(*history) == 0)
		return 0;
	if ((err = latest_summary(db, chat_id, &after, &old)) < 0)
		return err;
	free(old);
	est = last_usage(db, chat_id, after);
	if (est < (int64_t)(history_chars / 4))
		est = (int64_t)(history_chars / 4);
	est += (int64_t)(strlen(at->user_text) / 4);
	if (at->images)
		est += (int64_t)json_object_array_length(at->images) * IMAGE_TOKENS;
	if (est <= window)
		return 0;
	ev = json_object_new_object();
	json_object_object_add(ev, "estimatedTokens", json_object_new_int64(est));
	json_object_object_add(ev, "contextWindow", json_object_new_int64(window));
	err = at->emit(at->ctx, "session.compaction_start", ev);
	json_object_put(ev);
	if (err < 0)
		return err;
	at->history = *history;
	err = svc_agent_summarize(at, &summary, &r);
	spent->input_tokens += r.input_tokens;
	spent->output_tokens += r.output_tokens;
	if (err < 0) {
		snprintf(msg, msgmax, "%s", r.message);
		return err;
	}
	p[0] = svc_dbv_str(chat_id);
	p[1] = svc_dbv_i64(up_to);
	p[2] = svc_dbv_str(summary);
	if ((err = svc_db_run(db, STMT_AGENT_SUMMARY_INSERT, p, 3, NULL, NULL)) < 0) {
		free(summary);
		return err;
	}
	fresh = json_object_new_array();
	svc_buf_init(&b, 8 * 1024 * 1024);
	if (svc_buf_adds(&b, SUMMARY_PREFIX) == 0 && svc_buf_adds(&b, summary) == 0)
		add_message(fresh, "user", b.data);
	svc_buf_dispose(&b);
	json_object_put(*history);
	*history = fresh;
	at->history = fresh;
	ev = json_object_new_object();
	json_object_object_add(ev, "summaryChars", json_object_new_int64((int64_t)strlen(summary)));
	json_object_object_add(ev, "inputTokens", json_object_new_int64(r.input_tokens));
	json_object_object_add(ev, "outputTokens", json_object_new_int64(r.output_tokens));
	free(summary);
	err = at->emit(at->ctx, "session.compaction_complete", ev);
	json_object_put(ev);
	return err;
}
