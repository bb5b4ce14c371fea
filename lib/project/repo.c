/* repo.c: per-project version history: init, commit everything, log and restore-as-new-commit (libgit2 1.5). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <git2.h>

#include "core/err.h"
#include "core/util.h"
#include "project/repo.h"
#include "core/util.h"

#define REPO_BRANCH "main"

static pthread_once_t global_once = PTHREAD_ONCE_INIT;
static int global_error;

/*
 * Translates the libgit2 error `gerr` of the step `what` to an svc_err, once,
 * and logs libgit2's message (never user secrets: messages name objects and paths).
 */
static int git_fail(int gerr, const char *what)
{
	const git_error *e = git_error_last();

	fprintf(stderr, "repo: %s: %s (%d)\n", what, e && e->message ? e->message : "unknown error", gerr);
	switch (gerr) {
	case GIT_ENOTFOUND:
	case GIT_EAMBIGUOUS:
	case GIT_EINVALIDSPEC:
		return SVC_E_NOT_FOUND;
	default:
		return SVC_E_INTERNAL;
	}
}

static void global_init_once(void)
{
	static const int levels[] = { GIT_CONFIG_LEVEL_GLOBAL, GIT_CONFIG_LEVEL_XDG, GIT_CONFIG_LEVEL_SYSTEM,
				      GIT_CONFIG_LEVEL_PROGRAMDATA };
	size_t i;
	int gerr;

	if ((gerr = git_libgit2_init()) < 0) {
		global_error = git_fail(gerr, "git_libgit2_init");
		return;
	}
	for (i = 0; i < sizeof levels / sizeof levels[0]; i++) {
		if ((gerr = git_libgit2_opts(GIT_OPT_SET_SEARCH_PATH, levels[i], "")) < 0) {
			global_error = git_fail(gerr, "GIT_OPT_SET_SEARCH_PATH");
			return;
		}
	}
	/* a commit that was reported made survives a crash */
	if ((gerr = git_libgit2_opts(GIT_OPT_ENABLE_FSYNC_GITDIR, 1)) < 0)
		global_error = git_fail(gerr, "GIT_OPT_ENABLE_FSYNC_GITDIR");
}

int svc_repo_global_init(void)
{
	if (pthread_once(&global_once, global_init_once) != 0)
		return SVC_E_INTERNAL;
	return global_error ? SVC_E_INTERNAL : SVC_OK;
}

/* Opens the repository of `dir` itself: never one found by walking up from it. */
static int repo_open(git_repository **out, const char *dir)
{
	int gerr;

	if (!dir || !*dir)
		return SVC_E_INTERNAL;
	if ((gerr = git_repository_open_ext(out, dir, GIT_REPOSITORY_OPEN_NO_SEARCH, NULL)) < 0) {
		/* a project without a repository is a broken project, not a missing sha */
		git_fail(gerr, "open");
		return SVC_E_INTERNAL;
	}
	return SVC_OK;
}

static int make_signature(git_signature **out, const char *name, const char *email)
{
	int gerr;

	if (!name || !email)
		return SVC_E_VALIDATION;
	if ((gerr = git_signature_now(out, name, email)) < 0) {
		git_fail(gerr, "signature");
		return SVC_E_VALIDATION; /* empty name, or '<' '>' in it */
	}
	return SVC_OK;
}

/* Stages the whole working tree (additions, changes, deletions) and writes the index's tree into out. */
static int stage_all(git_repository *repo, git_oid *out)
{
	git_index *index = NULL;
	int gerr, error = SVC_OK;

	if ((gerr = git_repository_index(&index, repo)) < 0 ||
	    (gerr = git_index_add_all(index, NULL, GIT_INDEX_ADD_DEFAULT, NULL, NULL)) < 0 ||
	    (gerr = git_index_update_all(index, NULL, NULL, NULL)) < 0 || (gerr = git_index_write(index)) < 0 ||
	    (gerr = git_index_write_tree(out, index)) < 0)
		error = git_fail(gerr, "stage");
	git_index_free(index);
	return error == SVC_E_NOT_FOUND ? SVC_E_INTERNAL : error;
}

/* Loads HEAD's commit into *out, or NULL when the branch has no commit yet. */
static int head_commit(git_repository *repo, git_commit **out)
{
	git_object *obj = NULL;
	int gerr;

	*out = NULL;
	gerr = git_revparse_single(&obj, repo, "HEAD^{commit}");
	if (gerr == GIT_ENOTFOUND || gerr == GIT_EUNBORNBRANCH) {
		git_error_clear();
		return SVC_OK;
	}
	if (gerr < 0) {
		git_fail(gerr, "HEAD");
		return SVC_E_INTERNAL;
	}
	*out = (git_commit *)obj;
	return SVC_OK;
}

/* Commits `tree_id` on HEAD with `parent` (NULL for the first commit), moving the branch. */
static int commit_tree(git_repository *repo, const git_oid *tree_id, git_commit *parent, const char *message,
		       const char *author_name, const char *author_email, char *out_sha)
{
	const git_commit *parents[1];
	git_signature *sig = NULL;
	git_tree *tree = NULL;
	git_oid id;
	int gerr, error;

	if (!message)
		return SVC_E_VALIDATION;
	if ((error = make_signature(&sig, author_name, author_email)) < 0)
		goto done;
	if ((gerr = git_tree_lookup(&tree, repo, tree_id)) < 0) {
		error = SVC_E_INTERNAL;
		git_fail(gerr, "tree");
		goto done;
	}
	parents[0] = parent;
	if ((gerr = git_commit_create(&id, repo, "HEAD", sig, sig, NULL, message, tree, parent ? 1 : 0,
				      parents)) < 0) {
		git_fail(gerr, "commit");
		error = SVC_E_INTERNAL;
		goto done;
	}
	git_oid_tostr(out_sha, GIT_OID_HEXSZ + 1, &id);
done:
	git_tree_free(tree);
	git_signature_free(sig);
	return error;
}

int svc_repo_init(const char *dir, const char *message, const char *author_name, const char *author_email,
		  char *out_sha)
{
	git_repository_init_options opts;
	git_repository *repo = NULL;
	git_oid tree_id;
	char sha[GIT_OID_HEXSZ + 1];
	int gerr, error;

	if ((error = svc_repo_global_init()) < 0)
		return error;
	if (!dir || !*dir)
		return SVC_E_INTERNAL;
	if ((gerr = git_repository_init_options_init(&opts, GIT_REPOSITORY_INIT_OPTIONS_VERSION)) < 0) {
		git_fail(gerr, "init options");
		return SVC_E_INTERNAL;
	}
	opts.flags = GIT_REPOSITORY_INIT_NO_REINIT | GIT_REPOSITORY_INIT_MKPATH;
	opts.initial_head = REPO_BRANCH;
	if ((gerr = git_repository_init_ext(&repo, dir, &opts)) < 0) {
		git_fail(gerr, "init");
		return SVC_E_INTERNAL;
	}
	if ((error = stage_all(repo, &tree_id)) < 0)
		goto done;
	if ((error = commit_tree(repo, &tree_id, NULL, message, author_name, author_email, sha)) < 0)
		goto done;
	memcpy(out_sha, sha, sizeof sha);
done:
	git_repository_free(repo);
	return error;
}

int svc_repo_commit_all(const char *dir, const char *message, const char *author_name, const char *author_email,
			char *out_sha, int *out_changed)
{
	git_repository *repo = NULL;
	git_commit *head = NULL;
	git_oid tree_id;
	char sha[GIT_OID_HEXSZ + 1];
	int error;

	if ((error = svc_repo_global_init()) < 0)
		return error;
	if ((error = repo_open(&repo, dir)) < 0)
		return error;
	if ((error = stage_all(repo, &tree_id)) < 0 || (error = head_commit(repo, &head)) < 0)
		goto done;
	if (head && git_oid_equal(&tree_id, git_commit_tree_id(head))) {
		*out_changed = 0;
		goto done;
	}
	if ((error = commit_tree(repo, &tree_id, head, message, author_name, author_email, sha)) < 0)
		goto done;
	memcpy(out_sha, sha, sizeof sha);
	*out_changed = 1;
done:
	git_commit_free(head);
	git_repository_free(repo);
	return error;
}

static char *dup_trimmed(const char *s)
{
	size_t n = s ? strlen(s) : 0;
	char *d;

	while (n > 0 && (s[n - 1] == '\n' || s[n - 1] == '\r'))
		n--;
	if (!(d = malloc(n + 1)))
		return NULL;
	if (n)
		memcpy(d, s, n);
	d[n] = '\0';
	return d;
}

int svc_repo_log(const char *dir, size_t max, struct svc_repo_commit **out, size_t *out_n)
{
	struct svc_repo_commit *list = NULL;
	git_repository *repo = NULL;
	git_revwalk *walk = NULL;
	size_t n = 0, cap = 0;
	git_oid id;
	int gerr, error;

	if ((error = svc_repo_global_init()) < 0)
		return error;
	if ((error = repo_open(&repo, dir)) < 0)
		return error;
	if ((gerr = git_revwalk_new(&walk, repo)) < 0) {
		error = git_fail(gerr, "revwalk");
		goto done;
	}
	git_revwalk_sorting(walk, GIT_SORT_TOPOLOGICAL | GIT_SORT_TIME);
	gerr = git_revwalk_push_head(walk);
	if (gerr == GIT_ENOTFOUND || gerr == GIT_EUNBORNBRANCH) {
		git_error_clear();
		goto finish; /* no commit yet: an empty history */
	}
	if (gerr < 0) {
		error = git_fail(gerr, "revwalk HEAD");
		goto done;
	}
	while (n < max && (gerr = git_revwalk_next(&id, walk)) == 0) {
		const git_signature *author;
		struct svc_repo_commit *c;
		git_commit *commit = NULL;

		if ((error = SVC_ARRAY_GROW(list, cap, n + 1)) < 0)
			goto done;
		if ((gerr = git_commit_lookup(&commit, repo, &id)) < 0) {
			git_fail(gerr, "log lookup");
			error = SVC_E_INTERNAL;
			goto done;
		}
		c = &list[n];
		memset(c, 0, sizeof *c);
		n++;
		git_oid_tostr(c->sha, sizeof c->sha, &id);
		author = git_commit_author(commit);
		c->message = dup_trimmed(git_commit_message(commit));
		c->author_name = dup_trimmed(author->name);
		c->author_email = dup_trimmed(author->email);
		c->time_ms = (int64_t)author->when.time * 1000;
		git_commit_free(commit);
		if (!c->message || !c->author_name || !c->author_email) {
			error = SVC_E_INTERNAL;
			goto done;
		}
	}
	if (n < max && gerr != GIT_ITEROVER) {
		git_fail(gerr, "revwalk next");
		error = SVC_E_INTERNAL;
		goto done;
	}
finish:
	*out = list;
	*out_n = n;
	list = NULL;
	n = 0;
done:
	svc_repo_log_free(list, n);
	git_revwalk_free(walk);
	git_repository_free(repo);
	return error;
}

void svc_repo_log_free(struct svc_repo_commit *list, size_t n)
{
	size_t i;

	if (!list)
		return;
	for (i = 0; i < n; i++) {
		free(list[i].message);
		free(list[i].author_name);
		free(list[i].author_email);
	}
	free(list);
}

/* Finds the commit named by `sha` (7 to 40 hex digits) that HEAD reaches. */
static int resolve_commit(git_repository *repo, const git_commit *head, const char *sha, git_commit **out)
{
	git_commit *commit = NULL;
	git_oid id;
	size_t len, i;
	int gerr, error = SVC_OK;

	len = sha ? strnlen(sha, GIT_OID_HEXSZ + 1) : 0;
	if (len < 7 || len > GIT_OID_HEXSZ)
		return SVC_E_NOT_FOUND;
	for (i = 0; i < len; i++) {
		char ch = sha[i];
		if (!((ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f') || (ch >= 'A' && ch <= 'F')))
			return SVC_E_NOT_FOUND;
	}
	if ((gerr = git_oid_fromstrn(&id, sha, len)) < 0)
		return git_fail(gerr, "sha") == SVC_E_INTERNAL ? SVC_E_INTERNAL : SVC_E_NOT_FOUND;
	/* a sha of a tree or blob is ENOTFOUND here: the lookup asks for a commit */
	gerr = len == GIT_OID_HEXSZ ? git_commit_lookup(&commit, repo, &id)
				    : git_commit_lookup_prefix(&commit, repo, &id, len);
	if (gerr < 0) {
		error = git_fail(gerr, "lookup");
		if (gerr == GIT_EINVALID)
			error = SVC_E_NOT_FOUND;
		goto done;
	}
	if (!head) {
		error = SVC_E_NOT_FOUND;
		goto done;
	}
	if (!git_oid_equal(git_commit_id(commit), git_commit_id(head))) {
		gerr = git_graph_descendant_of(repo, git_commit_id(head), git_commit_id(commit));
		if (gerr < 0) {
			error = git_fail(gerr, "reachability");
			goto done;
		}
		if (gerr == 0) { /* dangling, or on no branch of ours */
			error = SVC_E_NOT_FOUND;
			goto done;
		}
	}
	*out = commit;
	commit = NULL;
done:
	git_commit_free(commit);
	return error;
}

int svc_repo_checkout_as_new(const char *dir, const char *sha, const char *message, const char *author_name,
			     const char *author_email, char *out_sha)
{
	git_checkout_options opts;
	git_repository *repo = NULL;
	git_commit *head = NULL, *target = NULL;
	git_tree *tree = NULL;
	char new_sha[GIT_OID_HEXSZ + 1];
	int gerr, error;

	if ((error = svc_repo_global_init()) < 0)
		return error;
	if ((error = repo_open(&repo, dir)) < 0)
		return error;
	if ((error = head_commit(repo, &head)) < 0)
		goto done;
	if ((error = resolve_commit(repo, head, sha, &target)) < 0)
		goto done;
	if ((gerr = git_commit_tree(&tree, target)) < 0) {
		git_fail(gerr, "target tree");
		error = SVC_E_INTERNAL;
		goto done;
	}
	/*
	 * FORCE: the working tree becomes exactly the target tree (uncommitted
	 * edits are discarded); REMOVE_UNTRACKED: files the target does not have
	 * go, except ignored ones. libgit2 never checks out into .git. The index
	 * is updated to the target tree too.
	 */
	if ((gerr = git_checkout_options_init(&opts, GIT_CHECKOUT_OPTIONS_VERSION)) < 0) {
		git_fail(gerr, "checkout options");
		error = SVC_E_INTERNAL;
		goto done;
	}
	opts.checkout_strategy = GIT_CHECKOUT_FORCE | GIT_CHECKOUT_REMOVE_UNTRACKED;
	if ((gerr = git_checkout_tree(repo, (const git_object *)tree, &opts)) < 0) {
		git_fail(gerr, "checkout");
		error = SVC_E_INTERNAL;
		goto done;
	}
	if ((error = commit_tree(repo, git_tree_id(tree), head, message, author_name, author_email, new_sha)) < 0)
		goto done;
	memcpy(out_sha, new_sha, sizeof new_sha);
done:
	git_tree_free(tree);
	git_commit_free(target);
	git_commit_free(head);
	git_repository_free(repo);
	return error;
}

/* ---- taking back one commit (issue 29; agent's block) ---- */

/* The paths of the conflicts in `index`, ", "-separated, into a malloc'd *out (at most 20, then "…"). */
static int conflict_paths(git_index *index, char **out)
{
	const git_index_entry *anc, *ours, *theirs;
	git_index_conflict_iterator *it = NULL;
	struct svc_buf b;
	size_t n = 0;
	int gerr;

	svc_buf_init(&b, 64 * 1024);
	if ((gerr = git_index_conflict_iterator_new(&it, index)) < 0) {
		svc_buf_dispose(&b);
		return git_fail(gerr, "conflicts");
	}
	while (git_index_conflict_next(&anc, &ours, &theirs, it) == 0) {
		const git_index_entry *e = ours ? ours : theirs ? theirs : anc;

		if (n++ == 20) {
			svc_buf_adds(&b, ", …");
			break;
		}
		if ((n > 1 && svc_buf_adds(&b, ", ") < 0) || svc_buf_adds(&b, e->path) < 0)
			break;
	}
	git_index_conflict_iterator_free(it);
	*out = strdup(svc_buf_str(&b));
	svc_buf_dispose(&b);
	return *out ? SVC_OK : SVC_E_INTERNAL;
}

int svc_repo_revert(const char *dir, const char *sha, const char *message, const char *author_name,
		    const char *author_email, char *out_sha, char **out_conflicts)
{
	git_checkout_options opts;
	git_repository *repo = NULL;
	git_commit *head = NULL, *target = NULL;
	git_index *index = NULL;
	git_tree *tree = NULL;
	git_oid tree_id;
	char new_sha[GIT_OID_HEXSZ + 1];
	int gerr, error;

	*out_conflicts = NULL;
	if ((error = svc_repo_global_init()) < 0 || (error = repo_open(&repo, dir)) < 0)
		return error;
	if ((error = head_commit(repo, &head)) < 0 || (error = resolve_commit(repo, head, sha, &target)) < 0)
		goto done;
	if (git_commit_parentcount(target) == 0) {
		error = SVC_E_VALIDATION; /* the first version: nothing before it to go back to */
		goto done;
	}
	/* a 3-way merge of the commit's parent into HEAD with the commit as the base: only its own change goes */
	if ((gerr = git_revert_commit(&index, repo, target, head, git_commit_parentcount(target) > 1 ? 1 : 0, NULL)) < 0) {
		error = git_fail(gerr, "revert");
		goto done;
	}
	if (git_index_has_conflicts(index)) {
		if ((error = conflict_paths(index, out_conflicts)) == SVC_OK)
			error = SVC_E_CONFLICT;
		goto done;
	}
	if ((gerr = git_index_write_tree_to(&tree_id, index, repo)) < 0 || (gerr = git_tree_lookup(&tree, repo, &tree_id)) < 0 ||
	    (gerr = git_checkout_options_init(&opts, GIT_CHECKOUT_OPTIONS_VERSION)) < 0) {
		error = git_fail(gerr, "revert tree");
		goto done;
	}
	/* the working tree is HEAD's (the caller committed first): FORCE writes only what the revert changes */
	opts.checkout_strategy = GIT_CHECKOUT_FORCE | GIT_CHECKOUT_REMOVE_UNTRACKED;
	if ((gerr = git_checkout_tree(repo, (const git_object *)tree, &opts)) < 0) {
		error = git_fail(gerr, "revert checkout");
		goto done;
	}
	if ((error = commit_tree(repo, &tree_id, head, message, author_name, author_email, new_sha)) < 0)
		goto done;
	memcpy(out_sha, new_sha, sizeof new_sha);
done:
	git_tree_free(tree);
	git_index_free(index);
	git_commit_free(target);
	git_commit_free(head);
	git_repository_free(repo);
	return error;
}

/* ---- the changes of one commit ---- */

/* As git_fail(), for steps where any failure is ours (the commit has been found already). */
static int git_internal(int gerr, const char *what)
{
	git_fail(gerr, what);
	return SVC_E_INTERNAL;
}

static const char *delta_status(git_delta_t s)
{
	switch (s) {
	case GIT_DELTA_ADDED:
	case GIT_DELTA_COPIED:
		return "added";
	case GIT_DELTA_DELETED:
		return "deleted";
	case GIT_DELTA_RENAMED:
		return "renamed";
	default:
		return "modified";
	}
}

/* Fills `f` from delta `i` of `diff`: paths, status and, within the caps, the patch text. */
static int diff_file(git_diff *diff, size_t i, size_t max_file_bytes, size_t max_total_bytes, size_t *used,
		     struct svc_repo_diff_file *f)
{
	const git_diff_delta *d = git_diff_get_delta(diff, i);
	git_patch *patch = NULL;
	git_buf buf = { 0 };
	size_t size;
	int gerr, error = SVC_OK;

	f->status = delta_status(d->status);
	f->path = strdup(d->status == GIT_DELTA_DELETED ? d->old_file.path : d->new_file.path);
	if (d->status == GIT_DELTA_RENAMED)
		f->old_path = strdup(d->old_file.path);
	if (!f->path || (d->status == GIT_DELTA_RENAMED && !f->old_path))
		return SVC_E_INTERNAL;
	if ((gerr = git_patch_from_diff(&patch, diff, i)) < 0)
		return git_internal(gerr, "patch");
	/* the binary flag is known once the patch has loaded the contents */
	d = patch ? git_patch_get_delta(patch) : d;
	if (!patch || (d->flags & GIT_DIFF_FLAG_BINARY)) {
		f->binary = 1;
		goto done;
	}
	size = git_patch_size(patch, 1, 1, 1);
	if (size > max_file_bytes || size > max_total_bytes - *used) {
		f->truncated = 1;
		goto done;
	}
	if ((gerr = git_patch_to_buf(&buf, patch)) < 0) {
		error = git_internal(gerr, "patch text");
		goto done;
	}
	if (!svc_utf8_valid(buf.ptr ? buf.ptr : "", buf.size)) {
		f->binary = 1; /* text in another encoding: JSON could not carry it as it is */
		goto done;
	}
	if (!(f->diff = strndup(buf.ptr ? buf.ptr : "", buf.size))) {
		error = SVC_E_INTERNAL;
		goto done;
	}
	*used += buf.size;
done:
	git_buf_dispose(&buf);
	git_patch_free(patch);
	return error;
}

int svc_repo_diff(const char *dir, const char *sha, size_t max_files, size_t max_file_bytes,
		  size_t max_total_bytes, struct svc_repo_diff *out)
{
	git_repository *repo = NULL;
	git_commit *head = NULL, *commit = NULL, *parent = NULL;
	git_tree *tree = NULL, *ptree = NULL;
	git_diff *diff = NULL;
	git_diff_find_options find;
	size_t i, n, used = 0;
	int gerr, error;

	memset(out, 0, sizeof *out);
	if ((error = svc_repo_global_init()) < 0 || (error = repo_open(&repo, dir)) < 0)
		return error;
	if ((error = head_commit(repo, &head)) < 0 || (error = resolve_commit(repo, head, sha, &commit)) < 0)
		goto done;
	git_oid_tostr(out->sha, sizeof out->sha, git_commit_id(commit));
	if (git_commit_parentcount(commit) > 0) {
		if ((gerr = git_commit_parent(&parent, commit, 0)) < 0 || (gerr = git_commit_tree(&ptree, parent)) < 0) {
			error = git_internal(gerr, "parent");
			goto done;
		}
		git_oid_tostr(out->parent, sizeof out->parent, git_commit_id(parent));
	}
	if ((gerr = git_commit_tree(&tree, commit)) < 0 || (gerr = git_diff_tree_to_tree(&diff, repo, ptree, tree, NULL)) < 0 ||
	    (gerr = git_diff_find_options_init(&find, GIT_DIFF_FIND_OPTIONS_VERSION)) < 0) {
		error = git_internal(gerr, "diff");
		goto done;
	}
	find.flags = GIT_DIFF_FIND_RENAMES;
	if ((gerr = git_diff_find_similar(diff, &find)) < 0) {
		error = git_internal(gerr, "renames");
		goto done;
	}
	n = git_diff_num_deltas(diff);
	if (n > max_files) {
		n = max_files;
		out->truncated = 1;
	}
	if (n && !(out->files = calloc(n, sizeof *out->files))) {
		error = SVC_E_INTERNAL;
		goto done;
	}
	for (i = 0; i < n; i++) {
		out->nfiles = i + 1;
		if ((error = diff_file(diff, i, max_file_bytes, max_total_bytes, &used, &out->files[i])) < 0)
			goto done;
	}
done:
	git_diff_free(diff);
	git_tree_free(ptree);
	git_tree_free(tree);
	git_commit_free(parent);
	git_commit_free(commit);
	git_commit_free(head);
	git_repository_free(repo);
	return error;
}

void svc_repo_diff_dispose(struct svc_repo_diff *d)
{
	size_t i;

	if (!d)
		return;
	for (i = 0; i < d->nfiles; i++) {
		free(d->files[i].path);
		free(d->files[i].old_path);
		free(d->files[i].diff);
	}
	free(d->files);
	memset(d, 0, sizeof *d);
}
