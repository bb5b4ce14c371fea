/* integ_oauth.c: integrations' per-user OAuth: the token endpoint (code and refresh grants), users' sealed tokens, and the credential a call uses. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>
#include <json-c/json.h>
#include <openssl/crypto.h>

#include "auth/crypto.h"
#include "core/err.h"
#include "core/json.h"
#include "core/log.h"
#include "core/outbound.h"
#include "core/util.h"
#include "integ/integ.h"
#include "integ/integ_oauth.h"

#define ANSWER_MAX (64 * 1024)
#define TOKEN_TIMEOUT_SECS 15L

/* The sealed columns' aad row of a connection: "<integration>:<user>" (unique per row). */
static void conn_row(const char *integration_id, const char *user_id, char *out, size_t max)
{
	snprintf(out, max, "%s:%s", integration_id, user_id);
}

int svc_integ_app_open(struct svc_db *db, const struct svc_config *cfg, const struct svc_rows *rows, size_t r,
		       struct svc_integ_app *out)
{
	const char *wid = svc_rows_get(rows, r, IACOL_WORKSPACE), *integ = svc_rows_get(rows, r, IACOL_INTEGRATION);
	char row[128];
	int err;

	memset(out, 0, sizeof *out);
	snprintf(out->id, sizeof out->id, "%s", svc_rows_get(rows, r, IACOL_ID));
	snprintf(out->client_id, sizeof out->client_id, "%s", svc_rows_get(rows, r, IACOL_CLIENT_ID));
	snprintf(row, sizeof row, "%s:%s", integ, wid ? wid : "global");
	err = svc_crypto_open_secret(db, cfg, wid, "integration_oauth_apps", "client_secret", row,
				     svc_rows_get(rows, r, IACOL_SECRET), &out->client_secret, &out->client_secret_len);
	if (err < 0)
		svc_log_error("integrations: the client secret of OAuth app %s does not open (wrong ENCRYPTION_KEY?)",
			      out->id);
	return err;
}

void svc_integ_app_dispose(struct svc_integ_app *app)
{
	svc_crypto_free_secret(app->client_secret, app->client_secret_len);
	app->client_secret = NULL;
	app->client_secret_len = 0;
}

int svc_integ_redirect_uri(const struct svc_config *cfg, char *out, size_t max)
{
	int n = snprintf(out, max, "%s/integrations/oauth/callback", cfg->base_url);
	return n < 0 || (size_t)n >= max ? SVC_E_INTERNAL : 0;
}

void svc_integ_cred_dispose(struct svc_integ_cred *cred)
{
	svc_crypto_free_secret(cred->secret, cred->secret_len);
	cred->secret = NULL;
	cred->secret_len = 0;
	cred->kind = SVC_INTEG_CRED_NONE;
}

/* Appends "&name=value" (the first without "&"), value percent-encoded. */
static int add_param(CURL *c, struct svc_buf *b, const char *name, const char *value)
{
	char *v = curl_easy_escape(c, value, 0);
	int err;

	if (!v)
		return SVC_E_INTERNAL;
	err = svc_buf_addf(b, "%s%s=%s", b->len ? "&" : "", name, v);
	OPENSSL_cleanse(v, strlen(v));
	curl_free(v);
	return err;
}

/*
 * POSTs `form` to `url` (no redirects, 15 s); the answer into `out`, the status into *status. The token
 * endpoint is the catalogue's, which the operator imports (svc-admin import-catalog): not address-checked.
 */
static int post_form(CURL *c, const char *url, const char *form, struct svc_buf *out, long *status)
{
	struct curl_slist *h = curl_slist_append(NULL, "Accept: application/json");
	struct svc_outbound_req req = {
		.url = url, .body = form, .body_len = strlen(form), .headers = h, .reach = SVC_OUTBOUND_OPERATOR,
		.connect_timeout_ms = 5000, .timeout_ms = TOKEN_TIMEOUT_SECS * 1000, .max_body = out->max,
	};
	struct svc_outbound_xfer x;
	int err;

	if ((err = svc_outbound_setup(c, &req, &x)) == 0)
		err = svc_outbound_perform(&x);
	curl_slist_free_all(h);
	if (err < 0) {
		svc_log_warn("integrations: the token endpoint %s failed: %s", url, curl_easy_strerror(x.rc));
		svc_outbound_xfer_dispose(&x);
		return SVC_E_UNAVAILABLE;
	}
	*status = x.status;
	err = svc_buf_add(out, svc_buf_str(&x.body), x.body.len) < 0 ? SVC_E_UNAVAILABLE : 0;
	svc_outbound_xfer_dispose(&x);
	return err;
}

/* Stores the token answer `o` as the user's connection, sealed. */
static int store_answer(struct svc_db *db, const struct svc_config *cfg, const char *user_id, const char *wid,
			const char *integration_id, struct json_object *o)
{
	const char *access = svc_json_str(o, "access_token"), *refresh = svc_json_str(o, "refresh_token");
	struct json_object *exp = json_object_object_get(o, "expires_in");
	char row[160], id[37], *sa = NULL, *sr = NULL;
	struct svc_dbv p[8];
	int64_t expires_in = exp ? json_object_get_int64(exp) : 0;
	int err;

	if (!access || !*access || strlen(access) > SVC_INTEG_TOKEN_MAX ||
	    (refresh && strlen(refresh) > SVC_INTEG_TOKEN_MAX))
		return SVC_E_UNAVAILABLE;
	conn_row(integration_id, user_id, row, sizeof row);
	if ((err = svc_uuid_v4(id)) < 0 ||
	    (err = svc_crypto_seal_secret(db, cfg, NULL, "integration_connections", "access_token", row, access,
					  strlen(access), &sa)) < 0 ||
	    (refresh && *refresh &&
	     (err = svc_crypto_seal_secret(db, cfg, NULL, "integration_connections", "refresh_token", row, refresh,
					   strlen(refresh), &sr)) < 0))
		goto done;
	p[0] = svc_dbv_str(id);
	p[1] = svc_dbv_str(user_id);
	p[2] = svc_dbv_str(wid);
	p[3] = svc_dbv_str(integration_id);
	p[4] = svc_dbv_str(sa);
	p[5] = svc_dbv_str(sr);
	p[6] = svc_dbv_str(svc_json_str(o, "scope"));
	p[7] = expires_in > 0 && expires_in < 10LL * 365 * 86400 ? svc_dbv_i64(expires_in) : svc_dbv_null();
	err = svc_db_run(db, STMT_INTEG_CONN_UPSERT, p, 8, NULL, NULL);
done:
	free(sa);
	free(sr);
	return err;
}

int svc_integ_token_grant(struct svc_db *db, const struct svc_config *cfg, const char *token_url,
			  const struct svc_integ_app *app, const char *user_id, const char *wid, const char *integration_id,
			  const char *code, const char *verifier, const char *refresh_token)
{
	CURL *c = svc_outbound_handle();
	struct svc_buf form, answer;
	struct json_object *o = NULL;
	char redirect[1100];
	long status = 0;
	int err;

	svc_buf_init(&form, 64 * 1024);
	svc_buf_init(&answer, ANSWER_MAX);
	if (!c)
		return SVC_E_INTERNAL;
	if ((err = svc_integ_redirect_uri(cfg, redirect, sizeof redirect)) < 0)
		goto done;
	if (code) {
		if ((err = add_param(c, &form, "grant_type", "authorization_code")) < 0 ||
		    (err = add_param(c, &form, "code", code)) < 0 ||
		    (err = add_param(c, &form, "redirect_uri", redirect)) < 0 ||
		    (err = add_param(c, &form, "code_verifier", verifier)) < 0)
			goto done;
	} else if ((err = add_param(c, &form, "grant_type", "refresh_token")) < 0 ||
		   (err = add_param(c, &form, "refresh_token", refresh_token)) < 0) {
		goto done;
	}
	if ((err = add_param(c, &form, "client_id", app->client_id)) < 0 ||
	    (err = add_param(c, &form, "client_secret", app->client_secret)) < 0)
		goto done;
	if ((err = post_form(c, token_url, svc_buf_str(&form), &answer, &status)) < 0)
		goto done;
	if (svc_json_parse_object(svc_buf_str(&answer), answer.len, &o) < 0) {
		err = SVC_E_UNAVAILABLE;
		goto done;
	}
	if (status != 200 || svc_json_str(o, "error") || !svc_json_str(o, "access_token")) {
		/* RFC 6749 section 5.2: invalid_grant, invalid_client, ... */
		svc_log_warn("integrations: the token endpoint of %s refused a %s grant (HTTP %ld, %.64s)", integration_id,
			     code ? "code" : "refresh", status, svc_json_str(o, "error") ? svc_json_str(o, "error") : "-");
		err = status >= 500 ? SVC_E_UNAVAILABLE : SVC_E_UNAUTHORIZED;
		goto done;
	}
	err = store_answer(db, cfg, user_id, wid, integration_id, o);
done:
	json_object_put(o);
	svc_buf_wipe(&form);
	svc_buf_wipe(&answer);
	curl_easy_cleanup(c);
	return err;
}

/* Refreshes the user's token through the app of `wid` (or the global one). */
static int refresh(struct svc_db *db, const struct svc_config *cfg, const char *user_id, const char *integration_id,
		   const char *wid, const struct svc_rows *conn, const struct svc_rows *def)
{
	struct svc_integ_app app;
	struct svc_rows *apps = NULL;
	struct svc_dbv p[2];
	char row[160], *rt = NULL;
	size_t rt_len = 0;
	int err;

	memset(&app, 0, sizeof app);
	if (!svc_rows_get(conn, 0, ICNCOL_REFRESH) || !svc_rows_get(def, 0, IDCOL_TOKEN_URL))
		return SVC_E_UNAUTHORIZED;
	p[0] = svc_dbv_str(integration_id);
	p[1] = svc_dbv_str(wid ? wid : "");
	if ((err = svc_db_run(db, STMT_INTEG_APP_FOR, p, 2, &apps, NULL)) < 0)
		return err;
	if (!apps || apps->nrows != 1) {
		err = SVC_E_UNAUTHORIZED;
		goto done;
	}
	conn_row(integration_id, user_id, row, sizeof row);
	if ((err = svc_integ_app_open(db, cfg, apps, 0, &app)) < 0 ||
	    (err = svc_crypto_open_secret(db, cfg, NULL, "integration_connections", "refresh_token", row,
					  svc_rows_get(conn, 0, ICNCOL_REFRESH), &rt, &rt_len)) < 0)
		goto done;
	err = svc_integ_token_grant(db, cfg, svc_rows_get(def, 0, IDCOL_TOKEN_URL), &app, user_id, wid, integration_id, NULL,
				    NULL, rt);
done:
	svc_crypto_free_secret(rt, rt_len);
	svc_integ_app_dispose(&app);
	svc_rows_free(apps);
	return err;
}

/*
 * The platform credential of the integration into `out`: kind NONE when none is stored, or when the
 * platform admin did not allow it in workspace `wid` (allowed_workspaces, NULL: all).
 */
static int platform_cred(struct svc_db *db, const struct svc_config *cfg, const char *integration_id,
			 const char *wid, struct svc_integ_cred *out)
{
	struct svc_rows *rows = NULL;
	struct svc_dbv p = svc_dbv_str(integration_id);
	const char *type;
	char row[96];
	int err;

	if ((err = svc_db_run(db, STMT_INTEG_CRED_GET, &p, 1, &rows, NULL)) < 0)
		return err;
	if (!rows || rows->nrows != 1)
		goto done;
	if (svc_rows_get(rows, 0, ICRCOL_WORKSPACES) &&
	    !(wid && *wid && svc_integ_list_has(svc_rows_get(rows, 0, ICRCOL_WORKSPACES), wid)))
		goto done;
	type = svc_rows_get(rows, 0, ICRCOL_AUTH_TYPE);
	snprintf(row, sizeof row, "%s:global", integration_id);
	if ((err = svc_crypto_open_secret(db, cfg, NULL, "integration_credentials", "value", row,
					  svc_rows_get(rows, 0, ICRCOL_VALUE), &out->secret, &out->secret_len)) < 0) {
		svc_log_error("integrations: the platform credential of %s does not open (wrong ENCRYPTION_KEY?)",
			      integration_id);
		goto done;
	}
	out->kind = strcmp(type, "basic_auth") == 0	 ? SVC_INTEG_CRED_BASIC
		    : strcmp(type, "custom_auth") == 0 ? SVC_INTEG_CRED_CUSTOM
						       : SVC_INTEG_CRED_SECRET;
	if (out->kind == SVC_INTEG_CRED_SECRET) {
		/* stored as the JSON string it was given: keep the string itself */
		struct json_object *s = NULL;
		struct json_tokener *tok = json_tokener_new();
		if (tok)
			s = json_tokener_parse_ex(tok, out->secret, (int)out->secret_len);
		json_tokener_free(tok);
		if (s && json_object_is_type(s, json_type_string)) {
			const char *v = json_object_get_string(s);
			size_t n = strlen(v);
			char *copy = malloc(n + 1);
			if (copy) {
				memcpy(copy, v, n + 1);
				svc_crypto_free_secret(out->secret, out->secret_len);
				out->secret = copy;
				out->secret_len = n;
			} else {
				err = SVC_E_INTERNAL;
			}
			OPENSSL_cleanse((void *)v, n);
		}
		json_object_put(s);
	}
done:
	svc_rows_free(rows);
	return err;
}

int svc_integ_credential(struct svc_db *db, const struct svc_config *cfg, const char *user_id,
			 const char *integration_id, const char *wid, struct svc_integ_cred *out)
{
	struct svc_rows *def = NULL, *conn = NULL;
	struct svc_dbv p[3];
	const char *left;
	uint64_t secs = 0;
	char row[160];
	int err, per_user_only, expired;

	memset(out, 0, sizeof *out);
	p[0] = svc_dbv_str(integration_id);
	if ((err = svc_db_run(db, STMT_INTEG_DEF, p, 1, &def, NULL)) < 0)
		return err;
	if (!def || def->nrows != 1) {
		err = SVC_E_NOT_FOUND;
		goto done;
	}
	per_user_only = svc_rows_get(def, 0, IDCOL_PER_USER_ONLY) && strcmp(svc_rows_get(def, 0, IDCOL_PER_USER_ONLY), "1") == 0;
	p[0] = svc_dbv_str(user_id);
	p[1] = svc_dbv_str(wid);
	p[2] = svc_dbv_str(integration_id);
	if ((err = svc_db_run(db, STMT_INTEG_CONN_GET, p, 3, &conn, NULL)) < 0)
		goto done;
	if (conn && conn->nrows == 1) {
		left = svc_rows_get(conn, 0, ICNCOL_EXPIRES_IN);
		expired = left && (left[0] == '-' || (svc_parse_u64(left, UINT64_MAX, &secs) == 0 &&
						       secs < SVC_INTEG_REFRESH_AHEAD_SECS));
		if (expired) {
			if ((err = refresh(db, cfg, user_id, integration_id, wid, conn, def)) < 0)
				goto done;
			svc_rows_free(conn);
			conn = NULL;
			if ((err = svc_db_run(db, STMT_INTEG_CONN_GET, p, 3, &conn, NULL)) < 0)
				goto done;
			if (!conn || conn->nrows != 1) {
				err = SVC_E_UNAUTHORIZED;
				goto done;
			}
		}
		conn_row(integration_id, user_id, row, sizeof row);
		if ((err = svc_crypto_open_secret(db, cfg, NULL, "integration_connections", "access_token", row,
						  svc_rows_get(conn, 0, ICNCOL_ACCESS), &out->secret, &out->secret_len)) < 0)
			goto done;
		out->kind = SVC_INTEG_CRED_USER;
		goto done;
	}
	if (!per_user_only)
		err = platform_cred(db, cfg, integration_id, wid, out);
done:
	svc_rows_free(def);
	svc_rows_free(conn);
	return err;
}
