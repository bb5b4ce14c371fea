/* devserver.h: a project's dev server (Vite, or its package.json `dev` script) in the build sandbox, reached through its own network namespace. */
#ifndef SVC_DEVSERVER_H
#define SVC_DEVSERVER_H

#include <stddef.h>
#include <sys/types.h>

#include "core/config.h"
#include "project/deps.h"
#include "project/sandbox.h"

/*
 * The pieces svc-devd (devd/) puts together (docs/operations.md "Dev
 * servers"). A dev server never reads the working tree itself: projects/ is
 * svc's alone (0700). svc-devd keeps a copy of it, the mirror
 * SVC_DATA_DIR/builds/dev-<projectId>/app, in step with the working tree
 * (svc_devserver_sync(), called after every change it sees), and the sandbox
 * sees that copy read-only as /app, with node_modules from the store of
 * lib/project/deps.h (the tree installed once for this package.json and
 * lockfile, leased while the dev server runs, bound read-only at
 * /app/node_modules; or, for a project the store does not take, installed
 * into the copy) and Vite's cache folders (node_modules/.vite, .vite-temp,
 * .cache) bound writable from SVC_DATA_DIR/builds/dev-<projectId>/cache. The
 * sandbox: lib/project/sandbox.h (its own user, PID, IPC, UTS namespaces,
 * /usr read-only, an empty environment), a cgroup of its own (memory,
 * processes, CPU), no network at all: a network namespace with only `lo`,
 * where the dev server listens on 127.0.0.1:SVC_DEVSERVER_PORT. The only
 * way in is a Unix socket in a directory bound into the sandbox, on which a
 * relay loaded into the dev server's own Node process listens.
 */

#define SVC_DEVSERVER_PORT 5173 /* where every dev server listens, inside its own namespace */

/* What runs a project's dev server. */
enum svc_devserver_kind {
	SVC_DEVSERVER_NONE = 0, /* no package.json, or one with neither a `dev` script nor Vite */
	SVC_DEVSERVER_VITE,     /* `dev` is "vite" (or absent, with vite among the dependencies): Vite's CLI directly */
	SVC_DEVSERVER_SCRIPT    /* another `dev` script: `npm run dev` with PORT and HOST set */
};

/*
 * Reads `dir`/package.json (a trusted directory: the working tree or its
 * mirror) and says what runs its dev server. A missing, unreadable or
 * malformed package.json is SVC_DEVSERVER_NONE.
 */
enum svc_devserver_kind svc_devserver_kind(const char *dir);

/*
 * Brings the mirror `dst` in step with the working tree `src` (both absolute,
 * trusted): copies every regular file that is new or whose size or mtime
 * differs (temporary file + rename, mode 0644, the mtime kept), makes missing
 * directories (0755), removes what `src` no longer has; never touches `.git`
 * nor `dst`'s node_modules and dist (the install's and the build's). Symlinks
 * and special files are left out. Returns the number of files changed (0:
 * in step), or SVC_E_NOT_FOUND when `src` is gone, SVC_E_INTERNAL.
 */
int svc_devserver_sync(const char *src, const char *dst);

/*
 * A stamp of the working tree `src` (trusted): the newest mtime (ns) of its
 * files and directories and their count, .git and node_modules left out, so
 * a failed dev server can be tried again once the project changed. Returns
 * the stamp, 0 when `src` cannot be read.
 */
unsigned long long svc_devserver_tree_stamp(const char *src);

/* A started dev server: its sandbox run, and its way in. Filled by svc_devserver_start(); the spec's
 * strings live here as long as the run (lib/project/sandbox.h). */
struct svc_devserver_proc {
	struct svc_sandbox *sb;    /* the run (NULL: none) */
	int dirfd;                 /* the run's /svc directory on the host, where the relay's socket `s` is */
	char name[80];             /* its cgroup's name */
	const char *argv[16];
	char paths[4][2200];
	struct svc_sandbox_mount mounts[2 + SVC_DEPS_MOUNTS];
	/* node_modules: the store's tree (svc_build_deps()), leased by the caller before svc_devserver_start()
	 * and let go by svc_devserver_stop(); fd -1 (set by the caller) when none */
	struct svc_deps_lease lease;
	char dpaths[2 * SVC_DEPS_MOUNTS][2300]; /* what svc_deps_mounts() keeps for the mounts */
};

/*
 * Starts the dev server of kind `kind` on the mirror `app` with the cache
 * folder `cache` and its own directory `svcdir` (absolute, made by the
 * caller: /svc inside, where the relay's script and socket are) in the
 * sandbox of lib/project/sandbox.h: a cgroup named `name` (unique on the
 * host: "dev-<projectId>"), the build's limits but no CPU-time total, no
 * network at all, `app` read-only at /app; with out->lease holding a store
 * entry (svc_build_deps(), filled by the caller before, kept by this call)
 * its node_modules read-only at /app/node_modules and Vite's cache folders
 * writable from `cache` (svc_deps_mounts()), else `app`'s own node_modules
 * with node_modules/.vite and .vite-temp bound writable from `cache`. Its Node process loads
 * the relay first (NODE_OPTIONS), which joins the Unix socket `svcdir`/s to
 * 127.0.0.1:SVC_DEVSERVER_PORT inside. Output goes to `log_fd`. Returns at
 * once (svc_devserver_ready() tells when it listens). Fills *out (kept at one
 * place until svc_devserver_stop()). Returns 0, SVC_E_UNAVAILABLE (no cgroups
 * here: `why`), SVC_E_INTERNAL.
 */
int svc_devserver_start(const struct svc_config *cfg, enum svc_devserver_kind kind, const char *name,
			const char *app, const char *cache, const char *svcdir, int log_fd,
			struct svc_devserver_proc *out, char *why, size_t why_max);

/*
 * Opens a non-blocking connection to the dev server of `p` (the relay's
 * socket; the connect may still be in progress: wait for POLLOUT). Sets
 * *out_fd (the caller's). Returns 0, or SVC_E_UNAVAILABLE.
 */
int svc_devserver_connect(const struct svc_devserver_proc *p, int *out_fd);

/* 1 when the dev server of `p` answers an HTTP request within `timeout_ms` (twice that at most), else 0. */
int svc_devserver_ready(const struct svc_devserver_proc *p, long timeout_ms);

/* 1 when the run of `p` has ended: it is reaped and freed, *out_status its exit status (128 + signal); else 0. */
int svc_devserver_ended(struct svc_devserver_proc *p, int *out_status);

/* The memory of the run's cgroup now, bytes (0 when unknown or not running). */
unsigned long long svc_devserver_memory(const struct svc_devserver_proc *p);

/* Stops the dev server of `p` (SIGTERM, 2 s, then SIGKILL to its cgroup), reaps it and lets go of its node_modules lease; `p` is empty afterwards. */
void svc_devserver_stop(struct svc_devserver_proc *p);

/* ---- svc-preview's side: one request forwarded to svc-devd ---- */

/* What svc-devd answered (the dev server's answer, or its own). */
struct svc_devserver_answer {
	int status;
	char type[128], cache[128], etag[160], last_modified[64], location[1024];
	char devserver[32]; /* X-Svc-Devserver: "starting", "failed", "unreachable", or "" for the dev server's own */
	char *body;         /* malloc'd (the caller's, svc_devserver_answer_dispose()); NUL-terminated; a chunked one decoded */
	size_t len;
	int cut;            /* 1: the answer ended before its Content-Length or its last chunk, or its framing was
			     * malformed; body is then the bytes as they came, never to be passed on as a whole answer */
};

/*
 * Sends `GET uri` (`uri` the raw request target, query included) with Host
 * `host` (the preview's) and the request headers `headers` ("Name: value"
 * lines without CR/LF, NULL-terminated; the caller picks them) to svc-devd
 * on SVC_DEVD_HOST:SVC_DEVD_PORT, and reads its whole answer (at most
 * `max_bytes` of body, and a sixteenth more of a chunked body's framing)
 * until the connection ends, each read within `timeout_ms`. The body is the
 * answer's by its framing (RFC 9112 §6.3): a chunked body decoded, a
 * Content-Length's bytes, or all until the end; out->cut says when the
 * connection ended before the framing's end (issue 27: a short body must not
 * pass for a whole one). Fills *out. Returns 0, SVC_E_UNAVAILABLE when
 * svc-devd does not answer (not running), answers without a status line and
 * head, or a read times out, SVC_E_TOO_LARGE past max_bytes, SVC_E_INTERNAL.
 */
int svc_devserver_fetch(const struct svc_config *cfg, const char *host, const char *uri, const char *const *headers,
			size_t max_bytes, long timeout_ms, struct svc_devserver_answer *out);

/* Frees what svc_devserver_fetch() put into `a`. */
void svc_devserver_answer_dispose(struct svc_devserver_answer *a);

#endif
