# cgi.mk: the FastCGI responders (one per endpoint group) and the tools
lib_libsvc_a_SOURCES += lib/api.h lib/api_auth.c lib/api_projects.c lib/api_chat.c
pkglibexec_PROGRAMS += cgi-bin/svc-auth.fcgi cgi-bin/svc-projects.fcgi cgi-bin/svc-chat.fcgi
cgi_bin_svc_auth_fcgi_SOURCES = cgi-bin/svc-auth.c
cgi_bin_svc_auth_fcgi_LDADD = $(SVC_LIBS)
cgi_bin_svc_projects_fcgi_SOURCES = cgi-bin/svc-projects.c
cgi_bin_svc_projects_fcgi_LDADD = $(SVC_LIBS)
cgi_bin_svc_chat_fcgi_SOURCES = cgi-bin/svc-chat.c
cgi_bin_svc_chat_fcgi_LDADD = $(SVC_LIBS)
sbin_PROGRAMS += tools/svc-migrate
tools_svc_migrate_SOURCES = tools/svc-migrate.c
tools_svc_migrate_LDADD = $(SVC_LIBS)
