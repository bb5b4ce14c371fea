/* test_http.c: the router's path matching, query and cookie parsing, and header safety (lib/http.c). */
#include <CUnit/CUnit.h>

#include "unit.h"

/* The router's parsers are static: include the module (STYLE.md "Tests"). */
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

SVC_TEST_SUITE(http_suite)
{
	CU_pSuite s = CU_add_suite("http", NULL, NULL);
	CU_add_test(s, "test_http_match_params", test_http_match_params);
	CU_add_test(s, "test_http_percent_decoding", test_http_percent_decoding);
	CU_add_test(s, "test_http_query_and_cookies", test_http_query_and_cookies);
	CU_add_test(s, "test_http_header_injection_refused", test_http_header_injection_refused);
	CU_add_test(s, "test_http_methods_allowed", test_http_methods_allowed);
}
