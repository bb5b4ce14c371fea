/* project.c: a project or workspace loaded for a caller with its permission check, its JSON and directory, project creation, the queued first prompt. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "auth/internal.h"
#include "core/err.h"
#include "core/fsx.h"
#include "core/json.h"
#include "core/log.h"
#include "core/util.h"
#include "db/jobs.h"
#include "project/gitio.h"
#include "project/project.h"
#include "project/quota.h"
#include "project/preview_build.h"
#include "project/repo.h"
#include "project/thumbnail.h"

/* ---- loading, permissions, JSON ---- */

int svc_project_check(const struct svc_caller *c, const struct svc_rows *rows, enum svc_action action)
{
	struct svc_perm_subject s;
	struct svc_perm_object o = { 0 };

	svc_caller_subject(c, svc_rows_get(rows, 0, PCOL_EXTRA), svc_rows_get(rows, 0, PCOL_ADMIN), &s);
	o.visibility = svc_rows_get(rows, 0, PCOL_VISIBILITY);
	o.created_by = svc_rows_get(rows, 0, PCOL_CREATED_BY);
	return svc_perm_check(&s, action, &o);
}

int svc_project_load_state(const struct svc_caller *c, const char *id, enum svc_action action, int deleted,
			   struct svc_rows **out)
{
	struct svc_dbv p[5];
	struct svc_rows *rows = NULL;
	int err;

	if (!svc_uuid_valid(id))
		return SVC_E_NOT_FOUND;
	p[0] = svc_dbv_str(c->user_id);
	p[1] = svc_dbv_str(c->user_id);
	p[2] = svc_dbv_str(id);
	p[3] = svc_dbv_i64(deleted);
	p[4] = svc_dbv_i64(deleted);
	if ((err = svc_db_run(c->db, STMT_PROJECT_GET_STATE, p, 5, &rows, NULL)) < 0)
		return err;
	if (!rows || rows->nrows != 1) {
		svc_rows_free(rows);
		return SVC_E_NOT_FOUND;
	}
	if ((err = svc_project_check(c, rows, action)) < 0) {
		svc_rows_free(rows);
		return err;
	}
	*out = rows;
	return 0;
}

int svc_project_load(const struct svc_caller *c, const char *id, enum svc_action action, struct svc_rows **out)
{
	return svc_project_load_state(c, id, action, 0, out);
}

struct json_object *svc_project_json(const struct svc_rows *rows, size_t r)
{
	struct json_object *o = json_object_new_object();
	const char *import_state;

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
	/* git-io: an import from a Git URL under way or failed (docs/git.md "Import"); null otherwise */
	import_state = svc_rows_get(rows, r, PCOL_IMPORT_STATE);
	if (import_state && strcmp(import_state, "done") == 0)
		import_state = NULL;
	svc_json_add_str(o, "importState", import_state);
	svc_json_add_str(o, "importError", import_state ? svc_rows_get(rows, r, PCOL_IMPORT_ERROR) : NULL);
	return o;
}

int svc_workspace_load(const struct svc_caller *c, const char *wid, enum svc_action action,
		       const struct svc_perm_object *o, struct svc_rows **out)
{
	struct svc_perm_subject s;
	struct svc_perm_object kind_only = { 0 };
	struct svc_dbv p[3];
	struct svc_rows *rows = NULL;
	int err;

	if (!svc_uuid_valid(wid))
		return SVC_E_NOT_FOUND;
	p[0] = svc_dbv_str(c->user_id);
	p[1] = svc_dbv_str(c->user_id);
	p[2] = svc_dbv_str(wid);
	if ((err = svc_db_run(c->db, STMT_WS_GET, p, 3, &rows, NULL)) < 0)
		return err;
	if (!rows || rows->nrows != 1) {
		svc_rows_free(rows);
		return SVC_E_NOT_FOUND;
	}
	svc_caller_subject(c, svc_rows_get(rows, 0, WCOL_ROLE), svc_rows_get(rows, 0, WCOL_ADMIN), &s);
	kind_only.kind = svc_rows_get(rows, 0, WCOL_KIND);
	if ((err = svc_perm_check(&s, action, o ? o : &kind_only)) < 0) {
		svc_rows_free(rows);
		return err;
	}
	*out = rows;
	return 0;
}

int svc_workspace_role(const struct svc_caller *c, const char *wid, char *role)
{
	struct svc_rows *rows = NULL;
	const char *r;
	int err;

	if ((err = svc_workspace_load(c, wid, SVC_ACT_PROJECT_CREATE, NULL, &rows)) < 0)
		return err;
	r = svc_rows_get(rows, 0, WCOL_ROLE);
	snprintf(role, 16, "%s", r ? r : "");
	svc_rows_free(rows);
	return 0;
}

/* ---- creating a project ---- */

void svc_project_author(struct svc_db *db, const char *user_id, char *name, size_t nmax, char *email, size_t emax)
{
	struct svc_dbv p = svc_dbv_str(user_id);
	struct svc_rows *rows = NULL;

	snprintf(name, nmax, "svc");
	snprintf(email, emax, "svc@localhost");
	if (svc_db_run(db, STMT_USER_BY_ID, &p, 1, &rows, NULL) == 0 && rows && rows->nrows == 1) {
		const char *dn = svc_rows_get(rows, 0, UCOL_NAME), *em = svc_rows_get(rows, 0, UCOL_EMAIL);
		snprintf(name, nmax, "%s", dn ? dn : em);
		snprintf(email, emax, "%s", em);
	}
	svc_rows_free(rows);
}

int svc_project_commit_change(const struct svc_caller *c, const char *id, const char *dir, const char *msg,
			      char *out_sha, int *out_committed)
{
	char aname[256], aemail[256];
	int err;

	*out_committed = 0;
	svc_project_author(c->db, c->user_id, aname, sizeof aname, aemail, sizeof aemail);
	if ((err = svc_repo_commit_all(dir, msg, aname, aemail, out_sha, out_committed)) < 0 || !*out_committed)
		return err;
	svc_project_changed(c, id);
	return 0;
}

void svc_project_changed(const struct svc_caller *c, const char *id)
{
	struct svc_dbv p = svc_dbv_str(id);

	svc_db_run(c->db, STMT_PROJECT_TOUCH, &p, 1, NULL, NULL);
	svc_internal_notify_files(c->cfg, c->db, id); /* the live document takes the change (svc-wsd) */
	svc_thumbnail_request(c->db, id);      /* svc-worker renders it again, off the request */
	svc_preview_build_request(c->db, c->cfg, id); /* and builds a package.json project's preview */
	svc_gitio_mirror_queue(c->db, id);     /* and pushes it to the project's mirror, when it has one */
}

void svc_project_slug(const char *name, char *out, size_t max)
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

/* Whether template `t` exists; its directory into dir (max bytes). */
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

int svc_chat_insert(struct svc_db *db, const char *chat_id, const char *project_id, const char *title,
		    const char *mode, const char *user_id)
{
	struct svc_dbv p[5];

	p[0] = svc_dbv_str(chat_id);
	p[1] = svc_dbv_str(project_id);
	p[2] = svc_dbv_str(title);
	p[3] = svc_dbv_str(mode);
	p[4] = svc_dbv_str(user_id);
	return svc_db_run(db, STMT_CHAT_INSERT, p, 5, NULL, NULL);
}

int svc_project_settle(const char *tmpdir, const char *pdir, int *moved)
{
	if (*moved)
		return 0; /* an earlier run of the transaction moved it */
	if (rename(tmpdir, pdir) < 0) {
		svc_log_error("projects: rename %s: %s", tmpdir, strerror(errno));
		return SVC_E_INTERNAL;
	}
	*moved = 1;
	return 0;
}

int svc_project_insert(struct svc_db *db, const char *id, const struct svc_project_new *np)
{
	char slug[64], base[48], suffix[9];
	struct svc_dbv p[9];
	int err = SVC_E_CONFLICT, tries;

	svc_project_slug(np->name, base, sizeof base);
	snprintf(slug, sizeof slug, "%s", base);
	for (tries = 0; tries < 8; tries++) {
		p[0] = svc_dbv_str(id);
		p[1] = svc_dbv_str(np->workspace_id);
		p[2] = svc_dbv_str(np->folder_id);
		p[3] = svc_dbv_str(slug);
		p[4] = svc_dbv_str(np->name);
		p[5] = svc_dbv_str(np->description);
		p[6] = svc_dbv_str(np->template_name);
		p[7] = svc_dbv_str(np->visibility);
		p[8] = svc_dbv_str(np->user_id);
		err = svc_db_run(db, STMT_PROJECT_INSERT, p, 9, NULL, NULL);
		if (err != SVC_E_CONFLICT)
			break;
		if (svc_random_hex(suffix, tries < 4 ? 2 : 4) < 0)
			return SVC_E_INTERNAL;
		snprintf(slug, sizeof slug, "%s-%s", base, suffix);
	}
	return err;
}

/* The rows of a new project and its files moved into place, a transaction of svc_db_tx(). */
struct project_creation {
	const struct svc_config *cfg;
	const struct svc_project_new *np;
	const char *id, *chat_id, *tmpdir, *pdir;
	int moved;
};

static int create_tx(struct svc_db *db, void *arg)
{
	struct project_creation *c = arg;
	int err;

	/* the workspace's project quota, counted with its row locked in this transaction */
	if ((err = svc_quota_projects_check(db, c->cfg, c->np->workspace_id, NULL, 0)) < 0 ||
	    (err = svc_project_insert(db, c->id, c->np)) < 0 ||
	    (err = svc_chat_insert(db, c->chat_id, c->id, "Main chat", "build", c->np->user_id)) < 0)
		return err;
	/* the first prompt, when given, is queued for svc-worker in this transaction */
	if ((err = svc_project_queue_first_prompt(db, c->id, c->chat_id, c->np->user_id, c->np->prompt)) < 0)
		return err;
	if (c->np->in_tx && (err = c->np->in_tx(db, c->id, c->np->in_tx_arg)) < 0)
		return err;
	return svc_project_settle(c->tmpdir, c->pdir, &c->moved);
}

int svc_project_create(struct svc_db *db, const struct svc_config *cfg, const struct svc_project_new *np,
		       const char **out_field, char *msg, size_t msgmax, char *out_id, char *out_chat_id)
{
	const char *tmpl = np->template_name, *folder = np->folder_id;
	char id[37], chat_id[37], sha[41];
	char tdir[2048], pdir[2048], tmpdir[2100], projects[2048], aname[256], aemail[256], cmsg[128];
	struct svc_rows *rows = NULL;
	struct project_creation c;
	struct svc_dbv p[9];
	int err, moved = 0;

	if (np->source_dir)
		snprintf(tdir, sizeof tdir, "%s", np->source_dir);
	else if (!template_valid(cfg, tmpl, tdir, sizeof tdir)) {
		*out_field = "template";
		snprintf(msg, msgmax, "unknown template %.64s", tmpl);
		return SVC_E_VALIDATION;
	}
	if (folder) {
		p[0] = svc_dbv_str(folder);
		p[1] = svc_dbv_str(np->workspace_id);
		if ((err = svc_db_run(db, STMT_FOLDER_IN_WORKSPACE, p, 2, &rows, NULL)) < 0)
			return err;
		err = rows && rows->nrows == 1 ? 0 : SVC_E_VALIDATION;
		svc_rows_free(rows);
		rows = NULL;
		if (err < 0) {
			*out_field = "folderId";
			snprintf(msg, msgmax, "folderId is not a folder of this workspace");
			return err;
		}
	}
	if (svc_uuid_v4(id) < 0 || svc_uuid_v4(chat_id) < 0)
		return SVC_E_INTERNAL;

	/* Files first, in a temporary directory: nothing is visible until the rename. */
	snprintf(projects, sizeof projects, "%s/projects", cfg->data_dir);
	if ((err = svc_project_mkdirs(projects)) < 0)
		return err;
	if ((err = svc_project_dir(cfg, id, pdir, sizeof pdir)) < 0)
		return err;
	snprintf(tmpdir, sizeof tmpdir, "%s/.tmp-%s", projects, id);
	if ((err = svc_fsx_copy_tree(tdir, tmpdir)) < 0)
		goto done;
	svc_project_author(db, np->user_id, aname, sizeof aname, aemail, sizeof aemail);
	if (np->commit_message)
		snprintf(cmsg, sizeof cmsg, "%s", np->commit_message);
	else
		snprintf(cmsg, sizeof cmsg, "Create project from template %s", tmpl);
	if ((err = svc_repo_init(tmpdir, cmsg, aname, aemail, sha)) < 0)
		goto done;

	c.cfg = cfg;
	c.np = np;
	c.id = id;
	c.chat_id = chat_id;
	c.tmpdir = tmpdir;
	c.pdir = pdir;
	c.moved = 0;
	err = svc_db_tx(db, create_tx, &c);
	moved = c.moved;
	if (err < 0)
		goto done;
	memcpy(out_id, id, 37);
	memcpy(out_chat_id, chat_id, 37);
done:
	if (err < 0)
		svc_fsx_remove_tree(moved ? pdir : tmpdir);
	return err;
}

/* ---- the first prompt ---- */

int svc_chat_event_store(struct svc_db *db, const char *chat_id, const char *turn_id, const char *type,
			 struct json_object *event)
{
	struct svc_dbv p[4];

	p[0] = svc_dbv_str(chat_id);
	p[1] = svc_dbv_str(turn_id);
	p[2] = svc_dbv_str(type);
	p[3] = svc_dbv_str(json_object_to_json_string_ext(event, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
	return svc_db_run(db, STMT_EVENT_INSERT, p, 4, NULL, NULL);
}

int svc_project_queue_first_prompt(struct svc_db *db, const char *project_id, const char *chat_id,
				   const char *user_id, const char *text)
{
	struct json_object *job = NULL, *ev = NULL;
	char turn_id[37];
	int err;

	if (!text || svc_is_blank(text))
		return 0;
	if ((err = svc_uuid_v4(turn_id)) < 0)
		return err;
	ev = json_object_new_object();
	json_object_object_add(ev, "text", json_object_new_string(text));
	json_object_object_add(ev, "attachments", json_object_new_array());
	json_object_object_add(ev, "type", json_object_new_string("user.message"));
	if ((err = svc_chat_event_store(db, chat_id, turn_id, "user.message", ev)) < 0)
		goto done;
	job = json_object_new_object();
	svc_json_add_str(job, "projectId", project_id);
	svc_json_add_str(job, "chatId", chat_id);
	svc_json_add_str(job, "userId", user_id);
	svc_json_add_str(job, "turnId", turn_id);
	svc_json_add_str(job, "text", text);
	err = svc_jobs_enqueue(db, SVC_JOB_FIRST_PROMPT, json_object_to_json_string_ext(job, JSON_C_TO_STRING_PLAIN), 3,
			       NULL);
done:
	json_object_put(ev);
	json_object_put(job);
	return err;
}
