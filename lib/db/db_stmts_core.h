/* db_stmts_core.h: statements of sign-up, projects, chats and migrations (issue 2). Included by db_stmts.h only. */
SVC_STMT(STMT_USER_INSERT,
	"INSERT INTO users (id, email, password_hash, display_name, created_at, updated_at) "
	"VALUES (?, ?, ?, ?, " NOW ", " NOW ")")
SVC_STMT(STMT_USER_BY_EMAIL,
	"SELECT id, email, display_name, password_hash, email_verified_at IS NOT NULL FROM users WHERE email = ?")
SVC_COLS(UECOL_ID, UECOL_EMAIL, UECOL_NAME, UECOL_PASSWORD_HASH, UECOL_VERIFIED)
/* the address was shown to be the user's (schema/009_email_verified.sql) */
SVC_STMT(STMT_USER_EMAIL_VERIFIED,
	"UPDATE users SET email_verified_at = COALESCE(email_verified_at, " NOW ") WHERE id = ?")
SVC_STMT(STMT_USER_BY_ID,
	"SELECT id, email, display_name, " TS("created_at") ", is_platform_admin FROM users WHERE id = ?")
SVC_COLS(UCOL_ID, UCOL_EMAIL, UCOL_NAME, UCOL_CREATED, UCOL_ADMIN)
SVC_STMT(STMT_WORKSPACE_INSERT,
	"INSERT INTO workspaces (id, name, kind, created_by, created_at, updated_at) "
	"VALUES (?, ?, ?, ?, " NOW ", " NOW ")")
SVC_STMT(STMT_MEMBER_INSERT,
	"INSERT INTO workspace_members (workspace_id, user_id, role, created_at) VALUES (?, ?, ?, " NOW ")")
SVC_STMT(STMT_USER_WORKSPACES,
	"SELECT w.id, w.name, w.kind, m.role FROM workspace_members m JOIN workspaces w ON w.id = m.workspace_id "
	"WHERE m.user_id = ? ORDER BY w.kind = 'personal' DESC, w.created_at, w.id")
SVC_COLS(UWCOL_ID, UWCOL_NAME, UWCOL_KIND, UWCOL_ROLE)
SVC_STMT(STMT_WORKSPACE_ROLE,
	"SELECT w.id, m.role FROM workspaces w LEFT JOIN workspace_members m "
	"ON m.workspace_id = w.id AND m.user_id = ? WHERE w.id = ?")
SVC_COLS(WRCOL_ID, WRCOL_ROLE)
SVC_STMT(STMT_FOLDER_IN_WORKSPACE,
	"SELECT id FROM folders WHERE id = ? AND workspace_id = ?")
SVC_COLS(FWCOL_ID)
SVC_STMT(STMT_PROJECT_INSERT,
	"INSERT INTO projects (id, workspace_id, folder_id, slug, name, description, template, visibility, "
	"created_by, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, " NOW ", " NOW ")")
SVC_STMT(STMT_PROJECT_UPDATE,
	"UPDATE projects SET name = ?, description = ?, visibility = ?, folder_id = ?, updated_at = " NOW
	" WHERE id = ? AND deleted_at IS NULL")
SVC_STMT(STMT_PROJECT_SOFT_DELETE,
	"UPDATE projects SET deleted_at = " NOW " WHERE id = ? AND deleted_at IS NULL")
SVC_STMT(STMT_PROJECT_HARD_DELETE,
	"DELETE FROM projects WHERE id = ?")
SVC_STMT(STMT_PROJECT_SET_PUBLISHED,
	"UPDATE projects SET published_at = " NOW ", updated_at = " NOW " WHERE id = ?")
SVC_STMT(STMT_PROJECT_TOUCH,
	"UPDATE projects SET updated_at = " NOW " WHERE id = ?")
SVC_STMT(STMT_CHAT_INSERT,
	"INSERT INTO chats (id, project_id, title, mode, created_by, created_at, updated_at) "
	"VALUES (?, ?, ?, ?, ?, " NOW ", " NOW ")")
SVC_STMT(STMT_CHAT_LIST,
	"SELECT id, title, mode, " TS("created_at") ", " TS("updated_at") " FROM chats "
	"WHERE project_id = ? ORDER BY updated_at DESC, id DESC LIMIT 500")
SVC_STMT(STMT_CHAT_GET,
	"SELECT id, title, mode, " TS("created_at") ", " TS("updated_at") " FROM chats "
	"WHERE id = ? AND project_id = ?")
/* the columns of STMT_CHAT_LIST and STMT_CHAT_GET */
SVC_COLS(CCOL_ID, CCOL_TITLE, CCOL_MODE, CCOL_CREATED, CCOL_UPDATED)
SVC_STMT(STMT_CHAT_TOUCH,
	"UPDATE chats SET updated_at = " NOW ", title = COALESCE(title, ?) WHERE id = ?")
SVC_STMT(STMT_EVENT_INSERT,
	"INSERT INTO chat_events (chat_id, turn_id, type, payload, created_at) VALUES (?, ?, ?, ?, " NOW ")")
SVC_STMT(STMT_EVENT_PAGE,
	"SELECT id, type, payload, " TS("created_at") ", turn_id FROM chat_events "
	"WHERE chat_id = ? AND id < ? ORDER BY id DESC LIMIT ?")
SVC_COLS(ECOL_ID, ECOL_TYPE, ECOL_PAYLOAD, ECOL_CREATED, ECOL_TURN)
SVC_STMT(STMT_EVENT_HISTORY,
	"SELECT type, payload FROM (SELECT id, type, payload FROM chat_events WHERE chat_id = ? "
	"AND type IN ('user.message', 'assistant.message') ORDER BY id DESC LIMIT 100) t ORDER BY id")
SVC_COLS(EHCOL_TYPE, EHCOL_PAYLOAD)
SVC_STMT(STMT_GEN_CLEAR_STALE,
	"DELETE FROM chat_generations WHERE chat_id = ? AND heartbeat_at < UTC_TIMESTAMP(3) - INTERVAL 90 SECOND")
SVC_STMT(STMT_GEN_INSERT,
	"INSERT INTO chat_generations (chat_id, turn_id, user_id, workspace_id, started_at, heartbeat_at) "
	"VALUES (?, ?, ?, ?, " NOW ", " NOW ")")
/* the live generations (heartbeat within 90 s, as STMT_GEN_CLEAR_STALE) of a user and of a workspace */
SVC_STMT(STMT_GEN_COUNT_USER,
	"SELECT COUNT(*) FROM chat_generations WHERE user_id = ? AND heartbeat_at >= UTC_TIMESTAMP(3) - INTERVAL 90 SECOND")
SVC_STMT(STMT_GEN_COUNT_WORKSPACE,
	"SELECT COUNT(*) FROM chat_generations WHERE workspace_id = ? "
	"AND heartbeat_at >= UTC_TIMESTAMP(3) - INTERVAL 90 SECOND")
/* the live generations of a project's chats: a push waits for them (svc_agent_project_busy, docs/git.md) */
SVC_STMT(STMT_GEN_COUNT_PROJECT,
	"SELECT COUNT(*) FROM chat_generations g JOIN chats c ON c.id = g.chat_id WHERE c.project_id = ? "
	"AND g.heartbeat_at >= UTC_TIMESTAMP(3) - INTERVAL 90 SECOND")
/* the column of STMT_GEN_COUNT_USER, STMT_GEN_COUNT_WORKSPACE and STMT_GEN_COUNT_PROJECT */
SVC_COLS(GNCOL_COUNT)
/* serialises the cap checks of one user and of one workspace (taken in this order): a write, not
 * SELECT ... FOR UPDATE, so that on Galera two nodes' claims conflict at certification (016_galera.sql) */
SVC_STMT(STMT_GEN_LOCK_USER, "UPDATE users SET turn_claims = turn_claims + 1 WHERE id = ?")
SVC_STMT(STMT_GEN_LOCK_WORKSPACE, "UPDATE workspaces SET turn_claims = turn_claims + 1 WHERE id = ?")
SVC_STMT(STMT_GEN_HEARTBEAT,
	"UPDATE chat_generations SET heartbeat_at = " NOW " WHERE chat_id = ? AND turn_id = ?")
SVC_STMT(STMT_GEN_STOP_REQUESTED,
	"SELECT stop_requested FROM chat_generations WHERE chat_id = ? AND turn_id = ?")
SVC_COLS(GSCOL_STOP_REQUESTED)
SVC_STMT(STMT_GEN_REQUEST_STOP,
	"UPDATE chat_generations SET stop_requested = 1 WHERE chat_id = ?")
SVC_STMT(STMT_GEN_DELETE,
	"DELETE FROM chat_generations WHERE chat_id = ? AND turn_id = ?")
SVC_STMT(STMT_MIGRATION_APPLIED,
	"SELECT name FROM schema_migrations ORDER BY name")
SVC_COLS(MGCOL_NAME)
SVC_STMT(STMT_MIGRATION_RECORD,
	"INSERT INTO schema_migrations (name, applied_at) VALUES (?, " NOW ")")
