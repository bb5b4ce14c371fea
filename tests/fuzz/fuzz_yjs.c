/* fuzz_yjs.c: libFuzzer target for lib/yjs: decode + integrate arbitrary bytes as updates, then encode and read back, packed and unpacked. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "yjs/yjs.h"
#include "yjs/yjs_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Traps unless both buffers hold the same bytes. */
static void same(const struct svc_yjs_buf *a, const struct svc_yjs_buf *b)
{
	if (a->len != b->len || (a->len && memcmp(a->data, b->data, a->len)))
		__builtin_trap();
}

/*
 * Packs string content the way `how` says: items of 1 to 8 bytes and up,
 * frames kept even when they save nothing (3 times in 4, so that small fuzz
 * documents pack), a whole pass or a budget of 16 bytes. Two calls: the
 * first cools hot items, the second packs them.
 */
static void pack(struct svc_yjs_doc *d, unsigned how)
{
	size_t min = 1 + (how >> 2 & 7), budget = (how & 32) ? 16 : SIZE_MAX;
	d->pack_always = (how & 3) != 0;
	svc_yjs_doc_pack(d, min, budget);
	svc_yjs_doc_pack(d, min, budget);
}

/* Encodes the full state and the "files" and "meta" JSON of `d` into `out`. */
static void snapshot(struct svc_yjs_doc *d, struct svc_yjs_buf *out)
{
	out->len = 0;
	svc_yjs_encode_state(d, NULL, 0, out, NULL);
	svc_yjs_map_json(d, "files", out);
	svc_yjs_map_json(d, "meta", out);
}

/*
 * The first byte chooses a split point: the input is applied as two updates
 * (the second part first, so pending structs and deletes are exercised),
 * then as one. Every accepted document is encoded, its encoding applied to a
 * fresh document, and both read as JSON; text edits run on the first file,
 * at positions the last input bytes choose. A twin document gets the same
 * updates and edits with its string content packed before each step
 * (svc_yjs_doc_pack): its updates, encodings and JSON must be the same bytes.
 */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct svc_yjs_doc *doc = NULL, *copy = NULL, *pk = NULL;
	struct svc_yjs_buf out = {0}, enc = {0}, json = {0}, pout = {0}, penc = {0};
	struct svc_yjs_report rep = {0};
	size_t split = 0;
	unsigned how = 0;
	if (size > 0) {
		split = data[0] % (size + 1);
		how = (unsigned)data[0] * 167u + (unsigned)size;
		data++;
		size--;
		if (split > size)
			split = size;
	}
	if (svc_yjs_doc_new(&doc, 7) < 0 || svc_yjs_doc_new(&pk, 7) < 0)
		goto done;
	svc_yjs_apply_update(doc, data + split, size - split, &out, &rep, NULL);
	svc_yjs_apply_update(pk, data + split, size - split, &pout, NULL, NULL);
	pack(pk, how);
	svc_yjs_apply_update(doc, data, split, &out, &rep, NULL);
	svc_yjs_apply_update(pk, data, split, &pout, NULL, NULL);
	pack(pk, how >> 1);
	svc_yjs_apply_update(doc, data, size, &out, &rep, NULL);
	svc_yjs_apply_update(pk, data, size, &pout, NULL, NULL);
	same(&out, &pout);
	svc_yjs_encode_state(doc, NULL, 0, &enc, NULL);
	pack(pk, how >> 2);
	snapshot(pk, &penc);
	snapshot(doc, &json);
	same(&json, &penc);
	if (svc_yjs_doc_new(&copy, 8) == 0) {
		/* the core must accept its own encoding */
		if (svc_yjs_apply_update(copy, enc.data, enc.len, NULL, NULL, NULL) != 0)
			__builtin_trap();
		out.len = 0;
		svc_yjs_state_vector(copy, &out);
		/* a diff against the copy's state vector, from clocks inside packed items */
		json.len = penc.len = 0;
		svc_yjs_encode_state(doc, out.data, out.len, &json, NULL);
		svc_yjs_encode_state(pk, out.data, out.len, &penc, NULL);
		same(&json, &penc);
	}
	if (rep.n) {
		const struct svc_yjs_change *c = &rep.changes[0];
		if (c->root_len == 5 && !memcmp(c->root, "files", 5) &&
		    svc_yjs_text_length(doc, "files", c->key, c->key_len) >= 0) {
			size_t k;
			svc_yjs_text_insert(doc, "files", c->key, c->key_len, 0, "x\xf0\x9f\x98\x80", 5, NULL, NULL);
			svc_yjs_text_insert(pk, "files", c->key, c->key_len, 0, "x\xf0\x9f\x98\x80", 5, NULL, NULL);
			svc_yjs_text_delete(doc, "files", c->key, c->key_len, 1, 1, NULL, NULL);
			svc_yjs_text_delete(pk, "files", c->key, c->key_len, 1, 1, NULL, NULL);
			/* edits at positions the input's last bytes choose (formatting, markers, splits) */
			for (k = 0; k < 6 && k < size; k++) {
				uint8_t b = data[size - 1 - k];
				int64_t len = svc_yjs_text_length(doc, "files", c->key, c->key_len);
				uint64_t at = len > 0 ? (uint64_t)(b >> 1) % (uint64_t)(len + 1) : 0;
				out.len = pout.len = 0;
				pack(pk, how >> (k + 3));
				if ((b & 1) || len <= 0 || at >= (uint64_t)len) {
					svc_yjs_text_insert(doc, "files", c->key, c->key_len, at, "ab", 2, &out, NULL);
					svc_yjs_text_insert(pk, "files", c->key, c->key_len, at, "ab", 2, &pout, NULL);
				} else {
					uint64_t n = 1 + (uint64_t)(b >> 6) % ((uint64_t)len - at);
					svc_yjs_text_delete(doc, "files", c->key, c->key_len, at, n, &out, NULL);
					svc_yjs_text_delete(pk, "files", c->key, c->key_len, at, n, &pout, NULL);
				}
				same(&out, &pout);
			}
			pack(pk, how >> 3);
			svc_yjs_text_replace(doc, "files", c->key, c->key_len, "a\nb\n", 4, NULL, NULL);
			svc_yjs_text_replace(pk, "files", c->key, c->key_len, "a\nb\n", 4, NULL, NULL);
			svc_yjs_map_json(doc, "files", &json);
		}
	}
	snapshot(doc, &enc);
	snapshot(pk, &penc);
	same(&enc, &penc);
done:
	svc_yjs_report_dispose(&rep);
	svc_yjs_buf_dispose(&out);
	svc_yjs_buf_dispose(&enc);
	svc_yjs_buf_dispose(&json);
	svc_yjs_buf_dispose(&pout);
	svc_yjs_buf_dispose(&penc);
	svc_yjs_doc_free(copy);
	svc_yjs_doc_free(doc);
	svc_yjs_doc_free(pk);
	return 0;
}
