/* test_auth_client.c: CUnit suites auth_client (addresses, X-Forwarded-For, lists) and auth_config (settings, rate-limit syntax). */
#include <stdlib.h>
#include <string.h>

#include "auth/auth.h"
#include "core/config.h"
#include "core/err.h"
#include "unit.h"

static void test_auth_client_list_matches_addresses_and_blocks(void)
{
	CU_ASSERT_EQUAL(svc_auth_addr_in_list("127.0.0.1", "127.0.0.1"), 1);
	CU_ASSERT_EQUAL(svc_auth_addr_in_list("127.0.0.2", "127.0.0.1"), 0);
	CU_ASSERT_EQUAL(svc_auth_addr_in_list("10.20.30.40", "192.168.0.0/16, 10.0.0.0/8"), 1);
	CU_ASSERT_EQUAL(svc_auth_addr_in_list("11.0.0.1", "10.0.0.0/8"), 0);
	CU_ASSERT_EQUAL(svc_auth_addr_in_list("10.0.0.129", "10.0.0.128/25"), 1);
	CU_ASSERT_EQUAL(svc_auth_addr_in_list("10.0.0.127", "10.0.0.128/25"), 0);
	CU_ASSERT_EQUAL(svc_auth_addr_in_list("8.8.8.8", "0.0.0.0/0"), 1);
	CU_ASSERT_EQUAL(svc_auth_addr_in_list("::1", "127.0.0.1 ::1"), 1);
	CU_ASSERT_EQUAL(svc_auth_addr_in_list("2001:db8::5", "2001:db8::/32"), 1);
	CU_ASSERT_EQUAL(svc_auth_addr_in_list("2001:db9::5", "2001:db8::/32"), 0);
	/* IPv4-mapped IPv6 is the same address as IPv4 */
	CU_ASSERT_EQUAL(svc_auth_addr_in_list("::ffff:10.1.2.3", "10.0.0.0/8"), 1);
	CU_ASSERT_EQUAL(svc_auth_addr_in_list("10.1.2.3", "::ffff:10.1.2.3"), 1);
	/* malformed: never a match */
	CU_ASSERT_EQUAL(svc_auth_addr_in_list("not-an-ip", "0.0.0.0/0"), 0);
	CU_ASSERT_EQUAL(svc_auth_addr_in_list("", "0.0.0.0/0"), 0);
	CU_ASSERT_EQUAL(svc_auth_addr_in_list(NULL, "0.0.0.0/0"), 0);
	CU_ASSERT_EQUAL(svc_auth_addr_in_list("1.2.3.4", "garbage, 1.2.3.0/33"), 0);
	CU_ASSERT_EQUAL(svc_auth_addr_in_list("1.2.3.4", ""), 0);
}

static void test_auth_client_list_validity(void)
{
	CU_ASSERT_EQUAL(svc_auth_addr_list_valid(""), 1);
	CU_ASSERT_EQUAL(svc_auth_addr_list_valid("127.0.0.1,::1, 10.0.0.0/8 fd00::/8"), 1);
	CU_ASSERT_EQUAL(svc_auth_addr_list_valid("1.2.3.4/33"), 0);
	CU_ASSERT_EQUAL(svc_auth_addr_list_valid("::1/129"), 0);
	CU_ASSERT_EQUAL(svc_auth_addr_list_valid("1.2.3.4/"), 0);
	CU_ASSERT_EQUAL(svc_auth_addr_list_valid("1.2.3.4/-1"), 0);
	CU_ASSERT_EQUAL(svc_auth_addr_list_valid("localhost"), 0);
	CU_ASSERT_EQUAL(svc_auth_addr_list_valid("1.2.3.4, example.org"), 0);
}

static void test_auth_client_forwarded_for_only_from_trusted_proxies(void)
{
	char out[SVC_ADDR_MAX];

	/* no trusted proxies: the header is ignored */
	svc_auth_client_addr("203.0.113.5", "198.51.100.1", "", out, sizeof out);
	CU_ASSERT_STRING_EQUAL(out, "203.0.113.5");
	/* a remote that is not trusted: ignored too */
	svc_auth_client_addr("203.0.113.5", "198.51.100.1", "127.0.0.1", out, sizeof out);
	CU_ASSERT_STRING_EQUAL(out, "203.0.113.5");
	/* trusted: the nearest hop that is not a proxy */
	svc_auth_client_addr("127.0.0.1", "198.51.100.1", "127.0.0.1", out, sizeof out);
	CU_ASSERT_STRING_EQUAL(out, "198.51.100.1");
	svc_auth_client_addr("127.0.0.1", "6.6.6.6, 198.51.100.1, 10.0.0.2", "127.0.0.1, 10.0.0.0/8", out, sizeof out);
	CU_ASSERT_STRING_EQUAL(out, "198.51.100.1");   /* a client-chosen 6.6.6.6 further left is not believed */
	svc_auth_client_addr("127.0.0.1", " 2001:db8::7 ", "127.0.0.1", out, sizeof out);
	CU_ASSERT_STRING_EQUAL(out, "2001:db8::7");
	/* every hop trusted: the leftmost */
	svc_auth_client_addr("127.0.0.1", "10.0.0.3, 10.0.0.2", "127.0.0.1, 10.0.0.0/8", out, sizeof out);
	CU_ASSERT_STRING_EQUAL(out, "10.0.0.3");
	/* garbage stops the walk at the last good hop */
	svc_auth_client_addr("127.0.0.1", "198.51.100.1, evil", "127.0.0.1", out, sizeof out);
	CU_ASSERT_STRING_EQUAL(out, "127.0.0.1");
	svc_auth_client_addr("127.0.0.1", "evil, 10.0.0.2", "127.0.0.1, 10.0.0.0/8", out, sizeof out);
	CU_ASSERT_STRING_EQUAL(out, "10.0.0.2");
	svc_auth_client_addr("127.0.0.1", ",,", "127.0.0.1", out, sizeof out);
	CU_ASSERT_STRING_EQUAL(out, "127.0.0.1");
	svc_auth_client_addr("127.0.0.1", NULL, "127.0.0.1", out, sizeof out);
	CU_ASSERT_STRING_EQUAL(out, "127.0.0.1");
	/* no remote address at all */
	svc_auth_client_addr(NULL, "1.2.3.4", "127.0.0.1", out, sizeof out);
	CU_ASSERT_STRING_EQUAL(out, "-");
	svc_auth_client_addr("", NULL, "", out, sizeof out);
	CU_ASSERT_STRING_EQUAL(out, "-");
	/* an output buffer too small for the address: "-", never a cut address */
	svc_auth_client_addr("203.0.113.5", NULL, "", out, 8);
	CU_ASSERT_STRING_EQUAL(out, "-");
}

static void test_auth_config_rate_rule_syntax(void)
{
	struct svc_rate_rule r;

	CU_ASSERT_EQUAL(svc_rate_rule_parse("10/1m", &r), 0);
	CU_ASSERT_EQUAL(r.limit, 10);
	CU_ASSERT_EQUAL(r.window_secs, 60);
	CU_ASSERT_EQUAL(svc_rate_rule_parse("5/15m", &r), 0);
	CU_ASSERT_EQUAL(r.limit, 5);
	CU_ASSERT_EQUAL(r.window_secs, 900);
	CU_ASSERT_EQUAL(svc_rate_rule_parse("3/1h", &r), 0);
	CU_ASSERT_EQUAL(r.window_secs, 3600);
	CU_ASSERT_EQUAL(svc_rate_rule_parse("0", &r), 0);
	CU_ASSERT_EQUAL(r.limit, 0);
	CU_ASSERT_EQUAL(svc_rate_rule_parse("10", &r), SVC_E_VALIDATION);
	CU_ASSERT_EQUAL(svc_rate_rule_parse("/1m", &r), SVC_E_VALIDATION);
	CU_ASSERT_EQUAL(svc_rate_rule_parse("x/1m", &r), SVC_E_VALIDATION);
	CU_ASSERT_EQUAL(svc_rate_rule_parse("10/", &r), SVC_E_VALIDATION);
	CU_ASSERT_EQUAL(svc_rate_rule_parse("10/0", &r), SVC_E_VALIDATION);
	CU_ASSERT_EQUAL(svc_rate_rule_parse("-1/1m", &r), SVC_E_VALIDATION);
	CU_ASSERT_EQUAL(svc_rate_rule_parse("10/1w", &r), SVC_E_VALIDATION);
	CU_ASSERT_EQUAL(svc_rate_rule_parse(NULL, &r), SVC_E_VALIDATION);
}

/*
 * Loads the settings (svc_config_load, then svc_auth_config_load) from the environment alone, with
 * base_url https://svc.example/api. Returns the first error, its message in err.
 */
static int load_both(struct svc_auth_config *a, char *err, size_t errmax)
{
	struct svc_config c;
	char *saved = getenv("SVC_CONFIG") ? strdup(getenv("SVC_CONFIG")) : NULL;
	int rc, had_secret = getenv("JWT_SECRET") != NULL, had_dir = getenv("SVC_DATA_DIR") != NULL;

	unsetenv("SVC_CONFIG");
	setenv("JWT_SECRET", "0123456789abcdef0123456789abcdef", 0);
	setenv("SVC_DATA_DIR", "/tmp", 0);
	setenv("SVC_BASE_URL", "https://svc.example/api", 1);
	rc = svc_config_load(&c, err, errmax);
	if (rc == 0) {
		rc = svc_auth_config_load(&c, a, err, errmax);
		svc_config_dispose(&c); /* what the tests below read are the defaults' copies and literal strings */
	}
	unsetenv("SVC_BASE_URL");
	if (!had_secret)
		unsetenv("JWT_SECRET");
	if (!had_dir)
		unsetenv("SVC_DATA_DIR");
	if (saved)
		setenv("SVC_CONFIG", saved, 1);
	free(saved);
	return rc;
}

static void unset_all(void)
{
	unsetenv("SVC_RATE_LIMIT_LOGIN_IP");
	unsetenv("GITHUB_CLIENT_ID");
	unsetenv("GITHUB_CLIENT_SECRET");
	unsetenv("SVC_OAUTH_GOOGLE_TOKEN_URL");
	unsetenv("SVC_TRUSTED_PROXIES");
	unsetenv("SVC_SMTP_URL");
	unsetenv("SVC_PASSWORD_RESET_TTL");
	unsetenv("SVC_AUTH_LOG");
	unsetenv("SVC_RATE_LIMIT_LOGIN_ACCOUNT");
	unsetenv("GITHUB_REDIRECT_URI");
	unsetenv("GITHUB_ASSISTANT_REDIRECT_URI");
	unsetenv("GITHUB_ASSISTANT_CLIENT_ID");
}

static void test_auth_config_defaults_and_errors(void)
{
	struct svc_auth_config *a = malloc(sizeof *a);
	char err[256];

	CU_ASSERT_PTR_NOT_NULL_FATAL(a);
	unset_all();
	/* no settings file: only the environment (cleared above) and the defaults count */
	CU_ASSERT_EQUAL_FATAL(load_both(a, err, sizeof err), 0);
	CU_ASSERT_EQUAL(a->rl_login_ip.limit, 10);
	CU_ASSERT_EQUAL(a->rl_login_ip.window_secs, 60);
	CU_ASSERT_EQUAL(a->rl_login_account.limit, 5);
	CU_ASSERT_EQUAL(a->rl_login_account.window_secs, 900);
	CU_ASSERT_EQUAL(a->reset_ttl_secs, 3600);
	CU_ASSERT_STRING_EQUAL(a->oauth[SVC_OAUTH_GITHUB].client_id, "");
	CU_ASSERT_STRING_EQUAL(a->oauth[SVC_OAUTH_GITHUB].redirect_uri, "https://svc.example/api/auth/github/callback");
	CU_ASSERT_STRING_EQUAL(a->oauth[SVC_OAUTH_GITHUB].assistant_redirect_uri,
			       "https://svc.example/api/auth/github/assistant/callback");
	CU_ASSERT_STRING_EQUAL(a->oauth[SVC_OAUTH_GOOGLE].token_url, "https://oauth2.googleapis.com/token");
	setenv("SVC_OAUTH_GOOGLE_TOKEN_URL", "http://127.0.0.1:9/token", 1);
	setenv("GITHUB_CLIENT_ID", "id", 1);
	setenv("GITHUB_CLIENT_SECRET", "secret", 1);
	CU_ASSERT_EQUAL(load_both(a, err, sizeof err), 0);
	CU_ASSERT_STRING_EQUAL(a->oauth[SVC_OAUTH_GOOGLE].token_url, "http://127.0.0.1:9/token");
	CU_ASSERT_STRING_EQUAL(a->oauth[SVC_OAUTH_GITHUB].assistant_client_id, "id");

	unsetenv("GITHUB_CLIENT_SECRET");
	CU_ASSERT_EQUAL(load_both(a, err, sizeof err), SVC_E_INTERNAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "GITHUB_CLIENT_SECRET"));
	unset_all();
	setenv("SVC_RATE_LIMIT_LOGIN_IP", "ten a minute", 1);
	CU_ASSERT_EQUAL(load_both(a, err, sizeof err), SVC_E_INTERNAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "SVC_RATE_LIMIT_LOGIN_IP"));
	unset_all();
	setenv("SVC_TRUSTED_PROXIES", "proxy.example", 1);
	CU_ASSERT_EQUAL(load_both(a, err, sizeof err), SVC_E_INTERNAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "SVC_TRUSTED_PROXIES"));
	unset_all();
	setenv("SVC_SMTP_URL", "http://mail.example", 1);
	CU_ASSERT_EQUAL(load_both(a, err, sizeof err), SVC_E_INTERNAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "SVC_SMTP_URL"));
	unset_all();
	setenv("SVC_PASSWORD_RESET_TTL", "30d", 1);
	CU_ASSERT_EQUAL(load_both(a, err, sizeof err), SVC_E_INTERNAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "SVC_PASSWORD_RESET_TTL"));
	unset_all();
	setenv("SVC_AUTH_LOG", "relative/auth.log", 1);
	CU_ASSERT_EQUAL(load_both(a, err, sizeof err), SVC_E_INTERNAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "SVC_AUTH_LOG"));
	unset_all();
	free(a);
}

/* The key per-address limits count under: IPv4 as is (mapped too), IPv6 by its /64. */
static void test_auth_client_addr_key(void)
{
	char k[SVC_ADDR_MAX];

	CU_ASSERT_EQUAL(svc_auth_addr_key("198.51.100.7", k, sizeof k), 0);
	CU_ASSERT_STRING_EQUAL(k, "198.51.100.7");
	CU_ASSERT_EQUAL(svc_auth_addr_key("::ffff:198.51.100.7", k, sizeof k), 0);
	CU_ASSERT_STRING_EQUAL(k, "198.51.100.7");
	CU_ASSERT_EQUAL(svc_auth_addr_key("2001:db8:1:2:3:4:5:6", k, sizeof k), 0);
	CU_ASSERT_STRING_EQUAL(k, "2001:db8:1:2::/64");
	CU_ASSERT_EQUAL(svc_auth_addr_key("2001:0db8:0001:0002::ffff", k, sizeof k), 0);
	CU_ASSERT_STRING_EQUAL(k, "2001:db8:1:2::/64");
	CU_ASSERT_EQUAL(svc_auth_addr_key("2001:db8:1:3::1", k, sizeof k), 0);
	CU_ASSERT_STRING_EQUAL(k, "2001:db8:1:3::/64");
	CU_ASSERT_EQUAL(svc_auth_addr_key("::1", k, sizeof k), 0);
	CU_ASSERT_STRING_EQUAL(k, "0:0:0:0::/64");
	CU_ASSERT_EQUAL(svc_auth_addr_key("-", k, sizeof k), 0);
	CU_ASSERT_STRING_EQUAL(k, "-");
	CU_ASSERT_EQUAL(svc_auth_addr_key(NULL, k, sizeof k), 0);
	CU_ASSERT_STRING_EQUAL(k, "-");
	CU_ASSERT_EQUAL(svc_auth_addr_key("2001:db8:1:2::1", k, 8), SVC_E_INTERNAL);
}

SVC_TEST_SUITE(auth_client)
{
	CU_pSuite s = CU_add_suite("auth_client", NULL, NULL);

	CU_add_test(s, "list_matches_addresses_and_blocks", test_auth_client_list_matches_addresses_and_blocks);
	CU_add_test(s, "list_validity", test_auth_client_list_validity);
	CU_add_test(s, "forwarded_for_only_from_trusted_proxies", test_auth_client_forwarded_for_only_from_trusted_proxies);
	CU_add_test(s, "addr_key", test_auth_client_addr_key);
}

SVC_TEST_SUITE(auth_config)
{
	CU_pSuite s = CU_add_suite("auth_config", NULL, NULL);

	CU_add_test(s, "rate_rule_syntax", test_auth_config_rate_rule_syntax);
	CU_add_test(s, "defaults_and_errors", test_auth_config_defaults_and_errors);
}
