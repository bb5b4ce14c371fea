/* svc-preview.c: the FastCGI responder of the preview origin <token>.preview.<SVC_DOMAIN>: a project's working tree as static files. */
#include "api/api_web.h"

static const struct svc_route routes[] = {
	{ SVC_GET, "/", svc_api_preview_serve, SVC_R_SITE, 0, NULL },
	{ SVC_GET, "/*", svc_api_preview_serve, SVC_R_SITE, 0, NULL },
};

int main(int argc, char **argv)
{
	return svc_fcgi_main(argc, argv, "svc-preview", routes, sizeof routes / sizeof routes[0]);
}
