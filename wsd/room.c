/* room.c: svc-wsd's rooms: sessions, y-protocols sync and awareness, design comments, persistence and disk sync scheduling. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>
#include <libwebsockets.h>

#include "core/err.h"
#include "core/fsx.h"
#include "core/json.h"
#include "core/log.h"
#include "core/util.h"
#include "wsd.h"
#include "wsd_store.h"

#define HASH_BUCKETS 4096
#define AW_MAX_ENTRIES 4096
#define AW_CHECK_MS 3000         /* awareness.js checks every outdatedTimeout / 10 */
#define CLOSE_KILL_S 10          /* a close frame that cannot be sent this long: the socket is dropped */
#define SAVE_MAX_FACTOR 10       /* during continuous edits, save at least every 10 x the delay */
#define WRITE_BURST 32           /* messages sent per writeable callback at most */
#define COMPACT_MIN_BYTES 65536  /* the update log is never compacted below this many bytes */
#define COMMIT_MAX_MS 30000      /* during continuous saves, call files-changed at least this often */
#define PRESENCE_DELAY_MS 300
#define PACK_INTERVAL_MS 1000    /* a room's text is checked for cold pieces this often */
#define PACK_BUDGET 262144       /* UTF-8 bytes compressed per tick in all rooms (about 1 ms) */

struct wsd *wsd_g;

/* ------------------------------------------------------------------ messages */

static struct wsd_msg *msg_new(const void *data, size_t len)
{
	struct wsd_msg *m = malloc(sizeof *m + WSD_PRE + len);

	if (!m)
		abort();
	m->refs = 0;
	m->len = len;
	memcpy(m->buf + WSD_PRE, data, len);
	return m;
}

static void msg_ref(struct wsd_msg *m)
{
	m->refs++;
}

static void msg_unref(struct wsd_msg *m)
{
	if (m && --m->refs == 0)
		free(m);
}

/* Frees a message nobody took. */
static void msg_release_if_unused(struct wsd_msg *m)
{
	if (m && m->refs == 0)
		free(m);
}

/* ------------------------------------------------------------------ sessions: registry and users */

struct wsd_user {
	char id[37];
	size_t nconns;
	struct wsd_sess **sess;
	size_t nsess, cap;
	struct wsd_user *hnext;
};

static struct wsd_sess *sess_hash[HASH_BUCKETS];
static struct wsd_user *user_hash[HASH_BUCKETS];
static struct wsd_room *room_hash[HASH_BUCKETS];
static struct wsd_room *room_list;

static size_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ULL;

	while (*s)
		h = (h ^ (uint8_t)*s++) * 1099511628211ULL;
	return (size_t)(h % HASH_BUCKETS);
}

static struct wsd_sess *sess_find(uint64_t id)
{
	struct wsd_sess *s;

	for (s = sess_hash[id % HASH_BUCKETS]; s; s = s->hnext)
		if (s->id == id)
			return s;
	return NULL;
}

static void sess_unhash(struct wsd_sess *s)
{
	struct wsd_sess **pp;

	for (pp = &sess_hash[s->id % HASH_BUCKETS]; *pp; pp = &(*pp)->hnext)
		if (*pp == s) {
			*pp = s->hnext;
			return;
		}
}

static void *grow(void *arr, size_t *cap, size_t need, size_t elem)
{
	size_t c = *cap ? *cap : 4;
	void *p;

	if (need <= *cap)
		return arr;
	while (c < need)
		c *= 2;
	p = realloc(arr, c * elem);
	if (!p)
		abort();
	*cap = c;
	return p;
}

static struct wsd_user *user_get(const char *id)
{
	size_t h = hash_str(id);
	struct wsd_user *u;

	for (u = user_hash[h]; u; u = u->hnext)
		if (strcmp(u->id, id) == 0)
			return u;
	u = calloc(1, sizeof *u);
	if (!u)
		abort();
	snprintf(u->id, sizeof u->id, "%s", id);
	u->hnext = user_hash[h];
	user_hash[h] = u;
	return u;
}

static void user_drop_sess(struct wsd_user *u, struct wsd_sess *s)
{
	size_t i;

	for (i = 0; i < u->nsess; i++)
		if (u->sess[i] == s) {
			u->sess[i] = u->sess[--u->nsess];
			break;
		}
	if (u->nconns)
		u->nconns--;
	if (u->nconns == 0) {
		size_t h = hash_str(u->id);
		struct wsd_user **pp;
		for (pp = &user_hash[h]; *pp; pp = &(*pp)->hnext)
			if (*pp == u) {
				*pp = u->hnext;
				break;
			}
		free(u->sess);
		free(u);
	}
}

/* Distinct rooms the user's other sessions are in, not counting `project_id`. */
static size_t user_rooms_besides(struct wsd_user *u, const char *project_id)
{
	size_t i, j, n = 0;

	for (i = 0; i < u->nsess; i++) {
		struct wsd_sess *s = u->sess[i];
		int seen = 0;
		if (!s->room || strcmp(s->project_id, project_id) == 0)
			continue;
		for (j = 0; j < i; j++)
			if (u->sess[j]->room && strcmp(u->sess[j]->project_id, s->project_id) == 0)
				seen = 1;
		n += !seen;
	}
	return n;
}

/* ------------------------------------------------------------------ sending */

static void sess_want_write(struct wsd_sess *s)
{
	if (s->wsi)
		lws_callback_on_writable(s->wsi);
}

static void sess_close(struct wsd_sess *s, int code, const char *reason);

/* Queues `m` for `s`; a client whose queue is over SVC_WSD_SEND_QUEUE_MAX is dropped (1013). */
static void sess_send(struct wsd_sess *s, struct wsd_msg *m)
{
	if (s->state == WSD_S_CLOSING)
		return;
	if (s->q_bytes + m->len > wsd_g->cfg.wsd_send_queue_max) {
		svc_log_warn("dropping a client of project %s that does not keep up", s->project_id);
		sess_close(s, 1013, "too slow");
		return;
	}
	if (s->q_n == s->q_cap) {
		size_t i, cap = s->q_cap ? s->q_cap * 2 : 16;
		struct wsd_msg **q = malloc(cap * sizeof *q);
		if (!q)
			abort();
		for (i = 0; i < s->q_n; i++)
			q[i] = s->q[(s->q_head + i) % s->q_cap];
		free(s->q);
		s->q = q;
		s->q_cap = cap;
		s->q_head = 0;
	}
	s->q[(s->q_head + s->q_n) % s->q_cap] = m;
	s->q_n++;
	s->q_bytes += m->len;
	msg_ref(m);
	sess_want_write(s);
}

static void sess_send_bytes(struct wsd_sess *s, const void *data, size_t len)
{
	struct wsd_msg *m = msg_new(data, len);

	sess_send(s, m);
	msg_release_if_unused(m);
}

static void queue_clear(struct wsd_sess *s)
{
	while (s->q_n) {
		msg_unref(s->q[s->q_head]);
		s->q_head = (s->q_head + 1) % s->q_cap;
		s->q_n--;
	}
	s->q_bytes = 0;
}

/* Ends a session: what is queued is still sent (unless it was a laggard), then a close frame. */
static void sess_close(struct wsd_sess *s, int code, const char *reason)
{
	if (s->state == WSD_S_CLOSING)
		return;
	if (code == 1013)
		queue_clear(s);
	s->state = WSD_S_CLOSING;
	s->close_code = code;
	snprintf(s->close_reason, sizeof s->close_reason, "%s", reason);
	if (s->wsi) {
		lws_rx_flow_control(s->wsi, 0);
		/* a client that stopped reading never makes the socket writeable again */
		lws_set_timeout(s->wsi, PENDING_TIMEOUT_CLOSE_SEND, CLOSE_KILL_S);
	}
	sess_want_write(s);
}

/* y-protocols auth.js writePermissionDenied: [2, 0, varString(reason)], then the close. */
static void sess_deny(struct wsd_sess *s, const char *reason)
{
	struct svc_yjs_buf b = { 0 };

	wsd_write_varuint(&b, WSD_MSG_AUTH);
	wsd_write_varuint(&b, 0);
	wsd_write_varbytes(&b, reason, strlen(reason));
	sess_send_bytes(s, b.data, b.len);
	svc_yjs_buf_dispose(&b);
	sess_close(s, 1008, reason);
}

/*
 * Sends queued messages: the first one because the socket is writeable, more
 * (up to WRITE_BURST) while lws_send_pipe_choked() says the socket takes
 * them and nothing is left over from a partial write, so that a busy room
 * costs one poll round per burst, not per message (libwebsockets issue 852).
 */
int wsd_sess_writeable(struct wsd_sess *s)
{
	unsigned sent = 0;

	while (s->q_n && sent < WRITE_BURST && (sent == 0 || !lws_send_pipe_choked(s->wsi))) {
		struct wsd_msg *m = s->q[s->q_head];
		int n;
		s->q_head = (s->q_head + 1) % s->q_cap;
		s->q_n--;
		s->q_bytes -= m->len;
		/* lws writes the frame header into the WSD_PRE bytes before the payload: the
		 * same bytes for every connection (server frames are not masked) */
		n = lws_write(s->wsi, m->buf + WSD_PRE, m->len, LWS_WRITE_BINARY);
		msg_unref(m);
		if (n < 0)
			return -1;
		sent++;
	}
	if (sent) {
		s->last_tx_ms = svc_mono_ms();
		if (s->q_n || s->state == WSD_S_CLOSING)
			lws_callback_on_writable(s->wsi);
		return 0;
	}
	if (s->state == WSD_S_CLOSING) {
		lws_close_reason(s->wsi, (enum lws_close_status)s->close_code, (unsigned char *)s->close_reason,
				 strlen(s->close_reason));
		return -1;
	}
	return 0;
}

/* ------------------------------------------------------------------ rooms */

struct aw_state {
	uint64_t client, clock;
	char *json;          /* NULL: removed (the clock is kept, as y-protocols keeps meta) */
	size_t json_len;
	int64_t updated_ms;
	uint64_t owner;      /* session that added it */
};

struct comment {
	char id[37];
	char parent_id[37];
	int resolved;
	int busy;            /* an internal call for it is running */
	char *added_json;    /* the design-comment:added message, sent to joiners while open */
};

/* What a file held when svc-wsd last saw it on disk: the base of a three-way merge, kept while it has unsaved edits. */
struct base_text {
	char *path;
	char *text;          /* NULL while it is being read */
	size_t len;
	char hash[65];
	int reading;
};

enum room_state { R_LOADING, R_READY, R_FAILED };

struct wsd_room {
	char project_id[37];
	enum room_state state;
	struct svc_yjs_doc *doc;
	struct wsd_room *hnext, *next, *prev;
	struct wsd_sess **sess;
	size_t nsess, capsess;
	struct aw_state *aw;
	size_t naw, capaw;
	int64_t aw_checked_ms;
	/* persistence */
	struct wsd_update *pending;
	size_t npending, cappending;
	uint64_t next_seq;
	uint64_t since_snapshot;       /* updates stored since the snapshot */
	uint64_t log_bytes;            /* their bytes */
	uint64_t snapshot_bytes;       /* the snapshot's size */
	int64_t persist_fail_ms;
	/* disk */
	struct wsd_known known;
	char **dirty;
	size_t ndirty, capdirty;
	int64_t first_dirty_ms, last_change_ms;
	int save_inflight;
	int rescan_wanted;
	struct base_text *bases;
	size_t nbases, capbases;
	char *binary_json;   /* meta.binaryFiles as last set */
	/* files-changed call */
	char **changed;
	size_t nchanged, capchanged;
	char **editors;
	size_t neditors, capeditors;
	int64_t commit_due_ms, commit_first_ms;
	int commit_inflight;
	int commit_failures;
	/* memory: the last completed svc_yjs_doc_pack() pass */
	int64_t pack_ms;
	/* presence */
	int64_t presence_due_ms;
	int presence_inflight;
	/* comments */
	struct comment *comments;
	size_t ncomments, capcomments;
	/* jobs running for this room: it is not freed before they are back */
	unsigned jobs;
	/* a remote batch is open in doc (wsd_flush() commits it after this loop iteration) */
	struct wsd_room *flush_next;
	int in_flush;
};

static struct wsd_room *flush_list;

static struct wsd_room *room_find(const char *id)
{
	struct wsd_room *r;

	for (r = room_hash[hash_str(id)]; r; r = r->hnext)
		if (strcmp(r->project_id, id) == 0)
			return r;
	return NULL;
}

static void strlist_add_unique(char ***list, size_t *n, size_t *cap, const char *s, size_t len)
{
	size_t i;
	char *c;

	for (i = 0; i < *n; i++)
		if (strlen((*list)[i]) == len && memcmp((*list)[i], s, len) == 0)
			return;
	*list = grow(*list, cap, *n + 1, sizeof **list);
	c = strndup(s, len);
	if (!c)
		abort();
	(*list)[(*n)++] = c;
}

static void strlist_free(char **list, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(list[i]);
	free(list);
}

static void room_free(struct wsd_room *r)
{
	size_t i;
	struct wsd_room **pp;

	for (pp = &room_hash[hash_str(r->project_id)]; *pp; pp = &(*pp)->hnext)
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
	svc_yjs_doc_free(r->doc);
	free(r->sess);
	for (i = 0; i < r->naw; i++)
		free(r->aw[i].json);
	free(r->aw);
	for (i = 0; i < r->npending; i++)
		free(r->pending[i].data);
	free(r->pending);
	wsd_known_dispose(&r->known);
	strlist_free(r->dirty, r->ndirty);
	strlist_free(r->changed, r->nchanged);
	strlist_free(r->editors, r->neditors);
	for (i = 0; i < r->ncomments; i++)
		free(r->comments[i].added_json);
	free(r->comments);
	for (i = 0; i < r->nbases; i++) {
		free(r->bases[i].path);
		free(r->bases[i].text);
	}
	free(r->bases);
	free(r->binary_json);
	free(r);
	wsd_g->nrooms--;
	wsd_g->trim_wanted = 1;
}

static void room_load_done(struct wsd_room *r, struct wsd_load_result *res);

static struct wsd_room *room_create(const char *id)
{
	struct wsd_room *r = calloc(1, sizeof *r);
	size_t h = hash_str(id);

	if (!r)
		abort();
	snprintf(r->project_id, sizeof r->project_id, "%s", id);
	r->state = R_LOADING;
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

/* ------------------------------------------------------------------ awareness */

static struct aw_state *aw_find(struct wsd_room *r, uint64_t client)
{
	size_t i;

	for (i = 0; i < r->naw; i++)
		if (r->aw[i].client == client)
			return &r->aw[i];
	return NULL;
}

/* Encodes [1, varUint8Array(awareness update of `clients`)] (awareness.js encodeAwarenessUpdate). */
static struct wsd_msg *aw_encode(struct wsd_room *r, const uint64_t *clients, size_t n, int only_present)
{
	struct svc_yjs_buf u = { 0 }, m = { 0 };
	struct wsd_msg *msg = NULL;
	size_t i, count = 0;

	for (i = 0; i < n; i++) {
		struct aw_state *a = aw_find(r, clients[i]);
		if (a && (!only_present || a->json))
			count++;
	}
	if (count == 0)
		return NULL;
	wsd_write_varuint(&u, count);
	for (i = 0; i < n; i++) {
		struct aw_state *a = aw_find(r, clients[i]);
		if (!a || (only_present && !a->json))
			continue;
		wsd_write_varuint(&u, a->client);
		wsd_write_varuint(&u, a->clock);
		if (a->json)
			wsd_write_varbytes(&u, a->json, a->json_len);
		else
			wsd_write_varbytes(&u, "null", 4);
	}
	wsd_write_varuint(&m, WSD_MSG_AWARENESS);
	wsd_write_varbytes(&m, u.data, u.len);
	msg = msg_new(m.data, m.len);
	svc_yjs_buf_dispose(&u);
	svc_yjs_buf_dispose(&m);
	return msg;
}

static struct wsd_msg *aw_encode_all(struct wsd_room *r)
{
	uint64_t *ids;
	struct wsd_msg *m;
	size_t i;

	if (r->naw == 0)
		return NULL;
	ids = malloc(r->naw * sizeof *ids);
	if (!ids)
		abort();
	for (i = 0; i < r->naw; i++)
		ids[i] = r->aw[i].client;
	m = aw_encode(r, ids, r->naw, 1);
	free(ids);
	return m;
}

static void room_broadcast(struct wsd_room *r, struct wsd_msg *m)
{
	size_t i;

	for (i = 0; i < r->nsess; i++)
		if (r->sess[i]->state == WSD_S_OPEN)
			sess_send(r->sess[i], m);
	msg_release_if_unused(m);
}

/* Removes the states of `clients` (awareness.js removeAwarenessStates) and tells the room. */
static void aw_remove(struct wsd_room *r, const uint64_t *clients, size_t n)
{
	struct wsd_msg *m;
	size_t i;

	for (i = 0; i < n; i++) {
		struct aw_state *a = aw_find(r, clients[i]);
		if (a && a->json) {
			free(a->json);
			a->json = NULL;
			a->json_len = 0;
			a->updated_ms = svc_mono_ms();
		}
	}
	m = aw_encode(r, clients, n, 0);
	if (m)
		room_broadcast(r, m);
}

static int handle_awareness(struct wsd_sess *s, const uint8_t *data, size_t len)
{
	struct wsd_room *r = s->room;
	struct wsd_aw_entry *e = NULL;
	uint64_t *changed = NULL;
	size_t nchanged = 0;
	int n, i, err = 0;
	int64_t now = svc_mono_ms();

	e = malloc(AW_MAX_ENTRIES * sizeof *e);
	changed = malloc(AW_MAX_ENTRIES * sizeof *changed);
	if (!e || !changed)
		abort();
	n = wsd_awareness_parse(data, len, e, AW_MAX_ENTRIES);
	if (n < 0) {
		err = n;
		goto done;
	}
	for (i = 0; i < n; i++) {
		struct aw_state *a = aw_find(r, e[i].client);
		uint64_t curr = a ? a->clock : 0;
		int is_null = wsd_aw_is_null(&e[i]);
		if (!(curr < e[i].clock || (curr == e[i].clock && is_null && a && a->json)))
			continue;
		if (!a) {
			r->aw = grow(r->aw, &r->capaw, r->naw + 1, sizeof *r->aw);
			a = &r->aw[r->naw++];
			memset(a, 0, sizeof *a);
			a->client = e[i].client;
		}
		if (!a->json && !is_null)
			a->owner = s->id;
		free(a->json);
		a->json = NULL;
		a->json_len = 0;
		if (!is_null) {
			a->json = malloc(e[i].json_len ? e[i].json_len : 1);
			if (!a->json)
				abort();
			memcpy(a->json, e[i].json, e[i].json_len);
			a->json_len = e[i].json_len;
		}
		a->clock = e[i].clock;
		a->updated_ms = now;
		changed[nchanged++] = e[i].client;
	}
	if (nchanged) {
		struct wsd_msg *m = aw_encode(r, changed, nchanged, 0);
		if (m)
			room_broadcast(r, m);
	}
done:
	free(e);
	free(changed);
	return err;
}

/*
 * Every AW_CHECK_MS (or a tenth of the timeout when it is set shorter):
 * states not renewed for SVC_WSD_AWARENESS_TIMEOUT_MS (30 s, awareness.js
 * outdatedTimeout) go (awareness.js _checkInterval); old removals are forgotten.
 */
static void aw_check(struct wsd_room *r, int64_t now)
{
	const int64_t timeout = (int64_t)wsd_g->cfg.wsd_awareness_timeout_ms;
	const int64_t every = timeout / 10 < AW_CHECK_MS ? timeout / 10 : AW_CHECK_MS;
	uint64_t *gone;
	size_t i, n = 0;

	if (now - r->aw_checked_ms < every)
		return;
	r->aw_checked_ms = now;
	if (r->naw == 0)
		return;
	gone = malloc(r->naw * sizeof *gone);
	if (!gone)
		abort();
	for (i = 0; i < r->naw; i++)
		if (r->aw[i].json && now - r->aw[i].updated_ms >= timeout)
			gone[n++] = r->aw[i].client;
	if (n)
		aw_remove(r, gone, n);
	free(gone);
	for (i = 0; i < r->naw;) {
		if (!r->aw[i].json && now - r->aw[i].updated_ms >= 2 * timeout)
			r->aw[i] = r->aw[--r->naw];
		else
			i++;
	}
}

/* ------------------------------------------------------------------ merge bases */

static struct base_text *base_find(struct wsd_room *r, const char *path)
{
	size_t i;

	for (i = 0; i < r->nbases; i++)
		if (strcmp(r->bases[i].path, path) == 0)
			return &r->bases[i];
	return NULL;
}

static void base_drop(struct wsd_room *r, const char *path)
{
	struct base_text *b = base_find(r, path);

	if (!b)
		return;
	free(b->path);
	free(b->text);
	*b = r->bases[--r->nbases];
}

/* Makes `text` (taken; may be NULL for "") the base of `path`. */
static void base_set(struct wsd_room *r, const char *path, char *text, size_t len, const char *hash)
{
	struct base_text *b = base_find(r, path);

	if (!b) {
		r->bases = grow(r->bases, &r->capbases, r->nbases + 1, sizeof *r->bases);
		b = &r->bases[r->nbases++];
		memset(b, 0, sizeof *b);
		b->path = strdup(path);
		if (!b->path)
			abort();
	}
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
	struct base_text *b;
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
	struct base_text *b;

	if (key_len > SVC_FSX_PATH_MAX || memchr(key, '\0', key_len))
		return;
	memcpy(path, key, key_len);
	path[key_len] = '\0';
	if (base_find(r, path) || !wsd_known_get(&r->known, path))
		return;
	r->bases = grow(r->bases, &r->capbases, r->nbases + 1, sizeof *r->bases);
	b = &r->bases[r->nbases++];
	memset(b, 0, sizeof *b);
	b->path = strdup(path);
	if (!b->path)
		abort();
	b->reading = 1;
	r->jobs++;
	wsd_store_read_base(&wsd_g->io_worker, r->project_id, r, path, base_read_done);
}

/* ------------------------------------------------------------------ document changes */

static void mark_dirty(struct wsd_room *r, const char *key, size_t key_len)
{
	int64_t now = svc_mono_ms();

	if (r->ndirty == 0)
		r->first_dirty_ms = now;
	strlist_add_unique(&r->dirty, &r->ndirty, &r->capdirty, key, key_len);
	r->last_change_ms = now;
}

static void mark_dirty_from_report(struct wsd_room *r, const struct svc_yjs_report *rep)
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

/* A newly integrated update: broadcast [0, 2, update] to the room (sender included) and queue it for MariaDB. */
static void room_integrated(struct wsd_room *r, const struct svc_yjs_buf *update)
{
	struct svc_yjs_buf m = { 0 };
	struct wsd_update *u;

	wsd_write_varuint(&m, WSD_MSG_SYNC);
	wsd_write_varuint(&m, WSD_SYNC_UPDATE);
	wsd_write_varbytes(&m, update->data, update->len);
	room_broadcast(r, msg_new(m.data, m.len));
	svc_yjs_buf_dispose(&m);

	r->pending = grow(r->pending, &r->cappending, r->npending + 1, sizeof *r->pending);
	u = &r->pending[r->npending++];
	u->seq = r->next_seq++;
	u->len = update->len;
	u->data = malloc(update->len ? update->len : 1);
	if (!u->data)
		abort();
	memcpy(u->data, update->data, update->len);
}

/* A server-side edit (disk -> document, meta): integrated, broadcast and persisted, but not "dirty". */
static void room_server_edit(struct wsd_room *r, struct svc_yjs_buf *update)
{
	if (update->len)
		room_integrated(r, update);
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

/* Commits the room's open batch: marks the changed files dirty, broadcasts and queues the update. Before any local edit. */
static void room_flush(struct wsd_room *r)
{
	struct svc_yjs_buf out = { 0 };
	struct svc_yjs_report rep = { 0 };

	if (!svc_yjs_batch_open(r->doc))
		return;
	svc_yjs_batch_commit(r->doc, &out, &rep);
	mark_dirty_from_report(r, &rep);
	if (out.len)
		room_integrated(r, &out);
	svc_yjs_buf_dispose(&out);
	svc_yjs_report_dispose(&rep);
}

void wsd_flush(void)
{
	while (flush_list) {
		struct wsd_room *r = flush_list;
		flush_list = r->flush_next;
		r->in_flush = 0;
		room_flush(r);
	}
}

static void set_last_saved(struct wsd_room *r)
{
	struct svc_yjs_buf up = { 0 };
	char ts[32], json[40];

	room_flush(r);
	svc_time_format(svc_now_ms(), ts);
	snprintf(json, sizeof json, "\"%s\"", ts);
	if (svc_yjs_map_set_json(r->doc, "meta", "lastSavedAt", 11, json, strlen(json), &up, NULL) == 0)
		room_server_edit(r, &up);
	svc_yjs_buf_dispose(&up);
}

/*
 * A file changed on disk (f: its new text) goes into the document. When the
 * file has unsaved edits and its base is known, a three-way merge keeps them
 * (wsd_merge3: the disk wins only where both changed the same text); else the
 * disk's text replaces the document's by a minimal edit. The file stays dirty
 * (with the disk's text as its new base) when the merge kept live edits.
 */
static int disk_merge(struct wsd_room *r, struct wsd_disk_file *f, struct svc_yjs_buf *up)
{
	struct base_text *b = base_find(r, f->path);
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

	room_flush(r);
	for (i = 0; i < n; i++) {
		struct wsd_disk_file *f = &files[i];
		const char *known;
		int err;
		if (f->deleted) {
			err = svc_yjs_map_delete(r->doc, "files", f->path, strlen(f->path), &up, NULL);
			wsd_known_del(&r->known, f->path);
			base_drop(r, f->path);
		} else if (f->content) {
			known = wsd_known_get(&r->known, f->path);
			if (known && strcmp(known, f->hash) == 0)
				continue; /* already in the document (a save or an earlier scan took it) */
			err = disk_merge(r, f, &up);
			wsd_known_set(&r->known, f->path, f->hash);
		} else {
			continue;
		}
		if (err < 0)
			svc_log_warn("project %s: disk change of a file not applied (%s)", r->project_id, svc_err_code(err));
		room_server_edit(r, &up);
	}
	svc_yjs_buf_dispose(&up);
}

/* ------------------------------------------------------------------ comments */

static struct comment *comment_find(struct wsd_room *r, const char *id)
{
	size_t i;

	for (i = 0; i < r->ncomments; i++)
		if (strcmp(r->comments[i].id, id) == 0)
			return &r->comments[i];
	return NULL;
}

/* [100, varString(json)] */
static struct wsd_msg *comment_msg(const char *json)
{
	struct svc_yjs_buf b = { 0 };
	struct wsd_msg *m;

	wsd_write_varuint(&b, WSD_MSG_DESIGN_COMMENT);
	wsd_write_varbytes(&b, json, strlen(json));
	m = msg_new(b.data, b.len);
	svc_yjs_buf_dispose(&b);
	return m;
}

static void comment_error(struct wsd_sess *s, const char *code, const char *message)
{
	struct json_object *o = json_object_new_object();
	struct wsd_msg *m;

	json_object_object_add(o, "type", json_object_new_string("error"));
	json_object_object_add(o, "error", json_object_new_string(code));
	json_object_object_add(o, "message", json_object_new_string(message));
	m = comment_msg(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
	json_object_put(o);
	sess_send(s, m);
	msg_release_if_unused(m);
}

static void comment_done(struct wsd_comment_job *j)
{
	struct wsd_room *r = j->room;
	struct wsd_sess *s = sess_find(j->sess_id);
	struct comment *c;

	r->jobs--;
	c = comment_find(r, j->comment_id);
	if (c)
		c->busy = 0;
	if (j->status < 200 || j->status > 299) {
		if (s && s->state == WSD_S_OPEN)
			comment_error(s, j->status == 404 ? "not_found" : "internal_error",
				      j->status == 404 ? "No comment with this id in this project."
						       : "The comment could not be stored; try again.");
		return;
	}
	switch (j->op) {
	case WSD_C_ADD:
		r->comments = grow(r->comments, &r->capcomments, r->ncomments + 1, sizeof *r->comments);
		c = &r->comments[r->ncomments++];
		memset(c, 0, sizeof *c);
		snprintf(c->id, sizeof c->id, "%s", j->comment_id);
		snprintf(c->parent_id, sizeof c->parent_id, "%s", j->parent_id);
		c->added_json = j->broadcast;
		j->broadcast = NULL;
		room_broadcast(r, comment_msg(c->added_json));
		return;
	case WSD_C_RESOLVE:
	case WSD_C_UNRESOLVE:
		if (c)
			c->resolved = j->op == WSD_C_RESOLVE;
		break;
	case WSD_C_DELETE:
		if (c) {
			free(c->added_json);
			*c = r->comments[--r->ncomments];
		}
		break;
	}
	room_broadcast(r, comment_msg(j->broadcast));
}

static void handle_comment(struct wsd_sess *s, const uint8_t *json, size_t len)
{
	struct wsd_room *r = s->room;
	struct wsd_comment_req req;
	struct comment *c = NULL;
	char msg[200];

	if (wsd_comment_parse((const char *)json, len, &req, msg, sizeof msg) < 0) {
		comment_error(s, "validation_failed", msg);
		return;
	}
	if (!s->can_write) {
		comment_error(s, "forbidden", "Only members of the project's workspace can comment.");
		goto done;
	}
	if (req.op == WSD_C_ADD) {
		if (req.parent_id[0] && !comment_find(r, req.parent_id)) {
			comment_error(s, "validation_failed", "parentId must be the id of a comment of this project.");
			goto done;
		}
	} else {
		c = comment_find(r, req.comment_id);
		if (!c) {
			comment_error(s, "not_found", "No comment with this id in this project.");
			goto done;
		}
		if (c->busy) {
			comment_error(s, "conflict", "The comment is being changed; try again.");
			goto done;
		}
		if (req.op == WSD_C_RESOLVE && c->resolved) {
			comment_error(s, "conflict", "The comment is already resolved.");
			goto done;
		}
		if (req.op == WSD_C_UNRESOLVE && !c->resolved) {
			comment_error(s, "conflict", "The comment is not resolved.");
			goto done;
		}
		c->busy = 1;
	}
	r->jobs++;
	wsd_store_comment(&wsd_g->io_worker, r->project_id, r, s->id, s->user_id, s->user_name, &req,
			  comment_done);
done:
	wsd_comment_req_dispose(&req);
}

/* ------------------------------------------------------------------ joining */

static void presence_soon(struct wsd_room *r)
{
	r->presence_due_ms = svc_mono_ms() + PRESENCE_DELAY_MS;
}

/* The room is ready: step 1, the awareness states, the open comments; then the client may talk. */
static void room_welcome(struct wsd_room *r, struct wsd_sess *s)
{
	struct svc_yjs_buf sv = { 0 }, m = { 0 };
	struct wsd_msg *aw;
	size_t i;

	s->state = WSD_S_OPEN;
	svc_yjs_state_vector(r->doc, &sv);
	wsd_write_varuint(&m, WSD_MSG_SYNC);
	wsd_write_varuint(&m, WSD_SYNC_STEP1);
	wsd_write_varbytes(&m, sv.data, sv.len);
	sess_send_bytes(s, m.data, m.len);
	svc_yjs_buf_dispose(&sv);
	svc_yjs_buf_dispose(&m);
	aw = aw_encode_all(r);
	if (aw) {
		sess_send(s, aw);
		msg_release_if_unused(aw);
	}
	for (i = 0; i < r->ncomments; i++)
		if (!r->comments[i].resolved && r->comments[i].added_json) {
			struct wsd_msg *cm = comment_msg(r->comments[i].added_json);
			sess_send(s, cm);
			msg_release_if_unused(cm);
		}
	if (s->wsi)
		lws_rx_flow_control(s->wsi, 1);
	presence_soon(r);
}

static void room_load_done(struct wsd_room *r, struct wsd_load_result *res)
{
	size_t i;

	r->jobs--;
	if (res->error < 0) {
		svc_log_error("project %s: document could not be loaded (%s)", r->project_id, svc_err_code(res->error));
		r->state = R_FAILED;
		for (i = 0; i < r->nsess; i++)
			sess_close(r->sess[i], 1011, "document unavailable");
		return;
	}
	r->doc = res->doc;
	res->doc = NULL;
	wsd_g->trim_wanted = 1;
	r->next_seq = res->next_seq;
	r->since_snapshot = res->since_snapshot;
	r->log_bytes = res->log_bytes;
	r->snapshot_bytes = res->snapshot_bytes;
	r->known = res->known;
	memset(&res->known, 0, sizeof res->known);
	r->binary_json = res->binary_json;
	res->binary_json = NULL;
	for (i = 0; i < res->ndirty; i++) {
		if (r->ndirty == 0)
			r->first_dirty_ms = svc_mono_ms();
		strlist_add_unique(&r->dirty, &r->ndirty, &r->capdirty, res->dirty[i], strlen(res->dirty[i]));
		r->last_change_ms = svc_mono_ms();
	}
	for (i = 0; i < res->ncomments; i++) {
		struct wsd_loaded_comment *lc = &res->comments[i];
		struct comment *c;
		r->comments = grow(r->comments, &r->capcomments, r->ncomments + 1, sizeof *r->comments);
		c = &r->comments[r->ncomments++];
		memset(c, 0, sizeof *c);
		snprintf(c->id, sizeof c->id, "%s", lc->id);
		snprintf(c->parent_id, sizeof c->parent_id, "%s", lc->parent_id);
		c->resolved = lc->resolved;
		c->added_json = lc->added_json;
		lc->added_json = NULL;
	}
	r->state = R_READY;
	for (i = 0; i < r->nsess; i++)
		if (r->sess[i]->state == WSD_S_WAIT_ROOM)
			room_welcome(r, r->sess[i]);
	if (r->rescan_wanted) {
		r->rescan_wanted = 0;
		wsd_room_disk_changed(r->project_id);
	}
}

static void room_add_sess(struct wsd_room *r, struct wsd_sess *s)
{
	r->sess = grow(r->sess, &r->capsess, r->nsess + 1, sizeof *r->sess);
	r->sess[r->nsess++] = s;
	s->room = r;
}

static void access_done(struct wsd_access_job *j)
{
	struct wsd_sess *s = sess_find(j->sess_id);
	struct wsd_room *r;
	const char *reason = NULL;

	if (!s || s->state != WSD_S_AUTH)
		return;
	if (j->error < 0)
		reason = j->error == SVC_E_NOT_FOUND ? "permission-denied: no such project"
						     : "permission-denied: service unavailable";
	else if (j->member)
		s->can_write = 1;
	else if (!j->public_read)
		reason = "permission-denied: not a member of this project's workspace";
	if (reason) {
		sess_deny(s, reason);
		return;
	}
	snprintf(s->user_name, sizeof s->user_name, "%s", j->user_name);
	if (user_rooms_besides(s->user, s->project_id) >= wsd_g->cfg.wsd_max_rooms_per_user) {
		sess_deny(s, "permission-denied: too many rooms open");
		return;
	}
	r = room_find(s->project_id);
	if (!r) {
		if (wsd_g->nrooms >= wsd_g->cfg.wsd_max_rooms || wsd_g->stopping) {
			sess_deny(s, "permission-denied: server busy, try again later");
			return;
		}
		r = room_create(s->project_id);
	}
	if (r->state == R_FAILED) {
		sess_close(s, 1011, "document unavailable");
		return;
	}
	room_add_sess(r, s);
	s->state = WSD_S_WAIT_ROOM;
	if (r->state == R_READY)
		room_welcome(r, s);
}

int wsd_sess_open(struct wsd_sess *s, struct lws *wsi)
{
	size_t h;

	s->wsi = wsi;
	s->id = ++wsd_g->next_sess_id;
	s->state = WSD_S_AUTH;
	s->connected_ms = s->last_tx_ms = svc_mono_ms();
	h = s->id % HASH_BUCKETS;
	s->hnext = sess_hash[h];
	sess_hash[h] = s;
	wsd_g->nsess++;
	/* nothing the client sends is read before it is authorised */
	lws_rx_flow_control(wsi, 0);
	if (!s->token_ok) {
		sess_deny(s, "permission-denied: invalid or expired token");
		return 0;
	}
	s->user = user_get(s->user_id);
	s->user->sess = grow(s->user->sess, &s->user->cap, s->user->nsess + 1, sizeof *s->user->sess);
	s->user->sess[s->user->nsess++] = s;
	s->user->nconns++;
	if (s->user->nconns > wsd_g->cfg.wsd_max_conns_per_user) {
		sess_deny(s, "permission-denied: too many connections");
		return 0;
	}
	wsd_store_access(&wsd_g->db_worker, s->id, s->user_id, s->project_id, access_done);
	return 0;
}

/* ------------------------------------------------------------------ receiving */

/* Handles one whole binary message (several y-protocols messages may follow each other). */
static int handle_message(struct wsd_sess *s, const uint8_t *data, size_t len)
{
	struct wsd_reader rd = { data, data + len };
	struct wsd_room *r = s->room;

	while (rd.p < rd.end && s->state == WSD_S_OPEN) {
		uint64_t type, sub;
		const uint8_t *payload;
		size_t plen;

		if (wsd_read_varuint(&rd, &type) < 0)
			return SVC_E_VALIDATION;
		switch (type) {
		case WSD_MSG_SYNC:
			if (wsd_read_varuint(&rd, &sub) < 0 || wsd_read_varbytes(&rd, &payload, &plen) < 0)
				return SVC_E_VALIDATION;
			if (sub == WSD_SYNC_STEP1) {
				struct svc_yjs_buf up = { 0 }, m = { 0 };
				int err = svc_yjs_encode_state(r->doc, payload, plen, &up, NULL);
				if (err == 0) {
					wsd_write_varuint(&m, WSD_MSG_SYNC);
					wsd_write_varuint(&m, WSD_SYNC_STEP2);
					wsd_write_varbytes(&m, up.data, up.len);
					sess_send_bytes(s, m.data, m.len);
				}
				svc_yjs_buf_dispose(&up);
				svc_yjs_buf_dispose(&m);
				if (err < 0)
					return err;
			} else if (sub == WSD_SYNC_STEP2 || sub == WSD_SYNC_UPDATE) {
				int err, changed = 0;
				if (!s->can_write)
					continue; /* read-only: refused, not applied (y-protocols PROTOCOL.md) */
				room_batch_open(r);
				err = svc_yjs_batch_apply(r->doc, payload, plen, &changed, NULL);
				if (err == 0 && changed && s->user_id[0])
					strlist_add_unique(&r->editors, &r->neditors, &r->capeditors, s->user_id,
							   strlen(s->user_id));
				if (err < 0)
					return err;
			} else {
				return SVC_E_VALIDATION;
			}
			break;
		case WSD_MSG_AWARENESS:
			if (wsd_read_varbytes(&rd, &payload, &plen) < 0)
				return SVC_E_VALIDATION;
			if (handle_awareness(s, payload, plen) < 0)
				return SVC_E_VALIDATION;
			break;
		case WSD_MSG_AUTH:
			/* clients do not send these; skip it as the reference does */
			if (wsd_read_varuint(&rd, &sub) < 0 || wsd_read_varbytes(&rd, &payload, &plen) < 0)
				return SVC_E_VALIDATION;
			break;
		case WSD_MSG_QUERY_AWARENESS: {
			struct wsd_msg *m = aw_encode_all(r);
			if (m) {
				sess_send(s, m);
				msg_release_if_unused(m);
			}
			break;
		}
		case WSD_MSG_DESIGN_COMMENT:
			if (wsd_read_varbytes(&rd, &payload, &plen) < 0)
				return SVC_E_VALIDATION;
			handle_comment(s, payload, plen);
			break;
		default:
			/* an unknown message type: its length is unknown, so the rest of the frame is skipped */
			return 0;
		}
	}
	return 0;
}

void wsd_sess_rx(struct wsd_sess *s, const void *in, size_t len, int first, int final, int binary)
{
	if (s->state != WSD_S_OPEN)
		return;
	if (first) {
		s->rx_len = 0;
		s->rx_binary = binary;
	}
	if (len > wsd_g->cfg.wsd_max_message - s->rx_len) {
		s->rx_len = 0;
		sess_close(s, 1009, "message too big");
		return;
	}
	if (s->rx_len + len > s->rx_cap) {
		size_t cap = s->rx_cap ? s->rx_cap : 4096;
		uint8_t *p;
		while (cap < s->rx_len + len)
			cap *= 2;
		p = realloc(s->rx, cap);
		if (!p)
			abort();
		s->rx = p;
		s->rx_cap = cap;
	}
	memcpy(s->rx + s->rx_len, in, len);
	s->rx_len += len;
	if (!final)
		return;
	if (!s->rx_binary) {
		sess_close(s, 1003, "text frames are not supported");
	} else if (handle_message(s, s->rx, s->rx_len) < 0) {
		sess_close(s, 1003, "malformed message");
	}
	s->rx_len = 0;
	/* a big buffer is not kept for a client that sent one big message */
	if (s->rx_cap > 65536) {
		free(s->rx);
		s->rx = NULL;
		s->rx_cap = 0;
	}
}

/* ------------------------------------------------------------------ leaving */

void wsd_sess_closed(struct wsd_sess *s)
{
	struct wsd_room *r = s->room;

	sess_unhash(s);
	wsd_g->nsess--;
	if (r) {
		size_t i, n = 0;
		uint64_t *mine;
		for (i = 0; i < r->nsess; i++)
			if (r->sess[i] == s) {
				r->sess[i] = r->sess[--r->nsess];
				break;
			}
		mine = malloc((r->naw + 1) * sizeof *mine);
		if (!mine)
			abort();
		for (i = 0; i < r->naw; i++)
			if (r->aw[i].owner == s->id && r->aw[i].json)
				mine[n++] = r->aw[i].client;
		if (n)
			aw_remove(r, mine, n);
		free(mine);
		presence_soon(r);
	}
	if (s->user)
		user_drop_sess(s->user, s);
	queue_clear(s);
	free(s->q);
	free(s->rx);
	s->q = NULL;
	s->rx = NULL;
	s->wsi = NULL;
}

/* ------------------------------------------------------------------ disk -> document */

static void rescan_done(struct wsd_rescan_job *j)
{
	struct wsd_room *r = j->room;

	r->jobs--;
	if (j->error < 0 || r->state != R_READY)
		return;
	apply_disk_files(r, j->files, j->nfiles);
	/* meta.binaryFiles follows the disk */
	if (j->binary_json && (!r->binary_json || strcmp(r->binary_json, j->binary_json) != 0)) {
		struct svc_yjs_buf up = { 0 };
		room_flush(r);
		if (svc_yjs_map_set_json(r->doc, "meta", "binaryFiles", 11, j->binary_json, strlen(j->binary_json), &up,
					 NULL) == 0)
			room_server_edit(r, &up);
		svc_yjs_buf_dispose(&up);
		free(r->binary_json);
		r->binary_json = j->binary_json;
		j->binary_json = NULL;
	}
}

int wsd_room_disk_changed(const char *project_id)
{
	struct wsd_room *r = room_find(project_id);

	if (!r)
		return SVC_E_NOT_FOUND;
	if (r->state == R_LOADING) {
		r->rescan_wanted = 1;
		return 0;
	}
	if (r->state != R_READY)
		return SVC_E_NOT_FOUND;
	r->jobs++;
	wsd_store_rescan(&wsd_g->io_worker, r->project_id, r, &r->known, rescan_done);
	return 0;
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
	r->pending = grow(r->pending, &r->cappending, r->npending + j->n, sizeof *r->pending);
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

static void save_done(struct wsd_save_job *j)
{
	struct wsd_room *r = j->room;
	size_t i, written = 0;

	r->jobs--;
	r->save_inflight = 0;
	wsd_g->trim_wanted = 1;
	if (j->error < 0) {
		/* keep the files dirty: the next tick tries again */
		for (i = 0; i < j->nfiles; i++)
			strlist_add_unique(&r->dirty, &r->ndirty, &r->capdirty, j->files[i].path,
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
			if (f->outcome == WSD_SAVE_WRITTEN) {
				strlist_add_unique(&r->changed, &r->nchanged, &r->capchanged, f->path, strlen(f->path));
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
			base_drop(r, f->path);
			strlist_add_unique(&r->changed, &r->nchanged, &r->capchanged, f->path, strlen(f->path));
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
			strlist_add_unique(&r->changed, &r->nchanged, &r->capchanged, j->paths[i], strlen(j->paths[i]));
		for (i = 0; i < j->nusers; i++)
			strlist_add_unique(&r->editors, &r->neditors, &r->capeditors, j->users[i], strlen(j->users[i]));
		r->commit_first_ms = svc_mono_ms();
		r->commit_due_ms = svc_mono_ms() + 5000;
	}
}

static void presence_done(struct wsd_call_job *j)
{
	struct wsd_room *r = j->room;

	r->jobs--;
	r->presence_inflight = 0;
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
	wsd_store_save(&wsd_g->io_worker, r->project_id, r, files, n, save_done);
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

static void start_presence(struct wsd_room *r)
{
	struct json_object *users = json_object_new_array();
	size_t i, j;

	r->presence_due_ms = 0;
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
	r->presence_inflight = 1;
	r->jobs++;
	wsd_store_presence(&wsd_g->io_worker, r->project_id, r, users, presence_done);
}

static size_t pack_budget; /* left in this tick */

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
	return r->nsess == 0 && r->state != R_LOADING && r->npending == 0 && r->ndirty == 0 && r->jobs == 0 &&
	       !r->commit_due_ms && !r->presence_due_ms;
}

static void room_tick(struct wsd_room *r, int64_t now)
{
	const struct svc_config *cfg = &wsd_g->cfg;
	int empty = r->nsess == 0;

	if (r->state == R_FAILED) {
		if (r->nsess == 0 && r->jobs == 0)
			room_free(r);
		return;
	}
	if (r->state != R_READY)
		return;
	room_flush(r);
	/*
	 * 1. updates to MariaDB, batched (at most one tick late, every room in
	 * one transaction, wsd_tick() flushes; a failed batch waits a second).
	 * A snapshot is written once the log since the last one holds as many
	 * bytes as that snapshot (so loading reads at most twice the state) and
	 * at least SVC_WSD_COMPACT_UPDATES updates.
	 */
	if (r->npending && now - r->persist_fail_ms > 1000) {
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
	/* 2. files to disk once edits settle */
	if (r->ndirty && !r->save_inflight &&
	    (empty || wsd_g->stopping || now - r->last_change_ms >= (int64_t)cfg->wsd_save_delay_ms ||
	     now - r->first_dirty_ms >= SAVE_MAX_FACTOR * (int64_t)cfg->wsd_save_delay_ms))
		start_save(r);
	/* 3. tell the API (one commit per burst) */
	if (r->commit_due_ms && !r->commit_inflight && !r->save_inflight && r->ndirty == 0 &&
	    (empty || wsd_g->stopping || now >= r->commit_due_ms))
		start_commit(r);
	/* 4. presence */
	if (r->presence_due_ms && !r->presence_inflight && now >= r->presence_due_ms)
		start_presence(r);
	/* 5. awareness timeouts */
	aw_check(r, now);
	/* 6. cold text compressed (a budget per tick for all rooms, so the loop never stalls on it) */
	room_pack(r, now);
	/* 7. unload an empty room once everything is stored */
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
				sess_send_bytes(s, ka, sizeof ka);
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
		if (r->npending || r->ndirty || r->jobs || r->commit_due_ms || r->state == R_LOADING)
			return 0;
	return 1;
}

void wsd_stats(size_t *rooms, size_t *sessions)
{
	*rooms = wsd_g->nrooms;
	*sessions = wsd_g->nsess;
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
