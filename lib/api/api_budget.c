/* api_budget.c: the agent's spending caps and spend (GET/PUT /workspaces/:wid/budget, GET /admin/budget) and a workspace's instructions to the agent (GET/PUT /workspaces/:wid/instructions); the caps are held in lib/agent/budget.c. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/budget.h"
#include "agent/check.h"
#include "agent/credits.h"
#include "api/api_agent.h"
#include "core/err.h"
#include "core/json.h"
#include "core/log.h"
#include "core/util.h"

/* Whether the caller may change workspace `ws`'s caps and instructions (SVC_ACT_WS_UPDATE: admins, owners, platform admins). */
static int may_edit(struct svc_req *req, const struct svc_rows *ws)
{
	struct svc_perm_subject s;
	struct svc_perm_object o = { 0 };

	svc_caller_subject(svc_req_caller(req), svc_rows_get(ws, 0, WCOL_ROLE), svc_rows_get(ws, 0, WCOL_ADMIN), &s);
	o.kind = svc_rows_get(ws, 0, WCOL_KIND);
	return svc_perm_check(&s, SVC_ACT_WS_UPDATE, &o) == 0;
}

/* Today's spend of the members, projects and tokens of `wid` into `o` as {members, projects, tokens}: [{id, spentUsd}]. */
static int add_today(struct svc_req *req, const char *wid, struct json_object *o)
{
	static const char *const kinds[3] = { "member", "project", "token" }, *const keys[3] = { "members", "projects", "tokens" };
	struct svc_dbv p = svc_dbv_str(wid);
	struct svc_rows *rows = NULL;
	struct json_object *lists[3], *e;
	size_t r;
	int err, k;

	if ((err = svc_db_run(req->ctx->db, STMT_BUDGET_TODAY, &p, 1, &rows, NULL)) < 0)
		return err;
	for (k = 0; k < 3; k++) {
		lists[k] = json_object_new_array();
		json_object_object_add(o, keys[k], lists[k]);
	}
	for (r = 0; rows && r < rows->nrows; r++) {
		const char *kind = svc_rows_get(rows, r, BTCOL_KIND);

		for (k = 0; k < 3 && (!kind || strcmp(kind, kinds[k]) != 0); k++)
			;
		if (k == 3)
			continue;
		e = json_object_new_object();
		svc_json_add_str(e, "id", svc_rows_get(rows, r, BTCOL_SUBJECT));
		json_object_object_add(e, "spentUsd", json_object_new_double(strtod(svc_rows_get(rows, r, BTCOL_SPENT), NULL)));
		json_object_array_add(lists[k], e);
	}
	svc_rows_free(rows);
	return 0;
}

/* Every member of `wid` with their own daily cap and their spend today into `o` as members: [{id, email, name, role, spentUsd, cap}]. */
static int add_members(struct svc_req *req, const char *wid, struct json_object *o)
{
	struct json_object *list = NULL;
	int err;

	if ((err = svc_agent_budget_members(req->ctx->db, wid, &list)) < 0)
		return err;
	json_object_object_add(o, "members", list);
	return 0;
}

/*
 * Answers workspace `ws`'s budget as its caller sees it: 200 {workspaceId, caps, memberCap (the
 * caller's daily cap as it holds for them), instanceTurnMaxUsd, spent {workspaceDay,
 * workspaceMonth, memberDay}, warnings [cap], canEdit, today? and members? (editors only)}.
 */
static int answer(struct svc_req *req, struct svc_resp *resp, const struct svc_rows *ws)
{
	static const enum svc_agent_cap shown[3] = { SVC_AGENT_CAP_WORKSPACE_DAY, SVC_AGENT_CAP_WORKSPACE_MONTH,
						     SVC_AGENT_CAP_MEMBER_DAY };
	const char *wid = svc_rows_get(ws, 0, WCOL_ID);
	struct svc_agent_spender who = { wid, req->user_id, "", "" };
	struct svc_agent_budget b, mine;
	double spent[SVC_AGENT_CAP__MAX];
	struct json_object *o, *sp, *warn, *today;
	int err, i, edit = may_edit(req, ws), rounds = -1;

	if ((err = svc_agent_budget_load(req->ctx->db, wid, &b)) < 0 ||
	    (err = svc_agent_budget_spent(req->ctx->db, &who, spent)) < 0)
		return err;
	mine = b;
	if ((err = svc_agent_budget_member(req->ctx->db, wid, req->user_id, &mine)) < 0)
		return err;
	o = json_object_new_object();
	svc_json_add_str(o, "workspaceId", wid);
	json_object_object_add(o, "caps", svc_agent_budget_json(&b));
	json_object_object_add(o, "memberCap", svc_agent_cap_json(&mine.caps[SVC_AGENT_CAP_MEMBER_DAY], SVC_AGENT_CAP_MEMBER_DAY));
	json_object_object_add(o, "instanceTurnMaxUsd", json_object_new_double(req->ctx->cfg.agent_turn_max_usd));
	/* the preview check's fix rounds (issue 29, docs/agent.md "Fix rounds") */
	if ((err = svc_agent_fix_rounds_get(req->ctx->db, wid, &rounds)) < 0) {
		json_object_put(o);
		return err;
	}
	json_object_object_add(o, "fixRounds", rounds >= 0 ? json_object_new_int(rounds) : NULL);
	json_object_object_add(o, "instanceFixRounds", json_object_new_int((int)req->ctx->cfg.agent_fix_rounds));
	sp = json_object_new_object();
	warn = json_object_new_array();
	for (i = 0; i < 3; i++) {
		json_object_object_add(sp, svc_agent_cap_name(shown[i]), json_object_new_double(spent[shown[i]]));
		if (svc_agent_budget_warns(&mine, shown[i], spent[shown[i]]) ||
		    (mine.caps[shown[i]].set && spent[shown[i]] >= mine.caps[shown[i]].limit_usd))
			json_object_array_add(warn, json_object_new_string(svc_agent_cap_name(shown[i])));
	}
	json_object_object_add(o, "spent", sp);
	json_object_object_add(o, "warnings", warn);
	json_object_object_add(o, "canEdit", json_object_new_boolean(edit));
	if (edit) {
		today = json_object_new_object();
		json_object_object_add(o, "today", today);
		if ((err = add_today(req, wid, today)) < 0 || (err = add_members(req, wid, o)) < 0) {
			json_object_put(o);
			return err;
		}
	}
	return svc_resp_json(resp, 200, o);
}

/* GET /workspaces/:wid/budget: 200; 403 (not a member); 404. */
enum svc_err svc_api_budget_get(struct svc_req *req, struct svc_resp *resp)
{
	struct svc_rows *ws = NULL;
	int err;

	if ((err = svc_workspace_load(svc_req_caller(req), svc_req_param(req, "wid"), SVC_ACT_WS_READ, NULL, &ws)) < 0)
		return err;
	err = answer(req, resp, ws);
	svc_rows_free(ws);
	return err;
}

static const struct svc_field budget_fields[] = {
	{ "caps", SVC_V_OBJECT, 0, 0, 0, NULL },
	{ "members", SVC_V_OBJECT, 0, 0, 0, NULL },
	{ "fixRounds", SVC_V_UINT, SVC_F_NULLABLE, 0, SVC_AGENT_FIX_ROUNDS_MAX, NULL },
};
const struct svc_body svc_api_budget_put_body = SVC_BODY(budget_fields);

/*
 * One cap of a PUT body into *out: null (removed), or {limitUsd 0..SVC_AGENT_CREDIT_LIMIT_MAX,
 * warnPercent? 0..100 (80), block? (true)}. Returns 0 or a validation error answered on `resp`
 * with field "<within>.<name>" ("caps.workspaceDay", "members.<user id>").
 */
static int cap_from(struct svc_resp *resp, const char *within, const char *name, struct json_object *v,
		    struct svc_agent_cap_setting *out)
{
	struct json_object *limit = NULL, *warn = NULL, *block = NULL;
	char field[64];
	double d;

	snprintf(field, sizeof field, "%s.%s", within, name);
	memset(out, 0, sizeof *out);
	if (!v)
		return 0;
	if (!json_object_is_type(v, json_type_object))
		return svc_resp_error(resp, SVC_E_VALIDATION, field, "%s must be an object {limitUsd, warnPercent, block} or null",
				      field);
	json_object_object_foreach(v, key, val) {
		(void)val;
		if (strcmp(key, "limitUsd") != 0 && strcmp(key, "warnPercent") != 0 && strcmp(key, "block") != 0)
			return svc_resp_error(resp, SVC_E_VALIDATION, field, "%s has no field %s", field, key);
	}
	json_object_object_get_ex(v, "limitUsd", &limit);
	json_object_object_get_ex(v, "warnPercent", &warn);
	json_object_object_get_ex(v, "block", &block);
	if (!limit || (!json_object_is_type(limit, json_type_int) && !json_object_is_type(limit, json_type_double)) ||
	    !isfinite(d = json_object_get_double(limit)) || d < 0 || d > SVC_AGENT_CREDIT_LIMIT_MAX)
		return svc_resp_error(resp, SVC_E_VALIDATION, field, "%s.limitUsd must be a number of US dollars from 0 to %.0f",
				      field, SVC_AGENT_CREDIT_LIMIT_MAX);
	if (warn && (!json_object_is_type(warn, json_type_int) || json_object_get_int64(warn) < 0 ||
		     json_object_get_int64(warn) > 100))
		return svc_resp_error(resp, SVC_E_VALIDATION, field, "%s.warnPercent must be a whole number from 0 to 100",
				      field);
	if (block && !json_object_is_type(block, json_type_boolean))
		return svc_resp_error(resp, SVC_E_VALIDATION, field, "%s.block must be true or false", field);
	out->set = 1;
	out->limit_usd = d;
	out->warn_percent = warn ? (unsigned)json_object_get_int64(warn) : SVC_AGENT_CAP_WARN_DEFAULT;
	out->block = block ? json_object_get_boolean(block) : 1;
	return 0;
}

/*
 * The members' own caps of a PUT body ({<user id>: cap | null}) into *out (malloc'd, *n of them;
 * user ids borrowed from `members`): each must be a member of `wid`. Returns 0 or a validation
 * error answered on `resp` (field "members" or "members.<id>").
 */
static int members_from(struct svc_req *req, struct svc_resp *resp, const char *wid, struct json_object *members,
			struct svc_agent_member_cap **out, size_t *n)
{
	struct svc_agent_member_cap *m;
	struct svc_rows *row = NULL;
	struct svc_dbv p[2];
	char field[64];
	size_t k = 0;
	int err, found;

	*out = NULL;
	*n = 0;
	if (!members || json_object_object_length(members) == 0)
		return 0;
	if (!(m = calloc((size_t)json_object_object_length(members), sizeof *m)))
		return SVC_E_INTERNAL;
	json_object_object_foreach(members, key, val) {
		if (!svc_uuid_valid(key)) {
			free(m);
			return svc_resp_error(resp, SVC_E_VALIDATION, "members", "members has a key that is not a user id");
		}
		p[0] = svc_dbv_str(wid);
		p[1] = svc_dbv_str(key);
		if ((err = svc_db_run(req->ctx->db, STMT_MEMBER_GET, p, 2, &row, NULL)) < 0) {
			free(m);
			return err;
		}
		found = row && row->nrows == 1;
		svc_rows_free(row);
		row = NULL;
		if (!found) {
			free(m);
			snprintf(field, sizeof field, "members.%s", key);
			return svc_resp_error(resp, SVC_E_VALIDATION, field, "%s is not a member of this workspace", field);
		}
		m[k].user_id = key;
		if ((err = cap_from(resp, "members", key, val, &m[k].cap)) < 0) {
			free(m);
			return err;
		}
		k++;
	}
	*out = m;
	*n = k;
	return 0;
}

/*
 * PUT /workspaces/:wid/budget {caps?: {<cap>: {limitUsd, warnPercent?, block?} | null, ...},
 * members?: {<user id>: {limitUsd, warnPercent?, block?} | null}, fixRounds?: 0..10 | null} (one of them):
 * 200 as GET; 400;
 * 403 (not admin or owner); 404.
 */
enum svc_err svc_api_budget_put(struct svc_req *req, struct svc_resp *resp)
{
	struct svc_rows *ws = NULL;
	struct svc_agent_budget b;
	struct svc_agent_member_cap *members = NULL;
	struct json_object *caps = json_object_object_get(req->json, "caps");
	struct json_object *mem = json_object_object_get(req->json, "members"), *rounds = NULL;
	size_t nmembers = 0;
	unsigned mask = 0;
	int err, cap, fix;

	if ((err = svc_workspace_load(svc_req_caller(req), svc_req_param(req, "wid"), SVC_ACT_WS_UPDATE, NULL, &ws)) < 0) {
		if (err == SVC_E_FORBIDDEN)
			svc_resp_error(resp, err, NULL, "Only workspace admins and owners set the workspace's spending caps.");
		return err;
	}
	memset(&b, 0, sizeof b);
	if (!caps && !mem && !json_object_object_get_ex(req->json, "fixRounds", NULL)) {
		err = svc_resp_error(resp, SVC_E_VALIDATION, "caps", "caps, members or fixRounds is required");
		goto done;
	}
	if (caps) {
		json_object_object_foreach(caps, key, val) {
			if ((cap = svc_agent_cap_by_name(key)) < 0) {
				err = svc_resp_error(resp, SVC_E_VALIDATION, "caps", "caps has no cap %s (workspaceDay, "
						     "workspaceMonth, memberDay, projectDay, tokenDay, turn)", key);
				goto done;
			}
			if ((err = cap_from(resp, "caps", key, val, &b.caps[cap])) < 0)
				goto done;
			mask |= 1u << cap;
		}
	}
	if ((err = members_from(req, resp, svc_rows_get(ws, 0, WCOL_ID), mem, &members, &nmembers)) < 0)
		goto done;
	if ((err = svc_agent_budget_set(req->ctx->db, svc_rows_get(ws, 0, WCOL_ID), &b, mask, members, nmembers,
					req->user_id)) < 0)
		goto done;
	svc_log_info("budget: user %s changed the spending caps of workspace %s (mask %#x, %zu members)", req->user_id,
		     svc_rows_get(ws, 0, WCOL_ID), mask, nmembers);
	if ((fix = json_object_object_get_ex(req->json, "fixRounds", &rounds)) &&
	    (err = svc_agent_fix_rounds_set(req->ctx->db, svc_rows_get(ws, 0, WCOL_ID),
					    rounds ? (int)json_object_get_int64(rounds) : -1, req->user_id)) < 0)
		goto done;
	err = answer(req, resp, ws);
done:
	free(members);
	svc_rows_free(ws);
	return err;
}

/* GET /admin/budget: 200 {items: [{workspaceId, name, kind, todayUsd, monthUsd, totalUsd, limitUsd}]}; 403 (not a platform admin). */
enum svc_err svc_api_budget_admin(struct svc_req *req, struct svc_resp *resp)
{
	const struct svc_caller *c = svc_req_caller(req);
	struct svc_dbv p = svc_dbv_str(req->user_id);
	struct svc_rows *user = NULL, *rows = NULL;
	struct svc_perm_subject s;
	struct json_object *o, *items, *e;
	size_t r;
	int err;

	if ((err = svc_db_run(req->ctx->db, STMT_USER_BY_ID, &p, 1, &user, NULL)) < 0)
		return err;
	svc_caller_subject(c, NULL, user && user->nrows == 1 ? svc_rows_get(user, 0, UCOL_ADMIN) : NULL, &s);
	err = svc_perm_check(&s, SVC_ACT_WS_CREDIT_LIMIT, NULL);
	svc_rows_free(user);
	if (err < 0)
		return svc_resp_error(resp, SVC_E_FORBIDDEN, NULL, "Only platform admins see every workspace's spend.");
	if ((err = svc_db_run(req->ctx->db, STMT_BUDGET_ADMIN_LIST, NULL, 0, &rows, NULL)) < 0)
		return err;
	o = json_object_new_object();
	items = json_object_new_array();
	json_object_object_add(o, "items", items);
	for (r = 0; rows && r < rows->nrows; r++) {
		const char *limit = svc_rows_get(rows, r, BACOL_LIMIT);

		e = json_object_new_object();
		svc_json_add_str(e, "workspaceId", svc_rows_get(rows, r, BACOL_ID));
		svc_json_add_str(e, "name", svc_rows_get(rows, r, BACOL_NAME));
		svc_json_add_str(e, "kind", svc_rows_get(rows, r, BACOL_KIND));
		json_object_object_add(e, "todayUsd", json_object_new_double(strtod(svc_rows_get(rows, r, BACOL_TODAY), NULL)));
		json_object_object_add(e, "monthUsd", json_object_new_double(strtod(svc_rows_get(rows, r, BACOL_MONTH), NULL)));
		json_object_object_add(e, "totalUsd", json_object_new_double(strtod(svc_rows_get(rows, r, BACOL_TOTAL), NULL)));
		json_object_object_add(e, "limitUsd", json_object_new_double(limit ? strtod(limit, NULL)
										  : req->ctx->cfg.default_credit_usd));
		json_object_array_add(items, e);
	}
	svc_rows_free(rows);
	return svc_resp_json(resp, 200, o);
}

/* ---- a workspace's instructions ---- */

/* Answers 200 {workspaceId, text, maxBytes, updatedAt, canEdit}. */
static int instructions_answer(struct svc_req *req, struct svc_resp *resp, const struct svc_rows *ws)
{
	const char *wid = svc_rows_get(ws, 0, WCOL_ID);
	struct json_object *o;
	char *text = NULL, updated[40];
	int err;

	if ((err = svc_agent_instructions_get(req->ctx->db, wid, &text, updated, sizeof updated)) < 0)
		return err;
	o = json_object_new_object();
	svc_json_add_str(o, "workspaceId", wid);
	svc_json_add_str(o, "text", text ? text : "");
	json_object_object_add(o, "maxBytes", json_object_new_int(SVC_AGENT_WS_INSTRUCTIONS_MAX));
	svc_json_add_time(o, "updatedAt", updated[0] ? updated : NULL);
	json_object_object_add(o, "canEdit", json_object_new_boolean(may_edit(req, ws)));
	free(text);
	return svc_resp_json(resp, 200, o);
}

/* GET /workspaces/:wid/instructions: 200; 403 (not a member); 404. */
enum svc_err svc_api_instructions_get(struct svc_req *req, struct svc_resp *resp)
{
	struct svc_rows *ws = NULL;
	int err;

	if ((err = svc_workspace_load(svc_req_caller(req), svc_req_param(req, "wid"), SVC_ACT_WS_READ, NULL, &ws)) < 0)
		return err;
	err = instructions_answer(req, resp, ws);
	svc_rows_free(ws);
	return err;
}

static const struct svc_field instructions_fields[] = {
	{ "text", SVC_V_STR, SVC_F_REQUIRED, 0, SVC_AGENT_WS_INSTRUCTIONS_MAX, NULL },
};
const struct svc_body svc_api_instructions_put_body = SVC_BODY(instructions_fields);

/* PUT /workspaces/:wid/instructions {text} ("" removes them): 200 as GET; 400 (over 16 KiB); 403 (not admin or owner); 404. */
enum svc_err svc_api_instructions_put(struct svc_req *req, struct svc_resp *resp)
{
	const char *text = svc_json_str(req->json, "text");
	struct svc_rows *ws = NULL;
	int err;

	if ((err = svc_workspace_load(svc_req_caller(req), svc_req_param(req, "wid"), SVC_ACT_WS_UPDATE, NULL, &ws)) < 0) {
		if (err == SVC_E_FORBIDDEN)
			svc_resp_error(resp, err, NULL, "Only workspace admins and owners change the workspace's instructions.");
		return err;
	}
	if (strlen(text) > SVC_AGENT_WS_INSTRUCTIONS_MAX) {
		err = svc_resp_error(resp, SVC_E_VALIDATION, "text", "text must be at most %d bytes",
				     SVC_AGENT_WS_INSTRUCTIONS_MAX);
		goto done;
	}
	if ((err = svc_agent_instructions_set(req->ctx->db, svc_rows_get(ws, 0, WCOL_ID), text, req->user_id)) < 0)
		goto done;
	err = instructions_answer(req, resp, ws);
done:
	svc_rows_free(ws);
	return err;
}
