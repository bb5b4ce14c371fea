/* api_agent.h: the agent's HTTP handlers beyond lib/api/api.h (stop, plans, workspace providers) and its background job. */
#ifndef SVC_API_AGENT_H
#define SVC_API_AGENT_H

#include <stddef.h>

#include "api/api.h"
#include "db/jobs.h"

/*
 * Handlers; each answers as docs/api.md says, besides the router's statuses.
 *
 * svc_api_chat_stop       POST /chat/:projectId/stop {chatId}: 200 {chatId, stopRequested}; 400; 403; 404.
 *                         Sets stop_requested on the chat's running generation (any responder process);
 *                         the stream sees it within 500 ms and ends with session.task_complete {stopped: true}.
 * svc_api_plan_send       POST /plan/:projectId {chatId, text, model?, attachments?}: the chat becomes a plan
 *                         chat; the turn runs in plan mode and its final message is parsed into the plan
 *                         (event plan.created {plan}); statuses as svc_api_chat_send.
 * svc_api_plan_get        GET /plan/:projectId/:chatId: 200 plan {steps, rawText, chatId, createdAt}; 403; 404
 *                         (also when the chat has no plan).
 * svc_api_plan_run        POST /plan/:projectId/:chatId/run: the chat's mode becomes build and the plan is
 *                         sent as the next user message; the answer streams as for messages; 404 without a
 *                         plan, 409 while a generation runs.
 * svc_api_ai_provider_get GET /workspaces/:wid/ai-provider: 200 {source, protocol, baseUrl, model,
 *                         allowedModels, hasApiKey, updatedAt}; 403 (not admin or owner); 404.
 * svc_api_ai_provider_put PUT /workspaces/:wid/ai-provider {protocol, baseUrl, model, apiKey?, allowedModels?}:
 *                         200 as GET; 400; 403; 404; 503 when ENCRYPTION_KEY is missing and a key is sent.
 * svc_api_credits_get     GET /workspaces/:wid/credits: 200 {workspaceId, limitUsd, spentUsd, remainingUsd,
 *                         exhausted, defaultLimit, updatedAt} (US dollars); 403 (not a member); 404.
 * svc_api_credits_put     PUT /workspaces/:wid/credits {limitUsd: number 0..99999999 or null = the default
 *                         SVC_DEFAULT_CREDIT_USD}: 200 as GET; 400; 403 unless a platform admin
 *                         (SVC_ACT_WS_CREDIT_LIMIT: workspace owners cannot raise their own limit); 404.
 */
enum svc_err svc_api_chat_stop(struct svc_req *req, struct svc_resp *resp);
enum svc_err svc_api_plan_send(struct svc_req *req, struct svc_resp *resp);
enum svc_err svc_api_plan_get(struct svc_req *req, struct svc_resp *resp);
enum svc_err svc_api_plan_run(struct svc_req *req, struct svc_resp *resp);
extern const struct svc_body svc_api_chat_stop_body;
extern const struct svc_body svc_api_plan_send_body;
enum svc_err svc_api_ai_provider_get(struct svc_req *req, struct svc_resp *resp);
enum svc_err svc_api_ai_provider_put(struct svc_req *req, struct svc_resp *resp);
extern const struct svc_body svc_api_ai_provider_put_body;
enum svc_err svc_api_credits_get(struct svc_req *req, struct svc_resp *resp);
enum svc_err svc_api_credits_put(struct svc_req *req, struct svc_resp *resp);

/*
 * Spend accounting of a workspace's AI credit (lib/api/api_credits.c; US
 * dollars, stored with 6 decimals). svc_credit_exhausted() returns 1 when
 * workspace `wid` has spent its limit or more, else 0, and writes the limit
 * into *out_limit (SVC_DEFAULT_CREDIT_USD when the workspace has none, or
 * when the credit cannot be read, which counts as nothing spent).
 * svc_credit_add_spend() adds `cost` to what `wid` spent (nothing for 0 or
 * less; a failure is logged, never returned).
 */
int svc_credit_exhausted(struct svc_db *db, const struct svc_config *cfg, const char *wid, double *out_limit);
void svc_credit_add_spend(struct svc_db *db, const char *wid, double cost);

/*
 * The svc_job_fn of SVC_JOB_FIRST_PROMPT (lib/project/project.h, queued by
 * svc_project_queue_first_prompt()); `ctx` is the worker's struct
 * svc_ctx. Runs the turn as a chat message would (same timeline, lock,
 * credits, provider, commit) without a client. Returns 0 once the turn ran,
 * whatever its outcome (a model error is in the timeline), SVC_E_CONFLICT
 * while another generation runs in the chat (the job is retried), 0 for a
 * project or chat deleted since, or DB errors.
 */
int svc_chat_job_first_prompt(void *ctx, const struct svc_job *job, char *errmsg, size_t errmax);

/*
 * Which provider a workspace's turns use: the workspace's own
 * (workspace_ai_providers), else the instance default (SVC_AI_*). Strings
 * are owned by the struct; api_key is cleansed by svc_ai_provider_dispose().
 */
struct svc_ai_provider {
	char protocol[16];       /* "openai" or "anthropic" */
	char *base_url;          /* "" when no provider is configured anywhere */
	char *model;
	char *allowed_models;    /* comma-separated; "" = any model */
	char *api_key;           /* plaintext, "" when none */
	size_t api_key_len;
	int from_workspace;      /* 1 = the workspace's own */
};

/*
 * Fills `out` for workspace `wid`. Errors: SVC_E_UNAVAILABLE (a stored key
 * cannot be opened because ENCRYPTION_KEY is missing), SVC_E_VALIDATION (a
 * stored key does not open), DB errors, SVC_E_INTERNAL. `out` must be
 * disposed on success only.
 */
int svc_ai_provider_resolve(struct svc_db *db, const struct svc_config *cfg, const char *wid,
			    struct svc_ai_provider *out);

/* Frees the strings and cleanses the key. */
void svc_ai_provider_dispose(struct svc_ai_provider *p);

#endif
