/* app_files.h: an app's files under /_svc/files (svc-app), their bytes in MariaDB, under the rules of svc.data.json's "files" block (docs/app-backend.md "Files"). */
#ifndef SVC_APP_FILES_H
#define SVC_APP_FILES_H

#include <stddef.h>

#include "app/app.h"

#define SVC_APP_FILE_CHUNK (256u * 1024)            /* bytes of one row of app_file_chunks */
#define SVC_APP_FILE_TYPE_MAX 127                   /* bytes of a file's Content-Type */

/*
 * Handlers of svc-app (cgi-bin/svc-app.c), as docs/api.md "The apps'
 * backend" gives them; besides the router's answers and those of
 * svc_app_site_open():
 *   upload: POST /_svc/files, the body the file's bytes (1 byte to
 *           SVC_APP_FILE_MAX_MB MiB), its Content-Type kept (none:
 *           application/octet-stream): 201 {id, url}; 400 validation_failed
 *           (field "body": empty; "Content-Type": not type/subtype[; params]
 *           of printable ASCII, at most 127 bytes); 401, 403 under the rule
 *           "files.rules.create"; 413 over SVC_APP_FILE_MAX_MB or past
 *           SVC_APP_MAX_FILE_BYTES (nothing written). One svc_db_tx(): the
 *           file's row, its chunks and the usage, or nothing.
 *   get:    GET /_svc/files/:id: 200 the bytes with their Content-Type,
 *           Content-Disposition: attachment unless a raster image (SVG is
 *           an attachment), a sandboxing Content-Security-Policy, nosniff,
 *           a strong ETag (its SHA-256), Last-Modified (its upload) and
 *           Cache-Control public or private by the rule, no-cache; 304 with
 *           no body on If-None-Match / If-Modified-Since (RFC 9110 §13.2.2,
 *           §15.4.5), asked only once the rule let the caller get it; 401;
 *           403; 404 (also a file the caller may not get).
 *   delete: DELETE /_svc/files/:id: 204; 401; 403; 404.
 */
enum svc_err svc_app_files_upload(struct svc_req *req, struct svc_resp *resp);
enum svc_err svc_app_files_get(struct svc_req *req, struct svc_resp *resp);
enum svc_err svc_app_files_delete(struct svc_req *req, struct svc_resp *resp);

/*
 * Inside the transaction of a record's write (lib/app/app_data.c): every
 * field of `obj` (the body given, a JSON object) that collection `c`
 * declares of type file and that is not null must name a file of site
 * `s`'s project and environment (the row is share-locked until the write
 * commits, so it cannot be deleted under it). Returns 0, or
 * SVC_E_VALIDATION with *out_field the field (borrowed from `obj`) and a
 * message in msg (max bytes), or DB errors.
 */
int svc_app_files_refs(struct svc_db *db, const struct svc_app_site *s, const struct svc_app_collection *c,
		       struct json_object *obj, const char **out_field, char *msg, size_t max);

/*
 * Inside the transaction that deletes end user `user_id` of project
 * `project_id`'s environment `env` ("test", "live"; lib/api/api_backend.c):
 * deletes the files they uploaded (their chunks go with them) and takes
 * them out of app_usage. Returns 0 or DB errors.
 */
int svc_app_files_user_clear(struct svc_db *db, const char *project_id, const char *env, const char *user_id);

/*
 * The builders' summary (GET /api/projects/:id/backend) of project
 * `project_id`'s files: adds "files" and "fileBytes" to body.usage.test and
 * body.usage.live (objects that must be there already), and "fileBytes"
 * (SVC_APP_MAX_FILE_BYTES, 0: no limit) and "fileMaxBytes" (one upload's
 * cap) to body.quotas, from `cfg`. Returns 0 or DB errors.
 */
int svc_app_files_summary(struct svc_db *db, const struct svc_config *cfg, const char *project_id,
			  struct json_object *body);

#endif
