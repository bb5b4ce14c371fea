/* crypto_rotate.c: svc-admin rotate-key: re-seal every stored secret by a new ENCRYPTION_KEY while the service runs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

#include "auth/crypto.h"
#include "core/err.h"
#include "core/log.h"

/* One column that holds sealed secrets, and its two statements (db_stmts_crypto.h). */
struct sealed_column {
	const char *table, *column;
	enum svc_stmt page, set;
};

/* The workspace data keys first: every later value sealed by one opens with either instance key anyway. */
static const struct sealed_column COLUMNS[] = {
	{ "workspace_keys", "sealed_key", STMT_ROT_WKEY_PAGE, STMT_ROT_WKEY_SET },
	{ "workspace_ai_providers", "api_key", STMT_ROT_AIKEY_PAGE, STMT_ROT_AIKEY_SET },
	{ "integration_oauth_apps", "client_secret", STMT_ROT_OAPP_PAGE, STMT_ROT_OAPP_SET },
	{ "integration_credentials", "value", STMT_ROT_CRED_PAGE, STMT_ROT_CRED_SET },
	{ "integration_oauth_states", "verifier", STMT_ROT_STATE_PAGE, STMT_ROT_STATE_SET },
	{ "assistant_tokens", "sealed_token", STMT_ROT_ATOKEN_PAGE, STMT_ROT_ATOKEN_SET },
	{ "integration_connections", "access_token", STMT_ROT_CACCESS_PAGE, STMT_ROT_CACCESS_SET },
	{ "integration_connections", "refresh_token", STMT_ROT_CREFRESH_PAGE, STMT_ROT_CREFRESH_SET },
	{ "project_git_remotes", "token_sealed", STMT_ROT_GITREMOTE_PAGE, STMT_ROT_GITREMOTE_SET },
	{ "project_secrets", "value_sealed", STMT_ROT_PSECRET_PAGE, STMT_ROT_PSECRET_SET },
};

/* Re-seals `plain` by the current key `cur` and writes it over `old` if that is still the stored value. */
static int reseal(struct svc_db *db, const struct sealed_column *c, const uint8_t cur[SVC_CRYPTO_KEY_LEN],
		  const char *k1, const char *k2, const char *label, const char *old, const char *plain, size_t len,
		  struct svc_crypto_rotation *out)
{
	uint8_t *sealed = NULL;
	size_t slen = 0;
	char aad[512], *b64 = NULL;
	struct svc_dbv p[4];
	uint64_t affected = 0;
	int error;

	if ((error = svc_crypto_aad(aad, sizeof aad, c->table, c->column, label)) < 0 ||
	    (error = svc_crypto_seal(cur, 0, aad, plain, len, &sealed, &slen)) < 0 ||
	    (error = svc_base64_encode(sealed, slen, &b64)) < 0)
		goto done;
	p[0] = svc_dbv_str(b64);
	p[1] = svc_dbv_str(k1);
	p[2] = svc_dbv_str(k2);
	p[3] = svc_dbv_str(old);
	if ((error = svc_db_run(db, c->set, p, 4, NULL, &affected)) < 0)
		goto done;
	if (affected == 1)
		out->rotated++;
	else
		out->previous++; /* the service wrote it meanwhile, by the current key */
done:
	free(sealed);
	free(b64);
	return error;
}

/* Opens (and with `write` re-seals) one page of column `c` after the key (k1, k2); *more says whether it was full. */
static int rotate_page(struct svc_db *db, const struct svc_config *cfg, const struct sealed_column *c,
		       const uint8_t cur[SVC_CRYPTO_KEY_LEN], int write, svc_crypto_unreadable_fn on_unreadable, void *arg,
		       char *k1, size_t k1max, char *k2, size_t k2max, int *more, struct svc_crypto_rotation *out)
{
	struct svc_rows *rows = NULL;
	struct svc_dbv p[3] = { svc_dbv_str(k1), svc_dbv_str(k1), svc_dbv_str(k2) };
	enum svc_crypto_sealer by;
	size_t r, len;
	char *plain;
	int error;

	if ((error = svc_db_run(db, c->page, p, 3, &rows, NULL)) < 0)
		return error;
	for (r = 0; rows && r < rows->nrows; r++) {
		const char *rk1 = svc_rows_get(rows, r, RCOL_K1), *rk2 = svc_rows_get(rows, r, RCOL_K2);
		const char *label = svc_rows_get(rows, r, RCOL_LABEL), *sealed = svc_rows_get(rows, r, RCOL_SEALED);

		if (!rk1 || !rk2 || !label) {
			error = SVC_E_INTERNAL;
			break;
		}
		if (!sealed || !sealed[0])
			continue; /* no secret in this row (an AI provider without a key) */
		plain = NULL;
		error = svc_crypto_open_secret_ex(db, cfg, svc_rows_get(rows, r, RCOL_WORKSPACE), c->table, c->column,
						  label, sealed, &plain, &len, &by);
		if (error == SVC_E_VALIDATION) {
			out->unreadable++;
			if (on_unreadable)
				on_unreadable(arg, c->table, c->column, label);
			error = 0;
			continue;
		}
		if (error < 0)
			break;
		if (by == SVC_SEALER_CURRENT)
			out->current++;
		else if (by == SVC_SEALER_DATA_KEY)
			out->data_key++;
		else if (!write)
			out->previous++;
		else
			error = reseal(db, c, cur, rk1, rk2, label, sealed, plain, len, out);
		svc_crypto_free_secret(plain, len);
		if (error < 0)
			break;
	}
	if (error == 0 && rows && rows->nrows > 0) {
		snprintf(k1, k1max, "%s", svc_rows_get(rows, rows->nrows - 1, RCOL_K1));
		snprintf(k2, k2max, "%s", svc_rows_get(rows, rows->nrows - 1, RCOL_K2));
	}
	*more = error == 0 && rows && rows->nrows == 100; /* the LIMIT of ROT_PAGE */
	svc_rows_free(rows);
	return error;
}

int svc_crypto_rotate(struct svc_db *db, const struct svc_config *cfg, int write, svc_crypto_unreadable_fn on_unreadable,
		      void *arg, struct svc_crypto_rotation *out)
{
	uint8_t cur[SVC_CRYPTO_KEY_LEN];
	char k1[128], k2[128];
	size_t i;
	int error = 0, more;

	memset(out, 0, sizeof *out);
	if (!cfg->encryption_key || svc_crypto_parse_key(cfg->encryption_key, cur) < 0) {
		OPENSSL_cleanse(cur, sizeof cur);
		svc_log_error("crypto: ENCRYPTION_KEY is not set or not 64 hex digits");
		return SVC_E_UNAVAILABLE;
	}
	for (i = 0; error == 0 && i < sizeof COLUMNS / sizeof COLUMNS[0]; i++) {
		k1[0] = k2[0] = '\0';
		do
			error = rotate_page(db, cfg, &COLUMNS[i], cur, write, on_unreadable, arg, k1, sizeof k1, k2, sizeof k2,
					    &more, out);
		while (error == 0 && more);
	}
	OPENSSL_cleanse(cur, sizeof cur);
	return error;
}
