/* quota.h: per-workspace quotas (issue 17, finding 7; issue 25, item 15): projects per workspace, the size of each project's repository, published site and preview, and the bytes of all of a workspace's projects together. */
#ifndef SVC_QUOTA_H
#define SVC_QUOTA_H

#include <stdint.h>

#include "core/config.h"
#include "db/db.h"

/* What a quota counts (docs/configuration.md "Quotas"). */
enum svc_quota_kind {
	SVC_QUOTA_PROJECTS,   /* projects of a workspace, its trash included: SVC_QUOTA_PROJECTS, default 100 */
	SVC_QUOTA_REPO_BYTES, /* bytes of one project's directory (files and Git history): SVC_QUOTA_REPO_BYTES, 512 MiB */
	SVC_QUOTA_SITE_BYTES, /* bytes of one published site of a project: SVC_QUOTA_SITE_BYTES, 256 MiB */
	SVC_QUOTA_PREVIEW_BYTES, /* bytes of one project's built preview: the same setting, SVC_QUOTA_SITE_BYTES */
	SVC_QUOTA_WORKSPACE_BYTES, /* bytes of every project of a workspace together (repositories, sites and
				    * previews, the trash included): SVC_QUOTA_WORKSPACE_BYTES, 2 GiB */
	SVC_QUOTA__MAX
};

/*
 * The quota `kind` for a workspace on `plan` ("free", "pro", "business" or
 * NULL): the setting SVC_QUOTA_<KIND>_<PLAN> (SVC_QUOTA_PROJECTS_PRO, ...)
 * when it is set, else SVC_QUOTA_<KIND>, else the default above. 0 means no
 * limit. A value that is not a number is logged and the default used.
 */
uint64_t svc_quota_limit(const struct svc_config *cfg, const char *plan, enum svc_quota_kind kind);

/*
 * The quota `kind` of workspace `workspace_id` (its plan read from the
 * database, then svc_quota_limit()) into *out; 0 means no limit. Returns 0,
 * SVC_E_NOT_FOUND or DB errors.
 */
int svc_quota_workspace_limit(struct svc_db *db, const struct svc_config *cfg, const char *workspace_id,
			      enum svc_quota_kind kind, uint64_t *out);

/*
 * Checks that workspace `workspace_id` may have one more project. Must run
 * inside the transaction that inserts the project: it locks the workspace's
 * row first, so two creations cannot both take the last place. Returns 0,
 * SVC_E_QUOTA (403 quota_exceeded, with a sentence for the user in `why`,
 * why_max bytes, when it is not NULL), SVC_E_NOT_FOUND (no such workspace) or
 * DB errors.
 */
int svc_quota_projects_check(struct svc_db *db, const struct svc_config *cfg, const char *workspace_id, char *why,
			     size_t why_max);

/*
 * The bytes of the regular files under `dir` (its size as st_size adds up,
 * hidden files and .git included; symlinks are not followed) into *out.
 * Returns 0, SVC_E_NOT_FOUND (no such directory), SVC_E_TOO_LARGE (nested
 * deeper than 256) or SVC_E_INTERNAL.
 */
int svc_quota_dir_bytes(const char *dir, uint64_t *out);

/*
 * Checks that directory `dir` of project `project_id` (of workspace
 * `workspace_id`) stays within the quota `kind` (SVC_QUOTA_REPO_BYTES: the
 * project's directory; SVC_QUOTA_SITE_BYTES: a published site;
 * SVC_QUOTA_PREVIEW_BYTES: a built preview) after a change that adds
 * `add_bytes` and removes `remove_bytes` (a file replaced: its new and old
 * sizes; 0 and 0 checks `dir` as it is), and that the workspace's projects
 * together stay within SVC_QUOTA_WORKSPACE_BYTES. `dir` is walked (st_size of
 * its regular files); the other projects and areas count with the bytes
 * recorded for them in project_usage (schema/020_workspace_usage.sql), and
 * this area's row is set to the size the change leaves when it passes (to the
 * size as it is when it does not). Returns 0, or SVC_E_TOO_LARGE (413
 * payload_too_large) with a message in `why` (why_max bytes, may be NULL)
 * naming the sizes and which quota, or the errors
 * of svc_quota_dir_bytes() and DB errors.
 */
int svc_quota_bytes_check(struct svc_db *db, const struct svc_config *cfg, const char *workspace_id,
			  const char *project_id, const char *dir, enum svc_quota_kind kind, uint64_t add_bytes,
			  uint64_t remove_bytes, char *why, size_t why_max);

/*
 * The room left for a change of project `project_id`'s directory `dir`
 * (workspace `workspace_id`) that only adds bytes: the least of what
 * SVC_QUOTA_REPO_BYTES and SVC_QUOTA_WORKSPACE_BYTES leave, into *left
 * (UINT64_MAX when neither limits it; 0 when a quota is used up or passed),
 * and the directory's bytes now into *now (0 when neither limits it).
 * Records the directory's size in project_usage as svc_quota_bytes_check()
 * does. svc-wsd asks it after loading and after each save of a room, and
 * refuses an update bigger than what is left (docs/collaboration.md); an
 * agent's turn may make the directory hold *now + *left.
 * Returns 0 or the errors of svc_quota_dir_bytes() and DB errors.
 */
int svc_quota_repo_room(struct svc_db *db, const struct svc_config *cfg, const char *workspace_id,
			const char *project_id, const char *dir, uint64_t *now, uint64_t *left);

#endif
