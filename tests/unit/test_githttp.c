/* test_githttp.c: CUnit suite "githttp": smart-HTTP paths, the git scopes of API tokens, svc's pre-receive check on real repositories. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <git2.h>

#include "auth/auth.h"
#include "auth/perm.h"
#include "core/err.h"
#include "core/fsx.h"
#include "project/githttp.h"
#include "project/repo.h"
#include "unit.h"

#define ID "6f1c2b9e-3d4a-4b5c-8d6e-7f8091a2b3c4"

static void test_githttp_parse_path(void)
{
	char id[37];
	enum svc_git_service s;

	CU_ASSERT(svc_git_parse_path(ID ".git/info/refs", "service=git-upload-pack", id, &s) == 0);
	CU_ASSERT(s == SVC_GIT_REFS_UPLOAD && strcmp(id, ID) == 0);
	CU_ASSERT(svc_git_parse_path(ID ".git/info/refs", "service=git-receive-pack", id, &s) == 0);
	CU_ASSERT(s == SVC_GIT_REFS_RECEIVE && svc_git_service_writes(s));
	CU_ASSERT(svc_git_parse_path(ID "/git-upload-pack", "", id, &s) == 0);
	CU_ASSERT(s == SVC_GIT_UPLOAD && !svc_git_service_writes(s));
	CU_ASSERT(svc_git_parse_path("6F1C2B9E-3D4A-4B5C-8D6E-7F8091A2B3C4.git/git-receive-pack", "", id, &s) == 0);
	CU_ASSERT(s == SVC_GIT_RECEIVE && strcmp(id, ID) == 0);
	/* the dumb protocol, other services, other paths, bad ids */
	CU_ASSERT(svc_git_parse_path(ID ".git/info/refs", "", id, &s) == SVC_E_NOT_FOUND);
	CU_ASSERT(svc_git_parse_path(ID ".git/info/refs", "service=git-upload-archive", id, &s) == SVC_E_NOT_FOUND);
	CU_ASSERT(svc_git_parse_path(ID ".git/HEAD", "", id, &s) == SVC_E_NOT_FOUND);
	CU_ASSERT(svc_git_parse_path(ID ".git/objects/info/packs", "", id, &s) == SVC_E_NOT_FOUND);
	CU_ASSERT(svc_git_parse_path(ID ".git/../x/git-upload-pack", "", id, &s) == SVC_E_NOT_FOUND);
	CU_ASSERT(svc_git_parse_path(ID ".gitx/git-upload-pack", "", id, &s) == SVC_E_NOT_FOUND);
	CU_ASSERT(svc_git_parse_path("not-a-uuid-at-all-not-a-uuid-at-all.git/git-upload-pack", "", id, &s) ==
		  SVC_E_NOT_FOUND);
	CU_ASSERT(svc_git_parse_path(ID, "", id, &s) == SVC_E_NOT_FOUND);
	CU_ASSERT(svc_git_parse_path("", "", id, &s) == SVC_E_NOT_FOUND);
	CU_ASSERT(svc_git_parse_path(NULL, NULL, id, &s) == SVC_E_NOT_FOUND);
}

static void test_githttp_token_scopes(void)
{
	const char *needed = NULL;
	unsigned p = 0;
	char text[128];

	CU_ASSERT(svc_pat_scope_bit("git:read") == SVC_PAT_GIT_READ);
	CU_ASSERT(svc_pat_scope_bit("git:write") == SVC_PAT_GIT_WRITE);
	CU_ASSERT(svc_pat_scopes_parse("git:read git:write") == (SVC_PAT_GIT_READ | SVC_PAT_GIT_WRITE));
	CU_ASSERT(svc_pat_scopes_format(SVC_PAT_ALL, text, sizeof text) == 0);
	CU_ASSERT(svc_pat_scopes_parse(text) == SVC_PAT_ALL);
	/* git:read fetches, git:write pushes (and fetches) */
	CU_ASSERT(svc_pat_route_scopes(SVC_PAT_GIT_READ, 1, "/api/git/*", &p, &needed) == 0 && p == SVC_SCOPE_READ);
	CU_ASSERT(svc_pat_route_scopes(SVC_PAT_GIT_READ, 0, "/api/git/*", &p, &needed) == SVC_E_FORBIDDEN);
	CU_ASSERT(needed && strcmp(needed, "git:write") == 0);
	CU_ASSERT(svc_pat_route_scopes(SVC_PAT_GIT_WRITE, 0, "/api/git/*", &p, &needed) == 0 &&
		  p == (SVC_SCOPE_READ | SVC_SCOPE_WRITE));
	CU_ASSERT(svc_pat_route_scopes(SVC_PAT_GIT_WRITE, 1, "/api/git/*", &p, &needed) == 0);
	/* the other scopes do not open Git, and Git's open nothing else */
	CU_ASSERT(svc_pat_route_scopes(SVC_PAT_PROJECTS_READ | SVC_PAT_PROJECTS_WRITE | SVC_PAT_ADMIN, 1, "/api/git/*",
				       &p, &needed) == SVC_E_FORBIDDEN);
	CU_ASSERT(svc_pat_route_scopes(SVC_PAT_GIT_WRITE, 1, "/api/projects/:id", &p, &needed) == SVC_E_FORBIDDEN);
	CU_ASSERT(svc_pat_route_scopes(SVC_PAT_GIT_WRITE, 0, "/api/projects/:id/versions/:sha/checkout", &p,
				       &needed) == SVC_E_FORBIDDEN);
}

/* ---- the pre-receive check on a real repository ---- */

struct repo_fixture {
	char base[64];
	char dir[96];
	git_repository *repo;
	git_oid head;
};

static void fixture_open(struct repo_fixture *f)
{
	char tmpl[] = "/tmp/svc-githttp-XXXXXX";
	char sha[41];

	CU_ASSERT_FATAL(mkdtemp(tmpl) != NULL);
	/* trees a real client could send, that libgit2 itself would not make */
	CU_ASSERT_FATAL(svc_repo_global_init() == 0);
	git_libgit2_opts(GIT_OPT_ENABLE_STRICT_OBJECT_CREATION, 0);
	snprintf(f->base, sizeof f->base, "%s", tmpl);
	snprintf(f->dir, sizeof f->dir, "%s/p", tmpl);
	CU_ASSERT_FATAL(mkdir(f->dir, 0755) == 0);
	CU_ASSERT_FATAL(svc_fsx_write(f->dir, "index.html", "<h1>hi</h1>\n", 12) == 0);
	CU_ASSERT_FATAL(svc_repo_init(f->dir, "first", "Ada", "ada@example.com", sha) == 0);
	CU_ASSERT_FATAL(git_repository_open(&f->repo, f->dir) == 0);
	CU_ASSERT_FATAL(git_oid_fromstr(&f->head, sha) == 0);
}

static void fixture_close(struct repo_fixture *f)
{
	git_repository_free(f->repo);
	git_libgit2_opts(GIT_OPT_ENABLE_STRICT_OBJECT_CREATION, 1);
	CU_ASSERT(svc_fsx_remove_tree(f->base) == SVC_OK);
}

/* One tree entry of a commit made by make_commit(): a blob of `text` (or a tree with it as its one file "x"). */
struct entry {
	const char *name;
	git_filemode_t mode;
	const char *text;
	size_t len;       /* 0: strlen(text) */
};

static void make_commit(struct repo_fixture *f, const git_oid *parent, const struct entry *e, size_t n, git_oid *out)
{
	git_treebuilder *tb = NULL;
	git_signature *sig = NULL;
	git_commit *pc = NULL;
	git_tree *tree = NULL;
	git_oid blob, tree_id;
	size_t i;

	CU_ASSERT_FATAL(git_treebuilder_new(&tb, f->repo, NULL) == 0);
	for (i = 0; i < n; i++) {
		size_t len = e[i].len ? e[i].len : strlen(e[i].text);
		CU_ASSERT_FATAL(git_blob_create_from_buffer(&blob, f->repo, e[i].text, len) == 0);
		if (e[i].mode == GIT_FILEMODE_TREE) {
			git_treebuilder *sub = NULL;
			git_oid sub_id;
			CU_ASSERT_FATAL(git_treebuilder_new(&sub, f->repo, NULL) == 0);
			CU_ASSERT_FATAL(git_treebuilder_insert(NULL, sub, "x", &blob, GIT_FILEMODE_BLOB) == 0);
			CU_ASSERT_FATAL(git_treebuilder_write(&sub_id, sub) == 0);
			git_treebuilder_free(sub);
			blob = sub_id;
		}
		CU_ASSERT_FATAL(git_treebuilder_insert(NULL, tb, e[i].name, &blob, e[i].mode) == 0);
	}
	CU_ASSERT_FATAL(git_treebuilder_write(&tree_id, tb) == 0);
	CU_ASSERT_FATAL(git_tree_lookup(&tree, f->repo, &tree_id) == 0);
	CU_ASSERT_FATAL(git_signature_new(&sig, "Ada", "ada@example.com", 1700000000, 0) == 0);
	if (parent)
		CU_ASSERT_FATAL(git_commit_lookup(&pc, f->repo, parent) == 0);
	CU_ASSERT_FATAL(git_commit_create_v(out, f->repo, NULL, sig, sig, NULL, "pushed", tree, parent ? 1 : 0, pc) == 0);
	git_commit_free(pc);
	git_signature_free(sig);
	git_tree_free(tree);
	git_treebuilder_free(tb);
}

/* A commit on head whose tree is one directory `name` (".git", ".GIT") holding "config": written as raw
 * bytes, since libgit2 refuses to build such a tree, though a client can send one. */
static void commit_dotgit(struct repo_fixture *f, const char *name, git_oid *out)
{
	unsigned char buf[128];
	git_odb *odb = NULL;
	git_oid blob, sub, root;
	git_tree *tree = NULL;
	git_commit *pc = NULL;
	git_signature *sig = NULL;
	size_t n;

	CU_ASSERT_FATAL(git_repository_odb(&odb, f->repo) == 0);
	CU_ASSERT_FATAL(git_blob_create_from_buffer(&blob, f->repo, "[core]\n", 7) == 0);
	n = (size_t)snprintf((char *)buf, sizeof buf, "100644 config") + 1;
	memcpy(buf + n, blob.id, GIT_OID_RAWSZ);
	CU_ASSERT_FATAL(git_odb_write(&sub, odb, buf, n + GIT_OID_RAWSZ, GIT_OBJECT_TREE) == 0);
	n = (size_t)snprintf((char *)buf, sizeof buf, "40000 %s", name) + 1;
	memcpy(buf + n, sub.id, GIT_OID_RAWSZ);
	CU_ASSERT_FATAL(git_odb_write(&root, odb, buf, n + GIT_OID_RAWSZ, GIT_OBJECT_TREE) == 0);
	CU_ASSERT_FATAL(git_tree_lookup(&tree, f->repo, &root) == 0);
	CU_ASSERT_FATAL(git_commit_lookup(&pc, f->repo, &f->head) == 0);
	CU_ASSERT_FATAL(git_signature_new(&sig, "Ada", "ada@example.com", 1700000000, 0) == 0);
	CU_ASSERT_FATAL(git_commit_create_v(out, f->repo, NULL, sig, sig, NULL, "dotgit", tree, 1, pc) == 0);
	git_signature_free(sig);
	git_commit_free(pc);
	git_tree_free(tree);
	git_odb_free(odb);
}

/* Runs the check on one command "<old> <new> <ref>" with the given file-size limit. */
static int check_push(struct repo_fixture *f, const git_oid *old, const git_oid *new, const char *ref,
		      uint64_t max_file, char *why, size_t why_max)
{
	char line[256], o[41], n[41], gitdir[128];
	struct svc_git_limits l = { max_file, UINT64_MAX, NULL };

	git_oid_tostr(o, sizeof o, old);
	git_oid_tostr(n, sizeof n, new);
	snprintf(line, sizeof line, "%s %s %s\n", o, n, ref);
	snprintf(gitdir, sizeof gitdir, "%s/.git", f->dir);
	return svc_git_prereceive(gitdir, line, strlen(line), &l, why, why_max);
}

static void test_githttp_prereceive_main_only_moves_forward(void)
{
	struct repo_fixture f;
	struct entry ok[] = { { "index.html", GIT_FILEMODE_BLOB, "<h1>pushed</h1>\n", 0 } };
	git_oid child, unrelated, zero;
	char why[1024];

	fixture_open(&f);
	memset(&zero, 0, sizeof zero);
	make_commit(&f, &f.head, ok, 1, &child);
	make_commit(&f, NULL, ok, 1, &unrelated);
	CU_ASSERT(check_push(&f, &f.head, &child, "refs/heads/main", 1 << 20, why, sizeof why) == 0);
	CU_ASSERT(check_push(&f, &f.head, &unrelated, "refs/heads/main", 1 << 20, why, sizeof why) == SVC_E_VALIDATION);
	CU_ASSERT(strstr(why, "main only moves forward") != NULL);
	CU_ASSERT(check_push(&f, &f.head, &zero, "refs/heads/main", 1 << 20, why, sizeof why) == SVC_E_VALIDATION);
	CU_ASSERT(strstr(why, "main cannot be deleted") != NULL);
	/* another branch may be rewritten or created from nothing */
	CU_ASSERT(check_push(&f, &child, &unrelated, "refs/heads/experiment", 1 << 20, why, sizeof why) == 0);
	CU_ASSERT(check_push(&f, &zero, &unrelated, "refs/heads/experiment", 1 << 20, why, sizeof why) == 0);
	fixture_close(&f);
}

static void test_githttp_prereceive_refuses_what_a_project_may_not_hold(void)
{
	struct repo_fixture f;
	struct entry link[] = { { "index.html", GIT_FILEMODE_BLOB, "x\n", 0 }, { "passwd", GIT_FILEMODE_LINK, "/etc/passwd", 0 } };
	struct entry backslash[] = { { "..\\etc", GIT_FILEMODE_BLOB, "x\n", 0 } };
	struct entry big[] = { { "big.bin", GIT_FILEMODE_BLOB, "0123456789abcdef0123", 20 } };
	git_oid c;
	char why[1024];

	fixture_open(&f);
	make_commit(&f, &f.head, link, 2, &c);
	CU_ASSERT(check_push(&f, &f.head, &c, "refs/heads/main", 1 << 20, why, sizeof why) == SVC_E_VALIDATION);
	CU_ASSERT(strstr(why, "passwd is a symlink") != NULL);
	/* on any branch: what the repository holds may be cloned */
	CU_ASSERT(check_push(&f, &f.head, &c, "refs/heads/side", 1 << 20, why, sizeof why) == SVC_E_VALIDATION);
	commit_dotgit(&f, ".git", &c);
	CU_ASSERT(check_push(&f, &f.head, &c, "refs/heads/main", 1 << 20, why, sizeof why) == SVC_E_VALIDATION);
	CU_ASSERT(strstr(why, ".git is under .git") != NULL);
	commit_dotgit(&f, ".GIT", &c);
	CU_ASSERT(check_push(&f, &f.head, &c, "refs/heads/main", 1 << 20, why, sizeof why) == SVC_E_VALIDATION);
	make_commit(&f, &f.head, backslash, 1, &c);
	CU_ASSERT(check_push(&f, &f.head, &c, "refs/heads/main", 1 << 20, why, sizeof why) == SVC_E_VALIDATION);
	CU_ASSERT(strstr(why, "a path svc refuses") != NULL);
	make_commit(&f, &f.head, big, 1, &c);
	CU_ASSERT(check_push(&f, &f.head, &c, "refs/heads/main", 20, why, sizeof why) == 0);
	CU_ASSERT(check_push(&f, &f.head, &c, "refs/heads/main", 19, why, sizeof why) == SVC_E_TOO_LARGE);
	CU_ASSERT(strstr(why, "big.bin is 20 bytes") != NULL);
	/* commands git would never send */
	CU_ASSERT(svc_git_prereceive(f.dir, "garbage\n", 8, &(struct svc_git_limits){ 0, UINT64_MAX, NULL }, why,
				     sizeof why) == SVC_E_VALIDATION);
	fixture_close(&f);
}

/* The pushed objects wait in a quarantine directory; more bytes there than the quotas leave is refused. */
static void test_githttp_prereceive_quota_room(void)
{
	struct repo_fixture f;
	struct entry ok[] = { { "index.html", GIT_FILEMODE_BLOB, "<h1>pushed</h1>\n", 0 } };
	char quarantine[160], why[1024], line[256], o[41], n[41], gitdir[128];
	struct svc_git_limits l = { 1 << 20, 0, NULL };
	static const char pack[4096];
	git_oid child;

	fixture_open(&f);
	make_commit(&f, &f.head, ok, 1, &child);
	snprintf(quarantine, sizeof quarantine, "%s/quarantine", f.base);
	CU_ASSERT_FATAL(mkdir(quarantine, 0700) == 0);
	CU_ASSERT_FATAL(svc_fsx_write(quarantine, "pack/pack-1.pack", pack, sizeof pack) == 0);
	git_oid_tostr(o, sizeof o, &f.head);
	git_oid_tostr(n, sizeof n, &child);
	snprintf(line, sizeof line, "%s %s refs/heads/main\n", o, n);
	snprintf(gitdir, sizeof gitdir, "%s/.git", f.dir);
	l.quarantine = quarantine;
	l.room_bytes = sizeof pack - 1;
	CU_ASSERT(svc_git_prereceive(gitdir, line, strlen(line), &l, why, sizeof why) == SVC_E_TOO_LARGE);
	CU_ASSERT(strstr(why, "the push brings 4096 bytes") != NULL);
	l.room_bytes = sizeof pack;
	CU_ASSERT(svc_git_prereceive(gitdir, line, strlen(line), &l, why, sizeof why) == 0);
	fixture_close(&f);
}

SVC_TEST_SUITE(githttp_suite)
{
	CU_pSuite s = CU_add_suite("githttp", NULL, NULL);

	CU_add_test(s, "test_githttp_parse_path", test_githttp_parse_path);
	CU_add_test(s, "test_githttp_token_scopes", test_githttp_token_scopes);
	CU_add_test(s, "test_githttp_prereceive_main_only_moves_forward", test_githttp_prereceive_main_only_moves_forward);
	CU_add_test(s, "test_githttp_prereceive_refuses_what_a_project_may_not_hold",
		    test_githttp_prereceive_refuses_what_a_project_may_not_hold);
	CU_add_test(s, "test_githttp_prereceive_quota_room", test_githttp_prereceive_quota_room);
}
