/* svc-auth.c: the FastCGI responder for /api/auth. */
#include "api.h"

static const struct svc_route routes[] = {
	{ SVC_POST, "/api/auth/signup", svc_api_auth_signup, SVC_R_JSON, 64 * 1024 },
	{ SVC_POST, "/api/auth/login", svc_api_auth_login, SVC_R_JSON, 64 * 1024 },
	{ SVC_POST, "/api/auth/refresh", svc_api_auth_refresh, 0, 64 * 1024 },
	{ SVC_POST, "/api/auth/logout", svc_api_auth_logout, 0, 64 * 1024 },
	{ SVC_GET, "/api/auth/me", svc_api_auth_me, SVC_R_AUTH, 0 },
};

int main(int argc, char **argv)
{
	return svc_fcgi_main(argc, argv, "svc-auth", routes, sizeof routes / sizeof routes[0]);
}
