/* conn.c: a socket's session below the room: the bounded send queue of shared messages, close and deny, the sessions by id (conn.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libwebsockets.h>

#include "core/log.h"
#include "core/util.h"
#include "conn.h"
#include "proto.h"
#include "wsd.h"

#define SESS_BUCKETS 4096        /* of the session hash table */
#define WRITE_BURST 32           /* messages sent per writeable callback at most */

static struct wsd_sess *sess_hash[SESS_BUCKETS];

static void queue_clear(struct wsd_sess *s);

/* ------------------------------------------------------------------ messages */

struct wsd_msg *wsd_msg_new(const void *data, size_t len)
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
void wsd_msg_release_if_unused(struct wsd_msg *m)
{
	if (m && m->refs == 0)
		free(m);
}

/* ------------------------------------------------------------------ sessions by id */

void wsd_sess_add(struct wsd_sess *s)
{
	size_t h;

	s->id = ++wsd_g->next_sess_id;
	h = s->id % SESS_BUCKETS;
	s->hnext = sess_hash[h];
	sess_hash[h] = s;
	wsd_g->nsess++;
}

struct wsd_sess *wsd_sess_find(uint64_t id)
{
	struct wsd_sess *s;

	for (s = sess_hash[id % SESS_BUCKETS]; s; s = s->hnext)
		if (s->id == id)
			return s;
	return NULL;
}

static void sess_unhash(struct wsd_sess *s)
{
	struct wsd_sess **pp;

	for (pp = &sess_hash[s->id % SESS_BUCKETS]; *pp; pp = &(*pp)->hnext)
		if (*pp == s) {
			*pp = s->hnext;
			return;
		}
}

void wsd_sess_remove(struct wsd_sess *s)
{
	sess_unhash(s);
	wsd_g->nsess--;
	queue_clear(s);
	free(s->q);
	s->q = NULL;
}

void wsd_sess_each(void (*fn)(struct wsd_sess *s, void *arg), void *arg)
{
	size_t h;
	struct wsd_sess *s;

	for (h = 0; h < SESS_BUCKETS; h++)
		for (s = sess_hash[h]; s; s = s->hnext)
			fn(s, arg);
}

/* ------------------------------------------------------------------ sending */

static void sess_want_write(struct wsd_sess *s)
{
	if (s->wsi)
		lws_callback_on_writable(s->wsi);
}

/* Queues `m` for `s`; a client whose queue is over SVC_WSD_SEND_QUEUE_MAX is dropped (1013). */
void wsd_sess_send(struct wsd_sess *s, struct wsd_msg *m)
{
	if (s->state == WSD_S_CLOSING)
		return;
	if (s->q_bytes + m->len > wsd_g->cfg.wsd_send_queue_max) {
		svc_log_warn("dropping a client of project %s that does not keep up", s->project_id);
		wsd_sess_close(s, 1013, "too slow");
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

void wsd_sess_send_bytes(struct wsd_sess *s, const void *data, size_t len)
{
	struct wsd_msg *m = wsd_msg_new(data, len);

	wsd_sess_send(s, m);
	wsd_msg_release_if_unused(m);
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
void wsd_sess_close(struct wsd_sess *s, int code, const char *reason)
{
	if (s->state == WSD_S_CLOSING)
		return;
	if (code == 1013)
		queue_clear(s);
	s->state = WSD_S_CLOSING;
	s->close_code = code;
	snprintf(s->close_reason, sizeof s->close_reason, "%s", reason);
	if (s->wsi) {
		/* a client closed for what it sent (1008: a flood) is still read, and what it sends
		 * dropped (wsd_sess_rx), so that unread data does not turn the close into a reset
		 * that loses the close frame */
		if (code != 1008)
			lws_rx_flow_control(s->wsi, 0);
		/* a client that stopped reading never makes the socket writeable again */
		lws_set_timeout(s->wsi, PENDING_TIMEOUT_CLOSE_SEND, (int)wsd_g->cfg.wsd_close_timeout_s);
	}
	sess_want_write(s);
}

void wsd_sess_read(struct wsd_sess *s, int on)
{
	if (s->wsi)
		lws_rx_flow_control(s->wsi, on);
}

/* y-protocols auth.js writePermissionDenied: [2, 0, varString(reason)], then the close. */
void wsd_sess_deny(struct wsd_sess *s, const char *reason)
{
	struct svc_yjs_buf b = { 0 };

	wsd_write_varuint(&b, WSD_MSG_AUTH);
	wsd_write_varuint(&b, 0);
	wsd_write_varbytes(&b, reason, strlen(reason));
	wsd_sess_send_bytes(s, b.data, b.len);
	svc_yjs_buf_dispose(&b);
	wsd_sess_close(s, 1008, reason);
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

