/* api_gitio.c: Git in and out of svc: a version as a ZIP, a project imported from a Git URL or a ZIP, the mirror to a forge (docs/git.md). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "core/err.h"
#include "core/log.h"
#include "project/gitcmd.h"
#include "project/repo.h"

/* What export_sink() streams into. */
struct export_out {
	struct svc_resp *resp;
	const char *filename; /* Content-Disposition's */
	int started;
};

/* Starts the answer on git's first bytes (so an early failure is still a plain error) and streams them. */
static int export_sink(void *vctx, const char *data, size_t len)
{
	struct export_out *o = vctx;
	char disp[160];
	int err;

	if (!o->started) {
		snprintf(disp, sizeof disp, "attachment; filename=\"%s\"", o->filename);
		svc_resp_header(o->resp, "Content-Disposition", disp);
		if ((err = svc_resp_stream_begin(o->resp, 200, "application/zip")) < 0)
			return err;
		o->started = 1;
	}
	return svc_resp_stream_write(o->resp, data, len);
}

/*
 * GET /projects/:id/export.zip[?sha=<version>]: 200 application/zip, the tree
 * of that version (default the latest) as `git archive --format=zip` makes
 * it, streamed, named <slug>-<7 hex>.zip; 403; 404 (unknown project, no such
 * version, a malformed sha, a project without versions yet).
 */
enum svc_err svc_api_projects_export(struct svc_req *req, struct svc_resp *resp)
{
	const char *id = svc_req_param(req, "id");
	struct svc_rows *rows = NULL;
	struct svc_repo_commit *log = NULL;
	struct svc_git_run run = { 0 };
	struct export_out out = { resp, NULL, 0 };
	char dir[2048], want[64], full[41], filename[96], why[512];
	size_t n = 0;
	int err, has, status = 0;

	if ((err = svc_project_load(svc_req_caller(req), id, SVC_ACT_READ, &rows)) < 0)
		return err;
	if ((err = svc_project_dir(&req->ctx->cfg, id, dir, sizeof dir)) < 0)
		goto done;
	has = svc_req_query(req, "sha", want, sizeof want);
	if (has < 0) {
		err = svc_resp_error(resp, SVC_E_NOT_FOUND, NULL, "No version with this sha.");
		goto done;
	}
	if (has) {
		err = svc_api__version_sha(dir, want, full);
	} else if ((err = svc_repo_log(dir, 1, &log, &n)) == 0) {
		if (n == 1)
			memcpy(full, log[0].sha, 41);
		else
			err = SVC_E_NOT_FOUND;
		svc_repo_log_free(log, n);
	} else {
		err = SVC_E_NOT_FOUND; /* no commit yet (an import under way) */
	}
	if (err < 0) {
		if (err == SVC_E_NOT_FOUND)
			err = svc_resp_error(resp, err, NULL, "No version with this sha.");
		goto done;
	}
	snprintf(filename, sizeof filename, "%.64s-%.7s.zip", svc_rows_get(rows, 0, PCOL_SLUG), full);
	out.filename = filename;
	run.dir = dir;
	run.args[0] = "archive";
	run.args[1] = "--format=zip";
	run.args[2] = full;
	run.sink = export_sink;
	run.sink_ctx = &out;
	run.timeout_ms = 600000;
	err = svc_git_run(&run, &status, why, sizeof why);
	if (err == 0 && status != 0) {
		svc_log_error("export %s %s: git archive exited %d: %s", id, full, status, why);
		err = SVC_E_INTERNAL;
	}
	if (err < 0 && out.started)
		err = 0; /* the answer has begun: it just ends short, and the ZIP does not open */
done:
	svc_rows_free(rows);
	return err;
}
