/* fsx.h: path confinement and safe file operations inside one project directory. */
#ifndef SVC_FSX_H
#define SVC_FSX_H

#include <stddef.h>
#include <stdint.h>

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
 * svc_fsx_read(); writing over a directory is SVC_E_VALIDATION.
 */
int svc_fsx_write(const char *root, const char *rel, const char *data, size_t len);

/* Deletes the regular file `rel` under `root`. Errors as svc_fsx_read(). */
int svc_fsx_delete(const char *root, const char *rel);

/*
 * Lists every regular file under `root`, recursively, skipping ".git" and
 * symlinks, sorted by path (byte order). *out is an array of *out_n entries
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
 * "path:line: text" (text cut at 200 bytes), at most `max_matches` lines.
 * Errors: SVC_E_VALIDATION (the pattern does not compile), SVC_E_INTERNAL.
 */
int svc_fsx_search(const char *root, const char *pattern, size_t max_matches, char **out);

/*
 * Copies the directory tree `src` to `dst` (which must not exist; it is
 * created with its parents). Regular files and directories only; symlinks
 * and special files are skipped. On failure `dst` is removed again.
 */
int svc_fsx_copy_tree(const char *src, const char *dst);

/* Removes the tree `path` (no symlink is followed). A missing path is SVC_OK. */
int svc_fsx_remove_tree(const char *path);

/* Guesses a Content-Type from the extension of `path` ("text/html; charset=utf-8", ...; "application/octet-stream" otherwise). */
const char *svc_fsx_content_type(const char *path);

#endif
