/* db_stmts_crypto.h: statements of svc-admin rotate-key (lib/auth/crypto_rotate.c). Included by db_stmts.h only. */

/*
 * Every column that holds a sealed secret (lib/auth/crypto.h) has a pair: a
 * page of its rows after a key (k1, k2) in key order, and a compare-and-set
 * write of one re-sealed value. Each page answers the same columns (RCOL_*):
 * the row's key in two parts (k2 '' for one-column keys), the row label the
 * value was sealed with (its additional authenticated data), the workspace
 * whose data key may have sealed it (NULL: the instance key only), and the
 * sealed text. Parameters: page (k1, k1, k2); write (new, k1, k2, old): it
 * changes nothing when the value changed since it was read.
 */
#define ROT_PAGE(name, cols, from, k1, k2) \
	SVC_STMT(name, "SELECT " cols " FROM " from " WHERE (" k1 " > ? OR (" k1 " = ? AND " k2 " > ?)) " \
		       "ORDER BY " k1 ", " k2 " LIMIT 100")
ROT_PAGE(STMT_ROT_WKEY_PAGE, "workspace_id, CAST(key_id AS CHAR), CONCAT(workspace_id, ':', key_id), NULL, sealed_key",
	 "workspace_keys", "workspace_id", "CAST(key_id AS CHAR)")
SVC_STMT(STMT_ROT_WKEY_SET,
	"UPDATE workspace_keys SET sealed_key = ? WHERE workspace_id = ? AND key_id = ? AND sealed_key = ?")
ROT_PAGE(STMT_ROT_AIKEY_PAGE, "workspace_id, '', workspace_id, workspace_id, api_key",
	 "workspace_ai_providers", "workspace_id", "''")
SVC_STMT(STMT_ROT_AIKEY_SET,
	"UPDATE workspace_ai_providers SET api_key = ? WHERE workspace_id = ? AND '' = ? AND api_key = ?")
ROT_PAGE(STMT_ROT_OAPP_PAGE,
	 "id, '', CONCAT(integration_id, ':', IF(scope = 'global', 'global', workspace_id)), workspace_id, client_secret",
	 "integration_oauth_apps", "id", "''")
SVC_STMT(STMT_ROT_OAPP_SET,
	"UPDATE integration_oauth_apps SET client_secret = ? WHERE id = ? AND '' = ? AND client_secret = ?")
ROT_PAGE(STMT_ROT_CRED_PAGE, "integration_id, '', CONCAT(integration_id, ':global'), NULL, value",
	 "integration_credentials", "integration_id", "''")
SVC_STMT(STMT_ROT_CRED_SET,
	"UPDATE integration_credentials SET value = ? WHERE integration_id = ? AND '' = ? AND value = ?")
ROT_PAGE(STMT_ROT_STATE_PAGE, "state_hash, '', CONCAT(state_hash, ':', user_id), NULL, verifier",
	 "integration_oauth_states", "state_hash", "''")
SVC_STMT(STMT_ROT_STATE_SET,
	"UPDATE integration_oauth_states SET verifier = ? WHERE state_hash = ? AND '' = ? AND verifier = ?")
ROT_PAGE(STMT_ROT_ATOKEN_PAGE, "user_id, provider, CONCAT(user_id, ':', provider), NULL, sealed_token",
	 "assistant_tokens", "user_id", "provider")
SVC_STMT(STMT_ROT_ATOKEN_SET,
	"UPDATE assistant_tokens SET sealed_token = ? WHERE user_id = ? AND provider = ? AND sealed_token = ?")
ROT_PAGE(STMT_ROT_CACCESS_PAGE, "id, '', CONCAT(integration_id, ':', user_id), NULL, access_token",
	 "integration_connections", "id", "''")
SVC_STMT(STMT_ROT_CACCESS_SET,
	"UPDATE integration_connections SET access_token = ? WHERE id = ? AND '' = ? AND access_token = ?")
ROT_PAGE(STMT_ROT_CREFRESH_PAGE, "id, '', CONCAT(integration_id, ':', user_id), NULL, refresh_token",
	 "integration_connections", "id", "''")
SVC_STMT(STMT_ROT_CREFRESH_SET,
	"UPDATE integration_connections SET refresh_token = ? WHERE id = ? AND '' = ? AND refresh_token = ?")
/* git-io: a project's mirror token (schema/025_git_io.sql), sealed with its workspace's key */
ROT_PAGE(STMT_ROT_GITREMOTE_PAGE, "r.project_id, '', r.project_id, p.workspace_id, r.token_sealed",
	 "project_git_remotes r JOIN projects p ON p.id = r.project_id", "r.project_id", "''")
SVC_STMT(STMT_ROT_GITREMOTE_SET,
	"UPDATE project_git_remotes SET token_sealed = ? WHERE project_id = ? AND '' = ? AND token_sealed = ?")
/* appfetch: the apps' project secrets (schema/028_app_fetch.sql), sealed with their workspace's key */
ROT_PAGE(STMT_ROT_PSECRET_PAGE, "s.project_id, s.name, CONCAT(s.project_id, ':', s.name), p.workspace_id, s.value_sealed",
	 "project_secrets s JOIN projects p ON p.id = s.project_id", "s.project_id", "s.name")
SVC_STMT(STMT_ROT_PSECRET_SET,
	"UPDATE project_secrets SET value_sealed = ? WHERE project_id = ? AND name = ? AND value_sealed = ?")
#undef ROT_PAGE
/* the columns of every STMT_ROT_*_PAGE */
SVC_COLS(RCOL_K1, RCOL_K2, RCOL_LABEL, RCOL_WORKSPACE, RCOL_SEALED)
