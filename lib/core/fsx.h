/* fsx.h: path confinement and safe file operations inside one project directory. */
#ifndef SVC_FSX_H
#define SVC_FSX_H

#include <dirent.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#define SVC_FSX_PATH_MAX 1024 /* longest relative path accepted, in bytes */

/* One regular file of a project tree, as listed by svc_fsx_list(). */
struct svc_fsx_entry {
	char *path;        /* relative path, '/'-separated, owned by the list */
	uint64_t size;     /* bytes */
	int64_t mtime_ms;  /* last modification, milliseconds since the epoch */
};

/*
 * Checks a relative path taken from a request or a model and writes its
 * normalised form ("a//./b" -> "a/b") into `out` (at least
 * SVC_FSX_PATH_MAX + 1 bytes). Refused with SVC_E_VALIDATION: empty, longer
 * than SVC_FSX_PATH_MAX, absolute, containing NUL, a backslash, invalid UTF-8,
 * a control character or a ".." segment, or naming ".git" or anything under
 * it (any segment equal to ".git", case-insensitively). This is the syntactic
 * half; the open functions below also refuse symlink escapes.
 */
int svc_fsx_check_path(const char *rel, char *out);

/*
 * Reads file `rel` under directory `root` (absolute) into a NUL-terminated
 * malloc'd buffer *out of *out_len bytes (caller frees). The path is checked
 * with svc_fsx_check_path() and opened with openat2(RESOLVE_BENEATH |
 * RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS), so no symlink or ".." can
 * leave `root`. Errors: SVC_E_VALIDATION (refused path), SVC_E_NOT_FOUND
 * (missing, or not a regular file), SVC_E_TOO_LARGE (over max_bytes),
 * SVC_E_INTERNAL.
 */
int svc_fsx_read(const char *root, const char *rel, size_t max_bytes, char **out, size_t *out_len);

/*
 * Writes `len` bytes to `rel` under `root`, creating missing parent
 * directories (mode 0755): the data goes to a temporary file in the same
 * directory which is fsync'ed and renamed into place, so readers see the old
 * or the new content, never a part. Same confinement and errors as
 * svc_fsx_read(); writing over a directory or a symlink, or through a file
 * used as a directory ("f/x" when "f" is a file), is SVC_E_VALIDATION.
 * Parent directories are opened and made one segment at a time (openat2,
 * mkdirat) so a symlink swapped in meanwhile cannot redirect the write. The
 * file gets mode 0644 (before umask); the temporary file is removed on any
 * failure. A full disk is SVC_E_TOO_LARGE.
 */
int svc_fsx_write(const char *root, const char *rel, const char *data, size_t len);

/*
 * As svc_fsx_write(), but only when `rel` does not exist yet: the temporary
 * file is renamed into place with RENAME_NOREPLACE (atomic), so an existing
 * file is SVC_E_CONFLICT and nothing is changed (a directory or a symlink
 * there is SVC_E_VALIDATION, as for svc_fsx_write()).
 */
int svc_fsx_create(const char *root, const char *rel, const char *data, size_t len);

/*
 * Moves the regular file `from` to `to`, both under `root` (same checks and
 * confinement as svc_fsx_write(); missing parent directories of `to` are made,
 * mode 0755). Never replaces: an existing `to` is SVC_E_CONFLICT (renameat2
 * RENAME_NOREPLACE, atomic). Errors: SVC_E_VALIDATION (a refused path, `from`
 * a symlink, `to` through a file used as a directory), SVC_E_NOT_FOUND
 * (`from` missing or not a regular file), SVC_E_CONFLICT, SVC_E_INTERNAL.
 * Empty directories left behind by the move stay.
 */
int svc_fsx_rename(const char *root, const char *from, const char *to);

/*
 * Deletes the regular file `rel` under `root`. Errors as svc_fsx_read(): a
 * symlink is refused (SVC_E_VALIDATION), a directory is SVC_E_NOT_FOUND.
 */
int svc_fsx_delete(const char *root, const char *rel);

/*
 * Lists every regular file under `root`, recursively, skipping ".git" and
 * symlinks, sorted by path (byte order). Names that svc_fsx_check_path()
 * would refuse (and writes in progress, ".svc-tmp-*") are left out, so every
 * listed path can be read back with svc_fsx_read(). Directories nested
 * deeper than 64 levels are not descended into. *out is an array of *out_n entries
 * that the caller frees with svc_fsx_list_free(). At most `max_entries`
 * entries (SVC_E_TOO_LARGE beyond). Errors: SVC_E_NOT_FOUND, SVC_E_INTERNAL.
 */
int svc_fsx_list(const char *root, size_t max_entries, struct svc_fsx_entry **out, size_t *out_n);

/* Frees a list returned by svc_fsx_list(); NULL is allowed. */
void svc_fsx_list_free(struct svc_fsx_entry *list, size_t n);

/*
 * Searches the files under `root` (as listed by svc_fsx_list, text files of
 * at most 1 MiB) for the POSIX extended regular expression `pattern` and
 * writes a malloc'd NUL-terminated text into *out, one match per line as
 * "path:line: text" (line numbers from 1; text cut at 200 bytes on a UTF-8
 * boundary, a trailing CR dropped), at most `max_matches` lines, "" when
 * nothing matches. Binary files (a NUL in the first 8 KiB) are skipped; the
 * pattern is compiled with REG_EXTENDED | REG_NEWLINE (regcomp(3)). The work
 * is bounded, since the pattern may come from a model: a pattern has at most
 * 512 bytes and no back-references (\1..\9: exponential in glibc), it is
 * matched against a line's first 4 KiB only (glibc is quadratic in the line
 * for patterns like "(a|aa)*b"), and the search stops after 3 s (looked at
 * before every file and line: it overshoots by at most one line's match),
 * ending the text with the line "(the search stopped at its time limit:
 * make the pattern narrower)". Errors: SVC_E_VALIDATION (too long, a
 * back-reference, or the pattern does not compile), SVC_E_INTERNAL.
 */
int svc_fsx_search(const char *root, const char *pattern, size_t max_matches, char **out);

/*
 * svc_fsx_search() with a deadline of the caller's: the search stops, as
 * above, once the monotonic clock (svc_mono_ms(), milliseconds) is past
 * `deadline_ms`; one already past searches nothing and answers only the
 * line saying it stopped. svc_fsx_search() is this with now + 3 s.
 */
int svc_fsx_search_until(const char *root, const char *pattern, size_t max_matches, int64_t deadline_ms, char **out);

/*
 * Copies the directory tree `src` to `dst` (which must not exist; it is
 * created with its parents). Regular files and directories only; symlinks
 * and special files are skipped; ".git" is copied too, so a copy keeps its
 * history; file modes are kept. On failure `dst` is removed again. Both paths
 * are absolute and trusted (server configuration, not user input). Errors:
 * SVC_E_NOT_FOUND (no `src`), SVC_E_CONFLICT (`dst` exists), SVC_E_TOO_LARGE
 * (nested deeper than 64 levels, or the disk is full), SVC_E_INTERNAL.
 */
int svc_fsx_copy_tree(const char *src, const char *dst);

/*
 * The modes of what svc writes under SVC_DATA_DIR (docs/operations.md "Files
 * and their modes"): directories 0750 and files 0640, so their user and their
 * group read them (the web server's group for the areas it serves, which
 * svc_fsx_set_modes() gives the set-group-ID bit so what is made below
 * inherits it) and no other local account does; areas no other process needs
 * are 0700 and 0600.
 */
#define SVC_FSX_DIR_MODE 0750
#define SVC_FSX_FILE_MODE 0640
#define SVC_FSX_PRIVATE_DIR_MODE 0700
#define SVC_FSX_PRIVATE_FILE_MODE 0600

/*
 * Sets the modes of the directory `path` (absolute, trusted; made, with
 * SVC_FSX_DIR_MODE, when missing; a symlink there is refused): `path` itself
 * gets `top_mode`; with `tree`, every directory below gets `dir_mode` and
 * every regular file `file_mode` plus the execute bits it had for its user
 * and group when file_mode has them, so a script stays runnable (symlinks
 * are not followed; other special files are left). With `gid` other than
 * (gid_t)-1 everything it touches gets that group and every directory the
 * set-group-ID bit (directories made later below inherit both, chmod(2)).
 * Entries owned by another user (a build's, SVC_BUILD_UID) are left as
 * they are. Returns SVC_OK; SVC_E_TOO_LARGE (nested deeper than 64 levels);
 * SVC_E_INTERNAL (a chmod or chown failed, logged by the caller from errno).
 */
int svc_fsx_set_modes(const char *path, mode_t top_mode, int tree, mode_t dir_mode, mode_t file_mode, gid_t gid);

/*
 * Removes the tree `path` (absolute, trusted), working on directory
 * descriptors so no symlink inside it is followed; a symlink at `path` itself
 * is removed, not its target. A missing path is SVC_OK; else SVC_E_INTERNAL.
 */
int svc_fsx_remove_tree(const char *path);

/*
 * A directory read entry by entry: the one directory walk of svc (listing,
 * searching, copying and removing trees, the schema directory of
 * svc-migrate). Entries are described as lstat(2) would (fstatat with
 * AT_SYMLINK_NOFOLLOW: a symlink is a symlink, never its target).
 *
 *	struct svc_fsx_dir d;
 *	const char *name;
 *	struct stat st;
 *	int r;
 *
 *	if ((err = svc_fsx_dir_open(dirfd, &d)) < 0)
 *		return err;
 *	while ((r = svc_fsx_dir_next(&d, &name, &st)) > 0)
 *		... openat(d.fd, name, ...) ...
 *	svc_fsx_dir_close(&d);
 */
struct svc_fsx_dir {
	int fd;   /* the directory being read, for *at() calls on its entries; borrowed, not closed */
	DIR *dir; /* private: the stream, on a duplicate of fd */
};

/*
 * Starts reading the directory open at `dirfd` (which stays the caller's and
 * must stay open until svc_fsx_dir_close()) into *out. Returns 0, or
 * SVC_E_INTERNAL (out of descriptors or memory, or not a directory).
 */
int svc_fsx_dir_open(int dirfd, struct svc_fsx_dir *out);

/*
 * Reads the next entry other than "." and "..", in the order readdir(3) gives,
 * into *out_name (valid until the next call on `d`) and *out_st. Entries that
 * vanish before they can be looked at are skipped. Returns 1 for an entry, 0
 * at the end, SVC_E_INTERNAL when reading the directory fails.
 */
int svc_fsx_dir_next(struct svc_fsx_dir *d, const char **out_name, struct stat *out_st);

/* Ends the reading started by svc_fsx_dir_open(); calling it twice is harmless. */
void svc_fsx_dir_close(struct svc_fsx_dir *d);

/* Guesses a Content-Type from the extension of `path` ("text/html; charset=utf-8", ...; "application/octet-stream" otherwise). */
const char *svc_fsx_content_type(const char *path);

#endif
