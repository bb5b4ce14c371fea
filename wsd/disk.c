/* disk.c: svc-wsd's files of a room: unsaved edits saved once they settle, disk changes merged into the document (merge bases), the files-changed call. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "core/err.h"
#include "core/fsx.h"
#include "core/log.h"
#include "core/util.h"
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

/* ------------------------------------------------------------------ merge bases */

static struct wsd_base_text *base_find(struct wsd_room *r, const char *path)
{
	size_t i;

	for (i = 0; i < r->nbases; i++)
		if (strcmp(r->bases[i].path, path) == 0)
			return &r->bases[i];
	return NULL;
}

static void base_drop(struct wsd_room *r, const char *path)
{
	struct wsd_base_text *b = base_find(r, path);

	if (!b)
		return;
	free(b->path);
	free(b->text);
	*b = r->bases[--r->nbases];
}

/* Appends a base of `path` without text. */
static struct wsd_base_text *base_add(struct wsd_room *r, const char *path)
{
	struct wsd_base_text *b;

	WSD_GROW(r->bases, r->capbases, r->nbases + 1);
	b = &r->bases[r->nbases++];
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
	struct wsd_base_text *b;
	const char *known;

	r->jobs--;
	b = base_find(r, j->path);
	if (!b || b->text)
		return; /* dropped meanwhile, or a save set it */
	b->reading = 0;
	known = wsd_known_get(&r->known, j->path);
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
	char path[SVC_FSX_PATH_MAX + 1];
	struct wsd_base_text *b;

	if (key_len > SVC_FSX_PATH_MAX || memchr(key, '\0', key_len))
		return;
	memcpy(path, key, key_len);
	path[key_len] = '\0';
	if (base_find(r, path) || !wsd_known_get(&r->known, path))
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
 * (wsd_disk_records_wait) and later saves leave their rows here too, so that rows go in in order.
 */
static void record_due(struct wsd_room *r, const char *path, const char *hash)
{
	struct wsd_file_record *rec = NULL;
	size_t i;

	for (i = 0; i < r->nrecords && !rec; i++)
		if (strcmp(r->records[i].path, path) == 0)
			rec = &r->records[i];
	if (!rec) {
		WSD_GROW(r->records, r->caprecords, r->nrecords + 1);
		rec = &r->records[r->nrecords++];
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
	size_t i, k;

	r->jobs--;
	r->records_inflight = 0;
	if (j->error == 0)
		return;
	/* MariaDB failed: due again, unless a newer row of the same file is due meanwhile */
	r->records_fail_ms = svc_mono_ms();
	for (i = 0; i < j->n; i++) {
		int newer = 0;
		for (k = 0; k < r->nrecords && !newer; k++)
			newer = strcmp(r->records[k].path, j->records[i].path) == 0;
		if (!newer)
			record_due(r, j->records[i].path, j->records[i].del ? NULL : j->records[i].hash);
	}
}

static void start_records(struct wsd_room *r, int64_t now)
{
	if (!r->nrecords || r->records_inflight || now - r->records_fail_ms < 1000 || !wsd_lease_held(r, now))
		return;
	r->records_inflight = 1;
	r->jobs++;
	wsd_store_record(&wsd_g->db_worker, r->project_id, r, r->records, r->nrecords, records_done);
	r->records = NULL;
	r->nrecords = r->caprecords = 0;
}

int wsd_disk_records_wait(const struct wsd_room *r)
{
	return r->nrecords || r->records_inflight;
}

static void records_free(struct wsd_room *r)
{
	size_t i;

	for (i = 0; i < r->nrecords; i++)
		free(r->records[i].path);
	free(r->records);
	r->records = NULL;
	r->nrecords = r->caprecords = 0;
}

/* ------------------------------------------------------------------ document -> disk */

static void mark_dirty(struct wsd_room *r, const char *key, size_t key_len)
{
	int64_t now = svc_mono_ms();

	if (r->ndirty == 0)
		r->first_dirty_ms = now;
	wsd_strlist_add_unique(&r->dirty, &r->ndirty, &r->capdirty, key, key_len);
	r->last_change_ms = now;
	r->save_refused = 0;
}

void wsd_disk_edited(struct wsd_room *r, const struct svc_yjs_report *rep)
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
	struct wsd_base_text *b = base_find(r, f->path);
	const char *known = wsd_known_get(&r->known, f->path);
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
	struct svc_yjs_buf up = { 0 };
	size_t i;

	wsd_room_flush(r);
	for (i = 0; i < n; i++) {
		struct wsd_disk_file *f = &files[i];
		const char *known;
		int err;
		if (f->deleted) {
			err = svc_yjs_map_delete(r->doc, "files", f->path, strlen(f->path), &up, NULL);
			wsd_known_del(&r->known, f->path);
			record_due(r, f->path, NULL);
			base_drop(r, f->path);
		} else if (f->content) {
			known = wsd_known_get(&r->known, f->path);
			if (known && strcmp(known, f->hash) == 0)
				continue; /* already in the document (a save or an earlier scan took it) */
			err = disk_merge(r, f, &up);
			wsd_known_set(&r->known, f->path, f->hash);
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

	r->jobs--;
	if (j->error < 0 || r->state != WSD_R_READY)
		return;
	apply_disk_files(r, j->files, j->nfiles);
	/* meta.binaryFiles follows the disk */
	if (j->binary_json && (!r->binary_json || strcmp(r->binary_json, j->binary_json) != 0)) {
		struct svc_yjs_buf up = { 0 };
		wsd_room_flush(r);
		if (svc_yjs_map_set_json(r->doc, "meta", "binaryFiles", 11, j->binary_json, strlen(j->binary_json), &up,
					 NULL) == 0)
			wsd_room_server_edit(r, &up);
		svc_yjs_buf_dispose(&up);
		free(r->binary_json);
		r->binary_json = j->binary_json;
		j->binary_json = NULL;
	}
}

int wsd_room_disk_changed(const char *project_id)
{
	struct wsd_room *r = wsd_room_find(project_id);

	if (!r)
		return SVC_E_NOT_FOUND;
	if (r->state == WSD_R_LOADING) {
		r->rescan_wanted = 1;
		return 0;
	}
	if (r->state != WSD_R_READY)
		return SVC_E_NOT_FOUND;
	r->jobs++;
	wsd_store_rescan(&wsd_g->io_worker, r->project_id, r, &r->known, rescan_done);
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

int wsd_disk_quota_allows(struct wsd_sess *s, size_t len)
{
	struct wsd_room *r = s->room;
	char msg[256];

	if (r->quota_left == UINT64_MAX || len <= r->quota_left)
		return 1;
	snprintf(msg, sizeof msg,
		 "This edit (%zu bytes) was not kept: the project's files would pass the project's or the workspace's "
		 "storage quota (%llu bytes left).", len, (unsigned long long)r->quota_left);
	svc_log_info("project %s: an update of %zu bytes refused, over a byte quota (%llu left)", r->project_id, len,
		     (unsigned long long)r->quota_left);
	quota_error(s, msg);
	return 0;
}

void wsd_disk_quota_used(struct wsd_room *r, size_t len)
{
	if (r->quota_left != UINT64_MAX)
		r->quota_left = len < r->quota_left ? r->quota_left - len : 0;
}

/* ------------------------------------------------------------------ saves and the files-changed call */

static void save_done(struct wsd_save_job *j)
{
	struct wsd_room *r = j->room;
	size_t i, written = 0;

	r->jobs--;
	r->save_inflight = 0;
	wsd_g->trim_wanted = 1;
	if (j->have_quota)
		r->quota_left = j->quota_left;
	if (j->error == SVC_E_TOO_LARGE) {
		/* over a quota (another writer took the room meanwhile): nothing written, the files stay
		 * dirty until the next edit, no update adds bytes, and everyone in the room is told */
		for (i = 0; i < j->nfiles; i++)
			wsd_strlist_add_unique(&r->dirty, &r->ndirty, &r->capdirty, j->files[i].path,
					   strlen(j->files[i].path));
		r->save_refused = 1;
		r->quota_left = 0;
		svc_log_info("project %s: a save refused: %s", r->project_id, j->why);
		for (i = 0; i < r->nsess; i++)
			quota_error(r->sess[i], j->why);
		return;
	}
	if (j->error < 0) {
		/* keep the files dirty: the next tick tries again */
		for (i = 0; i < j->nfiles; i++)
			wsd_strlist_add_unique(&r->dirty, &r->ndirty, &r->capdirty, j->files[i].path,
					   strlen(j->files[i].path));
		r->first_dirty_ms = r->last_change_ms = svc_mono_ms();
		return;
	}
	for (i = 0; i < j->nfiles; i++) {
		struct wsd_save_file *f = &j->files[i];
		if (f->outcome == WSD_SAVE_WRITTEN || f->outcome == WSD_SAVE_UNCHANGED) {
			size_t k;
			int dirty = 0;
			wsd_known_set(&r->known, f->path, f->new_hash);
			if (!f->recorded)
				record_due(r, f->path, f->new_hash);
			if (f->outcome == WSD_SAVE_WRITTEN) {
				wsd_strlist_add_unique(&r->changed, &r->nchanged, &r->capchanged, f->path, strlen(f->path));
				written++;
			}
			/* edits that came during the save: what was written is their merge base */
			for (k = 0; k < r->ndirty && !dirty; k++)
				dirty = strcmp(r->dirty[k], f->path) == 0;
			if (dirty) {
				base_set(r, f->path, f->content, f->len, f->new_hash);
				f->content = NULL;
			} else {
				base_drop(r, f->path);
			}
		} else if (f->outcome == WSD_SAVE_DELETED) {
			wsd_known_del(&r->known, f->path);
			if (!f->recorded)
				record_due(r, f->path, NULL);
			base_drop(r, f->path);
			wsd_strlist_add_unique(&r->changed, &r->nchanged, &r->capchanged, f->path, strlen(f->path));
			written++;
		}
	}
	/* files someone else changed on disk meanwhile: the disk wins */
	apply_disk_files(r, j->conflicts, j->nconflicts);
	if (written) {
		int64_t now = svc_mono_ms();
		set_last_saved(r);
		if (!r->commit_due_ms)
			r->commit_first_ms = now;
		r->commit_due_ms = now + (int64_t)wsd_g->cfg.wsd_commit_delay_ms;
		if (r->commit_due_ms - r->commit_first_ms > COMMIT_MAX_MS)
			r->commit_due_ms = r->commit_first_ms + COMMIT_MAX_MS;
	}
}

static void commit_done(struct wsd_call_job *j)
{
	struct wsd_room *r = j->room;

	r->jobs--;
	r->commit_inflight = 0;
	if (j->status >= 200 && j->status <= 299) {
		r->commit_failures = 0;
		return;
	}
	svc_log_warn("project %s: files-changed call failed (status %ld)", r->project_id, j->status);
	if (++r->commit_failures < 5) {
		size_t i;
		for (i = 0; i < j->npaths; i++)
			wsd_strlist_add_unique(&r->changed, &r->nchanged, &r->capchanged, j->paths[i], strlen(j->paths[i]));
		for (i = 0; i < j->nusers; i++)
			wsd_strlist_add_unique(&r->editors, &r->neditors, &r->capeditors, j->users[i], strlen(j->users[i]));
		r->commit_first_ms = svc_mono_ms();
		r->commit_due_ms = svc_mono_ms() + 5000;
	}
}

static void start_save(struct wsd_room *r)
{
	struct wsd_save_file *files = calloc(r->ndirty ? r->ndirty : 1, sizeof *files);
	size_t i, n = 0;

	if (!files)
		abort();
	for (i = 0; i < r->ndirty; i++) {
		char norm[SVC_FSX_PATH_MAX + 1];
		struct svc_yjs_buf text = { 0 };
		struct wsd_save_file *f = &files[n];
		const char *known;
		/* names the disk cannot hold are never written (they stay in the document only) */
		if (svc_fsx_check_path(r->dirty[i], norm) < 0 || strcmp(norm, r->dirty[i]) != 0) {
			free(r->dirty[i]);
			continue;
		}
		f->path = r->dirty[i];
		known = wsd_known_get(&r->known, f->path);
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
	free(r->dirty);
	r->dirty = NULL;
	r->ndirty = r->capdirty = 0;
	if (n == 0) {
		free(files);
		return;
	}
	r->save_inflight = 1;
	r->jobs++;
	wsd_store_save(&wsd_g->io_worker, r->project_id, r, files, n, wsd_disk_records_wait(r), save_done);
}

static void start_commit(struct wsd_room *r)
{
	r->commit_due_ms = 0;
	if (r->nchanged == 0)
		return;
	r->commit_inflight = 1;
	r->jobs++;
	wsd_store_files_changed(&wsd_g->io_worker, r->project_id, r, r->changed, r->nchanged, r->editors,
				r->neditors, commit_done);
	r->changed = NULL;
	r->nchanged = r->capchanged = 0;
	r->editors = NULL;
	r->neditors = r->capeditors = 0;
}

void wsd_disk_tick(struct wsd_room *r, int64_t now, int empty)
{
	const struct svc_config *cfg = &wsd_g->cfg;

	/* a save over a quota is not tried again for a room that goes away: its edits stay in the
	 * document (MariaDB), and the next load finds them unsaved and tries then */
	if (r->save_refused && (empty || wsd_g->stopping)) {
		wsd_strlist_free(r->dirty, r->ndirty);
		r->dirty = NULL;
		r->ndirty = r->capdirty = 0;
		r->save_refused = 0;
	}
	/* the collab_files rows that wait for MariaDB; none is kept for a room that moved */
	if (r->lease_lost)
		records_free(r);
	start_records(r, now);
	/* files to disk once edits settle */
	if (r->ndirty && !r->save_inflight && !r->save_refused &&
	    (empty || wsd_g->stopping || now - r->last_change_ms >= (int64_t)cfg->wsd_save_delay_ms ||
	     now - r->first_dirty_ms >= SAVE_MAX_FACTOR * (int64_t)cfg->wsd_save_delay_ms))
		start_save(r);
	/* tell the API (one commit per burst) */
	if (r->commit_due_ms && !r->commit_inflight && !r->save_inflight && r->ndirty == 0 &&
	    (empty || wsd_g->stopping || now >= r->commit_due_ms))
		start_commit(r);
}

/* ------------------------------------------------------------------ a room's disk state */

void wsd_disk_load(struct wsd_room *r, struct wsd_load_result *res)
{
	size_t i;

	r->known = res->known;
	memset(&res->known, 0, sizeof res->known);
	r->binary_json = res->binary_json;
	res->binary_json = NULL;
	r->quota_left = res->quota_left;
	for (i = 0; i < res->ndirty; i++)
		mark_dirty(r, res->dirty[i], strlen(res->dirty[i]));
}

void wsd_disk_dispose(struct wsd_room *r)
{
	size_t i;

	wsd_known_dispose(&r->known);
	wsd_strlist_free(r->dirty, r->ndirty);
	wsd_strlist_free(r->changed, r->nchanged);
	wsd_strlist_free(r->editors, r->neditors);
	for (i = 0; i < r->nbases; i++) {
		free(r->bases[i].path);
		free(r->bases[i].text);
	}
	free(r->bases);
	free(r->binary_json);
	records_free(r);
	r->dirty = r->changed = r->editors = NULL;
	r->ndirty = r->nchanged = r->neditors = 0;
	r->bases = NULL;
	r->nbases = 0;
	r->binary_json = NULL;
}
