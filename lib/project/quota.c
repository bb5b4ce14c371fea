/* quota.c: per-workspace quotas: projects per workspace, the size of each project's repository, site and preview, and of a workspace's projects together. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/err.h"
#include "core/fsx.h"
#include "core/log.h"
#include "core/util.h"
#include "project/quota.h"

/* Which row of the settings' quota table each kind reads (a preview is bounded by the site quota), for messages. */
static const struct {
	unsigned row;     /* cfg->quota[row]: SVC_QUOTA_<KIND>, then its plans' (lib/core/config_table.c) */
	const char *what; /* for messages */
} kinds[SVC_QUOTA__MAX] = {
	[SVC_QUOTA_PROJECTS] = { 0, "projects" },
	[SVC_QUOTA_REPO_BYTES] = { 1, "bytes of files and history" },
	[SVC_QUOTA_SITE_BYTES] = { 2, "bytes of published site" },
	[SVC_QUOTA_PREVIEW_BYTES] = { 2, "bytes of built preview" },
	[SVC_QUOTA_WORKSPACE_BYTES] = { 3, "bytes" },
};

/* The area of project_usage a byte quota's directory is counted in (schema/020_workspace_usage.sql). */
static const char *area_of(enum svc_quota_kind kind)
{
	return kind == SVC_QUOTA_SITE_BYTES ? "site" : kind == SVC_QUOTA_PREVIEW_BYTES ? "preview" : "repo";
}

uint64_t svc_quota_limit(const struct svc_config *cfg, const char *plan, enum svc_quota_kind kind)
{
	static const char *const plans[SVC_CONFIG_PLANS] = { "free", "pro", "business" };
	const int64_t *q = cfg->quota[kinds[kind].row];
	size_t i;

	for (i = 0; plan && i < SVC_CONFIG_PLANS; i++)
		if (strcmp(plan, plans[i]) == 0 && q[1 + i] >= 0)
			return (uint64_t)q[1 + i];
	return (uint64_t)q[0]; /* SVC_QUOTA_<KIND>, with its default */
}

/* The plan of workspace `id` (into plan, 16 bytes), its row locked when `lock`. */
static int workspace_plan(struct svc_db *db, const char *id, int lock, char *plan)
{
	struct svc_dbv p = svc_dbv_str(id);
	struct svc_rows *rows = NULL;
	int err;

	if ((err = svc_db_run(db, lock ? STMT_WS_PLAN_LOCK : STMT_WS_PLAN_GET, &p, 1, &rows, NULL)) < 0)
		return err;
	err = rows && rows->nrows == 1 ? 0 : SVC_E_NOT_FOUND;
	if (err == 0)
		snprintf(plan, 16, "%s", svc_rows_get(rows, 0, WPCOL_PLAN) ? svc_rows_get(rows, 0, WPCOL_PLAN) : "");
	svc_rows_free(rows);
	return err;
}

int svc_quota_workspace_limit(struct svc_db *db, const struct svc_config *cfg, const char *workspace_id,
			      enum svc_quota_kind kind, uint64_t *out)
{
	char plan[16];
	int err;

	if ((err = workspace_plan(db, workspace_id, 0, plan)) < 0)
		return err;
	*out = svc_quota_limit(cfg, plan, kind);
	return 0;
}

int svc_quota_projects_check(struct svc_db *db, const struct svc_config *cfg, const char *workspace_id, char *why,
			     size_t why_max)
{
	struct svc_dbv p = svc_dbv_str(workspace_id);
	struct svc_rows *rows = NULL;
	char plan[16];
	uint64_t limit, n = 0;
	int err;

	if ((err = workspace_plan(db, workspace_id, 1, plan)) < 0)
		return err;
	if (!(limit = svc_quota_limit(cfg, plan, SVC_QUOTA_PROJECTS)))
		return 0;
	if ((err = svc_db_run(db, STMT_QUOTA_PROJECT_COUNT, &p, 1, &rows, NULL)) < 0)
		return err;
	if (!rows || rows->nrows != 1 || svc_parse_u64(svc_rows_get(rows, 0, QCCOL_COUNT), UINT64_MAX, &n) < 0)
		err = SVC_E_INTERNAL;
	svc_rows_free(rows);
	if (err < 0 || n < limit)
		return err;
	if (why)
		snprintf(why, why_max,
			 "The workspace has %llu projects (its trash included), as many as its quota allows; "
			 "delete one for good to make room.", (unsigned long long)n);
	return SVC_E_QUOTA;
}

/* Adds the bytes of the regular files under the directory open at `fd` to *total. */
static int tree_bytes(int fd, uint64_t *total, int depth)
{
	struct svc_fsx_dir d;
	const char *name;
	struct stat st;
	int r, err;

	if (depth > 256)
		return SVC_E_TOO_LARGE;
	if ((err = svc_fsx_dir_open(fd, &d)) < 0)
		return err;
	while (err == 0 && (r = svc_fsx_dir_next(&d, &name, &st)) > 0) {
		if (S_ISREG(st.st_mode)) {
			*total += (uint64_t)st.st_size;
		} else if (S_ISDIR(st.st_mode)) {
			int sub = openat(fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (sub < 0)
				continue; /* vanished meanwhile */
			err = tree_bytes(sub, total, depth + 1);
			close(sub);
		}
	}
	if (err == 0 && r < 0)
		err = r;
	svc_fsx_dir_close(&d);
	return err;
}

int svc_quota_dir_bytes(const char *dir, uint64_t *out)
{
	uint64_t total = 0;
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), err;

	if (fd < 0)
		return errno == ENOENT ? SVC_E_NOT_FOUND : SVC_E_INTERNAL;
	err = tree_bytes(fd, &total, 0);
	close(fd);
	if (err == 0)
		*out = total;
	return err;
}

/* Records `bytes` as what area `area` of project `project_id` holds. */
static int usage_put(struct svc_db *db, const char *project_id, const char *area, uint64_t bytes)
{
	struct svc_dbv p[3] = { svc_dbv_str(project_id), svc_dbv_str(area),
				svc_dbv_i64(bytes > INT64_MAX ? INT64_MAX : (int64_t)bytes) };

	return svc_db_run(db, STMT_QUOTA_USAGE_PUT, p, 3, NULL, NULL);
}

/* The bytes recorded for workspace `workspace_id`'s projects, but area `area` of project `project_id`, into *out. */
static int usage_others(struct svc_db *db, const char *workspace_id, const char *project_id, const char *area,
			uint64_t *out)
{
	struct svc_dbv p[3] = { svc_dbv_str(workspace_id), svc_dbv_str(project_id), svc_dbv_str(area) };
	struct svc_rows *rows = NULL;
	int err;

	if ((err = svc_db_run(db, STMT_QUOTA_WORKSPACE_BYTES, p, 3, &rows, NULL)) < 0)
		return err;
	if (!rows || rows->nrows != 1 || svc_parse_u64(svc_rows_get(rows, 0, QWCOL_BYTES), UINT64_MAX, out) < 0)
		err = SVC_E_INTERNAL;
	svc_rows_free(rows);
	return err;
}

/*
 * What one area of a project holds now (`dir` walked, into *now) and what
 * the workspace's other projects and areas hold (*others, recorded), with
 * the two limits of the workspace's plan; *ws_limit is 0 when there is none
 * (then *others is not read).
 */
static int measure(struct svc_db *db, const struct svc_config *cfg, const char *workspace_id, const char *project_id,
		   const char *dir, enum svc_quota_kind kind, uint64_t *limit, uint64_t *ws_limit, uint64_t *now,
		   uint64_t *others)
{
	char plan[16];
	int err;

	*now = *others = 0;
	if ((err = workspace_plan(db, workspace_id, 0, plan)) < 0)
		return err;
	*limit = svc_quota_limit(cfg, plan, kind);
	*ws_limit = svc_quota_limit(cfg, plan, SVC_QUOTA_WORKSPACE_BYTES);
	if (!*limit && !*ws_limit)
		return 0;
	if ((err = svc_quota_dir_bytes(dir, now)) < 0 && err != SVC_E_NOT_FOUND)
		return err;
	if (*ws_limit && (err = usage_others(db, workspace_id, project_id, area_of(kind), others)) < 0)
		return err;
	return 0;
}

int svc_quota_bytes_check(struct svc_db *db, const struct svc_config *cfg, const char *workspace_id,
			  const char *project_id, const char *dir, enum svc_quota_kind kind, uint64_t add_bytes,
			  uint64_t remove_bytes, char *why, size_t why_max)
{
	char msg[320];
	uint64_t limit, ws_limit, now, others, after;
	int err;

	if ((err = measure(db, cfg, workspace_id, project_id, dir, kind, &limit, &ws_limit, &now, &others)) < 0)
		return err;
	if (!limit && !ws_limit)
		return 0;
	after = (now > remove_bytes ? now - remove_bytes : 0) + add_bytes;
	if (limit && after > limit) {
		snprintf(msg, sizeof msg, "This would make the project hold %llu %s; the workspace's quota is %llu.",
			 (unsigned long long)after, kinds[kind].what, (unsigned long long)limit);
	} else if (ws_limit && others + after > ws_limit) {
		snprintf(msg, sizeof msg,
			 "This would make the workspace's projects hold %llu bytes together (files, history, sites and "
			 "previews); the workspace's quota is %llu.",
			 (unsigned long long)(others + after), (unsigned long long)ws_limit);
	} else {
		/* passed: the area counts with the size the change leaves (a change that then fails overstates it
		 * until the next check, the safe side) */
		return ws_limit ? usage_put(db, project_id, area_of(kind), after) : 0;
	}
	if (ws_limit && (err = usage_put(db, project_id, area_of(kind), now)) < 0)
		return err;
	if (why)
		snprintf(why, why_max, "%s", msg);
	return SVC_E_TOO_LARGE;
}

int svc_quota_repo_room(struct svc_db *db, const struct svc_config *cfg, const char *workspace_id,
			const char *project_id, const char *dir, uint64_t *now, uint64_t *left)
{
	uint64_t limit, ws_limit, others;
	int err;

	*left = UINT64_MAX;
	if ((err = measure(db, cfg, workspace_id, project_id, dir, SVC_QUOTA_REPO_BYTES, &limit, &ws_limit, now,
			   &others)) < 0)
		return err;
	if (limit)
		*left = *now < limit ? limit - *now : 0;
	if (ws_limit) {
		uint64_t ws_left = others + *now < ws_limit ? ws_limit - others - *now : 0;
		if (ws_left < *left)
			*left = ws_left;
		if ((err = usage_put(db, project_id, "repo", *now)) < 0)
			return err;
	}
	return 0;
}
