/* app_decl.c: svc.data.json parsed and checked, with messages that name the line; the declaration in force (app_decl.h). */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "core/err.h"
#include "core/fsx.h"
#include "core/json.h"
#include "core/log.h"
#include "core/util.h"
#include "integ/inject.h"
#include "project/app_decl.h"

#define PATH_MAX_LEN 512
#define STRING_MAX_DEFAULT 1000
#define STRING_MAX_BOUND 100000
#define TEXT_MAX_DEFAULT 100000
#define TEXT_MAX_BOUND 1000000
#define JSON_MAX_DEFAULT 65536
#define JSON_MAX_BOUND (1024 * 1024)
#define INDEX_VALUE_MAX 191 /* bytes of app_record_index.value */

static const char *const ftype_names[SVC_APP_FTYPE__MAX] = {
	"string", "text", "number", "boolean", "datetime", "json", "file", "user",
};
static const char *const rule_names[SVC_APP_RULE__MAX] = { "public", "user", "owner", "none" };
static const char *const op_names[SVC_APP_OP__MAX] = { "list", "get", "create", "update", "delete" };
static const char *const reserved_fields[] = { "id", "owner", "createdAt", "updatedAt" };

const char *svc_app_ftype_name(enum svc_app_ftype t)
{
	return t < SVC_APP_FTYPE__MAX ? ftype_names[t] : "";
}

const char *svc_app_rule_name(enum svc_app_rule r)
{
	return r < SVC_APP_RULE__MAX ? rule_names[r] : "";
}

/* ---- where each key is: a scan of the text that notes the line of every member's key by its dotted path ---- */

struct keyline {
	char *path;
	int line;
};

struct scan {
	const char *s;
	size_t len, pos;
	int line;
	struct keyline *kl;
	size_t n, cap;
	char path[PATH_MAX_LEN];
	size_t plen;
	int depth;
};

static void scan_ws(struct scan *sc)
{
	while (sc->pos < sc->len && strchr(" \t\r\n", sc->s[sc->pos])) {
		if (sc->s[sc->pos] == '\n')
			sc->line++;
		sc->pos++;
	}
}

/* Skips a string at sc->pos (its opening quote); sets *start and *n to its raw text. Returns 0 or -1. */
static int scan_string(struct scan *sc, size_t *start, size_t *n)
{
	if (sc->pos >= sc->len || sc->s[sc->pos] != '"')
		return -1;
	*start = ++sc->pos;
	while (sc->pos < sc->len && sc->s[sc->pos] != '"') {
		if (sc->s[sc->pos] == '\\')
			sc->pos++;
		else if (sc->s[sc->pos] == '\n')
			return -1;
		sc->pos++;
	}
	if (sc->pos >= sc->len)
		return -1;
	*n = sc->pos - *start;
	sc->pos++;
	return 0;
}

/* Notes the line of the member whose key is text[start..start+n) under the current path; extends the path. */
static int scan_note(struct scan *sc, const char *key, size_t n, int line)
{
	size_t old = sc->plen;

	if (sc->plen + n + 2 >= sizeof sc->path)
		return -1;
	if (sc->plen)
		sc->path[sc->plen++] = '.';
	memcpy(sc->path + sc->plen, key, n);
	sc->plen += n;
	sc->path[sc->plen] = '\0';
	if (SVC_ARRAY_GROW(sc->kl, sc->cap, sc->n + 1) < 0 || !(sc->kl[sc->n].path = strdup(sc->path))) {
		sc->plen = old;
		return -1;
	}
	sc->kl[sc->n++].line = line;
	return 0;
}

static int scan_value(struct scan *sc);

/* An object or an array at sc->pos: each member's (or element's) line noted, by key (or index). */
static int scan_container(struct scan *sc, char close)
{
	size_t i = 0, base = sc->plen;
	char num[24];

	sc->pos++;
	for (;; i++) {
		size_t start = 0, n = 0;
		int line;
		scan_ws(sc);
		if (sc->pos < sc->len && sc->s[sc->pos] == close && i == 0)
			break;
		line = sc->line;
		if (close == '}') {
			if (scan_string(sc, &start, &n) < 0)
				return -1;
			scan_ws(sc);
			if (sc->pos >= sc->len || sc->s[sc->pos] != ':')
				return -1;
			sc->pos++;
			scan_ws(sc);
			if (scan_note(sc, sc->s + start, n, line) < 0)
				return -1;
		} else {
			snprintf(num, sizeof num, "%zu", i);
			if (scan_note(sc, num, strlen(num), line) < 0)
				return -1;
		}
		if (scan_value(sc) < 0)
			return -1;
		sc->plen = base;
		sc->path[base] = '\0';
		scan_ws(sc);
		if (sc->pos < sc->len && sc->s[sc->pos] == ',') {
			sc->pos++;
			continue;
		}
		if (sc->pos < sc->len && sc->s[sc->pos] == close)
			break;
		return -1;
	}
	sc->pos++;
	return 0;
}

static int scan_value(struct scan *sc)
{
	size_t start, n;
	int err;

	scan_ws(sc);
	if (sc->pos >= sc->len || ++sc->depth > SVC_JSON_DEPTH_MAX)
		return -1;
	if (sc->s[sc->pos] == '{' || sc->s[sc->pos] == '[')
		err = scan_container(sc, sc->s[sc->pos] == '{' ? '}' : ']');
	else if (sc->s[sc->pos] == '"')
		err = scan_string(sc, &start, &n);
	else {
		while (sc->pos < sc->len && !strchr(",}] \t\r\n", sc->s[sc->pos]))
			sc->pos++;
		err = 0;
	}
	sc->depth--;
	return err;
}

static void scan_dispose(struct scan *sc)
{
	size_t i;

	for (i = 0; i < sc->n; i++)
		free(sc->kl[i].path);
	free(sc->kl);
}

/* The line of the member at `path` ("collections.todos.fields"), else of the nearest enclosing one, else 1. */
static int line_of(const struct scan *sc, const char *path)
{
	char p[PATH_MAX_LEN];
	size_t i;

	snprintf(p, sizeof p, "%s", path);
	for (;;) {
		char *dot;
		for (i = 0; i < sc->n; i++)
			if (strcmp(sc->kl[i].path, p) == 0)
				return sc->kl[i].line;
		dot = strrchr(p, '.');
		if (!dot)
			return 1;
		*dot = '\0';
	}
}

/* `a` "." `b` into out (PATH_MAX_LEN bytes), cut to fit. */
static void path_join(char *out, const char *a, const char *b)
{
	size_t la = strnlen(a, PATH_MAX_LEN - 2), lb = strnlen(b, PATH_MAX_LEN);

	if (la + 1 + lb >= PATH_MAX_LEN)
		lb = PATH_MAX_LEN - 2 - la;
	memmove(out, a, la);
	out[la] = '.';
	memcpy(out + la + 1, b, lb);
	out[la + 1 + lb] = '\0';
}

/* ---- the checks ---- */

struct parse {
	struct scan sc;
	char *msg;
	size_t max;
};

/* Writes "svc.data.json line N: <path>: <text>" and returns SVC_E_VALIDATION. */
static int refuse(struct parse *p, const char *path, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int refuse(struct parse *p, const char *path, const char *fmt, ...)
{
	char what[300];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	snprintf(p->msg, p->max, SVC_APP_DECL_FILE " line %d: %s%s%s", line_of(&p->sc, path), path, *path ? ": " : "",
		 what);
	return SVC_E_VALIDATION;
}

static int name_ok(const char *s)
{
	size_t i, n = strlen(s);

	if (n == 0 || n > SVC_APP_NAME_MAX || !((s[0] >= 'A' && s[0] <= 'Z') || (s[0] >= 'a' && s[0] <= 'z') || s[0] == '_'))
		return 0;
	for (i = 1; i < n; i++)
		if (!((s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') ||
		      s[i] == '_'))
			return 0;
	return 1;
}

static int lookup(const char *const *names, size_t n, const char *s)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (strcmp(names[i], s) == 0)
			return (int)i;
	return -1;
}

/* A bound "min" or "max" of field `f` at `path`: a number (for number) or a positive integer up to `bound`. */
static int field_bound(struct parse *p, const char *path, struct svc_app_field *f, const char *key,
		       struct json_object *v, long long bound)
{
	char at[PATH_MAX_LEN];

	path_join(at, path, key);
	if (f->type == SVC_APP_NUMBER) {
		double d;
		if (!json_object_is_type(v, json_type_int) && !json_object_is_type(v, json_type_double))
			return refuse(p, at, "must be a number");
		d = json_object_get_double(v);
		if (!isfinite(d))
			return refuse(p, at, "must be a finite number");
		if (key[1] == 'i') {
			f->has_min = 1;
			f->min = d;
		} else {
			f->has_max = 1;
			f->max = d;
		}
		return 0;
	}
	if (bound == 0 || key[1] == 'i')
		return refuse(p, at, "is not a bound of a %s field", ftype_names[f->type]);
	if (!json_object_is_type(v, json_type_int) || json_object_get_int64(v) < 1 || json_object_get_int64(v) > bound)
		return refuse(p, at, "must be an integer from 1 to %lld", bound);
	f->max_len = (size_t)json_object_get_int64(v);
	return 0;
}

static int parse_field(struct parse *p, const char *path, const char *name, struct json_object *o,
		       struct svc_app_field *f)
{
	struct json_object *t;
	char at[PATH_MAX_LEN];
	long long bound = 0;
	int i, err;

	if (!name_ok(name))
		return refuse(p, path, "a field's name is letters, digits and _, not starting with a digit, at most 64");
	if (lookup(reserved_fields, sizeof reserved_fields / sizeof reserved_fields[0], name) >= 0)
		return refuse(p, path, "%s is set by the server and cannot be declared", name);
	if (!json_object_is_type(o, json_type_object))
		return refuse(p, path, "a field is an object {\"type\": ...}");
	snprintf(f->name, sizeof f->name, "%s", name);
	path_join(at, path, "type");
	if (!json_object_object_get_ex(o, "type", &t))
		return refuse(p, path, "type is required");
	if (!json_object_is_type(t, json_type_string) ||
	    (i = lookup(ftype_names, SVC_APP_FTYPE__MAX, json_object_get_string(t))) < 0)
		return refuse(p, at, "unknown type %s (one of string, text, number, boolean, datetime, json, file, user)",
			      json_object_to_json_string_ext(t, JSON_C_TO_STRING_PLAIN));
	f->type = (enum svc_app_ftype)i;
	f->max_len = f->type == SVC_APP_STRING ? STRING_MAX_DEFAULT :
		     f->type == SVC_APP_TEXT   ? TEXT_MAX_DEFAULT :
		     f->type == SVC_APP_JSON   ? JSON_MAX_DEFAULT : 0;
	bound = f->type == SVC_APP_STRING ? STRING_MAX_BOUND :
		f->type == SVC_APP_TEXT   ? TEXT_MAX_BOUND :
		f->type == SVC_APP_JSON   ? JSON_MAX_BOUND : 0;
	json_object_object_foreach(o, key, v) {
		path_join(at, path, key);
		if (strcmp(key, "type") == 0)
			continue;
		if (strcmp(key, "required") == 0) {
			if (!json_object_is_type(v, json_type_boolean))
				return refuse(p, at, "must be true or false");
			f->required = json_object_get_boolean(v);
		} else if (strcmp(key, "min") == 0 || strcmp(key, "max") == 0) {
			if ((err = field_bound(p, path, f, key, v, bound)) < 0)
				return err;
		} else {
			return refuse(p, at, "unknown key (type, required, min, max)");
		}
	}
	if (f->has_min && f->has_max && f->min > f->max)
		return refuse(p, path, "min is greater than max");
	return 0;
}

static int parse_rules(struct parse *p, const char *path, struct json_object *o, struct svc_app_collection *c)
{
	char at[PATH_MAX_LEN];
	int op, r;

	if (!json_object_is_type(o, json_type_object))
		return refuse(p, path, "rules is an object {\"list\": \"owner\", ...}");
	json_object_object_foreach(o, key, v) {
		path_join(at, path, key);
		if ((op = lookup(op_names, SVC_APP_OP__MAX, key)) < 0)
			return refuse(p, at, "unknown operation (list, get, create, update, delete)");
		if (!json_object_is_type(v, json_type_string) ||
		    (r = lookup(rule_names, SVC_APP_RULE__MAX, json_object_get_string(v))) < 0)
			return refuse(p, at, "unknown rule %s (public, user, owner, none)",
				      json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN));
		c->rules[op] = (enum svc_app_rule)r;
	}
	return 0;
}

static int parse_indexes(struct parse *p, const char *path, struct json_object *a, struct svc_app_collection *c)
{
	char at[PATH_MAX_LEN];
	size_t i, j, n;

	if (!json_object_is_type(a, json_type_array))
		return refuse(p, path, "indexes is an array of field names");
	n = json_object_array_length(a);
	if (n > SVC_APP_MAX_INDEXES)
		return refuse(p, path, "at most %d indexes", SVC_APP_MAX_INDEXES);
	for (i = 0; i < n; i++) {
		struct json_object *v = json_object_array_get_idx(a, i);
		struct svc_app_field *f = NULL;
		{
			char num[24];
			snprintf(num, sizeof num, "%zu", i);
			path_join(at, path, num);
		}
		for (j = 0; json_object_is_type(v, json_type_string) && j < c->nfields; j++)
			if (strcmp(c->fields[j].name, json_object_get_string(v)) == 0)
				f = &c->fields[j];
		if (!f)
			return refuse(p, at, "%s is not a declared field",
				      json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN));
		if (f->type == SVC_APP_TEXT || f->type == SVC_APP_JSON)
			return refuse(p, at, "a %s field cannot be indexed", ftype_names[f->type]);
		if (f->indexed)
			return refuse(p, at, "%s is indexed twice", f->name);
		f->indexed = 1;
	}
	return 0;
}

static int parse_collection(struct parse *p, const char *path, const char *name, struct json_object *o,
			    struct svc_app_collection *c)
{
	struct json_object *fields = NULL, *v;
	char at[PATH_MAX_LEN];
	size_t i;
	int err;

	if (!name_ok(name))
		return refuse(p, path, "a collection's name is letters, digits and _, not starting with a digit, at most 64");
	if (!json_object_is_type(o, json_type_object))
		return refuse(p, path, "a collection is an object {\"fields\": {...}}");
	snprintf(c->name, sizeof c->name, "%s", name);
	for (i = 0; i < SVC_APP_OP__MAX; i++)
		c->rules[i] = SVC_APP_OWNER;
	json_object_object_foreach(o, key, val) {
		(void)val;
		if (strcmp(key, "fields") && strcmp(key, "rules") && strcmp(key, "indexes")) {
			path_join(at, path, key);
			return refuse(p, at, "unknown key (fields, rules, indexes)");
		}
	}
	path_join(at, path, "fields");
	if (!json_object_object_get_ex(o, "fields", &fields))
		return refuse(p, path, "fields is required");
	if (!json_object_is_type(fields, json_type_object))
		return refuse(p, at, "fields is an object {name: {\"type\": ...}}");
	if (json_object_object_length(fields) > SVC_APP_MAX_FIELDS)
		return refuse(p, at, "at most %d fields", SVC_APP_MAX_FIELDS);
	c->fields = calloc((size_t)json_object_object_length(fields) + 1, sizeof *c->fields);
	if (!c->fields)
		return SVC_E_INTERNAL;
	json_object_object_foreach(fields, fname, fo) {
		char fat[PATH_MAX_LEN];
		path_join(fat, path, "fields");
		path_join(fat, fat, fname);
		if ((err = parse_field(p, fat, fname, fo, &c->fields[c->nfields])) < 0)
			return err;
		c->nfields++;
	}
	path_join(at, path, "rules");
	if (json_object_object_get_ex(o, "rules", &v) && (err = parse_rules(p, at, v, c)) < 0)
		return err;
	path_join(at, path, "indexes");
	if (json_object_object_get_ex(o, "indexes", &v) && (err = parse_indexes(p, at, v, c)) < 0)
		return err;
	return 0;
}

/* ---- appfetch: the "fetch" block, named server-side calls (docs/app-backend.md "Secrets and calls") ---- */

/* "headers": {name: value} of call `f` at `path`; values may name secrets as {{secrets.NAME}}. */
static int parse_fetch_headers(struct parse *p, const char *path, struct json_object *o, struct svc_app_fetch *f)
{
	char at[PATH_MAX_LEN], why[200];

	if (!json_object_is_type(o, json_type_object))
		return refuse(p, path, "headers is an object {\"Name\": \"value\"}");
	if (json_object_object_length(o) > SVC_APP_FETCH_MAX_HEADERS)
		return refuse(p, path, "at most %d headers", SVC_APP_FETCH_MAX_HEADERS);
	json_object_object_foreach(o, key, v) {
		path_join(at, path, key);
		if (!svc_integ_header_name_valid(key))
			return refuse(p, at, "a header's name is 1 to 64 letters, digits, - and _");
		if (strcasecmp(key, "Host") == 0 || strcasecmp(key, "Content-Length") == 0 ||
		    strcasecmp(key, "Transfer-Encoding") == 0 || strcasecmp(key, "Connection") == 0)
			return refuse(p, at, "%s is set by svc", key);
		if (!json_object_is_type(v, json_type_string) || json_object_get_string_len(v) > SVC_APP_FETCH_HEADER_MAX)
			return refuse(p, at, "a header's value is a string of at most %d bytes", SVC_APP_FETCH_HEADER_MAX);
		if (svc_app_fetch_header_value_check(json_object_get_string(v), why, sizeof why) < 0)
			return refuse(p, at, "%s", why);
		snprintf(f->headers[f->nheaders].name, sizeof f->headers[0].name, "%s", key);
		snprintf(f->headers[f->nheaders].value, sizeof f->headers[0].value, "%s", json_object_get_string(v));
		f->nheaders++;
	}
	return 0;
}

/* One call {"url", "headers"?, "methods"?, "rule"?} named `name` at `path`. */
static int parse_fetch_call(struct parse *p, const char *path, const char *name, struct json_object *o,
			    struct svc_app_fetch *f)
{
	struct json_object *v;
	char at[PATH_MAX_LEN], why[200];
	size_t i;
	int err, r;

	if (!name_ok(name))
		return refuse(p, path, "a call's name is letters, digits and _, not starting with a digit, at most 64");
	if (!json_object_is_type(o, json_type_object))
		return refuse(p, path, "a call is an object {\"url\": \"https://...\"}");
	snprintf(f->name, sizeof f->name, "%s", name);
	f->methods = SVC_APP_FETCH_GET;
	f->rule = SVC_APP_SIGNED_IN;
	path_join(at, path, "url");
	if (!json_object_object_get_ex(o, "url", &v))
		return refuse(p, path, "url is required");
	if (!json_object_is_type(v, json_type_string) || svc_app_fetch_url_set(f, json_object_get_string(v), why, sizeof why) < 0)
		return refuse(p, at, "%s", json_object_is_type(v, json_type_string) ? why : "must be an https:// URL");
	json_object_object_foreach(o, key, val) {
		path_join(at, path, key);
		if (strcmp(key, "url") == 0)
			continue;
		if (strcmp(key, "headers") == 0) {
			if ((err = parse_fetch_headers(p, at, val, f)) < 0)
				return err;
		} else if (strcmp(key, "methods") == 0) {
			if (!json_object_is_type(val, json_type_array) || json_object_array_length(val) == 0)
				return refuse(p, at, "methods is a list such as [\"GET\", \"POST\"]");
			f->methods = 0;
			for (i = 0; i < json_object_array_length(val); i++) {
				struct json_object *m = json_object_array_get_idx(val, i);
				unsigned bit = json_object_is_type(m, json_type_string) ? svc_app_fetch_method_bit(json_object_get_string(m)) : 0;
				if (!bit)
					return refuse(p, at, "unknown method %s (GET, POST, PUT, PATCH, DELETE)",
						      json_object_to_json_string_ext(m, JSON_C_TO_STRING_PLAIN));
				f->methods |= bit;
			}
		} else if (strcmp(key, "rule") == 0) {
			if (!json_object_is_type(val, json_type_string) ||
			    (r = lookup(rule_names, SVC_APP_RULE__MAX, json_object_get_string(val))) < 0 || r == SVC_APP_OWNER)
				return refuse(p, at, "unknown rule %s (public, user, none: a call has no owner)",
					      json_object_to_json_string_ext(val, JSON_C_TO_STRING_PLAIN));
			f->rule = r;
		} else {
			return refuse(p, at, "unknown key (url, headers, methods, rule)");
		}
	}
	return 0;
}

/* "fetch": {name: call}. */
static int parse_fetch(struct parse *p, struct json_object *o, struct svc_app_decl *d)
{
	int err;

	if (!json_object_is_type(o, json_type_object))
		return refuse(p, "fetch", "fetch is an object {name: {\"url\": ...}}");
	if (json_object_object_length(o) > SVC_APP_MAX_FETCHES)
		return refuse(p, "fetch", "at most %d calls", SVC_APP_MAX_FETCHES);
	if (!(d->fetches = calloc((size_t)json_object_object_length(o) + 1, sizeof *d->fetches)))
		return SVC_E_INTERNAL;
	json_object_object_foreach(o, name, call) {
		char at[PATH_MAX_LEN];
		path_join(at, "fetch", name);
		if ((err = parse_fetch_call(p, at, name, call, &d->fetches[d->nfetches])) < 0)
			return err;
		d->nfetches++;
	}
	return 0;
}

/* ---- the "files" block: {"rules": {"create"|"get"|"delete": rule}}, each owner when not given ---- */

static int parse_files(struct parse *p, struct json_object *o, struct svc_app_decl *d)
{
	struct json_object *rules = NULL;
	char at[PATH_MAX_LEN];
	int op, r;

	if (!json_object_is_type(o, json_type_object))
		return refuse(p, "files", "files is an object {\"rules\": {\"create\": \"user\", ...}}");
	json_object_object_foreach(o, key, val) {
		(void)val;
		if (strcmp(key, "rules") != 0) {
			path_join(at, "files", key);
			return refuse(p, at, "unknown key (rules)");
		}
	}
	if (!json_object_object_get_ex(o, "rules", &rules))
		return 0;
	if (!json_object_is_type(rules, json_type_object))
		return refuse(p, "files.rules", "rules is an object {\"get\": \"public\", ...}");
	json_object_object_foreach(rules, op_name, v) {
		path_join(at, "files.rules", op_name);
		op = lookup(op_names, SVC_APP_OP__MAX, op_name);
		if (op != SVC_APP_CREATE && op != SVC_APP_GET && op != SVC_APP_DELETE)
			return refuse(p, at, "unknown operation of files (create, get, delete)");
		if (!json_object_is_type(v, json_type_string) ||
		    (r = lookup(rule_names, SVC_APP_RULE__MAX, json_object_get_string(v))) < 0)
			return refuse(p, at, "unknown rule %s (public, user, owner, none)",
				      json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN));
		d->file_rules[op] = (enum svc_app_rule)r;
	}
	return 0;
}

const struct svc_app_fetch *svc_app_decl_fetch(const struct svc_app_decl *d, const char *name)
{
	size_t i;

	for (i = 0; d && i < d->nfetches; i++)
		if (strcmp(d->fetches[i].name, name) == 0)
			return &d->fetches[i];
	return NULL;
}

/* ---- end of the "fetch" block ---- */

enum svc_app_rule svc_app_decl_file_rule(const struct svc_app_decl *d, enum svc_app_op op)
{
	return d && op < SVC_APP_OP__MAX ? d->file_rules[op] : SVC_APP_OWNER;
}

/* The root object: {"collections": {...}, "files"?: {...}}. */
static int parse_root(struct parse *p, struct json_object *root, struct svc_app_decl *d)
{
	struct json_object *cols, *files = NULL, *fetch = NULL;
	size_t op;
	int err;

	if (!json_object_is_type(root, json_type_object))
		return refuse(p, "", "the file is a JSON object {\"collections\": {...}}");
	for (op = 0; op < SVC_APP_OP__MAX; op++)
		d->file_rules[op] = SVC_APP_OWNER;
	json_object_object_foreach(root, key, val) {
		(void)val;
		if (strcmp(key, "fetch") == 0) /* appfetch */
			continue;
		if (strcmp(key, "collections") != 0 && strcmp(key, "files") != 0)
			return refuse(p, key, "unknown key (collections, files, fetch)");
	}
	if (json_object_object_get_ex(root, "files", &files) && (err = parse_files(p, files, d)) < 0)
		return err;
	if (json_object_object_get_ex(root, "fetch", &fetch) && (err = parse_fetch(p, fetch, d)) < 0) /* appfetch */
		return err;
	if (!json_object_object_get_ex(root, "collections", &cols))
		return files || fetch ? 0 : refuse(p, "", "collections is required");
	if (!json_object_is_type(cols, json_type_object))
		return refuse(p, "collections", "collections is an object {name: {\"fields\": ...}}");
	if (json_object_object_length(cols) > SVC_APP_MAX_COLLECTIONS)
		return refuse(p, "collections", "at most %d collections", SVC_APP_MAX_COLLECTIONS);
	d->collections = calloc((size_t)json_object_object_length(cols) + 1, sizeof *d->collections);
	if (!d->collections)
		return SVC_E_INTERNAL;
	json_object_object_foreach(cols, cname, co) {
		char at[PATH_MAX_LEN];
		path_join(at, "collections", cname);
		if ((err = parse_collection(p, at, cname, co, &d->collections[d->ncollections])) < 0)
			return err;
		d->ncollections++;
	}
	return 0;
}

/* The line of byte offset `off` of `text`. */
static int line_at(const char *text, size_t off)
{
	int line = 1;
	size_t i;

	for (i = 0; i < off; i++)
		line += text[i] == '\n';
	return line;
}

int svc_app_decl_parse(const char *text, size_t len, struct svc_app_decl **out, char *msg, size_t max)
{
	struct parse p = { .msg = msg, .max = max };
	struct json_tokener *tok = NULL;
	struct json_object *root = NULL;
	struct svc_app_decl *d = NULL;
	int err = 0;

	if (len > SVC_APP_DECL_MAX) {
		snprintf(msg, max, SVC_APP_DECL_FILE " line 1: the file is over %u KiB", SVC_APP_DECL_MAX / 1024);
		return SVC_E_VALIDATION;
	}
	if (!svc_utf8_valid(text, len) || memchr(text, '\0', len)) {
		snprintf(msg, max, SVC_APP_DECL_FILE " line 1: the file is not UTF-8 text");
		return SVC_E_VALIDATION;
	}
	if (!(tok = json_tokener_new_ex(SVC_JSON_DEPTH_MAX)))
		return SVC_E_INTERNAL;
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
	root = json_tokener_parse_ex(tok, text, (int)len);
	if (!root || json_tokener_get_error(tok) != json_tokener_success ||
	    json_tokener_get_parse_end(tok) < len) {
		size_t end = json_tokener_get_parse_end(tok);
		/* what follows the value must be white space only */
		while (root && end < len && strchr(" \t\r\n", text[end]))
			end++;
		if (!root || end < len) {
			snprintf(msg, max, SVC_APP_DECL_FILE " line %d: not valid JSON (%s)", line_at(text, end > len ? len : end),
				 root ? "text after the end" : json_tokener_error_desc(json_tokener_get_error(tok)));
			err = SVC_E_VALIDATION;
			goto done;
		}
	}
	p.sc.s = text;
	p.sc.len = len;
	p.sc.line = 1;
	scan_value(&p.sc); /* the text parsed above: where each key is, for the messages */
	if (!(d = calloc(1, sizeof *d))) {
		err = SVC_E_INTERNAL;
		goto done;
	}
	if ((err = parse_root(&p, root, d)) < 0)
		goto done;
	if ((err = svc_sha256_hex(text, len, d->sha256)) < 0)
		goto done;
	*out = d;
	d = NULL;
done:
	scan_dispose(&p.sc);
	svc_app_decl_free(d);
	json_object_put(root);
	json_tokener_free(tok);
	return err;
}

void svc_app_decl_free(struct svc_app_decl *d)
{
	size_t i;

	if (!d)
		return;
	for (i = 0; i < d->ncollections + 1 && d->collections; i++)
		free(d->collections[i].fields);
	free(d->collections);
	free(d->fetches); /* appfetch */
	free(d);
}

const struct svc_app_collection *svc_app_decl_collection(const struct svc_app_decl *d, const char *name)
{
	size_t i;

	for (i = 0; d && i < d->ncollections; i++)
		if (strcmp(d->collections[i].name, name) == 0)
			return &d->collections[i];
	return NULL;
}

const struct svc_app_field *svc_app_decl_field(const struct svc_app_collection *c, const char *name)
{
	size_t i;

	for (i = 0; c && i < c->nfields; i++)
		if (strcmp(c->fields[i].name, name) == 0)
			return &c->fields[i];
	return NULL;
}

int svc_app_decl_guard(const char *path, const char *content, size_t len, char *msg, size_t max)
{
	struct svc_app_decl *d = NULL;
	int err;

	if (!path || strcmp(path, SVC_APP_DECL_FILE) != 0)
		return 0;
	err = svc_app_decl_parse(content, len, &d, msg, max);
	svc_app_decl_free(d);
	return err == SVC_E_INTERNAL ? err : err < 0 ? SVC_E_VALIDATION : 0;
}

int svc_app_decl_guard_rename(const char *dir, const char *from, const char *to, char *msg, size_t max)
{
	char *text = NULL;
	size_t len = 0;
	int err;

	if (!to || strcmp(to, SVC_APP_DECL_FILE) != 0)
		return 0;
	err = svc_fsx_read(dir, from, SVC_APP_DECL_MAX + 1, &text, &len);
	if (err == SVC_E_TOO_LARGE) {
		snprintf(msg, max, SVC_APP_DECL_FILE " line 1: the file is over %u KiB", SVC_APP_DECL_MAX / 1024);
		return SVC_E_VALIDATION;
	}
	if (err < 0)
		return 0;
	err = svc_app_decl_guard(to, text, len, msg, max);
	free(text);
	return err;
}

int svc_app_index_value(const struct svc_app_field *f, struct json_object *v, char *out, size_t max)
{
	size_t n;
	int w;

	if (!v || max < INDEX_VALUE_MAX + 1)
		return SVC_E_VALIDATION;
	switch (f->type) {
	case SVC_APP_NUMBER:
		if (!json_object_is_type(v, json_type_int) && !json_object_is_type(v, json_type_double))
			return SVC_E_VALIDATION;
		w = snprintf(out, max, "%.17g", json_object_get_double(v));
		return w < 0 || (size_t)w >= max ? SVC_E_VALIDATION : 0;
	case SVC_APP_BOOLEAN:
		if (!json_object_is_type(v, json_type_boolean))
			return SVC_E_VALIDATION;
		snprintf(out, max, "%s", json_object_get_boolean(v) ? "true" : "false");
		return 0;
	case SVC_APP_STRING: case SVC_APP_DATETIME: case SVC_APP_FILE: case SVC_APP_USER:
		if (!json_object_is_type(v, json_type_string))
			return SVC_E_VALIDATION;
		n = svc_utf8_cut(json_object_get_string(v), (size_t)json_object_get_string_len(v), INDEX_VALUE_MAX);
		memcpy(out, json_object_get_string(v), n);
		out[n] = '\0';
		return 0;
	default:
		return SVC_E_VALIDATION;
	}
}

/* ---- the declaration in force ---- */

/* The last valid declaration remembered for `project_id`: parsed into *out (NULL when none). */
static int decl_remembered(struct svc_db *db, const char *project_id, struct svc_app_decl **out)
{
	struct svc_dbv p = svc_dbv_str(project_id);
	struct svc_rows *rows = NULL;
	char msg[256];
	int err;

	*out = NULL;
	if ((err = svc_db_run(db, STMT_APP_DECL_GET, &p, 1, &rows, NULL)) < 0)
		return err;
	if (rows && rows->nrows == 1) {
		const char *body = svc_rows_get(rows, 0, ADCOL_BODY);
		if (svc_app_decl_parse(body, rows->lens[ADCOL_BODY], out, msg, sizeof msg) < 0)
			svc_log_error("app: project %s: the remembered declaration does not parse: %s", project_id, msg);
	}
	svc_rows_free(rows);
	return 0;
}

/*
 * The declarations this process last knew to be remembered in MariaDB, by project: a request whose
 * file has that very text makes no round trip to check it again, and one whose file has not changed
 * since (the same inode, size and mtime: svc writes a file to a temporary one renamed into place, so
 * each save is a new inode) is not read or parsed again (one request at a time per process).
 */
#define SYNCED_SLOTS 16
static struct {
	char project_id[37];
	char sha256[65];
	struct stat st;            /* of the file parsed into `decl` */
	struct svc_app_decl *decl; /* the parsed valid declaration, or NULL */
} synced[SYNCED_SLOTS];

/* A copy of `d` (the caller frees it with svc_app_decl_free()), or NULL when out of memory. */
static struct svc_app_decl *decl_copy(const struct svc_app_decl *d)
{
	struct svc_app_decl *c = calloc(1, sizeof *c);
	size_t i;

	if (!c || !(c->collections = calloc(d->ncollections + 1, sizeof *c->collections))) {
		free(c);
		return NULL;
	}
	memcpy(c->sha256, d->sha256, sizeof c->sha256);
	if (d->nfetches) { /* appfetch */
		if (!(c->fetches = calloc(d->nfetches, sizeof *c->fetches))) {
			svc_app_decl_free(c);
			return NULL;
		}
		memcpy(c->fetches, d->fetches, d->nfetches * sizeof *c->fetches);
		c->nfetches = d->nfetches;
	}
	memcpy(c->file_rules, d->file_rules, sizeof c->file_rules);
	for (i = 0; i < d->ncollections; i++) {
		c->collections[i] = d->collections[i];
		c->collections[i].fields = calloc(d->collections[i].nfields + 1, sizeof *c->collections[i].fields);
		c->ncollections = i + 1;
		if (!c->collections[i].fields) {
			svc_app_decl_free(c);
			return NULL;
		}
		memcpy(c->collections[i].fields, d->collections[i].fields, d->collections[i].nfields * sizeof *c->collections[i].fields);
	}
	return c;
}

/* 1 when `a` and `b` describe the same version of a file. */
static int same_file(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size &&
	       a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}

/* The slot of `project_id` (by a hash of the id: a collision only costs a check). */
static size_t synced_slot(const char *project_id)
{
	uint32_t h = 2166136261u;

	for (; *project_id; project_id++)
		h = (h ^ (unsigned char)*project_id) * 16777619u;
	return h % SYNCED_SLOTS;
}

int svc_app_decl_load(struct svc_db *db, const char *project_id, const char *dir, struct svc_app_decl **out)
{
	size_t slot = synced_slot(project_id);
	struct svc_dbv p[3];
	char *text = NULL, msg[512], known[65] = "";
	struct svc_rows *rows = NULL;
	struct svc_app_decl *d = NULL;
	size_t len = 0;
	struct stat st;
	char path[2200];
	int err, have_st;

	/* the file as it was when this process last parsed it: the same declaration (lstat: a symlink is never
	 * followed here; svc_fsx_read() below refuses one) */
	have_st = snprintf(path, sizeof path, "%s/" SVC_APP_DECL_FILE, dir) < (int)sizeof path && lstat(path, &st) == 0 &&
		  S_ISREG(st.st_mode);
	if (have_st && synced[slot].decl && strcmp(synced[slot].project_id, project_id) == 0 &&
	    same_file(&st, &synced[slot].st)) {
		if (!(*out = decl_copy(synced[slot].decl)))
			return SVC_E_INTERNAL;
		return 0;
	}
	err = svc_fsx_read(dir, SVC_APP_DECL_FILE, SVC_APP_DECL_MAX, &text, &len);
	if (err == SVC_E_NOT_FOUND) {
		*out = NULL;
		return 0;
	}
	if (err == 0 && svc_app_decl_parse(text, len, &d, msg, sizeof msg) == 0) {
		/* remember it as the last valid one, unless it is that already */
		p[0] = svc_dbv_str(project_id);
		if (strcmp(synced[slot].project_id, project_id) == 0)
			snprintf(known, sizeof known, "%s", synced[slot].sha256);
		else if (svc_db_run(db, STMT_APP_DECL_SHA, p, 1, &rows, NULL) == 0 && rows && rows->nrows == 1)
			snprintf(known, sizeof known, "%s", svc_rows_get(rows, 0, ADSCOL_SHA));
		svc_rows_free(rows);
		if (strcmp(known, d->sha256) != 0) {
			p[1] = svc_dbv_str(d->sha256);
			p[2] = (struct svc_dbv){ SVC_DBV_STR, text, len, 0 };
			if ((err = svc_db_run(db, STMT_APP_DECL_PUT, p, 3, NULL, NULL)) < 0) {
				svc_app_decl_free(d);
				free(text);
				return err;
			}
		}
		snprintf(synced[slot].project_id, sizeof synced[slot].project_id, "%s", project_id);
		snprintf(synced[slot].sha256, sizeof synced[slot].sha256, "%s", d->sha256);
		svc_app_decl_free(synced[slot].decl);
		synced[slot].decl = have_st ? decl_copy(d) : NULL;
		if (have_st)
			synced[slot].st = st;
		free(text);
		*out = d;
		return 0;
	}
	free(text);
	return decl_remembered(db, project_id, out);
}

/* ---- rules and records ---- */

int svc_app_rule_check(enum svc_app_rule rule, const char *user_id, const char *record_owner)
{
	int signed_in = user_id && *user_id;

	switch (rule) {
	case SVC_APP_PUBLIC:
		return 0;
	case SVC_APP_SIGNED_IN:
		return signed_in ? 0 : SVC_E_UNAUTHORIZED;
	case SVC_APP_OWNER:
		if (!signed_in)
			return SVC_E_UNAUTHORIZED;
		if (record_owner && strcmp(record_owner, user_id) != 0)
			return SVC_E_NOT_FOUND;
		return 0;
	default:
		return SVC_E_FORBIDDEN;
	}
}

/* Reads `n` decimal digits at s into *out. Returns 1 when they are all digits. */
static int digits(const char *s, size_t n, int *out)
{
	size_t i;
	int v = 0;

	for (i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return 0;
		v = v * 10 + (s[i] - '0');
	}
	*out = v;
	return 1;
}

int svc_app_datetime_valid(const char *s, size_t len)
{
	static const int mdays[12] = { 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
	int y, mo, d, h, mi, sec, oh, om;
	size_t i = 19;

	/* RFC 3339 §5.6: full-date "T" partial-time time-offset */
	if (len < 20 || !digits(s, 4, &y) || s[4] != '-' || !digits(s + 5, 2, &mo) || s[7] != '-' ||
	    !digits(s + 8, 2, &d) || (s[10] != 'T' && s[10] != 't') || !digits(s + 11, 2, &h) || s[13] != ':' ||
	    !digits(s + 14, 2, &mi) || s[16] != ':' || !digits(s + 17, 2, &sec))
		return 0;
	if (mo < 1 || mo > 12 || d < 1 || d > mdays[mo - 1] || h > 23 || mi > 59 || sec > 60)
		return 0;
	if (s[i] == '.') {
		size_t start = ++i;
		while (i < len && s[i] >= '0' && s[i] <= '9')
			i++;
		if (i == start || i - start > 9)
			return 0;
	}
	if (i + 1 == len && (s[i] == 'Z' || s[i] == 'z'))
		return 1;
	return i + 6 == len && (s[i] == '+' || s[i] == '-') && digits(s + i + 1, 2, &oh) && s[i + 3] == ':' &&
	       digits(s + i + 4, 2, &om) && oh <= 23 && om <= 59;
}

/* Writes a message into msg (max bytes) and returns SVC_E_VALIDATION. */
static int bad(char *msg, size_t max, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int bad(char *msg, size_t max, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, max, fmt, ap);
	va_end(ap);
	return SVC_E_VALIDATION;
}

/* Checks one value `v` (not null) of field `f`. Returns 0 or SVC_E_VALIDATION with a message. */
static int value_check(const struct svc_app_field *f, struct json_object *v, char *msg, size_t max)
{
	const char *s = json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
	size_t n = s ? (size_t)json_object_get_string_len(v) : 0;
	double d;

	switch (f->type) {
	case SVC_APP_STRING:
	case SVC_APP_TEXT:
		if (!s || !svc_utf8_valid(s, n))
			return bad(msg, max, "%s must be a string", f->name);
		if (svc_utf8_count(s, n) > f->max_len)
			return bad(msg, max, "%s is longer than %zu characters", f->name, f->max_len);
		if (f->required && n == 0)
			return bad(msg, max, "%s must not be empty", f->name);
		return 0;
	case SVC_APP_NUMBER:
		if (!json_object_is_type(v, json_type_int) && !json_object_is_type(v, json_type_double))
			return bad(msg, max, "%s must be a number", f->name);
		d = json_object_get_double(v);
		if (!isfinite(d))
			return bad(msg, max, "%s must be a finite number", f->name);
		if ((f->has_min && d < f->min) || (f->has_max && d > f->max))
			return bad(msg, max, "%s must be from %g to %g", f->name, f->has_min ? f->min : -INFINITY,
					f->has_max ? f->max : INFINITY);
		return 0;
	case SVC_APP_BOOLEAN:
		if (!json_object_is_type(v, json_type_boolean))
			return bad(msg, max, "%s must be true or false", f->name);
		return 0;
	case SVC_APP_DATETIME:
		if (!s || !svc_app_datetime_valid(s, n))
			return bad(msg, max, "%s must be an RFC 3339 date-time (2026-11-22T01:22:11.123Z)", f->name);
		return 0;
	case SVC_APP_JSON:
		if (strlen(json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN)) > f->max_len)
			return bad(msg, max, "%s is larger than %zu bytes", f->name, f->max_len);
		return 0;
	case SVC_APP_FILE:
	case SVC_APP_USER:
		if (!s || !svc_uuid_valid(s))
			return bad(msg, max, "%s must be the id of a %s", f->name, f->type == SVC_APP_FILE ? "file" : "user");
		return 0;
	default:
		return SVC_E_VALIDATION;
	}
}

int svc_app_record_check(const struct svc_app_collection *c, struct json_object *obj, int partial,
			 const char **out_field, char *msg, size_t max)
{
	size_t i;
	int err;

	if (!json_object_is_type(obj, json_type_object)) {
		*out_field = NULL;
		snprintf(msg, max, "a record is a JSON object of its fields");
		return SVC_E_VALIDATION;
	}
	json_object_object_foreach(obj, key, v) {
		const struct svc_app_field *f = svc_app_decl_field(c, key);
		*out_field = key;
		if (lookup(reserved_fields, sizeof reserved_fields / sizeof reserved_fields[0], key) >= 0) {
			snprintf(msg, max, "%s is set by the server", key);
			return SVC_E_VALIDATION;
		}
		if (!f) {
			snprintf(msg, max, "%s is not a field of %s", key, c->name);
			return SVC_E_VALIDATION;
		}
		if (!v || json_object_is_type(v, json_type_null)) {
			if (f->required) {
				snprintf(msg, max, "%s is required", key);
				return SVC_E_VALIDATION;
			}
			continue;
		}
		if ((err = value_check(f, v, msg, max)) < 0)
			return err;
	}
	for (i = 0; !partial && i < c->nfields; i++) {
		struct json_object *got;
		if (c->fields[i].required &&
		    (!json_object_object_get_ex(obj, c->fields[i].name, &got) || json_object_is_type(got, json_type_null))) {
			*out_field = c->fields[i].name;
			snprintf(msg, max, "%s is required", c->fields[i].name);
			return SVC_E_VALIDATION;
		}
	}
	return 0;
}
