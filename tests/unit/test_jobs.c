/* test_jobs.c: the jobs table against the database: enqueue, take, SKIP LOCKED between connections, retry, dispatch. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <CUnit/CUnit.h>
#include <mysql.h>

#include "core/err.h"
#include "db/jobs.h"
#include "unit.h"

static int ran;

static int job_ok(void *ctx, const struct svc_job *job, char *errmsg, size_t errmax)
{
	(void)ctx;
	(void)errmsg;
	(void)errmax;
	ran++;
	return strcmp(job->payload, "{\"fail\":true}") == 0 ? SVC_E_INTERNAL : 0;
}

/* A job that hands back the ctx it was run with. */
static void *seen_ctx;
static int job_ctx(void *ctx, const struct svc_job *job, char *errmsg, size_t errmax)
{
	(void)job;
	(void)errmsg;
	(void)errmax;
	seen_ctx = ctx;
	return 0;
}

/* An entry's own ctx (a struct svc_job_ctx for lib/project's jobs) wins over the worker's; without one the worker's. */
static void test_jobs_dispatch_entry_ctx(void)
{
	static struct svc_job_ctx jc;
	static const struct svc_job_handler table[] = { { "unit.own", job_ctx, &jc }, { "unit.worker", job_ctx, NULL } };
	struct svc_job job = { 0 };
	int worker;
	char msg[64];

	snprintf(job.kind, sizeof job.kind, "unit.own");
	CU_ASSERT_EQUAL(svc_jobs_dispatch(table, 2, &worker, &job, msg, sizeof msg), 0);
	CU_ASSERT_PTR_EQUAL(seen_ctx, &jc);
	snprintf(job.kind, sizeof job.kind, "unit.worker");
	CU_ASSERT_EQUAL(svc_jobs_dispatch(table, 2, &worker, &job, msg, sizeof msg), 0);
	CU_ASSERT_PTR_EQUAL(seen_ctx, &worker);
}

static int open_db(struct svc_config *cfg, struct svc_db **db)
{
	char errbuf[256];

	if (svc_config_load(cfg, errbuf, sizeof errbuf) < 0)
		return -1;
	return svc_db_open(cfg, db);
}

static const char *state_of(struct svc_db *db, int64_t id, struct svc_rows **rows)
{
	struct svc_dbv p = svc_dbv_i64(id);

	*rows = NULL;
	if (svc_db_run(db, STMT_JOB_GET, &p, 1, rows, NULL) < 0 || !*rows || (*rows)->nrows != 1)
		return "";
	return svc_rows_get(*rows, 0, 0);
}

/* Takes jobs until job `id` comes (other tests' jobs may be queued too; they are put back). */
static int take_until(struct svc_db *db, int64_t id, struct svc_job *out)
{
	int i, r;

	for (i = 0; i < 50; i++) {
		r = svc_jobs_take(db, 60, out);
		if (r <= 0)
			return r;
		if (out->id == id)
			return 1;
		svc_jobs_fail(db, out, "not mine", 0);
		svc_job_dispose(out);
	}
	return 0;
}

/* A worker killed while it ran a job (here: a child that takes it and dies) gets it handed back by svc_jobs_recover(). */
static void test_jobs_recover_dead_owner(void)
{
	struct svc_config cfg;
	struct svc_db *db = NULL;
	struct svc_rows *rows = NULL;
	struct svc_job job, probe;
	int64_t id = 0;
	unsigned released = 99;
	char owner[160], host[128], dead[200];
	int i;

	CU_ASSERT_EQUAL(svc_jobs_owner(owner, sizeof owner), 0);
	CU_ASSERT_EQUAL(gethostname(host, sizeof host), 0);
	CU_ASSERT_EQUAL(strncmp(owner, host, strlen(host)), 0);
	CU_ASSERT_PTR_NOT_NULL(strchr(owner + strlen(host) + 1, ':'));
	CU_ASSERT_EQUAL(svc_jobs_owner(owner, 8), SVC_E_INTERNAL);
	if (!getenv("SVC_CONFIG") && !getenv("SVC_DB_SOCKET")) {
		CU_ASSERT_PTR_NULL(getenv("SVC_TEST_REQUIRE_DB"));
		return;
	}
	CU_ASSERT_FATAL(open_db(&cfg, &db) == 0);
	CU_ASSERT_EQUAL_FATAL(svc_jobs_enqueue(db, "unit.ok", "{}", 3, &id), 0);
	/* leased by this process, which is alive: recover leaves it */
	CU_ASSERT_EQUAL_FATAL(take_until(db, id, &job), 1);
	CU_ASSERT_EQUAL(svc_jobs_recover(db, &released), 0);
	CU_ASSERT_EQUAL(take_until(db, id, &probe), 0);
	CU_ASSERT_STRING_EQUAL(state_of(db, id, &rows), "running");
	svc_rows_free(rows);
	/* leased by a process that is gone (a pid above any pid_max): handed back, the attempt it used counted */
	CU_ASSERT_EQUAL(svc_jobs_fail(db, &job, "back to the queue", 0), 0);
	svc_job_dispose(&job);
	snprintf(dead, sizeof dead, "%s:999999999:12345", host);
	for (i = 0; i < 50; i++) {
		CU_ASSERT_EQUAL_FATAL(svc_jobs_take_as(db, dead, 60, &job), 1);
		if (job.id == id)
			break;
		svc_jobs_fail(db, &job, "not mine", 0);
		svc_job_dispose(&job);
	}
	CU_ASSERT_EQUAL_FATAL(job.id, id);
	svc_job_dispose(&job);
	CU_ASSERT_EQUAL(take_until(db, id, &probe), 0);
	CU_ASSERT_EQUAL(svc_jobs_recover(db, &released), 0);
	CU_ASSERT(released >= 1);
	CU_ASSERT_EQUAL_FATAL(take_until(db, id, &job), 1);
	CU_ASSERT_EQUAL(job.attempts, 3);
	CU_ASSERT_EQUAL(svc_jobs_finish(db, job.id), 0);
	svc_job_dispose(&job);
	svc_db_close(db);
	svc_config_dispose(&cfg);
}

static void test_jobs_take_lock_finish_and_retry(void)
{
	struct svc_config cfg, cfg2;
	struct svc_db *db = NULL, *db2 = NULL;
	struct svc_rows *rows = NULL;
	struct svc_job job, other;
	int64_t id = 0, id2 = 0;
	static const struct svc_job_handler table[] = { { "unit.ok", job_ok, NULL } };
	char msg[128];

	if (!getenv("SVC_CONFIG") && !getenv("SVC_DB_SOCKET")) {
		CU_ASSERT_PTR_NULL(getenv("SVC_TEST_REQUIRE_DB"));
		return;
	}
	CU_ASSERT_FATAL(open_db(&cfg, &db) == 0);
	CU_ASSERT_FATAL(open_db(&cfg2, &db2) == 0);
	CU_ASSERT_EQUAL(svc_jobs_enqueue(db, "", "{}", 3, &id), SVC_E_VALIDATION);
	CU_ASSERT_EQUAL(svc_jobs_enqueue(db, "unit.ok", "{}", 0, &id), SVC_E_VALIDATION);
	CU_ASSERT_EQUAL_FATAL(svc_jobs_enqueue(db, "unit.ok", "{\"fail\":true}", 2, &id), 0);
	CU_ASSERT(id > 0);

	/* while one connection holds the row locked, the other skips it */
	CU_ASSERT_EQUAL_FATAL(svc_db_begin(db2), 0);
	{
		struct svc_rows *locked = NULL;
		CU_ASSERT_EQUAL(svc_db_run(db2, STMT_JOB_PICK, NULL, 0, &locked, NULL), 0);
		svc_rows_free(locked);
	}
	CU_ASSERT_EQUAL(svc_jobs_take(db, 60, &other) >= 0, 1);
	if (other.id)
		CU_ASSERT_NOT_EQUAL(other.id, id);
	if (other.id) {
		svc_jobs_fail(db, &other, "not mine", 0);
		svc_job_dispose(&other);
	}
	CU_ASSERT_EQUAL(svc_db_rollback(db2), 0);

	CU_ASSERT_EQUAL_FATAL(take_until(db, id, &job), 1);
	CU_ASSERT_STRING_EQUAL(job.kind, "unit.ok");
	CU_ASSERT_EQUAL(job.attempts, 1);
	CU_ASSERT_STRING_EQUAL(state_of(db, id, &rows), "running");
	svc_rows_free(rows);
	/* leased: nobody else gets it */
	CU_ASSERT_EQUAL(take_until(db2, id, &other), 0);
	CU_ASSERT_EQUAL(svc_jobs_dispatch(table, 1, NULL, &job, msg, sizeof msg), SVC_E_INTERNAL);
	CU_ASSERT_EQUAL(svc_jobs_fail(db, &job, "first failure", 0), 0);
	CU_ASSERT_STRING_EQUAL(state_of(db, id, &rows), "queued");
	svc_rows_free(rows);
	svc_job_dispose(&job);
	CU_ASSERT_EQUAL_FATAL(take_until(db, id, &job), 1);
	CU_ASSERT_EQUAL(job.attempts, 2);
	CU_ASSERT_EQUAL(svc_jobs_fail(db, &job, "second failure", 0), 0);
	CU_ASSERT_STRING_EQUAL(state_of(db, id, &rows), "failed");
	CU_ASSERT_STRING_EQUAL(svc_rows_get(rows, 0, 2), "second failure");
	svc_rows_free(rows);
	svc_job_dispose(&job);

	/* a job that succeeds through run_once-style dispatch is done */
	CU_ASSERT_EQUAL_FATAL(svc_jobs_enqueue(db, "unit.ok", "{}", 3, &id2), 0);
	CU_ASSERT_EQUAL_FATAL(take_until(db, id2, &job), 1);
	ran = 0;
	CU_ASSERT_EQUAL(svc_jobs_dispatch(table, 1, NULL, &job, msg, sizeof msg), 0);
	CU_ASSERT_EQUAL(ran, 1);
	CU_ASSERT_EQUAL(svc_jobs_finish(db, job.id), 0);
	CU_ASSERT_STRING_EQUAL(state_of(db, id2, &rows), "done");
	svc_rows_free(rows);
	/* an unknown kind is not found */
	snprintf(job.kind, sizeof job.kind, "unit.unknown");
	CU_ASSERT_EQUAL(svc_jobs_dispatch(table, 1, NULL, &job, msg, sizeof msg), SVC_E_NOT_FOUND);
	svc_job_dispose(&job);
	svc_db_close(db2);
	svc_db_close(db);
	svc_config_dispose(&cfg2);
	svc_config_dispose(&cfg);
	mysql_library_end();
}

SVC_TEST_SUITE(jobs)
{
	CU_pSuite s = CU_add_suite("jobs", NULL, NULL);

	CU_add_test(s, "test_jobs_recover_dead_owner", test_jobs_recover_dead_owner);
	CU_add_test(s, "test_jobs_dispatch_entry_ctx", test_jobs_dispatch_entry_ctx);
	CU_add_test(s, "test_jobs_take_lock_finish_and_retry", test_jobs_take_lock_finish_and_retry);
}
