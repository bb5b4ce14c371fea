/* test_mem.c: svc_mem_release gives the heap's freed pages back to the kernel and leaves a process alone below its slack. */
#include <stddef.h>
#include <string.h>

#include <CUnit/CUnit.h>

#include "core/mem.h"
#include "unit.h"

/*
 * glibc's own allocator, under ASan's interception of malloc (the unit runner
 * is built with ASan, whose heap malloc_trim does not manage): the blocks go
 * where a responder's blocks go in the -O2 build.
 */
extern void *__libc_malloc(size_t n);
extern void __libc_free(void *p);

#define BLOCKS 2048
#define BLOCK 8000 /* below glibc's mmap threshold: from the heap */

static void *blocks[BLOCKS];

/* Fills the heap with BLOCKS x BLOCK bytes (16 MB, every page touched) and frees all but the last, which
 * keeps the freed run below the heap's top: free() then gives none of it back by itself. Returns 0 on success. */
static int heap_high_water(void)
{
	size_t i;

	for (i = 0; i < BLOCKS; i++) {
		blocks[i] = __libc_malloc(BLOCK);
		if (!blocks[i])
			return -1;
		memset(blocks[i], 0x5a, BLOCK);
	}
	for (i = 0; i + 1 < BLOCKS; i++)
		__libc_free(blocks[i]);
	return 0;
}

static void test_mem_release_gives_back_freed_heap(void)
{
	struct svc_mem_watch w;
	size_t before, after;

	memset(&w, 0, sizeof w);
	CU_ASSERT_EQUAL(svc_mem_release(&w, 1024 * 1024), 1); /* the first call sets the base */
	CU_ASSERT(w.base_kb > 0);
	CU_ASSERT_EQUAL_FATAL(heap_high_water(), 0);
	before = svc_mem_rss_kb();
	/* freed, but still resident: what a responder held after a big request */
	CU_ASSERT(before >= w.base_kb + 12 * 1024);
	CU_ASSERT_EQUAL(svc_mem_release(&w, 1024 * 1024), 1);
	after = svc_mem_rss_kb();
	CU_ASSERT(after + 12 * 1024 <= before);
	CU_ASSERT_EQUAL(w.base_kb, after);
	__libc_free(blocks[BLOCKS - 1]);
}

static void test_mem_release_within_slack_does_nothing(void)
{
	struct svc_mem_watch w;
	size_t base;

	memset(&w, 0, sizeof w);
	CU_ASSERT_EQUAL(svc_mem_release(&w, 64 * 1024 * 1024), 1);
	/* 16 MB freed but resident stays under a slack of 64 MiB: no trim, the base stays */
	CU_ASSERT_EQUAL_FATAL(heap_high_water(), 0);
	base = w.base_kb;
	CU_ASSERT_EQUAL(svc_mem_release(&w, 64 * 1024 * 1024), 0);
	CU_ASSERT_EQUAL(w.base_kb, base);
	/* and a second call right after a release has nothing to do either */
	CU_ASSERT_EQUAL(svc_mem_release(&w, 1024 * 1024), 1);
	CU_ASSERT_EQUAL(svc_mem_release(&w, 1024 * 1024), 0);
	__libc_free(blocks[BLOCKS - 1]);
}

SVC_TEST_SUITE(mem)
{
	CU_pSuite s = CU_add_suite("mem", NULL, NULL);

	CU_add_test(s, "test_mem_release_gives_back_freed_heap", test_mem_release_gives_back_freed_heap);
	CU_add_test(s, "test_mem_release_within_slack_does_nothing", test_mem_release_within_slack_does_nothing);
}
