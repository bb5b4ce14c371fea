# workspaces.mk: build fragment of workspaces, roles, folders, the permission module, thumbnails and direct save
lib_libsvc_a_SOURCES += lib/perm.c lib/perm.h lib/api_workspaces.c
tests_unit_svc_unit_SOURCES += tests/unit/test_perm.c
sbin_PROGRAMS += tools/svc-admin
tools_svc_admin_SOURCES = tools/svc-admin.c
tools_svc_admin_LDADD = $(SVC_LIBS)
lib_libsvc_a_SOURCES += lib/direct_save.c lib/direct_save.h
tests_unit_svc_unit_SOURCES += tests/unit/test_direct_save.c
lib_libsvc_a_SOURCES += lib/thumbnail.c lib/thumbnail.h
tests_unit_svc_unit_SOURCES += tests/unit/test_thumbnail.c
