/* wsd.h: svc-wsd's global state, owned by the event loop thread and set by main (wsd.c); each file of the daemon has its own header for the rest. */
#ifndef SVC_WSD_H
#define SVC_WSD_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "core/config.h"
#include "core/util.h"
#include "worker.h"

/*
 * WSD_GROW(arr, cap, need): SVC_ARRAY_GROW (lib/core/util.h) for svc-wsd,
 * which has no way on without memory: aborts when the array cannot grow.
 */
#define WSD_GROW(arr, cap, need)                                 \
	do {                                                     \
		if (SVC_ARRAY_GROW(arr, cap, need) < 0)          \
			abort();                                 \
	} while (0)

/* The tick (room.c wsd_tick: persistence, saves, leases, awareness timeouts, unloading) runs this often. */
#define WSD_TICK_MS 25

struct lws_context;

struct wsd {
	struct svc_config cfg;
	struct lws_context *ctx;
	struct wsd_worker db_worker;  /* role lookups, loads, persistence */
	struct wsd_worker io_worker;  /* disk writes and reads, calls to the API */
	uint64_t next_sess_id;
	size_t nsess;
	size_t nrooms;
	int stopping;
	int64_t stop_deadline_ms;
	int trim_wanted;              /* big buffers were freed: hand free pages back (malloc_trim) */
	int64_t trimmed_ms;
	char instance[192];           /* this daemon's name in room_leases (wsd_lease_instance) */
	char internal_url[256];       /* where the API reaches it: SVC_WSD_INTERNAL_URL or http://127.0.0.1:<port> */
};
extern struct wsd *wsd_g; /* set by main (wsd.c) */

#endif
