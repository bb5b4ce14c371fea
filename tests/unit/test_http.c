/* test_http.c: the router's path matching, query and cookie parsing, header safety, and what dispatch() checks before a handler (lib/http/http.c). */
#include <CUnit/CUnit.h>

#include "unit.h"

/* The router's parsers are static: include the module (docs/hacking.md "Tests"). */
#include "../../lib/http/http.c"

static void reset(struct svc_req *req)
{
	free_param_names(req);
	clear_params(req);
}

static void test_http_match_params(void)
{
	struct svc_req req;

	memset(&req, 0, sizeof req);
	CU_ASSERT_EQUAL(match(&req, "/api/projects/:id/versions/:sha/checkout",
			      "/api/projects/123e4567-e89b-42d3-a456-426614174000/versions/abc123/checkout"), 1);
	CU_ASSERT_EQUAL(req.nparams, 2);
	CU_ASSERT_STRING_EQUAL(svc_req_param(&req, "id"), "123e4567-e89b-42d3-a456-426614174000");
	CU_ASSERT_STRING_EQUAL(svc_req_param(&req, "sha"), "abc123");
	CU_ASSERT_PTR_NULL(svc_req_param(&req, "nope"));
	reset(&req);

	/* id-like parameters must be UUIDs: -1 means "matched, answer 404" */
	CU_ASSERT_EQUAL(match(&req, "/api/projects/:id", "/api/projects/not-a-uuid"), -1);
	reset(&req);
	CU_ASSERT_EQUAL(match(&req, "/api/workspaces/:wid/projects", "/api/workspaces/1/projects"), -1);
	reset(&req);
	CU_ASSERT_EQUAL(match(&req, "/api/chat/:projectId/messages",
			      "/api/chat/123e4567-e89b-42d3-a456-426614174000/messages"), 1);
	reset(&req);

	/* no partial matches, no empty segments, no trailing extras */
	CU_ASSERT_EQUAL(match(&req, "/api/projects", "/api/projects/"), 0);
	reset(&req);
	CU_ASSERT_EQUAL(match(&req, "/api/projects", "/api/project"), 0);
	reset(&req);
	CU_ASSERT_EQUAL(match(&req, "/api/projects/:id", "/api/projects/"), 0);
	reset(&req);
	CU_ASSERT_EQUAL(match(&req, "/api/projects/:id", "/api/projects/123e4567-e89b-42d3-a456-426614174000/x"), 0);
	reset(&req);

	/* the rest of the path */
	CU_ASSERT_EQUAL(match(&req, "/api/projects/:id/files/*",
			      "/api/projects/123e4567-e89b-42d3-a456-426614174000/files/css/site.css"), 1);
	CU_ASSERT_STRING_EQUAL(svc_req_param(&req, "*"), "css/site.css");
	reset(&req);
	CU_ASSERT_EQUAL(match(&req, "/api/projects/:id/files/*",
			      "/api/projects/123e4567-e89b-42d3-a456-426614174000/files/"), 0);
	reset(&req);
}

static void test_http_percent_decoding(void)
{
	char *s;

	s = pct_decode("a%20b%2Fc+d", 11, 1);
	CU_ASSERT_STRING_EQUAL(s, "a b/c d");
	free(s);
	s = pct_decode("a+b", 3, 0);
	CU_ASSERT_STRING_EQUAL(s, "a+b");
	free(s);
	CU_ASSERT_PTR_NULL(pct_decode("%", 1, 0));
	CU_ASSERT_PTR_NULL(pct_decode("%4", 2, 0));
	CU_ASSERT_PTR_NULL(pct_decode("%zz", 3, 0));
	CU_ASSERT_PTR_NULL(pct_decode("a%00b", 5, 0)); /* no NUL smuggled into a path */
}

static void test_http_query_and_cookies(void)
{
	char *env[] = { "HTTP_COOKIE=theme=dark; svc_access_token=tok.en.value ; other=\"q\"",
			"HTTP_X_CUSTOM_THING=yes", "CONTENT_TYPE=application/json", NULL };
	FCGX_Request r;
	struct svc_req req;
	char out[32];

	memset(&r, 0, sizeof r);
	memset(&req, 0, sizeof req);
	r.envp = env;
	req.fcgi = &r;
	req.query = "limit=20&q=hello%20world&empty=&flag&long=0123456789012345678901234567890123456789";
	CU_ASSERT_EQUAL(svc_req_query(&req, "limit", out, sizeof out), 1);
	CU_ASSERT_STRING_EQUAL(out, "20");
	CU_ASSERT_EQUAL(svc_req_query(&req, "q", out, sizeof out), 1);
	CU_ASSERT_STRING_EQUAL(out, "hello world");
	CU_ASSERT_EQUAL(svc_req_query(&req, "empty", out, sizeof out), 1);
	CU_ASSERT_STRING_EQUAL(out, "");
	CU_ASSERT_EQUAL(svc_req_query(&req, "flag", out, sizeof out), 1);
	CU_ASSERT_EQUAL(svc_req_query(&req, "missing", out, sizeof out), 0);
	CU_ASSERT_EQUAL(svc_req_query(&req, "long", out, sizeof out), SVC_E_VALIDATION);
	CU_ASSERT_EQUAL(svc_req_query(&req, "lim", out, sizeof out), 0);

	CU_ASSERT_EQUAL(svc_req_cookie(&req, "svc_access_token", out, sizeof out), 1);
	CU_ASSERT_STRING_EQUAL(out, "tok.en.value");
	CU_ASSERT_EQUAL(svc_req_cookie(&req, "other", out, sizeof out), 1);
	CU_ASSERT_STRING_EQUAL(out, "q");
	CU_ASSERT_EQUAL(svc_req_cookie(&req, "svc_access", out, sizeof out), 0);
	CU_ASSERT_EQUAL(svc_req_cookie(&req, "nope", out, sizeof out), 0);
	CU_ASSERT_STRING_EQUAL(svc_req_header(&req, "X-Custom-Thing"), "yes");
	CU_ASSERT_STRING_EQUAL(svc_req_header(&req, "Content-Type"), "application/json");
	CU_ASSERT_PTR_NULL(svc_req_header(&req, "Authorization"));
	CU_ASSERT_TRUE(is_json_type("application/json; charset=utf-8"));
	CU_ASSERT_FALSE(is_json_type("application/jsonp"));
	CU_ASSERT_FALSE(is_json_type("text/plain"));
	CU_ASSERT_FALSE(is_json_type(NULL));
}

static void test_http_header_injection_refused(void)
{
	struct svc_resp resp;
	struct svc_config cfg;

	memset(&resp, 0, sizeof resp);
	memset(&cfg, 0, sizeof cfg);
	resp.cfg = &cfg;
	svc_buf_init(&resp.headers, 1024);
	CU_ASSERT_EQUAL(svc_resp_header(&resp, "X-Ok", "fine"), 0);
	CU_ASSERT_EQUAL(svc_resp_header(&resp, "X-Bad", "a\r\nSet-Cookie: x=y"), SVC_E_INTERNAL);
	CU_ASSERT_EQUAL(svc_resp_header(&resp, "X-Bad\n", "v"), SVC_E_INTERNAL);
	CU_ASSERT_EQUAL(svc_resp_header(&resp, "X-Bad: y", "v"), SVC_E_INTERNAL);
	CU_ASSERT_EQUAL(svc_resp_cookie(&resp, "svc_access_token", "abc", "/", 900), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(resp.headers.data, "Set-Cookie: svc_access_token=abc; Path=/; HttpOnly; SameSite=Lax; Max-Age=900"));
	CU_ASSERT_PTR_NULL(strstr(resp.headers.data, "Secure"));
	cfg.secure_cookies = 1;
	CU_ASSERT_EQUAL(svc_resp_cookie(&resp, "svc_refresh_token", "", "/api/auth", 0), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(resp.headers.data, "svc_refresh_token=; Path=/api/auth; HttpOnly; SameSite=Lax; Max-Age=0; Expires=Thu, 01 Jan 1970 00:00:00 GMT; Secure"));
	CU_ASSERT_PTR_NULL(strstr(resp.headers.data, "X-Bad"));
	svc_buf_dispose(&resp.headers);
}

static void test_http_methods_allowed(void)
{
	char buf[64];

	CU_ASSERT_STRING_EQUAL(methods_allowed(SVC_GET | SVC_PATCH | SVC_DELETE, buf, sizeof buf),
			       "GET, HEAD, PATCH, DELETE");
	CU_ASSERT_STRING_EQUAL(methods_allowed(SVC_POST, buf, sizeof buf), "POST");
	CU_ASSERT_EQUAL(parse_method("GET"), SVC_GET);
	CU_ASSERT_EQUAL(parse_method("HEAD"), SVC_GET);
	CU_ASSERT_EQUAL(parse_method("TRACE"), 0);
	CU_ASSERT_EQUAL(parse_method(NULL), 0);
}

/* ---- dispatch: one request through handle(), on in-memory FastCGI streams ---- */

#define TEST_SECRET "0123456789abcdef0123456789abcdef"

/* A stream over a fixed buffer: a reader ends where its bytes end, a writer fails when full. */
struct mem_stream {
	FCGX_Stream s;
	unsigned char buf[16384];
};

static void mem_fill(FCGX_Stream *s)
{
	s->isClosed = 1;
}

static void mem_empty(FCGX_Stream *s, int do_close)
{
	(void)do_close;
	s->isClosed = 1;
	s->FCGI_errno = -1;
}

static void mem_init(struct mem_stream *m, int reader, const char *data)
{
	size_t n = data ? strlen(data) : 0;

	memset(m, 0, sizeof *m);
	memcpy(m->buf, data ? data : "", n);
	m->s.isReader = reader;
	m->s.fillBuffProc = mem_fill;
	m->s.emptyBuffProc = mem_empty;
	m->s.rdNext = m->s.stopUnget = m->buf;
	m->s.stop = reader ? m->buf + n : m->buf + sizeof m->buf - 1;
	m->s.wrNext = reader ? m->s.stop : m->buf;
}

/* What the handlers under test saw: calls, and the body's "name" (req->json is gone after the request). */
static int handler_calls;
static char handler_name[64];

static enum svc_err h_ok(struct svc_req *req, struct svc_resp *resp)
{
	const char *name = svc_json_str(req->json, "name");

	handler_calls++;
	snprintf(handler_name, sizeof handler_name, "%s", name ? name : "");
	return svc_resp_json(resp, 200, json_object_new_object());
}

static enum svc_err h_conflict(struct svc_req *req, struct svc_resp *resp)
{
	handler_calls++;
	return svc_resp_error(resp, SVC_E_CONFLICT, "name", "A thing with this name exists.");
}

static enum svc_err h_not_found(struct svc_req *req, struct svc_resp *resp)
{
	handler_calls++;
	return SVC_E_NOT_FOUND;
}

static const char *const test_kinds[] = { "a", "b", NULL };
static const struct svc_field test_fields[] = {
	{ "name", SVC_V_TEXT, SVC_F_REQUIRED, 1, 8, NULL },
	{ "kind", SVC_V_ENUM, 0, 0, 0, test_kinds },
	{ "limit", SVC_V_UINT, SVC_F_NULLABLE, 0, 100, NULL },
};
static const struct svc_body test_body = SVC_BODY(test_fields);

static const struct svc_route test_routes[] = {
	{ SVC_POST, "/api/things", h_ok, SVC_R_JSON, 0, &test_body },
	{ SVC_POST, "/api/things/conflict", h_conflict, SVC_R_JSON, 0, NULL },
	{ SVC_GET, "/api/things/missing", h_not_found, 0, 0, NULL },
	{ SVC_POST, "/api/internal/things/:id", h_ok, SVC_R_INTERNAL, 4096, NULL },
};

/*
 * Runs one request through handle() with `headers` (extra "NAME=value" FastCGI
 * parameters, NULL-terminated, or NULL) and writes the whole answer (status
 * line, headers, body) into out. Returns the number of handler calls.
 */
static int run(const char *method, const char *uri, const char *body, const char *const *headers, char *out,
	       size_t max)
{
	static struct mem_stream in, wr;
	char cl[64], m[64], u[256];
	char *env[16];
	size_t n = 0, len;
	FCGX_Request r;
	struct svc_ctx ctx;
	int before = handler_calls;

	snprintf(m, sizeof m, "REQUEST_METHOD=%s", method);
	snprintf(u, sizeof u, "REQUEST_URI=%s", uri);
	snprintf(cl, sizeof cl, "CONTENT_LENGTH=%zu", body ? strlen(body) : 0);
	env[n++] = m;
	env[n++] = u;
	env[n++] = cl;
	env[n++] = "REMOTE_ADDR=127.0.0.1";
	env[n++] = "CONTENT_TYPE=application/json";
	while (headers && *headers && n < 15)
		env[n++] = (char *)*headers++;
	env[n] = NULL;
	mem_init(&in, 1, body);
	mem_init(&wr, 0, NULL);
	memset(&r, 0, sizeof r);
	r.envp = env;
	r.in = &in.s;
	r.out = &wr.s;
	memset(&ctx, 0, sizeof ctx);
	ctx.name = "svc-test";
	ctx.cfg.internal_secret = TEST_SECRET;
	handler_name[0] = '\0';
	handle(&ctx, &r, test_routes, sizeof test_routes / sizeof test_routes[0]);
	len = (size_t)(wr.s.wrNext - wr.buf);
	if (len >= max)
		len = max - 1;
	memcpy(out, wr.buf, len);
	out[len] = '\0';
	return handler_calls - before;
}

/* The body of an answer (after the blank line), or "". */
static const char *answer_body(const char *out)
{
	const char *b = strstr(out, "\r\n\r\n");
	return b ? b + 4 : "";
}

static void test_http_dispatch_fields_missing(void)
{
	char out[4096];

	CU_ASSERT_EQUAL(run("POST", "/api/things", "{\"kind\":\"a\"}", NULL, out, sizeof out), 0);
	CU_ASSERT_EQUAL(strncmp(out, "Status: 400 Bad Request\r\n", 25), 0);
	CU_ASSERT_STRING_EQUAL(answer_body(out),
			       "{\"error\":\"validation_failed\",\"message\":\"name is required\",\"field\":\"name\"}");
	/* a body that is not an object never reaches the fields: 400 invalid_json */
	CU_ASSERT_EQUAL(run("POST", "/api/things", "[1]", NULL, out, sizeof out), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(answer_body(out), "\"error\":\"invalid_json\""));
}

static void test_http_dispatch_fields_wrong_type(void)
{
	char out[4096];

	CU_ASSERT_EQUAL(run("POST", "/api/things", "{\"name\":7}", NULL, out, sizeof out), 0);
	CU_ASSERT_STRING_EQUAL(answer_body(out),
			       "{\"error\":\"validation_failed\",\"message\":\"name must be a string\",\"field\":\"name\"}");
	CU_ASSERT_EQUAL(run("POST", "/api/things", "{\"name\":\"ok\",\"kind\":\"c\"}", NULL, out, sizeof out), 0);
	CU_ASSERT_STRING_EQUAL(answer_body(out), "{\"error\":\"validation_failed\",\"message\":"
			       "\"kind has a value that is not allowed\",\"field\":\"kind\"}");
	CU_ASSERT_EQUAL(run("POST", "/api/things", "{\"name\":\"ok\",\"limit\":101}", NULL, out, sizeof out), 0);
	CU_ASSERT_STRING_EQUAL(answer_body(out),
			       "{\"error\":\"validation_failed\",\"message\":\"limit is out of range\",\"field\":\"limit\"}");
	CU_ASSERT_EQUAL(run("POST", "/api/things", "{\"name\":\"123456789\"}", NULL, out, sizeof out), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(answer_body(out), "\"message\":\"name must be at most 8 characters\""));

	/* a body that matches reaches the handler, with unknown fields ignored */
	CU_ASSERT_EQUAL(run("POST", "/api/things", "{\"name\":\"ok\",\"kind\":\"b\",\"limit\":null,\"x\":[]}", NULL,
			    out, sizeof out), 1);
	CU_ASSERT_EQUAL(strncmp(out, "Status: 200 OK\r\n", 16), 0);
	CU_ASSERT_STRING_EQUAL(answer_body(out), "{}");
}

/* The three FastCGI parameters of a signed internal request. */
struct signed_headers {
	char ts[64], nonce[80], sig[128];
	const char *list[4];
};

/* Signs `body` for POST `path` at time `ts` (seconds) into h; h->list is the parameter list for run(). */
static void sign(const char *path, const char *body, int64_t ts, struct signed_headers *h)
{
	char sig[SVC_INTERNAL_SIG_MAX], nonce[SVC_INTERNAL_NONCE_LEN + 1];

	CU_ASSERT_EQUAL(svc_random_hex(nonce, SVC_INTERNAL_NONCE_LEN / 2), 0);
	CU_ASSERT_EQUAL(svc_internal_sign(TEST_SECRET, strlen(TEST_SECRET), "POST", path, ts, nonce, body, strlen(body),
					  sig), 0);
	snprintf(h->ts, sizeof h->ts, "HTTP_X_SVC_TIMESTAMP=%lld", (long long)ts);
	snprintf(h->nonce, sizeof h->nonce, "HTTP_X_SVC_NONCE=%s", nonce);
	snprintf(h->sig, sizeof h->sig, "HTTP_X_SVC_SIGNATURE=%s", sig);
	h->list[0] = h->ts;
	h->list[1] = h->nonce;
	h->list[2] = h->sig;
	h->list[3] = NULL;
}

static void test_http_dispatch_internal_signature(void)
{
	const char *path = "/api/internal/things/123e4567-e89b-42d3-a456-426614174000";
	const char *body = "{\"name\":\"signed\"}";
	const char *unauthorized = "{\"error\":\"unauthorized\",\"message\":\"Bad or missing internal signature.\"}";
	struct signed_headers h;
	char out[4096];
	int64_t now = svc_now_ms() / 1000;

	/* none, or one for another body, path or time: 401 and the handler never runs */
	CU_ASSERT_EQUAL(run("POST", path, body, NULL, out, sizeof out), 0);
	CU_ASSERT_EQUAL(strncmp(out, "Status: 401 Unauthorized\r\n", 26), 0);
	CU_ASSERT_STRING_EQUAL(answer_body(out), unauthorized);
	sign(path, "{\"name\":\"other\"}", now, &h);
	CU_ASSERT_EQUAL(run("POST", path, body, h.list, out, sizeof out), 0);
	CU_ASSERT_STRING_EQUAL(answer_body(out), unauthorized);
	sign("/api/internal/things/223e4567-e89b-42d3-a456-426614174000", body, now, &h);
	CU_ASSERT_EQUAL(run("POST", path, body, h.list, out, sizeof out), 0);
	CU_ASSERT_STRING_EQUAL(answer_body(out), unauthorized);
	sign(path, body, now - SVC_INTERNAL_WINDOW_SECS - 5, &h);
	CU_ASSERT_EQUAL(run("POST", path, body, h.list, out, sizeof out), 0);
	CU_ASSERT_STRING_EQUAL(answer_body(out), unauthorized);

	/* signed: the body is parsed for the handler, whatever the content type */
	sign(path, body, now, &h);
	CU_ASSERT_EQUAL(run("POST", path, body, h.list, out, sizeof out), 1);
	CU_ASSERT_EQUAL(strncmp(out, "Status: 200 OK\r\n", 16), 0);
	CU_ASSERT_STRING_EQUAL(handler_name, "signed");

	/* signed but not a JSON object: 400 invalid_json after the signature */
	sign(path, "[]", now, &h);
	CU_ASSERT_EQUAL(run("POST", path, "[]", h.list, out, sizeof out), 0);
	CU_ASSERT_STRING_EQUAL(answer_body(out),
			       "{\"error\":\"invalid_json\",\"message\":\"The body is not a JSON object.\"}");
}

static void test_http_dispatch_handler_error_is_json(void)
{
	char out[4096];

	/* the handler's field and message */
	CU_ASSERT_EQUAL(run("POST", "/api/things/conflict", "{}", NULL, out, sizeof out), 1);
	CU_ASSERT_EQUAL(strncmp(out, "Status: 409 Conflict\r\n", 22), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "Content-Type: application/json\r\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "X-Content-Type-Options: nosniff\r\n"));
	CU_ASSERT_STRING_EQUAL(answer_body(out), "{\"error\":\"conflict\",\"message\":\"A thing with this name exists.\","
			       "\"field\":\"name\"}");
	/* a bare svc_err: the default message of its code */
	CU_ASSERT_EQUAL(run("GET", "/api/things/missing", NULL, NULL, out, sizeof out), 1);
	CU_ASSERT_EQUAL(strncmp(out, "Status: 404 Not Found\r\n", 23), 0);
	CU_ASSERT_STRING_EQUAL(answer_body(out), "{\"error\":\"not_found\",\"message\":\"Not found.\"}");
}

/* An access token verified once is taken again from its exact bytes while its exp is ahead; never another token's. */
static void test_http_verified_token_cache(void)
{
	static const char secret[] = "0123456789abcdef0123456789abcdef-unit";
	static struct svc_ctx ctx; /* the caches are large: not on the stack */
	struct svc_auth_claims claims;
	char *tok = NULL, *other = NULL;
	int64_t now = 1900000000;
	size_t len;

	memset(&ctx, 0, sizeof ctx);
	ctx.cfg.jwt_secret = secret;
	ctx.cfg.jwt_secret_len = sizeof secret - 1;
	ctx.cfg.jwt_issuer = "svc";
	CU_ASSERT_EQUAL_FATAL(svc_auth_jwt_issue_session(secret, sizeof secret - 1, "svc", SVC_TOKEN_ACCESS,
							 "0b0f8c44-6a3c-4b7e-9a59-2f3a8f6c1d20", 2, NULL, NULL, now, 900, &tok), 0);
	len = strlen(tok);
	CU_ASSERT_EQUAL(verify_access(&ctx, tok, len, now, &claims), 0);
	CU_ASSERT_EQUAL(claims.gen, 2);
	CU_ASSERT_EQUAL(claims.exp, now + 900);
	/* the second time the signature is not checked again: even with another secret it passes */
	ctx.cfg.jwt_secret = "another-secret-another-secret-another-secret";
	ctx.cfg.jwt_secret_len = strlen(ctx.cfg.jwt_secret);
	memset(&claims, 0, sizeof claims);
	CU_ASSERT_EQUAL(verify_access(&ctx, tok, len, now + 899, &claims), 0);
	CU_ASSERT_STRING_EQUAL(claims.user_id, "0b0f8c44-6a3c-4b7e-9a59-2f3a8f6c1d20");
	/* but not once exp is reached, and never for other bytes (one character of the signature changed) */
	CU_ASSERT_EQUAL(verify_access(&ctx, tok, len, now + 900, &claims), SVC_E_UNAUTHORIZED);
	other = strdup(tok);
	CU_ASSERT_PTR_NOT_NULL_FATAL(other);
	other[len - 10] = other[len - 10] == 'A' ? 'B' : 'A';
	ctx.cfg.jwt_secret = secret;
	ctx.cfg.jwt_secret_len = sizeof secret - 1;
	CU_ASSERT_EQUAL(verify_access(&ctx, tok, len, now, &claims), 0);
	CU_ASSERT_EQUAL(verify_access(&ctx, other, len, now, &claims), SVC_E_UNAUTHORIZED);
	memcpy(other, tok, len);
	other[len - 1] = '\0'; /* a prefix of the cached token */
	CU_ASSERT_EQUAL(verify_access(&ctx, other, len - 1, now, &claims), SVC_E_UNAUTHORIZED);
	free(other);
	free(tok);
}

/* RFC 9110 §5.6.7: the three forms of one instant, and what is refused */
static void test_http_date_forms(void)
{
	char out[SVC_HTTP_DATE_LEN + 1];
	int64_t t = -1;

	svc_http_date_format(784111777, out);
	CU_ASSERT_STRING_EQUAL(out, "Sun, 06 Nov 1994 08:49:37 GMT");
	svc_http_date_format(0, out);
	CU_ASSERT_STRING_EQUAL(out, "Thu, 01 Jan 1970 00:00:00 GMT");
	svc_http_date_format(1709164800, out); /* a leap day */
	CU_ASSERT_STRING_EQUAL(out, "Thu, 29 Feb 2024 00:00:00 GMT");
	CU_ASSERT(svc_http_date_parse("Sun, 06 Nov 1994 08:49:37 GMT", &t) == 0 && t == 784111777);
	t = -1;
	CU_ASSERT(svc_http_date_parse("Sunday, 06-Nov-94 08:49:37 GMT", &t) == 0 && t == 784111777);
	t = -1;
	CU_ASSERT(svc_http_date_parse("Sun Nov  6 08:49:37 1994", &t) == 0 && t == 784111777);
	CU_ASSERT(svc_http_date_parse("Thu, 29 Feb 2024 00:00:00 GMT", &t) == 0 && t == 1709164800);
	CU_ASSERT(svc_http_date_parse("Wednesday, 02-Dec-26 14:00:00 GMT", &t) == 0 && t == 1796220000);
	t = 7;
	CU_ASSERT_EQUAL(svc_http_date_parse("Sun, 06 Nov 1994 08:49:37 GMT, Mon, 07 Nov 1994 08:49:37 GMT", &t),
			SVC_E_VALIDATION);
	CU_ASSERT_EQUAL(svc_http_date_parse("Sun, 06 Nov 1994 08:49:37 UTC", &t), SVC_E_VALIDATION);
	CU_ASSERT_EQUAL(svc_http_date_parse("sun, 06 nov 1994 08:49:37 GMT", &t), SVC_E_VALIDATION);
	CU_ASSERT_EQUAL(svc_http_date_parse("Sun, 6 Nov 1994 08:49:37 GMT", &t), SVC_E_VALIDATION);
	CU_ASSERT_EQUAL(svc_http_date_parse("Sun, 31 Nov 1994 08:49:37 GMT", &t), SVC_E_VALIDATION);
	CU_ASSERT_EQUAL(svc_http_date_parse("Thu, 29 Feb 2023 00:00:00 GMT", &t), SVC_E_VALIDATION);
	CU_ASSERT_EQUAL(svc_http_date_parse("Sun, 06 Nov 1994 24:00:00 GMT", &t), SVC_E_VALIDATION);
	CU_ASSERT_EQUAL(svc_http_date_parse("Sun, 06 Nov 1969 08:49:37 GMT", &t), SVC_E_VALIDATION);
	CU_ASSERT_EQUAL(svc_http_date_parse("Sun, 06 Nov 1994 08:49:37 GMT ", &t), SVC_E_VALIDATION);
	CU_ASSERT_EQUAL(svc_http_date_parse("Sun, 06 Nov 1994 08:49", &t), SVC_E_VALIDATION);
	CU_ASSERT_EQUAL(svc_http_date_parse("", &t), SVC_E_VALIDATION);
	CU_ASSERT_EQUAL(svc_http_date_parse(NULL, &t), SVC_E_VALIDATION);
	CU_ASSERT_EQUAL(t, 7); /* set only on success */
}

/* RFC 9110 §13.2.2: If-None-Match decides when present (weak comparison), else If-Modified-Since */
static void test_http_not_modified(void)
{
	const char *tag = "\"abc\"";
	int64_t lm = 784111777;

	CU_ASSERT_EQUAL(svc_http_not_modified(NULL, NULL, tag, lm), 0);
	CU_ASSERT_EQUAL(svc_http_not_modified("\"abc\"", NULL, tag, lm), 1);
	CU_ASSERT_EQUAL(svc_http_not_modified("W/\"abc\"", NULL, tag, lm), 1);
	CU_ASSERT_EQUAL(svc_http_not_modified("\"x\", \"abc\"", NULL, tag, lm), 1);
	CU_ASSERT_EQUAL(svc_http_not_modified("\"x\",W/\"abc\" ,\"y\"", NULL, tag, lm), 1);
	CU_ASSERT_EQUAL(svc_http_not_modified("*", NULL, tag, lm), 1);
	CU_ASSERT_EQUAL(svc_http_not_modified("\"abcd\"", NULL, tag, lm), 0);
	CU_ASSERT_EQUAL(svc_http_not_modified("\"ab\"", NULL, tag, lm), 0);
	CU_ASSERT_EQUAL(svc_http_not_modified("abc", NULL, tag, lm), 0);      /* no quotes: no entity-tag */
	CU_ASSERT_EQUAL(svc_http_not_modified("\"abc", NULL, tag, lm), 0);    /* unterminated */
	CU_ASSERT_EQUAL(svc_http_not_modified("\"abc\" x", NULL, tag, lm), 0);
	CU_ASSERT_EQUAL(svc_http_not_modified("", NULL, tag, lm), 0);
	/* If-None-Match present: If-Modified-Since is not looked at, even when it alone would match */
	CU_ASSERT_EQUAL(svc_http_not_modified("\"x\"", "Sun, 06 Nov 1994 08:49:37 GMT", tag, lm), 0);
	CU_ASSERT_EQUAL(svc_http_not_modified(NULL, "Sun, 06 Nov 1994 08:49:37 GMT", tag, lm), 1);
	CU_ASSERT_EQUAL(svc_http_not_modified(NULL, "Sun, 06 Nov 1994 09:00:00 GMT", tag, lm), 1);
	CU_ASSERT_EQUAL(svc_http_not_modified(NULL, "Sun, 06 Nov 1994 08:49:36 GMT", tag, lm), 0);
	CU_ASSERT_EQUAL(svc_http_not_modified(NULL, "Sun Nov  6 08:49:37 1994", tag, lm), 1);
	CU_ASSERT_EQUAL(svc_http_not_modified(NULL, "yesterday", tag, lm), 0);
	CU_ASSERT_EQUAL(svc_http_not_modified(NULL, "Sun, 06 Nov 1994 08:49:37 GMT", tag, 0), 0);
}

SVC_TEST_SUITE(http_suite)
{
	CU_pSuite s = CU_add_suite("http", NULL, NULL);
	CU_add_test(s, "test_http_match_params", test_http_match_params);
	CU_add_test(s, "test_http_percent_decoding", test_http_percent_decoding);
	CU_add_test(s, "test_http_query_and_cookies", test_http_query_and_cookies);
	CU_add_test(s, "test_http_header_injection_refused", test_http_header_injection_refused);
	CU_add_test(s, "test_http_methods_allowed", test_http_methods_allowed);
	CU_add_test(s, "test_http_dispatch_fields_missing", test_http_dispatch_fields_missing);
	CU_add_test(s, "test_http_dispatch_fields_wrong_type", test_http_dispatch_fields_wrong_type);
	CU_add_test(s, "test_http_dispatch_internal_signature", test_http_dispatch_internal_signature);
	CU_add_test(s, "test_http_dispatch_handler_error_is_json", test_http_dispatch_handler_error_is_json);
	CU_add_test(s, "test_http_verified_token_cache", test_http_verified_token_cache);
	CU_add_test(s, "test_http_date_forms", test_http_date_forms);
	CU_add_test(s, "test_http_not_modified", test_http_not_modified);
}
