/* agent_plan.c: the structured plan: parsed from a plan turn's final message, and rendered to run it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/agent.h"
#include "core/err.h"

#define MAX_STEPS 100

/* The end (one past) of the balanced {...} or [...] starting at s[0], string-aware; 0 when unbalanced. */
static size_t balanced(const char *s, size_t len)
{
	char stack[64];
	size_t i, depth = 0;
	int in_str = 0, esc = 0;

	for (i = 0; i < len; i++) {
		char c = s[i];

		if (in_str) {
			if (esc)
				esc = 0;
			else if (c == '\\')
				esc = 1;
			else if (c == '"')
				in_str = 0;
			continue;
		}
		if (c == '"') {
			in_str = 1;
		} else if (c == '{' || c == '[') {
			if (depth == sizeof(stack))
				return 0;
			stack[depth++] = c == '{' ? '}' : ']';
		} else if (c == '}' || c == ']') {
			if (depth == 0 || stack[depth - 1] != c)
				return 0;
			if (--depth == 0)
				return i + 1;
		}
	}
	return 0;
}

/* Adds a cleaned copy of step `in` to `steps` when it is a step (an object with a non-empty title). */
static int add_step(struct json_object *steps, struct json_object *in)
{
	static const char *const risks[] = { "low", "medium", "high" };
	struct json_object *step, *files, *v;
	const char *title, *risk;
	size_t i, n;

	if (!json_object_is_type(in, json_type_object))
		return 0;
	title = svc_agent__json_str(in, "title");
	if (!title || !title[0] || json_object_array_length(steps) >= MAX_STEPS)
		return 0;
	if (!(step = json_object_new_object()) || json_object_array_add(steps, step) < 0) {
		json_object_put(step);
		return SVC_E_INTERNAL;
	}
	json_object_object_add(step, "title", json_object_new_string(title));
	v = NULL;
	json_object_object_add(step, "description", json_object_new_string(
		svc_agent__json_str(in, "description") ? svc_agent__json_str(in, "description") : ""));
	if (!(files = json_object_new_array()))
		return SVC_E_INTERNAL;
	json_object_object_add(step, "files", files);
	if (json_object_object_get_ex(in, "files", &v) && json_object_is_type(v, json_type_array)) {
		n = json_object_array_length(v);
		for (i = 0; i < n; i++) {
			struct json_object *f = json_object_array_get_idx(v, i);

			if (json_object_is_type(f, json_type_string) && json_object_get_string_len(f) > 0)
				json_object_array_add(files, json_object_new_string(json_object_get_string(f)));
		}
	}
	risk = svc_agent__json_str(in, "risk");
	for (i = 0; i < 3; i++) {
		if (risk && strcmp(risk, risks[i]) == 0)
			break;
	}
	json_object_object_add(step, "risk", json_object_new_string(i < 3 ? risks[i] : "medium"));
	return 0;
}

/* The steps of a parsed document: {steps: [...]}, {plan: {steps}} or a bare array. */
static int steps_from(struct json_object *doc, struct json_object *steps)
{
	struct json_object *arr = NULL, *plan;
	size_t i, n;
	int error;

	if (json_object_is_type(doc, json_type_array)) {
		arr = doc;
	} else if (json_object_is_type(doc, json_type_object)) {
		if (!json_object_object_get_ex(doc, "steps", &arr) && json_object_object_get_ex(doc, "plan", &plan))
			json_object_object_get_ex(plan, "steps", &arr);
	}
	if (!arr || !json_object_is_type(arr, json_type_array))
		return 0;
	n = json_object_array_length(arr);
	for (i = 0; i < n; i++) {
		if ((error = add_step(steps, json_object_array_get_idx(arr, i))) < 0)
			return error;
	}
	return 0;
}

/* Takes every balanced {...} of `s` that parses and is a step; for JSON broken elsewhere. */
static int salvage(const char *s, size_t len, struct json_object *steps)
{
	struct json_object *obj;
	size_t i = 0, end;
	int error;

	/* skip the outer object's own brace so its inner steps are found */
	while (i < len) {
		if (s[i] != '{') {
			i++;
			continue;
		}
		end = balanced(s + i, len - i);
		if (end && svc_agent__json_parse(s + i, end, &obj) == 0) {
			if (svc_agent__json_str(obj, "title")) {
				error = add_step(steps, obj);
				json_object_put(obj);
				if (error < 0)
					return error;
				i += end;
				continue;
			}
			json_object_put(obj);
		}
		i++;
	}
	return 0;
}

/* Tries the JSON text `s` (`len` bytes): parsed whole, else salvaged. Returns 1 when it held steps. */
static int try_block(const char *s, size_t len, struct json_object *steps)
{
	struct json_object *doc = NULL;
	size_t before = json_object_array_length(steps);
	int error;

	while (len && (*s == ' ' || *s == '\n' || *s == '\r' || *s == '\t')) {
		s++;
		len--;
	}
	if (svc_agent__json_parse(s, len, &doc) == 0) {
		error = steps_from(doc, steps);
		json_object_put(doc);
	} else {
		error = salvage(s, len, steps);
	}
	if (error < 0)
		return error;
	return json_object_array_length(steps) > before;
}

int svc_agent_plan_parse(const char *text, struct json_object **out)
{
	struct json_object *plan = NULL, *steps = NULL;
	const char *p, *body, *close;
	size_t len = text ? strlen(text) : 0, i, end;
	int error = 0, found = 0;

	if (!text)
		text = "";
	if (!(plan = json_object_new_object()) || !(steps = json_object_new_array())) {
		error = SVC_E_INTERNAL;
		goto done;
	}
	/* 1. fenced blocks, ```json first */
	for (p = strstr(text, "```"); p && !found; p = close ? strstr(close + 3, "```") : NULL) {
		body = strchr(p + 3, '\n');
		close = body ? strstr(body, "```") : NULL;
		if (!body || !close)
			break;
		if ((found = try_block(body + 1, (size_t)(close - body - 1), steps)) < 0) {
			error = found;
			goto done;
		}
	}
	/* 2. a fence opened but never closed: up to the end */
	if (!found && (p = strstr(text, "```")) && (body = strchr(p + 3, '\n')) && !strstr(body, "```")) {
		if ((found = try_block(body + 1, strlen(body + 1), steps)) < 0) {
			error = found;
			goto done;
		}
	}
	/* 3. no fence: the first balanced {...} or [...] that holds steps, else salvage from the first '{' */
	for (i = 0; i < len && !found; i++) {
		if (text[i] != '{' && text[i] != '[')
			continue;
		end = balanced(text + i, len - i);
		if (!end)
			continue;
		if ((found = try_block(text + i, end, steps)) < 0) {
			error = found;
			goto done;
		}
	}
	if (!found && (p = strchr(text, '{')) && (error = salvage(p, strlen(p), steps)) < 0)
		goto done;
	json_object_object_add(plan, "steps", steps);
	steps = NULL;
	json_object_object_add(plan, "rawText", json_object_new_string(text));
	*out = plan;
	plan = NULL;
done:
	json_object_put(steps);
	json_object_put(plan);
	return error;
}

int svc_agent_plan_message(struct json_object *plan, size_t max, char **out)
{
	struct json_object *steps = NULL, *files;
	struct svc_buf b;
	const char *raw = svc_agent__json_str(plan, "rawText");
	size_t i, n, j, nf;
	char num[32];
	int error = 0;

	if (!json_object_object_get_ex(plan, "steps", &steps) || !json_object_is_type(steps, json_type_array))
		steps = NULL;
	n = steps ? json_object_array_length(steps) : 0;
	if (n == 0 && (!raw || !raw[0]))
		return SVC_E_NOT_FOUND;
	svc_buf_init(&b, max);
	if (n == 0) {
		if ((error = svc_buf_adds(&b, "Carry out this plan now:\n\n")) < 0 ||
		    (error = svc_buf_adds(&b, raw)) < 0)
			goto done;
	} else if ((error = svc_buf_adds(&b, "Carry out this plan now, step by step:\n")) < 0) {
		goto done;
	}
	for (i = 0; i < n; i++) {
		struct json_object *s = json_object_array_get_idx(steps, i);
		const char *d = svc_agent__json_str(s, "description"), *r = svc_agent__json_str(s, "risk");

		snprintf(num, sizeof num, "\n%zu. ", i + 1);
		if ((error = svc_buf_adds(&b, num)) < 0 ||
		    (error = svc_buf_adds(&b, svc_agent__json_str(s, "title") ? svc_agent__json_str(s, "title") : "")) < 0)
			goto done;
		if (d && d[0] && ((error = svc_buf_adds(&b, "\n   ")) < 0 || (error = svc_buf_adds(&b, d)) < 0))
			goto done;
		if (json_object_object_get_ex(s, "files", &files) && json_object_is_type(files, json_type_array) &&
		    (nf = json_object_array_length(files)) > 0) {
			if ((error = svc_buf_adds(&b, "\n   Files: ")) < 0)
				goto done;
			for (j = 0; j < nf; j++) {
				if ((j && (error = svc_buf_adds(&b, ", ")) < 0) ||
				    (error = svc_buf_adds(&b, json_object_get_string(json_object_array_get_idx(files, j)))) < 0)
					goto done;
			}
		}
		if (r && ((error = svc_buf_adds(&b, "\n   Risk: ")) < 0 || (error = svc_buf_adds(&b, r)) < 0))
			goto done;
	}
	if (!(*out = strdup(svc_buf_str(&b))))
		error = SVC_E_INTERNAL;
done:
	svc_buf_dispose(&b);
	return error;
}
