/* agent.h: the AI agent loop: stream a model's answer, run its file tools in the project, repeat. */
#ifndef SVC_AGENT_H
#define SVC_AGENT_H

#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

/* Which model endpoint to call. Strings are borrowed for the duration of the call. */
struct svc_agent_provider {
	const char *protocol; /* "openai" (Chat Completions, the default when NULL/empty) or "anthropic" (Messages API) */
	const char *base_url; /* e.g. "https://api.openai.com/v1", "http://127.0.0.1:11434/v1"; NULL/empty = no provider */
	const char *api_key;  /* may be NULL or empty (Ollama, llama.cpp) */
	const char *model;    /* model name sent to the provider */
};

/*
 * Called for every event of the turn, in order: "assistant.message_delta"
 * {delta}, "assistant.reasoning_delta" {delta}, "tool.call" {id, tool, args},
 * "tool.result" {id, result}, "tool.error" {id, error},
 * "assistant.message" {text}, "session.usage_info" {inputTokens,
 * outputTokens, cost}. `payload` is borrowed (do not put it); it carries only
 * the payload fields, the callee adds "type". Return 0 to go on, or a
 * negative svc_err (SVC_E_CLIENT_GONE, SVC_E_CANCELLED) to end the turn at once.
 */
typedef int (*svc_agent_emit_fn)(void *ctx, const char *type, struct json_object *payload);

/*
 * Called about once a second while waiting for the provider (from libcurl's
 * progress callback) and between tool calls. The callee may send an SSE
 * keep-alive comment and check that its client is still there. Return 0 to
 * go on, or a negative svc_err to cancel the provider call at once.
 */
typedef int (*svc_agent_tick_fn)(void *ctx);

/* One agent turn. All pointers borrowed for the duration of svc_agent_run(). */
struct svc_agent_turn {
	struct svc_agent_provider provider;
	const char *project_dir;       /* absolute path of the project's files; tools are confined to it */
	const char *mode;              /* "build" (all file tools) or anything else (read-only tools) */
	struct json_object *history;   /* array of {role: "user"|"assistant", content: string}, oldest first; may be NULL */
	const char *user_text;         /* the new user message */
	svc_agent_emit_fn emit;
	svc_agent_tick_fn tick;        /* may be NULL */
	void *ctx;                     /* passed to emit and tick */
	unsigned max_steps;            /* model calls per turn; 0 = default 25 */
	long timeout_secs;             /* whole-turn limit per provider call; 0 = default 600 */
};

/* What a finished turn produced. */
struct svc_agent_result {
	int files_changed;        /* 1 when a write, edit or delete tool succeeded */
	int64_t input_tokens;     /* summed over the model calls, as reported by the provider */
	int64_t output_tokens;
	char message[512];        /* for an error return: a message for a person */
};

/*
 * Runs one turn: sends system prompt + history + user_text with the tool
 * definitions (list_files{}, read_file{path}, write_file{path, content},
 * edit_file{path, old_string, new_string}, delete_file{path},
 * search_files{pattern}; read-only modes get list_files, read_file,
 * search_files only and a write tool asked for anyway gets tool.error
 * "denied"), streams the answer with libcurl, emits deltas as they arrive,
 * runs the tool calls inside project_dir through lib/fsx (a refused path or a
 * failed tool becomes tool.error and the loop goes on), feeds the results
 * back, and repeats until the model answers without tool calls. Then emits
 * assistant.message and session.usage_info.
 *
 * Returns 0, SVC_E_NO_PROVIDER (no base_url), SVC_E_MODEL_UNAVAILABLE
 * (HTTP 429/5xx/other non-2xx, connection failure, malformed stream),
 * or the negative value an emit/tick callback returned. out->message says
 * why on error. `out` is filled on every return.
 */
int svc_agent_run(const struct svc_agent_turn *turn, struct svc_agent_result *out);

#endif
