/* api_internal.c: the API's signed /api/internal/ endpoints (files-changed, presence, design comments) and the comment list. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/api.h"
#include "api/api_internal.h"
#include "core/err.h"
#include "project/comment.h"
#include "project/thumbnail.h"
#include "core/json.h"
#include "core/log.h"
#include "project/gitio.h"
#include "project/preview_build.h"
#include "project/repo.h"

#define PRESENCE_USERS_MAX 1000
#define COMMENT_CONTENT_MAX 10000
#define COMMENT_FIELD_MAX 1024

static int project_exists(struct svc_req *req, const char *id)
{
	struct svc_dbv p = svc_dbv_str(id);
	struct svc_rows *rows = NULL;
	int err;

	if (!id || !svc_uuid_valid(id))
		return SVC_E_NOT_FOUND;
	if ((err = svc_db_run(req->ctx->db, STMT_INTERNAL_PROJECT, &p, 1, &rows, NULL)) < 0)
		return err;
	err = rows && rows->nrows == 1 ? 0 : SVC_E_NOT_FOUND;
	svc_rows_free(rows);
	return err;
}

/* POST /api/internal/projects/:id/files-changed: 200 {committed, sha}; 401; 400; 404. */
enum svc_err svc_api_internal_files_changed(struct svc_req *req, struct svc_resp *resp)
{
	const char *id = svc_req_param(req, "id");
	struct json_object *body = req->json, *users, *out;
	char dir[2048], sha[41], name[256] = "svc collaboration", email[256] = "collab@svc.invalid";
	int err, changed = 0, lock;

	if ((err = project_exists(req, id)) < 0)
		return err;
	if (json_object_object_get_ex(body, "userIds", &users) && json_object_is_type(users, json_type_array)) {
		size_t i, n = json_object_array_length(users);
		for (i = 0; i < n && i < 50; i++) {
			const char *u = json_object_get_string(json_object_array_get_idx(users, i));
			struct svc_dbv p = svc_dbv_str(u);
			struct svc_rows *rows = NULL;
			if (!u || !svc_uuid_valid(u))
				continue;
			if (svc_db_run(req->ctx->db, STMT_USER_BY_ID, &p, 1, &rows, NULL) == 0 && rows && rows->nrows == 1) {
				const char *dn = svc_rows_get(rows, 0, UCOL_NAME), *em = svc_rows_get(rows, 0, UCOL_EMAIL);
				snprintf(name, sizeof name, "%s", dn && *dn ? dn : em);
				snprintf(email, sizeof email, "%s", em);
				svc_rows_free(rows);
				break;
			}
			svc_rows_free(rows);
		}
	}
	if ((err = svc_project_dir(&req->ctx->cfg, id, dir, sizeof dir)) < 0)
		return err;
	/* the project's lock: a push over smart HTTP moves main and then the working tree under it, and a
	 * commit of the old working tree between the two would undo the push (docs/git.md) */
	if ((lock = svc_project_lock(dir)) < 0)
		return lock;
	if ((err = svc_repo_commit_all(dir, "Collaborative edits", name, email, sha, &changed)) == SVC_E_VALIDATION)
		/* an author Git cannot hold: commit as the service */
		err = svc_repo_commit_all(dir, "Collaborative edits", "svc collaboration", "collab@svc.invalid", sha,
					  &changed);
	close(lock);
	if (err < 0)
		return err;
	if (changed) {
		struct svc_dbv p = svc_dbv_str(id);
		svc_db_run(req->ctx->db, STMT_PROJECT_TOUCH, &p, 1, NULL, NULL);
		/* the thumbnail is re-rendered by svc-worker, never in this request */
		if (svc_thumbnail_request(req->ctx->db, id) < 0)
			svc_log_warn("internal: cannot queue the thumbnail of %s", id);
		if (svc_preview_build_request(req->ctx->db, &req->ctx->cfg, id) < 0)
			svc_log_warn("internal: cannot queue the preview build of %s", id);
		svc_gitio_mirror_queue(req->ctx->db, id); /* git-io: the mirror gets the new version */
	}
	out = json_object_new_object();
	json_object_object_add(out, "committed", json_object_new_boolean(changed));
	json_object_object_add(out, "sha", changed ? json_object_new_string(sha) : NULL);
	return svc_resp_json(resp, 200, out);
}

/* POST /api/internal/projects/:id/presence: 200 {}; 401; 400; 404. */
enum svc_err svc_api_internal_presence(struct svc_req *req, struct svc_resp *resp)
{
	const char *id = svc_req_param(req, "id");
	struct json_object *body = req->json, *users;
	struct svc_dbv p[2];
	const char *text;
	int err;

	if ((err = project_exists(req, id)) < 0)
		return err;
	if (!json_object_object_get_ex(body, "users", &users) || !json_object_is_type(users, json_type_array) ||
	    json_object_array_length(users) > PRESENCE_USERS_MAX)
		return svc_resp_error(resp, SVC_E_VALIDATION, "users", "users must be an array of at most 1000 users.");
	text = json_object_to_json_string_ext(users, JSON_C_TO_STRING_PLAIN);
	p[0] = svc_dbv_str(id);
	p[1] = svc_dbv_str(text);
	if ((err = svc_db_run(req->ctx->db, STMT_PRESENCE_PUT, p, 2, NULL, NULL)) < 0)
		return err;
	return svc_resp_json(resp, 200, json_object_new_object());
}

/* A string field of at most `maxb` bytes, or NULL when absent or null; SVC_E_VALIDATION otherwise. */
static int opt_string(struct json_object *o, const char *name, size_t maxb, const char **out)
{
	struct json_object *v;

	*out = NULL;
	if (!json_object_object_get_ex(o, name, &v) || json_object_is_type(v, json_type_null))
		return 0;
	if (!json_object_is_type(v, json_type_string) || (size_t)json_object_get_string_len(v) > maxb ||
	    !svc_utf8_valid(json_object_get_string(v), (size_t)json_object_get_string_len(v)))
		return SVC_E_VALIDATION;
	*out = json_object_get_string(v);
	return 0;
}

static int percent(struct json_object *o, const char *name, char *out, size_t max)
{
	struct json_object *v;
	double d;

	if (!json_object_object_get_ex(o, name, &v) ||
	    (!json_object_is_type(v, json_type_double) && !json_object_is_type(v, json_type_int)))
		return SVC_E_VALIDATION;
	d = json_object_get_double(v);
	if (!isfinite(d) || d < 0 || d > 100)
		return SVC_E_VALIDATION;
	snprintf(out, max, "%.17g", d);
	return 0;
}

/* "2026-11-22T01:22:11.123Z" */
static int rfc3339_ms(const char *s)
{
	static const char shape[] = "dddd-dd-ddTdd:dd:dd.dddZ";
	size_t i;

	if (!s || strlen(s) != sizeof shape - 1)
		return 0;
	for (i = 0; shape[i]; i++)
		if (shape[i] == 'd' ? (s[i] < '0' || s[i] > '9') : s[i] != shape[i])
			return 0;
	return 1;
}

/* POST /api/internal/design-comments/:id: 201 {id}; 401; 400; 404; 409. */
enum svc_err svc_api_internal_comment_add(struct svc_req *req, struct svc_resp *resp)
{
	const char *id = svc_req_param(req, "id");
	struct json_object *body = req->json, *out;
	const char *project, *user, *content, *selector, *page, *parent, *created;
	char x[40], y[40];
	struct svc_dbv p[11];
	int err;

	project = svc_json_str(body, "projectId");
	user = svc_json_str(body, "userId");
	content = svc_json_str(body, "content");
	created = svc_json_str(body, "createdAt");
	if ((err = project_exists(req, project)) < 0)
		return err;
	if (!user || !svc_uuid_valid(user))
		return svc_resp_error(resp, SVC_E_VALIDATION, "userId", "userId must be a user id.");
	if (!content || svc_is_blank(content) || !svc_utf8_valid(content, strlen(content)) ||
	    svc_utf8_count(content, strlen(content)) > COMMENT_CONTENT_MAX)
		return svc_resp_error(resp, SVC_E_VALIDATION, "content", "content must be 1 to 10000 characters of text.");
	if (percent(body, "xPercent", x, sizeof x) < 0 || percent(body, "yPercent", y, sizeof y) < 0)
		return svc_resp_error(resp, SVC_E_VALIDATION, "xPercent", "xPercent and yPercent must be numbers from 0 to 100.");
	if (opt_string(body, "selector", COMMENT_FIELD_MAX, &selector) < 0 ||
	    opt_string(body, "pagePath", COMMENT_FIELD_MAX, &page) < 0)
		return svc_resp_error(resp, SVC_E_VALIDATION, "selector", "selector and pagePath must be short strings.");
	if (opt_string(body, "parentId", 36, &parent) < 0 || (parent && !svc_uuid_valid(parent)))
		return svc_resp_error(resp, SVC_E_VALIDATION, "parentId", "parentId must be a comment id.");
	if (!rfc3339_ms(created))
		return svc_resp_error(resp, SVC_E_VALIDATION, "createdAt", "createdAt must be an RFC 3339 UTC time with milliseconds.");
	if (parent) {
		struct svc_dbv q = svc_dbv_str(parent);
		struct svc_rows *rows = NULL;
		if ((err = svc_db_run(req->ctx->db, STMT_COMMENT_GET, &q, 1, &rows, NULL)) < 0)
			return err;
		err = rows && rows->nrows == 1 && strcmp(svc_rows_get(rows, 0, CGCOL_PROJECT), project) == 0
			      ? 0 : SVC_E_NOT_FOUND;
		svc_rows_free(rows);
		if (err < 0)
			return svc_resp_error(resp, err, "parentId", "parentId is not a comment of this project.");
	}
	p[0] = svc_dbv_str(id);
	p[1] = svc_dbv_str(project);
	p[2] = svc_dbv_str(user);
	p[3] = svc_dbv_str(parent);
	p[4] = svc_dbv_str(content);
	p[5] = svc_dbv_str(x);
	p[6] = svc_dbv_str(y);
	p[7] = svc_dbv_str(selector);
	p[8] = svc_dbv_str(page);
	p[9] = svc_dbv_str(created);
	p[10] = svc_dbv_str(created);
	if ((err = svc_db_run(req->ctx->db, STMT_COMMENT_INSERT, p, 11, NULL, NULL)) < 0)
		return err;
	out = json_object_new_object();
	json_object_object_add(out, "id", json_object_new_string(id));
	return svc_resp_json(resp, 201, out);
}

/* The three state moves: 200 {}; 401; 400; 404. */
static enum svc_err comment_move(struct svc_req *req, struct svc_resp *resp, enum svc_stmt stmt)
{
	const char *id = svc_req_param(req, "id");
	struct json_object *body = req->json;
	const char *project, *user = NULL, *at = NULL;
	struct svc_dbv p[4];
	uint64_t affected = 0;
	size_t n = 0;
	int err;

	project = svc_json_str(body, "projectId");
	if (!project || !svc_uuid_valid(project))
		return svc_resp_error(resp, SVC_E_VALIDATION, "projectId", "projectId must be a project id.");
	if (stmt == STMT_COMMENT_RESOLVE) {
		user = svc_json_str(body, "userId");
		at = svc_json_str(body, "resolvedAt");
		if (!user || !svc_uuid_valid(user) || !rfc3339_ms(at))
			return svc_resp_error(resp, SVC_E_VALIDATION, "userId", "userId and resolvedAt are required.");
		p[n++] = svc_dbv_str(user);
		p[n++] = svc_dbv_str(at);
	}
	p[n++] = svc_dbv_str(id);
	p[n++] = svc_dbv_str(project);
	if ((err = svc_db_run(req->ctx->db, stmt, p, n, NULL, &affected)) < 0)
		return err;
	if (affected == 0)
		return svc_resp_error(resp, SVC_E_NOT_FOUND, NULL, "No comment with this id in this project.");
	return svc_resp_json(resp, 200, json_object_new_object());
}

enum svc_err svc_api_internal_comment_resolve(struct svc_req *req, struct svc_resp *resp)
{
	return comment_move(req, resp, STMT_COMMENT_RESOLVE);
}

enum svc_err svc_api_internal_comment_unresolve(struct svc_req *req, struct svc_resp *resp)
{
	return comment_move(req, resp, STMT_COMMENT_UNRESOLVE);
}

enum svc_err svc_api_internal_comment_delete(struct svc_req *req, struct svc_resp *resp)
{
	return comment_move(req, resp, STMT_COMMENT_DELETE);
}

/* A design comment of the API's list: with its status. */
static struct json_object *comment_json(const struct svc_rows *rows, size_t r, const char *project_id)
{
	(void)project_id;
	return svc_comment_json(rows, r, 1);
}

/* GET /api/projects/:id/design-comments: 200 {items}; 401; 403; 404. */
enum svc_err svc_api_design_comments_list(struct svc_req *req, struct svc_resp *resp)
{
	static const struct svc_items it = { SVC_ITEMS_OF_PROJECT, "id", SVC_ACT_READ, STMT_COMMENTS_OF_PROJECT,
					     comment_json };

	return svc_resp_items(req, resp, &it);
}
