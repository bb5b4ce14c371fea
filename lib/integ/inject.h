/* inject.h: what a credential injects into an integration call (headers, query) and the scrubbing of those values out of the answer the model sees (lib/integ/inject.c, used by the agent's integration_request tool; docs/agent.md "Integrations"). */
#ifndef SVC_INTEG_INJECT_H
#define SVC_INTEG_INJECT_H

#include <stddef.h>

#include "core/util.h"
#include "integ/integ_oauth.h"

#define SVC_INTEG_SCRUB_MIN 8   /* bytes: shorter injected values are not scrubbed (too common a text) */
#define SVC_INTEG_MARK "[credential]" /* what a scrubbed value becomes */

/*
 * What a credential adds to one call, filled by svc_integ_inject() and
 * emptied by svc_integ_inject_dispose() (which cleanses every byte).
 */
struct svc_integ_inject {
	char **headers;          /* "Name: value" lines (malloc'd, NUL-terminated), in the order made */
	size_t nheaders, cap_headers;
	struct svc_buf query;    /* "name=value&..." (values percent-encoded) to add to the URL; "" when none */
	char **secrets;          /* the texts svc_integ_scrub() replaces (malloc'd, NUL-terminated) */
	size_t nsecrets, cap_secrets;
};

/*
 * Templates credential `cred` into headers and query parameters:
 * SVC_INTEG_CRED_USER and _SECRET give "Authorization: Bearer <secret>";
 * _BASIC ({username, password} JSON) "Authorization: Basic
 * base64(username:password)" (RFC 7617 section 2); _CUSTOM (a JSON object of
 * strings) one header NAME per field "header:NAME", one query parameter NAME
 * per field "query:NAME" (percent-encoded, RFC 3986 section 2.1), and
 * "Authorization: Bearer" for a field "token" or "apiKey"; other fields are
 * not sent. Names must be 1 to 64 bytes of [A-Za-z0-9_-]; a field whose name
 * is not is skipped. Every injected value of at least SVC_INTEG_SCRUB_MIN
 * bytes (and Basic's username, password and "username:password") is put in
 * out->secrets with its standard Base64 (with and without padding), base64url,
 * percent-encoded (upper and lower case hex, and '+' for spaces) and
 * JSON-escaped forms, longest first. `out` is zeroed first and owned by the
 * caller (svc_integ_inject_dispose()) even on error. Returns 0, or
 * SVC_E_VALIDATION (a value holds CR, LF or NUL: never sent), SVC_E_INTERNAL
 * (the stored JSON does not parse, or out of memory), SVC_E_TOO_LARGE.
 */
int svc_integ_inject(const struct svc_integ_cred *cred, struct svc_integ_inject *out);

/* Cleanses and frees what svc_integ_inject() filled; safe on a zeroed struct. */
void svc_integ_inject_dispose(struct svc_integ_inject *in);

/*
 * Replaces every occurrence of every text of in->secrets in `b` (the answer of
 * the integration's API, `b->len` bytes, NUL-terminated or not) with
 * SVC_INTEG_MARK, so that a secret the API echoes (raw, Base64 or
 * percent-encoded) never reaches the model. `b` keeps its maximum; its old
 * bytes are cleansed. Returns 0, or SVC_E_TOO_LARGE (the marks would pass
 * b's maximum; `b` is emptied, so nothing unscrubbed is left) or
 * SVC_E_INTERNAL (out of memory, `b` emptied likewise).
 */
int svc_integ_scrub(const struct svc_integ_inject *in, struct svc_buf *b);

/* 1 when `h` is 1 to 64 bytes of [A-Za-z0-9_-] (a header or query name a credential or the model may use), else 0. */
int svc_integ_header_name_valid(const char *h);

#endif
