/* db_stmts_domains.h: statements of workspace plans and custom domains (issue 15, lib/project/domains.c). Included by db_stmts.h only. */

/* plans */
SVC_STMT(STMT_WS_PLAN_GET,
	"SELECT id, name, plan FROM workspaces WHERE id = ?")
SVC_COLS(WPCOL_ID, WPCOL_NAME, WPCOL_PLAN)
/* the plan, locking the workspace row so two adds never both pass its limit */
SVC_STMT(STMT_WS_PLAN_LOCK,
	"SELECT id, name, plan FROM workspaces WHERE id = ? FOR UPDATE")
SVC_STMT(STMT_WS_PLAN_SET,
	"UPDATE workspaces SET plan = ?, updated_at = " NOW " WHERE id = ?")

/* custom domains */
SVC_STMT(STMT_DOMAIN_COUNT_WS,
	"SELECT COUNT(*) FROM custom_domains d JOIN projects p ON p.id = d.project_id WHERE p.workspace_id = ?")
SVC_COLS(CDCCOL_COUNT)
SVC_STMT(STMT_DOMAIN_INSERT,
	"INSERT INTO custom_domains (id, project_id, domain, status, created_by, created_at, updated_at, next_check_at, "
	"txt_token) VALUES (?, ?, ?, 'pending_dns', ?, " NOW ", " NOW ", DATE_ADD(" NOW ", INTERVAL ? SECOND), ?)")
/* who has name ? already (issue 25, item 2): each row's workspace and status */
SVC_STMT(STMT_DOMAIN_NAME_ROWS,
	"SELECT p.workspace_id, d.status FROM custom_domains d JOIN projects p ON p.id = d.project_id "
	"WHERE d.domain = ? LIMIT 1000")
SVC_COLS(CDNCOL_WORKSPACE, CDNCOL_STATUS)
/* the hold on a removed name, while it lasts */
SVC_STMT(STMT_DOMAIN_HOLD_GET,
	"SELECT workspace_id, " TS("held_until") " FROM domain_holds WHERE domain = ? AND held_until > " NOW)
SVC_COLS(CDHCOL_WORKSPACE, CDHCOL_UNTIL)
/* holds name ? for workspace ? for ? seconds */
SVC_STMT(STMT_DOMAIN_HOLD_SET,
	"INSERT INTO domain_holds (domain, workspace_id, held_until, created_at) "
	"VALUES (?, ?, DATE_ADD(" NOW ", INTERVAL ? SECOND), " NOW ") "
	"ON DUPLICATE KEY UPDATE workspace_id = VALUES(workspace_id), held_until = VALUES(held_until)")
/* another row (not id ?) of name ? that the web servers serve */
SVC_STMT(STMT_DOMAIN_SERVED_ELSEWHERE,
	"SELECT COUNT(*) FROM custom_domains WHERE domain = ? AND id <> ? "
	"AND status IN ('pending_verification', 'active')")
SVC_COLS(CDECOL_COUNT)
SVC_STMT(STMT_DOMAIN_LIST,
	"SELECT id, domain, status, reason, " TS("checked_at") ", txt_token FROM custom_domains "
	"WHERE project_id = ? ORDER BY created_at, id LIMIT 100")
SVC_COLS(CDLCOL_ID, CDLCOL_DOMAIN, CDLCOL_STATUS, CDLCOL_REASON, CDLCOL_CHECKED, CDLCOL_TOKEN)
/* a domain with what its checks need: the project, its slug, whether it is published and not deleted */
SVC_STMT(STMT_DOMAIN_GET,
	"SELECT d.id, d.domain, d.status, d.reason, " TS("d.checked_at") ", d.txt_token, d.project_id, d.attempts, "
	"d.address, p.slug, p.published_at IS NOT NULL AND p.deleted_at IS NULL, p.workspace_id, "
	TS("d.check_queued_at") " FROM custom_domains d JOIN projects p ON p.id = d.project_id WHERE d.id = ?")
SVC_COLS(CDGCOL_ID, CDGCOL_DOMAIN, CDGCOL_STATUS, CDGCOL_REASON, CDGCOL_CHECKED, CDGCOL_TOKEN, CDGCOL_PROJECT,
	CDGCOL_ATTEMPTS, CDGCOL_ADDRESS, CDGCOL_SLUG, CDGCOL_LIVE, CDGCOL_WORKSPACE, CDGCOL_QUEUED)
SVC_STMT(STMT_DOMAIN_DELETE,
	"DELETE FROM custom_domains WHERE id = ?")
/* the outcome of a check: status, reason, attempts, address, seconds to the next check (NULL: none), id */
SVC_STMT(STMT_DOMAIN_SET_STATE,
	"UPDATE custom_domains SET status = ?, reason = ?, attempts = ?, address = ?, checked_at = " NOW ", "
	"next_check_at = DATE_ADD(" NOW ", INTERVAL ? SECOND), updated_at = " NOW " WHERE id = ?")
/* the project's customDomain: its first active domain */
SVC_STMT(STMT_DOMAIN_SYNC_PROJECT,
	"UPDATE projects SET custom_domain = (SELECT d.domain FROM custom_domains d WHERE d.project_id = projects.id "
	"AND d.status = 'active' ORDER BY d.created_at, d.id LIMIT 1) WHERE id = ?")
SVC_STMT(STMT_DOMAIN_DUE,
	"SELECT id FROM custom_domains WHERE next_check_at <= " NOW " ORDER BY next_check_at LIMIT 20")
SVC_COLS(CDDCOL_ID)
/*
 * a check by hand (POST /domains/:domainId/verify, issue 25 item 4), under the workspace's lock:
 * seconds left of domain ?'s cooldown (? seconds from the last ask), whether a check of it is in
 * flight (queued within the last ? seconds), and how many of its workspace's are
 */
SVC_STMT(STMT_DOMAIN_VERIFY_STATE,
	"SELECT IFNULL(GREATEST(0, ? - TIMESTAMPDIFF(SECOND, d.verify_asked_at, " NOW ")), 0), "
	"d.check_queued_at > DATE_SUB(" NOW ", INTERVAL ? SECOND), "
	"(SELECT COUNT(*) FROM custom_domains d2 JOIN projects p2 ON p2.id = d2.project_id "
	"WHERE p2.workspace_id = p.workspace_id AND d2.check_queued_at > DATE_SUB(" NOW ", INTERVAL ? SECOND)) "
	"FROM custom_domains d JOIN projects p ON p.id = d.project_id WHERE d.id = ?")
SVC_COLS(CDVCOL_COOLDOWN_LEFT, CDVCOL_IN_FLIGHT, CDVCOL_WS_IN_FLIGHT)
/* takes the ask of domain ? (affected 1) unless one came within the last ? seconds (the cooldown) */
SVC_STMT(STMT_DOMAIN_VERIFY_ASK,
	"UPDATE custom_domains SET verify_asked_at = " NOW " WHERE id = ? "
	"AND (verify_asked_at IS NULL OR verify_asked_at <= DATE_SUB(" NOW ", INTERVAL ? SECOND))")
/* queues a check by hand of domain ?: the periodic round leaves it alone for ? seconds */
SVC_STMT(STMT_DOMAIN_VERIFY_QUEUE,
	"UPDATE custom_domains SET check_queued_at = " NOW ", "
	"next_check_at = DATE_ADD(" NOW ", INTERVAL ? SECOND) WHERE id = ?")
SVC_STMT(STMT_DOMAIN_VERIFY_DONE,
	"UPDATE custom_domains SET check_queued_at = NULL WHERE id = ?")
/* takes a due domain for one check (affected 1) by moving its next check ? seconds ahead */
SVC_STMT(STMT_DOMAIN_CLAIM,
	"UPDATE custom_domains SET next_check_at = DATE_ADD(" NOW ", INTERVAL ? SECOND) "
	"WHERE id = ? AND next_check_at <= " NOW)
/* the domains the web servers serve (and Caddy certifies): their DNS points here, the site is live */
#define DOMAIN_SERVED "d.status IN ('pending_verification', 'active') AND p.published_at IS NOT NULL AND p.deleted_at IS NULL"
SVC_STMT(STMT_DOMAIN_SERVED,
	"SELECT d.domain, p.slug FROM custom_domains d JOIN projects p ON p.id = d.project_id "
	"WHERE " DOMAIN_SERVED " ORDER BY d.domain LIMIT 100000")
SVC_COLS(CDSCOL_DOMAIN, CDSCOL_SLUG)
SVC_STMT(STMT_DOMAIN_ASK,
	"SELECT d.id FROM custom_domains d JOIN projects p ON p.id = d.project_id WHERE d.domain = ? AND " DOMAIN_SERVED)
SVC_STMT(STMT_SITE_ASK,
	"SELECT id FROM projects WHERE slug = ? AND published_at IS NOT NULL AND deleted_at IS NULL")
