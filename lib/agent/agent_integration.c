/* agent_integration.c: the agent's integration_request tool: an HTTPS call to an integration's API hosts with the credential injected by the server, through the SSRF guard, bounded and recorded for xray. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <curl/curl.h>
#include <openssl/crypto.h>

#include "agent/agent.h"
#include "integ/inject.h"
#include "auth/crypto.h"
#include "core/err.h"
#include "core/json.h"
#include "core/log.h"
#include "core/outbound.h"
#include "core/util.h"
#include "integ/integ.h"
#include "integ/integ_oauth.h"

#define URL_MAX 2048
#define BODY_MAX (64 * 1024)          /* bytes of a request body */
#define HEADERS_MAX 20                /* headers the model may set */

static const char schema[] =
	"{\"type\":\"object\",\"properties\":{"
	"\"integration\":{\"type\":\"string\",\"description\":\"the integration id, e.g. \\\"slack\\\"\"},"
	"\"method\":{\"type\":\"string\",\"enum\":[\"GET\",\"HEAD\",\"POST\",\"PUT\",\"PATCH\",\"DELETE\"]},"
	"\"url\":{\"type\":\"string\",\"description\":\"the full https URL, on one of the integration's API hosts\"},"
	"\"headers\":{\"type\":\"object\",\"additionalProperties\":{\"type\":\"string\"},"
	"\"description\":\"extra headers; never credentials\"},"
	"\"body\":{\"type\":\"string\",\"description\":\"the request body (JSON as text)\"}},"
	"\"required\":[\"integration\",\"url\"],\"additionalProperties\":false}";
static const char description[] =
	"Call the API of an integration (a third-party service enabled in this workspace) over HTTPS. The server adds "
	"the credential (the user's account connected for this workspace, else the platform's where allowed); never put "
	"keys or tokens in headers. An integration may be read-only here (GET and HEAD only). "
	"Answers the HTTP status, the content type and the body (cut when long).";

int svc_agent__integration_available(const struct svc_agent_integ *ig)
{
	struct svc_dbv p = svc_dbv_str(ig->workspace_id);
	struct svc_rows *rows = NULL;
	int yes = svc_db_run(ig->db, STMT_INTEG_ANY_ENABLED, &p, 1, &rows, NULL) == 0 && rows && rows->nrows > 0;

	svc_rows_free(rows);
	return yes;
}

int svc_agent__integration_def(struct json_object *defs, int anthropic)
{
	struct json_object *t = json_object_new_object(), *fn, *s = json_tokener_parse(schema);

	if (!t || !s) {
		json_object_put(t);
		json_object_put(s);
		return SVC_E_INTERNAL;
	}
	if (anthropic) {
		json_object_object_add(t, "name", json_object_new_string("integration_request"));
		json_object_object_add(t, "description", json_object_new_string(description));
		json_object_object_add(t, "input_schema", s);
	} else {
		fn = json_object_new_object();
		json_object_object_add(t, "type", json_object_new_string("function"));
		json_object_object_add(t, "function", fn);
		json_object_object_add(fn, "name", json_object_new_string("integration_request"));
		json_object_object_add(fn, "description", json_object_new_string(description));
		json_object_object_add(fn, "parameters", s);
	}
	json_object_array_add(defs, t);
	return 0;
}

/* A malloc'd copy of printf output; NULL when out of memory. */
static char *textf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *textf(const char *fmt, ...)
{
	struct svc_buf b;
	va_list ap;
	char tmp[1024];

	va_start(ap, fmt);
	vsnprintf(tmp, sizeof tmp, fmt, ap);
	va_end(ap);
	svc_buf_init(&b, sizeof tmp);
	if (svc_buf_adds(&b, tmp) < 0)
		return NULL;
	return svc_buf_detach(&b, NULL);
}

/* Whether header name `h` is one the model may not set (credentials, hop-by-hop, framing). */
static int forbidden_header(const char *h)
{
	static const char *const names[] = { "authorization", "proxy-authorization", "cookie", "host", "content-length",
					     "transfer-encoding", "connection", "x-api-key", NULL };
	size_t i;

	if (strncasecmp(h, "proxy-", 6) == 0)
		return 1;
	for (i = 0; names[i]; i++)
		if (strcasecmp(h, names[i]) == 0)
			return 1;
	return 0;
}

/* Appends "Name: value" to *list; SVC_E_VALIDATION for CR/LF in the value. */
static int add_header(struct curl_slist **list, const char *name, const char *value)
{
	struct svc_buf b;
	struct curl_slist *n;

	if (strpbrk(value, "\r\n"))
		return SVC_E_VALIDATION;
	svc_buf_init(&b, 16384);
	if (svc_buf_addf(&b, "%s: %s", name, value) < 0) {
		svc_buf_dispose(&b);
		return SVC_E_TOO_LARGE;
	}
	n = curl_slist_append(*list, svc_buf_str(&b));
	svc_buf_wipe(&b);
	if (!n)
		return SVC_E_INTERNAL;
	*list = n;
	return 0;
}

/* Records the end of call `id`. */
static void call_end(struct svc_db *db, const char *id, long status, const char *error)
{
	struct svc_dbv p[3];

	p[0] = status > 0 ? svc_dbv_i64(status) : svc_dbv_null();
	p[1] = svc_dbv_str(error);
	p[2] = svc_dbv_str(id);
	if (svc_db_run(db, STMT_INTEG_CALL_END, p, 3, NULL, NULL) < 0)
		svc_log_warn("integrations: the end of call %s was not recorded", id);
}

static const char *const methods[] = { "GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", NULL };

/* What integration_calls.credential records for a credential kind. */
static const char *cred_kind_name(const struct svc_integ_cred *cred)
{
	return cred->kind == SVC_INTEG_CRED_USER ? "user" : cred->kind == SVC_INTEG_CRED_NONE ? "none" : "platform";
}

/* One integration_request call as it is checked, made and recorded (svc_agent__integration_run()). */
struct icall {
	const struct svc_agent_integ *ig;
	const char *id, *url, *method, *body; /* the model's arguments */
	struct json_object *headers;
	int allow_http;                        /* SVC_INTEG_ALLOW_HTTP=1 */
	long timeout_secs;                     /* SVC_INTEG_TIMEOUT_SECS */
	int read_only;                         /* GET and HEAD only; -1 until decided */
	char host[256];
	struct svc_integ_cred cred;
	struct svc_integ_inject inj;     /* what the credential adds */
	struct svc_buf full_url;               /* the URL with the credential's query */
	struct curl_slist *list;               /* the request's headers */
	struct svc_outbound_xfer a;           /* the transfer and its answer */
	size_t max_body;                       /* SVC_INTEG_MAX_RESPONSE_BYTES */
	CURL *c;
	char call_id[37];
	int recorded;                          /* the call is in integration_calls */
	long status;
	const char *error;                     /* what integration_calls.error records, or NULL */
};

/* The call's settings and arguments; the method defaults to GET. */
static void icall_init(struct icall *ic, const struct svc_agent_integ *ig, struct json_object *args)
{

	memset(ic, 0, sizeof *ic);
	ic->ig = ig;
	ic->id = svc_json_str(args, "integration");
	ic->url = svc_json_str(args, "url");
	ic->method = svc_json_str(args, "method");
	ic->body = svc_json_str(args, "body");
	ic->headers = json_object_object_get(args, "headers");
	ic->read_only = -1;
	svc_buf_init(&ic->full_url, URL_MAX + 65536 + 2);
	/* bounds and defaults: the settings table (lib/core/config_table.c) */
	ic->max_body = (size_t)ig->cfg->integ_max_response_bytes;
	ic->timeout_secs = (long)ig->cfg->integ_timeout_secs;
	ic->allow_http = ig->cfg->integ_allow_http;
	if (!ic->method)
		ic->method = "GET";
}

/* The arguments' shapes and sizes. Returns 0 or SVC_E_VALIDATION with the reason in *out. */
static int icall_check_args(const struct icall *ic, char **out)
{
	size_t i;

	for (i = 0; methods[i] && strcmp(methods[i], ic->method) != 0; i++)
		;
	if (!ic->id || !svc_integ_id_valid(ic->id) || !ic->url || strlen(ic->url) > URL_MAX || !methods[i] ||
	    (ic->body && strlen(ic->body) > BODY_MAX) || (ic->headers && !json_object_is_type(ic->headers, json_type_object)) ||
	    (ic->headers && json_object_object_length(ic->headers) > HEADERS_MAX)) {
		*out = textf("integration_request needs integration (an id), url (at most %d bytes), method (GET, HEAD, "
			     "POST, PUT, PATCH or DELETE), optional headers (at most %d strings) and body (at most %d bytes)",
			     URL_MAX, HEADERS_MAX, BODY_MAX);
		return SVC_E_VALIDATION;
	}
	return 0;
}

/* The integration is enabled in the workspace and the URL is https (or allowed http) with a host; read-only as the admin chose. */
static int icall_check_enabled(struct icall *ic, char **out)
{
	const struct svc_agent_integ *ig = ic->ig;
	struct svc_rows *rows = NULL;
	struct svc_dbv p[6];
	int err = 0;

	p[0] = svc_dbv_str(ig->workspace_id);
	p[1] = svc_dbv_str(ig->workspace_id);
	p[2] = svc_dbv_str(ig->user_id);
	p[3] = svc_dbv_str(ig->workspace_id);
	p[4] = svc_dbv_str(ig->workspace_id);
	p[5] = svc_dbv_str(ic->id);
	if ((err = svc_db_run(ig->db, STMT_INTEG_GET, p, 6, &rows, NULL)) < 0)
		return err;
	if (!rows || rows->nrows != 1 || !svc_rows_get(rows, 0, ICOL_ENABLED) ||
	    strcmp(svc_rows_get(rows, 0, ICOL_ENABLED), "1") != 0) {
		*out = textf("the integration \"%.64s\" is not enabled in this workspace", ic->id);
		err = SVC_E_FORBIDDEN;
	} else if (!(strncmp(ic->url, "https://", 8) == 0 || (ic->allow_http && strncmp(ic->url, "http://", 7) == 0)) ||
		   svc_integ_url_host(ic->url, ic->host, sizeof ic->host) < 0) {
		*out = textf("the url must be an https:// URL");
		err = SVC_E_VALIDATION;
	} else if (svc_rows_get(rows, 0, ICOL_READ_ONLY)) { /* the workspace admin's choice; else the default, below */
		ic->read_only = strcmp(svc_rows_get(rows, 0, ICOL_READ_ONLY), "1") == 0;
	}
	svc_rows_free(rows);
	return err;
}

/*
 * The URL's host is an API host of the integration; the credential the call uses (the user's, the
 * platform's, or none where the integration takes none); read-only calls only (GET and HEAD) where
 * the admin chose so, or by default with the platform's credential; what the credential adds.
 */
static int icall_credential(struct icall *ic, char **out)
{
	const struct svc_agent_integ *ig = ic->ig;
	struct svc_dbv p = svc_dbv_str(ic->id);
	struct svc_rows *rows = NULL;
	const char *hosts;
	int err;

	if ((err = svc_db_run(ig->db, STMT_INTEG_DEF, &p, 1, &rows, NULL)) < 0 || !rows || rows->nrows != 1) {
		svc_rows_free(rows);
		return err < 0 ? err : SVC_E_NOT_FOUND;
	}
	hosts = svc_rows_get(rows, 0, IDCOL_API_HOSTS);
	if (!svc_integ_list_has(hosts, ic->host)) {
		*out = textf("denied: %.253s is not an API host of %s (allowed: %.300s)", ic->host, ic->id,
			     hosts && *hosts ? hosts : "none");
		err = SVC_E_FORBIDDEN;
	} else if ((err = svc_integ_credential(ig->db, ig->cfg, ig->user_id, ic->id, ig->workspace_id, &ic->cred)) < 0) {
		*out = textf(err == SVC_E_UNAUTHORIZED ? "the user's connection to %s expired: ask them to connect again"
						       : "the credential of %s could not be used",
			     ic->id);
	} else if (ic->cred.kind == SVC_INTEG_CRED_NONE && !svc_integ_list_has(svc_rows_get(rows, 0, IDCOL_AUTH_TYPES), "none")) {
		*out = textf("no credential for %s in this workspace: the user can connect their account for this "
			     "workspace on the Integrations page, or a platform admin can allow the platform's here", ic->id);
		err = SVC_E_FORBIDDEN;
	}
	svc_rows_free(rows);
	if (err < 0)
		return err;
	/* read-only (GET and HEAD): the workspace admin's choice, by default so with the platform's credential */
	if (ic->read_only < 0)
		ic->read_only = ic->cred.kind != SVC_INTEG_CRED_USER && ic->cred.kind != SVC_INTEG_CRED_NONE;
	if (ic->read_only && strcmp(ic->method, "GET") != 0 && strcmp(ic->method, "HEAD") != 0) {
		*out = textf("denied: %s is read-only in this workspace (GET and HEAD only)%s", ic->id,
			     ic->cred.kind == SVC_INTEG_CRED_USER ? ""
								  : "; a workspace admin can allow writes on the Integrations page");
		return SVC_E_FORBIDDEN;
	}
	if ((err = svc_integ_inject(&ic->cred, &ic->inj)) < 0)
		*out = textf("the credential of %s could not be used", ic->id);
	return err;
}

/* The request: the model's headers (none that the credential sets), then the credential's; its query after the model's. */
static int icall_request(struct icall *ic, char **out)
{
	size_t i;
	int err;

	if (ic->headers) {
		json_object_object_foreach(ic->headers, key, val)
		{
			int injected = 0;
			for (i = 0; i < ic->inj.nheaders; i++)
				if (strncasecmp(ic->inj.headers[i], key, strlen(key)) == 0 && ic->inj.headers[i][strlen(key)] == ':')
					injected = 1;
			if (!svc_integ_header_name_valid(key) || forbidden_header(key) || injected ||
			    !json_object_is_type(val, json_type_string)) {
				*out = textf("the header \"%.64s\" may not be set (credentials are added by the server)", key);
				return SVC_E_FORBIDDEN;
			}
			if ((err = add_header(&ic->list, key, json_object_get_string(val))) < 0) {
				*out = textf("the header \"%.64s\" is not valid", key);
				return err;
			}
		}
	}
	for (i = 0; i < ic->inj.nheaders; i++) {
		struct curl_slist *n = curl_slist_append(ic->list, ic->inj.headers[i]);
		if (!n)
			return SVC_E_INTERNAL;
		ic->list = n;
	}
	/* the credential's query parameters go after the model's (a fragment is never sent anyway) */
	if ((err = svc_buf_add(&ic->full_url, ic->url, strcspn(ic->url, "#"))) < 0 ||
	    (ic->inj.query.len &&
	     ((err = svc_buf_adds(&ic->full_url, strchr(svc_buf_str(&ic->full_url), '?') ? "&" : "?")) < 0 ||
	      (err = svc_buf_add(&ic->full_url, ic->inj.query.data, ic->inj.query.len)) < 0)))
		return err;
	return 0;
}

/* Records the call in integration_calls before it starts (xray's active and stuck calls). */
static int icall_record(struct icall *ic)
{
	const struct svc_agent_integ *ig = ic->ig;
	char path[URL_MAX + 1];
	const char *rest;
	struct svc_dbv p[8];
	int err;

	rest = ic->url + (ic->url[4] == 's' ? 8 : 7);
	rest += strcspn(rest, "/?#");
	snprintf(path, sizeof path, "%s", *rest ? rest : "/");
	path[strcspn(path, "?#")] = '\0';
	if ((err = svc_uuid_v4(ic->call_id)) < 0)
		return err;
	p[0] = svc_dbv_str(ic->call_id);
	p[1] = svc_dbv_str(ic->id);
	p[2] = svc_dbv_str(ig->user_id);
	p[3] = svc_dbv_str(ig->project_id);
	p[4] = svc_dbv_str(cred_kind_name(&ic->cred));
	p[5] = svc_dbv_str(ic->method);
	p[6] = svc_dbv_str(ic->host);
	p[7] = svc_dbv_str(path);
	if ((err = svc_db_run(ig->db, STMT_INTEG_CALL_START, p, 8, NULL, NULL)) < 0)
		return err;
	ic->recorded = 1;
	return 0;
}

/* Makes the call through the SSRF guard, no redirects, within the timeout. Returns 0 or the failure with its reason in *out. */
static int icall_perform(struct icall *ic, char **out)
{
	struct svc_outbound_policy policy;
	struct svc_outbound_req req;
	int rc;

	if (!(ic->c = svc_outbound_handle()))
		return SVC_E_INTERNAL;
	svc_outbound_policy_load(ic->ig->cfg, &policy);
	memset(&req, 0, sizeof req);
	req.url = svc_buf_str(&ic->full_url);
	req.method = ic->method;
	req.body = ic->body;
	req.body_len = ic->body ? strlen(ic->body) : 0;
	req.headers = ic->list;
	req.protocols = ic->allow_http ? "http,https" : "https";
	req.reach = SVC_OUTBOUND_GUARDED;
	req.policy = &policy;
	req.connect_timeout_ms = 10000;
	req.timeout_ms = ic->timeout_secs * 1000;
	req.max_body = ic->max_body;
	req.user_agent = "svc-integration";
	if (svc_outbound_setup(ic->c, &req, &ic->a) < 0)
		return SVC_E_INTERNAL;
	rc = svc_outbound_perform(&ic->a);
	ic->status = ic->a.status;
	if (rc == 0)
		return 0;
	if (rc == SVC_E_FORBIDDEN) {
		ic->error = "refused";
		*out = textf("denied: %.253s is a %s address, which svc does not call", ic->host,
			     svc_net_kind_name(ic->a.guard.kind));
		return SVC_E_FORBIDDEN;
	}
	if (ic->a.too_large) {
		ic->error = "too_large";
		*out = textf("the answer of %.253s is larger than %zu bytes; ask for less", ic->host, ic->a.max_body);
		return SVC_E_TOO_LARGE;
	}
	if (ic->a.rc == CURLE_OPERATION_TIMEDOUT) {
		ic->error = "timeout";
		*out = textf("%.253s did not answer within %ld s", ic->host, ic->timeout_secs);
		return SVC_E_UNAVAILABLE;
	}
	ic->error = "network";
	*out = textf("the call to %.253s failed: %s", ic->host, curl_easy_strerror(ic->a.rc));
	return SVC_E_UNAVAILABLE;
}

/* The answer for the model: "HTTP <status>\ncontent-type: <type>\n\n<body>", every copy of the credential replaced. */
static int icall_answer(struct icall *ic, char **out)
{
	struct svc_buf res;
	int err;

	if (!ic->a.content_type[0])
		snprintf(ic->a.content_type, sizeof ic->a.content_type, "none");
	if (svc_buf_add(&ic->a.body, "", 0) < 0)
		return SVC_E_INTERNAL;
	if ((err = svc_integ_scrub(&ic->inj, &ic->a.body)) < 0)
		return err;
	svc_buf_init(&res, ic->a.body.len + 256);
	if (svc_buf_addf(&res, "HTTP %ld\ncontent-type: %s\n\n", ic->status, ic->a.content_type) < 0 ||
	    svc_buf_add(&res, ic->a.body.data ? ic->a.body.data : "", ic->a.body.len) < 0) {
		svc_buf_dispose(&res);
		return SVC_E_INTERNAL;
	}
	*out = svc_buf_detach(&res, NULL);
	return 0;
}

/* Records how a recorded call ended and frees (and wipes) what the call held. */
static void icall_dispose(struct icall *ic, int err)
{
	if (ic->recorded)
		call_end(ic->ig->db, ic->call_id, ic->status, ic->error ? ic->error : (err < 0 ? "failed" : NULL));
	svc_outbound_xfer_dispose(&ic->a);
	svc_integ_cred_dispose(&ic->cred);
	svc_integ_inject_dispose(&ic->inj);
	svc_buf_wipe(&ic->full_url);
	if (ic->list) {
		struct curl_slist *n;
		for (n = ic->list; n; n = n->next)
			OPENSSL_cleanse(n->data, strlen(n->data));
		curl_slist_free_all(ic->list);
	}
	if (ic->c)
		curl_easy_cleanup(ic->c);
}

int svc_agent__integration_run(const struct svc_agent_integ *ig, struct json_object *args, char **out)
{
	struct icall ic;
	int err;

	*out = NULL;
	icall_init(&ic, ig, args);
	if ((err = icall_check_args(&ic, out)) == 0 && (err = icall_check_enabled(&ic, out)) == 0 &&
	    (err = icall_credential(&ic, out)) == 0 && (err = icall_request(&ic, out)) == 0 &&
	    (err = icall_record(&ic)) == 0 && (err = icall_perform(&ic, out)) == 0)
		err = icall_answer(&ic, out);
	icall_dispose(&ic, err);
	if (!*out && err < 0)
		*out = textf("the integration call failed");
	return err;
}
