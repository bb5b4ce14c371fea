/* auth_jwt.c: issue and verify HS256 session tokens with libjwt 1.10, doing every check it leaves out. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>
#include <jwt.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include "auth/auth.h"
#include "core/err.h"
#include "core/util.h"

#define SECRET_MIN 32          /* bytes; RFC 7518 §3.2: at least the hash size */
#define JTI_BYTES 16
#define UUID_LEN 36
#define SIG_LEN 43             /* base64url characters of an HS256 signature (32 bytes, no padding) */

static const char *kind_name(enum svc_token_kind kind)
{
	switch (kind) {
	case SVC_TOKEN_ACCESS:
		return "access";
	case SVC_TOKEN_REFRESH:
		return "refresh";
	}
	return NULL;
}

static int is_hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* 8-4-4-4-12 hex digits, either case; `s` is NUL-terminated. */
static int is_uuid(const char *s)
{
	size_t i;

	for (i = 0; i < UUID_LEN; i++) {
		if (i == 8 || i == 13 || i == 18 || i == 23) {
			if (s[i] != '-')
				return 0;
		} else if (!is_hex(s[i])) {
			return 0;   /* also stops at an early NUL */
		}
	}
	return s[UUID_LEN] == '\0';
}

/*
 * The compact serialization before libjwt sees it: three non-empty
 * base64url segments separated by exactly two dots, nothing else.
 * `len` is strlen(token).
 */
static int is_compact_jws(const char *token, size_t len)
{
	size_t i, dots = 0, seg = 0;

	for (i = 0; i < len; i++) {
		char c = token[i];

		if (c == '.') {
			if (seg == 0 || ++dots > 2)
				return 0;
			seg = 0;
		} else if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
			   (c >= '0' && c <= '9') || c == '-' || c == '_') {
			seg++;
		} else {
			return 0;
		}
	}
	return dots == 2 && seg > 0;
}

/* Parses a JSON text produced by libjwt and returns it if it is an object, else NULL. */
static json_object *parse_object(const char *text)
{
	json_object *o;

	if (!text)
		return NULL;
	o = json_tokener_parse(text);
	if (o && !json_object_is_type(o, json_type_object)) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

/* Returns the string member `key` of `o`, or NULL if it is missing or not a string. */
static const char *get_string(json_object *o, const char *key)
{
	json_object *v;

	if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
		return NULL;
	return json_object_get_string(v);
}

int svc_auth_jwt_issue(const char *secret, size_t secret_len, const char *issuer,
		       enum svc_token_kind kind, const char *user_id, int64_t now,
		       int64_t ttl_secs, char **out)
{
	return svc_auth_jwt_issue_gen(secret, secret_len, issuer, kind, user_id, 0, now, ttl_secs, out);
}

int svc_auth_jwt_issue_gen(const char *secret, size_t secret_len, const char *issuer,
			   enum svc_token_kind kind, const char *user_id, int64_t gen, int64_t now,
			   int64_t ttl_secs, char **out)
{
	return svc_auth_jwt_issue_session(secret, secret_len, issuer, kind, user_id, gen, NULL, NULL, now, ttl_secs, out);
}

/* 1 when `s` is NULL, or exactly SVC_AUTH_ID_LEN lowercase hex digits. */
static int id_ok(const char *s)
{
	size_t i;

	if (!s)
		return 1;
	for (i = 0; i < SVC_AUTH_ID_LEN; i++) {
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	}
	return s[SVC_AUTH_ID_LEN] == '\0';
}

int svc_auth_jwt_issue_session(const char *secret, size_t secret_len, const char *issuer,
			       enum svc_token_kind kind, const char *user_id, int64_t gen, const char *family,
			       const char *jti_in, int64_t now, int64_t ttl_secs, char **out)
{
	unsigned char rnd[JTI_BYTES];
	char jti[2 * JTI_BYTES + 1];
	const char *kname = kind_name(kind);
	jwt_t *j = NULL;
	char *tok = NULL, *copy;
	int64_t exp;
	int error = SVC_E_INTERNAL;

	if (!secret || secret_len < SECRET_MIN || secret_len > INT_MAX || !issuer ||
	    !kname || !user_id || !is_uuid(user_id) || !out || ttl_secs <= 0 || gen < 0 || !id_ok(family) ||
	    !id_ok(jti_in))
		goto done;
	if (now > INT64_MAX - ttl_secs)
		goto done;
	exp = now + ttl_secs;
#if LONG_MAX < INT64_MAX
	if (now < LONG_MIN || exp > LONG_MAX || gen > LONG_MAX)   /* jwt_add_grant_int takes a long */
		goto done;
#endif
	if (jti_in) {
		memcpy(jti, jti_in, sizeof jti);
	} else {
		if (RAND_bytes(rnd, sizeof(rnd)) != 1)
			goto done;
		svc_hex_encode(rnd, JTI_BYTES, jti);
	}

	if (jwt_new(&j) != 0)
		goto done;
	if (jwt_add_grant(j, "sub", user_id) != 0 ||
	    jwt_add_grant(j, "iss", issuer) != 0 ||
	    jwt_add_grant_int(j, "iat", (long)now) != 0 ||
	    jwt_add_grant_int(j, "exp", (long)exp) != 0 ||
	    jwt_add_grant(j, "jti", jti) != 0 ||
	    jwt_add_grant(j, "kind", kname) != 0 ||
	    (gen > 0 && jwt_add_grant_int(j, "gen", (long)gen) != 0) ||
	    (family && jwt_add_grant(j, "fam", family) != 0))
		goto done;
	if (jwt_set_alg(j, JWT_ALG_HS256, (const unsigned char *)secret, (int)secret_len) != 0)
		goto done;
	tok = jwt_encode_str(j);
	if (!tok)
		goto done;
	/* Hand out our own malloc'd copy: libjwt may be built with its own allocator. */
	copy = strdup(tok);
	if (!copy)
		goto done;
	*out = copy;
	error = 0;
done:
	free(tok);
	jwt_free(j);   /* scrubs the copy of the key */
	OPENSSL_cleanse(rnd, sizeof(rnd));
	return error;
}

/*
 * RFC 7515 section 5.2 step 5 for HS256, done here in constant time before
 * libjwt sees the token: libjwt 1.10 compares the signature with strcmp,
 * which leaks how much of a forged MAC is right (the CVE-2024-25189 class).
 * The signing input is everything before the last dot; the signature must be
 * exactly the 43 base64url characters of HMAC-SHA256(secret, input).
 * `token` has passed is_compact_jws(). Returns 1 when the MAC is right.
 */
static int mac_ok(const char *secret, size_t secret_len, const char *token, size_t len)
{
	const char *dot = memchr(token, '.', len);
	unsigned char mac[EVP_MAX_MD_SIZE], text[48];
	unsigned int maclen = 0;
	size_t input_len, i;

	dot = dot ? memchr(dot + 1, '.', len - (size_t)(dot + 1 - token)) : NULL;
	if (!dot)
		return 0;
	input_len = (size_t)(dot - token);
	if (len - input_len - 1 != SIG_LEN)
		return 0;
	if (!HMAC(EVP_sha256(), secret, (int)secret_len, (const unsigned char *)token, input_len, mac, &maclen) ||
	    maclen != 32)
		return 0;
	/* base64 (44 characters with one '=') to base64url without padding */
	if (EVP_EncodeBlock(text, mac, 32) != 44)
		return 0;
	for (i = 0; i < SIG_LEN; i++)
		text[i] = text[i] == '+' ? '-' : text[i] == '/' ? '_' : text[i];
	OPENSSL_cleanse(mac, sizeof mac);
	return CRYPTO_memcmp(text, dot + 1, SIG_LEN) == 0;
}

int svc_auth_jwt_verify(const char *secret, size_t secret_len, const char *issuer,
			enum svc_token_kind kind, const char *token, int64_t now,
			char *out_user_id)
{
	int64_t gen;

	return svc_auth_jwt_verify_gen(secret, secret_len, issuer, kind, token, now, out_user_id, &gen);
}

int svc_auth_jwt_verify_gen(const char *secret, size_t secret_len, const char *issuer,
			    enum svc_token_kind kind, const char *token, int64_t now,
			    char *out_user_id, int64_t *out_gen)
{
	struct svc_auth_claims c;
	int error;

	if (!out_user_id || !out_gen)
		return SVC_E_UNAUTHORIZED;
	if ((error = svc_auth_jwt_verify_claims(secret, secret_len, issuer, kind, token, now, &c)) < 0)
		return error;
	memcpy(out_user_id, c.user_id, sizeof c.user_id);
	*out_gen = c.gen;
	return 0;
}

/* Copies the string claim `key` of `claims` into `out` (SVC_AUTH_ID_LEN + 1 bytes): "" when absent; -1 when not an id. */
static int get_id(json_object *claims, const char *key, char *out)
{
	json_object *v;
	const char *s;

	out[0] = '\0';
	if (!json_object_object_get_ex(claims, key, &v))
		return 0;
	s = json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
	if (!s || !id_ok(s))
		return -1;
	memcpy(out, s, SVC_AUTH_ID_LEN + 1);
	return 0;
}

int svc_auth_jwt_verify_claims(const char *secret, size_t secret_len, const char *issuer,
			       enum svc_token_kind kind, const char *token, int64_t now,
			       struct svc_auth_claims *out)
{
	struct svc_auth_claims c;
	const char *kname = kind_name(kind);
	jwt_t *j = NULL;
	char *hdr_text = NULL, *claims_text = NULL;
	json_object *hdr = NULL, *claims = NULL, *v;
	const char *s;
	int64_t gen, exp;
	size_t len;
	int error = SVC_E_UNAUTHORIZED;

	if (!secret || secret_len < SECRET_MIN || secret_len > INT_MAX || !issuer ||
	    !kname || !token || !out)
		goto done;
	len = strnlen(token, SVC_AUTH_TOKEN_MAX + 1);
	if (len > SVC_AUTH_TOKEN_MAX || !is_compact_jws(token, len))
		goto done;
	if (!mac_ok(secret, secret_len, token, len))
		goto done;

	/* Never a NULL key: libjwt 1.10 would then skip the signature check. */
	if (jwt_decode(&j, token, (const unsigned char *)secret, (int)secret_len) != 0 || !j)
		goto done;
	/* Same secret, other HMAC: libjwt accepts HS384/HS512 (RFC 8725 §3.1). */
	if (jwt_get_alg(j) != JWT_ALG_HS256)
		goto done;
	/* jwt_str_alg() is case-insensitive; the header must say "HS256" exactly. */
	hdr_text = jwt_get_headers_json(j, NULL);
	hdr = parse_object(hdr_text);
	if (!hdr)
		goto done;
	s = get_string(hdr, "alg");
	if (!s || strcmp(s, "HS256") != 0)
		goto done;

	claims_text = jwt_get_grants_json(j, NULL);
	claims = parse_object(claims_text);
	if (!claims)
		goto done;
	/* exp: present, a JSON integer (not a float, string or bool), and still ahead. */
	if (!json_object_object_get_ex(claims, "exp", &v) ||
	    !json_object_is_type(v, json_type_int))
		goto done;
	if ((exp = json_object_get_int64(v)) <= now)
		goto done;
	s = get_string(claims, "iss");
	if (!s || strcmp(s, issuer) != 0)
		goto done;
	s = get_string(claims, "kind");
	if (!s || strcmp(s, kname) != 0)
		goto done;
	/* gen: absent (0), or a JSON integer >= 0 */
	gen = 0;
	if (json_object_object_get_ex(claims, "gen", &v)) {
		if (!json_object_is_type(v, json_type_int) || (gen = json_object_get_int64(v)) < 0)
			goto done;
	}
	memset(&c, 0, sizeof c);
	/* jti and fam: absent, or SVC_AUTH_ID_LEN lowercase hex digits */
	if (get_id(claims, "jti", c.jti) < 0 || get_id(claims, "fam", c.family) < 0)
		goto done;
	if (json_object_object_get_ex(claims, "iat", &v) && json_object_is_type(v, json_type_int))
		c.iat = json_object_get_int64(v);
	s = get_string(claims, "sub");
	if (!s || !is_uuid(s))
		goto done;
	memcpy(c.user_id, s, UUID_LEN + 1);
	c.gen = gen;
	c.exp = exp;
	*out = c;
	error = 0;
done:
	json_object_put(claims);
	json_object_put(hdr);
	free(claims_text);
	free(hdr_text);
	jwt_free(j);
	return error;
}
