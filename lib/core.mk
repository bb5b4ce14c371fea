# core.mk: libsvc core: errors, config, log, util, json validation, http/router/SSE, db
lib_libsvc_a_SOURCES += lib/err.c lib/err.h
