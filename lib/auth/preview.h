/* preview.h: the signed, short-lived preview tokens that name a project's preview origin <token>.preview.<SVC_DOMAIN>. */
#ifndef SVC_PREVIEW_H
#define SVC_PREVIEW_H

#include <stddef.h>
#include <stdint.h>

/*
 * A preview token is one DNS label (RFC 1035 §2.3.4: at most 63 octets) that
 * authorises reading one project's working tree until it expires, so the
 * preview can live on an origin of its own that never sees the app's cookies
 * (docs/api.md "Preview"). Its bytes:
 *
 *   ver (1 byte, SVC_PREVIEW_VERSION) || project id (16 bytes, the UUID's bytes)
 *   || expiry (4 bytes, big-endian Unix seconds) || mac (16 bytes)
 *
 * mac = the first 16 bytes of HMAC-SHA256(K, the 21 bytes before it), with
 * K = HMAC-SHA256(JWT_SECRET, "svc preview token v1"), a key used for
 * nothing else. The 37 bytes are written as lowercase base32 (RFC 4648 §6
 * alphabet a-z 2-7, no padding): SVC_PREVIEW_TOKEN_LEN characters.
 */

#define SVC_PREVIEW_VERSION 1
#define SVC_PREVIEW_TOKEN_LEN 60 /* characters of a token */
#define SVC_PREVIEW_TOKEN_MAX (SVC_PREVIEW_TOKEN_LEN + 1) /* buffer for one, with the NUL */

/*
 * Makes the token for project `project_id` (a UUID, either case) that
 * expires at `expires` (Unix seconds, 1 .. 2^32-1), signed with a key derived
 * from `secret` (JWT_SECRET, `secret_len` bytes, at least 32). Writes it
 * NUL-terminated into out (SVC_PREVIEW_TOKEN_MAX bytes). Returns 0, or
 * SVC_E_INTERNAL for a malformed id, an expiry out of range, a short secret
 * or an OpenSSL failure (out is then left unchanged).
 */
int svc_preview_token_make(const char *secret, size_t secret_len, const char *project_id, int64_t expires,
			   char *out);

/*
 * Checks `token` (`len` bytes, not necessarily NUL-terminated; upper-case
 * letters are taken as lower case, as DNS does) at time `now` (Unix seconds):
 * the length, the alphabet, the version, the mac (compared in constant time,
 * CRYPTO_memcmp) and that `now` is before the expiry. On success writes the
 * project id, lowercase with dashes, into out_project_id (37 bytes) and the
 * expiry into *out_expires (may be NULL), and returns 0. Otherwise returns
 * SVC_E_FORBIDDEN (malformed, forged, another key, expired) and writes nothing.
 */
int svc_preview_token_check(const char *secret, size_t secret_len, const char *token, size_t len, int64_t now,
			    char *out_project_id, int64_t *out_expires);

/*
 * The one check of a preview request (svc-preview and svc-devd both call
 * it): `host` is the request's Host header (NULL allowed), which must be
 * "<token>.preview.<domain>[:port]" with `domain` (SVC_DOMAIN) in any case,
 * and the token must pass svc_preview_token_check() at `now` (Unix seconds)
 * with `secret`. On success writes the project id (37 bytes, lowercase) into
 * out_project_id and returns 0; otherwise SVC_E_FORBIDDEN, nothing written.
 * docs/api.md "Preview".
 */
int svc_preview_host_check(const char *secret, size_t secret_len, const char *domain, const char *host, int64_t now,
			   char *out_project_id);

#endif
