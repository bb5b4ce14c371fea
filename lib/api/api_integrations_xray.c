/* api_integrations_xray.c: xray, the platform admins' view of the agent's integration calls: figures per integration, calls in flight, stuck calls, history (docs/api.md "xray"). */
#include <stdio.h>
#include <string.h>

#include "api/api_integrations.h"
#include "core/err.h"
#include "core/json.h"
#include "core/util.h"
#include "project/project.h"

/* The figures of one window: calls, errors, p50 and p95 of the durations (nearest rank). */
struct window {
	size_t calls, errors;
	uint64_t *ms;   /* ascending (the statement's order) */
	size_t n, cap;
};

static uint64_t rank(const struct window *w, double q)
{
	size_t i;

	if (w->n == 0)
		return 0;
	i = (size_t)(q * (double)w->n + 0.999999);
	if (i == 0)
		i = 1;
	return w->ms[(i > w->n ? w->n : i) - 1];
}

static struct json_object *window_json(const struct window *w)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "calls", json_object_new_int64((int64_t)w->calls));
	json_object_object_add(o, "errors", json_object_new_int64((int64_t)w->errors));
	json_object_object_add(o, "p50Ms", w->n ? json_object_new_int64((int64_t)rank(w, 0.50)) : NULL);
	json_object_object_add(o, "p95Ms", w->n ? json_object_new_int64((int64_t)rank(w, 0.95)) : NULL);
	return o;
}

static int window_add(struct window *w, uint64_t ms, int error)
{
	w->calls++;
	w->errors += error ? 1 : 0;
	if (SVC_ARRAY_GROW(w->ms, w->cap, w->n + 1) < 0)
		return SVC_E_INTERNAL;
	w->ms[w->n++] = ms;
	return 0;
}

/* Adds the figures of the integration `id` (its hour and day windows) to `items` and empties them. */
static void flush(struct json_object *items, const char *id, struct window *hour, struct window *day)
{
	struct json_object *o = json_object_new_object();

	svc_json_add_str(o, "integrationId", id);
	json_object_object_add(o, "lastHour", window_json(hour));
	json_object_object_add(o, "lastDay", window_json(day));
	json_object_array_add(items, o);
	hour->calls = hour->errors = hour->n = 0;
	day->calls = day->errors = day->n = 0;
}

/*
 * GET /xray/stats: 200 {items: [{integrationId, lastHour: {calls, errors, p50Ms, p95Ms}, lastDay: {...}}]}
 * over the finished calls of the last day (p50Ms and p95Ms null without calls); 401; 403.
 */
enum svc_err svc_api_xray_stats(struct svc_req *req, struct svc_resp *resp)
{
	struct window hour = { 0 }, day = { 0 };
	struct svc_rows *rows = NULL;
	struct json_object *body, *items;
	const char *cur = NULL;
	size_t r;
	int err;

	if ((err = svc_api_integrations__require_admin(req, resp)) < 0)
		return err;
	if ((err = svc_db_run(req->ctx->db, STMT_XRAY_DURATIONS, NULL, 0, &rows, NULL)) < 0)
		return err;
	body = json_object_new_object();
	items = json_object_new_array();
	json_object_object_add(body, "items", items);
	for (r = 0; rows && r < rows->nrows && err == 0; r++) {
		const char *id = svc_rows_get(rows, r, XDCOL_INTEGRATION), *ms = svc_rows_get(rows, r, XDCOL_MS);
		int error = strcmp(svc_rows_get(rows, r, XDCOL_ERROR), "1") == 0;
		uint64_t v = 0;
		if (cur && strcmp(cur, id) != 0)
			flush(items, cur, &hour, &day);
		cur = id;
		if (ms)
			svc_parse_u64(ms, UINT64_MAX, &v);
		err = window_add(&day, v, error);
		if (err == 0 && strcmp(svc_rows_get(rows, r, XDCOL_RECENT), "1") == 0)
			err = window_add(&hour, v, error);
	}
	if (cur)
		flush(items, cur, &hour, &day);
	svc_rows_free(rows);
	free(hour.ms);
	free(day.ms);
	if (err < 0) {
		json_object_put(body);
		return err;
	}
	return svc_resp_json(resp, 200, body);
}

/*
 * A call of xray's lists: {id, integrationId, userId, projectId, credential ("user", "platform", "none"; null
 * for calls before migration 019), method, host, path, status, error, startedAt, finishedAt, durationMs,
 * runningMs}.
 */
static struct json_object *call_json(const struct svc_rows *rows, size_t r)
{
	struct json_object *o = json_object_new_object();
	const char *st = svc_rows_get(rows, r, XCOL_STATUS), *d = svc_rows_get(rows, r, XCOL_DURATION);
	const char *run = svc_rows_get(rows, r, XCOL_RUNNING);
	uint64_t v;

	svc_json_add_str(o, "id", svc_rows_get(rows, r, XCOL_ID));
	svc_json_add_str(o, "integrationId", svc_rows_get(rows, r, XCOL_INTEGRATION));
	svc_json_add_str(o, "userId", svc_rows_get(rows, r, XCOL_USER));
	svc_json_add_str(o, "projectId", svc_rows_get(rows, r, XCOL_PROJECT));
	svc_json_add_str(o, "credential", svc_rows_get(rows, r, XCOL_CREDENTIAL));
	svc_json_add_str(o, "method", svc_rows_get(rows, r, XCOL_METHOD));
	svc_json_add_str(o, "host", svc_rows_get(rows, r, XCOL_HOST));
	svc_json_add_str(o, "path", svc_rows_get(rows, r, XCOL_PATH));
	json_object_object_add(o, "status", st && svc_parse_u64(st, 999, &v) == 0 ? json_object_new_int64((int64_t)v) : NULL);
	svc_json_add_str(o, "error", svc_rows_get(rows, r, XCOL_ERROR));
	svc_json_add_time(o, "startedAt", svc_rows_get(rows, r, XCOL_STARTED));
	svc_json_add_time(o, "finishedAt", svc_rows_get(rows, r, XCOL_FINISHED));
	json_object_object_add(o, "durationMs",
			       d && svc_parse_u64(d, UINT64_MAX, &v) == 0 ? json_object_new_int64((int64_t)v) : NULL);
	json_object_object_add(o, "runningMs", !svc_rows_get(rows, r, XCOL_FINISHED) && run &&
							       svc_parse_u64(run, UINT64_MAX, &v) == 0
						       ? json_object_new_int64((int64_t)v)
						       : NULL);
	return o;
}

/* The calls in flight that started at least `secs` ago: 200 {items, thresholdSeconds}. */
static int running(struct svc_req *req, struct svc_resp *resp, uint64_t secs)
{
	struct svc_rows *rows = NULL;
	struct json_object *body, *items;
	struct svc_dbv p = svc_dbv_i64((int64_t)secs);
	size_t r;
	int err;

	if ((err = svc_api_integrations__require_admin(req, resp)) < 0)
		return err;
	if ((err = svc_db_run(req->ctx->db, STMT_XRAY_RUNNING, &p, 1, &rows, NULL)) < 0)
		return err;
	body = json_object_new_object();
	items = json_object_new_array();
	for (r = 0; rows && r < rows->nrows; r++)
		json_object_array_add(items, call_json(rows, r));
	json_object_object_add(body, "items", items);
	json_object_object_add(body, "thresholdSeconds", json_object_new_int64((int64_t)secs));
	svc_rows_free(rows);
	return svc_resp_json(resp, 200, body);
}

/* GET /xray/active: 200 {items: [call], thresholdSeconds: 0}, oldest first; 401; 403. */
enum svc_err svc_api_xray_active(struct svc_req *req, struct svc_resp *resp)
{
	return running(req, resp, 0);
}

/* GET /xray/stuck: 200 {items: [call], thresholdSeconds}: running longer than SVC_XRAY_STUCK_SECONDS (30); 401; 403. */
enum svc_err svc_api_xray_stuck(struct svc_req *req, struct svc_resp *resp)
{
	return running(req, resp, req->ctx->cfg.xray_stuck_secs);
}

/* GET /xray/history?cursor&limit: 200 {items: [call], nextCursor}, newest first; 400 (cursor, limit); 401; 403. */
enum svc_err svc_api_xray_history(struct svc_req *req, struct svc_resp *resp)
{
	uint64_t limit;
	struct svc_rows *rows = NULL;
	struct json_object *body, *items;
	size_t r, shown;
	int err;

	if ((err = svc_api_integrations__seq_page(req, resp, STMT_XRAY_HISTORY, &rows, &limit)) < 0)
		return err;
	body = json_object_new_object();
	items = json_object_new_array();
	shown = rows ? (rows->nrows > limit ? limit : rows->nrows) : 0;
	for (r = 0; r < shown; r++)
		json_object_array_add(items, call_json(rows, r));
	json_object_object_add(body, "items", items);
	svc_json_add_str(body, "nextCursor", rows && rows->nrows > limit ? svc_rows_get(rows, shown - 1, XCOL_SEQ) : NULL);
	svc_rows_free(rows);
	return svc_resp_json(resp, 200, body);
}
