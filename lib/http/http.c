/* http.c: the FastCGI responder loop, the router, request accessors, responses and server-sent events. */
#include <errno.h>
#include <signal.h>
#include <grp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <curl/curl.h>
#include <mysql.h>
#include <openssl/crypto.h>

#include "auth/auth.h"
#include "auth/internal.h"
#include "core/err.h"
#include "http/http.h"
#include "core/json.h"
#include "core/log.h"
#include "core/mem.h"
#include "core/psl.h"
#include "auth/perm.h"

#define DEFAULT_MAX_BODY (1024 * 1024)
#define PATH_MAX_LEN 4096

/* ---- request accessors ---- */

/* Percent-decodes `len` bytes of `s` into a new string; '+' becomes ' ' when `plus`. NULL on a bad escape or NUL. */
static char *pct_decode(const char *s, size_t len, int plus)
{
	char *out = malloc(len + 1);
	size_t i, o = 0;

	if (!out)
		return NULL;
	for (i = 0; i < len; i++) {
		char c = s[i];
		if (c == '%') {
			int h, l;
			if (i + 2 >= len) {
				free(out);
				return NULL;
			}
			h = svc_hex_digit(s[i + 1]);
			l = svc_hex_digit(s[i + 2]);
			if (h < 0 || l < 0 || (h == 0 && l == 0)) {
				free(out);
				return NULL;
			}
			out[o++] = (char)(h * 16 + l);
			i += 2;
		} else if (c == '+' && plus) {
			out[o++] = ' ';
		} else {
			out[o++] = c;
		}
	}
	out[o] = '\0';
	return out;
}

const char *svc_req_param(const struct svc_req *req, const char *name)
{
	size_t i;

	for (i = 0; i < req->nparams; i++)
		if (strcmp(req->param_names[i], name) == 0)
			return req->param_values[i];
	return NULL;
}

const struct svc_caller *svc_req_caller(struct svc_req *req)
{
	struct svc_caller *c = &req->caller;

	c->db = req->ctx->db;
	c->cfg = &req->ctx->cfg;
	c->user_id = req->user_id;
	c->scopes = req->scopes;
	c->client_addr = req->remote_addr;
	return c;
}

const char *svc_req_header(const struct svc_req *req, const char *name)
{
	char var[128] = "HTTP_";
	size_t i, o = 5;

	if (strcmp(name, "Content-Type") == 0)
		return FCGX_GetParam("CONTENT_TYPE", req->fcgi->envp);
	if (strcmp(name, "Content-Length") == 0)
		return FCGX_GetParam("CONTENT_LENGTH", req->fcgi->envp);
	for (i = 0; name[i] && o < sizeof var - 1; i++) {
		char c = name[i];
		var[o++] = c == '-' ? '_' : (c >= 'a' && c <= 'z') ? (char)(c - 32) : c;
	}
	var[o] = '\0';
	return FCGX_GetParam(var, req->fcgi->envp);
}

int svc_req_query(const struct svc_req *req, const char *name, char *out, size_t max)
{
	const char *p = req->query;
	size_t nlen = strlen(name);

	while (p && *p) {
		const char *amp = strchr(p, '&');
		const char *end = amp ? amp : p + strlen(p);
		const char *eq = memchr(p, '=', (size_t)(end - p));
		const char *kend = eq ? eq : end;
		char *key = pct_decode(p, (size_t)(kend - p), 1);

		if (key && strlen(key) == nlen && memcmp(key, name, nlen) == 0) {
			char *val = eq ? pct_decode(eq + 1, (size_t)(end - eq - 1), 1) : strdup("");
			size_t vl;
			free(key);
			if (!val)
				return SVC_E_VALIDATION;
			vl = strlen(val);
			if (vl >= max || !svc_utf8_valid(val, vl)) {
				free(val);
				return SVC_E_VALIDATION;
			}
			memcpy(out, val, vl + 1);
			free(val);
			return 1;
		}
		free(key);
		p = amp ? amp + 1 : NULL;
	}
	return 0;
}

int svc_req_cookie(const struct svc_req *req, const char *name, char *out, size_t max)
{
	return svc_cookie_get(svc_req_header(req, "Cookie"), name, out, max);
}

long svc_req_body_read(struct svc_req *req, void *buf, size_t max)
{
	int n = FCGX_GetStr(buf, max > INT_MAX ? INT_MAX : (int)max, req->fcgi->in);

	if (n < 0 || FCGX_GetError(req->fcgi->in) != 0)
		return SVC_E_CLIENT_GONE;
	return n;
}

/*
 * svc_auth_jwt_verify_claims() for an access token `t` (len bytes), through
 * ctx->tokens: the same bytes verified before take their claims again while
 * exp is ahead of `now` (s). Returns 0 or SVC_E_UNAUTHORIZED.
 */
static int verify_access(struct svc_ctx *ctx, const char *t, size_t len, int64_t now, struct svc_auth_claims *out)
{
	const struct svc_config *c = &ctx->cfg;
	uint32_t h = 2166136261u;
	size_t i;

	/* the slot from the signature's end, which the client chose no more than the token */
	for (i = len > 16 ? len - 16 : 0; i < len; i++)
		h = (h ^ (unsigned char)t[i]) * 16777619u;
	i = h % SVC_TOKEN_CACHE_SLOTS;
	if (ctx->tokens.e[i].len == len && len && CRYPTO_memcmp(ctx->tokens.e[i].token, t, len) == 0 &&
	    ctx->tokens.e[i].claims.exp > now) {
		*out = ctx->tokens.e[i].claims;
		return 0;
	}
	if (svc_auth_jwt_verify_claims(c->jwt_secret, c->jwt_secret_len, c->jwt_issuer, SVC_TOKEN_ACCESS, t, now, out) < 0)
		return SVC_E_UNAUTHORIZED;
	if (len < SVC_TOKEN_CACHE_LEN) {
		memcpy(ctx->tokens.e[i].token, t, len);
		ctx->tokens.e[i].len = len;
		ctx->tokens.e[i].claims = *out;
	}
	return 0;
}

int svc_req_authenticate(struct svc_req *req, char *out_user_id)
{
	const char *auth = svc_req_header(req, "Authorization");
	char token[SVC_AUTH_TOKEN_MAX + 1];
	struct svc_auth_claims claims;
	const char *t = NULL;
	int err;

	if (auth && strncasecmp(auth, "Bearer ", 7) == 0) {
		t = auth + 7;
		while (*t == ' ')
			t++;
	} else if (svc_req_cookie(req, "svc_access_token", token, sizeof token) == 1) {
		t = token;
	}
	if (!t || !*t)
		return SVC_E_UNAUTHORIZED;
	/* an app end user's session (svc_app_session, lib/app) is never a credential of the API */
	if (strncmp(t, SVC_APP_SESSION_PREFIX, sizeof(SVC_APP_SESSION_PREFIX) - 1) == 0)
		return SVC_E_UNAUTHORIZED;
	req->token_id[0] = '\0';
	req->session_id[0] = '\0';
	req->token_scopes = 0;
	req->scopes = 0;
	if (t != token && strncmp(t, SVC_PAT_PREFIX, sizeof(SVC_PAT_PREFIX) - 1) == 0) {
		/* a per-user API token: only as a Bearer header, never as the cookie */
		if (!req->ctx->db)
			return SVC_E_UNAVAILABLE;
		return svc_pat_authenticate(req->ctx->db, t, out_user_id, req->token_id, &req->token_scopes);
	}
	if (verify_access(req->ctx, t, strnlen(t, SVC_AUTH_TOKEN_MAX + 1), svc_now_ms() / 1000, &claims) < 0)
		return SVC_E_UNAUTHORIZED;
	/* the session is not ended (logout, reuse) and no password change came after the token */
	if (req->ctx->db && (err = svc_session_check_cached(req->ctx->db, &req->ctx->sessions, &claims, svc_mono_ms())) < 0)
		return err;
	memcpy(out_user_id, claims.user_id, sizeof claims.user_id);
	memcpy(req->session_id, claims.family, sizeof claims.family);
	req->scopes = SVC_SCOPE_ALL;
	return 0;
}

/* ---- responses ---- */

int svc_resp_after(struct svc_resp *resp, void (*fn)(struct svc_ctx *ctx, void *arg), void *arg)
{
	if (resp->after)
		resp->after(NULL, resp->after_arg);
	resp->after = fn;
	resp->after_arg = arg;
	return 0;
}

int svc_resp_rate_limited(struct svc_resp *resp, int64_t retry_after)
{
	char secs[24];

	if (retry_after < 1)
		retry_after = 1;
	snprintf(secs, sizeof secs, "%lld", (long long)retry_after);
	svc_resp_header(resp, "Retry-After", secs);
	return svc_resp_error(resp, SVC_E_RATE_LIMITED, NULL, "Too many requests; try again in %lld seconds.",
			      (long long)retry_after);
}

int svc_resp_json(struct svc_resp *resp, int status, struct json_object *body)
{
	json_object_put(resp->json);
	resp->json = body;
	resp->status = status;
	return 0;
}

/* ---- HTTP dates and conditional requests (RFC 9110 §5.6.7, §13) ---- */

static const char *const day_names[7] = { "Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat" };
static const char *const day_names_long[7] = { "Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday",
					       "Saturday" };
static const char *const month_names[12] = { "Jan", "Feb", "Mar", "Apr", "May", "Jun",
					     "Jul", "Aug", "Sep", "Oct", "Nov", "Dec" };

/* Days since 1970-01-01 of a proleptic Gregorian date (month 1-12), H. Hinnant's days_from_civil. */
static int64_t days_from_civil(int64_t y, int m, int d)
{
	int64_t era, yoe, doy;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = y - era * 400;
	doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	return era * 146097 + yoe * 365 + yoe / 4 - yoe / 100 + doy - 719468;
}

void svc_http_date_format(int64_t secs, char *out)
{
	int64_t days = (secs < 0 ? 0 : secs) / 86400, rem = (secs < 0 ? 0 : secs) % 86400;
	int64_t z = days + 719468, era = z / 146097, doe = z - era * 146097;
	int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100), mp = (5 * doy + 2) / 153;
	int d = (int)(doy - (153 * mp + 2) / 5 + 1), m = (int)(mp < 10 ? mp + 3 : mp - 9);
	int64_t y = yoe + era * 400 + (m <= 2);

	snprintf(out, SVC_HTTP_DATE_LEN + 1, "%s, %02d %s %04d %02d:%02d:%02d GMT", day_names[(days + 4) % 7], d,
		 month_names[m - 1], (int)(y % 10000), (int)(rem / 3600), (int)(rem / 60 % 60), (int)(rem % 60));
}

/* Reads exactly `n` digits at *p into *out and moves past them; -1 when they are not all digits. */
static int date_digits(const char **p, int n, int *out)
{
	int v = 0, i;

	for (i = 0; i < n; i++) {
		if ((*p)[i] < '0' || (*p)[i] > '9')
			return -1;
		v = v * 10 + ((*p)[i] - '0');
	}
	*p += n;
	*out = v;
	return 0;
}

/* Moves past `lit` at *p; -1 when *p does not start with it (case-sensitive, as RFC 9110 §5.6.7 says). */
static int date_lit(const char **p, const char *lit)
{
	size_t n = strlen(lit);

	if (strncmp(*p, lit, n) != 0)
		return -1;
	*p += n;
	return 0;
}

/* The index in names[0..n) of the name *p starts with, moving past it; -1 when none. */
static int date_name(const char **p, const char *const *names, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (date_lit(p, names[i]) == 0)
			return i;
	return -1;
}

/* "HH:MM:SS" at *p into seconds of the day; -1 when malformed or out of range (a leap second is taken as 59). */
static int date_time(const char **p, int *out)
{
	int h, m, s;

	if (date_digits(p, 2, &h) < 0 || date_lit(p, ":") < 0 || date_digits(p, 2, &m) < 0 || date_lit(p, ":") < 0 ||
	    date_digits(p, 2, &s) < 0 || h > 23 || m > 59 || s > 60)
		return -1;
	*out = h * 3600 + m * 60 + (s == 60 ? 59 : s);
	return 0;
}

int svc_http_date_parse(const char *s, int64_t *out_secs)
{
	static const int mdays[12] = { 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
	const char *p = s;
	int d = 0, mon, y = 0, t = 0, long_day, short_day = 0;

	if (!s)
		return SVC_E_VALIDATION;
	long_day = date_name(&p, day_names_long, 7) >= 0 && *p == ',';
	if (!long_day) {
		p = s;
		short_day = date_name(&p, day_names, 7) >= 0;
	}
	if (long_day) {
		/* rfc850-date: Sunday, 06-Nov-94 08:49:37 GMT */
		if (date_lit(&p, ", ") < 0 || date_digits(&p, 2, &d) < 0 || date_lit(&p, "-") < 0 ||
		    (mon = date_name(&p, month_names, 12)) < 0 || date_lit(&p, "-") < 0 || date_digits(&p, 2, &y) < 0 ||
		    date_lit(&p, " ") < 0 || date_time(&p, &t) < 0 || date_lit(&p, " GMT") < 0)
			return SVC_E_VALIDATION;
		y += y < 70 ? 2000 : 1900;
	} else if (short_day && *p == ',') {
		/* IMF-fixdate: Sun, 06 Nov 1994 08:49:37 GMT */
		if (date_lit(&p, ", ") < 0 || date_digits(&p, 2, &d) < 0 || date_lit(&p, " ") < 0 ||
		    (mon = date_name(&p, month_names, 12)) < 0 || date_lit(&p, " ") < 0 || date_digits(&p, 4, &y) < 0 ||
		    date_lit(&p, " ") < 0 || date_time(&p, &t) < 0 || date_lit(&p, " GMT") < 0)
			return SVC_E_VALIDATION;
	} else if (short_day) {
		/* asctime-date: Sun Nov  6 08:49:37 1994 */
		if (date_lit(&p, " ") < 0 || (mon = date_name(&p, month_names, 12)) < 0 || date_lit(&p, " ") < 0)
			return SVC_E_VALIDATION;
		if (*p == ' ') {
			p++;
			if (date_digits(&p, 1, &d) < 0)
				return SVC_E_VALIDATION;
		} else if (date_digits(&p, 2, &d) < 0) {
			return SVC_E_VALIDATION;
		}
		if (date_lit(&p, " ") < 0 || date_time(&p, &t) < 0 || date_lit(&p, " ") < 0 || date_digits(&p, 4, &y) < 0)
			return SVC_E_VALIDATION;
	} else {
		return SVC_E_VALIDATION;
	}
	if (*p != '\0' || y < 1970 || d < 1 || d > mdays[mon] ||
	    (mon == 1 && d == 29 && !((y % 4 == 0 && y % 100 != 0) || y % 400 == 0)))
		return SVC_E_VALIDATION;
	*out_secs = days_from_civil(y, mon + 1, d) * 86400 + t;
	return 0;
}

/* 1 when the If-None-Match list `list` holds "*" or an entity-tag whose opaque-tag is `etag` (weak comparison,
 * RFC 9110 §8.8.3.2, §13.1.2); 0 when none does, or the list is malformed. */
static int etag_listed(const char *list, const char *etag)
{
	const char *p = list;
	size_t elen = strlen(etag);
	int found = 0;

	for (;;) {
		const char *tag;
		while (*p == ' ' || *p == '\t' || *p == ',')
			p++;
		if (*p == '\0')
			return found;
		if (*p == '*') {
			p++;
			found = 1;
			continue;
		}
		if (strncmp(p, "W/", 2) == 0)
			p += 2;
		if (*p != '"')
			return 0;
		tag = p++;
		while (*p && *p != '"' && (unsigned char)*p >= 0x21 && (unsigned char)*p != 0x7f)
			p++;
		if (*p != '"')
			return 0;
		p++;
		if ((size_t)(p - tag) == elen && memcmp(tag, etag, elen) == 0)
			found = 1;
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p != ',' && *p != '\0')
			return 0;
	}
}

int svc_http_not_modified(const char *if_none_match, const char *if_modified_since, const char *etag,
			  int64_t last_modified_secs)
{
	int64_t since;

	if (if_none_match)
		return etag && etag_listed(if_none_match, etag);
	if (!if_modified_since || last_modified_secs <= 0 || svc_http_date_parse(if_modified_since, &since) < 0)
		return 0;
	return last_modified_secs <= since;
}

int svc_resp_raw(struct svc_resp *resp, int status, const char *type, const char *data, size_t len)
{
	char *copy = malloc(len + 1);

	if (!copy)
		return SVC_E_INTERNAL;
	memcpy(copy, data, len);
	copy[len] = '\0';
	free(resp->raw);
	resp->raw = copy;
	resp->raw_len = len;
	resp->raw_type = type;
	resp->status = status;
	return 0;
}

static int header_safe(const char *s)
{
	for (; *s; s++)
		if (*s == '\r' || *s == '\n')
			return 0;
	return 1;
}

int svc_resp_header(struct svc_resp *resp, const char *name, const char *value)
{
	if (!header_safe(name) || !header_safe(value) || strchr(name, ':'))
		return SVC_E_INTERNAL;
	return svc_buf_addf(&resp->headers, "%s: %s\r\n", name, value);
}

int svc_resp_cookie(struct svc_resp *resp, const char *name, const char *value,
		    const char *path, int64_t max_age)
{
	struct svc_buf b;
	int err;

	svc_buf_init(&b, 8192);
	err = svc_buf_addf(&b, "%s=%s; Path=%s; HttpOnly; SameSite=Lax; Max-Age=%lld", name, value,
			   path, (long long)max_age);
	if (err == 0 && max_age == 0)
		err = svc_buf_adds(&b, "; Expires=Thu, 01 Jan 1970 00:00:00 GMT");
	if (err == 0 && resp->cfg->secure_cookies)
		err = svc_buf_adds(&b, "; Secure");
	if (err == 0)
		err = svc_resp_header(resp, "Set-Cookie", b.data);
	svc_buf_dispose(&b);
	return err;
}

int svc_resp_error(struct svc_resp *resp, int err, const char *field, const char *fmt, ...)
{
	va_list ap;

	resp->field = NULL;
	if (field) {
		snprintf(resp->field_buf, sizeof resp->field_buf, "%s", field);
		resp->field = resp->field_buf;
	}
	resp->message[0] = '\0';
	if (fmt) {
		va_start(ap, fmt);
		vsnprintf(resp->message, sizeof resp->message, fmt, ap);
		va_end(ap);
	}
	return err;
}

static const char *reason(int status)
{
	switch (status) {
	case 200: return "OK";
	case 201: return "Created";
	case 204: return "No Content";
	case 301: return "Moved Permanently";
	case 302: return "Found";
	case 304: return "Not Modified";
	case 400: return "Bad Request";
	case 401: return "Unauthorized";
	case 402: return "Payment Required";
	case 403: return "Forbidden";
	case 404: return "Not Found";
	case 405: return "Method Not Allowed";
	case 409: return "Conflict";
	case 413: return "Payload Too Large";
	case 415: return "Unsupported Media Type";
	case 429: return "Too Many Requests";
	case 502: return "Bad Gateway";
	case 503: return "Service Unavailable";
	default: return status >= 500 ? "Internal Server Error" : "Error";
	}
}

/* Writes the status line and headers: the security headers every response carries, then the handler's. */
static void write_head(struct svc_resp *resp, const char *type, size_t len, int with_len)
{
	FCGX_Stream *out = resp->fcgi->out;

	char line[160];

	/* libfcgi's FCGX_FPrintF has its own, partial format parser: format here. */
	snprintf(line, sizeof line, "Status: %d %s\r\n", resp->status, reason(resp->status));
	FCGX_PutS(line, out);
	if (type) {
		snprintf(line, sizeof line, "Content-Type: %s\r\n", type);
		FCGX_PutS(line, out);
	}
	/* a 304's Content-Length would have to be the 200's (RFC 9110 §8.6): none */
	if (with_len && resp->status != 304) {
		snprintf(line, sizeof line, "Content-Length: %zu\r\n", len);
		FCGX_PutS(line, out);
	}
	FCGX_PutS("X-Content-Type-Options: nosniff\r\n"
		  "Referrer-Policy: no-referrer\r\n", out);
	/* a site's own policy (SVC_R_SITE: the preview) replaces the API's; frame-ancestors supersedes X-Frame-Options */
	if (!resp->own_csp || !resp->headers.data || !strcasestr(resp->headers.data, "Content-Security-Policy:"))
		FCGX_PutS("X-Frame-Options: DENY\r\n"
			  "Content-Security-Policy: default-src 'none'; frame-ancestors 'none'\r\n", out);
	/* API answers are not cached unless the handler says otherwise (thumbnails do) */
	if (!resp->headers.data || strncasecmp(resp->headers.data, "Cache-Control:", 14) != 0) {
		if (!resp->headers.data || !strcasestr(resp->headers.data, "\r\nCache-Control:"))
			FCGX_PutS("Cache-Control: no-store\r\n", out);
	}
	if (resp->headers.len)
		FCGX_PutStr(resp->headers.data, (int)resp->headers.len, out);
	FCGX_PutS("\r\n", out);
	resp->started = 1;
}

/* Retry-After of a 503: a database that stalled or restarted is usually back within seconds. */
#define RETRY_AFTER_UNAVAILABLE "5"

static void send_error(struct svc_resp *resp, int err)
{
	struct json_object *o = json_object_new_object();
	const char *body;

	resp->status = svc_err_status(err);
	if (err == SVC_E_UNAVAILABLE)
		svc_resp_header(resp, "Retry-After", RETRY_AFTER_UNAVAILABLE);
	json_object_object_add(o, "error", json_object_new_string(svc_err_code(err)));
	json_object_object_add(o, "message", json_object_new_string(
		resp->message[0] ? resp->message : svc_err_message(err)));
	if (resp->field)
		json_object_object_add(o, "field", json_object_new_string(resp->field));
	body = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
	write_head(resp, "application/json", strlen(body), 1);
	FCGX_PutS(body, resp->fcgi->out);
	json_object_put(o);
}

static void send_response(struct svc_resp *resp, enum svc_method method)
{
	if (resp->json) {
		const char *body = json_object_to_json_string_ext(resp->json, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
		size_t len = strlen(body);
		write_head(resp, "application/json", len, 1);
		if (method != SVC_OPTIONS)
			FCGX_PutStr(body, (int)len, resp->fcgi->out);
	} else if (resp->raw) {
		write_head(resp, resp->raw_type, resp->raw_len, 1);
		FCGX_PutStr(resp->raw, (int)resp->raw_len, resp->fcgi->out);
	} else {
		if (resp->status == 0)
			resp->status = 204;
		write_head(resp, NULL, 0, resp->status != 204);
	}
}

int svc_sse_begin(struct svc_resp *resp)
{
	resp->status = 200;
	svc_resp_header(resp, "X-Accel-Buffering", "no");
	write_head(resp, "text/event-stream; charset=utf-8", 0, 0);
	resp->last_write_ms = svc_mono_ms();
	if (FCGX_FFlush(resp->fcgi->out) < 0)
		return SVC_E_CLIENT_GONE;
	return 0;
}

int svc_sse_event(struct svc_resp *resp, const char *type, struct json_object *payload)
{
	const char *text;

	json_object_object_add(payload, "type", json_object_new_string(type));
	text = json_object_to_json_string_ext(payload, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
	FCGX_PutS("data: ", resp->fcgi->out);
	FCGX_PutS(text, resp->fcgi->out);
	FCGX_PutS("\n\n", resp->fcgi->out);
	resp->last_write_ms = svc_mono_ms();
	if (FCGX_FFlush(resp->fcgi->out) < 0 || FCGX_GetError(resp->fcgi->out) != 0)
		return SVC_E_CLIENT_GONE;
	return 0;
}

int svc_sse_keepalive(struct svc_resp *resp, int64_t idle_ms)
{
	if (svc_mono_ms() - resp->last_write_ms < idle_ms)
		return FCGX_GetError(resp->fcgi->out) != 0 ? SVC_E_CLIENT_GONE : 0;
	FCGX_PutS(": ping\n\n", resp->fcgi->out);
	resp->last_write_ms = svc_mono_ms();
	if (FCGX_FFlush(resp->fcgi->out) < 0 || FCGX_GetError(resp->fcgi->out) != 0)
		return SVC_E_CLIENT_GONE;
	return 0;
}

/* ---- a streamed raw body (git-io: export.zip) ---- */

int svc_resp_stream_begin(struct svc_resp *resp, int status, const char *type)
{
	resp->status = status;
	svc_resp_header(resp, "X-Accel-Buffering", "no");
	write_head(resp, type, 0, 0);
	resp->last_write_ms = svc_mono_ms();
	return FCGX_GetError(resp->fcgi->out) != 0 ? SVC_E_CLIENT_GONE : 0;
}

int svc_resp_stream_write(struct svc_resp *resp, const void *data, size_t len)
{
	while (len > 0) {
		int n = len > (1u << 20) ? 1 << 20 : (int)len;
		if (FCGX_PutStr(data, n, resp->fcgi->out) != n)
			return SVC_E_CLIENT_GONE;
		data = (const char *)data + n;
		len -= (size_t)n;
	}
	if (FCGX_FFlush(resp->fcgi->out) < 0 || FCGX_GetError(resp->fcgi->out) != 0)
		return SVC_E_CLIENT_GONE;
	return 0;
}

/* ---- router ---- */

static enum svc_method parse_method(const char *m)
{
	if (!m)
		return 0;
	if (strcmp(m, "GET") == 0 || strcmp(m, "HEAD") == 0)
		return SVC_GET;
	if (strcmp(m, "POST") == 0)
		return SVC_POST;
	if (strcmp(m, "PUT") == 0)
		return SVC_PUT;
	if (strcmp(m, "PATCH") == 0)
		return SVC_PATCH;
	if (strcmp(m, "DELETE") == 0)
		return SVC_DELETE;
	if (strcmp(m, "OPTIONS") == 0)
		return SVC_OPTIONS;
	return 0;
}

static void clear_params(struct svc_req *req)
{
	size_t i;

	for (i = 0; i < req->nparams; i++)
		free(req->param_values[i]);
	req->nparams = 0;
}

static int is_id_name(const char *name, size_t len)
{
	return len >= 2 && (strncmp(name + len - 2, "id", 2) == 0 || strncmp(name + len - 2, "Id", 2) == 0);
}

/*
 * Matches `path` against `pattern`, filling req's parameters. Returns 1 on a
 * match, 0 otherwise, -1 when it matched but an id parameter is not a UUID.
 */
static int match(struct svc_req *req, const char *pattern, const char *path)
{
	const char *p = pattern, *s = path;
	int bad_id = 0;

	clear_params(req);
	while (*p) {
		if (*p == '*') {
			if (req->nparams == SVC_MAX_PARAMS || !*s)
				return 0;
			req->param_names[req->nparams] = "*";
			req->param_values[req->nparams++] = strdup(s);
			return bad_id ? -1 : 1;
		}
		if (*p == ':') {
			const char *name = p + 1, *ne = name, *se = s;
			size_t nlen;
			while (*ne && *ne != '/')
				ne++;
			while (*se && *se != '/')
				se++;
			nlen = (size_t)(ne - name);
			if (se == s || req->nparams == SVC_MAX_PARAMS)
				return 0;
			req->param_names[req->nparams] = NULL;
			req->param_values[req->nparams] = strndup(s, (size_t)(se - s));
			if (!req->param_values[req->nparams])
				return 0;
			/* Names are stored by pointer into the pattern; terminate by copying. */
			req->param_names[req->nparams] = strndup(name, nlen);
			req->nparams++;
			if (is_id_name(name, nlen) && !svc_uuid_valid(req->param_values[req->nparams - 1]))
				bad_id = 1;
			p = ne;
			s = se;
			continue;
		}
		if (*p != *s)
			return 0;
		p++;
		s++;
	}
	if (*s)
		return 0;
	return bad_id ? -1 : 1;
}

static void free_param_names(struct svc_req *req)
{
	size_t i;

	for (i = 0; i < req->nparams; i++)
		if (strcmp(req->param_names[i], "*") != 0)
			free((char *)req->param_names[i]);
}

static const char *methods_allowed(unsigned m, char *buf, size_t max)
{
	static const struct { unsigned bit; const char *name; } names[] = {
		{ SVC_GET, "GET, HEAD" }, { SVC_POST, "POST" }, { SVC_PUT, "PUT" },
		{ SVC_PATCH, "PATCH" }, { SVC_DELETE, "DELETE" },
	};
	size_t i, o = 0;

	buf[0] = '\0';
	for (i = 0; i < sizeof names / sizeof names[0]; i++) {
		if (m & names[i].bit) {
			int n = snprintf(buf + o, max - o, "%s%s", o ? ", " : "", names[i].name);
			if (n < 0 || (size_t)n >= max - o)
				break;
			o += (size_t)n;
		}
	}
	return buf;
}

/* CORS: only listed origins get the headers (docs/conventions.md "CORS"). Returns 1 when the origin is allowed. */
static int cors(struct svc_req *req, struct svc_resp *resp)
{
	const char *origin = svc_req_header(req, "Origin");
	const char *list = req->ctx->cfg.cors_origins;
	size_t olen;

	if (!origin || !*origin)
		return 0;
	olen = strlen(origin);
	while (list && *list) {
		const char *comma = strchr(list, ',');
		const char *end = comma ? comma : list + strlen(list);
		while (*list == ' ')
			list++;
		if ((size_t)(end - list) == olen && memcmp(list, origin, olen) == 0) {
			svc_resp_header(resp, "Access-Control-Allow-Origin", origin);
			svc_resp_header(resp, "Access-Control-Allow-Credentials", "true");
			svc_resp_header(resp, "Vary", "Origin");
			return 1;
		}
		list = comma ? comma + 1 : NULL;
	}
	return 0;
}

static int read_body(struct svc_req *req, size_t max)
{
	const char *cl = FCGX_GetParam("CONTENT_LENGTH", req->fcgi->envp);
	uint64_t len = 0;
	size_t got = 0;

	if (cl && *cl && svc_parse_u64(cl, UINT64_MAX, &len) < 0)
		return SVC_E_VALIDATION;
	if (len > max)
		return SVC_E_TOO_LARGE;
	req->body = malloc((size_t)len + 1);
	if (!req->body)
		return SVC_E_INTERNAL;
	while (got < len) {
		int n = FCGX_GetStr(req->body + got, (int)(len - got), req->fcgi->in);
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	if (got != len)
		return SVC_E_VALIDATION;
	req->body[got] = '\0';
	req->body_len = got;
	return 0;
}

static int is_json_type(const char *ct)
{
	size_t n = strlen("application/json");

	if (!ct)
		return 0;
	while (*ct == ' ')
		ct++;
	return strncasecmp(ct, "application/json", n) == 0 && (ct[n] == '\0' || ct[n] == ';' || ct[n] == ' ');
}

/* Writes the origin ("scheme://host[:port]") of `url` into out (max bytes). Returns its length, 0 when none. */
static size_t origin_of(const char *url, char *out, size_t max)
{
	const char *s = url ? strstr(url, "://") : NULL;
	size_t n;

	if (!s)
		return 0;
	s += 3;
	while (*s && *s != '/' && *s != '?' && *s != '#')
		s++;
	n = (size_t)(s - url);
	if (n >= max)
		return 0;
	memcpy(out, url, n);
	out[n] = '\0';
	return n;
}

/* 1 when `value` (an Origin, or a Referer when `referer`) is app_url's or base_url's origin. */
static int same_origin(const struct svc_config *c, const char *value, int referer)
{
	char o[512];
	const char *urls[2] = { c->app_url, c->base_url };
	size_t i, n;

	for (i = 0; i < 2; i++) {
		n = origin_of(urls[i], o, sizeof o);
		if (!n || strncmp(value, o, n) != 0)
			continue;
		if (value[n] == '\0' || (referer && value[n] == '/'))
			return 1;
	}
	return 0;
}

/*
 * CSRF (docs/api.md "Cross-site requests"): an unsafe request that is not
 * Bearer-authenticated and carries a session cookie, or any Origin at all,
 * must come from app_url's or base_url's origin (Origin, else Referer).
 * Returns 0 or SVC_E_FORBIDDEN.
 */
static int csrf_check(struct svc_req *req)
{
	const char *auth = svc_req_header(req, "Authorization");
	const char *origin = svc_req_header(req, "Origin"), *referer = svc_req_header(req, "Referer");
	char cookie[SVC_AUTH_TOKEN_MAX + 1];
	int with_cookie;

	if (req->method == SVC_GET || req->method == SVC_OPTIONS)
		return 0;
	if (auth && strncasecmp(auth, "Bearer ", 7) == 0)
		return 0;
	with_cookie = svc_req_cookie(req, "svc_access_token", cookie, sizeof cookie) == 1 ||
		      svc_req_cookie(req, "svc_refresh_token", cookie, sizeof cookie) == 1;
	if (!with_cookie && !(origin && *origin))
		return 0;
	if (origin && *origin)
		return same_origin(&req->ctx->cfg, origin, 0) ? 0 : SVC_E_FORBIDDEN;
	if (referer && *referer)
		return same_origin(&req->ctx->cfg, referer, 1) ? 0 : SVC_E_FORBIDDEN;
	return SVC_E_FORBIDDEN;
}

static const char *method_name(enum svc_method m)
{
	switch (m) {
	case SVC_GET: return "GET";
	case SVC_POST: return "POST";
	case SVC_PUT: return "PUT";
	case SVC_PATCH: return "PATCH";
	case SVC_DELETE: return "DELETE";
	case SVC_OPTIONS: return "OPTIONS";
	}
	return "";
}

/*
 * SVC_R_INTERNAL: only from this host or a trusted proxy (the client address
 * after X-Forwarded-For, so a request relayed from outside by a proxy on
 * this host does not pass; 404 otherwise: the path does not exist for
 * others), then X-Svc-Timestamp, X-Svc-Nonce and X-Svc-Signature over the
 * method, the decoded path and the raw body (lib/auth/internal.h), the
 * nonce not seen before (table internal_nonces); then the body (none
 * counts as "{}") is parsed into req->json. 404, 401, 400 invalid_json.
 */
/* Whether the client (after X-Forwarded-For) is on this host or a trusted proxy (SVC_R_INTERNAL, SVC_R_LOCAL). */
static int client_is_local(const struct svc_req *req)
{
	return svc_auth_addr_in_list(req->client_addr, "127.0.0.0/8, ::1") ||
	       svc_auth_addr_in_list(req->client_addr, req->ctx->auth.trusted_proxies);
}

static int internal_check(struct svc_req *req, struct svc_resp *resp)
{
	const struct svc_config *cfg = &req->ctx->cfg;

	if (!client_is_local(req))
		return SVC_E_NOT_FOUND;

	const char *nonce = svc_req_header(req, "X-Svc-Nonce");
	int err;

	if (svc_internal_verify(cfg->internal_secret, strlen(cfg->internal_secret), method_name(req->method),
				req->path, svc_req_header(req, "X-Svc-Timestamp"), nonce,
				svc_req_header(req, "X-Svc-Signature"), req->body, req->body ? req->body_len : 0,
				svc_now_ms() / 1000) < 0)
		return svc_resp_error(resp, SVC_E_UNAUTHORIZED, NULL, "Bad or missing internal signature.");
	/* each signed call once: a replay inside the timestamp window is refused (no database, as
	 * in the unit tests' dispatch, nothing to remember it in) */
	if (req->ctx->db && (err = svc_internal_nonce_db(req->ctx->db, nonce)) < 0)
		return err == SVC_E_UNAUTHORIZED
			       ? svc_resp_error(resp, SVC_E_UNAUTHORIZED, NULL, "This signed request was already used.")
			       : err;
	if (!req->json && svc_json_parse_object(req->body ? req->body : "{}", req->body ? req->body_len : 2,
						&req->json) < 0)
		return svc_resp_error(resp, SVC_E_INVALID_JSON, NULL, "The body is not a JSON object.");
	return 0;
}

/* The route's fields (struct svc_body): 400 validation_failed naming the first field that fails. */
static int body_check(struct svc_req *req, struct svc_resp *resp, const struct svc_body *body)
{
	const char *field = NULL;
	char msg[256];
	int err;

	if ((err = svc_json_validate(req->json, body->fields, body->nfields, &field, msg, sizeof msg)) < 0)
		return svc_resp_error(resp, err, field, "%s", msg);
	return 0;
}

/* The route flags are distinct bits (two of them sharing one let svc-git's routes skip the CSRF check). */
#define SVC_R__ALL_OR (SVC_R_AUTH | SVC_R_JSON | SVC_R_OPTAUTH | SVC_R_INTERNAL | SVC_R_SITE | SVC_R_LOCAL | SVC_R_APP | \
		       SVC_R_RAWBODY)
#define SVC_R__ALL_XOR (SVC_R_AUTH ^ SVC_R_JSON ^ SVC_R_OPTAUTH ^ SVC_R_INTERNAL ^ SVC_R_SITE ^ SVC_R_LOCAL ^ SVC_R_APP ^ \
			SVC_R_RAWBODY)
_Static_assert(SVC_R__ALL_OR == SVC_R__ALL_XOR, "every SVC_R_ flag is a bit of its own");

/* The cookies svc sets (lib/api/api_auth.c): at most one of each per request. */
static const char *const svc_cookie_names[] = { "svc_access_token", "svc_refresh_token", "svc_oauth", "svc_app_session" };

/* What the router's steps learn about one request and hand on to the next (dispatch()). */
struct dispatch {
	const struct svc_route *routes;
	size_t nroutes;
	const char *uri;               /* REQUEST_URI, NULL when none */
	const struct svc_route *route; /* the route of the path and method, NULL when none */
	unsigned allowed;              /* the methods of the routes whose pattern matched the path */
	int bad_id;                    /* a pattern matched but an id parameter was not a UUID */
};

/* A step's answer besides 0 (go on) and an error: the response is ready, the handler does not run. */
#define STEP_ANSWERED 1

/* The method and who the client is: the address after X-Forwarded-For from SVC_TRUSTED_PROXIES, and its rate-limit key. */
static int step_client(struct dispatch *d, struct svc_req *req, struct svc_resp *resp)
{
	(void)resp;
	d->uri = FCGX_GetParam("REQUEST_URI", req->fcgi->envp);
	req->method = parse_method(FCGX_GetParam("REQUEST_METHOD", req->fcgi->envp));
	svc_auth_client_addr(FCGX_GetParam("REMOTE_ADDR", req->fcgi->envp), svc_req_header(req, "X-Forwarded-For"),
			     req->ctx->auth.trusted_proxies, req->client_addr, sizeof req->client_addr);
	req->remote_addr = req->client_addr;
	return svc_auth_addr_key(req->client_addr, req->limit_addr, sizeof req->limit_addr) < 0 ? SVC_E_INTERNAL : 0;
}

/* Cookie tossing (docs/api.md "Cross-site requests"): a site under a shared parent domain can
 * plant a second cookie of one of svc's names; which one is real cannot be known, so 400. */
static int step_cookies(struct dispatch *d, struct svc_req *req, struct svc_resp *resp)
{
	size_t i;

	(void)d;
	for (i = 0; i < sizeof svc_cookie_names / sizeof svc_cookie_names[0]; i++)
		if (svc_cookie_count(svc_req_header(req, "Cookie"), svc_cookie_names[i]) > 1)
			return svc_resp_error(resp, SVC_E_VALIDATION, NULL,
					      "The request carries two %s cookies; clear this site's cookies and sign in again.",
					      svc_cookie_names[i]);
	return 0;
}

/* The global limit per client address (429); internal calls (HMAC-signed, from svc-wsd and svc-worker)
 * and SVC_RATE_LIMIT_EXEMPT are not counted. Counted in this host's shared memory (svc_ratelimit_hit_host). */
static int step_rate_limit(struct dispatch *d, struct svc_req *req, struct svc_resp *resp)
{
	const struct svc_auth_config *a = &req->ctx->auth;
	int64_t retry = 0;
	int err;

	if (!a->rl_global.limit || !req->ctx->db || !d->uri || strncmp(d->uri, "/api/internal/", 14) == 0 ||
	    svc_auth_addr_in_list(req->client_addr, a->rate_limit_exempt))
		return 0;
	err = svc_ratelimit_hit_host(req->ctx->db, "global", req->limit_addr, &a->rl_global, svc_now_ms(), &retry);
	if (err != SVC_E_RATE_LIMITED)
		return err;
	svc_auth_log(a->auth_log, req->ctx->name, "rate_limited", req->client_addr, "limit=global");
	return svc_resp_rate_limited(resp, retry);
}

/* The percent-decoded path and the raw query: 404 when missing, too long or badly escaped. */
static int step_path(struct dispatch *d, struct svc_req *req, struct svc_resp *resp)
{
	const char *qmark;

	(void)resp;
	if (!d->uri || strlen(d->uri) > PATH_MAX_LEN)
		return SVC_E_NOT_FOUND;
	qmark = strchr(d->uri, '?');
	req->query = qmark ? qmark + 1 : "";
	req->path = pct_decode(d->uri, qmark ? (size_t)(qmark - d->uri) : strlen(d->uri), 0);
	return req->path ? 0 : SVC_E_NOT_FOUND;
}

/* The first route whose pattern and method match (its parameters stay in req); the methods of the others. */
static int step_route(struct dispatch *d, struct svc_req *req, struct svc_resp *resp)
{
	size_t i;

	(void)resp;
	for (i = 0; i < d->nroutes; i++) {
		int m = match(req, d->routes[i].pattern, req->path);
		if (m > 0)
			d->allowed |= d->routes[i].methods;
		if (m > 0 && (d->routes[i].methods & req->method)) {
			d->route = &d->routes[i];
			return 0;
		}
		if (m < 0)
			d->bad_id = 1;
		free_param_names(req);
		clear_params(req);
	}
	return 0;
}

/* SVC_R_LOCAL routes do not exist for clients beyond this host and the trusted proxies: 404. */
static int step_local(struct dispatch *d, struct svc_req *req, struct svc_resp *resp)
{
	(void)resp;
	return d->route && (d->route->flags & SVC_R_LOCAL) && !client_is_local(req) ? SVC_E_NOT_FOUND : 0;
}

/* CORS headers for SVC_CORS_ORIGINS, except on a site (SVC_R_SITE), whose own policy replaces the API's. */
static int step_cors(struct dispatch *d, struct svc_req *req, struct svc_resp *resp)
{
	if (d->route && (d->route->flags & SVC_R_SITE))
		resp->own_csp = 1;
	else
		cors(req, resp);
	return 0;
}

/* No route for the path and method: a CORS preflight 204, 405 with Allow, or 404. */
static int step_unrouted(struct dispatch *d, struct svc_req *req, struct svc_resp *resp)
{
	char allow[64];

	if (d->route)
		return 0;
	if (d->allowed && req->method == SVC_OPTIONS) {
		svc_resp_header(resp, "Access-Control-Allow-Methods", methods_allowed(d->allowed, allow, sizeof allow));
		svc_resp_header(resp, "Access-Control-Allow-Headers", "Content-Type, Authorization");
		svc_resp_header(resp, "Access-Control-Max-Age", "600");
		resp->status = 204;
		return STEP_ANSWERED;
	}
	if (d->allowed && !d->bad_id) {
		svc_resp_header(resp, "Allow", methods_allowed(d->allowed, allow, sizeof allow));
		return SVC_E_METHOD;
	}
	return SVC_E_NOT_FOUND;
}

/* A cross-site unsafe request: 403 (csrf_check()). */
static int step_csrf(struct dispatch *d, struct svc_req *req, struct svc_resp *resp)
{
	if (csrf_check(req) == 0 || (d->route && (d->route->flags & SVC_R_APP)))
		return 0;
	svc_auth_log(req->ctx->auth.auth_log, req->ctx->name, "csrf_refused", req->client_addr, NULL);
	return svc_resp_error(resp, SVC_E_FORBIDDEN, NULL, "Cross-site request refused: the Origin is not this site's.");
}

/* A credential that failed (or none on an SVC_R_AUTH route): 401, logged when one was presented. */
static int auth_refused(struct dispatch *d, struct svc_req *req, struct svc_resp *resp, int presented)
{
	req->user_id[0] = '\0';
	req->token_id[0] = '\0';
	req->scopes = 0;
	if (presented)
		svc_auth_log(req->ctx->auth.auth_log, req->ctx->name, "token_rejected", req->client_addr, "route=%s",
			     d->route->pattern);
	/* anonymous is fine on SVC_R_OPTAUTH routes; a token that fails never is */
	if (!(d->route->flags & SVC_R_AUTH) && !presented)
		return 0;
	svc_resp_header(resp, "WWW-Authenticate", "Bearer");
	return svc_resp_error(resp, SVC_E_UNAUTHORIZED, NULL, "A valid access token is required.");
}

/* SVC_R_AUTH and SVC_R_OPTAUTH: the caller's credential (svc_req_authenticate), 401; an API token without the route's scope 403. */
static int step_auth(struct dispatch *d, struct svc_req *req, struct svc_resp *resp)
{
	char cookie[SVC_AUTH_TOKEN_MAX + 1];
	const char *needed = NULL;
	int presented, err;

	if (!(d->route->flags & (SVC_R_AUTH | SVC_R_OPTAUTH)))
		return 0;
	presented = svc_req_header(req, "Authorization") != NULL ||
		    svc_req_cookie(req, "svc_access_token", cookie, sizeof cookie) == 1;
	err = svc_req_authenticate(req, req->user_id);
	if (err == SVC_E_UNAUTHORIZED)
		return auth_refused(d, req, resp, presented);
	if (err < 0 || !req->token_id[0])
		return err;
	if (svc_pat_route_scopes(req->token_scopes, req->method == SVC_GET, d->route->pattern, &req->scopes, &needed) < 0)
		return svc_resp_error(resp, SVC_E_FORBIDDEN, NULL, "This API token cannot do this: it needs %s.", needed);
	return 0;
}

/* The body of POST, PUT, PATCH and DELETE: over the route's cap 413, cut short 400; on SVC_R_JSON routes
 * a content type other than JSON 415 and a body that is not a JSON object 400 (a DELETE may have none). */
static int step_body(struct dispatch *d, struct svc_req *req, struct svc_resp *resp)
{
	int err;

	if (req->method != SVC_POST && req->method != SVC_PUT && req->method != SVC_PATCH && req->method != SVC_DELETE)
		return 0;
	if (d->route->flags & SVC_R_RAWBODY)
		return 0; /* the handler streams it (svc_req_body_read) */
	if ((err = read_body(req, d->route->max_body ? d->route->max_body : DEFAULT_MAX_BODY)) < 0)
		return err == SVC_E_VALIDATION
			       ? svc_resp_error(resp, SVC_E_INVALID_JSON, NULL, "The request body is incomplete.")
			       : err;
	if (!(d->route->flags & SVC_R_JSON) || (req->body_len == 0 && req->method == SVC_DELETE))
		return 0;
	if (!is_json_type(svc_req_header(req, "Content-Type")))
		return SVC_E_MEDIA_TYPE;
	return svc_json_parse_object(req->body, req->body_len, &req->json);
}

/* SVC_R_INTERNAL: the signature, the nonce and a JSON object body (internal_check()). */
static int step_internal(struct dispatch *d, struct svc_req *req, struct svc_resp *resp)
{
	return d->route->flags & SVC_R_INTERNAL ? internal_check(req, resp) : 0;
}

/* The route's fields: 400 validation_failed naming the first that fails (body_check()). */
static int step_fields(struct dispatch *d, struct svc_req *req, struct svc_resp *resp)
{
	return d->route->body ? body_check(req, resp, d->route->body) : 0;
}

/*
 * What the router does before any handler, in this order (http.h's
 * svc_fcgi_main() lists the answers): like cgit's process_request, each
 * step checks one thing and either lets the request go on (0), answers it
 * (STEP_ANSWERED) or refuses it (an svc_err).
 */
static int (*const dispatch_steps[])(struct dispatch *, struct svc_req *, struct svc_resp *) = {
	step_client,     /* method, client address */
	step_cookies,    /* two cookies of one name 400 */
	step_rate_limit, /* the global limit 429 */
	step_path,       /* the path 404 */
	step_route,      /* the route of the path and method */
	step_local,      /* SVC_R_LOCAL from elsewhere 404 */
	step_cors,       /* CORS headers */
	step_unrouted,   /* no route: preflight 204, 405, 404 */
	step_csrf,       /* cross-site unsafe request 403 */
	step_auth,       /* credential 401, API token scope 403 */
	step_body,       /* body 413, 415, 400 invalid_json */
	step_internal,   /* SVC_R_INTERNAL signature 401 */
	step_fields,     /* the route's fields 400 validation_failed */
};

static int dispatch(struct svc_req *req, struct svc_resp *resp, const struct svc_route *routes,
		    size_t nroutes)
{
	struct dispatch d = { routes, nroutes, NULL, NULL, 0, 0 };
	size_t i;
	int err;

	for (i = 0; i < sizeof dispatch_steps / sizeof dispatch_steps[0]; i++)
		if ((err = dispatch_steps[i](&d, req, resp)) != 0)
			return err == STEP_ANSWERED ? 0 : err;
	return d.route->handler(req, resp);
}

static void handle(struct svc_ctx *ctx, FCGX_Request *r, const struct svc_route *routes, size_t nroutes)
{
	struct svc_req req;
	struct svc_resp resp;
	int err;

	memset(&req, 0, sizeof req);
	memset(&resp, 0, sizeof resp);
	req.ctx = ctx;
	req.fcgi = r;
	resp.fcgi = r;
	resp.cfg = &ctx->cfg;
	svc_buf_init(&resp.headers, 16 * 1024);

	err = dispatch(&req, &resp, routes, nroutes);
	if (!resp.started) {
		if (err < 0)
			send_error(&resp, err);
		else
			send_response(&resp, req.method);
	}
	/* queued work runs once the request is finished (serve()) */
	ctx->after = resp.after;
	ctx->after_arg = resp.after_arg;
	if (err == SVC_E_INTERNAL)
		svc_log_error("%s %s: internal error", FCGX_GetParam("REQUEST_METHOD", r->envp), req.path ? req.path : "?");

	free_param_names(&req);
	clear_params(&req);
	free(req.path);
	free(req.body);
	json_object_put(req.json);
	json_object_put(resp.json);
	free(resp.raw);
	svc_buf_dispose(&resp.headers);
}

/* ---- process management ---- */

static volatile sig_atomic_t stopping, serving;

static void on_term(int sig)
{
	(void)sig;
	stopping = 1;
}

/*
 * SIGTERM of a responder the web server spawned (lighttpd's bin-path): between requests it ends the process at
 * once, during one it lets the request finish. The handler it had before this one (installed by the libraries,
 * with FCGX_Init) only set a flag read once accept() returns, so a SIGTERM that came while the responder was
 * starting left it in accept() for good, and lighttpd's graceful restart (SVC_SITES_RELOAD_CMD twice within a
 * second) waited for it, answering nothing for about 110 s. A SIGTERM before serve() runs is not covered.
 */
static void on_term_spawned(int sig)
{
	(void)sig;
	if (!serving)
		_exit(0);
	stopping = 1;
}

/*
 * How far a responder's resident size may grow over what it was after the last
 * release before the free heap goes back (svc_mem_release): a read or a write
 * stays under it; a chat turn over a long history or a sign-in's Argon2id block
 * (19 MiB) goes over it and is given back after its request.
 */
#define RELEASE_SLACK (1024 * 1024)

static int serve(struct svc_ctx *ctx, int listen_fd, const struct svc_route *routes, size_t nroutes)
{
	FCGX_Request r;
	struct svc_mem_watch mem = { 0 };

	if (listen_fd == 0) {
		struct sigaction sa;
		memset(&sa, 0, sizeof sa);
		sa.sa_handler = on_term_spawned;
		sigaction(SIGTERM, &sa, NULL);
	}
	if (FCGX_InitRequest(&r, listen_fd, 0) != 0)
		return 1;
	/* the host's rate-limit counters and revocation epoch; without them MariaDB alone keeps both */
	if (svc_shm_attach(&ctx->cfg) < 0)
		svc_log_warn("no shared memory for this host's rate limits and session checks: MariaDB alone keeps them");
	while (!stopping && FCGX_Accept_r(&r) >= 0) {
		serving = 1;
		if (!ctx->db && svc_db_open(&ctx->cfg, &ctx->db) < 0) {
			/* Answer 503 and try again with the next request. */
			struct svc_resp resp;
			memset(&resp, 0, sizeof resp);
			resp.fcgi = &r;
			resp.cfg = &ctx->cfg;
			svc_buf_init(&resp.headers, 1024);
			send_error(&resp, SVC_E_UNAVAILABLE);
			svc_buf_dispose(&resp.headers);
			FCGX_Finish_r(&r);
			serving = 0;
			continue;
		}
		handle(ctx, &r, routes, nroutes);
		svc_db_end_request(ctx->db);
		FCGX_Finish_r(&r);
		if (ctx->after) {
			void (*fn)(struct svc_ctx *, void *) = ctx->after;
			ctx->after = NULL;
			fn(ctx, ctx->after_arg);
			ctx->after_arg = NULL;
		}
		/* what the request freed goes back to the kernel, not kept at its high-water mark (mem.h) */
		svc_mem_release(&mem, RELEASE_SLACK);
		serving = 0;
	}
	return 0;
}

/*
 * The pool of --listen: the socket at `path` is made with mode 0660 (umask
 * 0117 while it is created, so it is never wider), and handed to group
 * `group` (--socket-group, the web server's; NULL: the process's own), so
 * that only the web server and svc reach it. Then `procs` children serve it.
 */
static int prefork(struct svc_ctx *ctx, const char *path, const char *group, long procs,
		   const struct svc_route *routes, size_t nroutes)
{
	pid_t *kids;
	int fd;
	long i;
	mode_t old_mask;
	struct sigaction sa;

	unlink(path);
	old_mask = umask(0117);
	fd = FCGX_OpenSocket(path, 128);
	umask(old_mask);
	if (fd < 0) {
		svc_log_error("cannot listen on %s", path);
		return 1;
	}
	if (group) {
		struct group *g = getgrnam(group);
		if (!g || chown(path, (uid_t)-1, g->gr_gid) < 0) {
			svc_log_error("cannot give %s to group %s: %s", path, group, g ? strerror(errno) : "no such group");
			close(fd);
			unlink(path);
			return 1;
		}
	}
	kids = calloc((size_t)procs, sizeof *kids);
	if (!kids)
		return 1;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_term;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	while (!stopping) {
		int status;
		pid_t dead;

		for (i = 0; i < procs; i++) {
			if (kids[i] > 0)
				continue;
			kids[i] = fork();
			if (kids[i] == 0) {
				signal(SIGTERM, SIG_DFL);
				signal(SIGINT, SIG_DFL);
				_exit(serve(ctx, fd, routes, nroutes));
			}
			if (kids[i] < 0) {
				kids[i] = 0;
				sleep(1);
			}
		}
		dead = wait(&status);
		if (dead < 0) {
			if (errno == EINTR)
				continue;
			sleep(1);
			continue;
		}
		for (i = 0; i < procs; i++)
			if (kids[i] == dead)
				kids[i] = 0;
	}
	for (i = 0; i < procs; i++)
		if (kids[i] > 0)
			kill(kids[i], SIGTERM);
	for (i = 0; i < procs; i++)
		if (kids[i] > 0)
			waitpid(kids[i], NULL, 0);
	free(kids);
	unlink(path);
	return 0;
}

int svc_fcgi_main(int argc, char **argv, const char *name, const struct svc_route *routes,
		  size_t nroutes)
{
	struct svc_ctx ctx;
	char errbuf[256], warning[1024];
	const char *listen_path = NULL, *socket_group = NULL;
	uint64_t procs = 4;
	int i, rc;

	memset(&ctx, 0, sizeof ctx);
	ctx.name = name;
	svc_log_init(name);
	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--listen") == 0 && i + 1 < argc) {
			listen_path = argv[++i];
		} else if (strcmp(argv[i], "--socket-group") == 0 && i + 1 < argc) {
			socket_group = argv[++i];
		} else if (strcmp(argv[i], "--procs") == 0 && i + 1 < argc) {
			if (svc_parse_u64(argv[++i], 512, &procs) < 0 || procs == 0) {
				fprintf(stderr, "%s: --procs needs a number from 1 to 512\n", name);
				return 2;
			}
		} else {
			fprintf(stderr, "usage: %s [--listen SOCKET_PATH [--procs N] [--socket-group GROUP]]\n", name);
			return 2;
		}
	}
	if (svc_config_load(&ctx.cfg, errbuf, sizeof errbuf) < 0 ||
	    svc_auth_config_load(&ctx.cfg, &ctx.auth, errbuf, sizeof errbuf) < 0) {
		svc_log_error("configuration: %s", errbuf);
		return 1;
	}
	/* sites that can toss cookies to the app (issue 17, finding 5): said once, at start-up */
	if (svc_psl_shared_site_warning(ctx.cfg.app_url, ctx.cfg.domain, warning, sizeof warning))
		svc_log_warn("configuration: %s", warning);
	signal(SIGPIPE, SIG_IGN);
	if (mysql_library_init(0, NULL, NULL) || curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK ||
	    FCGX_Init() != 0) {
		svc_log_error("library initialisation failed");
		return 1;
	}
	if (listen_path)
		rc = prefork(&ctx, listen_path, socket_group, (long)procs, routes, nroutes);
	else
		rc = serve(&ctx, 0, routes, nroutes);
	svc_db_close(ctx.db);
	svc_config_dispose(&ctx.cfg);
	return rc;
}
