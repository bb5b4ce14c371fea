/* preview_build.c: previews of package.json projects: the build svc-worker runs after a change, as publishing builds, and where svc-preview serves a project from. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <json-c/json.h>

#include "core/err.h"
#include "core/fsx.h"
#include "core/json.h"
#include "core/log.h"
#include "core/util.h"
#include "project/deps.h"
#include "project/paths.h"
#include "project/preview_build.h"
#include "project/publish.h"
#include "project/quota.h"

/* Does the project's working tree have package.json (a regular file)? */
static int has_package_json(const struct svc_config *cfg, const char *project_id)
{
	char pdir[2048], pkg[2100];
	struct stat st;

	if (svc_project_dir(cfg, project_id, pdir, sizeof pdir) < 0)
		return 0;
	snprintf(pkg, sizeof pkg, "%s/package.json", pdir);
	return lstat(pkg, &st) == 0 && S_ISREG(st.st_mode);
}

/*
 * The preview builds of the job payload `payload` other than job `self` (0: none): sets *out_queued and
 * *out_running to whether one waits and whether one runs under a live lease. 0 or a DB error.
 */
static int preview_jobs(struct svc_db *db, const char *payload, int64_t self, int *out_queued, int *out_running)
{
	struct svc_rows *rows = NULL;
	struct svc_dbv p[3] = { svc_dbv_str(SVC_JOB_PREVIEW_BUILD), svc_dbv_str(payload), svc_dbv_i64(self) };
	size_t i;
	int err;

	*out_queued = *out_running = 0;
	if ((err = svc_db_run(db, STMT_PREVIEW_JOB_ACTIVE, p, 3, &rows, NULL)) < 0)
		return err;
	for (i = 0; i < rows->nrows; i++) {
		const char *state = svc_rows_get(rows, i, PJCOL_STATE);
		if (state && strcmp(state, "running") == 0)
			*out_running = 1;
		else
			*out_queued = 1;
	}
	svc_rows_free(rows);
	return 0;
}

/* Queues a build of project `project_id` unless one waits (or, with `unless_running`, runs). */
static int build_request(struct svc_db *db, const struct svc_config *cfg, const char *project_id, int unless_running)
{
	struct json_object *job;
	const char *payload;
	int err, queued, running;

	if (!has_package_json(cfg, project_id))
		return 0;
	/* {"projectId":"<id>"}, byte for byte as the waiting-job lookup compares it */
	if (!(job = json_object_new_object()))
		return SVC_E_INTERNAL;
	svc_json_add_str(job, "projectId", project_id);
	payload = json_object_to_json_string_ext(job, JSON_C_TO_STRING_PLAIN);
	if ((err = preview_jobs(db, payload, 0, &queued, &running)) == 0 && !queued && !(unless_running && running))
		err = svc_jobs_enqueue(db, SVC_JOB_PREVIEW_BUILD, payload, 3, NULL);
	json_object_put(job);
	return err;
}

int svc_preview_build_request(struct svc_db *db, const struct svc_config *cfg, const char *project_id)
{
	return build_request(db, cfg, project_id, 0);
}

int svc_preview_build_first(struct svc_db *db, const struct svc_config *cfg, const char *project_id)
{
	return build_request(db, cfg, project_id, 1);
}

int svc_preview_build_dir(const struct svc_config *cfg, const char *project_id, char *out, size_t max, char *why,
			  size_t why_max)
{
	char site[2048], failed[2048], *text = NULL;
	struct stat st;
	size_t len;
	int err;

	snprintf(why, why_max, "%s", "");
	if (!has_package_json(cfg, project_id))
		return 0;
	if ((err = svc_data_path(cfg, "previews", project_id, "site", site, sizeof site)) < 0 ||
	    (err = svc_data_path(cfg, "previews", project_id, NULL, failed, sizeof failed)) < 0)
		return err;
	if (lstat(site, &st) == 0 && S_ISDIR(st.st_mode)) {
		snprintf(out, max, "%s", site);
		return 1;
	}
	if (svc_fsx_read(failed, "failed", 4096, &text, &len) == 0) {
		svc_publish_clean_text(text, strcspn(text, "\n"), text);
		snprintf(why, why_max, "%s", text);
		free(text);
	}
	return SVC_E_NOT_FOUND;
}

int svc_preview_build_tree(struct svc_db *db, const struct svc_config *cfg, struct svc_preview_tree *t, char *why,
			   size_t why_max)
{
	struct svc_publish__log *log = calloc(1, sizeof *log);
	struct svc_build_opts opts;
	char rnd[17], prefix[32];
	int err;

	snprintf(why, why_max, "%s", "");
	t->top[0] = t->project[0] = t->dist[0] = '\0';
	if (!log || !(t->log = malloc(SVC_PUBLISH_LOG_TAIL + 1))) {
		err = SVC_E_INTERNAL;
		goto failed;
	}
	t->log[0] = '\0';
	/* built under builds/ (0711, reachable for the sandbox's user), not in previews/ (0700) */
	if ((err = svc_random_hex(rnd, 8)) < 0 ||
	    snprintf(prefix, sizeof prefix, "%s-", t->name) >= (int)sizeof prefix ||
	    (err = svc_data_path(cfg, "builds", prefix, NULL, t->top, sizeof t->top)) < 0 ||
	    strlen(t->top) + strlen(t->project_id) + 1 + strlen(rnd) >= sizeof t->top) {
		err = SVC_E_INTERNAL;
		goto failed;
	}
	snprintf(t->top + strlen(t->top), sizeof t->top - strlen(t->top), "%s-%s", t->project_id, rnd);
	svc_build_opts_load(cfg, svc_publish__scripts_allowed(db, t->workspace_id), &opts);
	snprintf(opts.run_name, sizeof opts.run_name, "%s-%s", t->name, rnd);
	opts.workspace_id = t->workspace_id;
	if (t->wall_secs)
		opts.wall_secs = t->wall_secs;
	opts.cancel = t->cancel;
	opts.cancel_arg = t->cancel_arg;
	/* the build's tree: a tmpfs of SVC_BUILD_DISK_MB (root), the project's copy in it */
	if ((err = svc_build_dir_make(&opts, t->top, t->project, sizeof t->project, why, why_max)) < 0) {
		t->top[0] = t->project[0] = '\0';
		goto done;
	}
	if (snprintf(t->dist, sizeof t->dist, "%s/dist", t->project) >= (int)sizeof t->dist) {
		err = SVC_E_INTERNAL;
		goto failed;
	}
	err = svc_publish__copy_sources(cfg, t->project_id, t->project);
	if (err == SVC_E_TOO_LARGE) { /* the project's own files fill the build's disk: the project's failure */
		snprintf(why, why_max, "the build used more than %u MB of disk (the project's files)", opts.disk_mb);
		err = SVC_E_VALIDATION;
	} else if (err < 0) {
		snprintf(why, why_max, "cannot copy the project");
		goto done;
	} else {
		err = svc_build_run(&opts, t->project, svc_publish__log_add, log, why, why_max);
		if (err == SVC_E_TOO_LARGE)
			err = SVC_E_VALIDATION;
	}
	svc_publish__log_excerpt(log, t->log);
	goto done;
failed:
	snprintf(why, why_max, "the build directory could not be prepared");
done:
	if (err < 0)
		t->dist[0] = '\0';
	free(log);
	return err;
}

void svc_preview_tree_remove(struct svc_preview_tree *t)
{
	if (!t)
		return;
	if (t->top[0])
		svc_build_dir_remove(t->top);
	t->top[0] = t->project[0] = t->dist[0] = '\0';
	free(t->log);
	t->log = NULL;
}

int svc_preview_build_job(void *ctx, const struct svc_job *job, char *errmsg, size_t errmax)
{
	const struct svc_job_ctx *c = ctx;
	struct json_object *o = NULL;
	struct svc_rows *rows = NULL;
	struct svc_preview_tree t;
	char dir[2048], next[2100], site[2100], rnd[17], why[512];
	struct svc_dbv p;
	const char *id;
	int err, queued, running;

	memset(&t, 0, sizeof t);
	if (svc_json_parse_object(job->payload, strlen(job->payload), &o) < 0 ||
	    !(id = svc_json_str(o, "projectId")) || !svc_uuid_valid(id)) {
		snprintf(errmsg, errmax, "payload without a projectId");
		err = SVC_E_VALIDATION;
		goto done;
	}
	/* one build of a project at a time (another worker's, in a cluster): this one waits its turn, then builds the
	 * tree as it is then, which holds every change made meanwhile */
	if ((err = preview_jobs(c->db, job->payload, job->id, &queued, &running)) < 0)
		goto done;
	if (running) {
		snprintf(errmsg, errmax, "another build of project %s runs", id);
		err = SVC_E_RATE_LIMITED;
		goto done;
	}
	p = svc_dbv_str(id);
	if ((err = svc_db_run(c->db, STMT_DEPLOY_PROJECT_WORKSPACE, &p, 1, &rows, NULL)) < 0)
		goto done;
	if (rows->nrows != 1 || !has_package_json(c->cfg, id))
		goto done; /* deleted since, or no longer built: nothing to do */
	if ((err = svc_data_path(c->cfg, "previews", id, NULL, dir, sizeof dir)) < 0 ||
	    (err = svc_project_mkdirs(dir)) < 0 || (err = svc_random_hex(rnd, 8)) < 0)
		goto done;
	if (snprintf(next, sizeof next, "%s/.next-%s", dir, rnd) >= (int)sizeof next ||
	    snprintf(site, sizeof site, "%s/site", dir) >= (int)sizeof site) {
		err = SVC_E_INTERNAL;
		goto done;
	}
	t.project_id = id;
	t.workspace_id = svc_rows_get(rows, 0, DPWCOL_WORKSPACE);
	t.name = "preview";
	err = svc_preview_build_tree(c->db, c->cfg, &t, why, sizeof why);
	if (t.project[0])
		svc_deps_build_done(c->db, c->cfg, id, t.project); /* a first install's lockfile, committed (none: nothing) */
	if (err == SVC_E_VALIDATION || err == SVC_E_UNAVAILABLE) {
		/* the project's own failure (or a host that refuses to build): the preview says why (the first line)
		 * until a build works; not retried */
		struct svc_buf text;
		svc_buf_init(&text, SVC_PUBLISH_LOG_TAIL + 1024);
		if (svc_buf_addf(&text, "%s\n%s", why, t.log ? t.log : "") == 0)
			svc_fsx_write(dir, "failed", svc_buf_str(&text), text.len);
		svc_buf_dispose(&text);
		svc_log_info("preview: build of %s failed: %s", id, why);
		err = 0;
		goto done;
	}
	if (err < 0) {
		snprintf(errmsg, errmax, "%s", why);
		goto done;
	}
	/* a built preview counts as a site does (SVC_QUOTA_SITE_BYTES) and in the workspace's total
	 * (SVC_QUOTA_WORKSPACE_BYTES): past either, the preview says why as a failed build does; not retried */
	if ((err = svc_quota_bytes_check(c->db, c->cfg, t.workspace_id, id, t.dist, SVC_QUOTA_PREVIEW_BYTES, 0, 0, why,
					 sizeof why)) == SVC_E_TOO_LARGE) {
		svc_fsx_write(dir, "failed", why, strlen(why));
		svc_log_info("preview: build of %s over a quota: %s", id, why);
		err = 0;
		goto done;
	}
	if (err < 0)
		goto done;
	if ((err = svc_fsx_copy_tree(t.dist, next)) < 0 || (err = svc_publish_swap(next, site)) < 0) {
		snprintf(errmsg, errmax, "cannot switch the preview in");
		svc_fsx_remove_tree(next);
		goto done;
	}
	svc_fsx_delete(dir, "failed");
	svc_log_info("preview: project %s built", id);
done:
	svc_preview_tree_remove(&t);
	svc_rows_free(rows);
	json_object_put(o);
	return err;
}
