/* deps.c: node_modules installed only when package.json or the lockfile change: keys, the read-only store, the shared npm cache, the first install's lockfile. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>
#include <openssl/evp.h>

#include "auth/internal.h"
#include "core/err.h"
#include "core/fsx.h"
#include "core/json.h"
#include "core/log.h"
#include "core/util.h"
#include "project/deps.h"
#include "project/paths.h"
#include "project/repo.h"

#define DEPS_LAYOUT 1                          /* the store's layout: a change makes every key new */
#define DEPS_PKG_MAX (1024 * 1024)             /* bytes of a package.json read */
#define DEPS_LOCK_MAX (64 * 1024 * 1024)       /* bytes of a package-lock.json read */
#define DEPS_CONTENT_MAX (1024ULL * 1024 * 1024) /* bytes of one cache content file merged */
#define DEPS_DEPTH_MAX 256                     /* nesting of an installed tree walked */
#define DEPS_SIZE_FILE ".svc-bytes"
#define DEPS_INSTALL_LOCK ".install" /* locks/<key>.install: held by the one install of <key> at a time */

const char *const svc_deps_writable[SVC_DEPS_WRITABLE] = { ".vite", ".vite-temp", ".cache" };

/* ---- small helpers ---- */

void svc_deps__say(svc_deps_log_fn log, void *arg, const char *fmt, ...)
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

/* out = a "/" b, or SVC_E_INTERNAL when it does not fit. */
static int join(char *out, size_t max, const char *a, const char *b)
{
	int n = snprintf(out, max, "%s/%s", a, b);
	return n < 0 || (size_t)n >= max ? SVC_E_INTERNAL : 0;
}

/* mkdir with `mode` (exactly: chmod after), an existing directory is fine. */
static int mkdir_mode(const char *path, mode_t mode)
{
	if (mkdir(path, mode) < 0 && errno != EEXIST)
		return SVC_E_INTERNAL;
	return chmod(path, mode) < 0 ? SVC_E_INTERNAL : 0;
}

/* Is s exactly `n` lower-case hex digits? */
static int is_hex(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return s[n] == '\0';
}

/* ---- the key ---- */

int svc_deps_key(const struct svc_deps_key_in *in, char *out)
{
	char pkg[65], lock[65] = "none";
	struct svc_buf b;
	int err;

	if (svc_sha256_hex(in->package_json, in->package_json_len, pkg) < 0 ||
	    (in->lock && svc_sha256_hex(in->lock, in->lock_len, lock) < 0))
		return SVC_E_INTERNAL;
	svc_buf_init(&b, 4096);
	err = svc_buf_addf(&b, "svc-deps %d\nnode %s\nnpm %s\nplatform %s\nscripts %s%s\npackage.json %s\n"
			   "package-lock.json %s\n", DEPS_LAYOUT, in->node_version, in->npm_version, in->platform,
			   in->scripts ? "on " : "off", in->scripts ? (in->workspace_id ? in->workspace_id : "?") : "",
			   pkg, lock);
	if (err == 0)
		err = svc_sha256_hex(svc_buf_str(&b), b.len, out);
	svc_buf_dispose(&b);
	return err < 0 ? SVC_E_INTERNAL : 0;
}

/* `prog --version` (a host binary) into out (max bytes), its first line. */
static int program_version(const char *prog, char *out, size_t max)
{
	char buf[128];
	size_t len = 0;
	int fds[2], status = 0;
	pid_t pid;

	if (pipe2(fds, O_CLOEXEC) < 0)
		return SVC_E_INTERNAL;
	pid = fork();
	if (pid == 0) {
		static char *const envp[] = { "PATH=/usr/bin:/bin", "LANG=C.UTF-8", NULL };
		int devnull = open("/dev/null", O_RDWR);
		if (devnull < 0 || dup2(devnull, 0) < 0 || dup2(fds[1], 1) < 0 || dup2(devnull, 2) < 0)
			_exit(127);
		execle(prog, prog, "--version", (char *)NULL, envp);
		_exit(127);
	}
	close(fds[1]);
	while (pid > 0 && len + 1 < sizeof buf) {
		ssize_t n = read(fds[0], buf + len, sizeof buf - 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	close(fds[0]);
	if (pid < 0)
		return SVC_E_INTERNAL;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	buf[len] = '\0';
	buf[strcspn(buf, "\r\n")] = '\0';
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || !buf[0])
		return SVC_E_INTERNAL;
	return snprintf(out, max, "%s", buf) >= (int)max ? SVC_E_INTERNAL : 0;
}

/* The "version" of the npm package that `npm_path` (its CLI, maybe through a symlink) belongs to. */
static int npm_version(const char *npm_path, char *out, size_t max)
{
	char *real = realpath(npm_path, NULL), *slash;
	int up, err = SVC_E_INTERNAL;

	for (up = 0; real && up < 4 && err < 0 && (slash = strrchr(real, '/')) && slash != real; up++) {
		struct json_object *o = NULL;
		const char *name, *ver;
		char *text = NULL;
		size_t len;

		*slash = '\0';
		if (svc_fsx_read(real, "package.json", DEPS_PKG_MAX, &text, &len) == 0 &&
		    svc_json_parse_object(text, len, &o) == 0 && (name = svc_json_str(o, "name")) &&
		    strcmp(name, "npm") == 0 && (ver = svc_json_str(o, "version"))) {
			snprintf(out, max, "%s", ver);
			err = 0;
		}
		json_object_put(o);
		free(text);
	}
	free(real);
	return err;
}

int svc_deps_host(const char *npm_path, char *node_version, char *npm_ver, char *platform)
{
	static char cached_node[32], cached_npm[32], cached_npm_path[1024];
	static struct stat cached_node_st, cached_npm_st;
	const char *node = access("/usr/local/bin/node", X_OK) == 0 ? "/usr/local/bin/node" : "/usr/bin/node";
	struct stat nst, pst;
	struct utsname u;

	if (stat(node, &nst) < 0 || stat(npm_path, &pst) < 0 || uname(&u) < 0) {
		svc_log_error("deps: no node (%s) or npm (%s)", node, npm_path);
		return SVC_E_INTERNAL;
	}
	if (!cached_node[0] || nst.st_ino != cached_node_st.st_ino || nst.st_mtime != cached_node_st.st_mtime) {
		if (program_version(node, cached_node, sizeof cached_node) < 0) {
			svc_log_error("deps: %s --version failed", node);
			cached_node[0] = '\0';
			return SVC_E_INTERNAL;
		}
		cached_node_st = nst;
	}
	if (!cached_npm[0] || strcmp(cached_npm_path, npm_path) != 0 || pst.st_ino != cached_npm_st.st_ino ||
	    pst.st_mtime != cached_npm_st.st_mtime) {
		if (npm_version(npm_path, cached_npm, sizeof cached_npm) < 0) {
			svc_log_error("deps: no npm package around %s", npm_path);
			cached_npm[0] = '\0';
			return SVC_E_INTERNAL;
		}
		snprintf(cached_npm_path, sizeof cached_npm_path, "%s", npm_path);
		cached_npm_st = pst;
	}
	snprintf(node_version, 32, "%s", cached_node);
	snprintf(npm_ver, 32, "%s", cached_npm);
	return snprintf(platform, 64, "%s %s", u.sysname, u.machine) >= 64 ? SVC_E_INTERNAL : 0;
}

/* ---- trees: handing an install to the build's user, sealing an entry, unsealing one to remove it ---- */

enum walk_op {
	WALK_HAND,   /* everything to uid:uid (an install in progress) */
	WALK_SEAL,   /* root's (when root), no write bits; sizes added up */
	WALK_UNSEAL, /* directories 0700 again, so the tree can be removed */
};

struct walk {
	enum walk_op op;
	uid_t uid;      /* WALK_HAND: the new owner */
	gid_t gid;      /* WALK_SEAL: the group that may read (the build's user's), when root */
	uint64_t bytes;
};

static int walk_tree(int dfd, struct walk *w, int depth)
{
	struct svc_fsx_dir d;
	const char *name;
	struct stat st;
	int r, err = 0, root = geteuid() == 0;

	if (depth > DEPS_DEPTH_MAX)
		return SVC_E_INTERNAL;
	if (w->op == WALK_HAND && root && fchown(dfd, w->uid, w->uid) < 0)
		return SVC_E_INTERNAL;
	if (w->op == WALK_UNSEAL && fchmod(dfd, 0700) < 0)
		return SVC_E_INTERNAL;
	if ((err = svc_fsx_dir_open(dfd, &d)) < 0)
		return err;
	while (err == 0 && (r = svc_fsx_dir_next(&d, &name, &st)) > 0) {
		w->bytes += (uint64_t)st.st_blocks * 512;
		if (S_ISDIR(st.st_mode)) {
			int sub = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			err = sub < 0 ? SVC_E_INTERNAL : walk_tree(sub, w, depth + 1);
			if (sub >= 0)
				close(sub);
			continue;
		}
		if (w->op == WALK_HAND && root && fchownat(dfd, name, w->uid, w->uid, AT_SYMLINK_NOFOLLOW) < 0)
			err = SVC_E_INTERNAL;
		if (w->op == WALK_SEAL && root && fchownat(dfd, name, 0, w->gid, AT_SYMLINK_NOFOLLOW) < 0)
			err = SVC_E_INTERNAL;
		if (w->op == WALK_SEAL && S_ISREG(st.st_mode) &&
		    fchmodat(dfd, name, (st.st_mode & 0100) ? 0550 : 0440, 0) < 0)
			err = SVC_E_INTERNAL;
	}
	if (err == 0 && r < 0)
		err = r;
	svc_fsx_dir_close(&d);
	if (err == 0 && w->op == WALK_SEAL && ((root && fchown(dfd, 0, w->gid) < 0) || fchmod(dfd, 0550) < 0))
		err = SVC_E_INTERNAL;
	return err;
}

/* Walks the tree at `path` with `op` (`id` the uid of WALK_HAND, the gid of WALK_SEAL); *out_bytes (may be NULL) its size. */
static int walk_path(const char *path, enum walk_op op, unsigned id, uint64_t *out_bytes)
{
	struct walk w = { op, (uid_t)id, (gid_t)id, 0 };
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC), err;

	if (fd < 0)
		return errno == ENOENT && op == WALK_UNSEAL ? 0 : SVC_E_INTERNAL;
	err = walk_tree(fd, &w, 0);
	close(fd);
	if (out_bytes)
		*out_bytes = w.bytes;
	return err;
}

/* Removes a tree, sealed or not. */
static int remove_any(const char *path)
{
	walk_path(path, WALK_UNSEAL, 0, NULL);
	return svc_fsx_remove_tree(path);
}

/* ---- the store ---- */

/* Opens and share-locks locks_dir/<key>, the file an evictor removes only while it holds it exclusively. */
static int lock_key(const char *locks_dir, const char *key, int how)
{
	char path[2200];
	int tries;

	if (join(path, sizeof path, locks_dir, key) < 0)
		return SVC_E_INTERNAL;
	for (tries = 0; tries < 16; tries++) {
		struct stat st;
		int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
		if (fd < 0)
			return SVC_E_INTERNAL;
		if (flock(fd, how) < 0) {
			int e = errno;
			close(fd);
			return e == EWOULDBLOCK ? SVC_E_CONFLICT : SVC_E_INTERNAL;
		}
		if (fstat(fd, &st) == 0 && st.st_nlink > 0)
			return fd;
		close(fd); /* removed by an evictor meanwhile: lock the new one */
	}
	return SVC_E_INTERNAL;
}

/*
 * Takes locks_dir/<key>.install exclusively, waiting for the install of `key` that holds it (bounded by that
 * install's own wall clock), so builds that need one missing entry at once install it once: the next finds it
 * stored when its turn comes. Says so in the log when it waits. Returns the descriptor (close() releases it)
 * or SVC_E_INTERNAL.
 */
static int install_lock(const struct svc_deps_opts *d, const char *locks_dir, const char *key, svc_deps_log_fn log,
			void *arg)
{
	char name[SVC_DEPS_KEY_HEX + 16];
	int fd;

	snprintf(name, sizeof name, "%s" DEPS_INSTALL_LOCK, key);
	if ((fd = lock_key(locks_dir, name, LOCK_EX | LOCK_NB)) != SVC_E_CONFLICT)
		return fd;
	svc_deps__say(log, arg, "waiting for another build's install of the same dependencies (%.12s)\n", key);
	if (!d->cancel)
		return lock_key(locks_dir, name, LOCK_EX);
	/* a build that may be stopped (a turn's preview check) asks between tries */
	for (;;) {
		struct timespec ts = { 0, 200 * 1000000L };
		if (d->cancel(d->cancel_arg) != 0)
			return SVC_E_CANCELLED;
		nanosleep(&ts, NULL);
		if ((fd = lock_key(locks_dir, name, LOCK_EX | LOCK_NB)) != SVC_E_CONFLICT)
			return fd;
	}
}

/* Fills the paths of lease `out` for entry `key` and marks it used. */
static int lease_fill(const char *modules_dir, const char *key, int fd, struct svc_deps_lease *out)
{
	struct stat st;

	if (join(out->entry, sizeof out->entry, modules_dir, key) < 0 ||
	    join(out->modules, sizeof out->modules, out->entry, "node_modules") < 0)
		return SVC_E_INTERNAL;
	if (lstat(out->entry, &st) < 0 || !S_ISDIR(st.st_mode))
		return 0;
	utimensat(AT_FDCWD, out->entry, NULL, AT_SYMLINK_NOFOLLOW); /* its last use, for eviction */
	snprintf(out->key, sizeof out->key, "%s", key);
	out->fd = fd;
	return 1;
}

int svc_deps_store_lease(const char *modules_dir, const char *locks_dir, const char *key, struct svc_deps_lease *out)
{
	int fd, r;

	if ((fd = lock_key(locks_dir, key, LOCK_SH)) < 0)
		return fd;
	if ((r = lease_fill(modules_dir, key, fd, out)) <= 0) {
		out->entry[0] = out->modules[0] = '\0';
		close(fd);
	}
	return r;
}

int svc_deps_store_publish(const char *modules_dir, const char *tree, const char *key)
{
	char entry[2200], size[32];
	uint64_t bytes = 0;
	struct stat mst;
	int err;

	/* read by the group of the store's directory (the build's user's: docs/operations.md "Files and their modes") */
	if (join(entry, sizeof entry, modules_dir, key) < 0 || stat(modules_dir, &mst) < 0)
		return SVC_E_INTERNAL;
	if ((err = walk_path(tree, WALK_SEAL, (unsigned)mst.st_gid, &bytes)) < 0) {
		svc_log_error("deps: cannot make %s read-only", tree);
		return err;
	}
	/* the size, for eviction: written into the sealed top directory by its owner */
	snprintf(size, sizeof size, "%llu\n", (unsigned long long)bytes);
	if (chmod(tree, 0750) < 0 || svc_fsx_write(tree, DEPS_SIZE_FILE, size, strlen(size)) < 0 ||
	    chmod(tree, 0550) < 0) {
		svc_log_error("deps: cannot record the size of %s", tree);
		return SVC_E_INTERNAL;
	}
	if (rename(tree, entry) == 0)
		return 0;
	if (errno == EEXIST || errno == ENOTEMPTY) {
		remove_any(tree); /* the same install, published first by another build */
		return 1;
	}
	svc_log_error("deps: rename %s: %s", entry, strerror(errno));
	return SVC_E_INTERNAL;
}

struct entry {
	char key[SVC_DEPS_KEY_HEX + 1];
	time_t used;
	uint64_t bytes;
};

static int entry_older(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;
	return x->used < y->used ? -1 : x->used > y->used;
}

/* The store's entries, with their last use and size. */
static int list_entries(const char *modules_dir, struct entry **out, size_t *out_n)
{
	struct svc_fsx_dir d;
	struct entry *list = NULL;
	size_t n = 0, cap = 0;
	const char *name;
	struct stat st;
	int fd, r, err;

	if ((fd = open(modules_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
		return errno == ENOENT ? 0 : SVC_E_INTERNAL;
	if ((err = svc_fsx_dir_open(fd, &d)) < 0) {
		close(fd);
		return err;
	}
	while (err == 0 && (r = svc_fsx_dir_next(&d, &name, &st)) > 0) {
		char *text = NULL, entry[2200];
		size_t len;
		uint64_t bytes = 0;

		if (!S_ISDIR(st.st_mode) || strlen(name) != SVC_DEPS_KEY_HEX || !is_hex(name, SVC_DEPS_KEY_HEX))
			continue;
		if ((err = SVC_ARRAY_GROW(list, cap, n + 1)) < 0 || (err = join(entry, sizeof entry, modules_dir, name)) < 0)
			break;
		if (svc_fsx_read(entry, DEPS_SIZE_FILE, 64, &text, &len) == 0) {
			text[strcspn(text, "\n")] = '\0';
			svc_parse_u64(text, UINT64_MAX, &bytes);
		}
		free(text);
		snprintf(list[n].key, sizeof list[n].key, "%s", name);
		list[n].used = st.st_mtime;
		list[n].bytes = bytes;
		n++;
	}
	if (err == 0 && r < 0)
		err = r;
	svc_fsx_dir_close(&d);
	close(fd);
	if (err < 0) {
		free(list);
		return err;
	}
	*out = list;
	*out_n = n;
	return 0;
}

/* Removes entry `key` unless it is leased: renamed away first, so no build finds half of it. */
static int evict_one(const char *modules_dir, const char *locks_dir, const char *key)
{
	char entry[2200], gone[2300], lock[2200], rnd[17];
	int fd, err = 0;

	if ((fd = lock_key(locks_dir, key, LOCK_EX | LOCK_NB)) < 0)
		return fd == SVC_E_CONFLICT ? 0 : fd;
	if (join(entry, sizeof entry, modules_dir, key) < 0 || join(lock, sizeof lock, locks_dir, key) < 0 ||
	    svc_random_hex(rnd, 8) < 0 || snprintf(gone, sizeof gone, "%s/.gone-%s", modules_dir, rnd) < 0) {
		close(fd);
		return SVC_E_INTERNAL;
	}
	if (rename(entry, gone) < 0)
		err = errno == ENOENT ? 0 : SVC_E_INTERNAL;
	unlink(lock);
	close(fd);
	/* its install lock too, unless an install holds it (a waiter that finds it removed locks the new one) */
	snprintf(lock, sizeof lock, "%s" DEPS_INSTALL_LOCK, key);
	if ((fd = lock_key(locks_dir, lock, LOCK_EX | LOCK_NB)) >= 0) {
		if (join(gone, sizeof gone, locks_dir, lock) == 0)
			unlink(gone);
		close(fd);
	}
	if (err == 0 && remove_any(gone) < 0)
		svc_log_warn("deps: could not remove all of %s", gone);
	return err < 0 ? err : 1;
}

int svc_deps_store_evict(const char *modules_dir, const char *locks_dir, uint64_t max_bytes, const char *keep)
{
	struct entry *list = NULL;
	uint64_t total = 0;
	size_t n = 0, i;
	int err, removed = 0;

	if ((err = list_entries(modules_dir, &list, &n)) < 0)
		return err;
	for (i = 0; i < n; i++)
		total += list[i].bytes;
	qsort(list, n, sizeof *list, entry_older);
	for (i = 0; i < n && total > max_bytes; i++) {
		if (keep && strcmp(list[i].key, keep) == 0)
			continue;
		if ((err = evict_one(modules_dir, locks_dir, list[i].key)) < 0)
			break;
		if (err == 1) {
			total -= list[i].bytes;
			removed++;
			svc_log_info("deps: evicted node_modules %.12s (%llu MiB)", list[i].key,
				     (unsigned long long)(list[i].bytes >> 20));
		}
		err = 0;
	}
	free(list);
	return err < 0 ? err : removed;
}

/* ---- the shared npm cache ---- */

/* The three levels of content-v2/sha512: 2 hex, 2 hex, 124 hex. */
static const size_t content_hex[3] = { 2, 2, 124 };

typedef int (*content_fn)(void *arg, int dfd, const char *rel, const char *name, const struct stat *st);

/* Calls fn for each file at content-v2/sha512/<2>/<2>/<124 hex> of cacache `root`; other names are counted in *odd. */
static int walk_content(const char *root, content_fn fn, void *arg, unsigned *odd)
{
	char base[2200], rel[16];
	int fd[3] = { -1, -1, -1 }, err = 0;
	struct svc_fsx_dir d[3];
	const char *name[3];
	struct stat st;
	int depth = 0, r;

	if (join(base, sizeof base, root, "content-v2/sha512") < 0)
		return SVC_E_INTERNAL;
	if ((fd[0] = open(base, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
		return errno == ENOENT ? 0 : SVC_E_INTERNAL;
	if ((err = svc_fsx_dir_open(fd[0], &d[0])) < 0) {
		close(fd[0]);
		return err;
	}
	while (depth >= 0) {
		r = svc_fsx_dir_next(&d[depth], &name[depth], &st);
		if (r <= 0) {
			svc_fsx_dir_close(&d[depth]);
			close(fd[depth]);
			if (r < 0 && err == 0)
				err = r;
			depth--;
			continue;
		}
		if (strlen(name[depth]) != content_hex[depth] || !is_hex(name[depth], content_hex[depth]) ||
		    (depth < 2 && !S_ISDIR(st.st_mode)) || (depth == 2 && !S_ISREG(st.st_mode))) {
			if (odd)
				(*odd)++;
			continue;
		}
		if (depth == 2) {
			snprintf(rel, sizeof rel, "%s/%s", name[0], name[1]);
			if ((err = fn(arg, fd[2], rel, name[2], &st)) < 0)
				break;
			continue;
		}
		fd[depth + 1] = openat(fd[depth], name[depth], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd[depth + 1] < 0 || svc_fsx_dir_open(fd[depth + 1], &d[depth + 1]) < 0) {
			if (fd[depth + 1] >= 0)
				close(fd[depth + 1]);
			err = SVC_E_INTERNAL;
			break;
		}
		depth++;
	}
	for (; depth >= 0; depth--) {
		svc_fsx_dir_close(&d[depth]);
		close(fd[depth]);
	}
	return err;
}

/* Makes root/content-v2/sha512[/<rel>] (rel "ab/cd", or NULL) and its parents, handed to uid (root only) when uid != 0. */
static int content_dirs(const char *root, const char *rel, unsigned uid, mode_t mode, char *out, size_t max)
{
	static const char *const levels[] = { "", "/content-v2", "/content-v2/sha512" };
	char path[2300];
	size_t i;

	for (i = 0; i < (rel ? 5u : 3u); i++) {
		int n = i < 3 ? snprintf(path, sizeof path, "%s%s", root, levels[i])
			      : snprintf(path, sizeof path, "%s/content-v2/sha512/%.*s", root, i == 3 ? 2 : 5, rel);
		if (n < 0 || (size_t)n >= sizeof path || mkdir_mode(path, mode) < 0)
			return SVC_E_INTERNAL;
		if (uid && geteuid() == 0 && chown(path, uid, uid) < 0)
			return SVC_E_INTERNAL;
	}
	return snprintf(out, max, "%s", path) >= (int)max ? SVC_E_INTERNAL : 0;
}

struct seed {
	const char *priv;
	unsigned uid;
	char last[8]; /* the rel whose directories exist */
	char dir[2300];
};

static int seed_one(void *arg, int dfd, const char *rel, const char *name, const struct stat *st)
{
	struct seed *s = arg;
	char to[2600];
	(void)st;

	if (strcmp(s->last, rel) != 0) {
		if (content_dirs(s->priv, rel, s->uid, 0750, s->dir, sizeof s->dir) < 0)
			return SVC_E_INTERNAL;
		snprintf(s->last, sizeof s->last, "%s", rel);
	}
	if (join(to, sizeof to, s->dir, name) < 0)
		return SVC_E_INTERNAL;
	if (linkat(dfd, name, AT_FDCWD, to, 0) < 0 && errno != EEXIST) {
		svc_log_error("deps: link %s: %s", to, strerror(errno));
		return SVC_E_INTERNAL;
	}
	return 0;
}

int svc_deps_cache_seed(const char *shared, const char *priv, unsigned uid)
{
	struct seed s = { priv, uid, "", "" };
	char path[2300];

	if (mkdir_mode(shared, 0700) < 0 || mkdir_mode(priv, 0750) < 0 ||
	    (uid && geteuid() == 0 && chown(priv, uid, uid) < 0))
		return SVC_E_INTERNAL;
	if (content_dirs(priv, NULL, uid, 0750, path, sizeof path) < 0)
		return SVC_E_INTERNAL;
	return walk_content(shared, seed_one, &s, NULL);
}

struct merge {
	const char *shared;
	gid_t gid; /* the group of `shared`, which its files get */
	unsigned added, refused;
	char last[8];
	char dir[2300];
};

/* Copies the file `name` at dfd to `tmp` while hashing it; the hex sha512 into hex (129 bytes). */
static int copy_hashing(int dfd, const char *name, const char *tmp, gid_t gid, char *hex)
{
	unsigned char md[EVP_MAX_MD_SIZE], buf[65536];
	unsigned mdlen = 0;
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	int in = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	int out = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	uint64_t total = 0;
	int err = SVC_E_INTERNAL;

	if (!ctx || in < 0 || out < 0 || EVP_DigestInit_ex(ctx, EVP_sha512(), NULL) != 1)
		goto done;
	for (;;) {
		ssize_t n = read(in, buf, sizeof buf);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 || (total += (uint64_t)n) > DEPS_CONTENT_MAX)
			goto done;
		if (n == 0)
			break;
		if (EVP_DigestUpdate(ctx, buf, (size_t)n) != 1 || write(out, buf, (size_t)n) != n)
			goto done;
	}
	if (EVP_DigestFinal_ex(ctx, md, &mdlen) != 1 || mdlen != 64 || fchmod(out, 0440) < 0 ||
	    (geteuid() == 0 && fchown(out, 0, gid) < 0))
		goto done;
	svc_hex_encode(md, mdlen, hex);
	err = 0;
done:
	if (out >= 0 && close(out) < 0)
		err = SVC_E_INTERNAL;
	if (in >= 0)
		close(in);
	EVP_MD_CTX_free(ctx);
	return err;
}

static int merge_one(void *arg, int dfd, const char *rel, const char *name, const struct stat *st)
{
	struct merge *m = arg;
	char to[2600], tmp[2600], hex[129], want[129], rnd[17];
	struct stat have;

	if (st->st_nlink > 1)
		return 0; /* a hardlink of the shared cache's own (the seed), or of something else: not new */
	if (strcmp(m->last, rel) != 0) {
		if (content_dirs(m->shared, rel, 0, 0700, m->dir, sizeof m->dir) < 0)
			return SVC_E_INTERNAL;
		snprintf(m->last, sizeof m->last, "%s", rel);
	}
	if (join(to, sizeof to, m->dir, name) < 0)
		return SVC_E_INTERNAL;
	if (lstat(to, &have) == 0)
		return 0;
	if (svc_random_hex(rnd, 8) < 0 || snprintf(tmp, sizeof tmp, "%s/.tmp-%s", m->dir, rnd) >= (int)sizeof tmp)
		return SVC_E_INTERNAL;
	snprintf(want, sizeof want, "%.2s%.2s%s", rel, rel + 3, name);
	if (st->st_size < 0 || (uint64_t)st->st_size > DEPS_CONTENT_MAX || copy_hashing(dfd, name, tmp, m->gid, hex) < 0 ||
	    strcmp(hex, want) != 0) {
		unlink(tmp);
		m->refused++;
		svc_log_warn("deps: cache content %s/%s left out: its sha512 is not its name", rel, name);
		return 0;
	}
	if (link(tmp, to) < 0 && errno != EEXIST) {
		unlink(tmp);
		return SVC_E_INTERNAL;
	}
	unlink(tmp);
	m->added++;
	return 0;
}

int svc_deps_cache_merge(const char *priv, const char *shared, unsigned *out_added, unsigned *out_refused)
{
	struct merge m = { shared, 0, 0, 0, "", "" };
	unsigned odd = 0;
	struct stat st;
	int err;

	if (mkdir_mode(shared, 0700) < 0 || stat(shared, &st) < 0)
		return SVC_E_INTERNAL;
	m.gid = st.st_gid;
	err = walk_content(priv, merge_one, &m, &odd);
	if (out_added)
		*out_added = m.added;
	if (out_refused)
		*out_refused = m.refused + odd;
	return err;
}

struct cfile {
	char rel[8], name[128];
	time_t mtime;
	uint64_t bytes;
};

struct cevict {
	struct cfile *list;
	size_t n, cap;
	uint64_t total;
};

static int cfile_older(const void *a, const void *b)
{
	const struct cfile *x = a, *y = b;
	return x->mtime < y->mtime ? -1 : x->mtime > y->mtime;
}

static int cevict_one(void *arg, int dfd, const char *rel, const char *name, const struct stat *st)
{
	struct cevict *c = arg;
	(void)dfd;

	if (SVC_ARRAY_GROW(c->list, c->cap, c->n + 1) < 0)
		return SVC_E_INTERNAL;
	snprintf(c->list[c->n].rel, sizeof c->list[c->n].rel, "%s", rel);
	snprintf(c->list[c->n].name, sizeof c->list[c->n].name, "%s", name);
	c->list[c->n].mtime = st->st_mtime;
	c->list[c->n].bytes = (uint64_t)st->st_blocks * 512;
	c->total += c->list[c->n].bytes;
	c->n++;
	return 0;
}

int svc_deps_cache_evict(const char *shared, uint64_t max_bytes)
{
	struct cevict c = { NULL, 0, 0, 0 };
	size_t i;
	int err, removed = 0;

	if ((err = walk_content(shared, cevict_one, &c, NULL)) < 0 || c.total <= max_bytes)
		goto done;
	qsort(c.list, c.n, sizeof *c.list, cfile_older);
	/* to 90 % of the bound, so not every install evicts again */
	for (i = 0; i < c.n && c.total > max_bytes / 10 * 9; i++) {
		char path[2600];
		if (snprintf(path, sizeof path, "%s/content-v2/sha512/%s/%s", shared, c.list[i].rel, c.list[i].name) <
			    (int)sizeof path &&
		    unlink(path) == 0) {
			c.total -= c.list[i].bytes;
			removed++;
		}
	}
	svc_log_info("deps: %d files of the npm cache evicted", removed);
done:
	free(c.list);
	return err < 0 ? err : removed;
}

/* ---- an install ---- */

/* The directories under SVC_DATA_DIR/npm, made with their modes. */
struct npm_dirs {
	char root[2048], modules[2100], locks[2100], tmp[2100], cache_top[2100], cache[2200];
};

static int npm_dirs(const char *data_dir, gid_t gid, struct npm_dirs *p)
{
	if (join(p->root, sizeof p->root, data_dir, "npm") < 0 || join(p->modules, sizeof p->modules, p->root, "modules") < 0 ||
	    join(p->locks, sizeof p->locks, p->root, "locks") < 0 || join(p->tmp, sizeof p->tmp, p->root, "tmp") < 0 ||
	    join(p->cache_top, sizeof p->cache_top, p->root, "cache") < 0 ||
	    join(p->cache, sizeof p->cache, p->cache_top, "_cacache") < 0)
		return SVC_E_INTERNAL;
	/* 0710 of the build's user's group: it passes through to its own install and to the entries it is given;
	 * what is stored is read by that group (the shared cache's files take the group of its directory) */
	if (mkdir_mode(p->root, 0710) < 0 || mkdir_mode(p->modules, 0710) < 0 || mkdir_mode(p->locks, 0700) < 0 ||
	    mkdir_mode(p->tmp, 0710) < 0 || mkdir_mode(p->cache_top, 0700) < 0 || mkdir_mode(p->cache, 0700) < 0 ||
	    (geteuid() == 0 && (chown(p->root, 0, gid) < 0 || chown(p->modules, 0, gid) < 0 || chown(p->tmp, 0, gid) < 0 ||
				chown(p->cache, 0, gid) < 0))) {
		svc_log_error("deps: cannot make the directories of %s: %s", p->root, strerror(errno));
		return SVC_E_INTERNAL;
	}
	return 0;
}

/* Does package.json name npm workspaces (its tree needs the workspaces' own files)? */
static int uses_workspaces(const char *pkg, size_t len)
{
	struct json_object *o = NULL;
	int r = svc_json_parse_object(pkg, len, &o) == 0 && json_object_object_get_ex(o, "workspaces", NULL);

	json_object_put(o);
	return r;
}

/* Does package.json have install scripts of its own (they need the whole project, not just package.json)? */
static int root_scripts(const char *pkg, size_t len)
{
	static const char *const names[] = { "preinstall", "install", "postinstall", "prepare" };
	struct json_object *o = NULL, *scripts;
	size_t i;
	int r = 0;

	if (svc_json_parse_object(pkg, len, &o) == 0 && json_object_object_get_ex(o, "scripts", &scripts) &&
	    json_object_is_type(scripts, json_type_object))
		for (i = 0; i < sizeof names / sizeof names[0]; i++)
			r |= json_object_object_get_ex(scripts, names[i], NULL);
	json_object_put(o);
	return r;
}

/* What one install works with. */
struct job {
	const struct svc_deps_opts *d;
	struct npm_dirs p;
	svc_deps_run_fn run;
	void *run_arg;
	svc_deps_log_fn log;
	void *log_arg;
	char *pkg, *lock;
	size_t pkg_len, lock_len;
	char node[32], npm[32], platform[64];
	char tmp[2200], cache[2300]; /* the install's private npm cache (bound as /npm-cache) */
	char cacache[2400];          /* its cacache, where npm keeps content: cache/_cacache */
	char disk[2300];             /* the tmpfs of SVC_BUILD_DISK_MB the install's tree is in (root), else a directory */
	int disk_mounted;
};

static int job_key(const struct job *j, const char *lock, size_t lock_len, char *out)
{
	struct svc_deps_key_in in = { j->node, j->npm, j->platform, j->d->scripts, j->d->workspace_id,
				      j->pkg, j->pkg_len, lock, lock_len };
	return svc_deps_key(&in, out);
}

/* The install's own tree, bounded as a build's is: a tmpfs of SVC_BUILD_DISK_MB when root (svc_sandbox_disk_mount()). */
static int job_disk(struct job *j)
{
	char dwhy[256];

	/* beside the job's directory, not in it: what svc_deps_sweep() finds after a killed install is one mount */
	if (snprintf(j->disk, sizeof j->disk, "%s.disk", j->tmp) >= (int)sizeof j->disk)
		return SVC_E_INTERNAL;
	if (geteuid() != 0)
		return mkdir_mode(j->disk, 0750); /* RLIMIT_FSIZE only (docs/operations.md "The build sandbox") */
	if (svc_sandbox_disk_mount(j->disk, j->d->disk_mb, j->d->uid, dwhy, sizeof dwhy) < 0) {
		svc_log_error("deps: %s", dwhy);
		return SVC_E_INTERNAL;
	}
	j->disk_mounted = 1;
	return 0;
}

/*
 * A private directory under npm/tmp, the install's seeded cache in it and,
 * with `disk`, its bounded tree (job_disk()). The cache stays on the shared
 * cache's disk, for the hardlinks; npm fills it with what it extracts into
 * the bounded tree.
 */
static int job_begin(struct job *j, int disk)
{
	char rnd[17];

	if (svc_random_hex(rnd, 8) < 0 || join(j->tmp, sizeof j->tmp, j->p.tmp, rnd) < 0 ||
	    join(j->cache, sizeof j->cache, j->tmp, "cache") < 0 || join(j->cacache, sizeof j->cacache, j->cache, "_cacache") < 0 ||
	    mkdir_mode(j->tmp, 0710) < 0 || (geteuid() == 0 && chown(j->tmp, 0, j->d->uid) < 0) ||
	    mkdir_mode(j->cache, 0750) < 0 || (disk && job_disk(j) < 0))
		return SVC_E_INTERNAL;
	/* the directories become the install's, never the seeded files: they are the shared cache's own inodes */
	if ((geteuid() == 0 && chown(j->cache, j->d->uid, j->d->uid) < 0) ||
	    svc_deps_cache_seed(j->p.cache, j->cacache, j->d->uid) < 0) {
		svc_log_error("deps: cannot seed the install's npm cache in %s", j->cache);
		return SVC_E_INTERNAL;
	}
	return 0;
}

/* Whether the shared cache `shared` holds the content of integrity `sri` ("sha512-<base64>", maybe among others). */
static int cache_has(const char *shared, const char *sri)
{
	const char *p = strstr(sri, "sha512-");
	unsigned char raw[80];
	char hex[129], path[2600];
	size_t len;
	struct stat st;
	int n;

	if (!p)
		return 0;
	p += 7;
	len = strcspn(p, " \t\n?");
	if (len != 88 || (n = EVP_DecodeBlock(raw, (const unsigned char *)p, (int)len)) != 66) /* 64 bytes + "==" */
		return 0;
	svc_hex_encode(raw, 64, hex);
	n = snprintf(path, sizeof path, "%s/content-v2/sha512/%.2s/%.2s/%s", shared, hex, hex + 2, hex + 4);
	return n > 0 && (size_t)n < sizeof path && lstat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/*
 * A lockfile without "resolved" (npm's omit-lockfile-registry-resolved)
 * makes npm fetch every packument to find the tarballs, so no install from
 * the cache alone. For each entry of `packages` whose sha512 content the
 * shared cache holds, the copy in the install's tree gets the registry's
 * URL of that tarball: npm then takes it from the cache by its integrity and
 * never asks for the URL. Returns the number of entries filled in (the copy
 * rewritten when > 0).
 */
static int fill_resolved(const struct job *j, const char *tree)
{
	struct json_object *o = NULL, *pkgs;
	const char *text, *reg = j->d->registry ? j->d->registry : "https://registry.npmjs.org/";
	int filled = 0;

	if (svc_json_parse_object(j->lock, j->lock_len, &o) < 0 || !json_object_object_get_ex(o, "packages", &pkgs) ||
	    !json_object_is_type(pkgs, json_type_object))
		goto done;
	json_object_object_foreach(pkgs, path, e) {
		const char *name, *ver, *sri, *base, *nm = strstr(path, "node_modules/");
		char url[1024];
		int n;

		if (!nm || !json_object_is_type(e, json_type_object) || json_object_object_get_ex(e, "resolved", NULL) ||
		    json_object_object_get_ex(e, "link", NULL) || !(ver = svc_json_str(e, "version")) ||
		    !(sri = svc_json_str(e, "integrity")) || !cache_has(j->p.cache, sri))
			continue;
		while (strstr(nm + 13, "node_modules/"))
			nm = strstr(nm + 13, "node_modules/");
		name = svc_json_str(e, "name") ? svc_json_str(e, "name") : nm + 13; /* "name" for an alias */
		base = strrchr(name, '/') ? strrchr(name, '/') + 1 : name;
		n = snprintf(url, sizeof url, "%s%s%s/-/%s-%s.tgz", reg, reg[0] && reg[strlen(reg) - 1] == '/' ? "" : "/",
			     name, base, ver);
		if (n > 0 && (size_t)n < sizeof url && !strchr(name, '\\') && !strstr(name, "..")) {
			json_object_object_add(e, "resolved", json_object_new_string(url));
			filled++;
		}
	}
	if (filled && (!(text = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE)) ||
		       svc_fsx_write(tree, "package-lock.json", text, strlen(text)) < 0))
		filled = 0;
done:
	json_object_put(o);
	return filled;
}

/* Runs the install in `root`, then adds the new content of its cache to the shared one. */
static int job_install(struct job *j, const char *root, const char *disk_dir, int has_lock, char *why, size_t why_max)
{
	struct svc_deps_step s = { SVC_DEPS_STEP_INSTALL, has_lock, root, j->cache, disk_dir };
	unsigned added = 0, refused = 0;
	int64_t t0 = svc_mono_ms();
	int err;

	err = j->run(j->run_arg, &s, why, why_max);
	/* no project code has run (--ignore-scripts): what npm fetched may go into the shared cache */
	if (svc_deps_cache_merge(j->cacache, j->p.cache, &added, &refused) < 0)
		svc_log_warn("deps: the npm cache of %s was not merged", j->tmp);
	remove_any(j->cache);
	if (added || refused)
		svc_deps__say(j->log, j->log_arg, "npm cache: %u new files shared%s\n", added, refused ? ", some left out" : "");
	if (added && svc_deps_cache_evict(j->p.cache, (uint64_t)j->d->cache_max_mb << 20) < 0)
		svc_log_warn("deps: eviction in %s failed", j->p.cache);
	if (err == 0)
		svc_deps__say(j->log, j->log_arg, "installed in %lld ms\n", (long long)(svc_mono_ms() - t0));
	return err;
}

static int job_scripts(struct job *j, const char *root, const char *disk_dir, char *why, size_t why_max)
{
	struct svc_deps_step s = { SVC_DEPS_STEP_SCRIPTS, 0, root, NULL, disk_dir };

	return j->d->scripts ? j->run(j->run_arg, &s, why, why_max) : 0;
}

/* Ends the job: its tmpfs unmounted, its directory removed. */
static void job_end(struct job *j)
{
	if (j->disk[0])
		svc_sandbox_disk_remove(j->disk); /* unmounted (when root), removed */
	j->disk[0] = '\0';
	j->disk_mounted = 0;
	if (j->tmp[0])
		remove_any(j->tmp);
}

/* Copies package.json and package-lock.json from `from` into the new directory `to`. */
static int copy_pair(const char *from, const char *to)
{
	static const char *const names[] = { "package.json", "package-lock.json" };
	size_t i;
	int err = mkdir_mode(to, 0700);

	for (i = 0; err == 0 && i < 2; i++) {
		char *text = NULL;
		size_t len;
		if ((err = svc_fsx_read(from, names[i], DEPS_LOCK_MAX, &text, &len)) == 0)
			err = svc_fsx_write(to, names[i], text, len);
		free(text);
	}
	return err < 0 ? SVC_E_INTERNAL : 0;
}

/* Copies the tree at `sfd` into the directory at `dfd`, keeping symlinks (node_modules/.bin) and modes. */
static int copy_keep(int sfd, int dfd, int depth)
{
	struct svc_fsx_dir d;
	const char *name;
	struct stat st;
	char buf[65536];
	int r, err = 0;

	if (depth > DEPS_DEPTH_MAX || (err = svc_fsx_dir_open(sfd, &d)) < 0)
		return err < 0 ? err : SVC_E_INTERNAL;
	while (err == 0 && (r = svc_fsx_dir_next(&d, &name, &st)) > 0) {
		int in = -1, out = -1;
		if (S_ISDIR(st.st_mode)) {
			if (mkdirat(dfd, name, 0750) < 0 ||
			    (in = openat(sfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0 ||
			    (out = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
				err = SVC_E_INTERNAL;
			else
				err = copy_keep(in, out, depth + 1);
		} else if (S_ISLNK(st.st_mode)) {
			ssize_t n = readlinkat(sfd, name, buf, sizeof buf - 1);
			if (n < 0 || (buf[n] = '\0', symlinkat(buf, dfd, name)) < 0)
				err = SVC_E_INTERNAL;
		} else if (S_ISREG(st.st_mode)) {
			ssize_t n;
			if ((in = openat(sfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) < 0 ||
			    (out = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
					  st.st_mode & 0755)) < 0)
				err = SVC_E_INTERNAL;
			while (err == 0 && (n = read(in, buf, sizeof buf)) != 0)
				if (n < 0 ? errno != EINTR : write(out, buf, (size_t)n) != n)
					err = SVC_E_INTERNAL;
		}
		if (in >= 0)
			close(in);
		if (out >= 0 && close(out) < 0)
			err = SVC_E_INTERNAL;
	}
	if (err == 0 && r < 0)
		err = r;
	svc_fsx_dir_close(&d);
	return err;
}

/* Copies the tree `src` into `dst` (made). */
static int copy_tree_keep(const char *src, const char *dst)
{
	int sfd = -1, dfd = -1, err = SVC_E_INTERNAL;

	if (mkdir_mode(dst, 0750) == 0 && (sfd = open(src, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) >= 0 &&
	    (dfd = open(dst, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) >= 0)
		err = copy_keep(sfd, dfd, 0);
	if (sfd >= 0)
		close(sfd);
	if (dfd >= 0)
		close(dfd);
	return err;
}

/* No store (SVC_NPM_MODULES_MAX_MB 0, npm workspaces, scripts of the project's own): into `dir` itself, as before. */
static int install_in_tree(struct job *j, const char *dir, struct svc_deps_lease *out, char *why, size_t why_max)
{
	char installed[2300], lockpath[2300];
	struct stat st;
	int err;

	if ((err = job_begin(j, 0)) < 0 ||
	    snprintf(out->tmp, sizeof out->tmp, "%s", j->tmp) >= (int)sizeof out->tmp || /* removed by the release */
	    (err = walk_path(dir, WALK_HAND, j->d->uid, NULL)) < 0) {
		job_end(j);
		out->tmp[0] = '\0';
		snprintf(why, why_max, "the dependencies could not be prepared");
		return SVC_E_INTERNAL;
	}
	if ((err = job_install(j, dir, NULL, j->lock != NULL, why, why_max)) < 0)
		return err;
	if (!j->lock && join(lockpath, sizeof lockpath, dir, "package-lock.json") == 0 && lstat(lockpath, &st) == 0 &&
	    join(installed, sizeof installed, j->tmp, "installed") == 0 && copy_pair(dir, installed) == 0 &&
	    snprintf(out->installed, sizeof out->installed, "%s", installed) < (int)sizeof out->installed)
		out->lock_made = 1;
	return job_scripts(j, dir, NULL, why, why_max);
}

/* The install's tree, done: the lockfile the project has back, the writable folders made, copied out of the tmpfs. */
static int tree_finish(struct job *j, const char *tree, int filled, char *final, size_t max)
{
	char nm[2400], sub[2500];
	size_t i;

	if (filled && svc_fsx_write(tree, "package-lock.json", j->lock, j->lock_len) < 0)
		return SVC_E_INTERNAL; /* the entry keeps the lockfile as the project has it */
	snprintf(sub, sizeof sub, "%s/.svc-home", tree);
	remove_any(sub);
	/* what tools write into node_modules gets mounts of its own (svc_deps_mounts()) */
	if (join(nm, sizeof nm, tree, "node_modules") < 0 || mkdir_mode(nm, 0750) < 0)
		return SVC_E_INTERNAL;
	for (i = 0; i < SVC_DEPS_WRITABLE; i++)
		if (join(sub, sizeof sub, nm, svc_deps_writable[i]) < 0 || mkdir_mode(sub, 0750) < 0)
			return SVC_E_INTERNAL;
	if (!j->disk_mounted)
		return snprintf(final, max, "%s", tree) >= (int)max ? SVC_E_INTERNAL : 0;
	if (join(final, max, j->tmp, "tree") < 0 || copy_tree_keep(tree, final) < 0) {
		svc_log_error("deps: cannot copy %s to %s", tree, final);
		return SVC_E_INTERNAL;
	}
	return 0;
}

/* Installs into a new tree of its own and stores it under its key. */
static int install_stored(struct job *j, char *key, struct svc_deps_lease *out, char *why, size_t why_max)
{
	char tree[2400], final[2400], *newlock = NULL;
	size_t newlock_len = 0;
	int err, fd = -1, filled;

	if ((err = job_begin(j, 1)) < 0 || (err = join(tree, sizeof tree, j->disk, "tree")) < 0 ||
	    (err = mkdir_mode(tree, 0750)) < 0 || (err = svc_fsx_write(tree, "package.json", j->pkg, j->pkg_len)) < 0 ||
	    (j->lock && (err = svc_fsx_write(tree, "package-lock.json", j->lock, j->lock_len)) < 0))
		goto internal;
	filled = j->lock ? fill_resolved(j, tree) : 0;
	if ((err = walk_path(tree, WALK_HAND, j->d->uid, NULL)) < 0)
		goto internal;
	if ((err = job_install(j, tree, j->disk_mounted ? j->disk : NULL, j->lock != NULL, why, why_max)) < 0)
		goto done;
	if (!j->lock) {
		/* the key of what the project will have once the lockfile npm wrote is committed */
		if (svc_fsx_read(tree, "package-lock.json", DEPS_LOCK_MAX, &newlock, &newlock_len) < 0) {
			snprintf(why, why_max, "npm install wrote no package-lock.json");
			err = SVC_E_VALIDATION;
			goto done;
		}
		if ((err = job_key(j, newlock, newlock_len, key)) < 0)
			goto internal;
		out->lock_made = 1;
	}
	if ((err = job_scripts(j, tree, j->disk_mounted ? j->disk : NULL, why, why_max)) < 0)
		goto done;
	if ((err = tree_finish(j, tree, filled, final, sizeof final)) < 0 || (fd = lock_key(j->p.locks, key, LOCK_SH)) < 0 ||
	    (err = svc_deps_store_publish(j->p.modules, final, key)) < 0 || (err = lease_fill(j->p.modules, key, fd, out)) != 1)
		goto internal;
	fd = -1; /* the lease's */
	if (out->lock_made)
		snprintf(out->installed, sizeof out->installed, "%s", out->entry);
	if (svc_deps_store_evict(j->p.modules, j->p.locks, (uint64_t)j->d->modules_max_mb << 20, key) < 0)
		svc_log_warn("deps: eviction in %s failed", j->p.modules);
	err = 0;
	goto done;
internal:
	svc_log_error("deps: the install in %s could not be stored", j->tmp);
	snprintf(why, why_max, "the dependencies could not be prepared");
	err = SVC_E_INTERNAL;
done:
	if (fd >= 0)
		close(fd);
	if (err < 0)
		out->lock_made = 0;
	free(newlock);
	job_end(j);
	return err;
}

int svc_deps_prepare(const struct svc_deps_opts *d, const char *dir, svc_deps_run_fn run, void *run_arg,
		     svc_deps_log_fn log, void *log_arg, struct svc_deps_lease *out, char *why, size_t why_max)
{
	struct job j = { .d = d, .run = run, .run_arg = run_arg, .log = log, .log_arg = log_arg };
	char key[SVC_DEPS_KEY_HEX + 1], nm[2100];
	int err, ifd = -1;

	memset(out, 0, sizeof *out);
	out->fd = -1;
	snprintf(why, why_max, "%s", "");
	if ((err = svc_fsx_read(dir, "package.json", DEPS_PKG_MAX, &j.pkg, &j.pkg_len)) < 0) {
		snprintf(why, why_max, "package.json could not be read (more than %d bytes?)", DEPS_PKG_MAX);
		err = SVC_E_VALIDATION;
		goto done;
	}
	err = svc_fsx_read(dir, "package-lock.json", DEPS_LOCK_MAX, &j.lock, &j.lock_len);
	if (err < 0 && err != SVC_E_NOT_FOUND) {
		snprintf(why, why_max, "package-lock.json could not be read (more than %d MiB?)", DEPS_LOCK_MAX >> 20);
		err = SVC_E_VALIDATION;
		goto done;
	}
	if (!d->data_dir) {
		/* no SVC_DATA_DIR (a caller that set the options by hand): npm in the tree as it always did */
		struct svc_deps_step s = { SVC_DEPS_STEP_INSTALL, j.lock != NULL, dir, NULL, NULL };
		if ((err = run(run_arg, &s, why, why_max)) == 0 && d->scripts) {
			s.kind = SVC_DEPS_STEP_SCRIPTS;
			err = run(run_arg, &s, why, why_max);
		}
		goto done;
	}
	/* the project's own node_modules is never used: the store's is bound over it, or npm makes it anew */
	if ((err = join(nm, sizeof nm, dir, "node_modules")) < 0 || (err = remove_any(nm)) < 0 ||
	    (err = npm_dirs(d->data_dir, (gid_t)d->uid, &j.p)) < 0 || (err = svc_deps_host(d->npm, j.node, j.npm, j.platform)) < 0) {
		snprintf(why, why_max, "the dependencies could not be prepared");
		err = SVC_E_INTERNAL;
		goto done;
	}
	/* npm workspaces and a project's own install scripts need the whole tree, not package.json alone */
	if (d->modules_max_mb == 0 || (d->scripts && (!d->workspace_id || root_scripts(j.pkg, j.pkg_len))) ||
	    uses_workspaces(j.pkg, j.pkg_len)) {
		err = install_in_tree(&j, dir, out, why, why_max);
		goto done;
	}
	if ((err = job_key(&j, j.lock, j.lock_len, key)) < 0)
		goto done;
	/* with a lockfile, the key is known before the install: one install of a key at a time, the others reuse it */
	if (j.lock && (err = svc_deps_store_lease(j.p.modules, j.p.locks, key, out)) == 0 &&
	    (ifd = install_lock(d, j.p.locks, key, log, log_arg)) >= 0)
		err = svc_deps_store_lease(j.p.modules, j.p.locks, key, out);
	if (j.lock && (err != 0 || ifd < 0)) {
		if (err == 0 && ifd == SVC_E_CANCELLED) {
			snprintf(why, why_max, "the build was stopped");
			err = SVC_E_CANCELLED;
		} else if (err < 0 || (err == 0 && ifd < 0)) {
			snprintf(why, why_max, "the dependencies could not be prepared");
			err = err < 0 ? err : SVC_E_INTERNAL;
		}
		if (err == 1) {
			out->reused = 1;
			svc_deps__say(log, log_arg, "$ %s: skipped, node_modules reused (package.json and package-lock.json as "
				"installed before, %.12s)\n", "npm ci", key);
			err = 0;
		}
		goto done;
	}
	err = install_stored(&j, key, out, why, why_max);
done:
	if (ifd >= 0)
		close(ifd);
	free(j.pkg);
	free(j.lock);
	return err;
}

int svc_deps_mounts(const struct svc_deps_lease *l, const char *at, const char *scratch, unsigned uid,
		    char paths[2 * SVC_DEPS_MOUNTS][2300], struct svc_sandbox_mount *out)
{
	size_t i;
	int n = 0;

	if (!l->modules[0])
		return 0;
	if (mkdir_mode(scratch, 0750) < 0 || (geteuid() == 0 && chown(scratch, uid, uid) < 0) ||
	    snprintf(paths[0], 2300, "%s/node_modules", at) >= 2300)
		return SVC_E_INTERNAL;
	out[n++] = (struct svc_sandbox_mount){ l->modules, paths[0], 0, 0 };
	for (i = 0; i < SVC_DEPS_WRITABLE; i++) {
		char *src = paths[1 + 2 * i], *dest = paths[2 + 2 * i];
		if (join(src, 2300, scratch, svc_deps_writable[i]) < 0 || mkdir_mode(src, 0750) < 0 ||
		    (geteuid() == 0 && chown(src, uid, uid) < 0) ||
		    snprintf(dest, 2300, "%s/node_modules/%s", at, svc_deps_writable[i]) >= 2300)
			return SVC_E_INTERNAL;
		out[n++] = (struct svc_sandbox_mount){ src, dest, 1, 0 };
	}
	return n;
}

void svc_deps_release(struct svc_deps_lease *l)
{
	if (l->fd >= 0)
		close(l->fd);
	l->fd = -1;
	if (l->tmp[0])
		remove_any(l->tmp);
	l->tmp[0] = '\0';
}

/* ---- the lockfile of a first install, written into the project ---- */

int svc_deps_lock_writeback(struct svc_db *db, const struct svc_config *cfg, const char *project_id,
			    const char *installed)
{
	char pdir[2048], lockpath[2100], sha[41];
	char *pkg_i = NULL, *lock_i = NULL, *pkg_w = NULL;
	size_t pkg_i_len, lock_i_len, pkg_w_len;
	struct stat st;
	int lock = -1, changed = 0, err;

	if ((err = svc_fsx_read(installed, "package.json", DEPS_PKG_MAX, &pkg_i, &pkg_i_len)) < 0 ||
	    (err = svc_fsx_read(installed, "package-lock.json", DEPS_LOCK_MAX, &lock_i, &lock_i_len)) < 0 ||
	    (err = svc_project_dir(cfg, project_id, pdir, sizeof pdir)) < 0 ||
	    (err = join(lockpath, sizeof lockpath, pdir, "package-lock.json")) < 0) {
		err = SVC_E_INTERNAL;
		goto done;
	}
	if ((lock = svc_project_lock(pdir)) < 0) {
		err = lock;
		goto done;
	}
	err = 0;
	/* changed since the build's copy: the next build installs for what is there now */
	if (lstat(lockpath, &st) == 0 || svc_fsx_read(pdir, "package.json", DEPS_PKG_MAX, &pkg_w, &pkg_w_len) < 0 ||
	    pkg_w_len != pkg_i_len || memcmp(pkg_w, pkg_i, pkg_i_len) != 0)
		goto done;
	if ((err = svc_fsx_write(pdir, "package-lock.json", lock_i, lock_i_len)) < 0 ||
	    (err = svc_repo_commit_all(pdir, "package-lock.json written by the first install", "svc build",
				       "build@svc.invalid", sha, &changed)) < 0) {
		svc_log_error("deps: cannot commit the lockfile of project %s", project_id);
		err = SVC_E_INTERNAL;
		goto done;
	}
	if (changed && db) {
		struct svc_dbv p = svc_dbv_str(project_id);
		svc_db_run(db, STMT_PROJECT_TOUCH, &p, 1, NULL, NULL);
	}
done:
	if (lock >= 0)
		close(lock);
	if (changed) {
		svc_log_info("deps: project %s: package-lock.json committed (%.12s)", project_id, sha);
		svc_internal_notify_files(cfg, db, project_id); /* the live document takes it (svc-wsd) */
	}
	free(pkg_i);
	free(lock_i);
	free(pkg_w);
	return err < 0 ? err : changed;
}

int svc_deps_keep_lock(const struct svc_deps_lease *l, const char *dir)
{
	char keep[2100];
	int err;

	if (snprintf(keep, sizeof keep, "%s.deps", dir) >= (int)sizeof keep)
		return SVC_E_INTERNAL;
	remove_any(keep);
	err = copy_pair(l->installed, keep);
	return err < 0 ? SVC_E_INTERNAL : 0;
}

void svc_deps_build_done(struct svc_db *db, const struct svc_config *cfg, const char *project_id, const char *dir)
{
	char keep[2100];
	struct stat st;

	if (snprintf(keep, sizeof keep, "%s.deps", dir) >= (int)sizeof keep || lstat(keep, &st) < 0)
		return;
	if (svc_deps_lock_writeback(db, cfg, project_id, keep) < 0)
		svc_log_warn("deps: the lockfile of project %s was not written back", project_id);
	remove_any(keep);
}

int svc_deps_sweep(const char *data_dir, unsigned older_secs)
{
	static const char *const areas[] = { "npm/tmp", "npm/modules" };
	time_t now = time(NULL);
	size_t i;
	int n = 0;

	for (i = 0; i < 2; i++) {
		char dir[2100], path[2400];
		struct svc_fsx_dir d;
		const char *name;
		struct stat st;
		int fd, r;

		if (join(dir, sizeof dir, data_dir, areas[i]) < 0 ||
		    (fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
			continue;
		if (svc_fsx_dir_open(fd, &d) < 0) {
			close(fd);
			continue;
		}
		while ((r = svc_fsx_dir_next(&d, &name, &st)) > 0) {
			size_t len = strlen(name);
			int disk = i == 0 && len > 5 && strcmp(name + len - 5, ".disk") == 0, alive;
			/* in tmp/ every entry is an install's; in modules/ only what an eviction renamed away */
			if (!S_ISDIR(st.st_mode) || (i == 1 && strncmp(name, ".gone-", 6) != 0) ||
			    join(path, sizeof path, dir, name) < 0)
				continue;
			/* an install's tmpfs whose owner is gone goes now, everything else once older than any install */
			alive = disk ? svc_sandbox_disk_owner_alive(path) : -1;
			if (alive == 1 || (alive < 0 && now - st.st_mtime < (time_t)older_secs))
				continue;
			if (disk ? svc_sandbox_disk_remove(path) == 0 : remove_any(path) == 0) {
				svc_log_info("deps: removed %s, left by an install that ended without it", path);
				n++;
			}
		}
		svc_fsx_dir_close(&d);
		close(fd);
	}
	return n;
}
