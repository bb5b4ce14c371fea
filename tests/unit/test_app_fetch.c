/* test_app_fetch.c: unit tests of the apps' secrets and calls as declared (lib/project/app_fetch_decl.c, the "fetch" block of lib/project/app_decl.c): names, values, URLs, header templates, and a call's path kept under its URL. */
#include <stdio.h>
#include <string.h>

#include <CUnit/CUnit.h>

#include "core/err.h"
#include "project/app_decl.h"
#include "unit.h"

static void test_app_fetch_secret_names_and_values(void)
{
	char msg[200], big[SVC_APP_SECRET_MAX + 2];

	CU_ASSERT(svc_app_secret_name_valid("WEATHER_KEY"));
	CU_ASSERT(svc_app_secret_name_valid("_k9"));
	CU_ASSERT(!svc_app_secret_name_valid(""));
	CU_ASSERT(!svc_app_secret_name_valid("9KEY"));
	CU_ASSERT(!svc_app_secret_name_valid("A-B"));
	CU_ASSERT(!svc_app_secret_name_valid("A.B"));
	memset(big, 'A', 65);
	big[65] = '\0';
	CU_ASSERT(!svc_app_secret_name_valid(big));
	big[64] = '\0';
	CU_ASSERT(svc_app_secret_name_valid(big));
	CU_ASSERT_EQUAL(svc_app_secret_value_check("12345678", 8, msg, sizeof msg), 0);
	CU_ASSERT_EQUAL(svc_app_secret_value_check("1234567", 7, msg, sizeof msg), SVC_E_VALIDATION);
	CU_ASSERT_EQUAL(svc_app_secret_value_check("abcdefgh\r\nX: y", 14, msg, sizeof msg), SVC_E_VALIDATION);
	CU_ASSERT_EQUAL(svc_app_secret_value_check("abcd\tefgh", 9, msg, sizeof msg), SVC_E_VALIDATION);
	CU_ASSERT_EQUAL(svc_app_secret_value_check("abcd\xff\xfe" "efgh", 10, msg, sizeof msg), SVC_E_VALIDATION);
	memset(big, 'v', sizeof big);
	CU_ASSERT_EQUAL(svc_app_secret_value_check(big, SVC_APP_SECRET_MAX, msg, sizeof msg), 0);
	CU_ASSERT_EQUAL(svc_app_secret_value_check(big, SVC_APP_SECRET_MAX + 1, msg, sizeof msg), SVC_E_VALIDATION);
	CU_ASSERT(strstr(msg, "vvvv") == NULL); /* the message never quotes the value */
}

static void test_app_fetch_url_normalised_or_refused(void)
{
	static const char *const bad[] = {
		"ftp://example.com/", "https://", "https:///x", "https://u:p@example.com/", "https://example.com/a?q=1",
		"https://example.com/#f", "https://example.com/a/../b/", "https://example.com/./b", "https://example.com//b",
		"https://example.com/a%2e/", "https://example.com:0/", "https://example.com:70000/", "https://exa mple.com/",
		"https://-example.com/", "https://example.com/a\\b", "javascript:alert(1)", "https://[zz]/",
	};
	struct svc_app_fetch f;
	char why[200];
	size_t i;

	memset(&f, 0, sizeof f);
	CU_ASSERT_EQUAL(svc_app_fetch_url_set(&f, "HTTPS://API.Example.com:8443/v1", why, sizeof why), 0);
	CU_ASSERT_STRING_EQUAL(f.url, "https://api.example.com:8443/v1/");
	CU_ASSERT_EQUAL(f.prefix_len, strlen("https://api.example.com:8443"));
	CU_ASSERT_EQUAL(f.https, 1);
	CU_ASSERT_EQUAL(svc_app_fetch_url_set(&f, "http://127.0.0.7:9/", why, sizeof why), 0);
	CU_ASSERT_EQUAL(f.https, 0);
	CU_ASSERT_EQUAL(svc_app_fetch_url_set(&f, "https://[::1]/", why, sizeof why), 0);
	CU_ASSERT_EQUAL(svc_app_fetch_url_set(&f, "https://example.com", why, sizeof why), 0);
	CU_ASSERT_STRING_EQUAL(f.url, "https://example.com/");
	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		int err = svc_app_fetch_url_set(&f, bad[i], why, sizeof why);
		if (err != SVC_E_VALIDATION)
			printf("\n  accepted: %s", bad[i]);
		CU_ASSERT_EQUAL(err, SVC_E_VALIDATION);
	}
}

static void test_app_fetch_header_templates(void)
{
	char why[200];

	CU_ASSERT_EQUAL(svc_app_fetch_header_value_check("Bearer {{secrets.WEATHER_KEY}}", why, sizeof why), 0);
	CU_ASSERT_EQUAL(svc_app_fetch_header_value_check("{{secrets.A}}:{{secrets.B}}", why, sizeof why), 0);
	CU_ASSERT_EQUAL(svc_app_fetch_header_value_check("plain", why, sizeof why), 0);
	CU_ASSERT_EQUAL(svc_app_fetch_header_value_check("{{secret.A}}", why, sizeof why), SVC_E_VALIDATION);
	CU_ASSERT_EQUAL(svc_app_fetch_header_value_check("{{secrets.A", why, sizeof why), SVC_E_VALIDATION);
	CU_ASSERT_EQUAL(svc_app_fetch_header_value_check("{{secrets.}}", why, sizeof why), SVC_E_VALIDATION);
	CU_ASSERT_EQUAL(svc_app_fetch_header_value_check("{{secrets.A-B}}", why, sizeof why), SVC_E_VALIDATION);
	CU_ASSERT_EQUAL(svc_app_fetch_header_value_check("{{env.HOME}}", why, sizeof why), SVC_E_VALIDATION);
	CU_ASSERT_EQUAL(svc_app_fetch_header_value_check("a\r\nX: b", why, sizeof why), SVC_E_VALIDATION);
}

/* Every path either ends up under the URL or is refused; the refusals the issue names are refused. */
static void test_app_fetch_path_stays_under_the_url(void)
{
	static const char *const bad[] = {
		"..", "../x", "a/../../x", "a/..", ".", "./x", "%2e%2e/x", "%2E%2E/x", ".%2e/x", "%2e/x", "a%2fb", "a%2F..",
		"a%5cb", "..\\x", "//evil.example/x", "a//b", "a?x=1", "a#f", "a b", "%252e%252e/x", "%zz", "%4", "a\x01",
		"\xc3\xa9", "%00",
	};
	static const char *const good[][2] = {
		{ "", "https://api.example.com/v1/" },
		{ "/", "https://api.example.com/v1/" },
		{ "forecast", "https://api.example.com/v1/forecast" },
		{ "/a/b.json", "https://api.example.com/v1/a/b.json" },
		{ "a/%41b", "https://api.example.com/v1/a/Ab" },
		{ "a/%3a%20b", "https://api.example.com/v1/a/%3A%20b" },
		{ "...", "https://api.example.com/v1/..." },
		{ "a/.b/", "https://api.example.com/v1/a/.b/" },
	};
	struct svc_app_fetch f;
	char out[4096], why[200];
	size_t i;

	memset(&f, 0, sizeof f);
	CU_ASSERT_EQUAL_FATAL(svc_app_fetch_url_set(&f, "https://api.example.com/v1/", why, sizeof why), 0);
	for (i = 0; i < sizeof good / sizeof good[0]; i++) {
		CU_ASSERT_EQUAL(svc_app_fetch_path(&f, good[i][0], out, sizeof out, why, sizeof why), 0);
		CU_ASSERT_STRING_EQUAL(out, good[i][1]);
	}
	CU_ASSERT_EQUAL(svc_app_fetch_path(&f, NULL, out, sizeof out, why, sizeof why), 0);
	CU_ASSERT_STRING_EQUAL(out, f.url);
	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		int err = svc_app_fetch_path(&f, bad[i], out, sizeof out, why, sizeof why);
		if (err != SVC_E_FORBIDDEN)
			printf("\n  accepted path: %s -> %s", bad[i], out);
		CU_ASSERT_EQUAL(err, SVC_E_FORBIDDEN);
	}
	memset(out, 'a', 3000);
	out[3000] = '\0';
	{
		char path[3001], res[8192];
		memcpy(path, out, sizeof path);
		CU_ASSERT_EQUAL(svc_app_fetch_path(&f, path, res, sizeof res, why, sizeof why), SVC_E_TOO_LARGE);
		CU_ASSERT_EQUAL(svc_app_fetch_path(&f, "abc", res, 20, why, sizeof why), SVC_E_TOO_LARGE);
	}
}

static void test_app_fetch_declared_calls_parse(void)
{
	const char *text = "{\"collections\": {},\n"
			   " \"fetch\": {\"weather\": {\"url\": \"https://api.example.com/v1/\",\n"
			   "   \"headers\": {\"Authorization\": \"Bearer {{secrets.WEATHER_KEY}}\"},\n"
			   "   \"methods\": [\"GET\", \"POST\"], \"rule\": \"public\"},\n"
			   "  \"plain\": {\"url\": \"https://example.org\"}}}";
	struct svc_app_decl *d = NULL, *again = NULL;
	const struct svc_app_fetch *f;
	char msg[512];

	CU_ASSERT_EQUAL_FATAL(svc_app_decl_parse(text, strlen(text), &d, msg, sizeof msg), 0);
	CU_ASSERT_EQUAL(d->nfetches, 2);
	f = svc_app_decl_fetch(d, "weather");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	CU_ASSERT_EQUAL(f->methods, SVC_APP_FETCH_GET | SVC_APP_FETCH_POST);
	CU_ASSERT_EQUAL(f->rule, SVC_APP_PUBLIC);
	CU_ASSERT_EQUAL(f->nheaders, 1);
	CU_ASSERT_STRING_EQUAL(f->headers[0].value, "Bearer {{secrets.WEATHER_KEY}}");
	f = svc_app_decl_fetch(d, "plain");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	CU_ASSERT_EQUAL(f->methods, SVC_APP_FETCH_GET);
	CU_ASSERT_EQUAL(f->rule, SVC_APP_SIGNED_IN); /* no rule: user */
	CU_ASSERT_PTR_NULL(svc_app_decl_fetch(d, "nope"));
	svc_app_decl_free(d);
	/* line-numbered refusals */
	text = "{\"collections\": {},\n \"fetch\": {\"w\": {\n  \"url\": \"ftp://x/\"}}}";
	CU_ASSERT_EQUAL(svc_app_decl_parse(text, strlen(text), &again, msg, sizeof msg), SVC_E_VALIDATION);
	CU_ASSERT(strstr(msg, "line 3:") && strstr(msg, "fetch.w.url"));
	text = "{\"collections\": {},\n \"fetch\": {\"w\": {\"url\": \"https://x/\",\n  \"rule\": \"owner\"}}}";
	CU_ASSERT_EQUAL(svc_app_decl_parse(text, strlen(text), &again, msg, sizeof msg), SVC_E_VALIDATION);
	CU_ASSERT(strstr(msg, "line 3:") && strstr(msg, "fetch.w.rule"));
	text = "{\"collections\": {}, \"fetch\": {\"w\": {\"url\": \"https://x/\", \"headers\": {\"Host\": \"y\"}}}}";
	CU_ASSERT_EQUAL(svc_app_decl_parse(text, strlen(text), &again, msg, sizeof msg), SVC_E_VALIDATION);
	text = "{\"collections\": {}, \"fetch\": {\"w\": {\"headers\": {}}}}";
	CU_ASSERT_EQUAL(svc_app_decl_parse(text, strlen(text), &again, msg, sizeof msg), SVC_E_VALIDATION);
	CU_ASSERT(strstr(msg, "url is required") != NULL);
	text = "{\"collections\": {}, \"fetch\": []}";
	CU_ASSERT_EQUAL(svc_app_decl_parse(text, strlen(text), &again, msg, sizeof msg), SVC_E_VALIDATION);
	CU_ASSERT_PTR_NULL(again);
}

SVC_TEST_SUITE(app_fetch_suite)
{
	CU_pSuite s = CU_add_suite("app_fetch", NULL, NULL);

	CU_add_test(s, "test_app_fetch_secret_names_and_values", test_app_fetch_secret_names_and_values);
	CU_add_test(s, "test_app_fetch_url_normalised_or_refused", test_app_fetch_url_normalised_or_refused);
	CU_add_test(s, "test_app_fetch_header_templates", test_app_fetch_header_templates);
	CU_add_test(s, "test_app_fetch_path_stays_under_the_url", test_app_fetch_path_stays_under_the_url);
	CU_add_test(s, "test_app_fetch_declared_calls_parse", test_app_fetch_declared_calls_parse);
}
