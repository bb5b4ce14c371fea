/* util.h: small shared helpers: bounded buffers, array growth, time stamps, UUIDs, hex and SHA-256,
 * strict number parsing, UTF-8, cookies. */
#ifndef SVC_UTIL_H
#define SVC_UTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/*
 * A growable byte buffer with a mandatory maximum (git's strbuf, bounded).
 * `data` is always NUL-terminated once anything was added; appending past
 * `max` bytes fails with SVC_E_TOO_LARGE and leaves the buffer unchanged.
 */
struct svc_buf {
	char *data;
	size_t len;
	size_t cap;
	size_t max;
};

/* Initialises an empty buffer that may hold at most `max` bytes. Allocates nothing. */
void svc_buf_init(struct svc_buf *b, size_t max);

/* Appends `len` bytes. Returns 0, SVC_E_TOO_LARGE (over max) or SVC_E_INTERNAL (out of memory). */
int svc_buf_add(struct svc_buf *b, const void *data, size_t len);

/* Appends a NUL-terminated string; as svc_buf_add(). */
int svc_buf_adds(struct svc_buf *b, const char *s);

/* Appends printf-formatted text; as svc_buf_add(). */
int svc_buf_addf(struct svc_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Returns the text of the buffer: `data`, or "" when nothing was added yet (never NULL). */
const char *svc_buf_str(const struct svc_buf *b);

/* Empties the buffer but keeps its memory. */
void svc_buf_reset(struct svc_buf *b);

/* Frees the memory and re-initialises the buffer with the same maximum. */
void svc_buf_dispose(struct svc_buf *b);

/* svc_buf_dispose() of a buffer that held a secret: its bytes are cleansed (OPENSSL_cleanse) first. */
void svc_buf_wipe(struct svc_buf *b);

/* Takes the data (malloc'd, NUL-terminated, never NULL unless out of memory) and empties the buffer. */
char *svc_buf_detach(struct svc_buf *b, size_t *out_len);

/*
 * SVC_ARRAY_GROW(arr, cap, need): makes the malloc'd array `arr` (a pointer
 * lvalue, NULL when empty) of `cap` elements (a size_t lvalue) hold at least
 * `need` elements, the way git's ALLOC_GROW does: nothing happens when cap >=
 * need; otherwise the capacity doubles (16 elements at first) or becomes
 * `need` when that is more, and `arr` is reallocated. The element size is
 * sizeof *arr; sizes are overflow-checked. Evaluates to 0, or SVC_E_INTERNAL
 * (out of memory, or more than PTRDIFF_MAX bytes) with `arr` and `cap` unchanged,
 * so the caller still owns and frees the old array. Elements past the old
 * capacity are uninitialised. The one place outside lib/yjs that calls
 * realloc(3) (tests/lint.sh).
 *
 *	if ((err = SVC_ARRAY_GROW(list->items, list->cap, list->n + 1)) < 0)
 *		return err;
 *	list->items[list->n++] = item;
 */
#define SVC_ARRAY_GROW(arr, cap, need) svc__array_grow((void *)&(arr), &(cap), (need), sizeof *(arr))

/* The function behind SVC_ARRAY_GROW; `arrp` is the address of the array pointer. */
int svc__array_grow(void *arrp, size_t *cap, size_t need, size_t elem);

/* Milliseconds since the Unix epoch, from CLOCK_REALTIME. */
int64_t svc_now_ms(void);

/* Milliseconds from CLOCK_MONOTONIC, for measuring intervals. */
int64_t svc_mono_ms(void);

/* Formats `ms` since the epoch as RFC 3339 UTC with milliseconds, "2026-11-22T01:22:11.123Z", into out (at least 25 bytes). */
void svc_time_format(int64_t ms, char *out);

/*
 * Converts a MariaDB DATETIME(3) text ("2026-11-22 01:22:11.123", UTC) into
 * the RFC 3339 form above, in out (at least 25 bytes). Returns 0, or
 * SVC_E_INTERNAL when `db` does not have that shape.
 */
int svc_time_from_db(const char *db, char *out);

/* Fills `out` with `n` random bytes from OpenSSL's CSPRNG (RAND_bytes). Returns 0 or SVC_E_INTERNAL. */
int svc_random(void *out, size_t n);

/* Writes `n` random bytes as 2n lowercase hex digits plus NUL into out (2n+1 bytes). Returns 0 or SVC_E_INTERNAL. */
int svc_random_hex(char *out, size_t n);

/* Writes the `n` bytes at `in` as 2n lowercase hex digits plus a NUL into out (2n+1 bytes; base16, RFC 4648 §8). */
void svc_hex_encode(const void *in, size_t n, char *out);

/* Returns the value (0 to 15) of the hex digit `c` (0-9, a-f, A-F), or -1 when it is not one. */
int svc_hex_digit(int c);

/*
 * Decodes the `len` hex digits at `hex` (either case) into len / 2 bytes at
 * out. Returns 0, or SVC_E_VALIDATION when len is odd or a character is not
 * a hex digit (out may then be partly written).
 */
int svc_hex_decode(const char *hex, size_t len, void *out);

#define SVC_SHA256_HEX_LEN 64 /* hex digits of a SHA-256 digest; svc_sha256_hex() writes one more, the NUL */

/*
 * Writes the SHA-256 digest (FIPS 180-4) of the `len` bytes at `data` (NULL
 * allowed when len is 0) as SVC_SHA256_HEX_LEN lowercase hex digits plus a
 * NUL into out (SVC_SHA256_HEX_LEN + 1 bytes), computed with OpenSSL's
 * EVP_Digest. Returns 0, or SVC_E_INTERNAL when OpenSSL fails (out is then
 * the empty string).
 */
int svc_sha256_hex(const void *data, size_t len, char *out);

/* Writes the 16 bytes at `bytes` as a lowercase UUID text (8-4-4-4-12 hex digits, RFC 9562 §4) plus NUL into out (37 bytes). */
void svc_uuid_format(const void *bytes, char *out);

/*
 * Reads the UUID text `s` (as svc_uuid_valid() accepts it, either case) into
 * its 16 bytes at out. Returns 0, or SVC_E_VALIDATION when `s` is not a UUID.
 */
int svc_uuid_parse(const char *s, void *out);

/* Writes a new random (version 4, RFC 9562 §5.4) UUID, lowercase, into out (37 bytes). Returns 0 or SVC_E_INTERNAL. */
int svc_uuid_v4(char *out);

/* Returns 1 when `s` is a well-formed UUID (8-4-4-4-12 hex digits, either case), else 0. */
int svc_uuid_valid(const char *s);

/*
 * Parses the whole of `s` as a decimal unsigned integer no larger than
 * `max` into *out (no sign, no spaces, no leading "+", at least one digit).
 * Returns 0 or SVC_E_VALIDATION.
 */
int svc_parse_u64(const char *s, uint64_t max, uint64_t *out);

/*
 * Decodes the one UTF-8 sequence at the start of the `len` bytes at `s`
 * (RFC 3629 §4, "Syntax of UTF-8 Byte Sequences": no overlong forms, no
 * surrogates U+D800..U+DFFF, nothing above U+10FFFF). Returns its length in
 * bytes (1 to 4) and sets *out_cp (when not NULL) to the code point; returns
 * 0 and leaves *out_cp alone when the bytes are ill-formed or cut short, or
 * len is 0. U+0000 is a valid one-byte sequence: callers that refuse NUL
 * check the code point. The one UTF-8 decoder of svc: inline because the Yjs
 * code validates every string of every update with it.
 */
static inline size_t svc_utf8_decode(const void *s, size_t len, uint32_t *out_cp)
{
	const unsigned char *p = s;
	unsigned char lo = 0x80, hi = 0xbf;
	uint32_t cp;
	size_t n, i;

	if (len == 0)
		return 0;
	if (p[0] < 0x80) {
		n = 1;
		cp = p[0];
		goto ok;
	}
	if (p[0] >= 0xc2 && p[0] <= 0xdf) {
		n = 2;
		cp = p[0] & 0x1fu;
	} else if (p[0] >= 0xe0 && p[0] <= 0xef) {
		n = 3;
		cp = p[0] & 0x0fu;
		if (p[0] == 0xe0)
			lo = 0xa0; /* overlong below U+0800 */
		else if (p[0] == 0xed)
			hi = 0x9f; /* surrogates */
	} else if (p[0] >= 0xf0 && p[0] <= 0xf4) {
		n = 4;
		cp = p[0] & 0x07u;
		if (p[0] == 0xf0)
			lo = 0x90; /* overlong below U+10000 */
		else if (p[0] == 0xf4)
			hi = 0x8f; /* above U+10FFFF */
	} else {
		return 0;
	}
	if (len < n || p[1] < lo || p[1] > hi)
		return 0;
	for (i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (p[i] & 0x3fu);
	}
ok:
	if (out_cp)
		*out_cp = cp;
	return n;
}

/* Returns 1 when `len` bytes at `s` are valid UTF-8 (svc_utf8_decode()) without NUL, else 0. */
int svc_utf8_valid(const char *s, size_t len);

/* Counts the Unicode code points of valid UTF-8 text `s` of `len` bytes. */
size_t svc_utf8_count(const char *s, size_t len);

/*
 * Returns where to cut the `len` bytes of UTF-8 text `s` to keep at most
 * `max` bytes without splitting a sequence: `len` when len <= max, else the
 * largest n <= max such that s[0..n) does not end inside a multi-byte
 * sequence (judged by the bytes before n, so invalid text is cut somewhere
 * sensible too and s[max] is never read).
 */
size_t svc_utf8_cut(const char *s, size_t len, size_t max);

/* Returns 1 when `s` is empty or only ASCII white space, else 0. */
int svc_is_blank(const char *s);

/*
 * Finds cookie `name` in `header`, the value of a Cookie request header
 * (RFC 6265 §4.2.1: "name=value" pairs separated by ";"), and copies its
 * value, NUL-terminated, into out (max bytes). Parsed as RFC 6265 §5.2 says
 * for each pair: leading and trailing spaces and tabs of the name and the
 * value are dropped, a pair without "=" or with an empty name is ignored; so
 * are empty pairs (a trailing ";"). The last pair needs no ";" after it. One
 * pair of double quotes around the value (the DQUOTE form of cookie-value,
 * §4.1.1) is removed. The first pair named `name` wins (§5.4: the most
 * specific cookie comes first). Returns 1 when found, 0 when absent or when
 * the value does not fit (max - 1 bytes at most); `header` may be NULL.
 */
int svc_cookie_get(const char *header, const char *name, char *out, size_t max);

/*
 * How many pairs of `header` (a Cookie header value, NULL allowed) are named
 * `name`, parsed as svc_cookie_get() does. Two of svc's own cookies of one
 * name mean that another site of a shared parent domain planted one (cookie
 * tossing): the request is refused rather than guessing which is real.
 */
size_t svc_cookie_count(const char *header, const char *name);

/* Compares two byte strings in constant time for equal lengths (CRYPTO_memcmp). Returns 1 when equal. */
int svc_secret_equal(const char *a, size_t alen, const char *b, size_t blen);

#endif
