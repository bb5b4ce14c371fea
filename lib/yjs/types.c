/* types.c: Y.Map and Y.Text on top of the struct store: local edits with yjs search markers, reading, JSON and the replace-text helper. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "yjs/yjs_int.h"

/* ---- search markers (AbstractType.js findMarker, updateMarkerChanges) ---- */

/*
 * The markers here keep one invariant yjs's do not: an item has YF_MARKER
 * set exactly when one marker points at it (yjs allows two markers on one
 * item and stale flags). Markers only speed up finding positions, so this
 * changes no result, and it lets merges and inserts skip the marker scan for
 * unmarked items.
 */
static int visible(const struct yitem *p)
{
	return !(p->flags & YF_DELETED) && (p->flags & YF_COUNTABLE);
}

static uint32_t marker_at(const struct ytype *t, const struct yitem *p)
{
	uint32_t i;
	for (i = 0; i < t->nmarkers; i++) {
		if (t->markers[i].p == p)
			return i;
	}
	return t->nmarkers;
}

static void marker_remove(struct ytype *t, uint32_t i)
{
	memmove(t->markers + i, t->markers + i + 1, (t->nmarkers - i - 1) * sizeof(*t->markers));
	t->nmarkers--;
	if (t->mru == i)
		t->mru = UINT32_MAX;
	else if (t->mru > i && t->mru != UINT32_MAX)
		t->mru--;
}

void svc_yjs__markers_clear(struct ytype *t)
{
	uint32_t i;
	for (i = 0; i < t->nmarkers; i++)
		t->markers[i].p->flags &= (uint8_t)~YF_MARKER;
	t->nmarkers = 0;
	t->markers_stale = 0;
	t->mru = UINT32_MAX;
}

/* Item.mergeWith's search marker update: `right` is merged into `left`. */
void svc_yjs__marker_merged(struct ytype *t, struct yitem *left, struct yitem *right)
{
	uint32_t i;
	struct ymarker *m;
	if (!(right->flags & YF_MARKER))
		return;
	i = marker_at(t, right);
	if (i == t->nmarkers)
		return;
	if (left->flags & YF_MARKER) {
		marker_remove(t, i);
		return;
	}
	m = &t->markers[i];
	m->p = left;
	left->flags |= YF_MARKER;
	if (visible(left))
		m->index -= left->len;
	else
		t->markers_stale = 1;
}

static uint64_t udiff(uint64_t a, uint64_t b)
{
	return a > b ? a - b : b - a;
}

/* overwriteMarker; returns the marker now at p (another one if p already had one). */
static struct ymarker *overwrite_marker(struct svc_yjs_doc *doc, struct ytype *t, struct ymarker *m,
					struct yitem *p, uint64_t index)
{
	if (m->p != p) {
		m->p->flags &= (uint8_t)~YF_MARKER;
		if (p->flags & YF_MARKER) {
			uint32_t j = marker_at(t, p), mi = (uint32_t)(m - t->markers);
			if (j < t->nmarkers) {
				marker_remove(t, mi);
				m = &t->markers[j > mi ? j - 1 : j];
			}
		}
		m->p = p;
		p->flags |= YF_MARKER;
	}
	if (!visible(p))
		t->markers_stale = 1;
	m->index = index;
	m->ts = doc->marker_ts++;
	return m;
}

static struct ymarker *mark_position(struct svc_yjs_doc *doc, struct ytype *t, struct yitem *p, uint64_t index)
{
	struct ymarker *m;
	uint32_t i;
	if (p->flags & YF_MARKER) {
		i = marker_at(t, p);
		if (i < t->nmarkers)
			return overwrite_marker(doc, t, &t->markers[i], p, index);
	}
	if (t->nmarkers >= YJS_MAX_MARKERS) {
		m = &t->markers[0];
		for (i = 1; i < t->nmarkers; i++) {
			if (!(m->ts < t->markers[i].ts))
				m = &t->markers[i];
		}
		return overwrite_marker(doc, t, m, p, index);
	}
	m = &t->markers[t->nmarkers++];
	p->flags |= YF_MARKER;
	if (!visible(p))
		t->markers_stale = 1;
	m->p = p;
	m->index = index;
	m->ts = doc->marker_ts++;
	return m;
}

static struct ymarker *find_marker(struct svc_yjs_doc *doc, struct ytype *t, uint64_t index)
{
	struct ymarker *marker = NULL;
	struct yitem *p = t->start;
	uint64_t pindex = 0;
	uint32_t i;
	if (!t->start || index == 0 || !t->markers)
		return NULL;
	if (t->mru < t->nmarkers && udiff(index, t->markers[t->mru].index) <= 32) {
		/*
		 * The marker used last is a few units away (typing at a cursor):
		 * take it without looking for the nearest one; any marker gives
		 * the same position, the nearest only walks less.
		 */
		marker = &t->markers[t->mru];
		p = marker->p;
		pindex = marker->index;
		marker->ts = doc->marker_ts++;
	} else if (t->nmarkers) {
		/* the reduce of findMarker, written without branches (the order is random) */
		uint32_t best = 0;
		uint64_t bd = udiff(index, t->markers[0].index);
		for (i = 1; i < t->nmarkers; i++) {
			uint64_t d = udiff(index, t->markers[i].index);
			int take = !(bd < d);
			best = take ? i : best;
			bd = take ? d : bd;
		}
		marker = &t->markers[best];
		p = marker->p;
		pindex = marker->index;
		marker->ts = doc->marker_ts++;
	}
	while (p->right && pindex < index) {
		if (visible(p)) {
			if (index < pindex + p->len)
				break;
			pindex += p->len;
		}
		p = p->right;
	}
	while (p->left && pindex > index) {
		p = p->left;
		if (visible(p))
			pindex -= p->len;
	}
	while (p->left && p->left->id.client == p->id.client &&
	       p->left->id.clock + p->left->len == p->id.clock) {
		p = p->left;
		if (visible(p))
			pindex -= p->len;
	}
	if (marker && (double)udiff(marker->index, pindex) < (double)t->length / YJS_MAX_MARKERS)
		marker = overwrite_marker(doc, t, marker, p, pindex);
	else
		marker = mark_position(doc, t, p, pindex);
	t->mru = (uint32_t)(marker - t->markers);
	return marker;
}

/*
 * updateMarkerChanges (AbstractType.js). The walk that moves a marker off a
 * deleted item runs only when a marked item was deleted since the last time
 * (t->markers_stale); otherwise every marked item is visible and it is a no-op.
 */
static void update_marker_changes(struct ytype *t, uint64_t index, int64_t len)
{
	uint32_t i;
	uint64_t grow = len > 0;
	if (grow && t->markers_stale) {
		for (i = t->nmarkers; i > 0; i--) {
			struct ymarker *m = &t->markers[i - 1];
			struct yitem *p = m->p;
			p->flags &= (uint8_t)~YF_MARKER;
			while (p && ((p->flags & YF_DELETED) || !(p->flags & YF_COUNTABLE))) {
				p = p->left;
				if (p && visible(p))
					m->index -= p->len;
			}
			if (!p || (p->flags & YF_MARKER)) {
				marker_remove(t, i - 1);
				continue;
			}
			m->p = p;
			p->flags |= YF_MARKER;
		}
		t->markers_stale = 0;
	}
	/*
	 * index < m.index || (len > 0 && index === m.index): m.index = max(index,
	 * m.index + len). Written with masks: the markers lie on both sides of
	 * `index` in no order, so a branch here mispredicts half the time.
	 */
	/* index < m.index || (len > 0 && index === m.index): m.index = max(index, m.index + len) */
	if (len > 0) {
		for (i = 0; i < t->nmarkers; i++) {
			if (t->markers[i].index >= index)
				t->markers[i].index += (uint64_t)len;
		}
	} else {
		uint64_t del = (uint64_t)-len;
		for (i = 0; i < t->nmarkers; i++) {
			uint64_t mi = t->markers[i].index;
			if (mi > index)
				t->markers[i].index = mi - index > del ? mi - del : index;
		}
	}
}

/* ---- formatting attributes (YText.js) ---- */

/*
 * A ContentFormat item's payload is varString key, varString JSON value.
 * An attribute map (yjs's currentAttributes) holds, per key, the format
 * item its value comes from. Values compare the way yjs compares the parsed
 * JSON: `===` (primitives by value, objects and arrays only as the same
 * item) and equalAttrs (`===` or, for two objects, lib0 object.equalFlat).
 */
struct yattr {
	const uint8_t *key, *val;
	size_t klen, vlen;
	const struct yitem *fmt;
};

struct yattrs {
	struct yattr *v;
	size_t n, cap;
};

static void format_kv(const struct yitem *it, struct yattr *a)
{
	struct ydec d = { it->c.data, it->nbytes, 0 };
	svc_yjs__get_varstring(&d, &a->key, &a->klen);
	svc_yjs__get_varstring(&d, &a->val, &a->vlen);
	a->fmt = it;
}

static int is_format(const struct yitem *it)
{
	return it->ref == YC_FORMAT && !(it->flags & YF_DELETED);
}

static struct yattr *attrs_get(const struct yattrs *m, const uint8_t *key, size_t klen)
{
	size_t i;
	for (i = 0; i < m->n; i++) {
		if (m->v[i].klen == klen && !memcmp(m->v[i].key, key, klen))
			return &m->v[i];
	}
	return NULL;
}

static int json_is_null(const uint8_t *v, size_t n)
{
	return n == 4 && !memcmp(v, "null", 4);
}

static int json_is_container(const uint8_t *v, size_t n)
{
	while (n && (*v == ' ' || *v == '\t' || *v == '\n' || *v == '\r')) {
		v++;
		n--;
	}
	return n && (*v == '{' || *v == '[');
}

/* Map.set(key, value) */
static void attrs_set(struct yattrs *m, const struct yattr *a)
{
	struct yattr *e = attrs_get(m, a->key, a->klen);
	if (e) {
		*e = *a;
		return;
	}
	if (m->n == m->cap) {
		m->cap = m->cap ? m->cap * 2 : 4;
		m->v = svc_yjs__xrealloc(m->v, m->cap, sizeof(*m->v));
	}
	m->v[m->n++] = *a;
}

/* updateCurrentAttributes: a null value removes the key. */
static void attrs_update(struct yattrs *m, const struct yitem *fmt)
{
	struct yattr a, *e;
	format_kv(fmt, &a);
	if (json_is_null(a.val, a.vlen)) {
		e = attrs_get(m, a.key, a.klen);
		if (e)
			*e = m->v[--m->n];
		return;
	}
	attrs_set(m, &a);
}

static void attrs_copy(struct yattrs *dst, const struct yattrs *src)
{
	dst->n = dst->cap = src->n;
	dst->v = src->n ? svc_yjs__xmalloc(src->n * sizeof(*dst->v)) : NULL;
	if (src->n)
		memcpy(dst->v, src->v, src->n * sizeof(*dst->v));
}

/* `a === b` for two parsed JSON values (fmt NULL with "null" for an absent key). */
static int value_strict_eq(const struct yitem *fa, const uint8_t *va, size_t na,
			   const struct yitem *fb, const uint8_t *vb, size_t nb)
{
	if (json_is_container(va, na) || json_is_container(vb, nb))
		return fa == fb && fa != NULL;
	return na == nb && !memcmp(va, vb, na);
}

/* One lib0 `any` value starting at d: its tag, and its bytes [*s, d->pos). */
static int any_next(struct ydec *d, uint8_t *tag, size_t *s)
{
	*s = d->pos;
	if (d->pos >= d->len)
		return -1;
	*tag = d->p[d->pos];
	return svc_yjs__skip_any(d, 0);
}

/* lib0 object.equalFlat of two JSON objects (or arrays): members compared with ===. */
static int json_equal_flat(const uint8_t *va, size_t na, const uint8_t *vb, size_t nb)
{
	struct svc_yjs_buf a = {0}, b = {0};
	struct ydec da, db;
	uint64_t ca, cb, i, j;
	int eq = 0;
	if (svc_yjs__json_to_any((const char *)va, na, &a) < 0 ||
	    svc_yjs__json_to_any((const char *)vb, nb, &b) < 0 || !a.len || !b.len ||
	    a.data[0] != b.data[0] || (a.data[0] != 117 && a.data[0] != 118))
		goto done;
	da = (struct ydec){ a.data, a.len, 1 };
	db = (struct ydec){ b.data, b.len, 1 };
	if (svc_yjs__get_varuint(&da, &ca) < 0 || svc_yjs__get_varuint(&db, &cb) < 0 || ca != cb)
		goto done;
	for (i = 0; i < ca; i++) {
		const uint8_t *ka = NULL, *kb;
		size_t kla = 0, klb, sa, sb;
		uint8_t ta, tb;
		int found = 0;
		struct ydec scan;
		if (a.data[0] == 118 && svc_yjs__get_varstring(&da, &ka, &kla) < 0)
			goto done;
		if (any_next(&da, &ta, &sa) < 0 || ta == 117 || ta == 118)
			goto done;
		/* the member of b with the same key (or index) */
		scan = (struct ydec){ b.data, b.len, db.pos };
		for (j = 0; j < cb; j++) {
			if (a.data[0] == 118 && svc_yjs__get_varstring(&scan, &kb, &klb) < 0)
				goto done;
			if (any_next(&scan, &tb, &sb) < 0)
				goto done;
			if (a.data[0] == 117 ? j == i : (klb == kla && !memcmp(kb, ka, kla))) {
				found = tb != 117 && tb != 118 && scan.pos - sb == da.pos - sa &&
					!memcmp(b.data + sb, a.data + sa, da.pos - sa);
				break;
			}
		}
		if (!found)
			goto done;
	}
	eq = 1;
done:
	svc_yjs_buf_dispose(&a);
	svc_yjs_buf_dispose(&b);
	return eq;
}

/* equalAttrs (YText.js) */
static int value_equal_attrs(const struct yitem *fa, const uint8_t *va, size_t na,
			     const struct yitem *fb, const uint8_t *vb, size_t nb)
{
	if (value_strict_eq(fa, va, na, fb, vb, nb))
		return 1;
	return json_is_container(va, na) && json_is_container(vb, nb) && json_equal_flat(va, na, vb, nb);
}

/*
 * cleanupFormattingGap (YText.js) for the gap that starts at `start`:
 * deletes the format items there that a later one of the same key
 * overrides or that set what `start_attrs` already hold. (yjs also updates
 * its currentAttributes here, which no caller reads afterwards.)
 */
static void cleanup_formatting_gap(struct svc_yjs_doc *doc, struct yitem *start, const struct yattrs *start_attrs)
{
	struct yitem *end = start;
	struct yattrs end_formats = { NULL, 0, 0 };
	while (end && (!(end->flags & YF_COUNTABLE) || (end->flags & YF_DELETED))) {
		if (is_format(end)) {
			struct yattr f;
			format_kv(end, &f);
			attrs_set(&end_formats, &f);
		}
		end = end->right;
	}
	for (; start != end; start = start->right) {
		struct yattr a, *e, *sa;
		if (!is_format(start))
			continue;
		format_kv(start, &a);
		e = attrs_get(&end_formats, a.key, a.klen);
		sa = attrs_get(start_attrs, a.key, a.klen);
		if (!e || e->fmt != start ||
		    (sa ? value_strict_eq(sa->fmt, sa->val, sa->vlen, start, a.val, a.vlen)
			: json_is_null(a.val, a.vlen)))
			svc_yjs__delete(doc, start);
	}
	free(end_formats.v);
}

/* cleanupContextlessFormattingGap (YText.js) */
static void cleanup_contextless_gap(struct svc_yjs_doc *doc, struct yitem *item)
{
	struct yattrs seen = { NULL, 0, 0 };
	while (item && item->right && ((item->right->flags & YF_DELETED) || !(item->right->flags & YF_COUNTABLE)))
		item = item->right;
	for (; item && ((item->flags & YF_DELETED) || !(item->flags & YF_COUNTABLE)); item = item->left) {
		struct yattr a;
		if (!is_format(item))
			continue;
		format_kv(item, &a);
		if (attrs_get(&seen, a.key, a.klen))
			svc_yjs__delete(doc, item);
		else
			attrs_set(&seen, &a);
	}
	free(seen.v);
}

/*
 * cleanupYTextFormatting (YText.js). As written in yjs 13.6 only its first
 * gap call can delete anything (every later one starts at a content item,
 * where the gap is empty): the formats before the first visible content,
 * against empty start attributes, and only when such content exists.
 */
static void cleanup_text_formatting(struct svc_yjs_doc *doc, struct ytype *t)
{
	struct yitem *e;
	struct yattrs none = { NULL, 0, 0 };
	for (e = t->start; e; e = e->right) {
		if (!(e->flags & YF_DELETED) && e->ref != YC_FORMAT)
			break;
	}
	if (e && t->start)
		cleanup_formatting_gap(doc, t->start, &none);
}

static int type_in(struct ytype *const *v, size_t n, const struct ytype *t)
{
	size_t i;
	for (i = 0; i < n; i++) {
		if (v[i] == t)
			return 1;
	}
	return 0;
}

static void type_push(struct ytype ***v, size_t *n, size_t *cap, struct ytype *t)
{
	if (type_in(*v, *n, t))
		return;
	if (*n == *cap) {
		*cap = *cap ? *cap * 2 : 4;
		*v = svc_yjs__xrealloc(*v, *cap, sizeof(**v));
	}
	(*v)[(*n)++] = t;
}

void svc_yjs__format_cleanup(struct svc_yjs_doc *doc, const uint64_t *ds_clients, size_t nclients, size_t nds)
{
	struct ytxn *t = doc->txn;
	struct ytype **full = NULL;
	size_t nfull = 0, capfull = 0, i, k, r;
	/* a format item inserted by the transaction: clean its whole type */
	for (i = 0; i < t->ntouched; i++) {
		struct yclient *c = t->touched[i];
		if (c->before >= svc_yjs__state(doc, c->client))
			continue;
		for (k = svc_yjs__find_index(c, c->before); k < c->n; k++) {
			struct yitem *it = svc_yjs__cv(c, k);
			if (it->ref != YC_GC && is_format(it) && it->parent)
				type_push(&full, &nfull, &capfull, it->parent);
		}
	}
	/* iterateDeletedStructs, clients in the order the delete set met them */
	for (i = 0; i < nclients; i++) {
		struct yclient *c = svc_yjs__client(doc, ds_clients[i], 0);
		if (!c || !c->n)
			continue;
		size_t lo = 0, hi = nds;
		while (lo < hi) {   /* the ranges are sorted by client: the first of this one */
			size_t mid = (lo + hi) / 2;
			if (t->ds.v[mid].client < c->client)
				lo = mid + 1;
			else
				hi = mid;
		}
		for (r = lo; r < nds && t->ds.v[r].client == c->client; r++) {
			const struct yrange d = t->ds.v[r];
			uint64_t end = d.clock + d.len;
			if (d.clock >= svc_yjs__state(doc, c->client))
				continue;
			for (k = svc_yjs__find_index(c, d.clock); k < c->n && svc_yjs__cv(c, k)->id.clock < end; k++) {
				struct yitem *it = svc_yjs__cv(c, k);
				if (it->ref == YC_GC || !it->parent || !it->parent->has_formatting ||
				    type_in(full, nfull, it->parent))
					continue;
				if (it->ref == YC_FORMAT)
					type_push(&full, &nfull, &capfull, it->parent);
				else
					cleanup_contextless_gap(doc, it);
			}
		}
	}
	for (i = 0; i < nfull; i++)
		cleanup_text_formatting(doc, full[i]);
	free(full);
}

/* ---- positions (YText.js findPosition, findNextPosition) ---- */

struct tpos {
	struct yitem *left, *right;
	uint64_t index;
	struct yattrs *attrs;         /* currentAttributes, kept when the text has formatting */
};

/* ItemTextListPosition.forward */
static inline void pos_forward(struct tpos *pos)
{
	struct yitem *r = pos->right;
	if (r->ref == YC_FORMAT) {
		if (!(r->flags & YF_DELETED) && pos->attrs)
			attrs_update(pos->attrs, r);
	} else if (!(r->flags & YF_DELETED)) {
		pos->index += r->len;
	}
	pos->left = r;
	pos->right = r->right;
}

static void find_next_position(struct svc_yjs_doc *doc, struct tpos *pos, uint64_t count)
{
	while (pos->right && count > 0) {
		struct yitem *r = pos->right;
		if (r->ref == YC_FORMAT) {
			if (!(r->flags & YF_DELETED) && pos->attrs)
				attrs_update(pos->attrs, r);
		} else if (!(r->flags & YF_DELETED)) {
			if (count < r->len) {
				struct yid id = { r->id.client, r->id.clock + count };
				svc_yjs__clean_start(doc, id);
			}
			pos->index += r->len;
			count -= r->len;
		}
		pos->left = r;
		pos->right = r->right;
	}
}

static void find_position(struct svc_yjs_doc *doc, struct ytype *t, uint64_t index, struct tpos *pos)
{
	struct ymarker *m = find_marker(doc, t, index);
	if (m) {
		pos->left = m->p->left;
		pos->right = m->p;
		pos->index = m->index;
		find_next_position(doc, pos, index - m->index);
	} else {
		pos->left = NULL;
		pos->right = t->start;
		pos->index = 0;
		find_next_position(doc, pos, index);
	}
}

static struct yitem *new_local_item(struct svc_yjs_doc *doc, struct yitem *left, struct yitem *right,
				    struct ytype *parent, const struct ystr *sub)
{
	struct yitem *it = svc_yjs__item_new(doc);
	it->id.client = doc->client_id;
	it->id.clock = svc_yjs__state(doc, doc->client_id);
	it->left = left;
	it->right = right;
	if (left) {
		it->origin.client = left->id.client;
		it->origin.clock = left->id.clock + left->len - 1;
		it->flags |= YF_ORIGIN;
	}
	if (right) {
		it->rorigin = right->id;
		it->flags |= YF_RORIGIN;
	}
	it->parent = parent;
	it->parent_sub = sub;
	return it;
}

/*
 * YText.insert without attributes: insertText with the attributes found at
 * the position (so no format item is inserted, and insertAttributes and
 * insertNegatedAttributes have nothing to do); minimizeAttributeChanges
 * steps over deleted items and formats that set what is already current.
 */
static void text_insert(struct svc_yjs_doc *doc, struct ytype *t, uint64_t index, const char *s, size_t n)
{
	struct tpos pos;
	struct yitem *it;
	struct yattrs cur = { NULL, 0, 0 }, attrs = { NULL, 0, 0 };
	pos.attrs = t->has_formatting ? &cur : NULL;
	find_position(doc, t, index, &pos);
	if (!pos.attrs) {
		while (pos.right && (pos.right->flags & YF_DELETED)) {
			pos.left = pos.right;
			pos.right = pos.right->right;
		}
		goto insert;
	}
	attrs_copy(&attrs, &cur);
	for (; pos.right; pos_forward(&pos)) {
		struct yattr a, *e;
		if (pos.right->flags & YF_DELETED)
			continue;
		if (!pos.attrs || pos.right->ref != YC_FORMAT)
			break;
		format_kv(pos.right, &a);
		e = attrs_get(&attrs, a.key, a.klen);
		if (!(e ? value_equal_attrs(e->fmt, e->val, e->vlen, pos.right, a.val, a.vlen)
			: json_is_null(a.val, a.vlen)))
			break;
	}
	free(cur.v);
	free(attrs.v);
insert:
	it = new_local_item(doc, pos.left, pos.right, t, NULL);
	it->ref = YC_STRING;
	it->flags |= YF_COUNTABLE;
	it->c.data = svc_yjs__xmalloc(n);
	memcpy(it->c.data, s, n);
	it->nbytes = it->cap = (uint32_t)n;
	it->len = svc_yjs__utf16_len((const uint8_t *)s, n);
	if (t->markers)
		update_marker_changes(t, pos.index, (int64_t)it->len);
	svc_yjs__integrate(doc, it, 0);
}

/* deleteText (YText.js), with its cleanupFormattingGap when the text has formatting. */
static void text_delete(struct svc_yjs_doc *doc, struct ytype *t, uint64_t index, uint64_t length)
{
	struct tpos pos;
	uint64_t start_length = length;
	struct yattrs cur = { NULL, 0, 0 }, start_attrs = { NULL, 0, 0 };
	struct yitem *start;
	pos.attrs = t->has_formatting ? &cur : NULL;
	find_position(doc, t, index, &pos);
	if (pos.attrs)
		attrs_copy(&start_attrs, &cur);
	start = pos.right;
	while (length > 0 && pos.right) {
		struct yitem *r = pos.right;
		if (!(r->flags & YF_DELETED) &&
		    (r->ref == YC_STRING || r->ref == YC_EMBED || r->ref == YC_TYPE)) {
			if (length < r->len) {
				struct yid id = { r->id.client, r->id.clock + length };
				svc_yjs__clean_start(doc, id);
			}
			length -= r->len < length ? r->len : length;
			svc_yjs__delete(doc, r);
		}
		pos_forward(&pos);
	}
	if (pos.attrs) {
		if (start)
			cleanup_formatting_gap(doc, start, &start_attrs);
		free(cur.v);
		free(start_attrs.v);
	}
	if (t->markers)
		update_marker_changes(t, pos.index, -(int64_t)start_length + (int64_t)length);
}

/* ---- lookups ---- */

static struct ytype *root_map(struct svc_yjs_doc *doc, const char *root, int create)
{
	return svc_yjs__root(doc, svc_yjs__intern(doc, root, strlen(root)), create);
}

static struct yitem *map_value(struct ytype *t, const struct ystr *key)
{
	struct ymapent *e = svc_yjs__map_find(t, key);
	if (!e || !e->item || (e->item->flags & YF_DELETED))
		return NULL;
	return e->item;
}

/*
 * Root `root` and key `key` for the edit functions, remembering the last
 * ones so that a stream of edits to one file skips hashing (roots and
 * interned strings live as long as the document, so the cache stays valid).
 */
static struct ytype *cached_root(struct svc_yjs_doc *doc, const char *root)
{
	struct ytype *r = doc->cache_root;
	size_t n = strlen(root);
	if (r && r->name->len == n && !memcmp(r->name->s, root, n))
		return r;
	r = root_map(doc, root, 0);
	if (r)
		doc->cache_root = r;
	return r;
}

static const struct ystr *cached_key(struct svc_yjs_doc *doc, const char *key, size_t key_len)
{
	const struct ystr *k = doc->cache_key;
	if (k && k->len == key_len && !memcmp(k->s, key, key_len))
		return k;
	return doc->cache_key = svc_yjs__intern(doc, key, key_len);
}

static struct ytype *find_text(struct svc_yjs_doc *doc, const char *root, const char *key, size_t key_len)
{
	struct ytype *r = cached_root(doc, root);
	struct yitem *it;
	if (!r)
		return NULL;
	it = map_value(r, cached_key(doc, key, key_len));
	if (!it || it->ref != YC_TYPE || it->c.type->type_ref != 2)
		return NULL;
	return it->c.type;
}

static void text_to_utf8(const struct ytype *t, struct svc_yjs_buf *out)
{
	const struct yitem *n;
	for (n = t->start; n; n = n->right) {
		if (!(n->flags & YF_DELETED) && n->ref == YC_STRING)
			svc_yjs__string_put(out, n);
	}
}

int svc_yjs_text_read(struct svc_yjs_doc *doc, const char *root, const char *key, size_t key_len,
		      struct svc_yjs_buf *out)
{
	struct ytype *t = find_text(doc, root, key, key_len);
	if (!t)
		return SVC_E_NOT_FOUND;
	text_to_utf8(t, out);
	return 0;
}

int64_t svc_yjs_text_length(struct svc_yjs_doc *doc, const char *root, const char *key, size_t key_len)
{
	struct ytype *t = find_text(doc, root, key, key_len);
	return t ? (int64_t)t->length : -1;
}

/* ---- transactions ---- */

int svc_yjs_txn_begin(struct svc_yjs_doc *doc)
{
	if (doc->txn)
		return SVC_E_CONFLICT;
	svc_yjs__txn_start(doc, 1);
	doc->explicit_txn = 1;
	return 0;
}

int svc_yjs_txn_commit(struct svc_yjs_doc *doc, struct svc_yjs_buf *out_update, struct svc_yjs_report *report)
{
	if (!doc->txn || doc->explicit_txn != 1)
		return SVC_E_CONFLICT;
	doc->explicit_txn = 0;
	svc_yjs__txn_finish(doc, out_update, report);
	return 0;
}

static int op_begin(struct svc_yjs_doc *doc)
{
	if (doc->txn)
		return 0;
	svc_yjs__txn_start(doc, 1);
	return 1;
}

static void op_end(struct svc_yjs_doc *doc, int own, struct svc_yjs_buf *out_update, struct svc_yjs_report *report)
{
	if (own)
		svc_yjs__txn_finish(doc, out_update, report);
}

int svc_yjs_text_insert(struct svc_yjs_doc *doc, const char *root, const char *key, size_t key_len,
			uint64_t index, const char *s, size_t n, struct svc_yjs_buf *out_update,
			struct svc_yjs_report *report)
{
	struct ytype *t = find_text(doc, root, key, key_len);
	int own;
	if (svc_yjs_batch_open(doc))
		return SVC_E_CONFLICT; /* a remote batch is open: commit it first */
	if (!t)
		return SVC_E_NOT_FOUND;
	if (!svc_yjs__utf8_valid((const uint8_t *)s, n) || index > t->length || n > UINT32_MAX)
		return SVC_E_VALIDATION;
	if (n == 0)
		return 0;
	own = op_begin(doc);
	text_insert(doc, t, index, s, n);
	op_end(doc, own, out_update, report);
	return 0;
}

int svc_yjs_text_delete(struct svc_yjs_doc *doc, const char *root, const char *key, size_t key_len,
			uint64_t index, uint64_t count, struct svc_yjs_buf *out_update,
			struct svc_yjs_report *report)
{
	struct ytype *t = find_text(doc, root, key, key_len);
	int own;
	if (svc_yjs_batch_open(doc))
		return SVC_E_CONFLICT; /* a remote batch is open: commit it first */
	if (!t)
		return SVC_E_NOT_FOUND;
	if (index > t->length || count > t->length - index)
		return SVC_E_VALIDATION;
	if (count == 0)
		return 0;
	own = op_begin(doc);
	text_delete(doc, t, index, count);
	op_end(doc, own, out_update, report);
	return 0;
}

/* typeMapSet (AbstractType.js) */
static struct yitem *map_set_item(struct svc_yjs_doc *doc, struct ytype *m, const struct ystr *key)
{
	struct ymapent *e = svc_yjs__map_find(m, key);
	struct yitem *left = e ? e->item : NULL;
	return new_local_item(doc, left, NULL, m, key);
}

int svc_yjs_map_set_text(struct svc_yjs_doc *doc, const char *root, const char *key, size_t key_len,
			 const char *s, size_t n, struct svc_yjs_buf *out_update, struct svc_yjs_report *report)
{
	struct ytype *m, *t;
	struct yitem *it;
	int own;
	if (svc_yjs_batch_open(doc))
		return SVC_E_CONFLICT; /* a remote batch is open: commit it first */
	if (!svc_yjs__utf8_valid((const uint8_t *)s, n) || n > UINT32_MAX)
		return SVC_E_VALIDATION;
	own = op_begin(doc);
	m = root_map(doc, root, 1);
	it = map_set_item(doc, m, svc_yjs__intern(doc, key, key_len));
	t = svc_yjs__type_new(2);
	it->ref = YC_TYPE;
	it->c.type = t;
	it->len = 1;
	it->flags |= YF_COUNTABLE;
	svc_yjs__integrate(doc, it, 0);
	if (n)
		text_insert(doc, t, 0, s, n);
	op_end(doc, own, out_update, report);
	return 0;
}

int svc_yjs_map_set_json(struct svc_yjs_doc *doc, const char *root, const char *key, size_t key_len,
			 const char *json, size_t n, struct svc_yjs_buf *out_update,
			 struct svc_yjs_report *report)
{
	struct svc_yjs_buf any = {0};
	struct ytype *m;
	struct yitem *it;
	int own, err;
	if (svc_yjs_batch_open(doc))
		return SVC_E_CONFLICT; /* a remote batch is open: commit it first */
	err = svc_yjs__json_to_any(json, n, &any);
	if (err < 0)
		return err;
	if (any.len > UINT32_MAX) {
		svc_yjs_buf_dispose(&any);
		return SVC_E_TOO_LARGE;
	}
	own = op_begin(doc);
	m = root_map(doc, root, 1);
	it = map_set_item(doc, m, svc_yjs__intern(doc, key, key_len));
	it->ref = YC_ANY;
	it->c.data = any.data;
	it->nbytes = it->cap = (uint32_t)any.len;
	it->count = 1;
	it->len = 1;
	it->flags |= YF_COUNTABLE;
	svc_yjs__integrate(doc, it, 0);
	op_end(doc, own, out_update, report);
	return 0;
}

int svc_yjs_map_delete(struct svc_yjs_doc *doc, const char *root, const char *key, size_t key_len,
		       struct svc_yjs_buf *out_update, struct svc_yjs_report *report)
{
	struct ytype *m = root_map(doc, root, 0);
	struct ymapent *e;
	int own;
	if (svc_yjs_batch_open(doc))
		return SVC_E_CONFLICT; /* a remote batch is open: commit it first */
	if (!m)
		return 0;
	e = svc_yjs__map_find(m, svc_yjs__intern(doc, key, key_len));
	if (!e || !e->item)
		return 0;
	own = op_begin(doc);
	svc_yjs__delete(doc, e->item);
	op_end(doc, own, out_update, report);
	return 0;
}

/* ---- Xml types as strings (YXmlFragment/YXmlElement/YXmlText toString) ---- */

static void type_to_string(struct ytype *t, struct svc_yjs_buf *out, int depth);

/* JavaScript's String(value) of one lib0 `any` value read from d. */
static void any_to_js_string(struct ydec *d, struct svc_yjs_buf *out, int depth)
{
	uint8_t tag;
	const uint8_t *s;
	size_t n;
	uint64_t cnt, i;
	if (d->pos >= d->len || depth > YJS_MAX_DEPTH) {
		d->pos = d->len;
		return;
	}
	tag = d->p[d->pos];
	switch (tag) {
	case 127:
		d->pos++;
		svc_yjs__put(out, "undefined", 9);
		return;
	case 119:
		d->pos++;
		if (svc_yjs__get_varstring(d, &s, &n) == 0)
			svc_yjs__put(out, s, n);
		return;
	case 118:
		svc_yjs__skip_any(d, 0);
		svc_yjs__put(out, "[object Object]", 15);
		return;
	case 117:
		/* Array.prototype.join(','): null and undefined become '' */
		d->pos++;
		if (svc_yjs__get_varuint(d, &cnt) < 0)
			return;
		for (i = 0; i < cnt && d->pos < d->len; i++) {
			if (i)
				svc_yjs__put_u8(out, ',');
			if (d->p[d->pos] == 126 || d->p[d->pos] == 127)
				d->pos++;
			else
				any_to_js_string(d, out, depth + 1);
		}
		return;
	case 116:
		d->pos++;
		if (svc_yjs__get_varbytes(d, &s, &n) == 0) {
			for (i = 0; i < n; i++) {
				char tmp[8];
				int k = snprintf(tmp, sizeof(tmp), "%s%u", i ? "," : "", s[i]);
				if (k > 0)
					svc_yjs__put(out, tmp, (size_t)k);
			}
		}
		return;
	default:
		/* null, booleans and numbers print as JSON does */
		if (svc_yjs__any_to_json(d, out, depth) < 0)
			d->pos = d->len;
		return;
	}
}

static void json_to_js_string(const uint8_t *json, size_t n, struct svc_yjs_buf *out)
{
	struct svc_yjs_buf any = {0};
	if (n == 9 && !memcmp(json, "undefined", 9)) {
		svc_yjs__put(out, "undefined", 9);
	} else if (svc_yjs__json_to_any((const char *)json, n, &any) == 0) {
		struct ydec d = { any.data, any.len, 0 };
		any_to_js_string(&d, out, 0);
	}
	svc_yjs_buf_dispose(&any);
}

/* String() of element `elem` of an item's content (ContentString: the whole string at once). */
static void item_to_js_string(const struct yitem *it, uint64_t elem, struct svc_yjs_buf *out, int depth)
{
	struct ydec d = { it->c.data, it->nbytes, 0 };
	const uint8_t *s;
	size_t n;
	uint64_t k;
	switch (it->ref) {
	case YC_STRING:
		svc_yjs__string_put(out, it);
		return;
	case YC_ANY:
		for (k = 0; k < elem; k++)
			svc_yjs__skip_any(&d, 0);
		any_to_js_string(&d, out, depth);
		return;
	case YC_JSON:
		for (k = 0; k <= elem; k++)
			svc_yjs__get_varstring(&d, &s, &n);
		json_to_js_string(s, n, out);
		return;
	case YC_EMBED:
		if (svc_yjs__get_varstring(&d, &s, &n) == 0)
			json_to_js_string(s, n, out);
		return;
	case YC_BINARY: {
		struct svc_yjs_buf any = {0};
		struct ydec d2;
		svc_yjs__put_u8(&any, 116);
		svc_yjs__put(&any, it->c.data, it->nbytes);
		d2 = (struct ydec){ any.data, any.len, 0 };
		any_to_js_string(&d2, out, depth);
		svc_yjs_buf_dispose(&any);
		return;
	}
	case YC_TYPE:
		type_to_string(it->c.type, out, depth + 1);
		return;
	default:
		svc_yjs__put(out, "[object Object]", 15);
		return;
	}
}

/* YXmlFragment.toString: the children's strings joined. */
static void children_to_string(const struct ytype *t, struct svc_yjs_buf *out, int depth)
{
	const struct yitem *n;
	uint64_t e;
	for (n = t->start; n; n = n->right) {
		if ((n->flags & YF_DELETED) || !(n->flags & YF_COUNTABLE))
			continue;
		if (n->ref == YC_STRING) {
			item_to_js_string(n, 0, out, depth);
			continue;
		}
		for (e = 0; e < n->len; e++)
			item_to_js_string(n, e, out, depth);
	}
}

static int cmp_ents_key(const void *a, const void *b)
{
	const struct ymapent *x = a, *y = b;
	size_t n = x->key->len < y->key->len ? x->key->len : y->key->len;
	int c = memcmp(x->key->s, y->key->s, n);
	return c ? c : (x->key->len > y->key->len) - (x->key->len < y->key->len);
}

/* YXmlElement.toString: <name k="v" ...>children</name>, attributes sorted by key. */
static void element_to_string(struct ytype *t, struct svc_yjs_buf *out, int depth)
{
	struct ydec d = { t->xml_name, t->xml_name_len, 0 };
	const uint8_t *name = (const uint8_t *)"";
	size_t nn = 0, i, na = 0;
	struct svc_yjs_buf lname = {0};
	struct ymapent *attrs = t->nents ? svc_yjs__xmalloc(t->nents * sizeof(*attrs)) : NULL;
	if (t->xml_name)
		svc_yjs__get_varstring(&d, &name, &nn);
	for (i = 0; i < t->nents; i++) {
		if (t->ents[i].item && !(t->ents[i].item->flags & YF_DELETED))
			attrs[na++] = t->ents[i];
	}
	if (na > 1)
		qsort(attrs, na, sizeof(*attrs), cmp_ents_key);
	svc_yjs__put(&lname, name, nn);
	for (i = 0; i < lname.len; i++) {
		/* toLocaleLowerCase, ASCII letters only */
		if (lname.data[i] >= 'A' && lname.data[i] <= 'Z')
			lname.data[i] = (uint8_t)(lname.data[i] - 'A' + 'a');
	}
	svc_yjs__put_u8(out, '<');
	svc_yjs__put(out, lname.data, lname.len);
	for (i = 0; i < na; i++) {
		svc_yjs__put_u8(out, ' ');
		svc_yjs__put(out, attrs[i].key->s, attrs[i].key->len);
		svc_yjs__put(out, "=\"", 2);
		item_to_js_string(attrs[i].item, attrs[i].item->len - 1, out, depth);
		svc_yjs__put_u8(out, '"');
	}
	svc_yjs__put_u8(out, '>');
	children_to_string(t, out, depth);
	svc_yjs__put(out, "</", 2);
	svc_yjs__put(out, lname.data, lname.len);
	svc_yjs__put_u8(out, '>');
	svc_yjs_buf_dispose(&lname);
	free(attrs);
}

struct xattr {                  /* one attribute of a nested node: key="value" */
	struct svc_yjs_buf key, val;
};

static int cmp_bufs(const struct svc_yjs_buf *x, const struct svc_yjs_buf *y)
{
	size_t n = x->len < y->len ? x->len : y->len;
	int c = n ? memcmp(x->data, y->data, n) : 0;
	return c ? c : (x->len > y->len) - (x->len < y->len);
}

static int cmp_xattr(const void *a, const void *b)
{
	return cmp_bufs(&((const struct xattr *)a)->key, &((const struct xattr *)b)->key);
}

static int cmp_attr_key(const void *a, const void *b)
{
	const struct yattr *x = a, *y = b;
	size_t n = x->klen < y->klen ? x->klen : y->klen;
	int c = memcmp(x->key, y->key, n);
	return c ? c : (x->klen > y->klen) - (x->klen < y->klen);
}

/* The nested node of one attribute: `for (key in value)` of the parsed value, sorted. */
static void open_node(const struct yattr *a, struct svc_yjs_buf *out)
{
	struct svc_yjs_buf any = {0};
	struct xattr *xs = NULL;
	size_t nx = 0, i;
	svc_yjs__put_u8(out, '<');
	svc_yjs__put(out, a->key, a->klen);
	if (svc_yjs__json_to_any((const char *)a->val, a->vlen, &any) == 0 && any.len) {
		struct ydec d = { any.data, any.len, 1 };
		uint64_t cnt, k;
		if (any.data[0] == 118 || any.data[0] == 117) {
			if (svc_yjs__get_varuint(&d, &cnt) == 0 && cnt <= any.len) {
				xs = svc_yjs__xcalloc(cnt ? cnt : 1, sizeof(*xs));
				for (k = 0; k < cnt && d.pos < d.len; k++, nx++) {
					const uint8_t *ks;
					size_t kn;
					if (any.data[0] == 118) {
						if (svc_yjs__get_varstring(&d, &ks, &kn) < 0)
							break;
						svc_yjs__put(&xs[nx].key, ks, kn);
					} else {
						char tmp[24];
						int l = snprintf(tmp, sizeof(tmp), "%llu", (unsigned long long)k);
						svc_yjs__put(&xs[nx].key, tmp, l > 0 ? (size_t)l : 0);
					}
					any_to_js_string(&d, &xs[nx].val, 1);
				}
			}
		} else if (any.data[0] == 119) {
			/* a string enumerates its UTF-16 units: "0"="c" ... (BMP characters) */
			const uint8_t *ss;
			size_t sn, p = 0;
			if (svc_yjs__get_varstring(&d, &ss, &sn) == 0) {
				xs = svc_yjs__xcalloc(sn ? sn : 1, sizeof(*xs));
				while (p < sn) {
					size_t q = p + 1;
					char tmp[24];
					int l = snprintf(tmp, sizeof(tmp), "%zu", nx);
					while (q < sn && (ss[q] & 0xc0) == 0x80)
						q++;
					svc_yjs__put(&xs[nx].key, tmp, l > 0 ? (size_t)l : 0);
					svc_yjs__put(&xs[nx].val, ss + p, q - p);
					nx++;
					p = q;
				}
			}
		}
	}
	if (nx > 1)
		qsort(xs, nx, sizeof(*xs), cmp_xattr);
	for (i = 0; i < nx; i++) {
		svc_yjs__put_u8(out, ' ');
		svc_yjs__put(out, xs[i].key.data, xs[i].key.len);
		svc_yjs__put(out, "=\"", 2);
		svc_yjs__put(out, xs[i].val.data, xs[i].val.len);
		svc_yjs__put_u8(out, '"');
		svc_yjs_buf_dispose(&xs[i].key);
		svc_yjs_buf_dispose(&xs[i].val);
	}
	svc_yjs__put_u8(out, '>');
	free(xs);
	svc_yjs_buf_dispose(&any);
}

/* One delta op of YXmlText.toString: nested nodes (sorted), the insert, closing tags. */
static void xml_op(const struct yattrs *cur, const struct yitem *insert, const struct svc_yjs_buf *str,
		   struct svc_yjs_buf *out, int depth)
{
	struct yattr *v = cur->n ? svc_yjs__xmalloc(cur->n * sizeof(*v)) : NULL;
	size_t i;
	if (cur->n)
		memcpy(v, cur->v, cur->n * sizeof(*v));
	if (cur->n > 1)
		qsort(v, cur->n, sizeof(*v), cmp_attr_key);
	for (i = 0; i < cur->n; i++)
		open_node(&v[i], out);
	if (insert)
		item_to_js_string(insert, 0, out, depth);
	else
		svc_yjs__put(out, str->data, str->len);
	for (i = cur->n; i > 0; i--) {
		svc_yjs__put(out, "</", 2);
		svc_yjs__put(out, v[i - 1].key, v[i - 1].klen);
		svc_yjs__put_u8(out, '>');
	}
	free(v);
}

/* YXmlText.toString over toDelta(): every visible format ends the running string op. */
static void xml_text_to_string(const struct ytype *t, struct svc_yjs_buf *out, int depth)
{
	struct yattrs cur = { NULL, 0, 0 };
	struct svc_yjs_buf str = {0};
	const struct yitem *n;
	for (n = t->start; n; n = n->right) {
		if (n->flags & YF_DELETED)
			continue;
		if (n->ref == YC_STRING) {
			svc_yjs__string_put(&str, n);
			continue;
		}
		if (n->ref != YC_FORMAT && n->ref != YC_TYPE && n->ref != YC_EMBED)
			continue;
		if (str.len) {
			xml_op(&cur, NULL, &str, out, depth);
			str.len = 0;
		}
		if (n->ref == YC_FORMAT)
			attrs_update(&cur, n);
		else
			xml_op(&cur, n, NULL, out, depth);
	}
	if (str.len)
		xml_op(&cur, NULL, &str, out, depth);
	svc_yjs_buf_dispose(&str);
	free(cur.v);
}

/* String(type): what yjs's toString gives; types without one print as objects do. */
static void type_to_string(struct ytype *t, struct svc_yjs_buf *out, int depth)
{
	if (depth > YJS_MAX_DEPTH)
		return;
	switch (t->type_ref) {
	case 2:
		text_to_utf8(t, out);
		return;
	case 3:
		element_to_string(t, out, depth);
		return;
	case 4:
		children_to_string(t, out, depth);
		return;
	case 6:
		xml_text_to_string(t, out, depth);
		return;
	default:
		svc_yjs__put(out, "[object Object]", 15);
		return;
	}
}

/* ---- JSON (toJSON + JSON.stringify) ---- */

static int type_json(struct ytype *t, struct svc_yjs_buf *out, int depth);

/* Writes the JSON of the last element of item `it`'s content; returns 1 for undefined. */
static int item_value_json(const struct yitem *it, uint64_t elem, struct svc_yjs_buf *out, int depth)
{
	struct ydec d = { it->c.data, it->nbytes, 0 };
	const uint8_t *s;
	size_t n;
	uint64_t k;
	switch (it->ref) {
	case YC_ANY:
		for (k = 0; k < elem; k++)
			svc_yjs__skip_any(&d, 0);
		return svc_yjs__any_to_json(&d, out, depth) == 1 ? 1 : 0;
	case YC_JSON: {
		struct svc_yjs_buf any = {0};
		int r = 1;
		for (k = 0; k <= elem; k++)
			svc_yjs__get_varstring(&d, &s, &n);
		if (!(n == 9 && !memcmp(s, "undefined", 9)) &&
		    svc_yjs__json_to_any((const char *)s, n, &any) == 0) {
			struct ydec d2 = { any.data, any.len, 0 };
			r = svc_yjs__any_to_json(&d2, out, depth) == 1 ? 1 : 0;
		}
		svc_yjs_buf_dispose(&any);
		return r;
	}
	case YC_EMBED: {
		struct svc_yjs_buf any = {0};
		svc_yjs__get_varstring(&d, &s, &n);
		if (svc_yjs__json_to_any((const char *)s, n, &any) == 0) {
			struct ydec d2 = { any.data, any.len, 0 };
			svc_yjs__any_to_json(&d2, out, depth);
		}
		svc_yjs_buf_dispose(&any);
		return 0;
	}
	case YC_BINARY: {
		struct svc_yjs_buf any = {0};
		struct ydec d2;
		svc_yjs__put_u8(&any, 116);
		svc_yjs__put(&any, it->c.data, it->nbytes);
		d2.p = any.data;
		d2.len = any.len;
		d2.pos = 0;
		svc_yjs__any_to_json(&d2, out, depth);
		svc_yjs_buf_dispose(&any);
		return 0;
	}
	case YC_STRING: {
		/* getContent() of ContentString: one string per UTF-16 unit */
		int mid;
		const uint8_t *u8 = svc_yjs__string_bytes(it);
		size_t a = svc_yjs__utf16_to_byte(u8, it->nbytes, elem, &mid);
		size_t b = svc_yjs__utf16_to_byte(u8, it->nbytes, elem + 1, &mid);
		if (mid || b == a)
			svc_yjs__json_string(out, (const uint8_t *)"\xef\xbf\xbd", 3);
		else
			svc_yjs__json_string(out, u8 + a, b - a);
		return 0;
	}
	case YC_TYPE:
		return type_json(it->c.type, out, depth + 1);
	default:
		return 1;
	}
}

static int type_json(struct ytype *t, struct svc_yjs_buf *out, int depth)
{
	uint32_t k;
	int first = 1;
	const struct yitem *n;
	if (depth > YJS_MAX_DEPTH) {
		svc_yjs__put(out, "null", 4);
		return 0;
	}
	switch (t->type_ref) {
	case 2: {
		struct svc_yjs_buf s = {0};
		text_to_utf8(t, &s);
		svc_yjs__json_string(out, s.data ? s.data : (const uint8_t *)"", s.len);
		svc_yjs_buf_dispose(&s);
		return 0;
	}
	case 0:
		svc_yjs__put_u8(out, '[');
		for (n = t->start; n; n = n->right) {
			uint64_t e;
			if (!visible(n))
				continue;
			for (e = 0; e < n->len; e++) {
				size_t mark = out->len;
				if (!first)
					svc_yjs__put_u8(out, ',');
				first = 0;
				if (item_value_json(n, e, out, depth) == 1) {
					out->len = mark;
					if (mark > 0 && out->data[mark - 1] != '[')
						svc_yjs__put_u8(out, ',');
					svc_yjs__put(out, "null", 4);
				}
			}
		}
		svc_yjs__put_u8(out, ']');
		return 0;
	case 3: case 4: case 6: {
		/* YXmlElement/YXmlFragment/YXmlText.toJSON() is toString() */
		struct svc_yjs_buf str = {0};
		type_to_string(t, &str, depth);
		svc_yjs__json_string(out, str.data ? str.data : (const uint8_t *)"", str.len);
		svc_yjs_buf_dispose(&str);
		return 0;
	}
	default: /* map or unknown root: map semantics */
		svc_yjs__put_u8(out, '{');
		for (k = 0; k < t->nents; k++) {
			const struct yitem *it = t->ents[k].item;
			size_t mark = out->len;
			if (!it || (it->flags & YF_DELETED))
				continue;
			if (!first)
				svc_yjs__put_u8(out, ',');
			svc_yjs__json_string(out, (const uint8_t *)t->ents[k].key->s, t->ents[k].key->len);
			svc_yjs__put_u8(out, ':');
			if (item_value_json(it, it->len - 1, out, depth) == 1)
				out->len = mark;
			else
				first = 0;
		}
		svc_yjs__put_u8(out, '}');
		return 0;
	}
}

int svc_yjs_map_json(struct svc_yjs_doc *doc, const char *root, struct svc_yjs_buf *out)
{
	struct ytype *t = root_map(doc, root, 0);
	int saved;
	if (!t) {
		svc_yjs__put(out, "{}", 2);
		return 0;
	}
	saved = t->type_ref;
	t->type_ref = 1;
	type_json(t, out, 0);
	t->type_ref = saved;
	return 0;
}

int svc_yjs_map_keys(struct svc_yjs_doc *doc, const char *root,
		     int (*fn)(const char *key, size_t key_len, int is_text, void *arg), void *arg)
{
	struct ytype *t = root_map(doc, root, 0);
	uint32_t k;
	if (!t)
		return 0;
	for (k = 0; k < t->nents; k++) {
		const struct yitem *it = t->ents[k].item;
		int r;
		if (!it || (it->flags & YF_DELETED))
			continue;
		r = fn(t->ents[k].key->s, t->ents[k].key->len,
		       it->ref == YC_TYPE && it->c.type->type_ref == 2, arg);
		if (r)
			return r;
	}
	return 0;
}

/* ---- replace text: prefix/suffix, then a Myers line diff ---- */

struct line {
	size_t off, len;
	uint64_t hash;
};

static size_t split_lines(const char *s, size_t n, struct line **out)
{
	size_t cnt = 0, i, start = 0, k = 0;
	struct line *v;
	for (i = 0; i < n; i++) {
		if (s[i] == '\n')
			cnt++;
	}
	if (n && s[n - 1] != '\n')
		cnt++;
	v = svc_yjs__xmalloc((cnt ? cnt : 1) * sizeof(*v));
	for (i = 0; i <= n; i++) {
		if (i == n ? i > start : s[i] == '\n') {
			size_t end = i == n ? n : i + 1, j;
			uint64_t h = 1469598103934665603ULL;
			for (j = start; j < end; j++)
				h = (h ^ (uint8_t)s[j]) * 1099511628211ULL;
			v[k].off = start;
			v[k].len = end - start;
			v[k].hash = h;
			k++;
			start = end;
		}
	}
	*out = v;
	return k;
}

static int line_eq(const char *a, const struct line *x, const char *b, const struct line *y)
{
	return x->hash == y->hash && x->len == y->len && !memcmp(a + x->off, b + y->off, x->len);
}

struct hunk {
	size_t a0, a1, b0, b1;   /* line ranges [a0,a1) old, [b0,b1) new */
};

#define MAX_D 1000

/*
 * Myers' O(ND) diff (greedy forward, with the V vectors kept per D for the
 * trace back). Returns the number of hunks in *out, or -1 when D > MAX_D.
 */
static long myers(const char *a, const struct line *la, size_t n, const char *b,
		  const struct line *lb, size_t m, struct hunk **out)
{
	long max = (long)(n + m), d, k, found = -1;
	long off = max + 1;
	long **trace = NULL;
	long *v = svc_yjs__xcalloc((size_t)(2 * max + 3), sizeof(long));
	long x, y, nh = 0, caph = 0;
	struct hunk *h = NULL;
	long dmax = max < MAX_D ? max : MAX_D;
	trace = svc_yjs__xcalloc((size_t)dmax + 1, sizeof(long *));
	for (d = 0; d <= dmax; d++) {
		for (k = -d; k <= d; k += 2) {
			if (k == -d || (k != d && v[off + k - 1] < v[off + k + 1]))
				x = v[off + k + 1];
			else
				x = v[off + k - 1] + 1;
			y = x - k;
			while (x < (long)n && y < (long)m && line_eq(a, &la[x], b, &lb[y])) {
				x++;
				y++;
			}
			v[off + k] = x;
			if (x >= (long)n && y >= (long)m) {
				found = d;
				break;
			}
		}
		/* keep only the diagonals -d..d of this round */
		trace[d] = svc_yjs__xmalloc((size_t)(2 * d + 1) * sizeof(long));
		memcpy(trace[d], v + off - d, (size_t)(2 * d + 1) * sizeof(long));
		if (found >= 0)
			break;
	}
	if (found < 0) {
		nh = -1;
		goto done;
	}
	/* trace back: collect edit operations as hunks (reverse order) */
	x = (long)n;
	y = (long)m;
	for (d = found; d > 0; d--) {
		long *pv = trace[d - 1] + (d - 1), prev_k, prev_x, prev_y;
		k = x - y;
		if (k == -d || (k != d && pv[k - 1] < pv[k + 1]))
			prev_k = k + 1;
		else
			prev_k = k - 1;
		prev_x = pv[prev_k];
		prev_y = prev_x - prev_k;
		while (x > prev_x && y > prev_y) {
			x--;
			y--;
		}
		/* one edit: (prev_x,prev_y) -> (x,y) */
		if (nh > 0 && h[nh - 1].a0 == (size_t)x && h[nh - 1].b0 == (size_t)y) {
			h[nh - 1].a0 = (size_t)prev_x;
			h[nh - 1].b0 = (size_t)prev_y;
		} else {
			if (nh == caph) {
				caph = caph ? caph * 2 : 16;
				h = svc_yjs__xrealloc(h, (size_t)caph, sizeof(*h));
			}
			h[nh].a0 = (size_t)prev_x;
			h[nh].a1 = (size_t)x;
			h[nh].b0 = (size_t)prev_y;
			h[nh].b1 = (size_t)y;
			nh++;
		}
		x = prev_x;
		y = prev_y;
	}
done:
	for (d = 0; d <= dmax; d++)
		free(trace[d]);
	free(trace);
	free(v);
	if (nh < 0) {
		free(h);
		return -1;
	}
	*out = h;
	return nh;
}

int svc_yjs_text_replace(struct svc_yjs_doc *doc, const char *root, const char *key, size_t key_len,
			 const char *s, size_t n, struct svc_yjs_buf *out_update, struct svc_yjs_report *report)
{
	struct ytype *t = find_text(doc, root, key, key_len);
	struct svc_yjs_buf old = {0};
	const char *o;
	size_t on, pre = 0, suf = 0, na, nb;
	struct line *la = NULL, *lb = NULL;
	struct hunk *h = NULL;
	long nh, i;
	uint64_t base16;
	int own;
	if (svc_yjs_batch_open(doc))
		return SVC_E_CONFLICT; /* a remote batch is open: commit it first */
	if (!svc_yjs__utf8_valid((const uint8_t *)s, n) || n > UINT32_MAX)
		return SVC_E_VALIDATION;
	if (!t)
		return svc_yjs_map_set_text(doc, root, key, key_len, s, n, out_update, report);
	text_to_utf8(t, &old);
	o = old.data ? (const char *)old.data : "";
	on = old.len;
	while (pre < on && pre < n && o[pre] == s[pre])
		pre++;
	/* back off to the start of a line so the line diff sees whole lines */
	while (pre > 0 && o[pre - 1] != '\n')
		pre--;
	while (suf < on - pre && suf < n - pre && o[on - 1 - suf] == s[n - 1 - suf])
		suf++;
	/* the suffix starts after a newline (or at the end) */
	while (suf > 0 && on - suf > pre && o[on - suf - 1] != '\n')
		suf--;
	own = op_begin(doc);
	na = split_lines(o + pre, on - pre - suf, &la);
	nb = split_lines(s + pre, n - pre - suf, &lb);
	base16 = svc_yjs__utf16_len((const uint8_t *)o, pre);
	nh = myers(o + pre, la, na, s + pre, lb, nb, &h);
	if (nh < 0) {
		/* too different: one hunk for the whole middle */
		h = svc_yjs__xmalloc(sizeof(*h));
		h[0].a0 = 0;
		h[0].a1 = na;
		h[0].b0 = 0;
		h[0].b1 = nb;
		nh = 1;
	}
	/* hunks come back last-first: apply in that order so earlier offsets stay valid */
	for (i = 0; i < nh; i++) {
		const struct hunk *x = &h[i];
		size_t ao = x->a0 < na ? la[x->a0].off : on - pre - suf;
		size_t ae = x->a1 < na ? la[x->a1].off : on - pre - suf;
		size_t bo = x->b0 < nb ? lb[x->b0].off : n - pre - suf;
		size_t be = x->b1 < nb ? lb[x->b1].off : n - pre - suf;
		uint64_t at = base16 + svc_yjs__utf16_len((const uint8_t *)o + pre, ao);
		uint64_t dl = svc_yjs__utf16_len((const uint8_t *)o + pre + ao, ae - ao);
		if (dl)
			text_delete(doc, t, at, dl);
		if (be > bo)
			text_insert(doc, t, at, s + pre + bo, be - bo);
	}
	op_end(doc, own, out_update, report);
	free(h);
	free(la);
	free(lb);
	svc_yjs_buf_dispose(&old);
	return 0;
}
