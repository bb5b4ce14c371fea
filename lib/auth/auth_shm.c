/* auth_shm.c: the segment of shared memory that the responders of one host share: the revocation epoch and the rate-limit counters. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "auth/auth.h"
#include "core/config.h"
#include "core/err.h"
#include "core/util.h"

#define SHM_MAGIC 0x73766332u /* "svc2": the layout's version, in the name too */
#define SHM_SLOTS 4096        /* counters: distinct (rule, address) buckets live in one window on one host */
#define SHM_PROBES 32         /* slots looked at for a bucket before it is counted in MariaDB alone */

#define SHM_TEXT_MAX 64        /* "<rule>\n<key>" of a bucket, with its NUL: an address key fits */

/* One bucket's count on this host in its current window (svc_ratelimit_hit_host()). */
struct shm_slot {
	char text[SHM_TEXT_MAX]; /* the bucket, "<rule>\n<key>"; "" = never used */
	int64_t window_end;  /* s since the epoch; a slot whose window ended may be taken by another bucket */
	int64_t window;      /* the window's start, s */
	uint32_t hits;       /* this host's hits in the window */
	uint32_t flushed;    /* how many of them MariaDB has */
	uint32_t others;     /* the other hosts' hits in the window, as MariaDB last said */
	uint32_t pad;
	int64_t flushed_ms;  /* when this host's hits last went to MariaDB, ms since the epoch; 0 = not yet */
};

struct shm_seg {
	uint32_t magic;
	uint32_t slots;
	uint64_t seed;          /* random, of the segment: where a bucket's slot is cannot be chosen from outside */
	pthread_mutex_t lock;   /* process-shared and robust: a responder killed while holding it does not stop the others */
	_Atomic uint64_t epoch; /* raised by every revocation on this host (svc_shm_epoch_bump) */
	struct shm_slot slot[SHM_SLOTS];
};

/* This process's mapping of the host's segment, NULL when not attached (svc_shm_attach). */
static struct shm_seg *seg;

/* The segment's name: one per svc instance on the host, the instance told apart by its database settings. */
static int seg_name(const struct svc_config *cfg, char *out, size_t max)
{
	char text[2048], hex[SVC_SHA256_HEX_LEN + 1];
	int n = snprintf(text, sizeof text, "%s\n%s\n%u\n%s\n%s", cfg->db_socket ? cfg->db_socket : "",
			 cfg->db_host ? cfg->db_host : "", cfg->db_port, cfg->db_name ? cfg->db_name : "",
			 cfg->db_hosts ? cfg->db_hosts : "");

	if (n < 0 || (size_t)n >= sizeof text || svc_sha256_hex(text, (size_t)n, hex) < 0)
		return SVC_E_INTERNAL;
	/* and by the user it runs as: a responder of another user has a segment of its own */
	n = snprintf(out, max, "/svc-%x-%lu-%.16s", SHM_MAGIC, (unsigned long)geteuid(), hex);
	return n < 0 || (size_t)n >= max ? SVC_E_INTERNAL : 0;
}

/* Makes the lock of a new segment: shared between processes, robust. */
static int seg_init(struct shm_seg *s)
{
	pthread_mutexattr_t a;
	int err = SVC_E_INTERNAL;

	if (pthread_mutexattr_init(&a) != 0)
		return err;
	if (pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED) == 0 &&
	    pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST) == 0 && pthread_mutex_init(&s->lock, &a) == 0) {
		s->slots = SHM_SLOTS;
		atomic_store(&s->epoch, 1);
		if (svc_random(&s->seed, sizeof s->seed) == 0) {
			s->magic = SHM_MAGIC;
			err = 0;
		}
	}
	pthread_mutexattr_destroy(&a);
	return err;
}

int svc_shm_attach(const struct svc_config *cfg)
{
	char name[64];
	struct stat st;
	void *map = MAP_FAILED;
	int fd, err;

	if (seg)
		return 0;
	if ((err = seg_name(cfg, name, sizeof name)) < 0)
		return err;
	fd = shm_open(name, O_RDWR | O_CREAT, 0600);
	if (fd < 0)
		return SVC_E_UNAVAILABLE;
	err = SVC_E_UNAVAILABLE;
	/* the first process sizes and initialises it; the lock makes the others wait for that */
	if (flock(fd, LOCK_EX) < 0 || fstat(fd, &st) < 0)
		goto done;
	/* only a segment of this user with no other reader counts: anyone can make a name in /dev/shm */
	if (st.st_uid != geteuid() || (st.st_mode & 077) != 0)
		goto done;
	if (st.st_size == 0 && ftruncate(fd, (off_t)sizeof *seg) < 0)
		goto done;
	if (st.st_size != 0 && (size_t)st.st_size != sizeof *seg)
		goto done;
	map = mmap(NULL, sizeof *seg, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED)
		goto done;
	if (st.st_size == 0 && seg_init(map) < 0)
		goto done;
	if (((struct shm_seg *)map)->magic != SHM_MAGIC || ((struct shm_seg *)map)->slots != SHM_SLOTS)
		goto done;
	seg = map;
	map = MAP_FAILED;
	err = 0;
done:
	if (map != MAP_FAILED)
		munmap(map, sizeof *seg);
	/* unlocked by hand: the mapping holds the open file, so closing the descriptor would not release the flock */
	flock(fd, LOCK_UN);
	close(fd);
	return err;
}

void svc_shm_detach(void)
{
	if (seg)
		munmap(seg, sizeof *seg);
	seg = NULL;
}

uint64_t svc_shm_epoch(void)
{
	return seg ? atomic_load(&seg->epoch) : 0;
}

void svc_shm_epoch_bump(void)
{
	if (seg)
		atomic_fetch_add(&seg->epoch, 1);
}

static int seg_lock(void)
{
	int r = pthread_mutex_lock(&seg->lock);

	if (r == EOWNERDEAD) /* its holder died: the counters may be off by one hit, nothing worse */
		r = pthread_mutex_consistent(&seg->lock);
	return r == 0 ? 0 : SVC_E_INTERNAL;
}

/* Where bucket `text` starts looking for its slot: FNV-1a over the segment's seed and the text. */
static size_t home_of(const char *text)
{
	uint64_t h = 14695981039346656037ull;
	const unsigned char *p = (const unsigned char *)&seg->seed;
	size_t i;

	for (i = 0; i < sizeof seg->seed; i++)
		h = (h ^ p[i]) * 1099511628211ull;
	for (p = (const unsigned char *)text; *p; p++)
		h = (h ^ *p) * 1099511628211ull;
	return (size_t)(h % SHM_SLOTS);
}

/* The slot of bucket `text` (with the lock held), or when `take` a free one (never used, or its window over) taken for it; NULL when none is near. */
static struct shm_slot *slot_of(const char *text, int64_t now, int take)
{
	struct shm_slot *free_slot = NULL;
	size_t home = home_of(text), i;

	for (i = 0; i < SHM_PROBES; i++) {
		struct shm_slot *s = &seg->slot[(home + i) % SHM_SLOTS];
		if (strcmp(s->text, text) == 0)
			return s;
		if (!free_slot && (!s->text[0] || s->window_end <= now))
			free_slot = s;
		if (!s->text[0])
			break;
	}
	if (!take || !free_slot)
		return NULL;
	memset(free_slot, 0, sizeof *free_slot);
	memcpy(free_slot->text, text, strlen(text) + 1);
	return free_slot;
}

int svc_auth__shm_hit(const char *bucket, int64_t window, int64_t window_secs, int64_t now_ms, int64_t flush_ms,
		      struct svc_auth__shm_count *out)
{
	struct shm_slot *s;
	int err;

	if (!seg || !bucket[0] || strlen(bucket) >= SHM_TEXT_MAX)
		return SVC_E_UNAVAILABLE;
	if ((err = seg_lock()) < 0)
		return err;
	s = slot_of(bucket, now_ms / 1000, 1);
	if (!s) {
		pthread_mutex_unlock(&seg->lock);
		return SVC_E_UNAVAILABLE;
	}
	/* a process that read the clock just before the window turned counts into the new one */
	if (window > s->window) {
		s->window = window;
		s->window_end = window + window_secs;
		s->hits = s->flushed = s->others = 0;
		s->flushed_ms = 0;
	}
	if (s->hits < UINT32_MAX)
		s->hits++;
	out->hits = s->hits;
	out->others = s->others;
	out->unflushed = 0;
	/* one process at a time sends this host's new hits, at most once per flush_ms */
	if (s->hits > s->flushed && (s->flushed_ms == 0 || now_ms - s->flushed_ms >= flush_ms)) {
		out->unflushed = s->hits - s->flushed;
		s->flushed = s->hits;
		s->flushed_ms = now_ms;
	}
	out->flushed = s->flushed;
	pthread_mutex_unlock(&seg->lock);
	return 0;
}

void svc_auth__shm_others(const char *bucket, int64_t window, uint32_t others)
{
	struct shm_slot *s;

	if (!seg || seg_lock() < 0)
		return;
	s = slot_of(bucket, 0, 0);
	if (s && s->window == window)
		s->others = others;
	pthread_mutex_unlock(&seg->lock);
}
