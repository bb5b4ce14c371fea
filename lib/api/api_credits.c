/* api_credits.c: a workspace's AI credit: what its turns spent (their accounting), its limit, what remains (GET/PUT /workspaces/:wid/credits). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_agent.h"
#include "core/err.h"
#include "core/json.h"
#include "core/log.h"

#define LIMIT_MAX 99999999.0 /* DECIMAL(14,6) holds up to 99,999,999.999999 */

/* A DECIMAL column as a double; `dflt` when NULL or not a number. */
static double decimal(const char *s, double dflt)
{
	char *end;
	double d;

	if (!s || !*s)
		return dflt;
	d = strtod(s, &end);
	return *end || !isfinite(d) ? dflt : d;
}

/* Rounds to whole micro-dollars, the column's precision, so 0.1 + 0.2 reads back as 0.3. */
static double micro(double usd)
{
	return round(usd * 1e6) / 1e6;
}

/* ---- spend accounting of the agent's turns ---- */

int svc_credit_exhausted(struct svc_db *db, const struct svc_config *cfg, const char *wid, double *out_limit)
{
	struct svc_dbv p = svc_dbv_str(wid);
	struct svc_rows *rows = NULL;
	double limit = cfg->default_credit_usd, spent = 0;

	if (svc_db_run(db, STMT_AGENT_CREDIT_GET, &p, 1, &rows, NULL) == 0 && rows && rows->nrows == 1) {
		limit = decimal(svc_rows_get(rows, 0, CRCOL_LIMIT), cfg->default_credit_usd);
		spent = decimal(svc_rows_get(rows, 0, CRCOL_SPENT), 0);
	}
	svc_rows_free(rows);
	*out_limit = limit;
	return spent >= limit;
}

void svc_credit_add_spend(struct svc_db *db, const char *wid, double cost)
{
	struct svc_dbv p[2];
	char text[64];

	if (!(cost > 0))
		return;
	snprintf(text, sizeof text, "%.6f", cost);
	p[0] = svc_dbv_str(wid);
	p[1] = svc_dbv_str(text);
	if (svc_db_run(db, STMT_AGENT_CREDIT_ADD, p, 2, NULL, NULL) < 0)
		svc_log_error("chat: cannot record a spend of %s USD for workspace %s", text, wid);
}

/* ---- GET/PUT /workspaces/:wid/credits ---- */

/* Answers the credit of workspace `wid` (already checked): 200 {workspaceId, limitUsd, spentUsd, remainingUsd, ...}. */
static int answer(struct svc_req *req, struct svc_resp *resp, const char *wid)
{
	const struct svc_config *cfg = &req->ctx->cfg;
	struct svc_dbv p = svc_dbv_str(wid);
	struct svc_rows *rows = NULL;
	struct json_object *o;
	const char *limit_text = NULL, *updated = NULL;
	double limit, spent = 0;
	int err;

	if ((err = svc_db_run(req->ctx->db, STMT_AGENT_CREDIT_SHOW, &p, 1, &rows, NULL)) < 0)
		return err;
	if (rows && rows->nrows == 1) {
		limit_text = svc_rows_get(rows, 0, CSCOL_LIMIT);
		spent = decimal(svc_rows_get(rows, 0, CSCOL_SPENT), 0);
		updated = svc_rows_get(rows, 0, CSCOL_UPDATED);
	}
	limit = decimal(limit_text, cfg->default_credit_usd);
	o = json_object_new_object();
	svc_json_add_str(o, "workspaceId", wid);
	json_object_object_add(o, "limitUsd", json_object_new_double(micro(limit)));
	json_object_object_add(o, "spentUsd", json_object_new_double(micro(spent)));
	json_object_object_add(o, "remainingUsd", json_object_new_double(spent >= limit ? 0 : micro(limit - spent)));
	json_object_object_add(o, "exhausted", json_object_new_boolean(spent >= limit));
	json_object_object_add(o, "defaultLimit", json_object_new_boolean(limit_text == NULL));
	svc_json_add_time(o, "updatedAt", updated);
	svc_rows_free(rows);
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
	struct svc_dbv p[2];
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
		if (!isfinite(limit) || limit < 0 || limit > LIMIT_MAX)
			return svc_resp_error(resp, SVC_E_VALIDATION, "limitUsd", "limitUsd must be from 0 to %.0f", LIMIT_MAX);
		if (snprintf(text, sizeof text, "%.6f", limit) >= (int)sizeof text)
			return SVC_E_INTERNAL;
	}
	p[0] = svc_dbv_str(wid);
	p[1] = is_null ? svc_dbv_null() : svc_dbv_str(text);
	if ((err = svc_db_run(req->ctx->db, STMT_AGENT_CREDIT_SET_LIMIT, p, 2, NULL, NULL)) < 0)
		return err;
	svc_log_info("credits: user %s set the credit limit of workspace %s to %s", req->user_id, wid,
		     is_null ? "the default" : text);
	return answer(req, resp, wid);
}
