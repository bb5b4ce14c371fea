/* psl.c: the public suffix list (libpsl), loaded once; whether app_url and SVC_DOMAIN share a registrable domain. */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>
#include <libpsl.h>

#include "core/err.h"
#include "core/psl.h"

const struct psl_ctx_st *svc_psl(void)
{
	static const psl_ctx_t *ctx;

	if (!ctx)
		ctx = psl_latest(NULL);
	if (!ctx)
		ctx = psl_builtin();
	return ctx;
}

/* Lower-cases `in` without a final dot into out (size bytes). Returns 0, or -1 when empty or too long. */
static int host_norm(const char *in, char *out, size_t size)
{
	size_t i, len = in ? strlen(in) : 0;

	if (len > 0 && in[len - 1] == '.')
		len--;
	if (len == 0 || len >= size)
		return -1;
	for (i = 0; i < len; i++)
		out[i] = (char)((in[i] >= 'A' && in[i] <= 'Z') ? in[i] - 'A' + 'a' : in[i]);
	out[len] = '\0';
	return 0;
}

/* The registrable domain of host `h` into out (size bytes): 0, or -1 for an IP address or none. */
static int registrable(const psl_ctx_t *ctx, const char *h, char *out, size_t size)
{
	unsigned char a[16];
	const char *reg;

	if (inet_pton(AF_INET, h, a) == 1 || inet_pton(AF_INET6, h, a) == 1 || !(reg = psl_registrable_domain(ctx, h)))
		return -1;
	return (size_t)snprintf(out, size, "%s", reg) < size ? 0 : -1;
}

int svc_psl_shared_site(const char *app_url, const char *svc_domain, char *out_reg, size_t reg_size)
{
	const psl_ctx_t *ctx = svc_psl();
	char app[256], dom[256], reg_app[256], reg_dom[256], *host = NULL;
	CURLU *u;
	int shared = 0;

	if (!ctx)
		return SVC_E_INTERNAL;
	if (!(u = curl_url()))
		return SVC_E_INTERNAL;
	if (curl_url_set(u, CURLUPART_URL, app_url ? app_url : "", 0) == CURLUE_OK &&
	    curl_url_get(u, CURLUPART_HOST, &host, 0) == CURLUE_OK && host[0] != '[' &&
	    host_norm(host, app, sizeof app) == 0 && host_norm(svc_domain, dom, sizeof dom) == 0 &&
	    registrable(ctx, app, reg_app, sizeof reg_app) == 0 && registrable(ctx, dom, reg_dom, sizeof reg_dom) == 0 &&
	    strcmp(reg_app, reg_dom) == 0) {
		shared = 1;
		if (reg_size)
			snprintf(out_reg, reg_size, "%s", reg_app);
	}
	curl_free(host);
	curl_url_cleanup(u);
	return shared;
}

int svc_psl_shared_site_warning(const char *app_url, const char *svc_domain, char *out, size_t size)
{
	char reg[256];

	if (svc_psl_shared_site(app_url, svc_domain, reg, sizeof reg) != 1)
		return 0;
	snprintf(out, size,
		 "SVC_APP_URL (%s) and SVC_DOMAIN (%s) share the registrable domain %s: a published site can set "
		 "cookies for %s that the app receives (cookie tossing); publish sites under a domain of their own "
		 "(docs/operations.md \"Sites on a domain of their own\")",
		 app_url, svc_domain, reg, reg);
	return 1;
}
