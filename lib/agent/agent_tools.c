/* agent_tools.c: the agent's file tools (list, read, write, edit, delete, search) confined to the project by lib/core/fsx. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "agent/agent.h"
#include "core/err.h"
#include "core/fsx.h"
#include "project/app_decl.h"
#include "project/quota.h"

#define MAX_LIST 5000                    /* files listed */
#define MAX_READ (1024 * 1024)           /* bytes read by read_file */
#define MAX_EDIT (8 * 1024 * 1024)       /* bytes of a file edit_file works on, before and after */
#define MAX_MATCHES 200                  /* lines of search_files */

struct tool {
	const char *name;
	int writes;
	const char *description;
	const char *schema; /* JSON Schema of the arguments */
};

static const struct tool tools[] = {
	{ "list_files", 0, "List every file of the project with its size in bytes.",
	  "{\"type\":\"object\",\"properties\":{},\"additionalProperties\":false}" },
	{ "read_file", 0, "Read a text file of the project. Paths are relative to the project root, e.g. \"index.html\".",
	  "{\"type\":\"object\",\"properties\":{\"path\":{\"type\":\"string\",\"description\":\"relative path\"}},"
	  "\"required\":[\"path\"],\"additionalProperties\":false}" },
	{ "write_file", 1, "Create or replace a whole file. Parent directories are created.",
	  "{\"type\":\"object\",\"properties\":{\"path\":{\"type\":\"string\",\"description\":\"relative path\"},"
	  "\"content\":{\"type\":\"string\",\"description\":\"the complete new content\"}},"
	  "\"required\":[\"path\",\"content\"],\"additionalProperties\":false}" },
	{ "edit_file", 1, "Replace one exact piece of text in a file. old_string must occur exactly once in the file "
	  "(include enough surrounding lines); prefer this to write_file for small changes.",
	  "{\"type\":\"object\",\"properties\":{\"path\":{\"type\":\"string\",\"description\":\"relative path\"},"
	  "\"old_string\":{\"type\":\"string\",\"description\":\"the exact text to replace, including whitespace\"},"
	  "\"new_string\":{\"type\":\"string\",\"description\":\"the replacement text\"}},"
	  "\"required\":[\"path\",\"old_string\",\"new_string\"],\"additionalProperties\":false}" },
	{ "delete_file", 1, "Delete a file.",
	  "{\"type\":\"object\",\"properties\":{\"path\":{\"type\":\"string\",\"description\":\"relative path\"}},"
	  "\"required\":[\"path\"],\"additionalProperties\":false}" },
	{ "search_files", 0, "Search the text files of the project for a POSIX extended regular expression "
	  "(no back-references; a line's first 4 KiB are searched); answers \"path:line: text\" per match.",
	  "{\"type\":\"object\",\"properties\":{\"pattern\":{\"type\":\"string\",\"description\":\"POSIX extended regular expression\"}},"
	  "\"required\":[\"pattern\"],\"additionalProperties\":false}" },
};

#define NTOOLS (sizeof(tools) / sizeof(tools[0]))

struct json_object *svc_agent__tools_json(int read_only, int anthropic)
{
	struct json_object *arr = json_object_new_array(), *t, *fn, *schema;
	size_t i;

	if (!arr)
		return NULL;
	for (i = 0; i < NTOOLS; i++) {
		if (read_only && tools[i].writes)
			continue;
		schema = json_tokener_parse(tools[i].schema);
		t = json_object_new_object();
		if (!schema || !t || json_object_array_add(arr, t) < 0) {
			json_object_put(schema);
			json_object_put(t);
			goto fail;
		}
		if (anthropic) {
			json_object_object_add(t, "name", json_object_new_string(tools[i].name));
			json_object_object_add(t, "description", json_object_new_string(tools[i].description));
			json_object_object_add(t, "input_schema", schema);
		} else {
			fn = json_object_new_object();
			if (!fn) {
				json_object_put(schema);
				goto fail;
			}
			json_object_object_add(t, "type", json_object_new_string("function"));
			json_object_object_add(t, "function", fn);
			json_object_object_add(fn, "name", json_object_new_string(tools[i].name));
			json_object_object_add(fn, "description", json_object_new_string(tools[i].description));
			json_object_object_add(fn, "parameters", schema);
		}
	}
	return arr;
fail:
	json_object_put(arr);
	return NULL;
}

/* A malloc'd copy of printf output, cut to SVC_AGENT__MAX_RESULT; NULL when out of memory. */
static char *textf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *textf(const char *fmt, ...)
{
	va_list ap;
	char *s = malloc(1024);

	if (!s)
		return NULL;
	va_start(ap, fmt);
	if (vsnprintf(s, 1024, fmt, ap) < 0)
		s[0] = '\0';
	va_end(ap);
	return s;
}

/* `s` made safe to quote in a message: valid UTF-8, at most 200 bytes, or a placeholder. */
static const char *shown(const char *s, char *buf, size_t bufsz)
{
	size_t len = strlen(s), n;

	if (!svc_utf8_valid(s, len))
		return "(not valid UTF-8)";
	n = svc_utf8_cut(s, len, bufsz - 1 < 200 ? bufsz - 1 : 200);
	memcpy(buf, s, n);
	buf[n] = '\0';
	return buf;
}

/* A message for an fsx error on `path`. */
static int fsx_error(int err, const char *path, char **out)
{
	char b[256];
	const char *p = shown(path, b, sizeof(b));

	switch (err) {
	case SVC_E_VALIDATION:
		*out = textf("refused path \"%s\": paths are relative to the project directory, without \"..\", "
			     "a leading \"/\", symlinks or .git", p);
		break;
	case SVC_E_NOT_FOUND:
		*out = textf("no such file: %s", p);
		break;
	case SVC_E_TOO_LARGE:
		*out = textf("%s is too large for this tool", p);
		break;
	default:
		*out = textf("could not access %s", p);
		break;
	}
	return err < 0 ? err : SVC_E_INTERNAL;
}

/* The string argument `key`, or NULL with an error text in *out. */
static const char *arg(struct json_object *args, const char *key, char **out)
{
	const char *s = svc_agent__json_str(args, key);

	if (!s)
		*out = textf("missing string argument \"%s\"", key);
	return s;
}

static int do_list(struct svc_agent__tools *t, struct json_object *args, char **out)
{
	struct svc_fsx_entry *list = NULL;
	struct svc_buf b;
	size_t n = 0, i;
	char line[64];
	int error;

	svc_buf_init(&b, SVC_AGENT__MAX_RESULT * 4);
	error = svc_fsx_list(t->root, MAX_LIST, &list, &n);
	if (error == SVC_E_TOO_LARGE) {
		*out = textf("the project has more than %d files", MAX_LIST);
		goto done;
	}
	if (error < 0) {
		*out = textf("could not list the project's files");
		goto done;
	}
	for (i = 0; i < n && error == 0; i++) {
		snprintf(line, sizeof(line), " (%llu bytes)\n", (unsigned long long)list[i].size);
		if ((error = svc_buf_adds(&b, list[i].path)) == 0)
			error = svc_buf_adds(&b, line);
	}
	if (error == SVC_E_TOO_LARGE)
		error = 0; /* the result is cut anyway */
	if (error == 0 && n == 0)
		error = svc_buf_adds(&b, "(the project has no files)\n");
	if (error < 0) {
		*out = textf("out of memory");
		goto done;
	}
	*out = strdup(svc_buf_str(&b));
done:
	svc_fsx_list_free(list, n);
	svc_buf_dispose(&b);
	return error;
}

static int do_read(struct svc_agent__tools *t, struct json_object *args, char **out)
{
	const char *path = arg(args, "path", out);
	char *data = NULL;
	size_t len = 0;
	int error;

	if (!path)
		return SVC_E_VALIDATION;
	if ((error = svc_fsx_read(t->root, path, MAX_READ, &data, &len)) < 0)
		return fsx_error(error, path, out);
	if (!svc_utf8_valid(data, len)) {
		char b[256];

		free(data);
		*out = textf("%s is not a UTF-8 text file", shown(path, b, sizeof(b)));
		return SVC_E_VALIDATION;
	}
	*out = data;
	return 0;
}

/*
 * The repository quota: replacing `path` by `len` bytes must leave the
 * project directory within t->repo_quota_bytes. Returns 0, or
 * SVC_E_TOO_LARGE with the tool's error text in *out.
 */
static int quota_ok(struct svc_agent__tools *t, const char *path, size_t len, char **out)
{
	char full[4200], norm[SVC_FSX_PATH_MAX + 1];
	uint64_t now = 0, old = 0, after;
	struct stat st;

	/* a refused path is left to svc_fsx_write(), which says why */
	if (!t->repo_quota_bytes || svc_fsx_check_path(path, norm) < 0 || svc_quota_dir_bytes(t->root, &now) < 0)
		return 0;
	snprintf(full, sizeof full, "%s/%s", t->root, norm);
	if (lstat(full, &st) == 0 && S_ISREG(st.st_mode))
		old = (uint64_t)st.st_size;
	after = (now > old ? now - old : 0) + len;
	if (after <= t->repo_quota_bytes)
		return 0;
	*out = textf("not written: the project would hold %llu bytes of files and history, over the workspace's "
		     "quota of %llu bytes", (unsigned long long)after, (unsigned long long)t->repo_quota_bytes);
	return SVC_E_TOO_LARGE;
}

/* svc.data.json must stay a valid declaration (lib/project/app_decl.h): else SVC_E_VALIDATION, the parser's message in *out. */
static int decl_ok(const char *path, const char *content, size_t len, char **out)
{
	char norm[SVC_FSX_PATH_MAX + 1], msg[512];

	if (svc_fsx_check_path(path, norm) < 0 || svc_app_decl_guard(norm, content, len, msg, sizeof msg) == 0)
		return 0;
	*out = textf("not written: %s", msg);
	return SVC_E_VALIDATION;
}

static int do_write(struct svc_agent__tools *t, struct json_object *args, char **out)
{
	const char *path = arg(args, "path", out), *content;
	struct json_object *v;
	char b[256];
	size_t len;
	int error;

	if (!path)
		return SVC_E_VALIDATION;
	if (!(content = arg(args, "content", out)))
		return SVC_E_VALIDATION;
	json_object_object_get_ex(args, "content", &v);
	len = (size_t)json_object_get_string_len(v);
	if ((error = quota_ok(t, path, len, out)) < 0 || (error = decl_ok(path, content, len, out)) < 0)
		return error;
	if ((error = svc_fsx_write(t->root, path, content, len)) < 0)
		return fsx_error(error, path, out);
	t->files_changed = 1;
	t->changes++;
	*out = textf("wrote %s (%zu bytes)", shown(path, b, sizeof(b)), len);
	return 0;
}

static int do_edit(struct svc_agent__tools *t, struct json_object *args, char **out)
{
	const char *path = arg(args, "path", out), *olds, *news;
	struct json_object *v;
	char *data = NULL, *res = NULL, *at = NULL, *p, b[256];
	size_t len = 0, olen, nlen, count = 0, rest, reslen;
	int error;

	if (!path)
		return SVC_E_VALIDATION;
	if (!(olds = arg(args, "old_string", out)) || !(news = arg(args, "new_string", out)))
		return SVC_E_VALIDATION;
	json_object_object_get_ex(args, "old_string", &v);
	olen = (size_t)json_object_get_string_len(v);
	json_object_object_get_ex(args, "new_string", &v);
	nlen = (size_t)json_object_get_string_len(v);
	if (olen == 0) {
		*out = textf("old_string is empty; use write_file to create a file");
		return SVC_E_VALIDATION;
	}
	if ((error = svc_fsx_read(t->root, path, MAX_EDIT, &data, &len)) < 0)
		return fsx_error(error, path, out);
	/* count every occurrence, overlapping ones too: the match must be unambiguous */
	for (p = data; (size_t)(p - data) < len; p++) {
		rest = len - (size_t)(p - data);
		p = memmem(p, rest, olds, olen);
		if (!p)
			break;
		if (count++ == 0)
			at = p;
	}
	if (count != 1) {
		if (count == 0)
			*out = textf("old_string does not occur in %s; read the file and copy the exact text, "
				     "including whitespace and line breaks", shown(path, b, sizeof(b)));
		else
			*out = textf("old_string occurs %zu times in %s; include more of the surrounding text so "
				     "that it occurs exactly once", count, shown(path, b, sizeof(b)));
		error = SVC_E_VALIDATION;
		goto done;
	}
	if (nlen > MAX_EDIT || len - olen > MAX_EDIT - nlen) {
		*out = textf("the edited %s would be larger than %d bytes", shown(path, b, sizeof(b)), MAX_EDIT);
		error = SVC_E_TOO_LARGE;
		goto done;
	}
	reslen = len - olen + nlen;
	if (!(res = malloc(reslen + 1))) {
		*out = textf("out of memory");
		error = SVC_E_INTERNAL;
		goto done;
	}
	memcpy(res, data, (size_t)(at - data));
	memcpy(res + (at - data), news, nlen);
	memcpy(res + (at - data) + nlen, at + olen, len - (size_t)(at - data) - olen);
	if ((error = quota_ok(t, path, reslen, out)) < 0 || (error = decl_ok(path, res, reslen, out)) < 0)
		goto done;
	if ((error = svc_fsx_write(t->root, path, res, reslen)) < 0) {
		fsx_error(error, path, out);
		goto done;
	}
	t->files_changed = 1;
	t->changes++;
	*out = textf("edited %s: replaced %zu bytes with %zu bytes", shown(path, b, sizeof(b)), olen, nlen);
done:
	free(data);
	free(res);
	return error;
}

static int do_delete(struct svc_agent__tools *t, struct json_object *args, char **out)
{
	const char *path = arg(args, "path", out);
	char b[256];
	int error;

	if (!path)
		return SVC_E_VALIDATION;
	if ((error = svc_fsx_delete(t->root, path)) < 0)
		return fsx_error(error, path, out);
	t->files_changed = 1;
	t->changes++;
	*out = textf("deleted %s", shown(path, b, sizeof(b)));
	return 0;
}

static int do_search(struct svc_agent__tools *t, struct json_object *args, char **out)
{
	const char *pattern = arg(args, "pattern", out);
	char *text = NULL;
	int error;

	if (!pattern)
		return SVC_E_VALIDATION;
	error = svc_fsx_search(t->root, pattern, MAX_MATCHES, &text);
	if (error == SVC_E_VALIDATION) {
		*out = textf("the pattern is not a valid POSIX extended regular expression of at most 512 bytes "
			     "without back-references");
		return error;
	}
	if (error < 0) {
		*out = textf("could not search the project's files");
		return error;
	}
	if (!text[0]) {
		free(text);
		*out = textf("no matches");
		return 0;
	}
	*out = text;
	return 0;
}

/* Cuts *text to SVC_AGENT__MAX_RESULT bytes at a UTF-8 boundary and says so at the end. */
static int cut_result(char **text)
{
	size_t len = strlen(*text), n;
	struct svc_buf b;

	if (len <= SVC_AGENT__MAX_RESULT)
		return 0;
	n = svc_utf8_cut(*text, len, SVC_AGENT__MAX_RESULT);
	svc_buf_init(&b, n + 128);
	if (svc_buf_add(&b, *text, n) < 0 ||
	    svc_buf_addf(&b, "\n[cut: the result has %zu bytes; these are the first %zu]", len, n) < 0) {
		svc_buf_dispose(&b);
		return SVC_E_INTERNAL;
	}
	free(*text);
	*text = svc_buf_detach(&b, NULL);
	return 0;
}

int svc_agent__tool_run(struct svc_agent__tools *t, const char *name, struct json_object *args, char **out)
{
	static int (*const run[NTOOLS])(struct svc_agent__tools *, struct json_object *, char **) = {
		do_list, do_read, do_write, do_edit, do_delete, do_search,
	};
	char b[256], mb[64];
	char *text = NULL;
	size_t i;
	int error;

	for (i = 0; i < NTOOLS; i++) {
		if (strcmp(name, tools[i].name) == 0)
			break;
	}
	if (i == NTOOLS && t->integ && strcmp(name, "integration_request") == 0) {
		if (!args || !json_object_is_type(args, json_type_object)) {
			text = textf("the arguments must be a JSON object");
			error = SVC_E_INVALID_JSON;
		} else {
			error = svc_agent__integration_run(t->integ, args, &text);
		}
	} else if (i == NTOOLS) {
		text = textf("unknown tool \"%s\"; the tools are list_files, read_file, search_files%s",
			     shown(name, b, sizeof(b)), t->read_only ? "" : ", write_file, edit_file, delete_file");
		error = SVC_E_NOT_FOUND;
	} else if (t->read_only && tools[i].writes) {
		text = textf("denied: %s changes files, and the project is read-only in %s mode",
			     tools[i].name, t->mode ? shown(t->mode, mb, sizeof(mb)) : "this");
		error = SVC_E_FORBIDDEN;
	} else if (!args || !json_object_is_type(args, json_type_object)) {
		text = textf("the arguments must be a JSON object");
		error = SVC_E_INVALID_JSON;
	} else {
		error = run[i](t, args, &text);
	}
	if (!text) {
		*out = NULL;
		return error < 0 ? error : SVC_E_INTERNAL;
	}
	if (cut_result(&text) < 0) {
		free(text);
		*out = NULL;
		return SVC_E_INTERNAL;
	}
	*out = text;
	return error;
}
