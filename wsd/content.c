/* content.c: what svc-wsd checks of a file's content: whether the document can hold it as text, and its SHA-256 (the hashes of collab_files). */
#include <string.h>

#include <openssl/sha.h>

#include "core/util.h"
#include "wsd.h"

void wsd_sha256_hex(const void *data, size_t len, char *out)
{
	static const char digits[] = "0123456789abcdef";
	unsigned char d[SHA256_DIGEST_LENGTH];
	size_t i;

	SHA256(len ? data : (const void *)"", len, d);
	for (i = 0; i < sizeof d; i++) {
		out[2 * i] = digits[d[i] >> 4];
		out[2 * i + 1] = digits[d[i] & 15];
	}
	out[64] = '\0';
}

int wsd_is_text(const char *data, size_t len)
{
	return memchr(data, '\0', len) == NULL && svc_utf8_valid(data, len);
}
