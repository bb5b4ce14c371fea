/* api_auth.h: what the auth handlers (api_auth.c, api_account.c) share: rate limits, sessions, the user object. */
#ifndef SVC_API_AUTH_H
#define SVC_API_AUTH_H

#include <stdint.h>

#include <json-c/json.h>

#include "http/http.h"
#include "auth/auth.h"
#include "db/db.h"

/* One auth event in SVC_AUTH_LOG and on stderr (lib/auth/auth.h svc_auth_log); `...` is a format and its values. */
#define SVC_API_AUTH_LOG(req, event, ...) \
	svc_auth_log((req)->ctx->auth.auth_log, (req)->ctx->name, event, (req)->remote_addr, __VA_ARGS__)

/*
 * Counts one hit of limit `r` on (`rule`, `key`) unless the client address is
 * in SVC_RATE_LIMIT_EXEMPT (docs/api.md "Rate limits"). Returns 0, or the 429
 * (with Retry-After, logged as rate_limited) for the handler to return, or a
 * DB error.
 */
int svc_api__auth_limit(struct svc_req *req, struct svc_resp *resp, const char *rule, const char *key,
			const struct svc_rate_rule *r);

/*
 * Failed logins (review finding 8 of issue 17; docs/api.md "Rate limits"), for POST /auth/login
 * and the current password of POST /auth/password. `email` is the normalised address, `uid` the
 * account's id (NULL when there is no such account: it is gated alike).
 *
 * svc_api__login_gate() runs before the password is checked: 429 (with Retry-After, logged
 * login_failed reason=locked) when this client address (IPv6 by its /64) has failed
 * SVC_RATE_LIMIT_LOGIN_ACCOUNT times on the account, even for the right password; when the account
 * has failed SVC_RATE_LIMIT_LOGIN_ACCOUNT_MAX times from everywhere, an address the account did not
 * sign in from in the last 90 days gets SVC_RATE_LIMIT_LOGIN_SLOW tries (reason=slowed), while a
 * known one goes on, so nobody can lock the owner out. Addresses in SVC_RATE_LIMIT_EXEMPT are not
 * gated. Returns 0, the 429 for the handler to return, or a DB error.
 *
 * svc_api__login_failed() counts a failure in both windows. svc_api__login_ok() clears this
 * address's window on the account and remembers the address as known. Both return 0 or a DB error.
 */
int svc_api__login_gate(struct svc_req *req, struct svc_resp *resp, const char *email, const char *uid);
int svc_api__login_failed(struct svc_req *req, const char *email);
int svc_api__login_ok(struct svc_req *req, const char *email, const char *uid);

/*
 * The session generation of user `user_id` (users.session_gen) into *out_gen.
 * Returns 0, SVC_E_UNAUTHORIZED when there is no such user, DB errors.
 */
int svc_api__auth_gen(struct svc_db *db, const char *user_id, int64_t *out_gen);

/*
 * Starts a new session for `user_id` (svc_session_start: a sign-in, a
 * sign-up, a password change) and issues its access and refresh tokens with
 * session generation `gen` (svc_auth_jwt_issue_session), sets both cookies
 * (docs/api.md "Cookies") and, when `body` is not NULL, adds accessToken,
 * refreshToken and expiresIn to it. Returns 0, SVC_E_INTERNAL or DB errors.
 */
int svc_api__auth_session(struct svc_req *req, struct svc_resp *resp, const char *user_id, int64_t gen,
			  struct json_object *body);

/*
 * Runs `stmt`, a statement of one user by id (STMT_USER_BY_ID,
 * STMT_AUTH_USER_CREDS, ...), for `user_id` and puts its one row into *out
 * (the caller frees it with svc_rows_free). Returns 0, SVC_E_UNAUTHORIZED
 * when there is no such user, DB errors.
 */
int svc_api__auth_user_row(struct svc_db *db, enum svc_stmt stmt, const char *user_id, struct svc_rows **out);

/* The User object {id, email, displayName, createdAt, isPlatformAdmin} of row 0 of STMT_USER_BY_ID rows; new reference. */
struct json_object *svc_api__auth_user_json(const struct svc_rows *rows);

#endif
