/* build.h: a package.json project's build (npm ci or install, then npm run build) inside bubblewrap, with limits. */
#ifndef SVC_BUILD_H
#define SVC_BUILD_H

#include <stddef.h>

#include "core/config.h"
#include "core/outbound.h"
#include "project/deps.h"

/* What a build may use (docs/operations.md "Builds"): the settings, and the workspace's choice about scripts. */
struct svc_build_opts {
	const char *bwrap;    /* SVC_BUILD_BWRAP: the bubblewrap program, default /usr/bin/bwrap (borrowed from the config) */
	const char *npm;      /* SVC_BUILD_NPM: npm inside the sandbox, default /usr/bin/npm (under /usr: the sandbox sees only /usr) */
	const char *registry; /* SVC_NPM_REGISTRY: the only registry the install step reaches, default https://registry.npmjs.org/ */
	const char *cgroup_parent; /* SVC_BUILD_CGROUP: NULL for svc's own cgroup */
	unsigned cpu_secs;    /* SVC_BUILD_CPU_SECS: CPU seconds of each process (RLIMIT_CPU), default 300 */
	unsigned memory_mb;   /* SVC_BUILD_MEMORY_MB: memory of each step's processes together (its cgroup), MiB, default 2048 */
	unsigned procs;       /* SVC_BUILD_PROCS: processes and threads of each step at once (pids.max), default 256 */
	unsigned cpu_percent; /* SVC_BUILD_CPU_PERCENT: CPU of each step, percent of one core, default 100 */
	unsigned disk_mb;     /* SVC_BUILD_DISK_MB: the build's tmpfs and RLIMIT_FSIZE, MiB, default 2048 */
	unsigned wall_secs;   /* SVC_BUILD_WALL_SECS: the whole build (install and build), default 600 */
	unsigned tmp_mb;      /* SVC_BUILD_TMP_MB: the sandbox's /tmp (a tmpfs), MiB, default 256 */
	unsigned uid;         /* SVC_BUILD_UID: the user builds run as when svc runs as root, default 65534 (nobody) */
	unsigned thumb_uid;   /* SVC_THUMB_UID: the user the thumbnails' Chromium runs as when svc runs as root, default 65533 */
	int network;          /* SVC_BUILD_NETWORK: 1 (default) the install step reaches the registry only; 0 none (npm --offline) */
	int scripts;          /* a platform admin allows install scripts in the workspace (workspaces.build_scripts):
				 run as a step of their own (npm rebuild) after the install proper */
	char run_name[49];    /* a name unique on the host for this build (the cgroups' "<run_name>-<step>");
				 svc_build_opts_load() makes a random one, a caller may set its own ([A-Za-z0-9._-]) */
	struct svc_outbound_policy egress; /* which addresses the registry's name may resolve to (SVC_OUTBOUND_*) */
	/* node_modules reused (lib/project/deps.h) */
	const char *data_dir;        /* SVC_DATA_DIR: the store and the shared npm cache are under npm/ (borrowed) */
	unsigned npm_modules_max_mb; /* SVC_NPM_MODULES_MAX_MB: the store's bound, MiB; 0 no store */
	unsigned npm_cache_max_mb;   /* SVC_NPM_CACHE_MAX_MB: the shared npm cache's bound, MiB */
	const char *workspace_id;    /* the project's workspace (the caller sets it: the key of a scripted install) */
	/* NULL (svc_build_opts_load()), or asked about every 200 ms while a step runs: a non-zero answer stops
	   the step at once and the build ends SVC_E_CANCELLED (the caller sets it: a turn's Stop) */
	int (*cancel)(void *arg);
	void *cancel_arg;
};

/*
 * Fills *out from the settings of `cfg` (defaults above) with `scripts` as
 * the workspace's choice. Strings are borrowed from cfg.
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
 * made for this build, which the build may change at will; best inside a
 * svc_build_dir_make() tree): refuses dependencies from outside the registry
 * (svc_build_check_deps()), sets the project's .npmrc aside, then runs each
 * step in the sandbox of lib/project/sandbox.h, a cgroup of its own per step.
 * The install steps are svc_build_deps()'s: none when package.json and
 * package-lock.json are as installed before (node_modules reused from the
 * store), else in a tree of their own which is then stored; node_modules is
 * bound read-only at /build/node_modules for the build step. They are
 * `npm ci` (with package-lock.json) or `npm install`, always with
 * --ignore-scripts, reaching only the registry (o->network; else
 * --offline and no network); when o->scripts, `npm rebuild` (the
 * dependencies' and the project's install scripts) as a step of their own
 * with the same network; then `npm run build` without any network. `dir` is /build inside,
 * the only writable place besides a small /tmp. When svc runs as root the
 * steps run as o->uid and `dir` is handed to that user. Lines about each step
 * ("$ npm ci ...") and the output go to `log`. Returns 0 when the build made
 * `dir`/dist; SVC_E_VALIDATION when the project's build failed, with the
 * reason for a person in `why` (`why_max` bytes): "npm run build exited with
 * status 1", "the build used more than 2048 MB of memory" (or processes,
 * disk), "the build ran out of time (600 s)", "the dependency \"x\" is not
 * from the registry: ...", "the build made no dist/ directory";
 * SVC_E_CANCELLED when o->cancel stopped it ("the build was stopped");
 * SVC_E_UNAVAILABLE when this host cannot contain builds ("svc refuses to
 * build: no cgroup hierarchy ..."); SVC_E_INTERNAL when the host could not
 * run it (logged, `why` says so too). When the project had no lockfile,
 * the one its install wrote is kept beside `dir` for svc_deps_build_done(),
 * which the caller calls after every build.
 */
int svc_build_run(const struct svc_build_opts *o, const char *dir, svc_build_log_fn log, void *arg, char *why,
		  size_t why_max);

/*
 * Makes sure node_modules for the tree `dir` (absolute; package.json in it)
 * exists and leases it into *out: svc_deps_prepare() of lib/project/deps.h
 * with this sandbox running its install (and allowed scripts) steps, within
 * o->wall_secs. out->modules is the read-only directory to bind at
 * <tree>/node_modules (svc_deps_mounts() makes the mounts), "" when the
 * install went into `dir` itself. For a dev server: keep the lease while it
 * runs, svc_deps_release() when it stops. Returns 0, SVC_E_VALIDATION (the
 * install failed: `why`), SVC_E_UNAVAILABLE, SVC_E_INTERNAL; *out is to be
 * released in every case.
 */
int svc_build_deps(const struct svc_build_opts *o, const char *dir, svc_build_log_fn log, void *arg,
		   struct svc_deps_lease *out, char *why, size_t why_max);

/*
 * Makes the directory a build works in: `top` (absolute, trusted; must not
 * exist, its parent must) as a tmpfs of o->disk_mb when svc runs as root
 * (svc_sandbox_disk_mount()), a plain directory otherwise, and writes into
 * `project` (of `max` bytes) the path of the project's copy inside it,
 * `top`/project, which the caller creates (svc_fsx_copy_tree()) and passes to
 * svc_build_run(). Returns 0 or SVC_E_INTERNAL (why says so).
 */
int svc_build_dir_make(const struct svc_build_opts *o, const char *top, char *project, size_t max, char *why,
		       size_t why_max);

/*
 * Removes the build trees under `builds` (SVC_DATA_DIR/builds) that a build
 * which ended without removing its own left behind (its process was killed):
 * a tmpfs whose owner no longer runs (svc_sandbox_disk_owner_alive()) at
 * once, a tree without a recorded owner once older than `older_secs` (give
 * SVC_BUILD_WALL_SECS plus a margin, so no running build's tree is taken),
 * never a tree another process claims (svc_sandbox_claim(): svc-devd's
 * dev-<projectId> trees while it has their dev servers); each is claimed,
 * unmounted and removed (svc_build_dir_remove()); nothing outside `builds`
 * is touched. For svc-worker's start. Returns how many were
 * removed, or SVC_E_INTERNAL when `builds` cannot be read.
 */
int svc_build_sweep(const char *builds, unsigned older_secs);

/* Removes what svc_build_dir_make() made at `top`: unmounts its tmpfs (if any) and removes the tree. Returns 0 or SVC_E_INTERNAL. */
int svc_build_dir_remove(const char *top);

/*
 * Refuses, before npm runs, what would make npm fetch from outside the
 * registry `registry` (an https URL, SVC_NPM_REGISTRY): in `dir`/package.json
 * a dependency spec (dependencies, devDependencies, optionalDependencies,
 * peerDependencies, overrides) that is a URL (http:, https:, git:, git+ssh:,
 * file:, ...), a Git host shorthand (github:, gitlab:, bitbucket:, gist:,
 * "user/repo"), a path or tarball ("./x", "../x", "/x", "x.tgz") or link:;
 * in `dir`/package-lock.json (and npm-shrinkwrap.json) a `resolved` URL that
 * is not under `registry` (or https://registry.npmjs.org/, which npm maps
 * onto the configured registry). Returns 0, or SVC_E_VALIDATION with the
 * reason naming the dependency in `why` ("the dependency \"leak\" is not
 * from the registry (http://127.0.0.1:9/x.tgz): svc installs only from
 * https://registry.npmjs.org/"), or for a package.json that does not parse.
 */
int svc_build_check_deps(const char *dir, const char *registry, char *why, size_t why_max);

/*
 * Writes the npm flags of a step into argv (at most SVC_BUILD_NPM_ARGS
 * entries, NULL not added; strings borrowed from `o` and `npmrc`): the
 * registry (--registry), svc's own npmrc as the user config (`npmrc`, its
 * path inside the sandbox; written by svc_build_run() at
 * /build/.svc-home/npmrc) and none as the global one, the proxy (--proxy/--https-proxy
 * http://127.0.0.1:3128) when `network`, else --offline, and no audit, fund
 * or update notice. Returns the number of entries.
 */
#define SVC_BUILD_NPM_ARGS 16
size_t svc_build_npm_args(const struct svc_build_opts *o, const char *npmrc, int network, const char **argv);

#endif
