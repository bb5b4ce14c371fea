/* integ.c: integrations: the catalogue's import, ids and auth types, the admin audit log (docs/api.md "Integrations"). */
#include <stdio.h>
#include <string.h>

#include "core/err.h"
#include "core/json.h"
#include "core/log.h"
#include "core/util.h"
#include "integ/integ.h"

int svc_integ_id_valid(const char *s)
{
	size_t i;

	if (!s || !*s || strlen(s) > SVC_INTEG_ID_MAX)
		return 0;
	for (i = 0; s[i]; i++) {
		char c = s[i];
		int alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
		if (!alnum && (i == 0 || (c != '-' && c != '_' && c != '.')))
			return 0;
	}
	return 1;
}

int svc_integ_list_has(const char *list, const char *item)
{
	size_t n = strlen(item);
	const char *p = list;

	if (!list || !n)
		return 0;
	while ((p = strstr(p, item)) != NULL) {
		if (p > list && p[-1] == ',' && p[n] == ',')
			return 1;
		p++;
	}
	return 0;
}

struct json_object *svc_integ_list_json(const char *list)
{
	struct json_object *a = json_object_new_array();
	const char *p = list, *e;

	while (p && *p) {
		if (*p == ',') {
			p++;
			continue;
		}
		e = strchr(p, ',');
		if (!e)
			e = p + strlen(p);
		json_object_array_add(a, json_object_new_string_len(p, (int)(e - p)));
		p = e;
	}
	return a;
}

int svc_integ_url_host(const char *url, char *out, size_t max)
{
	const char *p, *end, *at;
	size_t n, i;

	if (!url)
		return SVC_E_VALIDATION;
	if (strncmp(url, "https://", 8) == 0)
		p = url + 8;
	else if (strncmp(url, "http://", 7) == 0)
		p = url + 7;
	else
		return SVC_E_VALIDATION;
	end = p + strcspn(p, "/?#");
	at = memchr(p, '@', (size_t)(end - p));
	if (at)
		p = at + 1;
	n = strcspn(p, ":/?#");
	if (p + n > end)
		n = (size_t)(end - p);
	if (n == 0 || n >= max)
		return SVC_E_VALIDATION;
	for (i = 0; i < n; i++) {
		char c = p[i];
		if (c >= 'A' && c <= 'Z')
			c = (char)(c - 'A' + 'a');
		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.'))
			return SVC_E_VALIDATION;
		out[i] = c;
	}
	out[n] = '\0';
	return 0;
}

void svc_integ_client_hint(const char *client_id, char *out, size_t max)
{
	size_t len = strlen(client_id), start = len, k = 0;

	/* step back over four characters (UTF-8 lead bytes) */
	while (start > 0 && k < 4) {
		start--;
		if (((unsigned char)client_id[start] & 0xC0) != 0x80)
			k++;
	}
	snprintf(out, max, "%s", client_id + start);
}

/* Whether `s` is a list item of the catalogue (an auth type or a category): [A-Za-z0-9_], 1..64 bytes. */
static int word_valid(const char *s)
{
	size_t i;

	if (!s || !*s || strlen(s) > 64)
		return 0;
	for (i = 0; s[i]; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= '0' && s[i] <= '9') ||
		      s[i] == '_'))
			return 0;
	return 1;
}

/* Appends array `a`'s words as ",w1,w2," to b (reset first); "" for none. Returns 0 or SVC_E_VALIDATION. */
static int words_list(struct json_object *a, struct svc_buf *b)
{
	size_t i, n;

	svc_buf_reset(b);
	if (!a)
		return 0;
	if (!json_object_is_type(a, json_type_array))
		return SVC_E_VALIDATION;
	n = json_object_array_length(a);
	for (i = 0; i < n; i++) {
		const char *w = json_object_get_string(json_object_array_get_idx(a, i));
		if (!json_object_is_type(json_object_array_get_idx(a, i), json_type_string) || !word_valid(w))
			return SVC_E_VALIDATION;
		if (svc_buf_addf(b, "%s%s,", i ? "" : ",", w) < 0)
			return SVC_E_TOO_LARGE;
	}
	return 0;
}

/* Adds host `h` to the comma list b unless it is there. */
static int add_host(struct svc_buf *b, const char *h)
{
	char wrapped[300];

	snprintf(wrapped, sizeof wrapped, ",%s,", h);
	if (b->len && strstr(svc_buf_str(b), wrapped))
		return 0;
	return svc_buf_addf(b, "%s%s,", b->len ? "" : ",", h);
}

/* The API hosts of entry `e`: its apiHosts, else the hosts of its OAuth URLs, as ",h1,h2,". */
static int entry_hosts(struct json_object *e, struct json_object *oauth, struct svc_buf *b)
{
	struct json_object *hosts = json_object_object_get(e, "apiHosts");
	char h[254];
	size_t i;
	int err = 0;

	svc_buf_reset(b);
	if (hosts && json_object_is_type(hosts, json_type_array)) {
		for (i = 0; i < json_object_array_length(hosts) && err == 0; i++) {
			const char *s = json_object_get_string(json_object_array_get_idx(hosts, i));
			char url[300];
			snprintf(url, sizeof url, "https://%s", s ? s : "");
			if (svc_integ_url_host(url, h, sizeof h) < 0)
				return SVC_E_VALIDATION;
			err = add_host(b, h);
		}
		return err;
	}
	if (oauth && svc_integ_url_host(svc_json_str(oauth, "authUrl"), h, sizeof h) == 0)
		err = add_host(b, h);
	if (err == 0 && oauth && svc_integ_url_host(svc_json_str(oauth, "tokenUrl"), h, sizeof h) == 0)
		err = add_host(b, h);
	return err;
}

/* Upserts catalogue entry `e` (index `i`, for messages). */
static int import_entry(struct svc_db *db, struct json_object *e, size_t i, char *why, size_t why_max)
{
	struct json_object *oauth = json_object_object_get(e, "oauth2"), *scope;
	const char *id = svc_json_str(e, "id"), *name = svc_json_str(e, "displayName");
	struct svc_buf auth, cats, hosts, scopes;
	struct svc_dbv p[11];
	size_t k;
	int err;

	svc_buf_init(&auth, 1024);
	svc_buf_init(&cats, 4096);
	svc_buf_init(&hosts, 1024);
	svc_buf_init(&scopes, 2048);
	if (!json_object_is_type(e, json_type_object) || !svc_integ_id_valid(id) || !name || !*name ||
	    strlen(name) > 200) {
		snprintf(why, why_max, "entry %zu: no valid id or displayName", i);
		err = SVC_E_VALIDATION;
		goto done;
	}
	if (words_list(json_object_object_get(e, "authTypes"), &auth) < 0 || auth.len == 0 ||
	    words_list(json_object_object_get(e, "categories"), &cats) < 0 || entry_hosts(e, oauth, &hosts) < 0) {
		snprintf(why, why_max, "entry %s: authTypes, categories or apiHosts are not lists of names", id);
		err = SVC_E_VALIDATION;
		goto done;
	}
	if (oauth && !json_object_is_type(oauth, json_type_object))
		oauth = NULL;
	scope = oauth ? json_object_object_get(oauth, "scope") : NULL;
	for (k = 0; scope && json_object_is_type(scope, json_type_array) && k < json_object_array_length(scope); k++)
		if (svc_buf_addf(&scopes, "%s%s", k ? " " : "",
				 json_object_get_string(json_object_array_get_idx(scope, k))) < 0)
			break;
	p[0] = svc_dbv_str(id);
	p[1] = svc_dbv_str(name);
	p[2] = svc_dbv_str(svc_json_str(e, "description"));
	p[3] = svc_dbv_str(svc_json_str(e, "logoUrl"));
	p[4] = svc_dbv_str(svc_buf_str(&auth));
	p[5] = svc_dbv_str(svc_buf_str(&cats));
	p[6] = svc_dbv_str(oauth ? svc_json_str(oauth, "authUrl") : NULL);
	p[7] = svc_dbv_str(oauth ? svc_json_str(oauth, "tokenUrl") : NULL);
	p[8] = svc_dbv_str(oauth ? svc_buf_str(&scopes) : NULL);
	p[9] = svc_dbv_str(svc_buf_str(&hosts));
	p[10] = svc_dbv_i64(json_object_get_boolean(json_object_object_get(e, "perUserOnly")) ? 1 : 0);
	if ((err = svc_db_run(db, STMT_INTEG_UPSERT, p, 11, NULL, NULL)) < 0)
		snprintf(why, why_max, "entry %s could not be stored", id);
done:
	svc_buf_dispose(&auth);
	svc_buf_dispose(&cats);
	svc_buf_dispose(&hosts);
	svc_buf_dispose(&scopes);
	return err;
}

/* The whole catalogue, one transaction of svc_db_tx(). */
struct catalogue_import {
	struct json_object *all;
	char *why;
	size_t why_max;
};

static int import_tx(struct svc_db *db, void *arg)
{
	const struct catalogue_import *imp = arg;
	size_t i, n = json_object_array_length(imp->all);
	int err = 0;

	for (i = 0; i < n && err == 0; i++)
		err = import_entry(db, json_object_array_get_idx(imp->all, i), i, imp->why, imp->why_max);
	return err;
}

int svc_integ_import(struct svc_db *db, const char *text, size_t len, size_t *out_count, char *why,
		     size_t why_max)
{
	struct json_tokener *tok = json_tokener_new_ex(SVC_JSON_DEPTH_MAX);
	struct json_object *all = NULL;
	struct catalogue_import imp;
	size_t n = 0;
	int err;

	snprintf(why, why_max, "%s", "");
	if (!tok)
		return SVC_E_INTERNAL;
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
	all = json_tokener_parse_ex(tok, text, (int)len);
	if (!all || json_tokener_get_error(tok) != json_tokener_success || !json_object_is_type(all, json_type_array)) {
		snprintf(why, why_max, "the catalogue is not a JSON array");
		err = SVC_E_VALIDATION;
		goto out;
	}
	n = json_object_array_length(all);
	imp.all = all;
	imp.why = why;
	imp.why_max = why_max;
	if ((err = svc_db_tx(db, import_tx, &imp)) == 0)
		*out_count = n;
out:
	json_object_put(all);
	json_tokener_free(tok);
	return err;
}

int svc_integ_audit(struct svc_db *db, const char *action, const char *resource_id, struct json_object *details,
		    const char *actor_id)
{
	struct svc_dbv p[5];
	char id[37];
	int err;

	if ((err = svc_uuid_v4(id)) < 0)
		return err;
	p[0] = svc_dbv_str(id);
	p[1] = svc_dbv_str(action);
	p[2] = svc_dbv_str(resource_id);
	p[3] = svc_dbv_str(json_object_to_json_string_ext(details, JSON_C_TO_STRING_PLAIN));
	p[4] = svc_dbv_str(actor_id);
	return svc_db_run(db, STMT_INTEG_AUDIT_INSERT, p, 5, NULL, NULL);
}

int svc_integ_url_param(struct svc_buf *b, const char *name, const char *value)
{
	static const char hex[] = "0123456789ABCDEF";
	const char *p;
	int err = svc_buf_addf(b, "%s=", name);

	for (p = value; err == 0 && *p; p++) {
		unsigned char c = (unsigned char)*p;
		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '.' ||
		    c == '_' || c == '~') {
			err = svc_buf_add(b, p, 1);
		} else {
			char e[3] = { '%', hex[c >> 4], hex[c & 15] };
			err = svc_buf_add(b, e, 3);
		}
	}
	return err;
}
