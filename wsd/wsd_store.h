/*
 * wsd_store.h: svc-wsd's jobs for MariaDB, the disk and the API, run on the worker threads (store.c).
 *
 * Every wsd_store_*() is called on the event loop and takes what its job
 * needs: the worker that runs it (svc-wsd's db worker for MariaDB, its io
 * worker for files and calls to the API), the project id, and `r`, the
 * caller's room, which the job hands back to `cb` as j->room without
 * looking at it. store.c knows nothing of rooms and calls nothing of
 * room.c. `cb` runs on the event loop once the job ran; the job and what it
 * owns are freed after `cb` returns.
 */
#ifndef SVC_WSD_STORE_H
#define SVC_WSD_STORE_H

#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include "auth/auth.h"
#include "proto.h"
#include "worker.h"

struct wsd_room;

/* One integrated update waiting for MariaDB. */
struct wsd_update {
	uint64_t seq;
	uint8_t *data;
	size_t len;
};

/* What svc-wsd last wrote to or read from disk: path -> SHA-256 hex (table collab_files). */
struct wsd_known_entry {
	char *path;
	char hash[65];
};
struct wsd_known {
	struct wsd_known_entry *e;
	size_t n, cap;
};
const char *wsd_known_get(const struct wsd_known *k, const char *path);
void wsd_known_set(struct wsd_known *k, const char *path, const char *hash);
void wsd_known_del(struct wsd_known *k, const char *path);
void wsd_known_dispose(struct wsd_known *k);

/*
 * A row of collab_files that is due: the hash of what svc-wsd wrote or read last for `path` (a save
 * whose record did not reach MariaDB, a disk change taken into the document), or its removal.
 */
struct wsd_file_record {
	char *path;
	char hash[65];             /* "" when del */
	int del;                   /* the file is gone: its row goes */
};

/* A file as found on disk: its content (text files only), or its removal. */
struct wsd_disk_file {
	char *path;
	char *content;  /* NULL when deleted or not text */
	size_t len;
	char hash[65];
	int deleted;
};

/* --- who may join: the role lookup --- */
struct wsd_access_job {
	struct wsd_job base;
	uint64_t sess_id;
	char user_id[37], project_id[37];
	struct svc_auth_claims who; /* the token's claims */
	int error;                 /* 0, SVC_E_UNAUTHORIZED (the token's session ended, or the password changed since it
				    * was issued: svc_session_check), SVC_E_NOT_FOUND (no such project), SVC_E_UNAVAILABLE */
	int member;                /* may write */
	int public_read;           /* may read */
	int moderate;              /* may delete other members' design comments (SVC_ACT_COMMENT_MODERATE) */
	char user_name[160];
	void (*cb)(struct wsd_access_job *j);
};
/*
 * On `w` (the db worker): checks the token whose claims are `who` against its server-side session
 * (svc_session_check), then looks up who->user_id's role in project_id (lib/auth/perm.h rules);
 * sess_id goes back in j.
 */
void wsd_store_access(struct wsd_worker *w, uint64_t sess_id, const struct svc_auth_claims *who, const char *project_id,
		      void (*cb)(struct wsd_access_job *j));

/* --- the periodic check of open sockets: the same check, for up to WSD_RECHECK_BATCH sockets at a time --- */
#define WSD_RECHECK_BATCH 64
struct wsd_recheck_job {
	struct wsd_job base;
	struct wsd_access_job *items; /* n checks, as wsd_store_access fills them (their base and cb unused) */
	size_t n;
	void (*cb)(struct wsd_recheck_job *j);
};
/*
 * On `w` (the db worker): runs wsd_store_access's check for each of the n items (sess_id, who,
 * user_id and project_id set by the caller), then calls cb on the loop thread. Takes ownership
 * of `items` (malloc'd; freed after cb). docs/collaboration.md "Access of an open socket".
 */
void wsd_store_recheck(struct wsd_worker *w, struct wsd_access_job *items, size_t n, void (*cb)(struct wsd_recheck_job *j));

/* --- loading a room's document --- */
struct wsd_loaded_comment {
	char id[37], parent_id[37], user_id[37];
	int resolved;
	char *added_json;          /* the design-comment:added message (owned) */
};
struct wsd_load_result {
	int error;                  /* SVC_E_CONFLICT: another instance holds the room's lease */
	int64_t lease_ms;           /* when the load asked for the lease (svc_mono_ms): it holds from then on */
	struct svc_yjs_doc *doc;
	uint64_t next_seq, since_snapshot;
	uint64_t log_bytes;         /* bytes of the updates stored after the snapshot */
	uint64_t snapshot_bytes;    /* the snapshot's size */
	struct wsd_known known;
	char **dirty;              /* files whose document text was never written to disk */
	size_t ndirty, capdirty;
	struct wsd_loaded_comment *comments;
	size_t ncomments;
	char *binary_json;         /* meta.binaryFiles as set (JSON array text, owned) */
	uint64_t quota_left;       /* what the byte quotas leave (svc_quota_repo_room; UINT64_MAX: no limit) */
};
/*
 * Loads the room's document on `w` (the db worker), once it took the room's
 * lease (room_leases, lease.h): the snapshot and the
 * update log from MariaDB, then brings it in line with the disk (files
 * changed on disk since svc-wsd last saw them replace the document's text;
 * documents that never existed are built from the files). Calls `cb` on the
 * event loop; what it takes out of `res` it sets to NULL.
 */
void wsd_store_load(struct wsd_worker *w, const char *project_id, struct wsd_room *r,
		    void (*cb)(struct wsd_room *r, struct wsd_load_result *res));

/* --- the update log --- */
struct wsd_persist_job {
	struct wsd_persist_job *next;  /* the next room of the same batch */
	struct wsd_room *room;
	char project_id[37];
	struct wsd_update *updates;
	size_t n;
	int error;
	void (*cb)(struct wsd_persist_job *j);
};
/*
 * Queues project_id's `n` updates (takes `updates` and their data) for the
 * next wsd_store_persist_flush(). Event loop only. `cb` runs on the event
 * loop once the batch ran, with j->error 0 or the batch's error (then none
 * of the batch's updates is stored; the caller queues them again).
 */
void wsd_store_persist(const char *project_id, struct wsd_room *r, struct wsd_update *updates, size_t n,
		       void (*cb)(struct wsd_persist_job *j));
/*
 * Writes every queued room's updates to the update log in one transaction
 * (one prepared INSERT per update, one COMMIT), as one job of `w` (the db
 * worker). Called once per tick, and by wsd_store_compact() so that the
 * worker stores the updates a snapshot covers before the snapshot.
 */
void wsd_store_persist_flush(struct wsd_worker *w);

struct wsd_compact_job {
	struct wsd_job base;
	struct wsd_room *room;
	char project_id[37];
	uint64_t seq;
	struct svc_yjs_buf state;
	int error;
	void (*cb)(struct wsd_compact_job *j);
};
/*
 * Stores `state` (taken) as project_id's snapshot covering updates up to
 * `seq`, and drops those updates, on `w` (the db worker), after flushing
 * the queued updates to the same worker.
 */
void wsd_store_compact(struct wsd_worker *w, const char *project_id, struct wsd_room *r, uint64_t seq,
		       struct svc_yjs_buf *state, void (*cb)(struct wsd_compact_job *j));

/* --- document -> disk --- */
enum { WSD_SAVE_SKIPPED, WSD_SAVE_WRITTEN, WSD_SAVE_DELETED, WSD_SAVE_UNCHANGED, WSD_SAVE_CONFLICT };
struct wsd_save_file {
	char *path;
	char *content;
	size_t len;
	int remove;                /* the key is gone from the document: remove the file */
	char base_hash[65];        /* what svc-wsd believes is on disk ("" = nothing) */
	char new_hash[65];
	int outcome;
	int recorded;              /* its collab_files row was written (else the caller records it later) */
};
struct wsd_save_job {
	struct wsd_job base;
	struct wsd_room *room;
	char project_id[37];
	struct wsd_save_file *files;
	size_t nfiles;
	int defer_records;         /* records of the room wait: the files' collab_files rows are left to the caller */
	struct wsd_disk_file *conflicts; /* files changed on disk by someone else meanwhile */
	size_t nconflicts;
	int error;                 /* SVC_E_TOO_LARGE: over a byte quota, nothing written (why says which) */
	char why[320];
	int have_quota;            /* quota_left was measured after the save */
	uint64_t quota_left;       /* what the byte quotas leave now (UINT64_MAX: no limit) */
	void (*cb)(struct wsd_save_job *j);
};
/*
 * Writes project_id's `n` files (temporary file + rename) on `w` (the io
 * worker) unless the disk changed under them; takes `files`. When what the
 * files would add passes the project's SVC_QUOTA_REPO_BYTES or the
 * workspace's SVC_QUOTA_WORKSPACE_BYTES, none is written (error
 * SVC_E_TOO_LARGE); with MariaDB out of reach the quotas are not checked
 * (clients' updates were, disk.c's on_update). Then measures quota_left. Each file written or
 * removed gets its collab_files row (f->recorded) unless `defer_records` (older records of the
 * room still wait: a newer row must not go in before them) or MariaDB fails; the caller records
 * the others with wsd_store_record(). Conflicts' rows are the caller's too.
 */
void wsd_store_save(struct wsd_worker *w, const char *project_id, struct wsd_room *r, struct wsd_save_file *files,
		    size_t n, int defer_records, void (*cb)(struct wsd_save_job *j));

struct wsd_record_job {
	struct wsd_job base;
	struct wsd_room *room;
	char project_id[37];
	struct wsd_file_record *records;
	size_t n;
	int error;
	void (*cb)(struct wsd_record_job *j);
};
/*
 * Writes `n` collab_files rows of project_id (takes `records` and their paths) in one transaction on
 * `w` (the db worker); j->error 0, or the error when none went in.
 */
void wsd_store_record(struct wsd_worker *w, const char *project_id, struct wsd_room *r,
		      struct wsd_file_record *records, size_t n, void (*cb)(struct wsd_record_job *j));

/* --- disk -> document --- */
struct wsd_rescan_job {
	struct wsd_job base;
	struct wsd_room *room;
	char project_id[37];
	struct wsd_known known;    /* a copy */
	struct wsd_disk_file *files;
	size_t nfiles;
	char *binary_json;         /* the files left out of the document now (JSON array text, owned) */
	int error;
	void (*cb)(struct wsd_rescan_job *j);
};
/*
 * Reads the project's files on `w` (the io worker) and reports those that
 * differ from `known` (copied); a known text file that is now binary or too
 * large is reported deleted (it leaves the document), and binary_json lists
 * the files left out.
 */
void wsd_store_rescan(struct wsd_worker *w, const char *project_id, struct wsd_room *r, const struct wsd_known *known,
		      void (*cb)(struct wsd_rescan_job *j));

/* --- the base of a three-way merge --- */
struct wsd_base_job {
	struct wsd_job base;
	struct wsd_room *room;
	char project_id[37];
	char *path;
	char *content;             /* the file's text (owned; NULL on error) */
	size_t len;
	char hash[65];
	int error;
	void (*cb)(struct wsd_base_job *j);
};
/*
 * Reads one file of project_id (text only) on `w` (the io worker): the merge
 * base of a file that just got its first unsaved edit, valid when its hash
 * is still the one svc-wsd knows (the caller checks).
 */
void wsd_store_read_base(struct wsd_worker *w, const char *project_id, struct wsd_room *r, const char *path,
			 void (*cb)(struct wsd_base_job *j));

/* --- calls to the API --- */
struct wsd_call_job {
	struct wsd_job base;
	struct wsd_room *room;
	char path[160];
	char *body;
	char **paths, **users;
	size_t npaths, nusers;
	long status;
	void (*cb)(struct wsd_call_job *j);
};
/* POST /internal/projects/:id/files-changed {paths, userIds} on `w` (the io worker); takes both lists. */
void wsd_store_files_changed(struct wsd_worker *w, const char *project_id, struct wsd_room *r, char **paths,
			     size_t npaths, char **users, size_t nusers, void (*cb)(struct wsd_call_job *j));
/* POST /internal/projects/:id/presence {users} on `w` (the io worker); takes `users`. */
void wsd_store_presence(struct wsd_worker *w, const char *project_id, struct wsd_room *r, struct json_object *users,
			void (*cb)(struct wsd_call_job *j));

struct wsd_comment_job {
	struct wsd_job base;
	struct wsd_room *room;
	uint64_t sess_id;
	enum wsd_comment_op op;
	char comment_id[37], parent_id[37];
	char user_id[37];          /* who asked (an added comment's author) */
	char path[160];
	char *body;                /* the internal call's body */
	char *broadcast;           /* the message for the room once stored */
	long status;
	void (*cb)(struct wsd_comment_job *j);
};
/*
 * Stores a comment change of user_id (named user_name) in project_id
 * through the API's /internal/design-comments/ endpoints, on `w` (the io
 * worker); j->broadcast is the message for the room once stored.
 */
void wsd_store_comment(struct wsd_worker *w, const char *project_id, struct wsd_room *r, uint64_t sess_id,
		       const char *user_id, const char *user_name, const struct wsd_comment_req *req,
		       void (*cb)(struct wsd_comment_job *j));

#endif
