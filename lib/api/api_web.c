/* api_web.c: the listings the web application draws its pages from: project templates and the sign-in providers. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api/api_web.h"
#include "auth/auth.h"
#include "core/err.h"
#include "core/fsx.h"
#include "core/json.h"
#include "core/log.h"

#define TEMPLATES_MAX 200          /* templates listed */
#define TEMPLATE_META_MAX (16 * 1024) /* bytes of one <name>.json */
#define TEMPLATE_NAME_MAX 64

/* One template: its directory name and what <name>.json says about it (owned strings). */
struct tmpl {
	char name[TEMPLATE_NAME_MAX + 1];
	long long order;
	struct json_object *meta; /* the parsed <name>.json, or NULL */
};

/* 1 when `s` is a template name as POST /workspaces/:wid/projects accepts it: [a-z0-9-], 1 to 64 characters. */
static int template_name_ok(const char *s)
{
	size_t n = strlen(s);

	return n >= 1 && n <= TEMPLATE_NAME_MAX && strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789-") == n;
}

/*
 * Reads templates/<name>.json: {title, description, order, previewUrl}, all
 * optional. A file that is missing gives NULL; one that does not parse or
 * validate is logged and ignored too, so one bad file never hides the list.
 */
static struct json_object *template_meta(const char *dir, const char *name)
{
	static const struct svc_field fields[] = {
		{ "title", SVC_V_TEXT, 0, 1, 128, NULL },
		{ "description", SVC_V_STR, SVC_F_NULLABLE, 0, 2000, NULL },
		{ "order", SVC_V_UINT, 0, 0, 1000000, NULL },
		{ "previewUrl", SVC_V_STR, SVC_F_NULLABLE, 1, 2048, NULL },
	};
	char file[TEMPLATE_NAME_MAX + 8], *text = NULL, msg[128];
	struct json_object *meta = NULL;
	const char *field = NULL;
	size_t len = 0;

	snprintf(file, sizeof file, "%.*s.json", TEMPLATE_NAME_MAX, name);
	if (svc_fsx_read(dir, file, TEMPLATE_META_MAX, &text, &len) < 0)
		return NULL;
	if (svc_json_parse_object(text, len, &meta) < 0 ||
	    svc_json_validate(meta, fields, sizeof fields / sizeof fields[0], &field, msg, sizeof msg) < 0) {
		svc_log_error("templates: %s.json is ignored: %s", name, meta ? msg : "not a JSON object");
		json_object_put(meta);
		meta = NULL;
	}
	free(text);
	return meta;
}

static int tmpl_cmp(const void *a, const void *b)
{
	const struct tmpl *x = a, *y = b;

	if (x->order != y->order)
		return x->order < y->order ? -1 : 1;
	return strcmp(x->name, y->name);
}

/*
 * GET /templates: 200 {items: [{name, title, description, previewUrl}]}, the
 * directories of SVC_TEMPLATES_DIR that a project can be created from, by
 * `order` then name; 401. An unreadable templates directory is 500.
 */
enum svc_err svc_api_templates_list(struct svc_req *req, struct svc_resp *resp)
{
	const char *root = req->ctx->cfg.templates_dir;
	struct tmpl *list;
	struct json_object *body, *items;
	struct svc_fsx_dir d;
	const char *name;
	struct stat st;
	size_t n = 0, i;
	int fd;

	if ((fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0 || svc_fsx_dir_open(fd, &d) < 0) {
		svc_log_error("templates: cannot open SVC_TEMPLATES_DIR");
		if (fd >= 0)
			close(fd);
		return SVC_E_INTERNAL;
	}
	if (!(list = calloc(TEMPLATES_MAX, sizeof *list))) {
		svc_fsx_dir_close(&d);
		close(fd);
		return SVC_E_INTERNAL;
	}
	while (n < TEMPLATES_MAX && svc_fsx_dir_next(&d, &name, &st) > 0) {
		/* a template may be a symlink to a directory (the server's configuration, trusted) */
		if (!template_name_ok(name) || (S_ISLNK(st.st_mode) && fstatat(fd, name, &st, 0) < 0) ||
		    !S_ISDIR(st.st_mode))
			continue;
		memcpy(list[n].name, name, strlen(name) + 1); /* template_name_ok(): at most 64 bytes */
		list[n].meta = template_meta(root, name);
		list[n].order = 1000;
		if (list[n].meta && json_object_object_get_ex(list[n].meta, "order", NULL))
			list[n].order = json_object_get_int64(json_object_object_get(list[n].meta, "order"));
		n++;
	}
	svc_fsx_dir_close(&d);
	close(fd);
	qsort(list, n, sizeof *list, tmpl_cmp);
	body = json_object_new_object();
	items = json_object_new_array();
	for (i = 0; i < n; i++) {
		struct json_object *t = json_object_new_object();
		const char *title = svc_json_str(list[i].meta, "title");
		json_object_object_add(t, "name", json_object_new_string(list[i].name));
		json_object_object_add(t, "title", json_object_new_string(title ? title : list[i].name));
		svc_json_add_str(t, "description", svc_json_str(list[i].meta, "description"));
		svc_json_add_str(t, "previewUrl", svc_json_str(list[i].meta, "previewUrl"));
		json_object_array_add(items, t);
		json_object_put(list[i].meta);
	}
	free(list);
	json_object_object_add(body, "items", items);
	return svc_resp_json(resp, 200, body);
}

/*
 * GET /auth/providers (no authentication): 200 {items: [{id, name, url}]},
 * the OAuth sign-in providers this instance has a client id for, in a fixed
 * order; url is {base_url}/auth/<id>, which starts the sign-in (302).
 */
enum svc_err svc_api_auth_providers(struct svc_req *req, struct svc_resp *resp)
{
	const struct svc_auth_config *a = &req->ctx->auth;
	struct json_object *body = json_object_new_object(), *items = json_object_new_array();
	const char *base = req->ctx->cfg.base_url;
	int i, blen = (int)strlen(base);

	while (blen > 0 && base[blen - 1] == '/')
		blen--;

	for (i = 0; i < SVC_OAUTH__MAX; i++) {
		const struct svc_oauth_provider *p = svc_oauth_provider_get((enum svc_oauth_id)i);
		struct json_object *o;
		char url[1024];
		if (!a->oauth[i].client_id[0])
			continue;
		snprintf(url, sizeof url, "%.*s/auth/%s", blen, base, p->name);
		o = json_object_new_object();
		json_object_object_add(o, "id", json_object_new_string(p->name));
		json_object_object_add(o, "name", json_object_new_string(p->label));
		json_object_object_add(o, "url", json_object_new_string(url));
		json_object_array_add(items, o);
	}
	json_object_object_add(body, "items", items);
	return svc_resp_json(resp, 200, body);
}
