/* test_crypto.c: AES-256-GCM sealing, its format and failures, base64, envelope keys against the database, and key rotation. */
#include <stdlib.h>
#include <string.h>

#include <CUnit/CUnit.h>
#include <mysql.h>

#include "auth/crypto.h"
#include "core/err.h"
#include "unit.h"
#include "core/util.h"

static const char *hexkey = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";
static const char *hexkey2 = "f0e1d2c3b4a5968778695a4b3c2d1e0ff0e1d2c3b4a5968778695a4b3c2d1e0f";

static void test_crypto_seal_open_round_trip(void)
{
	uint8_t key[32], *sealed = NULL, *plain = NULL;
	size_t slen = 0, plen = 0;
	uint32_t id = 9;

	CU_ASSERT_EQUAL_FATAL(svc_crypto_parse_key(hexkey, key), 0);
	CU_ASSERT_EQUAL_FATAL(svc_crypto_seal(key, 7, "t/c/r1", "sk-secret", 9, &sealed, &slen), 0);
	CU_ASSERT_EQUAL(slen, 9 + SVC_CRYPTO_OVERHEAD);
	CU_ASSERT_EQUAL(sealed[0], SVC_CRYPTO_VERSION);
	CU_ASSERT_EQUAL(svc_crypto_key_id(sealed, slen, &id), 0);
	CU_ASSERT_EQUAL(id, 7);
	CU_ASSERT_PTR_NULL(memmem(sealed, slen, "sk-secret", 9));
	CU_ASSERT_EQUAL(svc_crypto_open(key, "t/c/r1", sealed, slen, &plain, &plen), 0);
	CU_ASSERT_EQUAL(plen, 9);
	CU_ASSERT_STRING_EQUAL((char *)plain, "sk-secret");
	svc_crypto_free_secret(plain, plen);
	free(sealed);
}

static void test_crypto_open_refuses_tampering(void)
{
	uint8_t key[32], other[32], *sealed = NULL, *plain = NULL, *again = NULL;
	size_t slen = 0, plen = 0, alen = 0;

	CU_ASSERT_EQUAL_FATAL(svc_crypto_parse_key(hexkey, key), 0);
	memcpy(other, key, 32);
	other[31] ^= 1;
	CU_ASSERT_EQUAL_FATAL(svc_crypto_seal(key, 0, "t/c/r1", "value", 5, &sealed, &slen), 0);
	CU_ASSERT_EQUAL(svc_crypto_open(key, "t/c/r2", sealed, slen, &plain, &plen), SVC_E_VALIDATION);
	CU_ASSERT_EQUAL(svc_crypto_open(other, "t/c/r1", sealed, slen, &plain, &plen), SVC_E_VALIDATION);
	sealed[SVC_CRYPTO_HEADER_LEN] ^= 0x40;
	CU_ASSERT_EQUAL(svc_crypto_open(key, "t/c/r1", sealed, slen, &plain, &plen), SVC_E_VALIDATION);
	sealed[SVC_CRYPTO_HEADER_LEN] ^= 0x40;
	CU_ASSERT_EQUAL(svc_crypto_open(key, "t/c/r1", sealed, slen - 1, &plain, &plen), SVC_E_VALIDATION);
	CU_ASSERT_EQUAL(svc_crypto_open(key, "t/c/r1", sealed, 10, &plain, &plen), SVC_E_VALIDATION);
	sealed[0] = 2;
	CU_ASSERT_EQUAL(svc_crypto_open(key, "t/c/r1", sealed, slen, &plain, &plen), SVC_E_VALIDATION);
	sealed[0] = SVC_CRYPTO_VERSION;
	CU_ASSERT_PTR_NULL(plain);
	/* two seals of the same value differ (fresh IV) */
	CU_ASSERT_EQUAL(svc_crypto_seal(key, 0, "t/c/r1", "value", 5, &again, &alen), 0);
	CU_ASSERT(alen == slen && memcmp(again, sealed, slen) != 0);
	free(again);
	free(sealed);
}

static void test_crypto_parse_key_and_base64(void)
{
	uint8_t key[32], *out = NULL;
	size_t n = 0;
	char *b64 = NULL;

	CU_ASSERT_EQUAL(svc_crypto_parse_key("abc", key), SVC_E_VALIDATION);
	CU_ASSERT_EQUAL(svc_crypto_parse_key("zz0102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f", key),
			SVC_E_VALIDATION);
	CU_ASSERT_EQUAL(svc_base64_encode((const uint8_t *)"foob", 4, &b64), 0);
	CU_ASSERT_STRING_EQUAL(b64, "Zm9vYg==");
	CU_ASSERT_EQUAL(svc_base64_decode(b64, strlen(b64), 100, &out, &n), 0);
	CU_ASSERT(n == 4 && memcmp(out, "foob", 4) == 0);
	free(out);
	out = NULL;
	free(b64);
	CU_ASSERT_EQUAL(svc_base64_decode("Zm9vYmFy", 8, 100, &out, &n), 0);
	CU_ASSERT(n == 6 && memcmp(out, "foobar", 6) == 0);
	free(out);
	out = NULL;
	CU_ASSERT_EQUAL(svc_base64_decode("Zm9vYmFy", 8, 5, &out, &n), SVC_E_TOO_LARGE);
	CU_ASSERT_EQUAL(svc_base64_decode("Zm9", 3, 100, &out, &n), SVC_E_VALIDATION);
	CU_ASSERT_EQUAL(svc_base64_decode("Zm 9", 4, 100, &out, &n), SVC_E_VALIDATION);
	CU_ASSERT_EQUAL(svc_base64_decode("Z===", 4, 100, &out, &n), SVC_E_VALIDATION);
	CU_ASSERT_PTR_NULL(out);
}

/* With the database: envelope keys are made once per workspace and secrets open again. */
static void test_crypto_envelope_secret_round_trip(void)
{
	struct svc_config cfg;
	struct svc_db *db = NULL;
	struct svc_rows *rows = NULL;
	struct svc_dbv p[5];
	char errbuf[256], *b64 = NULL, *b64b = NULL, *plain = NULL, wid[37], uid[37];
	size_t n = 0;
	uint8_t *raw = NULL;
	size_t rawlen = 0;
	uint32_t key_id = 0;

	if (!getenv("SVC_CONFIG") && !getenv("SVC_DB_SOCKET")) {
		CU_ASSERT_PTR_NULL(getenv("SVC_TEST_REQUIRE_DB"));
		return;
	}
	CU_ASSERT_FATAL(svc_config_load(&cfg, errbuf, sizeof errbuf) == 0);
	CU_ASSERT_FATAL(svc_db_open(&cfg, &db) == 0);
	cfg.encryption_key = hexkey;
	cfg.envelope_encryption = 1;
	svc_uuid_v4(wid);
	svc_uuid_v4(uid);
	CU_ASSERT_EQUAL_FATAL(svc_db_begin(db), 0);
	p[0] = svc_dbv_str(uid);
	p[1] = svc_dbv_str("unit-crypto@example.test");
	p[2] = svc_dbv_null();
	p[3] = svc_dbv_null();
	CU_ASSERT_EQUAL(svc_db_run(db, STMT_USER_INSERT, p, 4, NULL, NULL), 0);
	p[0] = svc_dbv_str(wid);
	p[1] = svc_dbv_str("crypto");
	p[2] = svc_dbv_str("team");
	p[3] = svc_dbv_str(uid);
	CU_ASSERT_EQUAL(svc_db_run(db, STMT_WORKSPACE_INSERT, p, 4, NULL, NULL), 0);
	CU_ASSERT_EQUAL(svc_crypto_seal_secret(db, &cfg, wid, "workspace_ai_providers", "api_key", wid, "sk-1", 4, &b64), 0);
	CU_ASSERT_EQUAL(svc_crypto_seal_secret(db, &cfg, wid, "workspace_ai_providers", "api_key", wid, "sk-2", 4, &b64b), 0);
	CU_ASSERT_EQUAL(svc_base64_decode(b64, strlen(b64), 4096, &raw, &rawlen), 0);
	CU_ASSERT_EQUAL(svc_crypto_key_id(raw, rawlen, &key_id), 0);
	CU_ASSERT_EQUAL(key_id, 1); /* the workspace's data key, made on first use, then reused */
	free(raw);
	p[0] = svc_dbv_str(wid);
	CU_ASSERT_EQUAL(svc_db_run(db, STMT_AGENT_WKEY_LATEST, p, 1, &rows, NULL), 0);
	CU_ASSERT(rows && rows->nrows == 1);
	svc_rows_free(rows);
	CU_ASSERT_EQUAL(svc_crypto_open_secret(db, &cfg, wid, "workspace_ai_providers", "api_key", wid, b64b, &plain, &n), 0);
	CU_ASSERT(plain && n == 4 && strcmp(plain, "sk-2") == 0);
	svc_crypto_free_secret(plain, n);
	plain = NULL;
	/* bound to its row: another row id does not open it */
	CU_ASSERT_EQUAL(svc_crypto_open_secret(db, &cfg, wid, "workspace_ai_providers", "api_key", uid, b64, &plain, &n),
			SVC_E_VALIDATION);
	cfg.encryption_key = "";
	CU_ASSERT_EQUAL(svc_crypto_open_secret(db, &cfg, wid, "workspace_ai_providers", "api_key", wid, b64, &plain, &n),
			SVC_E_UNAVAILABLE);
	CU_ASSERT_EQUAL(svc_db_rollback(db), 0);
	free(b64);
	free(b64b);
	svc_db_close(db);
	svc_config_dispose(&cfg);
	mysql_library_end();
}

/* During a rotation a value sealed by the old key opens with ENCRYPTION_KEY_PREVIOUS; without it, it fails closed. */
static void test_crypto_previous_key_opens(void)
{
	struct svc_config cfg;
	enum svc_crypto_sealer by = SVC_SEALER_DATA_KEY;
	char *b64 = NULL, *plain = NULL;
	size_t n = 0;

	memset(&cfg, 0, sizeof cfg);
	cfg.encryption_key = hexkey;
	CU_ASSERT_EQUAL_FATAL(svc_crypto_seal_secret(NULL, &cfg, NULL, "t", "c", "r1", "sk-old", 6, &b64), 0);
	CU_ASSERT_EQUAL(svc_crypto_open_secret_ex(NULL, &cfg, NULL, "t", "c", "r1", b64, &plain, &n, &by), 0);
	CU_ASSERT_EQUAL(by, SVC_SEALER_CURRENT);
	svc_crypto_free_secret(plain, n);
	plain = NULL;
	cfg.encryption_key = hexkey2;
	cfg.encryption_key_previous = hexkey;
	CU_ASSERT_EQUAL(svc_crypto_open_secret_ex(NULL, &cfg, NULL, "t", "c", "r1", b64, &plain, &n, &by), 0);
	CU_ASSERT_EQUAL(by, SVC_SEALER_PREVIOUS);
	CU_ASSERT(plain && n == 6 && strcmp(plain, "sk-old") == 0);
	svc_crypto_free_secret(plain, n);
	plain = NULL;
	/* the previous key opens only: its row label still binds it */
	CU_ASSERT_EQUAL(svc_crypto_open_secret(NULL, &cfg, NULL, "t", "c", "r2", b64, &plain, &n), SVC_E_VALIDATION);
	cfg.encryption_key_previous = "";
	CU_ASSERT_EQUAL(svc_crypto_open_secret(NULL, &cfg, NULL, "t", "c", "r1", b64, &plain, &n), SVC_E_VALIDATION);
	CU_ASSERT_PTR_NULL(plain);
	cfg.encryption_key_previous = "not-a-key";
	CU_ASSERT_EQUAL(svc_crypto_open_secret(NULL, &cfg, NULL, "t", "c", "r1", b64, &plain, &n), SVC_E_UNAVAILABLE);
	free(b64);
}

/* Puts an AI provider with the sealed key `b64` on workspace `wid`. */
static void put_provider(struct svc_db *db, const char *wid, const char *uid, const char *b64)
{
	struct svc_dbv p[7] = { svc_dbv_str(wid), svc_dbv_str("openai"), svc_dbv_str("https://ai.example.test/v1"),
				svc_dbv_str("m"), svc_dbv_null(), svc_dbv_str(b64), svc_dbv_str(uid) };

	CU_ASSERT_EQUAL(svc_db_run(db, STMT_AGENT_PROVIDER_PUT, p, 7, NULL, NULL), 0);
}

/* Opens workspace `wid`'s stored provider key with `cfg`; returns svc_crypto_open_secret_ex()'s answer. */
static int open_provider(struct svc_db *db, const struct svc_config *cfg, const char *wid, const char *want,
			 enum svc_crypto_sealer *by)
{
	struct svc_rows *rows = NULL;
	struct svc_dbv p = svc_dbv_str(wid);
	char *plain = NULL;
	size_t n = 0;
	int err;

	CU_ASSERT_EQUAL_FATAL(svc_db_run(db, STMT_AGENT_PROVIDER_GET, &p, 1, &rows, NULL), 0);
	CU_ASSERT_FATAL(rows && rows->nrows == 1);
	err = svc_crypto_open_secret_ex(db, cfg, wid, "workspace_ai_providers", "api_key", wid,
					svc_rows_get(rows, 0, PVCOL_API_KEY), &plain, &n, by);
	if (err == 0)
		CU_ASSERT(strcmp(plain, want) == 0);
	svc_crypto_free_secret(plain, n);
	svc_rows_free(rows);
	return err;
}

/*
 * svc_crypto_rotate() against the database: a workspace data key and a value
 * sealed by the instance key move to the new key, a value under the data key
 * stays as it is, and afterwards the new key alone opens everything while the
 * old one alone opens nothing new. Counted against a baseline, in a transaction.
 */
static void test_crypto_rotate(void)
{
	struct svc_config cfg, rot;
	struct svc_db *db = NULL;
	struct svc_crypto_rotation base, r;
	struct svc_dbv p[4];
	enum svc_crypto_sealer by;
	char errbuf[256], *a = NULL, *b = NULL, w1[37], w2[37], uid[37];

	if (!getenv("SVC_CONFIG") && !getenv("SVC_DB_SOCKET")) {
		CU_ASSERT_PTR_NULL(getenv("SVC_TEST_REQUIRE_DB"));
		return;
	}
	CU_ASSERT_FATAL(svc_config_load(&cfg, errbuf, sizeof errbuf) == 0);
	CU_ASSERT_FATAL(svc_db_open(&cfg, &db) == 0);
	rot = cfg;
	rot.encryption_key = hexkey2;
	rot.encryption_key_previous = hexkey;
	CU_ASSERT_EQUAL_FATAL(svc_db_begin(db), 0);
	CU_ASSERT_EQUAL(svc_crypto_rotate(db, &rot, 0, NULL, NULL, &base), 0);
	svc_uuid_v4(uid);
	svc_uuid_v4(w1);
	svc_uuid_v4(w2);
	p[0] = svc_dbv_str(uid);
	p[1] = svc_dbv_str("unit-rotate@example.test");
	p[2] = svc_dbv_null();
	p[3] = svc_dbv_null();
	CU_ASSERT_EQUAL(svc_db_run(db, STMT_USER_INSERT, p, 4, NULL, NULL), 0);
	p[1] = svc_dbv_str("rotate");
	p[2] = svc_dbv_str("team");
	p[3] = svc_dbv_str(uid);
	p[0] = svc_dbv_str(w1);
	CU_ASSERT_EQUAL(svc_db_run(db, STMT_WORKSPACE_INSERT, p, 4, NULL, NULL), 0);
	p[0] = svc_dbv_str(w2);
	CU_ASSERT_EQUAL(svc_db_run(db, STMT_WORKSPACE_INSERT, p, 4, NULL, NULL), 0);
	cfg.encryption_key = hexkey;
	cfg.envelope_encryption = 1; /* w1's key under its data key */
	CU_ASSERT_EQUAL(svc_crypto_seal_secret(db, &cfg, w1, "workspace_ai_providers", "api_key", w1, "sk-w1", 5, &a), 0);
	cfg.envelope_encryption = 0; /* w2's under the instance key */
	CU_ASSERT_EQUAL(svc_crypto_seal_secret(db, &cfg, w2, "workspace_ai_providers", "api_key", w2, "sk-w2", 5, &b), 0);
	put_provider(db, w1, uid, a);
	put_provider(db, w2, uid, b);

	CU_ASSERT_EQUAL(svc_crypto_rotate(db, &rot, 0, NULL, NULL, &r), 0);
	CU_ASSERT_EQUAL(r.previous - base.previous, 2); /* w1's data key and w2's value */
	CU_ASSERT_EQUAL(r.data_key - base.data_key, 1);
	CU_ASSERT_EQUAL(r.rotated, 0);                  /* a check writes nothing */
	CU_ASSERT_EQUAL(svc_crypto_rotate(db, &rot, 1, NULL, NULL, &r), 0);
	CU_ASSERT_EQUAL(r.rotated, base.previous + 2);
	CU_ASSERT_EQUAL(r.previous, 0);
	CU_ASSERT_EQUAL(svc_crypto_rotate(db, &rot, 0, NULL, NULL, &r), 0);
	CU_ASSERT_EQUAL(r.previous, 0);

	rot.encryption_key_previous = ""; /* the new key alone */
	CU_ASSERT_EQUAL(open_provider(db, &rot, w1, "sk-w1", &by), 0);
	CU_ASSERT_EQUAL(by, SVC_SEALER_DATA_KEY);
	CU_ASSERT_EQUAL(open_provider(db, &rot, w2, "sk-w2", &by), 0);
	CU_ASSERT_EQUAL(by, SVC_SEALER_CURRENT);
	CU_ASSERT_EQUAL(open_provider(db, &cfg, w1, "sk-w1", &by), SVC_E_VALIDATION); /* the old key alone: closed */
	CU_ASSERT_EQUAL(open_provider(db, &cfg, w2, "sk-w2", &by), SVC_E_VALIDATION);
	CU_ASSERT_EQUAL(svc_db_rollback(db), 0);
	free(a);
	free(b);
	svc_db_close(db);
	svc_config_dispose(&cfg);
	mysql_library_end();
}

SVC_TEST_SUITE(crypto)
{
	CU_pSuite s = CU_add_suite("crypto", NULL, NULL);

	CU_add_test(s, "test_crypto_seal_open_round_trip", test_crypto_seal_open_round_trip);
	CU_add_test(s, "test_crypto_open_refuses_tampering", test_crypto_open_refuses_tampering);
	CU_add_test(s, "test_crypto_parse_key_and_base64", test_crypto_parse_key_and_base64);
	CU_add_test(s, "test_crypto_envelope_secret_round_trip", test_crypto_envelope_secret_round_trip);
	CU_add_test(s, "test_crypto_previous_key_opens", test_crypto_previous_key_opens);
	CU_add_test(s, "test_crypto_rotate", test_crypto_rotate);
}
