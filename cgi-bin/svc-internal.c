/* svc-internal.c: the FastCGI responder for the signed internal endpoints svc-wsd calls, the on-demand TLS question, and the design-comment list. */
#include "api/api.h"
#include "api/api_internal.h"

static const struct svc_route routes[] = {
	{ SVC_POST, "/api/internal/projects/:id/files-changed", svc_api_internal_files_changed, SVC_R_INTERNAL, 256 * 1024, NULL },
	{ SVC_POST, "/api/internal/projects/:id/presence", svc_api_internal_presence, SVC_R_INTERNAL, 256 * 1024, NULL },
	{ SVC_POST, "/api/internal/design-comments/:id", svc_api_internal_comment_add, SVC_R_INTERNAL, 64 * 1024, NULL },
	{ SVC_POST, "/api/internal/design-comments/:id/resolve", svc_api_internal_comment_resolve, SVC_R_INTERNAL, 4096, NULL },
	{ SVC_POST, "/api/internal/design-comments/:id/unresolve", svc_api_internal_comment_unresolve, SVC_R_INTERNAL, 4096, NULL },
	{ SVC_POST, "/api/internal/design-comments/:id/delete", svc_api_internal_comment_delete, SVC_R_INTERNAL, 4096, NULL },
	{ SVC_GET, "/api/internal/tls/ask", svc_api_tls_ask, SVC_R_LOCAL, 0, NULL },
	{ SVC_GET, "/api/projects/:id/design-comments", svc_api_design_comments_list, SVC_R_OPTAUTH, 0, NULL },
};

int main(int argc, char **argv)
{
	return svc_fcgi_main(argc, argv, "svc-internal", routes, sizeof routes / sizeof routes[0]);
}
