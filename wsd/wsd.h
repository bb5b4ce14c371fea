/* wsd.h: the parts of svc-wsd shared between its files: protocol codec, rooms, sessions, worker jobs. */
#ifndef SVC_WSD_H
#define SVC_WSD_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "auth/auth.h"
#include "core/config.h"
#include "db/db.h"
#include "core/util.h"
#include "yjs/yjs.h"

/* ------------------------------------------------------------------ protocol (proto.c, no lws) */

/* y-protocols message types (y-websocket src/y-websocket.js) and ours. */
enum {
	WSD_MSG_SYNC = 0,
	WSD_MSG_AWARENESS = 1,
	WSD_MSG_AUTH = 2,
	WSD_MSG_QUERY_AWARENESS = 3,
	WSD_MSG_DESIGN_COMMENT = 100, /* svc: varString(JSON), docs/collaboration.md */
	WSD_MSG_PEOPLE = 101,         /* svc: client [101]; server [101, varString(JSON {users})], docs/collaboration.md */
};

/* Sync sub-types (y-protocols sync.js). */
enum { WSD_SYNC_STEP1 = 0, WSD_SYNC_STEP2 = 1, WSD_SYNC_UPDATE = 2 };

/* A reader over untrusted bytes: every read checks `end` first. */
struct wsd_reader {
	const uint8_t *p;
	const uint8_t *end;
};

/* lib0 readVarUint: at most 2^53-1 (Number.MAX_SAFE_INTEGER). Returns 0 or SVC_E_VALIDATION. */
int wsd_read_varuint(struct wsd_reader *r, uint64_t *out);

/* lib0 readVarUint8Array / readVarString bytes (no copy): *out points into the reader. */
int wsd_read_varbytes(struct wsd_reader *r, const uint8_t **out, size_t *out_len);

/* Appends lib0 varUint / varUint8Array / varString to `b`. Return 0 (the core aborts on no memory). */
int wsd_write_varuint(struct svc_yjs_buf *b, uint64_t v);
int wsd_write_varbytes(struct svc_yjs_buf *b, const void *data, size_t len);

/* One entry of an awareness update (y-protocols awareness.js encodeAwarenessUpdate). */
struct wsd_aw_entry {
	uint64_t client;
	uint64_t clock;
	const uint8_t *json;  /* JSON text of the state ("null" = removed), into the message */
	size_t json_len;
};

/*
 * Splits an awareness update (the payload after the message type: the
 * varUint8Array contents) into at most `max` entries. Checks the count
 * against the bytes present before anything else and that each state is
 * JSON (parsed with json-c, nesting capped). Returns the number of entries
 * (>= 0) or SVC_E_VALIDATION.
 */
int wsd_awareness_parse(const uint8_t *data, size_t len, struct wsd_aw_entry *out, size_t max);

/* Returns 1 when an entry's JSON text is `null` (the client left). */
int wsd_aw_is_null(const struct wsd_aw_entry *e);

/*
 * Whether an awareness state may come from a socket of user `user_id` (a
 * lower-case UUID, NUL-terminated): the people list and cursors show
 * `state.user.id` as who is there, so a state that names a user id names
 * the socket's own. `json`, `len`: the state's JSON text (as checked by
 * wsd_awareness_parse). Returns 1 when the state is not an object, has no
 * `user` object, its `user` has no `id`, or that id is the string
 * `user_id`; 0 otherwise (another id, an id that is not a string, JSON that
 * does not parse). Parsed with json-c as JSON.parse reads it: escapes
 * decoded, the last of a repeated key counts. docs/collaboration.md
 * "Protocol".
 */
int wsd_aw_state_user_ok(const uint8_t *json, size_t len, const char *user_id);

/*
 * Checks the WebSocket Origin header `origin` (NULL = absent, allowed: not a
 * browser) against app_url and the comma-separated SVC_CORS_ORIGINS list:
 * scheme, host and port must match one of them exactly (case-insensitive
 * host, no path). Returns 1 when allowed, else 0.
 */
int wsd_origin_allowed(const char *origin, const char *app_url, const char *cors_origins);

/*
 * Takes the project id from a socket path: "/project/<uuid>" or
 * "/ws/project/<uuid>" (what the proxies pass), a query string is ignored.
 * Writes the lower-case UUID into out (37 bytes). Returns 0 or
 * SVC_E_NOT_FOUND.
 */
int wsd_path_project(const char *path, char *out);

/* A design-comment request from a client, validated (spec "Design comment messages"). */
enum wsd_comment_op { WSD_C_ADD, WSD_C_RESOLVE, WSD_C_UNRESOLVE, WSD_C_DELETE };
struct wsd_comment_req {
	enum wsd_comment_op op;
	char comment_id[37];       /* resolve / unresolve / delete */
	char *content;             /* add: owned, valid UTF-8, 1..10000 code points, not blank */
	double x, y;               /* add: 0..100 */
	char *selector;            /* add: owned or NULL (at most 1024 bytes) */
	char *page_path;           /* add: owned or NULL (at most 1024 bytes) */
	char parent_id[37];        /* add: "" when not a reply */
};

/*
 * Parses the JSON text of a message 100 from a client into `out`. On
 * SVC_E_VALIDATION writes a message for a person into msg (msgmax bytes);
 * on success the caller frees with wsd_comment_req_dispose().
 */
int wsd_comment_parse(const char *json, size_t len, struct wsd_comment_req *out, char *msg, size_t msgmax);
void wsd_comment_req_dispose(struct wsd_comment_req *r);

/* ------------------------------------------------------------------ memory */

/*
 * WSD_GROW(arr, cap, need): SVC_ARRAY_GROW (lib/core/util.h) for svc-wsd,
 * which has no way on without memory: aborts when the array cannot grow.
 */
#define WSD_GROW(arr, cap, need)                                 \
	do {                                                     \
		if (SVC_ARRAY_GROW(arr, cap, need) < 0)          \
			abort();                                 \
	} while (0)

/* ------------------------------------------------------------------ three-way merge (merge.c) */

/* One edit of the live text: bytes [pos, pos + del) become ins[0, ins_len) (ins points into the disk text). */
struct wsd_merge_edit {
	size_t pos, del;
	const char *ins;
	size_t ins_len;
};

/*
 * Three-way merge of UTF-8 texts for a file the API changed on disk while
 * the room held unsaved edits: `base` (bn bytes, what svc-wsd last saw on
 * disk), `live` (ln bytes, the document's text now) and `disk` (dn bytes,
 * the new file). Diffs base -> live and base -> disk (a Myers line diff,
 * each hunk trimmed to the characters that differ, cuts on UTF-8
 * boundaries) and returns the edits that carry disk's hunks into live at the
 * positions live's edits moved them to. Hunks of both sides that touch the
 * same base text (overlap, two insertions at one place, an insertion inside
 * the other's range) form a conflict: disk's version of that whole region
 * replaces live's (the disk wins for that region; the rest of live's edits
 * stay). Like diff3 (GNU diffutils), but resolved instead of marked.
 * *out (free() it) gets the edits sorted by `pos`, non-overlapping, in live
 * coordinates before any of them is applied; *nconflicts (may be NULL) the
 * number of conflicting regions. Returns 0 (the process aborts on no memory).
 */
int wsd_merge3(const char *base, size_t bn, const char *live, size_t ln, const char *disk, size_t dn,
	       struct wsd_merge_edit **out, size_t *nout, size_t *nconflicts);

/*
 * Applies `n` edits from wsd_merge3() to the Y.Text root[key] whose text is
 * `live` (the same bytes the edits were computed on), as one transaction of
 * deletes and inserts (lib/yjs public API, UTF-16 positions), appending the
 * update to `out_update`. Returns 0 or the error of lib/yjs
 * (SVC_E_NOT_FOUND when the key holds no text, SVC_E_VALIDATION when
 * `live` is not the text).
 */
int wsd_merge_apply(struct svc_yjs_doc *doc, const char *root, const char *key, size_t key_len, const char *live,
		    const struct wsd_merge_edit *edits, size_t n, struct svc_yjs_buf *out_update);

/* ------------------------------------------------------------------ workers (worker.c) */

struct wsd_worker;
struct wsd_job;

/* Runs on a worker thread with that worker's database connection (may be NULL when MariaDB is down). */
typedef void (*wsd_job_run)(struct wsd_job *job, struct wsd_worker *w);
/* Runs on the event loop once the job ran; frees the job. */
typedef void (*wsd_job_done)(struct wsd_job *job);

struct wsd_job {
	struct wsd_job *next;
	wsd_job_run run;
	wsd_job_done done;
};

struct wsd_worker {
	const char *name;
	const struct svc_config *cfg;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct wsd_job *head, *tail;
	size_t queued;
	int stop;
	struct svc_db *db;
};

/* Starts a worker thread. Returns 0 or SVC_E_INTERNAL. */
int wsd_worker_start(struct wsd_worker *w, const char *name, const struct svc_config *cfg);
/* Queues a job (FIFO per worker). */
void wsd_worker_push(struct wsd_worker *w, struct wsd_job *job);
/* Stops the thread after the queued jobs ran; their done callbacks still run from wsd_worker_drain_done(). */
void wsd_worker_stop(struct wsd_worker *w);
/* The worker's database connection, opened (again) when needed; NULL when MariaDB is unreachable. */
struct svc_db *wsd_worker_db(struct wsd_worker *w);
/* Runs the done callbacks of finished jobs (event loop only). Returns how many ran. */
size_t wsd_worker_drain_done(void);
/* Set by main: called (from any thread) when a job finished, to wake the event loop. */
extern void (*wsd_wake)(void);

/* ------------------------------------------------------------------ rooms and sessions */
/* room.c (rooms, batching, the tick), session.c, awareness.c, comments.c, disk.c; room.h: what they share. */

struct wsd_msg {
	unsigned refs;
	size_t len;
	unsigned char buf[]; /* WSD_PRE bytes of room for the frame header, then len bytes */
};
#define WSD_PRE 16

struct wsd_room;
struct wsd_user;

enum wsd_sess_state {
	WSD_S_AUTH,      /* waiting for the role lookup */
	WSD_S_WAIT_ROOM, /* authorised, the room's document is loading */
	WSD_S_OPEN,      /* in the room */
	WSD_S_CLOSING,   /* a close frame is due */
};

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

/* Global daemon state, owned by the event loop thread. */
struct wsd {
	struct svc_config cfg;
	struct lws_context *ctx;
	struct wsd_worker db_worker;  /* role lookups, loads, persistence */
	struct wsd_worker io_worker;  /* disk writes and reads, calls to the API */
	uint64_t next_sess_id;
	size_t nsess;
	size_t nrooms;
	int stopping;
	int64_t stop_deadline_ms;
	int trim_wanted;              /* big buffers were freed: hand free pages back (malloc_trim) */
	int64_t trimmed_ms;
	char instance[192];           /* this daemon's name in room_leases (wsd_lease_instance) */
	char internal_url[256];       /* where the API reaches it: SVC_WSD_INTERNAL_URL or http://127.0.0.1:<port> */
};
extern struct wsd *wsd_g; /* set by main (wsd.c) */

/* Room leases (lease.c; the rest of it in room.h). */
/*
 * Writes this daemon's name in room_leases into out (`max` bytes): "<SVC_INSTANCE_ID or
 * hostname>:wsd:<SVC_WS_PORT>", so a daemon restarted on the same host and port takes its own
 * leases back at once. Returns 0 or SVC_E_INTERNAL.
 */
int wsd_lease_instance(const struct svc_config *cfg, char *out, size_t max);

/*
 * Takes project_id's lease for this instance for SVC_WSD_LEASE_SECONDS: a new one, or one that is
 * this instance's already or expired. Worker thread (the room's load). Returns 0, SVC_E_CONFLICT
 * (another instance holds it and it has not expired), or DB errors.
 */
int wsd_lease_take(struct svc_db *db, const char *project_id);

/* At stop, after the workers ended: gives back every lease of this instance (its own connection). */
void wsd_lease_release_all(const struct svc_config *cfg);

/*
 * Session life (session.c, called from the protocol callback). `s` lives in
 * the connection's per-session data, filled by the upgrade filter.
 *
 * wsd_sess_open: the socket is open; registers the session, stops reading
 * from it and looks up the role off the loop (denied at once for a bad
 * token or too many connections of the user). Returns 0.
 * wsd_sess_rx: `len` bytes of a frame (first / final fragment, binary or
 * text); a whole message is handled, too big closes with 1009, text or
 * malformed with 1003, awareness over the connection's budget with 1008.
 * wsd_sess_writeable: sends queued messages (up to 32 per call while the
 * socket takes them), or the close frame. Returns -1 when lws is to close
 * the connection, else 0.
 * wsd_sess_closed: the connection is gone; the session leaves its room and
 * its buffers are freed (the struct itself is the caller's).
 */
int wsd_sess_open(struct wsd_sess *s, struct lws *wsi);
void wsd_sess_rx(struct wsd_sess *s, const void *in, size_t len, int first, int final, int binary);
int wsd_sess_writeable(struct wsd_sess *s);
void wsd_sess_closed(struct wsd_sess *s);

/*
 * Called every tick: every SVC_WSD_RECHECK_SECONDS, the open sockets' sign-in session and access
 * are checked again off the loop (wsd_store_recheck, in batches). A session that ended (logout,
 * password change or reset, expiry), a project deleted or no access any more closes the socket
 * with permission-denied and 1008, as at the upgrade; a role changed since applies from then on.
 * `now` in svc_mono_ms() milliseconds. docs/collaboration.md "Access of an open socket".
 */
void wsd_sess_recheck_tick(int64_t now);

/* Internal endpoint (disk.c): the API changed a project's files on disk. Returns 0 or SVC_E_NOT_FOUND (no room). */
int wsd_room_disk_changed(const char *project_id);

/*
 * Commits every room's batch of clients' updates read in this event-loop
 * iteration: one broadcast and one stored update per room (see
 * svc_yjs_batch_begin). Called after every lws_service() round.
 */
void wsd_flush(void);

/* The periodic work: persistence batches, saves, awareness timeouts, unloading. Every WSD_TICK_MS. */
#define WSD_TICK_MS 25
void wsd_tick(void);
/* 1 when every room is saved and persisted (for a clean stop). */
int wsd_all_clean(void);
/* Counts for GET /internal/status: rooms, sessions. */
void wsd_stats(size_t *rooms, size_t *sessions);
/* The string content of every open room's document, summed (lib/yjs svc_yjs_doc_memory; O(structs)). */
void wsd_text_stats(struct svc_yjs_mem *sum);

#endif
