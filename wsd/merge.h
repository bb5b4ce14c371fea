/* merge.h: svc-wsd's three-way merge of a file changed on disk while the room held unsaved edits to it (merge.c). */
#ifndef SVC_WSD_MERGE_H
#define SVC_WSD_MERGE_H

#include <stddef.h>

#include "yjs/yjs.h"

/* One edit of the live text: bytes [pos, pos + del) become ins[0, ins_len) (ins points into the disk text). */
struct wsd_merge_edit {
	size_t pos, del;
	const char *ins;
	size_t ins_len;
};

/*
 * Three-way merge of UTF-8 texts for a file the API changed on disk while
 * the room held unsaved edits: `base` (bn bytes, what svc-wsd last saw on
 * disk), `live` (ln bytes, the document's text now) and `disk` (dn bytes,
 * the new file). Diffs base -> live and base -> disk (a Myers line diff,
 * each hunk trimmed to the characters that differ, cuts on UTF-8
 * boundaries) and returns the edits that carry disk's hunks into live at the
 * positions live's edits moved them to. Hunks of both sides that touch the
 * same base text (overlap, two insertions at one place, an insertion inside
 * the other's range) form a conflict: disk's version of that whole region
 * replaces live's (the disk wins for that region; the rest of live's edits
 * stay). Like diff3 (GNU diffutils), but resolved instead of marked.
 * *out (free() it) gets the edits sorted by `pos`, non-overlapping, in live
 * coordinates before any of them is applied; *nconflicts (may be NULL) the
 * number of conflicting regions. Returns 0 (the process aborts on no memory).
 */
int wsd_merge3(const char *base, size_t bn, const char *live, size_t ln, const char *disk, size_t dn,
	       struct wsd_merge_edit **out, size_t *nout, size_t *nconflicts);

/*
 * Applies `n` edits from wsd_merge3() to the Y.Text root[key] whose text is
 * `live` (the same bytes the edits were computed on), as one transaction of
 * deletes and inserts (lib/yjs public API, UTF-16 positions), appending the
 * update to `out_update`. Returns 0 or the error of lib/yjs
 * (SVC_E_NOT_FOUND when the key holds no text, SVC_E_VALIDATION when
 * `live` is not the text).
 */
int wsd_merge_apply(struct svc_yjs_doc *doc, const char *root, const char *key, size_t key_len, const char *live,
		    const struct wsd_merge_edit *edits, size_t n, struct svc_yjs_buf *out_update);

#endif
