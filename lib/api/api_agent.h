/* api_agent.h: the agent's HTTP handlers beyond lib/api/api.h (stop, plans, workspace providers, credits); the turn itself is lib/agent/turn.h. */
#ifndef SVC_API_AGENT_H
#define SVC_API_AGENT_H

#include "api/api.h"

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
 * Spending caps and instructions (lib/api/api_budget.c, docs/api.md "Spending caps and instructions"):
 *
 * svc_api_budget_get        GET /workspaces/:wid/budget: 200 {workspaceId, caps {workspaceDay, workspaceMonth,
 *                           memberDay, projectDay, tokenDay, turn: {limitUsd, warnPercent, block, updatedAt} or null},
 *                           instanceTurnMaxUsd, spent {workspaceDay, workspaceMonth, memberDay (the caller's)},
 *                           warnings [cap], canEdit, today {members, projects, tokens: [{id, spentUsd}]} (editors
 *                           only)}; 403 (not a member); 404.
 * svc_api_budget_put        PUT /workspaces/:wid/budget {caps: {<cap>: {limitUsd, warnPercent?, block?} | null}}:
 *                           200 as GET; 400 (field caps or caps.<cap>); 403 (not admin or owner); 404.
 * svc_api_budget_admin      GET /admin/budget: 200 {items: [{workspaceId, name, kind, todayUsd, monthUsd, totalUsd,
 *                           limitUsd}]}; 403 (not a platform admin).
 * svc_api_instructions_get  GET /workspaces/:wid/instructions: 200 {workspaceId, text, maxBytes, updatedAt,
 *                           canEdit}; 403 (not a member); 404.
 * svc_api_instructions_put  PUT /workspaces/:wid/instructions {text}: 200 as GET; 400 (over 16 KiB); 403 (not
 *                           admin or owner); 404.
 */
enum svc_err svc_api_budget_get(struct svc_req *req, struct svc_resp *resp);
enum svc_err svc_api_budget_put(struct svc_req *req, struct svc_resp *resp);
enum svc_err svc_api_budget_admin(struct svc_req *req, struct svc_resp *resp);
enum svc_err svc_api_instructions_get(struct svc_req *req, struct svc_resp *resp);
enum svc_err svc_api_instructions_put(struct svc_req *req, struct svc_resp *resp);
extern const struct svc_body svc_api_budget_put_body;
extern const struct svc_body svc_api_instructions_put_body;

#endif
