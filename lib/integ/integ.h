/* integ.h: integrations: the catalogue's import, ids and auth types, the admin audit log, sealed platform credentials (docs/api.md "Integrations"). */
#ifndef SVC_INTEG_H
#define SVC_INTEG_H

#include <stddef.h>

#include <json-c/json.h>

#include "core/config.h"
#include "core/util.h"
#include "db/db.h"

#define SVC_INTEG_ID_MAX 64      /* bytes of an integration id (the catalogue's piece name) */
#define SVC_INTEG_BULK_MAX 50    /* ids of one bulk enablement (spec "Limits") */

/*
 * Whether `s` is an integration id as the catalogue has them: 1 to 64 bytes of
 * [a-z0-9], '-', '_' or '.', starting with a letter or digit. Returns 1 or 0.
 */
int svc_integ_id_valid(const char *s);

/*
 * Whether the comma list `list` as stored (",oauth2,secret_text,") holds `item`.
 * Returns 1 or 0; NULL `list` holds nothing.
 */
int svc_integ_list_has(const char *list, const char *item);

/*
 * Turns the stored comma list `list` (",a,b,") into a new JSON array of strings
 * (owned by the caller); NULL or "" gives [].
 */
struct json_object *svc_integ_list_json(const char *list);

/*
 * Loads the catalogue from `len` bytes of `text`, a JSON array of entries as
 * data/integrations/catalog.json holds them ({id, displayName, description,
 * logoUrl, authTypes[], oauth2: {authUrl, tokenUrl, scope[]} | null,
 * categories[]}, optionally apiHosts[] and perUserOnly), in one transaction:
 * new entries are added (disabled), known ones updated in place, enablement and
 * credentials untouched, so running it again changes nothing. An entry's API
 * hosts are its apiHosts, else the hosts of its OAuth URLs. *out_count is the
 * number of entries. Errors: SVC_E_VALIDATION (not such an array, or an entry
 * without a valid id, a displayName or authTypes; `why` (why_max bytes) says
 * which), DB errors (nothing is changed).
 */
int svc_integ_import(struct svc_db *db, const char *text, size_t len, size_t *out_count, char *why,
		     size_t why_max);

/*
 * Records an admin action in the audit log (spec "Authentication" 11): `action`
 * (e.g. "integrations.oauth_app.upsert"), the integration `resource_id`,
 * `details` (a JSON object, borrowed; serialised as it is) and the acting user.
 * Runs inside the caller's transaction when there is one. Errors: DB errors.
 */
int svc_integ_audit(struct svc_db *db, const char *action, const char *resource_id, struct json_object *details,
		    const char *actor_id);

/*
 * Writes the last four characters of `client_id` (all of it when shorter; UTF-8
 * aware) into out (max bytes, at least 17). Never more of the id.
 */
void svc_integ_client_hint(const char *client_id, char *out, size_t max);

/*
 * The host of an https:// or http:// URL into out (max bytes), lower case,
 * without port or user info. Returns 0, or SVC_E_VALIDATION when `url` has no
 * such host.
 */
int svc_integ_url_host(const char *url, char *out, size_t max);

/*
 * Appends "name=value" to `b` with `value` percent-encoded (RFC 3986 section
 * 2.1: everything but the unreserved characters). Returns 0 or
 * SVC_E_TOO_LARGE (b's maximum).
 */
int svc_integ_url_param(struct svc_buf *b, const char *name, const char *value);

#endif
