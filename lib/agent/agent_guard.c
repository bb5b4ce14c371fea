/* agent_guard.c: what bounds a turn besides its step limit: the loop breaker (the same tool call again and again, steps without a file change) and the instructions put into its system prompt (docs/agent.md "Loop breaker", "Project instructions"). */
#include <stdio.h>
#include <string.h>

#include "agent/agent.h"
#include "core/err.h"

#define DEFAULT_INSTRUCTIONS_MAX (16 * 1024)

/* FNV-1a, 64 bits, over `len` bytes from `h`. */
static uint64_t fnv(uint64_t h, const char *s, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++) {
		h ^= (unsigned char)s[i];
		h *= 1099511628211ULL;
	}
	return h;
}

unsigned svc_agent__breaker_call(struct svc_agent__breaker *b, const char *name, const char *args)
{
	uint64_t h = fnv(14695981039346656037ULL, name, strlen(name) + 1);
	size_t i;

	h = fnv(h, args, strlen(args));
	for (i = 0; i < b->n; i++) {
		if (b->sig[i] == h)
			return ++b->count[i];
	}
	if (b->n < SVC_AGENT__BREAKER_CALLS) {
		b->sig[b->n] = h;
		b->count[b->n++] = 1;
	}
	return 1;
}

unsigned svc_agent__breaker_step(struct svc_agent__breaker *b, unsigned changes)
{
	if (changes != b->changes) {
		b->changes = changes;
		b->idle = 0;
	} else {
		b->idle++;
	}
	return b->idle;
}

/* Adds `head`, then `text` cut at `max` bytes on a UTF-8 boundary, then a note when it was cut. */
static int add_block(struct svc_buf *out, const char *head, const char *text, size_t max)
{
	size_t len = strlen(text), n = svc_utf8_cut(text, len, max);
	char note[200];
	int error;

	if ((error = svc_buf_adds(out, head)) < 0 || (error = svc_buf_add(out, text, n)) < 0)
		return error;
	if (n == len)
		return 0;
	snprintf(note, sizeof note,
		 "\n[svc: these instructions are %zu bytes long and were cut at %zu bytes; the rest is not shown. "
		 "Ask the user if you need it.]",
		 len, n);
	return svc_buf_adds(out, note);
}

int svc_agent__instructions_add(const struct svc_agent_turn *turn, struct svc_buf *out)
{
	size_t max = turn->instructions_max ? turn->instructions_max : DEFAULT_INSTRUCTIONS_MAX;
	int error;

	if (turn->ws_instructions && turn->ws_instructions[0] &&
	    (error = add_block(out, "\n\nInstructions of this workspace (follow them unless the user asks otherwise):\n",
			       turn->ws_instructions, max)) < 0)
		return error;
	if (turn->project_instructions && turn->project_instructions[0] &&
	    (error = add_block(out, "\n\nInstructions of this project (its AGENTS.md; follow them unless the user asks "
				    "otherwise):\n",
			       turn->project_instructions, max)) < 0)
		return error;
	if (turn->project_instructions_note && turn->project_instructions_note[0] &&
	    ((error = svc_buf_adds(out, "\n\n")) < 0 || (error = svc_buf_adds(out, turn->project_instructions_note)) < 0))
		return error;
	return 0;
}

size_t svc_agent__instructions_room(const struct svc_agent_turn *turn)
{
	size_t max = turn->instructions_max ? turn->instructions_max : DEFAULT_INSTRUCTIONS_MAX;

	return 2 * (max + 512) + (turn->project_instructions_note ? strlen(turn->project_instructions_note) : 0) + 8;
}
