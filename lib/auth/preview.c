/* preview.c: making and checking preview tokens, the DNS label of a project's preview origin (preview.h). */
#include <string.h>
#include <strings.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "auth/preview.h"
#include "core/err.h"
#include "core/util.h"

#define ID_LEN 16
#define BODY_LEN (1 + ID_LEN + 4) /* ver || id || expiry */
#define MAC_LEN 16
#define RAW_LEN (BODY_LEN + MAC_LEN)

static const char B32[] = "abcdefghijklmnopqrstuvwxyz234567";

/* The truncated mac of the token body: HMAC-SHA256 under a key derived from `secret` for previews only. */
static int token_mac(const char *secret, size_t secret_len, const unsigned char *body, unsigned char *out)
{
	static const char label[] = "svc preview token v1";
	unsigned char key[EVP_MAX_MD_SIZE], mac[EVP_MAX_MD_SIZE];
	unsigned keylen = 0, maclen = 0;
	int err = 0;

	if (!secret || secret_len < 32 || secret_len > 1024)
		return SVC_E_INTERNAL;
	if (!HMAC(EVP_sha256(), secret, (int)secret_len, (const unsigned char *)label, sizeof label - 1, key, &keylen) ||
	    !HMAC(EVP_sha256(), key, (int)keylen, body, BODY_LEN, mac, &maclen) || maclen != 32)
		err = SVC_E_INTERNAL;
	else
		memcpy(out, mac, MAC_LEN);
	OPENSSL_cleanse(key, sizeof key);
	OPENSSL_cleanse(mac, sizeof mac);
	return err;
}

int svc_preview_token_make(const char *secret, size_t secret_len, const char *project_id, int64_t expires,
			   char *out)
{
	unsigned char raw[RAW_LEN];
	uint32_t acc = 0;
	size_t i, o = 0;
	int bits = 0, err;

	if (expires < 1 || expires > (int64_t)UINT32_MAX)
		return SVC_E_INTERNAL;
	raw[0] = SVC_PREVIEW_VERSION;
	if (!project_id || svc_uuid_parse(project_id, raw + 1) < 0)
		return SVC_E_INTERNAL;
	for (i = 0; i < 4; i++)
		raw[1 + ID_LEN + i] = (unsigned char)((uint64_t)expires >> (24 - 8 * i));
	if ((err = token_mac(secret, secret_len, raw, raw + BODY_LEN)) < 0)
		return err;
	/* RFC 4648 §6, lower case, without padding */
	for (i = 0; i < RAW_LEN; i++) {
		acc = (acc << 8) | raw[i];
		bits += 8;
		while (bits >= 5) {
			out[o++] = B32[(acc >> (bits - 5)) & 31];
			bits -= 5;
		}
	}
	if (bits > 0)
		out[o++] = B32[(acc << (5 - bits)) & 31];
	out[o] = '\0';
	return 0;
}

int svc_preview_token_check(const char *secret, size_t secret_len, const char *token, size_t len, int64_t now,
			    char *out_project_id, int64_t *out_expires)
{
	unsigned char raw[RAW_LEN], want[MAC_LEN];
	uint32_t acc = 0;
	int64_t expires = 0;
	size_t i, o = 0;
	int bits = 0;

	if (!token || len != SVC_PREVIEW_TOKEN_LEN)
		return SVC_E_FORBIDDEN;
	for (i = 0; i < len; i++) {
		char c = token[i];
		const char *p;
		if (c >= 'A' && c <= 'Z')
			c = (char)(c - 'A' + 'a');
		p = c ? strchr(B32, c) : NULL;
		if (!p)
			return SVC_E_FORBIDDEN;
		acc = (acc << 5) | (uint32_t)(p - B32);
		bits += 5;
		if (bits >= 8) {
			raw[o++] = (unsigned char)(acc >> (bits - 8));
			bits -= 8;
		}
	}
	/* one spelling per token: the bits past the last byte are zero */
	if (o != RAW_LEN || (acc & ((1u << bits) - 1)) != 0 || raw[0] != SVC_PREVIEW_VERSION)
		return SVC_E_FORBIDDEN;
	if (token_mac(secret, secret_len, raw, want) < 0 || CRYPTO_memcmp(want, raw + BODY_LEN, MAC_LEN) != 0)
		return SVC_E_FORBIDDEN;
	for (i = 0; i < 4; i++)
		expires = (expires << 8) | raw[1 + ID_LEN + i];
	if (now >= expires)
		return SVC_E_FORBIDDEN;
	svc_uuid_format(raw + 1, out_project_id);
	if (out_expires)
		*out_expires = expires;
	return 0;
}

#define PREVIEW_LABEL "preview" /* <token>.preview.<SVC_DOMAIN> */

int svc_preview_host_check(const char *secret, size_t secret_len, const char *domain, const char *host, int64_t now,
			   char *out_project_id)
{
	size_t hlen, dlen = strlen(domain), plen = sizeof PREVIEW_LABEL; /* "preview." */
	const char *dot, *rest;

	if (!host)
		return SVC_E_FORBIDDEN;
	hlen = strcspn(host, ":");
	dot = memchr(host, '.', hlen);
	if (!dot || dot == host)
		return SVC_E_FORBIDDEN;
	rest = dot + 1;
	if ((size_t)(host + hlen - rest) != plen + dlen || strncasecmp(rest, PREVIEW_LABEL ".", plen) != 0 ||
	    strncasecmp(rest + plen, domain, dlen) != 0)
		return SVC_E_FORBIDDEN;
	return svc_preview_token_check(secret, secret_len, host, (size_t)(dot - host), now, out_project_id, NULL);
}
