/* api_ai_provider.c: a workspace's own model provider (GET/PUT /workspaces/:wid/ai-provider); the choice of provider per turn is lib/agent/provider.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/turn.h"
#include "api/api_agent.h"
#include "api/api_integrations.h"
#include "auth/crypto.h"
#include "core/outbound.h"
#include "core/err.h"
#include "core/json.h"
#include "core/log.h"
#include "integ/integ.h"

#define TABLE SVC_AGENT_PROVIDER_TABLE
#define MAX_ALLOWED 50

/* Only workspace admins and owners see or change the provider. */
static int admin_only(struct svc_req *req, struct svc_resp *resp, const char *wid)
{
	char role[16];
	int err;

	if ((err = svc_workspace_role(svc_req_caller(req), wid, role)) < 0)
		return err;
	if (strcmp(role, "admin") != 0 && strcmp(role, "owner") != 0)
		return svc_resp_error(resp, SVC_E_FORBIDDEN, NULL, "Only workspace admins and owners manage the AI provider.");
	return 0;
}

static struct json_object *allowed_json(const char *list)
{
	struct json_object *arr = json_object_new_array();
	const char *p = list, *end;

	while (arr && p && *p) {
		end = strchr(p, ',');
		if (!end)
			end = p + strlen(p);
		if (end > p)
			json_object_array_add(arr, json_object_new_string_len(p, (int)(end - p)));
		p = *end ? end + 1 : NULL;
	}
	return arr;
}

/*
 * Adds "apiKeyLast4" to `o`: the last four characters of the stored key `sealed` of workspace
 * `wid`, so an admin can tell which key it is; null when there is none, when it is shorter
 * than KEY_SHOWN_MIN (four would be too much of it) or when it does not open.
 */
#define KEY_SHOWN_MIN 12
static void add_key_last4(struct svc_req *req, struct json_object *o, const char *wid, const char *sealed)
{
	char last4[5] = "";
	char *key = NULL;
	size_t len = 0;

	if (sealed && sealed[0] &&
	    svc_crypto_open_secret(req->ctx->db, &req->ctx->cfg, wid, TABLE, "api_key", wid, sealed, &key, &len) == 0) {
		if (len >= KEY_SHOWN_MIN)
			memcpy(last4, key + len - 4, 4);
		svc_crypto_free_secret(key, len);
	}
	svc_json_add_str(o, "apiKeyLast4", last4[0] ? last4 : NULL);
}

/* Answers the provider of workspace `wid` as seen by an admin: never the key, at most its last four characters. */
static int answer(struct svc_req *req, struct svc_resp *resp, const char *wid)
{
	const struct svc_config *cfg = &req->ctx->cfg;
	struct svc_rows *rows = NULL;
	struct svc_dbv p = svc_dbv_str(wid);
	struct json_object *o;
	int err;

	if ((err = svc_db_run(req->ctx->db, STMT_AGENT_PROVIDER_GET, &p, 1, &rows, NULL)) < 0)
		return err;
	o = json_object_new_object();
	if (rows && rows->nrows == 1) {
		const char *key = svc_rows_get(rows, 0, PVCOL_API_KEY);

		svc_json_add_str(o, "source", "workspace");
		svc_json_add_str(o, "protocol", svc_rows_get(rows, 0, PVCOL_PROTOCOL));
		svc_json_add_str(o, "baseUrl", svc_rows_get(rows, 0, PVCOL_BASE_URL));
		svc_json_add_str(o, "model", svc_rows_get(rows, 0, PVCOL_MODEL));
		json_object_object_add(o, "allowedModels", allowed_json(svc_rows_get(rows, 0, PVCOL_ALLOWED_MODELS)));
		json_object_object_add(o, "hasApiKey", json_object_new_boolean(key && key[0]));
		add_key_last4(req, o, wid, key);
		svc_json_add_time(o, "updatedAt", svc_rows_get(rows, 0, PVCOL_UPDATED));
		svc_json_add_str(o, "toolMode", svc_rows_get(rows, 0, PVCOL_TOOL_MODE));
	} else {
		/* the instance default: its URL and model are shown, its key is not */
		svc_json_add_str(o, "source", cfg->ai_base_url[0] ? "instance" : "none");
		svc_json_add_str(o, "protocol", cfg->ai_base_url[0] ? cfg->ai_protocol : NULL);
		svc_json_add_str(o, "baseUrl", cfg->ai_base_url[0] ? cfg->ai_base_url : NULL);
		svc_json_add_str(o, "model", cfg->ai_base_url[0] ? cfg->ai_model : NULL);
		json_object_object_add(o, "allowedModels", allowed_json(cfg->ai_models));
		json_object_object_add(o, "hasApiKey", json_object_new_boolean(cfg->ai_api_key[0] != '\0'));
		svc_json_add_str(o, "apiKeyLast4", NULL);   /* the instance's key is the operator's */
		svc_json_add_str(o, "updatedAt", NULL);
		svc_json_add_str(o, "toolMode", cfg->ai_base_url[0] ? cfg->ai_tool_mode : NULL);
	}
	svc_rows_free(rows);
	return svc_resp_json(resp, 200, o);
}

/*
 * The provider's write, one transaction of svc_db_tx() (run again after a Galera certification
 * failure): the provider's row (`stmt`), its toolMode (issue 29), and the audit entry when the
 * key changes (`action` not NULL), so a failure of any leaves none of them.
 */
struct provider_write {
	enum svc_stmt stmt;
	const struct svc_dbv *p;
	size_t n;
	const char *mode;  /* "native" or "text" ("native" when the PUT has none: a PUT replaces the provider) */
	const char *wid, *action, *actor;
	struct json_object *details;
};

static int provider_tx(struct svc_db *db, void *arg)
{
	struct provider_write *w = arg;
	struct svc_dbv m[2] = { svc_dbv_str(w->mode), svc_dbv_str(w->wid) };
	int err;

	if ((err = svc_db_run(db, w->stmt, w->p, w->n, NULL, NULL)) < 0 ||
	    (err = svc_db_run(db, STMT_AGENT_PROVIDER_TOOL_MODE, m, 2, NULL, NULL)) < 0)
		return err;
	return w->action ? svc_integ_audit(db, w->action, w->wid, w->details, w->actor) : 0;
}

/* GET /workspaces/:wid/ai-provider: 200; 403; 404. */
enum svc_err svc_api_ai_provider_get(struct svc_req *req, struct svc_resp *resp)
{
	const char *wid = svc_req_param(req, "wid");
	int err;

	if ((err = admin_only(req, resp, wid)) < 0)
		return err;
	return answer(req, resp, wid);
}

/* Returns 1 when `s` is an http(s) URL without spaces or control characters. */
static int url_ok(const char *s)
{
	const char *p;

	if (strncmp(s, "http://", 7) != 0 && strncmp(s, "https://", 8) != 0)
		return 0;
	if (strlen(s) <= (s[4] == 's' ? 8u : 7u))
		return 0;
	for (p = s; *p; p++) {
		if ((unsigned char)*p <= 0x20 || *p == 0x7f)
			return 0;
	}
	return 1;
}

/* Returns 1 when a model name or key is visible ASCII without commas (models) / spaces. */
static int token_ok(const char *s, int allow_comma)
{
	for (; *s; s++) {
		if (*s < 0x21 || *s > 0x7e || (!allow_comma && *s == ','))
			return 0;
	}
	return 1;
}

/* Returns 1 when workspace `wid` has a stored key and a base URL other than `url`, 0 when not, or an error. */
static int base_url_changed(struct svc_req *req, const char *wid, const char *url)
{
	struct svc_rows *rows = NULL;
	struct svc_dbv p = svc_dbv_str(wid);
	const char *key, *old;
	int err;

	if ((err = svc_db_run(req->ctx->db, STMT_AGENT_PROVIDER_GET, &p, 1, &rows, NULL)) < 0)
		return err;
	err = 0;
	if (rows && rows->nrows == 1) {
		key = svc_rows_get(rows, 0, PVCOL_API_KEY);
		old = svc_rows_get(rows, 0, PVCOL_BASE_URL);
		err = key && key[0] && strcmp(old ? old : "", url) != 0;
	}
	svc_rows_free(rows);
	return err;
}

static const char *const protocols[] = { "openai", "anthropic", NULL };
static const char *const tool_modes[] = { "native", "text", NULL };
static const struct svc_field provider_fields[] = {
	{ "protocol", SVC_V_ENUM, SVC_F_REQUIRED, 0, 0, protocols },
	{ "baseUrl", SVC_V_TEXT, SVC_F_REQUIRED, 1, 2000, NULL },
	{ "model", SVC_V_TEXT, SVC_F_REQUIRED, 1, 200, NULL },
	{ "apiKey", SVC_V_STR, SVC_F_NULLABLE, 0, 4096, NULL },
	{ "allowedModels", SVC_V_ARRAY, SVC_F_NULLABLE, 0, MAX_ALLOWED, NULL },
	{ "toolMode", SVC_V_ENUM, 0, 0, 0, tool_modes },
};
const struct svc_body svc_api_ai_provider_put_body = SVC_BODY(provider_fields);

/*
 * PUT /workspaces/:wid/ai-provider: 200; 400 validation_failed (baseUrl: not http(s), or its name resolves to
 * an address outward requests may not reach; apiKey: absent while baseUrl changes and a key is stored); 403;
 * 404; 503 without ENCRYPTION_KEY.
 */
enum svc_err svc_api_ai_provider_put(struct svc_req *req, struct svc_resp *resp)
{
	const char *wid = svc_req_param(req, "wid"), *url, *model, *key;
	struct json_object *allowed = NULL, *v;
	struct svc_buf list;
	struct svc_dbv p[7];
	struct provider_write w = { 0 };
	char *sealed = NULL;
	int err, has_key_field;
	size_t i, n;

	svc_buf_init(&list, 64 * 1024);
	if ((err = admin_only(req, resp, wid)) < 0)
		return err;
	url = svc_json_str(req->json, "baseUrl");
	model = svc_json_str(req->json, "model");
	key = svc_json_str(req->json, "apiKey");
	has_key_field = json_object_object_get_ex(req->json, "apiKey", &v);
	if (!url_ok(url))
		return svc_resp_error(resp, SVC_E_VALIDATION, "baseUrl", "baseUrl must be an http:// or https:// URL");
	{
		struct svc_outbound_policy outbound;
		char why[200];

		/* early answer; every connection is checked again when made (lib/core/outbound.h) */
		svc_outbound_policy_load(&req->ctx->cfg, &outbound);
		if ((err = svc_outbound_check_url(&outbound, url, why, sizeof why)) == SVC_E_FORBIDDEN)
			return svc_resp_error(resp, SVC_E_VALIDATION, "baseUrl",
					      "baseUrl may not point at an internal address (%s); the instance's "
					      "administrator can allow it with SVC_OUTBOUND_ALLOW_PRIVATE or SVC_OUTBOUND_ALLOW_NETS", why);
		if (err < 0)
			return err;
	}
	if (!token_ok(model, 0))
		return svc_resp_error(resp, SVC_E_VALIDATION, "model", "model must be visible ASCII without commas");
	if (key && key[0] && !token_ok(key, 1))
		return svc_resp_error(resp, SVC_E_VALIDATION, "apiKey", "apiKey must be visible ASCII");
	if (json_object_object_get_ex(req->json, "allowedModels", &allowed) && allowed &&
	    json_object_is_type(allowed, json_type_array)) {
		n = json_object_array_length(allowed);
		for (i = 0; i < n; i++) {
			v = json_object_array_get_idx(allowed, i);
			if (!json_object_is_type(v, json_type_string) || json_object_get_string_len(v) < 1 ||
			    json_object_get_string_len(v) > 200 || !token_ok(json_object_get_string(v), 0))
				return svc_resp_error(resp, SVC_E_VALIDATION, "allowedModels",
						      "allowedModels must be model names (visible ASCII, no commas)");
			if ((i && svc_buf_adds(&list, ",") < 0) || svc_buf_adds(&list, json_object_get_string(v)) < 0) {
				svc_buf_dispose(&list);
				return SVC_E_INTERNAL;
			}
		}
	}
	if (!has_key_field) {
		/* the stored key is the old address's: a new base URL is not sent it (review finding 3 of issue 17) */
		if ((err = base_url_changed(req, wid, url)) < 0) {
			svc_buf_dispose(&list);
			return err;
		}
		if (err == 1) {
			svc_buf_dispose(&list);
			return svc_resp_error(resp, SVC_E_VALIDATION, "apiKey",
					      "A new base URL needs the API key again: send apiKey (null for none).");
		}
	}
	if (key && key[0]) {
		err = svc_crypto_seal_secret(req->ctx->db, &req->ctx->cfg, wid, TABLE, "api_key", wid, key, strlen(key),
					     &sealed);
		if (err < 0) {
			svc_buf_dispose(&list);
			if (err == SVC_E_UNAVAILABLE)
				return svc_resp_error(resp, err, NULL, "API keys cannot be stored: ENCRYPTION_KEY is not configured.");
			return err;
		}
	}
	p[0] = svc_dbv_str(wid);
	p[1] = svc_dbv_str(svc_json_str(req->json, "protocol"));
	p[2] = svc_dbv_str(url);
	p[3] = svc_dbv_str(model);
	p[4] = list.len ? svc_dbv_str(list.data) : svc_dbv_null();
	w.p = p;
	w.mode = svc_json_str(req->json, "toolMode") ? svc_json_str(req->json, "toolMode") : "native";
	w.wid = wid;
	w.actor = req->user_id;
	if (has_key_field) {
		/* a string replaces the key, null or "" removes it; either is in the admin audit log with the
		 * change, in the same transaction (issue 25 item 10), never the key */
		w.details = json_object_new_object();
		svc_json_add_str(w.details, "workspaceId", wid);
		svc_json_add_str(w.details, "baseUrl", url);
		p[5] = sealed ? svc_dbv_str(sealed) : svc_dbv_null();
		p[6] = svc_dbv_str(req->user_id);
		w.stmt = STMT_AGENT_PROVIDER_PUT;
		w.n = 7;
		w.action = sealed ? "workspaces.ai_provider.key_set" : "workspaces.ai_provider.key_cleared";
	} else {
		p[5] = svc_dbv_str(req->user_id);
		w.stmt = STMT_AGENT_PROVIDER_PUT_KEEP_KEY;
		w.n = 6;
	}
	err = svc_db_tx(req->ctx->db, provider_tx, &w);
	json_object_put(w.details);
	free(sealed);
	svc_buf_dispose(&list);
	if (err < 0)
		return err;
	return answer(req, resp, wid);
}
