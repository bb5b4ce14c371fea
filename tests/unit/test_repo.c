/* test_repo.c: CUnit suite "repo": init, commit_all, log, checkout_as_new and diff on real repositories, hostile HOME. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <git2.h>

#include "core/err.h"
#include "core/fsx.h"
#include "project/repo.h"
#include "unit.h"

#define HOSTILE_ENV "SVC_REPO_TEST_HOSTILE_HOME"

static const char *const NAME = "Ada Lovelace";
static const char *const EMAIL = "ada@example.com";

/* A fresh project directory under /tmp: base/p. */
struct project {
	char base[64];
	char dir[96];
};

static void project_open(struct project *p)
{
	char tmpl[] = "/tmp/svc-repo-XXXXXX";

	CU_ASSERT_FATAL(mkdtemp(tmpl) != NULL);
	snprintf(p->base, sizeof p->base, "%s", tmpl);
	snprintf(p->dir, sizeof p->dir, "%s/p", tmpl);
	CU_ASSERT_FATAL(mkdir(p->dir, 0755) == 0);
}

static void project_close(struct project *p)
{
	CU_ASSERT(svc_fsx_remove_tree(p->base) == SVC_OK);
}

static void put(const struct project *p, const char *rel, const char *text)
{
	CU_ASSERT_FATAL(svc_fsx_write(p->dir, rel, text, strlen(text)) == SVC_OK);
}

/* Returns 1 when the working file `rel` holds exactly `text`. */
static int holds(const struct project *p, const char *rel, const char *text)
{
	char *buf = NULL;
	size_t len;
	int ok;

	if (svc_fsx_read(p->dir, rel, 1 << 20, &buf, &len) < 0)
		return 0;
	ok = len == strlen(text) && memcmp(buf, text, len) == 0;
	free(buf);
	return ok;
}

static int exists(const struct project *p, const char *rel)
{
	char path[512];
	struct stat st;

	snprintf(path, sizeof path, "%s/%s", p->dir, rel);
	return lstat(path, &st) == 0;
}

static int is_hex40(const char *s)
{
	size_t i;

	for (i = 0; i < 40; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return s[40] == '\0';
}

/*
 * What commit `sha` stores at `path`: 1 and the blob equals `text` (or text is
 * NULL and the path exists), 0 when the path is absent, -1 on a mismatch or error.
 * Reads the object database directly, independently of the working tree.
 */
static int commit_has(const struct project *p, const char *sha, const char *path, const char *text)
{
	git_repository *repo = NULL;
	git_commit *commit = NULL;
	git_tree *tree = NULL;
	git_tree_entry *entry = NULL;
	git_blob *blob = NULL;
	git_oid id;
	int r = -1, gerr;

	if (svc_repo_global_init() < 0 || git_repository_open(&repo, p->dir) < 0)
		return -1;
	if (git_oid_fromstr(&id, sha) < 0 || git_commit_lookup(&commit, repo, &id) < 0 ||
	    git_commit_tree(&tree, commit) < 0)
		goto done;
	gerr = git_tree_entry_bypath(&entry, tree, path);
	if (gerr == GIT_ENOTFOUND) {
		r = 0;
		goto done;
	}
	if (gerr < 0)
		goto done;
	if (!text) {
		r = 1;
		goto done;
	}
	if (git_blob_lookup(&blob, repo, git_tree_entry_id(entry)) < 0)
		goto done;
	if ((size_t)git_blob_rawsize(blob) == strlen(text) && memcmp(git_blob_rawcontent(blob), text, strlen(text)) == 0)
		r = 1;
done:
	git_blob_free(blob);
	git_tree_entry_free(entry);
	git_tree_free(tree);
	git_commit_free(commit);
	git_repository_free(repo);
	return r;
}

/* Number of commits reachable from HEAD (up to 1000), or -1. */
static int log_len(const struct project *p)
{
	struct svc_repo_commit *list = NULL;
	size_t n = 0;

	if (svc_repo_log(p->dir, 1000, &list, &n) < 0)
		return -1;
	svc_repo_log_free(list, n);
	return (int)n;
}

static void test_repo_init_makes_one_commit(void)
{
	struct svc_repo_commit *list = NULL;
	struct project p;
	char sha[41], head[160] = "";
	size_t n = 0;
	FILE *f;

	project_open(&p);
	put(&p, "index.html", "<h1>hi</h1>\n");
	put(&p, "css/style.css", "h1{}\n");
	CU_ASSERT_FATAL(svc_repo_init(p.dir, "Create project", NAME, EMAIL, sha) == SVC_OK);
	CU_ASSERT(is_hex40(sha));
	CU_ASSERT(commit_has(&p, sha, "index.html", "<h1>hi</h1>\n") == 1);
	CU_ASSERT(commit_has(&p, sha, "css/style.css", "h1{}\n") == 1);
	CU_ASSERT_FATAL(svc_repo_log(p.dir, 10, &list, &n) == SVC_OK);
	CU_ASSERT_FATAL(n == 1);
	CU_ASSERT_STRING_EQUAL(list[0].sha, sha);
	CU_ASSERT_STRING_EQUAL(list[0].message, "Create project");
	CU_ASSERT_STRING_EQUAL(list[0].author_name, NAME);
	CU_ASSERT_STRING_EQUAL(list[0].author_email, EMAIL);
	CU_ASSERT(llabs((long long)(list[0].time_ms / 1000 - (int64_t)time(NULL))) < 60);
	svc_repo_log_free(list, n);

	/* the branch is main, whatever the defaults */
	snprintf(head, sizeof head, "%s/.git/HEAD", p.dir);
	f = fopen(head, "r");
	CU_ASSERT_FATAL(f != NULL);
	CU_ASSERT(fgets(head, sizeof head, f) != NULL);
	fclose(f);
	CU_ASSERT_STRING_EQUAL(head, "ref: refs/heads/main\n");

	/* a second init of the same directory is refused */
	CU_ASSERT(svc_repo_init(p.dir, "again", NAME, EMAIL, sha) == SVC_E_INTERNAL);
	CU_ASSERT(log_len(&p) == 1);
	project_close(&p);
}

static void test_repo_commit_all_nothing_changed(void)
{
	struct project p;
	char sha[41], out[41] = "untouched";
	int changed = -1;

	project_open(&p);
	put(&p, "a.txt", "a\n");
	CU_ASSERT_FATAL(svc_repo_init(p.dir, "init", NAME, EMAIL, sha) == SVC_OK);
	CU_ASSERT(svc_repo_commit_all(p.dir, "nothing", NAME, EMAIL, out, &changed) == SVC_OK);
	CU_ASSERT(changed == 0);
	CU_ASSERT_STRING_EQUAL(out, "untouched");
	/* rewriting the same bytes is no change either */
	put(&p, "a.txt", "a\n");
	changed = -1;
	CU_ASSERT(svc_repo_commit_all(p.dir, "same", NAME, EMAIL, out, &changed) == SVC_OK);
	CU_ASSERT(changed == 0);
	CU_ASSERT(log_len(&p) == 1);
	project_close(&p);
}

static void test_repo_commit_all_modify_add_delete(void)
{
	struct project p;
	char first[41], second[41], third[41];
	int changed = -1;

	project_open(&p);
	put(&p, "a.txt", "hello");
	put(&p, "gone.txt", "bye\n");
	CU_ASSERT_FATAL(svc_repo_init(p.dir, "init", NAME, EMAIL, first) == SVC_OK);

	put(&p, "a.txt", "hello, world");
	put(&p, "new/dir/b.txt", "new\n");
	CU_ASSERT(svc_fsx_delete(p.dir, "gone.txt") == SVC_OK);
	CU_ASSERT_FATAL(svc_repo_commit_all(p.dir, "edit", NAME, EMAIL, second, &changed) == SVC_OK);
	CU_ASSERT(changed == 1);
	CU_ASSERT(is_hex40(second) && strcmp(first, second) != 0);
	CU_ASSERT(commit_has(&p, second, "a.txt", "hello, world") == 1);
	CU_ASSERT(commit_has(&p, second, "new/dir/b.txt", "new\n") == 1);
	CU_ASSERT(commit_has(&p, second, "gone.txt", NULL) == 0);
	CU_ASSERT(commit_has(&p, first, "gone.txt", "bye\n") == 1); /* the old commit is intact */
	CU_ASSERT(log_len(&p) == 2);

	/* a same-size change right after the commit (racy stat data) is still seen */
	put(&p, "a.txt", "HELLO, WORLD");
	changed = -1;
	CU_ASSERT_FATAL(svc_repo_commit_all(p.dir, "caps", NAME, EMAIL, third, &changed) == SVC_OK);
	CU_ASSERT(changed == 1);
	CU_ASSERT(commit_has(&p, third, "a.txt", "HELLO, WORLD") == 1);
	CU_ASSERT(log_len(&p) == 3);
	project_close(&p);
}

static void test_repo_log_newest_first(void)
{
	struct svc_repo_commit *list = NULL;
	struct project p;
	char s1[41], s2[41], s3[41];
	size_t n = 0;
	int changed;

	project_open(&p);
	put(&p, "f", "1");
	CU_ASSERT_FATAL(svc_repo_init(p.dir, "one\n", NAME, EMAIL, s1) == SVC_OK);
	put(&p, "f", "2");
	CU_ASSERT_FATAL(svc_repo_commit_all(p.dir, "two", "Grace Hopper", "grace@example.org", s2, &changed) ==
			SVC_OK);
	put(&p, "f", "3");
	CU_ASSERT_FATAL(svc_repo_commit_all(p.dir, "three\n\nwith a body\n", "Svc Agent", "agent@svc.invalid", s3,
					    &changed) == SVC_OK);

	CU_ASSERT_FATAL(svc_repo_log(p.dir, 10, &list, &n) == SVC_OK);
	CU_ASSERT_FATAL(n == 3);
	CU_ASSERT_STRING_EQUAL(list[0].sha, s3);
	CU_ASSERT_STRING_EQUAL(list[1].sha, s2);
	CU_ASSERT_STRING_EQUAL(list[2].sha, s1);
	CU_ASSERT_STRING_EQUAL(list[0].message, "three\n\nwith a body");
	CU_ASSERT_STRING_EQUAL(list[1].message, "two");
	CU_ASSERT_STRING_EQUAL(list[2].message, "one");
	CU_ASSERT_STRING_EQUAL(list[0].author_name, "Svc Agent");
	CU_ASSERT_STRING_EQUAL(list[1].author_email, "grace@example.org");
	CU_ASSERT_STRING_EQUAL(list[2].author_name, NAME);
	CU_ASSERT(list[0].time_ms >= list[2].time_ms);
	svc_repo_log_free(list, n);

	list = NULL;
	CU_ASSERT_FATAL(svc_repo_log(p.dir, 2, &list, &n) == SVC_OK);
	CU_ASSERT(n == 2);
	CU_ASSERT(n == 2 && strcmp(list[1].sha, s2) == 0);
	svc_repo_log_free(list, n);
	svc_repo_log_free(NULL, 0);
	project_close(&p);
}

static void test_repo_checkout_as_new_restores(void)
{
	struct svc_repo_commit *list = NULL;
	struct project p;
	char v1[41], v2[41], back[41], again[41], prefix[8];
	size_t n = 0, i;
	int changed, seen1 = 0, seen2 = 0;

	project_open(&p);
	put(&p, "a.txt", "one\n");
	put(&p, "keep.txt", "kept\n");
	CU_ASSERT_FATAL(svc_repo_init(p.dir, "v1", NAME, EMAIL, v1) == SVC_OK);
	put(&p, "a.txt", "two\n");
	put(&p, "later.txt", "added later\n");
	put(&p, "sub/dir/x.js", "x\n");
	CU_ASSERT(svc_fsx_delete(p.dir, "keep.txt") == SVC_OK);
	CU_ASSERT_FATAL(svc_repo_commit_all(p.dir, "v2", NAME, EMAIL, v2, &changed) == SVC_OK);
	put(&p, "scratch.txt", "never committed\n");

	CU_ASSERT_FATAL(svc_repo_checkout_as_new(p.dir, v1, "Restore v1", NAME, EMAIL, back) == SVC_OK);
	CU_ASSERT(is_hex40(back));
	CU_ASSERT(strcmp(back, v1) != 0 && strcmp(back, v2) != 0);
	CU_ASSERT(holds(&p, "a.txt", "one\n"));
	CU_ASSERT(holds(&p, "keep.txt", "kept\n"));
	CU_ASSERT(!exists(&p, "later.txt"));
	CU_ASSERT(!exists(&p, "sub/dir/x.js"));
	CU_ASSERT(!exists(&p, "scratch.txt"));
	CU_ASSERT(exists(&p, ".git/HEAD"));
	CU_ASSERT(commit_has(&p, back, "a.txt", "one\n") == 1);
	CU_ASSERT(commit_has(&p, back, "later.txt", NULL) == 0);

	/* history grew and still holds everything, newest first */
	CU_ASSERT_FATAL(svc_repo_log(p.dir, 100, &list, &n) == SVC_OK);
	CU_ASSERT_FATAL(n == 3);
	CU_ASSERT_STRING_EQUAL(list[0].sha, back);
	CU_ASSERT_STRING_EQUAL(list[0].message, "Restore v1");
	for (i = 0; i < n; i++) {
		seen1 |= strcmp(list[i].sha, v1) == 0;
		seen2 |= strcmp(list[i].sha, v2) == 0;
	}
	CU_ASSERT(seen1 && seen2);
	svc_repo_log_free(list, n);
	CU_ASSERT(commit_has(&p, v2, "later.txt", "added later\n") == 1);

	/* the working tree matches the new commit: nothing left to commit */
	changed = -1;
	CU_ASSERT(svc_repo_commit_all(p.dir, "noop", NAME, EMAIL, again, &changed) == SVC_OK);
	CU_ASSERT(changed == 0);

	/* forward again with a 7-digit upper-case prefix */
	memcpy(prefix, v2, 7);
	prefix[7] = '\0';
	for (i = 0; i < 7; i++)
		if (prefix[i] >= 'a' && prefix[i] <= 'f')
			prefix[i] = (char)(prefix[i] - 'a' + 'A');
	CU_ASSERT_FATAL(svc_repo_checkout_as_new(p.dir, prefix, "Forward to v2", NAME, EMAIL, again) == SVC_OK);
	CU_ASSERT(holds(&p, "a.txt", "two\n"));
	CU_ASSERT(holds(&p, "sub/dir/x.js", "x\n"));
	CU_ASSERT(!exists(&p, "keep.txt"));
	CU_ASSERT(log_len(&p) == 4);
	project_close(&p);
}

/* Makes a commit object that no branch reaches and a tree id, through libgit2 directly. */
static void make_dangling(const struct project *p, char *out_commit, char *out_tree)
{
	git_repository *repo = NULL;
	git_signature *sig = NULL;
	git_index *index = NULL;
	git_tree *tree = NULL;
	git_oid tree_id, id;

	CU_ASSERT_FATAL(svc_repo_global_init() == SVC_OK);
	CU_ASSERT_FATAL(git_repository_open(&repo, p->dir) == 0);
	CU_ASSERT_FATAL(git_repository_index(&index, repo) == 0);
	CU_ASSERT_FATAL(git_index_write_tree(&tree_id, index) == 0);
	CU_ASSERT_FATAL(git_tree_lookup(&tree, repo, &tree_id) == 0);
	CU_ASSERT_FATAL(git_signature_now(&sig, "x", "x@example.com") == 0);
	CU_ASSERT_FATAL(git_commit_create(&id, repo, NULL, sig, sig, NULL, "dangling", tree, 0, NULL) == 0);
	git_oid_tostr(out_commit, 41, &id);
	git_oid_tostr(out_tree, 41, &tree_id);
	git_signature_free(sig);
	git_tree_free(tree);
	git_index_free(index);
	git_repository_free(repo);
}

static void test_repo_checkout_unknown_sha(void)
{
	struct project p;
	char v1[41], out[41] = "untouched", dangling[41], tree[41], upper40[41];
	const char *bad[] = { "0000000000000000000000000000000000000000",
			      "zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz",
			      "garbage",
			      "HEAD",
			      "main",
			      "HEAD~1",
			      "",
			      NULL,
			      NULL,
			      NULL,
			      NULL };
	char short6[7], long41[42], spaced[42];
	size_t i;

	project_open(&p);
	put(&p, "a.txt", "one\n");
	CU_ASSERT_FATAL(svc_repo_init(p.dir, "v1", NAME, EMAIL, v1) == SVC_OK);
	make_dangling(&p, dangling, tree);
	memcpy(short6, v1, 6);
	short6[6] = '\0';
	snprintf(long41, sizeof long41, "%s0", v1);
	snprintf(spaced, sizeof spaced, " %.40s", v1);
	bad[7] = short6;
	bad[8] = long41;
	bad[9] = tree;     /* an object, but a tree */
	bad[10] = dangling; /* a commit, but not in the history */
	for (i = 0; i < sizeof bad / sizeof bad[0]; i++)
		CU_ASSERT(svc_repo_checkout_as_new(p.dir, bad[i], "x", NAME, EMAIL, out) == SVC_E_NOT_FOUND);
	CU_ASSERT(svc_repo_checkout_as_new(p.dir, NULL, "x", NAME, EMAIL, out) == SVC_E_NOT_FOUND);
	CU_ASSERT(svc_repo_checkout_as_new(p.dir, spaced, "x", NAME, EMAIL, out) == SVC_E_NOT_FOUND);
	CU_ASSERT_STRING_EQUAL(out, "untouched");
	CU_ASSERT(log_len(&p) == 1);
	CU_ASSERT(holds(&p, "a.txt", "one\n"));

	/* the full sha in upper case is the same commit */
	for (i = 0; i < 41; i++)
		upper40[i] = (char)(v1[i] >= 'a' && v1[i] <= 'f' ? v1[i] - 'a' + 'A' : v1[i]);
	CU_ASSERT(svc_repo_checkout_as_new(p.dir, upper40, "same", NAME, EMAIL, out) == SVC_OK);
	CU_ASSERT(log_len(&p) == 2);
	project_close(&p);
}

static void test_repo_errors(void)
{
	struct project p;
	char sha[41], sub[128];
	struct svc_repo_commit *list = NULL;
	size_t n = 0;
	int changed = -1;

	project_open(&p);
	put(&p, "a.txt", "one\n");
	/* no repository yet: nothing is committed anywhere, not even in a parent directory's repository */
	CU_ASSERT(svc_repo_commit_all(p.dir, "x", NAME, EMAIL, sha, &changed) == SVC_E_INTERNAL);
	CU_ASSERT(svc_repo_log(p.dir, 10, &list, &n) == SVC_E_INTERNAL);
	CU_ASSERT_FATAL(svc_repo_init(p.dir, "v1", NAME, EMAIL, sha) == SVC_OK);
	snprintf(sub, sizeof sub, "%s/sub", p.dir);
	CU_ASSERT_FATAL(mkdir(sub, 0755) == 0);
	CU_ASSERT(svc_repo_commit_all(sub, "x", NAME, EMAIL, sha, &changed) == SVC_E_INTERNAL);
	/* an author the commit format cannot hold */
	put(&p, "a.txt", "two\n");
	CU_ASSERT(svc_repo_commit_all(p.dir, "x", "Mallory <m@x>", EMAIL, sha, &changed) == SVC_E_VALIDATION);
	CU_ASSERT(svc_repo_commit_all(p.dir, "x", "", EMAIL, sha, &changed) == SVC_E_VALIDATION);
	CU_ASSERT(log_len(&p) == 1);
	project_close(&p);
}

/*
 * The checks made under a hostile HOME: a .gitconfig (and XDG config) that
 * ignores *.html, converts line endings, renames the default branch, sets
 * another user and a hooks path must change nothing.
 */
static void hostile_checks(void)
{
	struct svc_repo_commit *list = NULL;
	struct project p;
	char sha[41], path[160];
	size_t n = 0;
	struct stat st;

	project_open(&p);
	put(&p, "index.html", "<p>x</p>\r\n");
	CU_ASSERT_FATAL(svc_repo_init(p.dir, "init", NAME, EMAIL, sha) == SVC_OK);
	CU_ASSERT(commit_has(&p, sha, "index.html", "<p>x</p>\r\n") == 1);
	CU_ASSERT_FATAL(svc_repo_log(p.dir, 10, &list, &n) == SVC_OK);
	CU_ASSERT(n == 1 && strcmp(list[0].author_name, NAME) == 0 && strcmp(list[0].author_email, EMAIL) == 0);
	svc_repo_log_free(list, n);
	snprintf(path, sizeof path, "%s/.git/refs/heads/main", p.dir);
	CU_ASSERT(stat(path, &st) == 0);
	project_close(&p);
}

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	CU_ASSERT_FATAL(f != NULL);
	fputs(text, f);
	fclose(f);
}

static void test_repo_ignores_hostile_home(void)
{
	char home[] = "/tmp/svc-repo-home-XXXXXX", path[256], config[1024], xdg[256], hook[256];
	int status = -1, devnull;
	pid_t pid;

	if (getenv(HOSTILE_ENV)) { /* in the child below: HOME was hostile before libgit2 started */
		hostile_checks();
		return;
	}
	CU_ASSERT_FATAL(mkdtemp(home) != NULL);
	snprintf(config, sizeof config,
		 "[user]\n\tname = Bogus User\n\temail = bogus@example.invalid\n"
		 "[init]\n\tdefaultBranch = bogus\n"
		 "[core]\n\texcludesfile = %s/ignore\n\thooksPath = %s/hooks\n\tautocrlf = true\n"
		 "[commit]\n\tgpgsign = true\n",
		 home, home);
	snprintf(path, sizeof path, "%s/.gitconfig", home);
	write_text(path, config);
	snprintf(path, sizeof path, "%s/ignore", home);
	write_text(path, "*.html\n");
	snprintf(path, sizeof path, "%s/hooks", home);
	CU_ASSERT_FATAL(mkdir(path, 0755) == 0);
	snprintf(hook, sizeof hook, "#!/bin/sh\ntouch %s/hook-ran\n", home);
	snprintf(path, sizeof path, "%s/hooks/pre-commit", home);
	write_text(path, hook);
	CU_ASSERT(chmod(path, 0755) == 0);
	snprintf(path, sizeof path, "%s/hooks/post-commit", home);
	write_text(path, hook);
	CU_ASSERT(chmod(path, 0755) == 0);
	snprintf(xdg, sizeof xdg, "%s/xdg", home);
	CU_ASSERT_FATAL(mkdir(xdg, 0755) == 0);
	snprintf(path, sizeof path, "%s/xdg/git", home);
	CU_ASSERT_FATAL(mkdir(path, 0755) == 0);
	snprintf(path, sizeof path, "%s/xdg/git/config", home);
	write_text(path, config);
	snprintf(path, sizeof path, "%s/xdg/git/ignore", home);
	write_text(path, "*.html\n");

	/* a fresh process, so libgit2 reads HOME the first time under the hostile one */
	pid = fork();
	CU_ASSERT_FATAL(pid >= 0);
	if (pid == 0) {
		devnull = open("/dev/null", O_WRONLY);
		if (devnull >= 0)
			dup2(devnull, STDOUT_FILENO);
		setenv("HOME", home, 1);
		setenv("XDG_CONFIG_HOME", xdg, 1);
		setenv(HOSTILE_ENV, "1", 1);
		execl("/proc/self/exe", "svc-unit", "repo", (char *)NULL);
		_exit(127);
	}
	CU_ASSERT(waitpid(pid, &status, 0) == pid);
	CU_ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	snprintf(path, sizeof path, "%s/hook-ran", home);
	CU_ASSERT(access(path, F_OK) == -1); /* no hook ran */
	CU_ASSERT(svc_fsx_remove_tree(home) == SVC_OK);
	hostile_checks(); /* and the same holds here */
}

/* Finds file `path` in a diff, or NULL. */
static const struct svc_repo_diff_file *diff_find(const struct svc_repo_diff *d, const char *path)
{
	size_t i;

	for (i = 0; i < d->nfiles; i++)
		if (strcmp(d->files[i].path, path) == 0)
			return &d->files[i];
	return NULL;
}

static void test_repo_diff_lists_each_change(void)
{
	struct project p;
	struct svc_repo_diff d;
	const struct svc_repo_diff_file *f;
	char first[41], second[41];
	int changed = 0;

	project_open(&p);
	put(&p, "index.html", "<h1>one</h1>\n<p>keep</p>\n");
	put(&p, "gone.txt", "bye\n");
	put(&p, "old-name.css", "body { color: red; }\nh1 { margin: 0; }\np { padding: 1em; }\n");
	CU_ASSERT_FATAL(svc_repo_init(p.dir, "first", NAME, EMAIL, first) == SVC_OK);
	put(&p, "index.html", "<h1>two</h1>\n<p>keep</p>\n");
	put(&p, "new.js", "console.log(1);\n");
	put(&p, "new-name.css", "body { color: red; }\nh1 { margin: 0; }\np { padding: 1em; }\n");
	CU_ASSERT_FATAL(svc_fsx_delete(p.dir, "gone.txt") == SVC_OK);
	CU_ASSERT_FATAL(svc_fsx_delete(p.dir, "old-name.css") == SVC_OK);
	CU_ASSERT_FATAL(svc_repo_commit_all(p.dir, "second", NAME, EMAIL, second, &changed) == SVC_OK && changed);

	CU_ASSERT_FATAL(svc_repo_diff(p.dir, second, 100, 1 << 20, 1 << 20, &d) == SVC_OK);
	CU_ASSERT_STRING_EQUAL(d.sha, second);
	CU_ASSERT_STRING_EQUAL(d.parent, first);
	CU_ASSERT_EQUAL(d.nfiles, 4);
	CU_ASSERT_FALSE(d.truncated);
	f = diff_find(&d, "index.html");
	CU_ASSERT_FATAL(f != NULL);
	CU_ASSERT_STRING_EQUAL(f->status, "modified");
	CU_ASSERT(f->diff && strstr(f->diff, "--- a/index.html\n+++ b/index.html\n") &&
		  strstr(f->diff, "-<h1>one</h1>\n+<h1>two</h1>\n <p>keep</p>\n"));
	f = diff_find(&d, "new.js");
	CU_ASSERT(f && strcmp(f->status, "added") == 0 && f->diff && strstr(f->diff, "+console.log(1);"));
	f = diff_find(&d, "gone.txt");
	CU_ASSERT(f && strcmp(f->status, "deleted") == 0 && f->diff && strstr(f->diff, "-bye"));
	f = diff_find(&d, "new-name.css");
	CU_ASSERT(f && strcmp(f->status, "renamed") == 0 && f->old_path && strcmp(f->old_path, "old-name.css") == 0);
	svc_repo_diff_dispose(&d);

	/* the first commit against the empty tree; a unique prefix names it too */
	{
		char prefix[8];
		memcpy(prefix, first, 7);
		prefix[7] = '\0';
		CU_ASSERT_FATAL(svc_repo_diff(p.dir, prefix, 100, 1 << 20, 1 << 20, &d) == SVC_OK);
		CU_ASSERT_STRING_EQUAL(d.sha, first);
		CU_ASSERT_STRING_EQUAL(d.parent, "");
		CU_ASSERT_EQUAL(d.nfiles, 3);
		CU_ASSERT(diff_find(&d, "gone.txt") && strcmp(diff_find(&d, "gone.txt")->status, "added") == 0);
		svc_repo_diff_dispose(&d);
	}
	project_close(&p);
}

static void test_repo_diff_caps_and_binary(void)
{
	struct project p;
	struct svc_repo_diff d;
	const struct svc_repo_diff_file *f;
	char sha[41], big[4096];
	static const char bin[] = { 'P', 'N', 'G', 0, 1, 2, 3, 0 };

	project_open(&p);
	memset(big, 'x', sizeof big - 2);
	big[sizeof big - 2] = '\n';
	big[sizeof big - 1] = '\0';
	put(&p, "a.txt", "small\n");
	put(&p, "big.txt", big);
	put(&p, "c.txt", "small too\n");
	CU_ASSERT_FATAL(svc_fsx_write(p.dir, "img.png", bin, sizeof bin) == SVC_OK);
	put(&p, "latin1.txt", "caf\xe9\n");
	CU_ASSERT_FATAL(svc_repo_init(p.dir, "first", NAME, EMAIL, sha) == SVC_OK);

	/* 1 KiB a file: big.txt is left out, the others fit */
	CU_ASSERT_FATAL(svc_repo_diff(p.dir, sha, 100, 1024, 1 << 20, &d) == SVC_OK);
	f = diff_find(&d, "big.txt");
	CU_ASSERT(f && f->truncated && f->diff == NULL && !f->binary);
	f = diff_find(&d, "a.txt");
	CU_ASSERT(f && !f->truncated && f->diff != NULL);
	f = diff_find(&d, "img.png");
	CU_ASSERT(f && f->binary && f->diff == NULL && !f->truncated);
	f = diff_find(&d, "latin1.txt");
	CU_ASSERT(f && f->binary && f->diff == NULL);
	svc_repo_diff_dispose(&d);
	/* the total: once it is spent, later texts are left out */
	CU_ASSERT_FATAL(svc_repo_diff(p.dir, sha, 100, 1 << 20, 120, &d) == SVC_OK);
	CU_ASSERT(diff_find(&d, "a.txt") && diff_find(&d, "a.txt")->diff != NULL);
	CU_ASSERT(diff_find(&d, "c.txt") && diff_find(&d, "c.txt")->truncated);
	svc_repo_diff_dispose(&d);
	/* the number of files */
	CU_ASSERT_FATAL(svc_repo_diff(p.dir, sha, 2, 1 << 20, 1 << 20, &d) == SVC_OK);
	CU_ASSERT_EQUAL(d.nfiles, 2);
	CU_ASSERT_TRUE(d.truncated);
	svc_repo_diff_dispose(&d);
	project_close(&p);
}

static void test_repo_diff_unknown_sha(void)
{
	struct project p;
	struct svc_repo_diff d;
	char sha[41];

	project_open(&p);
	put(&p, "index.html", "x\n");
	CU_ASSERT_FATAL(svc_repo_init(p.dir, "first", NAME, EMAIL, sha) == SVC_OK);
	CU_ASSERT_EQUAL(svc_repo_diff(p.dir, "0000000000000000000000000000000000000000", 10, 1024, 1024, &d),
			SVC_E_NOT_FOUND);
	svc_repo_diff_dispose(&d);
	CU_ASSERT_EQUAL(svc_repo_diff(p.dir, "not-a-sha", 10, 1024, 1024, &d), SVC_E_NOT_FOUND);
	svc_repo_diff_dispose(&d);
	CU_ASSERT_EQUAL(svc_repo_diff(p.dir, "HEAD", 10, 1024, 1024, &d), SVC_E_NOT_FOUND);
	svc_repo_diff_dispose(&d);
	CU_ASSERT_EQUAL(svc_repo_diff(p.dir, "abc", 10, 1024, 1024, &d), SVC_E_NOT_FOUND);
	svc_repo_diff_dispose(&d);
	project_close(&p);
}

SVC_TEST_SUITE(repo)
{
	CU_pSuite s = CU_add_suite("repo", NULL, NULL);

	CU_add_test(s, "test_repo_init_makes_one_commit", test_repo_init_makes_one_commit);
	CU_add_test(s, "test_repo_commit_all_nothing_changed", test_repo_commit_all_nothing_changed);
	CU_add_test(s, "test_repo_commit_all_modify_add_delete", test_repo_commit_all_modify_add_delete);
	CU_add_test(s, "test_repo_log_newest_first", test_repo_log_newest_first);
	CU_add_test(s, "test_repo_checkout_as_new_restores", test_repo_checkout_as_new_restores);
	CU_add_test(s, "test_repo_checkout_unknown_sha", test_repo_checkout_unknown_sha);
	CU_add_test(s, "test_repo_errors", test_repo_errors);
	CU_add_test(s, "test_repo_ignores_hostile_home", test_repo_ignores_hostile_home);
	CU_add_test(s, "test_repo_diff_lists_each_change", test_repo_diff_lists_each_change);
	CU_add_test(s, "test_repo_diff_caps_and_binary", test_repo_diff_caps_and_binary);
	CU_add_test(s, "test_repo_diff_unknown_sha", test_repo_diff_unknown_sha);
}
