/* jobs.h: background jobs in MariaDB, taken by any number of svc-worker processes with SELECT ... FOR UPDATE SKIP LOCKED. */
#ifndef SVC_JOBS_H
#define SVC_JOBS_H

#include <stddef.h>
#include <stdint.h>

#include "core/config.h"
#include "db/db.h"

/*
 * A job is a row of table `jobs` (schema/003_agent.sql): a kind ("chat.first_prompt",
 * "thumbnail.regenerate", ...), a JSON payload, a state (queued, running, done,
 * failed) and a count of attempts. A worker takes the oldest ready job in a
 * short transaction (SELECT ... FOR UPDATE SKIP LOCKED, then a lease:
 * state running, locked_until = now + lease), commits, runs it outside any
 * transaction, and marks it done, or queued again after a delay, or failed
 * when its attempts are used up. A job whose lease ran out (its worker died)
 * is ready again. So a job runs at least once; handlers must be safe to run
 * twice.
 *
 * A worker's table of kinds is its lane: svc_jobs_run_once() takes only
 * jobs of the kinds its table names, the oldest first, and passes over the
 * others however old they are, so the quick lane's mail never waits behind
 * the slow lane's builds (tools/svc-worker.c runs one process per lane,
 * docs/operations.md "The background worker"). A job of a kind no lane
 * names stays queued (a newer svc's kind, for a worker that knows it).
 *
 * Adding a kind: write a svc_job_fn, add { "kind", fn } to the table of its
 * lane in tools/svc-worker.c (quick: what a person waits for and that takes
 * a second or so; slow: builds, renders, model turns, network transfers),
 * and enqueue with svc_jobs_enqueue() from wherever the work arises (inside
 * the caller's transaction when it belongs to other writes).
 */

#define SVC_JOB_KIND_MAX 64

/* One taken job. */
struct svc_job {
	int64_t id;
	char kind[SVC_JOB_KIND_MAX];
	char *payload;        /* the JSON text as enqueued, malloc'd */
	unsigned attempts;    /* including this one (1 on the first run) */
	unsigned max_attempts;
};

/*
 * Runs one job. `ctx` is what the worker passed to svc_jobs_run_once().
 * Returns 0 when done, SVC_E_RATE_LIMITED when it must wait for room (it
 * runs again 10 s later and the attempt is not counted), SVC_E_CANCELLED or
 * another negative svc_err when it failed (retried while attempts remain),
 * with a message for the log and the job's last_error in `errmsg` (`errmax`
 * bytes, may be left empty).
 */
typedef int (*svc_job_fn)(void *ctx, const struct svc_job *job, char *errmsg, size_t errmax);

/*
 * What the jobs of lib/ below the HTTP layer (lib/project: thumbnails,
 * previews, custom domains) run with: the worker's database connection and
 * settings, both borrowed from the worker for the job's run. Such a job's
 * `ctx` is a `struct svc_job_ctx *`; the worker names it in its table entry.
 */
struct svc_job_ctx {
	struct svc_db *db;
	const struct svc_config *cfg;
};

/* One entry of a worker's dispatch table. */
struct svc_job_handler {
	const char *kind;
	svc_job_fn run;
	void *ctx; /* what `run` gets as ctx (a struct svc_job_ctx for lib/project's jobs); NULL: the ctx given to
		    * svc_jobs_dispatch() / svc_jobs_run_once() */
};

/*
 * Queues a job of `kind` (1 to 63 bytes) with `payload` (JSON text) that
 * may run `max_attempts` times (1 to 100). Runs in the caller's transaction
 * when one is open. *out_id (may be NULL) gets the new id. Errors:
 * SVC_E_VALIDATION (kind or max_attempts out of range), DB errors.
 */
int svc_jobs_enqueue(struct svc_db *db, const char *kind, const char *payload, unsigned max_attempts,
		     int64_t *out_id);

/*
 * Takes the oldest ready job (queued and due, or running with an expired
 * lease) in its own transaction, leasing it for `lease_secs` seconds to
 * this process (svc_jobs_owner()). The claim is committed before it
 * returns; svc_db_tx() runs it again after a deadlock or a Galera
 * certification failure, and a job that another worker leased first (on
 * another node) is never taken twice: that claim is lost, 0.
 * Returns 1 with *out filled (free with svc_job_dispose()), 0 when no job
 * is ready, or a DB error. Must not be called inside a transaction.
 */
int svc_jobs_take(struct svc_db *db, unsigned lease_secs, struct svc_job *out);

/*
 * svc_jobs_take() leasing to `owner` ("host:pid:start", at most 159 bytes)
 * instead of this process, and taking only a job whose kind is in `kinds`,
 * a comma-separated list of kinds ("auth.reset_mail,sites.write", as
 * svc_jobs_kinds() writes it; FIND_IN_SET), or of any kind when `kinds` is
 * NULL. The oldest ready job of those kinds comes first.
 */
int svc_jobs_take_as(struct svc_db *db, const char *owner, const char *kinds, unsigned lease_secs,
		     struct svc_job *out);

/*
 * Writes the kinds `table` names (`n` entries) into out (`max` bytes) as the
 * comma-separated list svc_jobs_take_as() takes ("" for none). Returns 0,
 * SVC_E_TOO_LARGE when they do not fit, or SVC_E_VALIDATION for a kind that
 * holds a comma (it could not be told apart in the list).
 */
int svc_jobs_kinds(const struct svc_job_handler *table, size_t n, char *out, size_t max);

/* Marks job `id` done. Errors: DB errors. */
int svc_jobs_finish(struct svc_db *db, int64_t id);

/*
 * Records a failure of `job` with `message` (cut to 1000 bytes): queued
 * again after `retry_secs` seconds when attempts remain, failed for good
 * otherwise. Errors: DB errors.
 */
int svc_jobs_fail(struct svc_db *db, const struct svc_job *job, const char *message, unsigned retry_secs);

/* Frees what svc_jobs_take() filled in; the struct may be reused. */
void svc_job_dispose(struct svc_job *job);

/*
 * Finds job->kind in `table` (`n` entries) and runs it with the entry's ctx,
 * or with `ctx` when the entry has none. Returns the
 * handler's result, or SVC_E_NOT_FOUND (with errmsg set) for a kind no
 * entry names.
 */
int svc_jobs_dispatch(const struct svc_job_handler *table, size_t n, void *ctx, const struct svc_job *job,
		      char *errmsg, size_t errmax);

/*
 * Writes this process's name as a job owner, "host:pid:start" (gethostname,
 * getpid, the start time in clock ticks of proc(5) /proc/self/stat field
 * 22, so a reused pid is another owner), into out (`max` bytes, 160 is
 * enough). Returns 0 or SVC_E_INTERNAL.
 */
int svc_jobs_owner(char *out, size_t max);

/*
 * Hands back the running jobs leased by a worker of this host that is gone
 * (its pid is not running, is a zombie not yet reaped, or runs another
 * process): their lease ends now, so the next svc_jobs_take() anywhere
 * takes them, instead of after `lease_secs` (a worker killed by SIGKILL or
 * the OOM killer; a lane of svc-worker, whose own lane takes them back). Workers of
 * other hosts are left to their lease. Called by svc-worker when it starts
 * and every half minute. *out_released (may be NULL) gets how many.
 * Returns 0 or a DB error.
 */
int svc_jobs_recover(struct svc_db *db, unsigned *out_released);

/*
 * The worker's step for one lane: takes the oldest ready job of a kind that
 * `table` (`n` entries) names (jobs of other kinds are left to the lanes
 * that run them), dispatches it, and finishes or fails it (retry delay 5 s
 * times the attempt number). Returns 1 when a job ran (whatever its
 * outcome), 0 when none of these kinds was ready, SVC_E_TOO_LARGE or
 * SVC_E_VALIDATION for a table svc_jobs_kinds() refuses, or a DB error.
 */
int svc_jobs_run_once(struct svc_db *db, const struct svc_job_handler *table, size_t n, void *ctx,
		      unsigned lease_secs);

#endif
