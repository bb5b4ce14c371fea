/* doc.c: the document (yjs Doc.js): lifecycle, root types, interned strings, the item pool and the maps of types. */
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "yjs/yjs_int.h"

#define CHUNK_ITEMS 1024

/* ---- interned strings ---- */

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
