/* api_deploy.c: publishing a project (POST /deploy/:projectId): a deployment built and switched in, its log as server-sent events or the result as JSON. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "api/api_web.h"
#include "core/err.h"
#include "core/json.h"
#include "core/log.h"
#include "core/util.h"
#include "project/publish.h"

#define DEPLOY_PENDING_MAX 8192 /* bytes of output held back for the end of their line */

/* A deploy request while it runs: where its events go. */
struct deploy_stream {
	struct svc_resp *resp;
	int sse;      /* the client asked for text/event-stream */
	int started;  /* the stream has begun (the deployment exists) */
	int gone;     /* the client went away: the build goes on, unseen */
	char pending[DEPLOY_PENDING_MAX];
	size_t npending;
	int64_t pending_ms; /* when the oldest pending byte came */
};

static void send_event(struct deploy_stream *s, const char *type, struct json_object *payload)
{
	if (!s->gone && svc_sse_event(s->resp, type, payload) < 0)
		s->gone = 1;
	json_object_put(payload);
}

/* Sends the first `n` pending bytes as one "log" event {text}. */
static void flush_log(struct deploy_stream *s, size_t n)
{
	char clean[DEPLOY_PENDING_MAX + 1];
	struct json_object *ev;

	if (n == 0)
		return;
	svc_publish_clean_text(s->pending, n, clean);
	ev = json_object_new_object();
	svc_json_add_str(ev, "text", clean);
	send_event(s, "log", ev);
	memmove(s->pending, s->pending + n, s->npending - n);
	s->npending -= n;
	s->pending_ms = svc_mono_ms();
}

static void on_started(void *arg, struct json_object *deployment)
{
	struct deploy_stream *s = arg;
	struct json_object *ev;

	if (!s->sse)
		return;
	s->started = 1;
	if (svc_sse_begin(s->resp) < 0) {
		s->gone = 1;
		return;
	}
	ev = json_object_new_object();
	json_object_object_add(ev, "deployment", json_object_get(deployment));
	send_event(s, "deployment", ev);
}

/* The build's output: whole lines as they come, a partial line after a second, a keep-alive when quiet. */
static void on_log(void *arg, const char *text, size_t len)
{
	struct deploy_stream *s = arg;

	if (!s->sse || !s->started || s->gone)
		return;
	while (len > 0) {
		size_t k = len < sizeof s->pending - s->npending ? len : sizeof s->pending - s->npending;
		const char *nl;

		if (s->npending == 0)
			s->pending_ms = svc_mono_ms();
		memcpy(s->pending + s->npending, text, k);
		s->npending += k;
		text += k;
		len -= k;
		if (s->npending == sizeof s->pending) {
			/* a long line: cut it where no UTF-8 sequence is split */
			flush_log(s, svc_utf8_cut(s->pending, s->npending, s->npending - 4));
			continue;
		}
		for (nl = s->pending + s->npending; nl > s->pending && nl[-1] != '\n'; nl--)
			;
		flush_log(s, (size_t)(nl - s->pending));
	}
	if (s->npending && svc_mono_ms() - s->pending_ms >= 1000)
		flush_log(s, svc_utf8_cut(s->pending, s->npending, s->npending));
	if (!s->gone && svc_sse_keepalive(s->resp, 15000) < 0)
		s->gone = 1;
}

/* {url, slug, publishedAt, project, deployment} of a project just published. */
static int published_json(struct svc_req *req, const char *id, const char *deployment_id, struct json_object **out)
{
	const struct svc_config *cfg = &req->ctx->cfg;
	struct json_object *body, *dep = NULL;
	struct svc_rows *rows = NULL;
	char url[512];
	const char *slug;
	int err;

	if ((err = svc_project_load(svc_req_caller(req), id, SVC_ACT_READ, &rows)) < 0)
		return err;
	slug = svc_rows_get(rows, 0, PCOL_SLUG);
	if ((err = svc_api_site_url(cfg, slug, url, sizeof url)) < 0 ||
	    (err = svc_deployment_get(req->ctx->db, id, deployment_id, &dep)) < 0)
		goto done;
	body = json_object_new_object();
	json_object_object_add(body, "url", json_object_new_string(url));
	svc_json_add_str(body, "slug", slug);
	svc_json_add_time(body, "publishedAt", svc_rows_get(rows, 0, PCOL_PUBLISHED));
	json_object_object_add(body, "project", svc_project_json(rows, 0));
	json_object_object_add(body, "deployment", dep);
	*out = body;
done:
	svc_rows_free(rows);
	return err;
}

/* {error: "build_failed", message, deployment} */
static struct json_object *failed_json(struct svc_req *req, const char *id, const char *deployment_id, const char *why)
{
	struct json_object *body = json_object_new_object(), *dep = NULL;

	svc_json_add_str(body, "error", "build_failed");
	svc_json_add_str(body, "message", why);
	svc_deployment_get(req->ctx->db, id, deployment_id, &dep);
	json_object_object_add(body, "deployment", dep);
	return body;
}

/*
 * POST /deploy/:projectId: builds and publishes (lib/project/publish.h). JSON:
 * 200 {url, slug, publishedAt, project, deployment}; 422 build_failed
 * {message, deployment}; 413 payload_too_large when the built site is over the
 * workspace's SVC_QUOTA_SITE_BYTES (the deployment failed, the live site
 * stays). With Accept: text/event-stream, once the deployment
 * exists: events "deployment", "log" {text}..., then "done" {url, slug,
 * publishedAt, project, deployment} or "error" {error, message, deployment}.
 * Before any stream: 403; 404; 409 (a deployment is building).
 */
enum svc_err svc_api_projects_deploy(struct svc_req *req, struct svc_resp *resp)
{
	const char *id = svc_req_param(req, "projectId"), *accept = svc_req_header(req, "Accept");
	struct deploy_stream *s = calloc(1, sizeof *s);
	struct svc_publish_events ev = { on_started, on_log, s };
	struct svc_publish_target t;
	struct svc_rows *rows = NULL;
	struct json_object *body = NULL;
	char did[37] = "", why[512];
	int err;

	if (!s)
		return SVC_E_INTERNAL;
	s->resp = resp;
	s->sse = accept && strstr(accept, "text/event-stream") != NULL;
	if ((err = svc_project_load(svc_req_caller(req), id, SVC_ACT_DEPLOY, &rows)) < 0)
		goto done;
	svc_publish_target_of(rows, req->user_id, &t);
	err = svc_publish_run(req->ctx->db, &req->ctx->cfg, &t, &ev, did, why, sizeof why);
	if (s->started) {
		flush_log(s, s->npending);
		if (err == 0 && published_json(req, id, did, &body) == 0) {
			send_event(s, "done", body);
		} else {
			body = failed_json(req, id, did, why[0] ? why : svc_err_message(err));
			if (err != SVC_E_VALIDATION)
				json_object_object_add(body, "error", json_object_new_string(svc_err_code(err)));
			send_event(s, "error", body);
		}
		err = 0;
		goto done;
	}
	if (err == SVC_E_CONFLICT) {
		err = svc_resp_error(resp, err, NULL, "a deployment of this project is building; try again when it is done");
	} else if (err == SVC_E_TOO_LARGE) { /* over the site quota; the deployment is recorded as failed */
		err = svc_resp_error(resp, err, NULL, "%s", why);
	} else if (err == SVC_E_VALIDATION) {
		svc_resp_json(resp, 422, failed_json(req, id, did, why));
		err = 0;
	} else if (err == 0 && (err = published_json(req, id, did, &body)) == 0) {
		svc_resp_json(resp, 200, body);
	}
done:
	svc_rows_free(rows);
	free(s);
	return err;
}
