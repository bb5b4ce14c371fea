# http.mk: lib/http, the FastCGI responder: the main loop and process pool, the router, requests,
# responses, cookies and server-sent events.
# May use: auth, db, core.
lib_libsvc_a_SOURCES += lib/http/http.c lib/http/http.h
tests_unit_svc_unit_SOURCES += tests/unit/test_http.c
