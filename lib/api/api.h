/* api.h: the HTTP handlers of every endpoint group; the loaders they share are in lib/project/project.h. */
#ifndef SVC_API_H
#define SVC_API_H

#include "http/http.h"
#include "auth/perm.h"
#include "project/project.h"

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

#endif
