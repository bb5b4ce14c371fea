/* devd.h: svc-devd, the daemon that owns a host's dev servers (docs/operations.md "Dev servers"): what its two files share. */
#ifndef SVC_DEVD_H
#define SVC_DEVD_H

#include <pthread.h>
#include <stdint.h>

#include "core/config.h"
#include "project/devserver.h"

/* Where a dev server is in its life. */
enum devd_state {
	DEVD_STARTING = 0, /* its start thread runs: mirror, install, sandbox, waiting for it to listen */
	DEVD_RUNNING,      /* it listens: requests are proxied to it */
	DEVD_FAILED        /* it failed twice (a crash, then its restart): the preview is the build */
};

/* One project's dev server. Allocated one by one: the start thread and the connections keep pointers to it. */
struct devd_server {
	char id[37];             /* the project */
	char src[2048];          /* its working tree */
	char dir[2100];          /* SVC_DATA_DIR/builds/dev-<id>: app/ (the mirror), cache/, log, deps.key */
	int claim_fd;            /* the claim on dir (svc_sandbox_claim()) held while the server exists: no sweep takes it */
	enum devd_state state;
	struct svc_devserver_proc proc; /* while RUNNING */
	int log_fd;              /* dir/log, the dev server's output */
	int conns;               /* connections proxied to it now (an open HMR socket is a viewer) */
	int restarts;            /* restarts after a crash: one is allowed */
	int64_t last_view_ms;    /* svc_mono_ms() of the last request for it */
	int64_t started_ms, ready_ms, failed_ms, next_sync_ms;
	char why[1024];          /* FAILED: what went wrong, for the preview's page */
	unsigned long long stamp; /* FAILED: svc_devserver_tree_stamp() of the tree then; a change tries again */
	int64_t stamp_ms;        /* when the stamp was last compared */
	pthread_t thread;        /* STARTING: its start thread */
	int thread_live;
	int thread_done;         /* set by the thread (atomically) when it ends */
	int start_err;           /* the thread's result */
	/* the thread asks the loop to fork the sandbox (launch 1), the loop answers (launch 2, launch_err) */
	pthread_mutex_t launch_mu;
	pthread_cond_t launch_cv;
	int launch;
	enum svc_devserver_kind launch_kind;
	int launch_err;
	char launch_why[512];
};

/* The daemon's settings (read once at start). */
const struct svc_config *devd_cfg(void);

/* Wakes the event loop from another thread (a start ended). */
void devd_wake(void);

/*
 * Finds or starts the dev server of project `id` whose working tree is `src`
 * and records a view: a new one may first stop the least recently viewed to
 * stay within SVC_DEVSERVER_MAX; a new one claims its tree first
 * (svc_sandbox_claim()). Sets *out. Returns 0, SVC_E_UNAVAILABLE (every
 * place is taken by a server still starting, or a sweep is removing its
 * tree: try again), SVC_E_INTERNAL.
 */
int devd_server_view(const char *id, const char *src, struct devd_server **out);

/* The loop's periodic work: ended starts, crashed servers (restart once), idle stops, mirror syncs. */
void devd_servers_tick(void);

/* The servers, for the status answer: count and the i-th (NULL past the end). */
size_t devd_servers_count(void);
struct devd_server *devd_server_at(size_t i);

/* Stops every server (at exit). */
void devd_servers_stop_all(void);

/* devd.c: closes every proxied connection of `s` (it stopped). */
void devd_conns_drop(struct devd_server *s);

#endif
