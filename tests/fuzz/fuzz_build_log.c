/*
 * fuzz_build_log.c: libFuzzer target for the reader of a failed build's output
 * (svc_preview_check_build_log() of lib/project/preview_check.c): the input is
 * what a project's build printed (the model writes the project, so every byte
 * is its choice), cleaned as the build's log is (svc_publish_clean_text()),
 * then read for errors. Every error found must be of kind "build" with a
 * message of one line of valid UTF-8 that is not empty, a source without
 * white space or the sandbox's "/build/" in front, and a line >= 0; no more
 * errors kept than found.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "project/preview_check.h"
#include "project/publish.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct svc_check_report r;
	char *text;
	size_t i, len, found;

	if (size > 64 * 1024 || !(text = malloc(size + 1)))
		return 0;
	memset(&r, 0, sizeof r);
	len = svc_publish_clean_text((const char *)data, size, text);
	found = svc_preview_check_build_log(text, len, "/build/", &r);
	if (r.nerrors > found || r.nerrors > SVC_CHECK_ERRORS_MAX)
		__builtin_trap();
	for (i = 0; i < r.nerrors; i++) {
		const struct svc_check_error *e = &r.errors[i];
		if (strcmp(e->kind, "build") != 0 || !e->message[0] || strchr(e->message, '\n') ||
		    !svc_utf8_valid(e->message, strlen(e->message)) || !svc_utf8_valid(e->source, strlen(e->source)) ||
		    strpbrk(e->source, " \t\n") || strncmp(e->source, "/build/", 7) == 0 || e->line < 0)
			__builtin_trap();
	}
	free(text);
	return 0;
}
