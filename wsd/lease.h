/*
 * lease.h: svc-wsd's room leases in MariaDB (lease.c; table room_leases):
 * one instance serves a room at a time, among several (issue 19,
 * docs/collaboration.md "Several instances"). A room's load takes its lease
 * (store.c); this part of the room renews it, holds the room's updates while
 * it is not known to be this instance's, and moves the room when another
 * instance has it.
 */
#ifndef SVC_WSD_LEASE_H
#define SVC_WSD_LEASE_H

#include <stddef.h>

#include "core/config.h"

/* At start-up: adds the lease part to the rooms (room.h wsd_room_add_part). */
void wsd_lease_register(void);

/*
 * Writes this daemon's name in room_leases into out (`max` bytes): "<SVC_INSTANCE_ID or
 * hostname>:wsd:<SVC_WS_PORT>", so a daemon restarted on the same host and port takes its own
 * leases back at once. Returns 0 or SVC_E_INTERNAL.
 */
int wsd_lease_instance(const struct svc_config *cfg, char *out, size_t max);

/* At stop, after the workers ended: gives back every lease of this instance (its own connection). */
void wsd_lease_release_all(const struct svc_config *cfg);

#endif
