/* test_jobs.c: the jobs table against the database: enqueue, take, SKIP LOCKED between connections, retry, dispatch. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

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

/* Field 22 of /proc/PID/stat (proc(5): the start time in clock ticks), or 0. */
static unsigned long long stat_start(pid_t pid)
{
	char path[64], buf[1024], *p;
	unsigned long long v = 0;
	size_t n;
	FILE *f;
	int field;

	snprintf(path, sizeof path, "/proc/%ld/stat", (long)pid);
	if (!(f = fopen(path, "r")))
		return 0;
	n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = '\0';
	if (!(p = strrchr(buf, ')')))
		return 0;
	for (field = 2; field < 22 && p; field++)
		p = strchr(p + 1, ' ');
	for (p = p ? p + 1 : NULL; p && *p >= '0' && *p <= '9'; p++)
		v = v * 10 + (unsigned long long)(*p - '0');
	return v;
}

/*
 * A job leased by a process that has ended but is not reaped (a zombie: a lane whose supervisor was
 * killed, left to a PID 1 that never reaps) is handed back: a zombie holds no job.
 */
static void test_jobs_recover_zombie_owner(void)
{
	struct svc_config cfg;
	struct svc_db *db = NULL;
	struct svc_rows *rows = NULL;
	char host[128], owner[200], kind[SVC_JOB_KIND_MAX];
	int64_t id = 0;
	unsigned released = 0;
	struct svc_job job;
	pid_t child;
	int i, status;

	if (!getenv("SVC_CONFIG") && !getenv("SVC_DB_SOCKET")) {
		CU_ASSERT_PTR_NULL(getenv("SVC_TEST_REQUIRE_DB"));
		return;
	}
	CU_ASSERT_EQUAL_FATAL(gethostname(host, sizeof host), 0);
	snprintf(kind, sizeof kind, "unit.zombie%ld", (long)getpid());
	CU_ASSERT_FATAL(open_db(&cfg, &db) == 0);
	CU_ASSERT_EQUAL_FATAL(svc_jobs_enqueue(db, kind, "{}", 3, &id), 0);
	child = fork();
	CU_ASSERT_FATAL(child >= 0);
	if (child == 0)
		_exit(0);
	/* the child's start time stays in /proc while it is a zombie (not waited for yet) */
	for (i = 0; i < 200; i++) {
		char path[64], buf[256], *p;
		FILE *f;
		size_t n = 0;

		snprintf(path, sizeof path, "/proc/%ld/stat", (long)child);
		if ((f = fopen(path, "r"))) {
			n = fread(buf, 1, sizeof buf - 1, f);
			fclose(f);
		}
		buf[n] = '\0';
		if ((p = strrchr(buf, ')')) && p[1] == ' ' && p[2] == 'Z')
			break;
		usleep(10000);
	}
	snprintf(owner, sizeof owner, "%s:%ld:%llu", host, (long)child, stat_start(child));
	CU_ASSERT(stat_start(child) > 0);
	CU_ASSERT_EQUAL_FATAL(svc_jobs_take_as(db, owner, kind, 60, &job), 1);
	CU_ASSERT_EQUAL(job.id, id);
	svc_job_dispose(&job);
	CU_ASSERT_EQUAL(svc_jobs_recover(db, &released), 0);
	CU_ASSERT(released >= 1);
	CU_ASSERT_EQUAL(svc_jobs_take_as(db, owner, kind, 60, &job), 1); /* ready again */
	CU_ASSERT_EQUAL(job.id, id);
	CU_ASSERT_EQUAL(job.attempts, 2);
	svc_job_dispose(&job);
	CU_ASSERT_EQUAL(svc_jobs_finish(db, id), 0);
	CU_ASSERT_STRING_EQUAL(state_of(db, id, &rows), "done");
	svc_rows_free(rows);
	CU_ASSERT_EQUAL(waitpid(child, &status, 0), child);
	svc_db_close(db);
	svc_config_dispose(&cfg);
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
		CU_ASSERT_EQUAL_FATAL(svc_jobs_take_as(db, dead, NULL, 60, &job), 1);
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

/* A lane's kinds as svc_jobs_take_as() takes them: comma-separated, refused when they do not fit or hold a comma. */
static void test_jobs_kinds_list(void)
{
	static const struct svc_job_handler two[] = { { "a.one", job_ok, NULL }, { "b.two", job_ok, NULL } };
	static const struct svc_job_handler comma[] = { { "a,b", job_ok, NULL } };
	char out[32];

	CU_ASSERT_EQUAL(svc_jobs_kinds(two, 2, out, sizeof out), 0);
	CU_ASSERT_STRING_EQUAL(out, "a.one,b.two");
	CU_ASSERT_EQUAL(svc_jobs_kinds(two, 0, out, sizeof out), 0);
	CU_ASSERT_STRING_EQUAL(out, "");
	CU_ASSERT_EQUAL(svc_jobs_kinds(two, 2, out, 12), 0); /* "a.one,b.two" and its NUL */
	CU_ASSERT_EQUAL(svc_jobs_kinds(two, 2, out, 11), SVC_E_TOO_LARGE);
	CU_ASSERT_EQUAL(svc_jobs_kinds(two, 1, out, 6), 0);
	CU_ASSERT_STRING_EQUAL(out, "a.one");
	CU_ASSERT_EQUAL(svc_jobs_kinds(comma, 1, out, sizeof out), SVC_E_VALIDATION);
}

/* Takes a job of `kinds` as `owner` and hands back its id (0 for none, -1 for an error); the job is left leased. */
static int64_t take_id(struct svc_db *db, const char *owner, const char *kinds, unsigned *out_attempts)
{
	struct svc_job job;
	int64_t id;
	int r = svc_jobs_take_as(db, owner, kinds, 60, &job);

	if (r <= 0)
		return r;
	id = job.id;
	if (out_attempts)
		*out_attempts = job.attempts;
	svc_job_dispose(&job);
	return id;
}

/*
 * Two lanes (kinds of this run's own, so no other test's or worker's job is in the way): a lane's pick
 * takes its own kinds, oldest first, and passes over the other lane's however old; a job of one lane
 * whose worker died is handed back by svc_jobs_recover() to its own lane only; svc_jobs_run_once() with
 * a lane's table runs that lane's jobs and leaves the others queued.
 */
static void test_jobs_lanes_pick_own_kinds_in_order(void)
{
	struct svc_config cfg;
	struct svc_db *db = NULL;
	struct svc_rows *rows = NULL;
	char kq[SVC_JOB_KIND_MAX], ks[SVC_JOB_KIND_MAX], owner[160], host[128], dead[200];
	int64_t s1 = 0, q1 = 0, s2 = 0, q2 = 0, q3 = 0, s3 = 0;
	unsigned attempts = 0, released = 0;
	struct svc_job_handler quick[1] = { { kq, job_ok, NULL } }, slow[1] = { { ks, job_ok, NULL } };

	if (!getenv("SVC_CONFIG") && !getenv("SVC_DB_SOCKET")) {
		CU_ASSERT_PTR_NULL(getenv("SVC_TEST_REQUIRE_DB"));
		return;
	}
	snprintf(kq, sizeof kq, "unit.quick%ld", (long)getpid());
	snprintf(ks, sizeof ks, "unit.slow%ld", (long)getpid());
	CU_ASSERT_EQUAL_FATAL(svc_jobs_owner(owner, sizeof owner), 0);
	CU_ASSERT_EQUAL_FATAL(gethostname(host, sizeof host), 0);
	snprintf(dead, sizeof dead, "%s:999999998:12345", host);
	CU_ASSERT_FATAL(open_db(&cfg, &db) == 0);
	/* oldest first: a slow job, a quick one, a slow one, a quick one */
	CU_ASSERT_EQUAL_FATAL(svc_jobs_enqueue(db, ks, "{}", 3, &s1), 0);
	CU_ASSERT_EQUAL_FATAL(svc_jobs_enqueue(db, kq, "{}", 3, &q1), 0);
	CU_ASSERT_EQUAL_FATAL(svc_jobs_enqueue(db, ks, "{}", 3, &s2), 0);
	CU_ASSERT_EQUAL_FATAL(svc_jobs_enqueue(db, kq, "{}", 3, &q2), 0);
	CU_ASSERT(s1 < q1 && q1 < s2 && s2 < q2);

	/* the quick lane: its two, in order, never the slow ones before or between them */
	CU_ASSERT_EQUAL(take_id(db, owner, kq, NULL), q1);
	CU_ASSERT_EQUAL(take_id(db, owner, kq, NULL), q2);
	CU_ASSERT_EQUAL(take_id(db, owner, kq, NULL), 0);
	CU_ASSERT_STRING_EQUAL(state_of(db, s1, &rows), "queued");
	svc_rows_free(rows);
	/* a list of both takes the oldest of either */
	{
		char both[2 * SVC_JOB_KIND_MAX + 1];
		snprintf(both, sizeof both, "%s,%s", kq, ks);
		CU_ASSERT_EQUAL(take_id(db, dead, both, NULL), s1); /* leased by a worker that is gone */
	}
	/* the slow lane: the next of its own */
	CU_ASSERT_EQUAL(take_id(db, owner, ks, NULL), s2);
	CU_ASSERT_EQUAL(take_id(db, owner, ks, NULL), 0);

	/* the dead worker's job is ready again once recovered, for its own lane only */
	CU_ASSERT_EQUAL(svc_jobs_recover(db, &released), 0);
	CU_ASSERT(released >= 1);
	CU_ASSERT_EQUAL(take_id(db, owner, kq, NULL), 0);
	CU_ASSERT_EQUAL(take_id(db, owner, ks, &attempts), s1);
	CU_ASSERT_EQUAL(attempts, 2);
	CU_ASSERT_EQUAL(svc_jobs_finish(db, q1), 0);
	CU_ASSERT_EQUAL(svc_jobs_finish(db, q2), 0);
	CU_ASSERT_EQUAL(svc_jobs_finish(db, s1), 0);
	CU_ASSERT_EQUAL(svc_jobs_finish(db, s2), 0);

	/* svc_jobs_run_once() with one lane's table: that lane's job runs, the other lane's (older) waits */
	CU_ASSERT_EQUAL_FATAL(svc_jobs_enqueue(db, ks, "{}", 3, &s3), 0);
	CU_ASSERT_EQUAL_FATAL(svc_jobs_enqueue(db, kq, "{}", 3, &q3), 0);
	ran = 0;
	CU_ASSERT_EQUAL(svc_jobs_run_once(db, quick, 1, NULL, 60), 1);
	CU_ASSERT_EQUAL(ran, 1);
	CU_ASSERT_STRING_EQUAL(state_of(db, q3, &rows), "done");
	svc_rows_free(rows);
	CU_ASSERT_STRING_EQUAL(state_of(db, s3, &rows), "queued");
	svc_rows_free(rows);
	CU_ASSERT_EQUAL(svc_jobs_run_once(db, quick, 1, NULL, 60), 0);
	CU_ASSERT_EQUAL(ran, 1);
	CU_ASSERT_EQUAL(svc_jobs_run_once(db, slow, 1, NULL, 60), 1);
	CU_ASSERT_EQUAL(ran, 2);
	CU_ASSERT_STRING_EQUAL(state_of(db, s3, &rows), "done");
	svc_rows_free(rows);
	CU_ASSERT_EQUAL(svc_jobs_run_once(db, slow, 1, NULL, 60), 0);
	svc_db_close(db);
	svc_config_dispose(&cfg);
}

SVC_TEST_SUITE(jobs)
{
	CU_pSuite s = CU_add_suite("jobs", NULL, NULL);

	CU_add_test(s, "test_jobs_recover_dead_owner", test_jobs_recover_dead_owner);
	CU_add_test(s, "test_jobs_dispatch_entry_ctx", test_jobs_dispatch_entry_ctx);
	CU_add_test(s, "test_jobs_recover_zombie_owner", test_jobs_recover_zombie_owner);
	CU_add_test(s, "test_jobs_kinds_list", test_jobs_kinds_list);
	CU_add_test(s, "test_jobs_lanes_pick_own_kinds_in_order", test_jobs_lanes_pick_own_kinds_in_order);
	CU_add_test(s, "test_jobs_take_lock_finish_and_retry", test_jobs_take_lock_finish_and_retry); /* last: mysql_library_end() */
}
