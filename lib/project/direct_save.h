/* direct_save.h: the visual editor's direct save: patch one element of an HTML file or one rule of a CSS file, byte-exact elsewhere. */
#ifndef SVC_DIRECT_SAVE_H
#define SVC_DIRECT_SAVE_H

#include <stddef.h>

#define SVC_DS_PATCHES_MAX 100          /* patches per request */
#define SVC_DS_SELECTOR_MAX 1000        /* bytes of a selector */
#define SVC_DS_VALUE_MAX (100u * 1024)  /* bytes of a value */
#define SVC_DS_FILE_MAX (5u * 1024 * 1024)

/* One patch of POST /direct-save/:projectId (spec "Project endpoints"). Strings are borrowed. */
struct svc_ds_patch {
	const char *selector;
	const char *property;
	const char *value;
};

/* What one applied patch changed. Strings are malloc'd; free with svc_ds_changes_free(). */
struct svc_ds_change {
	char *old_value;   /* the value before (NULL when the property was absent) */
	char *new_value;   /* the value written, as given */
};

/* The kinds of file direct save edits, from the file name's extension. */
enum svc_ds_kind { SVC_DS_NONE, SVC_DS_HTML, SVC_DS_CSS };

/* Returns SVC_DS_HTML for ".html"/".htm", SVC_DS_CSS for ".css" (any letter case), else SVC_DS_NONE. */
enum svc_ds_kind svc_ds_kind_of(const char *path);

/*
 * Applies the `n` patches in order to the `len` bytes at `src` (an HTML
 * file for SVC_DS_HTML, a stylesheet for SVC_DS_CSS), each to the result of
 * the ones before, and writes the new text into a malloc'd, NUL-terminated
 * *out of *out_len bytes (caller frees). Every byte outside the spans the
 * patches name is kept as it was.
 *
 * HTML (parsed with gumbo, the WHATWG tree builder, for the element and its
 * byte offsets): `selector` is a CSS selector of type, universal, #id,
 * .class, [attr], [attr=v], [attr~=v], [attr^=v], [attr$=v], [attr*=v]
 * (values bare or quoted) and :nth-of-type(N) (N a positive integer)
 * compounds joined by descendant (space) and child (>) combinators, which
 * must match exactly one element that was written in the source (not one
 * the parser inferred). `property` is "text" (the element's content becomes
 * the value, escaped as text; the element needs an explicit end tag and
 * must not be script or style), "class", "style.<css-property>" (one
 * declaration of the style attribute; an empty value removes it), or an
 * attribute name (the attribute is replaced or added, its value escaped).
 * Refused: on* event-handler attributes, "style" and "srcdoc" as whole
 * attributes, values that are javascript:, vbscript: or data:text/html URLs
 * (after removing white space and control characters, any letter case),
 * CSS values with "expression(", "javascript:", "<", "{", "}" or ";".
 *
 * CSS: `selector` names a style rule by its selector text (compared with
 * comments removed and white space collapsed; rules inside @media,
 * @supports, @layer and @container count, those of other at-rules do not),
 * which must name exactly one rule; `property` is a declaration name whose
 * last occurrence gets `value`, or which is added at the end of the rule.
 *
 * `changes` (n entries, zeroed by the caller) receives what each patch
 * changed. On failure nothing is written to *out, *failed is the index of
 * the first failing patch and `msg` (msgmax bytes) says why, naming the
 * patch. Errors: SVC_E_VALIDATION (a patch that cannot be applied),
 * SVC_E_TOO_LARGE (the result would exceed SVC_DS_FILE_MAX),
 * SVC_E_INTERNAL (out of memory).
 */
int svc_ds_apply(enum svc_ds_kind kind, const char *src, size_t len, const struct svc_ds_patch *patches, size_t n,
		 char **out, size_t *out_len, struct svc_ds_change *changes, size_t *failed, char *msg, size_t msgmax);

/* Frees the strings of `n` changes; the array itself belongs to the caller. */
void svc_ds_changes_free(struct svc_ds_change *changes, size_t n);

struct svc_buf;

/*
 * Appends `s` HTML-escaped to `b`: as text (&, <, >) or, with `attr`, as a
 * double-quoted attribute value (also "). WHATWG HTML "Serializing HTML
 * fragments" (escaping a string). Returns 0 or SVC_E_TOO_LARGE (b's maximum).
 */
int svc_ds_escape_html(const char *s, int attr, struct svc_buf *b);

#endif
