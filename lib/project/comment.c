/* comment.c: a project's design comment row as JSON (the API's list and svc-wsd's design-comment:added). */
#include <stdlib.h>

#include "core/json.h"
#include "project/comment.h"

struct json_object *svc_comment_json(const struct svc_rows *rows, size_t r, int with_status)
{
	struct json_object *c = json_object_new_object(), *u = json_object_new_object();

	svc_json_add_str(c, "id", svc_rows_get(rows, r, CMCOL_ID));
	svc_json_add_str(u, "id", svc_rows_get(rows, r, CMCOL_USER));
	svc_json_add_str(u, "name", svc_rows_get(rows, r, CMCOL_USER_NAME));
	json_object_object_add(u, "avatarUrl", NULL);
	json_object_object_add(c, "user", u);
	svc_json_add_str(c, "content", svc_rows_get(rows, r, CMCOL_CONTENT));
	json_object_object_add(c, "xPercent", json_object_new_double(strtod(svc_rows_get(rows, r, CMCOL_X), NULL)));
	json_object_object_add(c, "yPercent", json_object_new_double(strtod(svc_rows_get(rows, r, CMCOL_Y), NULL)));
	svc_json_add_str(c, "selector", svc_rows_get(rows, r, CMCOL_SELECTOR));
	svc_json_add_str(c, "pagePath", svc_rows_get(rows, r, CMCOL_PAGE));
	svc_json_add_str(c, "parentId", svc_rows_get(rows, r, CMCOL_PARENT));
	if (with_status) {
		const char *rb = svc_rows_get(rows, r, CMCOL_RESOLVED_BY);
		struct json_object *by = NULL;

		svc_json_add_str(c, "status", svc_rows_get(rows, r, CMCOL_STATUS));
		if (rb) {
			by = json_object_new_object();
			json_object_object_add(by, "id", json_object_new_string(rb));
		}
		json_object_object_add(c, "resolvedBy", by);
		svc_json_add_time(c, "resolvedAt", svc_rows_get(rows, r, CMCOL_RESOLVED_AT));
	}
	svc_json_add_time(c, "createdAt", svc_rows_get(rows, r, CMCOL_CREATED));
	svc_json_add_time(c, "updatedAt", svc_rows_get(rows, r, CMCOL_UPDATED));
	return c;
}
