/* api.h: the HTTP handlers of every endpoint group and the one permission module they share. */
#ifndef SVC_API_H
#define SVC_API_H

#include "http.h"

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
int svc_api_chats_list(struct svc_req *req, struct svc_resp *resp);
int svc_api_chats_create(struct svc_req *req, struct svc_resp *resp);

int svc_api_chat_send(struct svc_req *req, struct svc_resp *resp);
int svc_api_chat_history(struct svc_req *req, struct svc_resp *resp);

/* What a caller wants to do with a project (spec "Authentication" 10). */
enum svc_action {
	SVC_ACT_READ,        /* list, get, files, versions, chats list */
	SVC_ACT_WRITE,       /* update, chat, checkout, deploy, create chat */
	SVC_ACT_DELETE,      /* soft delete */
	SVC_ACT_HARD_DELETE, /* delete rows and files */
};

/*
 * The one permission decision for projects: `role` is the caller's role in
 * the project's workspace ("member", "admin", "owner", or NULL/"" for none),
 * `visibility` the project's. Returns 0 when allowed, SVC_E_FORBIDDEN
 * otherwise. Reading needs membership or visibility "public"; writing and
 * soft-deleting need membership; hard-deleting needs "owner".
 */
int svc_perm_project(const char *role, const char *visibility, enum svc_action action);

/* Column indexes of a project row (lib/db_stmts.h PROJECT_COLS). */
enum {
	PCOL_ID, PCOL_WORKSPACE, PCOL_FOLDER, PCOL_SLUG, PCOL_NAME, PCOL_DESCRIPTION,
	PCOL_TEMPLATE, PCOL_VISIBILITY, PCOL_THUMBNAIL, PCOL_PUBLISHED, PCOL_DOMAIN,
	PCOL_CREATED, PCOL_UPDATED, PCOL_CREATED_BY, PCOL_EXTRA
};

/*
 * Loads project `id` (a well-formed UUID) for the authenticated caller and
 * checks `action`. On success *out holds one row (PCOL_* columns, with the
 * caller's role in PCOL_EXTRA) that the caller frees with svc_rows_free().
 * Errors: SVC_E_NOT_FOUND (unknown or deleted), SVC_E_FORBIDDEN, DB errors.
 */
int svc_project_load(struct svc_req *req, const char *id, enum svc_action action, struct svc_rows **out);

/* Builds the Project JSON of the spec's Project table from row `r` of `rows`. */
struct json_object *svc_project_json(const struct svc_rows *rows, size_t r);

/* Writes the absolute directory of project `id` into out (max bytes). Returns 0 or SVC_E_INTERNAL. */
int svc_project_dir(const struct svc_config *cfg, const char *id, char *out, size_t max);

/*
 * Looks up the caller's role in workspace `wid`. Writes "member", "admin" or
 * "owner" into role (16 bytes). Errors: SVC_E_NOT_FOUND (no such workspace),
 * SVC_E_FORBIDDEN (not a member).
 */
int svc_workspace_role(struct svc_req *req, const char *wid, char *role);

#endif
