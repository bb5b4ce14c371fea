/* util.h: small shared helpers: bounded buffers, time stamps, UUIDs, strict number parsing, UTF-8. */
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

/* Empties the buffer but keeps its memory. */
void svc_buf_reset(struct svc_buf *b);

/* Frees the memory and re-initialises the buffer with the same maximum. */
void svc_buf_dispose(struct svc_buf *b);

/* Takes the data (malloc'd, NUL-terminated, never NULL unless out of memory) and empties the buffer. */
char *svc_buf_detach(struct svc_buf *b, size_t *out_len);

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

/* Returns 1 when `len` bytes at `s` are valid UTF-8 (RFC 3629: no overlongs, no surrogates, no NUL), else 0. */
int svc_utf8_valid(const char *s, size_t len);

/* Counts the Unicode code points of valid UTF-8 text `s` of `len` bytes. */
size_t svc_utf8_count(const char *s, size_t len);

/* Returns 1 when `s` is empty or only ASCII white space, else 0. */
int svc_is_blank(const char *s);

/* Compares two byte strings in constant time for equal lengths (CRYPTO_memcmp). Returns 1 when equal. */
int svc_secret_equal(const char *a, size_t alen, const char *b, size_t blen);

#endif
