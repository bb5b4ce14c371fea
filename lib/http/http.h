/* http.h: FastCGI requests and responses, the router, cookies, server-sent events, the responder main loop. */
#ifndef SVC_HTTP_H
#define SVC_HTTP_H

#include <stddef.h>
#include <stdint.h>

#include <fcgiapp.h>
#include <json-c/json.h>

#include "auth/auth.h"
#include "auth/caller.h"
#include "core/config.h"
#include "core/err.h"
#include "core/json.h"
#include "db/db.h"
#include "core/util.h"

enum svc_method {
	SVC_GET = 1,
	SVC_POST = 2,
	SVC_PUT = 4,
	SVC_PATCH = 8,
	SVC_DELETE = 16,
	SVC_OPTIONS = 32,
};

/* Route flags. */
#define SVC_R_AUTH 1u     /* a valid access token is required (401 otherwise) */
#define SVC_R_JSON 2u     /* the body must be a JSON object (415, 400 invalid_json) */
#define SVC_R_OPTAUTH 4u  /* a token is read when present and valid; anonymous requests go through */
#define SVC_R_INTERNAL 8u /* signed with INTERNAL_SECRET (lib/auth/internal.h): 401 unless X-Svc-Timestamp and
			   * X-Svc-Signature match; the body, whatever its content type, must then be a JSON
			   * object (400 invalid_json) */
#define SVC_R_LOCAL 32u   /* answered only to clients on this host or in SVC_TRUSTED_PROXIES (the address after
			   * X-Forwarded-For): 404 for anyone else, before anything but the rate limit (GET
			   * /api/internal/tls/ask, which a proxy on this host calls unsigned) */
#define SVC_R_SITE 16u    /* serves a site, not the API (svc-preview): no CORS headers for SVC_CORS_ORIGINS, and a
			   * Content-Security-Policy the handler sets replaces the API's (and its X-Frame-Options) */
#define SVC_R_APP 64u     /* an app's backend on its site's origin (svc-app, lib/app): the router's CSRF check (app_url's
			   * Origin) is skipped, the handler checks the site's own (svc_app_site_open) */
#define SVC_R_RAWBODY 128u /* the router leaves the body unread (no cap, no content type): the handler streams it
			    * with svc_req_body_read() (svc-git: a push's pack, bounded by the handler) */

#define SVC_MAX_PARAMS 6

/*
 * Access tokens this process verified lately (svc_req_authenticate): a
 * client sends the same token with every request until it refreshes, so its
 * signature and claims are checked once, and a later request with the very
 * same bytes (compared in constant time) takes the claims again while the
 * token's exp is ahead. The session check still runs on every request.
 */
#define SVC_TOKEN_CACHE_SLOTS 32
#define SVC_TOKEN_CACHE_LEN 1024 /* longer tokens are verified every time */
struct svc_token_cache {
	struct {
		size_t len;                      /* 0 = empty */
		char token[SVC_TOKEN_CACHE_LEN];
		struct svc_auth_claims claims;
	} e[SVC_TOKEN_CACHE_SLOTS];
};

/* Per-process state: settings and the database connection, created once by svc_fcgi_main(). */
struct svc_ctx {
	const char *name;        /* responder name, "svc-auth" */
	struct svc_config cfg;
	struct svc_auth_config auth; /* sign-in, rate-limit and auth-log settings (lib/auth/auth.h) */
	struct svc_db *db;
	struct svc_session_cache sessions; /* session checks that passed in the last second (svc_session_check_cached) */
	struct svc_token_cache tokens;     /* access tokens verified lately (svc_req_authenticate) */
	void (*after)(struct svc_ctx *ctx, void *arg); /* work queued by svc_resp_after() */
	void *after_arg;
};

/* One request, valid until the handler returns. */
struct svc_req {
	struct svc_ctx *ctx;
	FCGX_Request *fcgi;
	enum svc_method method;
	char *path;                          /* percent-decoded path, without query */
	const char *query;                   /* raw query string, "" when none */
	const char *param_names[SVC_MAX_PARAMS];
	char *param_values[SVC_MAX_PARAMS];  /* decoded ":name" and "*" route parameters */
	size_t nparams;
	char *body;                          /* raw body (NUL-terminated), NULL when none */
	size_t body_len;
	struct json_object *json;            /* the parsed body for SVC_R_JSON routes, else NULL */
	char user_id[37];                    /* the authenticated user, "" when anonymous */
	const char *remote_addr;             /* the client's address (points at client_addr) */
	char client_addr[SVC_ADDR_MAX];      /* REMOTE_ADDR, or X-Forwarded-For from SVC_TRUSTED_PROXIES; "-" if none */
	char limit_addr[SVC_ADDR_MAX];       /* what rate limits count it under: IPv6 by its /64 (svc_auth_addr_key) */
	unsigned scopes;                     /* perm.h SVC_SCOPE_* of the credential: all for a session */
	char token_id[37];                   /* the API token used, "" for a session or anonymous */
	char session_id[SVC_AUTH_ID_LEN + 1]; /* the access token's session (its "fam" claim), "" when none */
	unsigned token_scopes;               /* lib/auth/auth.h SVC_PAT_* scopes of that API token */
	struct svc_caller caller;            /* what svc_req_caller() returns */
};

/* The response being built. Handlers fill it with the functions below. */
struct svc_resp {
	FCGX_Request *fcgi;
	const struct svc_config *cfg;
	int status;
	struct svc_buf headers;   /* extra header lines, "Name: value\r\n" */
	struct json_object *json; /* body to send as JSON (owned) */
	char *raw;                /* or a raw body (owned) */
	size_t raw_len;
	const char *raw_type;
	const char *field;        /* for validation_failed errors (field_buf, or NULL) */
	char field_buf[128];      /* svc_resp_error()'s copy of the field's name */
	char message[512];        /* message for an error body; "" = the default one */
	int own_csp;              /* SVC_R_SITE route: a Content-Security-Policy among `headers` replaces the API's */
	int started;              /* headers already written (streaming) */
	int64_t last_write_ms;    /* monotonic time of the last streamed write */
	void (*after)(struct svc_ctx *ctx, void *arg); /* see svc_resp_after() */
	void *after_arg;
};

/*
 * A handler: reads its input from `req` (the body already checked against the
 * route's fields), fills `resp` and returns SVC_OK, or an svc_err that the
 * router turns into the JSON error body {error, message, field?} (with
 * resp->field and resp->message when set, svc_resp_error()) unless the
 * response has already started streaming.
 */
typedef enum svc_err (*svc_handler)(struct svc_req *req, struct svc_resp *resp);

/*
 * The fields a route's JSON body may carry (lib/core/json.h), checked with
 * svc_json_validate() before the handler runs. Build one with SVC_BODY() next
 * to the handler that relies on it, so the count is never written by hand:
 *
 *   static const struct svc_field create_fields[] = { { "name", SVC_V_TEXT, SVC_F_REQUIRED, 1, 128, NULL } };
 *   const struct svc_body svc_api_workspaces_create_body = SVC_BODY(create_fields);
 */
struct svc_body {
	const struct svc_field *fields;
	size_t nfields;
};

/* Initialises a struct svc_body from a field array (not a pointer: the count comes from its size). */
#define SVC_BODY(table) { (table), sizeof(table) / sizeof((table)[0]) }

/* One route: methods (an OR of enum svc_method), a pattern, the handler, flags, the body cap in bytes, the body's fields. */
struct svc_route {
	unsigned methods;
	const char *pattern;  /* "/api/projects/:id/versions/:sha/checkout"; a final "*" takes the rest; parameters whose
			       * names end in "id" or "Id" must be UUIDs (404 otherwise) */
	svc_handler handler;
	unsigned flags;
	size_t max_body;      /* 0 = 1 MiB */
	const struct svc_body *body; /* SVC_R_JSON routes: the fields of the body (400 validation_failed), NULL = any */
};

/*
 * Runs a responder: loads the settings (exits 1 naming a missing one),
 * initialises libraries, and serves FastCGI requests with `routes`. With no
 * arguments it serves the listening socket on fd 0 (lighttpd's bin-path,
 * mod_fcgid). With "--listen PATH --procs N [--socket-group GROUP]" it
 * creates the unix socket PATH with mode 0660, owned by GROUP (the web
 * server's; default the process's group), pre-forks N workers that share it,
 * replaces workers that die and stops them all on SIGTERM or SIGINT (Apache
 * mod_proxy_fcgi, systemd). The router answers, before any handler and in
 * this order (dispatch_steps in http.c): two cookies of one of svc's names 400, over the
 * global rate limit 429 (SVC_RATE_LIMIT_GLOBAL, per client address, counted
 * in the host's shared memory: svc_ratelimit_hit_host), unknown
 * path 404, wrong method 405 with Allow, a cross-site unsafe request 403
 * (POST/PUT/PATCH/DELETE without a Bearer token that carries a session
 * cookie or an Origin, whose Origin or Referer is not app_url's or
 * base_url's origin), missing or invalid token 401, an API token without
 * the route's scope 403, body over the route's cap 413, non-JSON content
 * type 415, unparsable JSON 400 invalid_json, on SVC_R_INTERNAL routes a
 * bad or missing internal signature 401 (then a body that is not a JSON
 * object 400 invalid_json), a body that does not match the route's fields
 * 400 validation_failed with the field. Returns the process exit status.
 */
int svc_fcgi_main(int argc, char **argv, const char *name, const struct svc_route *routes,
		  size_t nroutes);

/* Returns route parameter `name` (without ':'; "*" for the rest of the path), or NULL. */
const char *svc_req_param(const struct svc_req *req, const char *name);

/*
 * The caller of `req` as lib/ below the API takes it (lib/auth/caller.h): the
 * responder's database and settings, the authenticated user ("" when
 * anonymous), the credential's scopes and the client's address. The struct
 * lives in `req` and borrows from it and its responder: valid until the
 * handler returns. Never fails.
 */
const struct svc_caller *svc_req_caller(struct svc_req *req);

/* Returns the value of request header `name` ("Authorization", "Cookie", ...) or NULL. */
const char *svc_req_header(const struct svc_req *req, const char *name);

/*
 * Copies the percent-decoded value of query parameter `name` into out
 * (max bytes including NUL). Returns 1 when present, 0 when absent, or
 * SVC_E_VALIDATION when it is longer than max-1 bytes or not valid UTF-8.
 */
int svc_req_query(const struct svc_req *req, const char *name, char *out, size_t max);

/* Copies cookie `name` of the Cookie header into out (max bytes), as svc_cookie_get() (RFC 6265). Returns 1 when present, else 0. */
int svc_req_cookie(const struct svc_req *req, const char *name, char *out, size_t max);

/*
 * Reads up to `max` bytes of the request body of an SVC_R_RAWBODY route into
 * buf, blocking until some arrive (svc-git streams a push's pack this way).
 * Returns the count (> 0), 0 at the end of the body (FastCGI's empty stdin
 * record, whatever CONTENT_LENGTH said), or SVC_E_CLIENT_GONE when the
 * stream broke.
 */
long svc_req_body_read(struct svc_req *req, void *buf, size_t max);

/*
 * Queues `fn(ctx, arg)` to run after the response has been sent in full
 * and the request finished (the client no longer waits for it): mail that
 * must not make a response slower for some inputs than for others. `arg` is
 * owned by fn, which frees it; a job already queued on this response is
 * replaced (and its fn is called with ctx NULL so it frees its arg).
 * Returns 0.
 */
int svc_resp_after(struct svc_resp *resp, void (*fn)(struct svc_ctx *ctx, void *arg), void *arg);

/*
 * Records a 429 rate_limited answer: sets Retry-After to `retry_after`
 * seconds (at least 1) and a message, and returns SVC_E_RATE_LIMITED for
 * the handler to return. RFC 6585 §4, RFC 9110 §10.2.3.
 */
int svc_resp_rate_limited(struct svc_resp *resp, int64_t retry_after);

/* The length of an IMF-fixdate, "Sun, 06 Nov 1994 08:49:37 GMT" (RFC 9110 §5.6.7). */
#define SVC_HTTP_DATE_LEN 29

/*
 * Formats `secs` (Unix seconds, at least 0) as an IMF-fixdate, RFC 9110 §5.6.7 ("Sun, 06 Nov 1994 08:49:37
 * GMT"), into out (SVC_HTTP_DATE_LEN + 1 bytes), for Last-Modified. Never fails.
 */
void svc_http_date_format(int64_t secs, char *out);

/*
 * Parses an HTTP-date, RFC 9110 §5.6.7: an IMF-fixdate, or the obsolete rfc850-date ("Sunday, 06-Nov-94
 * 08:49:37 GMT", a two-digit year below 70 is 20yy) and asctime-date ("Sun Nov  6 08:49:37 1994") that a
 * recipient must accept, the whole of `s` and nothing around it (so a list of two dates does not parse).
 * Sets *out_secs (Unix seconds) and returns 0, or SVC_E_VALIDATION (nothing set) for anything else: an unknown
 * day or month name, a field out of range, a year before 1970.
 */
int svc_http_date_parse(const char *s, int64_t *out_secs);

/*
 * 1 when a GET (or HEAD) of a representation whose strong entity tag is `etag` (its quotes included,
 * "\"9f86d0...\"") and last modification `last_modified_secs` (Unix seconds; 0 or less: unknown) is
 * answered 304 Not Modified, by the request's headers `if_none_match` and `if_modified_since` (either NULL
 * when absent), in RFC 9110 §13.2.2's order: If-None-Match when present (§13.1.2: "*", or any listed
 * entity-tag equal to `etag` by the weak comparison, W/ or not; a malformed list never matches), else
 * If-Modified-Since (§13.1.3: one valid HTTP-date at or after the last modification). 0 otherwise.
 * The handler asks only once the caller may read the representation, so a 304 never tells more than the
 * 200 would (lib/app/app_files.c); it answers 304 with no body (§15.4.5).
 */
int svc_http_not_modified(const char *if_none_match, const char *if_modified_since, const char *etag,
			  int64_t last_modified_secs);

/* Sets a JSON response: `status` and `body` (ownership moves to the response). Returns 0. */
int svc_resp_json(struct svc_resp *resp, int status, struct json_object *body);

/* Sets a raw response: status, content type, and a copy of `len` bytes. Returns 0 or SVC_E_INTERNAL. */
int svc_resp_raw(struct svc_resp *resp, int status, const char *type, const char *data, size_t len);

/*
 * Adds a response header. Refuses (SVC_E_INTERNAL) a name or value with CR,
 * LF or NUL, so no request data can split the response.
 */
int svc_resp_header(struct svc_resp *resp, const char *name, const char *value);

/*
 * Sets cookie `name` to `value` with Path `path`, HttpOnly, SameSite=Lax,
 * Secure when the base URL is https, and Max-Age `max_age` seconds
 * (0 clears it: Max-Age=0 and an expiry in the past). RFC 6265 §4.1.
 */
int svc_resp_cookie(struct svc_resp *resp, const char *name, const char *value,
		    const char *path, int64_t max_age);

/*
 * Records an error for the router to send: returns `err` so a handler can
 * `return svc_resp_error(resp, SVC_E_VALIDATION, "name", "name is required")`.
 * `field` (copied: a name built in a buffer of the handler's may go out of
 * scope before the router sends it) and the formatted message may be NULL.
 */
int svc_resp_error(struct svc_resp *resp, int err, const char *field, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/*
 * Starts a server-sent event stream (text/event-stream, no caching, no
 * proxy buffering) with status 200 and flushes the headers. Returns 0 or
 * SVC_E_CLIENT_GONE. WHATWG HTML "Server-sent events".
 */
int svc_sse_begin(struct svc_resp *resp);

/*
 * Sends one event: "data: <json>\n\n" where <json> is `payload` with "type"
 * set to `type` (payload is borrowed and gets the "type" key added), and
 * flushes it (FCGX_FFlush: the only call that reports a vanished client).
 * Returns 0, or SVC_E_CLIENT_GONE when the client went away.
 */
int svc_sse_event(struct svc_resp *resp, const char *type, struct json_object *payload);

/*
 * Sends a comment line ": ping\n\n" when more than `idle_ms` passed since
 * the last write (keeps lighttpd's max-write-idle and proxies from ending a
 * quiet stream) and flushes. Returns 0 or SVC_E_CLIENT_GONE.
 */
int svc_sse_keepalive(struct svc_resp *resp, int64_t idle_ms);

/*
 * Starts a raw body of unknown length that is streamed (git-io's
 * export.zip): writes the status, the security headers, the handler's
 * headers (svc_resp_header() before this call) and Content-Type `type`,
 * with proxy buffering off. The body then goes out through
 * svc_resp_stream_write(); the router sends nothing more, and an error the
 * handler returns afterwards only ends the response. Returns 0 or
 * SVC_E_CLIENT_GONE.
 */
int svc_resp_stream_begin(struct svc_resp *resp, int status, const char *type);

/* Writes `len` bytes of a body started by svc_resp_stream_begin() and flushes. Returns 0 or SVC_E_CLIENT_GONE. */
int svc_resp_stream_write(struct svc_resp *resp, const void *data, size_t len);

/*
 * Reads the caller's credential from "Authorization: Bearer" (an access
 * token, or a per-user API token "svc_pat_...") or the svc_access_token
 * cookie and verifies it (an access token's signature and claims once per
 * process: struct svc_token_cache). Writes the user id into out_user_id (37 bytes);
 * sets req->scopes to SVC_SCOPE_ALL and req->session_id for a session, or
 * req->token_id and req->token_scopes for an API token (the router then
 * checks them against the route and sets req->scopes:
 * svc_pat_route_scopes()). An access token is also checked against its
 * session and the user's generation when the process has a database
 * (svc_session_check_cached(): one read by primary keys, or none when the
 * same session passed in this process in the last SVC_SESSION_CACHE_MS and
 * nothing was revoked on this host since). Returns 0,
 * SVC_E_UNAUTHORIZED, or a DB error.
 */
int svc_req_authenticate(struct svc_req *req, char *out_user_id);

#endif
