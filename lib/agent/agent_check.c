/* agent_check.c: a turn's preview check: the check.result event, the fix round's message, the same-error breaker, the stored screenshots. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "agent/check.h"
#include "core/err.h"
#include "core/fsx.h"
#include "core/json.h"
#include "core/util.h"

#define SHOT_READ_MAX (16u * 1024 * 1024)

struct json_object *svc_agent_check_event(const struct svc_check_report *r, const char *screenshot_url, unsigned round,
					  int fixing)
{
	struct json_object *ev = json_object_new_object(), *errors = json_object_new_array();
	size_t i;

	for (i = 0; i < r->nerrors; i++) {
		struct json_object *e = json_object_new_object();
		svc_json_add_str(e, "kind", r->errors[i].kind);
		svc_json_add_str(e, "message", r->errors[i].message);
		svc_json_add_str(e, "source", r->errors[i].source[0] ? r->errors[i].source : NULL);
		json_object_object_add(e, "line", r->errors[i].line ? json_object_new_int(r->errors[i].line) : NULL);
		json_object_array_add(errors, e);
	}
	json_object_object_add(ev, "errors", errors);
	json_object_object_add(ev, "more", json_object_new_int64((int64_t)r->more));
	svc_json_add_str(ev, "screenshotUrl", screenshot_url && *screenshot_url ? screenshot_url : NULL);
	json_object_object_add(ev, "round", json_object_new_int((int)round));
	json_object_object_add(ev, "fixing", json_object_new_boolean(fixing));
	return ev;
}

/* The errors array of a check.result payload (an empty one when it has none). */
static struct json_object *errors_of(struct json_object *ev)
{
	struct json_object *a = NULL;

	if (!ev || !json_object_object_get_ex(ev, "errors", &a) || !json_object_is_type(a, json_type_array))
		return NULL;
	return a;
}

/* "exception in /app.js line 4: Uncaught ..." for one error object. */
static int describe(struct svc_buf *b, struct json_object *e)
{
	struct json_object *v = NULL;
	const char *kind = svc_json_str(e, "kind"), *src = svc_json_str(e, "source"), *msg = svc_json_str(e, "message");
	int line = json_object_object_get_ex(e, "line", &v) && v ? json_object_get_int(v) : 0;
	int err = svc_buf_addf(b, "%s", kind ? kind : "error");

	if (err == 0 && src && *src)
		err = svc_buf_addf(b, " in %s", src);
	if (err == 0 && line > 0)
		err = svc_buf_addf(b, " line %d", line);
	if (err == 0)
		err = svc_buf_addf(b, ": %s", msg ? msg : "");
	return err;
}

char *svc_agent_check_message(struct json_object *ev)
{
	struct json_object *errors = errors_of(ev), *v = NULL;
	struct svc_buf b;
	size_t i, n = errors ? json_object_array_length(errors) : 0;
	int err, build = 0;

	svc_buf_init(&b, 64 * 1024);
	err = svc_buf_adds(&b, SVC_AGENT_CHECK_PREFIX "\n");
	for (i = 0; err == 0 && i < n; i++) {
		const char *kind = svc_json_str(json_object_array_get_idx(errors, i), "kind");
		build |= kind && strcmp(kind, "build") == 0;
		err = svc_buf_adds(&b, "- ");
		if (err == 0)
			err = describe(&b, json_object_array_get_idx(errors, i));
		if (err == 0)
			err = svc_buf_adds(&b, "\n");
	}
	if (err == 0 && json_object_object_get_ex(ev, "more", &v) && json_object_get_int64(v) > 0)
		err = svc_buf_addf(&b, "- and %lld more\n", (long long)json_object_get_int64(v));
	if (err == 0 && build)
		err = svc_buf_adds(&b, "Fix these errors in the project's files. The project is built (npm run build) "
				       "before its page is loaded: while the build fails there is no page to show.");
	else if (err == 0)
		err = svc_buf_adds(&b, "Fix these errors in the project's files. The page is loaded from index.html; "
				       "the screenshot, when there is one, shows it as it is now.");
	if (err < 0) {
		svc_buf_dispose(&b);
		return NULL;
	}
	return b.data; /* the buffer's memory becomes the caller's */
}

/* The breaker's key of one error: its normalised message, a NUL, its source, into out (max bytes). */
static void key_of(struct json_object *e, char *out, size_t max)
{
	const char *m = svc_json_str(e, "message"), *src = svc_json_str(e, "source");
	size_t o = 0;
	int space = 0;

	for (; m && *m && o + 2 < max; m++) {
		unsigned char ch = (unsigned char)*m;
		if (isdigit(ch)) {
			if (o == 0 || out[o - 1] != '#')
				out[o++] = '#';
			continue;
		}
		if (isspace(ch)) {
			space = 1;
			continue;
		}
		if (space && o)
			out[o++] = ' ';
		space = 0;
		if (o + 2 < max)
			out[o++] = (char)tolower(ch);
	}
	out[o++] = '\0';
	snprintf(out + o, max - o, "%s", src ? src : "");
}

/* Whether two keys of key_of() are equal (the message, then the source after its NUL). */
static int key_equal(const char *a, const char *b)
{
	return strcmp(a, b) == 0 && strcmp(a + strlen(a) + 1, b + strlen(b) + 1) == 0;
}

int svc_agent_check_same(struct json_object *prev, struct json_object *now, char *note, size_t max)
{
	struct json_object *pe = errors_of(prev), *ne = errors_of(now);
	char a[1100], b[1100];
	size_t i, k;

	for (i = 0; pe && ne && i < json_object_array_length(pe); i++) {
		key_of(json_object_array_get_idx(pe, i), a, sizeof a);
		for (k = 0; k < json_object_array_length(ne); k++) {
			struct json_object *e = json_object_array_get_idx(ne, k);
			struct svc_buf d;
			key_of(e, b, sizeof b);
			if (!key_equal(a, b))
				continue;
			svc_buf_init(&d, 2048);
			describe(&d, e);
			snprintf(note, max, "I stopped fixing: the preview still shows the same error after my fix (%s). "
					    "Tell me how you would like to go on.", svc_buf_str(&d));
			svc_buf_dispose(&d);
			return 1;
		}
	}
	return 0;
}

int svc_agent_check_store(const struct svc_config *cfg, const char *project_id, const unsigned char *png, size_t len,
			  char *url, size_t url_max)
{
	char dir[2048], rel[128], id[37];
	int err, n;

	if ((err = svc_uuid_v4(id)) < 0)
		return err;
	snprintf(dir, sizeof dir, "%s/checks", cfg->data_dir);
	if (mkdir(dir, SVC_FSX_PRIVATE_DIR_MODE) < 0 && errno != EEXIST)
		return SVC_E_INTERNAL;
	snprintf(rel, sizeof rel, "%s/%s.png", project_id, id);
	if ((err = svc_fsx_write(dir, rel, (const char *)png, len)) < 0)
		return err;
	n = snprintf(url, url_max, "%s/projects/%s/checks/%s.png", cfg->base_url, project_id, id);
	return n < 0 || (size_t)n >= url_max ? SVC_E_INTERNAL : 0;
}

int svc_agent_check_read(const struct svc_config *cfg, const char *project_id, const char *file, char **out,
			 size_t *out_len)
{
	char dir[2048], rel[128], id[37];

	if (!file || strlen(file) != 40 || strcmp(file + 36, ".png") != 0)
		return SVC_E_NOT_FOUND;
	memcpy(id, file, 36);
	id[36] = '\0';
	if (!svc_uuid_valid(id) || !svc_uuid_valid(project_id))
		return SVC_E_NOT_FOUND;
	snprintf(dir, sizeof dir, "%s/checks", cfg->data_dir);
	snprintf(rel, sizeof rel, "%s/%s", project_id, file);
	return svc_fsx_read(dir, rel, SHOT_READ_MAX, out, out_len);
}

int svc_agent_fix_rounds_get(struct svc_db *db, const char *wid, int *out)
{
	struct svc_dbv p = svc_dbv_str(wid);
	struct svc_rows *rows = NULL;
	const char *v;
	uint64_t n;
	int err;

	if ((err = svc_db_run(db, STMT_AGENT_FIX_ROUNDS_GET, &p, 1, &rows, NULL)) < 0)
		return err;
	*out = -1;
	if (rows && rows->nrows == 1 && (v = svc_rows_get(rows, 0, FRCOL_ROUNDS)) &&
	    svc_parse_u64(v, SVC_AGENT_FIX_ROUNDS_MAX, &n) == 0)
		*out = (int)n;
	svc_rows_free(rows);
	return 0;
}

int svc_agent_fix_rounds_set(struct svc_db *db, const char *wid, int rounds, const char *user_id)
{
	struct svc_dbv p[3];

	p[0] = svc_dbv_str(wid);
	p[1] = rounds < 0 ? svc_dbv_null() : svc_dbv_i64(rounds);
	p[2] = svc_dbv_str(user_id);
	return svc_db_run(db, STMT_AGENT_FIX_ROUNDS_PUT, p, 3, NULL, NULL);
}

unsigned svc_agent_fix_rounds(const struct svc_config *cfg, int ws_rounds)
{
	return ws_rounds >= 0 && (unsigned)ws_rounds < cfg->agent_fix_rounds ? (unsigned)ws_rounds : cfg->agent_fix_rounds;
}

void svc_agent_check_remove_all(const struct svc_config *cfg, const char *project_id)
{
	char dir[2048];

	if (!svc_uuid_valid(project_id))
		return;
	snprintf(dir, sizeof dir, "%s/checks/%s", cfg->data_dir, project_id);
	svc_fsx_remove_tree(dir);
}
