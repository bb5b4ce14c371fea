/* db_stmts_collab.h: statements of the collaboration daemon and design comments (issue 4). Included by db_stmts.h only. */

/* svc-wsd: the stored document: snapshot, then the update log after it */
SVC_STMT(STMT_WSD_DOC_GET,
	"SELECT snapshot, snapshot_seq FROM collab_documents WHERE project_id = ?")
SVC_COLS(DCOL_SNAPSHOT, DCOL_SNAPSHOT_SEQ)
SVC_STMT(STMT_WSD_UPDATES_GET,
	"SELECT seq, data FROM collab_updates WHERE project_id = ? AND seq > ? ORDER BY seq")
SVC_COLS(UPCOL_SEQ, UPCOL_DATA)
SVC_STMT(STMT_WSD_UPDATE_INSERT,
	"INSERT INTO collab_updates (project_id, seq, data, created_at) VALUES (?, ?, ?, " NOW ")")
SVC_STMT(STMT_WSD_SNAPSHOT_PUT,
	"INSERT INTO collab_documents (project_id, snapshot, snapshot_seq, created_at, updated_at) "
	"VALUES (?, ?, ?, " NOW ", " NOW ") ON DUPLICATE KEY UPDATE snapshot = VALUES(snapshot), "
	"snapshot_seq = VALUES(snapshot_seq), updated_at = " NOW)
SVC_STMT(STMT_WSD_UPDATES_TRIM,
	"DELETE FROM collab_updates WHERE project_id = ? AND seq <= ?")
SVC_STMT(STMT_WSD_DOC_SAVED,
	"UPDATE collab_documents SET last_saved_at = " NOW " WHERE project_id = ?")
/* svc-wsd: what it last wrote to or read from disk, per file */
SVC_STMT(STMT_WSD_FILES_GET,
	"SELECT path, sha256 FROM collab_files WHERE project_id = ?")
SVC_COLS(FCOL_PATH, FCOL_SHA256)
SVC_STMT(STMT_WSD_FILE_PUT,
	"INSERT INTO collab_files (project_id, path, sha256, updated_at) VALUES (?, ?, ?, " NOW ") "
	"ON DUPLICATE KEY UPDATE sha256 = VALUES(sha256), updated_at = " NOW)
SVC_STMT(STMT_WSD_FILE_DELETE,
	"DELETE FROM collab_files WHERE project_id = ? AND path = ?")
/* design comments: svc-wsd's view of a project's comments, open ones in full; the DOUBLE
 * positions as text (fetched as DOUBLE into svc_db_run()'s string cells they came back empty) */
SVC_STMT(STMT_COMMENTS_OF_PROJECT,
	"SELECT c.id, c.user_id, u.display_name, c.content, CAST(c.x_percent AS CHAR), CAST(c.y_percent AS CHAR), "
	"c.selector, c.page_path, "
	"c.parent_id, " TS("c.created_at") ", " TS("c.updated_at") ", c.status, c.resolved_by, " TS("c.resolved_at") " "
	"FROM design_comments c LEFT JOIN users u ON u.id = c.user_id "
	"WHERE c.project_id = ? AND c.deleted_at IS NULL ORDER BY c.created_at, c.id LIMIT 10000")
SVC_COLS(CMCOL_ID, CMCOL_USER, CMCOL_USER_NAME, CMCOL_CONTENT, CMCOL_X, CMCOL_Y, CMCOL_SELECTOR,
	CMCOL_PAGE, CMCOL_PARENT, CMCOL_CREATED, CMCOL_UPDATED, CMCOL_STATUS, CMCOL_RESOLVED_BY, CMCOL_RESOLVED_AT)
SVC_STMT(STMT_COMMENT_INSERT,
	"INSERT INTO design_comments (id, project_id, user_id, parent_id, content, x_percent, y_percent, selector, "
	"page_path, created_at, updated_at) VALUES (?, ?, ?, ?, ?, CAST(? AS DOUBLE), CAST(? AS DOUBLE), ?, ?, "
	"STR_TO_DATE(?, '%Y-%m-%dT%H:%i:%s.%fZ'), STR_TO_DATE(?, '%Y-%m-%dT%H:%i:%s.%fZ'))")
SVC_STMT(STMT_COMMENT_GET,
	"SELECT id, project_id, status FROM design_comments WHERE id = ? AND deleted_at IS NULL")
SVC_COLS(CGCOL_ID, CGCOL_PROJECT, CGCOL_STATUS)
SVC_STMT(STMT_COMMENT_RESOLVE,
	"UPDATE design_comments SET status = 'resolved', resolved_by = ?, "
	"resolved_at = STR_TO_DATE(?, '%Y-%m-%dT%H:%i:%s.%fZ'), updated_at = " NOW " "
	"WHERE id = ? AND project_id = ? AND deleted_at IS NULL")
SVC_STMT(STMT_COMMENT_UNRESOLVE,
	"UPDATE design_comments SET status = 'open', resolved_by = NULL, resolved_at = NULL, updated_at = " NOW " "
	"WHERE id = ? AND project_id = ? AND deleted_at IS NULL")
SVC_STMT(STMT_COMMENT_DELETE,
	"UPDATE design_comments SET deleted_at = " NOW ", updated_at = " NOW " "
	"WHERE id = ? AND project_id = ? AND deleted_at IS NULL")
/* the API's side of the internal calls */
SVC_STMT(STMT_INTERNAL_PROJECT,
	"SELECT id FROM projects WHERE id = ? AND deleted_at IS NULL")
SVC_COLS(IPCOL_ID)
SVC_STMT(STMT_PRESENCE_PUT,
	"INSERT INTO collab_presence (project_id, users, updated_at) VALUES (?, ?, " NOW ") "
	"ON DUPLICATE KEY UPDATE users = VALUES(users), updated_at = " NOW)
