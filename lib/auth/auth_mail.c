/* auth_mail.c: the svc-worker jobs that mail a password-reset link and a sign-up's link (SVC_JOB_RESET_MAIL, SVC_JOB_SIGNUP_MAIL). */
#include <stdio.h>
#include <string.h>

#include <json-c/json.h>
#include <openssl/crypto.h>

#include "auth/auth.h"
#include "core/config.h"
#include "core/err.h"
#include "core/json.h"
#include "core/log.h"
#include "core/mail.h"
#include "core/util.h"
#include "db/db.h"
#include "db/jobs.h"

/* The sender address of svc's messages: SVC_MAIL_FROM, else svc@<SVC_DOMAIN>. */
static void mail_from(const struct svc_auth_job_ctx *ctx, char *out, size_t size)
{
	if (ctx->auth->mail_from[0])
		snprintf(out, size, "%s", ctx->auth->mail_from);
	else
		snprintf(out, size, "svc@%s", ctx->cfg->domain);
}

/* A mailed link's token: SVC_AUTH_LINK_TOKEN_BYTES random bytes as lowercase hex into `token` (2 *
 * SVC_AUTH_LINK_TOKEN_BYTES + 1 bytes) and its SHA-256, the only form stored, into `hash` (65 bytes).
 * Returns 0 or SVC_E_INTERNAL. */
static int new_link_token(char *token, char *hash)
{
	if (svc_random_hex(token, SVC_AUTH_LINK_TOKEN_BYTES) < 0 || svc_sha256_hex(token, strlen(token), hash) < 0)
		return SVC_E_INTERNAL;
	return 0;
}

/* Sends one plain-text message to `to` through SVC_SMTP_URL (svc_mail_send). Returns 0 or its error. */
static int send_mail(const struct svc_auth_job_ctx *ctx, const char *to, const char *subject, const char *body)
{
	const struct svc_auth_config *a = ctx->auth;
	struct svc_mail_server server;
	char from[300];

	mail_from(ctx, from, sizeof from);
	server.url = a->smtp_url;
	server.user = a->smtp_user;
	server.password = a->smtp_password;
	server.starttls = a->smtp_starttls;
	server.from = from;
	return svc_mail_send(&server, to, subject, body);
}

/*
 * The reset link's work, all of it on svc-worker (SVC_JOB_RESET_MAIL): the request only queues the
 * job, the same one for every address, so known and unknown addresses get the same answer after
 * the same work (review finding 13 of issue 17). Here: the account is looked up; without one,
 * nothing happens; with one, a token is stored (its hash) and the link is mailed.
 */
int svc_auth_job_reset_mail(void *vctx, const struct svc_job *job, char *errmsg, size_t errmax)
{
	const struct svc_auth_job_ctx *ctx = vctx;
	const struct svc_auth_config *a = ctx->auth;
	struct json_object *payload = NULL;
	struct svc_rows *rows = NULL;
	struct svc_dbv p[3];
	char token[2 * SVC_AUTH_LINK_TOKEN_BYTES + 1], hash[65], body[2048];
	const char *email;
	int err = 0, n;

	if (svc_json_parse_object(job->payload, strlen(job->payload), &payload) < 0 ||
	    !(email = svc_json_str(payload, "email"))) {
		snprintf(errmsg, errmax, "the payload has no email");
		err = SVC_E_VALIDATION;
		goto done;
	}
	svc_db_run(ctx->db, STMT_RESET_PURGE, NULL, 0, NULL, NULL);
	p[0] = svc_dbv_str(email);
	if ((err = svc_db_run(ctx->db, STMT_USER_BY_EMAIL, p, 1, &rows, NULL)) < 0 || !rows || rows->nrows != 1)
		goto done;
	if (!a->smtp_url[0]) {
		svc_log_warn("mail: SVC_SMTP_URL is not set; a password-reset message was not sent");
		goto done;
	}
	if ((err = new_link_token(token, hash)) < 0)
		goto done;
	p[0] = svc_dbv_str(hash);
	p[1] = svc_dbv_str(svc_rows_get(rows, 0, UECOL_ID));
	p[2] = svc_dbv_i64(a->reset_ttl_secs);
	if ((err = svc_db_run(ctx->db, STMT_RESET_INSERT, p, 3, NULL, NULL)) < 0)
		goto done;
	n = snprintf(body, sizeof body,
		     "Someone asked to reset the password of the svc account %s.\n\n"
		     "To choose a new password, open this link within %lld minutes:\n\n%s/reset-password?token=%s\n\n"
		     "The link works once. If you did not ask for this, ignore this message:\n"
		     "your password stays as it is.\n",
		     svc_rows_get(rows, 0, UECOL_EMAIL), (long long)(a->reset_ttl_secs / 60), ctx->cfg->app_url, token);
	if (n < 0 || (size_t)n >= sizeof body) {
		err = SVC_E_INTERNAL;
		goto done;
	}
	if ((err = send_mail(ctx, svc_rows_get(rows, 0, UECOL_EMAIL), "Reset your svc password", body)) < 0)
		snprintf(errmsg, errmax, "the password-reset message was not sent");
done:
	OPENSSL_cleanse(body, sizeof body);
	OPENSSL_cleanse(token, sizeof token);
	svc_rows_free(rows);
	json_object_put(payload);
	return err;
}

/*
 * A sign-up's message, on svc-worker (SVC_JOB_SIGNUP_MAIL; docs/api.md "POST /auth/signup"). The
 * pending sign-up `pending` is looked up (gone or expired: nothing); when an account already has its
 * address, the row is dropped and the owner is told that someone tried to sign up with it (no link:
 * nothing can be claimed); else a token is stored (its SHA-256) and the link is mailed.
 */
int svc_auth_job_signup_mail(void *vctx, const struct svc_job *job, char *errmsg, size_t errmax)
{
	const struct svc_auth_job_ctx *ctx = vctx;
	const struct svc_auth_config *a = ctx->auth;
	struct json_object *payload = NULL;
	struct svc_rows *pend = NULL, *user = NULL;
	struct svc_dbv p[2];
	char token[2 * SVC_AUTH_LINK_TOKEN_BYTES + 1], hash[65], body[2048], email[256];
	const char *id, *subject;
	int err = 0, n;

	if (svc_json_parse_object(job->payload, strlen(job->payload), &payload) < 0 ||
	    !(id = svc_json_str(payload, "pending"))) {
		snprintf(errmsg, errmax, "the payload has no pending sign-up");
		err = SVC_E_VALIDATION;
		goto done;
	}
	svc_db_run(ctx->db, STMT_SIGNUP_PURGE, NULL, 0, NULL, NULL);
	p[0] = svc_dbv_str(id);
	if ((err = svc_db_run(ctx->db, STMT_SIGNUP_GET, p, 1, &pend, NULL)) < 0 || !pend || pend->nrows != 1)
		goto done;
	snprintf(email, sizeof email, "%s", svc_rows_get(pend, 0, SPCOL_EMAIL));
	p[0] = svc_dbv_str(email);
	if ((err = svc_db_run(ctx->db, STMT_USER_BY_EMAIL, p, 1, &user, NULL)) < 0)
		goto done;
	if (user && user->nrows == 1) {
		p[0] = svc_dbv_str(id);
		if ((err = svc_db_run(ctx->db, STMT_SIGNUP_DELETE, p, 1, NULL, NULL)) < 0)
			goto done;
		subject = "Someone tried to sign up with your address";
		n = snprintf(body, sizeof body,
			     "Someone tried to create a new svc account with %s, which already has an account.\n\n"
			     "No account was created and nothing changed. If it was you, sign in at %s/login\n"
			     "(or choose a new password at %s/forgot). If it was not, you can ignore this message.\n",
			     email, ctx->cfg->app_url, ctx->cfg->app_url);
	} else {
		if ((err = new_link_token(token, hash)) < 0)
			goto done;
		p[0] = svc_dbv_str(hash);
		p[1] = svc_dbv_str(id);
		if ((err = svc_db_run(ctx->db, STMT_SIGNUP_SET_TOKEN, p, 2, NULL, NULL)) < 0)
			goto done;
		subject = "Confirm your svc account";
		n = snprintf(body, sizeof body,
			     "Someone (we hope you) asked to create an svc account with %s.\n\n"
			     "To confirm the address and finish the sign-up, open this link within %lld hours:\n\n"
			     "%s/verify?token=%s\n\n"
			     "The link works once. If you did not sign up, ignore this message: no account is created,\n"
			     "and do not open the link (it would create the account with the password that was given).\n",
			     email, (long long)(a->signup_verify_ttl_secs / 3600), ctx->cfg->app_url, token);
	}
	if (n < 0 || (size_t)n >= sizeof body) {
		err = SVC_E_INTERNAL;
		goto done;
	}
	if ((err = send_mail(ctx, email, subject, body)) < 0)
		snprintf(errmsg, errmax, "the sign-up message was not sent");
done:
	OPENSSL_cleanse(body, sizeof body);
	OPENSSL_cleanse(token, sizeof token);
	svc_rows_free(pend);
	svc_rows_free(user);
	json_object_put(payload);
	return err;
}
