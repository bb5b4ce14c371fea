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

	if ((err = svc_workspace_load(svc_req_caller(req), wid, SVC_ACT_WS_PLAN, NULL, &ws)) < 0) {
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

/*
 * Adds dnsRecords to domain object `o` of name `name`: the CNAME to set, the A record when
 * SVC_PUBLIC_IPV4 is set, and with SVC_DOMAIN_TXT_PROOF=1 the TXT record _svc-challenge.<name>
 * holding the domain's `token`.
 */
static void add_records(struct json_object *o, const struct svc_config *cfg, const char *name, const char *token)
{
	struct svc_domain_settings s;
	struct json_object *records = json_object_new_array();
	char txt[300];

	svc_domain_settings_load(cfg, &s);
	add_record(records, "CNAME", name, s.cname_target);
	if (*s.public_ipv4)
		add_record(records, "A", name, s.public_ipv4);
	if (s.txt_proof && token && *token) {
		snprintf(txt, sizeof txt, "%s.%s", SVC_DOMAIN_TXT_LABEL, name);
		add_record(records, "TXT", txt, token);
	}
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

	if ((err = svc_project_load(svc_req_caller(req), pid, SVC_ACT_READ, &project)) < 0)
		return err;
	svc_rows_free(project);
	p = svc_dbv_str(pid);
	if ((err = svc_db_run(req->ctx->db, STMT_DOMAIN_LIST, &p, 1, &rows, NULL)) < 0)
		return err;
	body = json_object_new_object();
	items = json_object_new_array();
	for (r = 0; rows && r < rows->nrows; r++) {
		struct json_object *o = domain_json(rows, r);
		add_records(o, &req->ctx->cfg, svc_rows_get(rows, r, CDLCOL_DOMAIN), svc_rows_get(rows, r, CDLCOL_TOKEN));
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
	char token[33];   /* the TXT record's value (SVC_DOMAIN_TXT_PROOF) */
};

/*
 * Whether workspace `wid` may add `name` (issue 25, item 2): 409 conflict when one of its projects
 * has it already, when another workspace serves it (pending_verification or active), or while it
 * is held for the workspace that removed it (SVC_DOMAIN_HOLD_DAYS). Returns 0 or the error
 * (set on resp).
 */
static int name_free(struct svc_db *db, struct svc_resp *resp, const char *wid, const char *name)
{
	struct svc_rows *rows = NULL;
	struct svc_dbv p = svc_dbv_str(name);
	size_t r;
	int err;

	if ((err = svc_db_run(db, STMT_DOMAIN_NAME_ROWS, &p, 1, &rows, NULL)) < 0)
		return err;
	for (r = 0; rows && r < rows->nrows && err == 0; r++) {
		const char *status = svc_rows_get(rows, r, CDNCOL_STATUS);
		if (strcmp(svc_rows_get(rows, r, CDNCOL_WORKSPACE), wid) == 0)
			err = svc_resp_error(resp, SVC_E_CONFLICT, "domain", "%s is already added to a project.", name);
		else if (strcmp(status, "active") == 0 || strcmp(status, "pending_verification") == 0)
			err = svc_resp_error(resp, SVC_E_CONFLICT, "domain",
					     "%s is in use by another workspace: its DNS points here and svc serves its site.",
					     name);
	}
	svc_rows_free(rows);
	rows = NULL;
	if (err == 0 && (err = svc_db_run(db, STMT_DOMAIN_HOLD_GET, &p, 1, &rows, NULL)) == 0 && rows &&
	    rows->nrows > 0 && strcmp(svc_rows_get(rows, 0, CDHCOL_WORKSPACE), wid) != 0) {
		char until[40] = "";
		svc_time_from_db(svc_rows_get(rows, 0, CDHCOL_UNTIL), until);
		err = svc_resp_error(resp, SVC_E_CONFLICT, "domain",
				     "%s was removed from another workspace, which alone may add it again until %s "
				     "(its DNS may still point here).", name, until);
	}
	svc_rows_free(rows);
	return err;
}

static int domain_add_tx(struct svc_db *db, void *arg)
{
	struct domain_add *a = arg;
	const struct svc_config *cfg = &a->req->ctx->cfg;
	struct svc_rows *ws = NULL, *count = NULL;
	struct svc_dbv p[6];
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
	/* under the workspace's lock: two adds of one name in one workspace never both pass */
	if ((err = name_free(db, a->resp, a->wid, a->name)) < 0)
		goto done;
	if ((err = svc_uuid_v4(a->id)) < 0 || (err = svc_random_hex(a->token, 16)) < 0)
		goto done;
	p[0] = svc_dbv_str(a->id);
	p[1] = svc_dbv_str(a->pid);
	p[2] = svc_dbv_str(a->name);
	p[3] = svc_dbv_str(a->req->user_id);
	p[4] = svc_dbv_i64(0); /* svc-worker checks it on its next round */
	p[5] = svc_dbv_str(a->token);
	err = svc_db_run(db, STMT_DOMAIN_INSERT, p, 6, NULL, NULL);
done:
	svc_rows_free(count);
	svc_rows_free(ws);
	return err;
}

/*
 * POST /domains/project/:projectId {domain}: 201 {id, domain, status, reason, checkedAt, dnsRecords};
 * 400 (domain: the name rules, the platform's own names); 403 (below workspace admin; plan_limit); 404;
 * 409 not_published (never published), conflict (the name is in this workspace already, served for
 * another, or held for the workspace that removed it).
 */
enum svc_err svc_api_domains_add(struct svc_req *req, struct svc_resp *resp)
{
	const struct svc_config *cfg = &req->ctx->cfg;
	const char *pid = svc_req_param(req, "projectId");
	struct svc_rows *rows = NULL;
	struct domain_add a = { req, resp, NULL, pid, NULL, "", "" };
	struct json_object *o;
	char name[256], why[512];
	int err;

	if ((err = svc_project_load(svc_req_caller(req), pid, SVC_ACT_DOMAINS, &rows)) < 0) {
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
	if (svc_domain_reserved(cfg, name, why, sizeof why)) {
		err = svc_resp_error(resp, SVC_E_VALIDATION, "domain", "%s", why);
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
	add_records(o, cfg, name, a.token);
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
	if ((err = svc_project_load(svc_req_caller(req), svc_rows_get(rows, 0, CDGCOL_PROJECT), SVC_ACT_DOMAINS,
				    &project)) < 0) {
		svc_rows_free(rows);
		if (err == SVC_E_FORBIDDEN)
			svc_resp_error(resp, err, NULL, "Custom domains are managed by the workspace's admins and owners.");
		return err;
	}
	svc_rows_free(project);
	*out = rows;
	return 0;
}

/*
 * DELETE /domains/:domainId: 200 {id, domain, deleted: true}; 403; 404. A name that was served
 * (its DNS pointed here) stays held for the workspace for SVC_DOMAIN_HOLD_DAYS (issue 25, item 2):
 * its records may still point here, and nobody else may take them over meanwhile. A name that
 * never got past pending_dns is not held (a squatter's removal would otherwise hold it).
 */
enum svc_err svc_api_domains_delete(struct svc_req *req, struct svc_resp *resp)
{
	struct svc_domain_settings s;
	struct svc_rows *rows = NULL;
	struct json_object *o;
	struct svc_dbv p, h[3];
	const char *status;
	int err, was_served;

	if ((err = domain_load(req, resp, &rows)) < 0)
		return err;
	svc_domain_settings_load(&req->ctx->cfg, &s);
	status = svc_rows_get(rows, 0, CDGCOL_STATUS);
	was_served = strcmp(status, "active") == 0 || strcmp(status, "pending_verification") == 0;
	p = svc_dbv_str(svc_rows_get(rows, 0, CDGCOL_ID));
	if ((err = svc_db_run(req->ctx->db, STMT_DOMAIN_DELETE, &p, 1, NULL, NULL)) < 0)
		goto done;
	h[0] = svc_dbv_str(svc_rows_get(rows, 0, CDGCOL_DOMAIN));
	h[1] = svc_dbv_str(svc_rows_get(rows, 0, CDGCOL_WORKSPACE));
	h[2] = svc_dbv_i64(s.hold_secs);
	if (was_served && s.hold_secs > 0 && (err = svc_db_run(req->ctx->db, STMT_DOMAIN_HOLD_SET, h, 3, NULL, NULL)) < 0)
		goto done;
	p = svc_dbv_str(svc_rows_get(rows, 0, CDGCOL_PROJECT));
	if ((err = svc_db_run(req->ctx->db, STMT_DOMAIN_SYNC_PROJECT, &p, 1, NULL, NULL)) < 0)
		goto done;
	/* spec: removal also updates the proxy configuration */
	if (was_served && (err = svc_sites_queue(req->ctx->db)) < 0)
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

/* Queuing a check by hand under the workspace's lock, a transaction of svc_db_tx(). */
struct domain_verify {
	struct svc_resp *resp;
	const struct svc_domain_settings *s;
	const char *id, *wid;
	int queued;           /* out: 1 when this call queued the check, 0 when one was in flight already */
};

/* Seconds after which a queued check counts as dead (its worker is gone): longer than a check can take. */
static int64_t in_flight_secs(const struct svc_domain_settings *s)
{
	return s->timeout_ms / 1000 * 3 + 60;
}

/*
 * The state of domain `id` for a check by hand (STMT_DOMAIN_VERIFY_STATE): seconds left of its
 * cooldown, whether a check of it is in flight, how many of its workspace's are. A plain read.
 */
static int verify_state(struct svc_db *db, const struct svc_domain_settings *s, const char *id, uint64_t *out_left,
			int *out_in_flight, uint64_t *out_ws_n)
{
	struct svc_rows *st = NULL;
	struct svc_dbv p[4];
	const char *f;
	int err;

	p[0] = svc_dbv_i64(s->verify_cooldown_secs);
	p[1] = svc_dbv_i64(in_flight_secs(s));
	p[2] = svc_dbv_i64(in_flight_secs(s));
	p[3] = svc_dbv_str(id);
	if ((err = svc_db_run(db, STMT_DOMAIN_VERIFY_STATE, p, 4, &st, NULL)) < 0)
		return err;
	if (!st || st->nrows != 1) {
		svc_rows_free(st);
		return SVC_E_NOT_FOUND;
	}
	*out_left = *out_ws_n = 0;
	svc_parse_u64(svc_rows_get(st, 0, CDVCOL_COOLDOWN_LEFT), INT64_MAX, out_left);
	svc_parse_u64(svc_rows_get(st, 0, CDVCOL_WS_IN_FLIGHT), INT64_MAX, out_ws_n);
	f = svc_rows_get(st, 0, CDVCOL_IN_FLIGHT);
	*out_in_flight = f && strcmp(f, "1") == 0;
	svc_rows_free(st);
	return 0;
}

/* The 429 of the cooldown: Retry-After `left` seconds. */
static int cooldown_error(struct svc_resp *resp, uint64_t left)
{
	svc_resp_rate_limited(resp, (int64_t)left);
	return svc_resp_error(resp, SVC_E_RATE_LIMITED, NULL, "This domain was checked moments ago; try again in %llu s.",
			      (unsigned long long)(left ? left : 1));
}

static int domain_verify_tx(struct svc_db *db, void *arg)
{
	struct domain_verify *v = arg;
	struct svc_rows *ws = NULL;
	struct svc_dbv p[2];
	uint64_t left = 0, ws_n = 0;
	int err, in_flight = 0;

	v->queued = 0;
	p[0] = svc_dbv_str(v->wid);
	if ((err = svc_db_run(db, STMT_WS_PLAN_LOCK, p, 1, &ws, NULL)) < 0 ||
	    (err = verify_state(db, v->s, v->id, &left, &in_flight, &ws_n)) < 0)
		goto done;
	if (in_flight)
		goto done; /* one check per domain at a time: the one in flight answers */
	if (ws_n >= SVC_DOMAIN_CHECKS_PER_WS) {
		svc_resp_rate_limited(v->resp, v->s->verify_cooldown_secs);
		err = svc_resp_error(v->resp, SVC_E_RATE_LIMITED, NULL,
				     "This workspace has %d domain checks running; try again when one has finished.",
				     SVC_DOMAIN_CHECKS_PER_WS);
		goto done;
	}
	p[0] = svc_dbv_i64(in_flight_secs(v->s));
	p[1] = svc_dbv_str(v->id);
	if ((err = svc_db_run(db, STMT_DOMAIN_VERIFY_QUEUE, p, 2, NULL, NULL)) < 0 ||
	    (err = svc_domain_verify_queue(db, v->id)) < 0)
		goto done;
	v->queued = 1;
done:
	svc_rows_free(ws);
	return err;
}

/*
 * Takes a check by hand of domain v->id: a plain read answers a domain within its cooldown at once
 * (a burst of verifies never queues on a lock), one conditional update takes the ask (of a burst
 * that got past the read, one wins: the rest are within the cooldown), and only then the workspace
 * is locked to count its checks in flight. Returns 0 (v->queued set) or the error (set on resp).
 */
static int domain_verify_take(struct svc_db *db, struct domain_verify *v)
{
	struct svc_dbv p[2];
	uint64_t left = 0, ws_n = 0, affected = 0;
	int err, in_flight = 0;

	if ((err = verify_state(db, v->s, v->id, &left, &in_flight, &ws_n)) < 0)
		return err;
	if (left > 0)
		return cooldown_error(v->resp, left);
	p[0] = svc_dbv_str(v->id);
	p[1] = svc_dbv_i64(v->s->verify_cooldown_secs);
	if ((err = svc_db_run(db, STMT_DOMAIN_VERIFY_ASK, p, 2, NULL, &affected)) < 0)
		return err;
	if (affected != 1)
		return cooldown_error(v->resp, (uint64_t)v->s->verify_cooldown_secs);
	return svc_db_tx(db, domain_verify_tx, v);
}

/*
 * POST /domains/:domainId/verify: queues the domain's checks on svc-worker (issue 25, item 4; the
 * DNS and HTTPS checks can take SVC_DOMAIN_CHECK_TIMEOUT each, never on the request path).
 * 202 {id, domain, status, reason, checkedAt, dnsRecords, checkQueuedAt} (the status as it is; the
 * client polls the list); 403; 404; 429 rate_limited with Retry-After (within
 * SVC_DOMAIN_VERIFY_COOLDOWN_SECS of the last ask, or SVC_DOMAIN_CHECKS_PER_WS checks of the
 * workspace in flight).
 */
enum svc_err svc_api_domains_verify(struct svc_req *req, struct svc_resp *resp)
{
	struct svc_domain_settings s;
	struct svc_rows *rows = NULL, *after = NULL;
	struct domain_verify v;
	struct json_object *o;
	struct svc_dbv p;
	int err;

	if ((err = domain_load(req, resp, &rows)) < 0)
		return err;
	svc_domain_settings_load(&req->ctx->cfg, &s);
	v.resp = resp;
	v.s = &s;
	v.id = svc_rows_get(rows, 0, CDGCOL_ID);
	v.wid = svc_rows_get(rows, 0, CDGCOL_WORKSPACE);
	if ((err = domain_verify_take(req->ctx->db, &v)) < 0)
		goto done;
	if (v.queued)
		svc_log_info("domains: user %s asked for a check of %s (%s)", req->user_id,
			     svc_rows_get(rows, 0, CDGCOL_DOMAIN), v.id);
	p = svc_dbv_str(v.id);
	if ((err = svc_db_run(req->ctx->db, STMT_DOMAIN_GET, &p, 1, &after, NULL)) < 0)
		goto done;
	if (!after || after->nrows != 1) {
		err = SVC_E_NOT_FOUND;
		goto done;
	}
	o = domain_json(after, 0);
	add_records(o, &req->ctx->cfg, svc_rows_get(after, 0, CDGCOL_DOMAIN), svc_rows_get(after, 0, CDGCOL_TOKEN));
	svc_json_add_time(o, "checkQueuedAt", svc_rows_get(after, 0, CDGCOL_QUEUED));
	err = svc_resp_json(resp, 202, o);
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
