/* api_auth.c: sign-up, login, refresh, logout and the current user (spec "Authentication endpoints"). */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "auth.h"
#include "err.h"
#include "json.h"
#include "log.h"

#define COOKIE_ACCESS "svc_access_token"
#define COOKIE_REFRESH "svc_refresh_token"
#define REFRESH_PATH "/api/auth"

/* Lower-cases an e-mail address into out (255 bytes) and checks its shape: one '@', non-empty parts, no spaces. */
static int normalise_email(const char *in, char *out)
{
	size_t i, len = strlen(in), at = 0, ats = 0;

	if (len < 3 || len > 254)
		return SVC_E_VALIDATION;
	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)in[i];
		if (c <= ' ' || c == 0x7f || c == '"' || c == '<' || c == '>' || c == '\\')
			return SVC_E_VALIDATION;
		if (c == '@') {
			at = i;
			ats++;
		}
		out[i] = (char)tolower(c);
	}
	out[len] = '\0';
	if (ats != 1 || at == 0 || at == len - 1 || !strchr(out + at + 1, '.') ||
	    out[len - 1] == '.' || out[at + 1] == '.')
		return SVC_E_VALIDATION;
	return 0;
}

/* Escapes a value for a log line: quotes and backslashes and control bytes become '?'. */
static void log_safe(const char *in, char *out, size_t max)
{
	size_t i;

	for (i = 0; in[i] && i + 1 < max; i++) {
		unsigned char c = (unsigned char)in[i];
		out[i] = (c < 0x20 || c == 0x7f || c == '"' || c == '\\') ? '?' : (char)c;
	}
	out[i] = '\0';
}

static struct json_object *user_json(const struct svc_rows *rows)
{
	struct json_object *u = json_object_new_object();

	/* STMT_USER_BY_ID: id, email, display_name, created_at, is_platform_admin */
	svc_json_add_str(u, "id", svc_rows_get(rows, 0, 0));
	svc_json_add_str(u, "email", svc_rows_get(rows, 0, 1));
	svc_json_add_str(u, "displayName", svc_rows_get(rows, 0, 2));
	svc_json_add_time(u, "createdAt", svc_rows_get(rows, 0, 3));
	json_object_object_add(u, "isPlatformAdmin",
			       json_object_new_boolean(strcmp(svc_rows_get(rows, 0, 4) ? svc_rows_get(rows, 0, 4) : "0", "1") == 0));
	return u;
}

static int load_user(struct svc_req *req, const char *user_id, struct svc_rows **out)
{
	struct svc_dbv p = svc_dbv_str(user_id);
	struct svc_rows *rows = NULL;
	int err = svc_db_run(req->ctx->db, STMT_USER_BY_ID, &p, 1, &rows, NULL);

	if (err < 0)
		return err;
	if (!rows || rows->nrows != 1) {
		svc_rows_free(rows);
		return SVC_E_UNAUTHORIZED;
	}
	*out = rows;
	return 0;
}

static struct json_object *workspaces_json(struct svc_req *req, const char *user_id, struct json_object **out_default)
{
	struct svc_dbv p = svc_dbv_str(user_id);
	struct svc_rows *rows = NULL;
	struct json_object *arr = json_object_new_array();
	size_t r;

	*out_default = NULL;
	if (svc_db_run(req->ctx->db, STMT_USER_WORKSPACES, &p, 1, &rows, NULL) < 0 || !rows)
		return arr;
	for (r = 0; r < rows->nrows; r++) {
		struct json_object *w = json_object_new_object();
		svc_json_add_str(w, "id", svc_rows_get(rows, r, 0));
		svc_json_add_str(w, "name", svc_rows_get(rows, r, 1));
		svc_json_add_str(w, "kind", svc_rows_get(rows, r, 2));
		svc_json_add_str(w, "role", svc_rows_get(rows, r, 3));
		if (!*out_default)
			*out_default = json_object_get(w);
		json_object_array_add(arr, w);
	}
	svc_rows_free(rows);
	return arr;
}

/* Issues both tokens for `user_id`, sets both cookies and adds accessToken/refreshToken to `body`. */
static int issue_session(struct svc_req *req, struct svc_resp *resp, const char *user_id,
			 struct json_object *body)
{
	const struct svc_config *c = &req->ctx->cfg;
	int64_t now = svc_now_ms() / 1000;
	char *access = NULL, *refresh = NULL;
	int err;

	if ((err = svc_auth_jwt_issue(c->jwt_secret, c->jwt_secret_len, c->jwt_issuer, SVC_TOKEN_ACCESS,
				      user_id, now, c->access_ttl_secs, &access)) < 0)
		goto done;
	if ((err = svc_auth_jwt_issue(c->jwt_secret, c->jwt_secret_len, c->jwt_issuer, SVC_TOKEN_REFRESH,
				      user_id, now, c->refresh_ttl_secs, &refresh)) < 0)
		goto done;
	if ((err = svc_resp_cookie(resp, COOKIE_ACCESS, access, "/", c->access_ttl_secs)) < 0 ||
	    (err = svc_resp_cookie(resp, COOKIE_REFRESH, refresh, REFRESH_PATH, c->refresh_ttl_secs)) < 0)
		goto done;
	json_object_object_add(body, "accessToken", json_object_new_string(access));
	json_object_object_add(body, "refreshToken", json_object_new_string(refresh));
	json_object_object_add(body, "expiresIn", json_object_new_int64(c->access_ttl_secs));
done:
	free(access);
	free(refresh);
	return err;
}

/* POST /auth/signup: 201; 400 validation_failed; 409 conflict (email taken). */
int svc_api_auth_signup(struct svc_req *req, struct svc_resp *resp)
{
	static const struct svc_field fields[] = {
		{ "email", SVC_V_STR, SVC_F_REQUIRED, 3, 254, NULL },
		{ "password", SVC_V_STR, SVC_F_REQUIRED, 8, 1024, NULL },
		{ "displayName", SVC_V_STR, SVC_F_NULLABLE, 0, 128, NULL },
	};
	struct svc_db *db = req->ctx->db;
	const char *field, *password, *display;
	char msg[256], email[256], uid[37], wid[37], hash[SVC_AUTH_HASH_MAX], wname[200];
	struct svc_rows *user = NULL;
	struct json_object *body = NULL, *def = NULL;
	struct svc_dbv p[4];
	int err;

	if ((err = svc_json_validate(req->json, fields, 3, &field, msg, sizeof msg)) < 0)
		return svc_resp_error(resp, err, field, "%s", msg);
	if (normalise_email(svc_json_str(req->json, "email"), email) < 0)
		return svc_resp_error(resp, SVC_E_VALIDATION, "email", "email is not a valid address");
	password = svc_json_str(req->json, "password");
	display = svc_json_str(req->json, "displayName");
	if (display && svc_is_blank(display))
		display = NULL;
	if ((err = svc_auth_password_hash(password, strlen(password), hash)) < 0)
		return err;
	if (svc_uuid_v4(uid) < 0 || svc_uuid_v4(wid) < 0)
		return SVC_E_INTERNAL;
	snprintf(wname, sizeof wname, "%.128s's workspace", display ? display : email);

	if ((err = svc_db_begin(db)) < 0)
		return err;
	p[0] = svc_dbv_str(uid);
	p[1] = svc_dbv_str(email);
	p[2] = svc_dbv_str(hash);
	p[3] = svc_dbv_str(display);
	if ((err = svc_db_run(db, STMT_USER_INSERT, p, 4, NULL, NULL)) < 0)
		goto fail;
	p[0] = svc_dbv_str(wid);
	p[1] = svc_dbv_str(wname);
	p[2] = svc_dbv_str("personal");
	p[3] = svc_dbv_str(uid);
	if ((err = svc_db_run(db, STMT_WORKSPACE_INSERT, p, 4, NULL, NULL)) < 0)
		goto fail;
	p[0] = svc_dbv_str(wid);
	p[1] = svc_dbv_str(uid);
	p[2] = svc_dbv_str("owner");
	if ((err = svc_db_run(db, STMT_MEMBER_INSERT, p, 3, NULL, NULL)) < 0)
		goto fail;
	if ((err = svc_db_commit(db)) < 0)
		goto fail;

	if ((err = load_user(req, uid, &user)) < 0)
		return err;
	body = json_object_new_object();
	json_object_object_add(body, "user", user_json(user));
	svc_rows_free(user);
	json_object_put(workspaces_json(req, uid, &def));
	json_object_object_add(body, "workspace", def);
	if ((err = issue_session(req, resp, uid, body)) < 0) {
		json_object_put(body);
		return err;
	}
	svc_log_info("auth: signup user=\"%s\" remote=%s", uid, req->remote_addr ? req->remote_addr : "-");
	return svc_resp_json(resp, 201, body);
fail:
	svc_db_rollback(db);
	if (err == SVC_E_CONFLICT)
		return svc_resp_error(resp, err, "email", "An account with this email already exists.");
	return err;
}

/* POST /auth/login: 200; 400 validation_failed; 401 unauthorized (wrong email or password). */
int svc_api_auth_login(struct svc_req *req, struct svc_resp *resp)
{
	static const struct svc_field fields[] = {
		{ "email", SVC_V_STR, SVC_F_REQUIRED, 1, 254, NULL },
		{ "password", SVC_V_STR, SVC_F_REQUIRED, 1, 1024, NULL },
	};
	const char *field, *password, *hash = NULL, *uid = NULL;
	char msg[256], email[256], safe[256];
	struct svc_rows *rows = NULL, *user = NULL;
	struct json_object *body;
	struct svc_dbv p;
	int err, bad_email;

	if ((err = svc_json_validate(req->json, fields, 2, &field, msg, sizeof msg)) < 0)
		return svc_resp_error(resp, err, field, "%s", msg);
	password = svc_json_str(req->json, "password");
	bad_email = normalise_email(svc_json_str(req->json, "email"), email) < 0;
	if (!bad_email) {
		p = svc_dbv_str(email);
		if ((err = svc_db_run(req->ctx->db, STMT_USER_BY_EMAIL, &p, 1, &rows, NULL)) < 0)
			return err;
		if (rows && rows->nrows == 1) {
			uid = svc_rows_get(rows, 0, 0);
			hash = svc_rows_get(rows, 0, 3);
		}
	}
	err = svc_auth_password_verify(hash, password, strlen(password));
	if (err < 0 || !uid) {
		log_safe(svc_json_str(req->json, "email"), safe, sizeof safe);
		svc_log_warn("auth: login failed user=\"%s\" remote=%s", safe,
			     req->remote_addr ? req->remote_addr : "-");
		svc_rows_free(rows);
		return svc_resp_error(resp, SVC_E_UNAUTHORIZED, NULL, "Invalid email or password.");
	}
	if ((err = load_user(req, uid, &user)) < 0)
		goto done;
	body = json_object_new_object();
	json_object_object_add(body, "user", user_json(user));
	if ((err = issue_session(req, resp, uid, body)) < 0) {
		json_object_put(body);
		goto done;
	}
	svc_resp_json(resp, 200, body);
done:
	svc_rows_free(user);
	svc_rows_free(rows);
	return err;
}

/* POST /auth/refresh: 200 with fresh tokens; 401 when the refresh token (cookie or body refreshToken) is missing or invalid. */
int svc_api_auth_refresh(struct svc_req *req, struct svc_resp *resp)
{
	const struct svc_config *c = &req->ctx->cfg;
	char token[SVC_AUTH_TOKEN_MAX + 1], uid[37];
	struct json_object *parsed = NULL, *body;
	struct svc_rows *user = NULL;
	const char *t = NULL;
	int err;

	if (req->body_len > 0) {
		if (svc_json_parse_object(req->body, req->body_len, &parsed) < 0)
			return SVC_E_INVALID_JSON;
		t = svc_json_str(parsed, "refreshToken");
	}
	if (!t && svc_req_cookie(req, COOKIE_REFRESH, token, sizeof token) == 1)
		t = token;
	if (!t || svc_auth_jwt_verify(c->jwt_secret, c->jwt_secret_len, c->jwt_issuer, SVC_TOKEN_REFRESH,
				      t, svc_now_ms() / 1000, uid) < 0) {
		json_object_put(parsed);
		return svc_resp_error(resp, SVC_E_UNAUTHORIZED, NULL, "The refresh token is missing or invalid.");
	}
	json_object_put(parsed);
	if ((err = load_user(req, uid, &user)) < 0)
		return err;
	body = json_object_new_object();
	json_object_object_add(body, "user", user_json(user));
	svc_rows_free(user);
	if ((err = issue_session(req, resp, uid, body)) < 0) {
		json_object_put(body);
		return err;
	}
	return svc_resp_json(resp, 200, body);
}

/* POST /auth/logout: 200; clears both cookies (tokens are not revoked: spec "Authentication" 2). */
int svc_api_auth_logout(struct svc_req *req, struct svc_resp *resp)
{
	struct json_object *body = json_object_new_object();

	(void)req;
	svc_resp_cookie(resp, COOKIE_ACCESS, "", "/", 0);
	svc_resp_cookie(resp, COOKIE_REFRESH, "", REFRESH_PATH, 0);
	json_object_object_add(body, "ok", json_object_new_boolean(1));
	return svc_resp_json(resp, 200, body);
}

/* GET /auth/me: 200 {user, workspace, workspaces, features}; 401. */
int svc_api_auth_me(struct svc_req *req, struct svc_resp *resp)
{
	struct svc_rows *user = NULL;
	struct json_object *body, *features, *def = NULL;
	int err;

	if ((err = load_user(req, req->user_id, &user)) < 0)
		return err;
	body = json_object_new_object();
	json_object_object_add(body, "user", user_json(user));
	svc_rows_free(user);
	json_object_object_add(body, "workspaces", workspaces_json(req, req->user_id, &def));
	json_object_object_add(body, "workspace", def);
	features = json_object_new_object();
	json_object_object_add(features, "aiProvider",
			       json_object_new_boolean(req->ctx->cfg.ai_base_url[0] != '\0'));
	json_object_object_add(features, "collaboration", json_object_new_boolean(0));
	json_object_object_add(features, "customDomains", json_object_new_boolean(0));
	json_object_object_add(body, "features", features);
	return svc_resp_json(resp, 200, body);
}
