# tools.mk: the command-line tools and daemons besides the responders: svc-migrate (schema), svc-admin
# (platform admins), svc-worker (background jobs).
bin_PROGRAMS += tools/svc-migrate tools/svc-admin tools/svc-worker
tools_svc_migrate_SOURCES = tools/svc-migrate.c
tools_svc_migrate_LDADD = $(SVC_LIBS)
tools_svc_admin_SOURCES = tools/svc-admin.c tools/backup.c tools/backup.h
tools_svc_admin_LDADD = $(SVC_LIBS)
tools_svc_worker_SOURCES = tools/svc-worker.c
tools_svc_worker_LDADD = $(SVC_LIBS)
EXTRA_DIST += tests/fixtures/provider_double.py tests/fixtures/agent-review-prompt.txt
