/* db_stmts_app.h: the statements of the apps' backend (lib/app, lib/project/app_decl.c; schema/023_app_backend.sql). */

/* ---- the declaration in force (svc.data.json's last valid text) ---- */
SVC_STMT(STMT_APP_DECL_GET, "SELECT body FROM app_declarations WHERE project_id = ?")
SVC_COLS(ADCOL_BODY)
SVC_STMT(STMT_APP_DECL_SHA, "SELECT sha256 FROM app_declarations WHERE project_id = ?")
SVC_COLS(ADSCOL_SHA)
SVC_STMT(STMT_APP_DECL_PUT,
	"INSERT INTO app_declarations (project_id, sha256, body, updated_at) VALUES (?, ?, ?, " NOW ") "
	"ON DUPLICATE KEY UPDATE sha256 = VALUES(sha256), body = VALUES(body), updated_at = VALUES(updated_at)")

/* ---- the site a Host names ---- */
/* a published site <slug>.<SVC_DOMAIN> */
SVC_STMT(STMT_APP_SITE_BY_SLUG,
	"SELECT id FROM projects WHERE slug = ? AND deleted_at IS NULL AND published_at IS NOT NULL")
SVC_COLS(ASCOL_ID)
/* a custom domain that is served (active) for a published project */
SVC_STMT(STMT_APP_SITE_BY_DOMAIN,
	"SELECT p.id FROM custom_domains d JOIN projects p ON p.id = d.project_id "
	"WHERE d.domain = ? AND d.status = 'active' AND p.deleted_at IS NULL AND p.published_at IS NOT NULL")
/* the project a preview token names, not deleted */
SVC_STMT(STMT_APP_SITE_BY_ID, "SELECT id FROM projects WHERE id = ? AND deleted_at IS NULL")

/* ---- end users and their sessions ---- */
#define APP_USER_COLS(u) u "id, " u "email, " u "password_hash, " u "disabled, " TS(u "created_at")
SVC_STMT(STMT_APP_USER_INSERT,
	"INSERT INTO app_users (id, project_id, env, email, password_hash, created_at) VALUES (?, ?, ?, ?, ?, " NOW ")")
SVC_STMT(STMT_APP_USER_BY_EMAIL,
	"SELECT " APP_USER_COLS("") " FROM app_users WHERE project_id = ? AND env = ? AND email = ?")
SVC_COLS(AUCOL_ID, AUCOL_EMAIL, AUCOL_HASH, AUCOL_DISABLED, AUCOL_CREATED)
/* the end user of a session of this site (project and environment) that has not expired: AUCOL_* columns */
SVC_STMT(STMT_APP_SESSION_USER,
	"SELECT " APP_USER_COLS("u.") " FROM app_sessions s JOIN app_users u ON u.id = s.user_id "
	"WHERE s.token_sha256 = ? AND s.project_id = ? AND s.env = ? AND s.expires_at > " NOW " AND u.disabled = 0")
SVC_STMT(STMT_APP_SESSION_INSERT,
	"INSERT INTO app_sessions (token_sha256, user_id, project_id, env, created_at, expires_at) "
	"VALUES (?, ?, ?, ?, " NOW ", DATE_ADD(" NOW ", INTERVAL ? SECOND))")
/* a user's sessions that have expired, cleared when they sign in again */
SVC_STMT(STMT_APP_SESSION_PRUNE, "DELETE FROM app_sessions WHERE user_id = ? AND expires_at <= " NOW)
SVC_STMT(STMT_APP_SESSION_DELETE, "DELETE FROM app_sessions WHERE token_sha256 = ?")

/* ---- records ---- */
#define APP_RECORD_COLS "r.id, r.owner, r.fields, " TS("r.created_at") ", " TS("r.updated_at")
#define APP_RECORD_KEY "r.project_id = ? AND r.env = ? AND r.collection = ?"
SVC_STMT(STMT_APP_RECORD_INSERT,
	"INSERT INTO app_records (project_id, env, collection, id, owner, fields, created_at, updated_at) "
	"VALUES (?, ?, ?, ?, ?, ?, " NOW ", " NOW ")")
SVC_STMT(STMT_APP_RECORD_GET,
	"SELECT " APP_RECORD_COLS " FROM app_records r WHERE " APP_RECORD_KEY " AND r.id = ?")
SVC_COLS(ARCOL_ID, ARCOL_OWNER, ARCOL_FIELDS, ARCOL_CREATED, ARCOL_UPDATED)
SVC_STMT(STMT_APP_RECORD_FOR_UPDATE,
	"SELECT " APP_RECORD_COLS " FROM app_records r WHERE " APP_RECORD_KEY " AND r.id = ? FOR UPDATE")
SVC_STMT(STMT_APP_RECORD_UPDATE,
	"UPDATE app_records r SET r.fields = ?, r.updated_at = " NOW " WHERE " APP_RECORD_KEY " AND r.id = ?")
SVC_STMT(STMT_APP_RECORD_DELETE, "DELETE r FROM app_records r WHERE " APP_RECORD_KEY " AND r.id = ?")
SVC_STMT(STMT_APP_INDEX_CLEAR,
	"DELETE FROM app_record_index WHERE project_id = ? AND env = ? AND collection = ? AND record_id = ?")
SVC_STMT(STMT_APP_INDEX_INSERT,
	"INSERT INTO app_record_index (project_id, env, collection, field, value, record_id) VALUES (?, ?, ?, ?, ?, ?)")
/*
 * A page of a collection (lib/app/app_data.c list_page() binds them in this order): the key (3);
 * the rule's owner, NULL for anyone (2: the same value twice); the filters on owner, id and createdAt
 * (2 each) and on up to three declared indexes (3 each: field, field, value), NULL when not given;
 * the cursor (4: created_at, created_at, created_at, id), NULL on the first page; the limit.
 */
#define APP_RECORD_PAGE(cmp, dir) \
	"SELECT " APP_RECORD_COLS " FROM app_records r WHERE " APP_RECORD_KEY \
	" AND (? IS NULL OR r.owner = ?) AND (? IS NULL OR r.owner = ?) AND (? IS NULL OR r.id = ?)" \
	" AND (? IS NULL OR r.created_at = ?)" APP_INDEX_FILTER APP_INDEX_FILTER APP_INDEX_FILTER \
	" AND (? IS NULL OR r.created_at " cmp " ? OR (r.created_at = ? AND r.id " cmp " ?))" \
	" ORDER BY r.created_at " dir ", r.id " dir " LIMIT ?"
#define APP_INDEX_FILTER \
	" AND (? IS NULL OR EXISTS (SELECT 1 FROM app_record_index i WHERE i.project_id = r.project_id" \
	" AND i.env = r.env AND i.collection = r.collection AND i.field = ? AND i.value = ? AND i.record_id = r.id))"
SVC_STMT(STMT_APP_RECORD_PAGE_ASC, APP_RECORD_PAGE(">", "ASC"))
SVC_STMT(STMT_APP_RECORD_PAGE_DESC, APP_RECORD_PAGE("<", "DESC"))

/* ---- what a project's environment holds (the quotas SVC_APP_MAX_*) ---- */
SVC_STMT(STMT_APP_USAGE_ENSURE, "INSERT IGNORE INTO app_usage (project_id, env) VALUES (?, ?)")
SVC_STMT(STMT_APP_USAGE_LOCK, "SELECT records, bytes, users FROM app_usage WHERE project_id = ? AND env = ? FOR UPDATE")
SVC_COLS(AUSCOL_RECORDS, AUSCOL_BYTES, AUSCOL_USERS)
SVC_STMT(STMT_APP_USAGE_MOVE,
	"UPDATE app_usage SET records = records + ?, bytes = bytes + ?, users = users + ? WHERE project_id = ? AND env = ?")

/* ---- for builders (lib/api/api_backend.c): what a project's backend holds, its end users, emptying it ---- */
SVC_STMT(STMT_APP_COUNTS,
	"SELECT env, collection, COUNT(*) FROM app_records WHERE project_id = ? GROUP BY env, collection LIMIT 1000")
SVC_COLS(ACCOL_ENV, ACCOL_COLLECTION, ACCOL_COUNT)
SVC_STMT(STMT_APP_USAGE_GET, "SELECT env, records, bytes, users FROM app_usage WHERE project_id = ?")
SVC_COLS(AUGCOL_ENV, AUGCOL_RECORDS, AUGCOL_BYTES, AUGCOL_USERS)
SVC_STMT(STMT_APP_USERS_LIST,
	"SELECT id, email, disabled, " TS("created_at") " FROM app_users WHERE project_id = ? AND env = ? "
	"ORDER BY created_at, id LIMIT 1000")
SVC_COLS(AULCOL_ID, AULCOL_EMAIL, AULCOL_DISABLED, AULCOL_CREATED)
/* emptying an environment: its index rows, records, end users (their sessions go with them) and counts */
SVC_STMT(STMT_APP_ENV_INDEX_CLEAR, "DELETE FROM app_record_index WHERE project_id = ? AND env = ?")
SVC_STMT(STMT_APP_ENV_RECORDS_CLEAR, "DELETE FROM app_records WHERE project_id = ? AND env = ?")
SVC_STMT(STMT_APP_ENV_USERS_CLEAR, "DELETE FROM app_users WHERE project_id = ? AND env = ?")
SVC_STMT(STMT_APP_ENV_USAGE_CLEAR, "DELETE FROM app_usage WHERE project_id = ? AND env = ?")
/* an end user deleted with their records: what they hold, then the rows */
SVC_STMT(STMT_APP_USER_HOLDS,
	"SELECT COUNT(*), COALESCE(SUM(LENGTH(fields)), 0) FROM app_records WHERE project_id = ? AND env = ? AND owner = ?")
SVC_COLS(AUHCOL_RECORDS, AUHCOL_BYTES)
SVC_STMT(STMT_APP_USER_INDEX_CLEAR,
	"DELETE i FROM app_record_index i JOIN app_records r ON r.project_id = i.project_id AND r.env = i.env "
	"AND r.collection = i.collection AND r.id = i.record_id WHERE r.project_id = ? AND r.env = ? AND r.owner = ?")
SVC_STMT(STMT_APP_USER_RECORDS_CLEAR, "DELETE FROM app_records WHERE project_id = ? AND env = ? AND owner = ?")
SVC_STMT(STMT_APP_USER_DELETE, "DELETE FROM app_users WHERE project_id = ? AND env = ? AND id = ?")
/* builders (issue 28 "For builders"): disabling an end user, an environment's export */
SVC_STMT(STMT_APP_USER_GET_FOR_UPDATE,
	"SELECT id, email, disabled, " TS("created_at") " FROM app_users WHERE project_id = ? AND env = ? AND id = ? FOR UPDATE")
SVC_STMT(STMT_APP_USER_SET_DISABLED, "UPDATE app_users SET disabled = ? WHERE project_id = ? AND env = ? AND id = ?")
SVC_STMT(STMT_APP_USER_SESSIONS_END, "DELETE FROM app_sessions WHERE user_id = ?")
/* an environment's export, streamed a page at a time: records (ARCOL_* then the collection) by collection, creation,
 * id after the cursor (NULL test, then collection, collection, created_at, created_at, id), and end users by
 * creation, id after theirs (NULL test, created_at, created_at, id) */
SVC_STMT(STMT_APP_EXPORT_RECORDS,
	"SELECT " APP_RECORD_COLS ", r.collection FROM app_records r WHERE r.project_id = ? AND r.env = ? "
	"AND (? IS NULL OR r.collection > ? OR (r.collection = ? AND (r.created_at > ? OR (r.created_at = ? AND r.id > ?)))) "
	"ORDER BY r.collection, r.created_at, r.id LIMIT ?")
SVC_COLS(AXCOL_ID, AXCOL_OWNER, AXCOL_FIELDS, AXCOL_CREATED, AXCOL_UPDATED, AXCOL_COLLECTION)
SVC_STMT(STMT_APP_EXPORT_USERS,
	"SELECT id, email, disabled, " TS("created_at") " FROM app_users WHERE project_id = ? AND env = ? "
	"AND (? IS NULL OR created_at > ? OR (created_at = ? AND id > ?)) ORDER BY created_at, id LIMIT ?")
/*
 * A page sorted on a declared index or on id (sort=<field>|-<field>): the sort key of a record is (k, v, id), k 0
 * when the record has no value for the field (those come first ascending), v its index value (compared as text, or
 * as a number for number fields), id breaking ties. Bound: the sort field (NULL for id), then as APP_RECORD_PAGE,
 * but the cursor is (NULL test, k, v, id) with v the raw value the row gave (ASOCOL_V). KEY_K, KEY_V are the SQL
 * of k and v, PARAM_V that of the cursor's v.
 */
#define APP_RECORD_SORTED(KEY_K, KEY_V, RAW_V, PARAM_V, cmp, dir) \
	"SELECT " APP_RECORD_COLS ", " KEY_K ", " RAW_V " FROM app_records r LEFT JOIN app_record_index s" \
	" ON s.project_id = r.project_id AND s.env = r.env AND s.collection = r.collection AND s.field = ?" \
	" AND s.record_id = r.id WHERE " APP_RECORD_KEY \
	" AND (? IS NULL OR r.owner = ?) AND (? IS NULL OR r.owner = ?) AND (? IS NULL OR r.id = ?)" \
	" AND (? IS NULL OR r.created_at = ?)" APP_INDEX_FILTER APP_INDEX_FILTER APP_INDEX_FILTER \
	" AND (? IS NULL OR (" KEY_K ", " KEY_V ", r.id) " cmp " (?, " PARAM_V ", ?))" \
	" ORDER BY " KEY_K " " dir ", " KEY_V " " dir ", r.id " dir " LIMIT ?"
#define APP_SORTED(...) APP_RECORD_SORTED(__VA_ARGS__) /* expands APP_SORT_TEXT, _NUMBER into their three */
#define APP_SORT_K "(s.value IS NOT NULL)"
#define APP_SORT_TEXT "COALESCE(s.value, '')", "s.value", "?"
#define APP_SORT_NUMBER "COALESCE(CAST(s.value AS DOUBLE), 0)", "s.value", "COALESCE(CAST(? AS DOUBLE), 0)"
SVC_STMT(STMT_APP_SORTED_TEXT_ASC, APP_SORTED(APP_SORT_K, APP_SORT_TEXT, ">", "ASC"))
SVC_COLS(ASOCOL_ID, ASOCOL_OWNER, ASOCOL_FIELDS, ASOCOL_CREATED, ASOCOL_UPDATED, ASOCOL_K, ASOCOL_V)
SVC_STMT(STMT_APP_SORTED_TEXT_DESC, APP_SORTED(APP_SORT_K, APP_SORT_TEXT, "<", "DESC"))
SVC_STMT(STMT_APP_SORTED_NUMBER_ASC, APP_SORTED(APP_SORT_K, APP_SORT_NUMBER, ">", "ASC"))
SVC_STMT(STMT_APP_SORTED_NUMBER_DESC, APP_SORTED(APP_SORT_K, APP_SORT_NUMBER, "<", "DESC"))
/* by id: no index row joins (the field bound is NULL), v is the id */
SVC_STMT(STMT_APP_SORTED_ID_ASC, APP_RECORD_SORTED("1", "r.id", "r.id", "?", ">", "ASC"))
SVC_STMT(STMT_APP_SORTED_ID_DESC, APP_RECORD_SORTED("1", "r.id", "r.id", "?", "<", "DESC"))
