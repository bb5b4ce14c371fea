/* internal.c: signing, verifying and making the HMAC-signed internal calls of docs/conventions.md "Internal calls". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>
#include <openssl/crypto.h>
#include <openssl/hmac.h>

#include "core/err.h"
#include "auth/internal.h"
#include "db/db.h"
#include "core/log.h"
#include "core/outbound.h"
#include "core/util.h"

#define PATH_MAX_LEN 2048
#define ANSWER_MAX (1024 * 1024)

/* 1 when `s` is SVC_INTERNAL_NONCE_LEN lowercase hex digits. */
static int nonce_ok(const char *s)
{
	size_t i;

	for (i = 0; i < SVC_INTERNAL_NONCE_LEN; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return s[i] == '\0';
}

int svc_internal_sign(const char *secret, size_t secret_len, const char *method, const char *path,
		      int64_t ts, const char *nonce, const void *body, size_t len, char *out)
{
	unsigned char mac[EVP_MAX_MD_SIZE];
	char body_hex[SVC_SHA256_HEX_LEN + 1], msg[PATH_MAX_LEN + 128];
	unsigned int mac_len = 0;
	int n;

	if (!secret || secret_len < SVC_INTERNAL_SECRET_MIN || !method || !path || !out || (!body && len) ||
	    !nonce || !nonce_ok(nonce))
		return SVC_E_INTERNAL;
	if (strlen(path) > PATH_MAX_LEN || strlen(method) > 16)
		return SVC_E_INTERNAL;
	if (svc_sha256_hex(body, len, body_hex) < 0)
		return SVC_E_INTERNAL;
	n = snprintf(msg, sizeof msg, "%s\n%s\n%lld\n%s\n%s", method, path, (long long)ts, nonce, body_hex);
	if (n < 0 || (size_t)n >= sizeof msg)
		return SVC_E_INTERNAL;
	if (!HMAC(EVP_sha256(), secret, (int)secret_len, (const unsigned char *)msg, (size_t)n, mac, &mac_len) ||
	    mac_len != SVC_SHA256_HEX_LEN / 2)
		return SVC_E_INTERNAL;
	memcpy(out, "v2=", 3);
	svc_hex_encode(mac, mac_len, out + 3);
	OPENSSL_cleanse(mac, sizeof mac);
	return 0;
}

int svc_internal_verify(const char *secret, size_t secret_len, const char *method, const char *path,
			const char *ts_header, const char *nonce_header, const char *sig_header,
			const void *body, size_t len, int64_t now)
{
	char want[SVC_INTERNAL_SIG_MAX];
	uint64_t ts;
	int64_t d;
	int ok;

	if (!ts_header || !sig_header || !nonce_header || !nonce_ok(nonce_header))
		return SVC_E_UNAUTHORIZED;
	if (svc_parse_u64(ts_header, (uint64_t)INT64_MAX / 2, &ts) < 0)
		return SVC_E_UNAUTHORIZED;
	d = (int64_t)ts - now;
	if (d > SVC_INTERNAL_WINDOW_SECS || d < -SVC_INTERNAL_WINDOW_SECS)
		return SVC_E_UNAUTHORIZED;
	if (svc_internal_sign(secret, secret_len, method, path, (int64_t)ts, nonce_header, body, len, want) < 0)
		return SVC_E_UNAUTHORIZED;
	ok = svc_secret_equal(want, strlen(want), sig_header, strlen(sig_header));
	OPENSSL_cleanse(want, sizeof want);
	return ok ? 0 : SVC_E_UNAUTHORIZED;
}

int svc_internal_nonce_db(struct svc_db *db, const char *nonce)
{
	struct svc_dbv p = svc_dbv_str(nonce);
	int err;

	if (!nonce_ok(nonce))
		return SVC_E_UNAUTHORIZED;
	/* forget what is out of every window first: a few rows each time, on the same index */
	svc_db_run(db, STMT_NONCE_PURGE, NULL, 0, NULL, NULL);
	err = svc_db_run(db, STMT_NONCE_INSERT, &p, 1, NULL, NULL);
	return err == SVC_E_CONFLICT ? SVC_E_UNAUTHORIZED : err;
}

int svc_nonce_cache_add(struct svc_nonce_cache *c, const char *nonce, int64_t now)
{
	size_t i, j;

	if (!nonce_ok(nonce))
		return SVC_E_UNAUTHORIZED;
	for (i = j = 0; i < c->n; i++)
		if (c->e[i].seen >= now - 2 * SVC_INTERNAL_WINDOW_SECS)
			c->e[j++] = c->e[i];
	c->n = j;
	for (i = 0; i < c->n; i++)
		if (memcmp(c->e[i].nonce, nonce, SVC_INTERNAL_NONCE_LEN) == 0)
			return SVC_E_UNAUTHORIZED;
	if (c->n >= SVC_NONCE_CACHE_MAX)
		return SVC_E_UNAVAILABLE;
	if (SVC_ARRAY_GROW(c->e, c->cap, c->n + 1) < 0)
		return SVC_E_UNAVAILABLE;
	memcpy(c->e[c->n].nonce, nonce, SVC_INTERNAL_NONCE_LEN + 1);
	c->e[c->n].seen = now;
	c->n++;
	return 0;
}

void svc_nonce_cache_dispose(struct svc_nonce_cache *c)
{
	free(c->e);
	memset(c, 0, sizeof *c);
}

/* The path part of `url` ("http://h:p/api" -> "/api"; no path -> ""). */
static const char *url_path(const char *url)
{
	const char *s = strstr(url, "://");
	const char *p = s ? strchr(s + 3, '/') : NULL;

	return p ? p : "";
}

int svc_internal_call(const struct svc_config *cfg, const char *base, const char *method,
		      const char *path, const char *body, size_t len, long timeout_ms,
		      long *out_status, char **out_body)
{
	char url[PATH_MAX_LEN + 512], full_path[PATH_MAX_LEN + 1], sig[SVC_INTERNAL_SIG_MAX];
	char h_ts[64], h_sig[SVC_INTERNAL_SIG_MAX + 32], nonce[SVC_INTERNAL_NONCE_LEN + 1], h_nonce[64];
	struct curl_slist *hdrs = NULL;
	struct svc_outbound_xfer x;
	struct svc_outbound_req req;
	int64_t ts = svc_now_ms() / 1000;
	int n, err = SVC_E_INTERNAL;

	memset(&x, 0, sizeof x);
	if (!cfg || !base || !path || !method)
		goto done;
	n = snprintf(url, sizeof url, "%s%s", base, path);
	if (n < 0 || (size_t)n >= sizeof url)
		goto done;
	n = snprintf(full_path, sizeof full_path, "%s%s", url_path(base), path);
	if (n < 0 || (size_t)n >= sizeof full_path)
		goto done;
	if (svc_random_hex(nonce, SVC_INTERNAL_NONCE_LEN / 2) < 0 ||
	    svc_internal_sign(cfg->internal_secret, strlen(cfg->internal_secret), method, full_path, ts, nonce,
			      body, body ? len : 0, sig) < 0)
		goto done;
	snprintf(h_ts, sizeof h_ts, "X-Svc-Timestamp: %lld", (long long)ts);
	snprintf(h_nonce, sizeof h_nonce, "X-Svc-Nonce: %s", nonce);
	snprintf(h_sig, sizeof h_sig, "X-Svc-Signature: %s", sig);
	hdrs = curl_slist_append(hdrs, h_ts);
	hdrs = curl_slist_append(hdrs, h_nonce);
	hdrs = curl_slist_append(hdrs, h_sig);
	hdrs = curl_slist_append(hdrs, "Content-Type: application/json");
	hdrs = curl_slist_append(hdrs, "Expect:");
	if (!hdrs)
		goto done;
	/* svc's own daemon (SVC_WSD_INTERNAL_URL, usually loopback): deliberately not address-checked */
	memset(&req, 0, sizeof req);
	req.url = url;
	req.method = method;
	req.body = body && len ? body : NULL;
	req.body_len = body ? len : 0;
	req.headers = hdrs;
	req.reach = SVC_OUTBOUND_INTERNAL;
	req.connect_timeout_ms = timeout_ms;
	req.timeout_ms = timeout_ms;
	req.max_body = ANSWER_MAX;
	if ((err = svc_outbound_request(&req, &x)) < 0) {
		err = err == SVC_E_INTERNAL ? err : SVC_E_UNAVAILABLE;
		goto done;
	}
	err = SVC_E_INTERNAL;
	*out_status = x.status;
	if (out_body) {
		size_t l;
		*out_body = svc_buf_detach(&x.body, &l);
		if (!*out_body)
			goto done;
	}
	err = 0;
done:
	curl_slist_free_all(hdrs);
	svc_outbound_xfer_dispose(&x);
	OPENSSL_cleanse(sig, sizeof sig);
	return err;
}

int svc_internal_notify_files(const struct svc_config *cfg, struct svc_db *db, const char *project_id)
{
	char base[256], path[128];
	struct svc_rows *rows = NULL;
	struct svc_dbv p = svc_dbv_str(project_id);
	long status = 0;
	int err;

	if (!svc_uuid_valid(project_id))
		return SVC_E_INTERNAL;
	base[0] = '\0';
	if (db && svc_db_run(db, STMT_LEASE_URL, &p, 1, &rows, NULL) == 0) {
		const char *url = rows && rows->nrows == 1 ? svc_rows_get(rows, 0, LUCOL_URL) : NULL;
		int none = !rows || rows->nrows == 0;

		if (url && *url && strlen(url) < sizeof base)
			memcpy(base, url, strlen(url) + 1);
		svc_rows_free(rows);
		if (none)
			return 0; /* no room open anywhere */
	}
	if (!base[0] && cfg->wsd_internal_url && *cfg->wsd_internal_url)
		snprintf(base, sizeof base, "%s", cfg->wsd_internal_url);
	else if (!base[0])
		snprintf(base, sizeof base, "http://127.0.0.1:%u", cfg->ws_port);
	snprintf(path, sizeof path, "/internal/projects/%s/disk-changed", project_id);
	err = svc_internal_call(cfg, base, "POST", path, NULL, 0, 2000, &status, NULL);
	if (err < 0)
		svc_log_warn("svc-wsd not reached for project %s (disk change not pushed live)", project_id);
	else if (status != 202 && status != 200)
		svc_log_warn("svc-wsd answered %ld to disk-changed of project %s", status, project_id);
	return err;
}
