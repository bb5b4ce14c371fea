/* update.c: update v1 decoding, struct integration with pending structs and delete sets, state vector and state encoding. */
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "yjs/yjs_int.h"

/* A fully decoded update: per client struct refs (ascending client) and a delete set. */
struct yupdate {
	struct yrefs *cl;
	size_t ncl;
	struct yrangev ds;
};

static void update_dispose(struct svc_yjs_doc *doc, struct yupdate *u)
{
	size_t i, k;
	for (i = 0; i < u->ncl; i++) {
		for (k = 0; k < u->cl[i].n; k++) {
			if (u->cl[i].v[k].it)
				svc_yjs__item_free(doc, u->cl[i].v[k].it);
		}
		free(u->cl[i].v);
	}
	free(u->cl);
	free(u->ds.v);
	memset(u, 0, sizeof(*u));
}

static void refs_push(struct yrefs *r, const struct yref *x)
{
	if (r->n == r->cap) {
		r->cap = r->cap ? r->cap * 2 : 8;
		r->v = svc_yjs__xrealloc(r->v, r->cap, sizeof(*r->v));
	}
	r->v[r->n++] = *x;
}

static int json_valid(const uint8_t *s, size_t n)
{
	struct svc_yjs_buf tmp = {0};
	int r = svc_yjs__json_to_any((const char *)s, n, &tmp);
	svc_yjs_buf_dispose(&tmp);
	return r == 0;
}

static int get_id(struct ydec *d, struct yid *id)
{
	if (svc_yjs__get_varuint(d, &id->client) < 0 || svc_yjs__get_varuint(d, &id->clock) < 0)
		return SVC_E_VALIDATION;
	return 0;
}

static void set_raw(struct yitem *it, const uint8_t *p, size_t n)
{
	it->c.data = svc_yjs__xmalloc(n);
	memcpy(it->c.data, p, n);
	it->nbytes = it->cap = (uint32_t)n;
}

/* readItemContent: fills it->ref/len/content from d. */
static int read_content(struct svc_yjs_doc *doc, struct ydec *d, struct yitem *it, int ref)
{
	const uint8_t *s;
	size_t n, start = d->pos;
	uint64_t cnt, k;
	it->ref = (uint8_t)ref;
	switch (ref) {
	case YC_DELETED:
		if (svc_yjs__get_varuint(d, &cnt) < 0 || cnt == 0)
			return SVC_E_VALIDATION;
		it->len = cnt;
		return 0;
	case YC_JSON:
	case YC_ANY:
		if (svc_yjs__get_varuint(d, &cnt) < 0 || cnt == 0 || cnt > d->len - d->pos)
			return SVC_E_VALIDATION;
		start = d->pos;
		for (k = 0; k < cnt; k++) {
			if (ref == YC_JSON) {
				if (svc_yjs__get_varstring(d, &s, &n) < 0)
					return SVC_E_VALIDATION;
				if (!(n == 9 && !memcmp(s, "undefined", 9)) && !json_valid(s, n))
					return SVC_E_VALIDATION;
			} else if (svc_yjs__skip_any(d, 0) < 0) {
				return SVC_E_VALIDATION;
			}
		}
		if (d->pos - start > UINT32_MAX)
			return SVC_E_TOO_LARGE;
		set_raw(it, d->p + start, d->pos - start);
		it->count = (uint32_t)cnt;
		it->len = cnt;
		return 0;
	case YC_BINARY:
		if (svc_yjs__get_varbytes(d, &s, &n) < 0)
			return SVC_E_VALIDATION;
		break;
	case YC_STRING:
		if (svc_yjs__get_varstring(d, &s, &n) < 0 || n == 0)
			return SVC_E_VALIDATION;
		if (n > UINT32_MAX)
			return SVC_E_TOO_LARGE;
		set_raw(it, s, n);
		it->len = svc_yjs__utf16_len(s, n);
		return 0;
	case YC_EMBED:
		if (svc_yjs__get_varstring(d, &s, &n) < 0 || !json_valid(s, n))
			return SVC_E_VALIDATION;
		break;
	case YC_FORMAT:
		if (svc_yjs__get_varstring(d, &s, &n) < 0 || svc_yjs__get_varstring(d, &s, &n) < 0 ||
		    !json_valid(s, n))
			return SVC_E_VALIDATION;
		break;
	case YC_TYPE: {
		struct ytype *t;
		if (svc_yjs__get_varuint(d, &cnt) < 0 || cnt > 6)
			return SVC_E_VALIDATION;
		t = svc_yjs__type_new((int)cnt);
		if (cnt == 3 || cnt == 5) {
			size_t ns = d->pos;
			if (svc_yjs__get_varstring(d, &s, &n) < 0) {
				svc_yjs__type_free(doc, t);
				return SVC_E_VALIDATION;
			}
			t->xml_name_len = d->pos - ns;
			t->xml_name = svc_yjs__xmalloc(t->xml_name_len);
			memcpy(t->xml_name, d->p + ns, t->xml_name_len);
		}
		it->c.type = t;
		it->len = 1;
		return 0;
	}
	case YC_DOC:
		if (svc_yjs__get_varstring(d, &s, &n) < 0 || svc_yjs__skip_any(d, 0) < 0)
			return SVC_E_VALIDATION;
		break;
	default:
		return SVC_E_VALIDATION;
	}
	if (d->pos - start > UINT32_MAX)
		return SVC_E_TOO_LARGE;
	set_raw(it, d->p + start, d->pos - start);
	it->len = 1;
	return 0;
}

static int cmp_refs_client(const void *a, const void *b)
{
	const struct yrefs *x = a, *y = b;
	return x->client < y->client ? -1 : x->client > y->client;
}

/* By client, then by the order the update listed them (kept in .i while decoding). */
static int cmp_refs_listing(const void *a, const void *b)
{
	const struct yrefs *x = a, *y = b;
	if (x->client != y->client)
		return x->client < y->client ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

/* The parent of an item with neither origin: a root type's name or an item's id, then a map key when info has 0x20. */
static int decode_parent(struct svc_yjs_doc *doc, struct ydec *d, struct yref *rp, uint8_t info, uint64_t client,
			 uint64_t clock)
{
	uint64_t pinfo;
	const uint8_t *s;
	size_t n;
	if (svc_yjs__get_varuint(d, &pinfo) < 0)
		return SVC_E_VALIDATION;
	if (pinfo == 1) {
		if (svc_yjs__get_varstring(d, &s, &n) < 0)
			return SVC_E_VALIDATION;
		rp->parent_kind = 1;
		rp->root = svc_yjs__intern(doc, s, n);
	} else {
		if (get_id(d, &rp->parent_id) < 0)
			return SVC_E_VALIDATION;
		rp->parent_kind = 2;
		if (rp->parent_id.client == client && rp->parent_id.clock >= clock)
			return SVC_E_VALIDATION;
	}
	if (info & 0x20) {
		if (svc_yjs__get_varstring(d, &s, &n) < 0)
			return SVC_E_VALIDATION;
		rp->sub = svc_yjs__intern(doc, s, n);
	}
	return 0;
}

/*
 * One struct of a client's listing, at *clock (yjs readClientsStructRefs' loop body): a GC or
 * Skip range, or an item with its origins, parent and content. The item goes into r (which owns
 * it from then on, also on error) and *clock moves past it. Returns 0, SVC_E_VALIDATION or
 * read_content's error.
 */
static int decode_struct(struct svc_yjs_doc *doc, struct ydec *d, struct yrefs *r, uint64_t client, uint64_t *clock)
{
	struct yref ref;
	uint8_t info;
	uint64_t len;
	struct yitem *it;
	int err;
	memset(&ref, 0, sizeof(ref));
	if (svc_yjs__get_u8(d, &info) < 0)
		return SVC_E_VALIDATION;
	it = svc_yjs__item_new(doc);
	ref.it = it;
	refs_push(r, &ref);
	it->id.client = client;
	it->id.clock = *clock;
	if ((info & 0x1f) == YC_GC || (info & 0x1f) == YC_SKIP) {
		if (svc_yjs__get_varuint(d, &len) < 0 || len == 0)
			return SVC_E_VALIDATION;
		it->ref = info & 0x1f;
		it->len = len;
		it->flags = YF_DELETED;
	} else {
		if (info & 0x80) {
			if (get_id(d, &it->origin) < 0)
				return SVC_E_VALIDATION;
			it->flags |= YF_ORIGIN;
			if (it->origin.client == client && it->origin.clock >= *clock)
				return SVC_E_VALIDATION;
		}
		if (info & 0x40) {
			if (get_id(d, &it->rorigin) < 0)
				return SVC_E_VALIDATION;
			it->flags |= YF_RORIGIN;
			if (it->rorigin.client == client && it->rorigin.clock >= *clock)
				return SVC_E_VALIDATION;
		}
		if (!(info & 0xc0) && decode_parent(doc, d, &r->v[r->n - 1], info, client, *clock) < 0)
			return SVC_E_VALIDATION;
		if ((err = read_content(doc, d, it, info & 0x1f)) < 0)
			return err;
		if (svc_yjs__countable_ref(it->ref))
			it->flags |= YF_COUNTABLE;
	}
	if (it->len > SVC_YJS_MAX_SAFE - *clock)
		return SVC_E_VALIDATION;
	*clock += it->len;
	return 0;
}

/*
 * The same client listed again: like yjs's clientRefs.set(client, ...) in
 * readClientsStructRefs, the later listing replaces the earlier.
 */
static void keep_last_listings(struct svc_yjs_doc *doc, struct yupdate *u)
{
	size_t j, k, w = 0;
	qsort(u->cl, u->ncl, sizeof(*u->cl), cmp_refs_listing);
	for (j = 0; j < u->ncl; j++) {
		if (j + 1 < u->ncl && u->cl[j + 1].client == u->cl[j].client) {
			for (k = 0; k < u->cl[j].n; k++)
				svc_yjs__item_free(doc, u->cl[j].v[k].it);
			free(u->cl[j].v);
			continue;
		}
		u->cl[w++] = u->cl[j];
	}
	u->ncl = w;
}

/* The update's delete set into u->ds (yjs readDeleteSet). Returns 0 or SVC_E_VALIDATION. */
static int decode_delete_set(struct ydec *d, struct yupdate *u)
{
	uint64_t nclients, ci, client, clock;
	if (svc_yjs__get_varuint(d, &nclients) < 0 || nclients > d->len - d->pos)
		return SVC_E_VALIDATION;
	for (ci = 0; ci < nclients; ci++) {
		uint64_t nranges, r, len;
		if (svc_yjs__get_varuint(d, &client) < 0 || svc_yjs__get_varuint(d, &nranges) < 0 ||
		    nranges > (d->len - d->pos) / 2)
			return SVC_E_VALIDATION;
		for (r = 0; r < nranges; r++) {
			if (svc_yjs__get_varuint(d, &clock) < 0 || svc_yjs__get_varuint(d, &len) < 0 ||
			    len > SVC_YJS_MAX_SAFE - clock)
				return SVC_E_VALIDATION;
			svc_yjs__ds_add(&u->ds, client, clock, len);
		}
	}
	return 0;
}

/* readClientsStructRefs + readDeleteSet, all validated before anything is integrated. */
static int decode_update(struct svc_yjs_doc *doc, struct ydec *d, struct yupdate *u)
{
	uint64_t nclients, ci, nstructs, si, client, clock;
	int err = SVC_E_VALIDATION;
	size_t k;
	memset(u, 0, sizeof(*u));
	if (svc_yjs__get_varuint(d, &nclients) < 0 || nclients > (d->len - d->pos) / 3 + 1)
		goto fail;
	u->cl = svc_yjs__xcalloc(nclients ? nclients : 1, sizeof(*u->cl));
	for (ci = 0; ci < nclients; ci++) {
		struct yrefs *r = &u->cl[u->ncl];
		if (svc_yjs__get_varuint(d, &nstructs) < 0 || nstructs > d->len - d->pos ||
		    svc_yjs__get_varuint(d, &client) < 0 || svc_yjs__get_varuint(d, &clock) < 0)
			goto fail;
		/* one entry per listing; a client listed twice is resolved below */
		r->client = client;
		r->i = u->ncl++;
		for (si = 0; si < nstructs; si++)
			if ((err = decode_struct(doc, d, r, client, &clock)) < 0)
				goto fail;
		err = SVC_E_VALIDATION;
	}
	if (u->ncl > 1)
		keep_last_listings(doc, u);
	for (k = 0; k < u->ncl; k++)
		u->cl[k].i = 0;
	if ((err = decode_delete_set(d, u)) < 0)
		goto fail;
	return 0;
fail:
	update_dispose(doc, u);
	return err;
}

/* ---- integrateStructs (encoding.js) ---- */

struct stack_ent {
	size_t slot;   /* index into the refs array */
	size_t idx;    /* index inside it */
};

struct integ {
	struct yrefs *cl;
	size_t ncl;
	int *active;            /* per slot: still in clientsStructRefs */
	size_t *ids;            /* slots in ascending client order; popped from the end */
	size_t nids;
	struct stack_ent *stack;
	size_t nstack, capstack;
	struct yrefs *rest;     /* per slot */
	struct yid *missing;
	size_t nmissing, capmissing;
};

static void missing_update(struct yid **v, size_t *n, size_t *cap, uint64_t client, uint64_t clock)
{
	size_t i;
	for (i = 0; i < *n; i++) {
		if ((*v)[i].client == client) {
			if ((*v)[i].clock > clock)
				(*v)[i].clock = clock;
			return;
		}
	}
	if (*n == *cap) {
		*cap = *cap ? *cap * 2 : 8;
		*v = svc_yjs__xrealloc(*v, *cap, sizeof(**v));
	}
	(*v)[*n].client = client;
	(*v)[*n].clock = clock;
	(*n)++;
}

static struct yrefs *slot_of(struct integ *g, uint64_t client, size_t *slot)
{
	size_t lo = 0, hi = g->ncl;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (g->cl[mid].client < client)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < g->ncl && g->cl[lo].client == client) {
		*slot = lo;
		return &g->cl[lo];
	}
	return NULL;
}

static void add_stack_to_rest(struct svc_yjs_doc *doc, struct integ *g)
{
	size_t s, k, j;
	(void)doc;
	for (s = 0; s < g->nstack; s++) {
		size_t slot = g->stack[s].slot, minidx = g->stack[s].idx;
		struct yrefs *r = &g->cl[slot];
		if (!g->active[slot])
			continue;
		for (k = s + 1; k < g->nstack; k++) {
			if (g->stack[k].slot == slot && g->stack[k].idx < minidx)
				minidx = g->stack[k].idx;
		}
		for (k = minidx; k < r->n; k++) {
			if (r->v[k].it) {
				refs_push(&g->rest[slot], &r->v[k]);
				r->v[k].it = NULL;
			}
		}
		r->i = r->n;
		g->active[slot] = 0;
		for (k = 0, j = 0; k < g->nids; k++) {
			if (g->ids[k] != slot)
				g->ids[j++] = g->ids[k];
		}
		g->nids = j;
	}
	g->nstack = 0;
}

static int next_target(struct integ *g, size_t *slot)
{
	while (g->nids > 0) {
		size_t s = g->ids[g->nids - 1];
		if (g->cl[s].i < g->cl[s].n) {
			*slot = s;
			return 1;
		}
		g->nids--;
	}
	return 0;
}

/* getMissing (Item.js): 1 + slot-less client id in *missing if a dependency is absent. */
static int get_missing(struct svc_yjs_doc *doc, struct yref *ref, uint64_t *missing)
{
	struct yitem *it = ref->it;
	if ((it->flags & YF_ORIGIN) && it->origin.client != it->id.client &&
	    it->origin.clock >= svc_yjs__state(doc, it->origin.client)) {
		*missing = it->origin.client;
		return 1;
	}
	if ((it->flags & YF_RORIGIN) && it->rorigin.client != it->id.client &&
	    it->rorigin.clock >= svc_yjs__state(doc, it->rorigin.client)) {
		*missing = it->rorigin.client;
		return 1;
	}
	if (ref->parent_kind == 2 && ref->parent_id.client != it->id.client &&
	    ref->parent_id.clock >= svc_yjs__state(doc, ref->parent_id.client)) {
		*missing = ref->parent_id.client;
		return 1;
	}
	it->left = NULL;
	it->right = NULL;
	if (it->flags & YF_ORIGIN) {
		it->left = svc_yjs__clean_end(doc, it->origin);
		if (it->left->ref != YC_GC) {
			it->origin.client = it->left->id.client;
			it->origin.clock = it->left->id.clock + it->left->len - 1;
		}
	}
	if (it->flags & YF_RORIGIN) {
		it->right = svc_yjs__clean_start(doc, it->rorigin);
		it->rorigin = it->right->id;
	}
	it->parent = NULL;
	it->parent_sub = NULL;
	if ((it->left && it->left->ref == YC_GC) || (it->right && it->right->ref == YC_GC)) {
		it->parent = NULL;
	} else if (ref->parent_kind == 0) {
		if (it->left) {
			it->parent = it->left->parent;
			it->parent_sub = it->left->parent_sub;
		} else if (it->right) {
			it->parent = it->right->parent;
			it->parent_sub = it->right->parent_sub;
		}
	} else if (ref->parent_kind == 2) {
		struct yitem *p = svc_yjs__find(doc, ref->parent_id);
		it->parent = p->ref == YC_TYPE ? p->c.type : NULL;
		it->parent_sub = ref->sub;
	} else {
		it->parent = svc_yjs__root(doc, ref->root, 1);
		it->parent_sub = ref->sub;
	}
	return 0;
}

/*
 * Integrates the refs (ascending client order); structs that cannot be
 * integrated are appended to the doc's pending lists (via *rest_out) and
 * their missing clocks to *missing. Returns 1 if something was stashed.
 */
static void integrate_structs(struct svc_yjs_doc *doc, struct yrefs *cl, size_t ncl,
			      struct yrefs **rest_out, struct yid **missing, size_t *nmissing,
			      size_t *capmissing)
{
	struct integ g;
	size_t slot = 0, k;
	struct stack_ent head;
	int have_head = 0;
	memset(&g, 0, sizeof(g));
	*rest_out = NULL;
	if (!ncl)
		return;
	g.cl = cl;
	g.ncl = ncl;
	g.active = svc_yjs__xmalloc(ncl * sizeof(int));
	g.ids = svc_yjs__xmalloc(ncl * sizeof(size_t));
	g.rest = svc_yjs__xcalloc(ncl, sizeof(*g.rest));
	for (k = 0; k < ncl; k++) {
		g.active[k] = 1;
		g.ids[k] = k;
		cl[k].i = 0;
		g.rest[k].client = cl[k].client;
	}
	g.nids = ncl;
	if (next_target(&g, &slot)) {
		head.slot = slot;
		head.idx = cl[slot].i++;
		have_head = 1;
	}
	while (have_head) {
		struct yref *ref = &cl[head.slot].v[head.idx];
		struct yitem *it = ref->it;
		if (it && it->ref != YC_SKIP) {
			uint64_t local = svc_yjs__state(doc, it->id.client), miss;
			if (local < it->id.clock) {
				/* a struct of the same client is missing */
				if (g.nstack == g.capstack) {
					g.capstack = g.capstack ? g.capstack * 2 : 16;
					g.stack = svc_yjs__xrealloc(g.stack, g.capstack, sizeof(*g.stack));
				}
				g.stack[g.nstack++] = head;
				missing_update(missing, nmissing, capmissing, it->id.client, it->id.clock - 1);
				add_stack_to_rest(doc, &g);
			} else if (get_missing(doc, ref, &miss)) {
				size_t ms;
				struct yrefs *mr = slot_of(&g, miss, &ms);
				if (g.nstack == g.capstack) {
					g.capstack = g.capstack ? g.capstack * 2 : 16;
					g.stack = svc_yjs__xrealloc(g.stack, g.capstack, sizeof(*g.stack));
				}
				g.stack[g.nstack++] = head;
				if (!mr || !g.active[ms] || mr->i >= mr->n) {
					missing_update(missing, nmissing, capmissing, miss,
						       svc_yjs__state(doc, miss));
					add_stack_to_rest(doc, &g);
				} else {
					head.slot = ms;
					head.idx = mr->i++;
					continue;
				}
			} else {
				uint64_t offset = local - it->id.clock;
				if (offset == 0 || offset < it->len) {
					ref->it = NULL;
					svc_yjs__integrate(doc, it, offset);
				}
			}
		}
		/* consumed (integrated above, skipped, or already known) */
		if (cl[head.slot].v[head.idx].it && g.active[head.slot]) {
			int on_stack = 0;
			for (k = 0; k < g.nstack; k++) {
				if (g.stack[k].slot == head.slot && g.stack[k].idx == head.idx)
					on_stack = 1;
			}
			if (!on_stack) {
				svc_yjs__item_free(doc, cl[head.slot].v[head.idx].it);
				cl[head.slot].v[head.idx].it = NULL;
			}
		}
		if (g.nstack > 0) {
			head = g.stack[--g.nstack];
		} else if (g.active[slot] && cl[slot].i < cl[slot].n) {
			head.slot = slot;
			head.idx = cl[slot].i++;
		} else if (next_target(&g, &slot)) {
			head.slot = slot;
			head.idx = cl[slot].i++;
		} else {
			have_head = 0;
		}
	}
	free(g.active);
	free(g.ids);
	free(g.stack);
	*rest_out = g.rest;
}

/* Adds stashed refs to the doc's pending lists (mergeUpdates of pending). */
static void pending_add(struct svc_yjs_doc *doc, struct yrefs *rest, size_t n)
{
	size_t i, k, j;
	for (i = 0; i < n; i++) {
		struct yrefs *p = NULL;
		if (!rest[i].n)
			continue;
		for (k = 0; k < doc->npending; k++) {
			if (doc->pending[k].client == rest[i].client)
				p = &doc->pending[k];
		}
		if (!p) {
			if (doc->npending == doc->cappending) {
				doc->cappending = doc->cappending ? doc->cappending * 2 : 8;
				doc->pending = svc_yjs__xrealloc(doc->pending, doc->cappending,
								 sizeof(*doc->pending));
			}
			p = &doc->pending[doc->npending++];
			memset(p, 0, sizeof(*p));
			p->client = rest[i].client;
		}
		for (k = 0; k < rest[i].n; k++) {
			struct yref *x = &rest[i].v[k];
			int dup = 0;
			if (x->it->ref == YC_SKIP) {
				svc_yjs__item_free(doc, x->it);
				continue;
			}
			for (j = 0; j < p->n; j++) {
				if (p->v[j].it->id.clock == x->it->id.clock && p->v[j].it->len >= x->it->len)
					dup = 1;
			}
			if (dup) {
				svc_yjs__item_free(doc, x->it);
				continue;
			}
			/* insert sorted by clock */
			refs_push(p, x);
			for (j = p->n - 1; j > 0 && p->v[j - 1].it->id.clock > p->v[j].it->id.clock; j--) {
				struct yref t = p->v[j];
				p->v[j] = p->v[j - 1];
				p->v[j - 1] = t;
			}
		}
		free(rest[i].v);
		rest[i].v = NULL;
		rest[i].n = 0;
	}
	/* drop empty lists */
	for (k = 0, j = 0; k < doc->npending; k++) {
		if (doc->pending[k].n)
			doc->pending[j++] = doc->pending[k];
		else
			free(doc->pending[k].v);
	}
	doc->npending = j;
}

/* Applies the pending delete set again; what stays unapplied is merged with `dsrest`. */
static void retry_pending_ds(struct svc_yjs_doc *doc, struct yrangev *dsrest)
{
	struct yrangev old = doc->pending_ds, rest2 = { NULL, 0, 0 };
	size_t i;
	memset(&doc->pending_ds, 0, sizeof(doc->pending_ds));
	if (old.n)
		svc_yjs__ds_apply(doc, &old, &rest2);
	free(old.v);
	for (i = 0; i < rest2.n; i++)
		svc_yjs__ds_add(dsrest, rest2.v[i].client, rest2.v[i].clock, rest2.v[i].len);
	free(rest2.v);
	svc_yjs__ds_sort_merge(dsrest);
	doc->pending_ds = *dsrest;
	memset(dsrest, 0, sizeof(*dsrest));
}

/* readUpdateV2 (encoding.js) for an already decoded update. */
static void read_update(struct svc_yjs_doc *doc, struct yupdate *u)
{
	struct yrefs *rest = NULL;
	struct yid *miss = NULL;
	size_t nmiss = 0, capmiss = 0, i;
	int had_pending = doc->npending > 0, retry = 0;
	struct yrangev dsrest = { NULL, 0, 0 };
	integrate_structs(doc, u->cl, u->ncl, &rest, &miss, &nmiss, &capmiss);
	if (had_pending) {
		for (i = 0; i < doc->nmissing; i++) {
			if (doc->missing[i].clock < svc_yjs__state(doc, doc->missing[i].client)) {
				retry = 1;
				break;
			}
		}
	}
	if (rest) {
		pending_add(doc, rest, u->ncl);
		free(rest);
	}
	if (doc->npending) {
		for (i = 0; i < nmiss; i++)
			missing_update(&doc->missing, &doc->nmissing, &doc->capmissing, miss[i].client,
				       miss[i].clock);
	} else {
		doc->nmissing = 0;
	}
	free(miss);
	svc_yjs__ds_apply(doc, &u->ds, &dsrest);
	retry_pending_ds(doc, &dsrest);
	if (retry) {
		/* applyUpdateV2(pending): integrate every pending struct again */
		struct yrefs *p = doc->pending;
		size_t np = doc->npending;
		doc->pending = NULL;
		doc->npending = doc->cappending = 0;
		doc->nmissing = 0;
		if (np)
			qsort(p, np, sizeof(*p), cmp_refs_client);
		rest = NULL;
		miss = NULL;
		nmiss = capmiss = 0;
		integrate_structs(doc, p, np, &rest, &miss, &nmiss, &capmiss);
		if (rest) {
			pending_add(doc, rest, np);
			free(rest);
		}
		for (i = 0; i < nmiss; i++)
			missing_update(&doc->missing, &doc->nmissing, &doc->capmissing, miss[i].client,
				       miss[i].clock);
		if (!doc->npending)
			doc->nmissing = 0;
		free(miss);
		for (i = 0; i < np; i++) {
			size_t k;
			for (k = 0; k < p[i].n; k++) {
				if (p[i].v[k].it)
					svc_yjs__item_free(doc, p[i].v[k].it);
			}
			free(p[i].v);
		}
		free(p);
		memset(&dsrest, 0, sizeof(dsrest));
		retry_pending_ds(doc, &dsrest);
	}
}

int svc_yjs_apply_update(struct svc_yjs_doc *doc, const uint8_t *update, size_t len,
			 struct svc_yjs_buf *out_update, struct svc_yjs_report *report,
			 size_t *err_offset)
{
	struct ydec d = { update, len, 0 };
	struct yupdate u;
	int err;
	if (doc->txn)
		return SVC_E_CONFLICT;
	err = decode_update(doc, &d, &u);
	if (err < 0) {
		if (err_offset)
			*err_offset = d.pos;
		return err;
	}
	svc_yjs__txn_start(doc, 0);
	read_update(doc, &u);
	svc_yjs__txn_finish(doc, out_update, report);
	update_dispose(doc, &u);
	return 0;
}

/* ---- remote batches: several updates as one transaction ---- */

static uint64_t ds_total(const struct yrangev *v)
{
	uint64_t t = 0;
	size_t i;
	for (i = 0; i < v->n; i++)
		t += v->v[i].len;
	return t;
}

int svc_yjs_batch_begin(struct svc_yjs_doc *doc)
{
	if (doc->txn)
		return SVC_E_CONFLICT;
	svc_yjs__txn_start(doc, 0);
	doc->explicit_txn = 2;
	return 0;
}

int svc_yjs_batch_apply(struct svc_yjs_doc *doc, const uint8_t *update, size_t len, int *changed,
			size_t *err_offset)
{
	struct ydec d = { update, len, 0 };
	struct yupdate u;
	uint64_t small[8], *before = small, ds_before;
	size_t i;
	int err, grew;
	if (!doc->txn || doc->explicit_txn != 2)
		return SVC_E_CONFLICT;
	err = decode_update(doc, &d, &u);
	if (err < 0) {
		if (err_offset)
			*err_offset = d.pos;
		return err;
	}
	/* a client's edit lists one or two clients: no allocation per message on the server's hot path */
	if (u.ncl > sizeof(small) / sizeof(small[0]))
		before = svc_yjs__xmalloc(u.ncl * sizeof(*before));
	for (i = 0; i < u.ncl; i++)
		before[i] = svc_yjs__state(doc, u.cl[i].client);
	ds_before = ds_total(&doc->txn->ds);
	read_update(doc, &u);
	grew = ds_total(&doc->txn->ds) != ds_before;
	for (i = 0; i < u.ncl && !grew; i++)
		grew = svc_yjs__state(doc, u.cl[i].client) != before[i];
	if (before != small)
		free(before);
	update_dispose(doc, &u);
	if (changed)
		*changed = grew;
	return 0;
}

int svc_yjs_batch_commit(struct svc_yjs_doc *doc, struct svc_yjs_buf *out_update, struct svc_yjs_report *report)
{
	if (!doc->txn || doc->explicit_txn != 2)
		return SVC_E_CONFLICT;
	doc->explicit_txn = 0;
	svc_yjs__txn_finish(doc, out_update, report);
	return 0;
}

int svc_yjs_batch_open(const struct svc_yjs_doc *doc)
{
	return doc->txn && doc->explicit_txn == 2;
}

/* ---- state vector and state encoding ---- */

static int cmp_yid_client(const void *a, const void *b)
{
	const struct yid *x = a, *y = b;
	return x->client < y->client ? -1 : x->client > y->client;
}

int svc_yjs_state_vector(struct svc_yjs_doc *doc, struct svc_yjs_buf *out)
{
	struct yid *v = svc_yjs__xmalloc((doc->nclients ? doc->nclients : 1) * sizeof(*v));
	size_t n = 0, i;
	for (i = 0; i < doc->hcap; i++) {
		struct yclient *c = doc->clients[i];
		if (c && c->n) {
			v[n].client = c->client;
			v[n].clock = svc_yjs__state(doc, c->client);
			n++;
		}
	}
	if (n)
		qsort(v, n, sizeof(*v), cmp_yid_client);
	svc_yjs__put_varuint(out, n);
	for (i = n; i > 0; i--) {
		svc_yjs__put_varuint(out, v[i - 1].client);
		svc_yjs__put_varuint(out, v[i - 1].clock);
	}
	free(v);
	return 0;
}

static int cmp_yid_desc(const void *a, const void *b)
{
	return -cmp_yid_client(a, b);
}

/* One entry of a state vector read from a peer, with its position in the vector. */
struct sv_entry {
	uint64_t client;
	uint64_t clock;
	size_t seq;
};

static int cmp_sv_client(const void *a, const void *b)
{
	const struct sv_entry *x = a, *y = b;
	return x->client < y->client ? -1 : x->client > y->client;
}

/* By client, then by position in the vector. */
static int cmp_sv_entry(const void *a, const void *b)
{
	const struct sv_entry *x = a, *y = b;
	int c = cmp_sv_client(a, b);
	return c ? c : (x->seq < y->seq ? -1 : x->seq > y->seq);
}

int svc_yjs_encode_state(struct svc_yjs_doc *doc, const uint8_t *sv, size_t sv_len,
			 struct svc_yjs_buf *out, size_t *err_offset)
{
	struct sv_entry *have = NULL;
	struct yid *todo;
	size_t nhave = 0, ntodo = 0, i;
	struct ydec d = { sv, sv_len, 0 };
	struct yrangev ds = { NULL, 0, 0 };
	if (sv) {
		uint64_t n;
		if (svc_yjs__get_varuint(&d, &n) < 0 || n > sv_len / 2)
			goto bad;
		have = svc_yjs__xmalloc((n ? n : 1) * sizeof(*have));
		for (i = 0; i < n; i++) {
			if (svc_yjs__get_varuint(&d, &have[i].client) < 0 ||
			    svc_yjs__get_varuint(&d, &have[i].clock) < 0)
				goto bad;
			have[i].seq = i;
		}
		/* Map.set semantics: a later entry for the same client wins. Sorted by client, then
		 * by position, the last of each run of one client is the one that counts: O(n log n),
		 * not a scan per entry (a state vector from a client may hold 500,000 entries). */
		if (n)
			qsort(have, n, sizeof(*have), cmp_sv_entry);
		for (i = 0; i < n; i++) {
			if (nhave && have[nhave - 1].client == have[i].client)
				nhave--;
			have[nhave++] = have[i];
		}
	}
	todo = svc_yjs__xmalloc((doc->nclients ? doc->nclients : 1) * sizeof(*todo));
	for (i = 0; i < doc->hcap; i++) {
		struct yclient *c = doc->clients[i];
		uint64_t h = 0, st;
		struct sv_entry key, *found;
		if (!c || !c->n)
			continue;
		key.client = c->client;
		found = nhave ? bsearch(&key, have, nhave, sizeof(*have), cmp_sv_client) : NULL;
		if (found)
			h = found->clock;
		st = svc_yjs__state(doc, c->client);
		if (st > h) {
			todo[ntodo].client = c->client;
			todo[ntodo].clock = h;
			ntodo++;
		}
	}
	if (ntodo)
		qsort(todo, ntodo, sizeof(*todo), cmp_yid_desc);
	svc_yjs__put_varuint(out, ntodo);
	for (i = 0; i < ntodo; i++)
		svc_yjs__write_structs(out, svc_yjs__client(doc, todo[i].client, 0), todo[i].clock);
	free(todo);
	free(have);
	svc_yjs__ds_from_store(doc, &ds);
	svc_yjs__ds_sort_merge(&ds);
	svc_yjs__ds_write(out, &ds);
	free(ds.v);
	return 0;
bad:
	free(have);
	if (err_offset)
		*err_offset = d.pos;
	return SVC_E_VALIDATION;
}

int svc_yjs_merge_updates(const uint8_t *const *updates, const size_t *lens, size_t n,
			  struct svc_yjs_buf *out, size_t *bad_index, size_t *err_offset)
{
	struct svc_yjs_doc *doc;
	size_t i;
	int err = svc_yjs_doc_new(&doc, 0);
	if (err < 0)
		return err;
	for (i = 0; i < n; i++) {
		err = svc_yjs_apply_update(doc, updates[i], lens[i], NULL, NULL, err_offset);
		if (err < 0) {
			if (bad_index)
				*bad_index = i;
			goto done;
		}
	}
	err = svc_yjs_encode_state(doc, NULL, 0, out, NULL);
done:
	svc_yjs_doc_free(doc);
	return err;
}
