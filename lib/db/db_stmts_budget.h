/* db_stmts_budget.h: statements of the agent's spending caps, its spend per day, a workspace's instructions to the agent (issue 29, schema/026_agent_budget.sql). Included by db_stmts.h only. */
#define BUDGET_MONTH_START "DATE_FORMAT(UTC_DATE(), '%Y-%m-01')"
SVC_STMT(STMT_BUDGET_CAPS,
	"SELECT cap, limit_usd, warn_percent, block, " TS("updated_at") " FROM workspace_budget_caps "
	"WHERE workspace_id = ?")
SVC_COLS(BCCOL_CAP, BCCOL_LIMIT, BCCOL_WARN, BCCOL_BLOCK, BCCOL_UPDATED)
/* parameters: workspace, cap, limit, warn percent, block, user */
SVC_STMT(STMT_BUDGET_CAP_PUT,
	"INSERT INTO workspace_budget_caps (workspace_id, cap, limit_usd, warn_percent, block, updated_by, updated_at) "
	"VALUES (?, ?, ?, ?, ?, ?, " NOW ") ON DUPLICATE KEY UPDATE limit_usd = VALUES(limit_usd), "
	"warn_percent = VALUES(warn_percent), block = VALUES(block), updated_by = VALUES(updated_by), updated_at = " NOW)
SVC_STMT(STMT_BUDGET_CAP_DELETE,
	"DELETE FROM workspace_budget_caps WHERE workspace_id = ? AND cap = ?")
/*
 * What was spent today by the workspace, this month by the workspace, today by a member, a
 * project and a token. Parameters: user, project, token ("" for none), workspace.
 */
SVC_STMT(STMT_BUDGET_SPENT,
	"SELECT COALESCE(SUM(CASE WHEN kind = 'workspace' AND day = UTC_DATE() THEN spent_usd END), 0), "
	"COALESCE(SUM(CASE WHEN kind = 'workspace' THEN spent_usd END), 0), "
	"COALESCE(SUM(CASE WHEN kind = 'member' AND subject_id = ? AND day = UTC_DATE() THEN spent_usd END), 0), "
	"COALESCE(SUM(CASE WHEN kind = 'project' AND subject_id = ? AND day = UTC_DATE() THEN spent_usd END), 0), "
	"COALESCE(SUM(CASE WHEN kind = 'token' AND subject_id = ? AND day = UTC_DATE() THEN spent_usd END), 0) "
	"FROM agent_spend WHERE workspace_id = ? AND day >= " BUDGET_MONTH_START)
SVC_COLS(BSCOL_WS_DAY, BSCOL_WS_MONTH, BSCOL_MEMBER_DAY, BSCOL_PROJECT_DAY, BSCOL_TOKEN_DAY)
/* parameters: workspace, kind, subject, USD */
SVC_STMT(STMT_BUDGET_SPEND_ADD,
	"INSERT INTO agent_spend (workspace_id, day, kind, subject_id, spent_usd, updated_at) "
	"VALUES (?, UTC_DATE(), ?, ?, ?, " NOW ") "
	"ON DUPLICATE KEY UPDATE spent_usd = spent_usd + VALUES(spent_usd), updated_at = " NOW)
/* today's spend of a workspace's members, projects and tokens, for its admins */
SVC_STMT(STMT_BUDGET_TODAY,
	"SELECT kind, subject_id, spent_usd FROM agent_spend WHERE workspace_id = ? AND day = UTC_DATE() "
	"AND kind <> 'workspace' ORDER BY kind, spent_usd DESC, subject_id LIMIT 1000")
SVC_COLS(BTCOL_KIND, BTCOL_SUBJECT, BTCOL_SPENT)
/* every workspace's spend, for platform admins: today, this month, the credit's total and limit */
SVC_STMT(STMT_BUDGET_ADMIN_LIST,
	"SELECT w.id, w.name, w.kind, "
	"COALESCE((SELECT s.spent_usd FROM agent_spend s WHERE s.workspace_id = w.id AND s.day = UTC_DATE() "
	"AND s.kind = 'workspace' AND s.subject_id = w.id), 0) AS today, "
	"COALESCE((SELECT SUM(s.spent_usd) FROM agent_spend s WHERE s.workspace_id = w.id AND s.day >= "
	BUDGET_MONTH_START " AND s.kind = 'workspace'), 0) AS month, "
	"COALESCE(c.spent_usd, 0), c.limit_usd FROM workspaces w LEFT JOIN workspace_credits c ON c.workspace_id = w.id "
	"ORDER BY month DESC, today DESC, w.id LIMIT 1000")
SVC_COLS(BACOL_ID, BACOL_NAME, BACOL_KIND, BACOL_TODAY, BACOL_MONTH, BACOL_TOTAL, BACOL_LIMIT)
SVC_STMT(STMT_WS_INSTRUCTIONS_GET,
	"SELECT instructions, " TS("updated_at") " FROM workspace_instructions WHERE workspace_id = ?")
SVC_COLS(WICOL_TEXT, WICOL_UPDATED)
SVC_STMT(STMT_WS_INSTRUCTIONS_PUT,
	"INSERT INTO workspace_instructions (workspace_id, instructions, updated_by, updated_at) VALUES (?, ?, ?, " NOW ") "
	"ON DUPLICATE KEY UPDATE instructions = VALUES(instructions), updated_by = VALUES(updated_by), updated_at = " NOW)
SVC_STMT(STMT_WS_INSTRUCTIONS_DELETE,
	"DELETE FROM workspace_instructions WHERE workspace_id = ?")
/* a workspace provider's tool mode (schema/026: "native" or "text"), set after its PUT */
SVC_STMT(STMT_AGENT_PROVIDER_TOOL_MODE,
	"UPDATE workspace_ai_providers SET tool_mode = ? WHERE workspace_id = ?")
/* ---- one member's own daily cap (schema/031_member_caps.sql) ---- */
/* parameters: workspace, user */
SVC_STMT(STMT_MEMBER_CAP_GET,
	"SELECT limit_usd, warn_percent, block, " TS("updated_at") " FROM workspace_member_caps "
	"WHERE workspace_id = ? AND user_id = ?")
SVC_COLS(MPCOL_LIMIT, MPCOL_WARN, MPCOL_BLOCK, MPCOL_UPDATED)
/* parameters: limit, warn percent, block, changed by, workspace, user; no row when the user is not a member */
SVC_STMT(STMT_MEMBER_CAP_PUT,
	"INSERT INTO workspace_member_caps (workspace_id, user_id, limit_usd, warn_percent, block, updated_by, updated_at) "
	"SELECT m.workspace_id, m.user_id, ?, ?, ?, ?, " NOW " FROM workspace_members m "
	"WHERE m.workspace_id = ? AND m.user_id = ? ON DUPLICATE KEY UPDATE limit_usd = VALUES(limit_usd), "
	"warn_percent = VALUES(warn_percent), block = VALUES(block), updated_by = VALUES(updated_by), updated_at = " NOW)
/* parameters: workspace, user */
SVC_STMT(STMT_MEMBER_CAP_DELETE,
	"DELETE FROM workspace_member_caps WHERE workspace_id = ? AND user_id = ?")
/* every member of a workspace with their own cap (NULLs: none) and their spend today, for its admins */
SVC_STMT(STMT_MEMBER_CAP_LIST,
	"SELECT m.user_id, u.email, u.display_name, m.role, c.limit_usd, c.warn_percent, c.block, " TS("c.updated_at") ", "
	"COALESCE(s.spent_usd, 0) FROM workspace_members m JOIN users u ON u.id = m.user_id "
	"LEFT JOIN workspace_member_caps c ON c.workspace_id = m.workspace_id AND c.user_id = m.user_id "
	"LEFT JOIN agent_spend s ON s.workspace_id = m.workspace_id AND s.day = UTC_DATE() AND s.kind = 'member' "
	"AND s.subject_id = m.user_id WHERE m.workspace_id = ? ORDER BY m.created_at, m.user_id LIMIT 1000")
SVC_COLS(MQCOL_USER, MQCOL_EMAIL, MQCOL_NAME, MQCOL_ROLE, MQCOL_LIMIT, MQCOL_WARN, MQCOL_BLOCK, MQCOL_UPDATED,
	 MQCOL_SPENT)
/* the preview check's fix rounds a workspace allows (schema/030_agent_check.sql); NULL: the instance's */
SVC_STMT(STMT_AGENT_FIX_ROUNDS_GET,
	"SELECT fix_rounds FROM workspace_agent_checks WHERE workspace_id = ?")
SVC_COLS(FRCOL_ROUNDS)
/* parameters: workspace, rounds (NULL: the instance's), user */
SVC_STMT(STMT_AGENT_FIX_ROUNDS_PUT,
	"INSERT INTO workspace_agent_checks (workspace_id, fix_rounds, updated_by, updated_at) VALUES (?, ?, ?, " NOW ") "
	"ON DUPLICATE KEY UPDATE fix_rounds = VALUES(fix_rounds), updated_by = VALUES(updated_by), updated_at = " NOW)
