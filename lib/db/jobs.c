/* jobs.c: the jobs table: enqueue, take with SKIP LOCKED, finish, fail with retry, dispatch by kind. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "db/jobs.h"
#include "core/log.h"
#include "core/util.h"

#define LAST_ERROR_MAX 1000

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
	struct svc_rows *rows = NULL;
	struct svc_dbv p[2];
	uint64_t id, attempts, max;
	const char *kind, *payload;
	int error, in_tx = 0;

	memset(out, 0, sizeof *out);
	if ((error = svc_db_begin(db)) < 0)
		return error;
	in_tx = 1;
	if ((error = svc_db_run(db, STMT_JOB_PICK, NULL, 0, &rows, NULL)) < 0)
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
	p[0] = svc_dbv_i64(lease_secs ? lease_secs : 1);
	p[1] = svc_dbv_i64((int64_t)id);
	if ((error = svc_db_run(db, STMT_JOB_LEASE, p, 2, NULL, NULL)) < 0)
		goto done;
	if ((error = svc_db_commit(db)) < 0)
		goto done;
	in_tx = 0;
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
	if (in_tx)
		svc_db_rollback(db);
	svc_rows_free(rows);
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
			return table[i].run(ctx, job, errmsg, errmax);
	}
	snprintf(errmsg, errmax, "no handler for job kind %s", job->kind);
	return SVC_E_NOT_FOUND;
}

int svc_jobs_run_once(struct svc_db *db, const struct svc_job_handler *table, size_t n, void *ctx,
		      unsigned lease_secs)
{
	struct svc_job job;
	char msg[512];
	int error, rc;

	if ((error = svc_jobs_take(db, lease_secs, &job)) <= 0)
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
		error = svc_jobs_fail(db, &job, msg, 5u * job.attempts);
	}
	svc_job_dispose(&job);
	return error < 0 ? error : 1;
}
