/* api_projects.c: projects: create, list, get, update, delete, restore, duplicate (spec "Project endpoints"). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/check.h"
#include "api/api.h"
#include "core/err.h"
#include "core/fsx.h"
#include "core/json.h"
#include "core/log.h"
#include "project/publish.h"
#include "project/quota.h"
#include "project/thumbnail.h"

/* ---- create, list, get, update, delete ---- */

static const char *const visibilities[] = { "private", "workspace", "public", NULL };
static const struct svc_field create_fields[] = {
	{ "name", SVC_V_TEXT, SVC_F_REQUIRED, 1, 128, NULL },
	{ "description", SVC_V_STR, SVC_F_NULLABLE, 0, 2000, NULL },
	{ "template", SVC_V_STR, 0, 1, 64, NULL },
	{ "folderId", SVC_V_UUID, SVC_F_NULLABLE, 0, 0, NULL },
	{ "prompt", SVC_V_STR, SVC_F_NULLABLE, 0, 100000, NULL },
	{ "visibility", SVC_V_ENUM, 0, 0, 0, visibilities },
};
const struct svc_body svc_api_projects_create_body = SVC_BODY(create_fields);

/* POST /workspaces/:wid/projects {name, template?, description?, folderId?, prompt?, visibility?}: 201; 400 validation_failed; 403 not a member; 403 quota_exceeded (SVC_QUOTA_PROJECTS); 404 unknown workspace. */
enum svc_err svc_api_projects_create(struct svc_req *req, struct svc_resp *resp)
{
	const char *wid = svc_req_param(req, "wid"), *field;
	struct svc_project_new np;
	char msg[256], role[16], id[37], chat_id[37];
	struct svc_rows *rows = NULL;
	int err;

	if ((err = svc_workspace_role(svc_req_caller(req), wid, role)) < 0)
		return err;
	memset(&np, 0, sizeof np);
	np.workspace_id = wid;
	np.user_id = req->user_id;
	np.name = svc_json_str(req->json, "name");
	np.description = svc_json_str(req->json, "description");
	np.template_name = svc_json_str(req->json, "template") ? svc_json_str(req->json, "template") : "blank";
	np.folder_id = svc_json_str(req->json, "folderId");
	np.visibility = svc_json_str(req->json, "visibility") ? svc_json_str(req->json, "visibility") : "workspace";
	np.prompt = svc_json_str(req->json, "prompt");
	if ((err = svc_project_create(req->ctx->db, &req->ctx->cfg, &np, &field, msg, sizeof msg, id, chat_id)) < 0)
		return err == SVC_E_VALIDATION ? svc_resp_error(resp, err, field, "%s", msg) : err;
	if ((err = svc_project_load(svc_req_caller(req), id, SVC_ACT_READ, &rows)) < 0)
		return err;
	{
		struct json_object *o = svc_project_json(rows, 0);
		json_object_object_add(o, "defaultChatId", json_object_new_string(chat_id));
		svc_resp_json(resp, 201, o);
	}
	svc_rows_free(rows);
	return 0;
}

/* Cursor: hex of "<created_at with microseconds>|<id>", opaque to clients. */
static int cursor_encode(const char *ts, const char *id, char *out, size_t max)
{
	char raw[128];
	size_t n = (size_t)snprintf(raw, sizeof raw, "%s|%s", ts, id);

	if (n >= sizeof raw || 2 * n + 1 > max)
		return SVC_E_INTERNAL;
	svc_hex_encode(raw, n, out);
	return 0;
}

static int cursor_decode(const char *c, char *ts, size_t tsmax, char *id)
{
	char raw[128];
	size_t n = strlen(c);
	char *bar;

	/* what cursor_encode writes: lowercase hex only */
	if (n == 0 || n / 2 >= sizeof raw || strspn(c, "0123456789abcdef") != n || svc_hex_decode(c, n, raw) < 0)
		return SVC_E_VALIDATION;
	raw[n / 2] = '\0';
	bar = strchr(raw, '|');
	if (!bar || (size_t)(bar - raw) >= tsmax || !svc_uuid_valid(bar + 1))
		return SVC_E_VALIDATION;
	*bar = '\0';
	{
		char check[25];
		if (svc_time_from_db(raw, check) < 0)
			return SVC_E_VALIDATION;
	}
	snprintf(ts, tsmax, "%s", raw);
	memcpy(id, bar + 1, 37);
	return 0;
}

/* The InnoDB default stopwords (information_schema.INNODB_FT_DEFAULT_STOPWORD); a required stopword matches nothing. */
static int is_stopword(const char *w, size_t n)
{
	static const char *const words[] = { "a", "about", "an", "are", "as", "at", "be", "by", "com", "de", "en",
					     "for", "from", "how", "i", "in", "is", "it", "la", "of", "on", "or",
					     "that", "the", "this", "to", "was", "what", "when", "where", "who",
					     "will", "with", "und", "www", NULL };
	size_t i, k;

	for (i = 0; words[i]; i++) {
		if (strlen(words[i]) != n)
			continue;
		for (k = 0; k < n; k++) {
			char c = w[k];
			if (c >= 'A' && c <= 'Z')
				c = (char)(c - 'A' + 'a');
			if (c != words[i][k])
				break;
		}
		if (k == n)
			return 1;
	}
	return 0;
}

/*
 * Turns the q of GET /projects into an InnoDB BOOLEAN MODE query (MariaDB
 * "Full-Text Index Overview"): every word, a run of ASCII letters, digits
 * or '_' or of non-ASCII characters, becomes "+word*" (all words required,
 * each a prefix). Words shorter than SEARCH_MIN_WORD characters
 * (innodb_ft_min_token_size) and the InnoDB stopwords are left out, as the
 * index leaves them out; operators typed by the user are never passed on.
 * Returns 0, or SVC_E_VALIDATION when no word is left.
 */
#define SEARCH_MIN_WORD 3
#define SEARCH_MAX_WORDS 16
static int search_query(const char *q, char *out, size_t max)
{
	size_t o = 0, words = 0;
	const char *p = q;

	while (*p) {
		const char *w;
		size_t n;
		while (*p && !(((unsigned char)*p >= 0x80) || (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
			       (*p >= '0' && *p <= '9') || *p == '_'))
			p++;
		w = p;
		while (((unsigned char)*p >= 0x80) || (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		       (*p >= '0' && *p <= '9') || *p == '_')
			p++;
		n = (size_t)(p - w);
		if (!n || svc_utf8_count(w, n) < SEARCH_MIN_WORD || is_stopword(w, n))
			continue;
		if (words == SEARCH_MAX_WORDS || o + n + 4 >= max)
			break;
		out[o++] = '+';
		memcpy(out + o, w, n);
		o += n;
		out[o++] = '*';
		out[o++] = ' ';
		words++;
	}
	if (!words)
		return SVC_E_VALIDATION;
	out[o - 1] = '\0';
	return 0;
}

/* A boolean query parameter: "true" or "1" is 1, "false" or "0" is 0, anything else -1. */
static int query_bool(const char *s)
{
	if (strcmp(s, "true") == 0 || strcmp(s, "1") == 0)
		return 1;
	if (strcmp(s, "false") == 0 || strcmp(s, "0") == 0)
		return 0;
	return -1;
}

/* Whether the caller is a platform admin ("1"/"0" into flag, 2 bytes). */
static int admin_flag(struct svc_req *req, char *flag)
{
	struct svc_dbv p = svc_dbv_str(req->user_id);
	struct svc_rows *rows = NULL;
	int err;

	flag[0] = '0';
	flag[1] = '\0';
	if ((err = svc_db_run(req->ctx->db, STMT_USER_BY_ID, &p, 1, &rows, NULL)) < 0)
		return err;
	if (rows && rows->nrows == 1 && svc_rows_get(rows, 0, UCOL_ADMIN) && strcmp(svc_rows_get(rows, 0, UCOL_ADMIN), "1") == 0)
		flag[0] = '1';
	svc_rows_free(rows);
	return 0;
}

/*
 * GET /projects?workspaceId&folderId&visibility&q&cursor&limit&deleted: 200 {items, nextCursor};
 * 400 validation_failed (workspaceId, folderId, visibility, q, cursor, limit, deleted;
 * q with deleted=true). Lists only what the caller may read (lib/auth/perm.c): in a
 * workspace the caller is not a member of, only its public projects. With
 * deleted=true, the trash: the soft-deleted projects the caller may restore,
 * newest deletion first, each with deletedAt.
 */
enum svc_err svc_api_projects_list(struct svc_req *req, struct svc_resp *resp)
{
	char wid[64], cur[256], lim[16], ts[128] = "9999-12-31 23:59:59.999999", cid[37] = "";
	char folder[64], vis[16], q[512], query[1024], admin[2], del[8];
	uint64_t limit = 20;
	int64_t folder_mode = 0;
	int deleted = 0;
	struct svc_rows *rows = NULL;
	struct svc_dbv p[17];
	struct json_object *body, *items;
	size_t r, shown, n = 0;
	int err, has_ws, has_q, has_vis, k;
	enum svc_stmt stmt;

	if ((has_ws = svc_req_query(req, "workspaceId", wid, sizeof wid)) < 0 || (has_ws && !svc_uuid_valid(wid)))
		return svc_resp_error(resp, SVC_E_VALIDATION, "workspaceId", "workspaceId must be a UUID");
	if ((k = svc_req_query(req, "folderId", folder, sizeof folder)) < 0 ||
	    (k && strcmp(folder, "null") != 0 && !svc_uuid_valid(folder)))
		return svc_resp_error(resp, SVC_E_VALIDATION, "folderId", "folderId must be a UUID or null");
	if (k)
		folder_mode = strcmp(folder, "null") == 0 ? 1 : 2;
	if ((has_vis = svc_req_query(req, "visibility", vis, sizeof vis)) < 0 ||
	    (has_vis && strcmp(vis, "private") != 0 && strcmp(vis, "workspace") != 0 && strcmp(vis, "public") != 0))
		return svc_resp_error(resp, SVC_E_VALIDATION, "visibility",
				      "visibility must be private, workspace or public");
	if ((has_q = svc_req_query(req, "q", q, sizeof q)) < 0)
		return svc_resp_error(resp, SVC_E_VALIDATION, "q", "q is at most 500 bytes");
	if (has_q && search_query(q, query, sizeof query) < 0)
		return svc_resp_error(resp, SVC_E_VALIDATION, "q",
				      "q needs a word of at least %d characters that is not a stopword", SEARCH_MIN_WORD);
	if ((k = svc_req_query(req, "limit", lim, sizeof lim)) < 0 ||
	    (k && (svc_parse_u64(lim, 100, &limit) < 0 || limit == 0)))
		return svc_resp_error(resp, SVC_E_VALIDATION, "limit", "limit must be an integer from 1 to 100");
	if ((k = svc_req_query(req, "cursor", cur, sizeof cur)) < 0 ||
	    (k && cursor_decode(cur, ts, sizeof ts, cid) < 0))
		return svc_resp_error(resp, SVC_E_VALIDATION, "cursor", "cursor is not a cursor this API returned");
	if ((k = svc_req_query(req, "deleted", del, sizeof del)) < 0 ||
	    (k && (deleted = query_bool(del)) < 0))
		return svc_resp_error(resp, SVC_E_VALIDATION, "deleted", "deleted must be true or false");
	if (deleted && has_q)
		return svc_resp_error(resp, SVC_E_VALIDATION, "q", "q cannot be combined with deleted=true");
	if ((err = admin_flag(req, admin)) < 0)
		return err;

	p[n++] = svc_dbv_str(req->user_id);
	if (has_ws)
		p[n++] = svc_dbv_str(wid);
	p[n++] = svc_dbv_i64(admin[0] == '1');
	p[n++] = svc_dbv_str(req->user_id);
	p[n++] = svc_dbv_i64(folder_mode);
	p[n++] = svc_dbv_i64(folder_mode);
	p[n++] = svc_dbv_i64(folder_mode);
	p[n++] = svc_dbv_str(folder_mode == 2 ? folder : NULL);
	p[n++] = svc_dbv_str(has_vis ? vis : NULL);
	p[n++] = svc_dbv_str(has_vis ? vis : NULL);
	if (has_q)
		p[n++] = svc_dbv_str(query);
	p[n++] = svc_dbv_str(ts);
	p[n++] = svc_dbv_str(ts);
	p[n++] = svc_dbv_str(cid);
	p[n++] = svc_dbv_i64((int64_t)limit + 1);
	stmt = has_ws ? (has_q ? STMT_PROJECT_LIST_WS_Q : STMT_PROJECT_LIST_WS)
		      : (has_q ? STMT_PROJECT_LIST_MINE_Q : STMT_PROJECT_LIST_MINE);
	if (deleted)
		stmt = has_ws ? STMT_PROJECT_TRASH_WS : STMT_PROJECT_TRASH_MINE;
	if ((err = svc_db_run(req->ctx->db, stmt, p, n, &rows, NULL)) < 0)
		return err;
	body = json_object_new_object();
	items = json_object_new_array();
	shown = rows ? (rows->nrows > limit ? limit : rows->nrows) : 0;
	for (r = 0; r < shown; r++) {
		struct json_object *o = svc_project_json(rows, r);
		if (deleted) /* the trash's extra column is the deletion time */
			svc_json_add_time(o, "deletedAt", svc_rows_get(rows, r, PCOL_EXTRA));
		json_object_array_add(items, o);
	}
	json_object_object_add(body, "items", items);
	if (rows && rows->nrows > limit) {
		char next[256];
		if (cursor_encode(svc_rows_get(rows, shown - 1, PCOL_EXTRA), svc_rows_get(rows, shown - 1, PCOL_ID),
				  next, sizeof next) == 0)
			json_object_object_add(body, "nextCursor", json_object_new_string(next));
	} else {
		json_object_object_add(body, "nextCursor", NULL);
	}
	svc_rows_free(rows);
	return svc_resp_json(resp, 200, body);
}

/* GET /projects/:id: 200 Project; 403; 404. */
enum svc_err svc_api_projects_get(struct svc_req *req, struct svc_resp *resp)
{
	struct svc_rows *rows = NULL;
	int err = svc_project_load(svc_req_caller(req), svc_req_param(req, "id"), SVC_ACT_READ, &rows);

	if (err < 0)
		return err;
	svc_resp_json(resp, 200, svc_project_json(rows, 0));
	svc_rows_free(rows);
	return 0;
}

static const struct svc_field update_fields[] = {
	{ "name", SVC_V_TEXT, 0, 1, 128, NULL },
	{ "description", SVC_V_STR, SVC_F_NULLABLE, 0, 2000, NULL },
	{ "visibility", SVC_V_ENUM, 0, 0, 0, visibilities },
	{ "folderId", SVC_V_UUID, SVC_F_NULLABLE, 0, 0, NULL },
};
const struct svc_body svc_api_projects_update_body = SVC_BODY(update_fields);

/* PATCH /projects/:id {name?, description?, visibility?, folderId?}: 200 Project; 400; 403 (also: visibility by a member who is not the creator); 404. */
enum svc_err svc_api_projects_update(struct svc_req *req, struct svc_resp *resp)
{
	const char *id = svc_req_param(req, "id");
	struct svc_rows *rows = NULL, *after = NULL, *frows = NULL;
	struct json_object *v;
	struct svc_dbv p[5];
	int err;

	if ((err = svc_project_load(svc_req_caller(req), id, SVC_ACT_WRITE, &rows)) < 0)
		return err;
	p[0] = svc_dbv_str(svc_rows_get(rows, 0, PCOL_NAME));
	p[1] = svc_dbv_str(svc_rows_get(rows, 0, PCOL_DESCRIPTION));
	p[2] = svc_dbv_str(svc_rows_get(rows, 0, PCOL_VISIBILITY));
	p[3] = svc_dbv_str(svc_rows_get(rows, 0, PCOL_FOLDER));
	p[4] = svc_dbv_str(id);
	if (json_object_object_get_ex(req->json, "name", &v))
		p[0] = svc_dbv_str(json_object_get_string(v));
	if (json_object_object_get_ex(req->json, "description", &v))
		p[1] = svc_dbv_str(v ? json_object_get_string(v) : NULL);
	if (json_object_object_get_ex(req->json, "visibility", &v)) {
		p[2] = svc_dbv_str(json_object_get_string(v));
		if (strcmp(json_object_get_string(v), svc_rows_get(rows, 0, PCOL_VISIBILITY)) != 0 &&
		    (err = svc_project_check(svc_req_caller(req), rows, SVC_ACT_VISIBILITY)) < 0)
			goto done;
	}
	if (json_object_object_get_ex(req->json, "folderId", &v)) {
		p[3] = svc_dbv_str(v ? json_object_get_string(v) : NULL);
		if (v) {
			struct svc_dbv fp[2] = { svc_dbv_str(json_object_get_string(v)),
						 svc_dbv_str(svc_rows_get(rows, 0, PCOL_WORKSPACE)) };
			if ((err = svc_db_run(req->ctx->db, STMT_FOLDER_IN_WORKSPACE, fp, 2, &frows, NULL)) < 0)
				goto done;
			if (!frows || frows->nrows != 1) {
				err = svc_resp_error(resp, SVC_E_VALIDATION, "folderId",
						     "folderId is not a folder of this project's workspace");
				goto done;
			}
		}
	}
	if ((err = svc_db_run(req->ctx->db, STMT_PROJECT_UPDATE, p, 5, NULL, NULL)) < 0)
		goto done;
	if ((err = svc_project_load(svc_req_caller(req), id, SVC_ACT_READ, &after)) < 0)
		goto done;
	svc_resp_json(resp, 200, svc_project_json(after, 0));
done:
	svc_rows_free(frows);
	svc_rows_free(after);
	svc_rows_free(rows);
	return err;
}

/* DELETE /projects/:id[?hard=true]: 200 {id, deleted, hard}; 400 bad hard; 403 (hard: owner only); 404. */
enum svc_err svc_api_projects_delete(struct svc_req *req, struct svc_resp *resp)
{
	const char *id = svc_req_param(req, "id");
	struct svc_rows *rows = NULL;
	struct json_object *body;
	struct svc_dbv p;
	char hard[8], dir[2048];
	int err, q, is_hard = 0;

	if ((q = svc_req_query(req, "hard", hard, sizeof hard)) < 0 || (q && (is_hard = query_bool(hard)) < 0))
		return svc_resp_error(resp, SVC_E_VALIDATION, "hard", "hard must be true or false");
	/* a soft-deleted project can still be removed for good */
	if ((err = svc_project_load_state(svc_req_caller(req), id, is_hard ? SVC_ACT_HARD_DELETE : SVC_ACT_DELETE,
					  is_hard ? -1 : 0, &rows)) < 0)
		return err;
	p = svc_dbv_str(id);
	if (is_hard) {
		if ((err = svc_db_run(req->ctx->db, STMT_PROJECT_HARD_DELETE, &p, 1, NULL, NULL)) < 0)
			goto done;
		if (svc_project_dir(&req->ctx->cfg, id, dir, sizeof dir) == 0)
			svc_fsx_remove_tree(dir);
		svc_publish_take_down(&req->ctx->cfg, svc_rows_get(rows, 0, PCOL_SLUG));
		svc_publish_remove_all(&req->ctx->cfg, id);
		if (svc_thumbnail_path(&req->ctx->cfg, id, dir, sizeof dir) == 0) {
			unlink(dir);
			memcpy(dir + strlen(dir) - 4, ".source", 8);
			unlink(dir);
		}
		svc_agent_check_remove_all(&req->ctx->cfg, id); /* the preview checks' screenshots */
	} else {
		if ((err = svc_db_run(req->ctx->db, STMT_PROJECT_SOFT_DELETE, &p, 1, NULL, NULL)) < 0)
			goto done;
		/* the files stay for a restore, but a deleted project's site goes offline */
		svc_publish_take_down(&req->ctx->cfg, svc_rows_get(rows, 0, PCOL_SLUG));
	}
	body = json_object_new_object();
	json_object_object_add(body, "id", json_object_new_string(id));
	json_object_object_add(body, "deleted", json_object_new_boolean(1));
	json_object_object_add(body, "hard", json_object_new_boolean(is_hard));
	svc_resp_json(resp, 200, body);
done:
	svc_rows_free(rows);
	return err;
}

/* POST /projects/:id/restore: 200 Project; 403 (as soft delete); 404 (unknown, hard-deleted); 409 (not deleted). */
enum svc_err svc_api_projects_restore(struct svc_req *req, struct svc_resp *resp)
{
	const char *id = svc_req_param(req, "id");
	struct svc_rows *rows = NULL, *after = NULL;
	struct svc_dbv p;
	uint64_t n = 0;
	int err;

	if ((err = svc_project_load_state(svc_req_caller(req), id, SVC_ACT_DELETE, 1, &rows)) < 0) {
		if (err == SVC_E_NOT_FOUND &&
		    svc_project_load_state(svc_req_caller(req), id, SVC_ACT_READ, 0, &rows) == 0) {
			svc_rows_free(rows);
			return svc_resp_error(resp, SVC_E_CONFLICT, NULL, "The project is not deleted.");
		}
		return err;
	}
	p = svc_dbv_str(id);
	if ((err = svc_db_run(req->ctx->db, STMT_PROJECT_RESTORE, &p, 1, NULL, &n)) < 0)
		goto done;
	if (n != 1) {
		err = svc_resp_error(resp, SVC_E_CONFLICT, NULL, "The project is not deleted.");
		goto done;
	}
	if ((err = svc_project_load(svc_req_caller(req), id, SVC_ACT_READ, &after)) < 0)
		goto done;
	svc_resp_json(resp, 200, svc_project_json(after, 0));
done:
	svc_rows_free(after);
	svc_rows_free(rows);
	return err;
}

/* The rows of a duplicate (the project, its first chat with the source's timeline) and its files moved into place, a transaction of svc_db_tx(). */
struct project_copy {
	const struct svc_config *cfg;
	const struct svc_project_new *np;
	const char *src_id, *id, *chat_id, *tmpdir, *pdir, *user_id;
	int moved;
};

static int duplicate_tx(struct svc_db *db, void *arg)
{
	struct project_copy *d = arg;
	struct svc_rows *chat = NULL;
	struct svc_dbv p[2];
	int err;

	if ((err = svc_quota_projects_check(db, d->cfg, d->np->workspace_id, NULL, 0)) < 0 ||
	    (err = svc_project_insert(db, d->id, d->np)) < 0)
		return err;
	/* The chat seed: the source's default (first) chat and its whole timeline. */
	p[0] = svc_dbv_str(d->src_id);
	if ((err = svc_db_run(db, STMT_CHAT_FIRST, p, 1, &chat, NULL)) < 0)
		return err;
	if ((err = svc_chat_insert(db, d->chat_id, d->id, chat && chat->nrows ? svc_rows_get(chat, 0, CFCOL_TITLE) : "Main chat",
				   chat && chat->nrows ? svc_rows_get(chat, 0, CFCOL_MODE) : "build", d->user_id)) < 0)
		goto done;
	if (chat && chat->nrows) {
		p[0] = svc_dbv_str(d->chat_id);
		p[1] = svc_dbv_str(svc_rows_get(chat, 0, CFCOL_ID));
		if ((err = svc_db_run(db, STMT_CHAT_EVENTS_COPY, p, 2, NULL, NULL)) < 0)
			goto done;
	}
	err = svc_project_settle(d->tmpdir, d->pdir, &d->moved);
done:
	svc_rows_free(chat);
	return err;
}

static const struct svc_field duplicate_fields[] = {
	{ "workspaceId", SVC_V_UUID, 0, 0, 0, NULL },
	{ "name", SVC_V_TEXT, 0, 1, 128, NULL },
};
const struct svc_body svc_api_projects_duplicate_body = SVC_BODY(duplicate_fields);

/*
 * POST /projects/:id/duplicate {workspaceId?, name?}: 201 Project + defaultChatId + duplicatedFrom;
 * 400 validation_failed; 403 (no read access to the source, not a member of the target); 404.
 */
enum svc_err svc_api_projects_duplicate(struct svc_req *req, struct svc_resp *resp)
{
	const struct svc_config *cfg = &req->ctx->cfg;
	struct svc_db *db = req->ctx->db;
	const char *src_id = svc_req_param(req, "id"), *wid, *name;
	char role[16], id[37], chat_id[37], copy_name[160];
	char sdir[2048], pdir[2048], tmpdir[2100];
	struct svc_rows *src = NULL, *after = NULL;
	struct svc_project_new np = { 0 };
	struct project_copy d;
	int err, moved = 0, copied = 0;

	if ((err = svc_project_load(svc_req_caller(req), src_id, SVC_ACT_READ, &src)) < 0)
		return err;
	wid = svc_json_str(req->json, "workspaceId");
	if (!wid)
		wid = svc_rows_get(src, 0, PCOL_WORKSPACE);
	if ((err = svc_workspace_role(svc_req_caller(req), wid, role)) < 0) {
		if (err == SVC_E_NOT_FOUND)
			err = svc_resp_error(resp, err, "workspaceId", "No such workspace.");
		goto done;
	}
	name = svc_json_str(req->json, "name");
	if (!name) {
		snprintf(copy_name, sizeof copy_name, "%.120s (copy)", svc_rows_get(src, 0, PCOL_NAME));
		/* stay within 128 characters: cut back to a UTF-8 boundary */
		while (svc_utf8_count(copy_name, strlen(copy_name)) > 128 || !svc_utf8_valid(copy_name, strlen(copy_name)))
			copy_name[strlen(copy_name) - 1] = '\0';
		name = copy_name;
	}
	if (svc_uuid_v4(id) < 0 || svc_uuid_v4(chat_id) < 0) {
		err = SVC_E_INTERNAL;
		goto done;
	}

	/* The files and the whole Git history, copied (never linked) into a temporary directory first. */
	if ((err = svc_project_dir(cfg, src_id, sdir, sizeof sdir)) < 0 ||
	    (err = svc_project_dir(cfg, id, pdir, sizeof pdir)) < 0)
		goto done;
	snprintf(tmpdir, sizeof tmpdir, "%s/projects/.tmp-%s", cfg->data_dir, id);
	if ((err = svc_fsx_copy_tree(sdir, tmpdir)) < 0)
		goto done;
	copied = 1;

	np.workspace_id = wid;
	np.user_id = req->user_id;
	np.name = name;
	np.description = svc_rows_get(src, 0, PCOL_DESCRIPTION);
	np.template_name = svc_rows_get(src, 0, PCOL_TEMPLATE);
	np.visibility = svc_rows_get(src, 0, PCOL_VISIBILITY);
	d.cfg = cfg;
	d.np = &np;
	d.src_id = src_id;
	d.id = id;
	d.chat_id = chat_id;
	d.tmpdir = tmpdir;
	d.pdir = pdir;
	d.user_id = req->user_id;
	d.moved = 0;
	err = svc_db_tx(db, duplicate_tx, &d);
	moved = d.moved;
	if (err < 0)
		goto done;
	if ((err = svc_project_load(svc_req_caller(req), id, SVC_ACT_READ, &after)) < 0)
		goto done;
	{
		struct json_object *o = svc_project_json(after, 0);
		json_object_object_add(o, "defaultChatId", json_object_new_string(chat_id));
		json_object_object_add(o, "duplicatedFrom", json_object_new_string(src_id));
		svc_resp_json(resp, 201, o);
	}
done:
	if (err < 0 && copied)
		svc_fsx_remove_tree(moved ? pdir : tmpdir);
	svc_rows_free(after);
	svc_rows_free(src);
	return err;
}
