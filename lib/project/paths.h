/* paths.h: where a project's files live under SVC_DATA_DIR (its directory, its published site, the other areas, the web servers' includes), making those directories, locking a project's directory, and the areas' modes. */
#ifndef SVC_PATHS_H
#define SVC_PATHS_H

#include <stddef.h>

#include "core/config.h"

/* Writes the absolute directory of project `id` into out (max bytes). Returns 0 or SVC_E_INTERNAL. */
int svc_project_dir(const struct svc_config *cfg, const char *id, char *out, size_t max);

/*
 * Writes SVC_DATA_DIR/<area>/<a>[/<b>] into out (max bytes): `area` one of
 * "projects", "previews", "builds", "deployments", "published",
 * "thumbnails"; `a` and `b` (NULL for none) names below it, already checked
 * (UUIDs, slugs). Returns 0 or SVC_E_INTERNAL (too long).
 */
int svc_data_path(const struct svc_config *cfg, const char *area, const char *a, const char *b, char *out, size_t max);

/*
 * Writes the directory of the published site of the project with slug `slug`
 * (<data_dir>/published/<slug>) into out (max bytes). Returns 0 or SVC_E_INTERNAL.
 */
int svc_project_published_dir(const struct svc_config *cfg, const char *slug, char *out, size_t max);

/*
 * Writes the directory of the web servers' includes (SVC_SITES_DIR, default
 * <data_dir>/sites; docs/configuration.md "Custom domains") into out (max
 * bytes). Returns 0 or SVC_E_INTERNAL (too long).
 */
int svc_sites_dir(const struct svc_config *cfg, char *out, size_t max);

/*
 * Creates directory `path` (absolute, under 4096 bytes) and its missing
 * parents with mode SVC_FSX_DIR_MODE (0750; a parent with the set-group-ID
 * bit passes its group on); existing ones are fine. Returns 0 or
 * SVC_E_INTERNAL.
 */
int svc_project_mkdirs(const char *path);

/*
 * Locks project directory `dir` (absolute) for one change of its files (an
 * exclusive flock on the directory, the lock direct save and the file
 * endpoints share), so read, change and commit of two requests never
 * interleave. Returns the descriptor (>= 0) that the caller closes to unlock,
 * or SVC_E_INTERNAL.
 */
int svc_project_lock(const char *dir);

/*
 * Gives SVC_DATA_DIR and its areas their modes (docs/operations.md "Files and
 * their modes"), making the missing ones: SVC_DATA_DIR 0711 (the web server
 * and the sandbox users pass through it); `npm/` 0710 (its group the build's user's,
 * lib/project/deps.h; only its top); `projects/`, `previews/` (read by
 * svc-preview, not the web server), `thumbnails/` 0700; `builds/` 0711 (each
 * build's directory belongs to SVC_BUILD_UID, 0750); `deployments/`,
 * `published/` and SVC_SITES_DIR, which the web server reads, 2750 with
 * the group SVC_WEB_GROUP (default www-data; empty: the group they have). With
 * `trees`, what is below gets its modes too: in the served areas directories
 * 2750 and files 0640 of that group, in `projects/`, `previews/` and
 * `thumbnails/` 0700 and 0600 (the execute bits kept for the user), `builds/`
 * only at its top (the builds' own users own what is below).
 * Returns 0, or the first error of svc_fsx_set_modes() after trying every
 * area (each failure is logged with its path).
 */
int svc_data_modes(const struct svc_config *cfg, int trees);

#endif
