/* jobs.c: the jobs table: enqueue, take with SKIP LOCKED, finish, fail with retry, dispatch by kind. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/err.h"
#include "db/jobs.h"
#include "core/log.h"
#include "core/util.h"

#define LAST_ERROR_MAX 1000
#define JOB_DEFER_SECS 10 /* a job that answered SVC_E_RATE_LIMITED runs again after this, its attempt not counted */

/*
 * The start time of process `pid` in clock ticks after boot (proc(5)
 * /proc/PID/stat field 22), or 0 when there is no such process or it is a
 * zombie (state Z or X, field 3: it has ended, and holds no job however long
 * its parent leaves it unreaped; a lane whose supervisor was killed is
 * reaped by PID 1, which in a container may never do it). With the pid it
 * names one process: a pid reused later has another start time.
 */
static uint64_t proc_start(uint64_t pid)
{
	char path[64], buf[1024], num[32], *p;
	uint64_t start = 0;
	size_t n;
	FILE *f;
	int field;

	snprintf(path, sizeof path, "/proc/%llu/stat", (unsigned long long)pid);
	if (!(f = fopen(path, "r")))
		return 0;
	n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = '\0';
	/* the command name (field 2) may hold spaces and parentheses: count from its last ')' */
	if (!(p = strrchr(buf, ')')) || p[1] != ' ' || p[2] == 'Z' || p[2] == 'X')
		return 0;
	for (field = 2; field < 22 && p; field++)
		p = strchr(p + 1, ' ');
	if (!p || (n = strcspn(p + 1, " ")) == 0 || n >= sizeof num)
		return 0;
	memcpy(num, p + 1, n);
	num[n] = '\0';
	return svc_parse_u64(num, UINT64_MAX, &start) == 0 ? start : 0;
}

/* Splits an owner "host:pid:start" into its numbers when its host is `host`. Returns 0, or -1. */
static int owner_parse(const char *owner, const char *host, uint64_t *pid, uint64_t *start)
{
	size_t hl = strlen(host), n;
	const char *p = owner + hl + 1, *colon;
	char num[32];

	/* LIKE's '_' matches any byte: the host must be exactly ours */
	if (strncmp(owner, host, hl) != 0 || owner[hl] != ':' || !(colon = strchr(p, ':')))
		return -1;
	n = (size_t)(colon - p);
	if (n == 0 || n >= sizeof num)
		return -1;
	memcpy(num, p, n);
	num[n] = '\0';
	return svc_parse_u64(num, UINT64_MAX, pid) == 0 && svc_parse_u64(colon + 1, UINT64_MAX, start) == 0 ? 0 : -1;
}

/* The host part of an owner, "host", in out (at most 128 bytes); 0 or SVC_E_INTERNAL. */
static int host_name(char *out, size_t max)
{
	if (gethostname(out, max) != 0)
		return SVC_E_INTERNAL;
	out[max - 1] = '\0';
	return 0;
}

int svc_jobs_owner(char *out, size_t max)
{
	char host[128];
	int n;

	if (host_name(host, sizeof host) < 0)
		return SVC_E_INTERNAL;
	n = snprintf(out, max, "%s:%ld:%llu", host, (long)getpid(), (unsigned long long)proc_start((uint64_t)getpid()));
	return n < 0 || (size_t)n >= max ? SVC_E_INTERNAL : 0;
}

int svc_jobs_recover(struct svc_db *db, unsigned *out_released)
{
	struct svc_rows *rows = NULL;
	struct svc_dbv p[2];
	char host[128], like[160];
	size_t i;
	int error;

	if (out_released)
		*out_released = 0;
	if (host_name(host, sizeof host) < 0)
		return SVC_E_INTERNAL;
	snprintf(like, sizeof like, "%s:%%", host);
	p[0] = svc_dbv_str(like);
	if ((error = svc_db_run(db, STMT_JOB_RUNNING_ON, p, 1, &rows, NULL)) < 0)
		return error;
	for (i = 0; rows && i < rows->nrows; i++) {
		const char *by = svc_rows_get(rows, i, JRCOL_LOCKED_BY), *id = svc_rows_get(rows, i, JRCOL_ID);
		uint64_t pid, start, jid;

		if (!by || !id || owner_parse(by, host, &pid, &start) < 0)
			continue;
		if (start != 0 && proc_start(pid) == start)
			continue; /* alive */
		if (svc_parse_u64(id, (uint64_t)INT64_MAX, &jid) < 0)
			continue;
		p[0] = svc_dbv_i64((int64_t)jid);
		p[1] = svc_dbv_str(by);
		if ((error = svc_db_run(db, STMT_JOB_RELEASE, p, 2, NULL, NULL)) < 0)
			break;
		svc_log_warn("svc-worker: job %lld of a worker that is gone (%s) is ready again", (long long)jid, by);
		if (out_released)
			(*out_released)++;
	}
	svc_rows_free(rows);
	return error < 0 ? error : 0;
}

int svc_jobs_enqueue(struct svc_db *db, const char *kind, const char *payload, unsigned max_attempts,
		     int64_t *out_id)
{
	struct svc_dbv p[3];
	size_t klen = kind ? strlen(kind) : 0;
	int error;

	if (klen == 0 || klen >= SVC_JOB_KIND_MAX || max_attempts < 1 || max_attempts > 100 || !payload)
		return SVC_E_VALIDATION;
	p[0] = svc_dbv_str(kind);
	p[1] = svc_dbv_str(payload);
	p[2] = svc_dbv_i64(max_attempts);
	if ((error = svc_db_run(db, STMT_JOB_INSERT, p, 3, NULL, NULL)) < 0)
		return error;
	if (out_id) {
		struct svc_rows *rows = NULL;
		uint64_t id;

		if ((error = svc_db_run(db, STMT_JOB_LAST_ID, NULL, 0, &rows, NULL)) < 0)
			return error;
		error = rows && rows->nrows == 1 && svc_parse_u64(svc_rows_get(rows, 0, JLCOL_ID), (uint64_t)INT64_MAX, &id) == 0
				? 0 : SVC_E_INTERNAL;
		svc_rows_free(rows);
		if (error < 0)
			return error;
		*out_id = (int64_t)id;
	}
	return 0;
}

int svc_jobs_take(struct svc_db *db, unsigned lease_secs, struct svc_job *out)
{
	char owner[160];
	int error;

	memset(out, 0, sizeof *out);
	if ((error = svc_jobs_owner(owner, sizeof owner)) < 0)
		return error;
	return svc_jobs_take_as(db, owner, NULL, lease_secs, out);
}

int svc_jobs_kinds(const struct svc_job_handler *table, size_t n, char *out, size_t max)
{
	size_t i, len = 0, k;

	if (max == 0)
		return SVC_E_TOO_LARGE;
	out[0] = '\0';
	for (i = 0; i < n; i++) {
		k = strlen(table[i].kind);
		if (strchr(table[i].kind, ','))
			return SVC_E_VALIDATION;
		if (len + (len > 0) + k + 1 > max)
			return SVC_E_TOO_LARGE;
		if (len > 0)
			out[len++] = ',';
		memcpy(out + len, table[i].kind, k + 1);
		len += k;
	}
	return 0;
}

struct take {
	const char *owner;
	const char *kinds; /* NULL: any kind */
	unsigned lease_secs;
	struct svc_job *out;
};

/* The claim, one transaction of svc_db_tx(): 1 with the job leased, 0 for none. */
static int take_tx(struct svc_db *db, void *arg)
{
	struct take *t = arg;
	struct svc_job *out = t->out;
	struct svc_rows *rows = NULL;
	struct svc_dbv p[3];
	uint64_t id, attempts, max, won = 0;
	const char *kind, *payload;
	int error;

	free(out->payload);
	memset(out, 0, sizeof *out);
	p[0] = svc_dbv_str(t->kinds ? t->kinds : "");
	if ((error = svc_db_run(db, t->kinds ? STMT_JOB_PICK_KINDS : STMT_JOB_PICK, p, t->kinds ? 1 : 0, &rows, NULL)) < 0)
		goto done;
	if (!rows || rows->nrows == 0) {
		error = 0;
		goto done;
	}
	kind = svc_rows_get(rows, 0, JCOL_KIND);
	payload = svc_rows_get(rows, 0, JCOL_PAYLOAD);
	if (svc_parse_u64(svc_rows_get(rows, 0, JCOL_ID), (uint64_t)INT64_MAX, &id) < 0 ||
	    svc_parse_u64(svc_rows_get(rows, 0, JCOL_ATTEMPTS), 1000000, &attempts) < 0 ||
	    svc_parse_u64(svc_rows_get(rows, 0, JCOL_MAX_ATTEMPTS), 1000000, &max) < 0 || !kind || !payload ||
	    strlen(kind) >= SVC_JOB_KIND_MAX) {
		error = SVC_E_INTERNAL;
		goto done;
	}
	p[0] = svc_dbv_i64(t->lease_secs ? t->lease_secs : 1);
	p[1] = svc_dbv_str(t->owner);
	p[2] = svc_dbv_i64((int64_t)id);
	/* the lease names the state it takes the job from, so a claim that another node's worker
	 * made first (Galera: the pick's row lock is local) leases nothing */
	if ((error = svc_db_run(db, STMT_JOB_LEASE, p, 3, NULL, &won)) < 0)
		goto done;
	if (won != 1) {
		error = 0;
		goto done;
	}
	if (!(out->payload = strdup(payload))) {
		error = SVC_E_INTERNAL;
		goto done;
	}
	out->id = (int64_t)id;
	memcpy(out->kind, kind, strlen(kind) + 1);
	out->attempts = (unsigned)attempts + 1;
	out->max_attempts = (unsigned)max;
	error = 1;
done:
	svc_rows_free(rows);
	return error;
}

int svc_jobs_take_as(struct svc_db *db, const char *owner, const char *kinds, unsigned lease_secs,
		     struct svc_job *out)
{
	struct take t = { owner, kinds, lease_secs, out };
	int error;

	memset(out, 0, sizeof *out);
	error = svc_db_tx(db, take_tx, &t);
	if (error <= 0) {
		free(out->payload);
		memset(out, 0, sizeof *out);
	}
	return error;
}

int svc_jobs_finish(struct svc_db *db, int64_t id)
{
	struct svc_dbv p = svc_dbv_i64(id);

	return svc_db_run(db, STMT_JOB_DONE, &p, 1, NULL, NULL);
}

int svc_jobs_fail(struct svc_db *db, const struct svc_job *job, const char *message, unsigned retry_secs)
{
	char text[LAST_ERROR_MAX + 1];
	struct svc_dbv p[3];
	size_t n = message ? svc_utf8_cut(message, strlen(message), LAST_ERROR_MAX) : 0;

	if (n)
		memcpy(text, message, n);
	text[n] = '\0';
	if (job->attempts < job->max_attempts) {
		p[0] = svc_dbv_i64(retry_secs);
		p[1] = svc_dbv_str(text);
		p[2] = svc_dbv_i64(job->id);
		return svc_db_run(db, STMT_JOB_RETRY, p, 3, NULL, NULL);
	}
	p[0] = svc_dbv_str(text);
	p[1] = svc_dbv_i64(job->id);
	return svc_db_run(db, STMT_JOB_FAILED, p, 2, NULL, NULL);
}

void svc_job_dispose(struct svc_job *job)
{
	free(job->payload);
	memset(job, 0, sizeof *job);
}

int svc_jobs_dispatch(const struct svc_job_handler *table, size_t n, void *ctx, const struct svc_job *job,
		      char *errmsg, size_t errmax)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (strcmp(table[i].kind, job->kind) == 0)
			return table[i].run(table[i].ctx ? table[i].ctx : ctx, job, errmsg, errmax);
	}
	snprintf(errmsg, errmax, "no handler for job kind %s", job->kind);
	return SVC_E_NOT_FOUND;
}

int svc_jobs_run_once(struct svc_db *db, const struct svc_job_handler *table, size_t n, void *ctx,
		      unsigned lease_secs)
{
	struct svc_job job;
	char msg[512], owner[160], kinds[SVC_JOB_KIND_MAX * 32];
	int error, rc;

	memset(&job, 0, sizeof job);
	if ((error = svc_jobs_kinds(table, n, kinds, sizeof kinds)) < 0 ||
	    (error = svc_jobs_owner(owner, sizeof owner)) < 0)
		return error;
	if ((error = svc_jobs_take_as(db, owner, kinds, lease_secs, &job)) <= 0)
		return error;
	msg[0] = '\0';
	rc = svc_jobs_dispatch(table, n, ctx, &job, msg, sizeof msg);
	if (rc == 0) {
		error = svc_jobs_finish(db, job.id);
	} else {
		if (!msg[0])
			snprintf(msg, sizeof msg, "%s", svc_err_message(rc));
		svc_log_warn("jobs: job %lld (%s) attempt %u failed: %s", (long long)job.id, job.kind, job.attempts, msg);
		if (rc == SVC_E_NOT_FOUND)
			job.attempts = job.max_attempts; /* an unknown kind never succeeds */
		if (rc == SVC_E_RATE_LIMITED) {
			/* not a failure of the job: it waits for room, as often as it takes */
			struct svc_dbv p[3] = { svc_dbv_i64(JOB_DEFER_SECS), svc_dbv_str(msg), svc_dbv_i64(job.id) };
			error = svc_db_run(db, STMT_JOB_DEFER, p, 3, NULL, NULL);
		} else {
			error = svc_jobs_fail(db, &job, msg, 5u * job.attempts);
		}
	}
	svc_job_dispose(&job);
	svc_db_end_request(db); /* a job is the worker's request: what it left set (svc_db_sync_wait) ends */
	return error < 0 ? error : 1;
}
