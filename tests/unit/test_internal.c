/* test_internal.c: CUnit suite "internal": the HMAC signature of internal calls (docs/conventions.md "Internal calls"). */
#include <string.h>

#include "core/err.h"
#include "auth/internal.h"
#include "unit.h"

static const char SECRET[] = "0123456789abcdef0123456789abcdef";
static const char BODY[] = "{\"paths\":[\"index.html\"]}";
static const char PATH[] = "/api/internal/projects/5b1e7d1c-2f6a-4c1e-9a0b-3c2d1e0f9a8b/files-changed";
#define TS 1767225600
static const char N[] = "00112233445566778899aabbccddeeff";
/* computed independently with Python's hmac and hashlib */
static const char WANT_POST[] = "v2=31956414cba33467b3e4c85477533cbde7dc5124e490d2b27971a1f58b14d965";
static const char WANT_GET[] = "v2=858b68ad605e860808ce40a8d5533ed5ef4a2468c40862928db097cd804634ed";

static void test_internal_sign_matches_reference(void)
{
	char sig[SVC_INTERNAL_SIG_MAX];

	CU_ASSERT_EQUAL_FATAL(svc_internal_sign(SECRET, strlen(SECRET), "POST", PATH, TS, N, BODY, strlen(BODY), sig), 0);
	CU_ASSERT_STRING_EQUAL(sig, WANT_POST);
	CU_ASSERT_EQUAL_FATAL(svc_internal_sign(SECRET, strlen(SECRET), "GET", "/internal/status", TS, N, NULL, 0, sig), 0);
	CU_ASSERT_STRING_EQUAL(sig, WANT_GET);
}

static void test_internal_sign_refuses_short_secret(void)
{
	char sig[SVC_INTERNAL_SIG_MAX] = "unchanged";

	CU_ASSERT_EQUAL(svc_internal_sign("short", 5, "POST", PATH, TS, N, BODY, strlen(BODY), sig), SVC_E_INTERNAL);
	CU_ASSERT_EQUAL(svc_internal_sign("", 0, "POST", PATH, TS, N, NULL, 0, sig), SVC_E_INTERNAL);
	CU_ASSERT_STRING_EQUAL(sig, "unchanged");
}

static void test_internal_verify_accepts_within_window(void)
{
	CU_ASSERT_EQUAL(svc_internal_verify(SECRET, strlen(SECRET), "POST", PATH, "1767225600", N, WANT_POST, BODY,
					    strlen(BODY), TS), 0);
	CU_ASSERT_EQUAL(svc_internal_verify(SECRET, strlen(SECRET), "POST", PATH, "1767225600", N, WANT_POST, BODY,
					    strlen(BODY), TS + 300), 0);
	CU_ASSERT_EQUAL(svc_internal_verify(SECRET, strlen(SECRET), "POST", PATH, "1767225600", N, WANT_POST, BODY,
					    strlen(BODY), TS - 300), 0);
}

static void test_internal_verify_refuses_old_and_future(void)
{
	CU_ASSERT_EQUAL(svc_internal_verify(SECRET, strlen(SECRET), "POST", PATH, "1767225600", N, WANT_POST, BODY,
					    strlen(BODY), TS + 301), SVC_E_UNAUTHORIZED);
	CU_ASSERT_EQUAL(svc_internal_verify(SECRET, strlen(SECRET), "POST", PATH, "1767225600", N, WANT_POST, BODY,
					    strlen(BODY), TS - 301), SVC_E_UNAUTHORIZED);
}

static void test_internal_verify_refuses_tampering(void)
{
	char bad[SVC_INTERNAL_SIG_MAX];
	const char other_body[] = "{\"paths\":[\"evil.html\"]}";

	/* body, path, method, timestamp each changed */
	CU_ASSERT_EQUAL(svc_internal_verify(SECRET, strlen(SECRET), "POST", PATH, "1767225600", N, WANT_POST, other_body,
					    strlen(other_body), TS), SVC_E_UNAUTHORIZED);
	CU_ASSERT_EQUAL(svc_internal_verify(SECRET, strlen(SECRET), "POST", "/api/internal/projects/x/presence",
					    "1767225600", N, WANT_POST, BODY, strlen(BODY), TS), SVC_E_UNAUTHORIZED);
	CU_ASSERT_EQUAL(svc_internal_verify(SECRET, strlen(SECRET), "PUT", PATH, "1767225600", N, WANT_POST, BODY,
					    strlen(BODY), TS), SVC_E_UNAUTHORIZED);
	CU_ASSERT_EQUAL(svc_internal_verify(SECRET, strlen(SECRET), "POST", PATH, "1767225601", N, WANT_POST, BODY,
					    strlen(BODY), TS), SVC_E_UNAUTHORIZED);
	/* one hex digit flipped, truncated, another secret */
	memcpy(bad, WANT_POST, sizeof WANT_POST);
	bad[10] = bad[10] == 'a' ? 'b' : 'a';
	CU_ASSERT_EQUAL(svc_internal_verify(SECRET, strlen(SECRET), "POST", PATH, "1767225600", N, bad, BODY,
					    strlen(BODY), TS), SVC_E_UNAUTHORIZED);
	bad[0] = '\0';
	CU_ASSERT_EQUAL(svc_internal_verify(SECRET, strlen(SECRET), "POST", PATH, "1767225600", N, bad, BODY,
					    strlen(BODY), TS), SVC_E_UNAUTHORIZED);
	CU_ASSERT_EQUAL(svc_internal_verify("ffffffffffffffffffffffffffffffff", 32, "POST", PATH, "1767225600", N,
					    WANT_POST, BODY, strlen(BODY), TS), SVC_E_UNAUTHORIZED);
}

static void test_internal_verify_refuses_missing_or_malformed_headers(void)
{
	CU_ASSERT_EQUAL(svc_internal_verify(SECRET, strlen(SECRET), "POST", PATH, NULL, N, WANT_POST, BODY,
					    strlen(BODY), TS), SVC_E_UNAUTHORIZED);
	CU_ASSERT_EQUAL(svc_internal_verify(SECRET, strlen(SECRET), "POST", PATH, "1767225600", N, NULL, BODY,
					    strlen(BODY), TS), SVC_E_UNAUTHORIZED);
	/* the nonce: missing, another, not 32 lowercase hex digits */
	CU_ASSERT_EQUAL(svc_internal_verify(SECRET, strlen(SECRET), "POST", PATH, "1767225600", NULL, WANT_POST, BODY,
					    strlen(BODY), TS), SVC_E_UNAUTHORIZED);
	CU_ASSERT_EQUAL(svc_internal_verify(SECRET, strlen(SECRET), "POST", PATH, "1767225600",
					    "00112233445566778899aabbccddeefe", WANT_POST, BODY, strlen(BODY), TS),
			SVC_E_UNAUTHORIZED);
	CU_ASSERT_EQUAL(svc_internal_verify(SECRET, strlen(SECRET), "POST", PATH, "1767225600",
					    "00112233445566778899AABBCCDDEEFF", WANT_POST, BODY, strlen(BODY), TS),
			SVC_E_UNAUTHORIZED);
	CU_ASSERT_EQUAL(svc_internal_verify(SECRET, strlen(SECRET), "POST", PATH, "1767225600",
					    "00112233445566778899aabbccddeeff0", WANT_POST, BODY, strlen(BODY), TS),
			SVC_E_UNAUTHORIZED);
	CU_ASSERT_EQUAL(svc_internal_verify(SECRET, strlen(SECRET), "POST", PATH, "-1767225600", N, WANT_POST, BODY,
					    strlen(BODY), TS), SVC_E_UNAUTHORIZED);
	CU_ASSERT_EQUAL(svc_internal_verify(SECRET, strlen(SECRET), "POST", PATH, "1767225600x", N, WANT_POST, BODY,
					    strlen(BODY), TS), SVC_E_UNAUTHORIZED);
	CU_ASSERT_EQUAL(svc_internal_verify(SECRET, strlen(SECRET), "POST", PATH, "", N, WANT_POST, BODY,
					    strlen(BODY), TS), SVC_E_UNAUTHORIZED);
	/* an empty secret never verifies anything, not even a signature made with it */
	CU_ASSERT_EQUAL(svc_internal_verify("", 0, "POST", PATH, "1767225600", N, WANT_POST, BODY, strlen(BODY), TS),
			SVC_E_UNAUTHORIZED);
}

/* A nonce is taken once within the window; entries past twice the window are forgotten. */
static void test_internal_nonce_cache(void)
{
	struct svc_nonce_cache c;
	char n2[] = "ffeeddccbbaa99887766554433221100";

	memset(&c, 0, sizeof c);
	CU_ASSERT_EQUAL(svc_nonce_cache_add(&c, N, TS), 0);
	CU_ASSERT_EQUAL(svc_nonce_cache_add(&c, N, TS + 1), SVC_E_UNAUTHORIZED);
	CU_ASSERT_EQUAL(svc_nonce_cache_add(&c, n2, TS + 1), 0);
	CU_ASSERT_EQUAL(svc_nonce_cache_add(&c, "not-hex", TS + 1), SVC_E_UNAUTHORIZED);
	CU_ASSERT_EQUAL(c.n, 2);
	/* still remembered at the far edge of any timestamp window, forgotten after */
	CU_ASSERT_EQUAL(svc_nonce_cache_add(&c, N, TS + 2 * SVC_INTERNAL_WINDOW_SECS), SVC_E_UNAUTHORIZED);
	CU_ASSERT_EQUAL(svc_nonce_cache_add(&c, N, TS + 2 * SVC_INTERNAL_WINDOW_SECS + 2), 0);
	CU_ASSERT_EQUAL(c.n, 1);
	svc_nonce_cache_dispose(&c);
	CU_ASSERT_EQUAL(c.n, 0);
}

SVC_TEST_SUITE(internal)
{
	CU_pSuite s = CU_add_suite("internal", NULL, NULL);

	CU_add_test(s, "test_internal_sign_matches_reference", test_internal_sign_matches_reference);
	CU_add_test(s, "test_internal_sign_refuses_short_secret", test_internal_sign_refuses_short_secret);
	CU_add_test(s, "test_internal_verify_accepts_within_window", test_internal_verify_accepts_within_window);
	CU_add_test(s, "test_internal_verify_refuses_old_and_future", test_internal_verify_refuses_old_and_future);
	CU_add_test(s, "test_internal_verify_refuses_tampering", test_internal_verify_refuses_tampering);
	CU_add_test(s, "test_internal_nonce_cache", test_internal_nonce_cache);
	CU_add_test(s, "test_internal_verify_refuses_missing_or_malformed_headers",
		    test_internal_verify_refuses_missing_or_malformed_headers);
}
