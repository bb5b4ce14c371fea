# wsd.mk: build fragment of the collaboration daemon (svc-wsd) and its unit tests
tests_unit_svc_unit_SOURCES += tests/unit/test_wsd.c

if HAVE_LWS
bin_PROGRAMS += wsd/svc-wsd
wsd_svc_wsd_SOURCES = wsd/wsd.c wsd/wsd.h wsd/room.c wsd/room.h wsd/session.c wsd/awareness.c wsd/comments.c \
	wsd/disk.c wsd/known.c wsd/store.c wsd/wsd_store.h wsd/worker.c wsd/proto.c wsd/merge.c \
	wsd/lease.c
wsd_svc_wsd_CFLAGS = $(AM_CFLAGS) $(LWS_CFLAGS)
wsd_svc_wsd_LDADD = $(SVC_LIBS) $(LWS_LIBS) -lpthread

# the benchmark's load driver (bench/wsd/run.sh), not installed
noinst_PROGRAMS += bench/wsd/wsd-drive
bench_wsd_wsd_drive_SOURCES = bench/wsd/drive.c
bench_wsd_wsd_drive_CFLAGS = $(AM_CFLAGS) $(LWS_CFLAGS)
bench_wsd_wsd_drive_LDADD = $(SVC_LIBS) $(LWS_LIBS)
endif
