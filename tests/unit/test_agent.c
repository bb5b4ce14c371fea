/* test_agent.c: CUnit suite "agent": SSE splitter, provider stream parsers, file tools, and the loop against the provider double. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <CUnit/CUnit.h>
#include <curl/curl.h>

#include "agent/agent.h"
#include "agent/budget.h"
#include "agent/check.h"
#include "agent/history.h"
#include "agent/turn.h"
#include "core/err.h"
#include "core/fsx.h"
#include "core/outbound.h"
#include "core/util.h"
#include "db/db.h"
#include "unit.h"

/* ---- recording callbacks ---- */

/* Every event emitted, as {type, payload}; `fail_at` > 0 makes the fail_at-th emit return `fail_with`. */
struct rec {
	struct json_object *events;
	int count;
	int fail_at;
	int fail_with;
	const char *fail_type;   /* when set, only events of this type count for fail_at */
};

static void rec_init(struct rec *r)
{
	memset(r, 0, sizeof(*r));
	r->events = json_object_new_array();
}

static void rec_dispose(struct rec *r)
{
	json_object_put(r->events);
}

static int rec_emit(void *ctx, const char *type, struct json_object *payload)
{
	struct rec *r = ctx;
	struct json_object *e = json_object_new_object();

	json_object_object_add(e, "type", json_object_new_string(type));
	json_object_object_add(e, "payload", json_object_get(payload));
	json_object_array_add(r->events, e);
	if (r->fail_type && strcmp(r->fail_type, type) != 0)
		return 0;
	r->count++;
	if (r->fail_at > 0 && r->count == r->fail_at)
		return r->fail_with;
	return 0;
}

static const char *ev_type(struct rec *r, size_t i)
{
	struct json_object *e = json_object_array_get_idx(r->events, i), *t;

	if (!e || !json_object_object_get_ex(e, "type", &t))
		return "";
	return json_object_get_string(t);
}

static struct json_object *ev_payload(struct rec *r, size_t i)
{
	struct json_object *e = json_object_array_get_idx(r->events, i), *p = NULL;

	if (e)
		json_object_object_get_ex(e, "payload", &p);
	return p;
}

/* Concatenates the `field` of every event of `type`. */
static void ev_join(struct rec *r, const char *type, const char *field, char *out, size_t outsz)
{
	size_t i, n = json_object_array_length(r->events), len = 0;

	out[0] = '\0';
	for (i = 0; i < n; i++) {
		const char *s;
		size_t sl;

		if (strcmp(ev_type(r, i), type) != 0)
			continue;
		s = svc_agent__json_str(ev_payload(r, i), field);
		if (!s)
			continue;
		sl = strlen(s);
		if (len + sl >= outsz)
			sl = outsz - len - 1;
		memcpy(out + len, s, sl);
		len += sl;
		out[len] = '\0';
	}
}

static size_t ev_count(struct rec *r, const char *type)
{
	size_t i, n = json_object_array_length(r->events), c = 0;

	for (i = 0; i < n; i++)
		c += strcmp(ev_type(r, i), type) == 0;
	return c;
}

/* ---- SSE splitter ---- */

struct sse_log {
	char text[4096];
	size_t len;
	int fail;
};

static int sse_log_fn(void *ctx, const char *event, const char *data, size_t len)
{
	struct sse_log *l = ctx;
	int n = snprintf(l->text + l->len, sizeof(l->text) - l->len, "[%s|%.*s]", event, (int)len, data);

	if (n > 0 && (size_t)n < sizeof(l->text) - l->len)
		l->len += (size_t)n;
	return l->fail;
}

static const char sse_stream[] =
	": a comment line\r\n"
	"data: {\"a\":1}\n"
	"\n"
	"event: content_block_delta\r\n"
	"data: first\r\n"
	"data:second\r\n"
	"\r\n"
	"id: 7\n"
	"retry: 1000\n"
	"data: \n"
	"\n"
	"event: only-a-name\n"
	"\n"
	"data: cr-only\r\r"
	"data: [DONE]\n\n";

static const char sse_expected[] =
	"[|{\"a\":1}][content_block_delta|first\nsecond][|][|cr-only][|[DONE]]";

static void check_split(const size_t *cuts, size_t ncuts)
{
	struct svc_agent__sse s;
	struct sse_log log = { .len = 0 };
	size_t pos = 0, i, len = sizeof(sse_stream) - 1;

	svc_agent__sse_init(&s, 1024, sse_log_fn, &log);
	for (i = 0; i <= ncuts; i++) {
		size_t end = i < ncuts ? cuts[i] : len;

		CU_ASSERT_EQUAL(svc_agent__sse_feed(&s, sse_stream + pos, end - pos), 0);
		pos = end;
	}
	CU_ASSERT_EQUAL(svc_agent__sse_finish(&s), 0);
	CU_ASSERT_STRING_EQUAL(log.text, sse_expected);
	svc_agent__sse_dispose(&s);
}

static void test_agent_sse_whole_stream(void)
{
	check_split(NULL, 0);
}

static void test_agent_sse_byte_by_byte(void)
{
	size_t cuts[sizeof(sse_stream)], i;

	for (i = 0; i < sizeof(sse_stream) - 2; i++)
		cuts[i] = i + 1;
	check_split(cuts, sizeof(sse_stream) - 2);
}

static void test_agent_sse_random_splits(void)
{
	unsigned seed, x;
	size_t cuts[16], n, i, len = sizeof(sse_stream) - 1;

	for (seed = 1; seed <= 200; seed++) {
		x = seed * 2654435761u;
		n = 1 + seed % 15;
		for (i = 0; i < n; i++) {
			x = x * 1103515245u + 12345u;
			cuts[i] = (x >> 8) % (len + 1);
		}
		/* sort the cut points */
		for (i = 1; i < n; i++) {
			size_t j = i, v = cuts[i];

			while (j > 0 && cuts[j - 1] > v) {
				cuts[j] = cuts[j - 1];
				j--;
			}
			cuts[j] = v;
		}
		check_split(cuts, n);
	}
}

static void test_agent_sse_overlong_line(void)
{
	struct svc_agent__sse s;
	struct sse_log log = { .len = 0 };
	char chunk[100];

	memset(chunk, 'x', sizeof(chunk));
	svc_agent__sse_init(&s, 256, sse_log_fn, &log);
	CU_ASSERT_EQUAL(svc_agent__sse_feed(&s, "data: ", 6), 0);
	CU_ASSERT_EQUAL(svc_agent__sse_feed(&s, chunk, sizeof(chunk)), 0);
	CU_ASSERT_EQUAL(svc_agent__sse_feed(&s, chunk, sizeof(chunk)), 0);
	CU_ASSERT_EQUAL(svc_agent__sse_feed(&s, chunk, sizeof(chunk)), SVC_E_TOO_LARGE);
	CU_ASSERT_EQUAL(log.len, 0);
	svc_agent__sse_dispose(&s);
}

static void test_agent_sse_callback_error_stops(void)
{
	struct svc_agent__sse s;
	struct sse_log log = { .len = 0, .fail = SVC_E_CLIENT_GONE };

	svc_agent__sse_init(&s, 256, sse_log_fn, &log);
	CU_ASSERT_EQUAL(svc_agent__sse_feed(&s, "data: a\n\ndata: b\n\n", 18), SVC_E_CLIENT_GONE);
	CU_ASSERT_STRING_EQUAL(log.text, "[|a]");
	svc_agent__sse_dispose(&s);
}

/* ---- stream parsers ---- */

/* Feeds `stream` to a fresh step through the SSE splitter in pieces of `piece` bytes. */
static int parse_stream(struct svc_agent__step *st, struct rec *r, svc_agent__sse_fn fn, const char *stream, size_t piece)
{
	struct svc_agent__sse s;
	size_t len = strlen(stream), pos = 0, n;
	int error = 0;

	svc_agent__step_init(st, rec_emit, r);
	svc_agent__sse_init(&s, 1 << 20, fn, st);
	while (pos < len && error == 0) {
		n = len - pos < piece ? len - pos : piece;
		error = svc_agent__sse_feed(&s, stream + pos, n);
		pos += n;
	}
	if (error == 0)
		error = svc_agent__sse_finish(&s);
	if (error == 0)
		error = svc_agent__step_end(st);
	svc_agent__sse_dispose(&s);
	return error;
}

static const char openai_stream[] =
	"data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"},\"finish_reason\":null}]}\n\n"
	"data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"reasoning_content\":\"Hmm \"},\"finish_reason\":null}]}\n\n"
	"data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"reasoning\":\"ok.\"},\"finish_reason\":null}]}\n\n"
	"data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Let me \"},\"finish_reason\":null}]}\n\n"
	"data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"look.\"},\"finish_reason\":null}]}\n\n"
	"data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_A\",\"type\":\"function\",\"function\":{\"name\":\"read_file\",\"arguments\":\"\"}}]},\"finish_reason\":null}]}\n\n"
	"data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":1,\"id\":\"call_B\",\"type\":\"function\",\"function\":{\"name\":\"search_files\",\"arguments\":\"{\\\"pat\"}}]},\"finish_reason\":null}]}\n\n"
	"data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"{\\\"pa\"}}]},\"finish_reason\":null}]}\n\n"
	"data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"th\\\": \\\"a\\\\\\\"b.html\\\"}\"}}]},\"finish_reason\":null}]}\n\n"
	"data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":1,\"function\":{\"arguments\":\"tern\\\":\\\"x\\\"}\"}}]},\"finish_reason\":null}]}\n\n"
	"data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\n"
	"data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"choices\":[],\"usage\":{\"prompt_tokens\":120,\"completion_tokens\":30,\"total_tokens\":150}}\n\n"
	"data: [DONE]\n\n";

static void check_openai(size_t piece)
{
	struct svc_agent__step st;
	struct rec r;
	char joined[256];
	struct json_object *args;

	rec_init(&r);
	CU_ASSERT_EQUAL_FATAL(parse_stream(&st, &r, svc_agent__openai_event, openai_stream, piece), 0);
	CU_ASSERT_STRING_EQUAL(svc_buf_str(&st.text), "Let me look.");
	CU_ASSERT_EQUAL(ev_count(&r, "assistant.message_delta"), 2);
	ev_join(&r, "assistant.reasoning_delta", "delta", joined, sizeof(joined));
	CU_ASSERT_STRING_EQUAL(joined, "Hmm ok.");
	CU_ASSERT_STRING_EQUAL(ev_type(&r, 0), "assistant.reasoning_delta");
	CU_ASSERT_EQUAL_FATAL(st.ncalls, 2);
	CU_ASSERT_STRING_EQUAL(st.calls[0].id, "call_A");
	CU_ASSERT_STRING_EQUAL(st.calls[0].name, "read_file");
	CU_ASSERT_STRING_EQUAL(svc_buf_str(&st.calls[0].args), "{\"path\": \"a\\\"b.html\"}");
	CU_ASSERT_EQUAL_FATAL(svc_agent__parse_args(st.calls[0].args.data, st.calls[0].args.len, &args), 0);
	CU_ASSERT_STRING_EQUAL(svc_agent__json_str(args, "path"), "a\"b.html");
	json_object_put(args);
	CU_ASSERT_STRING_EQUAL(st.calls[1].id, "call_B");
	CU_ASSERT_STRING_EQUAL(st.calls[1].name, "search_files");
	CU_ASSERT_STRING_EQUAL(svc_buf_str(&st.calls[1].args), "{\"pattern\":\"x\"}");
	CU_ASSERT_EQUAL(st.input_tokens, 120);
	CU_ASSERT_EQUAL(st.output_tokens, 30);
	CU_ASSERT(st.done && st.finished);
	svc_agent__step_dispose(&st);
	rec_dispose(&r);
}

static void test_agent_openai_chunks(void)
{
	check_openai(1 << 20);
	check_openai(1);
	check_openai(7);
}

static void test_agent_openai_calls_without_index(void)
{
	static const char stream[] =
		"data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"id\":\"a\",\"function\":{\"name\":\"list_files\",\"arguments\":\"{}\"}},"
		"{\"id\":\"b\",\"function\":{\"name\":\"read_file\",\"arguments\":\"{\\\"path\\\":\\\"x\\\"}\"}}]},\"finish_reason\":\"tool_calls\"}]}\n\n"
		"data: [DONE]\n\n";
	struct svc_agent__step st;
	struct rec r;

	rec_init(&r);
	CU_ASSERT_EQUAL_FATAL(parse_stream(&st, &r, svc_agent__openai_event, stream, 5), 0);
	CU_ASSERT_EQUAL_FATAL(st.ncalls, 2);
	CU_ASSERT_STRING_EQUAL(st.calls[0].name, "list_files");
	CU_ASSERT_STRING_EQUAL(svc_buf_str(&st.calls[1].args), "{\"path\":\"x\"}");
	svc_agent__step_dispose(&st);
	rec_dispose(&r);
}

static void test_agent_openai_malformed(void)
{
	struct svc_agent__step st;
	struct rec r;

	rec_init(&r);
	CU_ASSERT_EQUAL(parse_stream(&st, &r, svc_agent__openai_event, "data: {\"choices\": [\n\n", 100), SVC_E_MODEL_UNAVAILABLE);
	CU_ASSERT(strstr(st.error, "malformed") != NULL);
	svc_agent__step_dispose(&st);
	/* a stream cut off before finish_reason or [DONE] */
	CU_ASSERT_EQUAL(parse_stream(&st, &r, svc_agent__openai_event,
				     "data: {\"choices\":[{\"delta\":{\"content\":\"Hi\"}}]}\n\n", 100), SVC_E_MODEL_UNAVAILABLE);
	CU_ASSERT(strstr(st.error, "ended") != NULL);
	svc_agent__step_dispose(&st);
	/* an error object inside the stream */
	CU_ASSERT_EQUAL(parse_stream(&st, &r, svc_agent__openai_event,
				     "data: {\"error\":{\"message\":\"overloaded\",\"type\":\"server_error\"}}\n\n", 100), SVC_E_MODEL_UNAVAILABLE);
	CU_ASSERT(strstr(st.error, "overloaded") != NULL);
	svc_agent__step_dispose(&st);
	rec_dispose(&r);
}

static void test_agent_openai_emit_error_stops(void)
{
	struct svc_agent__step st;
	struct rec r;

	rec_init(&r);
	r.fail_at = 1;
	r.fail_with = SVC_E_CANCELLED;
	CU_ASSERT_EQUAL(parse_stream(&st, &r, svc_agent__openai_event, openai_stream, 3), SVC_E_CANCELLED);
	CU_ASSERT_EQUAL(st.emit_err, SVC_E_CANCELLED);
	CU_ASSERT_EQUAL(json_object_array_length(r.events), 1);
	svc_agent__step_dispose(&st);
	rec_dispose(&r);
}

static const char anthropic_stream[] =
	"event: message_start\n"
	"data: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[],\"model\":\"claude\",\"stop_reason\":null,\"stop_sequence\":null,\"usage\":{\"input_tokens\":250,\"output_tokens\":1}}}\n\n"
	"event: ping\n"
	"data: {\"type\": \"ping\"}\n\n"
	"event: content_block_start\n"
	"data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"thinking\",\"thinking\":\"\"}}\n\n"
	"event: content_block_delta\n"
	"data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"thinking_delta\",\"thinking\":\"Consider.\"}}\n\n"
	"event: content_block_delta\n"
	"data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"signature_delta\",\"signature\":\"sig\"}}\n\n"
	"event: content_block_stop\n"
	"data: {\"type\":\"content_block_stop\",\"index\":0}\n\n"
	"event: content_block_start\n"
	"data: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n"
	"event: content_block_delta\n"
	"data: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"text_delta\",\"text\":\"Editing \"}}\n\n"
	"event: content_block_delta\n"
	"data: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"text_delta\",\"text\":\"now.\"}}\n\n"
	"event: content_block_stop\n"
	"data: {\"type\":\"content_block_stop\",\"index\":1}\n\n"
	"event: content_block_start\n"
	"data: {\"type\":\"content_block_start\",\"index\":2,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_1\",\"name\":\"write_file\",\"input\":{}}}\n\n"
	"event: content_block_delta\n"
	"data: {\"type\":\"content_block_delta\",\"index\":2,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"\"}}\n\n"
	"event: content_block_delta\n"
	"data: {\"type\":\"content_block_delta\",\"index\":2,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"path\\\": \\\"a.t\"}}\n\n"
	"event: content_block_delta\n"
	"data: {\"type\":\"content_block_delta\",\"index\":2,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"xt\\\", \\\"content\\\": \\\"hi\\\\n\\\"}\"}}\n\n"
	"event: content_block_stop\n"
	"data: {\"type\":\"content_block_stop\",\"index\":2}\n\n"
	"event: message_delta\n"
	"data: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\",\"stop_sequence\":null},\"usage\":{\"output_tokens\":77}}\n\n"
	"event: message_stop\n"
	"data: {\"type\":\"message_stop\"}\n\n";

static void test_agent_anthropic_events(void)
{
	struct svc_agent__step st;
	struct rec r;
	struct json_object *args;
	char joined[256];
	size_t pieces[] = { 1 << 20, 1, 13 }, i;

	for (i = 0; i < sizeof(pieces) / sizeof(pieces[0]); i++) {
		rec_init(&r);
		CU_ASSERT_EQUAL_FATAL(parse_stream(&st, &r, svc_agent__anthropic_event, anthropic_stream, pieces[i]), 0);
		CU_ASSERT_STRING_EQUAL(svc_buf_str(&st.text), "Editing now.");
		ev_join(&r, "assistant.reasoning_delta", "delta", joined, sizeof(joined));
		CU_ASSERT_STRING_EQUAL(joined, "Consider.");
		CU_ASSERT_EQUAL(ev_count(&r, "assistant.message_delta"), 2);
		CU_ASSERT_EQUAL_FATAL(st.ncalls, 1);
		CU_ASSERT_STRING_EQUAL(st.calls[0].id, "toolu_1");
		CU_ASSERT_STRING_EQUAL(st.calls[0].name, "write_file");
		CU_ASSERT_EQUAL_FATAL(svc_agent__parse_args(st.calls[0].args.data, st.calls[0].args.len, &args), 0);
		CU_ASSERT_STRING_EQUAL(svc_agent__json_str(args, "content"), "hi\n");
		json_object_put(args);
		CU_ASSERT_EQUAL(st.input_tokens, 250);
		CU_ASSERT_EQUAL(st.output_tokens, 77);
		svc_agent__step_dispose(&st);
		rec_dispose(&r);
	}
}

static void test_agent_anthropic_error_event(void)
{
	struct svc_agent__step st;
	struct rec r;

	rec_init(&r);
	CU_ASSERT_EQUAL(parse_stream(&st, &r, svc_agent__anthropic_event,
				     "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n", 9),
			SVC_E_MODEL_UNAVAILABLE);
	CU_ASSERT(strstr(st.error, "Overloaded") != NULL);
	svc_agent__step_dispose(&st);
	/* input for a block that was never started */
	CU_ASSERT_EQUAL(parse_stream(&st, &r, svc_agent__anthropic_event,
				     "data: {\"type\":\"content_block_delta\",\"index\":4,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{}\"}}\n\n", 9),
			SVC_E_MODEL_UNAVAILABLE);
	svc_agent__step_dispose(&st);
	rec_dispose(&r);
}

static void test_agent_request_bodies(void)
{
	static const char conv_text[] =
		"[{\"role\":\"assistant\",\"content\":\"earlier greeting\"},"
		"{\"role\":\"user\",\"content\":\"a\"},{\"role\":\"user\",\"content\":\"b\"},"
		"{\"role\":\"assistant\",\"content\":\"\",\"tool_calls\":[{\"id\":\"c1\",\"name\":\"read_file\",\"arguments\":\"{\\\"path\\\":\\\"x\\\"}\"},"
		"{\"id\":\"c2\",\"name\":\"list_files\",\"arguments\":\"{}\"}]},"
		"{\"role\":\"tool\",\"tool_call_id\":\"c1\",\"name\":\"read_file\",\"content\":\"X\",\"is_error\":false},"
		"{\"role\":\"tool\",\"tool_call_id\":\"c2\",\"name\":\"list_files\",\"content\":\"error: no\",\"is_error\":true}]";
	struct json_object *conv = json_tokener_parse(conv_text), *tools, *body = NULL, *msgs, *m, *v;

	CU_ASSERT_PTR_NOT_NULL_FATAL(conv);
	tools = svc_agent__tools_json(0, 1);
	CU_ASSERT_EQUAL_FATAL(svc_agent__anthropic_body("claude", "SYS", conv, tools, &body), 0);
	CU_ASSERT_STRING_EQUAL(svc_agent__json_str(body, "system"), "SYS");
	CU_ASSERT(json_object_object_get_ex(body, "messages", &msgs));
	/* the leading assistant message is dropped, the two user messages merged, both results in one user message */
	CU_ASSERT_EQUAL_FATAL(json_object_array_length(msgs), 3);
	m = json_object_array_get_idx(msgs, 0);
	CU_ASSERT_STRING_EQUAL(svc_agent__json_str(m, "role"), "user");
	json_object_object_get_ex(m, "content", &v);
	CU_ASSERT_EQUAL(json_object_array_length(v), 2);
	m = json_object_array_get_idx(msgs, 1);
	CU_ASSERT_STRING_EQUAL(svc_agent__json_str(m, "role"), "assistant");
	json_object_object_get_ex(m, "content", &v);
	CU_ASSERT_EQUAL_FATAL(json_object_array_length(v), 2); /* no empty text block */
	CU_ASSERT_STRING_EQUAL(svc_agent__json_str(json_object_array_get_idx(v, 0), "type"), "tool_use");
	json_object_object_get_ex(json_object_array_get_idx(v, 0), "input", &v);
	CU_ASSERT_STRING_EQUAL(svc_agent__json_str(v, "path"), "x");
	m = json_object_array_get_idx(msgs, 2);
	json_object_object_get_ex(m, "content", &v);
	CU_ASSERT_EQUAL_FATAL(json_object_array_length(v), 2);
	CU_ASSERT_STRING_EQUAL(svc_agent__json_str(json_object_array_get_idx(v, 1), "tool_use_id"), "c2");
	CU_ASSERT(json_object_object_get_ex(json_object_array_get_idx(v, 1), "is_error", &v) && json_object_get_boolean(v));
	json_object_put(body);
	json_object_put(tools);

	tools = svc_agent__tools_json(1, 0);
	CU_ASSERT_EQUAL_FATAL(svc_agent__openai_body("gpt", "SYS", conv, tools, &body), 0);
	CU_ASSERT(json_object_object_get_ex(body, "messages", &msgs));
	CU_ASSERT_EQUAL_FATAL(json_object_array_length(msgs), 7); /* system + all six, as they are */
	m = json_object_array_get_idx(msgs, 4);
	CU_ASSERT(json_object_object_get_ex(m, "content", &v) && v == NULL);
	CU_ASSERT(json_object_object_get_ex(m, "tool_calls", &v) && json_object_array_length(v) == 2);
	CU_ASSERT_STRING_EQUAL(svc_agent__json_str(json_object_array_get_idx(msgs, 6), "tool_call_id"), "c2");
	json_object_object_get_ex(body, "tools", &v);
	CU_ASSERT_EQUAL(json_object_array_length(v), 3);
	json_object_put(body);
	json_object_put(tools);
	json_object_put(conv);
}

static void test_agent_parse_args(void)
{
	struct json_object *o = NULL;

	CU_ASSERT_EQUAL(svc_agent__parse_args("", 0, &o), 0);
	CU_ASSERT(json_object_is_type(o, json_type_object) && json_object_object_length(o) == 0);
	json_object_put(o);
	CU_ASSERT_EQUAL(svc_agent__parse_args(" {\"a\": 1} \n", 11, &o), 0);
	json_object_put(o);
	CU_ASSERT_EQUAL(svc_agent__parse_args("{\"a\": ", 6, &o), SVC_E_INVALID_JSON);
	CU_ASSERT_EQUAL(svc_agent__parse_args("[1]", 3, &o), SVC_E_INVALID_JSON);
	CU_ASSERT_EQUAL(svc_agent__parse_args("{} {}", 5, &o), SVC_E_INVALID_JSON);
}

static void test_agent_utf8_cut(void)
{
	const char *s = "ab\xc3\xa9" "cd"; /* "abécd" */

	CU_ASSERT_EQUAL(svc_utf8_cut(s, 6, 3), 2);
	CU_ASSERT_EQUAL(svc_utf8_cut(s, 6, 4), 4);
	CU_ASSERT_EQUAL(svc_utf8_cut(s, 6, 10), 6);
	CU_ASSERT(svc_utf8_valid(s, 6));
	CU_ASSERT(!svc_utf8_valid(s, 3));
	CU_ASSERT(!svc_utf8_valid("a\0b", 3));
}

/* ---- file tools ---- */

static void put_file(const char *dir, const char *rel, const char *content)
{
	char path[1024];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	f = fopen(path, "w");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	fputs(content, f);
	fclose(f);
}

/* The contents of dir/rel in a malloc'd string, or NULL when missing. */
static char *get_file(const char *dir, const char *rel)
{
	char path[1024], *buf;
	FILE *f;
	long n;

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	f = fopen(path, "r");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = calloc(1, (size_t)n + 1);
	if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	return buf;
}

static int file_is(const char *dir, const char *rel, const char *want)
{
	char *got = get_file(dir, rel);
	int same = got && strcmp(got, want) == 0;

	free(got);
	return same;
}

static char tmp_project[64];

static const char index_html[] = "<html><body><main>\n<p>Hi</p>\n</main></body></html>\n";

static void make_project(void)
{
	char sub[128];

	snprintf(tmp_project, sizeof(tmp_project), "/tmp/svc-agent-test-XXXXXX");
	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(tmp_project));
	put_file(tmp_project, "index.html", index_html);
	snprintf(sub, sizeof(sub), "%s/css", tmp_project);
	CU_ASSERT_EQUAL_FATAL(mkdir(sub, 0755), 0);
	put_file(tmp_project, "css/site.css", "p { color: red; }\np { margin: 0; }\n");
}

static void drop_project(void)
{
	CU_ASSERT_EQUAL(svc_fsx_remove_tree(tmp_project), 0);
}

/* Runs `name` with JSON arguments text `args`; the result text goes to *text (caller frees). */
static int run_tool(struct svc_agent__tools *t, const char *name, const char *args, char **text)
{
	struct json_object *a = NULL;
	int error;

	CU_ASSERT_EQUAL_FATAL(svc_agent__parse_args(args, strlen(args), &a), 0);
	error = svc_agent__tool_run(t, name, a, text);
	json_object_put(a);
	CU_ASSERT_PTR_NOT_NULL(*text);
	return error;
}

static void test_agent_tools_list_read_search(void)
{
	struct svc_agent__tools t = { .mode = "build" };
	char *text = NULL, want[64];

	make_project();
	t.root = tmp_project;
	CU_ASSERT_EQUAL(run_tool(&t, "list_files", "{}", &text), 0);
	snprintf(want, sizeof(want), "index.html (%zu bytes)\n", strlen(index_html));
	CU_ASSERT(strstr(text, want) != NULL);
	CU_ASSERT(strstr(text, "css/site.css (") != NULL);
	free(text);
	CU_ASSERT_EQUAL(run_tool(&t, "read_file", "{\"path\": \"index.html\"}", &text), 0);
	CU_ASSERT_STRING_EQUAL(text, index_html);
	free(text);
	CU_ASSERT_EQUAL(run_tool(&t, "read_file", "{\"path\": \"nope.html\"}", &text), SVC_E_NOT_FOUND);
	CU_ASSERT(strstr(text, "no such file: nope.html") != NULL);
	free(text);
	CU_ASSERT_EQUAL(run_tool(&t, "search_files", "{\"pattern\": \"margin|Hi\"}", &text), 0);
	CU_ASSERT(strstr(text, "css/site.css:2:") != NULL);
	CU_ASSERT(strstr(text, "index.html:2:") != NULL);
	free(text);
	CU_ASSERT_EQUAL(run_tool(&t, "search_files", "{\"pattern\": \"zzz-not-there\"}", &text), 0);
	CU_ASSERT_STRING_EQUAL(text, "no matches");
	free(text);
	CU_ASSERT_EQUAL(run_tool(&t, "search_files", "{\"pattern\": \"(\"}", &text), SVC_E_VALIDATION);
	free(text);
	CU_ASSERT_EQUAL(t.files_changed, 0);
	drop_project();
}

static void test_agent_tools_write_edit_delete(void)
{
	struct svc_agent__tools t = { .mode = "build" };
	char *text = NULL;

	make_project();
	t.root = tmp_project;
	CU_ASSERT_EQUAL(run_tool(&t, "write_file", "{\"path\": \"notes/a.txt\", \"content\": \"one\\ntwo\\n\"}", &text), 0);
	free(text);
	CU_ASSERT(file_is(tmp_project, "notes/a.txt", "one\ntwo\n"));
	CU_ASSERT_EQUAL(t.files_changed, 1);

	t.files_changed = 0;
	CU_ASSERT_EQUAL(run_tool(&t, "edit_file", "{\"path\": \"index.html\", \"old_string\": \"</main>\", "
				 "\"new_string\": \"</main>\\n<footer>f</footer>\"}", &text), 0);
	free(text);
	CU_ASSERT(file_is(tmp_project, "index.html",
			  "<html><body><main>\n<p>Hi</p>\n</main>\n<footer>f</footer></body></html>\n"));
	CU_ASSERT_EQUAL(t.files_changed, 1);

	t.files_changed = 0;
	CU_ASSERT_EQUAL(run_tool(&t, "edit_file", "{\"path\": \"css/site.css\", \"old_string\": \"p {\", "
				 "\"new_string\": \"q {\"}", &text), SVC_E_VALIDATION);
	CU_ASSERT(strstr(text, "occurs 2 times") != NULL);
	free(text);
	CU_ASSERT_EQUAL(run_tool(&t, "edit_file", "{\"path\": \"css/site.css\", \"old_string\": \"blue\", "
				 "\"new_string\": \"green\"}", &text), SVC_E_VALIDATION);
	CU_ASSERT(strstr(text, "does not occur") != NULL);
	free(text);
	CU_ASSERT_EQUAL(run_tool(&t, "edit_file", "{\"path\": \"css/site.css\", \"old_string\": \"\", "
				 "\"new_string\": \"x\"}", &text), SVC_E_VALIDATION);
	free(text);
	CU_ASSERT(file_is(tmp_project, "css/site.css", "p { color: red; }\np { margin: 0; }\n"));
	CU_ASSERT_EQUAL(t.files_changed, 0);

	CU_ASSERT_EQUAL(run_tool(&t, "delete_file", "{\"path\": \"notes/a.txt\"}", &text), 0);
	free(text);
	CU_ASSERT_PTR_NULL(get_file(tmp_project, "notes/a.txt"));
	CU_ASSERT_EQUAL(t.files_changed, 1);
	CU_ASSERT_EQUAL(run_tool(&t, "delete_file", "{\"path\": \"notes/a.txt\"}", &text), SVC_E_NOT_FOUND);
	free(text);
	drop_project();
}

static void test_agent_tools_refuse_paths(void)
{
	static const char *bad[] = {
		"{\"path\": \"../../etc/passwd\"}",
		"{\"path\": \"/etc/passwd\"}",
		"{\"path\": \".git/config\"}",
		"{\"path\": \"css/../../x\"}",
		"{\"path\": \"link/passwd\"}",
	};
	struct svc_agent__tools t = { .mode = "build" };
	char *text = NULL, link[1024];
	size_t i;

	make_project();
	t.root = tmp_project;
	snprintf(link, sizeof(link), "%s/link", tmp_project);
	CU_ASSERT_EQUAL_FATAL(symlink("/etc", link), 0);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		CU_ASSERT(run_tool(&t, "read_file", bad[i], &text) < 0);
		free(text);
		CU_ASSERT(run_tool(&t, "delete_file", bad[i], &text) < 0);
		free(text);
	}
	CU_ASSERT_EQUAL(run_tool(&t, "read_file", "{\"path\": \"../../etc/passwd\"}", &text), SVC_E_VALIDATION);
	CU_ASSERT(strstr(text, "refused path") != NULL);
	free(text);
	CU_ASSERT(run_tool(&t, "write_file", "{\"path\": \"../escaped.txt\", \"content\": \"x\"}", &text) < 0);
	free(text);
	CU_ASSERT(run_tool(&t, "write_file", "{\"path\": \"link/escaped.txt\", \"content\": \"x\"}", &text) < 0);
	free(text);
	CU_ASSERT_PTR_NULL(get_file("/tmp", "escaped.txt"));
	CU_ASSERT_EQUAL(t.files_changed, 0);
	unlink(link);
	drop_project();
}

static void test_agent_tools_read_only_mode(void)
{
	static const char *writes[][2] = {
		{ "write_file", "{\"path\": \"index.html\", \"content\": \"gone\"}" },
		{ "write_file", "{\"path\": \"new.txt\", \"content\": \"x\"}" },
		{ "edit_file", "{\"path\": \"index.html\", \"old_string\": \"Hi\", \"new_string\": \"Bye\"}" },
		{ "delete_file", "{\"path\": \"index.html\"}" },
	};
	struct svc_agent__tools t = { .mode = "plan", .read_only = 1 };
	struct json_object *defs;
	char *text = NULL;
	size_t i;

	make_project();
	t.root = tmp_project;
	for (i = 0; i < sizeof(writes) / sizeof(writes[0]); i++) {
		CU_ASSERT_EQUAL(run_tool(&t, writes[i][0], writes[i][1], &text), SVC_E_FORBIDDEN);
		CU_ASSERT(strncmp(text, "denied: ", 8) == 0);
		CU_ASSERT(strstr(text, "read-only in plan mode") != NULL);
		free(text);
	}
	CU_ASSERT(file_is(tmp_project, "index.html", index_html));
	CU_ASSERT_PTR_NULL(get_file(tmp_project, "new.txt"));
	CU_ASSERT_EQUAL(t.files_changed, 0);
	CU_ASSERT_EQUAL(run_tool(&t, "read_file", "{\"path\": \"index.html\"}", &text), 0);
	free(text);
	defs = svc_agent__tools_json(1, 0);
	CU_ASSERT_EQUAL(json_object_array_length(defs), 3);
	CU_ASSERT(strstr(json_object_to_json_string(defs), "write_file") == NULL);
	json_object_put(defs);
	defs = svc_agent__tools_json(0, 1);
	CU_ASSERT_EQUAL(json_object_array_length(defs), 6);
	CU_ASSERT(strstr(json_object_to_json_string(defs), "input_schema") != NULL);
	json_object_put(defs);
	drop_project();
}

static void test_agent_tools_bad_calls(void)
{
	struct svc_agent__tools t = { .mode = "build" };
	char *text = NULL, *big;
	size_t n = 100 * 1024;

	make_project();
	t.root = tmp_project;
	CU_ASSERT_EQUAL(run_tool(&t, "rm_rf", "{}", &text), SVC_E_NOT_FOUND);
	CU_ASSERT(strstr(text, "unknown tool") != NULL);
	free(text);
	CU_ASSERT_EQUAL(run_tool(&t, "read_file", "{\"file\": \"index.html\"}", &text), SVC_E_VALIDATION);
	CU_ASSERT(strstr(text, "missing string argument \"path\"") != NULL);
	free(text);
	CU_ASSERT_EQUAL(run_tool(&t, "write_file", "{\"path\": \"a.txt\", \"content\": 5}", &text), SVC_E_VALIDATION);
	free(text);
	/* a large result is cut for the model, with a note */
	big = malloc(n + 1);
	CU_ASSERT_PTR_NOT_NULL_FATAL(big);
	memset(big, 'a', n);
	big[n] = '\0';
	put_file(tmp_project, "big.txt", big);
	free(big);
	CU_ASSERT_EQUAL(run_tool(&t, "read_file", "{\"path\": \"big.txt\"}", &text), 0);
	CU_ASSERT(strlen(text) < SVC_AGENT__MAX_RESULT + 128);
	CU_ASSERT(strlen(text) > SVC_AGENT__MAX_RESULT);
	CU_ASSERT(strstr(text, "[cut: the result has 102400 bytes") != NULL);
	free(text);
	drop_project();
}

/* ---- the loop against tests/fixtures/provider_double.py ---- */

static pid_t double_pid;
static int double_port_no;
static char double_dir[64];

/* Where the source tree is: $SVC_SRCDIR, else abs_top_srcdir from the build's Makefile, else ../.. of the binary. */
static int find_double(char *out, size_t outsz)
{
	const char *env = getenv("SVC_SRCDIR");
	char exe[1024], mk[1100], line[1200], *slash;
	ssize_t n;
	FILE *f;

	if (env && env[0]) {
		snprintf(out, outsz, "%.900s/tests/fixtures/provider_double.py", env);
		return access(out, R_OK) == 0 ? 0 : -1;
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return -1;
	exe[n] = '\0';
	slash = strrchr(exe, '/');
	if (!slash)
		return -1;
	*slash = '\0'; /* .../tests/unit */
	snprintf(mk, sizeof(mk), "%s/../../Makefile", exe);
	f = fopen(mk, "r");
	while (f && fgets(line, sizeof(line), f)) {
		if (strncmp(line, "abs_top_srcdir = ", 17) == 0) {
			line[strcspn(line, "\n")] = '\0';
			snprintf(out, outsz, "%.900s/tests/fixtures/provider_double.py", line + 17);
			break;
		}
	}
	if (f)
		fclose(f);
	if (access(out, R_OK) == 0)
		return 0;
	snprintf(out, outsz, "%.900s/../../tests/fixtures/provider_double.py", exe);
	return access(out, R_OK) == 0 ? 0 : -1;
}

/* Starts the double once for the suite; returns its port, or 0 after a CU_FAIL that says why. */
static int double_port(void)
{
	char script[1200], portfile[128], buf[32];
	int i, status, fd;
	FILE *f;

	if (double_port_no)
		return double_port_no;
	script[0] = '\0';
	if (find_double(script, sizeof(script)) < 0) {
		fprintf(stderr, "\ntest_agent: cannot find tests/fixtures/provider_double.py; set SVC_SRCDIR to the source tree\n");
		CU_FAIL("provider_double.py not found (set SVC_SRCDIR)");
		return 0;
	}
	if (!double_dir[0]) {
		snprintf(double_dir, sizeof(double_dir), "/tmp/svc-agent-double-XXXXXX");
		if (!mkdtemp(double_dir)) {
			double_dir[0] = '\0';
			CU_FAIL("mkdtemp");
			return 0;
		}
	}
	snprintf(portfile, sizeof(portfile), "%s/port", double_dir);
	double_pid = fork();
	if (double_pid == 0) {
		fd = open("/dev/null", O_WRONLY);
		if (fd >= 0 && !getenv("SVC_TEST_VERBOSE"))
			dup2(fd, 2);
		execlp("python3", "python3", script, "--port", "0", "--port-file", portfile, (char *)NULL);
		_exit(127);
	}
	if (double_pid < 0) {
		CU_FAIL("fork");
		return 0;
	}
	/* 30 s: python3 starting on a machine with a load of 30 was seen to take over 5 s */
	for (i = 0; i < 600; i++) {
		f = fopen(portfile, "r");
		if (f) {
			uint64_t port = 0;

			if (fgets(buf, sizeof(buf), f)) {
				buf[strcspn(buf, "\n")] = '\0';
				if (svc_parse_u64(buf, 65535, &port) == 0)
					double_port_no = (int)port;
			}
			fclose(f);
			if (double_port_no > 0)
				return double_port_no;
		}
		if (waitpid(double_pid, &status, WNOHANG) == double_pid) {
			double_pid = 0;
			fprintf(stderr, "\ntest_agent: the provider double did not start (exit status %d): is python3 installed?\n",
				WIFEXITED(status) ? WEXITSTATUS(status) : -1);
			CU_FAIL("python3 tests/fixtures/provider_double.py did not start (is python3 installed?)");
			return 0;
		}
		usleep(50 * 1000);
	}
	CU_FAIL("the provider double did not write its port within 30 s");
	return 0;
}

static int agent_suite_cleanup(void)
{
	char path[128];

	if (double_pid > 0) {
		kill(double_pid, SIGTERM);
		waitpid(double_pid, NULL, 0);
		double_pid = 0;
	}
	if (double_dir[0]) {
		snprintf(path, sizeof(path), "%s/port", double_dir);
		unlink(path);
		rmdir(double_dir);
	}
	return 0;
}

/* GET or POST `path` of the double; returns the parsed JSON answer (caller puts) or NULL. */
static struct json_object *double_http(const char *method, const char *path)
{
	struct svc_outbound_req req;
	struct svc_outbound_xfer x;
	struct json_object *doc = NULL;
	char url[256];

	snprintf(url, sizeof(url), "http://127.0.0.1:%d%s", double_port_no, path);
	memset(&req, 0, sizeof(req));
	req.url = url;
	req.method = method;
	req.reach = SVC_OUTBOUND_INTERNAL; /* the test's own double on loopback */
	req.max_body = 8 * 1024 * 1024;
	if (svc_outbound_request(&req, &x) == 0)
		svc_agent__json_parse(svc_buf_str(&x.body), x.body.len, &doc);
	svc_outbound_xfer_dispose(&x);
	return doc;
}

/* Follows a path of object keys and array indexes ("body", "messages", "#2", "role") through `doc`. */
static struct json_object *dig(struct json_object *doc, const char *const *keys)
{
	for (; doc && *keys; keys++) {
		uint64_t i;

		if ((*keys)[0] == '#')
			doc = svc_parse_u64(*keys + 1, 1000, &i) == 0 ? json_object_array_get_idx(doc, (size_t)i) : NULL;
		else if (!json_object_object_get_ex(doc, *keys, &doc))
			doc = NULL;
	}
	return doc;
}

#define DIG(doc, ...) dig((doc), (const char *const[]){ __VA_ARGS__, NULL })

static const char *dig_str(struct json_object *doc, const char *const *keys)
{
	struct json_object *v = dig(doc, keys);

	return v && json_object_is_type(v, json_type_string) ? json_object_get_string(v) : "";
}

#define DIG_STR(doc, ...) dig_str((doc), (const char *const[]){ __VA_ARGS__, NULL })

/* The types of the recorded events, comma-separated. */
static void ev_types(struct rec *r, char *out, size_t outsz)
{
	size_t i, n = json_object_array_length(r->events), len = 0;

	out[0] = '\0';
	for (i = 0; i < n; i++) {
		int k = snprintf(out + len, outsz - len, "%s%s", i ? "," : "", ev_type(r, i));

		if (k < 0 || (size_t)k >= outsz - len)
			break;
		len += (size_t)k;
	}
}

/* Index of the first event of `type`, or -1. */
static int ev_find(struct rec *r, const char *type)
{
	size_t i, n = json_object_array_length(r->events);

	for (i = 0; i < n; i++) {
		if (strcmp(ev_type(r, i), type) == 0)
			return (int)i;
	}
	return -1;
}

static void turn_init(struct svc_agent_turn *t, const char *protocol, const char *mode, const char *text, struct rec *r)
{
	static char base[64];

	snprintf(base, sizeof(base), "http://127.0.0.1:%d/v1", double_port_no);
	memset(t, 0, sizeof(*t));
	t->provider.protocol = protocol;
	t->provider.base_url = base;
	t->provider.api_key = "sk-test-0123456789";
	t->provider.model = "double-model";
	t->project_dir = tmp_project;
	t->mode = mode;
	t->user_text = text;
	t->emit = rec_emit;
	t->ctx = r;
	t->timeout_secs = 30;
}

static const char footer_html[] =
	"<html><body><main>\n<p>Hi</p>\n</main>\n<footer class=\"site-footer\">Made with svc</footer></body></html>\n";

static const char footer_events[] =
	"assistant.message_delta,assistant.message_delta,assistant.message_delta,tool.call,tool.result,"
	"assistant.message_delta,assistant.message_delta,assistant.message_delta,assistant.message,session.usage_info";

static void check_footer_events(struct rec *r)
{
	struct json_object *args, *usage, *v;
	char types[1024], joined[256];
	int i;

	ev_types(r, types, sizeof(types));
	CU_ASSERT_STRING_EQUAL(types, footer_events);
	ev_join(r, "assistant.message_delta", "delta", joined, sizeof(joined));
	CU_ASSERT_STRING_EQUAL(joined, "I'll add a footer.\n\nAdded a footer to index.html.");
	i = ev_find(r, "tool.call");
	CU_ASSERT_FATAL(i >= 0);
	CU_ASSERT_STRING_EQUAL(svc_agent__json_str(ev_payload(r, (size_t)i), "tool"), "edit_file");
	CU_ASSERT(strstr(svc_agent__json_str(ev_payload(r, (size_t)i), "id"), "footer_1") != NULL);
	args = DIG(ev_payload(r, (size_t)i), "args");
	CU_ASSERT_FATAL(args && json_object_is_type(args, json_type_object));
	CU_ASSERT_STRING_EQUAL(svc_agent__json_str(args, "path"), "index.html");
	CU_ASSERT_STRING_EQUAL(svc_agent__json_str(args, "old_string"), "</main>");
	CU_ASSERT_STRING_EQUAL(svc_agent__json_str(args, "new_string"),
			       "</main>\n<footer class=\"site-footer\">Made with svc</footer>");
	i = ev_find(r, "tool.result");
	CU_ASSERT_FATAL(i >= 0);
	CU_ASSERT(strstr(svc_agent__json_str(ev_payload(r, (size_t)i), "result"), "edited index.html") != NULL);
	i = ev_find(r, "assistant.message");
	CU_ASSERT_FATAL(i >= 0);
	CU_ASSERT_STRING_EQUAL(svc_agent__json_str(ev_payload(r, (size_t)i), "text"),
			       "I'll add a footer.\n\nAdded a footer to index.html.");
	i = ev_find(r, "session.usage_info");
	CU_ASSERT_FATAL(i >= 0);
	usage = ev_payload(r, (size_t)i);
	CU_ASSERT_EQUAL(json_object_get_int64(DIG(usage, "inputTokens")), 320);
	CU_ASSERT_EQUAL(json_object_get_int64(DIG(usage, "outputTokens")), 42);
	v = DIG(usage, "cost");
	CU_ASSERT(v && json_object_is_type(v, json_type_double));
	CU_ASSERT_DOUBLE_EQUAL(json_object_get_double(v), 320 * 2.5 / 1e6 + 42 * 10.0 / 1e6, 1e-12);
}

static void test_agent_loop_openai_add_footer(void)
{
	struct svc_agent_turn t;
	struct svc_agent_result out;
	struct json_object *reqs, *req2, *m;
	struct rec r;
	size_t i, n;
	int saw_tool = 0;

	if (!double_port())
		return;
	json_object_put(double_http("POST", "/_reset"));
	make_project();
	rec_init(&r);
	turn_init(&t, NULL, "build", "Please add a footer", &r);
	t.provider.price_input_per_mtok = 2.5;
	t.provider.price_output_per_mtok = 10.0;
	CU_ASSERT_EQUAL(svc_agent_run(&t, &out), 0);
	check_footer_events(&r);
	CU_ASSERT(file_is(tmp_project, "index.html", footer_html));
	CU_ASSERT_EQUAL(out.files_changed, 1);
	CU_ASSERT_EQUAL(out.input_tokens, 320);
	CU_ASSERT_EQUAL(out.output_tokens, 42);

	reqs = double_http("GET", "/_requests");
	CU_ASSERT_FATAL(reqs && json_object_array_length(reqs) == 2);
	CU_ASSERT_STRING_EQUAL(DIG_STR(reqs, "#0", "path"), "/v1/chat/completions");
	CU_ASSERT_STRING_EQUAL(DIG_STR(reqs, "#0", "headers", "authorization"), "Bearer sk-test-0123456789");
	CU_ASSERT_STRING_EQUAL(DIG_STR(reqs, "#0", "body", "model"), "double-model");
	CU_ASSERT(json_object_get_boolean(DIG(reqs, "#0", "body", "stream")));
	CU_ASSERT(json_object_get_boolean(DIG(reqs, "#0", "body", "stream_options", "include_usage")));
	CU_ASSERT_STRING_EQUAL(DIG_STR(reqs, "#0", "body", "messages", "#0", "role"), "system");
	CU_ASSERT(strstr(DIG_STR(reqs, "#0", "body", "messages", "#0", "content"), "static web app") != NULL);
	CU_ASSERT_STRING_EQUAL(DIG_STR(reqs, "#0", "body", "messages", "#1", "content"), "Please add a footer");
	CU_ASSERT_EQUAL(json_object_array_length(DIG(reqs, "#0", "body", "tools")), 6);
	CU_ASSERT_STRING_EQUAL(DIG_STR(reqs, "#0", "body", "tools", "#0", "type"), "function");
	/* the second call carries the assistant's tool call and the tool's result */
	req2 = DIG(reqs, "#1", "body", "messages");
	n = req2 ? json_object_array_length(req2) : 0;
	for (i = 0; i < n; i++) {
		m = json_object_array_get_idx(req2, i);
		if (strcmp(DIG_STR(m, "role"), "tool") == 0) {
			saw_tool = 1;
			CU_ASSERT_STRING_EQUAL(DIG_STR(m, "tool_call_id"), "call_footer_1");
			CU_ASSERT(strstr(DIG_STR(m, "content"), "edited index.html") != NULL);
			CU_ASSERT_STRING_EQUAL(DIG_STR(json_object_array_get_idx(req2, i - 1), "tool_calls", "#0", "function", "name"),
					       "edit_file");
		}
	}
	CU_ASSERT(saw_tool);
	json_object_put(reqs);
	rec_dispose(&r);
	drop_project();
}

static void test_agent_loop_anthropic_add_footer(void)
{
	struct svc_agent_turn t;
	struct svc_agent_result out;
	struct json_object *reqs, *msgs, *blocks;
	struct rec r;

	if (!double_port())
		return;
	json_object_put(double_http("POST", "/_reset"));
	make_project();
	rec_init(&r);
	turn_init(&t, "anthropic", "build", "add a footer, please", &r);
	t.provider.price_input_per_mtok = 2.5;
	t.provider.price_output_per_mtok = 10.0;
	CU_ASSERT_EQUAL(svc_agent_run(&t, &out), 0);
	check_footer_events(&r);
	CU_ASSERT(file_is(tmp_project, "index.html", footer_html));
	CU_ASSERT_EQUAL(out.files_changed, 1);

	reqs = double_http("GET", "/_requests");
	CU_ASSERT_FATAL(reqs && json_object_array_length(reqs) == 2);
	CU_ASSERT_STRING_EQUAL(DIG_STR(reqs, "#0", "path"), "/v1/messages");
	CU_ASSERT_STRING_EQUAL(DIG_STR(reqs, "#0", "headers", "x-api-key"), "sk-test-0123456789");
	CU_ASSERT_STRING_EQUAL(DIG_STR(reqs, "#0", "headers", "anthropic-version"), "2023-06-01");
	CU_ASSERT_PTR_NULL(DIG(reqs, "#0", "headers", "authorization"));
	CU_ASSERT(json_object_get_int(DIG(reqs, "#0", "body", "max_tokens")) > 0);
	CU_ASSERT(strstr(DIG_STR(reqs, "#0", "body", "system"), "static web app") != NULL);
	CU_ASSERT_PTR_NOT_NULL(DIG(reqs, "#0", "body", "tools", "#0", "input_schema"));
	msgs = DIG(reqs, "#1", "body", "messages");
	CU_ASSERT_FATAL(msgs && json_object_array_length(msgs) == 3);
	CU_ASSERT_STRING_EQUAL(DIG_STR(msgs, "#1", "role"), "assistant");
	CU_ASSERT_STRING_EQUAL(DIG_STR(msgs, "#1", "content", "#1", "type"), "tool_use");
	CU_ASSERT_STRING_EQUAL(DIG_STR(msgs, "#1", "content", "#1", "input", "old_string"), "</main>");
	blocks = DIG(msgs, "#2", "content");
	CU_ASSERT_STRING_EQUAL(DIG_STR(msgs, "#2", "role"), "user");
	CU_ASSERT_STRING_EQUAL(DIG_STR(blocks, "#0", "type"), "tool_result");
	CU_ASSERT_STRING_EQUAL(DIG_STR(blocks, "#0", "tool_use_id"), "toolu_footer_1");
	json_object_put(reqs);
	rec_dispose(&r);
	drop_project();
}

static void test_agent_loop_provider_errors(void)
{
	struct svc_agent_turn t;
	struct svc_agent_result out;
	struct rec r;

	if (!double_port())
		return;
	make_project();
	rec_init(&r);
	turn_init(&t, NULL, "build", "hit the rate limit", &r);
	CU_ASSERT_EQUAL(svc_agent_run(&t, &out), SVC_E_MODEL_UNAVAILABLE);
	/* the status and a fixed sentence: the provider's own words are only logged (finding 3 of issue 17) */
	{
		static const char want[] = "the model provider answered 429 Too Many Requests: the provider's rate limit or quota is reached";

		CU_ASSERT(strncmp(out.message, want, sizeof want - 1) == 0);
	}
	CU_ASSERT(strstr(out.message, "Rate limit reached") == NULL);
	CU_ASSERT(strstr(out.message, "sk-test") == NULL);
	CU_ASSERT_EQUAL(json_object_array_length(r.events), 0);

	turn_init(&t, "anthropic", "build", "hit the rate limit", &r);
	CU_ASSERT_EQUAL(svc_agent_run(&t, &out), SVC_E_MODEL_UNAVAILABLE);
	CU_ASSERT(strstr(out.message, "429") != NULL && strstr(out.message, "exceeded your rate limit") == NULL);

	turn_init(&t, NULL, "build", "cause a server error", &r);
	CU_ASSERT_EQUAL(svc_agent_run(&t, &out), SVC_E_MODEL_UNAVAILABLE);
	CU_ASSERT_STRING_EQUAL(out.message, "the model provider answered 500 Internal Server Error: the provider failed");

	turn_init(&t, NULL, "build", "hello", &r);
	t.provider.base_url = "http://127.0.0.1:1/v1";
	CU_ASSERT_EQUAL(svc_agent_run(&t, &out), SVC_E_MODEL_UNAVAILABLE);
	CU_ASSERT(strstr(out.message, "could not reach the model provider") != NULL);

	t.provider.base_url = "ftp://127.0.0.1/v1";
	CU_ASSERT_EQUAL(svc_agent_run(&t, &out), SVC_E_NO_PROVIDER);

	t.provider.base_url = NULL;
	CU_ASSERT_EQUAL(svc_agent_run(&t, &out), SVC_E_NO_PROVIDER);
	CU_ASSERT(out.message[0] != '\0');
	t.provider.base_url = "";
	CU_ASSERT_EQUAL(svc_agent_run(&t, &out), SVC_E_NO_PROVIDER);
	CU_ASSERT_EQUAL(json_object_array_length(r.events), 0);
	rec_dispose(&r);
	drop_project();
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void test_agent_loop_client_gone_aborts(void)
{
	struct svc_agent_turn t;
	struct svc_agent_result out;
	struct json_object *stats;
	struct rec r;
	int64_t start, took;
	int i, closed = 0;

	if (!double_port())
		return;
	json_object_put(double_http("POST", "/_reset"));
	make_project();
	rec_init(&r);
	r.fail_type = "assistant.message_delta";
	r.fail_at = 2; /* the second delta comes 300 ms after the first; the stream lasts 3 s */
	r.fail_with = SVC_E_CLIENT_GONE;
	turn_init(&t, NULL, "build", "be slow", &r);
	start = now_ms();
	CU_ASSERT_EQUAL(svc_agent_run(&t, &out), SVC_E_CLIENT_GONE);
	took = now_ms() - start;
	CU_ASSERT(took < 1500);
	CU_ASSERT_EQUAL(ev_count(&r, "assistant.message_delta"), 2);
	CU_ASSERT_EQUAL(ev_count(&r, "assistant.message"), 0);
	/* the double notices the closed connection at its next write */
	for (i = 0; i < 40 && !closed; i++) {
		stats = double_http("GET", "/_stats");
		closed = stats && json_object_get_int(DIG(stats, "client_closed_early")) >= 1;
		json_object_put(stats);
		if (!closed)
			usleep(100 * 1000);
	}
	CU_ASSERT(closed);
	rec_dispose(&r);
	drop_project();
}

static int cancel_calls;

static int cancel_tick(void *ctx)
{
	(void)ctx;
	return ++cancel_calls >= 2 ? SVC_E_CANCELLED : 0;
}

static void test_agent_loop_tick_cancels(void)
{
	struct svc_agent_turn t;
	struct svc_agent_result out;
	struct rec r;
	int64_t start, took;

	if (!double_port())
		return;
	make_project();
	rec_init(&r);
	turn_init(&t, NULL, "build", "slow please", &r);
	t.tick = cancel_tick; /* the first call is before the provider call, the second about 200 ms into it */
	cancel_calls = 0;
	start = now_ms();
	CU_ASSERT_EQUAL(svc_agent_run(&t, &out), SVC_E_CANCELLED);
	took = now_ms() - start;
	CU_ASSERT(took >= 150 && took < 1500);
	CU_ASSERT_EQUAL(cancel_calls, 2);
	CU_ASSERT(ev_count(&r, "assistant.message_delta") >= 1);
	CU_ASSERT_EQUAL(ev_count(&r, "assistant.message"), 0);
	rec_dispose(&r);
	drop_project();
}

static void test_agent_loop_read_only_denies_writes(void)
{
	struct svc_agent_turn t;
	struct svc_agent_result out;
	struct json_object *reqs;
	struct rec r;
	char types[512];
	int i;

	if (!double_port())
		return;
	json_object_put(double_http("POST", "/_reset"));
	make_project();
	rec_init(&r);
	turn_init(&t, NULL, "plan", "try to write something", &r);
	CU_ASSERT_EQUAL(svc_agent_run(&t, &out), 0);
	ev_types(&r, types, sizeof(types));
	CU_ASSERT_STRING_EQUAL(types, "tool.call,tool.error,assistant.message_delta,assistant.message,session.usage_info");
	i = ev_find(&r, "tool.error");
	CU_ASSERT_FATAL(i >= 0);
	CU_ASSERT(strncmp(svc_agent__json_str(ev_payload(&r, (size_t)i), "error"), "denied: ", 8) == 0);
	CU_ASSERT(strstr(svc_agent__json_str(ev_payload(&r, (size_t)i), "error"), "read-only in plan mode") != NULL);
	CU_ASSERT_PTR_NULL(get_file(tmp_project, "x.txt"));
	CU_ASSERT(file_is(tmp_project, "index.html", index_html));
	CU_ASSERT_EQUAL(out.files_changed, 0);
	reqs = double_http("GET", "/_requests");
	CU_ASSERT_EQUAL(json_object_array_length(DIG(reqs, "#0", "body", "tools")), 3);
	CU_ASSERT(strstr(DIG_STR(reqs, "#0", "body", "messages", "#0", "content"), "read-only") != NULL);
	json_object_put(reqs);
	rec_dispose(&r);
	drop_project();
}

static void test_agent_loop_refused_path_goes_on(void)
{
	struct svc_agent_turn t;
	struct svc_agent_result out;
	struct rec r;
	int i;

	if (!double_port())
		return;
	make_project();
	rec_init(&r);
	turn_init(&t, NULL, "build", "try to escape", &r);
	CU_ASSERT_EQUAL(svc_agent_run(&t, &out), 0);
	i = ev_find(&r, "tool.error");
	CU_ASSERT_FATAL(i >= 0);
	CU_ASSERT(strstr(svc_agent__json_str(ev_payload(&r, (size_t)i), "error"), "refused path") != NULL);
	i = ev_find(&r, "assistant.message");
	CU_ASSERT_FATAL(i >= 0);
	CU_ASSERT_STRING_EQUAL(svc_agent__json_str(ev_payload(&r, (size_t)i), "text"), "I cannot read that.");
	CU_ASSERT_EQUAL(out.files_changed, 0);
	rec_dispose(&r);

	rec_init(&r);
	turn_init(&t, "anthropic", "build", "write a file", &r);
	CU_ASSERT_EQUAL(svc_agent_run(&t, &out), 0);
	CU_ASSERT(file_is(tmp_project, "notes/hello.txt", "hello from the agent\n"));
	CU_ASSERT_EQUAL(out.files_changed, 1);
	rec_dispose(&r);
	drop_project();
}

static void test_agent_loop_reasoning_and_steps(void)
{
	struct svc_agent_turn t;
	struct svc_agent_result out;
	struct rec r;
	char joined[256];
	const char *protocols[] = { "openai", "anthropic" };
	size_t p;
	int i;

	if (!double_port())
		return;
	make_project();
	for (p = 0; p < 2; p++) {
		rec_init(&r);
		turn_init(&t, protocols[p], "chat", "think about it", &r);
		CU_ASSERT_EQUAL(svc_agent_run(&t, &out), 0);
		ev_join(&r, "assistant.reasoning_delta", "delta", joined, sizeof(joined));
		CU_ASSERT_STRING_EQUAL(joined, "Let me think.");
		CU_ASSERT_STRING_EQUAL(ev_type(&r, 0), "assistant.reasoning_delta");
		i = ev_find(&r, "assistant.message");
		CU_ASSERT_FATAL(i >= 0);
		CU_ASSERT_STRING_EQUAL(svc_agent__json_str(ev_payload(&r, (size_t)i), "text"), "Thought about it.");
		CU_ASSERT_EQUAL(out.input_tokens, 30);
		CU_ASSERT_EQUAL(out.output_tokens, 9);
		rec_dispose(&r);
	}
	/* max_steps bounds the model calls: the footer turn needs two */
	rec_init(&r);
	turn_init(&t, NULL, "build", "add a footer", &r);
	t.max_steps = 1;
	CU_ASSERT_EQUAL(svc_agent_run(&t, &out), 0);
	i = ev_find(&r, "assistant.message");
	CU_ASSERT_FATAL(i >= 0);
	CU_ASSERT(strstr(svc_agent__json_str(ev_payload(&r, (size_t)i), "text"), "limit of 1 model calls") != NULL);
	CU_ASSERT_EQUAL(out.input_tokens, 120);
	CU_ASSERT_EQUAL(out.files_changed, 1);
	rec_dispose(&r);
	drop_project();
}

static void test_agent_mode_lookup_custom_and_builtin(void)
{
	const char *table = " review=read:/etc/svc/review.txt ; scaffold=build;;docs-only=read";
	struct svc_agent_mode m;
	char msg[256];

	CU_ASSERT_EQUAL(svc_agent_mode_lookup(table, "review", &m, msg, sizeof msg), 0);
	CU_ASSERT_STRING_EQUAL(m.name, "review");
	CU_ASSERT(m.custom && !m.build);
	CU_ASSERT_STRING_EQUAL(m.prompt_file, "/etc/svc/review.txt");
	CU_ASSERT_EQUAL(svc_agent_mode_lookup(table, "scaffold", &m, msg, sizeof msg), 0);
	CU_ASSERT(m.custom && m.build && m.prompt_file[0] == '\0');
	CU_ASSERT_EQUAL(svc_agent_mode_lookup(table, "docs-only", &m, msg, sizeof msg), 0);
	CU_ASSERT(m.custom && !m.build);
	/* built-in modes whatever the table; an unknown mode behaves as chat */
	CU_ASSERT_EQUAL(svc_agent_mode_lookup(table, "build", &m, msg, sizeof msg), 0);
	CU_ASSERT(!m.custom && m.build);
	CU_ASSERT_EQUAL(svc_agent_mode_lookup(table, "plan", &m, msg, sizeof msg), 0);
	CU_ASSERT(!m.custom && !m.build);
	CU_ASSERT_EQUAL(svc_agent_mode_lookup(table, "scaffold2", &m, msg, sizeof msg), 0);
	CU_ASSERT(!m.custom && !m.build && m.prompt_file[0] == '\0');
	CU_ASSERT_STRING_EQUAL(m.name, "scaffold2");
	CU_ASSERT_EQUAL(svc_agent_mode_lookup("", "scaffold", &m, msg, sizeof msg), 0);
	CU_ASSERT(!m.custom && !m.build);
	CU_ASSERT_EQUAL(svc_agent_mode_lookup(NULL, NULL, &m, msg, sizeof msg), 0);
	CU_ASSERT(!m.build);
	/* a prefix of a configured name is not that mode */
	CU_ASSERT_EQUAL(svc_agent_mode_lookup(table, "rev", &m, msg, sizeof msg), 0);
	CU_ASSERT(!m.custom);
}

static void test_agent_mode_lookup_refuses_malformed_tables(void)
{
	static const char *const bad[] = {
		"review", "=read", "review=write", "review=read:relative/file", "review=read:", "Review=read",
		"build=read", "chat=build", "plan=build", "ok=read;broken", "a-very-long-mode-name-of-more-than-32=read",
	};
	struct svc_agent_mode m;
	char msg[256];
	size_t i;

	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		memset(&m, 0x5a, sizeof m);
		CU_ASSERT_EQUAL(svc_agent_mode_lookup(bad[i], "ok", &m, msg, sizeof msg), SVC_E_VALIDATION);
		CU_ASSERT(strstr(msg, "SVC_AI_MODES") != NULL);
		CU_ASSERT_EQUAL(m.name[0], 0x5a); /* untouched */
	}
}

/*
 * A timeline that cannot be read is an error, not an empty history (the soak
 * of bench/README.md saw a turn run without its history and end as a
 * success): the connection dies inside a transaction, so lib/db does not
 * reconnect, and both reads answer SVC_E_UNAVAILABLE with *out untouched.
 */
static void test_agent_history_db_error_propagates(void)
{
	const char *chat = "00000000-0000-4000-8000-0000000c4a70";
	struct json_object *hist = (struct json_object *)&hist;
	struct svc_config cfg;
	struct svc_db *db = NULL;
	char errbuf[256];
	size_t chars = 77;
	int64_t last = -5;

	if (!getenv("SVC_CONFIG") && !getenv("SVC_DB_SOCKET")) {
		CU_ASSERT_PTR_NULL(getenv("SVC_TEST_REQUIRE_DB"));
		return;
	}
	CU_ASSERT_FATAL(svc_config_load(&cfg, errbuf, sizeof errbuf) == 0);
	CU_ASSERT_FATAL(svc_db_open(&cfg, &db) == 0);
	/* with the database answering: an unknown chat has an empty history */
	CU_ASSERT_EQUAL(svc_agent_history_load(db, chat, &hist, &chars), 0);
	CU_ASSERT_FATAL(hist != NULL && hist != (struct json_object *)&hist);
	CU_ASSERT_EQUAL(json_object_array_length(hist), 0);
	CU_ASSERT_EQUAL(chars, 0);
	json_object_put(hist);
	CU_ASSERT_EQUAL(svc_agent_history_last_event(db, chat, &last), 0);
	CU_ASSERT_EQUAL(last, 0);
	/* the connection dies inside a transaction */
	CU_ASSERT_EQUAL_FATAL(svc_db_begin(db), 0);
	svc_db_exec_script(db, "KILL CONNECTION_ID()");
	hist = NULL;
	last = -5;
	CU_ASSERT_EQUAL(svc_agent_history_load(db, chat, &hist, &chars), SVC_E_UNAVAILABLE);
	CU_ASSERT_PTR_NULL(hist);
	CU_ASSERT_EQUAL(svc_agent_history_last_event(db, chat, &last), SVC_E_UNAVAILABLE);
	CU_ASSERT_EQUAL(last, -5);
	svc_db_rollback(db);
	/* and after the transaction, the next statement connects again */
	CU_ASSERT_EQUAL(svc_agent_history_last_event(db, chat, &last), 0);
	svc_db_close(db);
	svc_config_dispose(&cfg);
}

/*
 * A chat turn whose history cannot be read is refused before its stream with
 * SVC_E_UNAVAILABLE (503, Retry-After) whatever the database said, and leaves
 * nothing behind: the soak of bench/README.md met a failure that was not a lost
 * connection (a temporary table removed under MariaDB), which lib/db answers
 * SVC_E_INTERNAL. Here a temporary table of this session shadows chat_summaries,
 * so the history's first query fails to prepare (unknown column, 1054).
 */
static void test_agent_chat_open_history_failure_is_unavailable(void)
{
	const char *user = "00000000-0000-4000-8000-0000000c4a71", *ws = "00000000-0000-4000-8000-0000000c4a72";
	const char *project = "00000000-0000-4000-8000-0000000c4a73", *chat_id = "00000000-0000-4000-8000-0000000c4a74";
	struct svc_agent_chat_spec spec;
	struct svc_agent_chat *chat = NULL;
	struct svc_config cfg;
	struct svc_db *db = NULL;
	const char *field = "x";
	char errbuf[256], msg[512];
	int64_t last = -1;

	if (!getenv("SVC_CONFIG") && !getenv("SVC_DB_SOCKET")) {
		CU_ASSERT_PTR_NULL(getenv("SVC_TEST_REQUIRE_DB"));
		return;
	}
	CU_ASSERT_FATAL(svc_config_load(&cfg, errbuf, sizeof errbuf) == 0);
	CU_ASSERT_FATAL(svc_db_open(&cfg, &db) == 0);
	svc_db_exec_script(db, "DELETE FROM users WHERE id = '00000000-0000-4000-8000-0000000c4a71'");
	CU_ASSERT_EQUAL_FATAL(svc_db_exec_script(db,
		"INSERT INTO users (id, email, created_at, updated_at) VALUES ('00000000-0000-4000-8000-0000000c4a71', "
		"'history-failure@unit.invalid', NOW(3), NOW(3));"
		"INSERT INTO workspaces (id, name, kind, created_by, created_at, updated_at) VALUES "
		"('00000000-0000-4000-8000-0000000c4a72', 'unit', 'personal', '00000000-0000-4000-8000-0000000c4a71', NOW(3), NOW(3));"
		"INSERT INTO projects (id, workspace_id, slug, name, created_by, created_at, updated_at) VALUES "
		"('00000000-0000-4000-8000-0000000c4a73', '00000000-0000-4000-8000-0000000c4a72', 'unit-history-failure', 'unit', "
		"'00000000-0000-4000-8000-0000000c4a71', NOW(3), NOW(3));"
		"INSERT INTO chats (id, project_id, mode, created_by, created_at, updated_at) VALUES "
		"('00000000-0000-4000-8000-0000000c4a74', '00000000-0000-4000-8000-0000000c4a73', 'chat', "
		"'00000000-0000-4000-8000-0000000c4a71', NOW(3), NOW(3))"), 0);
	memset(&spec, 0, sizeof spec);
	spec.project_id = project;
	spec.workspace_id = ws;
	spec.chat_id = chat_id;
	spec.user_id = user;
	spec.text = "hello";
	spec.mode = "chat";
	/* the history cannot be read: 503, no user.message stored, the lock released */
	CU_ASSERT_EQUAL_FATAL(svc_db_exec_script(db, "CREATE TEMPORARY TABLE chat_summaries (x INT)"), 0);
	CU_ASSERT_EQUAL(svc_agent_chat_open(db, &cfg, &spec, &chat, &field, msg, sizeof msg), SVC_E_UNAVAILABLE);
	CU_ASSERT_PTR_NULL(chat);
	CU_ASSERT_PTR_NULL(field);
	CU_ASSERT_EQUAL(svc_db_exec_script(db, "DROP TEMPORARY TABLE chat_summaries"), 0);
	CU_ASSERT_EQUAL(svc_agent_history_last_event(db, chat_id, &last), 0);
	CU_ASSERT_EQUAL(last, 0);
	/* once it can be read, the same chat's turn opens (no lock was left behind) and stores its message */
	CU_ASSERT_EQUAL(svc_agent_chat_open(db, &cfg, &spec, &chat, &field, msg, sizeof msg), 0);
	CU_ASSERT_PTR_NOT_NULL(chat);
	svc_agent_chat_close(chat);
	CU_ASSERT_EQUAL(svc_agent_history_last_event(db, chat_id, &last), 0);
	CU_ASSERT(last > 0);
	svc_db_exec_script(db, "DELETE FROM users WHERE id = '00000000-0000-4000-8000-0000000c4a71'");
	svc_db_close(db);
	svc_config_dispose(&cfg);
}

/* The text of the assistant.message_delta events of a step, gathered (test_agent_text_markup_hidden_at_any_split). */
static int text_gather(void *ctx, const char *type, struct json_object *payload)
{
	struct svc_buf *b = ctx;
	struct json_object *d;

	if (strcmp(type, "assistant.message_delta") == 0 && json_object_object_get_ex(payload, "delta", &d))
		svc_buf_adds(b, json_object_get_string(d));
	return 0;
}

/* The text tool protocol: whatever the split of the stream, the markup is never shown and becomes the same calls. */
static void test_agent_text_markup_hidden_at_any_split(void)
{
	static const char answer[] = "I'll do it <b>now</b>. <svc-write path=\"a.html\">\n<p>x</p>\n</svc-write>"
				     "<svc-read path=\"a.html\"/> and <svc-edit path=\"a.html\"><search>\nx\n</search>"
				     "<replace>y</replace></svc-edit>done <svc";
	static const char shown[] = "I'll do it <b>now</b>.  and done <svc";
	size_t len = strlen(answer), cut;

	for (cut = 1; cut < len; cut++) {
		struct svc_agent__step st;
		struct svc_buf got;

		svc_buf_init(&got, 4096);
		svc_agent__step_init(&st, text_gather, &got);
		st.text_mode = 1;
		st.finished = 1;
		CU_ASSERT_EQUAL(svc_agent__step_delta(&st, 0, answer, cut), 0);
		CU_ASSERT_EQUAL(svc_agent__step_delta(&st, 0, answer + cut, len - cut), 0);
		CU_ASSERT_EQUAL(svc_agent__step_end(&st), 0);
		CU_ASSERT_STRING_EQUAL(svc_buf_str(&got), shown);
		CU_ASSERT_STRING_EQUAL(svc_buf_str(&st.shown), shown);
		CU_ASSERT_EQUAL(st.ncalls, 3);
		if (st.ncalls == 3) {
			CU_ASSERT_STRING_EQUAL(st.calls[0].name, "write_file");
			CU_ASSERT_STRING_EQUAL(svc_buf_str(&st.calls[0].args), "{\"path\":\"a.html\",\"content\":\"<p>x<\\/p>\\n\"}");
			CU_ASSERT_STRING_EQUAL(st.calls[1].name, "read_file");
			CU_ASSERT_STRING_EQUAL(st.calls[2].name, "edit_file");
			CU_ASSERT_PTR_NOT_NULL(strstr(svc_buf_str(&st.calls[2].args), "\"old_string\":\"x\",\"new_string\":\"y\""));
		}
		svc_agent__step_dispose(&st);
		svc_buf_dispose(&got);
	}
}

/* issue 29: the loop breaker's memory, the instructions' cut, the caps' arithmetic (lib/agent/agent_guard.c, budget.c) */
static void test_agent_breaker_counts_same_calls(void)
{
	static struct svc_agent__breaker b;

	memset(&b, 0, sizeof b);
	CU_ASSERT_EQUAL(svc_agent__breaker_call(&b, "read_file", "{\"path\":\"a\"}"), 1);
	CU_ASSERT_EQUAL(svc_agent__breaker_call(&b, "read_file", "{\"path\":\"b\"}"), 1);
	CU_ASSERT_EQUAL(svc_agent__breaker_call(&b, "list_files", "{\"path\":\"a\"}"), 1);
	CU_ASSERT_EQUAL(svc_agent__breaker_call(&b, "read_file", "{\"path\":\"a\"}"), 2);
	CU_ASSERT_EQUAL(svc_agent__breaker_call(&b, "read_file", "{\"path\":\"a\"}"), 3);
	/* the name and the arguments are told apart: "ab"+"c" is not "a"+"bc" */
	CU_ASSERT_EQUAL(svc_agent__breaker_call(&b, "ab", "c"), 1);
	CU_ASSERT_EQUAL(svc_agent__breaker_call(&b, "a", "bc"), 1);
}

static void test_agent_breaker_counts_idle_steps(void)
{
	struct svc_agent__breaker b;

	memset(&b, 0, sizeof b);
	CU_ASSERT_EQUAL(svc_agent__breaker_step(&b, 0), 1);
	CU_ASSERT_EQUAL(svc_agent__breaker_step(&b, 0), 2);
	CU_ASSERT_EQUAL(svc_agent__breaker_step(&b, 1), 0);
	CU_ASSERT_EQUAL(svc_agent__breaker_step(&b, 1), 1);
}

static void test_agent_instructions_cut_with_a_note(void)
{
	struct svc_agent_turn t;
	struct svc_buf b;
	char big[300];
	const char *ws, *pr, *cut;

	memset(&t, 0, sizeof t);
	memset(big, 'x', sizeof big - 3);
	memcpy(big + 100, "\xc3\xa9", 2); /* an é across byte 101: the cut never splits it */
	big[sizeof big - 1] = '\0';
	t.ws_instructions = "WS-RULE";
	t.project_instructions = big;
	t.instructions_max = 101;
	svc_buf_init(&b, svc_agent__instructions_room(&t));
	CU_ASSERT_EQUAL(svc_agent__instructions_add(&t, &b), 0);
	ws = strstr(svc_buf_str(&b), "WS-RULE");
	pr = strstr(svc_buf_str(&b), "AGENTS.md");
	cut = strstr(svc_buf_str(&b), "were cut at 100 bytes");
	CU_ASSERT_PTR_NOT_NULL(ws);
	CU_ASSERT_PTR_NOT_NULL(pr);
	CU_ASSERT_PTR_NOT_NULL(cut);
	CU_ASSERT(ws && pr && ws < pr);
	CU_ASSERT(svc_utf8_valid(svc_buf_str(&b), b.len));
	svc_buf_dispose(&b);
}

static void test_agent_budget_blocks_and_warns(void)
{
	struct svc_agent_budget bd;
	double spent[SVC_AGENT_CAP__MAX] = { 0 };
	struct json_object *ev;
	char msg[300];

	memset(&bd, 0, sizeof bd);
	bd.caps[SVC_AGENT_CAP_PROJECT_DAY] = (struct svc_agent_cap_setting){ 1, 0.001, 80, 1, "", 0 };
	bd.caps[SVC_AGENT_CAP_WORKSPACE_DAY] = (struct svc_agent_cap_setting){ 1, 0.001, 80, 0, "", 0 };
	spent[SVC_AGENT_CAP_PROJECT_DAY] = 0.0008;
	CU_ASSERT_EQUAL(svc_agent_budget_blocked(&bd, spent), -1);
	CU_ASSERT_EQUAL(svc_agent_budget_warns(&bd, SVC_AGENT_CAP_PROJECT_DAY, 0.0008), 1);
	CU_ASSERT_EQUAL(svc_agent_budget_warns(&bd, SVC_AGENT_CAP_PROJECT_DAY, 0.000799), 0);
	spent[SVC_AGENT_CAP_WORKSPACE_DAY] = 5; /* warns only: never blocks */
	spent[SVC_AGENT_CAP_PROJECT_DAY] = 0.001;
	CU_ASSERT_EQUAL(svc_agent_budget_blocked(&bd, spent), SVC_AGENT_CAP_PROJECT_DAY);
	ev = svc_agent_budget_event(&bd, SVC_AGENT_CAP_PROJECT_DAY, 0.001, "Refused", msg, sizeof msg);
	CU_ASSERT_PTR_NOT_NULL(ev);
	CU_ASSERT_PTR_NOT_NULL(strstr(msg, "this project's daily cap of 0.001 USD is used up"));
	json_object_put(ev);
	/* a member's own cap (schema 031) names itself so in the message */
	bd.caps[SVC_AGENT_CAP_MEMBER_DAY] = (struct svc_agent_cap_setting){ 1, 0.002, 50, 1, "", 1 };
	ev = svc_agent_budget_event(&bd, SVC_AGENT_CAP_MEMBER_DAY, 0.002, "Refused", msg, sizeof msg);
	CU_ASSERT_PTR_NOT_NULL(strstr(msg, "your daily cap in this workspace (set for you) of 0.002 USD is used up"));
	json_object_put(ev);
	bd.caps[SVC_AGENT_CAP_MEMBER_DAY].own = 0;
	json_object_put(svc_agent_budget_event(&bd, SVC_AGENT_CAP_MEMBER_DAY, 0.002, "Refused", msg, sizeof msg));
	CU_ASSERT_PTR_NULL(strstr(msg, "set for you"));
	CU_ASSERT_EQUAL(svc_agent_cap_by_name("tokenDay"), SVC_AGENT_CAP_TOKEN_DAY);
	CU_ASSERT_EQUAL(svc_agent_cap_by_name("nope"), -1);
}

/* A check's build error: the fix round's message names its file and line and says the page waits for the build;
 * the breaker takes the same error one line lower as the same, another message as another. */
static void test_agent_check_build_error_message_and_breaker(void)
{
	struct svc_check_report r;
	struct json_object *ev, *moved, *other;
	char *msg, note[512];

	memset(&r, 0, sizeof r);
	svc_preview_check_add(&r, "build", "Expected \")\" but found \"}\"", "src/App.tsx", 7);
	ev = svc_agent_check_event(&r, NULL, 0, 1);
	msg = svc_agent_check_message(ev);
	CU_ASSERT_PTR_NOT_NULL_FATAL(msg);
	CU_ASSERT(strncmp(msg, SVC_AGENT_CHECK_PREFIX "\n", strlen(SVC_AGENT_CHECK_PREFIX) + 1) == 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(msg, "\n- build in src/App.tsx line 7: Expected \")\" but found \"}\"\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(msg, "built (npm run build) before its page is loaded"));
	CU_ASSERT_PTR_NULL(strstr(msg, "The page is loaded from index.html"));
	free(msg);
	r.errors[0].line = 8;
	moved = svc_agent_check_event(&r, NULL, 1, 0);
	CU_ASSERT_EQUAL(svc_agent_check_same(ev, moved, note, sizeof note), 1);
	CU_ASSERT_PTR_NOT_NULL(strstr(note, "build in src/App.tsx line 8"));
	snprintf(r.errors[0].message, sizeof r.errors[0].message, "Unexpected token");
	other = svc_agent_check_event(&r, NULL, 1, 0);
	CU_ASSERT_EQUAL(svc_agent_check_same(ev, other, note, sizeof note), 0);
	/* a page's errors keep the page's words */
	memset(&r, 0, sizeof r);
	svc_preview_check_add(&r, "exception", "Uncaught TypeError: x", "/app.js", 3);
	json_object_put(other);
	other = svc_agent_check_event(&r, NULL, 0, 1);
	msg = svc_agent_check_message(other);
	CU_ASSERT(msg && strstr(msg, "The page is loaded from index.html") && !strstr(msg, "npm run build"));
	free(msg);
	json_object_put(ev);
	json_object_put(moved);
	json_object_put(other);
}

SVC_TEST_SUITE(agent)
{
	CU_pSuite s = CU_add_suite("agent", NULL, agent_suite_cleanup);

	CU_add_test(s, "test_agent_sse_whole_stream", test_agent_sse_whole_stream);
	CU_add_test(s, "test_agent_check_build_error_message_and_breaker", test_agent_check_build_error_message_and_breaker);
	CU_add_test(s, "test_agent_history_db_error_propagates", test_agent_history_db_error_propagates);
	CU_add_test(s, "test_agent_chat_open_history_failure_is_unavailable",
		    test_agent_chat_open_history_failure_is_unavailable);
	CU_add_test(s, "test_agent_sse_byte_by_byte", test_agent_sse_byte_by_byte);
	CU_add_test(s, "test_agent_sse_random_splits", test_agent_sse_random_splits);
	CU_add_test(s, "test_agent_sse_overlong_line", test_agent_sse_overlong_line);
	CU_add_test(s, "test_agent_sse_callback_error_stops", test_agent_sse_callback_error_stops);
	CU_add_test(s, "test_agent_openai_chunks", test_agent_openai_chunks);
	CU_add_test(s, "test_agent_openai_calls_without_index", test_agent_openai_calls_without_index);
	CU_add_test(s, "test_agent_openai_malformed", test_agent_openai_malformed);
	CU_add_test(s, "test_agent_openai_emit_error_stops", test_agent_openai_emit_error_stops);
	CU_add_test(s, "test_agent_anthropic_events", test_agent_anthropic_events);
	CU_add_test(s, "test_agent_anthropic_error_event", test_agent_anthropic_error_event);
	CU_add_test(s, "test_agent_request_bodies", test_agent_request_bodies);
	CU_add_test(s, "test_agent_parse_args", test_agent_parse_args);
	CU_add_test(s, "test_agent_utf8_cut", test_agent_utf8_cut);
	CU_add_test(s, "test_agent_tools_list_read_search", test_agent_tools_list_read_search);
	CU_add_test(s, "test_agent_tools_write_edit_delete", test_agent_tools_write_edit_delete);
	CU_add_test(s, "test_agent_tools_refuse_paths", test_agent_tools_refuse_paths);
	CU_add_test(s, "test_agent_tools_read_only_mode", test_agent_tools_read_only_mode);
	CU_add_test(s, "test_agent_tools_bad_calls", test_agent_tools_bad_calls);
	CU_add_test(s, "test_agent_loop_openai_add_footer", test_agent_loop_openai_add_footer);
	CU_add_test(s, "test_agent_loop_anthropic_add_footer", test_agent_loop_anthropic_add_footer);
	CU_add_test(s, "test_agent_loop_provider_errors", test_agent_loop_provider_errors);
	CU_add_test(s, "test_agent_loop_client_gone_aborts", test_agent_loop_client_gone_aborts);
	CU_add_test(s, "test_agent_loop_tick_cancels", test_agent_loop_tick_cancels);
	CU_add_test(s, "test_agent_loop_read_only_denies_writes", test_agent_loop_read_only_denies_writes);
	CU_add_test(s, "test_agent_loop_refused_path_goes_on", test_agent_loop_refused_path_goes_on);
	CU_add_test(s, "test_agent_loop_reasoning_and_steps", test_agent_loop_reasoning_and_steps);
	CU_add_test(s, "test_agent_mode_lookup_custom_and_builtin", test_agent_mode_lookup_custom_and_builtin);
	CU_add_test(s, "test_agent_breaker_counts_same_calls", test_agent_breaker_counts_same_calls);
	CU_add_test(s, "test_agent_breaker_counts_idle_steps", test_agent_breaker_counts_idle_steps);
	CU_add_test(s, "test_agent_instructions_cut_with_a_note", test_agent_instructions_cut_with_a_note);
	CU_add_test(s, "test_agent_budget_blocks_and_warns", test_agent_budget_blocks_and_warns);
	CU_add_test(s, "test_agent_text_markup_hidden_at_any_split", test_agent_text_markup_hidden_at_any_split);
	CU_add_test(s, "test_agent_mode_lookup_refuses_malformed_tables", test_agent_mode_lookup_refuses_malformed_tables);
}
