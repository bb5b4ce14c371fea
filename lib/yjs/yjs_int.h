/* yjs_int.h: internal structures of lib/yjs shared between its files (not a public API). */
#ifndef SVC_YJS_INT_H
#define SVC_YJS_INT_H

#include <stddef.h>
#include <stdint.h>

#include "yjs/yjs.h"

/* ---- lib0 encoding (encoding.c), follows lib0 encoding.js / decoding.js ---- */

/* Appends bytes; aborts on memory exhaustion. */
void svc_yjs__put(struct svc_yjs_buf *b, const void *p, size_t n);
void svc_yjs__put_u8(struct svc_yjs_buf *b, uint8_t v);
void svc_yjs__put_varuint(struct svc_yjs_buf *b, uint64_t v);
void svc_yjs__put_varint(struct svc_yjs_buf *b, int64_t v, int negative_zero);
void svc_yjs__put_varstring(struct svc_yjs_buf *b, const void *s, size_t n);
/* Grows `b` by `n` bytes and returns where they start, for the caller to fill. */
uint8_t *svc_yjs__put_space(struct svc_yjs_buf *b, size_t n);

/* A bounded reader over untrusted bytes. Every read checks what is left. */
struct ydec {
	const uint8_t *p;
	size_t len;
	size_t pos;
};

int svc_yjs__get_u8(struct ydec *d, uint8_t *out);
/* varUint up to 2^53-1; larger values or truncation are SVC_E_VALIDATION. */
int svc_yjs__get_varuint(struct ydec *d, uint64_t *out);
/* varString: sets *s to the bytes inside d (not copied), checks strict UTF-8. */
int svc_yjs__get_varstring(struct ydec *d, const uint8_t **s, size_t *n);
/* varUint8Array: like varString without the UTF-8 check. */
int svc_yjs__get_varbytes(struct ydec *d, const uint8_t **s, size_t *n);
/* Skips one lib0 `any` value (validating it), nesting at most YJS_MAX_DEPTH. */
int svc_yjs__skip_any(struct ydec *d, int depth);
#define YJS_MAX_DEPTH 200

/* Returns 1 if s[0..n) is valid UTF-8 as TextDecoder({fatal:true}) accepts it. */
int svc_yjs__utf8_valid(const uint8_t *s, size_t n);
/* UTF-16 length of valid UTF-8 s[0..n). */
uint64_t svc_yjs__utf16_len(const uint8_t *s, size_t n);
/*
 * Byte offset of UTF-16 offset `u` in valid UTF-8 s[0..n). Sets *mid to 1
 * when `u` falls between the two surrogates of an astral character (the
 * returned offset is then the start of that character).
 */
size_t svc_yjs__utf16_to_byte(const uint8_t *s, size_t n, uint64_t u, int *mid);

/* JSON writing helpers (JSON.stringify compatible). */
void svc_yjs__json_string(struct svc_yjs_buf *b, const uint8_t *s, size_t n);
/* Writes one lib0 any value from d as JSON (undefined in arrays -> null). */
int svc_yjs__any_to_json(struct ydec *d, struct svc_yjs_buf *b, int depth);
/* Encodes JSON text as lib0 any (writeAny of JSON.parse(text)). */
int svc_yjs__json_to_any(const char *json, size_t n, struct svc_yjs_buf *out);

/* ---- structures of the document ---- */

struct ystr {            /* interned string (map keys, root names) */
	uint32_t len;
	uint32_t hash;
	char s[];        /* NUL-terminated copy; may contain NULs */
};

struct yid {
	uint64_t client;
	uint64_t clock;
};

enum {
	YC_GC = 0, YC_DELETED = 1, YC_JSON = 2, YC_BINARY = 3, YC_STRING = 4,
	YC_EMBED = 5, YC_FORMAT = 6, YC_TYPE = 7, YC_ANY = 8, YC_DOC = 9, YC_SKIP = 10
};

/*
 * YF_PACKED: a ContentString whose `c.data` holds a zstd frame of `cap`
 * bytes instead of its UTF-8 (`nbytes` stays the UTF-8 length); read it with
 * svc_yjs__string_put / svc_yjs__string_bytes, unpack it before changing it.
 * YF_HOT: a string item touched since the last pack pass saw it (second
 * chance: svc_yjs_doc_pack clears it first and packs the item next time).
 */
enum {
	YF_DELETED = 1, YF_COUNTABLE = 2, YF_KEEP = 4, YF_MARKER = 8,
	YF_ORIGIN = 16, YF_RORIGIN = 32, YF_PACKED = 64, YF_HOT = 128
};

struct ytype;

/* An Item or GC struct (ref YC_GC); yjs src/structs/Item.js, GC.js. */
struct yitem {
	struct yid id;
	uint64_t len;                 /* clock units */
	struct yitem *left, *right;
	struct yid origin, rorigin;   /* valid if YF_ORIGIN / YF_RORIGIN */
	struct ytype *parent;
	const struct ystr *parent_sub;
	uint8_t ref;                  /* content ref */
	uint8_t flags;
	/* content */
	uint32_t count;               /* elements of JSON/ANY */
	uint32_t nbytes, cap;         /* payload bytes (string UTF-8, raw encodings); packed: cap = frame bytes */
	union {
		uint8_t *data;
		struct ytype *type;   /* YC_TYPE */
	} c;
};

struct ymarker {
	struct yitem *p;
	uint64_t index;
	uint64_t ts;
};
#define YJS_MAX_MARKERS 80

struct ymapent {
	const struct ystr *key;
	struct yitem *item;           /* last item of the key's chain, or NULL */
};

struct ytype {
	struct yitem *item;           /* NULL for a root type */
	const struct ystr *name;      /* root name */
	int type_ref;                 /* 0..6, -1 unknown root */
	uint8_t *xml_name;            /* varString payload for XmlElement / XmlHook */
	size_t xml_name_len;
	struct yitem *start;
	struct ymapent *ents;         /* insertion order */
	uint32_t nents, capents;
	uint32_t *htab;               /* index+1 into ents, open addressing */
	uint32_t hcap;
	uint64_t length;
	struct ymarker *markers;      /* NULL = no search markers (_searchMarker null) */
	uint32_t nmarkers;
	int markers_stale;            /* a marked item was deleted since the last marker update */
	uint32_t mru;                 /* marker findMarker returned last (>= nmarkers: none) */
	int has_formatting;
	struct ytype *next_root;
};

/*
 * One client's structs in clock order, as a gap buffer: logical index i is
 * at v[i] when i < g, else at v[i + gl]. Splits in the middle of the list
 * move the gap (edits are local, so it moves little) instead of shifting the
 * whole tail as yjs's Array.splice does; appends go past the back segment.
 * Use svc_yjs__cv() to read, svc_yjs__client_insert/_remove to change.
 */
struct yclient {
	uint64_t client;
	struct yitem **v;
	size_t n;                     /* logical count */
	size_t g, gl, cap;            /* gap start, gap length, physical size */
	size_t hint;                  /* index find_index returned last */
	uint64_t txn_seq;             /* transaction that recorded `before` */
	uint64_t before;              /* state when that transaction first touched it */
	uint64_t ds_seq;              /* transaction whose delete-set client order lists it */
};

static inline struct yitem *svc_yjs__cv(const struct yclient *c, size_t i)
{
	return c->v[i < c->g ? i : i + c->gl];
}

struct yrange {
	uint64_t client, clock, len;
};

struct yrangev {
	struct yrange *v;
	size_t n, cap;
};

/* A decoded, not yet integrated struct (yjs readClientsStructRefs). */
struct yref {
	struct yitem *it;             /* it->ref: content ref, GC or SKIP */
	int parent_kind;              /* 0: none on wire, 1: root name, 2: parent ID */
	const struct ystr *root;
	struct yid parent_id;
	const struct ystr *sub;
};

struct yrefs {                        /* one client's structs, clock order */
	uint64_t client;
	struct yref *v;
	size_t n, cap, i;
};

struct ychanged {
	struct ytype *type;
	const struct ystr *sub;       /* NULL for list changes */
};

/*
 * The running transaction. Its buffers live in the document and are reused
 * by the next transaction. The state before the transaction is recorded
 * lazily: a client's state is saved (yclient.before, txn_seq) the first time
 * the transaction adds a struct for it, and `touched` lists those clients;
 * an untouched client's state is its current one.
 */
struct ytxn {
	int local;
	uint64_t seq;
	struct yclient **touched;
	size_t ntouched, captouched;
	struct yrangev ds;
	struct yid *merge;
	size_t nmerge, capmerge;
	struct ychanged *changed;
	size_t nchanged, capchanged;
};

struct svc_yjs_doc {
	uint64_t client_id;
	struct yclient **clients;     /* hash by client id, open addressing */
	size_t nclients, hcap;
	struct ytype *roots;
	const struct ystr **strs;     /* intern table */
	size_t nstrs, scap;
	/* item pool */
	struct yitem **chunks;
	size_t nchunks, capchunks, chunk_used;
	struct yitem *free_items;
	/* pending */
	struct yrefs *pending;
	size_t npending, cappending;
	struct yid *missing;          /* (client, clock): retry when state > clock */
	size_t nmissing, capmissing;
	struct yrangev pending_ds;
	uint64_t marker_ts;
	struct ytxn *txn;             /* &txn_store while a transaction runs, else NULL */
	struct ytxn txn_store;
	uint64_t txn_seq;
	int explicit_txn;
	struct yclient *last_client;  /* lookup cache of svc_yjs__client */
	struct ytype *cache_root;     /* lookup cache of the types.c edit functions */
	const struct ystr *cache_key;
	/* svc_yjs_doc_pack resumes here: client hash slot, clock inside it */
	size_t pack_slot;
	uint64_t pack_clock;
	int pack_always;              /* tests: keep every frame, even one that saves nothing */
};

/* 64-bit mixer (murmur3 finalizer) for the hash tables of clients and pointers. */
static inline uint64_t svc_yjs__hash_u64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

/* ---- allocation (encoding.c): abort on memory exhaustion or size overflow, never NULL ---- */

void *svc_yjs__xmalloc(size_t n);
void *svc_yjs__xcalloc(size_t n, size_t m);
/* realloc of `p` to n * m bytes; aborts when n * m overflows. */
void *svc_yjs__xrealloc(void *p, size_t n, size_t m);

/* ---- the document (doc.c, Doc.js) ---- */

/* The one interned copy of s[0..n) in `doc` (compare interned strings by pointer); owned by doc. */
const struct ystr *svc_yjs__intern(struct svc_yjs_doc *doc, const void *s, size_t n);
/* A zeroed item from the document's pool; give it back with svc_yjs__item_free. */
struct yitem *svc_yjs__item_new(struct svc_yjs_doc *doc);
/* Frees the item's content and returns the item to the pool. */
void svc_yjs__item_free(struct svc_yjs_doc *doc, struct yitem *it);
/* Frees the content (a packed frame too) and clears YF_PACKED / YF_HOT. */
void svc_yjs__content_free(struct svc_yjs_doc *doc, struct yitem *it);
/* A new type of YType ref `type_ref` (0..6, -1 for a root not yet typed), with search markers for the list types. */
struct ytype *svc_yjs__type_new(int type_ref);
void svc_yjs__type_free(struct svc_yjs_doc *doc, struct ytype *t);
/* Doc.get: the root type named `name` (interned); made when `create`, else NULL when missing. */
struct ytype *svc_yjs__root(struct svc_yjs_doc *doc, const struct ystr *name, int create);
/* The map entry of `key` (interned) in t->_map, or NULL. */
struct ymapent *svc_yjs__map_find(struct ytype *t, const struct ystr *key);
/* Sets t->_map[key] to `it` (the last item of the key's chain), adding the key in insertion order. */
void svc_yjs__map_set(struct ytype *t, const struct ystr *key, struct yitem *it);

/* ---- the struct store (store.c, StructStore.js) ---- */

/* The struct list of `client`, made when `create`, else NULL when the client has none. */
struct yclient *svc_yjs__client(struct svc_yjs_doc *doc, uint64_t client, int create);

/* getState: the next clock of client list `c` (0 for NULL or an empty list). */
static inline uint64_t svc_yjs__client_state(const struct yclient *c)
{
	const struct yitem *last;
	if (!c || !c->n)
		return 0;
	last = svc_yjs__cv(c, c->n - 1);
	return last->id.clock + last->len;
}

/* getState of `client` in doc. */
uint64_t svc_yjs__state(struct svc_yjs_doc *doc, uint64_t client);
/* findIndexSS: index of the struct holding `clock` (< the client's state); remembers it in c->hint. */
size_t svc_yjs__find_index(struct yclient *c, uint64_t clock);
/* find: the struct holding `id`, which must exist. */
struct yitem *svc_yjs__find(struct svc_yjs_doc *doc, struct yid id);
/* Inserts `it` at logical index `at` (0..n) / removes k structs from `at` of c's list. */
void svc_yjs__client_insert(struct yclient *c, size_t at, struct yitem *it);
void svc_yjs__client_remove(struct yclient *c, size_t at, size_t k);
/*
 * addStruct: appends `it` to its client's list (aborts unless it->id.clock
 * is the client's state); the running transaction records the client's state
 * before when this is its first struct of that client.
 */
void svc_yjs__add_struct(struct svc_yjs_doc *doc, struct yitem *it);
/* getItemCleanStart / getItemCleanEnd: the item starting / ending at `id`, split there if needed (a GC is not split). */
struct yitem *svc_yjs__clean_start(struct svc_yjs_doc *doc, struct yid id);
struct yitem *svc_yjs__clean_end(struct svc_yjs_doc *doc, struct yid id);

/* ---- items (item.c, Item.js, GC.js, Content*.js) ---- */

/* 1 when content of ref `ref` counts in its parent's length (isCountable). */
int svc_yjs__countable_ref(int ref);
/*
 * splitItem: splits struct `index` of c's list `diff` clock units in, puts
 * the right part at index + 1 and returns it (the transaction merges them
 * again when it can).
 */
struct yitem *svc_yjs__split_item(struct svc_yjs_doc *doc, struct yclient *c, size_t index, uint64_t diff);
/* Item.integrate (YATA) of `it`, `offset` clock units in; `it` has parent (or NULL: becomes GC), left, right resolved. */
void svc_yjs__integrate(struct svc_yjs_doc *doc, struct yitem *it, uint64_t offset);
/* Item.delete in the running transaction (children of a deleted type too). */
void svc_yjs__delete(struct svc_yjs_doc *doc, struct yitem *it);
/* Item.gc: `it` keeps only its length (ContentDeleted), or becomes a GC struct when `parent_gcd`. */
void svc_yjs__item_gc(struct svc_yjs_doc *doc, struct yitem *it, int parent_gcd);
/* Item.mergeWith / GC.mergeWith: appends `r` to `l` when they can merge; returns 1 then (r is left for the caller to free), else 0. */
int svc_yjs__item_merge(struct svc_yjs_doc *doc, struct yitem *l, struct yitem *r);
/* Item.write / GC.write of `it` from `offset` clock units in, update v1. */
void svc_yjs__write_item(struct svc_yjs_buf *b, const struct yitem *it, uint64_t offset);
/* writeStructs: count, client, clock and the structs of `c` from `clock` on (c must not be empty). */
void svc_yjs__write_structs(struct svc_yjs_buf *b, struct yclient *c, uint64_t clock);

/* ---- transactions (transaction.c, Transaction.js) ---- */

/* Starts the document's transaction (its buffers are reused); `local`: made by this document's own edits. */
void svc_yjs__txn_start(struct svc_yjs_doc *doc, int local);
/*
 * cleanupTransactions: format cleanup, report of the changed map keys into
 * `report` (may be NULL), GC and merges, and the update message of the
 * transaction appended to `out_update` (may be NULL; nothing when nothing
 * changed). Ends the transaction.
 */
void svc_yjs__txn_finish(struct svc_yjs_doc *doc, struct svc_yjs_buf *out_update,
			 struct svc_yjs_report *report);
/* _mergeStructs.push: struct `id` is to be merged with its neighbours at the end of the transaction. */
void svc_yjs__txn_merge_push(struct svc_yjs_doc *doc, struct yid id);
/* State of `client` when the running transaction started. */
uint64_t svc_yjs__before_state(struct svc_yjs_doc *doc, uint64_t client);
/* addChangedTypeToTransaction: `type` (key `sub`, NULL for list changes) changed, unless it is new or deleted. */
void svc_yjs__txn_changed_add(struct svc_yjs_doc *doc, struct ytype *type, const struct ystr *sub);

/* ---- delete sets (delete_set.c, DeleteSet.js): (client, clock, len) ranges ---- */

/* addToDeleteSet: appends a range (unsorted until svc_yjs__ds_sort_merge). */
void svc_yjs__ds_add(struct yrangev *v, uint64_t client, uint64_t clock, uint64_t len);
/* sortAndMergeDeleteSet: sorts by client, then clock, and joins overlapping or adjacent ranges of a client. */
void svc_yjs__ds_sort_merge(struct yrangev *v);
/* writeDeleteSet of sorted `ds`: clients in descending order, each one's ranges in ascending clock. */
void svc_yjs__ds_write(struct svc_yjs_buf *b, const struct yrangev *ds);
/* createDeleteSetFromStructStore: appends every client's runs of deleted structs to `ds` (unsorted). */
void svc_yjs__ds_from_store(struct svc_yjs_doc *doc, struct yrangev *ds);
/* readAndApplyDeleteSet: deletes the ranges of `ds` in the running transaction; those beyond a client's state go to `rest`. */
void svc_yjs__ds_apply(struct svc_yjs_doc *doc, const struct yrangev *ds, struct yrangev *rest);

/* ---- packed strings (pack.c) ---- */

/*
 * svc_yjs__unpack(): a packed ContentString gets its
 * UTF-8 back in `c.data` (cap = nbytes), YF_PACKED cleared and YF_HOT set;
 * anything else is left alone. Call it before changing an item's bytes.
 * svc_yjs__string_put(): appends the UTF-8 of string item `it` to `b`,
 * decompressing a packed one straight into `b` (the item stays packed).
 * svc_yjs__string_bytes(): the UTF-8 of `it` (nbytes long), unpacking it in
 * place when packed (only the representation changes, hence const).
 * svc_yjs__string_decompress(): the UTF-8 of packed `it` into
 * dst[0..it->nbytes), the item stays packed.
 * A frame that does not decompress to exactly nbytes aborts (it cannot
 * happen: the core made it).
 */
void svc_yjs__unpack(struct yitem *it);
void svc_yjs__string_put(struct svc_yjs_buf *b, const struct yitem *it);
const uint8_t *svc_yjs__string_bytes(const struct yitem *it);
void svc_yjs__string_decompress(uint8_t *dst, const struct yitem *it);

/* ---- text (types.c) ---- */
void svc_yjs__marker_merged(struct ytype *t, struct yitem *left, struct yitem *right);
/*
 * cleanupYTextAfterTransaction (YText.js) for the running remote
 * transaction: deletes redundant format items. `ds_clients` lists the
 * clients of the delete set in the order it met them, `nds` how many of
 * txn->ds's (sorted) ranges are the transaction's own. yjs runs this as a
 * second local transaction; here its deletes join the running one.
 */
void svc_yjs__format_cleanup(struct svc_yjs_doc *doc, const uint64_t *ds_clients, size_t nclients, size_t nds);
/* Drops every search marker of `t` (what yjs does on a remote change). */
void svc_yjs__markers_clear(struct ytype *t);

#endif
