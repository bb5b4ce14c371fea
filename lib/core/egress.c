/* egress.c: the registry-only CONNECT proxy: an accept thread, one thread per tunnel, the SSRF guard on every address (egress.h). */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "core/egress.h"
#include "core/err.h"
#include "core/log.h"
#include "core/util.h"

#define EG_ALLOW_MAX 16
#define EG_HOST_MAX 253
#define EG_HEAD_MAX 8192
#define EG_BUF 16384
#define EG_ADDRS_MAX 16
#define EG_STACK (512 * 1024)

struct allow_entry {
	char host[EG_HOST_MAX + 1];
	unsigned port;
};

struct slot {
	pthread_t thread;
	int used; /* a thread was started in it and not yet joined */
	int done; /* that thread has ended (or is about to) */
};

struct svc_egress {
	struct allow_entry allow[EG_ALLOW_MAX];
	size_t nallow;
	unsigned max_tunnels;
	int idle_ms, connect_ms;
	const struct svc_outbound_policy *policy;
	struct svc_outbound_policy public_only;
	svc_egress_resolve_fn resolve;
	void *resolve_arg;

	int lfd;
	int stop[2]; /* a byte in stop[1] makes stop[0] readable for every thread, for good */
	pthread_t acceptor;
	int acceptor_started;

	pthread_mutex_t lock; /* guards slots and stats */
	struct slot *slots;
	struct svc_egress_stats stats;
};

struct conn {
	struct svc_egress *eg;
	struct slot *slot;
	int fd;
};

/* ---- the allow-list ---- */

/* Whether `c` may be in a host name or an IP literal as the allow-list and a CONNECT line carry them. */
static int host_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '-' || c == ':' || c == '_';
}

/*
 * Parses "host[:port]" (or "[v6]:port") of `len` bytes at `s` into `out`,
 * lower-casing the host; `dflt` is the port when none is given (0: one is
 * required). Returns 0, or -1.
 */
static int parse_hostport(const char *s, size_t len, unsigned dflt, struct allow_entry *out)
{
	const char *host = s, *colon = NULL;
	size_t hlen, i;
	uint64_t port = dflt;
	char digits[8];

	if (len > 0 && s[0] == '[') {
		const char *close = memchr(s, ']', len);
		if (!close)
			return -1;
		host = s + 1;
		hlen = (size_t)(close - host);
		if (close + 1 < s + len) {
			if (close[1] != ':')
				return -1;
			colon = close + 1;
		}
	} else {
		colon = memchr(s, ':', len);
		hlen = colon ? (size_t)(colon - s) : len;
		if (colon && memchr(colon + 1, ':', len - (size_t)(colon + 1 - s)))
			return -1; /* a bare IPv6 address without brackets */
	}
	if (colon) {
		size_t plen = len - (size_t)(colon + 1 - s);
		if (plen == 0 || plen >= sizeof digits)
			return -1;
		memcpy(digits, colon + 1, plen);
		digits[plen] = '\0';
		if (svc_parse_u64(digits, 65535, &port) < 0)
			return -1;
	}
	if (hlen == 0 || hlen > EG_HOST_MAX || port == 0)
		return -1;
	for (i = 0; i < hlen; i++) {
		char c = host[i];
		if (c >= 'A' && c <= 'Z')
			c = (char)(c - 'A' + 'a');
		if (!host_char(c))
			return -1;
		out->host[i] = c;
	}
	out->host[hlen] = '\0';
	out->port = (unsigned)port;
	return 0;
}

static int parse_allow(struct svc_egress *eg, const char *list)
{
	const char *p = list ? list : "", *end;

	while (*p) {
		while (*p == ',' || *p == ' ' || *p == '\t')
			p++;
		if (!*p)
			break;
		for (end = p; *end && *end != ',' && *end != ' ' && *end != '\t'; end++)
			;
		if (eg->nallow == EG_ALLOW_MAX || parse_hostport(p, (size_t)(end - p), 443, &eg->allow[eg->nallow]) < 0)
			return SVC_E_VALIDATION;
		eg->nallow++;
		p = end;
	}
	return eg->nallow ? 0 : SVC_E_VALIDATION;
}

static int allowed(const struct svc_egress *eg, const struct allow_entry *t)
{
	size_t i;

	for (i = 0; i < eg->nallow; i++)
		if (eg->allow[i].port == t->port && strcmp(eg->allow[i].host, t->host) == 0)
			return 1;
	return 0;
}

int svc_egress_allow_registry(const char *url, char *out, size_t max)
{
	struct allow_entry e;
	const char *p, *end;
	int n;

	if (max)
		out[0] = '\0';
	if (!url || strncmp(url, "https://", 8) != 0)
		return SVC_E_VALIDATION;
	p = url + 8;
	end = p + strcspn(p, "/?#");
	if (memchr(p, '@', (size_t)(end - p)) || parse_hostport(p, (size_t)(end - p), 443, &e) < 0)
		return SVC_E_VALIDATION;
	n = snprintf(out, max, strchr(e.host, ':') ? "[%s]:%u" : "%s:%u", e.host, e.port);
	return (n < 0 || (size_t)n >= max) ? SVC_E_VALIDATION : 0;
}

/* ---- one connection ---- */

static void count(struct svc_egress *eg, unsigned long *field)
{
	pthread_mutex_lock(&eg->lock);
	(*field)++;
	pthread_mutex_unlock(&eg->lock);
}

static void send_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;
		p += w;
		n -= (size_t)w;
	}
}

/* Answers `status` with `reason` (one line, no CR or LF) as a text body, and counts it. */
static void answer(struct svc_egress *eg, int fd, int status, const char *reason)
{
	char buf[512];
	const char *text = status == 403 ? "Forbidden" : status == 502 ? "Bad Gateway" : "Service Unavailable";
	int n = snprintf(buf, sizeof buf,
			 "HTTP/1.1 %d %s\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: %zu\r\n"
			 "Connection: close\r\n\r\n%s\n",
			 status, text, strlen(reason) + 1, reason);

	count(eg, status == 403 ? &eg->stats.refused : &eg->stats.failed); /* counted before the client can see it */
	if (n > 0 && (size_t)n < sizeof buf)
		send_all(fd, buf, (size_t)n);
}

/*
 * Reads the request head (up to the empty line) into `buf` of EG_HEAD_MAX
 * bytes. Returns the bytes read (the head ends at *head_len; any after it
 * are the tunnel's first), 0 when the client went, timed out or stopped.
 */
static size_t read_head(struct svc_egress *eg, int fd, char *buf, size_t *head_len)
{
	size_t got = 0;
	int64_t deadline = svc_mono_ms() + eg->idle_ms;

	while (got < EG_HEAD_MAX - 1) {
		struct pollfd p[2] = { { fd, POLLIN, 0 }, { eg->stop[0], POLLIN, 0 } };
		int64_t left = deadline - svc_mono_ms();
		char *end;
		ssize_t r;

		if (left <= 0 || poll(p, 2, (int)left) <= 0 || p[1].revents)
			return 0;
		r = recv(fd, buf + got, EG_HEAD_MAX - 1 - got, 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return 0;
		got += (size_t)r;
		buf[got] = '\0';
		end = strstr(buf, "\r\n\r\n");
		if (end) {
			*head_len = (size_t)(end + 4 - buf);
			return got;
		}
	}
	*head_len = 0; /* a head of EG_HEAD_MAX or more: refused as malformed */
	return got;
}

static int default_resolve(void *arg, const char *host, unsigned port, struct sockaddr_storage *out, socklen_t *lens,
			   size_t max, size_t *n)
{
	struct addrinfo hints, *res = NULL, *ai;

	(void)arg;
	memset(&hints, 0, sizeof hints);
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	if (getaddrinfo(host, NULL, &hints, &res) != 0)
		return -1;
	*n = 0;
	for (ai = res; ai && *n < max; ai = ai->ai_next) {
		if ((ai->ai_family != AF_INET && ai->ai_family != AF_INET6) || ai->ai_addrlen > sizeof out[0])
			continue;
		memcpy(&out[*n], ai->ai_addr, ai->ai_addrlen);
		if (ai->ai_family == AF_INET)
			((struct sockaddr_in *)(void *)&out[*n])->sin_port = htons((uint16_t)port);
		else
			((struct sockaddr_in6 *)(void *)&out[*n])->sin6_port = htons((uint16_t)port);
		lens[*n] = (socklen_t)ai->ai_addrlen;
		(*n)++;
	}
	freeaddrinfo(res);
	return *n ? 0 : -1;
}

/* Connects to `sa` within eg->connect_ms (or until stopped). Returns a blocking socket, or -1. */
static int connect_to(struct svc_egress *eg, const struct sockaddr_storage *sa, socklen_t len)
{
	int fd = socket(sa->ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0), err = 0;
	socklen_t elen = sizeof err;
	struct pollfd p[2];

	if (fd < 0)
		return -1;
	if (connect(fd, (const struct sockaddr *)sa, len) < 0) {
		if (errno != EINPROGRESS)
			goto fail;
		p[0].fd = fd;
		p[0].events = POLLOUT;
		p[1].fd = eg->stop[0];
		p[1].events = POLLIN;
		p[0].revents = p[1].revents = 0;
		if (poll(p, 2, eg->connect_ms) <= 0 || p[1].revents || getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &elen) < 0 ||
		    err != 0)
			goto fail;
	}
	if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) < 0)
		goto fail;
	return fd;
fail:
	close(fd);
	return -1;
}

/* Relays between `a` (the client) and `b` (the registry) until both ends closed, idle, or stopped. */
static void relay(struct svc_egress *eg, int a, int b)
{
	char buf[EG_BUF];
	int open_a = 1, open_b = 1; /* whether that side may still send */
	struct timeval tv = { eg->idle_ms / 1000, (eg->idle_ms % 1000) * 1000 };

	/* a peer that stops reading cannot hold a write forever */
	setsockopt(a, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
	setsockopt(b, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
	while (open_a || open_b) {
		struct pollfd p[3] = { { open_a ? a : -1, POLLIN, 0 }, { open_b ? b : -1, POLLIN, 0 }, { eg->stop[0], POLLIN, 0 } };
		int r = poll(p, 3, eg->idle_ms), i;

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0 || p[2].revents)
			return; /* idle, or stopping */
		for (i = 0; i < 2; i++) {
			int from = i == 0 ? a : b, to = i == 0 ? b : a;
			ssize_t n, w;
			if (!p[i].revents)
				continue;
			n = recv(from, buf, sizeof buf, 0);
			if (n < 0 && (errno == EINTR || errno == EAGAIN))
				continue;
			if (n <= 0) {
				if (n < 0)
					return;
				shutdown(to, SHUT_WR);
				if (i == 0)
					open_a = 0;
				else
					open_b = 0;
				continue;
			}
			for (w = 0; w < n;) {
				ssize_t k = send(to, buf + w, (size_t)(n - w), MSG_NOSIGNAL);
				if (k < 0 && errno == EINTR)
					continue;
				if (k <= 0)
					return;
				w += k;
			}
			pthread_mutex_lock(&eg->lock);
			if (i == 0)
				eg->stats.bytes_up += (unsigned long long)n;
			else
				eg->stats.bytes_down += (unsigned long long)n;
			pthread_mutex_unlock(&eg->lock);
		}
	}
}

/* Serves one client connection: the CONNECT, its checks, the tunnel. */
static void serve(struct svc_egress *eg, int fd)
{
	char head[EG_HEAD_MAX], why[400], text[64];
	struct sockaddr_storage addrs[EG_ADDRS_MAX];
	socklen_t lens[EG_ADDRS_MAX];
	struct allow_entry target;
	size_t got, head_len = 0, naddr = 0, i, tlen;
	const char *t, *sp;
	int up = -1;

	got = read_head(eg, fd, head, &head_len);
	if (got == 0)
		return;
	if (head_len == 0) {
		answer(eg, fd, 403, "malformed request");
		return;
	}
	if (strncmp(head, "CONNECT ", 8) != 0) {
		svc_log_info("egress: refused a request that is not CONNECT");
		answer(eg, fd, 403, "only CONNECT to the package registry is allowed (plain http is not proxied)");
		return;
	}
	t = head + 8;
	sp = strchr(t, ' ');
	tlen = sp ? (size_t)(sp - t) : 0;
	if (!sp || strncmp(sp, " HTTP/1.", 8) != 0 || parse_hostport(t, tlen, 0, &target) < 0) {
		answer(eg, fd, 403, "malformed CONNECT request");
		return;
	}
	if (!allowed(eg, &target)) {
		svc_log_info("egress: refused CONNECT %s:%u: not the package registry", target.host, target.port);
		snprintf(why, sizeof why, "%s:%u is not the package registry", target.host, target.port);
		answer(eg, fd, 403, why);
		return;
	}
	if (eg->resolve(eg->resolve_arg, target.host, target.port, addrs, lens, EG_ADDRS_MAX, &naddr) < 0 || naddr == 0) {
		snprintf(why, sizeof why, "%s does not resolve", target.host);
		answer(eg, fd, 502, why);
		return;
	}
	/* every address is checked before any is tried: a name that resolves to one internal address is refused whole */
	for (i = 0; i < naddr; i++) {
		const struct sockaddr *sa = (const struct sockaddr *)&addrs[i];
		if (!svc_outbound_allowed(eg->policy, sa, lens[i])) {
			const char *kind = svc_net_kind_name(svc_net_classify(sa, lens[i]));
			const void *raw = sa->sa_family == AF_INET ? (const void *)&((const struct sockaddr_in *)(const void *)sa)->sin_addr
								   : (const void *)&((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr;
			if (!inet_ntop(sa->sa_family, raw, text, sizeof text))
				snprintf(text, sizeof text, "?");
			svc_log_info("egress: refused CONNECT %s:%u: it resolves to %s (%s)", target.host, target.port, text, kind);
			snprintf(why, sizeof why, "%s resolves to %s %s address", target.host,
				 strchr("aeiou", kind[0]) ? "an" : "a", kind);
			answer(eg, fd, 403, why);
			return;
		}
	}
	for (i = 0; i < naddr && up < 0; i++)
		up = connect_to(eg, &addrs[i], lens[i]);
	if (up < 0) {
		snprintf(why, sizeof why, "cannot reach %s:%u", target.host, target.port);
		answer(eg, fd, 502, why);
		return;
	}
	count(eg, &eg->stats.tunnels);
	send_all(fd, "HTTP/1.1 200 Connection established\r\n\r\n", 39);
	if (got > head_len) {
		send_all(up, head + head_len, got - head_len); /* the client's first bytes, sent before our answer */
		pthread_mutex_lock(&eg->lock);
		eg->stats.bytes_up += got - head_len;
		pthread_mutex_unlock(&eg->lock);
	}
	relay(eg, fd, up);
	close(up);
}

static void *conn_main(void *arg)
{
	struct conn *c = arg;
	struct svc_egress *eg = c->eg;

	serve(eg, c->fd);
	/* free before the client sees the close, so that its next connection finds the slot free */
	pthread_mutex_lock(&eg->lock);
	c->slot->done = 1;
	eg->stats.open--;
	pthread_mutex_unlock(&eg->lock);
	close(c->fd);
	free(c);
	return NULL;
}

/* Joins the threads of ended slots; with `all`, waits for every slot. Call without the lock. */
static void reap(struct svc_egress *eg, int all)
{
	unsigned i;

	for (i = 0; i < eg->max_tunnels; i++) {
		int join;
		pthread_mutex_lock(&eg->lock);
		join = eg->slots[i].used && (all || eg->slots[i].done);
		pthread_mutex_unlock(&eg->lock);
		if (!join)
			continue;
		pthread_join(eg->slots[i].thread, NULL);
		pthread_mutex_lock(&eg->lock);
		eg->slots[i].used = 0;
		eg->slots[i].done = 0;
		pthread_mutex_unlock(&eg->lock);
	}
}

/* Starts a thread for the accepted `fd`, or answers 503 when all slots are busy. */
static void dispatch(struct svc_egress *eg, int fd)
{
	pthread_attr_t attr;
	struct conn *c;
	unsigned i;
	int started = 0;

	reap(eg, 0);
	count(eg, &eg->stats.accepted);
	c = malloc(sizeof *c);
	pthread_mutex_lock(&eg->lock);
	for (i = 0; c && i < eg->max_tunnels; i++)
		if (!eg->slots[i].used)
			break;
	if (c && i < eg->max_tunnels && pthread_attr_init(&attr) == 0) {
		c->eg = eg;
		c->slot = &eg->slots[i];
		c->fd = fd;
		pthread_attr_setstacksize(&attr, EG_STACK);
		if (pthread_create(&eg->slots[i].thread, &attr, conn_main, c) == 0) {
			eg->slots[i].used = 1;
			eg->slots[i].done = 0;
			eg->stats.open++;
			started = 1;
		}
		pthread_attr_destroy(&attr);
	}
	pthread_mutex_unlock(&eg->lock);
	if (!started) {
		free(c);
		answer(eg, fd, 503, "too many connections to the package registry at once");
		close(fd);
	}
}

static void *accept_main(void *arg)
{
	struct svc_egress *eg = arg;

	for (;;) {
		struct pollfd p[2] = { { eg->lfd, POLLIN, 0 }, { eg->stop[0], POLLIN, 0 } };
		int r = poll(p, 2, 1000), fd;

		if (r < 0 && errno != EINTR)
			break;
		if (p[1].revents)
			break;
		if (r <= 0) {
			reap(eg, 0);
			continue;
		}
		fd = accept4(eg->lfd, NULL, NULL, SOCK_CLOEXEC);
		if (fd >= 0)
			dispatch(eg, fd);
	}
	return NULL;
}

int svc_egress_start(const struct svc_egress_opts *o, int listen_fd, struct svc_egress **out)
{
	struct svc_egress *eg = calloc(1, sizeof *eg);
	int err = SVC_E_INTERNAL;

	if (!eg) {
		close(listen_fd);
		return SVC_E_INTERNAL;
	}
	eg->lfd = listen_fd;
	eg->stop[0] = eg->stop[1] = -1;
	pthread_mutex_init(&eg->lock, NULL);
	if ((err = parse_allow(eg, o->allow)) < 0) {
		svc_log_error("egress: the registry allow-list \"%s\" does not parse", o->allow ? o->allow : "");
		goto fail;
	}
	err = SVC_E_INTERNAL;
	eg->max_tunnels = o->max_tunnels ? o->max_tunnels : 32;
	eg->idle_ms = (int)(o->idle_secs ? o->idle_secs : 60) * 1000;
	eg->connect_ms = (int)(o->connect_secs ? o->connect_secs : 15) * 1000;
	svc_outbound_policy_parse(0, "", &eg->public_only);
	eg->policy = o->policy ? o->policy : &eg->public_only;
	eg->resolve = o->resolve ? o->resolve : default_resolve;
	eg->resolve_arg = o->resolve_arg;
	eg->slots = calloc(eg->max_tunnels, sizeof *eg->slots);
	if (!eg->slots || pipe2(eg->stop, O_CLOEXEC) < 0)
		goto fail;
	if (pthread_create(&eg->acceptor, NULL, accept_main, eg) != 0)
		goto fail;
	eg->acceptor_started = 1;
	*out = eg;
	return 0;
fail:
	svc_egress_stop(eg);
	return err;
}

void svc_egress_stats(struct svc_egress *eg, struct svc_egress_stats *out)
{
	pthread_mutex_lock(&eg->lock);
	*out = eg->stats;
	pthread_mutex_unlock(&eg->lock);
}

int svc_egress_stop(struct svc_egress *eg)
{
	if (!eg)
		return 0;
	if (eg->stop[1] >= 0 && write(eg->stop[1], "x", 1) < 0)
		svc_log_error("egress: cannot signal the stop: %s", strerror(errno));
	if (eg->acceptor_started)
		pthread_join(eg->acceptor, NULL);
	if (eg->slots)
		reap(eg, 1);
	if (eg->lfd >= 0)
		close(eg->lfd);
	if (eg->stop[0] >= 0)
		close(eg->stop[0]);
	if (eg->stop[1] >= 0)
		close(eg->stop[1]);
	pthread_mutex_destroy(&eg->lock);
	free(eg->slots);
	free(eg);
	return 0;
}
