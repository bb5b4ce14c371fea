# wsd.mk: build fragment of the collaboration daemon (svc-wsd) and its unit tests. Its files, top down
# (none uses a function of a file above it; tests/lint.sh refuses a circle): wsd.c (main, the lws
# protocol); session.c (sockets); the parts of a room behind its hook table: awareness.c, comments.c,
# disk.c, lease.c; room.c; conn.c (the send queue), store.c (jobs off the loop); worker.c, known.c,
# proto.c, merge.c.
tests_unit_svc_unit_SOURCES += tests/unit/test_wsd.c

if HAVE_LWS
bin_PROGRAMS += wsd/svc-wsd
wsd_svc_wsd_SOURCES = wsd/wsd.c wsd/wsd.h wsd/session.c wsd/session.h wsd/room.c wsd/room.h \
	wsd/awareness.c wsd/awareness.h wsd/comments.c wsd/comments.h wsd/disk.c wsd/disk.h wsd/lease.c wsd/lease.h \
	wsd/conn.c wsd/conn.h wsd/store.c wsd/wsd_store.h wsd/known.c wsd/worker.c wsd/worker.h \
	wsd/proto.c wsd/proto.h wsd/merge.c wsd/merge.h
wsd_svc_wsd_CFLAGS = $(AM_CFLAGS) $(LWS_CFLAGS)
wsd_svc_wsd_LDADD = $(SVC_LIBS) $(LWS_LIBS) -lpthread

# the benchmark's load driver (bench/wsd/run.sh), not installed
noinst_PROGRAMS += bench/wsd/wsd-drive
bench_wsd_wsd_drive_SOURCES = bench/wsd/drive.c
bench_wsd_wsd_drive_CFLAGS = $(AM_CFLAGS) $(LWS_CFLAGS)
bench_wsd_wsd_drive_LDADD = $(SVC_LIBS) $(LWS_LIBS)
endif
