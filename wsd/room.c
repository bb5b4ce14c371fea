/* room.c: svc-wsd's rooms: open, load, join, leave and free; clients' updates batched per event-loop round; the parts' hook tables; the tick (persistence, presence, packing, unloading). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "core/err.h"
#include "core/log.h"
#include "core/util.h"
#include "conn.h"
#include "room.h"
#include "wsd.h"
#include "wsd_store.h"

#define COMPACT_MIN_BYTES 65536  /* the update log is never compacted below this many bytes */
#define PRESENCE_DELAY_MS 300
#define PACK_INTERVAL_MS 1000    /* a room's text is checked for cold pieces this often */
#define PACK_BUDGET 262144       /* UTF-8 bytes compressed per tick in all rooms (about 1 ms) */
#define ROOM_BUCKETS 4096        /* of the room hash table */

static struct wsd_room *room_hash[ROOM_BUCKETS];
static struct wsd_room *room_list;
static struct wsd_room *flush_list;  /* rooms with an open batch */
static size_t pack_budget;           /* left in this tick */
static const struct wsd_part *parts[WSD_PARTS_MAX];
static int nparts;

/* Runs hook `hook` of every part that has it, with the arguments that follow. */
#define EACH_PART(hook, ...)                                     \
	do {                                                     \
		int part_i_;                                     \
		for (part_i_ = 0; part_i_ < nparts; part_i_++)   \
			if (parts[part_i_]->hook)                \
				parts[part_i_]->hook(__VA_ARGS__); \
	} while (0)

/* ------------------------------------------------------------------ helpers of the room files */

size_t wsd_hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ULL;

	while (*s)
		h = (h ^ (uint8_t)*s++) * 1099511628211ULL;
	return (size_t)h;
}

void wsd_strlist_add_unique(char ***list, size_t *n, size_t *cap, const char *s, size_t len)
{
	size_t i;
	char *c;

	for (i = 0; i < *n; i++)
		if (strlen((*list)[i]) == len && memcmp((*list)[i], s, len) == 0)
			return;
	WSD_GROW(*list, *cap, *n + 1);
	c = strndup(s, len);
	if (!c)
		abort();
	(*list)[(*n)++] = c;
}

void wsd_strlist_free(char **list, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(list[i]);
	free(list);
}

/* ------------------------------------------------------------------ the parts */

int wsd_room_add_part(const struct wsd_part *p)
{
	if (nparts == WSD_PARTS_MAX)
		abort();
	parts[nparts] = p;
	return nparts++;
}

/* ------------------------------------------------------------------ open and free */

struct wsd_room *wsd_room_find(const char *id)
{
	struct wsd_room *r;

	for (r = room_hash[wsd_hash_str(id) % ROOM_BUCKETS]; r; r = r->hnext)
		if (strcmp(r->project_id, id) == 0)
			return r;
	return NULL;
}

static void room_free(struct wsd_room *r)
{
	size_t i;
	struct wsd_room **pp;

	for (pp = &room_hash[wsd_hash_str(r->project_id) % ROOM_BUCKETS]; *pp; pp = &(*pp)->hnext)
		if (*pp == r) {
			*pp = r->hnext;
			break;
		}
	if (r->prev)
		r->prev->next = r->next;
	else
		room_list = r->next;
	if (r->next)
		r->next->prev = r->prev;
	if (r->in_flush) {
		for (pp = &flush_list; *pp; pp = &(*pp)->flush_next)
			if (*pp == r) {
				*pp = r->flush_next;
				break;
			}
	}
	EACH_PART(on_dispose, r);
	for (i = 0; i < (size_t)nparts; i++)
		free(r->part[i]);
	svc_yjs_doc_free(r->doc);
	free(r->sess);
	for (i = 0; i < r->npending; i++)
		free(r->pending[i].data);
	free(r->pending);
	free(r);
	wsd_g->nrooms--;
	wsd_g->trim_wanted = 1;
}

static void room_load_done(struct wsd_room *r, struct wsd_load_result *res);

static struct wsd_room *room_create(const char *id)
{
	struct wsd_room *r = calloc(1, sizeof *r);
	size_t h = wsd_hash_str(id) % ROOM_BUCKETS;
	int i;

	if (!r)
		abort();
	for (i = 0; i < nparts; i++) {
		r->part[i] = calloc(1, parts[i]->state_size ? parts[i]->state_size : 1);
		if (!r->part[i])
			abort();
	}
	snprintf(r->project_id, sizeof r->project_id, "%s", id);
	r->state = WSD_R_LOADING;
	r->hnext = room_hash[h];
	room_hash[h] = r;
	r->next = room_list;
	if (room_list)
		room_list->prev = r;
	room_list = r;
	wsd_g->nrooms++;
	r->jobs++;
	wsd_store_load(&wsd_g->db_worker, r->project_id, r, room_load_done);
	return r;
}

/* ------------------------------------------------------------------ updates: batches, broadcast, server edits */

void wsd_room_broadcast(struct wsd_room *r, struct wsd_msg *m)
{
	size_t i;

	for (i = 0; i < r->nsess; i++)
		if (r->sess[i]->state == WSD_S_OPEN)
			wsd_sess_send(r->sess[i], m);
	wsd_msg_release_if_unused(m);
}

/* The y-protocols sync message [0, sub, varUint8Array(data)] (sync.js), not queued anywhere yet. */
static struct wsd_msg *sync_msg(uint64_t sub, const struct svc_yjs_buf *data)
{
	struct svc_yjs_buf b = { 0 };
	struct wsd_msg *m;

	wsd_write_varuint(&b, WSD_MSG_SYNC);
	wsd_write_varuint(&b, sub);
	wsd_write_varbytes(&b, data->data, data->len);
	m = wsd_msg_new(b.data, b.len);
	svc_yjs_buf_dispose(&b);
	return m;
}

static void sess_send_sync(struct wsd_sess *s, uint64_t sub, const struct svc_yjs_buf *data)
{
	struct wsd_msg *m = sync_msg(sub, data);

	wsd_sess_send(s, m);
	wsd_msg_release_if_unused(m);
}

/* A newly integrated update: broadcast [0, 2, update] to the room (sender included) and queue it for MariaDB. */
static void room_integrated(struct wsd_room *r, const struct svc_yjs_buf *update)
{
	struct wsd_update *u;

	wsd_room_broadcast(r, sync_msg(WSD_SYNC_UPDATE, update));

	WSD_GROW(r->pending, r->cappending, r->npending + 1);
	u = &r->pending[r->npending++];
	u->seq = r->next_seq++;
	u->len = update->len;
	u->data = malloc(update->len ? update->len : 1);
	if (!u->data)
		abort();
	memcpy(u->data, update->data, update->len);
}

/* A server-side edit (disk -> document, meta): integrated, broadcast and persisted, but not "dirty". */
void wsd_room_server_edit(struct wsd_room *r, struct svc_yjs_buf *update)
{
	if (update->len) {
		room_integrated(r, update);
		r->edited = 1;
	}
	update->len = 0;
}

/*
 * Clients' updates are integrated in one remote batch per room and event-loop
 * iteration (lib/yjs svc_yjs_batch_*): every update read in one poll round
 * joins it, and wsd_flush() commits it once the round is done, so the room
 * broadcasts (and persists) one update per round instead of one per message.
 * At low rates a batch holds one update and nothing changes; under load the
 * batches grow with the load, and the fan-out costs one frame per client per
 * round instead of one per message (yjs joins nested transactions the same
 * way, Transaction.js transact).
 */
static void room_batch_open(struct wsd_room *r)
{
	if (svc_yjs_batch_open(r->doc))
		return;
	if (svc_yjs_batch_begin(r->doc) < 0)
		abort(); /* nothing else keeps a transaction open across calls */
	if (!r->in_flush) {
		r->in_flush = 1;
		r->flush_next = flush_list;
		flush_list = r;
	}
}

/* Commits the room's open batch: the parts' on_edit (unsaved files), then the update is broadcast and queued. Before any local edit. */
void wsd_room_flush(struct wsd_room *r)
{
	struct svc_yjs_buf out = { 0 };
	struct svc_yjs_report rep = { 0 };

	if (!svc_yjs_batch_open(r->doc))
		return;
	svc_yjs_batch_commit(r->doc, &out, &rep);
	EACH_PART(on_edit, r, &rep);
	if (out.len)
		room_integrated(r, &out);
	r->edited = 1;
	svc_yjs_buf_dispose(&out);
	svc_yjs_report_dispose(&rep);
}

int wsd_room_sync_rx(struct wsd_sess *s, uint64_t sub, const uint8_t *payload, size_t len)
{
	struct wsd_room *r = s->room;
	int err, changed = 0, i;

	if (sub == WSD_SYNC_STEP1) {
		struct svc_yjs_buf up = { 0 };
		err = svc_yjs_encode_state(r->doc, payload, len, &up, NULL);
		if (err == 0)
			sess_send_sync(s, WSD_SYNC_STEP2, &up);
		svc_yjs_buf_dispose(&up);
		return err;
	}
	if (sub != WSD_SYNC_STEP2 && sub != WSD_SYNC_UPDATE)
		return SVC_E_VALIDATION;
	if (!s->can_write)
		return 0; /* read-only: refused, not applied (y-protocols PROTOCOL.md) */
	for (i = 0; i < nparts; i++)
		if (parts[i]->on_update && !parts[i]->on_update(s, len, 0))
			return 0; /* refused by a part (the byte quotas), the sender told why */
	room_batch_open(r);
	err = svc_yjs_batch_apply(r->doc, payload, len, &changed, NULL);
	if (err == 0 && changed)
		EACH_PART(on_update, s, len, 1);
	return err;
}

int wsd_room_message(struct wsd_sess *s, uint64_t type, struct wsd_reader *rd)
{
	int i, err;

	for (i = 0; i < nparts; i++)
		if (parts[i]->on_message && (err = parts[i]->on_message(s, type, rd)) != WSD_PART_PASS)
			return err;
	return WSD_PART_PASS;
}

void wsd_flush(void)
{
	while (flush_list) {
		struct wsd_room *r = flush_list;
		flush_list = r->flush_next;
		r->in_flush = 0;
		wsd_room_flush(r);
	}
}

/* ------------------------------------------------------------------ joining and leaving */

void wsd_room_presence_soon(struct wsd_room *r)
{
	r->presence_due_ms = r->people_due_ms = svc_mono_ms() + PRESENCE_DELAY_MS;
}

/* The room is ready: step 1, then the parts' welcome (awareness states, open comments); then the client may talk. */
static void room_welcome(struct wsd_room *r, struct wsd_sess *s)
{
	struct svc_yjs_buf sv = { 0 };

	s->state = WSD_S_OPEN;
	svc_yjs_state_vector(r->doc, &sv);
	sess_send_sync(s, WSD_SYNC_STEP1, &sv);
	svc_yjs_buf_dispose(&sv);
	EACH_PART(on_join, r, s);
	wsd_sess_read(s, 1);
	wsd_room_presence_soon(r);
}

static void room_load_done(struct wsd_room *r, struct wsd_load_result *res)
{
	size_t i;

	r->jobs--;
	if (res->error == SVC_E_CONFLICT) {
		/* another instance serves the room (its lease): the clients go there */
		r->state = WSD_R_FAILED;
		wsd_room_moved(r, "another instance holds its lease");
		return;
	}
	if (res->error < 0) {
		svc_log_error("project %s: document could not be loaded (%s)", r->project_id, svc_err_code(res->error));
		r->state = WSD_R_FAILED;
		for (i = 0; i < r->nsess; i++)
			wsd_sess_close(r->sess[i], 1011, "document unavailable");
		return;
	}
	r->doc = res->doc;
	res->doc = NULL;
	wsd_g->trim_wanted = 1;
	r->next_seq = res->next_seq;
	r->since_snapshot = res->since_snapshot;
	r->log_bytes = res->log_bytes;
	r->snapshot_bytes = res->snapshot_bytes;
	EACH_PART(on_load, r, res);
	r->state = WSD_R_READY;
	for (i = 0; i < r->nsess; i++)
		if (r->sess[i]->state == WSD_S_WAIT_ROOM)
			room_welcome(r, r->sess[i]);
}

void wsd_room_moved(struct wsd_room *r, const char *why)
{
	size_t i;

	if (r->moved)
		return;
	r->moved = 1;
	svc_log_info("project %s: room given up (%s); its clients reconnect", r->project_id, why);
	/* its unsaved updates are not written any more (the next instance's log may use their numbers):
	 * the clients hold them and send them again to the instance they reconnect to */
	for (i = 0; i < r->npending; i++)
		free(r->pending[i].data);
	r->npending = 0;
	for (i = 0; i < r->nsess; i++)
		wsd_sess_close(r->sess[i], WSD_CLOSE_MOVED, "room moved, reconnect");
}

void wsd_room_hold(struct wsd_room *r, unsigned why, int on)
{
	if (on)
		r->hold |= why;
	else
		r->hold &= ~why;
}

static void room_add_sess(struct wsd_room *r, struct wsd_sess *s)
{
	WSD_GROW(r->sess, r->capsess, r->nsess + 1);
	r->sess[r->nsess++] = s;
	s->room = r;
}

void wsd_room_join(struct wsd_sess *s)
{
	struct wsd_room *r = wsd_room_find(s->project_id);

	if (!r) {
		if (wsd_g->nrooms >= wsd_g->cfg.wsd_max_rooms || wsd_g->stopping) {
			wsd_sess_deny(s, "permission-denied: server busy, try again later");
			return;
		}
		r = room_create(s->project_id);
	}
	if (r->moved) {
		wsd_sess_close(s, WSD_CLOSE_MOVED, "room moved, reconnect");
		return;
	}
	if (r->state == WSD_R_FAILED) {
		wsd_sess_close(s, 1011, "document unavailable");
		return;
	}
	room_add_sess(r, s);
	s->state = WSD_S_WAIT_ROOM;
	if (r->state == WSD_R_READY)
		room_welcome(r, s);
}

void wsd_room_leave(struct wsd_room *r, struct wsd_sess *s)
{
	size_t i;

	for (i = 0; i < r->nsess; i++)
		if (r->sess[i] == s) {
			r->sess[i] = r->sess[--r->nsess];
			break;
		}
	EACH_PART(on_leave, r, s);
	wsd_room_presence_soon(r);
}

/* ------------------------------------------------------------------ the tick */

static void persist_done(struct wsd_persist_job *j)
{
	struct wsd_room *r = j->room;
	size_t i;

	r->jobs--;
	wsd_g->trim_wanted = 1;
	if (j->error == 0)
		return;
	/* MariaDB failed: put the updates back in front, they go again on a later tick */
	r->persist_fail_ms = svc_mono_ms();
	WSD_GROW(r->pending, r->cappending, r->npending + j->n);
	memmove(r->pending + j->n, r->pending, r->npending * sizeof *r->pending);
	for (i = 0; i < j->n; i++)
		r->pending[i] = j->updates[i];
	r->npending += j->n;
	j->n = 0;
}

static void compact_done(struct wsd_compact_job *j)
{
	struct wsd_room *r = j->room;

	r->jobs--;
	if (j->error < 0) {
		/* try again after the next update */
		r->since_snapshot = wsd_g->cfg.wsd_compact_updates;
		r->log_bytes = r->snapshot_bytes;
	}
}

static void presence_done(struct wsd_call_job *j)
{
	struct wsd_room *r = j->room;

	r->jobs--;
	r->presence_inflight = 0;
}

/* Who is in room r, one entry per user: [{id, name, canWrite}] (a new array, the caller's). */
static struct json_object *room_people(struct wsd_room *r)
{
	struct json_object *users = json_object_new_array();
	size_t i, j;

	for (i = 0; i < r->nsess; i++) {
		struct wsd_sess *s = r->sess[i];
		int seen = 0;
		struct json_object *u;
		if (s->state != WSD_S_OPEN)
			continue;
		for (j = 0; j < i; j++)
			if (r->sess[j]->state == WSD_S_OPEN && strcmp(r->sess[j]->user_id, s->user_id) == 0)
				seen = 1;
		if (seen)
			continue;
		u = json_object_new_object();
		json_object_object_add(u, "id", json_object_new_string(s->user_id));
		json_object_object_add(u, "name", json_object_new_string(s->user_name));
		json_object_object_add(u, "canWrite", json_object_new_boolean(s->can_write));
		json_object_array_add(users, u);
	}
	return users;
}

static void start_presence(struct wsd_room *r)
{
	r->presence_due_ms = 0;
	r->presence_inflight = 1;
	r->jobs++;
	wsd_store_presence(&wsd_g->io_worker, r->project_id, r, room_people(r), presence_done);
}

void wsd_room_people_send(struct wsd_room *r, struct wsd_sess *only)
{
	struct json_object *o = json_object_new_object();
	struct svc_yjs_buf b = { 0 };
	struct wsd_msg *m;
	const char *text;
	size_t i;

	json_object_object_add(o, "users", room_people(r));
	text = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
	wsd_write_varuint(&b, WSD_MSG_PEOPLE);
	wsd_write_varbytes(&b, text, strlen(text));
	m = wsd_msg_new(b.data, b.len);
	svc_yjs_buf_dispose(&b);
	json_object_put(o);
	if (only) {
		wsd_sess_send(only, m);
	} else {
		for (i = 0; i < r->nsess; i++)
			if (r->sess[i]->state == WSD_S_OPEN && r->sess[i]->want_people)
				wsd_sess_send(r->sess[i], m);
	}
	wsd_msg_release_if_unused(m);
}

/*
 * Keeps the room's cold text compressed (lib/yjs svc_yjs_doc_pack, a
 * second-chance pass: a piece nobody split, merged or inserted for one
 * interval loses its hot mark, after another it is packed). A pass may stop
 * on the tick's budget and goes on in the next tick.
 */
static void room_pack(struct wsd_room *r, int64_t now)
{
	size_t budget = pack_budget, done;

	if (!wsd_g->cfg.wsd_pack_min_bytes || budget == 0 || now - r->pack_ms < PACK_INTERVAL_MS)
		return;
	done = svc_yjs_doc_pack(r->doc, (size_t)wsd_g->cfg.wsd_pack_min_bytes, budget);
	pack_budget = done >= budget ? 0 : budget - done;
	if (done)
		wsd_g->trim_wanted = 1;
	if (done < budget)
		r->pack_ms = now; /* the pass is complete */
}

static int room_idle(struct wsd_room *r)
{
	return r->nsess == 0 && r->state != WSD_R_LOADING && r->npending == 0 && r->busy == 0 && r->jobs == 0 &&
	       !r->presence_due_ms;
}

/* The parts' tick: which of them still have work. */
static void parts_tick(struct wsd_room *r, int64_t now)
{
	int i;

	r->busy = 0;
	r->edited = 0;
	for (i = 0; i < nparts; i++)
		if (parts[i]->on_tick && parts[i]->on_tick(r, now))
			r->busy |= 1u << i;
}

static void room_tick(struct wsd_room *r, int64_t now)
{
	const struct svc_config *cfg = &wsd_g->cfg;

	if (r->state == WSD_R_FAILED) {
		if (r->nsess == 0 && r->jobs == 0)
			room_free(r);
		return;
	}
	if (r->state != WSD_R_READY)
		return;
	wsd_room_flush(r);
	/* 1. the parts: the lease renewed (lease.c), files to disk once edits settle and the API told
	 * (disk.c), awareness relayed and timed out (awareness.c) */
	parts_tick(r, now);
	/*
	 * 2. updates to MariaDB, batched (at most one tick late, every room in
	 * one transaction, wsd_tick() flushes; a failed batch waits a second;
	 * while a part holds them, wsd_room_hold(): the lease not known to be
	 * ours, rows of collab_files waiting for MariaDB, they wait).
	 * A snapshot is written once the log since the last one holds as many
	 * bytes as that snapshot (so loading reads at most twice the state) and
	 * at least SVC_WSD_COMPACT_UPDATES updates.
	 */
	if (r->npending && now - r->persist_fail_ms > 1000 && !r->hold && !r->moved) {
		size_t i;
		for (i = 0; i < r->npending; i++)
			r->log_bytes += r->pending[i].len;
		r->jobs++;
		wsd_store_persist(r->project_id, r, r->pending, r->npending, persist_done);
		r->since_snapshot += r->npending;
		r->pending = NULL;
		r->npending = r->cappending = 0;
		if (r->since_snapshot >= cfg->wsd_compact_updates &&
		    r->log_bytes >= (r->snapshot_bytes > COMPACT_MIN_BYTES ? r->snapshot_bytes : COMPACT_MIN_BYTES)) {
			struct svc_yjs_buf state = { 0 };
			svc_yjs_encode_state(r->doc, NULL, 0, &state, NULL);
			r->since_snapshot = 0;
			r->log_bytes = 0;
			r->snapshot_bytes = state.len;
			r->jobs++;
			wsd_store_compact(&wsd_g->db_worker, r->project_id, r, r->next_seq - 1, &state, compact_done);
		}
	}
	/* 3. presence: to the sockets that asked for it, and to the API */
	if (r->people_due_ms && now >= r->people_due_ms) {
		r->people_due_ms = 0;
		wsd_room_people_send(r, NULL);
	}
	if (r->presence_due_ms && !r->presence_inflight && now >= r->presence_due_ms)
		start_presence(r);
	/* 4. cold text compressed (a budget per tick for all rooms, so the loop never stalls on it) */
	room_pack(r, now);
	/* 5. unload an empty room once everything is stored */
	if (room_idle(r))
		room_free(r);
}

/*
 * y-websocket clients reconnect after 30 s without a message: a connection
 * sent nothing for SVC_WSD_KEEPALIVE_MS (15 s) gets an empty awareness update.
 */
static void keepalive(int64_t now)
{
	static int64_t last;
	const int64_t interval = (int64_t)wsd_g->cfg.wsd_keepalive_ms;
	struct wsd_room *r;
	static const uint8_t ka[] = { WSD_MSG_AWARENESS, 0x01, 0x00 };

	if (now - last < (interval / 4 < 1000 ? interval / 4 : 1000))
		return;
	last = now;
	for (r = room_list; r; r = r->next) {
		size_t i;
		for (i = 0; i < r->nsess; i++) {
			struct wsd_sess *s = r->sess[i];
			if (s->state == WSD_S_OPEN && s->q_n == 0 && now - s->last_tx_ms >= interval) {
				/* an empty awareness update: y-websocket counts it as traffic and ignores it */
				wsd_sess_send_bytes(s, ka, sizeof ka);
				s->last_tx_ms = now;
			}
		}
	}
}

void wsd_tick(void)
{
	int64_t now = svc_mono_ms();
	struct wsd_room *r, *next;

	pack_budget = PACK_BUDGET;
	for (r = room_list; r; r = next) {
		next = r->next;
		room_tick(r, now);
	}
	wsd_store_persist_flush(&wsd_g->db_worker);
	keepalive(now);
}

int wsd_all_clean(void)
{
	struct wsd_room *r;

	for (r = room_list; r; r = r->next)
		if (r->npending || r->busy || r->edited || r->jobs || r->state == WSD_R_LOADING)
			return 0;
	return 1;
}

void wsd_text_stats(struct svc_yjs_mem *sum)
{
	struct wsd_room *r;

	memset(sum, 0, sizeof *sum);
	for (r = room_list; r; r = r->next) {
		struct svc_yjs_mem m;
		if (!r->doc)
			continue;
		svc_yjs_doc_memory(r->doc, &m);
		sum->structs += m.structs;
		sum->string_items += m.string_items;
		sum->string_bytes += m.string_bytes;
		sum->string_heap += m.string_heap;
		sum->packed_items += m.packed_items;
		sum->packed_raw += m.packed_raw;
		sum->packed_bytes += m.packed_bytes;
		sum->hot_items += m.hot_items;
	}
}
