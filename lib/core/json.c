/* json.c: typed validation of JSON request bodies and small json-c helpers. */
#include <stdio.h>
#include <string.h>

#include "core/err.h"
#include "core/json.h"
#include "core/util.h"

static int fail(const struct svc_field *f, const char **out_field, char *msg, size_t msgmax,
		const char *what)
{
	*out_field = f->name;
	snprintf(msg, msgmax, "%s %s", f->name, what);
	return SVC_E_VALIDATION;
}

static int check_string(const struct svc_field *f, struct json_object *v, const char **out_field,
			char *msg, size_t msgmax)
{
	const char *s = json_object_get_string(v);
	size_t len = (size_t)json_object_get_string_len(v), cps;

	if (strlen(s) != len || !svc_utf8_valid(s, len))
		return fail(f, out_field, msg, msgmax, "must be valid UTF-8 text without NUL");
	cps = svc_utf8_count(s, len);
	if (f->type == SVC_V_TEXT && svc_is_blank(s))
		return fail(f, out_field, msg, msgmax, "must not be empty or only white space");
	if (f->min > 0 && cps < (size_t)f->min) {
		*out_field = f->name;
		snprintf(msg, msgmax, "%s must be at least %lld characters", f->name, f->min);
		return SVC_E_VALIDATION;
	}
	if (f->max > 0 && cps > (size_t)f->max) {
		*out_field = f->name;
		snprintf(msg, msgmax, "%s must be at most %lld characters", f->name, f->max);
		return SVC_E_VALIDATION;
	}
	if (f->type == SVC_V_UUID && !svc_uuid_valid(s))
		return fail(f, out_field, msg, msgmax, "must be a UUID");
	if (f->type == SVC_V_ENUM) {
		const char *const *e;
		for (e = f->values; e && *e; e++)
			if (strcmp(*e, s) == 0)
				return 0;
		return fail(f, out_field, msg, msgmax, "has a value that is not allowed");
	}
	return 0;
}

int svc_json_validate(struct json_object *obj, const struct svc_field *fields, size_t n,
		      const char **out_field, char *msg, size_t msgmax)
{
	size_t i;

	*out_field = NULL;
	if (!obj || !json_object_is_type(obj, json_type_object)) {
		snprintf(msg, msgmax, "the body must be a JSON object");
		return SVC_E_VALIDATION;
	}
	for (i = 0; i < n; i++) {
		const struct svc_field *f = &fields[i];
		struct json_object *v = NULL;
		int err;

		if (!json_object_object_get_ex(obj, f->name, &v)) {
			if (f->flags & SVC_F_REQUIRED)
				return fail(f, out_field, msg, msgmax, "is required");
			continue;
		}
		if (v == NULL) {
			if (f->flags & SVC_F_NULLABLE)
				continue;
			return fail(f, out_field, msg, msgmax, "must not be null");
		}
		switch (f->type) {
		case SVC_V_STR:
		case SVC_V_TEXT:
		case SVC_V_UUID:
		case SVC_V_ENUM:
			if (!json_object_is_type(v, json_type_string))
				return fail(f, out_field, msg, msgmax, "must be a string");
			if ((err = check_string(f, v, out_field, msg, msgmax)) < 0)
				return err;
			break;
		case SVC_V_UINT: {
			int64_t x;
			if (!json_object_is_type(v, json_type_int))
				return fail(f, out_field, msg, msgmax, "must be an integer");
			x = json_object_get_int64(v);
			if (x < f->min || (f->max > 0 && x > f->max))
				return fail(f, out_field, msg, msgmax, "is out of range");
			break;
		}
		case SVC_V_BOOL:
			if (!json_object_is_type(v, json_type_boolean))
				return fail(f, out_field, msg, msgmax, "must be true or false");
			break;
		case SVC_V_ARRAY:
			if (!json_object_is_type(v, json_type_array))
				return fail(f, out_field, msg, msgmax, "must be an array");
			if (f->max > 0 && json_object_array_length(v) > (size_t)f->max)
				return fail(f, out_field, msg, msgmax, "has too many elements");
			if (f->min > 0 && json_object_array_length(v) < (size_t)f->min)
				return fail(f, out_field, msg, msgmax, "has too few elements");
			break;
		case SVC_V_OBJECT:
			if (!json_object_is_type(v, json_type_object))
				return fail(f, out_field, msg, msgmax, "must be an object");
			break;
		}
	}
	return 0;
}

/* json-c accepts single-quoted strings even in strict mode; RFC 8259 does not. */
static int has_single_quote_outside_strings(const char *text, size_t len)
{
	size_t i;
	int in_str = 0;

	for (i = 0; i < len; i++) {
		char c = text[i];
		if (in_str) {
			if (c == '\\')
				i++;
			else if (c == '"')
				in_str = 0;
		} else if (c == '"') {
			in_str = 1;
		} else if (c == '\'') {
			return 1;
		}
	}
	return 0;
}

int svc_json_parse_object(const char *text, size_t len, struct json_object **out)
{
	struct json_tokener *tok;
	struct json_object *obj;
	int err = SVC_E_INVALID_JSON;

	if (len > INT32_MAX || !svc_utf8_valid(text, len) || has_single_quote_outside_strings(text, len))
		return SVC_E_INVALID_JSON;
	tok = json_tokener_new_ex(SVC_JSON_DEPTH_MAX);
	if (!tok)
		return SVC_E_INTERNAL;
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
	obj = json_tokener_parse_ex(tok, text, (int)len);
	if (json_tokener_get_error(tok) != json_tokener_success || !obj)
		goto done;
	if ((size_t)json_tokener_get_parse_end(tok) != len) {
		/* Only white space may follow the value. */
		size_t i;
		for (i = json_tokener_get_parse_end(tok); i < len; i++)
			if (text[i] != ' ' && text[i] != '\n' && text[i] != '\r' && text[i] != '\t')
				goto done;
	}
	if (!json_object_is_type(obj, json_type_object))
		goto done;
	*out = obj;
	obj = NULL;
	err = 0;
done:
	json_object_put(obj);
	json_tokener_free(tok);
	return err;
}

const char *svc_json_str(struct json_object *obj, const char *name)
{
	struct json_object *v;

	if (!obj || !json_object_object_get_ex(obj, name, &v) || !v ||
	    !json_object_is_type(v, json_type_string))
		return NULL;
	return json_object_get_string(v);
}

void svc_json_add_str(struct json_object *obj, const char *name, const char *s)
{
	json_object_object_add(obj, name, s ? json_object_new_string(s) : NULL);
}

void svc_json_add_time(struct json_object *obj, const char *name, const char *db)
{
	char ts[25];

	if (!db || svc_time_from_db(db, ts) < 0) {
		json_object_object_add(obj, name, NULL);
		return;
	}
	json_object_object_add(obj, name, json_object_new_string(ts));
}
