/* deps.h: a build's node_modules installed only when package.json or the lockfile change: the key, the store of read-only trees, the shared npm cache and the lockfile a first install writes (docs/operations.md "Dependencies"). */
#ifndef SVC_DEPS_H
#define SVC_DEPS_H

#include <stddef.h>
#include <stdint.h>

#include "core/config.h"
#include "db/db.h"
#include "project/sandbox.h"

/*
 * The layout under SVC_DATA_DIR/npm/ (0710, root's or svc's, of the build user's group):
 *
 *	modules/<key>/          one installed tree, renamed into place whole, then read-only:
 *	                        package.json, package-lock.json (as npm left them), node_modules/
 *	                        (with empty node_modules/.vite and node_modules/.cache for mounts),
 *	                        .svc-bytes (its size); its mtime is its last use
 *	locks/<key>             a shared flock held by every build or dev server using modules/<key>
 *	locks/<key>.install     an exclusive flock held by the one install of <key> at a time: a
 *	                        build that needs the same missing entry waits, then leases it
 *	cache/_cacache/content-v2/sha512/xx/yy/<rest>
 *	                        the shared npm cache: content files only, root's 0440, each one's
 *	                        sha512 checked against its path before it was added (0700: the
 *	                        sandbox sees hardlinks of them, never the directory)
 *	tmp/<random>/           an install in progress: tree/ (bound as /build) and cache/ (the
 *	                        install's private npm cache, bound as /npm-cache)
 */

#define SVC_DEPS_KEY_HEX 64 /* a key: sha256 in lower-case hex */

/* What goes into a key (svc_deps_key()); strings borrowed. */
struct svc_deps_key_in {
	const char *node_version; /* "v20.20.2" */
	const char *npm_version;  /* "11.19.1" */
	const char *platform;     /* "Linux x86_64" (uname sysname and machine) */
	int scripts;              /* install scripts ran (a platform admin allowed them) */
	const char *workspace_id; /* with scripts: the workspace whose install this is */
	const char *package_json; /* the bytes of package.json */
	size_t package_json_len;
	const char *lock;         /* the bytes of package-lock.json, NULL when there is none */
	size_t lock_len;
};

/*
 * Writes the store key of an install with inputs `in` into out
 * (SVC_DEPS_KEY_HEX + 1 bytes): sha256 of a text naming the layout's version,
 * node's and npm's versions, the platform, whether install scripts ran and
 * for which workspace (a scripted install is never shared with another
 * workspace), and the sha256 of package.json and of the lockfile ("none"
 * without one). Any difference of a byte of either file is another key.
 * Returns 0 or SVC_E_INTERNAL.
 */
int svc_deps_key(const struct svc_deps_key_in *in, char *out);

/*
 * node's version (`node --version` of /usr/local/bin/node, else
 * /usr/bin/node: what the sandbox, which sees /usr, runs), npm's (the
 * "version" of the package.json of the npm package `npm_path` belongs to)
 * and the platform, into the three buffers (32, 32 and 64 bytes). Worked out
 * once per process while the binaries stay the same. Returns 0 or
 * SVC_E_INTERNAL (logged: no node, no npm package).
 */
int svc_deps_host(const char *npm_path, char *node_version, char *npm_version, char *platform);

/* ---- running a step: the caller's sandbox ---- */

/* One sandboxed step deps needs run (the runner makes its command line); strings borrowed for the call. */
enum svc_deps_kind {
	SVC_DEPS_STEP_INSTALL, /* npm ci (or install) --ignore-scripts --prefer-offline --cache /npm-cache */
	SVC_DEPS_STEP_SCRIPTS, /* the install scripts a platform admin allowed (npm rebuild, ...) */
};

struct svc_deps_step {
	enum svc_deps_kind kind;
	int ci;               /* install: `npm ci` (there is a lockfile), else `npm install` */
	const char *root;     /* absolute: the directory bound writable as /build (the working directory) */
	const char *cache;    /* install: the private npm cache, to bind writable at /npm-cache; else NULL */
	const char *disk_dir; /* the tmpfs bounding `root` (svc_sandbox_disk_mount()), or NULL */
};

/*
 * Runs `s` in the build sandbox; `arg` is the caller's. Returns 0 when it
 * exited 0, SVC_E_VALIDATION when it failed (the reason for a person in
 * `why`, why_max bytes: "npm ci exited with status 1", a limit),
 * SVC_E_UNAVAILABLE or SVC_E_INTERNAL when it could not be run (`why` too).
 */
typedef int (*svc_deps_run_fn)(void *arg, const struct svc_deps_step *s, char *why, size_t why_max);

/* The build's log, as svc_build_log_fn (lib/project/build.h). */
typedef void (*svc_deps_log_fn)(void *arg, const char *text, size_t len);

/*
 * Formats one line (printf's `fmt`, at most 511 bytes: longer is cut) and
 * gives it to `log` with `arg`; nothing when `log` is NULL. lib/project's
 * installs and builds (deps.c, build.c) write their logs with it.
 */
void svc_deps__say(svc_deps_log_fn log, void *arg, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* The settings deps works with, from svc_build_opts (lib/project/build.h). Strings borrowed. */
struct svc_deps_opts {
	const char *data_dir;     /* SVC_DATA_DIR */
	const char *npm;          /* SVC_BUILD_NPM */
	unsigned modules_max_mb;  /* SVC_NPM_MODULES_MAX_MB: the store's bound; 0: no store (install into the tree) */
	unsigned cache_max_mb;    /* SVC_NPM_CACHE_MAX_MB: the shared cache's bound */
	unsigned uid;             /* SVC_BUILD_UID: owner of an install in progress when svc runs as root */
	unsigned disk_mb;         /* SVC_BUILD_DISK_MB: an install's own tree is a tmpfs of this size (root) */
	const char *registry;     /* SVC_NPM_REGISTRY: the tarball URLs filled into a lockfile without them */
	int network;              /* SVC_BUILD_NETWORK: 0 installs with --offline */
	int scripts;              /* the workspace allows install scripts */
	const char *workspace_id; /* the workspace (keys of scripted installs); NULL: never stored */
	int (*cancel)(void *arg); /* NULL, or asked every 200 ms while waiting for another build's install of the same
				     key: a non-zero answer ends the wait, SVC_E_CANCELLED (svc_build_opts.cancel) */
	void *cancel_arg;
};

/* node_modules held for one build or dev server (svc_deps_prepare()); release with svc_deps_release(). */
struct svc_deps_lease {
	char key[SVC_DEPS_KEY_HEX + 1]; /* "" when the install was not stored */
	char entry[2048];   /* the store entry (package.json, package-lock.json, node_modules/); "" for none */
	char modules[2100]; /* entry/node_modules, to bind read-only at <tree>/node_modules; "" when the
			     * install went into the tree itself (no store) */
	char installed[2300]; /* with lock_made: a directory holding the package.json and package-lock.json
			       * the install used and wrote (the entry, or a copy under npm/tmp) */
	char tmp[2200];     /* a directory of this lease's own under npm/tmp, removed by svc_deps_release(); "" none */
	int reused;         /* 1: found in the store, nothing installed */
	int lock_made;      /* 1: the tree had no package-lock.json and the install wrote one */
	int fd;             /* the lock held (shared flock on npm/locks/<key>), -1 for none */
};

/*
 * Makes sure node_modules for the project tree `dir` (absolute, trusted: a
 * copy for one build or a dev server's tree) exists and leases it into *out.
 * The key (svc_deps_key()) of dir's package.json and package-lock.json: a
 * stored tree with that key is leased and nothing runs ("node_modules
 * reused" in the log). With a lockfile, one install of a key runs at a
 * time (locks/<key>.install): a second call for the same key waits for the
 * first and leases what it stored (a project without a lockfile installs on
 * its own: its key is known only after npm wrote one). Otherwise the install runs through `run` in a new
 * tree under npm/tmp holding only those two files (a project's .npmrc is
 * not read): `npm ci` (or `npm install` without a lockfile) with
 * --ignore-scripts, --prefer-offline (--offline without the network) and a
 * private npm cache seeded with hardlinks of the shared one; then the new
 * content files of that cache whose sha512 matches their path go into the
 * shared cache (svc_deps_cache_merge()); then, when d->scripts, `npm
 * rebuild` runs the install scripts in a step of its own, without the cache.
 * The tree is made read-only, renamed into npm/modules/<key> (the key of
 * the lockfile npm wrote, when there was none) and leased; least recently
 * used entries past d->modules_max_mb go. `dir` itself is not changed. When
 * the tree had no lockfile, out->lock_made is 1 and out->installed holds
 * the pair npm used and wrote (write it into the project with
 * svc_deps_lock_writeback() while the lease is held). A package.json with
 * "workspaces", install scripts of its own (when allowed), or
 * d->modules_max_mb 0, installs into `dir` itself as before (out->modules
 * ""), still with the shared cache; without d->data_dir, with no cache.
 * `log` (may be NULL) gets a line for each step. Returns 0; SVC_E_VALIDATION when the install failed (reason in `why`, why_max
 * bytes); SVC_E_INTERNAL (logged; `why` says so). *out is set in every case
 * (fd -1 after an error) and must be released.
 */
int svc_deps_prepare(const struct svc_deps_opts *d, const char *dir, svc_deps_run_fn run, void *run_arg,
		     svc_deps_log_fn log, void *log_arg, struct svc_deps_lease *out, char *why, size_t why_max);

/*
 * The folders of node_modules that tools write into (Vite's cache .vite and
 * its bundled config .vite-temp, .cache of babel-loader, eslint and
 * others): every entry has them empty, for a writable mount over each.
 */
#define SVC_DEPS_WRITABLE 3
extern const char *const svc_deps_writable[SVC_DEPS_WRITABLE];

/*
 * Writes into `out` (SVC_DEPS_MOUNTS entries) the mounts that give lease
 * `l` to a sandbox whose tree is at `at` (e.g. "/build"): node_modules
 * read-only at <at>/node_modules, and over each of svc_deps_writable a
 * writable directory made empty in `scratch` (absolute, made when missing,
 * handed to `uid` when root; best in the build's own bounded tree, never
 * inside the tree the sandbox sees). The mount paths are kept in `paths`
 * (the caller's, which the mounts borrow, with `l`). Writes nothing when
 * the lease has no store entry (node_modules is the tree's own). Returns
 * the number of mounts, or SVC_E_INTERNAL. A dev server that wants Vite's
 * cache to outlive it uses a scratch directory of its own that it keeps.
 */
#define SVC_DEPS_MOUNTS (1 + SVC_DEPS_WRITABLE)
int svc_deps_mounts(const struct svc_deps_lease *l, const char *at, const char *scratch, unsigned uid,
		    char paths[2 * SVC_DEPS_MOUNTS][2300], struct svc_sandbox_mount *out);

/* Lets go of lease `l` (closes its lock; the entry may be evicted from then on). Safe to call twice. */
void svc_deps_release(struct svc_deps_lease *l);

/*
 * Writes the package-lock.json of `installed` (a directory holding the
 * package.json and package-lock.json an install used and wrote: a lease's
 * entry, or what svc_build_run() kept beside its build directory) into the
 * working tree of project `project_id` and commits it as a version
 * ("package-lock.json written by the first install", by "svc build"), under
 * the project's lock, when the working tree still has no package-lock.json
 * and its package.json is byte for byte the one installed (else nothing:
 * the next build installs for the new package.json). After a commit svc-wsd
 * is told (svc_internal_notify_files) and the project's updatedAt touched;
 * no preview build is queued (the one just made is current). `db` may be
 * NULL (no notification). Returns 1 when it committed, 0 when nothing was
 * to do, or SVC_E_INTERNAL (logged).
 */
int svc_deps_lock_writeback(struct svc_db *db, const struct svc_config *cfg, const char *project_id,
			    const char *installed);

/*
 * For a build whose install wrote the lockfile (l->lock_made): keeps the
 * installed package.json and package-lock.json in `dir`.deps (a sibling of
 * the build's tree `dir`, which the sandbox does not see) for
 * svc_deps_build_done(). Returns 0 or SVC_E_INTERNAL.
 */
int svc_deps_keep_lock(const struct svc_deps_lease *l, const char *dir);

/*
 * After svc_build_run() of the build tree `dir` of project `project_id`,
 * whatever its result: when `dir`.deps was kept, commits its lockfile into
 * the project (svc_deps_lock_writeback()) and removes it. Never fails
 * (logged).
 */
void svc_deps_build_done(struct svc_db *db, const struct svc_config *cfg, const char *project_id, const char *dir);

/*
 * Removes what installs and evictions whose process was killed left under
 * `data_dir`/npm: each entry of npm/tmp (an install's directory, its tmpfs
 * `<id>.disk` unmounted first) and each npm/modules/.gone-* older than
 * `older_secs` (give SVC_BUILD_WALL_SECS plus a margin, so no running
 * install's is taken); a tmpfs whose owner no longer runs
 * (svc_sandbox_disk_owner_alive()) goes at once. For svc-worker's start,
 * beside svc_build_sweep().
 * Returns how many were removed.
 */
int svc_deps_sweep(const char *data_dir, unsigned older_secs);

/* ---- the store and the cache, for svc_deps_prepare() and the unit tests ---- */

/*
 * Renames the finished tree `tree` (absolute) into `modules_dir`/`key` in
 * one rename, after giving it (when svc runs as root) to root and the group
 * of `modules_dir` (the build's user's), modes 0550 and 0440 (0550 for an
 * executable: no write bit, nothing for other accounts), and recording its
 * size. When the entry exists
 * already (another build published the same key first) `tree` is removed
 * and the existing entry stays. Returns 0 when `tree` became the entry, 1
 * when one was there, or SVC_E_INTERNAL.
 */
int svc_deps_store_publish(const char *modules_dir, const char *tree, const char *key);

/*
 * Removes the least recently used entries of `modules_dir` (by mtime, which
 * a lease sets) until their sizes add up to at most `max_bytes`, never
 * `keep` (a key, or NULL) and never one leased (a shared flock on
 * `locks_dir`/<key>). Returns the number removed, or SVC_E_INTERNAL.
 */
int svc_deps_store_evict(const char *modules_dir, const char *locks_dir, uint64_t max_bytes, const char *keep);

/*
 * Takes a lease on entry `key` of `modules_dir` (shared flock on
 * `locks_dir`/<key>, made when missing) and marks it used now. Returns 1
 * with *out filled, 0 when there is no such entry (nothing held), or
 * SVC_E_INTERNAL.
 */
int svc_deps_store_lease(const char *modules_dir, const char *locks_dir, const char *key, struct svc_deps_lease *out);

/*
 * Adds to the shared cache `shared` (a cacache directory, `…/_cacache`)
 * every content file of the private cache `priv` (likewise) that `shared`
 * lacks: only files at content-v2/sha512/<2 hex>/<2 hex>/<124 hex>, regular,
 * not hardlinks of `shared`'s own, at most 1 GiB; each is copied while its
 * sha512 is computed and goes in (root's when root, 0440 of the group of
 * `shared`, by link(2) so
 * an existing file is never replaced) only when that hash is its path;
 * anything else (a mismatch, an index entry, another algorithm) is left out
 * and counted. *out_added and *out_refused (may be NULL) get the counts.
 * Returns 0 or SVC_E_INTERNAL.
 */
int svc_deps_cache_merge(const char *priv, const char *shared, unsigned *out_added, unsigned *out_refused);

/*
 * Removes the content files of the shared cache `shared` added longest ago
 * (by mtime) while it holds more than `max_bytes`, down to 90 % of it (an
 * install that needs one again fetches it). Returns the number removed, or
 * SVC_E_INTERNAL.
 */
int svc_deps_cache_evict(const char *shared, uint64_t max_bytes);

/*
 * Fills the private cache `priv` (made) with hardlinks of every content file
 * of `shared` (made when missing), its directories handed to `uid` when svc
 * runs as root (the files stay root's 0440). Returns 0 or SVC_E_INTERNAL.
 */
int svc_deps_cache_seed(const char *shared, const char *priv, unsigned uid);

#endif
