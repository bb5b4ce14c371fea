/* mem.c: handing the heap's free pages back to the kernel between requests (mem.h). */
#include <fcntl.h>
#include <malloc.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "core/mem.h"
#include "core/util.h"

size_t svc_mem_rss_kb(void)
{
	char buf[128], *f, *end;
	uint64_t resident;
	long page = sysconf(_SC_PAGESIZE);
	ssize_t n;
	int fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof buf - 1);
	close(fd);
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
