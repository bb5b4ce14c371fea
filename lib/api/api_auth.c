/* api_auth.c: sign-up, login, refresh, logout, the current user, API tokens, password reset, OAuth (spec "Authentication endpoints"). */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

#include "api/api.h"
#include "api/api_auth.h"
#include "api/api_integrations.h"
#include "auth/auth.h"
#include "auth/crypto.h"
#include "core/err.h"
#include "core/json.h"
#include "core/log.h"
#include "db/jobs.h"
#include "project/domains.h"

#define COOKIE_ACCESS "svc_access_token"
#define COOKIE_REFRESH "svc_refresh_token"
#define COOKIE_OAUTH "svc_oauth"
#define REFRESH_PATH "/api/auth"
/* the OAuth flows a state is made for (svc_oauth_state_make) */
#define FLOW_SIGNIN "signin"
#define FLOW_LINK "link"
#define FLOW_ASSISTANT "assistant"
#define ACCOUNT_PAGE "/settings/account"

#define AUTH_LOG SVC_API_AUTH_LOG

int svc_api__auth_limit(struct svc_req *req, struct svc_resp *resp, const char *rule, const char *key,
			const struct svc_rate_rule *r)
{
	int64_t retry = 0;
	int err;

	if (svc_auth_addr_in_list(req->remote_addr, req->ctx->auth.rate_limit_exempt))
		return 0;
	err = svc_ratelimit_hit(req->ctx->db, rule, key, r, svc_now_ms() / 1000, &retry);
	if (err == SVC_E_RATE_LIMITED) {
		AUTH_LOG(req, "rate_limited", "limit=%s", rule);
		return svc_resp_rate_limited(resp, retry);
	}
	return err;
}

/* Escapes a value for a log line: quotes, backslashes, spaces and control bytes become '?'. */
static void log_safe(const char *in, char *out, size_t max)
{
	svc_auth_log_escape(in, out, max);
}

/* ---- failed logins (review finding 8 of issue 17; docs/api.md "Rate limits") ---- */

#define KNOWN_ADDR_SECS (90 * 86400) /* an address the account signed in from counts as known this long */

/* The bucket key of (account `email`, the client's address). */
static int pair_key(const struct svc_req *req, const char *email, char *out, size_t size)
{
	int n = snprintf(out, size, "%s\n%s", email, req->limit_addr);

	return n < 0 || (size_t)n >= size ? SVC_E_INTERNAL : 0;
}

/* 1 when user `uid` signed in from the client's address (its rate-limit key) within KNOWN_ADDR_SECS, else 0. */
static int address_known(struct svc_req *req, const char *uid)
{
	struct svc_rows *rows = NULL;
	struct svc_dbv p[3];
	char hash[65];
	int known;

	if (!uid || svc_sha256_hex(req->limit_addr, strlen(req->limit_addr), hash) < 0)
		return 0;
	p[0] = svc_dbv_str(uid);
	p[1] = svc_dbv_str(hash);
	p[2] = svc_dbv_i64(svc_now_ms() / 1000 - KNOWN_ADDR_SECS);
	known = svc_db_run(req->ctx->db, STMT_KNOWN_ADDR_GET, p, 3, &rows, NULL) == 0 && rows && rows->nrows == 1;
	svc_rows_free(rows);
	return known;
}

int svc_api__login_gate(struct svc_req *req, struct svc_resp *resp, const char *email, const char *uid)
{
	const struct svc_auth_config *a = &req->ctx->auth;
	int64_t now = svc_now_ms() / 1000, retry = 0;
	char key[512], safe[256];
	int err;

	if (svc_auth_addr_in_list(req->remote_addr, a->rate_limit_exempt))
		return 0;
	log_safe(email, safe, sizeof safe);
	if ((err = pair_key(req, email, key, sizeof key)) < 0)
		return err;
	/* this address has failed too often on this account: locked, whatever the password */
	err = svc_ratelimit_check(req->ctx->db, "login_pair", key, &a->rl_login_account, now, &retry);
	if (err == SVC_E_RATE_LIMITED) {
		AUTH_LOG(req, "login_failed", "user=\"%s\" reason=locked", safe);
		return svc_resp_rate_limited(resp, retry);
	}
	if (err < 0)
		return err;
	/* the account has failed too often from everywhere: strangers are slowed, known addresses go on */
	err = svc_ratelimit_check(req->ctx->db, "login_account", email, &a->rl_login_account_max, now, &retry);
	if (err == SVC_E_RATE_LIMITED) {
		if (address_known(req, uid))
			return 0;
		err = svc_ratelimit_hit(req->ctx->db, "login_slow", email, &a->rl_login_slow, now, &retry);
		if (err == SVC_E_RATE_LIMITED) {
			AUTH_LOG(req, "login_failed", "user=\"%s\" reason=slowed", safe);
			return svc_resp_rate_limited(resp, retry);
		}
	}
	return err;
}

int svc_api__login_failed(struct svc_req *req, const char *email)
{
	const struct svc_auth_config *a = &req->ctx->auth;
	int64_t now = svc_now_ms() / 1000, retry = 0;
	char key[512];
	int err;

	if (svc_auth_addr_in_list(req->remote_addr, a->rate_limit_exempt))
		return 0;
	if ((err = pair_key(req, email, key, sizeof key)) < 0)
		return err;
	err = svc_ratelimit_hit(req->ctx->db, "login_pair", key, &a->rl_login_account, now, &retry);
	if (err == 0 || err == SVC_E_RATE_LIMITED)
		err = svc_ratelimit_hit(req->ctx->db, "login_account", email, &a->rl_login_account_max, now, &retry);
	return err == SVC_E_RATE_LIMITED ? 0 : err;
}

int svc_api__login_ok(struct svc_req *req, const char *email, const char *uid)
{
	struct svc_dbv p[3];
	char key[512], hash[65];
	int err;

	if (!svc_auth_addr_in_list(req->remote_addr, req->ctx->auth.rate_limit_exempt) &&
	    pair_key(req, email, key, sizeof key) == 0)
		svc_ratelimit_clear(req->ctx->db, "login_pair", key);
	if ((err = svc_sha256_hex(req->limit_addr, strlen(req->limit_addr), hash)) < 0)
		return err;
	p[0] = svc_dbv_str(uid);
	p[1] = svc_dbv_str(hash);
	p[2] = svc_dbv_i64(svc_now_ms() / 1000);
	return svc_db_run(req->ctx->db, STMT_KNOWN_ADDR_PUT, p, 3, NULL, NULL);
}

/* Lower-cases an e-mail address into out (255 bytes) and checks its shape (svc_auth_email_normalise). */
static int normalise_email(const char *in, char *out)
{
	return svc_auth_email_normalise(in, out);
}


struct json_object *svc_api__auth_user_json(const struct svc_rows *rows)
{
	struct json_object *u = json_object_new_object();

	svc_json_add_str(u, "id", svc_rows_get(rows, 0, UCOL_ID));
	svc_json_add_str(u, "email", svc_rows_get(rows, 0, UCOL_EMAIL));
	svc_json_add_str(u, "displayName", svc_rows_get(rows, 0, UCOL_NAME));
	svc_json_add_time(u, "createdAt", svc_rows_get(rows, 0, UCOL_CREATED));
	json_object_object_add(u, "isPlatformAdmin",
			       json_object_new_boolean(strcmp(svc_rows_get(rows, 0, UCOL_ADMIN) ? svc_rows_get(rows, 0, UCOL_ADMIN) : "0", "1") == 0));
	return u;
}

int svc_api__auth_user_row(struct svc_db *db, enum svc_stmt stmt, const char *user_id, struct svc_rows **out)
{
	struct svc_dbv p = svc_dbv_str(user_id);
	struct svc_rows *rows = NULL;
	int err = svc_db_run(db, stmt, &p, 1, &rows, NULL);

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
		svc_json_add_str(w, "id", svc_rows_get(rows, r, UWCOL_ID));
		svc_json_add_str(w, "name", svc_rows_get(rows, r, UWCOL_NAME));
		svc_json_add_str(w, "kind", svc_rows_get(rows, r, UWCOL_KIND));
		svc_json_add_str(w, "role", svc_rows_get(rows, r, UWCOL_ROLE));
		if (!*out_default)
			*out_default = json_object_get(w);
		json_object_array_add(arr, w);
	}
	svc_rows_free(rows);
	return arr;
}

int svc_api__auth_gen(struct svc_db *db, const char *user_id, int64_t *out_gen)
{
	struct svc_rows *rows = NULL;
	uint64_t gen = 0;
	int err;

	if ((err = svc_api__auth_user_row(db, STMT_AUTH_USER_CREDS, user_id, &rows)) < 0)
		return err;
	if (svc_parse_u64(svc_rows_get(rows, 0, UCRCOL_GEN) ? svc_rows_get(rows, 0, UCRCOL_GEN) : "", INT64_MAX, &gen) < 0)
		err = SVC_E_INTERNAL;
	else
		*out_gen = (int64_t)gen;
	svc_rows_free(rows);
	return err;
}

/* Issues the access and refresh tokens of session `session` (the refresh token's id `jti`), sets the cookies, fills `body`. */
static int issue_tokens(struct svc_req *req, struct svc_resp *resp, const char *user_id, int64_t gen,
			const char *session, const char *jti, struct json_object *body)
{
	const struct svc_config *c = &req->ctx->cfg;
	int64_t now = svc_now_ms() / 1000;
	char *access = NULL, *refresh = NULL;
	int err;

	if ((err = svc_auth_jwt_issue_session(c->jwt_secret, c->jwt_secret_len, c->jwt_issuer, SVC_TOKEN_ACCESS,
					      user_id, gen, session, NULL, now, c->access_ttl_secs, &access)) < 0)
		goto done;
	if ((err = svc_auth_jwt_issue_session(c->jwt_secret, c->jwt_secret_len, c->jwt_issuer, SVC_TOKEN_REFRESH,
					      user_id, gen, session, jti, now, c->refresh_ttl_secs, &refresh)) < 0)
		goto done;
	if ((err = svc_resp_cookie(resp, COOKIE_ACCESS, access, "/", c->access_ttl_secs)) < 0 ||
	    (err = svc_resp_cookie(resp, COOKIE_REFRESH, refresh, REFRESH_PATH, c->refresh_ttl_secs)) < 0)
		goto done;
	if (body) {
		json_object_object_add(body, "accessToken", json_object_new_string(access));
		json_object_object_add(body, "refreshToken", json_object_new_string(refresh));
		json_object_object_add(body, "expiresIn", json_object_new_int64(c->access_ttl_secs));
	}
done:
	free(access);
	free(refresh);
	return err;
}

int svc_api__auth_session(struct svc_req *req, struct svc_resp *resp, const char *user_id, int64_t gen,
			  struct json_object *body)
{
	char session[SVC_AUTH_ID_LEN + 1], jti[SVC_AUTH_ID_LEN + 1];
	int err;

	if ((err = svc_session_start(req->ctx->db, user_id, svc_now_ms(), req->ctx->cfg.refresh_ttl_secs, session,
				     jti)) < 0)
		return err;
	return issue_tokens(req, resp, user_id, gen, session, jti, body);
}

/*
 * Creates the user `uid` with `email` (normalised), `hash` (NULL for none:
 * OAuth accounts), `display` (may be NULL) and the personal workspace, in
 * the transaction the caller opened. Errors: SVC_E_CONFLICT (email taken), DB errors.
 */
static int create_user(struct svc_db *db, const char *uid, const char *email, const char *hash, const char *display)
{
	char wid[37], wname[200];
	struct svc_dbv p[4];
	int err;

	if (svc_uuid_v4(wid) < 0)
		return SVC_E_INTERNAL;
	snprintf(wname, sizeof wname, "%.128s's workspace", display ? display : email);
	p[0] = svc_dbv_str(uid);
	p[1] = svc_dbv_str(email);
	p[2] = svc_dbv_str(hash);
	p[3] = svc_dbv_str(display);
	if ((err = svc_db_run(db, STMT_USER_INSERT, p, 4, NULL, NULL)) < 0)
		return err;
	p[0] = svc_dbv_str(wid);
	p[1] = svc_dbv_str(wname);
	p[2] = svc_dbv_str("personal");
	p[3] = svc_dbv_str(uid);
	if ((err = svc_db_run(db, STMT_WORKSPACE_INSERT, p, 4, NULL, NULL)) < 0)
		return err;
	p[0] = svc_dbv_str(wid);
	p[1] = svc_dbv_str(uid);
	p[2] = svc_dbv_str("owner");
	return svc_db_run(db, STMT_MEMBER_INSERT, p, 3, NULL, NULL);
}

/* A new account, one transaction of svc_db_tx(). */
struct new_user {
	const char *uid, *email, *hash, *display;
};

static int new_user_tx(struct svc_db *db, void *arg)
{
	const struct new_user *u = arg;

	return create_user(db, u->uid, u->email, u->hash, u->display);
}

/* A sign-up waiting for its address and the job that mails the link, one transaction of svc_db_tx(). */
struct pending {
	const struct svc_dbv *p; /* STMT_SIGNUP_INSERT's 5 */
	const char *job;         /* the mail job's payload */
};

static int pending_tx(struct svc_db *db, void *arg)
{
	const struct pending *pd = arg;
	int err;

	if ((err = svc_db_run(db, STMT_SIGNUP_INSERT, pd->p, 5, NULL, NULL)) < 0)
		return err;
	return svc_jobs_enqueue(db, SVC_JOB_SIGNUP_MAIL, pd->job, 3, NULL);
}

static const struct svc_field signup_fields[] = {
	{ "email", SVC_V_STR, SVC_F_REQUIRED, 3, 254, NULL },
	{ "password", SVC_V_STR, SVC_F_REQUIRED, 8, 1024, NULL },
	{ "displayName", SVC_V_STR, SVC_F_NULLABLE, 0, 128, NULL },
};
const struct svc_body svc_api_auth_signup_body = SVC_BODY(signup_fields);

/*
 * Signs the new account `uid` in and answers `status` with {user, workspace, accessToken,
 * refreshToken, expiresIn} and both cookies; the address it was made from becomes known.
 */
static int answer_new_account(struct svc_req *req, struct svc_resp *resp, const char *uid, const char *email,
			      int status)
{
	struct svc_rows *user = NULL;
	struct json_object *body, *def = NULL;
	int err;

	if ((err = svc_api__auth_user_row(req->ctx->db, STMT_USER_BY_ID, uid, &user)) < 0)
		return err;
	body = json_object_new_object();
	json_object_object_add(body, "user", svc_api__auth_user_json(user));
	svc_rows_free(user);
	json_object_put(workspaces_json(req, uid, &def));
	json_object_object_add(body, "workspace", def);
	if ((err = svc_api__auth_session(req, resp, uid, 0, body)) < 0 ||
	    (err = svc_api__login_ok(req, email, uid)) < 0) {
		json_object_put(body);
		return err;
	}
	return svc_resp_json(resp, status, body);
}

/*
 * Sign-up with verification (SVC_SIGNUP_VERIFY on): the same work and the same 202 for every
 * address (findings 13 and 6 of issue 17). The request stores a pending sign-up (the password's
 * hash) and queues SVC_JOB_SIGNUP_MAIL in one transaction; svc-worker decides what the address
 * gets. No account exists before the link is used.
 */
static int signup_pending(struct svc_req *req, struct svc_resp *resp, const char *email, const char *hash,
			  const char *display)
{
	struct svc_db *db = req->ctx->db;
	struct json_object *job = NULL, *body;
	struct svc_dbv p[5];
	struct pending pend;
	char id[37], safe[256];
	int err;

	if (svc_uuid_v4(id) < 0 || !(job = json_object_new_object()))
		return SVC_E_INTERNAL;
	json_object_object_add(job, "pending", json_object_new_string(id));
	p[0] = svc_dbv_str(id);
	p[1] = svc_dbv_str(email);
	p[2] = svc_dbv_str(hash);
	p[3] = svc_dbv_str(display);
	p[4] = svc_dbv_i64(req->ctx->auth.signup_verify_ttl_secs);
	pend.p = p;
	pend.job = json_object_to_json_string_ext(job, JSON_C_TO_STRING_PLAIN);
	if ((err = svc_db_tx(db, pending_tx, &pend)) < 0)
		goto done;
	log_safe(email, safe, sizeof safe);
	AUTH_LOG(req, "signup_pending", "user=\"%s\"", safe);
	body = json_object_new_object();
	json_object_object_add(body, "status", json_object_new_string("verification_sent"));
	json_object_object_add(body, "message", json_object_new_string(
		"Check your e-mail: a message with a link to finish the sign-up is on its way."));
	err = svc_resp_json(resp, 202, body);
done:
	json_object_put(job);
	return err;
}

/*
 * POST /auth/signup: with SVC_SIGNUP_VERIFY on, 202 {status: "verification_sent", message} for
 * every address (signup_pending); off, 201 with the new account signed in, 409 conflict (email
 * taken). Both: 400 validation_failed; 429 rate_limited.
 */
enum svc_err svc_api_auth_signup(struct svc_req *req, struct svc_resp *resp)
{
	struct svc_db *db = req->ctx->db;
	const char *password, *display;
	char email[256], uid[37], hash[SVC_AUTH_HASH_MAX];
	struct new_user u;
	int err;

	if ((err = svc_api__auth_limit(req, resp, "signup_ip", req->limit_addr, &req->ctx->auth.rl_signup_ip)) < 0)
		return err;
	if (normalise_email(svc_json_str(req->json, "email"), email) < 0)
		return svc_resp_error(resp, SVC_E_VALIDATION, "email", "email is not a valid address");
	password = svc_json_str(req->json, "password");
	display = svc_json_str(req->json, "displayName");
	if (display && svc_is_blank(display))
		display = NULL;
	/* messages per address (known or not, so a 429 tells nothing), counted before the Argon2id work */
	if (req->ctx->auth.signup_verify &&
	    (err = svc_api__auth_limit(req, resp, "signup_account", email, &req->ctx->auth.rl_signup_account)) < 0)
		return err;
	if ((err = svc_auth_password_hash(password, strlen(password), hash)) < 0)
		return err;
	if (req->ctx->auth.signup_verify)
		return signup_pending(req, resp, email, hash, display);
	if (svc_uuid_v4(uid) < 0)
		return SVC_E_INTERNAL;

	u.uid = uid;
	u.email = email;
	u.hash = hash;
	u.display = display;
	if ((err = svc_db_tx(db, new_user_tx, &u)) < 0) {
		if (err == SVC_E_CONFLICT)
			return svc_resp_error(resp, err, "email", "An account with this email already exists.");
		return err;
	}
	if ((err = answer_new_account(req, resp, uid, email, 201)) < 0)
		return err;
	AUTH_LOG(req, "signup_ok", "user=%s", uid);
	return 0;
}

static const struct svc_field login_fields[] = {
	{ "email", SVC_V_STR, SVC_F_REQUIRED, 1, 254, NULL },
	{ "password", SVC_V_STR, SVC_F_REQUIRED, 1, 1024, NULL },
};
const struct svc_body svc_api_auth_login_body = SVC_BODY(login_fields);

/*
 * POST /auth/login: 200; 400 validation_failed; 401 unauthorized (wrong email or password); 429
 * rate_limited (SVC_RATE_LIMIT_LOGIN_IP attempts per address; SVC_RATE_LIMIT_LOGIN_ACCOUNT failures
 * of the account from this address: then even the right password waits for Retry-After; or the
 * account over SVC_RATE_LIMIT_LOGIN_ACCOUNT_MAX failures and this address not one it signed in
 * from: slowed to SVC_RATE_LIMIT_LOGIN_SLOW). svc_api__login_gate().
 */
enum svc_err svc_api_auth_login(struct svc_req *req, struct svc_resp *resp)
{
	const char *password, *hash = NULL, *uid = NULL;
	char email[256], safe[256];
	struct svc_rows *rows = NULL, *user = NULL;
	struct json_object *body;
	struct svc_dbv p;
	int64_t gen = 0;
	int err, bad_email;

	if ((err = svc_api__auth_limit(req, resp, "login_ip", req->limit_addr, &req->ctx->auth.rl_login_ip)) < 0)
		return err;
	password = svc_json_str(req->json, "password");
	bad_email = normalise_email(svc_json_str(req->json, "email"), email) < 0;
	if (!bad_email) {
		p = svc_dbv_str(email);
		if ((err = svc_db_run(req->ctx->db, STMT_USER_BY_EMAIL, &p, 1, &rows, NULL)) < 0)
			return err;
		if (rows && rows->nrows == 1) {
			uid = svc_rows_get(rows, 0, UECOL_ID);
			hash = svc_rows_get(rows, 0, UECOL_PASSWORD_HASH);
		}
		/* an unknown account is gated alike (uid NULL: no address is known), so 429s tell nothing */
		if ((err = svc_api__login_gate(req, resp, email, uid)) < 0)
			goto done;
	}
	err = svc_auth_password_verify(hash, password, strlen(password));
	if (err < 0 || !uid) {
		log_safe(svc_json_str(req->json, "email"), safe, sizeof safe);
		AUTH_LOG(req, "login_failed", "user=\"%s\" reason=password", safe);
		if (!bad_email && (err = svc_api__login_failed(req, email)) < 0)
			goto done;
		err = svc_resp_error(resp, SVC_E_UNAUTHORIZED, NULL, "Invalid email or password.");
		goto done;
	}
	if ((err = svc_api__login_ok(req, email, uid)) < 0)
		goto done;
	AUTH_LOG(req, "login_ok", "user=%s", uid);
	if ((err = svc_api__auth_user_row(req->ctx->db, STMT_USER_BY_ID, uid, &user)) < 0 ||
	    (err = svc_api__auth_gen(req->ctx->db, uid, &gen)) < 0)
		goto done;
	body = json_object_new_object();
	json_object_object_add(body, "user", svc_api__auth_user_json(user));
	if ((err = svc_api__auth_session(req, resp, uid, gen, body)) < 0) {
		json_object_put(body);
		goto done;
	}
	svc_resp_json(resp, 200, body);
done:
	svc_rows_free(user);
	svc_rows_free(rows);
	return err;
}

/* The refresh token of the request: body refreshToken, else the svc_refresh_token cookie; into `token` (SVC_AUTH_TOKEN_MAX + 1). */
static int refresh_token_of(struct svc_req *req, char *token, size_t size, const char **out)
{
	struct json_object *parsed = NULL;
	const char *t = NULL;

	if (req->body_len > 0) {
		if (svc_json_parse_object(req->body, req->body_len, &parsed) < 0)
			return SVC_E_INVALID_JSON;
		t = svc_json_str(parsed, "refreshToken");
		if (t && strlen(t) < size) {
			memcpy(token, t, strlen(t) + 1);
			t = token;
		} else {
			t = NULL;
		}
		json_object_put(parsed);
	}
	if (!t && svc_req_cookie(req, COOKIE_REFRESH, token, size) == 1)
		t = token;
	*out = t;
	return 0;
}

/*
 * POST /auth/refresh: 200 {user, accessToken, refreshToken, expiresIn} and both cookies: the
 * presented refresh token is exchanged for a new one of the same session (rotation); 401 when
 * it is missing or invalid, from before sessions were stored, of an ended session (logout,
 * reuse), from before a password change, or exchanged already more than
 * SVC_SESSION_REUSE_GRACE_MS ago (then the whole session ends: RFC 6819 §5.2.2.3); 429.
 */
enum svc_err svc_api_auth_refresh(struct svc_req *req, struct svc_resp *resp)
{
	const struct svc_config *c = &req->ctx->cfg;
	char token[SVC_AUTH_TOKEN_MAX + 1], jti[SVC_AUTH_ID_LEN + 1];
	struct svc_auth_claims claims;
	struct json_object *body;
	struct svc_rows *user = NULL;
	const char *t = NULL, *why = NULL;
	int64_t gen = 0;
	int err;

	if ((err = svc_api__auth_limit(req, resp, "refresh_ip", req->limit_addr, &req->ctx->auth.rl_refresh_ip)) < 0)
		return err;
	if ((err = refresh_token_of(req, token, sizeof token, &t)) < 0)
		return err;
	if (!t || svc_auth_jwt_verify_claims(c->jwt_secret, c->jwt_secret_len, c->jwt_issuer, SVC_TOKEN_REFRESH,
					     t, svc_now_ms() / 1000, &claims) < 0) {
		AUTH_LOG(req, "refresh_failed", "token=%s", t ? "invalid" : "missing");
		OPENSSL_cleanse(token, sizeof token);
		return svc_resp_error(resp, SVC_E_UNAUTHORIZED, NULL, "The refresh token is missing or invalid.");
	}
	OPENSSL_cleanse(token, sizeof token);
	err = svc_session_rotate(req->ctx->db, &claims, svc_now_ms(), SVC_SESSION_REUSE_GRACE_MS, c->refresh_ttl_secs,
				 jti, &gen, &why);
	if (err == SVC_E_UNAUTHORIZED) {
		AUTH_LOG(req, "refresh_failed", "token=%s user=%s", why, claims.user_id);
		if (strcmp(why, "password_changed") == 0)
			return svc_resp_error(resp, err, NULL, "This session ended when the password changed; sign in again.");
		if (strcmp(why, "reused") == 0)
			return svc_resp_error(resp, err, NULL, "This refresh token was used before, so the session is ended; sign in again.");
		return svc_resp_error(resp, err, NULL, "This session has ended; sign in again.");
	}
	if (err < 0)
		return err;
	if ((err = svc_api__auth_user_row(req->ctx->db, STMT_USER_BY_ID, claims.user_id, &user)) < 0)
		return err;
	AUTH_LOG(req, "refresh_ok", "user=%s", claims.user_id);
	body = json_object_new_object();
	json_object_object_add(body, "user", svc_api__auth_user_json(user));
	svc_rows_free(user);
	if ((err = issue_tokens(req, resp, claims.user_id, gen, claims.family, jti, body)) < 0) {
		json_object_put(body);
		return err;
	}
	return svc_resp_json(resp, 200, body);
}

/*
 * POST /auth/logout: 200; ends the session of the refresh token presented (cookie or body
 * refreshToken) and of the access token, when valid: their refresh tokens and access tokens stop
 * at once; clears both cookies. Answers 200 without any token too.
 */
enum svc_err svc_api_auth_logout(struct svc_req *req, struct svc_resp *resp)
{
	const struct svc_config *c = &req->ctx->cfg;
	char token[SVC_AUTH_TOKEN_MAX + 1], uid[37];
	struct svc_auth_claims claims;
	struct json_object *body;
	const char *t = NULL;
	int64_t now = svc_now_ms();
	int err;

	if ((err = refresh_token_of(req, token, sizeof token, &t)) < 0)
		return err;
	if (t && svc_auth_jwt_verify_claims(c->jwt_secret, c->jwt_secret_len, c->jwt_issuer, SVC_TOKEN_REFRESH, t,
					    now / 1000, &claims) == 0 && claims.family[0]) {
		if ((err = svc_session_revoke(req->ctx->db, claims.user_id, claims.family, "logout", now)) < 0)
			return err;
		AUTH_LOG(req, "logout", "user=%s", claims.user_id);
	}
	OPENSSL_cleanse(token, sizeof token);
	/* the access token's session too (a client that keeps its refresh token elsewhere) */
	if (svc_req_authenticate(req, uid) == 0 && req->session_id[0] &&
	    (err = svc_session_revoke(req->ctx->db, uid, req->session_id, "logout", now)) < 0)
		return err;
	svc_resp_cookie(resp, COOKIE_ACCESS, "", "/", 0);
	svc_resp_cookie(resp, COOKIE_REFRESH, "", REFRESH_PATH, 0);
	body = json_object_new_object();
	json_object_object_add(body, "ok", json_object_new_boolean(1));
	return svc_resp_json(resp, 200, body);
}

/*
 * 1 when this instance offers live collaboration: its settings name where
 * svc-wsd answers (SVC_WS_URL or SVC_WS_PORT). Without either, the app hides
 * the collaborative editor (docs/api.md "GET /auth/me").
 */
static int collaboration_offered(const struct svc_config *cfg)
{
	return svc_config_is_set(cfg, "SVC_WS_URL") || svc_config_is_set(cfg, "SVC_WS_PORT");
}

/*
 * Whether the plan of workspace `def` (the caller's workspace of GET /auth/me, a JSON object with
 * an id; may be NULL) allows custom domains (svc_plan_domain_limit() above 0). Issue 25, item 13.
 */
static int custom_domains_offered(struct svc_req *req, struct json_object *def)
{
	const char *wid = def ? json_object_get_string(json_object_object_get(def, "id")) : NULL;
	struct svc_rows *ws = NULL;
	struct svc_dbv p;
	int yes = 0;

	if (!wid)
		return 0;
	p = svc_dbv_str(wid);
	if (svc_db_run(req->ctx->db, STMT_WS_PLAN_GET, &p, 1, &ws, NULL) == 0 && ws && ws->nrows == 1)
		yes = svc_plan_domain_limit(&req->ctx->cfg, svc_rows_get(ws, 0, WPCOL_PLAN)) > 0;
	svc_rows_free(ws);
	return yes;
}

/* GET /auth/me: 200 {user, workspace, workspaces, features, credential, assistant}; 401. */
enum svc_err svc_api_auth_me(struct svc_req *req, struct svc_resp *resp)
{
	const struct svc_auth_config *a = &req->ctx->auth;
	struct svc_rows *user = NULL, *rows = NULL;
	struct json_object *body, *features, *oauth, *def = NULL;
	struct svc_dbv p, p2;
	int err, i;

	if ((err = svc_api__auth_user_row(req->ctx->db, STMT_USER_BY_ID, req->user_id, &user)) < 0)
		return err;
	body = json_object_new_object();
	json_object_object_add(body, "user", svc_api__auth_user_json(user));
	svc_rows_free(user);
	json_object_object_add(body, "workspaces", workspaces_json(req, req->user_id, &def));
	json_object_object_add(body, "workspace", def);
	features = json_object_new_object();
	json_object_object_add(features, "aiProvider",
			       json_object_new_boolean(req->ctx->cfg.ai_base_url[0] != '\0'));
	json_object_object_add(features, "collaboration", json_object_new_boolean(collaboration_offered(&req->ctx->cfg)));
	json_object_object_add(features, "customDomains", json_object_new_boolean(custom_domains_offered(req, def)));
	json_object_object_add(features, "passwordReset", json_object_new_boolean(a->smtp_url[0] != '\0'));
	json_object_object_add(features, "apiTokens", json_object_new_boolean(1));
	oauth = json_object_new_object();
	for (i = 0; i < SVC_OAUTH__MAX; i++)
		json_object_object_add(oauth, svc_oauth_provider_get((enum svc_oauth_id)i)->name,
				       json_object_new_boolean(a->oauth[i].client_id[0] != '\0'));
	json_object_object_add(features, "oauth", oauth);
	json_object_object_add(body, "features", features);
	json_object_object_add(body, "credential", json_object_new_string(req->token_id[0] ? "apiToken" : "session"));
	/* the member's own assistant token: whether it is there, never the token */
	p = svc_dbv_str(req->user_id);
	p2 = svc_dbv_str("github");
	{
		struct svc_dbv q[2] = { p, p2 };
		struct json_object *as = json_object_new_object();
		if (svc_db_run(req->ctx->db, STMT_ASSISTANT_GET, q, 2, &rows, NULL) == 0 && rows && rows->nrows == 1) {
			json_object_object_add(as, "connected", json_object_new_boolean(1));
			svc_json_add_str(as, "login", svc_rows_get(rows, 0, ASCOL_LOGIN));
			svc_json_add_time(as, "updatedAt", svc_rows_get(rows, 0, ASCOL_UPDATED));
		} else {
			json_object_object_add(as, "connected", json_object_new_boolean(0));
		}
		svc_rows_free(rows);
		json_object_object_add(body, "assistant", as);
	}
	return svc_resp_json(resp, 200, body);
}

/* ---- per-user API tokens (docs/api.md "API tokens") ---- */

static struct json_object *token_json(const struct svc_rows *rows, size_t r, const char *user_id)
{
	struct json_object *o = json_object_new_object(), *arr = json_object_new_array();
	unsigned scopes = svc_pat_scopes_parse(svc_rows_get(rows, r, TCOL_SCOPES)), bit;

	(void)user_id;
	svc_json_add_str(o, "id", svc_rows_get(rows, r, TCOL_ID));
	svc_json_add_str(o, "name", svc_rows_get(rows, r, TCOL_NAME));
	for (bit = 1; bit <= SVC_PAT_ALL; bit <<= 1)
		if (scopes & bit)
			json_object_array_add(arr, json_object_new_string(svc_pat_scope_name(bit)));
	json_object_object_add(o, "scopes", arr);
	svc_json_add_str(o, "prefix", svc_rows_get(rows, r, TCOL_PREFIX));
	svc_json_add_time(o, "createdAt", svc_rows_get(rows, r, TCOL_CREATED));
	svc_json_add_time(o, "lastUsedAt", svc_rows_get(rows, r, TCOL_LAST_USED));
	return o;
}

/* GET /auth/tokens: 200 {items: [{id, name, scopes, prefix, createdAt, lastUsedAt}]}, newest first; 401; 403 for an API token. */
enum svc_err svc_api_auth_tokens_list(struct svc_req *req, struct svc_resp *resp)
{
	static const struct svc_items it = { SVC_ITEMS_OF_USER, NULL, SVC_ACT_READ, STMT_TOKEN_LIST, token_json };

	return svc_resp_items(req, resp, &it);
}

static const struct svc_field token_fields[] = {
	{ "name", SVC_V_TEXT, SVC_F_REQUIRED, 1, 128, NULL },
	{ "scopes", SVC_V_ARRAY, SVC_F_REQUIRED, 0, 16, NULL },
};
const struct svc_body svc_api_auth_tokens_create_body = SVC_BODY(token_fields);

/*
 * POST /auth/tokens {name, scopes}: 201 with the token's fields and "token", the secret, shown
 * this once; 400 validation_failed (name 1-128 characters; scopes a non-empty array of known
 * names); 401; 403 for an API token; 409 conflict (SVC_API_TOKENS_MAX reached).
 */
enum svc_err svc_api_auth_tokens_create(struct svc_req *req, struct svc_resp *resp)
{
	struct svc_db *db = req->ctx->db;
	char token[SVC_PAT_LEN + 1], hash[65], prefix[SVC_PAT_SHOWN + 1], id[37], scopes_text[128];
	struct json_object *arr, *body = NULL, *details;
	struct svc_rows *rows = NULL;
	struct svc_dbv p[6];
	uint64_t count = 0;
	unsigned scopes = 0;
	size_t i, n;
	int err;

	json_object_object_get_ex(req->json, "scopes", &arr);
	n = json_object_array_length(arr);
	if (n == 0)
		return svc_resp_error(resp, SVC_E_VALIDATION, "scopes", "scopes must name at least one scope");
	for (i = 0; i < n; i++) {
		struct json_object *v = json_object_array_get_idx(arr, i);
		unsigned bit = json_object_is_type(v, json_type_string) ? svc_pat_scope_bit(json_object_get_string(v)) : 0;
		if (!bit)
			return svc_resp_error(resp, SVC_E_VALIDATION, "scopes",
					      "scopes may hold projects:read, projects:write, chat, deploy and admin");
		scopes |= bit;
	}
	p[0] = svc_dbv_str(req->user_id);
	if ((err = svc_db_run(db, STMT_TOKEN_COUNT, p, 1, &rows, NULL)) < 0)
		return err;
	if (rows && rows->nrows == 1 && svc_rows_get(rows, 0, TCCOL_COUNT))
		svc_parse_u64(svc_rows_get(rows, 0, TCCOL_COUNT), UINT64_MAX, &count);
	svc_rows_free(rows);
	rows = NULL;
	if (count >= req->ctx->auth.max_tokens_per_user)
		return svc_resp_error(resp, SVC_E_CONFLICT, NULL, "You have %llu API tokens, the most allowed; revoke one first.",
				      (unsigned long long)count);
	if (svc_pat_generate(token) < 0 || svc_uuid_v4(id) < 0 ||
	    svc_pat_scopes_format(scopes, scopes_text, sizeof scopes_text) < 0 ||
	    svc_sha256_hex(token, strlen(token), hash) < 0) {
		err = SVC_E_INTERNAL;
		goto done;
	}
	memcpy(prefix, token, SVC_PAT_SHOWN);
	prefix[SVC_PAT_SHOWN] = '\0';
	p[0] = svc_dbv_str(id);
	p[1] = svc_dbv_str(req->user_id);
	p[2] = svc_dbv_str(svc_json_str(req->json, "name"));
	p[3] = svc_dbv_str(hash);
	p[4] = svc_dbv_str(prefix);
	p[5] = svc_dbv_str(scopes_text);
	/* the admin audit log (issue 25 item 10): who made which token with which scopes, never the secret */
	details = json_object_new_object();
	svc_json_add_str(details, "name", svc_json_str(req->json, "name"));
	json_object_object_add(details, "scopes", json_object_get(arr));
	err = svc_api_integrations__audited(req, STMT_TOKEN_INSERT, p, 6, 0, "auth.tokens.create", id, details, NULL);
	json_object_put(details);
	if (err < 0)
		goto done;
	p[1] = svc_dbv_str(req->user_id);
	if ((err = svc_db_run(db, STMT_TOKEN_GET, p, 2, &rows, NULL)) < 0)
		goto done;
	if (!rows || rows->nrows != 1) {
		err = SVC_E_INTERNAL;
		goto done;
	}
	body = token_json(rows, 0, req->user_id);
	json_object_object_add(body, "token", json_object_new_string(token));
	AUTH_LOG(req, "token_created", "user=%s token=%s", req->user_id, id);
	err = svc_resp_json(resp, 201, body);
done:
	svc_rows_free(rows);
	OPENSSL_cleanse(token, sizeof token);
	return err;
}

/* DELETE /auth/tokens/:tokenId: 204 (the token stops working at once); 401; 403 for an API token; 404. */
enum svc_err svc_api_auth_tokens_delete(struct svc_req *req, struct svc_resp *resp)
{
	struct json_object *details = json_object_new_object();
	struct svc_dbv p[2];
	int err;

	p[0] = svc_dbv_str(svc_req_param(req, "tokenId"));
	p[1] = svc_dbv_str(req->user_id);
	/* the delete and its audit entry together; no row deleted: nothing recorded, 404 */
	err = svc_api_integrations__audited(req, STMT_TOKEN_DELETE, p, 2, 1, "auth.tokens.revoke",
					    svc_req_param(req, "tokenId"), details, NULL);
	json_object_put(details);
	if (err == SVC_E_NOT_FOUND)
		return svc_resp_error(resp, SVC_E_NOT_FOUND, NULL, "No such API token.");
	if (err < 0)
		return err;
	AUTH_LOG(req, "token_revoked", "user=%s token=%s", req->user_id, svc_req_param(req, "tokenId"));
	resp->status = 204;
	return 0;
}

/* ---- password reset (docs/api.md "Password reset"; the mail itself: lib/auth/auth_mail.c) ---- */

static const struct svc_field forgot_fields[] = {
	{ "email", SVC_V_STR, SVC_F_REQUIRED, 1, 254, NULL },
};
const struct svc_body svc_api_auth_forgot_body = SVC_BODY(forgot_fields);

/*
 * POST /auth/forgot-password {email}: always 202 {ok, message} with the same body, after the same
 * work, whether or not an account has that address: the request queues a SVC_JOB_RESET_MAIL job,
 * svc-worker does the rest; 400 validation_failed (email missing or not an address); 429
 * rate_limited (SVC_RATE_LIMIT_RESET_IP, SVC_RATE_LIMIT_RESET_ACCOUNT).
 */
enum svc_err svc_api_auth_forgot(struct svc_req *req, struct svc_resp *resp)
{
	const struct svc_auth_config *a = &req->ctx->auth;
	char email[256], safe[256];
	struct json_object *body, *job;
	int err;

	if ((err = svc_api__auth_limit(req, resp, "reset_ip", req->limit_addr, &a->rl_reset_ip)) < 0)
		return err;
	if (normalise_email(svc_json_str(req->json, "email"), email) < 0)
		return svc_resp_error(resp, SVC_E_VALIDATION, "email", "email is not a valid address");
	if ((err = svc_api__auth_limit(req, resp, "reset_account", email, &a->rl_reset_account)) < 0)
		return err;
	if (!(job = json_object_new_object()))
		return SVC_E_INTERNAL;
	json_object_object_add(job, "email", json_object_new_string(email));
	err = svc_jobs_enqueue(req->ctx->db, SVC_JOB_RESET_MAIL, json_object_to_json_string_ext(job, JSON_C_TO_STRING_PLAIN),
			       3, NULL);
	json_object_put(job);
	if (err < 0)
		return err;
	log_safe(email, safe, sizeof safe);
	AUTH_LOG(req, "reset_requested", "user=\"%s\"", safe);
	body = json_object_new_object();
	json_object_object_add(body, "ok", json_object_new_boolean(1));
	json_object_object_add(body, "message", json_object_new_string(
		"If an account uses this address, a message with a reset link is on its way."));
	return svc_resp_json(resp, 202, body);
}

/* The 400 invalid_token answer (not one of the router's codes, so built here), logged as `event`. */
static int invalid_token(struct svc_req *req, struct svc_resp *resp, const char *event, const char *message)
{
	struct json_object *body = json_object_new_object();

	AUTH_LOG(req, event, "token=invalid");
	json_object_object_add(body, "error", json_object_new_string("invalid_token"));
	json_object_object_add(body, "message", json_object_new_string(message));
	return svc_resp_json(resp, 400, body);
}

#define RESET_INVALID "This reset link is not valid: it was used, it expired, or it was never issued. Ask for a new one."
#define VERIFY_INVALID "This link is not valid: it was used, it expired, or it was never issued. Sign up again."

static int is_lower_hex(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return s[n] == '\0';
}

static const struct svc_field reset_fields[] = {
	{ "token", SVC_V_STR, SVC_F_REQUIRED, 1, 256, NULL },
	{ "password", SVC_V_STR, SVC_F_REQUIRED, 8, 1024, NULL },
};
const struct svc_body svc_api_auth_reset_body = SVC_BODY(reset_fields);

/* Using a reset token, a transaction of svc_db_tx(): SVC_E_NOT_FOUND when the token is used, expired or unknown. */
struct reset_use {
	const char *hash, *pwhash;
	char uid[37];
};

static int reset_tx(struct svc_db *db, void *arg)
{
	struct reset_use *r = arg;
	struct svc_rows *rows = NULL;
	struct svc_dbv p[2];
	uint64_t affected = 0;
	int err;

	p[0] = svc_dbv_str(r->hash);
	/* single use even under concurrency: only one UPDATE finds used_at still NULL */
	if ((err = svc_db_run(db, STMT_RESET_USE, p, 1, NULL, &affected)) < 0)
		return err;
	if (affected != 1)
		return SVC_E_NOT_FOUND;
	if ((err = svc_db_run(db, STMT_RESET_USER, p, 1, &rows, NULL)) < 0)
		goto done;
	if (!rows || rows->nrows != 1 || !svc_uuid_valid(svc_rows_get(rows, 0, RSCOL_USER) ? svc_rows_get(rows, 0, RSCOL_USER) : "")) {
		err = SVC_E_INTERNAL;
		goto done;
	}
	memcpy(r->uid, svc_rows_get(rows, 0, RSCOL_USER), sizeof r->uid);
	p[0] = svc_dbv_str(r->pwhash);
	p[1] = svc_dbv_str(r->uid);
	/* like a password change, a reset ends the sessions of whoever had the old one */
	if ((err = svc_db_run(db, STMT_AUTH_USER_NEW_PASSWORD, p, 2, NULL, NULL)) < 0)
		goto done;
	p[0] = svc_dbv_str(r->uid);
	/* the link came to the address: it is the user's from now on (OAuth may link to it) */
	if ((err = svc_db_run(db, STMT_RESET_INVALIDATE_USER, p, 1, NULL, NULL)) == 0)
		err = svc_db_run(db, STMT_USER_EMAIL_VERIFIED, p, 1, NULL, NULL);
done:
	svc_rows_free(rows);
	return err;
}

/*
 * POST /auth/reset-password {token, password}: 200 {ok}; the token is used up, every other
 * outstanding reset token of the account stops working, and so do its refresh tokens (session_gen); 400 validation_failed (password shorter
 * than 8 or longer than 1024 characters, token missing); 400 invalid_token (used, expired,
 * unknown); 429 rate_limited (SVC_RATE_LIMIT_RESET_IP).
 */
enum svc_err svc_api_auth_reset(struct svc_req *req, struct svc_resp *resp)
{
	struct svc_db *db = req->ctx->db;
	const char *token, *password;
	char hash[65], pwhash[SVC_AUTH_HASH_MAX];
	struct json_object *body;
	struct reset_use r;
	int err;

	if ((err = svc_api__auth_limit(req, resp, "reset_ip", req->limit_addr, &req->ctx->auth.rl_reset_ip)) < 0)
		return err;
	token = svc_json_str(req->json, "token");
	password = svc_json_str(req->json, "password");
	if (strlen(token) != 2 * SVC_AUTH_LINK_TOKEN_BYTES || !is_lower_hex(token, 2 * SVC_AUTH_LINK_TOKEN_BYTES))
		return invalid_token(req, resp, "reset_failed", RESET_INVALID);
	if ((err = svc_auth_password_hash(password, strlen(password), pwhash)) < 0)
		return err;
	if ((err = svc_sha256_hex(token, strlen(token), hash)) < 0)
		return err;
	r.hash = hash;
	r.pwhash = pwhash;
	if ((err = svc_db_tx(db, reset_tx, &r)) < 0) {
		if (err == SVC_E_NOT_FOUND)
			return invalid_token(req, resp, "reset_failed", RESET_INVALID);
		return err;
	}
	svc_shm_epoch_bump(); /* the old generation's cached session checks on this host end now */
	AUTH_LOG(req, "reset_ok", "user=%s", r.uid);
	body = json_object_new_object();
	json_object_object_add(body, "ok", json_object_new_boolean(1));
	return svc_resp_json(resp, 200, body);
}

static const struct svc_field verify_fields[] = {
	{ "token", SVC_V_STR, SVC_F_REQUIRED, 1, 256, NULL },
};
const struct svc_body svc_api_auth_verify_body = SVC_BODY(verify_fields);

/*
 * Using a sign-up link, a transaction of svc_db_tx(): the account `uid` made from the pending sign-up
 * (its address into `email`), every pending sign-up of the address gone. Returns 0; 1 when an account
 * got the address meanwhile (the pending sign-ups still go, committed); SVC_E_NOT_FOUND for a used,
 * expired or unknown token; DB errors.
 */
struct signup_verify {
	const char *hash, *uid;
	char email[256];
};

static int verify_tx(struct svc_db *db, void *arg)
{
	struct signup_verify *v = arg;
	struct svc_rows *rows = NULL, *user = NULL;
	struct svc_dbv p = svc_dbv_str(v->hash);
	int err;

	if ((err = svc_db_run(db, STMT_SIGNUP_BY_TOKEN, &p, 1, &rows, NULL)) < 0)
		return err;
	if (!rows || rows->nrows != 1) {
		err = SVC_E_NOT_FOUND;
		goto done;
	}
	snprintf(v->email, sizeof v->email, "%s", svc_rows_get(rows, 0, STCOL_EMAIL));
	/* one link settles the address: the other pending sign-ups of it (a stranger's too) go */
	p = svc_dbv_str(v->email);
	if ((err = svc_db_run(db, STMT_SIGNUP_DELETE_EMAIL, &p, 1, NULL, NULL)) < 0 ||
	    (err = svc_db_run(db, STMT_USER_BY_EMAIL, &p, 1, &user, NULL)) < 0)
		goto done;
	if (user && user->nrows == 1) {
		err = 1;
		goto done;
	}
	if ((err = create_user(db, v->uid, v->email, svc_rows_get(rows, 0, STCOL_PASSWORD_HASH),
			       svc_rows_get(rows, 0, STCOL_NAME))) < 0)
		goto done;
	p = svc_dbv_str(v->uid);
	err = svc_db_run(db, STMT_USER_EMAIL_VERIFIED, &p, 1, NULL, NULL);
done:
	svc_rows_free(rows);
	svc_rows_free(user);
	return err;
}

/*
 * POST /auth/verify-email {token}: the link of a pending sign-up. 200 with the new account signed
 * in ({user, workspace, accessToken, refreshToken, expiresIn}, both cookies; the address counts as
 * verified); every pending sign-up of the address goes. 400 invalid_token (used, expired, unknown,
 * malformed); 409 conflict (an account got the address meanwhile: OAuth, another link; the pending
 * sign-ups go); 400 validation_failed; 429 rate_limited (SVC_RATE_LIMIT_VERIFY_IP).
 */
enum svc_err svc_api_auth_verify_email(struct svc_req *req, struct svc_resp *resp)
{
	struct svc_db *db = req->ctx->db;
	const char *token;
	char hash[65], uid[37];
	struct signup_verify v;
	int err;

	if ((err = svc_api__auth_limit(req, resp, "verify_ip", req->limit_addr, &req->ctx->auth.rl_verify_ip)) < 0)
		return err;
	token = svc_json_str(req->json, "token");
	if (strlen(token) != 2 * SVC_AUTH_LINK_TOKEN_BYTES || !is_lower_hex(token, 2 * SVC_AUTH_LINK_TOKEN_BYTES))
		return invalid_token(req, resp, "verify_failed", VERIFY_INVALID);
	if (svc_uuid_v4(uid) < 0)
		return SVC_E_INTERNAL;
	if ((err = svc_sha256_hex(token, strlen(token), hash)) < 0)
		return err;
	v.hash = hash;
	v.uid = uid;
	err = svc_db_tx(db, verify_tx, &v);
	if (err == SVC_E_NOT_FOUND)
		return invalid_token(req, resp, "verify_failed", VERIFY_INVALID);
	if (err == 1 || err == SVC_E_CONFLICT) {
		AUTH_LOG(req, "verify_failed", "token=account_exists");
		return svc_resp_error(resp, SVC_E_CONFLICT, "token",
				      "An account with this address exists already. Sign in, or reset its password.");
	}
	if (err < 0)
		return err;
	if ((err = answer_new_account(req, resp, uid, v.email, 200)) < 0)
		return err;
	AUTH_LOG(req, "signup_ok", "user=%s verified=1", uid);
	return err;
}

/* ---- OAuth sign-in (docs/api.md "OAuth sign-in") ---- */

/* The provider named by the path segment after /api/auth/, or NULL. */
static const struct svc_oauth_provider *path_provider(const struct svc_req *req)
{
	const char *s = req->path + strlen("/api/auth/");
	char name[16];
	size_t n = 0;

	if (strncmp(req->path, "/api/auth/", strlen("/api/auth/")) != 0)
		return NULL;
	while (s[n] && s[n] != '/' && n < sizeof name - 1) {
		name[n] = s[n];
		n++;
	}
	name[n] = '\0';
	return svc_oauth_provider_find(name);
}

/* Answers 302 to {app_url}{page}, with "?error=<code>" (a fixed word) when `error` is set. */
static int redirect_app(struct svc_req *req, struct svc_resp *resp, const char *page, const char *error)
{
	char url[1024];
	int n;

	if (error)
		n = snprintf(url, sizeof url, "%s%s%serror=%s", req->ctx->cfg.app_url, page,
			     strchr(page, '?') ? "&" : "?", error);
	else
		n = snprintf(url, sizeof url, "%s%s", req->ctx->cfg.app_url, page);
	if (n < 0 || (size_t)n >= sizeof url)
		return SVC_E_INTERNAL;
	svc_resp_header(resp, "Location", url);
	resp->status = 302;
	return 0;
}

/* A sign-in failure: logged, the state cookie cleared, and 302 to {app_url}/login?error=<code>. */
static int oauth_fail(struct svc_req *req, struct svc_resp *resp, const struct svc_oauth_provider *p,
		      const char *page, const char *code)
{
	AUTH_LOG(req, "oauth_failed", "provider=%s reason=%s", p->name, code);
	return redirect_app(req, resp, page, code);
}

/* A provider that has no client id: 404 with a message that says so. */
static int not_configured(struct svc_resp *resp, const struct svc_oauth_provider *p)
{
	return svc_resp_error(resp, SVC_E_NOT_FOUND, NULL, "%s sign-in is not configured on this instance.",
			      p ? p->label : "This");
}

/*
 * Starts a flow: state cookie and 302 to the provider's authorization page. `flow` is
 * FLOW_SIGNIN, FLOW_LINK (the signed-in user connects the provider account; same client and
 * redirect as sign-in) or FLOW_ASSISTANT (its own client, scope and redirect); the last two
 * bind the state to req->user_id.
 */
static int oauth_begin(struct svc_req *req, struct svc_resp *resp, const struct svc_oauth_provider *p, const char *flow)
{
	const struct svc_auth_config *a = &req->ctx->auth;
	const struct svc_config *c = &req->ctx->cfg;
	char state[SVC_OAUTH_STATE_MAX], cookie[SVC_OAUTH_COOKIE_MAX], verifier[SVC_OAUTH_VERIFIER_LEN + 1];
	int assistant = strcmp(flow, FLOW_ASSISTANT) == 0, signin = strcmp(flow, FLOW_SIGNIN) == 0;
	char *url = NULL;
	int err;

	if ((err = svc_api__auth_limit(req, resp, "oauth_ip", req->limit_addr, &a->rl_oauth_ip)) < 0)
		return err;
	if ((err = svc_oauth_state_make(c->jwt_secret, c->jwt_secret_len, p->name, flow, signin ? "" : req->user_id,
					svc_now_ms() / 1000, a->oauth_state_ttl_secs, state, cookie, verifier)) < 0)
		return err;
	if ((err = svc_oauth_authorize_url(p, &a->oauth[p->id], assistant, state, verifier, &url)) < 0)
		goto done;
	if ((err = svc_resp_cookie(resp, COOKIE_OAUTH, cookie, REFRESH_PATH, a->oauth_state_ttl_secs)) < 0 ||
	    (err = svc_resp_header(resp, "Location", url)) < 0)
		goto done;
	resp->status = 302;
done:
	free(url);
	OPENSSL_cleanse(verifier, sizeof verifier);
	OPENSSL_cleanse(cookie, sizeof cookie);
	return err;
}

/* GET /auth/github, /auth/google: 302 to the provider (sets the svc_oauth cookie); 404 not configured; 429. */
enum svc_err svc_api_auth_oauth_start(struct svc_req *req, struct svc_resp *resp)
{
	const struct svc_oauth_provider *p = path_provider(req);

	if (!p || !req->ctx->auth.oauth[p->id].client_id[0])
		return not_configured(resp, p);
	return oauth_begin(req, resp, p, FLOW_SIGNIN);
}

/* GET /auth/github/link, /auth/google/link: (signed in) 302 to the provider to connect its account; 404 not configured; 429. */
enum svc_err svc_api_auth_oauth_link_start(struct svc_req *req, struct svc_resp *resp)
{
	const struct svc_oauth_provider *p = path_provider(req);

	if (!p || !req->ctx->auth.oauth[p->id].client_id[0])
		return not_configured(resp, p);
	return oauth_begin(req, resp, p, FLOW_LINK);
}

/*
 * Finds the user of profile `prof` from provider `p`: the linked identity,
 * else the account with the same verified address (linked now), else a new
 * account with its personal workspace. Writes the user id into out (37
 * bytes). Returns 0, SVC_E_FORBIDDEN (no verified address), SVC_E_UNAUTHORIZED (an account has the
 * address but never showed it to be its own: no link, review finding 6 of issue 17), DB errors.
 */
/* Linking an identity (to the account of its address, or to a new one), a transaction of svc_db_tx(). */
struct identity_link {
	const struct svc_oauth_provider *p;
	const struct svc_oauth_profile *prof;
	const char *email;
	char uid[37];
};

static int identity_link_tx(struct svc_db *db, void *arg)
{
	struct identity_link *l = arg;
	struct svc_rows *rows = NULL;
	struct svc_dbv q[4];
	const char *display;
	int err;

	q[0] = svc_dbv_str(l->email);
	if ((err = svc_db_run(db, STMT_USER_BY_EMAIL, q, 1, &rows, NULL)) < 0)
		return err;
	if (rows && rows->nrows == 1) {
		/* an address the account never showed to be its own (a sign-up without verification) could
		 * be anyone's: linking would hand the account to its real owner's provider, or the other way
		 * round (pre-account takeover, review finding 6 of issue 17) */
		if (strcmp(svc_rows_get(rows, 0, UECOL_VERIFIED) ? svc_rows_get(rows, 0, UECOL_VERIFIED) : "0", "1") != 0) {
			err = SVC_E_UNAUTHORIZED;
			goto done;
		}
		memcpy(l->uid, svc_rows_get(rows, 0, UECOL_ID), 37);
	} else {
		display = l->prof->name[0] && !svc_is_blank(l->prof->name) ? l->prof->name
									: (l->prof->login[0] ? l->prof->login : NULL);
		if (svc_uuid_v4(l->uid) < 0) {
			err = SVC_E_INTERNAL;
			goto done;
		}
		q[0] = svc_dbv_str(l->uid);
		if ((err = create_user(db, l->uid, l->email, NULL, display)) < 0 ||
		    (err = svc_db_run(db, STMT_USER_EMAIL_VERIFIED, q, 1, NULL, NULL)) < 0)
			goto done;
	}
	q[0] = svc_dbv_str(l->p->name);
	q[1] = svc_dbv_str(l->prof->subject);
	q[2] = svc_dbv_str(l->uid);
	q[3] = svc_dbv_str(l->email);
	err = svc_db_run(db, STMT_IDENTITY_INSERT, q, 4, NULL, NULL);
done:
	svc_rows_free(rows);
	return err;
}

static int oauth_user(struct svc_req *req, const struct svc_oauth_provider *p, const struct svc_oauth_profile *prof,
		      char *out)
{
	struct svc_db *db = req->ctx->db;
	struct svc_rows *rows = NULL;
	struct identity_link l = { p, prof, NULL, "" };
	struct svc_dbv q[3];
	char email[256];
	int err, attempt;

	for (attempt = 0; attempt < 2; attempt++) {
		q[0] = svc_dbv_str(p->name);
		q[1] = svc_dbv_str(prof->subject);
		if ((err = svc_db_run(db, STMT_IDENTITY_GET, q, 2, &rows, NULL)) < 0)
			return err;
		if (rows && rows->nrows == 1 && svc_uuid_valid(svc_rows_get(rows, 0, IDCOL_USER) ? svc_rows_get(rows, 0, IDCOL_USER) : "")) {
			memcpy(out, svc_rows_get(rows, 0, IDCOL_USER), 37);
			svc_rows_free(rows);
			q[0] = svc_dbv_str(prof->email_verified ? prof->email : NULL);
			q[1] = svc_dbv_str(p->name);
			q[2] = svc_dbv_str(prof->subject);
			svc_db_run(db, STMT_IDENTITY_TOUCH, q, 3, NULL, NULL);
			return 0;
		}
		svc_rows_free(rows);
		rows = NULL;
		/* only a verified address may name (or claim) an account */
		if (!prof->email_verified || normalise_email(prof->email, email) < 0)
			return SVC_E_FORBIDDEN;
		l.email = email;
		if ((err = svc_db_tx(db, identity_link_tx, &l)) >= 0) {
			memcpy(out, l.uid, 37);
			return 0;
		}
		if (err != SVC_E_CONFLICT)
			return err;
		/* another sign-in of the same account won the race: look again */
	}
	return SVC_E_CONFLICT;
}

/*
 * Reads the callback's state and svc_oauth cookie and checks the state for `flow` and
 * `user_id` ("" for sign-in). On success writes the PKCE verifier (SVC_OAUTH_VERIFIER_LEN + 1
 * bytes) and returns 0; else SVC_E_UNAUTHORIZED.
 */
static int callback_state(struct svc_req *req, const struct svc_oauth_provider *p, const char *flow,
			  const char *user_id, char *out_verifier)
{
	const struct svc_config *c = &req->ctx->cfg;
	char state[SVC_OAUTH_STATE_MAX], cookie[SVC_OAUTH_COOKIE_MAX];

	if (svc_req_query(req, "state", state, sizeof state) != 1 ||
	    svc_req_cookie(req, COOKIE_OAUTH, cookie, sizeof cookie) != 1 ||
	    svc_oauth_state_check(c->jwt_secret, c->jwt_secret_len, p->name, flow, user_id, state, cookie,
				  svc_now_ms() / 1000, out_verifier) < 0)
		return SVC_E_UNAUTHORIZED;
	return 0;
}

/* The provider's error parameter as one of our codes: access_denied or provider_error. */
static const char *provider_error(const char *error)
{
	return strcmp(error, "access_denied") == 0 ? "access_denied" : "provider_error";
}

/*
 * Connects the account `prof` of provider `p` to user `uid` (the link flow). Returns 0 (also
 * when it already is), SVC_E_CONFLICT when it belongs to another user, SVC_E_FORBIDDEN when
 * `uid` has another account of that provider, DB errors.
 */
static int oauth_link(struct svc_req *req, const struct svc_oauth_provider *p, const struct svc_oauth_profile *prof,
		      const char *uid)
{
	struct svc_db *db = req->ctx->db;
	struct svc_rows *rows = NULL;
	struct svc_dbv q[4];
	char email[256];
	int err;

	q[0] = svc_dbv_str(p->name);
	q[1] = svc_dbv_str(prof->subject);
	if ((err = svc_db_run(db, STMT_IDENTITY_GET, q, 2, &rows, NULL)) < 0)
		return err;
	if (rows && rows->nrows == 1) {
		const char *owner = svc_rows_get(rows, 0, IDCOL_USER);
		err = owner && strcmp(owner, uid) == 0 ? 0 : SVC_E_CONFLICT;
		svc_rows_free(rows);
		return err;
	}
	svc_rows_free(rows);
	rows = NULL;
	q[0] = svc_dbv_str(uid);
	q[1] = svc_dbv_str(p->name);
	if ((err = svc_db_run(db, STMT_IDENTITY_OF_USER, q, 2, &rows, NULL)) < 0)
		return err;
	err = rows && rows->nrows > 0 ? SVC_E_FORBIDDEN : 0;
	svc_rows_free(rows);
	if (err < 0)
		return err;
	q[0] = svc_dbv_str(p->name);
	q[1] = svc_dbv_str(prof->subject);
	q[2] = svc_dbv_str(uid);
	q[3] = svc_dbv_str(prof->email_verified && normalise_email(prof->email, email) == 0 ? email : NULL);
	/* a concurrent link of the same provider account: ER_DUP_ENTRY, the account is taken */
	return svc_db_run(db, STMT_IDENTITY_INSERT, q, 4, NULL, NULL);
}

/*
 * GET /auth/github/callback, /auth/google/callback ?code&state: checks the state against the
 * svc_oauth cookie, exchanges the code, reads the profile, finds or creates the user, sets both
 * session cookies and answers 302 to {app_url}/dashboard. Every failure is 302 to
 * {app_url}/login?error=<code>: access_denied, provider_error, invalid_state, exchange_failed,
 * profile_failed, email_not_verified, server_error. A state of the link flow (GET
 * /auth/<provider>/link) for the signed-in user connects the provider account to that user
 * instead: 302 to {app_url}/settings/account?connected=<provider>, failures to
 * {app_url}/settings/account?error=<code> (access_denied, provider_error, exchange_failed,
 * profile_failed, identity_taken, already_connected, server_error). 404 when the provider is
 * not configured; 429.
 */
enum svc_err svc_api_auth_oauth_callback(struct svc_req *req, struct svc_resp *resp)
{
	const struct svc_oauth_provider *p = path_provider(req);
	const struct svc_auth_config *a = &req->ctx->auth;
	char code[2049], error[64], verifier[SVC_OAUTH_VERIFIER_LEN + 1], uid[37], page[64];
	struct svc_oauth_profile prof;
	const char *fail_page = "/login";
	char *access = NULL;
	int err, link = 0, state_ok;

	if (!p || !a->oauth[p->id].client_id[0])
		return not_configured(resp, p);
	if ((err = svc_api__auth_limit(req, resp, "oauth_ip", req->limit_addr, &a->rl_oauth_ip)) < 0)
		return err;
	svc_resp_cookie(resp, COOKIE_OAUTH, "", REFRESH_PATH, 0);
	state_ok = callback_state(req, p, FLOW_SIGNIN, "", verifier) == 0;
	if (!state_ok && svc_req_authenticate(req, uid) == 0 && !req->token_id[0] &&
	    callback_state(req, p, FLOW_LINK, uid, verifier) == 0) {
		/* the signed-in user who started GET /auth/<provider>/link, in this browser */
		state_ok = link = 1;
		fail_page = ACCOUNT_PAGE;
	}
	if (svc_req_query(req, "error", error, sizeof error) != 0) {
		OPENSSL_cleanse(verifier, sizeof verifier);
		return oauth_fail(req, resp, p, fail_page, provider_error(error));
	}
	if (!state_ok || svc_req_query(req, "code", code, sizeof code) != 1 || !code[0]) {
		OPENSSL_cleanse(verifier, sizeof verifier);
		return oauth_fail(req, resp, p, "/login", "invalid_state");
	}
	err = svc_oauth_exchange(p, &a->oauth[p->id], 0, code, verifier, &access);
	OPENSSL_cleanse(verifier, sizeof verifier);
	if (err < 0)
		return oauth_fail(req, resp, p, fail_page, "exchange_failed");
	err = svc_oauth_fetch_profile(p, &a->oauth[p->id], access, &prof);
	svc_oauth_free_token(access);
	if (err < 0)
		return oauth_fail(req, resp, p, fail_page, "profile_failed");
	if (link) {
		err = oauth_link(req, p, &prof, uid);
		if (err == SVC_E_CONFLICT)
			return oauth_fail(req, resp, p, fail_page, "identity_taken");
		if (err == SVC_E_FORBIDDEN)
			return oauth_fail(req, resp, p, fail_page, "already_connected");
		if (err < 0)
			return oauth_fail(req, resp, p, fail_page, "server_error");
		AUTH_LOG(req, "identity_connected", "provider=%s user=%s", p->name, uid);
		snprintf(page, sizeof page, "%s?connected=%s", ACCOUNT_PAGE, p->name);
		return redirect_app(req, resp, page, NULL);
	}
	err = oauth_user(req, p, &prof, uid);
	if (err == SVC_E_FORBIDDEN)
		return oauth_fail(req, resp, p, "/login", "email_not_verified");
	if (err == SVC_E_UNAUTHORIZED)
		return oauth_fail(req, resp, p, "/login", "account_not_verified");
	{
		int64_t gen = 0;
		if (err < 0 || svc_api__auth_gen(req->ctx->db, uid, &gen) < 0 ||
		    svc_api__auth_session(req, resp, uid, gen, NULL) < 0)
			return oauth_fail(req, resp, p, "/login", "server_error");
	}
	AUTH_LOG(req, "oauth_ok", "provider=%s user=%s", p->name, uid);
	return redirect_app(req, resp, "/dashboard", NULL);
}

/* GET /auth/github/assistant: (signed in) 302 to GitHub for the member's own assistant token; 404 not configured; 429. */
enum svc_err svc_api_auth_assistant_start(struct svc_req *req, struct svc_resp *resp)
{
	const struct svc_oauth_provider *p = svc_oauth_provider_get(SVC_OAUTH_GITHUB);

	if (!req->ctx->auth.oauth[p->id].assistant_client_id[0])
		return not_configured(resp, p);
	return oauth_begin(req, resp, p, FLOW_ASSISTANT);
}

/*
 * GET /auth/github/assistant/callback ?code&state: for the signed-in member who started the flow,
 * exchanges the code and stores the token AES-256-GCM sealed (lib/auth/crypto.h, instance key; never
 * returned), then 302 to {app_url}/settings?assistant=connected. Failures: 302 to
 * {app_url}/settings?error=<code>: session_required, access_denied, provider_error,
 * invalid_state, exchange_failed, encryption_unavailable, server_error. 404 not configured.
 */
enum svc_err svc_api_auth_assistant_callback(struct svc_req *req, struct svc_resp *resp)
{
	const struct svc_oauth_provider *p = svc_oauth_provider_get(SVC_OAUTH_GITHUB);
	const struct svc_config *c = &req->ctx->cfg;
	const struct svc_auth_config *a = &req->ctx->auth;
	char code[2049], error[64], verifier[SVC_OAUTH_VERIFIER_LEN + 1], row[64];
	struct svc_oauth_profile prof;
	struct svc_dbv q[4];
	struct json_object *details;
	char *access = NULL, *sealed = NULL;
	int err;

	if (!a->oauth[p->id].assistant_client_id[0])
		return not_configured(resp, p);
	if ((err = svc_api__auth_limit(req, resp, "oauth_ip", req->limit_addr, &a->rl_oauth_ip)) < 0)
		return err;
	svc_resp_cookie(resp, COOKIE_OAUTH, "", REFRESH_PATH, 0);
	if (!req->user_id[0])
		return oauth_fail(req, resp, p, "/settings", "session_required");
	if (svc_req_query(req, "error", error, sizeof error) != 0)
		return oauth_fail(req, resp, p, "/settings", provider_error(error));
	if (svc_req_query(req, "code", code, sizeof code) != 1 || !code[0] ||
	    callback_state(req, p, FLOW_ASSISTANT, req->user_id, verifier) < 0)
		return oauth_fail(req, resp, p, "/settings", "invalid_state");
	err = svc_oauth_exchange(p, &a->oauth[p->id], 1, code, verifier, &access);
	OPENSSL_cleanse(verifier, sizeof verifier);
	if (err < 0)
		return oauth_fail(req, resp, p, "/settings", "exchange_failed");
	memset(&prof, 0, sizeof prof);
	if (svc_oauth_fetch_profile(p, &a->oauth[p->id], access, &prof) < 0)
		prof.login[0] = '\0';   /* the login is only shown; the token is what matters */
	snprintf(row, sizeof row, "%s:%s", req->user_id, p->name);
	err = svc_crypto_seal_secret(req->ctx->db, c, NULL, "assistant_tokens", "sealed_token", row, access,
				     strlen(access), &sealed);
	svc_oauth_free_token(access);
	if (err < 0)
		return oauth_fail(req, resp, p, "/settings", err == SVC_E_UNAVAILABLE ? "encryption_unavailable" : "server_error");
	q[0] = svc_dbv_str(req->user_id);
	q[1] = svc_dbv_str(p->name);
	q[2] = svc_dbv_str(sealed);
	q[3] = svc_dbv_str(prof.login[0] ? prof.login : NULL);
	/* the admin audit log (issue 25 item 10): the member stored an assistant token, never the token */
	details = json_object_new_object();
	svc_json_add_str(details, "login", prof.login[0] ? prof.login : NULL);
	err = svc_api_integrations__audited(req, STMT_ASSISTANT_UPSERT, q, 4, 0, "auth.assistant_token.store", p->name,
					    details, NULL);
	json_object_put(details);
	free(sealed);
	if (err < 0)
		return oauth_fail(req, resp, p, "/settings", "server_error");
	AUTH_LOG(req, "assistant_connected", "provider=%s user=%s", p->name, req->user_id);
	return redirect_app(req, resp, "/settings?assistant=connected", NULL);
}
