/* db_stmts.h: every SQL statement of the suite, in one table (X-macro: enum name, SQL text). */
/* Timestamps are read as "YYYY-MM-DD HH:MM:SS.ffffff" text (TS) and turned into RFC 3339 by svc_time_from_db(). */
#define TS(c) "DATE_FORMAT(" c ", '%Y-%m-%d %H:%i:%s.%f')"
#define NOW "UTC_TIMESTAMP(3)"
#define PROJECT_COLS "p.id, p.workspace_id, p.folder_id, p.slug, p.name, p.description, p.template, " \
	"p.visibility, p.thumbnail_url, " TS("p.published_at") ", p.custom_domain, " \
	TS("p.created_at") ", " TS("p.updated_at") ", p.created_by, " \
	"(SELECT i.state FROM project_imports i WHERE i.project_id = p.id), " \
	"(SELECT i.error FROM project_imports i WHERE i.project_id = p.id)"
/*
 * The columns of a project row: PROJECT_COLS, then each statement's own: the
 * listing's cursor (created_at as text) or the caller's role in PCOL_EXTRA,
 * and the platform-admin flag of STMT_PROJECT_GET_STATE in PCOL_ADMIN.
 */
SVC_COLS(PCOL_ID, PCOL_WORKSPACE, PCOL_FOLDER, PCOL_SLUG, PCOL_NAME, PCOL_DESCRIPTION,
	PCOL_TEMPLATE, PCOL_VISIBILITY, PCOL_THUMBNAIL, PCOL_PUBLISHED, PCOL_DOMAIN,
	PCOL_CREATED, PCOL_UPDATED, PCOL_CREATED_BY, PCOL_IMPORT_STATE, PCOL_IMPORT_ERROR, PCOL_EXTRA, PCOL_ADMIN)


/*
 * One file of statements per area, each owned by its module; order does not matter.
 * A new area adds its file here and a unit test prepares every statement (tests/unit/test_db.c).
 */
#include "db/db_stmts_core.h"
#include "db/db_stmts_collab.h"
#include "db/db_stmts_agent.h"
#include "db/db_stmts_workspaces.h"
#include "db/db_stmts_auth.h"
#include "db/db_stmts_deploy.h"
#include "db/db_stmts_domains.h"
#include "db/db_stmts_integ.h"
#include "db/db_stmts_quota.h"
#include "db/db_stmts_cluster.h"
#include "db/db_stmts_crypto.h"
#include "db/db_stmts_gitio.h"
#include "db/db_stmts_budget.h"
#include "db/db_stmts_app.h"
#include "db/db_stmts_fetch.h"
#include "db/db_stmts_appfiles.h"
