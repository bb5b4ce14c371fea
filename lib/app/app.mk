# app.mk: lib/app, the backend of the apps svc builds, served by svc-app under /_svc/ on each site's origin:
# the site of a request and its end user (app_site), sign-up and sign-in (app_auth), records under the
# rules of svc.data.json (app_data; the declaration itself is lib/project/app_decl), the declared calls
# with the project's secrets (app_fetch), client.js.
# May use: http, project, integ, auth, db, core (and agent, api may use it).
lib_libsvc_a_SOURCES += lib/app/app.h lib/app/app_site.c lib/app/app_auth.c lib/app/app_data.c
# files under /_svc/files (appfiles)
lib_libsvc_a_SOURCES += lib/app/app_files.h lib/app/app_files.c lib/db/db_stmts_appfiles.h

# client.js (docs/app-backend.md), kept as JavaScript in lib/app/client.js and compiled into svc-app as a
# C string the same way as the preview's script (lib/api/api.mk).
BUILT_SOURCES = lib/app/client_js.h
CLEANFILES = lib/app/client_js.h
EXTRA_DIST += lib/app/client.js
lib/app/client_js.h: $(top_srcdir)/lib/app/client.js
	$(AM_V_GEN)$(MKDIR_P) lib/app && sed -e '/^[[:space:]]*\/\//d' -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/?/\\?/g' \
		-e 's/^/"/' -e 's/$$/\\n"/' $(top_srcdir)/lib/app/client.js >$@.tmp && mv $@.tmp $@
lib/app/app_site.$(OBJEXT): lib/app/client_js.h
tests_unit_svc_unit_SOURCES += tests/unit/test_app.c
lib_libsvc_a_SOURCES += lib/app/app_fetch.c
tests_unit_svc_unit_SOURCES += tests/unit/test_app_fetch.c
