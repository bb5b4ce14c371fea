/* test_integ.c: unit tests of lib/integ/integ.c (integration ids, the stored comma lists, URL hosts, the client id hint, URL parameters) and of the agent's credential templating and scrubbing (lib/integ/inject.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/CUnit.h>

#include "integ/inject.h"
#include "core/err.h"
#include "integ/integ.h"
#include "unit.h"

static void test_integ_id_valid(void)
{
	char long_id[80];

	CU_ASSERT(svc_integ_id_valid("slack"));
	CU_ASSERT(svc_integ_id_valid("google-drive"));
	CU_ASSERT(svc_integ_id_valid("a.b_c-1"));
	CU_ASSERT(!svc_integ_id_valid(""));
	CU_ASSERT(!svc_integ_id_valid(NULL));
	CU_ASSERT(!svc_integ_id_valid("-slack"));
	CU_ASSERT(!svc_integ_id_valid("Slack"));
	CU_ASSERT(!svc_integ_id_valid("sl ack"));
	CU_ASSERT(!svc_integ_id_valid("../etc"));
	memset(long_id, 'a', sizeof long_id - 1);
	long_id[sizeof long_id - 1] = '\0';
	CU_ASSERT(!svc_integ_id_valid(long_id));
	long_id[SVC_INTEG_ID_MAX] = '\0';
	CU_ASSERT(svc_integ_id_valid(long_id));
}

static void test_integ_lists(void)
{
	struct json_object *a;

	CU_ASSERT(svc_integ_list_has(",oauth2,secret_text,", "oauth2"));
	CU_ASSERT(svc_integ_list_has(",oauth2,secret_text,", "secret_text"));
	CU_ASSERT(!svc_integ_list_has(",oauth2,secret_text,", "secret"));
	CU_ASSERT(!svc_integ_list_has(",oauth2,secret_text,", "auth2"));
	CU_ASSERT(!svc_integ_list_has(NULL, "oauth2"));
	CU_ASSERT(!svc_integ_list_has("", "oauth2"));
	a = svc_integ_list_json(",MARKETING,SALES_AND_CRM,");
	CU_ASSERT_STRING_EQUAL(json_object_to_json_string_ext(a, JSON_C_TO_STRING_PLAIN), "[\"MARKETING\",\"SALES_AND_CRM\"]");
	json_object_put(a);
	a = svc_integ_list_json("");
	CU_ASSERT_EQUAL(json_object_array_length(a), 0);
	json_object_put(a);
}

static void test_integ_url_host(void)
{
	char h[64];

	CU_ASSERT(svc_integ_url_host("https://API.Slack.com/api/x?y=1", h, sizeof h) == 0);
	CU_ASSERT_STRING_EQUAL(h, "api.slack.com");
	CU_ASSERT(svc_integ_url_host("http://user:pw@127.0.0.7:8080/x", h, sizeof h) == 0);
	CU_ASSERT_STRING_EQUAL(h, "127.0.0.7");
	CU_ASSERT(svc_integ_url_host("https://example.com", h, sizeof h) == 0);
	CU_ASSERT_STRING_EQUAL(h, "example.com");
	CU_ASSERT(svc_integ_url_host("ftp://example.com/", h, sizeof h) == SVC_E_VALIDATION);
	CU_ASSERT(svc_integ_url_host("https:///x", h, sizeof h) == SVC_E_VALIDATION);
	CU_ASSERT(svc_integ_url_host("https://exa mple.com/", h, sizeof h) == SVC_E_VALIDATION);
	CU_ASSERT(svc_integ_url_host("https://[::1]/", h, sizeof h) == SVC_E_VALIDATION);
	CU_ASSERT(svc_integ_url_host(NULL, h, sizeof h) == SVC_E_VALIDATION);
	CU_ASSERT(svc_integ_url_host("https://a-very-long-host-name.example.com/", h, 8) == SVC_E_VALIDATION);
}

static void test_integ_client_hint(void)
{
	char h[32];

	svc_integ_client_hint("client-id-abcd1234", h, sizeof h);
	CU_ASSERT_STRING_EQUAL(h, "1234");
	svc_integ_client_hint("ab", h, sizeof h);
	CU_ASSERT_STRING_EQUAL(h, "ab");
	svc_integ_client_hint("id-\xc3\xa9t\xc3\xa9x", h, sizeof h); /* "id-étéx": four characters, six bytes */
	CU_ASSERT_STRING_EQUAL(h, "\xc3\xa9t\xc3\xa9x");
}

static void test_integ_url_param(void)
{
	struct svc_buf b;

	svc_buf_init(&b, 64);
	CU_ASSERT(svc_integ_url_param(&b, "redirect_uri", "http://h/a b?c=d&e") == 0);
	CU_ASSERT_STRING_EQUAL(svc_buf_str(&b), "redirect_uri=http%3A%2F%2Fh%2Fa%20b%3Fc%3Dd%26e");
	svc_buf_reset(&b);
	CU_ASSERT(svc_integ_url_param(&b, "s", "A-z0._~") == 0);
	CU_ASSERT_STRING_EQUAL(svc_buf_str(&b), "s=A-z0._~");
	svc_buf_dispose(&b);
	svc_buf_init(&b, 8);
	CU_ASSERT(svc_integ_url_param(&b, "state", "0123456789") == SVC_E_TOO_LARGE);
	svc_buf_dispose(&b);
}

/* A credential of `kind` holding `secret` (borrowed: never disposed here). */
static struct svc_integ_cred cred_of(int kind, const char *secret)
{
	struct svc_integ_cred c;

	memset(&c, 0, sizeof c);
	c.kind = kind;
	c.secret = (char *)secret;
	c.secret_len = strlen(secret);
	return c;
}

/* Scrubs `text` with `in` and compares with `want`. */
static int scrubbed_is(const struct svc_integ_inject *in, const char *text, size_t max, const char *want)
{
	struct svc_buf b;
	int ok;

	svc_buf_init(&b, max);
	if (svc_buf_adds(&b, text) < 0)
		return 0;
	ok = svc_integ_scrub(in, &b) == 0 && strcmp(svc_buf_str(&b), want) == 0;
	if (!ok)
		fprintf(stderr, "scrubbed: %s\n", svc_buf_str(&b));
	svc_buf_dispose(&b);
	return ok;
}

static void test_integ_inject_basic(void)
{
	struct svc_integ_cred c = cred_of(SVC_INTEG_CRED_BASIC, "{\"username\":\"alice-user\",\"password\":\"p@ss/w rd\"}");
	struct svc_integ_inject in;

	/* base64("alice-user:p@ss/w rd") = YWxpY2UtdXNlcjpwQHNzL3cgcmQ= */
	CU_ASSERT_FATAL(svc_integ_inject(&c, &in) == 0);
	CU_ASSERT_EQUAL(in.nheaders, 1);
	CU_ASSERT_STRING_EQUAL(in.headers[0], "Authorization: Basic YWxpY2UtdXNlcjpwQHNzL3cgcmQ=");
	CU_ASSERT_EQUAL(in.query.len, 0);
	/* the Basic value, the password raw, percent-encoded (both cases, form '+'), JSON-escaped, Base64 */
	CU_ASSERT(scrubbed_is(&in, "a YWxpY2UtdXNlcjpwQHNzL3cgcmQ= b", 1024, "a [credential] b"));
	CU_ASSERT(scrubbed_is(&in, "{\"auth\":\"YWxpY2UtdXNlcjpwQHNzL3cgcmQ\"}", 1024, "{\"auth\":\"[credential]\"}"));
	CU_ASSERT(scrubbed_is(&in, "pw=p@ss/w rd&e=p%40ss%2Fw%20rd&l=p%40ss%2fw%20rd&f=p%40ss%2Fw+rd", 1024,
			      "pw=[credential]&e=[credential]&l=[credential]&f=[credential]"));
	CU_ASSERT(scrubbed_is(&in, "\"p@ss\\/w rd\" cEBzcy93IHJk alice-user", 1024, "\"[credential]\" [credential] [credential]"));
	CU_ASSERT(scrubbed_is(&in, "nothing here", 1024, "nothing here"));
	svc_integ_inject_dispose(&in);
	c = cred_of(SVC_INTEG_CRED_BASIC, "{\"username\":\"a:b\",\"password\":\"x\"}");
	CU_ASSERT(svc_integ_inject(&c, &in) == SVC_E_VALIDATION);
	svc_integ_inject_dispose(&in);
	c = cred_of(SVC_INTEG_CRED_BASIC, "not json");
	CU_ASSERT(svc_integ_inject(&c, &in) == SVC_E_INTERNAL);
	svc_integ_inject_dispose(&in);
}

static void test_integ_inject_custom(void)
{
	struct svc_integ_cred c = cred_of(SVC_INTEG_CRED_CUSTOM,
					  "{\"header:X-Api-Token\":\"hdr-secret-1\",\"query:api_key\":\"q y&z/secret\","
					  "\"token\":\"tok-secret-2\",\"note\":\"not-sent-value\",\"header:bad name\":\"x\"}");
	struct svc_integ_inject in;
	size_t i;
	int h = 0, a = 0;

	CU_ASSERT_FATAL(svc_integ_inject(&c, &in) == 0);
	CU_ASSERT_EQUAL(in.nheaders, 2);
	for (i = 0; i < in.nheaders; i++) {
		h += strcmp(in.headers[i], "X-Api-Token: hdr-secret-1") == 0;
		a += strcmp(in.headers[i], "Authorization: Bearer tok-secret-2") == 0;
	}
	CU_ASSERT(h == 1 && a == 1);
	CU_ASSERT_STRING_EQUAL(svc_buf_str(&in.query), "api_key=q%20y%26z%2Fsecret");
	CU_ASSERT(scrubbed_is(&in, "hdr-secret-1|q%20y%26z%2Fsecret|q+y%26z%2Fsecret|dG9rLXNlY3JldC0y|not-sent-value", 1024,
			      "[credential]|[credential]|[credential]|[credential]|not-sent-value"));
	svc_integ_inject_dispose(&in);
	c = cred_of(SVC_INTEG_CRED_CUSTOM, "{\"header:X-K\":\"a\\r\\nHost: evil\"}");
	CU_ASSERT(svc_integ_inject(&c, &in) == SVC_E_VALIDATION);
	svc_integ_inject_dispose(&in);
	c = cred_of(SVC_INTEG_CRED_CUSTOM, "{\"query:k\":\"a\\u0000b-secret-x\"}");
	CU_ASSERT(svc_integ_inject(&c, &in) == SVC_E_VALIDATION);
	svc_integ_inject_dispose(&in);
}

static void test_integ_scrub_short_and_bounded(void)
{
	struct svc_integ_cred c = cred_of(SVC_INTEG_CRED_SECRET, "nine-char");
	struct svc_integ_inject in;
	struct svc_buf b;

	/* a secret shorter than the mark: the answer grows, within its maximum (the old in-place scrub wrote past it) */
	CU_ASSERT_FATAL(svc_integ_inject(&c, &in) == 0);
	CU_ASSERT_STRING_EQUAL(in.headers[0], "Authorization: Bearer nine-char");
	CU_ASSERT(scrubbed_is(&in, "nine-charnine-char", 64, "[credential][credential]"));
	svc_buf_init(&b, 20);
	CU_ASSERT_FATAL(svc_buf_adds(&b, "nine-charnine-char") == 0);
	CU_ASSERT(svc_integ_scrub(&in, &b) == SVC_E_TOO_LARGE);
	CU_ASSERT_EQUAL(b.len, 0); /* nothing unscrubbed is left */
	svc_buf_dispose(&b);
	svc_integ_inject_dispose(&in);
	/* shorter than SVC_INTEG_SCRUB_MIN: sent, not scrubbed */
	c = cred_of(SVC_INTEG_CRED_USER, "short");
	CU_ASSERT_FATAL(svc_integ_inject(&c, &in) == 0);
	CU_ASSERT_EQUAL(in.nsecrets, 0);
	CU_ASSERT(scrubbed_is(&in, "short", 64, "short"));
	svc_integ_inject_dispose(&in);
	c = cred_of(SVC_INTEG_CRED_NONE, "");
	CU_ASSERT(svc_integ_inject(&c, &in) == 0 && in.nheaders == 0 && in.nsecrets == 0);
	svc_integ_inject_dispose(&in);
}

SVC_TEST_SUITE(integ_suite)
{
	CU_pSuite s = CU_add_suite("integ", NULL, NULL);

	CU_add_test(s, "test_integ_id_valid", test_integ_id_valid);
	CU_add_test(s, "test_integ_lists", test_integ_lists);
	CU_add_test(s, "test_integ_url_host", test_integ_url_host);
	CU_add_test(s, "test_integ_client_hint", test_integ_client_hint);
	CU_add_test(s, "test_integ_url_param", test_integ_url_param);
	CU_add_test(s, "test_integ_inject_basic", test_integ_inject_basic);
	CU_add_test(s, "test_integ_inject_custom", test_integ_inject_custom);
	CU_add_test(s, "test_integ_scrub_short_and_bounded", test_integ_scrub_short_and_bounded);
}
