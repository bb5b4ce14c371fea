/* api_web.h: what the web application needs besides the spec's endpoints: the preview origin, templates, sign-in providers. */
#ifndef SVC_API_WEB_H
#define SVC_API_WEB_H

#include <stddef.h>

#include "http/http.h"

/*
 * Handlers (docs/api.md "Preview", "Templates", "Sign-in providers"). Each
 * answers as documented; the statuses besides the router's are listed at its
 * definition.
 */
enum svc_err svc_api_projects_preview(struct svc_req *req, struct svc_resp *resp);
enum svc_err svc_api_templates_list(struct svc_req *req, struct svc_resp *resp);
enum svc_err svc_api_auth_providers(struct svc_req *req, struct svc_resp *resp);

/*
 * The handler of svc-preview (routes "/" and "/<rest>", SVC_R_SITE): serves
 * the working tree of the project that the preview token in the Host
 * (<token>.preview.<SVC_DOMAIN>[:port]) names, as static files: directories
 * answer their index.html (a directory without the final slash is a 301 to
 * it), Content-Type from the extension, `Content-Security-Policy:
 * frame-ancestors <app_url's origin>`, `Access-Control-Allow-Origin: *`
 * (the sandboxed iframe has an opaque origin; module scripts and fetches of
 * its own files need it), `Cache-Control: no-store`, never a cookie. Errors
 * are small HTML pages: 403 for a missing, malformed, forged or expired
 * token; 404 for a deleted or unknown project, a missing file or a refused
 * path (dot segments, `..`, anything lib/core/fsx.h refuses); 413 for a file
 * over 16 MiB.
 */
enum svc_err svc_api_preview_serve(struct svc_req *req, struct svc_resp *resp);

/*
 * Writes the public URL of host `label`.<SVC_DOMAIN> into out (max bytes):
 * app_url's scheme, and SVC_HTTP_PORT (else app_url's port) unless it is 80
 * or 443, with a final "/": "http://todo.localhost:8080/". `label` is one or
 * more DNS labels ("todo", "<token>.preview"). Returns 0, or SVC_E_INTERNAL
 * when it does not fit.
 */
int svc_api_site_url(const struct svc_config *cfg, const char *label, char *out, size_t max);

#endif
