/* db_stmts_workspaces.h: statements of workspaces, roles, folders and project listing (issue 6). Included by db_stmts.h only. */

/*
 * The read rule of lib/auth/perm.c in SQL, for the listing (keep the two in step;
 * tests/e2e/test_permissions.py compares list and get for every role and
 * visibility). Needs `m` joined as the caller's membership. Parameters: the
 * caller's platform-admin flag (0/1), the caller's user id.
 */
#define PROJECT_VISIBLE \
	"(? = 1 OR p.visibility = 'public' OR (m.role IS NOT NULL AND " \
	"(p.visibility <> 'private' OR m.role IN ('admin', 'owner') OR p.created_by = ?)))"

/*
 * Filters of GET /projects. Parameters: folder mode (0 any, 1 root, 2 one
 * folder) three times and the folder id; visibility (NULL = any) twice.
 */
#define PROJECT_FILTERS \
	" AND (? = 0 OR (? = 1 AND p.folder_id IS NULL) OR (? = 2 AND p.folder_id = ?))" \
	" AND (? IS NULL OR p.visibility = ?)"

/* Keyset page, newest first. Parameters: created_at text twice, id, limit. */
#define PROJECT_PAGE \
	" AND (p.created_at < ? OR (p.created_at = ? AND p.id < ?)) ORDER BY p.created_at DESC, p.id DESC LIMIT ?"

#define PROJECT_LIST_HEAD \
	"SELECT " PROJECT_COLS ", " TS("p.created_at") " FROM projects p " \
	"LEFT JOIN workspace_members m ON m.workspace_id = p.workspace_id AND m.user_id = ? " \
	"WHERE p.deleted_at IS NULL AND "

/* Parameters: user, workspace, admin flag, user, filters, [q,] page. */
SVC_STMT(STMT_PROJECT_LIST_WS,
	PROJECT_LIST_HEAD "p.workspace_id = ? AND " PROJECT_VISIBLE PROJECT_FILTERS PROJECT_PAGE)
SVC_STMT(STMT_PROJECT_LIST_WS_Q,
	PROJECT_LIST_HEAD "p.workspace_id = ? AND " PROJECT_VISIBLE PROJECT_FILTERS
	" AND MATCH (p.name, p.description) AGAINST (? IN BOOLEAN MODE)" PROJECT_PAGE)
/* Every workspace the caller belongs to. Parameters: user, admin flag, user, filters, [q,] page. */
SVC_STMT(STMT_PROJECT_LIST_MINE,
	PROJECT_LIST_HEAD "m.role IS NOT NULL AND " PROJECT_VISIBLE PROJECT_FILTERS PROJECT_PAGE)
SVC_STMT(STMT_PROJECT_LIST_MINE_Q,
	PROJECT_LIST_HEAD "m.role IS NOT NULL AND " PROJECT_VISIBLE PROJECT_FILTERS
	" AND MATCH (p.name, p.description) AGAINST (? IN BOOLEAN MODE)" PROJECT_PAGE)

/*
 * The trash (GET /projects?deleted=true): soft-deleted projects the caller
 * may restore (the delete rule of lib/auth/perm.c: a member's, not another
 * member's private one unless admin or owner; a platform admin's any, yet
 * only in workspaces listed), newest deletion first; the extra column is
 * deleted_at. Parameters as PROJECT_LIST_* (PROJECT_RESTORABLE takes the
 * admin flag and the user like PROJECT_VISIBLE); the page is by deleted_at.
 */
#define PROJECT_TRASH_HEAD \
	"SELECT " PROJECT_COLS ", " TS("p.deleted_at") " FROM projects p " \
	"LEFT JOIN workspace_members m ON m.workspace_id = p.workspace_id AND m.user_id = ? " \
	"WHERE p.deleted_at IS NOT NULL AND "
#define PROJECT_RESTORABLE \
	"(? = 1 OR (m.role IS NOT NULL AND " \
	"(p.visibility <> 'private' OR m.role IN ('admin', 'owner') OR p.created_by = ?)))"
#define PROJECT_TRASH_PAGE \
	" AND (p.deleted_at < ? OR (p.deleted_at = ? AND p.id < ?)) ORDER BY p.deleted_at DESC, p.id DESC LIMIT ?"
SVC_STMT(STMT_PROJECT_TRASH_WS,
	PROJECT_TRASH_HEAD "p.workspace_id = ? AND " PROJECT_RESTORABLE PROJECT_FILTERS PROJECT_TRASH_PAGE)
SVC_STMT(STMT_PROJECT_TRASH_MINE,
	PROJECT_TRASH_HEAD "m.role IS NOT NULL AND " PROJECT_RESTORABLE PROJECT_FILTERS PROJECT_TRASH_PAGE)

/*
 * One project with the caller's role and platform-admin flag. Parameters:
 * user, user, id, state (0 active, 1 soft-deleted, -1 either) twice.
 */
SVC_STMT(STMT_PROJECT_GET_STATE,
	"SELECT " PROJECT_COLS ", m.role, COALESCE(u.is_platform_admin, 0) FROM projects p "
	"LEFT JOIN workspace_members m ON m.workspace_id = p.workspace_id AND m.user_id = ? "
	"LEFT JOIN users u ON u.id = ? "
	"WHERE p.id = ? AND (? = -1 OR ? = (p.deleted_at IS NOT NULL))")
SVC_STMT(STMT_PROJECT_RESTORE,
	"UPDATE projects SET deleted_at = NULL, updated_at = " NOW " WHERE id = ? AND deleted_at IS NOT NULL")
SVC_STMT(STMT_PROJECT_SET_THUMBNAIL,
	"UPDATE projects SET thumbnail_url = ? WHERE id = ?")
SVC_STMT(STMT_CHAT_FIRST,
	"SELECT id, title, mode FROM chats WHERE project_id = ? ORDER BY created_at, id LIMIT 1")
SVC_COLS(CFCOL_ID, CFCOL_TITLE, CFCOL_MODE)
SVC_STMT(STMT_CHAT_EVENTS_COPY,
	"INSERT INTO chat_events (chat_id, turn_id, type, payload, created_at) "
	"SELECT ?, turn_id, type, payload, created_at FROM chat_events WHERE chat_id = ? ORDER BY id")

/* Workspaces. Parameters of STMT_WS_GET: user, user, workspace. */
SVC_STMT(STMT_WS_GET,
	"SELECT w.id, w.name, w.kind, " TS("w.created_at") ", " TS("w.updated_at") ", m.role, "
	"COALESCE((SELECT u.is_platform_admin FROM users u WHERE u.id = ?), 0) FROM workspaces w "
	"LEFT JOIN workspace_members m ON m.workspace_id = w.id AND m.user_id = ? WHERE w.id = ?")
SVC_COLS(WCOL_ID, WCOL_NAME, WCOL_KIND, WCOL_CREATED, WCOL_UPDATED, WCOL_ROLE, WCOL_ADMIN)
SVC_STMT(STMT_WS_LIST_MINE,
	"SELECT w.id, w.name, w.kind, " TS("w.created_at") ", " TS("w.updated_at") ", m.role, "
	"(SELECT COUNT(*) FROM workspace_members c WHERE c.workspace_id = w.id) "
	"FROM workspace_members m JOIN workspaces w ON w.id = m.workspace_id "
	"WHERE m.user_id = ? ORDER BY w.kind = 'personal' DESC, w.created_at, w.id LIMIT 1000")
/* the columns of STMT_WS_GET up to WCOL_ROLE, then the member count */
SVC_COLS(WLCOL_MEMBERS = WCOL_ROLE + 1)
SVC_STMT(STMT_WS_RENAME,
	"UPDATE workspaces SET name = ?, updated_at = " NOW " WHERE id = ?")
SVC_STMT(STMT_WS_MEMBER_COUNT,
	"SELECT COUNT(*) FROM workspace_members WHERE workspace_id = ?")
SVC_COLS(MCCOL_COUNT)

/* Members. */
SVC_STMT(STMT_MEMBER_LIST,
	"SELECT m.user_id, u.email, u.display_name, m.role, " TS("m.created_at") " FROM workspace_members m "
	"JOIN users u ON u.id = m.user_id WHERE m.workspace_id = ? ORDER BY m.created_at, m.user_id LIMIT 10000")
SVC_STMT(STMT_MEMBER_GET,
	"SELECT m.user_id, u.email, u.display_name, m.role, " TS("m.created_at") " FROM workspace_members m "
	"JOIN users u ON u.id = m.user_id WHERE m.workspace_id = ? AND m.user_id = ?")
/* the columns of STMT_MEMBER_LIST and STMT_MEMBER_GET */
SVC_COLS(MBCOL_USER, MBCOL_EMAIL, MBCOL_NAME, MBCOL_ROLE, MBCOL_CREATED)
/* Locks the workspace's membership rows (inside a transaction) so "at least one owner" holds under concurrency. */
SVC_STMT(STMT_MEMBER_LOCK,
	"SELECT user_id, role FROM workspace_members WHERE workspace_id = ? FOR UPDATE")
SVC_COLS(MLCOL_USER, MLCOL_ROLE)
SVC_STMT(STMT_MEMBER_SET_ROLE,
	"UPDATE workspace_members SET role = ? WHERE workspace_id = ? AND user_id = ?")
SVC_STMT(STMT_MEMBER_DELETE,
	"DELETE FROM workspace_members WHERE workspace_id = ? AND user_id = ?")
SVC_STMT(STMT_USER_SET_PLATFORM_ADMIN,
	"UPDATE users SET is_platform_admin = ?, updated_at = " NOW " WHERE email = ?")

/* Folders. */
SVC_STMT(STMT_FOLDER_LIST,
	"SELECT id, workspace_id, name, " TS("created_at") ", " TS("updated_at") " FROM folders "
	"WHERE workspace_id = ? ORDER BY name, id LIMIT 10000")
SVC_STMT(STMT_FOLDER_GET,
	"SELECT id, workspace_id, name, " TS("created_at") ", " TS("updated_at") " FROM folders WHERE id = ?")
/* the columns of STMT_FOLDER_LIST and STMT_FOLDER_GET */
SVC_COLS(FOCOL_ID, FOCOL_WORKSPACE, FOCOL_NAME, FOCOL_CREATED, FOCOL_UPDATED)
SVC_STMT(STMT_FOLDER_INSERT,
	"INSERT INTO folders (id, workspace_id, name, created_at, updated_at) VALUES (?, ?, ?, " NOW ", " NOW ")")
SVC_STMT(STMT_FOLDER_RENAME,
	"UPDATE folders SET name = ?, updated_at = " NOW " WHERE id = ?")
SVC_STMT(STMT_FOLDER_UNFILE,
	"UPDATE projects SET folder_id = NULL WHERE folder_id = ?")
SVC_STMT(STMT_FOLDER_DELETE,
	"DELETE FROM folders WHERE id = ?")

/* Thumbnails. */
SVC_STMT(STMT_THUMB_JOB_WAITING,
	"SELECT id FROM jobs WHERE state = 'queued' AND kind = ? AND payload = ? LIMIT 1")
SVC_COLS(TJCOL_ID)
/* a preview build of the project waiting or running under a live lease, other than job ? (0: none) */
SVC_STMT(STMT_PREVIEW_JOB_ACTIVE,
	"SELECT id, state FROM jobs WHERE kind = ? AND payload = ? AND id <> ? "
	"AND (state = 'queued' OR (state = 'running' AND locked_until >= " NOW ")) LIMIT 10")
SVC_COLS(PJCOL_ID, PJCOL_STATE)
SVC_STMT(STMT_THUMB_PROJECT,
	"SELECT name FROM projects WHERE id = ? AND deleted_at IS NULL")
SVC_COLS(TPCOL_NAME)
