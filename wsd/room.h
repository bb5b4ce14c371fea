/* room.h: what svc-wsd's room files share (room.c, session.c, awareness.c, comments.c, disk.c); nothing outside wsd/ uses it. */
#ifndef SVC_WSD_ROOM_H
#define SVC_WSD_ROOM_H

#include <stddef.h>
#include <stdint.h>

#include "wsd.h"
#include "wsd_store.h"

#define WSD_HASH_BUCKETS 4096 /* of the session, user and room hash tables */

enum wsd_room_state { WSD_R_LOADING, WSD_R_READY, WSD_R_FAILED };

/*
 * One open project: its document and everything the daemon keeps for it.
 * Event loop only. Each group of fields belongs to the file named beside
 * it; the others read them, and change them only through that file's
 * functions below (but room.c adds a batch's editors to `editors`).
 */
struct wsd_room {
	char project_id[37];
	enum wsd_room_state state;
	struct svc_yjs_doc *doc;
	struct wsd_room *hnext, *next, *prev;
	struct wsd_sess **sess;
	size_t nsess, capsess;
	/* awareness (awareness.c) */
	struct wsd_aw_state *aw;       /* sorted by client id */
	size_t naw, capaw;
	int64_t aw_checked_ms;
	int aw_deferred;               /* states wait for their relay with the next tick */
	/* persistence (room.c) */
	struct wsd_update *pending;
	size_t npending, cappending;
	uint64_t next_seq;
	uint64_t since_snapshot;       /* updates stored since the snapshot */
	uint64_t log_bytes;            /* their bytes */
	uint64_t snapshot_bytes;       /* the snapshot's size */
	int64_t persist_fail_ms;
	/* disk (disk.c) */
	struct wsd_known known;
	char **dirty;
	size_t ndirty, capdirty;
	int64_t first_dirty_ms, last_change_ms;
	int save_inflight;
	int rescan_wanted;
	struct wsd_base_text *bases;
	size_t nbases, capbases;
	char *binary_json;   /* meta.binaryFiles as last set */
	uint64_t quota_left; /* bytes clients' updates may still add: what SVC_QUOTA_REPO_BYTES and
			      * SVC_QUOTA_WORKSPACE_BYTES leave, measured at load and after each save
			      * (svc_quota_repo_room), less the updates integrated since; UINT64_MAX: no limit */
	int save_refused;    /* the last save was over a quota: the next one waits for the next edit */
	struct wsd_file_record *records; /* collab_files rows due (wsd_disk_records_wait) */
	size_t nrecords, caprecords;
	int records_inflight;
	int64_t records_fail_ms;
	/* files-changed call (disk.c) */
	char **changed;
	size_t nchanged, capchanged;
	char **editors;
	size_t neditors, capeditors;
	int64_t commit_due_ms, commit_first_ms;
	int commit_inflight;
	int commit_failures;
	/* memory: the last completed svc_yjs_doc_pack() pass (room.c) */
	int64_t pack_ms;
	/* presence (room.c) */
	int64_t presence_due_ms;
	int presence_inflight;
	int64_t people_due_ms;         /* the people list goes to the sockets that asked for it ([101]) */
	/* comments (comments.c) */
	struct wsd_comment *comments;
	size_t ncomments, capcomments;
	/* lease (lease.c) */
	int64_t lease_ok_ms;           /* the lease holds from this time (monotonic ms) for SVC_WSD_LEASE_SECONDS */
	int64_t lease_try_ms;          /* the last renewal asked for */
	int lease_inflight;
	int lease_lost;                /* another instance serves the room: its sockets close with WSD_CLOSE_MOVED */
	int lease_stale;               /* not renewed for five sixths of it (MariaDB out of reach): served on, nothing stored */
	/* jobs running for this room: it is not freed before they are back */
	unsigned jobs;
	/* a remote batch is open in doc (wsd_flush() commits it after this loop iteration) */
	struct wsd_room *flush_next;
	int in_flush;
};

/* ------------------------------------------------------------------ leases (lease.c) */

/*
 * The close code of a socket whose room this instance does not serve (any more): another instance
 * holds the room's lease. In y-websocket's "try again later" range 4500-4599 (it gives up for good
 * on 4400-4499): it reconnects, and the load balancer (HAProxy, hashing the path) sends it to the
 * instance that serves the room (docs/collaboration.md).
 */
#define WSD_CLOSE_MOVED 4503



/*
 * Event loop, each tick of a ready room: renews its lease on the db worker every third of
 * SVC_WSD_LEASE_SECONDS; when a renewal finds the lease taken, calls wsd_lease_moved(). When none
 * succeeded for five sixths of it (MariaDB out of reach) the room is served on (its clients keep
 * editing together) but holds its updates (wsd_lease_held() is 0) and asks again every second
 * until a renewal gets through and says whether the lease is still this instance's.
 */
void wsd_lease_tick(struct wsd_room *r, int64_t now);

/* 1 when the room's lease is known to be this instance's at `now` (updates may be stored), else 0. */
int wsd_lease_held(const struct wsd_room *r, int64_t now);

/*
 * Event loop: the room is not this instance's (any more): its queued updates are dropped (their
 * clients send them again after reconnecting), its sockets close with WSD_CLOSE_MOVED and so will
 * every new one until the room unloads. `why` is logged.
 */
void wsd_lease_moved(struct wsd_room *r, const char *why);

/* Event loop: the room unloaded: its lease is given back (a job of the db worker). */
void wsd_lease_release(const char *project_id);


/* ------------------------------------------------------------------ helpers (room.c) */

/* FNV-1a of a NUL-terminated string, reduced to a bucket of WSD_HASH_BUCKETS. */
size_t wsd_hash_str(const char *s);

/* Appends a copy of s[0, len) to the string list unless it holds it already. Aborts on no memory. */
void wsd_strlist_add_unique(char ***list, size_t *n, size_t *cap, const char *s, size_t len);

/* Frees the `n` strings of `list` and the list. */
void wsd_strlist_free(char **list, size_t n);

/* ------------------------------------------------------------------ rooms (room.c) */

/* The open room of project `id`, or NULL. */
struct wsd_room *wsd_room_find(const char *id);

/*
 * Puts an authorised session (state WSD_S_AUTH, role known) into its
 * project's room, opening the room and loading its document when none is
 * open; the session waits (WSD_S_WAIT_ROOM) until the document is there.
 * Denies it when the server is at SVC_WSD_MAX_ROOMS or stopping, closes it
 * (1011) when the room's document could not be loaded.
 */
void wsd_room_join(struct wsd_sess *s);

/* The API and the sockets that asked ([101]) are told who is in room `r` (user, name, canWrite) soon (PRESENCE_DELAY_MS), once for a burst of changes. */
void wsd_room_presence_soon(struct wsd_room *r);

/*
 * Sends the people list [101, varString({"users": [{id, name, canWrite}]})]:
 * one entry per user with an open socket in room r, the name the account
 * has (what the server confirmed, not what awareness says), to `only`, or
 * (only = NULL) to every open socket of the room that asked for it.
 * docs/collaboration.md "People".
 */
void wsd_room_people_send(struct wsd_room *r, struct wsd_sess *only);

/* Takes a closing session out of its room: its awareness states are removed and presence is posted soon. */
void wsd_room_leave(struct wsd_room *r, struct wsd_sess *s);

/* Queues `m` for every open session of the room; frees it when none took it. */
void wsd_room_broadcast(struct wsd_room *r, struct wsd_msg *m);

/*
 * y-protocols sync message `sub` (WSD_SYNC_*) with its payload from session
 * s: step 1 is answered with step 2, step 2 and updates of a writer join the
 * room's batch of this round (read-only sessions' are dropped). Returns 0 or
 * the error of lib/yjs (the caller closes the session).
 */
int wsd_room_sync_rx(struct wsd_sess *s, uint64_t sub, const uint8_t *payload, size_t len);

/*
 * Commits the room's open batch of clients' updates: marks the changed files
 * dirty, broadcasts and queues the update. Called before any server-side
 * edit, so that a batch never holds a local edit.
 */
void wsd_room_flush(struct wsd_room *r);

/*
 * A server-side edit (disk -> document, meta) whose update is `update`:
 * broadcast and persisted, but the files it touches are not dirty. Resets
 * update->len to 0 so the buffer can be reused.
 */
void wsd_room_server_edit(struct wsd_room *r, struct svc_yjs_buf *update);

/* ------------------------------------------------------------------ sessions (session.c) */

/* A message of `len` bytes (copied) with WSD_PRE bytes before it for the frame header; no reference yet. Aborts on no memory. */
struct wsd_msg *wsd_msg_new(const void *data, size_t len);

/* Frees a message that no session took (refs 0); NULL is ignored. */
void wsd_msg_release_if_unused(struct wsd_msg *m);

/* The session with id `id`, or NULL when it is gone. */
struct wsd_sess *wsd_sess_find(uint64_t id);

/* Queues `m` for `s` (a reference); a client whose queue is over SVC_WSD_SEND_QUEUE_MAX is dropped (1013). */
void wsd_sess_send(struct wsd_sess *s, struct wsd_msg *m);

/* Queues a copy of `len` bytes for `s`. */
void wsd_sess_send_bytes(struct wsd_sess *s, const void *data, size_t len);

/* Ends a session: what is queued is still sent (unless code is 1013: a laggard), then a close frame with code and reason. */
void wsd_sess_close(struct wsd_sess *s, int code, const char *reason);

/* y-protocols auth.js writePermissionDenied: [2, 0, varString(reason)], then the close (1008). */
void wsd_sess_deny(struct wsd_sess *s, const char *reason);

/* ------------------------------------------------------------------ awareness (awareness.c) */

/*
 * An awareness update (y-protocols awareness.js applyAwarenessUpdate) from
 * session s: the states whose clock moves on are kept and relayed to the
 * room, sender included. Beyond y-protocols, for a server many people
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
 * O(k log n + n) for k entries in a room of n states. Returns 0,
 * SVC_E_VALIDATION (malformed: the caller closes with 1003) or
 * SVC_E_RATE_LIMITED (over the budget: the caller closes with 1008).
 */
int wsd_aw_rx(struct wsd_sess *s, const uint8_t *data, size_t len);

/*
 * Query-awareness ([3]) from session s: every known state, as
 * wsd_aw_send_all, charged to the connection's budget as the number of
 * states plus 16. Returns 0 or SVC_E_RATE_LIMITED (nothing sent: the caller
 * closes with 1008).
 */
int wsd_aw_query(struct wsd_sess *s);

/* Sends `s` every known state of room r, nothing when there is none: the answer to query-awareness, and a joiner's welcome. */
void wsd_aw_send_all(struct wsd_room *r, struct wsd_sess *s);

/* Removes the states session `sess_id` added (awareness.js removeAwarenessStates) and tells the room. */
void wsd_aw_sess_left(struct wsd_room *r, uint64_t sess_id);

/* Relays deferred states (every tick); times out states not renewed for SVC_WSD_AWARENESS_TIMEOUT_MS (checked every few seconds). */
void wsd_aw_check(struct wsd_room *r, int64_t now);

/* Frees the room's awareness states. */
void wsd_aw_dispose(struct wsd_room *r);

/* ------------------------------------------------------------------ design comments (comments.c) */

/* A design-comment request (message 100, its JSON text) from session s: checked, then stored through the API. */
void wsd_comments_rx(struct wsd_sess *s, const uint8_t *json, size_t len);

/* Takes the comments a load found (res->comments' JSON, set to NULL). */
void wsd_comments_load(struct wsd_room *r, struct wsd_load_result *res);

/* Sends a joining session every open comment as design-comment:added. */
void wsd_comments_welcome(struct wsd_room *r, struct wsd_sess *s);

/* Frees the room's comments. */
void wsd_comments_dispose(struct wsd_room *r);

/* ------------------------------------------------------------------ disk (disk.c) */

/* Takes the disk state a load found: the known hashes, meta.binaryFiles, the files with unsaved edits. */
void wsd_disk_load(struct wsd_room *r, struct wsd_load_result *res);

/*
 * The files of the document a committed batch changed (`rep`) get unsaved
 * edits: they are saved once edits settle, and their text on disk is read
 * as a merge base when they had none.
 */
void wsd_disk_edited(struct wsd_room *r, const struct svc_yjs_report *rep);

/*
 * Saves the dirty files once edits settle (SVC_WSD_SAVE_DELAY_MS, at most
 * ten times that during continuous edits, at once when `empty` or the daemon
 * stops), then calls files-changed once per burst of saves.
 */
void wsd_disk_tick(struct wsd_room *r, int64_t now, int empty);

/* Frees the room's disk state. */
void wsd_disk_dispose(struct wsd_room *r);

/*
 * The quota (issue 25, item 15): may an update of `len` bytes from `s` be
 * integrated into its room? 1 when it fits what r->quota_left allows; 0 when
 * it would pass the project's or the workspace's byte quota: the sender is
 * told (message 100, {"type": "error", "error": "payload_too_large",
 * message}) and the update must be dropped. An update's bytes bound what it
 * adds to the files (its inserted text is in it verbatim).
 */
int wsd_disk_quota_allows(struct wsd_sess *s, size_t len);

/* An update of `len` bytes was integrated: it counts against r->quota_left until the next save measures again. */
void wsd_disk_quota_used(struct wsd_room *r, size_t len);

/*
 * 1 while rows of collab_files (the hash of what svc-wsd last wrote or read per file) wait for
 * MariaDB: a save that could not record its files, a disk change taken into the document. The
 * room's updates wait meanwhile: an update stored after a file whose hash MariaDB lacks would be
 * undone by the next load, which takes that file for someone else's change (issue 25).
 */
int wsd_disk_records_wait(const struct wsd_room *r);

#endif
