/* worker.c: svc-wsd's worker threads: a FIFO of jobs each, run off the event loop, results handed back to it. */
#include <stdlib.h>
#include <string.h>

#include <mysql.h>

#include "core/err.h"
#include "core/log.h"
#include "core/util.h"
#include "worker.h"

void (*wsd_wake)(void);

/* Finished jobs, shared by every worker, drained by the event loop. */
static pthread_mutex_t done_lock = PTHREAD_MUTEX_INITIALIZER;
static struct wsd_job *done_head, *done_tail;

static void *worker_main(void *arg)
{
	struct wsd_worker *w = arg;

	for (;;) {
		struct wsd_job *job;

		pthread_mutex_lock(&w->lock);
		while (!w->head && !w->stop)
			pthread_cond_wait(&w->cond, &w->lock);
		job = w->head;
		if (!job) {
			pthread_mutex_unlock(&w->lock);
			break;
		}
		w->head = job->next;
		if (!w->head)
			w->tail = NULL;
		w->queued--;
		pthread_mutex_unlock(&w->lock);

		job->next = NULL;
		if (job->run)
			job->run(job, w);

		pthread_mutex_lock(&done_lock);
		if (done_tail)
			done_tail->next = job;
		else
			done_head = job;
		done_tail = job;
		pthread_mutex_unlock(&done_lock);
		if (wsd_wake)
			wsd_wake();
	}
	svc_db_close(w->db);
	w->db = NULL;
	mysql_thread_end();
	return NULL;
}

int wsd_worker_start(struct wsd_worker *w, const char *name, const struct svc_config *cfg)
{
	memset(w, 0, sizeof *w);
	w->name = name;
	w->cfg = cfg;
	if (pthread_mutex_init(&w->lock, NULL) != 0)
		return SVC_E_INTERNAL;
	if (pthread_cond_init(&w->cond, NULL) != 0) {
		pthread_mutex_destroy(&w->lock);
		return SVC_E_INTERNAL;
	}
	if (pthread_create(&w->thread, NULL, worker_main, w) != 0) {
		pthread_cond_destroy(&w->cond);
		pthread_mutex_destroy(&w->lock);
		return SVC_E_INTERNAL;
	}
	return 0;
}

void wsd_worker_push(struct wsd_worker *w, struct wsd_job *job)
{
	job->next = NULL;
	pthread_mutex_lock(&w->lock);
	if (w->tail)
		w->tail->next = job;
	else
		w->head = job;
	w->tail = job;
	w->queued++;
	pthread_cond_signal(&w->cond);
	pthread_mutex_unlock(&w->lock);
}

void wsd_worker_stop(struct wsd_worker *w)
{
	pthread_mutex_lock(&w->lock);
	w->stop = 1;
	pthread_cond_signal(&w->cond);
	pthread_mutex_unlock(&w->lock);
	pthread_join(w->thread, NULL);
	pthread_cond_destroy(&w->cond);
	pthread_mutex_destroy(&w->lock);
}

struct svc_db *wsd_worker_db(struct wsd_worker *w)
{
	static int64_t last_fail_ms;

	if (w->db)
		return w->db;
	if (svc_db_open(w->cfg, &w->db) < 0) {
		int64_t now = svc_mono_ms();
		if (now - last_fail_ms > 10000)
			svc_log_error("%s worker: MariaDB unreachable", w->name);
		last_fail_ms = now;
		w->db = NULL;
	}
	return w->db;
}

size_t wsd_worker_drain_done(void)
{
	struct wsd_job *list, *next;
	size_t n = 0;

	pthread_mutex_lock(&done_lock);
	list = done_head;
	done_head = done_tail = NULL;
	pthread_mutex_unlock(&done_lock);
	for (; list; list = next) {
		next = list->next;
		list->next = NULL;
		list->done(list);
		n++;
	}
	return n;
}
