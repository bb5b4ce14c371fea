/* app.h: the backend of the apps svc builds, served by svc-app under /_svc/ on each site's own origin (docs/app-backend.md). */
#ifndef SVC_APP_H
#define SVC_APP_H

#include <stddef.h>

#include "http/http.h"
#include "project/app_decl.h"

#define SVC_APP_SESSION_SECS (30 * 86400) /* an end user's session lasts this long */
#define SVC_APP_CLIENT_HEADER "X-Svc-Client" /* client.js sends it on every call */

/* The site a request of svc-app is for, and who calls (svc_app_site_open). */
struct svc_app_site {
	char project_id[37];
	const char *env;              /* "test" (the preview origin) or "live" (a published site, a custom domain) */
	char dir[2048];               /* the project's working tree (its svc.data.json) */
	char user_id[37];             /* the signed-in end user of this site, "" when signed out */
	char user_email[256];
	char user_created[32];        /* DB timestamp text */
	char session_sha[65];         /* SHA-256 of the session token presented, "" when none */
};

/*
 * Finds the site of `req` from its Host: "<token>.preview.<SVC_DOMAIN>"
 * (the token checked by lib/auth/preview.h: environment test),
 * "<slug>.<SVC_DOMAIN>" of a published project, or an active custom domain
 * of one (environment live); then, for POST, PUT, PATCH and DELETE, that the
 * request comes from the site itself: an Origin equal to the site's origin
 * (app_url's scheme, the Host), or no Origin and the X-Svc-Client header;
 * then the end user of the svc_app_session cookie, when it names a session
 * of this site (project and environment) that has not expired. svc's own
 * cookies and tokens are never read. Fills *out. Returns 0; SVC_E_NOT_FOUND
 * when the Host is no site (or its project is deleted or not published);
 * SVC_E_FORBIDDEN (with a message in resp) for a cross-site unsafe request;
 * DB errors.
 */
int svc_app_site_open(struct svc_req *req, struct svc_resp *resp, struct svc_app_site *out);

/*
 * Handlers of svc-app (cgi-bin/svc-app.c), each as docs/app-backend.md and
 * docs/api.md "The apps' backend" give it; besides the router's answers and
 * those of svc_app_site_open():
 *   client:  GET /_svc/client.js, 200 the ES module.
 *   signup:  POST /_svc/auth/signup {email, password} 201 {user} and the session cookie; 400, 409 taken, 429.
 *   login:   POST /_svc/auth/login {email, password} 200 {user} and the cookie; 401 wrong pair, 429 (rate limit,
 *            lock-out as svc's own sign-in).
 *   logout:  POST /_svc/auth/logout 204, the cookie cleared.
 *   me:      GET /_svc/auth/me 200 {user}; 401.
 *   list:    GET /_svc/data/:collection 200 {items, nextCursor} (sort createdAt, id or a declared index, "-" for
 *            descending; the cursor carries the sort key); 400 filter, sort, limit, cursor; 401; 403; 404.
 *   create:  POST /_svc/data/:collection 201 record; 400 validation_failed (field); 401; 403; 404.
 *   get, update, delete: GET, PATCH (200 record), DELETE (204) /_svc/data/:collection/:id; 400; 401; 403;
 *            404 (also a record the caller may not get).
 */
enum svc_err svc_app_client(struct svc_req *req, struct svc_resp *resp);
enum svc_err svc_app_signup(struct svc_req *req, struct svc_resp *resp);
enum svc_err svc_app_login(struct svc_req *req, struct svc_resp *resp);
enum svc_err svc_app_logout(struct svc_req *req, struct svc_resp *resp);
enum svc_err svc_app_me(struct svc_req *req, struct svc_resp *resp);
enum svc_err svc_app_data_list(struct svc_req *req, struct svc_resp *resp);
enum svc_err svc_app_data_create(struct svc_req *req, struct svc_resp *resp);
enum svc_err svc_app_data_get(struct svc_req *req, struct svc_resp *resp);
enum svc_err svc_app_data_update(struct svc_req *req, struct svc_resp *resp);
enum svc_err svc_app_data_delete(struct svc_req *req, struct svc_resp *resp);

/*
 * A page of collection `collection`'s records in environment `env` ("test",
 * "live") of project `project_id`, every owner's, oldest first, as builders
 * see them (lib/api/api_backend.c): `limit` (1 to 100) records after
 * `cursor` (a nextCursor of such a page, or NULL). Sets *out to {items,
 * nextCursor} (the caller's) and returns 0, SVC_E_VALIDATION for a bad
 * cursor, or DB errors.
 */
int svc_app_records_page(struct svc_db *db, const char *project_id, const char *env, const char *collection,
			 const char *cursor, uint64_t limit, struct json_object **out);

/* A record as JSON, {...fields, id, owner, createdAt, updatedAt}, from row `r` of `rows` whose first columns are
 * ARCOL_* (db_stmts_app.h APP_RECORD_COLS). Returns a new object the caller owns (NULL when out of memory). */
struct json_object *svc_app_record_json(const struct svc_rows *rows, size_t r);

/* One builder's operation on one record (svc_app_record_admin). */
struct svc_app_admin_op {
	const char *project_id, *env;       /* env "test" or "live" */
	const char *dir;                    /* the project's working tree (its svc.data.json) */
	const char *collection, *id;        /* the record's */
	enum svc_app_op op;                 /* SVC_APP_GET, SVC_APP_UPDATE or SVC_APP_DELETE */
	struct json_object *body;           /* SVC_APP_UPDATE: the fields to change (null removes one), borrowed */
	struct json_object *record;         /* out: GET, UPDATE: the record as stored (svc_app_record_json), the caller's */
	char field[SVC_APP_NAME_MAX + 1];   /* out: the field of a validation error, "" for none */
	char msg[300];                      /* out: the message of an error */
};

/*
 * A builder's read or fix of one record through svc (lib/api/api_backend.c),
 * whatever the site's rules: GET reads it; UPDATE applies a->body exactly as
 * svc-app's PATCH does (svc_app_record_check against the declaration in
 * force, required fields kept, declared indexes rewritten, app_usage moved
 * under the quotas of `cfg`), DELETE removes it with its index rows and
 * counts; each write in one svc_db_tx(). The record keeps its owner.
 * Returns 0 (a->record set for GET and UPDATE); SVC_E_NOT_FOUND (no such
 * collection declared, no such record: a->msg); SVC_E_VALIDATION (a->field,
 * a->msg); SVC_E_TOO_LARGE past a quota (a->msg names the setting); DB errors.
 */
int svc_app_record_admin(struct svc_db *db, const struct svc_config *cfg, struct svc_app_admin_op *a);
/*
 * appfetch (lib/app/app_fetch.c): POST /_svc/fetch/:name {method?, path?, query?, body?}: the call `name` of
 * svc.data.json's "fetch" made by the server (its headers' {{secrets.NAME}} put in, the path kept under its URL,
 * through the outbound guard, bounded by SVC_APP_FETCH_TIMEOUT_MS and _MAX_BYTES, no redirect followed):
 * 200 {status, headers (a safe list), body[, bodyEncoding]} with every secret's value scrubbed; 400 method, path,
 * query; 401 and 403 (its rule); 403 a refused address or http:// without SVC_APP_FETCH_ALLOW_HTTP; 404 no such
 * call; 413 the answer over the cap; 503 a secret not set, a timeout, a failed connection.
 */
enum svc_err svc_app_fetch(struct svc_req *req, struct svc_resp *resp);
extern const struct svc_body svc_app_fetch_body;

/* The body fields of signup and login ({email, password}). */
extern const struct svc_body svc_app_credentials_body;

/* lib/app internal: writes Set-Cookie svc_app_session (host-only, HttpOnly, SameSite=Lax, Secure when app_url
 * is https; on a preview host, when app_url is https or SVC_DOMAIN is localhost, SameSite=None; Secure;
 * Partitioned instead, so that it works in the editor's preview frame: docs/security.md "The preview frame") with
 * `token` for SVC_APP_SESSION_SECS, or clearing it when token is NULL. Returns 0 or SVC_E_INTERNAL. */
int svc_app__cookie(struct svc_req *req, struct svc_resp *resp, const char *token);

/*
 * lib/app internal, inside the transaction of a write: moves what site `s`
 * holds by `records`, `bytes` (of fields' JSON) and `users` (each may be
 * negative), refusing an increase past SVC_APP_MAX_RECORDS, _BYTES or _USERS
 * of `cfg` (0: no limit) with SVC_E_TOO_LARGE and a message naming the
 * setting in msg (max bytes). Locks the site's row of app_usage. Returns 0,
 * SVC_E_TOO_LARGE or DB errors.
 */
int svc_app__usage(struct svc_db *db, const struct svc_config *cfg, const struct svc_app_site *s, int64_t records,
		   int64_t bytes, int64_t users, char *msg, size_t max);

#endif
