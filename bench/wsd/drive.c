/* drive.c: load driver for y-websocket servers in C (libwebsockets, lib/yjs): R rooms x C clients sending Yjs edits at a fixed rate; fan-out latency, throughput, server CPU and RSS; and a trivial broadcast server to show the driver is not the limit. */
/*
 * usage: wsd-drive --port P [--host 127.0.0.1] [--path /project] --rooms R --clients C
 *                  --rate EDITS_PER_S_PER_CLIENT --seconds S [--doc-bytes B] [--token T]
 *                  [--doc-file FILE] [--room-ids FILE] [--server-pid PID] [--settle-ms 3000]
 *                  [--keep-bytes K]
 *        wsd-drive --echo-server PORT
 *
 * Each room first gets a loader client that inserts --doc-bytes of text
 * (--doc-file's first bytes, else repeated lorem ipsum) into files/big.txt
 * in 200,000-byte updates and stays connected; then R x C
 * clients connect, each sets its own files/c<N>.txt and, for S seconds,
 * inserts "~<N>:<seq>~ edit " at the front of it every 1/rate s (one
 * [0, 2, update] frame per edit, the update made by lib/yjs as yjs would).
 * Each such edit is a Yjs item of its own for good (its neighbours have
 * other origins), so the document grows by an item per edit. --keep-bytes K
 * types like a person instead: each edit goes after the previous one (at
 * the end of the text, where Yjs merges it into the item before it), and
 * once the text is longer than K bytes a second frame deletes as much from
 * its front (a merged tombstone), so the document keeps its size however
 * long the run (bench/soak uses this).
 * Receivers find the markers in the raw update bytes (Yjs keeps strings as
 * UTF-8), so the latency from the send to each receiver is measured without
 * decoding. One JSON line goes to stdout. The driver is one thread; its own
 * CPU time is reported next to the server's.
 *
 * --echo-server: a WebSocket server that sends [0, 0, 0] on connect and relays
 * every message to every connection on the same path, the sender included:
 * the fan-out of a y-websocket room without a document. Against it the
 * driver's own limits show.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/resource.h>

#include <libwebsockets.h>

#include "yjs/yjs.h"

#define CHUNK 200000
#define MAX_ROOMS 4096

struct out {
	unsigned char *buf; /* LWS_PRE bytes, then len */
	size_t len;
	unsigned *refs;     /* shared (echo server) or NULL */
};

struct conn {
	struct lws *wsi;
	int room;
	long id;              /* client number, -1 for a loader */
	struct svc_yjs_doc *doc;
	char key[32];
	struct out *q;
	size_t qh, qn, qcap;
	unsigned char *rx;
	size_t rxlen, rxcap;
	int ready, closed;
	uint64_t seq, sent_msgs, got_updates;
	double next_due;
	double *sent_at;
	size_t sent_cap;
};

static struct {
	const char *host, *path, *token;
	int port, rooms, clients;
	double rate, seconds, settle_ms;
	size_t doc_bytes, keep_bytes;
	const char *doc_file;
	char **room_ids;
	int server_pid;
	struct lws_context *ctx;
	struct conn *loaders, *cl;
	int phase; /* 0 loading, 1 clients connecting, 2 warm-up, 3 edits, 4 drain, 5 done */
	double t_phase, t0;
	uint32_t *lat_us;
	size_t nlat, caplat;
	uint64_t updates, deliveries, closed;
	double rss_before, rss_loaded, cpu_s0, cpu_s1, drv0, drv1;
	lws_sorted_usec_list_t sul;
} g;

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1000.0 + (double)ts.tv_nsec / 1e6;
}

/* The decimal digits at the start of s (0 when none); stops before overflow. */
static uint64_t num(const char *s)
{
	uint64_t v = 0;

	while (*s >= '0' && *s <= '9' && v < UINT64_MAX / 10 - 10)
		v = v * 10 + (uint64_t)(*s++ - '0');
	return v;
}

static void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p) {
		fprintf(stderr, "out of memory\n");
		exit(2);
	}
	return p;
}

/* Server CPU seconds and RSS bytes from /proc/<pid>. Returns 0 or -1. */
static int proc_stat(int pid, double *cpu, double *rss)
{
	char path[64], buf[2048], *p;
	FILE *f;
	uint64_t ut = 0, st = 0, res = 0;
	size_t n;
	int field = 2;

	snprintf(path, sizeof path, "/proc/%d/stat", pid);
	if (!(f = fopen(path, "r")))
		return -1;
	n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = '\0';
	p = strrchr(buf, ')');
	if (!p)
		return -1;
	for (p++; *p && field < 15; p++)
		if (*p == ' ') {
			field++;
			if (field == 14)
				ut = num(p + 1);
			else if (field == 15)
				st = num(p + 1);
		}
	snprintf(path, sizeof path, "/proc/%d/statm", pid);
	if (!(f = fopen(path, "r")))
		return -1;
	n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = '\0';
	p = strchr(buf, ' ');
	res = p ? num(p + 1) : 0;
	*cpu = (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
	*rss = (double)res * (double)sysconf(_SC_PAGESIZE);
	return 0;
}

static double self_cpu(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
	       (double)ru.ru_stime.tv_usec / 1e6;
}

/* ------------------------------------------------------------------ sending */

static void put_varuint(unsigned char **p, uint64_t v)
{
	while (v > 0x7f) {
		*(*p)++ = (unsigned char)(0x80 | (v & 0x7f));
		v >>= 7;
	}
	*(*p)++ = (unsigned char)v;
}

static void queue(struct conn *c, struct out o)
{
	if (c->qn == c->qcap) {
		size_t i, cap = c->qcap ? c->qcap * 2 : 8;
		struct out *q = xrealloc(NULL, cap * sizeof *q);
		for (i = 0; i < c->qn; i++)
			q[i] = c->q[(c->qh + i) % c->qcap];
		free(c->q);
		c->q = q;
		c->qcap = cap;
		c->qh = 0;
	}
	c->q[(c->qh + c->qn++) % c->qcap] = o;
	if (c->wsi)
		lws_callback_on_writable(c->wsi);
}

/* Queues [0, 2, varUint8Array(update)]. */
static void send_update(struct conn *c, const struct svc_yjs_buf *u)
{
	struct out o;
	unsigned char *p;

	o.buf = xrealloc(NULL, LWS_PRE + 12 + u->len);
	o.refs = NULL;
	p = o.buf + LWS_PRE;
	*p++ = 0;
	*p++ = 2;
	put_varuint(&p, u->len);
	memcpy(p, u->data, u->len);
	o.len = (size_t)(p - (o.buf + LWS_PRE)) + u->len;
	c->sent_msgs++;
	queue(c, o);
}

static void out_free(struct out *o)
{
	if (o->refs) {
		if (--*o->refs == 0) {
			free(o->refs);
			free(o->buf);
		}
	} else {
		free(o->buf);
	}
}

/* Writes queued frames: the first because the socket is writeable, more while it takes them (at most 64). */
static int writeable(struct conn *c)
{
	unsigned sent = 0;

	while (c->qn && sent < 64 && (sent == 0 || !lws_send_pipe_choked(c->wsi))) {
		struct out o = c->q[c->qh];
		c->qh = (c->qh + 1) % c->qcap;
		c->qn--;
		if (lws_write(c->wsi, o.buf + LWS_PRE, o.len, LWS_WRITE_BINARY) < (int)o.len) {
			out_free(&o);
			return -1;
		}
		out_free(&o);
		sent++;
	}
	if (c->qn)
		lws_callback_on_writable(c->wsi);
	return 0;
}

/* ------------------------------------------------------------------ receiving */

static void latency(double dt)
{
	if (g.nlat == g.caplat) {
		g.caplat = g.caplat ? g.caplat * 2 : 1 << 20;
		g.lat_us = xrealloc(g.lat_us, g.caplat * sizeof *g.lat_us);
	}
	g.lat_us[g.nlat++] = dt < 0 ? 0 : (uint32_t)(dt * 1000.0);
}

/* Finds "~<id>:<seq>~" markers in an update and records their latency. */
static void scan_markers(const unsigned char *d, size_t n, double t)
{
	size_t i = 0;

	while (i < n) {
		const unsigned char *m = memchr(d + i, '~', n - i);
		uint64_t id = 0, seq = 0;
		size_t k;
		if (!m)
			return;
		k = (size_t)(m - d) + 1;
		i = k;
		while (k < n && d[k] >= '0' && d[k] <= '9' && id < 100000000)
			id = id * 10 + (d[k++] - '0');
		if (k == i || k >= n || d[k] != ':')
			continue;
		i = ++k;
		while (k < n && d[k] >= '0' && d[k] <= '9' && seq < 100000000)
			seq = seq * 10 + (d[k++] - '0');
		if (k == i || k >= n || d[k] != '~')
			continue;
		i = k + 1;
		if (id < (uint64_t)g.rooms * (uint64_t)g.clients) {
			struct conn *s = &g.cl[id];
			if (seq < s->sent_cap && s->sent_at[seq] > 0) {
				latency(t - s->sent_at[seq]);
				g.deliveries++;
			}
		}
	}
}

static void loader_start(struct conn *c);

static void on_message(struct conn *c, const unsigned char *d, size_t n)
{
	if (!c->ready) {
		c->ready = 1;
		if (c->id < 0)
			loader_start(c);
	}
	if (n >= 2 && d[0] == 0 && d[1] == 2) {
		c->got_updates++;
		if (c->id >= 0 && g.phase >= 3)
			scan_markers(d, n, now_ms());
	}
}

static void rx(struct conn *c, const void *in, size_t len, int first, int final)
{
	if (first)
		c->rxlen = 0;
	if (c->rxlen + len > c->rxcap) {
		while (c->rxcap < c->rxlen + len)
			c->rxcap = c->rxcap ? c->rxcap * 2 : 4096;
		c->rx = xrealloc(c->rx, c->rxcap);
	}
	memcpy(c->rx + c->rxlen, in, len);
	c->rxlen += len;
	if (final)
		on_message(c, c->rx, c->rxlen);
}

/* ------------------------------------------------------------------ clients */

static void doc_for(struct conn *c, uint64_t client_id)
{
	if (svc_yjs_doc_new(&c->doc, client_id) < 0) {
		fprintf(stderr, "svc_yjs_doc_new failed\n");
		exit(2);
	}
}

/*
 * The document text: --doc-file's bytes (UTF-8 without NUL, cut at a
 * character boundary at --doc-bytes), or without one repeated lorem ipsum.
 */
static const char *doc_text(void)
{
	static char *text;
	size_t i;

	if (text)
		return text;
	text = xrealloc(NULL, g.doc_bytes + 1);
	if (g.doc_file) {
		FILE *f = fopen(g.doc_file, "rb");
		size_t n = f ? fread(text, 1, g.doc_bytes, f) : 0;
		if (f)
			fclose(f);
		while (n > 0 && ((unsigned char)text[n - 1] & 0xc0) == 0x80)
			n--;
		if (n > 0 && ((unsigned char)text[n - 1] & 0x80))
			n--; /* the lead byte of a cut character */
		if (n == 0) {
			fprintf(stderr, "cannot read --doc-file %s\n", g.doc_file);
			exit(2);
		}
		g.doc_bytes = n;
	} else {
		const char *words = "lorem ipsum dolor sit amet, consectetur adipiscing elit. ";
		size_t wl = strlen(words);
		for (i = 0; i < g.doc_bytes; i++)
			text[i] = words[i % wl];
	}
	text[g.doc_bytes] = 0;
	return text;
}

static void loader_start(struct conn *c)
{
	const char *text = doc_text();
	struct svc_yjs_buf u = { 0 };
	size_t done, n;

	doc_for(c, 1000000u + (uint64_t)c->room);
	svc_yjs_map_set_text(c->doc, "files", "big.txt", 7, "", 0, &u, NULL);
	send_update(c, &u);
	for (done = 0; done < g.doc_bytes; done += n) {
		n = g.doc_bytes - done < CHUNK ? g.doc_bytes - done : CHUNK;
		while (n < g.doc_bytes - done && ((unsigned char)text[done + n] & 0xc0) == 0x80)
			n--; /* chunks end on character boundaries */
		u.len = 0;
		/* appended at the end: the index is in UTF-16 code units */
		if (svc_yjs_text_insert(c->doc, "files", "big.txt", 7,
					(uint64_t)svc_yjs_text_length(c->doc, "files", "big.txt", 7), text + done, n, &u,
					NULL) < 0) {
			fprintf(stderr, "the document text is not valid UTF-8 without NUL\n");
			exit(2);
		}
		send_update(c, &u);
	}
	svc_yjs_buf_dispose(&u);
}

static void edit(struct conn *c, double t)
{
	char s[64];
	struct svc_yjs_buf u = { 0 };
	int n = snprintf(s, sizeof s, "~%ld:%llu~ edit ", c->id, (unsigned long long)c->seq);

	int64_t len = g.keep_bytes ? svc_yjs_text_length(c->doc, "files", c->key, strlen(c->key)) : 0;

	/* the text is ASCII: its UTF-16 length is its byte length */
	svc_yjs_text_insert(c->doc, "files", c->key, strlen(c->key), len < 0 ? 0 : (uint64_t)len, s, (size_t)n, &u,
			    NULL);
	if (c->seq >= c->sent_cap) {
		size_t cap = c->sent_cap ? c->sent_cap * 2 : 1024;
		c->sent_at = xrealloc(c->sent_at, cap * sizeof *c->sent_at);
		memset(c->sent_at + c->sent_cap, 0, (cap - c->sent_cap) * sizeof *c->sent_at);
		c->sent_cap = cap;
	}
	c->sent_at[c->seq++] = t;
	send_update(c, &u);
	if (g.keep_bytes && len >= 0 && (uint64_t)len + (uint64_t)n > g.keep_bytes) {
		u.len = 0;
		svc_yjs_text_delete(c->doc, "files", c->key, strlen(c->key), 0,
				    (uint64_t)len + (uint64_t)n - g.keep_bytes, &u, NULL);
		send_update(c, &u);
	}
	svc_yjs_buf_dispose(&u);
	g.updates++;
}

static void connect_one(struct conn *c)
{
	struct lws_client_connect_info i;
	char path[512];

	if (g.token)
		snprintf(path, sizeof path, "%s/%s?token=%s", g.path, g.room_ids[c->room], g.token);
	else
		snprintf(path, sizeof path, "%s/%s", g.path, g.room_ids[c->room]);
	memset(&i, 0, sizeof i);
	i.context = g.ctx;
	i.address = g.host;
	i.port = g.port;
	i.path = path;
	i.host = g.host;
	i.origin = NULL;
	i.protocol = NULL;
	i.local_protocol_name = "drive";
	i.userdata = c;
	i.pwsi = &c->wsi;
	if (!lws_client_connect_via_info(&i)) {
		fprintf(stderr, "connect failed\n");
		exit(2);
	}
}

/* ------------------------------------------------------------------ the schedule */

static int cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

static void report(void)
{
	double wall = g.seconds + 2.0;
	double p50 = 0, p99 = 0;
	uint64_t expected = g.updates * (uint64_t)g.clients;

	if (g.nlat) {
		qsort(g.lat_us, g.nlat, sizeof *g.lat_us, cmp);
		p50 = g.lat_us[(size_t)(g.nlat * 0.5)] / 1000.0;
		p99 = g.lat_us[(size_t)(g.nlat * 0.99)] / 1000.0;
	}
	printf("{\"rooms\":%d,\"clients\":%d,\"rate\":%g,\"seconds\":%g,\"docBytes\":%zu,"
	       "\"offeredUpdatesPerSec\":%.0f,\"updatesPerSec\":%.0f,\"deliveredPerSec\":%.0f,"
	       "\"deliveryRatio\":%.4f,\"p50ms\":%.2f,\"p99ms\":%.2f,\"closed\":%llu,\"driverCpu\":%.2f",
	       g.rooms, g.clients, g.rate, g.seconds, g.doc_bytes, g.rooms * g.clients * g.rate,
	       (double)g.updates / g.seconds, (double)g.deliveries / g.seconds,
	       expected ? (double)g.deliveries / (double)expected : 0.0, p50, p99, (unsigned long long)g.closed,
	       (g.drv1 - g.drv0) / wall);
	if (g.server_pid) {
		double cpu, rss;
		if (proc_stat(g.server_pid, &cpu, &rss) == 0)
			printf(",\"serverCpu\":%.2f,\"serverRssMB\":%.1f,\"rssPerRoomMB\":%.2f", (g.cpu_s1 - g.cpu_s0) / wall,
			       rss / 1048576.0, (g.rss_loaded - g.rss_before) / g.rooms / 1048576.0);
	}
	printf("}\n");
	fflush(stdout);
}

static void tick(lws_sorted_usec_list_t *sul)
{
	double t = now_ms(), rss;
	int i, n = g.rooms * g.clients, all;

	(void)sul;
	switch (g.phase) {
	case 0: /* the documents: every loader got back all of its updates */
		for (i = 0, all = 1; i < g.rooms && all; i++)
			all = g.loaders[i].ready && g.loaders[i].got_updates >= g.loaders[i].sent_msgs;
		if (all && g.t_phase == 0)
			g.t_phase = t;
		if (all && t - g.t_phase > g.settle_ms) {
			if (g.server_pid)
				proc_stat(g.server_pid, &rss, &g.rss_loaded);
			for (i = 0; i < n; i++) {
				g.cl[i].room = i / g.clients;
				g.cl[i].id = i;
				snprintf(g.cl[i].key, sizeof g.cl[i].key, "c%d.txt", i);
				doc_for(&g.cl[i], 2000000u + (uint64_t)i);
				connect_one(&g.cl[i]);
			}
			g.phase = 1;
		}
		break;
	case 1:
		for (i = 0, all = 1; i < n && all; i++)
			all = g.cl[i].ready;
		if (all) {
			for (i = 0; i < n; i++) {
				struct svc_yjs_buf u = { 0 };
				svc_yjs_map_set_text(g.cl[i].doc, "files", g.cl[i].key, strlen(g.cl[i].key), "", 0, &u, NULL);
				send_update(&g.cl[i], &u);
				svc_yjs_buf_dispose(&u);
			}
			g.phase = 2;
			g.t_phase = t;
		}
		break;
	case 2:
		if (t - g.t_phase > 500) {
			g.phase = 3;
			g.t0 = t;
			for (i = 0; i < n; i++)
				g.cl[i].next_due = t + (1000.0 / g.rate) * i / n;
			g.drv0 = self_cpu();
			if (g.server_pid)
				proc_stat(g.server_pid, &g.cpu_s0, &rss);
		}
		break;
	case 3:
		if (t - g.t0 >= g.seconds * 1000.0) {
			g.phase = 4;
			break;
		}
		for (i = 0; i < n; i++)
			while (g.cl[i].next_due <= t && !g.cl[i].closed) {
				edit(&g.cl[i], t);
				g.cl[i].next_due += 1000.0 / g.rate;
			}
		break;
	case 4:
		if (t - g.t0 >= (g.seconds + 2) * 1000.0) {
			g.drv1 = self_cpu();
			if (g.server_pid)
				proc_stat(g.server_pid, &g.cpu_s1, &rss);
			report();
			g.phase = 5;
			return;
		}
		break;
	}
	/* poll() counts in ms: a shorter period would spin */
	lws_sul_schedule(g.ctx, 0, &g.sul, tick, (g.phase == 3 ? 2 : 10) * LWS_US_PER_MS);
}

static int cb_drive(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in, size_t len)
{
	struct conn *c = user;

	(void)user;
	switch (reason) {
	case LWS_CALLBACK_CLIENT_CONNECTION_ERROR:
		fprintf(stderr, "connection error: %s\n", in ? (const char *)in : "?");
		if (c) {
			c->closed = 1;
			c->wsi = NULL;
		}
		g.closed++;
		break;
	case LWS_CALLBACK_CLIENT_ESTABLISHED:
		if (c->qn)
			lws_callback_on_writable(wsi);
		break;
	case LWS_CALLBACK_CLIENT_RECEIVE:
		rx(c, in, len, lws_is_first_fragment(wsi), lws_is_final_fragment(wsi) && !lws_remaining_packet_payload(wsi));
		break;
	case LWS_CALLBACK_CLIENT_WRITEABLE:
		return writeable(c);
	case LWS_CALLBACK_CLIENT_CLOSED:
		if (c) {
			c->closed = 1;
			c->wsi = NULL;
		}
		g.closed++;
		break;
	default:
		break;
	}
	return 0;
}

/* ------------------------------------------------------------------ the echo server */

struct eroom {
	char path[256];
	struct conn **c;
	size_t n, cap;
};
static struct eroom erooms[MAX_ROOMS];
static size_t nerooms;

struct epss {
	struct conn c;
	struct eroom *room;
};

static int cb_echo(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in, size_t len)
{
	struct epss *p = user;
	char path[256];
	size_t i;

	switch (reason) {
	case LWS_CALLBACK_ESTABLISHED: {
		struct out o;
		if (lws_hdr_copy(wsi, path, sizeof path, WSI_TOKEN_GET_URI) <= 0)
			return -1;
		memset(&p->c, 0, sizeof p->c);
		p->c.wsi = wsi;
		for (i = 0; i < nerooms && strcmp(erooms[i].path, path) != 0; i++)
			;
		if (i == nerooms) {
			if (nerooms == MAX_ROOMS)
				return -1;
			snprintf(erooms[nerooms++].path, sizeof erooms[0].path, "%s", path);
		}
		p->room = &erooms[i];
		if (p->room->n == p->room->cap) {
			p->room->cap = p->room->cap ? p->room->cap * 2 : 8;
			p->room->c = xrealloc(p->room->c, p->room->cap * sizeof *p->room->c);
		}
		p->room->c[p->room->n++] = &p->c;
		o.buf = xrealloc(NULL, LWS_PRE + 3);
		memcpy(o.buf + LWS_PRE, "\x00\x00\x00", 3);
		o.len = 3;
		o.refs = NULL;
		queue(&p->c, o);
		break;
	}
	case LWS_CALLBACK_RECEIVE:
		if (lws_is_first_fragment(wsi))
			p->c.rxlen = 0;
		rx(&p->c, in, len, 0, 0);
		if (lws_is_final_fragment(wsi) && !lws_remaining_packet_payload(wsi)) {
			struct out o;
			o.buf = xrealloc(NULL, LWS_PRE + p->c.rxlen);
			memcpy(o.buf + LWS_PRE, p->c.rx, p->c.rxlen);
			o.len = p->c.rxlen;
			o.refs = xrealloc(NULL, sizeof *o.refs);
			*o.refs = (unsigned)p->room->n;
			for (i = 0; i < p->room->n; i++)
				queue(p->room->c[i], o);
		}
		break;
	case LWS_CALLBACK_SERVER_WRITEABLE:
		return writeable(&p->c);
	case LWS_CALLBACK_CLOSED:
		if (p->room)
			for (i = 0; i < p->room->n; i++)
				if (p->room->c[i] == &p->c) {
					p->room->c[i] = p->room->c[--p->room->n];
					break;
				}
		while (p->c.qn) {
			out_free(&p->c.q[p->c.qh]);
			p->c.qh = (p->c.qh + 1) % p->c.qcap;
			p->c.qn--;
		}
		free(p->c.q);
		free(p->c.rx);
		break;
	default:
		break;
	}
	return 0;
}

/* ------------------------------------------------------------------ main */

static const struct lws_protocols drive_protocols[] = {
	{ "drive", cb_drive, 0, 65536, 0, NULL, 0 },
	{ NULL, NULL, 0, 0, 0, NULL, 0 },
};

static const struct lws_protocols echo_protocols[] = {
	{ "echo", cb_echo, sizeof(struct epss), 65536, 0, NULL, 0 },
	{ NULL, NULL, 0, 0, 0, NULL, 0 },
};

static const char *arg(int argc, char **argv, const char *name, const char *def)
{
	int i;

	for (i = 1; i + 1 < argc; i++)
		if (strcmp(argv[i], name) == 0)
			return argv[i + 1];
	return def;
}

static void read_rooms(const char *file)
{
	int i;

	g.room_ids = xrealloc(NULL, (size_t)g.rooms * sizeof *g.room_ids);
	if (file) {
		FILE *f = fopen(file, "r");
		char line[128];
		if (!f) {
			perror(file);
			exit(2);
		}
		for (i = 0; i < g.rooms; i++) {
			if (!fgets(line, sizeof line, f)) {
				fprintf(stderr, "%s: fewer than %d room ids\n", file, g.rooms);
				exit(2);
			}
			line[strcspn(line, "\r\n")] = '\0';
			g.room_ids[i] = strdup(line);
		}
		fclose(f);
		return;
	}
	for (i = 0; i < g.rooms; i++) {
		char id[64];
		snprintf(id, sizeof id, "bench-room-%d-%d", i, (int)getpid());
		g.room_ids[i] = strdup(id);
	}
}

int main(int argc, char **argv)
{
	struct lws_context_creation_info info;
	const char *echo = arg(argc, argv, "--echo-server", NULL);
	int i;

	lws_set_log_level(LLL_ERR, NULL);
	memset(&info, 0, sizeof info);
	info.options = LWS_SERVER_OPTION_DISABLE_IPV6;
	info.fd_limit_per_thread = 4096;
	if (echo) {
		info.port = (int)num(echo);
		info.iface = "127.0.0.1";
		info.protocols = echo_protocols;
		g.ctx = lws_create_context(&info);
		if (!g.ctx)
			return 1;
		while (lws_service(g.ctx, 0) >= 0)
			;
		return 0;
	}
	g.host = arg(argc, argv, "--host", "127.0.0.1");
	g.path = arg(argc, argv, "--path", "/project");
	g.token = arg(argc, argv, "--token", NULL);
	g.port = (int)num(arg(argc, argv, "--port", "1234"));
	g.rooms = (int)num(arg(argc, argv, "--rooms", "10"));
	g.clients = (int)num(arg(argc, argv, "--clients", "5"));
	g.rate = strtod(arg(argc, argv, "--rate", "5"), NULL);
	g.seconds = strtod(arg(argc, argv, "--seconds", "10"), NULL);
	g.doc_bytes = (size_t)num(arg(argc, argv, "--doc-bytes", "0"));
	g.doc_file = arg(argc, argv, "--doc-file", NULL);
	g.keep_bytes = (size_t)num(arg(argc, argv, "--keep-bytes", "0"));
	g.server_pid = (int)num(arg(argc, argv, "--server-pid", "0"));
	g.settle_ms = (double)num(arg(argc, argv, "--settle-ms", "3000"));
	if (g.rooms <= 0 || g.rooms > MAX_ROOMS || g.clients <= 0 || g.rate <= 0 || g.seconds <= 0) {
		fprintf(stderr, "bad arguments\n");
		return 2;
	}
	read_rooms(arg(argc, argv, "--room-ids", NULL));
	info.port = CONTEXT_PORT_NO_LISTEN;
	info.protocols = drive_protocols;
	g.ctx = lws_create_context(&info);
	if (!g.ctx)
		return 1;
	g.loaders = calloc((size_t)g.rooms, sizeof *g.loaders);
	g.cl = calloc((size_t)g.rooms * (size_t)g.clients, sizeof *g.cl);
	if (!g.loaders || !g.cl)
		return 1;
	if (g.server_pid) {
		double cpu;
		proc_stat(g.server_pid, &cpu, &g.rss_before);
	}
	for (i = 0; i < g.rooms; i++) {
		g.loaders[i].room = i;
		g.loaders[i].id = -1;
		connect_one(&g.loaders[i]);
	}
	lws_sul_schedule(g.ctx, 0, &g.sul, tick, 10 * LWS_US_PER_MS);
	while (g.phase != 5 && lws_service(g.ctx, 0) >= 0)
		;
	lws_context_destroy(g.ctx);
	return 0;
}
