/* session.h: svc-wsd's sockets above the room (session.c): what the protocol callback of wsd.c calls. */
#ifndef SVC_WSD_SESSION_H
#define SVC_WSD_SESSION_H

#include <stddef.h>
#include <stdint.h>

#include "conn.h"

/*
 * Session life, called from the protocol callback of wsd.c (its
 * LWS_CALLBACK_SERVER_WRITEABLE is conn.h's wsd_sess_writeable). `s` lives
 * in the connection's per-session data, filled by the upgrade filter.
 *
 * wsd_sess_open: the socket is open; registers the session, stops reading
 * from it and looks up the role off the loop (denied at once for a bad
 * token or too many connections of the user). Returns 0.
 * wsd_sess_rx: `len` bytes of a frame (first / final fragment, binary or
 * text); a whole message is handled, too big closes with 1009, text or
 * malformed with 1003, awareness over the connection's budget with 1008.
 * wsd_sess_closed: the connection is gone; the session leaves its room and
 * its buffers are freed (the struct itself is the caller's).
 */
int wsd_sess_open(struct wsd_sess *s, struct lws *wsi);
void wsd_sess_rx(struct wsd_sess *s, const void *in, size_t len, int first, int final, int binary);
void wsd_sess_closed(struct wsd_sess *s);

/*
 * Called every tick: every SVC_WSD_RECHECK_SECONDS, the open sockets' sign-in session and access
 * are checked again off the loop (wsd_store_recheck, in batches). A session that ended (logout,
 * password change or reset, expiry), a project deleted or no access any more closes the socket
 * with permission-denied and 1008, as at the upgrade; a role changed since applies from then on.
 * `now` in svc_mono_ms() milliseconds. docs/collaboration.md "Access of an open socket".
 */
void wsd_sess_recheck_tick(int64_t now);

#endif
