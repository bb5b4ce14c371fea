/* devserver.c: a project's dev server in the build sandbox: what runs it, its mirror of the working tree, its install, start and way in (devserver.h). */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <strings.h>
#include <sys/time.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <json-c/json.h>

#include "core/cgroup.h"
#include "core/err.h"
#include "core/fsx.h"
#include "core/json.h"
#include "core/log.h"
#include "core/netns.h"
#include "core/util.h"
#include "project/build.h"
#include "project/devserver.h"

#define PKG_MAX (1u << 20)  /* bytes of a package.json read */
#define ARGS_MAX 96
#define SYNC_DEPTH 64

/* Reads `dir`/package.json into *out (the caller's json_object_put); 0 or an error. */
static int read_package(const char *dir, struct json_object **out)
{
	char *text = NULL;
	size_t len;
	int err;

	if ((err = svc_fsx_read(dir, "package.json", PKG_MAX, &text, &len)) == 0)
		err = svc_json_parse_object(text, len, out);
	free(text);
	return err;
}

/* Writes `dir`'s dev script into out ("" when it has none); 0, or an error when package.json is unreadable. */
static int dev_script(const char *dir, char *out, size_t max)
{
	struct json_object *o = NULL, *scripts;
	const char *dev = NULL;
	int err;

	if ((err = read_package(dir, &o)) < 0)
		return err;
	if (json_object_object_get_ex(o, "scripts", &scripts) && json_object_is_type(scripts, json_type_object))
		dev = svc_json_str(scripts, "dev");
	snprintf(out, max, "%s", dev ? dev : "");
	json_object_put(o);
	return 0;
}

enum svc_devserver_kind svc_devserver_kind(const char *dir)
{
	struct json_object *o = NULL, *deps;
	enum svc_devserver_kind kind = SVC_DEVSERVER_NONE;
	char dev[512];
	int i;

	if (dev_script(dir, dev, sizeof dev) < 0)
		return SVC_DEVSERVER_NONE;
	if (dev[0])
		return strncmp(dev, "vite", 4) == 0 && (dev[4] == '\0' || dev[4] == ' ') ? SVC_DEVSERVER_VITE
										  : SVC_DEVSERVER_SCRIPT;
	if (read_package(dir, &o) < 0)
		return SVC_DEVSERVER_NONE;
	for (i = 0; i < 2; i++)
		if (json_object_object_get_ex(o, i ? "devDependencies" : "dependencies", &deps) &&
		    json_object_is_type(deps, json_type_object) && json_object_object_get_ex(deps, "vite", NULL))
			kind = SVC_DEVSERVER_VITE;
	json_object_put(o);
	return kind;
}

/* ---- the mirror ---- */

/* 1 for the names the mirror keeps apart from the working tree at its top: the install's and the build's. */
static int mirror_own(const char *name, int depth)
{
	return strcmp(name, ".git") == 0 ||
	       (depth == 0 && (strcmp(name, "node_modules") == 0 || strcmp(name, "dist") == 0));
}

/* Copies the regular file `name` of `sfd` to `dfd` (temp + rename, 0644, mtime kept); 0 or SVC_E_INTERNAL. */
static int copy_file(int sfd, int dfd, const char *name, const struct stat *st)
{
	char tmp[300], buf[65536];
	struct timespec times[2];
	int in, out, err = 0;
	ssize_t n;

	if (snprintf(tmp, sizeof tmp, ".svc-sync-%s", name) >= (int)sizeof tmp)
		return SVC_E_INTERNAL;
	in = openat(sfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (in < 0)
		return SVC_E_INTERNAL;
	out = openat(dfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (out < 0) {
		close(in);
		return SVC_E_INTERNAL;
	}
	while (err == 0 && (n = read(in, buf, sizeof buf)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 || write(out, buf, (size_t)n) != n)
			err = SVC_E_INTERNAL;
	}
	times[0] = st->st_atim;
	times[1] = st->st_mtim;
	if (err == 0 && (fchmod(out, 0644) < 0 || futimens(out, times) < 0))
		err = SVC_E_INTERNAL;
	close(in);
	if (close(out) < 0)
		err = SVC_E_INTERNAL;
	if (err == 0 && renameat(dfd, tmp, dfd, name) < 0)
		err = SVC_E_INTERNAL;
	if (err < 0)
		unlinkat(dfd, tmp, 0);
	return err;
}

/* Removes `name` of `dfd`, a tree or a file; 0 or SVC_E_INTERNAL. */
static int remove_entry(int dfd, const char *name, const struct stat *st)
{
	char path[64];

	if (!S_ISDIR(st->st_mode))
		return unlinkat(dfd, name, 0) < 0 ? SVC_E_INTERNAL : 0;
	/* svc_fsx_remove_tree takes a path: the directory through the descriptor's /proc link */
	snprintf(path, sizeof path, "/proc/self/fd/%d", dfd);
	{
		char full[4200], real[4096];
		ssize_t n = readlink(path, real, sizeof real - 1);
		if (n < 0)
			return SVC_E_INTERNAL;
		real[n] = '\0';
		if (snprintf(full, sizeof full, "%s/%s", real, name) >= (int)sizeof full)
			return SVC_E_INTERNAL;
		return svc_fsx_remove_tree(full);
	}
}

static int sync_dir(int sfd, int dfd, int depth);

/* The entries of `sfd` copied or descended into; adds the changes to *changed. */
static int sync_in(int sfd, int dfd, int depth, int *changed)
{
	struct svc_fsx_dir d;
	const char *name;
	struct stat st, dst;
	int r, err;

	if ((err = svc_fsx_dir_open(sfd, &d)) < 0)
		return err;
	while (err >= 0 && (r = svc_fsx_dir_next(&d, &name, &st)) > 0) {
		int have = fstatat(dfd, name, &dst, AT_SYMLINK_NOFOLLOW) == 0;
		if (mirror_own(name, depth) || strncmp(name, ".svc-sync-", 10) == 0)
			continue;
		if (S_ISREG(st.st_mode)) {
			if (have && S_ISREG(dst.st_mode) && dst.st_size == st.st_size &&
			    dst.st_mtim.tv_sec == st.st_mtim.tv_sec && dst.st_mtim.tv_nsec == st.st_mtim.tv_nsec)
				continue;
			if (have && S_ISDIR(dst.st_mode) && (err = remove_entry(dfd, name, &dst)) < 0)
				break;
			if ((err = copy_file(sfd, dfd, name, &st)) == 0)
				(*changed)++;
		} else if (S_ISDIR(st.st_mode)) {
			int s2, d2;
			if (have && !S_ISDIR(dst.st_mode) && (err = remove_entry(dfd, name, &dst)) < 0)
				break;
			if (!have || !S_ISDIR(dst.st_mode)) {
				/* 0755 whatever the umask: the sandbox's user reads the mirror */
				if (mkdirat(dfd, name, 0755) < 0 || fchmodat(dfd, name, 0755, 0) < 0) {
					err = SVC_E_INTERNAL;
					break;
				}
				(*changed)++;
			}
			s2 = openat(sfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			d2 = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (s2 >= 0 && d2 >= 0) {
				err = sync_dir(s2, d2, depth + 1);
				if (err > 0) {
					*changed += err;
					err = 0;
				}
			}
			if (s2 >= 0)
				close(s2);
			if (d2 >= 0)
				close(d2);
		}
	}
	svc_fsx_dir_close(&d);
	return err < 0 ? err : 0;
}

/* The entries of `dfd` that `sfd` no longer has, removed; adds them to *changed. */
static int sync_out(int sfd, int dfd, int depth, int *changed)
{
	struct svc_fsx_dir d;
	const char *name;
	struct stat st, sst;
	int r, err;

	if ((err = svc_fsx_dir_open(dfd, &d)) < 0)
		return err;
	while (err >= 0 && (r = svc_fsx_dir_next(&d, &name, &st)) > 0) {
		if (mirror_own(name, depth))
			continue;
		if (fstatat(sfd, name, &sst, AT_SYMLINK_NOFOLLOW) == 0 &&
		    (S_ISREG(sst.st_mode) || S_ISDIR(sst.st_mode)))
			continue;
		if ((err = remove_entry(dfd, name, &st)) == 0)
			(*changed)++;
	}
	svc_fsx_dir_close(&d);
	return err < 0 ? err : 0;
}

static int sync_dir(int sfd, int dfd, int depth)
{
	int changed = 0, err;

	if (depth > SYNC_DEPTH)
		return 0;
	if ((err = sync_in(sfd, dfd, depth, &changed)) < 0 || (err = sync_out(sfd, dfd, depth, &changed)) < 0)
		return err;
	return changed;
}

int svc_devserver_sync(const char *src, const char *dst)
{
	int sfd, dfd, err;

	sfd = open(src, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (sfd < 0)
		return errno == ENOENT ? SVC_E_NOT_FOUND : SVC_E_INTERNAL;
	dfd = open(dst, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0) {
		close(sfd);
		return SVC_E_INTERNAL;
	}
	err = sync_dir(sfd, dfd, 0);
	close(sfd);
	close(dfd);
	return err;
}

/* Adds the entries of `fd` (depth `depth`) to the stamp: newest mtime and count. */
static void stamp_dir(int fd, int depth, unsigned long long *newest, unsigned long long *count)
{
	struct svc_fsx_dir d;
	const char *name;
	struct stat st;

	if (depth > SYNC_DEPTH || svc_fsx_dir_open(fd, &d) < 0)
		return;
	while (svc_fsx_dir_next(&d, &name, &st) > 0) {
		unsigned long long t = (unsigned long long)st.st_mtim.tv_sec * 1000000000ull + (unsigned long long)st.st_mtim.tv_nsec;
		if (strcmp(name, ".git") == 0 || strcmp(name, "node_modules") == 0)
			continue;
		if (t > *newest)
			*newest = t;
		(*count)++;
		if (S_ISDIR(st.st_mode)) {
			int sub = openat(fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (sub >= 0) {
				stamp_dir(sub, depth + 1, newest, count);
				close(sub);
			}
		}
	}
	svc_fsx_dir_close(&d);
}

unsigned long long svc_devserver_tree_stamp(const char *src)
{
	unsigned long long newest = 0, count = 0;
	int fd = open(src, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0)
		return 0;
	stamp_dir(fd, 0, &newest, &count);
	close(fd);
	return newest ^ (count << 48);
}

int svc_devserver_deps_key(const char *dir, char *out)
{
	static const char *const names[] = { "package.json", "package-lock.json" };
	struct svc_buf b;
	size_t i, len;
	char *text;
	int err = 0;

	svc_buf_init(&b, 2 * PKG_MAX * 8 + 16);
	for (i = 0; err == 0 && i < 2; i++) {
		text = NULL;
		if (svc_fsx_read(dir, names[i], PKG_MAX * 8, &text, &len) == 0)
			err = svc_buf_add(&b, text, len);
		free(text);
		if (err == 0)
			err = svc_buf_add(&b, "\0", 1);
	}
	if (err == 0)
		err = svc_sha256_hex(b.len ? svc_buf_str(&b) : "", b.len, out);
	svc_buf_dispose(&b);
	return err < 0 ? SVC_E_INTERNAL : 0;
}

/* ---- the sandbox ---- */

/* The sandbox's command line around `cmd`: the mirror at /app (writable or not), Vite's caches, /tmp, HOME;
 * `network` 1 the host's (the install step, SVC_BUILD_NETWORK=1), 0 none, -1 the caller's own namespace. */
static size_t devserver_args(const struct svc_config *cfg, const char *app, const char *cache, int app_writable,
			     int network, const char *const *cmd, char bufs[][4200], const char **argv)
{
	size_t n, i;

	snprintf(bufs[0], sizeof bufs[0], "%u", cfg->build_uid);
	snprintf(bufs[1], sizeof bufs[1], "%llu", (unsigned long long)cfg->build_tmp_mb << 20);
	n = svc_build_sandbox_base(cfg->build_bwrap, bufs[0], argv);
	argv[n++] = "--setenv", argv[n++] = "HOME", argv[n++] = "/tmp";
	argv[n++] = "--setenv", argv[n++] = "npm_config_update_notifier", argv[n++] = "false";
	argv[n++] = "--setenv", argv[n++] = "BROWSER", argv[n++] = "none";
	argv[n++] = "--setenv", argv[n++] = "HOST", argv[n++] = "127.0.0.1";
	argv[n++] = "--setenv", argv[n++] = "PORT", argv[n++] = "5173";
	argv[n++] = "--size", argv[n++] = bufs[1], argv[n++] = "--tmpfs", argv[n++] = "/tmp";
	argv[n++] = app_writable ? "--bind" : "--ro-bind", argv[n++] = app, argv[n++] = "/app";
	if (cache) {
		snprintf(bufs[2], sizeof bufs[2], "%s/vite", cache);
		snprintf(bufs[3], sizeof bufs[3], "%s/vite-temp", cache);
		argv[n++] = "--bind", argv[n++] = bufs[2], argv[n++] = "/app/node_modules/.vite";
		argv[n++] = "--bind", argv[n++] = bufs[3], argv[n++] = "/app/node_modules/.vite-temp";
	}
	if (network == 0)
		argv[n++] = "--unshare-net";
	if (network == 1) {
		static const char *const net[] = { "/etc/resolv.conf", "/etc/hosts", "/etc/nsswitch.conf", "/etc/ssl",
						   "/etc/ca-certificates" };
		for (i = 0; i < sizeof net / sizeof net[0]; i++)
			argv[n++] = "--ro-bind-try", argv[n++] = net[i], argv[n++] = net[i];
	}
	argv[n++] = "--chdir", argv[n++] = "/app";
	argv[n++] = "--remount-ro", argv[n++] = "/", argv[n++] = "--";
	for (i = 0; cmd[i] && n < ARGS_MAX - 1; i++)
		argv[n++] = cmd[i];
	argv[n] = NULL;
	return n;
}

/* Hands `path` to the build's user when svc runs as root; 0 or SVC_E_INTERNAL. */
static int hand_over(const struct svc_config *cfg, const char *path)
{
	if (geteuid() != 0)
		return 0;
	return chown(path, cfg->build_uid, cfg->build_uid) < 0 ? SVC_E_INTERNAL : 0;
}

int svc_devserver_install(const struct svc_config *cfg, const char *app, int log_fd, char *why, size_t why_max)
{
	char bufs[4][4200], lock[4200];
	const char *argv[ARGS_MAX], *cmd[8];
	struct stat st;
	int efd[2], status = 0, k = 0, ci;
	int64_t deadline = svc_mono_ms() + (int64_t)cfg->devserver_start_secs * 1000;
	pid_t pid;

	snprintf(lock, sizeof lock, "%s/package-lock.json", app);
	ci = lstat(lock, &st) == 0;
	cmd[k++] = cfg->build_npm;
	cmd[k++] = ci ? "ci" : "install";
	cmd[k++] = "--ignore-scripts";
	cmd[k++] = "--no-audit";
	cmd[k++] = "--no-fund";
	if (!cfg->build_network)
		cmd[k++] = "--offline";
	cmd[k] = NULL;
	if (hand_over(cfg, app) < 0 || pipe2(efd, O_CLOEXEC) < 0) {
		snprintf(why, why_max, "the dev server's directory could not be prepared");
		return SVC_E_INTERNAL;
	}
	devserver_args(cfg, app, NULL, 1, cfg->build_network ? 1 : 0, cmd, bufs, argv);
	pid = fork();
	if (pid == 0) {
		struct svc_sandbox_limits lim = { cfg->build_uid, 0, 0, 0, 0, -1 };
		svc_build_sandbox_exec(cfg->build_bwrap, &lim, log_fd, efd[1], argv);
	}
	close(efd[1]);
	close(efd[0]);
	if (pid < 0) {
		snprintf(why, why_max, "the sandbox could not be started");
		return SVC_E_INTERNAL;
	}
	for (;;) {
		pid_t r = waitpid(pid, &status, WNOHANG);
		if (r == pid)
			break;
		if (r < 0 && errno != EINTR) {
			status = -1;
			break;
		}
		if (svc_mono_ms() > deadline) {
			kill(-pid, SIGKILL);
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			snprintf(why, why_max, "%s ran out of time (%u s)", ci ? "npm ci" : "npm install",
				 cfg->devserver_start_secs);
			return SVC_E_VALIDATION;
		}
		usleep(50 * 1000);
	}
	if (status == -1 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		snprintf(why, why_max, "%s exited with status %d", ci ? "npm ci" : "npm install",
			 WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0));
		return SVC_E_VALIDATION;
	}
	return 0;
}

/* The factory's stop test: the dev server (bubblewrap, pid *arg) ended; its status goes to arg[1]. */
static int child_ended(void *arg)
{
	int *a = arg, status;

	if (waitpid(a[0], &status, WNOHANG) != a[0])
		return 0;
	a[1] = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
	return 1;
}

/* The child svc_devserver_start() forks: into the cgroup, the build's user, a network of its own; then the
 * dev server (a grandchild) and the socket factory (itself) until the dev server ends. Never returns. */
static void __attribute__((noreturn)) devserver_child(const struct svc_config *cfg, const struct svc_cgroup *cg,
						       int sock, int log_fd, const char **argv)
{
	struct svc_sandbox_limits lim = { cfg->build_uid, 0, 0, 0, 0, -1 };
	int efd[2], a[2] = { 0, 127 };

	if (svc_cgroup_join(cg) < 0 || prctl(PR_SET_PDEATHSIG, SIGKILL) < 0)
		_exit(127);
	setsid();
	if (geteuid() == 0 && (setgroups(0, NULL) < 0 || setgid(cfg->build_uid) < 0 || setuid(cfg->build_uid) < 0))
		_exit(127);
	if (svc_netns_alone() < 0 || pipe2(efd, O_CLOEXEC) < 0)
		_exit(127);
	a[0] = fork();
	if (a[0] == 0)
		svc_build_sandbox_exec(cfg->build_bwrap, &lim, log_fd, efd[1], argv);
	if (a[0] < 0)
		_exit(127);
	/* the factory keeps nothing of svc-devd's but its socket */
	if (sock != 3 && (dup2(sock, 3) < 0 || fcntl(3, F_SETFD, FD_CLOEXEC) < 0))
		_exit(127);
	close_range(4, ~0U, 0);
	svc_netns_factory_serve(3, child_ended, a);
	if (a[1] == 127 && !child_ended(a)) {
		kill(a[0], SIGKILL);
		waitpid(a[0], NULL, 0);
	}
	_exit(a[1]);
}

int svc_devserver_start(const struct svc_config *cfg, enum svc_devserver_kind kind, const char *name,
			const char *app, const char *cache, int log_fd, struct svc_devserver_proc *out, char *why,
			size_t why_max)
{
	static const char *const vite[] = { "/usr/bin/node", "/app/node_modules/vite/bin/vite.js", "--host",
					    "127.0.0.1", "--port", "5173", "--strictPort", "--clearScreen", "false",
					    NULL };
	const char *script[] = { cfg->build_npm, "run", "dev", NULL, NULL, NULL, NULL, NULL, NULL, NULL };
	struct svc_cgroup_opts o = { NULL, cfg->build_memory_mb, cfg->build_procs, 100, 0 };
	char bufs[4][4200], dev[512];
	const char *argv[ARGS_MAX];
	struct svc_cgroup *cg = NULL;
	int sp[2], err;
	pid_t pid;

	/* `vite` itself when that is all its dev script says (or it has none); else npm runs the script, with
	 * Vite's options after -- when the script is Vite's */
	if (kind == SVC_DEVSERVER_VITE && dev_script(app, dev, sizeof dev) == 0 && dev[0] && strcmp(dev, "vite") != 0) {
		script[3] = "--", script[4] = "--host", script[5] = "127.0.0.1", script[6] = "--port";
		script[7] = "5173", script[8] = "--strictPort";
		kind = SVC_DEVSERVER_SCRIPT;
	}
	if ((err = svc_cgroup_new(&o, name, &cg, why, why_max)) < 0)
		return err;
	devserver_args(cfg, app, cache, 0, -1, kind == SVC_DEVSERVER_VITE ? vite : script, bufs, argv);
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) < 0) {
		svc_cgroup_free(cg);
		snprintf(why, why_max, "the sandbox could not be started");
		return SVC_E_INTERNAL;
	}
	pid = fork();
	if (pid == 0)
		devserver_child(cfg, cg, sp[1], log_fd, argv);
	close(sp[1]);
	if (pid < 0) {
		close(sp[0]);
		svc_cgroup_free(cg);
		snprintf(why, why_max, "the sandbox could not be started");
		return SVC_E_INTERNAL;
	}
	out->pid = pid;
	out->factory = sp[0];
	out->cg = cg;
	return 0;
}

int svc_devserver_connect(const struct svc_devserver_proc *p, int *out_fd)
{
	struct sockaddr_in a;
	int fd;

	if (p->factory < 0 || svc_netns_factory_socket(p->factory, 1000, &fd) < 0)
		return SVC_E_UNAVAILABLE;
	memset(&a, 0, sizeof a);
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	a.sin_port = htons(SVC_DEVSERVER_PORT);
	if (fcntl(fd, F_SETFL, O_NONBLOCK) < 0 ||
	    (connect(fd, (struct sockaddr *)&a, sizeof a) < 0 && errno != EINPROGRESS)) {
		close(fd);
		return SVC_E_UNAVAILABLE;
	}
	*out_fd = fd;
	return 0;
}

void svc_devserver_stop(struct svc_devserver_proc *p, int reaped)
{
	if (p->cg)
		svc_cgroup_free(p->cg); /* kills the dev server and the factory with it */
	if (p->factory >= 0)
		close(p->factory);
	if (!reaped && p->pid > 0)
		while (waitpid(p->pid, NULL, 0) < 0 && errno == EINTR)
			;
	p->cg = NULL;
	p->factory = -1;
	p->pid = 0;
}

/* ---- svc-preview's side ---- */

/* Writes all of `data` to the blocking socket `fd`; 0 or SVC_E_UNAVAILABLE. */
static int write_all(int fd, const char *data, size_t len)
{
	while (len) {
		ssize_t n = write(fd, data, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return SVC_E_UNAVAILABLE;
		data += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Copies the value of header `name` of the answer's head (`head`, NUL-terminated) into out ("" when absent). */
static void answer_header(const char *head, const char *name, char *out, size_t max)
{
	const char *p = head;
	size_t nlen = strlen(name);

	out[0] = '\0';
	while ((p = strstr(p, "\r\n")) != NULL) {
		const char *v, *end;
		p += 2;
		if (strncasecmp(p, name, nlen) != 0 || p[nlen] != ':')
			continue;
		v = p + nlen + 1;
		while (*v == ' ' || *v == '\t')
			v++;
		end = strstr(v, "\r\n");
		if (!end)
			return;
		snprintf(out, max, "%.*s", (int)(end - v), v);
		return;
	}
}

/* Connects to svc-devd within `timeout_ms`; the descriptor, blocking with send and receive timeouts, or -1. */
static int devd_connect(const struct svc_config *cfg, long timeout_ms)
{
	struct sockaddr_in a;
	struct pollfd p;
	struct timeval tv = { timeout_ms / 1000, (timeout_ms % 1000) * 1000 };
	int fd, soerr = 0;
	socklen_t sl = sizeof soerr;

	memset(&a, 0, sizeof a);
	a.sin_family = AF_INET;
	a.sin_port = htons((unsigned short)cfg->devd_port);
	if (inet_pton(AF_INET, cfg->devd_host, &a.sin_addr) != 1)
		return -1;
	fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	if (connect(fd, (struct sockaddr *)&a, sizeof a) < 0) {
		p.fd = fd;
		p.events = POLLOUT;
		p.revents = 0;
		if (errno != EINPROGRESS || poll(&p, 1, 2000) != 1 ||
		    getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) < 0 || soerr) {
			close(fd);
			return -1;
		}
	}
	if (fcntl(fd, F_SETFL, 0) < 0 || setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Parses the answer in `b` (head and body) into *out. */
static int parse_answer(struct svc_buf *b, struct svc_devserver_answer *out)
{
	char *head = (char *)svc_buf_str(b), *sep = strstr(head, "\r\n\r\n"), *end;
	uint64_t status;
	char code[4];

	if (!sep || b->len < 12 || strncmp(head, "HTTP/1.", 7) != 0)
		return SVC_E_UNAVAILABLE;
	memcpy(code, head + 9, 3);
	code[3] = '\0';
	if (svc_parse_u64(code, 999, &status) < 0 || status < 100)
		return SVC_E_UNAVAILABLE;
	sep[2] = '\0'; /* the last header keeps its CRLF */
	memset(out, 0, sizeof *out);
	out->status = (int)status;
	answer_header(head, "Content-Type", out->type, sizeof out->type);
	answer_header(head, "Cache-Control", out->cache, sizeof out->cache);
	answer_header(head, "ETag", out->etag, sizeof out->etag);
	answer_header(head, "Last-Modified", out->last_modified, sizeof out->last_modified);
	answer_header(head, "Location", out->location, sizeof out->location);
	answer_header(head, "X-Svc-Devserver", out->devserver, sizeof out->devserver);
	end = sep + 4;
	out->len = b->len - (size_t)(end - b->data);
	if (!(out->body = malloc(out->len + 1)))
		return SVC_E_INTERNAL;
	memcpy(out->body, end, out->len);
	out->body[out->len] = '\0';
	return 0;
}

int svc_devserver_fetch(const struct svc_config *cfg, const char *host, const char *uri, const char *const *headers,
			size_t max_bytes, long timeout_ms, struct svc_devserver_answer *out)
{
	struct svc_buf req, ans;
	char chunk[65536];
	size_t i;
	int fd, err;

	if ((fd = devd_connect(cfg, timeout_ms)) < 0)
		return SVC_E_UNAVAILABLE;
	svc_buf_init(&req, 32768);
	svc_buf_init(&ans, max_bytes + 65536);
	err = svc_buf_addf(&req, "GET %s HTTP/1.1\r\nHost: %s\r\n", uri, host);
	for (i = 0; err == 0 && headers && headers[i]; i++)
		if (!strpbrk(headers[i], "\r\n"))
			err = svc_buf_addf(&req, "%s\r\n", headers[i]);
	if (err == 0)
		err = svc_buf_adds(&req, "Connection: close\r\n\r\n");
	if (err == 0)
		err = write_all(fd, svc_buf_str(&req), req.len);
	while (err == 0) {
		ssize_t n = read(fd, chunk, sizeof chunk);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			err = SVC_E_UNAVAILABLE; /* the time ran out */
		if (n <= 0)
			break;
		err = svc_buf_add(&ans, chunk, (size_t)n);
	}
	close(fd);
	if (err == 0)
		err = parse_answer(&ans, out);
	svc_buf_dispose(&req);
	svc_buf_dispose(&ans);
	return err;
}

void svc_devserver_answer_dispose(struct svc_devserver_answer *a)
{
	free(a->body);
	a->body = NULL;
	a->len = 0;
}
