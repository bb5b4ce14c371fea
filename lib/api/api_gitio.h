/* api_gitio.h: the handlers of Git in and out (lib/api/api_gitio.c): export, import, the mirror to a forge (docs/git.md). */
#ifndef SVC_API_GITIO_H
#define SVC_API_GITIO_H

#include "api/api.h"

/* Each answers as docs/api.md "Git: import, export, mirror" says; its statuses are listed at its definition. */
enum svc_err svc_api_projects_export(struct svc_req *req, struct svc_resp *resp);

#endif
