/* store.c: the struct store (yjs StructStore.js): per-client struct lists as gap buffers, finding, adding and splitting structs by ID. */
#include <stdlib.h>
#include <string.h>

#include "yjs/yjs_int.h"

/* ---- clients ---- */

struct yclient *svc_yjs__client(struct svc_yjs_doc *doc, uint64_t client, int create)
{
	size_t i;
	struct yclient *c = doc->last_client;
	if (c && c->client == client)
		return c;
	if (doc->hcap) {
		i = svc_yjs__hash_u64(client) & (doc->hcap - 1);
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
			i = svc_yjs__hash_u64(doc->clients[j]->client) & (ncap - 1);
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
	i = svc_yjs__hash_u64(client) & (doc->hcap - 1);
	while (doc->clients[i])
		i = (i + 1) & (doc->hcap - 1);
	doc->clients[i] = c;
	doc->nclients++;
	return doc->last_client = c;
}


/* ---- finding structs ---- */

uint64_t svc_yjs__state(struct svc_yjs_doc *doc, uint64_t client)
{
	return svc_yjs__client_state(svc_yjs__client(doc, client, 0));
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

/* ---- a client's list (gap buffer) ---- */

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

/* addStruct (StructStore.js) */
void svc_yjs__add_struct(struct svc_yjs_doc *doc, struct yitem *it)
{
	struct yclient *c = svc_yjs__client(doc, it->id.client, 1);
	uint64_t state = svc_yjs__client_state(c);
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

/* getItemCleanStart (StructStore.js) */
struct yitem *svc_yjs__clean_start(struct svc_yjs_doc *doc, struct yid id)
{
	struct yclient *c = svc_yjs__client(doc, id.client, 0);
	size_t i = svc_yjs__find_index(c, id.clock);
	struct yitem *s = svc_yjs__cv(c, i);
	if (s->id.clock < id.clock && s->ref != YC_GC)
		return svc_yjs__split_item(doc, c, i, id.clock - s->id.clock);
	return s;
}

/* getItemCleanEnd (StructStore.js) */
struct yitem *svc_yjs__clean_end(struct svc_yjs_doc *doc, struct yid id)
{
	struct yclient *c = svc_yjs__client(doc, id.client, 0);
	size_t i = svc_yjs__find_index(c, id.clock);
	struct yitem *s = svc_yjs__cv(c, i);
	if (id.clock != s->id.clock + s->len - 1 && s->ref != YC_GC)
		svc_yjs__split_item(doc, c, i, id.clock - s->id.clock + 1);
	return s;
}
