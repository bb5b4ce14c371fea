/* publish.h: a project's published site on disk: its marker file and the one-rename switch to a new site. */
#ifndef SVC_PUBLISH_H
#define SVC_PUBLISH_H

#include <stddef.h>

/* The site's marker (docs/api.md "Published sites"): served at /.well-known/svc-site. */
#define SVC_PUBLISH_MARKER ".well-known/svc-site"

/*
 * Writes the marker of a published site into the site directory `site`
 * (absolute, trusted: a directory publish made itself): the file
 * SVC_PUBLISH_MARKER holding exactly `project_id` (36 bytes, no newline).
 * Whatever the project had at that path (a file, a directory) or a file
 * ".well-known" is removed first, so the marker never comes from the
 * project's own files. Returns 0 or SVC_E_INTERNAL (logged).
 */
int svc_publish_mark(const char *site, const char *project_id);

/*
 * Makes the complete site directory `next` the live site `live` with one
 * renameat2(RENAME_EXCHANGE) (rename(2) when there is no live site yet), so
 * a reader sees the whole old site or the whole new one, never a mix of
 * files being written. Both paths are absolute, trusted, and in one
 * filesystem (put `next` beside `live`). After the exchange `next` holds the
 * previous site, which is removed. Returns 0, or SVC_E_INTERNAL (logged;
 * `next` is removed, `live` is unchanged).
 */
int svc_publish_swap(const char *next, const char *live);

#endif
