/* publish.c: a project's published site on disk: its marker file and the one-rename switch to a new site. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "core/err.h"
#include "core/fsx.h"
#include "core/log.h"
#include "project/publish.h"

int svc_publish_mark(const char *site, const char *project_id)
{
	char wk[2048], marker[2100];
	struct stat st;
	int n, err;

	n = snprintf(wk, sizeof wk, "%s/.well-known", site);
	if (n < 0 || (size_t)n >= sizeof wk)
		return SVC_E_INTERNAL;
	snprintf(marker, sizeof marker, "%s/%s", site, SVC_PUBLISH_MARKER);
	/* the project's own: a file named .well-known, or anything at the marker's path */
	if (lstat(wk, &st) == 0 && !S_ISDIR(st.st_mode) && svc_fsx_remove_tree(wk) < 0)
		return SVC_E_INTERNAL;
	if (svc_fsx_remove_tree(marker) < 0)
		return SVC_E_INTERNAL;
	if ((err = svc_fsx_write(site, SVC_PUBLISH_MARKER, project_id, strlen(project_id))) < 0) {
		svc_log_error("publish: cannot write the marker in %s", site);
		return SVC_E_INTERNAL;
	}
	return 0;
}

int svc_publish_swap(const char *next, const char *live)
{
	if (renameat2(AT_FDCWD, next, AT_FDCWD, live, RENAME_EXCHANGE) == 0) {
		svc_fsx_remove_tree(next); /* now holds the previous site */
		return 0;
	}
	if (errno == ENOENT && rename(next, live) == 0)
		return 0; /* the first publication */
	svc_log_error("publish: swap %s: %s", live, strerror(errno));
	svc_fsx_remove_tree(next);
	return SVC_E_INTERNAL;
}
