/*
 * fuzz_wsd.c: libFuzzer target for svc-wsd's message handling: whole
 * y-websocket messages (y-protocols sync steps 1 and 2 and updates,
 * awareness updates, query-awareness, auth) and svc's design-comment
 * messages (type 100, JSON) from two clients of one room, a writer and a
 * read-only viewer, through the daemon's own code: session.c (framing,
 * reassembly), conn.c (the send queue), room.c (batches, broadcast, the
 * parts' hooks), awareness.c,
 * comments.c, disk.c (which files an edit dirtied), proto.c and lib/yjs.
 *
 * What is replaced: the lws connection (no socket: sessions have no wsi,
 * which the daemon allows) and the store (wsd/wsd_store.h: MariaDB and the
 * disk); the store below loads an empty document with one file and answers
 * design-comment writes at once, so the rest runs as in the daemon.
 *
 * Input: a series of frames, each: byte 0 (bit 0: the viewer sends it; bit 1:
 * the frame is text, not binary; bit 2: split it in two fragments; bit 3:
 * afterwards the awareness check runs (bits 4-7) * 5 s later than now, which
 * times states out and forgets removals), a 16-bit little-endian length,
 * then that many bytes of message.
 *
 * After every frame the room's awareness must hold (issue 25, items 3 and
 * 7): at most SVC_WSD_MAX_AWARENESS_PER_ROOM entries (16 here), sorted by
 * client id without repeats, at most 8 present states per session, and
 * every present state naming no user id or its owner's; a breach traps.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* room.c's room_free() and its tables, awareness.c's states are static: include the modules. */
#include "../../wsd/awareness.c"
#include "../../wsd/room.c"
#include "../../wsd/comments.h"
#include "../../wsd/disk.h"
#include "../../wsd/session.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct wsd g;
struct wsd *wsd_g = &g;
void (*wsd_wake)(void);

/* ---- the store, answered in memory ---- */

void wsd_store_load(struct wsd_worker *w, const char *project_id, struct wsd_room *r,
		    void (*cb)(struct wsd_room *r, struct wsd_load_result *res))
{
	struct wsd_load_result res;
	static const char html[] = "<!doctype html>\n<h1>Hello</h1>\n";

	(void)w;
	(void)project_id;
	memset(&res, 0, sizeof res);
	res.quota_left = UINT64_MAX; /* no byte quota: clients' updates are integrated */
	if (svc_yjs_doc_new(&res.doc, 1) < 0 ||
	    svc_yjs_map_set_text(res.doc, "files", "index.html", 10, html, sizeof html - 1, NULL, NULL) < 0)
		abort();
	cb(r, &res);
	svc_yjs_doc_free(res.doc);
	wsd_known_dispose(&res.known);
}

void wsd_store_comment(struct wsd_worker *w, const char *project_id, struct wsd_room *r, uint64_t sess_id,
		       const char *user_id, const char *user_name, const struct wsd_comment_req *req,
		       void (*cb)(struct wsd_comment_job *j))
{
	static unsigned next;
	struct wsd_comment_job j;
	struct json_object *o = json_object_new_object();

	(void)w;
	(void)project_id;
	(void)user_name;
	memset(&j, 0, sizeof j);
	j.room = r;
	j.sess_id = sess_id;
	j.op = req->op;
	snprintf(j.user_id, sizeof j.user_id, "%s", user_id);
	snprintf(j.parent_id, sizeof j.parent_id, "%s", req->parent_id);
	if (req->op == WSD_C_ADD)
		snprintf(j.comment_id, sizeof j.comment_id, "00000000-0000-4000-8000-%012x", next++ % 4);
	else
		snprintf(j.comment_id, sizeof j.comment_id, "%s", req->comment_id);
	json_object_object_add(o, "type", json_object_new_string("design-comment:changed"));
	json_object_object_add(o, "id", json_object_new_string(j.comment_id));
	j.broadcast = strdup(json_object_to_json_string(o));
	json_object_put(o);
	j.status = (next % 3) ? 200 : 500;
	r->jobs++;
	cb(&j);
	free(j.broadcast);
}

void wsd_store_access(struct wsd_worker *w, uint64_t sess_id, const struct svc_auth_claims *who, const char *project_id,
		      void (*cb)(struct wsd_access_job *j))
{
	(void)w, (void)sess_id, (void)who, (void)project_id, (void)cb;
}

void wsd_store_recheck(struct wsd_worker *w, struct wsd_access_job *items, size_t n, void (*cb)(struct wsd_recheck_job *j))
{
	(void)w, (void)n, (void)cb;
	free(items);
}

void wsd_store_persist(const char *project_id, struct wsd_room *r, struct wsd_update *updates, size_t n,
		       void (*cb)(struct wsd_persist_job *j))
{
	(void)project_id, (void)r, (void)updates, (void)n, (void)cb;
}

void wsd_store_persist_flush(struct wsd_worker *w)
{
	(void)w;
}

void wsd_store_compact(struct wsd_worker *w, const char *project_id, struct wsd_room *r, uint64_t seq,
		       struct svc_yjs_buf *state, void (*cb)(struct wsd_compact_job *j))
{
	(void)w, (void)project_id, (void)r, (void)seq, (void)state, (void)cb;
}

void wsd_store_save(struct wsd_worker *w, const char *project_id, struct wsd_room *r, struct wsd_save_file *files,
		    size_t n, int defer_records, void (*cb)(struct wsd_save_job *j))
{
	(void)w, (void)project_id, (void)r, (void)files, (void)n, (void)defer_records, (void)cb;
}

void wsd_store_record(struct wsd_worker *w, const char *project_id, struct wsd_room *r,
		      struct wsd_file_record *records, size_t n, void (*cb)(struct wsd_record_job *j))
{
	(void)w, (void)project_id, (void)r, (void)records, (void)n, (void)cb;
}

void wsd_store_rescan(struct wsd_worker *w, const char *project_id, struct wsd_room *r, const struct wsd_known *known,
		      void (*cb)(struct wsd_rescan_job *j))
{
	(void)w, (void)project_id, (void)r, (void)known, (void)cb;
}

void wsd_store_read_base(struct wsd_worker *w, const char *project_id, struct wsd_room *r, const char *path,
			 void (*cb)(struct wsd_base_job *j))
{
	(void)w, (void)project_id, (void)r, (void)path, (void)cb;
}

void wsd_store_files_changed(struct wsd_worker *w, const char *project_id, struct wsd_room *r, char **paths,
			     size_t npaths, char **users, size_t nusers, void (*cb)(struct wsd_call_job *j))
{
	(void)w, (void)project_id, (void)r, (void)paths, (void)npaths, (void)users, (void)nusers, (void)cb;
}

void wsd_store_presence(struct wsd_worker *w, const char *project_id, struct wsd_room *r, struct json_object *users,
			void (*cb)(struct wsd_call_job *j))
{
	(void)w, (void)project_id, (void)r, (void)users, (void)cb;
}

/* ---- the input ---- */

/* The room's awareness after a frame (see the top). */
static void check_awareness(struct wsd_room *r, const struct wsd_sess *sess)
{
	const struct aw_room *ar = aw_of(r);
	size_t i, owned[2] = { 0, 0 };

	if (ar->naw > g.cfg.wsd_max_awareness_per_room)
		__builtin_trap();
	for (i = 0; i < ar->naw; i++) {
		const struct wsd_aw_state *a = &ar->aw[i];
		if (i && ar->aw[i - 1].client >= a->client)
			__builtin_trap();
		if (!a->json)
			continue;
		if (a->owner != sess[0].id && a->owner != sess[1].id)
			__builtin_trap();
		owned[a->owner == sess[1].id]++;
		if (!wsd_aw_state_user_ok((const uint8_t *)a->json, a->json_len, sess[a->owner == sess[1].id].user_id))
			__builtin_trap();
	}
	if (owned[0] > AW_MAX_PER_SESS || owned[1] > AW_MAX_PER_SESS)
		__builtin_trap();
}

static void sess_init(struct wsd_sess *s, uint64_t id, int can_write)
{
	memset(s, 0, sizeof *s);
	s->id = id;
	s->state = WSD_S_AUTH;
	snprintf(s->project_id, sizeof s->project_id, "%s", "11111111-1111-4111-8111-111111111111");
	snprintf(s->user_id, sizeof s->user_id, "2222222%u-2222-4222-8222-222222222222", (unsigned)id);
	snprintf(s->user_name, sizeof s->user_name, "user %u", (unsigned)id);
	s->token_ok = 1;
	s->can_write = can_write;
	s->can_moderate = can_write;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct wsd_sess sess[2];
	struct wsd_room *r;
	size_t off = 0;
	int i;

	if (size > 1 << 20)
		return 0;
	if (!g.cfg.wsd_max_message) {
		g.cfg.wsd_max_message = 64 * 1024;
		g.cfg.wsd_max_rooms = 4;
		g.cfg.wsd_max_conns = 16;
		g.cfg.wsd_max_conns_per_user = 4;
		g.cfg.wsd_max_rooms_per_user = 4;
		g.cfg.wsd_send_queue_max = 256 * 1024;
		g.cfg.wsd_max_file_bytes = 64 * 1024;
		g.cfg.wsd_awareness_timeout_ms = 30000;
		g.cfg.wsd_awareness_max_bytes = 1024;
		g.cfg.wsd_max_awareness_per_room = 16;
		g.cfg.wsd_keepalive_ms = 15000;
		/* the parts of the daemon's rooms but the lease: the target's rooms are always this instance's */
		wsd_disk_register();
		wsd_aw_register();
		wsd_comments_register();
	}
	sess_init(&sess[0], 1, 1);
	sess_init(&sess[1], 2, 0);
	wsd_room_join(&sess[0]);
	wsd_room_join(&sess[1]);
	r = wsd_room_find(sess[0].project_id);
	if (!r || r->state != WSD_R_READY)
		__builtin_trap();
	while (off + 3 <= size) {
		unsigned flags = data[off];
		size_t len = (size_t)data[off + 1] | (size_t)data[off + 2] << 8;
		struct wsd_sess *s = &sess[flags & 1];
		off += 3;
		if (len > size - off)
			len = size - off;
		if ((flags & 4) && len > 1) {
			wsd_sess_rx(s, data + off, len / 2, 1, 0, !(flags & 2));
			wsd_sess_rx(s, data + off + len / 2, len - len / 2, 0, 1, !(flags & 2));
		} else {
			wsd_sess_rx(s, data + off, len, 1, 1, !(flags & 2));
		}
		off += len;
		wsd_flush();
		if (flags & 8) {
			aw_of(r)->aw_checked_ms = 0;
			aw_tick(r, svc_mono_ms() + (int64_t)(flags >> 4) * 5000);
		}
		check_awareness(r, sess);
	}
	for (i = 0; i < 2; i++)
		if (sess[i].room || sess[i].state != WSD_S_AUTH)
			wsd_sess_closed(&sess[i]);
	room_free(r);
	return 0;
}
