/* cgroup.h: one cgroup per sandboxed run (a build, a dev server) that bounds its memory, processes and CPU together. */
#ifndef SVC_CORE_CGROUP_H
#define SVC_CORE_CGROUP_H

#include <stddef.h>
#include <sys/types.h>

/*
 * Why cgroups and not RLIMIT_AS: an address-space limit counts what a
 * process reserves, not what it uses, and V8 reserves far more than it
 * commits for every WebAssembly memory, so any tool with a Wasm part fails
 * under it. A cgroup bounds the memory really charged to all the sandbox's
 * processes together, and its processes and CPU too.
 *
 * The layout: under a parent cgroup (by default the one svc itself runs in,
 * read from /proc/self/cgroup), a `svc` group, and in it one group per run:
 *
 *   cgroup v2 (the unified hierarchy; Debian 12 with systemd):
 *     <mount>/<parent>/svc/<name>/{memory.max, pids.max, cpu.max, cgroup.procs}
 *     The parent must be delegated to svc (systemd: Delegate=yes) with the
 *     memory and pids (and cpu) controllers in its cgroup.subtree_control, or
 *     svc must be able to enable them there. A cgroup with processes in it
 *     cannot (the kernel's "no internal process" rule): when the parent is
 *     svc's own cgroup and opts.vacate says it is delegated, svc first moves
 *     its processes into <parent>/main, as
 *     systemd's DelegateSubgroup= does (and a process of svc in a v2 leaf
 *     named `main` takes that leaf's parent as its own).
 *   cgroup v1 (a controller per hierarchy, /sys/fs/cgroup/<controller>):
 *     <memory mount>/<parent>/svc/<name>/{memory.limit_in_bytes, ...}
 *     <pids mount>/<parent>/svc/<name>/pids.max
 *     <cpu mount>/<parent>/svc/<name>/cpu.cfs_quota_us
 *
 * v2 is used when the unified hierarchy offers the memory and pids
 * controllers, else v1 when both of those are mounted (a hybrid host has an
 * empty unified hierarchy besides: v1 then). Kernel sources:
 * Documentation/admin-guide/cgroup-v2.rst, Documentation/admin-guide/
 * cgroup-v1/{memory,pids}.rst.
 *
 *	struct svc_cgroup_opts o = { NULL, 2048, 256, 100, 0 };
 *	struct svc_cgroup *cg;
 *	if (svc_cgroup_new(&o, "build-<id>", &cg, why, sizeof why) < 0)
 *		... "svc refuses to build: <why>"
 *	pid = fork();
 *	if (pid == 0) {
 *		if (svc_cgroup_join(cg) < 0) _exit(127);  // before dropping to the build's user
 *		... setuid, execve
 *	}
 *	waitpid(pid, &status, 0);
 *	if ((hit = svc_cgroup_limit_hit(cg)) != SVC_CGROUP_LIMIT_NONE)
 *		svc_cgroup_describe(cg, hit, text, sizeof text);  // "more than 2048 MB of memory"
 *	svc_cgroup_free(cg);  // kills what is left, removes the groups
 */

/* Which cgroup hierarchy a host offers svc. */
enum svc_cgroup_version {
	SVC_CGROUP_NONE = 0,
	SVC_CGROUP_V1 = 1,
	SVC_CGROUP_V2 = 2
};

/* The limit that ended (or hampered) a run, as read after it. */
enum svc_cgroup_limit {
	SVC_CGROUP_LIMIT_NONE = 0,
	SVC_CGROUP_LIMIT_MEMORY,  /* the kernel's OOM killer killed a process of the group */
	SVC_CGROUP_LIMIT_PROCS,   /* a fork or clone failed at the group's process bound */
	SVC_CGROUP_LIMIT__MAX
};

/* The bounds of one run's group, filled by the caller from its settings; 0 is "no bound" for each. */
struct svc_cgroup_opts {
	const char *parent;   /* NULL or "": svc's own cgroup; else a path from the hierarchy's root ("/svc.slice") */
	unsigned memory_mb;   /* memory of all the group's processes together, MiB (swap not allowed beyond it) */
	unsigned procs;       /* processes and threads in the group at once (pids.max) */
	unsigned cpu_percent; /* CPU time, percent of one core (100 = one core, 200 = two) */
	int vacate;           /* v2, parent NULL: svc's own cgroup is delegated to it (systemd Delegate=yes), so
				 svc may move its processes into <own>/main to hand controllers down (see above) */
};

struct svc_cgroup;

/*
 * Tells whether cgroups can contain a run here, for `svc-admin check` and
 * before a build: finds the hierarchy (see the top of this file) and checks
 * that svc can make groups under `parent` (as svc_cgroup_opts.parent). Makes
 * and removes a probe group; never moves a process (opts.vacate 0). Returns SVC_CGROUP_V1 or SVC_CGROUP_V2, or
 * SVC_E_UNAVAILABLE with the reason for a person written into `why` (of
 * `why_max` bytes) as "no cgroup hierarchy with the memory and pids
 * controllers is mounted" or "cannot make a cgroup in <dir>: Permission
 * denied"; the caller says "svc refuses to build: <why>".
 */
int svc_cgroup_check(const char *parent, char *why, size_t why_max);

/*
 * Prepares the delegated subtree svc's runs use on a cgroup v2 host where
 * systemd does not delegate one (svc not started by its units, which have
 * Delegate=yes: another service manager, a container), for `svc-admin
 * cgroup-prepare USER` run as root (docs/operations.md "cgroup v2 hosts";
 * kernel Documentation/admin-guide/cgroup-v2.rst "Delegation"): makes the
 * cgroup `subtree` (absolute from the hierarchy's root, [A-Za-z0-9._-]
 * names: "/svc", SVC_BUILD_CGROUP) and its missing ancestors, enables the
 * memory and pids controllers (and cpu where offered) in the
 * cgroup.subtree_control of the root and of every cgroup down to it and of
 * `subtree` itself, makes the leaf `subtree`/main for svc's own processes
 * (a process of svc there takes `subtree` as its own cgroup), and hands
 * `subtree` and `main` with their cgroup.procs, cgroup.threads and
 * cgroup.subtree_control to `uid`:`gid`. Running again is harmless.
 * `mount`: the cgroup2 mount point, NULL to find it (/proc/self/mountinfo).
 * Returns 0, or SVC_E_UNAVAILABLE with the reason for a person in `why`
 * (of `why_max` bytes): no v2 hierarchy with the memory and pids
 * controllers, a bad subtree, a cgroup on the way that has processes of its
 * own (the no internal process rule), permission.
 */
int svc_cgroup_prepare(const char *mount, const char *subtree, unsigned uid, unsigned gid, char *why, size_t why_max);

/*
 * For `svc-admin check` on a cgroup v2 host: whether `subtree` (as
 * svc_cgroup_prepare(); NULL or "": svc's own cgroup, delegated by the
 * units) is ready for svc's groups: it exists, has the memory and pids
 * controllers, and its delegated files belong to the directory's owner.
 * Writes one line for a person into `out` (of `max` bytes): what is ready
 * and for which uid, or what is missing and that `svc-admin cgroup-prepare
 * USER` makes it. `mount` as svc_cgroup_prepare(). Returns 1 (ready, or
 * svc's own cgroup: `out` says so), 0 (not ready), -1 (no v2 hierarchy with
 * those controllers: nothing to report, `out` says why).
 */
int svc_cgroup_delegation(const char *mount, const char *subtree, char *out, size_t max);

/*
 * Makes the group `name` (1..64 of [A-Za-z0-9._-], e.g. "build-<uuid>")
 * under the parent's `svc` group (made when missing, with the controllers
 * enabled for its children in v2) and writes the bounds of `o` into it. A
 * group of that name left by an earlier run is emptied (its processes
 * killed) and removed first, so the name must be unique among the runs of
 * the host at one time: take it from the deployment or job, not the project.
 * On success *out is the group, to free with svc_cgroup_free(). Returns 0,
 * SVC_E_VALIDATION for a bad name, or SVC_E_UNAVAILABLE with the reason in
 * `why` (as svc_cgroup_check(), or "cannot set memory.max: ...").
 */
int svc_cgroup_new(const struct svc_cgroup_opts *o, const char *name, struct svc_cgroup **out, char *why,
		   size_t why_max);

/*
 * For a child just forked, before it drops its privileges and execs: moves
 * the calling process into `cg` (writes "0" to each hierarchy's
 * cgroup.procs), so that everything it starts is in the group from the
 * start. Uses only open, write and close: async-signal-safe, fine after
 * fork() in a threaded parent. Returns 0 or a negative errno.
 */
int svc_cgroup_join(const struct svc_cgroup *cg);

/* The parent's way: moves the process `pid` into `cg`. Returns 0 or a negative errno. */
int svc_cgroup_add(const struct svc_cgroup *cg, pid_t pid);

/*
 * Reads, after (or during) the run, which bound of `cg` was hit: a process
 * killed by the OOM killer (v2 memory.events oom_kill; v1 memory.oom_control
 * oom_kill, or under_oom on kernels before 4.13 that count no kills) first,
 * else a fork refused at pids.max (pids.events max). Returns the limit, or
 * SVC_CGROUP_LIMIT_NONE.
 */
enum svc_cgroup_limit svc_cgroup_limit_hit(const struct svc_cgroup *cg);

/* The name of `limit` for messages: "memory", "processes", or "" for none. */
const char *svc_cgroup_limit_name(enum svc_cgroup_limit limit);

/*
 * Writes what `limit` of `cg` was, for the end of "the build used ...", into
 * `out` (of `max` bytes): "more than 2048 MB of memory", "more than 256
 * processes". Returns 0, or SVC_E_VALIDATION for SVC_CGROUP_LIMIT_NONE (out
 * is then "").
 */
int svc_cgroup_describe(const struct svc_cgroup *cg, enum svc_cgroup_limit limit, char *out, size_t max);

/* The memory the group's processes use now, in bytes (memory.current / memory.usage_in_bytes); 0 when unknown. */
unsigned long long svc_cgroup_memory_bytes(const struct svc_cgroup *cg);

/* The group's directory (v2: its one directory; v1: the memory hierarchy's), for logs; borrowed. */
const char *svc_cgroup_dir(const struct svc_cgroup *cg);

/* The hierarchy `cg` lives in. */
enum svc_cgroup_version svc_cgroup_version(const struct svc_cgroup *cg);

/*
 * Kills every process left in `cg` (v2 cgroup.kill where the kernel has it;
 * else SIGKILL to each pid in cgroup.procs until none is left), removes its
 * directories, and frees it. NULL is allowed. Returns 0, or
 * SVC_E_UNAVAILABLE when a directory could not be removed within 5 s (it is
 * logged; a later svc_cgroup_new() of the same name removes it).
 */
int svc_cgroup_free(struct svc_cgroup *cg);

#endif
