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
/* svc-wsd's room leases (wsd/store.c, schema/015_room_leases.sql): a new lease ... */
SVC_STMT(STMT_LEASE_INSERT,
	"INSERT INTO room_leases (project_id, instance, url, expires_at, updated_at) "
	"VALUES (?, ?, ?, " NOW " + INTERVAL ? SECOND, " NOW ")")
/* ... or the room's lease taken over when it is this instance's or expired (1 row: taken) */
SVC_STMT(STMT_LEASE_TAKE,
	"UPDATE room_leases SET instance = ?, url = ?, expires_at = " NOW " + INTERVAL ? SECOND, wanted_at = NULL, "
	"updated_at = " NOW " WHERE project_id = ? AND (instance = ? OR expires_at < " NOW ")")
/* another instance was asked for a room that this one could not take: the holder hands it over */
SVC_STMT(STMT_LEASE_WANT,
	"UPDATE room_leases SET wanted_at = " NOW " WHERE project_id = ? AND instance <> ?")
/* renewed while this instance holds it and no other instance wanted the room lately (0 rows: it
 * lost the lease, or hands the room over) */
SVC_STMT(STMT_LEASE_RENEW,
	"UPDATE room_leases SET expires_at = " NOW " + INTERVAL ? SECOND, updated_at = " NOW " "
	"WHERE project_id = ? AND instance = ? AND (wanted_at IS NULL OR wanted_at < " NOW " - INTERVAL ? SECOND)")
/* given back when the room unloads */
SVC_STMT(STMT_LEASE_RELEASE, "DELETE FROM room_leases WHERE project_id = ? AND instance = ?")
/* every lease of this instance, when it stops */
SVC_STMT(STMT_LEASE_RELEASE_ALL, "DELETE FROM room_leases WHERE instance = ?")
/* where the API reaches the instance that serves the room (svc_internal_notify_files); none: no room open */
SVC_STMT(STMT_LEASE_URL,
	"SELECT url FROM room_leases WHERE project_id = ? AND expires_at >= " NOW)
SVC_COLS(LUCOL_URL)
/* tables that Galera cannot replicate well: not InnoDB, or without a primary key (tests/unit/test_db.c) */
SVC_STMT(STMT_SCHEMA_UNFIT,
	"SELECT t.table_name FROM information_schema.tables t WHERE t.table_schema = DATABASE() "
	"AND t.table_type = 'BASE TABLE' AND (t.engine <> 'InnoDB' OR NOT EXISTS (SELECT 1 FROM "
	"information_schema.table_constraints c WHERE c.table_schema = t.table_schema "
	"AND c.table_name = t.table_name AND c.constraint_type = 'PRIMARY KEY'))")
SVC_COLS(SUCOL_TABLE)
