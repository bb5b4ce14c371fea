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
 * Issues an HS256 JWT for `user_id` (a UUID string, 8-4-4-4-12 hex; the
 * `sub` claim) with claims iss=`issuer`, iat=`now`, exp=`now`+`ttl_secs`
 * (seconds since the epoch; `ttl_secs` > 0), jti = 16 random bytes
 * (RAND_bytes) as 32 lowercase hex digits, and "kind": "access" or
 * "refresh" (libjwt 1.10 always writes typ "JWT", so the kind claim keeps
 * the two apart). `secret` is the raw JWT_SECRET of `secret_len` bytes (at
 * least 32). On success *out is a malloc'd NUL-terminated token the caller
 * frees; on error *out is left untouched. Errors: SVC_E_INTERNAL (secret
 * too short, `user_id` not a UUID, NULL argument, exp overflow, out of
 * memory). RFC 7519 §4.1, RFC 7518 §3.2, RFC 8725 §3.12.
 */
int svc_auth_jwt_issue(const char *secret, size_t secret_len, const char *issuer,
		       enum svc_token_kind kind, const char *user_id, int64_t now,
		       int64_t ttl_secs, char **out);

/*
 * Verifies `token` (NUL-terminated, untrusted) issued by svc_auth_jwt_issue:
 * length at most SVC_AUTH_TOKEN_MAX and three non-empty base64url parts;
 * signature with `secret` (`secret_len` >= 32 bytes; never a NULL key:
 * libjwt 1.10 would skip verification); algorithm exactly HS256, both by
 * jwt_get_alg (libjwt accepts HS384/HS512 with the same secret) and by the
 * header's "alg" string (libjwt's match ignores case), so "none", HS384,
 * HS512 are refused; `iss` a string equal to `issuer`; `exp` present, a JSON
 * integer (not a float, string or bool) and > `now` (seconds since the
 * epoch); `kind` equal to `kind`; `sub` a well-formed UUID. On success
 * writes `sub` (36 characters and a NUL) into out_user_id, a buffer of at
 * least 37 bytes, and returns 0; on failure out_user_id is untouched.
 * Every failure, including garbage input and a short secret, is
 * SVC_E_UNAUTHORIZED. RFC 8725 §3.1, §3.8, §3.12.
 */
int svc_auth_jwt_verify(const char *secret, size_t secret_len, const char *issuer,
			enum svc_token_kind kind, const char *token, int64_t now,
			char *out_user_id);

/*
 * Hashes `password` (`len` bytes, NULs allowed; NULL only when `len` is 0)
 * with Argon2id (libsodium crypto_pwhash_str_alg, opslimit 2, memlimit
 * 19 MiB = 19456 KiB: OWASP's minimum) and a random salt into `out`
 * (SVC_AUTH_HASH_MAX bytes) as a NUL-terminated PHC string
 * "$argon2id$v=19$m=19456,t=2,p=1$<salt>$<hash>". `out` is written only on
 * success. Errors: SVC_E_INTERNAL (out of memory, NULL argument).
 * OWASP Password Storage Cheat Sheet; RFC 9106.
 */
int svc_auth_password_hash(const char *password, size_t len, char *out);

/*
 * Checks `password` (`len` bytes) against the PHC string `hash` (as made by
 * svc_auth_password_hash, NUL-terminated within SVC_AUTH_HASH_MAX bytes).
 * Returns 0 on a match, SVC_E_UNAUTHORIZED otherwise, also for a malformed
 * hash or one that is not Argon2id. When `hash` is NULL (unknown user) a
 * dummy hash with the same parameters (made once, on first use) is verified
 * so the time taken does not tell whether the account exists, and
 * SVC_E_UNAUTHORIZED is returned.
 */
int svc_auth_password_verify(const char *hash, const char *password, size_t len);

#endif
