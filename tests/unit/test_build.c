/* test_build.c: a package.json build refuses dependencies from outside the registry, builds offline in its tmpfs, and names the limit that ends it. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <CUnit/CUnit.h>

#include "core/err.h"
#include "core/fsx.h"
#include "project/build.h"
#include "project/sandbox.h"
#include "unit.h"

#define REG "https://registry.npmjs.org/"

/* A project directory made from `files` (name, content pairs, NULL-ended) under a fresh temporary directory. */
static int project(char *top, size_t max, const char *const *files)
{
	char dir[] = "/tmp/svc-unit-build-XXXXXX";
	size_t i;

	if (!mkdtemp(dir))
		return -1;
	snprintf(top, max, "%s", dir);
	for (i = 0; files[i]; i += 2)
		if (svc_fsx_write(dir, files[i], files[i + 1], strlen(files[i + 1])) < 0)
			return -1;
	return 0;
}

static void check_one(const char *pkg, const char *lock, int want_ok, const char *want_text)
{
	const char *files[] = { "package.json", pkg, lock ? "package-lock.json" : NULL, lock, NULL };
	char dir[64], why[512];
	int r;

	CU_ASSERT_EQUAL_FATAL(project(dir, sizeof dir, files), 0);
	r = svc_build_check_deps(dir, REG, why, sizeof why);
	CU_ASSERT_EQUAL(r, want_ok ? 0 : SVC_E_VALIDATION);
	if (want_text) {
		CU_ASSERT(strstr(why, want_text) != NULL);
		if (!strstr(why, want_text))
			fprintf(stderr, "check_deps: %s\n", why);
	}
	svc_fsx_remove_tree(dir);
}

static void test_build_refuses_dependencies_outside_the_registry(void)
{
	check_one("{\"dependencies\":{\"react\":\"^18.3.1\",\"x\":\"npm:react@18\",\"t\":\"latest\"}}", NULL, 1, NULL);
	check_one("{\"dependencies\":{\"leak\":\"http://127.0.0.1:9/x.tgz\"}}", NULL, 0,
		  "the dependency \"leak\" (package.json dependencies) is not from the registry (http://127.0.0.1:9/x.tgz)");
	check_one("{\"devDependencies\":{\"g\":\"github:user/repo\"}}", NULL, 0, "\"g\" (package.json devDependencies)");
	check_one("{\"dependencies\":{\"s\":\"user/repo\"}}", NULL, 0, "\"s\"");
	check_one("{\"dependencies\":{\"g\":\"git+ssh://git@host/r.git\"}}", NULL, 0, "\"g\"");
	check_one("{\"dependencies\":{\"f\":\"file:../other\"}}", NULL, 0, "\"f\"");
	check_one("{\"dependencies\":{\"t\":\"./vendor/t.tgz\"}}", NULL, 0, "\"t\"");
	check_one("{\"dependencies\":{\"a\":\"npm:b@https://evil.example/b.tgz\"}}", NULL, 0, "\"a\"");
	check_one("{\"overrides\":{\"foo\":{\"bar\":\"https://evil.example/bar.tgz\"}}}", NULL, 0, "\"bar\"");
	check_one("{\"dependencies\":{\"ok\":\"1.0.0\"}}",
		  "{\"packages\":{\"\":{},\"node_modules/ok\":{\"resolved\":\"https://registry.npmjs.org/ok/-/ok-1.0.0.tgz\"}}}",
		  1, NULL);
	check_one("{\"dependencies\":{\"ok\":\"1.0.0\"}}",
		  "{\"packages\":{\"node_modules/ok\":{\"resolved\":\"http://127.0.0.1:9/ok.tgz\"}}}", 0,
		  "the dependency \"node_modules/ok\" (package-lock.json) is not from the registry");
	check_one("{\"dependencies\":{\"ok\":\"1.0.0\"}}",
		  "{\"dependencies\":{\"ok\":{\"resolved\":\"https://registry.npmjs.org.evil/ok.tgz\"}}}", 0, "\"ok\"");
	check_one("[1]", NULL, 0, "package.json is not a JSON object");
}

/* The settings a build would take, with small bounds and no network (the unit run must not need one). */
static void small_opts(struct svc_build_opts *o)
{
	memset(o, 0, sizeof *o);
	o->bwrap = "/usr/bin/bwrap";
	o->npm = "/usr/bin/npm";
	o->registry = REG;
	o->cpu_secs = 120;
	o->memory_mb = 256;
	o->procs = 128;
	o->cpu_percent = 100;
	o->disk_mb = 64;
	o->wall_secs = 60;
	o->tmp_mb = 32;
	o->uid = 65534;
	o->network = 0;
	snprintf(o->run_name, sizeof o->run_name, "unit-build-%ld", (long)getpid());
}

struct log {
	char text[16384];
	size_t len;
};

static void collect(void *arg, const char *text, size_t len)
{
	struct log *l = arg;

	if (text && l->len + len < sizeof l->text) {
		memcpy(l->text + l->len, text, len);
		l->len += len;
		l->text[l->len] = '\0';
	}
}

/* Builds a project whose build script is `script` in a svc_build_dir_make() tree; returns svc_build_run()'s result. */
static int build_with(const char *script, const struct svc_build_opts *o, char *why, size_t why_max, struct log *l,
		      int *dist_made)
{
	char top[64], base[] = "/tmp/svc-unit-bdir-XXXXXX", proj[128], pkg[1024], dist[160];
	struct stat st;
	int err;

	if (!mkdtemp(base))
		return -1;
	chmod(base, 0711);
	snprintf(top, sizeof top, "%s/b", base);
	if (svc_build_dir_make(o, top, proj, sizeof proj, why, why_max) < 0)
		return -1;
	snprintf(pkg, sizeof pkg, "{\"name\":\"p\",\"version\":\"0.0.0\",\"private\":true,\"scripts\":{\"build\":\"%s\"}}",
		 script);
	mkdir(proj, 0755);
	svc_fsx_write(proj, "package.json", pkg, strlen(pkg));
	svc_fsx_write(proj, ".npmrc", "registry=http://127.0.0.1:9/\n", 29);
	memset(l, 0, sizeof *l);
	err = svc_build_run(o, proj, collect, l, why, why_max);
	snprintf(dist, sizeof dist, "%s/dist", proj);
	*dist_made = stat(dist, &st) == 0;
	CU_ASSERT_EQUAL(svc_build_dir_remove(top), 0);
	CU_ASSERT(stat(top, &st) < 0 && errno == ENOENT);
	rmdir(base);
	return err;
}

static int can_build(const char *test)
{
	char why[256];

	if (geteuid() != 0 || access("/usr/bin/npm", X_OK) != 0 || svc_sandbox_check("/usr/bin/bwrap", NULL, why, sizeof why) < 0) {
		fprintf(stderr, "%s: not root, no npm or no sandbox; not checked\n", test);
		return 0;
	}
	return 1;
}

static void test_build_offline_and_named_limits(void)
{
	struct svc_build_opts o;
	struct log l;
	char why[512];
	int made = 0, err;

	if (!can_build(__func__))
		return;
	small_opts(&o);
	err = build_with("node -e \\\"new WebAssembly.Memory({initial:16384}); require('fs').mkdirSync('dist')\\\"", &o,
			 why, sizeof why, &l, &made);
	CU_ASSERT_EQUAL(err, 0);
	CU_ASSERT(made);
	CU_ASSERT(strstr(l.text, "the project's .npmrc is not used") != NULL);
	if (err)
		fprintf(stderr, "build: %s\n%s\n", why, l.text);
	err = build_with("node -e \\\"const a=[];for(;;)a.push(Buffer.alloc(16<<20).fill(1))\\\"", &o, why, sizeof why, &l,
			 &made);
	CU_ASSERT_EQUAL(err, SVC_E_VALIDATION);
	CU_ASSERT(strstr(why, "the build used more than 256 MB of memory") != NULL);
	err = build_with("node -e \\\"require('fs').writeFileSync('big', Buffer.alloc(100<<20))\\\"", &o, why, sizeof why,
			 &l, &made);
	CU_ASSERT_EQUAL(err, SVC_E_VALIDATION);
	CU_ASSERT(strstr(why, "the build used more than 64 MB of disk") != NULL);
	if (!strstr(why, "of disk"))
		fprintf(stderr, "build: %s\n%s\n", why, l.text);
}

static void test_build_without_a_cgroup_is_refused(void)
{
	const char *files[] = { "package.json", "{\"scripts\":{\"build\":\"true\"}}", NULL };
	struct svc_build_opts o;
	struct log l;
	char dir[64], why[512];

	if (access("/usr/bin/bwrap", X_OK) != 0)
		return;
	small_opts(&o);
	o.cgroup_parent = "relative/parent"; /* no hierarchy svc can use */
	CU_ASSERT_EQUAL_FATAL(project(dir, sizeof dir, files), 0);
	memset(&l, 0, sizeof l);
	CU_ASSERT_EQUAL(svc_build_run(&o, dir, collect, &l, why, sizeof why), SVC_E_UNAVAILABLE);
	CU_ASSERT(strncmp(why, "svc refuses to build: ", 22) == 0 && strstr(why, "relative/parent") != NULL);
	CU_ASSERT(strstr(l.text, why) != NULL); /* the log says it too */
	svc_fsx_remove_tree(dir);
}

/* Whether a tmpfs is mounted at `dir` now (/proc/self/mountinfo's fifth field). */
static int mounted(const char *dir)
{
	char line[4600], mp[4200];
	int found = 0;
	FILE *f = fopen("/proc/self/mountinfo", "r");

	while (f && !found && fgets(line, sizeof line, f)) {
		const char *p = line;
		int i;

		for (i = 0; i < 4 && p; i++)
			p = strchr(p + 1, ' ');
		if (p && sizeof mp > strcspn(p + 1, " ")) {
			snprintf(mp, strcspn(p + 1, " ") + 1, "%s", p + 1);
			found = strcmp(mp, dir) == 0;
		}
	}
	if (f)
		fclose(f);
	return found;
}

/* Mounts a build's tmpfs at `dir` in a child process that then ends without removing it (a killed build). */
static int leave_mounted(const char *dir)
{
	char why[256];
	int status;
	pid_t pid = fork();

	if (pid == 0)
		_exit(svc_sandbox_disk_mount(dir, 8, 65534, why, sizeof why) == 0 ? 0 : 1);
	return pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

/*
 * The start-up sweep (svc_build_sweep()) unmounts and removes a tree whose build's process is gone, at once and
 * whatever its age, and leaves a running build's tree, a young tree without an owner and anything outside its
 * builds directory alone.
 */
static void test_build_sweep_takes_killed_builds_only(void)
{
	char top[] = "/tmp/svc-unit-sweep-XXXXXX", builds[64], other[64], dead[96], live[96], young[96], outside[96];
	char why[256];
	struct stat st;

	if (geteuid() != 0) {
		fprintf(stderr, "%s: not root; no tmpfs to sweep\n", __func__);
		return;
	}
	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(top));
	snprintf(builds, sizeof builds, "%s/builds", top);
	snprintf(other, sizeof other, "%s/builds-other", top); /* a name with the same prefix: not under builds/ */
	snprintf(dead, sizeof dead, "%s/preview-dead", builds);
	snprintf(live, sizeof live, "%s/preview-live", builds);
	snprintf(young, sizeof young, "%s/preview-young", builds);
	snprintf(outside, sizeof outside, "%s/preview-dead", other);
	CU_ASSERT_FATAL(mkdir(builds, 0711) == 0 && mkdir(other, 0711) == 0);
	CU_ASSERT_EQUAL_FATAL(leave_mounted(dead), 0);
	CU_ASSERT_EQUAL_FATAL(leave_mounted(outside), 0);
	CU_ASSERT_EQUAL_FATAL(svc_sandbox_disk_mount(live, 8, 65534, why, sizeof why), 0);
	CU_ASSERT_EQUAL_FATAL(mkdir(young, 0711), 0);
	CU_ASSERT(mounted(dead) && mounted(live) && mounted(outside));
	CU_ASSERT_EQUAL(svc_sandbox_disk_owner_alive(dead), 0);
	CU_ASSERT_EQUAL(svc_sandbox_disk_owner_alive(live), 1);
	CU_ASSERT_EQUAL(svc_sandbox_disk_owner_alive(young), -1);

	CU_ASSERT_EQUAL(svc_build_sweep(builds, 3600), 1);
	CU_ASSERT(!mounted(dead) && stat(dead, &st) < 0 && errno == ENOENT);
	CU_ASSERT(mounted(live) && stat(young, &st) == 0 && mounted(outside));
	CU_ASSERT(svc_sandbox_disk_owner_alive(dead) < 0); /* its .owner went with it */

	CU_ASSERT_EQUAL(svc_sandbox_disk_remove(live), 0);
	CU_ASSERT_EQUAL(svc_sandbox_disk_remove(outside), 0);
	CU_ASSERT(!mounted(live) && !mounted(outside));
	svc_fsx_remove_tree(top);
}

/* Makes the directory `path` with a file in it, its mtime two hours ago (older than the sweep's age). */
static int old_tree(const char *path)
{
	struct timespec t[2] = { { time(NULL) - 7200, 0 }, { time(NULL) - 7200, 0 } };
	char file[200];
	FILE *f;

	snprintf(file, sizeof file, "%s/app.js", path);
	if (mkdir(path, 0711) < 0 || !(f = fopen(file, "w")))
		return -1;
	fputs("export {};\n", f);
	fclose(f);
	return utimensat(AT_FDCWD, path, t, 0);
}

/*
 * The sweep never takes a tree another process claims (a running dev server's, svc-devd holding
 * dev-<id>.owner), however old, and takes it once the claim is let go; a claim is held by one at a time.
 */
static void test_build_sweep_leaves_a_claimed_tree(void)
{
	char top[] = "/tmp/svc-unit-claim-XXXXXX", builds[64], claimed[96], free_[96], owner[112];
	struct stat st;
	int fd = -1, fd2 = -1;

	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(top));
	snprintf(builds, sizeof builds, "%s/builds", top);
	snprintf(claimed, sizeof claimed, "%s/dev-claimed", builds);
	snprintf(free_, sizeof free_, "%s/dev-free", builds);
	snprintf(owner, sizeof owner, "%s.owner", claimed);
	CU_ASSERT_FATAL(mkdir(builds, 0711) == 0);
	CU_ASSERT_FATAL(old_tree(claimed) == 0 && old_tree(free_) == 0);
	CU_ASSERT_EQUAL_FATAL(svc_sandbox_claim(claimed, &fd), 0);
	CU_ASSERT_EQUAL(svc_sandbox_claim(claimed, &fd2), SVC_E_CONFLICT); /* one holder at a time */

	CU_ASSERT_EQUAL(svc_build_sweep(builds, 3600), 1);
	CU_ASSERT(stat(claimed, &st) == 0 && stat(owner, &st) == 0);
	CU_ASSERT(stat(free_, &st) < 0 && errno == ENOENT);

	svc_sandbox_claim_release(claimed, fd);
	CU_ASSERT(stat(owner, &st) < 0 && errno == ENOENT);
	CU_ASSERT_EQUAL(svc_build_sweep(builds, 3600), 1);
	CU_ASSERT(stat(claimed, &st) < 0 && errno == ENOENT);
	/* the sweep's own claim went with the tree: the name can be claimed again */
	CU_ASSERT(stat(owner, &st) < 0 && errno == ENOENT);
	CU_ASSERT_EQUAL(svc_sandbox_claim(claimed, &fd2), 0);
	svc_sandbox_claim_release(claimed, fd2);
	svc_fsx_remove_tree(top);
}

SVC_TEST_SUITE(build)
{
	CU_pSuite s = CU_add_suite("build", NULL, NULL);

	CU_add_test(s, "test_build_refuses_dependencies_outside_the_registry",
		    test_build_refuses_dependencies_outside_the_registry);
	CU_add_test(s, "test_build_offline_and_named_limits", test_build_offline_and_named_limits);
	CU_add_test(s, "test_build_without_a_cgroup_is_refused", test_build_without_a_cgroup_is_refused);
	CU_add_test(s, "test_build_sweep_takes_killed_builds_only", test_build_sweep_takes_killed_builds_only);
	CU_add_test(s, "test_build_sweep_leaves_a_claimed_tree", test_build_sweep_leaves_a_claimed_tree);
}
