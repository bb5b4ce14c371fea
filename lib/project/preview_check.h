/* preview_check.h: the agent's look at its work: a project's preview loaded in the thumbnails' sandboxed Chromium, driven over the DevTools protocol, its errors and a screenshot collected. */
#ifndef SVC_PREVIEW_CHECK_H
#define SVC_PREVIEW_CHECK_H

#include <stddef.h>

#include "core/config.h"
#include "db/db.h"
#include "project/thumbnail.h"

#define SVC_CHECK_ERRORS_MAX 20     /* errors kept of one check; more are counted, not kept */
#define SVC_CHECK_MESSAGE_MAX 512   /* bytes of one error's message (cut at a UTF-8 boundary) */
#define SVC_CHECK_SOURCE_MAX 256    /* bytes of one error's source (a path of the preview, "/app.js") */
#define SVC_CHECK_QUIET_MS 2000     /* the network quiet after the load that ends a check */
#define SVC_CHECK_SHOT_W 1280       /* the page is loaded at this size, CSS pixels; the screenshot has it */
#define SVC_CHECK_SHOT_H 800

/* One error the preview showed (docs/api.md "check.result"). */
struct svc_check_error {
	char kind[16];                        /* "exception", "rejection", "console", "request" or "build" */
	char message[SVC_CHECK_MESSAGE_MAX];  /* the error's first line: "Uncaught TypeError: x is not a function",
					       * "GET /missing.png: 404" */
	char source[SVC_CHECK_SOURCE_MAX];    /* the preview's path of the file it came from ("/app.js"); for "build"
					       * the project's path ("src/App.tsx"); "" unknown */
	int line;                             /* 1-based line in source, 0 unknown */
};

/* What one check found. Filled by svc_preview_check_run(); emptied with svc_preview_check_dispose(). */
struct svc_check_report {
	struct svc_check_error errors[SVC_CHECK_ERRORS_MAX];
	size_t nerrors;        /* kept in errors[] */
	size_t more;           /* further errors not kept */
	int loaded;            /* the page's load event fired before the deadline */
	unsigned char *png;    /* the screenshot (SVC_CHECK_SHOT_W x SVC_CHECK_SHOT_H PNG), malloc'd; NULL when none */
	size_t png_len;
	char *png_base64;      /* the same as base64 (for a model's image), malloc'd; NULL when none */
};

/*
 * Loads http://SVC_THUMB_PAGE_HOST/index.html, the files of `dir` (the
 * preview: a project's working tree, or its preview build), in headless
 * Chromium (`chromium`) inside the thumbnails' sandbox `sb` exactly as
 * svc_thumbnail_chromium() runs it (bubblewrap, its own user, a network
 * namespace where only the page server answers: svc_thumbnail__serve()),
 * drives it over the Chrome DevTools Protocol on --remote-debugging-pipe
 * (fds 3 and 4 of Chromium, NUL-separated JSON messages: Target.createTarget,
 * Target.attachToTarget flatten, Runtime/Network/Page.enable, the viewport
 * SVC_CHECK_SHOT_W x SVC_CHECK_SHOT_H (Emulation.setDeviceMetricsOverride), Page.navigate),
 * and collects until the load event and `quiet_ms` without a request in
 * flight or finished, or until `timeout_ms` in all: uncaught exceptions and
 * unhandled rejections (Runtime.exceptionThrown), console.error
 * (Runtime.consoleAPICalled), same-origin requests answered with status >=
 * 400 or failed (Network.responseReceived, Network.loadingFailed), then a
 * screenshot (Page.captureScreenshot). An error seen twice is kept once.
 * `tick(tick_arg)` (may be NULL) is called about every 200 ms; a non-zero
 * return ends the check at once with that value. Fills *out (zero it first;
 * dispose it after, on error too).
 * Returns 0 (also when the load did not finish in time: out->loaded 0),
 * SVC_E_NOT_FOUND (no index.html in dir), SVC_E_UNAVAILABLE (Chromium or
 * bubblewrap missing, Chromium failed or spoke no protocol; `why` says which,
 * whymax bytes), SVC_E_INTERNAL, or tick's value.
 */
int svc_preview_check_run(const char *chromium, const struct svc_thumb_sandbox *sb, const char *dir, long timeout_ms,
			  long quiet_ms, int (*tick)(void *), void *tick_arg, struct svc_check_report *out, char *why,
			  size_t whymax);

/*
 * The check of a project's preview as svc runs it (docs/agent.md "The
 * preview check"): svc_preview_check_run() with the settings' Chromium
 * (SVC_CHROMIUM) in the thumbnails' sandbox (SVC_BUILD_BWRAP, SVC_THUMB_UID,
 * the builds' cgroup bounds) and a quiet of SVC_CHECK_QUIET_MS, on `dir`, the
 * working tree of project `project_id` (of workspace `workspace_id`). A
 * project with package.json is built first as its preview is
 * (svc_preview_build_tree(): the same sandbox, cgroup bounds and
 * registry-only install as every build), within SVC_AGENT_CHECK_BUILD_SECS,
 * `tick` asked about every 200 ms meanwhile (its non-zero answer stops the
 * build at once and is returned); a build that failed fills *out with errors
 * of kind "build" (svc_preview_check_build_log(); its reason when the output
 * names none) and no screenshot; a build that worked has its dist/ checked.
 * Returns as svc_preview_check_run(); SVC_E_UNAVAILABLE also when
 * SVC_CHROMIUM is "" or the host cannot build; SVC_E_INTERNAL, DB errors.
 */
int svc_preview_check(struct svc_db *db, const struct svc_config *cfg, const char *project_id, const char *workspace_id,
		      const char *dir, long timeout_ms, int (*tick)(void *), void *tick_arg, struct svc_check_report *out,
		      char *why, size_t whymax);

/*
 * The errors of a failed build's output `log` (`len` bytes, as
 * svc_preview_tree.log has it; ANSI colours, raw or made "?[31m" by
 * svc_publish_clean_text(), are ignored) added to `r` as kind "build": lines
 * "<file>:<line>:<col>: ERROR: <message>" (esbuild, Vite's [vite:esbuild]),
 * "[ERROR] <message>" with "<file>:<line>:<col>:" on the next line that is not
 * blank (esbuild's own), "<file>(<line>,<col>): error TS<n>: <message>" and
 * "<file>:<line>:<col> - error TS<n>: <message>" (tsc: the message keeps
 * "TS<n>: "), and Vite's "error during build:" whose next line is the
 * message and whose "file: <file>[:<line>:<col>]" its place. `root`
 * ("/build/", the project's path in the build's sandbox; NULL none) and
 * "./" are cut off the front of a file, so source is the project's path
 * ("src/App.tsx"); line 0 when none is given. When no line names a file:
 * Vite's message, else npm's first "npm error" line, without a source.
 * Messages are trimmed and cut to SVC_CHECK_MESSAGE_MAX at a UTF-8
 * boundary. Returns how many errors the output gave (those past the report's
 * room counted in r->more).
 */
size_t svc_preview_check_build_log(const char *log, size_t len, const char *root, struct svc_check_report *r);

/*
 * The Select element attachment's image (issue 29 "Point at an element"): loads `page_path`
 * (beginning with "/") of `dir`'s files in the sandboxed Chromium as svc_preview_check() does,
 * waits for its load and 500 ms of network quiet, finds `selector` (document.querySelector),
 * scrolls it into view and screenshots its box (at most 2000 x 2000 CSS pixels) into out->png
 * and out->png_base64 (zero *out first, dispose it after); errors the page shows are collected
 * too. Returns 0, SVC_E_NOT_FOUND (no index.html, or no visible element: `why` says so),
 * SVC_E_UNAVAILABLE, SVC_E_INTERNAL.
 */
int svc_preview_element_shot(const struct svc_config *cfg, const char *dir, const char *page_path, const char *selector,
			     long timeout_ms, struct svc_check_report *out, char *why, size_t whymax);

/* As svc_preview_element_shot() with the Chromium and sandbox given (as svc_preview_check_run()). */
int svc_preview_element_run(const char *chromium, const struct svc_thumb_sandbox *sb, const char *dir,
			    const char *page_path, const char *selector, long timeout_ms, struct svc_check_report *out,
			    char *why, size_t whymax);

/*
 * Adds an error to `r` unless the same kind, message, source and line is
 * there already; past SVC_CHECK_ERRORS_MAX it is counted in r->more. The
 * strings are copied, cut to their fields' sizes at UTF-8 boundaries.
 */
void svc_preview_check_add(struct svc_check_report *r, const char *kind, const char *message, const char *source,
			   int line);

/* Frees the screenshot of `r` (NULL allowed). */
void svc_preview_check_dispose(struct svc_check_report *r);

#endif
