/* preview_build.h: previews of package.json projects (docs/api.md "Preview of a package.json project"): the queued build in svc-worker's sandbox and where svc-preview serves a project from. */
#ifndef SVC_PREVIEW_BUILD_H
#define SVC_PREVIEW_BUILD_H

#include <stddef.h>

#include "core/config.h"
#include "db/db.h"
#include "db/jobs.h"

#define SVC_JOB_PREVIEW_BUILD "preview.build"

/*
 * Queues a SVC_JOB_PREVIEW_BUILD job {projectId} for svc-worker when the
 * project has package.json, unless one for it is already waiting (so a burst
 * of changes makes one build). Call after each change of the project's
 * files. Errors: DB errors (logged by the callers, never fatal to them).
 */
int svc_preview_build_request(struct svc_db *db, const struct svc_config *cfg, const char *project_id);

/*
 * As svc_preview_build_request(), for a look at a preview with no build yet
 * (svc-preview's "Building the preview" page, asked again every 2 s): queues
 * a build only when none of the project waits or runs, so the looks made
 * while the first build runs add nothing. Errors: DB errors.
 */
int svc_preview_build_first(struct svc_db *db, const struct svc_config *cfg, const char *project_id);

/*
 * The svc_job_fn of SVC_JOB_PREVIEW_BUILD (payload {"projectId"}); `ctx` is
 * a struct svc_job_ctx (lib/db/jobs.h). Builds the project's working tree as a
 * publish does (svc_build_run(), same sandbox and limits) and switches
 * SVC_DATA_DIR/previews/<projectId>/site to its dist/ with one rename. A
 * failed build leaves the previous preview and records the reason (the file
 * `failed` beside it) until a build succeeds; it is done, not retried. A
 * project deleted since, or without package.json, is done (0). One build of
 * a project runs at a time: while another job of it runs under a live lease
 * (another worker's), this one answers SVC_E_RATE_LIMITED (queued again
 * without counting the attempt; it builds the tree as it is when it runs).
 * Errors: SVC_E_VALIDATION (payload), SVC_E_INTERNAL (retried), DB errors.
 */
int svc_preview_build_job(void *ctx, const struct svc_job *job, char *errmsg, size_t errmax);

/*
 * A build of a project's working tree as its preview is built
 * (svc_preview_build_tree()): what the caller asks, then what the build made.
 * Zero it, set the first part, and give it to svc_preview_tree_remove() after,
 * whatever the build returned.
 */
struct svc_preview_tree {
	const char *project_id, *workspace_id; /* borrowed */
	const char *name;          /* the build's name on the host: "preview", "check" ([a-z]) */
	unsigned wall_secs;        /* the whole build, install included; 0: SVC_BUILD_WALL_SECS */
	int (*cancel)(void *arg);  /* NULL, or svc_build_opts.cancel: a non-zero answer stops the build */
	void *cancel_arg;
	/* what the build made */
	char top[2100];            /* the build's directory (SVC_DATA_DIR/builds/<name>-<projectId>-<random>); "" none */
	char project[2200];        /* top/project: the project's copy, built there */
	char dist[2300];           /* project/dist: the built site (when the build returned 0) */
	char *log;                 /* the end of the build's output (SVC_PUBLISH_LOG_TAIL bytes at most, from a whole
				      line, cleaned by svc_publish_clean_text()), malloc'd; NULL when the build did not run */
};

/*
 * Builds project `t->project_id`'s working tree as its preview is built,
 * in the sandbox, cgroup bounds and egress of every build
 * (svc_build_opts_load(): SVC_BUILD_*, the registry only for the install;
 * the workspace's choice about install scripts): a copy of its files
 * (svc_publish__copy_sources(), under the project's lock) in a tree of
 * SVC_BUILD_DISK_MB (svc_build_dir_make()), built by svc_build_run() within
 * t->wall_secs and stopped by t->cancel. Used by the preview build's job and
 * by the agent's preview check (lib/project/preview_check.c). Returns 0 with
 * t->dist the built site; SVC_E_VALIDATION when the project's build failed
 * (its files fill the build's disk too), SVC_E_UNAVAILABLE when this host
 * refuses to build, SVC_E_CANCELLED when t->cancel stopped it, with the
 * reason for a person in `why` (why_max bytes) and the output in t->log;
 * SVC_E_INTERNAL (why says what: "cannot copy the project"), DB errors.
 */
int svc_preview_build_tree(struct svc_db *db, const struct svc_config *cfg, struct svc_preview_tree *t, char *why,
			   size_t why_max);

/* Removes what svc_preview_build_tree() made (its directory, t->log); t may be NULL or never built. */
void svc_preview_tree_remove(struct svc_preview_tree *t);

/*
 * Where svc-preview serves project `project_id` from: returns 0 when the
 * project has no package.json (serve the working tree; `out` untouched); 1
 * with `out` (max bytes) the directory of its latest preview build; or
 * SVC_E_NOT_FOUND when it has package.json and no build yet, with the reason
 * of the last failed build in `why` (`why_max` bytes, "" while none failed).
 */
int svc_preview_build_dir(const struct svc_config *cfg, const char *project_id, char *out, size_t max, char *why,
			  size_t why_max);

#endif
