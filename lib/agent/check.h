/* check.h: a turn's preview check (docs/agent.md "The preview check"): its event, the fix round's message, the loop breaker's comparison and the stored screenshot. */
#ifndef SVC_AGENT_CHECK_H
#define SVC_AGENT_CHECK_H

#include <stddef.h>

#include <json-c/json.h>

#include "core/config.h"
#include "db/db.h"
#include "project/preview_check.h"

#define SVC_AGENT_CHECK_PREFIX "The preview shows these errors after your changes:"

/*
 * The payload of a check.result event (docs/api.md "check.result"):
 * {errors: [{kind, message, source, line}], more, screenshotUrl (NULL: none),
 * round (0: the turn's own changes, n: after fix round n), fixing (the
 * errors go to the model as the next message)}. A new object the caller puts.
 */
struct json_object *svc_agent_check_event(const struct svc_check_report *r, const char *screenshot_url, unsigned round,
					  int fixing);

/*
 * The fix round's user message from a check.result payload `ev`:
 * SVC_AGENT_CHECK_PREFIX, then one line per error ("- exception in
 * /app.js line 4: Uncaught TypeError: ...", "- build in src/App.tsx line 7:
 * ..."), then what to do (with a build error: that the project is built
 * before its page is loaded). malloc'd (the caller frees it); NULL when out
 * of memory.
 */
char *svc_agent_check_message(struct json_object *ev);

/*
 * The loop breaker of the fix rounds: whether an error of check.result
 * payload `prev` is still in `now`, compared by normalised message (ASCII
 * lower case, each run of digits as one '#', runs of white space as one
 * space) and source. Returns 1 with a note for the user in `note` (`max`
 * bytes: "I stopped fixing: ... is still there after my fix."), else 0.
 */
int svc_agent_check_same(struct json_object *prev, struct json_object *now, char *note, size_t max);

/*
 * Stores a check's screenshot `png` (`len` bytes) as
 * SVC_DATA_DIR/checks/<project_id>/<check_id>.png (lib/core/fsx, temporary
 * file and rename), with `check_id` a new UUID, and writes the URL members
 * read it at, {SVC_BASE_URL}/projects/<project_id>/checks/<check_id>.png,
 * into `url` (`url_max` bytes). Returns 0, or the errors of svc_fsx_write(),
 * SVC_E_INTERNAL.
 */
int svc_agent_check_store(const struct svc_config *cfg, const char *project_id, const unsigned char *png, size_t len,
			  char *url, size_t url_max);

/*
 * The stored screenshot `file` ("<check_id>.png") of project `project_id`
 * into *out (malloc'd, *out_len bytes; the caller frees it). Returns 0,
 * SVC_E_NOT_FOUND (no such file, or a name of another shape), or the errors
 * of svc_fsx_read().
 */
int svc_agent_check_read(const struct svc_config *cfg, const char *project_id, const char *file, char **out,
			 size_t *out_len);

/*
 * The fix rounds workspace `wid` allows (schema/030_agent_check.sql) into *out: its own
 * 0..SVC_AGENT_FIX_ROUNDS_MAX, or -1 when it set none (the instance's holds). Returns 0 or a DB error.
 */
int svc_agent_fix_rounds_get(struct svc_db *db, const char *wid, int *out);

/* Sets them: `rounds` 0..SVC_AGENT_FIX_ROUNDS_MAX, or -1 (none: the instance's); `user_id` recorded. Returns 0 or a DB error. */
int svc_agent_fix_rounds_set(struct svc_db *db, const char *wid, int rounds, const char *user_id);

/* The rounds a turn of a workspace whose own value is `ws_rounds` (-1: none) runs: the lower of it and SVC_AGENT_FIX_ROUNDS. */
unsigned svc_agent_fix_rounds(const struct svc_config *cfg, int ws_rounds);

/* Removes the stored screenshots of project `project_id` (SVC_DATA_DIR/checks/<project_id>), as its hard delete does. */
void svc_agent_check_remove_all(const struct svc_config *cfg, const char *project_id);

#define SVC_AGENT_FIX_ROUNDS_MAX 10 /* SVC_AGENT_FIX_ROUNDS's bound, and a workspace's */

#endif
