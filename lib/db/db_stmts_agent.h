/* db_stmts_agent.h: statements of the agent: plans, stops, usage and credits, providers, data keys, jobs (issue 5). Included by db_stmts.h only. */
SVC_STMT(STMT_AGENT_CHAT_SET_MODE,
	"UPDATE chats SET mode = ?, updated_at = " NOW " WHERE id = ?")
SVC_STMT(STMT_AGENT_PLAN_INSERT,
	"INSERT INTO chat_plans (chat_id, turn_id, plan, created_at) VALUES (?, ?, ?, " NOW ")")
SVC_STMT(STMT_AGENT_PLAN_LATEST,
	"SELECT plan, " TS("created_at") " FROM chat_plans WHERE chat_id = ? ORDER BY id DESC LIMIT 1")
SVC_COLS(PLCOL_PLAN, PLCOL_CREATED)
SVC_STMT(STMT_AGENT_SUMMARY_INSERT,
	"INSERT INTO chat_summaries (chat_id, up_to_event_id, summary, created_at) VALUES (?, ?, ?, " NOW ")")
SVC_STMT(STMT_AGENT_SUMMARY_LATEST,
	"SELECT up_to_event_id, summary FROM chat_summaries WHERE chat_id = ? ORDER BY id DESC LIMIT 1")
SVC_COLS(SMCOL_UP_TO, SMCOL_SUMMARY)
/*
 * The conversation after a summary: messages and tool traffic, oldest first: the newest 1000 events,
 * and of those the newest that hold 48 MiB of payload (images make user messages big), so loading
 * the history stays bounded.
 */
SVC_STMT(STMT_AGENT_HISTORY_AFTER,
	"SELECT id, type, payload FROM (SELECT id, type, payload, "
	"SUM(LENGTH(payload)) OVER (ORDER BY id DESC) - LENGTH(payload) AS newer_bytes FROM chat_events "
	"WHERE chat_id = ? AND id > ? AND type IN ('user.message', 'assistant.message', 'tool.call', 'tool.result', "
	"'tool.error', 'check.result') ORDER BY id DESC LIMIT 1000) t WHERE newer_bytes < 50331648 ORDER BY id")
SVC_COLS(HCOL_ID, HCOL_TYPE, HCOL_PAYLOAD)
SVC_STMT(STMT_AGENT_LAST_USAGE,
	"SELECT payload FROM chat_events WHERE chat_id = ? AND id > ? AND type = 'session.usage_info' "
	"ORDER BY id DESC LIMIT 1")
SVC_COLS(LUCOL_PAYLOAD)
SVC_STMT(STMT_AGENT_LAST_EVENT_ID,
	"SELECT COALESCE(MAX(id), 0) FROM chat_events WHERE chat_id = ?")
SVC_COLS(LECOL_ID)
SVC_STMT(STMT_AGENT_CREDIT_GET,
	"SELECT limit_usd, spent_usd FROM workspace_credits WHERE workspace_id = ?")
SVC_COLS(CRCOL_LIMIT, CRCOL_SPENT)
SVC_STMT(STMT_AGENT_CREDIT_ADD,
	"INSERT INTO workspace_credits (workspace_id, spent_usd, updated_at) VALUES (?, ?, " NOW ") "
	"ON DUPLICATE KEY UPDATE spent_usd = spent_usd + VALUES(spent_usd), updated_at = " NOW)
SVC_STMT(STMT_AGENT_CREDIT_SHOW,
	"SELECT limit_usd, spent_usd, " TS("updated_at") " FROM workspace_credits WHERE workspace_id = ?")
SVC_COLS(CSCOL_LIMIT, CSCOL_SPENT, CSCOL_UPDATED)
SVC_STMT(STMT_AGENT_CREDIT_SET_LIMIT,
	"INSERT INTO workspace_credits (workspace_id, limit_usd, spent_usd, updated_at) VALUES (?, ?, 0, " NOW ") "
	"ON DUPLICATE KEY UPDATE limit_usd = VALUES(limit_usd), updated_at = " NOW)
SVC_STMT(STMT_AGENT_PROVIDER_GET,
	"SELECT protocol, base_url, model, allowed_models, api_key, " TS("updated_at") ", tool_mode FROM workspace_ai_providers "
	"WHERE workspace_id = ?")
SVC_COLS(PVCOL_PROTOCOL, PVCOL_BASE_URL, PVCOL_MODEL, PVCOL_ALLOWED_MODELS, PVCOL_API_KEY, PVCOL_UPDATED, PVCOL_TOOL_MODE)
SVC_STMT(STMT_AGENT_PROVIDER_PUT,
	"INSERT INTO workspace_ai_providers (workspace_id, protocol, base_url, model, allowed_models, api_key, "
	"updated_by, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, " NOW ") ON DUPLICATE KEY UPDATE protocol = VALUES(protocol), "
	"base_url = VALUES(base_url), model = VALUES(model), allowed_models = VALUES(allowed_models), "
	"api_key = VALUES(api_key), updated_by = VALUES(updated_by), updated_at = " NOW)
SVC_STMT(STMT_AGENT_PROVIDER_PUT_KEEP_KEY,
	"INSERT INTO workspace_ai_providers (workspace_id, protocol, base_url, model, allowed_models, api_key, "
	"updated_by, updated_at) VALUES (?, ?, ?, ?, ?, NULL, ?, " NOW ") ON DUPLICATE KEY UPDATE "
	/* first, while base_url is still the old one: a key never follows a new base URL (two admins racing) */
	"api_key = IF(base_url = VALUES(base_url), api_key, NULL), protocol = VALUES(protocol), "
	"base_url = VALUES(base_url), model = VALUES(model), allowed_models = VALUES(allowed_models), "
	"updated_by = VALUES(updated_by), updated_at = " NOW)
SVC_STMT(STMT_AGENT_WKEY_LATEST,
	"SELECT key_id, sealed_key FROM workspace_keys WHERE workspace_id = ? ORDER BY key_id DESC LIMIT 1")
SVC_STMT(STMT_AGENT_WKEY_GET,
	"SELECT key_id, sealed_key FROM workspace_keys WHERE workspace_id = ? AND key_id = ?")
/* the columns of STMT_AGENT_WKEY_LATEST and STMT_AGENT_WKEY_GET */
SVC_COLS(KCOL_ID, KCOL_SEALED)
SVC_STMT(STMT_AGENT_WKEY_INSERT,
	"INSERT INTO workspace_keys (workspace_id, key_id, sealed_key, created_at) VALUES (?, ?, ?, " NOW ")")
SVC_STMT(STMT_JOB_INSERT,
	"INSERT INTO jobs (kind, payload, max_attempts, run_after, created_at, updated_at) "
	"VALUES (?, ?, ?, " NOW ", " NOW ", " NOW ")")
/* The oldest ready job: queued and due, or running with its lease run out. The index ix_jobs_ready (state,
 * run_after, id) is forced: by itself the optimizer walks the primary key for ORDER BY id LIMIT 1, through
 * every done job kept (EXPLAIN: type index, key PRIMARY), and FOR UPDATE locks each row it reads; with the
 * index it reads the ready rows only (type range, key ix_jobs_ready, filesort over them). */
#define JOB_READY_FROM "FROM jobs FORCE INDEX (ix_jobs_ready) " \
	"WHERE ((state = 'queued' AND run_after <= " NOW ") OR (state = 'running' AND locked_until < " NOW ")) "
SVC_STMT(STMT_JOB_PICK,
	"SELECT id, kind, payload, attempts, max_attempts " JOB_READY_FROM
	"ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED")
SVC_COLS(JCOL_ID, JCOL_KIND, JCOL_PAYLOAD, JCOL_ATTEMPTS, JCOL_MAX_ATTEMPTS)
/* the same, of the kinds of one lane (a comma-separated list, svc_jobs_take_as()): jobs of other kinds are
 * passed over, however old; the columns are STMT_JOB_PICK's (JCOL_*) */
SVC_STMT(STMT_JOB_PICK_KINDS,
	"SELECT id, kind, payload, attempts, max_attempts " JOB_READY_FROM
	"AND FIND_IN_SET(kind, ?) > 0 ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED")
SVC_STMT(STMT_JOB_LEASE,
	"UPDATE jobs SET state = 'running', attempts = attempts + 1, locked_until = " NOW " + INTERVAL ? SECOND, "
	"locked_by = ?, updated_at = " NOW " WHERE id = ? "
	"AND ((state = 'queued' AND run_after <= " NOW ") OR (state = 'running' AND locked_until < " NOW "))")
/* the running jobs leased by workers of one host ("host:%"): svc_jobs_recover() */
SVC_STMT(STMT_JOB_RUNNING_ON,
	"SELECT id, locked_by FROM jobs WHERE state = 'running' AND locked_by LIKE ? ORDER BY id LIMIT 1000")
SVC_COLS(JRCOL_ID, JRCOL_LOCKED_BY)
/* a dead worker's job: its lease ends now, so STMT_JOB_PICK takes it (the attempt it used counts) */
SVC_STMT(STMT_JOB_RELEASE,
	"UPDATE jobs SET locked_until = " NOW " - INTERVAL 1 SECOND, updated_at = " NOW " "
	"WHERE id = ? AND state = 'running' AND locked_by = ?")
SVC_STMT(STMT_JOB_DONE,
	"UPDATE jobs SET state = 'done', locked_until = NULL, updated_at = " NOW " WHERE id = ?")
SVC_STMT(STMT_JOB_RETRY,
	"UPDATE jobs SET state = 'queued', run_after = " NOW " + INTERVAL ? SECOND, last_error = ?, locked_until = NULL, "
	"updated_at = " NOW " WHERE id = ?")
/* waiting for room (SVC_E_RATE_LIMITED): queued again, the attempt it used given back */
SVC_STMT(STMT_JOB_DEFER,
	"UPDATE jobs SET state = 'queued', attempts = GREATEST(attempts, 1) - 1, run_after = " NOW " + INTERVAL ? SECOND, "
	"last_error = ?, locked_until = NULL, updated_at = " NOW " WHERE id = ?")
SVC_STMT(STMT_JOB_FAILED,
	"UPDATE jobs SET state = 'failed', last_error = ?, locked_until = NULL, updated_at = " NOW " WHERE id = ?")
SVC_STMT(STMT_JOB_GET,
	"SELECT state, attempts, last_error, kind FROM jobs WHERE id = ?")
SVC_COLS(JGCOL_STATE, JGCOL_ATTEMPTS, JGCOL_LAST_ERROR, JGCOL_KIND)
SVC_STMT(STMT_JOB_LAST_ID,
	"SELECT LAST_INSERT_ID()")
SVC_COLS(JLCOL_ID)
