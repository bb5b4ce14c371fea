/* db_stmts_workspaces.h: statements of workspaces, roles, folders and project listing (issue 6). Included by db_stmts.h only. */
