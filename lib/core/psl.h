/* psl.h: the public suffix list (libpsl): registrable domains, and the cookie-tossing check of app_url against SVC_DOMAIN. */
#ifndef SVC_CORE_PSL_H
#define SVC_CORE_PSL_H

#include <stddef.h>

struct psl_ctx_st;

/*
 * The public suffix list, loaded once per process: the newest of the
 * system's file (Debian's publicsuffix package) and libpsl's built-in copy
 * (psl_latest, else psl_builtin). Returns a borrowed pointer that lives as
 * long as the process, or NULL when neither loads. Not thread-safe on its
 * first call: call it once before starting threads.
 */
const struct psl_ctx_st *svc_psl(void);

/*
 * Whether the web app at `app_url` (an http(s) URL) and the published sites
 * under `svc_domain` (SVC_DOMAIN, a bare host name) share a registrable
 * domain (eTLD+1, https://publicsuffix.org/), so a site at
 * <slug>.<svc_domain> may set cookies for that parent domain that the app
 * then receives (cookie tossing: a planted svc_access_token or CSRF
 * cookie; issue 17, finding 5; RFC 6265 §8.6). Host names compare without
 * case and a final dot. An IP address, a host without a registrable domain
 * ("localhost", a public suffix) or a URL without a host shares nothing.
 * Returns 1 and writes the shared registrable domain into `out_reg` (of
 * `reg_size` bytes; cut to fit) when they share one, 0 when they do not,
 * SVC_E_INTERNAL when the list cannot be loaded (out_reg untouched then).
 */
int svc_psl_shared_site(const char *app_url, const char *svc_domain, char *out_reg, size_t reg_size);

/*
 * The operator's warning of svc_psl_shared_site(): when `app_url` and
 * `svc_domain` share a registrable domain, writes one line of text (no
 * newline; cut to fit `size` bytes) into `out` naming both settings and the
 * shared domain and what to do, and returns 1; else 0 (out untouched).
 * svc-admin check prints it, every responder logs it at start-up.
 */
int svc_psl_shared_site_warning(const char *app_url, const char *svc_domain, char *out, size_t size);

#endif
