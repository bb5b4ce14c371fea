/* test_yjs.c: CUnit suite of lib/yjs: lib0 encoding, update v1 byte vectors verified with yjs 13.6.33, integration traps, packed string content. */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CUnit/CUnit.h>

#include "core/err.h"
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

/* ---- packed string content (svc_yjs_doc_pack) ---- */

/* Deterministic source-like text of at most `cap` bytes, with 2-, 3- and 4-byte characters. */
static size_t pack_text(char *out, size_t cap, unsigned seed)
{
	static const char *const words[] = {
		"function ", "return ", "caf\xc3\xa9 ", "\xe4\xb8\xad\xe6\x96\x87 ", "\xf0\x9f\x98\x80", "x",
		" => ", "{\n", "}\n", "\xf0\x9d\x84\x9e", "const ", "value", "(a, b)", ";\n\t",
	};
	size_t n = 0;
	for (;;) {
		const char *w;
		size_t k;
		seed = seed * 1103515245u + 12345u;
		w = words[(seed >> 16) % (sizeof(words) / sizeof(words[0]))];
		k = strlen(w);
		if (n + k > cap)
			return n;
		memcpy(out + n, w, k);
		n += k;
	}
}

/* Packs every string item: the first pass clears the hot marks, the second packs (frames kept always). */
static void pack_all(struct svc_yjs_doc *doc)
{
	doc->pack_always = 1;
	svc_yjs_doc_pack(doc, 1, SIZE_MAX);
	svc_yjs_doc_pack(doc, 1, SIZE_MAX);
}

static struct svc_yjs_mem mem_of(const struct svc_yjs_doc *doc)
{
	struct svc_yjs_mem m;
	svc_yjs_doc_memory(doc, &m);
	return m;
}

static int bufs_equal(const struct svc_yjs_buf *a, const struct svc_yjs_buf *b)
{
	return a->len == b->len && (a->len == 0 || !memcmp(a->data, b->data, a->len));
}

/* Same full state, same "files" JSON and same text at files/f in both documents. */
static int twins_equal(struct svc_yjs_doc *a, struct svc_yjs_doc *b)
{
	struct svc_yjs_buf x = {0}, y = {0};
	int same;
	svc_yjs_encode_state(a, NULL, 0, &x, NULL);
	svc_yjs_encode_state(b, NULL, 0, &y, NULL);
	same = bufs_equal(&x, &y);
	x.len = y.len = 0;
	svc_yjs_map_json(a, "files", &x);
	svc_yjs_map_json(b, "files", &y);
	same = same && bufs_equal(&x, &y);
	x.len = y.len = 0;
	svc_yjs_text_read(a, "files", "f", 1, &x);
	svc_yjs_text_read(b, "files", "f", 1, &y);
	same = same && bufs_equal(&x, &y);
	svc_yjs_buf_dispose(&x);
	svc_yjs_buf_dispose(&y);
	return same;
}

static struct ytype *text_type(struct svc_yjs_doc *doc, const char *key)
{
	struct ytype *root = svc_yjs__root(doc, svc_yjs__intern(doc, "files", 5), 0);
	struct ymapent *e = root ? svc_yjs__map_find(root, svc_yjs__intern(doc, key, strlen(key))) : NULL;
	return e && e->item && e->item->ref == YC_TYPE ? e->item->c.type : NULL;
}

/* ID of the character at UTF-16 index `index` of files/f. */
static struct yid id_at(struct svc_yjs_doc *doc, uint64_t index)
{
	struct yid id = { 0, 0 };
	const struct yitem *it;
	for (it = text_type(doc, "f")->start; it; it = it->right) {
		if ((it->flags & YF_DELETED) || !(it->flags & YF_COUNTABLE))
			continue;
		if (index < it->len) {
			id.client = it->id.client;
			id.clock = it->id.clock + index;
			return id;
		}
		index -= it->len;
	}
	return id;
}

/* Appends a struct ContentFormat (key, JSON value) between two IDs (Item.write, ContentFormat.write). */
static void put_format(struct svc_yjs_buf *u, struct yid origin, struct yid rorigin, const char *key, const char *val)
{
	svc_yjs__put_u8(u, YC_FORMAT | 0x80 | 0x40);
	svc_yjs__put_varuint(u, origin.client);
	svc_yjs__put_varuint(u, origin.clock);
	svc_yjs__put_varuint(u, rorigin.client);
	svc_yjs__put_varuint(u, rorigin.clock);
	svc_yjs__put_varstring(u, key, strlen(key));
	svc_yjs__put_varstring(u, val, strlen(val));
}

/* Encoding a packed document gives the bytes of the unpacked one, and reading does not unpack. */
static void test_yjs_pack_encode_identical(void)
{
	static char text[6000], ins[1000];
	struct svc_yjs_doc *doc, *peer;
	struct svc_yjs_buf before = {0}, after = {0}, up = {0}, json0 = {0}, json1 = {0}, t = {0}, sv = {0};
	struct svc_yjs_mem m;
	size_t n = pack_text(text, sizeof(text), 1), ni = pack_text(ins, sizeof(ins), 11), k;
	CU_ASSERT_EQUAL_FATAL(svc_yjs_doc_new(&doc, 1), 0);
	CU_ASSERT_EQUAL_FATAL(svc_yjs_doc_new(&peer, 2), 0);
	CU_ASSERT_EQUAL(svc_yjs_map_set_text(doc, "files", "f", 1, text, n / 2, NULL, NULL), 0);
	CU_ASSERT_EQUAL(svc_yjs_map_set_text(doc, "files", "g", 1, text + n / 2, n - n / 2, NULL, NULL), 0);
	svc_yjs_encode_state(doc, NULL, 0, &up, NULL);
	CU_ASSERT_EQUAL(svc_yjs_apply_update(peer, up.data, up.len, NULL, NULL, NULL), 0);
	up.len = 0;
	CU_ASSERT_EQUAL(svc_yjs_text_insert(peer, "files", "f", 1, 100, ins, ni, &up, NULL), 0);
	CU_ASSERT_EQUAL(svc_yjs_apply_update(doc, up.data, up.len, NULL, NULL, NULL), 0);
	svc_yjs_encode_state(doc, NULL, 0, &before, NULL);
	svc_yjs_map_json(doc, "files", &json0);
	m = mem_of(doc);
	CU_ASSERT_EQUAL(m.packed_items, 0);
	CU_ASSERT_EQUAL(m.hot_items, m.string_items);
	pack_all(doc);
	m = mem_of(doc);
	CU_ASSERT_EQUAL(m.packed_items, m.string_items);
	CU_ASSERT_EQUAL(m.packed_raw, n + ni);
	CU_ASSERT_TRUE(m.packed_bytes < m.packed_raw / 2);
	svc_yjs_encode_state(doc, NULL, 0, &after, NULL);
	CU_ASSERT_TRUE(bufs_equal(&before, &after));
	svc_yjs_map_json(doc, "files", &json1);
	CU_ASSERT_TRUE(bufs_equal(&json0, &json1));
	CU_ASSERT_EQUAL(svc_yjs_text_read(doc, "files", "g", 1, &t), 0);
	CU_ASSERT_TRUE(t.len == n - n / 2 && !memcmp(t.data, text + n / 2, t.len));
	/* diffs against a peer's state vector, from every clock of client 2 (inside its packed item) */
	for (k = 0; k <= ni; k += 7) {
		struct svc_yjs_doc *twin;
		sv.len = before.len = after.len = 0;
		svc_yjs__put_varuint(&sv, 2);
		svc_yjs__put_varuint(&sv, 2);
		svc_yjs__put_varuint(&sv, k);
		svc_yjs__put_varuint(&sv, 1);
		svc_yjs__put_varuint(&sv, k % 3 ? 1 : 3);
		CU_ASSERT_EQUAL(svc_yjs_encode_state(doc, sv.data, sv.len, &after, NULL), 0);
		CU_ASSERT_EQUAL_FATAL(svc_yjs_doc_new(&twin, 1), 0);
		up.len = 0;
		svc_yjs_encode_state(doc, NULL, 0, &up, NULL);
		CU_ASSERT_EQUAL(svc_yjs_apply_update(twin, up.data, up.len, NULL, NULL, NULL), 0);
		CU_ASSERT_EQUAL(svc_yjs_encode_state(twin, sv.data, sv.len, &before, NULL), 0);
		CU_ASSERT_EQUAL(mem_of(twin).packed_items, 0);
		CU_ASSERT_TRUE(bufs_equal(&before, &after));
		svc_yjs_doc_free(twin);
	}
	/* reading and encoding left every item packed and cold */
	m = mem_of(doc);
	CU_ASSERT_EQUAL(m.packed_items, m.string_items);
	CU_ASSERT_EQUAL(m.hot_items, 0);
	svc_yjs_buf_dispose(&before);
	svc_yjs_buf_dispose(&after);
	svc_yjs_buf_dispose(&up);
	svc_yjs_buf_dispose(&json0);
	svc_yjs_buf_dispose(&json1);
	svc_yjs_buf_dispose(&t);
	svc_yjs_buf_dispose(&sv);
	svc_yjs_doc_free(doc);
	svc_yjs_doc_free(peer);
}

/*
 * A packed document and an unpacked twin get the same edits (local inserts
 * and deletes inside packed items, a remote format range, a remote insert,
 * a replace): the updates they emit, their texts and encodings stay equal.
 */
static void test_yjs_pack_edits_match_unpacked_twin(void)
{
	static char text[8000], text2[8000];
	struct svc_yjs_doc *a, *b, *peer;
	struct svc_yjs_buf ua = {0}, ub = {0}, u = {0};
	size_t n = pack_text(text, sizeof(text), 2), n2;
	int64_t len;
	struct yid o, r;
	CU_ASSERT_EQUAL_FATAL(svc_yjs_doc_new(&a, 1), 0);
	CU_ASSERT_EQUAL_FATAL(svc_yjs_doc_new(&b, 1), 0);
	CU_ASSERT_EQUAL_FATAL(svc_yjs_doc_new(&peer, 3), 0);
	CU_ASSERT_EQUAL(svc_yjs_map_set_text(a, "files", "f", 1, text, n, NULL, NULL), 0);
	CU_ASSERT_EQUAL(svc_yjs_map_set_text(b, "files", "f", 1, text, n, NULL, NULL), 0);
	len = svc_yjs_text_length(a, "files", "f", 1);
	pack_all(a);
	CU_ASSERT_EQUAL(mem_of(a).packed_items, 1);
	/* local insert in the middle of the packed item */
	CU_ASSERT_EQUAL(svc_yjs_text_insert(a, "files", "f", 1, (uint64_t)len / 2, "NEW", 3, &ua, NULL), 0);
	CU_ASSERT_EQUAL(svc_yjs_text_insert(b, "files", "f", 1, (uint64_t)len / 2, "NEW", 3, &ub, NULL), 0);
	CU_ASSERT_TRUE(bufs_equal(&ua, &ub));
	CU_ASSERT_TRUE(twins_equal(a, b));
	/* a deleted range inside a packed item */
	pack_all(a);
	CU_ASSERT_EQUAL(mem_of(a).packed_items, 3);
	ua.len = ub.len = 0;
	CU_ASSERT_EQUAL(svc_yjs_text_delete(a, "files", "f", 1, 100, 250, &ua, NULL), 0);
	CU_ASSERT_EQUAL(svc_yjs_text_delete(b, "files", "f", 1, 100, 250, &ub, NULL), 0);
	CU_ASSERT_TRUE(bufs_equal(&ua, &ub));
	CU_ASSERT_TRUE(twins_equal(a, b));
	/* a remote bold range [400, 900) whose ends fall inside packed items */
	pack_all(a);
	svc_yjs__put_varuint(&u, 1);
	svc_yjs__put_varuint(&u, 2);
	svc_yjs__put_varuint(&u, 9);
	svc_yjs__put_varuint(&u, 0);
	o = id_at(b, 399);
	r = id_at(b, 400);
	put_format(&u, o, r, "bold", "true");
	o = id_at(b, 899);
	r = id_at(b, 900);
	put_format(&u, o, r, "bold", "null");
	svc_yjs__put_varuint(&u, 0);
	ua.len = ub.len = 0;
	CU_ASSERT_EQUAL(svc_yjs_apply_update(a, u.data, u.len, &ua, NULL, NULL), 0);
	CU_ASSERT_EQUAL(svc_yjs_apply_update(b, u.data, u.len, &ub, NULL, NULL), 0);
	CU_ASSERT_TRUE(ua.len > 0 && bufs_equal(&ua, &ub));
	CU_ASSERT_TRUE(twins_equal(a, b));
	/* local edits inside the formatted range and across its end */
	pack_all(a);
	ua.len = ub.len = 0;
	CU_ASSERT_EQUAL(svc_yjs_text_insert(a, "files", "f", 1, 600, "\xf0\x9f\x98\x80", 4, &ua, NULL), 0);
	CU_ASSERT_EQUAL(svc_yjs_text_insert(b, "files", "f", 1, 600, "\xf0\x9f\x98\x80", 4, &ub, NULL), 0);
	CU_ASSERT_EQUAL(svc_yjs_text_delete(a, "files", "f", 1, 850, 100, &ua, NULL), 0);
	CU_ASSERT_EQUAL(svc_yjs_text_delete(b, "files", "f", 1, 850, 100, &ub, NULL), 0);
	CU_ASSERT_TRUE(bufs_equal(&ua, &ub));
	CU_ASSERT_TRUE(twins_equal(a, b));
	/* a remote insert made against the unpacked twin's state */
	pack_all(a);
	u.len = 0;
	svc_yjs_encode_state(b, NULL, 0, &u, NULL);
	CU_ASSERT_EQUAL(svc_yjs_apply_update(peer, u.data, u.len, NULL, NULL, NULL), 0);
	u.len = 0;
	CU_ASSERT_EQUAL(svc_yjs_text_insert(peer, "files", "f", 1, 2000, "peer text", 9, &u, NULL), 0);
	CU_ASSERT_EQUAL(svc_yjs_text_delete(peer, "files", "f", 1, 3000, 40, &u, NULL), 0);
	CU_ASSERT_EQUAL(svc_yjs_apply_update(a, u.data, u.len, NULL, NULL, NULL), 0);
	CU_ASSERT_EQUAL(svc_yjs_apply_update(b, u.data, u.len, NULL, NULL, NULL), 0);
	CU_ASSERT_TRUE(twins_equal(a, b));
	/* a replace: some lines change in the middle, and a delete over many items */
	pack_all(a);
	u.len = 0;
	svc_yjs_text_read(b, "files", "f", 1, &u);
	{
		/* the third line after a third of the text becomes "changed" */
		size_t p1 = u.len / 3, p2;
		while (p1 < u.len && u.data[p1] != '\n')
			p1++;
		for (p2 = p1 + 1; p2 < u.len && u.data[p2] != '\n'; p2++)
			;
		CU_ASSERT_FATAL(p2 < u.len && u.len < sizeof(text2));
		memcpy(text2, u.data, p1 + 1);
		memcpy(text2 + p1 + 1, "changed", 7);
		memcpy(text2 + p1 + 8, u.data + p2, u.len - p2);
		n2 = p1 + 8 + u.len - p2;
	}
	ua.len = ub.len = 0;
	CU_ASSERT_EQUAL(svc_yjs_text_replace(a, "files", "f", 1, text2, n2, &ua, NULL), 0);
	CU_ASSERT_EQUAL(svc_yjs_text_replace(b, "files", "f", 1, text2, n2, &ub, NULL), 0);
	CU_ASSERT_TRUE(bufs_equal(&ua, &ub));
	pack_all(a);
	CU_ASSERT_EQUAL(svc_yjs_text_delete(a, "files", "f", 1, 10, 5000, &ua, NULL), 0);
	CU_ASSERT_EQUAL(svc_yjs_text_delete(b, "files", "f", 1, 10, 5000, &ub, NULL), 0);
	CU_ASSERT_TRUE(bufs_equal(&ua, &ub));
	CU_ASSERT_TRUE(twins_equal(a, b));
	svc_yjs_buf_dispose(&ua);
	svc_yjs_buf_dispose(&ub);
	svc_yjs_buf_dispose(&u);
	svc_yjs_doc_free(a);
	svc_yjs_doc_free(b);
	svc_yjs_doc_free(peer);
}

/*
 * Neighbours that merge at the end of a transaction while packed: two
 * inserts in one explicit transaction are packed before the commit squashes
 * them; later typing at the end merges into the packed item.
 */
static void test_yjs_pack_merge_of_packed_neighbours(void)
{
	static char text[3000];
	struct svc_yjs_doc *a, *b;
	struct svc_yjs_buf ua = {0}, ub = {0};
	size_t n = pack_text(text, sizeof(text), 3);
	struct svc_yjs_mem m;
	int i;
	CU_ASSERT_EQUAL_FATAL(svc_yjs_doc_new(&a, 4), 0);
	CU_ASSERT_EQUAL_FATAL(svc_yjs_doc_new(&b, 4), 0);
	CU_ASSERT_EQUAL(svc_yjs_map_set_text(a, "files", "f", 1, "", 0, NULL, NULL), 0);
	CU_ASSERT_EQUAL(svc_yjs_map_set_text(b, "files", "f", 1, "", 0, NULL, NULL), 0);
	CU_ASSERT_EQUAL(svc_yjs_txn_begin(a), 0);
	CU_ASSERT_EQUAL(svc_yjs_txn_begin(b), 0);
	CU_ASSERT_EQUAL(svc_yjs_text_insert(a, "files", "f", 1, 0, text, n / 2, NULL, NULL), 0);
	CU_ASSERT_EQUAL(svc_yjs_text_insert(b, "files", "f", 1, 0, text, n / 2, NULL, NULL), 0);
	CU_ASSERT_EQUAL(svc_yjs_text_insert(a, "files", "f", 1, (uint64_t)svc_yjs_text_length(a, "files", "f", 1),
					    text + n / 2, n - n / 2, NULL, NULL), 0);
	CU_ASSERT_EQUAL(svc_yjs_text_insert(b, "files", "f", 1, (uint64_t)svc_yjs_text_length(b, "files", "f", 1),
					    text + n / 2, n - n / 2, NULL, NULL), 0);
	pack_all(a);
	m = mem_of(a);
	CU_ASSERT_EQUAL(m.string_items, 2);
	CU_ASSERT_EQUAL(m.packed_items, 2);
	CU_ASSERT_EQUAL(svc_yjs_txn_commit(a, &ua, NULL), 0);
	CU_ASSERT_EQUAL(svc_yjs_txn_commit(b, &ub, NULL), 0);
	CU_ASSERT_TRUE(ua.len > n && bufs_equal(&ua, &ub));
	m = mem_of(a);
	CU_ASSERT_EQUAL(m.string_items, 1);   /* squashed */
	CU_ASSERT_EQUAL(m.string_bytes, n);
	CU_ASSERT_EQUAL(m.packed_items, 0);
	CU_ASSERT_EQUAL(m.hot_items, 1);
	CU_ASSERT_TRUE(twins_equal(a, b));
	/* typing at the end, one character per transaction, packed in between */
	for (i = 0; i < 5; i++) {
		uint64_t end = (uint64_t)svc_yjs_text_length(a, "files", "f", 1);
		pack_all(a);
		CU_ASSERT_EQUAL(mem_of(a).packed_items, 1);
		ua.len = ub.len = 0;
		CU_ASSERT_EQUAL(svc_yjs_text_insert(a, "files", "f", 1, end, "\xc3\xa9", 2, &ua, NULL), 0);
		CU_ASSERT_EQUAL(svc_yjs_text_insert(b, "files", "f", 1, end, "\xc3\xa9", 2, &ub, NULL), 0);
		CU_ASSERT_TRUE(bufs_equal(&ua, &ub));
		m = mem_of(a);
		CU_ASSERT_EQUAL(m.string_items, 1);
		CU_ASSERT_EQUAL(m.packed_items, 0);
	}
	CU_ASSERT_TRUE(twins_equal(a, b));
	svc_yjs_buf_dispose(&ua);
	svc_yjs_buf_dispose(&ub);
	svc_yjs_doc_free(a);
	svc_yjs_doc_free(b);
}

/* Second chance: a pass only cools hot items, the next packs them; an item touched in between stays. */
static void test_yjs_pack_second_chance(void)
{
	static char text[4000];
	struct svc_yjs_doc *doc;
	struct svc_yjs_buf t = {0};
	struct svc_yjs_mem m;
	size_t n = pack_text(text, sizeof(text), 4), got;
	CU_ASSERT_EQUAL_FATAL(svc_yjs_doc_new(&doc, 5), 0);
	CU_ASSERT_EQUAL(svc_yjs_map_set_text(doc, "files", "a", 1, text, n, NULL, NULL), 0);
	CU_ASSERT_EQUAL(svc_yjs_map_set_text(doc, "files", "b", 1, text, n, NULL, NULL), 0);
	CU_ASSERT_EQUAL(svc_yjs_map_set_text(doc, "files", "c", 1, text, n, NULL, NULL), 0);
	CU_ASSERT_EQUAL(mem_of(doc).hot_items, 3);
	CU_ASSERT_EQUAL(svc_yjs_doc_pack(doc, 64, SIZE_MAX), 0);
	m = mem_of(doc);
	CU_ASSERT_EQUAL(m.hot_items, 0);
	CU_ASSERT_EQUAL(m.packed_items, 0);
	/* b is touched between the passes: an insert splits it into two hot halves */
	CU_ASSERT_EQUAL(svc_yjs_text_insert(doc, "files", "b", 1, 100, "z", 1, NULL, NULL), 0);
	CU_ASSERT_EQUAL(mem_of(doc).hot_items, 3);
	got = svc_yjs_doc_pack(doc, 64, SIZE_MAX);
	CU_ASSERT_EQUAL(got, 2 * n);
	m = mem_of(doc);
	CU_ASSERT_EQUAL(m.packed_items, 2);
	CU_ASSERT_EQUAL(m.packed_raw, 2 * n);
	CU_ASSERT_EQUAL(m.hot_items, 1);   /* the "z", below min_bytes, keeps its mark */
	CU_ASSERT_EQUAL(svc_yjs_text_read(doc, "files", "a", 1, &t), 0);
	CU_ASSERT_TRUE(t.len == n && !memcmp(t.data, text, n));
	/* reading did not warm a: the third pass packs the halves of b only */
	CU_ASSERT_EQUAL(svc_yjs_doc_pack(doc, 64, SIZE_MAX), n);
	CU_ASSERT_EQUAL(mem_of(doc).packed_items, 4);
	/* nothing left to do */
	CU_ASSERT_EQUAL(svc_yjs_doc_pack(doc, 64, SIZE_MAX), 0);
	svc_yjs_buf_dispose(&t);
	svc_yjs_doc_free(doc);
}

/* The budget: a call stops once it compressed that many bytes, and the next resumes after it. */
static void test_yjs_pack_budget_respected(void)
{
	static char text[1000];
	struct svc_yjs_doc *doc;
	size_t n = pack_text(text, sizeof(text), 5), total = 0, got, calls = 0;
	int i;
	char key[8];
	CU_ASSERT_EQUAL_FATAL(svc_yjs_doc_new(&doc, 6), 0);
	for (i = 0; i < 10; i++) {
		int kn = snprintf(key, sizeof(key), "k%d", i);
		CU_ASSERT_EQUAL(svc_yjs_map_set_text(doc, "files", key, (size_t)kn, text, n, NULL, NULL), 0);
	}
	CU_ASSERT_EQUAL(svc_yjs_doc_pack(doc, 1, SIZE_MAX), 0);
	/* budget 0: nothing is compressed */
	CU_ASSERT_EQUAL(svc_yjs_doc_pack(doc, 1, 0), 0);
	CU_ASSERT_EQUAL(mem_of(doc).packed_items, 0);
	/* 2.5 items' worth: three items per call (the one crossing the budget is finished) */
	got = svc_yjs_doc_pack(doc, 1, n * 5 / 2);
	CU_ASSERT_EQUAL(got, 3 * n);
	CU_ASSERT_EQUAL(mem_of(doc).packed_items, 3);
	total = got;
	while ((got = svc_yjs_doc_pack(doc, 1, n * 5 / 2)) > 0 && calls < 10) {
		CU_ASSERT_TRUE(got <= 3 * n);
		total += got;
		calls++;
	}
	CU_ASSERT_EQUAL(calls, 3);
	CU_ASSERT_EQUAL(total, 10 * n);   /* every item exactly once */
	CU_ASSERT_EQUAL(mem_of(doc).packed_items, 10);
	svc_yjs_doc_free(doc);
}

/*
 * A call that ran out of budget resumes after the last item it compressed:
 * items that do not shrink, first in the store, do not keep later ones
 * from being packed (one item per call with a budget of 1 byte).
 */
static void test_yjs_pack_resumes_after_budget(void)
{
	static const char distinct[] = "abcdefghijklmnopqrstuvwxyz0123456789";
	static char text[3000];
	struct svc_yjs_doc *doc;
	size_t n = pack_text(text, sizeof(text), 10), got[6];
	char key[4] = "i0";
	int i;
	CU_ASSERT_EQUAL_FATAL(svc_yjs_doc_new(&doc, 11), 0);
	for (i = 0; i < 4; i++) {
		key[1] = (char)('0' + i);
		CU_ASSERT_EQUAL(svc_yjs_map_set_text(doc, "files", key, 2, distinct, sizeof(distinct) - 1, NULL, NULL), 0);
	}
	CU_ASSERT_EQUAL(svc_yjs_map_set_text(doc, "files", "t", 1, text, n, NULL, NULL), 0);
	CU_ASSERT_EQUAL(svc_yjs_doc_pack(doc, 16, SIZE_MAX), 0);
	for (i = 0; i < 6; i++)
		got[i] = svc_yjs_doc_pack(doc, 16, 1);
	CU_ASSERT_TRUE(got[0] == 0 && got[1] == 0 && got[2] == 0 && got[3] == 0);
	CU_ASSERT_EQUAL(got[4], n);
	CU_ASSERT_EQUAL(got[5], 0);
	CU_ASSERT_EQUAL(mem_of(doc).packed_items, 1);
	svc_yjs_doc_free(doc);
}

/* Items below min_bytes stay; an item whose frame saves less than an eighth stays and is retried later. */
static void test_yjs_pack_skips_small_and_incompressible(void)
{
	static const char distinct[] = "abcdefghijklmnopqrstuvwxyz0123456789";
	static char text[2000];
	struct svc_yjs_doc *doc;
	struct svc_yjs_mem m;
	size_t n = pack_text(text, sizeof(text), 6);
	CU_ASSERT_EQUAL_FATAL(svc_yjs_doc_new(&doc, 7), 0);
	CU_ASSERT_EQUAL(svc_yjs_map_set_text(doc, "files", "d", 1, distinct, sizeof(distinct) - 1, NULL, NULL), 0);
	CU_ASSERT_EQUAL(svc_yjs_map_set_text(doc, "files", "t", 1, text, n, NULL, NULL), 0);
	svc_yjs_doc_pack(doc, 1, SIZE_MAX);
	CU_ASSERT_EQUAL(svc_yjs_doc_pack(doc, n + 1, SIZE_MAX), 0);   /* both below min_bytes */
	CU_ASSERT_EQUAL(svc_yjs_doc_pack(doc, 16, SIZE_MAX), n);      /* the text; the 36 distinct bytes do not shrink */
	m = mem_of(doc);
	CU_ASSERT_EQUAL(m.packed_items, 1);
	CU_ASSERT_EQUAL(m.hot_items, 1);
	CU_ASSERT_EQUAL(m.string_heap, m.packed_bytes + sizeof(distinct) - 1);
	CU_ASSERT_EQUAL(svc_yjs_doc_pack(doc, 16, SIZE_MAX), 0);      /* cools it */
	CU_ASSERT_EQUAL(mem_of(doc).hot_items, 0);
	doc->pack_always = 1;
	CU_ASSERT_EQUAL(svc_yjs_doc_pack(doc, 16, SIZE_MAX), sizeof(distinct) - 1);
	CU_ASSERT_EQUAL(mem_of(doc).packed_items, 2);
	svc_yjs_doc_free(doc);
}

/*
 * Inserts, deletes and diffs at every UTF-16 offset of a packed text of 2-,
 * 3- and 4-byte characters (astral ones split into U+FFFD as yjs does) give
 * what the unpacked twin gives.
 */
static void test_yjs_pack_utf8_split_points(void)
{
	static const char s[] = "a\xc3\xa9\xf0\x9f\x98\x80" "b\xe4\xb8\xad\xf0\x9d\x84\x9e\xf0\x9f\x98\x80" "c\xc3\xa9"
				"\xe4\xb8\xad\xf0\x9f\x98\x80";
	uint64_t len = svc_yjs__utf16_len((const uint8_t *)s, sizeof(s) - 1), k;
	struct svc_yjs_buf ua = {0}, ub = {0}, sv = {0};
	int same = 1, packed = 1;
	for (k = 0; k <= len + 1; k++) {
		struct svc_yjs_doc *a, *b;
		int op;
		for (op = 0; op < 4; op++) {
			CU_ASSERT_EQUAL_FATAL(svc_yjs_doc_new(&a, 1), 0);
			CU_ASSERT_EQUAL_FATAL(svc_yjs_doc_new(&b, 1), 0);
			svc_yjs_map_set_text(a, "files", "f", 1, s, sizeof(s) - 1, NULL, NULL);
			svc_yjs_map_set_text(b, "files", "f", 1, s, sizeof(s) - 1, NULL, NULL);
			pack_all(a);
			packed = packed && mem_of(a).packed_items == 1;
			ua.len = ub.len = 0;
			if (op == 0 && k <= len) {
				svc_yjs_text_insert(a, "files", "f", 1, k, "x", 1, &ua, NULL);
				svc_yjs_text_insert(b, "files", "f", 1, k, "x", 1, &ub, NULL);
			} else if (op == 1 && k < len) {
				svc_yjs_text_delete(a, "files", "f", 1, k, 1, &ua, NULL);
				svc_yjs_text_delete(b, "files", "f", 1, k, 1, &ub, NULL);
			} else if (op == 2 && k + 3 <= len) {
				svc_yjs_text_delete(a, "files", "f", 1, k, 3, &ua, NULL);
				svc_yjs_text_delete(b, "files", "f", 1, k, 3, &ub, NULL);
			} else if (op == 3) {
				/* a peer at clock k of the text's client: the diff starts inside the item */
				sv.len = 0;
				svc_yjs__put_varuint(&sv, 1);
				svc_yjs__put_varuint(&sv, 1);
				svc_yjs__put_varuint(&sv, k);
				svc_yjs_encode_state(a, sv.data, sv.len, &ua, NULL);
				svc_yjs_encode_state(b, sv.data, sv.len, &ub, NULL);
				packed = packed && mem_of(a).packed_items == 1;
			}
			same = same && bufs_equal(&ua, &ub) && twins_equal(a, b);
			svc_yjs_doc_free(a);
			svc_yjs_doc_free(b);
		}
	}
	CU_ASSERT_TRUE(same);
	CU_ASSERT_TRUE(packed);
	svc_yjs_buf_dispose(&ua);
	svc_yjs_buf_dispose(&ub);
	svc_yjs_buf_dispose(&sv);
}

/* The statistics follow packing, reading and editing. */
static void test_yjs_pack_memory_stats(void)
{
	static char text[5000];
	struct svc_yjs_doc *doc;
	struct svc_yjs_buf t = {0};
	struct svc_yjs_mem m;
	size_t n = pack_text(text, sizeof(text), 8);
	CU_ASSERT_EQUAL_FATAL(svc_yjs_doc_new(&doc, 8), 0);
	m = mem_of(doc);
	CU_ASSERT_TRUE(m.structs == 0 && m.string_items == 0 && m.string_bytes == 0 && m.string_heap == 0);
	CU_ASSERT_EQUAL(svc_yjs_map_set_text(doc, "files", "f", 1, text, n, NULL, NULL), 0);
	m = mem_of(doc);
	CU_ASSERT_EQUAL(m.structs, 2);   /* the Y.Text and its string */
	CU_ASSERT_EQUAL(m.string_items, 1);
	CU_ASSERT_EQUAL(m.string_bytes, n);
	CU_ASSERT_EQUAL(m.string_heap, n);
	CU_ASSERT_TRUE(m.packed_items == 0 && m.packed_raw == 0 && m.packed_bytes == 0 && m.hot_items == 1);
	svc_yjs_doc_pack(doc, 1, SIZE_MAX);
	CU_ASSERT_EQUAL(svc_yjs_doc_pack(doc, 1, SIZE_MAX), n);
	m = mem_of(doc);
	CU_ASSERT_EQUAL(m.string_bytes, n);
	CU_ASSERT_EQUAL(m.packed_items, 1);
	CU_ASSERT_EQUAL(m.packed_raw, n);
	CU_ASSERT_TRUE(m.packed_bytes > 0 && m.packed_bytes <= n - n / 8);
	CU_ASSERT_EQUAL(m.string_heap, m.packed_bytes);
	CU_ASSERT_EQUAL(m.hot_items, 0);
	svc_yjs_text_read(doc, "files", "f", 1, &t);
	CU_ASSERT_TRUE(t.len == n && !memcmp(t.data, text, n));
	CU_ASSERT_EQUAL(mem_of(doc).packed_items, 1);
	/* an insert in the middle unpacks and splits it */
	CU_ASSERT_EQUAL(svc_yjs_text_insert(doc, "files", "f", 1, 10, "abc", 3, NULL, NULL), 0);
	m = mem_of(doc);
	CU_ASSERT_EQUAL(m.structs, 4);
	CU_ASSERT_EQUAL(m.string_items, 3);
	CU_ASSERT_EQUAL(m.string_bytes, n + 3);
	CU_ASSERT_EQUAL(m.packed_items, 0);
	CU_ASSERT_EQUAL(m.hot_items, 3);
	svc_yjs_buf_dispose(&t);
	svc_yjs_doc_free(doc);
}

/* Runs `fn` on a packed one-text document in a child; returns 1 if the child died of SIGABRT. */
static int child_aborts(void (*corrupt)(struct yitem *))
{
	static char text[2000];
	size_t n = pack_text(text, sizeof(text), 9);
	pid_t pid;
	int status;
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return 0;
	if (pid == 0) {
		struct svc_yjs_doc *doc;
		struct svc_yjs_buf t = {0};
		if (svc_yjs_doc_new(&doc, 1) < 0)
			_exit(2);
		svc_yjs_map_set_text(doc, "files", "f", 1, text, n, NULL, NULL);
		pack_all(doc);
		corrupt(text_type(doc, "f")->start);
		svc_yjs_text_read(doc, "files", "f", 1, &t);
		_exit(0);
	}
	if (waitpid(pid, &status, 0) != pid)
		return 0;
	return WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT;
}

static void corrupt_magic(struct yitem *it)
{
	it->c.data[0] ^= 0xff;
}

static void corrupt_length(struct yitem *it)
{
	it->nbytes += 1;
}

/* A frame that does not decompress to the item's length aborts instead of returning garbage. */
static void test_yjs_pack_bad_frame_aborts(void)
{
	CU_ASSERT_TRUE(child_aborts(corrupt_magic));
	CU_ASSERT_TRUE(child_aborts(corrupt_length));
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
	CU_add_test(s, "test_yjs_pack_encode_identical", test_yjs_pack_encode_identical);
	CU_add_test(s, "test_yjs_pack_edits_match_unpacked_twin", test_yjs_pack_edits_match_unpacked_twin);
	CU_add_test(s, "test_yjs_pack_merge_of_packed_neighbours", test_yjs_pack_merge_of_packed_neighbours);
	CU_add_test(s, "test_yjs_pack_second_chance", test_yjs_pack_second_chance);
	CU_add_test(s, "test_yjs_pack_budget_respected", test_yjs_pack_budget_respected);
	CU_add_test(s, "test_yjs_pack_resumes_after_budget", test_yjs_pack_resumes_after_budget);
	CU_add_test(s, "test_yjs_pack_skips_small_and_incompressible", test_yjs_pack_skips_small_and_incompressible);
	CU_add_test(s, "test_yjs_pack_utf8_split_points", test_yjs_pack_utf8_split_points);
	CU_add_test(s, "test_yjs_pack_memory_stats", test_yjs_pack_memory_stats);
	CU_add_test(s, "test_yjs_pack_bad_frame_aborts", test_yjs_pack_bad_frame_aborts);
}
