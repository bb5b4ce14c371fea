/* db_stmts_collab.h: statements of the collaboration daemon and design comments (issue 4). Included by db_stmts.h only. */
