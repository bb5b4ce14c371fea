/* app_fetch_decl.h: the apps' server-side secrets and calls as svc.data.json declares them: secret names and values, the "fetch" block's calls, and the path of a call kept under its URL (docs/app-backend.md "Secrets and calls"). */
#ifndef SVC_APP_FETCH_DECL_H
#define SVC_APP_FETCH_DECL_H

#include <stddef.h>

#define SVC_APP_SECRET_NAME_MAX 64    /* bytes of a secret's name: [A-Za-z_][A-Za-z0-9_]* */
#define SVC_APP_SECRET_MIN 8          /* bytes of a secret's value, at least (shorter ones could not be scrubbed) */
#define SVC_APP_SECRET_MAX 4096       /* bytes of a secret's value, at most */
#define SVC_APP_MAX_SECRETS 100       /* per project */
#define SVC_APP_MAX_FETCHES 16        /* calls declared in one svc.data.json */
#define SVC_APP_FETCH_URL_MAX 1024    /* bytes of a call's URL */
#define SVC_APP_FETCH_MAX_HEADERS 8   /* declared headers per call */
#define SVC_APP_FETCH_HEADER_MAX 1024 /* bytes of a declared header's value (before its secrets are put in) */
#define SVC_APP_FETCH_PATH_MAX 2048   /* bytes of a call's path, after normalising */

/* The methods a call may be made with (struct svc_app_fetch's `methods`, a bit per method). */
enum svc_app_fetch_method {
	SVC_APP_FETCH_GET = 1u << 0,
	SVC_APP_FETCH_POST = 1u << 1,
	SVC_APP_FETCH_PUT = 1u << 2,
	SVC_APP_FETCH_PATCH = 1u << 3,
	SVC_APP_FETCH_DELETE = 1u << 4,
};

/* One declared header of a call: its value may name secrets as {{secrets.NAME}}. */
struct svc_app_fetch_header {
	char name[65];
	char value[SVC_APP_FETCH_HEADER_MAX + 1];
};

/* One declared call of "fetch": {"url", "headers"?, "methods"?, "rule"?}. */
struct svc_app_fetch {
	char name[65];                     /* [A-Za-z_][A-Za-z0-9_]{0,63} */
	char url[SVC_APP_FETCH_URL_MAX + 2]; /* "https://host[:port]/path/": no user info, query or fragment; ends in "/" */
	size_t prefix_len;                 /* bytes of "scheme://host[:port]" in url (its path starts there) */
	int https;                         /* 0: http:// (svc-app calls it only with SVC_APP_FETCH_ALLOW_HTTP=1) */
	struct svc_app_fetch_header headers[SVC_APP_FETCH_MAX_HEADERS];
	size_t nheaders;
	unsigned methods;                  /* an OR of enum svc_app_fetch_method; default GET */
	int rule;                          /* an enum svc_app_rule (app_decl.h); default SVC_APP_SIGNED_IN ("user") */
};

/* 1 when `s` is a secret's name: 1 to SVC_APP_SECRET_NAME_MAX bytes of [A-Za-z0-9_], not starting with a digit; else 0. */
int svc_app_secret_name_valid(const char *s);

/*
 * Checks a secret's value (`len` bytes at `v`): SVC_APP_SECRET_MIN to
 * SVC_APP_SECRET_MAX bytes of UTF-8 with no control character (no CR, LF,
 * NUL or tab: it goes into a header line). Returns 0, or SVC_E_VALIDATION
 * with a message in msg (max bytes) that never quotes the value.
 */
int svc_app_secret_value_check(const char *v, size_t len, char *msg, size_t max);

/*
 * Checks and normalises a call's URL `url` into out->url and out->prefix_len,
 * out->https: http:// or https:// (scheme compared without case, kept lower
 * case), a host of letters, digits, '-', '.' (or an IPv4 address, or an IPv6
 * one in brackets) with an optional port 1..65535, no user info, no query, no
 * fragment, a path without "." or ".." segments, "//" or '%' (a "/" is added
 * at its end when missing). Returns 0, or SVC_E_VALIDATION with the reason in
 * why (max bytes).
 */
int svc_app_fetch_url_set(struct svc_app_fetch *out, const char *url, char *why, size_t max);

/*
 * Checks a declared header value: every "{{" opens "{{secrets.NAME}}" with a
 * valid secret name; no CR, LF or NUL. Returns 0, or SVC_E_VALIDATION with the
 * reason in why (max bytes).
 */
int svc_app_fetch_header_value_check(const char *v, char *why, size_t max);

/* The bit of method `m` ("GET", ...; exact upper case), or 0 when it is none a call may use. */
unsigned svc_app_fetch_method_bit(const char *m);

/*
 * The URL a call of `f` with path `path` (what the page asked for, "" or
 * NULL for the URL itself) goes to, without its query: f->url followed by
 * `path` with its leading "/" dropped, after percent-decoding the path's
 * unreserved characters only. Refused (SVC_E_FORBIDDEN, the reason in why of
 * max bytes): a segment "." or ".." (also encoded: "%2e", "%2E", "%2e%2e",
 * ...), an encoded "/" or "\" ("%2f", "%5c"), a "\", "//" anywhere, a
 * scheme or "//host" at its start, '?' or '#', control characters and
 * bytes outside printable ASCII, or a result past SVC_APP_FETCH_PATH_MAX.
 * So the result always starts with f->url. Writes into out (max bytes).
 * Returns 0, SVC_E_FORBIDDEN or SVC_E_TOO_LARGE (out too small).
 */
int svc_app_fetch_path(const struct svc_app_fetch *f, const char *path, char *out, size_t max, char *why,
		       size_t why_max);

#endif
