/*
 * fuzz_direct_save.c: libFuzzer target for direct save (lib/project/direct_save.c):
 * the selector parser and matcher over gumbo's tree, and the HTML and CSS
 * patchers, with untrusted files and untrusted patches.
 *
 * Input: byte 0 picks HTML or CSS (bit 0); then the file, a NUL, and up to
 * eight patches, one a line: "SELECTOR\tPROPERTY\tVALUE". A result must be
 * NUL-free text of the length given; the same patches then run on the
 * result, so the parser also reads what the patcher wrote.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "project/direct_save.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_PATCHES 8

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct svc_ds_patch patches[MAX_PATCHES];
	struct svc_ds_change changes[MAX_PATCHES];
	enum svc_ds_kind kind;
	char *text, *src, *p, *out = NULL, msg[256];
	size_t n = 0, src_len, out_len = 0, failed = 0;

	if (size < 1 || size > 256 * 1024)
		return 0;
	kind = (data[0] & 1) ? SVC_DS_CSS : SVC_DS_HTML;
	text = malloc(size);
	if (!text)
		return 0;
	memcpy(text, data + 1, size - 1);
	text[size - 1] = '\0';
	src = text;
	src_len = strlen(src);
	p = src_len + 1 < size ? src + src_len + 1 : NULL;
	while (p && *p && n < MAX_PATCHES) {
		char *nl = strchr(p, '\n'), *t1, *t2;
		if (nl)
			*nl = '\0';
		t1 = strchr(p, '\t');
		t2 = t1 ? strchr(t1 + 1, '\t') : NULL;
		if (t1 && t2) {
			*t1 = *t2 = '\0';
			patches[n].selector = p;
			patches[n].property = t1 + 1;
			patches[n].value = t2 + 1;
			n++;
		}
		p = nl ? nl + 1 : NULL;
	}
	memset(changes, 0, sizeof changes);
	if (svc_ds_apply(kind, src, src_len, patches, n, &out, &out_len, changes, &failed, msg, sizeof msg) == 0) {
		char *again = NULL;
		size_t again_len = 0;
		struct svc_ds_change changes2[MAX_PATCHES];
		memset(changes2, 0, sizeof changes2);
		if (strlen(out) != out_len)
			__builtin_trap();
		/* the same patches on the result: selectors may stop matching (a changed class), which is fine */
		if (svc_ds_apply(kind, out, out_len, patches, n, &again, &again_len, changes2, &failed, msg,
				 sizeof msg) == 0)
			free(again);
		svc_ds_changes_free(changes2, n);
		free(out);
	}
	svc_ds_changes_free(changes, n);
	free(text);
	return 0;
}
