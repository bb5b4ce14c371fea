/* auth.h: session tokens (HS256 JWTs, libjwt 1.10) and password hashes (Argon2id, libsodium). */
#ifndef SVC_AUTH_H
#define SVC_AUTH_H

#include <stddef.h>
#include <stdint.h>

#define SVC_AUTH_TOKEN_MAX 4096  /* longest token accepted, in bytes */
#define SVC_AUTH_HASH_MAX 128    /* size of a buffer for a PHC hash string (crypto_pwhash_STRBYTES) */

/* The two kinds of session token (spec "Authentication" 1-5); never interchangeable. */
enum svc_token_kind {
	SVC_TOKEN_ACCESS = 0,
	SVC_TOKEN_REFRESH = 1,
};

/*
 * Issues an HS256 JWT for `user_id` (a UUID string, the `sub` claim) with
 * claims iss=`issuer`, iat=`now`, exp=`now`+`ttl_secs`, a random jti, and
 * "kind": "access" or "refresh". `secret` is the raw JWT_SECRET of
 * `secret_len` bytes (at least 32). *out is a malloc'd NUL-terminated token
 * the caller frees. Errors: SVC_E_INTERNAL. RFC 7519, RFC 8725 §3.12.
 */
int svc_auth_jwt_issue(const char *secret, size_t secret_len, const char *issuer,
		       enum svc_token_kind kind, const char *user_id, int64_t now,
		       int64_t ttl_secs, char **out);

/*
 * Verifies `token`: length at most SVC_AUTH_TOKEN_MAX, signature with the
 * key (never a NULL key: libjwt 1.10 would skip verification), algorithm
 * exactly HS256 (jwt_get_alg; "none", HS384, HS512 refused), `iss` equal to
 * `issuer`, `exp` present, integer and > now, `kind` equal to `kind`, `sub`
 * a well-formed UUID. On success writes `sub` into out_user_id (37 bytes).
 * Every failure is SVC_E_UNAUTHORIZED. RFC 8725 §3.1, §3.8, §3.12.
 */
int svc_auth_jwt_verify(const char *secret, size_t secret_len, const char *issuer,
			enum svc_token_kind kind, const char *token, int64_t now,
			char *out_user_id);

/*
 * Hashes `password` (`len` bytes) with Argon2id (libsodium
 * crypto_pwhash_str, opslimit 2, memlimit 19 MiB: OWASP's minimum) into
 * `out` (SVC_AUTH_HASH_MAX bytes) as a PHC string "$argon2id$v=19$...".
 * Errors: SVC_E_INTERNAL (out of memory).
 */
int svc_auth_password_hash(const char *password, size_t len, char *out);

/*
 * Checks `password` against the PHC string `hash`. Returns 0 on a match,
 * SVC_E_UNAUTHORIZED otherwise (also for a malformed hash). When `hash` is
 * NULL (unknown user) a dummy hash is verified so the time taken does not
 * tell whether the account exists, and SVC_E_UNAUTHORIZED is returned.
 */
int svc_auth_password_verify(const char *hash, const char *password, size_t len);

#endif
