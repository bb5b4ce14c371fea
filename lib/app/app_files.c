/* app_files.c: an app's files under /_svc/files, their bytes in MariaDB chunks, under svc.data.json's "files" rules (app_files.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/app_files.h"
#include "core/err.h"
#include "core/json.h"
#include "core/log.h"
#include "core/util.h"

#define MIB (1024u * 1024)
#define DEFAULT_TYPE "application/octet-stream"
#define URL_PREFIX "/_svc/files/"
/* what a file is served under: nothing of it runs, even opened as a page of the site's origin */
#define FILE_CSP "sandbox; default-src 'none'; img-src 'self' data:; style-src 'unsafe-inline'; frame-ancestors 'none'"

/* The raster image types served inline; everything else (SVG, which runs script, HTML, PDF...) is an attachment. */
static const char *const inline_types[] = {
	"image/png", "image/jpeg", "image/gif", "image/webp", "image/avif", "image/bmp", "image/apng",
	"image/x-icon", "image/vnd.microsoft.icon",
};

/* 1 when `c` may be in a type or subtype name (RFC 6838 §4.2 restricted-name-chars). */
static int name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || strchr("!#$&-^_.+", c);
}

/*
 * The Content-Type `h` of an upload (NULL: none) as it is kept, into out (SVC_APP_FILE_TYPE_MAX + 1 bytes):
 * "type/subtype" lower-cased, then whatever parameters follow ("; charset=utf-8"), printable ASCII only
 * (so it can never split a header). Returns 0 or SVC_E_VALIDATION.
 */
static int content_type(const char *h, char *out)
{
	size_t i, n, slash = 0;

	if (!h || !*h)
		h = DEFAULT_TYPE;
	n = strlen(h);
	if (n > SVC_APP_FILE_TYPE_MAX)
		return SVC_E_VALIDATION;
	for (i = 0; i < n && h[i] != ';' && h[i] != ' ' && h[i] != '\t'; i++) {
		if (h[i] == '/' && !slash && i > 0)
			slash = i;
		else if (!name_char(h[i]))
			return SVC_E_VALIDATION;
		out[i] = (char)(h[i] >= 'A' && h[i] <= 'Z' ? h[i] - 'A' + 'a' : h[i]);
	}
	if (!slash || slash + 1 == i)
		return SVC_E_VALIDATION;
	for (; i < n; i++) {
		if ((unsigned char)h[i] < 0x20 || (unsigned char)h[i] > 0x7e)
			return SVC_E_VALIDATION;
		out[i] = h[i];
	}
	out[n] = '\0';
	return 0;
}

/* 1 when a file of type `type` (as content_type() keeps it) is shown inline: a raster image. */
static int shown_inline(const char *type)
{
	size_t n = strcspn(type, "; \t"), i;

	for (i = 0; i < sizeof inline_types / sizeof inline_types[0]; i++)
		if (strlen(inline_types[i]) == n && strncmp(type, inline_types[i], n) == 0)
			return 1;
	return 0;
}

/* The rule of files' operation `op` for the site of `req`: its site into *s, then the rule into *out. */
static int files_open(struct svc_req *req, struct svc_resp *resp, enum svc_app_op op, struct svc_app_site *s,
		      enum svc_app_rule *out)
{
	struct svc_app_decl *decl = NULL;
	int err;

	if ((err = svc_app_site_open(req, resp, s)) < 0 ||
	    (err = svc_app_decl_load(req->ctx->db, s->project_id, s->dir, &decl)) < 0)
		return err;
	*out = svc_app_decl_file_rule(decl, op);
	svc_app_decl_free(decl);
	return 0;
}

/* A refusal of a rule: 401, 403, 404 with their messages. */
static int refused(struct svc_resp *resp, int err)
{
	if (err == SVC_E_UNAUTHORIZED)
		return svc_resp_error(resp, err, NULL, "Sign in to do this.");
	if (err == SVC_E_FORBIDDEN)
		return svc_resp_error(resp, err, NULL, "Nobody may do this on the site (rule none).");
	if (err == SVC_E_NOT_FOUND)
		return svc_resp_error(resp, err, NULL, "No such file.");
	return err;
}

/* Inside a write's transaction: moves what site `s`'s files hold by `files` and `bytes`, refusing growth past
 * SVC_APP_MAX_FILE_BYTES with SVC_E_TOO_LARGE and a message naming it in msg (max bytes). */
static int file_usage(struct svc_db *db, const struct svc_config *cfg, const char *project_id, const char *env,
		      int64_t files, int64_t bytes, char *msg, size_t max)
{
	struct svc_rows *rows = NULL;
	struct svc_dbv p[4];
	uint64_t now = 0;
	int err;

	p[0] = svc_dbv_str(project_id);
	p[1] = svc_dbv_str(env);
	if ((err = svc_db_run(db, STMT_APP_USAGE_ENSURE, p, 2, NULL, NULL)) < 0 ||
	    (err = svc_db_run(db, STMT_APP_FILE_USAGE_LOCK, p, 2, &rows, NULL)) < 0)
		return err;
	if (rows && rows->nrows == 1)
		svc_parse_u64(svc_rows_get(rows, 0, AFUCOL_BYTES), UINT64_MAX, &now);
	svc_rows_free(rows);
	if (bytes > 0 && cfg->app_max_file_bytes && now + (uint64_t)bytes > cfg->app_max_file_bytes) {
		snprintf(msg, max, "This app's %s backend holds its maximum of %llu bytes of files (SVC_APP_MAX_FILE_BYTES).",
			 env, (unsigned long long)cfg->app_max_file_bytes);
		return SVC_E_TOO_LARGE;
	}
	p[0] = svc_dbv_i64(files);
	p[1] = svc_dbv_i64(bytes);
	p[2] = svc_dbv_str(project_id);
	p[3] = svc_dbv_str(env);
	return svc_db_run(db, STMT_APP_FILE_USAGE_MOVE, p, 4, NULL, NULL);
}

/* ---- upload ---- */

struct upload {
	const struct svc_config *cfg;
	const struct svc_app_site *s;
	const char *id, *type, *data;
	size_t len;
	char sha[SVC_SHA256_HEX_LEN + 1];
	char msg[256]; /* out: a quota's message */
};

static int upload_tx(struct svc_db *db, void *arg)
{
	struct upload *u = arg;
	size_t chunks = (u->len + SVC_APP_FILE_CHUNK - 1) / SVC_APP_FILE_CHUNK, i;
	struct svc_dbv p[8];
	int err;

	if ((err = file_usage(db, u->cfg, u->s->project_id, u->s->env, 1, (int64_t)u->len, u->msg, sizeof u->msg)) < 0)
		return err;
	p[0] = svc_dbv_str(u->s->project_id);
	p[1] = svc_dbv_str(u->s->env);
	p[2] = svc_dbv_str(u->id);
	p[3] = u->s->user_id[0] ? svc_dbv_str(u->s->user_id) : svc_dbv_null();
	p[4] = svc_dbv_str(u->type);
	p[5] = svc_dbv_i64((int64_t)u->len);
	p[6] = svc_dbv_i64((int64_t)chunks);
	p[7] = svc_dbv_str(u->sha);
	if ((err = svc_db_run(db, STMT_APP_FILE_INSERT, p, 8, NULL, NULL)) < 0)
		return err;
	for (i = 0; i < chunks; i++) {
		size_t off = i * SVC_APP_FILE_CHUNK, n = u->len - off < SVC_APP_FILE_CHUNK ? u->len - off : SVC_APP_FILE_CHUNK;
		p[3] = svc_dbv_i64((int64_t)i);
		p[4] = (struct svc_dbv){ SVC_DBV_STR, u->data + off, n, 0 };
		if ((err = svc_db_run(db, STMT_APP_FILE_CHUNK_INSERT, p, 5, NULL, NULL)) < 0)
			return err;
	}
	return 0;
}

enum svc_err svc_app_files_upload(struct svc_req *req, struct svc_resp *resp)
{
	struct svc_app_site site;
	enum svc_app_rule rule;
	char id[37], type[SVC_APP_FILE_TYPE_MAX + 1], url[64];
	struct upload u = { .cfg = &req->ctx->cfg, .s = &site, .id = id, .type = type };
	struct json_object *body;
	uint64_t cap = (uint64_t)req->ctx->cfg.app_file_max_mb * MIB;
	int err;

	if ((err = files_open(req, resp, SVC_APP_CREATE, &site, &rule)) < 0)
		return err;
	if ((err = svc_app_rule_check(rule, site.user_id, NULL)) < 0)
		return refused(resp, err);
	if (req->body_len > cap)
		return svc_resp_error(resp, SVC_E_TOO_LARGE, NULL, "A file is at most %u MiB (SVC_APP_FILE_MAX_MB).",
				      req->ctx->cfg.app_file_max_mb);
	if (!req->body || req->body_len == 0)
		return svc_resp_error(resp, SVC_E_VALIDATION, "body", "The body is the file's bytes: it is empty.");
	if (content_type(svc_req_header(req, "Content-Type"), type) < 0)
		return svc_resp_error(resp, SVC_E_VALIDATION, "Content-Type",
				      "Content-Type is type/subtype[; parameters], printable ASCII, at most %d bytes.",
				      SVC_APP_FILE_TYPE_MAX);
	if ((err = svc_uuid_v4(id)) < 0 || (err = svc_sha256_hex(req->body, req->body_len, u.sha)) < 0)
		return err;
	u.data = req->body;
	u.len = req->body_len;
	if ((err = svc_db_tx(req->ctx->db, upload_tx, &u)) == SVC_E_TOO_LARGE)
		return svc_resp_error(resp, err, NULL, "%s", u.msg);
	if (err < 0)
		return err;
	snprintf(url, sizeof url, URL_PREFIX "%s", id);
	body = json_object_new_object();
	json_object_object_add(body, "id", json_object_new_string(id));
	json_object_object_add(body, "url", json_object_new_string(url));
	return svc_resp_json(resp, 201, body);
}

/* ---- get, delete ---- */

/* The file row of :id on site `s` (locked when `lock`) into *out; SVC_E_NOT_FOUND when there is none. */
static int file_row(struct svc_db *db, const struct svc_app_site *s, const char *id, int lock, struct svc_rows **out)
{
	struct svc_dbv p[3] = { svc_dbv_str(s->project_id), svc_dbv_str(s->env), svc_dbv_str(id) };
	int err;

	*out = NULL;
	if ((err = svc_db_run(db, lock ? STMT_APP_FILE_FOR_UPDATE : STMT_APP_FILE_GET, p, 3, out, NULL)) < 0)
		return err;
	if (!*out || (*out)->nrows != 1) {
		svc_rows_free(*out);
		*out = NULL;
		return SVC_E_NOT_FOUND;
	}
	return 0;
}

/* The bytes of file `row` (one of file_row()'s) joined into *out (malloc'd, *len bytes): one statement, so one
 * consistent read of every chunk. SVC_E_NOT_FOUND when it went in the meantime. */
static int file_bytes(struct svc_db *db, const struct svc_app_site *s, const struct svc_rows *row, char **out, size_t *len)
{
	struct svc_dbv p[3] = { svc_dbv_str(s->project_id), svc_dbv_str(s->env), svc_dbv_str(svc_rows_get(row, 0, AFCOL_ID)) };
	struct svc_rows *rows = NULL;
	uint64_t size = 0, nchunks = 0;
	size_t i, off = 0;
	int err;

	svc_parse_u64(svc_rows_get(row, 0, AFCOL_SIZE), UINT64_MAX, &size);
	svc_parse_u64(svc_rows_get(row, 0, AFCOL_CHUNKS), UINT64_MAX, &nchunks);
	if ((err = svc_db_run(db, STMT_APP_FILE_CHUNKS, p, 3, &rows, NULL)) < 0)
		return err;
	if (!rows || rows->nrows != nchunks) {
		svc_rows_free(rows);
		return SVC_E_NOT_FOUND;
	}
	if (!(*out = malloc(size ? size : 1))) {
		svc_rows_free(rows);
		return SVC_E_INTERNAL;
	}
	for (i = 0; i < rows->nrows; i++) {
		size_t n = rows->lens[i * rows->ncols + AFCCOL_DATA];
		if (off + n > size)
			break;
		memcpy(*out + off, svc_rows_get(rows, i, AFCCOL_DATA), n);
		off += n;
	}
	svc_rows_free(rows);
	if (off != size) {
		svc_log_error("app: file %s of project %s (%s): its chunks hold %zu bytes, not %llu",
			      p[2].s, s->project_id, s->env, off, (unsigned long long)size);
		free(*out);
		*out = NULL;
		return SVC_E_INTERNAL;
	}
	*len = off;
	return 0;
}

#define ETAG_MAX (SVC_SHA256_HEX_LEN + 3)

/* The validators of file `row`: its ETag into etag (ETAG_MAX bytes), its upload in Unix seconds (RFC 9110 §8.8). */
static int64_t file_validators(const struct svc_rows *row, char *etag)
{
	const char *sha = svc_rows_get(row, 0, AFCOL_SHA);
	uint64_t created = 0;

	snprintf(etag, ETAG_MAX, "\"%s\"", sha ? sha : "");
	svc_parse_u64(svc_rows_get(row, 0, AFCOL_CREATED), INT64_MAX, &created);
	return (int64_t)created;
}

/*
 * The headers of file `row` (one of file_row()'s) served under get rule `rule`, its 200 and its 304 alike (a cache
 * updates what it stored from a 304, RFC 9111 §4.3.4): inline for a raster image, else an attachment; the sandbox;
 * its validators, a strong ETag of its SHA-256 (a file's bytes never change) and Last-Modified its upload; and
 * Cache-Control by the rule: "public" lets any cache keep a public file, anything else is the browser's alone
 * ("private"), and both are revalidated on every use ("no-cache"), so a deleted file or a narrowed rule shows at
 * once and an unchanged file costs a 304.
 */
static int file_headers(struct svc_resp *resp, const struct svc_rows *row, enum svc_app_rule rule)
{
	const char *type = svc_rows_get(row, 0, AFCOL_TYPE);
	char etag[ETAG_MAX], date[SVC_HTTP_DATE_LEN + 1];
	int err;

	svc_http_date_format(file_validators(row, etag), date);
	if ((err = svc_resp_header(resp, "Content-Disposition", shown_inline(type) ? "inline" : "attachment")) < 0 ||
	    (err = svc_resp_header(resp, "Content-Security-Policy", FILE_CSP)) < 0 ||
	    (err = svc_resp_header(resp, "Cache-Control", rule == SVC_APP_PUBLIC ? "public, no-cache" :
										   "private, no-cache")) < 0 ||
	    (err = svc_resp_header(resp, "ETag", etag)) < 0 || (err = svc_resp_header(resp, "Last-Modified", date)) < 0)
		return err;
	return 0;
}

/*
 * A miss on a Galera node may be a file uploaded through another host a moment ago: 1 when the read is worth
 * making once more after svc_db_sync_wait() (which it then has run), so a hit costs nothing more.
 */
static int missed_on_galera(struct svc_db *db, int err)
{
	return err == SVC_E_NOT_FOUND && svc_db_is_galera(db) && svc_db_sync_wait(db) == 0;
}

/* 1 when a GET of file `row` is answered 304 by the request's If-None-Match or If-Modified-Since (RFC 9110 §13.2.2). */
static int not_modified(struct svc_req *req, const struct svc_rows *row)
{
	char etag[ETAG_MAX];
	int64_t created = file_validators(row, etag);

	return svc_http_not_modified(svc_req_header(req, "If-None-Match"), svc_req_header(req, "If-Modified-Since"),
				     etag, created);
}

enum svc_err svc_app_files_get(struct svc_req *req, struct svc_resp *resp)
{
	static char type[SVC_APP_FILE_TYPE_MAX + 1]; /* the response borrows it (one request at a time per process) */
	struct svc_app_site site;
	enum svc_app_rule rule;
	struct svc_rows *row = NULL;
	const char *owner;
	char *data = NULL;
	size_t len = 0;
	int err;

	if ((err = files_open(req, resp, SVC_APP_GET, &site, &rule)) < 0)
		return err;
	if ((err = svc_app_rule_check(rule, site.user_id, NULL)) < 0)
		return refused(resp, err);
	err = file_row(req->ctx->db, &site, svc_req_param(req, "id"), 0, &row);
	if (missed_on_galera(req->ctx->db, err))
		err = file_row(req->ctx->db, &site, svc_req_param(req, "id"), 0, &row);
	if (err < 0)
		return refused(resp, err);
	/* the rule first: a caller who may not get the file gets the 404 of a missing one, never a 304 */
	owner = svc_rows_get(row, 0, AFCOL_OWNER);
	if ((err = svc_app_rule_check(rule, site.user_id, owner ? owner : "")) < 0)
		goto done;
	if (not_modified(req, row)) {
		/* RFC 9110 §15.4.5: the 200's validators and Cache-Control, no body (nor Content-Length, http.c) */
		if ((err = file_headers(resp, row, rule)) == 0)
			resp->status = 304;
		goto done;
	}
	if (missed_on_galera(req->ctx->db, err = file_bytes(req->ctx->db, &site, row, &data, &len)))
		err = file_bytes(req->ctx->db, &site, row, &data, &len);
	if (err < 0 || (err = file_headers(resp, row, rule)) < 0)
		goto done;
	snprintf(type, sizeof type, "%s", svc_rows_get(row, 0, AFCOL_TYPE));
	free(resp->raw);
	resp->raw = data;
	data = NULL;
	resp->raw_len = len;
	resp->raw_type = type;
	resp->status = 200;
done:
	free(data);
	svc_rows_free(row);
	return err < 0 ? refused(resp, err) : 0;
}

struct removal {
	const struct svc_app_site *s;
	const char *id;
	enum svc_app_rule rule;
	const struct svc_config *cfg;
};

static int delete_tx(struct svc_db *db, void *arg)
{
	struct removal *r = arg;
	struct svc_rows *row = NULL;
	struct svc_dbv p[3] = { svc_dbv_str(r->s->project_id), svc_dbv_str(r->s->env), svc_dbv_str(r->id) };
	const char *owner;
	uint64_t size = 0;
	char msg[8];
	int err;

	if ((err = file_row(db, r->s, r->id, 1, &row)) < 0)
		return err;
	owner = svc_rows_get(row, 0, AFCOL_OWNER);
	err = svc_app_rule_check(r->rule, r->s->user_id, owner ? owner : "");
	svc_parse_u64(svc_rows_get(row, 0, AFCOL_SIZE), UINT64_MAX, &size);
	svc_rows_free(row);
	if (err < 0 || (err = svc_db_run(db, STMT_APP_FILE_DELETE, p, 3, NULL, NULL)) < 0)
		return err;
	return file_usage(db, r->cfg, r->s->project_id, r->s->env, -1, -(int64_t)size, msg, sizeof msg);
}

enum svc_err svc_app_files_delete(struct svc_req *req, struct svc_resp *resp)
{
	struct svc_app_site site;
	struct removal r = { .s = &site, .id = svc_req_param(req, "id"), .cfg = &req->ctx->cfg };
	int err;

	if ((err = files_open(req, resp, SVC_APP_DELETE, &site, &r.rule)) < 0)
		return err;
	if ((err = svc_app_rule_check(r.rule, site.user_id, NULL)) == 0 &&
	    missed_on_galera(req->ctx->db, err = svc_db_tx(req->ctx->db, delete_tx, &r)))
		err = svc_db_tx(req->ctx->db, delete_tx, &r);
	if (err < 0)
		return refused(resp, err);
	resp->status = 204;
	return 0;
}

/* ---- for records and builders ---- */

int svc_app_files_refs(struct svc_db *db, const struct svc_app_site *s, const struct svc_app_collection *c,
		       struct json_object *obj, const char **out_field, char *msg, size_t max)
{
	struct svc_dbv p[3] = { svc_dbv_str(s->project_id), svc_dbv_str(s->env), svc_dbv_null() };
	int err;

	if (!obj || !json_object_is_type(obj, json_type_object))
		return 0;
	json_object_object_foreach(obj, key, v) {
		const struct svc_app_field *f = svc_app_decl_field(c, key);
		struct svc_rows *rows = NULL;
		int found;
		if (!f || f->type != SVC_APP_FILE || !v || !json_object_is_type(v, json_type_string))
			continue;
		p[2] = svc_dbv_str(json_object_get_string(v));
		if ((err = svc_db_run(db, STMT_APP_FILE_EXISTS, p, 3, &rows, NULL)) < 0)
			return err;
		found = rows && rows->nrows == 1;
		svc_rows_free(rows);
		rows = NULL;
		/* a file uploaded through another host a moment ago (a locking read sees the latest once applied) */
		if (!found && missed_on_galera(db, SVC_E_NOT_FOUND)) {
			if ((err = svc_db_run(db, STMT_APP_FILE_EXISTS, p, 3, &rows, NULL)) < 0)
				return err;
			found = rows && rows->nrows == 1;
			svc_rows_free(rows);
		}
		if (!found) {
			*out_field = key;
			snprintf(msg, max, "%s names no file of this app's %s backend", key, s->env);
			return SVC_E_VALIDATION;
		}
	}
	return 0;
}

int svc_app_files_user_clear(struct svc_db *db, const char *project_id, const char *env, const char *user_id)
{
	struct svc_dbv p[3] = { svc_dbv_str(project_id), svc_dbv_str(env), svc_dbv_str(user_id) };
	struct svc_rows *rows = NULL;
	uint64_t n = 0, bytes = 0;
	char msg[8];
	int err;

	if ((err = svc_db_run(db, STMT_APP_USER_FILES_HOLD, p, 3, &rows, NULL)) < 0)
		return err;
	svc_parse_u64(svc_rows_get(rows, 0, AUFHCOL_FILES), UINT64_MAX, &n);
	svc_parse_u64(svc_rows_get(rows, 0, AUFHCOL_BYTES), UINT64_MAX, &bytes);
	svc_rows_free(rows);
	if (n == 0 || (err = svc_db_run(db, STMT_APP_USER_FILES_CLEAR, p, 3, NULL, NULL)) < 0)
		return err;
	{
		/* a decrease: never refused, so any settings do */
		const struct svc_config none = { 0 };
		return file_usage(db, &none, project_id, env, -(int64_t)n, -(int64_t)bytes, msg, sizeof msg);
	}
}

int svc_app_files_summary(struct svc_db *db, const struct svc_config *cfg, const char *project_id,
			  struct json_object *body)
{
	static const char *const envs[2] = { "test", "live" };
	struct svc_dbv p = svc_dbv_str(project_id);
	struct svc_rows *rows = NULL;
	struct json_object *usage = NULL, *quotas = NULL, *u;
	size_t e, r;
	int err;

	if ((err = svc_db_run(db, STMT_APP_FILE_USAGE_GET, &p, 1, &rows, NULL)) < 0)
		return err;
	json_object_object_get_ex(body, "usage", &usage);
	for (e = 0; e < 2; e++) {
		uint64_t files = 0, bytes = 0;
		for (r = 0; rows && r < rows->nrows; r++)
			if (strcmp(svc_rows_get(rows, r, AFUGCOL_ENV), envs[e]) == 0) {
				svc_parse_u64(svc_rows_get(rows, r, AFUGCOL_FILES), UINT64_MAX, &files);
				svc_parse_u64(svc_rows_get(rows, r, AFUGCOL_BYTES), UINT64_MAX, &bytes);
			}
		if (usage && json_object_object_get_ex(usage, envs[e], &u)) {
			json_object_object_add(u, "files", json_object_new_int64((int64_t)files));
			json_object_object_add(u, "fileBytes", json_object_new_int64((int64_t)bytes));
		}
	}
	svc_rows_free(rows);
	if (json_object_object_get_ex(body, "quotas", &quotas)) {
		json_object_object_add(quotas, "fileBytes", json_object_new_int64((int64_t)cfg->app_max_file_bytes));
		json_object_object_add(quotas, "fileMaxBytes", json_object_new_int64((int64_t)cfg->app_file_max_mb * MIB));
	}
	return 0;
}
