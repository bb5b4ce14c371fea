/* svc-projects.c: the FastCGI responder for projects, files, versions, publishing, chats, workspaces, folders, thumbnails and direct save. */
#include "api/api.h"
#include "api/api_agent.h"
#include "api/api_web.h"

static const struct svc_route routes[] = {
	{ SVC_POST, "/api/workspaces/:wid/projects", svc_api_projects_create, SVC_R_AUTH | SVC_R_JSON, 0, &svc_api_projects_create_body },
	{ SVC_GET, "/api/projects", svc_api_projects_list, SVC_R_AUTH, 0, NULL },
	{ SVC_GET, "/api/projects/:id", svc_api_projects_get, SVC_R_OPTAUTH, 0, NULL },
	{ SVC_PATCH, "/api/projects/:id", svc_api_projects_update, SVC_R_AUTH | SVC_R_JSON, 0, &svc_api_projects_update_body },
	{ SVC_DELETE, "/api/projects/:id", svc_api_projects_delete, SVC_R_AUTH, 0, NULL },
	{ SVC_GET, "/api/projects/:id/files", svc_api_projects_files, SVC_R_OPTAUTH, 0, NULL },
	{ SVC_GET, "/api/projects/:id/files/*", svc_api_projects_file, SVC_R_OPTAUTH, 0, NULL },
	{ SVC_PUT, "/api/projects/:id/files/*", svc_api_projects_file_put, SVC_R_AUTH | SVC_R_JSON, 0, &svc_api_projects_file_put_body },
	{ SVC_PATCH, "/api/projects/:id/files/*", svc_api_projects_file_move, SVC_R_AUTH | SVC_R_JSON, 0, &svc_api_projects_file_move_body },
	{ SVC_DELETE, "/api/projects/:id/files/*", svc_api_projects_file_delete, SVC_R_AUTH, 0, NULL },
	{ SVC_GET, "/api/projects/:id/versions", svc_api_projects_versions, SVC_R_OPTAUTH, 0, NULL },
	{ SVC_GET, "/api/projects/:id/preview", svc_api_projects_preview, SVC_R_OPTAUTH, 0, NULL },
	{ SVC_GET, "/api/projects/:id/versions/:sha/diff", svc_api_projects_version_diff, SVC_R_OPTAUTH, 0, NULL },
	{ SVC_POST, "/api/projects/:id/versions/:sha/checkout", svc_api_projects_checkout, SVC_R_AUTH, 0, NULL },
	{ SVC_GET, "/api/projects/:projectId/chats", svc_api_chats_list, SVC_R_OPTAUTH, 0, NULL },
	{ SVC_POST, "/api/projects/:projectId/chats", svc_api_chats_create, SVC_R_AUTH | SVC_R_JSON, 0, &svc_api_chats_create_body },
	{ SVC_GET, "/api/projects/:projectId/deployments", svc_api_deployments_list, SVC_R_OPTAUTH, 0, NULL },
	{ SVC_POST, "/api/projects/:projectId/deployments/:deploymentId/restore", svc_api_deployments_restore, SVC_R_AUTH, 0, NULL },
	{ SVC_GET, "/api/domains/project/:projectId", svc_api_domains_list, SVC_R_AUTH, 0, NULL },
	{ SVC_POST, "/api/domains/project/:projectId", svc_api_domains_add, SVC_R_AUTH | SVC_R_JSON, 64 * 1024, &svc_api_domains_add_body },
	{ SVC_POST, "/api/domains/:domainId/verify", svc_api_domains_verify, SVC_R_AUTH, 0, NULL },
	{ SVC_DELETE, "/api/domains/:domainId", svc_api_domains_delete, SVC_R_AUTH, 0, NULL },
	{ SVC_PATCH, "/api/admin/workspaces/:wid", svc_api_admin_workspace_update, SVC_R_AUTH | SVC_R_JSON, 4 * 1024, &svc_api_admin_workspace_update_body },
	{ SVC_POST, "/api/projects/:id/restore", svc_api_projects_restore, SVC_R_AUTH, 0, NULL },
	{ SVC_POST, "/api/projects/:id/duplicate", svc_api_projects_duplicate, SVC_R_AUTH | SVC_R_JSON, 64 * 1024, &svc_api_projects_duplicate_body },
	{ SVC_GET, "/api/templates", svc_api_templates_list, SVC_R_AUTH, 0, NULL },
	{ SVC_GET, "/api/workspaces", svc_api_workspaces_list, SVC_R_AUTH, 0, NULL },
	{ SVC_POST, "/api/workspaces", svc_api_workspaces_create, SVC_R_AUTH | SVC_R_JSON, 64 * 1024, &svc_api_workspaces_create_body },
	{ SVC_GET, "/api/workspaces/:wid", svc_api_workspaces_get, SVC_R_AUTH, 0, NULL },
	{ SVC_PATCH, "/api/workspaces/:wid", svc_api_workspaces_update, SVC_R_AUTH | SVC_R_JSON, 64 * 1024, &svc_api_workspaces_update_body },
	{ SVC_GET, "/api/workspaces/:wid/build-settings", svc_api_build_settings_get, SVC_R_AUTH, 0, NULL },
	{ SVC_PUT, "/api/workspaces/:wid/build-settings", svc_api_build_settings_put, SVC_R_AUTH | SVC_R_JSON, 4 * 1024, &svc_api_build_settings_put_body },
	{ SVC_POST, "/api/workspaces/:wid/leave", svc_api_workspaces_leave, SVC_R_AUTH, 0, NULL },
	{ SVC_POST, "/api/workspaces/:wid/transfer", svc_api_workspaces_transfer, SVC_R_AUTH | SVC_R_JSON, 64 * 1024, &svc_api_workspaces_transfer_body },
	{ SVC_GET, "/api/workspaces/:wid/members", svc_api_members_list, SVC_R_AUTH, 0, NULL },
	{ SVC_POST, "/api/workspaces/:wid/members", svc_api_members_add, SVC_R_AUTH | SVC_R_JSON, 64 * 1024, &svc_api_members_add_body },
	{ SVC_PATCH, "/api/workspaces/:wid/members/:userId", svc_api_members_update, SVC_R_AUTH | SVC_R_JSON, 64 * 1024, &svc_api_members_update_body },
	{ SVC_DELETE, "/api/workspaces/:wid/members/:userId", svc_api_members_remove, SVC_R_AUTH, 0, NULL },
	{ SVC_GET, "/api/workspaces/:wid/ai-provider", svc_api_ai_provider_get, SVC_R_AUTH, 0, NULL },
	{ SVC_PUT, "/api/workspaces/:wid/ai-provider", svc_api_ai_provider_put, SVC_R_AUTH | SVC_R_JSON, 64 * 1024, &svc_api_ai_provider_put_body },
	{ SVC_GET, "/api/workspaces/:wid/credits", svc_api_credits_get, SVC_R_AUTH, 0, NULL },
	{ SVC_PUT, "/api/workspaces/:wid/credits", svc_api_credits_put, SVC_R_AUTH | SVC_R_JSON, 4 * 1024, NULL },
	{ SVC_GET, "/api/workspaces/:wid/folders", svc_api_folders_list, SVC_R_AUTH, 0, NULL },
	{ SVC_POST, "/api/workspaces/:wid/folders", svc_api_folders_create, SVC_R_AUTH | SVC_R_JSON, 64 * 1024, &svc_api_folders_create_body },
	{ SVC_PATCH, "/api/folders/:folderId", svc_api_folders_update, SVC_R_AUTH | SVC_R_JSON, 64 * 1024, &svc_api_folders_update_body },
	{ SVC_DELETE, "/api/folders/:folderId", svc_api_folders_delete, SVC_R_AUTH, 0, NULL },
	{ SVC_POST, "/api/direct-save/:projectId", svc_api_direct_save, SVC_R_AUTH | SVC_R_JSON, 0, &svc_api_direct_save_body },
	{ SVC_GET, "/api/thumbnails/:file", svc_api_thumbnails_get, SVC_R_OPTAUTH, 0, NULL },
	{ SVC_POST, "/api/thumbnails/:projectId/regenerate", svc_api_thumbnails_regenerate, SVC_R_AUTH, 0, NULL },
};

int main(int argc, char **argv)
{
	return svc_fcgi_main(argc, argv, "svc-projects", routes, sizeof routes / sizeof routes[0]);
}
