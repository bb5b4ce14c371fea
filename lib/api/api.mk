# api.mk: lib/api, the HTTP handlers, one file per resource; the responders in cgi-bin/ route to them.
# May use: agent, project, http, auth, db, core (and nothing in lib/ uses api).
lib_libsvc_a_SOURCES += lib/api/api.h lib/api/api_agent.h lib/api/api_internal.h lib/api/api_auth.h lib/api/api_auth.c \
	lib/api/api_account.c lib/api/api_items.c \
	lib/api/api_projects.c lib/api/api_chat.c lib/api/api_workspaces.c lib/api/api_ai_provider.c \
	lib/api/api_credits.c lib/api/api_budget.c lib/api/api_internal.c lib/api/api_files.c lib/api/api_thumbnails.c \
	lib/api/api_direct_save.c lib/api/api_deploy.c lib/api/api_deployments.c lib/api/api_chats.c \
	lib/api/api_web.h lib/api/api_web.c lib/api/api_preview.c lib/api/api_domains.c \
	lib/api/api_integrations.h lib/api/api_integrations.c lib/api/api_integrations_xray.c lib/api/api_integrations_hosts.c \
	lib/api/api_backend.c lib/api/api_git.c
lib_libsvc_a_SOURCES += lib/api/api_gitio.h lib/api/api_gitio.c

# The preview origin's script (docs/web.md "Visual editing"), kept as JavaScript in
# lib/api/preview_script.js and compiled into svc-preview as a C string: comment lines dropped,
# backslashes, quotes and "?" (trigraphs) escaped, one string literal per line.
BUILT_SOURCES += lib/api/preview_script.h
CLEANFILES += lib/api/preview_script.h
EXTRA_DIST += lib/api/preview_script.js
lib/api/preview_script.h: $(top_srcdir)/lib/api/preview_script.js
	$(AM_V_GEN)$(MKDIR_P) lib/api && sed -e '/^[[:space:]]*\/\//d' -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/?/\\?/g' \
		-e 's/^/"/' -e 's/$$/\\n"/' $(top_srcdir)/lib/api/preview_script.js >$@.tmp && mv $@.tmp $@
lib/api/api_preview.$(OBJEXT): lib/api/preview_script.h
# agentmisc: the AI-provider PUT's one transaction, against MariaDB (includes lib/api/api_ai_provider.c)
tests_unit_svc_unit_SOURCES += tests/unit/test_api_provider.c
lib_libsvc_a_SOURCES += lib/api/api_secrets.c
