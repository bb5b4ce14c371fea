/* crypto.c: AES-256-GCM sealing of secrets at rest, base64, and per-workspace envelope data keys. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include "auth/crypto.h"
#include "core/err.h"
#include "core/log.h"
#include "core/util.h"

int svc_crypto_parse_key(const char *hex, uint8_t out[SVC_CRYPTO_KEY_LEN])
{
	if (!hex || strlen(hex) != 2 * SVC_CRYPTO_KEY_LEN)
		return SVC_E_VALIDATION;
	return svc_hex_decode(hex, 2 * SVC_CRYPTO_KEY_LEN, out);
}

int svc_crypto_aad(char *out, size_t max, const char *table, const char *column, const char *row)
{
	int n = snprintf(out, max, "%s/%s/%s", table, column, row ? row : "");

	return n < 0 || (size_t)n >= max ? SVC_E_INTERNAL : 0;
}

int svc_crypto_seal(const uint8_t key[SVC_CRYPTO_KEY_LEN], uint32_t key_id, const char *aad, const void *plain,
		    size_t len, uint8_t **out, size_t *out_len)
{
	EVP_CIPHER_CTX *c = NULL;
	uint8_t *buf = NULL;
	int n, error = SVC_E_INTERNAL;
	size_t alen = aad ? strlen(aad) : 0;

	if (len > SVC_CRYPTO_MAX_PLAIN)
		return SVC_E_TOO_LARGE;
	if (!(buf = malloc(len + SVC_CRYPTO_OVERHEAD)))
		return SVC_E_INTERNAL;
	buf[0] = SVC_CRYPTO_VERSION;
	buf[1] = (uint8_t)(key_id >> 24);
	buf[2] = (uint8_t)(key_id >> 16);
	buf[3] = (uint8_t)(key_id >> 8);
	buf[4] = (uint8_t)key_id;
	if (RAND_bytes(buf + 5, SVC_CRYPTO_IV_LEN) != 1)
		goto done;
	if (!(c = EVP_CIPHER_CTX_new()) ||
	    EVP_EncryptInit_ex(c, EVP_aes_256_gcm(), NULL, NULL, NULL) != 1 ||
	    EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_SET_IVLEN, SVC_CRYPTO_IV_LEN, NULL) != 1 ||
	    EVP_EncryptInit_ex(c, NULL, NULL, key, buf + 5) != 1)
		goto done;
	if (alen && EVP_EncryptUpdate(c, NULL, &n, (const uint8_t *)aad, (int)alen) != 1)
		goto done;
	if (len && EVP_EncryptUpdate(c, buf + SVC_CRYPTO_HEADER_LEN, &n, plain, (int)len) != 1)
		goto done;
	if (EVP_EncryptFinal_ex(c, buf + SVC_CRYPTO_HEADER_LEN + len, &n) != 1 ||
	    EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_GET_TAG, SVC_CRYPTO_TAG_LEN, buf + SVC_CRYPTO_HEADER_LEN + len) != 1)
		goto done;
	*out = buf;
	*out_len = len + SVC_CRYPTO_OVERHEAD;
	buf = NULL;
	error = 0;
done:
	EVP_CIPHER_CTX_free(c);
	free(buf);
	return error;
}

int svc_crypto_key_id(const uint8_t *sealed, size_t len, uint32_t *out_key_id)
{
	if (!sealed || len < SVC_CRYPTO_OVERHEAD || sealed[0] != SVC_CRYPTO_VERSION)
		return SVC_E_VALIDATION;
	*out_key_id = (uint32_t)sealed[1] << 24 | (uint32_t)sealed[2] << 16 | (uint32_t)sealed[3] << 8 | sealed[4];
	return 0;
}

int svc_crypto_open(const uint8_t key[SVC_CRYPTO_KEY_LEN], const char *aad, const uint8_t *sealed, size_t len,
		    uint8_t **out, size_t *out_len)
{
	EVP_CIPHER_CTX *c = NULL;
	uint8_t *buf = NULL, tag[SVC_CRYPTO_TAG_LEN];
	size_t plen, alen = aad ? strlen(aad) : 0;
	uint32_t key_id;
	int n, error = SVC_E_VALIDATION;

	if (svc_crypto_key_id(sealed, len, &key_id) < 0)
		return SVC_E_VALIDATION;
	plen = len - SVC_CRYPTO_OVERHEAD;
	if (plen > SVC_CRYPTO_MAX_PLAIN)
		return SVC_E_VALIDATION;
	if (!(buf = malloc(plen + 1)))
		return SVC_E_INTERNAL;
	memcpy(tag, sealed + SVC_CRYPTO_HEADER_LEN + plen, SVC_CRYPTO_TAG_LEN);
	if (!(c = EVP_CIPHER_CTX_new()) ||
	    EVP_DecryptInit_ex(c, EVP_aes_256_gcm(), NULL, NULL, NULL) != 1 ||
	    EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_SET_IVLEN, SVC_CRYPTO_IV_LEN, NULL) != 1 ||
	    EVP_DecryptInit_ex(c, NULL, NULL, key, sealed + 5) != 1) {
		error = SVC_E_INTERNAL;
		goto done;
	}
	if (alen && EVP_DecryptUpdate(c, NULL, &n, (const uint8_t *)aad, (int)alen) != 1)
		goto done;
	if (plen && EVP_DecryptUpdate(c, buf, &n, sealed + SVC_CRYPTO_HEADER_LEN, (int)plen) != 1)
		goto done;
	if (EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_SET_TAG, SVC_CRYPTO_TAG_LEN, tag) != 1)
		goto done;
	if (EVP_DecryptFinal_ex(c, buf + plen, &n) != 1)
		goto done; /* authentication failed */
	buf[plen] = '\0';
	*out = buf;
	*out_len = plen;
	buf = NULL;
	error = 0;
done:
	EVP_CIPHER_CTX_free(c);
	if (buf)
		svc_crypto_free_secret(buf, plen);
	return error;
}

void svc_crypto_free_secret(void *secret, size_t len)
{
	if (!secret)
		return;
	OPENSSL_cleanse(secret, len);
	free(secret);
}

static const char b64chars[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

int svc_base64_encode(const uint8_t *data, size_t len, char **out)
{
	size_t i, o = 0, n;
	char *s;
	uint32_t v;

	if (len > (SIZE_MAX - 4) / 4 * 3)
		return SVC_E_TOO_LARGE;
	n = (len + 2) / 3 * 4;
	if (!(s = malloc(n + 1)))
		return SVC_E_INTERNAL;
	for (i = 0; i + 2 < len; i += 3) {
		v = (uint32_t)data[i] << 16 | (uint32_t)data[i + 1] << 8 | data[i + 2];
		s[o++] = b64chars[v >> 18 & 63];
		s[o++] = b64chars[v >> 12 & 63];
		s[o++] = b64chars[v >> 6 & 63];
		s[o++] = b64chars[v & 63];
	}
	if (i < len) {
		v = (uint32_t)data[i] << 16 | (i + 1 < len ? (uint32_t)data[i + 1] << 8 : 0);
		s[o++] = b64chars[v >> 18 & 63];
		s[o++] = b64chars[v >> 12 & 63];
		s[o++] = i + 1 < len ? b64chars[v >> 6 & 63] : '=';
		s[o++] = '=';
	}
	s[o] = '\0';
	*out = s;
	return 0;
}

static int b64val(char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+')
		return 62;
	if (c == '/')
		return 63;
	return -1;
}

int svc_base64_decode(const char *text, size_t len, size_t max, uint8_t **out, size_t *out_len)
{
	size_t i, o = 0, pad = 0, n;
	uint8_t *buf;
	uint32_t v;
	int a, b, c, d;

	if (len % 4 != 0)
		return SVC_E_VALIDATION;
	if (len >= 1 && text[len - 1] == '=')
		pad++;
	if (len >= 2 && text[len - 2] == '=')
		pad++;
	n = len / 4 * 3 - pad;
	if (n > max)
		return SVC_E_TOO_LARGE;
	if (!(buf = malloc(n + 1)))
		return SVC_E_INTERNAL;
	for (i = 0; i < len; i += 4) {
		int last = i + 4 == len;

		a = b64val(text[i]);
		b = b64val(text[i + 1]);
		c = last && pad == 2 && text[i + 2] == '=' ? 0 : b64val(text[i + 2]);
		d = last && pad >= 1 && text[i + 3] == '=' ? 0 : b64val(text[i + 3]);
		if (a < 0 || b < 0 || c < 0 || d < 0)
			goto bad;
		v = (uint32_t)a << 18 | (uint32_t)b << 12 | (uint32_t)c << 6 | (uint32_t)d;
		buf[o++] = (uint8_t)(v >> 16);
		if (!(last && pad == 2))
			buf[o++] = (uint8_t)(v >> 8);
		if (!(last && pad >= 1))
			buf[o++] = (uint8_t)v;
	}
	buf[o] = '\0';
	*out = buf;
	*out_len = o;
	return 0;
bad:
	free(buf);
	return SVC_E_VALIDATION;
}

/* The instance keys from the settings: ENCRYPTION_KEY and, during a rotation, ENCRYPTION_KEY_PREVIOUS. */
struct ikeys {
	uint8_t cur[SVC_CRYPTO_KEY_LEN];
	uint8_t prev[SVC_CRYPTO_KEY_LEN];
	int has_prev;
};

static void ikeys_drop(struct ikeys *k)
{
	OPENSSL_cleanse(k, sizeof *k);
}

static int ikeys_load(const struct svc_config *cfg, struct ikeys *k)
{
	memset(k, 0, sizeof *k);
	if (!cfg->encryption_key || svc_crypto_parse_key(cfg->encryption_key, k->cur) < 0) {
		ikeys_drop(k);
		svc_log_error("crypto: ENCRYPTION_KEY is not set or not 64 hex digits; secrets cannot be stored");
		return SVC_E_UNAVAILABLE;
	}
	if (cfg->encryption_key_previous && cfg->encryption_key_previous[0]) {
		if (svc_crypto_parse_key(cfg->encryption_key_previous, k->prev) < 0) {
			ikeys_drop(k);
			svc_log_error("crypto: ENCRYPTION_KEY_PREVIOUS is not 64 hex digits");
			return SVC_E_UNAVAILABLE;
		}
		k->has_prev = 1;
	}
	return 0;
}

/*
 * Opens a value sealed by an instance key: the current one, else the previous
 * one (a value not yet re-sealed by svc-admin rotate-key). *used_prev (may be
 * NULL) says which opened it. Errors: svc_crypto_open()'s.
 */
static int open_instance(const struct ikeys *k, const char *aad, const uint8_t *sealed, size_t slen, uint8_t **out,
			 size_t *out_len, int *used_prev)
{
	int error = svc_crypto_open(k->cur, aad, sealed, slen, out, out_len);

	if (used_prev)
		*used_prev = 0;
	if (error == SVC_E_VALIDATION && k->has_prev) {
		error = svc_crypto_open(k->prev, aad, sealed, slen, out, out_len);
		if (error == 0 && used_prev)
			*used_prev = 1;
	}
	return error;
}

/* Opens a stored workspace data key row (key_id, sealed base64) into `key`. */
static int open_data_key(const struct ikeys *master, const char *wid, const char *key_id,
			 const char *b64, uint8_t key[SVC_CRYPTO_KEY_LEN])
{
	uint8_t *sealed = NULL, *plain = NULL;
	size_t slen = 0, plen = 0;
	char aad[128], row[96];
	int error;

	snprintf(row, sizeof row, "%s:%s", wid, key_id);
	if ((error = svc_crypto_aad(aad, sizeof aad, "workspace_keys", "sealed_key", row)) < 0)
		return error;
	if ((error = svc_base64_decode(b64, strlen(b64), 4096, &sealed, &slen)) < 0)
		return error == SVC_E_TOO_LARGE ? SVC_E_VALIDATION : error;
	error = open_instance(master, aad, sealed, slen, &plain, &plen, NULL);
	free(sealed);
	if (error < 0)
		return error;
	if (plen != SVC_CRYPTO_KEY_LEN) {
		svc_crypto_free_secret(plain, plen);
		return SVC_E_VALIDATION;
	}
	memcpy(key, plain, SVC_CRYPTO_KEY_LEN);
	svc_crypto_free_secret(plain, plen);
	return 0;
}

/* The newest data key of workspace `wid`, created when there is none. */
static int data_key(struct svc_db *db, const struct ikeys *master, const char *wid,
		    uint8_t key[SVC_CRYPTO_KEY_LEN], uint32_t *out_id)
{
	struct svc_rows *rows = NULL;
	struct svc_dbv p[3];
	uint8_t *sealed = NULL;
	size_t slen = 0;
	char *b64 = NULL, aad[128], row[96];
	uint64_t id;
	int error, tries;

	for (tries = 0; tries < 2; tries++) {
		p[0] = svc_dbv_str(wid);
		if ((error = svc_db_run(db, STMT_AGENT_WKEY_LATEST, p, 1, &rows, NULL)) < 0)
			return error;
		if (rows && rows->nrows == 1) {
			if (svc_parse_u64(svc_rows_get(rows, 0, KCOL_ID), UINT32_MAX, &id) < 0) {
				error = SVC_E_INTERNAL;
				goto done;
			}
			error = open_data_key(master, wid, svc_rows_get(rows, 0, KCOL_ID), svc_rows_get(rows, 0, KCOL_SEALED),
					      key);
			if (error == 0)
				*out_id = (uint32_t)id;
			goto done;
		}
		svc_rows_free(rows);
		rows = NULL;
		/* none yet: make data key 1 */
		if ((error = svc_random(key, SVC_CRYPTO_KEY_LEN)) < 0)
			goto done;
		snprintf(row, sizeof row, "%s:1", wid);
		if ((error = svc_crypto_aad(aad, sizeof aad, "workspace_keys", "sealed_key", row)) < 0 ||
		    (error = svc_crypto_seal(master->cur, 0, aad, key, SVC_CRYPTO_KEY_LEN, &sealed, &slen)) < 0 ||
		    (error = svc_base64_encode(sealed, slen, &b64)) < 0)
			goto done;
		p[0] = svc_dbv_str(wid);
		p[1] = svc_dbv_i64(1);
		p[2] = svc_dbv_str(b64);
		error = svc_db_run(db, STMT_AGENT_WKEY_INSERT, p, 3, NULL, NULL);
		free(sealed);
		free(b64);
		sealed = NULL;
		b64 = NULL;
		if (error == 0) {
			*out_id = 1;
			goto done;
		}
		if (error != SVC_E_CONFLICT)
			goto done;
		/* another process made it first: read theirs */
	}
	error = SVC_E_INTERNAL;
done:
	free(sealed);
	free(b64);
	svc_rows_free(rows);
	if (error < 0)
		OPENSSL_cleanse(key, SVC_CRYPTO_KEY_LEN);
	return error;
}

int svc_crypto_seal_secret(struct svc_db *db, const struct svc_config *cfg, const char *workspace_id,
			   const char *table, const char *column, const char *row, const char *secret, size_t len,
			   char **out)
{
	struct ikeys master;
	uint8_t key[SVC_CRYPTO_KEY_LEN], *sealed = NULL;
	size_t slen = 0;
	uint32_t key_id = 0;
	char aad[512];
	int error;

	if ((error = ikeys_load(cfg, &master)) < 0)
		return error;
	memcpy(key, master.cur, sizeof key);
	if (cfg->envelope_encryption && workspace_id && workspace_id[0] &&
	    (error = data_key(db, &master, workspace_id, key, &key_id)) < 0)
		goto done;
	if ((error = svc_crypto_aad(aad, sizeof aad, table, column, row)) < 0 ||
	    (error = svc_crypto_seal(key, key_id, aad, secret, len, &sealed, &slen)) < 0)
		goto done;
	error = svc_base64_encode(sealed, slen, out);
done:
	free(sealed);
	ikeys_drop(&master);
	OPENSSL_cleanse(key, sizeof key);
	return error;
}

int svc_crypto_open_secret_ex(struct svc_db *db, const struct svc_config *cfg, const char *workspace_id,
			      const char *table, const char *column, const char *row, const char *b64, char **out,
			      size_t *out_len, enum svc_crypto_sealer *by)
{
	struct ikeys master;
	uint8_t key[SVC_CRYPTO_KEY_LEN], *sealed = NULL, *plain = NULL;
	struct svc_rows *rows = NULL;
	size_t slen = 0, plen = 0;
	uint32_t key_id = 0;
	char aad[512], idtext[16];
	struct svc_dbv p[2];
	int error, used_prev = 0;

	if ((error = ikeys_load(cfg, &master)) < 0)
		return error;
	if ((error = svc_base64_decode(b64, strlen(b64), SVC_CRYPTO_MAX_PLAIN + SVC_CRYPTO_OVERHEAD, &sealed, &slen)) < 0 ||
	    (error = svc_crypto_key_id(sealed, slen, &key_id)) < 0) {
		error = error == SVC_E_INTERNAL ? error : SVC_E_VALIDATION;
		goto done;
	}
	if ((error = svc_crypto_aad(aad, sizeof aad, table, column, row)) < 0)
		goto done;
	if (key_id == 0) {
		error = open_instance(&master, aad, sealed, slen, &plain, &plen, &used_prev);
		if (by)
			*by = used_prev ? SVC_SEALER_PREVIOUS : SVC_SEALER_CURRENT;
	} else {
		if (!workspace_id || !workspace_id[0]) {
			error = SVC_E_VALIDATION;
			goto done;
		}
		p[0] = svc_dbv_str(workspace_id);
		p[1] = svc_dbv_i64(key_id);
		if ((error = svc_db_run(db, STMT_AGENT_WKEY_GET, p, 2, &rows, NULL)) < 0)
			goto done;
		if (!rows || rows->nrows != 1) {
			error = SVC_E_VALIDATION;
			goto done;
		}
		snprintf(idtext, sizeof idtext, "%u", key_id);
		if ((error = open_data_key(&master, workspace_id, idtext, svc_rows_get(rows, 0, KCOL_SEALED), key)) < 0)
			goto done;
		error = svc_crypto_open(key, aad, sealed, slen, &plain, &plen);
		if (by)
			*by = SVC_SEALER_DATA_KEY;
	}
	if (error < 0)
		goto done;
	*out = (char *)plain;
	*out_len = plen;
done:
	if (error == SVC_E_VALIDATION)
		svc_log_error("crypto: a secret in %s.%s does not open with %s (ENCRYPTION_KEY changed without "
			      "svc-admin rotate-key, or the value was altered)", table, column,
			      key_id == 0 ? "the instance key" : "its workspace data key");
	svc_rows_free(rows);
	free(sealed);
	ikeys_drop(&master);
	OPENSSL_cleanse(key, sizeof key);
	return error;
}

int svc_crypto_open_secret(struct svc_db *db, const struct svc_config *cfg, const char *workspace_id,
			   const char *table, const char *column, const char *row, const char *b64, char **out,
			   size_t *out_len)
{
	return svc_crypto_open_secret_ex(db, cfg, workspace_id, table, column, row, b64, out, out_len, NULL);
}
