/* api_backend.c: the apps' backend of a project as its builders see it (/projects/:id/backend...): counts, records, end users, emptying the test data. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "api/api.h"
#include "app/app.h"
#include "app/app_files.h"
#include "core/err.h"
#include "core/json.h"
#include "core/log.h"
#include "project/paths.h"

static const char *const envs[] = { "test", "live" };

/* Loads the project for `action` (SVC_ACT_BACKEND_READ, SVC_ACT_WRITE, SVC_ACT_BACKEND_CHANGE): one who may not
 * read the project gets what GET /projects/:id gives them; a public project's viewer who is no member 404, learning
 * nothing of its backend; a member who may read but not this 403; the :env parameter, when there is one, test or
 * live. */
static int backend_open(struct svc_req *req, struct svc_resp *resp, enum svc_action action, const char **out_env)
{
	const char *env = svc_req_param(req, "env");
	struct svc_rows *rows = NULL;
	int err;

	if ((err = svc_project_load(svc_req_caller(req), svc_req_param(req, "id"), action, &rows)) == SVC_E_FORBIDDEN) {
		int member = action == SVC_ACT_BACKEND_READ ? err :
			     svc_project_load(svc_req_caller(req), svc_req_param(req, "id"), SVC_ACT_BACKEND_READ, &rows);
		svc_rows_free(rows);
		rows = NULL;
		if (member == 0)
			return err;
		if ((err = svc_project_load(svc_req_caller(req), svc_req_param(req, "id"), SVC_ACT_READ, &rows)) < 0)
			return err;
		svc_rows_free(rows);
		return svc_resp_error(resp, SVC_E_NOT_FOUND, NULL, "No such project.");
	}
	if (err < 0)
		return err;
	svc_rows_free(rows);
	if (out_env) {
		if (!env || (strcmp(env, envs[0]) != 0 && strcmp(env, envs[1]) != 0))
			return svc_resp_error(resp, SVC_E_NOT_FOUND, NULL, "The environments are test and live.");
		*out_env = env;
	}
	return 0;
}

/* {test: n, live: n} */
static struct json_object *per_env(int64_t test, int64_t live)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, envs[0], json_object_new_int64(test));
	json_object_object_add(o, envs[1], json_object_new_int64(live));
	return o;
}

/* The "usage" and "quotas" of the summary from STMT_APP_USAGE_GET's rows. */
static void add_usage(struct json_object *body, const struct svc_config *cfg, const struct svc_rows *rows)
{
	static const char *const keys[3] = { "records", "bytes", "users" };
	static const size_t cols[3] = { AUGCOL_RECORDS, AUGCOL_BYTES, AUGCOL_USERS };
	struct json_object *usage = json_object_new_object(), *quotas = json_object_new_object();
	size_t e, i, r;

	for (e = 0; e < 2; e++) {
		struct json_object *u = json_object_new_object();
		for (i = 0; i < 3; i++) {
			uint64_t v = 0;
			for (r = 0; rows && r < rows->nrows; r++)
				if (strcmp(svc_rows_get(rows, r, AUGCOL_ENV), envs[e]) == 0)
					svc_parse_u64(svc_rows_get(rows, r, cols[i]), UINT64_MAX, &v);
			json_object_object_add(u, keys[i], json_object_new_int64((int64_t)v));
		}
		json_object_object_add(usage, envs[e], u);
	}
	json_object_object_add(quotas, "records", json_object_new_int64((int64_t)cfg->app_max_records));
	json_object_object_add(quotas, "bytes", json_object_new_int64((int64_t)cfg->app_max_bytes));
	json_object_object_add(quotas, "users", json_object_new_int64((int64_t)cfg->app_max_users));
	json_object_object_add(body, "usage", usage);
	json_object_object_add(body, "quotas", quotas);
}

/* The "secrets" of the summary: the names of the project's secrets (STMT_SECRET_LIST, by name), never a value. */
static int add_secret_names(struct svc_db *db, const char *project_id, struct json_object *body)
{
	struct svc_rows *rows = NULL;
	struct svc_dbv p = svc_dbv_str(project_id);
	struct json_object *names;
	size_t r;
	int err;

	if ((err = svc_db_run(db, STMT_SECRET_LIST, &p, 1, &rows, NULL)) < 0)
		return err;
	names = json_object_new_array();
	for (r = 0; rows && r < rows->nrows; r++)
		json_object_array_add(names, json_object_new_string(svc_rows_get(rows, r, SECOL_NAME)));
	json_object_object_add(body, "secrets", names);
	svc_rows_free(rows);
	return 0;
}

/*
 * GET /projects/:id/backend: 200 {collections: [{name, fields, rules, records: {test, live}}], usage: {test,
 * live: {records, bytes, users}}, quotas: {records, bytes, users}, secrets: [name]}; 401; 403 (not a member: a
 * public project's viewers see nothing of it); 404.
 */
enum svc_err svc_api_backend_get(struct svc_req *req, struct svc_resp *resp)
{
	const char *id = svc_req_param(req, "id");
	struct svc_app_decl *decl = NULL;
	struct svc_rows *counts = NULL, *usage = NULL;
	struct json_object *body, *cols;
	struct svc_dbv p;
	char dir[2048];
	size_t i, r, f, op;
	int err;

	if ((err = backend_open(req, resp, SVC_ACT_BACKEND_READ, NULL)) < 0)
		return err;
	p = svc_dbv_str(id);
	if ((err = svc_project_dir(&req->ctx->cfg, id, dir, sizeof dir)) < 0 ||
	    (err = svc_app_decl_load(req->ctx->db, id, dir, &decl)) < 0 ||
	    (err = svc_db_run(req->ctx->db, STMT_APP_COUNTS, &p, 1, &counts, NULL)) < 0 ||
	    (err = svc_db_run(req->ctx->db, STMT_APP_USAGE_GET, &p, 1, &usage, NULL)) < 0)
		goto done;
	body = json_object_new_object();
	cols = json_object_new_array();
	for (i = 0; decl && i < decl->ncollections; i++) {
		const struct svc_app_collection *c = &decl->collections[i];
		struct json_object *o = json_object_new_object(), *fields = json_object_new_object(),
				   *rules = json_object_new_object();
		int64_t n[2] = { 0, 0 };
		for (r = 0; counts && r < counts->nrows; r++) {
			uint64_t v = 0;
			if (strcmp(svc_rows_get(counts, r, ACCOL_COLLECTION), c->name) != 0)
				continue;
			svc_parse_u64(svc_rows_get(counts, r, ACCOL_COUNT), UINT64_MAX, &v);
			n[strcmp(svc_rows_get(counts, r, ACCOL_ENV), envs[1]) == 0] = (int64_t)v;
		}
		for (f = 0; f < c->nfields; f++)
			json_object_object_add(fields, c->fields[f].name, json_object_new_string(svc_app_ftype_name(c->fields[f].type)));
		for (op = 0; op < SVC_APP_OP__MAX; op++) {
			static const char *const ops[SVC_APP_OP__MAX] = { "list", "get", "create", "update", "delete" };
			json_object_object_add(rules, ops[op], json_object_new_string(svc_app_rule_name(c->rules[op])));
		}
		json_object_object_add(o, "name", json_object_new_string(c->name));
		json_object_object_add(o, "fields", fields);
		json_object_object_add(o, "rules", rules);
		json_object_object_add(o, "records", per_env(n[0], n[1]));
		json_object_array_add(cols, o);
	}
	json_object_object_add(body, "collections", cols);
	add_usage(body, &req->ctx->cfg, usage);
	if ((err = svc_app_files_summary(req->ctx->db, &req->ctx->cfg, id, body)) < 0 || /* appfiles */
	    (err = add_secret_names(req->ctx->db, id, body)) < 0) {
		json_object_put(body);
		goto done;
	}
	err = svc_resp_json(resp, 200, body);
done:
	svc_rows_free(counts);
	svc_rows_free(usage);
	svc_app_decl_free(decl);
	return err;
}

/*
 * GET /projects/:id/backend/:env/data/:collection?cursor=&limit=: 200 {items, nextCursor}, every end user's
 * records, oldest first; 400 cursor, limit; 401; 403; 404 (also an :env other than test and live).
 */
enum svc_err svc_api_backend_records(struct svc_req *req, struct svc_resp *resp)
{
	char cursor[200] = "", limit_s[24];
	uint64_t limit = 50;
	struct json_object *body = NULL;
	const char *env;
	int err, has;

	if ((err = backend_open(req, resp, SVC_ACT_BACKEND_READ, &env)) < 0)
		return err;
	if ((has = svc_req_query(req, "limit", limit_s, sizeof limit_s)) < 0 ||
	    (has && (svc_parse_u64(limit_s, 100, &limit) < 0 || limit == 0)))
		return svc_resp_error(resp, SVC_E_VALIDATION, "limit", "limit is from 1 to 100");
	if (svc_req_query(req, "cursor", cursor, sizeof cursor) < 0 ||
	    (err = svc_app_records_page(req->ctx->db, svc_req_param(req, "id"), env, svc_req_param(req, "collection"),
					cursor, limit, &body)) == SVC_E_VALIDATION)
		return svc_resp_error(resp, SVC_E_VALIDATION, "cursor", "cursor is the nextCursor of a page of this list");
	if (err < 0)
		return err;
	return svc_resp_json(resp, 200, body);
}

/* {id, email, disabled, createdAt} of row `r` of AULCOL_* rows. */
static struct json_object *end_user_json(const struct svc_rows *rows, size_t r)
{
	struct json_object *u = json_object_new_object();

	svc_json_add_str(u, "id", svc_rows_get(rows, r, AULCOL_ID));
	svc_json_add_str(u, "email", svc_rows_get(rows, r, AULCOL_EMAIL));
	json_object_object_add(u, "disabled", json_object_new_boolean(strcmp(svc_rows_get(rows, r, AULCOL_DISABLED), "0") != 0));
	svc_json_add_time(u, "createdAt", svc_rows_get(rows, r, AULCOL_CREATED));
	return u;
}

/* GET /projects/:id/backend/:env/users: 200 {items: [{id, email, disabled, createdAt}]} (the first 1000); 401; 403; 404. */
enum svc_err svc_api_backend_users(struct svc_req *req, struct svc_resp *resp)
{
	struct svc_rows *rows = NULL;
	struct json_object *body, *items;
	struct svc_dbv p[2];
	const char *env;
	size_t i;
	int err;

	if ((err = backend_open(req, resp, SVC_ACT_BACKEND_READ, &env)) < 0)
		return err;
	p[0] = svc_dbv_str(svc_req_param(req, "id"));
	p[1] = svc_dbv_str(env);
	if ((err = svc_db_run(req->ctx->db, STMT_APP_USERS_LIST, p, 2, &rows, NULL)) < 0)
		return err;
	body = json_object_new_object();
	items = json_object_new_array();
	for (i = 0; rows && i < rows->nrows; i++)
		json_object_array_add(items, end_user_json(rows, i));
	json_object_object_add(body, "items", items);
	svc_rows_free(rows);
	return svc_resp_json(resp, 200, body);
}

/* An end user removed with their records, in one transaction: their counts leave app_usage. */
struct user_delete {
	const char *project_id, *env, *user_id;
	uint64_t deleted;
};

static int user_delete_tx(struct svc_db *db, void *arg)
{
	struct user_delete *u = arg;
	struct svc_rows *rows = NULL;
	struct svc_dbv p[5];
	uint64_t n = 0, bytes = 0;
	int err;

	p[0] = svc_dbv_str(u->project_id);
	p[1] = svc_dbv_str(u->env);
	p[2] = svc_dbv_str(u->user_id);
	if ((err = svc_db_run(db, STMT_APP_USER_DELETE, p, 3, NULL, &u->deleted)) < 0 || !u->deleted)
		return err;
	if ((err = svc_db_run(db, STMT_APP_USER_HOLDS, p, 3, &rows, NULL)) < 0)
		return err;
	svc_parse_u64(svc_rows_get(rows, 0, AUHCOL_RECORDS), UINT64_MAX, &n);
	svc_parse_u64(svc_rows_get(rows, 0, AUHCOL_BYTES), UINT64_MAX, &bytes);
	svc_rows_free(rows);
	if ((err = svc_db_run(db, STMT_APP_USER_INDEX_CLEAR, p, 3, NULL, NULL)) < 0 ||
	    (err = svc_db_run(db, STMT_APP_USER_RECORDS_CLEAR, p, 3, NULL, NULL)) < 0 ||
	    (err = svc_app_files_user_clear(db, u->project_id, u->env, u->user_id)) < 0)
		return err;
	p[0] = svc_dbv_i64(-(int64_t)n);
	p[1] = svc_dbv_i64(-(int64_t)bytes);
	p[2] = svc_dbv_i64(-1);
	p[3] = svc_dbv_str(u->project_id);
	p[4] = svc_dbv_str(u->env);
	return svc_db_run(db, STMT_APP_USAGE_MOVE, p, 5, NULL, NULL);
}

/* DELETE /projects/:id/backend/:env/users/:userId: 204, the end user, their sessions and their records gone; 401;
 * 403 (below workspace admin); 404 (no such end user in that environment). */
enum svc_err svc_api_backend_user_delete(struct svc_req *req, struct svc_resp *resp)
{
	struct user_delete u = { svc_req_param(req, "id"), NULL, svc_req_param(req, "userId"), 0 };
	int err;

	if ((err = backend_open(req, resp, SVC_ACT_BACKEND_CHANGE, &u.env)) < 0)
		return err;
	if ((err = svc_db_tx(req->ctx->db, user_delete_tx, &u)) < 0)
		return err;
	if (!u.deleted)
		return svc_resp_error(resp, SVC_E_NOT_FOUND, NULL, "No such end user.");
	svc_log_info("app: user %s deleted end user %s of project %s (%s)", req->user_id, u.user_id, u.project_id, u.env);
	resp->status = 204;
	return 0;
}

/* DELETE /projects/:id/backend/:env: 204, every end user, session and record of the test environment gone; 400 for
 * live (only the test data can be emptied); 401; 403; 404. */
enum svc_err svc_api_backend_empty(struct svc_req *req, struct svc_resp *resp)
{
	const char *env;
	struct svc_dbv p[2];
	int err;

	if ((err = backend_open(req, resp, SVC_ACT_WRITE, &env)) < 0)
		return err;
	if (strcmp(env, "test") != 0)
		return svc_resp_error(resp, SVC_E_VALIDATION, "env", "Only the test data can be emptied.");
	p[0] = svc_dbv_str(svc_req_param(req, "id"));
	p[1] = svc_dbv_str(env);
	{
		const struct svc_db_step steps[] = {
			{ STMT_APP_ENV_INDEX_CLEAR, p, 2, NULL }, { STMT_APP_ENV_RECORDS_CLEAR, p, 2, NULL },
			{ STMT_APP_ENV_USERS_CLEAR, p, 2, NULL }, { STMT_APP_ENV_FILES_CLEAR, p, 2, NULL },
			{ STMT_APP_ENV_USAGE_CLEAR, p, 2, NULL },
		};
		if ((err = svc_db_tx_steps(req->ctx->db, steps, sizeof steps / sizeof steps[0])) < 0)
			return err;
	}
	resp->status = 204;
	return 0;
}

/* ---- fixing records and end users, the export (issue 28 "For builders") ---- */

/* GET, PATCH or DELETE of one record as `op`: the project (for `action`), then svc_app_record_admin's answer. */
static int record_op(struct svc_req *req, struct svc_resp *resp, enum svc_action action, enum svc_app_op op, int status)
{
	static char field[SVC_APP_NAME_MAX + 1]; /* the router writes the error after this returns */
	struct svc_app_admin_op a = { .project_id = svc_req_param(req, "id"), .collection = svc_req_param(req, "collection"),
				      .id = svc_req_param(req, "recordId"), .op = op, .body = req->json };
	char dir[2048];
	int err;

	if ((err = backend_open(req, resp, action, &a.env)) < 0)
		return err;
	if ((err = svc_project_dir(&req->ctx->cfg, a.project_id, dir, sizeof dir)) < 0)
		return err;
	a.dir = dir;
	err = svc_app_record_admin(req->ctx->db, &req->ctx->cfg, &a);
	if (err == SVC_E_VALIDATION) {
		snprintf(field, sizeof field, "%s", a.field);
		return svc_resp_error(resp, err, field[0] ? field : NULL, "%s", a.msg);
	}
	if (err == SVC_E_NOT_FOUND || err == SVC_E_TOO_LARGE)
		return svc_resp_error(resp, err, NULL, "%s", a.msg);
	if (err < 0)
		return err;
	if (op != SVC_APP_GET)
		svc_log_info("app: user %s %s record %s of %s in project %s (%s)", req->user_id,
			     op == SVC_APP_UPDATE ? "changed" : "deleted", a.id, a.collection, a.project_id, a.env);
	if (a.record)
		return svc_resp_json(resp, status, a.record);
	resp->status = status;
	return 0;
}

/* GET /projects/:id/backend/:env/data/:collection/:recordId: 200 the record; 401; 404 (also not a member). */
enum svc_err svc_api_backend_record_get(struct svc_req *req, struct svc_resp *resp)
{
	return record_op(req, resp, SVC_ACT_BACKEND_READ, SVC_APP_GET, 200);
}

/* PATCH .../data/:collection/:recordId {fields}: 200 the record, validated as svc-app's PATCH; 400 (field); 403 (below
 * workspace admin); 404; 413 past a quota. */
enum svc_err svc_api_backend_record_update(struct svc_req *req, struct svc_resp *resp)
{
	return record_op(req, resp, SVC_ACT_BACKEND_CHANGE, SVC_APP_UPDATE, 200);
}

/* DELETE .../data/:collection/:recordId: 204; 403 (below workspace admin); 404. */
enum svc_err svc_api_backend_record_delete(struct svc_req *req, struct svc_resp *resp)
{
	return record_op(req, resp, SVC_ACT_BACKEND_CHANGE, SVC_APP_DELETE, 204);
}

static const struct svc_field user_update_fields[] = {
	{ "disabled", SVC_V_BOOL, SVC_F_REQUIRED, 0, 0, NULL },
};
const struct svc_body svc_api_backend_user_update_body = SVC_BODY(user_update_fields);

/* An end user disabled or enabled, in one transaction: a disabled one's sessions end with it. */
struct user_update {
	const char *project_id, *env, *user_id;
	int disabled;
	struct svc_rows *user; /* out: AULCOL_* as it was, NULL when there is no such end user */
};

static int user_update_tx(struct svc_db *db, void *arg)
{
	struct user_update *u = arg;
	struct svc_dbv p[4];
	int err;

	svc_rows_free(u->user);
	u->user = NULL;
	p[0] = svc_dbv_str(u->project_id);
	p[1] = svc_dbv_str(u->env);
	p[2] = svc_dbv_str(u->user_id);
	if ((err = svc_db_run(db, STMT_APP_USER_GET_FOR_UPDATE, p, 3, &u->user, NULL)) < 0)
		return err;
	if (!u->user || u->user->nrows != 1) {
		svc_rows_free(u->user);
		u->user = NULL;
		return 0;
	}
	p[0] = svc_dbv_i64(u->disabled);
	p[1] = svc_dbv_str(u->project_id);
	p[2] = svc_dbv_str(u->env);
	p[3] = svc_dbv_str(u->user_id);
	if ((err = svc_db_run(db, STMT_APP_USER_SET_DISABLED, p, 4, NULL, NULL)) < 0 || !u->disabled)
		return err;
	p[0] = svc_dbv_str(u->user_id);
	return svc_db_run(db, STMT_APP_USER_SESSIONS_END, p, 1, NULL, NULL);
}

/* PATCH /projects/:id/backend/:env/users/:userId {disabled}: 200 the end user; a disabled one cannot sign in and their
 * sessions end at once; 400 disabled; 401; 403 (below workspace admin); 404. */
enum svc_err svc_api_backend_user_update(struct svc_req *req, struct svc_resp *resp)
{
	struct user_update u = { svc_req_param(req, "id"), NULL, svc_req_param(req, "userId"), 0, NULL };
	struct json_object *v, *body;
	int err;

	if ((err = backend_open(req, resp, SVC_ACT_BACKEND_CHANGE, &u.env)) < 0)
		return err;
	u.disabled = json_object_object_get_ex(req->json, "disabled", &v) && json_object_get_boolean(v);
	if ((err = svc_db_tx(req->ctx->db, user_update_tx, &u)) < 0)
		goto done;
	if (!u.user) {
		err = svc_resp_error(resp, SVC_E_NOT_FOUND, NULL, "No such end user.");
		goto done;
	}
	svc_log_info("app: user %s %s end user %s of project %s (%s)", req->user_id, u.disabled ? "disabled" : "enabled",
		     u.user_id, u.project_id, u.env);
	body = end_user_json(u.user, 0);
	json_object_object_add(body, "disabled", json_object_new_boolean(u.disabled));
	err = svc_resp_json(resp, 200, body);
done:
	svc_rows_free(u.user);
	return err;
}

#define EXPORT_PAGE 20 /* rows read per statement while an export streams: at most 20 MiB of fields in memory */

/* An export being streamed: the response, the keys of the environment, what was written last. */
struct export {
	struct svc_req *req;
	struct svc_resp *resp;
	struct svc_dbv key[2];       /* project, env */
	char collection[SVC_APP_NAME_MAX + 1], created[32], id[37]; /* the cursor: the last row written */
	int started;                 /* a row written already (of this part) */
};

/* Writes `s` (NUL-terminated) to the stream. */
static int export_put(struct export *x, const char *s)
{
	return svc_resp_stream_write(x->resp, s, strlen(s));
}

/* Writes `o` as JSON to the stream and releases it. */
static int export_json(struct export *x, struct json_object *o)
{
	int err = o ? export_put(x, json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN)) : SVC_E_INTERNAL;

	json_object_put(o);
	return err;
}

/* One page of records after the cursor into the stream, `"name":[record,...` with "]," between collections. Sets
 * *out_n to the rows written. */
static int export_records_page(struct export *x, size_t *out_n)
{
	struct svc_rows *rows = NULL;
	struct svc_dbv p[9];
	const char *cur = x->started ? x->collection : NULL;
	size_t r;
	int err;

	p[0] = x->key[0];
	p[1] = x->key[1];
	p[2] = svc_dbv_str(cur);
	p[3] = p[4] = svc_dbv_str(cur);
	p[5] = p[6] = svc_dbv_str(cur ? x->created : NULL);
	p[7] = svc_dbv_str(cur ? x->id : NULL);
	p[8] = svc_dbv_i64(EXPORT_PAGE);
	if ((err = svc_db_run(x->req->ctx->db, STMT_APP_EXPORT_RECORDS, p, 9, &rows, NULL)) < 0)
		return err;
	for (r = 0; rows && r < rows->nrows && err == 0; r++) {
		const char *c = svc_rows_get(rows, r, AXCOL_COLLECTION);
		if (!x->started || strcmp(c, x->collection) != 0) {
			if (x->started)
				err = export_put(x, "],");
			if (err == 0)
				err = export_json(x, json_object_new_string(c));
			if (err == 0)
				err = export_put(x, ":[");
		} else {
			err = export_put(x, ",");
		}
		if (err == 0)
			err = export_json(x, svc_app_record_json(rows, r));
		snprintf(x->collection, sizeof x->collection, "%s", c);
		snprintf(x->created, sizeof x->created, "%s", svc_rows_get(rows, r, AXCOL_CREATED));
		snprintf(x->id, sizeof x->id, "%s", svc_rows_get(rows, r, AXCOL_ID));
		x->started = 1;
	}
	*out_n = rows ? rows->nrows : 0;
	svc_rows_free(rows);
	return err;
}

/* One page of end users after the cursor into the stream, comma-separated. Sets *out_n to the rows written. */
static int export_users_page(struct export *x, size_t *out_n)
{
	struct svc_rows *rows = NULL;
	struct svc_dbv p[7];
	size_t r;
	int err;

	p[0] = x->key[0];
	p[1] = x->key[1];
	p[2] = p[3] = p[4] = svc_dbv_str(x->started ? x->created : NULL);
	p[5] = svc_dbv_str(x->started ? x->id : NULL);
	p[6] = svc_dbv_i64(EXPORT_PAGE);
	if ((err = svc_db_run(x->req->ctx->db, STMT_APP_EXPORT_USERS, p, 7, &rows, NULL)) < 0)
		return err;
	for (r = 0; rows && r < rows->nrows && err == 0; r++) {
		if (x->started)
			err = export_put(x, ",");
		if (err == 0)
			err = export_json(x, end_user_json(rows, r));
		snprintf(x->created, sizeof x->created, "%s", svc_rows_get(rows, r, AULCOL_CREATED));
		snprintf(x->id, sizeof x->id, "%s", svc_rows_get(rows, r, AULCOL_ID));
		x->started = 1;
	}
	*out_n = rows ? rows->nrows : 0;
	svc_rows_free(rows);
	return err;
}

/* {"project":..,"env":..,"exportedAt":.. : the start of the document, its object left open. */
static int export_head(struct export *x, const char *env)
{
	struct json_object *o = json_object_new_object();
	const char *s;
	time_t now = time(NULL);
	struct tm tm;
	char at[32];
	size_t n;
	int err = SVC_E_INTERNAL;

	strftime(at, sizeof at, "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&now, &tm));
	svc_json_add_str(o, "project", svc_req_param(x->req, "id"));
	svc_json_add_str(o, "env", env);
	svc_json_add_str(o, "exportedAt", at);
	s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
	n = strlen(s);
	if (n > 0 && s[n - 1] == '}')
		err = svc_resp_stream_write(x->resp, s, n - 1);
	json_object_put(o);
	return err;
}

/*
 * GET /projects/:id/backend/:env/export: 200 one JSON document, streamed (built a page of EXPORT_PAGE rows at a
 * time, so any size goes out in bounded memory), as an attachment: {project, env, exportedAt, collections: {name:
 * [record]}, users: [{id, email, disabled, createdAt}]}, never a password hash; 401; 404. Not a snapshot: what is
 * written while it streams may or may not be in it. A DB error once it started ends the response (invalid JSON).
 */
enum svc_err svc_api_backend_export(struct svc_req *req, struct svc_resp *resp)
{
	struct export x;
	char name[128];
	const char *env;
	size_t n;
	int err;

	memset(&x, 0, sizeof x);
	if ((err = backend_open(req, resp, SVC_ACT_BACKEND_READ, &env)) < 0)
		return err;
	x.req = req;
	x.resp = resp;
	x.key[0] = svc_dbv_str(svc_req_param(req, "id"));
	x.key[1] = svc_dbv_str(env);
	snprintf(name, sizeof name, "attachment; filename=\"backend-%s.json\"", env);
	if ((err = svc_resp_header(resp, "Content-Disposition", name)) < 0 ||
	    (err = svc_resp_stream_begin(resp, 200, "application/json")) < 0 || (err = export_head(&x, env)) < 0 ||
	    (err = export_put(&x, ",\"collections\":{")) < 0)
		return err;
	do {
		if ((err = export_records_page(&x, &n)) < 0)
			return err;
	} while (n == EXPORT_PAGE);
	if ((err = export_put(&x, x.started ? "]},\"users\":[" : "},\"users\":[")) < 0)
		return err;
	x.started = 0;
	do {
		if ((err = export_users_page(&x, &n)) < 0)
			return err;
	} while (n == EXPORT_PAGE);
	if (err == 0)
		err = export_put(&x, "]}");
	svc_log_info("app: user %s exported the %s data of project %s", req->user_id, env, svc_req_param(req, "id"));
	return err;
}
