# core.mk: lib/core, the base of libsvc: errors, settings, logging, bounded buffers and strict parsing (util),
# request-body validation (json), path confinement and safe file operations (fsx), SMTP mail,
# the SSRF guard of outward requests (outbound), the public suffix list (psl), a sandbox's own network
# namespace whose only way out is a listener served outside (netns), giving free heap pages back between
# requests (mem), one cgroup per sandboxed run bounding its memory, processes and CPU (cgroup),
# the registry-only CONNECT proxy of a sandbox's install step (egress).
# May use: the C library and the system libraries only; nothing else in lib/.
lib_libsvc_a_SOURCES += lib/core/err.c lib/core/err.h lib/core/util.c lib/core/util.h lib/core/config.c lib/core/config.h lib/core/config_table.c \
	lib/core/log.c lib/core/log.h lib/core/json.c lib/core/json.h lib/core/fsx.c lib/core/fsx.h lib/core/mail.c lib/core/mail.h \
	lib/core/outbound.c lib/core/outbound.h lib/core/psl.c lib/core/psl.h lib/core/netns.c lib/core/netns.h \
	lib/core/mem.c lib/core/mem.h lib/core/cgroup.c lib/core/cgroup.h \
	lib/core/egress.c lib/core/egress.h
tests_unit_svc_unit_SOURCES += tests/unit/test_core.c tests/unit/test_config.c tests/unit/test_fsx.c tests/unit/test_outbound.c \
	tests/unit/test_mem.c tests/unit/test_cgroup.c tests/unit/test_egress.c
