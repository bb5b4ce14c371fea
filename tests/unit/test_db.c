/* test_db.c: every statement of lib/db/db_stmts.h prepares against the migrated schema. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <CUnit/CUnit.h>
#include <mysql.h>
#include <mysqld_error.h>
#include <errmsg.h>

#include "db/db.h"
#include "core/err.h"
#include "core/util.h"
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

/* svc_db_tx_steps(): the steps commit together, or a failing one takes the earlier ones back. */
static void test_db_tx_steps(void)
{
	struct svc_config cfg;
	struct svc_db *db = NULL;
	struct svc_rows *rows = NULL;
	char errbuf[256], uid[37], uid2[37], email[64];
	struct svc_dbv a[4], b[4], q;
	uint64_t n1 = 9, n2 = 9;
	struct svc_db_step steps[2] = { { STMT_USER_INSERT, a, 4, &n1 }, { STMT_USER_INSERT, b, 4, &n2 } };

	if (!getenv("SVC_CONFIG") && !getenv("SVC_DB_SOCKET"))
		return;
	CU_ASSERT_FATAL(svc_config_load(&cfg, errbuf, sizeof errbuf) == 0);
	CU_ASSERT_FATAL(svc_db_open(&cfg, &db) == 0);
	svc_uuid_v4(uid);
	svc_uuid_v4(uid2);
	snprintf(email, sizeof email, "unit-steps-%.8s@example.test", uid);
	a[0] = svc_dbv_str(uid);
	a[1] = svc_dbv_str(email);
	a[2] = a[3] = svc_dbv_null();
	b[0] = svc_dbv_str(uid2);
	b[1] = svc_dbv_str(email); /* the same address: the second step fails */
	b[2] = b[3] = svc_dbv_null();
	CU_ASSERT_EQUAL(svc_db_tx_steps(db, steps, 2), SVC_E_CONFLICT);
	q = svc_dbv_str(uid);
	CU_ASSERT_EQUAL(svc_db_run(db, STMT_USER_BY_ID, &q, 1, &rows, NULL), 0);
	CU_ASSERT(rows && rows->nrows == 0); /* the first insert was taken back */
	svc_rows_free(rows);
	rows = NULL;
	CU_ASSERT_EQUAL(svc_db_tx_steps(db, steps, 1), 0);
	CU_ASSERT_EQUAL(n1, 1);
	CU_ASSERT_EQUAL(svc_db_run(db, STMT_USER_BY_ID, &q, 1, &rows, NULL), 0);
	CU_ASSERT(rows && rows->nrows == 1);
	svc_rows_free(rows);
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


/* The retry decision: which MariaDB errors run a transaction again, which mean the server is gone. */
static void test_db_fault_classes(void)
{
	CU_ASSERT_EQUAL(svc_db_fault_of(ER_LOCK_DEADLOCK), SVC_DB_FAULT_RETRY); /* 1213, Galera's certification failure too */
	CU_ASSERT_EQUAL(svc_db_fault_of(ER_LOCK_WAIT_TIMEOUT), SVC_DB_FAULT_BUSY);
	CU_ASSERT_EQUAL(svc_db_fault_of(ER_UNKNOWN_COM_ERROR), SVC_DB_FAULT_GONE); /* 1047: node not ready */
	CU_ASSERT_EQUAL(svc_db_fault_of(CR_SERVER_GONE_ERROR), SVC_DB_FAULT_GONE);
	CU_ASSERT_EQUAL(svc_db_fault_of(CR_SERVER_LOST), SVC_DB_FAULT_GONE);
	CU_ASSERT_EQUAL(svc_db_fault_of(ER_CONNECTION_KILLED), SVC_DB_FAULT_GONE);
	CU_ASSERT_EQUAL(svc_db_fault_of(ER_DUP_ENTRY), SVC_DB_FAULT_OTHER);
	CU_ASSERT_EQUAL(svc_db_fault_of(ER_PARSE_ERROR), SVC_DB_FAULT_OTHER);
	CU_ASSERT_EQUAL(svc_db_fault_of(0), SVC_DB_FAULT_OTHER);
}

static void test_db_server_list(void)
{
	struct svc_db_server sv[SVC_DB_MAX_SERVERS];
	size_t n = 0;

	CU_ASSERT_EQUAL(svc_db_parse_servers("db1:3307, /run/mysqld/mysqld.sock ,db3,[::1]:3310", 3306, sv, &n), 0);
	CU_ASSERT_EQUAL(n, 4);
	CU_ASSERT_STRING_EQUAL(sv[0].host, "db1");
	CU_ASSERT_EQUAL(sv[0].port, 3307);
	CU_ASSERT_STRING_EQUAL(sv[0].socket, "");
	CU_ASSERT_STRING_EQUAL(sv[1].socket, "/run/mysqld/mysqld.sock");
	CU_ASSERT_STRING_EQUAL(sv[1].host, "");
	CU_ASSERT_STRING_EQUAL(sv[2].host, "db3");
	CU_ASSERT_EQUAL(sv[2].port, 3306);
	CU_ASSERT_STRING_EQUAL(sv[3].host, "::1");
	CU_ASSERT_EQUAL(sv[3].port, 3310);
	CU_ASSERT_EQUAL(svc_db_parse_servers("[::1]", 3306, sv, &n), 0);
	CU_ASSERT_EQUAL(sv[0].port, 3306);
	CU_ASSERT_EQUAL(svc_db_parse_servers("", 3306, sv, &n), SVC_E_VALIDATION);
	CU_ASSERT_EQUAL(svc_db_parse_servers("a,,b", 3306, sv, &n), SVC_E_VALIDATION);
	CU_ASSERT_EQUAL(svc_db_parse_servers("a:0", 3306, sv, &n), SVC_E_VALIDATION);
	CU_ASSERT_EQUAL(svc_db_parse_servers("a:65536", 3306, sv, &n), SVC_E_VALIDATION);
	CU_ASSERT_EQUAL(svc_db_parse_servers("a:", 3306, sv, &n), SVC_E_VALIDATION);
	CU_ASSERT_EQUAL(svc_db_parse_servers(":3306", 3306, sv, &n), SVC_E_VALIDATION);
	CU_ASSERT_EQUAL(svc_db_parse_servers("[::1]x", 3306, sv, &n), SVC_E_VALIDATION);
	CU_ASSERT_EQUAL(svc_db_parse_servers("a,b,c,d,e,f,g,h,i", 3306, sv, &n), SVC_E_VALIDATION);
	CU_ASSERT_EQUAL(svc_db_parse_servers("a,b,c,d,e,f,g,h", 3306, sv, &n), 0);
	CU_ASSERT_EQUAL(n, SVC_DB_MAX_SERVERS);
}

/* ---- a real deadlock (1213) between two connections: svc_db_tx runs the loser again */

#define DL_INSTANCE "unit-deadlock"

struct deadlock {
	struct svc_db *db;
	int runs;
	int result;
};

static int bump(struct svc_db *db, const char *name)
{
	struct svc_dbv p[3] = { svc_dbv_str(name), svc_dbv_str(DL_INSTANCE), svc_dbv_i64(1) };

	return svc_db_run(db, STMT_METRIC_ADD, p, 3, NULL, NULL);
}

static int deadlock_tx(struct svc_db *db, void *arg)
{
	struct deadlock *d = arg;
	int err;

	d->runs++;
	if ((err = bump(db, "unit_t1")) < 0)
		return err;
	return bump(db, "unit_t2"); /* waits for the other connection, which then wants unit_t1 */
}

static void *deadlock_thread(void *arg)
{
	struct deadlock *d = arg;

	d->result = svc_db_tx(d->db, deadlock_tx, d);
	return NULL;
}

static uint64_t metric_sum(struct svc_db *db, const char *name)
{
	struct svc_rows *rows = NULL;
	uint64_t v = 0;
	size_t r;

	if (svc_db_run(db, STMT_METRICS_SUM, NULL, 0, &rows, NULL) < 0)
		return 0;
	for (r = 0; rows && r < rows->nrows; r++)
		if (strcmp(svc_rows_get(rows, r, MTCOL_NAME), name) == 0)
			svc_parse_u64(svc_rows_get(rows, r, MTCOL_VALUE), UINT64_MAX, &v);
	svc_rows_free(rows);
	return v;
}

static void test_db_deadlock_runs_again(void)
{
	struct svc_config cfg;
	struct svc_db *a = NULL, *b = NULL;
	struct deadlock d = { NULL, 0, 1 };
	struct timespec pause = { 0, 300 * 1000000L };
	char errbuf[256];
	pthread_t th;
	uint64_t before, after;

	if (!getenv("SVC_CONFIG") && !getenv("SVC_DB_SOCKET"))
		return;
	CU_ASSERT_FATAL(svc_config_load(&cfg, errbuf, sizeof errbuf) == 0);
	cfg.db_tx_retries = 3;
	CU_ASSERT_FATAL(svc_db_open(&cfg, &a) == 0);
	CU_ASSERT_FATAL(svc_db_open(&cfg, &b) == 0);
	CU_ASSERT_EQUAL(bump(a, "unit_t1"), 0);
	CU_ASSERT_EQUAL(bump(a, "unit_t2"), 0);
	before = metric_sum(a, "db_tx_retries");
	/* b: the heavier transaction (InnoDB rolls back the one that changed fewer rows) holds unit_t2 */
	CU_ASSERT_EQUAL_FATAL(svc_db_exec_script(b, "START TRANSACTION;"
		"INSERT INTO db_metrics (name, instance, value, updated_at) VALUES "
		"('unit_h1', '" DL_INSTANCE "', 1, UTC_TIMESTAMP(3)), ('unit_h2', '" DL_INSTANCE "', 1, UTC_TIMESTAMP(3)), "
		"('unit_h3', '" DL_INSTANCE "', 1, UTC_TIMESTAMP(3)), ('unit_h4', '" DL_INSTANCE "', 1, UTC_TIMESTAMP(3)) "
		"ON DUPLICATE KEY UPDATE value = value + 1;"
		"UPDATE db_metrics SET value = value + 1 WHERE name = 'unit_t2' AND instance = '" DL_INSTANCE "'"), 0);
	/* a: takes unit_t1, then waits for unit_t2 */
	d.db = a;
	CU_ASSERT_FATAL(pthread_create(&th, NULL, deadlock_thread, &d) == 0);
	nanosleep(&pause, NULL);
	/* b now wants unit_t1: a deadlock, a is its victim (1213), b gets the row once a rolled back */
	CU_ASSERT_EQUAL(svc_db_exec_script(b,
		"UPDATE db_metrics SET value = value + 1 WHERE name = 'unit_t1' AND instance = '" DL_INSTANCE "'"), 0);
	CU_ASSERT_EQUAL(svc_db_exec_script(b, "COMMIT"), 0);
	pthread_join(th, NULL);
	CU_ASSERT_EQUAL(d.result, 0);
	CU_ASSERT_EQUAL(d.runs, 2); /* once deadlocked, once through */
	after = metric_sum(a, "db_tx_retries");
	CU_ASSERT_EQUAL(after, before + 1);
	svc_db_close(a);
	svc_db_close(b);
	svc_config_dispose(&cfg);
}

/* ---- failover over SVC_DB_HOSTS: the test's one MariaDB stands for every server of the list */

static int64_t connection_id(struct svc_db *db, int *out_err)
{
	struct svc_rows *rows = NULL;
	uint64_t id = 0;

	*out_err = svc_db_run(db, STMT_DB_CONNECTION_ID, NULL, 0, &rows, NULL);
	if (*out_err == 0 && rows && rows->nrows == 1)
		svc_parse_u64(svc_rows_get(rows, 0, CICOL_ID), UINT64_MAX, &id);
	svc_rows_free(rows);
	return (int64_t)id;
}

static void kill_connection(struct svc_db *killer, int64_t id)
{
	char q[64];

	snprintf(q, sizeof q, "KILL CONNECTION %lld", (long long)id);
	CU_ASSERT_EQUAL(svc_db_exec_script(killer, q), 0);
}

static void test_db_failover(void)
{
	struct svc_config cfg;
	struct svc_db *a = NULL, *k = NULL;
	char errbuf[256], hosts[600];
	const char *sock;
	uint64_t before, after;
	int64_t t0, id, id2;
	int err;

	if (!getenv("SVC_CONFIG") && !getenv("SVC_DB_SOCKET"))
		return;
	CU_ASSERT_FATAL(svc_config_load(&cfg, errbuf, sizeof errbuf) == 0);
	sock = cfg.db_socket;
	if (!sock[0]) {
		svc_config_dispose(&cfg);
		return;
	}
	CU_ASSERT_FATAL(svc_db_open(&cfg, &k) == 0);
	before = metric_sum(k, "db_failovers");

	/* a dead first server: the second one, at once (a missing socket fails without waiting) */
	snprintf(hosts, sizeof hosts, "/nonexistent/svc-unit.sock, %s", sock);
	cfg.db_hosts = hosts;
	t0 = svc_mono_ms();
	CU_ASSERT_FATAL(svc_db_open(&cfg, &a) == 0);
	CU_ASSERT(svc_mono_ms() - t0 < 2000);
	CU_ASSERT_EQUAL(svc_db_server_index(a), 1);
	printf("\n  (connected past a dead first server in %lld ms)", (long long)(svc_mono_ms() - t0));
	svc_db_close(a);
	a = NULL;

	/* the server of a connection dies (KILL): outside a transaction the statement runs again at
	 * once on the next server of the list */
	snprintf(hosts, sizeof hosts, "%s,%s", sock, sock);
	CU_ASSERT_FATAL(svc_db_open(&cfg, &a) == 0);
	CU_ASSERT_EQUAL(svc_db_server_index(a), 0);
	id = connection_id(a, &err);
	CU_ASSERT_FATAL(err == 0 && id > 0);
	kill_connection(k, id);
	t0 = svc_mono_ms();
	id2 = connection_id(a, &err);
	printf("\n  (a statement whose server died answered from the next one in %lld ms)", (long long)(svc_mono_ms() - t0));
	CU_ASSERT_EQUAL(err, 0);
	CU_ASSERT(id2 > 0 && id2 != id);
	CU_ASSERT_EQUAL(svc_db_server_index(a), 1);

	/* inside a transaction the request in flight gets 503 at once; its next statement connects
	 * to the next server (round the list: the first) */
	CU_ASSERT_EQUAL(svc_db_begin(a), 0);
	kill_connection(k, id2);
	t0 = svc_mono_ms();
	connection_id(a, &err);
	CU_ASSERT_EQUAL(err, SVC_E_UNAVAILABLE);
	CU_ASSERT(svc_mono_ms() - t0 < 1000);
	CU_ASSERT_EQUAL(svc_db_rollback(a), 0);
	id = connection_id(a, &err);
	CU_ASSERT_EQUAL(err, 0);
	CU_ASSERT(id > 0 && id != id2);
	CU_ASSERT_EQUAL(svc_db_server_index(a), 0);

	after = metric_sum(k, "db_failovers");
	CU_ASSERT_EQUAL(after, before + 3); /* the dead first server, then twice round the list */
	svc_db_close(a);
	svc_db_close(k);
	svc_config_dispose(&cfg);
}

/* Galera replicates InnoDB only, and needs a primary key in every table: the migrated schema has both. */
static void test_db_schema_fits_galera(void)
{
	struct svc_config cfg;
	struct svc_db *db = NULL;
	struct svc_rows *rows = NULL;
	char errbuf[256];
	size_t r;

	if (!getenv("SVC_CONFIG") && !getenv("SVC_DB_SOCKET"))
		return;
	CU_ASSERT_FATAL(svc_config_load(&cfg, errbuf, sizeof errbuf) == 0);
	CU_ASSERT_FATAL(svc_db_open(&cfg, &db) == 0);
	CU_ASSERT_EQUAL(svc_db_run(db, STMT_SCHEMA_UNFIT, NULL, 0, &rows, NULL), 0);
	for (r = 0; rows && r < rows->nrows; r++)
		printf("\n  table %s is not InnoDB or has no primary key", svc_rows_get(rows, r, SUCOL_TABLE));
	CU_ASSERT(rows && rows->nrows == 0);
	svc_rows_free(rows);
	svc_db_close(db);
	svc_config_dispose(&cfg);
}

SVC_TEST_SUITE(db_suite)
{
	CU_pSuite s = CU_add_suite("db", NULL, NULL);
	CU_add_test(s, "test_db_statements_prepare", test_db_statements_prepare);
	CU_add_test(s, "test_db_duplicate_is_conflict", test_db_duplicate_is_conflict);
	CU_add_test(s, "test_db_tx_steps", test_db_tx_steps);
	CU_add_test(s, "test_db_fault_classes", test_db_fault_classes);
	CU_add_test(s, "test_db_server_list", test_db_server_list);
	CU_add_test(s, "test_db_deadlock_runs_again", test_db_deadlock_runs_again);
	CU_add_test(s, "test_db_failover", test_db_failover);
	CU_add_test(s, "test_db_schema_fits_galera", test_db_schema_fits_galera);
}
