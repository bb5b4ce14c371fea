/* test_sandbox.c: a sandboxed run is contained by its cgroup, its disk and its network, names the limit that ended it, and leaves nothing behind. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <CUnit/CUnit.h>

#include "core/err.h"
#include "core/outbound.h"
#include "core/util.h"
#include "project/sandbox.h"
#include "unit.h"

#define BWRAP "/usr/bin/bwrap"
#define NODE "/usr/bin/node"

/* Whether this host can run the sandbox here: root (cgroups), bubblewrap, node; else why is printed. */
static int can_test(const char *test)
{
	char why[512];

	if (geteuid() != 0 || access(NODE, X_OK) != 0) {
		fprintf(stderr, "%s: not root or no node; the sandbox not checked\n", test);
		return 0;
	}
	if (svc_sandbox_check(BWRAP, NULL, why, sizeof why) < 0) {
		fprintf(stderr, "%s: no sandbox here (%s); not checked\n", test, why);
		return 0;
	}
	return 1;
}

struct out {
	char text[8192];
	size_t len;
};

static void collect(void *arg, const char *text, size_t len)
{
	struct out *o = arg;

	if (text && o->len + len < sizeof o->text) {
		memcpy(o->text + o->len, text, len);
		o->len += len;
		o->text[o->len] = '\0';
	}
}

/* A spec with small bounds, running `argv`, its output into `o`, named after the test. */
static void small_spec(struct svc_sandbox_spec *s, const char *const *argv, const char *name, struct out *o)
{
	memset(s, 0, sizeof *s);
	memset(o, 0, sizeof *o);
	s->bwrap = BWRAP;
	s->argv = argv;
	s->uid = 65534;
	s->memory_mb = 256;
	s->procs = 64;
	s->cpu_percent = 100;
	s->cpu_secs = 60;
	s->tmp_mb = 16;
	s->name = name;
	s->deadline_ms = svc_mono_ms() + 30000;
	s->log = collect;
	s->log_arg = o;
}

/* Whether a cgroup of `name` is left under any controller's hierarchy (the host's own cgroup's svc/). */
static int group_left(const char *name)
{
	char cmd[512];

	snprintf(cmd, sizeof cmd, "find /sys/fs/cgroup -maxdepth 6 -type d -name '%s' 2>/dev/null | grep -q .", name);
	return system(cmd) == 0;
}

static void test_sandbox_runs_and_reports_status(void)
{
	static const char *const cmd[] = { "/usr/bin/sh", "-c", "echo \"hi $GREETING from $(id -u)\"; exit 3", NULL };
	static const char *const env[] = { "GREETING=hello", NULL };
	struct svc_sandbox_spec s;
	struct svc_sandbox_result r;
	struct out o;
	char why[256];

	if (!can_test(__func__))
		return;
	small_spec(&s, cmd, "unit-sandbox-status", &o);
	s.env = env;
	CU_ASSERT_EQUAL_FATAL(svc_sandbox_run(&s, &r, why, sizeof why), 0);
	CU_ASSERT_EQUAL(r.status, 3);
	CU_ASSERT_EQUAL(r.limit, SVC_SANDBOX_LIMIT_NONE);
	CU_ASSERT(strstr(o.text, "hi hello from 65534") != NULL);
	CU_ASSERT(!group_left("unit-sandbox-status"));
}

/* Runs `cmd` as `name` with `procs` processes at most; *o gets the output. Returns the result's status and fills *r. */
static int run_small(const char *const *cmd, const char *name, unsigned procs, struct svc_sandbox_result *r,
		     struct out *o)
{
	struct svc_sandbox_spec s;
	char why[256];

	small_spec(&s, cmd, name, o);
	if (procs)
		s.procs = procs;
	CU_ASSERT_EQUAL_FATAL(svc_sandbox_run(&s, r, why, sizeof why), 0);
	CU_ASSERT(!group_left(name));
	return r->status;
}

static void test_sandbox_memory_bound_is_named(void)
{
	static const char *const cmd[] = {
		NODE, "-e", "const a=[];for(let i=0;i<64;i++){const b=Buffer.alloc(32<<20);b.fill(1);a.push(b)}", NULL
	};
	struct svc_sandbox_result r;
	struct out o;

	if (!can_test(__func__))
		return;
	CU_ASSERT(run_small(cmd, "unit-sandbox-memory", 0, &r, &o) != 0);
	CU_ASSERT_EQUAL(r.limit, SVC_SANDBOX_LIMIT_MEMORY);
	CU_ASSERT_STRING_EQUAL(r.limit_text, "more than 256 MB of memory");
}

static void test_sandbox_wasm_gigabyte_fits(void)
{
	static const char *const cmd[] = {
		NODE, "-e", "const m=new WebAssembly.Memory({initial:16384});console.log('wasm', m.buffer.byteLength)", NULL
	};
	struct svc_sandbox_result r;
	struct out o;

	if (!can_test(__func__))
		return;
	CU_ASSERT_EQUAL(run_small(cmd, "unit-sandbox-wasm", 0, &r, &o), 0);
	CU_ASSERT(strstr(o.text, "wasm 1073741824") != NULL);
}

static void test_sandbox_process_bound_is_named(void)
{
	static const char *const cmd[] = {
		"/usr/bin/sh", "-c", "i=0; while [ $i -lt 100 ]; do sleep 5 & i=$((i+1)); done; wait", NULL
	};
	struct svc_sandbox_result r;
	struct out o;

	if (!can_test(__func__))
		return;
	CU_ASSERT(run_small(cmd, "unit-sandbox-procs", 16, &r, &o) != 0);
	CU_ASSERT_EQUAL(r.limit, SVC_SANDBOX_LIMIT_PROCS);
	CU_ASSERT_STRING_EQUAL(r.limit_text, "more than 16 processes");
}

static void test_sandbox_disk_bound_is_named_and_removed(void)
{
	static const char *const cmd[] = {
		"/usr/bin/sh", "-c", "dd if=/dev/zero of=/work/big bs=1M count=32 2>&1", NULL
	};
	char dir[] = "/tmp/svc-unit-disk-XXXXXX", tree[64], why[256];
	struct svc_sandbox_mount m[1];
	struct svc_sandbox_spec s;
	struct svc_sandbox_result r;
	struct out o;
	struct stat st;

	if (!can_test(__func__))
		return;
	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
	CU_ASSERT_EQUAL(chmod(dir, 0711), 0); /* the sandbox's user reaches the tree in it */
	snprintf(tree, sizeof tree, "%s/tree", dir);
	CU_ASSERT_EQUAL_FATAL(svc_sandbox_disk_mount(tree, 8, 65534, why, sizeof why), 0);
	m[0] = (struct svc_sandbox_mount){ tree, "/work", 1, 0 };
	small_spec(&s, cmd, "unit-sandbox-disk", &o);
	s.mounts = m;
	s.nmounts = 1;
	s.disk_dir = tree;
	s.disk_mb = 8;
	CU_ASSERT_EQUAL_FATAL(svc_sandbox_run(&s, &r, why, sizeof why), 0);
	CU_ASSERT(r.status != 0);
	CU_ASSERT_EQUAL(r.limit, SVC_SANDBOX_LIMIT_DISK);
	CU_ASSERT_STRING_EQUAL(r.limit_text, "more than 8 MB of disk");
	if (r.limit != SVC_SANDBOX_LIMIT_DISK)
		fprintf(stderr, "status %d: %s\n", r.status, o.text);
	CU_ASSERT_EQUAL(svc_sandbox_disk_remove(tree), 0);
	CU_ASSERT(stat(tree, &st) < 0 && errno == ENOENT);
	CU_ASSERT(system("grep -q svc-unit-disk /proc/self/mounts") != 0);
	rmdir(dir);
}

static void test_sandbox_deadline_and_stop_are_named(void)
{
	static const char *const cmd[] = { "/usr/bin/sleep", "30", NULL };
	struct svc_sandbox_spec s;
	struct svc_sandbox_result r;
	struct svc_sandbox *sb = NULL;
	struct out o;
	char why[256];
	int64_t t0 = svc_mono_ms();

	if (!can_test(__func__))
		return;
	small_spec(&s, cmd, "unit-sandbox-time", &o);
	s.deadline_ms = svc_mono_ms() + 500;
	CU_ASSERT_EQUAL_FATAL(svc_sandbox_run(&s, &r, why, sizeof why), 0);
	CU_ASSERT_EQUAL(r.limit, SVC_SANDBOX_LIMIT_TIME);
	CU_ASSERT_EQUAL(r.status, -1);
	CU_ASSERT(svc_mono_ms() - t0 < 5000);
	/* started without waiting: a handle, its cgroup, stopped */
	CU_ASSERT_EQUAL_FATAL(svc_sandbox_start(&s, -1, &sb, why, sizeof why), 0);
	CU_ASSERT(svc_sandbox_pid(sb) > 0);
	CU_ASSERT_PTR_NOT_NULL(svc_sandbox_cgroup(sb));
	CU_ASSERT_EQUAL(svc_sandbox_poll(sb), 0);
	CU_ASSERT(group_left("unit-sandbox-time"));
	CU_ASSERT_EQUAL(svc_sandbox_stop(sb, 200), 0);
	CU_ASSERT_EQUAL(svc_sandbox_wait(sb, &r), 0);
	CU_ASSERT_EQUAL(r.limit, SVC_SANDBOX_LIMIT_STOPPED);
	CU_ASSERT(!group_left("unit-sandbox-time"));
}

/* spec->cancel of the next test: asks to stop once `after_ms` passed since `t0`, counting the questions. */
struct cancel_at {
	int64_t t0, after_ms;
	int asked;
};

static int cancel_after(void *arg)
{
	struct cancel_at *c = arg;

	c->asked++;
	return svc_mono_ms() - c->t0 >= c->after_ms ? 1 : 0;
}

/* A run whose cancel answers non-zero ends at once, its group killed, as stopped (a turn's Stop during a build). */
static void test_sandbox_cancel_stops_the_run_at_once(void)
{
	static const char *const cmd[] = { "/usr/bin/sh", "-c", "sleep 30 & sleep 30", NULL };
	struct svc_sandbox_spec s;
	struct svc_sandbox_result r;
	struct cancel_at c;
	struct out o;
	char why[256];
	int64_t took;

	if (!can_test(__func__))
		return;
	small_spec(&s, cmd, "unit-sandbox-cancel", &o);
	s.deadline_ms = svc_mono_ms() + 20000;
	c.t0 = svc_mono_ms();
	c.after_ms = 600;
	c.asked = 0;
	s.cancel = cancel_after;
	s.cancel_arg = &c;
	CU_ASSERT_EQUAL_FATAL(svc_sandbox_run(&s, &r, why, sizeof why), 0);
	took = svc_mono_ms() - c.t0;
	CU_ASSERT_EQUAL(r.limit, SVC_SANDBOX_LIMIT_STOPPED);
	CU_ASSERT_STRING_EQUAL(r.limit_text, "stopped");
	CU_ASSERT(took >= 600 && took < 3000);
	CU_ASSERT(c.asked >= 3); /* about every 200 ms, not once a second */
	CU_ASSERT(!group_left("unit-sandbox-cancel"));
}

/* ---- the network ---- */

struct reg {
	int lfd;
	int accepted;
};

/* The registry double: answers each connection "registry-says-hi" and counts them. */
static void *reg_serve(void *arg)
{
	struct reg *g = arg;
	int fd;

	while ((fd = accept(g->lfd, NULL, NULL)) >= 0) {
		__atomic_add_fetch(&g->accepted, 1, __ATOMIC_SEQ_CST);
		ssize_t w = write(fd, "registry-says-hi\n", 17);
		(void)w;
		close(fd);
	}
	return NULL;
}

static int loop_listener(unsigned *port)
{
	struct sockaddr_in a = { 0 };
	socklen_t len = sizeof a;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) < 0 || listen(fd, 16) < 0 ||
	    getsockname(fd, (struct sockaddr *)&a, &len) < 0)
		return -1;
	*port = ntohs(a.sin_port);
	return fd;
}

/* reg.test is the loopback double; anything else does not resolve. */
static int reg_resolve(void *arg, const char *host, unsigned port, struct sockaddr_storage *out, socklen_t *lens,
		       size_t max, size_t *n)
{
	struct sockaddr_in *a = (struct sockaddr_in *)(void *)out;

	(void)arg;
	*n = 0;
	if (strcmp(host, "reg.test") != 0 || max < 1)
		return -1;
	memset(out, 0, sizeof *out);
	a->sin_family = AF_INET;
	a->sin_port = htons((unsigned short)port);
	a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	lens[0] = sizeof *a;
	*n = 1;
	return 0;
}

/* Node inside: direct connects to the host's loopback port and 10.0.0.1, then CONNECTs through the proxy. */
#define NET_SCRIPT                                                                                                  \
	"const net=require('net');const port=+process.argv[1];"                                                    \
	"function direct(h){return new Promise(r=>{const s=net.connect({host:h,port},()=>{r(h+' reached');s.destroy()});" \
	"s.on('error',e=>r(h+' '+e.code));s.setTimeout(1500,()=>{r(h+' timeout');s.destroy()})})}"                     \
	"function tunnel(t){return new Promise(r=>{let d='';const s=net.connect({host:'127.0.0.1',port:3128},()=>"       \
	"s.write('CONNECT '+t+' HTTP/1.1\\r\\nHost: '+t+'\\r\\n\\r\\n'));s.on('data',b=>d+=b);"                         \
	"s.on('close',()=>r(t+' => '+JSON.stringify(d)));s.on('error',e=>r(t+' '+e.code))})}"                        \
	"(async()=>{for(const h of ['127.0.0.1','10.0.0.1','169.254.169.254'])console.log(await direct(h));"             \
	"for(const t of ['reg.test:'+port,'127.0.0.1:'+port,'169.254.169.254:80'])console.log(await tunnel(t))})()"

static void test_sandbox_registry_only_network(void)
{
	struct svc_outbound_policy loop;
	struct svc_sandbox_spec s;
	struct svc_sandbox_result r;
	struct out o;
	struct reg g = { -1, 0 };
	pthread_t th;
	unsigned port = 0;
	char registry[64], portarg[16], why[256], want[128];
	const char *cmd[] = { NODE, "-e", NET_SCRIPT, portarg, NULL };

	if (!can_test(__func__))
		return;
	CU_ASSERT_EQUAL_FATAL(svc_outbound_policy_parse(0, "127.0.0.0/8", &loop), 0);
	g.lfd = loop_listener(&port);
	CU_ASSERT_FATAL(g.lfd >= 0);
	CU_ASSERT_EQUAL_FATAL(pthread_create(&th, NULL, reg_serve, &g), 0);
	snprintf(portarg, sizeof portarg, "%u", port);
	snprintf(registry, sizeof registry, "https://reg.test:%u/", port);
	small_spec(&s, cmd, "unit-sandbox-net", &o);
	s.network = SVC_SANDBOX_NET_REGISTRY;
	s.registry = registry;
	s.egress_policy = &loop;
	s.egress_resolve = reg_resolve;
	CU_ASSERT_EQUAL(svc_sandbox_run(&s, &r, why, sizeof why), 0);
	CU_ASSERT_EQUAL(r.status, 0);
	CU_ASSERT(strstr(o.text, "127.0.0.1 ECONNREFUSED") != NULL);
	CU_ASSERT(strstr(o.text, "10.0.0.1 reached") == NULL && strstr(o.text, "10.0.0.1 ") != NULL);
	CU_ASSERT(strstr(o.text, "169.254.169.254 reached") == NULL);
	snprintf(want, sizeof want, "reg.test:%u => \"HTTP/1.1 200", port);
	CU_ASSERT(strstr(o.text, want) != NULL);
	CU_ASSERT(strstr(o.text, "registry-says-hi") != NULL);
	snprintf(want, sizeof want, "127.0.0.1:%u => \"HTTP/1.1 403", port);
	CU_ASSERT(strstr(o.text, want) != NULL);
	CU_ASSERT(strstr(o.text, "169.254.169.254:80 => \"HTTP/1.1 403") != NULL);
	CU_ASSERT_EQUAL(__atomic_load_n(&g.accepted, __ATOMIC_SEQ_CST), 1); /* only the tunnel to the registry */
	if (!strstr(o.text, want))
		fprintf(stderr, "%s\n", o.text);
	/* no network at all: not even the proxy */
	small_spec(&s, cmd, "unit-sandbox-nonet", &o);
	CU_ASSERT_EQUAL(svc_sandbox_run(&s, &r, why, sizeof why), 0);
	CU_ASSERT(strstr(o.text, "reg.test") != NULL && strstr(o.text, "HTTP/1.1 200") == NULL);
	CU_ASSERT_EQUAL(__atomic_load_n(&g.accepted, __ATOMIC_SEQ_CST), 1);
	shutdown(g.lfd, SHUT_RDWR);
	close(g.lfd);
	pthread_join(th, NULL);
}

static void test_sandbox_socket_reaches_a_server_inside(void)
{
	static const char *const cmd[] = {
		NODE, "-e", "require('http').createServer((q,r)=>r.end('inside')).listen(5173,'127.0.0.1')", NULL
	};
	struct sockaddr_in a = { 0 };
	struct svc_sandbox_spec s;
	struct svc_sandbox_result r;
	struct svc_sandbox *sb = NULL;
	struct out o;
	char why[256], buf[512] = "";
	int fd = -1, i, connected = -1;
	ssize_t n = 0;

	if (!can_test(__func__))
		return;
	small_spec(&s, cmd, "unit-sandbox-socket", &o);
	CU_ASSERT_EQUAL_FATAL(svc_sandbox_start(&s, -1, &sb, why, sizeof why), 0);
	a.sin_family = AF_INET;
	a.sin_port = htons(5173);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	for (i = 0; i < 100 && connected < 0; i++) { /* node takes a moment to listen */
		if (fd >= 0)
			close(fd);
		fd = -1;
		if (svc_sandbox_socket(sb, &fd) == 0)
			connected = connect(fd, (struct sockaddr *)&a, sizeof a);
		if (connected < 0)
			usleep(50000);
	}
	CU_ASSERT_EQUAL(connected, 0);
	if (connected == 0 && write(fd, "GET / HTTP/1.0\r\n\r\n", 18) == 18)
		n = read(fd, buf, sizeof buf - 1);
	buf[n > 0 ? n : 0] = '\0';
	CU_ASSERT(strstr(buf, "inside") != NULL);
	if (fd >= 0)
		close(fd);
	/* the socket was made there, not here: nothing of the host listens on 5173 */
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	CU_ASSERT(connect(fd, (struct sockaddr *)&a, sizeof a) < 0);
	close(fd);
	svc_sandbox_stop(sb, 500);
	CU_ASSERT_EQUAL(svc_sandbox_wait(sb, &r), 0);
	CU_ASSERT(!group_left("unit-sandbox-socket"));
}

/*
 * spec.pass_fds: the two descriptors become the command's 3 and 4 (it reads what was written to the
 * first pipe on 3 and answers on 4), and no other descriptor of the caller reaches it: an open file
 * of the caller (here fd `extra`) is not there.
 */
static void test_sandbox_passes_exactly_the_two_fds(void)
{
	static const char *const cmd[] = { "/usr/bin/sh", "-c",
					   "read line <&3; echo \"got $line\" >&4; ls /proc/self/fd | tr '\\n' ' '", NULL };
	struct svc_sandbox_spec s;
	struct svc_sandbox_result r;
	struct out o;
	int to[2], from[2], extra;
	char why[256], buf[64] = "";
	ssize_t n;

	if (!can_test(__func__))
		return;
	CU_ASSERT_EQUAL_FATAL(pipe(to), 0);
	CU_ASSERT_EQUAL_FATAL(pipe(from), 0);
	extra = open("/dev/null", O_RDONLY); /* not close-on-exec: must stay outside anyway */
	CU_ASSERT_FATAL(extra >= 0);
	small_spec(&s, cmd, "unit-sandbox-fds", &o);
	s.pass_fds[0] = to[0];
	s.pass_fds[1] = from[1];
	s.npass_fds = 2;
	CU_ASSERT_EQUAL_FATAL(write(to[1], "ping\n", 5), 5);
	close(to[1]);
	CU_ASSERT_EQUAL_FATAL(svc_sandbox_run(&s, &r, why, sizeof why), 0);
	close(from[1]);
	n = read(from[0], buf, sizeof buf - 1);
	buf[n > 0 ? n : 0] = '\0';
	CU_ASSERT_STRING_EQUAL(buf, "got ping\n");
	CU_ASSERT_EQUAL(r.status, 0);
	/* ls sees its own directory's fd as well (one number above 4) */
	CU_ASSERT(strncmp(o.text, "0 1 2 3 4 ", 10) == 0 && strlen(o.text) <= 13);
	if (strncmp(o.text, "0 1 2 3 4 ", 10) != 0 || strlen(o.text) > 13)
		fprintf(stderr, "test_sandbox: fds inside: %s\n", o.text);
	close(to[0]);
	close(from[0]);
	close(extra);
	CU_ASSERT(!group_left("unit-sandbox-fds"));
}

static void test_sandbox_refuses_bad_specs(void)
{
	static const char *const cmd[] = { "/usr/bin/true", NULL };
	static const char *const bad_env[] = { "NOEQUALS", NULL };
	struct svc_sandbox_mount rel = { "relative", "/x", 0, 0 };
	struct svc_sandbox_spec s;
	struct svc_sandbox_result r;
	struct out o;
	char why[256];

	small_spec(&s, cmd, "bad/name", &o);
	CU_ASSERT(svc_sandbox_run(&s, &r, why, sizeof why) < 0);
	small_spec(&s, cmd, "unit-ok", &o);
	s.env = bad_env;
	CU_ASSERT_EQUAL(svc_sandbox_run(&s, &r, why, sizeof why), SVC_E_VALIDATION);
	small_spec(&s, cmd, "unit-ok", &o);
	s.mounts = &rel;
	s.nmounts = 1;
	CU_ASSERT_EQUAL(svc_sandbox_run(&s, &r, why, sizeof why), SVC_E_VALIDATION);
	small_spec(&s, cmd, "unit-ok", &o);
	s.network = SVC_SANDBOX_NET_REGISTRY;
	s.registry = "http://registry.npmjs.org/";
	CU_ASSERT_EQUAL(svc_sandbox_run(&s, &r, why, sizeof why), SVC_E_VALIDATION);
	CU_ASSERT(strstr(why, "https only") != NULL);
	CU_ASSERT_EQUAL(svc_sandbox_check("/nonexistent/bwrap", NULL, why, sizeof why), SVC_E_UNAVAILABLE);
	CU_ASSERT(strstr(why, "no bubblewrap") != NULL);
	CU_ASSERT_STRING_EQUAL(svc_sandbox_limit_name(SVC_SANDBOX_LIMIT_DISK), "disk");
	CU_ASSERT_EQUAL(svc_sandbox_wait(NULL, &r), 0);
}

SVC_TEST_SUITE(sandbox)
{
	CU_pSuite s = CU_add_suite("sandbox", NULL, NULL);

	CU_add_test(s, "test_sandbox_runs_and_reports_status", test_sandbox_runs_and_reports_status);
	CU_add_test(s, "test_sandbox_memory_bound_is_named", test_sandbox_memory_bound_is_named);
	CU_add_test(s, "test_sandbox_wasm_gigabyte_fits", test_sandbox_wasm_gigabyte_fits);
	CU_add_test(s, "test_sandbox_process_bound_is_named", test_sandbox_process_bound_is_named);
	CU_add_test(s, "test_sandbox_disk_bound_is_named_and_removed", test_sandbox_disk_bound_is_named_and_removed);
	CU_add_test(s, "test_sandbox_deadline_and_stop_are_named", test_sandbox_deadline_and_stop_are_named);
	CU_add_test(s, "test_sandbox_cancel_stops_the_run_at_once", test_sandbox_cancel_stops_the_run_at_once);
	CU_add_test(s, "test_sandbox_registry_only_network", test_sandbox_registry_only_network);
	CU_add_test(s, "test_sandbox_socket_reaches_a_server_inside", test_sandbox_socket_reaches_a_server_inside);
	CU_add_test(s, "test_sandbox_refuses_bad_specs", test_sandbox_refuses_bad_specs);
	CU_add_test(s, "test_sandbox_passes_exactly_the_two_fds", test_sandbox_passes_exactly_the_two_fds);
}
