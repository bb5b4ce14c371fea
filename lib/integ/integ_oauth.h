/* integ_oauth.h: integrations' per-user OAuth: the token endpoint (code and refresh grants), users' sealed tokens, and the credential a call uses (docs/api.md "Integrations"). */
#ifndef SVC_INTEG_OAUTH_H
#define SVC_INTEG_OAUTH_H

#include <stddef.h>
#include <stdint.h>

#include "core/config.h"
#include "db/db.h"

#define SVC_INTEG_REFRESH_AHEAD_SECS 60   /* a token this close to its expiry is refreshed first */
#define SVC_INTEG_TOKEN_MAX 8192          /* bytes of an access or refresh token */

/*
 * An OAuth app opened for use: the row of STMT_INTEG_APP_* with its client
 * secret opened. Filled by svc_integ_app_open(), emptied by
 * svc_integ_app_dispose() (which cleanses the secret).
 */
struct svc_integ_app {
	char id[37];
	char client_id[513];
	char *client_secret;      /* malloc'd, NUL-terminated */
	size_t client_secret_len;
};

/*
 * Opens the OAuth app in row `r` of `rows` (IACOL_* columns, as
 * STMT_INTEG_APP_GET and STMT_INTEG_APP_FOR return them) into `out`.
 * Errors: svc_crypto_open_secret()'s (SVC_E_UNAVAILABLE without the key,
 * SVC_E_VALIDATION when the sealed value does not open: a wrong key fails
 * closed).
 */
int svc_integ_app_open(struct svc_db *db, const struct svc_config *cfg, const struct svc_rows *rows, size_t r,
		       struct svc_integ_app *out);

/* Cleanses and frees what svc_integ_app_open() filled; safe on a zeroed struct. */
void svc_integ_app_dispose(struct svc_integ_app *app);

/*
 * The redirect address of integration OAuth apps, "{base_url}/integrations/oauth/callback"
 * (spec "Integration admin endpoints"), into out (max bytes). Returns 0 or SVC_E_INTERNAL.
 */
int svc_integ_redirect_uri(const struct svc_config *cfg, char *out, size_t max);

/*
 * Calls the token endpoint `token_url` of an integration (RFC 6749 section
 * 4.1.3 with `code` and `verifier` (RFC 7636), or section 6 with
 * `refresh_token` when code is NULL) with the app's client credentials in the
 * form, and stores the answer sealed as user `user_id`'s connection to
 * `integration_id` in workspace `wid` (a new refresh token replaces the old;
 * without one the old is kept). 15 s at most. Errors: SVC_E_UNAUTHORIZED (the provider refused
 * the grant: 4xx or an "error"), SVC_E_UNAVAILABLE (unreachable, 5xx, not
 * JSON, no access_token), DB and sealing errors.
 */
int svc_integ_token_grant(struct svc_db *db, const struct svc_config *cfg, const char *token_url,
			  const struct svc_integ_app *app, const char *user_id, const char *wid, const char *integration_id,
			  const char *code, const char *verifier, const char *refresh_token);

/* What authenticates a call to an integration (svc_integ_credential()). */
struct svc_integ_cred {
	enum {
		SVC_INTEG_CRED_NONE = 0,   /* nothing (the integration needs none, or none is stored) */
		SVC_INTEG_CRED_USER,       /* the user's own OAuth access token: `secret` */
		SVC_INTEG_CRED_SECRET,     /* the platform's secret_text: `secret` */
		SVC_INTEG_CRED_BASIC,      /* the platform's basic_auth: `secret` is the JSON {username, password} */
		SVC_INTEG_CRED_CUSTOM,     /* the platform's custom_auth: `secret` is the JSON object */
	} kind;
	char *secret;                  /* malloc'd, NUL-terminated; cleansed by svc_integ_cred_dispose() */
	size_t secret_len;
};

/*
 * Resolves the credential user `user_id` calls integration `integration_id`
 * with from workspace `wid` (issue 25 item 5): their own connection made for
 * `wid` and no other (refreshed first, through the app of `wid` or the global
 * one, when it expires within SVC_INTEG_REFRESH_AHEAD_SECS), else the
 * platform credential when the platform admin allowed it in `wid` and the
 * integration is not per-user only, else kind NONE. `out` is zeroed first. Errors: SVC_E_UNAUTHORIZED (the user's token has
 * expired and could not be refreshed), sealing and DB errors.
 */
int svc_integ_credential(struct svc_db *db, const struct svc_config *cfg, const char *user_id,
			 const char *integration_id, const char *wid, struct svc_integ_cred *out);

/* Cleanses and frees `cred`'s secret; safe on a zeroed struct. */
void svc_integ_cred_dispose(struct svc_integ_cred *cred);

#endif
