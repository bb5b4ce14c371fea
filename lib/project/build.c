/* build.c: a package.json project's build (npm ci or install, then npm run build) inside bubblewrap, with limits. */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/err.h"
#include "core/fsx.h"
#include "core/log.h"
#include "core/netns.h"
#include "core/util.h"
#include "project/build.h"
#include "project/deps.h"

#define BUILD_ARGS_MAX 128

void svc_build_opts_load(const struct svc_config *cfg, int scripts, struct svc_build_opts *out)
{
	/* bounds and defaults: the settings table (lib/core/config_table.c) */
	out->bwrap = cfg->build_bwrap;
	out->npm = cfg->build_npm;
	out->cpu_secs = cfg->build_cpu_secs;
	out->memory_mb = cfg->build_memory_mb;
	out->procs = cfg->build_procs;
	out->wall_secs = cfg->build_wall_secs;
	out->tmp_mb = cfg->build_tmp_mb;
	out->uid = cfg->build_uid;
	out->thumb_uid = cfg->thumb_uid;
	out->network = cfg->build_network;
	out->scripts = scripts;
	out->data_dir = cfg->data_dir; /* deps: node_modules reused (lib/project/deps.h) */
	out->npm_modules_max_mb = cfg->npm_modules_max_mb;
	out->npm_cache_max_mb = cfg->npm_cache_max_mb;
	out->workspace_id = NULL;
}

static void say(svc_build_log_fn log, void *arg, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void say(svc_build_log_fn log, void *arg, const char *fmt, ...)
{
	char line[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	if (n > 0 && log)
		log(arg, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
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

struct step {
	const char *title;  /* "npm ci", for the log and the reason */
	int network;        /* the host's network */
	const char *cmd[16]; /* the command inside the sandbox, NULL-terminated */
	const char *root;   /* bound as /build instead of the build's directory (deps: an install's own tree), or NULL */
	const char *const *extra; /* more bubblewrap arguments after the /build bind (deps' mounts), NULL-ended, or NULL */
};

size_t svc_build_sandbox_base(const char *bwrap, const char *uid, const char **argv)
{
	static const char *const base[] = {
		"--unshare-user", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
		"--new-session", "--die-with-parent",
		"--ro-bind", "/usr", "/usr", "--symlink", "usr/lib", "/lib", "--symlink", "usr/lib64", "/lib64",
		"--symlink", "usr/bin", "/bin", "--symlink", "usr/sbin", "/sbin",
		"--proc", "/proc", "--dev", "/dev",
		"--clearenv", "--setenv", "PATH", "/usr/local/bin:/usr/bin:/bin", "--setenv", "LANG", "C.UTF-8",
	};
	size_t n = 0, i;

	argv[n++] = bwrap;
	for (i = 0; i < sizeof base / sizeof base[0]; i++)
		argv[n++] = base[i];
	argv[n++] = "--uid";
	argv[n++] = uid;
	argv[n++] = "--gid";
	argv[n++] = uid;
	assert(n <= SVC_SANDBOX_BASE_ARGS);
	return n;
}

/* The bubblewrap command line of one step (docs/operations.md "The build sandbox"). */
static size_t sandbox_args(const struct svc_build_opts *o, const char *dir, const struct step *s, const char *tmp_size,
			   const char *uid, const char **argv)
{
	static const char *const base[] = {
		"--setenv", "HOME", "/build/.svc-home",
		"--setenv", "npm_config_cache", "/build/.svc-home/npm-cache", "--setenv", "npm_config_update_notifier",
		"false", "--setenv", "npm_config_fund", "false", "--setenv", "npm_config_audit", "false",
		"--setenv", "CI", "1",
	};
	/* name resolution and TLS for the registry, only in a step with the network */
	static const char *const net[] = {
		"--ro-bind-try", "/etc/resolv.conf", "/etc/resolv.conf", "--ro-bind-try", "/etc/hosts", "/etc/hosts",
		"--ro-bind-try", "/etc/nsswitch.conf", "/etc/nsswitch.conf", "--ro-bind-try", "/etc/ssl", "/etc/ssl",
		"--ro-bind-try", "/etc/ca-certificates", "/etc/ca-certificates",
	};
	size_t n = 0, i;

	n = svc_build_sandbox_base(o->bwrap, uid, argv);
	for (i = 0; i < sizeof base / sizeof base[0]; i++)
		argv[n++] = base[i];
	argv[n++] = "--size";
	argv[n++] = tmp_size;
	argv[n++] = "--tmpfs";
	argv[n++] = "/tmp";
	argv[n++] = "--bind";
	argv[n++] = s->root ? s->root : dir;
	argv[n++] = "/build";
	argv[n++] = "--chdir";
	argv[n++] = "/build";
	for (i = 0; s->extra && s->extra[i]; i++)
		argv[n++] = s->extra[i];
	if (s->network) {
		for (i = 0; i < sizeof net / sizeof net[0]; i++)
			argv[n++] = net[i];
	} else {
		argv[n++] = "--unshare-net";
	}
	argv[n++] = "--remount-ro"; /* bubblewrap's own root (a tmpfs): /build and /tmp are mounts of their own */
	argv[n++] = "/";
	argv[n++] = "--";
	for (i = 0; s->cmd[i]; i++)
		argv[n++] = s->cmd[i];
	argv[n] = NULL;
	return n;
}

void svc_build_sandbox_exec(const char *bwrap, const struct svc_sandbox_limits *lim, int out_fd, int err_fd,
			    const char **argv)
{
	static char *const envp[] = { "PATH=/usr/bin:/bin", "LANG=C.UTF-8", NULL };
	struct rlimit cpu = { lim->cpu_secs, lim->cpu_secs + 5 };
	struct rlimit as = { (rlim_t)lim->memory_mb << 20, (rlim_t)lim->memory_mb << 20 };
	struct rlimit np = { lim->procs, lim->procs }, core = { 0, 0 };
	int devnull, e;

	setsid();
	if (geteuid() == 0 && (setgroups(0, NULL) < 0 || setgid(lim->uid) < 0 || setuid(lim->uid) < 0))
		goto fail;
	if (lim->netns_port && (e = svc_netns_isolate(lim->netns_port, lim->netns_sock)) < 0) {
		errno = -e;
		goto fail;
	}
	if ((lim->cpu_secs && setrlimit(RLIMIT_CPU, &cpu) < 0) || (lim->memory_mb && setrlimit(RLIMIT_AS, &as) < 0) ||
	    (lim->procs && setrlimit(RLIMIT_NPROC, &np) < 0) || setrlimit(RLIMIT_CORE, &core) < 0)
		goto fail;
	devnull = open("/dev/null", O_RDWR);
	if (out_fd < 0)
		out_fd = devnull;
	if (devnull < 0 || dup2(devnull, 0) < 0 || dup2(out_fd, 1) < 0 || dup2(out_fd, 2) < 0)
		goto fail;
	/* nothing of the caller (a FastCGI socket, MariaDB) reaches the sandbox */
	if (err_fd < 3 || dup2(err_fd, 3) < 0 || fcntl(3, F_SETFD, FD_CLOEXEC) < 0)
		goto fail;
	if (close_range(4, ~0U, 0) < 0) {
		long fd, max = sysconf(_SC_OPEN_MAX);
		for (fd = 4; fd < (max > 0 ? max : 65536); fd++)
			close((int)fd);
	}
	err_fd = 3;
	execve(bwrap, (char *const *)argv, envp);
fail:
	e = errno;
	if (write(err_fd, &e, sizeof e) < 0)
		_exit(127);
	_exit(127);
}

/*
 * Runs step `s` in the sandbox until it ends or `deadline_ms` (svc_mono_ms)
 * passes. *out_status is its exit status (128 + signal when killed, -1 when
 * the deadline killed it). Returns 0 or SVC_E_INTERNAL (it could not start).
 */
static int run_step(const struct svc_build_opts *o, const char *dir, const struct step *s, int64_t deadline_ms,
		    svc_build_log_fn log, void *arg, int *out_status)
{
	const char *argv[BUILD_ARGS_MAX];
	char tmp_size[32], uid[16], buf[4096];
	int fds[2], efds[2], status = 0, timed_out = 0, child_errno = 0;
	pid_t pid;

	snprintf(tmp_size, sizeof tmp_size, "%llu", (unsigned long long)o->tmp_mb << 20);
	snprintf(uid, sizeof uid, "%u", o->uid);
	sandbox_args(o, dir, s, tmp_size, uid, argv);
	if (pipe2(fds, O_CLOEXEC) < 0)
		return SVC_E_INTERNAL;
	if (pipe2(efds, O_CLOEXEC) < 0) {
		close(fds[0]);
		close(fds[1]);
		return SVC_E_INTERNAL;
	}
	pid = fork();
	if (pid == 0) {
		struct svc_sandbox_limits lim = { o->uid, o->cpu_secs, o->memory_mb, o->procs, 0, -1 };
		svc_build_sandbox_exec(o->bwrap, &lim, fds[1], efds[1], argv);
	}
	close(fds[1]);
	close(efds[1]);
	if (pid > 0 && read(efds[0], &child_errno, sizeof child_errno) > 0) {
		svc_log_error("build: cannot run %s: %s", o->bwrap, strerror(child_errno));
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
		pid = -1;
	}
	close(efds[0]);
	if (pid < 0) {
		close(fds[0]);
		return SVC_E_INTERNAL;
	}
	for (;;) {
		struct pollfd p = { fds[0], POLLIN, 0 };
		int64_t left = deadline_ms - svc_mono_ms();
		ssize_t n;
		int r;

		if (left <= 0) {
			timed_out = 1;
			break;
		}
		r = poll(&p, 1, left < 1000 ? (int)left : 1000);
		if (r < 0 && errno != EINTR)
			break;
		if (r <= 0) {
			if (log)
				log(arg, NULL, 0);
			continue;
		}
		n = read(fds[0], buf, sizeof buf);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n <= 0)
			break;
		if (log)
			log(arg, buf, (size_t)n);
	}
	if (timed_out) {
		kill(-pid, SIGKILL); /* bubblewrap's session: --die-with-parent takes the rest */
		kill(pid, SIGKILL);
	}
	close(fds[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (timed_out)
		*out_status = -1;
	else if (WIFEXITED(status))
		*out_status = WEXITSTATUS(status);
	else
		*out_status = 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
	return 0;
}

/* The reason a step that ended with `status` (run_step()) failed, in why; 0 when it worked. */
static int step_result(const struct svc_build_opts *o, const char *title, int status, svc_build_log_fn log, void *arg,
		       char *why, size_t why_max)
{
	if (status == 0)
		return 0;
	if (status == -1)
		snprintf(why, why_max, "the build ran out of time (%u s)", o->wall_secs);
	else if (status > 128)
		snprintf(why, why_max, "%s was killed by signal %d (a limit: CPU %u s, memory %u MiB?)", title,
			 status - 128, o->cpu_secs, o->memory_mb);
	else
		snprintf(why, why_max, "%s exited with status %d", title, status);
	say(log, arg, "%s\n", why);
	return SVC_E_VALIDATION;
}

/* deps' steps (lib/project/deps.h svc_deps_run_fn) in this sandbox. */
struct deps_run_ctx {
	const struct svc_build_opts *o;
	const char *dir;
	int64_t deadline_ms;
	svc_build_log_fn log;
	void *arg;
};

static int deps_run(void *arg, const struct svc_deps_step *ds, char *why, size_t why_max)
{
	struct deps_run_ctx *c = arg;
	struct step s = { ds->title, ds->network, { NULL }, ds->root, ds->extra };
	size_t i;
	int status;

	for (i = 0; ds->cmd[i] && i + 1 < sizeof s.cmd / sizeof s.cmd[0]; i++)
		s.cmd[i] = ds->cmd[i];
	if (run_step(c->o, c->dir, &s, c->deadline_ms, c->log, c->arg, &status) < 0) {
		snprintf(why, why_max, "the build sandbox could not be started");
		return SVC_E_INTERNAL;
	}
	return step_result(c->o, s.title, status, c->log, c->arg, why, why_max);
}

static int build_deps(const struct svc_build_opts *o, const char *dir, int64_t deadline_ms, svc_build_log_fn log,
		      void *arg, struct svc_deps_lease *out, char *why, size_t why_max)
{
	struct deps_run_ctx c = { o, dir, deadline_ms, log, arg };
	struct svc_deps_opts d = { o->data_dir, o->npm, o->npm_modules_max_mb, o->npm_cache_max_mb, o->uid,
				   o->network, o->scripts, o->workspace_id };

	return svc_deps_prepare(&d, dir, deps_run, &c, log, arg, out, why, why_max);
}

int svc_build_deps(const struct svc_build_opts *o, const char *dir, svc_build_log_fn log, void *arg,
		   struct svc_deps_lease *out, char *why, size_t why_max)
{
	return build_deps(o, dir, svc_mono_ms() + (int64_t)o->wall_secs * 1000, log, arg, out, why, why_max);
}

int svc_build_run(const struct svc_build_opts *o, const char *dir, svc_build_log_fn log, void *arg, char *why,
		  size_t why_max)
{
	struct svc_deps_lease lease;
	struct step build = { "npm run build", 0, { NULL }, NULL, NULL };
	const char *mounts[SVC_DEPS_BIND_ARGS + 1] = { NULL };
	char dist[2048], tmp_size[32], paths[SVC_DEPS_WRITABLE + 1][2200];
	struct stat st;
	int64_t deadline = svc_mono_ms() + (int64_t)o->wall_secs * 1000;
	size_t k = 0;
	int dfd, err, status;

	snprintf(why, why_max, "%s", "");
	snprintf(dist, sizeof dist, "%s/dist", dir);
	/* the project's own dist/ is not its build's output */
	if (svc_fsx_remove_tree(dist) < 0) {
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
	/* node_modules: reused from the store when package.json and the lockfile are as installed before */
	if ((err = build_deps(o, dir, deadline, log, arg, &lease, why, why_max)) < 0 ||
	    (lease.lock_made && (err = svc_deps_keep_lock(&lease, dir)) < 0)) {
		svc_deps_release(&lease);
		return err;
	}
	snprintf(tmp_size, sizeof tmp_size, "%llu", (unsigned long long)o->tmp_mb << 20);
	svc_deps_bind_args(&lease, "/build", tmp_size, paths, mounts);
	build.extra = mounts;
	build.cmd[k++] = o->npm;
	build.cmd[k++] = "run";
	build.cmd[k++] = "build";
	if (!o->scripts)
		build.cmd[k++] = "--ignore-scripts"; /* no prebuild/postbuild either */
	say(log, arg, "$ npm run build (no network%s)\n", lease.modules[0] ? ", node_modules read-only" : "");
	err = run_step(o, dir, &build, deadline, log, arg, &status);
	svc_deps_release(&lease);
	if (err < 0) {
		snprintf(why, why_max, "the build sandbox could not be started");
		return SVC_E_INTERNAL;
	}
	if ((err = step_result(o, build.title, status, log, arg, why, why_max)) < 0)
		return err;
	if (lstat(dist, &st) < 0 || !S_ISDIR(st.st_mode)) {
		snprintf(why, why_max, "the build made no dist/ directory");
		say(log, arg, "%s\n", why);
		return SVC_E_VALIDATION;
	}
	return 0;
}
