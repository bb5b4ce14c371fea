/* provider.c: which model provider a workspace's turns use (its own, else the instance's) and which models a turn may name. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/turn.h"
#include "auth/crypto.h"
#include "core/err.h"
#include "core/log.h"

static char *dup(const char *s)
{
	return strdup(s ? s : "");
}

void svc_agent_provider_choice_dispose(struct svc_agent_provider_choice *p)
{
	free(p->base_url);
	free(p->model);
	free(p->allowed_models);
	if (p->api_key)
		svc_crypto_free_secret(p->api_key, p->api_key_len);
	memset(p, 0, sizeof *p);
}

/* The workspace's own provider from its row of STMT_AGENT_PROVIDER_GET, its key opened. */
static int from_row(struct svc_db *db, const struct svc_config *cfg, const char *wid, const struct svc_rows *rows,
		    struct svc_agent_provider_choice *r)
{
	const char *key = svc_rows_get(rows, 0, PVCOL_API_KEY);
	int error;

	snprintf(r->protocol, sizeof r->protocol, "%s", svc_rows_get(rows, 0, PVCOL_PROTOCOL));
	r->base_url = dup(svc_rows_get(rows, 0, PVCOL_BASE_URL));
	r->model = dup(svc_rows_get(rows, 0, PVCOL_MODEL));
	r->allowed_models = dup(svc_rows_get(rows, 0, PVCOL_ALLOWED_MODELS));
	r->from_workspace = 1;
	r->text_tools = svc_rows_get(rows, 0, PVCOL_TOOL_MODE) && strcmp(svc_rows_get(rows, 0, PVCOL_TOOL_MODE), "text") == 0;
	if (!key || !key[0]) {
		r->api_key = dup("");
		return 0;
	}
	error = svc_crypto_open_secret(db, cfg, wid, SVC_AGENT_PROVIDER_TABLE, "api_key", wid, key, &r->api_key,
				       &r->api_key_len);
	if (error < 0)
		svc_log_error("agent: the stored API key of workspace %s does not open", wid);
	return error;
}

/* The instance's default provider (SVC_AI_*). */
static void from_instance(const struct svc_config *cfg, struct svc_agent_provider_choice *r)
{
	snprintf(r->protocol, sizeof r->protocol, "%s", cfg->ai_protocol[0] ? cfg->ai_protocol : "openai");
	r->base_url = dup(cfg->ai_base_url);
	r->model = dup(cfg->ai_model);
	r->allowed_models = dup(cfg->ai_models);
	r->api_key = dup(cfg->ai_api_key);
	r->api_key_len = strlen(r->api_key ? r->api_key : "");
	r->text_tools = cfg->ai_tool_mode && strcmp(cfg->ai_tool_mode, "text") == 0;
}

int svc_agent_provider_choose(struct svc_db *db, const struct svc_config *cfg, const char *wid,
			      struct svc_agent_provider_choice *out)
{
	struct svc_rows *rows = NULL;
	struct svc_dbv p = svc_dbv_str(wid);
	struct svc_agent_provider_choice r;
	int error;

	memset(&r, 0, sizeof r);
	if ((error = svc_db_run(db, STMT_AGENT_PROVIDER_GET, &p, 1, &rows, NULL)) < 0)
		return error;
	if (rows && rows->nrows == 1) {
		if ((error = from_row(db, cfg, wid, rows, &r)) < 0)
			goto done;
	} else {
		from_instance(cfg, &r);
	}
	if (!r.base_url || !r.model || !r.allowed_models || !r.api_key) {
		error = SVC_E_INTERNAL;
		goto done;
	}
	*out = r;
	memset(&r, 0, sizeof r);
done:
	svc_agent_provider_choice_dispose(&r);
	svc_rows_free(rows);
	return error;
}

int svc_agent_provider_check_model(const struct svc_config *cfg, const struct svc_agent_provider_choice *prov,
				   const char *model, char *msg, size_t msgmax)
{
	if (!model || !prov->base_url[0] || strcmp(model, prov->model) == 0)
		return 0;
	if (prov->allowed_models[0]) {
		if (svc_config_list_has(prov->allowed_models, model))
			return 0;
		snprintf(msg, msgmax, "model %.200s is not one of the provider's allowed models", model);
		return SVC_E_VALIDATION;
	}
	if (prov->from_workspace || svc_config_model_priced(cfg, model))
		return 0;
	snprintf(msg, msgmax, "model %.200s has no price on this instance (an admin adds it to SVC_AI_PRICES)", model);
	return SVC_E_VALIDATION;
}
