/* agent_integration.c: the agent's integration_request tool: an HTTPS call to an integration's API hosts with the credential injected by the server, through the SSRF guard, bounded and recorded for xray. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <curl/curl.h>
#include <openssl/crypto.h>

#include "agent/agent.h"
#include "auth/crypto.h"
#include "core/err.h"
#include "core/json.h"
#include "core/log.h"
#include "core/outbound.h"
#include "core/util.h"
#include "project/integ.h"
#include "project/integ_oauth.h"

#define URL_MAX 2048
#define BODY_MAX (64 * 1024)          /* bytes of a request body */
#define HEADERS_MAX 20                /* headers the model may set */

static const char schema[] =
	"{\"type\":\"object\",\"properties\":{"
	"\"integration\":{\"type\":\"string\",\"description\":\"the integration id, e.g. \\\"slack\\\"\"},"
	"\"method\":{\"type\":\"string\",\"enum\":[\"GET\",\"POST\",\"PUT\",\"PATCH\",\"DELETE\"]},"
	"\"url\":{\"type\":\"string\",\"description\":\"the full https URL, on one of the integration's API hosts\"},"
	"\"headers\":{\"type\":\"object\",\"additionalProperties\":{\"type\":\"string\"},"
	"\"description\":\"extra headers; never credentials\"},"
	"\"body\":{\"type\":\"string\",\"description\":\"the request body (JSON as text)\"}},"
	"\"required\":[\"integration\",\"url\"],\"additionalProperties\":false}";
static const char description[] =
	"Call the API of an integration (a third-party service enabled in this workspace) over HTTPS. The server adds "
	"the credential (the user's connected account, else the platform's); never put keys or tokens in headers. "
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

struct answer {
	struct svc_buf body;
	char content_type[128];
	int too_large;
};

static size_t on_data(char *ptr, size_t size, size_t nmemb, void *userdata)
{
	struct answer *a = userdata;
	size_t n = size * nmemb;

	if (svc_buf_add(&a->body, ptr, n) < 0) {
		a->too_large = 1;
		return 0;
	}
	return n;
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

static int header_name_valid(const char *h)
{
	size_t i;

	for (i = 0; h[i]; i++)
		if (!((h[i] >= 'a' && h[i] <= 'z') || (h[i] >= 'A' && h[i] <= 'Z') || (h[i] >= '0' && h[i] <= '9') ||
		      h[i] == '-' || h[i] == '_'))
			return 0;
	return i > 0 && i <= 64;
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

/*
 * Adds the credential's headers: a token or secret_text as "Authorization: Bearer"; basic_auth as
 * "Authorization: Basic" (RFC 7617); custom_auth fields named "header:NAME" as NAME, and a field
 * "token" or "apiKey" as Bearer.
 */
static int add_credential(struct curl_slist **list, const struct svc_integ_cred *cred)
{
	struct json_object *o = NULL;
	char *b64 = NULL;
	int err = 0;

	if (cred->kind == SVC_INTEG_CRED_USER || cred->kind == SVC_INTEG_CRED_SECRET) {
		struct svc_buf v;
		svc_buf_init(&v, SVC_INTEG_TOKEN_MAX + 16);
		if ((err = svc_buf_addf(&v, "Bearer %s", cred->secret)) == 0)
			err = add_header(list, "Authorization", svc_buf_str(&v));
		svc_buf_wipe(&v);
		return err;
	}
	if (cred->kind == SVC_INTEG_CRED_NONE)
		return 0;
	if (svc_json_parse_object(cred->secret, cred->secret_len, &o) < 0)
		return SVC_E_INTERNAL;
	if (cred->kind == SVC_INTEG_CRED_BASIC) {
		struct svc_buf up, v;
		svc_buf_init(&up, 32768);
		svc_buf_init(&v, 65536);
		if ((err = svc_buf_addf(&up, "%s:%s", svc_json_str(o, "username") ? svc_json_str(o, "username") : "",
					svc_json_str(o, "password") ? svc_json_str(o, "password") : "")) == 0 &&
		    (err = svc_base64_encode((const uint8_t *)up.data, up.len, &b64)) == 0 &&
		    (err = svc_buf_addf(&v, "Basic %s", b64)) == 0)
			err = add_header(list, "Authorization", svc_buf_str(&v));
		svc_buf_wipe(&up);
		svc_buf_wipe(&v);
	} else {
		json_object_object_foreach(o, key, val)
		{
			const char *s = json_object_get_string(val);
			if (err < 0 || !s)
				continue;
			if (strncmp(key, "header:", 7) == 0 && header_name_valid(key + 7)) {
				err = add_header(list, key + 7, s);
			} else if (strcmp(key, "token") == 0 || strcmp(key, "apiKey") == 0) {
				struct svc_buf v;
				svc_buf_init(&v, 16384);
				if ((err = svc_buf_addf(&v, "Bearer %s", s)) == 0)
					err = add_header(list, "Authorization", svc_buf_str(&v));
				svc_buf_wipe(&v);
			}
		}
	}
	if (b64) {
		OPENSSL_cleanse(b64, strlen(b64));
		free(b64);
	}
	json_object_put(o);
	return err;
}

/* Replaces every occurrence of `secret` (n >= 8 bytes) in b with "[credential]", so the model never sees it. */
static void scrub(struct svc_buf *b, const char *secret, size_t n)
{
	static const char mark[] = "[credential]";
	char *p;

	if (!b->data || n < 8)
		return;
	while ((p = memmem(b->data, b->len, secret, n)) != NULL) {
		size_t at = (size_t)(p - b->data), m = sizeof mark - 1;
		/* the mark is shorter than any secret scrubbed, so this stays inside the buffer */
		memcpy(p, mark, m);
		memmove(p + m, p + n, b->len - at - n + 1);
		b->len -= n - m;
	}
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

static const char *const methods[] = { "GET", "POST", "PUT", "PATCH", "DELETE", NULL };

int svc_agent__integration_run(const struct svc_agent_integ *ig, struct json_object *args, char **out)
{
	const char *id = svc_json_str(args, "integration"), *url = svc_json_str(args, "url");
	const char *method = svc_json_str(args, "method"), *body = svc_json_str(args, "body");
	struct json_object *headers = json_object_object_get(args, "headers");
	struct svc_rows *rows = NULL;
	struct svc_integ_cred cred;
	struct curl_slist *list = NULL;
	struct svc_outbound_policy policy;
	struct svc_outbound_guard guard;
	struct answer a;
	char host[256], call_id[37], path[URL_MAX + 1];
	const char *auth, *hosts, *rest, *error = NULL;
	struct svc_dbv p[7];
	CURL *c = NULL;
	CURLcode rc;
	long status = 0, timeout_secs;
	uint64_t v;
	int err = 0, allow_http, recorded = 0;
	size_t i;

	memset(&cred, 0, sizeof cred);
	memset(&a, 0, sizeof a);
	*out = NULL;
	if (svc_parse_u64(svc_config_get(ig->cfg, "SVC_INTEG_MAX_RESPONSE_BYTES", "1048576"), 64u * 1024 * 1024, &v) < 0)
		v = 1048576;
	svc_buf_init(&a.body, (size_t)v);
	if (svc_parse_u64(svc_config_get(ig->cfg, "SVC_INTEG_TIMEOUT_SECS", "20"), 600, &v) < 0 || v == 0)
		v = 20;
	timeout_secs = (long)v;
	allow_http = strcmp(svc_config_get(ig->cfg, "SVC_INTEG_ALLOW_HTTP", "0"), "1") == 0;
	if (!method)
		method = "GET";
	for (i = 0; methods[i] && strcmp(methods[i], method) != 0; i++)
		;
	if (!id || !svc_integ_id_valid(id) || !url || strlen(url) > URL_MAX || !methods[i] ||
	    (body && strlen(body) > BODY_MAX) || (headers && !json_object_is_type(headers, json_type_object)) ||
	    (headers && json_object_object_length(headers) > HEADERS_MAX)) {
		*out = textf("integration_request needs integration (an id), url (at most %d bytes), method (GET, POST, "
			     "PUT, PATCH or DELETE), optional headers (at most %d strings) and body (at most %d bytes)",
			     URL_MAX, HEADERS_MAX, BODY_MAX);
		err = SVC_E_VALIDATION;
		goto done;
	}
	p[0] = svc_dbv_str(ig->workspace_id);
	p[1] = svc_dbv_str(ig->user_id);
	p[2] = svc_dbv_str(ig->workspace_id);
	p[3] = svc_dbv_str(id);
	if ((err = svc_db_run(ig->db, STMT_INTEG_GET, p, 4, &rows, NULL)) < 0)
		goto done;
	if (!rows || rows->nrows != 1 || !svc_rows_get(rows, 0, ICOL_ENABLED) ||
	    strcmp(svc_rows_get(rows, 0, ICOL_ENABLED), "1") != 0) {
		*out = textf("the integration \"%.64s\" is not enabled in this workspace", id);
		err = SVC_E_FORBIDDEN;
		goto done;
	}
	if (!(strncmp(url, "https://", 8) == 0 || (allow_http && strncmp(url, "http://", 7) == 0)) ||
	    svc_integ_url_host(url, host, sizeof host) < 0) {
		*out = textf("the url must be an https:// URL");
		err = SVC_E_VALIDATION;
		goto done;
	}
	svc_rows_free(rows);
	rows = NULL;
	p[0] = svc_dbv_str(id);
	if ((err = svc_db_run(ig->db, STMT_INTEG_DEF, p, 1, &rows, NULL)) < 0 || !rows || rows->nrows != 1) {
		err = err < 0 ? err : SVC_E_NOT_FOUND;
		goto done;
	}
	hosts = svc_rows_get(rows, 0, IDCOL_API_HOSTS);
	if (!svc_integ_list_has(hosts, host)) {
		*out = textf("denied: %.253s is not an API host of %s (allowed: %.300s)", host, id,
			     hosts && *hosts ? hosts : "none");
		err = SVC_E_FORBIDDEN;
		goto done;
	}
	auth = svc_rows_get(rows, 0, IDCOL_AUTH_TYPES);
	if ((err = svc_integ_credential(ig->db, ig->cfg, ig->user_id, id, ig->workspace_id, &cred)) < 0) {
		*out = textf(err == SVC_E_UNAUTHORIZED ? "the user's connection to %s expired: ask them to connect again"
						       : "the credential of %s could not be used",
			     id);
		goto done;
	}
	if (cred.kind == SVC_INTEG_CRED_NONE && !svc_integ_list_has(auth, "none")) {
		*out = textf("no credential for %s: the user can connect their account on the Integrations page, or an "
			     "admin can set the platform's", id);
		err = SVC_E_FORBIDDEN;
		goto done;
	}
	/* the request: the model's headers, then the credential */
	if (headers) {
		json_object_object_foreach(headers, key, val)
		{
			if (!header_name_valid(key) || forbidden_header(key) || !json_object_is_type(val, json_type_string)) {
				*out = textf("the header \"%.64s\" may not be set (credentials are added by the server)", key);
				err = SVC_E_FORBIDDEN;
				goto done;
			}
			if ((err = add_header(&list, key, json_object_get_string(val))) < 0) {
				*out = textf("the header \"%.64s\" is not valid", key);
				goto done;
			}
		}
	}
	if ((err = add_credential(&list, &cred)) < 0)
		goto done;
	/* recorded before it starts (xray's active and stuck calls) */
	rest = url + (url[4] == 's' ? 8 : 7);
	rest += strcspn(rest, "/?#");
	snprintf(path, sizeof path, "%s", *rest ? rest : "/");
	path[strcspn(path, "?#")] = '\0';
	if ((err = svc_uuid_v4(call_id)) < 0)
		goto done;
	p[0] = svc_dbv_str(call_id);
	p[1] = svc_dbv_str(id);
	p[2] = svc_dbv_str(ig->user_id);
	p[3] = svc_dbv_str(ig->project_id);
	p[4] = svc_dbv_str(method);
	p[5] = svc_dbv_str(host);
	p[6] = svc_dbv_str(path);
	if ((err = svc_db_run(ig->db, STMT_INTEG_CALL_START, p, 7, NULL, NULL)) < 0)
		goto done;
	recorded = 1;
	if (!(c = curl_easy_init())) {
		err = SVC_E_INTERNAL;
		goto done;
	}
	svc_outbound_policy_load(ig->cfg, &policy);
	if ((err = svc_outbound_curl(c, &policy, &guard)) < 0)
		goto done;
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, allow_http ? "http,https" : "https");
	curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, timeout_secs);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, 10L);
	curl_easy_setopt(c, CURLOPT_USERAGENT, "svc-integration");
	curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
	if (body) {
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
		curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, (long)strlen(body));
	} else if (strcmp(method, "GET") == 0) {
		curl_easy_setopt(c, CURLOPT_HTTPGET, 1L);
	}
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, list);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &a);
	rc = curl_easy_perform(c);
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
	if (rc != CURLE_OK) {
		if (guard.refused) {
			error = "refused";
			*out = textf("denied: %.253s is a %s address, which svc does not call", host,
				     svc_net_kind_name(guard.kind));
			err = SVC_E_FORBIDDEN;
		} else if (a.too_large) {
			error = "too_large";
			*out = textf("the answer of %.253s is larger than %zu bytes; ask for less", host, a.body.max);
			err = SVC_E_TOO_LARGE;
		} else if (rc == CURLE_OPERATION_TIMEDOUT) {
			error = "timeout";
			*out = textf("%.253s did not answer within %ld s", host, timeout_secs);
			err = SVC_E_UNAVAILABLE;
		} else {
			error = "network";
			*out = textf("the call to %.253s failed: %s", host, curl_easy_strerror(rc));
			err = SVC_E_UNAVAILABLE;
		}
		goto done;
	}
	{
		char *ct = NULL;
		struct svc_buf res;
		curl_easy_getinfo(c, CURLINFO_CONTENT_TYPE, &ct);
		snprintf(a.content_type, sizeof a.content_type, "%s", ct ? ct : "none");
		if (svc_buf_add(&a.body, "", 0) < 0) {
			err = SVC_E_INTERNAL;
			goto done;
		}
		if (cred.secret)
			scrub(&a.body, cred.secret, cred.secret_len);
		svc_buf_init(&res, a.body.len + 256);
		if (svc_buf_addf(&res, "HTTP %ld\ncontent-type: %s\n\n", status, a.content_type) < 0 ||
		    svc_buf_add(&res, a.body.data ? a.body.data : "", a.body.len) < 0) {
			svc_buf_dispose(&res);
			err = SVC_E_INTERNAL;
			goto done;
		}
		*out = svc_buf_detach(&res, NULL);
	}
	err = 0;
done:
	if (recorded)
		call_end(ig->db, call_id, status, error ? error : (err < 0 ? "failed" : NULL));
	svc_buf_wipe(&a.body);
	svc_integ_cred_dispose(&cred);
	if (list) {
		struct curl_slist *n;
		for (n = list; n; n = n->next)
			OPENSSL_cleanse(n->data, strlen(n->data));
		curl_slist_free_all(list);
	}
	if (c)
		curl_easy_cleanup(c);
	svc_rows_free(rows);
	if (!*out && err < 0)
		*out = textf("the integration call failed");
	return err;
}
