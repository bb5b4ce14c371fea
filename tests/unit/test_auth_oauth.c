/* test_auth_oauth.c: CUnit suites auth_oauth (state, PKCE, URLs, profiles), mail (message building) and auth_log (line form). */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "auth/auth.h"
#include "core/err.h"
#include "core/mail.h"
#include "unit.h"
#include "core/util.h"

#define SECRET "0123456789abcdef0123456789abcdef"
#define SECRET_LEN (sizeof(SECRET) - 1)
#define UID "3f2b8c1e-9a4d-4e2b-8f1a-0c9d7e6b5a41"
#define NOW ((int64_t)1900000000)

static void test_auth_oauth_pkce_rfc7636_appendix_b(void)
{
	char out[44];

	svc_oauth_pkce_challenge("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk", out);
	CU_ASSERT_STRING_EQUAL(out, "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM");
}

static void test_auth_oauth_state_round_trip_and_binding(void)
{
	char state[SVC_OAUTH_STATE_MAX], cookie[SVC_OAUTH_COOKIE_MAX], ver[SVC_OAUTH_VERIFIER_LEN + 1];
	char got[SVC_OAUTH_VERIFIER_LEN + 1], other_state[SVC_OAUTH_STATE_MAX], other_cookie[SVC_OAUTH_COOKIE_MAX];
	char bad[SVC_OAUTH_STATE_MAX];

	CU_ASSERT_EQUAL_FATAL(svc_oauth_state_make(SECRET, SECRET_LEN, "github", "signin", "", NOW, 600, state, cookie, ver), 0);
	CU_ASSERT_EQUAL(strlen(ver), SVC_OAUTH_VERIFIER_LEN);
	CU_ASSERT_PTR_NULL(strstr(cookie, strrchr(state, '.') + 1));   /* the cookie does not carry the MAC */
	CU_ASSERT_EQUAL(svc_oauth_state_check(SECRET, SECRET_LEN, "github", "signin", "", state, cookie, NOW + 599, got), 0);
	CU_ASSERT_STRING_EQUAL(got, ver);
	/* expired, other provider, other flow, other user, other secret */
	CU_ASSERT_EQUAL(svc_oauth_state_check(SECRET, SECRET_LEN, "github", "signin", "", state, cookie, NOW + 600, got),
			SVC_E_UNAUTHORIZED);
	CU_ASSERT_EQUAL(svc_oauth_state_check(SECRET, SECRET_LEN, "google", "signin", "", state, cookie, NOW, got),
			SVC_E_UNAUTHORIZED);
	CU_ASSERT_EQUAL(svc_oauth_state_check(SECRET, SECRET_LEN, "github", "assistant", "", state, cookie, NOW, got),
			SVC_E_UNAUTHORIZED);
	CU_ASSERT_EQUAL(svc_oauth_state_check(SECRET, SECRET_LEN, "github", "signin", UID, state, cookie, NOW, got),
			SVC_E_UNAUTHORIZED);
	CU_ASSERT_EQUAL(svc_oauth_state_check("fedcba9876543210fedcba9876543210", SECRET_LEN, "github", "signin", "", state,
					      cookie, NOW, got), SVC_E_UNAUTHORIZED);
	/* another browser's cookie (its own nonce) */
	CU_ASSERT_EQUAL_FATAL(svc_oauth_state_make(SECRET, SECRET_LEN, "github", "signin", "", NOW, 600, other_state,
						   other_cookie, ver), 0);
	CU_ASSERT_EQUAL(svc_oauth_state_check(SECRET, SECRET_LEN, "github", "signin", "", state, other_cookie, NOW, got),
			SVC_E_UNAUTHORIZED);
	/* a later expiry written into the state breaks the MAC */
	snprintf(bad, sizeof bad, "%lld%s", (long long)(NOW + 99999), strchr(state, '.'));
	CU_ASSERT_EQUAL(svc_oauth_state_check(SECRET, SECRET_LEN, "github", "signin", "", bad, cookie, NOW, got),
			SVC_E_UNAUTHORIZED);
	/* malformed */
	CU_ASSERT_EQUAL(svc_oauth_state_check(SECRET, SECRET_LEN, "github", "signin", "", "", cookie, NOW, got),
			SVC_E_UNAUTHORIZED);
	CU_ASSERT_EQUAL(svc_oauth_state_check(SECRET, SECRET_LEN, "github", "signin", "", "1.2.3.4", cookie, NOW, got),
			SVC_E_UNAUTHORIZED);
	CU_ASSERT_EQUAL(svc_oauth_state_check(SECRET, SECRET_LEN, "github", "signin", "", state, "", NOW, got),
			SVC_E_UNAUTHORIZED);
	CU_ASSERT_EQUAL(svc_oauth_state_check(SECRET, SECRET_LEN, "github", "signin", "", NULL, cookie, NOW, got),
			SVC_E_UNAUTHORIZED);
	/* the assistant flow binds the member */
	CU_ASSERT_EQUAL_FATAL(svc_oauth_state_make(SECRET, SECRET_LEN, "github", "assistant", UID, NOW, 600, state, cookie, ver), 0);
	CU_ASSERT_EQUAL(svc_oauth_state_check(SECRET, SECRET_LEN, "github", "assistant", UID, state, cookie, NOW, got), 0);
	CU_ASSERT_EQUAL(svc_oauth_state_check(SECRET, SECRET_LEN, "github", "assistant", "00000000-0000-4000-8000-000000000000",
					      state, cookie, NOW, got), SVC_E_UNAUTHORIZED);
}

static void test_auth_oauth_authorize_url_parameters(void)
{
	const struct svc_oauth_provider *gh = svc_oauth_provider_find("github");
	struct svc_oauth_settings s;
	char *url = NULL;

	CU_ASSERT_PTR_NOT_NULL_FATAL(gh);
	CU_ASSERT_PTR_NULL(svc_oauth_provider_find("gitlab"));
	CU_ASSERT_PTR_NULL(svc_oauth_provider_find(NULL));
	memset(&s, 0, sizeof s);
	s.authorize_url = "http://127.0.0.1:9/authorize";
	s.client_id = "id&x=1";
	s.redirect_uri = "https://svc.example/api/auth/github/callback";
	s.assistant_client_id = "assist";
	s.assistant_redirect_uri = "https://svc.example/api/auth/github/assistant/callback";
	CU_ASSERT_EQUAL_FATAL(svc_oauth_authorize_url(gh, &s, 0, "st.at.e", "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk", &url), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(url, "http://127.0.0.1:9/authorize?client_id=id%26x%3D1&"));
	CU_ASSERT_PTR_NOT_NULL(strstr(url, "redirect_uri=https%3A%2F%2Fsvc.example%2Fapi%2Fauth%2Fgithub%2Fcallback"));
	CU_ASSERT_PTR_NOT_NULL(strstr(url, "response_type=code"));
	CU_ASSERT_PTR_NOT_NULL(strstr(url, "scope=read%3Auser%20user%3Aemail"));
	CU_ASSERT_PTR_NOT_NULL(strstr(url, "state=st.at.e"));
	CU_ASSERT_PTR_NOT_NULL(strstr(url, "code_challenge=E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"));
	CU_ASSERT_PTR_NOT_NULL(strstr(url, "code_challenge_method=S256"));
	CU_ASSERT_PTR_NULL(strstr(url, "dBjftJeZ"));   /* never the verifier itself */
	free(url);
	url = NULL;
	CU_ASSERT_EQUAL_FATAL(svc_oauth_authorize_url(gh, &s, 1, "s", "v", &url), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(url, "client_id=assist&"));
	CU_ASSERT_PTR_NOT_NULL(strstr(url, "assistant%2Fcallback"));
	CU_ASSERT_PTR_NOT_NULL(strstr(url, "scope=read%3Auser&"));
	free(url);
}

static void test_auth_oauth_github_profile_takes_primary_verified_email(void)
{
	const struct svc_oauth_provider *gh = svc_oauth_provider_get(SVC_OAUTH_GITHUB);
	struct svc_oauth_profile p;

	CU_ASSERT_EQUAL(svc_oauth_parse_profile(gh, "{\"id\": 583231, \"login\": \"octocat\", \"name\": \"The Octocat\", "
						"\"email\": \"public@example.test\"}",
						"[{\"email\": \"old@example.test\", \"verified\": true, \"primary\": false},"
						" {\"email\": \"main@example.test\", \"verified\": true, \"primary\": true},"
						" {\"email\": \"x@example.test\", \"verified\": false, \"primary\": false}]", &p), 0);
	CU_ASSERT_STRING_EQUAL(p.subject, "583231");
	CU_ASSERT_STRING_EQUAL(p.login, "octocat");
	CU_ASSERT_STRING_EQUAL(p.name, "The Octocat");
	CU_ASSERT_STRING_EQUAL(p.email, "main@example.test");
	CU_ASSERT_EQUAL(p.email_verified, 1);
	/* the public address alone is not verified; an unverified primary neither */
	CU_ASSERT_EQUAL(svc_oauth_parse_profile(gh, "{\"id\": 1, \"email\": \"public@example.test\"}", NULL, &p), 0);
	CU_ASSERT_EQUAL(p.email_verified, 0);
	CU_ASSERT_EQUAL(svc_oauth_parse_profile(gh, "{\"id\": 1}", "[{\"email\": \"a@example.test\", \"verified\": false, "
						"\"primary\": true}]", &p), 0);
	CU_ASSERT_EQUAL(p.email_verified, 0);
	/* verified but not primary is taken when no primary is verified */
	CU_ASSERT_EQUAL(svc_oauth_parse_profile(gh, "{\"id\": 1}", "[{\"email\": \"a@example.test\", \"verified\": false, "
						"\"primary\": true}, {\"email\": \"b@example.test\", \"verified\": true}]", &p), 0);
	CU_ASSERT_STRING_EQUAL(p.email, "b@example.test");
	CU_ASSERT_EQUAL(p.email_verified, 1);
	/* no id, bad JSON, emails not an array */
	CU_ASSERT_EQUAL(svc_oauth_parse_profile(gh, "{\"login\": \"x\"}", NULL, &p), SVC_E_VALIDATION);
	CU_ASSERT_EQUAL(svc_oauth_parse_profile(gh, "{\"id\": 0}", NULL, &p), SVC_E_VALIDATION);
	CU_ASSERT_EQUAL(svc_oauth_parse_profile(gh, "not json", NULL, &p), SVC_E_VALIDATION);
	CU_ASSERT_EQUAL(svc_oauth_parse_profile(gh, "[1]", NULL, &p), SVC_E_VALIDATION);
	CU_ASSERT_EQUAL(svc_oauth_parse_profile(gh, NULL, NULL, &p), SVC_E_VALIDATION);
	CU_ASSERT_EQUAL(svc_oauth_parse_profile(gh, "{\"id\": 7}", "{\"email\": \"a@example.test\"}", &p), 0);
	CU_ASSERT_EQUAL(p.email_verified, 0);
}

static void test_auth_oauth_google_profile_email_verified(void)
{
	const struct svc_oauth_provider *go = svc_oauth_provider_get(SVC_OAUTH_GOOGLE);
	struct svc_oauth_profile p;

	CU_ASSERT_EQUAL(svc_oauth_parse_profile(go, "{\"sub\": \"1100\", \"email\": \"a@example.test\", "
						"\"email_verified\": true, \"name\": \"A\"}", NULL, &p), 0);
	CU_ASSERT_STRING_EQUAL(p.subject, "1100");
	CU_ASSERT_EQUAL(p.email_verified, 1);
	CU_ASSERT_EQUAL(svc_oauth_parse_profile(go, "{\"sub\": \"1\", \"email\": \"a@example.test\", "
						"\"email_verified\": \"true\"}", NULL, &p), 0);
	CU_ASSERT_EQUAL(p.email_verified, 1);
	CU_ASSERT_EQUAL(svc_oauth_parse_profile(go, "{\"sub\": \"1\", \"email\": \"a@example.test\", "
						"\"email_verified\": false}", NULL, &p), 0);
	CU_ASSERT_EQUAL(p.email_verified, 0);
	CU_ASSERT_EQUAL(svc_oauth_parse_profile(go, "{\"sub\": \"1\", \"email\": \"a@example.test\"}", NULL, &p), 0);
	CU_ASSERT_EQUAL(p.email_verified, 0);
	CU_ASSERT_EQUAL(svc_oauth_parse_profile(go, "{\"sub\": \"1\", \"email_verified\": true}", NULL, &p), 0);
	CU_ASSERT_EQUAL(p.email_verified, 0);   /* verified, but no address */
	CU_ASSERT_EQUAL(svc_oauth_parse_profile(go, "{\"email\": \"a@example.test\"}", NULL, &p), SVC_E_VALIDATION);
	CU_ASSERT_EQUAL(svc_oauth_parse_profile(go, "{\"sub\": \"  \"}", NULL, &p), SVC_E_VALIDATION);
}

static void test_auth_oauth_exchange_refuses_empty_code_and_unreachable_provider(void)
{
	const struct svc_oauth_provider *gh = svc_oauth_provider_get(SVC_OAUTH_GITHUB);
	struct svc_oauth_settings s;
	char *tok = NULL;

	memset(&s, 0, sizeof s);
	s.token_url = "http://127.0.0.1:1/token";   /* nothing listens on port 1 */
	s.redirect_uri = s.client_id = s.client_secret = "x";
	CU_ASSERT_EQUAL(svc_oauth_exchange(gh, &s, 0, "", "v", &tok), SVC_E_UNAUTHORIZED);
	CU_ASSERT_EQUAL(svc_oauth_exchange(gh, &s, 0, "code", "v", &tok), SVC_E_UNAVAILABLE);
	CU_ASSERT_PTR_NULL(tok);
}

static void test_mail_build_headers_and_line_ends(void)
{
	struct svc_buf b;

	svc_buf_init(&b, 64 * 1024);
	CU_ASSERT_EQUAL_FATAL(svc_mail_build("svc@example.test", "user@example.test", "Reset your password",
					     "line one\nline two\r\n.dot line", 1900000000000LL, &b), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(b.data, "From: svc@example.test\r\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(b.data, "To: user@example.test\r\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(b.data, "Subject: Reset your password\r\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(b.data, "Date: Sun, 17 Mar 2030 17:46:40 +0000\r\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(b.data, "@example.test>\r\nMIME-Version: 1.0\r\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(b.data, "Content-Type: text/plain; charset=utf-8\r\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(b.data, "\r\n\r\nline one\r\nline two\r\n.dot line\r\n"));
	CU_ASSERT_PTR_NULL(strstr(b.data, "two\r\r"));
	svc_buf_dispose(&b);
}

static void test_mail_build_refuses_header_injection(void)
{
	struct svc_buf b;

	svc_buf_init(&b, 64 * 1024);
	CU_ASSERT_EQUAL(svc_mail_build("svc@example.test", "user@example.test\r\nBcc: all@example.test", "s", "b", 0, &b),
			SVC_E_VALIDATION);
	CU_ASSERT_EQUAL(svc_mail_build("svc@example.test", "user@example.test", "s\nBcc: all@example.test", "b", 0, &b),
			SVC_E_VALIDATION);
	CU_ASSERT_EQUAL(svc_mail_build("svc@example.test", "Name <user@example.test>", "s", "b", 0, &b), SVC_E_VALIDATION);
	CU_ASSERT_EQUAL(svc_mail_build("svc@example.test", "a@b@example.test", "s", "b", 0, &b), SVC_E_VALIDATION);
	CU_ASSERT_EQUAL(svc_mail_build("svc@example.test", "user@", "s", "b", 0, &b), SVC_E_VALIDATION);
	CU_ASSERT_EQUAL(svc_mail_build("svc", "user@example.test", "s", "b", 0, &b), SVC_E_VALIDATION);
	CU_ASSERT_EQUAL(b.len, 0);
	svc_buf_dispose(&b);
}

static void test_mail_send_without_server_is_unavailable(void)
{
	struct svc_mail_server s = { "", "", "", 1, "svc@example.test" };

	CU_ASSERT_EQUAL(svc_mail_send(&s, "a@example.test", "s", "b"), SVC_E_UNAVAILABLE);
	CU_ASSERT_EQUAL(svc_mail_send(NULL, "a@example.test", "s", "b"), SVC_E_UNAVAILABLE);
	s.url = "smtp://127.0.0.1:1";
	s.starttls = 0;
	CU_ASSERT_EQUAL(svc_mail_send(&s, "a@example.test", "s", "b"), SVC_E_UNAVAILABLE);
	CU_ASSERT_EQUAL(svc_mail_send(&s, "a@example.test\nBcc: x@example.test", "s", "b"), SVC_E_VALIDATION);
}

static void test_auth_log_escape(void)
{
	char out[64];

	svc_auth_log_escape("a\"b\\c d\ne\x01" "f", out, sizeof out);
	CU_ASSERT_STRING_EQUAL(out, "a?b?c?d?e?f");
	svc_auth_log_escape("abcdef", out, 4);
	CU_ASSERT_STRING_EQUAL(out, "abc");
	svc_auth_log_escape(NULL, out, sizeof out);
	CU_ASSERT_STRING_EQUAL(out, "");
}

static void test_auth_log_writes_one_line_per_event(void)
{
	char path[] = "/tmp/svc-unit-authlog-XXXXXX", buf[2048];
	int fd = mkstemp(path);
	ssize_t n;

	CU_ASSERT_FATAL(fd >= 0);
	close(fd);
	svc_auth_log(path, "svc-auth", "login_failed", "203.0.113.5", "user=\"%s\" reason=password", "a@example.test");
	svc_auth_log(path, "svc-auth", "login_ok", "2001:db8::1", "user=%s", UID);
	svc_auth_log(path, "svc-auth", "token_rejected", NULL, "note=%s", "line\nbreak");
	fd = open(path, O_RDONLY);
	CU_ASSERT_FATAL(fd >= 0);
	n = read(fd, buf, sizeof buf - 1);
	close(fd);
	unlink(path);
	CU_ASSERT_FATAL(n > 0);
	buf[n] = '\0';
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "Z svc-auth["));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "]: auth: login_failed remote=203.0.113.5 user=\"a@example.test\" reason=password\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "]: auth: login_ok remote=2001:db8::1 user=" UID "\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "]: auth: token_rejected remote=- note=line?break\n"));
	/* three events, three lines */
	{
		int lines = 0;
		char *p;
		for (p = buf; *p; p++)
			lines += *p == '\n';
		CU_ASSERT_EQUAL(lines, 3);
	}
	/* an empty path writes nothing and does not crash */
	svc_auth_log("", "svc-auth", "login_ok", "1.2.3.4", NULL);
}

SVC_TEST_SUITE(auth_oauth)
{
	CU_pSuite s = CU_add_suite("auth_oauth", NULL, NULL);

	CU_add_test(s, "pkce_rfc7636_appendix_b", test_auth_oauth_pkce_rfc7636_appendix_b);
	CU_add_test(s, "state_round_trip_and_binding", test_auth_oauth_state_round_trip_and_binding);
	CU_add_test(s, "authorize_url_parameters", test_auth_oauth_authorize_url_parameters);
	CU_add_test(s, "github_profile_takes_primary_verified_email", test_auth_oauth_github_profile_takes_primary_verified_email);
	CU_add_test(s, "google_profile_email_verified", test_auth_oauth_google_profile_email_verified);
	CU_add_test(s, "exchange_refuses_empty_code_and_unreachable_provider",
		    test_auth_oauth_exchange_refuses_empty_code_and_unreachable_provider);
}

SVC_TEST_SUITE(mail)
{
	CU_pSuite s = CU_add_suite("mail", NULL, NULL);

	CU_add_test(s, "build_headers_and_line_ends", test_mail_build_headers_and_line_ends);
	CU_add_test(s, "build_refuses_header_injection", test_mail_build_refuses_header_injection);
	CU_add_test(s, "send_without_server_is_unavailable", test_mail_send_without_server_is_unavailable);
}

SVC_TEST_SUITE(auth_log)
{
	CU_pSuite s = CU_add_suite("auth_log", NULL, NULL);

	CU_add_test(s, "escape", test_auth_log_escape);
	CU_add_test(s, "writes_one_line_per_event", test_auth_log_writes_one_line_per_event);
}
