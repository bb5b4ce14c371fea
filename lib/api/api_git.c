/* api_git.c: clone, fetch and push over Git's smart HTTP (/git/<projectId>.git, svc-git) and a project's branches (docs/git.md). */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/crypto.h>

#include "api/api.h"
#include "auth/crypto.h"
#include "core/log.h"
#include "project/githttp.h"
#include "project/project.h"
#include "project/quota.h"

#define FETCH_BODY_MAX (64u << 20) /* a clone's or fetch's negotiation (wants and haves) */
#define PUSH_BODY_SLACK (1u << 20) /* a push's commands on top of its pack */
#define BRANCHES_MAX 500

/* A 401 a Git client understands: it asks for a user name and a password (the token) and tries again. */
static int basic_challenge(struct svc_req *req, struct svc_resp *resp, int presented)
{
	if (presented)
		svc_auth_log(req->ctx->auth.auth_log, req->ctx->name, "token_rejected", req->client_addr,
			     "route=/api/git/*");
	req->user_id[0] = '\0';
	req->scopes = 0;
	svc_resp_header(resp, "WWW-Authenticate", "Basic realm=\"svc\", charset=\"UTF-8\"");
	return svc_resp_error(resp, SVC_E_UNAUTHORIZED, NULL,
			      "Sign in with any user name and an API token with git:read or git:write as the password.");
}

/* The password of "Authorization: Basic base64(user:password)" into out (max bytes): 1, or 0 when there is none. */
static int basic_password(const char *auth, char *out, size_t max)
{
	uint8_t *raw = NULL;
	size_t len = 0;
	const char *colon;
	int found = 0;

	if (!auth || strncasecmp(auth, "Basic ", 6) != 0)
		return 0;
	auth += 6;
	while (*auth == ' ')
		auth++;
	if (svc_base64_decode(auth, strlen(auth), 1024, &raw, &len) < 0)
		return 0;
	colon = memchr(raw, ':', len);
	if (colon && (size_t)(raw + len - (const uint8_t *)colon - 1) < max) {
		size_t n = (size_t)(raw + len - (const uint8_t *)colon - 1);
		memcpy(out, colon + 1, n);
		out[n] = '\0';
		found = 1;
	}
	OPENSSL_cleanse(raw, len);
	free(raw);
	return found;
}

/*
 * Who asks: HTTP Basic with an API token as the password, else the web app's
 * session (cookie or Bearer, svc_req_authenticate). Sets req->user_id and
 * req->scopes (an API token's through svc_pat_route_scopes() on
 * "/api/git/": git:read to fetch, git:write to push). 401 with the Basic
 * challenge, 403 for a token without the scope.
 */
static int git_authenticate(struct svc_req *req, struct svc_resp *resp, int writes)
{
	const char *auth = svc_req_header(req, "Authorization");
	char pass[SVC_PAT_LEN + 2], cookie[SVC_AUTH_TOKEN_MAX + 1];
	const char *needed = NULL;
	unsigned token_scopes = 0;
	int err;

	if (basic_password(auth, pass, sizeof pass)) {
		err = svc_pat_authenticate(req->ctx->db, pass, req->user_id, req->token_id, &token_scopes);
		OPENSSL_cleanse(pass, sizeof pass);
		if (err == SVC_E_UNAUTHORIZED)
			return basic_challenge(req, resp, 1);
		if (err < 0)
			return err;
		req->token_scopes = token_scopes;
	} else if (auth || svc_req_cookie(req, "svc_access_token", cookie, sizeof cookie) == 1) {
		if ((err = svc_req_authenticate(req, req->user_id)) == SVC_E_UNAUTHORIZED)
			return basic_challenge(req, resp, 1);
		if (err < 0)
			return err;
		if (!req->token_id[0])
			return 0; /* a session: every scope */
	} else {
		return basic_challenge(req, resp, 0);
	}
	if (svc_pat_route_scopes(req->token_scopes, !writes, "/api/git/*", &req->scopes, &needed) < 0)
		return svc_resp_error(resp, SVC_E_FORBIDDEN, NULL, "This API token cannot do this: it needs %s.", needed);
	return 0;
}

/* Loads the project for the service: 404 for one the caller may not read, 403 for a push they may not make. */
static int git_project(struct svc_req *req, struct svc_resp *resp, const char *id, int writes, struct svc_rows **out)
{
	const struct svc_caller *c = svc_req_caller(req);
	struct svc_rows *rows = NULL;
	int err;

	if ((err = svc_project_load(c, id, SVC_ACT_READ, &rows)) < 0)
		return err == SVC_E_FORBIDDEN || err == SVC_E_UNAUTHORIZED ? SVC_E_NOT_FOUND : err;
	if (writes && (err = svc_project_check(c, rows, SVC_ACT_WRITE)) < 0) {
		svc_rows_free(rows);
		return svc_resp_error(resp, err, NULL, "You may read this project but not push to it.");
	}
	*out = rows;
	return 0;
}

/* svc's hooks directory: "git-hooks" beside this program (pkglibexecdir, or the build's cgi-bin/). */
static const char *hooks_dir(void)
{
	static char dir[PATH_MAX];
	char exe[PATH_MAX];
	ssize_t n;
	char *slash;

	if (dir[0])
		return dir;
	n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n <= 0)
		return NULL;
	exe[n] = '\0';
	slash = strrchr(exe, '/');
	if (!slash)
		return NULL;
	*slash = '\0';
	if ((size_t)snprintf(dir, sizeof dir, "%s/git-hooks", exe) >= sizeof dir) {
		dir[0] = '\0';
		return NULL;
	}
	return dir;
}

/* ---- the streams, through FastCGI ---- */

struct git_stream {
	struct svc_req *req;
	struct svc_resp *resp;
	const char *dir;       /* the project's directory */
	int lock;              /* a push: the project's lock once its body is in (body_done), else -1 */
	char old_sha[41];      /* main when the lock was taken */
};

static long stream_read(void *arg, void *buf, size_t max)
{
	struct git_stream *s = arg;

	return svc_req_body_read(s->req, buf, max);
}

static int stream_begin(void *arg, int status, const char *type, const char *headers)
{
	struct git_stream *s = arg;
	const char *line = headers;

	while (line && *line) {
		const char *colon = strchr(line, ':'), *end = strstr(line, "\r\n");
		char name[64], value[512];
		if (!colon || !end || colon > end || (size_t)(colon - line) >= sizeof name)
			break;
		snprintf(name, sizeof name, "%.*s", (int)(colon - line), line);
		snprintf(value, sizeof value, "%.*s", (int)(end - colon - 2), colon + 2);
		svc_resp_header(s->resp, name, value);
		line = end + 2;
	}
	return svc_resp_stream_begin(s->resp, status, type);
}

static int stream_write(void *arg, const void *data, size_t len)
{
	struct git_stream *s = arg;

	return svc_resp_stream_write(s->resp, data, len);
}

/* A push's body is in git: take the project's lock (its files never change under a save, paths.h) and
 * note main before any ref moves; svc's hook lets receive-pack go on only after this returned 0. */
static int stream_body_done(void *arg)
{
	struct git_stream *s = arg;
	int err;

	if ((s->lock = svc_project_lock(s->dir)) < 0)
		return s->lock;
	if ((err = svc_git_main_sha(s->dir, s->old_sha)) < 0) {
		close(s->lock);
		s->lock = -1;
	}
	return err;
}

/* The body a push may send: the room the quotas leave the project's directory, plus its commands. */
static uint64_t push_cap(struct svc_req *req, const char *wid, const char *id, const char *dir)
{
	uint64_t now = 0, left = UINT64_MAX;

	if (svc_quota_repo_room(req->ctx->db, &req->ctx->cfg, wid, id, dir, &now, &left) < 0)
		return PUSH_BODY_SLACK;
	return left > UINT64_MAX - PUSH_BODY_SLACK ? UINT64_MAX : left + PUSH_BODY_SLACK;
}

/* Runs git-http-backend for one request; a push takes the project's lock once its body is in, and its
 * working tree follows main before the lock goes. */
static int git_run(struct svc_req *req, struct svc_resp *resp, struct svc_git_request *gr, const char *dir)
{
	struct git_stream s = { req, resp, dir, -1, "" };
	struct svc_git_io io = { stream_read, stream_begin, stream_write,
				 gr->service == SVC_GIT_RECEIVE ? stream_body_done : NULL, &s };
	int status = 0, moved = 0, err;

	err = svc_git_http_run(&req->ctx->cfg, gr, &io, &status);
	if (s.lock >= 0) {
		if (status)
			svc_git_follow_main(svc_req_caller(req), gr->project_id, dir, s.old_sha, &moved);
		close(s.lock);
	}
	if (err == SVC_E_TOO_LARGE)
		return svc_resp_error(resp, err, NULL, "The push is larger than the project's quota leaves room for.");
	return err == SVC_E_CLIENT_GONE && resp->started ? 0 : err;
}

enum svc_err svc_api_git_serve(struct svc_req *req, struct svc_resp *resp)
{
	struct svc_git_request gr;
	struct svc_rows *rows = NULL;
	char id[37], dir[2048];
	int writes, post, err;

	memset(&gr, 0, sizeof gr);
	if (svc_git_parse_path(svc_req_param(req, "*"), req->query, id, &gr.service) < 0)
		return SVC_E_NOT_FOUND;
	post = gr.service == SVC_GIT_UPLOAD || gr.service == SVC_GIT_RECEIVE;
	if ((req->method == SVC_POST) != post) {
		svc_resp_header(resp, "Allow", post ? "POST" : "GET");
		return SVC_E_METHOD;
	}
	writes = svc_git_service_writes(gr.service);
	if ((err = git_authenticate(req, resp, writes)) < 0 || (err = git_project(req, resp, id, writes, &rows)) < 0)
		return err;
	gr.project_id = id;
	gr.workspace_id = svc_rows_get(rows, 0, PCOL_WORKSPACE);
	gr.user_id = req->user_id;
	gr.client_addr = req->client_addr;
	gr.content_type = svc_req_header(req, "Content-Type");
	gr.content_encoding = svc_req_header(req, "Content-Encoding");
	gr.git_protocol = svc_req_header(req, "Git-Protocol");
	gr.hooks_dir = hooks_dir();
	if (!gr.hooks_dir || (err = svc_project_dir(&req->ctx->cfg, id, dir, sizeof dir)) < 0) {
		err = SVC_E_INTERNAL;
		goto done;
	}
	gr.max_body_bytes = gr.service == SVC_GIT_RECEIVE ? push_cap(req, gr.workspace_id, id, dir) : FETCH_BODY_MAX;
	err = git_run(req, resp, &gr, dir);
done:
	svc_rows_free(rows);
	return err;
}

/* ---- GET /projects/:id/branches ---- */

enum svc_err svc_api_projects_branches(struct svc_req *req, struct svc_resp *resp)
{
	const char *id = svc_req_param(req, "id");
	struct svc_rows *rows = NULL;
	struct svc_git_branch *list = NULL;
	struct json_object *body, *items;
	char dir[2048];
	size_t n = 0, i;
	int err;

	if ((err = svc_project_load(svc_req_caller(req), id, SVC_ACT_READ, &rows)) < 0)
		return err;
	svc_rows_free(rows);
	if ((err = svc_project_dir(&req->ctx->cfg, id, dir, sizeof dir)) < 0 ||
	    (err = svc_git_branches(dir, BRANCHES_MAX, &list, &n)) < 0)
		return err;
	body = json_object_new_object();
	items = json_object_new_array();
	for (i = 0; i < n; i++) {
		struct json_object *b = json_object_new_object();
		char ts[25];
		svc_time_format(list[i].time_ms, ts);
		svc_json_add_str(b, "name", list[i].name);
		svc_json_add_str(b, "sha", list[i].sha);
		json_object_object_add(b, "main", json_object_new_boolean(strcmp(list[i].name, "main") == 0));
		json_object_object_add(b, "updatedAt", json_object_new_string(ts));
		json_object_array_add(items, b);
	}
	json_object_object_add(body, "items", items);
	free(list);
	return svc_resp_json(resp, 200, body);
}
