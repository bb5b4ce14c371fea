/*
 * fuzz_app_decl.c: libFuzzer target for svc.data.json's parser (lib/project/app_decl.c): the input is
 * the file's bytes. A valid declaration has a message-free parse whose every collection and field
 * is found again by name, and records are checked against its first collection; a refused one
 * must say "svc.data.json line N:" with N within the file's lines.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "project/app_decl.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct svc_app_decl *d = NULL;
	char msg[512] = "";
	size_t i, j, lines = 1;
	int err, line = 0;

	if (size > SVC_APP_DECL_MAX + 16)
		return 0;
	for (i = 0; i < size; i++)
		lines += data[i] == '\n';
	err = svc_app_decl_parse((const char *)data, size, &d, msg, sizeof msg);
	if (err == 0) {
		for (i = 0; i < d->ncollections; i++) {
			const struct svc_app_collection *c = &d->collections[i];
			if (svc_app_decl_collection(d, c->name) == NULL)
				__builtin_trap();
			for (j = 0; j < c->nfields; j++)
				if (svc_app_decl_field(c, c->fields[j].name) == NULL)
					__builtin_trap();
		}
		if (d->ncollections) {
			struct json_object *o = json_tokener_parse("{\"a\": 1, \"b\": \"x\", \"c\": null, \"d\": [true]}");
			const char *field = NULL;
			char why[256];
			svc_app_record_check(&d->collections[0], o, 0, &field, why, sizeof why);
			json_object_put(o);
		}
		svc_app_decl_free(d);
	} else if (err == SVC_E_VALIDATION) {
		if (strncmp(msg, "svc.data.json line ", 19) != 0)
			__builtin_trap();
		for (i = 19; msg[i] >= '0' && msg[i] <= '9'; i++)
			line = line * 10 + (msg[i] - '0');
		if (line < 1 || (size_t)line > lines)
			__builtin_trap();
	} else if (err != SVC_E_INTERNAL) {
		__builtin_trap();
	}
	return 0;
}
