/* mail.c: plain-text e-mail through SMTP with libcurl (a handle of lib/core/outbound.h): message building (no header
 * injection) and sending. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <curl/curl.h>

#include "core/err.h"
#include "core/log.h"
#include "core/mail.h"
#include "core/outbound.h"

#define MAIL_MAX (256 * 1024)

/* 1 when `s` holds no CR, LF or other control byte (a header value that cannot start a new header). */
static int header_safe(const char *s)
{
	for (; s && *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return 0;
	return s != NULL;
}

/* A bare address: one '@', no spaces, angle brackets, quotes, commas or control bytes. */
static int address_ok(const char *s)
{
	const char *at = s ? strchr(s, '@') : NULL;

	if (!at || at == s || !at[1] || strchr(at + 1, '@') || strlen(s) > 254 || !header_safe(s))
		return 0;
	return strpbrk(s, " <>\",;()[]\\") == NULL;
}

int svc_mail_build(const char *from, const char *to, const char *subject, const char *body, int64_t now_ms,
		   struct svc_buf *out)
{
	char date[64], id[40];
	time_t t = (time_t)(now_ms / 1000);
	struct tm tm;
	const char *p;
	int err;

	if (!address_ok(from) || !address_ok(to) || !header_safe(subject) || !body)
		return SVC_E_VALIDATION;
	if (!gmtime_r(&t, &tm) || strftime(date, sizeof date, "%a, %d %b %Y %H:%M:%S +0000", &tm) == 0)
		return SVC_E_INTERNAL;
	if (svc_random_hex(id, 16) < 0)
		return SVC_E_INTERNAL;
	err = svc_buf_addf(out, "From: %s\r\nTo: %s\r\nSubject: %s\r\nDate: %s\r\nMessage-ID: <%s%s>\r\n"
			   "MIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\n"
			   "Content-Transfer-Encoding: 8bit\r\n\r\n",
			   from, to, subject, date, id, strchr(from, '@'));
	for (p = body; err == 0 && *p; p++) {
		if (*p == '\r' && p[1] == '\n')
			continue;
		if (*p == '\n' || *p == '\r')
			err = svc_buf_add(out, "\r\n", 2);
		else
			err = svc_buf_add(out, p, 1);
	}
	if (err == 0 && (out->len < 2 || memcmp(out->data + out->len - 2, "\r\n", 2) != 0))
		err = svc_buf_add(out, "\r\n", 2);
	return err;
}

struct reader {
	const char *data;
	size_t len, off;
};

static size_t on_read(char *ptr, size_t size, size_t nmemb, void *userdata)
{
	struct reader *r = userdata;
	size_t n = size * nmemb;

	if (n > r->len - r->off)
		n = r->len - r->off;
	memcpy(ptr, r->data + r->off, n);
	r->off += n;
	return n;
}

int svc_mail_send(const struct svc_mail_server *server, const char *to, const char *subject, const char *body)
{
	struct svc_buf msg;
	struct curl_slist *rcpt = NULL;
	struct reader rd;
	char from[300];
	CURL *c = NULL;
	CURLcode rc;
	int err;

	if (!server || !server->url || !*server->url)
		return SVC_E_UNAVAILABLE;
	svc_buf_init(&msg, MAIL_MAX);
	if ((err = svc_mail_build(server->from, to, subject, body, svc_now_ms(), &msg)) < 0)
		goto done;
	err = SVC_E_INTERNAL;
	if (snprintf(from, sizeof from, "<%s>", server->from) >= (int)sizeof from)
		goto done;
	c = svc_outbound_handle(); /* the SMTP server is the operator's setting: not address-checked */
	if (!c)
		goto done;
	rcpt = curl_slist_append(NULL, to);
	if (!rcpt)
		goto done;
	rd.data = msg.data;
	rd.len = msg.len;
	rd.off = 0;
	curl_easy_setopt(c, CURLOPT_URL, server->url);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "smtp,smtps");
	curl_easy_setopt(c, CURLOPT_TIMEOUT, 20L);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, 10L);
	curl_easy_setopt(c, CURLOPT_MAIL_FROM, from);
	curl_easy_setopt(c, CURLOPT_MAIL_RCPT, rcpt);
	curl_easy_setopt(c, CURLOPT_UPLOAD, 1L);
	curl_easy_setopt(c, CURLOPT_READFUNCTION, on_read);
	curl_easy_setopt(c, CURLOPT_READDATA, &rd);
	curl_easy_setopt(c, CURLOPT_INFILESIZE_LARGE, (curl_off_t)msg.len);
	if (strncmp(server->url, "smtp://", 7) == 0 && server->starttls)
		curl_easy_setopt(c, CURLOPT_USE_SSL, (long)CURLUSESSL_ALL);
	if (server->user && *server->user) {
		curl_easy_setopt(c, CURLOPT_USERNAME, server->user);
		curl_easy_setopt(c, CURLOPT_PASSWORD, server->password ? server->password : "");
	}
	rc = curl_easy_perform(c);
	if (rc != CURLE_OK) {
		svc_log_warn("mail: sending through SMTP failed: %s", curl_easy_strerror(rc));
		err = SVC_E_UNAVAILABLE;
		goto done;
	}
	err = 0;
done:
	curl_slist_free_all(rcpt);
	if (c)
		curl_easy_cleanup(c);
	svc_buf_dispose(&msg);
	return err;
}
