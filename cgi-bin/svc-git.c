/* svc-git.c: the FastCGI responder of Git's smart HTTP, /api/git/<projectId>.git/ (docs/git.md): clone, fetch and push through git-http-backend. */
#include "api/api.h"

static const struct svc_route routes[] = {
	/* authentication (HTTP Basic with an API token, or the session) and the body are the handler's */
	{ SVC_GET | SVC_POST, "/api/git/*", svc_api_git_serve, SVC_R_RAWBODY, 0, NULL },
};

int main(int argc, char **argv)
{
	return svc_fcgi_main(argc, argv, "svc-git", routes, sizeof routes / sizeof routes[0]);
}
