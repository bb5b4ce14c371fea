/*
 * fuzz_sse.c: libFuzzer target for the model providers' stream parsers
 * (lib/agent): the server-sent-events splitter (svc_agent__sse_feed) feeding
 * the OpenAI Chat Completions chunk parser or the Anthropic Messages event
 * parser into one answer (struct svc_agent__step), then svc_agent__step_end;
 * with bit 2 of byte 0 in the text tool protocol (toolMode "text",
 * lib/agent/agent_text.c: the <svc-…> markup hidden and parsed into calls).
 *
 * Input: byte 0 picks the provider (bit 0) and the chunk size (bits 1-7,
 * 1..128 bytes: a provider's stream arrives split anywhere); the rest is the
 * response body.
 */
#include <stdint.h>
#include <string.h>

#include "agent/agent.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The loop's emit callback: takes the delta events and keeps nothing. */
static int emit(void *ctx, const char *type, struct json_object *payload)
{
	(void)ctx;
	(void)type;
	(void)payload;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct svc_agent__step st;
	struct svc_agent__sse sse;
	size_t chunk, off;
	int anthropic, err = 0;

	if (size < 1 || size > 1 << 20)
		return 0;
	anthropic = data[0] & 1;
	chunk = (size_t)(data[0] >> 1) + 1;
	svc_agent__step_init(&st, emit, NULL);
	st.text_prefix = (data[0] & 2) ? "\n\n" : NULL;
	st.text_mode = (data[0] & 4) != 0;
	/* a small line cap, so the over-long line and event paths run too */
	svc_agent__sse_init(&sse, 4096, anthropic ? svc_agent__anthropic_event : svc_agent__openai_event, &st);
	for (off = 1; off < size && err == 0; off += chunk) {
		size_t n = size - off < chunk ? size - off : chunk;
		err = svc_agent__sse_feed(&sse, (const char *)data + off, n);
	}
	if (err == 0 && svc_agent__sse_finish(&sse) == 0)
		svc_agent__step_end(&st);
	svc_agent__sse_dispose(&sse);
	svc_agent__step_dispose(&st);
	return 0;
}
