/* publish.c: a project's published site on disk: its marker file and the one-rename switch to a new site. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/err.h"
#include "core/fsx.h"
#include "core/json.h"
#include "core/log.h"
#include "core/util.h"
#include "project/paths.h"
#include "project/publish.h"
#include "project/quota.h"
#include "project/repo.h"

int svc_publish_mark(const char *site, const char *project_id)
{
	char wk[2048], marker[2100];
	struct stat st;
	int n, err;

	n = snprintf(wk, sizeof wk, "%s/.well-known", site);
	if (n < 0 || (size_t)n >= sizeof wk)
		return SVC_E_INTERNAL;
	snprintf(marker, sizeof marker, "%s/%s", site, SVC_PUBLISH_MARKER);
	/* the project's own: a file named .well-known, or anything at the marker's path */
	if (lstat(wk, &st) == 0 && !S_ISDIR(st.st_mode) && svc_fsx_remove_tree(wk) < 0)
		return SVC_E_INTERNAL;
	if (svc_fsx_remove_tree(marker) < 0)
		return SVC_E_INTERNAL;
	if ((err = svc_fsx_write(site, SVC_PUBLISH_MARKER, project_id, strlen(project_id))) < 0) {
		svc_log_error("publish: cannot write the marker in %s", site);
		return SVC_E_INTERNAL;
	}
	return 0;
}

int svc_publish_swap(const char *next, const char *live)
{
	if (renameat2(AT_FDCWD, next, AT_FDCWD, live, RENAME_EXCHANGE) == 0) {
		svc_fsx_remove_tree(next); /* now holds the previous site */
		return 0;
	}
	if (errno == ENOENT && rename(next, live) == 0)
		return 0; /* the first publication */
	svc_log_error("publish: swap %s: %s", live, strerror(errno));
	svc_fsx_remove_tree(next);
	return SVC_E_INTERNAL;
}

unsigned svc_publish_kept(const struct svc_config *cfg)
{
	return cfg->deployments_kept; /* 1 to 100, default 5 (the settings table) */
}

struct json_object *svc_deployment_json(const struct svc_rows *rows, size_t r)
{
	struct json_object *o = json_object_new_object(), *by = NULL;
	const char *user = svc_rows_get(rows, r, DCOL_USER), *kept = svc_rows_get(rows, r, DCOL_KEPT);
	const char *status = svc_rows_get(rows, r, DCOL_STATUS);

	svc_json_add_str(o, "id", svc_rows_get(rows, r, DCOL_ID));
	svc_json_add_str(o, "projectId", svc_rows_get(rows, r, DCOL_PROJECT));
	svc_json_add_str(o, "status", status);
	svc_json_add_str(o, "commitSha", svc_rows_get(rows, r, DCOL_SHA));
	svc_json_add_time(o, "startedAt", svc_rows_get(rows, r, DCOL_STARTED));
	svc_json_add_time(o, "finishedAt", svc_rows_get(rows, r, DCOL_FINISHED));
	svc_json_add_str(o, "error", svc_rows_get(rows, r, DCOL_ERROR));
	svc_json_add_str(o, "logExcerpt", svc_rows_get(rows, r, DCOL_LOG));
	json_object_object_add(o, "restorable", json_object_new_boolean(kept && strcmp(kept, "1") == 0 && status &&
									 (strcmp(status, "live") == 0 ||
									  strcmp(status, "superseded") == 0)));
	if (user) {
		by = json_object_new_object();
		svc_json_add_str(by, "id", user);
		svc_json_add_str(by, "name", svc_rows_get(rows, r, DCOL_USER_NAME));
	}
	json_object_object_add(o, "createdBy", by);
	return o;
}

int svc_deployment_get(struct svc_db *db, const char *project_id, const char *deployment_id,
		       struct json_object **out)
{
	struct svc_dbv p[2] = { svc_dbv_str(deployment_id), svc_dbv_str(project_id) };
	struct svc_rows *rows = NULL;
	int err;

	if ((err = svc_db_run(db, STMT_DEPLOY_GET, p, 2, &rows, NULL)) < 0)
		return err;
	if (rows->nrows != 1)
		err = SVC_E_NOT_FOUND;
	else
		*out = svc_deployment_json(rows, 0);
	svc_rows_free(rows);
	return err;
}

/* ---- a build's log: passed on, and its end kept as the excerpt ---- */

void svc_publish__log_add(void *arg, const char *text, size_t len)
{
	struct svc_publish__log *l = arg;

	if (l->ev && l->ev->log)
		l->ev->log(l->ev->arg, text, len);
	if (!text || !len)
		return;
	if (len >= sizeof l->tail) {
		memcpy(l->tail, text + len - sizeof l->tail, sizeof l->tail);
		l->len = sizeof l->tail;
		l->cut = 1;
		return;
	}
	if (l->len + len > sizeof l->tail) {
		size_t drop = l->len + len - sizeof l->tail;
		memmove(l->tail, l->tail + drop, l->len - drop);
		l->len -= drop;
		l->cut = 1;
	}
	memcpy(l->tail + l->len, text, len);
	l->len += len;
}

static void run_log_say(struct svc_publish__log *l, const char *line)
{
	svc_publish__log_add(l, line, strlen(line));
}

size_t svc_publish_clean_text(const char *in, size_t len, char *out)
{
	size_t i = 0, n = 0;

	while (i < len) {
		uint32_t cp = 0;
		size_t k = svc_utf8_decode(in + i, len - i, &cp);

		if (k == 0 || (cp < 0x20 && cp != '\n' && cp != '\t') || cp == 0x7f) {
			out[n++] = '?';
			i += k ? k : 1;
			continue;
		}
		memcpy(out + n, in + i, k);
		n += k;
		i += k;
	}
	out[n] = '\0';
	return n;
}

void svc_publish__log_excerpt(const struct svc_publish__log *l, char *out)
{
	size_t i = 0;

	if (l->cut) {
		const char *nl = memchr(l->tail, '\n', l->len);
		if (nl)
			i = (size_t)(nl - l->tail) + 1;
	}
	svc_publish_clean_text(l->tail + i, l->len - i, out);
}

/* ---- paths ---- */

/* SVC_DATA_DIR/deployments/<projectId>[/<deploymentId>] */
static int kept_dir(const struct svc_config *cfg, const char *project_id, const char *deployment_id, char *out,
		    size_t max)
{
	return svc_data_path(cfg, "deployments", project_id, deployment_id, out, max);
}

void svc_publish_remove_all(const struct svc_config *cfg, const char *project_id)
{
	char dir[2048];

	if (kept_dir(cfg, project_id, NULL, dir, sizeof dir) == 0)
		svc_fsx_remove_tree(dir);
	if (svc_data_path(cfg, "previews", project_id, NULL, dir, sizeof dir) == 0)
		svc_fsx_remove_tree(dir);
}

/* Takes the project's publishing lock (an flock of SVC_DATA_DIR/deployments/<projectId>/.lock): one switch at a time. */
static int publish_lock(const struct svc_config *cfg, const char *project_id)
{
	char dir[2048], lock[2100];
	int fd, err;

	if ((err = kept_dir(cfg, project_id, NULL, dir, sizeof dir)) < 0 || (err = svc_project_mkdirs(dir)) < 0)
		return err;
	snprintf(lock, sizeof lock, "%s/.lock", dir);
	fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0 || flock(fd, LOCK_EX) < 0) {
		svc_log_error("publish: lock %s: %s", lock, strerror(errno));
		if (fd >= 0)
			close(fd);
		return SVC_E_INTERNAL;
	}
	return fd;
}

/* ---- the live pointer and Apache's map ---- */

/*
 * The live site of a project is the symlink SVC_DATA_DIR/published/<slug> ->
 * ../deployments/<projectId>/<deploymentId>, a kept site that is never
 * changed once complete. lighttpd follows it (and has no window: it serves
 * the file it opened with that open's size); Apache's core handler takes
 * Content-Length from the stat before its open, which re-resolves the path,
 * so Apache reads sites through SVC_PUBLISH_MAP instead (httpd-conf/
 * apache-svc.conf): mod_rewrite turns <slug> into the deployment's own
 * directory before the stat, and stat and open name the same file.
 */

/* Parses a live pointer's target "../deployments/<projectId>/<deploymentId>" into the two ids (37 bytes each). Returns 1 when it is one, else 0. */
static int pointer_parse(const char *target, char *pid, char *did)
{
	static const char pre[] = "../deployments/";
	size_t n = sizeof pre - 1;

	if (strncmp(target, pre, n) != 0 || strlen(target) != n + 73 || target[n + 36] != '/')
		return 0;
	memcpy(pid, target + n, 36);
	pid[36] = '\0';
	memcpy(did, target + n + 37, 36);
	did[36] = '\0';
	return svc_uuid_valid(pid) && svc_uuid_valid(did);
}

/* The ids of the deployment the live pointer `live` names (37 bytes each): 1, or 0 when it names none (missing, an old copied site). */
static int pointer_read(const char *live, char *pid, char *did)
{
	char target[256];
	ssize_t n = readlink(live, target, sizeof target - 1);

	if (n < 0)
		return 0;
	target[n] = '\0';
	return pointer_parse(target, pid, did);
}

/* Whether `name` may be a slug: [a-z0-9-], 1 to 80 characters, no leading hyphen or dot. */
static int slug_ok(const char *name)
{
	size_t i;

	for (i = 0; name[i]; i++)
		if (!((name[i] >= 'a' && name[i] <= 'z') || (name[i] >= '0' && name[i] <= '9') || (name[i] == '-' && i > 0)))
			return 0;
	return i > 0 && i <= 80;
}

static int line_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The map's lines "<slug> <projectId>/<deploymentId>\n" of every live pointer in `pub`, sorted, appended to b. */
static int map_lines(const char *pub, struct svc_buf *b)
{
	char live[2400], pid[37], did[37], **lines = NULL;
	size_t n = 0, cap = 0, i;
	struct dirent *e;
	DIR *d = opendir(pub);
	int err = 0;

	if (!d)
		return errno == ENOENT ? 0 : SVC_E_INTERNAL;
	while (err == 0 && (e = readdir(d)) != NULL) {
		if (!slug_ok(e->d_name) || (size_t)snprintf(live, sizeof live, "%s/%s", pub, e->d_name) >= sizeof live ||
		    !pointer_read(live, pid, did))
			continue;
		size_t len = strlen(e->d_name) + 76;

		if (SVC_ARRAY_GROW(lines, cap, n + 1) < 0 || !(lines[n] = malloc(len))) {
			err = SVC_E_INTERNAL;
			break;
		}
		snprintf(lines[n++], len, "%s %s/%s\n", e->d_name, pid, did);
	}
	closedir(d);
	if (err == 0 && n)
		qsort(lines, n, sizeof *lines, line_cmp);
	for (i = 0; i < n; i++) {
		if (err == 0 && svc_buf_adds(b, lines[i]) < 0)
			err = SVC_E_TOO_LARGE;
		free(lines[i]);
	}
	free(lines);
	return err;
}

int svc_publish_map_write(const struct svc_config *cfg)
{
	char pub[2048], sites[1024], path[1200], *old = NULL;
	struct stat before, after;
	size_t old_len = 0;
	struct svc_buf b;
	int err, lock = -1, had;

	svc_buf_init(&b, 64u << 20);
	if ((err = svc_data_path(cfg, "published", NULL, NULL, pub, sizeof pub)) < 0 ||
	    (err = svc_sites_dir(cfg, sites, sizeof sites)) < 0 || (err = svc_project_mkdirs(sites)) < 0)
		goto done;
	/* one writer at a time, each scanning after its own switch: the last map written has every switch */
	snprintf(path, sizeof path, "%s/.%s.lock", sites, SVC_PUBLISH_MAP);
	if ((lock = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600)) < 0 || flock(lock, LOCK_EX) < 0) {
		svc_log_error("publish: lock %s: %s", path, strerror(errno));
		err = SVC_E_INTERNAL;
		goto done;
	}
	if (svc_buf_adds(&b, "# " SVC_PUBLISH_MAP ": the live deployment of each published site, written by svc "
			     "(lib/project/publish.c); do not edit.\n# <slug> <projectId>/<deploymentId>: Apache reads "
			     "the site's files from SVC_DATA_DIR/deployments/<projectId>/<deploymentId>/\n") < 0 ||
	    (err = map_lines(pub, &b)) < 0) {
		err = err < 0 ? err : SVC_E_TOO_LARGE;
		goto done;
	}
	if (svc_fsx_read(sites, SVC_PUBLISH_MAP, 64u << 20, &old, &old_len) == 0 && old_len == b.len &&
	    memcmp(old, svc_buf_str(&b), old_len) == 0)
		goto done;
	snprintf(path, sizeof path, "%s/%s", sites, SVC_PUBLISH_MAP);
	had = stat(path, &before) == 0;
	if ((err = svc_fsx_write(sites, SVC_PUBLISH_MAP, svc_buf_str(&b), b.len)) < 0) {
		svc_log_error("publish: cannot write %s: %s", path, svc_err_message(err));
		goto done;
	}
	/*
	 * mod_rewrite rereads the map when its mtime (microseconds) differs from the one it cached; two
	 * maps written within one clock tick of the filesystem could share it, so the new one gets a later one
	 */
	if (had && stat(path, &after) == 0 &&
	    (int64_t)after.st_mtim.tv_sec * 1000000 + after.st_mtim.tv_nsec / 1000 <=
		    (int64_t)before.st_mtim.tv_sec * 1000000 + before.st_mtim.tv_nsec / 1000) {
		struct timespec ts[2] = { { .tv_nsec = UTIME_OMIT }, before.st_mtim };
		ts[1].tv_nsec += 1000000;
		if (ts[1].tv_nsec >= 1000000000) {
			ts[1].tv_sec++;
			ts[1].tv_nsec -= 1000000000;
		}
		if (utimensat(AT_FDCWD, path, ts, 0) < 0)
			svc_log_error("publish: cannot set the time of %s: %s", path, strerror(errno));
	}
done:
	if (lock >= 0)
		close(lock);
	free(old);
	svc_buf_dispose(&b);
	return err;
}

int svc_publish_take_down(const struct svc_config *cfg, const char *slug)
{
	char live[2048];
	int err;

	if ((err = svc_project_published_dir(cfg, slug, live, sizeof live)) < 0)
		return err;
	if (svc_fsx_remove_tree(live) < 0) {
		svc_log_error("publish: cannot remove %s", live);
		return SVC_E_INTERNAL;
	}
	return svc_publish_map_write(cfg);
}

/*
 * Points the live site of `slug` at the kept site of deployment
 * `deployment_id` of `project_id` with one rename of a symlink
 * (svc_publish_swap(); an old copied site is exchanged and removed),
 * marks the site it replaces as superseded now (its directory's mtime, for
 * the grace of prune()) and rewrites Apache's map. Call with the publishing
 * lock held.
 */
static int go_live(const struct svc_config *cfg, const char *slug, const char *project_id, const char *deployment_id)
{
	char pub[2048], live[2048], next[2200], target[128], rnd[17], pid[37], did[37], prev[2048] = "";
	int err;

	if ((err = svc_data_path(cfg, "published", NULL, NULL, pub, sizeof pub)) < 0 ||
	    (err = svc_project_mkdirs(pub)) < 0 || (err = svc_project_published_dir(cfg, slug, live, sizeof live)) < 0 ||
	    (err = svc_random_hex(rnd, 8)) < 0)
		return err;
	if (pointer_read(live, pid, did) && strcmp(did, deployment_id) != 0 &&
	    kept_dir(cfg, pid, did, prev, sizeof prev) < 0)
		prev[0] = '\0';
	snprintf(target, sizeof target, "../deployments/%s/%s", project_id, deployment_id);
	snprintf(next, sizeof next, "%s/.next-%s-%s", pub, slug, rnd);
	if (symlink(target, next) < 0) {
		svc_log_error("publish: symlink %s: %s", next, strerror(errno));
		return SVC_E_INTERNAL;
	}
	if ((err = svc_publish_swap(next, live)) < 0)
		return err;
	if (prev[0] && utimensat(AT_FDCWD, prev, NULL, 0) < 0 && errno != ENOENT)
		svc_log_warn("publish: cannot mark %s superseded: %s", prev, strerror(errno));
	if (svc_publish_map_write(cfg) < 0)
		svc_log_error("publish: %s is live for lighttpd, but Apache's map was not rewritten", slug);
	return 0;
}

/* Records deployment `id` live and the others superseded, and the project published, in one transaction. */
static int record_live(struct svc_db *db, const char *project_id, const char *id, const char *excerpt)
{
	struct svc_dbv sup[2] = { svc_dbv_str(project_id), svc_dbv_str(id) };
	struct svc_dbv fin[2] = { excerpt ? svc_dbv_str(excerpt) : svc_dbv_null(), svc_dbv_str(id) };
	struct svc_dbv pid = svc_dbv_str(project_id);
	struct svc_db_step steps[3] = {
		{ STMT_DEPLOY_SUPERSEDE, sup, 2, NULL },
		{ excerpt ? STMT_DEPLOY_FINISH : STMT_DEPLOY_MAKE_LIVE, excerpt ? fin : fin + 1, excerpt ? 2 : 1, NULL },
		{ STMT_PROJECT_SET_PUBLISHED, &pid, 1, NULL },
	};

	return svc_db_tx_steps(db, steps, 3);
}

unsigned svc_publish_grace_secs(const struct svc_config *cfg)
{
	return cfg->deployments_grace_secs; /* 0 to 86400, default 60 (the settings table) */
}

/* Whether `id` is in column `col` of `rows` at a row whose flag in `only` is set (every row when only is NULL). */
static int rows_have(const struct svc_rows *rows, unsigned col, const unsigned char *only, const char *id)
{
	size_t i;

	for (i = 0; rows && i < rows->nrows; i++)
		if ((!only || only[i]) && strcmp(svc_rows_get(rows, i, col), id) == 0)
			return 1;
	return 0;
}

/*
 * Keeps the sites of the live deployment and the newest `keep` - 1 others;
 * the records of the rest say at once that their site is gone. Their
 * directories (and any other of the project's that is not kept, live or
 * building) are removed once they have not been live for
 * SVC_DEPLOYMENTS_GRACE_SECS: a request that found its file there has
 * opened it by then. Call with the publishing lock held.
 */
static void prune(struct svc_db *db, const struct svc_config *cfg, const char *project_id, const char *slug,
		  unsigned keep)
{
	struct svc_dbv p = svc_dbv_str(project_id);
	struct svc_rows *rows = NULL, *building = NULL;
	unsigned char *kept = NULL;
	char dir[2048], live[2048], pid[37], did[37] = "";
	time_t now = time(NULL);
	unsigned grace = svc_publish_grace_secs(cfg);
	size_t i, others = 0;
	struct dirent *e;
	struct stat st;
	DIR *d = NULL;

	if (svc_db_run(db, STMT_DEPLOY_KEPT, &p, 1, &rows, NULL) < 0 ||
	    svc_db_run(db, STMT_DEPLOY_BUILDING, &p, 1, &building, NULL) < 0 ||
	    !(kept = calloc(rows->nrows + 1, 1)))
		goto done;
	for (i = 0; i < rows->nrows; i++) {
		struct svc_dbv u = svc_dbv_str(svc_rows_get(rows, i, DKCOL_ID));

		if (strcmp(svc_rows_get(rows, i, DKCOL_STATUS), "live") == 0 || others + 1 < keep) {
			/* the live site is always kept, and counts as one of `keep` */
			others += strcmp(svc_rows_get(rows, i, DKCOL_STATUS), "live") != 0;
			kept[i] = 1;
			continue;
		}
		svc_db_run(db, STMT_DEPLOY_UNKEEP, &u, 1, NULL, NULL);
	}
	if (svc_project_published_dir(cfg, slug, live, sizeof live) < 0 || !pointer_read(live, pid, did) ||
	    strcmp(pid, project_id) != 0)
		did[0] = '\0';
	if (kept_dir(cfg, project_id, NULL, dir, sizeof dir) < 0 || !(d = opendir(dir)))
		goto done;
	while ((e = readdir(d)) != NULL) {
		if (!svc_uuid_valid(e->d_name) || strcmp(e->d_name, did) == 0 || rows_have(rows, DKCOL_ID, kept, e->d_name) ||
		    rows_have(building, DBCOL_ID, NULL, e->d_name) ||
		    fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(st.st_mode) ||
		    now - st.st_mtime < (time_t)grace)
			continue;
		if (kept_dir(cfg, project_id, e->d_name, dir, sizeof dir) == 0 && svc_fsx_remove_tree(dir) < 0)
			svc_log_error("publish: cannot remove %s", dir);
	}
done:
	if (d)
		closedir(d);
	free(kept);
	svc_rows_free(building);
	svc_rows_free(rows);
}

/* ---- publishing ---- */

void svc_publish_target_of(const struct svc_rows *rows, const char *user_id, struct svc_publish_target *out)
{
	out->project_id = svc_rows_get(rows, 0, PCOL_ID);
	out->workspace_id = svc_rows_get(rows, 0, PCOL_WORKSPACE);
	out->slug = svc_rows_get(rows, 0, PCOL_SLUG);
	out->user_id = user_id;
}

/* A deployment claimed, a transaction of svc_db_tx() (claim()). */
struct deploy_claim {
	const struct svc_publish_target *t;
	const char *sha, *id;
	int64_t stale_secs;
};

static int claim_tx(struct svc_db *db, void *arg)
{
	const struct deploy_claim *c = arg;
	struct svc_dbv pid = svc_dbv_str(c->t->project_id), ins[4];
	struct svc_rows *rows = NULL;
	size_t i;
	int err;

	if ((err = svc_db_run(db, STMT_DEPLOY_LOCK_PROJECT, &pid, 1, NULL, NULL)) < 0 ||
	    (err = svc_db_run(db, STMT_DEPLOY_BUILDING, &pid, 1, &rows, NULL)) < 0)
		goto done;
	for (i = 0; rows && i < rows->nrows; i++) {
		uint64_t age = 0;
		struct svc_dbv f[3] = { svc_dbv_str("the build was interrupted (its process ended)"), svc_dbv_null(),
					svc_dbv_str(svc_rows_get(rows, i, DBCOL_ID)) };

		svc_parse_u64(svc_rows_get(rows, i, DBCOL_AGE_SECS), UINT64_MAX, &age);
		if ((int64_t)age < c->stale_secs) {
			err = SVC_E_CONFLICT;
			goto done;
		}
		if ((err = svc_db_run(db, STMT_DEPLOY_FAIL, f, 3, NULL, NULL)) < 0)
			goto done;
	}
	ins[0] = svc_dbv_str(c->id);
	ins[1] = pid;
	ins[2] = c->sha[0] ? svc_dbv_str(c->sha) : svc_dbv_null();
	ins[3] = c->t->user_id && c->t->user_id[0] ? svc_dbv_str(c->t->user_id) : svc_dbv_null();
	err = svc_db_run(db, STMT_DEPLOY_INSERT, ins, 4, NULL, NULL);
done:
	svc_rows_free(rows);
	return err;
}

/*
 * Records a new deployment of t->project_id, building, unless one is
 * building already (SVC_E_CONFLICT); one older than `stale_secs` was
 * interrupted (its process died) and is failed first. Writes its id into
 * out_id (37 bytes).
 */
static int claim(struct svc_db *db, const struct svc_publish_target *t, const char *sha, int64_t stale_secs,
		 char *out_id)
{
	char id[37];
	struct deploy_claim c = { t, sha, id, stale_secs };
	int err;

	if ((err = svc_uuid_v4(id)) < 0 || (err = svc_db_tx(db, claim_tx, &c)) < 0)
		return err;
	memcpy(out_id, id, sizeof id);
	return 0;
}

int svc_publish__scripts_allowed(struct svc_db *db, const char *workspace_id)
{
	struct svc_dbv p = svc_dbv_str(workspace_id);
	struct svc_rows *rows = NULL;
	int yes = 0;

	if (svc_db_run(db, STMT_WORKSPACE_BUILD_SCRIPTS, &p, 1, &rows, NULL) == 0 && rows->nrows == 1) {
		const char *v = svc_rows_get(rows, 0, WBCOL_SCRIPTS);
		yes = v && strcmp(v, "1") == 0;
	}
	svc_rows_free(rows);
	return yes;
}

int svc_publish__copy_sources(const struct svc_config *cfg, const char *project_id, const char *build)
{
	char pdir[2048], git[2100];
	int lock, err;

	if ((err = svc_project_dir(cfg, project_id, pdir, sizeof pdir)) < 0)
		return err;
	if ((lock = svc_project_lock(pdir)) < 0)
		return lock;
	err = svc_fsx_copy_tree(pdir, build);
	close(lock);
	if (err < 0)
		return err;
	snprintf(git, sizeof git, "%s/.git", build);
	return svc_fsx_remove_tree(git);
}

/* The site of a build (`out`: the build's dist/ or the files) kept as `site`, with its marker. */
static int keep_site(const char *project_id, const char *out, const char *site)
{
	char tmp[2100], git[2200];
	int err;

	snprintf(tmp, sizeof tmp, "%s.tmp", site);
	svc_fsx_remove_tree(tmp);
	if ((err = svc_fsx_copy_tree(out, tmp)) < 0) /* symlinks and special files stay behind */
		return err;
	snprintf(git, sizeof git, "%s/.git", tmp);
	if ((err = svc_fsx_remove_tree(git)) < 0 || (err = svc_publish_mark(tmp, project_id)) < 0)
		goto fail;
	if (rename(tmp, site) < 0) {
		svc_log_error("publish: rename %s: %s", site, strerror(errno));
		err = SVC_E_INTERNAL;
		goto fail;
	}
	return 0;
fail:
	svc_fsx_remove_tree(tmp);
	return err;
}

int svc_publish_run(struct svc_db *db, const struct svc_config *cfg, const struct svc_publish_target *t,
		    const struct svc_publish_events *ev, char *out_id, char *why, size_t why_max)
{
	struct svc_publish__log *log = calloc(1, sizeof *log);
	char *excerpt = malloc(SVC_PUBLISH_LOG_TAIL + 1);
	char id[37] = "", pdir[2048], build[2048], proj[2100], out[2200], site[2048], sha[41] = "", line[256];
	struct svc_repo_commit *head = NULL;
	struct svc_build_opts o;
	size_t nhead = 0;
	struct stat st;
	int64_t t0;
	int err, lock = -1;

	snprintf(why, why_max, "%s", "");
	if (!log || !excerpt) {
		err = SVC_E_INTERNAL;
		goto done;
	}
	log->ev = ev;
	svc_build_opts_load(cfg, svc_publish__scripts_allowed(db, t->workspace_id), &o);
	if ((err = svc_project_dir(cfg, t->project_id, pdir, sizeof pdir)) < 0)
		goto done;
	if (svc_repo_log(pdir, 1, &head, &nhead) == 0 && nhead == 1)
		memcpy(sha, head[0].sha, sizeof sha);
	if ((err = claim(db, t, sha, (int64_t)o.wall_secs + 120, id)) < 0)
		goto done;
	memcpy(out_id, id, sizeof id);
	if (ev && ev->started) {
		struct json_object *j = NULL;
		if (svc_deployment_get(db, t->project_id, id, &j) == 0)
			ev->started(ev->arg, j);
		json_object_put(j);
	}
	if ((err = svc_data_path(cfg, "builds", id, NULL, build, sizeof build)) < 0 ||
	    (err = kept_dir(cfg, t->project_id, id, site, sizeof site)) < 0)
		goto failed;
	snprintf(o.run_name, sizeof o.run_name, "d-%s", id);
	/* the build's tree: a tmpfs of SVC_BUILD_DISK_MB (root), the project's copy in it */
	if ((err = svc_build_dir_make(&o, build, proj, sizeof proj, why, why_max)) < 0)
		goto failed;
	if ((err = svc_publish__copy_sources(cfg, t->project_id, proj)) < 0) {
		if (err == SVC_E_TOO_LARGE)
			snprintf(why, why_max, "the build used more than %u MB of disk (the project's files)", o.disk_mb);
		else
			snprintf(why, why_max, "the project's files could not be copied");
		err = err == SVC_E_TOO_LARGE ? SVC_E_VALIDATION : err;
		goto failed;
	}
	snprintf(out, sizeof out, "%s/package.json", proj);
	if (lstat(out, &st) == 0 && S_ISREG(st.st_mode)) {
		snprintf(line, sizeof line, "package.json: building in the sandbox (%s)\n",
			 o.scripts ? "install scripts allowed" : "install scripts off");
		run_log_say(log, line);
		if ((err = svc_build_run(&o, proj, svc_publish__log_add, log, why, why_max)) < 0)
			goto failed;
		snprintf(out, sizeof out, "%s/dist", proj);
	} else {
		run_log_say(log, "no package.json: the project's files are published as they are\n");
		snprintf(out, sizeof out, "%s", proj);
	}
	if ((err = keep_site(t->project_id, out, site)) < 0) {
		snprintf(why, why_max, "%s", err == SVC_E_TOO_LARGE ? "the site is nested too deeply, or the disk is full"
								    : "the site could not be stored");
		err = err == SVC_E_TOO_LARGE ? SVC_E_VALIDATION : err < 0 ? err : SVC_E_INTERNAL;
		goto failed;
	}
	/* the site quota (SVC_QUOTA_SITE_BYTES) and the workspace's (SVC_QUOTA_WORKSPACE_BYTES): the live site stays as it was */
	if ((err = svc_quota_bytes_check(db, cfg, t->workspace_id, t->project_id, site, SVC_QUOTA_SITE_BYTES, 0, 0, why,
					 why_max)) < 0)
		goto failed;
	if ((lock = publish_lock(cfg, t->project_id)) < 0) {
		err = lock;
		goto failed;
	}
	t0 = svc_mono_ms();
	if ((err = go_live(cfg, t->slug, t->project_id, id)) < 0) {
		snprintf(why, why_max, "the site could not be switched in");
		goto failed;
	}
	snprintf(line, sizeof line, "the site is live (switched in %lld ms)\n", (long long)(svc_mono_ms() - t0));
	run_log_say(log, line);
	svc_log_info("publish: %s deployment %s live, switched in %lld ms", t->slug, id, (long long)(svc_mono_ms() - t0));
	svc_publish__log_excerpt(log, excerpt);
	if ((err = record_live(db, t->project_id, id, excerpt)) < 0)
		goto done;
	prune(db, cfg, t->project_id, t->slug, svc_publish_kept(cfg));
	goto done;
failed:
	if (!why[0])
		snprintf(why, why_max, "%s", "the deployment failed (internal error)");
	if (log->len == 0 || log->tail[log->len - 1] != '\n')
		run_log_say(log, "\n");
	if (err != SVC_E_VALIDATION) {
		run_log_say(log, why);
		run_log_say(log, "\n");
	}
	svc_publish__log_excerpt(log, excerpt);
	{
		struct svc_dbv f[3] = { svc_dbv_str(why), svc_dbv_str(excerpt), svc_dbv_str(id) };
		svc_db_run(db, STMT_DEPLOY_FAIL, f, 3, NULL, NULL);
	}
	svc_fsx_remove_tree(site);
done:
	if (id[0] && svc_data_path(cfg, "builds", id, NULL, build, sizeof build) == 0)
		svc_build_dir_remove(build);
	if (lock >= 0)
		close(lock);
	svc_repo_log_free(head, nhead);
	free(excerpt);
	free(log);
	return err;
}

int svc_publish_restore(struct svc_db *db, const struct svc_config *cfg, const struct svc_publish_target *t,
			const char *deployment_id, char *why, size_t why_max)
{
	struct svc_dbv p[2] = { svc_dbv_str(deployment_id), svc_dbv_str(t->project_id) };
	struct svc_rows *rows = NULL;
	const char *status, *kept;
	char site[2048];
	struct stat st;
	int err, lock;

	snprintf(why, why_max, "%s", "");
	if ((lock = publish_lock(cfg, t->project_id)) < 0)
		return lock;
	if ((err = svc_db_run(db, STMT_DEPLOY_GET, p, 2, &rows, NULL)) < 0)
		goto done;
	if (rows->nrows != 1) {
		err = SVC_E_NOT_FOUND;
		goto done;
	}
	status = svc_rows_get(rows, 0, DCOL_STATUS);
	kept = svc_rows_get(rows, 0, DCOL_KEPT);
	if (strcmp(status, "building") == 0 || strcmp(status, "failed") == 0) {
		snprintf(why, why_max, "a %s deployment has no site to restore", status);
		err = SVC_E_CONFLICT;
		goto done;
	}
	if (strcmp(status, "live") == 0)
		goto done;
	if (!kept || strcmp(kept, "1") != 0) {
		snprintf(why, why_max, "this deployment's site is no longer kept (the newest %u are)", svc_publish_kept(cfg));
		err = SVC_E_CONFLICT;
		goto done;
	}
	if ((err = kept_dir(cfg, t->project_id, deployment_id, site, sizeof site)) < 0)
		goto done;
	if (stat(site, &st) < 0 || !S_ISDIR(st.st_mode)) {
		svc_log_error("publish: the kept site %s is missing", site);
		snprintf(why, why_max, "this deployment's site is no longer kept");
		err = SVC_E_CONFLICT;
		goto done;
	}
	if ((err = go_live(cfg, t->slug, t->project_id, deployment_id)) < 0 ||
	    (err = record_live(db, t->project_id, deployment_id, NULL)) < 0)
		goto done;
	svc_log_info("publish: %s deployment %s restored", t->slug, deployment_id);
	prune(db, cfg, t->project_id, t->slug, svc_publish_kept(cfg));
done:
	close(lock);
	svc_rows_free(rows);
	return err;
}
