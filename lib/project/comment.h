/* comment.h: a project's design comment as JSON, one builder for the API's list and svc-wsd's messages. */
#ifndef SVC_COMMENT_H
#define SVC_COMMENT_H

#include <stddef.h>

#include <json-c/json.h>

#include "db/db.h"

/*
 * Builds the JSON of design comment `r` of `rows`, a result of
 * STMT_COMMENTS_OF_PROJECT (CMCOL_* columns), as docs/api.md "Design
 * comments" shows it: {id, user: {id, name, avatarUrl: null}, content,
 * xPercent, yPercent (numbers), selector, pagePath, parentId, status,
 * resolvedBy ({id} or null), resolvedAt, createdAt, updatedAt} (times in
 * RFC 3339, absent text as null). With `with_status` 0 the status,
 * resolvedBy and resolvedAt members are left out, as svc-wsd's
 * design-comment:added message has them. Returns a new object the caller
 * releases with json_object_put(); allocation failure aborts (json-c).
 */
struct json_object *svc_comment_json(const struct svc_rows *rows, size_t r, int with_status);

#endif
