/* db_stmts_auth.h: statements of OAuth, password reset, API tokens and rate limits (issue 7). Included by db_stmts.h only. */
