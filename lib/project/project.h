/* project.h: loading a project or workspace for a caller with its permission check, its JSON and directory, creating a project, queuing its first prompt. */
#ifndef SVC_PROJECT_H
#define SVC_PROJECT_H

#include <stddef.h>

#include <json-c/json.h>

#include "auth/caller.h"
#include "auth/perm.h"
#include "core/config.h"
#include "db/db.h"
#include "project/paths.h"

/* Project rows use PCOL_* and workspace rows WCOL_*, named beside their SQL in lib/db/db_stmts*.h. */

/*
 * Loads project `id` (a well-formed UUID) for caller `c` (its db, user_id and
 * scopes are read) and checks `action` with svc_perm_check(). On success *out holds one row (PCOL_* columns, with
 * the caller's role in PCOL_EXTRA, NULL for none, and "1" in PCOL_ADMIN for
 * a platform admin) that the caller frees with svc_rows_free().
 * Errors: SVC_E_NOT_FOUND (unknown or soft-deleted), SVC_E_UNAUTHORIZED
 * (anonymous and not allowed), SVC_E_FORBIDDEN, DB errors.
 */
int svc_project_load(const struct svc_caller *c, const char *id, enum svc_action action, struct svc_rows **out);

/*
 * As svc_project_load(), for a soft-deleted project when `deleted` is 1, or
 * for either state when `deleted` is -1.
 */
int svc_project_load_state(const struct svc_caller *c, const char *id, enum svc_action action, int deleted,
			   struct svc_rows **out);

/*
 * Checks `action` for caller `c` (user_id and scopes) on the project in row 0
 * of `rows` (as svc_project_load() returns it). Returns 0, SVC_E_UNAUTHORIZED
 * or SVC_E_FORBIDDEN.
 */
int svc_project_check(const struct svc_caller *c, const struct svc_rows *rows, enum svc_action action);

/* Builds the Project JSON of the spec's Project table from row `r` of `rows`. */
struct json_object *svc_project_json(const struct svc_rows *rows, size_t r);

/*
 * Loads workspace `wid` for caller `c` (db, user_id, scopes) and checks `action` (with `o` as the
 * object, or only the workspace's kind when o is NULL). *out holds one row
 * (WCOL_* columns) freed with svc_rows_free(). Errors: SVC_E_NOT_FOUND (no
 * such workspace, or `wid` not a UUID), SVC_E_FORBIDDEN, DB errors.
 */
int svc_workspace_load(const struct svc_caller *c, const char *wid, enum svc_action action,
		       const struct svc_perm_object *o, struct svc_rows **out);

/*
 * Looks up caller `c`'s role in workspace `wid` and checks that the caller
 * may create projects there. Writes "member", "admin" or "owner" into role
 * (16 bytes; "" for a platform admin who is not a member). Errors:
 * SVC_E_NOT_FOUND (no such workspace), SVC_E_FORBIDDEN (not allowed).
 */
int svc_workspace_role(const struct svc_caller *c, const char *wid, char *role);

/*
 * The name and e-mail of user `user_id` for Git commits: the display name
 * (else the e-mail) into name (nmax bytes) and the e-mail into email (emax
 * bytes), both cut to fit; "svc" and "svc@localhost" when the user cannot be
 * read. Never fails.
 */
void svc_project_author(struct svc_db *db, const char *user_id, char *name, size_t nmax, char *email, size_t emax);

/*
 * Commits everything in project `id`'s working tree (directory `dir`) as one
 * version with message `msg`, authored by caller `c`'s user (svc_project_author;
 * c's db and cfg are used for what follows).
 * When a commit was made (*out_committed 1, its sha in out_sha, 41 bytes) the
 * project's updatedAt is touched, svc-wsd is told to take the change into the
 * live document (svc_internal_notify_files) and a thumbnail is requested.
 * *out_committed 0 when nothing changed. Errors: those of
 * svc_repo_commit_all() (SVC_E_INTERNAL).
 */
int svc_project_commit_change(const struct svc_caller *c, const char *id, const char *dir, const char *msg,
			      char *out_sha, int *out_committed);

/*
 * What follows a new version of project `id` on main, however it came (a
 * commit of svc_project_commit_change(), a push over smart HTTP,
 * lib/project/githttp.h): its updatedAt is touched, svc-wsd is told to take
 * the working tree into the live document (svc_internal_notify_files: a
 * three-way merge with unsaved edits), a thumbnail is requested and a
 * package.json project's preview build queued (svc_preview_build_request).
 * Uses c's db and cfg. Failures are logged by the callees, never returned.
 */
void svc_project_changed(const struct svc_caller *c, const char *id);

/*
 * Makes a URL-safe slug from `name` (UTF-8) into out (max bytes): runs of
 * [a-z0-9] (ASCII letters lowered) joined by single '-', at most 40
 * characters, "project" when nothing is left.
 */
void svc_project_slug(const char *name, char *out, size_t max);

/* A new project, as svc_project_create() takes it. Strings are borrowed. */
struct svc_project_new {
	const char *workspace_id;   /* the workspace, already checked for SVC_ACT_PROJECT_CREATE */
	const char *user_id;        /* the creator */
	const char *name;           /* 1 to 128 characters */
	const char *description;    /* NULL for none */
	const char *template_name;  /* a directory of SVC_TEMPLATES_DIR: [a-z0-9-], 1 to 64 bytes */
	const char *folder_id;      /* a folder of the workspace, NULL for none */
	const char *visibility;     /* "private", "workspace" or "public" */
	const char *prompt;         /* the first prompt, NULL or blank for none */
	/* git-io (docs/git.md "Import"): files from elsewhere instead of a template, and writes of its own */
	const char *source_dir;     /* NULL: the template's files; else this directory's files (template_name may be NULL) */
	const char *commit_message; /* the first commit's message; NULL: "Create project from template <name>" */
	int (*in_tx)(struct svc_db *db, const char *id, void *arg); /* NULL, or more writes of the creating transaction */
	void *in_tx_arg;
};

/*
 * Inserts the row of project `id` (a UUID) as `np` says (prompt unused) with
 * a slug made from np->name (svc_project_slug()); while the slug is taken,
 * up to seven more tries with "-" and a random suffix of 4 hex digits (8
 * after four tries). Call it inside the transaction that creates the project.
 * Returns 0. Errors: SVC_E_CONFLICT (no free slug), SVC_E_INTERNAL (no
 * random bytes), DB errors.
 */
int svc_project_insert(struct svc_db *db, const char *id, const struct svc_project_new *np);

/*
 * Inserts chat `chat_id` (a UUID) of project `project_id`, titled `title`
 * (NULL for none), in `mode` ("build", "plan", "chat" or a custom mode),
 * made by `user_id` (STMT_CHAT_INSERT). Returns 0 or DB errors.
 */
int svc_chat_insert(struct svc_db *db, const char *chat_id, const char *project_id, const char *title,
		    const char *mode, const char *user_id);

/*
 * The last step of a transaction (svc_db_tx()) that creates a project whose
 * files were prepared in `tmpdir`: renames `tmpdir` to `pdir` (the project's
 * directory, same file system) just before the COMMIT, so the directory and
 * the rows appear together. Sets *moved to 1 once the rename happened; a run
 * of the transaction again finds it moved and leaves it, and the caller's
 * clean-up removes `pdir` rather than `tmpdir` when the transaction failed.
 * Returns 0 or SVC_E_INTERNAL (rename failed; logged).
 */
int svc_project_settle(const char *tmpdir, const char *pdir, int *moved);

/*
 * Creates project `np` (spec "Project endpoints" rule 2): copies the
 * template into <data_dir>/projects/<id> with a first Git commit by the
 * creator, inserts the project row (a free slug made from the name; a short
 * random suffix when taken) and its "Main chat" in build mode, and queues the
 * first prompt (svc_project_queue_first_prompt()), all in one transaction;
 * the directory appears only once the rows are in. Writes the new project's
 * id and the chat's id (37 bytes each) into out_id and out_chat_id.
 * Errors: SVC_E_VALIDATION with *out_field ("template", "folderId") and msg
 * (msgmax bytes) saying why, for an unknown template or a folder not of the
 * workspace; SVC_E_INTERNAL (files); DB errors. On error nothing is left
 * behind.
 */
int svc_project_create(struct svc_db *db, const struct svc_config *cfg, const struct svc_project_new *np,
		       const char **out_field, char *msg, size_t msgmax, char *out_id, char *out_chat_id);

/* The job kind of a project's first prompt, run by svc-worker (lib/api/api_agent.h svc_chat_job_first_prompt()). */
#define SVC_JOB_FIRST_PROMPT "chat.first_prompt"

/*
 * Queues the first prompt of a new project (spec "Project endpoints" rule 2):
 * stores `text` as the chat's user.message event, so the timeline shows it at
 * once, and enqueues a SVC_JOB_FIRST_PROMPT job {projectId, chatId, userId,
 * turnId, text}. Call it inside the transaction that creates the project.
 * Blank text queues nothing and returns 0. Errors: DB errors.
 */
int svc_project_queue_first_prompt(struct svc_db *db, const char *project_id, const char *chat_id,
				   const char *user_id, const char *text);

/*
 * Stores one event of a chat's timeline: `event` (serialised as plain JSON)
 * of `type` for turn `turn_id` (a UUID) of chat `chat_id` (STMT_EVENT_INSERT).
 * Returns 0 or DB errors.
 */
int svc_chat_event_store(struct svc_db *db, const char *chat_id, const char *turn_id, const char *type,
			 struct json_object *event);

#endif
