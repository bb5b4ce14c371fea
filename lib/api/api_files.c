/* api_files.c: a project's files and versions: list, read, history, the changes of a version and its checkout (spec "Project endpoints"). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api/api.h"
#include "core/err.h"
#include "core/fsx.h"
#include "auth/internal.h"
#include "core/json.h"
#include "project/app_decl.h"
#include "project/gitio.h"
#include "project/preview_build.h"
#include "project/quota.h"
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
 * directory into dir (max bytes), and its workspace's id into out_ws (37
 * bytes) when not NULL. Errors as svc_project_load().
 */
static int project_dir_ws(struct svc_req *req, const char *id, enum svc_action action, char *dir, size_t max,
			  char *out_ws)
{
	struct svc_rows *rows = NULL;
	int err;

	if ((err = svc_project_load(svc_req_caller(req), id, action, &rows)) < 0)
		return err;
	if (out_ws)
		snprintf(out_ws, 37, "%s", svc_rows_get(rows, 0, PCOL_WORKSPACE));
	svc_rows_free(rows);
	return svc_project_dir(&req->ctx->cfg, id, dir, max);
}

/* project_dir_ws() without the workspace. */
static int project_dir_for(struct svc_req *req, const char *id, enum svc_action action, char *dir, size_t max)
{
	return project_dir_ws(req, id, action, dir, max, NULL);
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

/* Resolves a version id as the versions list shows it (lib/api/api.h). */
int svc_api__version_sha(const char *dir, const char *sha, char *out)
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

/*
 * After a restore or a revert made version `sha` from `from` (named `key`): the project touched,
 * svc-wsd and the preview told, and 200 {sha, <key>: from, message}.
 */
static int version_made(struct svc_req *req, struct svc_resp *resp, const char *id, const char *sha, const char *key,
			const char *from, const char *msg)
{
	struct svc_dbv p = svc_dbv_str(id);
	struct json_object *body;

	svc_db_run(req->ctx->db, STMT_PROJECT_TOUCH, &p, 1, NULL, NULL);
	svc_internal_notify_files(&req->ctx->cfg, req->ctx->db, id); /* the live document takes the change (svc-wsd) */
	svc_preview_build_request(req->ctx->db, &req->ctx->cfg, id);
	svc_gitio_mirror_queue(req->ctx->db, id); /* git-io: the mirror gets the new version */
	body = json_object_new_object();
	json_object_object_add(body, "sha", json_object_new_string(sha));
	json_object_object_add(body, key, json_object_new_string(from));
	json_object_object_add(body, "message", json_object_new_string(msg));
	return svc_resp_json(resp, 200, body);
}

/* POST /projects/:id/versions/:sha/checkout: 200 {sha, restoredFrom}; 403; 404 (unknown project or sha). */
enum svc_err svc_api_projects_checkout(struct svc_req *req, struct svc_resp *resp)
{
	const char *id = svc_req_param(req, "id"), *sha = svc_req_param(req, "sha");
	struct svc_rows *rows = NULL;
	char dir[2048], aname[256], aemail[256], msg[128], out[41], full[41];
	int err;

	if ((err = svc_project_load(svc_req_caller(req), id, SVC_ACT_WRITE, &rows)) < 0)
		return err;
	svc_rows_free(rows);
	if ((err = svc_project_dir(&req->ctx->cfg, id, dir, sizeof dir)) < 0)
		return err;
	svc_project_author(req->ctx->db, req->user_id, aname, sizeof aname, aemail, sizeof aemail);
	if ((err = svc_api__version_sha(dir, sha, full)) < 0)
		return err == SVC_E_NOT_FOUND ? svc_resp_error(resp, err, NULL, "No version with this sha.") : err;
	snprintf(msg, sizeof msg, "Restore version %.12s", full);
	if ((err = svc_repo_checkout_as_new(dir, full, msg, aname, aemail, out)) < 0)
		return err == SVC_E_NOT_FOUND ? svc_resp_error(resp, err, NULL, "No version with this sha.") : err;
	return version_made(req, resp, id, out, "restoredFrom", full, msg);
}

/*
 * POST /projects/:id/versions/:sha/revert: takes back that version alone (issue 29: "Revert this
 * turn"), as a new version: 200 {sha, reverted, message}; 400 (the first version); 403; 404
 * (unknown project or sha); 409 conflict when a later version changed the same lines (the message
 * names the files; nothing changes). What is not committed yet is committed first.
 */
enum svc_err svc_api_projects_revert(struct svc_req *req, struct svc_resp *resp)
{
	const char *id = svc_req_param(req, "id"), *sha = svc_req_param(req, "sha");
	char dir[2048], ws[37], aname[256], aemail[256], msg[128], out[41], full[41], pending[41];
	char *conflicts = NULL;
	int err, lockfd, committed = 0;

	if ((err = project_dir_ws(req, id, SVC_ACT_WRITE, dir, sizeof dir, ws)) < 0)
		return err;
	if ((err = svc_api__version_sha(dir, sha, full)) < 0)
		return err == SVC_E_NOT_FOUND ? svc_resp_error(resp, err, NULL, "No version with this sha.") : err;
	if ((lockfd = svc_project_lock(dir)) < 0)
		return lockfd;
	svc_project_author(req->ctx->db, req->user_id, aname, sizeof aname, aemail, sizeof aemail);
	snprintf(msg, sizeof msg, "Revert version %.12s", full);
	if ((err = svc_project_commit_change(svc_req_caller(req), id, dir, "Save before a revert", pending, &committed)) == 0)
		err = svc_repo_revert(dir, full, msg, aname, aemail, out, &conflicts);
	close(lockfd);
	if (err == SVC_E_CONFLICT)
		err = svc_resp_error(resp, err, NULL, "This version cannot be taken back alone: later versions changed the same "
				     "lines of %s. Nothing was changed.", conflicts ? conflicts : "its files");
	else if (err == SVC_E_VALIDATION)
		err = svc_resp_error(resp, err, NULL, "The first version has nothing before it to go back to.");
	else if (err == SVC_E_NOT_FOUND)
		err = svc_resp_error(resp, err, NULL, "No version with this sha.");
	free(conflicts);
	if (err < 0)
		return err;
	return version_made(req, resp, id, out, "reverted", full, msg);
}

/* The +/- line counts of a unified diff (inside its hunks only) into `f` as additions and deletions (null without a text). */
static void add_counts(struct json_object *f, const char *diff)
{
	int64_t plus = 0, minus = 0;
	const char *l = diff;
	int hunk = 0;

	if (!diff) {
		json_object_object_add(f, "additions", NULL);
		json_object_object_add(f, "deletions", NULL);
		return;
	}
	while (l && *l) {
		if (strncmp(l, "@@", 2) == 0)
			hunk = 1;
		else if (strncmp(l, "diff --git ", 11) == 0)
			hunk = 0;
		else if (hunk && *l == '+')
			plus++;
		else if (hunk && *l == '-')
			minus++;
		l = strchr(l, '\n');
		if (l)
			l++;
	}
	json_object_object_add(f, "additions", json_object_new_int64(plus));
	json_object_object_add(f, "deletions", json_object_new_int64(minus));
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
	if ((err = svc_api__version_sha(dir, sha, full)) < 0)
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
		add_counts(f, d.files[i].diff);
		json_object_array_add(files, f);
	}
	json_object_object_add(body, "files", files);
	json_object_object_add(body, "truncated", json_object_new_boolean(d.truncated));
	svc_repo_diff_dispose(&d);
	return svc_resp_json(resp, 200, body);
}

/* ---- creating, renaming and deleting files (the editor's file tree) ---- */

/*
 * The common part of the file writes: checks SVC_ACT_WRITE on project `id` and
 * the path `rel` (answering 400 validation_failed, `field` path, for a refused
 * one), locks the project directory (svc_project_lock) and writes it into dir
 * and the normalised path into norm. Returns the lock's descriptor (>= 0, the
 * caller closes it) or an error (already answered for a refused path).
 */
static int file_change_begin(struct svc_req *req, struct svc_resp *resp, const char *id, const char *rel,
			     const char *field, char *dir, size_t max, char *norm, char *out_ws)
{
	int err;

	if ((err = project_dir_ws(req, id, SVC_ACT_WRITE, dir, max, out_ws)) < 0)
		return err;
	if (svc_fsx_check_path(rel, norm) < 0)
		return svc_resp_error(resp, SVC_E_VALIDATION, field, "the file path is not allowed");
	return svc_project_lock(dir);
}

/*
 * Answers a file change: commits it as `msg` (svc_project_commit_change) and
 * answers `status` with {path, sha} (sha null when nothing changed), plus
 * oldPath when old_path is not NULL and created for a write. Closes lockfd.
 */
static int file_change_end(struct svc_req *req, struct svc_resp *resp, const char *id, const char *dir, int lockfd,
			   const char *msg, int status, const char *path, const char *old_path)
{
	struct json_object *body;
	char sha[41] = "";
	int err, committed = 0;

	err = svc_project_commit_change(svc_req_caller(req), id, dir, msg, sha, &committed);
	close(lockfd);
	if (err < 0)
		return err;
	body = json_object_new_object();
	json_object_object_add(body, "path", json_object_new_string(path));
	if (old_path)
		json_object_object_add(body, "oldPath", json_object_new_string(old_path));
	svc_json_add_str(body, "sha", committed ? sha : NULL);
	return svc_resp_json(resp, status, body);
}

/* Turns an fsx error of a file change into its answer (field names the path it is about). */
static int file_change_error(struct svc_resp *resp, int err, const char *field)
{
	switch (err) {
	case SVC_E_VALIDATION:
		return svc_resp_error(resp, err, field, "the file path is not allowed (a directory, a symlink, or through a file)");
	case SVC_E_NOT_FOUND:
		return svc_resp_error(resp, err, field, "No such file in the project.");
	case SVC_E_CONFLICT:
		return svc_resp_error(resp, err, field, "A file with this path already exists.");
	default:
		return err;
	}
}

static const struct svc_field put_fields[] = {
	{ "content", SVC_V_STR, SVC_F_REQUIRED, 0, FILE_READ_MAX, NULL },
	{ "overwrite", SVC_V_BOOL, 0, 0, 0, NULL },
};
const struct svc_body svc_api_projects_file_put_body = SVC_BODY(put_fields);

/*
 * PUT /projects/:id/files/<path> {content, overwrite?}: creates the file (201),
 * or with overwrite true replaces an existing one (200); one commit ("Create
 * <path>" / "Edit <path>"). 400 path; 403; 404 project; 409 exists (without
 * overwrite); 413 body over 1 MiB (the router), or the project would go past
 * its repository quota (SVC_QUOTA_REPO_BYTES; nothing written).
 */
enum svc_err svc_api_projects_file_put(struct svc_req *req, struct svc_resp *resp)
{
	const char *id = svc_req_param(req, "id"), *path = svc_req_param(req, "*");
	char dir[2048], norm[SVC_FSX_PATH_MAX + 1], msg[SVC_FSX_PATH_MAX + 16], *old = NULL, ws[37], full[4200];
	const char *content = svc_json_str(req->json, "content");
	struct stat st;
	struct json_object *v;
	int fd, err, overwrite = 0, existed = 0;
	size_t len, old_len = 0;

	if (json_object_object_get_ex(req->json, "overwrite", &v))
		overwrite = json_object_get_boolean(v);
	json_object_object_get_ex(req->json, "content", &v);
	len = (size_t)json_object_get_string_len(v);
	if ((fd = file_change_begin(req, resp, id, path, "path", dir, sizeof dir, norm, ws)) < 0)
		return fd;
	/* svc.data.json stays a valid declaration (lib/project/app_decl.h): the last valid one is in force */
	if ((err = svc_app_decl_guard(norm, content, len, full, sizeof full)) < 0) {
		close(fd);
		return svc_resp_error(resp, err, "content", "%s", full);
	}
	/* the repository quota, with the file it replaces (if any) taken out; nothing is written past it */
	snprintf(full, sizeof full, "%s/%s", dir, norm);
	if ((err = svc_quota_bytes_check(req->ctx->db, &req->ctx->cfg, ws, id, dir, SVC_QUOTA_REPO_BYTES, len,
					 lstat(full, &st) == 0 && S_ISREG(st.st_mode) ? (uint64_t)st.st_size : 0,
					 resp->message, sizeof resp->message)) < 0) {
		close(fd);
		return err;
	}
	if (overwrite) {
		/* a regular file there? (read at most 0 bytes: an empty one reads, a longer one is too large) */
		err = svc_fsx_read(dir, norm, 0, &old, &old_len);
		existed = err == 0 || err == SVC_E_TOO_LARGE;
		free(old);
		err = svc_fsx_write(dir, norm, content, len);
	} else {
		err = svc_fsx_create(dir, norm, content, len);
	}
	if (err < 0) {
		close(fd);
		return file_change_error(resp, err, "path");
	}
	snprintf(msg, sizeof msg, "%s %s", existed ? "Edit" : "Create", norm);
	return file_change_end(req, resp, id, dir, fd, msg, existed ? 200 : 201, norm, NULL);
}

static const struct svc_field move_fields[] = {
	{ "path", SVC_V_STR, SVC_F_REQUIRED, 1, SVC_FSX_PATH_MAX, NULL },
};
const struct svc_body svc_api_projects_file_move_body = SVC_BODY(move_fields);

/*
 * PATCH /projects/:id/files/<path> {path}: renames (moves) the file to `path`,
 * making missing directories; one commit ("Rename <old> to <new>"). 200
 * {path, oldPath, sha}; 400 path (either); 403; 404 project or file; 409 the
 * new path exists.
 */
enum svc_err svc_api_projects_file_move(struct svc_req *req, struct svc_resp *resp)
{
	const char *id = svc_req_param(req, "id"), *path = svc_req_param(req, "*");
	char dir[2048], from[SVC_FSX_PATH_MAX + 1], to[SVC_FSX_PATH_MAX + 1], msg[2 * SVC_FSX_PATH_MAX + 16];
	int fd, err;

	if ((fd = file_change_begin(req, resp, id, path, "oldPath", dir, sizeof dir, from, NULL)) < 0)
		return fd;
	if (svc_fsx_check_path(svc_json_str(req->json, "path"), to) < 0) {
		close(fd);
		return svc_resp_error(resp, SVC_E_VALIDATION, "path", "the new file path is not allowed");
	}
	/* a file renamed to svc.data.json must be a valid declaration (lib/project/app_decl.h) */
	if ((err = svc_app_decl_guard_rename(dir, from, to, msg, sizeof msg)) < 0) {
		close(fd);
		return svc_resp_error(resp, err, "path", "%s", msg);
	}
	if ((err = svc_fsx_rename(dir, from, to)) < 0) {
		close(fd);
		return file_change_error(resp, err, err == SVC_E_NOT_FOUND ? "oldPath" : "path");
	}
	snprintf(msg, sizeof msg, "Rename %s to %s", from, to);
	return file_change_end(req, resp, id, dir, fd, msg, 200, to, from);
}

/*
 * DELETE /projects/:id/files/<path>: deletes the file; one commit ("Delete
 * <path>"). 200 {path, sha}; 400 path; 403; 404 project or file.
 */
enum svc_err svc_api_projects_file_delete(struct svc_req *req, struct svc_resp *resp)
{
	const char *id = svc_req_param(req, "id"), *path = svc_req_param(req, "*");
	char dir[2048], norm[SVC_FSX_PATH_MAX + 1], msg[SVC_FSX_PATH_MAX + 16];
	int fd, err;

	if ((fd = file_change_begin(req, resp, id, path, "path", dir, sizeof dir, norm, NULL)) < 0)
		return fd;
	if ((err = svc_fsx_delete(dir, norm)) < 0) {
		close(fd);
		return file_change_error(resp, err, "path");
	}
	snprintf(msg, sizeof msg, "Delete %s", norm);
	return file_change_end(req, resp, id, dir, fd, msg, 200, norm, NULL);
}
