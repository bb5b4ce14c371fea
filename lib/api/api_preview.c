/* api_preview.c: the preview origin of a project: its signed URL (GET /projects/:id/preview) and the files behind it (svc-preview). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "api/api_web.h"
#include "auth/preview.h"
#include "core/err.h"
#include "core/fsx.h"
#include "core/log.h"
#include "project/devserver.h"
#include "project/direct_save.h"
#include "project/preview_build.h"

#define PREVIEW_FILE_MAX (16u * 1024 * 1024) /* bytes of one served file */
#define PREVIEW_LABEL "preview"              /* <token>.preview.<SVC_DOMAIN> */

/* The preview origin's script (lib/api/preview_script.js: visual editing and design comments), a C
 * string the build makes from it (lib/api/api.mk); it ends with the function expression that
 * preview_inject() calls with app_url's origin. */
static const char preview_script[] =
#include "api/preview_script.h"
	;

int svc_api_site_url(const struct svc_config *cfg, const char *label, char *out, size_t max)
{
	const char *scheme = strncmp(cfg->app_url, "https:", 6) == 0 ? "https" : "http";
	const char *port = cfg->http_port;
	char guessed[8] = "";
	int n;

	if (!*port) {
		/* take the port from app_url, "http://127.0.0.1:8080" */
		const char *hp = strstr(cfg->app_url, "://");
		const char *colon = hp ? strchr(hp + 3, ':') : NULL;
		if (colon) {
			size_t i;
			for (i = 0; i < sizeof guessed - 1 && colon[1 + i] >= '0' && colon[1 + i] <= '9'; i++)
				guessed[i] = colon[1 + i];
			guessed[i] = '\0';
		}
		port = guessed;
	}
	if (*port && strcmp(port, "80") != 0 && strcmp(port, "443") != 0)
		n = snprintf(out, max, "%s://%s.%s:%s/", scheme, label, cfg->domain, port);
	else
		n = snprintf(out, max, "%s://%s.%s/", scheme, label, cfg->domain);
	return (n < 0 || (size_t)n >= max) ? SVC_E_INTERNAL : 0;
}

/* The lifetime of a preview URL in seconds: SVC_PREVIEW_TTL (a duration, 60 s to 24 h), default 30 minutes. */
static int preview_ttl(const struct svc_config *cfg, int64_t *out)
{
	*out = cfg->preview_ttl_secs; /* 60 s to 24 h (the settings table) */
	return 0;
}

/*
 * GET /projects/:id/preview: 200 {url, expiresAt, devServer}; 401 (anonymous, not a
 * public project); 403; 404. Whoever may read the project's files may preview
 * it. The expiry is rounded up to the minute, so the URL stays the same for a
 * minute and the browser's frame does not reload for nothing.
 */
enum svc_err svc_api_projects_preview(struct svc_req *req, struct svc_resp *resp)
{
	const struct svc_config *cfg = &req->ctx->cfg;
	const char *id = svc_req_param(req, "id");
	struct svc_rows *rows = NULL;
	char token[SVC_PREVIEW_TOKEN_MAX], label[SVC_PREVIEW_TOKEN_MAX + sizeof PREVIEW_LABEL], url[512], ts[25];
	char dir[2048];
	struct json_object *body;
	int64_t ttl, expires;
	int err;

	if ((err = svc_project_load(svc_req_caller(req), id, SVC_ACT_READ, &rows)) < 0)
		return err;
	svc_rows_free(rows);
	if ((err = preview_ttl(cfg, &ttl)) < 0)
		return err;
	expires = (svc_now_ms() / 1000 + ttl + 59) / 60 * 60;
	if ((err = svc_preview_token_make(cfg->jwt_secret, cfg->jwt_secret_len, id, expires, token)) < 0)
		return err;
	snprintf(label, sizeof label, "%s." PREVIEW_LABEL, token);
	if ((err = svc_api_site_url(cfg, label, url, sizeof url)) < 0)
		return err;
	svc_time_format(expires * 1000, ts);
	body = json_object_new_object();
	json_object_object_add(body, "url", json_object_new_string(url));
	json_object_object_add(body, "expiresAt", json_object_new_string(ts));
	/* a dev server's page updates itself (HMR): the app then does not reload the frame after a change */
	json_object_object_add(body, "devServer", json_object_new_boolean(
		cfg->devserver_max && svc_project_dir(cfg, id, dir, sizeof dir) == 0 &&
		svc_devserver_kind(dir) != SVC_DEVSERVER_NONE));
	return svc_resp_json(resp, 200, body);
}

/* ---- svc-preview ---- */

/* Answers a small HTML page (the preview has no JSON clients: a person sees it in the frame), the title
 * and text escaped. Returns 0 or SVC_E_INTERNAL. */
static int preview_page(struct svc_resp *resp, int status, const char *title, const char *text)
{
	struct svc_buf html;
	int err;

	svc_buf_init(&html, 8192);
	err = svc_buf_adds(&html, "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>");
	if (err == 0)
		err = svc_ds_escape_html(title, 1, &html);
	if (err == 0)
		err = svc_buf_adds(&html, "</title></head>\n<body><h1>");
	if (err == 0)
		err = svc_ds_escape_html(title, 1, &html);
	if (err == 0)
		err = svc_buf_adds(&html, "</h1><p>");
	if (err == 0)
		err = svc_ds_escape_html(text, 1, &html);
	if (err == 0)
		err = svc_buf_adds(&html, "</p></body></html>\n");
	if (err == 0)
		err = svc_resp_raw(resp, status, "text/html; charset=utf-8", svc_buf_str(&html), html.len);
	svc_buf_dispose(&html);
	return err < 0 ? SVC_E_INTERNAL : 0;
}

/* 1 when a segment of `path` starts with a dot (".env", ".git/", "..": never served by the preview). */
static int has_dot_segment(const char *path)
{
	const char *s = path;

	while (*s) {
		if (*s == '.')
			return 1;
		s += strcspn(s, "/");
		s += *s == '/';
	}
	return 0;
}

/* Writes "/<path>/" percent-encoded (RFC 3986 unreserved characters and '/' kept) into out. Returns 0 or SVC_E_INTERNAL. */
static int slash_location(const char *path, char *out, size_t max)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t o = 0;

	if (max < 3)
		return SVC_E_INTERNAL;
	out[o++] = '/';
	for (; *path; path++) {
		unsigned char c = (unsigned char)*path;
		if (o + 5 > max)
			return SVC_E_INTERNAL;
		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || strchr("-._~/", c)) {
			out[o++] = (char)c;
		} else {
			out[o++] = '%';
			out[o++] = hex[c >> 4];
			out[o++] = hex[c & 15];
		}
	}
	out[o++] = '/';
	out[o] = '\0';
	return 0;
}

/* The notice a page of the build gets while the dev server of its project has failed (docs/api.md "Preview"). */
static int add_devserver_notice(struct svc_buf *out, const char *why)
{
	int err = svc_buf_adds(out, "<div role=\"status\" id=\"svc-devserver-failed\" style=\"position:fixed;left:0;"
				    "right:0;bottom:0;z-index:2147483647;padding:8px 12px;background:#7f1d1d;color:#fff;"
				    "font:13px/1.4 system-ui,sans-serif;white-space:pre-wrap\">The dev server stopped "
				    "and this is the last build. ");

	if (err == 0)
		err = svc_ds_escape_html(why, 1, out);
	if (err == 0)
		err = svc_buf_adds(out, "</div>\n");
	return err;
}

/*
 * An HTML page of the preview as svc-preview sends it: the file's bytes, then
 * <script>preview_script("<app_url's origin>");</script> (docs/web.md "Visual
 * editing"). At the end of the file, after </html>, the HTML parser still puts it
 * into <body> (WHATWG HTML "after after body"), as its last element, and the script
 * removes its own element as it runs, so the page's elements keep their places
 * and :nth-of-type counts. Only here: the files and the published site never
 * have it. The origin is written as a JSON string (json-c escapes "/", so no
 * "</script" can appear). `notice` (NULL or "" for none): why the project's
 * dev server failed, shown in a bar before the script. Returns 0,
 * SVC_E_TOO_LARGE or SVC_E_INTERNAL.
 */
static int preview_inject(const char *app_origin, size_t app_len, const char *data, size_t len,
			  const char *notice, struct svc_buf *out)
{
	struct json_object *o = json_object_new_string_len(app_origin, (int)app_len);
	int err;

	if (!o)
		return SVC_E_INTERNAL;
	err = svc_buf_add(out, data, len);
	if (err == 0 && notice && notice[0])
		err = add_devserver_notice(out, notice);
	if (err == 0)
		err = svc_buf_adds(out, "<script>");
	if (err == 0)
		err = svc_buf_adds(out, preview_script);
	if (err == 0)
		err = svc_buf_addf(out, "(%s);</script>\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
	json_object_put(o);
	return err;
}

/* 1 when the file at `path` is served as an HTML page (.html, .htm: what gets the preview's script). */
static int is_html(const char *path)
{
	return strncmp(svc_fsx_content_type(path), "text/html", 9) == 0;
}

/* 1 when project `id` exists and is not deleted; 0 when not; or a DB error. */
static int project_live(struct svc_db *db, const char *id)
{
	struct svc_dbv p[5];
	struct svc_rows *rows = NULL;
	int err;

	p[0] = svc_dbv_str("");
	p[1] = svc_dbv_str("");
	p[2] = svc_dbv_str(id);
	p[3] = svc_dbv_i64(0);
	p[4] = svc_dbv_i64(0);
	if ((err = svc_db_run(db, STMT_PROJECT_GET_STATE, p, 5, &rows, NULL)) < 0)
		return err;
	err = rows && rows->nrows == 1;
	svc_rows_free(rows);
	return err;
}

/*
 * A dev-server project's request, forwarded to svc-devd (docs/api.md
 * "Preview", docs/operations.md "Dev servers"): its dev server's answer, with
 * the preview's script in HTML pages, or "Starting the dev server" (503,
 * reloading) for a page while it starts, or 502 when its answer ended before
 * its Content-Length or last chunk. Returns 0 when it answered, or
 * SVC_E_NOT_FOUND for the build preview instead: svc-devd is not running
 * (`why` ""), or the dev server failed twice (`why` says how).
 */
static int preview_devserver(struct svc_req *req, struct svc_resp *resp, size_t app_len, char *why, size_t why_max)
{
	static const char *const pass[] = { "Accept", "If-None-Match", "If-Modified-Since", "User-Agent",
					    "Accept-Language", "Sec-Fetch-Dest", "Sec-Fetch-Mode", "Origin" };
	const struct svc_config *cfg = &req->ctx->cfg;
	/* the target as the client sent it, query included (Vite's ?import, ?v=, ?t=): REQUEST_URI */
	const char *uri = FCGX_GetParam("REQUEST_URI", req->fcgi->envp), *accept = svc_req_header(req, "Accept");
	char lines[sizeof pass / sizeof pass[0]][1100];
	const char *headers[sizeof pass / sizeof pass[0] + 1];
	struct svc_devserver_answer a = { 0 };
	size_t i, k = 0;
	int err;

	why[0] = '\0';
	for (i = 0; i < sizeof pass / sizeof pass[0]; i++) {
		const char *v = svc_req_header(req, pass[i]);
		if (v && snprintf(lines[k], sizeof lines[k], "%s: %s", pass[i], v) < (int)sizeof lines[k])
			headers[k] = lines[k], k++;
	}
	headers[k] = NULL;
	if (!uri || uri[0] != '/')
		uri = "/";
	err = svc_devserver_fetch(cfg, svc_req_header(req, "Host"), uri, headers, PREVIEW_FILE_MAX, 60000, &a);
	if (err == SVC_E_UNAVAILABLE)
		return SVC_E_NOT_FOUND; /* no svc-devd on this host: the build */
	if (err < 0)
		return err == SVC_E_TOO_LARGE ? preview_page(resp, 413, "Too large", "This file is too large for the preview.")
					      : err;
	if (a.cut) {
		/* never a short answer that looks whole (issue 27): the browser's import fails, a reload fetches it again */
		size_t plen = strcspn(uri, "?"); /* the path only: a query may hold a secret */
		svc_log_warn("preview: the dev server's answer to %.*s ended after %zu bytes, before its framing's end",
			     (int)(plen > 200 ? 200 : plen), uri, a.len);
		svc_devserver_answer_dispose(&a);
		if ((err = svc_resp_header(resp, "Cache-Control", "no-store")) < 0)
			return err;
		return preview_page(resp, 502, "The dev server's answer was cut short",
				    "The dev server closed the connection before its answer was complete. Reload to try again.");
	}
	if (strcmp(a.devserver, "failed") == 0) {
		snprintf(why, why_max, "%.*s", (int)strcspn(a.body, "\n"), a.body);
		svc_devserver_answer_dispose(&a);
		return SVC_E_NOT_FOUND;
	}
	if ((err = svc_resp_header(resp, "Access-Control-Allow-Origin", "*")) < 0)
		goto done;
	if (strcmp(a.devserver, "starting") == 0 && accept && strstr(accept, "text/html")) {
		if ((err = svc_resp_header(resp, "Refresh", "1")) == 0)
			err = preview_page(resp, 503, "Starting the dev server…",
					   "This project's dev server is starting. The page reloads when it is ready.");
		goto done;
	}
	if ((a.cache[0] && (err = svc_resp_header(resp, "Cache-Control", a.cache)) < 0) ||
	    (a.etag[0] && (err = svc_resp_header(resp, "ETag", a.etag)) < 0) ||
	    (a.last_modified[0] && (err = svc_resp_header(resp, "Last-Modified", a.last_modified)) < 0) ||
	    (a.location[0] && (err = svc_resp_header(resp, "Location", a.location)) < 0) ||
	    (a.devserver[0] && (err = svc_resp_header(resp, "Retry-After", "1")) < 0))
		goto done;
	if (a.status == 200 && strncmp(a.type, "text/html", 9) == 0) {
		struct svc_buf page;
		svc_buf_init(&page, PREVIEW_FILE_MAX + sizeof preview_script + 600);
		err = preview_inject(cfg->app_url, app_len, a.body, a.len, NULL, &page);
		if (err == 0)
			err = svc_resp_raw(resp, 200, a.type, svc_buf_str(&page), page.len);
		svc_buf_dispose(&page);
	} else {
		err = svc_resp_raw(resp, a.status, a.type[0] ? a.type : "application/octet-stream", a.body, a.len);
	}
done:
	svc_devserver_answer_dispose(&a);
	return err;
}

enum svc_err svc_api_preview_serve(struct svc_req *req, struct svc_resp *resp)
{
	const struct svc_config *cfg = &req->ctx->cfg;
	const char *rest = svc_req_param(req, "*");
	char id[37], dir[2048], rel[SVC_FSX_PATH_MAX + 16], norm[SVC_FSX_PATH_MAX + 1], csp[600], why[512], *data = NULL;
	char dev_why[512] = "";
	size_t len = 0, app_len;
	const char *scheme_end;
	int err, dir_form;

	/* only app_url may frame the preview; the policy goes on every answer, error pages too */
	scheme_end = strstr(cfg->app_url, "://");
	app_len = scheme_end ? (size_t)(scheme_end + 3 - cfg->app_url) + strcspn(scheme_end + 3, "/?#") : 0;
	if (!app_len || app_len > 500)
		return SVC_E_INTERNAL;
	snprintf(csp, sizeof csp, "frame-ancestors %.*s", (int)app_len, cfg->app_url);
	if ((err = svc_resp_header(resp, "Content-Security-Policy", csp)) < 0)
		return err;

	if (svc_preview_host_check(cfg->jwt_secret, cfg->jwt_secret_len, cfg->domain, svc_req_header(req, "Host"),
				   svc_now_ms() / 1000, id) < 0)
		return preview_page(resp, 403, "Preview link expired",
				    "This preview link is not valid or has expired. Open the project again to get a new one.");
	if ((err = project_live(req->ctx->db, id)) < 0)
		return err;
	if (!err)
		return preview_page(resp, 404, "Not found", "This project does not exist any more.");
	if ((err = svc_project_dir(cfg, id, dir, sizeof dir)) < 0)
		return err;
	/* a dev-server project: its dev server (svc-devd), unless that failed twice: then its build, saying so */
	if (cfg->devserver_max && svc_devserver_kind(dir) != SVC_DEVSERVER_NONE &&
	    (err = preview_devserver(req, resp, app_len, dev_why, sizeof dev_why)) != SVC_E_NOT_FOUND)
		return err;
	/* a package.json project: its latest sandboxed build, made by svc-worker after each change */
	if ((err = svc_preview_build_dir(cfg, id, dir, sizeof dir, why, sizeof why)) == SVC_E_NOT_FOUND) {
		if (dev_why[0] && why[0]) {
			char both[1100];
			snprintf(both, sizeof both, "The dev server stopped: %s. The build failed too: %s", dev_why, why);
			return preview_page(resp, 503, "The dev server and the build failed", both);
		}
		if (why[0])
			return preview_page(resp, 503, "The build failed", why);
		svc_preview_build_first(req->ctx->db, cfg, id); /* none while the first build runs */
		if ((err = svc_resp_header(resp, "Refresh", "2")) < 0)
			return err;
		if (dev_why[0]) {
			char text[800];
			snprintf(text, sizeof text, "The dev server stopped: %s. The project is built instead; the page "
				 "reloads when the build is done.", dev_why);
			return preview_page(resp, 503, "The dev server stopped", text);
		}
		return preview_page(resp, 503, "Building the preview",
				    "This project is built before it is shown. The page reloads when the build is done.");
	}
	if (err < 0)
		return err;

	if (!rest)
		rest = "";
	len = strlen(rest);
	dir_form = len == 0 || rest[len - 1] == '/';
	if (len > SVC_FSX_PATH_MAX || has_dot_segment(rest) ||
	    snprintf(rel, sizeof rel, "%s%s", rest, dir_form ? "index.html" : "") >= (int)sizeof rel ||
	    svc_fsx_check_path(rel, norm) < 0)
		return preview_page(resp, 404, "Not found", "There is no such file in this project.");
	err = svc_fsx_read(dir, norm, PREVIEW_FILE_MAX, &data, &len);
	if (err == SVC_E_NOT_FOUND && !dir_form) {
		/* a directory named without its final slash: send the browser to it, so relative links work */
		char index[SVC_FSX_PATH_MAX + 16], loc[3 * SVC_FSX_PATH_MAX + 8];
		snprintf(index, sizeof index, "%s/index.html", norm);
		if (svc_fsx_read(dir, index, PREVIEW_FILE_MAX, &data, &len) == 0) {
			free(data);
			if ((err = slash_location(norm, loc, sizeof loc)) < 0 ||
			    (err = svc_resp_header(resp, "Location", loc)) < 0)
				return err;
			return preview_page(resp, 301, "Moved", "This is a directory.");
		}
	}
	if (err == SVC_E_NOT_FOUND || err == SVC_E_VALIDATION)
		return preview_page(resp, 404, "Not found", "There is no such file in this project.");
	if (err == SVC_E_TOO_LARGE)
		return preview_page(resp, 413, "Too large", "This file is too large for the preview.");
	if (err < 0)
		return err;
	/* the frame is sandboxed without allow-same-origin, so its origin is opaque ("null"): module scripts and
	 * fetches of its own files are cross-origin and need this; no credentials are ever involved */
	if ((err = svc_resp_header(resp, "Access-Control-Allow-Origin", "*")) < 0) {
		free(data);
		return err;
	}
	if (is_html(norm)) {
		struct svc_buf page;
		svc_buf_init(&page, PREVIEW_FILE_MAX + sizeof preview_script + 600);
		err = preview_inject(cfg->app_url, app_len, data, len, dev_why, &page);
		if (err == 0)
			err = svc_resp_raw(resp, 200, svc_fsx_content_type(norm), svc_buf_str(&page), page.len);
		svc_buf_dispose(&page);
	} else {
		err = svc_resp_raw(resp, 200, svc_fsx_content_type(norm), data, len);
	}
	free(data);
	return err;
}
