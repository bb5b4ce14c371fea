/* svc-auth.c: the FastCGI responder for /api/auth. */
#include "api/api.h"
#include "api/api_web.h"
#include "auth/auth.h"

static const struct svc_route routes[] = {
	{ SVC_POST, "/api/auth/signup", svc_api_auth_signup, SVC_R_JSON, 64 * 1024, &svc_api_auth_signup_body },
	{ SVC_POST, "/api/auth/login", svc_api_auth_login, SVC_R_JSON, 64 * 1024, &svc_api_auth_login_body },
	{ SVC_POST, "/api/auth/refresh", svc_api_auth_refresh, 0, 64 * 1024, NULL },
	{ SVC_POST, "/api/auth/logout", svc_api_auth_logout, 0, 64 * 1024, NULL },
	{ SVC_GET, "/api/auth/me", svc_api_auth_me, SVC_R_AUTH, 0, NULL },
	{ SVC_PATCH, "/api/auth/me", svc_api_auth_me_update, SVC_R_AUTH | SVC_R_JSON, 64 * 1024, &svc_api_auth_me_update_body },
	{ SVC_POST, "/api/auth/password", svc_api_auth_password, SVC_R_AUTH | SVC_R_JSON, 64 * 1024, &svc_api_auth_password_body },
	{ SVC_GET, "/api/auth/identities", svc_api_auth_identities_list, SVC_R_AUTH, 0, NULL },
	{ SVC_DELETE, "/api/auth/identities/:provider", svc_api_auth_identities_delete, SVC_R_AUTH, 0, NULL },
	{ SVC_GET, "/api/auth/providers", svc_api_auth_providers, 0, 0, NULL },
	{ SVC_GET, "/api/auth/tokens", svc_api_auth_tokens_list, SVC_R_AUTH, 0, NULL },
	{ SVC_POST, "/api/auth/tokens", svc_api_auth_tokens_create, SVC_R_AUTH | SVC_R_JSON, 16 * 1024, &svc_api_auth_tokens_create_body },
	{ SVC_DELETE, "/api/auth/tokens/:tokenId", svc_api_auth_tokens_delete, SVC_R_AUTH, 0, NULL },
	{ SVC_POST, "/api/auth/forgot-password", svc_api_auth_forgot, SVC_R_JSON, 16 * 1024, &svc_api_auth_forgot_body },
	{ SVC_POST, "/api/auth/reset-password", svc_api_auth_reset, SVC_R_JSON, 16 * 1024, &svc_api_auth_reset_body },
	{ SVC_POST, "/api/auth/verify-email", svc_api_auth_verify_email, SVC_R_JSON, 16 * 1024, &svc_api_auth_verify_body },
	{ SVC_GET, "/api/auth/github", svc_api_auth_oauth_start, 0, 0, NULL },
	{ SVC_GET, "/api/auth/github/callback", svc_api_auth_oauth_callback, 0, 0, NULL },
	{ SVC_GET, "/api/auth/github/link", svc_api_auth_oauth_link_start, SVC_R_AUTH, 0, NULL },
	{ SVC_GET, "/api/auth/github/assistant", svc_api_auth_assistant_start, SVC_R_AUTH, 0, NULL },
	{ SVC_GET, "/api/auth/github/assistant/callback", svc_api_auth_assistant_callback, SVC_R_OPTAUTH, 0, NULL },
	{ SVC_GET, "/api/auth/google", svc_api_auth_oauth_start, 0, 0, NULL },
	{ SVC_GET, "/api/auth/google/callback", svc_api_auth_oauth_callback, 0, 0, NULL },
	{ SVC_GET, "/api/auth/google/link", svc_api_auth_oauth_link_start, SVC_R_AUTH, 0, NULL },
};

int main(int argc, char **argv)
{
	return svc_fcgi_main(argc, argv, "svc-auth", routes, sizeof routes / sizeof routes[0]);
}
