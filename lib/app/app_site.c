/* app_site.c: which site a request of svc-app is for, that it comes from that site, its end user; client.js (app.h). */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "app/app.h"
#include "auth/auth.h"
#include "auth/preview.h"
#include "core/err.h"
#include "core/util.h"
#include "project/paths.h"

#define PREVIEW_LABEL ".preview."
#define HOST_MAX 260

/* client.js (lib/app/client.js), a C string the build makes from it (lib/app/app.mk) */
static const char client_js[] =
#include "app/client_js.h"
	;

/* The Host without its port, lower-cased, into out (HOST_MAX bytes). Returns 0, or SVC_E_NOT_FOUND for a malformed one. */
static int host_name(const char *host, char *out)
{
	size_t i, n;

	if (!host)
		return SVC_E_NOT_FOUND;
	n = strcspn(host, ":");
	if (n == 0 || n >= HOST_MAX)
		return SVC_E_NOT_FOUND;
	for (i = 0; i < n; i++) {
		char c = host[i];
		if (c >= 'A' && c <= 'Z')
			c = (char)(c - 'A' + 'a');
		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.'))
			return SVC_E_NOT_FOUND;
		out[i] = c;
	}
	out[n] = '\0';
	return 0;
}

/* The project of a site host `name` and its environment. Returns 0, SVC_E_NOT_FOUND or a DB error. */
static int site_project(struct svc_req *req, const char *name, struct svc_app_site *out)
{
	const struct svc_config *cfg = &req->ctx->cfg;
	size_t n = strlen(name), dlen = strlen(cfg->domain), plen = sizeof PREVIEW_LABEL - 1;
	struct svc_rows *rows = NULL;
	struct svc_dbv p;
	char label[HOST_MAX];
	enum svc_stmt stmt;
	int err;

	if (n > dlen + 1 && name[n - dlen - 1] == '.' && strcasecmp(name + n - dlen, cfg->domain) == 0) {
		const char *dot = strchr(name, '.');
		size_t first = (size_t)(dot - name);
		if (first + plen + dlen == n && strncmp(dot, PREVIEW_LABEL, plen) == 0) {
			/* <token>.preview.<domain>: the preview's backend */
			if (svc_preview_token_check(cfg->jwt_secret, cfg->jwt_secret_len, name, first, svc_now_ms() / 1000,
						    label, NULL) < 0)
				return SVC_E_NOT_FOUND;
			out->env = "test";
			stmt = STMT_APP_SITE_BY_ID;
		} else if (first + 1 + dlen == n) {
			memcpy(label, name, first);
			label[first] = '\0';
			out->env = "live";
			stmt = STMT_APP_SITE_BY_SLUG;
		} else {
			return SVC_E_NOT_FOUND;
		}
	} else {
		snprintf(label, sizeof label, "%s", name);
		out->env = "live";
		stmt = STMT_APP_SITE_BY_DOMAIN;
	}
	p = svc_dbv_str(label);
	if ((err = svc_db_run(req->ctx->db, stmt, &p, 1, &rows, NULL)) < 0)
		return err;
	if (!rows || rows->nrows != 1) {
		svc_rows_free(rows);
		return SVC_E_NOT_FOUND;
	}
	snprintf(out->project_id, sizeof out->project_id, "%s", svc_rows_get(rows, 0, ASCOL_ID));
	svc_rows_free(rows);
	return svc_project_dir(cfg, out->project_id, out->dir, sizeof out->dir);
}

/* docs/app-backend.md "Cross-site safety": an unsafe request from the site's own origin, or from client.js without Origin. */
static int same_site(struct svc_req *req, struct svc_resp *resp)
{
	const char *origin = svc_req_header(req, "Origin"), *host = svc_req_header(req, "Host");
	const char *scheme = strncmp(req->ctx->cfg.app_url, "https:", 6) == 0 ? "https://" : "http://";
	size_t slen = strlen(scheme);

	if (req->method == SVC_GET || req->method == SVC_OPTIONS)
		return 0;
	if (origin && *origin) {
		if (host && strncasecmp(origin, scheme, slen) == 0 && strcasecmp(origin + slen, host) == 0)
			return 0;
	} else if (svc_req_header(req, SVC_APP_CLIENT_HEADER)) {
		return 0;
	}
	svc_auth_log(req->ctx->auth.auth_log, req->ctx->name, "csrf_refused", req->client_addr, "app");
	return svc_resp_error(resp, SVC_E_FORBIDDEN, NULL, "Cross-site request refused: the Origin is not this site's.");
}

/* The end user of the svc_app_session cookie, when it is a live session of this site. */
static int site_user(struct svc_req *req, struct svc_app_site *s)
{
	char token[128];
	struct svc_rows *rows = NULL;
	struct svc_dbv p[3];
	int err;

	if (svc_req_cookie(req, SVC_APP_SESSION_COOKIE, token, sizeof token) != 1 ||
	    strncmp(token, SVC_APP_SESSION_PREFIX, sizeof SVC_APP_SESSION_PREFIX - 1) != 0)
		return 0;
	if ((err = svc_sha256_hex(token, strlen(token), s->session_sha)) < 0)
		return err;
	p[0] = svc_dbv_str(s->session_sha);
	p[1] = svc_dbv_str(s->project_id);
	p[2] = svc_dbv_str(s->env);
	if ((err = svc_db_run(req->ctx->db, STMT_APP_SESSION_USER, p, 3, &rows, NULL)) < 0)
		return err;
	if (rows && rows->nrows == 1) {
		snprintf(s->user_id, sizeof s->user_id, "%s", svc_rows_get(rows, 0, AUCOL_ID));
		snprintf(s->user_email, sizeof s->user_email, "%s", svc_rows_get(rows, 0, AUCOL_EMAIL));
		snprintf(s->user_created, sizeof s->user_created, "%s", svc_rows_get(rows, 0, AUCOL_CREATED));
	}
	svc_rows_free(rows);
	return 0;
}

int svc_app_site_open(struct svc_req *req, struct svc_resp *resp, struct svc_app_site *out)
{
	char name[HOST_MAX];
	int err;

	memset(out, 0, sizeof *out);
	if ((err = host_name(svc_req_header(req, "Host"), name)) < 0 || (err = site_project(req, name, out)) < 0)
		return err == SVC_E_NOT_FOUND ? svc_resp_error(resp, err, NULL, "There is no app backend on this host.") : err;
	if ((err = same_site(req, resp)) < 0)
		return err;
	return site_user(req, out);
}

/* 1 when the request's Host is a preview host, <label>.preview.<SVC_DOMAIN> (svc_app_site_open() checked its token). */
static int preview_host(struct svc_req *req)
{
	const char *domain = req->ctx->cfg.domain;
	char name[HOST_MAX];
	size_t n, dlen = strlen(domain), plen = sizeof PREVIEW_LABEL - 1;
	const char *dot;

	if (host_name(svc_req_header(req, "Host"), name) < 0 || !(dot = strchr(name, '.')))
		return 0;
	n = strlen(name);
	return (size_t)(dot - name) + plen + dlen == n && strncmp(dot, PREVIEW_LABEL, plen) == 0 &&
	       strcasecmp(dot + plen, domain) == 0;
}

int svc_app__cookie(struct svc_req *req, struct svc_resp *resp, const char *token)
{
	int https = strncmp(req->ctx->cfg.app_url, "https:", 6) == 0;
	size_t dlen = strlen(req->ctx->cfg.domain);
	const char *attrs = https ? "SameSite=Lax; Secure" : "SameSite=Lax";
	char line[256];
	int n;

	/* the preview is framed by app_url, another site: only a partitioned cookie (CHIPS) reaches it there, which
	 * needs SameSite=None and Secure (browsers take Secure over http on *.localhost only); docs/security.md
	 * "The preview frame" */
	if (preview_host(req) && (https || (dlen >= 9 && strcasecmp(req->ctx->cfg.domain + dlen - 9, "localhost") == 0 &&
					    (dlen == 9 || req->ctx->cfg.domain[dlen - 10] == '.'))))
		attrs = "SameSite=None; Secure; Partitioned";
	/* no Domain: host-only, so no other site (nor app_url) ever gets it */
	n = snprintf(line, sizeof line, SVC_APP_SESSION_COOKIE "=%s; Path=/_svc/; HttpOnly; %s; Max-Age=%d%s",
		     token ? token : "", attrs, token ? SVC_APP_SESSION_SECS : 0,
		     token ? "" : "; Expires=Thu, 01 Jan 1970 00:00:00 GMT");
	if (n < 0 || (size_t)n >= sizeof line)
		return SVC_E_INTERNAL;
	return svc_resp_header(resp, "Set-Cookie", line);
}

/* GET /_svc/client.js: the ES module apps import (lib/app/client.js), on any site host. */
enum svc_err svc_app_client(struct svc_req *req, struct svc_resp *resp)
{
	struct svc_app_site site;
	int err;

	if ((err = svc_app_site_open(req, resp, &site)) < 0)
		return err;
	if ((err = svc_resp_header(resp, "Cache-Control", "no-cache")) < 0)
		return err;
	return svc_resp_raw(resp, 200, "text/javascript; charset=utf-8", client_js, sizeof client_js - 1);
}

int svc_app__usage(struct svc_db *db, const struct svc_config *cfg, const struct svc_app_site *s, int64_t records,
		   int64_t bytes, int64_t users, char *msg, size_t max)
{
	static const char *const names[3] = { "SVC_APP_MAX_RECORDS", "SVC_APP_MAX_BYTES", "SVC_APP_MAX_USERS" };
	static const char *const what[3] = { "records", "bytes of records", "end users" };
	const int64_t delta[3] = { records, bytes, users };
	const uint64_t limit[3] = { cfg->app_max_records, cfg->app_max_bytes, cfg->app_max_users };
	const size_t col[3] = { AUSCOL_RECORDS, AUSCOL_BYTES, AUSCOL_USERS };
	struct svc_rows *rows = NULL;
	struct svc_dbv p[5];
	size_t i;
	int err;

	p[0] = svc_dbv_str(s->project_id);
	p[1] = svc_dbv_str(s->env);
	if ((err = svc_db_run(db, STMT_APP_USAGE_ENSURE, p, 2, NULL, NULL)) < 0 ||
	    (err = svc_db_run(db, STMT_APP_USAGE_LOCK, p, 2, &rows, NULL)) < 0)
		return err;
	for (i = 0; i < 3 && rows && rows->nrows == 1; i++) {
		uint64_t now = 0;
		if (delta[i] <= 0 || !limit[i])
			continue;
		svc_parse_u64(svc_rows_get(rows, 0, col[i]), UINT64_MAX, &now);
		if (now + (uint64_t)delta[i] > limit[i]) {
			snprintf(msg, max, "This app's %s backend holds its maximum of %llu %s (%s).", s->env,
				 (unsigned long long)limit[i], what[i], names[i]);
			svc_rows_free(rows);
			return SVC_E_TOO_LARGE;
		}
	}
	svc_rows_free(rows);
	p[0] = svc_dbv_i64(records);
	p[1] = svc_dbv_i64(bytes);
	p[2] = svc_dbv_i64(users);
	p[3] = svc_dbv_str(s->project_id);
	p[4] = svc_dbv_str(s->env);
	return svc_db_run(db, STMT_APP_USAGE_MOVE, p, 5, NULL, NULL);
}
