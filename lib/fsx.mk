# fsx.mk: path confinement and safe file operations (fsx), per-project Git history (repo), and their tests
lib_libsvc_a_SOURCES += lib/fsx.c lib/fsx.h lib/repo.c lib/repo.h
tests_unit_svc_unit_SOURCES += tests/unit/test_fsx.c tests/unit/test_repo.c
