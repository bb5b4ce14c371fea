/* app_fetch.c: POST /_svc/fetch/:name, a call svc.data.json declares, made by the server with the project's secrets through svc's outbound guard; what comes back has every secret's value scrubbed (docs/app-backend.md "Secrets and calls"). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <openssl/crypto.h>

#include "app/app.h"
#include "auth/crypto.h"
#include "core/err.h"
#include "core/json.h"
#include "core/log.h"
#include "core/outbound.h"
#include "integ/inject.h"
#include "integ/integ.h"

#define QUERY_MAX 8192   /* bytes of the query made from `query` */
#define RHEADER_MAX 1024 /* bytes of one answer header's value passed back */

/* The answer headers passed back to the page (RFC 9110/9111 names, compared without case); no others. */
static const char *const safe_headers[] = {
	"content-type", "content-language", "cache-control", "etag", "last-modified", "expires", "retry-after",
};

/* One call being made. */
struct fcall {
	struct svc_app_site site;
	struct svc_app_decl *decl;
	const struct svc_app_fetch *f;
	char **names, **values;        /* the project's secrets, opened (values cleansed at the end) */
	size_t *lens, n;
	struct svc_integ_inject scrub; /* every secret's value in its encoded forms (lib/integ/inject.h) */
	struct curl_slist *list;       /* the declared headers with their secrets put in */
	struct svc_buf url;
	struct json_object *rheaders;  /* the safe answer headers, scrubbed */
	struct svc_outbound_xfer x;
	CURL *c;
};

static const char *const methods[] = { "GET", "POST", "PUT", "PATCH", "DELETE", NULL };
static const struct svc_field call_fields[] = {
	{ "method", SVC_V_ENUM, 0, 0, 0, methods },
	{ "path", SVC_V_STR, 0, 0, SVC_APP_FETCH_PATH_MAX, NULL },
	{ "query", SVC_V_OBJECT, 0, 0, 0, NULL },
};
const struct svc_body svc_app_fetch_body = SVC_BODY(call_fields);

static void fcall_dispose(struct fcall *fc)
{
	size_t i;

	for (i = 0; i < fc->n; i++) {
		if (fc->values[i])
			svc_crypto_free_secret(fc->values[i], fc->lens[i]);
		free(fc->names[i]);
	}
	free(fc->names);
	free(fc->values);
	free(fc->lens);
	svc_integ_inject_dispose(&fc->scrub);
	if (fc->list) {
		struct curl_slist *l;
		for (l = fc->list; l; l = l->next)
			OPENSSL_cleanse(l->data, strlen(l->data));
		curl_slist_free_all(fc->list);
	}
	svc_buf_wipe(&fc->url);
	json_object_put(fc->rheaders);
	svc_outbound_xfer_dispose(&fc->x);
	if (fc->c)
		curl_easy_cleanup(fc->c);
	svc_app_decl_free(fc->decl);
}

/* Opens every secret of the site's project (each value its own row label) and makes the texts to scrub. */
static int secrets_open(struct svc_req *req, struct fcall *fc)
{
	struct svc_dbv p = svc_dbv_str(fc->site.project_id);
	struct svc_integ_cred cred = { SVC_INTEG_CRED_CUSTOM, NULL, 0 };
	struct svc_rows *rows = NULL;
	struct json_object *forms = NULL;
	size_t r;
	int err;

	if ((err = svc_db_run(req->ctx->db, STMT_SECRET_SEALED, &p, 1, &rows, NULL)) < 0)
		return err;
	fc->n = rows ? rows->nrows : 0;
	if (fc->n && (!(fc->names = calloc(fc->n, sizeof *fc->names)) || !(fc->values = calloc(fc->n, sizeof *fc->values)) ||
		      !(fc->lens = calloc(fc->n, sizeof *fc->lens)))) {
		fc->n = 0;
		err = SVC_E_INTERNAL;
		goto done;
	}
	forms = json_object_new_object();
	for (r = 0; r < fc->n && err == 0; r++) {
		char label[37 + 1 + SVC_APP_SECRET_NAME_MAX + 1], key[8 + SVC_APP_SECRET_NAME_MAX + 1];
		const char *name = svc_rows_get(rows, r, SSCOL_NAME);
		snprintf(label, sizeof label, "%s:%s", fc->site.project_id, name);
		if (!(fc->names[r] = strdup(name)))
			err = SVC_E_INTERNAL;
		else if (svc_crypto_open_secret(req->ctx->db, &req->ctx->cfg, svc_rows_get(rows, r, SSCOL_WORKSPACE),
						      "project_secrets", "value_sealed", label, svc_rows_get(rows, r, SSCOL_SEALED),
						      &fc->values[r], &fc->lens[r]) < 0)
			err = SVC_E_UNAVAILABLE; /* fail closed; never the value in the log */
		snprintf(key, sizeof key, "header:%s", name);
		if (err == 0)
			json_object_object_add(forms, key, json_object_new_string_len(fc->values[r], (int)fc->lens[r]));
	}
	if (err == 0) {
		const char *text = json_object_to_json_string_ext(forms, JSON_C_TO_STRING_PLAIN);
		cred.secret = (char *)text;
		cred.secret_len = strlen(text);
		err = svc_integ_inject(&cred, &fc->scrub);
		OPENSSL_cleanse((void *)text, cred.secret_len);
	}
done:
	if (forms) {
		json_object_object_foreach(forms, k, v) {
			(void)k;
			OPENSSL_cleanse((void *)json_object_get_string(v), (size_t)json_object_get_string_len(v));
		}
		json_object_put(forms);
	}
	svc_rows_free(rows);
	return err;
}

/* Declared header `h` with its {{secrets.NAME}} put in, as a "Name: value" line added to fc->list. */
static int header_add(struct svc_resp *resp, struct fcall *fc, const struct svc_app_fetch_header *h)
{
	struct svc_buf line;
	const char *p = h->value, *open;
	int err = 0;

	svc_buf_init(&line, 65 + 2 + SVC_APP_FETCH_HEADER_MAX + SVC_APP_FETCH_MAX_HEADERS * SVC_APP_SECRET_MAX);
	err = svc_buf_addf(&line, "%s: ", h->name);
	while (err == 0 && (open = strstr(p, "{{secrets."))) {
		const char *end = strstr(open, "}}");
		size_t i, n = end ? (size_t)(end - open - 10) : 0;
		if ((err = svc_buf_add(&line, p, (size_t)(open - p))) < 0)
			break;
		for (i = 0; i < fc->n; i++)
			if (strlen(fc->names[i]) == n && memcmp(fc->names[i], open + 10, n) == 0)
				break;
		if (i == fc->n) {
			err = svc_resp_error(resp, SVC_E_UNAVAILABLE, NULL, "The call %s needs the secret %.*s, which is not set.",
					     fc->f->name, (int)n, open + 10);
			break;
		}
		err = svc_buf_add(&line, fc->values[i], fc->lens[i]);
		p = end + 2;
	}
	if (err == 0 && (err = svc_buf_adds(&line, p)) == 0) {
		struct curl_slist *l = curl_slist_append(fc->list, svc_buf_str(&line));
		if (l)
			fc->list = l;
		else
			err = SVC_E_INTERNAL;
	}
	svc_buf_wipe(&line);
	return err;
}

/* fc->url: the declared URL, the page's path under it (normalised) and its query (name=value, percent-encoded). */
static int url_make(struct svc_req *req, struct svc_resp *resp, struct fcall *fc)
{
	struct json_object *q = NULL;
	char path[SVC_APP_FETCH_URL_MAX + SVC_APP_FETCH_PATH_MAX + 2], why[200];
	int err;

	if ((err = svc_app_fetch_path(fc->f, svc_json_str(req->json, "path"), path, sizeof path, why, sizeof why)) < 0)
		return svc_resp_error(resp, err == SVC_E_FORBIDDEN ? SVC_E_VALIDATION : err, "path",
				      "path must stay under the call's URL: %s", why);
	svc_buf_init(&fc->url, sizeof path + QUERY_MAX);
	if ((err = svc_buf_adds(&fc->url, path)) < 0)
		return err;
	if (!json_object_object_get_ex(req->json, "query", &q) || !q)
		return 0;
	json_object_object_foreach(q, key, v) {
		if (!svc_integ_header_name_valid(key) || (!json_object_is_type(v, json_type_string) &&
							  !json_object_is_type(v, json_type_int) &&
							  !json_object_is_type(v, json_type_double) &&
							  !json_object_is_type(v, json_type_boolean)))
			return svc_resp_error(resp, SVC_E_VALIDATION, "query",
					      "query is {name: value}: names of letters, digits, - and _; values strings, "
					      "numbers or booleans");
		if ((err = svc_buf_adds(&fc->url, fc->url.len == strlen(path) ? "?" : "&")) < 0 ||
		    (err = svc_integ_url_param(&fc->url, key, json_object_get_string(v))) < 0)
			return err == SVC_E_TOO_LARGE ? svc_resp_error(resp, err, "query", "query is too long") : err;
	}
	return 0;
}

/* libcurl's header callback: keeps the safe headers of the final answer (a new status line starts anew). */
static size_t on_header(char *data, size_t size, size_t n, void *arg)
{
	struct fcall *fc = arg;
	size_t len = size * n, i, name_len;
	const char *colon = memchr(data, ':', len);

	if (len >= 5 && memcmp(data, "HTTP/", 5) == 0) {
		json_object_put(fc->rheaders);
		fc->rheaders = json_object_new_object();
		return len;
	}
	if (!colon || !fc->rheaders)
		return len;
	name_len = (size_t)(colon - data);
	for (i = 0; i < sizeof safe_headers / sizeof safe_headers[0]; i++)
		if (strlen(safe_headers[i]) == name_len && strncasecmp(data, safe_headers[i], name_len) == 0) {
			const char *v = colon + 1, *end = data + len;
			while (v < end && (*v == ' ' || *v == '\t'))
				v++;
			while (end > v && (end[-1] == '\r' || end[-1] == '\n' || end[-1] == ' '))
				end--;
			if ((size_t)(end - v) <= RHEADER_MAX && svc_utf8_valid(v, (size_t)(end - v)))
				json_object_object_add(fc->rheaders, safe_headers[i], json_object_new_string_len(v, (int)(end - v)));
		}
	return len;
}

/* The request's body: a string as it is (text/plain unless a Content-Type is declared), anything else as JSON. */
static int body_of(struct svc_req *req, struct fcall *fc, const char **out, size_t *out_len)
{
	struct json_object *b = NULL;
	const char *type = NULL;
	size_t i;

	*out = NULL;
	*out_len = 0;
	if (!json_object_object_get_ex(req->json, "body", &b) || !b)
		return 0;
	if (json_object_is_type(b, json_type_string)) {
		*out = json_object_get_string(b);
		*out_len = (size_t)json_object_get_string_len(b);
		type = "Content-Type: text/plain; charset=utf-8";
	} else {
		*out = json_object_to_json_string_ext(b, JSON_C_TO_STRING_PLAIN);
		*out_len = strlen(*out);
		type = "Content-Type: application/json";
	}
	for (i = 0; i < fc->f->nheaders; i++)
		if (strcasecmp(fc->f->headers[i].name, "Content-Type") == 0)
			return 0;
	{
		struct curl_slist *l = curl_slist_append(fc->list, type);
		if (!l)
			return SVC_E_INTERNAL;
		fc->list = l;
	}
	return 0;
}

/* Makes the call through the SSRF guard (no redirects followed) within SVC_APP_FETCH_TIMEOUT_MS and _MAX_BYTES. */
static int call_perform(struct svc_req *req, struct svc_resp *resp, struct fcall *fc, const char *method)
{
	const struct svc_config *cfg = &req->ctx->cfg;
	struct svc_outbound_policy policy;
	struct svc_outbound_req o;
	int err;

	memset(&o, 0, sizeof o);
	svc_outbound_policy_load(cfg, &policy);
	o.url = svc_buf_str(&fc->url);
	o.method = method;
	if ((err = body_of(req, fc, &o.body, &o.body_len)) < 0)
		return err;
	o.headers = fc->list;
	o.protocols = fc->f->https ? "https" : "http";
	o.reach = SVC_OUTBOUND_GUARDED;
	o.policy = &policy;
	o.connect_timeout_ms = (long)cfg->app_fetch_timeout_ms;
	o.timeout_ms = (long)cfg->app_fetch_timeout_ms;
	o.max_body = (size_t)cfg->app_fetch_max_bytes;
	o.user_agent = "svc-app";
	if (!(fc->c = svc_outbound_handle()) || svc_outbound_setup(fc->c, &o, &fc->x) < 0 ||
	    curl_easy_setopt(fc->c, CURLOPT_HEADERFUNCTION, on_header) != CURLE_OK ||
	    curl_easy_setopt(fc->c, CURLOPT_HEADERDATA, fc) != CURLE_OK)
		return SVC_E_INTERNAL;
	err = svc_outbound_perform(&fc->x);
	if (err == 0)
		return 0;
	if (err == SVC_E_FORBIDDEN)
		return svc_resp_error(resp, err, NULL, "svc does not call %s addresses (the call %s).",
				      svc_net_kind_name(fc->x.guard.kind), fc->f->name);
	if (fc->x.too_large)
		return svc_resp_error(resp, SVC_E_TOO_LARGE, NULL, "The answer of %s is over SVC_APP_FETCH_MAX_BYTES (%zu bytes).",
				      fc->f->name, (size_t)cfg->app_fetch_max_bytes);
	if (fc->x.rc == CURLE_OPERATION_TIMEDOUT)
		return svc_resp_error(resp, SVC_E_UNAVAILABLE, NULL, "%s did not answer within SVC_APP_FETCH_TIMEOUT_MS (%llu ms).",
				      fc->f->name, (unsigned long long)cfg->app_fetch_timeout_ms);
	return svc_resp_error(resp, SVC_E_UNAVAILABLE, NULL, "The call %s failed: %s.", fc->f->name,
			      curl_easy_strerror(fc->x.rc));
}

/* 200 {status, headers, body[, bodyEncoding: "base64"]}: the headers and body with every secret's value scrubbed. */
static int call_answer(struct svc_resp *resp, struct fcall *fc)
{
	struct json_object *out = json_object_new_object(), *h = json_object_new_object();
	int err;

	if (fc->rheaders) {
		json_object_object_foreach(fc->rheaders, k, v) {
			struct svc_buf b;
			svc_buf_init(&b, RHEADER_MAX * 16);
			if ((err = svc_buf_add(&b, json_object_get_string(v), (size_t)json_object_get_string_len(v))) == 0 &&
			    (err = svc_integ_scrub(&fc->scrub, &b)) == 0)
				json_object_object_add(h, k, json_object_new_string_len(b.data ? b.data : "", (int)b.len));
			svc_buf_wipe(&b);
		}
	}
	if ((err = svc_integ_scrub(&fc->scrub, &fc->x.body)) < 0) {
		json_object_put(out);
		json_object_put(h);
		return err;
	}
	json_object_object_add(out, "status", json_object_new_int64(fc->x.status));
	json_object_object_add(out, "headers", h);
	if (svc_utf8_valid(fc->x.body.data ? fc->x.body.data : "", fc->x.body.len)) {
		json_object_object_add(out, "body", json_object_new_string_len(fc->x.body.data ? fc->x.body.data : "",
									       (int)fc->x.body.len));
	} else {
		char *b64 = NULL;
		if ((err = svc_base64_encode((const uint8_t *)fc->x.body.data, fc->x.body.len, &b64)) < 0) {
			json_object_put(out);
			return err;
		}
		json_object_object_add(out, "body", json_object_new_string(b64));
		json_object_object_add(out, "bodyEncoding", json_object_new_string("base64"));
		free(b64);
	}
	return svc_resp_json(resp, 200, out);
}

enum svc_err svc_app_fetch(struct svc_req *req, struct svc_resp *resp)
{
	const char *name = svc_req_param(req, "name"), *method = svc_json_str(req->json, "method");
	struct fcall fc;
	size_t i;
	int err;

	memset(&fc, 0, sizeof fc);
	svc_buf_init(&fc.url, 1);
	if ((err = svc_app_site_open(req, resp, &fc.site)) < 0 ||
	    (err = svc_app_decl_load(req->ctx->db, fc.site.project_id, fc.site.dir, &fc.decl)) < 0)
		goto done;
	if (!(fc.f = name ? svc_app_decl_fetch(fc.decl, name) : NULL)) {
		err = svc_resp_error(resp, SVC_E_NOT_FOUND, NULL, "No call named %.64s is declared in svc.data.json.",
				     name ? name : "");
		goto done;
	}
	if ((err = svc_app_rule_check((enum svc_app_rule)fc.f->rule, fc.site.user_id, NULL)) < 0) {
		err = svc_resp_error(resp, err, NULL, err == SVC_E_UNAUTHORIZED ? "Sign in to do this."
										: "Nobody may make this call on the site (rule none).");
		goto done;
	}
	if (!method)
		method = "GET";
	if (!(fc.f->methods & svc_app_fetch_method_bit(method))) {
		err = svc_resp_error(resp, SVC_E_VALIDATION, "method", "The call %s does not allow %s.", fc.f->name, method);
		goto done;
	}
	if (!fc.f->https && !req->ctx->cfg.app_fetch_allow_http) {
		err = svc_resp_error(resp, SVC_E_FORBIDDEN, NULL, "The call %s is not https:// (SVC_APP_FETCH_ALLOW_HTTP).",
				     fc.f->name);
		goto done;
	}
	svc_buf_dispose(&fc.url);
	if ((err = url_make(req, resp, &fc)) < 0 || (err = secrets_open(req, &fc)) < 0)
		goto done;
	for (i = 0; i < fc.f->nheaders && err == 0; i++)
		err = header_add(resp, &fc, &fc.f->headers[i]);
	if (err == 0 && (err = call_perform(req, resp, &fc, method)) == 0)
		err = call_answer(resp, &fc);
done:
	fcall_dispose(&fc);
	return err;
}
