/* fuzz_yjs.c: libFuzzer target for lib/yjs: decode + integrate arbitrary bytes as updates, then encode and read back. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "yjs/yjs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/*
 * The first byte chooses a split point: the input is applied as two updates
 * (the second part first, so pending structs and deletes are exercised),
 * then as one. Every accepted document is encoded, its encoding applied to a
 * fresh document, and both read as JSON; text edits run on the first file,
 * at positions the last input bytes choose.
 */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct svc_yjs_doc *doc = NULL, *copy = NULL;
	struct svc_yjs_buf out = {0}, enc = {0}, json = {0};
	struct svc_yjs_report rep = {0};
	size_t split = 0;
	if (size > 0) {
		split = data[0] % (size + 1);
		data++;
		size--;
		if (split > size)
			split = size;
	}
	if (svc_yjs_doc_new(&doc, 7) < 0)
		return 0;
	svc_yjs_apply_update(doc, data + split, size - split, &out, &rep, NULL);
	svc_yjs_apply_update(doc, data, split, &out, &rep, NULL);
	svc_yjs_apply_update(doc, data, size, &out, &rep, NULL);
	svc_yjs_encode_state(doc, NULL, 0, &enc, NULL);
	svc_yjs_map_json(doc, "files", &json);
	svc_yjs_map_json(doc, "meta", &json);
	if (svc_yjs_doc_new(&copy, 8) == 0) {
		/* the core must accept its own encoding */
		if (svc_yjs_apply_update(copy, enc.data, enc.len, NULL, NULL, NULL) != 0)
			__builtin_trap();
		out.len = 0;
		svc_yjs_state_vector(copy, &out);
		svc_yjs_encode_state(doc, out.data, out.len, &json, NULL);
	}
	if (rep.n) {
		const struct svc_yjs_change *c = &rep.changes[0];
		if (c->root_len == 5 && !memcmp(c->root, "files", 5) &&
		    svc_yjs_text_length(doc, "files", c->key, c->key_len) >= 0) {
			size_t k;
			svc_yjs_text_insert(doc, "files", c->key, c->key_len, 0, "x\xf0\x9f\x98\x80", 5, NULL, NULL);
			svc_yjs_text_delete(doc, "files", c->key, c->key_len, 1, 1, NULL, NULL);
			/* edits at positions the input's last bytes choose (formatting, markers, splits) */
			for (k = 0; k < 6 && k < size; k++) {
				uint8_t b = data[size - 1 - k];
				int64_t len = svc_yjs_text_length(doc, "files", c->key, c->key_len);
				uint64_t at = len > 0 ? (uint64_t)(b >> 1) % (uint64_t)(len + 1) : 0;
				out.len = 0;
				if ((b & 1) || len <= 0 || at >= (uint64_t)len)
					svc_yjs_text_insert(doc, "files", c->key, c->key_len, at, "ab", 2, &out, NULL);
				else
					svc_yjs_text_delete(doc, "files", c->key, c->key_len, at,
							    1 + (uint64_t)(b >> 6) % ((uint64_t)len - at), &out, NULL);
			}
			svc_yjs_text_replace(doc, "files", c->key, c->key_len, "a\nb\n", 4, NULL, NULL);
			svc_yjs_map_json(doc, "files", &json);
		}
	}
	svc_yjs_report_dispose(&rep);
	svc_yjs_buf_dispose(&out);
	svc_yjs_buf_dispose(&enc);
	svc_yjs_buf_dispose(&json);
	svc_yjs_doc_free(copy);
	svc_yjs_doc_free(doc);
	return 0;
}
