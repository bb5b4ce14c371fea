/* api_deployments.c: a project's deployments: the list (GET /projects/:id/deployments) and a restore without a build. */
#include <stdio.h>
#include <string.h>

#include "api/api.h"
#include "core/err.h"
#include "core/log.h"
#include "core/json.h"
#include "project/publish.h"

static struct json_object *deployment_row(const struct svc_rows *rows, size_t r, const char *project_id)
{
	(void)project_id;
	return svc_deployment_json(rows, r);
}

/* GET /projects/:projectId/deployments: 200 {items: [Deployment]}, newest first, at most 50; 401; 403; 404. */
enum svc_err svc_api_deployments_list(struct svc_req *req, struct svc_resp *resp)
{
	static const struct svc_items it = { SVC_ITEMS_OF_PROJECT, "projectId", SVC_ACT_READ, STMT_DEPLOY_LIST,
					     deployment_row };

	return svc_resp_items(req, resp, &it);
}

/*
 * POST /projects/:projectId/deployments/:deploymentId/restore: 200 {deployment,
 * publishedAt}; 401; 403 (as publishing); 404 (project, or no such deployment
 * of it); 409 (failed or building: no site; its site no longer kept).
 */
enum svc_err svc_api_deployments_restore(struct svc_req *req, struct svc_resp *resp)
{
	const char *id = svc_req_param(req, "projectId"), *did = svc_req_param(req, "deploymentId");
	struct svc_rows *rows = NULL, *after = NULL;
	struct json_object *body, *dep = NULL;
	struct svc_publish_target t;
	char why[256];
	int err;

	if ((err = svc_project_load(svc_req_caller(req), id, SVC_ACT_DEPLOY, &rows)) < 0)
		return err;
	svc_publish_target_of(rows, req->user_id, &t);
	if ((err = svc_publish_restore(req->ctx->db, &req->ctx->cfg, &t, did, why, sizeof why)) < 0) {
		if (err == SVC_E_CONFLICT)
			err = svc_resp_error(resp, err, NULL, "%s", why);
		goto done;
	}
	if ((err = svc_project_load(svc_req_caller(req), id, SVC_ACT_READ, &after)) < 0 ||
	    (err = svc_deployment_get(req->ctx->db, id, did, &dep)) < 0)
		goto done;
	body = json_object_new_object();
	json_object_object_add(body, "deployment", dep);
	svc_json_add_time(body, "publishedAt", svc_rows_get(after, 0, PCOL_PUBLISHED));
	err = svc_resp_json(resp, 200, body);
done:
	svc_rows_free(after);
	svc_rows_free(rows);
	return err;
}

/* ---- a workspace's build settings ---- */

/* Answers 200 {allowInstallScripts} of workspace `wid` (loaded already). */
static int send_build_settings(struct svc_req *req, struct svc_resp *resp, const char *wid)
{
	struct svc_dbv p = svc_dbv_str(wid);
	struct svc_rows *rows = NULL;
	struct json_object *body;
	int err;

	if ((err = svc_db_run(req->ctx->db, STMT_WORKSPACE_BUILD_SCRIPTS, &p, 1, &rows, NULL)) < 0)
		return err;
	body = json_object_new_object();
	json_object_object_add(body, "allowInstallScripts",
			       json_object_new_boolean(rows->nrows == 1 &&
						       strcmp(svc_rows_get(rows, 0, WBCOL_SCRIPTS), "1") == 0));
	svc_rows_free(rows);
	return svc_resp_json(resp, 200, body);
}

/* GET /workspaces/:wid/build-settings: 200 {allowInstallScripts}; 401; 403 (not a member); 404. */
enum svc_err svc_api_build_settings_get(struct svc_req *req, struct svc_resp *resp)
{
	const char *wid = svc_req_param(req, "wid");
	struct svc_rows *ws = NULL;
	int err;

	if ((err = svc_workspace_load(svc_req_caller(req), wid, SVC_ACT_WS_READ, NULL, &ws)) < 0)
		return err;
	svc_rows_free(ws);
	return send_build_settings(req, resp, wid);
}

static const struct svc_field build_settings_fields[] = {
	{ "allowInstallScripts", SVC_V_BOOL, SVC_F_REQUIRED, 0, 0, NULL },
};
const struct svc_body svc_api_build_settings_put_body = SVC_BODY(build_settings_fields);

/*
 * PUT /workspaces/:wid/build-settings {allowInstallScripts}: 200 {allowInstallScripts}; 400; 401; 403 (not a
 * platform admin: install scripts run the project's dependencies' code in the build, so the host's operator
 * decides, not the workspace's own admins); 404.
 */
enum svc_err svc_api_build_settings_put(struct svc_req *req, struct svc_resp *resp)
{
	const char *wid = svc_req_param(req, "wid");
	struct svc_rows *ws = NULL;
	struct json_object *v = NULL;
	struct svc_dbv p[2];
	int err;

	if ((err = svc_workspace_load(svc_req_caller(req), wid, SVC_ACT_WS_BUILD_SCRIPTS, NULL, &ws)) < 0) {
		if (err == SVC_E_FORBIDDEN)
			svc_resp_error(resp, err, NULL, "Only platform admins allow install scripts in a workspace.");
		return err;
	}
	svc_rows_free(ws);
	json_object_object_get_ex(req->json, "allowInstallScripts", &v);
	svc_log_info("builds: user %s set install scripts of workspace %s %s", req->user_id, wid,
		     json_object_get_boolean(v) ? "on" : "off");
	p[0] = svc_dbv_i64(json_object_get_boolean(v) ? 1 : 0);
	p[1] = svc_dbv_str(wid);
	if ((err = svc_db_run(req->ctx->db, STMT_WORKSPACE_SET_BUILD_SCRIPTS, p, 2, NULL, NULL)) < 0)
		return err;
	return send_build_settings(req, resp, wid);
}
