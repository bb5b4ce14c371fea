# devd.mk: svc-devd, the daemon that owns a host's dev servers (docs/operations.md "Dev servers"): devd.c
# (main, the event loop, the proxied connections), servers.c (each dev server's life). May use lib/ but api.
bin_PROGRAMS += devd/svc-devd
devd_svc_devd_SOURCES = devd/devd.c devd/servers.c devd/devd.h
devd_svc_devd_LDADD = $(SVC_LIBS) -lpthread
