/* db_stmts_appfiles.h: the statements of the apps' files (lib/app/app_files.c; schema/027_app_files.sql). */

#define APP_FILE_KEY "project_id = ? AND env = ?"
SVC_STMT(STMT_APP_FILE_INSERT,
	"INSERT INTO app_files (project_id, env, id, owner, content_type, size, chunks, sha256, created_at) "
	"VALUES (?, ?, ?, ?, ?, ?, ?, ?, " NOW ")")
SVC_STMT(STMT_APP_FILE_CHUNK_INSERT, "INSERT INTO app_file_chunks (project_id, env, file_id, seq, data) VALUES (?, ?, ?, ?, ?)")
/* a file's row; created: its upload in Unix seconds (created_at is UTC), its Last-Modified */
#define APP_FILE_COLS "SELECT id, owner, content_type, size, chunks, sha256, " \
	"TIMESTAMPDIFF(SECOND, '1970-01-01 00:00:00', created_at) FROM app_files WHERE " APP_FILE_KEY " AND id = ?"
SVC_STMT(STMT_APP_FILE_GET, APP_FILE_COLS)
SVC_COLS(AFCOL_ID, AFCOL_OWNER, AFCOL_TYPE, AFCOL_SIZE, AFCOL_CHUNKS, AFCOL_SHA, AFCOL_CREATED)
SVC_STMT(STMT_APP_FILE_FOR_UPDATE, APP_FILE_COLS " FOR UPDATE")
/* a file's bytes, in order (one row per chunk) */
SVC_STMT(STMT_APP_FILE_CHUNKS,
	"SELECT data FROM app_file_chunks WHERE " APP_FILE_KEY " AND file_id = ? ORDER BY seq")
SVC_COLS(AFCCOL_DATA)
/* the chunks go with it (ON DELETE CASCADE) */
SVC_STMT(STMT_APP_FILE_DELETE, "DELETE FROM app_files WHERE " APP_FILE_KEY " AND id = ?")
/* a record's file field: the file exists in the site's environment, kept until the record's write commits */
SVC_STMT(STMT_APP_FILE_EXISTS, "SELECT id FROM app_files WHERE " APP_FILE_KEY " AND id = ? LOCK IN SHARE MODE")

/* ---- what an environment's files hold, beside the records' counts in app_usage (SVC_APP_MAX_FILE_BYTES) ---- */
SVC_STMT(STMT_APP_FILE_USAGE_LOCK, "SELECT files, file_bytes FROM app_usage WHERE " APP_FILE_KEY " FOR UPDATE")
SVC_COLS(AFUCOL_FILES, AFUCOL_BYTES)
SVC_STMT(STMT_APP_FILE_USAGE_MOVE,
	"UPDATE app_usage SET files = files + ?, file_bytes = file_bytes + ? WHERE " APP_FILE_KEY)
SVC_STMT(STMT_APP_FILE_USAGE_GET, "SELECT env, files, file_bytes FROM app_usage WHERE project_id = ?")
SVC_COLS(AFUGCOL_ENV, AFUGCOL_FILES, AFUGCOL_BYTES)

/* ---- for builders (lib/api/api_backend.c): an end user's files deleted with them, an environment emptied ---- */
SVC_STMT(STMT_APP_USER_FILES_HOLD,
	"SELECT COUNT(*), COALESCE(SUM(size), 0) FROM app_files WHERE " APP_FILE_KEY " AND owner = ?")
SVC_COLS(AUFHCOL_FILES, AUFHCOL_BYTES)
SVC_STMT(STMT_APP_USER_FILES_CLEAR, "DELETE FROM app_files WHERE " APP_FILE_KEY " AND owner = ?")
SVC_STMT(STMT_APP_ENV_FILES_CLEAR, "DELETE FROM app_files WHERE " APP_FILE_KEY)
