/* test_egress.c: the install step's proxy tunnels to the registry only, never to an internal address, and is bounded. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <CUnit/CUnit.h>

#include "core/egress.h"
#include "core/err.h"
#include "core/netns.h"
#include "core/util.h"
#include "unit.h"

/* A TCP listener on 127.0.0.1 on a free port: its descriptor, *port its port. */
static int listener(unsigned *port)
{
	struct sockaddr_in a;
	socklen_t len = sizeof a;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	memset(&a, 0, sizeof a);
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) < 0 || listen(fd, 16) < 0 ||
	    getsockname(fd, (struct sockaddr *)&a, &len) < 0) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	*port = ntohs(a.sin_port);
	return fd;
}

static int connect_local(unsigned port)
{
	struct sockaddr_in a;
	struct timeval tv = { 10, 0 };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	memset(&a, 0, sizeof a);
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	a.sin_port = htons((unsigned short)port);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) < 0) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	return fd;
}

/* Reads from `fd` into `buf` (of `max`) until EOF, or, with `head_only`, until the end of a response head. */
static size_t read_reply(int fd, char *buf, size_t max, int head_only)
{
	size_t got = 0;

	while (got < max - 1) {
		ssize_t r = recv(fd, buf + got, max - 1 - got, 0);
		if (r <= 0)
			break;
		got += (size_t)r;
		buf[got] = '\0';
		if (head_only && strstr(buf, "\r\n\r\n"))
			break;
	}
	buf[got] = '\0';
	return got;
}

/* Sends `req` to the proxy on `port` and reads its whole answer into `buf`. Returns 0, or -1. */
static int ask(unsigned port, const char *req, char *buf, size_t max)
{
	int fd = connect_local(port);

	if (fd < 0)
		return -1;
	if (send(fd, req, strlen(req), MSG_NOSIGNAL) < 0) {
		close(fd);
		return -1;
	}
	read_reply(fd, buf, max, 0);
	close(fd);
	return 0;
}

/* The test resolver: fixed names to fixed addresses; nothing is ever sent to the internal ones (refused first). */
static int fake_resolve(void *arg, const char *host, unsigned port, struct sockaddr_storage *out, socklen_t *lens,
			size_t max, size_t *n)
{
	static const struct {
		const char *name, *addr;
	} table[] = {
		{ "loop.test", "127.0.0.1" },     { "echo.test", "127.0.0.1" },    { "priv.test", "10.1.2.3" },
		{ "meta.test", "169.254.169.254" }, { "ula.test", "fd00::1" },     { "v6loop.test", "::1" },
		{ "mixed.test", "93.184.216.34" }, { "mixed.test", "192.168.1.1" }, { "zero.test", "0.0.0.0" },
	};
	size_t i;

	(void)arg;
	*n = 0;
	for (i = 0; i < sizeof table / sizeof table[0] && *n < max; i++) {
		if (strcmp(table[i].name, host) != 0)
			continue;
		memset(&out[*n], 0, sizeof out[*n]);
		if (strchr(table[i].addr, ':')) {
			struct sockaddr_in6 *a = (struct sockaddr_in6 *)(void *)&out[*n];
			a->sin6_family = AF_INET6;
			a->sin6_port = htons((unsigned short)port);
			inet_pton(AF_INET6, table[i].addr, &a->sin6_addr);
			lens[*n] = sizeof *a;
		} else {
			struct sockaddr_in *a = (struct sockaddr_in *)(void *)&out[*n];
			a->sin_family = AF_INET;
			a->sin_port = htons((unsigned short)port);
			inet_pton(AF_INET, table[i].addr, &a->sin_addr);
			lens[*n] = sizeof *a;
		}
		(*n)++;
	}
	return *n ? 0 : -1;
}

/* Starts a proxy on a fresh local listener; *port is where it listens. */
static struct svc_egress *start(struct svc_egress_opts *o, unsigned *port)
{
	struct svc_egress *eg = NULL;
	int lfd = listener(port);

	if (lfd < 0 || svc_egress_start(o, lfd, &eg) < 0)
		return NULL;
	return eg;
}

static void test_egress_refuses_hosts_not_allowed(void)
{
	struct svc_egress_opts o = { "registry.npmjs.org", 0, 5, 2, NULL, fake_resolve, NULL };
	struct svc_egress_stats st;
	struct svc_egress *eg;
	char buf[2048];
	unsigned port;

	eg = start(&o, &port);
	CU_ASSERT_PTR_NOT_NULL_FATAL(eg);
	CU_ASSERT_EQUAL(ask(port, "CONNECT evil.example:443 HTTP/1.1\r\nHost: evil.example:443\r\n\r\n", buf, sizeof buf), 0);
	CU_ASSERT(strncmp(buf, "HTTP/1.1 403 ", 13) == 0);
	CU_ASSERT(strstr(buf, "\r\n\r\nevil.example:443 is not the package registry\n") != NULL);
	/* the registry's name on another port */
	CU_ASSERT_EQUAL(ask(port, "CONNECT registry.npmjs.org:80 HTTP/1.1\r\n\r\n", buf, sizeof buf), 0);
	CU_ASSERT(strncmp(buf, "HTTP/1.1 403 ", 13) == 0);
	/* an address given directly */
	CU_ASSERT_EQUAL(ask(port, "CONNECT 169.254.169.254:443 HTTP/1.1\r\n\r\n", buf, sizeof buf), 0);
	CU_ASSERT(strncmp(buf, "HTTP/1.1 403 ", 13) == 0);
	/* plain proxying: npm would send its registry requests so over http; refused */
	CU_ASSERT_EQUAL(ask(port, "GET http://registry.npmjs.org/react HTTP/1.1\r\nHost: registry.npmjs.org\r\n\r\n", buf,
			    sizeof buf),
			0);
	CU_ASSERT(strncmp(buf, "HTTP/1.1 403 ", 13) == 0);
	CU_ASSERT(strstr(buf, "only CONNECT") != NULL);
	CU_ASSERT_EQUAL(ask(port, "CONNECT registry.npmjs.org:443\r\n\r\n", buf, sizeof buf), 0);
	CU_ASSERT(strstr(buf, "\r\n\r\nmalformed CONNECT request\n") != NULL);
	CU_ASSERT_EQUAL(ask(port, "CONNECT [::1]:443 HTTP/1.1\r\n\r\n", buf, sizeof buf), 0);
	CU_ASSERT(strncmp(buf, "HTTP/1.1 403 ", 13) == 0);
	svc_egress_stats(eg, &st);
	CU_ASSERT_EQUAL(st.refused, 6);
	CU_ASSERT_EQUAL(st.tunnels, 0);
	CU_ASSERT_EQUAL(svc_egress_stop(eg), 0);
}

static void test_egress_refuses_internal_addresses(void)
{
	static const struct {
		const char *name, *kind;
	} cases[] = {
		{ "loop.test", "a loopback address" }, { "priv.test", "a private address" },
		{ "meta.test", "a link-local address" }, { "ula.test", "a private address" },
		{ "v6loop.test", "a loopback address" }, { "mixed.test", "a private address" },
		{ "zero.test", "an unspecified address" },
	};
	/* the allow-list names them all: the production guard (policy NULL) still refuses every one */
	struct svc_egress_opts o = { "loop.test priv.test,meta.test ula.test v6loop.test mixed.test zero.test", 0, 5, 2, NULL,
				     fake_resolve, NULL };
	struct svc_egress_stats st;
	struct svc_egress *eg;
	char buf[2048], req[256], want[128];
	unsigned port;
	size_t i;

	eg = start(&o, &port);
	CU_ASSERT_PTR_NOT_NULL_FATAL(eg);
	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		snprintf(req, sizeof req, "CONNECT %s:443 HTTP/1.1\r\nHost: %s:443\r\n\r\n", cases[i].name, cases[i].name);
		snprintf(want, sizeof want, "\r\n\r\n%s resolves to %s\n", cases[i].name, cases[i].kind);
		CU_ASSERT_EQUAL(ask(port, req, buf, sizeof buf), 0);
		CU_ASSERT(strncmp(buf, "HTTP/1.1 403 ", 13) == 0);
		CU_ASSERT(strstr(buf, want) != NULL);
		if (!strstr(buf, want))
			fprintf(stderr, "test_egress_refuses_internal_addresses: %s: %s\n", cases[i].name, buf);
	}
	svc_egress_stats(eg, &st);
	CU_ASSERT_EQUAL(st.refused, sizeof cases / sizeof cases[0]);
	CU_ASSERT_EQUAL(st.tunnels, 0);
	svc_egress_stop(eg);
}

/* The echo double: echoes one connection at a time back until its client closes, until told to stop. */
struct echo {
	int lfd;
	pthread_t t;
	volatile int stop;
};

static void *echo_main(void *arg)
{
	struct echo *e = arg;

	while (!e->stop) {
		struct pollfd p = { e->lfd, POLLIN, 0 };
		char buf[4096];
		int fd;
		if (poll(&p, 1, 100) <= 0)
			continue;
		fd = accept(e->lfd, NULL, NULL);
		if (fd < 0)
			continue;
		for (;;) {
			ssize_t n = recv(fd, buf, sizeof buf, 0);
			if (n <= 0 || send(fd, buf, (size_t)n, MSG_NOSIGNAL) != n)
				break;
		}
		close(fd);
	}
	return NULL;
}

static void test_egress_tunnels_to_an_allowed_double(void)
{
	struct svc_outbound_policy loopback;
	struct svc_egress_opts o = { NULL, 0, 5, 2, &loopback, fake_resolve, NULL };
	struct svc_egress_stats st;
	struct svc_egress *eg;
	struct echo e;
	char buf[2048], allow[64], req[128];
	unsigned port, eport;
	int fd;

	memset(&e, 0, sizeof e);
	e.lfd = listener(&eport);
	CU_ASSERT_FATAL(e.lfd >= 0);
	CU_ASSERT_FATAL(pthread_create(&e.t, NULL, echo_main, &e) == 0);
	/* the test-only widening: the loopback double's one address */
	CU_ASSERT_EQUAL(svc_outbound_policy_parse(0, "127.0.0.1/32", &loopback), 0);
	snprintf(allow, sizeof allow, "echo.test:%u", eport);
	o.allow = allow;
	eg = start(&o, &port);
	CU_ASSERT_PTR_NOT_NULL_FATAL(eg);
	fd = connect_local(port);
	CU_ASSERT_FATAL(fd >= 0);
	/* the first tunnel bytes right behind the request, as a client in a hurry sends them */
	snprintf(req, sizeof req, "CONNECT echo.test:%u HTTP/1.1\r\nHost: echo.test:%u\r\n\r\nearly", eport, eport);
	CU_ASSERT(send(fd, req, strlen(req), MSG_NOSIGNAL) > 0);
	read_reply(fd, buf, sizeof("HTTP/1.1 200 Connection established\r\n\r\nearly"), 0);
	CU_ASSERT_STRING_EQUAL(buf, "HTTP/1.1 200 Connection established\r\n\r\nearly");
	CU_ASSERT(send(fd, "hello", 5, MSG_NOSIGNAL) == 5);
	read_reply(fd, buf, 6, 0);
	CU_ASSERT_STRING_EQUAL(buf, "hello");
	shutdown(fd, SHUT_WR); /* half-close passes through: the echo closes, the tunnel ends */
	CU_ASSERT_EQUAL(read_reply(fd, buf, sizeof buf, 0), 0);
	close(fd);
	svc_egress_stats(eg, &st);
	CU_ASSERT_EQUAL(st.tunnels, 1);
	CU_ASSERT_EQUAL(st.bytes_up, 10);
	CU_ASSERT_EQUAL(st.bytes_down, 10);
	/* the same double without the widening: the production guard refuses it */
	svc_egress_stop(eg);
	o.policy = NULL;
	eg = start(&o, &port);
	CU_ASSERT_PTR_NOT_NULL_FATAL(eg);
	snprintf(req, sizeof req, "CONNECT echo.test:%u HTTP/1.1\r\n\r\n", eport);
	CU_ASSERT_EQUAL(ask(port, req, buf, sizeof buf), 0);
	CU_ASSERT(strstr(buf, "echo.test resolves to a loopback address") != NULL);
	svc_egress_stop(eg);
	e.stop = 1;
	pthread_join(e.t, NULL);
	close(e.lfd);
}

static void test_egress_bounds_tunnels_and_idle(void)
{
	struct svc_outbound_policy loopback;
	struct svc_egress_opts o = { NULL, 1, 1, 2, &loopback, fake_resolve, NULL };
	struct svc_egress *eg;
	struct echo e;
	char buf[2048], allow[64], req[128];
	unsigned port, eport;
	int fd, idle;
	int64_t t0;

	memset(&e, 0, sizeof e);
	e.lfd = listener(&eport);
	CU_ASSERT_FATAL(e.lfd >= 0);
	CU_ASSERT_FATAL(pthread_create(&e.t, NULL, echo_main, &e) == 0);
	CU_ASSERT_EQUAL(svc_outbound_policy_parse(0, "127.0.0.1/32", &loopback), 0);
	snprintf(allow, sizeof allow, "echo.test:%u", eport);
	o.allow = allow;
	eg = start(&o, &port);
	CU_ASSERT_PTR_NOT_NULL_FATAL(eg);
	fd = connect_local(port);
	snprintf(req, sizeof req, "CONNECT echo.test:%u HTTP/1.1\r\n\r\n", eport);
	CU_ASSERT(send(fd, req, strlen(req), MSG_NOSIGNAL) > 0);
	read_reply(fd, buf, sizeof buf, 1);
	CU_ASSERT(strncmp(buf, "HTTP/1.1 200 ", 13) == 0);
	/* one tunnel at most: the second connection is answered 503 */
	CU_ASSERT_EQUAL(ask(port, req, buf, sizeof buf), 0);
	CU_ASSERT(strncmp(buf, "HTTP/1.1 503 ", 13) == 0);
	/* the open tunnel carries nothing: closed after its idle second */
	t0 = svc_mono_ms();
	CU_ASSERT_EQUAL(read_reply(fd, buf, sizeof buf, 0), 0);
	CU_ASSERT(svc_mono_ms() - t0 < 4000);
	close(fd);
	/* a connection that never sends its request is closed as idle too */
	idle = connect_local(port);
	t0 = svc_mono_ms();
	CU_ASSERT_EQUAL(read_reply(idle, buf, sizeof buf, 0), 0);
	CU_ASSERT(svc_mono_ms() - t0 < 4000);
	close(idle);
	/* stopping with a tunnel open ends it */
	fd = connect_local(port);
	CU_ASSERT(send(fd, req, strlen(req), MSG_NOSIGNAL) > 0);
	read_reply(fd, buf, sizeof buf, 1);
	CU_ASSERT(strncmp(buf, "HTTP/1.1 200 ", 13) == 0);
	CU_ASSERT_EQUAL(svc_egress_stop(eg), 0);
	CU_ASSERT_EQUAL(read_reply(fd, buf, sizeof buf, 0), 0);
	close(fd);
	e.stop = 1;
	pthread_join(e.t, NULL);
	close(e.lfd);
}

static void test_egress_registry_allow_entry(void)
{
	struct svc_egress_opts bad = { "registry.npmjs.org:99999", 0, 0, 0, NULL, NULL, NULL };
	struct svc_egress_opts none = { " , ", 0, 0, 0, NULL, NULL, NULL };
	struct svc_egress *eg = NULL;
	char out[128];
	unsigned port;
	int lfd;

	CU_ASSERT_EQUAL(svc_egress_allow_registry("https://registry.npmjs.org/", out, sizeof out), 0);
	CU_ASSERT_STRING_EQUAL(out, "registry.npmjs.org:443");
	CU_ASSERT_EQUAL(svc_egress_allow_registry("https://NPM.Example.com:8443/npm/", out, sizeof out), 0);
	CU_ASSERT_STRING_EQUAL(out, "npm.example.com:8443");
	CU_ASSERT_EQUAL(svc_egress_allow_registry("https://[2001:db8::1]:8443", out, sizeof out), 0);
	CU_ASSERT_STRING_EQUAL(out, "[2001:db8::1]:8443");
	CU_ASSERT_EQUAL(svc_egress_allow_registry("http://registry.npmjs.org/", out, sizeof out), SVC_E_VALIDATION);
	CU_ASSERT_EQUAL(svc_egress_allow_registry("https://user:pw@registry.npmjs.org/", out, sizeof out), SVC_E_VALIDATION);
	CU_ASSERT_EQUAL(svc_egress_allow_registry("https:///x", out, sizeof out), SVC_E_VALIDATION);
	CU_ASSERT_EQUAL(svc_egress_allow_registry("https://a.b:0/", out, sizeof out), SVC_E_VALIDATION);
	CU_ASSERT_EQUAL(svc_egress_allow_registry("https://a b/", out, sizeof out), SVC_E_VALIDATION);
	lfd = listener(&port);
	CU_ASSERT_EQUAL(svc_egress_start(&bad, lfd, &eg), SVC_E_VALIDATION);
	lfd = listener(&port);
	CU_ASSERT_EQUAL(svc_egress_start(&none, lfd, &eg), SVC_E_VALIDATION);
	CU_ASSERT_PTR_NULL(eg);
	CU_ASSERT_EQUAL(svc_egress_stop(NULL), 0);
}

/*
 * The real thing: curl in a network namespace of its own (svc_netns_isolate())
 * reaches the npm registry through the proxy, and nothing else: not a
 * listener on the host's loopback, not 169.254.169.254, directly or through
 * the proxy.
 */
static void test_egress_netns_reaches_only_the_registry(void)
{
	static const char *const curl = "/usr/bin/curl";
	char script[2048], out[2048], allow[128];
	struct svc_egress_opts o = { NULL, 8, 30, 15, NULL, NULL, NULL };
	struct svc_egress_stats st;
	struct svc_egress *eg = NULL;
	int sp[2], pipefd[2], lfd = -1, host_fd, status = 0;
	unsigned host_port;
	size_t got = 0;
	pid_t pid;
	int64_t deadline;
	struct pollfd hp;

	if (access(curl, X_OK) != 0) {
		fprintf(stderr, "test_egress_netns_reaches_only_the_registry: %s not installed; not checked\n", curl);
		return;
	}
	host_fd = listener(&host_port);
	CU_ASSERT_FATAL(host_fd >= 0);
	snprintf(script, sizeof script,
		 "c='%s -q -s -o /dev/null --max-time'\n"
		 "$c 120 -w 'registry %%{http_code}\\n' --proxy http://127.0.0.1:3128 "
		 "-H 'Accept: application/vnd.npm.install-v1+json' https://registry.npmjs.org/react\n"
		 "$c 5 -w 'host %%{http_code}\\n' http://127.0.0.1:%u/\n"
		 "$c 5 -w 'metadata %%{http_code}\\n' http://169.254.169.254/latest/meta-data/\n"
		 "$c 5 -w 'proxied-metadata %%{http_connect}\\n' --proxy http://127.0.0.1:3128 https://169.254.169.254/\n"
		 "$c 5 -w 'proxied-host %%{http_code}\\n' --proxy http://127.0.0.1:3128 http://127.0.0.1:%u/\n"
		 "$c 5 -w 'proxied-host-tls %%{http_connect}\\n' --proxy http://127.0.0.1:3128 https://127.0.0.1:%u/\n",
		 curl, host_port, host_port, host_port);
	CU_ASSERT_FATAL(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) == 0);
	CU_ASSERT_FATAL(pipe2(pipefd, O_CLOEXEC) == 0);
	pid = fork();
	if (pid == 0) {
		char *const argv[] = { "/bin/sh", "-c", script, NULL };
		char *const envp[] = { "PATH=/usr/bin:/bin", "HOME=/nonexistent", NULL };
		if (svc_netns_isolate(3128, sp[1]) < 0)
			_exit(121);
		dup2(pipefd[1], 1);
		execve("/bin/sh", argv, envp);
		_exit(127);
	}
	CU_ASSERT_FATAL(pid > 0);
	close(sp[1]);
	close(pipefd[1]);
	if (svc_netns_recv_listener(sp[0], 10000, &lfd) < 0) {
		/* user namespaces off here: the isolation cannot be made, and the build refuses to run then */
		waitpid(pid, &status, 0);
		fprintf(stderr, "test_egress_netns_reaches_only_the_registry: no network namespace (exit %d); not checked\n",
			WEXITSTATUS(status));
		close(sp[0]);
		close(pipefd[0]);
		close(host_fd);
		return;
	}
	close(sp[0]);
	CU_ASSERT_EQUAL_FATAL(svc_egress_allow_registry("https://registry.npmjs.org/", allow, sizeof allow), 0);
	o.allow = allow;
	CU_ASSERT_EQUAL_FATAL(svc_egress_start(&o, lfd, &eg), 0);
	deadline = svc_mono_ms() + 180000;
	for (;;) {
		struct pollfd p = { pipefd[0], POLLIN, 0 };
		ssize_t n;
		if (svc_mono_ms() > deadline) {
			kill(pid, SIGKILL);
			break;
		}
		if (poll(&p, 1, 1000) <= 0)
			continue;
		n = read(pipefd[0], out + got, sizeof out - 1 - got);
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	out[got] = '\0';
	waitpid(pid, &status, 0);
	close(pipefd[0]);
	svc_egress_stats(eg, &st);
	svc_egress_stop(eg);
	fprintf(stderr, "test_egress_netns_reaches_only_the_registry: %s", out);
	CU_ASSERT(strstr(out, "registry 200\n") != NULL);
	/* curl prints 000 when it got no answer at all */
	CU_ASSERT(strstr(out, "host 000\n") != NULL);
	CU_ASSERT(strstr(out, "metadata 000\n") != NULL);
	CU_ASSERT(strstr(out, "proxied-metadata 403\n") != NULL);
	CU_ASSERT(strstr(out, "proxied-host 403\n") != NULL);
	CU_ASSERT(strstr(out, "proxied-host-tls 403\n") != NULL);
	CU_ASSERT(st.tunnels >= 1);
	CU_ASSERT(st.refused >= 3);
	/* the host's listener was never reached */
	hp.fd = host_fd;
	hp.events = POLLIN;
	hp.revents = 0;
	CU_ASSERT_EQUAL(poll(&hp, 1, 0), 0);
	close(host_fd);
}

SVC_TEST_SUITE(egress)
{
	CU_pSuite s = CU_add_suite("egress", NULL, NULL);

	CU_add_test(s, "test_egress_refuses_hosts_not_allowed", test_egress_refuses_hosts_not_allowed);
	CU_add_test(s, "test_egress_refuses_internal_addresses", test_egress_refuses_internal_addresses);
	CU_add_test(s, "test_egress_tunnels_to_an_allowed_double", test_egress_tunnels_to_an_allowed_double);
	CU_add_test(s, "test_egress_bounds_tunnels_and_idle", test_egress_bounds_tunnels_and_idle);
	CU_add_test(s, "test_egress_registry_allow_entry", test_egress_registry_allow_entry);
	CU_add_test(s, "test_egress_netns_reaches_only_the_registry", test_egress_netns_reaches_only_the_registry);
}
