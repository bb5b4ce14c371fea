/* db_stmts_integ.h: statements of integrations: the catalogue, enablement, OAuth apps, platform credentials, the audit log, connections, xray (issue 16). Included by db_stmts.h only. */

/* The catalogue (svc-admin import-catalog): catalogue columns updated in place, enablement untouched. */
SVC_STMT(STMT_INTEG_UPSERT,
	"INSERT INTO integrations (id, display_name, description, logo_url, auth_types, categories, "
	"oauth_authorize_url, oauth_token_url, oauth_scope, api_hosts, per_user_only, created_at, updated_at) "
	"VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, " NOW ", " NOW ") ON DUPLICATE KEY UPDATE "
	"display_name = VALUES(display_name), description = VALUES(description), logo_url = VALUES(logo_url), "
	"auth_types = VALUES(auth_types), categories = VALUES(categories), "
	"oauth_authorize_url = VALUES(oauth_authorize_url), oauth_token_url = VALUES(oauth_token_url), "
	"oauth_scope = VALUES(oauth_scope), api_hosts = VALUES(api_hosts), per_user_only = VALUES(per_user_only), "
	"updated_at = " NOW)

/*
 * An integration as a caller of workspace W sees it. Parameters of INTEG_SEL: W (platform credential),
 * W (oauth app), user, W (the user's connection in W), W (workspace setting). enabled: platform-enabled
 * and, for W, its own choice or the platform's default; configured: a platform credential allowed in W,
 * an OAuth app for everyone or for W, or no auth; read_only: W's switch (NULL: the default).
 */
/* whether platform credential c may be used in workspace ? (NULL: in all) */
#define INTEG_CRED_ALLOWED "(c.allowed_workspaces IS NULL OR c.allowed_workspaces LIKE CONCAT('%,', ?, ',%'))"
#define INTEG_SEL \
	"SELECT i.id, i.display_name, i.description, i.logo_url, i.auth_types, i.categories, i.platform_enabled, " \
	"i.platform_enabled AND COALESCE(s.enabled, i.enabled), " \
	"(EXISTS (SELECT 1 FROM integration_credentials c WHERE c.integration_id = i.id AND " \
	INTEG_CRED_ALLOWED ") OR " \
	"EXISTS (SELECT 1 FROM integration_oauth_apps a WHERE a.integration_id = i.id AND a.scope_key IN ('', ?)) OR " \
	"i.auth_types = ',none,'), i.per_user_only, " \
	"EXISTS (SELECT 1 FROM integration_connections n WHERE n.integration_id = i.id AND n.user_id = ? " \
	"AND n.workspace_id = ?), i.enabled, s.enabled, s.read_only " \
	"FROM integrations i LEFT JOIN integration_workspace_settings s ON s.integration_id = i.id AND s.workspace_id = ? "
/* filters: q (''= none), pattern, pattern; category ('' = none), pattern; authType ('' = none), pattern */
#define INTEG_FILTER \
	"(? = '' OR i.display_name LIKE ? OR i.description LIKE ?) AND (? = '' OR i.categories LIKE ?) " \
	"AND (? = '' OR i.auth_types LIKE ?)"
SVC_STMT(STMT_INTEG_LIST, INTEG_SEL "WHERE i.id > ? AND " INTEG_FILTER " ORDER BY i.id LIMIT ?")
SVC_COLS(ICOL_ID, ICOL_NAME, ICOL_DESCRIPTION, ICOL_LOGO, ICOL_AUTH_TYPES, ICOL_CATEGORIES, ICOL_PLATFORM_ENABLED,
	ICOL_ENABLED, ICOL_CONFIGURED, ICOL_PER_USER_ONLY, ICOL_CONNECTED, ICOL_DEFAULT_ENABLED, ICOL_WS_ENABLED,
	ICOL_READ_ONLY)
SVC_STMT(STMT_INTEG_GET, INTEG_SEL "WHERE i.id = ?")
SVC_STMT(STMT_INTEG_COUNT, "SELECT COUNT(*) FROM integrations i WHERE " INTEG_FILTER)
SVC_COLS(ICNTCOL_N)

/* What the server needs of one integration (connect, the agent's tool); the API hosts an admin set win. */
SVC_STMT(STMT_INTEG_DEF,
	"SELECT id, auth_types, platform_enabled, per_user_only, oauth_authorize_url, oauth_token_url, oauth_scope, "
	"COALESCE(api_hosts_admin, api_hosts), display_name FROM integrations WHERE id = ?")
SVC_COLS(IDCOL_ID, IDCOL_AUTH_TYPES, IDCOL_PLATFORM_ENABLED, IDCOL_PER_USER_ONLY, IDCOL_AUTHORIZE_URL,
	IDCOL_TOKEN_URL, IDCOL_SCOPE, IDCOL_API_HOSTS, IDCOL_NAME)

/* The agent tool's API hosts of one integration: the catalogue's, and an admin's (NULL: none set). */
SVC_STMT(STMT_INTEG_HOSTS_GET,
	"SELECT id, api_hosts, api_hosts_admin FROM integrations WHERE id = ?")
SVC_COLS(IHCOL_ID, IHCOL_CATALOGUE, IHCOL_ADMIN)
SVC_STMT(STMT_INTEG_HOSTS_SET,
	"UPDATE integrations SET api_hosts_admin = ? WHERE id = ?")

/* Enablement: the platform's default, the platform's availability, a workspace's own choice. */
SVC_STMT(STMT_INTEG_SET_ENABLED,
	"UPDATE integrations SET enabled = ? WHERE id = ?")
SVC_STMT(STMT_INTEG_SET_PLATFORM_ENABLED,
	"UPDATE integrations SET platform_enabled = ? WHERE id = ?")
/* parameters: workspace, integration, enabled, read_only (NULL: the default), updated_by, and 1 to set
 * read_only or 0 to keep a stored row's */
SVC_STMT(STMT_INTEG_WS_SET,
	"INSERT INTO integration_workspace_settings (workspace_id, integration_id, enabled, read_only, updated_by, "
	"updated_at) VALUES (?, ?, ?, ?, ?, " NOW ") ON DUPLICATE KEY UPDATE enabled = VALUES(enabled), "
	"read_only = IF(? = 1, VALUES(read_only), read_only), "
	"updated_by = VALUES(updated_by), updated_at = VALUES(updated_at)")

/* OAuth apps: one per (integration, scope_key); scope_key '' = global, else the workspace id. */
SVC_STMT(STMT_INTEG_APP_UPSERT,
	"INSERT INTO integration_oauth_apps (id, integration_id, scope, workspace_id, scope_key, client_id, "
	"client_secret, updated_by, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, " NOW ", " NOW ") "
	"ON DUPLICATE KEY UPDATE client_id = VALUES(client_id), client_secret = VALUES(client_secret), "
	"updated_by = VALUES(updated_by), updated_at = VALUES(updated_at)")
#define INTEG_APP_COLS "id, integration_id, scope, workspace_id, client_id, " TS("updated_at") ", scope_key, client_secret "
SVC_STMT(STMT_INTEG_APP_BY_KEY,
	"SELECT " INTEG_APP_COLS "FROM integration_oauth_apps WHERE integration_id = ? AND scope_key = ?")
SVC_COLS(IACOL_ID, IACOL_INTEGRATION, IACOL_SCOPE, IACOL_WORKSPACE, IACOL_CLIENT_ID, IACOL_UPDATED,
	IACOL_SCOPE_KEY, IACOL_SECRET)
SVC_STMT(STMT_INTEG_APP_GET,
	"SELECT " INTEG_APP_COLS "FROM integration_oauth_apps WHERE id = ?")
/* the app a connect from workspace ? uses: the workspace's own before the global one */
SVC_STMT(STMT_INTEG_APP_FOR,
	"SELECT " INTEG_APP_COLS "FROM integration_oauth_apps WHERE integration_id = ? AND scope_key IN ('', ?) "
	"ORDER BY scope_key = '' LIMIT 1")
SVC_STMT(STMT_INTEG_APP_LIST,
	"SELECT " INTEG_APP_COLS "FROM integration_oauth_apps WHERE integration_id = ? ORDER BY scope_key, id")
SVC_STMT(STMT_INTEG_APP_DELETE,
	"DELETE FROM integration_oauth_apps WHERE id = ?")

/* Platform credentials (secret_text, basic_auth, custom_auth), one per integration. */
/* parameters: integration, type, sealed value, allowed workspaces (NULL: all), updated_by, and 1 to set the
 * allowed workspaces or 0 to keep a stored row's */
SVC_STMT(STMT_INTEG_CRED_UPSERT,
	"INSERT INTO integration_credentials (integration_id, auth_type, value, allowed_workspaces, updated_by, "
	"created_at, updated_at) VALUES (?, ?, ?, ?, ?, " NOW ", " NOW ") ON DUPLICATE KEY UPDATE "
	"auth_type = VALUES(auth_type), value = VALUES(value), "
	"allowed_workspaces = IF(? = 1, VALUES(allowed_workspaces), allowed_workspaces), "
	"updated_by = VALUES(updated_by), updated_at = VALUES(updated_at)")
SVC_STMT(STMT_INTEG_CRED_GET,
	"SELECT integration_id, auth_type, value, " TS("updated_at") ", allowed_workspaces FROM integration_credentials "
	"WHERE integration_id = ?")
SVC_COLS(ICRCOL_INTEGRATION, ICRCOL_AUTH_TYPE, ICRCOL_VALUE, ICRCOL_UPDATED, ICRCOL_WORKSPACES)
SVC_STMT(STMT_INTEG_CRED_WS_SET,
	"UPDATE integration_credentials SET allowed_workspaces = ?, updated_by = ?, updated_at = " NOW " "
	"WHERE integration_id = ?")
SVC_STMT(STMT_INTEG_CRED_DELETE,
	"DELETE FROM integration_credentials WHERE integration_id = ?")

/* The audit log, newest first; the cursor is the last seq shown. */
SVC_STMT(STMT_INTEG_AUDIT_INSERT,
	"INSERT INTO integration_audit (id, action, resource_id, details, actor_id, created_at) "
	"VALUES (?, ?, ?, ?, ?, " NOW ")")
SVC_STMT(STMT_INTEG_AUDIT_LIST,
	"SELECT seq, id, action, resource_id, details, actor_id, " TS("created_at") " FROM integration_audit "
	"WHERE seq < ? ORDER BY seq DESC LIMIT ?")
SVC_COLS(IAUCOL_SEQ, IAUCOL_ID, IAUCOL_ACTION, IAUCOL_RESOURCE, IAUCOL_DETAILS, IAUCOL_ACTOR, IAUCOL_AT)

/* Users' own tokens, one per (user, workspace, integration); expires_at from expires_in seconds (NULL: no
 * expiry known). */
SVC_STMT(STMT_INTEG_CONN_UPSERT,
	"INSERT INTO integration_connections (id, user_id, workspace_id, integration_id, access_token, refresh_token, "
	"scope, expires_at, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, DATE_ADD(" NOW ", INTERVAL ? SECOND), "
	NOW ", " NOW ") ON DUPLICATE KEY UPDATE access_token = VALUES(access_token), "
	"refresh_token = COALESCE(VALUES(refresh_token), refresh_token), scope = VALUES(scope), "
	"expires_at = VALUES(expires_at), updated_at = VALUES(updated_at)")
SVC_STMT(STMT_INTEG_CONN_GET,
	"SELECT id, access_token, refresh_token, scope, " TS("expires_at") ", "
	"TIMESTAMPDIFF(SECOND, " NOW ", expires_at), " TS("created_at") ", " TS("updated_at") " "
	"FROM integration_connections WHERE user_id = ? AND workspace_id = ? AND integration_id = ?")
SVC_COLS(ICNCOL_ID, ICNCOL_ACCESS, ICNCOL_REFRESH, ICNCOL_SCOPE, ICNCOL_EXPIRES, ICNCOL_EXPIRES_IN, ICNCOL_CREATED,
	ICNCOL_UPDATED)
SVC_STMT(STMT_INTEG_CONN_DELETE,
	"DELETE FROM integration_connections WHERE user_id = ? AND workspace_id = ? AND integration_id = ?")

/* Connects in progress: used once, 10 minutes. */
SVC_STMT(STMT_INTEG_STATE_INSERT,
	"INSERT INTO integration_oauth_states (state_hash, user_id, workspace_id, integration_id, app_id, verifier, "
	"expires_at) VALUES (?, ?, ?, ?, ?, ?, DATE_ADD(" NOW ", INTERVAL 600 SECOND))")
SVC_STMT(STMT_INTEG_STATE_TAKE,
	"SELECT user_id, integration_id, app_id, verifier, expires_at > " NOW ", workspace_id "
	"FROM integration_oauth_states WHERE state_hash = ? FOR UPDATE")
SVC_COLS(ISTCOL_USER, ISTCOL_INTEGRATION, ISTCOL_APP, ISTCOL_VERIFIER, ISTCOL_LIVE, ISTCOL_WORKSPACE)
SVC_STMT(STMT_INTEG_STATE_DELETE,
	"DELETE FROM integration_oauth_states WHERE state_hash = ?")
SVC_STMT(STMT_INTEG_STATE_PURGE,
	"DELETE FROM integration_oauth_states WHERE expires_at < " NOW)

/* The agent's integration calls (xray): recorded when they start, completed when they end. */
SVC_STMT(STMT_INTEG_CALL_START,
	"INSERT INTO integration_calls (id, integration_id, user_id, project_id, credential, method, host, path, "
	"started_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, " NOW ")")
SVC_STMT(STMT_INTEG_CALL_END,
	"UPDATE integration_calls SET status = ?, error = ?, finished_at = " NOW ", "
	"duration_ms = TIMESTAMPDIFF(MICROSECOND, started_at, " NOW ") DIV 1000 WHERE id = ?")
/* finished calls of the last day: per integration, by duration; `recent` is 1 for the last hour */
SVC_STMT(STMT_XRAY_DURATIONS,
	"SELECT integration_id, duration_ms, error IS NOT NULL OR status >= 400, "
	"started_at >= DATE_SUB(" NOW ", INTERVAL 1 HOUR) FROM integration_calls "
	"WHERE finished_at IS NOT NULL AND started_at >= DATE_SUB(" NOW ", INTERVAL 1 DAY) "
	"ORDER BY integration_id, duration_ms LIMIT 200000")
SVC_COLS(XDCOL_INTEGRATION, XDCOL_MS, XDCOL_ERROR, XDCOL_RECENT)
/* calls in flight that started at least ? seconds ago (0: all of them) */
SVC_STMT(STMT_XRAY_RUNNING,
	"SELECT seq, id, integration_id, user_id, project_id, method, host, path, status, error, " TS("started_at") ", "
	TS("finished_at") ", duration_ms, TIMESTAMPDIFF(MICROSECOND, started_at, " NOW ") DIV 1000, credential "
	"FROM integration_calls WHERE finished_at IS NULL AND started_at <= DATE_SUB(" NOW ", INTERVAL ? SECOND) "
	"ORDER BY started_at, seq LIMIT 500")
SVC_COLS(XCOL_SEQ, XCOL_ID, XCOL_INTEGRATION, XCOL_USER, XCOL_PROJECT, XCOL_METHOD, XCOL_HOST, XCOL_PATH, XCOL_STATUS,
	XCOL_ERROR, XCOL_STARTED, XCOL_FINISHED, XCOL_DURATION, XCOL_RUNNING, XCOL_CREDENTIAL)
SVC_STMT(STMT_XRAY_HISTORY,
	"SELECT seq, id, integration_id, user_id, project_id, method, host, path, status, error, " TS("started_at") ", "
	TS("finished_at") ", duration_ms, TIMESTAMPDIFF(MICROSECOND, started_at, " NOW ") DIV 1000, credential "
	"FROM integration_calls WHERE seq < ? ORDER BY seq DESC LIMIT ?")
/* whether workspace ? has any integration enabled (the agent offers integration_request only then) */
SVC_STMT(STMT_INTEG_ANY_ENABLED,
	"SELECT i.id FROM integrations i LEFT JOIN integration_workspace_settings s "
	"ON s.integration_id = i.id AND s.workspace_id = ? "
	"WHERE i.platform_enabled = 1 AND COALESCE(s.enabled, i.enabled) = 1 LIMIT 1")
SVC_COLS(IAECOL_ID)
