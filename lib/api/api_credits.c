/* api_credits.c: a workspace's AI credit: its limit, what its turns spent, what remains (GET/PUT /workspaces/:wid/credits; the accounting is lib/agent/credits.c). */
#include <math.h>
#include <stdio.h>

#include "agent/credits.h"
#include "api/api_agent.h"
#include "core/err.h"
#include "core/json.h"
#include "core/log.h"

/* Answers the credit of workspace `wid` (already checked): 200 {workspaceId, limitUsd, spentUsd, remainingUsd, ...}. */
static int answer(struct svc_req *req, struct svc_resp *resp, const char *wid)
{
	struct svc_agent_credit c;
	struct json_object *o;
	int err;

	if ((err = svc_agent_credit_show(req->ctx->db, &req->ctx->cfg, wid, &c)) < 0)
		return err;
	o = json_object_new_object();
	svc_json_add_str(o, "workspaceId", wid);
	json_object_object_add(o, "limitUsd", json_object_new_double(c.limit_usd));
	json_object_object_add(o, "spentUsd", json_object_new_double(c.spent_usd));
	json_object_object_add(o, "remainingUsd", json_object_new_double(c.remaining_usd));
	json_object_object_add(o, "exhausted", json_object_new_boolean(c.exhausted));
	json_object_object_add(o, "defaultLimit", json_object_new_boolean(c.default_limit));
	svc_json_add_time(o, "updatedAt", c.updated_at[0] ? c.updated_at : NULL);
	return svc_resp_json(resp, 200, o);
}

/* GET /workspaces/:wid/credits: 200; 403 (not a member); 404. */
enum svc_err svc_api_credits_get(struct svc_req *req, struct svc_resp *resp)
{
	const char *wid = svc_req_param(req, "wid");
	struct svc_rows *ws = NULL;
	int err;

	if ((err = svc_workspace_load(svc_req_caller(req), wid, SVC_ACT_WS_READ, NULL, &ws)) < 0)
		return err;
	svc_rows_free(ws);
	return answer(req, resp, wid);
}

/* PUT /workspaces/:wid/credits {limitUsd}: 200 as GET; 400 validation_failed; 403 (not a platform admin); 404. */
enum svc_err svc_api_credits_put(struct svc_req *req, struct svc_resp *resp)
{
	const char *wid = svc_req_param(req, "wid");
	struct svc_rows *ws = NULL;
	struct json_object *v = NULL;
	char text[64];
	double limit = 0;
	int err, is_null;

	if ((err = svc_workspace_load(svc_req_caller(req), wid, SVC_ACT_WS_CREDIT_LIMIT, NULL, &ws)) < 0) {
		if (err == SVC_E_FORBIDDEN)
			svc_resp_error(resp, err, NULL, "Only platform admins change a workspace's credit limit.");
		return err;
	}
	svc_rows_free(ws);
	if (!json_object_object_get_ex(req->json, "limitUsd", &v))
		return svc_resp_error(resp, SVC_E_VALIDATION, "limitUsd", "limitUsd is required (a number of US dollars, or null for the default)");
	is_null = v == NULL;
	if (!is_null) {
		if (!json_object_is_type(v, json_type_int) && !json_object_is_type(v, json_type_double))
			return svc_resp_error(resp, SVC_E_VALIDATION, "limitUsd", "limitUsd must be a number of US dollars or null");
		limit = json_object_get_double(v);
		if (!isfinite(limit) || limit < 0 || limit > SVC_AGENT_CREDIT_LIMIT_MAX)
			return svc_resp_error(resp, SVC_E_VALIDATION, "limitUsd", "limitUsd must be from 0 to %.0f",
					      SVC_AGENT_CREDIT_LIMIT_MAX);
		if (snprintf(text, sizeof text, "%.6f", limit) >= (int)sizeof text)
			return SVC_E_INTERNAL;
	}
	if ((err = svc_agent_credit_set_limit(req->ctx->db, wid, is_null, limit)) < 0)
		return err;
	svc_log_info("credits: user %s set the credit limit of workspace %s to %s", req->user_id, wid,
		     is_null ? "the default" : text);
	return answer(req, resp, wid);
}
