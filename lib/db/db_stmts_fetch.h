/* db_stmts_fetch.h: statements of the apps' server-side secrets (lib/api/api_secrets.c, lib/app/app_fetch.c; schema/028_app_fetch.sql). Included by db_stmts.h only. */

/* a new secret, or a new value of one (affected rows: 1 inserted, 2 replaced): project, name, sealed, bytes, who, who */
SVC_STMT(STMT_SECRET_PUT,
	"INSERT INTO project_secrets (project_id, name, value_sealed, value_bytes, created_by, updated_by, created_at, "
	"updated_at) VALUES (?, ?, ?, ?, ?, ?, " NOW ", " NOW ") ON DUPLICATE KEY UPDATE "
	"value_sealed = VALUES(value_sealed), value_bytes = VALUES(value_bytes), updated_by = VALUES(updated_by), "
	"updated_at = VALUES(updated_at)")
/* a project's secrets as builders see them (never the values), by name; and one of them (project, name) */
#define SECRET_COLS "s.name, " TS("s.updated_at") ", s.updated_by, u.email, u.display_name, s.value_bytes"
SVC_STMT(STMT_SECRET_LIST,
	"SELECT " SECRET_COLS " FROM project_secrets s LEFT JOIN users u ON u.id = s.updated_by "
	"WHERE s.project_id = ? ORDER BY s.name")
SVC_STMT(STMT_SECRET_GET,
	"SELECT " SECRET_COLS " FROM project_secrets s LEFT JOIN users u ON u.id = s.updated_by "
	"WHERE s.project_id = ? AND s.name = ?")
SVC_COLS(SECOL_NAME, SECOL_UPDATED, SECOL_BY, SECOL_BY_EMAIL, SECOL_BY_NAME, SECOL_BYTES)
#undef SECRET_COLS
SVC_STMT(STMT_SECRET_DELETE, "DELETE FROM project_secrets WHERE project_id = ? AND name = ?")
/* every secret of a project with its sealed value and the project's workspace (svc-app's calls) */
SVC_STMT(STMT_SECRET_SEALED,
	"SELECT s.name, s.value_sealed, p.workspace_id FROM project_secrets s JOIN projects p ON p.id = s.project_id "
	"WHERE s.project_id = ? ORDER BY s.name")
SVC_COLS(SSCOL_NAME, SSCOL_SEALED, SSCOL_WORKSPACE)
