/* test_perm.c: unit tests of the permission module (lib/auth/perm.c): the project matrix, members, scopes. */
#include <string.h>

#include <CUnit/CUnit.h>

#include "core/err.h"
#include "auth/perm.h"
#include "unit.h"

#define ME "11111111-1111-4111-8111-111111111111"
#define OTHER "22222222-2222-4222-8222-222222222222"

static int check(const char *user, int padmin, const char *role, enum svc_action a, const char *vis,
		 const char *creator)
{
	struct svc_perm_subject s = { user, padmin, role, SVC_SCOPE_ALL };
	struct svc_perm_object o = { vis, creator, "team", NULL, NULL, NULL };

	return svc_perm_check(&s, a, &o);
}

/* The project matrix of docs/api.md: actor x action x visibility, for a project someone else created. */
static void test_perm_project_matrix(void)
{
	static const char *const vis[3] = { "private", "workspace", "public" };
	static const enum svc_action acts[5] = { SVC_ACT_READ, SVC_ACT_WRITE, SVC_ACT_DELETE, SVC_ACT_HARD_DELETE,
						 SVC_ACT_VISIBILITY };
	/* expected[actor][action][visibility]: 0 allowed, else the error */
	static const int F = SVC_E_FORBIDDEN, U = SVC_E_UNAUTHORIZED;
	static const int expected[6][5][3] = {
		/* anonymous */ { { U, U, 0 }, { U, U, U }, { U, U, U }, { U, U, U }, { U, U, U } },
		/* non-member */ { { F, F, 0 }, { F, F, F }, { F, F, F }, { F, F, F }, { F, F, F } },
		/* member */ { { F, 0, 0 }, { F, 0, 0 }, { F, 0, 0 }, { F, F, F }, { F, F, F } },
		/* admin */ { { 0, 0, 0 }, { 0, 0, 0 }, { 0, 0, 0 }, { F, F, F }, { 0, 0, 0 } },
		/* owner */ { { 0, 0, 0 }, { 0, 0, 0 }, { 0, 0, 0 }, { 0, 0, 0 }, { 0, 0, 0 } },
		/* platform admin, not a member */ { { 0, 0, 0 }, { 0, 0, 0 }, { 0, 0, 0 }, { 0, 0, 0 }, { 0, 0, 0 } },
	};
	static const char *const roles[6] = { NULL, NULL, "member", "admin", "owner", NULL };
	int actor, a, v;

	for (actor = 0; actor < 6; actor++)
		for (a = 0; a < 5; a++)
			for (v = 0; v < 3; v++) {
				int got = check(actor == 0 ? "" : ME, actor == 5, roles[actor], acts[a], vis[v], OTHER);
				if (got != expected[actor][a][v])
					CU_FAIL("matrix cell differs");
				CU_ASSERT_EQUAL(got, expected[actor][a][v]);
			}
}

static void test_perm_private_project_is_open_to_its_creator(void)
{
	CU_ASSERT_EQUAL(check(ME, 0, "member", SVC_ACT_READ, "private", ME), 0);
	CU_ASSERT_EQUAL(check(ME, 0, "member", SVC_ACT_WRITE, "private", ME), 0);
	CU_ASSERT_EQUAL(check(ME, 0, "member", SVC_ACT_VISIBILITY, "private", ME), 0);
	CU_ASSERT_EQUAL(check(ME, 0, "member", SVC_ACT_HARD_DELETE, "private", ME), SVC_E_FORBIDDEN);
	/* a creator who left the workspace has no access any more */
	CU_ASSERT_EQUAL(check(ME, 0, NULL, SVC_ACT_READ, "private", ME), SVC_E_FORBIDDEN);
}

static void test_perm_unknown_role_or_action_is_denied(void)
{
	CU_ASSERT_EQUAL(check(ME, 0, "superuser", SVC_ACT_READ, "workspace", OTHER), SVC_E_FORBIDDEN);
	CU_ASSERT_EQUAL(check(ME, 0, "owner", SVC_ACT__MAX, "workspace", OTHER), SVC_E_FORBIDDEN);
	CU_ASSERT_EQUAL(check(ME, 0, "owner", (enum svc_action)-1, "workspace", OTHER), SVC_E_FORBIDDEN);
	CU_ASSERT_EQUAL(svc_perm_check(NULL, SVC_ACT_READ, NULL), SVC_E_UNAUTHORIZED);
}

static int member_op(const char *role, enum svc_action a, const char *member_role, const char *new_role,
		     const char *member_id)
{
	struct svc_perm_subject s = { ME, 0, role, SVC_SCOPE_ALL };
	struct svc_perm_object o = { NULL, NULL, "team", member_id, member_role, new_role };

	return svc_perm_check(&s, a, &o);
}

static void test_perm_member_management(void)
{
	/* adding */
	CU_ASSERT_EQUAL(member_op("member", SVC_ACT_MEMBER_ADD, NULL, "member", OTHER), SVC_E_FORBIDDEN);
	CU_ASSERT_EQUAL(member_op("admin", SVC_ACT_MEMBER_ADD, NULL, "member", OTHER), 0);
	CU_ASSERT_EQUAL(member_op("admin", SVC_ACT_MEMBER_ADD, NULL, "admin", OTHER), 0);
	CU_ASSERT_EQUAL(member_op("admin", SVC_ACT_MEMBER_ADD, NULL, "owner", OTHER), SVC_E_FORBIDDEN);
	CU_ASSERT_EQUAL(member_op("owner", SVC_ACT_MEMBER_ADD, NULL, "owner", OTHER), 0);
	CU_ASSERT_EQUAL(member_op("owner", SVC_ACT_MEMBER_ADD, NULL, "king", OTHER), SVC_E_FORBIDDEN);
	/* role changes */
	CU_ASSERT_EQUAL(member_op("member", SVC_ACT_MEMBER_ROLE, "member", "admin", OTHER), SVC_E_FORBIDDEN);
	CU_ASSERT_EQUAL(member_op("admin", SVC_ACT_MEMBER_ROLE, "member", "admin", OTHER), 0);
	CU_ASSERT_EQUAL(member_op("admin", SVC_ACT_MEMBER_ROLE, "admin", "member", OTHER), 0);
	CU_ASSERT_EQUAL(member_op("admin", SVC_ACT_MEMBER_ROLE, "member", "owner", OTHER), SVC_E_FORBIDDEN);
	CU_ASSERT_EQUAL(member_op("admin", SVC_ACT_MEMBER_ROLE, "owner", "member", OTHER), SVC_E_FORBIDDEN);
	CU_ASSERT_EQUAL(member_op("owner", SVC_ACT_MEMBER_ROLE, "owner", "admin", OTHER), 0);
	/* removing */
	CU_ASSERT_EQUAL(member_op("member", SVC_ACT_MEMBER_REMOVE, "member", NULL, OTHER), SVC_E_FORBIDDEN);
	CU_ASSERT_EQUAL(member_op("member", SVC_ACT_MEMBER_REMOVE, "member", NULL, ME), 0);
	CU_ASSERT_EQUAL(member_op("admin", SVC_ACT_MEMBER_REMOVE, "member", NULL, OTHER), 0);
	CU_ASSERT_EQUAL(member_op("admin", SVC_ACT_MEMBER_REMOVE, "admin", NULL, OTHER), SVC_E_FORBIDDEN);
	CU_ASSERT_EQUAL(member_op("owner", SVC_ACT_MEMBER_REMOVE, "owner", NULL, OTHER), 0);
	/* workspace */
	CU_ASSERT_EQUAL(member_op("member", SVC_ACT_WS_UPDATE, NULL, NULL, NULL), SVC_E_FORBIDDEN);
	CU_ASSERT_EQUAL(member_op("admin", SVC_ACT_WS_UPDATE, NULL, NULL, NULL), 0);
	CU_ASSERT_EQUAL(member_op("admin", SVC_ACT_WS_TRANSFER, NULL, NULL, NULL), SVC_E_FORBIDDEN);
	CU_ASSERT_EQUAL(member_op("owner", SVC_ACT_WS_TRANSFER, NULL, NULL, NULL), 0);
	CU_ASSERT_EQUAL(member_op(NULL, SVC_ACT_WS_READ, NULL, NULL, NULL), SVC_E_FORBIDDEN);
	CU_ASSERT_EQUAL(member_op("member", SVC_ACT_FOLDER_WRITE, NULL, NULL, NULL), 0);
	CU_ASSERT_EQUAL(member_op(NULL, SVC_ACT_PROJECT_CREATE, NULL, NULL, NULL), SVC_E_FORBIDDEN);
}

static void test_perm_platform_admin_may_do_everything(void)
{
	struct svc_perm_subject s = { ME, 1, NULL, SVC_SCOPE_ALL };
	struct svc_perm_object o = { "private", OTHER, "team", OTHER, "owner", "member" };
	int a;

	for (a = 0; a < SVC_ACT__MAX; a++)
		CU_ASSERT_EQUAL(svc_perm_check(&s, (enum svc_action)a, &o), 0);
	/* ...but cannot hand out a role that does not exist */
	o.new_role = "root";
	CU_ASSERT_EQUAL(svc_perm_check(&s, SVC_ACT_MEMBER_ADD, &o), SVC_E_FORBIDDEN);
	/* and the flag means nothing without a signed-in user */
	s.user_id = "";
	CU_ASSERT_EQUAL(svc_perm_check(&s, SVC_ACT_WRITE, &o), SVC_E_UNAUTHORIZED);
}

static void test_perm_scopes_limit_a_credential(void)
{
	struct svc_perm_subject s = { ME, 0, "owner", SVC_SCOPE_READ };
	struct svc_perm_object o = { "workspace", OTHER, "team", NULL, NULL, NULL };

	CU_ASSERT_EQUAL(svc_perm_check(&s, SVC_ACT_READ, &o), 0);
	CU_ASSERT_EQUAL(svc_perm_check(&s, SVC_ACT_WRITE, &o), SVC_E_FORBIDDEN);
	CU_ASSERT_EQUAL(svc_perm_check(&s, SVC_ACT_HARD_DELETE, &o), SVC_E_FORBIDDEN);
	s.scopes = SVC_SCOPE_READ | SVC_SCOPE_WRITE;
	CU_ASSERT_EQUAL(svc_perm_check(&s, SVC_ACT_WRITE, &o), 0);
	CU_ASSERT_EQUAL(svc_perm_check(&s, SVC_ACT_MEMBER_ADD, &o), SVC_E_FORBIDDEN);
	/* scopes bind platform admins too */
	s.platform_admin = 1;
	CU_ASSERT_EQUAL(svc_perm_check(&s, SVC_ACT_WS_UPDATE, &o), SVC_E_FORBIDDEN);
}

/* Deleting another member's design comment: admins, owners and platform admins; not members or outsiders. */
static void test_perm_comment_moderation(void)
{
	CU_ASSERT_EQUAL(check(ME, 0, "member", SVC_ACT_COMMENT_MODERATE, "workspace", OTHER), SVC_E_FORBIDDEN);
	CU_ASSERT_EQUAL(check(ME, 0, "admin", SVC_ACT_COMMENT_MODERATE, "workspace", OTHER), 0);
	CU_ASSERT_EQUAL(check(ME, 0, "owner", SVC_ACT_COMMENT_MODERATE, "private", OTHER), 0);
	CU_ASSERT_EQUAL(check(ME, 1, NULL, SVC_ACT_COMMENT_MODERATE, "workspace", OTHER), 0);
	CU_ASSERT_EQUAL(check(ME, 0, NULL, SVC_ACT_COMMENT_MODERATE, "public", OTHER), SVC_E_FORBIDDEN);
	CU_ASSERT_EQUAL(check("", 0, NULL, SVC_ACT_COMMENT_MODERATE, "public", OTHER), SVC_E_UNAUTHORIZED);
}

/* The apps' project secrets: members list names, admins and owners set and delete; a public project's viewers nothing. */
static void test_perm_project_secrets(void)
{
	CU_ASSERT_EQUAL(check(ME, 0, "member", SVC_ACT_SECRETS_READ, "workspace", OTHER), 0);
	CU_ASSERT_EQUAL(check(ME, 0, "member", SVC_ACT_SECRETS_READ, "private", OTHER), SVC_E_FORBIDDEN);
	CU_ASSERT_EQUAL(check(ME, 0, "member", SVC_ACT_SECRETS_WRITE, "workspace", OTHER), SVC_E_FORBIDDEN);
	CU_ASSERT_EQUAL(check(ME, 0, "member", SVC_ACT_SECRETS_WRITE, "private", ME), SVC_E_FORBIDDEN);
	CU_ASSERT_EQUAL(check(ME, 0, "admin", SVC_ACT_SECRETS_WRITE, "private", OTHER), 0);
	CU_ASSERT_EQUAL(check(ME, 0, "owner", SVC_ACT_SECRETS_WRITE, "workspace", OTHER), 0);
	CU_ASSERT_EQUAL(check(ME, 0, NULL, SVC_ACT_SECRETS_READ, "public", OTHER), SVC_E_FORBIDDEN);
	CU_ASSERT_EQUAL(check(ME, 0, NULL, SVC_ACT_SECRETS_WRITE, "public", OTHER), SVC_E_FORBIDDEN);
	CU_ASSERT_EQUAL(check("", 0, NULL, SVC_ACT_SECRETS_READ, "public", OTHER), SVC_E_UNAUTHORIZED);
	CU_ASSERT_EQUAL(check(ME, 1, NULL, SVC_ACT_SECRETS_WRITE, "private", OTHER), 0);
}

static void test_perm_role_rank(void)
{
	CU_ASSERT_EQUAL(svc_perm_role_rank(NULL), 0);
	CU_ASSERT_EQUAL(svc_perm_role_rank(""), 0);
	CU_ASSERT_EQUAL(svc_perm_role_rank("Owner"), 0);
	CU_ASSERT(svc_perm_role_rank("member") < svc_perm_role_rank("admin"));
	CU_ASSERT(svc_perm_role_rank("admin") < svc_perm_role_rank("owner"));
}

SVC_TEST_SUITE(perm)
{
	CU_pSuite s = CU_add_suite("perm", NULL, NULL);

	CU_add_test(s, "test_perm_project_matrix", test_perm_project_matrix);
	CU_add_test(s, "test_perm_private_project_is_open_to_its_creator", test_perm_private_project_is_open_to_its_creator);
	CU_add_test(s, "test_perm_unknown_role_or_action_is_denied", test_perm_unknown_role_or_action_is_denied);
	CU_add_test(s, "test_perm_member_management", test_perm_member_management);
	CU_add_test(s, "test_perm_platform_admin_may_do_everything", test_perm_platform_admin_may_do_everything);
	CU_add_test(s, "test_perm_scopes_limit_a_credential", test_perm_scopes_limit_a_credential);
	CU_add_test(s, "test_perm_comment_moderation", test_perm_comment_moderation);
	CU_add_test(s, "test_perm_role_rank", test_perm_role_rank);
	CU_add_test(s, "test_perm_project_secrets", test_perm_project_secrets);
}
