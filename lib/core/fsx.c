/* fsx.c: path confinement (openat2 RESOLVE_BENEATH) and atomic, symlink-proof file operations in a project directory. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

#include <linux/openat2.h>
#include <openssl/rand.h>

#include "core/err.h"
#include "core/fsx.h"
#include "core/util.h"

#define FSX_RESOLVE (RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS)
#define FSX_MAX_DEPTH 64                  /* directory nesting followed by list/copy/remove */
#define FSX_SEARCH_FILE_MAX (1024 * 1024) /* files larger than this are not searched */
#define FSX_SEARCH_BINARY_PROBE 8192      /* a NUL in this many leading bytes means binary */
#define FSX_SEARCH_TEXT_MAX 200           /* bytes of a matching line shown */
#define FSX_SEARCH_LIST_MAX 100000        /* files looked at by one search */
#define FSX_SEARCH_LINE_MAX 4096          /* bytes of a line the pattern is matched against */
#define FSX_SEARCH_PATTERN_MAX 512        /* bytes of a pattern */
#define FSX_SEARCH_TIME_MS 3000           /* a search stops after this long */
#define FSX_TMP_PREFIX ".svc-tmp-"
#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0) /* linux/fs.h; stdio.h has it only with _GNU_SOURCE */
#endif

/* ---- path syntax ---- */

int svc_fsx_check_path(const char *rel, char *out)
{
	char norm[SVC_FSX_PATH_MAX + 1];
	size_t len, i, o = 0;

	if (!rel)
		return SVC_E_VALIDATION;
	len = strnlen(rel, SVC_FSX_PATH_MAX + 1);
	if (len == 0 || len > SVC_FSX_PATH_MAX || rel[0] == '/')
		return SVC_E_VALIDATION;
	for (i = 0; i < len;) {
		uint32_t cp;
		size_t n = svc_utf8_decode(rel + i, len - i, &cp);
		if (n == 0 || cp < 0x20 || (cp >= 0x7f && cp <= 0x9f) || cp == '\\')
			return SVC_E_VALIDATION;
		i += n;
	}
	for (i = 0; i < len;) {
		size_t start = i, seg;
		while (i < len && rel[i] != '/')
			i++;
		seg = i - start;
		if (i < len)
			i++; /* the '/' */
		if (seg == 0 || (seg == 1 && rel[start] == '.'))
			continue;
		if (seg == 2 && rel[start] == '.' && rel[start + 1] == '.')
			return SVC_E_VALIDATION;
		if (seg == 4 && strncasecmp(rel + start, ".git", 4) == 0)
			return SVC_E_VALIDATION;
		if (o)
			norm[o++] = '/';
		memcpy(norm + o, rel + start, seg);
		o += seg;
	}
	if (o == 0)
		return SVC_E_VALIDATION;
	norm[o] = '\0';
	memcpy(out, norm, o + 1);
	return SVC_OK;
}

/* ---- descriptors ---- */

/* Translates the errno of a failed open/stat inside the root. */
static int errno_to_err(int e)
{
	switch (e) {
	case ELOOP:        /* a symlink on the way (RESOLVE_NO_SYMLINKS) */
	case EXDEV:        /* would leave the root (RESOLVE_BENEATH) */
	case ENAMETOOLONG:
	case EISDIR:
		return SVC_E_VALIDATION;
	case ENOENT:
	case ENOTDIR:
		return SVC_E_NOT_FOUND;
	case EFBIG:
		return SVC_E_TOO_LARGE;
	default:
		return SVC_E_INTERNAL;
	}
}

static int openat2_beneath(int dirfd, const char *path, int flags)
{
	struct open_how how;

	memset(&how, 0, sizeof how);
	how.flags = (unsigned long long)(flags | O_CLOEXEC);
	how.resolve = FSX_RESOLVE;
	return (int)syscall(SYS_openat2, dirfd, path, &how, sizeof how);
}

static int open_root(const char *root, int *out)
{
	int fd;

	if (!root || root[0] != '/')
		return SVC_E_INTERNAL;
	fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT || errno == ENOTDIR ? SVC_E_NOT_FOUND : SVC_E_INTERNAL;
	*out = fd;
	return SVC_OK;
}

/*
 * Opens the directory that holds the last segment of `norm` (a checked path),
 * walking one segment at a time with openat2 from `rootfd`; with `create`,
 * missing directories are made with mkdirat on the parent's descriptor.
 * *out_dirfd is a descriptor to close; *out_base points into `norm`.
 */
static int open_parent(int rootfd, const char *norm, int create, int *out_dirfd, const char **out_base)
{
	char seg[SVC_FSX_PATH_MAX + 1];
	const char *p = norm, *slash;
	int dirfd, error = SVC_OK;

	dirfd = fcntl(rootfd, F_DUPFD_CLOEXEC, 0);
	if (dirfd < 0)
		return SVC_E_INTERNAL;
	while ((slash = strchr(p, '/')) != NULL) {
		size_t n = (size_t)(slash - p);
		int next;

		memcpy(seg, p, n);
		seg[n] = '\0';
		next = openat2_beneath(dirfd, seg, O_RDONLY | O_DIRECTORY);
		if (next < 0 && errno == ENOENT && create) {
			if (mkdirat(dirfd, seg, SVC_FSX_DIR_MODE) < 0 && errno != EEXIST) {
				error = errno_to_err(errno);
				goto done;
			}
			next = openat2_beneath(dirfd, seg, O_RDONLY | O_DIRECTORY);
		}
		if (next < 0) {
			/* a file where a directory should be: refused when writing */
			error = create && errno == ENOTDIR ? SVC_E_VALIDATION : errno_to_err(errno);
			goto done;
		}
		close(dirfd);
		dirfd = next;
		p = slash + 1;
	}
	*out_dirfd = dirfd;
	*out_base = p;
	dirfd = -1;
done:
	if (dirfd >= 0)
		close(dirfd);
	return error;
}

/* ---- read, write, delete ---- */

int svc_fsx_read(const char *root, const char *rel, size_t max_bytes, char **out, size_t *out_len)
{
	char norm[SVC_FSX_PATH_MAX + 1];
	char *buf = NULL;
	size_t cap = 0, len = 0;
	struct stat st;
	int rootfd = -1, fd = -1, error;

	if ((error = svc_fsx_check_path(rel, norm)) < 0)
		return error;
	if ((error = open_root(root, &rootfd)) < 0)
		return error;
	fd = openat2_beneath(rootfd, norm, O_RDONLY | O_NONBLOCK | O_NOCTTY);
	if (fd < 0) {
		error = errno_to_err(errno);
		goto done;
	}
	if (fstat(fd, &st) < 0) {
		error = SVC_E_INTERNAL;
		goto done;
	}
	if (!S_ISREG(st.st_mode)) {
		error = SVC_E_NOT_FOUND;
		goto done;
	}
	if (max_bytes > SIZE_MAX - 2)
		max_bytes = SIZE_MAX - 2;
	if (st.st_size < 0 || (uint64_t)st.st_size > max_bytes) {
		error = SVC_E_TOO_LARGE;
		goto done;
	}
	/* the file may grow while read: room for its size, one byte more to notice, and the NUL */
	if ((error = SVC_ARRAY_GROW(buf, cap, (size_t)st.st_size + 2)) < 0)
		goto done;
	for (;;) {
		ssize_t n;

		/* grew since fstat: room for one more byte and the NUL (len <= max_bytes < SIZE_MAX - 1 here) */
		if ((error = SVC_ARRAY_GROW(buf, cap, len + 2)) < 0)
			goto done;
		n = read(fd, buf + len, cap - 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			error = SVC_E_INTERNAL;
			goto done;
		}
		if (n == 0)
			break;
		len += (size_t)n;
		if (len > max_bytes) {
			error = SVC_E_TOO_LARGE;
			goto done;
		}
	}
	buf[len] = '\0';
	*out = buf;
	*out_len = len;
	buf = NULL;
done:
	free(buf);
	if (fd >= 0)
		close(fd);
	close(rootfd);
	return error;
}

static int write_all(int fd, const char *data, size_t len)
{
	while (len > 0) {
		ssize_t n = write(fd, data, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return errno == ENOSPC || errno == EDQUOT || errno == EFBIG ? SVC_E_TOO_LARGE
										      : SVC_E_INTERNAL;
		data += n;
		len -= (size_t)n;
	}
	return SVC_OK;
}

/* Writes a fresh temporary name FSX_TMP_PREFIX + 16 hex digits into tmp (32 bytes). */
static int tmp_name(char tmp[32])
{
	unsigned char rnd[8];
	int n;

	if (RAND_bytes(rnd, sizeof rnd) != 1)
		return SVC_E_INTERNAL;
	n = snprintf(tmp, 32, FSX_TMP_PREFIX "%02x%02x%02x%02x%02x%02x%02x%02x", rnd[0], rnd[1], rnd[2],
		     rnd[3], rnd[4], rnd[5], rnd[6], rnd[7]);
	return n > 0 && n < 32 ? SVC_OK : SVC_E_INTERNAL;
}

/*
 * Moves entry `from` of directory fromfd to `to` of directory tofd. With `noreplace` an
 * existing `to` is SVC_E_CONFLICT (renameat2 RENAME_NOREPLACE, atomic: no check-then-act).
 */
static int move_entry(int fromfd, const char *from, int tofd, const char *to, int noreplace)
{
	if (noreplace) {
		if (syscall(SYS_renameat2, fromfd, from, tofd, to, RENAME_NOREPLACE) == 0)
			return SVC_OK;
		return errno == EEXIST ? SVC_E_CONFLICT : errno_to_err(errno);
	}
	return renameat(fromfd, from, tofd, to) == 0 ? SVC_OK : errno_to_err(errno);
}

/* svc_fsx_write (noreplace 0) and svc_fsx_create (noreplace 1). */
static int write_file(const char *root, const char *rel, const char *data, size_t len, int noreplace)
{
	char norm[SVC_FSX_PATH_MAX + 1], tmp[32];
	const char *base;
	struct stat st;
	int rootfd = -1, dirfd = -1, fd = -1, tmp_made = 0, error;

	if ((error = svc_fsx_check_path(rel, norm)) < 0)
		return error;
	if ((error = open_root(root, &rootfd)) < 0)
		return error;
	if ((error = open_parent(rootfd, norm, 1, &dirfd, &base)) < 0)
		goto done;
	if (fstatat(dirfd, base, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		if (!S_ISREG(st.st_mode)) { /* a directory, a symlink, a device: refused */
			error = SVC_E_VALIDATION;
			goto done;
		}
	} else if (errno != ENOENT) {
		error = errno_to_err(errno);
		goto done;
	}
	do {
		if ((error = tmp_name(tmp)) < 0)
			goto done;
		fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, SVC_FSX_FILE_MODE);
	} while (fd < 0 && errno == EEXIST);
	if (fd < 0) {
		error = errno_to_err(errno);
		goto done;
	}
	tmp_made = 1;
	if ((error = write_all(fd, data, len)) < 0)
		goto done;
	if (fsync(fd) < 0 || close(fd) < 0) {
		fd = -1;
		error = SVC_E_INTERNAL;
		goto done;
	}
	fd = -1;
	if ((error = move_entry(dirfd, tmp, dirfd, base, noreplace)) < 0)
		goto done;
	tmp_made = 0;
	(void)fsync(dirfd); /* make the rename durable; the data already is */
done:
	if (fd >= 0)
		close(fd);
	if (tmp_made)
		unlinkat(dirfd, tmp, 0);
	if (dirfd >= 0)
		close(dirfd);
	close(rootfd);
	return error;
}

int svc_fsx_write(const char *root, const char *rel, const char *data, size_t len)
{
	return write_file(root, rel, data, len, 0);
}

int svc_fsx_create(const char *root, const char *rel, const char *data, size_t len)
{
	return write_file(root, rel, data, len, 1);
}

/*
 * Opens the directory holding the existing regular file `norm` (checked) under
 * rootfd into *out_dirfd (the caller closes it) and points *out_base at the
 * file's name in norm. A symlink is SVC_E_VALIDATION, a missing entry or one
 * that is not a regular file SVC_E_NOT_FOUND.
 */
static int open_file_parent(int rootfd, const char *norm, int *out_dirfd, const char **out_base)
{
	struct stat st;
	int error;

	if ((error = open_parent(rootfd, norm, 0, out_dirfd, out_base)) < 0)
		return error;
	if (fstatat(*out_dirfd, *out_base, &st, AT_SYMLINK_NOFOLLOW) < 0)
		error = errno_to_err(errno);
	else if (!S_ISREG(st.st_mode))
		error = S_ISLNK(st.st_mode) ? SVC_E_VALIDATION : SVC_E_NOT_FOUND;
	if (error < 0) {
		close(*out_dirfd);
		*out_dirfd = -1;
	}
	return error;
}

int svc_fsx_rename(const char *root, const char *from, const char *to)
{
	char nfrom[SVC_FSX_PATH_MAX + 1], nto[SVC_FSX_PATH_MAX + 1];
	const char *bfrom, *bto;
	int rootfd = -1, fromfd = -1, tofd = -1, error;

	if ((error = svc_fsx_check_path(from, nfrom)) < 0 || (error = svc_fsx_check_path(to, nto)) < 0)
		return error;
	if ((error = open_root(root, &rootfd)) < 0)
		return error;
	if ((error = open_file_parent(rootfd, nfrom, &fromfd, &bfrom)) < 0 ||
	    (error = open_parent(rootfd, nto, 1, &tofd, &bto)) < 0 ||
	    (error = move_entry(fromfd, bfrom, tofd, bto, 1)) < 0)
		goto done;
	(void)fsync(tofd); /* make both directory changes durable */
	(void)fsync(fromfd);
done:
	if (tofd >= 0)
		close(tofd);
	if (fromfd >= 0)
		close(fromfd);
	close(rootfd);
	return error;
}

int svc_fsx_delete(const char *root, const char *rel)
{
	char norm[SVC_FSX_PATH_MAX + 1];
	const char *base;
	int rootfd = -1, dirfd = -1, error;

	if ((error = svc_fsx_check_path(rel, norm)) < 0)
		return error;
	if ((error = open_root(root, &rootfd)) < 0)
		return error;
	if ((error = open_file_parent(rootfd, norm, &dirfd, &base)) < 0)
		goto done;
	/* flags 0: never removes a directory; a symlink swapped in is removed itself, never its target */
	if (unlinkat(dirfd, base, 0) < 0)
		error = errno_to_err(errno);
done:
	if (dirfd >= 0)
		close(dirfd);
	close(rootfd);
	return error;
}

/* ---- reading directories ---- */

int svc_fsx_dir_open(int dirfd, struct svc_fsx_dir *out)
{
	int fd;

	out->fd = dirfd;
	out->dir = NULL;
	/* fdopendir takes over its descriptor: give it a duplicate, so dirfd stays the caller's */
	if ((fd = fcntl(dirfd, F_DUPFD_CLOEXEC, 0)) < 0)
		return SVC_E_INTERNAL;
	if (!(out->dir = fdopendir(fd))) {
		close(fd);
		return SVC_E_INTERNAL;
	}
	return SVC_OK;
}

int svc_fsx_dir_next(struct svc_fsx_dir *d, const char **out_name, struct stat *out_st)
{
	struct dirent *de;

	while ((errno = 0, de = readdir(d->dir)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (fstatat(d->fd, de->d_name, out_st, AT_SYMLINK_NOFOLLOW) < 0)
			continue; /* vanished meanwhile */
		*out_name = de->d_name;
		return 1;
	}
	return errno != 0 ? SVC_E_INTERNAL : 0;
}

void svc_fsx_dir_close(struct svc_fsx_dir *d)
{
	if (d->dir)
		closedir(d->dir);
	d->dir = NULL;
}

/* ---- list ---- */

struct entry_vec {
	struct svc_fsx_entry *v;
	size_t n, cap, max;
};

static int vec_push(struct entry_vec *vec, const char *path, const struct stat *st)
{
	struct svc_fsx_entry *e;

	if (vec->n == vec->max)
		return SVC_E_TOO_LARGE;
	if (SVC_ARRAY_GROW(vec->v, vec->cap, vec->n + 1) < 0)
		return SVC_E_INTERNAL;
	e = &vec->v[vec->n];
	if (!(e->path = strdup(path)))
		return SVC_E_INTERNAL;
	e->size = (uint64_t)st->st_size;
	e->mtime_ms = (int64_t)st->st_mtim.tv_sec * 1000 + st->st_mtim.tv_nsec / 1000000;
	vec->n++;
	return SVC_OK;
}

/* Adds the regular files under directory fd `dirfd` (relative path `prefix`, "" at the root). */
static int list_dir(int dirfd, const char *prefix, int depth, struct entry_vec *vec)
{
	struct svc_fsx_dir d;
	const char *name;
	struct stat st;
	int r, error;

	if (depth > FSX_MAX_DEPTH)
		return SVC_OK;
	if ((error = svc_fsx_dir_open(dirfd, &d)) < 0)
		return error;
	while ((r = svc_fsx_dir_next(&d, &name, &st)) > 0) {
		char path[SVC_FSX_PATH_MAX + 1], check[SVC_FSX_PATH_MAX + 1];
		int n;

		if (strcasecmp(name, ".git") == 0)
			continue;
		if (strncmp(name, FSX_TMP_PREFIX, strlen(FSX_TMP_PREFIX)) == 0)
			continue; /* a write in progress, or one that crashed */
		n = snprintf(path, sizeof path, "%s%s%s", prefix, *prefix ? "/" : "", name);
		if (n < 0 || (size_t)n >= sizeof path)
			continue; /* too long to be named through this API */
		if (svc_fsx_check_path(path, check) < 0 || strcmp(path, check) != 0)
			continue; /* a name the API would refuse (control character, backslash, ...) */
		if (S_ISDIR(st.st_mode)) {
			int sub = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (sub < 0)
				continue;
			error = list_dir(sub, path, depth + 1, vec);
			close(sub);
			if (error < 0)
				goto done;
		} else if (S_ISREG(st.st_mode)) {
			if ((error = vec_push(vec, path, &st)) < 0)
				goto done;
		}
	}
	error = r;
done:
	svc_fsx_dir_close(&d);
	return error;
}

static int entry_cmp(const void *a, const void *b)
{
	return strcmp(((const struct svc_fsx_entry *)a)->path, ((const struct svc_fsx_entry *)b)->path);
}

int svc_fsx_list(const char *root, size_t max_entries, struct svc_fsx_entry **out, size_t *out_n)
{
	struct entry_vec vec = { NULL, 0, 0, max_entries };
	int rootfd = -1, error;

	if ((error = open_root(root, &rootfd)) < 0)
		return error;
	if ((error = list_dir(rootfd, "", 0, &vec)) < 0)
		goto done;
	if (vec.n)
		qsort(vec.v, vec.n, sizeof *vec.v, entry_cmp);
	*out = vec.v;
	*out_n = vec.n;
	vec.v = NULL;
	vec.n = 0;
done:
	svc_fsx_list_free(vec.v, vec.n);
	close(rootfd);
	return error;
}

void svc_fsx_list_free(struct svc_fsx_entry *list, size_t n)
{
	size_t i;

	if (!list)
		return;
	for (i = 0; i < n; i++)
		free(list[i].path);
	free(list);
}

/* ---- search ---- */

/*
 * Searches one file's text `buf` (NUL at `len`) line by line; stops at
 * max_matches in all, or (returning 1) once `deadline_ms` (svc_mono_ms) passed.
 */
static int search_file(const char *path, char *buf, size_t len, const regex_t *re, size_t max_matches,
		       int64_t deadline_ms, size_t *found, struct svc_buf *t)
{
	size_t probe = len < FSX_SEARCH_BINARY_PROBE ? len : FSX_SEARCH_BINARY_PROBE;
	size_t lineno = 0, pos = 0;
	int error;

	if (memchr(buf, '\0', probe))
		return SVC_OK; /* binary */
	while (pos < len && *found < max_matches) {
		char *line = buf + pos, *nl = memchr(line, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - line) : len - pos;
		char num[24];
		int k;

		pos += n + 1;
		lineno++;
		line[n] = '\0'; /* buf has a NUL at len, so this is in bounds */
		if (n > 0 && line[n - 1] == '\r')
			line[--n] = '\0';
		/* before every line: one line's match (4 KiB at most) is all the search can overshoot */
		if (svc_mono_ms() > deadline_ms)
			return 1;
		/* glibc's matcher is quadratic in the line for some patterns: it sees a line's first 4 KiB */
		if (n > FSX_SEARCH_LINE_MAX) {
			size_t cut = svc_utf8_cut(line, n, FSX_SEARCH_LINE_MAX);
			char c = line[cut];
			int rc;

			line[cut] = '\0';
			rc = regexec(re, line, 0, NULL, 0);
			line[cut] = c;
			if (rc != 0)
				continue;
		} else if (regexec(re, line, 0, NULL, 0) != 0) {
			continue;
		}
		if (n > FSX_SEARCH_TEXT_MAX)
			n = svc_utf8_cut(line, n, FSX_SEARCH_TEXT_MAX);
		k = snprintf(num, sizeof num, ":%zu: ", lineno);
		if (k < 0 || (size_t)k >= sizeof num)
			return SVC_E_INTERNAL;
		if ((error = svc_buf_adds(t, path)) < 0 || (error = svc_buf_add(t, num, (size_t)k)) < 0 ||
		    (error = svc_buf_add(t, line, strnlen(line, n))) < 0 || (error = svc_buf_add(t, "\n", 1)) < 0)
			return error == SVC_E_TOO_LARGE ? SVC_E_INTERNAL : error;
		(*found)++;
	}
	return SVC_OK;
}

/* 1 when `pattern` holds a back-reference (\1 to \9 outside a bracket expression): glibc matches those in exponential time. */
static int has_backref(const char *pattern)
{
	const char *p, *first = NULL; /* first: where a bracket expression's items start */

	for (p = pattern; *p; p++) {
		if (first) {
			/* a ']' first in the list is a member, not the end (POSIX 9.3.5) */
			if (*p == '[' && (p[1] == ':' || p[1] == '.' || p[1] == '=')) {
				const char *end = strstr(p + 2, (char[]){ p[1], ']', 0 });
				if (!end)
					return 0; /* regcomp refuses it */
				p = end + 1;
			} else if (*p == ']' && p != first) {
				first = NULL;
			}
		} else if (*p == '[') {
			first = p[1] == '^' ? p + 2 : p + 1;
		} else if (*p == '\\' && p[1]) {
			if (p[1] >= '1' && p[1] <= '9')
				return 1;
			p++;
		}
	}
	return 0;
}

int svc_fsx_search(const char *root, const char *pattern, size_t max_matches, char **out)
{
	return svc_fsx_search_until(root, pattern, max_matches, svc_mono_ms() + FSX_SEARCH_TIME_MS, out);
}

int svc_fsx_search_until(const char *root, const char *pattern, size_t max_matches, int64_t deadline, char **out)
{
	struct svc_fsx_entry *list = NULL;
	struct svc_buf t;
	size_t n = 0, i, found = 0;
	regex_t re;
	int compiled = 0, error, stopped = 0;

	if (!pattern || strlen(pattern) > FSX_SEARCH_PATTERN_MAX || has_backref(pattern) ||
	    regcomp(&re, pattern, REG_EXTENDED | REG_NEWLINE | REG_NOSUB) != 0)
		return SVC_E_VALIDATION;
	compiled = 1;
	svc_buf_init(&t, SIZE_MAX - 1);
	if ((error = svc_fsx_list(root, FSX_SEARCH_LIST_MAX, &list, &n)) < 0)
		goto done;
	for (i = 0; i < n && found < max_matches; i++) {
		char *buf = NULL;
		size_t len;
		int rerr;

		if (list[i].size > FSX_SEARCH_FILE_MAX)
			continue;
		if (svc_mono_ms() > deadline) {
			stopped = 1;
			break;
		}
		rerr = svc_fsx_read(root, list[i].path, FSX_SEARCH_FILE_MAX, &buf, &len);
		if (rerr == SVC_E_INTERNAL) {
			error = rerr;
			goto done;
		}
		if (rerr < 0)
			continue; /* vanished, grew or replaced by a symlink meanwhile */
		error = search_file(list[i].path, buf, len, &re, max_matches, deadline, &found, &t);
		free(buf);
		if (error < 0)
			goto done;
		if (error == 1) {
			stopped = 1;
			break;
		}
	}
	error = SVC_OK;
	if (stopped && (error = svc_buf_adds(&t, "(the search stopped at its time limit: make the pattern narrower)\n")) < 0)
		goto done;
	if (!(*out = svc_buf_detach(&t, NULL)))
		error = SVC_E_INTERNAL;
done:
	svc_buf_dispose(&t);
	svc_fsx_list_free(list, n);
	if (compiled)
		regfree(&re);
	return error;
}

/* ---- copy and remove trees ---- */

static int copy_file(int sfd, int dfd, const char *name, mode_t mode)
{
	char buf[65536];
	int in, outfd, error = SVC_OK;

	in = openat(sfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (in < 0)
		return errno == ENOENT ? SVC_OK : SVC_E_INTERNAL;
	outfd = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		       (mode & 0750) | SVC_FSX_PRIVATE_FILE_MODE);
	if (outfd < 0) {
		close(in);
		return SVC_E_INTERNAL;
	}
	for (;;) {
		ssize_t n = read(in, buf, sizeof buf);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			error = SVC_E_INTERNAL;
			break;
		}
		if (n == 0)
			break;
		if ((error = write_all(outfd, buf, (size_t)n)) < 0)
			break;
	}
	close(in);
	if (close(outfd) < 0 && error == SVC_OK)
		error = SVC_E_INTERNAL;
	return error;
}

static int copy_dir(int sfd, int dfd, int depth)
{
	struct svc_fsx_dir d;
	const char *name;
	struct stat st;
	int r, error;

	if (depth > FSX_MAX_DEPTH)
		return SVC_E_TOO_LARGE;
	if ((error = svc_fsx_dir_open(sfd, &d)) < 0)
		return error;
	while ((r = svc_fsx_dir_next(&d, &name, &st)) > 0) {
		if (S_ISDIR(st.st_mode)) {
			int s2, d2;
			if (mkdirat(dfd, name, SVC_FSX_DIR_MODE) < 0) {
				error = SVC_E_INTERNAL;
				goto done;
			}
			s2 = openat(sfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			d2 = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (s2 < 0 || d2 < 0)
				error = SVC_E_INTERNAL;
			else
				error = copy_dir(s2, d2, depth + 1);
			if (s2 >= 0)
				close(s2);
			if (d2 >= 0)
				close(d2);
			if (error < 0)
				goto done;
		} else if (S_ISREG(st.st_mode)) {
			if ((error = copy_file(sfd, dfd, name, st.st_mode)) < 0)
				goto done;
		}
	}
	error = r;
done:
	svc_fsx_dir_close(&d);
	return error;
}

/* mkdir -p of every directory above `path` (trusted, absolute). */
static int make_parents(const char *path)
{
	char buf[4096];
	size_t len = strlen(path), i;

	if (len >= sizeof buf)
		return SVC_E_VALIDATION;
	memcpy(buf, path, len + 1);
	for (i = 1; i < len; i++) {
		if (buf[i] != '/')
			continue;
		buf[i] = '\0';
		if (mkdir(buf, SVC_FSX_DIR_MODE) < 0 && errno != EEXIST) {
			buf[i] = '/';
			return SVC_E_INTERNAL;
		}
		buf[i] = '/';
	}
	return SVC_OK;
}

/* One entry's mode and group (set_modes()): `mode` with the set-group-ID bit on a directory when `gid` is given. */
static int set_one(int fd, const struct stat *st, mode_t mode, gid_t gid)
{
	if (gid != (gid_t)-1) {
		if (S_ISDIR(st->st_mode))
			mode |= S_ISGID;
		if (st->st_gid != gid && fchown(fd, (uid_t)-1, gid) < 0)
			return SVC_E_INTERNAL;
	}
	if ((st->st_mode & 07777) != mode && fchmod(fd, mode) < 0)
		return SVC_E_INTERNAL;
	return SVC_OK;
}

/* The tree below the directory open at `dfd` (svc_fsx_set_modes()). */
static int set_modes_below(int dfd, mode_t dir_mode, mode_t file_mode, gid_t gid, int depth)
{
	struct svc_fsx_dir d;
	const char *name;
	struct stat st;
	uid_t me = geteuid();
	int r, fd, error;

	if (depth > FSX_MAX_DEPTH)
		return SVC_E_TOO_LARGE;
	if ((error = svc_fsx_dir_open(dfd, &d)) < 0)
		return error;
	while ((r = svc_fsx_dir_next(&d, &name, &st)) > 0) {
		if (st.st_uid != me && me != 0)
			continue; /* not ours to change (a build user's tree) */
		if (S_ISLNK(st.st_mode)) {
			if (gid != (gid_t)-1 && st.st_gid != gid && fchownat(dfd, name, (uid_t)-1, gid, AT_SYMLINK_NOFOLLOW) < 0)
				error = SVC_E_INTERNAL;
			continue;
		}
		if (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode))
			continue;
		fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | (S_ISDIR(st.st_mode) ? O_DIRECTORY : 0));
		if (fd < 0 || fstat(fd, &st) < 0) {
			if (fd >= 0)
				close(fd);
			if (errno != ENOENT) /* removed meanwhile: nothing to set */
				error = SVC_E_INTERNAL;
			continue;
		}
		if (S_ISDIR(st.st_mode)) {
			int e = set_one(fd, &st, dir_mode, gid);
			int e2 = set_modes_below(fd, dir_mode, file_mode, gid, depth + 1);
			if (e < 0 || e2 < 0)
				error = e2 == SVC_E_TOO_LARGE ? e2 : SVC_E_INTERNAL;
		} else if (set_one(fd, &st, file_mode | (st.st_mode & ((file_mode & 0440) >> 2)), gid) < 0) {
			error = SVC_E_INTERNAL; /* the execute bits kept where file_mode lets read */
		}
		close(fd);
	}
	svc_fsx_dir_close(&d);
	return r < 0 ? r : error;
}

int svc_fsx_set_modes(const char *path, mode_t top_mode, int tree, mode_t dir_mode, mode_t file_mode, gid_t gid)
{
	struct stat st;
	int fd, error;

	if (!path || path[0] != '/')
		return SVC_E_INTERNAL;
	if ((error = make_parents(path)) < 0)
		return error;
	if (mkdir(path, SVC_FSX_DIR_MODE) < 0 && errno != EEXIST)
		return SVC_E_INTERNAL;
	fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return SVC_E_INTERNAL;
	error = fstat(fd, &st) < 0 ? SVC_E_INTERNAL : set_one(fd, &st, top_mode, gid);
	if (error == SVC_OK && tree)
		error = set_modes_below(fd, dir_mode, file_mode, gid, 0);
	close(fd);
	return error;
}

int svc_fsx_copy_tree(const char *src, const char *dst)
{
	struct stat st;
	int sfd = -1, dfd = -1, made = 0, error;

	if (!src || !dst || src[0] != '/' || dst[0] != '/')
		return SVC_E_INTERNAL;
	sfd = open(src, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (sfd < 0)
		return errno == ENOENT || errno == ENOTDIR ? SVC_E_NOT_FOUND : SVC_E_INTERNAL;
	if (lstat(dst, &st) == 0) {
		error = SVC_E_CONFLICT;
		goto done;
	}
	if ((error = make_parents(dst)) < 0)
		goto done;
	if (mkdir(dst, SVC_FSX_DIR_MODE) < 0) {
		error = errno == EEXIST ? SVC_E_CONFLICT : SVC_E_INTERNAL;
		goto done;
	}
	made = 1;
	dfd = open(dst, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0) {
		error = SVC_E_INTERNAL;
		goto done;
	}
	error = copy_dir(sfd, dfd, 0);
done:
	if (dfd >= 0)
		close(dfd);
	close(sfd);
	if (error < 0 && made)
		svc_fsx_remove_tree(dst);
	return error;
}

static int remove_dir_contents(int dirfd, int depth)
{
	struct svc_fsx_dir d;
	const char *name;
	struct stat st;
	int r, error;

	if (depth > FSX_MAX_DEPTH * 4)
		return SVC_E_INTERNAL;
	if ((error = svc_fsx_dir_open(dirfd, &d)) < 0)
		return error;
	while ((r = svc_fsx_dir_next(&d, &name, &st)) > 0) {
		if (S_ISDIR(st.st_mode)) {
			int sub = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (sub < 0) {
				error = SVC_E_INTERNAL;
				goto done;
			}
			error = remove_dir_contents(sub, depth + 1);
			close(sub);
			if (error < 0)
				goto done;
			if (unlinkat(dirfd, name, AT_REMOVEDIR) < 0) {
				error = SVC_E_INTERNAL;
				goto done;
			}
		} else if (unlinkat(dirfd, name, 0) < 0 && errno != ENOENT) {
			error = SVC_E_INTERNAL;
			goto done;
		}
	}
	error = r;
done:
	svc_fsx_dir_close(&d);
	return error;
}

int svc_fsx_remove_tree(const char *path)
{
	struct stat st;
	int fd, error;

	if (!path || !*path)
		return SVC_E_INTERNAL;
	if (lstat(path, &st) < 0)
		return errno == ENOENT ? SVC_OK : SVC_E_INTERNAL;
	if (!S_ISDIR(st.st_mode))
		return unlink(path) < 0 && errno != ENOENT ? SVC_E_INTERNAL : SVC_OK;
	fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return SVC_E_INTERNAL;
	error = remove_dir_contents(fd, 0);
	close(fd);
	if (error < 0)
		return error;
	if (rmdir(path) < 0 && errno != ENOENT)
		return SVC_E_INTERNAL;
	return SVC_OK;
}

/* ---- content types ---- */

static const struct {
	const char *ext;
	const char *type;
} content_types[] = {
	{ "html", "text/html; charset=utf-8" },
	{ "htm", "text/html; charset=utf-8" },
	{ "css", "text/css; charset=utf-8" },
	{ "js", "text/javascript; charset=utf-8" },
	{ "mjs", "text/javascript; charset=utf-8" },
	{ "json", "application/json" },
	{ "map", "application/json" },
	{ "webmanifest", "application/manifest+json" },
	{ "txt", "text/plain; charset=utf-8" },
	{ "md", "text/markdown; charset=utf-8" },
	{ "csv", "text/csv; charset=utf-8" },
	{ "xml", "application/xml" },
	{ "svg", "image/svg+xml" },
	{ "png", "image/png" },
	{ "jpg", "image/jpeg" },
	{ "jpeg", "image/jpeg" },
	{ "gif", "image/gif" },
	{ "webp", "image/webp" },
	{ "avif", "image/avif" },
	{ "ico", "image/x-icon" },
	{ "woff", "font/woff" },
	{ "woff2", "font/woff2" },
	{ "ttf", "font/ttf" },
	{ "otf", "font/otf" },
	{ "wasm", "application/wasm" },
	{ "pdf", "application/pdf" },
	{ "mp4", "video/mp4" },
	{ "webm", "video/webm" },
	{ "mp3", "audio/mpeg" },
	{ "wav", "audio/wav" },
};

const char *svc_fsx_content_type(const char *path)
{
	const char *slash, *dot;
	size_t i;

	if (!path)
		return "application/octet-stream";
	slash = strrchr(path, '/');
	dot = strrchr(slash ? slash + 1 : path, '.');
	if (dot && dot[1]) {
		for (i = 0; i < sizeof content_types / sizeof content_types[0]; i++)
			if (strcasecmp(dot + 1, content_types[i].ext) == 0)
				return content_types[i].type;
	}
	return "application/octet-stream";
}
