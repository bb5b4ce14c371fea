/* direct_save.c: the visual editor's direct save: find one element (gumbo) or CSS rule and patch the original bytes. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gumbo.h>

#include "project/direct_save.h"
#include "core/err.h"
#include "core/util.h"

#define COMPOUNDS_MAX 32   /* compounds in one selector */
#define CONDS_MAX 16       /* conditions in one compound */
#define NAME_MAX_LEN 64    /* tag, attribute and CSS property names */

/* ---- small helpers ---- */

static int lower(int c)
{
	return (c >= 'A' && c <= 'Z') ? c - 'A' + 'a' : c;
}

static int ieq_n(const char *a, size_t alen, const char *b)
{
	size_t i;

	if (strlen(b) != alen)
		return 0;
	for (i = 0; i < alen; i++)
		if (lower((unsigned char)a[i]) != lower((unsigned char)b[i]))
			return 0;
	return 1;
}

static int is_space(int c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f';
}

static void say(char *msg, size_t max, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void say(char *msg, size_t max, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, max, fmt, ap);
	va_end(ap);
}

static char *dup_n(const char *s, size_t n)
{
	char *d = malloc(n + 1);

	if (d) {
		memcpy(d, s, n);
		d[n] = '\0';
	}
	return d;
}

/* Replaces [off, off+cut) of *buf (*len bytes) with `ins` (inslen bytes); *buf is reallocated. */
static int splice(char **buf, size_t *len, size_t off, size_t cut, const char *ins, size_t inslen)
{
	size_t nlen;
	char *n;

	if (off > *len || cut > *len - off)
		return SVC_E_INTERNAL;
	nlen = *len - cut + inslen;
	if (nlen > SVC_DS_FILE_MAX)
		return SVC_E_TOO_LARGE;
	n = malloc(nlen + 1);
	if (!n)
		return SVC_E_INTERNAL;
	memcpy(n, *buf, off);
	memcpy(n + off, ins, inslen);
	memcpy(n + off + inslen, *buf + off + cut, *len - off - cut);
	n[nlen] = '\0';
	free(*buf);
	*buf = n;
	*len = nlen;
	return 0;
}

int svc_ds_escape_html(const char *s, int attr, struct svc_buf *b)
{
	int err = 0;

	for (; *s && err == 0; s++) {
		switch (*s) {
		case '&': err = svc_buf_adds(b, "&amp;"); break;
		case '<': err = svc_buf_adds(b, "&lt;"); break;
		case '>': err = svc_buf_adds(b, "&gt;"); break;
		case '"': err = attr ? svc_buf_adds(b, "&quot;") : svc_buf_add(b, s, 1); break;
		default: err = svc_buf_add(b, s, 1);
		}
	}
	return err;
}

/* ---- what may be written ---- */

/* A URL scheme that runs script: javascript:, vbscript:, data:text/html (white space and controls removed, any case). */
static int dangerous_url(const char *v)
{
	char n[32];
	size_t o = 0;

	for (; *v && o < sizeof n - 1; v++) {
		unsigned char c = (unsigned char)*v;
		if (c <= 0x20 || c == 0x7f)
			continue;
		n[o++] = (char)lower(c);
	}
	n[o] = '\0';
	return strncmp(n, "javascript:", 11) == 0 || strncmp(n, "vbscript:", 9) == 0 ||
	       strncmp(n, "data:text/html", 14) == 0;
}

static int contains_ci(const char *s, const char *needle)
{
	size_t n = strlen(needle), i;

	for (; *s; s++) {
		for (i = 0; i < n && s[i] && lower((unsigned char)s[i]) == needle[i]; i++)
			;
		if (i == n)
			return 1;
	}
	return 0;
}

/* A CSS value that may be written into a declaration: no way out of it, nothing that runs script. */
static int css_value_ok(const char *v)
{
	int q = 0, depth = 0;
	const char *p;

	if (strpbrk(v, ";{}<\\"))
		return 0;
	if (contains_ci(v, "expression(") || contains_ci(v, "javascript:") || contains_ci(v, "vbscript:") ||
	    contains_ci(v, "-moz-binding") || contains_ci(v, "behavior"))
		return 0;
	for (p = v; *p; p++) {
		if ((unsigned char)*p < 0x20)
			return 0;
		if (q) {
			if (*p == q)
				q = 0;
		} else if (*p == '"' || *p == '\'') {
			q = *p;
		} else if (*p == '(') {
			depth++;
		} else if (*p == ')' && --depth < 0) {
			return 0;
		}
	}
	return q == 0 && depth == 0;
}

/* A CSS property name: an optional "-", a letter, then letters, digits and "-"; or a custom "--name". */
static int css_name_ok(const char *s)
{
	size_t i = 0, n = strlen(s);

	if (n == 0 || n > NAME_MAX_LEN)
		return 0;
	if (s[0] == '-' && s[1] == '-')
		i = 2;
	else if (s[0] == '-')
		i = 1;
	if (!s[i] || !((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') || (i == 2 && s[i] != '-')))
		return 0;
	for (; s[i]; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= '0' && s[i] <= '9') ||
		      s[i] == '-' || s[i] == '_'))
			return 0;
	return 1;
}

/* An HTML attribute name we write: [A-Za-z_:][A-Za-z0-9_:.-]*, not on*, style, srcdoc. */
static int attr_name_ok(const char *s, char *why, size_t whymax)
{
	size_t i, n = strlen(s);

	if (n == 0 || n > NAME_MAX_LEN) {
		say(why, whymax, "the property name is empty or too long");
		return 0;
	}
	for (i = 0; i < n; i++) {
		char c = s[i];
		int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':' ||
			 (i > 0 && ((c >= '0' && c <= '9') || c == '-' || c == '.'));
		if (!ok) {
			say(why, whymax, "\"%.64s\" is not an attribute name", s);
			return 0;
		}
	}
	if (n >= 2 && lower((unsigned char)s[0]) == 'o' && lower((unsigned char)s[1]) == 'n') {
		say(why, whymax, "event handler attributes (%.64s) are not allowed", s);
		return 0;
	}
	if (ieq_n(s, n, "style") || ieq_n(s, n, "srcdoc")) {
		say(why, whymax, "the %s attribute cannot be set whole; use style.<property>", s);
		return 0;
	}
	return 1;
}

/* ---- selectors ---- */

enum cond_kind { C_ID, C_CLASS, C_ATTR, C_NTH };
enum attr_op { OP_EXISTS, OP_EQ, OP_WORD, OP_PREFIX, OP_SUFFIX, OP_SUBSTR };

struct cond {
	enum cond_kind kind;
	enum attr_op op;
	char name[NAME_MAX_LEN + 1];
	char *value;     /* malloc'd */
	long nth;
};

struct compound {
	char tag[NAME_MAX_LEN + 1]; /* "" = any */
	struct cond conds[CONDS_MAX];
	size_t nconds;
	int child;                  /* joined to the compound before it by ">" (else descendant) */
};

struct selector {
	struct compound c[COMPOUNDS_MAX];
	size_t n;
};

static void selector_free(struct selector *s)
{
	size_t i, k;

	for (i = 0; i < s->n; i++)
		for (k = 0; k < s->c[i].nconds; k++)
			free(s->c[i].conds[k].value);
}

static int ident_char(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
	       c >= 0x80;
}

/* Reads an identifier at *p into out (NAME_MAX_LEN + 1 bytes). */
static int read_ident(const char **p, char *out)
{
	size_t n = 0;

	while (ident_char((unsigned char)**p)) {
		if (n == NAME_MAX_LEN)
			return -1;
		out[n++] = **p;
		(*p)++;
	}
	out[n] = '\0';
	return n ? 0 : -1;
}

/* Reads an attribute value: a quoted string or an identifier; malloc'd into *out. */
static int read_value(const char **p, char **out)
{
	const char *s = *p;

	if (*s == '"' || *s == '\'') {
		const char *e = strchr(s + 1, *s);
		if (!e)
			return -1;
		*out = dup_n(s + 1, (size_t)(e - s - 1));
		*p = e + 1;
	} else {
		while (ident_char((unsigned char)**p))
			(*p)++;
		if (*p == s)
			return -1;
		*out = dup_n(s, (size_t)(*p - s));
	}
	return *out ? 0 : -1;
}

static int parse_selector(const char *text, struct selector *sel)
{
	const char *p = text;
	int child = 0;

	memset(sel, 0, sizeof *sel);
	while (is_space((unsigned char)*p))
		p++;
	while (*p) {
		struct compound *c;
		if (sel->n == COMPOUNDS_MAX)
			return -1;
		c = &sel->c[sel->n++];
		c->child = child;
		if (*p == '*') {
			p++;
		} else if (ident_char((unsigned char)*p)) {
			size_t i;
			if (read_ident(&p, c->tag) < 0)
				return -1;
			for (i = 0; c->tag[i]; i++)
				c->tag[i] = (char)lower((unsigned char)c->tag[i]);
		}
		while (*p && !is_space((unsigned char)*p) && *p != '>') {
			struct cond *k;
			if (c->nconds == CONDS_MAX)
				return -1;
			k = &c->conds[c->nconds++];
			if (*p == '#' || *p == '.') {
				k->kind = *p == '#' ? C_ID : C_CLASS;
				p++;
				if (read_value(&p, &k->value) < 0 || **(&k->value) == '\0')
					return -1;
			} else if (*p == '[') {
				p++;
				k->kind = C_ATTR;
				while (is_space((unsigned char)*p))
					p++;
				if (read_ident(&p, k->name) < 0)
					return -1;
				while (is_space((unsigned char)*p))
					p++;
				k->op = OP_EXISTS;
				if (*p == '=') {
					k->op = OP_EQ;
					p++;
				} else if (*p && strchr("~^$*", *p) && p[1] == '=') {
					k->op = *p == '~' ? OP_WORD : *p == '^' ? OP_PREFIX : *p == '$' ? OP_SUFFIX : OP_SUBSTR;
					p += 2;
				}
				if (k->op != OP_EXISTS) {
					while (is_space((unsigned char)*p))
						p++;
					if (read_value(&p, &k->value) < 0)
						return -1;
					while (is_space((unsigned char)*p))
						p++;
				}
				if (*p++ != ']')
					return -1;
			} else if (strncmp(p, ":nth-of-type(", 13) == 0) {
				uint64_t v;
				char num[16];
				size_t i = 0;
				p += 13;
				while (*p >= '0' && *p <= '9' && i < sizeof num - 1)
					num[i++] = *p++;
				num[i] = '\0';
				if (*p++ != ')' || svc_parse_u64(num, 1000000, &v) < 0 || v == 0)
					return -1;
				k->kind = C_NTH;
				k->nth = (long)v;
			} else {
				return -1;
			}
		}
		if (!c->tag[0] && !c->nconds && (p == text || p[-1] != '*'))
			return -1;
		child = 0;
		while (is_space((unsigned char)*p))
			p++;
		if (*p == '>') {
			child = 1;
			p++;
			while (is_space((unsigned char)*p))
				p++;
			if (!*p)
				return -1;
		}
	}
	return sel->n ? 0 : -1;
}

/* The lower-case tag name of an element into out (NAME_MAX_LEN + 1 bytes). */
static void tag_name(const GumboElement *e, char *out)
{
	size_t i;

	if (e->tag != GUMBO_TAG_UNKNOWN) {
		snprintf(out, NAME_MAX_LEN + 1, "%s", gumbo_normalized_tagname(e->tag));
		return;
	}
	{
		GumboStringPiece t = e->original_tag;
		gumbo_tag_from_original_text(&t);
		for (i = 0; i < t.length && i < NAME_MAX_LEN; i++)
			out[i] = (char)lower((unsigned char)t.data[i]);
		out[i] = '\0';
	}
}

static int is_element(const GumboNode *n)
{
	return n && (n->type == GUMBO_NODE_ELEMENT || n->type == GUMBO_NODE_TEMPLATE);
}

static int has_word(const char *list, const char *word)
{
	size_t wl = strlen(word);
	const char *p = list;

	while (*p) {
		const char *s;
		while (is_space((unsigned char)*p))
			p++;
		s = p;
		while (*p && !is_space((unsigned char)*p))
			p++;
		if ((size_t)(p - s) == wl && wl && strncmp(s, word, wl) == 0)
			return 1;
	}
	return 0;
}

static int compound_matches(const struct compound *c, const GumboNode *node)
{
	const GumboElement *e = &node->v.element;
	char name[NAME_MAX_LEN + 1];
	size_t k;

	tag_name(e, name);
	if (c->tag[0] && strcmp(c->tag, name) != 0)
		return 0;
	for (k = 0; k < c->nconds; k++) {
		const struct cond *d = &c->conds[k];
		GumboAttribute *a;
		switch (d->kind) {
		case C_ID:
			a = gumbo_get_attribute(&e->attributes, "id");
			if (!a || strcmp(a->value, d->value) != 0)
				return 0;
			break;
		case C_CLASS:
			a = gumbo_get_attribute(&e->attributes, "class");
			if (!a || !has_word(a->value, d->value))
				return 0;
			break;
		case C_ATTR: {
			size_t vl, al;
			a = gumbo_get_attribute(&e->attributes, d->name);
			if (!a)
				return 0;
			vl = d->value ? strlen(d->value) : 0;
			al = strlen(a->value);
			if ((d->op == OP_EQ && strcmp(a->value, d->value) != 0) ||
			    (d->op == OP_WORD && !has_word(a->value, d->value)) ||
			    (d->op == OP_PREFIX && (!vl || strncmp(a->value, d->value, vl) != 0)) ||
			    (d->op == OP_SUFFIX && (!vl || al < vl || strcmp(a->value + al - vl, d->value) != 0)) ||
			    (d->op == OP_SUBSTR && (!vl || !strstr(a->value, d->value))))
				return 0;
			break;
		}
		case C_NTH: {
			const GumboNode *parent = node->parent;
			long pos = 0;
			size_t i;
			if (!parent || (parent->type != GUMBO_NODE_ELEMENT && parent->type != GUMBO_NODE_TEMPLATE &&
					parent->type != GUMBO_NODE_DOCUMENT))
				return 0;
			{
				const GumboVector *kids = parent->type == GUMBO_NODE_DOCUMENT ? &parent->v.document.children
											      : &parent->v.element.children;
				for (i = 0; i < kids->length; i++) {
					const GumboNode *s = kids->data[i];
					char sn[NAME_MAX_LEN + 1];
					if (!is_element(s))
						continue;
					tag_name(&s->v.element, sn);
					if (strcmp(sn, name) == 0)
						pos++;
					if (s == node)
						break;
				}
			}
			if (pos != d->nth)
				return 0;
			break;
		}
		}
	}
	return 1;
}

/* Whether compounds [0, i] match with compound i on `node` (right to left, backtracking over ancestors). */
static int matches_from(const struct selector *sel, size_t i, const GumboNode *node)
{
	const GumboNode *up;

	if (!compound_matches(&sel->c[i], node))
		return 0;
	if (i == 0)
		return 1;
	for (up = node->parent; is_element(up); up = up->parent) {
		if (matches_from(sel, i - 1, up))
			return 1;
		if (sel->c[i].child)
			return 0;
	}
	return 0;
}

static void find_all(const struct selector *sel, const GumboNode *node, const GumboNode **found, size_t *n)
{
	const GumboVector *kids;
	size_t i;

	if (is_element(node)) {
		if (matches_from(sel, sel->n - 1, node)) {
			if (*n == 0)
				*found = node;
			(*n)++;
		}
		kids = &node->v.element.children;
	} else if (node->type == GUMBO_NODE_DOCUMENT) {
		kids = &node->v.document.children;
	} else {
		return;
	}
	for (i = 0; i < kids->length; i++)
		find_all(sel, kids->data[i], found, n);
}

/* ---- HTML ---- */

/* The text content of a node (decoded), appended to b. */
static int text_of(const GumboNode *node, struct svc_buf *b)
{
	size_t i;
	int err = 0;

	if (node->type == GUMBO_NODE_TEXT || node->type == GUMBO_NODE_WHITESPACE || node->type == GUMBO_NODE_CDATA)
		return svc_buf_adds(b, node->v.text.text);
	if (!is_element(node))
		return 0;
	for (i = 0; i < node->v.element.children.length && err == 0; i++)
		err = text_of(node->v.element.children.data[i], b);
	return err;
}

/*
 * Changes one declaration of a style attribute's (decoded) text: `prop`
 * gets `value`, or is removed when value is "". Writes the new text to b and
 * the old value (malloc'd or NULL) to *old.
 */
static int restyle(const char *style, const char *prop, const char *value, struct svc_buf *b, char **old)
{
	const char *p = style;
	int err = 0, done = 0, wrote = 0;

	*old = NULL;
	while (*p && err == 0) {
		const char *s = p, *colon = NULL, *e;
		int q = 0, depth = 0;
		for (e = p; *e; e++) {
			if (q) {
				if (*e == q)
					q = 0;
			} else if (*e == '"' || *e == '\'') {
				q = *e;
			} else if (*e == '(') {
				depth++;
			} else if (*e == ')') {
				depth--;
			} else if (*e == ':' && !colon && depth == 0) {
				colon = e;
			} else if (*e == ';' && depth == 0) {
				break;
			}
		}
		p = *e ? e + 1 : e;
		{
			const char *ns = s, *ne = colon ? colon : e;
			while (ns < ne && is_space((unsigned char)*ns))
				ns++;
			while (ne > ns && is_space((unsigned char)ne[-1]))
				ne--;
			if (ne == ns && !colon)
				continue; /* empty declaration */
			if (colon && ieq_n(ns, (size_t)(ne - ns), prop)) {
				const char *vs = colon + 1, *ve = e;
				while (vs < ve && is_space((unsigned char)*vs))
					vs++;
				while (ve > vs && is_space((unsigned char)ve[-1]))
					ve--;
				free(*old);
				*old = dup_n(vs, (size_t)(ve - vs));
				if (done || !*value)
					continue; /* a later duplicate, or a removal: drop it */
				err = svc_buf_addf(b, "%s%s: %s", wrote ? "; " : "", prop, value);
				done = wrote = 1;
				continue;
			}
			/* any other declaration is kept as written, trimmed at the ends */
			{
				const char *ke = e;
				while (ke > ns && is_space((unsigned char)ke[-1]))
					ke--;
				err = svc_buf_addf(b, "%s%.*s", wrote ? "; " : "", (int)(ke - ns), ns);
			}
			wrote = 1;
		}
	}
	if (err == 0 && !done && *value)
		err = svc_buf_addf(b, "%s%s: %s", wrote ? "; " : "", prop, value);
	return err;
}

/* Applies one patch to the HTML in *buf. */
/* The one element selector `sel` matches in the parsed file `doc`, written in the file as matched, into *out. */
static int html_find(const struct selector *sel, GumboOutput *doc, const GumboNode **out, char *msg, size_t msgmax)
{
	const GumboNode *node = NULL;
	size_t count = 0;

	find_all(sel, doc->document, &node, &count);
	if (count != 1) {
		if (count)
			say(msg, msgmax, "the selector matches %zu elements; it must match exactly one", count);
		else
			say(msg, msgmax, "the selector matches no element");
		return SVC_E_VALIDATION;
	}
	if (!node->v.element.original_tag.length ||
	    (node->parse_flags & (GUMBO_INSERTION_BY_PARSER | GUMBO_INSERTION_IMPLIED |
				  GUMBO_INSERTION_RECONSTRUCTED_FORMATTING_ELEMENT | GUMBO_INSERTION_ADOPTION_AGENCY_CLONED |
				  GUMBO_INSERTION_CONVERTED_FROM_END_TAG | GUMBO_INSERTION_FROM_ISINDEX))) {
		say(msg, msgmax, "the element is not written in the file as it is matched (the parser inferred it)");
		return SVC_E_VALIDATION;
	}
	*out = node;
	return 0;
}

/* One change of the file: `cut` bytes at `off` replaced by `text`. */
struct html_edit {
	size_t off, cut;
	struct svc_buf text;
};

/* The edit of a "text" patch of element `node` of file `buf`: its children replaced by the escaped value. */
static int html_text_edit(const char *buf, const GumboNode *node, const struct svc_ds_patch *pt,
			  struct svc_ds_change *ch, struct html_edit *ed, char *msg, size_t msgmax)
{
	const GumboElement *e = &node->v.element;
	size_t i, start = (size_t)(e->original_tag.data - buf) + e->original_tag.length;
	char name[NAME_MAX_LEN + 1];
	int err;

	tag_name(e, name);
	if (!e->original_end_tag.length || (node->parse_flags & GUMBO_INSERTION_IMPLICIT_END_TAG) ||
	    e->end_pos.offset < start) {
		say(msg, msgmax, "the element has no end tag in the file, so its text cannot be replaced");
		return SVC_E_VALIDATION;
	}
	if (strcmp(name, "script") == 0 || strcmp(name, "style") == 0) {
		say(msg, msgmax, "the text of <%s> is code; edit the file instead", name);
		return SVC_E_VALIDATION;
	}
	for (i = 0; i < e->children.length; i++) {
		if ((err = text_of(e->children.data[i], &ed->text)) < 0)
			return err;
	}
	ch->old_value = svc_buf_detach(&ed->text, NULL);
	ed->off = start;
	ed->cut = e->end_pos.offset - start;
	return svc_ds_escape_html(pt->value, 0, &ed->text);
}

/*
 * The attribute a "style.<property>" or "<attribute>" patch of element `e` sets, into *out_attr, and its new
 * value into *out_value (malloc'd); the attribute as it is into *out_a (NULL when absent).
 */
static int html_attr_value(const GumboElement *e, const struct svc_ds_patch *pt, struct svc_ds_change *ch,
			   struct svc_buf *scratch, const char **out_attr, GumboAttribute **out_a, char **out_value,
			   char *msg, size_t msgmax)
{
	GumboAttribute *a;
	char why[160];
	int err;

	if (strncmp(pt->property, "style.", 6) == 0) {
		if (!css_name_ok(pt->property + 6)) {
			say(msg, msgmax, "\"%.64s\" is not a CSS property name", pt->property + 6);
			return SVC_E_VALIDATION;
		}
		if (*pt->value && !css_value_ok(pt->value)) {
			say(msg, msgmax, "the value is not allowed in a style declaration");
			return SVC_E_VALIDATION;
		}
		a = gumbo_get_attribute(&e->attributes, "style");
		if ((err = restyle(a ? a->value : "", pt->property + 6, pt->value, scratch, &ch->old_value)) < 0)
			return err;
		*out_attr = "style";
		*out_a = a;
		*out_value = svc_buf_detach(scratch, NULL);
		return *out_value ? 0 : SVC_E_INTERNAL;
	}
	if (!attr_name_ok(pt->property, why, sizeof why)) {
		say(msg, msgmax, "%s", why);
		return SVC_E_VALIDATION;
	}
	if (dangerous_url(pt->value)) {
		say(msg, msgmax, "javascript:, vbscript: and data:text/html values are not allowed");
		return SVC_E_VALIDATION;
	}
	a = gumbo_get_attribute(&e->attributes, pt->property);
	if (a)
		ch->old_value = strdup(a->value);
	*out_attr = pt->property;
	*out_a = a;
	*out_value = strdup(pt->value);
	return *out_value ? 0 : SVC_E_INTERNAL;
}

/* The edit of an attribute or style patch of element `e` of file `buf`: the value as written, or a new one. */
static int html_attr_edit(const char *buf, const GumboElement *e, const struct svc_ds_patch *pt,
			  struct svc_ds_change *ch, struct html_edit *ed, char *msg, size_t msgmax)
{
	GumboAttribute *a = NULL;
	const char *attr = NULL;
	char *newval = NULL;
	int err;

	if ((err = html_attr_value(e, pt, ch, &ed->text, &attr, &a, &newval, msg, msgmax)) < 0)
		return err;
	/* gumbo 0.10 points original_value at the name for a valueless attribute */
	if (a && a->original_value.length && a->original_value.data >= a->original_name.data + a->original_name.length) {
		/* replace the value as written, quotes included */
		ed->off = (size_t)(a->original_value.data - buf);
		ed->cut = a->original_value.length;
		err = svc_buf_adds(&ed->text, "\"");
	} else if (a) {
		/* a valueless attribute: add ="..." after its name */
		ed->off = (size_t)(a->original_name.data - buf) + a->original_name.length;
		err = svc_buf_adds(&ed->text, "=\"");
	} else {
		/* a new attribute, right after the tag name */
		const char *t = e->original_tag.data + 1, *tend = e->original_tag.data + e->original_tag.length;
		while (t < tend && !is_space((unsigned char)*t) && *t != '/' && *t != '>')
			t++;
		ed->off = (size_t)(t - buf);
		err = svc_buf_addf(&ed->text, " %s=\"", attr);
	}
	if (err == 0)
		err = svc_ds_escape_html(newval, 1, &ed->text);
	if (err == 0)
		err = svc_buf_adds(&ed->text, "\"");
	free(newval);
	return err;
}

static int html_patch(char **buf, size_t *len, const struct svc_ds_patch *pt, struct svc_ds_change *ch, char *msg,
		      size_t msgmax)
{
	GumboOptions opts = kGumboDefaultOptions;
	GumboOutput *doc = NULL;
	struct selector sel;
	const GumboNode *node = NULL;
	struct html_edit ed = { 0, 0, { 0 } };
	int err;

	svc_buf_init(&ed.text, SVC_DS_FILE_MAX);
	if (parse_selector(pt->selector, &sel) < 0) {
		say(msg, msgmax, "the selector is not one this editor understands");
		err = SVC_E_VALIDATION;
		goto done;
	}
	opts.max_errors = 0;
	doc = gumbo_parse_with_options(&opts, *buf, *len);
	if (!doc) {
		err = SVC_E_INTERNAL;
		goto done;
	}
	if ((err = html_find(&sel, doc, &node, msg, msgmax)) < 0)
		goto done;
	if (strcmp(pt->property, "text") == 0)
		err = html_text_edit(*buf, node, pt, ch, &ed, msg, msgmax);
	else
		err = html_attr_edit(*buf, &node->v.element, pt, ch, &ed, msg, msgmax);
	if (err < 0)
		goto done;
	ch->new_value = strdup(pt->value);
	if (!ch->new_value) {
		err = SVC_E_INTERNAL;
		goto done;
	}
	err = splice(buf, len, ed.off, ed.cut, ed.text.data ? ed.text.data : "", ed.text.len);
done:
	svc_buf_dispose(&ed.text);
	if (doc)
		gumbo_destroy_output(&opts, doc);
	selector_free(&sel);
	return err;
}

/* ---- CSS ---- */

/* Skips a comment or string at p (p < end); returns the position after it, or p when there is none. */
static size_t css_skip(const char *s, size_t p, size_t end)
{
	if (p + 1 < end && s[p] == '/' && s[p + 1] == '*') {
		const char *e = NULL;
		size_t i;
		for (i = p + 2; i + 1 < end; i++)
			if (s[i] == '*' && s[i + 1] == '/') {
				e = s + i;
				break;
			}
		return e ? (size_t)(e - s) + 2 : end;
	}
	if (s[p] == '"' || s[p] == '\'') {
		size_t i;
		for (i = p + 1; i < end; i++) {
			if (s[i] == '\\') {
				i++;
				continue;
			}
			if (s[i] == s[p] || s[i] == '\n')
				return i + 1;
		}
		return end;
	}
	return p;
}

/* Normalises selector text: comments removed, white space collapsed to one space, trimmed. */
static int css_norm(const char *s, size_t start, size_t end, struct svc_buf *b)
{
	size_t p = start;
	int space = 0, err = 0;

	svc_buf_reset(b);
	while (p < end && err == 0) {
		size_t q = css_skip(s, p, end);
		if (q != p && s[p] == '/') {
			space = 1;
			p = q;
			continue;
		}
		if (q != p) {
			if (space && b->len)
				err = svc_buf_add(b, " ", 1);
			space = 0;
			err = err ? err : svc_buf_add(b, s + p, q - p);
			p = q;
			continue;
		}
		if (is_space((unsigned char)s[p])) {
			space = 1;
		} else {
			if (space && b->len)
				err = svc_buf_add(b, " ", 1);
			space = 0;
			err = err ? err : svc_buf_add(b, s + p, 1);
		}
		p++;
	}
	return err ? err : svc_buf_add(b, "", 0);
}

/* Finds the block of the rules whose normalised selector equals `want`, in [start, end). */
static int css_find(const char *s, size_t start, size_t end, const char *want, size_t *bstart, size_t *bend,
		    size_t *count, int depth)
{
	struct svc_buf norm;
	size_t p = start;
	int err = 0;

	if (depth > 8)
		return 0;
	svc_buf_init(&norm, SVC_DS_SELECTOR_MAX * 4);
	while (p < end && err == 0) {
		size_t pre = p, open = 0, close = 0, q;
		int level = 0;
		/* the prelude, up to "{" or ";" */
		while (p < end) {
			q = css_skip(s, p, end);
			if (q != p) {
				p = q;
				continue;
			}
			if (s[p] == '{' || s[p] == ';' || s[p] == '}')
				break;
			p++;
		}
		if (p >= end)
			break;
		if (s[p] != '{') {
			p++; /* an at-rule statement, or a stray "}" */
			continue;
		}
		open = p++;
		level = 1;
		while (p < end && level) {
			q = css_skip(s, p, end);
			if (q != p) {
				p = q;
				continue;
			}
			if (s[p] == '{')
				level++;
			else if (s[p] == '}')
				level--;
			p++;
		}
		if (level)
			break; /* an unterminated block: not a rule */
		close = p - 1;
		if ((err = css_norm(s, pre, open, &norm)) < 0)
			break;
		if (norm.data[0] == '@') {
			static const char *const nested[] = { "@media", "@supports", "@layer", "@container", NULL };
			size_t i;
			for (i = 0; nested[i]; i++)
				if (strncmp(norm.data, nested[i], strlen(nested[i])) == 0)
					err = css_find(s, open + 1, close, want, bstart, bend, count, depth + 1);
		} else if (strcmp(norm.data, want) == 0) {
			if (*count == 0) {
				*bstart = open + 1;
				*bend = close;
			}
			(*count)++;
		}
	}
	svc_buf_dispose(&norm);
	return err;
}

static int css_patch(char **buf, size_t *len, const struct svc_ds_patch *pt, struct svc_ds_change *ch, char *msg,
		     size_t msgmax)
{
	struct svc_buf want, ins;
	size_t bs = 0, be = 0, count = 0, p, found_vs = 0, found_ve = 0, last_end, q;
	const char *s;
	int err = SVC_E_VALIDATION, found = 0;

	svc_buf_init(&want, SVC_DS_SELECTOR_MAX * 4);
	svc_buf_init(&ins, SVC_DS_VALUE_MAX + 256);
	if (!css_name_ok(pt->property)) {
		say(msg, msgmax, "\"%.64s\" is not a CSS property name", pt->property);
		goto done;
	}
	if (!*pt->value || !css_value_ok(pt->value)) {
		say(msg, msgmax, "the value is empty or not allowed in a declaration");
		goto done;
	}
	if (strpbrk(pt->selector, "{};") || (err = css_norm(pt->selector, 0, strlen(pt->selector), &want)) < 0 ||
	    !want.data[0]) {
		err = err < 0 && err != SVC_E_VALIDATION ? err : SVC_E_VALIDATION;
		say(msg, msgmax, "the selector is not one a rule can have");
		goto done;
	}
	if ((err = css_find(*buf, 0, *len, want.data, &bs, &be, &count, 0)) < 0)
		goto done;
	if (count != 1) {
		err = SVC_E_VALIDATION;
		if (count)
			say(msg, msgmax, "the selector names %zu rules; it must name exactly one", count);
		else
			say(msg, msgmax, "no rule has this selector");
		goto done;
	}
	/* the declarations: the last one named `property` wins, as in CSS */
	s = *buf;
	p = bs;
	last_end = bs;
	while (p < be) {
		size_t ds = p, colon = 0, de;
		int depth = 0;
		while (p < be) {
			q = css_skip(s, p, be);
			if (q != p) {
				p = q;
				continue;
			}
			if (s[p] == '(')
				depth++;
			else if (s[p] == ')')
				depth--;
			else if (s[p] == ':' && !colon && depth <= 0)
				colon = p;
			else if (s[p] == ';' && depth <= 0)
				break;
			p++;
		}
		de = p;
		if (colon) {
			size_t ns = ds, ne = colon, vs = colon + 1, ve = de;
			while (ns < ne && (is_space((unsigned char)s[ns]) || css_skip(s, ns, ne) != ns))
				ns = css_skip(s, ns, ne) != ns ? css_skip(s, ns, ne) : ns + 1;
			while (ne > ns && is_space((unsigned char)s[ne - 1]))
				ne--;
			while (vs < ve && is_space((unsigned char)s[vs]))
				vs++;
			while (ve > vs && is_space((unsigned char)s[ve - 1]))
				ve--;
			if (ieq_n(s + ns, ne - ns, pt->property)) {
				found = 1;
				found_vs = vs;
				found_ve = ve;
			}
			last_end = ve;
		}
		if (p < be)
			p++;
	}
	if (found) {
		free(ch->old_value);
		ch->old_value = dup_n(s + found_vs, found_ve - found_vs);
		err = svc_buf_adds(&ins, pt->value);
		if (err == 0)
			err = splice(buf, len, found_vs, found_ve - found_vs, ins.data, ins.len);
	} else {
		/* add it after the last declaration, with a ";" when that one has none */
		size_t at = last_end;
		int need_semi = 0, newline = 0;
		for (q = bs; q < be; q++)
			if (s[q] == '\n')
				newline = 1;
		if (at > bs) {
			size_t k = at;
			while (k < be && is_space((unsigned char)s[k]))
				k++;
			need_semi = !(k < be && s[k] == ';');
			if (!need_semi)
				at = k + 1;
		}
		err = svc_buf_addf(&ins, "%s%s%s: %s;", need_semi ? ";" : "", newline ? "\n  " : " ", pt->property,
				   pt->value);
		if (err == 0)
			err = splice(buf, len, at, 0, ins.data, ins.len);
	}
	if (err == 0) {
		ch->new_value = strdup(pt->value);
		if (!ch->new_value)
			err = SVC_E_INTERNAL;
	}
done:
	svc_buf_dispose(&want);
	svc_buf_dispose(&ins);
	return err;
}

/* ---- the entry point ---- */

enum svc_ds_kind svc_ds_kind_of(const char *path)
{
	const char *dot = strrchr(path, '.');
	size_t n;

	if (!dot || strchr(dot, '/'))
		return SVC_DS_NONE;
	n = strlen(dot + 1);
	if (ieq_n(dot + 1, n, "html") || ieq_n(dot + 1, n, "htm"))
		return SVC_DS_HTML;
	if (ieq_n(dot + 1, n, "css"))
		return SVC_DS_CSS;
	return SVC_DS_NONE;
}

int svc_ds_apply(enum svc_ds_kind kind, const char *src, size_t len, const struct svc_ds_patch *patches, size_t n,
		 char **out, size_t *out_len, struct svc_ds_change *changes, size_t *failed, char *msg, size_t msgmax)
{
	char *buf, reason[300];
	size_t cur = len, i;
	int err = 0;

	if (len > SVC_DS_FILE_MAX)
		return SVC_E_TOO_LARGE;
	buf = dup_n(src, len);
	if (!buf)
		return SVC_E_INTERNAL;
	for (i = 0; i < n; i++) {
		const struct svc_ds_patch *pt = &patches[i];
		reason[0] = '\0';
		if (!pt->selector || !pt->property || !pt->value || strlen(pt->selector) > SVC_DS_SELECTOR_MAX ||
		    strlen(pt->value) > SVC_DS_VALUE_MAX) {
			err = SVC_E_VALIDATION;
			say(reason, sizeof reason, "selector, property and value must be strings within their limits");
		} else if (kind == SVC_DS_HTML) {
			err = html_patch(&buf, &cur, pt, &changes[i], reason, sizeof reason);
		} else if (kind == SVC_DS_CSS) {
			err = css_patch(&buf, &cur, pt, &changes[i], reason, sizeof reason);
		} else {
			err = SVC_E_VALIDATION;
			say(reason, sizeof reason, "only HTML and CSS files can be edited directly");
		}
		if (err < 0) {
			*failed = i;
			say(msg, msgmax, "patch %zu: %s", i, reason[0] ? reason : "cannot be applied");
			free(buf);
			return err;
		}
	}
	*out = buf;
	*out_len = cur;
	return 0;
}

void svc_ds_changes_free(struct svc_ds_change *changes, size_t n)
{
	size_t i;

	for (i = 0; changes && i < n; i++) {
		free(changes[i].old_value);
		free(changes[i].new_value);
		changes[i].old_value = changes[i].new_value = NULL;
	}
}
