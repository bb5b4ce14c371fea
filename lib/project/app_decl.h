/* app_decl.h: svc.data.json, the declaration of an app's collections (fields, rules, indexes), parsed and checked (docs/app-backend.md). */
#ifndef SVC_APP_DECL_H
#define SVC_APP_DECL_H

#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include "core/config.h"
#include "db/db.h"
#include "project/app_fetch_decl.h"

#define SVC_APP_DECL_FILE "svc.data.json" /* at the project's root */
#define SVC_APP_DECL_MAX (256u * 1024)    /* bytes of the file */
#define SVC_APP_NAME_MAX 64               /* bytes of a collection's or a field's name: [A-Za-z_][A-Za-z0-9_]* */
#define SVC_APP_MAX_COLLECTIONS 64
#define SVC_APP_MAX_FIELDS 64             /* per collection */
#define SVC_APP_MAX_INDEXES 8             /* per collection */

enum svc_app_ftype {
	SVC_APP_STRING, SVC_APP_TEXT, SVC_APP_NUMBER, SVC_APP_BOOLEAN, SVC_APP_DATETIME, SVC_APP_JSON,
	SVC_APP_FILE, SVC_APP_USER, SVC_APP_FTYPE__MAX
};

/* Who may do an operation on the site (docs/app-backend.md "Rules"); an operation without one is SVC_APP_OWNER. */
enum svc_app_rule { SVC_APP_PUBLIC, SVC_APP_SIGNED_IN, SVC_APP_OWNER, SVC_APP_NONE, SVC_APP_RULE__MAX };

enum svc_app_op { SVC_APP_LIST, SVC_APP_GET, SVC_APP_CREATE, SVC_APP_UPDATE, SVC_APP_DELETE, SVC_APP_OP__MAX };

/* One declared field. */
struct svc_app_field {
	char name[SVC_APP_NAME_MAX + 1];
	enum svc_app_ftype type;
	int required;
	int indexed;     /* named in the collection's "indexes" */
	int has_min;     /* number: min given */
	int has_max;     /* number: max given */
	double min, max; /* number: the bounds */
	size_t max_len;  /* string, text: code points; json: bytes of its compact form */
};

/* One declared collection. */
struct svc_app_collection {
	char name[SVC_APP_NAME_MAX + 1];
	struct svc_app_field *fields;
	size_t nfields;
	enum svc_app_rule rules[SVC_APP_OP__MAX];
};

/* A parsed svc.data.json. */
struct svc_app_decl {
	struct svc_app_collection *collections;
	size_t ncollections;
	struct svc_app_fetch *fetches; /* appfetch: the "fetch" block's calls (app_fetch_decl.h) */
	size_t nfetches;
	char sha256[65]; /* of the file's bytes */
	/* the "files" block: the rules of SVC_APP_CREATE, _GET and _DELETE (the others unused), owner when not given */
	enum svc_app_rule file_rules[SVC_APP_OP__MAX];
};

/*
 * Parses and checks the text of svc.data.json (`len` bytes, at most
 * SVC_APP_DECL_MAX): a JSON object {"collections": {name: {"fields": {name:
 * {"type", "required"?, "min"?, "max"?}}, "rules"?: {op: rule}, "indexes"?:
 * [field...]}}}, names [A-Za-z_][A-Za-z0-9_]{0,63} (a field may not be
 * named id, owner, createdAt or updatedAt), types string (max code points,
 * default 1000), text (max, default 100000), number (min, max), boolean,
 * datetime, json (max bytes, default 65536), file, user; rules list, get,
 * create, update, delete, each public, user, owner or none (default owner);
 * indexes name declared fields of the scalar types (not text or json);
 * and "files"?: {"rules"?: {create|get|delete: rule}} (with it,
 * "collections" may be left out).
 * appfetch: an optional "fetch": {name: {"url", "headers"?, "methods"?,
 * "rule"?}} of at most SVC_APP_MAX_FETCHES calls (app_fetch_decl.h: the URL
 * http(s) with no user, query or fragment; header values may hold
 * {{secrets.NAME}}; methods of GET, POST, PUT, PATCH, DELETE, default GET;
 * rule public, user or none, default user).
 * Unknown keys are refused. On success sets *out (free it with
 * svc_app_decl_free()) and returns 0. Otherwise returns SVC_E_VALIDATION
 * and writes into msg (max bytes) a message that names the line (1-based)
 * and the place: "svc.data.json line 7: collections.todos.fields.title.type:
 * unknown type \"strin\" (one of ...)". SVC_E_INTERNAL when out of memory.
 */
int svc_app_decl_parse(const char *text, size_t len, struct svc_app_decl **out, char *msg, size_t max);

/*
 * The rule of files' operation `op` (SVC_APP_CREATE: an upload, SVC_APP_GET,
 * SVC_APP_DELETE) under declaration `d`: its "files" block's, SVC_APP_OWNER
 * when the block names no rule for it, when it has no block, or when `d` is
 * NULL (a project that declares nothing). docs/app-backend.md "Files".
 */
enum svc_app_rule svc_app_decl_file_rule(const struct svc_app_decl *d, enum svc_app_op op);

/* Frees a declaration; NULL is allowed. */
void svc_app_decl_free(struct svc_app_decl *d);

/* The collection `name` of `d`, or NULL. */
const struct svc_app_collection *svc_app_decl_collection(const struct svc_app_decl *d, const char *name);

/* appfetch: the call `name` of d's "fetch" block, or NULL. */
const struct svc_app_fetch *svc_app_decl_fetch(const struct svc_app_decl *d, const char *name);

/* The field `name` of collection `c`, or NULL. */
const struct svc_app_field *svc_app_decl_field(const struct svc_app_collection *c, const char *name);

/*
 * The check of every write of a project's file (the files API, the agent's
 * file tools, a push): when `path` (normalised, relative to the project's
 * root) is svc.data.json, parses `content` (`len` bytes) and, when it is not
 * a valid declaration, writes the parser's message into msg (max bytes) and
 * returns SVC_E_VALIDATION; the caller then writes nothing. 0 for any other
 * path and for a valid file.
 */
int svc_app_decl_guard(const char *path, const char *content, size_t len, char *msg, size_t max);

/*
 * svc_app_decl_guard() for a rename within working tree `dir`: when `to` is
 * svc.data.json, the file `from` (normalised paths) must be a valid
 * declaration (a file that cannot be read is left to the rename to report).
 * Returns 0 or SVC_E_VALIDATION with the message in msg (max bytes).
 */
int svc_app_decl_guard_rename(const char *dir, const char *from, const char *to, char *msg, size_t max);

/*
 * The declaration in force for project `project_id` (working tree `dir`):
 * its svc.data.json when valid (which is then remembered in MariaDB as the
 * last valid one, when it differs from what is there), else the last valid
 * one remembered, else none. Sets *out (NULL when the project declares
 * nothing: no file and nothing remembered; free with svc_app_decl_free())
 * and returns 0, or a DB error. A missing file declares nothing (a deleted
 * svc.data.json ends the collections; their records stay).
 */
int svc_app_decl_load(struct svc_db *db, const char *project_id, const char *dir, struct svc_app_decl **out);

/*
 * The canonical text of a scalar value `v` of field `f` as an index and a
 * filter compare it (string, datetime, file, user: the string; number: %.17g
 * of the double; boolean: "true"/"false") into out (max bytes, cut at 191
 * bytes on a UTF-8 boundary). Returns 0, or SVC_E_VALIDATION when `v` is not
 * of the field's type (NULL or JSON null included).
 */
int svc_app_index_value(const struct svc_app_field *f, struct json_object *v, char *out, size_t max);

/*
 * The rule check of one operation (docs/app-backend.md "Rules"): `rule` for
 * a caller who is `user_id` ("" or NULL when signed out) on a record whose
 * owner is `record_owner` (NULL on a collection: list, create; "" for a
 * record made signed out). Returns 0 when allowed; SVC_E_UNAUTHORIZED for a
 * signed-out caller under user or owner; SVC_E_FORBIDDEN under none;
 * SVC_E_NOT_FOUND under owner on another's record (its existence never
 * shows). A list under owner is allowed and narrowed to the caller's
 * records by the caller (svc_app_data_list).
 */
int svc_app_rule_check(enum svc_app_rule rule, const char *user_id, const char *record_owner);

/*
 * Checks the fields of a record body `obj` (a JSON object) against collection
 * `c`: every key a declared field (id, owner, createdAt and updatedAt are
 * the server's), each value of its type and bounds (null only for a field
 * that is not required), and, unless `partial` (a PATCH), every required
 * field present. Returns 0, or SVC_E_VALIDATION with *out_field the failing
 * field's name (borrowed from `obj` or `c`, valid while both are) and a
 * message in msg (max bytes).
 */
int svc_app_record_check(const struct svc_app_collection *c, struct json_object *obj, int partial,
			 const char **out_field, char *msg, size_t max);

/* 1 when `s` (`len` bytes) is an RFC 3339 date-time ("2026-11-22T01:22:11.123Z", "...+02:00"), else 0. */
int svc_app_datetime_valid(const char *s, size_t len);

/* The name of a type ("string") or a rule ("owner"), as svc.data.json spells it. */
const char *svc_app_ftype_name(enum svc_app_ftype t);
const char *svc_app_rule_name(enum svc_app_rule r);

#endif
