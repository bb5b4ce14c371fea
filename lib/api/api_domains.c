/* api_domains.c: custom domains of projects (/domains/...), workspace plans (/admin/workspaces/:wid), Caddy's on-demand TLS question (/internal/tls/ask). */
#include <stdio.h>
#include <string.h>

#include "api/api.h"
#include "core/err.h"
#include "core/json.h"
#include "core/log.h"
#include "project/domains.h"

/* ---- plans ---- */

static const char *const plans[] = { "free", "pro", "business", NULL };
static const struct svc_field plan_fields[] = {
	{ "plan", SVC_V_ENUM, SVC_F_REQUIRED, 0, 0, plans },
};
const struct svc_body svc_api_admin_workspace_update_body = SVC_BODY(plan_fields);

/* PATCH /admin/workspaces/:wid {plan}: 200 {id, name, plan, customDomainLimit}; 403 (not a platform admin); 404. */
enum svc_err svc_api_admin_workspace_update(struct svc_req *req, struct svc_resp *resp)
{
	const char *wid = svc_req_param(req, "wid");
	const char *plan = json_object_get_string(json_object_object_get(req->json, "plan"));
	struct svc_rows *ws = NULL;
	struct json_object *o;
	struct svc_dbv p[2];
	int err;

	if ((err = svc_workspace_load(req, wid, SVC_ACT_WS_PLAN, NULL, &ws)) < 0) {
		if (err == SVC_E_FORBIDDEN)
			svc_resp_error(resp, err, NULL, "Only platform admins change a workspace's plan.");
		return err;
	}
	p[0] = svc_dbv_str(plan);
	p[1] = svc_dbv_str(wid);
	if ((err = svc_db_run(req->ctx->db, STMT_WS_PLAN_SET, p, 2, NULL, NULL)) < 0)
		goto done;
	svc_log_info("plans: user %s set the plan of workspace %s to %s", req->user_id, wid, plan);
	o = json_object_new_object();
	svc_json_add_str(o, "id", wid);
	svc_json_add_str(o, "name", svc_rows_get(ws, 0, WCOL_NAME));
	svc_json_add_str(o, "plan", plan);
	json_object_object_add(o, "customDomainLimit",
			       json_object_new_int64((int64_t)svc_plan_domain_limit(&req->ctx->cfg, plan)));
	err = svc_resp_json(resp, 200, o);
done:
	svc_rows_free(ws);
	return err;
}

/* ---- custom domains ---- */

/* A domain of the list or of a verify answer: {id, domain, status, reason, checkedAt}. */
static struct json_object *domain_json(const struct svc_rows *rows, size_t r)
{
	struct json_object *o = json_object_new_object();

	svc_json_add_str(o, "id", svc_rows_get(rows, r, CDLCOL_ID));
	svc_json_add_str(o, "domain", svc_rows_get(rows, r, CDLCOL_DOMAIN));
	svc_json_add_str(o, "status", svc_rows_get(rows, r, CDLCOL_STATUS));
	svc_json_add_str(o, "reason", svc_rows_get(rows, r, CDLCOL_REASON));
	svc_json_add_time(o, "checkedAt", svc_rows_get(rows, r, CDLCOL_CHECKED));
	return o;
}

_Static_assert((int)CDLCOL_ID == (int)CDGCOL_ID && (int)CDLCOL_DOMAIN == (int)CDGCOL_DOMAIN &&
		       (int)CDLCOL_STATUS == (int)CDGCOL_STATUS && (int)CDLCOL_REASON == (int)CDGCOL_REASON &&
		       (int)CDLCOL_CHECKED == (int)CDGCOL_CHECKED,
	       "STMT_DOMAIN_GET starts with the columns of STMT_DOMAIN_LIST (domain_json reads either)");

/* Appends {type, name, value} to the array `records`. */
static void add_record(struct json_object *records, const char *type, const char *name, const char *value)
{
	struct json_object *r = json_object_new_object();

	svc_json_add_str(r, "type", type);
	svc_json_add_str(r, "name", name);
	svc_json_add_str(r, "value", value);
	json_object_array_add(records, r);
}

/* Adds dnsRecords to domain object `o` of name `name`: the CNAME to set, and the A record when SVC_PUBLIC_IPV4 is set. */
static void add_records(struct json_object *o, const struct svc_config *cfg, const char *name)
{
	struct svc_domain_settings s;
	struct json_object *records = json_object_new_array();

	svc_domain_settings_load(cfg, &s);
	add_record(records, "CNAME", name, s.cname_target);
	if (*s.public_ipv4)
		add_record(records, "A", name, s.public_ipv4);
	json_object_object_add(o, "dnsRecords", records);
}

/* GET /domains/project/:projectId: 200 {items: [{id, domain, status, reason, checkedAt, dnsRecords}]}; 403; 404. */
enum svc_err svc_api_domains_list(struct svc_req *req, struct svc_resp *resp)
{
	const char *pid = svc_req_param(req, "projectId");
	struct svc_rows *project = NULL, *rows = NULL;
	struct json_object *body, *items;
	struct svc_dbv p;
	size_t r;
	int err;

	if ((err = svc_project_load(req, pid, SVC_ACT_READ, &project)) < 0)
		return err;
	svc_rows_free(project);
	p = svc_dbv_str(pid);
	if ((err = svc_db_run(req->ctx->db, STMT_DOMAIN_LIST, &p, 1, &rows, NULL)) < 0)
		return err;
	body = json_object_new_object();
	items = json_object_new_array();
	for (r = 0; rows && r < rows->nrows; r++) {
		struct json_object *o = domain_json(rows, r);
		add_records(o, &req->ctx->cfg, svc_rows_get(rows, r, CDLCOL_DOMAIN));
		json_object_array_add(items, o);
	}
	json_object_object_add(body, "items", items);
	svc_rows_free(rows);
	return svc_resp_json(resp, 200, body);
}

static const struct svc_field domain_fields[] = {
	{ "domain", SVC_V_STR, SVC_F_REQUIRED, 1, 300, NULL },
};
const struct svc_body svc_api_domains_add_body = SVC_BODY(domain_fields);

/* Adding a domain within the workspace's plan, a transaction of svc_db_tx(). */
struct domain_add {
	struct svc_req *req;
	struct svc_resp *resp;
	const char *wid, *pid, *name;
	char id[37];
};

static int domain_add_tx(struct svc_db *db, void *arg)
{
	struct domain_add *a = arg;
	const struct svc_config *cfg = &a->req->ctx->cfg;
	struct svc_rows *ws = NULL, *count = NULL;
	struct svc_dbv p[5];
	const char *plan;
	uint64_t n = 0, limit;
	int err;

	p[0] = svc_dbv_str(a->wid);
	if ((err = svc_db_run(db, STMT_WS_PLAN_LOCK, p, 1, &ws, NULL)) < 0 ||
	    (err = svc_db_run(db, STMT_DOMAIN_COUNT_WS, p, 1, &count, NULL)) < 0)
		goto done;
	if (!ws || ws->nrows != 1) {
		err = SVC_E_NOT_FOUND;
		goto done;
	}
	plan = svc_rows_get(ws, 0, WPCOL_PLAN);
	limit = svc_plan_domain_limit(cfg, plan);
	svc_parse_u64(count && count->nrows == 1 ? svc_rows_get(count, 0, CDCCOL_COUNT) : "0", UINT64_MAX, &n);
	if (n >= limit) {
		err = svc_resp_error(a->resp, SVC_E_PLAN_LIMIT, NULL,
				     "The %s plan allows %llu custom domain%s per workspace; this workspace has %llu.", plan,
				     (unsigned long long)limit, limit == 1 ? "" : "s", (unsigned long long)n);
		goto done;
	}
	if ((err = svc_uuid_v4(a->id)) < 0)
		goto done;
	p[0] = svc_dbv_str(a->id);
	p[1] = svc_dbv_str(a->pid);
	p[2] = svc_dbv_str(a->name);
	p[3] = svc_dbv_str(a->req->user_id);
	p[4] = svc_dbv_i64(0); /* svc-worker checks it on its next round */
	if ((err = svc_db_run(db, STMT_DOMAIN_INSERT, p, 5, NULL, NULL)) == SVC_E_CONFLICT)
		svc_resp_error(a->resp, err, "domain", "%s is already added to a project.", a->name);
done:
	svc_rows_free(count);
	svc_rows_free(ws);
	return err;
}

/*
 * POST /domains/project/:projectId {domain}: 201 {id, domain, status, reason, checkedAt, dnsRecords};
 * 400 (domain: the name rules); 403 (below workspace admin; plan_limit); 404; 409 not_published (never
 * published), conflict (the name is taken).
 */
enum svc_err svc_api_domains_add(struct svc_req *req, struct svc_resp *resp)
{
	const struct svc_config *cfg = &req->ctx->cfg;
	const char *pid = svc_req_param(req, "projectId");
	struct svc_rows *rows = NULL;
	struct domain_add a = { req, resp, NULL, pid, NULL, "" };
	struct json_object *o;
	char name[256], why[512];
	int err;

	if ((err = svc_project_load(req, pid, SVC_ACT_DOMAINS, &rows)) < 0) {
		if (err == SVC_E_FORBIDDEN)
			svc_resp_error(resp, err, NULL, "Custom domains are managed by the workspace's admins and owners.");
		return err;
	}
	if ((err = svc_domain_normalize(json_object_get_string(json_object_object_get(req->json, "domain")),
					cfg->domain, name, sizeof name, why, sizeof why)) < 0) {
		if (err == SVC_E_VALIDATION)
			svc_resp_error(resp, err, "domain", "%s", why);
		goto done;
	}
	if (!svc_rows_get(rows, 0, PCOL_PUBLISHED)) {
		err = svc_resp_error(resp, SVC_E_NOT_PUBLISHED, NULL,
				     "Publish the project before adding a custom domain (spec rule 5).");
		goto done;
	}
	a.wid = svc_rows_get(rows, 0, PCOL_WORKSPACE);
	a.name = name;
	if ((err = svc_db_tx(req->ctx->db, domain_add_tx, &a)) < 0)
		goto done;
	svc_log_info("domains: user %s added %s (%s) to project %s", req->user_id, name, a.id, pid);
	o = json_object_new_object();
	svc_json_add_str(o, "id", a.id);
	svc_json_add_str(o, "domain", name);
	svc_json_add_str(o, "status", "pending_dns");
	svc_json_add_str(o, "reason", NULL);
	svc_json_add_str(o, "checkedAt", NULL);
	add_records(o, cfg, name);
	err = svc_resp_json(resp, 201, o);
done:
	svc_rows_free(rows);
	return err;
}

/*
 * Loads domain :domainId (STMT_DOMAIN_GET row into *out) and checks SVC_ACT_DOMAINS on its project.
 * Errors: SVC_E_NOT_FOUND, SVC_E_FORBIDDEN (with a message), DB errors.
 */
static int domain_load(struct svc_req *req, struct svc_resp *resp, struct svc_rows **out)
{
	const char *id = svc_req_param(req, "domainId");
	struct svc_rows *rows = NULL, *project = NULL;
	struct svc_dbv p = svc_dbv_str(id);
	int err;

	if ((err = svc_db_run(req->ctx->db, STMT_DOMAIN_GET, &p, 1, &rows, NULL)) < 0)
		return err;
	if (!rows || rows->nrows != 1) {
		svc_rows_free(rows);
		return SVC_E_NOT_FOUND;
	}
	if ((err = svc_project_load(req, svc_rows_get(rows, 0, CDGCOL_PROJECT), SVC_ACT_DOMAINS, &project)) < 0) {
		svc_rows_free(rows);
		if (err == SVC_E_FORBIDDEN)
			svc_resp_error(resp, err, NULL, "Custom domains are managed by the workspace's admins and owners.");
		return err;
	}
	svc_rows_free(project);
	*out = rows;
	return 0;
}

/* DELETE /domains/:domainId: 200 {id, domain, deleted: true}; 403; 404. */
enum svc_err svc_api_domains_delete(struct svc_req *req, struct svc_resp *resp)
{
	struct svc_rows *rows = NULL;
	struct json_object *o;
	struct svc_dbv p;
	const char *status;
	int err;

	if ((err = domain_load(req, resp, &rows)) < 0)
		return err;
	p = svc_dbv_str(svc_rows_get(rows, 0, CDGCOL_ID));
	if ((err = svc_db_run(req->ctx->db, STMT_DOMAIN_DELETE, &p, 1, NULL, NULL)) < 0)
		goto done;
	p = svc_dbv_str(svc_rows_get(rows, 0, CDGCOL_PROJECT));
	if ((err = svc_db_run(req->ctx->db, STMT_DOMAIN_SYNC_PROJECT, &p, 1, NULL, NULL)) < 0)
		goto done;
	status = svc_rows_get(rows, 0, CDGCOL_STATUS);
	/* spec: removal also updates the proxy configuration */
	if ((strcmp(status, "active") == 0 || strcmp(status, "pending_verification") == 0) &&
	    (err = svc_sites_queue(req->ctx->db)) < 0)
		goto done;
	svc_log_info("domains: user %s removed %s (%s)", req->user_id, svc_rows_get(rows, 0, CDGCOL_DOMAIN),
		     svc_rows_get(rows, 0, CDGCOL_ID));
	o = json_object_new_object();
	svc_json_add_str(o, "id", svc_rows_get(rows, 0, CDGCOL_ID));
	svc_json_add_str(o, "domain", svc_rows_get(rows, 0, CDGCOL_DOMAIN));
	json_object_object_add(o, "deleted", json_object_new_boolean(1));
	err = svc_resp_json(resp, 200, o);
done:
	svc_rows_free(rows);
	return err;
}

/* POST /domains/:domainId/verify: runs the checks now; 200 {id, domain, status, reason, checkedAt, dnsRecords}; 403; 404. */
enum svc_err svc_api_domains_verify(struct svc_req *req, struct svc_resp *resp)
{
	struct svc_rows *rows = NULL, *after = NULL;
	struct json_object *o;
	struct svc_dbv p;
	int err, changed = 0;

	if ((err = domain_load(req, resp, &rows)) < 0)
		return err;
	if ((err = svc_domain_check(req->ctx->db, &req->ctx->cfg, svc_rows_get(rows, 0, CDGCOL_ID), 1, &changed)) < 0)
		goto done;
	if (changed && (err = svc_sites_queue(req->ctx->db)) < 0)
		goto done;
	p = svc_dbv_str(svc_rows_get(rows, 0, CDGCOL_ID));
	if ((err = svc_db_run(req->ctx->db, STMT_DOMAIN_GET, &p, 1, &after, NULL)) < 0)
		goto done;
	if (!after || after->nrows != 1) {
		err = SVC_E_NOT_FOUND;
		goto done;
	}
	o = domain_json(after, 0);
	add_records(o, &req->ctx->cfg, svc_rows_get(after, 0, CDGCOL_DOMAIN));
	err = svc_resp_json(resp, 200, o);
done:
	svc_rows_free(after);
	svc_rows_free(rows);
	return err;
}

/* ---- on-demand TLS ---- */

/*
 * GET /internal/tls/ask?domain=NAME (SVC_R_LOCAL): Caddy's on_demand_tls `ask`. 200 {domain} for a
 * custom domain the web servers serve (pending_verification or active) or a published
 * <slug>.<SVC_DOMAIN>; 404 otherwise (and for clients not on this host or in SVC_TRUSTED_PROXIES);
 * 400 without a domain.
 */
enum svc_err svc_api_tls_ask(struct svc_req *req, struct svc_resp *resp)
{
	const char *dom = req->ctx->cfg.domain;
	char name[300], slug[80];
	struct svc_rows *rows = NULL;
	struct svc_dbv p;
	struct json_object *o;
	size_t len, dlen = strlen(dom), i;
	int err;

	if ((err = svc_req_query(req, "domain", name, sizeof name)) < 0 || err == 0 || !name[0])
		return svc_resp_error(resp, SVC_E_VALIDATION, "domain", "domain is required (?domain=NAME)");
	len = strlen(name);
	for (i = 0; i < len; i++)
		if (name[i] >= 'A' && name[i] <= 'Z')
			name[i] = (char)(name[i] - 'A' + 'a');
	if (len > dlen + 1 && name[len - dlen - 1] == '.' && strcmp(name + len - dlen, dom) == 0) {
		/* <slug>.<SVC_DOMAIN>: one label */
		if (len - dlen - 1 >= sizeof slug || memchr(name, '.', len - dlen - 1))
			return SVC_E_NOT_FOUND;
		memcpy(slug, name, len - dlen - 1);
		slug[len - dlen - 1] = '\0';
		p = svc_dbv_str(slug);
		err = svc_db_run(req->ctx->db, STMT_SITE_ASK, &p, 1, &rows, NULL);
	} else {
		p = svc_dbv_str(name);
		err = svc_db_run(req->ctx->db, STMT_DOMAIN_ASK, &p, 1, &rows, NULL);
	}
	if (err < 0)
		return err;
	err = rows && rows->nrows > 0 ? 0 : SVC_E_NOT_FOUND;
	svc_rows_free(rows);
	if (err < 0)
		return err;
	o = json_object_new_object();
	svc_json_add_str(o, "domain", name);
	return svc_resp_json(resp, 200, o);
}
