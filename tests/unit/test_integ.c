/* test_integ.c: unit tests of lib/project/integ.c: integration ids, the stored comma lists, URL hosts, the client id hint, URL parameters. */
#include <stdlib.h>
#include <string.h>

#include <CUnit/CUnit.h>

#include "core/err.h"
#include "project/integ.h"
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

SVC_TEST_SUITE(integ_suite)
{
	CU_pSuite s = CU_add_suite("integ", NULL, NULL);

	CU_add_test(s, "test_integ_id_valid", test_integ_id_valid);
	CU_add_test(s, "test_integ_lists", test_integ_lists);
	CU_add_test(s, "test_integ_url_host", test_integ_url_host);
	CU_add_test(s, "test_integ_client_hint", test_integ_client_hint);
	CU_add_test(s, "test_integ_url_param", test_integ_url_param);
}
