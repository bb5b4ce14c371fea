/* api_files.c: a project's files and versions: list, read, history, the changes of a version and its checkout (spec "Project endpoints"). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "core/err.h"
#include "core/fsx.h"
#include "auth/internal.h"
#include "core/json.h"
#include "project/repo.h"

#define FILE_READ_MAX (10u * 1024 * 1024)
#define FILES_LIST_MAX 10000
#define VERSIONS_MAX 500          /* versions listed */
#define RESTORE_SEARCH_MAX 100000 /* versions searched for a checkout */
#define DIFF_FILES_MAX 1000             /* files listed in a version's diff */
#define DIFF_FILE_BYTES (256u * 1024)   /* text of one file's diff */
#define DIFF_TOTAL_BYTES (2u * 1024 * 1024) /* text of all of them */

/*
 * Checks `action` on project `id` for the caller and writes the project's
 * directory into dir (max bytes). Errors as svc_project_load().
 */
static int project_dir_for(struct svc_req *req, const char *id, enum svc_action action, char *dir, size_t max)
{
	struct svc_rows *rows = NULL;
	int err;

	if ((err = svc_project_load(req, id, action, &rows)) < 0)
		return err;
	svc_rows_free(rows);
	return svc_project_dir(&req->ctx->cfg, id, dir, max);
}

/* GET /projects/:id/files: 200 {items: [{path, size, updatedAt}]}; 403; 404. */
enum svc_err svc_api_projects_files(struct svc_req *req, struct svc_resp *resp)
{
	const char *id = svc_req_param(req, "id");
	struct svc_fsx_entry *list = NULL;
	struct json_object *body, *items;
	size_t n = 0, i;
	char dir[2048];
	int err;

	if ((err = project_dir_for(req, id, SVC_ACT_READ, dir, sizeof dir)) < 0 ||
	    (err = svc_fsx_list(dir, FILES_LIST_MAX, &list, &n)) < 0)
		return err;
	body = json_object_new_object();
	items = json_object_new_array();
	for (i = 0; i < n; i++) {
		struct json_object *f = json_object_new_object();
		char ts[25];
		svc_time_format(list[i].mtime_ms, ts);
		json_object_object_add(f, "path", json_object_new_string(list[i].path));
		json_object_object_add(f, "size", json_object_new_int64((int64_t)list[i].size));
		json_object_object_add(f, "updatedAt", json_object_new_string(ts));
		json_object_array_add(items, f);
	}
	json_object_object_add(body, "items", items);
	svc_fsx_list_free(list, n);
	return svc_resp_json(resp, 200, body);
}

/* GET /projects/:id/files/<path>: 200 raw content; 400 refused path; 403; 404; 413 over 10 MiB. */
enum svc_err svc_api_projects_file(struct svc_req *req, struct svc_resp *resp)
{
	const char *id = svc_req_param(req, "id"), *path = svc_req_param(req, "*");
	char dir[2048], norm[SVC_FSX_PATH_MAX + 1], *data = NULL;
	size_t len = 0;
	int err;

	if ((err = project_dir_for(req, id, SVC_ACT_READ, dir, sizeof dir)) < 0)
		return err;
	if (svc_fsx_check_path(path, norm) < 0)
		return svc_resp_error(resp, SVC_E_VALIDATION, "path", "the file path is not allowed");
	if ((err = svc_fsx_read(dir, norm, FILE_READ_MAX, &data, &len)) < 0)
		return err;
	err = svc_resp_raw(resp, 200, svc_fsx_content_type(norm), data, len);
	/* the project's own bytes never render on the API's origin, even opened directly: a
	 * download (with nosniff and the API's CSP); the app reads them with fetch() */
	if (err == 0)
		svc_resp_header(resp, "Content-Disposition", "attachment");
	free(data);
	return err;
}

/* GET /projects/:id/versions: 200 {items: [{sha, message, author, authorEmail, createdAt}]} newest first; 403; 404. */
enum svc_err svc_api_projects_versions(struct svc_req *req, struct svc_resp *resp)
{
	const char *id = svc_req_param(req, "id");
	struct svc_repo_commit *log = NULL;
	struct json_object *body, *items;
	size_t n = 0, i;
	char dir[2048];
	int err;

	if ((err = project_dir_for(req, id, SVC_ACT_READ, dir, sizeof dir)) < 0 ||
	    (err = svc_repo_log(dir, VERSIONS_MAX, &log, &n)) < 0)
		return err;
	body = json_object_new_object();
	items = json_object_new_array();
	for (i = 0; i < n; i++) {
		struct json_object *c = json_object_new_object();
		char ts[25];
		svc_time_format(log[i].time_ms, ts);
		json_object_object_add(c, "sha", json_object_new_string(log[i].sha));
		svc_json_add_str(c, "message", log[i].message);
		svc_json_add_str(c, "author", log[i].author_name);
		svc_json_add_str(c, "authorEmail", log[i].author_email);
		json_object_object_add(c, "createdAt", json_object_new_string(ts));
		json_object_array_add(items, c);
	}
	json_object_object_add(body, "items", items);
	svc_repo_log_free(log, n);
	return svc_resp_json(resp, 200, body);
}

/*
 * Resolves a version id as the versions list shows it: the full sha of the
 * one listed commit that `sha` (7 to 40 hex digits, either case) starts
 * with. SVC_E_NOT_FOUND for no match, several matches or a malformed sha.
 */
static int full_sha(const char *dir, const char *sha, char *out)
{
	struct svc_repo_commit *log = NULL;
	size_t n = 0, i, len = strlen(sha), found = 0;
	char lower[41];
	int err;

	if (len < 7 || len > 40)
		return SVC_E_NOT_FOUND;
	for (i = 0; i < len; i++) {
		char c = sha[i];
		if (c >= 'A' && c <= 'F')
			c = (char)(c - 'A' + 'a');
		if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
			return SVC_E_NOT_FOUND;
		lower[i] = c;
	}
	lower[len] = '\0';
	if ((err = svc_repo_log(dir, RESTORE_SEARCH_MAX, &log, &n)) < 0)
		return err;
	for (i = 0; i < n; i++) {
		if (strncmp(log[i].sha, lower, len) == 0) {
			if (found++ == 0)
				memcpy(out, log[i].sha, 41);
		}
	}
	svc_repo_log_free(log, n);
	return found == 1 ? 0 : SVC_E_NOT_FOUND;
}

/* POST /projects/:id/versions/:sha/checkout: 200 {sha, restoredFrom}; 403; 404 (unknown project or sha). */
enum svc_err svc_api_projects_checkout(struct svc_req *req, struct svc_resp *resp)
{
	const char *id = svc_req_param(req, "id"), *sha = svc_req_param(req, "sha");
	struct svc_rows *rows = NULL;
	struct json_object *body;
	char dir[2048], aname[256], aemail[256], msg[128], out[41], full[41];
	struct svc_dbv p;
	int err;

	if ((err = svc_project_load(req, id, SVC_ACT_WRITE, &rows)) < 0)
		return err;
	svc_rows_free(rows);
	if ((err = svc_project_dir(&req->ctx->cfg, id, dir, sizeof dir)) < 0)
		return err;
	svc_project_author(req->ctx->db, req->user_id, aname, sizeof aname, aemail, sizeof aemail);
	if ((err = full_sha(dir, sha, full)) < 0)
		return err == SVC_E_NOT_FOUND ? svc_resp_error(resp, err, NULL, "No version with this sha.") : err;
	snprintf(msg, sizeof msg, "Restore version %.12s", full);
	if ((err = svc_repo_checkout_as_new(dir, full, msg, aname, aemail, out)) < 0)
		return err == SVC_E_NOT_FOUND ? svc_resp_error(resp, err, NULL, "No version with this sha.") : err;
	p = svc_dbv_str(id);
	svc_db_run(req->ctx->db, STMT_PROJECT_TOUCH, &p, 1, NULL, NULL);
	svc_internal_notify_files(&req->ctx->cfg, id); /* the live document takes the change (svc-wsd) */
	body = json_object_new_object();
	json_object_object_add(body, "sha", json_object_new_string(out));
	json_object_object_add(body, "restoredFrom", json_object_new_string(full));
	json_object_object_add(body, "message", json_object_new_string(msg));
	return svc_resp_json(resp, 200, body);
}

/*
 * GET /projects/:id/versions/:sha/diff: 200 {sha, parent, files: [{path,
 * oldPath, status, binary, diff, truncated}], truncated}: what the version
 * changed against the one before it, one unified diff per file, texts capped
 * (256 KiB a file, 2 MiB in all; 1000 files); 403; 404 (unknown project, or a
 * sha that is malformed, ambiguous or not one of the versions).
 */
enum svc_err svc_api_projects_version_diff(struct svc_req *req, struct svc_resp *resp)
{
	const char *id = svc_req_param(req, "id"), *sha = svc_req_param(req, "sha");
	struct svc_repo_diff d;
	struct json_object *body, *files;
	char dir[2048], full[41];
	size_t i;
	int err;

	if ((err = project_dir_for(req, id, SVC_ACT_READ, dir, sizeof dir)) < 0)
		return err;
	if ((err = full_sha(dir, sha, full)) < 0)
		return err == SVC_E_NOT_FOUND ? svc_resp_error(resp, err, NULL, "No version with this sha.") : err;
	if ((err = svc_repo_diff(dir, full, DIFF_FILES_MAX, DIFF_FILE_BYTES, DIFF_TOTAL_BYTES, &d)) < 0) {
		svc_repo_diff_dispose(&d);
		return err == SVC_E_NOT_FOUND ? svc_resp_error(resp, err, NULL, "No version with this sha.") : err;
	}
	body = json_object_new_object();
	files = json_object_new_array();
	json_object_object_add(body, "sha", json_object_new_string(d.sha));
	svc_json_add_str(body, "parent", d.parent[0] ? d.parent : NULL);
	for (i = 0; i < d.nfiles; i++) {
		struct json_object *f = json_object_new_object();
		json_object_object_add(f, "path", json_object_new_string(d.files[i].path));
		svc_json_add_str(f, "oldPath", d.files[i].old_path);
		json_object_object_add(f, "status", json_object_new_string(d.files[i].status));
		json_object_object_add(f, "binary", json_object_new_boolean(d.files[i].binary));
		svc_json_add_str(f, "diff", d.files[i].diff);
		json_object_object_add(f, "truncated", json_object_new_boolean(d.files[i].truncated));
		json_object_array_add(files, f);
	}
	json_object_object_add(body, "files", files);
	json_object_object_add(body, "truncated", json_object_new_boolean(d.truncated));
	svc_repo_diff_dispose(&d);
	return svc_resp_json(resp, 200, body);
}
