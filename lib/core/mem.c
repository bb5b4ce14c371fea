/* mem.c: handing the heap's free pages back to the kernel between requests (mem.h). */
#include <fcntl.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "core/mem.h"

size_t svc_mem_rss_kb(void)
{
	char buf[128];
	unsigned long size, resident;
	long page = sysconf(_SC_PAGESIZE);
	ssize_t n;
	int fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0 || page <= 0)
		return 0;
	buf[n] = 0;
	if (sscanf(buf, "%lu %lu", &size, &resident) != 2)
		return 0;
	return (size_t)resident * (size_t)(page / 1024);
}

int svc_mem_release(struct svc_mem_watch *w, size_t slack_bytes)
{
	size_t rss = svc_mem_rss_kb();

	if (!rss)
		return -1;
	if (w->base_kb && rss <= w->base_kb + slack_bytes / 1024)
		return 0;
	malloc_trim(0);
	w->base_kb = svc_mem_rss_kb();
	if (!w->base_kb)
		w->base_kb = rss;
	return 1;
}
