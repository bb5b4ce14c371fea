/*
 * fuzz_jwt.c: libFuzzer target for token verification (lib/auth): JWTs
 * (svc_auth_jwt_verify_gen, both kinds) and the OAuth state with its cookie
 * (svc_oauth_state_check).
 *
 * The first input byte picks the mode. Mode 0: the rest is a token as a
 * client sends it. Mode 1: the rest is "HEADER\nPAYLOAD" (JSON texts), which
 * the target encodes and signs with the verifier's own secret, so the claim
 * checks behind the MAC (alg, iss, exp, kind, sub, gen) see untrusted JSON
 * too; a forger cannot do that, but a bug behind the MAC is still a bug.
 * Mode 2: "STATE\nCOOKIE" for the OAuth state check.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "auth/auth.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char secret[] = "0123456789abcdef0123456789abcdef";
#define NOW 1800000000 /* seconds since the epoch: a fixed clock */

/* Appends base64url (RFC 4648 §5, no padding) of `len` bytes at `in` to `out` at *o. */
static void b64url(const unsigned char *in, size_t len, char *out, size_t *o)
{
	static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
	size_t i;

	for (i = 0; i + 2 < len; i += 3) {
		unsigned v = (unsigned)in[i] << 16 | (unsigned)in[i + 1] << 8 | in[i + 2];
		out[(*o)++] = tab[v >> 18 & 63];
		out[(*o)++] = tab[v >> 12 & 63];
		out[(*o)++] = tab[v >> 6 & 63];
		out[(*o)++] = tab[v & 63];
	}
	if (len - i == 1) {
		unsigned v = (unsigned)in[i] << 16;
		out[(*o)++] = tab[v >> 18 & 63];
		out[(*o)++] = tab[v >> 12 & 63];
	} else if (len - i == 2) {
		unsigned v = (unsigned)in[i] << 16 | (unsigned)in[i + 1] << 8;
		out[(*o)++] = tab[v >> 18 & 63];
		out[(*o)++] = tab[v >> 12 & 63];
		out[(*o)++] = tab[v >> 6 & 63];
	}
	out[*o] = '\0';
}

static void verify(const char *token)
{
	char user[37];
	int64_t gen;

	svc_auth_jwt_verify_gen(secret, 32, "svc", SVC_TOKEN_ACCESS, token, NOW, user, &gen);
	svc_auth_jwt_verify_gen(secret, 32, "svc", SVC_TOKEN_REFRESH, token, NOW, user, &gen);
	svc_auth_jwt_verify(secret, 32, "svc", SVC_TOKEN_ACCESS, token, NOW, user);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text, *nl;
	size_t n;

	if (size < 1 || size > 64 * 1024)
		return 0;
	n = size - 1;
	text = malloc(n + 1);
	if (!text)
		return 0;
	memcpy(text, data + 1, n);
	text[n] = '\0';
	nl = strchr(text, '\n');
	switch (data[0] % 3) {
	case 0:
		verify(text);
		break;
	case 1:
		if (nl) {
			size_t hl = (size_t)(nl - text), pl = strlen(nl + 1), o = 0;
			char *tok = malloc((hl + pl) * 4 / 3 + 64);
			unsigned char mac[EVP_MAX_MD_SIZE];
			unsigned maclen = 0;
			if (!tok)
				break;
			b64url((const unsigned char *)text, hl, tok, &o);
			tok[o++] = '.';
			b64url((const unsigned char *)nl + 1, pl, tok, &o);
			if (HMAC(EVP_sha256(), secret, 32, (const unsigned char *)tok, o, mac, &maclen)) {
				tok[o++] = '.';
				b64url(mac, maclen, tok, &o);
				verify(tok);
			}
			free(tok);
		}
		break;
	default:
		if (nl) {
			char verifier[SVC_OAUTH_VERIFIER_LEN + 1];
			*nl = '\0';
			svc_oauth_state_check(secret, 32, "github", "signin", "", text, nl + 1, NOW, verifier);
		}
		break;
	}
	free(text);
	return 0;
}
