/* api_chats.c: a project's chats: list and create (spec "Project endpoints"); their turns are in api_chat.c. */
#include <stdio.h>
#include <string.h>

#include "api/api.h"
#include "core/err.h"
#include "core/json.h"

static struct json_object *chat_json(const struct svc_rows *rows, size_t r, const char *project_id)
{
	struct json_object *c = json_object_new_object();

	svc_json_add_str(c, "id", svc_rows_get(rows, r, CCOL_ID));
	svc_json_add_str(c, "projectId", project_id);
	svc_json_add_str(c, "title", svc_rows_get(rows, r, CCOL_TITLE));
	svc_json_add_str(c, "mode", svc_rows_get(rows, r, CCOL_MODE));
	svc_json_add_time(c, "createdAt", svc_rows_get(rows, r, CCOL_CREATED));
	svc_json_add_time(c, "updatedAt", svc_rows_get(rows, r, CCOL_UPDATED));
	return c;
}

/* GET /projects/:projectId/chats: 200 {items} newest first; 403; 404. */
enum svc_err svc_api_chats_list(struct svc_req *req, struct svc_resp *resp)
{
	static const struct svc_items it = { SVC_ITEMS_OF_PROJECT, "projectId", SVC_ACT_READ, STMT_CHAT_LIST, chat_json };

	return svc_resp_items(req, resp, &it);
}

static const struct svc_field chat_fields[] = {
	{ "mode", SVC_V_TEXT, SVC_F_REQUIRED, 1, 32, NULL },
	{ "title", SVC_V_STR, SVC_F_NULLABLE, 0, 200, NULL },
};
const struct svc_body svc_api_chats_create_body = SVC_BODY(chat_fields);

/* POST /projects/:projectId/chats {mode, title?}: 201 chat; 400; 403; 404. */
enum svc_err svc_api_chats_create(struct svc_req *req, struct svc_resp *resp)
{
	const char *id = svc_req_param(req, "projectId"), *mode, *title, *m;
	struct svc_rows *rows = NULL;
	struct svc_dbv p[5];
	char chat_id[37];
	int err;

	if ((err = svc_project_load(svc_req_caller(req), id, SVC_ACT_WRITE, &rows)) < 0)
		return err;
	svc_rows_free(rows);
	rows = NULL;
	mode = svc_json_str(req->json, "mode");
	for (m = mode; *m; m++)
		if (!((*m >= 'a' && *m <= 'z') || (*m >= '0' && *m <= '9') || *m == '-' || *m == '_'))
			return svc_resp_error(resp, SVC_E_VALIDATION, "mode",
					      "mode may hold only a-z, 0-9, '-' and '_'");
	title = svc_json_str(req->json, "title");
	if (title && svc_is_blank(title))
		title = NULL;
	if (svc_uuid_v4(chat_id) < 0)
		return SVC_E_INTERNAL;
	if ((err = svc_chat_insert(req->ctx->db, chat_id, id, title, mode, req->user_id)) < 0)
		return err;
	p[0] = svc_dbv_str(chat_id);
	p[1] = svc_dbv_str(id);
	if ((err = svc_db_run(req->ctx->db, STMT_CHAT_GET, p, 2, &rows, NULL)) < 0)
		return err;
	if (!rows || rows->nrows != 1) {
		svc_rows_free(rows);
		return SVC_E_INTERNAL;
	}
	svc_resp_json(resp, 201, chat_json(rows, 0, id));
	svc_rows_free(rows);
	return 0;
}
