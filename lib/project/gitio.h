/* gitio.h: Git in and out of svc (docs/git.md): remotes checked and pinned against the outbound guard, imports from a Git URL or a ZIP, the mirror to a forge. */
#ifndef SVC_GITIO_H
#define SVC_GITIO_H

#include <stddef.h>

#include "core/config.h"
#include "db/db.h"
#include "db/jobs.h"

#define SVC_JOB_GIT_IMPORT "git.import"           /* {projectId}: clone the project_imports row's URL */
#define SVC_JOB_GIT_MIRROR_PUSH "git.mirror_push" /* {projectId}: push main to the project's remote */

#define SVC_GITIO_URL_MAX 2048

/* A Git remote: its https URL, its host checked and its address pinned (svc_gitio_resolve()). */
struct svc_gitio_remote {
	char url[SVC_GITIO_URL_MAX + 1];
	char host[256];       /* lower case; an IPv6 literal without its brackets */
	unsigned port;        /* 443 unless the URL says */
	char addr[64];        /* the address checked, the one git connects to */
	const char *username; /* borrowed; NULL or "": "svc" when a token is given */
	const char *token;    /* borrowed; NULL: none */
};

/*
 * Parses `url` into `out` (zeroed first): https only, a host, an optional
 * port, a path; no user name or password in it (they go in their own
 * fields), no query, no fragment, no white space or control characters, at
 * most SVC_GITIO_URL_MAX bytes. Returns 0 or SVC_E_VALIDATION with the
 * reason in `why` (`whymax` bytes).
 */
int svc_gitio_url_parse(const char *url, struct svc_gitio_remote *out, char *why, size_t whymax);

/*
 * Resolves rm->host (c-ares; SVC_DNS_SERVER when set, else the system's
 * resolver; an IP literal as it is) and checks every address against the
 * outbound guard of `cfg` (lib/core/outbound.h: no loopback, private,
 * link-local or other special address unless SVC_OUTBOUND_ALLOW_NETS or
 * SVC_OUTBOUND_ALLOW_PRIVATE allow it). The first address is written into
 * rm->addr: git is then pinned to it (http.curloptResolve), so DNS cannot
 * change between the check and the connection. Returns 0; SVC_E_FORBIDDEN
 * with "<host> is a loopback address" (the address itself is only logged);
 * SVC_E_VALIDATION when the name does not resolve.
 */
int svc_gitio_resolve(const struct svc_config *cfg, struct svc_gitio_remote *rm, char *why, size_t whymax);

/*
 * Unpacks the ZIP of `len` bytes at `data` into the existing empty
 * directory `dest`: at most SVC_IMPORT_ZIP_ENTRIES entries and
 * SVC_IMPORT_MAX_MB MiB unpacked (counted as the bytes are written, not
 * as the archive claims); every name through svc_fsx_check_path() (no
 * absolute path, no "..", nothing under .git); no symlink (nor any entry
 * whose Unix mode is not a file or a directory); no encrypted entry. When
 * every file sits under one top folder (as forges' "Download ZIP" makes
 * them) that folder is dropped. Returns 0, or SVC_E_VALIDATION (not a ZIP,
 * a refused entry: `why` names it), SVC_E_TOO_LARGE, SVC_E_INTERNAL; `dest`
 * may then hold part of the files (the caller removes it).
 */
int svc_gitio_zip_extract(const struct svc_config *cfg, const void *data, size_t len, const char *dest, char *why,
			  size_t whymax);

/* What an import from a Git URL starts with (svc_gitio_import_begin()). Strings are borrowed. */
struct svc_gitio_import {
	const struct svc_config *cfg;
	const char *workspace_id;
	const char *user_id;
	const char *url;       /* checked by svc_gitio_url_parse() */
	const char *ref;       /* a branch or tag; NULL: the remote's HEAD */
	const char *username;  /* NULL for none */
	const char *token;     /* NULL for none; sealed (ENCRYPTION_KEY) until the import ends */
};

/*
 * The writes an import adds to the transaction that creates project `id`
 * (struct svc_project_new in_tx, with `arg` a struct svc_gitio_import *):
 * the project_imports row (state importing, the token sealed with aad
 * "project_imports/token_sealed/<id>") and a SVC_JOB_GIT_IMPORT job.
 * Returns 0, SVC_E_UNAVAILABLE (a token and no ENCRYPTION_KEY), DB errors.
 */
int svc_gitio_import_begin(struct svc_db *db, const char *id, void *arg);

/*
 * SVC_JOB_GIT_IMPORT, run by svc-worker (ctx a struct svc_job_ctx *):
 * resolves and checks the remote again and fetches its ref (or HEAD), whole
 * history, as the project's main (git fetch pinned to the address checked,
 * within SVC_IMPORT_MAX_MB and SVC_IMPORT_TIMEOUT_SECS, the token in an
 * Authorization header passed through git's environment, never on a
 * command line nor in the repository's configuration); refuses a tree with a
 * symlink, a submodule or a path svc_fsx_check_path() refuses; checks it out
 * as the working tree, and marks the import done (the preview rebuilds,
 * svc-wsd takes the files) or failed with its reason. Either way the token
 * is forgotten. Safe to run twice. Returns 0 (also when the import failed:
 * that is the project's state, not the job's) or a DB error.
 */
int svc_gitio_import_job(void *ctx, const struct svc_job *job, char *errmsg, size_t errmax);

/*
 * Queues a SVC_JOB_GIT_MIRROR_PUSH of project `project_id` when it has a
 * remote (one read by primary key; nothing when it has none). Called where
 * versions are made. Errors are logged, never returned: a version is made
 * whether its mirror is told or not. Returns 0.
 */
int svc_gitio_mirror_queue(struct svc_db *db, const char *project_id);

/* SVC_JOB_GIT_MIRROR_PUSH: svc_gitio_push() of the payload's project to its remote's branch; retried with backoff. */
int svc_gitio_mirror_push_job(void *ctx, const struct svc_job *job, char *errmsg, size_t errmax);

/*
 * Pushes main of project `project_id` to its remote, as `branch` there
 * (NULL: the remote's configured branch), without force; records the
 * result (time, ok, sha, git's message) on the remote when `branch` is NULL.
 * Returns 0; SVC_E_NOT_FOUND (no remote); SVC_E_CONFLICT (refused by the
 * remote, e.g. not a fast-forward: `why` says); SVC_E_UNAVAILABLE (the
 * remote could not be reached, timeout); SVC_E_FORBIDDEN (the guard);
 * DB errors. `why` (`whymax` bytes) gets git's message.
 */
int svc_gitio_push(struct svc_db *db, const struct svc_config *cfg, const char *project_id, const char *branch,
		   char *why, size_t whymax);

/* What a pull did (svc_gitio_pull()). */
struct svc_gitio_pull_result {
	char result[16];     /* "fast-forward", "up-to-date" */
	char local[41];      /* main before */
	char remote[41];     /* the remote's branch */
	char head[41];       /* main after */
};

/*
 * Fetches the remote's branch of project `project_id` and fast-forwards
 * main to it: the new tree is checked as an import's is, checked out into
 * the working tree under the project's lock, and made a change of the
 * project (updatedAt, svc-wsd, the preview). Returns 0 with *out filled;
 * SVC_E_CONFLICT when the two have diverged (*out has both heads and `why`
 * names them); SVC_E_VALIDATION (a refused tree); SVC_E_NOT_FOUND (no
 * remote, no such branch there); SVC_E_UNAVAILABLE, SVC_E_FORBIDDEN, DB errors.
 */
int svc_gitio_pull(struct svc_db *db, const struct svc_config *cfg, const char *project_id,
		   struct svc_gitio_pull_result *out, char *why, size_t whymax);

#endif
