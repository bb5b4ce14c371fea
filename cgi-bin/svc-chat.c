/* svc-chat.c: the FastCGI responder for /api/chat (server-sent event streams; its own process pool). */
#include "api.h"

static const struct svc_route routes[] = {
	{ SVC_POST, "/api/chat/:projectId/messages", svc_api_chat_send, SVC_R_AUTH | SVC_R_JSON, 0 },
	{ SVC_GET, "/api/chat/:projectId/messages", svc_api_chat_history, SVC_R_AUTH, 0 },
};

int main(int argc, char **argv)
{
	return svc_fcgi_main(argc, argv, "svc-chat", routes, sizeof routes / sizeof routes[0]);
}
