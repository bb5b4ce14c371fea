# db.mk: lib/db, MariaDB access: the connection, the one table of prepared statements (db_stmts*.h),
# and the job queue that svc-worker takes work from (SELECT ... FOR UPDATE SKIP LOCKED).
# May use: core.
lib_libsvc_a_SOURCES += lib/db/db.c lib/db/db.h lib/db/db_stmts.h lib/db/db_stmts_core.h lib/db/db_stmts_collab.h \
	lib/db/db_stmts_agent.h lib/db/db_stmts_workspaces.h lib/db/db_stmts_auth.h lib/db/db_stmts_deploy.h lib/db/db_stmts_domains.h \
	lib/db/db_stmts_integ.h lib/db/db_stmts_quota.h lib/db/db_stmts_cluster.h lib/db/db_stmts_crypto.h lib/db/db_stmts_budget.h lib/db/db_stmts_app.h \
	lib/db/jobs.c lib/db/jobs.h
lib_libsvc_a_SOURCES += lib/db/db_stmts_gitio.h
tests_unit_svc_unit_SOURCES += tests/unit/test_db.c tests/unit/test_jobs.c
lib_libsvc_a_SOURCES += lib/db/db_stmts_fetch.h
