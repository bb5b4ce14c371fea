/* caller.h: who asks, as lib/ below the API takes it: the database and settings to act with, the user, the credential's scopes, the client's address. */
#ifndef SVC_CALLER_H
#define SVC_CALLER_H

#include "auth/perm.h"
#include "core/config.h"
#include "db/db.h"

/*
 * The caller of a lib/ function that acts for someone (lib/project's loaders
 * and changes): what the HTTP layer knows of a request, without the request.
 * lib/http builds one from a request (svc_req_caller(), lib/http/http.h);
 * svc-wsd and svc-worker fill one themselves. Every pointer is borrowed and
 * must outlive the calls it is passed to.
 */
struct svc_caller {
	struct svc_db *db;             /* the connection to act on */
	const struct svc_config *cfg;  /* the settings (NULL is fine for the loaders that only read rows) */
	const char *user_id;           /* the user (a UUID), "" when anonymous; never NULL */
	unsigned scopes;               /* lib/auth/perm.h SVC_SCOPE_* of the credential: SVC_SCOPE_ALL for a session */
	const char *client_addr;       /* the client's address for logs and limits, "-" when unknown; may be NULL */
};

/*
 * Fills `out` with the permission subject of caller `c` on a resource where
 * the caller's role is `role` (borrowed; NULL or "" for none) and the
 * platform-admin flag is `admin_flag` ("1" when set, as the statements
 * return it; NULL for unset). An anonymous caller gets every scope (lib/auth/perm.h:
 * anonymous readers of public projects are decided by role and visibility
 * alone); otherwise the credential's. out borrows c's and role's strings.
 */
void svc_caller_subject(const struct svc_caller *c, const char *role, const char *admin_flag,
			struct svc_perm_subject *out);

#endif
