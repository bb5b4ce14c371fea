/* db_stmts.h: every SQL statement of the suite, in one table (X-macro: enum name, SQL text). */
/* Timestamps are read as "YYYY-MM-DD HH:MM:SS.ffffff" text (TS) and turned into RFC 3339 by svc_time_from_db(). */
#define TS(c) "DATE_FORMAT(" c ", '%Y-%m-%d %H:%i:%s.%f')"
#define NOW "UTC_TIMESTAMP(3)"
#define PROJECT_COLS "p.id, p.workspace_id, p.folder_id, p.slug, p.name, p.description, p.template, " \
	"p.visibility, p.thumbnail_url, " TS("p.published_at") ", p.custom_domain, " \
	TS("p.created_at") ", " TS("p.updated_at") ", p.created_by"


/*
 * One file of statements per area, each owned by its module; order does not matter.
 * A new area adds its file here and a unit test prepares every statement (tests/unit/test_db.c).
 */
#include "db/db_stmts_core.h"
#include "db/db_stmts_collab.h"
#include "db/db_stmts_agent.h"
#include "db/db_stmts_workspaces.h"
#include "db/db_stmts_auth.h"
