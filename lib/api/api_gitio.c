/* api_gitio.c: Git in and out of svc: a version as a ZIP, a project imported from a Git URL or a ZIP, the mirror to a forge (docs/git.md). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/api.h"
#include "core/err.h"
#include "core/fsx.h"
#include "core/json.h"
#include "core/log.h"
#include "core/util.h"
#include "auth/crypto.h"
#include "integ/integ.h"
#include "project/gitcmd.h"
#include "project/gitio.h"
#include "project/quota.h"
#include "project/repo.h"

/* What export_sink() streams into. */
struct export_out {
	struct svc_resp *resp;
	const char *filename; /* Content-Disposition's */
	int started;
};

/* Starts the answer on git's first bytes (so an early failure is still a plain error) and streams them. */
static int export_sink(void *vctx, const char *data, size_t len)
{
	struct export_out *o = vctx;
	char disp[160];
	int err;

	if (!o->started) {
		snprintf(disp, sizeof disp, "attachment; filename=\"%s\"", o->filename);
		svc_resp_header(o->resp, "Content-Disposition", disp);
		if ((err = svc_resp_stream_begin(o->resp, 200, "application/zip")) < 0)
			return err;
		o->started = 1;
	}
	return svc_resp_stream_write(o->resp, data, len);
}

/*
 * GET /projects/:id/export.zip[?sha=<version>]: 200 application/zip, the tree
 * of that version (default the latest) as `git archive --format=zip` makes
 * it, streamed, named <slug>-<7 hex>.zip; 403; 404 (unknown project, no such
 * version, a malformed sha, a project without versions yet).
 */
enum svc_err svc_api_projects_export(struct svc_req *req, struct svc_resp *resp)
{
	const char *id = svc_req_param(req, "id");
	struct svc_rows *rows = NULL;
	struct svc_repo_commit *log = NULL;
	struct svc_git_run run = { 0 };
	struct export_out out = { resp, NULL, 0 };
	char dir[2048], want[64], full[41], filename[96], why[512];
	size_t n = 0;
	int err, has, status = 0;

	if ((err = svc_project_load(svc_req_caller(req), id, SVC_ACT_READ, &rows)) < 0)
		return err;
	if ((err = svc_project_dir(&req->ctx->cfg, id, dir, sizeof dir)) < 0)
		goto done;
	has = svc_req_query(req, "sha", want, sizeof want);
	if (has < 0) {
		err = svc_resp_error(resp, SVC_E_NOT_FOUND, NULL, "No version with this sha.");
		goto done;
	}
	if (has) {
		err = svc_api__version_sha(dir, want, full);
	} else if ((err = svc_repo_log(dir, 1, &log, &n)) == 0) {
		if (n == 1)
			memcpy(full, log[0].sha, 41);
		else
			err = SVC_E_NOT_FOUND;
		svc_repo_log_free(log, n);
	} else {
		err = SVC_E_NOT_FOUND; /* no commit yet (an import under way) */
	}
	if (err < 0) {
		if (err == SVC_E_NOT_FOUND)
			err = svc_resp_error(resp, err, NULL, "No version with this sha.");
		goto done;
	}
	snprintf(filename, sizeof filename, "%.64s-%.7s.zip", svc_rows_get(rows, 0, PCOL_SLUG), full);
	out.filename = filename;
	run.dir = dir;
	run.args[0] = "archive";
	run.args[1] = "--format=zip";
	run.args[2] = full;
	run.sink = export_sink;
	run.sink_ctx = &out;
	run.timeout_ms = 600000;
	err = svc_git_run(&run, &status, why, sizeof why);
	if (err == 0 && status != 0) {
		svc_log_error("export %s %s: git archive exited %d: %s", id, full, status, why);
		err = SVC_E_INTERNAL;
	}
	if (err < 0 && out.started)
		err = 0; /* the answer has begun: it just ends short, and the ZIP does not open */
done:
	svc_rows_free(rows);
	return err;
}

/* ---- import ---- */

#define IMPORT_JSON_MAX (64u * 1024)

static const struct svc_field import_fields[] = {
	{ "name", SVC_V_TEXT, SVC_F_REQUIRED, 1, 128, NULL },
	{ "gitUrl", SVC_V_STR, SVC_F_REQUIRED, 1, SVC_GITIO_URL_MAX, NULL },
	{ "ref", SVC_V_STR, SVC_F_NULLABLE, 1, 255, NULL },
	{ "username", SVC_V_STR, SVC_F_NULLABLE, 0, 255, NULL },
	{ "token", SVC_V_STR, SVC_F_NULLABLE, 0, 1000, NULL },
	{ "folderId", SVC_V_UUID, SVC_F_NULLABLE, 0, 0, NULL },
};

/* The content type of `req` without parameters is `type`. */
static int content_type_is(struct svc_req *req, const char *type)
{
	const char *ct = svc_req_header(req, "Content-Type");
	size_t n = strlen(type);

	while (ct && *ct == ' ')
		ct++;
	return ct && strncasecmp(ct, type, n) == 0 && (ct[n] == '\0' || ct[n] == ';' || ct[n] == ' ');
}

/* A branch or tag name git would take, as a person types it: no "..", no leading '-', [A-Za-z0-9._/-]. */
static int ref_ok(const char *ref)
{
	size_t n = strlen(ref);

	if (n == 0 || n > 255 || ref[0] == '-' || ref[0] == '/' || ref[n - 1] == '/' || strstr(ref, "..") ||
	    strstr(ref, "//") || strstr(ref, "@{") || (n >= 5 && strcmp(ref + n - 5, ".lock") == 0))
		return 0;
	return strspn(ref, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._/-") == n;
}

/* Creates the project of `np` and answers 201 with it (svc_api_projects_create's answer). */
static enum svc_err import_create(struct svc_req *req, struct svc_resp *resp, struct svc_project_new *np)
{
	struct svc_rows *rows = NULL;
	struct json_object *o;
	char msg[256], id[37], chat_id[37];
	const char *field = NULL;
	int err;

	if ((err = svc_project_create(req->ctx->db, &req->ctx->cfg, np, &field, msg, sizeof msg, id, chat_id)) < 0)
		return err == SVC_E_VALIDATION ? svc_resp_error(resp, err, field, "%s", msg) : err;
	if ((err = svc_project_load(svc_req_caller(req), id, SVC_ACT_READ, &rows)) < 0)
		return err;
	o = svc_project_json(rows, 0);
	json_object_object_add(o, "defaultChatId", json_object_new_string(chat_id));
	svc_rows_free(rows);
	return svc_resp_json(resp, 201, o);
}

/* The import of a ZIP body: unpacked and checked first, into a directory the creation copies. */
static enum svc_err import_zip(struct svc_req *req, struct svc_resp *resp, struct svc_project_new *np)
{
	char tmp[2100], why[512] = "", rnd[17];
	uint64_t bytes = 0, limit = 0;
	int err;

	if (svc_random_hex(rnd, 8) < 0)
		return SVC_E_INTERNAL;
	snprintf(tmp, sizeof tmp, "%s/projects/.zip-%s", req->ctx->cfg.data_dir, rnd);
	if ((err = svc_project_mkdirs(tmp)) < 0)
		return err;
	err = svc_gitio_zip_extract(&req->ctx->cfg, req->body, req->body_len, tmp, why, sizeof why);
	if (err == SVC_E_VALIDATION || err == SVC_E_TOO_LARGE) {
		err = svc_resp_error(resp, err, err == SVC_E_VALIDATION ? "body" : NULL, "%s", why);
		goto done;
	}
	if (err < 0)
		goto done;
	/* the project's repository quota (SVC_QUOTA_REPO_BYTES of the workspace's plan), as a Git import keeps it */
	if ((err = svc_quota_dir_bytes(tmp, &bytes)) < 0 ||
	    (err = svc_quota_workspace_limit(req->ctx->db, &req->ctx->cfg, np->workspace_id, SVC_QUOTA_REPO_BYTES, &limit)) < 0)
		goto done;
	if (limit && bytes > limit) {
		err = svc_resp_error(resp, SVC_E_TOO_LARGE, NULL,
				     "The ZIP unpacks to %llu bytes; the workspace's quota of one project is %llu bytes.",
				     (unsigned long long)bytes, (unsigned long long)limit);
		goto done;
	}
	np->source_dir = tmp;
	np->commit_message = "Import from a ZIP archive";
	err = import_create(req, resp, np);
done:
	svc_fsx_remove_tree(tmp);
	return err;
}

/* The import of a Git URL: checked now, cloned by svc-worker (svc_gitio_import_job()). */
static enum svc_err import_git(struct svc_req *req, struct svc_resp *resp, struct svc_project_new *np,
			       struct json_object *body)
{
	struct svc_gitio_remote rm;
	struct svc_gitio_import im;
	char tmp[2100], why[512] = "", rnd[17], cmsg[128];
	const char *url = svc_json_str(body, "gitUrl"), *ref = svc_json_str(body, "ref");
	int err;

	if ((err = svc_gitio_url_parse(url, &rm, why, sizeof why)) < 0)
		return svc_resp_error(resp, err, "gitUrl", "%s", why);
	if (ref && !ref_ok(ref))
		return svc_resp_error(resp, SVC_E_VALIDATION, "ref", "ref must be a branch or tag name");
	if ((err = svc_gitio_resolve(&req->ctx->cfg, &rm, why, sizeof why)) < 0)
		return svc_resp_error(resp, SVC_E_VALIDATION, "gitUrl",
				      err == SVC_E_FORBIDDEN ? "gitUrl may not point at an internal address (%s)" : "%s", why);
	memset(&im, 0, sizeof im);
	im.cfg = &req->ctx->cfg;
	im.workspace_id = np->workspace_id;
	im.user_id = req->user_id;
	im.url = url;
	im.ref = ref;
	im.username = svc_json_str(body, "username");
	im.token = svc_json_str(body, "token");
	if (svc_random_hex(rnd, 8) < 0)
		return SVC_E_INTERNAL;
	snprintf(tmp, sizeof tmp, "%s/projects/.git-%s", req->ctx->cfg.data_dir, rnd);
	if ((err = svc_project_mkdirs(tmp)) < 0)
		return err;
	snprintf(cmsg, sizeof cmsg, "Importing from %.100s", rm.host);
	np->source_dir = tmp;
	np->commit_message = cmsg;
	np->in_tx = svc_gitio_import_begin;
	np->in_tx_arg = &im;
	err = import_create(req, resp, np);
	svc_fsx_remove_tree(tmp);
	return err == SVC_E_UNAVAILABLE ? svc_resp_error(resp, err, NULL, "Tokens cannot be kept: ENCRYPTION_KEY is not set.")
					: err;
}

/*
 * POST /workspaces/:wid/projects/import: a JSON body {name, gitUrl, ref?,
 * username?, token?, folderId?} (201, the project importingState
 * "importing" until svc-worker has cloned it) or a ZIP body
 * (Content-Type: application/zip, name from ?name=; 201 with the files in
 * its first version). 400 validation_failed (a URL that is not https, an
 * internal address, a name that does not resolve, a ZIP that is not one or
 * holds a refused entry); 403; 404 unknown workspace; 413 (body, unpacked
 * size, entries, the project's repository quota); 415 another content type.
 */
enum svc_err svc_api_projects_import(struct svc_req *req, struct svc_resp *resp)
{
	const char *wid = svc_req_param(req, "wid"), *field = NULL;
	struct svc_project_new np;
	struct json_object *body = NULL;
	char role[16], msg[256], name[520];
	int err, has;

	if ((err = svc_workspace_role(svc_req_caller(req), wid, role)) < 0)
		return err;
	memset(&np, 0, sizeof np);
	np.workspace_id = wid;
	np.user_id = req->user_id;
	np.visibility = "workspace";
	if (content_type_is(req, "application/zip")) {
		has = svc_req_query(req, "name", name, sizeof name);
		if (has < 0 || (has && (svc_is_blank(name) || svc_utf8_count(name, strlen(name)) > 128)))
			return svc_resp_error(resp, SVC_E_VALIDATION, "name", "name must be 1 to 128 characters");
		np.name = has ? name : "Imported project";
		return import_zip(req, resp, &np);
	}
	if (!content_type_is(req, "application/json"))
		return svc_resp_error(resp, SVC_E_MEDIA_TYPE, NULL, "Send JSON {name, gitUrl} or a ZIP (application/zip).");
	if (req->body_len > IMPORT_JSON_MAX)
		return SVC_E_TOO_LARGE;
	if ((err = svc_json_parse_object(req->body ? req->body : "", req->body_len, &body)) < 0)
		return err;
	if ((err = svc_json_validate(body, import_fields, sizeof import_fields / sizeof import_fields[0], &field, msg,
				     sizeof msg)) < 0) {
		err = svc_resp_error(resp, err, field, "%s", msg);
		goto done;
	}
	np.name = svc_json_str(body, "name");
	np.folder_id = svc_json_str(body, "folderId");
	err = import_git(req, resp, &np, body);
done:
	json_object_put(body);
	return err;
}

/* ---- the mirror ---- */

static const struct svc_field remote_fields[] = {
	{ "url", SVC_V_STR, SVC_F_REQUIRED, 1, SVC_GITIO_URL_MAX, NULL },
	{ "username", SVC_V_STR, SVC_F_NULLABLE, 0, 255, NULL },
	{ "token", SVC_V_TEXT, SVC_F_REQUIRED, 1, 1000, NULL },
	{ "branch", SVC_V_STR, SVC_F_NULLABLE, 1, 255, NULL },
};
const struct svc_body svc_api_git_remote_put_body = SVC_BODY(remote_fields);

static const struct svc_field push_fields[] = {
	{ "branch", SVC_V_STR, SVC_F_NULLABLE, 1, 255, NULL },
};
const struct svc_body svc_api_git_push_body = SVC_BODY(push_fields);

/* Loads project `id` for a change by the caller; writes its workspace's id into wid (37 bytes). */
static int mirror_project(struct svc_req *req, const char *id, char *wid)
{
	struct svc_rows *rows = NULL;
	int err;

	if ((err = svc_project_load(svc_req_caller(req), id, SVC_ACT_WRITE, &rows)) < 0)
		return err;
	snprintf(wid, 37, "%s", svc_rows_get(rows, 0, PCOL_WORKSPACE));
	svc_rows_free(rows);
	return 0;
}

/* The remote of project `id` as the API shows it (never its token), or JSON null. */
static int remote_json(struct svc_db *db, const char *id, struct json_object **out)
{
	struct svc_rows *rows = NULL;
	struct svc_dbv p = svc_dbv_str(id);
	struct json_object *o, *last;
	int err;

	*out = NULL;
	if ((err = svc_db_run(db, STMT_GITIO_REMOTE_GET, &p, 1, &rows, NULL)) < 0)
		return err;
	if (rows && rows->nrows == 1) {
		o = json_object_new_object();
		svc_json_add_str(o, "url", svc_rows_get(rows, 0, GRCOL_URL));
		svc_json_add_str(o, "branch", svc_rows_get(rows, 0, GRCOL_BRANCH));
		svc_json_add_str(o, "username", svc_rows_get(rows, 0, GRCOL_USERNAME));
		json_object_object_add(o, "hasToken", json_object_new_boolean(1));
		last = NULL;
		if (svc_rows_get(rows, 0, GRCOL_PUSH_AT)) {
			const char *ok = svc_rows_get(rows, 0, GRCOL_PUSH_OK);
			last = json_object_new_object();
			svc_json_add_time(last, "at", svc_rows_get(rows, 0, GRCOL_PUSH_AT));
			json_object_object_add(last, "ok", json_object_new_boolean(ok && strcmp(ok, "1") == 0));
			svc_json_add_str(last, "sha", svc_rows_get(rows, 0, GRCOL_PUSH_SHA));
			svc_json_add_str(last, "message", svc_rows_get(rows, 0, GRCOL_PUSH_MESSAGE));
		}
		json_object_object_add(o, "lastPush", last);
		svc_json_add_time(o, "updatedAt", svc_rows_get(rows, 0, GRCOL_UPDATED));
		*out = o;
	}
	svc_rows_free(rows);
	return 0;
}

/* Answers {remote: <the remote or null>} with `status`. */
static enum svc_err remote_answer(struct svc_req *req, struct svc_resp *resp, const char *id, int status)
{
	struct json_object *remote = NULL, *body;
	int err;

	if ((err = remote_json(req->ctx->db, id, &remote)) < 0)
		return err;
	body = json_object_new_object();
	json_object_object_add(body, "remote", remote);
	return svc_resp_json(resp, status, body);
}

/* GET /projects/:id/git/remote: 200 {remote: {url, branch, username, hasToken, lastPush: {at, ok, sha, message} | null, updatedAt} | null}; 403; 404. */
enum svc_err svc_api_git_remote_get(struct svc_req *req, struct svc_resp *resp)
{
	const char *id = svc_req_param(req, "id");
	char wid[37];
	int err;

	if ((err = mirror_project(req, id, wid)) < 0)
		return err;
	return remote_answer(req, resp, id, 200);
}

/* The audit line of a remote's change: the URL and user name, never the token. */
static void remote_audit(struct svc_req *req, const char *action, const char *id, const char *url,
			 const char *username)
{
	struct json_object *d = json_object_new_object();

	svc_json_add_str(d, "projectId", id);
	svc_json_add_str(d, "url", url);
	svc_json_add_str(d, "username", username);
	if (svc_integ_audit(req->ctx->db, action, id, d, req->user_id) < 0)
		svc_log_error("gitio: the audit of %s on %s was not written", action, id);
	json_object_put(d);
}

/*
 * PUT /projects/:id/git/remote {url, username?, token, branch?}: 200 {remote}
 * (the token sealed, never returned; audited "git.remote.set"); 400
 * validation_failed (not https, an internal address, a name that does not
 * resolve, a bad branch); 403; 404; 503 (no ENCRYPTION_KEY).
 */
enum svc_err svc_api_git_remote_put(struct svc_req *req, struct svc_resp *resp)
{
	const char *id = svc_req_param(req, "id"), *url = svc_json_str(req->json, "url");
	const char *token = svc_json_str(req->json, "token"), *username = svc_json_str(req->json, "username");
	const char *branch = svc_json_str(req->json, "branch");
	struct svc_gitio_remote rm;
	struct svc_dbv p[6];
	char wid[37], why[512], *sealed = NULL;
	int err;

	if ((err = mirror_project(req, id, wid)) < 0)
		return err;
	if ((err = svc_gitio_url_parse(url, &rm, why, sizeof why)) < 0)
		return svc_resp_error(resp, err, "url", "%s", why);
	if (branch && !ref_ok(branch))
		return svc_resp_error(resp, SVC_E_VALIDATION, "branch", "branch must be a branch name");
	if ((err = svc_gitio_resolve(&req->ctx->cfg, &rm, why, sizeof why)) < 0)
		return svc_resp_error(resp, SVC_E_VALIDATION, "url",
				      err == SVC_E_FORBIDDEN ? "url may not point at an internal address (%s)" : "%s", why);
	if ((err = svc_crypto_seal_secret(req->ctx->db, &req->ctx->cfg, wid, "project_git_remotes", "token_sealed", id,
					  token, strlen(token), &sealed)) < 0)
		return err == SVC_E_UNAVAILABLE ? svc_resp_error(resp, err, NULL, "Tokens cannot be kept: ENCRYPTION_KEY is not set.")
						: err;
	p[0] = svc_dbv_str(id);
	p[1] = svc_dbv_str(url);
	p[2] = svc_dbv_str(branch ? branch : "main");
	p[3] = svc_dbv_str(username);
	p[4] = svc_dbv_str(sealed);
	p[5] = svc_dbv_str(req->user_id);
	err = svc_db_run(req->ctx->db, STMT_GITIO_REMOTE_PUT, p, 6, NULL, NULL);
	free(sealed);
	if (err < 0)
		return err;
	remote_audit(req, "git.remote.set", id, url, username);
	return remote_answer(req, resp, id, 200);
}

/* DELETE /projects/:id/git/remote: 204 (audited "git.remote.delete"); 403; 404 (no project, no remote). */
enum svc_err svc_api_git_remote_delete(struct svc_req *req, struct svc_resp *resp)
{
	const char *id = svc_req_param(req, "id");
	struct svc_dbv p = svc_dbv_str(id);
	uint64_t affected = 0;
	char wid[37];
	int err;

	if ((err = mirror_project(req, id, wid)) < 0)
		return err;
	if ((err = svc_db_run(req->ctx->db, STMT_GITIO_REMOTE_DELETE, &p, 1, NULL, &affected)) < 0)
		return err;
	if (affected == 0)
		return svc_resp_error(resp, SVC_E_NOT_FOUND, NULL, "The project has no remote.");
	remote_audit(req, "git.remote.delete", id, NULL, NULL);
	resp->status = 204;
	return 0;
}

/*
 * POST /projects/:id/git/push {branch?}: pushes main now (Push now), to the
 * remote's branch (its result recorded) or to `branch` (a new branch there,
 * when the two have diverged). 200 {ok: true, branch, sha, message}; 400
 * (branch); 403; 404 (no project, no remote); 409 (refused by the remote:
 * not a fast-forward); 503 (the remote cannot be reached).
 */
enum svc_err svc_api_git_push(struct svc_req *req, struct svc_resp *resp)
{
	const char *id = svc_req_param(req, "id"), *branch = req->json ? svc_json_str(req->json, "branch") : NULL;
	struct json_object *body;
	char wid[37], why[1000];
	int err;

	if ((err = mirror_project(req, id, wid)) < 0)
		return err;
	if (branch && !ref_ok(branch))
		return svc_resp_error(resp, SVC_E_VALIDATION, "branch", "branch must be a branch name");
	if ((err = svc_gitio_push(req->ctx->db, &req->ctx->cfg, id, branch, why, sizeof why)) < 0)
		return svc_resp_error(resp, err == SVC_E_FORBIDDEN ? SVC_E_VALIDATION : err, NULL, "%s", why);
	body = json_object_new_object();
	json_object_object_add(body, "ok", json_object_new_boolean(1));
	svc_json_add_str(body, "branch", branch);
	svc_json_add_str(body, "message", why);
	return svc_resp_json(resp, 200, body);
}

/*
 * POST /projects/:id/git/pull: fast-forwards main to the remote's branch (a
 * change of the project: working tree, svc-wsd, preview; what the working
 * tree holds uncommitted is saved as a version first). 200 {result:
 * "fast-forward" | "up-to-date", sha, previous, remote}; 400 (the remote's
 * tree holds a symlink or a refused path); 413 (its files exceed
 * SVC_IMPORT_MAX_MB); 403; 404 (no project, no remote,
 * no such branch there); 409 conflict when they have diverged (the message
 * names both heads); 503.
 */
enum svc_err svc_api_git_pull(struct svc_req *req, struct svc_resp *resp)
{
	const char *id = svc_req_param(req, "id");
	struct svc_gitio_pull_result r;
	struct json_object *body;
	char wid[37], why[1000], dir[2048], pending[41];
	int err, lock, committed = 0;

	if ((err = mirror_project(req, id, wid)) < 0)
		return err;
	/* what is not committed yet (collaborative edits before their debounced commit) becomes a version
	 * first: git merge --ff-only refuses a working tree with changes, and they would be lost otherwise */
	if ((err = svc_project_dir(&req->ctx->cfg, id, dir, sizeof dir)) < 0 || (lock = svc_project_lock(dir)) < 0)
		return err < 0 ? err : SVC_E_INTERNAL;
	err = svc_project_commit_change(svc_req_caller(req), id, dir, "Save before a pull", pending, &committed);
	close(lock);
	if (err < 0)
		return err;
	if ((err = svc_gitio_pull(req->ctx->db, &req->ctx->cfg, id, &r, why, sizeof why)) < 0)
		return svc_resp_error(resp, err == SVC_E_FORBIDDEN ? SVC_E_VALIDATION : err, NULL, "%s", why);
	body = json_object_new_object();
	svc_json_add_str(body, "result", r.result);
	svc_json_add_str(body, "sha", r.head);
	svc_json_add_str(body, "previous", r.local);
	svc_json_add_str(body, "remote", r.remote);
	return svc_resp_json(resp, 200, body);
}
