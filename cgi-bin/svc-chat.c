/* svc-chat.c: the FastCGI responder for /api/chat, /api/plan and /api/deploy (server-sent event streams, long requests; its own process pool). */
#include "api/api.h"
#include "api/api_agent.h"

/* Message bodies may carry image attachments (5 MiB each, base64); Apache's LimitRequestBody is 8 MiB. */
#define MESSAGE_BODY_MAX (8 * 1024 * 1024)

static const struct svc_route routes[] = {
	{ SVC_POST, "/api/chat/:projectId/messages", svc_api_chat_send, SVC_R_AUTH | SVC_R_JSON, MESSAGE_BODY_MAX, &svc_api_chat_send_body },
	{ SVC_GET, "/api/chat/:projectId/messages", svc_api_chat_history, SVC_R_AUTH, 0, NULL },
	{ SVC_POST, "/api/chat/:projectId/stop", svc_api_chat_stop, SVC_R_AUTH | SVC_R_JSON, 0, &svc_api_chat_stop_body },
	{ SVC_POST, "/api/plan/:projectId", svc_api_plan_send, SVC_R_AUTH | SVC_R_JSON, MESSAGE_BODY_MAX, &svc_api_plan_send_body },
	{ SVC_GET, "/api/plan/:projectId/:chatId", svc_api_plan_get, SVC_R_AUTH, 0, NULL },
	{ SVC_POST, "/api/plan/:projectId/:chatId/run", svc_api_plan_run, SVC_R_AUTH, 0, NULL },
	/* a publish holds its request for the whole build (lib/project/publish.h) */
	{ SVC_POST, "/api/deploy/:projectId", svc_api_projects_deploy, SVC_R_AUTH, 0, NULL },
};

int main(int argc, char **argv)
{
	return svc_fcgi_main(argc, argv, "svc-chat", routes, sizeof routes / sizeof routes[0]);
}
