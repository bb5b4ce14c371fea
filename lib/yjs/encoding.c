/* encoding.c: lib0 binary encoding (varUint, varInt, varString, any), UTF-8/UTF-16 helpers and JSON text for lib/yjs. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "core/util.h"
#include "yjs/yjs_int.h"

void *svc_yjs__xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		abort();
	return p;
}

void *svc_yjs__xcalloc(size_t n, size_t m)
{
	void *p = calloc(n ? n : 1, m ? m : 1);
	if (!p)
		abort();
	return p;
}

void *svc_yjs__xrealloc(void *p, size_t n, size_t m)
{
	void *q;
	if (m && n > SIZE_MAX / m)
		abort();
	q = realloc(p, (n * m) != 0 ? n * m : 1);
	if (!q)
		abort();
	return q;
}

void svc_yjs_buf_dispose(struct svc_yjs_buf *b)
{
	free(b->data);
	b->data = NULL;
	b->len = b->cap = 0;
}

static void buf_reserve(struct svc_yjs_buf *b, size_t n)
{
	size_t want;
	if (n > SIZE_MAX - b->len)
		abort();
	want = b->len + n;
	if (want <= b->cap)
		return;
	if (b->cap < 64)
		b->cap = 64;
	while (b->cap < want) {
		if (b->cap > SIZE_MAX / 2)
			abort();
		b->cap *= 2;
	}
	b->data = svc_yjs__xrealloc(b->data, b->cap, 1);
}

void svc_yjs__put(struct svc_yjs_buf *b, const void *p, size_t n)
{
	if (!n)
		return;
	buf_reserve(b, n);
	memcpy(b->data + b->len, p, n);
	b->len += n;
}

void svc_yjs__put_u8(struct svc_yjs_buf *b, uint8_t v)
{
	buf_reserve(b, 1);
	b->data[b->len++] = v;
}

/* lib0 encoding.js writeVarUint */
void svc_yjs__put_varuint(struct svc_yjs_buf *b, uint64_t v)
{
	buf_reserve(b, 10);
	while (v > 0x7f) {
		b->data[b->len++] = (uint8_t)(0x80 | (v & 0x7f));
		v >>= 7;
	}
	b->data[b->len++] = (uint8_t)v;
}

/* lib0 encoding.js writeVarInt: sign-magnitude, 6 bits in the first byte. */
void svc_yjs__put_varint(struct svc_yjs_buf *b, int64_t v, int negative_zero)
{
	int neg = v < 0 || (v == 0 && negative_zero);
	uint64_t a = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
	buf_reserve(b, 11);
	b->data[b->len++] = (uint8_t)((a > 63 ? 0x80 : 0) | (neg ? 0x40 : 0) | (a & 0x3f));
	a >>= 6;
	while (a > 0) {
		b->data[b->len++] = (uint8_t)((a > 127 ? 0x80 : 0) | (a & 0x7f));
		a >>= 7;
	}
}

void svc_yjs__put_varstring(struct svc_yjs_buf *b, const void *s, size_t n)
{
	svc_yjs__put_varuint(b, n);
	svc_yjs__put(b, s, n);
}

uint8_t *svc_yjs__put_space(struct svc_yjs_buf *b, size_t n)
{
	uint8_t *p;
	buf_reserve(b, n ? n : 1);
	p = b->data + b->len;
	b->len += n;
	return p;
}

int svc_yjs__get_u8(struct ydec *d, uint8_t *out)
{
	if (d->pos >= d->len)
		return SVC_E_VALIDATION;
	*out = d->p[d->pos++];
	return 0;
}

/* lib0 decoding.js readVarUint, strict: values above 2^53-1 are errors. */
int svc_yjs__get_varuint(struct ydec *d, uint64_t *out)
{
	uint64_t v = 0;
	unsigned shift = 0;
	while (d->pos < d->len) {
		uint8_t r = d->p[d->pos++];
		if (shift >= 56 && (r & 0x7f))
			return SVC_E_VALIDATION;
		if (shift < 64)
			v |= (uint64_t)(r & 0x7f) << shift;
		if (!(r & 0x80)) {
			if (v > SVC_YJS_MAX_SAFE)
				return SVC_E_VALIDATION;
			*out = v;
			return 0;
		}
		shift += 7;
		if (shift > 70)
			return SVC_E_VALIDATION;
	}
	return SVC_E_VALIDATION;
}

/* lib0 decoding.js readVarInt; magnitude up to 2^53-1. */
static int get_varint(struct ydec *d, int64_t *out, int *negzero)
{
	uint8_t r;
	uint64_t v;
	unsigned shift = 6;
	int neg;
	if (svc_yjs__get_u8(d, &r) < 0)
		return SVC_E_VALIDATION;
	v = r & 0x3f;
	neg = (r & 0x40) != 0;
	while (r & 0x80) {
		if (svc_yjs__get_u8(d, &r) < 0)
			return SVC_E_VALIDATION;
		if (shift >= 56 && (r & 0x7f))
			return SVC_E_VALIDATION;
		if (shift < 64)
			v |= (uint64_t)(r & 0x7f) << shift;
		shift += 7;
		if (shift > 70)
			return SVC_E_VALIDATION;
	}
	if (v > SVC_YJS_MAX_SAFE)
		return SVC_E_VALIDATION;
	*out = neg ? -(int64_t)v : (int64_t)v;
	if (negzero)
		*negzero = neg && v == 0;
	return 0;
}

int svc_yjs__get_varbytes(struct ydec *d, const uint8_t **s, size_t *n)
{
	uint64_t len;
	if (svc_yjs__get_varuint(d, &len) < 0)
		return SVC_E_VALIDATION;
	if (len > d->len - d->pos)
		return SVC_E_VALIDATION;
	*s = d->p + d->pos;
	*n = (size_t)len;
	d->pos += (size_t)len;
	return 0;
}

int svc_yjs__get_varstring(struct ydec *d, const uint8_t **s, size_t *n)
{
	size_t start = d->pos;
	if (svc_yjs__get_varbytes(d, s, n) < 0)
		return SVC_E_VALIDATION;
	if (!svc_yjs__utf8_valid(*s, *n)) {
		d->pos = start;
		return SVC_E_VALIDATION;
	}
	return 0;
}

/* Strict UTF-8 (RFC 3629, svc_utf8_decode): no overlongs, no surrogates, max U+10FFFF; unlike svc_utf8_valid, NUL is allowed. */
int svc_yjs__utf8_valid(const uint8_t *s, size_t n)
{
	size_t i = 0, k;

	while (i < n) {
		if (s[i] < 0x80) {
			i++;
			continue;
		}
		if (!(k = svc_utf8_decode(s + i, n - i, NULL)))
			return 0;
		i += k;
	}
	return 1;
}

uint64_t svc_yjs__utf16_len(const uint8_t *s, size_t n)
{
	uint64_t u = 0;
	size_t i;
	for (i = 0; i < n; i++) {
		uint8_t c = s[i];
		if ((c & 0xc0) != 0x80)
			u += c >= 0xf0 ? 2 : 1;
	}
	return u;
}

size_t svc_yjs__utf16_to_byte(const uint8_t *s, size_t n, uint64_t u, int *mid)
{
	size_t i = 0;
	*mid = 0;
	while (i < n && u > 0) {
		uint8_t c = s[i];
		size_t w = c < 0x80 ? 1 : c < 0xe0 ? 2 : c < 0xf0 ? 3 : 4;
		if (w == 4) {
			if (u == 1) {
				*mid = 1;
				return i;
			}
			u -= 2;
		} else {
			u -= 1;
		}
		i += w;
	}
	return i;
}

/* ---- lib0 any ---- */

int svc_yjs__skip_any(struct ydec *d, int depth)
{
	uint8_t tag;
	uint64_t n, i;
	const uint8_t *s;
	size_t sn;
	int64_t iv;
	if (depth > YJS_MAX_DEPTH)
		return SVC_E_VALIDATION;
	if (svc_yjs__get_u8(d, &tag) < 0)
		return SVC_E_VALIDATION;
	switch (tag) {
	case 127: case 126: case 121: case 120:
		return 0;
	case 125:
		return get_varint(d, &iv, NULL);
	case 124:
		if (d->len - d->pos < 4)
			return SVC_E_VALIDATION;
		d->pos += 4;
		return 0;
	case 123: case 122:
		if (d->len - d->pos < 8)
			return SVC_E_VALIDATION;
		d->pos += 8;
		return 0;
	case 119:
		return svc_yjs__get_varstring(d, &s, &sn);
	case 116:
		return svc_yjs__get_varbytes(d, &s, &sn);
	case 118:
		if (svc_yjs__get_varuint(d, &n) < 0)
			return SVC_E_VALIDATION;
		for (i = 0; i < n; i++) {
			if (svc_yjs__get_varstring(d, &s, &sn) < 0 || svc_yjs__skip_any(d, depth + 1) < 0)
				return SVC_E_VALIDATION;
		}
		return 0;
	case 117:
		if (svc_yjs__get_varuint(d, &n) < 0)
			return SVC_E_VALIDATION;
		for (i = 0; i < n; i++) {
			if (svc_yjs__skip_any(d, depth + 1) < 0)
				return SVC_E_VALIDATION;
		}
		return 0;
	default:
		d->pos--;
		return SVC_E_VALIDATION;
	}
}

/* JSON.stringify of a string: escapes ", \, control characters. */
void svc_yjs__json_string(struct svc_yjs_buf *b, const uint8_t *s, size_t n)
{
	size_t i, run = 0;
	svc_yjs__put_u8(b, '"');
	for (i = 0; i < n; i++) {
		uint8_t c = s[i];
		const char *esc = NULL;
		char tmp[8];
		if (c == '"')
			esc = "\\\"";
		else if (c == '\\')
			esc = "\\\\";
		else if (c == '\n')
			esc = "\\n";
		else if (c == '\r')
			esc = "\\r";
		else if (c == '\t')
			esc = "\\t";
		else if (c == '\b')
			esc = "\\b";
		else if (c == '\f')
			esc = "\\f";
		else if (c < 0x20) {
			snprintf(tmp, sizeof(tmp), "\\u%04x", c);
			esc = tmp;
		}
		if (esc) {
			svc_yjs__put(b, s + run, i - run);
			svc_yjs__put(b, esc, strlen(esc));
			run = i + 1;
		}
	}
	svc_yjs__put(b, s + run, n - run);
	svc_yjs__put_u8(b, '"');
}

/* Number.prototype.toString for a finite double (ECMA-262 Number::toString). */
static void json_number(struct svc_yjs_buf *b, double v)
{
	char tmp[64], digits[32], out[64];
	int prec, k = 0, e, n, i, o = 0;
	char *p;
	if (!isfinite(v)) {
		svc_yjs__put(b, "null", 4);
		return;
	}
	if (v == 0) {
		svc_yjs__put_u8(b, '0');
		return;
	}
	if (v < 0) {
		out[o++] = '-';
		v = -v;
	}
	for (prec = 0; prec < 17; prec++) {
		snprintf(tmp, sizeof(tmp), "%.*e", prec, v);
		if (strtod(tmp, NULL) == v)
			break;
	}
	/* tmp = d[.ddd]e[+-]xx */
	for (p = tmp; *p && *p != 'e'; p++) {
		if (*p >= '0' && *p <= '9' && k < 31)
			digits[k++] = *p;
	}
	digits[k] = 0;
	e = (int)strtol(p + 1, NULL, 10);
	while (k > 1 && digits[k - 1] == '0')
		digits[--k] = 0;
	n = e + 1;
	if (k <= n && n <= 21) {
		for (i = 0; i < k; i++)
			out[o++] = digits[i];
		for (i = k; i < n; i++)
			out[o++] = '0';
	} else if (0 < n && n <= 21) {
		for (i = 0; i < n; i++)
			out[o++] = digits[i];
		out[o++] = '.';
		for (i = n; i < k; i++)
			out[o++] = digits[i];
	} else if (-6 < n && n <= 0) {
		out[o++] = '0';
		out[o++] = '.';
		for (i = 0; i < -n; i++)
			out[o++] = '0';
		for (i = 0; i < k; i++)
			out[o++] = digits[i];
	} else {
		out[o++] = digits[0];
		if (k > 1) {
			out[o++] = '.';
			for (i = 1; i < k; i++)
				out[o++] = digits[i];
		}
		o += snprintf(out + o, sizeof(out) - (size_t)o, "e%c%d", n - 1 < 0 ? '-' : '+',
			      n - 1 < 0 ? 1 - n : n - 1);
	}
	svc_yjs__put(b, out, (size_t)o);
}

static double read_f32(const uint8_t *p)
{
	uint32_t u = ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
	float f;
	memcpy(&f, &u, 4);
	return (double)f;
}

static double read_f64(const uint8_t *p)
{
	uint64_t u = 0;
	double f;
	int i;
	for (i = 0; i < 8; i++)
		u = (u << 8) | p[i];
	memcpy(&f, &u, 8);
	return f;
}

/*
 * Writes one any value as JSON.stringify would. Returns 1 (and writes
 * nothing) for `undefined`, 0 otherwise, or an error.
 */
int svc_yjs__any_to_json(struct ydec *d, struct svc_yjs_buf *b, int depth)
{
	uint8_t tag;
	uint64_t n, i;
	const uint8_t *s;
	size_t sn;
	int64_t iv;
	int first, r;
	char tmp[32];
	if (depth > YJS_MAX_DEPTH || svc_yjs__get_u8(d, &tag) < 0)
		return SVC_E_VALIDATION;
	switch (tag) {
	case 127:
		return 1;
	case 126:
		svc_yjs__put(b, "null", 4);
		return 0;
	case 121:
		svc_yjs__put(b, "false", 5);
		return 0;
	case 120:
		svc_yjs__put(b, "true", 4);
		return 0;
	case 125:
		if (get_varint(d, &iv, NULL) < 0)
			return SVC_E_VALIDATION;
		snprintf(tmp, sizeof(tmp), "%lld", (long long)iv);
		svc_yjs__put(b, tmp, strlen(tmp));
		return 0;
	case 124:
		if (d->len - d->pos < 4)
			return SVC_E_VALIDATION;
		json_number(b, read_f32(d->p + d->pos));
		d->pos += 4;
		return 0;
	case 123:
		if (d->len - d->pos < 8)
			return SVC_E_VALIDATION;
		json_number(b, read_f64(d->p + d->pos));
		d->pos += 8;
		return 0;
	case 122: {
		uint64_t u = 0;
		if (d->len - d->pos < 8)
			return SVC_E_VALIDATION;
		for (i = 0; i < 8; i++)
			u = (u << 8) | d->p[d->pos + i];
		d->pos += 8;
		snprintf(tmp, sizeof(tmp), "%lld", (long long)(int64_t)u);
		svc_yjs__put(b, tmp, strlen(tmp));
		return 0;
	}
	case 119:
		if (svc_yjs__get_varstring(d, &s, &sn) < 0)
			return SVC_E_VALIDATION;
		svc_yjs__json_string(b, s, sn);
		return 0;
	case 116:
		if (svc_yjs__get_varbytes(d, &s, &sn) < 0)
			return SVC_E_VALIDATION;
		svc_yjs__put_u8(b, '{');
		for (i = 0; i < sn; i++) { /* a Uint8Array as JSON.stringify writes it: {"0":b0,"1":b1,...} */
			if (i)
				svc_yjs__put_u8(b, ',');
			snprintf(tmp, sizeof(tmp), "%llu", (unsigned long long)i);
			svc_yjs__json_string(b, (const uint8_t *)tmp, strlen(tmp));
			svc_yjs__put_u8(b, ':');
			snprintf(tmp, sizeof(tmp), "%u", s[i]);
			svc_yjs__put(b, tmp, strlen(tmp));
		}
		svc_yjs__put_u8(b, '}');
		return 0;
	case 118:
		if (svc_yjs__get_varuint(d, &n) < 0)
			return SVC_E_VALIDATION;
		svc_yjs__put_u8(b, '{');
		first = 1;
		for (i = 0; i < n; i++) {
			size_t mark;
			if (svc_yjs__get_varstring(d, &s, &sn) < 0)
				return SVC_E_VALIDATION;
			mark = b->len;
			if (!first)
				svc_yjs__put_u8(b, ',');
			svc_yjs__json_string(b, s, sn);
			svc_yjs__put_u8(b, ':');
			r = svc_yjs__any_to_json(d, b, depth + 1);
			if (r < 0)
				return r;
			if (r == 1)
				b->len = mark;
			else
				first = 0;
		}
		svc_yjs__put_u8(b, '}');
		return 0;
	case 117:
		if (svc_yjs__get_varuint(d, &n) < 0)
			return SVC_E_VALIDATION;
		svc_yjs__put_u8(b, '[');
		for (i = 0; i < n; i++) {
			if (i)
				svc_yjs__put_u8(b, ',');
			r = svc_yjs__any_to_json(d, b, depth + 1);
			if (r < 0)
				return r;
			if (r == 1)
				svc_yjs__put(b, "null", 4);
		}
		svc_yjs__put_u8(b, ']');
		return 0;
	default:
		d->pos--;
		return SVC_E_VALIDATION;
	}
}

/* ---- JSON text -> lib0 any (writeAny(JSON.parse(text))) ---- */

struct jp {
	const char *s;
	size_t n, i;
};

static void jp_ws(struct jp *p)
{
	while (p->i < p->n && (p->s[p->i] == ' ' || p->s[p->i] == '\t' ||
			       p->s[p->i] == '\n' || p->s[p->i] == '\r'))
		p->i++;
}

static void put_utf8(struct svc_yjs_buf *b, uint32_t cp)
{
	uint8_t t[4];
	if (cp < 0x80) {
		t[0] = (uint8_t)cp;
		svc_yjs__put(b, t, 1);
	} else if (cp < 0x800) {
		t[0] = (uint8_t)(0xc0 | (cp >> 6));
		t[1] = (uint8_t)(0x80 | (cp & 0x3f));
		svc_yjs__put(b, t, 2);
	} else if (cp < 0x10000) {
		t[0] = (uint8_t)(0xe0 | (cp >> 12));
		t[1] = (uint8_t)(0x80 | ((cp >> 6) & 0x3f));
		t[2] = (uint8_t)(0x80 | (cp & 0x3f));
		svc_yjs__put(b, t, 3);
	} else {
		t[0] = (uint8_t)(0xf0 | (cp >> 18));
		t[1] = (uint8_t)(0x80 | ((cp >> 12) & 0x3f));
		t[2] = (uint8_t)(0x80 | ((cp >> 6) & 0x3f));
		t[3] = (uint8_t)(0x80 | (cp & 0x3f));
		svc_yjs__put(b, t, 4);
	}
}

static int hex4(struct jp *p, uint32_t *out)
{
	uint32_t v = 0;
	int k;
	if (p->n - p->i < 4)
		return -1;
	for (k = 0; k < 4; k++) {
		char c = p->s[p->i++];
		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= (uint32_t)(c - '0');
		else if (c >= 'a' && c <= 'f')
			v |= (uint32_t)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			v |= (uint32_t)(c - 'A' + 10);
		else
			return -1;
	}
	*out = v;
	return 0;
}

/* Parses a JSON string at p->i (at the quote) into UTF-8 in `b`. Lone surrogates become U+FFFD. */
static int jp_string(struct jp *p, struct svc_yjs_buf *b)
{
	size_t start;
	p->i++;
	for (;;) {
		start = p->i;
		while (p->i < p->n && p->s[p->i] != '"' && p->s[p->i] != '\\' &&
		       (unsigned char)p->s[p->i] >= 0x20)
			p->i++;
		if (p->i >= p->n || (unsigned char)p->s[p->i] < 0x20)
			return -1;
		if (!svc_yjs__utf8_valid((const uint8_t *)p->s + start, p->i - start))
			return -1;
		svc_yjs__put(b, p->s + start, p->i - start);
		if (p->s[p->i] == '"') {
			p->i++;
			return 0;
		}
		p->i++;
		if (p->i >= p->n)
			return -1;
		switch (p->s[p->i++]) {
		case '"': svc_yjs__put_u8(b, '"'); break;
		case '\\': svc_yjs__put_u8(b, '\\'); break;
		case '/': svc_yjs__put_u8(b, '/'); break;
		case 'b': svc_yjs__put_u8(b, '\b'); break;
		case 'f': svc_yjs__put_u8(b, '\f'); break;
		case 'n': svc_yjs__put_u8(b, '\n'); break;
		case 'r': svc_yjs__put_u8(b, '\r'); break;
		case 't': svc_yjs__put_u8(b, '\t'); break;
		case 'u': {
			uint32_t cp, lo;
			if (hex4(p, &cp) < 0)
				return -1;
			if (cp >= 0xd800 && cp <= 0xdbff && p->n - p->i >= 6 &&
			    p->s[p->i] == '\\' && p->s[p->i + 1] == 'u') {
				size_t save = p->i;
				p->i += 2;
				if (hex4(p, &lo) == 0 && lo >= 0xdc00 && lo <= 0xdfff) {
					cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
				} else {
					p->i = save;
				}
			}
			if (cp >= 0xd800 && cp <= 0xdfff)
				cp = 0xfffd;
			put_utf8(b, cp);
			break;
		}
		default:
			return -1;
		}
	}
}

static int is_array_index(const uint8_t *s, size_t n, uint64_t *v)
{
	size_t i;
	uint64_t x = 0;
	if (n == 0 || n > 10 || (n > 1 && s[0] == '0'))
		return 0;
	for (i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return 0;
		x = x * 10 + (uint64_t)(s[i] - '0');
	}
	if (x >= 4294967295ULL)
		return 0;
	*v = x;
	return 1;
}

static void any_number(struct svc_yjs_buf *b, double v)
{
	float f = (float)v;
	if (v == floor(v) && fabs(v) <= 2147483647.0) {
		svc_yjs__put_u8(b, 125);
		svc_yjs__put_varint(b, (int64_t)v, signbit(v) != 0);
	} else if ((double)f == v || (isnan(v))) {
		uint32_t u;
		uint8_t t[4];
		memcpy(&u, &f, 4);
		t[0] = (uint8_t)(u >> 24);
		t[1] = (uint8_t)(u >> 16);
		t[2] = (uint8_t)(u >> 8);
		t[3] = (uint8_t)u;
		svc_yjs__put_u8(b, 124);
		svc_yjs__put(b, t, 4);
	} else {
		uint64_t u;
		uint8_t t[8];
		int k;
		memcpy(&u, &v, 8);
		for (k = 0; k < 8; k++)
			t[k] = (uint8_t)(u >> (56 - 8 * k));
		svc_yjs__put_u8(b, 123);
		svc_yjs__put(b, t, 8);
	}
}

struct jmember {
	size_t kofs, klen, vofs, vlen;
	uint64_t idx;
	int isidx;
};

static int cmp_member(const void *a, const void *b)
{
	const struct jmember *x = a, *y = b;
	if (x->isidx != y->isidx)
		return x->isidx ? -1 : 1;
	if (x->isidx)
		return x->idx < y->idx ? -1 : x->idx > y->idx;
	return x->kofs < y->kofs ? -1 : x->kofs > y->kofs;
}

static int jp_value(struct jp *p, struct svc_yjs_buf *b, int depth);

/* A JSON string as an Any string (119). */
static int jp_string_value(struct jp *p, struct svc_yjs_buf *b)
{
	struct svc_yjs_buf t = {0};
	int r = jp_string(p, &t);
	if (r == 0) {
		svc_yjs__put_u8(b, 119);
		svc_yjs__put_varstring(b, t.data, t.len);
	}
	svc_yjs_buf_dispose(&t);
	return r;
}

/* Adds an object's member `mm` to m: a key seen before keeps its first position and takes the last value (JSON.parse). */
static void jp_member_put(struct jmember **m, size_t *nm, size_t *capm, const struct svc_yjs_buf *keys,
			  struct jmember mm)
{
	size_t j;
	for (j = 0; j < *nm; j++) {
		if ((*m)[j].klen == mm.klen && !memcmp(keys->data + (*m)[j].kofs, keys->data + mm.kofs, mm.klen)) {
			(*m)[j].vofs = mm.vofs;
			(*m)[j].vlen = mm.vlen;
			return;
		}
	}
	mm.isidx = is_array_index(keys->data + mm.kofs, mm.klen, &mm.idx);
	if (*nm == *capm) {
		*capm = *capm ? *capm * 2 : 8;
		*m = svc_yjs__xrealloc(*m, *capm, sizeof(**m));
	}
	(*m)[(*nm)++] = mm;
}

/* An object (118: members sorted as JavaScript orders keys) or an array (117) read into keys, vals and m. */
static void jp_emit_container(struct svc_yjs_buf *b, int obj, const struct svc_yjs_buf *keys,
			      const struct svc_yjs_buf *vals, struct jmember *m, size_t nm, size_t count)
{
	size_t k;
	if (obj) {
		if (nm)
			qsort(m, nm, sizeof(*m), cmp_member);
		svc_yjs__put_u8(b, 118);
		svc_yjs__put_varuint(b, nm);
		for (k = 0; k < nm; k++) {
			svc_yjs__put_varstring(b, keys->data + m[k].kofs, m[k].klen);
			svc_yjs__put(b, vals->data + m[k].vofs, m[k].vlen);
		}
	} else {
		svc_yjs__put_u8(b, 117);
		svc_yjs__put_varuint(b, count);
		svc_yjs__put(b, vals->data, vals->len);
	}
}

/* A JSON object (obj) or array at p (its opening bracket), its values at depth + 1. */
static int jp_container(struct jp *p, struct svc_yjs_buf *b, int depth, int obj)
{
	struct svc_yjs_buf keys = {0}, vals = {0};
	struct jmember *m = NULL;
	size_t nm = 0, capm = 0, count = 0;
	int r = -1;
	/* never NULL data pointers: offsets into them are taken below */
	svc_yjs__put_u8(&keys, 0);
	svc_yjs__put_u8(&vals, 0);
	keys.len = vals.len = 0;
	p->i++;
	jp_ws(p);
	if (p->i < p->n && p->s[p->i] == (obj ? '}' : ']')) {
		p->i++;
		r = 0;
		goto emit;
	}
	for (;;) {
		struct jmember mm = {0};
		jp_ws(p);
		if (obj) {
			if (p->i >= p->n || p->s[p->i] != '"')
				goto fail;
			mm.kofs = keys.len;
			if (jp_string(p, &keys) < 0)
				goto fail;
			mm.klen = keys.len - mm.kofs;
			jp_ws(p);
			if (p->i >= p->n || p->s[p->i] != ':')
				goto fail;
			p->i++;
		}
		mm.vofs = vals.len;
		if (jp_value(p, &vals, depth + 1) < 0)
			goto fail;
		mm.vlen = vals.len - mm.vofs;
		if (obj)
			jp_member_put(&m, &nm, &capm, &keys, mm);
		else
			count++;
		jp_ws(p);
		if (p->i < p->n && p->s[p->i] == ',') {
			p->i++;
			continue;
		}
		if (p->i < p->n && p->s[p->i] == (obj ? '}' : ']')) {
			p->i++;
			break;
		}
		goto fail;
	}
	r = 0;
emit:
	jp_emit_container(b, obj, &keys, &vals, m, nm, count);
fail:
	free(m);
	svc_yjs_buf_dispose(&keys);
	svc_yjs_buf_dispose(&vals);
	return r;
}

/* Skips the digits at p. */
static void jp_digits(struct jp *p)
{
	while (p->i < p->n && p->s[p->i] >= '0' && p->s[p->i] <= '9')
		p->i++;
}

/* A JSON number (strictly as the grammar says) as the Any number JavaScript would hold. */
static int jp_number(struct jp *p, struct svc_yjs_buf *b)
{
	char tmp[400];
	size_t start = p->i, len;
	if (p->s[p->i] == '-')
		p->i++;
	if (p->i >= p->n)
		return -1;
	if (p->s[p->i] == '0') {
		p->i++;
	} else if (p->s[p->i] >= '1' && p->s[p->i] <= '9') {
		jp_digits(p);
	} else {
		return -1;
	}
	if (p->i < p->n && p->s[p->i] == '.') {
		p->i++;
		if (p->i >= p->n || p->s[p->i] < '0' || p->s[p->i] > '9')
			return -1;
		jp_digits(p);
	}
	if (p->i < p->n && (p->s[p->i] == 'e' || p->s[p->i] == 'E')) {
		p->i++;
		if (p->i < p->n && (p->s[p->i] == '+' || p->s[p->i] == '-'))
			p->i++;
		if (p->i >= p->n || p->s[p->i] < '0' || p->s[p->i] > '9')
			return -1;
		jp_digits(p);
	}
	len = p->i - start;
	if (len >= sizeof(tmp))
		return -1;
	memcpy(tmp, p->s + start, len);
	tmp[len] = 0;
	any_number(b, strtod(tmp, NULL));
	return 0;
}

/* One JSON value at p (JSON.parse's grammar) appended to b as lib0 Any. Returns 0 or -1. */
static int jp_value(struct jp *p, struct svc_yjs_buf *b, int depth)
{
	char c;
	if (depth > YJS_MAX_DEPTH)
		return -1;
	jp_ws(p);
	if (p->i >= p->n)
		return -1;
	c = p->s[p->i];
	if (c == '"')
		return jp_string_value(p, b);
	if (c == '{' || c == '[')
		return jp_container(p, b, depth, c == '{');
	if (p->n - p->i >= 4 && !memcmp(p->s + p->i, "true", 4)) {
		p->i += 4;
		svc_yjs__put_u8(b, 120);
		return 0;
	}
	if (p->n - p->i >= 5 && !memcmp(p->s + p->i, "false", 5)) {
		p->i += 5;
		svc_yjs__put_u8(b, 121);
		return 0;
	}
	if (p->n - p->i >= 4 && !memcmp(p->s + p->i, "null", 4)) {
		p->i += 4;
		svc_yjs__put_u8(b, 126);
		return 0;
	}
	if (c == '-' || (c >= '0' && c <= '9'))
		return jp_number(p, b);
	return -1;
}

int svc_yjs__json_to_any(const char *json, size_t n, struct svc_yjs_buf *out)
{
	struct jp p = { json, n, 0 };
	size_t mark = out->len;
	if (jp_value(&p, out, 0) < 0)
		goto bad;
	jp_ws(&p);
	if (p.i != p.n)
		goto bad;
	return 0;
bad:
	out->len = mark;
	return SVC_E_INVALID_JSON;
}
