/* preview_check.c: a project's preview in the thumbnails' sandboxed Chromium over the DevTools protocol's pipe: its errors and a screenshot. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "core/err.h"
#include "core/fsx.h"
#include "core/json.h"
#include "core/log.h"
#include "core/util.h"
#include "project/preview_build.h"
#include "project/preview_check.h"
#include "project/sandbox.h"

#define ORIGIN "http://" SVC_THUMB_PAGE_HOST
#define MSG_MAX (32u * 1024 * 1024) /* bytes of one protocol message (a screenshot's base64 is the largest) */
#define INFLIGHT_MAX 512            /* requests tracked at once */
#define TICK_MS 200

/* One DevTools session over the pipe, and what the page did so far. */
struct cdp {
	int wfd, rfd;                 /* Chromium's fd 3 (it reads) and fd 4 (it writes), our ends */
	struct svc_buf in;            /* bytes read, up to a NUL */
	int next_id;
	char session[128];            /* the page's sessionId (Target.attachToTarget flatten) */
	int64_t deadline_ms, last_net_ms;
	char requests[INFLIGHT_MAX][48]; /* requestIds in flight */
	size_t ninflight;
	int (*tick)(void *);
	void *tick_arg;
	int tick_rc;
	struct svc_check_report *r;
};

/* ---- the report ---- */

static void copy_cut(char *dst, size_t dmax, const char *src)
{
	size_t n = src ? strlen(src) : 0;

	n = svc_utf8_cut(src ? src : "", n, dmax - 1);
	if (n)
		memcpy(dst, src, n);
	dst[n] = '\0';
}

void svc_preview_check_add(struct svc_check_report *r, const char *kind, const char *message, const char *source,
			   int line)
{
	struct svc_check_error e;
	size_t i;

	memset(&e, 0, sizeof e);
	copy_cut(e.kind, sizeof e.kind, kind);
	copy_cut(e.message, sizeof e.message, message);
	copy_cut(e.source, sizeof e.source, source);
	e.line = line > 0 ? line : 0;
	for (i = 0; i < r->nerrors; i++) {
		const struct svc_check_error *o = &r->errors[i];
		if (!strcmp(o->kind, e.kind) && !strcmp(o->message, e.message) && !strcmp(o->source, e.source) &&
		    o->line == e.line)
			return;
	}
	if (r->nerrors >= SVC_CHECK_ERRORS_MAX) {
		r->more++;
		return;
	}
	r->errors[r->nerrors++] = e;
}

void svc_preview_check_dispose(struct svc_check_report *r)
{
	if (!r)
		return;
	free(r->png);
	free(r->png_base64);
	r->png = NULL;
	r->png_base64 = NULL;
	r->png_len = 0;
}

/* The preview's path of a URL of the page's origin ("/app.js"), or NULL for another origin. */
static const char *same_origin_path(const char *url)
{
	size_t n = strlen(ORIGIN);

	if (!url || strncmp(url, ORIGIN, n) != 0 || (url[n] != '/' && url[n] != '\0'))
		return NULL;
	return url[n] ? url + n : "/";
}

/*
 * Whether a failed request to `url` is the page's error: a same-origin one, not the browser's own
 * /favicon.ico, and not under /_svc/: the check's page server serves the project's files only, so
 * the app's backend (docs/app-backend.md; todo-app loads /_svc/client.js and goes on without it) is
 * missing there by design, never by the page's fault.
 */
static int checked_request(const char *url)
{
	const char *p = same_origin_path(url);

	return p && strcmp(p, "/favicon.ico") != 0 && strncmp(p, "/_svc/", 6) != 0;
}

/* A source for the report: the path of a same-origin URL without its query, else the URL as it is. */
static void source_of(const char *url, char *out, size_t max)
{
	const char *p = same_origin_path(url);

	copy_cut(out, max, p ? p : (url ? url : ""));
	out[strcspn(out, "?#")] = '\0';
}

/* The first line of `text` into out (max bytes). */
static void first_line(const char *text, char *out, size_t max)
{
	copy_cut(out, max, text ? text : "");
	out[strcspn(out, "\n")] = '\0';
}

/* ---- a failed build's output: Vite, esbuild, tsc ---- */

#define BUILD_LINE_MAX 2048 /* bytes of one line of a build's output looked at */

/*
 * The line `p` (`len` bytes) into out (max bytes, cut at a UTF-8 boundary) without ANSI escapes
 * (ESC '[' parameters and a final byte; the "?[...m" svc_publish_clean_text() makes of a colour)
 * and without the white space around it.
 */
static void plain_line(const char *p, size_t len, char *out, size_t max)
{
	size_t i = 0, o = 0, k;

	while (i < len && o + 1 < max) {
		if ((p[i] == '\x1b' || p[i] == '?') && i + 1 < len && p[i + 1] == '[') {
			for (k = i + 2; k < len && ((p[k] >= '0' && p[k] <= '9') || p[k] == ';'); k++)
				;
			if (k < len && (p[i] == '\x1b' ? (p[k] >= 0x40 && p[k] <= 0x7e) : p[k] == 'm')) {
				i = k + 1;
				continue;
			}
		}
		out[o++] = p[i++];
	}
	if (i < len) /* cut: not inside a UTF-8 sequence (out[o] is not read) */
		o = svc_utf8_cut(out, o + 1, o);
	out[o] = '\0';
	while (o && (out[o - 1] == ' ' || out[o - 1] == '\t' || out[o - 1] == '\r'))
		out[--o] = '\0';
	for (k = 0; out[k] == ' ' || out[k] == '\t'; k++)
		;
	if (k)
		memmove(out, out + k, o - k + 1);
}

/* The number of `n` digits at `s` (1 to 9 of them), or -1. */
static int digits_at(const char *s, size_t n)
{
	char num[10];
	uint64_t v;

	if (n == 0 || n >= sizeof num)
		return -1;
	memcpy(num, s, n);
	num[n] = '\0';
	return svc_parse_u64(num, 999999999, &v) < 0 ? -1 : (int)v;
}

/*
 * A location of a build's message, "path:line:col", "path:line", "path(line,col)" or "path" (a ':'
 * at its end ignored), into `path` (max bytes; `root` and "./" cut off its front) and *out_line (0
 * when none). Returns 0, or -1 for an empty path or one with white space.
 */
static int build_loc(const char *s, const char *root, char *path, size_t max, int *out_line)
{
	size_t n = strlen(s), cut, i;
	const char *c1, *c2;
	int line = 0, col;

	if (n && s[n - 1] == ':')
		n--;
	if (n && s[n - 1] == ')' && (c1 = memchr(s, '(', n))) {
		/* path(line,col) */
		const char *comma = memchr(c1, ',', (size_t)(s + n - c1));
		if (!comma || (line = digits_at(c1 + 1, (size_t)(comma - c1 - 1))) < 0 ||
		    digits_at(comma + 1, (size_t)(s + n - 1 - comma - 1)) < 0)
			return -1;
		n = (size_t)(c1 - s);
	} else {
		/* path:line:col or path:line; a path holding ':' keeps what is not a number */
		for (i = 0; i < 2; i++) {
			for (c2 = s + n; c2 > s && c2[-1] >= '0' && c2[-1] <= '9'; c2--)
				;
			if (c2 == s + n || c2 == s || c2[-1] != ':' || (col = digits_at(c2, (size_t)(s + n - c2))) < 0)
				break;
			line = col;
			n = (size_t)(c2 - 1 - s);
		}
	}
	/* the project's path: the sandbox's root and "./" off its front, however they come ("./", ".//build/x") */
	for (cut = 0;;) {
		size_t rl = root ? strlen(root) : 0;
		if (rl && n - cut >= rl && strncmp(s + cut, root, rl) == 0)
			cut += rl;
		else if (n - cut > 2 && s[cut] == '.' && s[cut + 1] == '/')
			cut += 2;
		else
			break;
	}
	if (n <= cut || n - cut >= max)
		return -1;
	for (i = cut; i < n; i++)
		if (s[i] == ' ' || s[i] == '\t')
			return -1;
	memcpy(path, s + cut, n - cut);
	path[n - cut] = '\0';
	*out_line = line;
	return 0;
}

/* Adds one build error: `loc` (build_loc()) and `msg`; returns 1 when it was one, 0 when loc is no location. */
static int build_add(struct svc_check_report *r, const char *loc, const char *msg, const char *root)
{
	char path[SVC_CHECK_SOURCE_MAX], m[SVC_CHECK_MESSAGE_MAX];
	int line;

	if (build_loc(loc, root, path, sizeof path, &line) < 0)
		return 0;
	plain_line(msg, strlen(msg), m, sizeof m);
	if (!m[0])
		return 0;
	svc_preview_check_add(r, "build", m, path, line);
	return 1;
}

/* What the parser of one build log remembers between lines. */
struct build_parse {
	char pending[SVC_CHECK_MESSAGE_MAX]; /* Vite's message after "error during build:", not yet placed */
	char esbuild[SVC_CHECK_MESSAGE_MAX]; /* esbuild's "[ERROR] message" waiting for its location line */
	char npm[SVC_CHECK_MESSAGE_MAX];     /* npm's first "npm error" line (an install that failed) */
	int after_vite;                      /* the line before was "error during build:" */
	size_t found;
};

/* One plain line (plain_line()) of a build's output. */
static void build_line(struct build_parse *b, char *l, const char *root, struct svc_check_report *r)
{
	char *at;

	if (b->esbuild[0]) {
		/* esbuild's own: "✘ [ERROR] message", a blank line, then "    src/App.tsx:7:46:" */
		int placed;
		if (!l[0])
			return;
		placed = l[strlen(l) - 1] == ':' && build_add(r, l, b->esbuild, root);
		b->esbuild[0] = '\0';
		if (placed) {
			b->found++;
			b->pending[0] = '\0';
			return;
		}
		/* no place given: the line is one of its own */
	}
	if ((at = strstr(l, ": ERROR: "))) {
		/* esbuild (Vite's [vite:esbuild] too): "/build/src/App.tsx:7:46: ERROR: Expected ..." */
		*at = '\0';
		if (build_add(r, l, at + 9, root)) {
			b->found++;
			b->pending[0] = '\0';
		}
		return;
	}
	if ((at = strstr(l, ": error TS")) || (at = strstr(l, " - error TS"))) {
		/* tsc: "src/App.tsx(1,21): error TS2307: ...", with --pretty "src/App.tsx:1:21 - error TS2307: ..." */
		char *msg = at + (at[0] == ':' ? 2 : 3) + 6;
		*at = '\0';
		if (build_add(r, l, msg, root))
			b->found++;
		return;
	}
	if ((at = strstr(l, "[ERROR] "))) {
		snprintf(b->esbuild, sizeof b->esbuild, "%s", at + 8);
		return;
	}
	if (strcmp(l, "error during build:") == 0) {
		b->after_vite = 1;
		b->pending[0] = '\0';
		return;
	}
	if (b->after_vite && l[0]) {
		b->after_vite = 0;
		copy_cut(b->pending, sizeof b->pending, l);
		return;
	}
	if (strncmp(l, "file: ", 6) == 0 && b->pending[0]) {
		/* Vite's "file: /build/src/App.tsx[:12:5]" under its message */
		if (build_add(r, l + 6, b->pending, root))
			b->found++;
		b->pending[0] = '\0';
		return;
	}
	if (!b->npm[0] && (strncmp(l, "npm error ", 10) == 0 || strncmp(l, "npm ERR! ", 9) == 0) &&
	    !strstr(l, " code ") && !strstr(l, "A complete log"))
		copy_cut(b->npm, sizeof b->npm, l);
}

size_t svc_preview_check_build_log(const char *log, size_t len, const char *root, struct svc_check_report *r)
{
	struct build_parse *b = calloc(1, sizeof *b);
	char line[BUILD_LINE_MAX];
	size_t i = 0, found;

	if (!b)
		return 0;
	while (log && i < len) {
		const char *nl = memchr(log + i, '\n', len - i);
		size_t n = nl ? (size_t)(nl - (log + i)) : len - i;
		plain_line(log + i, n, line, sizeof line);
		build_line(b, line, root, r);
		i += n + 1;
	}
	/* a message Vite gave no file for; else an install's failure */
	if (b->pending[0] && !b->found) {
		svc_preview_check_add(r, "build", b->pending, NULL, 0);
		b->found++;
	}
	if (b->npm[0] && !b->found) {
		svc_preview_check_add(r, "build", b->npm, NULL, 0);
		b->found++;
	}
	found = b->found;
	free(b);
	return found;
}

/* ---- the protocol: messages ---- */

static int write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return SVC_E_UNAVAILABLE;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Sends {id, method, params?, sessionId?} (params is put); returns the id or a negative error. */
static int cdp_send(struct cdp *c, const char *method, struct json_object *params, int in_session)
{
	struct json_object *m = json_object_new_object();
	const char *text;
	int id = ++c->next_id, err;

	json_object_object_add(m, "id", json_object_new_int(id));
	svc_json_add_str(m, "method", method);
	if (params)
		json_object_object_add(m, "params", params);
	if (in_session)
		svc_json_add_str(m, "sessionId", c->session);
	text = json_object_to_json_string_ext(m, JSON_C_TO_STRING_PLAIN);
	err = write_all(c->wfd, text, strlen(text) + 1); /* the NUL ends the message */
	json_object_put(m);
	return err < 0 ? err : id;
}

/*
 * The next message from Chromium into *out (a new object), waiting until c->deadline_ms and
 * calling tick meanwhile. Returns 0, 1 at the deadline, SVC_E_UNAVAILABLE when the pipe closed or
 * spoke no JSON, or tick's value.
 */
static int cdp_read(struct cdp *c, struct json_object **out)
{
	char chunk[65536];

	for (;;) {
		char *nul = c->in.len ? memchr(c->in.data, '\0', c->in.len) : NULL;
		int64_t now = svc_mono_ms();
		struct pollfd p = { c->rfd, POLLIN, 0 };
		ssize_t n;

		if (nul) {
			size_t len = (size_t)(nul - c->in.data);
			struct json_object *o = len ? json_tokener_parse(c->in.data) : NULL;
			memmove(c->in.data, nul + 1, c->in.len - len - 1);
			c->in.len -= len + 1;
			c->in.data[c->in.len] = '\0';
			if (!o || !json_object_is_type(o, json_type_object)) {
				json_object_put(o);
				return SVC_E_UNAVAILABLE;
			}
			*out = o;
			return 0;
		}
		if (now >= c->deadline_ms)
			return 1;
		if (c->tick && (c->tick_rc = c->tick(c->tick_arg)) != 0)
			return c->tick_rc;
		if (poll(&p, 1, (int)(c->deadline_ms - now < TICK_MS ? c->deadline_ms - now : TICK_MS)) <= 0)
			continue;
		n = read(c->rfd, chunk, sizeof chunk);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0 || svc_buf_add(&c->in, chunk, (size_t)n) < 0)
			return SVC_E_UNAVAILABLE;
	}
}

/* ---- the protocol: the page's events ---- */

static int request_index(const struct cdp *c, const char *id)
{
	size_t i;

	for (i = 0; id && i < c->ninflight; i++)
		if (strcmp(c->requests[i], id) == 0)
			return (int)i;
	return -1;
}

static void request_done(struct cdp *c, const char *id)
{
	int i = request_index(c, id);

	if (i < 0)
		return;
	memmove(c->requests[i], c->requests[i + 1], (c->ninflight - (size_t)i - 1) * sizeof c->requests[0]);
	c->ninflight--;
}

/* Runtime.exceptionThrown: an uncaught exception, or "Uncaught (in promise)" for an unhandled rejection. */
static void on_exception(struct cdp *c, struct json_object *params)
{
	struct json_object *d = NULL, *ex = NULL, *v;
	const char *text, *desc = NULL, *url;
	char msg[SVC_CHECK_MESSAGE_MAX], src[SVC_CHECK_SOURCE_MAX];
	int line = 0;

	if (!json_object_object_get_ex(params, "exceptionDetails", &d))
		return;
	text = svc_json_str(d, "text");
	if (json_object_object_get_ex(d, "exception", &ex))
		desc = svc_json_str(ex, "description");
	if (!desc && ex && json_object_object_get_ex(ex, "value", &v))
		desc = json_object_get_string(v);
	url = svc_json_str(d, "url");
	if (json_object_object_get_ex(d, "lineNumber", &v))
		line = json_object_get_int(v) + 1;
	source_of(url, src, sizeof src);
	if (text && desc && strncmp(text, "Uncaught", 8) == 0) {
		char first[SVC_CHECK_MESSAGE_MAX], both[2 * SVC_CHECK_MESSAGE_MAX + 2];
		first_line(desc, first, sizeof first);
		snprintf(both, sizeof both, "%.*s %s", SVC_CHECK_MESSAGE_MAX - 1, text, first);
		copy_cut(msg, sizeof msg, both);
	} else {
		first_line(desc ? desc : text, msg, sizeof msg);
	}
	svc_preview_check_add(c->r, text && strstr(text, "(in promise)") ? "rejection" : "exception", msg, src, line);
}

/* Runtime.consoleAPICalled of type "error" (and "assert"): its arguments as text, where it was called. */
static void on_console(struct cdp *c, struct json_object *params)
{
	struct json_object *args = NULL, *st = NULL, *frames = NULL, *f, *v;
	const char *type = svc_json_str(params, "type");
	char msg[SVC_CHECK_MESSAGE_MAX], src[SVC_CHECK_SOURCE_MAX] = "";
	size_t i, o = 0;
	int line = 0;

	if (!type || (strcmp(type, "error") && strcmp(type, "assert")))
		return;
	msg[0] = '\0';
	if (json_object_object_get_ex(params, "args", &args) && json_object_is_type(args, json_type_array))
		for (i = 0; i < json_object_array_length(args) && o + 2 < sizeof msg; i++) {
			struct json_object *a = json_object_array_get_idx(args, i);
			const char *s = svc_json_str(a, "description");
			if (!s && json_object_object_get_ex(a, "value", &v))
				s = json_object_get_string(v);
			if (!s)
				s = svc_json_str(a, "type");
			o += (size_t)snprintf(msg + o, sizeof msg - o, "%s%s", i ? " " : "", s ? s : "");
		}
	first_line(msg, msg, sizeof msg);
	if (json_object_object_get_ex(params, "stackTrace", &st) && json_object_object_get_ex(st, "callFrames", &frames) &&
	    json_object_array_length(frames) > 0) {
		f = json_object_array_get_idx(frames, 0);
		source_of(svc_json_str(f, "url"), src, sizeof src);
		if (json_object_object_get_ex(f, "lineNumber", &v))
			line = json_object_get_int(v) + 1;
	}
	svc_preview_check_add(c->r, "console", msg[0] ? msg : "console.error()", src, line);
}

/* Network.*: requests in flight (for the quiet), same-origin ones that failed. */
static void on_network(struct cdp *c, const char *method, struct json_object *params)
{
	const char *id = svc_json_str(params, "requestId");
	struct json_object *resp = NULL, *v;
	char msg[SVC_CHECK_MESSAGE_MAX], src[SVC_CHECK_SOURCE_MAX];

	c->last_net_ms = svc_mono_ms();
	if (!id)
		return;
	if (strcmp(method, "Network.requestWillBeSent") == 0) {
		struct json_object *req = NULL;
		const char *url = json_object_object_get_ex(params, "request", &req) ? svc_json_str(req, "url") : NULL;
		if (request_index(c, id) < 0 && c->ninflight < INFLIGHT_MAX && strlen(id) < sizeof c->requests[0] && url &&
		    strncmp(url, "data:", 5) != 0)
			snprintf(c->requests[c->ninflight++], sizeof c->requests[0], "%s", id);
	} else if (strcmp(method, "Network.responseReceived") == 0 && json_object_object_get_ex(params, "response", &resp)) {
		int status = json_object_object_get_ex(resp, "status", &v) ? json_object_get_int(v) : 0;
		const char *url = svc_json_str(resp, "url");
		if (status >= 400 && checked_request(url)) {
			source_of(url, src, sizeof src);
			snprintf(msg, sizeof msg, "GET %s: %d", src, status);
			svc_preview_check_add(c->r, "request", msg, src, 0);
		}
	} else if (strcmp(method, "Network.loadingFinished") == 0 || strcmp(method, "Network.loadingFailed") == 0) {
		request_done(c, id); /* a failed one was reported by on_event() */
	}
}

/* Network.loadingFailed of a same-origin request: its URL comes from Network.requestWillBeSent, kept here. */
struct failed_map {
	char id[48];
	char url[SVC_CHECK_SOURCE_MAX];
};

/* One message that is not the answer waited for: an event of the page. */
static void on_event(struct cdp *c, struct json_object *m, struct failed_map *urls, size_t *nurls)
{
	const char *method = svc_json_str(m, "method");
	struct json_object *params = NULL;

	if (!method || !json_object_object_get_ex(m, "params", &params))
		return;
	if (strcmp(method, "Runtime.exceptionThrown") == 0) {
		on_exception(c, params);
	} else if (strcmp(method, "Runtime.consoleAPICalled") == 0) {
		on_console(c, params);
	} else if (strcmp(method, "Page.loadEventFired") == 0) {
		c->r->loaded = 1;
		c->last_net_ms = svc_mono_ms();
	} else if (strncmp(method, "Network.", 8) == 0) {
		const char *id = svc_json_str(params, "requestId");
		struct json_object *req = NULL, *v;
		if (strcmp(method, "Network.requestWillBeSent") == 0 && id && *nurls < INFLIGHT_MAX &&
		    json_object_object_get_ex(params, "request", &req) && checked_request(svc_json_str(req, "url"))) {
			snprintf(urls[*nurls].id, sizeof urls[0].id, "%s", id);
			source_of(svc_json_str(req, "url"), urls[*nurls].url, sizeof urls[0].url);
			(*nurls)++;
		}
		if (strcmp(method, "Network.loadingFailed") == 0 && id &&
		    !(json_object_object_get_ex(params, "canceled", &v) && json_object_get_boolean(v))) {
			size_t i;
			for (i = 0; i < *nurls; i++)
				if (strcmp(urls[i].id, id) == 0) {
					char msg[SVC_CHECK_MESSAGE_MAX];
					snprintf(msg, sizeof msg, "GET %s: %s", urls[i].url,
						 svc_json_str(params, "errorText") ? svc_json_str(params, "errorText")
										  : "failed");
					svc_preview_check_add(c->r, "request", msg, urls[i].url, 0);
					break;
				}
		}
		on_network(c, method, params);
	}
}

/* State the event handler keeps across calls. */
struct events {
	struct failed_map urls[INFLIGHT_MAX];
	size_t nurls;
};

/*
 * Sends a command and reads until its answer, handling the events before it. *out (may be NULL)
 * gets its "result" object (a new reference). Returns 0, SVC_E_UNAVAILABLE (an error answer, the
 * pipe closed, the deadline), or tick's value.
 */
static int cdp_call(struct cdp *c, struct events *ev, const char *method, struct json_object *params, int in_session,
		    struct json_object **out)
{
	struct json_object *m = NULL, *v;
	int id = cdp_send(c, method, params, in_session), rc;

	if (id < 0)
		return id;
	for (;;) {
		if ((rc = cdp_read(c, &m)) != 0)
			return rc == 1 ? SVC_E_UNAVAILABLE : rc;
		if (json_object_object_get_ex(m, "id", &v) && json_object_get_int(v) == id) {
			if (!json_object_object_get_ex(m, "result", &v)) {
				svc_log_warn("check: %s failed: %s", method, json_object_to_json_string(m));
				json_object_put(m);
				return SVC_E_UNAVAILABLE;
			}
			if (out)
				*out = json_object_get(v);
			json_object_put(m);
			return 0;
		}
		on_event(c, m, ev->urls, &ev->nurls);
		json_object_put(m);
	}
}

/* ---- the check ---- */

/* Base64 `b64` decoded into a malloc'd *out (OpenSSL EVP_DecodeBlock, padding taken off). */
static int b64_decode(const char *b64, unsigned char **out, size_t *out_len)
{
	size_t n = strlen(b64), pad = 0;
	unsigned char *buf;
	int got;

	if (n == 0 || n % 4 || n > MSG_MAX || !(buf = malloc(n / 4 * 3 + 1)))
		return SVC_E_INTERNAL;
	got = EVP_DecodeBlock(buf, (const unsigned char *)b64, (int)n);
	if (got < 0) {
		free(buf);
		return SVC_E_INTERNAL;
	}
	pad = (b64[n - 1] == '=') + (n > 1 && b64[n - 2] == '=');
	*out = buf;
	*out_len = (size_t)got - pad;
	return 0;
}

/* The page: a target of its own, attached (flatten), its domains on, navigated to the preview's `path` ("/index.html"). */
static int open_page(struct cdp *c, struct events *ev, const char *path)
{
	struct json_object *p, *res = NULL;
	const char *s;
	int err;

	p = json_object_new_object();
	svc_json_add_str(p, "url", "about:blank");
	if ((err = cdp_call(c, ev, "Target.createTarget", p, 0, &res)) < 0)
		return err;
	p = json_object_new_object();
	svc_json_add_str(p, "targetId", svc_json_str(res, "targetId"));
	json_object_object_add(p, "flatten", json_object_new_boolean(1));
	json_object_put(res);
	res = NULL;
	if ((err = cdp_call(c, ev, "Target.attachToTarget", p, 0, &res)) < 0)
		return err;
	s = svc_json_str(res, "sessionId");
	if (!s || strlen(s) >= sizeof c->session) {
		json_object_put(res);
		return SVC_E_UNAVAILABLE;
	}
	snprintf(c->session, sizeof c->session, "%s", s);
	json_object_put(res);
	if ((err = cdp_call(c, ev, "Runtime.enable", NULL, 1, NULL)) < 0 ||
	    (err = cdp_call(c, ev, "Network.enable", NULL, 1, NULL)) < 0 ||
	    (err = cdp_call(c, ev, "Page.enable", NULL, 1, NULL)) < 0)
		return err;
	/* the page's viewport itself (the window's size leaves less to the page) */
	p = json_object_new_object();
	json_object_object_add(p, "width", json_object_new_int(SVC_CHECK_SHOT_W));
	json_object_object_add(p, "height", json_object_new_int(SVC_CHECK_SHOT_H));
	json_object_object_add(p, "deviceScaleFactor", json_object_new_int(1));
	json_object_object_add(p, "mobile", json_object_new_boolean(0));
	if ((err = cdp_call(c, ev, "Emulation.setDeviceMetricsOverride", p, 1, NULL)) < 0)
		return err;
	p = json_object_new_object();
	{
		struct svc_buf url;
		svc_buf_init(&url, 8192);
		if ((err = svc_buf_adds(&url, ORIGIN)) == 0)
			err = svc_buf_adds(&url, path && path[0] == '/' ? path : "/index.html");
		if (err == 0)
			svc_json_add_str(p, "url", url.data);
		svc_buf_dispose(&url);
		if (err < 0) {
			json_object_put(p);
			return err;
		}
	}
	return cdp_call(c, ev, "Page.navigate", p, 1, NULL);
}

/* Reads the page's events until it loaded and the network was quiet for quiet_ms, or until the deadline. */
static int watch_page(struct cdp *c, struct events *ev, long quiet_ms)
{
	struct json_object *m = NULL;
	int64_t end = c->deadline_ms;
	int rc;

	for (;;) {
		int64_t now = svc_mono_ms();
		if (c->r->loaded && c->ninflight == 0 && now - c->last_net_ms >= quiet_ms)
			return 0;
		/* wake up when the quiet would be over */
		c->deadline_ms = c->r->loaded && c->ninflight == 0 && c->last_net_ms + quiet_ms < end ? c->last_net_ms + quiet_ms
												     : end;
		rc = cdp_read(c, &m);
		c->deadline_ms = end;
		if (rc == 1 && svc_mono_ms() >= end)
			return 0;
		if (rc == 1)
			continue;
		if (rc != 0)
			return rc;
		on_event(c, m, ev->urls, &ev->nurls);
		json_object_put(m);
	}
}

/* The screenshot into c->r (png and base64); `clip` (put; NULL: the viewport) a {x, y, width, height, scale} of the page. */
static int screenshot(struct cdp *c, struct events *ev, struct json_object *clip)
{
	struct json_object *p = json_object_new_object(), *res = NULL;
	const char *data;
	int err;

	svc_json_add_str(p, "format", "png");
	if (clip) {
		json_object_object_add(p, "clip", clip);
		json_object_object_add(p, "captureBeyondViewport", json_object_new_boolean(1));
	}
	if ((err = cdp_call(c, ev, "Page.captureScreenshot", p, 1, &res)) < 0)
		return err;
	if ((data = svc_json_str(res, "data")) && (c->r->png_base64 = strdup(data)) &&
	    b64_decode(data, &c->r->png, &c->r->png_len) < 0) {
		free(c->r->png_base64);
		c->r->png_base64 = NULL;
	}
	json_object_put(res);
	return 0;
}

/* Chromium in the thumbnails' sandbox with the protocol on its fds 3 and 4 (fds: ours to read and write). */
static int spawn(const struct svc_thumb_sandbox *sb, const char *chromium, const char *tmp, int to_child, int from_child,
		 struct svc_sandbox **out, char *why, size_t whymax)
{
	static const char *const extra[] = { "--window-size=1280,800", "--remote-debugging-pipe", NULL };
	int fds[2] = { to_child, from_child };

	(void)sizeof(char[SVC_CHECK_SHOT_W == 1280 && SVC_CHECK_SHOT_H == 800 ? 1 : -1]);
	return svc_thumbnail__start(sb, chromium, tmp, extra, "about:blank", "check", fds, out, why, whymax);
}

/* What a conversation with a started Chromium does (check_talk(), element_talk()). */
typedef int (*talk_fn)(struct cdp *c, struct events *ev, void *arg, char *why, size_t whymax);

/* The check's conversation: page, watch until the quiet, screenshot. */
static int check_talk(struct cdp *c, struct events *ev, void *arg, char *why, size_t whymax)
{
	int err;

	if ((err = open_page(c, ev, "/index.html")) < 0) {
		snprintf(why, whymax, "chromium did not open the page");
		return err;
	}
	if ((err = watch_page(c, ev, *(const long *)arg)) < 0)
		return err;
	c->deadline_ms += 5000; /* a page at its deadline still gets its screenshot */
	if ((err = screenshot(c, ev, NULL)) < 0)
		snprintf(why, whymax, "chromium took no screenshot");
	return err;
}

/* The whole conversation with a started Chromium: `talk`, then Browser.close. */
static int converse(struct cdp *c, talk_fn talk, void *arg, char *why, size_t whymax)
{
	struct events *ev = calloc(1, sizeof *ev);
	int err;

	if (!ev)
		return SVC_E_INTERNAL;
	err = talk(c, ev, arg, why, whymax);
	cdp_send(c, "Browser.close", NULL, 0);
	free(ev);
	return err;
}

/*
 * Chromium in the sandbox for `dir`'s files, its page server, and `talk` over the protocol, all
 * within timeout_ms; results into *out. Returns as svc_preview_check_run().
 */
static int with_chromium(const char *chromium, const struct svc_thumb_sandbox *sb, const char *dir, long timeout_ms,
			 int (*tick)(void *), void *tick_arg, talk_fn talk, void *talk_arg, struct svc_check_report *out,
			 char *why, size_t whymax)
{
	char tmp[] = "/tmp/svc-check-XXXXXX", index_path[2100];
	int to[2] = { -1, -1 }, from[2] = { -1, -1 }, err = SVC_E_UNAVAILABLE, made_tmp = 0;
	struct svc_sandbox *run = NULL;
	struct svc_sandbox_result res;
	struct cdp c;
	pid_t server = -1;
	struct stat st;

	memset(&c, 0, sizeof c);
	svc_buf_init(&c.in, MSG_MAX);
	snprintf(why, whymax, "chromium failed");
	snprintf(index_path, sizeof index_path, "%s/index.html", dir);
	if (stat(index_path, &st) < 0 || !S_ISREG(st.st_mode)) {
		snprintf(why, whymax, "the preview has no index.html");
		return SVC_E_NOT_FOUND;
	}
	if (!*chromium || access(sb->bwrap, X_OK) != 0) {
		snprintf(why, whymax, "chromium or bubblewrap is not available");
		return SVC_E_UNAVAILABLE;
	}
	if (!mkdtemp(tmp))
		return SVC_E_INTERNAL;
	made_tmp = 1;
	if ((geteuid() == 0 && chown(tmp, sb->uid, sb->uid) < 0) || pipe2(to, O_CLOEXEC) < 0 ||
	    pipe2(from, O_CLOEXEC) < 0) {
		err = SVC_E_INTERNAL;
		goto done;
	}
	signal(SIGPIPE, SIG_IGN);
	if ((err = spawn(sb, chromium, tmp, to[0], from[1], &run, why, whymax)) < 0) {
		run = NULL;
		goto done;
	}
	close(to[0]);
	close(from[1]);
	to[0] = from[1] = -1;
	c.wfd = to[1];
	c.rfd = from[0];
	c.deadline_ms = svc_mono_ms() + timeout_ms;
	c.tick = tick;
	c.tick_arg = tick_arg;
	c.r = out;
	if ((server = fork()) < 0) {
		err = SVC_E_INTERNAL;
		goto done;
	}
	if (server == 0) {
		svc_thumbnail__serve(svc_sandbox_listener(run), dir, c.deadline_ms + 10000);
		_exit(0);
	}
	err = converse(&c, talk, talk_arg, why, whymax);
	if (err == 0)
		why[0] = '\0';
done:
	if (run) {
		int64_t end = svc_mono_ms() + 2000;
		while (!svc_sandbox_poll(run) && svc_mono_ms() < end) {
			struct timespec ts = { 0, 50 * 1000000L };
			nanosleep(&ts, NULL);
		}
		svc_sandbox_stop(run, 0);
		svc_sandbox_wait(run, &res);
	}
	if (server > 0) {
		kill(server, SIGKILL);
		waitpid(server, NULL, 0);
	}
	if (to[0] >= 0)
		close(to[0]);
	if (to[1] >= 0)
		close(to[1]);
	if (from[0] >= 0)
		close(from[0]);
	if (from[1] >= 0)
		close(from[1]);
	svc_buf_dispose(&c.in);
	if (made_tmp)
		svc_fsx_remove_tree(tmp);
	return err;
}

/* Whether `dir` has package.json: its preview is a build. */
static int is_package_project(const char *dir)
{
	char pkg[2100];
	struct stat st;

	snprintf(pkg, sizeof pkg, "%s/package.json", dir);
	return stat(pkg, &st) == 0;
}

/* Whether svc can load `dir` as it is: no package.json (a build's), Chromium on. SVC_E_UNAVAILABLE with why when not. */
static int checkable(const struct svc_config *cfg, const char *dir, char *why, size_t whymax)
{
	if (is_package_project(dir)) {
		snprintf(why, whymax, "the preview of a package.json project is a build; not checked");
		return SVC_E_UNAVAILABLE;
	}
	if (!*cfg->chromium) {
		snprintf(why, whymax, "chromium is turned off (SVC_CHROMIUM is empty)");
		return SVC_E_UNAVAILABLE;
	}
	return 0;
}

/* The check's tick asked by the build (svc_preview_tree.cancel); its answer kept for the check to return. */
struct build_cancel {
	int (*tick)(void *);
	void *arg;
	int rc;
};

static int build_cancel(void *arg)
{
	struct build_cancel *b = arg;

	if (b->tick && !b->rc)
		b->rc = b->tick(b->arg);
	return b->rc;
}

/*
 * The check of a package.json project: the turn's files built as the preview is
 * (svc_preview_build_tree(), within SVC_AGENT_CHECK_BUILD_SECS, stopped by tick), the build's
 * errors when it failed, else its dist/ checked as a static project's files are.
 */
static int check_build(struct svc_db *db, const struct svc_config *cfg, const char *project_id,
		       const char *workspace_id, long timeout_ms, int (*tick)(void *), void *tick_arg,
		       struct svc_check_report *out, char *why, size_t whymax)
{
	struct build_cancel bc = { tick, tick_arg, 0 };
	struct svc_preview_tree t;
	struct svc_thumb_sandbox sb;
	int err;

	memset(&t, 0, sizeof t);
	t.project_id = project_id;
	t.workspace_id = workspace_id;
	t.name = "check";
	t.wall_secs = cfg->agent_check_build_secs;
	t.cancel = build_cancel;
	t.cancel_arg = &bc;
	err = svc_preview_build_tree(db, cfg, &t, why, whymax);
	if (err == SVC_E_CANCELLED || bc.rc) {
		err = bc.rc ? bc.rc : SVC_E_CANCELLED;
	} else if (err == SVC_E_VALIDATION) {
		/* the project's failure: its errors are the check's (no page, no screenshot) */
		if (svc_preview_check_build_log(t.log, t.log ? strlen(t.log) : 0, "/build/", out) == 0)
			svc_preview_check_add(out, "build", why, NULL, 0);
		err = 0;
	} else if (err == 0) {
		svc_thumbnail__sandbox(cfg, &sb);
		err = svc_preview_check_run(cfg->chromium, &sb, t.dist, timeout_ms, SVC_CHECK_QUIET_MS, tick, tick_arg, out,
					    why, whymax);
	}
	svc_preview_tree_remove(&t);
	return err;
}

int svc_preview_check(struct svc_db *db, const struct svc_config *cfg, const char *project_id, const char *workspace_id,
		      const char *dir, long timeout_ms, int (*tick)(void *), void *tick_arg, struct svc_check_report *out,
		      char *why, size_t whymax)
{
	struct svc_thumb_sandbox sb;

	if (!*cfg->chromium) {
		snprintf(why, whymax, "chromium is turned off (SVC_CHROMIUM is empty)");
		return SVC_E_UNAVAILABLE;
	}
	if (is_package_project(dir))
		return check_build(db, cfg, project_id, workspace_id, timeout_ms, tick, tick_arg, out, why, whymax);
	svc_thumbnail__sandbox(cfg, &sb);
	return svc_preview_check_run(cfg->chromium, &sb, dir, timeout_ms, SVC_CHECK_QUIET_MS, tick, tick_arg, out, why,
				     whymax);
}

int svc_preview_check_run(const char *chromium, const struct svc_thumb_sandbox *sb, const char *dir, long timeout_ms,
			  long quiet_ms, int (*tick)(void *), void *tick_arg, struct svc_check_report *out, char *why,
			  size_t whymax)
{
	return with_chromium(chromium, sb, dir, timeout_ms, tick, tick_arg, check_talk, &quiet_ms, out, why, whymax);
}

/* What element_talk() is asked: the page and the selector of the element. */
struct element_ask {
	const char *page_path, *selector;
};

/*
 * The element's conversation: the page, its load (and 500 ms of quiet), the element's box in page
 * coordinates (Runtime.evaluate of document.querySelector, scrolled into view), a screenshot
 * clipped to it. The selector reaches the page as a JSON string literal.
 */
static int element_talk(struct cdp *c, struct events *ev, void *arg, char *why, size_t whymax)
{
	const struct element_ask *a = arg;
	struct json_object *sel = json_object_new_string(a->selector), *p, *res = NULL, *v = NULL, *clip, *box = NULL;
	struct svc_buf js;
	int err;

	svc_buf_init(&js, 16384);
	err = svc_buf_addf(&js, "(() => { const e = document.querySelector(%s); if (!e) return null; "
				"e.scrollIntoView({block: 'center'}); const r = e.getBoundingClientRect(); "
				"return JSON.stringify([r.x + scrollX, r.y + scrollY, r.width, r.height]); })()",
			   json_object_to_json_string_ext(sel, JSON_C_TO_STRING_PLAIN));
	json_object_put(sel);
	if (err < 0 || (err = open_page(c, ev, a->page_path)) < 0 || (err = watch_page(c, ev, 500)) < 0)
		goto done;
	p = json_object_new_object();
	svc_json_add_str(p, "expression", js.data);
	json_object_object_add(p, "returnByValue", json_object_new_boolean(1));
	if ((err = cdp_call(c, ev, "Runtime.evaluate", p, 1, &res)) < 0)
		goto done;
	if (!json_object_object_get_ex(res, "result", &v) || !svc_json_str(v, "value") ||
	    !(box = json_tokener_parse(svc_json_str(v, "value"))) || json_object_array_length(box) != 4 ||
	    json_object_get_double(json_object_array_get_idx(box, 2)) < 1 ||
	    json_object_get_double(json_object_array_get_idx(box, 3)) < 1) {
		snprintf(why, whymax, "the page has no visible element %s", a->selector);
		err = SVC_E_NOT_FOUND;
		goto done;
	}
	clip = json_object_new_object();
	json_object_object_add(clip, "x", json_object_get(json_object_array_get_idx(box, 0)));
	json_object_object_add(clip, "y", json_object_get(json_object_array_get_idx(box, 1)));
	json_object_object_add(clip, "width", json_object_new_double(
		json_object_get_double(json_object_array_get_idx(box, 2)) > 2000 ? 2000 : json_object_get_double(json_object_array_get_idx(box, 2))));
	json_object_object_add(clip, "height", json_object_new_double(
		json_object_get_double(json_object_array_get_idx(box, 3)) > 2000 ? 2000 : json_object_get_double(json_object_array_get_idx(box, 3))));
	json_object_object_add(clip, "scale", json_object_new_int(1));
	if ((err = screenshot(c, ev, clip)) < 0)
		snprintf(why, whymax, "chromium took no screenshot");
done:
	json_object_put(box);
	json_object_put(res);
	svc_buf_dispose(&js);
	return err;
}

int svc_preview_element_run(const char *chromium, const struct svc_thumb_sandbox *sb, const char *dir,
			    const char *page_path, const char *selector, long timeout_ms, struct svc_check_report *out,
			    char *why, size_t whymax)
{
	struct element_ask a = { page_path, selector };

	return with_chromium(chromium, sb, dir, timeout_ms, NULL, NULL, element_talk, &a, out, why, whymax);
}

int svc_preview_element_shot(const struct svc_config *cfg, const char *dir, const char *page_path, const char *selector,
			     long timeout_ms, struct svc_check_report *out, char *why, size_t whymax)
{
	struct svc_thumb_sandbox sb;
	int err;

	if ((err = checkable(cfg, dir, why, whymax)) < 0)
		return err;
	svc_thumbnail__sandbox(cfg, &sb);
	return svc_preview_element_run(cfg->chromium, &sb, dir, page_path, selector, timeout_ms, out, why, whymax);
}
