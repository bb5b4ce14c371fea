/* db_stmts_quota.h: statements of the per-workspace quotas (issue 17, finding 7; lib/project/quota.c). Included by db_stmts.h only. */

/* every project of the workspace, in the trash too (its files stay on disk until hard delete) */
SVC_STMT(STMT_QUOTA_PROJECT_COUNT,
	"SELECT COUNT(*) FROM projects WHERE workspace_id = ?")
SVC_COLS(QCCOL_COUNT)
