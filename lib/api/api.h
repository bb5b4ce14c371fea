/* api.h: the HTTP handlers of every endpoint group and the one permission module they share. */
#ifndef SVC_API_H
#define SVC_API_H

#include "http/http.h"
#include "auth/perm.h"

/*
 * Handlers. Each answers as described in docs/api.md; the statuses each can
 * give besides the router's (404 unknown route, 405, 401, 413, 415,
 * 400 invalid_json) are listed at its definition.
 */
int svc_api_auth_signup(struct svc_req *req, struct svc_resp *resp);
int svc_api_auth_login(struct svc_req *req, struct svc_resp *resp);
int svc_api_auth_refresh(struct svc_req *req, struct svc_resp *resp);
int svc_api_auth_logout(struct svc_req *req, struct svc_resp *resp);
int svc_api_auth_me(struct svc_req *req, struct svc_resp *resp);

int svc_api_projects_create(struct svc_req *req, struct svc_resp *resp);
int svc_api_projects_list(struct svc_req *req, struct svc_resp *resp);
int svc_api_projects_get(struct svc_req *req, struct svc_resp *resp);
int svc_api_projects_update(struct svc_req *req, struct svc_resp *resp);
int svc_api_projects_delete(struct svc_req *req, struct svc_resp *resp);
int svc_api_projects_files(struct svc_req *req, struct svc_resp *resp);
int svc_api_projects_file(struct svc_req *req, struct svc_resp *resp);
int svc_api_projects_versions(struct svc_req *req, struct svc_resp *resp);
int svc_api_projects_checkout(struct svc_req *req, struct svc_resp *resp);
int svc_api_projects_deploy(struct svc_req *req, struct svc_resp *resp);
int svc_api_projects_restore(struct svc_req *req, struct svc_resp *resp);
int svc_api_projects_duplicate(struct svc_req *req, struct svc_resp *resp);
int svc_api_chats_list(struct svc_req *req, struct svc_resp *resp);
int svc_api_chats_create(struct svc_req *req, struct svc_resp *resp);

int svc_api_workspaces_list(struct svc_req *req, struct svc_resp *resp);
int svc_api_workspaces_create(struct svc_req *req, struct svc_resp *resp);
int svc_api_workspaces_get(struct svc_req *req, struct svc_resp *resp);
int svc_api_workspaces_update(struct svc_req *req, struct svc_resp *resp);
int svc_api_workspaces_leave(struct svc_req *req, struct svc_resp *resp);
int svc_api_workspaces_transfer(struct svc_req *req, struct svc_resp *resp);
int svc_api_members_list(struct svc_req *req, struct svc_resp *resp);
int svc_api_members_add(struct svc_req *req, struct svc_resp *resp);
int svc_api_members_update(struct svc_req *req, struct svc_resp *resp);
int svc_api_members_remove(struct svc_req *req, struct svc_resp *resp);
int svc_api_folders_list(struct svc_req *req, struct svc_resp *resp);
int svc_api_folders_create(struct svc_req *req, struct svc_resp *resp);
int svc_api_folders_update(struct svc_req *req, struct svc_resp *resp);
int svc_api_folders_delete(struct svc_req *req, struct svc_resp *resp);

int svc_api_thumbnails_get(struct svc_req *req, struct svc_resp *resp);
int svc_api_thumbnails_regenerate(struct svc_req *req, struct svc_resp *resp);
int svc_api_direct_save(struct svc_req *req, struct svc_resp *resp);

int svc_api_chat_send(struct svc_req *req, struct svc_resp *resp);
int svc_api_chat_history(struct svc_req *req, struct svc_resp *resp);

/* Column indexes of a project row (lib/db_stmts.h PROJECT_COLS). */
enum {
	PCOL_ID, PCOL_WORKSPACE, PCOL_FOLDER, PCOL_SLUG, PCOL_NAME, PCOL_DESCRIPTION,
	PCOL_TEMPLATE, PCOL_VISIBILITY, PCOL_THUMBNAIL, PCOL_PUBLISHED, PCOL_DOMAIN,
	PCOL_CREATED, PCOL_UPDATED, PCOL_CREATED_BY, PCOL_EXTRA, PCOL_ADMIN
};

/*
 * Loads project `id` (a well-formed UUID) for the caller and checks `action`
 * with svc_perm_check(). On success *out holds one row (PCOL_* columns, with
 * the caller's role in PCOL_EXTRA, NULL for none, and "1" in PCOL_ADMIN for
 * a platform admin) that the caller frees with svc_rows_free().
 * Errors: SVC_E_NOT_FOUND (unknown or soft-deleted), SVC_E_UNAUTHORIZED
 * (anonymous and not allowed), SVC_E_FORBIDDEN, DB errors.
 */
int svc_project_load(struct svc_req *req, const char *id, enum svc_action action, struct svc_rows **out);

/*
 * As svc_project_load(), for a soft-deleted project when `deleted` is 1, or
 * for either state when `deleted` is -1.
 */
int svc_project_load_state(struct svc_req *req, const char *id, enum svc_action action, int deleted,
			   struct svc_rows **out);

/*
 * Checks `action` for the caller on the project in row 0 of `rows` (as
 * svc_project_load() returns it). Returns 0, SVC_E_UNAUTHORIZED or SVC_E_FORBIDDEN.
 */
int svc_project_check(struct svc_req *req, const struct svc_rows *rows, enum svc_action action);

/*
 * Fills `s` for the caller of `req`: user id, the platform-admin flag from
 * `admin_flag` ("1" when set, as the statements return it), `role` (borrowed,
 * NULL for none) and the scopes of the credential (SVC_SCOPE_ALL for a session).
 */
void svc_req_subject(struct svc_req *req, const char *role, const char *admin_flag, struct svc_perm_subject *s);

/* Builds the Project JSON of the spec's Project table from row `r` of `rows`. */
struct json_object *svc_project_json(const struct svc_rows *rows, size_t r);

/* Writes the absolute directory of project `id` into out (max bytes). Returns 0 or SVC_E_INTERNAL. */
int svc_project_dir(const struct svc_config *cfg, const char *id, char *out, size_t max);

/* Column indexes of a workspace row (STMT_WS_GET). */
enum { WCOL_ID, WCOL_NAME, WCOL_KIND, WCOL_CREATED, WCOL_UPDATED, WCOL_ROLE, WCOL_ADMIN };

/*
 * Loads workspace `wid` for the caller and checks `action` (with `o` as the
 * object, or only the workspace's kind when o is NULL). *out holds one row
 * (WCOL_* columns) freed with svc_rows_free(). Errors: SVC_E_NOT_FOUND (no
 * such workspace, or `wid` not a UUID), SVC_E_FORBIDDEN, DB errors.
 */
int svc_workspace_load(struct svc_req *req, const char *wid, enum svc_action action,
		       const struct svc_perm_object *o, struct svc_rows **out);

/*
 * Looks up the caller's role in workspace `wid` and checks that the caller
 * may create projects there. Writes "member", "admin" or "owner" into role
 * (16 bytes; "" for a platform admin who is not a member). Errors:
 * SVC_E_NOT_FOUND (no such workspace), SVC_E_FORBIDDEN (not allowed).
 */
int svc_workspace_role(struct svc_req *req, const char *wid, char *role);

#endif
