/* api_chat.c: chat messages answered as a server-sent event stream by the agent, and the chat timeline. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent.h"
#include "api.h"
#include "err.h"
#include "json.h"
#include "log.h"
#include "repo.h"

#define KEEPALIVE_MS 15000      /* a comment line after 15 s of silence (lighttpd max-write-idle) */
#define HEARTBEAT_MS 10000      /* generation lock refresh; a lock older than 90 s is stale */
#define STOP_POLL_MS 500        /* how often a stop request from another process is looked for */
#define DELTA_STORE_MAX (1024 * 1024)

/* State of one streamed turn, shared by the agent's callbacks. */
struct turn {
	struct svc_req *req;
	struct svc_resp *resp;
	const char *chat_id;
	char turn_id[37];
	int client_gone;
	int stop_requested;
	int64_t last_heartbeat_ms;
	int64_t last_stop_poll_ms;
	struct svc_buf deltas;         /* consecutive assistant.message_delta text, stored as one row */
};

static int store_event(struct turn *t, const char *type, struct json_object *event)
{
	struct svc_dbv p[4];

	p[0] = svc_dbv_str(t->chat_id);
	p[1] = svc_dbv_str(t->turn_id);
	p[2] = svc_dbv_str(type);
	p[3] = svc_dbv_str(json_object_to_json_string_ext(event, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
	return svc_db_run(t->req->ctx->db, STMT_EVENT_INSERT, p, 4, NULL, NULL);
}

/* Stores the text deltas gathered so far as one assistant.message_delta event of the timeline. */
static void flush_deltas(struct turn *t)
{
	struct json_object *o;

	if (!t->deltas.len)
		return;
	o = json_object_new_object();
	json_object_object_add(o, "delta", json_object_new_string_len(t->deltas.data, (int)t->deltas.len));
	json_object_object_add(o, "type", json_object_new_string("assistant.message_delta"));
	if (store_event(t, "assistant.message_delta", o) < 0)
		svc_log_error("chat: cannot store deltas of turn %s", t->turn_id);
	json_object_put(o);
	svc_buf_reset(&t->deltas);
}

/* Sends one event to the client (unless it has gone) and records it in the timeline. */
static int emit(void *ctx, const char *type, struct json_object *payload)
{
	struct turn *t = ctx;
	struct json_object *ev = json_object_new_object();
	int err = 0;

	json_object_object_foreach(payload, key, val)
		json_object_object_add(ev, key, json_object_get(val));
	if (strcmp(type, "assistant.message_delta") == 0) {
		const char *d = svc_json_str(payload, "delta");
		if (d && svc_buf_adds(&t->deltas, d) == SVC_E_TOO_LARGE) {
			flush_deltas(t);
			svc_buf_adds(&t->deltas, d);
		}
	} else {
		flush_deltas(t);
		json_object_object_add(ev, "type", json_object_new_string(type));
		if (store_event(t, type, ev) < 0)
			svc_log_error("chat: cannot store %s of turn %s", type, t->turn_id);
	}
	if (!t->client_gone && svc_sse_event(t->resp, type, ev) < 0)
		t->client_gone = 1;
	json_object_put(ev);
	if (t->client_gone)
		err = SVC_E_CLIENT_GONE;
	return err;
}

static int tick(void *ctx)
{
	struct turn *t = ctx;
	int64_t now = svc_mono_ms();
	struct svc_dbv p[2];

	if (!t->client_gone && svc_sse_keepalive(t->resp, KEEPALIVE_MS) < 0)
		t->client_gone = 1;
	if (t->client_gone)
		return SVC_E_CLIENT_GONE;
	p[0] = svc_dbv_str(t->chat_id);
	p[1] = svc_dbv_str(t->turn_id);
	if (now - t->last_heartbeat_ms >= HEARTBEAT_MS) {
		t->last_heartbeat_ms = now;
		svc_db_run(t->req->ctx->db, STMT_GEN_HEARTBEAT, p, 2, NULL, NULL);
	}
	if (now - t->last_stop_poll_ms >= STOP_POLL_MS) {
		struct svc_rows *rows = NULL;
		t->last_stop_poll_ms = now;
		if (svc_db_run(t->req->ctx->db, STMT_GEN_STOP_REQUESTED, p, 2, &rows, NULL) == 0 && rows &&
		    rows->nrows == 1 && strcmp(svc_rows_get(rows, 0, 0) ? svc_rows_get(rows, 0, 0) : "0", "1") == 0)
			t->stop_requested = 1;
		svc_rows_free(rows);
	}
	return t->stop_requested ? SVC_E_CANCELLED : 0;
}

/* The conversation so far, as [{role, content}], from the stored user and assistant messages. */
static struct json_object *load_history(struct svc_req *req, const char *chat_id)
{
	struct svc_dbv p = svc_dbv_str(chat_id);
	struct svc_rows *rows = NULL;
	struct json_object *arr = json_object_new_array();
	size_t r;

	if (svc_db_run(req->ctx->db, STMT_EVENT_HISTORY, &p, 1, &rows, NULL) < 0 || !rows)
		return arr;
	for (r = 0; r < rows->nrows; r++) {
		struct json_object *ev = NULL, *m;
		const char *payload = svc_rows_get(rows, r, 1), *text;
		if (!payload || svc_json_parse_object(payload, strlen(payload), &ev) < 0)
			continue;
		text = svc_json_str(ev, "text");
		if (text && *text) {
			m = json_object_new_object();
			json_object_object_add(m, "role", json_object_new_string(
				strcmp(svc_rows_get(rows, r, 0), "user.message") == 0 ? "user" : "assistant"));
			json_object_object_add(m, "content", json_object_new_string(text));
			json_object_array_add(arr, m);
		}
		json_object_put(ev);
	}
	svc_rows_free(rows);
	return arr;
}

/* A chat title from the first message: its first line, at most 60 characters. */
static void title_from(const char *text, char *out, size_t max)
{
	size_t o = 0, cps = 0;

	while (*text == ' ' || *text == '\n' || *text == '\t' || *text == '\r')
		text++;
	for (; *text && *text != '\n' && o + 4 < max; text++) {
		if (((unsigned char)*text & 0xc0) != 0x80 && ++cps > 60)
			break;
		out[o++] = *text;
	}
	out[o] = '\0';
}

static int chat_in_project(struct svc_req *req, const char *chat_id, const char *project_id, struct svc_rows **out)
{
	struct svc_dbv p[2] = { svc_dbv_str(chat_id), svc_dbv_str(project_id) };
	struct svc_rows *rows = NULL;
	int err = svc_db_run(req->ctx->db, STMT_CHAT_GET, p, 2, &rows, NULL);

	if (err < 0)
		return err;
	if (!rows || rows->nrows != 1) {
		svc_rows_free(rows);
		return SVC_E_NOT_FOUND;
	}
	*out = rows;
	return 0;
}

/*
 * POST /chat/:projectId/messages {chatId, text, model?, attachments?}: 200
 * text/event-stream; before the stream: 400 validation_failed, 403, 404
 * (project or chat), 409 (a generation is already running in this chat).
 */
int svc_api_chat_send(struct svc_req *req, struct svc_resp *resp)
{
	static const struct svc_field fields[] = {
		{ "chatId", SVC_V_UUID, SVC_F_REQUIRED, 0, 0, NULL },
		{ "text", SVC_V_TEXT, SVC_F_REQUIRED, 1, 100000, NULL },
		{ "model", SVC_V_STR, SVC_F_NULLABLE, 1, 200, NULL },
		{ "attachments", SVC_V_ARRAY, SVC_F_NULLABLE, 0, 10, NULL },
	};
	const struct svc_config *cfg = &req->ctx->cfg;
	const char *project_id = svc_req_param(req, "projectId"), *field, *text, *model;
	struct svc_rows *project = NULL, *chat = NULL;
	struct svc_agent_turn at;
	struct svc_agent_result result;
	struct json_object *user_ev = NULL, *att, *history = NULL, *done_ev;
	struct svc_dbv p[2];
	struct turn t;
	char msg[256], dir[2048], title[256], cmsg[200], sha[41] = "";
	int err, rc, changed = 0, locked = 0;

	memset(&t, 0, sizeof t);
	svc_buf_init(&t.deltas, DELTA_STORE_MAX);
	if ((err = svc_json_validate(req->json, fields, 4, &field, msg, sizeof msg)) < 0)
		return svc_resp_error(resp, err, field, "%s", msg);
	if ((err = svc_project_load(req, project_id, SVC_ACT_WRITE, &project)) < 0)
		return err;
	t.req = req;
	t.resp = resp;
	t.chat_id = svc_json_str(req->json, "chatId");
	text = svc_json_str(req->json, "text");
	model = svc_json_str(req->json, "model");
	if ((err = chat_in_project(req, t.chat_id, project_id, &chat)) < 0) {
		svc_resp_error(resp, err, "chatId", "No chat with this id in this project.");
		goto done;
	}
	if ((err = svc_project_dir(cfg, project_id, dir, sizeof dir)) < 0 || (err = svc_uuid_v4(t.turn_id)) < 0)
		goto done;

	/* One generation per chat, across every responder process. */
	p[0] = svc_dbv_str(t.chat_id);
	p[1] = svc_dbv_str(t.turn_id);
	svc_db_run(req->ctx->db, STMT_GEN_CLEAR_STALE, p, 1, NULL, NULL);
	if ((err = svc_db_run(req->ctx->db, STMT_GEN_INSERT, p, 2, NULL, NULL)) < 0) {
		if (err == SVC_E_CONFLICT)
			svc_resp_error(resp, err, NULL, "A generation is already running in this chat.");
		goto done;
	}
	locked = 1;
	history = load_history(req, t.chat_id);

	user_ev = json_object_new_object();
	json_object_object_add(user_ev, "text", json_object_new_string(text));
	att = NULL;
	json_object_object_get_ex(req->json, "attachments", &att);
	json_object_object_add(user_ev, "attachments", att ? json_object_get(att) : json_object_new_array());
	json_object_object_add(user_ev, "type", json_object_new_string("user.message"));
	if ((err = store_event(&t, "user.message", user_ev)) < 0)
		goto done;
	title_from(text, title, sizeof title);
	p[0] = svc_dbv_str(title);
	p[1] = svc_dbv_str(t.chat_id);
	svc_db_run(req->ctx->db, STMT_CHAT_TOUCH, p, 2, NULL, NULL);

	if (svc_sse_begin(resp) < 0)
		t.client_gone = 1;
	t.last_heartbeat_ms = t.last_stop_poll_ms = svc_mono_ms();

	memset(&at, 0, sizeof at);
	at.provider.protocol = cfg->ai_protocol;
	at.provider.base_url = cfg->ai_base_url;
	at.provider.api_key = cfg->ai_api_key;
	at.provider.model = model ? model : cfg->ai_model;
	at.provider.price_input_per_mtok = cfg->ai_price_input;
	at.provider.price_output_per_mtok = cfg->ai_price_output;
	at.project_dir = dir;
	at.mode = svc_rows_get(chat, 0, 2);
	at.history = history;
	at.user_text = text;
	at.emit = emit;
	at.tick = tick;
	at.ctx = &t;
	memset(&result, 0, sizeof result);
	rc = t.client_gone ? SVC_E_CLIENT_GONE : svc_agent_run(&at, &result);
	flush_deltas(&t);

	/* Whatever the outcome, files already written become one commit: nothing is lost. */
	{
		char aname[256] = "svc agent", first[80];
		title_from(text, first, sizeof first);
		snprintf(cmsg, sizeof cmsg, "Agent: %s", first);
		if (svc_repo_commit_all(dir, cmsg, aname, "agent@svc.invalid", sha, &changed) < 0)
			svc_log_error("chat: commit of turn %s failed", t.turn_id);
	}
	if (changed) {
		p[0] = svc_dbv_str(project_id);
		svc_db_run(req->ctx->db, STMT_PROJECT_TOUCH, p, 1, NULL, NULL);
	}
	if (rc == SVC_E_NO_PROVIDER || rc == SVC_E_MODEL_UNAVAILABLE || rc == SVC_E_CREDIT ||
	    (rc < 0 && rc != SVC_E_CLIENT_GONE && rc != SVC_E_CANCELLED)) {
		struct json_object *e = json_object_new_object();
		int code = (rc == SVC_E_NO_PROVIDER || rc == SVC_E_MODEL_UNAVAILABLE || rc == SVC_E_CREDIT) ? rc
													  : SVC_E_INTERNAL;
		json_object_object_add(e, "error", json_object_new_string(svc_err_code(code)));
		json_object_object_add(e, "message", json_object_new_string(
			result.message[0] ? result.message : svc_err_message(code)));
		emit(&t, "error", e);
		json_object_put(e);
	} else if (rc != SVC_E_CLIENT_GONE) {
		done_ev = json_object_new_object();
		json_object_object_add(done_ev, "stopped", json_object_new_boolean(rc == SVC_E_CANCELLED));
		json_object_object_add(done_ev, "filesChanged", json_object_new_boolean(changed));
		json_object_object_add(done_ev, "commit", changed ? json_object_new_string(sha) : NULL);
		emit(&t, "session.task_complete", done_ev);
		json_object_put(done_ev);
	}
	err = 0;
done:
	if (locked) {
		p[0] = svc_dbv_str(t.chat_id);
		p[1] = svc_dbv_str(t.turn_id);
		svc_db_run(req->ctx->db, STMT_GEN_DELETE, p, 2, NULL, NULL);
	}
	json_object_put(user_ev);
	json_object_put(history);
	svc_buf_dispose(&t.deltas);
	svc_rows_free(chat);
	svc_rows_free(project);
	return err;
}

/*
 * GET /chat/:projectId/messages?chatId&before&limit: 200 {items, nextCursor}
 * (items oldest first within the page; nextCursor is the `before` of the
 * next, older page, null at the start); 400; 403; 404.
 */
int svc_api_chat_history(struct svc_req *req, struct svc_resp *resp)
{
	const char *project_id = svc_req_param(req, "projectId");
	char chat_id[64], before[32], lim[16];
	uint64_t limit = 50, before_id = (uint64_t)INT64_MAX;
	struct svc_rows *project = NULL, *chat = NULL, *rows = NULL;
	struct json_object *body, *items;
	struct svc_dbv p[3];
	size_t shown, i;
	int err, q;

	if ((q = svc_req_query(req, "chatId", chat_id, sizeof chat_id)) <= 0 || !svc_uuid_valid(chat_id))
		return svc_resp_error(resp, SVC_E_VALIDATION, "chatId", "chatId must be a UUID");
	if ((q = svc_req_query(req, "limit", lim, sizeof lim)) < 0 ||
	    (q && (svc_parse_u64(lim, 200, &limit) < 0 || limit == 0)))
		return svc_resp_error(resp, SVC_E_VALIDATION, "limit", "limit must be an integer from 1 to 200");
	if ((q = svc_req_query(req, "before", before, sizeof before)) < 0 ||
	    (q && svc_parse_u64(before, (uint64_t)INT64_MAX, &before_id) < 0))
		return svc_resp_error(resp, SVC_E_VALIDATION, "before", "before is not a cursor this API returned");
	if ((err = svc_project_load(req, project_id, SVC_ACT_READ, &project)) < 0)
		return err;
	if ((err = chat_in_project(req, chat_id, project_id, &chat)) < 0)
		goto done;
	p[0] = svc_dbv_str(chat_id);
	p[1] = svc_dbv_i64((int64_t)before_id);
	p[2] = svc_dbv_i64((int64_t)limit + 1);
	if ((err = svc_db_run(req->ctx->db, STMT_EVENT_PAGE, p, 3, &rows, NULL)) < 0)
		goto done;
	body = json_object_new_object();
	items = json_object_new_array();
	shown = rows ? (rows->nrows > limit ? limit : rows->nrows) : 0;
	for (i = shown; i > 0; i--) {
		struct json_object *ev = NULL;
		const char *payload = svc_rows_get(rows, i - 1, 2);
		if (!payload || svc_json_parse_object(payload, strlen(payload), &ev) < 0)
			ev = json_object_new_object();
		json_object_object_add(ev, "type", json_object_new_string(svc_rows_get(rows, i - 1, 1)));
		json_object_object_add(ev, "id", json_object_new_string(svc_rows_get(rows, i - 1, 0)));
		svc_json_add_str(ev, "turnId", svc_rows_get(rows, i - 1, 4));
		svc_json_add_time(ev, "createdAt", svc_rows_get(rows, i - 1, 3));
		json_object_array_add(items, ev);
	}
	json_object_object_add(body, "items", items);
	if (rows && rows->nrows > limit)
		json_object_object_add(body, "nextCursor", json_object_new_string(svc_rows_get(rows, shown - 1, 0)));
	else
		json_object_object_add(body, "nextCursor", NULL);
	svc_resp_json(resp, 200, body);
done:
	svc_rows_free(rows);
	svc_rows_free(chat);
	svc_rows_free(project);
	return err;
}
