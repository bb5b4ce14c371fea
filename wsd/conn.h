/*
 * conn.h: a socket's session below the room (conn.c): the session, its
 * bounded outbound queue of shared messages (written only when the socket
 * is writeable, as the libwebsockets minimal examples do), its close, and
 * the sessions by id. Event loop only. room.c and the parts send through
 * it; session.c runs a session's life above the room.
 */
#ifndef SVC_WSD_CONN_H
#define SVC_WSD_CONN_H

#include <stddef.h>
#include <stdint.h>

#include "auth/auth.h"

/* A message for one or more sockets: shared, reference-counted, freed when the last queue lets go. */
struct wsd_msg {
	unsigned refs;
	size_t len;
	unsigned char buf[]; /* WSD_PRE bytes of room for the frame header, then len bytes */
};
#define WSD_PRE 16

struct lws;
struct wsd_room;
struct wsd_user;

enum wsd_sess_state {
	WSD_S_AUTH,      /* waiting for the role lookup */
	WSD_S_WAIT_ROOM, /* authorised, the room's document is loading */
	WSD_S_OPEN,      /* in the room */
	WSD_S_CLOSING,   /* a close frame is due */
};

/* One collaboration socket (wsd.c fills it at the upgrade; session.c runs its life). */
struct wsd_sess {
	struct lws *wsi;
	uint64_t id;
	enum wsd_sess_state state;
	char project_id[37];
	char user_id[37];
	char user_name[160];
	int token_ok;          /* the token verified at the upgrade (signature, expiry); its session is checked off the loop */
	struct svc_auth_claims claims; /* the verified token's claims: user, generation, session (svc_session_check) */
	int can_write;
	int can_moderate;      /* may delete other members' design comments (admins, owners) */
	struct wsd_room *room;
	struct wsd_user *user;
	struct wsd_sess *hnext;
	/* a message being reassembled from fragments */
	uint8_t *rx;
	size_t rx_len, rx_cap;
	int rx_binary;
	/* outbound queue (refcounted shared messages) */
	struct wsd_msg **q;
	size_t q_head, q_n, q_cap, q_bytes;
	int close_code;
	char close_reason[100];
	int64_t connected_ms;
	int64_t last_tx_ms;     /* last frame sent (the keepalive fills silences) */
	int64_t aw_tokens_ms;   /* awareness relay budget (awareness.c): when it was last empty, 0 = full */
	int64_t aw_budget;      /* awareness entries it may still send (awareness.c) */
	int64_t aw_budget_ms;   /* when aw_budget was last refilled, 0 = never (full) */
	int want_people;        /* it asked for the people list ([101]): sent again whenever it changes */
};

/* A message of `len` bytes (copied) with WSD_PRE bytes before it for the frame header; no reference yet. Aborts on no memory. */
struct wsd_msg *wsd_msg_new(const void *data, size_t len);

/* Frees a message that no session took (refs 0); NULL is ignored. */
void wsd_msg_release_if_unused(struct wsd_msg *m);

/* Gives `s` its id and registers it (wsd_sess_find, wsd_sess_each); counted in wsd_g->nsess. */
void wsd_sess_add(struct wsd_sess *s);

/* Unregisters `s` and frees its queue (what was queued is dropped). */
void wsd_sess_remove(struct wsd_sess *s);

/* The session with id `id`, or NULL when it is gone. */
struct wsd_sess *wsd_sess_find(uint64_t id);

/* Calls fn(s, arg) for every registered session (fn must not add or remove sessions). */
void wsd_sess_each(void (*fn)(struct wsd_sess *s, void *arg), void *arg);

/* Queues `m` for `s` (a reference); a client whose queue is over SVC_WSD_SEND_QUEUE_MAX is dropped (1013). */
void wsd_sess_send(struct wsd_sess *s, struct wsd_msg *m);

/* Queues a copy of `len` bytes for `s`. */
void wsd_sess_send_bytes(struct wsd_sess *s, const void *data, size_t len);

/* Ends a session: what is queued is still sent (unless code is 1013: a laggard), then a close frame with code and reason. */
void wsd_sess_close(struct wsd_sess *s, int code, const char *reason);

/* y-protocols auth.js writePermissionDenied: [2, 0, varString(reason)], then the close (1008). */
void wsd_sess_deny(struct wsd_sess *s, const char *reason);

/* Reads from the socket again (on = 1) or stops reading it (0): lws rx flow control; nothing without a socket. */
void wsd_sess_read(struct wsd_sess *s, int on);

/*
 * LWS_CALLBACK_SERVER_WRITEABLE: sends queued messages (up to 32 per call
 * while the socket takes them), or the close frame. Returns -1 when lws is
 * to close the connection, else 0.
 */
int wsd_sess_writeable(struct wsd_sess *s);

#endif
