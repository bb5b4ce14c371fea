/* api_account.c: the signed-in user's own account: display name, password change, connected sign-in providers (docs/api.md "Account"). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

#include "api/api.h"
#include "api/api_auth.h"
#include "auth/auth.h"
#include "core/err.h"
#include "core/json.h"

/* The caller's STMT_AUTH_USER_CREDS row (or its locking twin `stmt`) into *out; SVC_E_UNAUTHORIZED when the user is gone. */
static int load_creds(struct svc_req *req, enum svc_stmt stmt, struct svc_rows **out)
{
	return svc_api__auth_user_row(req->ctx->db, stmt, req->user_id, out);
}

/* Answers 200 {user} of the caller; with `with_session`, new tokens of session generation `gen` too (svc_api__auth_session). */
static int send_user(struct svc_req *req, struct svc_resp *resp, int64_t gen, int with_session)
{
	struct svc_rows *user = NULL;
	struct json_object *body;
	int err;

	if ((err = svc_api__auth_user_row(req->ctx->db, STMT_USER_BY_ID, req->user_id, &user)) < 0)
		return err;
	body = json_object_new_object();
	json_object_object_add(body, "user", svc_api__auth_user_json(user));
	svc_rows_free(user);
	if (with_session && (err = svc_api__auth_session(req, resp, req->user_id, gen, body)) < 0) {
		json_object_put(body);
		return err;
	}
	return svc_resp_json(resp, 200, body);
}

static const struct svc_field me_fields[] = {
	{ "displayName", SVC_V_STR, SVC_F_REQUIRED | SVC_F_NULLABLE, 0, 128, NULL },
};
const struct svc_body svc_api_auth_me_update_body = SVC_BODY(me_fields);

/* PATCH /auth/me {displayName}: 200 {user}; blank or null clears it; 400 displayName; 401; 403 for an API token. */
enum svc_err svc_api_auth_me_update(struct svc_req *req, struct svc_resp *resp)
{
	const char *name = svc_json_str(req->json, "displayName");
	struct svc_dbv p[2];
	int err;

	if (name && svc_is_blank(name))
		name = NULL;
	p[0] = svc_dbv_str(name);
	p[1] = svc_dbv_str(req->user_id);
	if ((err = svc_db_run(req->ctx->db, STMT_AUTH_USER_SET_NAME, p, 2, NULL, NULL)) < 0)
		return err;
	return send_user(req, resp, 0, 0);
}

static const struct svc_field password_fields[] = {
	{ "currentPassword", SVC_V_STR, SVC_F_NULLABLE, 0, 1024, NULL },
	{ "newPassword", SVC_V_STR, SVC_F_REQUIRED, 8, 1024, NULL },
};
const struct svc_body svc_api_auth_password_body = SVC_BODY(password_fields);

/*
 * Checks `current` against the stored hash `hash` of account `email` the way POST /auth/login
 * does: svc_api__login_gate() first (429 while this address is locked out of the account, or
 * slowed), then the password through svc_auth_password_verify (constant time); a failure counts
 * like a failed login and goes to the auth log as login_failed reason=current_password. Returns 0 on a match, else the answer for
 * the handler to return (403, 429) or a DB error.
 */
static int check_current(struct svc_req *req, struct svc_resp *resp, const char *email, const char *hash,
			 const char *current)
{
	char safe[256];
	int err;

	svc_auth_log_escape(email, safe, sizeof safe);
	if ((err = svc_api__login_gate(req, resp, email, req->user_id)) < 0)
		return err;
	if (svc_auth_password_verify(hash, current, strlen(current)) == 0)
		return svc_api__login_ok(req, email, req->user_id);
	SVC_API_AUTH_LOG(req, "login_failed", "user=\"%s\" reason=current_password", safe);
	if ((err = svc_api__login_failed(req, email)) < 0)
		return err;
	/* not 401: the session is fine, only this password is not */
	return svc_resp_error(resp, SVC_E_FORBIDDEN, NULL, "The current password is not right.");
}

/* A password change, a transaction of svc_db_tx(): the new hash, pending resets void, a new session generation. */
struct password_change {
	struct svc_dbv p[2]; /* the new hash, the user */
	const char *user_id;
	int64_t gen;
};

static int password_tx(struct svc_db *db, void *arg)
{
	struct password_change *c = arg;
	int err;

	if ((err = svc_db_run(db, STMT_AUTH_USER_NEW_PASSWORD, c->p, 2, NULL, NULL)) < 0 ||
	    (err = svc_db_run(db, STMT_RESET_INVALIDATE_USER, c->p + 1, 1, NULL, NULL)) < 0)
		return err;
	return svc_api__auth_gen(db, c->user_id, &c->gen);
}

/*
 * POST /auth/password {currentPassword, newPassword}: 200 {user, accessToken, refreshToken,
 * expiresIn} with both cookies set again; every other session's refresh token stops working
 * (users.session_gen), and so do outstanding reset links. An account without a password
 * (made through OAuth) sets one without currentPassword. 400 validation_failed (newPassword
 * 8-1024 characters; currentPassword missing); 401; 403 (currentPassword is wrong; an API
 * token); 429 (SVC_RATE_LIMIT_LOGIN_IP per address; SVC_RATE_LIMIT_LOGIN_ACCOUNT failures).
 */
enum svc_err svc_api_auth_password(struct svc_req *req, struct svc_resp *resp)
{
	struct svc_db *db = req->ctx->db;
	const char *current = svc_json_str(req->json, "currentPassword"), *next = svc_json_str(req->json, "newPassword");
	const char *hash;
	char pwhash[SVC_AUTH_HASH_MAX];
	struct svc_rows *creds = NULL;
	struct password_change pw;
	int64_t gen = 0;
	int err;

	if ((err = svc_api__auth_limit(req, resp, "password_ip", req->limit_addr, &req->ctx->auth.rl_login_ip)) < 0)
		return err;
	if ((err = load_creds(req, STMT_AUTH_USER_CREDS, &creds)) < 0)
		return err;
	hash = svc_rows_get(creds, 0, UCRCOL_HASH);
	if (hash && hash[0]) {
		if (!current || !current[0]) {
			err = svc_resp_error(resp, SVC_E_VALIDATION, "currentPassword",
					     "currentPassword is required: the password you sign in with now");
			goto done;
		}
		if ((err = check_current(req, resp, svc_rows_get(creds, 0, UCRCOL_EMAIL), hash, current)) < 0)
			goto done;
	}
	if ((err = svc_auth_password_hash(next, strlen(next), pwhash)) < 0)
		goto done;
	pw.p[0] = svc_dbv_str(pwhash);
	pw.p[1] = svc_dbv_str(req->user_id);
	pw.user_id = req->user_id;
	if ((err = svc_db_tx(db, password_tx, &pw)) < 0)
		goto done;
	svc_shm_epoch_bump(); /* the old generation's cached session checks on this host end now */
	gen = pw.gen;
	SVC_API_AUTH_LOG(req, "password_changed", "user=%s", req->user_id);
	err = send_user(req, resp, gen, 1);
done:
	OPENSSL_cleanse(pwhash, sizeof pwhash);
	svc_rows_free(creds);
	return err;
}

static struct json_object *identity_json(const struct svc_rows *rows, size_t r, const char *user_id)
{
	const struct svc_oauth_provider *p = svc_oauth_provider_find(svc_rows_get(rows, r, ILCOL_PROVIDER));
	struct json_object *o = json_object_new_object();

	(void)user_id;
	svc_json_add_str(o, "provider", svc_rows_get(rows, r, ILCOL_PROVIDER));
	svc_json_add_str(o, "name", p ? p->label : svc_rows_get(rows, r, ILCOL_PROVIDER));
	svc_json_add_str(o, "email", svc_rows_get(rows, r, ILCOL_EMAIL));
	svc_json_add_time(o, "createdAt", svc_rows_get(rows, r, ILCOL_CREATED));
	svc_json_add_time(o, "lastLoginAt", svc_rows_get(rows, r, ILCOL_LAST_LOGIN));
	return o;
}

/* GET /auth/identities: 200 {items: [{provider, name, email, createdAt, lastLoginAt}], hasPassword}; 401; 403 for an API token. */
enum svc_err svc_api_auth_identities_list(struct svc_req *req, struct svc_resp *resp)
{
	struct svc_dbv p = svc_dbv_str(req->user_id);
	struct svc_rows *rows = NULL, *creds = NULL;
	struct json_object *body, *items;
	const char *hash;
	size_t r;
	int err;

	if ((err = load_creds(req, STMT_AUTH_USER_CREDS, &creds)) < 0)
		return err;
	if ((err = svc_db_run(req->ctx->db, STMT_IDENTITY_LIST, &p, 1, &rows, NULL)) < 0)
		goto done;
	body = json_object_new_object();
	items = json_object_new_array();
	for (r = 0; rows && r < rows->nrows; r++)
		json_object_array_add(items, identity_json(rows, r, req->user_id));
	json_object_object_add(body, "items", items);
	hash = svc_rows_get(creds, 0, UCRCOL_HASH);
	json_object_object_add(body, "hasPassword", json_object_new_boolean(hash && hash[0]));
	err = svc_resp_json(resp, 200, body);
done:
	svc_rows_free(rows);
	svc_rows_free(creds);
	return err;
}

/* Disconnecting a sign-in provider, a transaction of svc_db_tx(): the user's row locked, then the check, then the delete. */
struct identity_removal {
	struct svc_req *req;
	struct svc_resp *resp;
	const struct svc_oauth_provider *prov;
};

static int identity_delete_tx(struct svc_db *db, void *arg)
{
	const struct identity_removal *x = arg;
	struct svc_rows *creds = NULL, *mine = NULL;
	struct svc_dbv p[2];
	const char *hash;
	uint64_t total = 0;
	int err;

	if ((err = load_creds(x->req, STMT_AUTH_USER_CREDS_LOCK, &creds)) < 0)
		goto done;
	p[0] = svc_dbv_str(x->req->user_id);
	p[1] = svc_dbv_str(x->prov->name);
	if ((err = svc_db_run(db, STMT_IDENTITY_OF_USER, p, 2, &mine, NULL)) < 0)
		goto done;
	if (!mine || mine->nrows == 0) {
		err = svc_resp_error(x->resp, SVC_E_NOT_FOUND, NULL, "%s is not connected to your account.", x->prov->label);
		goto done;
	}
	hash = svc_rows_get(creds, 0, UCRCOL_HASH);
	svc_parse_u64(svc_rows_get(creds, 0, UCRCOL_IDENTITIES) ? svc_rows_get(creds, 0, UCRCOL_IDENTITIES) : "0",
		      UINT64_MAX, &total);
	if (!(hash && hash[0]) && total <= mine->nrows) {
		err = svc_resp_error(x->resp, SVC_E_CONFLICT, NULL,
				     "%s is the only way you sign in: set a password or connect another provider first.",
				     x->prov->label);
		goto done;
	}
	err = svc_db_run(db, STMT_IDENTITY_DELETE, p, 2, NULL, NULL);
done:
	svc_rows_free(mine);
	svc_rows_free(creds);
	return err;
}

/*
 * DELETE /auth/identities/:provider: 204; the provider account no longer signs in to this one.
 * 404 (no such provider, or not connected); 409 when it is the account's last way to sign in
 * (no password and no other provider); 401; 403 for an API token. The user's row is locked
 * (FOR UPDATE) so two disconnects at once cannot both pass the check.
 */
enum svc_err svc_api_auth_identities_delete(struct svc_req *req, struct svc_resp *resp)
{
	struct identity_removal x = { req, resp, svc_oauth_provider_find(svc_req_param(req, "provider")) };
	int err;

	if (!x.prov)
		return svc_resp_error(resp, SVC_E_NOT_FOUND, NULL, "No such sign-in provider.");
	if ((err = svc_db_tx(req->ctx->db, identity_delete_tx, &x)) < 0)
		return err;
	SVC_API_AUTH_LOG(req, "identity_removed", "provider=%s user=%s", x.prov->name, req->user_id);
	resp->status = 204;
	return 0;
}
