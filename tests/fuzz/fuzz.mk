# fuzz.mk: the libFuzzer targets of tests/fuzz (docs/hacking.md "Fuzzing"). Each target is built
# two ways, only when asked for (tests/fuzz/run.sh asks): NAME-replay, with the tree's own compiler
# and flags and tests/fuzz/replay.c as main, replays the seed corpus (under ASan+UBSan in
# build-test/); fuzz-NAME, in a tree configured with CC=clang and -fsanitize=fuzzer-no-link
# (build-fuzz/), is the libFuzzer binary.
# (tests/fuzz/run.sh has the same list.)
EXTRA_PROGRAMS = tests/fuzz/http-replay tests/fuzz/jwt-replay tests/fuzz/sse-replay tests/fuzz/plan-replay \
	tests/fuzz/direct_save-replay tests/fuzz/wsd-replay tests/fuzz/domain-replay tests/fuzz/app_decl-replay \
	tests/fuzz/fuzz-http tests/fuzz/fuzz-jwt tests/fuzz/fuzz-sse tests/fuzz/fuzz-plan \
	tests/fuzz/fuzz-direct_save tests/fuzz/fuzz-wsd tests/fuzz/fuzz-domain tests/fuzz/fuzz-app_decl

# (awareness.c and room.c are included by fuzz_wsd.c, which checks their state)
FUZZ_WSD_SOURCES = wsd/known.c wsd/session.c wsd/conn.c wsd/comments.c wsd/disk.c wsd/proto.c wsd/merge.c

tests_fuzz_http_replay_SOURCES = tests/fuzz/fuzz_http.c tests/fuzz/replay.c
tests_fuzz_http_replay_LDADD = $(SVC_LIBS)
tests_fuzz_fuzz_http_SOURCES = tests/fuzz/fuzz_http.c
tests_fuzz_fuzz_http_LDFLAGS = -fsanitize=fuzzer
tests_fuzz_fuzz_http_LDADD = $(SVC_LIBS)

tests_fuzz_jwt_replay_SOURCES = tests/fuzz/fuzz_jwt.c tests/fuzz/replay.c
tests_fuzz_jwt_replay_LDADD = $(SVC_LIBS)
tests_fuzz_fuzz_jwt_SOURCES = tests/fuzz/fuzz_jwt.c
tests_fuzz_fuzz_jwt_LDFLAGS = -fsanitize=fuzzer
tests_fuzz_fuzz_jwt_LDADD = $(SVC_LIBS)

tests_fuzz_sse_replay_SOURCES = tests/fuzz/fuzz_sse.c tests/fuzz/replay.c
tests_fuzz_sse_replay_LDADD = $(SVC_LIBS)
tests_fuzz_fuzz_sse_SOURCES = tests/fuzz/fuzz_sse.c
tests_fuzz_fuzz_sse_LDFLAGS = -fsanitize=fuzzer
tests_fuzz_fuzz_sse_LDADD = $(SVC_LIBS)

tests_fuzz_plan_replay_SOURCES = tests/fuzz/fuzz_plan.c tests/fuzz/replay.c
tests_fuzz_plan_replay_LDADD = $(SVC_LIBS)
tests_fuzz_fuzz_plan_SOURCES = tests/fuzz/fuzz_plan.c
tests_fuzz_fuzz_plan_LDFLAGS = -fsanitize=fuzzer
tests_fuzz_fuzz_plan_LDADD = $(SVC_LIBS)

tests_fuzz_direct_save_replay_SOURCES = tests/fuzz/fuzz_direct_save.c tests/fuzz/replay.c
tests_fuzz_direct_save_replay_LDADD = $(SVC_LIBS)
tests_fuzz_fuzz_direct_save_SOURCES = tests/fuzz/fuzz_direct_save.c
tests_fuzz_fuzz_direct_save_LDFLAGS = -fsanitize=fuzzer
tests_fuzz_fuzz_direct_save_LDADD = $(SVC_LIBS)

tests_fuzz_domain_replay_SOURCES = tests/fuzz/fuzz_domain.c tests/fuzz/replay.c
tests_fuzz_domain_replay_LDADD = $(SVC_LIBS)
tests_fuzz_fuzz_domain_SOURCES = tests/fuzz/fuzz_domain.c
tests_fuzz_fuzz_domain_LDFLAGS = -fsanitize=fuzzer
tests_fuzz_fuzz_domain_LDADD = $(SVC_LIBS)

# svc-wsd's message handling: its sources (but wsd.c, worker.c and store.c, which the target replaces)
tests_fuzz_wsd_replay_SOURCES = tests/fuzz/fuzz_wsd.c tests/fuzz/replay.c $(FUZZ_WSD_SOURCES)
tests_fuzz_wsd_replay_CFLAGS = $(AM_CFLAGS) $(LWS_CFLAGS)
tests_fuzz_wsd_replay_LDADD = $(SVC_LIBS) $(LWS_LIBS) -lpthread
tests_fuzz_fuzz_wsd_SOURCES = tests/fuzz/fuzz_wsd.c $(FUZZ_WSD_SOURCES)
tests_fuzz_fuzz_wsd_CFLAGS = $(AM_CFLAGS) $(LWS_CFLAGS)
tests_fuzz_fuzz_wsd_LDFLAGS = -fsanitize=fuzzer
tests_fuzz_fuzz_wsd_LDADD = $(SVC_LIBS) $(LWS_LIBS) -lpthread

# the integration credential templating and the scrubber (lib/integ/inject.h)
EXTRA_PROGRAMS += tests/fuzz/integ-replay tests/fuzz/fuzz-integ
tests_fuzz_integ_replay_SOURCES = tests/fuzz/fuzz_integ.c tests/fuzz/replay.c
tests_fuzz_integ_replay_LDADD = $(SVC_LIBS)
tests_fuzz_fuzz_integ_SOURCES = tests/fuzz/fuzz_integ.c
tests_fuzz_fuzz_integ_LDFLAGS = -fsanitize=fuzzer
tests_fuzz_fuzz_integ_LDADD = $(SVC_LIBS)

# svc.data.json's parser (lib/project/app_decl.c, the apps' backend)
tests_fuzz_app_decl_replay_SOURCES = tests/fuzz/fuzz_app_decl.c tests/fuzz/replay.c
tests_fuzz_app_decl_replay_LDADD = $(SVC_LIBS)
tests_fuzz_fuzz_app_decl_SOURCES = tests/fuzz/fuzz_app_decl.c
tests_fuzz_fuzz_app_decl_LDFLAGS = -fsanitize=fuzzer
tests_fuzz_fuzz_app_decl_LDADD = $(SVC_LIBS)
# git-io: a remote's URL and a ZIP to import (lib/project/gitio.h)
EXTRA_PROGRAMS += tests/fuzz/gitio-replay tests/fuzz/fuzz-gitio
tests_fuzz_gitio_replay_SOURCES = tests/fuzz/fuzz_gitio.c tests/fuzz/replay.c
tests_fuzz_gitio_replay_LDADD = $(SVC_LIBS)
tests_fuzz_fuzz_gitio_SOURCES = tests/fuzz/fuzz_gitio.c
tests_fuzz_fuzz_gitio_LDFLAGS = -fsanitize=fuzzer
tests_fuzz_fuzz_gitio_LDADD = $(SVC_LIBS)

# appfetch: a call's path under its declared URL (lib/project/app_fetch_decl.c, POST /_svc/fetch/:name)
EXTRA_PROGRAMS += tests/fuzz/app_fetch-replay tests/fuzz/fuzz-app_fetch
tests_fuzz_app_fetch_replay_SOURCES = tests/fuzz/fuzz_app_fetch.c tests/fuzz/replay.c
tests_fuzz_app_fetch_replay_LDADD = $(SVC_LIBS)
tests_fuzz_fuzz_app_fetch_SOURCES = tests/fuzz/fuzz_app_fetch.c
tests_fuzz_fuzz_app_fetch_LDFLAGS = -fsanitize=fuzzer
tests_fuzz_fuzz_app_fetch_LDADD = $(SVC_LIBS)

# build_log: a failed build's output read for its errors (svc_preview_check_build_log, lib/project/preview_check.c)
EXTRA_PROGRAMS += tests/fuzz/build_log-replay tests/fuzz/fuzz-build_log
tests_fuzz_build_log_replay_SOURCES = tests/fuzz/fuzz_build_log.c tests/fuzz/replay.c
tests_fuzz_build_log_replay_LDADD = $(SVC_LIBS)
tests_fuzz_fuzz_build_log_SOURCES = tests/fuzz/fuzz_build_log.c
tests_fuzz_fuzz_build_log_LDFLAGS = -fsanitize=fuzzer
tests_fuzz_fuzz_build_log_LDADD = $(SVC_LIBS)
