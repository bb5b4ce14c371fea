/* turn.h: one chat turn from the stored user message to session.task_complete (lock, provider, credit, history, the agent, commit, spend, plan), for a streaming client or a queued job, and the choice of provider it runs on. */
#ifndef SVC_AGENT_TURN_H
#define SVC_AGENT_TURN_H

#include <stddef.h>

#include <json-c/json.h>

#include "core/config.h"
#include "db/db.h"
#include "http/http.h"

/*
 * ---- The choice of provider ----
 * Which provider a workspace's turns use: the workspace's own
 * (workspace_ai_providers), else the instance default (SVC_AI_*). Strings are
 * owned by the struct; api_key is cleansed by
 * svc_agent_provider_choice_dispose().
 */
struct svc_agent_provider_choice {
	char protocol[16];       /* "openai" or "anthropic" */
	char *base_url;          /* "" when no provider is configured anywhere */
	char *model;
	char *allowed_models;    /* comma-separated; "" = any model */
	char *api_key;           /* plaintext, "" when none */
	size_t api_key_len;
	int from_workspace;      /* 1 = the workspace's own */
	int text_tools;          /* 1: toolMode "text" (the workspace's, or SVC_AI_TOOL_MODE for the instance's) */
};

/* The table whose api_key column holds a workspace's sealed provider key (the AAD of lib/auth/crypto.h). */
#define SVC_AGENT_PROVIDER_TABLE "workspace_ai_providers"

/*
 * Fills `out` for workspace `wid`. Errors: SVC_E_UNAVAILABLE (a stored key
 * cannot be opened because ENCRYPTION_KEY is missing), SVC_E_VALIDATION (a
 * stored key does not open), DB errors, SVC_E_INTERNAL. `out` must be
 * disposed on success only.
 */
int svc_agent_provider_choose(struct svc_db *db, const struct svc_config *cfg, const char *wid,
			      struct svc_agent_provider_choice *out);

/* Frees the strings and cleanses the key. */
void svc_agent_provider_choice_dispose(struct svc_agent_provider_choice *p);

/*
 * Checks a turn's model override `model` (NULL: none) against `prov`: the
 * provider's default model and the models of its allowed list pass; with no
 * list, the instance's provider takes only models with a price
 * (SVC_AI_PRICES), so no turn escapes the credits by naming a model that
 * would cost 0 (a workspace's own provider bills the workspace). Returns 0,
 * or SVC_E_VALIDATION with a message for a person in `msg` (`msgmax` bytes).
 */
int svc_agent_provider_check_model(const struct svc_config *cfg, const struct svc_agent_provider_choice *prov,
				   const char *model, char *msg, size_t msgmax);

/*
 * ---- A chat turn ----
 * The walk of one message: svc_agent_chat_open() (provider, model, the
 * chat's generation lock, mode, history, the stored user.message), then
 * svc_agent_chat_stream() (the stream: credit, compaction, svc_agent_run(),
 * the commit, spend, plan, the final event), then svc_agent_chat_close().
 * Every event is stored in the chat's timeline as it is sent.
 */

/* What one chat turn is asked to do. Strings and objects are borrowed until svc_agent_chat_close(). */
struct svc_agent_chat_spec {
	const char *project_id, *workspace_id, *chat_id, *user_id;
	const char *token_id;            /* the API token the message came with, NULL or "" for a session (its cap) */
	const char *text;                /* the user message */
	const char *model;               /* the message's model override, or NULL */
	const char *mode;                /* the mode this turn runs in */
	const char *set_mode;            /* becomes the chat's mode once the lock is held; NULL: unchanged */
	struct json_object *attachments; /* as sent, kept in the user.message event; may be NULL */
	struct json_object *images;      /* as checked by svc_agent_attachments_check(); may be NULL */
	int plan;                        /* parse the final message into the chat's plan (plan.created) */
};

/* A chat turn between svc_agent_chat_open() and svc_agent_chat_close() (lib/agent/turn.c). */
struct svc_agent_chat;

/*
 * Everything before a turn's stream: the project's directory, the
 * workspace's provider, the model override, the chat's generation lock
 * (svc_agent_generation_claim()), spec->set_mode, the history
 * (svc_agent_history_load(): a timeline that cannot be read ends here, never
 * a turn without its history), then the user.message event stored and an
 * untitled chat named after it. Nothing is stored when it fails.
 *
 * Returns 0 with *out (close it with svc_agent_chat_close()), or an error
 * with, when a person should read more than the status, a message in `msg`
 * (`msgmax` bytes; "" otherwise) and the failing field in *out_field (or
 * NULL): SVC_E_UNAVAILABLE (the provider's key cannot be opened; the
 * history or another read failed), SVC_E_VALIDATION (field "model", see
 * svc_agent_provider_check_model()), SVC_E_CONFLICT (a generation runs in
 * this chat), SVC_E_RATE_LIMITED (the user's or workspace's turns at their
 * cap; answer with Retry-After: 5), other DB errors, SVC_E_INTERNAL.
 */
int svc_agent_chat_open(struct svc_db *db, const struct svc_config *cfg, const struct svc_agent_chat_spec *spec,
			struct svc_agent_chat **out, const char **out_field, char *msg, size_t msgmax);

/*
 * Begins the server-sent event stream on `resp` (status 200, lib/http
 * svc_sse_begin()) and runs the turn, every event going to the client and to
 * the timeline: no_provider, credit_exhausted, model_unavailable and other
 * failures (a DB error inside the stream too) arrive as the final `error`
 * event, else session.task_complete {stopped, reason?, filesChanged,
 * commit}. `fcgi_fd` is the FastCGI connection, watched for the client
 * leaving (-1: not watched); a client that left or a stop request ends the
 * model's work at once, and what was written is committed either way.
 */
void svc_agent_chat_stream(struct svc_agent_chat *c, struct svc_resp *resp, int fcgi_fd);

/* Releases the generation lock and frees the turn (NULL is allowed). */
void svc_agent_chat_close(struct svc_agent_chat *c);

/*
 * Runs a queued turn (SVC_JOB_FIRST_PROMPT, queued by
 * svc_project_queue_first_prompt(); `payload` its JSON {projectId, chatId,
 * userId, turnId, text}) as a chat message would (same timeline, lock,
 * credits, provider, commit) without a client. Returns 0 once the turn ran,
 * whatever its outcome (a model error is in the timeline), 0 for a project
 * or chat deleted since, SVC_E_VALIDATION for a payload without its fields,
 * SVC_E_CONFLICT while another generation runs in the chat or
 * SVC_E_RATE_LIMITED at the caps (the job is retried; lib/db/jobs.h), or DB
 * errors (a timeline that cannot be read too: run again later, never without
 * the history); `errmsg` (`errmax` bytes) says why.
 */
int svc_agent_chat_queued(struct svc_db *db, const struct svc_config *cfg, const char *payload, char *errmsg,
			  size_t errmax);

/*
 * Loads chat `chat_id` of project `project_id` (STMT_CHAT_GET, columns
 * CCOL_*) into *out, which the caller frees with svc_rows_free(). Returns 0,
 * SVC_E_NOT_FOUND (no such chat in that project) or a DB error.
 */
int svc_agent_chat_get(struct svc_db *db, const char *chat_id, const char *project_id, struct svc_rows **out);

#endif
