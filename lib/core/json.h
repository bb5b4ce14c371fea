/* json.h: whitelisted, typed validation of JSON request bodies from a per-route field table. */
#ifndef SVC_JSON_H
#define SVC_JSON_H

#include <stddef.h>

#include <json-c/json.h>

#define SVC_JSON_DEPTH_MAX 32     /* deepest nesting accepted in a request body */

enum svc_vtype {
	SVC_V_STR,       /* string: valid UTF-8, no NUL, length in code points within [min, max] */
	SVC_V_TEXT,      /* as SVC_V_STR, and not blank (whitespace-only is refused) */
	SVC_V_UINT,      /* integer within [min, max] */
	SVC_V_BOOL,      /* true or false */
	SVC_V_UUID,      /* string holding a UUID */
	SVC_V_ENUM,      /* string equal to one of `values` */
	SVC_V_ARRAY,     /* array of [min, max] elements */
	SVC_V_OBJECT,    /* object */
};

/* One allowed field of a request body. */
struct svc_field {
	const char *name;
	enum svc_vtype type;
	unsigned flags;             /* SVC_F_REQUIRED, SVC_F_NULLABLE */
	long long min, max;         /* bounds, as described for each type; max 0 = no limit */
	const char *const *values;  /* SVC_V_ENUM: NULL-terminated list */
};

#define SVC_F_REQUIRED 1u   /* absent is an error */
#define SVC_F_NULLABLE 2u   /* JSON null is accepted */

/*
 * Checks the object `obj` against `n` field descriptions. Fields not in the
 * table are ignored. On the first failure returns SVC_E_VALIDATION and sets
 * *out_field to the failing field's name (a string from the table) and
 * writes a message for a person into msg (msgmax bytes). `obj` must be an
 * object (otherwise SVC_E_VALIDATION with field NULL). Returns 0 when valid.
 */
int svc_json_validate(struct json_object *obj, const struct svc_field *fields, size_t n,
		      const char **out_field, char *msg, size_t msgmax);

/*
 * Parses `len` bytes of `text` as JSON with nesting capped at
 * SVC_JSON_DEPTH_MAX and strict parsing (no trailing garbage). The result
 * must be an object. *out is owned by the caller (json_object_put).
 * Errors: SVC_E_INVALID_JSON.
 */
int svc_json_parse_object(const char *text, size_t len, struct json_object **out);

/* Returns the string value of field `name` of `obj`, or NULL when absent, null or not a string. */
const char *svc_json_str(struct json_object *obj, const char *name);

/* Adds key `name` to `obj`: the string `s`, or JSON null when s is NULL. */
void svc_json_add_str(struct json_object *obj, const char *name, const char *s);

/* Adds key `name` to `obj`: the RFC 3339 form of the DB timestamp `db`, or null when db is NULL. */
void svc_json_add_time(struct json_object *obj, const char *name, const char *db);

#endif
