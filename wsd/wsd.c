/* wsd.c: svc-wsd's main and its one lws protocol: the collaboration socket and the signed internal endpoint. */
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>
#include <json-c/json.h>
#include <libwebsockets.h>
#include <mysql.h>
#include <openssl/crypto.h>

#include "auth/auth.h"
#include "core/err.h"
#include "auth/internal.h"
#include "core/log.h"
#include "core/util.h"
#include "awareness.h"
#include "comments.h"
#include "conn.h"
#include "disk.h"
#include "lease.h"
#include "proto.h"
#include "room.h"
#include "session.h"
#include "worker.h"
#include "wsd.h"

#define HTTP_BODY_MAX (64 * 1024)

_Static_assert(LWS_PRE <= WSD_PRE, "WSD_PRE must leave room for the lws frame header");

/* An internal HTTP request on the daemon's port. */
struct http_req {
	char path[256];
	int post;
	char ts[32];
	char sig[SVC_INTERNAL_SIG_MAX + 8];
	char nonce[SVC_INTERNAL_NONCE_LEN + 8];
	char *body;
	size_t body_len, body_cap;
	int status;
	char answer[256];
	size_t answer_len;
	int answered;
	int headers_sent;
};

/* Per connection: a collaboration session or an internal HTTP request. */
struct pss {
	struct wsd_sess *s;     /* &sess once the upgrade was let through */
	struct http_req *h;
	struct wsd_sess sess;
};

static struct wsd g;
struct wsd *wsd_g;
static volatile sig_atomic_t got_signal;
static struct svc_nonce_cache nonces; /* of the signed calls served (http_handle) */
static lws_sorted_usec_list_t tick_sul;

static void wake(void)
{
	if (g.ctx)
		lws_cancel_service(g.ctx);
}

/* ------------------------------------------------------------------ the upgrade */

/*
 * LWS_CALLBACK_FILTER_PROTOCOL_CONNECTION: the path names a project, the
 * Origin is ours (cross-site WebSocket hijacking), and the token (query
 * parameter, else the svc_access_token cookie) is verified here; its session
 * (svc_session_check: not ended by a logout, not older than a password change
 * or reset) and the role are looked up once the socket is open, off the loop. Returns non-zero to refuse
 * the upgrade.
 */
static int filter(struct lws *wsi, struct pss *pss)
{
	char path[256], origin[512], *token = NULL, *cookie = NULL;
	const char *tok = NULL;
	struct wsd_sess *s = &pss->sess;
	int n, rc = -1;

	if (g.nsess >= g.cfg.wsd_max_conns || g.stopping)
		return -1;
	if (lws_hdr_copy(wsi, path, sizeof path, WSI_TOKEN_GET_URI) <= 0)
		return -1;
	memset(s, 0, sizeof *s);
	token = malloc(SVC_AUTH_TOKEN_MAX + 16);
	if (!token)
		goto done;
	if (wsd_path_project(path, s->project_id) < 0)
		goto done;
	if (lws_hdr_total_length(wsi, WSI_TOKEN_ORIGIN) > 0) {
		if (lws_hdr_copy(wsi, origin, sizeof origin, WSI_TOKEN_ORIGIN) <= 0 ||
		    !wsd_origin_allowed(origin, g.cfg.app_url, g.cfg.cors_origins))
			goto done;
	}
	tok = lws_get_urlarg_by_name(wsi, "token=", token, SVC_AUTH_TOKEN_MAX + 16);
	if (!tok && (n = lws_hdr_total_length(wsi, WSI_TOKEN_HTTP_COOKIE)) > 0 && n < 16384) {
		cookie = malloc((size_t)n + 1);
		/* two svc_access_token cookies (one planted by a site of a shared parent domain): neither */
		if (cookie && lws_hdr_copy(wsi, cookie, n + 1, WSI_TOKEN_HTTP_COOKIE) > 0 &&
		    svc_cookie_count(cookie, "svc_access_token") == 1 &&
		    svc_cookie_get(cookie, "svc_access_token", token, SVC_AUTH_TOKEN_MAX + 1))
			tok = token;
	}
	/* the signature here; the server-side session (logout, a password reset) with the role, off the loop */
	s->token_ok = tok && svc_auth_jwt_verify_claims(g.cfg.jwt_secret, g.cfg.jwt_secret_len, g.cfg.jwt_issuer,
							SVC_TOKEN_ACCESS, tok, svc_now_ms() / 1000, &s->claims) == 0;
	if (s->token_ok)
		memcpy(s->user_id, s->claims.user_id, sizeof s->user_id);
	pss->s = s;
	rc = 0;
done:
	if (token)
		OPENSSL_cleanse(token, SVC_AUTH_TOKEN_MAX + 16);
	free(token);
	free(cookie);
	return rc;
}

/* ------------------------------------------------------------------ internal HTTP endpoint */

static void http_answer(struct http_req *h, int status, const char *json)
{
	h->status = status;
	h->answer_len = (size_t)snprintf(h->answer, sizeof h->answer, "%s", json);
	h->answered = 1;
}

/*
 * The daemon's internal endpoints (HMAC-signed, docs/api.md "Internal
 * calls"): POST /internal/projects/:id/disk-changed -> 202 {"live": bool};
 * GET /internal/status -> 200 {"rooms", "connections", "textBytes",
 * "textHeapBytes", "packedTextBytes", "packedBytes"}. 401 for a bad
 * signature, 404 for anything else. Only the daemon's own port serves them;
 * the web servers pass /ws/ alone.
 */
static void http_handle(struct http_req *h)
{
	const char *prefix = "/internal/projects/";
	char id[37], *end;
	size_t plen = strlen(prefix);

	if (svc_internal_verify(g.cfg.internal_secret, strlen(g.cfg.internal_secret), h->post ? "POST" : "GET",
				h->path, h->ts[0] ? h->ts : NULL, h->nonce[0] ? h->nonce : NULL, h->sig[0] ? h->sig : NULL,
				h->body, h->body_len, svc_now_ms() / 1000) < 0) {
		http_answer(h, 401, "{\"error\":\"unauthorized\",\"message\":\"Bad or missing signature.\"}");
		return;
	}
	/* each signed call once (the daemon is one process: its memory is the record) */
	switch (svc_nonce_cache_add(&nonces, h->nonce, svc_now_ms() / 1000)) {
	case 0:
		break;
	case SVC_E_UNAUTHORIZED:
		http_answer(h, 401, "{\"error\":\"unauthorized\",\"message\":\"This signed request was already used.\"}");
		return;
	default:
		http_answer(h, 503, "{\"error\":\"service_unavailable\",\"message\":\"Too many signed calls; try again.\"}");
		return;
	}
	if (!h->post && strcmp(h->path, "/internal/status") == 0) {
		struct svc_yjs_mem m;
		struct json_object *o = json_object_new_object();
		wsd_text_stats(&m);
		if (!o) {
			http_answer(h, 500, "{\"error\":\"internal_error\",\"message\":\"Out of memory.\"}");
			return;
		}
		json_object_object_add(o, "rooms", json_object_new_uint64(g.nrooms));
		json_object_object_add(o, "connections", json_object_new_uint64(g.nsess));
		json_object_object_add(o, "textBytes", json_object_new_uint64(m.string_bytes));
		json_object_object_add(o, "textHeapBytes", json_object_new_uint64(m.string_heap));
		json_object_object_add(o, "packedTextBytes", json_object_new_uint64(m.packed_raw));
		json_object_object_add(o, "packedBytes", json_object_new_uint64(m.packed_bytes));
		http_answer(h, 200, json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
		json_object_put(o);
		return;
	}
	if (h->post && strncmp(h->path, prefix, plen) == 0 && strlen(h->path) == plen + 36 + 13 &&
	    strcmp(h->path + plen + 36, "/disk-changed") == 0) {
		memcpy(id, h->path + plen, 36);
		id[36] = '\0';
		for (end = id; *end; end++)
			if (*end >= 'A' && *end <= 'F')
				*end = (char)(*end + 32);
		if (svc_uuid_valid(id)) {
			int live = wsd_disk_changed(id) == 0;
			http_answer(h, 202, live ? "{\"live\":true}" : "{\"live\":false}");
			return;
		}
	}
	http_answer(h, 404, "{\"error\":\"not_found\",\"message\":\"No such endpoint.\"}");
}

static int http_send_headers(struct lws *wsi, struct http_req *h)
{
	unsigned char buf[LWS_PRE + 1024], *start = buf + LWS_PRE, *p = start, *end = buf + sizeof buf;

	/* a POST without a body also ends in LWS_CALLBACK_HTTP_BODY_COMPLETION: one answer only */
	if (h->headers_sent)
		return 0;
	h->headers_sent = 1;
	if (lws_add_http_common_headers(wsi, (unsigned int)h->status, "application/json", h->answer_len, &p, end) ||
	    lws_finalize_write_http_header(wsi, start, &p, end))
		return -1;
	lws_callback_on_writable(wsi);
	return 0;
}

static void http_free(struct pss *pss)
{
	if (pss->h) {
		free(pss->h->body);
		free(pss->h);
		pss->h = NULL;
	}
}

static int http_begin(struct lws *wsi, struct pss *pss, const char *uri)
{
	struct http_req *h;
	char cl[32] = "";

	http_free(pss);
	h = calloc(1, sizeof *h);
	if (!h)
		return -1;
	pss->h = h;
	snprintf(h->path, sizeof h->path, "%s", uri ? uri : "");
	h->post = lws_hdr_total_length(wsi, WSI_TOKEN_POST_URI) > 0;
	if (lws_hdr_custom_copy(wsi, h->ts, sizeof h->ts, "x-svc-timestamp:", 16) < 0)
		h->ts[0] = '\0';
	if (lws_hdr_custom_copy(wsi, h->sig, sizeof h->sig, "x-svc-signature:", 16) < 0)
		h->sig[0] = '\0';
	if (lws_hdr_custom_copy(wsi, h->nonce, sizeof h->nonce, "x-svc-nonce:", 12) < 0)
		h->nonce[0] = '\0';
	if (strncmp(h->path, "/internal/", 10) != 0) {
		http_answer(h, 404, "{\"error\":\"not_found\",\"message\":\"No such endpoint.\"}");
		return http_send_headers(wsi, h);
	}
	if (h->post && lws_hdr_copy(wsi, cl, sizeof cl, WSI_TOKEN_HTTP_CONTENT_LENGTH) > 0 && strcmp(cl, "0") != 0)
		return 0; /* the body follows */
	http_handle(h);
	return http_send_headers(wsi, h);
}

static int http_body(struct pss *pss, const void *in, size_t len)
{
	struct http_req *h = pss->h;

	if (!h || h->answered)
		return 0;
	if (len > HTTP_BODY_MAX - h->body_len)
		return -1;
	if (SVC_ARRAY_GROW(h->body, h->body_cap, h->body_len + len + 1) < 0)
		return -1;
	memcpy(h->body + h->body_len, in, len);
	h->body_len += len;
	h->body[h->body_len] = '\0';
	return 0;
}

static int http_writeable(struct lws *wsi, struct pss *pss)
{
	struct http_req *h = pss->h;
	unsigned char buf[LWS_PRE + sizeof h->answer];

	if (!h || !h->answered)
		return 0;
	memcpy(buf + LWS_PRE, h->answer, h->answer_len);
	if (lws_write(wsi, buf + LWS_PRE, h->answer_len, LWS_WRITE_HTTP_FINAL) != (int)h->answer_len)
		return -1;
	http_free(pss);
	return lws_http_transaction_completed(wsi) ? -1 : 0;
}

/* ------------------------------------------------------------------ the protocol */

static int callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in, size_t len)
{
	struct pss *pss = user;

	switch (reason) {
	case LWS_CALLBACK_FILTER_PROTOCOL_CONNECTION:
		return filter(wsi, pss);
	case LWS_CALLBACK_ESTABLISHED:
		if (!pss || !pss->s)
			return -1;
		return wsd_sess_open(pss->s, wsi);
	case LWS_CALLBACK_RECEIVE:
		if (!pss->s)
			return -1;
		wsd_sess_rx(pss->s, in, len, lws_is_first_fragment(wsi),
			    lws_is_final_fragment(wsi) && lws_remaining_packet_payload(wsi) == 0,
			    lws_frame_is_binary(wsi));
		return 0;
	case LWS_CALLBACK_SERVER_WRITEABLE:
		if (!pss->s)
			return 0;
		return wsd_sess_writeable(pss->s);
	case LWS_CALLBACK_CLOSED:
		if (pss && pss->s) {
			if (pss->s->wsi)
				wsd_sess_closed(pss->s);
			pss->s = NULL;
		}
		return 0;
	case LWS_CALLBACK_HTTP:
		return http_begin(wsi, pss, in);
	case LWS_CALLBACK_HTTP_BODY:
		return http_body(pss, in, len);
	case LWS_CALLBACK_HTTP_BODY_COMPLETION:
		if (!pss->h)
			return -1;
		if (!pss->h->answered)
			http_handle(pss->h);
		return http_send_headers(wsi, pss->h);
	case LWS_CALLBACK_HTTP_WRITEABLE:
		return http_writeable(wsi, pss);
	case LWS_CALLBACK_CLOSED_HTTP:
	case LWS_CALLBACK_HTTP_DROP_PROTOCOL:
		if (pss)
			http_free(pss);
		return 0;
	case LWS_CALLBACK_EVENT_WAIT_CANCELLED:
		wsd_worker_drain_done();
		return 0;
	default:
		break;
	}
	return 0;
}

static const struct lws_protocols protocols[] = {
	/* rx_buffer_size: lws allocates it per connection; longer messages arrive in parts (wsd_sess_rx) */
	{ "svc-collab", callback, sizeof(struct pss), 16384, 0, NULL, 0 },
	{ NULL, NULL, 0, 0, 0, NULL, 0 },
};

/* y-websocket-server pings every 30 s; a client silent for 60 s more is gone. */
static const lws_retry_bo_t retry = {
	.secs_since_valid_ping = 30,
	.secs_since_valid_hangup = 90,
};

static void on_tick(lws_sorted_usec_list_t *sul)
{
	(void)sul;
	wsd_worker_drain_done();
	if (got_signal && !g.stopping) {
		g.stopping = 1;
		g.stop_deadline_ms = svc_mono_ms() + 10000;
		svc_log_info("stopping: saving the open rooms");
	}
	wsd_tick();
	wsd_sess_recheck_tick(svc_mono_ms());
	/* saves, persisted batches and unloaded rooms free big buffers: give the pages back, once a second at most */
	if (g.trim_wanted && svc_mono_ms() - g.trimmed_ms >= 1000) {
		g.trim_wanted = 0;
		g.trimmed_ms = svc_mono_ms();
		malloc_trim(0);
	}
	if (g.stopping && (wsd_all_clean() || svc_mono_ms() > g.stop_deadline_ms)) {
		lws_cancel_service(g.ctx);
		return;
	}
	lws_sul_schedule(g.ctx, 0, &tick_sul, on_tick, WSD_TICK_MS * LWS_US_PER_MS);
}

static void on_signal(int sig)
{
	(void)sig;
	got_signal = 1;
}

int main(int argc, char **argv)
{
	struct lws_context_creation_info info;
	char err[256];
	int rc = 1;

	(void)argc;
	(void)argv;
	svc_log_init("svc-wsd");
	if (svc_config_load(&g.cfg, err, sizeof err) < 0) {
		svc_log_error("%s", err);
		return 1;
	}
	if (strlen(g.cfg.internal_secret) < SVC_INTERNAL_SECRET_MIN) {
		svc_log_error("INTERNAL_SECRET is missing or shorter than %d characters", SVC_INTERNAL_SECRET_MIN);
		goto out;
	}
	wsd_g = &g;
	if (g.cfg.wsd_internal_url[0])
		snprintf(g.internal_url, sizeof g.internal_url, "%s", g.cfg.wsd_internal_url);
	else
		snprintf(g.internal_url, sizeof g.internal_url, "http://127.0.0.1:%u", g.cfg.ws_port);
	if (wsd_lease_instance(&g.cfg, g.instance, sizeof g.instance) < 0) {
		svc_log_error("SVC_INSTANCE_ID or the host name is too long");
		goto out;
	}
	wsd_wake = wake;
	/* the parts of a room, in the order their hooks run (room.h): the lease first, so that a
	 * room's tick knows whether its updates may be stored */
	wsd_lease_register();
	wsd_disk_register();
	wsd_aw_register();
	wsd_comments_register();
	mysql_library_init(0, NULL, NULL);
	curl_global_init(CURL_GLOBAL_DEFAULT);
	/*
	 * glibc raises its mmap threshold after a big block is freed, so the next
	 * megabyte-sized buffers (saves, snapshots, step 2 of a big document)
	 * come from the heap and leave holes; a fixed threshold keeps them in
	 * their own mappings, returned on free. One arena per worker thread is
	 * enough.
	 */
	mallopt(M_MMAP_THRESHOLD, 256 * 1024);
	mallopt(M_ARENA_MAX, 3);
	signal(SIGPIPE, SIG_IGN);
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	lws_set_log_level(LLL_ERR, NULL);

	memset(&info, 0, sizeof info);
	info.port = (int)g.cfg.ws_port;
	info.iface = g.cfg.ws_host;
	info.protocols = protocols;
	info.max_http_header_data = 8192;
	info.max_http_header_pool = 64;
	info.retry_and_idle_policy = &retry;
	info.timeout_secs = 20;
	info.options = LWS_SERVER_OPTION_DISABLE_IPV6;
	g.ctx = lws_create_context(&info);
	if (!g.ctx) {
		svc_log_error("cannot listen on %s:%u", g.cfg.ws_host, g.cfg.ws_port);
		goto out;
	}
	if (wsd_worker_start(&g.db_worker, "db", &g.cfg) < 0 || wsd_worker_start(&g.io_worker, "io", &g.cfg) < 0) {
		svc_log_error("cannot start the worker threads");
		goto out;
	}
	svc_log_info("listening on %s:%u", g.cfg.ws_host, g.cfg.ws_port);
	lws_sul_schedule(g.ctx, 0, &tick_sul, on_tick, WSD_TICK_MS * LWS_US_PER_MS);
	while (!(g.stopping && (wsd_all_clean() || svc_mono_ms() > g.stop_deadline_ms))) {
		if (lws_service(g.ctx, 0) < 0)
			break;
		/* what this poll round read goes out as one update per room */
		wsd_flush();
	}
	rc = 0;
	wsd_worker_stop(&g.db_worker);
	wsd_worker_stop(&g.io_worker);
	wsd_worker_drain_done();
	wsd_lease_release_all(&g.cfg);
out:
	if (g.ctx)
		lws_context_destroy(g.ctx);
	curl_global_cleanup();
	svc_nonce_cache_dispose(&nonces);
	svc_config_dispose(&g.cfg);
	return rc;
}
