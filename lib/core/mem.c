/* mem.c: handing the heap's free pages back to the kernel between requests (mem.h). */
#include <fcntl.h>
#include <malloc.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "core/mem.h"
#include "core/util.h"

/* The resident size (kB) from statm's text read from `fd` at offset 0, or 0. */
static size_t rss_of(int fd)
{
	char buf[128], *f, *end;
	uint64_t resident;
	long page = sysconf(_SC_PAGESIZE);
	ssize_t n = pread(fd, buf, sizeof buf - 1, 0);

	if (n <= 0 || page < 1024)
		return 0;
	buf[n] = 0;
	/* "size resident shared text lib data dt", in pages: the second field */
	f = strchr(buf, ' ');
	if (!f)
		return 0;
	end = strchr(++f, ' ');
	if (!end)
		return 0;
	*end = 0;
	if (svc_parse_u64(f, UINT64_MAX / 1024, &resident) < 0)
		return 0;
	return (size_t)resident * (size_t)(page / 1024);
}

size_t svc_mem_rss_kb(void)
{
	int fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
	size_t kb;

	if (fd < 0)
		return 0;
	kb = rss_of(fd);
	close(fd);
	return kb;
}

/* svc_mem_rss_kb() through w's kept descriptor: one pread per request instead of open, read and close. */
static size_t watch_rss_kb(struct svc_mem_watch *w)
{
	int pid = (int)getpid();

	if (w->statm_pid != pid) {
		/* a forked child's inherited descriptor reads its parent: open its own */
		if (w->statm_pid)
			close(w->statm_fd);
		w->statm_fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
		w->statm_pid = w->statm_fd < 0 ? 0 : pid;
		if (w->statm_fd < 0)
			return 0;
	}
	return rss_of(w->statm_fd);
}

int svc_mem_release(struct svc_mem_watch *w, size_t slack_bytes)
{
	size_t rss = watch_rss_kb(w);

	if (!rss)
		return -1;
	if (w->base_kb && rss <= w->base_kb + slack_bytes / 1024)
		return 0;
	malloc_trim(0);
	w->base_kb = watch_rss_kb(w);
	if (!w->base_kb)
		w->base_kb = rss;
	return 1;
}
