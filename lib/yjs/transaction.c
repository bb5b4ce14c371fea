/* transaction.c: the running transaction (yjs Transaction.js): state before, changed types, the structs to merge, and cleanup (GC, merges, report, update message). */
#include <stdlib.h>

#include "yjs/yjs_int.h"

/* ---- bookkeeping ---- */

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

void svc_yjs__txn_merge_push(struct svc_yjs_doc *doc, struct yid id)
{
	struct ytxn *t = doc->txn;
	if (t->nmerge == t->capmerge) {
		t->capmerge = t->capmerge ? t->capmerge * 2 : 16;
		t->merge = svc_yjs__xrealloc(t->merge, t->capmerge, sizeof(*t->merge));
	}
	t->merge[t->nmerge++] = id;
}

uint64_t svc_yjs__before_state(struct svc_yjs_doc *doc, uint64_t client)
{
	struct yclient *c = svc_yjs__client(doc, client, 0);
	if (!c)
		return 0;
	if (doc->txn && c->txn_seq == doc->txn->seq)
		return c->before;
	return svc_yjs__client_state(c);
}

void svc_yjs__txn_changed_add(struct svc_yjs_doc *doc, struct ytype *type, const struct ystr *sub)
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

/* ---- cleanup: GC and merging (Transaction.js) ---- */

/* tryGcDeleteSet: garbage-collects the deleted items of `ds` that nothing keeps. */
static void try_gc_ds(struct svc_yjs_doc *doc, const struct yrangev *ds)
{
	size_t r;
	for (r = ds->n; r > 0; r--) {
		const struct yrange *d = &ds->v[r - 1];
		struct yclient *c = svc_yjs__client(doc, d->client, 0);
		size_t si;
		uint64_t end = d->clock + d->len;
		if (!c || !c->n || d->clock >= svc_yjs__client_state(c))
			continue;
		for (si = svc_yjs__find_index(c, d->clock); si < c->n && svc_yjs__cv(c, si)->id.clock < end; si++) {
			struct yitem *s = svc_yjs__cv(c, si);
			if (s->ref != YC_GC && (s->flags & YF_DELETED) && !(s->flags & YF_KEEP))
				svc_yjs__item_gc(doc, s, 0);
		}
	}
}

/* tryToMergeWithLefts: returns how many structs were merged away left of pos. */
static size_t merge_lefts(struct svc_yjs_doc *doc, struct yclient *c, size_t pos)
{
	size_t i = pos, merged, k;
	struct yitem *right = svc_yjs__cv(c, pos), *left;
	for (; i > 0; i--) {
		left = svc_yjs__cv(c, i - 1);
		if ((left->flags & YF_DELETED) == (right->flags & YF_DELETED) &&
		    (left->ref == YC_GC) == (right->ref == YC_GC) && svc_yjs__item_merge(doc, left, right)) {
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

/* tryMergeDeleteSet: merges each deleted range with its left neighbours. */
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

/* ---- the report and the update message ---- */

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
		if (svc_yjs__client_state(t->touched[i]) > t->touched[i]->before)
			t->touched[n++] = t->touched[i];
	}
	t->ntouched = n;
	if (n > 1)
		qsort(t->touched, n, sizeof(*t->touched), cmp_client_ptr_desc);
	svc_yjs__put_varuint(b, n);
	for (i = 0; i < n; i++)
		svc_yjs__write_structs(b, t->touched[i], t->touched[i]->before);
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
	svc_yjs__ds_sort_merge(&t->ds);
	if (fmt_cleanup) {
		svc_yjs__format_cleanup(doc, ds_clients, nds_clients, t->ds.n);
		svc_yjs__ds_sort_merge(&t->ds);
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
		if (before == svc_yjs__client_state(c))
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
		if (!c || !c->n || id.clock >= svc_yjs__client_state(c))
			continue;
		pos = svc_yjs__find_index(c, id.clock);
		if (pos + 1 < c->n && merge_lefts(doc, c, pos + 1) > 1)
			continue;
		if (pos > 0)
			merge_lefts(doc, c, pos);
	}
	if (out_update && (t->ds.n || state_changed)) {
		write_txn_structs(out_update, t);
		svc_yjs__ds_write(out_update, &t->ds);
	}
	doc->txn = NULL;
}
