/* db_stmts_cluster.h: statements of several hosts on one cluster: the database layer's metrics (issue 19). Included by db_stmts.h only. */
/* one more of counter `name` for process `instance` (lib/db/db.c; errors are ignored there) */
SVC_STMT(STMT_METRIC_ADD,
	"INSERT INTO db_metrics (name, instance, value, updated_at) VALUES (?, ?, ?, " NOW ") "
	"ON DUPLICATE KEY UPDATE value = value + VALUES(value), updated_at = " NOW)
/* every counter, summed over the processes that counted it (svc-admin metrics) */
SVC_STMT(STMT_METRICS_SUM,
	"SELECT name, CAST(SUM(value) AS CHAR), COUNT(*) FROM db_metrics GROUP BY name ORDER BY name")
SVC_COLS(MTCOL_NAME, MTCOL_VALUE, MTCOL_INSTANCES)
/* this connection's id, for KILL (tests/unit/test_db.c) */
SVC_STMT(STMT_DB_CONNECTION_ID, "SELECT CONNECTION_ID()")
SVC_COLS(CICOL_ID)
