/* db_stmts_quota.h: statements of the per-workspace quotas (issue 17, finding 7; lib/project/quota.c). Included by db_stmts.h only. */

/* every project of the workspace, in the trash too (its files stay on disk until hard delete) */
SVC_STMT(STMT_QUOTA_PROJECT_COUNT,
	"SELECT COUNT(*) FROM projects WHERE workspace_id = ?")
SVC_COLS(QCCOL_COUNT)

/* one project's bytes in one area (repo, site, preview), as last measured (schema/020_workspace_usage.sql) */
SVC_STMT(STMT_QUOTA_USAGE_PUT,
	"INSERT INTO project_usage (project_id, area, bytes, updated_at) VALUES (?, ?, ?, UTC_TIMESTAMP(3)) "
	"ON DUPLICATE KEY UPDATE bytes = VALUES(bytes), updated_at = VALUES(updated_at)")

/* the bytes of every project of workspace ? (the trash included) but the one area (project ?, area ?) being changed */
SVC_STMT(STMT_QUOTA_WORKSPACE_BYTES,
	"SELECT CAST(COALESCE(SUM(u.bytes), 0) AS UNSIGNED) FROM project_usage u JOIN projects p ON p.id = u.project_id "
	"WHERE p.workspace_id = ? AND NOT (u.project_id = ? AND u.area = ?)")
SVC_COLS(QWCOL_BYTES)
