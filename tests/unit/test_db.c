/* test_db.c: every statement of lib/db/db_stmts.h prepares against the migrated schema. */
#include <stdio.h>
#include <stdlib.h>

#include <CUnit/CUnit.h>
#include <mysql.h>

#include "db/db.h"
#include "core/err.h"
#include "unit.h"

static void test_db_statements_prepare(void)
{
	struct svc_config cfg;
	struct svc_db *db = NULL;
	char errbuf[256];
	size_t failed = 0;
	int err;

	if (!getenv("SVC_CONFIG") && !getenv("SVC_DB_SOCKET")) {
		/* ./svc-dev test sets SVC_TEST_REQUIRE_DB, so there the database can never be skipped */
		CU_ASSERT_PTR_NULL(getenv("SVC_TEST_REQUIRE_DB"));
		printf("\n  (no SVC_CONFIG / SVC_DB_SOCKET: the database test needs svc-dev test's MariaDB)\n");
		return;
	}
	CU_ASSERT_FATAL(svc_config_load(&cfg, errbuf, sizeof errbuf) == 0);
	err = svc_db_open(&cfg, &db);
	CU_ASSERT_FATAL(err == 0);
	err = svc_db_prepare_all(db, &failed);
	if (err < 0)
		printf("\n  statement %zu does not prepare: %s\n", failed, svc_db_sql((enum svc_stmt)failed));
	CU_ASSERT_EQUAL(err, 0);
	svc_db_close(db);
	svc_config_dispose(&cfg);
	mysql_library_end();
}

static void test_db_duplicate_is_conflict(void)
{
	struct svc_config cfg;
	struct svc_db *db = NULL;
	char errbuf[256];
	struct svc_dbv p[4];

	if (!getenv("SVC_CONFIG") && !getenv("SVC_DB_SOCKET"))
		return;
	CU_ASSERT_FATAL(svc_config_load(&cfg, errbuf, sizeof errbuf) == 0);
	CU_ASSERT_FATAL(svc_db_open(&cfg, &db) == 0);
	CU_ASSERT_EQUAL(svc_db_begin(db), 0);
	p[0] = svc_dbv_str("00000000-0000-4000-8000-00000000dead");
	p[1] = svc_dbv_str("unit-dup@example.test");
	p[2] = svc_dbv_null();
	p[3] = svc_dbv_null();
	CU_ASSERT_EQUAL(svc_db_run(db, STMT_USER_INSERT, p, 4, NULL, NULL), 0);
	p[0] = svc_dbv_str("00000000-0000-4000-8000-00000000beef");
	CU_ASSERT_EQUAL(svc_db_run(db, STMT_USER_INSERT, p, 4, NULL, NULL), SVC_E_CONFLICT);
	/* wrong parameter count is a programming error reported as internal */
	CU_ASSERT_EQUAL(svc_db_run(db, STMT_USER_INSERT, p, 2, NULL, NULL), SVC_E_INTERNAL);
	CU_ASSERT_EQUAL(svc_db_rollback(db), 0);
	{
		struct svc_rows *rows = NULL;
		struct svc_dbv e = svc_dbv_str("unit-dup@example.test");
		CU_ASSERT_EQUAL(svc_db_run(db, STMT_USER_BY_EMAIL, &e, 1, &rows, NULL), 0);
		CU_ASSERT_PTR_NOT_NULL(rows);
		if (rows)
			CU_ASSERT_EQUAL(rows->nrows, 0);
		svc_rows_free(rows);
	}
	svc_db_close(db);
	svc_config_dispose(&cfg);
}

SVC_TEST_SUITE(db_suite)
{
	CU_pSuite s = CU_add_suite("db", NULL, NULL);
	CU_add_test(s, "test_db_statements_prepare", test_db_statements_prepare);
	CU_add_test(s, "test_db_duplicate_is_conflict", test_db_duplicate_is_conflict);
}
