/* util.c: bounded buffers, time stamps, UUIDs, strict number parsing, UTF-8 checks. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/crypto.h>
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

static int buf_grow(struct svc_buf *b, size_t extra)
{
	size_t need, cap;
	char *p;

	if (extra > b->max || b->len > b->max - extra)
		return SVC_E_TOO_LARGE;
	need = b->len + extra + 1;
	if (need <= b->cap)
		return 0;
	cap = b->cap ? b->cap : 64;
	while (cap < need)
		cap = cap > SIZE_MAX / 2 ? need : cap * 2;
	p = realloc(b->data, cap);
	if (!p)
		return SVC_E_INTERNAL;
	b->data = p;
	b->cap = cap;
	return 0;
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
	static const char hex[] = "0123456789abcdef";
	unsigned char raw[64];
	size_t i, done = 0;

	while (done < n) {
		size_t chunk = n - done > sizeof raw ? sizeof raw : n - done;
		if (svc_random(raw, chunk) < 0)
			return SVC_E_INTERNAL;
		for (i = 0; i < chunk; i++) {
			out[2 * (done + i)] = hex[raw[i] >> 4];
			out[2 * (done + i) + 1] = hex[raw[i] & 15];
		}
		done += chunk;
	}
	out[2 * n] = '\0';
	OPENSSL_cleanse(raw, sizeof raw);
	return 0;
}

int svc_uuid_v4(char *out)
{
	static const char hex[] = "0123456789abcdef";
	unsigned char r[16];
	size_t i, o = 0;

	if (svc_random(r, sizeof r) < 0)
		return SVC_E_INTERNAL;
	r[6] = (unsigned char)((r[6] & 0x0f) | 0x40);
	r[8] = (unsigned char)((r[8] & 0x3f) | 0x80);
	for (i = 0; i < 16; i++) {
		if (i == 4 || i == 6 || i == 8 || i == 10)
			out[o++] = '-';
		out[o++] = hex[r[i] >> 4];
		out[o++] = hex[r[i] & 15];
	}
	out[o] = '\0';
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

int svc_utf8_valid(const char *str, size_t len)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0;

	while (i < len) {
		unsigned char c = s[i];
		uint32_t cp;
		size_t n, k;

		if (c == 0)
			return 0;
		if (c < 0x80) {
			i++;
			continue;
		} else if ((c & 0xe0) == 0xc0) {
			n = 1;
			cp = c & 0x1f;
		} else if ((c & 0xf0) == 0xe0) {
			n = 2;
			cp = c & 0x0f;
		} else if ((c & 0xf8) == 0xf0) {
			n = 3;
			cp = c & 0x07;
		} else {
			return 0;
		}
		if (len - i <= n)
			return 0;
		for (k = 1; k <= n; k++) {
			if ((s[i + k] & 0xc0) != 0x80)
				return 0;
			cp = (cp << 6) | (s[i + k] & 0x3f);
		}
		if ((n == 1 && cp < 0x80) || (n == 2 && cp < 0x800) || (n == 3 && cp < 0x10000) ||
		    cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
			return 0;
		i += n + 1;
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
