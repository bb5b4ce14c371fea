/* api_internal.h: the API's /api/internal/ endpoints svc-wsd calls, and the design-comment list (docs/api.md). */
#ifndef SVC_API_INTERNAL_H
#define SVC_API_INTERNAL_H

#include "http/http.h"

/*
 * Internal endpoints (spec "Internal endpoints"), signed by svc-wsd with
 * INTERNAL_SECRET (lib/auth/internal.h). Their routes are SVC_R_INTERNAL: the
 * router checks X-Svc-Timestamp and X-Svc-Signature over the method, the
 * request path and the body (401 when they do not match or are older than
 * 300 s) and parses the body into req->json (400 invalid_json) before the
 * handler runs. Then, each:
 *
 * POST /api/internal/projects/:id/files-changed {paths?: [string], userIds?: [uuid]}
 *   commits the project's working tree as "Collaborative edits" (author: the
 *   first of userIds that is a user, else "svc collaboration"), notes the
 *   thumbnail for regeneration. 200 {committed, sha|null}; 404; 400.
 *   svc-wsd calls it once per burst of edits (SVC_WSD_COMMIT_DELAY_MS after
 *   the last save), so one burst makes one commit.
 * POST /api/internal/projects/:id/presence {users: [{id, name, canWrite}]}
 *   stores who is in the room (table collab_presence). 200 {}; 404; 400.
 * POST /api/internal/design-comments/:id {projectId, userId, content,
 *   xPercent, yPercent, selector?, pagePath?, parentId?, createdAt}
 *   stores a new comment. 201 {id}; 404 (project, or parent not of this
 *   project); 409 (id taken); 400.
 * POST /api/internal/design-comments/:id/resolve {projectId, userId, resolvedAt}
 * POST /api/internal/design-comments/:id/unresolve {projectId}
 * POST /api/internal/design-comments/:id/delete {projectId}
 *   move the comment through its states (spec "Design comment" states).
 *   200 {}; 404 (no such comment in this project); 400.
 */
enum svc_err svc_api_internal_files_changed(struct svc_req *req, struct svc_resp *resp);
enum svc_err svc_api_internal_presence(struct svc_req *req, struct svc_resp *resp);
enum svc_err svc_api_internal_comment_add(struct svc_req *req, struct svc_resp *resp);
enum svc_err svc_api_internal_comment_resolve(struct svc_req *req, struct svc_resp *resp);
enum svc_err svc_api_internal_comment_unresolve(struct svc_req *req, struct svc_resp *resp);
enum svc_err svc_api_internal_comment_delete(struct svc_req *req, struct svc_resp *resp);

/*
 * GET /api/projects/:id/design-comments (our addition): the project's
 * comments that are not deleted, oldest first, at most 10000:
 * 200 {"items": [{id, user: {id, name, avatarUrl}, content, xPercent,
 * yPercent, selector, pagePath, parentId, status: "open"|"resolved",
 * resolvedBy: {id}|null, resolvedAt, createdAt, updatedAt}]}. Read access
 * as for the project (members, or anyone for a public project): 401, 403, 404.
 */
enum svc_err svc_api_design_comments_list(struct svc_req *req, struct svc_resp *resp);

#endif
