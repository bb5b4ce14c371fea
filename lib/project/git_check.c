/* git_check.c: svc's pre-receive check of a push over smart HTTP: main only fast-forwards, no symlink, no path outside the tree or under .git, no file or push over its quota, a valid svc.data.json on main. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <git2.h>

#include "core/err.h"
#include "core/fsx.h"
#include "core/log.h"
#include "core/util.h"
#include "project/app_decl.h"
#include "project/githttp.h"
#include "project/quota.h"
#include "project/repo.h"

#define MAIN_REF "refs/heads/main"
#define CHECK_COMMITS_MAX 100000 /* new commits one push may bring */

/* What a tree walk refuses: the first offence, in `why`. */
struct walk {
	git_odb *odb;
	const struct svc_git_limits *l;
	char *why;
	size_t why_max;
	char commit[12];
	int err;
};

/* Records the first offence, `what` about `path`, with the commit it came in; stops git_tree_walk. */
static int refuse(struct walk *w, int err, const char *path, const char *what)
{
	snprintf(w->why, w->why_max, "svc: %s %s (commit %s)", path, what, w->commit);
	w->err = err;
	return -1;
}

/* One entry of a new commit's tree (git_treewalk_cb): its kind, its path, its size. */
static int walk_entry(const char *root, const git_tree_entry *e, void *arg)
{
	struct walk *w = arg;
	char full[SVC_FSX_PATH_MAX + 2], norm[SVC_FSX_PATH_MAX + 1], what[256];
	const char *name = git_tree_entry_name(e);
	git_filemode_t mode = git_tree_entry_filemode(e);
	int n = snprintf(full, sizeof full, "%s%s", root, name);
	size_t len;
	git_object_t type;

	if (n < 0 || (size_t)n >= sizeof full)
		return refuse(w, SVC_E_VALIDATION, root, "holds a path longer than svc allows");
	if (!*name || strchr(name, '/') || strcmp(name, "..") == 0 || strcmp(name, ".") == 0)
		return refuse(w, SVC_E_VALIDATION, full, "names a path outside the project");
	if (strcasecmp(name, ".git") == 0)
		return refuse(w, SVC_E_VALIDATION, full, "is under .git, which a project may not hold");
	if (svc_fsx_check_path(full, norm) < 0)
		return refuse(w, SVC_E_VALIDATION, full,
			      "is a path svc refuses (outside the tree, under .git, a backslash, control characters or not UTF-8)");
	if (mode == GIT_FILEMODE_LINK)
		return refuse(w, SVC_E_VALIDATION, full, "is a symlink; a project holds no symlinks");
	if (mode == GIT_FILEMODE_COMMIT)
		return refuse(w, SVC_E_VALIDATION, full, "is a submodule; a project holds no submodules");
	if (mode == GIT_FILEMODE_TREE)
		return 0;
	if (git_odb_read_header(&len, &type, w->odb, git_tree_entry_id(e)) < 0) {
		w->err = SVC_E_INTERNAL;
		return -1;
	}
	if (w->l->max_file_bytes && (uint64_t)len > w->l->max_file_bytes) {
		snprintf(what, sizeof what, "is %llu bytes, over the largest file a project may hold (SVC_QUOTA_FILE_BYTES, %llu)",
			 (unsigned long long)len, (unsigned long long)w->l->max_file_bytes);
		return refuse(w, SVC_E_TOO_LARGE, full, what);
	}
	return 0;
}

/* One pushed command on main: no deletion, only a fast-forward. */
static int check_main(git_repository *repo, const git_oid *old, const git_oid *new, char *why, size_t why_max)
{
	if (git_oid_is_zero(new)) {
		snprintf(why, why_max, "svc: main cannot be deleted: it is the project");
		return SVC_E_VALIDATION;
	}
	if (git_oid_is_zero(old) || git_oid_equal(old, new))
		return 0;
	if (git_graph_descendant_of(repo, new, old) != 1) {
		snprintf(why, why_max, "svc: main only moves forward (no force push): pull, merge or rebase "
			 "onto the project's main, then push again");
		return SVC_E_VALIDATION;
	}
	return 0;
}

/* Walks the trees of every commit the push brings (reachable from `tips`, from no existing ref). */
static int check_commits(git_repository *repo, git_odb *odb, const git_oid *tips, size_t ntips,
			 const struct svc_git_limits *l, char *why, size_t why_max)
{
	struct walk w = { odb, l, why, why_max, "", 0 };
	git_revwalk *rw = NULL;
	git_oid oid;
	size_t i, count = 0;
	int err = 0;

	if (git_revwalk_new(&rw, repo) < 0)
		return SVC_E_INTERNAL;
	for (i = 0; i < ntips && !err; i++)
		if (git_revwalk_push(rw, &tips[i]) < 0)
			err = SVC_E_INTERNAL;
	if (!err && git_revwalk_hide_glob(rw, "refs/*") < 0)
		err = SVC_E_INTERNAL; /* what the repository already has was checked when it came */
	while (!err && git_revwalk_next(&oid, rw) == 0) {
		git_commit *c = NULL;
		git_tree *t = NULL;

		if (++count > CHECK_COMMITS_MAX) {
			snprintf(why, why_max, "svc: a push may bring at most %d commits", CHECK_COMMITS_MAX);
			err = SVC_E_TOO_LARGE;
			break;
		}
		git_oid_tostr(w.commit, sizeof w.commit, &oid);
		if (git_commit_lookup(&c, repo, &oid) < 0 || git_commit_tree(&t, c) < 0)
			err = SVC_E_INTERNAL;
		else if (git_tree_walk(t, GIT_TREEWALK_PRE, walk_entry, &w) != 0)
			err = w.err ? w.err : SVC_E_INTERNAL;
		git_tree_free(t);
		git_commit_free(c);
	}
	git_revwalk_free(rw);
	return err;
}

/* Parses "<old> <new> <ref>" lines; main's command is checked at once, the new tips are kept. */
static int check_commands(git_repository *repo, const char *input, size_t len, git_oid **out_tips, size_t *out_n,
			  git_oid *out_main, char *why, size_t why_max)
{
	git_oid *tips = NULL;
	size_t n = 0, cap = 0, off = 0;
	int err = 0;

	while (off < len && !err) {
		const char *line = input + off, *nl = memchr(line, '\n', len - off);
		size_t ll = nl ? (size_t)(nl - line) : len - off;
		char old_hex[41], new_hex[41], ref[1024];
		git_oid old, new;

		off += ll + 1;
		if (ll < 83 || ll - 82 >= sizeof ref || line[40] != ' ' || line[81] != ' ') {
			err = SVC_E_VALIDATION;
			snprintf(why, why_max, "svc: the push's commands could not be read");
			break;
		}
		memcpy(old_hex, line, 40);
		memcpy(new_hex, line + 41, 40);
		old_hex[40] = new_hex[40] = '\0';
		memcpy(ref, line + 82, ll - 82);
		ref[ll - 82] = '\0';
		if (git_oid_fromstr(&old, old_hex) < 0 || git_oid_fromstr(&new, new_hex) < 0) {
			err = SVC_E_VALIDATION;
			snprintf(why, why_max, "svc: the push's commands could not be read");
			break;
		}
		if (strcmp(ref, MAIN_REF) == 0 && (err = check_main(repo, &old, &new, why, why_max)) < 0)
			break;
		if (strcmp(ref, MAIN_REF) == 0)
			*out_main = new;
		if (git_oid_is_zero(&new))
			continue;
		if ((err = SVC_ARRAY_GROW(tips, cap, n + 1)) < 0)
			break;
		tips[n++] = new;
	}
	if (err < 0) {
		free(tips);
		return err;
	}
	*out_tips = tips;
	*out_n = n;
	return 0;
}

/*
 * The svc.data.json that main's new tip `tip` holds at its root, when it has
 * one, must be a valid declaration of the apps' backend (docs/app-backend.md),
 * as a save or a turn must: the push is refused with the parser's message
 * (which names the line), and the last valid one stays in force. Other
 * branches are not the project and are not checked. Runs after the size
 * check, so the blob is at most SVC_QUOTA_FILE_BYTES.
 */
static int check_decl(git_repository *repo, const git_oid *tip, char *why, size_t why_max)
{
	git_commit *c = NULL;
	git_tree *t = NULL;
	git_blob *b = NULL;
	const git_tree_entry *e;
	char msg[512];
	int err = 0;

	if (git_commit_lookup(&c, repo, tip) < 0 || git_commit_tree(&t, c) < 0)
		err = SVC_E_INTERNAL;
	else if ((e = git_tree_entry_byname(t, SVC_APP_DECL_FILE)) && git_tree_entry_type(e) == GIT_OBJECT_BLOB) {
		if (git_blob_lookup(&b, repo, git_tree_entry_id(e)) < 0)
			err = SVC_E_INTERNAL;
		else if (svc_app_decl_guard(SVC_APP_DECL_FILE, git_blob_rawcontent(b), (size_t)git_blob_rawsize(b), msg,
					    sizeof msg) < 0) {
			snprintf(why, why_max, "svc: %s", msg);
			err = SVC_E_VALIDATION;
		}
	}
	git_blob_free(b);
	git_tree_free(t);
	git_commit_free(c);
	return err;
}

int svc_git_prereceive(const char *git_dir, const char *input, size_t len, const struct svc_git_limits *l,
		       char *why, size_t why_max)
{
	git_repository *repo = NULL;
	git_odb *odb = NULL;
	git_oid *tips = NULL, main_tip;
	size_t ntips = 0;
	uint64_t pushed = 0;
	int err;

	why[0] = '\0';
	if ((err = svc_repo_global_init()) < 0)
		return err;
	if (git_repository_open_ext(&repo, git_dir, GIT_REPOSITORY_OPEN_NO_SEARCH, NULL) < 0 ||
	    git_repository_odb(&odb, repo) < 0) {
		err = SVC_E_INTERNAL;
		goto done;
	}
	/* the pushed objects wait in the quarantine until every hook said yes (git-receive-pack(1)) */
	if (l->quarantine && *l->quarantine) {
		if (git_odb_add_disk_alternate(odb, l->quarantine) < 0) {
			err = SVC_E_INTERNAL;
			goto done;
		}
		if (svc_quota_dir_bytes(l->quarantine, &pushed) == 0 && pushed > l->room_bytes) {
			snprintf(why, why_max, "svc: the push brings %llu bytes, more than the %llu the project's quota "
				 "(SVC_QUOTA_REPO_BYTES, SVC_QUOTA_WORKSPACE_BYTES) leaves", (unsigned long long)pushed,
				 (unsigned long long)l->room_bytes);
			err = SVC_E_TOO_LARGE;
			goto done;
		}
	}
	memset(&main_tip, 0, sizeof main_tip);
	if ((err = check_commands(repo, input, len, &tips, &ntips, &main_tip, why, why_max)) < 0)
		goto done;
	err = check_commits(repo, odb, tips, ntips, l, why, why_max);
	if (err == 0 && !git_oid_is_zero(&main_tip))
		err = check_decl(repo, &main_tip, why, why_max);
done:
	if (err == SVC_E_INTERNAL) {
		const git_error *e = git_error_last();
		svc_log_error("pre-receive: %s", e && e->message ? e->message : "libgit2 failed");
		if (!why[0])
			snprintf(why, why_max, "svc: the push could not be checked; try again");
	}
	free(tips);
	git_odb_free(odb);
	git_repository_free(repo);
	return err;
}
