/* session.c: svc-wsd's sockets above the room: opening (the access check, the per-user limits), joining, receiving (each message to the room), the periodic access check, leaving. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "core/log.h"
#include "core/util.h"
#include "conn.h"
#include "proto.h"
#include "room.h"
#include "session.h"
#include "wsd.h"
#include "wsd_store.h"

/* A user's sessions: the per-user limits count them. */
struct wsd_user {
	char id[37];
	size_t nconns;
	struct wsd_sess **sess;
	size_t nsess, cap;
	struct wsd_user *hnext;
};

#define USER_BUCKETS 4096        /* of the user hash table */

static struct wsd_user *user_hash[USER_BUCKETS];

/* ------------------------------------------------------------------ registry and users */

static struct wsd_user *user_get(const char *id)
{
	size_t h = wsd_hash_str(id) % USER_BUCKETS;
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
		size_t h = wsd_hash_str(u->id) % USER_BUCKETS;
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

/* ------------------------------------------------------------------ joining */

/* The role is known: the session is denied, or joins its room (the per-user room limit checked first). */
static void access_done(struct wsd_access_job *j)
{
	struct wsd_sess *s = wsd_sess_find(j->sess_id);
	const char *reason = NULL;

	if (!s || s->state != WSD_S_AUTH)
		return;
	if (j->error == SVC_E_UNAUTHORIZED)
		reason = "permission-denied: invalid or expired token"; /* its session ended: as a bad token */
	else if (j->error < 0)
		reason = j->error == SVC_E_NOT_FOUND ? "permission-denied: no such project"
						     : "permission-denied: service unavailable";
	else if (j->member) {
		s->can_write = 1;
		s->can_moderate = j->moderate;
	} else if (!j->public_read)
		reason = "permission-denied: not a member of this project's workspace";
	if (reason) {
		wsd_sess_deny(s, reason);
		return;
	}
	snprintf(s->user_name, sizeof s->user_name, "%s", j->user_name);
	if (user_rooms_besides(s->user, s->project_id) >= wsd_g->cfg.wsd_max_rooms_per_user) {
		wsd_sess_deny(s, "permission-denied: too many rooms open");
		return;
	}
	wsd_room_join(s);
}

/* ------------------------------------------------------------------ access of open sockets */

/*
 * A socket's access is checked at the upgrade and again every SVC_WSD_RECHECK_SECONDS while it
 * is open: WSD_RECHECK_BATCH sockets per db-worker job and one job at a time, so that a room's
 * load or save waits for one batch at most. The round's sockets are taken by id when it starts.
 */
static struct {
	uint64_t *ids;
	size_t n, next, cap;
	int inflight;
	int64_t started_ms;
} recheck;

/* A batch is checked: what ended closes, a changed role applies to what the socket sends next. */
static void recheck_done(struct wsd_recheck_job *j)
{
	size_t i, kept = 0;

	recheck.inflight = 0;
	for (i = 0; i < j->n; i++) {
		const struct wsd_access_job *a = &j->items[i];
		struct wsd_sess *s = wsd_sess_find(a->sess_id);

		if (!s || s->state != WSD_S_OPEN)
			continue;
		if (a->error == SVC_E_UNAUTHORIZED) {
			svc_log_info("project %s: a socket of user %s closed: its sign-in session ended", s->project_id,
				     s->user_id);
			wsd_sess_deny(s, "permission-denied: invalid or expired token");
		} else if (a->error == SVC_E_NOT_FOUND) {
			wsd_sess_deny(s, "permission-denied: no such project");
		} else if (a->error < 0) {
			kept++; /* MariaDB out of reach: the socket stays, the next round decides */
		} else if (a->member || a->public_read) {
			int can_write = a->member;

			s->can_moderate = a->member && a->moderate;
			if (s->can_write != can_write) {
				s->can_write = can_write;
				if (s->room)
					wsd_room_presence_soon(s->room); /* the people list shows who may write */
			}
		} else {
			svc_log_info("project %s: a socket of user %s closed: no access any more", s->project_id, s->user_id);
			wsd_sess_deny(s, "permission-denied: not a member of this project's workspace");
		}
	}
	if (kept)
		svc_log_warn("recheck: %zu open socket(s) not checked, MariaDB out of reach; kept until the next round",
			     kept);
}

/* The round takes every open socket by id (wsd_sess_each). */
static void recheck_take(struct wsd_sess *s, void *arg)
{
	(void)arg;
	if (s->state != WSD_S_OPEN)
		return;
	WSD_GROW(recheck.ids, recheck.cap, recheck.n + 1);
	recheck.ids[recheck.n++] = s->id;
}

void wsd_sess_recheck_tick(int64_t now)
{
	struct wsd_access_job *items;
	size_t n = 0;

	if (recheck.inflight || wsd_g->stopping)
		return;
	if (recheck.next >= recheck.n) {
		if (now - recheck.started_ms < (int64_t)wsd_g->cfg.wsd_recheck_secs * 1000)
			return;
		recheck.started_ms = now;
		recheck.n = recheck.next = 0;
		wsd_sess_each(recheck_take, NULL);
		if (recheck.n == 0)
			return;
	}
	items = calloc(WSD_RECHECK_BATCH, sizeof *items);
	if (!items)
		abort();
	while (recheck.next < recheck.n && n < WSD_RECHECK_BATCH) {
		struct wsd_sess *s = wsd_sess_find(recheck.ids[recheck.next++]);

		if (!s || s->state != WSD_S_OPEN)
			continue;
		items[n].sess_id = s->id;
		items[n].who = s->claims;
		memcpy(items[n].user_id, s->user_id, sizeof items[n].user_id);
		memcpy(items[n].project_id, s->project_id, sizeof items[n].project_id);
		n++;
	}
	if (n == 0) {
		free(items);
		return;
	}
	recheck.inflight = 1;
	wsd_store_recheck(&wsd_g->db_worker, items, n, recheck_done);
}

int wsd_sess_open(struct wsd_sess *s, struct lws *wsi)
{
	s->wsi = wsi;
	s->state = WSD_S_AUTH;
	s->connected_ms = s->last_tx_ms = svc_mono_ms();
	wsd_sess_add(s);
	/* nothing the client sends is read before it is authorised */
	wsd_sess_read(s, 0);
	if (!s->token_ok) {
		wsd_sess_deny(s, "permission-denied: invalid or expired token");
		return 0;
	}
	s->user = user_get(s->user_id);
	WSD_GROW(s->user->sess, s->user->cap, s->user->nsess + 1);
	s->user->sess[s->user->nsess++] = s;
	s->user->nconns++;
	if (s->user->nconns > wsd_g->cfg.wsd_max_conns_per_user) {
		wsd_sess_deny(s, "permission-denied: too many connections");
		return 0;
	}
	wsd_store_access(&wsd_g->db_worker, s->id, &s->claims, s->project_id, access_done);
	return 0;
}

/* ------------------------------------------------------------------ receiving */

/*
 * Handles one whole binary message (several y-protocols messages may follow each other): sync,
 * auth and the people list here and in the room, every other type by the part that reads it
 * (wsd_room_message: awareness, design comments).
 */
static int handle_message(struct wsd_sess *s, const uint8_t *data, size_t len)
{
	struct wsd_reader rd = { data, data + len };

	while (rd.p < rd.end && s->state == WSD_S_OPEN) {
		uint64_t type, sub;
		const uint8_t *payload;
		size_t plen;
		int err;

		if (wsd_read_varuint(&rd, &type) < 0)
			return SVC_E_VALIDATION;
		switch (type) {
		case WSD_MSG_SYNC:
			if (wsd_read_varuint(&rd, &sub) < 0 || wsd_read_varbytes(&rd, &payload, &plen) < 0)
				return SVC_E_VALIDATION;
			if ((err = wsd_room_sync_rx(s, sub, payload, plen)) < 0)
				return err;
			break;
		case WSD_MSG_AUTH:
			/* clients do not send these; skip it as the reference does */
			if (wsd_read_varuint(&rd, &sub) < 0 || wsd_read_varbytes(&rd, &payload, &plen) < 0)
				return SVC_E_VALIDATION;
			break;
		case WSD_MSG_PEOPLE:
			/* who is here, as the server knows them; again whenever that changes */
			if (!s->want_people) {
				s->want_people = 1;
				wsd_room_people_send(s->room, s);
			}
			break;
		default:
			err = wsd_room_message(s, type, &rd);
			if (err == WSD_PART_PASS)
				return 0; /* an unknown message type: its length is unknown, so the rest of the frame is skipped */
			if (err < 0)
				return err;
		}
	}
	return 0;
}

void wsd_sess_rx(struct wsd_sess *s, const void *in, size_t len, int first, int final, int binary)
{
	int err;

	if (s->state != WSD_S_OPEN)
		return;
	if (first) {
		s->rx_len = 0;
		s->rx_binary = binary;
	}
	if (len > wsd_g->cfg.wsd_max_message - s->rx_len) {
		s->rx_len = 0;
		wsd_sess_close(s, 1009, "message too big");
		return;
	}
	/* 4 KiB at first: most messages fit, and the buffer is kept for the next */
	WSD_GROW(s->rx, s->rx_cap, s->rx_len + len > 4096 ? s->rx_len + len : 4096);
	memcpy(s->rx + s->rx_len, in, len);
	s->rx_len += len;
	if (!final)
		return;
	if (!s->rx_binary) {
		wsd_sess_close(s, 1003, "text frames are not supported");
	} else if ((err = handle_message(s, s->rx, s->rx_len)) == SVC_E_RATE_LIMITED) {
		wsd_sess_close(s, 1008, "too many awareness updates");
	} else if (err < 0) {
		wsd_sess_close(s, 1003, "malformed message");
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

	if (r)
		wsd_room_leave(r, s);
	if (s->user)
		user_drop_sess(s->user, s);
	wsd_sess_remove(s);
	free(s->rx);
	s->rx = NULL;
	s->wsi = NULL;
}
