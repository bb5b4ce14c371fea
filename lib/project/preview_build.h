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
 * Where svc-preview serves project `project_id` from: returns 0 when the
 * project has no package.json (serve the working tree; `out` untouched); 1
 * with `out` (max bytes) the directory of its latest preview build; or
 * SVC_E_NOT_FOUND when it has package.json and no build yet, with the reason
 * of the last failed build in `why` (`why_max` bytes, "" while none failed).
 */
int svc_preview_build_dir(const struct svc_config *cfg, const char *project_id, char *out, size_t max, char *why,
			  size_t why_max);

#endif
