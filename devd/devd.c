/* devd.c: svc-devd's main and event loop: the preview requests it takes (HMR websockets, svc-preview's forwards), proxied byte for byte to the dev servers. */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <json-c/json.h>

#include "auth/internal.h"
#include "auth/preview.h"
#include "core/cgroup.h"
#include "core/err.h"
#include "core/log.h"
#include "core/util.h"
#include "devd/devd.h"
#include "project/paths.h"

#define HEAD_MAX 16384        /* bytes of a request's head */
#define PIPE_BUF_BYTES 65536  /* bytes buffered each way of a proxied connection */
#define HEAD_TIMEOUT_MS 10000 /* for a request's head to arrive */
#define CONNS_MAX 4096

/* One client connection: its request head, then the bytes both ways between it and a dev server. */
struct conn {
	int cfd, sfd;               /* the client (web server, svc-preview), the dev server (-1 until connected) */
	int connecting;             /* sfd's connect is in progress */
	struct devd_server *srv;    /* while proxying */
	char head[HEAD_MAX + 1];
	size_t head_len;
	char c2s[PIPE_BUF_BYTES], s2c[PIPE_BUF_BYTES];
	size_t c2s_len, s2c_len;
	int c_eof, s_eof;           /* each side finished sending */
	int64_t since_ms;
};

static struct {
	struct svc_config cfg;
	int lfd, wake[2];
	struct conn *conns[CONNS_MAX];
	size_t nconns;
	struct svc_nonce_cache nonces;
	volatile sig_atomic_t stop;
} g;

const struct svc_config *devd_cfg(void)
{
	return &g.cfg;
}

void devd_wake(void)
{
	char b = 1;
	if (write(g.wake[1], &b, 1) < 0) {
		/* the pipe is full: the loop wakes anyway */
	}
}

static void on_signal(int sig)
{
	(void)sig;
	g.stop = 1;
}

/* ---- connections ---- */

static void conn_close(size_t i)
{
	struct conn *c = g.conns[i];

	if (c->srv)
		c->srv->conns--;
	close(c->cfd);
	if (c->sfd >= 0)
		close(c->sfd);
	free(c);
	g.conns[i] = g.conns[--g.nconns];
}

void devd_conns_drop(struct devd_server *s)
{
	size_t i;

	for (i = 0; i < g.nconns;)
		if (g.conns[i]->srv == s)
			conn_close(i);
		else
			i++;
}

/* Sends a small complete answer on the client socket (blocking writes; it is short) and marks the conn done. */
static void answer(struct conn *c, int status, const char *reason, const char *extra, const char *type,
		   const char *body)
{
	char head[1024];
	size_t blen = strlen(body);
	int n = snprintf(head, sizeof head,
			 "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\nCache-Control: no-store\r\n"
			 "Connection: close\r\n%s\r\n", status, reason, type, blen, extra ? extra : "");

	if (n > 0 && (size_t)n < sizeof head) {
		int fl = fcntl(c->cfd, F_GETFL);
		fcntl(c->cfd, F_SETFL, fl & ~O_NONBLOCK);
		if (write(c->cfd, head, (size_t)n) == n && blen)
			(void)!write(c->cfd, body, blen);
	}
	c->c_eof = c->s_eof = 1;
}

/* Finds header `name` in the head (after the request line); copies its value into out. Returns 1 when found. */
static int head_header(const char *head, const char *name, char *out, size_t max)
{
	const char *p = strstr(head, "\r\n");
	size_t nlen = strlen(name);

	while (p && p[2] != '\r' && p[2] != '\0') {
		const char *line = p + 2, *end = strstr(line, "\r\n");
		if (!end)
			break;
		if ((size_t)(end - line) > nlen && strncasecmp(line, name, nlen) == 0 && line[nlen] == ':') {
			const char *v = line + nlen + 1;
			size_t len;
			while (*v == ' ' || *v == '\t')
				v++;
			len = (size_t)(end - v);
			if (len >= max)
				len = max - 1;
			memcpy(out, v, len);
			out[len] = '\0';
			return 1;
		}
		p = end;
	}
	return 0;
}

/*
 * The head as the dev server gets it: the request line, the client's headers
 * but Host, Connection, Keep-Alive, Proxy-* and X-Forwarded-*, then Host
 * 127.0.0.1:5173 (what every dev server accepts; Vite 6 refuses unknown Host
 * names), X-Forwarded-Host with the preview's, and Connection: Upgrade for a
 * websocket, close for the rest (one request per connection).
 */
static int rewrite_head(const char *head, const char *host, int upgrade, char *out, size_t max)
{
	static const char *const drop[] = { "host:", "connection:", "keep-alive:", "proxy-", "x-forwarded-" };
	const char *p = strstr(head, "\r\n"), *line;
	size_t o = 0, i;
	int n;

	if (!p || (size_t)(p - head) + 2 >= max)
		return SVC_E_TOO_LARGE;
	memcpy(out, head, (size_t)(p - head) + 2);
	o = (size_t)(p - head) + 2;
	for (line = p + 2; *line && !(line[0] == '\r' && line[1] == '\n');) {
		const char *end = strstr(line, "\r\n");
		int skip = 0;
		if (!end)
			break;
		for (i = 0; i < sizeof drop / sizeof drop[0]; i++)
			if (strncasecmp(line, drop[i], strlen(drop[i])) == 0)
				skip = 1;
		if (!skip) {
			if (o + (size_t)(end - line) + 2 >= max)
				return SVC_E_TOO_LARGE;
			memcpy(out + o, line, (size_t)(end - line) + 2);
			o += (size_t)(end - line) + 2;
		}
		line = end + 2;
	}
	n = snprintf(out + o, max - o, "Host: 127.0.0.1:%d\r\nX-Forwarded-Host: %s\r\nConnection: %s\r\n\r\n",
		     SVC_DEVSERVER_PORT, host, upgrade ? "Upgrade" : "close");
	if (n < 0 || (size_t)n >= max - o)
		return SVC_E_TOO_LARGE;
	return (int)(o + (size_t)n);
}

/* GET /internal/status (signed, docs/api.md "Internal calls"): the dev servers of this host. */
static void status_answer(struct conn *c, const char *method, const char *path)
{
	char ts[32] = "", nonce[80] = "", sig[160] = "";
	struct json_object *o, *list;
	size_t i;

	head_header(c->head, "X-Svc-Timestamp", ts, sizeof ts);
	head_header(c->head, "X-Svc-Nonce", nonce, sizeof nonce);
	head_header(c->head, "X-Svc-Signature", sig, sizeof sig);
	if (strcmp(method, "GET") != 0 ||
	    svc_internal_verify(g.cfg.internal_secret, strlen(g.cfg.internal_secret), method, path, ts[0] ? ts : NULL,
				nonce[0] ? nonce : NULL, sig[0] ? sig : NULL, NULL, 0, svc_now_ms() / 1000) < 0 ||
	    svc_nonce_cache_add(&g.nonces, nonce, svc_now_ms() / 1000) < 0) {
		answer(c, 401, "Unauthorized", NULL, "application/json",
		       "{\"error\":\"unauthorized\",\"message\":\"Bad or missing signature.\"}");
		return;
	}
	o = json_object_new_object();
	list = json_object_new_array();
	for (i = 0; i < devd_servers_count(); i++) {
		struct devd_server *s = devd_server_at(i);
		static const char *const states[] = { "starting", "running", "failed" };
		struct json_object *e = json_object_new_object();
		json_object_object_add(e, "projectId", json_object_new_string(s->id));
		json_object_object_add(e, "state", json_object_new_string(states[s->state]));
		json_object_object_add(e, "connections", json_object_new_int(s->conns));
		json_object_object_add(e, "restarts", json_object_new_int(s->restarts));
		json_object_object_add(e, "idleMs", json_object_new_int64(svc_mono_ms() - s->last_view_ms));
		json_object_object_add(e, "startMs", json_object_new_int64(s->ready_ms ? s->ready_ms - s->started_ms : 0));
		json_object_object_add(e, "memoryBytes", json_object_new_int64(
			s->state == DEVD_RUNNING ? (int64_t)svc_devserver_memory(&s->proc) : 0));
		json_object_object_add(e, "pid", json_object_new_int(
			s->state == DEVD_RUNNING && s->proc.sb ? (int)svc_sandbox_pid(s->proc.sb) : 0));
		if (s->state == DEVD_FAILED)
			json_object_object_add(e, "error", json_object_new_string(s->why));
		json_object_array_add(list, e);
	}
	json_object_object_add(o, "servers", list);
	json_object_object_add(o, "max", json_object_new_int((int)g.cfg.devserver_max));
	json_object_object_add(o, "idleSecs", json_object_new_int((int)g.cfg.devserver_idle_secs));
	answer(c, 200, "OK", NULL, "application/json", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
	json_object_put(o);
}

/* Splits the request line "METHOD SP target SP version" into method and path; 0 or SVC_E_VALIDATION. */
static int request_line(const char *head, char *method, size_t mmax, char *path, size_t pmax)
{
	size_t m = strcspn(head, " \r\n"), t;

	if (m == 0 || m >= mmax || head[m] != ' ')
		return SVC_E_VALIDATION;
	t = strcspn(head + m + 1, " \r\n");
	if (t == 0 || t >= pmax || head[m + 1 + t] != ' ')
		return SVC_E_VALIDATION;
	memcpy(method, head, m);
	method[m] = '\0';
	memcpy(path, head + m + 1, t);
	path[t] = '\0';
	return 0;
}

/* The request head is in: check it, find or start the project's dev server, connect to it. */
static void conn_route(struct conn *c)
{
	char method[16] = "", path[1024] = "", host[300] = "", upg[64] = "", id[37], src[2048], page[1400];
	char out[HEAD_MAX + 512];
	struct devd_server *s;
	int upgrade, n, err;

	if (request_line(c->head, method, sizeof method, path, sizeof path) < 0) {
		answer(c, 400, "Bad Request", NULL, "text/plain", "bad request\n");
		return;
	}
	if (strncmp(path, "/internal/", 10) == 0) {
		status_answer(c, method, path);
		return;
	}
	head_header(c->head, "Host", host, sizeof host);
	upgrade = head_header(c->head, "Upgrade", upg, sizeof upg) && strcasecmp(upg, "websocket") == 0;
	/* the one check of a preview host (lib/auth/preview.h), as svc-preview makes it */
	if (svc_preview_host_check(g.cfg.jwt_secret, g.cfg.jwt_secret_len, g.cfg.domain, host, svc_now_ms() / 1000,
				   id) < 0) {
		answer(c, 403, "Forbidden", NULL, "text/plain", "This preview link is not valid or has expired.\n");
		return;
	}
	if (svc_project_dir(&g.cfg, id, src, sizeof src) < 0 || g.cfg.devserver_max == 0 ||
	    svc_devserver_kind(src) == SVC_DEVSERVER_NONE) {
		answer(c, 404, "Not Found", NULL, "text/plain", "This project has no dev server.\n");
		return;
	}
	if ((err = devd_server_view(id, src, &s)) < 0) {
		answer(c, 503, "Service Unavailable", "Retry-After: 2\r\nX-Svc-Devserver: starting\r\n", "text/plain",
		       "Every dev server of this host is starting; try again.\n");
		return;
	}
	if (s->state == DEVD_STARTING) {
		answer(c, 503, "Service Unavailable", "Retry-After: 1\r\nX-Svc-Devserver: starting\r\n", "text/plain",
		       "Starting the dev server.\n");
		return;
	}
	if (s->state == DEVD_FAILED) {
		snprintf(page, sizeof page, "%s\n", s->why);
		answer(c, 502, "Bad Gateway", "X-Svc-Devserver: failed\r\n", "text/plain; charset=utf-8", page);
		return;
	}
	if ((n = rewrite_head(c->head, host, upgrade, out, sizeof out)) < 0 ||
	    svc_devserver_connect(&s->proc, &c->sfd) < 0) {
		answer(c, 502, "Bad Gateway", "X-Svc-Devserver: unreachable\r\n", "text/plain", "The dev server is not reachable.\n");
		return;
	}
	/* the rewritten head, then what came after it */
	{
		char *body = strstr(c->head, "\r\n\r\n") + 4;
		size_t rest = c->head_len - (size_t)(body - c->head);
		memcpy(c->c2s, out, (size_t)n);
		memcpy(c->c2s + n, body, rest);
		c->c2s_len = (size_t)n + rest;
	}
	c->connecting = 1;
	c->srv = s;
	s->conns++;
}

/* Reads into the head; routes it once complete. */
static void conn_read_head(struct conn *c)
{
	ssize_t r = read(c->cfd, c->head + c->head_len, HEAD_MAX - c->head_len);

	if (r <= 0) {
		if (r < 0 && (errno == EAGAIN || errno == EINTR))
			return;
		c->c_eof = c->s_eof = 1;
		return;
	}
	c->head_len += (size_t)r;
	c->head[c->head_len] = '\0';
	if (strstr(c->head, "\r\n\r\n"))
		conn_route(c);
	else if (c->head_len == HEAD_MAX)
		answer(c, 431, "Request Header Fields Too Large", NULL, "text/plain", "too large\n");
}

/* Moves bytes: from `from` into buf, and from buf into `to`. Returns -1 on a broken side. */
static int pump(int from, int to, char *buf, size_t *len, int *eof, short rev_from, short rev_to)
{
	ssize_t r;

	if ((rev_from & (POLLIN | POLLHUP | POLLERR)) && !*eof && *len < PIPE_BUF_BYTES) {
		r = read(from, buf + *len, PIPE_BUF_BYTES - *len);
		if (r > 0)
			*len += (size_t)r;
		else if (r == 0 || (errno != EAGAIN && errno != EINTR))
			*eof = 1;
	}
	if ((rev_to & POLLOUT) && *len) {
		r = write(to, buf, *len);
		if (r > 0) {
			memmove(buf, buf + r, *len - (size_t)r);
			*len -= (size_t)r;
		} else if (r < 0 && errno != EAGAIN && errno != EINTR) {
			return -1;
		}
	}
	return 0;
}

static void accept_all(void)
{
	for (;;) {
		int fd = accept4(g.lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		struct conn *c;
		if (fd < 0)
			return;
		if (g.nconns == CONNS_MAX || !(c = calloc(1, sizeof *c))) {
			close(fd);
			continue;
		}
		c->cfd = fd;
		c->sfd = -1;
		c->since_ms = svc_mono_ms();
		g.conns[g.nconns++] = c;
	}
}

/* One round of the loop: poll every socket, move bytes, close what finished. */
static void loop_once(void)
{
	static struct pollfd p[2 + 2 * CONNS_MAX];
	size_t i, n = 0;
	int64_t now;

	p[n++] = (struct pollfd){ g.lfd, POLLIN, 0 };
	p[n++] = (struct pollfd){ g.wake[0], POLLIN, 0 };
	for (i = 0; i < g.nconns; i++) {
		struct conn *c = g.conns[i];
		short ce = 0, se = 0;
		if (!c->srv)
			ce = POLLIN;
		else {
			if (!c->c_eof && c->c2s_len < PIPE_BUF_BYTES)
				ce |= POLLIN;
			if (c->s2c_len)
				ce |= POLLOUT;
			if (c->connecting || c->c2s_len)
				se |= POLLOUT;
			if (!c->connecting && !c->s_eof && c->s2c_len < PIPE_BUF_BYTES)
				se |= POLLIN;
		}
		p[n++] = (struct pollfd){ c->cfd, ce, 0 };
		p[n++] = (struct pollfd){ c->sfd, se, 0 };
	}
	if (poll(p, n, 200) < 0 && errno != EINTR)
		return;
	if (p[1].revents & POLLIN) {
		char buf[64];
		while (read(g.wake[0], buf, sizeof buf) > 0)
			;
	}
	now = svc_mono_ms();
	/* connections first (their indexes match p), then new ones */
	for (i = g.nconns; i-- > 0;) {
		struct conn *c = g.conns[i];
		short cr = p[2 + 2 * i].revents, sr = p[3 + 2 * i].revents;
		if (!c->srv && !c->c_eof) {
			if (cr)
				conn_read_head(c);
			else if (now - c->since_ms > HEAD_TIMEOUT_MS)
				c->c_eof = c->s_eof = 1;
		} else if (c->srv) {
			if (c->connecting && (sr & (POLLOUT | POLLERR | POLLHUP))) {
				int soerr = 0;
				socklen_t sl = sizeof soerr;
				getsockopt(c->sfd, SOL_SOCKET, SO_ERROR, &soerr, &sl);
				if (soerr) {
					c->srv->conns--;
					c->srv = NULL;
					answer(c, 502, "Bad Gateway", "X-Svc-Devserver: unreachable\r\n", "text/plain",
					       "The dev server is not reachable.\n");
				} else
					c->connecting = 0;
			}
			if (c->srv && !c->connecting) {
				c->srv->last_view_ms = now;
				if (pump(c->cfd, c->sfd, c->c2s, &c->c2s_len, &c->c_eof, cr, sr) < 0 ||
				    pump(c->sfd, c->cfd, c->s2c, &c->s2c_len, &c->s_eof, sr, cr) < 0)
					c->c_eof = c->s_eof = 1, c->s2c_len = c->c2s_len = 0;
			}
		}
		/* either side done and what it sent passed on: the whole connection ends (a websocket's peer may
		 * keep its half open, and an HTTP client that left waits for nothing) */
		if ((c->s_eof && !c->s2c_len) || (c->c_eof && (!c->srv || !c->c2s_len)))
			conn_close(i);
	}
	if (p[0].revents & POLLIN)
		accept_all();
}

static int listen_on(const char *host, unsigned port)
{
	struct sockaddr_in a;
	int fd, one = 1;

	memset(&a, 0, sizeof a);
	a.sin_family = AF_INET;
	a.sin_port = htons((unsigned short)port);
	if (inet_pton(AF_INET, host, &a.sin_addr) != 1)
		return -1;
	fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0 ||
	    bind(fd, (struct sockaddr *)&a, sizeof a) < 0 || listen(fd, 256) < 0) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

int main(int argc, char **argv)
{
	char err[256];
	struct sigaction sa;
	int64_t next_tick = 0;

	(void)argc;
	(void)argv;
	umask(027);
	svc_log_init("svc-devd");
	if (svc_config_load(&g.cfg, err, sizeof err) < 0) {
		svc_log_error("%s", err);
		return 1;
	}
	if (strlen(g.cfg.internal_secret) < SVC_INTERNAL_SECRET_MIN) {
		svc_log_error("INTERNAL_SECRET is missing or shorter than %d characters", SVC_INTERNAL_SECRET_MIN);
		return 1;
	}
	if (svc_cgroup_check(NULL, err, sizeof err) < 0)
		svc_log_error("dev servers cannot start here: %s", err);
	if (pipe2(g.wake, O_NONBLOCK | O_CLOEXEC) < 0 || (g.lfd = listen_on(g.cfg.devd_host, g.cfg.devd_port)) < 0) {
		svc_log_error("cannot listen on %s:%u: %s", g.cfg.devd_host, g.cfg.devd_port, strerror(errno));
		return 1;
	}
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	svc_log_info("listening on %s:%u (at most %u dev servers, idle %u s)", g.cfg.devd_host, g.cfg.devd_port,
		     g.cfg.devserver_max, g.cfg.devserver_idle_secs);
	while (!g.stop) {
		loop_once();
		if (svc_mono_ms() >= next_tick) {
			devd_servers_tick();
			next_tick = svc_mono_ms() + 50;
		}
	}
	while (g.nconns)
		conn_close(g.nconns - 1);
	devd_servers_stop_all();
	svc_nonce_cache_dispose(&g.nonces);
	close(g.lfd);
	svc_config_dispose(&g.cfg);
	return 0;
}
