/* worker.h: svc-wsd's worker threads (worker.c): a FIFO of jobs each, run off the event loop with the worker's own MariaDB connection, finished jobs handed back to the loop. */
#ifndef SVC_WSD_WORKER_H
#define SVC_WSD_WORKER_H

#include <pthread.h>
#include <stddef.h>

#include "core/config.h"
#include "db/db.h"

struct wsd_worker;
struct wsd_job;

/* Runs on a worker thread with that worker's database connection (may be NULL when MariaDB is down). */
typedef void (*wsd_job_run)(struct wsd_job *job, struct wsd_worker *w);
/* Runs on the event loop once the job ran; frees the job. */
typedef void (*wsd_job_done)(struct wsd_job *job);

struct wsd_job {
	struct wsd_job *next;
	wsd_job_run run;
	wsd_job_done done;
};

struct wsd_worker {
	const char *name;
	const struct svc_config *cfg;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct wsd_job *head, *tail;
	size_t queued;
	int stop;
	struct svc_db *db;
};

/* Starts a worker thread. Returns 0 or SVC_E_INTERNAL. */
int wsd_worker_start(struct wsd_worker *w, const char *name, const struct svc_config *cfg);
/* Queues a job (FIFO per worker). */
void wsd_worker_push(struct wsd_worker *w, struct wsd_job *job);
/* Stops the thread after the queued jobs ran; their done callbacks still run from wsd_worker_drain_done(). */
void wsd_worker_stop(struct wsd_worker *w);
/* The worker's database connection, opened (again) when needed; NULL when MariaDB is unreachable. */
struct svc_db *wsd_worker_db(struct wsd_worker *w);
/* Runs the done callbacks of finished jobs (event loop only). Returns how many ran. */
size_t wsd_worker_drain_done(void);
/* Set by main: called (from any thread) when a job finished, to wake the event loop. */
extern void (*wsd_wake)(void);

#endif
