/* yjs.h: a Yjs-compatible CRDT document in C (update format v1 of yjs 13.6), for the collaboration daemon. */
#ifndef SVC_YJS_H
#define SVC_YJS_H

#include <stddef.h>
#include <stdint.h>

/*
 * The document holds the same data as a yjs `Y.Doc` with `gc: true`: a struct
 * store (per client a clock-sorted list of items and GC structs), the root
 * types by name, pending structs and a pending delete set. Client ids and
 * clocks are 53-bit values in uint64_t; clocks and text indexes count UTF-16
 * code units as yjs does, while all text crossing this API is UTF-8.
 *
 * Errors: functions return 0 or a negative `enum svc_err` (lib/core/err.h):
 * SVC_E_VALIDATION for malformed input (bytes that yjs would reject or that
 * cannot come from a yjs peer), SVC_E_NOT_FOUND for a missing key or type,
 * SVC_E_TOO_LARGE for a size beyond a limit. Memory exhaustion inside the
 * core aborts the process (a half-integrated CRDT cannot be rolled back);
 * every allocation whose size comes from input is checked against the input
 * size first.
 *
 * Content the core does not interpret (ContentJSON, Binary, Embed, Format,
 * Doc, the names of Xml elements) keeps the bytes it arrived with and is
 * written back unchanged. yjs parses and re-serialises it (JSON.stringify,
 * writeAny), which gives the same bytes for anything a yjs peer wrote
 * (tests/yjs conformance check `content`); JSON text written by hand with
 * other spacing or number formats would be re-encoded by yjs, not here.
 *
 * Not thread-safe: one document belongs to one thread at a time.
 */

struct svc_yjs_doc;

/* Largest client id / clock yjs can represent (Number.MAX_SAFE_INTEGER). */
#define SVC_YJS_MAX_SAFE ((uint64_t)9007199254740991ULL)

/*
 * A growable byte buffer the core writes encoded updates, state vectors and
 * UTF-8 text into. Zero-initialise it (`struct svc_yjs_buf b = {0};`); the
 * core appends to `data[0..len)`; release it with svc_yjs_buf_dispose().
 */
struct svc_yjs_buf {
	uint8_t *data;
	size_t len;
	size_t cap;
};

/* Frees the bytes of `b` and zeroes it; `b` can be reused afterwards. */
void svc_yjs_buf_dispose(struct svc_yjs_buf *b);

/*
 * A change report, filled after applying an update or committing a local
 * transaction: one entry per changed key of a root map (`files`, `meta`, ...).
 * An entry means the value of root[key] was set, deleted or replaced, or that
 * the content of a type stored under it (e.g. the Y.Text of a file) changed.
 * Follows the `transaction.changed` bookkeeping of yjs
 * (src/utils/Transaction.js addChangedTypeToTransaction), folded onto the
 * root map keys. `root` and `key` point into the document and stay valid
 * until the document is freed. Release with svc_yjs_report_dispose().
 */
struct svc_yjs_change {
	const char *root;
	size_t root_len;
	const char *key;   /* may contain NUL bytes: use key_len */
	size_t key_len;
};

struct svc_yjs_report {
	struct svc_yjs_change *changes;
	size_t n;
	size_t cap;
};

/* Frees the entries of `r` and zeroes it. */
void svc_yjs_report_dispose(struct svc_yjs_report *r);

/*
 * Creates an empty document whose local edits use `client_id` (at most
 * SVC_YJS_MAX_SAFE; yjs 13 makes 32-bit ids, yjs 14 and yrs 53-bit ones).
 * On success *out owns the document; free it with svc_yjs_doc_free().
 * Errors: SVC_E_VALIDATION if client_id is out of range.
 * Follows yjs src/utils/Doc.js `new Doc()` with gc on.
 */
int svc_yjs_doc_new(struct svc_yjs_doc **out, uint64_t client_id);

/* Frees `doc` and everything it owns; NULL is allowed. */
void svc_yjs_doc_free(struct svc_yjs_doc *doc);

/* Returns the client id used for local edits. */
uint64_t svc_yjs_doc_client_id(const struct svc_yjs_doc *doc);

/*
 * Applies one update v1 (`update`, `len` bytes) as a remote transaction,
 * like yjs src/utils/encoding.js applyUpdate / readUpdateV2: decodes every
 * struct and the delete set first (nothing changes when the bytes are
 * malformed), integrates what it can with YATA (Item.integrate), keeps
 * structs whose dependencies are missing as pending structs and deletes of
 * unknown clocks as the pending delete set, and retries pending data whenever
 * the state grows. Duplicate and out-of-order updates are fine.
 *
 * `out_update` (may be NULL) receives, appended, the update to broadcast:
 * the newly integrated structs and newly applied deletes, exactly what yjs
 * emits as its 'update' event (Transaction.js
 * writeUpdateMessageFromTransaction); nothing is appended when nothing
 * changed. When the update touches a Y.Text that carries formatting, yjs
 * then deletes redundant format items in a second, local transaction
 * (YText.js cleanupYTextAfterTransaction) and emits a second update; the
 * core makes the same deletes but in the same transaction, so they appear
 * in the delete set of the one update appended here. An update that lists
 * one client twice keeps the later listing, as yjs's readClientsStructRefs. `report` (may be NULL) receives the changed root map keys,
 * appended. `err_offset` (may be NULL) receives the byte offset of the first
 * malformed byte on SVC_E_VALIDATION.
 */
int svc_yjs_apply_update(struct svc_yjs_doc *doc, const uint8_t *update, size_t len,
			 struct svc_yjs_buf *out_update, struct svc_yjs_report *report,
			 size_t *err_offset);

/*
 * Appends the encoded state vector of the integrated structs to `out`
 * (varUint count, then varUint client / varUint clock pairs, clients in
 * descending order), like yjs encodeStateVector (src/utils/encoding.js).
 * Pending structs do not count.
 */
int svc_yjs_state_vector(struct svc_yjs_doc *doc, struct svc_yjs_buf *out);

/*
 * Appends to `out` an update v1 with everything integrated that a peer at
 * state vector `sv` (encoded, `sv_len` bytes; sv == NULL means the empty
 * state) lacks, plus the delete set of the whole document, like yjs
 * encodeStateAsUpdate (src/utils/encoding.js writeStateAsUpdate). With
 * sv == NULL this is the full state; with a peer's vector it is sync step 2.
 * Unlike yjs, pending structs and the pending delete set are never included
 * (a peer must not receive data the server cannot integrate itself).
 * Errors: SVC_E_VALIDATION for a malformed state vector (err_offset as above).
 */
int svc_yjs_encode_state(struct svc_yjs_doc *doc, const uint8_t *sv, size_t sv_len,
			 struct svc_yjs_buf *out, size_t *err_offset);

/* Returns 1 if the document holds pending structs or pending deletes. */
int svc_yjs_has_pending(const struct svc_yjs_doc *doc);

/*
 * Remote batches: several remote updates integrated as ONE remote
 * transaction, the way yjs joins nested transact() calls (a readUpdate
 * inside doc.transact() runs in the outer transaction, Transaction.js
 * transact). svc-wsd opens a batch for a room when the first update of an
 * event-loop iteration arrives and commits it after the iteration, so every
 * client receives one update per iteration instead of one per sender's
 * message; the committed update is exactly what yjs would emit for that
 * transaction (newly integrated structs and the deletes made in it).
 *
 * svc_yjs_batch_begin(): opens the batch. SVC_E_CONFLICT when any
 * transaction is open (a batch included).
 * svc_yjs_batch_apply(): decodes `update` (`len` bytes, update v1) fully
 * first (nothing changes when it is malformed: SVC_E_VALIDATION,
 * `err_offset` as for svc_yjs_apply_update) and integrates it into the open
 * batch (pending structs and deletes as svc_yjs_apply_update). `*changed`
 * (may be NULL) is set to 1 when this update integrated structs or deleted
 * something, 0 when it only repeated known content or is pending.
 * SVC_E_CONFLICT when no batch is open. Local edits (svc_yjs_text_insert,
 * svc_yjs_txn_begin, ...) and svc_yjs_apply_update are refused with
 * SVC_E_CONFLICT while a batch is open: commit it first.
 * svc_yjs_batch_commit(): ends the batch like svc_yjs_apply_update ends its
 * transaction: appends the update to `out_update` (may be NULL; nothing when
 * nothing changed) and the changed keys to `report` (may be NULL).
 * SVC_E_CONFLICT when no batch is open.
 * svc_yjs_batch_open(): 1 while a batch is open, else 0.
 * Reading functions (state vector, encode_state, text reads) see the
 * batch's integrated content before the commit.
 */
int svc_yjs_batch_begin(struct svc_yjs_doc *doc);
int svc_yjs_batch_apply(struct svc_yjs_doc *doc, const uint8_t *update, size_t len, int *changed,
			size_t *err_offset);
int svc_yjs_batch_commit(struct svc_yjs_doc *doc, struct svc_yjs_buf *out_update, struct svc_yjs_report *report);
int svc_yjs_batch_open(const struct svc_yjs_doc *doc);

/*
 * Merges `n` updates (`updates[i]`, `lens[i]` bytes) into one update v1 by
 * applying them to a fresh document and encoding its state, the approach of
 * y-leveldb's merge (not yjs mergeUpdates, which keeps unintegrated data).
 * Errors: SVC_E_VALIDATION with *bad_index set to the malformed update.
 */
int svc_yjs_merge_updates(const uint8_t *const *updates, const size_t *lens, size_t n,
			  struct svc_yjs_buf *out, size_t *bad_index, size_t *err_offset);

/*
 * Local transactions. Edits between svc_yjs_txn_begin() and
 * svc_yjs_txn_commit() form one yjs transaction (src/utils/Transaction.js
 * transact): one update, one report. An edit function called outside a
 * transaction runs in its own one. commit appends the update to `out_update`
 * (may be NULL; nothing appended when nothing changed) and the changed keys
 * to `report` (may be NULL). begin inside a transaction is an error
 * (SVC_E_CONFLICT); commit outside one too.
 */
int svc_yjs_txn_begin(struct svc_yjs_doc *doc);
int svc_yjs_txn_commit(struct svc_yjs_doc *doc, struct svc_yjs_buf *out_update,
		       struct svc_yjs_report *report);

/*
 * Text of root map `root` at `key` (both UTF-8, `key_len` bytes), read like
 * yjs YText.toString(): the non-deleted ContentString items in order, as
 * UTF-8, appended to `out`. Errors: SVC_E_NOT_FOUND if the key is absent,
 * deleted or not a Y.Text.
 */
int svc_yjs_text_read(struct svc_yjs_doc *doc, const char *root, const char *key,
		      size_t key_len, struct svc_yjs_buf *out);

/* Returns the length in UTF-16 code units of the Y.Text at root[key], or -1. */
int64_t svc_yjs_text_length(struct svc_yjs_doc *doc, const char *root, const char *key,
			    size_t key_len);

/*
 * Inserts the UTF-8 text `s` (`n` bytes, must be valid UTF-8) into the
 * Y.Text at root[key] at `index` (UTF-16 code units, clamped like yjs does
 * not: index > length is SVC_E_VALIDATION). Follows yjs YText.insert
 * without attributes (src/types/YText.js insertText, findPosition with
 * search markers, minimizeAttributeChanges): the text takes the formatting
 * current at `index`, so the same edits with the same client id give the
 * same bytes as yjs, in formatted texts too.
 * `out_update` and `report` as for svc_yjs_txn_commit (ignored inside an
 * explicit transaction: the commit produces them).
 */
int svc_yjs_text_insert(struct svc_yjs_doc *doc, const char *root, const char *key,
			size_t key_len, uint64_t index, const char *s, size_t n,
			struct svc_yjs_buf *out_update, struct svc_yjs_report *report);

/*
 * Deletes `count` UTF-16 code units at `index` from the Y.Text at root[key],
 * like yjs YText.delete (src/types/YText.js deleteText, including its
 * cleanupFormattingGap: format items the deletion made redundant are
 * deleted too). Deleting half of a surrogate pair leaves U+FFFD for the
 * other half, as yjs does.
 * Errors: SVC_E_VALIDATION if index + count exceeds the length.
 */
int svc_yjs_text_delete(struct svc_yjs_doc *doc, const char *root, const char *key,
			size_t key_len, uint64_t index, uint64_t count,
			struct svc_yjs_buf *out_update, struct svc_yjs_report *report);

/*
 * Replaces the whole content of the Y.Text at root[key] with `s` (`n` bytes
 * UTF-8) by a small edit: the common prefix and suffix stay, the middle is
 * diffed by lines (Myers) and only changed lines are deleted and inserted,
 * all in one transaction. Creates the text (as svc_yjs_map_set_text) when
 * the key is absent. For turning disk changes into CRDT edits.
 */
int svc_yjs_text_replace(struct svc_yjs_doc *doc, const char *root, const char *key,
			 size_t key_len, const char *s, size_t n,
			 struct svc_yjs_buf *out_update, struct svc_yjs_report *report);

/*
 * Sets root[key] to a new Y.Text holding `s` (`n` bytes UTF-8, may be
 * empty), like yjs `map.set(key, new Y.Text(s))` (AbstractType.js
 * typeMapSet, then YText._integrate running the pending insert).
 */
int svc_yjs_map_set_text(struct svc_yjs_doc *doc, const char *root, const char *key,
			 size_t key_len, const char *s, size_t n,
			 struct svc_yjs_buf *out_update, struct svc_yjs_report *report);

/*
 * Sets root[key] to the JSON value `json` (`n` bytes), stored as ContentAny
 * the way yjs writeAny encodes the parsed value (lib0 encoding.js writeAny:
 * integers up to 2^31-1 as varInt, float32 when exact, else float64).
 * Errors: SVC_E_INVALID_JSON for bad JSON.
 */
int svc_yjs_map_set_json(struct svc_yjs_doc *doc, const char *root, const char *key,
			 size_t key_len, const char *json, size_t n,
			 struct svc_yjs_buf *out_update, struct svc_yjs_report *report);

/*
 * Deletes root[key] like yjs YMap.delete (typeMapDelete). Deleting an
 * absent key is not an error and changes nothing.
 */
int svc_yjs_map_delete(struct svc_yjs_doc *doc, const char *root, const char *key,
		       size_t key_len, struct svc_yjs_buf *out_update,
		       struct svc_yjs_report *report);

/*
 * Appends the JSON of root map `root` to `out`, the same value as yjs
 * `doc.getMap(root).toJSON()` serialised by JSON.stringify (keys in the
 * order the map first saw them; texts as strings; nested maps and arrays
 * recursively; Uint8Array as JSON.stringify renders it; Y.XmlFragment,
 * Y.XmlElement and Y.XmlText as the string their toJSON (toString) gives,
 * Y.XmlHook as a map; a sub-document (ContentDoc) is left out, since
 * JSON.stringify of a Y.Doc is not meaningful). Unlike yjs, element names are
 * lowercased for ASCII letters only, and attribute keys sort by UTF-8 bytes
 * (which differs from yjs's UTF-16 order only for keys mixing astral
 * characters with U+E000..U+FFFF).
 */
int svc_yjs_map_json(struct svc_yjs_doc *doc, const char *root, struct svc_yjs_buf *out);

/*
 * Calls `fn(key, key_len, is_text, arg)` for every present key of root map
 * `root`, in the map's order. Stops and returns fn's value if it is non-zero.
 */
int svc_yjs_map_keys(struct svc_yjs_doc *doc, const char *root,
		     int (*fn)(const char *key, size_t key_len, int is_text, void *arg),
		     void *arg);

/*
 * Memory: packed string content.
 *
 * Most text of a project is cold: edits touch one place of one file, and
 * the big ContentString items around it are only read (sync step 2, file
 * reads) or split by an edit. The core can keep such items zstd-compressed
 * ("packed") and decompress them on demand, transparently: every reading
 * and editing function behaves and encodes byte for byte as without
 * packing. Reading (svc_yjs_text_read, svc_yjs_map_json, svc_yjs_encode_state
 * from the start of an item) decompresses into the output and leaves the
 * item packed; an edit that splits or merges an item, or encoding from
 * inside it, unpacks it (decompressed back in place and marked hot).
 * New text (local inserts, remote updates) starts hot.
 */

/*
 * Packs cold string content, a second-chance pass (the clock algorithm):
 * every non-deleted, unpacked ContentString item of at least `min_bytes`
 * UTF-8 bytes that is hot (inserted, split, merged or unpacked since the
 * last pass saw it) loses its hot mark and is left for a later pass; a cold
 * one is compressed (zstd level 1) and kept compressed when that saves at
 * least an eighth of its bytes (else it is marked hot again, so it is
 * retried every other pass). Items are visited client by client from where
 * the previous call stopped. The pass stops before compressing an item once
 * `budget_bytes` of UTF-8 were compressed in this call (so one call can go
 * over by one item) and the next call resumes there; pass SIZE_MAX for a
 * whole pass. Cost, measured on 1 MB of JavaScript (the bench/wsd corpus,
 * sent as five 200,000-byte updates, which merge into one item; gcc -O2,
 * the team's Debian 12 VM): packing it takes 2.9-3.7 ms (the frame is 24%
 * of the text; level 3 would take 4.1 ms for 22%), so a budget of 256 kB
 * bounds a call to about 1 ms, plus up to one item larger than the budget
 * (a 1 MB item is packed whole: 3 ms). Reading it back costs 0.6 ms per MB
 * (svc_yjs_encode_state of the whole document 0.57 ms instead of 0.06 ms,
 * svc_yjs_text_read 0.55 ms); the first edit inside it 1.6 ms (unpack).
 * Returns the UTF-8 bytes this call packed (0 when nothing was packed).
 * Never fails; aborts on memory exhaustion like the rest of the core.
 * Items of pending structs are never packed. Safe to call between any two
 * other calls, inside a transaction or batch too.
 */
size_t svc_yjs_doc_pack(struct svc_yjs_doc *doc, size_t min_bytes, size_t budget_bytes);

/* What the document's string content costs, filled by svc_yjs_doc_memory(). */
struct svc_yjs_mem {
	size_t structs;        /* items and GC structs in the store */
	size_t string_items;   /* ContentString items (deleted ones only until GC) */
	size_t string_bytes;   /* their UTF-8 bytes, packed or not */
	size_t string_heap;    /* bytes allocated for them: buffers (with growth room) and frames */
	size_t packed_items;   /* how many of them are packed */
	size_t packed_raw;     /* UTF-8 bytes of the packed ones */
	size_t packed_bytes;   /* zstd frame bytes holding those */
	size_t hot_items;      /* string items marked hot */
};

/*
 * Fills `*out` with the figures above by walking the struct store (O(structs),
 * nothing allocated). For reports (svc-wsd) and tests: the memory the
 * string content takes is `string_heap`; `string_bytes - packed_raw +
 * packed_bytes` is that without growth room.
 */
void svc_yjs_doc_memory(const struct svc_yjs_doc *doc, struct svc_yjs_mem *out);

#endif
