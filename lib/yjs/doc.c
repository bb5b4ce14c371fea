/* doc.c: the Yjs struct store, YATA integration, transactions, pending structs and delete sets (yjs 13.6 semantics). */
#include <stdlib.h>
#include <string.h>

#include <zstd.h>

#include "core/err.h"
#include "yjs/yjs_int.h"

#define CHUNK_ITEMS 1024

/* ---- small helpers ---- */

static uint32_t hash_bytes(const void *p, size_t n)
{
	const uint8_t *s = p;
	uint32_t h = 2166136261u;
	size_t i;
	for (i = 0; i < n; i++) {
		h ^= s[i];
		h *= 16777619u;
	}
	return h;
}

static uint64_t hash_u64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

static int id_eq(struct yid a, struct yid b)
{
	return a.client == b.client && a.clock == b.clock;
}

int svc_yjs__countable_ref(int ref)
{
	return ref != YC_DELETED && ref != YC_FORMAT && ref != YC_GC && ref != YC_SKIP;
}

/* ---- interned strings ---- */

const struct ystr *svc_yjs__intern(struct svc_yjs_doc *doc, const void *s, size_t n)
{
	uint32_t h = hash_bytes(s, n);
	size_t i;
	struct ystr *e;
	if (n > UINT32_MAX - 1)
		abort();
	if ((doc->nstrs + 1) * 2 > doc->scap) {
		size_t ncap = doc->scap ? doc->scap * 2 : 64, j;
		const struct ystr **nt = svc_yjs__xcalloc(ncap, sizeof(*nt));
		for (j = 0; j < doc->scap; j++) {
			const struct ystr *x = doc->strs[j];
			if (!x)
				continue;
			i = x->hash & (ncap - 1);
			while (nt[i])
				i = (i + 1) & (ncap - 1);
			nt[i] = x;
		}
		free(doc->strs);
		doc->strs = nt;
		doc->scap = ncap;
	}
	i = h & (doc->scap - 1);
	while (doc->strs[i]) {
		const struct ystr *x = doc->strs[i];
		if (x->hash == h && x->len == n && !memcmp(x->s, s, n))
			return x;
		i = (i + 1) & (doc->scap - 1);
	}
	e = svc_yjs__xmalloc(sizeof(*e) + n + 1);
	e->len = (uint32_t)n;
	e->hash = h;
	if (n)
		memcpy(e->s, s, n);
	e->s[n] = 0;
	doc->strs[i] = e;
	doc->nstrs++;
	return e;
}

/* ---- item pool ---- */

struct yitem *svc_yjs__item_new(struct svc_yjs_doc *doc)
{
	struct yitem *it;
	if (doc->free_items) {
		it = doc->free_items;
		doc->free_items = it->left;
	} else {
		if (doc->nchunks == 0 || doc->chunk_used == CHUNK_ITEMS) {
			if (doc->nchunks == doc->capchunks) {
				doc->capchunks = doc->capchunks ? doc->capchunks * 2 : 16;
				doc->chunks = svc_yjs__xrealloc(doc->chunks, doc->capchunks,
								 sizeof(*doc->chunks));
			}
			doc->chunks[doc->nchunks++] = svc_yjs__xmalloc(CHUNK_ITEMS * sizeof(struct yitem));
			doc->chunk_used = 0;
		}
		it = &doc->chunks[doc->nchunks - 1][doc->chunk_used++];
	}
	memset(it, 0, sizeof(*it));
	return it;
}

void svc_yjs__content_free(struct svc_yjs_doc *doc, struct yitem *it)
{
	if (it->ref == YC_TYPE) {
		if (it->c.type)
			svc_yjs__type_free(doc, it->c.type);
	} else {
		free(it->c.data);
	}
	it->c.data = NULL;
	it->nbytes = it->cap = it->count = 0;
	it->flags &= (uint8_t)~(YF_PACKED | YF_HOT);
}

void svc_yjs__item_free(struct svc_yjs_doc *doc, struct yitem *it)
{
	svc_yjs__content_free(doc, it);
	it->ref = YC_GC;
	it->left = doc->free_items;
	doc->free_items = it;
}

/* ---- packed string content (zstd) ---- */

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

/* Decompresses packed `it` into dst[0..it->nbytes); aborts unless the frame gives exactly that. */
static void frame_decompress(uint8_t *dst, const struct yitem *it)
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
	frame_decompress(raw, it);
	free(it->c.data);
	it->c.data = raw;
	it->cap = it->nbytes;
	it->flags = (uint8_t)((it->flags & ~YF_PACKED) | YF_HOT);
}

void svc_yjs__string_put(struct svc_yjs_buf *b, const struct yitem *it)
{
	if (it->flags & YF_PACKED)
		frame_decompress(svc_yjs__put_space(b, it->nbytes), it);
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

static uint64_t client_state(const struct yclient *c);

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
			if (start_clock >= client_state(c))
				continue;
			i = svc_yjs__find_index(c, start_clock);
		} else if (visit == doc->hcap && start_clock < client_state(c)) {
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

/* ---- types and maps ---- */

struct ytype *svc_yjs__type_new(int type_ref)
{
	struct ytype *t = svc_yjs__xcalloc(1, sizeof(*t));
	t->type_ref = type_ref;
	/* YArray, YText and the Xml list types keep search markers (AbstractType.js) */
	if (type_ref == 0 || type_ref == 2 || type_ref == 3 || type_ref == 4 || type_ref == 6)
		t->markers = svc_yjs__xcalloc(YJS_MAX_MARKERS, sizeof(struct ymarker));
	t->mru = UINT32_MAX;
	return t;
}

void svc_yjs__type_free(struct svc_yjs_doc *doc, struct ytype *t)
{
	(void)doc;
	free(t->xml_name);
	free(t->ents);
	free(t->htab);
	free(t->markers);
	free(t);
}

struct ytype *svc_yjs__root(struct svc_yjs_doc *doc, const struct ystr *name, int create)
{
	struct ytype *t;
	for (t = doc->roots; t; t = t->next_root) {
		if (t->name == name)
			return t;
	}
	if (!create)
		return NULL;
	t = svc_yjs__type_new(-1);
	t->name = name;
	t->next_root = doc->roots;
	doc->roots = t;
	return t;
}

struct ymapent *svc_yjs__map_find(struct ytype *t, const struct ystr *key)
{
	uint32_t i;
	if (!t->hcap)
		return NULL;
	i = key->hash & (t->hcap - 1);
	while (t->htab[i]) {
		struct ymapent *e = &t->ents[t->htab[i] - 1];
		if (e->key == key)
			return e;
		i = (i + 1) & (t->hcap - 1);
	}
	return NULL;
}

void svc_yjs__map_set(struct ytype *t, const struct ystr *key, struct yitem *it)
{
	struct ymapent *e = svc_yjs__map_find(t, key);
	uint32_t i, j;
	if (e) {
		e->item = it;
		return;
	}
	if ((t->nents + 1) * 2 > t->hcap) {
		uint32_t ncap = t->hcap ? t->hcap * 2 : 8;
		free(t->htab);
		t->htab = svc_yjs__xcalloc(ncap, sizeof(uint32_t));
		t->hcap = ncap;
		for (j = 0; j < t->nents; j++) {
			i = t->ents[j].key->hash & (ncap - 1);
			while (t->htab[i])
				i = (i + 1) & (ncap - 1);
			t->htab[i] = j + 1;
		}
	}
	if (t->nents == t->capents) {
		t->capents = t->capents ? t->capents * 2 : 8;
		t->ents = svc_yjs__xrealloc(t->ents, t->capents, sizeof(*t->ents));
	}
	t->ents[t->nents].key = key;
	t->ents[t->nents].item = it;
	i = key->hash & (t->hcap - 1);
	while (t->htab[i])
		i = (i + 1) & (t->hcap - 1);
	t->htab[i] = ++t->nents;
}

/* ---- struct store (StructStore.js) ---- */

struct yclient *svc_yjs__client(struct svc_yjs_doc *doc, uint64_t client, int create)
{
	size_t i;
	struct yclient *c = doc->last_client;
	if (c && c->client == client)
		return c;
	if (doc->hcap) {
		i = hash_u64(client) & (doc->hcap - 1);
		while (doc->clients[i]) {
			if (doc->clients[i]->client == client)
				return doc->last_client = doc->clients[i];
			i = (i + 1) & (doc->hcap - 1);
		}
	}
	if (!create)
		return NULL;
	if ((doc->nclients + 1) * 2 > doc->hcap) {
		size_t ncap = doc->hcap ? doc->hcap * 2 : 16, j;
		struct yclient **nt = svc_yjs__xcalloc(ncap, sizeof(*nt));
		for (j = 0; j < doc->hcap; j++) {
			if (!doc->clients[j])
				continue;
			i = hash_u64(doc->clients[j]->client) & (ncap - 1);
			while (nt[i])
				i = (i + 1) & (ncap - 1);
			nt[i] = doc->clients[j];
		}
		free(doc->clients);
		doc->clients = nt;
		doc->hcap = ncap;
	}
	c = svc_yjs__xcalloc(1, sizeof(*c));
	c->client = client;
	i = hash_u64(client) & (doc->hcap - 1);
	while (doc->clients[i])
		i = (i + 1) & (doc->hcap - 1);
	doc->clients[i] = c;
	doc->nclients++;
	return doc->last_client = c;
}

static uint64_t client_state(const struct yclient *c)
{
	const struct yitem *last;
	if (!c || !c->n)
		return 0;
	last = svc_yjs__cv(c, c->n - 1);
	return last->id.clock + last->len;
}

uint64_t svc_yjs__state(struct svc_yjs_doc *doc, uint64_t client)
{
	return client_state(svc_yjs__client(doc, client, 0));
}

static size_t find_index_search(const struct yclient *c, uint64_t clock)
{
	size_t left = 0, right = c->n - 1, mid;
	const struct yitem *m = svc_yjs__cv(c, right);
	if (m->id.clock <= clock)
		return right;
	mid = (size_t)((double)clock / (double)(m->id.clock + m->len - 1) * (double)right);
	if (mid > right)
		mid = right;
	for (;;) {
		m = svc_yjs__cv(c, mid);
		if (m->id.clock <= clock) {
			if (clock < m->id.clock + m->len)
				return mid;
			left = mid + 1;
		} else {
			if (mid == 0)
				abort();
			right = mid - 1;
		}
		if (left > right)
			abort();
		mid = (left + right) / 2;
	}
}

/*
 * findIndexSS (StructStore.js): index of the struct holding `clock`, which
 * must be below the client's state. Looks at the last answer and its right
 * neighbour first: splits and merges of one edit hit the same place.
 */
size_t svc_yjs__find_index(struct yclient *c, uint64_t clock)
{
	size_t h = c->hint;
	if (h < c->n) {
		const struct yitem *m = svc_yjs__cv(c, h);
		if (m->id.clock <= clock) {
			if (clock < m->id.clock + m->len)
				return h;
			if (h + 1 < c->n) {
				m = svc_yjs__cv(c, h + 1);
				if (m->id.clock <= clock && clock < m->id.clock + m->len)
					return c->hint = h + 1;
			}
		}
	}
	return c->hint = find_index_search(c, clock);
}

struct yitem *svc_yjs__find(struct svc_yjs_doc *doc, struct yid id)
{
	struct yclient *c = svc_yjs__client(doc, id.client, 0);
	return svc_yjs__cv(c, svc_yjs__find_index(c, id.clock));
}

/* Grows the physical array so that `extra` more slots follow the back segment. */
static void client_reserve(struct yclient *c, size_t extra)
{
	size_t end = c->g + c->gl + (c->n - c->g), ncap;
	if (c->cap - end >= extra)
		return;
	ncap = c->cap ? c->cap * 2 : 8;
	while (ncap - end < extra)
		ncap *= 2;
	c->v = svc_yjs__xrealloc(c->v, ncap, sizeof(*c->v));
	c->cap = ncap;
}

/* Moves the gap so that it starts at logical index `at`. */
static void gap_move(struct yclient *c, size_t at)
{
	if (c->gl == 0)
		;
	else if (at < c->g)
		memmove(c->v + at + c->gl, c->v + at, (c->g - at) * sizeof(*c->v));
	else if (at > c->g)
		memmove(c->v + c->g, c->v + c->g + c->gl, (at - c->g) * sizeof(*c->v));
	c->g = at;
}

void svc_yjs__client_insert(struct yclient *c, size_t at, struct yitem *it)
{
	if (c->g == c->n)
		c->gl = 0;    /* empty back segment: the gap is the free tail */
	if (at == c->n) {
		client_reserve(c, 1);
		if (c->g == c->n)
			c->v[c->g++] = it;
		else
			c->v[c->n + c->gl] = it;
		c->n++;
		return;
	}
	if (c->gl == 0) {
		/* open a gap before the back segment, sized to the list */
		size_t want = c->n / 16 < 16 ? 16 : c->n / 16;
		client_reserve(c, want);
		memmove(c->v + c->g + want, c->v + c->g, (c->n - c->g) * sizeof(*c->v));
		c->gl = want;
	}
	gap_move(c, at);
	c->v[c->g++] = it;
	c->gl--;
	c->n++;
}

void svc_yjs__client_remove(struct yclient *c, size_t at, size_t k)
{
	if (at >= c->g && at + k == c->n) {
		c->n -= k;    /* the end of the back segment (or of the front one when it is empty) */
	} else {
		gap_move(c, at + k);
		c->g -= k;
		c->gl += k;
		c->n -= k;
	}
	if (c->g == c->n)
		c->gl = 0;
}

static void txn_merge_push(struct svc_yjs_doc *doc, struct yid id)
{
	struct ytxn *t = doc->txn;
	if (t->nmerge == t->capmerge) {
		t->capmerge = t->capmerge ? t->capmerge * 2 : 16;
		t->merge = svc_yjs__xrealloc(t->merge, t->capmerge, sizeof(*t->merge));
	}
	t->merge[t->nmerge++] = id;
}

/* Skips `k` encoded elements of a JSON (varString) or Any payload. */
static size_t elem_offset(const struct yitem *it, uint64_t k)
{
	struct ydec d = { it->c.data, it->nbytes, 0 };
	uint64_t i;
	const uint8_t *s;
	size_t n;
	for (i = 0; i < k; i++) {
		if (it->ref == YC_JSON)
			svc_yjs__get_varstring(&d, &s, &n);
		else
			svc_yjs__skip_any(&d, 0);
	}
	return d.pos;
}

/* AbstractContent.splice: moves content from `diff` on into `r`. */
static void content_splice(struct yitem *it, struct yitem *r, uint64_t diff)
{
	static const uint8_t fffd[3] = { 0xef, 0xbf, 0xbd };
	r->ref = it->ref;
	switch (it->ref) {
	case YC_STRING: {
		/* ContentString.splice: a split surrogate pair becomes U+FFFD twice */
		int mid;
		size_t bo, rest;
		svc_yjs__unpack(it);
		it->flags |= YF_HOT;   /* both halves were touched */
		bo = svc_yjs__utf16_to_byte(it->c.data, it->nbytes, diff, &mid);
		rest = it->nbytes - bo - (mid ? 4 : 0);
		r->nbytes = (uint32_t)(rest + (mid ? 3 : 0));
		r->cap = r->nbytes;
		r->c.data = svc_yjs__xmalloc(r->cap);
		if (mid)
			memcpy(r->c.data, fffd, 3);
		memcpy(r->c.data + (mid ? 3 : 0), it->c.data + bo + (mid ? 4 : 0), rest);
		if (mid) {
			if (it->cap < bo + 3) {
				it->cap = (uint32_t)(bo + 3);
				it->c.data = svc_yjs__xrealloc(it->c.data, it->cap, 1);
			}
			memcpy(it->c.data + bo, fffd, 3);
			it->nbytes = (uint32_t)(bo + 3);
		} else {
			it->nbytes = (uint32_t)bo;
		}
		break;
	}
	case YC_JSON:
	case YC_ANY: {
		size_t bo = elem_offset(it, diff);
		r->count = (uint32_t)(it->count - diff);
		it->count = (uint32_t)diff;
		r->nbytes = r->cap = (uint32_t)(it->nbytes - bo);
		r->c.data = svc_yjs__xmalloc(r->cap);
		memcpy(r->c.data, it->c.data + bo, r->nbytes);
		it->nbytes = (uint32_t)bo;
		break;
	}
	default:
		break;
	}
}

/* splitItem (Item.js) + insertion of the right part into the client's list at index+1. */
static struct yitem *split_at(struct svc_yjs_doc *doc, struct yclient *c, size_t index, uint64_t diff)
{
	struct yitem *l = svc_yjs__cv(c, index);
	struct yitem *r = svc_yjs__item_new(doc);
	r->id.client = l->id.client;
	r->id.clock = l->id.clock + diff;
	r->len = l->len - diff;
	r->left = l;
	r->origin.client = l->id.client;
	r->origin.clock = l->id.clock + diff - 1;
	r->right = l->right;
	r->rorigin = l->rorigin;
	r->parent = l->parent;
	r->parent_sub = l->parent_sub;
	content_splice(l, r, diff);
	r->flags = YF_ORIGIN | (l->flags & (YF_RORIGIN | YF_DELETED | YF_KEEP)) |
		   (svc_yjs__countable_ref(r->ref) ? YF_COUNTABLE : 0) | (r->ref == YC_STRING ? YF_HOT : 0);
	l->right = r;
	if (r->right)
		r->right->left = r;
	if (doc->txn)
		txn_merge_push(doc, r->id);
	if (r->parent_sub && !r->right && r->parent)
		svc_yjs__map_set(r->parent, r->parent_sub, r);
	l->len = diff;
	svc_yjs__client_insert(c, index + 1, r);
	return r;
}

struct yitem *svc_yjs__clean_start(struct svc_yjs_doc *doc, struct yid id)
{
	struct yclient *c = svc_yjs__client(doc, id.client, 0);
	size_t i = svc_yjs__find_index(c, id.clock);
	struct yitem *s = svc_yjs__cv(c, i);
	if (s->id.clock < id.clock && s->ref != YC_GC)
		return split_at(doc, c, i, id.clock - s->id.clock);
	return s;
}

struct yitem *svc_yjs__clean_end(struct svc_yjs_doc *doc, struct yid id)
{
	struct yclient *c = svc_yjs__client(doc, id.client, 0);
	size_t i = svc_yjs__find_index(c, id.clock);
	struct yitem *s = svc_yjs__cv(c, i);
	if (id.clock != s->id.clock + s->len - 1 && s->ref != YC_GC)
		split_at(doc, c, i, id.clock - s->id.clock + 1);
	return s;
}

static struct yid last_id(const struct yitem *it)
{
	struct yid r = { it->id.client, it->id.clock + it->len - 1 };
	return r;
}

static void add_struct(struct svc_yjs_doc *doc, struct yitem *it)
{
	struct yclient *c = svc_yjs__client(doc, it->id.client, 1);
	uint64_t state = client_state(c);
	struct ytxn *t = doc->txn;
	if (state != it->id.clock)
		abort();
	if (t && c->txn_seq != t->seq) {
		/* first struct of this client in the transaction: remember its state before */
		c->txn_seq = t->seq;
		c->before = state;
		if (t->ntouched == t->captouched) {
			t->captouched = t->captouched ? t->captouched * 2 : 8;
			t->touched = svc_yjs__xrealloc(t->touched, t->captouched, sizeof(*t->touched));
		}
		t->touched[t->ntouched++] = c;
	}
	svc_yjs__client_insert(c, c->n, it);
}

/* ---- transaction bookkeeping (Transaction.js) ---- */

uint64_t svc_yjs__before_state(struct svc_yjs_doc *doc, uint64_t client)
{
	struct yclient *c = svc_yjs__client(doc, client, 0);
	if (!c)
		return 0;
	if (doc->txn && c->txn_seq == doc->txn->seq)
		return c->before;
	return client_state(c);
}

static void changed_add(struct svc_yjs_doc *doc, struct ytype *type, const struct ystr *sub)
{
	struct ytxn *t = doc->txn;
	const struct yitem *item = type->item;
	size_t i;
	if (!(item == NULL || (item->id.clock < svc_yjs__before_state(doc, item->id.client) &&
			       !(item->flags & YF_DELETED))))
		return;
	if (t->nchanged && t->changed[t->nchanged - 1].type == type && t->changed[t->nchanged - 1].sub == sub)
		return;
	for (i = t->nchanged; i > 0 && i + 8 > t->nchanged; i--) {
		if (t->changed[i - 1].type == type && t->changed[i - 1].sub == sub)
			return;
	}
	if (t->nchanged == t->capchanged) {
		t->capchanged = t->capchanged ? t->capchanged * 2 : 8;
		t->changed = svc_yjs__xrealloc(t->changed, t->capchanged, sizeof(*t->changed));
	}
	t->changed[t->nchanged].type = type;
	t->changed[t->nchanged].sub = sub;
	t->nchanged++;
}

void svc_yjs__range_add(struct yrangev *v, uint64_t client, uint64_t clock, uint64_t len)
{
	if (v->n == v->cap) {
		v->cap = v->cap ? v->cap * 2 : 8;
		v->v = svc_yjs__xrealloc(v->v, v->cap, sizeof(*v->v));
	}
	v->v[v->n].client = client;
	v->v[v->n].clock = clock;
	v->v[v->n].len = len;
	v->n++;
}

static int cmp_range(const void *a, const void *b)
{
	const struct yrange *x = a, *y = b;
	if (x->client != y->client)
		return x->client < y->client ? -1 : 1;
	if (x->clock != y->clock)
		return x->clock < y->clock ? -1 : 1;
	return 0;
}

/* sortAndMergeDeleteSet (DeleteSet.js). */
static void ranges_sort_merge(struct yrangev *v)
{
	size_t i, j;
	if (v->n < 2)
		return;
	qsort(v->v, v->n, sizeof(*v->v), cmp_range);
	for (i = 1, j = 1; i < v->n; i++) {
		struct yrange *l = &v->v[j - 1], *r = &v->v[i];
		if (l->client == r->client && l->clock + l->len >= r->clock) {
			uint64_t end = r->clock + r->len;
			if (end > l->clock + l->len)
				l->len = end - l->clock;
		} else {
			v->v[j++] = *r;
		}
	}
	v->n = j;
}

/* ---- delete / integrate (Item.js) ---- */

static void delete_type_children(struct svc_yjs_doc *doc, struct ytype *type)
{
	struct yitem *it;
	uint32_t k;
	size_t i;
	for (it = type->start; it; it = it->right) {
		if (!(it->flags & YF_DELETED))
			svc_yjs__delete(doc, it);
		else if (it->id.clock < svc_yjs__before_state(doc, it->id.client))
			txn_merge_push(doc, it->id);
	}
	for (k = 0; k < type->nents; k++) {
		it = type->ents[k].item;
		if (!it)
			continue;
		if (!(it->flags & YF_DELETED))
			svc_yjs__delete(doc, it);
		else if (it->id.clock < svc_yjs__before_state(doc, it->id.client))
			txn_merge_push(doc, it->id);
	}
	/* transaction.changed.delete(this.type) */
	for (i = 0; i < doc->txn->nchanged;) {
		if (doc->txn->changed[i].type == type) {
			doc->txn->changed[i] = doc->txn->changed[--doc->txn->nchanged];
		} else {
			i++;
		}
	}
}

void svc_yjs__delete(struct svc_yjs_doc *doc, struct yitem *it)
{
	if (it->flags & YF_DELETED)
		return;
	if ((it->flags & YF_COUNTABLE) && !it->parent_sub)
		it->parent->length -= it->len;
	it->flags |= YF_DELETED;
	if ((it->flags & YF_MARKER) && it->parent && it->parent->markers)
		it->parent->markers_stale = 1;
	svc_yjs__range_add(&doc->txn->ds, it->id.client, it->id.clock, it->len);
	changed_add(doc, it->parent, it->parent_sub);
	if (it->ref == YC_TYPE)
		delete_type_children(doc, it->c.type);
}

static void to_gc(struct svc_yjs_doc *doc, struct yitem *it)
{
	svc_yjs__content_free(doc, it);
	it->ref = YC_GC;
	it->flags = YF_DELETED;
	it->parent = NULL;
	it->parent_sub = NULL;
	it->left = it->right = NULL;
}

static int compare_ids(const struct yid *a, int ha, const struct yid *b, int hb)
{
	if (!ha || !hb)
		return !ha && !hb;
	return id_eq(*a, *b);
}

/* Small open-addressing pointer set for the YATA scan. */
struct pset {
	const void **v;
	size_t cap, n;
	const void *inl[32];
};

static void pset_init(struct pset *s)
{
	s->v = s->inl;
	s->cap = 32;
	s->n = 0;
	memset(s->inl, 0, sizeof(s->inl));
}

static void pset_clear(struct pset *s)
{
	if (s->n)
		memset(s->v, 0, s->cap * sizeof(*s->v));
	s->n = 0;
}

static void pset_free(struct pset *s)
{
	if (s->v != s->inl)
		free(s->v);
}

static size_t pset_slot(const struct pset *s, const void *p)
{
	size_t i = (size_t)hash_u64((uint64_t)(uintptr_t)p) & (s->cap - 1);
	while (s->v[i] && s->v[i] != p)
		i = (i + 1) & (s->cap - 1);
	return i;
}

static int pset_has(const struct pset *s, const void *p)
{
	return s->v[pset_slot(s, p)] != NULL;
}

static void pset_add(struct pset *s, const void *p)
{
	size_t i;
	if ((s->n + 1) * 2 > s->cap) {
		const void **old = s->v;
		size_t oc = s->cap, j;
		s->cap *= 2;
		s->v = svc_yjs__xcalloc(s->cap, sizeof(*s->v));
		s->n = 0;
		for (j = 0; j < oc; j++) {
			if (old[j]) {
				s->v[pset_slot(s, old[j])] = old[j];
				s->n++;
			}
		}
		if (old != s->inl)
			free((void *)old);
	}
	i = pset_slot(s, p);
	if (!s->v[i]) {
		s->v[i] = p;
		s->n++;
	}
}

/* Item.integrate (Item.js): YATA. `it` has parent (or NULL -> GC), left, right resolved. */
void svc_yjs__integrate(struct svc_yjs_doc *doc, struct yitem *it, uint64_t offset)
{
	struct ytype *parent = it->parent;
	if (it->ref == YC_STRING)
		it->flags |= YF_HOT;   /* new text starts hot: svc_yjs_doc_pack leaves it for a pass */
	if (it->ref == YC_GC) {
		/* GC.integrate */
		it->id.clock += offset;
		it->len -= offset;
		add_struct(doc, it);
		return;
	}
	if (offset > 0) {
		struct yid lid = { it->id.client, it->id.clock + offset - 1 };
		struct yitem tmp;
		it->id.clock += offset;
		it->left = svc_yjs__clean_end(doc, lid);
		it->origin = it->left->ref == YC_GC ? lid : last_id(it->left);
		it->flags |= YF_ORIGIN;
		memset(&tmp, 0, sizeof(tmp));
		/* content = content.splice(offset): keep the right part */
		if (it->ref == YC_STRING || it->ref == YC_JSON || it->ref == YC_ANY) {
			content_splice(it, &tmp, offset);
			free(it->c.data);
			it->c.data = tmp.c.data;
			it->nbytes = tmp.nbytes;
			it->cap = tmp.cap;
			it->count = tmp.count;
		}
		it->len -= offset;
	}
	if (!parent) {
		to_gc(doc, it);
		add_struct(doc, it);
		return;
	}
	if ((!it->left && (!it->right || it->right->left)) || (it->left && it->left->right != it->right)) {
		struct yitem *left = it->left, *o;
		struct pset conflicting, before;
		if (left) {
			o = left->right;
		} else if (it->parent_sub) {
			struct ymapent *e = svc_yjs__map_find(parent, it->parent_sub);
			o = e ? e->item : NULL;
			while (o && o->left)
				o = o->left;
		} else {
			o = parent->start;
		}
		pset_init(&conflicting);
		pset_init(&before);
		while (o && o != it->right) {
			pset_add(&before, o);
			pset_add(&conflicting, o);
			if (compare_ids(&it->origin, it->flags & YF_ORIGIN, &o->origin, o->flags & YF_ORIGIN)) {
				if (o->id.client < it->id.client) {
					left = o;
					pset_clear(&conflicting);
				} else if (compare_ids(&it->rorigin, it->flags & YF_RORIGIN,
						       &o->rorigin, o->flags & YF_RORIGIN)) {
					break;
				}
			} else if ((o->flags & YF_ORIGIN) &&
				   pset_has(&before, svc_yjs__find(doc, o->origin))) {
				if (!pset_has(&conflicting, svc_yjs__find(doc, o->origin))) {
					left = o;
					pset_clear(&conflicting);
				}
			} else {
				break;
			}
			o = o->right;
		}
		pset_free(&conflicting);
		pset_free(&before);
		it->left = left;
	}
	if (it->left) {
		it->right = it->left->right;
		it->left->right = it;
	} else {
		struct yitem *r;
		if (it->parent_sub) {
			struct ymapent *e = svc_yjs__map_find(parent, it->parent_sub);
			r = e ? e->item : NULL;
			while (r && r->left)
				r = r->left;
		} else {
			r = parent->start;
			parent->start = it;
		}
		it->right = r;
	}
	if (it->right) {
		it->right->left = it;
	} else if (it->parent_sub) {
		svc_yjs__map_set(parent, it->parent_sub, it);
		if (it->left)
			svc_yjs__delete(doc, it->left);
	}
	if (!it->parent_sub && (it->flags & YF_COUNTABLE) && !(it->flags & YF_DELETED))
		parent->length += it->len;
	add_struct(doc, it);
	/* content.integrate */
	if (it->ref == YC_TYPE) {
		it->c.type->item = it;
	} else if (it->ref == YC_FORMAT) {
		free(parent->markers);
		parent->markers = NULL;
		parent->nmarkers = 0;
		parent->mru = UINT32_MAX;
		parent->has_formatting = 1;
	} else if (it->ref == YC_DELETED) {
		svc_yjs__range_add(&doc->txn->ds, it->id.client, it->id.clock, it->len);
	}
	changed_add(doc, parent, it->parent_sub);
	if ((parent->item && (parent->item->flags & YF_DELETED)) || (it->parent_sub && it->right))
		svc_yjs__delete(doc, it);
}

/* ---- transaction cleanup: GC and merging (Transaction.js) ---- */

static void gc_item(struct svc_yjs_doc *doc, struct yitem *it, int parent_gcd);

static void gc_type(struct svc_yjs_doc *doc, struct ytype *t)
{
	struct yitem *it, *next;
	uint32_t k;
	for (it = t->start; it; it = next) {
		next = it->right;
		gc_item(doc, it, 1);
	}
	t->start = NULL;
	for (k = 0; k < t->nents; k++) {
		for (it = t->ents[k].item; it; it = next) {
			next = it->left;
			gc_item(doc, it, 1);
		}
	}
	t->nents = 0;
	if (t->hcap)
		memset(t->htab, 0, t->hcap * sizeof(uint32_t));
}

/* Item.gc */
static void gc_item(struct svc_yjs_doc *doc, struct yitem *it, int parent_gcd)
{
	if (it->ref == YC_GC)
		return;
	if (it->ref == YC_TYPE && it->c.type)
		gc_type(doc, it->c.type);
	if (parent_gcd) {
		to_gc(doc, it);
	} else {
		svc_yjs__content_free(doc, it);
		it->ref = YC_DELETED;
		it->flags &= (uint8_t)~YF_COUNTABLE;
	}
}

static void try_gc_ds(struct svc_yjs_doc *doc, const struct yrangev *ds)
{
	size_t r;
	for (r = ds->n; r > 0; r--) {
		const struct yrange *d = &ds->v[r - 1];
		struct yclient *c = svc_yjs__client(doc, d->client, 0);
		size_t si;
		uint64_t end = d->clock + d->len;
		if (!c || !c->n || d->clock >= client_state(c))
			continue;
		for (si = svc_yjs__find_index(c, d->clock); si < c->n && svc_yjs__cv(c, si)->id.clock < end; si++) {
			struct yitem *s = svc_yjs__cv(c, si);
			if (s->ref != YC_GC && (s->flags & YF_DELETED) && !(s->flags & YF_KEEP))
				gc_item(doc, s, 0);
		}
	}
}

static int content_mergeable(int ref)
{
	return ref == YC_STRING || ref == YC_DELETED || ref == YC_JSON || ref == YC_ANY;
}

/* Item.mergeWith / GC.mergeWith */
static int merge_with(struct svc_yjs_doc *doc, struct yitem *l, struct yitem *r)
{
	if (l->ref == YC_GC || r->ref == YC_GC) {
		if (l->ref != r->ref)
			return 0;
		l->len += r->len;
		return 1;
	}
	if (!(r->flags & YF_ORIGIN) || !id_eq(r->origin, last_id(l)) || l->right != r ||
	    !compare_ids(&l->rorigin, l->flags & YF_RORIGIN, &r->rorigin, r->flags & YF_RORIGIN) ||
	    l->id.client != r->id.client || l->id.clock + l->len != r->id.clock ||
	    (l->flags & YF_DELETED) != (r->flags & YF_DELETED) || l->ref != r->ref ||
	    !content_mergeable(l->ref))
		return 0;
	(void)doc;
	if (l->parent && l->parent->markers)
		svc_yjs__marker_merged(l->parent, l, r);
	if (r->flags & YF_KEEP)
		l->flags |= YF_KEEP;
	l->right = r->right;
	if (l->right)
		l->right->left = l;
	if (l->ref != YC_DELETED) {
		svc_yjs__unpack(l);
		if (l->cap - l->nbytes < r->nbytes) {
			size_t want = (size_t)l->nbytes + r->nbytes, ncap = l->cap ? l->cap : 8;
			while (ncap < want)
				ncap *= 2;
			if (ncap > UINT32_MAX)
				abort();
			l->c.data = svc_yjs__xrealloc(l->c.data, ncap, 1);
			l->cap = (uint32_t)ncap;
		}
		if (r->flags & YF_PACKED)
			frame_decompress(l->c.data + l->nbytes, r);
		else
			memcpy(l->c.data + l->nbytes, r->c.data, r->nbytes);
		l->nbytes += r->nbytes;
		l->count += r->count;
		if (l->ref == YC_STRING)
			l->flags |= YF_HOT;
	}
	l->len += r->len;
	return 1;
}

/* tryToMergeWithLefts: returns how many structs were merged away left of pos. */
static size_t merge_lefts(struct svc_yjs_doc *doc, struct yclient *c, size_t pos)
{
	size_t i = pos, merged, k;
	struct yitem *right = svc_yjs__cv(c, pos), *left;
	for (; i > 0; i--) {
		left = svc_yjs__cv(c, i - 1);
		if ((left->flags & YF_DELETED) == (right->flags & YF_DELETED) &&
		    (left->ref == YC_GC) == (right->ref == YC_GC) && merge_with(doc, left, right)) {
			if (right->ref != YC_GC && right->parent_sub && right->parent) {
				struct ymapent *e = svc_yjs__map_find(right->parent, right->parent_sub);
				if (e && e->item == right)
					e->item = left;
			}
			right = left;
			continue;
		}
		break;
	}
	merged = pos - i;
	if (merged) {
		for (k = pos + 1 - merged; k <= pos; k++)
			svc_yjs__item_free(doc, svc_yjs__cv(c, k));
		svc_yjs__client_remove(c, pos + 1 - merged, merged);
	}
	return merged;
}

static void try_merge_ds(struct svc_yjs_doc *doc, const struct yrangev *ds)
{
	size_t r;
	for (r = ds->n; r > 0; r--) {
		const struct yrange *d = &ds->v[r - 1];
		struct yclient *c = svc_yjs__client(doc, d->client, 0);
		long si;
		if (!c || !c->n)
			continue;
		si = (long)svc_yjs__find_index(c, d->clock + d->len - 1) + 1;
		if (si > (long)c->n - 1)
			si = (long)c->n - 1;
		while (si > 0 && svc_yjs__cv(c, (size_t)si)->id.clock >= d->clock)
			si -= 1 + (long)merge_lefts(doc, c, (size_t)si);
	}
}

void svc_yjs__txn_start(struct svc_yjs_doc *doc, int local)
{
	struct ytxn *t = &doc->txn_store;
	t->local = local;
	t->seq = ++doc->txn_seq;
	t->ntouched = 0;
	t->ds.n = 0;
	t->nmerge = 0;
	t->nchanged = 0;
	doc->txn = t;
}

static void report_add(struct svc_yjs_report *r, const struct ystr *root, const struct ystr *key)
{
	size_t i;
	for (i = 0; i < r->n; i++) {
		if (r->changes[i].root == root->s && r->changes[i].key == key->s)
			return;
	}
	if (r->n == r->cap) {
		r->cap = r->cap ? r->cap * 2 : 8;
		r->changes = svc_yjs__xrealloc(r->changes, r->cap, sizeof(*r->changes));
	}
	r->changes[r->n].root = root->s;
	r->changes[r->n].root_len = root->len;
	r->changes[r->n].key = key->s;
	r->changes[r->n].key_len = key->len;
	r->n++;
}

void svc_yjs_report_dispose(struct svc_yjs_report *r)
{
	free(r->changes);
	r->changes = NULL;
	r->n = r->cap = 0;
}

static void write_ds(struct svc_yjs_buf *b, const struct yrangev *ds)
{
	/* ds sorted by client ascending: write clients descending */
	size_t nclients = 0, i, j, end;
	for (i = 0; i < ds->n; i++) {
		if (i == 0 || ds->v[i].client != ds->v[i - 1].client)
			nclients++;
	}
	svc_yjs__put_varuint(b, nclients);
	end = ds->n;
	while (end > 0) {
		size_t start = end - 1;
		while (start > 0 && ds->v[start - 1].client == ds->v[end - 1].client)
			start--;
		svc_yjs__put_varuint(b, ds->v[start].client);
		svc_yjs__put_varuint(b, end - start);
		for (j = start; j < end; j++) {
			svc_yjs__put_varuint(b, ds->v[j].clock);
			svc_yjs__put_varuint(b, ds->v[j].len);
		}
		end = start;
	}
}

/* writeStructs: client's structs from `clock` on. */
static void write_client_structs(struct svc_yjs_buf *b, struct yclient *c, uint64_t clock)
{
	size_t start, i;
	if (clock < svc_yjs__cv(c, 0)->id.clock)
		clock = svc_yjs__cv(c, 0)->id.clock;
	start = svc_yjs__find_index(c, clock);
	svc_yjs__put_varuint(b, c->n - start);
	svc_yjs__put_varuint(b, c->client);
	svc_yjs__put_varuint(b, clock);
	svc_yjs__write_item(b, svc_yjs__cv(c, start), clock - svc_yjs__cv(c, start)->id.clock);
	for (i = start + 1; i < c->n; i++)
		svc_yjs__write_item(b, svc_yjs__cv(c, i), 0);
}

static int cmp_client_ptr_desc(const void *a, const void *b)
{
	const struct yclient *x = *(const struct yclient *const *)a, *y = *(const struct yclient *const *)b;
	return x->client < y->client ? 1 : x->client > y->client ? -1 : 0;
}

/*
 * writeStructsFromTransaction: the structs the transaction added, per client
 * from its state before, clients in descending order (writeClientsStructs).
 */
static void write_txn_structs(struct svc_yjs_buf *b, struct ytxn *t)
{
	size_t n = 0, i;
	for (i = 0; i < t->ntouched; i++) {
		if (client_state(t->touched[i]) > t->touched[i]->before)
			t->touched[n++] = t->touched[i];
	}
	t->ntouched = n;
	if (n > 1)
		qsort(t->touched, n, sizeof(*t->touched), cmp_client_ptr_desc);
	svc_yjs__put_varuint(b, n);
	for (i = 0; i < n; i++)
		write_client_structs(b, t->touched[i], t->touched[i]->before);
}

/* cleanupTransactions: report, GC, merges, update message. */
void svc_yjs__txn_finish(struct svc_yjs_doc *doc, struct svc_yjs_buf *out_update,
			 struct svc_yjs_report *report)
{
	struct ytxn *t = doc->txn;
	size_t i;
	int state_changed = 0, fmt_cleanup = 0;
	uint64_t *ds_clients = NULL;
	size_t nds_clients = 0;
	/* YText._callObserver: a remote change of a text with formatting asks for the cleanup */
	for (i = 0; !t->local && i < t->nchanged; i++) {
		const struct ytype *type = t->changed[i].type;
		if ((type->type_ref == 2 || type->type_ref == 6) && type->has_formatting &&
		    !(type->item && (type->item->flags & YF_DELETED)))
			fmt_cleanup = 1;
	}
	if (fmt_cleanup) {
		/* the order in which the delete set's Map met its clients */
		ds_clients = svc_yjs__xmalloc((t->ds.n ? t->ds.n : 1) * sizeof(*ds_clients));
		for (i = 0; i < t->ds.n; i++) {
			struct yclient *c = svc_yjs__client(doc, t->ds.v[i].client, 0);
			if (c && c->ds_seq != t->seq) {
				c->ds_seq = t->seq;
				ds_clients[nds_clients++] = c->client;
			}
		}
	}
	ranges_sort_merge(&t->ds);
	if (fmt_cleanup) {
		svc_yjs__format_cleanup(doc, ds_clients, nds_clients, t->ds.n);
		ranges_sort_merge(&t->ds);
		free(ds_clients);
	}
	for (i = 0; i < t->nchanged; i++) {
		struct ytype *type = t->changed[i].type;
		if (type->item && (type->item->flags & YF_DELETED))
			continue;
		/* AbstractType._callObserver: remote changes drop the search markers */
		if (!t->local && type->markers)
			svc_yjs__markers_clear(type);
		if (report) {
			struct ytype *ty = type;
			const struct ystr *sub = t->changed[i].sub;
			while (ty->item && ty->item->parent && ty->item->parent->item)
				ty = ty->item->parent;
			if (!ty->item && sub)
				report_add(report, ty->name, sub);
			else if (ty->item && ty->item->parent && ty->item->parent_sub)
				report_add(report, ty->item->parent->name, ty->item->parent_sub);
		}
	}
	try_gc_ds(doc, &t->ds);
	try_merge_ds(doc, &t->ds);
	for (i = 0; i < t->ntouched; i++) {
		struct yclient *c = t->touched[i];
		uint64_t before = c->before;
		size_t first, k;
		if (before == client_state(c))
			continue;
		state_changed = 1;
		first = before ? svc_yjs__find_index(c, before) : 0;
		if (first < 1)
			first = 1;
		for (k = c->n - 1; k >= first && k < c->n;) {
			size_t m = merge_lefts(doc, c, k);
			if (k < 1 + m)
				break;
			k -= 1 + m;
		}
	}
	for (i = t->nmerge; i > 0; i--) {
		struct yid id = t->merge[i - 1];
		struct yclient *c = svc_yjs__client(doc, id.client, 0);
		size_t pos;
		if (!c || !c->n || id.clock >= client_state(c))
			continue;
		pos = svc_yjs__find_index(c, id.clock);
		if (pos + 1 < c->n && merge_lefts(doc, c, pos + 1) > 1)
			continue;
		if (pos > 0)
			merge_lefts(doc, c, pos);
	}
	if (out_update && (t->ds.n || state_changed)) {
		write_txn_structs(out_update, t);
		write_ds(out_update, &t->ds);
	}
	doc->txn = NULL;
}

/* ---- item encoding (Item.write, GC.write, Content*.write) ---- */

void svc_yjs__write_item(struct svc_yjs_buf *b, const struct yitem *it, uint64_t offset)
{
	int has_origin, has_rorigin;
	struct yid origin;
	uint8_t info;
	if (it->ref == YC_GC) {
		svc_yjs__put_u8(b, 0);
		svc_yjs__put_varuint(b, it->len - offset);
		return;
	}
	has_origin = offset > 0 || (it->flags & YF_ORIGIN);
	origin = offset > 0 ? (struct yid){ it->id.client, it->id.clock + offset - 1 } : it->origin;
	has_rorigin = (it->flags & YF_RORIGIN) != 0;
	info = (uint8_t)((it->ref & 0x1f) | (has_origin ? 0x80 : 0) | (has_rorigin ? 0x40 : 0) |
			 (it->parent_sub ? 0x20 : 0));
	svc_yjs__put_u8(b, info);
	if (has_origin) {
		svc_yjs__put_varuint(b, origin.client);
		svc_yjs__put_varuint(b, origin.clock);
	}
	if (has_rorigin) {
		svc_yjs__put_varuint(b, it->rorigin.client);
		svc_yjs__put_varuint(b, it->rorigin.clock);
	}
	if (!has_origin && !has_rorigin) {
		if (!it->parent->item) {
			svc_yjs__put_varuint(b, 1);
			svc_yjs__put_varstring(b, it->parent->name->s, it->parent->name->len);
		} else {
			svc_yjs__put_varuint(b, 0);
			svc_yjs__put_varuint(b, it->parent->item->id.client);
			svc_yjs__put_varuint(b, it->parent->item->id.clock);
		}
		if (it->parent_sub)
			svc_yjs__put_varstring(b, it->parent_sub->s, it->parent_sub->len);
	}
	switch (it->ref) {
	case YC_DELETED:
		svc_yjs__put_varuint(b, it->len - offset);
		break;
	case YC_STRING:
		if (offset == 0) {
			/* a packed item decompresses straight into `b` and stays packed */
			svc_yjs__put_varuint(b, it->nbytes);
			svc_yjs__string_put(b, it);
		} else {
			int mid;
			uint8_t *tmp = NULL;
			const uint8_t *s = it->c.data;
			size_t bo;
			if (it->flags & YF_PACKED) {
				tmp = svc_yjs__xmalloc(it->nbytes);
				frame_decompress(tmp, it);
				s = tmp;
			}
			bo = svc_yjs__utf16_to_byte(s, it->nbytes, offset, &mid);
			if (mid) {
				svc_yjs__put_varuint(b, it->nbytes - bo - 4 + 3);
				svc_yjs__put(b, "\xef\xbf\xbd", 3);
				svc_yjs__put(b, s + bo + 4, it->nbytes - bo - 4);
			} else {
				svc_yjs__put_varstring(b, s + bo, it->nbytes - bo);
			}
			free(tmp);
		}
		break;
	case YC_JSON:
	case YC_ANY: {
		size_t bo = offset ? elem_offset(it, offset) : 0;
		svc_yjs__put_varuint(b, it->count - offset);
		svc_yjs__put(b, it->c.data + bo, it->nbytes - bo);
		break;
	}
	case YC_TYPE:
		svc_yjs__put_varuint(b, (uint64_t)it->c.type->type_ref);
		if (it->c.type->type_ref == 3 || it->c.type->type_ref == 5)
			svc_yjs__put(b, it->c.type->xml_name, it->c.type->xml_name_len);
		break;
	default: /* BINARY, EMBED, FORMAT, DOC: raw encoded payload */
		svc_yjs__put(b, it->c.data, it->nbytes);
		break;
	}
}

/* ---- document lifecycle ---- */

int svc_yjs_doc_new(struct svc_yjs_doc **out, uint64_t client_id)
{
	struct svc_yjs_doc *doc;
	if (client_id > SVC_YJS_MAX_SAFE)
		return SVC_E_VALIDATION;
	doc = svc_yjs__xcalloc(1, sizeof(*doc));
	doc->client_id = client_id;
	*out = doc;
	return 0;
}

uint64_t svc_yjs_doc_client_id(const struct svc_yjs_doc *doc)
{
	return doc->client_id;
}

static void refs_free(struct svc_yjs_doc *doc, struct yrefs *r)
{
	size_t k;
	for (k = 0; k < r->n; k++) {
		if (r->v[k].it)
			svc_yjs__item_free(doc, r->v[k].it);
	}
	free(r->v);
	r->v = NULL;
	r->n = r->cap = r->i = 0;
}

void svc_yjs_doc_free(struct svc_yjs_doc *doc)
{
	size_t i, k;
	struct ytype *t, *next;
	if (!doc)
		return;
	for (i = 0; i < doc->npending; i++)
		refs_free(doc, &doc->pending[i]);
	free(doc->pending);
	free(doc->missing);
	free(doc->pending_ds.v);
	for (i = 0; i < doc->hcap; i++) {
		struct yclient *c = doc->clients[i];
		if (!c)
			continue;
		for (k = 0; k < c->n; k++)
			svc_yjs__content_free(doc, svc_yjs__cv(c, k));
		free(c->v);
		free(c);
	}
	free(doc->clients);
	for (t = doc->roots; t; t = next) {
		next = t->next_root;
		svc_yjs__type_free(doc, t);
	}
	for (i = 0; i < doc->nchunks; i++)
		free(doc->chunks[i]);
	free(doc->chunks);
	for (i = 0; i < doc->scap; i++)
		free((void *)doc->strs[i]);
	free(doc->strs);
	free(doc->txn_store.touched);
	free(doc->txn_store.ds.v);
	free(doc->txn_store.merge);
	free(doc->txn_store.changed);
	free(doc);
}

int svc_yjs_has_pending(const struct svc_yjs_doc *doc)
{
	return doc->npending > 0 || doc->pending_ds.n > 0;
}
