/* build.c: a package.json project's build (npm ci or install, then npm run build) inside bubblewrap, with limits. */
#include <assert.h>
#include <dirent.h>
#include <time.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/err.h"
#include "core/fsx.h"
#include "core/log.h"
#include "core/json.h"
#include "core/util.h"
#include "project/build.h"
#include "project/deps.h"
#include "project/sandbox.h"

#define NPMRC "/build/.svc-home/npmrc" /* svc's own npmrc inside the sandbox */

void svc_build_opts_load(const struct svc_config *cfg, int scripts, struct svc_build_opts *out)
{
	/* bounds and defaults: the settings table (lib/core/config_table.c) */
	out->bwrap = cfg->build_bwrap;
	out->npm = cfg->build_npm;
	out->registry = cfg->npm_registry;
	out->cgroup_parent = cfg->build_cgroup && cfg->build_cgroup[0] ? cfg->build_cgroup : NULL;
	out->cpu_percent = cfg->build_cpu_percent;
	out->disk_mb = cfg->build_disk_mb;
	out->cpu_secs = cfg->build_cpu_secs;
	out->memory_mb = cfg->build_memory_mb;
	out->procs = cfg->build_procs;
	out->wall_secs = cfg->build_wall_secs;
	out->tmp_mb = cfg->build_tmp_mb;
	out->uid = cfg->build_uid;
	out->thumb_uid = cfg->thumb_uid;
	out->network = cfg->build_network;
	out->scripts = scripts;
	svc_outbound_policy_load(cfg, &out->egress);
	out->data_dir = cfg->data_dir; /* deps: node_modules reused (lib/project/deps.h) */
	out->npm_modules_max_mb = cfg->npm_modules_max_mb;
	out->npm_cache_max_mb = cfg->npm_cache_max_mb;
	out->workspace_id = NULL;
	out->cancel = NULL;
	out->cancel_arg = NULL;
	memcpy(out->run_name, "build-", 6);
	if (svc_random_hex(out->run_name + 6, 8) < 0)
		snprintf(out->run_name + 6, sizeof out->run_name - 6, "%ld", (long)getpid());
}

/* Hands the tree at `dirfd` (and its entries, without following symlinks) to uid:gid. */
static int chown_tree(int dirfd, uid_t uid, gid_t gid, int depth)
{
	struct svc_fsx_dir d;
	const char *name;
	struct stat st;
	int r, err = 0;

	if (depth > 256 || fchown(dirfd, uid, gid) < 0)
		return SVC_E_INTERNAL;
	if ((err = svc_fsx_dir_open(dirfd, &d)) < 0)
		return err;
	while (err == 0 && (r = svc_fsx_dir_next(&d, &name, &st)) > 0) {
		if (S_ISDIR(st.st_mode)) {
			int sub = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			err = sub < 0 ? SVC_E_INTERNAL : chown_tree(sub, uid, gid, depth + 1);
			if (sub >= 0)
				close(sub);
		} else if (fchownat(dirfd, name, uid, gid, AT_SYMLINK_NOFOLLOW) < 0) {
			err = SVC_E_INTERNAL;
		}
	}
	if (err == 0 && r < 0)
		err = r;
	svc_fsx_dir_close(&d);
	return err;
}

/* ---- dependencies from the registry only ---- */

/* Whether the dependency spec `v` makes npm fetch from outside the registry (a URL, Git, a path, a tarball). */
static int spec_outside(const char *v)
{
	static const char *const prefixes[] = { "git", "github:", "gitlab:", "bitbucket:", "gist:", "file:", "link:",
						"http:", "https:", "./", "../", "/", "~/", "." };
	const char *at;
	size_t i, n = strlen(v);

	if (strncmp(v, "npm:", 4) == 0) /* an alias: npm:<name>@<range>, the range is what npm fetches */
		return (at = strrchr(v + 5, '@')) ? spec_outside(at + 1) : 0;
	if (strncmp(v, "workspace:", 10) == 0)
		return 0;
	for (i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++)
		if (strncmp(v, prefixes[i], strlen(prefixes[i])) == 0)
			return 1;
	if (strstr(v, "://") || strchr(v, '/') || strchr(v, '\\') || strchr(v, ':'))
		return 1; /* a URL, or a GitHub "user/repo" shorthand (semver ranges and tags have no '/') */
	return n > 4 && (strcmp(v + n - 4, ".tgz") == 0 || strcmp(v + n - 4, ".tar") == 0 ||
			 (n > 7 && strcmp(v + n - 7, ".tar.gz") == 0));
}

/* Checks every string of `o` (a dependency map, or overrides' nested maps) as a spec; `where` names the map. */
static int check_map(struct json_object *o, const char *where, const char *registry, int depth, char *why,
		     size_t why_max)
{
	if (!o || !json_object_is_type(o, json_type_object) || depth > 8)
		return 0;
	json_object_object_foreach(o, key, val)
	{
		if (json_object_is_type(val, json_type_object)) {
			if (check_map(val, where, registry, depth + 1, why, why_max) < 0)
				return SVC_E_VALIDATION;
		} else if (json_object_is_type(val, json_type_string) && spec_outside(json_object_get_string(val))) {
			snprintf(why, why_max,
				 "the dependency \"%s\" (package.json %s) is not from the registry (%s): svc installs only "
				 "from %s",
				 key, where, json_object_get_string(val), registry);
			return SVC_E_VALIDATION;
		}
	}
	return 0;
}

/* Whether the lockfile URL `url` lies under the registry `registry` (or npm's default, mapped onto it). */
static int under_registry(const char *url, const char *registry)
{
	static const char npmjs[] = "https://registry.npmjs.org/";
	size_t n = strlen(registry);

	if (n && registry[n - 1] == '/')
		n--;
	if (strncmp(url, registry, n) == 0 && url[n] == '/')
		return 1;
	return strncmp(url, npmjs, sizeof npmjs - 1) == 0;
}

/* Checks the `resolved` URLs of a lockfile's "packages" (v2, v3) or nested "dependencies" (v1). */
static int check_lock(struct json_object *o, const char *registry, int depth, char *why, size_t why_max)
{
	struct json_object *v;

	if (!o || !json_object_is_type(o, json_type_object) || depth > 64)
		return 0;
	json_object_object_foreach(o, key, val)
	{
		const char *url;
		if (!json_object_is_type(val, json_type_object))
			continue;
		if (json_object_object_get_ex(val, "resolved", &v) && (url = json_object_get_string(v)) &&
		    !under_registry(url, registry)) {
			snprintf(why, why_max,
				 "the dependency \"%s\" (package-lock.json) is not from the registry (%s): svc installs only "
				 "from %s",
				 key[0] ? key : "(the project)", url, registry);
			return SVC_E_VALIDATION;
		}
		if (json_object_object_get_ex(val, "dependencies", &v) && check_lock(v, registry, depth + 1, why, why_max) < 0)
			return SVC_E_VALIDATION;
	}
	return 0;
}

/* Parses `dir`/`name` (at most 64 MiB) into *out; 0, SVC_E_NOT_FOUND, or SVC_E_VALIDATION when it does not parse. */
static int read_json(const char *dir, const char *name, struct json_object **out)
{
	char *text = NULL;
	size_t len = 0;
	int err;

	*out = NULL;
	if ((err = svc_fsx_read(dir, name, (size_t)64 << 20, &text, &len)) < 0)
		return err == SVC_E_NOT_FOUND ? SVC_E_NOT_FOUND : SVC_E_VALIDATION;
	err = svc_json_parse_object(text, len, out) < 0 ? SVC_E_VALIDATION : 0;
	free(text);
	return err;
}

int svc_build_check_deps(const char *dir, const char *registry, char *why, size_t why_max)
{
	static const char *const maps[] = { "dependencies", "devDependencies", "optionalDependencies",
					    "peerDependencies", "overrides" };
	static const char *const locks[] = { "package-lock.json", "npm-shrinkwrap.json" };
	struct json_object *o = NULL, *v;
	size_t i;
	int err = 0;

	snprintf(why, why_max, "%s", "");
	if ((err = read_json(dir, "package.json", &o)) < 0) {
		snprintf(why, why_max, "package.json is not a JSON object");
		return err == SVC_E_NOT_FOUND ? 0 : SVC_E_VALIDATION;
	}
	for (i = 0; err == 0 && i < sizeof maps / sizeof maps[0]; i++)
		if (json_object_object_get_ex(o, maps[i], &v))
			err = check_map(v, maps[i], registry, 0, why, why_max);
	json_object_put(o);
	for (i = 0; err == 0 && i < sizeof locks / sizeof locks[0]; i++) {
		if ((err = read_json(dir, locks[i], &o)) == SVC_E_NOT_FOUND) {
			err = 0;
			continue;
		}
		if (err < 0) {
			snprintf(why, why_max, "%s is not a JSON object", locks[i]);
			break;
		}
		if (json_object_object_get_ex(o, "packages", &v))
			err = check_lock(v, registry, 0, why, why_max);
		if (err == 0 && json_object_object_get_ex(o, "dependencies", &v))
			err = check_lock(v, registry, 0, why, why_max);
		json_object_put(o);
	}
	return err;
}

/* ---- npm's configuration: svc's, never the project's ---- */

size_t svc_build_npm_args(const struct svc_build_opts *o, const char *npmrc, int network, const char **argv)
{
	static const char proxy[] = "http://127.0.0.1:3128";
	size_t n = 0;

	(void)sizeof(char[SVC_SANDBOX_PROXY_PORT == 3128 ? 1 : -1]);
	argv[n++] = "--registry";
	argv[n++] = o->registry;
	argv[n++] = "--userconfig";
	argv[n++] = npmrc;
	argv[n++] = "--globalconfig"; /* not /usr/etc/npmrc: nothing but svc's */
	argv[n++] = "/dev/null";
	if (network) {
		argv[n++] = "--proxy";
		argv[n++] = proxy;
		argv[n++] = "--https-proxy";
		argv[n++] = proxy;
	} else {
		argv[n++] = "--offline";
	}
	argv[n++] = "--no-audit";
	argv[n++] = "--no-fund";
	argv[n++] = "--no-update-notifier";
	assert(n <= SVC_BUILD_NPM_ARGS);
	return n;
}

/*
 * Sets the project's own npm configuration aside (its .npmrc could name
 * another registry, a proxy or scoped registries) and writes svc's npmrc
 * into `dir`/.svc-home. Returns 0 or SVC_E_INTERNAL.
 */
static int npm_config(const struct svc_build_opts *o, const char *dir, svc_build_log_fn log, void *arg)
{
	static const char ca[] = "/etc/ssl/certs/ca-certificates.crt";
	char rc[1024];
	int n;

	if (svc_fsx_delete(dir, ".npmrc") == 0)
		svc_deps__say(log, arg, "(the project's .npmrc is not used: svc sets the registry)\n");
	/* the host's CA store (bound into the install steps with /etc/ssl), not only Node's own: a registry
	 * mirror or a TLS-inspecting gateway is trusted as the host trusts it */
	n = snprintf(rc, sizeof rc,
		     "; written by svc for this build: the registry and proxy are svc's (docs/operations.md)\n"
		     "registry=%s\nstrict-ssl=true\naudit=false\nfund=false\nupdate-notifier=false\n%s%s%s",
		     o->registry, access(ca, R_OK) == 0 ? "cafile=" : "", access(ca, R_OK) == 0 ? ca : "",
		     access(ca, R_OK) == 0 ? "\n" : "");
	if (n < 0 || (size_t)n >= sizeof rc || svc_fsx_write(dir, ".svc-home/npmrc", rc, (size_t)n) < 0)
		return SVC_E_INTERNAL;
	return 0;
}

/* ---- the steps ---- */

struct step {
	const char *title;         /* "npm ci", for the log and the reason */
	const char *shown;         /* what the log's "$ " line adds to the title: " --ignore-scripts" */
	const char *tag;           /* the cgroup's suffix: "install", "scripts", "build" */
	int network;               /* the registry */
	const char *cmd[8 + SVC_BUILD_NPM_ARGS]; /* the command inside the sandbox, NULL-terminated */
	const char *root;          /* bound as /build instead of the build's directory (deps: an install's tree), or NULL */
	const struct svc_sandbox_mount *more; /* more mounts after /build (deps: the npm cache, node_modules) */
	size_t nmore;
};

/* The steps of the build of `dir` into steps[] (at most 3); returns their number. */
static size_t plan(const struct svc_build_opts *o, const char *dir, struct step *steps)
{
	char lock[2048];
	struct stat st;
	size_t n = 0, k;
	int ci;

	snprintf(lock, sizeof lock, "%s/package-lock.json", dir);
	ci = lstat(lock, &st) == 0;
	steps[n].title = ci ? "npm ci" : "npm install";
	steps[n].shown = " --ignore-scripts";
	steps[n].tag = "install";
	steps[n].network = o->network;
	k = 0;
	steps[n].cmd[k++] = o->npm;
	steps[n].cmd[k++] = ci ? "ci" : "install";
	steps[n].cmd[k++] = "--ignore-scripts"; /* the install proper never runs project code */
	k += svc_build_npm_args(o, NPMRC, o->network, steps[n].cmd + k);
	steps[n++].cmd[k] = NULL;
	if (o->scripts) {
		/* the dependencies' install scripts and the project's own (npm 7+ rebuild runs the root's too) */
		steps[n].title = "npm rebuild";
		steps[n].shown = " --foreground-scripts (install scripts, allowed for this workspace)";
		steps[n].tag = "scripts";
		steps[n].network = o->network;
		k = 0;
		steps[n].cmd[k++] = o->npm;
		steps[n].cmd[k++] = "rebuild";
		steps[n].cmd[k++] = "--foreground-scripts";
		k += svc_build_npm_args(o, NPMRC, o->network, steps[n].cmd + k);
		steps[n++].cmd[k] = NULL;
	}
	steps[n].title = "npm run build";
	steps[n].shown = o->scripts ? "" : " --ignore-scripts";
	steps[n].tag = "build";
	steps[n].network = 0;
	k = 0;
	steps[n].cmd[k++] = o->npm;
	steps[n].cmd[k++] = "run";
	steps[n].cmd[k++] = "build";
	if (!o->scripts)
		steps[n].cmd[k++] = "--ignore-scripts"; /* no prebuild/postbuild either */
	k += svc_build_npm_args(o, NPMRC, 0, steps[n].cmd + k);
	steps[n++].cmd[k] = NULL;
	return n;
}

/* The sandbox of one step of the build of `dir` (the spec's strings borrowed from o, dir, s and name). */
static void step_spec(const struct svc_build_opts *o, const char *dir, const struct step *s, const char *name,
		      int64_t deadline, svc_build_log_fn log, void *arg, struct svc_sandbox_mount *m,
		      struct svc_sandbox_spec *sp)
{
	size_t i;

	static const char *const env[] = {
		"HOME=/build/.svc-home", "npm_config_cache=/build/.svc-home/npm-cache", "CI=1", NULL,
	};
	memset(sp, 0, sizeof *sp);
	m[0] = (struct svc_sandbox_mount){ s->root ? s->root : dir, "/build", 1, 0 };
	for (i = 0; i < s->nmore && i + 1 < SVC_SANDBOX_MOUNTS_MAX; i++)
		m[i + 1] = s->more[i];
	sp->bwrap = o->bwrap;
	sp->argv = s->cmd;
	sp->env = env;
	sp->mounts = m;
	sp->nmounts = 1 + i;
	sp->chdir = "/build";
	sp->tmp_mb = o->tmp_mb;
	sp->network = s->network ? SVC_SANDBOX_NET_REGISTRY : SVC_SANDBOX_NET_NONE;
	sp->registry = o->registry;
	sp->egress_policy = &o->egress;
	sp->memory_mb = o->memory_mb;
	sp->procs = o->procs;
	sp->cpu_percent = o->cpu_percent;
	sp->cpu_secs = o->cpu_secs;
	sp->name = name;
	sp->cgroup_parent = o->cgroup_parent;
	sp->disk_mb = o->disk_mb;
	sp->uid = o->uid;
	sp->deadline_ms = deadline;
	sp->log = log;
	sp->log_arg = arg;
	sp->cancel = o->cancel;
	sp->cancel_arg = o->cancel_arg;
}

/* Runs step `s`; 0 when it succeeded, else the reason in `why` and SVC_E_VALIDATION / _UNAVAILABLE / _INTERNAL. */
static int run_one(const struct svc_build_opts *o, const char *dir, const char *disk_dir, const struct step *s,
		   int64_t deadline, svc_build_log_fn log, void *arg, char *why, size_t why_max)
{
	struct svc_sandbox_mount m[SVC_SANDBOX_MOUNTS_MAX];
	struct svc_sandbox_spec sp;
	struct svc_sandbox_result r;
	char name[64], err_why[256];
	int err;

	snprintf(name, sizeof name, "%s-%s", o->run_name, s->tag);
	step_spec(o, dir, s, name, deadline, log, arg, m, &sp);
	sp.disk_dir = disk_dir;
	svc_deps__say(log, arg, "$ %s%s%s\n", s->title, s->shown, s->network ? " (the registry only)" : " (no network)");
	if ((err = svc_sandbox_run(&sp, &r, err_why, sizeof err_why)) < 0) {
		if (err == SVC_E_UNAVAILABLE)
			snprintf(why, why_max, "svc refuses to build: %s", err_why);
		else
			snprintf(why, why_max, "the build sandbox could not be started%s%s%s", err_why[0] ? " (" : "",
				 err_why, err_why[0] ? ")" : "");
		svc_deps__say(log, arg, "%s\n", why);
		return err == SVC_E_VALIDATION ? SVC_E_INTERNAL : err;
	}
	if (r.limit == SVC_SANDBOX_LIMIT_STOPPED) {
		snprintf(why, why_max, "the build was stopped");
		svc_deps__say(log, arg, "%s\n", why);
		return SVC_E_CANCELLED;
	}
	if (r.limit == SVC_SANDBOX_LIMIT_TIME && r.status == -1)
		snprintf(why, why_max, "the build ran out of time (%u s)", o->wall_secs);
	else if (r.limit != SVC_SANDBOX_LIMIT_NONE)
		snprintf(why, why_max, "the build used %s (%s)", r.limit_text, s->title);
	else if (r.status > 128)
		snprintf(why, why_max, "%s was killed by signal %d", s->title, r.status - 128);
	else if (r.status != 0)
		snprintf(why, why_max, "%s exited with status %d", s->title, r.status);
	else
		return 0;
	svc_deps__say(log, arg, "%s\n", why);
	return SVC_E_VALIDATION;
}

/* deps' steps (svc_deps_run_fn of lib/project/deps.h): plan()'s install or scripts step, run in deps' tree. */
struct deps_run_ctx {
	const struct svc_build_opts *o;
	const char *dir, *top;
	int64_t deadline_ms;
	svc_build_log_fn log;
	void *arg;
};

static int deps_run(void *arg, const struct svc_deps_step *ds, char *why, size_t why_max)
{
	struct deps_run_ctx *c = arg;
	struct svc_sandbox_mount cache = { ds->cache, "/npm-cache", 1, 0 };
	struct step steps[3], *s;
	char home[2300];
	size_t k;
	int dfd, err = 0;

	memset(steps, 0, sizeof steps);
	if (strcmp(ds->root, c->dir) != 0) {
		/* svc's npmrc in deps' own tree too, the tree's user's like the rest */
		if (npm_config(c->o, ds->root, NULL, NULL) < 0 ||
		    snprintf(home, sizeof home, "%s/.svc-home", ds->root) >= (int)sizeof home)
			err = SVC_E_INTERNAL;
		dfd = err ? -1 : open(home, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (!err && geteuid() == 0 && (dfd < 0 || chown_tree(dfd, c->o->uid, c->o->uid, 0) < 0))
			err = SVC_E_INTERNAL;
		if (dfd >= 0)
			close(dfd);
		if (err) {
			snprintf(why, why_max, "the build directory could not be prepared");
			return SVC_E_INTERNAL;
		}
	}
	plan(c->o, ds->root, steps);
	s = &steps[ds->kind == SVC_DEPS_STEP_SCRIPTS ? 1 : 0];
	s->root = ds->root;
	if (ds->kind == SVC_DEPS_STEP_INSTALL) {
		/* from the private cache deps seeded; the registry only for what it lacks */
		for (k = 0; s->cmd[k]; k++)
			;
		if (c->o->network)
			s->cmd[k++] = "--prefer-offline";
		if (ds->cache) {
			s->cmd[k++] = "--cache";
			s->cmd[k++] = "/npm-cache";
			s->more = &cache;
			s->nmore = 1;
		}
		s->cmd[k] = NULL;
	}
	return run_one(c->o, c->dir, ds->disk_dir ? ds->disk_dir : strcmp(ds->root, c->dir) == 0 ? c->top : NULL, s,
		       c->deadline_ms, c->log, c->arg, why, why_max);
}

static int build_deps(const struct svc_build_opts *o, const char *dir, const char *top, int64_t deadline_ms,
		      svc_build_log_fn log, void *arg, struct svc_deps_lease *out, char *why, size_t why_max)
{
	struct deps_run_ctx c = { o, dir, top, deadline_ms, log, arg };
	struct svc_deps_opts d = { o->data_dir, o->npm, o->npm_modules_max_mb, o->npm_cache_max_mb, o->uid,
				   o->disk_mb, o->registry, o->network, o->scripts, o->workspace_id, o->cancel,
				   o->cancel_arg };

	return svc_deps_prepare(&d, dir, deps_run, &c, log, arg, out, why, why_max);
}

int svc_build_deps(const struct svc_build_opts *o, const char *dir, svc_build_log_fn log, void *arg,
		   struct svc_deps_lease *out, char *why, size_t why_max)
{
	return build_deps(o, dir, NULL, svc_mono_ms() + (int64_t)o->wall_secs * 1000, log, arg, out, why, why_max);
}

/* `npm run build` with the lease's node_modules read-only (writable scratch folders beside `dir`). */
static int build_step(const struct svc_build_opts *o, const char *dir, const char *top,
		      const struct svc_deps_lease *lease, int64_t deadline, svc_build_log_fn log, void *arg, char *why,
		      size_t why_max)
{
	struct svc_sandbox_mount mounts[SVC_DEPS_MOUNTS];
	char scratch[2100], paths[2 * SVC_DEPS_MOUNTS][2300];
	struct step steps[3];
	size_t n;
	int nm;

	memset(steps, 0, sizeof steps);
	n = plan(o, dir, steps);
	if (snprintf(scratch, sizeof scratch, "%s.nm", dir) >= (int)sizeof scratch ||
	    (nm = svc_deps_mounts(lease, "/build", scratch, o->uid, paths, mounts)) < 0) {
		snprintf(why, why_max, "the build directory could not be prepared");
		return SVC_E_INTERNAL;
	}
	steps[n - 1].more = mounts;
	steps[n - 1].nmore = (size_t)nm;
	return run_one(o, dir, top, &steps[n - 1], deadline, log, arg, why, why_max);
}

int svc_build_run(const struct svc_build_opts *o, const char *dir, svc_build_log_fn log, void *arg, char *why,
		  size_t why_max)
{
	struct svc_deps_lease lease;
	char dist[2048], top[2048], up[2100], *slash;
	struct stat st, tst, ust;
	int64_t deadline = svc_mono_ms() + (int64_t)o->wall_secs * 1000;
	int dfd, err;

	snprintf(why, why_max, "%s", "");
	snprintf(dist, sizeof dist, "%s/dist", dir);
	/* the project's own dist/ is not its build's output */
	if (svc_fsx_remove_tree(dist) < 0) {
		snprintf(why, why_max, "the build directory could not be prepared");
		return SVC_E_INTERNAL;
	}
	if (svc_sandbox_check(o->bwrap, o->cgroup_parent, top, sizeof top) < 0) {
		snprintf(why, why_max, "svc refuses to build: %s", top);
		svc_deps__say(log, arg, "%s\n", why);
		svc_log_error("build: %s", why);
		return SVC_E_UNAVAILABLE;
	}
	if ((err = svc_build_check_deps(dir, o->registry, why, why_max)) < 0) {
		svc_deps__say(log, arg, "%s\n", why);
		return SVC_E_VALIDATION;
	}
	if (npm_config(o, dir, log, arg) < 0) {
		snprintf(why, why_max, "the build directory could not be prepared");
		return SVC_E_INTERNAL;
	}
	if (geteuid() == 0) {
		dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		err = dfd < 0 ? SVC_E_INTERNAL : chown_tree(dfd, o->uid, o->uid, 0);
		if (dfd >= 0)
			close(dfd);
		if (err < 0) {
			svc_log_error("build: cannot hand %s to uid %u", dir, o->uid);
			snprintf(why, why_max, "the build directory could not be prepared");
			return SVC_E_INTERNAL;
		}
	}
	/* the bounded tree: `dir`'s parent when it is a mount of its own (svc_build_dir_make()) */
	snprintf(top, sizeof top, "%s", dir);
	if ((slash = strrchr(top, '/')) && slash != top)
		*slash = '\0';
	snprintf(up, sizeof up, "%s/..", top);
	if (stat(top, &tst) < 0 || stat(up, &ust) < 0 || tst.st_dev == ust.st_dev)
		top[0] = '\0';
	/* node_modules: reused from the store when package.json and the lockfile are as installed before */
	if ((err = build_deps(o, dir, top[0] ? top : NULL, deadline, log, arg, &lease, why, why_max)) < 0 ||
	    (lease.lock_made && (err = svc_deps_keep_lock(&lease, dir)) < 0) ||
	    (err = build_step(o, dir, top[0] ? top : NULL, &lease, deadline, log, arg, why, why_max)) < 0) {
		svc_deps_release(&lease);
		return err;
	}
	svc_deps_release(&lease);
	if (lstat(dist, &st) < 0 || !S_ISDIR(st.st_mode)) {
		snprintf(why, why_max, "the build made no dist/ directory");
		svc_deps__say(log, arg, "%s\n", why);
		return SVC_E_VALIDATION;
	}
	return 0;
}

/* ---- the build's directory: a tmpfs of SVC_BUILD_DISK_MB ---- */

int svc_build_dir_make(const struct svc_build_opts *o, const char *top, char *project, size_t max, char *why,
		       size_t why_max)
{
	int n = snprintf(project, max, "%s/project", top);

	snprintf(why, why_max, "%s", "");
	if (n < 0 || (size_t)n >= max)
		return SVC_E_INTERNAL;
	if (geteuid() != 0) {
		/* no tmpfs without root: RLIMIT_FSIZE bounds each file (docs/operations.md "The build sandbox") */
		if (mkdir(top, 0711) < 0) {
			snprintf(why, why_max, "cannot make %s: %s", top, strerror(errno));
			return SVC_E_INTERNAL;
		}
		return 0;
	}
	if (svc_sandbox_disk_mount(top, o->disk_mb, o->uid, why, why_max) < 0) {
		svc_log_error("build: %s", why);
		return SVC_E_INTERNAL;
	}
	return 0;
}

int svc_build_dir_remove(const char *top)
{
	return svc_sandbox_disk_remove(top);
}

int svc_build_sweep(const char *builds, unsigned older_secs)
{
	struct dirent *e;
	struct stat st;
	char path[4200];
	time_t now = time(NULL);
	int n = 0;
	DIR *d = opendir(builds);

	if (!d)
		return errno == ENOENT ? 0 : SVC_E_INTERNAL;
	while ((e = readdir(d)) != NULL) {
		int alive, claim;

		if (e->d_name[0] == '.' || fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
		    !S_ISDIR(st.st_mode))
			continue;
		snprintf(path, sizeof path, "%s/%s", builds, e->d_name);
		/* a tree whose owner is gone goes now; one without an owner (no tmpfs) once older than any build */
		alive = svc_sandbox_disk_owner_alive(path);
		if (alive == 1 || (alive < 0 && now - st.st_mtime < (time_t)older_secs))
			continue;
		/* a claimed tree (a dev server's, held by svc-devd) is never taken; holding the claim, no one takes it up
		 * while it goes */
		if (svc_sandbox_claim(path, &claim) < 0)
			continue;
		if (svc_build_dir_remove(path) == 0) {
			svc_log_info("build: removed %s, left by a build that ended without it", path);
			n++;
		}
		svc_sandbox_claim_release(path, claim);
	}
	closedir(d);
	return n;
}
