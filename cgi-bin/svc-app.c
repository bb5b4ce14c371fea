/* svc-app.c: the FastCGI responder of /_svc/ on every site origin: the backend of the apps svc builds (docs/app-backend.md). */
#include "app/app.h"
#include "app/app_files.h"

#define APP_FLAGS (SVC_R_SITE | SVC_R_APP)
#define FILES_MAX_BODY (16 * 1024 * 1024) /* SVC_APP_FILE_MAX_MB's bound; the handler applies the setting */

static const struct svc_route routes[] = {
	{ SVC_GET, "/_svc/client.js", svc_app_client, APP_FLAGS, 0, NULL },
	{ SVC_POST, "/_svc/auth/signup", svc_app_signup, APP_FLAGS | SVC_R_JSON, 16 * 1024, &svc_app_credentials_body },
	{ SVC_POST, "/_svc/auth/login", svc_app_login, APP_FLAGS | SVC_R_JSON, 16 * 1024, &svc_app_credentials_body },
	{ SVC_POST, "/_svc/auth/logout", svc_app_logout, APP_FLAGS, 16 * 1024, NULL },
	{ SVC_GET, "/_svc/auth/me", svc_app_me, APP_FLAGS, 0, NULL },
	{ SVC_GET, "/_svc/data/:collection", svc_app_data_list, APP_FLAGS, 0, NULL },
	{ SVC_POST, "/_svc/data/:collection", svc_app_data_create, APP_FLAGS | SVC_R_JSON, 1024 * 1024, NULL },
	{ SVC_GET, "/_svc/data/:collection/:id", svc_app_data_get, APP_FLAGS, 0, NULL },
	{ SVC_PATCH, "/_svc/data/:collection/:id", svc_app_data_update, APP_FLAGS | SVC_R_JSON, 1024 * 1024, NULL },
	{ SVC_DELETE, "/_svc/data/:collection/:id", svc_app_data_delete, APP_FLAGS, 16 * 1024, NULL },
	/* appfetch: the calls svc.data.json declares (lib/app/app_fetch.c) */
	{ SVC_POST, "/_svc/fetch/:name", svc_app_fetch, APP_FLAGS | SVC_R_JSON, 256 * 1024, &svc_app_fetch_body },
	/* files (lib/app/app_files.c): the body is the file, up to SVC_APP_FILE_MAX_MB, checked by the handler */
	{ SVC_POST, "/_svc/files", svc_app_files_upload, APP_FLAGS, FILES_MAX_BODY, NULL },
	{ SVC_GET, "/_svc/files/:id", svc_app_files_get, APP_FLAGS, 0, NULL },
	{ SVC_DELETE, "/_svc/files/:id", svc_app_files_delete, APP_FLAGS, 16 * 1024, NULL },
};

int main(int argc, char **argv)
{
	return svc_fcgi_main(argc, argv, "svc-app", routes, sizeof routes / sizeof routes[0]);
}
