/* test_crypto.c: AES-256-GCM sealing, its format and failures, base64, and envelope keys against the database. */
#include <stdlib.h>
#include <string.h>

#include <CUnit/CUnit.h>
#include <mysql.h>

#include "auth/crypto.h"
#include "core/err.h"
#include "unit.h"
#include "core/util.h"

static const char *hexkey = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";

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

SVC_TEST_SUITE(crypto)
{
	CU_pSuite s = CU_add_suite("crypto", NULL, NULL);

	CU_add_test(s, "test_crypto_seal_open_round_trip", test_crypto_seal_open_round_trip);
	CU_add_test(s, "test_crypto_open_refuses_tampering", test_crypto_open_refuses_tampering);
	CU_add_test(s, "test_crypto_parse_key_and_base64", test_crypto_parse_key_and_base64);
	CU_add_test(s, "test_crypto_envelope_secret_round_trip", test_crypto_envelope_secret_round_trip);
}
