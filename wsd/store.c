/* store.c: svc-wsd's work off the event loop: role lookups, loading and persisting documents, disk sync, calls to the API. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <json-c/json.h>

#include "auth/perm.h"
#include "core/err.h"
#include "core/fsx.h"
#include "auth/internal.h"
#include "core/json.h"
#include "core/log.h"
#include "core/util.h"
#include "project/comment.h"
#include "project/project.h"
#include "project/quota.h"
#include "wsd.h"
#include "wsd_store.h"

#define FILES_MAX 20000          /* files of a project looked at */
#define API_TIMEOUT_MS 15000

/* The hex SHA-256 of collab_files; OpenSSL failing (out of memory) aborts, as every allocation of svc-wsd does. */
static void sha256_hex(const void *data, size_t len, char *out)
{
	if (svc_sha256_hex(data, len, out) < 0)
		abort();
}

/* ------------------------------------------------------------------ known disk state (wsd/known.c) */

static void known_copy(struct wsd_known *dst, const struct wsd_known *src)
{
	size_t i;

	memset(dst, 0, sizeof *dst);
	for (i = 0; i < src->n; i++)
		wsd_known_set(dst, src->e[i].path, src->e[i].hash);
}

static void disk_files_free(struct wsd_disk_file *f, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(f[i].path);
		free(f[i].content);
	}
	free(f);
}

static struct wsd_disk_file *disk_file_push(struct wsd_disk_file **arr, size_t *n, size_t *cap)
{
	struct wsd_disk_file *f;

	WSD_GROW(*arr, *cap, *n + 1);
	f = &(*arr)[(*n)++];
	memset(f, 0, sizeof *f);
	return f;
}

static int project_dir(const struct svc_config *cfg, const char *id, char *out, size_t max)
{
	int n = snprintf(out, max, "%s/projects/%s", cfg->data_dir, id);

	return (n < 0 || (size_t)n >= max) ? SVC_E_INTERNAL : 0;
}

/* Reads a text file the document may hold; SVC_E_TOO_LARGE or SVC_E_VALIDATION when it may not. */
static int read_text(const struct svc_config *cfg, const char *dir, const char *path, char **out, size_t *len)
{
	char *data = NULL;
	size_t n = 0;
	int err = svc_fsx_read(dir, path, cfg->wsd_max_file_bytes, &data, &n);

	if (err < 0)
		return err;
	if (!svc_utf8_valid(data, n)) {
		free(data);
		return SVC_E_VALIDATION;
	}
	*out = data;
	*len = n;
	return 0;
}

/* ------------------------------------------------------------------ quotas (lib/project/quota.h) */

/* The workspace of project `id` into ws (37 bytes); SVC_E_NOT_FOUND when it is gone. */
static int project_workspace(struct svc_db *db, const char *id, char *ws)
{
	struct svc_dbv p = svc_dbv_str(id);
	struct svc_rows *rows = NULL;
	int err;

	if ((err = svc_db_run(db, STMT_DEPLOY_PROJECT_WORKSPACE, &p, 1, &rows, NULL)) < 0)
		return err;
	err = rows && rows->nrows == 1 ? 0 : SVC_E_NOT_FOUND;
	if (err == 0)
		snprintf(ws, 37, "%s", svc_rows_get(rows, 0, DPWCOL_WORKSPACE));
	svc_rows_free(rows);
	return err;
}

/* What the byte quotas leave project `id` (directory `dir`) into *left; UINT64_MAX when MariaDB cannot say. */
static void quota_room(struct svc_db *db, const struct svc_config *cfg, const char *id, const char *dir,
		       uint64_t *left)
{
	char ws[37];
	uint64_t now;

	*left = UINT64_MAX;
	if (db && (project_workspace(db, id, ws) < 0 || svc_quota_repo_room(db, cfg, ws, id, dir, &now, left) < 0)) {
		svc_log_warn("project %s: the byte quotas could not be measured", id);
		*left = UINT64_MAX;
	}
}

/* ------------------------------------------------------------------ job plumbing */

static void job_init(struct wsd_job *j, wsd_job_run run, wsd_job_done done)
{
	j->next = NULL;
	j->run = run;
	j->done = done;
}

static void *job_alloc(size_t size)
{
	void *p = calloc(1, size);

	if (!p)
		abort();
	return p;
}

/* ------------------------------------------------------------------ access */

/*
 * The check of one socket's access (an access job, or one item of a recheck) on `db` (NULL: unavailable):
 * the token's session, then the project loaded and the actions decided for the socket's user by
 * lib/project, as for the API (svc_project_load(), svc_project_check()); a socket is a session's, with
 * every scope. The user's name (svc_project_author(): display name, else e-mail) only when `name`.
 */
static void access_check(struct svc_db *db, struct wsd_access_job *j, int name)
{
	const struct svc_caller who = { db, NULL, j->user_id, SVC_SCOPE_ALL, NULL };
	struct svc_rows *rows = NULL;
	char email[256];
	int err;

	if (!db) {
		j->error = SVC_E_UNAVAILABLE;
		return;
	}
	/* a token signed well but of a session that ended (logout, reuse) or older than a password change */
	err = svc_session_check(db, &j->who);
	if (err < 0) {
		j->error = err == SVC_E_UNAUTHORIZED ? err : SVC_E_UNAVAILABLE;
		return;
	}
	/* reading is the least a socket may do, and writing and moderating need it (lib/auth/perm.h) */
	err = svc_project_load(&who, j->project_id, SVC_ACT_READ, &rows);
	if (err == SVC_E_NOT_FOUND || err == SVC_E_FORBIDDEN || err == SVC_E_UNAUTHORIZED) {
		j->error = err == SVC_E_NOT_FOUND ? err : 0; /* not readable: member and public_read stay 0 */
		return;
	}
	if (err < 0) {
		j->error = SVC_E_UNAVAILABLE;
		return;
	}
	j->public_read = 1;
	j->member = svc_project_check(&who, rows, SVC_ACT_WRITE) == 0;
	j->moderate = j->member && svc_project_check(&who, rows, SVC_ACT_COMMENT_MODERATE) == 0;
	if (name)
		svc_project_author(db, j->user_id, j->user_name, sizeof j->user_name, email, sizeof email);
	svc_rows_free(rows);
}

static void access_run(struct wsd_job *jb, struct wsd_worker *w)
{
	access_check(wsd_worker_db(w), (struct wsd_access_job *)jb, 1);
}

static void access_done(struct wsd_job *jb)
{
	struct wsd_access_job *j = (struct wsd_access_job *)jb;

	j->cb(j);
	free(j);
}

void wsd_store_access(struct wsd_worker *w, uint64_t sess_id, const struct svc_auth_claims *who, const char *project_id,
		      void (*cb)(struct wsd_access_job *j))
{
	struct wsd_access_job *j = job_alloc(sizeof *j);

	job_init(&j->base, access_run, access_done);
	j->sess_id = sess_id;
	j->who = *who;
	snprintf(j->user_id, sizeof j->user_id, "%s", who->user_id);
	snprintf(j->project_id, sizeof j->project_id, "%s", project_id);
	j->cb = cb;
	wsd_worker_push(w, &j->base);
}

/* ------------------------------------------------------------------ recheck */

static void recheck_run(struct wsd_job *jb, struct wsd_worker *w)
{
	struct wsd_recheck_job *j = (struct wsd_recheck_job *)jb;
	size_t i;

	for (i = 0; i < j->n; i++)
		access_check(wsd_worker_db(w), &j->items[i], 0);
}

static void recheck_done(struct wsd_job *jb)
{
	struct wsd_recheck_job *j = (struct wsd_recheck_job *)jb;

	j->cb(j);
	free(j->items);
	free(j);
}

void wsd_store_recheck(struct wsd_worker *w, struct wsd_access_job *items, size_t n, void (*cb)(struct wsd_recheck_job *j))
{
	struct wsd_recheck_job *j = job_alloc(sizeof *j);

	job_init(&j->base, recheck_run, recheck_done);
	j->items = items;
	j->n = n;
	j->cb = cb;
	wsd_worker_push(w, &j->base);
}

/* ------------------------------------------------------------------ load */

struct wsd_load_job {
	struct wsd_job base;
	struct wsd_room *room;
	char project_id[37];
	struct wsd_load_result res;
	void (*cb)(struct wsd_room *r, struct wsd_load_result *res);
};

static void dirty_add(struct wsd_load_result *res, const char *path, size_t len)
{
	WSD_GROW(res->dirty, res->capdirty, res->ndirty + 1);
	res->dirty[res->ndirty] = strndup(path, len);
	if (!res->dirty[res->ndirty])
		abort();
	res->ndirty++;
}

/* Inserts one update into the log (during a load: the room is not live yet). */
static int log_update(struct svc_db *db, const char *project_id, uint64_t seq, const struct svc_yjs_buf *u)
{
	struct svc_dbv p[3];

	p[0] = svc_dbv_str(project_id);
	p[1] = svc_dbv_i64((int64_t)seq);
	p[2] = svc_dbv_str(NULL);
	p[2].type = SVC_DBV_STR;
	p[2].s = (const char *)u->data;
	p[2].len = u->len;
	return svc_db_run(db, STMT_WSD_UPDATE_INSERT, p, 3, NULL, NULL);
}

static int file_put(struct svc_db *db, const char *project_id, const char *path, const char *hash)
{
	struct svc_dbv p[3] = { svc_dbv_str(project_id), svc_dbv_str(path), svc_dbv_str(hash) };

	return svc_db_run(db, STMT_WSD_FILE_PUT, p, 3, NULL, NULL);
}

static int file_del(struct svc_db *db, const char *project_id, const char *path)
{
	struct svc_dbv p[2] = { svc_dbv_str(project_id), svc_dbv_str(path) };

	return svc_db_run(db, STMT_WSD_FILE_DELETE, p, 2, NULL, NULL);
}

struct keys_ctx {
	const struct wsd_known *known;
	struct svc_fsx_entry *disk;
	size_t ndisk;
	struct wsd_load_result *res;
};

/* A document file that is neither on disk nor known was created in the document and never saved. */
static int unsaved_key(const char *key, size_t key_len, int is_text, void *arg)
{
	struct keys_ctx *k = arg;
	char path[SVC_FSX_PATH_MAX + 1];
	size_t i;

	if (!is_text || key_len > SVC_FSX_PATH_MAX || memchr(key, '\0', key_len))
		return 0;
	memcpy(path, key, key_len);
	path[key_len] = '\0';
	if (wsd_known_get(k->known, path))
		return 0;
	for (i = 0; i < k->ndisk; i++)
		if (strcmp(k->disk[i].path, path) == 0)
			return 0;
	dirty_add(k->res, key, key_len);
	return 0;
}

/*
 * Brings a loaded document in line with the disk. `fresh`: the document is
 * new, every text file goes in. Otherwise a file whose hash differs from
 * what svc-wsd last wrote or read replaces the document's text (someone else
 * changed the disk), a known file gone from disk is removed, and files whose
 * document text differs from an unchanged disk are unsaved edits (dirty).
 */
static int reconcile(struct svc_db *db, const struct svc_config *cfg, const char *project_id,
		     struct wsd_load_result *res, int fresh)
{
	struct svc_fsx_entry *list = NULL;
	size_t n = 0, i;
	char dir[2048];
	struct json_object *binary = json_object_new_array();
	struct svc_yjs_buf up = { 0 }, text = { 0 };
	struct keys_ctx kc;
	int err;

	if ((err = project_dir(cfg, project_id, dir, sizeof dir)) < 0)
		goto done;
	err = svc_fsx_list(dir, FILES_MAX, &list, &n);
	if (err == SVC_E_NOT_FOUND) {
		n = 0;
		err = 0;
	} else if (err < 0) {
		goto done;
	}
	for (i = 0; i < n; i++) {
		const char *path = list[i].path;
		const char *known = wsd_known_get(&res->known, path);
		char *data = NULL, hash[65];
		size_t len = 0;
		int rerr = list[i].size > cfg->wsd_max_file_bytes ? SVC_E_TOO_LARGE
								  : read_text(cfg, dir, path, &data, &len);
		if (rerr < 0) {
			json_object_array_add(binary, json_object_new_string(path));
			continue;
		}
		sha256_hex(data, len, hash);
		up.len = 0;
		if (fresh || !known || strcmp(known, hash) != 0) {
			err = fresh ? svc_yjs_map_set_text(res->doc, "files", path, strlen(path), data, len, &up, NULL)
				    : svc_yjs_text_replace(res->doc, "files", path, strlen(path), data, len, &up, NULL);
			if (err == 0 && up.len && !fresh && (err = log_update(db, project_id, res->next_seq, &up)) == 0)
				res->next_seq++;
			if (err == 0)
				err = file_put(db, project_id, path, hash);
			if (err == 0)
				wsd_known_set(&res->known, path, hash);
		} else {
			text.len = 0;
			if (svc_yjs_text_read(res->doc, "files", path, strlen(path), &text) < 0 || text.len != len ||
			    (len && memcmp(text.data, data, len) != 0))
				dirty_add(res, path, strlen(path));
		}
		free(data);
		if (err < 0)
			goto done;
	}
	/* known files gone from disk: removed by someone else */
	for (i = 0; i < res->known.n;) {
		const char *path = res->known.e[i].path;
		size_t k;
		int on_disk = 0;
		for (k = 0; k < n && !on_disk; k++)
			on_disk = strcmp(list[k].path, path) == 0;
		if (on_disk) {
			i++;
			continue;
		}
		up.len = 0;
		if ((err = svc_yjs_map_delete(res->doc, "files", path, strlen(path), &up, NULL)) < 0)
			goto done;
		if (up.len && (err = log_update(db, project_id, res->next_seq, &up)) < 0)
			goto done;
		if (up.len)
			res->next_seq++;
		if ((err = file_del(db, project_id, path)) < 0)
			goto done;
		wsd_known_del(&res->known, path);
	}
	kc.known = &res->known;
	kc.disk = list;
	kc.ndisk = n;
	kc.res = res;
	svc_yjs_map_keys(res->doc, "files", unsaved_key, &kc);
	/* binary and oversized files stay out of the document and are listed in meta */
	{
		const char *j = json_object_to_json_string_ext(binary, JSON_C_TO_STRING_PLAIN);
		free(res->binary_json);
		res->binary_json = strdup(j);
		if (!res->binary_json)
			abort();
		up.len = 0;
		if ((err = svc_yjs_map_set_json(res->doc, "meta", "binaryFiles", 11, j, strlen(j), &up, NULL)) < 0)
			goto done;
		if (up.len && !fresh && (err = log_update(db, project_id, res->next_seq, &up)) == 0)
			res->next_seq++;
	}
done:
	svc_fsx_list_free(list, n);
	json_object_put(binary);
	svc_yjs_buf_dispose(&up);
	svc_yjs_buf_dispose(&text);
	return err;
}

static char *comment_added_json(const struct svc_rows *rows, size_t r)
{
	struct json_object *o = json_object_new_object();
	char *s;

	json_object_object_add(o, "type", json_object_new_string("design-comment:added"));
	json_object_object_add(o, "comment", svc_comment_json(rows, r, 0));
	s = strdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
	json_object_put(o);
	if (!s)
		abort();
	return s;
}

static int load_comments(struct svc_db *db, const char *project_id, struct wsd_load_result *res)
{
	struct svc_dbv p = svc_dbv_str(project_id);
	struct svc_rows *rows = NULL;
	size_t i;
	int err = svc_db_run(db, STMT_COMMENTS_OF_PROJECT, &p, 1, &rows, NULL);

	if (err < 0)
		return err;
	res->comments = calloc(rows->nrows ? rows->nrows : 1, sizeof *res->comments);
	if (!res->comments)
		abort();
	for (i = 0; i < rows->nrows; i++) {
		struct wsd_loaded_comment *c = &res->comments[res->ncomments++];
		const char *parent = svc_rows_get(rows, i, CMCOL_PARENT), *status = svc_rows_get(rows, i, CMCOL_STATUS);
		snprintf(c->id, sizeof c->id, "%s", svc_rows_get(rows, i, CMCOL_ID));
		snprintf(c->parent_id, sizeof c->parent_id, "%s", parent ? parent : "");
		snprintf(c->user_id, sizeof c->user_id, "%s", svc_rows_get(rows, i, CMCOL_USER));
		c->resolved = status && strcmp(status, "resolved") == 0;
		c->added_json = comment_added_json(rows, i);
	}
	svc_rows_free(rows);
	return 0;
}

/*
 * Takes project_id's lease for this instance for SVC_WSD_LEASE_SECONDS: a new one, or one that is
 * this instance's already or expired (room_leases, lease.h). Returns 0, SVC_E_CONFLICT (another
 * instance holds it and it has not expired: that one is asked to hand it over), or DB errors.
 */
static int lease_take(struct svc_db *db, const struct svc_config *cfg, const char *project_id)
{
	struct svc_dbv p[5];
	uint64_t taken = 0;
	int err;

	p[0] = svc_dbv_str(project_id);
	p[1] = svc_dbv_str(wsd_g->instance);
	p[2] = svc_dbv_str(wsd_g->internal_url);
	p[3] = svc_dbv_i64((int64_t)cfg->wsd_lease_secs);
	err = svc_db_run(db, STMT_LEASE_INSERT, p, 4, NULL, NULL);
	if (err != SVC_E_CONFLICT)
		return err;
	/* the room has a lease: ours (a restart on the same host and port), or expired, or another's */
	p[0] = svc_dbv_str(wsd_g->instance);
	p[1] = svc_dbv_str(wsd_g->internal_url);
	p[2] = svc_dbv_i64((int64_t)cfg->wsd_lease_secs);
	p[3] = svc_dbv_str(project_id);
	p[4] = svc_dbv_str(wsd_g->instance);
	if ((err = svc_db_run(db, STMT_LEASE_TAKE, p, 5, NULL, &taken)) < 0)
		return err;
	if (taken != 1) {
		/* the balancer sends this room's clients here now: the holder hands it over at its next
		 * renewal, and a client's next attempt finds the room free */
		p[0] = svc_dbv_str(project_id);
		p[1] = svc_dbv_str(wsd_g->instance);
		svc_db_run(db, STMT_LEASE_WANT, p, 2, NULL, NULL);
	}
	return taken == 1 ? 0 : SVC_E_CONFLICT;
}

static void load_run(struct wsd_job *jb, struct wsd_worker *w)
{
	struct wsd_load_job *j = (struct wsd_load_job *)jb;
	struct wsd_load_result *res = &j->res;
	struct svc_db *db = wsd_worker_db(w);
	struct svc_dbv p[2];
	struct svc_rows *rows = NULL;
	uint64_t seq0 = 0, nupdates = 0;
	uint32_t client;
	int err, have_doc = 0;
	size_t i;

	if (!db) {
		res->error = SVC_E_UNAVAILABLE;
		return;
	}
	/* the room is this instance's only with its lease; on Galera, what the previous instance
	 * stored through another node is read (wsrep_sync_wait, kept for this worker's connection) */
	res->lease_ms = svc_mono_ms();
	if ((err = svc_db_sync_wait(db)) < 0 || (err = lease_take(db, w->cfg, j->project_id)) < 0)
		goto done;
	if ((err = svc_random(&client, sizeof client)) < 0 || (err = svc_yjs_doc_new(&res->doc, client)) < 0)
		goto done;
	if ((err = load_comments(db, j->project_id, res)) < 0)
		goto done;
	p[0] = svc_dbv_str(j->project_id);
	if ((err = svc_db_run(db, STMT_WSD_FILES_GET, p, 1, &rows, NULL)) < 0)
		goto done;
	for (i = 0; i < rows->nrows; i++)
		wsd_known_set(&res->known, svc_rows_get(rows, i, FCOL_PATH), svc_rows_get(rows, i, FCOL_SHA256));
	svc_rows_free(rows);
	rows = NULL;
	if ((err = svc_db_run(db, STMT_WSD_DOC_GET, p, 1, &rows, NULL)) < 0)
		goto done;
	if (rows->nrows == 1) {
		have_doc = 1;
		res->snapshot_bytes = rows->lens[DCOL_SNAPSHOT];
		if (svc_parse_u64(svc_rows_get(rows, 0, DCOL_SNAPSHOT_SEQ), INT64_MAX, &seq0) < 0 ||
		    (err = svc_yjs_apply_update(res->doc, (const uint8_t *)rows->cells[DCOL_SNAPSHOT],
						rows->lens[DCOL_SNAPSHOT], NULL, NULL, NULL)) < 0) {
			svc_log_error("project %s: stored snapshot unreadable", j->project_id);
			err = SVC_E_INTERNAL;
			goto done;
		}
	}
	svc_rows_free(rows);
	rows = NULL;
	p[1] = svc_dbv_i64((int64_t)seq0);
	if ((err = svc_db_run(db, STMT_WSD_UPDATES_GET, p, 2, &rows, NULL)) < 0)
		goto done;
	res->next_seq = seq0 + 1;
	for (i = 0; i < rows->nrows; i++) {
		uint64_t seq = 0;
		size_t data = i * rows->ncols + UPCOL_DATA;
		svc_parse_u64(svc_rows_get(rows, i, UPCOL_SEQ), INT64_MAX, &seq);
		if (svc_yjs_apply_update(res->doc, (const uint8_t *)rows->cells[data], rows->lens[data], NULL,
					 NULL, NULL) < 0)
			svc_log_error("project %s: stored update %llu unreadable, skipped", j->project_id,
				      (unsigned long long)seq);
		if (seq >= res->next_seq)
			res->next_seq = seq + 1;
		res->log_bytes += rows->lens[data];
		nupdates++;
	}
	svc_rows_free(rows);
	rows = NULL;
	if ((err = reconcile(db, w->cfg, j->project_id, res, !have_doc && nupdates == 0)) < 0)
		goto done;
	{
		char dir[2048];
		if (project_dir(w->cfg, j->project_id, dir, sizeof dir) == 0)
			quota_room(db, w->cfg, j->project_id, dir, &res->quota_left);
	}
	if (!have_doc) {
		/* the first snapshot: the document as built, covering every update so far */
		struct svc_yjs_buf state = { 0 };
		struct svc_dbv sp[3];
		svc_yjs_encode_state(res->doc, NULL, 0, &state, NULL);
		sp[0] = svc_dbv_str(j->project_id);
		sp[1].type = SVC_DBV_STR;
		sp[1].s = (const char *)state.data;
		sp[1].len = state.len;
		sp[2] = svc_dbv_i64((int64_t)(res->next_seq - 1));
		err = svc_db_run(db, STMT_WSD_SNAPSHOT_PUT, sp, 3, NULL, NULL);
		if (err == 0) {
			struct svc_dbv tp[2] = { svc_dbv_str(j->project_id), svc_dbv_i64((int64_t)(res->next_seq - 1)) };
			err = svc_db_run(db, STMT_WSD_UPDATES_TRIM, tp, 2, NULL, NULL);
		}
		res->snapshot_bytes = state.len;
		res->log_bytes = 0;
		svc_yjs_buf_dispose(&state);
		nupdates = 0;
		if (err < 0)
			goto done;
	}
	res->since_snapshot = nupdates;
done:
	svc_rows_free(rows);
	res->error = err;
}

static void load_done(struct wsd_job *jb)
{
	struct wsd_load_job *j = (struct wsd_load_job *)jb;
	struct wsd_load_result *res = &j->res;
	size_t i;

	j->cb(j->room, res);
	svc_yjs_doc_free(res->doc);
	wsd_known_dispose(&res->known);
	for (i = 0; i < res->ndirty; i++)
		free(res->dirty[i]);
	free(res->dirty);
	for (i = 0; i < res->ncomments; i++)
		free(res->comments[i].added_json);
	free(res->comments);
	free(res->binary_json);
	free(j);
}

void wsd_store_load(struct wsd_worker *w, const char *project_id, struct wsd_room *r,
		    void (*cb)(struct wsd_room *r, struct wsd_load_result *res))
{
	struct wsd_load_job *j = job_alloc(sizeof *j);

	job_init(&j->base, load_run, load_done);
	j->room = r;
	j->res.quota_left = UINT64_MAX;
	snprintf(j->project_id, sizeof j->project_id, "%s", project_id);
	j->cb = cb;
	wsd_worker_push(w, &j->base);
}

/* ------------------------------------------------------------------ persist and compact */

/*
 * The rooms' updates queued during one tick, written as one transaction by
 * one job: at 20 rooms one commit (one fsync of the redo log) instead of 20.
 */
struct persist_batch {
	struct wsd_job base;
	struct wsd_persist_job *list;
	size_t nrooms, nupdates;
};
static struct wsd_persist_job *batch_head, **batch_tail = &batch_head;

/* The body of a persist batch, a transaction of svc_db_tx(). */
static int persist_tx(struct svc_db *db, void *arg)
{
	const struct persist_batch *b = arg;
	const struct wsd_persist_job *j;
	size_t i;
	int err = 0;

	for (j = b->list; j && err == 0; j = j->next) {
		for (i = 0; i < j->n && err == 0; i++) {
			struct svc_yjs_buf u = { j->updates[i].data, j->updates[i].len, j->updates[i].len };
			err = log_update(db, j->project_id, j->updates[i].seq, &u);
			/* a duplicate (a retried batch that had gone through) is not an error */
			if (err == SVC_E_CONFLICT)
				err = 0;
		}
	}
	return err;
}

static void persist_run(struct wsd_job *jb, struct wsd_worker *w)
{
	struct persist_batch *b = (struct persist_batch *)jb;
	struct svc_db *db = wsd_worker_db(w);
	struct wsd_persist_job *j;
	int err;

	err = db ? svc_db_tx(db, persist_tx, b) : SVC_E_UNAVAILABLE;
	/* one transaction: every room's updates went in, or none did */
	for (j = b->list; j; j = j->next)
		j->error = err;
}

static void persist_done(struct wsd_job *jb)
{
	struct persist_batch *b = (struct persist_batch *)jb;
	struct wsd_persist_job *j, *next;
	size_t i;

	for (j = b->list; j; j = next) {
		next = j->next;
		j->cb(j);
		for (i = 0; i < j->n; i++)
			free(j->updates[i].data);
		free(j->updates);
		free(j);
	}
	free(b);
}

void wsd_store_persist(const char *project_id, struct wsd_room *r, struct wsd_update *updates, size_t n,
		       void (*cb)(struct wsd_persist_job *j))
{
	struct wsd_persist_job *j = calloc(1, sizeof *j);

	if (!j)
		abort();
	j->room = r;
	snprintf(j->project_id, sizeof j->project_id, "%s", project_id);
	j->updates = updates;
	j->n = n;
	j->cb = cb;
	*batch_tail = j;
	batch_tail = &j->next;
}

void wsd_store_persist_flush(struct wsd_worker *w)
{
	struct persist_batch *b;

	if (!batch_head)
		return;
	b = job_alloc(sizeof *b);
	job_init(&b->base, persist_run, persist_done);
	b->list = batch_head;
	batch_head = NULL;
	batch_tail = &batch_head;
	wsd_worker_push(w, &b->base);
}

static void compact_run(struct wsd_job *jb, struct wsd_worker *w)
{
	struct wsd_compact_job *j = (struct wsd_compact_job *)jb;
	struct svc_db *db = wsd_worker_db(w);
	struct svc_dbv p[3], trim[2];
	struct svc_db_step steps[2] = { { STMT_WSD_SNAPSHOT_PUT, p, 3, NULL }, { STMT_WSD_UPDATES_TRIM, trim, 2, NULL } };
	int err;

	if (!db) {
		j->error = SVC_E_UNAVAILABLE;
		return;
	}
	p[0] = svc_dbv_str(j->project_id);
	p[1].type = SVC_DBV_STR;
	p[1].s = (const char *)j->state.data;
	p[1].len = j->state.len;
	p[2] = svc_dbv_i64((int64_t)j->seq);
	trim[0] = p[0];
	trim[1] = svc_dbv_i64((int64_t)j->seq);
	err = svc_db_tx_steps(db, steps, 2);
	j->error = err;
}

static void compact_done(struct wsd_job *jb)
{
	struct wsd_compact_job *j = (struct wsd_compact_job *)jb;

	j->cb(j);
	svc_yjs_buf_dispose(&j->state);
	free(j);
}

void wsd_store_compact(struct wsd_worker *w, const char *project_id, struct wsd_room *r, uint64_t seq,
		       struct svc_yjs_buf *state, void (*cb)(struct wsd_compact_job *j))
{
	struct wsd_compact_job *j = job_alloc(sizeof *j);

	/* the updates the snapshot covers go in first (the worker runs jobs in order) */
	wsd_store_persist_flush(w);
	job_init(&j->base, compact_run, compact_done);
	j->room = r;
	snprintf(j->project_id, sizeof j->project_id, "%s", project_id);
	j->seq = seq;
	j->state = *state;
	memset(state, 0, sizeof *state);
	j->cb = cb;
	wsd_worker_push(w, &j->base);
}

/* ------------------------------------------------------------------ save */

/*
 * The byte quotas for a save: what its files add (their new sizes) and
 * remove (what they replace on disk) must leave the project within
 * SVC_QUOTA_REPO_BYTES and its workspace within SVC_QUOTA_WORKSPACE_BYTES.
 * Returns 0, or SVC_E_TOO_LARGE with the reason in j->why. With MariaDB out
 * of reach it returns 0: the updates were checked as they came.
 */
static int save_quota(struct svc_db *db, const struct svc_config *cfg, struct wsd_save_job *j, const char *dir)
{
	uint64_t add = 0, remove = 0;
	char ws[37];
	size_t i;
	int err;

	if (!db || project_workspace(db, j->project_id, ws) < 0)
		return 0;
	for (i = 0; i < j->nfiles; i++) {
		char full[4200];
		struct stat st;
		snprintf(full, sizeof full, "%s/%s", dir, j->files[i].path);
		if (lstat(full, &st) == 0 && S_ISREG(st.st_mode))
			remove += (uint64_t)st.st_size;
		if (!j->files[i].remove)
			add += j->files[i].len;
	}
	err = svc_quota_bytes_check(db, cfg, ws, j->project_id, dir, SVC_QUOTA_REPO_BYTES, add, remove, j->why,
				    sizeof j->why);
	if (err == SVC_E_TOO_LARGE)
		return err;
	if (err < 0)
		svc_log_warn("project %s: the byte quotas could not be checked (%s); saved", j->project_id,
			     svc_err_code(err));
	return 0;
}

static void save_run(struct wsd_job *jb, struct wsd_worker *w)
{
	struct wsd_save_job *j = (struct wsd_save_job *)jb;
	const struct svc_config *cfg = w->cfg;
	struct svc_db *db = wsd_worker_db(w);
	char dir[2048];
	size_t i, cap = 0, written = 0;
	int err;

	if ((err = project_dir(cfg, j->project_id, dir, sizeof dir)) < 0) {
		j->error = err;
		return;
	}
	/* over a quota nothing is written: no file of the save, so the disk never holds half of it */
	if ((j->error = save_quota(db, cfg, j, dir)) < 0) {
		for (i = 0; i < j->nfiles; i++)
			j->files[i].outcome = WSD_SAVE_SKIPPED;
		return;
	}
	for (i = 0; i < j->nfiles; i++) {
		struct wsd_save_file *f = &j->files[i];
		char *cur = NULL, cur_hash[65] = "";
		size_t cur_len = 0;
		int rerr = svc_fsx_read(dir, f->path, 64u << 20, &cur, &cur_len);

		if (rerr == 0)
			sha256_hex(cur, cur_len, cur_hash);
		else if (rerr != SVC_E_NOT_FOUND) {
			free(cur);
			f->outcome = WSD_SAVE_SKIPPED;
			continue;
		}
		if (!f->remove)
			sha256_hex(f->content, f->len, f->new_hash);
		if (strcmp(cur_hash, f->base_hash) != 0) {
			/* the disk changed since svc-wsd last saw it */
			if (!f->remove && rerr == 0 && strcmp(cur_hash, f->new_hash) == 0) {
				f->outcome = WSD_SAVE_UNCHANGED;
			} else if (f->remove && rerr == SVC_E_NOT_FOUND) {
				f->outcome = WSD_SAVE_DELETED;
			} else {
				struct wsd_disk_file *c;
				f->outcome = WSD_SAVE_CONFLICT;
				if (rerr == 0 && (!svc_utf8_valid(cur, cur_len) || cur_len > cfg->wsd_max_file_bytes)) {
					free(cur);
					continue;
				}
				c = disk_file_push(&j->conflicts, &j->nconflicts, &cap);
				c->path = strdup(f->path);
				if (!c->path)
					abort();
				if (rerr == SVC_E_NOT_FOUND) {
					c->deleted = 1;
				} else {
					c->content = cur;
					c->len = cur_len;
					memcpy(c->hash, cur_hash, sizeof c->hash);
					cur = NULL;
				}
			}
			free(cur);
			continue;
		}
		free(cur);
		if (f->remove) {
			if (rerr == SVC_E_NOT_FOUND) {
				f->outcome = WSD_SAVE_SKIPPED;
			} else if (svc_fsx_delete(dir, f->path) == 0) {
				f->outcome = WSD_SAVE_DELETED;
				written++;
				f->recorded = db && !j->defer_records && file_del(db, j->project_id, f->path) == 0;
			}
			continue;
		}
		if (rerr == 0 && strcmp(cur_hash, f->new_hash) == 0) {
			f->outcome = WSD_SAVE_UNCHANGED;
			continue;
		}
		if ((err = svc_fsx_write(dir, f->path, f->content, f->len)) < 0) {
			svc_log_error("project %s: a file could not be written (%s)", j->project_id, svc_err_code(err));
			f->outcome = WSD_SAVE_SKIPPED;
			continue;
		}
		f->outcome = WSD_SAVE_WRITTEN;
		written++;
		f->recorded = db && !j->defer_records && file_put(db, j->project_id, f->path, f->new_hash) == 0;
	}
	if (written && db) {
		struct svc_dbv p = svc_dbv_str(j->project_id);
		svc_db_run(db, STMT_WSD_DOC_SAVED, &p, 1, NULL, NULL);
	}
	if (db) {
		quota_room(db, cfg, j->project_id, dir, &j->quota_left);
		j->have_quota = 1;
	}
}

static void save_done(struct wsd_job *jb)
{
	struct wsd_save_job *j = (struct wsd_save_job *)jb;
	size_t i;

	j->cb(j);
	for (i = 0; i < j->nfiles; i++) {
		free(j->files[i].path);
		free(j->files[i].content);
	}
	free(j->files);
	disk_files_free(j->conflicts, j->nconflicts);
	free(j);
}

void wsd_store_save(struct wsd_worker *w, const char *project_id, struct wsd_room *r, struct wsd_save_file *files,
		    size_t n, int defer_records, void (*cb)(struct wsd_save_job *j))
{
	struct wsd_save_job *j = job_alloc(sizeof *j);

	job_init(&j->base, save_run, save_done);
	j->room = r;
	snprintf(j->project_id, sizeof j->project_id, "%s", project_id);
	j->files = files;
	j->nfiles = n;
	j->defer_records = defer_records;
	j->cb = cb;
	wsd_worker_push(w, &j->base);
}

/* ------------------------------------------------------------------ collab_files rows */

/* The body of a record job, a transaction of svc_db_tx(). */
static int record_tx(struct svc_db *db, void *arg)
{
	const struct wsd_record_job *j = arg;
	size_t i;
	int err = 0;

	for (i = 0; i < j->n && err == 0; i++)
		err = j->records[i].del ? file_del(db, j->project_id, j->records[i].path)
					: file_put(db, j->project_id, j->records[i].path, j->records[i].hash);
	return err;
}

static void record_run(struct wsd_job *jb, struct wsd_worker *w)
{
	struct wsd_record_job *j = (struct wsd_record_job *)jb;
	struct svc_db *db = wsd_worker_db(w);

	j->error = db ? svc_db_tx(db, record_tx, j) : SVC_E_UNAVAILABLE;
}

static void record_done(struct wsd_job *jb)
{
	struct wsd_record_job *j = (struct wsd_record_job *)jb;
	size_t i;

	j->cb(j);
	for (i = 0; i < j->n; i++)
		free(j->records[i].path);
	free(j->records);
	free(j);
}

void wsd_store_record(struct wsd_worker *w, const char *project_id, struct wsd_room *r,
		      struct wsd_file_record *records, size_t n, void (*cb)(struct wsd_record_job *j))
{
	struct wsd_record_job *j = job_alloc(sizeof *j);

	job_init(&j->base, record_run, record_done);
	j->room = r;
	snprintf(j->project_id, sizeof j->project_id, "%s", project_id);
	j->records = records;
	j->n = n;
	j->cb = cb;
	wsd_worker_push(w, &j->base);
}

/* ------------------------------------------------------------------ rescan */

static void rescan_run(struct wsd_job *jb, struct wsd_worker *w)
{
	struct wsd_rescan_job *j = (struct wsd_rescan_job *)jb;
	const struct svc_config *cfg = w->cfg;
	struct svc_db *db = wsd_worker_db(w);
	struct svc_fsx_entry *list = NULL;
	struct json_object *binary = json_object_new_array();
	size_t n = 0, i, cap = 0;
	char dir[2048];
	int err;

	if ((err = project_dir(cfg, j->project_id, dir, sizeof dir)) < 0)
		goto done;
	err = svc_fsx_list(dir, FILES_MAX, &list, &n);
	if (err == SVC_E_NOT_FOUND) {
		n = 0;
		err = 0;
	} else if (err < 0) {
		goto done;
	}
	for (i = 0; i < n; i++) {
		const char *known = wsd_known_get(&j->known, list[i].path);
		struct wsd_disk_file *f;
		char *data = NULL, hash[65];
		size_t len = 0;
		if (list[i].size > cfg->wsd_max_file_bytes || read_text(cfg, dir, list[i].path, &data, &len) < 0) {
			json_object_array_add(binary, json_object_new_string(list[i].path));
			if (known) {
				/* a text file became binary or too large: it leaves the document */
				f = disk_file_push(&j->files, &j->nfiles, &cap);
				f->path = strdup(list[i].path);
				if (!f->path)
					abort();
				f->deleted = 1;
				if (db)
					file_del(db, j->project_id, f->path);
			}
			continue;
		}
		sha256_hex(data, len, hash);
		if (known && strcmp(known, hash) == 0) {
			free(data);
			continue;
		}
		f = disk_file_push(&j->files, &j->nfiles, &cap);
		f->path = strdup(list[i].path);
		if (!f->path)
			abort();
		f->content = data;
		f->len = len;
		memcpy(f->hash, hash, sizeof hash);
		if (db)
			file_put(db, j->project_id, f->path, hash);
	}
	for (i = 0; i < j->known.n; i++) {
		size_t k;
		int on_disk = 0;
		struct wsd_disk_file *f;
		for (k = 0; k < n && !on_disk; k++)
			on_disk = strcmp(list[k].path, j->known.e[i].path) == 0;
		if (on_disk)
			continue;
		f = disk_file_push(&j->files, &j->nfiles, &cap);
		f->path = strdup(j->known.e[i].path);
		if (!f->path)
			abort();
		f->deleted = 1;
		if (db)
			file_del(db, j->project_id, f->path);
	}
	j->binary_json = strdup(json_object_to_json_string_ext(binary, JSON_C_TO_STRING_PLAIN));
	if (!j->binary_json)
		abort();
done:
	svc_fsx_list_free(list, n);
	json_object_put(binary);
	j->error = err;
}

static void rescan_done(struct wsd_job *jb)
{
	struct wsd_rescan_job *j = (struct wsd_rescan_job *)jb;

	j->cb(j);
	wsd_known_dispose(&j->known);
	disk_files_free(j->files, j->nfiles);
	free(j->binary_json);
	free(j);
}

/* ------------------------------------------------------------------ merge base */

static void base_run(struct wsd_job *jb, struct wsd_worker *w)
{
	struct wsd_base_job *j = (struct wsd_base_job *)jb;
	char dir[2048];
	int err;

	if ((err = project_dir(w->cfg, j->project_id, dir, sizeof dir)) == 0 &&
	    (err = read_text(w->cfg, dir, j->path, &j->content, &j->len)) == 0)
		sha256_hex(j->content, j->len, j->hash);
	j->error = err;
}

static void base_done(struct wsd_job *jb)
{
	struct wsd_base_job *j = (struct wsd_base_job *)jb;

	j->cb(j);
	free(j->path);
	free(j->content);
	free(j);
}

void wsd_store_read_base(struct wsd_worker *w, const char *project_id, struct wsd_room *r, const char *path,
			 void (*cb)(struct wsd_base_job *j))
{
	struct wsd_base_job *j = job_alloc(sizeof *j);

	job_init(&j->base, base_run, base_done);
	j->room = r;
	snprintf(j->project_id, sizeof j->project_id, "%s", project_id);
	j->path = strdup(path);
	if (!j->path)
		abort();
	j->cb = cb;
	wsd_worker_push(w, &j->base);
}

void wsd_store_rescan(struct wsd_worker *w, const char *project_id, struct wsd_room *r, const struct wsd_known *known,
		      void (*cb)(struct wsd_rescan_job *j))
{
	struct wsd_rescan_job *j = job_alloc(sizeof *j);

	job_init(&j->base, rescan_run, rescan_done);
	j->room = r;
	snprintf(j->project_id, sizeof j->project_id, "%s", project_id);
	known_copy(&j->known, known);
	j->cb = cb;
	wsd_worker_push(w, &j->base);
}

/* ------------------------------------------------------------------ calls to the API */

static void call_run(struct wsd_job *jb, struct wsd_worker *w)
{
	struct wsd_call_job *j = (struct wsd_call_job *)jb;
	long status = 0;

	if (svc_internal_call(w->cfg, w->cfg->base_url, "POST", j->path, j->body, strlen(j->body), API_TIMEOUT_MS,
			      &status, NULL) < 0)
		status = 0;
	j->status = status;
}

static void call_done(struct wsd_job *jb)
{
	struct wsd_call_job *j = (struct wsd_call_job *)jb;
	size_t i;

	j->cb(j);
	free(j->body);
	for (i = 0; i < j->npaths; i++)
		free(j->paths[i]);
	free(j->paths);
	for (i = 0; i < j->nusers; i++)
		free(j->users[i]);
	free(j->users);
	free(j);
}

static char *json_take(struct json_object *o)
{
	char *s = strdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));

	json_object_put(o);
	if (!s)
		abort();
	return s;
}

void wsd_store_files_changed(struct wsd_worker *w, const char *project_id, struct wsd_room *r, char **paths,
			     size_t npaths, char **users, size_t nusers, void (*cb)(struct wsd_call_job *j))
{
	struct wsd_call_job *j = job_alloc(sizeof *j);
	struct json_object *o = json_object_new_object(), *a = json_object_new_array(), *u = json_object_new_array();
	size_t i;

	job_init(&j->base, call_run, call_done);
	j->room = r;
	snprintf(j->path, sizeof j->path, "/internal/projects/%s/files-changed", project_id);
	for (i = 0; i < npaths; i++)
		json_object_array_add(a, json_object_new_string(paths[i]));
	for (i = 0; i < nusers; i++)
		json_object_array_add(u, json_object_new_string(users[i]));
	json_object_object_add(o, "paths", a);
	json_object_object_add(o, "userIds", u);
	j->body = json_take(o);
	j->paths = paths;
	j->npaths = npaths;
	j->users = users;
	j->nusers = nusers;
	j->cb = cb;
	wsd_worker_push(w, &j->base);
}

void wsd_store_presence(struct wsd_worker *w, const char *project_id, struct wsd_room *r, struct json_object *users,
			void (*cb)(struct wsd_call_job *j))
{
	struct wsd_call_job *j = job_alloc(sizeof *j);
	struct json_object *o = json_object_new_object();

	job_init(&j->base, call_run, call_done);
	j->room = r;
	snprintf(j->path, sizeof j->path, "/internal/projects/%s/presence", project_id);
	json_object_object_add(o, "users", users);
	j->body = json_take(o);
	j->cb = cb;
	wsd_worker_push(w, &j->base);
}

static void comment_run(struct wsd_job *jb, struct wsd_worker *w)
{
	struct wsd_comment_job *j = (struct wsd_comment_job *)jb;
	long status = 0;

	if (svc_internal_call(w->cfg, w->cfg->base_url, "POST", j->path, j->body, strlen(j->body), API_TIMEOUT_MS,
			      &status, NULL) < 0)
		status = 0;
	j->status = status;
}

static void comment_done(struct wsd_job *jb)
{
	struct wsd_comment_job *j = (struct wsd_comment_job *)jb;

	j->cb(j);
	free(j->body);
	free(j->broadcast);
	free(j);
}

void wsd_store_comment(struct wsd_worker *w, const char *project_id, struct wsd_room *r, uint64_t sess_id,
		       const char *user_id, const char *user_name, const struct wsd_comment_req *req,
		       void (*cb)(struct wsd_comment_job *j))
{
	struct wsd_comment_job *j = job_alloc(sizeof *j);
	struct json_object *body = json_object_new_object(), *out = json_object_new_object();
	char now[32];

	job_init(&j->base, comment_run, comment_done);
	j->room = r;
	j->sess_id = sess_id;
	j->op = req->op;
	j->cb = cb;
	snprintf(j->user_id, sizeof j->user_id, "%s", user_id);
	svc_time_format(svc_now_ms(), now);
	json_object_object_add(body, "projectId", json_object_new_string(project_id));
	json_object_object_add(body, "userId", json_object_new_string(user_id));
	if (req->op == WSD_C_ADD) {
		struct json_object *c = json_object_new_object(), *u = json_object_new_object();
		if (svc_uuid_v4(j->comment_id) < 0)
			abort();
		snprintf(j->parent_id, sizeof j->parent_id, "%s", req->parent_id);
		snprintf(j->path, sizeof j->path, "/internal/design-comments/%s", j->comment_id);
		json_object_object_add(body, "content", json_object_new_string(req->content));
		json_object_object_add(body, "xPercent", json_object_new_double(req->x));
		json_object_object_add(body, "yPercent", json_object_new_double(req->y));
		svc_json_add_str(body, "selector", req->selector);
		svc_json_add_str(body, "pagePath", req->page_path);
		svc_json_add_str(body, "parentId", req->parent_id[0] ? req->parent_id : NULL);
		json_object_object_add(body, "createdAt", json_object_new_string(now));

		json_object_object_add(out, "type", json_object_new_string("design-comment:added"));
		json_object_object_add(c, "id", json_object_new_string(j->comment_id));
		json_object_object_add(u, "id", json_object_new_string(user_id));
		json_object_object_add(u, "name", json_object_new_string(user_name));
		json_object_object_add(u, "avatarUrl", NULL);
		json_object_object_add(c, "user", u);
		json_object_object_add(c, "content", json_object_new_string(req->content));
		json_object_object_add(c, "xPercent", json_object_new_double(req->x));
		json_object_object_add(c, "yPercent", json_object_new_double(req->y));
		svc_json_add_str(c, "selector", req->selector);
		svc_json_add_str(c, "pagePath", req->page_path);
		svc_json_add_str(c, "parentId", req->parent_id[0] ? req->parent_id : NULL);
		json_object_object_add(c, "createdAt", json_object_new_string(now));
		json_object_object_add(c, "updatedAt", json_object_new_string(now));
		json_object_object_add(out, "comment", c);
	} else {
		static const char *const verbs[] = { "", "resolve", "unresolve", "delete" };
		static const char *const events[] = { "", "design-comment:resolved", "design-comment:unresolved",
						      "design-comment:deleted" };
		snprintf(j->comment_id, sizeof j->comment_id, "%s", req->comment_id);
		snprintf(j->path, sizeof j->path, "/internal/design-comments/%s/%s", j->comment_id, verbs[req->op]);
		json_object_object_add(out, "type", json_object_new_string(events[req->op]));
		json_object_object_add(out, "commentId", json_object_new_string(j->comment_id));
		if (req->op == WSD_C_RESOLVE) {
			struct json_object *u = json_object_new_object();
			json_object_object_add(body, "resolvedAt", json_object_new_string(now));
			json_object_object_add(u, "id", json_object_new_string(user_id));
			json_object_object_add(u, "name", json_object_new_string(user_name));
			json_object_object_add(u, "avatarUrl", NULL);
			json_object_object_add(out, "resolvedBy", u);
			json_object_object_add(out, "resolvedAt", json_object_new_string(now));
		}
	}
	j->body = json_take(body);
	j->broadcast = json_take(out);
	wsd_worker_push(w, &j->base);
}
