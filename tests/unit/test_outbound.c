/* test_outbound.c: the SSRF guard (every address range, IPv4 and IPv6, mapped forms, networks, the policy) and the
 * one HTTP client (body cap, sink, timeouts, the guard on a transfer) against a small HTTP server of its own. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <CUnit/CUnit.h>

#include "core/err.h"
#include "core/outbound.h"
#include "unit.h"

/* Fills `ss` with the numeric address `text` (IPv4 or IPv6) and returns its length, 0 when it does not parse. */
static size_t sa_of(const char *text, struct sockaddr_storage *ss)
{
	struct sockaddr_in *v4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof *ss);
	if (inet_pton(AF_INET, text, &v4->sin_addr) == 1) {
		v4->sin_family = AF_INET;
		return sizeof *v4;
	}
	if (inet_pton(AF_INET6, text, &v6->sin6_addr) == 1) {
		v6->sin6_family = AF_INET6;
		return sizeof *v6;
	}
	return 0;
}

static enum svc_net_kind kind_of(const char *text)
{
	struct sockaddr_storage ss;
	size_t len = sa_of(text, &ss);

	CU_ASSERT_FATAL(len > 0);
	return svc_net_classify((struct sockaddr *)&ss, len);
}

static int allowed(const struct svc_outbound_policy *p, const char *text)
{
	struct sockaddr_storage ss;
	size_t len = sa_of(text, &ss);

	CU_ASSERT_FATAL(len > 0);
	return svc_outbound_allowed(p, (struct sockaddr *)&ss, len);
}

static const struct {
	const char *addr;
	enum svc_net_kind kind;
} cases[] = {
	/* IPv4 */
	{ "8.8.8.8", SVC_NET_PUBLIC },           { "1.1.1.1", SVC_NET_PUBLIC },
	{ "0.0.0.0", SVC_NET_UNSPECIFIED },      { "0.255.255.255", SVC_NET_UNSPECIFIED },
	{ "127.0.0.1", SVC_NET_LOOPBACK },       { "127.255.255.254", SVC_NET_LOOPBACK },
	{ "10.0.0.1", SVC_NET_PRIVATE },         { "10.255.255.255", SVC_NET_PRIVATE },
	{ "172.16.0.1", SVC_NET_PRIVATE },       { "172.31.255.255", SVC_NET_PRIVATE },
	{ "172.15.255.255", SVC_NET_PUBLIC },    { "172.32.0.0", SVC_NET_PUBLIC },
	{ "192.168.0.1", SVC_NET_PRIVATE },      { "192.169.0.1", SVC_NET_PUBLIC },
	{ "169.254.169.254", SVC_NET_LINKLOCAL }, { "169.254.0.0", SVC_NET_LINKLOCAL },
	{ "169.253.255.255", SVC_NET_PUBLIC },
	{ "100.64.0.1", SVC_NET_SHARED },        { "100.127.255.255", SVC_NET_SHARED },
	{ "100.63.255.255", SVC_NET_PUBLIC },    { "100.128.0.0", SVC_NET_PUBLIC },
	{ "224.0.0.1", SVC_NET_MULTICAST },      { "239.255.255.255", SVC_NET_MULTICAST },
	{ "255.255.255.255", SVC_NET_RESERVED }, { "240.0.0.1", SVC_NET_RESERVED },
	{ "192.0.0.8", SVC_NET_RESERVED },       { "198.18.0.1", SVC_NET_RESERVED },
	{ "198.19.255.255", SVC_NET_RESERVED },  { "198.20.0.0", SVC_NET_PUBLIC },
	/* IPv6 */
	{ "2606:4700::1111", SVC_NET_PUBLIC },   { "::1", SVC_NET_LOOPBACK },
	{ "::", SVC_NET_UNSPECIFIED },           { "::2", SVC_NET_RESERVED },
	{ "fe80::1", SVC_NET_LINKLOCAL },        { "febf::1", SVC_NET_LINKLOCAL },
	{ "fc00::1", SVC_NET_PRIVATE },          { "fd12:3456::1", SVC_NET_PRIVATE },
	{ "fec0::1", SVC_NET_PRIVATE },          { "ff02::1", SVC_NET_MULTICAST },
	{ "fb00::1", SVC_NET_PUBLIC },
	/* IPv6 forms of IPv4 addresses */
	{ "::ffff:127.0.0.1", SVC_NET_LOOPBACK }, { "::ffff:7f00:1", SVC_NET_LOOPBACK },
	{ "::ffff:169.254.169.254", SVC_NET_LINKLOCAL }, { "::ffff:10.1.2.3", SVC_NET_PRIVATE },
	{ "::ffff:0.0.0.0", SVC_NET_UNSPECIFIED }, { "::ffff:8.8.8.8", SVC_NET_PUBLIC },
	{ "::ffff:100.64.0.1", SVC_NET_SHARED },  { "::ffff:224.0.0.1", SVC_NET_MULTICAST },
	{ "64:ff9b::127.0.0.1", SVC_NET_LOOPBACK }, { "64:ff9b::a9fe:a9fe", SVC_NET_LINKLOCAL },
	{ "64:ff9b::8.8.8.8", SVC_NET_PUBLIC },
	{ "2002:7f00:1::", SVC_NET_LOOPBACK },    { "2002:c0a8:101::1", SVC_NET_PRIVATE },
	{ "2002:0808:0808::1", SVC_NET_PUBLIC },
	{ "::127.0.0.1", SVC_NET_RESERVED },      { "::10.0.0.1", SVC_NET_RESERVED },
};

static void test_outbound_classify_every_range(void)
{
	size_t i;

	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		if (kind_of(cases[i].addr) != cases[i].kind)
			CU_FAIL(cases[i].addr);
	}
	CU_ASSERT_EQUAL(svc_net_classify(NULL, 0), SVC_NET_RESERVED);
	{
		struct sockaddr_storage ss;
		size_t len = sa_of("8.8.8.8", &ss);

		CU_ASSERT_EQUAL(svc_net_classify((struct sockaddr *)&ss, len - 1), SVC_NET_RESERVED);
		ss.ss_family = AF_UNIX;
		CU_ASSERT_EQUAL(svc_net_classify((struct sockaddr *)&ss, sizeof ss), SVC_NET_RESERVED);
	}
	CU_ASSERT_STRING_EQUAL(svc_net_kind_name(SVC_NET_LINKLOCAL), "link-local");
	CU_ASSERT_STRING_EQUAL(svc_net_kind_name(SVC_NET__MAX), "reserved");
}

static void test_outbound_default_policy_refuses_all_but_public(void)
{
	struct svc_outbound_policy p;
	size_t i;

	CU_ASSERT_EQUAL(svc_outbound_policy_parse(0, "", &p), 0);
	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		if (allowed(&p, cases[i].addr) != (cases[i].kind == SVC_NET_PUBLIC))
			CU_FAIL(cases[i].addr);
	}
}

static void test_outbound_allow_private_opens_only_private(void)
{
	struct svc_outbound_policy p;
	size_t i;

	CU_ASSERT_EQUAL(svc_outbound_policy_parse(1, NULL, &p), 0);
	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		int want = cases[i].kind == SVC_NET_PUBLIC || cases[i].kind == SVC_NET_PRIVATE;

		if (allowed(&p, cases[i].addr) != want)
			CU_FAIL(cases[i].addr);
	}
	CU_ASSERT_FALSE(allowed(&p, "127.0.0.1"));
	CU_ASSERT_FALSE(allowed(&p, "169.254.169.254"));
	CU_ASSERT_TRUE(allowed(&p, "192.168.1.20"));
}

static void test_outbound_net_parse(void)
{
	struct svc_net n;
	static const char *const bad[] = {
		"", "/", "127.0.0.9/", "127.0.0.9/33", "127.0.0.9/-1", "127.0.0.9/3x", "127.0.0.9/0032",
		"127.0.0.256/32", "127.1/8", "fe80::/129", "fe80::1%eth0/64", "localhost", "10.0.0.0/8 ", "::ffff:/96x",
	};
	size_t i;

	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		if (svc_net_parse(bad[i], strlen(bad[i]), &n) != SVC_E_VALIDATION)
			CU_FAIL(bad[i]);
	}
	CU_ASSERT_EQUAL(svc_net_parse(NULL, 0, &n), SVC_E_VALIDATION);
	CU_ASSERT_EQUAL_FATAL(svc_net_parse("127.0.0.9/32", 12, &n), 0);
	CU_ASSERT_EQUAL(n.prefix, 128);
	CU_ASSERT_EQUAL(n.addr[10], 0xff);
	CU_ASSERT_EQUAL(n.addr[15], 9);
	CU_ASSERT_EQUAL_FATAL(svc_net_parse("10.1.2.3/8", 10, &n), 0);
	CU_ASSERT_EQUAL(n.prefix, 104);
	CU_ASSERT_EQUAL(n.addr[12], 10);
	CU_ASSERT_EQUAL(n.addr[13], 0); /* host bits cleared */
	CU_ASSERT_EQUAL_FATAL(svc_net_parse("fd00::/8", 8, &n), 0);
	CU_ASSERT_EQUAL(n.prefix, 8);
	CU_ASSERT_EQUAL_FATAL(svc_net_parse("2001:db8::1", 11, &n), 0);
	CU_ASSERT_EQUAL(n.prefix, 128);
	CU_ASSERT_EQUAL_FATAL(svc_net_parse("0.0.0.0/0", 9, &n), 0);
	CU_ASSERT_EQUAL(n.prefix, 96);
	/* the length bounds the parse: "10.0.0.0/8,x" read as its first 10 bytes */
	CU_ASSERT_EQUAL(svc_net_parse("10.0.0.0/8,x", 10, &n), 0);
	CU_ASSERT_EQUAL(svc_net_parse("10.0.0.0/8,x", 12, &n), SVC_E_VALIDATION);
}

static int contains(const char *net, const char *addr)
{
	struct svc_net n;
	struct sockaddr_storage ss;
	size_t len = sa_of(addr, &ss);

	CU_ASSERT_FATAL(svc_net_parse(net, strlen(net), &n) == 0 && len > 0);
	return svc_net_contains(&n, (struct sockaddr *)&ss, len);
}

static void test_outbound_net_contains(void)
{
	CU_ASSERT_TRUE(contains("127.0.0.9/32", "127.0.0.9"));
	CU_ASSERT_TRUE(contains("127.0.0.9/32", "::ffff:127.0.0.9"));
	CU_ASSERT_FALSE(contains("127.0.0.9/32", "127.0.0.1"));
	CU_ASSERT_FALSE(contains("127.0.0.9/32", "127.0.0.8"));
	CU_ASSERT_TRUE(contains("100.64.0.0/10", "100.127.1.1"));
	CU_ASSERT_FALSE(contains("100.64.0.0/10", "100.128.0.0"));
	CU_ASSERT_TRUE(contains("172.16.0.0/12", "172.31.0.1"));
	CU_ASSERT_FALSE(contains("172.16.0.0/12", "172.32.0.1"));
	CU_ASSERT_TRUE(contains("fd00:1::/32", "fd00:1:ffff::1"));
	CU_ASSERT_FALSE(contains("fd00:1::/32", "fd00:2::1"));
	CU_ASSERT_TRUE(contains("0.0.0.0/0", "8.8.8.8"));
	CU_ASSERT_FALSE(contains("0.0.0.0/0", "2606:4700::1111"));
	CU_ASSERT_TRUE(contains("::/0", "2606:4700::1111"));
	CU_ASSERT_TRUE(contains("::/0", "10.0.0.1"));
	CU_ASSERT_TRUE(contains("fe80::/10", "febf::1"));
}

static void test_outbound_allow_nets_are_exact_exceptions(void)
{
	struct svc_outbound_policy p;

	CU_ASSERT_EQUAL(svc_outbound_policy_parse(0, "127.0.0.9/32, 100.64.0.0/10\tfd00::/8", &p), 0);
	CU_ASSERT_EQUAL(p.nnets, 3);
	CU_ASSERT_TRUE(allowed(&p, "127.0.0.9"));
	CU_ASSERT_TRUE(allowed(&p, "::ffff:127.0.0.9"));
	CU_ASSERT_FALSE(allowed(&p, "127.0.0.1"));
	CU_ASSERT_FALSE(allowed(&p, "::1"));
	CU_ASSERT_TRUE(allowed(&p, "100.100.1.1"));
	CU_ASSERT_TRUE(allowed(&p, "fd00::5"));
	CU_ASSERT_FALSE(allowed(&p, "fc00::5"));
	CU_ASSERT_FALSE(allowed(&p, "10.0.0.1"));
	CU_ASSERT_TRUE(allowed(&p, "8.8.8.8"));
	/* a bad entry is an error; the good ones still count */
	CU_ASSERT_EQUAL(svc_outbound_policy_parse(0, "nonsense,127.0.0.9", &p), SVC_E_VALIDATION);
	CU_ASSERT_EQUAL(p.nnets, 1);
	CU_ASSERT_TRUE(allowed(&p, "127.0.0.9"));
	CU_ASSERT_EQUAL(svc_outbound_policy_parse(0, " , ,", &p), 0);
	CU_ASSERT_EQUAL(p.nnets, 0);
}

static void test_outbound_policy_caps_nets(void)
{
	struct svc_outbound_policy p;
	char list[SVC_OUTBOUND_MAX_NETS * 16 + 32] = "";
	size_t i, n = 0;

	for (i = 0; i <= SVC_OUTBOUND_MAX_NETS; i++)
		n += (size_t)snprintf(list + n, sizeof list - n, "10.0.%zu.0/24,", i);
	CU_ASSERT_EQUAL(svc_outbound_policy_parse(0, list, &p), SVC_E_VALIDATION);
	CU_ASSERT_EQUAL(p.nnets, SVC_OUTBOUND_MAX_NETS);
}

static void test_outbound_check_url(void)
{
	struct svc_outbound_policy p, nine;
	char why[160];

	svc_outbound_policy_parse(0, "", &p);
	svc_outbound_policy_parse(0, "127.0.0.9/32", &nine);
	CU_ASSERT_EQUAL(svc_outbound_check_url(&p, "http://127.0.0.1:8080/v1", why, sizeof why), SVC_E_FORBIDDEN);
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "loopback"));
	CU_ASSERT_STRING_EQUAL(why, "127.0.0.1 is a loopback address");
	CU_ASSERT_EQUAL(svc_outbound_check_url(&p, "http://2130706433/", why, sizeof why), SVC_E_FORBIDDEN);
	CU_ASSERT_EQUAL(svc_outbound_check_url(&p, "http://localhost:1/v1", why, sizeof why), SVC_E_FORBIDDEN);
	CU_ASSERT_EQUAL(svc_outbound_check_url(&p, "http://[::1]:8080/", why, sizeof why), SVC_E_FORBIDDEN);
	CU_ASSERT_EQUAL(svc_outbound_check_url(&p, "http://[::ffff:169.254.169.254]/", why, sizeof why), SVC_E_FORBIDDEN);
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "link-local"));
	CU_ASSERT_EQUAL(svc_outbound_check_url(&p, "https://169.254.169.254/latest", why, sizeof why), SVC_E_FORBIDDEN);
	CU_ASSERT_EQUAL(svc_outbound_check_url(&p, "http://0/", why, sizeof why), SVC_E_FORBIDDEN);
	CU_ASSERT_EQUAL(svc_outbound_check_url(&p, "http://10.0.0.1/", why, sizeof why), SVC_E_FORBIDDEN);
	CU_ASSERT_EQUAL(svc_outbound_check_url(&p, "http://8.8.8.8/", why, sizeof why), 0);
	CU_ASSERT_STRING_EQUAL(why, "");
	CU_ASSERT_EQUAL(svc_outbound_check_url(&nine, "http://127.0.0.9:4000/v1", why, sizeof why), 0);
	CU_ASSERT_EQUAL(svc_outbound_check_url(&nine, "http://127.0.0.1:4000/v1", why, sizeof why), SVC_E_FORBIDDEN);
	/* what cannot be resolved now is checked when connecting */
	CU_ASSERT_EQUAL(svc_outbound_check_url(&p, "not a url", why, sizeof why), 0);
	CU_ASSERT_EQUAL(svc_outbound_check_url(&p, "http://name.invalid/", why, sizeof why), 0);
}

/* A transfer to a refused address fails to connect and says so in the guard; no socket is opened. */
static void test_outbound_curl_refuses_at_connect(void)
{
	struct svc_outbound_policy p;
	struct svc_outbound_req req;
	struct svc_outbound_xfer x;

	svc_outbound_policy_parse(0, "", &p);
	memset(&req, 0, sizeof req);
	req.url = "http://2130706433:9/";
	req.policy = &p;
	req.max_body = 1024;
	CU_ASSERT_EQUAL(svc_outbound_request(&req, &x), SVC_E_FORBIDDEN);
	CU_ASSERT_EQUAL(x.rc, CURLE_COULDNT_CONNECT);
	CU_ASSERT_EQUAL(x.guard.refused, 1);
	CU_ASSERT_EQUAL(x.guard.kind, SVC_NET_LOOPBACK);
	CU_ASSERT_STRING_EQUAL(x.guard.addr, "127.0.0.1");
	svc_outbound_xfer_dispose(&x);
}

/* ---- the HTTP client against a server of the test's own ---- */

static pid_t server_pid;
static int server_port;

/*
 * Serves HTTP/1.0 on 127.0.0.1 (a child process) until server_stop(): GET /small answers "hello",
 * /big 10000 bytes of 'x', /slow nothing for 10 s. Returns 0, or -1 when no socket could be had.
 */
static int server_start(void)
{
	struct sockaddr_in a;
	socklen_t alen = sizeof a;
	int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;

	memset(&a, 0, sizeof a);
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0 ||
	    bind(fd, (struct sockaddr *)&a, sizeof a) < 0 || listen(fd, 8) < 0 ||
	    getsockname(fd, (struct sockaddr *)&a, &alen) < 0)
		return -1;
	server_port = ntohs(a.sin_port);
	server_pid = fork();
	if (server_pid < 0)
		return -1;
	if (server_pid > 0) {
		close(fd);
		return 0;
	}
	for (;;) {
		char req[2048], big[10000];
		size_t got = 0;
		ssize_t n;
		int c = accept(fd, NULL, NULL);

		if (c < 0)
			continue;
		while (got < sizeof req - 1 && (n = read(c, req + got, sizeof req - 1 - got)) > 0) {
			got += (size_t)n;
			req[got] = '\0';
			if (strstr(req, "\r\n\r\n"))
				break;
		}
		req[got] = '\0';
		if (strncmp(req, "GET /slow ", 10) == 0) {
			sleep(10);
		} else if (strncmp(req, "GET /big ", 9) == 0) {
			static const char head[] = "HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\n";
			memset(big, 'x', sizeof big);
			if (write(c, head, sizeof head - 1) < 0 || write(c, big, sizeof big) < 0)
				_exit(1);
		} else {
			static const char small[] = "HTTP/1.0 201 Created\r\nContent-Type: text/plain\r\n\r\nhello";
			if (write(c, small, sizeof small - 1) < 0)
				_exit(1);
		}
		close(c);
	}
}

static void server_stop(void)
{
	if (server_pid > 0) {
		kill(server_pid, SIGKILL);
		waitpid(server_pid, NULL, 0);
		server_pid = 0;
	}
}

/* A request to svc's own service on loopback (SVC_OUTBOUND_INTERNAL) for `path` of the test server. */
static void own_request(struct svc_outbound_req *req, char *url, size_t urlmax, const char *path, size_t max_body)
{
	snprintf(url, urlmax, "http://127.0.0.1:%d%s", server_port, path);
	memset(req, 0, sizeof *req);
	req->url = url;
	req->reach = SVC_OUTBOUND_INTERNAL;
	req->max_body = max_body;
	req->timeout_ms = 5000;
}

/* An answer is collected whole, NUL-terminated, with its status and content type. */
static void test_outbound_request_collects_the_answer(void)
{
	struct svc_outbound_req req;
	struct svc_outbound_xfer x;
	char url[128];

	CU_ASSERT_EQUAL_FATAL(server_start(), 0);
	own_request(&req, url, sizeof url, "/small", 1024);
	CU_ASSERT_EQUAL(svc_outbound_request(&req, &x), 0);
	CU_ASSERT_EQUAL(x.status, 201);
	CU_ASSERT_STRING_EQUAL(svc_buf_str(&x.body), "hello");
	CU_ASSERT_STRING_EQUAL(x.content_type, "text/plain");
	CU_ASSERT_PTR_NULL(x.curl);
	svc_outbound_xfer_dispose(&x);
	server_stop();
}

/* One byte over the cap ends the transfer with SVC_E_TOO_LARGE; exactly the cap is accepted. */
static void test_outbound_body_cap(void)
{
	struct svc_outbound_req req;
	struct svc_outbound_xfer x;
	char url[128];

	CU_ASSERT_EQUAL_FATAL(server_start(), 0);
	own_request(&req, url, sizeof url, "/big", 9999);
	CU_ASSERT_EQUAL(svc_outbound_request(&req, &x), SVC_E_TOO_LARGE);
	CU_ASSERT_EQUAL(x.too_large, 1);
	CU_ASSERT(x.received <= 9999);
	svc_outbound_xfer_dispose(&x);
	own_request(&req, url, sizeof url, "/big", 10000);
	CU_ASSERT_EQUAL(svc_outbound_request(&req, &x), 0);
	CU_ASSERT_EQUAL(x.body.len, 10000);
	svc_outbound_xfer_dispose(&x);
	/* no cap is no request */
	own_request(&req, url, sizeof url, "/big", 0);
	CU_ASSERT_EQUAL(svc_outbound_request(&req, &x), SVC_E_INTERNAL);
	svc_outbound_xfer_dispose(&x);
	server_stop();
}

struct sink_seen {
	size_t bytes, calls;
	int stop_after; /* > 0: answer SVC_E_VALIDATION on this call */
};

static int sink(void *ctx, const char *data, size_t len)
{
	struct sink_seen *s = ctx;

	(void)data;
	s->bytes += len;
	if (++s->calls == (size_t)s->stop_after)
		return SVC_E_VALIDATION;
	return 0;
}

/* A sink gets every piece under the cap and nothing is collected; its error ends the transfer and is returned. */
static void test_outbound_sink(void)
{
	struct svc_outbound_req req;
	struct svc_outbound_xfer x;
	struct sink_seen seen = { 0, 0, 0 };
	char url[128];

	CU_ASSERT_EQUAL_FATAL(server_start(), 0);
	own_request(&req, url, sizeof url, "/big", 10000);
	req.sink = sink;
	req.sink_ctx = &seen;
	CU_ASSERT_EQUAL(svc_outbound_request(&req, &x), 0);
	CU_ASSERT_EQUAL(seen.bytes, 10000);
	CU_ASSERT_EQUAL(x.body.len, 0);
	svc_outbound_xfer_dispose(&x);
	seen.bytes = seen.calls = 0;
	seen.stop_after = 1;
	CU_ASSERT_EQUAL(svc_outbound_request(&req, &x), SVC_E_VALIDATION);
	CU_ASSERT_EQUAL(seen.calls, 1);
	svc_outbound_xfer_dispose(&x);
	/* the cap comes before the sink */
	seen.bytes = seen.calls = 0;
	seen.stop_after = 0;
	req.max_body = 100;
	CU_ASSERT_EQUAL(svc_outbound_request(&req, &x), SVC_E_TOO_LARGE);
	CU_ASSERT(seen.bytes <= 100);
	svc_outbound_xfer_dispose(&x);
	server_stop();
}

/* A server that answers nothing costs the request's timeout, not more: SVC_E_UNAVAILABLE, CURLE_OPERATION_TIMEDOUT. */
static void test_outbound_timeout(void)
{
	struct svc_outbound_req req;
	struct svc_outbound_xfer x;
	struct timespec t0, t1;
	char url[128];
	long ms;

	CU_ASSERT_EQUAL_FATAL(server_start(), 0);
	own_request(&req, url, sizeof url, "/slow", 1024);
	req.timeout_ms = 300;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	CU_ASSERT_EQUAL(svc_outbound_request(&req, &x), SVC_E_UNAVAILABLE);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ms = (long)(t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
	CU_ASSERT_EQUAL(x.rc, CURLE_OPERATION_TIMEDOUT);
	CU_ASSERT(ms >= 250 && ms < 5000);
	svc_outbound_xfer_dispose(&x);
	/* idle: nothing received for low_speed_secs */
	req.timeout_ms = 0;
	req.low_speed_secs = 1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	CU_ASSERT_EQUAL(svc_outbound_request(&req, &x), SVC_E_UNAVAILABLE);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ms = (long)(t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
	CU_ASSERT_EQUAL(x.rc, CURLE_OPERATION_TIMEDOUT);
	CU_ASSERT(ms >= 900 && ms < 8000);
	svc_outbound_xfer_dispose(&x);
	server_stop();
}

/*
 * A guarded request never reaches a private or loopback address (the server is up and would answer),
 * needs a policy (fails closed without one), and reaches it once SVC_OUTBOUND_ALLOW_NETS names it.
 */
static void test_outbound_guard_refuses_private(void)
{
	struct svc_outbound_policy strict, lan, nets;
	struct svc_outbound_req req;
	struct svc_outbound_xfer x;
	char url[128];

	svc_outbound_policy_parse(0, "", &strict);
	svc_outbound_policy_parse(1, "", &lan);
	svc_outbound_policy_parse(0, "127.0.0.1/32", &nets);
	CU_ASSERT_EQUAL_FATAL(server_start(), 0);
	own_request(&req, url, sizeof url, "/small", 1024);
	req.reach = SVC_OUTBOUND_GUARDED;
	CU_ASSERT_EQUAL(svc_outbound_request(&req, &x), SVC_E_INTERNAL); /* no policy */
	svc_outbound_xfer_dispose(&x);
	req.policy = &strict;
	CU_ASSERT_EQUAL(svc_outbound_request(&req, &x), SVC_E_FORBIDDEN);
	CU_ASSERT_EQUAL(x.guard.kind, SVC_NET_LOOPBACK);
	CU_ASSERT_EQUAL(x.status, 0);
	svc_outbound_xfer_dispose(&x);
	req.policy = &lan; /* private ranges, not loopback */
	CU_ASSERT_EQUAL(svc_outbound_request(&req, &x), SVC_E_FORBIDDEN);
	svc_outbound_xfer_dispose(&x);
	req.policy = &nets;
	CU_ASSERT_EQUAL(svc_outbound_request(&req, &x), 0);
	CU_ASSERT_EQUAL(x.status, 201);
	svc_outbound_xfer_dispose(&x);
	server_stop();
	/* a private address: refused before any packet (10.0.0.1 need not exist) */
	memset(&req, 0, sizeof req);
	req.url = "http://10.0.0.1:9/";
	req.policy = &strict;
	req.max_body = 1024;
	req.connect_timeout_ms = 2000;
	CU_ASSERT_EQUAL(svc_outbound_request(&req, &x), SVC_E_FORBIDDEN);
	CU_ASSERT_EQUAL(x.guard.kind, SVC_NET_PRIVATE);
	CU_ASSERT_STRING_EQUAL(x.guard.addr, "10.0.0.1");
	svc_outbound_xfer_dispose(&x);
}

SVC_TEST_SUITE(outbound_suite)
{
	CU_pSuite s = CU_add_suite("outbound", NULL, NULL);
	CU_add_test(s, "test_outbound_classify_every_range", test_outbound_classify_every_range);
	CU_add_test(s, "test_outbound_default_policy_refuses_all_but_public", test_outbound_default_policy_refuses_all_but_public);
	CU_add_test(s, "test_outbound_allow_private_opens_only_private", test_outbound_allow_private_opens_only_private);
	CU_add_test(s, "test_outbound_net_parse", test_outbound_net_parse);
	CU_add_test(s, "test_outbound_net_contains", test_outbound_net_contains);
	CU_add_test(s, "test_outbound_allow_nets_are_exact_exceptions", test_outbound_allow_nets_are_exact_exceptions);
	CU_add_test(s, "test_outbound_policy_caps_nets", test_outbound_policy_caps_nets);
	CU_add_test(s, "test_outbound_check_url", test_outbound_check_url);
	CU_add_test(s, "test_outbound_curl_refuses_at_connect", test_outbound_curl_refuses_at_connect);
	CU_add_test(s, "test_outbound_request_collects_the_answer", test_outbound_request_collects_the_answer);
	CU_add_test(s, "test_outbound_body_cap", test_outbound_body_cap);
	CU_add_test(s, "test_outbound_sink", test_outbound_sink);
	CU_add_test(s, "test_outbound_timeout", test_outbound_timeout);
	CU_add_test(s, "test_outbound_guard_refuses_private", test_outbound_guard_refuses_private);
}
