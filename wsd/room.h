/*
 * room.h: svc-wsd's rooms (room.c): one open project's document, its
 * sockets, the clients' updates batched per event-loop round and stored in
 * MariaDB, presence and the people list, the tick. The other parts of a
 * room (awareness.c, comments.c, disk.c, lease.c) register a hook table
 * (struct wsd_part) with the rooms, as lighttpd's plugins register theirs
 * with the server: room.c calls the tables and never a part's functions,
 * and a part keeps its state of a room in the slot the room holds for it
 * (wsd_room_part) and calls only what this header offers. Event loop only.
 */
#ifndef SVC_WSD_ROOM_H
#define SVC_WSD_ROOM_H

#include <stddef.h>
#include <stdint.h>

#include "conn.h"
#include "proto.h"
#include "wsd_store.h"

enum wsd_room_state { WSD_R_LOADING, WSD_R_READY, WSD_R_FAILED };

#define WSD_PARTS_MAX 8

/* Why a room's updates wait in memory instead of being stored (bits of wsd_room.hold). */
enum {
	WSD_HOLD_LEASE = 1,   /* the lease is not known to be this instance's (lease.c) */
	WSD_HOLD_FILES = 2,   /* rows of collab_files wait for MariaDB (disk.c) */
};

/*
 * One open project: its document and what room.c keeps for it. The parts'
 * state is in part[] (wsd_room_part). Parts read project_id, state, doc and
 * the sockets, count their jobs in `jobs`, and change the rest only
 * through the functions below.
 */
struct wsd_room {
	char project_id[37];
	enum wsd_room_state state;
	struct svc_yjs_doc *doc;
	struct wsd_room *hnext, *next, *prev;
	struct wsd_sess **sess;
	size_t nsess, capsess;
	/* jobs running for this room (any part's): it is not freed before they are back */
	unsigned jobs;
	/* persistence */
	struct wsd_update *pending;
	size_t npending, cappending;
	uint64_t next_seq;
	uint64_t since_snapshot;       /* updates stored since the snapshot */
	uint64_t log_bytes;            /* their bytes */
	uint64_t snapshot_bytes;       /* the snapshot's size */
	int64_t persist_fail_ms;
	unsigned hold;                 /* WSD_HOLD_* bits: the updates wait (wsd_room_hold) */
	int moved;                     /* another instance serves the room: its sockets close with WSD_CLOSE_MOVED */
	/* the parts: their state, and which of them still have work (the last on_tick) */
	void *part[WSD_PARTS_MAX];
	unsigned busy;
	int edited;                    /* the document changed since the parts' last on_tick */
	/* memory: the last completed svc_yjs_doc_pack() pass */
	int64_t pack_ms;
	/* presence */
	int64_t presence_due_ms;
	int presence_inflight;
	int64_t people_due_ms;         /* the people list goes to the sockets that asked for it ([101]) */
	/* a remote batch is open in doc (wsd_flush() commits it after this loop iteration) */
	struct wsd_room *flush_next;
	int in_flush;
};

/* on_message's answer for a message type that is not the part's. */
#define WSD_PART_PASS 1

/*
 * A part of a room: its hooks, each NULL when the part has nothing to do
 * there, called for every room in the order the parts were added.
 */
struct wsd_part {
	const char *name;
	/* bytes of state per room, zeroed, allocated when the room opens and freed after on_dispose */
	size_t state_size;
	/* the document is loaded (before any socket is welcomed): the part takes its share of `res` */
	void (*on_load)(struct wsd_room *r, struct wsd_load_result *res);
	/* `s` joined the ready room (after the document's sync step 1): the part welcomes it */
	void (*on_join)(struct wsd_room *r, struct wsd_sess *s);
	/* `s` left (it is out of r->sess already) */
	void (*on_leave)(struct wsd_room *r, struct wsd_sess *s);
	/*
	 * A message of `type` from `s` that room.c does not read (sync, auth and the people list are
	 * its own): the part reads it from `rd` (its type read already). Returns 0, WSD_PART_PASS when
	 * the type is not the part's, or an error: SVC_E_VALIDATION closes the socket with 1003,
	 * SVC_E_RATE_LIMITED with 1008.
	 */
	int (*on_message)(struct wsd_sess *s, uint64_t type, struct wsd_reader *rd);
	/*
	 * A client's update of `len` bytes: before it is applied (applied = 0; returning 0 refuses it,
	 * the part tells the sender why), and after it changed the document (applied = 1).
	 */
	int (*on_update)(struct wsd_sess *s, size_t len, int applied);
	/* A committed batch or a server edit changed what `rep` lists. */
	void (*on_edit)(struct wsd_room *r, const struct svc_yjs_report *rep);
	/* Every tick of a ready room; returns 1 while the part has work the room must not unload or stop before. */
	int (*on_tick)(struct wsd_room *r, int64_t now);
	/* The room is freed: the part lets go of what its state holds. */
	void (*on_dispose)(struct wsd_room *r);
};

/* At start-up, before any room opens: adds a part (kept, not copied). Returns its id for wsd_room_part(); aborts past WSD_PARTS_MAX. */
int wsd_room_add_part(const struct wsd_part *p);

/* The state of part `id` in room r (state_size bytes). */
static inline void *wsd_room_part(const struct wsd_room *r, int id)
{
	return r->part[id];
}

/*
 * The close code of a socket whose room this instance does not serve (any more): another instance
 * holds the room's lease. In y-websocket's "try again later" range 4500-4599 (it gives up for good
 * on 4400-4499): it reconnects, and the load balancer (HAProxy, hashing the path) sends it to the
 * instance that serves the room (docs/collaboration.md).
 */
#define WSD_CLOSE_MOVED 4503

/* ------------------------------------------------------------------ helpers */

/* FNV-1a of a NUL-terminated string. */
size_t wsd_hash_str(const char *s);

/* Appends a copy of s[0, len) to the string list unless it holds it already. Aborts on no memory. */
void wsd_strlist_add_unique(char ***list, size_t *n, size_t *cap, const char *s, size_t len);

/* Frees the `n` strings of `list` and the list. */
void wsd_strlist_free(char **list, size_t n);

/* ------------------------------------------------------------------ rooms */

/* The open room of project `id`, or NULL. */
struct wsd_room *wsd_room_find(const char *id);

/*
 * Puts an authorised session (state WSD_S_AUTH, role known) into its
 * project's room, opening the room and loading its document when none is
 * open; the session waits (WSD_S_WAIT_ROOM) until the document is there.
 * Denies it when the server is at SVC_WSD_MAX_ROOMS or stopping, closes it
 * (1011) when the room's document could not be loaded, WSD_CLOSE_MOVED when
 * another instance serves the room.
 */
void wsd_room_join(struct wsd_sess *s);

/* Takes a closing session out of its room: the parts' on_leave run, and presence is posted soon. */
void wsd_room_leave(struct wsd_room *r, struct wsd_sess *s);

/*
 * y-protocols sync message `sub` (WSD_SYNC_*) with its payload from session
 * s: step 1 is answered with step 2, step 2 and updates of a writer join the
 * room's batch of this round (read-only sessions' are dropped; the parts'
 * on_update may refuse one). Returns 0 or the error of lib/yjs (the caller
 * closes the session).
 */
int wsd_room_sync_rx(struct wsd_sess *s, uint64_t sub, const uint8_t *payload, size_t len);

/* A message of another `type` from s: the parts' on_message in turn. Returns what the part that read it returned, or WSD_PART_PASS. */
int wsd_room_message(struct wsd_sess *s, uint64_t type, struct wsd_reader *rd);

/* The API and the sockets that asked ([101]) are told who is in room `r` (user, name, canWrite) soon, once for a burst of changes. */
void wsd_room_presence_soon(struct wsd_room *r);

/*
 * Sends the people list [101, varString({"users": [{id, name, canWrite}]})]:
 * one entry per user with an open socket in room r, the name the account
 * has (what the server confirmed, not what awareness says), to `only`, or
 * (only = NULL) to every open socket of the room that asked for it.
 * docs/collaboration.md "People".
 */
void wsd_room_people_send(struct wsd_room *r, struct wsd_sess *only);

/* Queues `m` for every open session of the room; frees it when none took it. */
void wsd_room_broadcast(struct wsd_room *r, struct wsd_msg *m);

/*
 * Commits the room's open batch of clients' updates: the parts' on_edit,
 * then the update is broadcast and queued. Called before any server-side
 * edit, so that a batch never holds a local edit.
 */
void wsd_room_flush(struct wsd_room *r);

/*
 * A server-side edit (disk -> document, meta) whose update is `update`:
 * broadcast and persisted (no on_edit: the files it touches are not
 * unsaved edits). Resets update->len to 0 so the buffer can be reused.
 */
void wsd_room_server_edit(struct wsd_room *r, struct svc_yjs_buf *update);

/* Sets (on) or clears the WSD_HOLD_* bit `why`: while any is set, the room's updates wait in memory. */
void wsd_room_hold(struct wsd_room *r, unsigned why, int on);

/*
 * The room is not this instance's (any more): its queued updates are dropped (their clients send
 * them again after reconnecting), its sockets close with WSD_CLOSE_MOVED and so will every new one
 * until the room unloads. `why` is logged.
 */
void wsd_room_moved(struct wsd_room *r, const char *why);

/* ------------------------------------------------------------------ what main runs */

/*
 * Commits every room's batch of clients' updates read in this event-loop
 * iteration: one broadcast and one stored update per room (see
 * svc_yjs_batch_begin). Called after every lws_service() round.
 */
void wsd_flush(void);

/* The periodic work, every WSD_TICK_MS: each ready room's parts, persistence batches, presence, packing, unloading. */
void wsd_tick(void);

/* 1 when every room is saved and persisted (for a clean stop). */
int wsd_all_clean(void);

/* The string content of every open room's document, summed (lib/yjs svc_yjs_doc_memory; O(structs)). */
void wsd_text_stats(struct svc_yjs_mem *sum);

#endif
