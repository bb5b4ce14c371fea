/* api_integrations.c: integrations (/integrations/...): the catalogue, workspace enablement, the platform admin endpoints (bulk enablement, OAuth apps, platform credentials) and their audit log. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

#include "api/api_integrations.h"
#include "auth/auth.h"
#include "auth/crypto.h"
#include "auth/perm.h"
#include "core/err.h"
#include "core/json.h"
#include "core/log.h"
#include "core/util.h"
#include "integ/integ.h"
#include "integ/integ_oauth.h"
#include "project/project.h"

#define PAGE_DEFAULT 50
#define PAGE_MAX 100
#define SECRET_MAX 8192      /* characters of a client secret, a secret_text or one custom_auth value */
#define CUSTOM_KEYS_MAX 32   /* fields of a custom_auth value */
#define CRED_WORKSPACES_MAX 100 /* workspaces a platform credential may be limited to */

/* ---- helpers ---- */

int svc_api_integrations__require_admin(struct svc_req *req, struct svc_resp *resp)
{
	struct svc_dbv p = svc_dbv_str(req->user_id);
	struct svc_rows *rows = NULL;
	struct svc_perm_subject s;
	int err;

	if ((err = svc_db_run(req->ctx->db, STMT_USER_BY_ID, &p, 1, &rows, NULL)) < 0)
		return err;
	svc_caller_subject(svc_req_caller(req), NULL, rows && rows->nrows == 1 ? svc_rows_get(rows, 0, UCOL_ADMIN) : NULL,
			   &s);
	err = svc_perm_check(&s, SVC_ACT_INTEG_ADMIN, NULL);
	svc_rows_free(rows);
	if (err == SVC_E_FORBIDDEN)
		return svc_resp_error(resp, err, NULL, "Only platform admins manage integrations.");
	return err;
}

/*
 * The workspace whose view the caller gets: ?workspaceId (the caller must be
 * able to read it), else the caller's first (personal) workspace. wid is
 * 37 bytes; "" when the caller has none. Returns 0 or the error.
 */
static int caller_workspace(struct svc_req *req, struct svc_resp *resp, char *wid)
{
	struct svc_rows *rows = NULL;
	struct svc_dbv p;
	char q[37];
	int k, err;

	wid[0] = '\0';
	if ((k = svc_req_query(req, "workspaceId", q, sizeof q)) < 0 || (k && !svc_uuid_valid(q)))
		return svc_resp_error(resp, SVC_E_VALIDATION, "workspaceId", "workspaceId must be a UUID");
	if (k) {
		if ((err = svc_workspace_load(svc_req_caller(req), q, SVC_ACT_WS_READ, NULL, &rows)) < 0)
			return err;
		svc_rows_free(rows);
		snprintf(wid, 37, "%s", q);
		return 0;
	}
	p = svc_dbv_str(req->user_id);
	if ((err = svc_db_run(req->ctx->db, STMT_USER_WORKSPACES, &p, 1, &rows, NULL)) < 0)
		return err;
	if (rows && rows->nrows > 0)
		snprintf(wid, 37, "%s", svc_rows_get(rows, 0, UWCOL_ID));
	svc_rows_free(rows);
	return 0;
}

static int cell_true(const struct svc_rows *rows, size_t r, size_t c)
{
	const char *v = svc_rows_get(rows, r, c);
	return v && strcmp(v, "1") == 0;
}

/* An integration as the caller of workspace `wid` sees it (docs/api.md "Integrations"). */
static struct json_object *integ_json(const struct svc_rows *rows, size_t r, const char *wid)
{
	struct json_object *o = json_object_new_object();
	const char *auth = svc_rows_get(rows, r, ICOL_AUTH_TYPES);

	svc_json_add_str(o, "id", svc_rows_get(rows, r, ICOL_ID));
	svc_json_add_str(o, "displayName", svc_rows_get(rows, r, ICOL_NAME));
	svc_json_add_str(o, "description", svc_rows_get(rows, r, ICOL_DESCRIPTION));
	svc_json_add_str(o, "logoUrl", svc_rows_get(rows, r, ICOL_LOGO));
	json_object_object_add(o, "authTypes", svc_integ_list_json(auth));
	json_object_object_add(o, "categories", svc_integ_list_json(svc_rows_get(rows, r, ICOL_CATEGORIES)));
	json_object_object_add(o, "requiresOAuthApp", json_object_new_boolean(svc_integ_list_has(auth, "oauth2")));
	json_object_object_add(o, "perUserOnly", json_object_new_boolean(cell_true(rows, r, ICOL_PER_USER_ONLY)));
	svc_json_add_str(o, "workspaceId", *wid ? wid : NULL);
	json_object_object_add(o, "enabled", json_object_new_boolean(cell_true(rows, r, ICOL_ENABLED)));
	json_object_object_add(o, "platformEnabled",
			       json_object_new_boolean(cell_true(rows, r, ICOL_PLATFORM_ENABLED)));
	json_object_object_add(o, "defaultEnabled", json_object_new_boolean(cell_true(rows, r, ICOL_DEFAULT_ENABLED)));
	json_object_object_add(o, "configured", json_object_new_boolean(cell_true(rows, r, ICOL_CONFIGURED)));
	json_object_object_add(o, "connected", json_object_new_boolean(cell_true(rows, r, ICOL_CONNECTED)));
	/* the workspace admin's read-only switch; null: the default (read-only with the platform's credential) */
	json_object_object_add(o, "readOnly", svc_rows_get(rows, r, ICOL_READ_ONLY)
						      ? json_object_new_boolean(cell_true(rows, r, ICOL_READ_ONLY))
						      : NULL);
	return o;
}

/* Loads integration `id` as seen from workspace `wid` into *out (one row, ICOL_*). SVC_E_NOT_FOUND when unknown. */
static int integ_load(struct svc_req *req, const char *id, const char *wid, struct svc_rows **out)
{
	struct svc_rows *rows = NULL;
	struct svc_dbv p[6];
	int err;

	if (!svc_integ_id_valid(id))
		return SVC_E_NOT_FOUND;
	p[0] = svc_dbv_str(wid);
	p[1] = svc_dbv_str(wid);
	p[2] = svc_dbv_str(req->user_id);
	p[3] = svc_dbv_str(wid);
	p[4] = svc_dbv_str(wid);
	p[5] = svc_dbv_str(id);
	if ((err = svc_db_run(req->ctx->db, STMT_INTEG_GET, p, 6, &rows, NULL)) < 0)
		return err;
	if (!rows || rows->nrows != 1) {
		svc_rows_free(rows);
		return SVC_E_NOT_FOUND;
	}
	*out = rows;
	return 0;
}

/* Writes "%q%" with LIKE's wildcards of q escaped (backslash, MariaDB's default escape). */
static void like_pattern(const char *q, char *out, size_t max)
{
	size_t o = 0;

	out[o++] = '%';
	for (; *q && o + 3 < max; q++) {
		if (*q == '%' || *q == '_' || *q == '\\')
			out[o++] = '\\';
		out[o++] = *q;
	}
	out[o++] = '%';
	out[o] = '\0';
}

static const char *const auth_types[] = { "oauth2", "secret_text", "basic_auth", "custom_auth", "none", NULL };

static int in_list(const char *s, const char *const *list)
{
	for (; *list; list++)
		if (strcmp(s, *list) == 0)
			return 1;
	return 0;
}

/* Whether `s` is a category name: [A-Z0-9_], 1..64. */
static int category_valid(const char *s)
{
	size_t i;

	for (i = 0; s[i]; i++)
		if (!((s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
			return 0;
	return i > 0 && i <= 64;
}

/* ---- the catalogue ---- */

/*
 * GET /integrations?q&category&authType&cursor&limit&workspaceId: 200 {items, nextCursor, total};
 * 400 validation_failed (q, category, authType, cursor, limit, workspaceId); 403/404 (workspaceId).
 * Ordered by id; total counts every match of the filters.
 */
enum svc_err svc_api_integrations_list(struct svc_req *req, struct svc_resp *resp)
{
	char wid[37], q[256], qpat[600], cat[80], catpat[90], at[32], atpat[40], cur[80] = "", lim[16];
	uint64_t limit = PAGE_DEFAULT;
	struct svc_rows *rows = NULL, *count = NULL;
	struct svc_dbv p[14];
	struct json_object *body, *items;
	size_t r, shown;
	int k, hq, hc, ha, err;

	if ((err = caller_workspace(req, resp, wid)) < 0)
		return err;
	if ((hq = svc_req_query(req, "q", q, sizeof q)) < 0)
		return svc_resp_error(resp, SVC_E_VALIDATION, "q", "q is at most 255 bytes");
	if ((hc = svc_req_query(req, "category", cat, sizeof cat)) < 0 || (hc && !category_valid(cat)))
		return svc_resp_error(resp, SVC_E_VALIDATION, "category", "category is a name such as MARKETING");
	if ((ha = svc_req_query(req, "authType", at, sizeof at)) < 0 || (ha && !in_list(at, auth_types)))
		return svc_resp_error(resp, SVC_E_VALIDATION, "authType",
				      "authType is oauth2, secret_text, basic_auth, custom_auth or none");
	if ((k = svc_req_query(req, "limit", lim, sizeof lim)) < 0 ||
	    (k && (svc_parse_u64(lim, PAGE_MAX, &limit) < 0 || limit == 0)))
		return svc_resp_error(resp, SVC_E_VALIDATION, "limit", "limit must be an integer from 1 to 100");
	if ((k = svc_req_query(req, "cursor", cur, sizeof cur)) < 0 || (k && !svc_integ_id_valid(cur)))
		return svc_resp_error(resp, SVC_E_VALIDATION, "cursor", "cursor is not a cursor this API returned");
	if (hq && !*q)
		hq = 0;
	like_pattern(hq ? q : "", qpat, sizeof qpat);
	snprintf(catpat, sizeof catpat, "%%,%s,%%", hc ? cat : "");
	snprintf(atpat, sizeof atpat, "%%,%s,%%", ha ? at : "");
	p[0] = svc_dbv_str(wid);
	p[1] = svc_dbv_str(wid);
	p[2] = svc_dbv_str(req->user_id);
	p[3] = svc_dbv_str(wid);
	p[4] = svc_dbv_str(wid);
	p[5] = svc_dbv_str(cur);
	p[6] = svc_dbv_str(hq ? "q" : "");
	p[7] = svc_dbv_str(qpat);
	p[8] = svc_dbv_str(qpat);
	p[9] = svc_dbv_str(hc ? "c" : "");
	p[10] = svc_dbv_str(catpat);
	p[11] = svc_dbv_str(ha ? "a" : "");
	p[12] = svc_dbv_str(atpat);
	p[13] = svc_dbv_i64((int64_t)limit + 1);
	if ((err = svc_db_run(req->ctx->db, STMT_INTEG_LIST, p, 14, &rows, NULL)) < 0 ||
	    (err = svc_db_run(req->ctx->db, STMT_INTEG_COUNT, p + 6, 7, &count, NULL)) < 0)
		goto done;
	body = json_object_new_object();
	items = json_object_new_array();
	shown = rows ? (rows->nrows > limit ? limit : rows->nrows) : 0;
	for (r = 0; r < shown; r++)
		json_object_array_add(items, integ_json(rows, r, wid));
	json_object_object_add(body, "items", items);
	svc_json_add_str(body, "nextCursor", rows && rows->nrows > limit ? svc_rows_get(rows, shown - 1, ICOL_ID) : NULL);
	{
		uint64_t total = 0;
		const char *t = count && count->nrows ? svc_rows_get(count, 0, ICNTCOL_N) : NULL;
		if (t)
			svc_parse_u64(t, UINT64_MAX, &total);
		json_object_object_add(body, "total", json_object_new_int64((int64_t)total));
	}
	err = svc_resp_json(resp, 200, body);
done:
	svc_rows_free(rows);
	svc_rows_free(count);
	return err;
}

/* GET /integrations/:integration?workspaceId: 200 the integration; 400 (workspaceId); 403; 404. */
enum svc_err svc_api_integrations_get(struct svc_req *req, struct svc_resp *resp)
{
	struct svc_rows *rows = NULL;
	char wid[37];
	int err;

	if ((err = caller_workspace(req, resp, wid)) < 0)
		return err;
	if ((err = integ_load(req, svc_req_param(req, "integration"), wid, &rows)) < 0)
		return err;
	err = svc_resp_json(resp, 200, integ_json(rows, 0, wid));
	svc_rows_free(rows);
	return err;
}

static const struct svc_field ws_set_fields[] = {
	{ "enabled", SVC_V_BOOL, SVC_F_REQUIRED, 0, 0, NULL },
	{ "readOnly", SVC_V_BOOL, SVC_F_NULLABLE, 0, 0, NULL },
};
const struct svc_body svc_api_integrations_ws_set_body = SVC_BODY(ws_set_fields);

/*
 * PUT /workspaces/:wid/integrations/:integration {enabled, readOnly?}: 200 the integration as the workspace
 * sees it; 403 (below workspace admin); 404 (workspace, integration); 409 conflict (the platform has not
 * made it available). readOnly true: the agent's calls are GET and HEAD only; false: any method; null:
 * the default (read-only with the platform's credential); absent: unchanged. Recorded in the audit log
 * (integrations.workspace_enabled.update, details {workspaceId, enabled, readOnly when given}).
 */
enum svc_err svc_api_integrations_ws_set(struct svc_req *req, struct svc_resp *resp)
{
	const char *wid = svc_req_param(req, "wid"), *id = svc_req_param(req, "integration");
	int enabled = json_object_get_boolean(json_object_object_get(req->json, "enabled"));
	struct json_object *ro = NULL, *details;
	int has_ro = json_object_object_get_ex(req->json, "readOnly", &ro);
	struct svc_rows *ws = NULL, *rows = NULL;
	struct svc_dbv p[6];
	int err;

	if ((err = svc_workspace_load(svc_req_caller(req), wid, SVC_ACT_WS_UPDATE, NULL, &ws)) < 0) {
		if (err == SVC_E_FORBIDDEN)
			svc_resp_error(resp, err, NULL, "Only workspace admins and owners choose its integrations.");
		return err;
	}
	if ((err = integ_load(req, id, wid, &rows)) < 0)
		goto done;
	if (!cell_true(rows, 0, ICOL_PLATFORM_ENABLED)) {
		err = svc_resp_error(resp, SVC_E_CONFLICT, NULL, "The platform has not made %s available.", id);
		goto done;
	}
	svc_rows_free(rows);
	rows = NULL;
	p[0] = svc_dbv_str(wid);
	p[1] = svc_dbv_str(id);
	p[2] = svc_dbv_i64(enabled);
	p[3] = has_ro && ro ? svc_dbv_i64(json_object_get_boolean(ro)) : svc_dbv_null();
	p[4] = svc_dbv_str(req->user_id);
	p[5] = svc_dbv_i64(has_ro);
	details = json_object_new_object();
	svc_json_add_str(details, "workspaceId", wid);
	json_object_object_add(details, "enabled", json_object_new_boolean(enabled));
	if (has_ro)
		json_object_object_add(details, "readOnly", ro ? json_object_new_boolean(json_object_get_boolean(ro)) : NULL);
	err = svc_api_integrations__audited(req, STMT_INTEG_WS_SET, p, 6, 0, "integrations.workspace_enabled.update", id,
					    details, NULL);
	json_object_put(details);
	if (err < 0)
		goto done;
	if ((err = integ_load(req, id, wid, &rows)) < 0)
		goto done;
	err = svc_resp_json(resp, 200, integ_json(rows, 0, wid));
done:
	svc_rows_free(ws);
	svc_rows_free(rows);
	return err;
}

/* ---- bulk enablement ---- */

static const struct svc_field bulk_fields[] = {
	{ "integrationIds", SVC_V_ARRAY, SVC_F_REQUIRED, 1, SVC_INTEG_BULK_MAX, NULL },
	{ "enabled", SVC_V_BOOL, SVC_F_REQUIRED, 0, 0, NULL },
};
const struct svc_body svc_api_integrations_bulk_body = SVC_BODY(bulk_fields);

/* The writes of a bulk enablement, a transaction of svc_db_tx(): unknown ids are collected, not written. */
struct bulk_tx {
	struct json_object *ids, *unknown;
	enum svc_stmt stmt;
	int enabled;
	const char *action, *actor;
};

static int bulk_run(struct svc_db *db, void *arg)
{
	struct bulk_tx *b = arg;
	struct json_object *details;
	struct svc_dbv p[2];
	size_t i, n = json_object_array_length(b->ids);
	int err = 0;

	json_object_put(b->unknown); /* anew on each run */
	b->unknown = json_object_new_array();
	for (i = 0; i < n && err == 0; i++) {
		const char *id = json_object_get_string(json_object_array_get_idx(b->ids, i));
		struct svc_rows *def = NULL;

		if (!svc_integ_id_valid(id)) {
			json_object_array_add(b->unknown, json_object_new_string(id));
			continue;
		}
		p[0] = svc_dbv_str(id);
		if ((err = svc_db_run(db, STMT_INTEG_DEF, p, 1, &def, NULL)) < 0)
			break;
		if (!def || def->nrows != 1) {
			json_object_array_add(b->unknown, json_object_new_string(id));
			svc_rows_free(def);
			continue;
		}
		svc_rows_free(def);
		p[0] = svc_dbv_i64(b->enabled);
		p[1] = svc_dbv_str(id);
		if ((err = svc_db_run(db, b->stmt, p, 2, NULL, NULL)) < 0)
			break;
		details = json_object_new_object();
		json_object_object_add(details, "enabled", json_object_new_boolean(b->enabled));
		err = svc_integ_audit(db, b->action, id, details, b->actor);
		json_object_put(details);
	}
	if (err == 0 && json_object_array_length(b->unknown) > 0)
		err = SVC_E_VALIDATION; /* nothing is changed */
	return err;
}

/*
 * The two bulk endpoints: sets `stmt` (the platform's default or its availability) to
 * `enabled` for every id, in one transaction, each recorded as `action`. Answers 200
 * {integrationIds, enabled}; 400 validation_failed (integrationIds: not strings, or
 * unknown ids, all named in unknownIds and the message; nothing is changed); 403.
 */
static int bulk(struct svc_req *req, struct svc_resp *resp, enum svc_stmt stmt, const char *action)
{
	struct json_object *ids = json_object_object_get(req->json, "integrationIds"), *body;
	struct bulk_tx b = { ids, NULL, stmt, json_object_get_boolean(json_object_object_get(req->json, "enabled")), action,
			     req->user_id };
	size_t i, n = json_object_array_length(ids);
	struct svc_buf names;
	int err;

	if ((err = svc_api_integrations__require_admin(req, resp)) < 0)
		return err;
	if (n == 0)
		return svc_resp_error(resp, SVC_E_VALIDATION, "integrationIds", "integrationIds must name 1 to 50 integrations");
	for (i = 0; i < n; i++) {
		struct json_object *v = json_object_array_get_idx(ids, i);
		if (!json_object_is_type(v, json_type_string))
			return svc_resp_error(resp, SVC_E_VALIDATION, "integrationIds",
					      "integrationIds must be strings");
	}
	svc_buf_init(&names, 4096);
	err = svc_db_tx(req->ctx->db, bulk_run, &b);
	if (err == SVC_E_VALIDATION && b.unknown && json_object_array_length(b.unknown) > 0) {
		for (i = 0; i < json_object_array_length(b.unknown); i++)
			svc_buf_addf(&names, "%s%.64s", i ? ", " : "",
				     json_object_get_string(json_object_array_get_idx(b.unknown, i)));
		body = json_object_new_object();
		svc_json_add_str(body, "error", "validation_failed");
		svc_json_add_str(body, "field", "integrationIds");
		{
			char msg[512];
			snprintf(msg, sizeof msg, "unknown integration ids: %s", svc_buf_str(&names));
			svc_json_add_str(body, "message", msg);
		}
		json_object_object_add(body, "unknownIds", json_object_get(b.unknown));
		err = svc_resp_json(resp, 400, body);
		goto done;
	}
	if (err < 0)
		goto done;
	svc_log_info("integrations: user %s set %s of %zu integrations to %d", req->user_id, action, n, b.enabled);
	body = json_object_new_object();
	json_object_object_add(body, "integrationIds", json_object_get(ids));
	json_object_object_add(body, "enabled", json_object_new_boolean(b.enabled));
	err = svc_resp_json(resp, 200, body);
done:
	json_object_put(b.unknown);
	svc_buf_dispose(&names);
	return err;
}

/* POST /integrations/admin/enabled/bulk {integrationIds, enabled}: as bulk(). */
enum svc_err svc_api_integrations_enabled_bulk(struct svc_req *req, struct svc_resp *resp)
{
	return bulk(req, resp, STMT_INTEG_SET_ENABLED, "integrations.enabled.update");
}

/* POST /integrations/admin/platform-enabled/bulk {integrationIds, enabled}: as bulk(). */
enum svc_err svc_api_integrations_platform_enabled_bulk(struct svc_req *req, struct svc_resp *resp)
{
	return bulk(req, resp, STMT_INTEG_SET_PLATFORM_ENABLED, "integrations.platform_enabled.update");
}

/* One audited write, a transaction of svc_db_tx(): a statement, then its audit entry. */
struct audited {
	enum svc_stmt stmt;
	const struct svc_dbv *p;
	size_t n;
	int need_row;      /* 1: no row affected is SVC_E_NOT_FOUND, and nothing is written */
	uint64_t affected;
	const char *action, *resource, *actor;
	struct json_object *details;
};

static int audited_tx(struct svc_db *db, void *arg)
{
	struct audited *a = arg;
	int err;

	a->affected = 0;
	if ((err = svc_db_run(db, a->stmt, a->p, a->n, NULL, &a->affected)) < 0)
		return err;
	if (a->need_row && a->affected == 0)
		return SVC_E_NOT_FOUND;
	return svc_integ_audit(db, a->action, a->resource, a->details, a->actor);
}

int svc_api_integrations__audited(struct svc_req *req, enum svc_stmt stmt, const struct svc_dbv *p, size_t n,
				  int need_row, const char *action, const char *resource, struct json_object *details,
				  uint64_t *affected)
{
	struct audited a = { stmt, p, n, need_row, 0, action, resource, req->user_id, details };
	int err = svc_db_tx(req->ctx->db, audited_tx, &a);

	if (err < 0)
		return err;
	if (affected)
		*affected = a.affected;
	return 0;
}

/* An audited delete of one row: `stmt` with the one parameter `p`; 204, or 404 when the row is gone. */
static int audited_delete(struct svc_req *req, struct svc_resp *resp, enum svc_stmt stmt, const struct svc_dbv *p,
			  const char *action, const char *resource_id, struct json_object *details)
{
	int err = svc_api_integrations__audited(req, stmt, p, 1, 1, action, resource_id, details, NULL);

	if (err < 0)
		return err;
	svc_log_info("integrations: user %s: %s of %s", req->user_id, action, resource_id);
	resp->status = 204;
	return 0;
}

/* ---- OAuth apps ---- */

static const char *const app_scopes[] = { "global", "workspace", NULL };
static const struct svc_field app_fields[] = {
	{ "integrationId", SVC_V_STR, SVC_F_REQUIRED, 1, SVC_INTEG_ID_MAX, NULL },
	{ "clientId", SVC_V_TEXT, SVC_F_REQUIRED, 1, 512, NULL },
	{ "clientSecret", SVC_V_TEXT, SVC_F_REQUIRED, 1, SECRET_MAX, NULL },
	{ "scope", SVC_V_ENUM, SVC_F_REQUIRED, 0, 0, app_scopes },
	{ "workspaceId", SVC_V_UUID, SVC_F_NULLABLE, 0, 0, NULL },
};
const struct svc_body svc_api_integrations_app_upsert_body = SVC_BODY(app_fields);

/* An OAuth app as answered: {id, integrationId, scope, workspaceId, clientIdHint, updatedAt}; never the secret. */
static struct json_object *app_json(const struct svc_rows *rows, size_t r)
{
	struct json_object *o = json_object_new_object();
	char hint[32];

	svc_integ_client_hint(svc_rows_get(rows, r, IACOL_CLIENT_ID), hint, sizeof hint);
	svc_json_add_str(o, "id", svc_rows_get(rows, r, IACOL_ID));
	svc_json_add_str(o, "integrationId", svc_rows_get(rows, r, IACOL_INTEGRATION));
	svc_json_add_str(o, "scope", svc_rows_get(rows, r, IACOL_SCOPE));
	svc_json_add_str(o, "workspaceId", svc_rows_get(rows, r, IACOL_WORKSPACE));
	svc_json_add_str(o, "clientIdHint", hint);
	svc_json_add_time(o, "updatedAt", svc_rows_get(rows, r, IACOL_UPDATED));
	return o;
}

/* The audit details of an OAuth app: {clientIdTail, isGlobal, workspaceId}. */
static struct json_object *app_details(const char *client_id, const char *wid)
{
	struct json_object *d = json_object_new_object();
	char hint[32];

	svc_integ_client_hint(client_id, hint, sizeof hint);
	svc_json_add_str(d, "clientIdTail", hint);
	json_object_object_add(d, "isGlobal", json_object_new_boolean(wid == NULL));
	svc_json_add_str(d, "workspaceId", wid);
	return d;
}

/*
 * Loads the definition of integration `id` into *out (IDCOL_*). 400 validation_failed on `field`
 * when unknown (recorded in resp). Returns 0 or the error.
 */
static int def_load(struct svc_req *req, struct svc_resp *resp, const char *id, const char *field,
		    struct svc_rows **out)
{
	struct svc_rows *rows = NULL;
	struct svc_dbv p = svc_dbv_str(id);
	int err;

	if (!svc_integ_id_valid(id))
		return svc_resp_error(resp, SVC_E_VALIDATION, field, "no integration %.64s", id);
	if ((err = svc_db_run(req->ctx->db, STMT_INTEG_DEF, &p, 1, &rows, NULL)) < 0)
		return err;
	if (!rows || rows->nrows != 1) {
		svc_rows_free(rows);
		return svc_resp_error(resp, SVC_E_VALIDATION, field, "no integration %.64s", id);
	}
	*out = rows;
	return 0;
}

/*
 * POST /integrations/admin/oauth-apps {integrationId, clientId, clientSecret, scope, workspaceId?}:
 * 201 (new) or 200 (replaced) {id, integrationId, scope, workspaceId, clientIdHint, updatedAt};
 * 400 validation_failed (integrationId unknown or without oauth2; workspaceId missing for scope
 * workspace, given for global, or no such workspace); 403. The secret is sealed before it is
 * stored (lib/auth/crypto.h; the workspace's data key with SVC_ENVELOPE_ENCRYPTION=1); 503 when
 * ENCRYPTION_KEY is not set. Recorded as integrations.oauth_app.upsert.
 */
enum svc_err svc_api_integrations_app_upsert(struct svc_req *req, struct svc_resp *resp)
{
	const char *id = svc_json_str(req->json, "integrationId"), *client_id = svc_json_str(req->json, "clientId");
	const char *secret = svc_json_str(req->json, "clientSecret"), *scope = svc_json_str(req->json, "scope");
	const char *wid = svc_json_str(req->json, "workspaceId");
	struct svc_rows *def = NULL, *ws = NULL, *rows = NULL;
	struct json_object *details = NULL;
	char row[128], app_id[37];
	char *sealed = NULL;
	struct svc_dbv p[8];
	uint64_t affected = 0;
	int err, global = strcmp(scope, "global") == 0;

	if ((err = svc_api_integrations__require_admin(req, resp)) < 0)
		return err;
	if ((err = def_load(req, resp, id, "integrationId", &def)) < 0)
		return err;
	if (!svc_integ_list_has(svc_rows_get(def, 0, IDCOL_AUTH_TYPES), "oauth2")) {
		err = svc_resp_error(resp, SVC_E_VALIDATION, "integrationId", "%s does not use OAuth", id);
		goto done;
	}
	if (global && wid) {
		err = svc_resp_error(resp, SVC_E_VALIDATION, "workspaceId", "a global app has no workspaceId");
		goto done;
	}
	if (!global) {
		if (!wid) {
			err = svc_resp_error(resp, SVC_E_VALIDATION, "workspaceId", "scope workspace needs workspaceId");
			goto done;
		}
		p[0] = svc_dbv_str(wid);
		if ((err = svc_db_run(req->ctx->db, STMT_WS_PLAN_GET, p, 1, &ws, NULL)) < 0)
			goto done;
		if (!ws || ws->nrows != 1) {
			err = svc_resp_error(resp, SVC_E_VALIDATION, "workspaceId", "no such workspace");
			goto done;
		}
	}
	snprintf(row, sizeof row, "%s:%s", id, global ? "global" : wid);
	if ((err = svc_crypto_seal_secret(req->ctx->db, &req->ctx->cfg, global ? NULL : wid, "integration_oauth_apps",
					  "client_secret", row, secret, strlen(secret), &sealed)) < 0)
		goto done;
	if ((err = svc_uuid_v4(app_id)) < 0)
		goto done;
	p[0] = svc_dbv_str(app_id);
	p[1] = svc_dbv_str(id);
	p[2] = svc_dbv_str(scope);
	p[3] = svc_dbv_str(global ? NULL : wid);
	p[4] = svc_dbv_str(global ? "" : wid);
	p[5] = svc_dbv_str(client_id);
	p[6] = svc_dbv_str(sealed);
	p[7] = svc_dbv_str(req->user_id);
	details = app_details(client_id, global ? NULL : wid);
	if ((err = svc_api_integrations__audited(req, STMT_INTEG_APP_UPSERT, p, 8, 0, "integrations.oauth_app.upsert", id,
						 details, &affected)) < 0)
		goto done;
	p[0] = svc_dbv_str(id);
	p[1] = svc_dbv_str(global ? "" : wid);
	if ((err = svc_db_run(req->ctx->db, STMT_INTEG_APP_BY_KEY, p, 2, &rows, NULL)) < 0)
		goto done;
	if (!rows || rows->nrows != 1) {
		err = SVC_E_INTERNAL;
		goto done;
	}
	svc_log_info("integrations: user %s stored the %s OAuth app %s of %s", req->user_id, scope,
		     svc_rows_get(rows, 0, IACOL_ID), id);
	err = svc_resp_json(resp, affected == 1 ? 201 : 200, app_json(rows, 0));
done:
	if (sealed)
		free(sealed);
	json_object_put(details);
	svc_rows_free(def);
	svc_rows_free(ws);
	svc_rows_free(rows);
	return err;
}

/* GET /integrations/admin/oauth-apps?integrationId: 200 {items: [OAuth app]}; 400 (integrationId); 403. */
enum svc_err svc_api_integrations_app_list(struct svc_req *req, struct svc_resp *resp)
{
	struct svc_rows *rows = NULL;
	struct json_object *body, *items;
	struct svc_dbv p;
	char id[80];
	size_t r;
	int k, err;

	if ((err = svc_api_integrations__require_admin(req, resp)) < 0)
		return err;
	if ((k = svc_req_query(req, "integrationId", id, sizeof id)) <= 0 || !svc_integ_id_valid(id))
		return svc_resp_error(resp, SVC_E_VALIDATION, "integrationId", "integrationId is required");
	p = svc_dbv_str(id);
	if ((err = svc_db_run(req->ctx->db, STMT_INTEG_APP_LIST, &p, 1, &rows, NULL)) < 0)
		return err;
	body = json_object_new_object();
	items = json_object_new_array();
	for (r = 0; rows && r < rows->nrows; r++)
		json_object_array_add(items, app_json(rows, r));
	json_object_object_add(body, "items", items);
	svc_rows_free(rows);
	return svc_resp_json(resp, 200, body);
}

/*
 * DELETE /integrations/admin/oauth-apps/:appId: 204; 403; 404. Users of the platform credential lose
 * it at once; per-user tokens stay. Recorded as integrations.oauth_app.delete.
 */
enum svc_err svc_api_integrations_app_delete(struct svc_req *req, struct svc_resp *resp)
{
	const char *app_id = svc_req_param(req, "appId");
	struct svc_rows *rows = NULL;
	struct json_object *details = NULL;
	struct svc_dbv p = svc_dbv_str(app_id);
	int err;

	if ((err = svc_api_integrations__require_admin(req, resp)) < 0)
		return err;
	if ((err = svc_db_run(req->ctx->db, STMT_INTEG_APP_GET, &p, 1, &rows, NULL)) < 0)
		goto done;
	if (!rows || rows->nrows != 1) {
		err = SVC_E_NOT_FOUND;
		goto done;
	}
	details = app_details(svc_rows_get(rows, 0, IACOL_CLIENT_ID), svc_rows_get(rows, 0, IACOL_WORKSPACE));
	err = audited_delete(req, resp, STMT_INTEG_APP_DELETE, &p, "integrations.oauth_app.delete",
			     svc_rows_get(rows, 0, IACOL_INTEGRATION), details);
done:
	json_object_put(details);
	svc_rows_free(rows);
	return err;
}

/* ---- platform credentials ---- */

static const char *const cred_types[] = { "secret_text", "basic_auth", "custom_auth", NULL };
static const struct svc_field cred_fields[] = {
	{ "integrationId", SVC_V_STR, SVC_F_REQUIRED, 1, SVC_INTEG_ID_MAX, NULL },
	{ "authType", SVC_V_ENUM, SVC_F_REQUIRED, 0, 0, cred_types },
	{ "workspaceIds", SVC_V_ARRAY, SVC_F_NULLABLE, 0, CRED_WORKSPACES_MAX, NULL },
};
const struct svc_body svc_api_integrations_cred_upsert_body = SVC_BODY(cred_fields);
static const struct svc_field cred_ws_fields[] = {
	{ "workspaceIds", SVC_V_ARRAY, SVC_F_REQUIRED | SVC_F_NULLABLE, 0, CRED_WORKSPACES_MAX, NULL },
};
const struct svc_body svc_api_integrations_cred_workspaces_body = SVC_BODY(cred_ws_fields);

/*
 * The workspaces a platform credential may be used in, from `ids` (NULL or JSON null: all; else an array
 * of workspace ids, each of an existing workspace) into `out` as stored: "" for all (the caller stores
 * NULL), else ",<id>,<id>," ("," for none). 400 validation_failed (workspaceIds; recorded in resp).
 */
static int cred_workspaces(struct svc_req *req, struct svc_resp *resp, struct json_object *ids, struct svc_buf *out)
{
	size_t i, n;
	int err;

	if (!ids)
		return 0;
	n = json_object_array_length(ids);
	if ((err = svc_buf_adds(out, ",")) < 0)
		return err;
	for (i = 0; i < n; i++) {
		const char *w = json_object_get_string(json_object_array_get_idx(ids, i));
		struct svc_rows *ws = NULL;
		struct svc_dbv p;

		if (!json_object_is_type(json_object_array_get_idx(ids, i), json_type_string) || !svc_uuid_valid(w))
			return svc_resp_error(resp, SVC_E_VALIDATION, "workspaceIds", "workspaceIds holds workspace ids");
		if (svc_integ_list_has(svc_buf_str(out), w))
			continue;
		p = svc_dbv_str(w);
		if ((err = svc_db_run(req->ctx->db, STMT_WS_PLAN_GET, &p, 1, &ws, NULL)) < 0)
			return err;
		err = ws && ws->nrows == 1 ? 0 : SVC_E_NOT_FOUND;
		svc_rows_free(ws);
		if (err < 0)
			return svc_resp_error(resp, SVC_E_VALIDATION, "workspaceIds", "no workspace %.36s", w);
		if ((err = svc_buf_addf(out, "%s,", w)) < 0)
			return err;
	}
	return 0;
}

/* Whether `v` is a string of 1..SECRET_MAX characters (valid UTF-8, as the body parser left it). */
static int secret_string(struct json_object *v)
{
	const char *s = json_object_get_string(v);
	return json_object_is_type(v, json_type_string) && s && *s &&
	       svc_utf8_count(s, strlen(s)) <= SECRET_MAX;
}

/*
 * Checks `value` against the shape of `type`: secret_text a string; basic_auth {username, password}
 * (strings, the username not empty, nothing else); custom_auth an object of 1..32 strings.
 * Returns NULL when it fits, else a message.
 */
static const char *cred_shape(const char *type, struct json_object *value)
{
	if (strcmp(type, "secret_text") == 0)
		return secret_string(value) ? NULL : "a secret_text value is a non-empty string";
	if (!json_object_is_type(value, json_type_object))
		return strcmp(type, "basic_auth") == 0 ? "a basic_auth value is {username, password}"
						       : "a custom_auth value is an object of strings";
	if (strcmp(type, "basic_auth") == 0) {
		struct json_object *u = json_object_object_get(value, "username"), *pw = json_object_object_get(value, "password");
		if (json_object_object_length(value) != 2 || !secret_string(u) || !pw ||
		    !json_object_is_type(pw, json_type_string) || strlen(json_object_get_string(pw)) > SECRET_MAX)
			return "a basic_auth value is {username, password}, both strings";
		return NULL;
	}
	if (json_object_object_length(value) < 1 || json_object_object_length(value) > CUSTOM_KEYS_MAX)
		return "a custom_auth value is an object of 1 to 32 strings";
	{
		json_object_object_foreach(value, key, v)
		{
			if (!json_object_is_type(v, json_type_string) || strlen(json_object_get_string(v)) > SECRET_MAX ||
			    strlen(key) > 128)
				return "a custom_auth value is an object of strings";
		}
	}
	return NULL;
}

/*
 * The answer about a platform credential: {integrationId, authType, workspaceIds (null: every workspace),
 * configured, updatedAt}; never the value.
 */
static struct json_object *cred_json(const struct svc_rows *rows)
{
	struct json_object *o = json_object_new_object();
	const char *ws = svc_rows_get(rows, 0, ICRCOL_WORKSPACES);

	svc_json_add_str(o, "integrationId", svc_rows_get(rows, 0, ICRCOL_INTEGRATION));
	svc_json_add_str(o, "authType", svc_rows_get(rows, 0, ICRCOL_AUTH_TYPE));
	json_object_object_add(o, "workspaceIds", ws ? svc_integ_list_json(ws) : NULL);
	json_object_object_add(o, "configured", json_object_new_boolean(1));
	svc_json_add_time(o, "updatedAt", svc_rows_get(rows, 0, ICRCOL_UPDATED));
	return o;
}

/*
 * POST /integrations/admin/credentials {integrationId, authType, value, workspaceIds?}: 201 (new) or 200
 * (replaced) {integrationId, authType, workspaceIds, configured, updatedAt}; 400 validation_failed
 * (integrationId unknown; authType not one of the integration's; value of the wrong shape; workspaceIds
 * not ids of workspaces); 403; 503 without ENCRYPTION_KEY. workspaceIds: where the agent may use it (null:
 * every workspace; absent: null for a new credential, unchanged for a replaced one). The value is sealed
 * with the instance key; recorded as integrations.platform_credentials.upsert.
 */
enum svc_err svc_api_integrations_cred_upsert(struct svc_req *req, struct svc_resp *resp)
{
	const char *id = svc_json_str(req->json, "integrationId"), *type = svc_json_str(req->json, "authType");
	struct json_object *value = json_object_object_get(req->json, "value"), *details = NULL, *ids = NULL;
	int has_ids = json_object_object_get_ex(req->json, "workspaceIds", &ids);
	struct svc_rows *def = NULL, *rows = NULL;
	const char *why, *plain;
	char row[96], *sealed = NULL;
	struct svc_buf wl;
	struct svc_dbv p[6];
	uint64_t affected = 0;
	int err;

	svc_buf_init(&wl, CRED_WORKSPACES_MAX * 40 + 8);
	if ((err = svc_api_integrations__require_admin(req, resp)) < 0)
		return err;
	if ((err = cred_workspaces(req, resp, ids, &wl)) < 0)
		goto done;
	if (!value) {
		err = svc_resp_error(resp, SVC_E_VALIDATION, "value", "value is required");
		goto done;
	}
	if ((why = cred_shape(type, value)) != NULL) {
		err = svc_resp_error(resp, SVC_E_VALIDATION, "value", "%s", why);
		goto done;
	}
	if ((err = def_load(req, resp, id, "integrationId", &def)) < 0)
		goto done;
	if (!svc_integ_list_has(svc_rows_get(def, 0, IDCOL_AUTH_TYPES), type)) {
		err = svc_resp_error(resp, SVC_E_VALIDATION, "authType", "%s does not use %s", id, type);
		goto done;
	}
	plain = json_object_to_json_string_ext(value, JSON_C_TO_STRING_PLAIN);
	snprintf(row, sizeof row, "%s:global", id);
	if ((err = svc_crypto_seal_secret(req->ctx->db, &req->ctx->cfg, NULL, "integration_credentials", "value", row,
					  plain, strlen(plain), &sealed)) < 0)
		goto done;
	p[0] = svc_dbv_str(id);
	p[1] = svc_dbv_str(type);
	p[2] = svc_dbv_str(sealed);
	p[3] = ids ? svc_dbv_str(svc_buf_str(&wl)) : svc_dbv_null();
	p[4] = svc_dbv_str(req->user_id);
	p[5] = svc_dbv_i64(has_ids);
	details = json_object_new_object();
	svc_json_add_str(details, "authType", type);
	json_object_object_add(details, "isGlobal", json_object_new_boolean(1));
	svc_json_add_str(details, "workspaceId", NULL);
	if (has_ids)
		json_object_object_add(details, "workspaceIds", json_object_get(ids));
	if ((err = svc_api_integrations__audited(req, STMT_INTEG_CRED_UPSERT, p, 6, 0,
						 "integrations.platform_credentials.upsert", id, details, &affected)) < 0 ||
	    (err = svc_db_run(req->ctx->db, STMT_INTEG_CRED_GET, p, 1, &rows, NULL)) < 0)
		goto done;
	if (!rows || rows->nrows != 1) {
		err = SVC_E_INTERNAL;
		goto done;
	}
	svc_log_info("integrations: user %s stored the %s platform credential of %s", req->user_id, type, id);
	err = svc_resp_json(resp, affected == 1 ? 201 : 200, cred_json(rows));
done:
	if (sealed)
		free(sealed);
	svc_buf_dispose(&wl);
	json_object_put(details);
	svc_rows_free(def);
	svc_rows_free(rows);
	return err;
}

/*
 * PUT /integrations/admin/credentials/:integration/workspaces {workspaceIds}: 200 the credential as POST
 * answers it; 400 validation_failed (workspaceIds: not ids of workspaces); 403; 404 (no credential).
 * null: every workspace; a list: only those (the agent in any other workspace has no platform credential).
 * Recorded as integrations.platform_credentials.workspaces.update, details {workspaceIds}.
 */
enum svc_err svc_api_integrations_cred_workspaces(struct svc_req *req, struct svc_resp *resp)
{
	const char *id = svc_req_param(req, "integration");
	struct json_object *ids = json_object_object_get(req->json, "workspaceIds"), *details = NULL;
	struct svc_rows *rows = NULL;
	struct svc_buf wl;
	struct svc_dbv p[3];
	int err;

	svc_buf_init(&wl, CRED_WORKSPACES_MAX * 40 + 8);
	if ((err = svc_api_integrations__require_admin(req, resp)) < 0)
		return err;
	if (!svc_integ_id_valid(id))
		return SVC_E_NOT_FOUND;
	if ((err = cred_workspaces(req, resp, ids, &wl)) < 0)
		goto done;
	p[0] = ids ? svc_dbv_str(svc_buf_str(&wl)) : svc_dbv_null();
	p[1] = svc_dbv_str(req->user_id);
	p[2] = svc_dbv_str(id);
	details = json_object_new_object();
	json_object_object_add(details, "workspaceIds", json_object_get(ids));
	if ((err = svc_api_integrations__audited(req, STMT_INTEG_CRED_WS_SET, p, 3, 1,
						 "integrations.platform_credentials.workspaces.update", id, details, NULL)) < 0)
		goto done;
	p[0] = svc_dbv_str(id);
	if ((err = svc_db_run(req->ctx->db, STMT_INTEG_CRED_GET, p, 1, &rows, NULL)) < 0)
		goto done;
	err = rows && rows->nrows == 1 ? svc_resp_json(resp, 200, cred_json(rows)) : SVC_E_NOT_FOUND;
done:
	svc_buf_dispose(&wl);
	json_object_put(details);
	svc_rows_free(rows);
	return err;
}

/* GET /integrations/admin/credentials/:integration: 200 {integrationId, authType, configured, updatedAt}; 403; 404 (none). */
enum svc_err svc_api_integrations_cred_get(struct svc_req *req, struct svc_resp *resp)
{
	const char *id = svc_req_param(req, "integration");
	struct svc_rows *rows = NULL;
	struct svc_dbv p = svc_dbv_str(id);
	int err;

	if ((err = svc_api_integrations__require_admin(req, resp)) < 0)
		return err;
	if (!svc_integ_id_valid(id))
		return SVC_E_NOT_FOUND;
	if ((err = svc_db_run(req->ctx->db, STMT_INTEG_CRED_GET, &p, 1, &rows, NULL)) < 0)
		return err;
	if (!rows || rows->nrows != 1)
		err = SVC_E_NOT_FOUND;
	else
		err = svc_resp_json(resp, 200, cred_json(rows));
	svc_rows_free(rows);
	return err;
}

/*
 * DELETE /integrations/admin/credentials/:integration: 204; 403; 404 (no credential). configured is
 * false at once where nothing else configures it; recorded as integrations.platform_credentials.delete.
 */
enum svc_err svc_api_integrations_cred_delete(struct svc_req *req, struct svc_resp *resp)
{
	const char *id = svc_req_param(req, "integration");
	struct json_object *details = NULL;
	struct svc_rows *rows = NULL;
	struct svc_dbv p = svc_dbv_str(id);
	int err;

	if ((err = svc_api_integrations__require_admin(req, resp)) < 0)
		return err;
	if (!svc_integ_id_valid(id))
		return SVC_E_NOT_FOUND;
	if ((err = svc_db_run(req->ctx->db, STMT_INTEG_CRED_GET, &p, 1, &rows, NULL)) < 0)
		goto done;
	if (!rows || rows->nrows != 1) {
		err = SVC_E_NOT_FOUND;
		goto done;
	}
	details = json_object_new_object();
	svc_json_add_str(details, "authType", svc_rows_get(rows, 0, ICRCOL_AUTH_TYPE));
	json_object_object_add(details, "isGlobal", json_object_new_boolean(1));
	svc_json_add_str(details, "workspaceId", NULL);
	err = audited_delete(req, resp, STMT_INTEG_CRED_DELETE, &p, "integrations.platform_credentials.delete", id, details);
done:
	json_object_put(details);
	svc_rows_free(rows);
	return err;
}

/* ---- the audit log ---- */

int svc_api_integrations__seq_page(struct svc_req *req, struct svc_resp *resp, enum svc_stmt stmt,
				   struct svc_rows **out, uint64_t *out_limit)
{
	char cur[32], lim[16];
	uint64_t limit = PAGE_DEFAULT, before = INT64_MAX;
	struct svc_dbv p[2];
	int k, err;

	if ((err = svc_api_integrations__require_admin(req, resp)) < 0)
		return err;
	if ((k = svc_req_query(req, "limit", lim, sizeof lim)) < 0 ||
	    (k && (svc_parse_u64(lim, PAGE_MAX, &limit) < 0 || limit == 0)))
		return svc_resp_error(resp, SVC_E_VALIDATION, "limit", "limit must be an integer from 1 to 100");
	if ((k = svc_req_query(req, "cursor", cur, sizeof cur)) < 0 ||
	    (k && (svc_parse_u64(cur, INT64_MAX, &before) < 0 || before == 0)))
		return svc_resp_error(resp, SVC_E_VALIDATION, "cursor", "cursor is not a cursor this API returned");
	p[0] = svc_dbv_i64((int64_t)before);
	p[1] = svc_dbv_i64((int64_t)limit + 1);
	if ((err = svc_db_run(req->ctx->db, stmt, p, 2, out, NULL)) < 0)
		return err;
	*out_limit = limit;
	return 0;
}

/* The resourceType of an audit entry, from its action: "integration" unless one of the others (docs/api.md). */
static const char *resource_type(const char *action)
{
	static const struct {
		const char *prefix, *type;
	} types[] = {
		{ "workspaces.", "workspace" },
		{ "auth.tokens.", "api_token" },
		{ "auth.assistant_token.", "assistant_token" },
	};
	size_t i;

	for (i = 0; action && i < sizeof types / sizeof types[0]; i++)
		if (strncmp(action, types[i].prefix, strlen(types[i].prefix)) == 0)
			return types[i].type;
	return "integration";
}

/*
 * GET /integrations/admin/audit?cursor&limit: 200 {entries: [{id, action, resourceType, resourceId, details,
 * actorId, at}], nextCursor}, newest first; 400 (cursor, limit); 403.
 */
enum svc_err svc_api_integrations_audit(struct svc_req *req, struct svc_resp *resp)
{
	uint64_t limit;
	struct svc_rows *rows = NULL;
	struct json_object *body, *entries;
	size_t r, shown;
	int err;

	if ((err = svc_api_integrations__seq_page(req, resp, STMT_INTEG_AUDIT_LIST, &rows, &limit)) < 0)
		return err;
	body = json_object_new_object();
	entries = json_object_new_array();
	shown = rows ? (rows->nrows > limit ? limit : rows->nrows) : 0;
	for (r = 0; r < shown; r++) {
		struct json_object *e = json_object_new_object(), *details = NULL;
		const char *d = svc_rows_get(rows, r, IAUCOL_DETAILS);
		svc_json_add_str(e, "id", svc_rows_get(rows, r, IAUCOL_ID));
		svc_json_add_str(e, "action", svc_rows_get(rows, r, IAUCOL_ACTION));
		svc_json_add_str(e, "resourceType", resource_type(svc_rows_get(rows, r, IAUCOL_ACTION)));
		svc_json_add_str(e, "resourceId", svc_rows_get(rows, r, IAUCOL_RESOURCE));
		if (d && svc_json_parse_object(d, strlen(d), &details) < 0)
			details = NULL;
		json_object_object_add(e, "details", details ? details : json_object_new_object());
		svc_json_add_str(e, "actorId", svc_rows_get(rows, r, IAUCOL_ACTOR));
		svc_json_add_time(e, "at", svc_rows_get(rows, r, IAUCOL_AT));
		json_object_array_add(entries, e);
	}
	json_object_object_add(body, "entries", entries);
	svc_json_add_str(body, "nextCursor", rows && rows->nrows > limit ? svc_rows_get(rows, shown - 1, IAUCOL_SEQ) : NULL);
	svc_rows_free(rows);
	return svc_resp_json(resp, 200, body);
}

/* ---- per-user OAuth ---- */

#define STATE_COOKIE "svc_integ_state"
#define STATE_COOKIE_PATH "/api/integrations/oauth"
#define STATE_TTL_SECS 600

/* The sealed verifier's aad row of a connect in progress: "<state hash>:<user>". */
static void state_row(const char *state_hash, const char *user_id, char *out, size_t max)
{
	snprintf(out, max, "%s:%s", state_hash, user_id);
}

/*
 * GET /integrations/:integration/connect?workspaceId: 302 to the provider's authorize URL (RFC 6749
 * section 4.1.1) with state (bound to the caller and the workspace in the database and to the browser by
 * a cookie, single use, 10 minutes) and PKCE S256 (RFC 7636); 400 (workspaceId); 401; 403/404 (a
 * workspace the caller is not in); 404; 409 conflict (the integration does not use OAuth, is not enabled
 * in the workspace, or has no OAuth app there). The connection made is for workspaceId (the caller's
 * personal workspace without it) and no other (issue 25 item 5).
 */
enum svc_err svc_api_integrations_connect(struct svc_req *req, struct svc_resp *resp)
{
	const char *id = svc_req_param(req, "integration");
	struct svc_rows *rows = NULL, *app = NULL, *def = NULL;
	char wid[37], state[65], verifier[65], challenge[48], hash[65], row[160], redirect[1100], *sealed = NULL;
	struct svc_buf url;
	struct svc_dbv p[6];
	const char *authorize, *scope;
	int err;

	svc_buf_init(&url, 8192);
	if ((err = caller_workspace(req, resp, wid)) < 0)
		return err;
	if (!*wid)
		return svc_resp_error(resp, SVC_E_VALIDATION, "workspaceId", "workspaceId: the workspace to connect for");
	if ((err = integ_load(req, id, wid, &rows)) < 0)
		return err;
	if (!svc_integ_list_has(svc_rows_get(rows, 0, ICOL_AUTH_TYPES), "oauth2")) {
		err = svc_resp_error(resp, SVC_E_CONFLICT, NULL, "%s does not use OAuth.", id);
		goto done;
	}
	if (!cell_true(rows, 0, ICOL_ENABLED)) {
		err = svc_resp_error(resp, SVC_E_CONFLICT, NULL, "%s is not enabled in this workspace.", id);
		goto done;
	}
	p[0] = svc_dbv_str(id);
	p[1] = svc_dbv_str(wid);
	if ((err = svc_db_run(req->ctx->db, STMT_INTEG_APP_FOR, p, 2, &app, NULL)) < 0 ||
	    (err = svc_db_run(req->ctx->db, STMT_INTEG_DEF, p, 1, &def, NULL)) < 0)
		goto done;
	authorize = def && def->nrows == 1 ? svc_rows_get(def, 0, IDCOL_AUTHORIZE_URL) : NULL;
	if (!app || app->nrows != 1 || !authorize) {
		err = svc_resp_error(resp, SVC_E_CONFLICT, NULL, "No OAuth app is configured for %s.", id);
		goto done;
	}
	scope = svc_rows_get(def, 0, IDCOL_SCOPE);
	if ((err = svc_random_hex(state, 32)) < 0 || (err = svc_random_hex(verifier, 32)) < 0 ||
	    (err = svc_sha256_hex(state, strlen(state), hash)) < 0 ||
	    (err = svc_integ_redirect_uri(&req->ctx->cfg, redirect, sizeof redirect)) < 0)
		goto done;
	svc_oauth_pkce_challenge(verifier, challenge);
	state_row(hash, req->user_id, row, sizeof row);
	if ((err = svc_crypto_seal_secret(req->ctx->db, &req->ctx->cfg, NULL, "integration_oauth_states", "verifier", row,
					  verifier, strlen(verifier), &sealed)) < 0)
		goto done;
	svc_db_run(req->ctx->db, STMT_INTEG_STATE_PURGE, NULL, 0, NULL, NULL);
	p[0] = svc_dbv_str(hash);
	p[1] = svc_dbv_str(req->user_id);
	p[2] = svc_dbv_str(wid);
	p[3] = svc_dbv_str(id);
	p[4] = svc_dbv_str(svc_rows_get(app, 0, IACOL_ID));
	p[5] = svc_dbv_str(sealed);
	if ((err = svc_db_run(req->ctx->db, STMT_INTEG_STATE_INSERT, p, 6, NULL, NULL)) < 0)
		goto done;
	if ((err = svc_buf_adds(&url, authorize)) < 0 || (err = svc_buf_adds(&url, strchr(authorize, '?') ? "&" : "?")) < 0 ||
	    (err = svc_integ_url_param(&url, "response_type", "code")) < 0 || (err = svc_buf_adds(&url, "&")) < 0 ||
	    (err = svc_integ_url_param(&url, "client_id", svc_rows_get(app, 0, IACOL_CLIENT_ID))) < 0 ||
	    (err = svc_buf_adds(&url, "&")) < 0 || (err = svc_integ_url_param(&url, "redirect_uri", redirect)) < 0 ||
	    (scope && *scope && ((err = svc_buf_adds(&url, "&")) < 0 || (err = svc_integ_url_param(&url, "scope", scope)) < 0)) ||
	    (err = svc_buf_adds(&url, "&")) < 0 || (err = svc_integ_url_param(&url, "state", state)) < 0 ||
	    (err = svc_buf_adds(&url, "&")) < 0 || (err = svc_integ_url_param(&url, "code_challenge", challenge)) < 0 ||
	    (err = svc_buf_adds(&url, "&code_challenge_method=S256")) < 0)
		goto done;
	if ((err = svc_resp_cookie(resp, STATE_COOKIE, state, STATE_COOKIE_PATH, STATE_TTL_SECS)) < 0 ||
	    (err = svc_resp_header(resp, "Location", svc_buf_str(&url))) < 0 ||
	    (err = svc_resp_header(resp, "Cache-Control", "no-store")) < 0)
		goto done;
	resp->status = 302;
	err = 0;
done:
	OPENSSL_cleanse(verifier, sizeof verifier);
	free(sealed);
	svc_buf_dispose(&url);
	svc_rows_free(rows);
	svc_rows_free(app);
	svc_rows_free(def);
	return err;
}

/* Ends the callback: 302 to {app_url}/integrations?connected=ID or ?error=CODE&integration=ID, and clears the state cookie. */
static int callback_done(struct svc_req *req, struct svc_resp *resp, const char *integration, const char *error)
{
	struct svc_buf url;
	int err;

	svc_buf_init(&url, 4096);
	err = svc_buf_addf(&url, "%s/integrations?", req->ctx->cfg.app_url);
	if (err == 0 && error)
		err = svc_integ_url_param(&url, "error", error);
	if (err == 0 && integration && *integration) {
		if (error)
			err = svc_buf_adds(&url, "&");
		if (err == 0)
			err = svc_integ_url_param(&url, error ? "integration" : "connected", integration);
	}
	if (err == 0)
		err = svc_resp_cookie(resp, STATE_COOKIE, "", STATE_COOKIE_PATH, 0);
	if (err == 0)
		err = svc_resp_header(resp, "Location", svc_buf_str(&url));
	if (err == 0)
		err = svc_resp_header(resp, "Cache-Control", "no-store");
	svc_buf_dispose(&url);
	if (err == 0)
		resp->status = 302;
	return err;
}

/* Reads and deletes an OAuth state, a transaction of svc_db_tx(): its row (or none) into `rows`. */
struct state_taking {
	const char *hash;
	struct svc_rows *rows;
};

static int state_take(struct svc_db *db, void *arg)
{
	struct state_taking *t = arg;
	struct svc_dbv p = svc_dbv_str(t->hash);
	int err;

	svc_rows_free(t->rows); /* anew on each run */
	t->rows = NULL;
	if ((err = svc_db_run(db, STMT_INTEG_STATE_TAKE, &p, 1, &t->rows, NULL)) < 0)
		return err;
	return svc_db_run(db, STMT_INTEG_STATE_DELETE, &p, 1, NULL, NULL);
}

/*
 * GET /integrations/oauth/callback?code&state (or ?error&state): the redirect address of integration
 * OAuth apps. Always 302 to the web app's /integrations page: ?connected=ID when the code was exchanged
 * and the user's token stored sealed, else ?error= invalid_state (no such state, used, expired, or not
 * this browser's), wrong_user (another user is signed in here), access_denied (the provider said no),
 * not_configured (the app was deleted meanwhile, or its secret does not open with this server's
 * ENCRYPTION_KEY), exchange_failed (the token endpoint refused).
 */
enum svc_err svc_api_integrations_callback(struct svc_req *req, struct svc_resp *resp)
{
	char state[130], cookie[130], code[2100], perr[64], hash[65], row[160], user[37] = "", signed_in[37] = "";
	char integ[SVC_INTEG_ID_MAX + 1] = "", wid[37] = "";
	struct svc_rows *st = NULL, *app = NULL, *def = NULL;
	struct json_object *details = NULL;
	struct svc_integ_app opened;
	char *verifier = NULL;
	size_t verifier_len = 0;
	struct state_taking take;
	struct svc_dbv p;
	int err, has_code, has_error;

	memset(&opened, 0, sizeof opened);
	if (svc_req_query(req, "state", state, sizeof state) != 1 || svc_req_cookie(req, STATE_COOKIE, cookie, sizeof cookie) != 1 ||
	    !svc_secret_equal(state, strlen(state), cookie, strlen(cookie)))
		return callback_done(req, resp, NULL, "invalid_state");
	if ((err = svc_sha256_hex(state, strlen(state), hash)) < 0)
		return err;
	/* take the state: single use even when what follows fails */
	take.hash = hash;
	take.rows = NULL;
	err = svc_db_tx(req->ctx->db, state_take, &take);
	st = take.rows;
	if (err < 0)
		goto done;
	if (!st || st->nrows != 1 || !cell_true(st, 0, ISTCOL_LIVE)) {
		err = callback_done(req, resp, NULL, "invalid_state");
		goto done;
	}
	snprintf(user, sizeof user, "%s", svc_rows_get(st, 0, ISTCOL_USER));
	snprintf(integ, sizeof integ, "%s", svc_rows_get(st, 0, ISTCOL_INTEGRATION));
	if (svc_rows_get(st, 0, ISTCOL_WORKSPACE)) {
		snprintf(wid, sizeof wid, "%s", svc_rows_get(st, 0, ISTCOL_WORKSPACE));
	} else { /* a connect started before migration 019: for the personal workspace, as it was then */
		struct svc_rows *ws = NULL;
		p = svc_dbv_str(user);
		if ((err = svc_db_run(req->ctx->db, STMT_USER_WORKSPACES, &p, 1, &ws, NULL)) < 0)
			goto done;
		if (ws && ws->nrows > 0)
			snprintf(wid, sizeof wid, "%s", svc_rows_get(ws, 0, UWCOL_ID));
		svc_rows_free(ws);
		if (!*wid) {
			err = callback_done(req, resp, integ, "invalid_state");
			goto done;
		}
	}
	/* an expired session is no reason to fail (the state and the cookie bind the flow); another user is */
	if (svc_req_authenticate(req, signed_in) == 0 && strcmp(signed_in, user) != 0) {
		err = callback_done(req, resp, integ, "wrong_user");
		goto done;
	}
	has_error = svc_req_query(req, "error", perr, sizeof perr) != 0;
	has_code = svc_req_query(req, "code", code, sizeof code) == 1 && *code;
	if (has_error || !has_code) {
		err = callback_done(req, resp, integ, "access_denied");
		goto done;
	}
	p = svc_dbv_str(svc_rows_get(st, 0, ISTCOL_APP));
	if ((err = svc_db_run(req->ctx->db, STMT_INTEG_APP_GET, &p, 1, &app, NULL)) < 0)
		goto done;
	p = svc_dbv_str(integ);
	if ((err = svc_db_run(req->ctx->db, STMT_INTEG_DEF, &p, 1, &def, NULL)) < 0)
		goto done;
	if (!app || app->nrows != 1 || !def || def->nrows != 1 || !svc_rows_get(def, 0, IDCOL_TOKEN_URL)) {
		err = callback_done(req, resp, integ, "not_configured");
		goto done;
	}
	state_row(hash, user, row, sizeof row);
	/* a browser is waiting: a secret that does not open (no or another ENCRYPTION_KEY) ends on the page too */
	if ((err = svc_integ_app_open(req->ctx->db, &req->ctx->cfg, app, 0, &opened)) < 0) {
		if (err == SVC_E_VALIDATION || err == SVC_E_UNAVAILABLE)
			err = callback_done(req, resp, integ, "not_configured");
		goto done;
	}
	if ((err = svc_crypto_open_secret(req->ctx->db, &req->ctx->cfg, NULL, "integration_oauth_states", "verifier", row,
					  svc_rows_get(st, 0, ISTCOL_VERIFIER), &verifier, &verifier_len)) < 0) {
		if (err == SVC_E_VALIDATION || err == SVC_E_UNAVAILABLE)
			err = callback_done(req, resp, integ, "invalid_state");
		goto done;
	}
	err = svc_integ_token_grant(req->ctx->db, &req->ctx->cfg, svc_rows_get(def, 0, IDCOL_TOKEN_URL), &opened, user,
				    wid, integ, code, verifier, NULL);
	if (err == SVC_E_UNAUTHORIZED || err == SVC_E_UNAVAILABLE) {
		err = callback_done(req, resp, integ, "exchange_failed");
		goto done;
	}
	if (err < 0)
		goto done;
	svc_log_info("integrations: user %s connected %s for workspace %s", user, integ, wid);
	/* the admin audit log (issue 25 item 10): who, what, for which workspace; never a token */
	details = json_object_new_object();
	svc_json_add_str(details, "workspaceId", wid);
	svc_json_add_str(details, "userId", user);
	if (svc_integ_audit(req->ctx->db, "integrations.connection.create", integ, details, user) < 0)
		svc_log_error("integrations: the connection of user %s to %s was not audited", user, integ);
	err = callback_done(req, resp, integ, NULL);
done:
	json_object_put(details);
	svc_crypto_free_secret(verifier, verifier_len);
	svc_integ_app_dispose(&opened);
	OPENSSL_cleanse(code, sizeof code);
	svc_rows_free(st);
	svc_rows_free(app);
	svc_rows_free(def);
	return err;
}

/*
 * GET /integrations/:integration/connection?workspaceId: 200 {integrationId, workspaceId, connected, scope,
 * expiresAt, updatedAt} of the caller's connection for workspaceId (the personal workspace without it), refreshing the user's token first when it expires within a minute (through the
 * workspace's OAuth app or the global one); 401; 404 (unknown integration, or no connection); 409
 * conflict (the token expired and the refresh was refused: connect again).
 */
enum svc_err svc_api_integrations_connection_get(struct svc_req *req, struct svc_resp *resp)
{
	const char *id = svc_req_param(req, "integration");
	struct svc_integ_cred cred;
	struct svc_rows *rows = NULL;
	struct json_object *o;
	struct svc_dbv p[3];
	char wid[37];
	int err;

	memset(&cred, 0, sizeof cred);
	if ((err = caller_workspace(req, resp, wid)) < 0)
		return err;
	if (!svc_integ_id_valid(id))
		return SVC_E_NOT_FOUND;
	p[0] = svc_dbv_str(req->user_id);
	p[1] = svc_dbv_str(wid);
	p[2] = svc_dbv_str(id);
	if ((err = svc_db_run(req->ctx->db, STMT_INTEG_CONN_GET, p, 3, &rows, NULL)) < 0)
		return err;
	if (!rows || rows->nrows != 1) {
		err = SVC_E_NOT_FOUND;
		goto done;
	}
	err = svc_integ_credential(req->ctx->db, &req->ctx->cfg, req->user_id, id, wid, &cred);
	svc_integ_cred_dispose(&cred);
	if (err == SVC_E_UNAUTHORIZED || err == SVC_E_UNAVAILABLE) {
		err = svc_resp_error(resp, SVC_E_CONFLICT, NULL, "The connection to %s expired; connect again.", id);
		goto done;
	}
	if (err < 0)
		goto done;
	svc_rows_free(rows);
	rows = NULL;
	if ((err = svc_db_run(req->ctx->db, STMT_INTEG_CONN_GET, p, 3, &rows, NULL)) < 0)
		goto done;
	if (!rows || rows->nrows != 1) {
		err = SVC_E_NOT_FOUND;
		goto done;
	}
	o = json_object_new_object();
	svc_json_add_str(o, "integrationId", id);
	svc_json_add_str(o, "workspaceId", wid);
	json_object_object_add(o, "connected", json_object_new_boolean(1));
	svc_json_add_str(o, "scope", svc_rows_get(rows, 0, ICNCOL_SCOPE));
	svc_json_add_time(o, "expiresAt", svc_rows_get(rows, 0, ICNCOL_EXPIRES));
	svc_json_add_time(o, "createdAt", svc_rows_get(rows, 0, ICNCOL_CREATED));
	svc_json_add_time(o, "updatedAt", svc_rows_get(rows, 0, ICNCOL_UPDATED));
	err = svc_resp_json(resp, 200, o);
done:
	svc_rows_free(rows);
	return err;
}

/*
 * DELETE /integrations/:integration/connection?workspaceId: 204 (the caller's token for workspaceId, the
 * personal workspace without it, is gone; their connections for other workspaces stay); 400 (workspaceId);
 * 401; 403/404 (a workspace the caller is not in); 404 (none). Recorded in the admin audit log as
 * integrations.connection.delete, details {workspaceId, userId}.
 */
enum svc_err svc_api_integrations_connection_delete(struct svc_req *req, struct svc_resp *resp)
{
	const char *id = svc_req_param(req, "integration");
	struct json_object *details;
	struct svc_dbv p[3];
	char wid[37];
	int err;

	if ((err = caller_workspace(req, resp, wid)) < 0)
		return err;
	if (!svc_integ_id_valid(id) || !*wid)
		return SVC_E_NOT_FOUND;
	p[0] = svc_dbv_str(req->user_id);
	p[1] = svc_dbv_str(wid);
	p[2] = svc_dbv_str(id);
	details = json_object_new_object();
	svc_json_add_str(details, "workspaceId", wid);
	svc_json_add_str(details, "userId", req->user_id);
	err = svc_api_integrations__audited(req, STMT_INTEG_CONN_DELETE, p, 3, 1, "integrations.connection.delete", id,
					    details, NULL);
	json_object_put(details);
	if (err < 0)
		return err;
	svc_log_info("integrations: user %s disconnected %s for workspace %s", req->user_id, id, wid);
	resp->status = 204;
	return 0;
}
