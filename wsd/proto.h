/* proto.h: svc-wsd's protocol codec (proto.c, no libwebsockets: the unit suite wsd tests it): lib0 varints, awareness updates, design-comment requests, origins and socket paths. */
#ifndef SVC_WSD_PROTO_H
#define SVC_WSD_PROTO_H

#include <stddef.h>
#include <stdint.h>

#include "yjs/yjs.h"

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

#endif
