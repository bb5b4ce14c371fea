# wsd.mk: build fragment of the collaboration daemon (svc-wsd), the internal-call library and their tests
lib_libsvc_a_SOURCES += lib/internal.c lib/internal.h lib/api_internal.c lib/api_internal.h

pkglibexec_PROGRAMS += cgi-bin/svc-internal.fcgi
cgi_bin_svc_internal_fcgi_SOURCES = cgi-bin/svc-internal.c
cgi_bin_svc_internal_fcgi_LDADD = $(SVC_LIBS)

tests_unit_svc_unit_SOURCES += tests/unit/test_internal.c tests/unit/test_wsd.c

if HAVE_LWS
sbin_PROGRAMS += wsd/svc-wsd
wsd_svc_wsd_SOURCES = wsd/wsd.c wsd/wsd.h wsd/room.c wsd/store.c wsd/wsd_store.h wsd/worker.c wsd/proto.c wsd/merge.c
wsd_svc_wsd_CFLAGS = $(AM_CFLAGS) $(LWS_CFLAGS)
wsd_svc_wsd_LDADD = $(SVC_LIBS) $(LWS_LIBS) -lpthread

# the benchmark's load driver (bench/wsd/run.sh), not installed
noinst_PROGRAMS += bench/wsd/wsd-drive
bench_wsd_wsd_drive_SOURCES = bench/wsd/drive.c
bench_wsd_wsd_drive_CFLAGS = $(AM_CFLAGS) $(LWS_CFLAGS)
bench_wsd_wsd_drive_LDADD = $(SVC_LIBS) $(LWS_LIBS)
endif
