/* proto.c: svc-wsd's codec for y-protocols messages, awareness updates, design-comment requests, and socket checks (no lws). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <json-c/json.h>

#include "core/err.h"
#include "core/json.h"
#include "core/util.h"
#include "proto.h"
#include "wsd.h"

#define AW_JSON_DEPTH 16
#define COMMENT_CONTENT_MAX 10000   /* code points */
#define COMMENT_FIELD_MAX 1024      /* bytes of selector and pagePath */

int wsd_read_varuint(struct wsd_reader *r, uint64_t *out)
{
	uint64_t v = 0;
	unsigned shift = 0;

	while (r->p < r->end) {
		uint8_t b = *r->p++;
		if (shift == 49 && (b & 0x7f) > 0x0f)
			return SVC_E_VALIDATION; /* beyond 2^53-1 */
		v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*out = v;
			return 0;
		}
		shift += 7;
		if (shift > 49)
			return SVC_E_VALIDATION;
	}
	return SVC_E_VALIDATION;
}

int wsd_read_varbytes(struct wsd_reader *r, const uint8_t **out, size_t *out_len)
{
	uint64_t n;

	if (wsd_read_varuint(r, &n) < 0)
		return SVC_E_VALIDATION;
	if (n > (uint64_t)(r->end - r->p))
		return SVC_E_VALIDATION;
	*out = r->p;
	*out_len = (size_t)n;
	r->p += n;
	return 0;
}

static void buf_reserve(struct svc_yjs_buf *b, size_t more)
{
	if (more > SIZE_MAX - b->len)
		abort();
	WSD_GROW(b->data, b->cap, b->len + more);
}

int wsd_write_varuint(struct svc_yjs_buf *b, uint64_t v)
{
	buf_reserve(b, 10);
	while (v > 0x7f) {
		b->data[b->len++] = (uint8_t)(0x80 | (v & 0x7f));
		v >>= 7;
	}
	b->data[b->len++] = (uint8_t)v;
	return 0;
}

int wsd_write_varbytes(struct svc_yjs_buf *b, const void *data, size_t len)
{
	wsd_write_varuint(b, len);
	if (len) {
		buf_reserve(b, len);
		memcpy(b->data + b->len, data, len);
		b->len += len;
	}
	return 0;
}

/* Parses an awareness state as a client would (JSON.parse: strict, whole text, nesting capped). Returns the object (the caller's to put) or NULL. */
static struct json_object *aw_json_parse(const uint8_t *s, size_t len)
{
	struct json_tokener *tok;
	struct json_object *o;

	if (len > INT32_MAX || !svc_utf8_valid((const char *)s, len))
		return NULL;
	tok = json_tokener_new_ex(AW_JSON_DEPTH);
	if (!tok)
		return NULL;
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
	o = json_tokener_parse_ex(tok, (const char *)s, (int)len);
	if (o && (json_tokener_get_error(tok) != json_tokener_success || json_tokener_get_parse_end(tok) != len)) {
		json_object_put(o);
		o = NULL;
	}
	json_tokener_free(tok);
	return o;
}

static int json_ok(const uint8_t *s, size_t len)
{
	struct json_object *o;

	if (len == 4 && memcmp(s, "null", 4) == 0)
		return 1;
	o = aw_json_parse(s, len);
	json_object_put(o);
	return o != NULL;
}

int wsd_awareness_parse(const uint8_t *data, size_t len, struct wsd_aw_entry *out, size_t max)
{
	struct wsd_reader r = { data, data + len };
	uint64_t n, i;

	if (wsd_read_varuint(&r, &n) < 0)
		return SVC_E_VALIDATION;
	/* each entry takes at least three bytes */
	if (n > (uint64_t)(r.end - r.p) / 3 || n > max)
		return SVC_E_VALIDATION;
	for (i = 0; i < n; i++) {
		struct wsd_aw_entry *e = &out[i];
		if (wsd_read_varuint(&r, &e->client) < 0 || wsd_read_varuint(&r, &e->clock) < 0 ||
		    wsd_read_varbytes(&r, &e->json, &e->json_len) < 0)
			return SVC_E_VALIDATION;
		if (e->json_len > INT32_MAX || !json_ok(e->json, e->json_len))
			return SVC_E_VALIDATION;
	}
	if (r.p != r.end)
		return SVC_E_VALIDATION;
	return (int)n;
}

int wsd_aw_is_null(const struct wsd_aw_entry *e)
{
	return e->json_len == 4 && memcmp(e->json, "null", 4) == 0;
}

int wsd_aw_state_user_ok(const uint8_t *json, size_t len, const char *user_id)
{
	/* the last of a repeated key wins in json-c as in JSON.parse, and escapes are decoded in both */
	struct json_object *o = aw_json_parse(json, len), *user, *id;
	size_t n = strlen(user_id);
	int ok;

	if (!o)
		return 0;
	if (!json_object_is_type(o, json_type_object) || !json_object_object_get_ex(o, "user", &user) ||
	    !json_object_is_type(user, json_type_object) || !json_object_object_get_ex(user, "id", &id))
		ok = 1; /* names no user id */
	else
		ok = json_object_is_type(id, json_type_string) && (size_t)json_object_get_string_len(id) == n &&
		     memcmp(json_object_get_string(id), user_id, n) == 0;
	json_object_put(o);
	return ok;
}

/* Splits "scheme://host[:port][/...]" into its origin part, lower-cased, without a default port. */
static int origin_of(const char *url, size_t len, char *out, size_t max)
{
	const char *sep, *host, *end, *colon;
	size_t i, n = 0, slen, hlen;
	int https;

	while (len && (*url == ' ' || *url == '\t')) {
		url++;
		len--;
	}
	while (len && (url[len - 1] == ' ' || url[len - 1] == '\t'))
		len--;
	sep = memmem(url, len, "://", 3);
	if (!sep)
		return -1;
	slen = (size_t)(sep - url);
	host = sep + 3;
	end = memchr(host, '/', len - slen - 3);
	if (!end)
		end = url + len;
	hlen = (size_t)(end - host);
	if (hlen == 0 || slen + hlen + 4 >= max)
		return -1;
	https = (slen == 5 && strncasecmp(url, "https", 5) == 0) || (slen == 3 && strncasecmp(url, "wss", 3) == 0);
	for (i = 0; i < slen; i++)
		out[n++] = (char)((url[i] >= 'A' && url[i] <= 'Z') ? url[i] + 32 : url[i]);
	memcpy(out + n, "://", 3);
	n += 3;
	colon = memchr(host, ':', hlen);
	if (colon && ((https && (size_t)(end - colon) == 4 && memcmp(colon, ":443", 4) == 0) ||
		      (!https && (size_t)(end - colon) == 3 && memcmp(colon, ":80", 3) == 0)))
		hlen = (size_t)(colon - host);
	for (i = 0; i < hlen; i++)
		out[n++] = (char)((host[i] >= 'A' && host[i] <= 'Z') ? host[i] + 32 : host[i]);
	out[n] = '\0';
	return 0;
}

int wsd_origin_allowed(const char *origin, const char *app_url, const char *cors_origins)
{
	char want[512], have[512];
	const char *p;

	if (!origin)
		return 1;
	if (strchr(origin, '/') == NULL || origin_of(origin, strlen(origin), have, sizeof have) < 0)
		return 0;
	/* an Origin is scheme://host[:port] and nothing after it */
	if (strchr(strstr(origin, "://") + 3, '/'))
		return 0;
	if (app_url && origin_of(app_url, strlen(app_url), want, sizeof want) == 0 && strcmp(want, have) == 0)
		return 1;
	for (p = cors_origins; p && *p;) {
		const char *comma = strchr(p, ',');
		size_t n = comma ? (size_t)(comma - p) : strlen(p);
		if (n && origin_of(p, n, want, sizeof want) == 0 && strcmp(want, have) == 0)
			return 1;
		p = comma ? comma + 1 : p + n;
	}
	return 0;
}

int wsd_path_project(const char *path, char *out)
{
	char id[37];
	size_t n, i;

	if (strncmp(path, "/ws/", 4) == 0)
		path += 3;
	if (strncmp(path, "/project/", 9) != 0)
		return SVC_E_NOT_FOUND;
	path += 9;
	n = strcspn(path, "?#");
	if (n != 36)
		return SVC_E_NOT_FOUND;
	memcpy(id, path, 36);
	id[36] = '\0';
	if (!svc_uuid_valid(id))
		return SVC_E_NOT_FOUND;
	for (i = 0; i < 36; i++)
		out[i] = (char)((id[i] >= 'A' && id[i] <= 'F') ? id[i] + 32 : id[i]);
	out[36] = '\0';
	return 0;
}

void wsd_comment_req_dispose(struct wsd_comment_req *r)
{
	free(r->content);
	free(r->selector);
	free(r->page_path);
	memset(r, 0, sizeof *r);
}

static int fail(char *msg, size_t max, const char *text)
{
	snprintf(msg, max, "%s", text);
	return SVC_E_VALIDATION;
}

/* An optional string field: absent or null -> NULL; else a copy within `maxb` bytes. */
static int opt_str(struct json_object *o, const char *name, size_t maxb, char **out)
{
	struct json_object *v;
	const char *s;
	size_t n;

	*out = NULL;
	if (!json_object_object_get_ex(o, name, &v) || json_object_is_type(v, json_type_null))
		return 0;
	if (!json_object_is_type(v, json_type_string))
		return SVC_E_VALIDATION;
	s = json_object_get_string(v);
	n = (size_t)json_object_get_string_len(v);
	if (n > maxb || memchr(s, '\0', n) || !svc_utf8_valid(s, n))
		return SVC_E_VALIDATION;
	*out = strndup(s, n);
	return *out ? 0 : SVC_E_INTERNAL;
}

static int get_percent(struct json_object *o, const char *name, double *out)
{
	struct json_object *v;
	double d;

	if (!json_object_object_get_ex(o, name, &v))
		return SVC_E_VALIDATION;
	if (!json_object_is_type(v, json_type_double) && !json_object_is_type(v, json_type_int))
		return SVC_E_VALIDATION;
	d = json_object_get_double(v);
	if (!isfinite(d) || d < 0 || d > 100)
		return SVC_E_VALIDATION;
	*out = d;
	return 0;
}

static int get_uuid(struct json_object *o, const char *name, char *out)
{
	struct json_object *v;
	const char *s;
	size_t i;

	if (!json_object_object_get_ex(o, name, &v) || !json_object_is_type(v, json_type_string))
		return SVC_E_VALIDATION;
	s = json_object_get_string(v);
	if (json_object_get_string_len(v) != 36 || !svc_uuid_valid(s))
		return SVC_E_VALIDATION;
	for (i = 0; i < 36; i++)
		out[i] = (char)((s[i] >= 'A' && s[i] <= 'F') ? s[i] + 32 : s[i]);
	out[36] = '\0';
	return 0;
}

int wsd_comment_parse(const char *json, size_t len, struct wsd_comment_req *out, char *msg, size_t msgmax)
{
	struct wsd_comment_req r;
	struct json_object *o = NULL, *v;
	const char *type;
	int err = SVC_E_VALIDATION;

	memset(&r, 0, sizeof r);
	if (svc_json_parse_object(json, len, &o) < 0) {
		fail(msg, msgmax, "The message is not a JSON object.");
		goto done;
	}
	if (!json_object_object_get_ex(o, "type", &v) || !json_object_is_type(v, json_type_string)) {
		fail(msg, msgmax, "type is required.");
		goto done;
	}
	type = json_object_get_string(v);
	if (strcmp(type, "design-comment:add") == 0) {
		const char *c;
		size_t n;
		r.op = WSD_C_ADD;
		if (!json_object_object_get_ex(o, "content", &v) || !json_object_is_type(v, json_type_string)) {
			fail(msg, msgmax, "content is required.");
			goto done;
		}
		c = json_object_get_string(v);
		n = (size_t)json_object_get_string_len(v);
		if (memchr(c, '\0', n) || !svc_utf8_valid(c, n)) {
			fail(msg, msgmax, "content must be text.");
			goto done;
		}
		if (svc_is_blank(c)) {
			fail(msg, msgmax, "content must not be blank.");
			goto done;
		}
		if (svc_utf8_count(c, n) > COMMENT_CONTENT_MAX) {
			fail(msg, msgmax, "content is longer than 10000 characters.");
			goto done;
		}
		if (get_percent(o, "xPercent", &r.x) < 0 || get_percent(o, "yPercent", &r.y) < 0) {
			fail(msg, msgmax, "xPercent and yPercent must be numbers from 0 to 100.");
			goto done;
		}
		if (opt_str(o, "selector", COMMENT_FIELD_MAX, &r.selector) < 0 ||
		    opt_str(o, "pagePath", COMMENT_FIELD_MAX, &r.page_path) < 0) {
			fail(msg, msgmax, "selector and pagePath must be strings of at most 1024 bytes.");
			goto done;
		}
		if (json_object_object_get_ex(o, "parentId", &v) && !json_object_is_type(v, json_type_null) &&
		    get_uuid(o, "parentId", r.parent_id) < 0) {
			fail(msg, msgmax, "parentId must be the id of a comment of this project.");
			goto done;
		}
		r.content = strndup(c, n);
		if (!r.content) {
			err = SVC_E_INTERNAL;
			goto done;
		}
	} else {
		if (strcmp(type, "design-comment:resolve") == 0)
			r.op = WSD_C_RESOLVE;
		else if (strcmp(type, "design-comment:unresolve") == 0)
			r.op = WSD_C_UNRESOLVE;
		else if (strcmp(type, "design-comment:delete") == 0)
			r.op = WSD_C_DELETE;
		else {
			fail(msg, msgmax, "Unknown message type.");
			goto done;
		}
		if (get_uuid(o, "commentId", r.comment_id) < 0) {
			fail(msg, msgmax, "commentId must be the id of a comment of this project.");
			goto done;
		}
	}
	*out = r;
	memset(&r, 0, sizeof r);
	err = 0;
done:
	wsd_comment_req_dispose(&r);
	json_object_put(o);
	return err;
}
