/* api_chat.c: the chat and plan handlers: a message's turn (run by lib/agent/turn.c) answered as a server-sent event stream, plans, stop, the timeline. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/agent.h"
#include "agent/turn.h"
#include "api/api.h"
#include "api/api_agent.h"
#include "core/err.h"
#include "core/json.h"

#define TEXT_MAX 100000         /* code points of a user message */
#define PLAN_MESSAGE_MAX (256 * 1024)

static int chat_in_project(struct svc_req *req, const char *chat_id, const char *project_id, struct svc_rows **out)
{
	return svc_agent_chat_get(req->ctx->db, chat_id, project_id, out);
}

/*
 * A streamed turn for an HTTP client once the request was validated and the
 * project and chat found: lib/agent opens the turn (provider, model, lock,
 * history, the user message), and its failures are answered here before any
 * stream: 400 (model), 409, 429 (Retry-After), 503; then the stream.
 */
static int stream_turn(struct svc_req *req, struct svc_resp *resp, const struct svc_agent_chat_spec *sp)
{
	struct svc_agent_chat *chat = NULL;
	const char *field = NULL;
	char msg[512];
	int err;

	if ((err = svc_agent_chat_open(req->ctx->db, &req->ctx->cfg, sp, &chat, &field, msg, sizeof msg)) < 0) {
		if (err == SVC_E_RATE_LIMITED)
			svc_resp_header(resp, "Retry-After", "5");
		if (msg[0])
			svc_resp_error(resp, err, field, "%s", msg);
		return err;
	}
	svc_agent_chat_stream(chat, resp, req->fcgi ? req->fcgi->ipcFd : -1);
	svc_agent_chat_close(chat);
	return 0;
}

/* A tool event's own id (the model's call id, which pairs a tool.call with its result) as callId, before the row's id takes "id". */
static void keep_call_id(struct json_object *ev)
{
	struct json_object *own;

	if (json_object_object_get_ex(ev, "id", &own) && json_object_is_type(own, json_type_string))
		json_object_object_add(ev, "callId", json_object_get(own));
}

/* The body of a chat or plan message (checked by the router). */
static const struct svc_field message_fields[] = {
	{ "chatId", SVC_V_UUID, SVC_F_REQUIRED, 0, 0, NULL },
	{ "text", SVC_V_TEXT, SVC_F_REQUIRED, 1, TEXT_MAX, NULL },
	{ "model", SVC_V_STR, SVC_F_NULLABLE, 1, 200, NULL },
	{ "attachments", SVC_V_ARRAY, SVC_F_NULLABLE, 0, 10, NULL },
};
const struct svc_body svc_api_chat_send_body = SVC_BODY(message_fields);
const struct svc_body svc_api_plan_send_body = SVC_BODY(message_fields);

/* Fills sp's chat id, text, model and attachments (NULL when absent or null) from the checked body. */
static void message_unpack(struct svc_req *req, struct svc_agent_chat_spec *sp)
{
	sp->chat_id = svc_json_str(req->json, "chatId");
	sp->text = svc_json_str(req->json, "text");
	sp->model = svc_json_str(req->json, "model");
	sp->attachments = NULL;
	json_object_object_get_ex(req->json, "attachments", &sp->attachments);
	if (sp->attachments && json_object_is_type(sp->attachments, json_type_null))
		sp->attachments = NULL;
}

/* The parts of a message turn after its fields: project, chat, attachments, then the stream. */
static enum svc_err message_turn(struct svc_req *req, struct svc_resp *resp, int plan)
{
	const char *project_id = svc_req_param(req, "projectId");
	struct svc_rows *project = NULL, *chat = NULL;
	struct svc_agent_chat_spec sp;
	char msg[256];
	int err;

	memset(&sp, 0, sizeof sp);
	message_unpack(req, &sp);
	if ((err = svc_project_load(svc_req_caller(req), project_id, SVC_ACT_WRITE, &project)) < 0)
		return err;
	if ((err = chat_in_project(req, sp.chat_id, project_id, &chat)) < 0) {
		svc_resp_error(resp, err, "chatId", "No chat with this id in this project.");
		goto done;
	}
	if ((err = svc_agent_attachments_check(sp.attachments, &sp.images, msg, sizeof msg)) < 0) {
		svc_resp_error(resp, err, "attachments", "%s", msg);
		goto done;
	}
	sp.project_id = project_id;
	sp.workspace_id = svc_rows_get(project, 0, PCOL_WORKSPACE);
	sp.user_id = req->user_id;
	sp.token_id = req->token_id;
	sp.plan = plan;
	sp.mode = plan ? "plan" : svc_rows_get(chat, 0, CCOL_MODE);
	sp.set_mode = plan ? "plan" : NULL;
	err = stream_turn(req, resp, &sp);
done:
	json_object_put(sp.images);
	svc_rows_free(chat);
	svc_rows_free(project);
	return err;
}

/*
 * POST /chat/:projectId/messages {chatId, text, model?, attachments?}: 200
 * text/event-stream; before the stream: 400 validation_failed (also a model
 * the provider does not allow, a bad attachment), 403, 404 (project or
 * chat), 409 (a generation is already running in this chat), 413 (an image
 * over 5 MiB).
 */
enum svc_err svc_api_chat_send(struct svc_req *req, struct svc_resp *resp)
{
	return message_turn(req, resp, 0);
}

/* POST /plan/:projectId {chatId, text, model?, attachments?}: as svc_api_chat_send, in plan mode. */
enum svc_err svc_api_plan_send(struct svc_req *req, struct svc_resp *resp)
{
	return message_turn(req, resp, 1);
}

/* Loads the newest plan of a chat as a new object. Returns 0, SVC_E_NOT_FOUND or a DB error. */
static int plan_latest(struct svc_db *db, const char *chat_id, struct json_object **out, char *created, size_t max)
{
	struct svc_dbv p = svc_dbv_str(chat_id);
	struct svc_rows *rows = NULL;
	const char *text;
	int err;

	if ((err = svc_db_run(db, STMT_AGENT_PLAN_LATEST, &p, 1, &rows, NULL)) < 0)
		return err;
	err = SVC_E_NOT_FOUND;
	if (rows && rows->nrows == 1 && (text = svc_rows_get(rows, 0, PLCOL_PLAN)) &&
	    svc_json_parse_object(text, strlen(text), out) == 0) {
		snprintf(created, max, "%s", svc_rows_get(rows, 0, PLCOL_CREATED) ? svc_rows_get(rows, 0, PLCOL_CREATED) : "");
		err = 0;
	}
	svc_rows_free(rows);
	return err;
}

/* GET /plan/:projectId/:chatId: 200 {steps, rawText, chatId, createdAt}; 403; 404 (project, chat, no plan). */
enum svc_err svc_api_plan_get(struct svc_req *req, struct svc_resp *resp)
{
	const char *project_id = svc_req_param(req, "projectId"), *chat_id = svc_req_param(req, "chatId");
	struct svc_rows *project = NULL, *chat = NULL;
	struct json_object *plan = NULL;
	char created[64];
	int err;

	if ((err = svc_project_load(svc_req_caller(req), project_id, SVC_ACT_READ, &project)) < 0)
		return err;
	if ((err = chat_in_project(req, chat_id, project_id, &chat)) < 0)
		goto done;
	if ((err = plan_latest(req->ctx->db, chat_id, &plan, created, sizeof created)) < 0) {
		if (err == SVC_E_NOT_FOUND)
			svc_resp_error(resp, err, NULL, "This chat has no plan yet.");
		goto done;
	}
	svc_json_add_str(plan, "chatId", chat_id);
	svc_json_add_time(plan, "createdAt", created[0] ? created : NULL);
	svc_resp_json(resp, 200, plan);
done:
	svc_rows_free(chat);
	svc_rows_free(project);
	return err;
}

/*
 * POST /plan/:projectId/:chatId/run: the chat switches to build mode and the
 * plan becomes the next user message; 200 stream; 403; 404 (no plan); 409.
 */
enum svc_err svc_api_plan_run(struct svc_req *req, struct svc_resp *resp)
{
	const char *project_id = svc_req_param(req, "projectId"), *chat_id = svc_req_param(req, "chatId");
	struct svc_rows *project = NULL, *chat = NULL;
	struct json_object *plan = NULL;
	struct svc_agent_chat_spec sp;
	char created[64], *text = NULL;
	int err;

	memset(&sp, 0, sizeof sp);
	if ((err = svc_project_load(svc_req_caller(req), project_id, SVC_ACT_WRITE, &project)) < 0)
		return err;
	if ((err = chat_in_project(req, chat_id, project_id, &chat)) < 0)
		goto done;
	if ((err = plan_latest(req->ctx->db, chat_id, &plan, created, sizeof created)) < 0 ||
	    (err = svc_agent_plan_message(plan, PLAN_MESSAGE_MAX, &text)) < 0) {
		if (err == SVC_E_NOT_FOUND || err == SVC_E_TOO_LARGE) {
			err = SVC_E_NOT_FOUND;
			svc_resp_error(resp, err, NULL, "This chat has no plan to run.");
		}
		goto done;
	}
	sp.project_id = project_id;
	sp.workspace_id = svc_rows_get(project, 0, PCOL_WORKSPACE);
	sp.chat_id = chat_id;
	sp.user_id = req->user_id;
	sp.token_id = req->token_id;
	sp.text = text;
	sp.mode = "build";
	sp.set_mode = "build";
	err = stream_turn(req, resp, &sp);
done:
	free(text);
	json_object_put(plan);
	svc_rows_free(chat);
	svc_rows_free(project);
	return err;
}

static const struct svc_field stop_fields[] = {
	{ "chatId", SVC_V_UUID, SVC_F_REQUIRED, 0, 0, NULL },
};
const struct svc_body svc_api_chat_stop_body = SVC_BODY(stop_fields);

/* POST /chat/:projectId/stop {chatId}: 200 {chatId, stopRequested}; 400; 403; 404. */
enum svc_err svc_api_chat_stop(struct svc_req *req, struct svc_resp *resp)
{
	const char *project_id = svc_req_param(req, "projectId"), *chat_id;
	struct svc_rows *project = NULL, *chat = NULL;
	struct json_object *o;
	struct svc_dbv p;
	uint64_t affected = 0;
	int err;

	chat_id = svc_json_str(req->json, "chatId");
	if ((err = svc_project_load(svc_req_caller(req), project_id, SVC_ACT_WRITE, &project)) < 0)
		return err;
	if ((err = chat_in_project(req, chat_id, project_id, &chat)) < 0) {
		svc_resp_error(resp, err, "chatId", "No chat with this id in this project.");
		goto done;
	}
	p = svc_dbv_str(chat_id);
	if ((err = svc_db_run(req->ctx->db, STMT_GEN_REQUEST_STOP, &p, 1, NULL, &affected)) < 0)
		goto done;
	o = json_object_new_object();
	svc_json_add_str(o, "chatId", chat_id);
	json_object_object_add(o, "stopRequested", json_object_new_boolean(affected > 0));
	svc_resp_json(resp, 200, o);
done:
	svc_rows_free(chat);
	svc_rows_free(project);
	return err;
}

/*
 * GET /chat/:projectId/messages?chatId&before&limit: 200 {items, nextCursor}
 * (items oldest first within the page; nextCursor is the `before` of the
 * next, older page, null at the start); 400; 403; 404.
 */
enum svc_err svc_api_chat_history(struct svc_req *req, struct svc_resp *resp)
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
	if ((err = svc_project_load(svc_req_caller(req), project_id, SVC_ACT_READ, &project)) < 0)
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
		const char *payload = svc_rows_get(rows, i - 1, ECOL_PAYLOAD);
		if (!payload || svc_json_parse_object(payload, strlen(payload), &ev) < 0)
			ev = json_object_new_object();
		json_object_object_add(ev, "type", json_object_new_string(svc_rows_get(rows, i - 1, ECOL_TYPE)));
		keep_call_id(ev);
		json_object_object_add(ev, "id", json_object_new_string(svc_rows_get(rows, i - 1, ECOL_ID)));
		svc_json_add_str(ev, "turnId", svc_rows_get(rows, i - 1, ECOL_TURN));
		svc_json_add_time(ev, "createdAt", svc_rows_get(rows, i - 1, ECOL_CREATED));
		json_object_array_add(items, ev);
	}
	json_object_object_add(body, "items", items);
	if (rows && rows->nrows > limit)
		json_object_object_add(body, "nextCursor", json_object_new_string(svc_rows_get(rows, shown - 1, ECOL_ID)));
	else
		json_object_object_add(body, "nextCursor", NULL);
	svc_resp_json(resp, 200, body);
done:
	svc_rows_free(rows);
	svc_rows_free(chat);
	svc_rows_free(project);
	return err;
}
