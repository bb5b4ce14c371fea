/* app_auth.c: an app's end users: sign-up, sign-in, sign-out, the current user, under /_svc/auth/ (app.h). */
#include <stdio.h>
#include <string.h>

#include <openssl/crypto.h>

#include "app/app.h"
#include "auth/auth.h"
#include "core/err.h"
#include "core/json.h"
#include "core/util.h"

#define TOKEN_BYTES 32

static const struct svc_field credential_fields[] = {
	{ "email", SVC_V_STR, SVC_F_REQUIRED, 3, 254, NULL },
	{ "password", SVC_V_STR, SVC_F_REQUIRED, 8, 1024, NULL },
};
const struct svc_body svc_app_credentials_body = SVC_BODY(credential_fields);

/* {id, email, createdAt} of an end user. */
static struct json_object *user_json(const char *id, const char *email, const char *created)
{
	struct json_object *u = json_object_new_object();

	json_object_object_add(u, "id", json_object_new_string(id));
	json_object_object_add(u, "email", json_object_new_string(email));
	svc_json_add_time(u, "createdAt", created);
	return u;
}

/* 200/201 {user}. */
static int answer_user(struct svc_resp *resp, int status, const char *id, const char *email, const char *created)
{
	struct json_object *body = json_object_new_object();

	json_object_object_add(body, "user", user_json(id, email, created));
	return svc_resp_json(resp, status, body);
}

/* A rate-limit bucket's key for this site and `what` (an e-mail, an address). */
static int site_key(const struct svc_app_site *s, const char *what, const char *addr, char *out, size_t max)
{
	int n = snprintf(out, max, "%s\n%s\n%s\n%s", s->project_id, s->env, what, addr ? addr : "");

	return n < 0 || (size_t)n >= max ? SVC_E_INTERNAL : 0;
}

/* Counts a hit of `rule` on `key` under `r`: 429 past it (svc's own limits, SVC_RATE_LIMIT_*). */
static int limit(struct svc_req *req, struct svc_resp *resp, const char *rule, const char *key,
		 const struct svc_rate_rule *r, int count)
{
	int64_t retry = 0;
	int err;

	if (svc_auth_addr_in_list(req->remote_addr, req->ctx->auth.rate_limit_exempt))
		return 0;
	err = count ? svc_ratelimit_hit(req->ctx->db, rule, key, r, svc_now_ms() / 1000, &retry)
		    : svc_ratelimit_check(req->ctx->db, rule, key, r, svc_now_ms() / 1000, &retry);
	if (err == SVC_E_RATE_LIMITED) {
		svc_auth_log(req->ctx->auth.auth_log, req->ctx->name, "rate_limited", req->client_addr, "limit=%s", rule);
		return svc_resp_rate_limited(resp, retry);
	}
	return err;
}

/* A new session of end user `uid` on this site: its row and the cookie. */
static int session_start(struct svc_req *req, struct svc_resp *resp, const struct svc_app_site *s, const char *uid)
{
	char token[sizeof SVC_APP_SESSION_PREFIX + 2 * TOKEN_BYTES], hash[65];
	struct svc_dbv p[5];
	int err;

	memcpy(token, SVC_APP_SESSION_PREFIX, sizeof SVC_APP_SESSION_PREFIX - 1);
	if ((err = svc_random_hex(token + sizeof SVC_APP_SESSION_PREFIX - 1, TOKEN_BYTES)) < 0 ||
	    (err = svc_sha256_hex(token, strlen(token), hash)) < 0)
		goto done;
	p[0] = svc_dbv_str(uid);
	if ((err = svc_db_run(req->ctx->db, STMT_APP_SESSION_PRUNE, p, 1, NULL, NULL)) < 0)
		goto done;
	p[0] = svc_dbv_str(hash);
	p[1] = svc_dbv_str(uid);
	p[2] = svc_dbv_str(s->project_id);
	p[3] = svc_dbv_str(s->env);
	p[4] = svc_dbv_i64(SVC_APP_SESSION_SECS);
	if ((err = svc_db_run(req->ctx->db, STMT_APP_SESSION_INSERT, p, 5, NULL, NULL)) < 0)
		goto done;
	err = svc_app__cookie(req, resp, token);
done:
	OPENSSL_cleanse(token, sizeof token);
	return err;
}

/* The e-mail and password of the body: the address normalised into email (255 bytes). */
static int credentials(struct svc_req *req, struct svc_resp *resp, char *email, const char **password, size_t *len)
{
	struct json_object *v;

	if (svc_auth_email_normalise(svc_json_str(req->json, "email"), email) < 0)
		return svc_resp_error(resp, SVC_E_VALIDATION, "email", "email is not a valid address");
	json_object_object_get_ex(req->json, "password", &v);
	*password = json_object_get_string(v);
	*len = (size_t)json_object_get_string_len(v);
	return 0;
}

/* The end user of this site with e-mail address `email` (normalised) into *out: AUCOL_* columns, no row when none. */
static int user_by_email(struct svc_db *db, const struct svc_app_site *s, const char *email, struct svc_rows **out)
{
	struct svc_dbv p[3];

	p[0] = svc_dbv_str(s->project_id);
	p[1] = svc_dbv_str(s->env);
	p[2] = svc_dbv_str(email);
	return svc_db_run(db, STMT_APP_USER_BY_EMAIL, p, 3, out, NULL);
}

/* A sign-up's end user: counted against SVC_APP_MAX_USERS and inserted in one transaction. */
struct new_user {
	const struct svc_config *cfg;
	const struct svc_app_site *s;
	const struct svc_dbv *p; /* STMT_APP_USER_INSERT's 5 */
	char msg[256];
};

static int signup_tx(struct svc_db *db, void *arg)
{
	struct new_user *nu = arg;
	int err;

	if ((err = svc_app__usage(db, nu->cfg, nu->s, 0, 0, 1, nu->msg, sizeof nu->msg)) < 0)
		return err;
	return svc_db_run(db, STMT_APP_USER_INSERT, nu->p, 5, NULL, NULL);
}

enum svc_err svc_app_signup(struct svc_req *req, struct svc_resp *resp)
{
	struct svc_app_site s;
	char email[255], hash[SVC_AUTH_HASH_MAX], uid[37];
	const char *password;
	struct svc_rows *rows = NULL;
	struct svc_dbv p[5];
	struct new_user nu;
	size_t len;
	int err;

	if ((err = svc_app_site_open(req, resp, &s)) < 0 || (err = credentials(req, resp, email, &password, &len)) < 0)
		return err;
	if ((err = limit(req, resp, "app_signup_ip", req->limit_addr, &req->ctx->auth.rl_signup_ip, 1)) < 0)
		return err;
	if ((err = svc_auth_password_hash(password, len, hash)) < 0 || (err = svc_uuid_v4(uid)) < 0)
		return err;
	p[0] = svc_dbv_str(uid);
	p[1] = svc_dbv_str(s.project_id);
	p[2] = svc_dbv_str(s.env);
	p[3] = svc_dbv_str(email);
	p[4] = svc_dbv_str(hash);
	nu = (struct new_user){ &req->ctx->cfg, &s, p, "" };
	err = svc_db_tx(req->ctx->db, signup_tx, &nu);
	OPENSSL_cleanse(hash, sizeof hash);
	if (err == SVC_E_CONFLICT)
		return svc_resp_error(resp, err, "email", "An account with this e-mail address exists; sign in instead.");
	if (err == SVC_E_TOO_LARGE)
		return svc_resp_error(resp, err, NULL, "%s", nu.msg);
	if (err < 0 || (err = session_start(req, resp, &s, uid)) < 0)
		return err;
	/* read back for createdAt as stored */
	if ((err = user_by_email(req->ctx->db, &s, email, &rows)) < 0)
		return err;
	err = rows && rows->nrows == 1 ? answer_user(resp, 201, uid, email, svc_rows_get(rows, 0, AUCOL_CREATED))
				       : SVC_E_INTERNAL;
	svc_rows_free(rows);
	return err;
}

enum svc_err svc_app_login(struct svc_req *req, struct svc_resp *resp)
{
	const struct svc_auth_config *a = &req->ctx->auth;
	struct svc_app_site s;
	char email[255], pair[700], account[600];
	const char *password, *hash = NULL;
	struct svc_rows *rows = NULL;
	size_t len;
	int err;

	if ((err = svc_app_site_open(req, resp, &s)) < 0 || (err = credentials(req, resp, email, &password, &len)) < 0)
		return err;
	if ((err = limit(req, resp, "app_login_ip", req->limit_addr, &a->rl_login_ip, 1)) < 0)
		return err;
	/* lock-out as svc's own: too many failures of this account from this address, or from everywhere */
	if ((err = site_key(&s, email, req->limit_addr, pair, sizeof pair)) < 0 ||
	    (err = site_key(&s, email, NULL, account, sizeof account)) < 0 ||
	    (err = limit(req, resp, "app_login_pair", pair, &a->rl_login_account, 0)) < 0 ||
	    (err = limit(req, resp, "app_login_account", account, &a->rl_login_account_max, 0)) < 0)
		return err;
	if ((err = user_by_email(req->ctx->db, &s, email, &rows)) < 0)
		return err;
	if (rows && rows->nrows == 1 && strcmp(svc_rows_get(rows, 0, AUCOL_DISABLED), "0") == 0)
		hash = svc_rows_get(rows, 0, AUCOL_HASH);
	/* an unknown account spends the time of a real check (svc_auth_password_verify with NULL) */
	if (svc_auth_password_verify(hash, password, len) < 0) {
		svc_rows_free(rows);
		if (!svc_auth_addr_in_list(req->remote_addr, a->rate_limit_exempt)) {
			int64_t retry;
			svc_ratelimit_hit(req->ctx->db, "app_login_pair", pair, &a->rl_login_account, svc_now_ms() / 1000, &retry);
			svc_ratelimit_hit(req->ctx->db, "app_login_account", account, &a->rl_login_account_max,
					  svc_now_ms() / 1000, &retry);
		}
		svc_auth_log(req->ctx->auth.auth_log, req->ctx->name, "app_login_failed", req->client_addr, "project=%s",
			     s.project_id);
		return svc_resp_error(resp, SVC_E_UNAUTHORIZED, NULL, "Wrong e-mail address or password.");
	}
	svc_ratelimit_clear(req->ctx->db, "app_login_pair", pair);
	if ((err = session_start(req, resp, &s, svc_rows_get(rows, 0, AUCOL_ID))) == 0)
		err = answer_user(resp, 200, svc_rows_get(rows, 0, AUCOL_ID), svc_rows_get(rows, 0, AUCOL_EMAIL),
				  svc_rows_get(rows, 0, AUCOL_CREATED));
	svc_rows_free(rows);
	return err;
}

enum svc_err svc_app_logout(struct svc_req *req, struct svc_resp *resp)
{
	struct svc_app_site s;
	struct svc_dbv p;
	int err;

	if ((err = svc_app_site_open(req, resp, &s)) < 0)
		return err;
	if (s.session_sha[0]) {
		p = svc_dbv_str(s.session_sha);
		if ((err = svc_db_run(req->ctx->db, STMT_APP_SESSION_DELETE, &p, 1, NULL, NULL)) < 0)
			return err;
	}
	if ((err = svc_app__cookie(req, resp, NULL)) < 0)
		return err;
	resp->status = 204;
	return 0;
}

enum svc_err svc_app_me(struct svc_req *req, struct svc_resp *resp)
{
	struct svc_app_site s;
	int err;

	if ((err = svc_app_site_open(req, resp, &s)) < 0)
		return err;
	if (!s.user_id[0])
		return svc_resp_error(resp, SVC_E_UNAUTHORIZED, NULL, "Not signed in.");
	return answer_user(resp, 200, s.user_id, s.user_email, s.user_created);
}
