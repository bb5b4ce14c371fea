/*
 * fuzz_http.c: libFuzzer target for the router (lib/http/http.c): one FastCGI
 * request from the input runs through handle() on in-memory streams, against
 * routes that carry every request-body field table of the API, so the path
 * matcher, percent-decoding, the query, cookies (svc_cookie_get/_count), the
 * client address behind X-Forwarded-For, the CSRF Origin/Referer check, the
 * bearer and cookie tokens (JWT verification), the internal signature, JSON
 * parsing, svc_json_validate() and a conditional GET's If-None-Match and If-Modified-Since
 * (svc_http_not_modified, svc_http_date_parse) all see untrusted bytes.
 *
 * Input: "METHOD\nURI\nNAME=value\n...\n\nBODY" (FastCGI parameters, at most
 * 12, until an empty line; the rest is the body).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The router is static: include the module, as tests/unit/test_http.c does. */
#include "../../lib/http/http.c"

#include "api/api.h"
#include "api/api_agent.h"
#include "api/api_auth.h"
#include "api/api_integrations.h"
#include "api/api_gitio.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/*
 * Every request-body field table the API has (extern const struct svc_body in
 * lib/api/api*.h); tests/fuzz/run.sh fails when one is missing here.
 */
static const struct svc_body *const bodies[] = {
	&svc_api_chat_stop_body, &svc_api_plan_send_body, &svc_api_ai_provider_put_body,
	&svc_api_auth_signup_body, &svc_api_auth_login_body, &svc_api_auth_tokens_create_body,
	&svc_api_auth_forgot_body, &svc_api_auth_reset_body, &svc_api_auth_verify_body, &svc_api_auth_me_update_body,
	&svc_api_auth_password_body, &svc_api_projects_file_put_body, &svc_api_projects_file_move_body,
	&svc_api_projects_create_body, &svc_api_projects_update_body, &svc_api_projects_duplicate_body,
	&svc_api_chats_create_body, &svc_api_workspaces_create_body, &svc_api_workspaces_update_body,
	&svc_api_workspaces_transfer_body, &svc_api_members_add_body, &svc_api_members_update_body,
	&svc_api_folders_create_body, &svc_api_folders_update_body, &svc_api_direct_save_body,
	&svc_api_chat_send_body, &svc_api_build_settings_put_body, &svc_api_domains_add_body,
	&svc_api_admin_workspace_update_body,
	&svc_api_integrations_ws_set_body, &svc_api_integrations_bulk_body, &svc_api_integrations_app_upsert_body,
	&svc_api_integrations_cred_upsert_body, &svc_api_integrations_cred_workspaces_body, &svc_api_integrations_hosts_body,
	&svc_api_git_remote_put_body, &svc_api_git_push_body,
	&svc_api_budget_put_body, &svc_api_instructions_put_body,
	&svc_api_secrets_put_body, /* appfetch */
	&svc_api_backend_user_update_body, /* builders */
};
#define NBODIES (sizeof bodies / sizeof bodies[0])

/* A handler that reads what handlers read: parameters, the query, a cookie, the validated body. */
static enum svc_err h_echo(struct svc_req *req, struct svc_resp *resp)
{
	struct json_object *o = json_object_new_object();
	char q[256], c[SVC_AUTH_TOKEN_MAX + 1];
	size_t i;

	if (!o)
		return SVC_E_INTERNAL;
	for (i = 0; i < req->nparams; i++)
		json_object_object_add(o, req->param_names[i], json_object_new_string(req->param_values[i]));
	if (svc_req_query(req, "cursor", q, sizeof q) == 1)
		json_object_object_add(o, "cursor", json_object_new_string(q));
	if (svc_req_cookie(req, "svc_refresh_token", c, sizeof c) == 1)
		json_object_object_add(o, "cookie", json_object_new_int((int)strlen(c)));
	if (req->json)
		json_object_object_add(o, "body", json_object_get(req->json));
	json_object_object_add(o, "user", json_object_new_string(req->user_id));
	/* a conditional GET's headers, as svc-app's GET /_svc/files/:id reads them (lib/app/app_files.c) */
	json_object_object_add(o, "notModified", json_object_new_int(svc_http_not_modified(
		svc_req_header(req, "If-None-Match"), svc_req_header(req, "If-Modified-Since"), "\"e3b0c442\"", 784111777)));
	return svc_resp_json(resp, 200, o);
}

static struct svc_route routes[NBODIES + 5] = {
	{ SVC_GET | SVC_DELETE, "/api/projects/:id/versions/:sha/checkout", h_echo, SVC_R_AUTH, 0, NULL },
	{ SVC_GET, "/api/projects/:id/files/*", h_echo, SVC_R_OPTAUTH, 0, NULL },
	{ SVC_POST, "/api/internal/rooms/:projectId/*", h_echo, SVC_R_INTERNAL, 4096, NULL },
	{ SVC_POST | SVC_PATCH, "/api/any/:name", h_echo, SVC_R_JSON, 64 * 1024, NULL },
	{ SVC_GET | SVC_OPTIONS, "/api/site/*", h_echo, SVC_R_SITE, 0, NULL },
};

static struct svc_ctx ctx;
static char patterns[NBODIES][32];

static void setup(void)
{
	size_t i;

	for (i = 0; i < NBODIES; i++) {
		snprintf(patterns[i], sizeof patterns[i], "/api/b/%zu/:id/*", i);
		routes[5 + i] = (struct svc_route){ SVC_POST | SVC_PUT | SVC_PATCH, patterns[i], h_echo,
						    SVC_R_JSON | SVC_R_OPTAUTH, 0, bodies[i] };
	}
	ctx.name = "svc-fuzz";
	ctx.cfg.jwt_secret = "0123456789abcdef0123456789abcdef";
	ctx.cfg.jwt_secret_len = 32;
	ctx.cfg.jwt_issuer = "svc";
	ctx.cfg.internal_secret = "fedcba9876543210fedcba9876543210";
	ctx.cfg.app_url = "http://127.0.0.1:8080";
	ctx.cfg.base_url = "http://127.0.0.1:8080/api";
	ctx.cfg.cors_origins = "http://127.0.0.1:8080,https://app.example.com";
	ctx.auth.trusted_proxies = "127.0.0.1,::1,10.0.0.0/8";
}

/* In-memory FastCGI streams (as tests/unit/test_http.c): a reader ends with its bytes, a writer fails when full. */
static void mem_fill(FCGX_Stream *s)
{
	s->isClosed = 1;
}

static void mem_empty(FCGX_Stream *s, int do_close)
{
	(void)do_close;
	s->isClosed = 1;
	s->FCGI_errno = -1;
}

static void stream_init(FCGX_Stream *s, unsigned char *buf, size_t len, int reader)
{
	memset(s, 0, sizeof *s);
	s->isReader = reader;
	s->fillBuffProc = mem_fill;
	s->emptyBuffProc = mem_empty;
	s->rdNext = s->stopUnget = buf;
	s->stop = buf + len;
	s->wrNext = reader ? s->stop : buf;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static unsigned char out[32768];
	static int ready;
	char *text, *p, *line, *env[16], cl[48];
	size_t n = 0, body_len;
	FCGX_Stream in, wr;
	FCGX_Request r;
	int have_cl = 0;

	if (!ready) {
		setup();
		ready = 1;
	}
	if (size > 1 << 20)
		return 0;
	text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	/* METHOD, URI, then parameters until an empty line; NULs end a line early, as FastCGI's C strings do */
	p = text;
	while (n < 14 && p < text + size) {
		char *nl = memchr(p, '\n', (size_t)(text + size - p));
		line = p;
		if (!nl) {
			p = text + size;
		} else {
			*nl = '\0';
			p = nl + 1;
		}
		if (n >= 2 && *line == '\0')
			break;
		if (n == 0) {
			static char m[64];
			snprintf(m, sizeof m, "REQUEST_METHOD=%s", line);
			env[n++] = m;
		} else if (n == 1) {
			static char u[4096];
			snprintf(u, sizeof u, "REQUEST_URI=%s", line);
			env[n++] = u;
		} else {
			if (strncmp(line, "CONTENT_LENGTH=", 15) == 0)
				have_cl = 1;
			env[n++] = line;
		}
	}
	body_len = (size_t)(text + size - p);
	if (!have_cl && n < 15) {
		snprintf(cl, sizeof cl, "CONTENT_LENGTH=%zu", body_len);
		env[n++] = cl;
	}
	env[n] = NULL;
	stream_init(&in, (unsigned char *)p, body_len, 1);
	stream_init(&wr, out, sizeof out - 1, 0);
	memset(&r, 0, sizeof r);
	r.envp = env;
	r.in = &in;
	r.out = &wr;
	handle(&ctx, &r, routes, sizeof routes / sizeof routes[0]);
	free(text);
	return 0;
}
