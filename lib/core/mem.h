/* mem.h: handing the heap's free pages back to the kernel between requests in a long-lived process (glibc malloc_trim). */
#ifndef SVC_CORE_MEM_H
#define SVC_CORE_MEM_H

#include <stddef.h>

/* What svc_mem_release() remembers between calls: zero it before the first call. */
struct svc_mem_watch {
	size_t base_kb; /* the process's resident size (kB) after the last release, 0 before the first */
	int statm_fd;   /* /proc/self/statm kept open for the next call (read again with pread), when statm_pid */
	int statm_pid;  /* the process that opened statm_fd (a forked child opens its own); 0 = none open */
};

/*
 * svc_mem_release: when the process's resident size (VmRSS, /proc/self/statm)
 * is more than `slack_bytes` above what it was after the last release (or on
 * the first call), calls glibc's malloc_trim(0), which gives the free pages
 * of every malloc arena back to the kernel (madvise MADV_DONTNEED, the middle
 * of the heap included, not just its top), and remembers the size after it.
 * Without this glibc keeps a freed block resident for reuse: a pooled
 * responder then holds the high-water mark of the largest request it ever
 * served (a chat turn's history of up to 1,000 events, an Argon2id block of
 * 19 MiB), and its RSS grows with the longest history it has seen.
 * Call it when a request is finished, never inside one. Costs one read of
 * /proc/self/statm (a few microseconds) and, when it trims, a walk of the
 * free lists (well under a millisecond for a heap of a few MiB).
 * Parameters: w the caller's state (one per process); slack_bytes how far
 * the resident size may grow before a release (the cost/memory trade-off).
 * Returns 1 when it trimmed, 0 when there was no need, -1 when the resident
 * size cannot be read (nothing is done). malloc_trim(3), proc(5) statm.
 */
int svc_mem_release(struct svc_mem_watch *w, size_t slack_bytes);

/* The process's resident size in kB (/proc/self/statm's second field), or 0 when it cannot be read. */
size_t svc_mem_rss_kb(void);

#endif
