/* api_direct_save.c: the visual editor's direct save: CSS patches applied to a project's HTML or CSS file and committed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/api.h"
#include "project/direct_save.h"
#include "core/err.h"
#include "core/fsx.h"
#include "core/json.h"
#include "project/quota.h"

/* Answers 422 for a patch that cannot be applied: the error body plus patchIndex, and field "patches[i]". */
static int patch_refused(struct svc_resp *resp, size_t index, const char *message)
{
	struct json_object *o = json_object_new_object();
	char field[32];

	snprintf(field, sizeof field, "patches[%zu]", index);
	json_object_object_add(o, "error", json_object_new_string("validation_failed"));
	json_object_object_add(o, "message", json_object_new_string(message));
	json_object_object_add(o, "field", json_object_new_string(field));
	json_object_object_add(o, "patchIndex", json_object_new_int64((int64_t)index));
	return svc_resp_json(resp, 422, o);
}

static const struct svc_field save_fields[] = {
	{ "filePath", SVC_V_STR, SVC_F_REQUIRED, 1, SVC_FSX_PATH_MAX, NULL },
	{ "patches", SVC_V_ARRAY, SVC_F_REQUIRED, 0, SVC_DS_PATCHES_MAX, NULL },
};
const struct svc_body svc_api_direct_save_body = SVC_BODY(save_fields);

/*
 * POST /direct-save/:projectId {filePath, patches: [{selector, property, value}]}:
 * 200 {filePath, sha, changed, changes: [{index, selector, property, oldValue, newValue}]};
 * 400 validation_failed (filePath, patches); 403; 404 (project, file); 413 (file over 5 MiB, or the
 * project's repository quota: nothing written);
 * 422 a patch that cannot be applied (patchIndex names it; the file is untouched).
 */
enum svc_err svc_api_direct_save(struct svc_req *req, struct svc_resp *resp)
{
	const char *id = svc_req_param(req, "projectId");
	struct svc_ds_patch patches[SVC_DS_PATCHES_MAX];
	struct svc_ds_change changes[SVC_DS_PATCHES_MAX];
	struct svc_rows *rows = NULL;
	struct json_object *arr, *body, *items;
	char msg[512], norm[SVC_FSX_PATH_MAX + 1], dir[2048], cmsg[SVC_FSX_PATH_MAX + 32];
	char sha[41] = "", *data = NULL, *out = NULL, ws[37];
	size_t len = 0, out_len = 0, n = 0, i, failed = 0;
	enum svc_ds_kind kind;
	int err, lockfd = -1, committed = 0;

	memset(changes, 0, sizeof changes);
	if ((err = svc_project_load(svc_req_caller(req), id, SVC_ACT_WRITE, &rows)) < 0)
		return err;
	snprintf(ws, sizeof ws, "%s", svc_rows_get(rows, 0, PCOL_WORKSPACE));
	svc_rows_free(rows);
	if (svc_fsx_check_path(svc_json_str(req->json, "filePath"), norm) < 0)
		return svc_resp_error(resp, SVC_E_VALIDATION, "filePath", "the file path is not allowed");
	kind = svc_ds_kind_of(norm);
	if (kind == SVC_DS_NONE)
		return svc_resp_error(resp, SVC_E_VALIDATION, "filePath", "only .html, .htm and .css files can be edited directly");
	json_object_object_get_ex(req->json, "patches", &arr);
	n = json_object_array_length(arr);
	if (n == 0)
		return svc_resp_error(resp, SVC_E_VALIDATION, "patches", "patches must hold at least one patch");
	for (i = 0; i < n; i++) {
		struct json_object *pt = json_object_array_get_idx(arr, i), *v;
		const char *const keys[3] = { "selector", "property", "value" };
		const char *vals[3];
		size_t k;
		if (!json_object_is_type(pt, json_type_object))
			return patch_refused(resp, i, "a patch is an object {selector, property, value}");
		for (k = 0; k < 3; k++) {
			if (!json_object_object_get_ex(pt, keys[k], &v) || !json_object_is_type(v, json_type_string)) {
				snprintf(msg, sizeof msg, "patch %zu: %s must be a string", i, keys[k]);
				return patch_refused(resp, i, msg);
			}
			vals[k] = json_object_get_string(v);
		}
		patches[i] = (struct svc_ds_patch){ vals[0], vals[1], vals[2] };
	}
	if ((err = svc_project_dir(&req->ctx->cfg, id, dir, sizeof dir)) < 0)
		return err;
	/* one direct save at a time per project: read, patch and write must not interleave */
	if ((lockfd = svc_project_lock(dir)) < 0) {
		err = lockfd;
		goto done;
	}
	if ((err = svc_fsx_read(dir, norm, SVC_DS_FILE_MAX, &data, &len)) < 0) {
		if (err == SVC_E_NOT_FOUND)
			err = svc_resp_error(resp, err, "filePath", "No such file in the project.");
		goto done;
	}
	err = svc_ds_apply(kind, data, len, patches, n, &out, &out_len, changes, &failed, msg, sizeof msg);
	if (err == SVC_E_VALIDATION) {
		err = patch_refused(resp, failed, msg);
		goto done;
	}
	if (err < 0)
		goto done;
	if (out_len != len || memcmp(out, data, len) != 0) {
		/* the repository quota (413): the file is not written past it */
		if ((err = svc_quota_bytes_check(req->ctx->db, &req->ctx->cfg, ws, id, dir, SVC_QUOTA_REPO_BYTES, out_len,
						 len, resp->message, sizeof resp->message)) < 0 ||
		    (err = svc_fsx_write(dir, norm, out, out_len)) < 0)
			goto done;
		snprintf(cmsg, sizeof cmsg, "Visual edit: %s", norm);
		if ((err = svc_project_commit_change(svc_req_caller(req), id, dir, cmsg, sha, &committed)) < 0)
			goto done;
	}
	body = json_object_new_object();
	json_object_object_add(body, "filePath", json_object_new_string(norm));
	json_object_object_add(body, "changed", json_object_new_boolean(committed));
	svc_json_add_str(body, "sha", committed ? sha : NULL);
	items = json_object_new_array();
	for (i = 0; i < n; i++) {
		struct json_object *c = json_object_new_object();
		json_object_object_add(c, "index", json_object_new_int64((int64_t)i));
		svc_json_add_str(c, "selector", patches[i].selector);
		svc_json_add_str(c, "property", patches[i].property);
		svc_json_add_str(c, "oldValue", changes[i].old_value);
		svc_json_add_str(c, "newValue", changes[i].new_value);
		json_object_array_add(items, c);
	}
	json_object_object_add(body, "changes", items);
	svc_resp_json(resp, 200, body);
done:
	if (lockfd >= 0)
		close(lockfd); /* releases the lock */
	svc_ds_changes_free(changes, n);
	free(out);
	free(data);
	return err;
}
