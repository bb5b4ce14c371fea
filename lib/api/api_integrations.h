/* api_integrations.h: the handlers of integrations: the catalogue, workspace enablement, the platform admin endpoints and their audit log (docs/api.md "Integrations"). */
#ifndef SVC_API_INTEGRATIONS_H
#define SVC_API_INTEGRATIONS_H

#include "http/http.h"

/*
 * Handlers, answering as docs/api.md "Integrations" describes; the statuses
 * each gives besides the router's are listed at its definition in
 * lib/api/api_integrations*.c. The admin ones answer 403 to anyone but a
 * platform admin (spec "Authentication" 10).
 */
enum svc_err svc_api_integrations_list(struct svc_req *req, struct svc_resp *resp);
enum svc_err svc_api_integrations_get(struct svc_req *req, struct svc_resp *resp);
enum svc_err svc_api_integrations_ws_set(struct svc_req *req, struct svc_resp *resp);
enum svc_err svc_api_integrations_enabled_bulk(struct svc_req *req, struct svc_resp *resp);
enum svc_err svc_api_integrations_platform_enabled_bulk(struct svc_req *req, struct svc_resp *resp);
enum svc_err svc_api_integrations_app_upsert(struct svc_req *req, struct svc_resp *resp);
enum svc_err svc_api_integrations_app_list(struct svc_req *req, struct svc_resp *resp);
enum svc_err svc_api_integrations_app_delete(struct svc_req *req, struct svc_resp *resp);
enum svc_err svc_api_integrations_cred_upsert(struct svc_req *req, struct svc_resp *resp);
enum svc_err svc_api_integrations_cred_get(struct svc_req *req, struct svc_resp *resp);
enum svc_err svc_api_integrations_cred_delete(struct svc_req *req, struct svc_resp *resp);
enum svc_err svc_api_integrations_cred_workspaces(struct svc_req *req, struct svc_resp *resp);
enum svc_err svc_api_integrations_audit(struct svc_req *req, struct svc_resp *resp);
enum svc_err svc_api_integrations_hosts_get(struct svc_req *req, struct svc_resp *resp);
enum svc_err svc_api_integrations_hosts_put(struct svc_req *req, struct svc_resp *resp);
enum svc_err svc_api_integrations_connect(struct svc_req *req, struct svc_resp *resp);
enum svc_err svc_api_integrations_callback(struct svc_req *req, struct svc_resp *resp);
enum svc_err svc_api_integrations_connection_get(struct svc_req *req, struct svc_resp *resp);
enum svc_err svc_api_integrations_connection_delete(struct svc_req *req, struct svc_resp *resp);
enum svc_err svc_api_xray_stats(struct svc_req *req, struct svc_resp *resp);
enum svc_err svc_api_xray_active(struct svc_req *req, struct svc_resp *resp);
enum svc_err svc_api_xray_stuck(struct svc_req *req, struct svc_resp *resp);
enum svc_err svc_api_xray_history(struct svc_req *req, struct svc_resp *resp);
extern const struct svc_body svc_api_integrations_ws_set_body;
extern const struct svc_body svc_api_integrations_bulk_body;
extern const struct svc_body svc_api_integrations_app_upsert_body;
extern const struct svc_body svc_api_integrations_cred_upsert_body;
extern const struct svc_body svc_api_integrations_cred_workspaces_body;
extern const struct svc_body svc_api_integrations_hosts_body;

/*
 * Shared by lib/api/api_integrations*.c: answers 403 (recorded in resp) unless the caller is a
 * platform admin with an admin-scoped credential (SVC_ACT_INTEG_ADMIN). Returns 0 or the error.
 */
int svc_api_integrations__require_admin(struct svc_req *req, struct svc_resp *resp);

/*
 * Shared by lib/api/api_integrations*.c: one audited admin write in a transaction of svc_db_tx()
 * (run again after a Galera certification failure): statement `stmt` with its `n` parameters, then
 * the audit entry `action` on `resource` with `details` (borrowed) by the caller. need_row: when
 * the statement changed no row, nothing is written and the answer is SVC_E_NOT_FOUND. Its
 * affected rows go to *affected (may be NULL). Returns 0 or the error.
 */
int svc_api_integrations__audited(struct svc_req *req, enum svc_stmt stmt, const struct svc_dbv *p, size_t n,
				  int need_row, const char *action, const char *resource, struct json_object *details,
				  uint64_t *affected);

/*
 * Shared by the paged admin lists (the audit log, xray's history): checks the platform admin, reads
 * ?limit (1..100, default 50) and ?cursor (a seq the last page ended at) and runs `stmt` with
 * (before seq, limit + 1). *out holds the rows (freed by the caller), *out_limit the page size.
 * Errors: 403, 400 validation_failed (limit, cursor; recorded in resp), DB errors.
 */
int svc_api_integrations__seq_page(struct svc_req *req, struct svc_resp *resp, enum svc_stmt stmt,
				   struct svc_rows **out, uint64_t *out_limit);

#endif
