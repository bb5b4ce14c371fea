/* test_cgroup.c: a run's cgroup bounds its memory and processes, names the bound that ended it, lets Wasm work, and goes away. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CUnit/CUnit.h>

#include "core/cgroup.h"
#include "core/err.h"
#include "core/fsx.h"
#include "unit.h"

#define NODE "/usr/bin/node"

/* Whether this host lets the test make groups: root, and a hierarchy (else the reason is printed). */
static int can_test(const char *test)
{
	char why[512];
	int v;

	if (geteuid() != 0) {
		fprintf(stderr, "%s: not root; cgroups not checked\n", test);
		return 0;
	}
	v = svc_cgroup_check(NULL, why, sizeof why);
	if (v < 0) {
		fprintf(stderr, "%s: no cgroups here (%s); not checked\n", test, why);
		return 0;
	}
	return 1;
}

/* Runs `fn` in a child that joined `cg` first; returns its wait status. */
static int run_in(struct svc_cgroup *cg, void (*fn)(void))
{
	int status = 0;
	pid_t pid = fork();

	if (pid == 0) {
		if (svc_cgroup_join(cg) < 0)
			_exit(120);
		fn();
		_exit(0);
	}
	if (pid < 0)
		return -1;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	return status;
}

/* Touches 16 MiB at a time up to 1 GiB: past a 256 MiB group, the OOM killer ends it. */
static void allocate_past(void)
{
	int i;

	for (i = 0; i < 64; i++) {
		void *p = mmap(NULL, 16u << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			_exit(2);
		memset(p, 0x5a, 16u << 20);
	}
	_exit(0); /* all of it: the bound did not hold */
}

/* Forks 40 children that wait: past a bound of 16, a fork fails (exit 3). */
static void fork_past(void)
{
	int i;

	for (i = 0; i < 40; i++) {
		pid_t p = fork();
		if (p == 0) {
			pause();
			_exit(0);
		}
		if (p < 0)
			_exit(3);
	}
	_exit(0);
}

/* Instantiates a 1 GiB WebAssembly memory in Node, which an address-space limit of 4 GiB refused. */
static void node_wasm(void)
{
	static char *const argv[] = { NODE, "-e",
				      "const m = new WebAssembly.Memory({initial: 16384});"
				      "if (m.buffer.byteLength !== 1073741824) process.exit(4);",
				      NULL };
	static char *const envp[] = { "PATH=/usr/bin:/bin", NULL };
	int devnull = open("/dev/null", O_WRONLY);

	if (devnull >= 0)
		dup2(devnull, 1);
	execve(NODE, argv, envp);
	_exit(127);
}

static void test_cgroup_memory_bound_is_named(void)
{
	struct svc_cgroup_opts o = { NULL, 256, 64, 100, 0 };
	struct svc_cgroup *cg = NULL;
	char why[512], text[128], dir[1024];
	int status;

	if (!can_test("test_cgroup_memory_bound_is_named"))
		return;
	CU_ASSERT_EQUAL_FATAL(svc_cgroup_new(&o, "test-mem", &cg, why, sizeof why), 0);
	snprintf(dir, sizeof dir, "%s", svc_cgroup_dir(cg));
	CU_ASSERT_EQUAL(access(dir, F_OK), 0);
	CU_ASSERT_EQUAL(svc_cgroup_limit_hit(cg), SVC_CGROUP_LIMIT_NONE);
	status = run_in(cg, allocate_past);
	CU_ASSERT(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	CU_ASSERT_EQUAL(svc_cgroup_limit_hit(cg), SVC_CGROUP_LIMIT_MEMORY);
	CU_ASSERT_STRING_EQUAL(svc_cgroup_limit_name(svc_cgroup_limit_hit(cg)), "memory");
	CU_ASSERT_EQUAL(svc_cgroup_describe(cg, SVC_CGROUP_LIMIT_MEMORY, text, sizeof text), 0);
	CU_ASSERT_STRING_EQUAL(text, "more than 256 MB of memory");
	CU_ASSERT_EQUAL(svc_cgroup_free(cg), 0);
	CU_ASSERT(access(dir, F_OK) < 0 && errno == ENOENT);
}

static void test_cgroup_process_bound_is_named(void)
{
	struct svc_cgroup_opts o = { NULL, 256, 16, 0, 0 };
	struct svc_cgroup *cg = NULL;
	char why[512], text[128], dir[1024];
	int status;

	if (!can_test("test_cgroup_process_bound_is_named"))
		return;
	CU_ASSERT_EQUAL_FATAL(svc_cgroup_new(&o, "test-pids", &cg, why, sizeof why), 0);
	snprintf(dir, sizeof dir, "%s", svc_cgroup_dir(cg));
	status = run_in(cg, fork_past);
	CU_ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 3);
	CU_ASSERT_EQUAL(svc_cgroup_limit_hit(cg), SVC_CGROUP_LIMIT_PROCS);
	CU_ASSERT_STRING_EQUAL(svc_cgroup_limit_name(svc_cgroup_limit_hit(cg)), "processes");
	CU_ASSERT_EQUAL(svc_cgroup_describe(cg, SVC_CGROUP_LIMIT_PROCS, text, sizeof text), 0);
	CU_ASSERT_STRING_EQUAL(text, "more than 16 processes");
	/* the 15 children still wait inside: removal kills them */
	CU_ASSERT_EQUAL(svc_cgroup_free(cg), 0);
	CU_ASSERT(access(dir, F_OK) < 0 && errno == ENOENT);
}

static void test_cgroup_node_wasm_gigabyte_fits(void)
{
	struct svc_cgroup_opts o = { NULL, 2048, 64, 100, 0 };
	struct svc_cgroup *cg = NULL;
	char why[512];
	int status;

	if (!can_test("test_cgroup_node_wasm_gigabyte_fits"))
		return;
	if (access(NODE, X_OK) != 0) {
		fprintf(stderr, "test_cgroup_node_wasm_gigabyte_fits: %s not installed; not checked\n", NODE);
		return;
	}
	CU_ASSERT_EQUAL_FATAL(svc_cgroup_new(&o, "test-wasm", &cg, why, sizeof why), 0);
	status = run_in(cg, node_wasm);
	CU_ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	CU_ASSERT_EQUAL(svc_cgroup_limit_hit(cg), SVC_CGROUP_LIMIT_NONE);
	CU_ASSERT_EQUAL(svc_cgroup_free(cg), 0);
}

static void test_cgroup_parent_adds_pid_and_removal_kills(void)
{
	struct svc_cgroup_opts o = { NULL, 128, 8, 50, 0 };
	struct svc_cgroup *cg = NULL;
	char why[512], dir[1024];
	int status = 0;
	pid_t pid;

	if (!can_test("test_cgroup_parent_adds_pid_and_removal_kills"))
		return;
	CU_ASSERT_EQUAL_FATAL(svc_cgroup_new(&o, "test-add", &cg, why, sizeof why), 0);
	snprintf(dir, sizeof dir, "%s", svc_cgroup_dir(cg));
	pid = fork();
	if (pid == 0) {
		pause();
		_exit(0);
	}
	CU_ASSERT_FATAL(pid > 0);
	CU_ASSERT_EQUAL(svc_cgroup_add(cg, pid), 0);
	CU_ASSERT(svc_cgroup_memory_bytes(cg) > 0 || svc_cgroup_version(cg) == SVC_CGROUP_V1);
	CU_ASSERT_EQUAL(svc_cgroup_free(cg), 0);
	CU_ASSERT_EQUAL(waitpid(pid, &status, 0), pid);
	CU_ASSERT(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	CU_ASSERT(access(dir, F_OK) < 0 && errno == ENOENT);
}

static void test_cgroup_refuses_bad_input(void)
{
	struct svc_cgroup_opts o = { NULL, 64, 8, 0, 0 };
	struct svc_cgroup_opts rel = { "relative/parent", 64, 8, 0, 0 };
	struct svc_cgroup *cg = NULL;
	char why[512];

	CU_ASSERT_EQUAL(svc_cgroup_new(&o, "", &cg, why, sizeof why), SVC_E_VALIDATION);
	CU_ASSERT_EQUAL(svc_cgroup_new(&o, "../escape", &cg, why, sizeof why), SVC_E_VALIDATION);
	CU_ASSERT_EQUAL(svc_cgroup_new(&o, "a/b", &cg, why, sizeof why), SVC_E_VALIDATION);
	CU_ASSERT_EQUAL(svc_cgroup_new(&rel, "ok", &cg, why, sizeof why), SVC_E_UNAVAILABLE);
	CU_ASSERT(strstr(why, "not an absolute path") != NULL);
	CU_ASSERT_PTR_NULL(cg);
	CU_ASSERT_EQUAL(svc_cgroup_check("/../x", why, sizeof why), SVC_E_UNAVAILABLE);
	CU_ASSERT(why[0] != '\0');
	CU_ASSERT_STRING_EQUAL(svc_cgroup_limit_name(SVC_CGROUP_LIMIT_NONE), "");
	CU_ASSERT_EQUAL(svc_cgroup_free(NULL), 0);
}

/* Makes `dir` (under the test's tree) a stand-in v2 cgroup: its interface files, as the kernel makes them on mkdir. */
static int fake_group(const char *dir, const char *controllers)
{
	static const char *const files[] = { "cgroup.controllers", "cgroup.subtree_control", "cgroup.procs", "cgroup.threads" };
	char path[300];
	size_t i;

	if (mkdir(dir, 0755) < 0 && errno != EEXIST)
		return -1;
	for (i = 0; i < sizeof files / sizeof files[0]; i++) {
		FILE *f;
		snprintf(path, sizeof path, "%s/%s", dir, files[i]);
		if (!(f = fopen(path, "w")))
			return -1;
		if (i == 0)
			fprintf(f, "%s\n", controllers);
		fclose(f);
	}
	return 0;
}

/* Whether `dir`/`file` ("" for the directory) belongs to `uid`. */
static int owned(const char *dir, const char *file, unsigned uid)
{
	char path[300];
	struct stat st;

	snprintf(path, sizeof path, "%s%s%s", dir, file[0] ? "/" : "", file);
	return stat(path, &st) == 0 && st.st_uid == uid;
}

/* Whether `dir`'s cgroup.subtree_control was written (a stand-in file keeps the last "+controller" written). */
static int handed_down(const char *dir)
{
	char path[300], buf[64] = "";
	FILE *f;

	snprintf(path, sizeof path, "%s/cgroup.subtree_control", dir);
	if (!(f = fopen(path, "r")))
		return 0;
	if (!fgets(buf, sizeof buf, f))
		buf[0] = '\0';
	fclose(f);
	return buf[0] == '+';
}

/*
 * svc-admin cgroup-prepare's delegation (svc_cgroup_prepare()) on a stand-in v2 hierarchy: the subtree and its
 * leaf main made, the controllers handed down on the way, the subtree, main and their delegated files given to the
 * user, and svc_cgroup_delegation() (svc-admin check) tells a delegated subtree from a missing or partly given one.
 */
static void test_cgroup_prepare_delegates_a_subtree(void)
{
	char top[] = "/tmp/svc-unit-cgprep-XXXXXX", a[128], svc[128], leaf[128], why[1024], path[300];
	static const char *const delegated[] = { "", "cgroup.procs", "cgroup.threads", "cgroup.subtree_control" };
	size_t i;

	if (geteuid() != 0) {
		fprintf(stderr, "%s: not root; no chown to check\n", __func__);
		return;
	}
	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(top));
	snprintf(a, sizeof a, "%s/a", top);
	snprintf(svc, sizeof svc, "%s/a/svc", top);
	snprintf(leaf, sizeof leaf, "%s/a/svc/main", top);
	CU_ASSERT_FATAL(fake_group(top, "cpuset cpu io memory pids") == 0 && fake_group(a, "cpu memory pids") == 0 &&
			fake_group(svc, "cpu memory pids") == 0 && fake_group(leaf, "cpu memory pids") == 0);
	/* root's (for an svc that runs as root) until prepared */
	CU_ASSERT_EQUAL(svc_cgroup_delegation(top, "/a/svc", why, sizeof why), 1);
	CU_ASSERT(strstr(why, "delegated to uid 0") != NULL);

	CU_ASSERT_EQUAL_FATAL(svc_cgroup_prepare(top, "/a/svc", 65534, 65534, why, sizeof why), 0);
	CU_ASSERT(handed_down(top) && handed_down(a) && handed_down(svc));
	for (i = 0; i < sizeof delegated / sizeof delegated[0]; i++)
		CU_ASSERT(owned(svc, delegated[i], 65534) && owned(leaf, delegated[i], 65534));
	CU_ASSERT(owned(a, "", 0) && owned(a, "cgroup.procs", 0)); /* nothing above the subtree is given away */
	CU_ASSERT_EQUAL(svc_cgroup_delegation(top, "/a/svc", why, sizeof why), 1);
	CU_ASSERT(strstr(why, "delegated to uid 65534") != NULL);
	/* again: harmless */
	CU_ASSERT_EQUAL(svc_cgroup_prepare(top, "/a/svc", 65534, 65534, why, sizeof why), 0);

	/* a file of the subtree not given: not ready; a subtree that is not there: not ready either */
	snprintf(path, sizeof path, "%s/cgroup.procs", svc);
	CU_ASSERT_FATAL(chown(path, 0, 0) == 0);
	CU_ASSERT_EQUAL(svc_cgroup_delegation(top, "/a/svc", why, sizeof why), 0);
	CU_ASSERT(strstr(why, "cgroup.procs") != NULL);
	CU_ASSERT_EQUAL(svc_cgroup_delegation(top, "/nope", why, sizeof why), 0);
	CU_ASSERT(strstr(why, "does not exist") != NULL);
	/* the units' own delegation: nothing to check */
	CU_ASSERT_EQUAL(svc_cgroup_delegation(top, "", why, sizeof why), 1);
	svc_fsx_remove_tree(top);
}

/* What svc_cgroup_prepare() refuses: a subtree that is not an absolute path below the root, a hierarchy without the
 * memory and pids controllers (a hybrid host's empty v2), no v2 at all. */
static void test_cgroup_prepare_refuses(void)
{
	char top[] = "/tmp/svc-unit-cgprep-XXXXXX", why[1024];
	static const char *const bad[] = { "svc", "/", "//", "/a/../b", "/a/./b", "/a b", NULL };
	size_t i;

	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(top));
	CU_ASSERT_FATAL(fake_group(top, "cpu memory pids") == 0);
	for (i = 0; bad[i]; i++) {
		CU_ASSERT_EQUAL(svc_cgroup_prepare(top, bad[i], 65534, 65534, why, sizeof why), SVC_E_UNAVAILABLE);
		CU_ASSERT(strstr(why, "absolute path") != NULL);
	}
	CU_ASSERT_EQUAL(svc_cgroup_prepare(top, NULL, 65534, 65534, why, sizeof why), SVC_E_UNAVAILABLE);
	CU_ASSERT_FATAL(fake_group(top, "cpu io") == 0);
	CU_ASSERT_EQUAL(svc_cgroup_prepare(top, "/svc", 65534, 65534, why, sizeof why), SVC_E_UNAVAILABLE);
	CU_ASSERT(strstr(why, "does not offer the memory and pids") != NULL);
	CU_ASSERT_EQUAL(svc_cgroup_delegation(top, "/svc", why, sizeof why), -1);
	{
		struct stat st;
		CU_ASSERT(stat(top, &st) == 0); /* nothing made */
		snprintf(why, sizeof why, "%s/svc", top);
		CU_ASSERT(stat(why, &st) < 0 && errno == ENOENT);
	}
	svc_fsx_remove_tree(top);
}

SVC_TEST_SUITE(cgroup)
{
	CU_pSuite s = CU_add_suite("cgroup", NULL, NULL);

	CU_add_test(s, "test_cgroup_memory_bound_is_named", test_cgroup_memory_bound_is_named);
	CU_add_test(s, "test_cgroup_process_bound_is_named", test_cgroup_process_bound_is_named);
	CU_add_test(s, "test_cgroup_node_wasm_gigabyte_fits", test_cgroup_node_wasm_gigabyte_fits);
	CU_add_test(s, "test_cgroup_parent_adds_pid_and_removal_kills", test_cgroup_parent_adds_pid_and_removal_kills);
	CU_add_test(s, "test_cgroup_refuses_bad_input", test_cgroup_refuses_bad_input);
	CU_add_test(s, "test_cgroup_prepare_delegates_a_subtree", test_cgroup_prepare_delegates_a_subtree);
	CU_add_test(s, "test_cgroup_prepare_refuses", test_cgroup_prepare_refuses);
}
