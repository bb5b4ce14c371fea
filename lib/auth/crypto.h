/* crypto.h: secrets at rest: AES-256-GCM sealing with the instance key or per-workspace data keys (docs/conventions.md "Secrets at rest"). */
#ifndef SVC_CRYPTO_H
#define SVC_CRYPTO_H

#include <stddef.h>
#include <stdint.h>

#include "core/config.h"
#include "db/db.h"

/*
 * The sealed format (NIST SP 800-38D, AES-256-GCM with a 96-bit IV and a
 * 128-bit tag), as bytes:
 *
 *   ver (1 byte, SVC_CRYPTO_VERSION) || key_id (4 bytes, big-endian)
 *   || iv (12 random bytes) || ciphertext (as long as the plaintext) || tag (16 bytes)
 *
 * key_id 0 is the instance key ENCRYPTION_KEY; key_id N >= 1 is data key N
 * of the workspace the secret belongs to (table workspace_keys). The
 * additional authenticated data is the text "<table>/<column>/<row id>"
 * (svc_crypto_aad()), so a sealed value copied into another row or column
 * does not open. In the database the sealed bytes are stored as standard
 * base64 text (RFC 4648 section 4, with padding).
 *
 * How to keep a secret (any module; OAuth client secrets, API keys, ...):
 *
 *   char *b64 = NULL;
 *   err = svc_crypto_seal_secret(db, cfg, workspace_id_or_NULL, "my_table", "my_column", row_id,
 *                                secret, strlen(secret), &b64);   // store b64 in a TEXT column
 *   ...
 *   char *plain = NULL; size_t n;
 *   err = svc_crypto_open_secret(db, cfg, workspace_id_or_NULL, "my_table", "my_column", row_id,
 *                                b64, &plain, &n);                // use, then svc_crypto_free_secret(plain, n)
 *
 * Never log, return or compare plaintext secrets with memcmp.
 */

#define SVC_CRYPTO_VERSION 1
#define SVC_CRYPTO_KEY_LEN 32
#define SVC_CRYPTO_IV_LEN 12
#define SVC_CRYPTO_TAG_LEN 16
#define SVC_CRYPTO_HEADER_LEN (1 + 4 + SVC_CRYPTO_IV_LEN)
#define SVC_CRYPTO_OVERHEAD (SVC_CRYPTO_HEADER_LEN + SVC_CRYPTO_TAG_LEN)
#define SVC_CRYPTO_MAX_PLAIN (1024 * 1024) /* bytes of one secret */

/*
 * Parses ENCRYPTION_KEY: exactly 64 hex digits (either case) into 32 bytes
 * at `out`. Returns 0, or SVC_E_VALIDATION (wrong length or a non-hex digit;
 * `out` may have been written and should be cleansed by the caller).
 */
int svc_crypto_parse_key(const char *hex, uint8_t out[SVC_CRYPTO_KEY_LEN]);

/*
 * Writes the additional authenticated data "<table>/<column>/<row>" into
 * `out` (`max` bytes). Returns 0 or SVC_E_INTERNAL when it does not fit.
 */
int svc_crypto_aad(char *out, size_t max, const char *table, const char *column, const char *row);

/*
 * Seals `len` bytes of `plain` (at most SVC_CRYPTO_MAX_PLAIN) with the
 * 32-byte `key`, labelled `key_id`, binding `aad` (a NUL-terminated string,
 * may be ""). A fresh random IV (RAND_bytes) each call. *out is malloc'd,
 * len + SVC_CRYPTO_OVERHEAD bytes (*out_len); the caller frees it.
 * Returns 0, SVC_E_TOO_LARGE, or SVC_E_INTERNAL (OpenSSL failed, out of memory).
 */
int svc_crypto_seal(const uint8_t key[SVC_CRYPTO_KEY_LEN], uint32_t key_id, const char *aad, const void *plain,
		    size_t len, uint8_t **out, size_t *out_len);

/*
 * Reads the key_id of a sealed value without opening it. Returns 0, or
 * SVC_E_VALIDATION when `sealed` is too short or of another version.
 */
int svc_crypto_key_id(const uint8_t *sealed, size_t len, uint32_t *out_key_id);

/*
 * Opens a value sealed by svc_crypto_seal() with the same key and aad. *out
 * is malloc'd, NUL-terminated after *out_len bytes; free it with
 * svc_crypto_free_secret(). Returns 0, or SVC_E_VALIDATION when the format
 * is wrong or authentication fails (wrong key, wrong aad, altered bytes).
 */
int svc_crypto_open(const uint8_t key[SVC_CRYPTO_KEY_LEN], const char *aad, const uint8_t *sealed, size_t len,
		    uint8_t **out, size_t *out_len);

/* Cleanses (OPENSSL_cleanse) and frees a secret of `len` bytes; NULL is allowed. */
void svc_crypto_free_secret(void *secret, size_t len);

/*
 * Standard base64 (RFC 4648 section 4). encode: *out is malloc'd and
 * NUL-terminated. decode: strict (padding required, no white space, no
 * other characters), *out malloc'd with *out_len bytes (plus a NUL), and the
 * input may decode to at most `max` bytes (SVC_E_TOO_LARGE otherwise,
 * checked before allocating). Errors: SVC_E_VALIDATION (not base64),
 * SVC_E_INTERNAL (out of memory).
 */
int svc_base64_encode(const uint8_t *data, size_t len, char **out);
int svc_base64_decode(const char *text, size_t len, size_t max, uint8_t **out, size_t *out_len);

/*
 * Seals a secret for column `column` of row `row` of `table` and encodes it
 * as base64 in *out (malloc'd). With SVC_ENVELOPE_ENCRYPTION=1 and a
 * workspace id, the key is that workspace's newest data key (created,
 * sealed by the instance key with aad "workspace_keys/sealed_key/<wid>:<key_id>"
 * and stored on first use); otherwise the instance key (key_id 0). Errors:
 * SVC_E_UNAVAILABLE (ENCRYPTION_KEY is not set or not 64 hex digits),
 * SVC_E_TOO_LARGE, DB errors, SVC_E_INTERNAL.
 */
int svc_crypto_seal_secret(struct svc_db *db, const struct svc_config *cfg, const char *workspace_id,
			   const char *table, const char *column, const char *row, const char *secret, size_t len,
			   char **out);

/* Which key opened a secret (svc_crypto_open_secret_ex()). */
enum svc_crypto_sealer {
	SVC_SEALER_CURRENT,  /* the instance key ENCRYPTION_KEY */
	SVC_SEALER_PREVIOUS, /* ENCRYPTION_KEY_PREVIOUS: svc-admin rotate-key has not re-sealed it yet */
	SVC_SEALER_DATA_KEY  /* a workspace data key (itself sealed by either instance key) */
};

/*
 * Opens what svc_crypto_seal_secret() stored (any key_id: values sealed
 * before envelope encryption was switched on still open). *out is
 * NUL-terminated; free it with svc_crypto_free_secret(*out, *out_len).
 * Errors: SVC_E_UNAVAILABLE (no instance key), SVC_E_VALIDATION (not base64,
 * wrong format, authentication failed, unknown data key), DB errors.
 */
int svc_crypto_open_secret(struct svc_db *db, const struct svc_config *cfg, const char *workspace_id,
			   const char *table, const char *column, const char *row, const char *b64, char **out,
			   size_t *out_len);

/*
 * svc_crypto_open_secret(), also telling in *by (may be NULL; set on
 * success) which key opened the value. A value sealed by the instance key
 * opens with ENCRYPTION_KEY, else with ENCRYPTION_KEY_PREVIOUS when that is
 * set (a rotation in progress, docs/operations.md "Rotating ENCRYPTION_KEY");
 * one that opens with neither is logged (table and column, never the value)
 * and answers SVC_E_VALIDATION: secrets fail closed.
 */
int svc_crypto_open_secret_ex(struct svc_db *db, const struct svc_config *cfg, const char *workspace_id,
			      const char *table, const char *column, const char *row, const char *b64, char **out,
			      size_t *out_len, enum svc_crypto_sealer *by);

/* What svc_crypto_rotate() found and did, counted in sealed values. */
struct svc_crypto_rotation {
	unsigned long current;    /* already sealed by ENCRYPTION_KEY */
	unsigned long previous;   /* sealed by ENCRYPTION_KEY_PREVIOUS and not re-sealed (check only, or changed meanwhile) */
	unsigned long rotated;    /* re-sealed by ENCRYPTION_KEY now */
	unsigned long data_key;   /* sealed by a workspace data key, which opens (the data keys themselves are rotated) */
	unsigned long unreadable; /* open with no key this server has */
};

/*
 * Called by svc_crypto_rotate() for each value that does not open: its
 * table, column and row label (never the value). `arg` is the caller's.
 */
typedef void (*svc_crypto_unreadable_fn)(void *arg, const char *table, const char *column, const char *row);

/*
 * Walks every column that holds a sealed secret (db_stmts_crypto.h: the
 * workspace data keys first, then the AI provider keys, OAuth apps, platform
 * credentials, OAuth states, assistant tokens, integration connections and
 * projects' Git mirror tokens)
 * and opens each value. With `write`, a value that opens only with
 * ENCRYPTION_KEY_PREVIOUS is re-sealed by ENCRYPTION_KEY (same row label, a
 * fresh IV) and written with a compare-and-set, so a value the service
 * changed meanwhile is left to the service and counted as `previous`; the
 * service keeps running throughout. Values sealed by data keys stay as they
 * are: re-sealing the data keys is enough. `on_unreadable` (may be NULL)
 * names each value no key opens. Fills *out. Returns 0 (also when some are
 * unreadable: see out->unreadable), SVC_E_UNAVAILABLE (ENCRYPTION_KEY or
 * ENCRYPTION_KEY_PREVIOUS not 64 hex digits, the database), or DB errors.
 */
int svc_crypto_rotate(struct svc_db *db, const struct svc_config *cfg, int write, svc_crypto_unreadable_fn on_unreadable,
		      void *arg, struct svc_crypto_rotation *out);

#endif
