/* db_stmts_agent.h: statements of the agent: plans, stops, usage and credits (issue 5). Included by db_stmts.h only. */
