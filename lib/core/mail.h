/* mail.h: plain-text e-mail through SMTP with libcurl (password-reset messages). */
#ifndef SVC_MAIL_H
#define SVC_MAIL_H

#include <stdint.h>

#include "core/util.h"

/* Where and how to send; strings borrowed, "" when unset. */
struct svc_mail_server {
	const char *url;       /* smtp://host:port or smtps://host:port (SVC_SMTP_URL) */
	const char *user;      /* SVC_SMTP_USER; "" = no AUTH */
	const char *password;  /* SVC_SMTP_PASSWORD */
	int starttls;          /* 1: an smtp:// connection must upgrade with STARTTLS (CURLUSESSL_ALL) */
	const char *from;      /* envelope and header sender, a bare address */
};

/*
 * Builds an RFC 5322 message into `out` (an initialised svc_buf): From, To,
 * Subject, Date (from `now_ms`), Message-ID (random, @ the sender's domain),
 * MIME-Version, Content-Type text/plain; charset=utf-8,
 * Content-Transfer-Encoding 8bit, then `body` with every line ending turned
 * into CRLF (libcurl does the dot-stuffing of RFC 5321 §4.5.2 when it
 * sends). `from` and `to` must be bare
 * addresses and `subject` plain text: any CR, LF or NUL in them (header
 * injection) is refused. Returns 0, SVC_E_VALIDATION, SVC_E_TOO_LARGE or
 * SVC_E_INTERNAL. RFC 5322 §3.6, RFC 2045.
 */
int svc_mail_build(const char *from, const char *to, const char *subject, const char *body, int64_t now_ms,
		   struct svc_buf *out);

/*
 * Sends one message to `to` through `server` with libcurl's SMTP (MAIL FROM,
 * RCPT TO, DATA), 20 s timeout. Errors: SVC_E_VALIDATION (see
 * svc_mail_build), SVC_E_UNAVAILABLE (no server configured, connection or
 * SMTP failure; logged without the message), SVC_E_INTERNAL.
 */
int svc_mail_send(const struct svc_mail_server *server, const char *to, const char *subject, const char *body);

#endif
