/* util.c: bounded buffers, array growth, time stamps, UUIDs, hex and SHA-256, strict number parsing, UTF-8, cookies. */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include "core/err.h"
#include "core/util.h"

void svc_buf_init(struct svc_buf *b, size_t max)
{
	b->data = NULL;
	b->len = 0;
	b->cap = 0;
	b->max = max;
}

int svc__array_grow(void *arrp, size_t *cap, size_t need, size_t elem)
{
	void *arr, *p;
	size_t ncap;

	if (need <= *cap)
		return 0;
	ncap = *cap ? (*cap > SIZE_MAX / 2 ? SIZE_MAX : *cap * 2) : 16;
	if (ncap < need)
		ncap = need;
	/* no object may be larger than PTRDIFF_MAX bytes (C11 6.5.6: pointer subtraction) */
	if (elem && ncap > (size_t)PTRDIFF_MAX / elem)
		ncap = need; /* doubling would be too much: just what is needed */
	if (elem && ncap > (size_t)PTRDIFF_MAX / elem)
		return SVC_E_INTERNAL;
	/* the caller's pointer is read and written through its bytes, whatever its type */
	memcpy(&arr, arrp, sizeof arr);
	if (!(p = realloc(arr, ncap * elem)))
		return SVC_E_INTERNAL;
	memcpy(arrp, &p, sizeof p);
	*cap = ncap;
	return 0;
}

static int buf_grow(struct svc_buf *b, size_t extra)
{
	if (extra > b->max || b->len > b->max - extra)
		return SVC_E_TOO_LARGE;
	if (b->len + extra + 1 <= b->cap)
		return 0;
	/* 64 bytes at first; a buffer never takes more than max + 1 */
	return SVC_ARRAY_GROW(b->data, b->cap, b->len + extra + 1 > 64 ? b->len + extra + 1 : 64);
}

int svc_buf_add(struct svc_buf *b, const void *data, size_t len)
{
	int err = buf_grow(b, len);

	if (err < 0)
		return err;
	if (len)
		memcpy(b->data + b->len, data, len);
	b->len += len;
	b->data[b->len] = '\0';
	return 0;
}

int svc_buf_adds(struct svc_buf *b, const char *s)
{
	return svc_buf_add(b, s, strlen(s));
}

int svc_buf_addf(struct svc_buf *b, const char *fmt, ...)
{
	va_list ap;
	int n, err;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return SVC_E_INTERNAL;
	if ((err = buf_grow(b, (size_t)n)) < 0)
		return err;
	va_start(ap, fmt);
	vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
	return 0;
}

const char *svc_buf_str(const struct svc_buf *b)
{
	return b->data ? b->data : "";
}

void svc_buf_reset(struct svc_buf *b)
{
	b->len = 0;
	if (b->data)
		b->data[0] = '\0';
}

void svc_buf_dispose(struct svc_buf *b)
{
	free(b->data);
	svc_buf_init(b, b->max);
}

void svc_buf_wipe(struct svc_buf *b)
{
	if (b->data)
		OPENSSL_cleanse(b->data, b->len);
	svc_buf_dispose(b);
}

char *svc_buf_detach(struct svc_buf *b, size_t *out_len)
{
	char *p = b->data;

	if (!p)
		p = calloc(1, 1);
	if (out_len)
		*out_len = b->len;
	svc_buf_init(b, b->max);
	return p;
}

int64_t svc_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t svc_mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void svc_time_format(int64_t ms, char *out)
{
	time_t s = (time_t)(ms / 1000);
	struct tm tm;
	int milli = (int)(ms % 1000);

	if (milli < 0) {
		milli += 1000;
		s -= 1;
	}
	char tmp[96];

	gmtime_r(&s, &tm);
	snprintf(tmp, sizeof tmp, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
		 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, milli);
	memcpy(out, tmp, 24);
	out[24] = '\0';
}

int svc_time_from_db(const char *db, char *out)
{
	/* "YYYY-MM-DD HH:MM:SS" optionally followed by ".f", ".ff", ".fff" ... */
	size_t len = strlen(db), i;
	char frac[4] = "000";

	if (len < 19 || db[10] != ' ')
		return SVC_E_INTERNAL;
	for (i = 0; i < 19; i++) {
		int digit = db[i] >= '0' && db[i] <= '9';
		if (i == 4 || i == 7) {
			if (db[i] != '-')
				return SVC_E_INTERNAL;
		} else if (i == 13 || i == 16) {
			if (db[i] != ':')
				return SVC_E_INTERNAL;
		} else if (i != 10 && !digit) {
			return SVC_E_INTERNAL;
		}
	}
	if (len > 19) {
		if (db[19] != '.')
			return SVC_E_INTERNAL;
		for (i = 20; i < len && i < 23; i++)
			frac[i - 20] = db[i];
	}
	memcpy(out, db, 10);
	out[10] = 'T';
	memcpy(out + 11, db + 11, 8);
	out[19] = '.';
	memcpy(out + 20, frac, 3);
	out[23] = 'Z';
	out[24] = '\0';
	return 0;
}

int svc_random(void *out, size_t n)
{
	if (n > (size_t)INT32_MAX || RAND_bytes(out, (int)n) != 1)
		return SVC_E_INTERNAL;
	return 0;
}

int svc_random_hex(char *out, size_t n)
{
	unsigned char raw[64];
	size_t done = 0;

	while (done < n) {
		size_t chunk = n - done > sizeof raw ? sizeof raw : n - done;
		if (svc_random(raw, chunk) < 0)
			return SVC_E_INTERNAL;
		svc_hex_encode(raw, chunk, out + 2 * done);
		done += chunk;
	}
	out[2 * n] = '\0';
	OPENSSL_cleanse(raw, sizeof raw);
	return 0;
}

void svc_hex_encode(const void *in, size_t n, char *out)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *p = in;
	size_t i;

	for (i = 0; i < n; i++) {
		out[2 * i] = hex[p[i] >> 4];
		out[2 * i + 1] = hex[p[i] & 15];
	}
	out[2 * n] = '\0';
}

int svc_hex_digit(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int svc_hex_decode(const char *hex, size_t len, void *out)
{
	unsigned char *o = out;
	size_t i;

	if (len % 2)
		return SVC_E_VALIDATION;
	for (i = 0; i < len / 2; i++) {
		int hi = svc_hex_digit(hex[2 * i]), lo = svc_hex_digit(hex[2 * i + 1]);
		if (hi < 0 || lo < 0)
			return SVC_E_VALIDATION;
		o[i] = (unsigned char)(hi << 4 | lo);
	}
	return 0;
}

int svc_sha256_hex(const void *data, size_t len, char *out)
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0;

	out[0] = '\0';
	if (!EVP_Digest(len ? data : "", len, md, &mdlen, EVP_sha256(), NULL) || mdlen * 2 != SVC_SHA256_HEX_LEN)
		return SVC_E_INTERNAL;
	svc_hex_encode(md, mdlen, out);
	OPENSSL_cleanse(md, sizeof md);
	return 0;
}

void svc_uuid_format(const void *bytes, char *out)
{
	char hex[33];
	size_t i, o = 0;

	svc_hex_encode(bytes, 16, hex);
	for (i = 0; i < 32; i++) {
		if (i == 8 || i == 12 || i == 16 || i == 20)
			out[o++] = '-';
		out[o++] = hex[i];
	}
	out[o] = '\0';
}

int svc_uuid_parse(const char *s, void *out)
{
	char hex[32];
	size_t i, o = 0;

	if (!svc_uuid_valid(s))
		return SVC_E_VALIDATION;
	for (i = 0; i < 36; i++)
		if (s[i] != '-')
			hex[o++] = s[i];
	return svc_hex_decode(hex, sizeof hex, out);
}

int svc_uuid_v4(char *out)
{
	unsigned char r[16];

	if (svc_random(r, sizeof r) < 0)
		return SVC_E_INTERNAL;
	r[6] = (unsigned char)((r[6] & 0x0f) | 0x40);
	r[8] = (unsigned char)((r[8] & 0x3f) | 0x80);
	svc_uuid_format(r, out);
	return 0;
}

int svc_uuid_valid(const char *s)
{
	size_t i;

	if (!s)
		return 0;
	for (i = 0; i < 36; i++) {
		char c = s[i];
		if (i == 8 || i == 13 || i == 18 || i == 23) {
			if (c != '-')
				return 0;
		} else if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') ||
			     (c >= 'A' && c <= 'F'))) {
			return 0;
		}
	}
	return s[36] == '\0';
}

int svc_parse_u64(const char *s, uint64_t max, uint64_t *out)
{
	uint64_t v = 0;
	const char *p = s;

	if (!s || !*s)
		return SVC_E_VALIDATION;
	for (; *p; p++) {
		unsigned d;
		if (*p < '0' || *p > '9')
			return SVC_E_VALIDATION;
		d = (unsigned)(*p - '0');
		if (v > (UINT64_MAX - d) / 10)
			return SVC_E_VALIDATION;
		v = v * 10 + d;
	}
	if (v > max)
		return SVC_E_VALIDATION;
	*out = v;
	return 0;
}

int svc_utf8_valid(const char *s, size_t len)
{
	size_t i = 0, n;
	uint32_t cp;

	while (i < len) {
		if ((unsigned char)s[i] - 1u < 0x7fu) { /* ASCII other than NUL */
			i++;
			continue;
		}
		if (!(n = svc_utf8_decode(s + i, len - i, &cp)) || cp == 0)
			return 0;
		i += n;
	}
	return 1;
}

size_t svc_utf8_count(const char *s, size_t len)
{
	size_t i, n = 0;

	for (i = 0; i < len; i++)
		if (((unsigned char)s[i] & 0xc0) != 0x80)
			n++;
	return n;
}

size_t svc_utf8_cut(const char *str, size_t len, size_t max)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t end = max, need;

	if (len <= max)
		return len;
	while (end > 0 && (s[end - 1] & 0xc0) == 0x80)
		end--; /* back over the continuation bytes before max */
	if (end == 0 || s[end - 1] < 0xc0)
		return max; /* max follows ASCII or stray continuation bytes */
	need = s[end - 1] >= 0xf0 ? 4 : s[end - 1] >= 0xe0 ? 3 : 2;
	return max - (end - 1) < need ? end - 1 : max;
}

int svc_is_blank(const char *s)
{
	for (; *s; s++)
		if (*s != ' ' && *s != '\t' && *s != '\n' && *s != '\r' && *s != '\f' && *s != '\v')
			return 0;
	return 1;
}

int svc_secret_equal(const char *a, size_t alen, const char *b, size_t blen)
{
	if (alen != blen)
		return 0;
	return CRYPTO_memcmp(a, b, alen) == 0;
}

/*
 * One "name=value" pair of a Cookie header at *h (RFC 6265 §5.2): the name in
 * [*n0, *n1) and the value in [*v0, *v1), white space trimmed; *h moves past
 * it. Pairs without "=" are skipped. Returns 0 at the end of the header.
 */
static int cookie_next(const char **h, const char **n0, const char **n1, const char **v0, const char **v1)
{
	const char *end, *eq;

	while (*h && **h) {
		end = *h + strcspn(*h, ";");
		eq = memchr(*h, '=', (size_t)(end - *h));
		if (eq) {
			for (*n0 = *h; *n0 < eq && (**n0 == ' ' || **n0 == '\t'); (*n0)++)
				;
			for (*n1 = eq; *n1 > *n0 && ((*n1)[-1] == ' ' || (*n1)[-1] == '\t'); (*n1)--)
				;
			for (*v0 = eq + 1; *v0 < end && (**v0 == ' ' || **v0 == '\t'); (*v0)++)
				;
			for (*v1 = end; *v1 > *v0 && ((*v1)[-1] == ' ' || (*v1)[-1] == '\t'); (*v1)--)
				;
		}
		*h = *end ? end + 1 : end;
		if (eq)
			return 1;
	}
	return 0;
}

int svc_cookie_get(const char *header, const char *name, char *out, size_t max)
{
	const char *h = header, *n0, *n1, *v0, *v1;
	size_t nlen = strlen(name);

	while (cookie_next(&h, &n0, &n1, &v0, &v1)) {
		if (nlen && (size_t)(n1 - n0) == nlen && memcmp(n0, name, nlen) == 0) {
			if (v1 - v0 >= 2 && *v0 == '"' && v1[-1] == '"') {
				v0++;
				v1--;
			}
			if ((size_t)(v1 - v0) >= max)
				return 0;
			memcpy(out, v0, (size_t)(v1 - v0));
			out[v1 - v0] = '\0';
			return 1;
		}
	}
	return 0;
}

size_t svc_cookie_count(const char *header, const char *name)
{
	const char *h = header, *n0, *n1, *v0, *v1;
	size_t nlen = strlen(name), n = 0;

	while (cookie_next(&h, &n0, &n1, &v0, &v1))
		if (nlen && (size_t)(n1 - n0) == nlen && memcmp(n0, name, nlen) == 0)
			n++;
	return n;
}
