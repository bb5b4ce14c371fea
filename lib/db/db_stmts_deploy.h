/* db_stmts_deploy.h: statements of deployments: publishing, its builds, the kept sites and restores (issue 15). Included by db_stmts.h only. */
SVC_STMT(STMT_DEPLOY_LOCK_PROJECT,
	"SELECT id FROM projects WHERE id = ? FOR UPDATE")
SVC_COLS(DLCOL_ID)
/* the deployment building now, with its age in seconds (a stale one is failed by the next publish) */
SVC_STMT(STMT_DEPLOY_BUILDING,
	"SELECT id, TIMESTAMPDIFF(SECOND, started_at, " NOW ") FROM deployments "
	"WHERE project_id = ? AND status = 'building'")
SVC_COLS(DBCOL_ID, DBCOL_AGE_SECS)
SVC_STMT(STMT_DEPLOY_INSERT,
	"INSERT INTO deployments (id, project_id, status, commit_sha, created_by, started_at) "
	"VALUES (?, ?, 'building', ?, ?, " NOW ")")
SVC_STMT(STMT_DEPLOY_FAIL,
	"UPDATE deployments SET status = 'failed', finished_at = " NOW ", error = ?, log_excerpt = ? "
	"WHERE id = ? AND status = 'building'")
SVC_STMT(STMT_DEPLOY_FINISH,
	"UPDATE deployments SET status = 'live', finished_at = " NOW ", log_excerpt = ?, kept = 1 WHERE id = ?")
SVC_STMT(STMT_DEPLOY_MAKE_LIVE,
	"UPDATE deployments SET status = 'live' WHERE id = ?")
SVC_STMT(STMT_DEPLOY_SUPERSEDE,
	"UPDATE deployments SET status = 'superseded' WHERE project_id = ? AND status = 'live' AND id <> ?")
#define DEPLOY_COLS "d.id, d.project_id, d.status, d.commit_sha, " TS("d.started_at") ", " TS("d.finished_at") \
	", d.error, d.log_excerpt, d.kept, d.created_by, COALESCE(u.display_name, u.email)"
SVC_STMT(STMT_DEPLOY_LIST,
	"SELECT " DEPLOY_COLS " FROM deployments d LEFT JOIN users u ON u.id = d.created_by "
	"WHERE d.project_id = ? ORDER BY d.started_at DESC, d.id DESC LIMIT 50")
SVC_STMT(STMT_DEPLOY_GET,
	"SELECT " DEPLOY_COLS " FROM deployments d LEFT JOIN users u ON u.id = d.created_by "
	"WHERE d.id = ? AND d.project_id = ?")
/* the columns of STMT_DEPLOY_LIST and STMT_DEPLOY_GET */
SVC_COLS(DCOL_ID, DCOL_PROJECT, DCOL_STATUS, DCOL_SHA, DCOL_STARTED, DCOL_FINISHED, DCOL_ERROR, DCOL_LOG,
	DCOL_KEPT, DCOL_USER, DCOL_USER_NAME)
/* deployments whose site is kept, newest first (svc_publish_prune keeps the newest SVC_DEPLOYMENTS_KEPT) */
SVC_STMT(STMT_DEPLOY_KEPT,
	"SELECT id, status FROM deployments WHERE project_id = ? AND kept = 1 ORDER BY started_at DESC, id DESC")
SVC_COLS(DKCOL_ID, DKCOL_STATUS)
SVC_STMT(STMT_DEPLOY_UNKEEP,
	"UPDATE deployments SET kept = 0 WHERE id = ?")
SVC_STMT(STMT_WORKSPACE_BUILD_SCRIPTS,
	"SELECT build_scripts FROM workspaces WHERE id = ?")
SVC_COLS(WBCOL_SCRIPTS)
SVC_STMT(STMT_WORKSPACE_SET_BUILD_SCRIPTS,
	"UPDATE workspaces SET build_scripts = ?, updated_at = " NOW " WHERE id = ?")
SVC_STMT(STMT_DEPLOY_PROJECT_WORKSPACE,
	"SELECT workspace_id FROM projects WHERE id = ? AND deleted_at IS NULL")
SVC_COLS(DPWCOL_WORKSPACE)
