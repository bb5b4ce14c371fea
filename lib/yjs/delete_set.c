/* delete_set.c: delete sets as sorted (client, clock, len) ranges: building, sorting and merging, encoding, applying (yjs DeleteSet.js). */
#include <stdlib.h>

#include "yjs/yjs_int.h"

/* addToDeleteSet (DeleteSet.js) */
void svc_yjs__ds_add(struct yrangev *v, uint64_t client, uint64_t clock, uint64_t len)
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
void svc_yjs__ds_sort_merge(struct yrangev *v)
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

/* writeDeleteSet (DeleteSet.js) */
void svc_yjs__ds_write(struct svc_yjs_buf *b, const struct yrangev *ds)
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

/* createDeleteSetFromStructStore (DeleteSet.js): appends the deleted runs of every client to `ds`, unsorted. */
void svc_yjs__ds_from_store(struct svc_yjs_doc *doc, struct yrangev *ds)
{
	size_t i, k;
	for (i = 0; i < doc->hcap; i++) {
		struct yclient *c = doc->clients[i];
		if (!c)
			continue;
		for (k = 0; k < c->n; k++) {
			if (svc_yjs__cv(c, k)->flags & YF_DELETED) {
				uint64_t clock = svc_yjs__cv(c, k)->id.clock, len = svc_yjs__cv(c, k)->len;
				while (k + 1 < c->n && (svc_yjs__cv(c, k + 1)->flags & YF_DELETED))
					len += svc_yjs__cv(c, ++k)->len;
				svc_yjs__ds_add(ds, c->client, clock, len);
			}
		}
	}
}

/* readAndApplyDeleteSet (DeleteSet.js): applies `ds`, unapplied ranges go to `rest`. */
void svc_yjs__ds_apply(struct svc_yjs_doc *doc, const struct yrangev *ds, struct yrangev *rest)
{
	size_t r;
	for (r = 0; r < ds->n; r++) {
		uint64_t client = ds->v[r].client, clock = ds->v[r].clock;
		uint64_t end = clock + ds->v[r].len;
		struct yclient *c = svc_yjs__client(doc, client, 0);
		uint64_t state = svc_yjs__state(doc, client);
		size_t index;
		struct yitem *s;
		if (clock >= state) {
			if (end > clock)
				svc_yjs__ds_add(rest, client, clock, end - clock);
			continue;
		}
		if (state < end)
			svc_yjs__ds_add(rest, client, state, end - state);
		index = svc_yjs__find_index(c, clock);
		s = svc_yjs__cv(c, index);
		if (!(s->flags & YF_DELETED) && s->id.clock < clock) {
			struct yid sid = { client, clock };
			svc_yjs__clean_start(doc, sid);
			index++;
		}
		while (index < c->n) {
			s = svc_yjs__cv(c, index++);
			if (s->id.clock < end) {
				if (!(s->flags & YF_DELETED)) {
					if (end < s->id.clock + s->len) {
						struct yid eid = { client, end };
						svc_yjs__clean_start(doc, eid);
					}
					svc_yjs__delete(doc, s);
				}
			} else {
				break;
			}
		}
	}
}
