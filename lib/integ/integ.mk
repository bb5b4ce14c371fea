# integ.mk: lib/integ, integrations: the catalogue's import, ids and auth types, the admin audit log,
# sealed platform credentials (integ), and per-user OAuth with the credential an integration call uses
# (integ_oauth; libcurl), what a credential adds to a call and its scrubbing from the answer (inject).
# May use: auth, db, core.
lib_libsvc_a_SOURCES += lib/integ/integ.c lib/integ/integ.h lib/integ/integ_oauth.c lib/integ/integ_oauth.h \
	lib/integ/inject.c lib/integ/inject.h
tests_unit_svc_unit_SOURCES += tests/unit/test_integ.c
