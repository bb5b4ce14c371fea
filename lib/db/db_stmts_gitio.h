/* db_stmts_gitio.h: statements of Git in and out (issue 30, schema/025_git_io.sql): imports from a Git URL, a project's mirror. Included by db_stmts.h only. */

SVC_STMT(STMT_GITIO_IMPORT_INSERT,
	"INSERT INTO project_imports (project_id, state, url, ref, username, token_sealed, created_by, created_at, updated_at) "
	"VALUES (?, 'importing', ?, ?, ?, ?, ?, " NOW ", " NOW ")")
SVC_STMT(STMT_GITIO_IMPORT_GET,
	"SELECT i.state, i.url, i.ref, i.username, i.token_sealed, i.created_by, p.workspace_id FROM project_imports i "
	"JOIN projects p ON p.id = i.project_id WHERE i.project_id = ?")
SVC_COLS(GICOL_STATE, GICOL_URL, GICOL_REF, GICOL_USERNAME, GICOL_TOKEN, GICOL_CREATED_BY, GICOL_WORKSPACE)
/* the end of an import: done, or failed with its reason (?); the token is forgotten either way */
SVC_STMT(STMT_GITIO_IMPORT_END,
	"UPDATE project_imports SET state = ?, error = ?, token_sealed = NULL, updated_at = " NOW " WHERE project_id = ?")

/* a project's mirror (PUT /projects/:id/git/remote): a new remote forgets the last push's result */
SVC_STMT(STMT_GITIO_REMOTE_PUT,
	"INSERT INTO project_git_remotes (project_id, url, branch, username, token_sealed, created_by, created_at, updated_at) "
	"VALUES (?, ?, ?, ?, ?, ?, " NOW ", " NOW ") ON DUPLICATE KEY UPDATE url = VALUES(url), branch = VALUES(branch), "
	"username = VALUES(username), token_sealed = VALUES(token_sealed), last_push_at = NULL, last_push_ok = NULL, "
	"last_push_sha = NULL, last_push_message = NULL, updated_at = VALUES(updated_at)")
SVC_STMT(STMT_GITIO_REMOTE_GET,
	"SELECT r.url, r.branch, r.username, r.token_sealed, " TS("r.last_push_at") ", r.last_push_ok, r.last_push_sha, "
	"r.last_push_message, " TS("r.updated_at") ", p.workspace_id FROM project_git_remotes r "
	"JOIN projects p ON p.id = r.project_id WHERE r.project_id = ?")
SVC_COLS(GRCOL_URL, GRCOL_BRANCH, GRCOL_USERNAME, GRCOL_TOKEN, GRCOL_PUSH_AT, GRCOL_PUSH_OK, GRCOL_PUSH_SHA,
	GRCOL_PUSH_MESSAGE, GRCOL_UPDATED, GRCOL_WORKSPACE)
SVC_STMT(STMT_GITIO_REMOTE_DELETE,
	"DELETE FROM project_git_remotes WHERE project_id = ?")
SVC_STMT(STMT_GITIO_REMOTE_EXISTS,
	"SELECT 1 FROM project_git_remotes WHERE project_id = ?")
SVC_COLS(GXCOL_ONE)
/* the result of a push: ok (0/1), the sha pushed, git's message */
SVC_STMT(STMT_GITIO_REMOTE_RESULT,
	"UPDATE project_git_remotes SET last_push_at = " NOW ", last_push_ok = ?, last_push_sha = ?, "
	"last_push_message = ? WHERE project_id = ?")
