/* item.c: items and their content (yjs Item.js, GC.js, Content*.js): splitting, YATA integration, deletion, GC, merging and encoding. */
#include <stdlib.h>
#include <string.h>

#include "yjs/yjs_int.h"

/* ---- IDs and content kinds ---- */

static int id_eq(struct yid a, struct yid b)
{
	return a.client == b.client && a.clock == b.clock;
}

static struct yid last_id(const struct yitem *it)
{
	struct yid r = { it->id.client, it->id.clock + it->len - 1 };
	return r;
}

static int compare_ids(const struct yid *a, int ha, const struct yid *b, int hb)
{
	if (!ha || !hb)
		return !ha && !hb;
	return id_eq(*a, *b);
}

int svc_yjs__countable_ref(int ref)
{
	return ref != YC_DELETED && ref != YC_FORMAT && ref != YC_GC && ref != YC_SKIP;
}

/* ---- content splitting (AbstractContent.splice, splitItem) ---- */

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
struct yitem *svc_yjs__split_item(struct svc_yjs_doc *doc, struct yclient *c, size_t index, uint64_t diff)
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
		svc_yjs__txn_merge_push(doc, r->id);
	if (r->parent_sub && !r->right && r->parent)
		svc_yjs__map_set(r->parent, r->parent_sub, r);
	l->len = diff;
	svc_yjs__client_insert(c, index + 1, r);
	return r;
}

/* ---- delete (Item.delete) ---- */

static void delete_type_children(struct svc_yjs_doc *doc, struct ytype *type)
{
	struct yitem *it;
	uint32_t k;
	size_t i;
	for (it = type->start; it; it = it->right) {
		if (!(it->flags & YF_DELETED))
			svc_yjs__delete(doc, it);
		else if (it->id.clock < svc_yjs__before_state(doc, it->id.client))
			svc_yjs__txn_merge_push(doc, it->id);
	}
	for (k = 0; k < type->nents; k++) {
		it = type->ents[k].item;
		if (!it)
			continue;
		if (!(it->flags & YF_DELETED))
			svc_yjs__delete(doc, it);
		else if (it->id.clock < svc_yjs__before_state(doc, it->id.client))
			svc_yjs__txn_merge_push(doc, it->id);
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
	svc_yjs__ds_add(&doc->txn->ds, it->id.client, it->id.clock, it->len);
	svc_yjs__txn_changed_add(doc, it->parent, it->parent_sub);
	if (it->ref == YC_TYPE)
		delete_type_children(doc, it->c.type);
}

/* ---- integrate (Item.integrate): YATA ---- */

static void to_gc(struct svc_yjs_doc *doc, struct yitem *it)
{
	svc_yjs__content_free(doc, it);
	it->ref = YC_GC;
	it->flags = YF_DELETED;
	it->parent = NULL;
	it->parent_sub = NULL;
	it->left = it->right = NULL;
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
	size_t i = (size_t)svc_yjs__hash_u64((uint64_t)(uintptr_t)p) & (s->cap - 1);
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

/* The first (leftmost) item of map key `sub` of `t`, or NULL. */
static struct yitem *key_first(struct ytype *t, const struct ystr *sub)
{
	struct ymapent *e = svc_yjs__map_find(t, sub);
	struct yitem *o = e ? e->item : NULL;
	while (o && o->left)
		o = o->left;
	return o;
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
		svc_yjs__add_struct(doc, it);
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
		svc_yjs__add_struct(doc, it);
		return;
	}
	if ((!it->left && (!it->right || it->right->left)) || (it->left && it->left->right != it->right)) {
		struct yitem *left = it->left, *o;
		struct pset conflicting, before;
		if (left) {
			o = left->right;
		} else if (it->parent_sub) {
			o = key_first(parent, it->parent_sub);
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
			r = key_first(parent, it->parent_sub);
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
	svc_yjs__add_struct(doc, it);
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
		svc_yjs__ds_add(&doc->txn->ds, it->id.client, it->id.clock, it->len);
	}
	svc_yjs__txn_changed_add(doc, parent, it->parent_sub);
	if ((parent->item && (parent->item->flags & YF_DELETED)) || (it->parent_sub && it->right))
		svc_yjs__delete(doc, it);
}

/* ---- GC (Item.gc) and merging (Item.mergeWith) ---- */

/* Item.gc of every child of `t`, as a parent GC does. */
static void gc_type(struct svc_yjs_doc *doc, struct ytype *t)
{
	struct yitem *it, *next;
	uint32_t k;
	for (it = t->start; it; it = next) {
		next = it->right;
		svc_yjs__item_gc(doc, it, 1);
	}
	t->start = NULL;
	for (k = 0; k < t->nents; k++) {
		for (it = t->ents[k].item; it; it = next) {
			next = it->left;
			svc_yjs__item_gc(doc, it, 1);
		}
	}
	t->nents = 0;
	if (t->hcap)
		memset(t->htab, 0, t->hcap * sizeof(uint32_t));
}

/* Item.gc */
void svc_yjs__item_gc(struct svc_yjs_doc *doc, struct yitem *it, int parent_gcd)
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

static int content_mergeable(int ref)
{
	return ref == YC_STRING || ref == YC_DELETED || ref == YC_JSON || ref == YC_ANY;
}

/* Item.mergeWith / GC.mergeWith */
int svc_yjs__item_merge(struct svc_yjs_doc *doc, struct yitem *l, struct yitem *r)
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
			svc_yjs__string_decompress(l->c.data + l->nbytes, r);
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
				svc_yjs__string_decompress(tmp, it);
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

/* writeStructs (encoding.js): the client's structs from `clock` on (at least its first struct's clock). */
void svc_yjs__write_structs(struct svc_yjs_buf *b, struct yclient *c, uint64_t clock)
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
