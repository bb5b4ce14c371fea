/* thumbnail.h: project thumbnails: a headless Chromium screenshot of index.html, or a generated PNG when Chromium cannot. */
#ifndef SVC_THUMBNAIL_H
#define SVC_THUMBNAIL_H

#include <stddef.h>
#include <stdint.h>

#include "core/config.h"
#include "db/db.h"
#include "db/jobs.h"

#define SVC_THUMB_SHOT_W 1200   /* the page is rendered at this size, in CSS pixels */
#define SVC_THUMB_SHOT_H 630
#define SVC_THUMB_W 600         /* and scaled down to the thumbnail, in pixels */
#define SVC_THUMB_H 315
#define SVC_THUMB_TIMEOUT_MS 20000
#define SVC_THUMB_PAGE_HOST "project.svc-thumb.invalid" /* the one origin the sandboxed Chromium reaches */
#define SVC_JOB_THUMBNAIL "thumbnail.regenerate"

/* Where a thumbnail came from. */
enum svc_thumb_source { SVC_THUMB_CHROMIUM, SVC_THUMB_FALLBACK };

/* Returns "chromium" or "fallback". */
const char *svc_thumbnail_source_name(enum svc_thumb_source s);

/*
 * Makes the generated thumbnail: SVC_THUMB_W x SVC_THUMB_H, the project's
 * `name` (UTF-8, cut with an ellipsis when too wide) in white, centred, on a
 * colour derived from `id` (the hue from SHA-256 of the id), drawn with
 * FreeType from the TrueType font `font_path` (no text when the font cannot
 * be loaded). *out is a malloc'd PNG of *out_len bytes (caller frees).
 * Errors: SVC_E_INTERNAL.
 */
int svc_thumbnail_fallback(const char *id, const char *name, const char *font_path, unsigned char **out,
			   size_t *out_len);

/* Where Chromium runs (docs/operations.md "Thumbnails"). */
struct svc_thumb_sandbox {
	const char *bwrap; /* the bubblewrap program (SVC_BUILD_BWRAP, default /usr/bin/bwrap), borrowed */
	unsigned uid;      /* the user Chromium runs as when svc runs as root (SVC_THUMB_UID, default 65533) */
	unsigned memory_mb, procs, cpu_percent; /* its cgroup's bounds (SVC_BUILD_MEMORY_MB, _PROCS, _CPU_PERCENT); 0: none */
	const char *cgroup_parent;              /* SVC_BUILD_CGROUP; NULL: svc's own cgroup */
};

/*
 * Screenshots `dir`/index.html with headless Chromium (`chromium`, a program
 * name looked up in PATH or a path; it must lie under /usr, the only part of
 * the host the sandbox shows) at SVC_THUMB_SHOT_W x SVC_THUMB_SHOT_H and
 * scales it to SVC_THUMB_W x SVC_THUMB_H (box filter). The page is served to
 * Chromium over HTTP by a child process that is also Chromium's proxy for
 * every request, loopback included: it answers only the files of `dir`
 * (lib/core/fsx confinement), so a page can reach neither the network nor
 * the host's files. Chromium has a network namespace of its own with only
 * `lo` (lib/core/netns.h), where the proxy's listener on 127.0.0.1:3128 is
 * the one thing that answers: WebRTC's UDP (also refused by
 * --force-webrtc-ip-handling-policy=disable_non_proxied_udp) and DNS reach
 * nothing. Chromium itself runs inside bubblewrap
 * (svc_build_sandbox_base() of lib/project/build.h) as sb->uid when svc runs
 * as root, never as root and with its own sandbox on (no --no-sandbox): it
 * sees /usr read-only, /etc/fonts, /etc/chromium.d and a fresh temporary
 * directory for its profile and the screenshot, and no other file of the
 * host (no SVC_DATA_DIR, settings or secrets). `timeout_ms` in total before
 * it and its children are killed. *out is a malloc'd PNG of *out_len bytes.
 * Errors: SVC_E_NOT_FOUND (no index.html), SVC_E_UNAVAILABLE (Chromium or
 * bubblewrap missing, no user namespace to make the network one in, Chromium
 * failed or timed out; `why` says which, whymax
 * bytes), SVC_E_INTERNAL.
 */
int svc_thumbnail_chromium(const char *chromium, const struct svc_thumb_sandbox *sb, const char *dir,
			   long timeout_ms, unsigned char **out, size_t *out_len, char *why, size_t whymax);

/* Writes SVC_DATA_DIR/thumbnails/<id>.png into out (max bytes). Returns 0 or SVC_E_INTERNAL. */
int svc_thumbnail_path(const struct svc_config *cfg, const char *id, char *out, size_t max);

#define SVC_THUMB_CHROMIUM_OR_KEEP 2 /* svc_thumbnail_render(): Chromium or nothing (keep the stored image) */

/*
 * Renders project `id` (named `name`, files in `dir`) and stores the PNG at
 * svc_thumbnail_path() with a sidecar "<id>.source" naming its source, each
 * written to a temporary file and renamed. Chromium (setting SVC_CHROMIUM,
 * default "chromium"; "" turns it off; run as svc_thumbnail_chromium() says,
 * in the build sandbox's bubblewrap as its user) is tried first unless
 * `allow_chromium` is 0; the generated PNG (font SVC_THUMBNAIL_FONT) is
 * written when it is off, missing or fails, except that with
 * `allow_chromium` SVC_THUMB_CHROMIUM_OR_KEEP a Chromium that failed or
 * timed out writes nothing and returns SVC_E_UNAVAILABLE. *out_source says
 * which; `why` (whymax bytes) the reason for a fallback, "" otherwise.
 * Errors: SVC_E_UNAVAILABLE (as said), SVC_E_INTERNAL.
 */
int svc_thumbnail_render(const struct svc_config *cfg, const char *id, const char *name, const char *dir,
			 int allow_chromium, enum svc_thumb_source *out_source, char *why, size_t whymax);

/*
 * Queues a SVC_JOB_THUMBNAIL job {projectId} for svc-worker, unless one for
 * this project is already waiting (the queue debounces a burst of changes
 * into one render). Runs in the caller's transaction when one is open.
 * Errors: DB errors.
 */
int svc_thumbnail_request(struct svc_db *db, const char *project_id);

/* Sets the project's thumbnailUrl to {SVC_BASE_URL}/thumbnails/<id>.png. Errors: DB errors. */
int svc_thumbnail_set_url(struct svc_db *db, const struct svc_config *cfg, const char *id);

/*
 * The svc_job_fn of SVC_JOB_THUMBNAIL (payload {"projectId": "<uuid>"});
 * `ctx` is a struct svc_job_ctx (lib/db/jobs.h). Renders as svc_thumbnail_render()
 * with Chromium allowed and sets the thumbnailUrl. While attempts remain, a
 * Chromium that failed keeps the stored image and the job is retried
 * (SVC_E_UNAVAILABLE); the last attempt stores the generated image. A
 * project deleted since is done (0). Errors: SVC_E_VALIDATION (payload),
 * SVC_E_UNAVAILABLE, SVC_E_INTERNAL, DB errors.
 */
int svc_thumbnail_job(void *ctx, const struct svc_job *job, char *errmsg, size_t errmax);

/*
 * ---- Module-internal (lib/project: thumbnail.c, preview_check.c) ----
 * svc_thumbnail__serve(): the page server, Chromium's proxy and the only origin it reaches: answers
 * GET of the files of `dir` on SVC_THUMB_PAGE_HOST (lib/core/fsx confinement), one request at a
 * time, on listening socket `lfd` until `deadline_ms` (svc_mono_ms()) passes; 404 for any other host
 * or a missing file, 403 for other methods and CONNECT. Run it in a child process.
 * svc_thumbnail__sandbox(): the thumbnails' sandbox from the settings (borrowed strings of cfg).
 */
void svc_thumbnail__serve(int lfd, const char *dir, int64_t deadline_ms);
void svc_thumbnail__sandbox(const struct svc_config *cfg, struct svc_thumb_sandbox *out);
/*
 * svc_thumbnail__start(): starts `chromium` as svc_thumbnail_chromium() says (bubblewrap, sb's user and
 * cgroup, a network namespace where only 127.0.0.1:3128 answers: the run's listener, for the caller's
 * svc_thumbnail__serve(); `tmp` as /out for its profile), with the flags both uses share, then `extra`
 * (NULL-terminated, may be NULL), then `url`; the cgroup named "<prefix>-<random>"; pass_fds NULL or
 * two fds that become Chromium's 3 and 4 (spec.pass_fds). Returns as svc_sandbox_start().
 */
struct svc_sandbox;
int svc_thumbnail__start(const struct svc_thumb_sandbox *sb, const char *chromium, const char *tmp,
			 const char *const *extra, const char *url, const char *prefix, const int *pass_fds,
			 struct svc_sandbox **out, char *why, size_t whymax);

#endif
