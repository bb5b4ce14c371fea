# yjs.mk: build fragment of lib/yjs (the Yjs CRDT core), its tool, tests and fuzz replay driver
# May use: core (err.h) only.
lib_libsvc_a_SOURCES += lib/yjs/yjs.h lib/yjs/yjs_int.h lib/yjs/encoding.c lib/yjs/doc.c \
	lib/yjs/store.c lib/yjs/item.c lib/yjs/transaction.c lib/yjs/delete_set.c lib/yjs/pack.c \
	lib/yjs/update.c lib/yjs/types.c

bin_PROGRAMS += tools/svc-yjs
tools_svc_yjs_SOURCES = tools/svc-yjs.c
tools_svc_yjs_LDADD = $(SVC_LIBS)

tests_unit_svc_unit_SOURCES += tests/unit/test_yjs.c tests/unit/test_yjs_batch.c

# the conformance driver used by tests/yjs/run.sh (built by `make`, not installed)
noinst_PROGRAMS += tests/yjs/yjs-driver
tests_yjs_yjs_driver_SOURCES = tests/yjs/yjs-driver.c
tests_yjs_yjs_driver_LDADD = $(SVC_LIBS)

# corpus replay of the libFuzzer target (tests/fuzz), built with the normal compiler and flags
noinst_PROGRAMS += tests/fuzz/yjs-replay
tests_fuzz_yjs_replay_SOURCES = tests/fuzz/fuzz_yjs.c tests/fuzz/replay.c
tests_fuzz_yjs_replay_LDADD = $(SVC_LIBS)
