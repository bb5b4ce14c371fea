/* githttp.h: a project's repository over Git's smart HTTP: git-http-backend run and streamed, svc's pre-receive check, the working tree following a push to main, the branches. */
#ifndef SVC_GITHTTP_H
#define SVC_GITHTTP_H

#include <stddef.h>
#include <stdint.h>

#include "auth/caller.h"
#include "core/config.h"
#include "db/db.h"

/* The services a client may ask for under /git/<projectId>.git/ (git-http-backend(1) "Smart HTTP"). */
enum svc_git_service {
	SVC_GIT_REFS_UPLOAD,   /* GET info/refs?service=git-upload-pack: the refs, to clone or fetch */
	SVC_GIT_REFS_RECEIVE,  /* GET info/refs?service=git-receive-pack: the refs, to push */
	SVC_GIT_UPLOAD,        /* POST git-upload-pack: a clone's or fetch's negotiation and pack */
	SVC_GIT_RECEIVE,       /* POST git-receive-pack: a push's commands and pack */
};

/*
 * Parses the rest of a smart-HTTP path, "<projectId>.git/<what>" (`rest`,
 * percent-decoded, without the leading "/api/git/"), and its raw query
 * string into the project id (out_id, 37 bytes) and the service. Only the
 * smart protocol's three paths are known (the dumb protocol's files are
 * not served). Returns 0, or SVC_E_NOT_FOUND for anything else (an id that
 * is no well-formed UUID, another path, info/refs without a known service).
 */
int svc_git_parse_path(const char *rest, const char *query, char *out_id, enum svc_git_service *out_service);

/* Returns 1 when `service` pushes (the refs of git-receive-pack and git-receive-pack itself), else 0. */
int svc_git_service_writes(enum svc_git_service service);

/* How svc_git_http_run() reaches the client: what the caller's responder does with FastCGI. */
struct svc_git_io {
	/* reads up to max bytes of the request body; > 0 a count, 0 its end, < 0 a broken stream */
	long (*read)(void *arg, void *buf, size_t max);
	/* git-http-backend's headers are in: `status` (200 when it gave none), its Content-Type (NULL when
	 * none) and its other headers to pass on ("Name: value\r\n" lines, "" when none); 0 or < 0 to stop */
	int (*begin)(void *arg, int status, const char *content_type, const char *headers);
	/* `len` bytes of the body, to send and flush at once; 0 or < 0 when the client went away */
	int (*write)(void *arg, const void *data, size_t len);
	/* a push's body is all in the program's stdin (NULL: nothing to do): the caller takes the project's
	 * lock here; svc's hook waits for this to return 0 before it lets any ref move (< 0 refuses the push) */
	int (*body_done)(void *arg);
	void *arg;
};

/* One request for svc_git_http_run(). Strings are borrowed; NULL for what the request did not carry. */
struct svc_git_request {
	const char *project_id;       /* the project (a UUID; its directory is svc_project_dir()'s) */
	const char *workspace_id;     /* its workspace, for the push's quota check */
	enum svc_git_service service;
	const char *user_id;          /* the caller, git-http-backend's REMOTE_USER */
	const char *client_addr;      /* REMOTE_ADDR */
	const char *content_type;     /* CONTENT_TYPE of a POST */
	const char *content_encoding; /* HTTP_CONTENT_ENCODING (git sends gzip'd negotiations) */
	const char *git_protocol;     /* HTTP_GIT_PROTOCOL ("version=2") */
	uint64_t max_body_bytes;      /* the most of the request body passed on; more ends the request */
	const char *hooks_dir;        /* svc's hooks (core.hooksPath): the directory holding pre-receive */
};

/*
 * Runs git-http-backend (SVC_GIT_HTTP_BACKEND) for request `r` on the
 * project's repository and streams both ways: the request body from
 * io->read into the program's stdin, its stdout to io->begin and io->write
 * as it comes (poll(2) on both pipes, 64 KiB at a time: nothing is held
 * whole in memory, and neither side can block the other). The program gets
 * GIT_PROJECT_ROOT (SVC_DATA_DIR/projects), PATH_INFO "/<id>/<path>",
 * REMOTE_USER, the CGI variables of the request and, through
 * GIT_CONFIG_COUNT/KEY/VALUE, http.receivepack, receive.denyCurrentBranch
 * ignore (svc moves the working tree itself: svc_git_follow_main),
 * receive.fsckObjects, core.hooksPath `r->hooks_dir` (main's fast-forward
 * rule is the hook's, svc_git_prereceive(): other branches may be
 * force-pushed), and no system
 * or global configuration (GIT_CONFIG_NOSYSTEM, GIT_CONFIG_GLOBAL=/dev/null,
 * no HOME); the responder's own environment passes on without its GIT_*
 * variables, with SVC_GIT_PROJECT_ID, SVC_GIT_WORKSPACE_ID and
 * SVC_GIT_USER_ID for the hook. A push also gets a gate: the read end of a
 * pipe as fd 3 (SVC_GIT_GATE_FD), on which svc's hook waits for one byte
 * that is written once io->body_done returned 0, so no ref moves before the
 * caller holds what body_done took (the project's lock) while the upload
 * itself holds nothing. It is stopped after SVC_GIT_TIMEOUT
 * seconds, when the body passes r->max_body_bytes, or when the client goes.
 * *out_status is the HTTP status sent (0 when nothing was). Returns 0,
 * SVC_E_TOO_LARGE (the body passed its cap before anything was sent),
 * SVC_E_CLIENT_GONE, SVC_E_INTERNAL (the program could not run, or broke
 * before its headers).
 */
int svc_git_http_run(const struct svc_config *cfg, const struct svc_git_request *r, const struct svc_git_io *io,
		     int *out_status);

/*
 * Writes the commit id main points at in the repository of project
 * directory `dir` into out_sha (41 bytes; "" when main does not exist).
 * Returns 0 or SVC_E_INTERNAL.
 */
int svc_git_main_sha(const char *dir, char *out_sha);

/*
 * After a push moved main from `old_sha` to what it is now (svc_git_main_sha),
 * makes project `id`'s working tree (`dir`) follow: each file the push
 * changed between the two trees is written (svc_fsx_write: temp file and
 * rename) or deleted; a changed file whose working-tree copy differs from
 * main's old blob (edits svc-wsd saved and did not commit yet) gets a
 * three-way merge of that copy and the push over the old blob
 * (git_merge_file, the push's side in a conflict); files the push did not
 * touch keep what they hold, and the index becomes main's tree, so the next
 * svc_repo_commit_all() commits only what the working tree has beyond it.
 * Then svc_project_changed() tells svc-wsd (which merges the files into
 * open documents), the thumbnail and the preview. The caller holds the
 * project's lock (svc_project_lock). *out_moved is 1 when main moved, 0 when
 * it did not (nothing is done then). Returns 0 or SVC_E_INTERNAL (logged).
 */
int svc_git_follow_main(const struct svc_caller *c, const char *id, const char *dir, const char *old_sha,
			int *out_moved);

/* One branch of a project's repository, as svc_git_branches() lists it. */
struct svc_git_branch {
	char name[256];          /* without "refs/heads/" */
	char sha[41];            /* the commit it points at */
	int64_t time_ms;         /* that commit's time (Git's one-second precision) */
};

/*
 * Lists at most `max` branches of the repository of `dir`, main first, then
 * by name, into a malloc'd array (*out, *out_n; the caller frees it with
 * free()). Returns 0 or SVC_E_INTERNAL.
 */
int svc_git_branches(const char *dir, size_t max, struct svc_git_branch **out, size_t *out_n);

/* What svc's pre-receive check allows (svc_git_prereceive). */
struct svc_git_limits {
	uint64_t max_file_bytes;   /* SVC_QUOTA_FILE_BYTES */
	uint64_t room_bytes;       /* what the project's directory may still grow by (svc_quota_repo_room); UINT64_MAX none */
	const char *quarantine;    /* GIT_QUARANTINE_PATH: the pushed objects, not yet in the repository; NULL none */
};

/*
 * svc's pre-receive check of a push into the repository `git_dir` (the
 * hook's GIT_DIR), whose commands are `input` ("<old> <new> <ref>\n"
 * lines, as git gives a pre-receive hook, `len` bytes). Refuses, with one
 * sentence for the user in `why` (why_max bytes; git prints it as
 * "remote: ..."): deleting main or a non-fast-forward update of main, any
 * new commit (reachable from a pushed ref and from no existing ref) whose
 * tree holds a symlink, a submodule, a path that svc_fsx_check_path()
 * refuses (outside the tree, under .git) or a file over
 * l->max_file_bytes, pushed objects more than l->room_bytes in all, and
 * a new main whose svc.data.json is not a valid declaration of the apps'
 * backend (svc_app_decl_guard(), the same check as a save's; `why` is the
 * parser's message naming the line). The objects are read from the
 * repository and its quarantine. Returns 0,
 * SVC_E_VALIDATION (refused, `why` set), SVC_E_TOO_LARGE (a quota, `why`
 * set) or SVC_E_INTERNAL.
 */
int svc_git_prereceive(const char *git_dir, const char *input, size_t len, const struct svc_git_limits *l,
		       char *why, size_t why_max);

#endif
