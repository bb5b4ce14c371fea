/* api_workspaces.c: workspaces, their members and roles, and folders (docs/api.md "Workspaces", "Folders"). */
#include <stdio.h>
#include <string.h>

#include "api/api.h"
#include "core/err.h"
#include "core/json.h"
#include "core/log.h"

#define EMAIL_MAX 254

static struct json_object *workspace_json(const struct svc_rows *rows, size_t r)
{
	struct json_object *w = json_object_new_object();

	svc_json_add_str(w, "id", svc_rows_get(rows, r, WCOL_ID));
	svc_json_add_str(w, "name", svc_rows_get(rows, r, WCOL_NAME));
	svc_json_add_str(w, "kind", svc_rows_get(rows, r, WCOL_KIND));
	svc_json_add_str(w, "role", svc_rows_get(rows, r, WCOL_ROLE));
	svc_json_add_time(w, "createdAt", svc_rows_get(rows, r, WCOL_CREATED));
	svc_json_add_time(w, "updatedAt", svc_rows_get(rows, r, WCOL_UPDATED));
	return w;
}

static struct json_object *member_json(const struct svc_rows *rows, size_t r, const char *wid)
{
	struct json_object *m = json_object_new_object();

	(void)wid;
	svc_json_add_str(m, "userId", svc_rows_get(rows, r, MBCOL_USER));
	svc_json_add_str(m, "email", svc_rows_get(rows, r, MBCOL_EMAIL));
	svc_json_add_str(m, "displayName", svc_rows_get(rows, r, MBCOL_NAME));
	svc_json_add_str(m, "role", svc_rows_get(rows, r, MBCOL_ROLE));
	svc_json_add_time(m, "createdAt", svc_rows_get(rows, r, MBCOL_CREATED));
	return m;
}

static struct json_object *folder_json(const struct svc_rows *rows, size_t r, const char *wid)
{
	struct json_object *f = json_object_new_object();

	(void)wid;
	svc_json_add_str(f, "id", svc_rows_get(rows, r, FOCOL_ID));
	svc_json_add_str(f, "workspaceId", svc_rows_get(rows, r, FOCOL_WORKSPACE));
	svc_json_add_str(f, "name", svc_rows_get(rows, r, FOCOL_NAME));
	svc_json_add_time(f, "createdAt", svc_rows_get(rows, r, FOCOL_CREATED));
	svc_json_add_time(f, "updatedAt", svc_rows_get(rows, r, FOCOL_UPDATED));
	return f;
}

/* Checks `action` on the workspace of row `ws` (STMT_WS_GET) with object `o`. */
static int ws_check(struct svc_req *req, const struct svc_rows *ws, enum svc_action action, struct svc_perm_object *o)
{
	struct svc_perm_subject s;

	svc_caller_subject(svc_req_caller(req), svc_rows_get(ws, 0, WCOL_ROLE), svc_rows_get(ws, 0, WCOL_ADMIN), &s);
	o->kind = svc_rows_get(ws, 0, WCOL_KIND);
	return svc_perm_check(&s, action, o);
}

/* Answers 200 with the workspace `wid` as the caller sees it now. */
static int send_workspace(struct svc_req *req, struct svc_resp *resp, const char *wid, int status)
{
	struct svc_rows *rows = NULL;
	int err;

	if ((err = svc_workspace_load(svc_req_caller(req), wid, SVC_ACT_WS_READ, NULL, &rows)) < 0)
		return err;
	svc_resp_json(resp, status, workspace_json(rows, 0));
	svc_rows_free(rows);
	return 0;
}

/* ---- workspaces ---- */

/* A workspace of the caller's list (STMT_WS_LIST_MINE): with its member count. */
static struct json_object *workspace_listed_json(const struct svc_rows *rows, size_t r, const char *user_id)
{
	struct json_object *w = workspace_json(rows, r);
	uint64_t n = 0;

	(void)user_id;
	svc_parse_u64(svc_rows_get(rows, r, WLCOL_MEMBERS) ? svc_rows_get(rows, r, WLCOL_MEMBERS) : "0", UINT64_MAX, &n);
	json_object_object_add(w, "memberCount", json_object_new_int64((int64_t)n));
	return w;
}

/* GET /workspaces: 200 {items: [Workspace + memberCount]}, personal first, then by creation. */
enum svc_err svc_api_workspaces_list(struct svc_req *req, struct svc_resp *resp)
{
	static const struct svc_items it = { SVC_ITEMS_OF_USER, NULL, SVC_ACT_WS_READ, STMT_WS_LIST_MINE,
					     workspace_listed_json };

	return svc_resp_items(req, resp, &it);
}

/* {name}: the body of creating or renaming a workspace or a folder. */
static const struct svc_field name_fields[] = {
	{ "name", SVC_V_TEXT, SVC_F_REQUIRED, 1, 128, NULL },
};
const struct svc_body svc_api_workspaces_create_body = SVC_BODY(name_fields);

/* POST /workspaces {name}: 201 Workspace (kind "team", the caller its owner); 400. */
enum svc_err svc_api_workspaces_create(struct svc_req *req, struct svc_resp *resp)
{
	char wid[37];
	struct svc_dbv w[4], m[3];
	struct svc_db_step steps[2] = { { STMT_WORKSPACE_INSERT, w, 4, NULL }, { STMT_MEMBER_INSERT, m, 3, NULL } };
	int err;

	if (svc_uuid_v4(wid) < 0)
		return SVC_E_INTERNAL;
	w[0] = svc_dbv_str(wid);
	w[1] = svc_dbv_str(svc_json_str(req->json, "name"));
	w[2] = svc_dbv_str("team");
	w[3] = svc_dbv_str(req->user_id);
	m[0] = svc_dbv_str(wid);
	m[1] = svc_dbv_str(req->user_id);
	m[2] = svc_dbv_str("owner");
	if ((err = svc_db_tx_steps(req->ctx->db, steps, 2)) < 0)
		return err;
	return send_workspace(req, resp, wid, 201);
}

/* GET /workspaces/:wid: 200 Workspace; 403 not a member; 404. */
enum svc_err svc_api_workspaces_get(struct svc_req *req, struct svc_resp *resp)
{
	return send_workspace(req, resp, svc_req_param(req, "wid"), 200);
}

const struct svc_body svc_api_workspaces_update_body = SVC_BODY(name_fields);

/* PATCH /workspaces/:wid {name}: 200 Workspace; 400; 403 (below admin); 404. */
enum svc_err svc_api_workspaces_update(struct svc_req *req, struct svc_resp *resp)
{
	const char *wid = svc_req_param(req, "wid");
	struct svc_rows *ws = NULL;
	struct svc_dbv p[2];
	int err;

	if ((err = svc_workspace_load(svc_req_caller(req), wid, SVC_ACT_WS_UPDATE, NULL, &ws)) < 0)
		return err;
	svc_rows_free(ws);
	p[0] = svc_dbv_str(svc_json_str(req->json, "name"));
	p[1] = svc_dbv_str(wid);
	if ((err = svc_db_run(req->ctx->db, STMT_WS_RENAME, p, 2, NULL, NULL)) < 0)
		return err;
	return send_workspace(req, resp, wid, 200);
}

/* ---- members ---- */

/* GET /workspaces/:wid/members: 200 {items: [Member]}; 403; 404. */
enum svc_err svc_api_members_list(struct svc_req *req, struct svc_resp *resp)
{
	static const struct svc_items it = { SVC_ITEMS_OF_WORKSPACE, "wid", SVC_ACT_WS_READ, STMT_MEMBER_LIST,
					     member_json };

	return svc_resp_items(req, resp, &it);
}

/* Answers `status` with member `uid` of `wid`. */
static int send_member(struct svc_req *req, struct svc_resp *resp, const char *wid, const char *uid, int status)
{
	struct svc_dbv p[2] = { svc_dbv_str(wid), svc_dbv_str(uid) };
	struct svc_rows *rows = NULL;
	int err;

	if ((err = svc_db_run(req->ctx->db, STMT_MEMBER_GET, p, 2, &rows, NULL)) < 0)
		return err;
	if (!rows || rows->nrows != 1) {
		svc_rows_free(rows);
		return SVC_E_NOT_FOUND;
	}
	svc_resp_json(resp, status, member_json(rows, 0, NULL));
	svc_rows_free(rows);
	return 0;
}

static const char *const roles[] = { "member", "admin", "owner", NULL };

static const struct svc_field member_fields[] = {
	{ "email", SVC_V_TEXT, SVC_F_REQUIRED, 3, EMAIL_MAX, NULL },
	{ "role", SVC_V_ENUM, 0, 0, 0, roles },
};
const struct svc_body svc_api_members_add_body = SVC_BODY(member_fields);

/* POST /workspaces/:wid/members {email, role?}: 201 Member; 400; 403; 404 (workspace; no user with that email); 409 (already a member; personal workspace). */
enum svc_err svc_api_members_add(struct svc_req *req, struct svc_resp *resp)
{
	const char *wid = svc_req_param(req, "wid"), *role, *uid;
	struct svc_rows *ws = NULL, *user = NULL;
	struct svc_perm_object o = { 0 };
	struct svc_dbv p[3];
	char email[EMAIL_MAX + 1];
	size_t i;
	int err;

	if ((err = svc_workspace_load(svc_req_caller(req), wid, SVC_ACT_WS_READ, NULL, &ws)) < 0)
		return err;
	role = svc_json_str(req->json, "role");
	o.new_role = role ? role : "member";
	if ((err = ws_check(req, ws, SVC_ACT_MEMBER_ADD, &o)) < 0)
		goto done;
	if (strcmp(svc_rows_get(ws, 0, WCOL_KIND), "personal") == 0) {
		err = svc_resp_error(resp, SVC_E_CONFLICT, NULL,
				     "A personal workspace has one member; create a team workspace to share projects.");
		goto done;
	}
	snprintf(email, sizeof email, "%s", svc_json_str(req->json, "email"));
	for (i = 0; email[i]; i++)
		if (email[i] >= 'A' && email[i] <= 'Z')
			email[i] = (char)(email[i] - 'A' + 'a');
	p[0] = svc_dbv_str(email);
	if ((err = svc_db_run(req->ctx->db, STMT_USER_BY_EMAIL, p, 1, &user, NULL)) < 0)
		goto done;
	if (!user || user->nrows != 1) {
		err = svc_resp_error(resp, SVC_E_NOT_FOUND, "email", "No user has this email address.");
		goto done;
	}
	uid = svc_rows_get(user, 0, UECOL_ID);
	p[0] = svc_dbv_str(wid);
	p[1] = svc_dbv_str(uid);
	p[2] = svc_dbv_str(o.new_role);
	if ((err = svc_db_run(req->ctx->db, STMT_MEMBER_INSERT, p, 3, NULL, NULL)) < 0) {
		if (err == SVC_E_CONFLICT)
			err = svc_resp_error(resp, err, "email", "This user is already a member.");
		goto done;
	}
	svc_log_info("workspaces: member added workspace=%s user=%s role=%s by=%s", wid, uid, o.new_role,
		     req->user_id);
	err = send_member(req, resp, wid, uid, 201);
done:
	svc_rows_free(user);
	svc_rows_free(ws);
	return err;
}

struct member_change {
	struct svc_req *req;
	struct svc_resp *resp;
	const struct svc_rows *ws;
	enum svc_action action;
	const char *uid, *new_role, *also, *also_role;
};

/* The body of change_member(), a transaction of svc_db_tx(). */
static int member_change_tx(struct svc_db *db, void *arg)
{
	const struct member_change *c = arg;
	const char *wid = svc_rows_get(c->ws, 0, WCOL_ID), *cur = NULL;
	struct svc_perm_object o = { 0 };
	struct svc_rows *locked = NULL;
	struct svc_dbv p[3];
	size_t r, owners = 0, owners_after;
	int err;

	p[0] = svc_dbv_str(wid);
	if ((err = svc_db_run(db, STMT_MEMBER_LOCK, p, 1, &locked, NULL)) < 0)
		goto done;
	for (r = 0; locked && r < locked->nrows; r++) {
		if (strcmp(svc_rows_get(locked, r, MLCOL_ROLE), "owner") == 0)
			owners++;
		if (strcmp(svc_rows_get(locked, r, MLCOL_USER), c->uid) == 0)
			cur = svc_rows_get(locked, r, MLCOL_ROLE);
	}
	if (!cur) {
		err = svc_resp_error(c->resp, SVC_E_NOT_FOUND, NULL, "This user is not a member of the workspace.");
		goto done;
	}
	o.member_id = c->uid;
	o.member_role = cur;
	o.new_role = c->new_role;
	if ((err = ws_check(c->req, c->ws, c->action, &o)) < 0)
		goto done;
	owners_after = owners - (strcmp(cur, "owner") == 0) + (c->new_role && strcmp(c->new_role, "owner") == 0);
	if (c->also && c->also_role && strcmp(c->also_role, "owner") == 0)
		owners_after++;
	if (owners_after == 0) {
		err = svc_resp_error(c->resp, SVC_E_CONFLICT, NULL,
				     "A workspace keeps at least one owner: make another member owner first.");
		goto done;
	}
	p[0] = svc_dbv_str(c->new_role);
	p[1] = svc_dbv_str(wid);
	p[2] = svc_dbv_str(c->uid);
	if (c->new_role)
		err = svc_db_run(db, STMT_MEMBER_SET_ROLE, p, 3, NULL, NULL);
	else
		err = svc_db_run(db, STMT_MEMBER_DELETE, p + 1, 2, NULL, NULL);
	if (err < 0)
		goto done;
	if (c->also) {
		p[0] = svc_dbv_str(c->also_role);
		p[2] = svc_dbv_str(c->also);
		err = svc_db_run(db, STMT_MEMBER_SET_ROLE, p, 3, NULL, NULL);
	}
done:
	svc_rows_free(locked);
	return err;
}

/*
 * The one place membership changes: inside a transaction (svc_db_tx()) that
 * locks the workspace's membership rows, checks `action` for member `uid`
 * (new role `new_role`, NULL to remove) and that an owner remains, then
 * writes. `also` (may be NULL) is a second member set to `also_role` in the
 * same transaction (ownership transfer). Errors: SVC_E_NOT_FOUND (not a
 * member), SVC_E_FORBIDDEN, SVC_E_CONFLICT (no owner would be left), DB errors.
 */
static int change_member(struct svc_req *req, struct svc_resp *resp, const struct svc_rows *ws,
			 enum svc_action action, const char *uid, const char *new_role, const char *also,
			 const char *also_role)
{
	struct member_change c = { req, resp, ws, action, uid, new_role, also, also_role };
	int err = svc_db_tx(req->ctx->db, member_change_tx, &c);

	if (err == 0)
		svc_log_info("workspaces: member %s workspace=%s user=%s role=%s by=%s", new_role ? "changed" : "removed",
			     svc_rows_get(ws, 0, WCOL_ID), uid, new_role ? new_role : "-", req->user_id);
	return err;
}

static const struct svc_field role_fields[] = {
	{ "role", SVC_V_ENUM, SVC_F_REQUIRED, 0, 0, roles },
};
const struct svc_body svc_api_members_update_body = SVC_BODY(role_fields);

/* PATCH /workspaces/:wid/members/:userId {role}: 200 Member; 400; 403; 404; 409 (last owner). */
enum svc_err svc_api_members_update(struct svc_req *req, struct svc_resp *resp)
{
	const char *wid = svc_req_param(req, "wid"), *uid = svc_req_param(req, "userId");
	struct svc_rows *ws = NULL;
	int err;

	if ((err = svc_workspace_load(svc_req_caller(req), wid, SVC_ACT_WS_READ, NULL, &ws)) < 0)
		return err;
	if ((err = change_member(req, resp, ws, SVC_ACT_MEMBER_ROLE, uid, svc_json_str(req->json, "role"),
				 NULL, NULL)) == 0)
		err = send_member(req, resp, wid, uid, 200);
	svc_rows_free(ws);
	return err;
}

/* DELETE /workspaces/:wid/members/:userId: 200 {workspaceId, userId, removed}; 403; 404; 409 (last owner). */
enum svc_err svc_api_members_remove(struct svc_req *req, struct svc_resp *resp)
{
	const char *wid = svc_req_param(req, "wid"), *uid = svc_req_param(req, "userId");
	struct svc_rows *ws = NULL;
	struct json_object *body;
	int err;

	if ((err = svc_workspace_load(svc_req_caller(req), wid, SVC_ACT_WS_READ, NULL, &ws)) < 0)
		return err;
	err = change_member(req, resp, ws, SVC_ACT_MEMBER_REMOVE, uid, NULL, NULL, NULL);
	svc_rows_free(ws);
	if (err < 0)
		return err;
	body = json_object_new_object();
	json_object_object_add(body, "workspaceId", json_object_new_string(wid));
	json_object_object_add(body, "userId", json_object_new_string(uid));
	json_object_object_add(body, "removed", json_object_new_boolean(1));
	return svc_resp_json(resp, 200, body);
}

/* POST /workspaces/:wid/leave: 200 {workspaceId, userId, removed}; 403 (not a member); 404; 409 (last owner). */
enum svc_err svc_api_workspaces_leave(struct svc_req *req, struct svc_resp *resp)
{
	const char *wid = svc_req_param(req, "wid");
	struct svc_rows *ws = NULL;
	struct json_object *body;
	int err;

	if ((err = svc_workspace_load(svc_req_caller(req), wid, SVC_ACT_WS_LEAVE, NULL, &ws)) < 0)
		return err;
	if (!svc_rows_get(ws, 0, WCOL_ROLE)) {
		/* a platform admin who is not a member has nothing to leave */
		svc_rows_free(ws);
		return svc_resp_error(resp, SVC_E_FORBIDDEN, NULL, "You are not a member of this workspace.");
	}
	err = change_member(req, resp, ws, SVC_ACT_MEMBER_REMOVE, req->user_id, NULL, NULL, NULL);
	svc_rows_free(ws);
	if (err < 0)
		return err;
	body = json_object_new_object();
	json_object_object_add(body, "workspaceId", json_object_new_string(wid));
	json_object_object_add(body, "userId", json_object_new_string(req->user_id));
	json_object_object_add(body, "removed", json_object_new_boolean(1));
	return svc_resp_json(resp, 200, body);
}

static const struct svc_field transfer_fields[] = {
	{ "userId", SVC_V_UUID, SVC_F_REQUIRED, 0, 0, NULL },
};
const struct svc_body svc_api_workspaces_transfer_body = SVC_BODY(transfer_fields);

/*
 * POST /workspaces/:wid/transfer {userId}: the member becomes owner and the
 * caller (an owner) becomes admin, in one transaction. 200 {items: members};
 * 400 (userId missing, or the caller); 403 (not owner); 404 (workspace, member).
 */
enum svc_err svc_api_workspaces_transfer(struct svc_req *req, struct svc_resp *resp)
{
	const char *wid = svc_req_param(req, "wid"), *uid;
	struct svc_rows *ws = NULL;
	struct svc_perm_object o = { 0 };
	int err;

	if ((err = svc_workspace_load(svc_req_caller(req), wid, SVC_ACT_WS_READ, NULL, &ws)) < 0)
		return err;
	if ((err = ws_check(req, ws, SVC_ACT_WS_TRANSFER, &o)) < 0)
		goto done;
	uid = svc_json_str(req->json, "userId");
	if (strcmp(uid, req->user_id) == 0) {
		err = svc_resp_error(resp, SVC_E_VALIDATION, "userId", "Transfer ownership to another member.");
		goto done;
	}
	if (!svc_rows_get(ws, 0, WCOL_ROLE)) {
		/* a platform admin hands ownership over without stepping down from a role they do not have */
		err = change_member(req, resp, ws, SVC_ACT_MEMBER_ROLE, uid, "owner", NULL, NULL);
	} else {
		err = change_member(req, resp, ws, SVC_ACT_MEMBER_ROLE, uid, "owner", req->user_id, "admin");
	}
	if (err == 0) {
		svc_rows_free(ws);
		ws = NULL;
		return svc_api_members_list(req, resp);
	}
done:
	svc_rows_free(ws);
	return err;
}

/* ---- folders ---- */

/* GET /workspaces/:wid/folders: 200 {items: [Folder]} by name; 403; 404. */
enum svc_err svc_api_folders_list(struct svc_req *req, struct svc_resp *resp)
{
	static const struct svc_items it = { SVC_ITEMS_OF_WORKSPACE, "wid", SVC_ACT_WS_READ, STMT_FOLDER_LIST,
					     folder_json };

	return svc_resp_items(req, resp, &it);
}

static int send_folder(struct svc_req *req, struct svc_resp *resp, const char *id, int status)
{
	struct svc_dbv p = svc_dbv_str(id);
	struct svc_rows *rows = NULL;
	int err;

	if ((err = svc_db_run(req->ctx->db, STMT_FOLDER_GET, &p, 1, &rows, NULL)) < 0)
		return err;
	if (!rows || rows->nrows != 1) {
		svc_rows_free(rows);
		return SVC_E_NOT_FOUND;
	}
	svc_resp_json(resp, status, folder_json(rows, 0, NULL));
	svc_rows_free(rows);
	return 0;
}

const struct svc_body svc_api_folders_create_body = SVC_BODY(name_fields);

/* POST /workspaces/:wid/folders {name}: 201 Folder; 400; 403; 404; 409 (name taken in the workspace). */
enum svc_err svc_api_folders_create(struct svc_req *req, struct svc_resp *resp)
{
	const char *wid = svc_req_param(req, "wid");
	struct svc_rows *ws = NULL;
	struct svc_dbv p[3];
	char id[37];
	int err;

	if ((err = svc_workspace_load(svc_req_caller(req), wid, SVC_ACT_FOLDER_WRITE, NULL, &ws)) < 0)
		return err;
	svc_rows_free(ws);
	if (svc_uuid_v4(id) < 0)
		return SVC_E_INTERNAL;
	p[0] = svc_dbv_str(id);
	p[1] = svc_dbv_str(wid);
	p[2] = svc_dbv_str(svc_json_str(req->json, "name"));
	if ((err = svc_db_run(req->ctx->db, STMT_FOLDER_INSERT, p, 3, NULL, NULL)) < 0)
		return err == SVC_E_CONFLICT ? svc_resp_error(resp, err, "name", "A folder with this name exists.") : err;
	return send_folder(req, resp, id, 201);
}

/* Loads folder `id` and checks that the caller may write folders in its workspace. */
static int folder_load(struct svc_req *req, const char *id, struct svc_rows **out)
{
	struct svc_dbv p = svc_dbv_str(id);
	struct svc_rows *rows = NULL, *ws = NULL;
	int err;

	if (!svc_uuid_valid(id))
		return SVC_E_NOT_FOUND;
	if ((err = svc_db_run(req->ctx->db, STMT_FOLDER_GET, &p, 1, &rows, NULL)) < 0)
		return err;
	if (!rows || rows->nrows != 1) {
		svc_rows_free(rows);
		return SVC_E_NOT_FOUND;
	}
	if ((err = svc_workspace_load(svc_req_caller(req), svc_rows_get(rows, 0, FOCOL_WORKSPACE), SVC_ACT_FOLDER_WRITE,
				      NULL, &ws)) < 0) {
		svc_rows_free(rows);
		return err;
	}
	svc_rows_free(ws);
	*out = rows;
	return 0;
}

const struct svc_body svc_api_folders_update_body = SVC_BODY(name_fields);

/* PATCH /folders/:folderId {name}: 200 Folder; 400; 403; 404; 409 (name taken). */
enum svc_err svc_api_folders_update(struct svc_req *req, struct svc_resp *resp)
{
	const char *id = svc_req_param(req, "folderId");
	struct svc_rows *f = NULL;
	struct svc_dbv p[2];
	int err;

	if ((err = folder_load(req, id, &f)) < 0)
		return err;
	svc_rows_free(f);
	p[0] = svc_dbv_str(svc_json_str(req->json, "name"));
	p[1] = svc_dbv_str(id);
	if ((err = svc_db_run(req->ctx->db, STMT_FOLDER_RENAME, p, 2, NULL, NULL)) < 0)
		return err == SVC_E_CONFLICT ? svc_resp_error(resp, err, "name", "A folder with this name exists.") : err;
	return send_folder(req, resp, id, 200);
}

/* DELETE /folders/:folderId: 200 {id, deleted, projectsMoved}: its projects (deleted ones too) move to the root; 403; 404. */
enum svc_err svc_api_folders_delete(struct svc_req *req, struct svc_resp *resp)
{
	const char *id = svc_req_param(req, "folderId");
	struct svc_rows *f = NULL;
	struct json_object *body;
	struct svc_dbv p;
	uint64_t moved = 0, gone = 0;
	struct svc_db_step steps[2] = { { STMT_FOLDER_UNFILE, &p, 1, &moved }, { STMT_FOLDER_DELETE, &p, 1, &gone } };
	int err;

	if ((err = folder_load(req, id, &f)) < 0)
		return err;
	svc_rows_free(f);
	p = svc_dbv_str(id);
	if ((err = svc_db_tx_steps(req->ctx->db, steps, 2)) < 0)
		return err;
	if (!gone)
		return SVC_E_NOT_FOUND;
	body = json_object_new_object();
	json_object_object_add(body, "id", json_object_new_string(id));
	json_object_object_add(body, "deleted", json_object_new_boolean(1));
	json_object_object_add(body, "projectsMoved", json_object_new_int64((int64_t)moved));
	return svc_resp_json(resp, 200, body);
}
