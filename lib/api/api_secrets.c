/* api_secrets.c: a project's server-side secrets for its app's calls (/projects/:id/secrets...): set, replace, list names, delete; sealed, audited, never returned (docs/api.md "The apps' secrets"). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "api/api_integrations.h"
#include "auth/crypto.h"
#include "core/err.h"
#include "core/json.h"
#include "project/app_fetch_decl.h"

/*
 * Loads project :id for `action` (SVC_ACT_SECRETS_READ or _WRITE): one who may not list its secrets (not
 * a member: a public project's viewers too) learns nothing of them (404); a member who may list but not
 * change them gets 403. The project's workspace into wid (37 bytes).
 */
static int secrets_open(struct svc_req *req, enum svc_action action, char *wid)
{
	const struct svc_caller *c = svc_req_caller(req);
	struct svc_rows *rows = NULL;
	int err;

	if ((err = svc_project_load(c, svc_req_param(req, "id"), SVC_ACT_SECRETS_READ, &rows)) < 0)
		return err == SVC_E_FORBIDDEN ? SVC_E_NOT_FOUND : err;
	if (action != SVC_ACT_SECRETS_READ)
		err = svc_project_check(c, rows, action);
	if (err == 0)
		snprintf(wid, 37, "%s", svc_rows_get(rows, 0, PCOL_WORKSPACE));
	svc_rows_free(rows);
	return err;
}

/* Row `r` of a STMT_SECRET_LIST / _GET answer: {name, bytes, updatedAt, updatedBy: {id, email, name} | null}. */
static struct json_object *secret_json(const struct svc_rows *rows, size_t r)
{
	struct json_object *o = json_object_new_object(), *by = NULL;
	uint64_t bytes = 0;

	svc_json_add_str(o, "name", svc_rows_get(rows, r, SECOL_NAME));
	svc_parse_u64(svc_rows_get(rows, r, SECOL_BYTES), UINT64_MAX, &bytes);
	json_object_object_add(o, "bytes", json_object_new_int64((int64_t)bytes));
	svc_json_add_time(o, "updatedAt", svc_rows_get(rows, r, SECOL_UPDATED));
	if (svc_rows_get(rows, r, SECOL_BY)) {
		by = json_object_new_object();
		svc_json_add_str(by, "id", svc_rows_get(rows, r, SECOL_BY));
		svc_json_add_str(by, "email", svc_rows_get(rows, r, SECOL_BY_EMAIL));
		svc_json_add_str(by, "name", svc_rows_get(rows, r, SECOL_BY_NAME));
	}
	json_object_object_add(o, "updatedBy", by);
	return o;
}

/* GET /projects/:id/secrets: 200 {secrets: [{name, bytes, updatedAt, updatedBy}]} by name, never a value; 401; 404. */
enum svc_err svc_api_secrets_list(struct svc_req *req, struct svc_resp *resp)
{
	struct svc_dbv p = svc_dbv_str(svc_req_param(req, "id"));
	struct svc_rows *rows = NULL;
	struct json_object *body, *list;
	char wid[37];
	size_t r;
	int err;

	if ((err = secrets_open(req, SVC_ACT_SECRETS_READ, wid)) < 0)
		return err;
	if ((err = svc_db_run(req->ctx->db, STMT_SECRET_LIST, &p, 1, &rows, NULL)) < 0)
		return err;
	body = json_object_new_object();
	list = json_object_new_array();
	for (r = 0; rows && r < rows->nrows; r++)
		json_object_array_add(list, secret_json(rows, r));
	json_object_object_add(body, "secrets", list);
	svc_rows_free(rows);
	return svc_resp_json(resp, 200, body);
}

static const struct svc_field put_fields[] = {
	{ "value", SVC_V_STR, SVC_F_REQUIRED, 0, 0, NULL },
};
const struct svc_body svc_api_secrets_put_body = SVC_BODY(put_fields);

/* The audit entry's details of a change to secret `name` of project `id`: names only, never the value. */
static struct json_object *audit_details(const char *id, const char *name, const char *wid)
{
	struct json_object *d = json_object_new_object();

	svc_json_add_str(d, "projectId", id);
	svc_json_add_str(d, "workspaceId", wid);
	svc_json_add_str(d, "name", name);
	return d;
}

/* 400 for a name that is not a secret's name (the :name of the path). */
static int name_check(struct svc_resp *resp, const char *name)
{
	if (!name || !svc_app_secret_name_valid(name))
		return svc_resp_error(resp, SVC_E_VALIDATION, "name",
				      "A secret's name is 1 to %d letters, digits and _, not starting with a digit.",
				      SVC_APP_SECRET_NAME_MAX);
	return 0;
}

/*
 * PUT /projects/:id/secrets/:name {value}: 201 {secret} new, 200 {secret} replaced (sealed with ENCRYPTION_KEY
 * or the workspace's data key; audited "project.secret.set"); 400 name, value (length, control characters);
 * 401; 403 (a member, not an admin); 404; 413 (more than SVC_APP_MAX_SECRETS); 503 (no ENCRYPTION_KEY).
 */
enum svc_err svc_api_secrets_put(struct svc_req *req, struct svc_resp *resp)
{
	const char *id = svc_req_param(req, "id"), *name = svc_req_param(req, "name");
	const char *value = svc_json_str(req->json, "value");
	struct json_object *details = NULL, *vo = NULL;
	struct svc_rows *rows = NULL;
	struct svc_dbv p[6];
	char wid[37], msg[200], label[37 + 1 + SVC_APP_SECRET_NAME_MAX + 1], *sealed = NULL;
	uint64_t affected = 0;
	size_t len;
	int err;

	if ((err = secrets_open(req, SVC_ACT_SECRETS_WRITE, wid)) < 0 || (err = name_check(resp, name)) < 0)
		return err;
	json_object_object_get_ex(req->json, "value", &vo);
	len = vo ? (size_t)json_object_get_string_len(vo) : 0;
	if (!value || svc_app_secret_value_check(value, len, msg, sizeof msg) < 0)
		return svc_resp_error(resp, SVC_E_VALIDATION, "value", "%s", value ? msg : "value must be a string");
	p[0] = svc_dbv_str(id);
	p[1] = svc_dbv_str(name);
	if ((err = svc_db_run(req->ctx->db, STMT_SECRET_LIST, p, 1, &rows, NULL)) < 0)
		return err;
	if (rows && rows->nrows >= SVC_APP_MAX_SECRETS) {
		size_t r;
		for (r = 0; r < rows->nrows && strcmp(svc_rows_get(rows, r, SECOL_NAME), name) != 0; r++)
			;
		if (r == rows->nrows)
			err = svc_resp_error(resp, SVC_E_TOO_LARGE, NULL, "A project holds at most %d secrets.",
					     SVC_APP_MAX_SECRETS);
	}
	svc_rows_free(rows);
	rows = NULL;
	if (err < 0)
		return err;
	snprintf(label, sizeof label, "%s:%s", id, name);
	if ((err = svc_crypto_seal_secret(req->ctx->db, &req->ctx->cfg, wid, "project_secrets", "value_sealed", label,
					  value, len, &sealed)) < 0)
		return err == SVC_E_UNAVAILABLE
			       ? svc_resp_error(resp, err, NULL, "Secrets cannot be kept: ENCRYPTION_KEY is not set.")
			       : err;
	p[2] = svc_dbv_str(sealed);
	p[3] = svc_dbv_i64((int64_t)len);
	p[4] = svc_dbv_str(req->user_id);
	p[5] = svc_dbv_str(req->user_id);
	details = audit_details(id, name, wid);
	err = svc_api_integrations__audited(req, STMT_SECRET_PUT, p, 6, 0, "project.secret.set", id, details, &affected);
	json_object_put(details);
	free(sealed);
	if (err < 0)
		return err;
	if ((err = svc_db_run(req->ctx->db, STMT_SECRET_GET, p, 2, &rows, NULL)) < 0)
		return err;
	if (!rows || rows->nrows != 1) {
		svc_rows_free(rows);
		return SVC_E_NOT_FOUND; /* deleted meanwhile */
	}
	details = json_object_new_object();
	json_object_object_add(details, "secret", secret_json(rows, 0));
	svc_rows_free(rows);
	return svc_resp_json(resp, affected == 1 ? 201 : 200, details);
}

/* DELETE /projects/:id/secrets/:name: 204 (audited "project.secret.delete"); 400 name; 401; 403; 404 (also no such secret). */
enum svc_err svc_api_secrets_delete(struct svc_req *req, struct svc_resp *resp)
{
	const char *id = svc_req_param(req, "id"), *name = svc_req_param(req, "name");
	struct json_object *details;
	struct svc_dbv p[2];
	char wid[37];
	int err;

	if ((err = secrets_open(req, SVC_ACT_SECRETS_WRITE, wid)) < 0 || (err = name_check(resp, name)) < 0)
		return err;
	p[0] = svc_dbv_str(id);
	p[1] = svc_dbv_str(name);
	details = audit_details(id, name, wid);
	err = svc_api_integrations__audited(req, STMT_SECRET_DELETE, p, 2, 1, "project.secret.delete", id, details, NULL);
	json_object_put(details);
	if (err == SVC_E_NOT_FOUND)
		return svc_resp_error(resp, err, NULL, "The project has no secret %s.", name);
	if (err < 0)
		return err;
	resp->status = 204;
	return 0;
}
