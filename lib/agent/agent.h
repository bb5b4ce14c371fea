/* agent.h: the AI agent loop: stream a model's answer, run its file tools in the project, repeat. */
#ifndef SVC_AGENT_H
#define SVC_AGENT_H

#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include "core/outbound.h"
#include "core/util.h"

/* Which model endpoint to call. Strings are borrowed for the duration of the call. */
struct svc_agent_provider {
	const char *protocol; /* "openai" (Chat Completions, the default when NULL/empty) or "anthropic" (Messages API) */
	const char *base_url; /* e.g. "https://api.openai.com/v1", "http://127.0.0.1:11434/v1"; NULL/empty = no provider */
	const char *api_key;  /* may be NULL or empty (Ollama, llama.cpp) */
	const char *model;    /* model name sent to the provider */
	double price_input_per_mtok;  /* USD per million input tokens; 0 = unknown */
	double price_output_per_mtok; /* USD per million output tokens; 0 = unknown */
	int text_tools;               /* 1: the model has no tool calls: tools are taught as markup in the system
				       * prompt and parsed from its text (toolMode "text"); 0: native tool calls */
	const struct svc_outbound_policy *outbound; /* NULL: trusted (the instance's svc.conf provider); else every
						     * address connected to must be allowed by it (a workspace's
						     * own base URL, lib/core/outbound.h) */
};

/*
 * The message of the model_unavailable error when a provider's address is not
 * allowed by its `outbound` policy (fixed: the address itself is only logged).
 */
#define SVC_AGENT_REFUSED_ADDRESS \
	"The model provider's address is not allowed: a workspace's provider may not reach loopback, link-local, " \
	"private or other internal addresses on this instance."

/*
 * Called for every event of the turn, in order: "assistant.message_delta"
 * {delta}, "assistant.reasoning_delta" {delta}, "tool.call" {id, tool, args},
 * "tool.result" {id, result}, "tool.error" {id, error},
 * "assistant.message" {text}, "session.usage_info" {inputTokens,
 * outputTokens, cost}. `cost` is in USD, computed from the provider's
 * price_*_per_mtok (0 when they are unknown). `payload` is borrowed (do not put it); it carries only
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

/*
 * Called after every provider call of a turn with the tokens it reported
 * (either may be 0), before the tools it asked for run: the callee records
 * the spend and holds it against the turn's caps (lib/agent/budget.h). Return
 * 0 to go on, 1 to end the turn before its next provider call (the callee
 * has emitted why: session.budget_stopped), or a negative svc_err to end it
 * at once as that error.
 */
typedef int (*svc_agent_spend_fn)(void *ctx, int64_t input_tokens, int64_t output_tokens);

/*
 * What the integration_request tool needs (lib/agent/agent_integration.c): the database, the
 * settings, and who calls from where (credentials are resolved for the user in the workspace; calls
 * are recorded with the project). Borrowed for the turn.
 */
struct svc_agent_integ {
	struct svc_db *db;
	const struct svc_config *cfg;
	const char *user_id, *project_id, *workspace_id;
};

/* One agent turn. All pointers borrowed for the duration of svc_agent_run(). */
struct svc_agent_turn {
	struct svc_agent_provider provider;
	const char *project_dir;       /* absolute path of the project's files; tools are confined to it */
	uint64_t repo_quota_bytes;     /* bytes the project directory may hold (SVC_QUOTA_REPO_BYTES of the
					* workspace, lib/project/quota.h); a write or edit past it is a tool
					* error the model sees; 0 = no limit */
	const char *mode;              /* "build" (all file tools) or anything else (read-only tools); "plan" also
					* asks for the plan as a fenced JSON block (svc_agent_plan_parse()) */
	int all_tools;                 /* 1: every file tool whatever `mode` says (a custom mode configured as
					* build, svc_agent_mode_lookup()); 0: as `mode` says */
	const char *prompt_extra;      /* appended to the system prompt (a custom mode's addition); may be NULL;
					* at most SVC_AGENT_PROMPT_EXTRA_MAX bytes are used */
	struct json_object *history;   /* the conversation so far, oldest first, may be NULL: an array of
					* {role "user", content, images?} (images as `images` below),
					* {role "assistant", content, tool_calls? [{id, name, arguments (JSON text)}]},
					* {role "tool", tool_call_id, name, content, is_error}; every call must be
					* answered by a tool entry before the next user or text-only entry
					* (providers refuse it otherwise); invalid entries are skipped */
	const char *user_text;         /* the new user message */
	struct json_object *images;    /* images of the new user message: array of {mediaType, data (base64)}
					* as svc_agent_attachments_check() returns them; may be NULL */
	long retry_max_secs;           /* a 429 with Retry-After up to this is waited for and retried (3 calls in
					* all); 0 = default 10 s, negative = never retry */
	svc_agent_emit_fn emit;
	svc_agent_tick_fn tick;        /* may be NULL */
	void *ctx;                     /* passed to emit and tick */
	unsigned max_steps;            /* model calls per turn; 0 = default 25 */
	long timeout_secs;             /* whole-turn limit per provider call; 0 = default 600 */
	long idle_secs;                /* a provider call that receives no byte for this long (before or during
					* its answer) fails with model_unavailable; 0 = default 120 */
	const struct svc_agent_integ *integ; /* the integration_request tool, offered in build mode only; NULL: never */
	/* issue 29: spending caps, the loop breaker, instructions (docs/agent.md) */
	svc_agent_spend_fn spend;      /* may be NULL */
	unsigned idle_steps;           /* build mode (all tools): model calls in a row without a file change
					* after which the turn stops (session.loop_stopped); 0 = never */
	const char *ws_instructions;   /* the workspace's instructions to the agent; may be NULL */
	const char *project_instructions; /* the project's AGENTS.md, as read; may be NULL */
	const char *project_instructions_note; /* why AGENTS.md is missing from the prompt (too large to read); may be NULL */
	size_t instructions_max;       /* bytes of each of the two put into the system prompt; 0 = 16 KiB */
	int element;                   /* the user message points at an element of the page (user_text says which) */
};

/* What a finished turn produced. */
struct svc_agent_result {
	int files_changed;        /* 1 when a write, edit or delete tool succeeded */
	int64_t input_tokens;     /* summed over the model calls, as reported by the provider */
	int64_t output_tokens;
	char message[512];        /* for an error return: a message for a person */
	char stopped[16];         /* "loop" (the loop breaker) or "budget" (spend callback) when the turn ended
				   * early on its own, else "" */
};

/*
 * Runs one turn: sends system prompt + history + user_text with the tool
 * definitions (list_files{}, read_file{path}, write_file{path, content},
 * edit_file{path, old_string, new_string}, delete_file{path},
 * search_files{pattern}; read-only modes get list_files, read_file,
 * search_files only and a write tool asked for anyway gets tool.error
 * "denied"), streams the answer with libcurl, emits deltas as they arrive,
 * runs the tool calls inside project_dir through lib/core/fsx (a refused path or a
 * failed tool becomes tool.error and the loop goes on), feeds the results
 * back, and repeats until the model answers without tool calls. Then emits
 * assistant.message and session.usage_info.
 *
 * Returns 0, SVC_E_NO_PROVIDER (no base_url, or one that is not http(s),
 * or an unknown protocol), SVC_E_MODEL_UNAVAILABLE (HTTP 429/5xx/other
 * non-2xx, connection failure, timeout, malformed stream), SVC_E_VALIDATION
 * (no project_dir or user_text), SVC_E_INTERNAL (out of memory), or the
 * negative value an emit/tick callback returned. out->message says why on
 * error (never containing the API key). `out` is filled on every return;
 * files_changed tells whether files changed before an error too.
 * Limits, protocols and provider set-up: docs/agent.md.
 */
int svc_agent_run(const struct svc_agent_turn *turn, struct svc_agent_result *out);

/*
 * Compaction: asks the model (turn->provider, no tools, nothing emitted) to
 * summarise turn->history; user_text, mode and images are not used; tick is.
 * Tool calls and results of the history reach the model as assistant text
 * ("[called read_file {...}]", "[result of read_file] ..."; arguments cut at
 * 1000 bytes, results at 2000), images not at all.
 * On success *out_text is the summary (malloc'd, NUL-terminated, at most
 * 1 MiB; the caller frees it) and out holds the call's token counts.
 * Returns 0, or the errors of svc_agent_run(); SVC_E_MODEL_UNAVAILABLE also
 * for an empty summary.
 */
int svc_agent_summarize(const struct svc_agent_turn *turn, char **out_text, struct svc_agent_result *out);

/*
 * A structured plan (spec "Structured plan") from the final message of a
 * plan turn: {steps: [{title, description, files[], risk}], rawText}. It
 * finds the JSON in a ```json fence (or any ``` fence), else the first
 * balanced {...} or [...] that parses, in prose or not; `steps` may be the
 * object's "steps" array or the array itself. A step is kept when it is an
 * object with a non-empty string title; a non-string description becomes "",
 * non-string files are dropped, a risk other than low/medium/high becomes
 * "medium". When the JSON does not parse as a whole, each balanced {...}
 * inside it that parses and has a title is taken as a step. rawText is
 * always `text`. *out is a new object the caller puts. Returns 0 or
 * SVC_E_INTERNAL (out of memory).
 */
int svc_agent_plan_parse(const char *text, struct json_object **out);

/*
 * Renders a plan (as svc_agent_plan_parse() builds it) as the user message
 * that runs it: a numbered list with descriptions, files and risks. Returns
 * 0 with *out malloc'd (the caller frees it), SVC_E_NOT_FOUND when the plan
 * has no steps and no rawText, SVC_E_TOO_LARGE over `max` bytes, or SVC_E_INTERNAL.
 */
int svc_agent_plan_message(struct json_object *plan, size_t max, char **out);

#define SVC_AGENT_MODE_NAME_MAX 32             /* bytes of a mode name (a-z, 0-9, '-', '_') */
#define SVC_AGENT_PROMPT_EXTRA_MAX (16 * 1024)  /* bytes of a custom mode's system-prompt addition */

/* What a chat mode means for a turn. */
struct svc_agent_mode {
	char name[SVC_AGENT_MODE_NAME_MAX + 1];
	int build;               /* 1: every file tool; 0: the read-only subset */
	int custom;              /* 1: the mode is defined by the table */
	char prompt_file[1024];  /* absolute path of its system-prompt addition; "" = none */
};

/*
 * Looks up chat mode `mode` (docs/agent.md "Custom modes"). `table` is the
 * SVC_AI_MODES setting: entries "name=read" or "name=build", each with an
 * optional ":/absolute/prompt/file", separated by ';' (spaces around entries
 * ignored), e.g. "review=read:/etc/svc/review.txt;scaffold=build". The
 * built-in modes cannot be redefined: "build" has every tool, "plan" and
 * "chat" the read-only subset. A mode that is neither built in nor in the
 * table behaves as chat (read-only, no addition; custom = 0). Fills *out on
 * success. Returns 0, or SVC_E_VALIDATION when any entry of the table is
 * malformed (a message naming it in `msg`, `msgmax` bytes; *out untouched).
 */
int svc_agent_mode_lookup(const char *table, const char *mode, struct svc_agent_mode *out, char *msg, size_t msgmax);

#define SVC_AGENT_IMAGE_MAX (5 * 1024 * 1024) /* decoded bytes of one image attachment */

/*
 * Checks the attachments of a chat message (spec "Chat and plan endpoints"):
 * `attachments` is NULL or an array of {type: "image", url:
 * "data:image/(png|jpeg|webp|gif);base64,<data>"}. Each data URL is decoded
 * (strict base64) and must hold at most SVC_AGENT_IMAGE_MAX bytes whose
 * signature matches its type. On success *out is a new array of
 * {mediaType, data} (data: the base64 text) for svc_agent_turn.images.
 * Returns 0, SVC_E_VALIDATION (not an array of such objects, another type,
 * not a data URL, another media type, not base64, bytes that are not that
 * image type), SVC_E_TOO_LARGE (an image over the limit) or SVC_E_INTERNAL,
 * with a message for a person in `msg` (`msgmax` bytes).
 */
int svc_agent_attachments_check(struct json_object *attachments, struct json_object **out, char *msg, size_t msgmax);

#define SVC_AGENT_ELEMENT_HTML_MAX 4096   /* bytes of an element attachment's outerHTML */
#define SVC_AGENT_ELEMENT_FIELD_MAX 4096  /* bytes of its selector, text and pagePath each */

/*
 * Element attachments (issue 29 "Point at an element"): svc_agent_attachments_check() also takes
 * {type: "element", selector, html?, text?, pagePath, image?} (selector and pagePath required,
 * pagePath beginning with "/", html at most SVC_AGENT_ELEMENT_HTML_MAX bytes, the others at most
 * SVC_AGENT_ELEMENT_FIELD_MAX; image a data URL checked as an image attachment's, which joins
 * *out). This function writes what the model is told of them into *out (malloc'd; NULL when
 * there is none): for each, the page, the selector, its text and its HTML, to follow the user's
 * text. `attachments` must have passed svc_agent_attachments_check(). Returns 0 or SVC_E_INTERNAL.
 */
int svc_agent_attachments_elements(struct json_object *attachments, char **out);

/*
 * ---- Module-internal ----
 * What follows is shared between the files of lib/agent*.c and
 * tests/unit/test_agent.c only; nothing outside the module calls it.
 */

/*
 * Server-sent events splitter (WHATWG HTML "Server-sent events", 9.2.6
 * "Interpreting an event stream"): bytes go in as they arrive, split at any
 * point; lines end in LF, CRLF or CR; ':' lines are comments; "event" and
 * "data" fields are kept (several data lines join with "\n"); a blank line
 * dispatches the event to `fn(ctx, event, data, len)` with event "" when the
 * stream named none. `fn` returns 0 or a negative svc_err, which ends the feed.
 */
typedef int (*svc_agent__sse_fn)(void *ctx, const char *event, const char *data, size_t len);

struct svc_agent__sse {
	struct svc_buf line;  /* the line being read */
	struct svc_buf data;  /* the data of the event being read */
	char event[64];
	int has_data;
	int after_cr;                /* the last byte was a CR: skip one LF */
	svc_agent__sse_fn fn;
	void *ctx;
};

/* Sets up a splitter whose lines and event data may be at most `max_line` bytes (1 MiB in the loop). */
void svc_agent__sse_init(struct svc_agent__sse *s, size_t max_line, svc_agent__sse_fn fn, void *ctx);

/* Feeds `len` bytes. Returns 0, SVC_E_TOO_LARGE for a line or event over the maximum, or `fn`'s error. */
int svc_agent__sse_feed(struct svc_agent__sse *s, const char *bytes, size_t len);

/* Ends the stream: an event that lacked only its blank line is still dispatched. Returns as feed. */
int svc_agent__sse_finish(struct svc_agent__sse *s);

/* Frees the splitter's buffers. */
void svc_agent__sse_dispose(struct svc_agent__sse *s);

#define SVC_AGENT__MAX_CALLS 32              /* tool calls in one model answer */
#define SVC_AGENT__MAX_ARGS (2 * 1024 * 1024) /* bytes of arguments JSON of one tool call */
#define SVC_AGENT__MAX_TEXT (1024 * 1024)    /* bytes of text of one model answer */

/* One tool call as streamed by the model. */
struct svc_agent__call {
	char id[128];
	char name[64];
	long index;                  /* OpenAI tool_calls[].index, Anthropic content block index */
	struct svc_buf args;  /* the arguments JSON text, accumulated from the deltas */
};

/*
 * One model answer, filled in by the stream parsers below as events arrive.
 * The parsers emit assistant.message_delta and assistant.reasoning_delta
 * through `emit` at once; a negative value from `emit` is kept in `emit_err`
 * and returned. A malformed stream sets `error` and returns
 * SVC_E_MODEL_UNAVAILABLE.
 */
struct svc_agent__step {
	svc_agent_emit_fn emit;
	void *ctx;
	const char *text_prefix;     /* emitted as a delta before the first text delta; may be NULL */
	struct svc_buf text;  /* all text deltas */
	struct svc_agent__call calls[SVC_AGENT__MAX_CALLS];
	size_t ncalls;
	int64_t input_tokens, output_tokens;
	int done;                    /* OpenAI "data: [DONE]" or Anthropic message_stop seen */
	int finished;                /* a finish_reason / stop_reason was seen */
	int emit_err;
	char error[256];
	long http_status;            /* the provider's HTTP status (0 when none arrived) */
	long retry_after;            /* its Retry-After in seconds, -1 when none */
	/* the text tool protocol (toolMode "text", lib/agent/agent_text.c): `text` keeps the raw answer,
	 * the deltas emitted and `shown` leave the <svc-…> markup out */
	int text_mode;
	struct svc_buf shown;        /* the text without the markup (text_mode only) */
	size_t text_pos;             /* how far `text` was looked at */
	int text_block;              /* inside a block that starts at text_block_at */
	size_t text_block_at, text_scan;
};

/* Sets up an empty step that emits through `emit(ctx, ...)`. */
void svc_agent__step_init(struct svc_agent__step *st, svc_agent_emit_fn emit, void *ctx);

/* Frees what the step accumulated. */
void svc_agent__step_dispose(struct svc_agent__step *st);

/*
 * An svc_agent__sse_fn for OpenAI Chat Completions chunks ("chat.completion.chunk":
 * choices[0].delta.content / reasoning_content / reasoning / tool_calls[] by
 * index, finish_reason, usage.prompt_tokens / completion_tokens; "[DONE]").
 * `ctx` is a struct svc_agent__step.
 */
int svc_agent__openai_event(void *ctx, const char *event, const char *data, size_t len);

/*
 * An svc_agent__sse_fn for Anthropic Messages stream events (message_start,
 * content_block_start/delta/stop with text_delta, input_json_delta and
 * thinking_delta, message_delta, message_stop, ping, error). `ctx` is a
 * struct svc_agent__step.
 */
int svc_agent__anthropic_event(void *ctx, const char *event, const char *data, size_t len);

/*
 * The text tool protocol (docs/agent.md "Models without tool calls"). svc_agent__text_shown():
 * after more of st->text arrived, the next span of it to show (markup left out) in *out (into
 * st->text, *out_len bytes; 0 when nothing can be shown yet: a block not closed, or a "<svc" that
 * may begin one, held back until `final`). Call it until *out_len is 0. Returns 0.
 * svc_agent__text_calls(): the blocks of the whole answer as the step's tool calls (read_file,
 * write_file, edit_file, delete_file, list_files, search_files; "unknown_markup" for another
 * <svc-…>), with ids "text_N"; an unfinished block is not a call. Returns 0 or
 * SVC_E_MODEL_UNAVAILABLE (too many calls, arguments too long; st->error says which).
 */
#define SVC_AGENT__TEXT_RESULTS "[svc tool results]" /* begins the user message that carries a step's results */

/* The system prompt's paragraph that teaches the markup; the read-only subset (`read_only`) or all of it. Static. */
const char *svc_agent__text_prompt(int read_only);
int svc_agent__text_shown(struct svc_agent__step *st, int final, const char **out, size_t *out_len);
int svc_agent__text_calls(struct svc_agent__step *st);

/* Emits an assistant.message_delta (kind 0) or assistant.reasoning_delta (kind 1) and keeps text; for the parsers. */
int svc_agent__step_delta(struct svc_agent__step *st, int kind, const char *delta, size_t len);

/*
 * Returns the call with provider index `index`, adding it when new (with
 * `id` and `name`, either may be NULL and be set by a later delta); NULL
 * with `error` set when there are too many calls or an id/name is too long.
 */
struct svc_agent__call *svc_agent__step_call(struct svc_agent__step *st, long index, const char *id, const char *name);

/* Sets st->error from a format and returns SVC_E_MODEL_UNAVAILABLE; for the parsers. */
int svc_agent__step_fail(struct svc_agent__step *st, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* After the stream ended: returns 0 when the answer is complete, else SVC_E_MODEL_UNAVAILABLE with `error` set. */
int svc_agent__step_end(struct svc_agent__step *st);

/*
 * The conversation the loop keeps is a json array of provider-neutral
 * messages: {role "user", content}, {role "assistant", content, tool_calls
 * [{id, name, arguments (JSON object text)}]}, {role "tool", tool_call_id,
 * name, content, is_error}. These build one request body from it; `tools`
 * comes from svc_agent__tools_json(). *out is a new object the caller puts.
 */
int svc_agent__openai_body(const char *model, const char *system, struct json_object *conv,
			   struct json_object *tools, struct json_object **out);
int svc_agent__anthropic_body(const char *model, const char *system, struct json_object *conv,
			      struct json_object *tools, struct json_object **out);

/*
 * Appends to `out` the system prompt's paragraph on what kind of project
 * `project_dir` (absolute) holds, from its package.json (read through
 * lib/core/fsx, at most 256 KiB): none, a static web app; one whose
 * dependencies or devDependencies have react and vite, the layout of svc's
 * react template (templates/react), with Tailwind CSS's rules when tailwindcss
 * or @tailwindcss/vite is among them; any other, or one that cannot be read
 * or parsed, a package.json project; the last two with the rule for adding an
 * npm package. Appends at most SVC_AGENT__STACK_MAX bytes; nothing for a NULL
 * or empty `project_dir`. Returns 0 or svc_buf_adds()'s SVC_E_TOO_LARGE.
 */
#define SVC_AGENT__STACK_MAX 4096
int svc_agent__prompt_stack(const char *project_dir, struct svc_buf *out);

/* Parses `len` bytes of JSON (nesting capped at 64, the whole text) into a new object *out. Returns 0 or SVC_E_INVALID_JSON. */
int svc_agent__json_parse(const char *text, size_t len, struct json_object **out);

/* Returns the string member `key` of `obj`, or NULL when it is missing or not a string. */
const char *svc_agent__json_str(struct json_object *obj, const char *key);

/*
 * Request-building helpers shared by the OpenAI and Anthropic encoders:
 * add `val` under `key` to `obj` / append `val` to `arr`, taking ownership
 * of `val` (it is released on failure; a NULL `val`, i.e. a failed
 * allocation, is SVC_E_INTERNAL). Return 0 or SVC_E_INTERNAL.
 */
int svc_agent__json_add(struct json_object *obj, const char *key, struct json_object *val);
int svc_agent__json_append(struct json_object *arr, struct json_object *val);

/* A new JSON string of `s` ("" for NULL); NULL only when out of memory. */
struct json_object *svc_agent__json_string(const char *s);

/* The file tools of one turn. */
struct svc_agent__tools {
	const char *root;            /* the project directory */
	const char *mode;            /* for the "denied" message */
	int read_only;
	int files_changed;           /* set to 1 by a write, edit or delete that succeeded */
	unsigned changes;            /* how many writes, edits and deletes succeeded (the loop breaker) */
	const struct svc_agent_integ *integ; /* integration_request is offered (build mode), else NULL */
	uint64_t repo_quota_bytes;   /* the project directory's quota (svc_agent_turn), 0 = none */
};

#define SVC_AGENT__MAX_RESULT (64 * 1024) /* bytes of a tool result fed back to the model */

/* Returns the tool definitions (a new json array) in OpenAI (`anthropic` 0) or Anthropic form; read-only: list/read/search only. */
struct json_object *svc_agent__tools_json(int read_only, int anthropic);

/*
 * Runs tool `name` with arguments `args` (a json object) inside t->root.
 * Returns 0 with the result text in *out, or a negative svc_err with the
 * error text in *out (refused path, unknown tool, denied write, 0 or N
 * matches, ...). *out is malloc'd, NUL-terminated, at most
 * SVC_AGENT__MAX_RESULT bytes plus a note when cut; the caller frees it. Only
 * when out of memory is *out NULL (and SVC_E_INTERNAL returned).
 */
int svc_agent__tool_run(struct svc_agent__tools *t, const char *name, struct json_object *args, char **out);

/* Whether the turn's workspace has any integration enabled (integration_request is offered only then): 1 or 0. */
int svc_agent__integration_available(const struct svc_agent_integ *ig);

/* Appends the integration_request tool's definition (OpenAI or Anthropic form) to the array `defs`. Returns 0 or SVC_E_INTERNAL. */
int svc_agent__integration_def(struct json_object *defs, int anthropic);

/*
 * Runs integration_request with `args` {integration, method?, url, headers?, body?} for `ig`
 * (docs/api.md "The agent's integration tool"): the integration must be enabled in the workspace,
 * the URL https (http too with SVC_INTEG_ALLOW_HTTP=1) on one of its API hosts; the model's headers
 * may not carry credentials; the credential (svc_integ_credential()) is added by the server and
 * every copy of it in the answer is replaced by "[credential]"; the connection goes through the SSRF
 * guard (lib/core/outbound.h), no redirects, SVC_INTEG_TIMEOUT_SECS (20) and
 * SVC_INTEG_MAX_RESPONSE_BYTES (1 MiB). Every call that is made is recorded in integration_calls
 * (xray). Returns 0 with "HTTP <status>\ncontent-type: <type>\n\n<body>" in *out (malloc'd), or a
 * negative svc_err with the reason for the model in *out.
 */
int svc_agent__integration_run(const struct svc_agent_integ *ig, struct json_object *args, char **out);

/*
 * ---- The loop breaker and the instructions (lib/agent/agent_guard.c) ----
 */
#define SVC_AGENT__BREAKER_CALLS 256      /* distinct tool calls one turn's breaker tells apart */
#define SVC_AGENT__BREAKER_REPEATS 3      /* the same call (tool and arguments) this often stops the turn */

/* The breaker's memory of one turn; zeroed before the turn. */
struct svc_agent__breaker {
	uint64_t sig[SVC_AGENT__BREAKER_CALLS]; /* FNV-1a of tool name and arguments text */
	unsigned count[SVC_AGENT__BREAKER_CALLS];
	size_t n;
	unsigned idle;               /* steps in a row without a file change */
	unsigned changes;            /* svc_agent__tools.changes after the last step */
};

/* Counts one call of tool `name` with arguments `args` (JSON text); returns how often it was asked for in the turn. */
unsigned svc_agent__breaker_call(struct svc_agent__breaker *b, const char *name, const char *args);

/* After a step whose tools left the turn at `changes` file changes: returns the steps in a row without one. */
unsigned svc_agent__breaker_step(struct svc_agent__breaker *b, unsigned changes);

/*
 * Appends turn->ws_instructions, then turn->project_instructions (each under a heading, cut at
 * turn->instructions_max bytes on a UTF-8 boundary with a note to the model when longer), then
 * turn->project_instructions_note, to the system prompt `out`. Returns 0 or SVC_E_TOO_LARGE.
 */
int svc_agent__instructions_add(const struct svc_agent_turn *turn, struct svc_buf *out);

/* The bytes svc_agent__instructions_add() may add at most, for sizing the prompt's buffer. */
size_t svc_agent__instructions_room(const struct svc_agent_turn *turn);

/*
 * Parses the arguments text of a tool call: "" or whitespace is {}; anything
 * else must be one JSON object (nesting capped). Returns 0 with a new object
 * in *out, or SVC_E_INVALID_JSON.
 */
int svc_agent__parse_args(const char *text, size_t len, struct json_object **out);

#endif
