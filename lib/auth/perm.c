/* perm.c: the one permission decision of svc (spec "Authentication" 10; docs/api.md "Permissions"). */
#include <string.h>

#include "core/err.h"
#include "auth/perm.h"

enum { R_NONE, R_MEMBER, R_ADMIN, R_OWNER };

/* Per action: the scope the credential needs and the least role that may do it (before the special rules). */
static const struct {
	unsigned scope;
	int min_rank;
} rules[SVC_ACT__MAX] = {
	[SVC_ACT_READ] = { SVC_SCOPE_READ, R_MEMBER },
	[SVC_ACT_WRITE] = { SVC_SCOPE_WRITE, R_MEMBER },
	[SVC_ACT_VISIBILITY] = { SVC_SCOPE_ADMIN, R_MEMBER },
	[SVC_ACT_DELETE] = { SVC_SCOPE_WRITE, R_MEMBER },
	[SVC_ACT_HARD_DELETE] = { SVC_SCOPE_ADMIN, R_OWNER },
	[SVC_ACT_PROJECT_CREATE] = { SVC_SCOPE_WRITE, R_MEMBER },
	[SVC_ACT_WS_READ] = { SVC_SCOPE_READ, R_MEMBER },
	[SVC_ACT_WS_UPDATE] = { SVC_SCOPE_ADMIN, R_ADMIN },
	[SVC_ACT_WS_LEAVE] = { SVC_SCOPE_ADMIN, R_MEMBER },
	[SVC_ACT_MEMBER_ADD] = { SVC_SCOPE_ADMIN, R_ADMIN },
	[SVC_ACT_MEMBER_ROLE] = { SVC_SCOPE_ADMIN, R_ADMIN },
	[SVC_ACT_MEMBER_REMOVE] = { SVC_SCOPE_ADMIN, R_ADMIN },
	[SVC_ACT_WS_TRANSFER] = { SVC_SCOPE_ADMIN, R_OWNER },
	[SVC_ACT_FOLDER_WRITE] = { SVC_SCOPE_WRITE, R_MEMBER },
	[SVC_ACT_CHAT] = { SVC_SCOPE_CHAT, R_MEMBER },
	[SVC_ACT_DEPLOY] = { SVC_SCOPE_DEPLOY, R_MEMBER },
	[SVC_ACT_WS_CREDIT_LIMIT] = { SVC_SCOPE_ADMIN, R_OWNER + 1 }, /* no role: platform admins only */
	[SVC_ACT_COMMENT_MODERATE] = { SVC_SCOPE_WRITE, R_ADMIN },
	[SVC_ACT_DOMAINS] = { SVC_SCOPE_DEPLOY, R_ADMIN },
	[SVC_ACT_WS_PLAN] = { SVC_SCOPE_ADMIN, R_OWNER + 1 }, /* no role: platform admins only */
	[SVC_ACT_INTEG_ADMIN] = { SVC_SCOPE_ADMIN, R_OWNER + 1 }, /* no role: platform admins only */
	[SVC_ACT_WS_BUILD_SCRIPTS] = { SVC_SCOPE_ADMIN, R_OWNER + 1 }, /* no role: platform admins only */
	[SVC_ACT_BACKEND_READ] = { SVC_SCOPE_READ, R_MEMBER },
	[SVC_ACT_BACKEND_CHANGE] = { SVC_SCOPE_WRITE, R_ADMIN },
	[SVC_ACT_SECRETS_READ] = { SVC_SCOPE_READ, R_MEMBER },
	[SVC_ACT_SECRETS_WRITE] = { SVC_SCOPE_WRITE, R_ADMIN },
};

int svc_perm_role_rank(const char *role)
{
	if (!role)
		return R_NONE;
	if (strcmp(role, "member") == 0)
		return R_MEMBER;
	if (strcmp(role, "admin") == 0)
		return R_ADMIN;
	if (strcmp(role, "owner") == 0)
		return R_OWNER;
	return R_NONE;
}

static int same_user(const char *a, const char *b)
{
	return a && b && *a && strcmp(a, b) == 0;
}

static int str_is(const char *s, const char *v)
{
	return s && strcmp(s, v) == 0;
}

/*
 * Project access by visibility, for a subject that is not a platform admin:
 * "public" is readable by anyone; "workspace" is open to every member;
 * "private" to its creator and the workspace's admins and owners.
 */
static int project_access(const struct svc_perm_subject *s, const struct svc_perm_object *o, int rank, int reading)
{
	const char *vis = o ? o->visibility : NULL;

	if (reading && str_is(vis, "public"))
		return 1;
	if (rank < R_MEMBER)
		return 0;
	if (str_is(vis, "private"))
		return rank >= R_ADMIN || same_user(s->user_id, o ? o->created_by : NULL);
	return 1;
}

/* Whether the rules allow it, without the scope and platform-admin steps. */
static int allowed(const struct svc_perm_subject *s, enum svc_action action, const struct svc_perm_object *o)
{
	int rank = svc_perm_role_rank(s->role);

	switch (action) {
	case SVC_ACT_READ:
		return project_access(s, o, rank, 1);
	case SVC_ACT_WRITE:
	case SVC_ACT_BACKEND_READ: /* members only: a public project's viewers see nothing of its backend */
	case SVC_ACT_SECRETS_READ: /* members only, likewise */
	case SVC_ACT_DELETE:
	case SVC_ACT_CHAT:
	case SVC_ACT_DEPLOY:
		return project_access(s, o, rank, 0);
	case SVC_ACT_VISIBILITY:
		return project_access(s, o, rank, 0) &&
		       (rank >= R_ADMIN || same_user(s->user_id, o ? o->created_by : NULL));
	case SVC_ACT_MEMBER_ADD:
		if (!o || svc_perm_role_rank(o->new_role) == R_NONE)
			return 0;
		return rank >= R_ADMIN && (svc_perm_role_rank(o->new_role) < R_OWNER || rank >= R_OWNER);
	case SVC_ACT_MEMBER_ROLE:
		if (!o || svc_perm_role_rank(o->new_role) == R_NONE || svc_perm_role_rank(o->member_role) == R_NONE)
			return 0;
		if (svc_perm_role_rank(o->new_role) == R_OWNER || svc_perm_role_rank(o->member_role) == R_OWNER)
			return rank >= R_OWNER;
		return rank >= R_ADMIN;
	case SVC_ACT_MEMBER_REMOVE:
		if (!o || svc_perm_role_rank(o->member_role) == R_NONE)
			return 0;
		if (same_user(s->user_id, o->member_id))
			return rank >= R_MEMBER; /* leaving */
		if (svc_perm_role_rank(o->member_role) >= R_ADMIN)
			return rank >= R_OWNER;
		return rank >= R_ADMIN;
	default:
		return rank >= rules[action].min_rank;
	}
}

int svc_perm_check(const struct svc_perm_subject *s, enum svc_action action, const struct svc_perm_object *o)
{
	int anonymous = !s || !s->user_id || !*s->user_id;

	if ((unsigned)action >= SVC_ACT__MAX)
		return SVC_E_FORBIDDEN;
	if (s && (s->scopes & rules[action].scope) != rules[action].scope)
		return anonymous ? SVC_E_UNAUTHORIZED : SVC_E_FORBIDDEN;
	if (!s)
		return SVC_E_UNAUTHORIZED;
	if (!anonymous && s->platform_admin) {
		/* member actions still need a real role to give or take */
		if ((action == SVC_ACT_MEMBER_ADD || action == SVC_ACT_MEMBER_ROLE) &&
		    (!o || svc_perm_role_rank(o->new_role) == R_NONE))
			return SVC_E_FORBIDDEN;
		return 0;
	}
	if (anonymous) {
		/* anonymous callers read public projects and nothing else */
		return action == SVC_ACT_READ && o && str_is(o->visibility, "public") ? 0 : SVC_E_UNAUTHORIZED;
	}
	return allowed(s, action, o) ? 0 : SVC_E_FORBIDDEN;
}
