/* types.c: Y.Map and Y.Text on top of the struct store: local edits with yjs search markers, reading, JSON and the replace-text helper. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
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
	for (i = 0; i < t->nmarkers; i++) {
		struct ymarker *m = &t->markers[i];
		if (index < m->index || (len > 0 && index == m->index)) {
			int64_t moved = (int64_t)m->index + len;
			m->index = moved > (int64_t)index ? (uint64_t)moved : index;
		}
	}
}

/* ---- positions (YText.js findPosition, findNextPosition) ---- */

struct tpos {
	struct yitem *left, *right;
	uint64_t index;
};

static void find_next_position(struct svc_yjs_doc *doc, struct tpos *pos, uint64_t count)
{
	while (pos->right && count > 0) {
		struct yitem *r = pos->right;
		if (r->ref != YC_FORMAT && !(r->flags & YF_DELETED)) {
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

/* insertText without formatting attributes. */
static void text_insert(struct svc_yjs_doc *doc, struct ytype *t, uint64_t index, const char *s, size_t n)
{
	struct tpos pos;
	struct yitem *it;
	find_position(doc, t, index, &pos);
	/* minimizeAttributeChanges: skip deleted items */
	while (pos.right && (pos.right->flags & YF_DELETED)) {
		pos.left = pos.right;
		pos.right = pos.right->right;
	}
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

static void text_delete(struct svc_yjs_doc *doc, struct ytype *t, uint64_t index, uint64_t length)
{
	struct tpos pos;
	uint64_t start_length = length;
	find_position(doc, t, index, &pos);
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
		/* forward() */
		if (r->ref != YC_FORMAT && !(r->flags & YF_DELETED))
			pos.index += r->len;
		pos.left = r;
		pos.right = r->right;
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
			svc_yjs__put(out, n->c.data, n->nbytes);
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
	if (!doc->txn || !doc->explicit_txn)
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
	int own, err = svc_yjs__json_to_any(json, n, &any);
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
		size_t a = svc_yjs__utf16_to_byte(it->c.data, it->nbytes, elem, &mid);
		size_t b = svc_yjs__utf16_to_byte(it->c.data, it->nbytes, elem + 1, &mid);
		if (mid || b == a)
			svc_yjs__json_string(out, (const uint8_t *)"\xef\xbf\xbd", 3);
		else
			svc_yjs__json_string(out, it->c.data + a, b - a);
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
	case 3: case 4: case 5: case 6:
		svc_yjs__put(out, "\"\"", 2);
		return 0;
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
