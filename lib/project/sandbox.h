/* sandbox.h: one sandboxed run (a build step, a dev server): bubblewrap in a cgroup of its own, no network or the registry only, named limits. */
#ifndef SVC_PROJECT_SANDBOX_H
#define SVC_PROJECT_SANDBOX_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/cgroup.h"
#include "core/config.h"
#include "core/egress.h"

/*
 * The shape (docs/operations.md "The build sandbox"): bubblewrap with the
 * host's /usr read-only, a fresh /proc, /dev and a /tmp tmpfs, the mounts
 * of the spec and nothing else of the host; its own user, PID, IPC, UTS and
 * cgroup namespaces; as spec->uid when svc runs as root; inside a cgroup of
 * its own (lib/core/cgroup.h) bounding the memory, processes and CPU of all
 * its processes together; no network at all, or (SVC_SANDBOX_NET_REGISTRY) a
 * network namespace whose only way out is 127.0.0.1:SVC_SANDBOX_PROXY_PORT,
 * served by the registry-only CONNECT proxy of lib/core/egress.h in a thread
 * of the caller. No RLIMIT_AS and no RLIMIT_NPROC (per uid, host-wide):
 * the cgroup bounds memory and processes per run.
 *
 *	const char *cmd[] = { "/usr/bin/npm", "run", "build", NULL };
 *	struct svc_sandbox_mount m[] = { { dir, "/build", 1 } };
 *	struct svc_sandbox_spec s = { 0 };
 *	svc_sandbox_spec_defaults(cfg, &s);     // bwrap, uid, bounds from the settings
 *	s.argv = cmd; s.mounts = m; s.nmounts = 1; s.chdir = "/build";
 *	s.name = "build-<deployment id>-2";     // unique on the host at one time
 *	s.disk_dir = dir;                      // a svc_sandbox_disk_mount() of dir
 *	s.deadline_ms = svc_mono_ms() + 600000;
 *	s.log = my_log; s.log_arg = me;
 *	if (svc_sandbox_run(&s, &res, why, sizeof why) < 0) ... "svc refuses to build: <why>"
 *	if (res.limit) ... "the build used " + res.limit_text   // "more than 2048 MB of memory"
 *	else if (res.status) ... "npm run build exited with status 1"
 */

#define SVC_SANDBOX_PROXY_PORT 3128 /* with SVC_SANDBOX_NET_REGISTRY: the proxy's port on the sandbox's 127.0.0.1 */
#define SVC_SANDBOX_MOUNTS_MAX 16   /* spec->nmounts at most */
#define SVC_SANDBOX_ENV_MAX 32      /* entries of spec->env at most */
#define SVC_SANDBOX_ARGV_MAX 64     /* entries of spec->argv at most */

/* What the run may reach. */
enum svc_sandbox_net {
	SVC_SANDBOX_NET_NONE = 0,     /* no network at all (only a `lo` of its own) */
	SVC_SANDBOX_NET_REGISTRY = 1, /* only the registry (spec->registry), through the proxy on 127.0.0.1:3128 */
	SVC_SANDBOX_NET_LISTENER = 2  /* only 127.0.0.1:SVC_SANDBOX_PROXY_PORT, whose listener the caller serves
					 (svc_sandbox_listener(); the thumbnails' page server) */
};

/* The limit that ended a run (svc_sandbox_result.limit). */
enum svc_sandbox_limit {
	SVC_SANDBOX_LIMIT_NONE = 0, /* it ended by itself: see .status */
	SVC_SANDBOX_LIMIT_MEMORY,   /* the cgroup's OOM killer killed a process of it */
	SVC_SANDBOX_LIMIT_PROCS,    /* a fork or clone failed at the cgroup's pids.max */
	SVC_SANDBOX_LIMIT_DISK,     /* its bounded tree (spec->disk_dir) filled up, or RLIMIT_FSIZE (SIGXFSZ) */
	SVC_SANDBOX_LIMIT_TIME,     /* the wall deadline passed (killed), or RLIMIT_CPU (SIGXCPU) */
	SVC_SANDBOX_LIMIT_STOPPED   /* svc_sandbox_stop() ended it */
};

/* A host directory shown inside the sandbox. */
struct svc_sandbox_mount {
	const char *src;  /* absolute path on the host (trusted: the caller's), borrowed */
	const char *dest; /* absolute path inside, borrowed */
	int writable;     /* 0: read-only (--ro-bind), 1: --bind */
	int optional;     /* 1: skipped when src does not exist (--ro-bind-try / --bind-try) */
};

/*
 * One run. Zero it, fill it (svc_sandbox_spec_defaults() for the settings),
 * pass it to svc_sandbox_run() or svc_sandbox_start(). Every pointer is
 * borrowed and must outlive the run (start: until svc_sandbox_wait()).
 */
struct svc_sandbox_spec {
	const char *bwrap;                     /* SVC_BUILD_BWRAP */
	const char *const *argv;               /* the command inside, NULL-terminated; argv[0] absolute, under /usr */
	const char *const *env;                /* NULL or "NAME=value" entries, NULL-terminated; besides PATH, LANG */
	const struct svc_sandbox_mount *mounts; /* nmounts entries, mounted in this order */
	size_t nmounts;
	const char *chdir;                     /* working directory inside; NULL: / */
	unsigned tmp_mb;                       /* the /tmp tmpfs, MiB (SVC_BUILD_TMP_MB); 0: 64 */
	enum svc_sandbox_net network;
	const char *registry;                  /* with NET_REGISTRY: the registry's URL (SVC_NPM_REGISTRY), https */
	const struct svc_outbound_policy *egress_policy; /* NULL: the registry must resolve to public addresses;
							    tests widen it for a registry double on loopback */
	svc_egress_resolve_fn egress_resolve;  /* NULL: getaddrinfo; tests map names to doubles */
	void *egress_resolve_arg;
	unsigned memory_mb;                    /* the cgroup's memory, all processes together, MiB (SVC_BUILD_MEMORY_MB) */
	unsigned procs;                        /* the cgroup's pids.max (SVC_BUILD_PROCS) */
	unsigned cpu_percent;                  /* the cgroup's CPU quota, % of one core (SVC_BUILD_CPU_PERCENT) */
	unsigned cpu_secs;                     /* RLIMIT_CPU of each process (SVC_BUILD_CPU_SECS); 0: none */
	const char *name;                      /* the cgroup's name, unique on the host at one time:
						  1..64 of [A-Za-z0-9._-], e.g. "build-<deployment id>-1" */
	const char *cgroup_parent;             /* NULL: svc's own cgroup (svc_cgroup_opts.parent) */
	const char *disk_dir;                  /* NULL, or the host dir of a svc_sandbox_disk_mount(): its pages
						  are charged to the cgroup too, so the memory bound becomes
						  memory_mb + disk_mb; a run that fails with it full ended at DISK */
	unsigned disk_mb;                      /* SVC_BUILD_DISK_MB: RLIMIT_FSIZE of each process, MiB (0: none),
						  and the disk_dir's size for the message */
	unsigned uid;                          /* the user it runs as when svc runs as root (SVC_BUILD_UID) */
	int64_t deadline_ms;                   /* svc_sandbox_run(): svc_mono_ms() when it is killed; 0: none */
	int pass_fds[2];                       /* with npass_fds 2: descriptors of the caller the command gets as
						  its fds 3 and 4 (Chromium's --remote-debugging-pipe: it reads 3,
						  writes 4); every other one stays outside */
	unsigned npass_fds;                    /* 0 (none) or 2 */
	void (*log)(void *arg, const char *text, size_t len); /* svc_sandbox_run(): the output as it comes
						  (stdout and stderr, pieces of up to 4 KiB), and NULL/0 about once a
						  second of silence (keep-alive); NULL: dropped */
	void *log_arg;
	int (*cancel)(void *arg);              /* svc_sandbox_run(): NULL, or asked about every 200 ms; a non-zero
						  return stops the run at once (its whole group killed, limit
						  STOPPED): a turn's Stop ends its check's build */
	void *cancel_arg;
};

/* How a run ended. */
struct svc_sandbox_result {
	int status;                  /* exit status; 128 + signal when killed; -1 when the deadline killed it */
	enum svc_sandbox_limit limit; /* the limit that ended it, or NONE */
	char limit_text[96];         /* "" or what the limit was: "more than 2048 MB of memory", "more than 256
					processes", "more than 2048 MB of disk", "more than 600 s of time" (wall),
					"more than 300 s of CPU", "stopped" */
	unsigned long long memory_peak; /* the cgroup's peak memory, bytes (0 when unknown) */
};

/* A run started by svc_sandbox_start(). */
struct svc_sandbox;

/*
 * Fills the settings' part of *s from `cfg`: bwrap, uid (SVC_BUILD_UID),
 * memory_mb, procs, cpu_percent, cpu_secs, disk_mb, tmp_mb and registry
 * (SVC_NPM_REGISTRY). Leaves the rest alone. Strings are borrowed from cfg.
 */
void svc_sandbox_spec_defaults(const struct svc_config *cfg, struct svc_sandbox_spec *s);

/*
 * Whether this host can run sandboxes: a usable cgroup hierarchy
 * (svc_cgroup_check() under `cgroup_parent`, NULL: svc's own) and
 * bubblewrap at `bwrap`. Returns 0, or SVC_E_UNAVAILABLE with the reason in
 * `why` ("no cgroup hierarchy with the memory and pids controllers is
 * mounted"); the caller says "svc refuses to build: <why>". For
 * `svc-admin check` and before each build.
 */
int svc_sandbox_check(const char *bwrap, const char *cgroup_parent, char *why, size_t why_max);

/*
 * Runs `s` to its end (or its deadline, or s->cancel's non-zero answer:
 * the whole group killed), passing its output to s->log, and fills *res. The cgroup is removed, the proxy
 * stopped, nothing of the run is left on the host but what it wrote into
 * writable mounts. Returns 0 whenever the command ran (whatever its
 * status: see *res), SVC_E_VALIDATION for a bad spec (a name, too many
 * mounts), SVC_E_UNAVAILABLE when the host cannot contain it (no cgroup: the
 * reason in `why`) or SVC_E_INTERNAL when it could not start (logged; `why`
 * says so).
 */
int svc_sandbox_run(const struct svc_sandbox_spec *s, struct svc_sandbox_result *res, char *why, size_t why_max);

/*
 * Starts `s` without waiting (a dev server): its stdout and stderr go to
 * `out_fd` (a file or pipe of the caller, kept open by the run; -1:
 * /dev/null); s->log and s->deadline_ms are not used. On success *out is the
 * run, to end with svc_sandbox_stop() and/or svc_sandbox_wait() (which frees
 * it). Returns as svc_sandbox_run(). Not async-signal-safe; the caller may
 * be threaded (the child execs at once after fork).
 */
int svc_sandbox_start(const struct svc_sandbox_spec *s, int out_fd, struct svc_sandbox **out, char *why,
		      size_t why_max);

/* The run's first process (bubblewrap, leader of its own session); for waitpid() by the caller use svc_sandbox_wait(). */
pid_t svc_sandbox_pid(const struct svc_sandbox *sb);

/* The run's cgroup (svc_cgroup_memory_bytes() for its memory now); borrowed, valid until svc_sandbox_wait(). */
const struct svc_cgroup *svc_sandbox_cgroup(const struct svc_sandbox *sb);

/*
 * Whether the run has ended, without waiting: 1 (ended; svc_sandbox_wait()
 * returns at once), 0 (running).
 */
int svc_sandbox_poll(struct svc_sandbox *sb);

/*
 * With SVC_SANDBOX_NET_LISTENER: the listening socket of the run's
 * 127.0.0.1:SVC_SANDBOX_PROXY_PORT (in its network namespace), for the
 * caller to accept on; borrowed (closed by svc_sandbox_wait()). Else -1.
 */
int svc_sandbox_listener(const struct svc_sandbox *sb);

/*
 * Makes a TCP socket (AF_INET, SOCK_STREAM, close-on-exec, not connected)
 * in the run's network namespace, so the caller can connect to a server the
 * run listens on at its own 127.0.0.1 (a dev server): the calling thread
 * enters the namespace of a process of the run's cgroup (setns(2); root, or
 * a user with CAP_SYS_ADMIN over it), makes the socket and goes back.
 * Thread-safe (setns of a network namespace moves only the calling thread).
 * Returns 0 with *out_fd set (the caller's to close), SVC_E_NOT_FOUND when
 * no process of the run has a namespace of its own (yet), SVC_E_INTERNAL.
 */
int svc_sandbox_socket(const struct svc_sandbox *sb, int *out_fd);

/*
 * Stops the run: SIGTERM to every process of its cgroup, waits at most
 * `grace_ms` for the run to end, then SIGKILL to every process left in it.
 * Does not free: call svc_sandbox_wait() after. Returns 0.
 */
int svc_sandbox_stop(struct svc_sandbox *sb, long grace_ms);

/*
 * Waits for the run to end, fills *res (limit STOPPED when svc_sandbox_stop()
 * ended it), kills what is left in its cgroup, removes the cgroup, stops
 * the proxy, and frees `sb`. NULL is allowed (returns 0, *res untouched).
 * Returns 0.
 */
int svc_sandbox_wait(struct svc_sandbox *sb, struct svc_sandbox_result *res);

/*
 * The disk bound of a writable tree (root only): makes `dir` (absolute,
 * trusted; it must not exist, its parent must) and mounts a tmpfs of
 * `disk_mb` MiB there (mode 0700, owned by `uid`: only the sandbox's user and root reach it), so a run writing more
 * gets ENOSPC and the host's disk is untouched; the caller fills it and
 * binds it into runs (spec->disk_dir = dir), then removes it with
 * svc_sandbox_disk_remove(). Returns 0, SVC_E_UNAVAILABLE when svc is not
 * root or the mount fails (the reason in `why`), SVC_E_INTERNAL.
 */
int svc_sandbox_disk_mount(const char *dir, unsigned disk_mb, unsigned uid, char *why, size_t why_max);

/*
 * Whether the tmpfs at `dir` is full (less than 1 MiB or 1% free, or no
 * inode left). Returns 1, 0, or 0 when it cannot be read.
 */
int svc_sandbox_disk_full(const char *dir);

/*
 * Unmounts what svc_sandbox_disk_mount() mounted at `dir` (lazily, so a file
 * still open elsewhere does not keep it; its memory is freed with the last
 * reference) and removes `dir` with what is left in it (a plain directory
 * when nothing was mounted). Returns 0 or SVC_E_INTERNAL.
 */
int svc_sandbox_disk_remove(const char *dir);

/*
 * Whether the process that made the svc_sandbox_disk_mount() at `dir` still
 * runs: the mount records its owner (pid and start time) in `dir`.owner
 * beside it, removed by svc_sandbox_disk_remove(). For the sweeps of trees
 * left by a killed build (svc_build_sweep(), svc_deps_sweep()). Returns 1
 * (alive: leave it), 0 (its process is gone: a leftover), -1 (no owner
 * recorded: a plain directory, or made before owners were; judge by age).
 */
int svc_sandbox_disk_owner_alive(const char *dir);

/*
 * Claims the tree `dir` (absolute, trusted) for the calling process as long
 * as it holds it: an exclusive flock(2) on `dir`.owner (beside it; made
 * empty, 0600, when missing), which the sweeps respect: svc_build_sweep()
 * claims a tree before it removes one and leaves a claimed one alone.
 * svc-devd claims each dev server's tree, builds/dev-<projectId>, while it
 * has the server (its mirror, install and caches are in use even while no
 * process of it runs). The lock is the kernel's: it goes with the process
 * however it ends. Sets *out_fd (the caller's, for svc_sandbox_claim_release()).
 * Returns 0, SVC_E_CONFLICT when another process holds the claim (a sweep
 * that removes the tree, or another svc-devd), SVC_E_INTERNAL (the
 * directory `dir` is in cannot be written).
 */
int svc_sandbox_claim(const char *dir, int *out_fd);

/* Lets go of the claim `fd` of svc_sandbox_claim() on `dir`: removes `dir`.owner (a tree no one claims is judged by its age again), then closes `fd`. */
void svc_sandbox_claim_release(const char *dir, int fd);

/* The name of `limit` for messages: "memory", "processes", "disk", "time", "stopped", "" for NONE. */
const char *svc_sandbox_limit_name(enum svc_sandbox_limit limit);

#endif
