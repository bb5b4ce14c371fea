/* api_items.c: the list answer {"items": [...]} of a parent loaded for the caller (svc_resp_items()). */
#include <json-c/json.h>

#include "api/api.h"

enum svc_err svc_resp_items(struct svc_req *req, struct svc_resp *resp, const struct svc_items *it)
{
	const struct svc_caller *who = svc_req_caller(req);
	const char *id = it->param ? svc_req_param(req, it->param) : req->user_id;
	struct svc_rows *rows = NULL;
	struct json_object *body, *items;
	struct svc_dbv p;
	size_t r;
	int err = 0;

	if (it->parent == SVC_ITEMS_OF_PROJECT)
		err = svc_project_load(who, id, it->action, &rows);
	else if (it->parent == SVC_ITEMS_OF_WORKSPACE)
		err = svc_workspace_load(who, id, it->action, NULL, &rows);
	svc_rows_free(rows);
	rows = NULL;
	if (err < 0)
		return err;
	p = svc_dbv_str(id);
	if ((err = svc_db_run(who->db, it->stmt, &p, 1, &rows, NULL)) < 0)
		return err;
	body = json_object_new_object();
	items = json_object_new_array();
	for (r = 0; rows && r < rows->nrows; r++)
		json_object_array_add(items, it->row_json(rows, r, id));
	json_object_object_add(body, "items", items);
	svc_rows_free(rows);
	return svc_resp_json(resp, 200, body);
}

