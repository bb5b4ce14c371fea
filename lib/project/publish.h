/* publish.h: a project's published site on disk: its marker file and the one-rename switch to a new site. */
#ifndef SVC_PUBLISH_H
#define SVC_PUBLISH_H

#include <stddef.h>

/* The site's marker (docs/api.md "Published sites"): served at /.well-known/svc-site. */
#define SVC_PUBLISH_MARKER ".well-known/svc-site"

/*
 * Writes the marker of a published site into the site directory `site`
 * (absolute, trusted: a directory publish made itself): the file
 * SVC_PUBLISH_MARKER holding exactly `project_id` (36 bytes, no newline).
 * Whatever the project had at that path (a file, a directory) or a file
 * ".well-known" is removed first, so the marker never comes from the
 * project's own files. Returns 0 or SVC_E_INTERNAL (logged).
 */
int svc_publish_mark(const char *site, const char *project_id);

/*
 * Makes `next` (a complete site directory, or a symlink to one) the live
 * `live` with one renameat2(RENAME_EXCHANGE) (rename(2) when there is no
 * live one yet), so a reader sees the whole old site or the whole new one,
 * never a mix of files being written. Both paths are absolute, trusted, and
 * in one filesystem (put `next` beside `live`). After the exchange `next`
 * holds the previous one, which is removed (a symlink is unlinked, never
 * followed). Returns 0, or SVC_E_INTERNAL (logged; `next` is removed,
 * `live` is unchanged).
 */
int svc_publish_swap(const char *next, const char *live);

#include <json-c/json.h>

#include "core/config.h"
#include "db/db.h"
#include "db/jobs.h"
#include "project/build.h"

#define SVC_PUBLISH_LOG_TAIL 16384 /* bytes of a build's log kept as its excerpt (the end) */

/* What svc_publish_run() tells its caller while it works. Every member may be NULL. */
struct svc_publish_events {
	/* the deployment exists (status building); `deployment` is its JSON, borrowed for the call */
	void (*started)(void *arg, struct json_object *deployment);
	svc_build_log_fn log; /* the build's output as it comes (lines of svc's own too), and ticks */
	void *arg;
};

/* Who publishes what (strings borrowed). */
struct svc_publish_target {
	const char *project_id;
	const char *workspace_id;
	const char *slug;
	const char *user_id; /* who asked; NULL for none */
};

/*
 * Fills *out from row 0 of `rows` (a project as svc_project_load() returns
 * it) and the caller `user_id`; the strings stay borrowed from both.
 */
void svc_publish_target_of(const struct svc_rows *rows, const char *user_id, struct svc_publish_target *out);

/*
 * Publishes a project (docs/api.md "Publishing"): records a deployment
 * (building), copies the working tree (without .git) to a build directory
 * SVC_DATA_DIR/builds/<deploymentId>, builds it in the sandbox when it has
 * package.json (svc_build_run(), the site is its dist/) or takes the files
 * as they are, keeps the site with its marker in
 * SVC_DATA_DIR/deployments/<projectId>/<deploymentId>/ (never changed
 * after), points the live site SVC_DATA_DIR/published/<slug> at it with one
 * rename of a symlink (svc_publish_swap()) and rewrites Apache's map
 * (svc_publish_map_write()); the deployment is then live, the one live
 * before superseded, and the project's publishedAt set. Sites of all but
 * the newest SVC_DEPLOYMENTS_KEPT (default 5) deployments are no longer
 * restorable (their records stay) and leave the disk once
 * SVC_DEPLOYMENTS_GRACE_SECS passed since they were last live. A failed build changes nothing of the
 * live site. The deployment's id goes into out_id (37 bytes) as soon as it
 * exists. Returns 0; SVC_E_CONFLICT when a deployment of the project is
 * building (one older than the wall limit and two minutes counts as
 * interrupted and is failed); SVC_E_VALIDATION when the build failed, the
 * reason in `why` (`why_max` bytes), the deployment failed with it;
 * SVC_E_INTERNAL, DB errors (the deployment failed too when it exists).
 */
int svc_publish_run(struct svc_db *db, const struct svc_config *cfg, const struct svc_publish_target *t,
		    const struct svc_publish_events *ev, char *out_id, char *why, size_t why_max);

/*
 * Makes deployment `deployment_id` of the project live again without a
 * build: the live site is pointed at its kept site as a publish does; it
 * becomes live, the one live before superseded. Restoring
 * the live deployment changes nothing. Returns 0; SVC_E_NOT_FOUND (no such
 * deployment of this project); SVC_E_CONFLICT with the reason in `why`
 * (failed or building: no site; its site no longer kept); SVC_E_INTERNAL, DB
 * errors.
 */
int svc_publish_restore(struct svc_db *db, const struct svc_config *cfg, const struct svc_publish_target *t,
			const char *deployment_id, char *why, size_t why_max);

/*
 * Builds the Deployment JSON (docs/api.md "Deployments") from row `r` of
 * STMT_DEPLOY_LIST or STMT_DEPLOY_GET: {id, projectId, status, commitSha,
 * startedAt, finishedAt, error, logExcerpt, restorable, createdBy: {id,
 * name} or null}. The object is the caller's.
 */
struct json_object *svc_deployment_json(const struct svc_rows *rows, size_t r);

/*
 * Loads deployment `deployment_id` of project `project_id` as its JSON into
 * *out (the caller's). Errors: SVC_E_NOT_FOUND, DB errors.
 */
int svc_deployment_get(struct svc_db *db, const char *project_id, const char *deployment_id,
		       struct json_object **out);

/*
 * Writes the `len` bytes of build output at `in` into `out` (at least len + 1
 * bytes) as text any JSON or database takes: invalid UTF-8 (also a sequence
 * cut at the end) and control characters other than newline and tab become
 * '?'. Returns the length written (without the NUL).
 */
size_t svc_publish_clean_text(const char *in, size_t len, char *out);

/* Removes every kept site, the publishing lock and the preview builds of a project (SVC_DATA_DIR/deployments/<projectId>, previews/<projectId>), for a hard delete. */
void svc_publish_remove_all(const struct svc_config *cfg, const char *project_id);

/* How many deployments keep their site (SVC_DEPLOYMENTS_KEPT, 1 to 100, default 5). */
unsigned svc_publish_kept(const struct svc_config *cfg);

/*
 * Seconds a site directory stays on disk after it stopped being live and
 * was pruned (SVC_DEPLOYMENTS_GRACE_SECS, 0 to 86400, default 60), so that
 * requests that found a file in it have opened it before it goes.
 */
unsigned svc_publish_grace_secs(const struct svc_config *cfg);

/* Apache's map of live sites, in SVC_SITES_DIR (docs/operations.md "Behind Apache 2.4"). */
#define SVC_PUBLISH_MAP "apache-sites.map"

/*
 * Rewrites SVC_SITES_DIR/SVC_PUBLISH_MAP (a mod_rewrite txt map) from the
 * live pointers SVC_DATA_DIR/published/<slug> -> ../deployments/<projectId>/
 * <deploymentId>: one line "<slug> <projectId>/<deploymentId>" each, sorted;
 * written to a temporary file and renamed over the old one, only when it
 * changed, with an mtime later than the old one's (mod_rewrite rereads the
 * map when the mtime changes). Writers take an flock of
 * SVC_SITES_DIR/.apache-sites.map.lock, so the last map written holds every
 * switch made before it. Returns 0, SVC_E_TOO_LARGE (over 64 MiB) or
 * SVC_E_INTERNAL (logged).
 */
int svc_publish_map_write(const struct svc_config *cfg);

/*
 * Takes the site of `slug` offline (a project deleted): removes its live
 * pointer SVC_DATA_DIR/published/<slug> (an old copied site too) and
 * rewrites Apache's map (svc_publish_map_write()). The kept sites stay.
 * Returns 0 or SVC_E_INTERNAL (logged).
 */
int svc_publish_take_down(const struct svc_config *cfg, const char *slug);

/*
 * What publish.c shares with preview_build.c (svc_<module>__ names: not for other modules).
 * svc_publish__log keeps the end of a build's log (SVC_PUBLISH_LOG_TAIL bytes) and passes each piece
 * on to ev->log (ev may be NULL); svc_publish__log_add is a svc_build_log_fn taking one as `arg`;
 * svc_publish__log_excerpt writes the kept end (SVC_PUBLISH_LOG_TAIL + 1 bytes at out), from the first
 * whole line when the front was dropped, cleaned by svc_publish_clean_text().
 * svc_publish__scripts_allowed: 1 when workspace `workspace_id` allows install scripts in builds
 * (workspaces.build_scripts), else 0. svc_publish__copy_sources: copies project `project_id`'s working
 * tree without .git to `build` under the project's lock (svc_project_lock); 0 or SVC_E_INTERNAL.
 */
struct svc_publish__log {
	const struct svc_publish_events *ev;
	char tail[SVC_PUBLISH_LOG_TAIL];
	size_t len;
	int cut; /* something was dropped from the front */
};
void svc_publish__log_add(void *arg, const char *text, size_t len);
void svc_publish__log_excerpt(const struct svc_publish__log *l, char *out);
int svc_publish__scripts_allowed(struct svc_db *db, const char *workspace_id);
int svc_publish__copy_sources(const struct svc_config *cfg, const char *project_id, const char *build);

#endif
