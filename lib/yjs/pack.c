/* pack.c: cold ContentString payloads kept zstd-compressed in memory: reading, unpacking and the pack pass (svc's own, not in yjs). */
#include <stdlib.h>
#include <string.h>

#include <zstd.h>

#include "yjs/yjs_int.h"

/* ---- packed strings ---- */

/*
 * zstd level of svc_yjs_doc_pack (-DPACK_LEVEL=n to measure another). On
 * 1 MB of JavaScript: level -1 2.7 ms to 28%, 1 2.9 ms to 24%, 3 4.1 ms to
 * 22%; decompression 0.6 ms for all three. Level 1 keeps the event loop's
 * stalls short for a small loss in ratio.
 */
#ifndef PACK_LEVEL
#define PACK_LEVEL 1
#endif

/* One decompression context per thread, made on first use and kept (decompression runs often). */
static _Thread_local ZSTD_DCtx *pack_dctx;

void svc_yjs__string_decompress(uint8_t *dst, const struct yitem *it)
{
	size_t r;
	if (!pack_dctx) {
		pack_dctx = ZSTD_createDCtx();
		if (!pack_dctx)
			abort();
	}
	r = ZSTD_decompressDCtx(pack_dctx, dst, it->nbytes, it->c.data, it->cap);
	if (ZSTD_isError(r) || r != it->nbytes)
		abort();
}

void svc_yjs__unpack(struct yitem *it)
{
	uint8_t *raw;
	if (!(it->flags & YF_PACKED))
		return;
	raw = svc_yjs__xmalloc(it->nbytes);
	svc_yjs__string_decompress(raw, it);
	free(it->c.data);
	it->c.data = raw;
	it->cap = it->nbytes;
	it->flags = (uint8_t)((it->flags & ~YF_PACKED) | YF_HOT);
}

void svc_yjs__string_put(struct svc_yjs_buf *b, const struct yitem *it)
{
	if (it->flags & YF_PACKED)
		svc_yjs__string_decompress(svc_yjs__put_space(b, it->nbytes), it);
	else
		svc_yjs__put(b, it->c.data, it->nbytes);
}

const uint8_t *svc_yjs__string_bytes(const struct yitem *it)
{
	if (it->flags & YF_PACKED)
		svc_yjs__unpack((struct yitem *)it);
	return it->c.data;
}

/*
 * Compresses string item `it` into a frame built in `scratch` (grown as
 * needed) and keeps it when it saves at least an eighth, or always with
 * `always`. Returns 1 when `it` is packed now; an item kept unpacked is
 * marked hot so that the next pass skips it (it is retried every other pass).
 */
static int pack_item(ZSTD_CCtx **cctx, struct svc_yjs_buf *scratch, struct yitem *it, int always)
{
	size_t bound = ZSTD_compressBound(it->nbytes), r;
	uint8_t *frame;
	if (!*cctx) {
		*cctx = ZSTD_createCCtx();
		if (!*cctx)
			abort();
	}
	scratch->len = 0;
	svc_yjs__put_space(scratch, bound);
	r = ZSTD_compressCCtx(*cctx, scratch->data, bound, it->c.data, it->nbytes, PACK_LEVEL);
	if (ZSTD_isError(r))
		abort();
	if (!always && r > it->nbytes - it->nbytes / 8) {
		it->flags |= YF_HOT;
		return 0;
	}
	frame = svc_yjs__xmalloc(r);
	memcpy(frame, scratch->data, r);
	free(it->c.data);
	it->c.data = frame;
	it->cap = (uint32_t)r;
	it->flags |= YF_PACKED;
	return 1;
}

/* ---- the pack pass and memory figures ---- */

size_t svc_yjs_doc_pack(struct svc_yjs_doc *doc, size_t min_bytes, size_t budget_bytes)
{
	ZSTD_CCtx *cctx = NULL;
	struct svc_yjs_buf scratch = {0};
	size_t used = 0, packed = 0, visit, start_slot;
	uint64_t start_clock = doc->pack_clock;
	if (!doc->hcap)
		return 0;
	if (min_bytes == 0)
		min_bytes = 1;
	start_slot = doc->pack_slot & (doc->hcap - 1);
	/* every slot from the cursor on, then the cursor's slot again up to the cursor's clock */
	for (visit = 0; visit <= doc->hcap; visit++) {
		size_t slot = (start_slot + visit) & (doc->hcap - 1), i = 0, end;
		struct yclient *c = doc->clients[slot];
		if (visit == doc->hcap && start_clock == 0)
			break;
		if (!c || !c->n)
			continue;
		end = c->n;
		if (visit == 0 && start_clock > 0) {
			if (start_clock >= svc_yjs__client_state(c))
				continue;
			i = svc_yjs__find_index(c, start_clock);
		} else if (visit == doc->hcap && start_clock < svc_yjs__client_state(c)) {
			end = svc_yjs__find_index(c, start_clock);
		}
		for (; i < end; i++) {
			struct yitem *it = svc_yjs__cv(c, i);
			if (it->ref != YC_STRING || (it->flags & (YF_DELETED | YF_PACKED)) || it->nbytes < min_bytes)
				continue;
			if (it->flags & YF_HOT) {
				it->flags &= (uint8_t)~YF_HOT;
				continue;
			}
			if (used >= budget_bytes) {
				doc->pack_slot = slot;
				doc->pack_clock = it->id.clock;
				goto done;
			}
			used += it->nbytes;
			if (pack_item(&cctx, &scratch, it, doc->pack_always))
				packed += it->nbytes;
		}
	}
	doc->pack_slot = start_slot;
	doc->pack_clock = 0;
done:
	ZSTD_freeCCtx(cctx);
	svc_yjs_buf_dispose(&scratch);
	return packed;
}

void svc_yjs_doc_memory(const struct svc_yjs_doc *doc, struct svc_yjs_mem *out)
{
	size_t slot, i;
	memset(out, 0, sizeof(*out));
	for (slot = 0; slot < doc->hcap; slot++) {
		const struct yclient *c = doc->clients[slot];
		if (!c)
			continue;
		out->structs += c->n;
		for (i = 0; i < c->n; i++) {
			const struct yitem *it = svc_yjs__cv(c, i);
			if (it->ref != YC_STRING)
				continue;
			out->string_items++;
			out->string_bytes += it->nbytes;
			out->string_heap += it->cap;
			if (it->flags & YF_PACKED) {
				out->packed_items++;
				out->packed_raw += it->nbytes;
				out->packed_bytes += it->cap;
			}
			if (it->flags & YF_HOT)
				out->hot_items++;
		}
	}
}
