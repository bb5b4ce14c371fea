/* api_deploy.c: publishing a project: its files copied into the published site, swapped in with one rename. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "api/api_web.h"
#include "core/err.h"
#include "core/fsx.h"
#include "core/json.h"
#include "core/log.h"
#include "project/publish.h"

/* POST /deploy/:projectId: 200 {url, slug, publishedAt}; 403; 404. Swaps the new site in with one rename. */
enum svc_err svc_api_projects_deploy(struct svc_req *req, struct svc_resp *resp)
{
	const struct svc_config *cfg = &req->ctx->cfg;
	const char *id = svc_req_param(req, "projectId");
	struct svc_rows *rows = NULL, *after = NULL;
	char pdir[2048], pub[2048], final[2048], tmp[2100], git[2200], url[512], rnd[17];
	struct json_object *body;
	const char *slug;
	struct svc_dbv p;
	int err;

	if ((err = svc_project_load(req, id, SVC_ACT_WRITE, &rows)) < 0)
		return err;
	slug = svc_rows_get(rows, 0, PCOL_SLUG);
	snprintf(pub, sizeof pub, "%s/published", cfg->data_dir);
	if ((err = svc_project_dir(cfg, id, pdir, sizeof pdir)) < 0 || (err = svc_project_mkdirs(pub)) < 0 ||
	    (err = svc_project_published_dir(cfg, slug, final, sizeof final)) < 0 || (err = svc_random_hex(rnd, 8)) < 0)
		goto done;
	snprintf(tmp, sizeof tmp, "%s/.tmp-%s-%s", pub, slug, rnd);
	if ((err = svc_fsx_copy_tree(pdir, tmp)) < 0)
		goto done;
	snprintf(git, sizeof git, "%s/.git", tmp);
	svc_fsx_remove_tree(git);
	if ((err = svc_publish_mark(tmp, id)) < 0) {
		svc_fsx_remove_tree(tmp);
		goto done;
	}
	if ((err = svc_publish_swap(tmp, final)) < 0)
		goto done;
	p = svc_dbv_str(id);
	if ((err = svc_db_run(req->ctx->db, STMT_PROJECT_SET_PUBLISHED, &p, 1, NULL, NULL)) < 0)
		goto done;
	if ((err = svc_project_load(req, id, SVC_ACT_READ, &after)) < 0)
		goto done;
	if ((err = svc_api_site_url(cfg, slug, url, sizeof url)) < 0)
		goto done;
	body = json_object_new_object();
	json_object_object_add(body, "url", json_object_new_string(url));
	svc_json_add_str(body, "slug", slug);
	svc_json_add_time(body, "publishedAt", svc_rows_get(after, 0, PCOL_PUBLISHED));
	json_object_object_add(body, "project", svc_project_json(after, 0));
	svc_resp_json(resp, 200, body);
done:
	svc_rows_free(after);
	svc_rows_free(rows);
	return err;
}
