/* awareness.c: svc-wsd's awareness states per room, with the y-protocols clock rules (awareness.js): relayed, removed, timed out. */
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "core/util.h"
#include "awareness.h"
#include "conn.h"
#include "proto.h"
#include "room.h"
#include "wsd.h"

#define AW_MAX_ENTRIES 4096      /* entries of one awareness update; more is malformed (1003) */
#define AW_CHECK_MS 3000         /* awareness.js checks every outdatedTimeout / 10 */
#define AW_MAX_PER_SESS 8        /* client ids one connection may hold states for (y-websocket: one per Y.Doc), */
				 /* and changes (states or removals) one update may make */
#define AW_RATE_PER_S 20         /* updates of one connection relayed at once per second, */
#define AW_RATE_BURST 40         /* after a burst of this many; beyond, they are relayed with the next tick */
#define AW_ENTRIES_PER_S 4096    /* entries (states and removals, kept or not) one connection may send per second, */
#define AW_ENTRIES_BURST 16384   /* after a burst of this many (y-websocket echoes every state it is sent); beyond, 1008 */

/* One client's state (awareness.js meta and states). */
struct wsd_aw_state {
	uint64_t client, clock;
	char *json;          /* NULL: removed (the clock is kept, as y-protocols keeps meta) */
	size_t json_len;
	int64_t updated_ms;
	uint64_t owner;      /* session that set it: no other connection may change it while that one is here */
	int deferred;        /* changed, relay due with the next tick (its sender was over its rate) */
};

/* A room's awareness. */
struct aw_room {
	struct wsd_aw_state *aw;       /* sorted by client id */
	size_t naw, capaw;
	int64_t aw_checked_ms;
	int aw_deferred;               /* states wait for their relay with the next tick */
};

static int aw_id;

static struct aw_room *aw_of(struct wsd_room *r)
{
	return wsd_room_part(r, aw_id);
}

/*
 * The state of `client`, or NULL; ar->aw is sorted by client id, so a lookup
 * is O(log n) and an update of n entries never scans the room per entry.
 * *at (may be NULL) gets the index where it is or would be inserted.
 */
static struct wsd_aw_state *aw_find_at(struct wsd_room *r, uint64_t client, size_t *at)
{
	struct aw_room *ar = aw_of(r);
	size_t lo = 0, hi = ar->naw;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (ar->aw[mid].client < client)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (at)
		*at = lo;
	return lo < ar->naw && ar->aw[lo].client == client ? &ar->aw[lo] : NULL;
}

static struct wsd_aw_state *aw_find(struct wsd_room *r, uint64_t client)
{
	return aw_find_at(r, client, NULL);
}

/* 1 when session `owner` is still in room r (so the state it set is still its own). */
static int owner_here(struct wsd_room *r, uint64_t owner)
{
	struct wsd_sess *o = owner ? wsd_sess_find(owner) : NULL;

	return o && o->room == r && o->state != WSD_S_CLOSING;
}

/* Takes one token of s's relay budget (AW_RATE_PER_S, refilled continuously). Returns 1 when there was one. */
static int rate_take(struct wsd_sess *s, int64_t now)
{
	if (s->aw_tokens_ms == 0)
		s->aw_tokens_ms = now - (int64_t)AW_RATE_BURST * 1000 / AW_RATE_PER_S;
	/* the budget is kept as the time it was last empty: tokens = (now - that) * rate, at most a burst */
	if (now - s->aw_tokens_ms > (int64_t)AW_RATE_BURST * 1000 / AW_RATE_PER_S)
		s->aw_tokens_ms = now - (int64_t)AW_RATE_BURST * 1000 / AW_RATE_PER_S;
	if (now - s->aw_tokens_ms < 1000 / AW_RATE_PER_S)
		return 0;
	s->aw_tokens_ms += 1000 / AW_RATE_PER_S;
	return 1;
}

/*
 * Takes `n` entries from s's budget (AW_ENTRIES_PER_S, refilled continuously
 * up to AW_ENTRIES_BURST). Every entry counts, whether it changes anything or
 * not, since reading it costs the loop that serves every room. Returns 1 when
 * the budget had them, else 0 (and takes nothing).
 */
static int budget_take(struct wsd_sess *s, size_t n, int64_t now)
{
	if (s->aw_budget_ms == 0) {
		s->aw_budget = AW_ENTRIES_BURST;
		s->aw_budget_ms = now;
	}
	if (now > s->aw_budget_ms) {
		int64_t gained = (now - s->aw_budget_ms) * AW_ENTRIES_PER_S / 1000;
		if (gained > 0) {
			s->aw_budget = s->aw_budget + gained > AW_ENTRIES_BURST ? AW_ENTRIES_BURST : s->aw_budget + gained;
			s->aw_budget_ms = now;
		}
	}
	if ((int64_t)n > s->aw_budget)
		return 0;
	s->aw_budget -= (int64_t)n;
	return 1;
}

/*
 * Makes space for one more entry when room r holds
 * SVC_WSD_MAX_AWARENESS_PER_ROOM: the oldest removal kept is forgotten (its
 * clock only guards against a late echo of the removed state). Returns 1
 * when there is space, 0 when every entry is a present state.
 */
static int aw_make_space(struct wsd_room *r)
{
	struct aw_room *ar = aw_of(r);
	size_t i, old = SIZE_MAX;

	if (ar->naw < wsd_g->cfg.wsd_max_awareness_per_room)
		return 1;
	for (i = 0; i < ar->naw; i++)
		if (!ar->aw[i].json && (old == SIZE_MAX || ar->aw[i].updated_ms < ar->aw[old].updated_ms))
			old = i;
	if (old == SIZE_MAX)
		return 0;
	memmove(&ar->aw[old], &ar->aw[old + 1], (ar->naw - old - 1) * sizeof *ar->aw);
	ar->naw--;
	return 1;
}

/* Encodes [1, varUint8Array(awareness update of `clients`)] (awareness.js encodeAwarenessUpdate). */
static struct wsd_msg *aw_encode(struct wsd_room *r, const uint64_t *clients, size_t n, int only_present)
{
	struct svc_yjs_buf u = { 0 }, m = { 0 };
	struct wsd_msg *msg = NULL;
	size_t i, count = 0;

	for (i = 0; i < n; i++) {
		struct wsd_aw_state *a = aw_find(r, clients[i]);
		if (a && (!only_present || a->json))
			count++;
	}
	if (count == 0)
		return NULL;
	wsd_write_varuint(&u, count);
	for (i = 0; i < n; i++) {
		struct wsd_aw_state *a = aw_find(r, clients[i]);
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
	msg = wsd_msg_new(m.data, m.len);
	svc_yjs_buf_dispose(&u);
	svc_yjs_buf_dispose(&m);
	return msg;
}

static struct wsd_msg *aw_encode_all(struct wsd_room *r)
{
	struct aw_room *ar = aw_of(r);
	uint64_t *ids;
	struct wsd_msg *m;
	size_t i;

	if (ar->naw == 0)
		return NULL;
	ids = malloc(ar->naw * sizeof *ids);
	if (!ids)
		abort();
	for (i = 0; i < ar->naw; i++)
		ids[i] = ar->aw[i].client;
	m = aw_encode(r, ids, ar->naw, 1);
	free(ids);
	return m;
}

/* Removes the states of `clients` (awareness.js removeAwarenessStates) and tells the room. */
static void aw_remove(struct wsd_room *r, const uint64_t *clients, size_t n)
{
	struct wsd_msg *m;
	size_t i;

	for (i = 0; i < n; i++) {
		struct wsd_aw_state *a = aw_find(r, clients[i]);
		if (a && a->json) {
			free(a->json);
			a->json = NULL;
			a->json_len = 0;
			a->updated_ms = svc_mono_ms();
		}
	}
	m = aw_encode(r, clients, n, 0);
	if (m)
		wsd_room_broadcast(r, m);
}

/* An awareness update from s (awareness.h says what is kept and relayed). */
static int aw_rx(struct wsd_sess *s, const uint8_t *data, size_t len)
{
	struct wsd_room *r = s->room;
	struct aw_room *ar = aw_of(r);
	struct wsd_reader rd = { data, data + len };
	struct wsd_aw_entry *e = NULL;
	uint64_t *changed = NULL, count;
	size_t nchanged = 0, owned = 0, applied = 0, k;
	int n, i, err = 0, relay;
	int64_t now = svc_mono_ms();

	/* the budget is taken before anything is read: an empty update costs one entry */
	if (wsd_read_varuint(&rd, &count) < 0 || count > AW_MAX_ENTRIES)
		return SVC_E_VALIDATION;
	if (!budget_take(s, count ? (size_t)count : 1, now))
		return SVC_E_RATE_LIMITED;
	if (count == 0)
		return rd.p == rd.end ? 0 : SVC_E_VALIDATION;
	e = malloc((size_t)count * sizeof *e);
	changed = malloc((size_t)count * sizeof *changed);
	if (!e || !changed)
		abort();
	n = wsd_awareness_parse(data, len, e, (size_t)count);
	if (n < 0) {
		err = n;
		goto done;
	}
	for (k = 0; k < ar->naw; k++)
		if (ar->aw[k].owner == s->id && ar->aw[k].json)
			owned++;
	relay = rate_take(s, now);
	for (i = 0; i < n && applied < AW_MAX_PER_SESS; i++) {
		size_t at;
		struct wsd_aw_state *a = aw_find(r, e[i].client);
		uint64_t curr = a ? a->clock : 0;
		int is_null = wsd_aw_is_null(&e[i]);
		/* removing a state the room does not hold changes nothing (awareness.js
		 * applyAwarenessUpdate neither keeps nor relays a state for it) */
		if (is_null && (!a || !a->json))
			continue;
		if (!(curr < e[i].clock || (curr == e[i].clock && is_null)))
			continue;
		/* a client id belongs to the connection that set it while that one is here: nobody
		 * else (a viewer included) can change or remove another person's cursor */
		if (a && a->owner != s->id && owner_here(r, a->owner))
			continue;
		if (!is_null && e[i].json_len > wsd_g->cfg.wsd_awareness_max_bytes)
			continue;
		/* a state names the socket's own user or none (issue 25, item 7) */
		if (!is_null && !wsd_aw_state_user_ok(e[i].json, e[i].json_len, s->user_id))
			continue;
		if (!is_null && (!a || !a->json || a->owner != s->id)) {
			if (owned >= AW_MAX_PER_SESS)
				continue;
			if (!a && !aw_make_space(r))
				continue;
			owned++;
		}
		a = aw_find_at(r, e[i].client, &at);
		if (!a) {
			WSD_GROW(ar->aw, ar->capaw, ar->naw + 1);
			memmove(&ar->aw[at + 1], &ar->aw[at], (ar->naw - at) * sizeof *ar->aw);
			ar->naw++;
			a = &ar->aw[at];
			memset(a, 0, sizeof *a);
			a->client = e[i].client;
		}
		applied++;
		if (!is_null)
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
		if (relay) {
			a->deferred = 0;
			changed[nchanged++] = e[i].client;
		} else {
			a->deferred = 1;
			ar->aw_deferred = 1;
		}
	}
	if (nchanged) {
		struct wsd_msg *m = aw_encode(r, changed, nchanged, 0);
		if (m)
			wsd_room_broadcast(r, m);
	}
done:
	free(e);
	free(changed);
	return err;
}

/* Relays the states whose sender was over its rate (one message for the room). */
static void aw_relay_deferred(struct wsd_room *r)
{
	struct aw_room *ar = aw_of(r);
	uint64_t *ids;
	size_t i, n = 0;
	struct wsd_msg *m;

	ar->aw_deferred = 0;
	if (ar->naw == 0)
		return;
	ids = malloc(ar->naw * sizeof *ids);
	if (!ids)
		abort();
	for (i = 0; i < ar->naw; i++)
		if (ar->aw[i].deferred) {
			ar->aw[i].deferred = 0;
			ids[n++] = ar->aw[i].client;
		}
	m = n ? aw_encode(r, ids, n, 0) : NULL;
	if (m)
		wsd_room_broadcast(r, m);
	free(ids);
}

/*
 * Every AW_CHECK_MS (or a tenth of the timeout when it is set shorter):
 * states not renewed for SVC_WSD_AWARENESS_TIMEOUT_MS (30 s, awareness.js
 * outdatedTimeout) go (awareness.js _checkInterval); old removals are forgotten.
 */
/* on_tick: relays deferred states; times out states not renewed for SVC_WSD_AWARENESS_TIMEOUT_MS (checked every few seconds). */
static int aw_tick(struct wsd_room *r, int64_t now)
{
	struct aw_room *ar = aw_of(r);
	const int64_t timeout = (int64_t)wsd_g->cfg.wsd_awareness_timeout_ms;
	const int64_t every = timeout / 10 < AW_CHECK_MS ? timeout / 10 : AW_CHECK_MS;
	uint64_t *gone;
	size_t i, j, n = 0;

	if (ar->aw_deferred)
		aw_relay_deferred(r);
	if (now - ar->aw_checked_ms < every)
		return 0;
	ar->aw_checked_ms = now;
	if (ar->naw == 0)
		return 0;
	gone = malloc(ar->naw * sizeof *gone);
	if (!gone)
		abort();
	for (i = 0; i < ar->naw; i++)
		if (ar->aw[i].json && now - ar->aw[i].updated_ms >= timeout)
			gone[n++] = ar->aw[i].client;
	if (n)
		aw_remove(r, gone, n);
	free(gone);
	/* forget old removals, keeping the order by client id */
	for (i = j = 0; i < ar->naw; i++)
		if (ar->aw[i].json || now - ar->aw[i].updated_ms < 2 * timeout)
			ar->aw[j++] = ar->aw[i];
	ar->naw = j;
	return 0;
}

/* on_join: a joiner gets every known state (nothing when there is none); also the answer to query-awareness. */
static void aw_join(struct wsd_room *r, struct wsd_sess *s)
{
	struct wsd_msg *m = aw_encode_all(r);

	if (m) {
		wsd_sess_send(s, m);
		wsd_msg_release_if_unused(m);
	}
}

/* on_leave: the states the session added are removed (awareness.js removeAwarenessStates) and the room told. */
static void aw_leave(struct wsd_room *r, struct wsd_sess *s)
{
	uint64_t sess_id = s->id;
	struct aw_room *ar = aw_of(r);
	size_t i, n = 0;
	uint64_t *mine = malloc((ar->naw + 1) * sizeof *mine);

	if (!mine)
		abort();
	for (i = 0; i < ar->naw; i++)
		if (ar->aw[i].owner == sess_id && ar->aw[i].json)
			mine[n++] = ar->aw[i].client;
	if (n)
		aw_remove(r, mine, n);
	free(mine);
}

/*
 * Query-awareness ([3]) from s: every known state, as on joining, charged to
 * the connection's budget as the number of states plus 16. Returns 0 or
 * SVC_E_RATE_LIMITED (nothing sent: the socket closes with 1008).
 */
static int aw_query(struct wsd_sess *s)
{
	/* it costs an encoding of every state: as many entries, and a few more */
	if (!budget_take(s, aw_of(s->room)->naw + 16, svc_mono_ms()))
		return SVC_E_RATE_LIMITED;
	aw_join(s->room, s);
	return 0;
}

/* on_message: an awareness update ([1, varUint8Array]) or query-awareness ([3]). */
static int aw_message(struct wsd_sess *s, uint64_t type, struct wsd_reader *rd)
{
	const uint8_t *payload;
	size_t plen;

	if (type == WSD_MSG_QUERY_AWARENESS)
		return aw_query(s);
	if (type != WSD_MSG_AWARENESS)
		return WSD_PART_PASS;
	if (wsd_read_varbytes(rd, &payload, &plen) < 0)
		return SVC_E_VALIDATION;
	return aw_rx(s, payload, plen);
}

static void aw_dispose(struct wsd_room *r)
{
	struct aw_room *ar = aw_of(r);
	size_t i;

	for (i = 0; i < ar->naw; i++)
		free(ar->aw[i].json);
	free(ar->aw);
	ar->aw = NULL;
	ar->naw = ar->capaw = 0;
}

static const struct wsd_part aw_part = {
	.name = "awareness",
	.state_size = sizeof(struct aw_room),
	.on_join = aw_join,
	.on_leave = aw_leave,
	.on_message = aw_message,
	.on_tick = aw_tick,
	.on_dispose = aw_dispose,
};

void wsd_aw_register(void)
{
	aw_id = wsd_room_add_part(&aw_part);
}
