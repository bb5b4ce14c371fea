/* api_thumbnails.c: a project's thumbnail image, served with its ETag, and its regeneration; the screenshots of the agent's preview checks. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/check.h"
#include "api/api.h"
#include "core/err.h"
#include "core/fsx.h"
#include "core/json.h"
#include "project/thumbnail.h"

#define THUMB_READ_MAX (5u * 1024 * 1024)

/* Reads the stored thumbnail of `id` and its source name (source: 16 bytes). */
static int thumb_read(const struct svc_config *cfg, const char *id, char **data, size_t *len, char *source)
{
	char dir[2048], rel[64], *side = NULL;
	size_t slen = 0;
	int err;

	snprintf(dir, sizeof dir, "%s/thumbnails", cfg->data_dir);
	snprintf(rel, sizeof rel, "%s.png", id);
	if ((err = svc_fsx_read(dir, rel, THUMB_READ_MAX, data, len)) < 0)
		return err;
	snprintf(rel, sizeof rel, "%s.source", id);
	snprintf(source, 16, "fallback");
	if (svc_fsx_read(dir, rel, 15, &side, &slen) == 0 && strcmp(side, "chromium") == 0)
		snprintf(source, 16, "chromium");
	free(side);
	return 0;
}

/* A strong ETag of the image bytes: the first 128 bits of their SHA-256, quoted (RFC 9110 §8.8.3). */
static int thumb_etag(const char *data, size_t len, char *out)
{
	char hex[SVC_SHA256_HEX_LEN + 1];

	if (svc_sha256_hex(data, len, hex) < 0)
		return SVC_E_INTERNAL;
	out[0] = '"';
	memcpy(out + 1, hex, 32);
	out[33] = '"';
	out[34] = '\0';
	return 0;
}

/*
 * GET /thumbnails/:projectId.png: 200 image/png with ETag, Cache-Control and
 * X-Thumbnail-Source (chromium or fallback); 304 when If-None-Match matches (svc_http_not_modified);
 * 401; 403; 404. A project without a thumbnail gets the generated one at once
 * and a Chromium render queued for svc-worker.
 */
enum svc_err svc_api_thumbnails_get(struct svc_req *req, struct svc_resp *resp)
{
	const struct svc_config *cfg = &req->ctx->cfg;
	const char *file = svc_req_param(req, "file");
	struct svc_rows *rows = NULL;
	char id[37], source[16], etag[35], pdir[2048], why[256], *data = NULL;
	size_t len = 0;
	enum svc_thumb_source src;
	int err, public_;

	if (!file || strlen(file) != 40 || strcmp(file + 36, ".png") != 0)
		return SVC_E_NOT_FOUND;
	memcpy(id, file, 36);
	id[36] = '\0';
	if ((err = svc_project_load(svc_req_caller(req), id, SVC_ACT_READ, &rows)) < 0)
		return err;
	public_ = strcmp(svc_rows_get(rows, 0, PCOL_VISIBILITY), "public") == 0;
	err = thumb_read(cfg, id, &data, &len, source);
	if (err == SVC_E_NOT_FOUND) {
		if ((err = svc_project_dir(cfg, id, pdir, sizeof pdir)) < 0 ||
		    (err = svc_thumbnail_render(cfg, id, svc_rows_get(rows, 0, PCOL_NAME), pdir, 0, &src, why,
						sizeof why)) < 0)
			goto done;
		svc_thumbnail_set_url(req->ctx->db, cfg, id);
		svc_thumbnail_request(req->ctx->db, id);
		err = thumb_read(cfg, id, &data, &len, source);
	}
	if (err < 0 || (err = thumb_etag(data, len, etag)) < 0)
		goto done;
	if (svc_http_not_modified(svc_req_header(req, "If-None-Match"), NULL, etag, 0))
		err = svc_resp_raw(resp, 304, "image/png", "", 0);
	else
		err = svc_resp_raw(resp, 200, "image/png", data, len);
	if (err == 0 && (err = svc_resp_header(resp, "ETag", etag)) == 0 &&
	    (err = svc_resp_header(resp, "Cache-Control", public_ ? "public, max-age=60" : "private, max-age=60")) == 0)
		err = svc_resp_header(resp, "X-Thumbnail-Source", source);
done:
	free(data);
	svc_rows_free(rows);
	return err;
}

/*
 * POST /thumbnails/:projectId/regenerate[?renderer=auto|fallback]: with
 * renderer=fallback the generated image is stored now (no Chromium, a few
 * milliseconds): 200 {projectId, source, reason, etag, url, width, height}.
 * With auto (the default) a Chromium render is queued for svc-worker (one
 * waiting per project) and the answer comes at once, never after a render:
 * 202 {projectId, status: "queued", source, etag, url, width, height}
 * describing the thumbnail served until the render is stored (source and
 * etag null when there is none yet). 400 renderer; 401; 403; 404.
 */
enum svc_err svc_api_thumbnails_regenerate(struct svc_req *req, struct svc_resp *resp)
{
	const struct svc_config *cfg = &req->ctx->cfg;
	const char *id = svc_req_param(req, "projectId");
	struct svc_rows *rows = NULL, *after = NULL;
	struct json_object *body;
	char renderer[16] = "auto", pdir[2048], why[256], source[16], etag[35], *data = NULL;
	size_t len = 0;
	enum svc_thumb_source src = SVC_THUMB_FALLBACK;
	int err, q, queued;

	if ((q = svc_req_query(req, "renderer", renderer, sizeof renderer)) < 0 ||
	    (q && strcmp(renderer, "auto") != 0 && strcmp(renderer, "fallback") != 0))
		return svc_resp_error(resp, SVC_E_VALIDATION, "renderer", "renderer must be auto or fallback");
	if ((err = svc_project_load(svc_req_caller(req), id, SVC_ACT_WRITE, &rows)) < 0)
		return err;
	queued = strcmp(renderer, "auto") == 0;
	if (queued)
		err = svc_thumbnail_request(req->ctx->db, id); /* svc-worker renders it (SVC_JOB_THUMBNAIL) */
	else if ((err = svc_project_dir(cfg, id, pdir, sizeof pdir)) == 0 &&
		 (err = svc_thumbnail_render(cfg, id, svc_rows_get(rows, 0, PCOL_NAME), pdir, 0, &src, why,
					     sizeof why)) == 0)
		err = svc_thumbnail_set_url(req->ctx->db, cfg, id);
	if (err < 0 || (err = svc_project_load(svc_req_caller(req), id, SVC_ACT_READ, &after)) < 0)
		goto done;
	/* the thumbnail served now: the new one, or (queued) the one served until the render is stored */
	err = thumb_read(cfg, id, &data, &len, source);
	if (err == SVC_E_NOT_FOUND && queued)
		err = 0;
	else if (err < 0 || (err = thumb_etag(data, len, etag)) < 0)
		goto done;
	body = json_object_new_object();
	json_object_object_add(body, "projectId", json_object_new_string(id));
	if (queued) {
		json_object_object_add(body, "status", json_object_new_string("queued"));
		svc_json_add_str(body, "source", data ? source : NULL);
		svc_json_add_str(body, "etag", data ? etag : NULL);
	} else {
		json_object_object_add(body, "source", json_object_new_string(svc_thumbnail_source_name(src)));
		svc_json_add_str(body, "reason", why);
		json_object_object_add(body, "etag", json_object_new_string(etag));
	}
	svc_json_add_str(body, "url", svc_rows_get(after, 0, PCOL_THUMBNAIL));
	json_object_object_add(body, "width", json_object_new_int(SVC_THUMB_W));
	json_object_object_add(body, "height", json_object_new_int(SVC_THUMB_H));
	svc_resp_json(resp, queued ? 202 : 200, body);
done:
	free(data);
	svc_rows_free(after);
	svc_rows_free(rows);
	return err;
}

/*
 * GET /projects/:id/checks/:file (issue 29, the agent's preview check): the screenshot
 * "<checkId>.png" of a check.result event, to whoever may read the project, as a
 * thumbnail is. 200 image/png (Cache-Control private, a day: a check's image never
 * changes); 401; 403; 404 (no such project or screenshot).
 */
enum svc_err svc_api_check_screenshot(struct svc_req *req, struct svc_resp *resp)
{
	const char *id = svc_req_param(req, "id");
	struct svc_rows *rows = NULL;
	char *data = NULL;
	size_t len = 0;
	int err;

	if ((err = svc_project_load(svc_req_caller(req), id, SVC_ACT_READ, &rows)) < 0)
		return err;
	if ((err = svc_agent_check_read(&req->ctx->cfg, id, svc_req_param(req, "file"), &data, &len)) == 0 &&
	    (err = svc_resp_raw(resp, 200, "image/png", data, len)) == 0)
		err = svc_resp_header(resp, "Cache-Control", "private, max-age=86400");
	free(data);
	svc_rows_free(rows);
	return err;
}
