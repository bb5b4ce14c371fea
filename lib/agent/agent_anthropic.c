/* agent_anthropic.c: the Anthropic Messages protocol: request body and streamed event parser. */
#include <string.h>

#include "agent/agent.h"
#include "core/err.h"

#define ANTHROPIC_MAX_TOKENS 8192

static int64_t get_int(struct json_object *obj, const char *key, int64_t dflt)
{
	struct json_object *v;

	if (json_object_object_get_ex(obj, key, &v) && json_object_is_type(v, json_type_int))
		return json_object_get_int64(v);
	return dflt;
}

static int usage(struct svc_agent__step *st, struct json_object *parent)
{
	struct json_object *u;

	if (!json_object_object_get_ex(parent, "usage", &u) || !json_object_is_type(u, json_type_object))
		return 0;
	st->input_tokens = get_int(u, "input_tokens", st->input_tokens);
	st->output_tokens = get_int(u, "output_tokens", st->output_tokens);
	return 0;
}

static int block_start(struct svc_agent__step *st, struct json_object *ev)
{
	struct json_object *block, *input;
	struct svc_agent__call *c;
	const char *type;
	const char *text;
	long index = (long)get_int(ev, "index", -1);

	if (!json_object_object_get_ex(ev, "content_block", &block) || !json_object_is_type(block, json_type_object))
		return svc_agent__step_fail(st, "the model provider sent a content block without content");
	type = svc_agent__json_str(block, "type");
	if (!type)
		return svc_agent__step_fail(st, "the model provider sent a content block without a type");
	if (strcmp(type, "text") == 0) {
		text = svc_agent__json_str(block, "text");
		return text ? svc_agent__step_delta(st, 0, text, strlen(text)) : 0;
	}
	if (strcmp(type, "thinking") == 0) {
		text = svc_agent__json_str(block, "thinking");
		return text ? svc_agent__step_delta(st, 1, text, strlen(text)) : 0;
	}
	if (strcmp(type, "tool_use") != 0)
		return 0; /* redacted_thinking, server tools: nothing to show */
	c = svc_agent__step_call(st, index, svc_agent__json_str(block, "id"), svc_agent__json_str(block, "name"));
	if (!c)
		return SVC_E_MODEL_UNAVAILABLE;
	/* the input usually starts as {} and arrives as input_json_delta; keep a non-empty one given here */
	if (json_object_object_get_ex(block, "input", &input) && json_object_is_type(input, json_type_object) &&
	    json_object_object_length(input) > 0) {
		if (svc_buf_adds(&c->args, json_object_to_json_string_ext(input, JSON_C_TO_STRING_PLAIN)) < 0)
			return svc_agent__step_fail(st, "the arguments of a tool call are too long");
	}
	return 0;
}

static int block_delta(struct svc_agent__step *st, struct json_object *ev)
{
	struct json_object *delta;
	struct svc_agent__call *c;
	const char *type, *s;
	long index = (long)get_int(ev, "index", -1);
	size_t i;

	if (!json_object_object_get_ex(ev, "delta", &delta) || !json_object_is_type(delta, json_type_object))
		return svc_agent__step_fail(st, "the model provider sent a content delta without a delta");
	type = svc_agent__json_str(delta, "type");
	if (!type)
		return svc_agent__step_fail(st, "the model provider sent a content delta without a type");
	if (strcmp(type, "text_delta") == 0) {
		s = svc_agent__json_str(delta, "text");
		return s ? svc_agent__step_delta(st, 0, s, strlen(s)) : 0;
	}
	if (strcmp(type, "thinking_delta") == 0) {
		s = svc_agent__json_str(delta, "thinking");
		return s ? svc_agent__step_delta(st, 1, s, strlen(s)) : 0;
	}
	if (strcmp(type, "input_json_delta") != 0)
		return 0; /* signature_delta, citations_delta */
	s = svc_agent__json_str(delta, "partial_json");
	c = NULL;
	for (i = 0; i < st->ncalls; i++) {
		if (st->calls[i].index == index)
			c = &st->calls[i];
	}
	if (!c)
		return svc_agent__step_fail(st, "the model provider sent tool input for an unknown content block");
	if (s && s[0] && svc_buf_adds(&c->args, s) < 0)
		return svc_agent__step_fail(st, "the arguments of a tool call are longer than %d bytes", SVC_AGENT__MAX_ARGS);
	return 0;
}

int svc_agent__anthropic_event(void *ctx, const char *event, const char *data, size_t len)
{
	struct svc_agent__step *st = ctx;
	struct json_object *ev = NULL, *v;
	const char *type, *msg;
	int error = 0;

	if (svc_agent__json_parse(data, len, &ev) < 0 || !json_object_is_type(ev, json_type_object)) {
		error = svc_agent__step_fail(st, "the model provider sent a malformed stream event");
		goto done;
	}
	type = svc_agent__json_str(ev, "type");
	if (!type)
		type = event;
	if (strcmp(type, "message_start") == 0) {
		if (json_object_object_get_ex(ev, "message", &v) && json_object_is_type(v, json_type_object))
			error = usage(st, v);
	} else if (strcmp(type, "content_block_start") == 0) {
		error = block_start(st, ev);
	} else if (strcmp(type, "content_block_delta") == 0) {
		error = block_delta(st, ev);
	} else if (strcmp(type, "message_delta") == 0) {
		if (json_object_object_get_ex(ev, "delta", &v) && svc_agent__json_str(v, "stop_reason"))
			st->finished = 1;
		error = usage(st, ev);
	} else if (strcmp(type, "message_stop") == 0) {
		st->done = 1;
	} else if (strcmp(type, "error") == 0) {
		msg = NULL;
		if (json_object_object_get_ex(ev, "error", &v) && json_object_is_type(v, json_type_object))
			msg = svc_agent__json_str(v, "message");
		error = svc_agent__step_fail(st, "the model provider reported an error: %.200s", msg ? msg : "(no message)");
	}
	/* ping, content_block_stop and event types added later are ignored */
done:
	json_object_put(ev);
	return error;
}

/*
 * Returns the content array of the message to add blocks for `role` to: the
 * last one when it has the same role (Messages wants user and assistant to
 * alternate, and all tool results of a turn in one user message), else a new one.
 */
static struct json_object *blocks_for(struct json_object *msgs, const char *role)
{
	struct json_object *last, *m, *content;
	size_t n = json_object_array_length(msgs);
	const char *r;

	if (n > 0) {
		last = json_object_array_get_idx(msgs, n - 1);
		r = svc_agent__json_str(last, "role");
		if (r && strcmp(r, role) == 0 && json_object_object_get_ex(last, "content", &content))
			return content;
	}
	if (!(m = json_object_new_object()) || svc_agent__json_append(msgs, m) < 0)
		return NULL;
	if (svc_agent__json_add(m, "role", svc_agent__json_string(role)) < 0)
		return NULL;
	if (!(content = json_object_new_array()) || svc_agent__json_add(m, "content", content) < 0)
		return NULL;
	return content;
}

static int text_block(struct json_object *blocks, const char *text)
{
	struct json_object *b;

	if (!text || !text[0])
		return 0; /* the API refuses empty text blocks */
	if (!(b = json_object_new_object()) || svc_agent__json_append(blocks, b) < 0)
		return SVC_E_INTERNAL;
	if (svc_agent__json_add(b, "type", svc_agent__json_string("text")) < 0 || svc_agent__json_add(b, "text", svc_agent__json_string(text)) < 0)
		return SVC_E_INTERNAL;
	return 0;
}

static int message(struct json_object *msgs, struct json_object *m)
{
	struct json_object *blocks, *b, *calls, *input;
	const char *role = svc_agent__json_str(m, "role");
	const char *content = svc_agent__json_str(m, "content"), *args;
	struct json_object *is_error;
	size_t i, n;

	if (!role)
		return 0;
	if (json_object_array_length(msgs) == 0 && strcmp(role, "user") != 0)
		return 0; /* the first message must be the user's */
	if (strcmp(role, "tool") == 0) {
		if (!(blocks = blocks_for(msgs, "user")) || !(b = json_object_new_object()) || svc_agent__json_append(blocks, b) < 0)
			return SVC_E_INTERNAL;
		if (svc_agent__json_add(b, "type", svc_agent__json_string("tool_result")) < 0 ||
		    svc_agent__json_add(b, "tool_use_id", svc_agent__json_string(svc_agent__json_str(m, "tool_call_id"))) < 0 ||
		    svc_agent__json_add(b, "content", svc_agent__json_string(content)) < 0)
			return SVC_E_INTERNAL;
		if (json_object_object_get_ex(m, "is_error", &is_error) && json_object_get_boolean(is_error) &&
		    svc_agent__json_add(b, "is_error", json_object_new_boolean(1)) < 0)
			return SVC_E_INTERNAL;
		return 0;
	}
	if (!json_object_object_get_ex(m, "tool_calls", &calls) || !json_object_is_type(calls, json_type_array))
		calls = NULL;
	if ((!content || !content[0]) && (!calls || json_object_array_length(calls) == 0))
		return 0; /* nothing to say: a message without blocks would break the alternation */
	if (strcmp(role, "assistant") != 0) {
		struct json_object *images;

		if (!(blocks = blocks_for(msgs, "user")))
			return SVC_E_INTERNAL;
		if (json_object_object_get_ex(m, "images", &images) && json_object_is_type(images, json_type_array)) {
			/* image blocks first, then the text: Messages API "Vision" */
			n = json_object_array_length(images);
			for (i = 0; i < n; i++) {
				struct json_object *img = json_object_array_get_idx(images, i), *src;
				const char *type = svc_agent__json_str(img, "mediaType"), *data = svc_agent__json_str(img, "data");

				if (!type || !data)
					continue;
				if (!(b = json_object_new_object()) || svc_agent__json_append(blocks, b) < 0 || svc_agent__json_add(b, "type", svc_agent__json_string("image")) < 0 ||
				    !(src = json_object_new_object()) || svc_agent__json_add(b, "source", src) < 0 ||
				    svc_agent__json_add(src, "type", svc_agent__json_string("base64")) < 0 || svc_agent__json_add(src, "media_type", svc_agent__json_string(type)) < 0 ||
				    svc_agent__json_add(src, "data", svc_agent__json_string(data)) < 0)
					return SVC_E_INTERNAL;
			}
		}
		return text_block(blocks, content);
	}
	if (!(blocks = blocks_for(msgs, "assistant")) || text_block(blocks, content) < 0)
		return SVC_E_INTERNAL;
	if (!calls)
		return 0;
	n = json_object_array_length(calls);
	for (i = 0; i < n; i++) {
		struct json_object *c = json_object_array_get_idx(calls, i);

		if (!(b = json_object_new_object()) || svc_agent__json_append(blocks, b) < 0)
			return SVC_E_INTERNAL;
		if (svc_agent__json_add(b, "type", svc_agent__json_string("tool_use")) < 0 || svc_agent__json_add(b, "id", svc_agent__json_string(svc_agent__json_str(c, "id"))) < 0 ||
		    svc_agent__json_add(b, "name", svc_agent__json_string(svc_agent__json_str(c, "name"))) < 0)
			return SVC_E_INTERNAL;
		args = svc_agent__json_str(c, "arguments");
		input = NULL;
		if (!args || svc_agent__parse_args(args, strlen(args), &input) < 0)
			input = json_object_new_object();
		if (svc_agent__json_add(b, "input", input) < 0)
			return SVC_E_INTERNAL;
	}
	return 0;
}

int svc_agent__anthropic_body(const char *model, const char *system, struct json_object *conv,
			      struct json_object *tools, struct json_object **out)
{
	struct json_object *body, *msgs, *m, *content;
	size_t i, n;
	int error;

	if (!(body = json_object_new_object()))
		return SVC_E_INTERNAL;
	if ((error = svc_agent__json_add(body, "model", svc_agent__json_string(model))) < 0 ||
	    (error = svc_agent__json_add(body, "max_tokens", json_object_new_int(ANTHROPIC_MAX_TOKENS))) < 0 ||
	    (error = svc_agent__json_add(body, "stream", json_object_new_boolean(1))) < 0 ||
	    (error = svc_agent__json_add(body, "system", svc_agent__json_string(system))) < 0)
		goto done;
	if (!(msgs = json_object_new_array()) || (error = svc_agent__json_add(body, "messages", msgs)) < 0) {
		error = SVC_E_INTERNAL;
		goto done;
	}
	n = conv ? json_object_array_length(conv) : 0;
	for (i = 0; i < n; i++) {
		if ((error = message(msgs, json_object_array_get_idx(conv, i))) < 0)
			goto done;
	}
	/* a message left without blocks (only empty text) is dropped */
	for (i = json_object_array_length(msgs); i > 0; i--) {
		m = json_object_array_get_idx(msgs, i - 1);
		if (json_object_object_get_ex(m, "content", &content) && json_object_array_length(content) == 0)
			json_object_array_del_idx(msgs, i - 1, 1);
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
