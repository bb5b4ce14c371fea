/* merge.c: svc-wsd's three-way text merge (base, live document, disk) and its application to a Y.Text as minimal edits. */
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "merge.h"
#include "wsd.h"

#define MYERS_MAX_D 1000 /* line edits looked for; beyond, the changed middle is one hunk */

/* A changed region: base bytes [bs, be) became other bytes [os, oe). */
struct hunk {
	size_t bs, be, os, oe;
};

struct hunks {
	struct hunk *h;
	size_t n, cap;
};

struct line {
	size_t off, len;
	uint64_t hash;
};

static int cont(unsigned char c)
{
	return (c & 0xC0) == 0x80;
}

static void hunk_push(struct hunks *hs, size_t bs, size_t be, size_t os, size_t oe)
{
	WSD_GROW(hs->h, hs->cap, hs->n + 1);
	hs->h[hs->n++] = (struct hunk){ bs, be, os, oe };
}

/*
 * Pushes the hunk a[as, ae) -> b[bs, be) with its common prefix and suffix
 * trimmed at UTF-8 character boundaries (nothing when the two are equal).
 */
static void hunk_refine(struct hunks *hs, const char *a, size_t as, size_t ae, const char *b, size_t bs, size_t be)
{
	size_t an = ae - as, bn = be - bs, p = 0, s = 0, n = an < bn ? an : bn;

	while (p < n && a[as + p] == b[bs + p])
		p++;
	while (p > 0 && ((p < an && cont((unsigned char)a[as + p])) || (p < bn && cont((unsigned char)b[bs + p]))))
		p--;
	while (s < n - p && a[ae - 1 - s] == b[be - 1 - s])
		s++;
	while (s > 0 && cont((unsigned char)a[ae - s]))
		s--;
	if (p + s == an && p + s == bn)
		return;
	hunk_push(hs, as + p, ae - s, bs + p, be - s);
}

static size_t split_lines(const char *s, size_t from, size_t to, struct line **out)
{
	size_t n = 0, i, start = from;
	struct line *l;

	for (i = from; i < to; i++)
		n += s[i] == '\n';
	n += to > from && s[to - 1] != '\n';
	l = malloc((n ? n : 1) * sizeof *l);
	if (!l)
		abort();
	n = 0;
	for (i = from; i < to; i++)
		if (s[i] == '\n' || i + 1 == to) {
			uint64_t h = 1469598103934665603ULL;
			size_t k;
			for (k = start; k <= i; k++)
				h = (h ^ (unsigned char)s[k]) * 1099511628211ULL;
			l[n++] = (struct line){ start, i + 1 - start, h };
			start = i + 1;
		}
	*out = l;
	return n;
}

static int line_eq(const char *a, const struct line *x, const char *b, const struct line *y)
{
	return x->hash == y->hash && x->len == y->len && memcmp(a + x->off, b + y->off, x->len) == 0;
}

/*
 * The move that reaches diagonal k at step d from step d-1's furthest points
 * `prev` (indexed k + d - 1): returns the x after the move, or -1 when no
 * move stays inside the N x M grid; *from gets the diagonal it came from.
 */
static long myers_pick(const long *prev, long d, long k, long N, long M, long *from)
{
	long right = -1, down = -1;

	if (k > -d && prev[k - 1 + d - 1] >= 0 && prev[k - 1 + d - 1] + 1 <= N)
		right = prev[k - 1 + d - 1] + 1;
	if (k < d && prev[k + 1 + d - 1] >= 0 && prev[k + 1 + d - 1] - k <= M)
		down = prev[k + 1 + d - 1];
	if (down >= 0 && down >= right) {
		*from = k + 1;
		return down;
	}
	*from = k - 1;
	return right;
}

/*
 * Line diff of a[from_a, to_a) and b[from_b, to_b) (E. Myers, "An O(ND)
 * difference algorithm", 1986, the greedy forward search with the trace kept
 * for the backtrack), each hunk refined to characters. At most MYERS_MAX_D
 * line edits; beyond, the whole range is one hunk.
 */
static void diff_lines(struct hunks *hs, const char *a, size_t from_a, size_t to_a, const char *b, size_t from_b,
		       size_t to_b)
{
	struct line *A = NULL, *B = NULL;
	long N = (long)split_lines(a, from_a, to_a, &A), M = (long)split_lines(b, from_b, to_b, &B);
	long *trace = NULL, d, k, D = -1, x, y;
	unsigned char *delA = NULL, *insB = NULL;
	long maxd = N + M < MYERS_MAX_D ? N + M : MYERS_MAX_D;
	size_t tcap = 0;

	delA = calloc((size_t)N + 1, 1);
	insB = calloc((size_t)M + 1, 1);
	if (!delA || !insB)
		abort();
	for (d = 0; d <= maxd && D < 0; d++) {
		long *cur, *prev;
		WSD_GROW(trace, tcap, (size_t)((d + 1) * (d + 1)));
		cur = trace + d * d;
		prev = d ? trace + (d - 1) * (d - 1) : NULL;
		for (k = -d; k <= d; k += 2) {
			long from;
			x = d == 0 ? 0 : myers_pick(prev, d, k, N, M, &from);
			if (x < 0) {
				cur[k + d] = -1;
				continue;
			}
			y = x - k;
			if (y < 0 || y > M) {
				cur[k + d] = -1;
				continue;
			}
			while (x < N && y < M && line_eq(a, &A[x], b, &B[y])) {
				x++;
				y++;
			}
			cur[k + d] = x;
			if (x == N && y == M) {
				D = d;
				break;
			}
		}
	}
	if (D < 0) {
		hunk_refine(hs, a, from_a, to_a, b, from_b, to_b);
		goto done;
	}
	/* backtrack: one deleted line of A or inserted line of B per step */
	x = N;
	y = M;
	for (d = D; d > 0; d--) {
		long from, px;
		k = x - y;
		myers_pick(trace + (d - 1) * (d - 1), d, k, N, M, &from);
		px = trace[(d - 1) * (d - 1) + from + d - 1];
		if (from == k - 1)
			delA[px] = 1; /* right: A[px] deleted */
		else
			insB[px - from] = 1; /* down: B[py] inserted */
		x = px;
		y = px - from;
	}
	/* walk both sequences; a hunk is a run of changed lines between equal ones */
	{
		long i = 0, j = 0;
		while (i < N || j < M) {
			long i0 = i, j0 = j;
			size_t as, ae, bs, be;
			if (i < N && j < M && !delA[i] && !insB[j]) {
				i++;
				j++;
				continue;
			}
			while ((i < N && delA[i]) || (j < M && insB[j])) {
				if (i < N && delA[i])
					i++;
				else
					j++;
			}
			as = i0 < N ? A[i0].off : to_a;
			ae = i < N ? A[i].off : to_a;
			bs = j0 < M ? B[j0].off : to_b;
			be = j < M ? B[j].off : to_b;
			hunk_refine(hs, a, as, ae, b, bs, be);
		}
	}
done:
	free(A);
	free(B);
	free(trace);
	free(delA);
	free(insB);
}

/* The hunks turning a into b, in order, base coordinates from a. */
static void diff(struct hunks *hs, const char *a, size_t an, const char *b, size_t bn)
{
	size_t p = 0, s = 0, n = an < bn ? an : bn;

	while (p < n && a[p] == b[p])
		p++;
	while (p > 0 && ((p < an && cont((unsigned char)a[p])) || (p < bn && cont((unsigned char)b[p]))))
		p--;
	while (s < n - p && a[an - 1 - s] == b[bn - 1 - s])
		s++;
	while (s > 0 && cont((unsigned char)a[an - s]))
		s--;
	if (p + s == an && p + s == bn)
		return;
	/* move the cut to line starts so the line diff sees whole lines */
	while (p > 0 && a[p - 1] != '\n')
		p--;
	diff_lines(hs, a, p, an - s, b, p, bn - s);
}

/* 1 when live hunk x and disk hunk y touch the same base text (see wsd_merge3). */
static int conflict(size_t s1, size_t e1, size_t s2, size_t e2)
{
	if (s1 < e2 && s2 < e1)
		return 1; /* overlapping ranges */
	if (s1 == e1 && s2 == e2)
		return s1 == s2; /* two insertions at one place */
	if (s1 == e1)
		return s2 < s1 && s1 < e2;
	if (s2 == e2)
		return s1 < s2 && s2 < e1;
	return 0;
}

int wsd_merge3(const char *base, size_t bn, const char *live, size_t ln, const char *disk, size_t dn,
	       struct wsd_merge_edit **out, size_t *nout, size_t *nconflicts)
{
	struct hunks L = { 0 }, Dk = { 0 };
	struct wsd_merge_edit *e = NULL;
	size_t ne = 0, i = 0, j = 0, conflicts = 0;
	long long shift_l = 0, shift_d = 0; /* live / disk length minus base length before the cluster */

	diff(&L, base, bn, live, ln);
	diff(&Dk, base, bn, disk, dn);
	e = malloc((Dk.n ? Dk.n : 1) * sizeof *e);
	if (!e)
		abort();
	/* sweep the hunks of both sides in base order; a cluster is a run of hunks that conflict */
	while (i < L.n || j < Dk.n) {
		size_t cs = 0, ce = 0;
		int has_l = 0, has_d = 0;
		long long dl = 0, dd = 0;
		for (;;) {
			/* the next hunk in base order, live first on a tie */
			int take_l = j >= Dk.n || (i < L.n && (L.h[i].bs < Dk.h[j].bs ||
							     (L.h[i].bs == Dk.h[j].bs && L.h[i].be <= Dk.h[j].be)));
			const struct hunk *h;
			if (i >= L.n && j >= Dk.n)
				break;
			h = take_l ? &L.h[i] : &Dk.h[j];
			if (has_l || has_d) {
				if (!conflict(h->bs, h->be, cs, ce))
					break;
				if (h->be > ce)
					ce = h->be;
			} else {
				cs = h->bs;
				ce = h->be;
			}
			if (take_l) {
				dl += (long long)(h->oe - h->os) - (long long)(h->be - h->bs);
				has_l = 1;
				i++;
			} else {
				dd += (long long)(h->oe - h->os) - (long long)(h->be - h->bs);
				has_d = 1;
				j++;
			}
		}
		if (has_d) {
			/* live's rendering of base [cs, ce) becomes disk's (disk wins where both changed) */
			struct wsd_merge_edit *m = &e[ne++];
			size_t ls = (size_t)((long long)cs + shift_l), le = (size_t)((long long)ce + shift_l + dl);
			size_t ds = (size_t)((long long)cs + shift_d), de = (size_t)((long long)ce + shift_d + dd);
			m->pos = ls;
			m->del = le - ls;
			m->ins = disk + ds;
			m->ins_len = de - ds;
			conflicts += has_l;
		}
		shift_l += dl;
		shift_d += dd;
	}
	(void)ln;
	(void)dn;
	free(L.h);
	free(Dk.h);
	*out = e;
	*nout = ne;
	if (nconflicts)
		*nconflicts = conflicts;
	return 0;
}

/* UTF-16 code units of the UTF-8 bytes s[0, n) (4-byte sequences are surrogate pairs). */
static uint64_t utf16_len(const char *s, size_t n)
{
	uint64_t u = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (!cont(c))
			u += c >= 0xF0 ? 2 : 1;
	}
	return u;
}

int wsd_merge_apply(struct svc_yjs_doc *doc, const char *root, const char *key, size_t key_len, const char *live,
		    const struct wsd_merge_edit *edits, size_t n, struct svc_yjs_buf *out_update)
{
	uint64_t *pos16 = NULL, *del16 = NULL, at = 0;
	size_t i, byte = 0;
	int err = 0;

	if (n == 0)
		return 0;
	pos16 = malloc(n * sizeof *pos16);
	del16 = malloc(n * sizeof *del16);
	if (!pos16 || !del16)
		abort();
	for (i = 0; i < n; i++) {
		at += utf16_len(live + byte, edits[i].pos - byte);
		byte = edits[i].pos;
		pos16[i] = at;
		del16[i] = utf16_len(live + edits[i].pos, edits[i].del);
	}
	if ((err = svc_yjs_txn_begin(doc)) < 0)
		goto done;
	/* from the end, so the positions before each edit stay valid */
	for (i = n; i-- > 0 && err == 0;) {
		if (del16[i])
			err = svc_yjs_text_delete(doc, root, key, key_len, pos16[i], del16[i], NULL, NULL);
		if (err == 0 && edits[i].ins_len)
			err = svc_yjs_text_insert(doc, root, key, key_len, pos16[i], edits[i].ins, edits[i].ins_len, NULL,
						  NULL);
	}
	{
		int cerr = svc_yjs_txn_commit(doc, out_update, NULL);
		if (err == 0)
			err = cerr;
	}
done:
	free(pos16);
	free(del16);
	return err;
}
