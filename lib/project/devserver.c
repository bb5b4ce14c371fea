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
#include <sys/un.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <json-c/json.h>

#include "core/cgroup.h"
#include "core/err.h"
#include "core/fsx.h"
#include "core/json.h"
#include "core/log.h"
#include "core/util.h"
#include "project/build.h"
#include "project/sandbox.h"
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
	       (depth == 0 && (strcmp(name, "node_modules") == 0 || strcmp(name, "dist") == 0 ||
			       strcmp(name, ".svc-home") == 0));
}

/* 1 for what the mirror never gets: the project's own npm configuration (svc sets the registry). */
static int mirror_never(const char *name, int depth)
{
	return depth == 0 && strcmp(name, ".npmrc") == 0;
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
		if (mirror_own(name, depth) || mirror_never(name, depth) || strncmp(name, ".svc-sync-", 10) == 0)
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
		if (!mirror_never(name, depth) && fstatat(sfd, name, &sst, AT_SYMLINK_NOFOLLOW) == 0 &&
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

/* ---- the sandbox ---- */

/*
 * The relay the dev server's Node process loads first (NODE_OPTIONS=--require): it listens on the
 * Unix socket /svc/s, which svc-devd reaches from outside (the directory is bound in), and joins each
 * connection to 127.0.0.1:5173 inside, where the dev server listens. An end passes on after what was
 * read before it: when the dev server is done (or fails), `c` gets the rest of its answer, then its
 * end (pipe()'s end(), and end() again on close and error); only when svc-devd's side goes (closes or
 * fails) is the dev server's connection destroyed, since nothing more can be delivered. (destroy() of
 * `c` on the dev server's close dropped what `c` still had to write: the cut modules of issue 27.)
 * unref(): it never keeps a Node process alive; a second Node process of the sandbox (npm runs the
 * script's) finds the socket taken and leaves it to the first.
 */
static const char relay_js[] =
	"// svc-devd's relay (lib/project/devserver.c): /svc/s -> 127.0.0.1:5173 inside this sandbox\n"
	"'use strict';\n"
	"const net = require('node:net');\n"
	"const srv = net.createServer((c) => {\n"
	"  const u = net.connect(5173, '127.0.0.1');\n"
	"  const gone = () => { c.destroy(); u.destroy(); };\n"
	"  const done = () => c.end();\n"
	"  c.on('error', gone); c.on('close', gone);\n"
	"  u.on('error', done); u.on('close', done);\n"
	"  c.pipe(u); u.pipe(c);\n"
	"});\n"
	"srv.on('error', () => {});\n"
	"srv.listen('/svc/s', () => srv.unref());\n";

/* Hands `path` to the build's user when svc runs as root; 0 or SVC_E_INTERNAL. */
static int hand_over(const struct svc_config *cfg, const char *path)
{
	if (geteuid() != 0)
		return 0;
	return chown(path, cfg->build_uid, cfg->build_uid) < 0 ? SVC_E_INTERNAL : 0;
}

/* The environment of a dev server (besides PATH and LANG). */
static const char *const run_env[] = { "HOME=/tmp", "HOST=127.0.0.1", "PORT=5173", "BROWSER=none",
				       "NODE_OPTIONS=--require /svc/relay.cjs", "npm_config_update_notifier=false",
				       "NODE_ENV=development", NULL };
int svc_devserver_start(const struct svc_config *cfg, enum svc_devserver_kind kind, const char *name,
			const char *app, const char *cache, const char *svcdir, int log_fd,
			struct svc_devserver_proc *out, char *why, size_t why_max)
{
	static const char *const vite[] = { "/usr/bin/node", "/app/node_modules/vite/bin/vite.js", "--host",
					    "127.0.0.1", "--port", "5173", "--strictPort", "--clearScreen", "false",
					    NULL };
	struct svc_sandbox_spec spec;
	struct svc_deps_lease lease = out->lease; /* the caller's, kept */
	char dev[512];
	size_t nm;
	int err, m;

	memset(out, 0, sizeof *out);
	out->lease = lease;
	out->dirfd = -1;
	out->argv[0] = cfg->build_npm, out->argv[1] = "run", out->argv[2] = "dev";
	/* `vite` itself when that is all its dev script says (or it has none); else npm runs the script, with
	 * Vite's options after -- when the script is Vite's */
	if (kind == SVC_DEVSERVER_VITE && !(dev_script(app, dev, sizeof dev) == 0 && dev[0] && strcmp(dev, "vite") != 0)) {
		memcpy(out->argv, vite, sizeof vite);
	} else if (kind == SVC_DEVSERVER_VITE) {
		out->argv[3] = "--", out->argv[4] = "--host", out->argv[5] = "127.0.0.1", out->argv[6] = "--port";
		out->argv[7] = "5173", out->argv[8] = "--strictPort";
	}
	snprintf(out->name, sizeof out->name, "%s", name);
	snprintf(out->paths[0], sizeof out->paths[0], "%s", app);
	snprintf(out->paths[1], sizeof out->paths[1], "%s/vite", cache);
	snprintf(out->paths[2], sizeof out->paths[2], "%s/vite-temp", cache);
	snprintf(out->paths[3], sizeof out->paths[3], "%s", svcdir);
	out->mounts[0] = (struct svc_sandbox_mount){ out->paths[0], "/app", 0, 0 };
	if (out->lease.modules[0]) {
		/* the store's node_modules, read-only, with writable scratch folders of its own over Vite's caches */
		if ((m = svc_deps_mounts(&out->lease, "/app", cache, cfg->build_uid, out->dpaths, out->mounts + 1)) < 0) {
			snprintf(why, why_max, "the dev server's node_modules could not be mounted");
			return SVC_E_INTERNAL;
		}
		nm = 1 + (size_t)m;
	} else {
		out->mounts[1] = (struct svc_sandbox_mount){ out->paths[1], "/app/node_modules/.vite", 1, 0 };
		out->mounts[2] = (struct svc_sandbox_mount){ out->paths[2], "/app/node_modules/.vite-temp", 1, 0 };
		nm = 3;
	}
	out->mounts[nm++] = (struct svc_sandbox_mount){ out->paths[3], "/svc", 1, 0 };
	/* the relay (readable by the sandbox's user), and no socket left by an earlier run */
	{
		char path[2300];
		snprintf(path, sizeof path, "%s/s", svcdir);
		unlink(path);
		snprintf(path, sizeof path, "%s/relay.cjs", svcdir);
		if (svc_fsx_write(svcdir, "relay.cjs", relay_js, sizeof relay_js - 1) < 0 || chmod(path, 0644) < 0 ||
		    chmod(svcdir, 0755) < 0 || hand_over(cfg, svcdir) < 0 ||
		    (out->dirfd = open(svcdir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
			snprintf(why, why_max, "the dev server's directory could not be prepared");
			return SVC_E_INTERNAL;
		}
	}
	memset(&spec, 0, sizeof spec);
	svc_sandbox_spec_defaults(cfg, &spec);
	spec.argv = out->argv;
	spec.env = run_env;
	spec.mounts = out->mounts;
	spec.nmounts = nm;
	spec.chdir = "/app";
	spec.network = SVC_SANDBOX_NET_NONE;
	spec.name = out->name;
	spec.cpu_secs = 0; /* it runs for hours: the cgroup's CPU quota bounds it, not a CPU-time total */
	if ((err = svc_sandbox_start(&spec, log_fd, &out->sb, why, why_max)) < 0) {
		close(out->dirfd);
		out->dirfd = -1;
		return err;
	}
	return 0;
}

int svc_devserver_connect(const struct svc_devserver_proc *p, int *out_fd)
{
	struct sockaddr_un a;
	int fd;

	if (!p->sb || p->dirfd < 0)
		return SVC_E_UNAVAILABLE;
	/* through the directory's descriptor: sun_path is short, SVC_DATA_DIR may not be */
	memset(&a, 0, sizeof a);
	a.sun_family = AF_UNIX;
	snprintf(a.sun_path, sizeof a.sun_path, "/proc/self/fd/%d/s", p->dirfd);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return SVC_E_UNAVAILABLE;
	if (connect(fd, (struct sockaddr *)&a, sizeof a) < 0 && errno != EINPROGRESS && errno != EAGAIN) {
		close(fd);
		return SVC_E_UNAVAILABLE;
	}
	*out_fd = fd;
	return 0;
}

int svc_devserver_ready(const struct svc_devserver_proc *p, long timeout_ms)
{
	static const char probe[] = "HEAD / HTTP/1.0\r\nHost: 127.0.0.1:5173\r\n\r\n";
	struct pollfd pf;
	char byte;
	int fd, ok = 0;

	if (svc_devserver_connect(p, &fd) < 0)
		return 0;
	pf.fd = fd;
	pf.events = POLLOUT;
	pf.revents = 0;
	if (poll(&pf, 1, (int)timeout_ms) == 1 && (pf.revents & POLLOUT) &&
	    write(fd, probe, sizeof probe - 1) == (ssize_t)(sizeof probe - 1)) {
		pf.events = POLLIN;
		pf.revents = 0;
		/* the relay closes at once when nothing listens on 5173 yet: a byte means an answer */
		ok = poll(&pf, 1, (int)timeout_ms) == 1 && read(fd, &byte, 1) == 1;
	}
	close(fd);
	return ok;
}

int svc_devserver_ended(struct svc_devserver_proc *p, int *out_status)
{
	struct svc_sandbox_result res;

	if (!p->sb || !svc_sandbox_poll(p->sb))
		return 0;
	svc_sandbox_wait(p->sb, &res);
	p->sb = NULL;
	if (p->dirfd >= 0)
		close(p->dirfd);
	p->dirfd = -1;
	*out_status = res.status;
	return 1;
}

unsigned long long svc_devserver_memory(const struct svc_devserver_proc *p)
{
	return p->sb ? svc_cgroup_memory_bytes(svc_sandbox_cgroup(p->sb)) : 0;
}

void svc_devserver_stop(struct svc_devserver_proc *p)
{
	struct svc_sandbox_result res;

	if (p->sb) {
		svc_sandbox_stop(p->sb, 2000);
		svc_sandbox_wait(p->sb, &res);
	}
	if (p->dirfd >= 0)
		close(p->dirfd);
	svc_deps_release(&p->lease);
	p->sb = NULL;
	p->dirfd = -1;
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

/*
 * Decodes the chunked body `in` (`len` bytes; RFC 9112 §7.1: chunk-size
 * [chunk-ext] CRLF data CRLF ..., last-chunk, trailer section, CRLF) into
 * `out` (the caller's, `len` bytes at least: the data is never longer than
 * its framing). Returns 1 with *out_len when it ends with its last chunk and
 * trailer section, 0 when the bytes end before that, -1 when malformed.
 */
static int dechunk(const char *in, size_t len, char *out, size_t *out_len)
{
	size_t i = 0, o = 0;
	const char *nl;

	for (;;) {
		uint64_t size = 0;
		size_t digits = 0;
		int d;
		while (i < len && (d = svc_hex_digit((unsigned char)in[i])) >= 0) {
			if (++digits > 15)
				return -1;
			size = size * 16 + (uint64_t)d;
			i++;
		}
		if (i < len && digits == 0)
			return -1;
		/* the chunk extensions, if any, to the end of the line */
		if (!(nl = memchr(in + i, '\n', len - i)))
			return 0;
		if (nl == in || nl[-1] != '\r')
			return -1;
		i = (size_t)(nl - in) + 1;
		if (size == 0)
			break;
		if (len - i < size + 2)
			return 0;
		memcpy(out + o, in + i, (size_t)size);
		o += (size_t)size;
		i += (size_t)size;
		if (in[i] != '\r' || in[i + 1] != '\n')
			return -1;
		i += 2;
	}
	/* the trailer section: field lines, then an empty line */
	for (;;) {
		size_t l;
		if (!(nl = memchr(in + i, '\n', len - i)))
			return 0;
		l = (size_t)(nl - (in + i));
		if (l == 0 || in[i + l - 1] != '\r')
			return -1;
		i += l + 1;
		if (l == 1)
			break;
	}
	*out_len = o;
	return 1;
}

/* 1 when the Transfer-Encoding value `te` ends with chunked (its last coding: RFC 9112 §6.3 item 4). */
static int te_chunked(const char *te)
{
	const char *last = strrchr(te, ',');
	size_t n;

	last = last ? last + 1 : te;
	while (*last == ' ' || *last == '\t')
		last++;
	n = strlen(last);
	while (n && (last[n - 1] == ' ' || last[n - 1] == '\t'))
		n--;
	return n == 7 && strncasecmp(last, "chunked", 7) == 0;
}

/*
 * The body of the answer whose head is `head` (status `status`) from the
 * `len` bytes after it, read until the connection ended (RFC 9112 §6.3): none
 * for 1xx, 204 and 304; a chunked one decoded; else Content-Length's bytes;
 * else all of them. Sets out->body, out->len and out->cut (1 when the bytes
 * end before the framing says the body does, or the framing is malformed:
 * then body holds the bytes as they came). Returns 0 or SVC_E_INTERNAL.
 */
static int answer_body(const char *head, int status, const char *data, size_t len, struct svc_devserver_answer *out)
{
	char te[256], cl[64];
	uint64_t n;
	int r;

	if (!(out->body = malloc(len + 1)))
		return SVC_E_INTERNAL;
	answer_header(head, "Transfer-Encoding", te, sizeof te);
	answer_header(head, "Content-Length", cl, sizeof cl);
	out->len = len;
	if (status < 200 || status == 204 || status == 304) {
		out->len = 0;
	} else if (te[0] && te_chunked(te)) {
		if ((r = dechunk(data, len, out->body, &out->len)) <= 0) {
			out->cut = 1;
			out->len = len;
			memcpy(out->body, data, len);
		}
	} else if (te[0]) {
		memcpy(out->body, data, len); /* another coding last: the body ends with the connection */
	} else if (cl[0]) {
		if (svc_parse_u64(cl, SIZE_MAX, &n) < 0 || n > len)
			out->cut = 1;
		else
			out->len = (size_t)n;
		memcpy(out->body, data, out->len);
	} else {
		memcpy(out->body, data, len);
	}
	out->body[out->len] = '\0';
	return 0;
}

/* Parses the answer in `b` (head and body, read until the connection ended) into *out. */
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
	return answer_body(head, out->status, end, b->len - (size_t)(end - b->data), out);
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
	svc_buf_init(&ans, max_bytes + max_bytes / 16 + 65536); /* room for a chunked body's framing */
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
