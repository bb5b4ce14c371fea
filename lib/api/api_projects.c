/* api_projects.c: projects, their files, versions, publishing and chats (spec "Project endpoints"). */
#include <errno.h>
#include <fcntl.h>
#include <sys/file.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/sha.h>

#include "api/api.h"
#include "project/direct_save.h"
#include "api/api_agent.h"
#include "core/err.h"
#include "core/fsx.h"
#include "auth/internal.h"
#include "core/json.h"
#include "core/log.h"
#include "project/repo.h"
#include "project/thumbnail.h"

#define FILE_READ_MAX (10u * 1024 * 1024)
#define FILES_LIST_MAX 10000
#define VERSIONS_MAX 500          /* versions listed */
#define RESTORE_SEARCH_MAX 100000 /* versions searched for a checkout */

/* ---- shared helpers: permissions, loading, JSON ---- */

void svc_req_subject(struct svc_req *req, const char *role, const char *admin_flag, struct svc_perm_subject *s)
{
	s->user_id = req->user_id;
	s->platform_admin = admin_flag && strcmp(admin_flag, "1") == 0;
	s->role = role && *role ? role : NULL;
	/* a session holds every scope; an API token only those the router granted it for this route
	 * (anonymous readers of public projects are decided by role and visibility alone) */
	s->scopes = req->user_id[0] ? req->scopes : SVC_SCOPE_ALL;
}

int svc_project_check(struct svc_req *req, const struct svc_rows *rows, enum svc_action action)
{
	struct svc_perm_subject s;
	struct svc_perm_object o = { 0 };

	svc_req_subject(req, svc_rows_get(rows, 0, PCOL_EXTRA), svc_rows_get(rows, 0, PCOL_ADMIN), &s);
	o.visibility = svc_rows_get(rows, 0, PCOL_VISIBILITY);
	o.created_by = svc_rows_get(rows, 0, PCOL_CREATED_BY);
	return svc_perm_check(&s, action, &o);
}

int svc_project_load_state(struct svc_req *req, const char *id, enum svc_action action, int deleted,
			   struct svc_rows **out)
{
	struct svc_dbv p[5];
	struct svc_rows *rows = NULL;
	int err;

	if (!svc_uuid_valid(id))
		return SVC_E_NOT_FOUND;
	p[0] = svc_dbv_str(req->user_id);
	p[1] = svc_dbv_str(req->user_id);
	p[2] = svc_dbv_str(id);
	p[3] = svc_dbv_i64(deleted);
	p[4] = svc_dbv_i64(deleted);
	if ((err = svc_db_run(req->ctx->db, STMT_PROJECT_GET_STATE, p, 5, &rows, NULL)) < 0)
		return err;
	if (!rows || rows->nrows != 1) {
		svc_rows_free(rows);
		return SVC_E_NOT_FOUND;
	}
	if ((err = svc_project_check(req, rows, action)) < 0) {
		svc_rows_free(rows);
		return err;
	}
	*out = rows;
	return 0;
}

int svc_project_load(struct svc_req *req, const char *id, enum svc_action action, struct svc_rows **out)
{
	return svc_project_load_state(req, id, action, 0, out);
}

struct json_object *svc_project_json(const struct svc_rows *rows, size_t r)
{
	struct json_object *o = json_object_new_object();

	svc_json_add_str(o, "id", svc_rows_get(rows, r, PCOL_ID));
	svc_json_add_str(o, "workspaceId", svc_rows_get(rows, r, PCOL_WORKSPACE));
	svc_json_add_str(o, "folderId", svc_rows_get(rows, r, PCOL_FOLDER));
	svc_json_add_str(o, "slug", svc_rows_get(rows, r, PCOL_SLUG));
	svc_json_add_str(o, "name", svc_rows_get(rows, r, PCOL_NAME));
	svc_json_add_str(o, "description", svc_rows_get(rows, r, PCOL_DESCRIPTION));
	svc_json_add_str(o, "template", svc_rows_get(rows, r, PCOL_TEMPLATE));
	svc_json_add_str(o, "visibility", svc_rows_get(rows, r, PCOL_VISIBILITY));
	svc_json_add_str(o, "thumbnailUrl", svc_rows_get(rows, r, PCOL_THUMBNAIL));
	svc_json_add_time(o, "publishedAt", svc_rows_get(rows, r, PCOL_PUBLISHED));
	svc_json_add_str(o, "customDomain", svc_rows_get(rows, r, PCOL_DOMAIN));
	svc_json_add_time(o, "createdAt", svc_rows_get(rows, r, PCOL_CREATED));
	svc_json_add_time(o, "updatedAt", svc_rows_get(rows, r, PCOL_UPDATED));
	return o;
}

int svc_project_dir(const struct svc_config *cfg, const char *id, char *out, size_t max)
{
	int n = snprintf(out, max, "%s/projects/%s", cfg->data_dir, id);

	return (n < 0 || (size_t)n >= max) ? SVC_E_INTERNAL : 0;
}

int svc_workspace_load(struct svc_req *req, const char *wid, enum svc_action action,
		       const struct svc_perm_object *o, struct svc_rows **out)
{
	struct svc_perm_subject s;
	struct svc_perm_object kind_only = { 0 };
	struct svc_dbv p[3];
	struct svc_rows *rows = NULL;
	int err;

	if (!svc_uuid_valid(wid))
		return SVC_E_NOT_FOUND;
	p[0] = svc_dbv_str(req->user_id);
	p[1] = svc_dbv_str(req->user_id);
	p[2] = svc_dbv_str(wid);
	if ((err = svc_db_run(req->ctx->db, STMT_WS_GET, p, 3, &rows, NULL)) < 0)
		return err;
	if (!rows || rows->nrows != 1) {
		svc_rows_free(rows);
		return SVC_E_NOT_FOUND;
	}
	svc_req_subject(req, svc_rows_get(rows, 0, WCOL_ROLE), svc_rows_get(rows, 0, WCOL_ADMIN), &s);
	kind_only.kind = svc_rows_get(rows, 0, WCOL_KIND);
	if ((err = svc_perm_check(&s, action, o ? o : &kind_only)) < 0) {
		svc_rows_free(rows);
		return err;
	}
	*out = rows;
	return 0;
}

int svc_workspace_role(struct svc_req *req, const char *wid, char *role)
{
	struct svc_rows *rows = NULL;
	const char *r;
	int err;

	if ((err = svc_workspace_load(req, wid, SVC_ACT_PROJECT_CREATE, NULL, &rows)) < 0)
		return err;
	r = svc_rows_get(rows, 0, WCOL_ROLE);
	snprintf(role, 16, "%s", r ? r : "");
	svc_rows_free(rows);
	return 0;
}

/* The caller's name and e-mail for Git commits; falls back to "svc". */
static void author_of(struct svc_req *req, char *name, size_t nmax, char *email, size_t emax)
{
	struct svc_dbv p = svc_dbv_str(req->user_id);
	struct svc_rows *rows = NULL;

	snprintf(name, nmax, "svc");
	snprintf(email, emax, "svc@localhost");
	if (svc_db_run(req->ctx->db, STMT_USER_BY_ID, &p, 1, &rows, NULL) == 0 && rows && rows->nrows == 1) {
		const char *dn = svc_rows_get(rows, 0, 2), *em = svc_rows_get(rows, 0, 1);
		snprintf(name, nmax, "%s", dn ? dn : em);
		snprintf(email, emax, "%s", em);
	}
	svc_rows_free(rows);
}

static int mkdir_p(const char *path)
{
	char tmp[4096];
	size_t i, len = strlen(path);

	if (len >= sizeof tmp)
		return SVC_E_INTERNAL;
	memcpy(tmp, path, len + 1);
	for (i = 1; i <= len; i++) {
		if (tmp[i] == '/' || tmp[i] == '\0') {
			char c = tmp[i];
			tmp[i] = '\0';
			if (mkdir(tmp, 0755) < 0 && errno != EEXIST)
				return SVC_E_INTERNAL;
			tmp[i] = c;
		}
	}
	return 0;
}

/* ---- create, list, get, update, delete ---- */

/* Makes a URL-safe slug from a name: [a-z0-9-], at most 40 characters, "project" when nothing is left. */
static void slugify(const char *name, char *out, size_t max)
{
	size_t o = 0;
	int dash = 0;

	for (; *name && o + 1 < max && o < 40; name++) {
		char c = *name;
		if (c >= 'A' && c <= 'Z')
			c = (char)(c - 'A' + 'a');
		if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) {
			if (dash && o)
				out[o++] = '-';
			dash = 0;
			if (o + 1 < max)
				out[o++] = c;
		} else {
			dash = 1;
		}
	}
	out[o] = '\0';
	if (!o)
		snprintf(out, max, "project");
}

static int template_valid(const struct svc_config *cfg, const char *t, char *dir, size_t max)
{
	struct stat st;
	const char *p;
	int n;

	if (!*t || strlen(t) > 64)
		return 0;
	for (p = t; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '-'))
			return 0;
	n = snprintf(dir, max, "%s/%s", cfg->templates_dir, t);
	if (n < 0 || (size_t)n >= max)
		return 0;
	return stat(dir, &st) == 0 && S_ISDIR(st.st_mode);
}

/* POST /workspaces/:wid/projects {name, template?, description?, folderId?, prompt?, visibility?}: 201; 400 validation_failed; 403 not a member; 404 unknown workspace. */
int svc_api_projects_create(struct svc_req *req, struct svc_resp *resp)
{
	static const char *const visibilities[] = { "private", "workspace", "public", NULL };
	static const struct svc_field fields[] = {
		{ "name", SVC_V_TEXT, SVC_F_REQUIRED, 1, 128, NULL },
		{ "description", SVC_V_STR, SVC_F_NULLABLE, 0, 2000, NULL },
		{ "template", SVC_V_STR, 0, 1, 64, NULL },
		{ "folderId", SVC_V_UUID, SVC_F_NULLABLE, 0, 0, NULL },
		{ "prompt", SVC_V_STR, SVC_F_NULLABLE, 0, 100000, NULL },
		{ "visibility", SVC_V_ENUM, 0, 0, 0, visibilities },
	};
	const struct svc_config *cfg = &req->ctx->cfg;
	struct svc_db *db = req->ctx->db;
	const char *wid = svc_req_param(req, "wid"), *field, *name, *tmpl, *folder, *desc;
	char msg[256], role[16], id[37], chat_id[37], slug[64], base[48], sha[41];
	char tdir[2048], pdir[2048], tmpdir[2100], projects[2048], aname[256], aemail[256], cmsg[128];
	struct svc_rows *rows = NULL;
	struct svc_dbv p[9];
	int err, tries, in_tx = 0, moved = 0;

	if ((err = svc_json_validate(req->json, fields, 6, &field, msg, sizeof msg)) < 0)
		return svc_resp_error(resp, err, field, "%s", msg);
	if ((err = svc_workspace_role(req, wid, role)) < 0)
		return err;
	name = svc_json_str(req->json, "name");
	desc = svc_json_str(req->json, "description");
	tmpl = svc_json_str(req->json, "template");
	if (!tmpl)
		tmpl = "blank";
	if (!template_valid(cfg, tmpl, tdir, sizeof tdir))
		return svc_resp_error(resp, SVC_E_VALIDATION, "template", "unknown template %.64s", tmpl);
	folder = svc_json_str(req->json, "folderId");
	if (folder) {
		p[0] = svc_dbv_str(folder);
		p[1] = svc_dbv_str(wid);
		if ((err = svc_db_run(db, STMT_FOLDER_IN_WORKSPACE, p, 2, &rows, NULL)) < 0)
			return err;
		err = rows && rows->nrows == 1 ? 0 : SVC_E_VALIDATION;
		svc_rows_free(rows);
		rows = NULL;
		if (err < 0)
			return svc_resp_error(resp, err, "folderId", "folderId is not a folder of this workspace");
	}
	if (svc_uuid_v4(id) < 0 || svc_uuid_v4(chat_id) < 0)
		return SVC_E_INTERNAL;

	/* Files first, in a temporary directory: nothing is visible until the rename. */
	snprintf(projects, sizeof projects, "%s/projects", cfg->data_dir);
	if ((err = mkdir_p(projects)) < 0)
		return err;
	if ((err = svc_project_dir(cfg, id, pdir, sizeof pdir)) < 0)
		return err;
	snprintf(tmpdir, sizeof tmpdir, "%s/.tmp-%s", projects, id);
	if ((err = svc_fsx_copy_tree(tdir, tmpdir)) < 0)
		goto done;
	author_of(req, aname, sizeof aname, aemail, sizeof aemail);
	snprintf(cmsg, sizeof cmsg, "Create project from template %s", tmpl);
	if ((err = svc_repo_init(tmpdir, cmsg, aname, aemail, sha)) < 0)
		goto done;

	if ((err = svc_db_begin(db)) < 0)
		goto done;
	in_tx = 1;
	slugify(name, base, sizeof base);
	snprintf(slug, sizeof slug, "%s", base);
	for (tries = 0; tries < 8; tries++) {
		p[0] = svc_dbv_str(id);
		p[1] = svc_dbv_str(wid);
		p[2] = svc_dbv_str(folder);
		p[3] = svc_dbv_str(slug);
		p[4] = svc_dbv_str(name);
		p[5] = svc_dbv_str(desc);
		p[6] = svc_dbv_str(tmpl);
		p[7] = svc_dbv_str(svc_json_str(req->json, "visibility") ? svc_json_str(req->json, "visibility") : "workspace");
		p[8] = svc_dbv_str(req->user_id);
		err = svc_db_run(db, STMT_PROJECT_INSERT, p, 9, NULL, NULL);
		if (err != SVC_E_CONFLICT)
			break;
		{
			char suffix[9];
			if (svc_random_hex(suffix, tries < 4 ? 2 : 4) < 0) {
				err = SVC_E_INTERNAL;
				break;
			}
			snprintf(slug, sizeof slug, "%s-%s", base, suffix);
		}
	}
	if (err < 0)
		goto done;
	p[0] = svc_dbv_str(chat_id);
	p[1] = svc_dbv_str(id);
	p[2] = svc_dbv_str("Main chat");
	p[3] = svc_dbv_str("build");
	p[4] = svc_dbv_str(req->user_id);
	if ((err = svc_db_run(db, STMT_CHAT_INSERT, p, 5, NULL, NULL)) < 0)
		goto done;
	/* the first prompt, when given, is queued for svc-worker (lib/api_agent.h) in this transaction */
	if ((err = svc_chat_queue_first_prompt(db, id, chat_id, req->user_id, svc_json_str(req->json, "prompt"))) < 0)
		goto done;
	if (rename(tmpdir, pdir) < 0) {
		svc_log_error("projects: rename %s: %s", tmpdir, strerror(errno));
		err = SVC_E_INTERNAL;
		goto done;
	}
	moved = 1;
	if ((err = svc_db_commit(db)) < 0)
		goto done;
	in_tx = 0;
	if ((err = svc_project_load(req, id, SVC_ACT_READ, &rows)) < 0)
		goto done;
	{
		struct json_object *o = svc_project_json(rows, 0);
		json_object_object_add(o, "defaultChatId", json_object_new_string(chat_id));
		svc_resp_json(resp, 201, o);
	}
done:
	svc_rows_free(rows);
	if (err < 0) {
		if (in_tx)
			svc_db_rollback(db);
		svc_fsx_remove_tree(moved ? pdir : tmpdir);
	}
	return err;
}

/* Cursor: hex of "<created_at with microseconds>|<id>", opaque to clients. */
static int cursor_encode(const char *ts, const char *id, char *out, size_t max)
{
	static const char hex[] = "0123456789abcdef";
	char raw[128];
	size_t i, n = (size_t)snprintf(raw, sizeof raw, "%s|%s", ts, id);

	if (n >= sizeof raw || 2 * n + 1 > max)
		return SVC_E_INTERNAL;
	for (i = 0; i < n; i++) {
		out[2 * i] = hex[(unsigned char)raw[i] >> 4];
		out[2 * i + 1] = hex[(unsigned char)raw[i] & 15];
	}
	out[2 * n] = '\0';
	return 0;
}

static int cursor_decode(const char *c, char *ts, size_t tsmax, char *id)
{
	char raw[128];
	size_t i, n = strlen(c);
	char *bar;

	if (n == 0 || n % 2 || n / 2 >= sizeof raw)
		return SVC_E_VALIDATION;
	for (i = 0; i < n / 2; i++) {
		int h = c[2 * i], l = c[2 * i + 1];
		h = (h >= '0' && h <= '9') ? h - '0' : (h >= 'a' && h <= 'f') ? h - 'a' + 10 : -1;
		l = (l >= '0' && l <= '9') ? l - '0' : (l >= 'a' && l <= 'f') ? l - 'a' + 10 : -1;
		if (h < 0 || l < 0)
			return SVC_E_VALIDATION;
		raw[i] = (char)(h * 16 + l);
	}
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
	if (rows && rows->nrows == 1 && svc_rows_get(rows, 0, 4) && strcmp(svc_rows_get(rows, 0, 4), "1") == 0)
		flag[0] = '1';
	svc_rows_free(rows);
	return 0;
}

/*
 * GET /projects?workspaceId&folderId&visibility&q&cursor&limit: 200 {items, nextCursor};
 * 400 validation_failed (workspaceId, folderId, visibility, q, cursor, limit).
 * Lists only what the caller may read (lib/perm.c): in a workspace the caller
 * is not a member of, only its public projects.
 */
int svc_api_projects_list(struct svc_req *req, struct svc_resp *resp)
{
	char wid[64], cur[256], lim[16], ts[128] = "9999-12-31 23:59:59.999999", cid[37] = "";
	char folder[64], vis[16], q[512], query[1024], admin[2];
	uint64_t limit = 20;
	int64_t folder_mode = 0;
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
	if ((err = svc_db_run(req->ctx->db, stmt, p, n, &rows, NULL)) < 0)
		return err;
	body = json_object_new_object();
	items = json_object_new_array();
	shown = rows ? (rows->nrows > limit ? limit : rows->nrows) : 0;
	for (r = 0; r < shown; r++)
		json_object_array_add(items, svc_project_json(rows, r));
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
int svc_api_projects_get(struct svc_req *req, struct svc_resp *resp)
{
	struct svc_rows *rows = NULL;
	int err = svc_project_load(req, svc_req_param(req, "id"), SVC_ACT_READ, &rows);

	if (err < 0)
		return err;
	svc_resp_json(resp, 200, svc_project_json(rows, 0));
	svc_rows_free(rows);
	return 0;
}

/* PATCH /projects/:id {name?, description?, visibility?, folderId?}: 200 Project; 400; 403 (also: visibility by a member who is not the creator); 404. */
int svc_api_projects_update(struct svc_req *req, struct svc_resp *resp)
{
	static const char *const visibilities[] = { "private", "workspace", "public", NULL };
	static const struct svc_field fields[] = {
		{ "name", SVC_V_TEXT, 0, 1, 128, NULL },
		{ "description", SVC_V_STR, SVC_F_NULLABLE, 0, 2000, NULL },
		{ "visibility", SVC_V_ENUM, 0, 0, 0, visibilities },
		{ "folderId", SVC_V_UUID, SVC_F_NULLABLE, 0, 0, NULL },
	};
	const char *id = svc_req_param(req, "id"), *field;
	struct svc_rows *rows = NULL, *after = NULL, *frows = NULL;
	struct json_object *v;
	struct svc_dbv p[5];
	char msg[256];
	int err;

	if ((err = svc_project_load(req, id, SVC_ACT_WRITE, &rows)) < 0)
		return err;
	if ((err = svc_json_validate(req->json, fields, 4, &field, msg, sizeof msg)) < 0) {
		svc_rows_free(rows);
		return svc_resp_error(resp, err, field, "%s", msg);
	}
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
		    (err = svc_project_check(req, rows, SVC_ACT_VISIBILITY)) < 0)
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
	if ((err = svc_project_load(req, id, SVC_ACT_READ, &after)) < 0)
		goto done;
	svc_resp_json(resp, 200, svc_project_json(after, 0));
done:
	svc_rows_free(frows);
	svc_rows_free(after);
	svc_rows_free(rows);
	return err;
}

static int published_dir(const struct svc_config *cfg, const char *slug, char *out, size_t max)
{
	int n = snprintf(out, max, "%s/published/%s", cfg->data_dir, slug);

	return (n < 0 || (size_t)n >= max) ? SVC_E_INTERNAL : 0;
}

/* DELETE /projects/:id[?hard=true]: 200 {id, deleted, hard}; 400 bad hard; 403 (hard: owner only); 404. */
int svc_api_projects_delete(struct svc_req *req, struct svc_resp *resp)
{
	const char *id = svc_req_param(req, "id");
	struct svc_rows *rows = NULL;
	struct json_object *body;
	struct svc_dbv p;
	char hard[8], dir[2048];
	int err, q, is_hard = 0;

	if ((q = svc_req_query(req, "hard", hard, sizeof hard)) < 0 ||
	    (q && strcmp(hard, "true") != 0 && strcmp(hard, "false") != 0 && strcmp(hard, "1") != 0 &&
	     strcmp(hard, "0") != 0))
		return svc_resp_error(resp, SVC_E_VALIDATION, "hard", "hard must be true or false");
	is_hard = q && (strcmp(hard, "true") == 0 || strcmp(hard, "1") == 0);
	/* a soft-deleted project can still be removed for good */
	if ((err = svc_project_load_state(req, id, is_hard ? SVC_ACT_HARD_DELETE : SVC_ACT_DELETE, is_hard ? -1 : 0,
					  &rows)) < 0)
		return err;
	p = svc_dbv_str(id);
	if (is_hard) {
		if ((err = svc_db_run(req->ctx->db, STMT_PROJECT_HARD_DELETE, &p, 1, NULL, NULL)) < 0)
			goto done;
		if (svc_project_dir(&req->ctx->cfg, id, dir, sizeof dir) == 0)
			svc_fsx_remove_tree(dir);
		if (published_dir(&req->ctx->cfg, svc_rows_get(rows, 0, PCOL_SLUG), dir, sizeof dir) == 0)
			svc_fsx_remove_tree(dir);
		if (svc_thumbnail_path(&req->ctx->cfg, id, dir, sizeof dir) == 0) {
			unlink(dir);
			memcpy(dir + strlen(dir) - 4, ".source", 8);
			unlink(dir);
		}
	} else {
		if ((err = svc_db_run(req->ctx->db, STMT_PROJECT_SOFT_DELETE, &p, 1, NULL, NULL)) < 0)
			goto done;
		/* the files stay for a restore, but a deleted project's site goes offline */
		if (published_dir(&req->ctx->cfg, svc_rows_get(rows, 0, PCOL_SLUG), dir, sizeof dir) == 0)
			svc_fsx_remove_tree(dir);
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
int svc_api_projects_restore(struct svc_req *req, struct svc_resp *resp)
{
	const char *id = svc_req_param(req, "id");
	struct svc_rows *rows = NULL, *after = NULL;
	struct svc_dbv p;
	uint64_t n = 0;
	int err;

	if ((err = svc_project_load_state(req, id, SVC_ACT_DELETE, 1, &rows)) < 0) {
		if (err == SVC_E_NOT_FOUND && svc_project_load_state(req, id, SVC_ACT_READ, 0, &rows) == 0) {
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
	if ((err = svc_project_load(req, id, SVC_ACT_READ, &after)) < 0)
		goto done;
	svc_resp_json(resp, 200, svc_project_json(after, 0));
done:
	svc_rows_free(after);
	svc_rows_free(rows);
	return err;
}

/* Inserts the duplicate's row with a free slug made from `name` (the create loop: a short suffix when taken). */
static int insert_duplicate(struct svc_db *db, const char *id, const char *wid, const char *name,
			    const struct svc_rows *src, const char *user)
{
	char slug[64], base[48], suffix[9];
	struct svc_dbv p[8];
	int err = SVC_E_CONFLICT, tries;

	slugify(name, base, sizeof base);
	snprintf(slug, sizeof slug, "%s", base);
	for (tries = 0; tries < 8; tries++) {
		p[0] = svc_dbv_str(id);
		p[1] = svc_dbv_str(wid);
		p[2] = svc_dbv_str(slug);
		p[3] = svc_dbv_str(name);
		p[4] = svc_dbv_str(svc_rows_get(src, 0, PCOL_DESCRIPTION));
		p[5] = svc_dbv_str(svc_rows_get(src, 0, PCOL_TEMPLATE));
		p[6] = svc_dbv_str(svc_rows_get(src, 0, PCOL_VISIBILITY));
		p[7] = svc_dbv_str(user);
		err = svc_db_run(db, STMT_PROJECT_DUP_INSERT, p, 8, NULL, NULL);
		if (err != SVC_E_CONFLICT)
			break;
		if (svc_random_hex(suffix, tries < 4 ? 2 : 4) < 0)
			return SVC_E_INTERNAL;
		snprintf(slug, sizeof slug, "%s-%s", base, suffix);
	}
	return err;
}

/*
 * POST /projects/:id/duplicate {workspaceId?, name?}: 201 Project + defaultChatId + duplicatedFrom;
 * 400 validation_failed; 403 (no read access to the source, not a member of the target); 404.
 */
int svc_api_projects_duplicate(struct svc_req *req, struct svc_resp *resp)
{
	static const struct svc_field fields[] = {
		{ "workspaceId", SVC_V_UUID, 0, 0, 0, NULL },
		{ "name", SVC_V_TEXT, 0, 1, 128, NULL },
	};
	const struct svc_config *cfg = &req->ctx->cfg;
	struct svc_db *db = req->ctx->db;
	const char *src_id = svc_req_param(req, "id"), *field, *wid, *name;
	char msg[256], role[16], id[37], chat_id[37], copy_name[160];
	char sdir[2048], pdir[2048], tmpdir[2100];
	struct svc_rows *src = NULL, *chat = NULL, *after = NULL;
	struct svc_dbv p[5];
	int err, in_tx = 0, moved = 0, copied = 0;

	if ((err = svc_json_validate(req->json, fields, 2, &field, msg, sizeof msg)) < 0)
		return svc_resp_error(resp, err, field, "%s", msg);
	if ((err = svc_project_load(req, src_id, SVC_ACT_READ, &src)) < 0)
		return err;
	wid = svc_json_str(req->json, "workspaceId");
	if (!wid)
		wid = svc_rows_get(src, 0, PCOL_WORKSPACE);
	if ((err = svc_workspace_role(req, wid, role)) < 0) {
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

	if ((err = svc_db_begin(db)) < 0)
		goto done;
	in_tx = 1;
	if ((err = insert_duplicate(db, id, wid, name, src, req->user_id)) < 0)
		goto done;
	/* The chat seed: the source's default (first) chat and its whole timeline. */
	p[0] = svc_dbv_str(src_id);
	if ((err = svc_db_run(db, STMT_CHAT_FIRST, p, 1, &chat, NULL)) < 0)
		goto done;
	p[0] = svc_dbv_str(chat_id);
	p[1] = svc_dbv_str(id);
	p[2] = svc_dbv_str(chat && chat->nrows ? svc_rows_get(chat, 0, 1) : "Main chat");
	p[3] = svc_dbv_str(chat && chat->nrows ? svc_rows_get(chat, 0, 2) : "build");
	p[4] = svc_dbv_str(req->user_id);
	if ((err = svc_db_run(db, STMT_CHAT_INSERT, p, 5, NULL, NULL)) < 0)
		goto done;
	if (chat && chat->nrows) {
		p[0] = svc_dbv_str(chat_id);
		p[1] = svc_dbv_str(svc_rows_get(chat, 0, 0));
		if ((err = svc_db_run(db, STMT_CHAT_EVENTS_COPY, p, 2, NULL, NULL)) < 0)
			goto done;
	}
	if (rename(tmpdir, pdir) < 0) {
		svc_log_error("projects: rename %s: %s", tmpdir, strerror(errno));
		err = SVC_E_INTERNAL;
		goto done;
	}
	moved = 1;
	if ((err = svc_db_commit(db)) < 0)
		goto done;
	in_tx = 0;
	if ((err = svc_project_load(req, id, SVC_ACT_READ, &after)) < 0)
		goto done;
	{
		struct json_object *o = svc_project_json(after, 0);
		json_object_object_add(o, "defaultChatId", json_object_new_string(chat_id));
		json_object_object_add(o, "duplicatedFrom", json_object_new_string(src_id));
		svc_resp_json(resp, 201, o);
	}
done:
	if (err < 0) {
		if (in_tx)
			svc_db_rollback(db);
		if (copied)
			svc_fsx_remove_tree(moved ? pdir : tmpdir);
	}
	svc_rows_free(after);
	svc_rows_free(chat);
	svc_rows_free(src);
	return err;
}

/* ---- files, versions ---- */

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
int svc_api_projects_files(struct svc_req *req, struct svc_resp *resp)
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
int svc_api_projects_file(struct svc_req *req, struct svc_resp *resp)
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
	if (err == 0)
		svc_resp_header(resp, "Content-Disposition", "inline");
	free(data);
	return err;
}

/* GET /projects/:id/versions: 200 {items: [{sha, message, author, authorEmail, createdAt}]} newest first; 403; 404. */
int svc_api_projects_versions(struct svc_req *req, struct svc_resp *resp)
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
int svc_api_projects_checkout(struct svc_req *req, struct svc_resp *resp)
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
	author_of(req, aname, sizeof aname, aemail, sizeof aemail);
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

/* ---- direct save (visual editor) ---- */

/* Answers 422 for a patch that cannot be applied: the error body plus patchIndex, and field "patches[i]". */
static int patch_refused(struct svc_resp *resp, size_t index, const char *message)
{
	struct json_object *o = json_object_new_object();
	char field[32];

	snprintf(field, sizeof field, "patches[%zu]", index);
	json_object_object_add(o, "error", json_object_new_string("validation_failed"));
	json_object_object_add(o, "message", json_object_new_string(message));
	json_object_object_add(o, "field", json_object_new_string(field));
	json_object_object_add(o, "patchIndex", json_object_new_int64((int64_t)index));
	return svc_resp_json(resp, 422, o);
}

/*
 * POST /direct-save/:projectId {filePath, patches: [{selector, property, value}]}:
 * 200 {filePath, sha, changed, changes: [{index, selector, property, oldValue, newValue}]};
 * 400 validation_failed (filePath, patches); 403; 404 (project, file); 413 (file over 5 MiB);
 * 422 a patch that cannot be applied (patchIndex names it; the file is untouched).
 */
int svc_api_direct_save(struct svc_req *req, struct svc_resp *resp)
{
	static const struct svc_field fields[] = {
		{ "filePath", SVC_V_STR, SVC_F_REQUIRED, 1, SVC_FSX_PATH_MAX, NULL },
		{ "patches", SVC_V_ARRAY, SVC_F_REQUIRED, 0, SVC_DS_PATCHES_MAX, NULL },
	};
	const char *id = svc_req_param(req, "projectId"), *field;
	struct svc_ds_patch patches[SVC_DS_PATCHES_MAX];
	struct svc_ds_change changes[SVC_DS_PATCHES_MAX];
	struct svc_rows *rows = NULL;
	struct json_object *arr, *body, *items;
	char msg[512], norm[SVC_FSX_PATH_MAX + 1], dir[2048], aname[256], aemail[256], cmsg[SVC_FSX_PATH_MAX + 32];
	char sha[41] = "", *data = NULL, *out = NULL;
	size_t len = 0, out_len = 0, n = 0, i, failed = 0;
	enum svc_ds_kind kind;
	int err, lockfd = -1, committed = 0;

	memset(changes, 0, sizeof changes);
	if ((err = svc_project_load(req, id, SVC_ACT_WRITE, &rows)) < 0)
		return err;
	svc_rows_free(rows);
	if ((err = svc_json_validate(req->json, fields, 2, &field, msg, sizeof msg)) < 0)
		return svc_resp_error(resp, err, field, "%s", msg);
	if (svc_fsx_check_path(svc_json_str(req->json, "filePath"), norm) < 0)
		return svc_resp_error(resp, SVC_E_VALIDATION, "filePath", "the file path is not allowed");
	kind = svc_ds_kind_of(norm);
	if (kind == SVC_DS_NONE)
		return svc_resp_error(resp, SVC_E_VALIDATION, "filePath", "only .html, .htm and .css files can be edited directly");
	json_object_object_get_ex(req->json, "patches", &arr);
	n = json_object_array_length(arr);
	if (n == 0)
		return svc_resp_error(resp, SVC_E_VALIDATION, "patches", "patches must hold at least one patch");
	for (i = 0; i < n; i++) {
		struct json_object *pt = json_object_array_get_idx(arr, i), *v;
		const char *const keys[3] = { "selector", "property", "value" };
		const char *vals[3];
		size_t k;
		if (!json_object_is_type(pt, json_type_object))
			return patch_refused(resp, i, "a patch is an object {selector, property, value}");
		for (k = 0; k < 3; k++) {
			if (!json_object_object_get_ex(pt, keys[k], &v) || !json_object_is_type(v, json_type_string)) {
				snprintf(msg, sizeof msg, "patch %zu: %s must be a string", i, keys[k]);
				return patch_refused(resp, i, msg);
			}
			vals[k] = json_object_get_string(v);
		}
		patches[i] = (struct svc_ds_patch){ vals[0], vals[1], vals[2] };
	}
	if ((err = svc_project_dir(&req->ctx->cfg, id, dir, sizeof dir)) < 0)
		return err;
	/* one direct save at a time per project: read, patch and write must not interleave */
	lockfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (lockfd < 0 || flock(lockfd, LOCK_EX) < 0) {
		err = SVC_E_INTERNAL;
		goto done;
	}
	if ((err = svc_fsx_read(dir, norm, SVC_DS_FILE_MAX, &data, &len)) < 0) {
		if (err == SVC_E_NOT_FOUND)
			err = svc_resp_error(resp, err, "filePath", "No such file in the project.");
		goto done;
	}
	err = svc_ds_apply(kind, data, len, patches, n, &out, &out_len, changes, &failed, msg, sizeof msg);
	if (err == SVC_E_VALIDATION) {
		err = patch_refused(resp, failed, msg);
		goto done;
	}
	if (err < 0)
		goto done;
	if (out_len != len || memcmp(out, data, len) != 0) {
		if ((err = svc_fsx_write(dir, norm, out, out_len)) < 0)
			goto done;
		author_of(req, aname, sizeof aname, aemail, sizeof aemail);
		snprintf(cmsg, sizeof cmsg, "Visual edit: %s", norm);
		if ((err = svc_repo_commit_all(dir, cmsg, aname, aemail, sha, &committed)) < 0)
			goto done;
		if (committed) {
			struct svc_dbv p = svc_dbv_str(id);
			svc_db_run(req->ctx->db, STMT_PROJECT_TOUCH, &p, 1, NULL, NULL);
			svc_internal_notify_files(&req->ctx->cfg, id); /* the live document takes the change (svc-wsd) */
			svc_thumbnail_request(req->ctx->db, id);      /* svc-worker renders it again, off the request */
		}
	}
	body = json_object_new_object();
	json_object_object_add(body, "filePath", json_object_new_string(norm));
	json_object_object_add(body, "changed", json_object_new_boolean(committed));
	svc_json_add_str(body, "sha", committed ? sha : NULL);
	items = json_object_new_array();
	for (i = 0; i < n; i++) {
		struct json_object *c = json_object_new_object();
		json_object_object_add(c, "index", json_object_new_int64((int64_t)i));
		svc_json_add_str(c, "selector", patches[i].selector);
		svc_json_add_str(c, "property", patches[i].property);
		svc_json_add_str(c, "oldValue", changes[i].old_value);
		svc_json_add_str(c, "newValue", changes[i].new_value);
		json_object_array_add(items, c);
	}
	json_object_object_add(body, "changes", items);
	svc_resp_json(resp, 200, body);
done:
	if (lockfd >= 0)
		close(lockfd); /* releases the lock */
	svc_ds_changes_free(changes, n);
	free(out);
	free(data);
	return err;
}

/* ---- thumbnails ---- */

#define THUMB_READ_MAX (5u * 1024 * 1024)

/* Reads the stored thumbnail of `id` and its source name (source: 16 bytes). */
static int thumb_read(const struct svc_config *cfg, const char *id, char **data, size_t *len, char *source)
{
	char dir[2048], rel[64], *side = NULL;
	size_t slen = 0;
	int err;

	snprintf(dir, sizeof dir, "%s/thumbnails", cfg->data_dir);
	snprintf(rel, sizeof rel, "%s.png", id);
	if ((err = svc_fsx_read(dir, rel, THUMB_READ_MAX, data, len)) < 0)
		return err;
	snprintf(rel, sizeof rel, "%s.source", id);
	snprintf(source, 16, "fallback");
	if (svc_fsx_read(dir, rel, 15, &side, &slen) == 0 && strcmp(side, "chromium") == 0)
		snprintf(source, 16, "chromium");
	free(side);
	return 0;
}

/* A strong ETag of the image bytes: the first 128 bits of their SHA-256, quoted (RFC 9110 §8.8.3). */
static void thumb_etag(const char *data, size_t len, char *out)
{
	static const char hex[] = "0123456789abcdef";
	unsigned char d[SHA256_DIGEST_LENGTH];
	size_t i;

	SHA256((const unsigned char *)data, len, d);
	out[0] = '"';
	for (i = 0; i < 16; i++) {
		out[1 + 2 * i] = hex[d[i] >> 4];
		out[2 + 2 * i] = hex[d[i] & 15];
	}
	out[33] = '"';
	out[34] = '\0';
}

/*
 * GET /thumbnails/:projectId.png: 200 image/png with ETag, Cache-Control and
 * X-Thumbnail-Source (chromium or fallback); 304 when If-None-Match matches;
 * 401; 403; 404. A project without a thumbnail gets the generated one at once
 * and a Chromium render queued for svc-worker.
 */
int svc_api_thumbnails_get(struct svc_req *req, struct svc_resp *resp)
{
	const struct svc_config *cfg = &req->ctx->cfg;
	const char *file = svc_req_param(req, "file"), *inm;
	struct svc_rows *rows = NULL;
	char id[37], source[16], etag[35], pdir[2048], why[256], *data = NULL;
	size_t len = 0;
	enum svc_thumb_source src;
	int err, public_;

	if (!file || strlen(file) != 40 || strcmp(file + 36, ".png") != 0)
		return SVC_E_NOT_FOUND;
	memcpy(id, file, 36);
	id[36] = '\0';
	if ((err = svc_project_load(req, id, SVC_ACT_READ, &rows)) < 0)
		return err;
	public_ = strcmp(svc_rows_get(rows, 0, PCOL_VISIBILITY), "public") == 0;
	err = thumb_read(cfg, id, &data, &len, source);
	if (err == SVC_E_NOT_FOUND) {
		if ((err = svc_project_dir(cfg, id, pdir, sizeof pdir)) < 0 ||
		    (err = svc_thumbnail_render(cfg, id, svc_rows_get(rows, 0, PCOL_NAME), pdir, 0, &src, why,
						sizeof why)) < 0)
			goto done;
		svc_thumbnail_set_url(req->ctx->db, cfg, id);
		svc_thumbnail_request(req->ctx->db, id);
		err = thumb_read(cfg, id, &data, &len, source);
	}
	if (err < 0)
		goto done;
	thumb_etag(data, len, etag);
	inm = svc_req_header(req, "If-None-Match");
	if (inm && (strstr(inm, etag) || strcmp(inm, "*") == 0))
		err = svc_resp_raw(resp, 304, "image/png", "", 0);
	else
		err = svc_resp_raw(resp, 200, "image/png", data, len);
	if (err == 0 && (err = svc_resp_header(resp, "ETag", etag)) == 0 &&
	    (err = svc_resp_header(resp, "Cache-Control", public_ ? "public, max-age=60" : "private, max-age=60")) == 0)
		err = svc_resp_header(resp, "X-Thumbnail-Source", source);
done:
	free(data);
	svc_rows_free(rows);
	return err;
}

/*
 * POST /thumbnails/:projectId/regenerate[?renderer=auto|fallback]: renders now
 * (Chromium unless renderer=fallback, the generated image when it fails):
 * 200 {projectId, source, reason, etag, url, width, height}; 400 renderer; 401; 403; 404.
 */
int svc_api_thumbnails_regenerate(struct svc_req *req, struct svc_resp *resp)
{
	const struct svc_config *cfg = &req->ctx->cfg;
	const char *id = svc_req_param(req, "projectId");
	struct svc_rows *rows = NULL, *after = NULL;
	struct json_object *body;
	char renderer[16] = "auto", pdir[2048], why[256], source[16], etag[35], *data = NULL;
	size_t len = 0;
	enum svc_thumb_source src;
	int err, q;

	if ((q = svc_req_query(req, "renderer", renderer, sizeof renderer)) < 0 ||
	    (q && strcmp(renderer, "auto") != 0 && strcmp(renderer, "fallback") != 0))
		return svc_resp_error(resp, SVC_E_VALIDATION, "renderer", "renderer must be auto or fallback");
	if ((err = svc_project_load(req, id, SVC_ACT_WRITE, &rows)) < 0)
		return err;
	if ((err = svc_project_dir(cfg, id, pdir, sizeof pdir)) < 0 ||
	    (err = svc_thumbnail_render(cfg, id, svc_rows_get(rows, 0, PCOL_NAME), pdir, strcmp(renderer, "auto") == 0,
					&src, why, sizeof why)) < 0 ||
	    (err = svc_thumbnail_set_url(req->ctx->db, cfg, id)) < 0 ||
	    (err = thumb_read(cfg, id, &data, &len, source)) < 0 ||
	    (err = svc_project_load(req, id, SVC_ACT_READ, &after)) < 0)
		goto done;
	thumb_etag(data, len, etag);
	body = json_object_new_object();
	json_object_object_add(body, "projectId", json_object_new_string(id));
	json_object_object_add(body, "source", json_object_new_string(svc_thumbnail_source_name(src)));
	svc_json_add_str(body, "reason", src == SVC_THUMB_FALLBACK ? why : NULL);
	json_object_object_add(body, "etag", json_object_new_string(etag));
	svc_json_add_str(body, "url", svc_rows_get(after, 0, PCOL_THUMBNAIL));
	json_object_object_add(body, "width", json_object_new_int(SVC_THUMB_W));
	json_object_object_add(body, "height", json_object_new_int(SVC_THUMB_H));
	svc_resp_json(resp, 200, body);
done:
	free(data);
	svc_rows_free(after);
	svc_rows_free(rows);
	return err;
}

/* ---- publishing ---- */

/* The public URL of a published site: app_url's scheme, <slug>.<SVC_DOMAIN>, and the HTTP port when not default. */
static void site_url(const struct svc_config *cfg, const char *slug, char *out, size_t max)
{
	const char *scheme = strncmp(cfg->app_url, "https:", 6) == 0 ? "https" : "http";
	const char *port = cfg->http_port;
	char guessed[8] = "";

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
		snprintf(out, max, "%s://%s.%s:%s/", scheme, slug, cfg->domain, port);
	else
		snprintf(out, max, "%s://%s.%s/", scheme, slug, cfg->domain);
}

/* POST /deploy/:projectId: 200 {url, slug, publishedAt}; 403; 404. Swaps the new site in with one rename. */
int svc_api_projects_deploy(struct svc_req *req, struct svc_resp *resp)
{
	const struct svc_config *cfg = &req->ctx->cfg;
	const char *id = svc_req_param(req, "projectId");
	struct svc_rows *rows = NULL, *after = NULL;
	char pdir[2048], pub[2048], final[2048], tmp[2100], git[2200], url[512], rnd[17];
	struct json_object *body;
	const char *slug;
	struct svc_dbv p;
	int err;

	if ((err = svc_project_load(req, id, SVC_ACT_WRITE, &rows)) < 0)
		return err;
	slug = svc_rows_get(rows, 0, PCOL_SLUG);
	snprintf(pub, sizeof pub, "%s/published", cfg->data_dir);
	if ((err = svc_project_dir(cfg, id, pdir, sizeof pdir)) < 0 || (err = mkdir_p(pub)) < 0 ||
	    (err = published_dir(cfg, slug, final, sizeof final)) < 0 || (err = svc_random_hex(rnd, 8)) < 0)
		goto done;
	snprintf(tmp, sizeof tmp, "%s/.tmp-%s-%s", pub, slug, rnd);
	if ((err = svc_fsx_copy_tree(pdir, tmp)) < 0)
		goto done;
	snprintf(git, sizeof git, "%s/.git", tmp);
	svc_fsx_remove_tree(git);
	if (renameat2(AT_FDCWD, tmp, AT_FDCWD, final, RENAME_EXCHANGE) == 0) {
		svc_fsx_remove_tree(tmp); /* now holds the previous site */
	} else if (errno == ENOENT && rename(tmp, final) == 0) {
		/* first publication */
	} else {
		svc_log_error("deploy: swap %s: %s", final, strerror(errno));
		svc_fsx_remove_tree(tmp);
		err = SVC_E_INTERNAL;
		goto done;
	}
	p = svc_dbv_str(id);
	if ((err = svc_db_run(req->ctx->db, STMT_PROJECT_SET_PUBLISHED, &p, 1, NULL, NULL)) < 0)
		goto done;
	if ((err = svc_project_load(req, id, SVC_ACT_READ, &after)) < 0)
		goto done;
	site_url(cfg, slug, url, sizeof url);
	body = json_object_new_object();
	json_object_object_add(body, "url", json_object_new_string(url));
	svc_json_add_str(body, "slug", slug);
	svc_json_add_time(body, "publishedAt", svc_rows_get(after, 0, PCOL_PUBLISHED));
	json_object_object_add(body, "project", svc_project_json(after, 0));
	svc_resp_json(resp, 200, body);
done:
	svc_rows_free(after);
	svc_rows_free(rows);
	return err;
}

/* ---- chats ---- */

static struct json_object *chat_json(const struct svc_rows *rows, size_t r, const char *project_id)
{
	struct json_object *c = json_object_new_object();

	svc_json_add_str(c, "id", svc_rows_get(rows, r, 0));
	svc_json_add_str(c, "projectId", project_id);
	svc_json_add_str(c, "title", svc_rows_get(rows, r, 1));
	svc_json_add_str(c, "mode", svc_rows_get(rows, r, 2));
	svc_json_add_time(c, "createdAt", svc_rows_get(rows, r, 3));
	svc_json_add_time(c, "updatedAt", svc_rows_get(rows, r, 4));
	return c;
}

/* GET /projects/:projectId/chats: 200 {items} newest first; 403; 404. */
int svc_api_chats_list(struct svc_req *req, struct svc_resp *resp)
{
	const char *id = svc_req_param(req, "projectId");
	struct svc_rows *rows = NULL;
	struct json_object *body, *items;
	struct svc_dbv p;
	size_t r;
	int err;

	if ((err = svc_project_load(req, id, SVC_ACT_READ, &rows)) < 0)
		return err;
	svc_rows_free(rows);
	rows = NULL;
	p = svc_dbv_str(id);
	if ((err = svc_db_run(req->ctx->db, STMT_CHAT_LIST, &p, 1, &rows, NULL)) < 0)
		return err;
	body = json_object_new_object();
	items = json_object_new_array();
	for (r = 0; rows && r < rows->nrows; r++)
		json_object_array_add(items, chat_json(rows, r, id));
	json_object_object_add(body, "items", items);
	svc_rows_free(rows);
	return svc_resp_json(resp, 200, body);
}

/* POST /projects/:projectId/chats {mode, title?}: 201 chat; 400; 403; 404. */
int svc_api_chats_create(struct svc_req *req, struct svc_resp *resp)
{
	static const struct svc_field fields[] = {
		{ "mode", SVC_V_TEXT, SVC_F_REQUIRED, 1, 32, NULL },
		{ "title", SVC_V_STR, SVC_F_NULLABLE, 0, 200, NULL },
	};
	const char *id = svc_req_param(req, "projectId"), *field, *mode, *title, *m;
	struct svc_rows *rows = NULL;
	struct svc_dbv p[5];
	char msg[256], chat_id[37];
	int err;

	if ((err = svc_project_load(req, id, SVC_ACT_WRITE, &rows)) < 0)
		return err;
	svc_rows_free(rows);
	rows = NULL;
	if ((err = svc_json_validate(req->json, fields, 2, &field, msg, sizeof msg)) < 0)
		return svc_resp_error(resp, err, field, "%s", msg);
	mode = svc_json_str(req->json, "mode");
	for (m = mode; *m; m++)
		if (!((*m >= 'a' && *m <= 'z') || (*m >= '0' && *m <= '9') || *m == '-' || *m == '_'))
			return svc_resp_error(resp, SVC_E_VALIDATION, "mode",
					      "mode may hold only a-z, 0-9, '-' and '_'");
	title = svc_json_str(req->json, "title");
	if (title && svc_is_blank(title))
		title = NULL;
	if (svc_uuid_v4(chat_id) < 0)
		return SVC_E_INTERNAL;
	p[0] = svc_dbv_str(chat_id);
	p[1] = svc_dbv_str(id);
	p[2] = svc_dbv_str(title);
	p[3] = svc_dbv_str(mode);
	p[4] = svc_dbv_str(req->user_id);
	if ((err = svc_db_run(req->ctx->db, STMT_CHAT_INSERT, p, 5, NULL, NULL)) < 0)
		return err;
	p[0] = svc_dbv_str(chat_id);
	p[1] = svc_dbv_str(id);
	if ((err = svc_db_run(req->ctx->db, STMT_CHAT_GET, p, 2, &rows, NULL)) < 0)
		return err;
	if (!rows || rows->nrows != 1) {
		svc_rows_free(rows);
		return SVC_E_INTERNAL;
	}
	svc_resp_json(resp, 201, chat_json(rows, 0, id));
	svc_rows_free(rows);
	return 0;
}
