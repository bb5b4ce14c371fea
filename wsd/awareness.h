/* awareness.h: svc-wsd's awareness states per room (awareness.c), a part of the room (room.h), with the y-protocols clock rules (awareness.js): relayed, removed, timed out. */
#ifndef SVC_WSD_AWARENESS_H
#define SVC_WSD_AWARENESS_H

/*
 * What the awareness part does with an awareness update (y-protocols
 * awareness.js applyAwarenessUpdate) from a socket: the states whose clock
 * moves on are kept and relayed to the room, sender included. Beyond y-protocols, for a server many people
 * share (docs/collaboration.md "Protocol"):
 * - a removal (`null`) of a client id the room holds no state for is
 *   dropped, as awareness.js drops it (nothing kept, nothing relayed);
 * - a client id is bound to the connection that set it while that
 *   connection is in the room (others' states and removals for it are
 *   ignored), one connection holds at most 8 client ids, and one update
 *   makes at most 8 changes (states or removals; the rest is ignored);
 * - a state whose `user.id` is not the socket's user is ignored
 *   (wsd_aw_state_user_ok);
 * - a state over SVC_WSD_AWARENESS_MAX_BYTES (16 KiB) is ignored;
 * - a room holds at most SVC_WSD_MAX_AWARENESS_PER_ROOM entries: when full,
 *   the oldest removal kept is forgotten for a new client id, and with no
 *   removal to forget the new id is ignored;
 * - every entry (and an empty update as one) is taken from the
 *   connection's budget of 4096 a second (bursts of 16384), before it is
 *   read;
 * - over 20 updates a second (bursts of 40) a connection's states are
 *   relayed with the next tick (25 ms) instead of at once.
 * O(k log n + n) for k entries in a room of n states. A malformed update
 * closes the socket with 1003, one over the budget with 1008.
 * Query-awareness ([3]) is answered with every state, charged to the same
 * budget; a joiner gets every state; a leaver's states are removed; states
 * not renewed for SVC_WSD_AWARENESS_TIMEOUT_MS time out.
 */

/* At start-up: adds the awareness part to the rooms (room.h wsd_room_add_part). */
void wsd_aw_register(void);

#endif
