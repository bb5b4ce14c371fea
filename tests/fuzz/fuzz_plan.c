/*
 * fuzz_plan.c: libFuzzer target for the plan parser (lib/agent/agent_plan.c):
 * a model's plan-mode answer, prose and JSON mixed as models write them,
 * through svc_agent_plan_parse() and back out as the message that runs it
 * (svc_agent_plan_message()), which must never fail on a plan the parser made
 * except for the documented "no steps" and "too large".
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "agent/agent.h"
#include "core/err.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct json_object *plan = NULL;
	char *text, *msg = NULL;
	int err;

	if (size > 256 * 1024)
		return 0;
	text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	if (svc_agent_plan_parse(text, &plan) == 0) {
		err = svc_agent_plan_message(plan, 64 * 1024, &msg);
		if (err != 0 && err != SVC_E_NOT_FOUND && err != SVC_E_TOO_LARGE)
			__builtin_trap();
		free(msg);
		json_object_put(plan);
	}
	free(text);
	return 0;
}
