/* internal.h: HMAC-signed internal calls between svc-wsd and the API (docs/conventions.md "Internal calls"). */
#ifndef SVC_INTERNAL_H
#define SVC_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "core/config.h"

struct svc_db;

#define SVC_INTERNAL_SIG_MAX 68      /* "v2=" + 64 hex digits + NUL */
#define SVC_INTERNAL_WINDOW_SECS 300 /* how far a request's timestamp may be from now, either way */
#define SVC_INTERNAL_SECRET_MIN 32   /* shortest INTERNAL_SECRET accepted, in bytes */
#define SVC_INTERNAL_NONCE_LEN 32    /* X-Svc-Nonce: 32 lowercase hex digits (16 random bytes) */

/*
 * Computes the signature of one internal request into `out`
 * (SVC_INTERNAL_SIG_MAX bytes) as "v2=<64 lowercase hex digits>":
 *
 *   HMAC-SHA256(secret, method "\n" path "\n" timestamp "\n" nonce "\n" hex(sha256(body)))
 *
 * `method` is the HTTP method in capitals ("POST"), `path` the request path
 * as sent, without the query string ("/api/internal/projects/<id>/presence"),
 * `ts` the request time in seconds since the epoch (sent as X-Svc-Timestamp),
 * `nonce` SVC_INTERNAL_NONCE_LEN lowercase hex digits, fresh for each
 * request (sent as X-Svc-Nonce; the receiver remembers it for the window,
 * so a captured request cannot be sent again), `body`/`len` the raw request
 * body (NULL and 0 for none). `secret` is INTERNAL_SECRET, `secret_len`
 * bytes, at least SVC_INTERNAL_SECRET_MIN. Returns 0, or SVC_E_INTERNAL
 * (short secret, NULL argument, malformed nonce, OpenSSL failure). RFC 2104;
 * docs/conventions.md "Internal calls".
 */
int svc_internal_sign(const char *secret, size_t secret_len, const char *method, const char *path,
		      int64_t ts, const char *nonce, const void *body, size_t len, char *out);

/*
 * Checks an incoming internal request: `ts_header` (X-Svc-Timestamp, decimal
 * seconds) must be within SVC_INTERNAL_WINDOW_SECS of `now`, `nonce_header`
 * (X-Svc-Nonce) well formed, and `sig_header` (X-Svc-Signature) must equal
 * the signature svc_internal_sign() computes for the other arguments; the
 * comparison takes constant time (CRYPTO_memcmp). Any header may be NULL
 * (refused). It does not remember the nonce: the caller then records it
 * with svc_internal_nonce_db() or svc_nonce_cache_add(). Returns 0, or
 * SVC_E_UNAUTHORIZED for anything else, including a short or empty secret.
 */
int svc_internal_verify(const char *secret, size_t secret_len, const char *method, const char *path,
			const char *ts_header, const char *nonce_header, const char *sig_header,
			const void *body, size_t len, int64_t now);

/*
 * Records the nonce of a verified internal request in MariaDB (table
 * internal_nonces, shared by every responder of the host or cluster) and
 * forgets those older than twice the window. Returns 0 the first time,
 * SVC_E_UNAUTHORIZED when the nonce was seen before (a replay), or a DB
 * error (SVC_E_UNAVAILABLE).
 */
int svc_internal_nonce_db(struct svc_db *db, const char *nonce);

/* The nonces one process has seen within twice the window (svc-wsd, whose calls come to one process). */
struct svc_nonce_cache {
	struct svc_nonce_entry {
		char nonce[SVC_INTERNAL_NONCE_LEN + 1];
		int64_t seen;   /* seconds since the epoch */
	} *e;
	size_t n, cap;
};

#define SVC_NONCE_CACHE_MAX 100000 /* entries: one per signed call in 10 minutes */

/*
 * Records `nonce` seen at `now` (seconds) in `c` (zeroed before first use),
 * forgetting entries older than twice SVC_INTERNAL_WINDOW_SECS. Returns 0
 * the first time, SVC_E_UNAUTHORIZED for a nonce seen before,
 * SVC_E_UNAVAILABLE when SVC_NONCE_CACHE_MAX entries are in the window.
 * Linear in the entries kept; free with svc_nonce_cache_dispose().
 */
int svc_nonce_cache_add(struct svc_nonce_cache *c, const char *nonce, int64_t now);
void svc_nonce_cache_dispose(struct svc_nonce_cache *c);

/*
 * Makes one signed request with libcurl (blocking; call it off any event
 * loop): `method` to `base` followed by `path` ("http://127.0.0.1:8080" +
 * "/api/internal/..."); the signature covers the path part of the final URL
 * (the path of `base`, then `path`) and a fresh nonce. A non-empty `body` is sent as
 * application/json. Waits at most `timeout_ms` in total. On success
 * *out_status holds the HTTP status and, when `out_body` is not NULL,
 * *out_body a malloc'd NUL-terminated copy of the answer (at most 1 MiB)
 * that the caller frees. Returns 0 whenever an HTTP answer arrived (whatever
 * its status), SVC_E_UNAVAILABLE when none did (refused, timed out),
 * SVC_E_INTERNAL otherwise (no secret, URL too long).
 */
int svc_internal_call(const struct svc_config *cfg, const char *base, const char *method,
		      const char *path, const char *body, size_t len, long timeout_ms,
		      long *out_status, char **out_body);

/*
 * Tells svc-wsd that the API changed the files of project `project_id` on
 * disk (an agent turn, a checkout, a direct save), so a live document takes
 * the change: a signed POST /internal/projects/<id>/disk-changed to the
 * internal listener of the instance that serves the room, the URL of its
 * lease in room_leases (several instances, docs/collaboration.md), waiting at
 * most 2 s; no call when no instance holds a lease (no room is open: the
 * next load reads the disk). Without `db`, or when the lookup fails, to
 * SVC_WSD_INTERNAL_URL (default http://127.0.0.1:<SVC_WS_PORT>). A daemon
 * that is not running or has no room for the project is not an error for the
 * caller. Returns 0, or the error of svc_internal_call() (logged; callers
 * may ignore it).
 */
int svc_internal_notify_files(const struct svc_config *cfg, struct svc_db *db, const char *project_id);

#endif
