/* awareness.c: svc-wsd's awareness states per room, with the y-protocols clock rules (awareness.js): relayed, removed, timed out. */
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "room.h"
#include "wsd.h"

#define AW_MAX_ENTRIES 4096
#define AW_CHECK_MS 3000         /* awareness.js checks every outdatedTimeout / 10 */

/* One client's state (awareness.js meta and states). */
struct wsd_aw_state {
	uint64_t client, clock;
	char *json;          /* NULL: removed (the clock is kept, as y-protocols keeps meta) */
	size_t json_len;
	int64_t updated_ms;
	uint64_t owner;      /* session that added it */
};

static struct wsd_aw_state *aw_find(struct wsd_room *r, uint64_t client)
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

int wsd_aw_rx(struct wsd_sess *s, const uint8_t *data, size_t len)
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
		struct wsd_aw_state *a = aw_find(r, e[i].client);
		uint64_t curr = a ? a->clock : 0;
		int is_null = wsd_aw_is_null(&e[i]);
		if (!(curr < e[i].clock || (curr == e[i].clock && is_null && a && a->json)))
			continue;
		if (!a) {
			WSD_GROW(r->aw, r->capaw, r->naw + 1);
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
			wsd_room_broadcast(r, m);
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
void wsd_aw_check(struct wsd_room *r, int64_t now)
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

void wsd_aw_send_all(struct wsd_room *r, struct wsd_sess *s)
{
	struct wsd_msg *m = aw_encode_all(r);

	if (m) {
		wsd_sess_send(s, m);
		wsd_msg_release_if_unused(m);
	}
}

void wsd_aw_sess_left(struct wsd_room *r, uint64_t sess_id)
{
	size_t i, n = 0;
	uint64_t *mine = malloc((r->naw + 1) * sizeof *mine);

	if (!mine)
		abort();
	for (i = 0; i < r->naw; i++)
		if (r->aw[i].owner == sess_id && r->aw[i].json)
			mine[n++] = r->aw[i].client;
	if (n)
		aw_remove(r, mine, n);
	free(mine);
}

void wsd_aw_dispose(struct wsd_room *r)
{
	size_t i;

	for (i = 0; i < r->naw; i++)
		free(r->aw[i].json);
	free(r->aw);
	r->aw = NULL;
	r->naw = r->capaw = 0;
}
