/* test_yjs.c: CUnit suite of lib/yjs: lib0 encoding, update v1 byte vectors verified with yjs 13.6.33, integration traps. */
#include <stdlib.h>
#include <string.h>

#include <CUnit/CUnit.h>

#include "err.h"
#include "unit.h"
#include "yjs/yjs.h"
#include "yjs/yjs_int.h"

static size_t unhex(const char *h, uint8_t *out, size_t cap)
{
	size_t n = 0;
	while (*h && n < cap) {
		unsigned v;
		char t[3];
		if (*h == ' ' || *h == '|') {
			h++;
			continue;
		}
		t[0] = h[0];
		t[1] = h[1];
		t[2] = 0;
		v = (unsigned)strtoul(t, NULL, 16);
		out[n++] = (uint8_t)v;
		h += 2;
	}
	return n;
}

static int buf_is(const struct svc_yjs_buf *b, const char *hex)
{
	uint8_t want[1024];
	size_t n = unhex(hex, want, sizeof(want));
	return b->len == n && !memcmp(b->data, want, n);
}

static int apply_hex(struct svc_yjs_doc *doc, const char *hex, struct svc_yjs_buf *out)
{
	uint8_t u[1024];
	size_t n = unhex(hex, u, sizeof(u)), off = 0;
	return svc_yjs_apply_update(doc, u, n, out, NULL, &off);
}

/* Golden vectors from shared/notes/yjs-wire-format-and-peers.md section 1.8 (verified with yjs 13.6.33). */
#define U1 "01 02 01 00 27 01 05 66 69 6c 65 73 05 61 2e 74 78 74 02 04 00 01 00 08 68 c3 a9 f0 9f 98 80 78 00"
#define U2 "00 01 01 01 02 01"
#define U3 "01 02 01 06 28 01 04 6d 65 74 61 07 76 65 72 73 69 6f 6e 01 7d 03 28 01 04 6d 65 74 61 04 6e 61 6d 65 01 77 01 70 00"
#define FULL "01 06 01 00 27 01 05 66696c6573 05 612e747874 02 04 00 01 00 01 68 81 01 01 01 84 01 02 05 f09f988078" \
	" 28 01 04 6d657461 07 76657273696f6e 01 7d 03 28 01 04 6d657461 04 6e616d65 01 77 01 70 01 01 01 02 01"

static void test_yjs_varuint_vectors(void)
{
	struct svc_yjs_buf b = {0};
	struct ydec d;
	uint64_t v;
	svc_yjs__put_varuint(&b, 127);
	svc_yjs__put_varuint(&b, 128);
	svc_yjs__put_varuint(&b, 300);
	svc_yjs__put_varuint(&b, 4294967295ULL);
	svc_yjs__put_varuint(&b, SVC_YJS_MAX_SAFE);
	CU_ASSERT(buf_is(&b, "7f 8001 ac02 ffffffff0f ffffffffffffff0f"));
	d.p = b.data;
	d.len = b.len;
	d.pos = 0;
	CU_ASSERT(svc_yjs__get_varuint(&d, &v) == 0 && v == 127);
	CU_ASSERT(svc_yjs__get_varuint(&d, &v) == 0 && v == 128);
	CU_ASSERT(svc_yjs__get_varuint(&d, &v) == 0 && v == 300);
	CU_ASSERT(svc_yjs__get_varuint(&d, &v) == 0 && v == 4294967295ULL);
	CU_ASSERT(svc_yjs__get_varuint(&d, &v) == 0 && v == SVC_YJS_MAX_SAFE);
	CU_ASSERT(svc_yjs__get_varuint(&d, &v) == SVC_E_VALIDATION);
	svc_yjs_buf_dispose(&b);
}

static void test_yjs_varuint_rejects_overflow_and_truncation(void)
{
	uint8_t big[] = { 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x10 }; /* 2^53 */
	uint8_t trunc[] = { 0xff, 0xff };
	uint8_t huge[] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01 };
	struct ydec d = { big, sizeof(big), 0 };
	uint64_t v;
	CU_ASSERT(svc_yjs__get_varuint(&d, &v) == SVC_E_VALIDATION);
	d.p = trunc;
	d.len = sizeof(trunc);
	d.pos = 0;
	CU_ASSERT(svc_yjs__get_varuint(&d, &v) == SVC_E_VALIDATION);
	d.p = huge;
	d.len = sizeof(huge);
	d.pos = 0;
	CU_ASSERT(svc_yjs__get_varuint(&d, &v) == SVC_E_VALIDATION);
}

static void test_yjs_varint_vectors(void)
{
	struct svc_yjs_buf b = {0};
	svc_yjs__put_varint(&b, 3, 0);
	svc_yjs__put_varint(&b, -3, 0);
	svc_yjs__put_varint(&b, 63, 0);
	svc_yjs__put_varint(&b, 64, 0);
	svc_yjs__put_varint(&b, 100, 0);
	svc_yjs__put_varint(&b, -100, 0);
	svc_yjs__put_varint(&b, 0, 1);
	CU_ASSERT(buf_is(&b, "03 43 3f 8001 a401 e401 40"));
	svc_yjs_buf_dispose(&b);
}

static void test_yjs_any_from_json_vectors(void)
{
	struct svc_yjs_buf b = {0};
	CU_ASSERT(svc_yjs__json_to_any("null", 4, &b) == 0);
	CU_ASSERT(svc_yjs__json_to_any("true", 4, &b) == 0);
	CU_ASSERT(svc_yjs__json_to_any("7", 1, &b) == 0);
	CU_ASSERT(svc_yjs__json_to_any("-7", 2, &b) == 0);
	CU_ASSERT(svc_yjs__json_to_any("1.5", 3, &b) == 0);
	CU_ASSERT(svc_yjs__json_to_any("0.1", 3, &b) == 0);
	CU_ASSERT(svc_yjs__json_to_any("2147483648", 10, &b) == 0);
	CU_ASSERT(svc_yjs__json_to_any("[1,\"a\"]", 7, &b) == 0);
	CU_ASSERT(svc_yjs__json_to_any("{\"k\":1}", 7, &b) == 0);
	CU_ASSERT(buf_is(&b, "7e 78 7d07 7d47 7c3fc00000 7b3fb999999999999a 7c4f000000 75027d01770161 7601016b7d01"));
	CU_ASSERT(svc_yjs__json_to_any("{\"k\":}", 6, &b) == SVC_E_INVALID_JSON);
	CU_ASSERT(svc_yjs__json_to_any("[1,", 3, &b) == SVC_E_INVALID_JSON);
	svc_yjs_buf_dispose(&b);
}

static void test_yjs_any_to_json_number_format(void)
{
	struct svc_yjs_buf a = {0}, j = {0};
	struct ydec d;
	{
		const char *in = "[0.1,1e21,1e-7,123456789012,-2.5,{\"2\":1,\"a\":2,\"1\":3}]";
		CU_ASSERT(svc_yjs__json_to_any(in, strlen(in), &a) == 0);
	}
	d.p = a.data;
	d.len = a.len;
	d.pos = 0;
	CU_ASSERT(svc_yjs__any_to_json(&d, &j, 0) == 0);
	svc_yjs__put_u8(&j, 0);
	CU_ASSERT_STRING_EQUAL((char *)j.data, "[0.1,1e+21,1e-7,123456789012,-2.5,{\"1\":3,\"2\":1,\"a\":2}]");
	svc_yjs_buf_dispose(&a);
	svc_yjs_buf_dispose(&j);
}

static void test_yjs_golden_update_roundtrip(void)
{
	struct svc_yjs_doc *doc;
	struct svc_yjs_buf b = {0};
	CU_ASSERT_FATAL(svc_yjs_doc_new(&doc, 99) == 0);
	CU_ASSERT(apply_hex(doc, U1, NULL) == 0);
	CU_ASSERT(apply_hex(doc, U2, NULL) == 0);
	CU_ASSERT(apply_hex(doc, U3, NULL) == 0);
	CU_ASSERT(svc_yjs_encode_state(doc, NULL, 0, &b, NULL) == 0);
	CU_ASSERT(buf_is(&b, FULL));
	b.len = 0;
	CU_ASSERT(svc_yjs_state_vector(doc, &b) == 0);
	CU_ASSERT(buf_is(&b, "01 01 08"));
	b.len = 0;
	CU_ASSERT(svc_yjs_text_read(doc, "files", "a.txt", 5, &b) == 0);
	CU_ASSERT(b.len == 6 && !memcmp(b.data, "h\xf0\x9f\x98\x80x", 6));
	svc_yjs_buf_dispose(&b);
	svc_yjs_doc_free(doc);
}

static void test_yjs_local_edits_match_yjs_bytes(void)
{
	struct svc_yjs_doc *doc;
	struct svc_yjs_buf u1 = {0}, u2 = {0}, u3 = {0};
	CU_ASSERT_FATAL(svc_yjs_doc_new(&doc, 1) == 0);
	CU_ASSERT(svc_yjs_map_set_text(doc, "files", "a.txt", 5, "h\xc3\xa9\xf0\x9f\x98\x80x", 8, &u1, NULL) == 0);
	CU_ASSERT(buf_is(&u1, U1));
	CU_ASSERT(svc_yjs_text_delete(doc, "files", "a.txt", 5, 1, 1, &u2, NULL) == 0);
	CU_ASSERT(buf_is(&u2, U2));
	CU_ASSERT(svc_yjs_txn_begin(doc) == 0);
	CU_ASSERT(svc_yjs_map_set_json(doc, "meta", "version", 7, "3", 1, NULL, NULL) == 0);
	CU_ASSERT(svc_yjs_map_set_json(doc, "meta", "name", 4, "\"p\"", 3, NULL, NULL) == 0);
	CU_ASSERT(svc_yjs_txn_commit(doc, &u3, NULL) == 0);
	CU_ASSERT(buf_is(&u3, U3));
	u1.len = 0;
	CU_ASSERT(svc_yjs_encode_state(doc, NULL, 0, &u1, NULL) == 0);
	CU_ASSERT(buf_is(&u1, FULL));
	svc_yjs_buf_dispose(&u1);
	svc_yjs_buf_dispose(&u2);
	svc_yjs_buf_dispose(&u3);
	svc_yjs_doc_free(doc);
}

static void test_yjs_53bit_client_id(void)
{
	struct svc_yjs_doc *doc, *doc2;
	struct svc_yjs_buf u = {0}, sv = {0};
	CU_ASSERT_FATAL(svc_yjs_doc_new(&doc, 3000000000ULL) == 0);
	CU_ASSERT(svc_yjs_map_set_json(doc, "files", "k", 1, "\"v\"", 3, &u, NULL) == 0);
	CU_ASSERT(buf_is(&u, "01 01 80bcc1960b 00 28 01 05 66696c6573 01 6b 01 77 01 76 00"));
	CU_ASSERT(svc_yjs_state_vector(doc, &sv) == 0);
	CU_ASSERT(buf_is(&sv, "01 80bcc1960b 01"));
	svc_yjs_doc_free(doc);
	/* a 53-bit id round-trips through decode and the state vector */
	CU_ASSERT_FATAL(svc_yjs_doc_new(&doc, SVC_YJS_MAX_SAFE) == 0);
	u.len = 0;
	CU_ASSERT(svc_yjs_map_set_json(doc, "meta", "k", 1, "1", 1, &u, NULL) == 0);
	CU_ASSERT_FATAL(svc_yjs_doc_new(&doc2, 5) == 0);
	CU_ASSERT(svc_yjs_apply_update(doc2, u.data, u.len, NULL, NULL, NULL) == 0);
	sv.len = 0;
	CU_ASSERT(svc_yjs_state_vector(doc2, &sv) == 0);
	CU_ASSERT(buf_is(&sv, "01 ffffffffffffff0f 01"));
	svc_yjs_buf_dispose(&u);
	svc_yjs_buf_dispose(&sv);
	svc_yjs_doc_free(doc);
	svc_yjs_doc_free(doc2);
}

static void test_yjs_doc_new_rejects_big_client(void)
{
	struct svc_yjs_doc *doc = NULL;
	CU_ASSERT(svc_yjs_doc_new(&doc, SVC_YJS_MAX_SAFE + 1) == SVC_E_VALIDATION);
	CU_ASSERT(doc == NULL);
}

static void test_yjs_map_overwrite_origin_without_key(void)
{
	/* info 0xa8: parentSub bit set, no key on the wire (origin present) */
	const char *v = "01 02 0b 00 21 01 04 6d657461 01 6b 01 a8 0b 00 01 7d 02 01 0b 01 00 01";
	struct svc_yjs_doc *doc, *me;
	struct svc_yjs_buf b = {0}, u = {0};
	CU_ASSERT_FATAL(svc_yjs_doc_new(&doc, 1) == 0);
	CU_ASSERT(apply_hex(doc, v, NULL) == 0);
	CU_ASSERT(svc_yjs_map_json(doc, "meta", &b) == 0);
	CU_ASSERT(b.len == 7 && !memcmp(b.data, "{\"k\":2}", 7));
	b.len = 0;
	CU_ASSERT(svc_yjs_encode_state(doc, NULL, 0, &b, NULL) == 0);
	CU_ASSERT(buf_is(&b, v));
	/* the same edits made locally give the same bytes */
	CU_ASSERT_FATAL(svc_yjs_doc_new(&me, 11) == 0);
	CU_ASSERT(svc_yjs_map_set_json(me, "meta", "k", 1, "1", 1, NULL, NULL) == 0);
	CU_ASSERT(svc_yjs_map_set_json(me, "meta", "k", 1, "2", 1, NULL, NULL) == 0);
	CU_ASSERT(svc_yjs_encode_state(me, NULL, 0, &u, NULL) == 0);
	CU_ASSERT(buf_is(&u, v));
	svc_yjs_buf_dispose(&b);
	svc_yjs_buf_dispose(&u);
	svc_yjs_doc_free(doc);
	svc_yjs_doc_free(me);
}

static void test_yjs_deleted_text_is_garbage_collected(void)
{
	const char *want = "01 02 0a 00 21 01 05 66696c6573 01 66 01 00 03 01 0a 01 00 04";
	struct svc_yjs_doc *doc;
	struct svc_yjs_buf b = {0};
	CU_ASSERT_FATAL(svc_yjs_doc_new(&doc, 10) == 0);
	CU_ASSERT(svc_yjs_map_set_text(doc, "files", "f", 1, "abc", 3, NULL, NULL) == 0);
	CU_ASSERT(svc_yjs_map_delete(doc, "files", "f", 1, NULL, NULL) == 0);
	CU_ASSERT(svc_yjs_encode_state(doc, NULL, 0, &b, NULL) == 0);
	CU_ASSERT(buf_is(&b, want));
	CU_ASSERT(svc_yjs_text_length(doc, "files", "f", 1) == -1);
	svc_yjs_buf_dispose(&b);
	svc_yjs_doc_free(doc);
}

static void test_yjs_diff_inside_surrogate_pair(void)
{
	struct svc_yjs_doc *doc;
	struct svc_yjs_buf b = {0};
	uint8_t sv[] = { 0x01, 0x08, 0x01 };
	uint8_t sv7[] = { 0x01, 0x07, 0x01 };
	CU_ASSERT_FATAL(svc_yjs_doc_new(&doc, 8) == 0);
	/* a root-less check: text under files, then diff from clock 2 (inside the emoji) */
	CU_ASSERT(svc_yjs_map_set_text(doc, "files", "e", 1, "\xf0\x9f\x98\x80", 4, NULL, NULL) == 0);
	sv[2] = 2;
	CU_ASSERT(svc_yjs_encode_state(doc, sv, sizeof(sv), &b, NULL) == 0);
	CU_ASSERT(buf_is(&b, "01 01 08 02 84 08 01 03 efbfbd 00"));
	svc_yjs_buf_dispose(&b);
	svc_yjs_doc_free(doc);
	/* Diff of "abc" (client 7) for a peer that has clock 0 only, root Y.Text equivalent under a map */
	CU_ASSERT_FATAL(svc_yjs_doc_new(&doc, 7) == 0);
	CU_ASSERT(svc_yjs_map_set_text(doc, "files", "t", 1, "abc", 3, NULL, NULL) == 0);
	sv7[2] = 2;
	CU_ASSERT(svc_yjs_encode_state(doc, sv7, sizeof(sv7), &b, NULL) == 0);
	CU_ASSERT(buf_is(&b, "01 01 07 02 84 07 01 02 62 63 00"));
	svc_yjs_buf_dispose(&b);
	svc_yjs_doc_free(doc);
}

static void test_yjs_split_surrogate_pair_gives_fffd(void)
{
	struct svc_yjs_doc *doc;
	struct svc_yjs_buf b = {0};
	CU_ASSERT_FATAL(svc_yjs_doc_new(&doc, 1) == 0);
	CU_ASSERT(svc_yjs_map_set_text(doc, "files", "e", 1, "a\xf0\x9f\x98\x80" "b", 6, NULL, NULL) == 0);
	CU_ASSERT(svc_yjs_text_length(doc, "files", "e", 1) == 4);
	/* delete the low surrogate only */
	CU_ASSERT(svc_yjs_text_delete(doc, "files", "e", 1, 2, 1, NULL, NULL) == 0);
	CU_ASSERT(svc_yjs_text_read(doc, "files", "e", 1, &b) == 0);
	CU_ASSERT(b.len == 5 && !memcmp(b.data, "a\xef\xbf\xbd" "b", 5));
	CU_ASSERT(svc_yjs_text_length(doc, "files", "e", 1) == 3);
	svc_yjs_buf_dispose(&b);
	svc_yjs_doc_free(doc);
}

static void test_yjs_pending_structs_and_deletes(void)
{
	struct svc_yjs_doc *doc;
	struct svc_yjs_buf b = {0}, sv = {0};
	CU_ASSERT_FATAL(svc_yjs_doc_new(&doc, 50) == 0);
	/* deletes first, then U3 (other root), then U1: everything converges */
	CU_ASSERT(apply_hex(doc, U2, NULL) == 0);
	CU_ASSERT(svc_yjs_has_pending(doc));
	CU_ASSERT(apply_hex(doc, U3, NULL) == 0);
	CU_ASSERT(svc_yjs_has_pending(doc));
	CU_ASSERT(svc_yjs_state_vector(doc, &sv) == 0);
	CU_ASSERT(buf_is(&sv, "00"));
	/* a sync step 2 from here must not contain the pending structs */
	CU_ASSERT(svc_yjs_encode_state(doc, NULL, 0, &b, NULL) == 0);
	CU_ASSERT(buf_is(&b, "00 00"));
	CU_ASSERT(apply_hex(doc, U1, NULL) == 0);
	CU_ASSERT(!svc_yjs_has_pending(doc));
	b.len = 0;
	CU_ASSERT(svc_yjs_encode_state(doc, NULL, 0, &b, NULL) == 0);
	CU_ASSERT(buf_is(&b, FULL));
	svc_yjs_buf_dispose(&b);
	svc_yjs_buf_dispose(&sv);
	svc_yjs_doc_free(doc);
}

static void test_yjs_broadcast_update_and_report(void)
{
	struct svc_yjs_doc *doc;
	struct svc_yjs_buf out = {0};
	struct svc_yjs_report rep = {0};
	uint8_t u[256];
	size_t n = unhex(U1, u, sizeof(u));
	CU_ASSERT_FATAL(svc_yjs_doc_new(&doc, 5) == 0);
	CU_ASSERT(svc_yjs_apply_update(doc, u, n, &out, &rep, NULL) == 0);
	CU_ASSERT(buf_is(&out, U1));
	CU_ASSERT(rep.n == 1 && rep.changes[0].key_len == 5 && !memcmp(rep.changes[0].key, "a.txt", 5) &&
		  !strcmp(rep.changes[0].root, "files"));
	/* a duplicate changes nothing and broadcasts nothing */
	out.len = 0;
	svc_yjs_report_dispose(&rep);
	CU_ASSERT(svc_yjs_apply_update(doc, u, n, &out, &rep, NULL) == 0);
	CU_ASSERT(out.len == 0 && rep.n == 0);
	/* a text edit reports the file key */
	CU_ASSERT(apply_hex(doc, U2, NULL) == 0);
	CU_ASSERT(svc_yjs_text_insert(doc, "files", "a.txt", 5, 0, "z", 1, NULL, &rep) == 0);
	CU_ASSERT(rep.n == 1 && !memcmp(rep.changes[0].key, "a.txt", 5));
	svc_yjs_report_dispose(&rep);
	svc_yjs_buf_dispose(&out);
	svc_yjs_doc_free(doc);
}

static void test_yjs_malformed_updates_are_rejected(void)
{
	static const char *bad[] = {
		"",                       /* empty */
		"01",                     /* truncated */
		"01 02 01 00 27 01 05 66 69 6c 65 73", /* truncated item */
		"01 01 01 00 0b 01 00",   /* unknown content ref 11 */
		"01 01 01 00 07 01 01 61 09 00", /* type ref 9 */
		"01 01 01 00 04 01 01 61 02 c3 28 00", /* invalid UTF-8 */
		"01 ff ff ff ff 0f 01 00 00 01 00", /* struct count larger than the bytes */
		"00 01 01 ff ff ff ff 0f",  /* delete ranges larger than the bytes */
		"01 01 01 05 84 01 07 01 61 00", /* origin in own future */
		"01 01 01 00 00 00 00",   /* zero-length GC */
	};
	size_t i;
	struct svc_yjs_doc *doc;
	struct svc_yjs_buf b = {0};
	CU_ASSERT_FATAL(svc_yjs_doc_new(&doc, 1) == 0);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		uint8_t u[256];
		size_t n = unhex(bad[i], u, sizeof(u)), off = 999;
		CU_ASSERT(svc_yjs_apply_update(doc, u, n, NULL, NULL, &off) == SVC_E_VALIDATION);
		CU_ASSERT(off <= n);
	}
	CU_ASSERT(svc_yjs_encode_state(doc, NULL, 0, &b, NULL) == 0);
	CU_ASSERT(buf_is(&b, "00 00"));
	svc_yjs_buf_dispose(&b);
	svc_yjs_doc_free(doc);
}

static void test_yjs_text_insert_bounds(void)
{
	struct svc_yjs_doc *doc;
	CU_ASSERT_FATAL(svc_yjs_doc_new(&doc, 1) == 0);
	CU_ASSERT(svc_yjs_text_insert(doc, "files", "x", 1, 0, "a", 1, NULL, NULL) == SVC_E_NOT_FOUND);
	CU_ASSERT(svc_yjs_map_set_text(doc, "files", "x", 1, "ab", 2, NULL, NULL) == 0);
	CU_ASSERT(svc_yjs_text_insert(doc, "files", "x", 1, 3, "a", 1, NULL, NULL) == SVC_E_VALIDATION);
	CU_ASSERT(svc_yjs_text_insert(doc, "files", "x", 1, 1, "\xc3", 1, NULL, NULL) == SVC_E_VALIDATION);
	CU_ASSERT(svc_yjs_text_delete(doc, "files", "x", 1, 1, 2, NULL, NULL) == SVC_E_VALIDATION);
	CU_ASSERT(svc_yjs_txn_commit(doc, NULL, NULL) == SVC_E_CONFLICT);
	CU_ASSERT(svc_yjs_txn_begin(doc) == 0);
	CU_ASSERT(svc_yjs_txn_begin(doc) == SVC_E_CONFLICT);
	CU_ASSERT(svc_yjs_txn_commit(doc, NULL, NULL) == 0);
	svc_yjs_doc_free(doc);
}

static void test_yjs_replace_text_small_edit(void)
{
	struct svc_yjs_doc *doc;
	struct svc_yjs_buf b = {0}, u = {0};
	const char *a = "line one\nline two\nline three\nline four\n";
	const char *c = "line one\nline 2\nline three\nline four\nline five\n";
	CU_ASSERT_FATAL(svc_yjs_doc_new(&doc, 1) == 0);
	CU_ASSERT(svc_yjs_text_replace(doc, "files", "f", 1, a, strlen(a), NULL, NULL) == 0);
	CU_ASSERT(svc_yjs_text_replace(doc, "files", "f", 1, c, strlen(c), &u, NULL) == 0);
	CU_ASSERT(svc_yjs_text_read(doc, "files", "f", 1, &b) == 0);
	CU_ASSERT(b.len == strlen(c) && !memcmp(b.data, c, b.len));
	/* the update carries the changed lines, not the whole file */
	CU_ASSERT(u.len > 0 && u.len < strlen(c));
	b.len = 0;
	CU_ASSERT(svc_yjs_text_replace(doc, "files", "f", 1, "", 0, NULL, NULL) == 0);
	CU_ASSERT(svc_yjs_text_read(doc, "files", "f", 1, &b) == 0);
	CU_ASSERT(b.len == 0);
	svc_yjs_buf_dispose(&b);
	svc_yjs_buf_dispose(&u);
	svc_yjs_doc_free(doc);
}

/* The per-client gap buffer: random inserts and removals agree with a plain array. */
static void test_yjs_client_gap_buffer_matches_array(void)
{
	struct yclient c;
	struct yitem items[600];
	struct yitem *model[600];
	size_t n = 0, next = 0, step, i;
	unsigned seed = 7;
	int same = 1;
	memset(&c, 0, sizeof(c));
	for (step = 0; step < 4000 && same; step++) {
		seed = seed * 1103515245u + 12345u;
		if ((seed >> 16) % 3 != 0 && next < 600) {
			size_t at = (seed >> 8) % 4 == 0 ? n : (size_t)(seed >> 4) % (n + 1);
			svc_yjs__client_insert(&c, at, &items[next]);
			memmove(model + at + 1, model + at, (n - at) * sizeof(*model));
			model[at] = &items[next++];
			n++;
		} else if (n > 0) {
			size_t at = (size_t)(seed >> 4) % n, k = 1 + (size_t)(seed >> 12) % 3;
			if (k > n - at)
				k = n - at;
			svc_yjs__client_remove(&c, at, k);
			memmove(model + at, model + at + k, (n - at - k) * sizeof(*model));
			n -= k;
		}
		if (c.n != n)
			same = 0;
		for (i = 0; i < n && same; i++)
			same = svc_yjs__cv(&c, i) == model[i];
	}
	CU_ASSERT_EQUAL(c.n, n);
	CU_ASSERT_TRUE(same);
	free(c.v);
}

/*
 * Many local edits at random and at nearby positions on a long text (search
 * markers, splits, merges, the gap buffer): the text always equals a plain
 * string model, and the state decodes to the same text in a fresh document.
 */
static void test_yjs_long_local_edit_run_matches_model(void)
{
	struct svc_yjs_doc *doc, *doc2;
	struct svc_yjs_buf t = {0}, enc = {0};
	char model[8192];
	size_t n = 0, step;
	unsigned seed = 99, cursor = 0;
	int same = 1;
	CU_ASSERT_EQUAL_FATAL(svc_yjs_doc_new(&doc, 5), 0);
	CU_ASSERT_EQUAL(svc_yjs_map_set_text(doc, "files", "f", 1, "", 0, NULL, NULL), 0);
	for (step = 0; step < 6000 && same; step++) {
		unsigned r;
		seed = seed * 1103515245u + 12345u;
		r = seed >> 8;
		if (r % 16 == 0)
			cursor = n ? (unsigned)((seed >> 4) % (n + 1)) : 0;
		if (cursor > n)
			cursor = (unsigned)n;
		if (r % 5 < 3 && n + 2 < sizeof(model)) {
			char ch = (char)('a' + r % 26);
			CU_ASSERT_EQUAL(svc_yjs_text_insert(doc, "files", "f", 1, cursor, &ch, 1, NULL, NULL), 0);
			memmove(model + cursor + 1, model + cursor, n - cursor);
			model[cursor++] = ch;
			n++;
		} else if (n > 0) {
			size_t at = r % 5 == 3 && cursor > 0 ? cursor - 1 : cursor % n, k = 1 + (r >> 6) % 3;
			if (k > n - at)
				k = n - at;
			CU_ASSERT_EQUAL(svc_yjs_text_delete(doc, "files", "f", 1, at, k, NULL, NULL), 0);
			memmove(model + at, model + at + k, n - at - k);
			n -= k;
			cursor = (unsigned)at;
		}
		if (step % 97 == 0 || step == 5999) {
			t.len = 0;
			svc_yjs_text_read(doc, "files", "f", 1, &t);
			same = t.len == n && (n == 0 || !memcmp(t.data, model, n));
		}
	}
	CU_ASSERT_TRUE(same);
	CU_ASSERT_EQUAL(svc_yjs_text_length(doc, "files", "f", 1), (int64_t)n);
	CU_ASSERT_EQUAL(svc_yjs_encode_state(doc, NULL, 0, &enc, NULL), 0);
	CU_ASSERT_EQUAL_FATAL(svc_yjs_doc_new(&doc2, 6), 0);
	CU_ASSERT_EQUAL(svc_yjs_apply_update(doc2, enc.data, enc.len, NULL, NULL, NULL), 0);
	t.len = 0;
	CU_ASSERT_EQUAL(svc_yjs_text_read(doc2, "files", "f", 1, &t), 0);
	CU_ASSERT_TRUE(t.len == n && (n == 0 || !memcmp(t.data, model, n)));
	svc_yjs_buf_dispose(&t);
	svc_yjs_buf_dispose(&enc);
	svc_yjs_doc_free(doc);
	svc_yjs_doc_free(doc2);
}

/* A client listed twice in one update: the later listing wins (yjs readClientsStructRefs). */
static void test_yjs_update_listing_client_twice_keeps_last(void)
{
	struct svc_yjs_doc *doc;
	struct svc_yjs_buf j = {0}, sv = {0};
	CU_ASSERT_EQUAL_FATAL(svc_yjs_doc_new(&doc, 1), 0);
	/* meta.k1 = 1 and meta.k2 = 2, both listed as client 5 clock 0 (result checked with yjs 13.6.33) */
	CU_ASSERT_EQUAL(apply_hex(doc, "02 01 05 00 28 01 04 6d657461 02 6b31 01 7d 01"
				      " 01 05 00 28 01 04 6d657461 02 6b32 01 7d 02 00", NULL), 0);
	svc_yjs_map_json(doc, "meta", &j);
	CU_ASSERT_TRUE(j.len == 8 && !memcmp(j.data, "{\"k2\":2}", 8));
	svc_yjs_state_vector(doc, &sv);
	CU_ASSERT_TRUE(buf_is(&sv, "01 05 01"));
	CU_ASSERT_FALSE(svc_yjs_has_pending(doc));
	svc_yjs_buf_dispose(&j);
	svc_yjs_buf_dispose(&sv);
	svc_yjs_doc_free(doc);
}

/* Xml types print as their toJSON (toString) does: <p class="a">hi</p> (checked with yjs). */
static void test_yjs_xml_json_is_to_string(void)
{
	struct svc_yjs_doc *doc;
	struct svc_yjs_buf j = {0}, enc = {0};
	static const char want[] = "{\"x\":\"<p class=\\\"a\\\">hi</p>\"}";
	const char *u = "01 04 01 00 27 01 05 66696c6573 01 78 03 01 50 07 00 01 00 06 28 00 01 00 05 636c617373"
			" 01 77 01 61 04 00 01 01 02 6869 00";
	CU_ASSERT_EQUAL_FATAL(svc_yjs_doc_new(&doc, 1), 0);
	CU_ASSERT_EQUAL(apply_hex(doc, u, NULL), 0);
	svc_yjs_map_json(doc, "files", &j);
	CU_ASSERT_EQUAL(j.len, sizeof(want) - 1);
	CU_ASSERT_TRUE(j.len == sizeof(want) - 1 && !memcmp(j.data, want, j.len));
	svc_yjs_encode_state(doc, NULL, 0, &enc, NULL);
	CU_ASSERT_TRUE(buf_is(&enc, u));
	svc_yjs_buf_dispose(&j);
	svc_yjs_buf_dispose(&enc);
	svc_yjs_doc_free(doc);
}

/*
 * Local edits next to formatting from a remote client (bytes from yjs
 * 13.6.33): an insert steps over a format that changes nothing
 * (minimizeAttributeChanges), and a delete removes the format its gap made
 * redundant (cleanupFormattingGap).
 */
static void test_yjs_local_edits_around_formatting(void)
{
	struct svc_yjs_doc *doc;
	struct svc_yjs_buf up = {0}, t = {0};
	CU_ASSERT_EQUAL_FATAL(svc_yjs_doc_new(&doc, 9), 0);
	/* files.f: {bold:null} format, then "x" */
	CU_ASSERT_EQUAL(apply_hex(doc, "01 03 01 00 27 01 05 66696c6573 01 66 02 06 00 01 00 04 626f6c64 04 6e756c6c"
				       " 84 01 01 01 78 00", NULL), 0);
	CU_ASSERT_EQUAL(svc_yjs_text_insert(doc, "files", "f", 1, 0, "y", 1, &up, NULL), 0);
	CU_ASSERT_TRUE(buf_is(&up, "01 01 09 00 c4 01 01 01 02 01 79 00"));
	svc_yjs_text_read(doc, "files", "f", 1, &t);
	CU_ASSERT_TRUE(t.len == 2 && !memcmp(t.data, "yx", 2));
	svc_yjs_doc_free(doc);
	up.len = 0;
	CU_ASSERT_EQUAL_FATAL(svc_yjs_doc_new(&doc, 9), 0);
	/* files.f: "x", {bold:null} format, "z" */
	CU_ASSERT_EQUAL(apply_hex(doc, "01 04 01 00 27 01 05 66696c6573 01 66 02 04 00 01 00 01 78 86 01 01 04 626f6c64"
				       " 04 6e756c6c 84 01 02 01 7a 00", NULL), 0);
	CU_ASSERT_EQUAL(svc_yjs_text_delete(doc, "files", "f", 1, 0, 1, &up, NULL), 0);
	CU_ASSERT_TRUE(buf_is(&up, "00 01 01 01 01 02"));
	svc_yjs_buf_dispose(&up);
	svc_yjs_buf_dispose(&t);
	svc_yjs_doc_free(doc);
}

SVC_TEST_SUITE(yjs)
{
	CU_pSuite s = CU_add_suite("yjs", NULL, NULL);
	CU_add_test(s, "test_yjs_varuint_vectors", test_yjs_varuint_vectors);
	CU_add_test(s, "test_yjs_varuint_rejects_overflow_and_truncation", test_yjs_varuint_rejects_overflow_and_truncation);
	CU_add_test(s, "test_yjs_varint_vectors", test_yjs_varint_vectors);
	CU_add_test(s, "test_yjs_any_from_json_vectors", test_yjs_any_from_json_vectors);
	CU_add_test(s, "test_yjs_any_to_json_number_format", test_yjs_any_to_json_number_format);
	CU_add_test(s, "test_yjs_golden_update_roundtrip", test_yjs_golden_update_roundtrip);
	CU_add_test(s, "test_yjs_local_edits_match_yjs_bytes", test_yjs_local_edits_match_yjs_bytes);
	CU_add_test(s, "test_yjs_53bit_client_id", test_yjs_53bit_client_id);
	CU_add_test(s, "test_yjs_doc_new_rejects_big_client", test_yjs_doc_new_rejects_big_client);
	CU_add_test(s, "test_yjs_map_overwrite_origin_without_key", test_yjs_map_overwrite_origin_without_key);
	CU_add_test(s, "test_yjs_deleted_text_is_garbage_collected", test_yjs_deleted_text_is_garbage_collected);
	CU_add_test(s, "test_yjs_diff_inside_surrogate_pair", test_yjs_diff_inside_surrogate_pair);
	CU_add_test(s, "test_yjs_split_surrogate_pair_gives_fffd", test_yjs_split_surrogate_pair_gives_fffd);
	CU_add_test(s, "test_yjs_pending_structs_and_deletes", test_yjs_pending_structs_and_deletes);
	CU_add_test(s, "test_yjs_broadcast_update_and_report", test_yjs_broadcast_update_and_report);
	CU_add_test(s, "test_yjs_malformed_updates_are_rejected", test_yjs_malformed_updates_are_rejected);
	CU_add_test(s, "test_yjs_text_insert_bounds", test_yjs_text_insert_bounds);
	CU_add_test(s, "test_yjs_replace_text_small_edit", test_yjs_replace_text_small_edit);
	CU_add_test(s, "test_yjs_client_gap_buffer_matches_array", test_yjs_client_gap_buffer_matches_array);
	CU_add_test(s, "test_yjs_long_local_edit_run_matches_model", test_yjs_long_local_edit_run_matches_model);
	CU_add_test(s, "test_yjs_update_listing_client_twice_keeps_last", test_yjs_update_listing_client_twice_keeps_last);
	CU_add_test(s, "test_yjs_xml_json_is_to_string", test_yjs_xml_json_is_to_string);
	CU_add_test(s, "test_yjs_local_edits_around_formatting", test_yjs_local_edits_around_formatting);
}
