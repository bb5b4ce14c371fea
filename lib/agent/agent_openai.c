/* agent_openai.c: the OpenAI Chat Completions protocol: request body and streamed chunk parser. */
#include <string.h>

#include "agent/agent.h"
#include "core/err.h"

/* Takes an error object ({"error": {"message"}} or {"error": "text"}) apart for a message. */
static int stream_error(struct svc_agent__step *st, struct json_object *err)
{
	const char *msg = NULL;

	if (json_object_is_type(err, json_type_string))
		msg = json_object_get_string(err);
	else if (json_object_is_type(err, json_type_object))
		msg = svc_agent__json_str(err, "message");
	return svc_agent__step_fail(st, "the model provider reported an error: %.200s", msg ? msg : "(no message)");
}

static int tool_call_delta(struct svc_agent__step *st, struct json_object *tc)
{
	struct json_object *v, *fn = NULL;
	struct svc_agent__call *c;
	const char *id, *name = NULL, *args = NULL;
	long index;
	int error;

	if (!json_object_is_type(tc, json_type_object))
		return svc_agent__step_fail(st, "the model provider sent a malformed tool call");
	id = svc_agent__json_str(tc, "id");
	if (json_object_object_get_ex(tc, "function", &fn) && json_object_is_type(fn, json_type_object)) {
		name = svc_agent__json_str(fn, "name");
		args = svc_agent__json_str(fn, "arguments");
	}
	if (json_object_object_get_ex(tc, "index", &v) && json_object_is_type(v, json_type_int)) {
		index = (long)json_object_get_int64(v);
	} else if (st->ncalls == 0 || (id && id[0] && strcmp(id, st->calls[st->ncalls - 1].id) != 0)) {
		/* servers that omit "index" send each call whole, with its id */
		index = -1 - (long)st->ncalls;
	} else {
		index = st->calls[st->ncalls - 1].index;
	}
	c = svc_agent__step_call(st, index, id, name);
	if (!c)
		return SVC_E_MODEL_UNAVAILABLE;
	if (args && args[0]) {
		error = svc_buf_adds(&c->args, args);
		if (error < 0)
			return svc_agent__step_fail(st, "the arguments of a tool call are longer than %d bytes", SVC_AGENT__MAX_ARGS);
	}
	return 0;
}

static int choice_delta(struct svc_agent__step *st, struct json_object *choice)
{
	struct json_object *delta, *v;
	const char *s;
	size_t i, n;
	int error;

	if (!json_object_is_type(choice, json_type_object))
		return svc_agent__step_fail(st, "the model provider sent a malformed choice");
	if (json_object_object_get_ex(choice, "delta", &delta) && json_object_is_type(delta, json_type_object)) {
		s = svc_agent__json_str(delta, "reasoning_content");
		if (!s)
			s = svc_agent__json_str(delta, "reasoning");
		if (s && (error = svc_agent__step_delta(st, 1, s, strlen(s))) < 0)
			return error;
		if (json_object_object_get_ex(delta, "content", &v) && json_object_is_type(v, json_type_string)) {
			error = svc_agent__step_delta(st, 0, json_object_get_string(v), (size_t)json_object_get_string_len(v));
			if (error < 0)
				return error;
		}
		if (json_object_object_get_ex(delta, "tool_calls", &v) && json_object_is_type(v, json_type_array)) {
			n = json_object_array_length(v);
			for (i = 0; i < n; i++) {
				if ((error = tool_call_delta(st, json_object_array_get_idx(v, i))) < 0)
					return error;
			}
		}
	}
	if (svc_agent__json_str(choice, "finish_reason"))
		st->finished = 1;
	return 0;
}

int svc_agent__openai_event(void *ctx, const char *event, const char *data, size_t len)
{
	struct svc_agent__step *st = ctx;
	struct json_object *chunk = NULL, *v, *u;
	int error = 0;

	if (len == 6 && memcmp(data, "[DONE]", 6) == 0) {
		st->done = 1;
		return 0;
	}
	if (svc_agent__json_parse(data, len, &chunk) < 0 || !json_object_is_type(chunk, json_type_object)) {
		error = svc_agent__step_fail(st, "the model provider sent a malformed stream chunk");
		goto done;
	}
	if (json_object_object_get_ex(chunk, "error", &v) && !json_object_is_type(v, json_type_null)) {
		error = stream_error(st, v);
		goto done;
	}
	/* only the first choice: the request asks for one (n = 1) */
	if (json_object_object_get_ex(chunk, "choices", &v) && json_object_is_type(v, json_type_array) &&
	    json_object_array_length(v) > 0) {
		if ((error = choice_delta(st, json_object_array_get_idx(v, 0))) < 0)
			goto done;
	}
	if (json_object_object_get_ex(chunk, "usage", &u) && json_object_is_type(u, json_type_object)) {
		if (json_object_object_get_ex(u, "prompt_tokens", &v) && json_object_is_type(v, json_type_int))
			st->input_tokens = json_object_get_int64(v);
		if (json_object_object_get_ex(u, "completion_tokens", &v) && json_object_is_type(v, json_type_int))
			st->output_tokens = json_object_get_int64(v);
	}
done:
	json_object_put(chunk);
	return error;
}

/*
 * A user message with images: content parts [{type: "text"}, {type:
 * "image_url", image_url: {url: "data:<type>;base64,<data>"}}...] (OpenAI
 * "Vision", also accepted by vLLM, llama.cpp and Ollama's OpenAI API).
 */
static int user_parts(struct json_object *o, const char *content, struct json_object *images)
{
	struct json_object *parts, *part, *iu;
	struct svc_buf url;
	size_t i, n = json_object_array_length(images);
	int error;

	if (!(parts = json_object_new_array()) || (error = svc_agent__json_add(o, "content", parts)) < 0)
		return SVC_E_INTERNAL;
	if (!(part = json_object_new_object()) || (error = svc_agent__json_append(parts, part)) < 0 ||
	    (error = svc_agent__json_add(part, "type", svc_agent__json_string("text"))) < 0 || (error = svc_agent__json_add(part, "text", svc_agent__json_string(content))) < 0)
		return SVC_E_INTERNAL;
	for (i = 0; i < n; i++) {
		struct json_object *img = json_object_array_get_idx(images, i);
		const char *type = svc_agent__json_str(img, "mediaType"), *data = svc_agent__json_str(img, "data");

		if (!type || !data)
			continue;
		svc_buf_init(&url, 16 * 1024 * 1024);
		if (svc_buf_adds(&url, "data:") < 0 || svc_buf_adds(&url, type) < 0 ||
		    svc_buf_adds(&url, ";base64,") < 0 || svc_buf_adds(&url, data) < 0) {
			svc_buf_dispose(&url);
			return SVC_E_INTERNAL;
		}
		error = SVC_E_INTERNAL;
		if ((part = json_object_new_object()) && svc_agent__json_append(parts, part) == 0 && svc_agent__json_add(part, "type", svc_agent__json_string("image_url")) == 0 &&
		    (iu = json_object_new_object()) && svc_agent__json_add(part, "image_url", iu) == 0 &&
		    svc_agent__json_add(iu, "url", json_object_new_string_len(url.data, (int)url.len)) == 0)
			error = 0;
		svc_buf_dispose(&url);
		if (error < 0)
			return error;
	}
	return 0;
}

/* One neutral message in Chat Completions form. */
static int message(struct json_object *msgs, struct json_object *m)
{
	struct json_object *o, *calls, *tc, *fn, *v;
	const char *role = svc_agent__json_str(m, "role");
	const char *content = svc_agent__json_str(m, "content");
	size_t i, n;
	int error;

	if (!role)
		return 0;
	if (!(o = json_object_new_object()))
		return SVC_E_INTERNAL;
	if ((error = svc_agent__json_append(msgs, o)) < 0)
		return error;
	if ((error = svc_agent__json_add(o, "role", svc_agent__json_string(role))) < 0)
		return error;
	if (strcmp(role, "tool") == 0) {
		if ((error = svc_agent__json_add(o, "tool_call_id", svc_agent__json_string(svc_agent__json_str(m, "tool_call_id")))) < 0)
			return error;
		return svc_agent__json_add(o, "content", svc_agent__json_string(content));
	}
	if (strcmp(role, "user") == 0 && json_object_object_get_ex(m, "images", &v) &&
	    json_object_is_type(v, json_type_array) && json_object_array_length(v) > 0)
		return user_parts(o, content, v);
	if (strcmp(role, "assistant") != 0 || !json_object_object_get_ex(m, "tool_calls", &v) ||
	    json_object_array_length(v) == 0)
		return svc_agent__json_add(o, "content", svc_agent__json_string(content));
	/* an assistant message that called tools */
	if (content && content[0])
		error = svc_agent__json_add(o, "content", svc_agent__json_string(content));
	else
		error = json_object_object_add(o, "content", NULL);
	if (error < 0)
		return SVC_E_INTERNAL;
	if (!(calls = json_object_new_array()) || (error = svc_agent__json_add(o, "tool_calls", calls)) < 0)
		return SVC_E_INTERNAL;
	n = json_object_array_length(v);
	for (i = 0; i < n; i++) {
		struct json_object *c = json_object_array_get_idx(v, i);

		if (!(tc = json_object_new_object()) || (error = svc_agent__json_append(calls, tc)) < 0)
			return SVC_E_INTERNAL;
		if ((error = svc_agent__json_add(tc, "id", svc_agent__json_string(svc_agent__json_str(c, "id")))) < 0 ||
		    (error = svc_agent__json_add(tc, "type", svc_agent__json_string("function"))) < 0)
			return error;
		if (!(fn = json_object_new_object()) || (error = svc_agent__json_add(tc, "function", fn)) < 0)
			return SVC_E_INTERNAL;
		if ((error = svc_agent__json_add(fn, "name", svc_agent__json_string(svc_agent__json_str(c, "name")))) < 0 ||
		    (error = svc_agent__json_add(fn, "arguments", svc_agent__json_string(svc_agent__json_str(c, "arguments")))) < 0)
			return error;
	}
	return 0;
}

int svc_agent__openai_body(const char *model, const char *system, struct json_object *conv,
			   struct json_object *tools, struct json_object **out)
{
	struct json_object *body, *msgs, *sys, *opts;
	size_t i, n;
	int error;

	if (!(body = json_object_new_object()))
		return SVC_E_INTERNAL;
	if ((error = svc_agent__json_add(body, "model", svc_agent__json_string(model))) < 0 ||
	    (error = svc_agent__json_add(body, "stream", json_object_new_boolean(1))) < 0)
		goto done;
	if (!(opts = json_object_new_object()) || (error = svc_agent__json_add(body, "stream_options", opts)) < 0 ||
	    (error = svc_agent__json_add(opts, "include_usage", json_object_new_boolean(1))) < 0) {
		error = SVC_E_INTERNAL;
		goto done;
	}
	if (!(msgs = json_object_new_array()) || (error = svc_agent__json_add(body, "messages", msgs)) < 0) {
		error = SVC_E_INTERNAL;
		goto done;
	}
	if (!(sys = json_object_new_object()) || (error = svc_agent__json_append(msgs, sys)) < 0 ||
	    (error = svc_agent__json_add(sys, "role", svc_agent__json_string("system"))) < 0 || (error = svc_agent__json_add(sys, "content", svc_agent__json_string(system))) < 0) {
		error = SVC_E_INTERNAL;
		goto done;
	}
	n = conv ? json_object_array_length(conv) : 0;
	for (i = 0; i < n; i++) {
		if ((error = message(msgs, json_object_array_get_idx(conv, i))) < 0)
			goto done;
	}
	if (tools && json_object_array_length(tools) > 0) {
		if ((error = svc_agent__json_add(body, "tools", json_object_get(tools))) < 0)
			goto done;
	}
	*out = body;
	body = NULL;
done:
	json_object_put(body);
	return error;
}
