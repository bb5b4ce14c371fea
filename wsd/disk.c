/* disk.c: svc-wsd's files of a room: unsaved edits saved once they settle, disk changes merged into the document (merge bases), the files-changed call. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "core/err.h"
#include "core/fsx.h"
#include "core/log.h"
#include "core/util.h"
#include "conn.h"
#include "disk.h"
#include "merge.h"
#include "proto.h"
#include "room.h"
#include "wsd.h"
#include "wsd_store.h"

#define SAVE_MAX_FACTOR 10       /* during continuous edits, save at least every 10 x the delay */
#define COMMIT_MAX_MS 30000      /* during continuous saves, call files-changed at least this often */

/* What a file held when svc-wsd last saw it on disk: the base of a three-way merge, kept while it has unsaved edits. */
struct wsd_base_text {
	char *path;
	char *text;          /* NULL while it is being read */
	size_t len;
	char hash[65];
	int reading;
};

/* A room's files. */
struct disk_room {
	struct wsd_known known;
	char **dirty;              /* files with unsaved edits */
	size_t ndirty, capdirty;
	int64_t first_dirty_ms, last_change_ms;
	int save_inflight;
	int rescan_wanted;         /* the disk changed while the room loaded */
	struct wsd_base_text *bases;
	size_t nbases, capbases;
	char *binary_json;         /* meta.binaryFiles as last set */
	uint64_t quota_left;       /* bytes clients' updates may still add: what SVC_QUOTA_REPO_BYTES and
				    * SVC_QUOTA_WORKSPACE_BYTES leave, measured at load and after each save
				    * (svc_quota_repo_room), less the updates integrated since; UINT64_MAX: no limit */
	int save_refused;          /* the last save was over a quota: the next one waits for the next edit */
	struct wsd_file_record *records; /* collab_files rows due (see record_due) */
	size_t nrecords, caprecords;
	int records_inflight;
	int64_t records_fail_ms;
	/* the files-changed call */
	char **changed;
	size_t nchanged, capchanged;
	char **editors;            /* who edited since the last call */
	size_t neditors, capeditors;
	int64_t commit_due_ms, commit_first_ms;
	int commit_inflight;
	int commit_failures;
};

static int disk_id;

static struct disk_room *disk_of(const struct wsd_room *r)
{
	return wsd_room_part(r, disk_id);
}

/* ------------------------------------------------------------------ merge bases */

static struct wsd_base_text *base_find(struct wsd_room *r, const char *path)
{
	struct disk_room *d = disk_of(r);
	size_t i;

	for (i = 0; i < d->nbases; i++)
		if (strcmp(d->bases[i].path, path) == 0)
			return &d->bases[i];
	return NULL;
}

static void base_drop(struct wsd_room *r, const char *path)
{
	struct disk_room *d = disk_of(r);
	struct wsd_base_text *b = base_find(r, path);

	if (!b)
		return;
	free(b->path);
	free(b->text);
	*b = d->bases[--d->nbases];
}

/* Appends a base of `path` without text. */
static struct wsd_base_text *base_add(struct wsd_room *r, const char *path)
{
	struct disk_room *d = disk_of(r);
	struct wsd_base_text *b;

	WSD_GROW(d->bases, d->capbases, d->nbases + 1);
	b = &d->bases[d->nbases++];
	memset(b, 0, sizeof *b);
	b->path = strdup(path);
	if (!b->path)
		abort();
	return b;
}

/* Makes `text` (taken; may be NULL for "") the base of `path`. */
static void base_set(struct wsd_room *r, const char *path, char *text, size_t len, const char *hash)
{
	struct wsd_base_text *b = base_find(r, path);

	if (!b)
		b = base_add(r, path);
	free(b->text);
	if (!text) {
		text = strdup("");
		if (!text)
			abort();
	}
	b->text = text;
	b->len = len;
	snprintf(b->hash, sizeof b->hash, "%s", hash);
}

static void base_read_done(struct wsd_base_job *j)
{
	struct wsd_room *r = j->room;
	struct disk_room *d = disk_of(r);
	struct wsd_base_text *b;
	const char *known;

	r->jobs--;
	b = base_find(r, j->path);
	if (!b || b->text)
		return; /* dropped meanwhile, or a save set it */
	b->reading = 0;
	known = wsd_known_get(&d->known, j->path);
	if (j->error < 0 || !known || strcmp(known, j->hash) != 0) {
		base_drop(r, j->path); /* the disk moved on already: no base, the disk wins */
		return;
	}
	base_set(r, j->path, j->content, j->len, j->hash);
	j->content = NULL;
}

/* A file got an unsaved edit: its text on disk (what svc-wsd knows) is read as the merge base. */
static void base_want(struct wsd_room *r, const char *key, size_t key_len)
{
	struct disk_room *d = disk_of(r);
	char path[SVC_FSX_PATH_MAX + 1];
	struct wsd_base_text *b;

	if (key_len > SVC_FSX_PATH_MAX || memchr(key, '\0', key_len))
		return;
	memcpy(path, key, key_len);
	path[key_len] = '\0';
	if (base_find(r, path) || !wsd_known_get(&d->known, path))
		return;
	b = base_add(r, path);
	b->reading = 1;
	r->jobs++;
	wsd_store_read_base(&wsd_g->io_worker, r->project_id, r, path, base_read_done);
}

/* ------------------------------------------------------------------ collab_files rows */

/*
 * A load takes a file whose hash differs from its collab_files row for someone else's change, and
 * the disk's text replaces the document's. So every hash svc-wsd takes as known (a save, a disk
 * change) reaches that table before any later update of the room is stored: a row a save could not
 * write (MariaDB out of reach) is due here, and while one is, the room's updates wait
 * (WSD_HOLD_FILES) and later saves leave their rows here too, so that rows go in in order (issue 25).
 */
static void record_due(struct wsd_room *r, const char *path, const char *hash)
{
	struct disk_room *d = disk_of(r);
	struct wsd_file_record *rec = NULL;
	size_t i;

	for (i = 0; i < d->nrecords && !rec; i++)
		if (strcmp(d->records[i].path, path) == 0)
			rec = &d->records[i];
	if (!rec) {
		WSD_GROW(d->records, d->caprecords, d->nrecords + 1);
		rec = &d->records[d->nrecords++];
		rec->path = strdup(path);
		if (!rec->path)
			abort();
	}
	rec->del = hash == NULL;
	snprintf(rec->hash, sizeof rec->hash, "%s", hash ? hash : "");
}

static void records_done(struct wsd_record_job *j)
{
	struct wsd_room *r = j->room;
	struct disk_room *d = disk_of(r);
	size_t i, k;

	r->jobs--;
	d->records_inflight = 0;
	if (j->error == 0)
		return;
	/* MariaDB failed: due again, unless a newer row of the same file is due meanwhile */
	d->records_fail_ms = svc_mono_ms();
	for (i = 0; i < j->n; i++) {
		int newer = 0;
		for (k = 0; k < d->nrecords && !newer; k++)
			newer = strcmp(d->records[k].path, j->records[i].path) == 0;
		if (!newer)
			record_due(r, j->records[i].path, j->records[i].del ? NULL : j->records[i].hash);
	}
}

static void start_records(struct wsd_room *r, int64_t now)
{
	struct disk_room *d = disk_of(r);
	if (!d->nrecords || d->records_inflight || now - d->records_fail_ms < 1000 || (r->hold & WSD_HOLD_LEASE))
		return;
	d->records_inflight = 1;
	r->jobs++;
	wsd_store_record(&wsd_g->db_worker, r->project_id, r, d->records, d->nrecords, records_done);
	d->records = NULL;
	d->nrecords = d->caprecords = 0;
}

/* 1 while rows wait: the room's updates wait too (WSD_HOLD_FILES). */
static int records_wait(const struct wsd_room *r)
{
	const struct disk_room *d = disk_of(r);

	return d->nrecords || d->records_inflight;
}

static void records_free(struct wsd_room *r)
{
	struct disk_room *d = disk_of(r);
	size_t i;

	for (i = 0; i < d->nrecords; i++)
		free(d->records[i].path);
	free(d->records);
	d->records = NULL;
	d->nrecords = d->caprecords = 0;
}

/* ------------------------------------------------------------------ document -> disk */

static void mark_dirty(struct wsd_room *r, const char *key, size_t key_len)
{
	struct disk_room *d = disk_of(r);
	int64_t now = svc_mono_ms();

	if (d->ndirty == 0)
		d->first_dirty_ms = now;
	wsd_strlist_add_unique(&d->dirty, &d->ndirty, &d->capdirty, key, key_len);
	d->last_change_ms = now;
	d->save_refused = 0;
}

/* on_edit: the files of the document a committed batch changed get unsaved edits (and their text on disk is read as a merge base). */
static void disk_edit(struct wsd_room *r, const struct svc_yjs_report *rep)
{
	size_t i;

	for (i = 0; i < rep->n; i++) {
		const struct svc_yjs_change *c = &rep->changes[i];
		if (c->root_len != 5 || memcmp(c->root, "files", 5) != 0)
			continue;
		mark_dirty(r, c->key, c->key_len);
		base_want(r, c->key, c->key_len);
	}
}

static void set_last_saved(struct wsd_room *r)
{
	struct svc_yjs_buf up = { 0 };
	char ts[32], json[40];

	wsd_room_flush(r);
	svc_time_format(svc_now_ms(), ts);
	snprintf(json, sizeof json, "\"%s\"", ts);
	if (svc_yjs_map_set_json(r->doc, "meta", "lastSavedAt", 11, json, strlen(json), &up, NULL) == 0)
		wsd_room_server_edit(r, &up);
	svc_yjs_buf_dispose(&up);
}

/* ------------------------------------------------------------------ disk -> document */

/*
 * A file changed on disk (f: its new text) goes into the document. When the
 * file has unsaved edits and its base is known, a three-way merge keeps them
 * (wsd_merge3: the disk wins only where both changed the same text); else the
 * disk's text replaces the document's by a minimal edit. The file stays dirty
 * (with the disk's text as its new base) when the merge kept live edits.
 */
static int disk_merge(struct wsd_room *r, struct wsd_disk_file *f, struct svc_yjs_buf *up)
{
	struct disk_room *d = disk_of(r);
	struct wsd_base_text *b = base_find(r, f->path);
	const char *known = wsd_known_get(&d->known, f->path);
	struct svc_yjs_buf live = { 0 };
	size_t plen = strlen(f->path);
	int err = 1;

	if (b && b->text && known && strcmp(b->hash, known) == 0 &&
	    svc_yjs_text_read(r->doc, "files", f->path, plen, &live) == 0 &&
	    !(live.len == b->len && (!live.len || memcmp(live.data, b->text, b->len) == 0))) {
		const char *lt = live.data ? (const char *)live.data : "";
		struct wsd_merge_edit *e = NULL;
		size_t ne = 0, nconf = 0;
		wsd_merge3(b->text, b->len, lt, live.len, f->content, f->len, &e, &ne, &nconf);
		err = wsd_merge_apply(r->doc, "files", f->path, plen, lt, e, ne, up);
		free(e);
		if (err == 0 && nconf)
			svc_log_info("project %s: %zu region(s) of a file changed live and on disk: the disk's kept",
				     r->project_id, nconf);
	}
	if (err != 0)
		err = svc_yjs_text_replace(r->doc, "files", f->path, plen, f->content, f->len, up, NULL);
	/* live edits the merge kept still have to reach the disk */
	live.len = 0;
	if (err == 0 && svc_yjs_text_read(r->doc, "files", f->path, plen, &live) == 0 &&
	    !(live.len == f->len && (!live.len || memcmp(live.data, f->content, f->len) == 0))) {
		mark_dirty(r, f->path, plen);
		base_set(r, f->path, f->content, f->len, f->hash);
		f->content = NULL;
	} else {
		base_drop(r, f->path);
	}
	svc_yjs_buf_dispose(&live);
	return err;
}

/* Applies files read from disk to the document as server edits. */
static void apply_disk_files(struct wsd_room *r, struct wsd_disk_file *files, size_t n)
{
	struct disk_room *d = disk_of(r);
	struct svc_yjs_buf up = { 0 };
	size_t i;

	wsd_room_flush(r);
	for (i = 0; i < n; i++) {
		struct wsd_disk_file *f = &files[i];
		const char *known;
		int err;
		if (f->deleted) {
			err = svc_yjs_map_delete(r->doc, "files", f->path, strlen(f->path), &up, NULL);
			wsd_known_del(&d->known, f->path);
			record_due(r, f->path, NULL);
			base_drop(r, f->path);
		} else if (f->content) {
			known = wsd_known_get(&d->known, f->path);
			if (known && strcmp(known, f->hash) == 0)
				continue; /* already in the document (a save or an earlier scan took it) */
			err = disk_merge(r, f, &up);
			wsd_known_set(&d->known, f->path, f->hash);
			record_due(r, f->path, f->hash);
		} else {
			continue;
		}
		if (err < 0)
			svc_log_warn("project %s: disk change of a file not applied (%s)", r->project_id, svc_err_code(err));
		wsd_room_server_edit(r, &up);
	}
	svc_yjs_buf_dispose(&up);
}

static void rescan_done(struct wsd_rescan_job *j)
{
	struct wsd_room *r = j->room;
	struct disk_room *d = disk_of(r);

	r->jobs--;
	if (j->error < 0 || r->state != WSD_R_READY)
		return;
	apply_disk_files(r, j->files, j->nfiles);
	/* meta.binaryFiles follows the disk */
	if (j->binary_json && (!d->binary_json || strcmp(d->binary_json, j->binary_json) != 0)) {
		struct svc_yjs_buf up = { 0 };
		wsd_room_flush(r);
		if (svc_yjs_map_set_json(r->doc, "meta", "binaryFiles", 11, j->binary_json, strlen(j->binary_json), &up,
					 NULL) == 0)
			wsd_room_server_edit(r, &up);
		svc_yjs_buf_dispose(&up);
		free(d->binary_json);
		d->binary_json = j->binary_json;
		j->binary_json = NULL;
	}
}

static void start_rescan(struct wsd_room *r)
{
	r->jobs++;
	wsd_store_rescan(&wsd_g->io_worker, r->project_id, r, &disk_of(r)->known, rescan_done);
}

int wsd_disk_changed(const char *project_id)
{
	struct wsd_room *r = wsd_room_find(project_id);

	if (!r)
		return SVC_E_NOT_FOUND;
	if (r->state == WSD_R_LOADING) {
		disk_of(r)->rescan_wanted = 1; /* scanned once the room is ready (disk_tick) */
		return 0;
	}
	if (r->state != WSD_R_READY)
		return SVC_E_NOT_FOUND;
	start_rescan(r);
	return 0;
}

/* ------------------------------------------------------------------ the byte quotas */

/* [100, varString({"type": "error", "error": "payload_too_large", "message": message})] to `s`. */
static void quota_error(struct wsd_sess *s, const char *message)
{
	struct json_object *o = json_object_new_object();
	struct svc_yjs_buf b = { 0 };
	const char *json;
	struct wsd_msg *m;

	json_object_object_add(o, "type", json_object_new_string("error"));
	json_object_object_add(o, "error", json_object_new_string("payload_too_large"));
	json_object_object_add(o, "message", json_object_new_string(message));
	json = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
	wsd_write_varuint(&b, WSD_MSG_DESIGN_COMMENT);
	wsd_write_varbytes(&b, json, strlen(json));
	m = wsd_msg_new(b.data, b.len);
	svc_yjs_buf_dispose(&b);
	json_object_put(o);
	wsd_sess_send(s, m);
	wsd_msg_release_if_unused(m);
}

/*
 * The byte quotas (issue 25, item 15): may an update of `len` bytes from `s`
 * be integrated into its room? 1 when it fits what quota_left allows; 0
 * when it would pass the project's or the workspace's byte quota: the sender
 * is told (message 100, {"type": "error", "error": "payload_too_large",
 * message}) and the update is dropped. An update's bytes bound what it adds
 * to the files (its inserted text is in it verbatim).
 */
static int quota_allows(struct wsd_sess *s, size_t len)
{
	struct wsd_room *r = s->room;
	struct disk_room *d = disk_of(r);
	char msg[256];

	if (d->quota_left == UINT64_MAX || len <= d->quota_left)
		return 1;
	snprintf(msg, sizeof msg,
		 "This edit (%zu bytes) was not kept: the project's files would pass the project's or the workspace's "
		 "storage quota (%llu bytes left).", len, (unsigned long long)d->quota_left);
	svc_log_info("project %s: an update of %zu bytes refused, over a byte quota (%llu left)", r->project_id, len,
		     (unsigned long long)d->quota_left);
	quota_error(s, msg);
	return 0;
}

/*
 * on_update: a client's update is checked against the quotas before it is applied; once it changed
 * the document, its bytes count against quota_left until the next save measures again, and its
 * sender is one of the editors the files-changed call names.
 */
static int disk_update(struct wsd_sess *s, size_t len, int applied)
{
	struct disk_room *d = disk_of(s->room);

	if (!applied)
		return quota_allows(s, len);
	if (d->quota_left != UINT64_MAX)
		d->quota_left = len < d->quota_left ? d->quota_left - len : 0;
	if (s->user_id[0])
		wsd_strlist_add_unique(&d->editors, &d->neditors, &d->capeditors, s->user_id, strlen(s->user_id));
	return 1;
}

/* ------------------------------------------------------------------ saves and the files-changed call */

static void save_done(struct wsd_save_job *j)
{
	struct wsd_room *r = j->room;
	struct disk_room *d = disk_of(r);
	size_t i, written = 0;

	r->jobs--;
	d->save_inflight = 0;
	wsd_g->trim_wanted = 1;
	if (j->have_quota)
		d->quota_left = j->quota_left;
	if (j->error == SVC_E_TOO_LARGE) {
		/* over a quota (another writer took the room meanwhile): nothing written, the files stay
		 * dirty until the next edit, no update adds bytes, and everyone in the room is told */
		for (i = 0; i < j->nfiles; i++)
			wsd_strlist_add_unique(&d->dirty, &d->ndirty, &d->capdirty, j->files[i].path,
					   strlen(j->files[i].path));
		d->save_refused = 1;
		d->quota_left = 0;
		svc_log_info("project %s: a save refused: %s", r->project_id, j->why);
		for (i = 0; i < r->nsess; i++)
			quota_error(r->sess[i], j->why);
		return;
	}
	if (j->error < 0) {
		/* keep the files dirty: the next tick tries again */
		for (i = 0; i < j->nfiles; i++)
			wsd_strlist_add_unique(&d->dirty, &d->ndirty, &d->capdirty, j->files[i].path,
					   strlen(j->files[i].path));
		d->first_dirty_ms = d->last_change_ms = svc_mono_ms();
		return;
	}
	for (i = 0; i < j->nfiles; i++) {
		struct wsd_save_file *f = &j->files[i];
		if (f->outcome == WSD_SAVE_WRITTEN || f->outcome == WSD_SAVE_UNCHANGED) {
			size_t k;
			int dirty = 0;
			wsd_known_set(&d->known, f->path, f->new_hash);
			if (!f->recorded)
				record_due(r, f->path, f->new_hash);
			if (f->outcome == WSD_SAVE_WRITTEN) {
				wsd_strlist_add_unique(&d->changed, &d->nchanged, &d->capchanged, f->path, strlen(f->path));
				written++;
			}
			/* edits that came during the save: what was written is their merge base */
			for (k = 0; k < d->ndirty && !dirty; k++)
				dirty = strcmp(d->dirty[k], f->path) == 0;
			if (dirty) {
				base_set(r, f->path, f->content, f->len, f->new_hash);
				f->content = NULL;
			} else {
				base_drop(r, f->path);
			}
		} else if (f->outcome == WSD_SAVE_DELETED) {
			wsd_known_del(&d->known, f->path);
			if (!f->recorded)
				record_due(r, f->path, NULL);
			base_drop(r, f->path);
			wsd_strlist_add_unique(&d->changed, &d->nchanged, &d->capchanged, f->path, strlen(f->path));
			written++;
		}
	}
	/* files someone else changed on disk meanwhile: the disk wins */
	apply_disk_files(r, j->conflicts, j->nconflicts);
	if (written) {
		int64_t now = svc_mono_ms();
		set_last_saved(r);
		if (!d->commit_due_ms)
			d->commit_first_ms = now;
		d->commit_due_ms = now + (int64_t)wsd_g->cfg.wsd_commit_delay_ms;
		if (d->commit_due_ms - d->commit_first_ms > COMMIT_MAX_MS)
			d->commit_due_ms = d->commit_first_ms + COMMIT_MAX_MS;
	}
}

static void commit_done(struct wsd_call_job *j)
{
	struct wsd_room *r = j->room;
	struct disk_room *d = disk_of(r);

	r->jobs--;
	d->commit_inflight = 0;
	if (j->status >= 200 && j->status <= 299) {
		d->commit_failures = 0;
		return;
	}
	svc_log_warn("project %s: files-changed call failed (status %ld)", r->project_id, j->status);
	if (++d->commit_failures < 5) {
		size_t i;
		for (i = 0; i < j->npaths; i++)
			wsd_strlist_add_unique(&d->changed, &d->nchanged, &d->capchanged, j->paths[i], strlen(j->paths[i]));
		for (i = 0; i < j->nusers; i++)
			wsd_strlist_add_unique(&d->editors, &d->neditors, &d->capeditors, j->users[i], strlen(j->users[i]));
		d->commit_first_ms = svc_mono_ms();
		d->commit_due_ms = svc_mono_ms() + 5000;
	}
}

static void start_save(struct wsd_room *r)
{
	struct disk_room *d = disk_of(r);
	struct wsd_save_file *files = calloc(d->ndirty ? d->ndirty : 1, sizeof *files);
	size_t i, n = 0;

	if (!files)
		abort();
	for (i = 0; i < d->ndirty; i++) {
		char norm[SVC_FSX_PATH_MAX + 1];
		struct svc_yjs_buf text = { 0 };
		struct wsd_save_file *f = &files[n];
		const char *known;
		/* names the disk cannot hold are never written (they stay in the document only) */
		if (svc_fsx_check_path(d->dirty[i], norm) < 0 || strcmp(norm, d->dirty[i]) != 0) {
			free(d->dirty[i]);
			continue;
		}
		f->path = d->dirty[i];
		known = wsd_known_get(&d->known, f->path);
		snprintf(f->base_hash, sizeof f->base_hash, "%s", known ? known : "");
		if (svc_yjs_text_read(r->doc, "files", f->path, strlen(f->path), &text) == 0) {
			f->content = (char *)text.data;
			f->len = text.len;
			if (!f->content) {
				f->content = strdup("");
				if (!f->content)
					abort();
			}
		} else {
			svc_yjs_buf_dispose(&text);
			f->remove = 1;
		}
		n++;
	}
	free(d->dirty);
	d->dirty = NULL;
	d->ndirty = d->capdirty = 0;
	if (n == 0) {
		free(files);
		return;
	}
	d->save_inflight = 1;
	r->jobs++;
	wsd_store_save(&wsd_g->io_worker, r->project_id, r, files, n, records_wait(r), save_done);
}

static void start_commit(struct wsd_room *r)
{
	struct disk_room *d = disk_of(r);
	d->commit_due_ms = 0;
	if (d->nchanged == 0)
		return;
	d->commit_inflight = 1;
	r->jobs++;
	wsd_store_files_changed(&wsd_g->io_worker, r->project_id, r, d->changed, d->nchanged, d->editors,
				d->neditors, commit_done);
	d->changed = NULL;
	d->nchanged = d->capchanged = 0;
	d->editors = NULL;
	d->neditors = d->capeditors = 0;
}

/*
 * on_tick: saves the dirty files once edits settle (SVC_WSD_SAVE_DELAY_MS, at
 * most ten times that during continuous edits, at once when the room is
 * empty or the daemon stops), then calls files-changed once per burst of
 * saves; writes the collab_files rows that are due and holds the room's
 * updates while any is. Busy while files are unsaved, rows due or a call due.
 */
static int disk_tick(struct wsd_room *r, int64_t now)
{
	struct disk_room *d = disk_of(r);
	const struct svc_config *cfg = &wsd_g->cfg;
	int empty = r->nsess == 0;

	if (d->rescan_wanted) {
		d->rescan_wanted = 0;
		start_rescan(r);
	}
	/* a save over a quota is not tried again for a room that goes away: its edits stay in the
	 * document (MariaDB), and the next load finds them unsaved and tries then */
	if (d->save_refused && (empty || wsd_g->stopping)) {
		wsd_strlist_free(d->dirty, d->ndirty);
		d->dirty = NULL;
		d->ndirty = d->capdirty = 0;
		d->save_refused = 0;
	}
	/* the collab_files rows that wait for MariaDB; none is kept for a room that moved */
	if (r->moved)
		records_free(r);
	start_records(r, now);
	wsd_room_hold(r, WSD_HOLD_FILES, records_wait(r));
	/* files to disk once edits settle */
	if (d->ndirty && !d->save_inflight && !d->save_refused &&
	    (empty || wsd_g->stopping || now - d->last_change_ms >= (int64_t)cfg->wsd_save_delay_ms ||
	     now - d->first_dirty_ms >= SAVE_MAX_FACTOR * (int64_t)cfg->wsd_save_delay_ms))
		start_save(r);
	/* tell the API (one commit per burst) */
	if (d->commit_due_ms && !d->commit_inflight && !d->save_inflight && d->ndirty == 0 &&
	    (empty || wsd_g->stopping || now >= d->commit_due_ms))
		start_commit(r);
	return d->ndirty || d->nrecords || d->commit_due_ms;
}

/* ------------------------------------------------------------------ a room's disk state */

/* on_load: the disk state the load found: the known hashes, meta.binaryFiles, the files with unsaved edits, the quotas. */
static void disk_load(struct wsd_room *r, struct wsd_load_result *res)
{
	struct disk_room *d = disk_of(r);
	size_t i;

	d->known = res->known;
	memset(&res->known, 0, sizeof res->known);
	d->binary_json = res->binary_json;
	res->binary_json = NULL;
	d->quota_left = res->quota_left;
	for (i = 0; i < res->ndirty; i++)
		mark_dirty(r, res->dirty[i], strlen(res->dirty[i]));
}

static void disk_dispose(struct wsd_room *r)
{
	struct disk_room *d = disk_of(r);
	size_t i;

	wsd_known_dispose(&d->known);
	wsd_strlist_free(d->dirty, d->ndirty);
	wsd_strlist_free(d->changed, d->nchanged);
	wsd_strlist_free(d->editors, d->neditors);
	for (i = 0; i < d->nbases; i++) {
		free(d->bases[i].path);
		free(d->bases[i].text);
	}
	free(d->bases);
	free(d->binary_json);
	records_free(r);
	d->dirty = d->changed = d->editors = NULL;
	d->ndirty = d->nchanged = d->neditors = 0;
	d->bases = NULL;
	d->nbases = 0;
	d->binary_json = NULL;
}

static const struct wsd_part disk_part = {
	.name = "disk",
	.state_size = sizeof(struct disk_room),
	.on_load = disk_load,
	.on_update = disk_update,
	.on_edit = disk_edit,
	.on_tick = disk_tick,
	.on_dispose = disk_dispose,
};

void wsd_disk_register(void)
{
	disk_id = wsd_room_add_part(&disk_part);
}
