/* build.h: a package.json project's build (npm ci or install, then npm run build) inside bubblewrap, with limits. */
#ifndef SVC_BUILD_H
#define SVC_BUILD_H

#include <stddef.h>

#include "core/config.h"
#include "project/deps.h"

/* What a build may use (docs/operations.md "Builds"): the settings, and the workspace's choice about scripts. */
struct svc_build_opts {
	const char *bwrap;  /* SVC_BUILD_BWRAP: the bubblewrap program, default /usr/bin/bwrap (borrowed from the config) */
	const char *npm;    /* SVC_BUILD_NPM: npm inside the sandbox, default /usr/bin/npm (under /usr: the sandbox sees only /usr) */
	unsigned cpu_secs;  /* SVC_BUILD_CPU_SECS: CPU seconds of each process (RLIMIT_CPU), default 300 */
	unsigned memory_mb; /* SVC_BUILD_MEMORY_MB: address space of each process (RLIMIT_AS), MiB, default 4096 */
	unsigned procs;     /* SVC_BUILD_PROCS: processes of the build's user (RLIMIT_NPROC), default 256 */
	unsigned wall_secs; /* SVC_BUILD_WALL_SECS: the whole build (install and build), default 600 */
	unsigned tmp_mb;    /* SVC_BUILD_TMP_MB: the sandbox's /tmp (a tmpfs), MiB, default 256 */
	unsigned uid;       /* SVC_BUILD_UID: the user builds run as when svc runs as root, default 65534 (nobody) */
	unsigned thumb_uid; /* SVC_THUMB_UID: the user the thumbnails' Chromium runs as when svc runs as root, default 65533
			     * (another user than builds': RLIMIT_NPROC counts every process of a user on the host) */
	int network;        /* SVC_BUILD_NETWORK: 1 (default) the install step has the host's network; 0 none (npm --offline) */
	int scripts;        /* the workspace allows install scripts (workspaces.build_scripts): no --ignore-scripts */
	/* node_modules reused (lib/project/deps.h) */
	const char *data_dir;        /* SVC_DATA_DIR: the store and the shared npm cache are under npm/ (borrowed) */
	unsigned npm_modules_max_mb; /* SVC_NPM_MODULES_MAX_MB: the store's bound, MiB; 0 no store */
	unsigned npm_cache_max_mb;   /* SVC_NPM_CACHE_MAX_MB: the shared npm cache's bound, MiB */
	const char *workspace_id;    /* the project's workspace (set by the caller; the key of a scripted install) */
};

/*
 * Fills *out from the settings of `cfg` (defaults above) with `scripts` as
 * the workspace's choice, workspace_id NULL (the caller sets it). Strings
 * are borrowed from cfg.
 */
void svc_build_opts_load(const struct svc_config *cfg, int scripts, struct svc_build_opts *out);

/*
 * Receives the build's output as it comes (stdout and stderr together, in
 * pieces of up to 4 KiB, not split at lines), and `text` NULL with `len` 0
 * about once a second while the build says nothing, so a caller can keep a
 * stream alive. `arg` is the caller's.
 */
typedef void (*svc_build_log_fn)(void *arg, const char *text, size_t len);

/*
 * Builds the project whose files are in `dir` (absolute, trusted: a copy
 * made for this build, which the build may change at will): its node_modules
 * from svc_build_deps() (nothing installed when package.json and
 * package-lock.json are as installed before; else `npm ci`, or `npm install`
 * without a lockfile, with --ignore-scripts, and the install scripts in a
 * step of their own when o->scripts), bound read-only at /build/node_modules,
 * then `npm run build`, each in bubblewrap: the system's
 * /usr read-only, `dir` as /build (the only writable place besides a small
 * /tmp), no other file of the host (no SVC_DATA_DIR, settings or secrets),
 * an empty environment, its own PID, IPC and UTS namespaces, the network
 * only for the install step and only when o->network, and the limits of
 * `o` (the wall clock over both steps). When svc runs as root the build runs
 * as o->uid and `dir` is handed to that user. Lines about each step ("$ npm
 * ci ...") and the output go to `log`. Returns 0 when the build made the
 * directory `dir`/dist; SVC_E_VALIDATION when the project's build failed,
 * with the reason for a person in `why` (`why_max` bytes: "npm run build
 * exited with status 1", "the build ran out of time (600 s)", "the build made
 * no dist/ directory"); SVC_E_INTERNAL when the host could not run it
 * (logged, `why` says so too). When the project had no lockfile, the one
 * its install wrote is in `dir` and kept beside it for
 * svc_deps_build_done(), which the caller calls after every build.
 */
int svc_build_run(const struct svc_build_opts *o, const char *dir, svc_build_log_fn log, void *arg, char *why,
		  size_t why_max);

/*
 * Makes sure node_modules for the tree `dir` (absolute; package.json in it)
 * exists and leases it into *out (svc_deps_prepare() of lib/project/deps.h
 * with this sandbox running its steps, within o->wall_secs): out->modules is
 * the read-only directory to bind at <tree>/node_modules
 * (svc_deps_bind_args()), "" when the install went into `dir` itself. For a
 * dev server: keep the lease while it runs, svc_deps_release() when it
 * stops. Returns 0, SVC_E_VALIDATION (the install failed: `why`),
 * SVC_E_INTERNAL; *out is to be released in every case.
 */
int svc_build_deps(const struct svc_build_opts *o, const char *dir, svc_build_log_fn log, void *arg,
		   struct svc_deps_lease *out, char *why, size_t why_max);

/* ---- the sandbox, shared with the thumbnails' Chromium (lib/project/thumbnail.c) ---- */

#define SVC_SANDBOX_BASE_ARGS 40 /* entries svc_build_sandbox_base() writes at most */

/*
 * Writes the start of every svc bubblewrap command line into argv (at most
 * SVC_SANDBOX_BASE_ARGS entries; argv[0] is `bwrap`): its own user, PID, IPC,
 * UTS and cgroup namespaces, a new session, death with its parent, the
 * host's /usr read-only (with the /lib, /lib64, /bin and /sbin links), a
 * fresh /proc and /dev, an empty environment but PATH and LANG, and `uid`
 * (decimal text, borrowed) as the user and group inside. No other file of
 * the host is there: the caller adds its own mounts and, last,
 * "--remount-ro / -- <command>". Returns the number of entries written.
 */
size_t svc_build_sandbox_base(const char *bwrap, const char *uid, const char **argv);

/* What the sandboxed process may use; 0 is "no limit" for each limit. */
struct svc_sandbox_limits {
	unsigned uid;       /* the user it runs as when the caller is root (setuid before bwrap) */
	unsigned cpu_secs;  /* RLIMIT_CPU of each process */
	unsigned memory_mb; /* RLIMIT_AS of each process, MiB */
	unsigned procs;     /* RLIMIT_NPROC of the user */
	unsigned netns_port; /* 0: the caller's network; else a network namespace of its own (netns.h) */
	int netns_sock;      /* with netns_port: where its listener on 127.0.0.1:netns_port is sent */
};

/*
 * For a child just forked: a new session, the user lim->uid (groups dropped)
 * when running as root, with lim->netns_port a network namespace of its own
 * whose listener goes to lim->netns_sock (svc_netns_isolate() of
 * lib/core/netns.h), the limits of `lim`, no core files, stdin from
 * /dev/null, stdout and stderr to `out_fd` (-1: /dev/null), every other
 * descriptor closed, then execve of `bwrap` with `argv` and an environment of
 * PATH and LANG only. Never returns: when it cannot exec, it writes errno
 * (an int) to `err_fd`, which must be close-on-exec (the parent reads
 * nothing when the exec worked), and exits 127.
 */
void svc_build_sandbox_exec(const char *bwrap, const struct svc_sandbox_limits *lim, int out_fd, int err_fd,
			    const char **argv) __attribute__((noreturn));

#endif
