/* app_data.c: an app's records under /_svc/data/, with the rules of svc.data.json enforced here, not in the page (app.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/app.h"
#include "app/app_files.h"
#include "core/err.h"
#include "core/json.h"
#include "core/log.h"
#include "core/util.h"

#define LIMIT_DEFAULT 20
#define LIMIT_MAX 100
#define MAX_INDEX_FILTERS 3
#define VALUE_MAX 192
#define CURSOR_MAX 768 /* hex digits of a cursor: a sorted one holds the sort's field, an id and an index value */

/* What a request on a collection works with. */
struct coll {
	struct svc_app_site site;
	struct svc_app_decl *decl;
	const struct svc_app_collection *c;
};

/* The site, its declaration and the collection of the path; 404 for a collection the declaration does not have. */
static int coll_open(struct svc_req *req, struct svc_resp *resp, struct coll *out)
{
	const char *name = svc_req_param(req, "collection");
	int err;

	out->decl = NULL;
	if ((err = svc_app_site_open(req, resp, &out->site)) < 0)
		return err;
	if ((err = svc_app_decl_load(req->ctx->db, out->site.project_id, out->site.dir, &out->decl)) < 0)
		return err;
	out->c = name ? svc_app_decl_collection(out->decl, name) : NULL;
	if (!out->c)
		return svc_resp_error(resp, SVC_E_NOT_FOUND, NULL, "No collection named %.64s is declared in svc.data.json.",
				      name ? name : "");
	return 0;
}

/*
 * A validation error naming `field`: the name is copied, since the router writes the body after the
 * declaration it may come from is freed (one request at a time per process: one buffer).
 */
static int field_error(struct svc_resp *resp, const char *field, const char *msg)
{
	static char name[SVC_APP_NAME_MAX + 1];

	snprintf(name, sizeof name, "%s", field ? field : "");
	return svc_resp_error(resp, SVC_E_VALIDATION, field ? name : NULL, "%s", msg);
}

/* The rule of `op` for the caller: 401, 403, 404 with their messages. */
static int rule_refused(struct svc_resp *resp, int err)
{
	if (err == SVC_E_UNAUTHORIZED)
		return svc_resp_error(resp, err, NULL, "Sign in to do this.");
	if (err == SVC_E_FORBIDDEN)
		return svc_resp_error(resp, err, NULL, "Nobody may do this on the site (rule none).");
	if (err == SVC_E_NOT_FOUND)
		return svc_resp_error(resp, err, NULL, "No such record.");
	return err;
}

struct json_object *svc_app_record_json(const struct svc_rows *rows, size_t r)
{
	const char *fields = svc_rows_get(rows, r, ARCOL_FIELDS);
	struct json_object *o = fields ? json_tokener_parse(fields) : NULL;

	if (!o || !json_object_is_type(o, json_type_object)) {
		json_object_put(o);
		o = json_object_new_object();
	}
	json_object_object_add(o, "id", json_object_new_string(svc_rows_get(rows, r, ARCOL_ID)));
	svc_json_add_str(o, "owner", svc_rows_get(rows, r, ARCOL_OWNER));
	svc_json_add_time(o, "createdAt", svc_rows_get(rows, r, ARCOL_CREATED));
	svc_json_add_time(o, "updatedAt", svc_rows_get(rows, r, ARCOL_UPDATED));
	return o;
}

/* ---- writes: each in one svc_db_tx() ---- */

struct write {
	const struct svc_config *cfg; /* the quotas */
	struct coll *k;
	const char *id;              /* the record's */
	struct json_object *body;    /* create, update: the fields given */
	enum svc_app_op op;
	int builder;                 /* 1: a builder's fix through svc (svc_app_record_admin), whatever the rules */
	const char *field;           /* out: the field of a validation error */
	char msg[300];               /* out: its message */
	struct svc_rows *after;      /* out: create, update: the record as stored */
};

static void key_params(const struct coll *k, struct svc_dbv *p)
{
	p[0] = svc_dbv_str(k->site.project_id);
	p[1] = svc_dbv_str(k->site.env);
	p[2] = svc_dbv_str(k->c->name);
}

/* The index rows of record `id` from its fields `obj`: the old ones cleared, one per indexed field with a value. */
static int index_write(struct svc_db *db, const struct coll *k, const char *id, struct json_object *obj)
{
	struct svc_dbv p[6];
	char value[VALUE_MAX];
	size_t i;
	int err;

	key_params(k, p);
	p[3] = svc_dbv_str(id);
	if ((err = svc_db_run(db, STMT_APP_INDEX_CLEAR, p, 4, NULL, NULL)) < 0)
		return err;
	for (i = 0; obj && i < k->c->nfields; i++) {
		const struct svc_app_field *f = &k->c->fields[i];
		struct json_object *v;
		if (!f->indexed || !json_object_object_get_ex(obj, f->name, &v) ||
		    svc_app_index_value(f, v, value, sizeof value) < 0)
			continue;
		p[3] = svc_dbv_str(f->name);
		p[4] = svc_dbv_str(value);
		p[5] = svc_dbv_str(id);
		if ((err = svc_db_run(db, STMT_APP_INDEX_INSERT, p, 6, NULL, NULL)) < 0)
			return err;
	}
	return 0;
}

/* Reads record w->id (locked when `lock`) into *out; SVC_E_NOT_FOUND when there is none. */
static int record_read(struct svc_db *db, const struct write *w, int lock, struct svc_rows **out)
{
	struct svc_dbv p[4];
	int err;

	key_params(w->k, p);
	p[3] = svc_dbv_str(w->id);
	if ((err = svc_db_run(db, lock ? STMT_APP_RECORD_FOR_UPDATE : STMT_APP_RECORD_GET, p, 4, out, NULL)) < 0)
		return err;
	if (!*out || (*out)->nrows != 1) {
		svc_rows_free(*out);
		*out = NULL;
		return SVC_E_NOT_FOUND;
	}
	return 0;
}

/* The rule of w->op on a record of owner `owner` (SQL NULL: made signed out). */
static int record_allowed(const struct write *w, const char *owner)
{
	if (w->builder)
		return 0;
	return svc_app_rule_check(w->k->c->rules[w->op], w->k->site.user_id, owner ? owner : "");
}

static int create_tx(struct svc_db *db, void *arg)
{
	struct write *w = arg;
	const char *fields = json_object_to_json_string_ext(w->body, JSON_C_TO_STRING_PLAIN);
	struct svc_dbv p[6];
	int err;

	svc_rows_free(w->after);
	w->after = NULL;
	key_params(w->k, p);
	p[3] = svc_dbv_str(w->id);
	p[4] = w->k->site.user_id[0] ? svc_dbv_str(w->k->site.user_id) : svc_dbv_null();
	p[5] = svc_dbv_str(fields);
	if ((err = svc_app_files_refs(db, &w->k->site, w->k->c, w->body, &w->field, w->msg, sizeof w->msg)) < 0 ||
	    (err = svc_app__usage(db, w->cfg, &w->k->site, 1, (int64_t)strlen(fields), 0, w->msg, sizeof w->msg)) < 0 ||
	    (err = svc_db_run(db, STMT_APP_RECORD_INSERT, p, 6, NULL, NULL)) < 0 ||
	    (err = index_write(db, w->k, w->id, w->body)) < 0)
		return err;
	return record_read(db, w, 0, &w->after);
}

static int update_tx(struct svc_db *db, void *arg)
{
	struct write *w = arg;
	struct svc_rows *before = NULL;
	struct json_object *merged = NULL, *v;
	struct svc_dbv p[5];
	size_t i;
	int err;

	svc_rows_free(w->after);
	w->after = NULL;
	w->field = NULL;
	if ((err = record_read(db, w, 1, &before)) < 0 || (err = record_allowed(w, svc_rows_get(before, 0, ARCOL_OWNER))) < 0)
		goto done;
	if ((err = svc_app_record_check(w->k->c, w->body, 1, &w->field, w->msg, sizeof w->msg)) < 0 ||
	    (err = svc_app_files_refs(db, &w->k->site, w->k->c, w->body, &w->field, w->msg, sizeof w->msg)) < 0)
		goto done;
	merged = json_tokener_parse(svc_rows_get(before, 0, ARCOL_FIELDS));
	if (!merged || !json_object_is_type(merged, json_type_object)) {
		json_object_put(merged);
		merged = json_object_new_object();
	}
	json_object_object_foreach(w->body, key, val) {
		if (!val || json_object_is_type(val, json_type_null))
			json_object_object_del(merged, key);
		else
			json_object_object_add(merged, key, json_object_get(val));
	}
	for (i = 0; i < w->k->c->nfields; i++) {
		const struct svc_app_field *f = &w->k->c->fields[i];
		if (f->required && !json_object_object_get_ex(merged, f->name, &v)) {
			w->field = f->name;
			snprintf(w->msg, sizeof w->msg, "%s is required", f->name);
			err = SVC_E_VALIDATION;
			goto done;
		}
	}
	p[0] = svc_dbv_str(json_object_to_json_string_ext(merged, JSON_C_TO_STRING_PLAIN));
	key_params(w->k, p + 1);
	p[4] = svc_dbv_str(w->id);
	if ((err = svc_app__usage(db, w->cfg, &w->k->site, 0, (int64_t)p[0].len - (int64_t)before->lens[ARCOL_FIELDS], 0,
				  w->msg, sizeof w->msg)) < 0 ||
	    (err = svc_db_run(db, STMT_APP_RECORD_UPDATE, p, 5, NULL, NULL)) < 0 ||
	    (err = index_write(db, w->k, w->id, merged)) < 0)
		goto done;
	err = record_read(db, w, 0, &w->after);
done:
	json_object_put(merged);
	svc_rows_free(before);
	return err;
}

static int delete_tx(struct svc_db *db, void *arg)
{
	struct write *w = arg;
	struct svc_rows *before = NULL;
	struct svc_dbv p[4];
	int err;

	if ((err = record_read(db, w, 1, &before)) < 0 || (err = record_allowed(w, svc_rows_get(before, 0, ARCOL_OWNER))) < 0)
		goto done;
	key_params(w->k, p);
	p[3] = svc_dbv_str(w->id);
	if ((err = svc_app__usage(db, w->cfg, &w->k->site, -1, -(int64_t)before->lens[ARCOL_FIELDS], 0, w->msg,
				  sizeof w->msg)) < 0 ||
	    (err = svc_db_run(db, STMT_APP_RECORD_DELETE, p, 4, NULL, NULL)) < 0)
		goto done;
	err = index_write(db, w->k, w->id, NULL);
done:
	svc_rows_free(before);
	return err;
}

/* Runs a write and answers it: 200/201 the record, 204, or the error (a validation error with its field). */
static int write_run(struct svc_req *req, struct svc_resp *resp, struct write *w, svc_db_tx_fn fn, int status)
{
	int err = svc_db_tx(req->ctx->db, fn, w);

	if (err == SVC_E_VALIDATION)
		err = field_error(resp, w->field, w->msg);
	else if (err == SVC_E_TOO_LARGE)
		err = svc_resp_error(resp, err, NULL, "%s", w->msg);
	else if (err < 0)
		err = rule_refused(resp, err);
	else if (w->after)
		err = svc_resp_json(resp, status, svc_app_record_json(w->after, 0));
	else
		resp->status = status;
	svc_rows_free(w->after);
	return err;
}

enum svc_err svc_app_data_create(struct svc_req *req, struct svc_resp *resp)
{
	struct coll k;
	struct write w = { .cfg = &req->ctx->cfg, .k = &k, .body = req->json, .op = SVC_APP_CREATE };
	char id[37];
	int err;

	if ((err = coll_open(req, resp, &k)) < 0)
		goto done;
	if ((err = svc_app_rule_check(k.c->rules[SVC_APP_CREATE], k.site.user_id, NULL)) < 0) {
		err = rule_refused(resp, err);
		goto done;
	}
	if ((err = svc_app_record_check(k.c, req->json, 0, &w.field, w.msg, sizeof w.msg)) < 0) {
		err = field_error(resp, w.field, w.msg);
		goto done;
	}
	if ((err = svc_uuid_v4(id)) < 0)
		goto done;
	w.id = id;
	err = write_run(req, resp, &w, create_tx, 201);
done:
	svc_app_decl_free(k.decl);
	return err;
}

/* PATCH and DELETE of one record: signed out under user or owner 401 before anything is read, then `fn`. */
static int record_write(struct svc_req *req, struct svc_resp *resp, enum svc_app_op op, svc_db_tx_fn fn, int status)
{
	struct coll k;
	struct write w = { .cfg = &req->ctx->cfg, .k = &k, .id = svc_req_param(req, "id"), .body = req->json, .op = op };
	int err;

	if ((err = coll_open(req, resp, &k)) == 0) {
		if ((err = svc_app_rule_check(k.c->rules[op], k.site.user_id, NULL)) < 0)
			err = rule_refused(resp, err);
		else
			err = write_run(req, resp, &w, fn, status);
	}
	svc_app_decl_free(k.decl);
	return err;
}

enum svc_err svc_app_data_update(struct svc_req *req, struct svc_resp *resp)
{
	return record_write(req, resp, SVC_APP_UPDATE, update_tx, 200);
}

enum svc_err svc_app_data_delete(struct svc_req *req, struct svc_resp *resp)
{
	return record_write(req, resp, SVC_APP_DELETE, delete_tx, 204);
}

enum svc_err svc_app_data_get(struct svc_req *req, struct svc_resp *resp)
{
	struct coll k;
	struct write w = { .k = &k, .id = svc_req_param(req, "id"), .op = SVC_APP_GET };
	struct svc_rows *rows = NULL;
	int err;

	if ((err = coll_open(req, resp, &k)) < 0)
		goto done;
	if ((err = svc_app_rule_check(k.c->rules[SVC_APP_GET], k.site.user_id, NULL)) < 0 ||
	    (err = record_read(req->ctx->db, &w, 0, &rows)) < 0 ||
	    (err = record_allowed(&w, svc_rows_get(rows, 0, ARCOL_OWNER))) < 0) {
		err = rule_refused(resp, err);
		goto done;
	}
	err = svc_resp_json(resp, 200, svc_app_record_json(rows, 0));
done:
	svc_rows_free(rows);
	svc_app_decl_free(k.decl);
	return err;
}

/* ---- builders' fixes through svc (lib/api/api_backend.c) ---- */

int svc_app_record_admin(struct svc_db *db, const struct svc_config *cfg, struct svc_app_admin_op *a)
{
	static const svc_db_tx_fn fns[SVC_APP_OP__MAX] = { [SVC_APP_UPDATE] = update_tx, [SVC_APP_DELETE] = delete_tx };
	struct coll k;
	struct write w = { .cfg = cfg, .k = &k, .id = a->id, .body = a->body, .op = a->op, .builder = 1 };
	int err;

	memset(&k, 0, sizeof k);
	a->record = NULL;
	a->field[0] = a->msg[0] = '\0';
	snprintf(k.site.project_id, sizeof k.site.project_id, "%s", a->project_id);
	k.site.env = a->env;
	if ((err = svc_app_decl_load(db, a->project_id, a->dir, &k.decl)) < 0)
		return err;
	if (!(k.c = svc_app_decl_collection(k.decl, a->collection))) {
		err = SVC_E_NOT_FOUND;
		snprintf(a->msg, sizeof a->msg, "No collection named %.64s is declared in svc.data.json.", a->collection);
		goto done;
	}
	if (a->op == SVC_APP_GET)
		err = record_read(db, &w, 0, &w.after);
	else if (a->op == SVC_APP_UPDATE || a->op == SVC_APP_DELETE)
		err = svc_db_tx(db, fns[a->op], &w);
	else
		err = SVC_E_INTERNAL;
	if (err == SVC_E_NOT_FOUND)
		snprintf(a->msg, sizeof a->msg, "No such record.");
	else if (err < 0)
		snprintf(a->msg, sizeof a->msg, "%s", w.msg);
	if (err == SVC_E_VALIDATION && w.field)
		snprintf(a->field, sizeof a->field, "%s", w.field);
	if (err == 0 && w.after)
		a->record = svc_app_record_json(w.after, 0);
done:
	svc_rows_free(w.after);
	svc_app_decl_free(k.decl);
	return err;
}

/* ---- lists: keyset pages ---- */

/* What a list's query asks for, as the page statement binds it (db_stmts_app.h APP_RECORD_PAGE). */
struct page_query {
	const char *owner, *id, *created;          /* filters, NULL when not given */
	char created_db[32];
	const char *ifield[MAX_INDEX_FILTERS];     /* index filters */
	char ivalue[MAX_INDEX_FILTERS][VALUE_MAX];
	size_t nindex;
	int desc;
	int by_id;                                 /* sort=id or -id */
	const struct svc_app_field *by_field;      /* sort=<field> of a declared index, NULL otherwise */
	char cur_ts[32], cur_id[37];               /* the cursor, "" on the first page */
	char cur_k[2], cur_v[VALUE_MAX];           /* a sorted page's cursor: has the field a value, and the value */
	uint64_t limit;
};

/* Whether the list is sorted on id or an index (STMT_APP_SORTED_*) rather than on createdAt. */
static int sorted(const struct page_query *q)
{
	return q->by_id || q->by_field;
}

/* The name of the sort's field as its cursor records it. */
static const char *sort_name(const struct page_query *q)
{
	return q->by_field ? q->by_field->name : q->by_id ? "id" : "createdAt";
}

/* An RFC 3339 UTC time as svc writes it ("...T01:22:11.123Z") into the DB's text form into out (32 bytes). */
static int time_to_db(const char *s, char *out)
{
	size_t n = strlen(s);

	if (!svc_app_datetime_valid(s, n) || (s[n - 1] != 'Z' && s[n - 1] != 'z') || n - 1 >= 32)
		return SVC_E_VALIDATION;
	memcpy(out, s, n - 1);
	out[n - 1] = '\0';
	out[10] = ' ';
	return 0;
}

/* One filter "field:value" of a declared index: its canonical value. */
static int index_filter(const struct svc_app_collection *c, const char *name, const char *value, struct page_query *q)
{
	const struct svc_app_field *f = svc_app_decl_field(c, name);
	struct json_object *v = NULL;
	int err;

	if (!f || !f->indexed || q->nindex == MAX_INDEX_FILTERS)
		return SVC_E_VALIDATION;
	if (f->type == SVC_APP_NUMBER) {
		v = json_tokener_parse(value);
	} else if (f->type == SVC_APP_BOOLEAN) {
		if (strcmp(value, "true") == 0 || strcmp(value, "false") == 0)
			v = json_object_new_boolean(value[0] == 't');
	} else {
		v = json_object_new_string(value);
	}
	err = svc_app_index_value(f, v, q->ivalue[q->nindex], sizeof q->ivalue[0]);
	json_object_put(v);
	if (err < 0)
		return err;
	q->ifield[q->nindex++] = f->name;
	return 0;
}

/* filter=<field>:<value>[,...] (on declared indexes, id, owner, createdAt). `text` is cut in place. */
static int parse_filter(struct svc_resp *resp, const struct svc_app_collection *c, char *text, struct page_query *q)
{
	char *s = text;

	while (s && *s) {
		char *comma = strchr(s, ','), *colon;
		if (comma)
			*comma = '\0';
		colon = strchr(s, ':');
		if (!colon || colon == s)
			return svc_resp_error(resp, SVC_E_VALIDATION, "filter", "a filter is <field>:<value>[,...]");
		*colon = '\0';
		if (strcmp(s, "owner") == 0 && !q->owner)
			q->owner = colon + 1;
		else if (strcmp(s, "id") == 0 && !q->id)
			q->id = colon + 1;
		else if (strcmp(s, "createdAt") == 0 && !q->created) {
			if (time_to_db(colon + 1, q->created_db) < 0)
				return svc_resp_error(resp, SVC_E_VALIDATION, "filter", "createdAt is a time such as 2026-11-22T01:22:11.123Z");
			q->created = q->created_db;
		} else if (index_filter(c, s, colon + 1, q) < 0)
			return svc_resp_error(resp, SVC_E_VALIDATION, "filter",
					      "%.64s: filters are on declared indexes (of matching values), id, owner and createdAt, "
					      "each once, at most %d indexes", s, MAX_INDEX_FILTERS);
		s = comma ? comma + 1 : NULL;
	}
	return 0;
}

/*
 * A sorted page's cursor (raw, decoded): "<A|D><field>\t<k>\t<id>\t<value>", k 0 or 1 (has the record a value), the
 * value the last record's (its index value or id), bound to the sort and the direction it was made for.
 */
static int parse_sorted_cursor(char *raw, struct page_query *q)
{
	char *f = raw + 1, *k, *id, *v;
	size_t n;

	if (raw[0] != (q->desc ? 'D' : 'A') || !(k = strchr(f, '\t')))
		return SVC_E_VALIDATION;
	*k++ = '\0';
	if (strcmp(f, sort_name(q)) != 0 || (k[0] != '0' && k[0] != '1') || k[1] != '\t')
		return SVC_E_VALIDATION;
	id = k + 2;
	if (strlen(id) < 37 || id[36] != '\t')
		return SVC_E_VALIDATION;
	id[36] = '\0';
	v = id + 37;
	if (!svc_uuid_valid(id) || (n = strlen(v)) >= sizeof q->cur_v)
		return SVC_E_VALIDATION;
	q->cur_k[0] = k[0];
	q->cur_k[1] = '\0';
	snprintf(q->cur_id, sizeof q->cur_id, "%s", id);
	memcpy(q->cur_v, v, n + 1);
	q->cur_ts[0] = '-'; /* marks a cursor as given (the sorted statements bind cur_k, cur_v, cur_id) */
	q->cur_ts[1] = '\0';
	return 0;
}

/* The cursor: hex of "<a|d> <created_at as the DB gives it>|<id>", bound to the sort it was made for (or, sorted on
 * id or an index, parse_sorted_cursor's). */
static int parse_cursor(const char *hex, struct page_query *q)
{
	char raw[CURSOR_MAX / 2 + 1], *bar;
	size_t n = strlen(hex), i;

	if (n == 0 || n % 2 || n / 2 >= sizeof raw || svc_hex_decode(hex, n, raw) < 0)
		return SVC_E_VALIDATION;
	raw[n / 2] = '\0';
	if (sorted(q))
		return parse_sorted_cursor(raw, q);
	if (n / 2 >= 80)
		return SVC_E_VALIDATION;
	bar = strchr(raw, '|');
	if ((raw[0] != (q->desc ? 'd' : 'a')) || raw[1] != ' ' || !bar || (size_t)(bar - raw - 2) >= sizeof q->cur_ts ||
	    !svc_uuid_valid(bar + 1))
		return SVC_E_VALIDATION;
	for (i = 2; raw + i < bar; i++)
		if (!strchr("0123456789-: .", raw[i]))
			return SVC_E_VALIDATION;
	memcpy(q->cur_ts, raw + 2, (size_t)(bar - raw - 2));
	q->cur_ts[bar - raw - 2] = '\0';
	snprintf(q->cur_id, sizeof q->cur_id, "%s", bar + 1);
	return 0;
}

/* sort=<field>|-<field>: createdAt, id or a declared index of `c`. */
static int parse_sort(const struct svc_app_collection *c, const char *sort, struct page_query *q)
{
	const char *name = sort + (sort[0] == '-');
	const struct svc_app_field *f;

	q->desc = sort[0] == '-';
	if (strcmp(name, "createdAt") == 0)
		return 0;
	if (strcmp(name, "id") == 0) {
		q->by_id = 1;
		return 0;
	}
	if (!(f = svc_app_decl_field(c, name)) || !f->indexed)
		return SVC_E_VALIDATION;
	q->by_field = f;
	return 0;
}

/* The query string of a list: filter, sort, limit, cursor. */
static int parse_list(struct svc_req *req, struct svc_resp *resp, const struct svc_app_collection *c, char *filter,
		      size_t fmax, struct page_query *q)
{
	char sort[SVC_APP_NAME_MAX + 2], limit[24], cursor[CURSOR_MAX + 1];
	int has;

	q->limit = LIMIT_DEFAULT;
	if ((has = svc_req_query(req, "sort", sort, sizeof sort)) < 0 || (has && parse_sort(c, sort, q) < 0))
		return svc_resp_error(resp, SVC_E_VALIDATION, "sort",
				      "sort is createdAt, id or a declared index (of this collection), with - for descending");
	if ((has = svc_req_query(req, "limit", limit, sizeof limit)) < 0 ||
	    (has && (svc_parse_u64(limit, LIMIT_MAX, &q->limit) < 0 || q->limit == 0)))
		return svc_resp_error(resp, SVC_E_VALIDATION, "limit", "limit is from 1 to %d", LIMIT_MAX);
	if ((has = svc_req_query(req, "cursor", cursor, sizeof cursor)) < 0 || (has && parse_cursor(cursor, q) < 0))
		return svc_resp_error(resp, SVC_E_VALIDATION, "cursor", "cursor is the nextCursor of a page of this list and sort");
	if ((has = svc_req_query(req, "filter", filter, fmax)) < 0)
		return svc_resp_error(resp, SVC_E_VALIDATION, "filter", "filter is too long");
	return has ? parse_filter(resp, c, filter, q) : 0;
}

/* A page sorted on id or an index: the sort field bound first (NULL for id: no index row joins), then p (n). */
static int sorted_run(struct svc_db *db, const struct page_query *q, const struct svc_dbv *p, size_t n,
		      struct svc_rows **out)
{
	struct svc_dbv all[26];
	enum svc_stmt st;

	if (n + 1 > sizeof all / sizeof all[0])
		return SVC_E_INTERNAL;
	if (q->by_id)
		st = q->desc ? STMT_APP_SORTED_ID_DESC : STMT_APP_SORTED_ID_ASC;
	else if (q->by_field->type == SVC_APP_NUMBER)
		st = q->desc ? STMT_APP_SORTED_NUMBER_DESC : STMT_APP_SORTED_NUMBER_ASC;
	else
		st = q->desc ? STMT_APP_SORTED_TEXT_DESC : STMT_APP_SORTED_TEXT_ASC;
	all[0] = svc_dbv_str(q->by_field ? q->by_field->name : NULL);
	memcpy(all + 1, p, n * sizeof *p);
	return svc_db_run(db, st, all, n + 1, out, NULL);
}

/* The page: `q` bound in the statement's order, `forced_owner` the rule's (NULL for anyone). */
static int page_run(struct svc_db *db, const struct coll *k, const struct page_query *q, const char *forced_owner,
		    struct svc_rows **out)
{
	struct svc_dbv p[25];
	size_t i, n = 3;

	key_params(k, p);
	p[n++] = svc_dbv_str(forced_owner);
	p[n++] = svc_dbv_str(forced_owner);
	p[n++] = svc_dbv_str(q->owner);
	p[n++] = svc_dbv_str(q->owner);
	p[n++] = svc_dbv_str(q->id);
	p[n++] = svc_dbv_str(q->id);
	p[n++] = svc_dbv_str(q->created);
	p[n++] = svc_dbv_str(q->created);
	for (i = 0; i < MAX_INDEX_FILTERS; i++) {
		p[n++] = svc_dbv_str(i < q->nindex ? q->ifield[i] : NULL);
		p[n++] = svc_dbv_str(i < q->nindex ? q->ifield[i] : NULL);
		p[n++] = svc_dbv_str(i < q->nindex ? q->ivalue[i] : NULL);
	}
	if (sorted(q)) {
		p[n++] = svc_dbv_str(q->cur_ts[0] ? q->cur_ts : NULL);
		p[n++] = svc_dbv_str(q->cur_ts[0] ? q->cur_k : NULL);
		p[n++] = svc_dbv_str(q->cur_ts[0] ? q->cur_v : NULL);
	} else {
		for (i = 0; i < 3; i++)
			p[n++] = svc_dbv_str(q->cur_ts[0] ? q->cur_ts : NULL);
	}
	p[n++] = svc_dbv_str(q->cur_ts[0] ? q->cur_id : NULL);
	p[n++] = svc_dbv_i64((int64_t)q->limit + 1);
	if (!sorted(q))
		return svc_db_run(db, q->desc ? STMT_APP_RECORD_PAGE_DESC : STMT_APP_RECORD_PAGE_ASC, p, n, out, NULL);
	return sorted_run(db, q, p, n, out);
}

/* {items, nextCursor} of a page the statement gave (q->limit + 1 rows at most) into *out. */
static int page_json(const struct svc_rows *rows, const struct page_query *q, struct json_object **out)
{
	struct json_object *body = json_object_new_object(), *items = json_object_new_array();
	size_t i, n = rows ? rows->nrows : 0;

	for (i = 0; i < n && i < q->limit; i++)
		json_object_array_add(items, svc_app_record_json(rows, i));
	json_object_object_add(body, "items", items);
	if (n > q->limit) {
		char raw[CURSOR_MAX / 2], hex[CURSOR_MAX + 1];
		const char *v = sorted(q) ? svc_rows_get(rows, q->limit - 1, ASOCOL_V) : NULL;
		int len = sorted(q) ?
			  snprintf(raw, sizeof raw, "%c%s\t%s\t%s\t%s", q->desc ? 'D' : 'A', sort_name(q),
				   strcmp(svc_rows_get(rows, q->limit - 1, ASOCOL_K), "0") ? "1" : "0",
				   svc_rows_get(rows, q->limit - 1, ARCOL_ID), v ? v : "") :
			  snprintf(raw, sizeof raw, "%c %s|%s", q->desc ? 'd' : 'a',
				   svc_rows_get(rows, q->limit - 1, ARCOL_CREATED), svc_rows_get(rows, q->limit - 1, ARCOL_ID));
		if (len < 0 || (size_t)len >= sizeof raw) {
			json_object_put(body);
			return SVC_E_INTERNAL;
		}
		svc_hex_encode(raw, (size_t)len, hex);
		json_object_object_add(body, "nextCursor", json_object_new_string(hex));
	} else {
		json_object_object_add(body, "nextCursor", NULL);
	}
	*out = body;
	return 0;
}

int svc_app_records_page(struct svc_db *db, const char *project_id, const char *env, const char *collection,
			 const char *cursor, uint64_t limit, struct json_object **out)
{
	struct svc_app_collection c;
	struct page_query q;
	struct svc_rows *rows = NULL;
	struct coll k;
	int err;

	memset(&c, 0, sizeof c);
	memset(&q, 0, sizeof q);
	memset(&k, 0, sizeof k);
	snprintf(c.name, sizeof c.name, "%s", collection);
	snprintf(k.site.project_id, sizeof k.site.project_id, "%s", project_id);
	k.site.env = env;
	k.c = &c;
	q.limit = limit;
	if (cursor && *cursor && parse_cursor(cursor, &q) < 0)
		return SVC_E_VALIDATION;
	if ((err = page_run(db, &k, &q, NULL, &rows)) == 0)
		err = page_json(rows, &q, out);
	svc_rows_free(rows);
	return err;
}

enum svc_err svc_app_data_list(struct svc_req *req, struct svc_resp *resp)
{
	struct coll k;
	struct page_query q;
	struct svc_rows *rows = NULL;
	struct json_object *body;
	char filter[2048];
	enum svc_app_rule rule;
	int err;

	memset(&q, 0, sizeof q);
	if ((err = coll_open(req, resp, &k)) < 0)
		goto done;
	rule = k.c->rules[SVC_APP_LIST];
	if ((err = svc_app_rule_check(rule, k.site.user_id, NULL)) < 0) {
		err = rule_refused(resp, err);
		goto done;
	}
	if ((err = parse_list(req, resp, k.c, filter, sizeof filter, &q)) < 0)
		goto done;
	/* under owner, only the caller's records, whatever the filter says */
	if ((err = page_run(req->ctx->db, &k, &q, rule == SVC_APP_OWNER ? k.site.user_id : NULL, &rows)) < 0)
		goto done;
	if ((err = page_json(rows, &q, &body)) < 0)
		goto done;
	err = svc_resp_json(resp, 200, body);
done:
	svc_rows_free(rows);
	svc_app_decl_free(k.decl);
	return err;
}
