/* repo.h: a project's version history: one Git repository per project directory (libgit2). */
#ifndef SVC_REPO_H
#define SVC_REPO_H

#include <stddef.h>
#include <stdint.h>

/* One commit, as listed by svc_repo_log(). All strings owned by the list. */
struct svc_repo_commit {
	char sha[41];        /* full hex object id */
	char *message;       /* full message, trailing newline removed */
	char *author_name;
	char *author_email;
	int64_t time_ms;     /* author time, milliseconds since the epoch */
};

/*
 * Calls git_libgit2_init() once per process and points libgit2's global,
 * XDG and system configuration search paths at an empty location, so no
 * ~/.gitconfig or /etc/gitconfig changes behaviour (no excludesfile, autocrlf,
 * user or hooks from outside; libgit2 never runs hooks), and turns on fsync
 * of the Git directory. Thread-safe (pthread_once); every svc_repo_*
 * function calls it first, so calling it at start-up only moves the cost.
 * Returns 0 or SVC_E_INTERNAL.
 */
int svc_repo_global_init(void);

/*
 * Creates a repository in `dir` (which holds the project's files), stages
 * every file and makes the first commit with `message` by the given author.
 * Writes the commit's hex id into out_sha (41 bytes). The branch is "main";
 * files matched by the project's own .gitignore are left out. Errors:
 * SVC_E_VALIDATION (an author name or email that Git cannot hold: empty, or
 * with '<' or '>'), SVC_E_INTERNAL (also when `dir` already has a repository).
 */
int svc_repo_init(const char *dir, const char *message, const char *author_name,
		  const char *author_email, char *out_sha);

/*
 * Stages every change in the working tree of `dir` (new, modified and
 * deleted files; ".git" excluded) and commits it on HEAD with `message`.
 * When nothing changed no commit is made, *out_changed is 0 and out_sha is
 * left alone; otherwise *out_changed is 1 and out_sha (41 bytes) receives
 * the new commit's id. "Changed" means the staged tree differs from HEAD's
 * tree (git_index_add_all + git_index_update_all, then git_index_write_tree).
 * Only `dir` itself is opened, never a repository of a parent directory.
 * Errors: SVC_E_VALIDATION (author, as svc_repo_init()), SVC_E_INTERNAL
 * (including `dir` without a repository).
 */
int svc_repo_commit_all(const char *dir, const char *message, const char *author_name,
			const char *author_email, char *out_sha, int *out_changed);

/*
 * Lists at most `max` commits reachable from HEAD, newest first, into a
 * malloc'd array (*out, *out_n) freed with svc_repo_log_free(); order is
 * topological, then by time, so a linear history comes out exactly newest
 * first. time_ms has Git's one-second precision. Errors: SVC_E_INTERNAL.
 */
int svc_repo_log(const char *dir, size_t max, struct svc_repo_commit **out, size_t *out_n);

/* Frees a list from svc_repo_log(); NULL is allowed. */
void svc_repo_log_free(struct svc_repo_commit *list, size_t n);

/*
 * Restores the tree of commit `sha` (full 40-hex id; also accepts a unique
 * prefix of at least 7 hex digits) into the working tree of `dir` and
 * commits it on top of HEAD with `message`, so no history is lost. Files
 * that did not exist in that commit are removed (GIT_CHECKOUT_FORCE |
 * GIT_CHECKOUT_REMOVE_UNTRACKED); files ignored by the project's .gitignore
 * stay, and .git is never touched. Uncommitted changes in the working tree
 * are discarded: call svc_repo_commit_all() first to keep them. A new commit
 * is made even when the tree equals HEAD's, so every rollback shows in the
 * log. Errors: SVC_E_NOT_FOUND (malformed, ambiguous or unknown sha, a sha of
 * a tree or blob, or a commit HEAD does not reach), SVC_E_VALIDATION
 * (author), SVC_E_INTERNAL. out_sha (41 bytes) receives the new commit's id.
 */
int svc_repo_checkout_as_new(const char *dir, const char *sha, const char *message,
			     const char *author_name, const char *author_email, char *out_sha);

/* One changed file of a commit, as svc_repo_diff() lists it. Strings owned by the diff. */
struct svc_repo_diff_file {
	char *path;          /* path in the commit; for a deletion, the path it had */
	char *old_path;      /* the path before a rename, else NULL */
	const char *status;  /* "added", "modified", "deleted" or "renamed" (static) */
	int binary;          /* 1 for a binary file (or text that is not UTF-8): no text diff */
	char *diff;          /* the unified diff ("diff --git" header, ---/+++ lines, hunks with 3 lines of
			      * context), NUL-terminated; NULL when binary or left out for size */
	int truncated;       /* 1 when the text was left out because it was over a size cap */
};

/* The changes a commit made, from svc_repo_diff(); free with svc_repo_diff_dispose(). */
struct svc_repo_diff {
	char sha[41];                      /* the commit */
	char parent[41];                   /* its first parent, "" for the first commit */
	struct svc_repo_diff_file *files;  /* in libgit2's order (by path) */
	size_t nfiles;
	int truncated;                     /* more than max_files files changed: the rest are not listed */
};

/*
 * Diffs commit `sha` (as svc_repo_checkout_as_new() accepts it: 7 to 40 hex
 * digits, a commit HEAD reaches) against its first parent (the empty tree
 * for the first commit), with renames found, into *out (zeroed first; the
 * caller disposes it, also after an error). At most `max_files` files are
 * listed; a file's text is left out (diff NULL, truncated 1) when it is over
 * `max_file_bytes`, or when it would take the texts of all files over
 * `max_total_bytes`; sizes are known before the text is made, so a huge file
 * costs no memory. Errors: SVC_E_NOT_FOUND (malformed, ambiguous or unknown
 * sha, not a commit, not reachable from HEAD), SVC_E_INTERNAL.
 */
int svc_repo_diff(const char *dir, const char *sha, size_t max_files, size_t max_file_bytes,
		  size_t max_total_bytes, struct svc_repo_diff *out);

/* Frees what svc_repo_diff() put into `d` and zeroes it. */
void svc_repo_diff_dispose(struct svc_repo_diff *d);

/*
 * Takes back commit `sha` (as svc_repo_checkout_as_new() accepts it) alone:
 * a 3-way revert (git_revert_commit(): the commit's parent merged into HEAD
 * with the commit as the base), so later changes to other lines and files
 * stay; the result is checked out into `dir` and committed on HEAD with
 * `message`. Uncommitted changes are discarded: call svc_repo_commit_all()
 * first. Writes the new commit's id into out_sha (41 bytes). When the revert
 * conflicts with a later change nothing changes, SVC_E_CONFLICT is returned
 * and *out_conflicts holds the conflicting paths, ", "-separated (malloc'd,
 * the caller frees it; NULL otherwise). Errors: SVC_E_NOT_FOUND (as
 * svc_repo_checkout_as_new()), SVC_E_VALIDATION (the first commit, which has
 * nothing before it, or the author), SVC_E_CONFLICT, SVC_E_INTERNAL.
 */
int svc_repo_revert(const char *dir, const char *sha, const char *message, const char *author_name,
		    const char *author_email, char *out_sha, char **out_conflicts);

#endif
