/* sandbox.c: one sandboxed run (a build step, a dev server): bubblewrap in a cgroup of its own, no network or the registry only, named limits. */
#include <assert.h>
#include <sched.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/err.h"
#include "core/fsx.h"
#include "core/log.h"
#include "core/netns.h"
#include "core/util.h"
#include "project/sandbox.h"

#define ARGS_MAX (48 + 4 * SVC_SANDBOX_MOUNTS_MAX + 3 * SVC_SANDBOX_ENV_MAX + SVC_SANDBOX_ARGV_MAX)

struct svc_sandbox {
	struct svc_cgroup *cg;
	struct svc_egress *eg;
	int listener;  /* NET_LISTENER: the caller's */
	pid_t pid;
	int reaped, status, stopped;
	unsigned memory_mb, procs, disk_mb, cpu_secs;
	const char *disk_dir;
	char allow[300];
	char limit_text[96];
};

void svc_sandbox_spec_defaults(const struct svc_config *cfg, struct svc_sandbox_spec *s)
{
	s->bwrap = cfg->build_bwrap;
	s->uid = cfg->build_uid;
	s->memory_mb = cfg->build_memory_mb;
	s->procs = cfg->build_procs;
	s->cpu_percent = cfg->build_cpu_percent;
	s->cpu_secs = cfg->build_cpu_secs;
	s->disk_mb = cfg->build_disk_mb;
	s->tmp_mb = cfg->build_tmp_mb;
	s->registry = cfg->npm_registry;
	s->cgroup_parent = cfg->build_cgroup && cfg->build_cgroup[0] ? cfg->build_cgroup : NULL;
}

int svc_sandbox_check(const char *bwrap, const char *cgroup_parent, char *why, size_t why_max)
{
	snprintf(why, why_max, "%s", "");
	if (!bwrap || access(bwrap, X_OK) != 0) {
		snprintf(why, why_max, "no bubblewrap at %s", bwrap ? bwrap : "(unset)");
		return SVC_E_UNAVAILABLE;
	}
	return svc_cgroup_check(cgroup_parent, why, why_max) < 0 ? SVC_E_UNAVAILABLE : 0;
}

const char *svc_sandbox_limit_name(enum svc_sandbox_limit limit)
{
	static const char *const names[] = { "", "memory", "processes", "disk", "time", "stopped" };

	return (unsigned)limit < sizeof names / sizeof names[0] ? names[limit] : "";
}

/* The bubblewrap command line of `s` into argv (ARGS_MAX entries); `tmp_size` is a buffer of 32 bytes for /tmp's size. */
static int make_args(const struct svc_sandbox_spec *s, char *tmp_size, const char *uid, const char **argv)
{
	static const char *const base[] = {
		"--unshare-user", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
		"--new-session", "--die-with-parent",
		"--ro-bind", "/usr", "/usr", "--symlink", "usr/lib", "/lib", "--symlink", "usr/lib64", "/lib64",
		"--symlink", "usr/bin", "/bin", "--symlink", "usr/sbin", "/sbin",
		"--proc", "/proc", "--dev", "/dev",
		"--clearenv", "--setenv", "PATH", "/usr/local/bin:/usr/bin:/bin", "--setenv", "LANG", "C.UTF-8",
	};
	/* TLS to the registry (the proxy resolves names: no resolv.conf) */
	static const char *const tls[] = {
		"--ro-bind-try", "/etc/ssl", "/etc/ssl", "--ro-bind-try", "/etc/ca-certificates", "/etc/ca-certificates",
	};
	size_t n = 0, i;

	if (!s->argv || !s->argv[0] || s->nmounts > SVC_SANDBOX_MOUNTS_MAX || (s->nmounts && !s->mounts))
		return SVC_E_VALIDATION;
	argv[n++] = s->bwrap;
	for (i = 0; i < sizeof base / sizeof base[0]; i++)
		argv[n++] = base[i];
	argv[n++] = "--uid";
	argv[n++] = uid;
	argv[n++] = "--gid";
	argv[n++] = uid;
	for (i = 0; s->env && s->env[i]; i++) {
		const char *eq = strchr(s->env[i], '=');
		if (i >= SVC_SANDBOX_ENV_MAX || !eq || eq == s->env[i])
			return SVC_E_VALIDATION;
		/* "NAME=value" given as --setenv NAME value: NAME is cut at '=' by a copy kept in the value's place */
		argv[n++] = "--setenv";
		argv[n++] = s->env[i]; /* fixed below: bubblewrap takes NAME and VALUE apart */
		argv[n++] = eq + 1;
	}
	snprintf(tmp_size, 32, "%llu", (unsigned long long)(s->tmp_mb ? s->tmp_mb : 64) << 20);
	argv[n++] = "--size";
	argv[n++] = tmp_size;
	argv[n++] = "--tmpfs";
	argv[n++] = "/tmp";
	for (i = 0; i < s->nmounts; i++) {
		const struct svc_sandbox_mount *m = &s->mounts[i];
		if (!m->src || m->src[0] != '/' || !m->dest || m->dest[0] != '/')
			return SVC_E_VALIDATION;
		argv[n++] = m->writable ? (m->optional ? "--bind-try" : "--bind")
					: (m->optional ? "--ro-bind-try" : "--ro-bind");
		argv[n++] = m->src;
		argv[n++] = m->dest;
	}
	if (s->network == SVC_SANDBOX_NET_REGISTRY)
		for (i = 0; i < sizeof tls / sizeof tls[0]; i++)
			argv[n++] = tls[i];
	if (s->network == SVC_SANDBOX_NET_NONE)
		argv[n++] = "--unshare-net"; /* the others have a namespace of their own already (netns.h) */
	if (s->chdir) {
		argv[n++] = "--chdir";
		argv[n++] = s->chdir;
	}
	argv[n++] = "--remount-ro"; /* bubblewrap's own root (a tmpfs): the mounts and /tmp are mounts of their own */
	argv[n++] = "/";
	argv[n++] = "--";
	for (i = 0; s->argv[i]; i++) {
		if (i >= SVC_SANDBOX_ARGV_MAX)
			return SVC_E_VALIDATION;
		argv[n++] = s->argv[i];
	}
	argv[n] = NULL;
	assert(n < ARGS_MAX);
	return 0;
}

/*
 * The child: its cgroup (while still root), a new session, the sandbox's
 * user, a network namespace of its own when asked, RLIMIT_CPU/FSIZE/CORE,
 * stdin /dev/null, stdout and stderr to out_fd, no other descriptor, then
 * bubblewrap. Only async-signal-safe calls. Writes errno to err_fd and
 * exits 127 when it cannot.
 */
static void child(const struct svc_sandbox_spec *s, const struct svc_cgroup *cg, int out_fd, int err_fd,
		  int net_sock, const char **argv) __attribute__((noreturn));
static void child(const struct svc_sandbox_spec *s, const struct svc_cgroup *cg, int out_fd, int err_fd,
		  int net_sock, const char **argv)
{
	static char *const envp[] = { "PATH=/usr/bin:/bin", "LANG=C.UTF-8", NULL };
	struct rlimit cpu = { s->cpu_secs, s->cpu_secs + 5 };
	struct rlimit fsize = { (rlim_t)s->disk_mb << 20, (rlim_t)s->disk_mb << 20 }, core = { 0, 0 };
	int devnull, e, keep = 4;

	if ((e = svc_cgroup_join(cg)) < 0) {
		errno = -e;
		goto fail;
	}
	setsid();
	if (geteuid() == 0 && (setgroups(0, NULL) < 0 || setgid(s->uid) < 0 || setuid(s->uid) < 0))
		goto fail;
	if (s->network != SVC_SANDBOX_NET_NONE && (e = svc_netns_isolate(SVC_SANDBOX_PROXY_PORT, net_sock)) < 0) {
		errno = -e;
		goto fail;
	}
	if ((s->cpu_secs && setrlimit(RLIMIT_CPU, &cpu) < 0) || (s->disk_mb && setrlimit(RLIMIT_FSIZE, &fsize) < 0) ||
	    setrlimit(RLIMIT_CORE, &core) < 0)
		goto fail;
	devnull = open("/dev/null", O_RDWR);
	if (out_fd < 0)
		out_fd = devnull;
	if (devnull < 0 || dup2(devnull, 0) < 0 || dup2(out_fd, 1) < 0 || dup2(out_fd, 2) < 0)
		goto fail;
	/* nothing of the caller (a FastCGI socket, MariaDB) reaches the sandbox but spec->pass_fds as 3 and 4 */
	if (s->npass_fds == 2) {
		int a = fcntl(s->pass_fds[0], F_DUPFD, 10), b = fcntl(s->pass_fds[1], F_DUPFD, 10);
		int c = fcntl(err_fd, F_DUPFD_CLOEXEC, 10);
		if (a < 0 || b < 0 || c < 0 || dup2(a, 3) < 0 || dup2(b, 4) < 0 || dup2(c, 5) < 0 ||
		    fcntl(5, F_SETFD, FD_CLOEXEC) < 0)
			goto fail;
		keep = 6;
	} else if (err_fd < 3 || dup2(err_fd, 3) < 0 || fcntl(3, F_SETFD, FD_CLOEXEC) < 0) {
		goto fail;
	}
	if (close_range(keep, ~0U, 0) < 0) {
		long fd, max = sysconf(_SC_OPEN_MAX);
		for (fd = keep; fd < (max > 0 ? max : 65536); fd++)
			close((int)fd);
	}
	err_fd = keep - 1;
	execve(s->bwrap, (char *const *)argv, envp);
fail:
	e = errno;
	if (write(err_fd, &e, sizeof e) < 0)
		_exit(127);
	_exit(127);
}

/* bubblewrap's --setenv takes NAME and VALUE apart: copies of the names of spec->env, cut at '='. */
struct env_names {
	char buf[SVC_SANDBOX_ENV_MAX][128];
};

static int split_env(const char **argv, struct env_names *names)
{
	size_t i, k = 0;

	for (i = 0; argv[i] && strcmp(argv[i], "--"); i++) {
		const char *eq;
		if (strcmp(argv[i], "--setenv") || !argv[i + 1] || !(eq = strchr(argv[i + 1], '=')))
			continue;
		if (k >= SVC_SANDBOX_ENV_MAX || (size_t)(eq - argv[i + 1]) >= sizeof names->buf[0])
			return SVC_E_VALIDATION;
		memcpy(names->buf[k], argv[i + 1], (size_t)(eq - argv[i + 1]));
		names->buf[k][eq - argv[i + 1]] = '\0';
		argv[i + 1] = names->buf[k++];
		i += 2;
	}
	return 0;
}

/*
 * Whether svc runs as a systemd unit of its own in the unified hierarchy (its v2 cgroup ends in ".service",
 * or ".service/main" once vacated): with Delegate=yes on the unit (docs/operations.md "The build sandbox")
 * svc may move its processes into <unit>/main so that the unit's cgroup hands controllers down.
 */
static int own_unit_cgroup(void)
{
	char line[4096];
	int yes = 0;
	FILE *f = fopen("/proc/self/cgroup", "re");

	if (!f)
		return 0;
	while (!yes && fgets(line, sizeof line, f)) {
		size_t n;
		line[strcspn(line, "\n")] = '\0';
		n = strlen(line);
		if (strncmp(line, "0::", 3) == 0)
			yes = (n > 8 && strcmp(line + n - 8, ".service") == 0) ||
			      (n > 13 && strcmp(line + n - 13, ".service/main") == 0);
	}
	fclose(f);
	return yes;
}

/* Makes the run's cgroup: memory is the spec's plus its tmpfs disk's (whose pages are charged to it). */
static int make_cgroup(const struct svc_sandbox_spec *s, struct svc_sandbox *sb, char *why, size_t why_max)
{
	struct svc_cgroup_opts co = { s->cgroup_parent, s->memory_mb, s->procs, s->cpu_percent, 0 };
	int err;

	co.vacate = !s->cgroup_parent && own_unit_cgroup();
	if (s->disk_dir && s->memory_mb)
		co.memory_mb = s->memory_mb + s->disk_mb;
	if ((err = svc_cgroup_new(&co, s->name ? s->name : "", &sb->cg, why, why_max)) < 0)
		return err;
	return 0;
}

/* After the exec: the listener of the run's network namespace, served by the proxy or handed to the caller. */
static int take_listener(const struct svc_sandbox_spec *s, struct svc_sandbox *sb, int recv_fd, char *why,
			 size_t why_max)
{
	struct svc_egress_opts eo = { 0 };
	int lfd = -1;

	if (svc_netns_recv_listener(recv_fd, 5000, &lfd) < 0) {
		snprintf(why, why_max, "the sandbox got no network namespace of its own");
		return SVC_E_INTERNAL;
	}
	if (s->network == SVC_SANDBOX_NET_LISTENER) {
		sb->listener = lfd;
		return 0;
	}
	eo.allow = sb->allow;
	eo.policy = s->egress_policy;
	eo.resolve = s->egress_resolve;
	eo.resolve_arg = s->egress_resolve_arg;
	if (svc_egress_start(&eo, lfd, &sb->eg) < 0) {
		snprintf(why, why_max, "the registry proxy could not be started");
		return SVC_E_INTERNAL;
	}
	return 0;
}

/* Forks the child and waits for its exec; *sb gets the pid. */
static int spawn(const struct svc_sandbox_spec *s, struct svc_sandbox *sb, int out_fd, const char **argv, char *why,
		 size_t why_max)
{
	int efds[2], sp[2] = { -1, -1 }, child_errno = 0, err = 0;
	pid_t pid;

	if (pipe2(efds, O_CLOEXEC) < 0)
		return SVC_E_INTERNAL;
	if (s->network != SVC_SANDBOX_NET_NONE && socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) < 0) {
		close(efds[0]);
		close(efds[1]);
		return SVC_E_INTERNAL;
	}
	pid = fork();
	if (pid == 0)
		child(s, sb->cg, out_fd, efds[1], sp[1], argv);
	close(efds[1]);
	if (sp[1] >= 0)
		close(sp[1]);
	if (pid < 0) {
		err = SVC_E_INTERNAL;
	} else if (read(efds[0], &child_errno, sizeof child_errno) > 0) {
		svc_log_error("sandbox: cannot run %s: %s", s->bwrap, strerror(child_errno));
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
		err = SVC_E_INTERNAL;
	} else {
		sb->pid = pid;
		if (s->network != SVC_SANDBOX_NET_NONE)
			err = take_listener(s, sb, sp[0], why, why_max);
	}
	close(efds[0]);
	if (sp[0] >= 0)
		close(sp[0]);
	if (err < 0 && !why[0])
		snprintf(why, why_max, "the sandbox could not be started");
	return err;
}

int svc_sandbox_start(const struct svc_sandbox_spec *s, int out_fd, struct svc_sandbox **out, char *why,
		      size_t why_max)
{
	const char *argv[ARGS_MAX];
	struct env_names *names = NULL;
	struct svc_sandbox *sb;
	char tmp_size[32], uid[16];
	int err;

	snprintf(why, why_max, "%s", "");
	*out = NULL;
	snprintf(uid, sizeof uid, "%u", s->uid);
	if (!s->bwrap || (err = make_args(s, tmp_size, uid, argv)) < 0) {
		snprintf(why, why_max, "a bad sandbox spec");
		return SVC_E_VALIDATION;
	}
	if (!(sb = calloc(1, sizeof *sb)) || !(names = malloc(sizeof *names))) {
		free(sb);
		return SVC_E_INTERNAL;
	}
	sb->listener = -1;
	sb->pid = -1;
	sb->memory_mb = s->memory_mb;
	sb->procs = s->procs;
	sb->disk_mb = s->disk_mb;
	sb->disk_dir = s->disk_dir;
	sb->cpu_secs = s->cpu_secs;
	if ((err = split_env(argv, names)) < 0) {
		snprintf(why, why_max, "a bad sandbox environment");
		goto fail;
	}
	if (s->network == SVC_SANDBOX_NET_REGISTRY &&
	    (!s->registry || svc_egress_allow_registry(s->registry, sb->allow, sizeof sb->allow) < 0)) {
		snprintf(why, why_max, "the registry %s cannot be reached through the proxy (https only)",
			 s->registry ? s->registry : "(unset)");
		err = SVC_E_VALIDATION;
		goto fail;
	}
	if ((err = make_cgroup(s, sb, why, why_max)) < 0)
		goto fail;
	if ((err = spawn(s, sb, out_fd, argv, why, why_max)) < 0)
		goto fail;
	free(names);
	*out = sb;
	return 0;
fail:
	free(names);
	if (sb->pid > 0) {
		svc_sandbox_stop(sb, 0);
		svc_sandbox_wait(sb, NULL);
	} else {
		svc_cgroup_free(sb->cg);
		free(sb);
	}
	return err;
}

pid_t svc_sandbox_pid(const struct svc_sandbox *sb)
{
	return sb->pid;
}

const struct svc_cgroup *svc_sandbox_cgroup(const struct svc_sandbox *sb)
{
	return sb->cg;
}

int svc_sandbox_listener(const struct svc_sandbox *sb)
{
	return sb->listener;
}

int svc_sandbox_poll(struct svc_sandbox *sb)
{
	pid_t r;

	if (sb->reaped)
		return 1;
	while ((r = waitpid(sb->pid, &sb->status, WNOHANG)) < 0 && errno == EINTR)
		;
	if (r == sb->pid || r < 0)
		sb->reaped = 1;
	return sb->reaped;
}

/* Sends `sig` to every process of the run's cgroup (its cgroup.procs) and to its session. */
static void signal_all(struct svc_sandbox *sb, int sig)
{
	char path[4200], line[32];
	FILE *f;

	if (!sb->reaped)
		kill(-sb->pid, sig);
	if (!sb->cg || snprintf(path, sizeof path, "%s/cgroup.procs", svc_cgroup_dir(sb->cg)) >= (int)sizeof path)
		return;
	if (!(f = fopen(path, "re")))
		return;
	while (fgets(line, sizeof line, f)) {
		uint64_t pid = 0;
		line[strcspn(line, "\n")] = '\0';
		if (svc_parse_u64(line, INT32_MAX, &pid) == 0 && pid > 1)
			kill((pid_t)pid, sig);
	}
	fclose(f);
}

int svc_sandbox_stop(struct svc_sandbox *sb, long grace_ms)
{
	int64_t until = svc_mono_ms() + grace_ms;

	if (!sb)
		return 0;
	sb->stopped = 1;
	if (grace_ms > 0) {
		signal_all(sb, SIGTERM);
		while (!svc_sandbox_poll(sb) && svc_mono_ms() < until) {
			struct timespec ts = { 0, 20 * 1000000L };
			nanosleep(&ts, NULL);
		}
	}
	signal_all(sb, SIGKILL);
	return 0;
}

/* Opens the network namespace of the first process of the run's cgroup that is not in svc's own; -1 when none. */
static int run_netns(const struct svc_sandbox *sb)
{
	char path[4200], line[32];
	struct stat own, st;
	int fd = -1;
	FILE *f;

	if (!sb->cg || stat("/proc/thread-self/ns/net", &own) < 0 ||
	    snprintf(path, sizeof path, "%s/cgroup.procs", svc_cgroup_dir(sb->cg)) >= (int)sizeof path ||
	    !(f = fopen(path, "re")))
		return -1;
	while (fd < 0 && fgets(line, sizeof line, f)) {
		char ns[64];
		line[strcspn(line, "\n")] = '\0';
		snprintf(ns, sizeof ns, "/proc/%s/ns/net", line);
		if (stat(ns, &st) == 0 && st.st_ino != own.st_ino)
			fd = open(ns, O_RDONLY | O_CLOEXEC);
	}
	fclose(f);
	return fd;
}

int svc_sandbox_socket(const struct svc_sandbox *sb, int *out_fd)
{
	int target, own, fd, err = 0;

	*out_fd = -1;
	if ((target = run_netns(sb)) < 0)
		return SVC_E_NOT_FOUND;
	if ((own = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC)) < 0) {
		close(target);
		return SVC_E_INTERNAL;
	}
	if (setns(target, CLONE_NEWNET) < 0) {
		err = SVC_E_INTERNAL;
	} else {
		fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (setns(own, CLONE_NEWNET) < 0) {
			/* this thread cannot go back: never leave it in the sandbox's namespace */
			svc_log_error("sandbox: cannot leave a run's network namespace: %s", strerror(errno));
			abort();
		}
		if (fd < 0)
			err = SVC_E_INTERNAL;
		else
			*out_fd = fd;
	}
	close(own);
	close(target);
	return err;
}

/* The peak of the run's memory, bytes: v2 memory.peak, v1 memory.max_usage_in_bytes. */
static unsigned long long memory_peak(const struct svc_cgroup *cg)
{
	char path[4200], buf[32];
	uint64_t v = 0;
	FILE *f;

	snprintf(path, sizeof path, "%s/%s", svc_cgroup_dir(cg),
		 svc_cgroup_version(cg) == SVC_CGROUP_V2 ? "memory.peak" : "memory.max_usage_in_bytes");
	if ((f = fopen(path, "re"))) {
		if (fgets(buf, sizeof buf, f)) {
			buf[strcspn(buf, "\n")] = '\0';
			if (svc_parse_u64(buf, UINT64_MAX, &v) < 0)
				v = 0;
		}
		fclose(f);
	}
	return (unsigned long long)v;
}

/* Which limit ended the run whose (failed) exit status is `status` (128 + signal when killed). */
static enum svc_sandbox_limit limit_of(struct svc_sandbox *sb, int status)
{
	enum svc_cgroup_limit hit;

	if (sb->stopped)
		return SVC_SANDBOX_LIMIT_STOPPED;
	if (status == 0)
		return SVC_SANDBOX_LIMIT_NONE;
	if (status == 128 + SIGXCPU) {
		snprintf(sb->limit_text, sizeof sb->limit_text, "more than %u s of CPU", sb->cpu_secs);
		return SVC_SANDBOX_LIMIT_TIME;
	}
	hit = svc_cgroup_limit_hit(sb->cg);
	if (hit == SVC_CGROUP_LIMIT_MEMORY) {
		snprintf(sb->limit_text, sizeof sb->limit_text, "more than %u MB of memory", sb->memory_mb);
		return SVC_SANDBOX_LIMIT_MEMORY;
	}
	if (status == 128 + SIGXFSZ || (sb->disk_dir && svc_sandbox_disk_full(sb->disk_dir))) {
		snprintf(sb->limit_text, sizeof sb->limit_text, "more than %u MB of disk", sb->disk_mb);
		return SVC_SANDBOX_LIMIT_DISK;
	}
	if (hit == SVC_CGROUP_LIMIT_PROCS) {
		snprintf(sb->limit_text, sizeof sb->limit_text, "more than %u processes", sb->procs);
		return SVC_SANDBOX_LIMIT_PROCS;
	}
	return SVC_SANDBOX_LIMIT_NONE;
}

int svc_sandbox_wait(struct svc_sandbox *sb, struct svc_sandbox_result *res)
{
	int status;

	if (!sb)
		return 0;
	if (!sb->reaped) {
		while (waitpid(sb->pid, &sb->status, 0) < 0 && errno == EINTR)
			;
		sb->reaped = 1;
	}
	if (WIFEXITED(sb->status))
		status = WEXITSTATUS(sb->status);
	else
		status = 128 + (WIFSIGNALED(sb->status) ? WTERMSIG(sb->status) : 0);
	if (res) {
		memset(res, 0, sizeof *res);
		res->status = status;
		res->limit = limit_of(sb, status);
		if (res->limit == SVC_SANDBOX_LIMIT_STOPPED)
			snprintf(sb->limit_text, sizeof sb->limit_text, "stopped");
		snprintf(res->limit_text, sizeof res->limit_text, "%s", sb->limit_text);
		res->memory_peak = sb->cg ? memory_peak(sb->cg) : 0;
	}
	svc_egress_stop(sb->eg);
	if (sb->listener >= 0)
		close(sb->listener);
	svc_cgroup_free(sb->cg); /* kills what is left (a daemon the run left behind) */
	free(sb);
	return 0;
}

/*
 * Passes the output on `fd` to s->log until it closes or the deadline passes; returns 1 when the
 * deadline passed, 2 when s->cancel asked to stop.
 */
static int pump(const struct svc_sandbox_spec *s, int fd)
{
	int64_t quiet_since = svc_mono_ms();
	char buf[4096];

	for (;;) {
		struct pollfd p = { fd, POLLIN, 0 };
		int64_t now = svc_mono_ms(), left = s->deadline_ms ? s->deadline_ms - now : 1000;
		long wait_ms = s->cancel ? 200 : 1000;
		ssize_t n;
		int r;

		if (left <= 0)
			return 1;
		if (s->cancel && s->cancel(s->cancel_arg) != 0)
			return 2;
		r = poll(&p, 1, left < wait_ms ? (int)left : (int)wait_ms);
		if (r < 0 && errno != EINTR)
			return 0;
		if (r <= 0) {
			/* the keep-alive about once a second of silence, however often cancel is asked */
			if (s->log && svc_mono_ms() - quiet_since >= 1000) {
				quiet_since = svc_mono_ms();
				s->log(s->log_arg, NULL, 0);
			}
			continue;
		}
		quiet_since = svc_mono_ms();
		n = read(fd, buf, sizeof buf);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n <= 0)
			return 0;
		if (s->log)
			s->log(s->log_arg, buf, (size_t)n);
	}
}

int svc_sandbox_run(const struct svc_sandbox_spec *s, struct svc_sandbox_result *res, char *why, size_t why_max)
{
	struct svc_sandbox *sb;
	int64_t t0 = svc_mono_ms();
	int fds[2], err, ended;

	memset(res, 0, sizeof *res);
	if (pipe2(fds, O_CLOEXEC) < 0)
		return SVC_E_INTERNAL;
	err = svc_sandbox_start(s, fds[1], &sb, why, why_max);
	close(fds[1]);
	if (err < 0) {
		close(fds[0]);
		return err;
	}
	ended = pump(s, fds[0]);
	close(fds[0]);
	if (ended)
		svc_sandbox_stop(sb, 0);
	svc_sandbox_wait(sb, res);
	if (ended == 1) {
		res->status = -1;
		res->limit = SVC_SANDBOX_LIMIT_TIME;
		snprintf(res->limit_text, sizeof res->limit_text, "more than %lld s of time",
			 (long long)((s->deadline_ms - t0 + 500) / 1000));
	}
	return 0;
}

/* ---- the disk bound: a size-limited tmpfs ---- */

/*
 * Who mounted a disk: `dir`.owner (beside the mount point, in a directory
 * the sandbox's user cannot write) holds "<pid> <start>", the mounting
 * process's id and its start time (/proc/<pid>/stat field 22), so a sweep
 * tells a live build's tree from one whose process was killed (a reused pid
 * has another start time).
 */
static int owner_path(const char *dir, char *out, size_t max)
{
	return snprintf(out, max, "%s.owner", dir) >= (int)max ? -1 : 0;
}

/* Writes into `out` (of `max` bytes) the start time of process `pid` as /proc/<pid>/stat has it; -1 when gone. */
static int proc_start(pid_t pid, char *out, size_t max)
{
	char path[64], buf[1024], *p;
	ssize_t n;
	int fd, field;

	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -1;
	n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	/* after the command's ")" come fields 3, 4, ...: the 22nd is the start time */
	if (!(p = strrchr(buf, ')')))
		return -1;
	for (field = 2; field < 22 && p; field++)
		p = strchr(p + 1, ' ');
	if (!p || p[1] == '\0')
		return -1;
	n = (ssize_t)strcspn(p + 1, " \n");
	if ((size_t)n >= max)
		return -1;
	memcpy(out, p + 1, (size_t)n);
	out[n] = '\0';
	return 0;
}

static int owner_write(const char *dir)
{
	char path[4200], start[32], text[64];
	int fd, n, ok;

	if (owner_path(dir, path, sizeof path) < 0 || proc_start(getpid(), start, sizeof start) < 0)
		return -1;
	n = snprintf(text, sizeof text, "%d %s\n", (int)getpid(), start);
	if ((fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600)) < 0)
		return -1;
	ok = write(fd, text, (size_t)n) == n;
	return close(fd) == 0 && ok ? 0 : -1;
}

int svc_sandbox_disk_owner_alive(const char *dir)
{
	char path[4200], text[64], start[32], *sp;
	uint64_t pid;
	ssize_t n;
	int fd;

	if (owner_path(dir, path, sizeof path) < 0 || (fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) < 0)
		return -1;
	n = read(fd, text, sizeof text - 1);
	close(fd);
	if (n <= 0)
		return 0; /* written by no one: the owner died between the open and the write */
	text[n] = '\0';
	text[strcspn(text, "\n")] = '\0';
	if (!(sp = strchr(text, ' ')))
		return 0;
	*sp = '\0';
	if (svc_parse_u64(text, INT32_MAX, &pid) < 0 || pid == 0)
		return 0;
	return proc_start((pid_t)pid, start, sizeof start) == 0 && strcmp(start, sp + 1) == 0;
}

int svc_sandbox_claim(const char *dir, int *out_fd)
{
	char path[4200];
	struct stat held, named;
	int fd, tries;

	if (owner_path(dir, path, sizeof path) < 0)
		return SVC_E_INTERNAL;
	/* a claim released (its file removed) between our open and our lock is on a file no one sees: again */
	for (tries = 0; tries < 8; tries++) {
		if ((fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600)) < 0)
			return SVC_E_INTERNAL;
		if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
			int busy = errno == EWOULDBLOCK;
			close(fd);
			return busy ? SVC_E_CONFLICT : SVC_E_INTERNAL;
		}
		if (fstat(fd, &held) == 0 && stat(path, &named) == 0 && held.st_ino == named.st_ino &&
		    held.st_dev == named.st_dev) {
			*out_fd = fd;
			return 0;
		}
		close(fd);
	}
	return SVC_E_CONFLICT;
}

void svc_sandbox_claim_release(const char *dir, int fd)
{
	char path[4200];

	if (fd < 0)
		return;
	if (owner_path(dir, path, sizeof path) == 0 && unlink(path) < 0 && errno != ENOENT)
		svc_log_error("sandbox: cannot remove %s: %s", path, strerror(errno));
	close(fd);
}

int svc_sandbox_disk_mount(const char *dir, unsigned disk_mb, unsigned uid, char *why, size_t why_max)
{
	char data[96];

	snprintf(why, why_max, "%s", "");
	if (geteuid() != 0) {
		snprintf(why, why_max, "svc does not run as root: no tmpfs can bound the build's disk");
		return SVC_E_UNAVAILABLE;
	}
	if (mkdir(dir, 0700) < 0) {
		snprintf(why, why_max, "cannot make %s: %s", dir, strerror(errno));
		return SVC_E_INTERNAL;
	}
	/* nr_inodes: one per 4 KiB of the bound, so a build cannot fill the host's memory with empty files either */
	snprintf(data, sizeof data, "size=%llum,nr_inodes=%llu,mode=0700,uid=%u,gid=%u", (unsigned long long)disk_mb,
		 (unsigned long long)disk_mb * 256, uid, uid);
	if (mount("svc-build", dir, "tmpfs", MS_NOSUID | MS_NODEV, data) < 0) {
		snprintf(why, why_max, "cannot mount a tmpfs at %s: %s", dir, strerror(errno));
		rmdir(dir);
		return SVC_E_UNAVAILABLE;
	}
	if (owner_write(dir) < 0) {
		snprintf(why, why_max, "cannot record the owner of %s: %s", dir, strerror(errno));
		svc_sandbox_disk_remove(dir);
		return SVC_E_INTERNAL;
	}
	return 0;
}

int svc_sandbox_disk_full(const char *dir)
{
	struct statvfs v;

	if (statvfs(dir, &v) < 0 || v.f_blocks == 0)
		return 0;
	return (unsigned long long)v.f_bavail * v.f_frsize < (1ULL << 20) || v.f_bavail * 100 < v.f_blocks ||
	       (v.f_files && v.f_favail == 0);
}

int svc_sandbox_disk_remove(const char *dir)
{
	char owner[4200];
	int err;

	if (umount2(dir, MNT_DETACH) < 0 && errno != EINVAL && errno != ENOENT && errno != EPERM)
		svc_log_error("sandbox: cannot unmount %s: %s", dir, strerror(errno));
	err = svc_fsx_remove_tree(dir) < 0 ? SVC_E_INTERNAL : 0;
	if (err == 0 && owner_path(dir, owner, sizeof owner) == 0 && unlink(owner) < 0 && errno != ENOENT)
		err = SVC_E_INTERNAL;
	return err;
}
