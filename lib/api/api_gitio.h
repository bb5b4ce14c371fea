/* api_gitio.h: the handlers of Git in and out (lib/api/api_gitio.c): export, import, the mirror to a forge (docs/git.md). */
#ifndef SVC_API_GITIO_H
#define SVC_API_GITIO_H

#include "api/api.h"

/* Each answers as docs/api.md "Git: import, export, mirror" says; its statuses are listed at its definition. */
enum svc_err svc_api_projects_export(struct svc_req *req, struct svc_resp *resp);
enum svc_err svc_api_projects_import(struct svc_req *req, struct svc_resp *resp);
enum svc_err svc_api_git_remote_get(struct svc_req *req, struct svc_resp *resp);
enum svc_err svc_api_git_remote_put(struct svc_req *req, struct svc_resp *resp);
enum svc_err svc_api_git_remote_delete(struct svc_req *req, struct svc_resp *resp);
enum svc_err svc_api_git_push(struct svc_req *req, struct svc_resp *resp);
enum svc_err svc_api_git_pull(struct svc_req *req, struct svc_resp *resp);
extern const struct svc_body svc_api_git_remote_put_body;
extern const struct svc_body svc_api_git_push_body;

#endif
