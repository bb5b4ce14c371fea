/* lease.c: svc-wsd's room leases in MariaDB (table room_leases): one instance serves a room at a time, among several (issue 19). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/err.h"
#include "core/log.h"
#include "core/util.h"
#include "room.h"

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

int wsd_lease_take(struct svc_db *db, const char *project_id)
{
	struct svc_dbv p[5];
	uint64_t taken = 0;
	int err;

	p[0] = svc_dbv_str(project_id);
	p[1] = svc_dbv_str(wsd_g->instance);
	p[2] = svc_dbv_str(wsd_g->internal_url);
	p[3] = svc_dbv_i64(lease_secs());
	err = svc_db_run(db, STMT_LEASE_INSERT, p, 4, NULL, NULL);
	if (err != SVC_E_CONFLICT)
		return err;
	/* the room has a lease: ours (a restart on the same host and port), or expired, or another's */
	p[0] = svc_dbv_str(wsd_g->instance);
	p[1] = svc_dbv_str(wsd_g->internal_url);
	p[2] = svc_dbv_i64(lease_secs());
	p[3] = svc_dbv_str(project_id);
	p[4] = svc_dbv_str(wsd_g->instance);
	if ((err = svc_db_run(db, STMT_LEASE_TAKE, p, 5, NULL, &taken)) < 0)
		return err;
	if (taken != 1) {
		/* the balancer sends this room's clients here now: the holder hands it over at its next
		 * renewal, and a client's next attempt finds the room free */
		p[0] = svc_dbv_str(project_id);
		p[1] = svc_dbv_str(wsd_g->instance);
		svc_db_run(db, STMT_LEASE_WANT, p, 2, NULL, NULL);
	}
	return taken == 1 ? 0 : SVC_E_CONFLICT;
}

void wsd_lease_moved(struct wsd_room *r, const char *why)
{
	size_t i;

	if (r->lease_lost)
		return;
	r->lease_lost = 1;
	svc_log_info("project %s: room given up (%s); its clients reconnect", r->project_id, why);
	/* its unsaved updates are not written any more (the next instance's log may use their numbers):
	 * the clients hold them and send them again to the instance they reconnect to */
	for (i = 0; i < r->npending; i++)
		free(r->pending[i].data);
	r->npending = 0;
	for (i = 0; i < r->nsess; i++)
		wsd_sess_close(r->sess[i], WSD_CLOSE_MOVED, "room moved, reconnect");
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
		r->jobs--;
		r->lease_inflight = 0;
		if (j->error == 0 && j->affected == 1) {
			r->lease_ok_ms = j->started_ms;
			if (r->lease_stale)
				svc_log_info("project %s: lease renewed after MariaDB was out of reach; held updates "
					     "are stored", r->project_id);
			r->lease_stale = 0;
		} else if (j->error == 0)
			wsd_lease_moved(r, "another instance holds or wants its lease");
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

void wsd_lease_tick(struct wsd_room *r, int64_t now)
{
	int64_t ms = lease_secs() * 1000;

	if (r->lease_lost || r->state != WSD_R_READY)
		return;
	if (!r->lease_stale && now - r->lease_ok_ms >= ms * 5 / 6) {
		/* not renewed in time: MariaDB is out of reach (a renewal that reached it and found the
		 * lease another's moves the room, renew_done). The clients go on editing together here;
		 * their updates wait in memory, not stored (another instance may take the lease once it
		 * expired), until a renewal gets through: still ours, they are stored; another's, the
		 * room moves and its clients send them to that instance */
		r->lease_stale = 1;
		svc_log_warn("project %s: lease not renewed (MariaDB out of reach); the room is served on, its "
			     "updates held until MariaDB answers", r->project_id);
	}
	if (r->lease_inflight || (!r->lease_stale && now - r->lease_ok_ms < ms / 3) || now - r->lease_try_ms < 1000)
		return;
	r->lease_inflight = 1;
	r->lease_try_ms = now;
	r->jobs++;
	push(r, r->project_id, now);
}

int wsd_lease_held(const struct wsd_room *r, int64_t now)
{
	return !r->lease_lost && !r->lease_stale && now - r->lease_ok_ms < lease_secs() * 1000 * 5 / 6;
}

void wsd_lease_release(const char *project_id)
{
	push(NULL, project_id, svc_mono_ms());
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
