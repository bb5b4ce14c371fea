# project.mk: lib/project, a project loaded for a caller (permissions, JSON, creation, the queued first
# prompt: project), its design comments as JSON (comment), its files and history: its Git repository
# (repo, libgit2), direct save (gumbo) and thumbnails (headless Chromium); where its files live (paths),
# publishing (publish), preview builds (preview_build), the sandboxed build (build), dev servers (devserver), custom domains (domains)
# and quotas (quota); the git CLI (gitcmd) and Git in and out: imports, the mirror (gitio). No circle among
# its files: a file uses only those below it.
# May use: http, auth, db, core.
lib_libsvc_a_SOURCES += lib/project/project.c lib/project/project.h lib/project/paths.c lib/project/paths.h lib/project/comment.c lib/project/comment.h \
	lib/project/repo.c lib/project/repo.h \
	lib/project/direct_save.c lib/project/direct_save.h lib/project/thumbnail.c lib/project/thumbnail.h \
	lib/project/publish.c lib/project/publish.h lib/project/preview_build.c lib/project/preview_build.h lib/project/build.c lib/project/build.h \
	lib/project/sandbox.c lib/project/sandbox.h lib/project/deps.c lib/project/deps.h lib/project/devserver.c lib/project/devserver.h \
	lib/project/domains.c lib/project/domains.h \
	lib/project/quota.c lib/project/quota.h lib/project/app_decl.c lib/project/app_decl.h \
	lib/project/githttp.c lib/project/githttp.h lib/project/git_check.c
tests_unit_svc_unit_SOURCES += tests/unit/test_repo.c tests/unit/test_direct_save.c tests/unit/test_thumbnail.c \
	tests/unit/test_publish.c tests/unit/test_domains.c tests/unit/test_sandbox.c tests/unit/test_build.c tests/unit/test_deps.c \
	tests/unit/test_devserver.c tests/unit/test_githttp.c
lib_libsvc_a_SOURCES += lib/project/gitcmd.c lib/project/gitcmd.h lib/project/gitio.c lib/project/gitio.h
tests_unit_svc_unit_SOURCES += tests/unit/test_gitio.c
lib_libsvc_a_SOURCES += lib/project/preview_check.c lib/project/preview_check.h
tests_unit_svc_unit_SOURCES += tests/unit/test_preview_check.c
lib_libsvc_a_SOURCES += lib/project/app_fetch_decl.c lib/project/app_fetch_decl.h
