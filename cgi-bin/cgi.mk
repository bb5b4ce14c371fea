# cgi.mk: the FastCGI responders, one per endpoint group: each is a route table and main().
pkglibexec_PROGRAMS += cgi-bin/svc-auth.fcgi cgi-bin/svc-projects.fcgi cgi-bin/svc-chat.fcgi cgi-bin/svc-internal.fcgi \
	cgi-bin/svc-preview.fcgi cgi-bin/svc-app.fcgi cgi-bin/svc-git.fcgi
cgi_bin_svc_auth_fcgi_SOURCES = cgi-bin/svc-auth.c
cgi_bin_svc_auth_fcgi_LDADD = $(SVC_LIBS)
cgi_bin_svc_projects_fcgi_SOURCES = cgi-bin/svc-projects.c
cgi_bin_svc_projects_fcgi_LDADD = $(SVC_LIBS)
cgi_bin_svc_chat_fcgi_SOURCES = cgi-bin/svc-chat.c
cgi_bin_svc_chat_fcgi_LDADD = $(SVC_LIBS)
cgi_bin_svc_internal_fcgi_SOURCES = cgi-bin/svc-internal.c
cgi_bin_svc_internal_fcgi_LDADD = $(SVC_LIBS)
cgi_bin_svc_preview_fcgi_SOURCES = cgi-bin/svc-preview.c
cgi_bin_svc_preview_fcgi_LDADD = $(SVC_LIBS)
cgi_bin_svc_app_fcgi_SOURCES = cgi-bin/svc-app.c
cgi_bin_svc_app_fcgi_LDADD = $(SVC_LIBS)
# Git's smart HTTP (docs/git.md): the responder, and svc's pre-receive hook in a directory of its own that
# svc-git hands git as core.hooksPath (git-hooks/ beside svc-git.fcgi, in the build tree and installed)
cgi_bin_svc_git_fcgi_SOURCES = cgi-bin/svc-git.c
cgi_bin_svc_git_fcgi_LDADD = $(SVC_LIBS)
githooksdir = $(pkglibexecdir)/git-hooks
githooks_PROGRAMS = cgi-bin/git-hooks/pre-receive
cgi_bin_git_hooks_pre_receive_SOURCES = cgi-bin/svc-git-hook.c
cgi_bin_git_hooks_pre_receive_LDADD = $(SVC_LIBS)
