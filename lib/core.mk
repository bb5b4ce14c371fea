# core.mk: libsvc core: errors, config, log, util, json validation, http/router/SSE, db
lib_libsvc_a_SOURCES += lib/err.c lib/err.h lib/util.c lib/util.h lib/config.c lib/config.h \
	lib/log.c lib/log.h lib/json.c lib/json.h lib/http.c lib/http.h lib/db.c lib/db.h lib/db_stmts.h lib/db_stmts_core.h lib/db_stmts_collab.h lib/db_stmts_agent.h lib/db_stmts_workspaces.h lib/db_stmts_auth.h
tests_unit_svc_unit_SOURCES += tests/unit/test_core.c tests/unit/test_db.c tests/unit/test_http.c

