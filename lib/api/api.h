/* api.h: the HTTP handlers of every endpoint group and their list answer; the loaders they share are in lib/project/project.h. */
#ifndef SVC_API_H
#define SVC_API_H

#include "http/http.h"
#include "auth/perm.h"
#include "project/project.h"

/*
 * Turns row `r` of `rows` into a new JSON object (owned by the caller);
 * `parent_id` is the id svc_resp_items() listed under.
 */
typedef struct json_object *svc_row_json_fn(const struct svc_rows *rows, size_t r, const char *parent_id);

/* What svc_resp_items() lists: under whom, with which statement, each row as what. */
struct svc_items {
	enum {
		SVC_ITEMS_OF_USER,      /* the caller's own: no parent loaded, the user id is the parent */
		SVC_ITEMS_OF_PROJECT,   /* a project's: svc_project_load() with `action` */
		SVC_ITEMS_OF_WORKSPACE, /* a workspace's: svc_workspace_load() with `action` */
	} parent;
	const char *param;        /* the route parameter naming the parent (NULL for SVC_ITEMS_OF_USER) */
	enum svc_action action;   /* checked on the parent (unused for SVC_ITEMS_OF_USER) */
	enum svc_stmt stmt;       /* the list, its one parameter the parent's id */
	svc_row_json_fn *row_json;
};

/*
 * The list handlers' one shape (lib/api/api_items.c): loads the parent `it`
 * names for the caller of `req` (svc_req_caller(); checking its
 * permission), runs it->stmt with the parent's id and answers
 * 200 {"items": [...]}, each row turned into JSON by it->row_json, in the
 * statement's order. Returns what svc_resp_json() returns, or the error of
 * loading the parent (SVC_E_NOT_FOUND, SVC_E_UNAUTHORIZED, SVC_E_FORBIDDEN)
 * or of the statement (DB errors), nothing answered then.
 */
enum svc_err svc_resp_items(struct svc_req *req, struct svc_resp *resp, const struct svc_items *it);

/*
 * Resolves a version id as the versions list shows it: writes into out (41
 * bytes) the full sha of the one commit reachable from HEAD of the
 * repository in `dir` that `sha` (7 to 40 hex digits, either case) starts
 * with. SVC_E_NOT_FOUND for no match, several matches or a malformed sha.
 * Shared by the version endpoints (api_files.c) and the export (api_gitio.c).
 */
int svc_api__version_sha(const char *dir, const char *sha, char *out);

/*
 * Handlers. Each answers as described in docs/api.md; the statuses each can
 * give besides the router's (404 unknown route, 405, 401, 413, 415,
 * 400 invalid_json, 400 validation_failed from its fields) are listed at its
 * definition. A handler that reads a JSON body names its fields in
 * svc_api_<handler>_body, which its route row carries (lib/http/http.h
 * struct svc_body): the router checks them before the handler runs.
 */
enum svc_err svc_api_auth_signup(struct svc_req *req, struct svc_resp *resp);
enum svc_err svc_api_auth_login(struct svc_req *req, struct svc_resp *resp);
enum svc_err svc_api_auth_refresh(struct svc_req *req, struct svc_resp *resp);
enum svc_err svc_api_auth_logout(struct svc_req *req, struct svc_resp *resp);
enum svc_err svc_api_auth_me(struct svc_req *req, struct svc_resp *resp);
enum svc_err svc_api_auth_tokens_list(struct svc_req *req, struct svc_resp *resp);
enum svc_err svc_api_auth_tokens_create(struct svc_req *req, struct svc_resp *resp);
enum svc_err svc_api_auth_tokens_delete(struct svc_req *req, struct svc_resp *resp);
enum svc_err svc_api_auth_forgot(struct svc_req *req, struct svc_resp *resp);
enum svc_err svc_api_auth_verify_email(struct svc_req *req, struct svc_resp *resp);
enum svc_err svc_api_auth_reset(struct svc_req *req, struct svc_resp *resp);
enum svc_err svc_api_auth_oauth_start(struct svc_req *req, struct svc_resp *resp);
enum svc_err svc_api_auth_oauth_callback(struct svc_req *req, struct svc_resp *resp);
enum svc_err svc_api_auth_assistant_start(struct svc_req *req, struct svc_resp *resp);
enum svc_err svc_api_auth_assistant_callback(struct svc_req *req, struct svc_resp *resp);
enum svc_err svc_api_auth_oauth_link_start(struct svc_req *req, struct svc_resp *resp);
enum svc_err svc_api_auth_me_update(struct svc_req *req, struct svc_resp *resp);
enum svc_err svc_api_auth_password(struct svc_req *req, struct svc_resp *resp);
enum svc_err svc_api_auth_identities_list(struct svc_req *req, struct svc_resp *resp);
enum svc_err svc_api_auth_identities_delete(struct svc_req *req, struct svc_resp *resp);
extern const struct svc_body svc_api_auth_signup_body;
extern const struct svc_body svc_api_auth_login_body;
extern const struct svc_body svc_api_auth_tokens_create_body;
extern const struct svc_body svc_api_auth_forgot_body;
extern const struct svc_body svc_api_auth_verify_body;
extern const struct svc_body svc_api_auth_reset_body;
extern const struct svc_body svc_api_auth_me_update_body;
extern const struct svc_body svc_api_auth_password_body;

enum svc_err svc_api_projects_create(struct svc_req *req, struct svc_resp *resp);
enum svc_err svc_api_projects_list(struct svc_req *req, struct svc_resp *resp);
enum svc_err svc_api_projects_get(struct svc_req *req, struct svc_resp *resp);
enum svc_err svc_api_projects_update(struct svc_req *req, struct svc_resp *resp);
enum svc_err svc_api_projects_delete(struct svc_req *req, struct svc_resp *resp);
enum svc_err svc_api_projects_files(struct svc_req *req, struct svc_resp *resp);
enum svc_err svc_api_projects_file(struct svc_req *req, struct svc_resp *resp);
enum svc_err svc_api_projects_file_put(struct svc_req *req, struct svc_resp *resp);
/* The apps' backend for builders (lib/api/api_backend.c, docs/api.md "The apps' backend: for builders"). */
enum svc_err svc_api_backend_get(struct svc_req *req, struct svc_resp *resp);
enum svc_err svc_api_backend_records(struct svc_req *req, struct svc_resp *resp);
enum svc_err svc_api_backend_users(struct svc_req *req, struct svc_resp *resp);
enum svc_err svc_api_backend_user_delete(struct svc_req *req, struct svc_resp *resp);
enum svc_err svc_api_backend_empty(struct svc_req *req, struct svc_resp *resp);
/* builders' fixes and the export (issue 28 "For builders"; docs/api.md "The apps' backend: for builders") */
enum svc_err svc_api_backend_record_get(struct svc_req *req, struct svc_resp *resp);
enum svc_err svc_api_backend_record_update(struct svc_req *req, struct svc_resp *resp);
enum svc_err svc_api_backend_record_delete(struct svc_req *req, struct svc_resp *resp);
enum svc_err svc_api_backend_user_update(struct svc_req *req, struct svc_resp *resp);
enum svc_err svc_api_backend_export(struct svc_req *req, struct svc_resp *resp);
extern const struct svc_body svc_api_backend_user_update_body; /* {disabled: boolean} */

/*
 * appfetch: a project's secrets for its app's calls (lib/api/api_secrets.c, docs/api.md "The apps' secrets"):
 * GET /projects/:id/secrets (names only), PUT .../secrets/:name {value} (201 new, 200 replaced), DELETE
 * .../secrets/:name (204). Members list; workspace admins and owners set and delete (SVC_ACT_SECRETS_*).
 */
enum svc_err svc_api_secrets_list(struct svc_req *req, struct svc_resp *resp);
enum svc_err svc_api_secrets_put(struct svc_req *req, struct svc_resp *resp);
enum svc_err svc_api_secrets_delete(struct svc_req *req, struct svc_resp *resp);
extern const struct svc_body svc_api_secrets_put_body;
enum svc_err svc_api_projects_file_move(struct svc_req *req, struct svc_resp *resp);
enum svc_err svc_api_projects_file_delete(struct svc_req *req, struct svc_resp *resp);
extern const struct svc_body svc_api_projects_file_put_body;
extern const struct svc_body svc_api_projects_file_move_body;
enum svc_err svc_api_projects_versions(struct svc_req *req, struct svc_resp *resp);
enum svc_err svc_api_projects_checkout(struct svc_req *req, struct svc_resp *resp);
enum svc_err svc_api_projects_revert(struct svc_req *req, struct svc_resp *resp); /* issue 29: take back one version */
enum svc_err svc_api_projects_version_diff(struct svc_req *req, struct svc_resp *resp);
enum svc_err svc_api_projects_deploy(struct svc_req *req, struct svc_resp *resp);
enum svc_err svc_api_deployments_list(struct svc_req *req, struct svc_resp *resp);
enum svc_err svc_api_deployments_restore(struct svc_req *req, struct svc_resp *resp);
enum svc_err svc_api_build_settings_get(struct svc_req *req, struct svc_resp *resp);
enum svc_err svc_api_build_settings_put(struct svc_req *req, struct svc_resp *resp);
extern const struct svc_body svc_api_build_settings_put_body;
enum svc_err svc_api_projects_restore(struct svc_req *req, struct svc_resp *resp);
/* custom domains, plans, on-demand TLS (lib/api/api_domains.c) */
enum svc_err svc_api_domains_list(struct svc_req *req, struct svc_resp *resp);
enum svc_err svc_api_domains_add(struct svc_req *req, struct svc_resp *resp);
enum svc_err svc_api_domains_delete(struct svc_req *req, struct svc_resp *resp);
enum svc_err svc_api_domains_verify(struct svc_req *req, struct svc_resp *resp);
enum svc_err svc_api_admin_workspace_update(struct svc_req *req, struct svc_resp *resp);
enum svc_err svc_api_tls_ask(struct svc_req *req, struct svc_resp *resp);
extern const struct svc_body svc_api_domains_add_body;
extern const struct svc_body svc_api_admin_workspace_update_body;
enum svc_err svc_api_projects_duplicate(struct svc_req *req, struct svc_resp *resp);
enum svc_err svc_api_chats_list(struct svc_req *req, struct svc_resp *resp);
enum svc_err svc_api_chats_create(struct svc_req *req, struct svc_resp *resp);
extern const struct svc_body svc_api_projects_create_body;
extern const struct svc_body svc_api_projects_update_body;
extern const struct svc_body svc_api_projects_duplicate_body;
extern const struct svc_body svc_api_chats_create_body;

enum svc_err svc_api_workspaces_list(struct svc_req *req, struct svc_resp *resp);
enum svc_err svc_api_workspaces_create(struct svc_req *req, struct svc_resp *resp);
enum svc_err svc_api_workspaces_get(struct svc_req *req, struct svc_resp *resp);
enum svc_err svc_api_workspaces_update(struct svc_req *req, struct svc_resp *resp);
enum svc_err svc_api_workspaces_leave(struct svc_req *req, struct svc_resp *resp);
enum svc_err svc_api_workspaces_transfer(struct svc_req *req, struct svc_resp *resp);
enum svc_err svc_api_members_list(struct svc_req *req, struct svc_resp *resp);
enum svc_err svc_api_members_add(struct svc_req *req, struct svc_resp *resp);
enum svc_err svc_api_members_update(struct svc_req *req, struct svc_resp *resp);
enum svc_err svc_api_members_remove(struct svc_req *req, struct svc_resp *resp);
enum svc_err svc_api_folders_list(struct svc_req *req, struct svc_resp *resp);
enum svc_err svc_api_folders_create(struct svc_req *req, struct svc_resp *resp);
enum svc_err svc_api_folders_update(struct svc_req *req, struct svc_resp *resp);
enum svc_err svc_api_folders_delete(struct svc_req *req, struct svc_resp *resp);
extern const struct svc_body svc_api_workspaces_create_body;
extern const struct svc_body svc_api_workspaces_update_body;
extern const struct svc_body svc_api_workspaces_transfer_body;
extern const struct svc_body svc_api_members_add_body;
extern const struct svc_body svc_api_members_update_body;
extern const struct svc_body svc_api_folders_create_body;
extern const struct svc_body svc_api_folders_update_body;

enum svc_err svc_api_thumbnails_get(struct svc_req *req, struct svc_resp *resp);
/* GET /projects/:id/checks/:file: a preview check's screenshot (lib/api/api_thumbnails.c). */
enum svc_err svc_api_check_screenshot(struct svc_req *req, struct svc_resp *resp);
enum svc_err svc_api_thumbnails_regenerate(struct svc_req *req, struct svc_resp *resp);
enum svc_err svc_api_direct_save(struct svc_req *req, struct svc_resp *resp);
extern const struct svc_body svc_api_direct_save_body;

enum svc_err svc_api_chat_send(struct svc_req *req, struct svc_resp *resp);
enum svc_err svc_api_chat_history(struct svc_req *req, struct svc_resp *resp);
extern const struct svc_body svc_api_chat_send_body;

/* ---- Git over smart HTTP (lib/api/api_git.c, docs/git.md) ---- */

/*
 * GET /git/<projectId>.git/info/refs?service=git-upload-pack|git-receive-pack,
 * POST .../git-upload-pack and .../git-receive-pack (svc-git, route flag
 * SVC_R_RAWBODY): authenticates (HTTP Basic with an API token as the
 * password, or the session), checks the project and runs git-http-backend,
 * streamed both ways; a push holds the project's lock and its working tree
 * follows main after it. Besides what git-http-backend answers: 401 with
 * `WWW-Authenticate: Basic realm="svc"` (no or a bad credential), 403 (an
 * API token without git:read or git:write, or a push to a project the caller
 * may only read), 404 (another path, or a project the caller may not read),
 * 405 (GET of a POST service and the reverse), 413 (a push past the quota's
 * room), 500.
 */
enum svc_err svc_api_git_serve(struct svc_req *req, struct svc_resp *resp);

/* GET /projects/:id/branches: 200 {items: [{name, sha, main, updatedAt}]}, main first; 401; 403; 404. */
enum svc_err svc_api_projects_branches(struct svc_req *req, struct svc_resp *resp);

#endif
