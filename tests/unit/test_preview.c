/* test_preview.c: CUnit suite "preview": the signed preview tokens of lib/auth/preview.h. */
#include <string.h>

#include "auth/preview.h"
#include "core/err.h"
#include "unit.h"

static const char SECRET[] = "0123456789abcdef0123456789abcdef";
static const char PID[] = "5b1e7d1c-2f6a-4c1e-9a0b-3c2d1e0f9a8b";
#define EXP 1767225600
/* computed independently with Python's hmac, hashlib, uuid and base64.b32encode */
static const char WANT[] = "afnr47i4f5veyhu2bm6c2hqptkfwsvnzadat5cerswq76lyzbx5vyqqgx2eq";

static void test_preview_make_matches_reference(void)
{
	char tok[SVC_PREVIEW_TOKEN_MAX];

	CU_ASSERT_EQUAL_FATAL(svc_preview_token_make(SECRET, strlen(SECRET), PID, EXP, tok), 0);
	CU_ASSERT_STRING_EQUAL(tok, WANT);
	CU_ASSERT_EQUAL(strlen(tok), SVC_PREVIEW_TOKEN_LEN);
	CU_ASSERT(strlen(tok) <= 63); /* one DNS label */
	/* the same id in upper case is the same project */
	CU_ASSERT_EQUAL_FATAL(svc_preview_token_make(SECRET, strlen(SECRET), "5B1E7D1C-2F6A-4C1E-9A0B-3C2D1E0F9A8B", EXP,
						     tok), 0);
	CU_ASSERT_STRING_EQUAL(tok, WANT);
}

static void test_preview_make_refuses_bad_input(void)
{
	char tok[SVC_PREVIEW_TOKEN_MAX] = "unchanged";

	CU_ASSERT_EQUAL(svc_preview_token_make(SECRET, strlen(SECRET), "not-a-uuid", EXP, tok), SVC_E_INTERNAL);
	CU_ASSERT_EQUAL(svc_preview_token_make(SECRET, strlen(SECRET), PID, 0, tok), SVC_E_INTERNAL);
	CU_ASSERT_EQUAL(svc_preview_token_make(SECRET, strlen(SECRET), PID, 1LL << 32, tok), SVC_E_INTERNAL);
	CU_ASSERT_EQUAL(svc_preview_token_make("short", 5, PID, EXP, tok), SVC_E_INTERNAL);
	CU_ASSERT_STRING_EQUAL(tok, "unchanged");
}

static void test_preview_check_accepts_until_expiry(void)
{
	char id[37] = "";
	int64_t exp = 0;

	CU_ASSERT_EQUAL(svc_preview_token_check(SECRET, strlen(SECRET), WANT, strlen(WANT), EXP - 1, id, &exp), 0);
	CU_ASSERT_STRING_EQUAL(id, PID);
	CU_ASSERT_EQUAL(exp, EXP);
	/* DNS is case-insensitive: a host name in upper case is the same label */
	{
		char upper[SVC_PREVIEW_TOKEN_MAX];
		size_t i;
		for (i = 0; WANT[i]; i++)
			upper[i] = (char)(WANT[i] >= 'a' && WANT[i] <= 'z' ? WANT[i] - 'a' + 'A' : WANT[i]);
		upper[i] = '\0';
		CU_ASSERT_EQUAL(svc_preview_token_check(SECRET, strlen(SECRET), upper, strlen(upper), EXP - 1, id, NULL), 0);
	}
	/* the length is given: the label may be followed by the rest of the host name */
	CU_ASSERT_EQUAL(svc_preview_token_check(SECRET, strlen(SECRET), "afnr47i4f5veyhu2bm6c2hqptkfwsvnzadat5cerswq76lyzbx5vyqqgx2eq.preview",
						SVC_PREVIEW_TOKEN_LEN, EXP - 1, id, NULL), 0);
}

static void test_preview_check_refuses_expired_forged_and_malformed(void)
{
	char id[37] = "unchanged", tok[SVC_PREVIEW_TOKEN_MAX];
	size_t i;

	CU_ASSERT_EQUAL(svc_preview_token_check(SECRET, strlen(SECRET), WANT, strlen(WANT), EXP, id, NULL), SVC_E_FORBIDDEN);
	CU_ASSERT_EQUAL(svc_preview_token_check(SECRET, strlen(SECRET), WANT, strlen(WANT), EXP + 3600, id, NULL),
			SVC_E_FORBIDDEN);
	/* another instance's key */
	CU_ASSERT_EQUAL(svc_preview_token_check("fedcba9876543210fedcba9876543210", 32, WANT, strlen(WANT), EXP - 1, id, NULL),
			SVC_E_FORBIDDEN);
	/* every single changed character: the id, the expiry, the mac, the version */
	for (i = 0; i < SVC_PREVIEW_TOKEN_LEN; i++) {
		memcpy(tok, WANT, sizeof WANT);
		tok[i] = tok[i] == 'a' ? 'b' : 'a';
		CU_ASSERT_EQUAL(svc_preview_token_check(SECRET, strlen(SECRET), tok, strlen(tok), EXP - 1, id, NULL),
				SVC_E_FORBIDDEN);
	}
	/* wrong lengths, characters outside the alphabet, a NUL */
	CU_ASSERT_EQUAL(svc_preview_token_check(SECRET, strlen(SECRET), WANT, strlen(WANT) - 1, EXP - 1, id, NULL),
			SVC_E_FORBIDDEN);
	CU_ASSERT_EQUAL(svc_preview_token_check(SECRET, strlen(SECRET), "", 0, EXP - 1, id, NULL), SVC_E_FORBIDDEN);
	CU_ASSERT_EQUAL(svc_preview_token_check(SECRET, strlen(SECRET), NULL, 60, EXP - 1, id, NULL), SVC_E_FORBIDDEN);
	memcpy(tok, WANT, sizeof WANT);
	tok[10] = '0';
	CU_ASSERT_EQUAL(svc_preview_token_check(SECRET, strlen(SECRET), tok, strlen(tok), EXP - 1, id, NULL), SVC_E_FORBIDDEN);
	tok[10] = '\0';
	CU_ASSERT_EQUAL(svc_preview_token_check(SECRET, strlen(SECRET), tok, 60, EXP - 1, id, NULL), SVC_E_FORBIDDEN);
	/* the same bytes spelt with non-zero padding bits in the last character */
	memcpy(tok, WANT, sizeof WANT);
	tok[59] = 'r';
	CU_ASSERT_EQUAL(svc_preview_token_check(SECRET, strlen(SECRET), tok, strlen(tok), EXP - 1, id, NULL), SVC_E_FORBIDDEN);
	CU_ASSERT_STRING_EQUAL(id, "unchanged");
}

SVC_TEST_SUITE(preview)
{
	CU_pSuite s = CU_add_suite("preview", NULL, NULL);

	CU_add_test(s, "test_preview_make_matches_reference", test_preview_make_matches_reference);
	CU_add_test(s, "test_preview_make_refuses_bad_input", test_preview_make_refuses_bad_input);
	CU_add_test(s, "test_preview_check_accepts_until_expiry", test_preview_check_accepts_until_expiry);
	CU_add_test(s, "test_preview_check_refuses_expired_forged_and_malformed",
		    test_preview_check_refuses_expired_forged_and_malformed);
}
