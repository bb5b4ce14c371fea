/* agent.c: the agent loop: call the model provider with libcurl, stream its answer, run its tools, repeat. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <curl/curl.h>

#include "agent/agent.h"
#include "core/err.h"
#include "core/log.h"

#define DEFAULT_STEPS 25
#define DEFAULT_TIMEOUT 600       /* seconds per provider call */
#define CONNECT_TIMEOUT 10        /* seconds */
#define DEFAULT_IDLE 120          /* idle timeout: seconds without a byte before a provider counts as dead */
#define TICK_MS 200               /* at most this often the tick callback runs during a transfer */
#define DEFAULT_RETRY_MAX 10      /* seconds of Retry-After a 429 is waited for */
#define MAX_429_TRIES 3           /* provider calls per step when the provider answers 429 */
#define MAX_LINE (1024 * 1024)    /* bytes of one SSE line or event */
#define MAX_ERRBODY 4096          /* bytes of a non-2xx answer kept for the message */
#define MAX_URL 2048
#define MAX_FINAL (4 * 1024 * 1024) /* bytes of the whole turn's text */

static const char prompt_build[] =
	"You are svc's agent. You work on a web app whose files are in the project directory (what kind of "
	"app is said below). The tools work on that directory; paths are relative to its root, like "
	"\"index.html\" or \"src/App.tsx\".\n"
	"Tools: list_files, read_file and search_files to look; write_file (a whole file), edit_file "
	"(replace one exact piece of text that occurs once) and delete_file to change.\n"
	"How to work: look before you change, and read a file before you edit it. Keep changes minimal "
	"and focused on what the user asked; keep the existing structure and style; do not touch files "
	"the request does not need. Prefer edit_file for small changes. Never try to reach outside the "
	"project directory. When a tool reports an error, fix the call or explain the problem.\n"
	"When you are done, answer with a short summary of what you changed, in the user's language, "
	"without repeating whole files.";

/* The apps' backend (issue 28, docs/app-backend.md): one paragraph of its own, after the base prompt: svc.data.json
 * and /_svc/client.js, enough for a model to build a signed-in app (about 2 KB: tests/e2e/test_templates.py). */
static const char prompt_backend[] =
	"\nWhen the app needs accounts or data kept on the server, it has a backend on its own origin (no outside "
	"service, no key). Declare collections in svc.data.json at the root, e.g. {\"collections\": {\"todos\": "
	"{\"fields\": {\"title\": {\"type\": \"string\", \"required\": true, \"max\": 200}, \"done\": "
	"{\"type\": \"boolean\"}}, \"rules\": {\"list\": \"owner\", \"get\": \"owner\", \"create\": \"user\", "
	"\"update\": \"owner\", \"delete\": \"owner\"}, \"indexes\": [\"done\"]}}}. Field types: string, text "
	"(max characters), number (min, max), boolean, datetime (RFC 3339), json (max bytes), file, user. Rules per "
	"operation: public (anyone), user (any signed-in end user), owner (the record's creator; a list holds only the "
	"caller's records), none; a missing rule is owner. Lists filter only on indexes, id, owner and createdAt. A "
	"record is {id, owner, createdAt, updatedAt, ...fields}. An invalid svc.data.json is refused with the line to "
	"fix.\nThe page uses the ES module /_svc/client.js: in plain HTML, <script type=\"module\"> import { auth, "
	"data } from \"/_svc/client.js\"; in a Vite or React app never import it statically (the build cannot "
	"resolve it): const url = \"/_svc/client.js\"; const { auth, data } = await import(/* @vite-ignore */ url). "
	"await auth.signUp(email, password) (a new account, signed in; password of 8 characters or more), "
	"auth.signIn(email, password), auth.signOut(), await auth.user() ({id, email, createdAt} or null), "
	"auth.onChange(cb) (cb(user or null) on every sign-in and sign-out). const todos = data.collection(\"todos\"); "
	"await todos.list({filter: {done: false}, sort: \"-createdAt\", limit: 50}) gives {items, nextCursor}; "
	"todos.get(id), todos.create({title}), todos.update(id, {done: true}), todos.delete(id). A failed call throws "
	"an error with status, code (validation_failed, unauthorized, not_found, conflict), field and message: show "
	"the message. Show a sign-in form while auth.user() is null. The session is an HttpOnly cookie: keep no "
	"token or password in localStorage. The server enforces the rules: declare owner rather than filtering "
	"others' records out in the page. The preview and the published site have separate accounts and data.";

static const char prompt_read_only[] =
	"\nThis conversation is in %s mode: the project is read-only. You have list_files, read_file "
	"and search_files only; do not try to change files. Answer the user's question, or lay out a "
	"short plan of the changes you would make.";

static const char prompt_plan[] =
	"\nYou are asked for a plan. Look at the files you need, then answer with a short introduction and "
	"the plan as one fenced JSON block:\n"
	"```json\n{\"steps\": [{\"title\": \"...\", \"description\": \"...\", \"files\": [\"index.html\"], "
	"\"risk\": \"low\"}]}\n```\n"
	"Each step has a short title, a description of the change, the files it touches and its risk: "
	"low, medium or high. Do not change any file.";

/* issue 29 "Point at an element" (agent's block) */
static const char prompt_element[] =
	"\n\nThe user pointed at an element of the page: it is described after their message (page, selector, "
	"text, HTML), with a picture of it when there is one. Change that element, and around it only what the "
	"request needs.";

static const char prompt_summary[] =
	"You summarise conversations between a user and svc's coding agent so that the agent can go on "
	"without the full history. Keep what was asked, what was decided, which files were changed and "
	"how, and what is still open. Be concise; answer with the summary only.";

static const char summary_request[] =
	"Summarize the conversation so far for yourself: requests, decisions, files changed, open points.";

struct xfer {
	CURL *curl;
	const struct svc_agent_turn *turn;
	struct svc_agent__sse sse;
	struct svc_agent__step *st;
	struct svc_buf errbody;   /* a non-2xx answer's body */
	int err;                         /* why on_body stopped the transfer */
	int tick_err;                    /* what the tick callback returned when it stopped it */
	long retry_after;                /* seconds of the last Retry-After header; -1 when none */
	int64_t last_tick_ms;
};

static int64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* A status line resets the Retry-After seen; keeps the seconds of a Retry-After header. */
static size_t on_header(char *line, size_t size, size_t nmemb, void *ud)
{
	struct xfer *x = ud;
	size_t n = size * nmemb, i, j = 0;

	if (n > 12 && memcmp(line, "HTTP/", 5) == 0) {
		x->retry_after = -1;
	} else if (n > 12 && strncasecmp(line, "retry-after:", 12) == 0) {
		long v = 0;

		i = 12;
		while (i < n && line[i] == ' ')
			i++;
		for (j = 0; i < n && line[i] >= '0' && line[i] <= '9' && j < 6; i++, j++)
			v = v * 10 + (line[i] - '0');
		/* an HTTP-date or an absurd number counts as longer than any bound */
		x->retry_after = j > 0 && j < 6 ? v : 1000000;
	}
	return n;
}

/* The sink of the answer (lib/core/outbound.h): the SSE stream, or a non-2xx answer's body for its message. */
static int on_body(void *ud, const char *ptr, size_t n)
{
	struct xfer *x = ud;
	size_t room;
	long code = 0;
	int error;

	curl_easy_getinfo(x->curl, CURLINFO_RESPONSE_CODE, &code);
	if (code < 200 || code > 299) {
		room = x->errbody.max - x->errbody.len;
		if (svc_buf_add(&x->errbody, ptr, n < room ? n : room) < 0 || n >= room) {
			x->err = SVC_E_TOO_LARGE; /* enough for the message: stop reading */
			return x->err;
		}
		return 0;
	}
	error = svc_agent__sse_feed(&x->sse, ptr, n);
	if (error < 0) {
		if (error == SVC_E_TOO_LARGE)
			error = svc_agent__step_fail(x->st, "a line of the model provider's stream is longer than %d bytes", MAX_LINE);
		x->err = error;
		return error; /* the transfer ends at once */
	}
	return 0;
}

static int on_progress(void *ud, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal, curl_off_t ulnow)
{
	struct xfer *x = ud;
	int64_t now;
	int r;

	if (!x->turn->tick)
		return 0;
	now = mono_ms();
	if (now - x->last_tick_ms < TICK_MS)
		return 0;
	x->last_tick_ms = now;
	r = x->turn->tick(x->turn->ctx);
	if (r < 0) {
		x->tick_err = r;
		return 1; /* CURLE_ABORTED_BY_CALLBACK */
	}
	return 0;
}

/* Copies `s` into `out` for a message: control characters become spaces, bytes of invalid UTF-8 '?', at most `max` bytes. */
static void clean_text(const char *s, size_t len, size_t max, char *out, size_t outsz)
{
	size_t i, n;
	int valid = svc_utf8_valid(s, len);

	if (max > outsz - 1)
		max = outsz - 1;
	n = valid ? svc_utf8_cut(s, len, max) : (len < max ? len : max);
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c < 0x20 || c == 0x7f)
			c = ' ';
		else if (!valid && c >= 0x80)
			c = '?';
		out[i] = (char)c;
	}
	out[n] = '\0';
}

/* Replaces every occurrence of the API key in `msg` with "***". */
static void scrub_key(char *msg, size_t msgsz, const char *key)
{
	size_t klen = key ? strlen(key) : 0, len;
	char *p;

	if (klen < 4)
		return;
	while ((p = strstr(msg, key)) != NULL) {
		len = strlen(p + klen);
		memcpy(p, "***", 3);
		memmove(p + 3, p + klen, len + 1);
	}
	(void)msgsz;
}

static const char *reason_for(long code)
{
	switch (code) {
	case 400: return "Bad Request";
	case 401: return "Unauthorized";
	case 402: return "Payment Required";
	case 403: return "Forbidden";
	case 404: return "Not Found";
	case 408: return "Request Timeout";
	case 413: return "Content Too Large";
	case 422: return "Unprocessable Content";
	case 429: return "Too Many Requests";
	case 500: return "Internal Server Error";
	case 502: return "Bad Gateway";
	case 503: return "Service Unavailable";
	case 504: return "Gateway Timeout";
	case 529: return "Overloaded";
	default: return "";
	}
}

/* A fixed sentence for a provider's error status: what the client is told instead of the provider's own words. */
static const char *fixed_error(long code)
{
	if (code == 401 || code == 403)
		return "the provider refused the API key";
	if (code == 404)
		return "the provider knows no such model or path (check the base URL and the model)";
	if (code == 429)
		return "the provider's rate limit or quota is reached";
	if (code == 402)
		return "the provider's account needs payment";
	if (code >= 500)
		return "the provider failed";
	return "the provider refused the request";
}

/*
 * out->message for a non-2xx answer: the status, its standard reason and a fixed sentence. The
 * provider's body (which may carry anything, e.g. what an inside service answered) goes to the log
 * only, its first 200 bytes, with the key scrubbed (review finding 3 of issue 17).
 */
static void http_error(struct xfer *x, long code, struct svc_agent_result *out)
{
	const char *body = svc_buf_str(&x->errbody), *msg = NULL, *reason = reason_for(code);
	struct json_object *doc = NULL, *e;
	char text[256];

	if (svc_agent__json_parse(body, x->errbody.len, &doc) == 0 && json_object_is_type(doc, json_type_object)) {
		if (json_object_object_get_ex(doc, "error", &e)) {
			if (json_object_is_type(e, json_type_string))
				msg = json_object_get_string(e);              /* Ollama, llama.cpp */
			else if (json_object_is_type(e, json_type_object))
				msg = svc_agent__json_str(e, "message");      /* OpenAI, Anthropic, vLLM */
		}
		if (!msg)
			msg = svc_agent__json_str(doc, "message");
	}
	if (msg)
		clean_text(msg, strlen(msg), 200, text, sizeof(text));
	else
		clean_text(body, x->errbody.len, 200, text, sizeof(text));
	scrub_key(text, sizeof(text), x->turn->provider.api_key);
	svc_log_warn("agent: the model provider answered %ld: %s", code, text[0] ? text : "(no error message)");
	snprintf(out->message, sizeof(out->message), "the model provider answered %ld%s%s: %s", code,
		 reason[0] ? " " : "", reason, fixed_error(code));
	json_object_put(doc);
}

/* Builds "{base_url}{path}" into `url`; refuses what is not plainly an http(s) URL. */
static int make_url(const char *base, const char *path, char *url, size_t urlsz)
{
	size_t blen = strlen(base);
	int n;

	while (blen > 0 && base[blen - 1] == '/')
		blen--;
	if (strncmp(base, "http://", 7) != 0 && strncmp(base, "https://", 8) != 0)
		return SVC_E_NO_PROVIDER;
	n = snprintf(url, urlsz, "%.*s%s", (int)blen, base, path);
	if (n < 0 || (size_t)n >= urlsz)
		return SVC_E_NO_PROVIDER;
	return 0;
}

/* Returns 1 when `key` can go into a header: visible ASCII only, no CR/LF. */
static int key_ok(const char *key)
{
	for (; *key; key++) {
		if (*key < 0x21 || *key > 0x7e)
			return 0;
	}
	return 1;
}

/*
 * The request's headers for provider `p`: JSON in, server-sent events out, the protocol's version and
 * the API key (*out_auth, malloc'd, wiped by the caller; NULL without a key). Returns 0,
 * SVC_E_MODEL_UNAVAILABLE (a key that cannot go into a header) or SVC_E_INTERNAL.
 */
static int request_headers(const struct svc_agent_provider *p, int anthropic, struct curl_slist **out,
			   char **out_auth, struct svc_agent_result *res)
{
	struct curl_slist *h;
	size_t alen, i;

	if (p->api_key && p->api_key[0]) {
		if (!key_ok(p->api_key)) {
			snprintf(res->message, sizeof(res->message), "the provider's API key contains spaces or control characters");
			return SVC_E_MODEL_UNAVAILABLE;
		}
		alen = strlen(p->api_key) + 32;
		if (!(*out_auth = malloc(alen)))
			return SVC_E_INTERNAL;
		snprintf(*out_auth, alen, anthropic ? "x-api-key: %s" : "Authorization: Bearer %s", p->api_key);
	}
	{
		const char *list[] = {
			"Content-Type: application/json", "Accept: text/event-stream", "Expect:",
			anthropic ? "anthropic-version: 2023-06-01" : NULL, *out_auth,
		};

		for (i = 0; i < sizeof(list) / sizeof(list[0]); i++) {
			if (!list[i])
				continue;
			if (!(h = curl_slist_append(*out, list[i])))
				return SVC_E_INTERNAL;
			*out = h;
		}
	}
	return 0;
}

/* Sets up `curl` for one streamed POST of `body` to `url`, its answer going to `x`. Returns 0 or an error. */
static int transfer_options(CURL *curl, struct xfer *x, const char *url, struct curl_slist *headers, const char *body,
			    char *errbuf, struct svc_outbound_xfer *ox)
{
	const struct svc_agent_turn *turn = x->turn;
	long timeout = turn->timeout_secs > 0 ? turn->timeout_secs : DEFAULT_TIMEOUT;
	struct svc_outbound_req rq;

	/* a workspace's provider is a name its admin chose (guarded); the instance's is the operator's */
	memset(&rq, 0, sizeof(rq));
	rq.url = url;
	rq.body = body;
	rq.body_len = strlen(body);
	rq.headers = headers;
	rq.reach = turn->provider.outbound ? SVC_OUTBOUND_GUARDED : SVC_OUTBOUND_OPERATOR;
	rq.policy = turn->provider.outbound;
	rq.connect_timeout_ms = (long)CONNECT_TIMEOUT * 1000;
	rq.timeout_ms = timeout * 1000;
	rq.low_speed_secs = turn->idle_secs > 0 ? turn->idle_secs : DEFAULT_IDLE;
	rq.max_body = (size_t)1 << 30; /* one streamed answer; its lines and texts have their own bounds */
	rq.sink = on_body;
	rq.sink_ctx = x;
	if (svc_outbound_setup(curl, &rq, ox) < 0 ||
	    curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, on_header) != CURLE_OK ||
	    curl_easy_setopt(curl, CURLOPT_HEADERDATA, x) != CURLE_OK ||
	    curl_easy_setopt(curl, CURLOPT_NOPROGRESS, 0L) != CURLE_OK ||
	    curl_easy_setopt(curl, CURLOPT_XFERINFOFUNCTION, on_progress) != CURLE_OK ||
	    curl_easy_setopt(curl, CURLOPT_XFERINFODATA, x) != CURLE_OK ||
	    curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, errbuf) != CURLE_OK)
		return SVC_E_INTERNAL;
	return 0;
}

/*
 * What a finished transfer means: a callback's error, the provider's non-2xx status, a stream cut or
 * malformed, a timeout, a refused address, a connection failure, or 0 for a complete answer in
 * x->st. `res` and `code` are curl's result and the HTTP status; out->message says why on error.
 */
static int transfer_outcome(struct xfer *x, CURLcode res, long code, const char *errbuf,
			    const struct svc_outbound_guard *guard, struct svc_agent_result *out)
{
	struct svc_agent__step *st = x->st;
	int error;

	if (x->tick_err < 0)
		return x->tick_err;
	if (st->emit_err < 0)
		return st->emit_err;
	st->http_status = code;
	st->retry_after = x->retry_after;
	if (code != 0 && (code < 200 || code > 299) && (res == CURLE_OK || x->err == SVC_E_TOO_LARGE)) {
		http_error(x, code, out);
		return SVC_E_MODEL_UNAVAILABLE;
	}
	if (x->err < 0) {
		if (x->err == SVC_E_MODEL_UNAVAILABLE)
			snprintf(out->message, sizeof(out->message), "%s", st->error);
		return x->err;
	}
	if (res == CURLE_OPERATION_TIMEDOUT) {
		snprintf(out->message, sizeof(out->message), "the model provider did not answer in time (%s)",
			 errbuf[0] ? errbuf : curl_easy_strerror(res));
		return SVC_E_MODEL_UNAVAILABLE;
	}
	if (res == CURLE_COULDNT_CONNECT && guard->refused) {
		/* the address stays in the log: the message must not map the instance's network for a client */
		svc_log_warn("agent: refused to connect to %s (%s): a workspace's provider base URL may not reach it",
			     guard->addr, svc_net_kind_name(guard->kind));
		snprintf(out->message, sizeof(out->message), "%s", SVC_AGENT_REFUSED_ADDRESS);
		return SVC_E_MODEL_UNAVAILABLE;
	}
	if (res != CURLE_OK) {
		snprintf(out->message, sizeof(out->message), "could not reach the model provider: %s",
			 errbuf[0] ? errbuf : curl_easy_strerror(res));
		scrub_key(out->message, sizeof(out->message), x->turn->provider.api_key);
		return SVC_E_MODEL_UNAVAILABLE;
	}
	if ((error = svc_agent__sse_finish(&x->sse)) < 0 || (error = svc_agent__step_end(st)) < 0) {
		if (st->emit_err < 0)
			return st->emit_err;
		if (error == SVC_E_TOO_LARGE || error == SVC_E_MODEL_UNAVAILABLE) {
			snprintf(out->message, sizeof(out->message), "%s",
				 st->error[0] ? st->error : "the model provider's stream is malformed");
			return SVC_E_MODEL_UNAVAILABLE;
		}
		return error;
	}
	return 0;
}

/* One streamed provider call: POSTs `body` and parses the answer into `st`. */
static int call_provider(CURL *curl, const struct svc_agent_turn *turn, int anthropic, const char *body,
			 struct svc_agent__step *st, struct svc_agent_result *out)
{
	const struct svc_agent_provider *p = &turn->provider;
	struct curl_slist *headers = NULL;
	struct xfer x;
	struct svc_outbound_xfer ox;
	char url[MAX_URL], errbuf[CURL_ERROR_SIZE], *auth = NULL;
	long code = 0;
	CURLcode res;
	int error = 0;

	memset(&x, 0, sizeof(x));
	memset(&ox, 0, sizeof(ox));
	x.curl = curl;
	x.turn = turn;
	x.st = st;
	x.last_tick_ms = mono_ms();
	x.retry_after = -1;
	svc_buf_init(&x.errbody, MAX_ERRBODY);
	svc_agent__sse_init(&x.sse, MAX_LINE, anthropic ? svc_agent__anthropic_event : svc_agent__openai_event, st);
	errbuf[0] = '\0';

	if ((error = make_url(p->base_url, anthropic ? "/messages" : "/chat/completions", url, sizeof(url))) < 0) {
		snprintf(out->message, sizeof(out->message), "the provider's base URL is not an http(s) URL of at most %d bytes", MAX_URL - 32);
		goto done;
	}
	if ((error = request_headers(p, anthropic, &headers, &auth, out)) < 0 ||
	    (error = transfer_options(curl, &x, url, headers, body, errbuf, &ox)) < 0)
		goto done;
	svc_outbound_perform(&ox);
	res = ox.rc;
	code = ox.status;
	curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, NULL);
	error = transfer_outcome(&x, res, code, errbuf, &ox.guard, out);
done:
	curl_slist_free_all(headers);
	if (auth) {
		memset(auth, 0, strlen(auth));
		free(auth);
	}
	svc_agent__sse_dispose(&x.sse);
	svc_buf_dispose(&x.errbody);
	return error;
}

/* Waits `ms` milliseconds in slices, calling tick so a stop or a vanished client ends the wait. */
static int wait_ms(const struct svc_agent_turn *turn, int64_t ms)
{
	int64_t end = mono_ms() + ms, left;
	struct timespec ts;
	int error;

	while ((left = end - mono_ms()) > 0) {
		if (left > TICK_MS)
			left = TICK_MS;
		ts.tv_sec = 0;
		ts.tv_nsec = (long)left * 1000000L;
		nanosleep(&ts, NULL);
		if (turn->tick && (error = turn->tick(turn->ctx)) < 0)
			return error;
	}
	return 0;
}

/*
 * One model call of a step: a 429 whose Retry-After (1 s when absent) is
 * within the bound is waited out and the call made again, MAX_429_TRIES
 * calls in all; nothing has been streamed before a 429.
 */
static int call_step(CURL *curl, const struct svc_agent_turn *turn, int anthropic, const char *body,
		     struct svc_agent__step *st, struct svc_agent_result *out)
{
	long bound = turn->retry_max_secs == 0 ? DEFAULT_RETRY_MAX : turn->retry_max_secs, wait;
	const char *prefix = st->text_prefix;
	svc_agent_emit_fn efn = st->emit;
	void *ectx = st->ctx;
	int tries, error;
	size_t len;

	for (tries = 1;; tries++) {
		error = call_provider(curl, turn, anthropic, body, st, out);
		if (error != SVC_E_MODEL_UNAVAILABLE || st->http_status != 429 || bound < 0)
			return error;
		wait = st->retry_after < 0 ? 1 : st->retry_after;
		len = strlen(out->message);
		if (wait > bound) {
			snprintf(out->message + len, sizeof(out->message) - len,
				 " (it asked to wait %ld s; svc waits at most %ld s)", wait, bound);
			return error;
		}
		if (tries >= MAX_429_TRIES) {
			snprintf(out->message + len, sizeof(out->message) - len, " (%d tries)", tries);
			return error;
		}
		if ((error = wait_ms(turn, wait * 1000)) < 0)
			return error;
		svc_agent__step_dispose(st);
		svc_agent__step_init(st, efn, ectx);
		st->text_prefix = prefix;
		out->message[0] = '\0';
	}
}

static int emit(const struct svc_agent_turn *turn, const char *type, struct json_object *payload)
{
	int r;

	if (!payload)
		return SVC_E_INTERNAL;
	r = turn->emit ? turn->emit(turn->ctx, type, payload) : 0;
	json_object_put(payload);
	return r < 0 ? r : 0;
}

/* {k1: "v1"} plus {k2: v2} when k2 is not NULL (v2 is taken over); NULL when out of memory. */
static struct json_object *obj2(const char *k1, const char *v1, const char *k2, struct json_object *v2)
{
	struct json_object *o = json_object_new_object();

	if (!o)
		return NULL;
	json_object_object_add(o, k1, json_object_new_string(v1));
	if (k2)
		json_object_object_add(o, k2, v2);
	return o;
}

#define FLAT_ARGS_MAX 1000   /* bytes of a tool call's arguments shown to the summariser */
#define FLAT_RESULT_MAX 2000 /* bytes of a tool result shown to the summariser */

/* Appends at most `max` bytes of `s` (cut on a UTF-8 boundary, "..." when cut) to b. */
static int add_cut(struct svc_buf *b, const char *s, size_t max)
{
	size_t len = strlen(s), n = svc_utf8_cut(s, len, max);
	int error;

	if ((error = svc_buf_add(b, s, n)) < 0)
		return error;
	return n < len ? svc_buf_adds(b, "...") : 0;
}

/*
 * One history entry as the loop's conversation keeps it, or NULL when the
 * entry is not valid (skipped). `flatten` (the summariser, which offers no
 * tools: Anthropic refuses tool blocks without tool definitions) turns tool
 * calls and results into assistant text, cut, and leaves images out.
 */
static struct json_object *history_entry(struct json_object *m, int flatten)
{
	const char *role = svc_agent__json_str(m, "role"), *content = svc_agent__json_str(m, "content");
	struct json_object *o = NULL, *calls = NULL, *images = NULL, *c, *v;
	struct svc_buf b;
	size_t i, n;

	if (!role || !content)
		return NULL;
	if (strcmp(role, "tool") == 0) {
		const char *id = svc_agent__json_str(m, "tool_call_id"), *name = svc_agent__json_str(m, "name");

		if (!id || !name)
			return NULL;
		if (flatten) {
			svc_buf_init(&b, FLAT_RESULT_MAX + 256);
			if (svc_buf_adds(&b, "[result of ") == 0 && svc_buf_adds(&b, name) == 0 &&
			    svc_buf_adds(&b, "] ") == 0 && add_cut(&b, content, FLAT_RESULT_MAX) == 0)
				o = obj2("role", "assistant", "content", json_object_new_string(svc_buf_str(&b)));
			svc_buf_dispose(&b);
			return o;
		}
		if ((o = obj2("role", "tool", "tool_call_id", json_object_new_string(id)))) {
			json_object_object_add(o, "name", json_object_new_string(name));
			json_object_object_add(o, "content", json_object_new_string(content));
			json_object_object_add(o, "is_error", json_object_new_boolean(
				json_object_object_get_ex(m, "is_error", &v) && json_object_get_boolean(v)));
		}
		return o;
	}
	if (strcmp(role, "user") != 0 && strcmp(role, "assistant") != 0)
		return NULL;
	if (strcmp(role, "assistant") == 0 && json_object_object_get_ex(m, "tool_calls", &calls) &&
	    json_object_is_type(calls, json_type_array) && json_object_array_length(calls) > 0) {
		n = json_object_array_length(calls);
		for (i = 0; i < n; i++) {
			c = json_object_array_get_idx(calls, i);
			if (!svc_agent__json_str(c, "id") || !svc_agent__json_str(c, "name") ||
			    !svc_agent__json_str(c, "arguments"))
				return NULL;
		}
		if (flatten) {
			svc_buf_init(&b, SVC_AGENT__MAX_TEXT + n * (FLAT_ARGS_MAX + 256));
			if (svc_buf_adds(&b, content) == 0) {
				for (i = 0; i < n; i++) {
					c = json_object_array_get_idx(calls, i);
					if ((b.len && svc_buf_adds(&b, "\n") < 0) || svc_buf_adds(&b, "[called ") < 0 ||
					    svc_buf_adds(&b, svc_agent__json_str(c, "name")) < 0 ||
					    svc_buf_adds(&b, " ") < 0 ||
					    add_cut(&b, svc_agent__json_str(c, "arguments"), FLAT_ARGS_MAX) < 0 ||
					    svc_buf_adds(&b, "]") < 0)
						break;
				}
				if (i == n)
					o = obj2("role", "assistant", "content", json_object_new_string(svc_buf_str(&b)));
			}
			svc_buf_dispose(&b);
			return o;
		}
		if ((o = obj2("role", "assistant", "content", json_object_new_string(content))))
			json_object_object_add(o, "tool_calls", json_object_get(calls));
		return o;
	}
	if (!(o = obj2("role", role, "content", json_object_new_string(content))))
		return NULL;
	if (!flatten && strcmp(role, "user") == 0 && json_object_object_get_ex(m, "images", &images) &&
	    json_object_is_type(images, json_type_array) && json_object_array_length(images) > 0)
		json_object_object_add(o, "images", json_object_get(images));
	return o;
}

/* The conversation: the valid part of the history, then the new user message. */
static struct json_object *start_conversation(const struct svc_agent_turn *turn, int flatten)
{
	struct json_object *conv = json_object_new_array(), *m;
	size_t i, n = turn->history && json_object_is_type(turn->history, json_type_array)
			       ? json_object_array_length(turn->history) : 0;

	if (!conv)
		return NULL;
	for (i = 0; i < n; i++) {
		if ((m = history_entry(json_object_array_get_idx(turn->history, i), flatten)))
			json_object_array_add(conv, m);
	}
	m = obj2("role", "user", "content", json_object_new_string(turn->user_text));
	if (!m) {
		json_object_put(conv);
		return NULL;
	}
	if (turn->images && json_object_is_type(turn->images, json_type_array) &&
	    json_object_array_length(turn->images) > 0)
		json_object_object_add(m, "images", json_object_get(turn->images));
	json_object_array_add(conv, m);
	return conv;
}

/*
 * Adds the assistant's answer (text and tool calls, with arguments as parsed) to the conversation;
 * with `text_tools` the raw text alone, markup and all (the calls are in it).
 */
static int add_assistant(struct json_object *conv, struct svc_agent__step *st, struct json_object **args, int text_tools)
{
	struct json_object *m, *calls, *c;
	size_t i;

	if (!(m = obj2("role", "assistant", "content", json_object_new_string(svc_buf_str(&st->text)))))
		return SVC_E_INTERNAL;
	json_object_array_add(conv, m);
	if (!st->ncalls || text_tools)
		return 0;
	if (!(calls = json_object_new_array()))
		return SVC_E_INTERNAL;
	json_object_object_add(m, "tool_calls", calls);
	for (i = 0; i < st->ncalls; i++) {
		c = obj2("id", st->calls[i].id, NULL, NULL);
		if (!c)
			return SVC_E_INTERNAL;
		json_object_array_add(calls, c);
		json_object_object_add(c, "name", json_object_new_string(st->calls[i].name));
		json_object_object_add(c, "arguments", json_object_new_string(
			args[i] ? json_object_to_json_string_ext(args[i], JSON_C_TO_STRING_PLAIN) : "{}"));
	}
	return 0;
}

/*
 * The text protocol's result of `call`: appended to the user message that follows the step's answer
 * ("[svc tool results]", one per step, made by the first call), as "[<tool> <path>] <result>" or
 * "[<tool> <path>] error: <text>". Returns 0 or SVC_E_INTERNAL.
 */
static int text_result(struct json_object *conv, const struct svc_agent__call *call, struct json_object *args, int rc,
		       const char *text)
{
	size_t n = json_object_array_length(conv);
	struct json_object *last = n ? json_object_array_get_idx(conv, n - 1) : NULL, *m = NULL;
	const char *role = last ? svc_agent__json_str(last, "role") : NULL, *was = last ? svc_agent__json_str(last, "content") : NULL;
	const char *path = args ? svc_agent__json_str(args, "path") : NULL;
	int again = role && strcmp(role, "user") == 0 && was &&
		    strncmp(was, SVC_AGENT__TEXT_RESULTS, strlen(SVC_AGENT__TEXT_RESULTS)) == 0;
	struct svc_buf b;

	svc_buf_init(&b, (SVC_AGENT__MAX_RESULT + 1024) * SVC_AGENT__MAX_CALLS);
	if (svc_buf_adds(&b, again ? was : SVC_AGENT__TEXT_RESULTS) < 0 || svc_buf_adds(&b, "\n[") < 0 ||
	    svc_buf_adds(&b, call->name) < 0 || (path && (svc_buf_adds(&b, " ") < 0 || svc_buf_adds(&b, path) < 0)) ||
	    svc_buf_adds(&b, rc < 0 ? "] error: " : "] ") < 0 || svc_buf_adds(&b, text) < 0)
		goto done;
	if (!(m = obj2("role", "user", "content", json_object_new_string(svc_buf_str(&b)))))
		goto done;
	if (again)
		json_object_array_put_idx(conv, n - 1, m);
	else
		json_object_array_add(conv, m);
done:
	svc_buf_dispose(&b);
	return m ? 0 : SVC_E_INTERNAL;
}

/* Emits tool.call, runs the tool, emits tool.result or tool.error and adds the result to the conversation. */
static int run_call(const struct svc_agent_turn *turn, struct svc_agent__tools *tools, struct json_object *conv,
		    struct svc_agent__call *call, struct json_object *args)
{
	struct json_object *payload, *m;
	char *text = NULL;
	const char *shown;
	int rc, error;

	if (turn->tick && (error = turn->tick(turn->ctx)) < 0)
		return error;
	payload = obj2("id", call->id, "tool", json_object_new_string(call->name));
	if (payload)
		json_object_object_add(payload, "args", args ? json_object_get(args) : json_object_new_object());
	if ((error = emit(turn, "tool.call", payload)) < 0)
		return error;
	if (args) {
		rc = svc_agent__tool_run(tools, call->name, args, &text);
	} else {
		text = strdup("the arguments of the call are not a JSON object; send them as one JSON object");
		rc = SVC_E_INVALID_JSON;
	}
	shown = text ? text : "out of memory";
	if (rc < 0)
		payload = obj2("id", call->id, "error", json_object_new_string(shown));
	else
		payload = obj2("id", call->id, "result", json_object_new_string(shown));
	/* the model sees an error as "error: <text>" */
	if (turn->provider.text_tools) {
		m = NULL;
		if (text_result(conv, call, args, rc, shown) == 0)
			m = conv; /* (not put below) */
		free(text);
		if (!m) {
			json_object_put(payload);
			return SVC_E_INTERNAL;
		}
		return emit(turn, rc < 0 ? "tool.error" : "tool.result", payload);
	}
	m = obj2("role", "tool", "tool_call_id", json_object_new_string(call->id));
	if (m) {
		struct svc_buf content;

		svc_buf_init(&content, SVC_AGENT__MAX_RESULT + 1024);
		if ((rc >= 0 || svc_buf_adds(&content, "error: ") == 0) && svc_buf_adds(&content, shown) == 0) {
			json_object_object_add(m, "name", json_object_new_string(call->name));
			json_object_object_add(m, "content", json_object_new_string(svc_buf_str(&content)));
			json_object_object_add(m, "is_error", json_object_new_boolean(rc < 0));
			json_object_array_add(conv, m);
		} else {
			json_object_put(m);
			m = NULL;
		}
		svc_buf_dispose(&content);
	}
	free(text);
	if (!m) {
		json_object_put(payload);
		return SVC_E_INTERNAL;
	}
	return emit(turn, rc < 0 ? "tool.error" : "tool.result", payload);
}

static int usage_info(const struct svc_agent_turn *turn, const struct svc_agent_result *out)
{
	struct json_object *p = json_object_new_object();
	double cost = (double)out->input_tokens * turn->provider.price_input_per_mtok / 1e6 +
		      (double)out->output_tokens * turn->provider.price_output_per_mtok / 1e6;

	if (!p)
		return SVC_E_INTERNAL;
	json_object_object_add(p, "inputTokens", json_object_new_int64(out->input_tokens));
	json_object_object_add(p, "outputTokens", json_object_new_int64(out->output_tokens));
	json_object_object_add(p, "cost", json_object_new_double(cost));
	return emit(turn, "session.usage_info", p);
}

/* The apps' files and server-side calls (docs/app-backend.md "Files", "Secrets and calls"): after prompt_backend. */
static const char prompt_backend_files[] =
	"\nUploads: import { files } from the same module; const {id} = await files.upload(input.files[0]) (a field "
	"of type file holds the id), files.url(id) for an img src or a link, files.delete(id). Who may is "
	"\"files\": {\"rules\": {\"create\": \"user\", \"get\": \"public\"}} in svc.data.json (create, get, delete; "
	"a missing rule is owner: each file private to its uploader)."
	/* appfetch (docs/app-backend.md "Secrets and calls") */
	"\nServer-side calls that need a key: declare \"fetch\": {\"weather\": {\"url\": \"https://api.example.com/v1/\", "
	"\"headers\": {\"Authorization\": \"Bearer {{secrets.WEATHER_KEY}}\"}}} in svc.data.json (the builder sets the "
	"secret in the Backend tab), then import { fetch } from the module: await fetch(\"weather\", {path: \"today\"}) "
	"gives {status, headers, body}. Never put an API key in the page's code.";

/*
 * The system prompt of a turn: the base prompt; for read-only modes the
 * read-only paragraph naming the mode (and the plan request in plan mode);
 * then the mode's own addition, cut at SVC_AGENT_PROMPT_EXTRA_MAX bytes on a
 * UTF-8 boundary (invalid UTF-8 is left out). `ro` is scratch space.
 */
static int system_prompt(const struct svc_agent_turn *turn, const struct svc_agent__tools *tools,
			 struct svc_buf *out, char *ro, size_t romax)
{
	const char *extra = turn->prompt_extra;
	size_t n;
	int error;

	if ((error = svc_buf_adds(out, prompt_build)) < 0 || (error = svc_buf_adds(out, prompt_backend)) < 0 ||
	    (error = svc_buf_adds(out, prompt_backend_files)) < 0)
		return error;
	/* what kind of project it is: the react template's layout, package.json, static (agent_stack.c) */
	if ((error = svc_agent__prompt_stack(turn->project_dir, out)) < 0)
		return error;
	if (tools->read_only) {
		snprintf(ro, romax, prompt_read_only, tools->mode);
		if ((error = svc_buf_adds(out, ro)) < 0)
			return error;
		if (strcmp(tools->mode, "plan") == 0 && (error = svc_buf_adds(out, prompt_plan)) < 0)
			return error;
	}
	if (extra && extra[0] && svc_utf8_valid(extra, strlen(extra))) {
		n = svc_utf8_cut(extra, strlen(extra), SVC_AGENT_PROMPT_EXTRA_MAX);
		if ((error = svc_buf_adds(out, "\n\n")) < 0 || (error = svc_buf_add(out, extra, n)) < 0)
			return error;
	}
	/* issue 29: the text tool protocol for models without tool calls; the workspace's instructions, then the
	 * project's AGENTS.md */
	if (turn->provider.text_tools && (error = svc_buf_adds(out, svc_agent__text_prompt(tools->read_only))) < 0)
		return error;
	if (turn->element && (error = svc_buf_adds(out, prompt_element)) < 0)
		return error;
	return svc_agent__instructions_add(turn, out);
}

/* The state of one turn's loop (svc_agent_run()), from its set-up to its end. */
struct loop {
	const struct svc_agent_turn *turn;
	int anthropic;
	struct svc_agent__tools tools;
	char mode[64];                 /* the mode's name for messages (at most 32 bytes of valid UTF-8) */
	char ro[512];                  /* scratch space of system_prompt() */
	struct svc_buf system;         /* the system prompt */
	struct svc_buf final;          /* the text of every answer of the turn */
	struct json_object *conv;      /* the conversation (start_conversation()) */
	struct json_object *defs;      /* the tool definitions */
	struct json_object *args[SVC_AGENT__MAX_CALLS]; /* the parsed arguments of the step's calls */
	struct svc_agent__step st;     /* the step being run, when have_step */
	int have_step;
	CURL *curl;
	struct svc_agent__breaker breaker; /* the loop breaker (lib/agent/agent_guard.c) */
	int budget_stop;               /* the spend callback asked to stop before the next provider call */
	char note[160];                /* why the turn stopped early (loop_step() returned 2) */
};

/*
 * Checks that `turn` can run: a provider with a base URL and a known protocol (*out_anthropic says
 * which), a project directory and a user message. Returns 0, SVC_E_NO_PROVIDER or SVC_E_VALIDATION
 * with out->message set.
 */
static int turn_check(const struct svc_agent_turn *turn, int *out_anthropic, struct svc_agent_result *out)
{
	const struct svc_agent_provider *p = &turn->provider;

	if (!p->base_url || !p->base_url[0]) {
		snprintf(out->message, sizeof(out->message), "no AI provider is configured");
		return SVC_E_NO_PROVIDER;
	}
	if (!p->protocol || !p->protocol[0] || strcmp(p->protocol, "openai") == 0) {
		*out_anthropic = 0;
	} else if (strcmp(p->protocol, "anthropic") == 0) {
		*out_anthropic = 1;
	} else {
		snprintf(out->message, sizeof(out->message), "the provider's protocol is neither \"openai\" nor \"anthropic\"");
		return SVC_E_NO_PROVIDER;
	}
	if (!turn->project_dir || !turn->user_text) {
		snprintf(out->message, sizeof(out->message), "an agent turn needs a project directory and a user message");
		return SVC_E_VALIDATION;
	}
	return 0;
}

/* Sets up the loop: the tools the mode allows, the system prompt, the conversation, the tool definitions, curl. */
static int loop_begin(struct loop *l)
{
	const struct svc_agent_turn *turn = l->turn;
	int error;

	l->tools.root = turn->project_dir;
	l->tools.repo_quota_bytes = turn->repo_quota_bytes;
	l->tools.read_only = !turn->all_tools && (!turn->mode || strcmp(turn->mode, "build") != 0);
	l->tools.integ = !l->tools.read_only && !turn->provider.text_tools && turn->integ &&
			 svc_agent__integration_available(turn->integ) ? turn->integ : NULL;
	l->mode[0] = '\0';
	if (turn->mode && svc_utf8_valid(turn->mode, strlen(turn->mode))) {
		size_t n = svc_utf8_cut(turn->mode, strlen(turn->mode), 32);

		memcpy(l->mode, turn->mode, n);
		l->mode[n] = '\0';
	}
	l->tools.mode = l->mode[0] ? l->mode : "read-only";
	if ((error = system_prompt(turn, &l->tools, &l->system, l->ro, sizeof(l->ro))) < 0)
		return error;
	if (!(l->conv = start_conversation(turn, turn->provider.text_tools)) ||
	    !(l->defs = turn->provider.text_tools ? json_object_new_array() : svc_agent__tools_json(l->tools.read_only, l->anthropic)) ||
	    (l->tools.integ && svc_agent__integration_def(l->defs, l->anthropic) < 0) || !(l->curl = svc_outbound_handle()))
		return SVC_E_INTERNAL;
	return 0;
}

/*
 * The loop breaker's first half: a call of the same tool with the same arguments for the
 * SVC_AGENT__BREAKER_REPEATS-th time in the turn is not run; session.loop_stopped {reason
 * "repeated_call", tool, args, count} is emitted instead and 2 returned (the turn ends before its
 * next provider call). Returns 0 for any other call, or the emit's error.
 */
static int repeated_call(struct loop *l, struct svc_agent__call *call, struct json_object *args)
{
	const char *text = args ? json_object_to_json_string_ext(args, JSON_C_TO_STRING_PLAIN) : svc_buf_str(&call->args);
	unsigned n = svc_agent__breaker_call(&l->breaker, call->name, text);
	struct json_object *ev;
	int error;

	if (n < SVC_AGENT__BREAKER_REPEATS)
		return 0;
	ev = obj2("reason", "repeated_call", "tool", json_object_new_string(call->name));
	if (ev) {
		json_object_object_add(ev, "args", args ? json_object_get(args) : json_object_new_object());
		json_object_object_add(ev, "count", json_object_new_int((int)n));
	}
	if ((error = emit(l->turn, "session.loop_stopped", ev)) < 0)
		return error;
	snprintf(l->note, sizeof(l->note), "(Stopped: the agent asked for the same %s call %u times.)", call->name, n);
	return 2;
}

/*
 * The loop breaker's second half, after a build-mode step's tools ran: turn->idle_steps steps in
 * a row without a file change emit session.loop_stopped {reason "idle_steps", steps} and return
 * 2; else 0, or the emit's error.
 */
static int idle_steps(struct loop *l)
{
	unsigned idle = svc_agent__breaker_step(&l->breaker, l->tools.changes);
	struct json_object *ev;
	int error;

	if (l->tools.read_only || !l->turn->idle_steps || idle < l->turn->idle_steps)
		return 0;
	ev = obj2("reason", "idle_steps", "steps", json_object_new_int((int)idle));
	if ((error = emit(l->turn, "session.loop_stopped", ev)) < 0)
		return error;
	snprintf(l->note, sizeof(l->note), "(Stopped: %u steps in a row changed no file.)", idle);
	return 2;
}

/* Runs the tool calls of the step that asked for them, each answered in the conversation. */
static int loop_calls(struct loop *l, struct svc_agent_result *out)
{
	size_t i;
	int error;

	for (i = 0; i < l->st.ncalls; i++) {
		if ((error = repeated_call(l, &l->st.calls[i], l->args[i])) != 0)
			return error;
		error = run_call(l->turn, &l->tools, l->conv, &l->st.calls[i], l->args[i]);
		out->files_changed = l->tools.files_changed;
		if (error < 0)
			return error;
	}
	for (i = 0; i < l->st.ncalls; i++) {
		json_object_put(l->args[i]);
		l->args[i] = NULL;
	}
	svc_agent__step_dispose(&l->st);
	l->have_step = 0;
	return 0;
}

/*
 * One step: a model call with the conversation so far, its text kept, its answer added to the
 * conversation, then the tools it asked for. Returns 1 when the model answered without tool calls
 * (the turn is done), 0 to go on, or an error.
 */
static int loop_step(struct loop *l, struct svc_agent_result *out)
{
	const struct svc_agent_turn *turn = l->turn;
	const struct svc_agent_provider *p = &turn->provider;
	struct svc_agent__step *st = &l->st;
	const struct svc_buf *shown = p->text_tools ? &st->shown : &st->text;
	struct json_object *body = NULL;
	size_t i;
	int error;

	if (turn->tick && (error = turn->tick(turn->ctx)) < 0)
		return error;
	error = l->anthropic ? svc_agent__anthropic_body(p->model, svc_buf_str(&l->system), l->conv, l->defs, &body)
			     : svc_agent__openai_body(p->model, svc_buf_str(&l->system), l->conv, l->defs, &body);
	if (error < 0)
		return error;
	svc_agent__step_init(st, turn->emit, turn->ctx);
	l->have_step = 1;
	st->text_mode = p->text_tools;
	st->text_prefix = l->final.len ? "\n\n" : NULL;
	error = call_step(l->curl, turn, l->anthropic, json_object_to_json_string_ext(body, JSON_C_TO_STRING_PLAIN), st, out);
	json_object_put(body);
	out->input_tokens += st->input_tokens;
	out->output_tokens += st->output_tokens;
	if (turn->spend) {
		int r = turn->spend(turn->ctx, st->input_tokens, st->output_tokens);

		if (r < 0 && error >= 0)
			error = r;
		l->budget_stop = r == 1;
	}
	if (error < 0)
		return error;
	if (shown->len && ((l->final.len && (error = svc_buf_adds(&l->final, "\n\n")) < 0) ||
			     (error = svc_buf_add(&l->final, shown->data, shown->len)) < 0)) {
		snprintf(out->message, sizeof(out->message), "the model's answers are longer than %d bytes", MAX_FINAL);
		return SVC_E_MODEL_UNAVAILABLE;
	}
	for (i = 0; i < st->ncalls; i++) {
		if (svc_agent__parse_args(svc_buf_str(&st->calls[i].args), st->calls[i].args.len, &l->args[i]) < 0)
			l->args[i] = NULL;
	}
	if ((error = add_assistant(l->conv, st, l->args, p->text_tools)) < 0)
		return error;
	if (st->ncalls == 0)
		return 1;
	if ((error = loop_calls(l, out)) != 0)
		return error;
	if (l->budget_stop) {
		snprintf(l->note, sizeof(l->note), "(Stopped: the turn reached a spending cap.)");
		return 2;
	}
	return idle_steps(l);
}

/*
 * The end of a turn: a note when it stopped at its limit of `max_steps` model calls (r 0) or early
 * (r 2, l->note), then assistant.message with the whole text and session.usage_info.
 */
static int loop_end(struct loop *l, int r, unsigned max_steps, struct svc_agent_result *out)
{
	const struct svc_agent_turn *turn = l->turn;
	int error;

	if (r != 1) {
		char note[256], limit[128];
		struct json_object *d;

		snprintf(limit, sizeof(limit), "(Stopped: the agent reached its limit of %u model calls in one turn.)",
			 max_steps);
		snprintf(note, sizeof(note), "%s%s", l->final.len ? "\n\n" : "", r == 2 ? l->note : limit);
		if ((error = svc_buf_adds(&l->final, note)) < 0)
			return error;
		d = json_object_new_object();
		if (d)
			json_object_object_add(d, "delta", json_object_new_string(note));
		if ((error = emit(turn, "assistant.message_delta", d)) < 0)
			return error;
	}
	if ((error = emit(turn, "assistant.message", obj2("text", svc_buf_str(&l->final), NULL, NULL))) < 0)
		return error;
	return usage_info(turn, out);
}

int svc_agent_run(const struct svc_agent_turn *turn, struct svc_agent_result *out)
{
	unsigned max_steps = turn->max_steps ? turn->max_steps : DEFAULT_STEPS, step;
	struct loop l;
	int error, r = 0;
	size_t i;

	memset(out, 0, sizeof(*out));
	memset(&l, 0, sizeof(l));
	l.turn = turn;
	svc_buf_init(&l.final, MAX_FINAL);
	svc_buf_init(&l.system, sizeof(prompt_build) + SVC_AGENT__STACK_MAX + sizeof(l.ro) + sizeof(prompt_plan) +
				SVC_AGENT_PROMPT_EXTRA_MAX + 8 + svc_agent__instructions_room(turn) +
				strlen(svc_agent__text_prompt(0)) + sizeof(prompt_element));
	if ((error = turn_check(turn, &l.anthropic, out)) < 0 || (error = loop_begin(&l)) < 0)
		goto done;
	for (step = 0; step < max_steps && r == 0; step++) {
		if ((r = loop_step(&l, out)) < 0) {
			error = r;
			goto done;
		}
	}
	if (r == 2)
		snprintf(out->stopped, sizeof(out->stopped), "%s", l.budget_stop ? "budget" : "loop");
	error = loop_end(&l, r, max_steps, out);
done:
	if (l.have_step)
		svc_agent__step_dispose(&l.st);
	for (i = 0; i < SVC_AGENT__MAX_CALLS; i++)
		json_object_put(l.args[i]);
	out->files_changed = l.tools.files_changed;
	if (error < 0 && !out->message[0])
		snprintf(out->message, sizeof(out->message), "%s", svc_err_message(error));
	if (l.curl)
		curl_easy_cleanup(l.curl);
	json_object_put(l.defs);
	json_object_put(l.conv);
	svc_buf_dispose(&l.final);
	svc_buf_dispose(&l.system);
	return error;
}

int svc_agent_summarize(const struct svc_agent_turn *turn, char **out_text, struct svc_agent_result *out)
{
	const struct svc_agent_provider *p = &turn->provider;
	struct svc_agent_turn t = *turn;
	struct svc_agent__step st;
	struct json_object *conv = NULL, *body = NULL;
	int anthropic, error = 0, have_step = 0;
	CURL *curl = NULL;

	memset(out, 0, sizeof(*out));
	if (!p->base_url || !p->base_url[0]) {
		snprintf(out->message, sizeof(out->message), "no AI provider is configured");
		return SVC_E_NO_PROVIDER;
	}
	anthropic = p->protocol && strcmp(p->protocol, "anthropic") == 0;
	if (p->protocol && p->protocol[0] && !anthropic && strcmp(p->protocol, "openai") != 0) {
		snprintf(out->message, sizeof(out->message), "the provider's protocol is neither \"openai\" nor \"anthropic\"");
		return SVC_E_NO_PROVIDER;
	}
	t.user_text = summary_request;
	t.images = NULL;
	if (!(conv = start_conversation(&t, 1)) || !(curl = svc_outbound_handle())) {
		error = SVC_E_INTERNAL;
		goto done;
	}
	error = anthropic ? svc_agent__anthropic_body(p->model, prompt_summary, conv, NULL, &body)
			  : svc_agent__openai_body(p->model, prompt_summary, conv, NULL, &body);
	if (error < 0)
		goto done;
	svc_agent__step_init(&st, NULL, NULL);
	have_step = 1;
	error = call_step(curl, &t, anthropic, json_object_to_json_string_ext(body, JSON_C_TO_STRING_PLAIN), &st, out);
	out->input_tokens += st.input_tokens;
	out->output_tokens += st.output_tokens;
	if (error < 0)
		goto done;
	if (st.text.len == 0) {
		snprintf(out->message, sizeof(out->message), "the model answered the summary request with no text");
		error = SVC_E_MODEL_UNAVAILABLE;
		goto done;
	}
	if (!(*out_text = strdup(svc_buf_str(&st.text))))
		error = SVC_E_INTERNAL;
done:
	if (have_step)
		svc_agent__step_dispose(&st);
	if (error < 0 && !out->message[0])
		snprintf(out->message, sizeof(out->message), "%s", svc_err_message(error));
	if (curl)
		curl_easy_cleanup(curl);
	json_object_put(body);
	json_object_put(conv);
	return error;
}
