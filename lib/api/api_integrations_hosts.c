/* api_integrations_hosts.c: the hosts the agent's integration_request may call for one integration, as a platform admin sets them (docs/api.md "Integration admin endpoints"). */
#include <stdio.h>
#include <string.h>

#include <json-c/json.h>

#include "api/api_integrations.h"
#include "core/json.h"
#include "core/log.h"
#include "core/util.h"
#include "db/db.h"
#include "integ/integ.h"

#define HOSTS_MAX 16       /* hosts an admin may list for one integration */
#define HOSTS_TEXT_MAX 1024 /* bytes of the stored list (integrations.api_hosts_admin) */

static const struct svc_field hosts_fields[] = {
	{ "apiHosts", SVC_V_ARRAY, SVC_F_REQUIRED | SVC_F_NULLABLE, 1, HOSTS_MAX, NULL },
};
const struct svc_body svc_api_integrations_hosts_body = SVC_BODY(hosts_fields);

/* Adds the comma list `list` (",a,b,") to `o` as an array under `key`. */
static void add_list(struct json_object *o, const char *key, const char *list)
{
	struct json_object *a = json_object_new_array();
	const char *s = list ? list : "", *e;

	for (; *s; s = e) {
		while (*s == ',')
			s++;
		for (e = s; *e && *e != ','; e++)
			;
		if (e > s)
			json_object_array_add(a, json_object_new_string_len(s, (int)(e - s)));
	}
	json_object_object_add(o, key, a);
}

/* The answer: {integrationId, apiHosts (what the tool uses), source: admin|catalogue, catalogueHosts}. */
static struct json_object *hosts_json(const struct svc_rows *rows)
{
	struct json_object *o = json_object_new_object();
	const char *admin = svc_rows_get(rows, 0, IHCOL_ADMIN), *cat = svc_rows_get(rows, 0, IHCOL_CATALOGUE);

	svc_json_add_str(o, "integrationId", svc_rows_get(rows, 0, IHCOL_ID));
	add_list(o, "apiHosts", admin ? admin : cat);
	svc_json_add_str(o, "source", admin ? "admin" : "catalogue");
	add_list(o, "catalogueHosts", cat);
	return o;
}

/* Loads the integration `id` (404 when there is none) into *out. */
static int hosts_load(struct svc_req *req, const char *id, struct svc_rows **out)
{
	struct svc_dbv p = svc_dbv_str(id);
	int err;

	*out = NULL;
	if (!svc_integ_id_valid(id))
		return SVC_E_NOT_FOUND;
	if ((err = svc_db_run(req->ctx->db, STMT_INTEG_HOSTS_GET, &p, 1, out, NULL)) < 0)
		return err;
	if (!*out || (*out)->nrows != 1) {
		svc_rows_free(*out);
		*out = NULL;
		return SVC_E_NOT_FOUND;
	}
	return 0;
}

/* GET /integrations/admin/api-hosts/:integration: 200 {integrationId, apiHosts, source, catalogueHosts}; 403; 404. */
enum svc_err svc_api_integrations_hosts_get(struct svc_req *req, struct svc_resp *resp)
{
	struct svc_rows *rows = NULL;
	int err;

	if ((err = svc_api_integrations__require_admin(req, resp)) < 0 ||
	    (err = hosts_load(req, svc_req_param(req, "integration"), &rows)) < 0)
		return err;
	err = svc_resp_json(resp, 200, hosts_json(rows));
	svc_rows_free(rows);
	return err;
}

/*
 * Reads the body's apiHosts (1..HOSTS_MAX host names, no scheme, port or
 * path; duplicates dropped) into `b` as ",h1,h2,". Answers 400 (recorded in
 * resp) naming the first bad one.
 */
static int parse_hosts(struct svc_resp *resp, struct json_object *arr, struct svc_buf *b)
{
	char url[300], host[254], needle[258];
	size_t i;

	for (i = 0; i < json_object_array_length(arr); i++) {
		struct json_object *v = json_object_array_get_idx(arr, i);
		const char *s = json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
		size_t n = s ? strlen(s) : 0;

		if (!s || n == 0 || n > 253 || strpbrk(s, ":/?#@[] ,") ||
		    snprintf(url, sizeof url, "https://%s/", s) >= (int)sizeof url ||
		    svc_integ_url_host(url, host, sizeof host) < 0 || strchr(host, '.') == NULL)
			return svc_resp_error(resp, SVC_E_VALIDATION, "apiHosts",
					      "apiHosts[%zu] is not a host name such as api.example.com", i);
		snprintf(needle, sizeof needle, ",%s,", host);
		if (strstr(svc_buf_str(b), needle))
			continue;
		if (svc_buf_addf(b, "%s%s,", b->len ? "" : ",", host) < 0 || b->len > HOSTS_TEXT_MAX)
			return svc_resp_error(resp, SVC_E_VALIDATION, "apiHosts", "apiHosts are too long together");
	}
	return 0;
}

/*
 * PUT /integrations/admin/api-hosts/:integration {apiHosts: [host, ...] | null}: the hosts the
 * agent's integration_request may call for this integration, instead of the catalogue's (which
 * an import rewrites); null goes back to the catalogue's. 200 as GET; 400 validation_failed
 * (apiHosts); 403; 404. Recorded as integrations.api_hosts.update with details {apiHosts}.
 */
enum svc_err svc_api_integrations_hosts_put(struct svc_req *req, struct svc_resp *resp)
{
	const char *id = svc_req_param(req, "integration");
	struct json_object *arr = json_object_object_get(req->json, "apiHosts"), *details = NULL;
	struct svc_rows *rows = NULL;
	struct svc_buf b;
	struct svc_dbv p[2];
	int err;

	svc_buf_init(&b, HOSTS_TEXT_MAX + 300);
	if ((err = svc_api_integrations__require_admin(req, resp)) < 0 || (err = hosts_load(req, id, &rows)) < 0)
		goto done;
	svc_rows_free(rows);
	rows = NULL;
	if (arr && (err = parse_hosts(resp, arr, &b)) < 0)
		goto done;
	details = json_object_new_object();
	if (arr)
		add_list(details, "apiHosts", svc_buf_str(&b));
	else
		json_object_object_add(details, "apiHosts", NULL);
	p[0] = arr ? svc_dbv_str(svc_buf_str(&b)) : svc_dbv_null();
	p[1] = svc_dbv_str(id);
	if ((err = svc_api_integrations__audited(req, STMT_INTEG_HOSTS_SET, p, 2, 0, "integrations.api_hosts.update", id,
						 details, NULL)) < 0)
		goto done;
	svc_log_info("integrations: user %s set the API hosts of %s", req->user_id, id);
	if ((err = hosts_load(req, id, &rows)) == 0)
		err = svc_resp_json(resp, 200, hosts_json(rows));
done:
	json_object_put(details);
	svc_rows_free(rows);
	svc_buf_dispose(&b);
	return err;
}
