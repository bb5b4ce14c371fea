/* perm.h: the one permission decision of svc: who may do what to projects, workspaces, members and folders. */
#ifndef SVC_PERM_H
#define SVC_PERM_H

/*
 * Every action a caller can ask for, by resource. Handlers name the action
 * and hand svc_perm_check() what they loaded; they never compare roles
 * themselves. The rules (spec "Authentication" 10, docs/api.md
 * "Permissions") are in lib/auth/perm.c, in one table plus the few rules that
 * depend on the resource (a project's visibility and creator, the roles of
 * the member acted on).
 */
enum svc_action {
	/* projects */
	SVC_ACT_READ,            /* get, list, files, versions, chats, timeline, thumbnail, duplicate (source) */
	SVC_ACT_WRITE,           /* update name/description/folder, chat, checkout, deploy, direct-save, new chat, thumbnail regeneration */
	SVC_ACT_VISIBILITY,      /* change a project's visibility */
	SVC_ACT_DELETE,          /* soft delete and restore */
	SVC_ACT_HARD_DELETE,     /* delete the rows and the files */
	SVC_ACT_PROJECT_CREATE,  /* create a project in a workspace, or duplicate into it (target) */
	/* workspaces */
	SVC_ACT_WS_READ,         /* get the workspace, list its members and folders */
	SVC_ACT_WS_UPDATE,       /* rename the workspace */
	SVC_ACT_WS_LEAVE,        /* leave it (any member; the last owner is stopped by the caller's count) */
	/* members (the object names the member acted on) */
	SVC_ACT_MEMBER_ADD,      /* add a user with object->new_role */
	SVC_ACT_MEMBER_ROLE,     /* change object->member_role into object->new_role */
	SVC_ACT_MEMBER_REMOVE,   /* remove a member whose role is object->member_role */
	SVC_ACT_WS_TRANSFER,     /* make another member owner and step down to admin */
	/* folders */
	SVC_ACT_FOLDER_WRITE,    /* create, rename, delete a folder */
	/* projects, by credential scope (API tokens): same roles as SVC_ACT_WRITE */
	SVC_ACT_CHAT,            /* send chat and plan messages, stop a generation */
	SVC_ACT_DEPLOY,          /* publish a project, custom domains */
	/* workspace credits (lib/api/api_credits.c) */
	SVC_ACT_WS_CREDIT_LIMIT, /* change a workspace's credit limit: platform admins only, not even its owner */
	/* design comments (svc-wsd, wsd/comments.c) */
	SVC_ACT_COMMENT_MODERATE, /* delete another member's design comment (its author may always delete it) */
	/* custom domains and plans (lib/api/api_domains.c) */
	SVC_ACT_DOMAINS,         /* add, verify, remove a project's custom domains: workspace admin or higher */
	SVC_ACT_WS_PLAN,         /* change a workspace's plan: platform admins only */
	/* integrations (lib/api/api_integrations.c) */
	SVC_ACT_INTEG_ADMIN,     /* the integration admin endpoints, xray: platform admins only (spec "Authentication" 10) */
	/* builds (issue 27) */
	SVC_ACT_WS_BUILD_SCRIPTS, /* allow or forbid install scripts in a workspace's builds: platform admins only */
	SVC_ACT_BACKEND_READ,    /* the apps' backend of a project as builders see it (counts, records, end users): members */
	SVC_ACT_BACKEND_CHANGE,  /* change an app's records and end users (fix, delete, disable): workspace admin or higher */
	/* the apps' project secrets (lib/api/api_secrets.c, issue 28) */
	SVC_ACT_SECRETS_READ,    /* list a project's secrets' names (never values): members; a public project's viewers nothing */
	SVC_ACT_SECRETS_WRITE,   /* set, replace, delete a project's secret: workspace admin or higher */
	SVC_ACT__MAX
};

/*
 * Scopes of a credential. A session (cookie or Bearer access token) holds
 * SVC_SCOPE_ALL. Per-user API tokens (spec "Authentication" 7) carry a
 * subset (lib/auth/auth.h svc_pat_route_scopes() turns a token's scopes into
 * these for each request); an action needs the scope of its class on top
 * of the role rules.
 */
#define SVC_SCOPE_READ 1u   /* every read action */
#define SVC_SCOPE_WRITE 2u  /* project and folder writes, deletes */
#define SVC_SCOPE_ADMIN 4u  /* workspace and member management, hard delete, visibility */
#define SVC_SCOPE_CHAT 8u   /* SVC_ACT_CHAT */
#define SVC_SCOPE_DEPLOY 16u /* SVC_ACT_DEPLOY */
#define SVC_SCOPE_ALL (SVC_SCOPE_READ | SVC_SCOPE_WRITE | SVC_SCOPE_ADMIN | SVC_SCOPE_CHAT | SVC_SCOPE_DEPLOY)

/* Who asks. Strings are borrowed. */
struct svc_perm_subject {
	const char *user_id;     /* the caller, "" or NULL when anonymous */
	int platform_admin;      /* users.is_platform_admin: may do everything */
	const char *role;        /* "member", "admin", "owner" in the resource's workspace; NULL/"" = not a member */
	unsigned scopes;         /* SVC_SCOPE_*: what the credential allows */
};

/* What is acted on; only the fields the action needs are read. Strings are borrowed. */
struct svc_perm_object {
	const char *visibility;  /* projects: "private", "workspace", "public" */
	const char *created_by;  /* projects: the creator's user id */
	const char *kind;        /* workspaces: "personal" or "team" */
	const char *member_id;   /* member actions: the user acted on */
	const char *member_role; /* member actions: that user's current role (NULL for an add) */
	const char *new_role;    /* member add and role change: the role asked for */
};

/*
 * Decides whether subject `s` may do `action` to `o` (which may be NULL for
 * actions that read nothing of it). The rules, in order:
 *   1. the credential must hold the action's scope (SVC_SCOPE_*);
 *   2. a platform admin may do everything;
 *   3. otherwise the role in the workspace decides: reading a project needs
 *      visibility "public", or membership for "workspace", or for "private"
 *      being its creator or an admin or owner; writing and soft-deleting need
 *      the same access as reading, minus "public" for non-members;
 *      visibility changes need admin or owner, or the project's creator;
 *      hard delete and ownership transfer need owner; creating projects,
 *      folder writes, workspace reads and leaving need membership; renaming
 *      the workspace and adding, changing or removing members need admin or
 *      owner, and anything that gives, takes or touches the owner role needs
 *      owner; removing oneself is leaving, which any member may do; no role
 *      may change a workspace's credit limit (SVC_ACT_WS_CREDIT_LIMIT);
 *      deleting another member's design comment needs admin or owner
 *      (SVC_ACT_COMMENT_MODERATE; a comment's author is svc-wsd's check).
 * Structural rules (a workspace keeps an owner, a personal workspace has one
 * member) are not permissions: the handlers answer 409 for them.
 * Returns 0 when allowed; SVC_E_UNAUTHORIZED when denied to an anonymous
 * caller (who should sign in); SVC_E_FORBIDDEN when denied otherwise.
 * The project listing (lib/db/db_stmts_workspaces.h, PROJECT_VISIBLE) encodes
 * rule 3 for reading in SQL; tests/e2e/test_permissions.py checks that list
 * and get agree for every role and visibility.
 */
int svc_perm_check(const struct svc_perm_subject *s, enum svc_action action, const struct svc_perm_object *o);

/* Returns the rank of a role name: 0 none/unknown, 1 member, 2 admin, 3 owner. */
int svc_perm_role_rank(const char *role);

#endif
