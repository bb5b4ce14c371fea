/* test_publish.c: unit tests of lib/project/publish.c (the marker, the one-rename switch, Apache's map of live sites, build output as text) and lib/project/build.c (the sandbox). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <CUnit/CUnit.h>

#include "core/config.h"
#include "core/err.h"
#include "core/fsx.h"
#include "project/build.h"
#include "project/publish.h"
#include "unit.h"

#define ID1 "11111111-1111-4111-8111-111111111111"
#define ID2 "22222222-2222-4222-8222-222222222222"
#define ID3 "33333333-3333-4333-8333-333333333333"

static void put(const char *root, const char *rel, const char *text)
{
	CU_ASSERT_EQUAL(svc_fsx_write(root, rel, text, strlen(text)), 0);
}

static char *get(const char *root, const char *rel)
{
	char *out = NULL;
	size_t n;

	return svc_fsx_read(root, rel, 1 << 20, &out, &n) == 0 ? out : NULL;
}

static void test_publish_clean_text(void)
{
	char out[64];

	CU_ASSERT_EQUAL(svc_publish_clean_text("ok\n\tgr\xc3\xbc\xc3\x9f", 10, out), 10);
	CU_ASSERT_STRING_EQUAL(out, "ok\n\tgr\xc3\xbc\xc3\x9f");
	/* invalid bytes, a NUL, escape codes, and a sequence cut at the end */
	svc_publish_clean_text("a\xff" "b\0c\x1b[0m\xe2\x82", 11, out);
	CU_ASSERT_STRING_EQUAL(out, "a?b?c?[0m??");
}

static void test_publish_mark_replaces_the_projects_own(void)
{
	char dir[] = "/tmp/svc-publish-XXXXXX", *m;

	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
	put(dir, ".well-known/svc-site/x", "a directory where the marker goes");
	put(dir, ".well-known/security.txt", "kept");
	CU_ASSERT_EQUAL(svc_publish_mark(dir, ID1), 0);
	m = get(dir, SVC_PUBLISH_MARKER);
	CU_ASSERT(m && strcmp(m, ID1) == 0);
	free(m);
	m = get(dir, ".well-known/security.txt");
	CU_ASSERT(m && strcmp(m, "kept") == 0);
	free(m);
	svc_fsx_remove_tree(dir);
	/* a file named .well-known */
	memcpy(dir + strlen(dir) - 6, "XXXXXX", 6);
	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
	put(dir, ".well-known", "a file");
	CU_ASSERT_EQUAL(svc_publish_mark(dir, ID1), 0);
	m = get(dir, SVC_PUBLISH_MARKER);
	CU_ASSERT(m && strcmp(m, ID1) == 0);
	free(m);
	svc_fsx_remove_tree(dir);
}

static void test_publish_swap_exchanges_and_removes_the_old(void)
{
	char dir[] = "/tmp/svc-publish-XXXXXX", live[64], next[64], *v;

	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
	snprintf(live, sizeof live, "%s/live", dir);
	snprintf(next, sizeof next, "%s/next", dir);
	CU_ASSERT_EQUAL(mkdir(next, 0755), 0);
	put(next, "index.html", "one");
	CU_ASSERT_EQUAL(svc_publish_swap(next, live), 0); /* the first: a rename */
	CU_ASSERT_EQUAL(mkdir(next, 0755), 0);
	put(next, "index.html", "two");
	CU_ASSERT_EQUAL(svc_publish_swap(next, live), 0);
	v = get(live, "index.html");
	CU_ASSERT(v && strcmp(v, "two") == 0);
	free(v);
	CU_ASSERT_EQUAL(access(next, F_OK), -1); /* the previous site is gone */
	CU_ASSERT_EQUAL(svc_publish_swap(next, live), SVC_E_INTERNAL); /* nothing to switch in */
	svc_fsx_remove_tree(dir);
}

/* The map's mtime in microseconds (what mod_rewrite compares), or -1. */
static long long map_mtime_us(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 ? (long long)st.st_mtim.tv_sec * 1000000 + st.st_mtim.tv_nsec / 1000 : -1;
}

/*
 * Apache's map (docs/operations.md "Behind Apache 2.4"): one sorted line per live pointer
 * published/<slug> -> ../deployments/<projectId>/<deploymentId>; copied sites of an older svc, dot
 * entries and other symlinks are left out; every rewrite gets a later mtime, an unchanged map is not
 * rewritten; taking a site down drops its pointer and its line.
 */
static void test_publish_map_of_live_pointers(void)
{
	char dir[] = "/tmp/svc-publish-XXXXXX", pub[64], link[128], map[96], *m;
	struct svc_config cfg;
	long long t1, t2;

	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
	svc_config_defaults(&cfg);
	cfg.data_dir = dir;
	snprintf(pub, sizeof pub, "%s/published", dir);
	snprintf(map, sizeof map, "%s/sites/" SVC_PUBLISH_MAP, dir);
	CU_ASSERT_EQUAL(svc_publish_map_write(&cfg), 0); /* nothing published yet: a map with no site */
	m = get(dir, "sites/" SVC_PUBLISH_MAP);
	CU_ASSERT(m && m[0] == '#' && !strstr(m, ID1));
	free(m);
	CU_ASSERT_EQUAL(mkdir(pub, 0755), 0);
	snprintf(link, sizeof link, "%s/b-site", pub);
	CU_ASSERT_EQUAL(symlink("../deployments/" ID1 "/" ID2, link), 0);
	snprintf(link, sizeof link, "%s/a-site", pub);
	CU_ASSERT_EQUAL(symlink("../deployments/" ID3 "/" ID1, link), 0);
	snprintf(link, sizeof link, "%s/.next-a-site-0123", pub);
	CU_ASSERT_EQUAL(symlink("../deployments/" ID3 "/" ID2, link), 0);
	snprintf(link, sizeof link, "%s/escape", pub);
	CU_ASSERT_EQUAL(symlink("../../" ID3 "/" ID2, link), 0);
	put(pub, "legacy/index.html", "a site copied by an older svc");
	CU_ASSERT_EQUAL(svc_publish_map_write(&cfg), 0);
	m = get(dir, "sites/" SVC_PUBLISH_MAP);
	CU_ASSERT(m && strstr(m, "\na-site " ID3 "/" ID1 "\nb-site " ID1 "/" ID2 "\n") && !strstr(m, "legacy") &&
		  !strstr(m, "next") && !strstr(m, "escape"));
	free(m);
	t1 = map_mtime_us(map);
	/* a switch within the same clock tick still changes the mtime */
	snprintf(link, sizeof link, "%s/b-site", pub);
	CU_ASSERT_EQUAL(unlink(link), 0);
	CU_ASSERT_EQUAL(symlink("../deployments/" ID1 "/" ID3, link), 0);
	CU_ASSERT_EQUAL(svc_publish_map_write(&cfg), 0);
	t2 = map_mtime_us(map);
	CU_ASSERT(t1 > 0 && t2 > t1);
	m = get(dir, "sites/" SVC_PUBLISH_MAP);
	CU_ASSERT(m && strstr(m, "\nb-site " ID1 "/" ID3 "\n"));
	free(m);
	CU_ASSERT_EQUAL(svc_publish_map_write(&cfg), 0);
	CU_ASSERT_EQUAL(map_mtime_us(map), t2); /* unchanged: not rewritten */
	CU_ASSERT_EQUAL(svc_publish_take_down(&cfg, "a-site"), 0);
	snprintf(link, sizeof link, "%s/a-site", pub);
	CU_ASSERT_EQUAL(access(link, F_OK), -1);
	m = get(dir, "sites/" SVC_PUBLISH_MAP);
	CU_ASSERT(m && !strstr(m, "a-site") && strstr(m, "\nb-site "));
	free(m);
	svc_fsx_remove_tree(dir);
}

static void test_publish_grace_setting(void)
{
	struct svc_config cfg;

	svc_config_defaults(&cfg);
	CU_ASSERT_EQUAL(svc_publish_grace_secs(&cfg), 60);
	CU_ASSERT_EQUAL(svc_publish_kept(&cfg), 5);
	cfg.deployments_grace_secs = 0; /* out of bounds or malformed: the table's default (test_config) */
	CU_ASSERT_EQUAL(svc_publish_grace_secs(&cfg), 0);
}

static void test_build_without_bwrap_is_refused(void)
{
	struct svc_build_opts o = { .bwrap = "/nonexistent/bwrap", .npm = "/usr/bin/npm", .registry = "https://registry.npmjs.org/",
				    .cpu_secs = 10, .memory_mb = 1024, .procs = 64, .wall_secs = 10, .tmp_mb = 16,
				    .uid = 65534, .thumb_uid = 65533, .run_name = "unit-publish" };
	char dir[] = "/tmp/svc-publish-XXXXXX", why[128];

	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
	put(dir, "package.json", "{}");
	CU_ASSERT_EQUAL(svc_build_run(&o, dir, NULL, NULL, why, sizeof why), SVC_E_UNAVAILABLE);
	CU_ASSERT_STRING_EQUAL(why, "svc refuses to build: no bubblewrap at /nonexistent/bwrap");
	svc_fsx_remove_tree(dir);
}

SVC_TEST_SUITE(publish)
{
	CU_pSuite s = CU_add_suite("publish", NULL, NULL);

	CU_add_test(s, "test_publish_clean_text", test_publish_clean_text);
	CU_add_test(s, "test_publish_mark_replaces_the_projects_own", test_publish_mark_replaces_the_projects_own);
	CU_add_test(s, "test_publish_swap_exchanges_and_removes_the_old", test_publish_swap_exchanges_and_removes_the_old);
	CU_add_test(s, "test_publish_map_of_live_pointers", test_publish_map_of_live_pointers);
	CU_add_test(s, "test_publish_grace_setting", test_publish_grace_setting);
	CU_add_test(s, "test_build_without_bwrap_is_refused", test_build_without_bwrap_is_refused);
}
