/* test_auth.c: CUnit suites auth_jwt and auth_password: every libjwt 1.10 trap, and Argon2id hashes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jwt.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <sodium.h>

#include "auth/auth.h"
#include "core/err.h"
#include "unit.h"

#define SECRET "0123456789abcdef0123456789abcdef"   /* 32 bytes */
#define SECRET_LEN (sizeof(SECRET) - 1)
#define OTHER "fedcba9876543210fedcba9876543210"
#define ISS "svc"
#define UID "3f2b8c1e-9a4d-4e2b-8f1a-0c9d7e6b5a41"
#define NOW ((int64_t)1900000000)

static int verify(enum svc_token_kind kind, const char *tok, int64_t now, char *uid)
{
	return svc_auth_jwt_verify(SECRET, SECRET_LEN, ISS, kind, tok, now, uid);
}

static char *issue(enum svc_token_kind kind, int64_t ttl)
{
	char *tok = NULL;

	CU_ASSERT_EQUAL_FATAL(svc_auth_jwt_issue(SECRET, SECRET_LEN, ISS, kind, UID, NOW, ttl, &tok), 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(tok);
	return tok;
}

/* A token built by libjwt itself: `claims` is a JSON object text, signed with `alg` and `key`. */
static char *libjwt_token(jwt_alg_t alg, const char *key, const char *claims)
{
	jwt_t *j = NULL;
	char *tok, *copy;

	CU_ASSERT_EQUAL_FATAL(jwt_new(&j), 0);
	CU_ASSERT_EQUAL_FATAL(jwt_add_grants_json(j, claims), 0);
	CU_ASSERT_EQUAL_FATAL(jwt_set_alg(j, alg, (const unsigned char *)key, (int)strlen(key)), 0);
	tok = jwt_encode_str(j);
	CU_ASSERT_PTR_NOT_NULL_FATAL(tok);
	copy = strdup(tok);
	free(tok);
	jwt_free(j);
	CU_ASSERT_PTR_NOT_NULL_FATAL(copy);
	return copy;
}

/* base64url without padding of `len` bytes at `p`, malloc'd. */
static char *b64url(const void *p, size_t len)
{
	char *s = malloc(4 * ((len + 2) / 3) + 1);
	int n, i;

	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	n = EVP_EncodeBlock((unsigned char *)s, p, (int)len);
	for (i = 0; i < n; i++) {
		if (s[i] == '+')
			s[i] = '-';
		else if (s[i] == '/')
			s[i] = '_';
		else if (s[i] == '=')
			break;
	}
	s[i] = '\0';
	return s;
}

/*
 * A token assembled by hand: base64url(header) "." base64url(payload) "."
 * then, if `sign`, base64url(HMAC-SHA256(key, first two parts)), else `sig`.
 */
static char *hand_token(const char *header, const char *payload, int sign, const char *key,
			const char *sig)
{
	char *h = b64url(header, strlen(header)), *p = b64url(payload, strlen(payload));
	char *signing, *s = NULL, *tok;
	unsigned char mac[EVP_MAX_MD_SIZE];
	unsigned int maclen = 0;
	size_t n;

	n = strlen(h) + strlen(p) + 2;
	signing = malloc(n);
	CU_ASSERT_PTR_NOT_NULL_FATAL(signing);
	snprintf(signing, n, "%s.%s", h, p);
	if (sign) {
		CU_ASSERT_PTR_NOT_NULL_FATAL(HMAC(EVP_sha256(), key, (int)strlen(key),
						  (unsigned char *)signing, strlen(signing), mac, &maclen));
		s = b64url(mac, maclen);
		sig = s;
	}
	n = strlen(signing) + strlen(sig) + 2;
	tok = malloc(n);
	CU_ASSERT_PTR_NOT_NULL_FATAL(tok);
	snprintf(tok, n, "%s.%s", signing, sig);
	free(s);
	free(signing);
	free(h);
	free(p);
	return tok;
}

/* Claims that pass every check at NOW for an access token. */
#define GOOD_CLAIMS "{\"sub\":\"" UID "\",\"iss\":\"" ISS "\",\"iat\":1900000000," \
	"\"exp\":1900000900,\"jti\":\"00112233445566778899aabbccddeeff\",\"kind\":\"access\"}"

/* Asserts that an HS256 token with `claims`, signed with SECRET by libjwt, is refused as access. */
static void assert_claims_refused(const char *claims)
{
	char uid[37];
	char *tok = libjwt_token(JWT_ALG_HS256, SECRET, claims);

	CU_ASSERT_EQUAL(verify(SVC_TOKEN_ACCESS, tok, NOW, uid), SVC_E_UNAUTHORIZED);
	free(tok);
}

static void test_auth_jwt_round_trip(void)
{
	char uid[37], uid2[37];
	char *a = issue(SVC_TOKEN_ACCESS, 900), *r = issue(SVC_TOKEN_REFRESH, 7 * 86400);
	char *a2 = issue(SVC_TOKEN_ACCESS, 900);
	jwt_t *j = NULL;
	const char *jti;
	size_t i;

	memset(uid, 0, sizeof(uid));
	CU_ASSERT_EQUAL(verify(SVC_TOKEN_ACCESS, a, NOW, uid), 0);
	CU_ASSERT_STRING_EQUAL(uid, UID);
	CU_ASSERT_EQUAL(verify(SVC_TOKEN_REFRESH, r, NOW + 86400, uid2), 0);
	CU_ASSERT_STRING_EQUAL(uid2, UID);
	/* jti is random: two tokens issued at the same second differ. */
	CU_ASSERT_STRING_NOT_EQUAL(a, a2);

	CU_ASSERT_EQUAL_FATAL(jwt_decode(&j, a, (const unsigned char *)SECRET, SECRET_LEN), 0);
	CU_ASSERT_EQUAL(jwt_get_alg(j), JWT_ALG_HS256);
	CU_ASSERT_EQUAL(jwt_get_grant_int(j, "iat"), (long)NOW);
	CU_ASSERT_EQUAL(jwt_get_grant_int(j, "exp"), (long)NOW + 900);
	CU_ASSERT_STRING_EQUAL(jwt_get_grant(j, "iss"), ISS);
	CU_ASSERT_STRING_EQUAL(jwt_get_grant(j, "sub"), UID);
	CU_ASSERT_STRING_EQUAL(jwt_get_grant(j, "kind"), "access");
	jti = jwt_get_grant(j, "jti");
	CU_ASSERT_PTR_NOT_NULL_FATAL(jti);
	CU_ASSERT_EQUAL(strlen(jti), 32);
	for (i = 0; jti[i]; i++)
		CU_ASSERT_PTR_NOT_NULL(strchr("0123456789abcdef", jti[i]));
	jwt_free(j);
	free(a);
	free(a2);
	free(r);
}

static void test_auth_jwt_hand_built_claims_accepted(void)
{
	/* Control for the claim tests below: the same builders with good claims pass. */
	char uid[37];
	char *t1 = libjwt_token(JWT_ALG_HS256, SECRET, GOOD_CLAIMS);
	char *t2 = hand_token("{\"alg\":\"HS256\",\"typ\":\"JWT\"}", GOOD_CLAIMS, 1, SECRET, NULL);

	CU_ASSERT_EQUAL(verify(SVC_TOKEN_ACCESS, t1, NOW, uid), 0);
	CU_ASSERT_EQUAL(verify(SVC_TOKEN_ACCESS, t2, NOW, uid), 0);
	free(t1);
	free(t2);
}

static void test_auth_jwt_expired(void)
{
	char uid[37];
	char *tok = issue(SVC_TOKEN_ACCESS, 900);

	CU_ASSERT_EQUAL(verify(SVC_TOKEN_ACCESS, tok, NOW + 899, uid), 0);
	CU_ASSERT_EQUAL(verify(SVC_TOKEN_ACCESS, tok, NOW + 900, uid), SVC_E_UNAUTHORIZED);
	CU_ASSERT_EQUAL(verify(SVC_TOKEN_ACCESS, tok, NOW + 901, uid), SVC_E_UNAUTHORIZED);
	CU_ASSERT_EQUAL(verify(SVC_TOKEN_ACCESS, tok, NOW + 86400 * 365, uid), SVC_E_UNAUTHORIZED);
	free(tok);
}

static void test_auth_jwt_wrong_issuer(void)
{
	char uid[37];
	char *tok = issue(SVC_TOKEN_ACCESS, 900);

	CU_ASSERT_EQUAL(svc_auth_jwt_verify(SECRET, SECRET_LEN, "other", SVC_TOKEN_ACCESS, tok,
					    NOW, uid), SVC_E_UNAUTHORIZED);
	CU_ASSERT_EQUAL(svc_auth_jwt_verify(SECRET, SECRET_LEN, "svc2", SVC_TOKEN_ACCESS, tok,
					    NOW, uid), SVC_E_UNAUTHORIZED);
	CU_ASSERT_EQUAL(svc_auth_jwt_verify(SECRET, SECRET_LEN, "sv", SVC_TOKEN_ACCESS, tok,
					    NOW, uid), SVC_E_UNAUTHORIZED);
	CU_ASSERT_EQUAL(svc_auth_jwt_verify(SECRET, SECRET_LEN, "", SVC_TOKEN_ACCESS, tok,
					    NOW, uid), SVC_E_UNAUTHORIZED);
	free(tok);
}

static void test_auth_jwt_missing_iss(void)
{
	assert_claims_refused("{\"sub\":\"" UID "\",\"exp\":1900000900,\"kind\":\"access\"}");
	assert_claims_refused("{\"sub\":\"" UID "\",\"iss\":7,\"exp\":1900000900,\"kind\":\"access\"}");
	assert_claims_refused("{\"sub\":\"" UID "\",\"iss\":null,\"exp\":1900000900,\"kind\":\"access\"}");
}

static void test_auth_jwt_missing_exp(void)
{
	assert_claims_refused("{\"sub\":\"" UID "\",\"iss\":\"svc\",\"kind\":\"access\"}");
}

static void test_auth_jwt_exp_not_integer(void)
{
	assert_claims_refused("{\"sub\":\"" UID "\",\"iss\":\"svc\",\"exp\":\"1900000900\",\"kind\":\"access\"}");
	assert_claims_refused("{\"sub\":\"" UID "\",\"iss\":\"svc\",\"exp\":1900000900.5,\"kind\":\"access\"}");
	assert_claims_refused("{\"sub\":\"" UID "\",\"iss\":\"svc\",\"exp\":1.9e12,\"kind\":\"access\"}");
	assert_claims_refused("{\"sub\":\"" UID "\",\"iss\":\"svc\",\"exp\":true,\"kind\":\"access\"}");
	assert_claims_refused("{\"sub\":\"" UID "\",\"iss\":\"svc\",\"exp\":null,\"kind\":\"access\"}");
	assert_claims_refused("{\"sub\":\"" UID "\",\"iss\":\"svc\",\"exp\":[1900000900],\"kind\":\"access\"}");
	assert_claims_refused("{\"sub\":\"" UID "\",\"iss\":\"svc\",\"exp\":{},\"kind\":\"access\"}");
}

static void test_auth_jwt_alg_none(void)
{
	char uid[37];
	const char *headers[] = {
		"{\"alg\":\"none\",\"typ\":\"JWT\"}", "{\"alg\":\"none\"}", "{\"alg\":\"NONE\"}",
		"{\"alg\":\"None\",\"typ\":\"JWT\"}",
	};
	size_t i;

	for (i = 0; i < sizeof(headers) / sizeof(headers[0]); i++) {
		char *empty = hand_token(headers[i], GOOD_CLAIMS, 0, NULL, "");
		char *fake = hand_token(headers[i], GOOD_CLAIMS, 0, NULL, "c2lnbmF0dXJl");
		char *real = hand_token(headers[i], GOOD_CLAIMS, 1, SECRET, NULL);

		CU_ASSERT_EQUAL(empty[strlen(empty) - 1], '.');
		CU_ASSERT_EQUAL(verify(SVC_TOKEN_ACCESS, empty, NOW, uid), SVC_E_UNAUTHORIZED);
		CU_ASSERT_EQUAL(verify(SVC_TOKEN_ACCESS, fake, NOW, uid), SVC_E_UNAUTHORIZED);
		CU_ASSERT_EQUAL(verify(SVC_TOKEN_ACCESS, real, NOW, uid), SVC_E_UNAUTHORIZED);
		free(empty);
		free(fake);
		free(real);
	}
}

static void test_auth_jwt_hs512_same_secret(void)
{
	char uid[37];
	char *tok = libjwt_token(JWT_ALG_HS512, SECRET, GOOD_CLAIMS);
	jwt_t *j = NULL;

	/* The trap itself: libjwt 1.10 accepts this token with the HS256 secret. */
	CU_ASSERT_EQUAL(jwt_decode(&j, tok, (const unsigned char *)SECRET, SECRET_LEN), 0);
	jwt_free(j);
	CU_ASSERT_EQUAL(verify(SVC_TOKEN_ACCESS, tok, NOW, uid), SVC_E_UNAUTHORIZED);
	free(tok);
}

/*
 * The MAC is checked by svc (constant time, exact text) before libjwt: a
 * signature one bit off, one with its base64url padding, one with a
 * non-canonical last character (same 32 bytes for a lenient decoder) and a
 * truncated one are refused; the good one passes.
 */
static void test_auth_jwt_signature_checked_exactly(void)
{
	static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
	char uid[37];
	char *good = libjwt_token(JWT_ALG_HS256, SECRET, GOOD_CLAIMS);
	size_t n = strlen(good);
	char *t = malloc(n + 2);
	const char *last;
	int idx;

	CU_ASSERT_EQUAL(verify(SVC_TOKEN_ACCESS, good, NOW, uid), 0);
	/* the last of 43 characters carries 4 bits of the MAC and 2 zero bits */
	last = strchr(alphabet, good[n - 1]);
	CU_ASSERT_PTR_NOT_NULL_FATAL(last);
	idx = (int)(last - alphabet);
	memcpy(t, good, n + 1);
	t[n - 1] = alphabet[idx ^ 1];          /* a padding bit set: same bytes, other text */
	CU_ASSERT_EQUAL(verify(SVC_TOKEN_ACCESS, t, NOW, uid), SVC_E_UNAUTHORIZED);
	t[n - 1] = alphabet[idx ^ 4];          /* one MAC bit off */
	CU_ASSERT_EQUAL(verify(SVC_TOKEN_ACCESS, t, NOW, uid), SVC_E_UNAUTHORIZED);
	memcpy(t, good, n + 1);
	t[n] = '=';                            /* padded */
	t[n + 1] = '\0';
	CU_ASSERT_EQUAL(verify(SVC_TOKEN_ACCESS, t, NOW, uid), SVC_E_UNAUTHORIZED);
	memcpy(t, good, n + 1);
	t[n - 1] = '\0';                       /* truncated */
	CU_ASSERT_EQUAL(verify(SVC_TOKEN_ACCESS, t, NOW, uid), SVC_E_UNAUTHORIZED);
	free(t);
	free(good);
}

static void test_auth_jwt_hs384_refused(void)
{
	char uid[37];
	char *tok = libjwt_token(JWT_ALG_HS384, SECRET, GOOD_CLAIMS);

	CU_ASSERT_EQUAL(verify(SVC_TOKEN_ACCESS, tok, NOW, uid), SVC_E_UNAUTHORIZED);
	free(tok);
}

static void test_auth_jwt_alg_not_exactly_hs256(void)
{
	/* libjwt's jwt_str_alg() is case-insensitive; RFC 7515 alg values are not. */
	char uid[37];
	char *lower = hand_token("{\"alg\":\"hs256\",\"typ\":\"JWT\"}", GOOD_CLAIMS, 1, SECRET, NULL);
	char *mixed = hand_token("{\"alg\":\"Hs256\",\"typ\":\"JWT\"}", GOOD_CLAIMS, 1, SECRET, NULL);
	char *noalg = hand_token("{\"typ\":\"JWT\"}", GOOD_CLAIMS, 1, SECRET, NULL);
	char *numalg = hand_token("{\"alg\":256,\"typ\":\"JWT\"}", GOOD_CLAIMS, 1, SECRET, NULL);

	CU_ASSERT_EQUAL(verify(SVC_TOKEN_ACCESS, lower, NOW, uid), SVC_E_UNAUTHORIZED);
	CU_ASSERT_EQUAL(verify(SVC_TOKEN_ACCESS, mixed, NOW, uid), SVC_E_UNAUTHORIZED);
	CU_ASSERT_EQUAL(verify(SVC_TOKEN_ACCESS, noalg, NOW, uid), SVC_E_UNAUTHORIZED);
	CU_ASSERT_EQUAL(verify(SVC_TOKEN_ACCESS, numalg, NOW, uid), SVC_E_UNAUTHORIZED);
	free(lower);
	free(mixed);
	free(noalg);
	free(numalg);
}

static void test_auth_jwt_other_secret(void)
{
	char uid[37];
	char *tok = NULL;

	CU_ASSERT_EQUAL_FATAL(svc_auth_jwt_issue(OTHER, SECRET_LEN, ISS, SVC_TOKEN_ACCESS, UID, NOW,
						 900, &tok), 0);
	CU_ASSERT_EQUAL(svc_auth_jwt_verify(OTHER, SECRET_LEN, ISS, SVC_TOKEN_ACCESS, tok, NOW, uid), 0);
	CU_ASSERT_EQUAL(verify(SVC_TOKEN_ACCESS, tok, NOW, uid), SVC_E_UNAUTHORIZED);
	/* A longer secret that starts with the right one is another key. */
	CU_ASSERT_EQUAL(svc_auth_jwt_verify(OTHER "x", SECRET_LEN + 1, ISS, SVC_TOKEN_ACCESS, tok,
					    NOW, uid), SVC_E_UNAUTHORIZED);
	free(tok);
}

static void test_auth_jwt_kind_mismatch(void)
{
	char uid[37];
	char *a = issue(SVC_TOKEN_ACCESS, 900), *r = issue(SVC_TOKEN_REFRESH, 900);

	CU_ASSERT_EQUAL(verify(SVC_TOKEN_REFRESH, a, NOW, uid), SVC_E_UNAUTHORIZED);
	CU_ASSERT_EQUAL(verify(SVC_TOKEN_ACCESS, r, NOW, uid), SVC_E_UNAUTHORIZED);
	CU_ASSERT_EQUAL(verify((enum svc_token_kind)7, a, NOW, uid), SVC_E_UNAUTHORIZED);
	assert_claims_refused("{\"sub\":\"" UID "\",\"iss\":\"svc\",\"exp\":1900000900}");
	assert_claims_refused("{\"sub\":\"" UID "\",\"iss\":\"svc\",\"exp\":1900000900,\"kind\":\"Access\"}");
	assert_claims_refused("{\"sub\":\"" UID "\",\"iss\":\"svc\",\"exp\":1900000900,\"kind\":0}");
	free(a);
	free(r);
}

static void test_auth_jwt_tampered(void)
{
	char uid[37];
	char *tok = issue(SVC_TOKEN_ACCESS, 900);
	char *other = hand_token("{\"alg\":\"HS256\",\"typ\":\"JWT\"}",
				 "{\"sub\":\"00000000-0000-4000-8000-000000000000\",\"iss\":\"svc\","
				 "\"exp\":1900000900,\"kind\":\"access\"}", 1, OTHER, NULL);
	char *dot1 = strchr(tok, '.'), *dot2 = strrchr(tok, '.');
	char *odot1 = strchr(other, '.'), *odot2 = strrchr(other, '.');
	char *mixed, saved;
	size_t n;

	/* Other payload, original header and signature. */
	n = (size_t)(dot1 - tok) + (size_t)(odot2 - odot1) + strlen(dot2) + 1;
	mixed = malloc(n);
	CU_ASSERT_PTR_NOT_NULL_FATAL(mixed);
	snprintf(mixed, n, "%.*s%.*s%s", (int)(dot1 - tok), tok, (int)(odot2 - odot1), odot1, dot2);
	CU_ASSERT_EQUAL(verify(SVC_TOKEN_ACCESS, mixed, NOW, uid), SVC_E_UNAUTHORIZED);
	free(mixed);

	/* One changed character in the payload, then in the signature. */
	saved = dot1[5];
	dot1[5] = saved == 'A' ? 'B' : 'A';
	CU_ASSERT_EQUAL(verify(SVC_TOKEN_ACCESS, tok, NOW, uid), SVC_E_UNAUTHORIZED);
	dot1[5] = saved;
	CU_ASSERT_EQUAL(verify(SVC_TOKEN_ACCESS, tok, NOW, uid), 0);
	saved = dot2[3];
	dot2[3] = saved == 'A' ? 'B' : 'A';
	CU_ASSERT_EQUAL(verify(SVC_TOKEN_ACCESS, tok, NOW, uid), SVC_E_UNAUTHORIZED);
	/* Signature cut short. */
	dot2[3] = saved;
	CU_ASSERT_EQUAL(verify(SVC_TOKEN_ACCESS, tok, NOW, uid), 0);
	n = strlen(tok);
	tok[n - 1] = '\0';
	CU_ASSERT_EQUAL(verify(SVC_TOKEN_ACCESS, tok, NOW, uid), SVC_E_UNAUTHORIZED);
	free(tok);
	free(other);
}

/* Signed HS256 access token whose claims carry a "pad" string of `padlen` bytes. */
static char *padded_token(size_t padlen)
{
	size_t n = sizeof(GOOD_CLAIMS) + padlen + 16;
	char *claims = malloc(n), *pad = malloc(padlen + 1), *tok;

	CU_ASSERT_PTR_NOT_NULL_FATAL(claims);
	CU_ASSERT_PTR_NOT_NULL_FATAL(pad);
	memset(pad, 'p', padlen);
	pad[padlen] = '\0';
	snprintf(claims, n, "{\"pad\":\"%s\",%s", pad, GOOD_CLAIMS + 1);
	tok = libjwt_token(JWT_ALG_HS256, SECRET, claims);
	free(claims);
	free(pad);
	return tok;
}

static void test_auth_jwt_too_long(void)
{
	char uid[37];
	char *fits = padded_token(2500), *over = padded_token(3200), *huge;

	CU_ASSERT(strlen(fits) <= SVC_AUTH_TOKEN_MAX);
	CU_ASSERT_EQUAL(verify(SVC_TOKEN_ACCESS, fits, NOW, uid), 0);
	CU_ASSERT(strlen(over) > SVC_AUTH_TOKEN_MAX);
	CU_ASSERT_EQUAL(verify(SVC_TOKEN_ACCESS, over, NOW, uid), SVC_E_UNAUTHORIZED);

	huge = malloc(1 << 20);
	CU_ASSERT_PTR_NOT_NULL_FATAL(huge);
	memset(huge, 'A', (1 << 20) - 1);
	huge[(1 << 20) - 1] = '\0';
	huge[1000] = '.';
	huge[2000] = '.';
	CU_ASSERT_EQUAL(verify(SVC_TOKEN_ACCESS, huge, NOW, uid), SVC_E_UNAUTHORIZED);
	free(huge);
	free(fits);
	free(over);
}

static void test_auth_jwt_garbage(void)
{
	static const char *const bad[] = {
		"", ".", "..", "...", "abc", "a.b", "a.b.c", "a.b.c.d", ".b.c", "a..c",
		"eyJhbGciOiJIUzI1NiJ9", "eyJhbGciOiJIUzI1NiJ9.", "eyJhbGciOiJIUzI1NiJ9..",
		"@@@@.####.$$$$", "eyJ h.eyJ.abc", "eyJhbGciOiJIUzI1NiJ9.e30.x=",
		"eyJhbGciOiJIUzI1NiJ9.e30.abc\n", "A.B.C", "AAAAA.AAAAA.AAAAA",
		"eyJ.eyJ.eyJ", "e30.e30.e30", "bnVsbA.bnVsbA.bnVsbA",
	};
	char uid[37];
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CU_ASSERT_EQUAL(verify(SVC_TOKEN_ACCESS, bad[i], NOW, uid), SVC_E_UNAUTHORIZED);
	CU_ASSERT_EQUAL(verify(SVC_TOKEN_ACCESS, NULL, NOW, uid), SVC_E_UNAUTHORIZED);
}

static void test_auth_jwt_payload_not_object(void)
{
	static const char *const payloads[] = {
		"[1,2]", "\"" UID "\"", "42", "null", "true", "{", "not json", "", "{\"sub\":}",
	};
	static const char *const headers[] = { "[\"HS256\"]", "\"HS256\"", "{", "" };
	char uid[37];
	size_t i;

	for (i = 0; i < sizeof(payloads) / sizeof(payloads[0]); i++) {
		char *tok = hand_token("{\"alg\":\"HS256\",\"typ\":\"JWT\"}", payloads[i], 1, SECRET, NULL);

		CU_ASSERT_EQUAL(verify(SVC_TOKEN_ACCESS, tok, NOW, uid), SVC_E_UNAUTHORIZED);
		free(tok);
	}
	for (i = 0; i < sizeof(headers) / sizeof(headers[0]); i++) {
		char *tok = hand_token(headers[i], GOOD_CLAIMS, 1, SECRET, NULL);

		CU_ASSERT_EQUAL(verify(SVC_TOKEN_ACCESS, tok, NOW, uid), SVC_E_UNAUTHORIZED);
		free(tok);
	}
}

static void test_auth_jwt_sub_must_be_uuid(void)
{
	char uid[37];
	char *upper = libjwt_token(JWT_ALG_HS256, SECRET,
				   "{\"sub\":\"3F2B8C1E-9A4D-4E2B-8F1A-0C9D7E6B5A41\",\"iss\":\"svc\","
				   "\"exp\":1900000900,\"kind\":\"access\"}");
	char *nul;

	CU_ASSERT_EQUAL(verify(SVC_TOKEN_ACCESS, upper, NOW, uid), 0);
	CU_ASSERT_STRING_EQUAL(uid, "3F2B8C1E-9A4D-4E2B-8F1A-0C9D7E6B5A41");
	free(upper);
	/* jansson refuses \u0000 by default, so build that one by hand. */
	nul = hand_token("{\"alg\":\"HS256\",\"typ\":\"JWT\"}",
			 "{\"sub\":\"3f2b8c1e-9a4d-4e2b-8f1a-0c9d7e6b5a4\\u0000\",\"iss\":\"svc\","
			 "\"exp\":1900000900,\"kind\":\"access\"}", 1, SECRET, NULL);
	CU_ASSERT_EQUAL(verify(SVC_TOKEN_ACCESS, nul, NOW, uid), SVC_E_UNAUTHORIZED);
	free(nul);
#define SUB(s) "{\"sub\":" s ",\"iss\":\"svc\",\"exp\":1900000900,\"kind\":\"access\"}"
	assert_claims_refused("{\"iss\":\"svc\",\"exp\":1900000900,\"kind\":\"access\"}");
	assert_claims_refused(SUB("\"not-a-uuid\""));
	assert_claims_refused(SUB("\"\""));
	assert_claims_refused(SUB("42"));
	assert_claims_refused(SUB("null"));
	assert_claims_refused(SUB("\"3f2b8c1e-9a4d-4e2b-8f1a-0c9d7e6b5a41x\""));   /* 37 chars */
	assert_claims_refused(SUB("\"3f2b8c1e-9a4d-4e2b-8f1a-0c9d7e6b5a4\""));     /* 35 chars */
	assert_claims_refused(SUB("\"3f2b8c1e9a4d-4e2b-8f1a-0c9d7e6b5a41a\""));    /* dash moved */
	assert_claims_refused(SUB("\"3f2b8c1e-9a4d-4e2b-8f1a-0c9d7e6b5a4g\""));    /* not hex */
	assert_claims_refused(SUB("\"{3f2b8c1e-9a4d-4e2b-8f1a-0c9d7e6b5a}\""));
#undef SUB
}

static void test_auth_jwt_issue_rejects_bad_input(void)
{
	char *tok = NULL;
	char uid[37];

	CU_ASSERT_EQUAL(svc_auth_jwt_issue(SECRET, SECRET_LEN - 1, ISS, SVC_TOKEN_ACCESS, UID, NOW,
					   900, &tok), SVC_E_INTERNAL);
	CU_ASSERT_EQUAL(svc_auth_jwt_issue(SECRET, 0, ISS, SVC_TOKEN_ACCESS, UID, NOW, 900, &tok),
			SVC_E_INTERNAL);
	CU_ASSERT_EQUAL(svc_auth_jwt_issue(NULL, SECRET_LEN, ISS, SVC_TOKEN_ACCESS, UID, NOW, 900,
					   &tok), SVC_E_INTERNAL);
	CU_ASSERT_EQUAL(svc_auth_jwt_issue(SECRET, SECRET_LEN, ISS, SVC_TOKEN_ACCESS, "not-a-uuid",
					   NOW, 900, &tok), SVC_E_INTERNAL);
	CU_ASSERT_EQUAL(svc_auth_jwt_issue(SECRET, SECRET_LEN, NULL, SVC_TOKEN_ACCESS, UID, NOW, 900,
					   &tok), SVC_E_INTERNAL);
	CU_ASSERT_EQUAL(svc_auth_jwt_issue(SECRET, SECRET_LEN, ISS, SVC_TOKEN_ACCESS, UID, NOW,
					   INT64_MAX, &tok), SVC_E_INTERNAL);
	CU_ASSERT_EQUAL(svc_auth_jwt_issue(SECRET, SECRET_LEN, ISS, SVC_TOKEN_ACCESS, UID, NOW, 0,
					   &tok), SVC_E_INTERNAL);
	CU_ASSERT_PTR_NULL(tok);

	/* A verifier with a short secret refuses even a token signed with that secret's prefix. */
	tok = issue(SVC_TOKEN_ACCESS, 900);
	CU_ASSERT_EQUAL(svc_auth_jwt_verify(SECRET, SECRET_LEN - 1, ISS, SVC_TOKEN_ACCESS, tok, NOW,
					    uid), SVC_E_UNAUTHORIZED);
	CU_ASSERT_EQUAL(svc_auth_jwt_verify(NULL, 0, ISS, SVC_TOKEN_ACCESS, tok, NOW, uid),
			SVC_E_UNAUTHORIZED);
	free(tok);
}

/* The session generation (claim "gen"): round trip, absent is 0, only a non-negative integer passes. */
static void test_auth_jwt_session_generation(void)
{
	char uid[37];
	char *tok = NULL;
	int64_t gen = -1;

	CU_ASSERT_EQUAL_FATAL(svc_auth_jwt_issue_gen(SECRET, SECRET_LEN, ISS, SVC_TOKEN_REFRESH, UID, 7, NOW, 900,
						     &tok), 0);
	CU_ASSERT_EQUAL(svc_auth_jwt_verify_gen(SECRET, SECRET_LEN, ISS, SVC_TOKEN_REFRESH, tok, NOW, uid, &gen), 0);
	CU_ASSERT_EQUAL(gen, 7);
	CU_ASSERT_STRING_EQUAL(uid, UID);
	/* the plain verifier still accepts it */
	CU_ASSERT_EQUAL(svc_auth_jwt_verify(SECRET, SECRET_LEN, ISS, SVC_TOKEN_REFRESH, tok, NOW, uid), 0);
	free(tok);
	tok = issue(SVC_TOKEN_ACCESS, 900);   /* no gen claim */
	gen = -1;
	CU_ASSERT_EQUAL(svc_auth_jwt_verify_gen(SECRET, SECRET_LEN, ISS, SVC_TOKEN_ACCESS, tok, NOW, uid, &gen), 0);
	CU_ASSERT_EQUAL(gen, 0);
	free(tok);
	tok = NULL;
	CU_ASSERT_EQUAL(svc_auth_jwt_issue_gen(SECRET, SECRET_LEN, ISS, SVC_TOKEN_ACCESS, UID, -1, NOW, 900, &tok),
			SVC_E_INTERNAL);
	CU_ASSERT_PTR_NULL(tok);
#define GEN(v) "{\"sub\":\"" UID "\",\"iss\":\"" ISS "\",\"exp\":1900000900,\"kind\":\"access\",\"gen\":" v "}"
	assert_claims_refused(GEN("-1"));
	assert_claims_refused(GEN("\"3\""));
	assert_claims_refused(GEN("1.5"));
	assert_claims_refused(GEN("true"));
#undef GEN
}

/* A session token's "fam" and chosen "jti" (lib/auth/auth_session.c): round trip; only 32 lowercase hex digits pass. */
static void test_auth_jwt_session_claims(void)
{
	static const char fam[] = "0123456789abcdef0123456789abcdef", jti[] = "fedcba9876543210fedcba9876543210";
	struct svc_auth_claims c;
	char *tok = NULL;

	CU_ASSERT_EQUAL_FATAL(svc_auth_jwt_issue_session(SECRET, SECRET_LEN, ISS, SVC_TOKEN_REFRESH, UID, 3, fam, jti,
							 NOW, 900, &tok), 0);
	CU_ASSERT_EQUAL(svc_auth_jwt_verify_claims(SECRET, SECRET_LEN, ISS, SVC_TOKEN_REFRESH, tok, NOW, &c), 0);
	CU_ASSERT_STRING_EQUAL(c.family, fam);
	CU_ASSERT_STRING_EQUAL(c.jti, jti);
	CU_ASSERT_STRING_EQUAL(c.user_id, UID);
	CU_ASSERT_EQUAL(c.gen, 3);
	CU_ASSERT_EQUAL(c.iat, NOW);
	free(tok);
	tok = issue(SVC_TOKEN_ACCESS, 900); /* no fam: a token from before sessions were stored */
	CU_ASSERT_EQUAL(svc_auth_jwt_verify_claims(SECRET, SECRET_LEN, ISS, SVC_TOKEN_ACCESS, tok, NOW, &c), 0);
	CU_ASSERT_STRING_EQUAL(c.family, "");
	CU_ASSERT_EQUAL(strlen(c.jti), 32);
	free(tok);
	tok = NULL;
	CU_ASSERT_EQUAL(svc_auth_jwt_issue_session(SECRET, SECRET_LEN, ISS, SVC_TOKEN_ACCESS, UID, 0, "ABCDEF0123456789abcdef0123456789",
						   NULL, NOW, 900, &tok), SVC_E_INTERNAL);
	CU_ASSERT_EQUAL(svc_auth_jwt_issue_session(SECRET, SECRET_LEN, ISS, SVC_TOKEN_ACCESS, UID, 0, NULL, "short", NOW,
						   900, &tok), SVC_E_INTERNAL);
	CU_ASSERT_PTR_NULL(tok);
#define FAM(v) "{\"sub\":\"" UID "\",\"iss\":\"" ISS "\",\"exp\":1900000900,\"kind\":\"access\",\"fam\":" v "}"
	assert_claims_refused(FAM("\"0123\""));
	assert_claims_refused(FAM("\"0123456789ABCDEF0123456789abcdef\""));
	assert_claims_refused(FAM("\"0123456789abcdef0123456789abcdef0\""));
	assert_claims_refused(FAM("7"));
#undef FAM
#define JTI(v) "{\"sub\":\"" UID "\",\"iss\":\"" ISS "\",\"exp\":1900000900,\"kind\":\"access\",\"jti\":" v "}"
	assert_claims_refused(JTI("\"x\""));
	assert_claims_refused(JTI("null"));
#undef JTI
}

SVC_TEST_SUITE(auth_jwt)
{
	CU_pSuite s = CU_add_suite("auth_jwt", NULL, NULL);

	CU_add_test(s, "round_trip", test_auth_jwt_round_trip);
	CU_add_test(s, "hand_built_claims_accepted", test_auth_jwt_hand_built_claims_accepted);
	CU_add_test(s, "expired", test_auth_jwt_expired);
	CU_add_test(s, "wrong_issuer", test_auth_jwt_wrong_issuer);
	CU_add_test(s, "missing_iss", test_auth_jwt_missing_iss);
	CU_add_test(s, "missing_exp", test_auth_jwt_missing_exp);
	CU_add_test(s, "exp_not_integer", test_auth_jwt_exp_not_integer);
	CU_add_test(s, "alg_none", test_auth_jwt_alg_none);
	CU_add_test(s, "hs512_same_secret", test_auth_jwt_hs512_same_secret);
	CU_add_test(s, "hs384_refused", test_auth_jwt_hs384_refused);
	CU_add_test(s, "signature_checked_exactly", test_auth_jwt_signature_checked_exactly);
	CU_add_test(s, "alg_not_exactly_hs256", test_auth_jwt_alg_not_exactly_hs256);
	CU_add_test(s, "other_secret", test_auth_jwt_other_secret);
	CU_add_test(s, "kind_mismatch", test_auth_jwt_kind_mismatch);
	CU_add_test(s, "tampered", test_auth_jwt_tampered);
	CU_add_test(s, "too_long", test_auth_jwt_too_long);
	CU_add_test(s, "garbage", test_auth_jwt_garbage);
	CU_add_test(s, "payload_not_object", test_auth_jwt_payload_not_object);
	CU_add_test(s, "sub_must_be_uuid", test_auth_jwt_sub_must_be_uuid);
	CU_add_test(s, "issue_rejects_bad_input", test_auth_jwt_issue_rejects_bad_input);
	CU_add_test(s, "session_generation", test_auth_jwt_session_generation);
	CU_add_test(s, "session_claims", test_auth_jwt_session_claims);
}

/* ---- passwords ---- */

#define PW "correct horse battery staple"

static void test_auth_password_hash_format(void)
{
	char h[SVC_AUTH_HASH_MAX];
	static const char prefix[] = "$argon2id$v=19$m=19456,t=2,p=1$";

	CU_ASSERT_EQUAL_FATAL(svc_auth_password_hash(PW, strlen(PW), h), 0);
	CU_ASSERT(strnlen(h, sizeof(h)) < sizeof(h));
	CU_ASSERT_EQUAL(strncmp(h, prefix, sizeof(prefix) - 1), 0);
	/* salt and hash follow: "$<salt>$<hash>" */
	CU_ASSERT_PTR_NOT_NULL(strchr(h + sizeof(prefix) - 1, '$'));
}

static void test_auth_password_verify_ok(void)
{
	char h[SVC_AUTH_HASH_MAX], e[SVC_AUTH_HASH_MAX];

	CU_ASSERT_EQUAL_FATAL(svc_auth_password_hash(PW, strlen(PW), h), 0);
	CU_ASSERT_EQUAL(svc_auth_password_verify(h, PW, strlen(PW)), 0);
	/* The empty password is a password too (length checks are the caller's). */
	CU_ASSERT_EQUAL_FATAL(svc_auth_password_hash("", 0, e), 0);
	CU_ASSERT_EQUAL(svc_auth_password_verify(e, "", 0), 0);
	CU_ASSERT_EQUAL(svc_auth_password_verify(e, PW, strlen(PW)), SVC_E_UNAUTHORIZED);
}

static void test_auth_password_wrong_refused(void)
{
	char h[SVC_AUTH_HASH_MAX];
	static const char nul[] = "pass\0word";

	CU_ASSERT_EQUAL_FATAL(svc_auth_password_hash(PW, strlen(PW), h), 0);
	CU_ASSERT_EQUAL(svc_auth_password_verify(h, "Correct horse battery staple", strlen(PW)),
			SVC_E_UNAUTHORIZED);
	CU_ASSERT_EQUAL(svc_auth_password_verify(h, PW, strlen(PW) - 1), SVC_E_UNAUTHORIZED);
	CU_ASSERT_EQUAL(svc_auth_password_verify(h, PW "!", strlen(PW) + 1), SVC_E_UNAUTHORIZED);
	CU_ASSERT_EQUAL(svc_auth_password_verify(h, "", 0), SVC_E_UNAUTHORIZED);
	/* `len` counts bytes, NULs included: "pass" is not "pass\0word". */
	CU_ASSERT_EQUAL_FATAL(svc_auth_password_hash(nul, sizeof(nul) - 1, h), 0);
	CU_ASSERT_EQUAL(svc_auth_password_verify(h, nul, sizeof(nul) - 1), 0);
	CU_ASSERT_EQUAL(svc_auth_password_verify(h, nul, 4), SVC_E_UNAUTHORIZED);
}

static void test_auth_password_malformed_hash_refused(void)
{
	char h[SVC_AUTH_HASH_MAX], m[SVC_AUTH_HASH_MAX], argon2i[crypto_pwhash_STRBYTES];
	char unterminated[SVC_AUTH_HASH_MAX];
	const char *p;
	size_t n;

	CU_ASSERT_EQUAL_FATAL(svc_auth_password_hash(PW, strlen(PW), h), 0);
	n = strlen(h);

	p = "";
	CU_ASSERT_EQUAL(svc_auth_password_verify(p, PW, strlen(PW)), SVC_E_UNAUTHORIZED);
	p = "$argon2id$";
	CU_ASSERT_EQUAL(svc_auth_password_verify(p, PW, strlen(PW)), SVC_E_UNAUTHORIZED);
	p = "$argon2id$v=19$m=19456,t=2,p=1$";
	CU_ASSERT_EQUAL(svc_auth_password_verify(p, PW, strlen(PW)), SVC_E_UNAUTHORIZED);
	p = PW;
	CU_ASSERT_EQUAL(svc_auth_password_verify(p, PW, strlen(PW)), SVC_E_UNAUTHORIZED);

	/* truncated */
	memcpy(m, h, sizeof(m));
	m[n - 5] = '\0';
	CU_ASSERT_EQUAL(svc_auth_password_verify(m, PW, strlen(PW)), SVC_E_UNAUTHORIZED);
	/* one digest character changed */
	memcpy(m, h, sizeof(m));
	m[n - 3] = m[n - 3] == 'A' ? 'B' : 'A';
	CU_ASSERT_EQUAL(svc_auth_password_verify(m, PW, strlen(PW)), SVC_E_UNAUTHORIZED);
	/* parameters edited */
	memcpy(m, h, sizeof(m));
	m[strlen("$argon2id$v=19$m=19456,t=")] = '3';
	CU_ASSERT_EQUAL(svc_auth_password_verify(m, PW, strlen(PW)), SVC_E_UNAUTHORIZED);
	/* no NUL within SVC_AUTH_HASH_MAX bytes: refused without reading past it (ASan) */
	memcpy(unterminated, h, n);
	memset(unterminated + n, 'A', sizeof(unterminated) - n);
	CU_ASSERT_EQUAL(svc_auth_password_verify(unterminated, PW, strlen(PW)), SVC_E_UNAUTHORIZED);
	/* a valid Argon2i (not id; its minimum t is 3) hash of the right password: only Argon2id is ours */
	CU_ASSERT_EQUAL_FATAL(sodium_init() >= 0, 1);
	CU_ASSERT_EQUAL_FATAL(crypto_pwhash_str_alg(argon2i, PW, strlen(PW), 3, 19456 * 1024,
						    crypto_pwhash_ALG_ARGON2I13), 0);
	CU_ASSERT_EQUAL(crypto_pwhash_str_verify(argon2i, PW, strlen(PW)), 0);
	CU_ASSERT_EQUAL(svc_auth_password_verify(argon2i, PW, strlen(PW)), SVC_E_UNAUTHORIZED);
}

static void test_auth_password_null_hash_refused(void)
{
	CU_ASSERT_EQUAL(svc_auth_password_verify(NULL, PW, strlen(PW)), SVC_E_UNAUTHORIZED);
	CU_ASSERT_EQUAL(svc_auth_password_verify(NULL, "", 0), SVC_E_UNAUTHORIZED);
	CU_ASSERT_EQUAL(svc_auth_password_verify(NULL, PW, strlen(PW)), SVC_E_UNAUTHORIZED);
	CU_ASSERT_EQUAL(svc_auth_password_verify(NULL, "svc-dummy-password-for-unknown-users",
						 strlen("svc-dummy-password-for-unknown-users")),
			SVC_E_UNAUTHORIZED);
}

static void test_auth_password_salted(void)
{
	char a[SVC_AUTH_HASH_MAX], b[SVC_AUTH_HASH_MAX];

	CU_ASSERT_EQUAL_FATAL(svc_auth_password_hash(PW, strlen(PW), a), 0);
	CU_ASSERT_EQUAL_FATAL(svc_auth_password_hash(PW, strlen(PW), b), 0);
	CU_ASSERT_STRING_NOT_EQUAL(a, b);
	CU_ASSERT_EQUAL(svc_auth_password_verify(a, PW, strlen(PW)), 0);
	CU_ASSERT_EQUAL(svc_auth_password_verify(b, PW, strlen(PW)), 0);
}

static void test_auth_password_bad_args(void)
{
	char h[SVC_AUTH_HASH_MAX];

	CU_ASSERT_EQUAL(svc_auth_password_hash(NULL, 3, h), SVC_E_INTERNAL);
	CU_ASSERT_EQUAL(svc_auth_password_hash(PW, strlen(PW), NULL), SVC_E_INTERNAL);
	CU_ASSERT_EQUAL_FATAL(svc_auth_password_hash(PW, strlen(PW), h), 0);
	CU_ASSERT_EQUAL(svc_auth_password_verify(h, NULL, 3), SVC_E_UNAUTHORIZED);
}

SVC_TEST_SUITE(auth_password)
{
	CU_pSuite s = CU_add_suite("auth_password", NULL, NULL);

	CU_add_test(s, "hash_format", test_auth_password_hash_format);
	CU_add_test(s, "verify_ok", test_auth_password_verify_ok);
	CU_add_test(s, "wrong_refused", test_auth_password_wrong_refused);
	CU_add_test(s, "malformed_hash_refused", test_auth_password_malformed_hash_refused);
	CU_add_test(s, "null_hash_refused", test_auth_password_null_hash_refused);
	CU_add_test(s, "salted", test_auth_password_salted);
	CU_add_test(s, "bad_args", test_auth_password_bad_args);
}
