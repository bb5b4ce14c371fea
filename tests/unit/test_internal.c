/* test_internal.c: CUnit suite "internal": the HMAC signature of internal calls (docs/conventions.md "Internal calls"). */
#include <string.h>

#include "core/err.h"
#include "auth/internal.h"
#include "unit.h"

static const char SECRET[] = "0123456789abcdef0123456789abcdef";
static const char BODY[] = "{\"paths\":[\"index.html\"]}";
static const char PATH[] = "/api/internal/projects/5b1e7d1c-2f6a-4c1e-9a0b-3c2d1e0f9a8b/files-changed";
#define TS 1767225600
/* computed independently with Python's hmac and hashlib */
static const char WANT_POST[] = "v1=63f63c2a1b129fc2e36bc439c8bcf4630a74711d3e3f2177f8a4c47c38512751";
static const char WANT_GET[] = "v1=7df30aa17640256d1e99e6ebb5154f5058e25eef12ff53fd5caa8a2cc2d8b63a";

static void test_internal_sign_matches_reference(void)
{
	char sig[SVC_INTERNAL_SIG_MAX];

	CU_ASSERT_EQUAL_FATAL(svc_internal_sign(SECRET, strlen(SECRET), "POST", PATH, TS, BODY, strlen(BODY), sig), 0);
	CU_ASSERT_STRING_EQUAL(sig, WANT_POST);
	CU_ASSERT_EQUAL_FATAL(svc_internal_sign(SECRET, strlen(SECRET), "GET", "/internal/status", TS, NULL, 0, sig), 0);
	CU_ASSERT_STRING_EQUAL(sig, WANT_GET);
}

static void test_internal_sign_refuses_short_secret(void)
{
	char sig[SVC_INTERNAL_SIG_MAX] = "unchanged";

	CU_ASSERT_EQUAL(svc_internal_sign("short", 5, "POST", PATH, TS, BODY, strlen(BODY), sig), SVC_E_INTERNAL);
	CU_ASSERT_EQUAL(svc_internal_sign("", 0, "POST", PATH, TS, NULL, 0, sig), SVC_E_INTERNAL);
	CU_ASSERT_STRING_EQUAL(sig, "unchanged");
}

static void test_internal_verify_accepts_within_window(void)
{
	CU_ASSERT_EQUAL(svc_internal_verify(SECRET, strlen(SECRET), "POST", PATH, "1767225600", WANT_POST, BODY,
					    strlen(BODY), TS), 0);
	CU_ASSERT_EQUAL(svc_internal_verify(SECRET, strlen(SECRET), "POST", PATH, "1767225600", WANT_POST, BODY,
					    strlen(BODY), TS + 300), 0);
	CU_ASSERT_EQUAL(svc_internal_verify(SECRET, strlen(SECRET), "POST", PATH, "1767225600", WANT_POST, BODY,
					    strlen(BODY), TS - 300), 0);
}

static void test_internal_verify_refuses_old_and_future(void)
{
	CU_ASSERT_EQUAL(svc_internal_verify(SECRET, strlen(SECRET), "POST", PATH, "1767225600", WANT_POST, BODY,
					    strlen(BODY), TS + 301), SVC_E_UNAUTHORIZED);
	CU_ASSERT_EQUAL(svc_internal_verify(SECRET, strlen(SECRET), "POST", PATH, "1767225600", WANT_POST, BODY,
					    strlen(BODY), TS - 301), SVC_E_UNAUTHORIZED);
}

static void test_internal_verify_refuses_tampering(void)
{
	char bad[SVC_INTERNAL_SIG_MAX];
	const char other_body[] = "{\"paths\":[\"evil.html\"]}";

	/* body, path, method, timestamp each changed */
	CU_ASSERT_EQUAL(svc_internal_verify(SECRET, strlen(SECRET), "POST", PATH, "1767225600", WANT_POST, other_body,
					    strlen(other_body), TS), SVC_E_UNAUTHORIZED);
	CU_ASSERT_EQUAL(svc_internal_verify(SECRET, strlen(SECRET), "POST", "/api/internal/projects/x/presence",
					    "1767225600", WANT_POST, BODY, strlen(BODY), TS), SVC_E_UNAUTHORIZED);
	CU_ASSERT_EQUAL(svc_internal_verify(SECRET, strlen(SECRET), "PUT", PATH, "1767225600", WANT_POST, BODY,
					    strlen(BODY), TS), SVC_E_UNAUTHORIZED);
	CU_ASSERT_EQUAL(svc_internal_verify(SECRET, strlen(SECRET), "POST", PATH, "1767225601", WANT_POST, BODY,
					    strlen(BODY), TS), SVC_E_UNAUTHORIZED);
	/* one hex digit flipped, truncated, another secret */
	memcpy(bad, WANT_POST, sizeof WANT_POST);
	bad[10] = bad[10] == 'a' ? 'b' : 'a';
	CU_ASSERT_EQUAL(svc_internal_verify(SECRET, strlen(SECRET), "POST", PATH, "1767225600", bad, BODY,
					    strlen(BODY), TS), SVC_E_UNAUTHORIZED);
	bad[0] = '\0';
	CU_ASSERT_EQUAL(svc_internal_verify(SECRET, strlen(SECRET), "POST", PATH, "1767225600", bad, BODY,
					    strlen(BODY), TS), SVC_E_UNAUTHORIZED);
	CU_ASSERT_EQUAL(svc_internal_verify("ffffffffffffffffffffffffffffffff", 32, "POST", PATH, "1767225600",
					    WANT_POST, BODY, strlen(BODY), TS), SVC_E_UNAUTHORIZED);
}

static void test_internal_verify_refuses_missing_or_malformed_headers(void)
{
	CU_ASSERT_EQUAL(svc_internal_verify(SECRET, strlen(SECRET), "POST", PATH, NULL, WANT_POST, BODY,
					    strlen(BODY), TS), SVC_E_UNAUTHORIZED);
	CU_ASSERT_EQUAL(svc_internal_verify(SECRET, strlen(SECRET), "POST", PATH, "1767225600", NULL, BODY,
					    strlen(BODY), TS), SVC_E_UNAUTHORIZED);
	CU_ASSERT_EQUAL(svc_internal_verify(SECRET, strlen(SECRET), "POST", PATH, "-1767225600", WANT_POST, BODY,
					    strlen(BODY), TS), SVC_E_UNAUTHORIZED);
	CU_ASSERT_EQUAL(svc_internal_verify(SECRET, strlen(SECRET), "POST", PATH, "1767225600x", WANT_POST, BODY,
					    strlen(BODY), TS), SVC_E_UNAUTHORIZED);
	CU_ASSERT_EQUAL(svc_internal_verify(SECRET, strlen(SECRET), "POST", PATH, "", WANT_POST, BODY,
					    strlen(BODY), TS), SVC_E_UNAUTHORIZED);
	/* an empty secret never verifies anything, not even a signature made with it */
	CU_ASSERT_EQUAL(svc_internal_verify("", 0, "POST", PATH, "1767225600", WANT_POST, BODY, strlen(BODY), TS),
			SVC_E_UNAUTHORIZED);
}

SVC_TEST_SUITE(internal)
{
	CU_pSuite s = CU_add_suite("internal", NULL, NULL);

	CU_add_test(s, "test_internal_sign_matches_reference", test_internal_sign_matches_reference);
	CU_add_test(s, "test_internal_sign_refuses_short_secret", test_internal_sign_refuses_short_secret);
	CU_add_test(s, "test_internal_verify_accepts_within_window", test_internal_verify_accepts_within_window);
	CU_add_test(s, "test_internal_verify_refuses_old_and_future", test_internal_verify_refuses_old_and_future);
	CU_add_test(s, "test_internal_verify_refuses_tampering", test_internal_verify_refuses_tampering);
	CU_add_test(s, "test_internal_verify_refuses_missing_or_malformed_headers",
		    test_internal_verify_refuses_missing_or_malformed_headers);
}
