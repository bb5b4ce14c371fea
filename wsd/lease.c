/* lease.c: svc-wsd's room leases in MariaDB (table room_leases): one instance serves a room at a time, among several (issue 19). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/err.h"
#include "core/log.h"
#include "core/util.h"
#include "lease.h"
#include "room.h"
#include "wsd.h"

/* A room's lease. */
struct lease_room {
	int64_t ok_ms;           /* the lease holds from this time (monotonic ms) for SVC_WSD_LEASE_SECONDS */
	int64_t try_ms;          /* the last renewal asked for */
	int inflight;
	int stale;               /* not renewed for five sixths of it (MariaDB out of reach): served on, nothing stored */
};

static int lease_id;

static struct lease_room *lease_of(struct wsd_room *r)
{
	return wsd_room_part(r, lease_id);
}

/* A renewal or a release, run on the db worker. */
struct lease_job {
	struct wsd_job base;
	struct wsd_room *room;   /* NULL for a release */
	char project_id[37];
	int64_t started_ms;      /* when the renewal ran (asked for, until then): the lease holds from then on */
	uint64_t affected;
	int error;
};

int wsd_lease_instance(const struct svc_config *cfg, char *out, size_t max)
{
	char host[128];
	int n;

	if (cfg->instance_id && cfg->instance_id[0]) {
		n = snprintf(out, max, "%s:wsd:%u", cfg->instance_id, cfg->ws_port);
	} else {
		if (gethostname(host, sizeof host) < 0)
			return SVC_E_INTERNAL;
		host[sizeof host - 1] = '\0';
		n = snprintf(out, max, "%s:wsd:%u", host, cfg->ws_port);
	}
	return n < 0 || (size_t)n >= max ? SVC_E_INTERNAL : 0;
}

static int64_t lease_secs(void)
{
	return (int64_t)wsd_g->cfg.wsd_lease_secs;
}

static void renew_run(struct wsd_job *jb, struct wsd_worker *w)
{
	struct lease_job *j = (struct lease_job *)jb;
	struct svc_db *db = wsd_worker_db(w);
	struct svc_dbv p[4];

	if (!db) {
		j->error = SVC_E_UNAVAILABLE;
		return;
	}
	/* the lease holds from no earlier than now: after a stall the job may have waited in the queue */
	j->started_ms = svc_mono_ms();
	p[0] = svc_dbv_i64(lease_secs());
	p[1] = svc_dbv_str(j->project_id);
	p[2] = svc_dbv_str(wsd_g->instance);
	p[3] = svc_dbv_i64(lease_secs());
	if (!j->room) {
		j->error = svc_db_run(db, STMT_LEASE_RELEASE, p + 1, 2, NULL, &j->affected);
		return;
	}
	j->error = svc_db_run(db, STMT_LEASE_RENEW, p, 4, NULL, &j->affected);
	if (j->error == 0 && j->affected == 0) {
		/* taken by another instance, or wanted by one: given back now, so the next client's
		 * attempt there takes it (a lease that is another's stays untouched) */
		svc_db_run(db, STMT_LEASE_RELEASE, p + 1, 2, NULL, NULL);
	}
}

static void renew_done(struct wsd_job *jb)
{
	struct lease_job *j = (struct lease_job *)jb;
	struct wsd_room *r = j->room;

	if (r) {
		struct lease_room *l = lease_of(r);
		r->jobs--;
		l->inflight = 0;
		if (j->error == 0 && j->affected == 1) {
			l->ok_ms = j->started_ms;
			if (l->stale)
				svc_log_info("project %s: lease renewed after MariaDB was out of reach; held updates "
					     "are stored", r->project_id);
			l->stale = 0;
			wsd_room_hold(r, WSD_HOLD_LEASE, 0);
		} else if (j->error == 0) {
			wsd_room_moved(r, "another instance holds or wants its lease");
		}
	}
	free(j);
}

static void push(struct wsd_room *r, const char *project_id, int64_t now)
{
	struct lease_job *j = calloc(1, sizeof *j);

	if (!j)
		abort();
	j->base.run = renew_run;
	j->base.done = renew_done;
	j->room = r;
	j->started_ms = now;
	snprintf(j->project_id, sizeof j->project_id, "%s", project_id);
	wsd_worker_push(&wsd_g->db_worker, &j->base);
}

/*
 * Each tick of a ready room: renews its lease on the db worker every third of
 * SVC_WSD_LEASE_SECONDS; when a renewal finds the lease taken, the room moves
 * (wsd_room_moved). When none succeeded for five sixths of it (MariaDB out of
 * reach) the room is served on (its clients keep editing together) but holds
 * its updates (WSD_HOLD_LEASE) and asks again every second until a renewal
 * gets through and says whether the lease is still this instance's.
 */
static int lease_tick(struct wsd_room *r, int64_t now)
{
	struct lease_room *l = lease_of(r);
	int64_t ms = lease_secs() * 1000;

	if (r->moved) {
		wsd_room_hold(r, WSD_HOLD_LEASE, 1);
		return 0;
	}
	if (!l->stale && now - l->ok_ms >= ms * 5 / 6) {
		/* not renewed in time: MariaDB is out of reach (a renewal that reached it and found the
		 * lease another's moves the room, renew_done). The clients go on editing together here;
		 * their updates wait in memory, not stored (another instance may take the lease once it
		 * expired), until a renewal gets through: still ours, they are stored; another's, the
		 * room moves and its clients send them to that instance */
		l->stale = 1;
		wsd_room_hold(r, WSD_HOLD_LEASE, 1);
		svc_log_warn("project %s: lease not renewed (MariaDB out of reach); the room is served on, its "
			     "updates held until MariaDB answers", r->project_id);
	}
	if (l->inflight || (!l->stale && now - l->ok_ms < ms / 3) || now - l->try_ms < 1000)
		return 0;
	l->inflight = 1;
	l->try_ms = now;
	r->jobs++;
	push(r, r->project_id, now);
	return 0;
}

/* The load took the lease: it holds from when the load asked for it. */
static void lease_load(struct wsd_room *r, struct wsd_load_result *res)
{
	lease_of(r)->ok_ms = res->lease_ms;
}

/* The room unloaded: its lease is given back (a job of the db worker). */
static void lease_dispose(struct wsd_room *r)
{
	push(NULL, r->project_id, svc_mono_ms());
}

static const struct wsd_part lease_part = {
	.name = "lease",
	.state_size = sizeof(struct lease_room),
	.on_load = lease_load,
	.on_tick = lease_tick,
	.on_dispose = lease_dispose,
};

void wsd_lease_register(void)
{
	lease_id = wsd_room_add_part(&lease_part);
}

void wsd_lease_release_all(const struct svc_config *cfg)
{
	struct svc_db *db = NULL;
	struct svc_dbv p = svc_dbv_str(wsd_g->instance);

	if (svc_db_open(cfg, &db) < 0)
		return;
	if (svc_db_run(db, STMT_LEASE_RELEASE_ALL, &p, 1, NULL, NULL) < 0)
		svc_log_error("the room leases of %s stay until they expire", wsd_g->instance);
	svc_db_close(db);
}
