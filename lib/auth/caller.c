/* caller.c: a caller (auth/caller.h) turned into the subject of a permission check. */
#include <string.h>

#include "auth/caller.h"

void svc_caller_subject(const struct svc_caller *c, const char *role, const char *admin_flag,
			struct svc_perm_subject *out)
{
	out->user_id = c->user_id;
	out->platform_admin = admin_flag && strcmp(admin_flag, "1") == 0;
	out->role = role && *role ? role : NULL;
	/* a session holds every scope; an API token only those the router granted it for this route
	 * (anonymous readers of public projects are decided by role and visibility alone) */
	out->scopes = c->user_id && c->user_id[0] ? c->scopes : SVC_SCOPE_ALL;
}
