/* agent_step.c: what the stream parsers of both protocols share: one model answer and its deltas. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "agent/agent.h"
#include "core/err.h"

void svc_agent__step_init(struct svc_agent__step *st, svc_agent_emit_fn emit, void *ctx)
{
	size_t i;

	memset(st, 0, sizeof(*st));
	st->emit = emit;
	st->ctx = ctx;
	svc_buf_init(&st->text, SVC_AGENT__MAX_TEXT);
	svc_buf_init(&st->shown, SVC_AGENT__MAX_TEXT);
	for (i = 0; i < SVC_AGENT__MAX_CALLS; i++)
		svc_buf_init(&st->calls[i].args, SVC_AGENT__MAX_ARGS);
}

void svc_agent__step_dispose(struct svc_agent__step *st)
{
	size_t i;

	svc_buf_dispose(&st->text);
	svc_buf_dispose(&st->shown);
	for (i = 0; i < SVC_AGENT__MAX_CALLS; i++)
		svc_buf_dispose(&st->calls[i].args);
}

int svc_agent__step_fail(struct svc_agent__step *st, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (vsnprintf(st->error, sizeof(st->error), fmt, ap) < 0)
		st->error[0] = '\0';
	va_end(ap);
	return SVC_E_MODEL_UNAVAILABLE;
}

static int emit_delta(struct svc_agent__step *st, const char *type, const char *delta, size_t len)
{
	struct json_object *payload, *str;
	int r;

	if (!st->emit)
		return 0;
	payload = json_object_new_object();
	str = json_object_new_string_len(delta, (int)len);
	if (!payload || !str || json_object_object_add(payload, "delta", str) < 0) {
		json_object_put(payload);
		return SVC_E_INTERNAL;
	}
	r = st->emit(st->ctx, type, payload);
	json_object_put(payload);
	if (r < 0) {
		st->emit_err = r;
		return r;
	}
	return 0;
}

/* The text protocol's delta: kept raw in st->text; what may be shown of it emitted and kept in st->shown. */
static int text_delta(struct svc_agent__step *st, const char *delta, size_t len, int final)
{
	const char *span;
	size_t n;
	int error;

	if (len && svc_buf_add(&st->text, delta, len) < 0)
		return svc_agent__step_fail(st, "the model's answer is longer than %d bytes", SVC_AGENT__MAX_TEXT);
	for (;;) {
		svc_agent__text_shown(st, final, &span, &n);
		if (!n)
			return 0;
		if (st->shown.len == 0 && st->text_prefix && st->text_prefix[0] &&
		    (error = emit_delta(st, "assistant.message_delta", st->text_prefix, strlen(st->text_prefix))) < 0)
			return error;
		if (svc_buf_add(&st->shown, span, n) < 0)
			return svc_agent__step_fail(st, "the model's answer is longer than %d bytes", SVC_AGENT__MAX_TEXT);
		if ((error = emit_delta(st, "assistant.message_delta", span, n)) < 0)
			return error;
	}
}

int svc_agent__step_delta(struct svc_agent__step *st, int kind, const char *delta, size_t len)
{
	int error;

	if (len == 0)
		return 0;
	if (len > INT32_MAX)
		return svc_agent__step_fail(st, "a delta from the model provider is too long");
	if (kind == 1)
		return emit_delta(st, "assistant.reasoning_delta", delta, len);
	if (st->text_mode)
		return text_delta(st, delta, len, 0);
	if (st->text.len == 0 && st->text_prefix && st->text_prefix[0]) {
		if ((error = emit_delta(st, "assistant.message_delta", st->text_prefix, strlen(st->text_prefix))) < 0)
			return error;
	}
	if ((error = svc_buf_add(&st->text, delta, len)) < 0)
		return svc_agent__step_fail(st, "the model's answer is longer than %d bytes", SVC_AGENT__MAX_TEXT);
	return emit_delta(st, "assistant.message_delta", delta, len);
}

struct svc_agent__call *svc_agent__step_call(struct svc_agent__step *st, long index, const char *id, const char *name)
{
	struct svc_agent__call *c = NULL;
	size_t i;

	for (i = 0; i < st->ncalls; i++) {
		if (st->calls[i].index == index) {
			c = &st->calls[i];
			break;
		}
	}
	if (!c) {
		if (st->ncalls == SVC_AGENT__MAX_CALLS) {
			svc_agent__step_fail(st, "the model asked for more than %d tool calls at once", SVC_AGENT__MAX_CALLS);
			return NULL;
		}
		c = &st->calls[st->ncalls++];
		c->index = index;
		c->id[0] = '\0';
		c->name[0] = '\0';
	}
	if (id && id[0] && !c->id[0]) {
		if (strlen(id) >= sizeof(c->id)) {
			svc_agent__step_fail(st, "a tool call id from the model provider is too long");
			return NULL;
		}
		memcpy(c->id, id, strlen(id) + 1);
	}
	if (name && name[0] && !c->name[0]) {
		if (strlen(name) >= sizeof(c->name)) {
			svc_agent__step_fail(st, "a tool name from the model is too long");
			return NULL;
		}
		memcpy(c->name, name, strlen(name) + 1);
	}
	return c;
}

int svc_agent__step_end(struct svc_agent__step *st)
{
	size_t i;

	if (!st->done && !st->finished)
		return svc_agent__step_fail(st, "the model provider's stream ended before the answer was complete");
	if (st->text_mode) {
		int error;

		/* what was held back is shown now; the markup becomes the step's calls */
		if ((error = text_delta(st, "", 0, 1)) < 0 || (error = svc_agent__text_calls(st)) < 0)
			return error;
	}
	for (i = 0; i < st->ncalls; i++) {
		if (!st->calls[i].name[0])
			return svc_agent__step_fail(st, "the model provider sent a tool call without a name");
		if (!st->calls[i].id[0])
			/* some OpenAI-compatible servers omit ids; make one so results can refer to it */
			snprintf(st->calls[i].id, sizeof(st->calls[i].id), "call_%zu", i);
	}
	return 0;
}

int svc_agent__json_parse(const char *text, size_t len, struct json_object **out)
{
	struct json_tokener *tok;
	struct json_object *obj;
	size_t used;

	if (len > INT32_MAX)
		return SVC_E_INVALID_JSON;
	tok = json_tokener_new_ex(64);
	if (!tok)
		return SVC_E_INTERNAL;
	obj = json_tokener_parse_ex(tok, text, (int)len);
	if (!obj || json_tokener_get_error(tok) != json_tokener_success) {
		json_object_put(obj);
		json_tokener_free(tok);
		return SVC_E_INVALID_JSON;
	}
	used = json_tokener_get_parse_end(tok);
	json_tokener_free(tok);
	while (used < len && (text[used] == ' ' || text[used] == '\t' || text[used] == '\n' || text[used] == '\r'))
		used++;
	if (used != len) {
		json_object_put(obj);
		return SVC_E_INVALID_JSON;
	}
	*out = obj;
	return 0;
}

int svc_agent__json_add(struct json_object *obj, const char *key, struct json_object *val)
{
	if (!val)
		return SVC_E_INTERNAL;
	if (json_object_object_add(obj, key, val) < 0) {
		json_object_put(val);
		return SVC_E_INTERNAL;
	}
	return 0;
}

int svc_agent__json_append(struct json_object *arr, struct json_object *val)
{
	if (!val)
		return SVC_E_INTERNAL;
	if (json_object_array_add(arr, val) < 0) {
		json_object_put(val);
		return SVC_E_INTERNAL;
	}
	return 0;
}

struct json_object *svc_agent__json_string(const char *s)
{
	return json_object_new_string(s ? s : "");
}

const char *svc_agent__json_str(struct json_object *obj, const char *key)
{
	struct json_object *v;

	if (!json_object_object_get_ex(obj, key, &v) || !json_object_is_type(v, json_type_string))
		return NULL;
	return json_object_get_string(v);
}

int svc_agent__parse_args(const char *text, size_t len, struct json_object **out)
{
	struct json_object *obj;
	size_t i;
	int error;

	for (i = 0; i < len; i++) {
		if (text[i] != ' ' && text[i] != '\t' && text[i] != '\n' && text[i] != '\r')
			break;
	}
	if (i == len) {
		obj = json_object_new_object();
		if (!obj)
			return SVC_E_INTERNAL;
		*out = obj;
		return 0;
	}
	if ((error = svc_agent__json_parse(text, len, &obj)) < 0)
		return error;
	if (!json_object_is_type(obj, json_type_object)) {
		json_object_put(obj);
		return SVC_E_INVALID_JSON;
	}
	*out = obj;
	return 0;
}
