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
	"INSERT INTO custom_domains (id, project_id, domain, status, created_by, created_at, updated_at, next_check_at) "
	"VALUES (?, ?, ?, 'pending_dns', ?, " NOW ", " NOW ", DATE_ADD(" NOW ", INTERVAL ? SECOND))")
SVC_STMT(STMT_DOMAIN_LIST,
	"SELECT id, domain, status, reason, " TS("checked_at") " FROM custom_domains "
	"WHERE project_id = ? ORDER BY created_at, id LIMIT 100")
SVC_COLS(CDLCOL_ID, CDLCOL_DOMAIN, CDLCOL_STATUS, CDLCOL_REASON, CDLCOL_CHECKED)
/* a domain with what its checks need: the project, its slug, whether it is published and not deleted */
SVC_STMT(STMT_DOMAIN_GET,
	"SELECT d.id, d.domain, d.status, d.reason, " TS("d.checked_at") ", d.project_id, d.attempts, d.address, "
	"p.slug, p.published_at IS NOT NULL AND p.deleted_at IS NULL "
	"FROM custom_domains d JOIN projects p ON p.id = d.project_id WHERE d.id = ?")
SVC_COLS(CDGCOL_ID, CDGCOL_DOMAIN, CDGCOL_STATUS, CDGCOL_REASON, CDGCOL_CHECKED, CDGCOL_PROJECT, CDGCOL_ATTEMPTS,
	CDGCOL_ADDRESS, CDGCOL_SLUG, CDGCOL_LIVE)
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
