/* test_wsd.c: CUnit suite "wsd": svc-wsd's codec: lib0 varints, awareness updates, Origin, socket paths, cookies, design-comment requests. */
#include <stdlib.h>
#include <string.h>

#include "../../wsd/proto.c"
#include "unit.h"

static void test_wsd_varuint_golden(void)
{
	/* lib0 0.2.120 bytes, shared/notes/yjs-wire-format-and-peers.md 1.1 */
	static const uint8_t b127[] = { 0x7f }, b128[] = { 0x80, 0x01 }, b300[] = { 0xac, 0x02 };
	static const uint8_t bmax[] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x0f };
	struct wsd_reader r;
	struct svc_yjs_buf b = { 0 };
	uint64_t v;

	r = (struct wsd_reader){ b127, b127 + 1 };
	CU_ASSERT(wsd_read_varuint(&r, &v) == 0 && v == 127 && r.p == r.end);
	r = (struct wsd_reader){ b128, b128 + 2 };
	CU_ASSERT(wsd_read_varuint(&r, &v) == 0 && v == 128);
	r = (struct wsd_reader){ b300, b300 + 2 };
	CU_ASSERT(wsd_read_varuint(&r, &v) == 0 && v == 300);
	r = (struct wsd_reader){ bmax, bmax + 8 };
	CU_ASSERT(wsd_read_varuint(&r, &v) == 0 && v == 9007199254740991ULL);
	wsd_write_varuint(&b, 9007199254740991ULL);
	CU_ASSERT(b.len == sizeof bmax && memcmp(b.data, bmax, sizeof bmax) == 0);
	b.len = 0;
	wsd_write_varuint(&b, 300);
	CU_ASSERT(b.len == 2 && memcmp(b.data, b300, 2) == 0);
	svc_yjs_buf_dispose(&b);
}

static void test_wsd_varuint_refuses_overflow_and_truncation(void)
{
	static const uint8_t over[] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x10 };
	static const uint8_t longer[] = { 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01 };
	static const uint8_t cut[] = { 0x80, 0x80 };
	struct wsd_reader r;
	uint64_t v;

	r = (struct wsd_reader){ over, over + sizeof over };
	CU_ASSERT_EQUAL(wsd_read_varuint(&r, &v), SVC_E_VALIDATION);
	r = (struct wsd_reader){ longer, longer + sizeof longer };
	CU_ASSERT_EQUAL(wsd_read_varuint(&r, &v), SVC_E_VALIDATION);
	r = (struct wsd_reader){ cut, cut + sizeof cut };
	CU_ASSERT_EQUAL(wsd_read_varuint(&r, &v), SVC_E_VALIDATION);
	r = (struct wsd_reader){ cut, cut };
	CU_ASSERT_EQUAL(wsd_read_varuint(&r, &v), SVC_E_VALIDATION);
}

static void test_wsd_varbytes_bounded_by_input(void)
{
	static const uint8_t ok[] = { 0x03, 'a', 'b', 'c', 0x09 };
	static const uint8_t liar[] = { 0xff, 0xff, 0x03, 'a' };
	struct wsd_reader r = { ok, ok + sizeof ok };
	const uint8_t *p;
	size_t n;

	CU_ASSERT(wsd_read_varbytes(&r, &p, &n) == 0 && n == 3 && memcmp(p, "abc", 3) == 0 && *r.p == 0x09);
	r = (struct wsd_reader){ liar, liar + sizeof liar };
	CU_ASSERT_EQUAL(wsd_read_varbytes(&r, &p, &n), SVC_E_VALIDATION);
}

static void test_wsd_awareness_parse_reference_bytes(void)
{
	/* y-protocols 1.0.7 relay of client 100, clock 1, {"user":{"name":"a"}} (payload of `01 19 ...`) */
	static const char json[] = "{\"user\":{\"name\":\"a\"}}";
	uint8_t msg[64];
	struct wsd_aw_entry e[4];
	size_t n = 0;

	msg[n++] = 0x01;
	msg[n++] = 0x64;
	msg[n++] = 0x01;
	msg[n++] = (uint8_t)strlen(json);
	memcpy(msg + n, json, strlen(json));
	n += strlen(json);
	CU_ASSERT_EQUAL_FATAL(wsd_awareness_parse(msg, n, e, 4), 1);
	CU_ASSERT(e[0].client == 100 && e[0].clock == 1 && e[0].json_len == strlen(json));
	CU_ASSERT(memcmp(e[0].json, json, strlen(json)) == 0 && !wsd_aw_is_null(&e[0]));
	/* removal on disconnect: client 200, clock 1, "null" */
	{
		static const uint8_t rm[] = { 0x01, 0xc8, 0x01, 0x01, 0x04, 'n', 'u', 'l', 'l' };
		CU_ASSERT_EQUAL_FATAL(wsd_awareness_parse(rm, sizeof rm, e, 4), 1);
		CU_ASSERT(e[0].client == 200 && wsd_aw_is_null(&e[0]));
	}
}

static void test_wsd_awareness_parse_refuses_bad_input(void)
{
	static const uint8_t huge_count[] = { 0xff, 0xff, 0x03, 0x01, 0x01, 0x02, '{', '}' };
	static const uint8_t bad_json[] = { 0x01, 0x01, 0x01, 0x02, '{', '[' };
	static const uint8_t trailing[] = { 0x01, 0x01, 0x01, 0x02, '{', '}', 0x00 };
	static const uint8_t two[] = { 0x02, 0x01, 0x01, 0x02, '{', '}', 0x02, 0x01, 0x02, '{', '}' };
	struct wsd_aw_entry e[1];

	CU_ASSERT_EQUAL(wsd_awareness_parse(huge_count, sizeof huge_count, e, 1), SVC_E_VALIDATION);
	CU_ASSERT_EQUAL(wsd_awareness_parse(bad_json, sizeof bad_json, e, 1), SVC_E_VALIDATION);
	CU_ASSERT_EQUAL(wsd_awareness_parse(trailing, sizeof trailing, e, 1), SVC_E_VALIDATION);
	/* more entries than the caller has room for */
	CU_ASSERT_EQUAL(wsd_awareness_parse(two, sizeof two, e, 1), SVC_E_VALIDATION);
}

static void test_wsd_origin_checks(void)
{
	const char *app = "http://127.0.0.1:8080", *cors = "https://editor.example.com, http://localhost:3000";

	CU_ASSERT_TRUE(wsd_origin_allowed(NULL, app, cors));
	CU_ASSERT_TRUE(wsd_origin_allowed("http://127.0.0.1:8080", app, cors));
	CU_ASSERT_TRUE(wsd_origin_allowed("HTTP://127.0.0.1:8080", app, cors));
	CU_ASSERT_TRUE(wsd_origin_allowed("https://editor.example.com", app, cors));
	CU_ASSERT_TRUE(wsd_origin_allowed("https://editor.example.com:443", app, cors));
	CU_ASSERT_TRUE(wsd_origin_allowed("http://localhost:3000", app, cors));
	CU_ASSERT_FALSE(wsd_origin_allowed("http://127.0.0.1:8081", app, cors));
	CU_ASSERT_FALSE(wsd_origin_allowed("https://evil.example", app, cors));
	CU_ASSERT_FALSE(wsd_origin_allowed("https://editor.example.com.evil.example", app, cors));
	CU_ASSERT_FALSE(wsd_origin_allowed("null", app, cors));
	CU_ASSERT_FALSE(wsd_origin_allowed("", app, cors));
	CU_ASSERT_FALSE(wsd_origin_allowed("http://127.0.0.1:8080/x", app, cors));
	CU_ASSERT_TRUE(wsd_origin_allowed("http://app.example", "http://app.example:80/", ""));
}

static void test_wsd_path_project(void)
{
	char id[37];

	CU_ASSERT(wsd_path_project("/project/5B1E7D1C-2F6A-4C1E-9A0B-3C2D1E0F9A8B", id) == 0);
	CU_ASSERT_STRING_EQUAL(id, "5b1e7d1c-2f6a-4c1e-9a0b-3c2d1e0f9a8b");
	CU_ASSERT(wsd_path_project("/ws/project/5b1e7d1c-2f6a-4c1e-9a0b-3c2d1e0f9a8b?token=x", id) == 0);
	CU_ASSERT_EQUAL(wsd_path_project("/project/5b1e7d1c-2f6a-4c1e-9a0b-3c2d1e0f9a8b/x", id), SVC_E_NOT_FOUND);
	CU_ASSERT_EQUAL(wsd_path_project("/project/not-a-uuid", id), SVC_E_NOT_FOUND);
	CU_ASSERT_EQUAL(wsd_path_project("/other/5b1e7d1c-2f6a-4c1e-9a0b-3c2d1e0f9a8b", id), SVC_E_NOT_FOUND);
	CU_ASSERT_EQUAL(wsd_path_project("/ws/ws/project/5b1e7d1c-2f6a-4c1e-9a0b-3c2d1e0f9a8b", id), SVC_E_NOT_FOUND);
}

static void test_wsd_cookie_get(void)
{
	char v[16];

	CU_ASSERT(wsd_cookie_get("a=1; svc_access_token=tok; b=2", "svc_access_token", v, sizeof v) == 1);
	CU_ASSERT_STRING_EQUAL(v, "tok");
	CU_ASSERT(wsd_cookie_get("svc_access_token=\"q\"", "svc_access_token", v, sizeof v) == 1);
	CU_ASSERT_STRING_EQUAL(v, "q");
	CU_ASSERT(wsd_cookie_get("xsvc_access_token=no", "svc_access_token", v, sizeof v) == 0);
	CU_ASSERT(wsd_cookie_get("svc_access_token=0123456789abcdefXYZ", "svc_access_token", v, sizeof v) == 0);
	CU_ASSERT(wsd_cookie_get("", "svc_access_token", v, sizeof v) == 0);
}

static int parse(const char *json, struct wsd_comment_req *r)
{
	char msg[200];

	return wsd_comment_parse(json, strlen(json), r, msg, sizeof msg);
}

static void test_wsd_comment_parse_add(void)
{
	struct wsd_comment_req r;

	CU_ASSERT_EQUAL_FATAL(parse("{\"type\":\"design-comment:add\",\"content\":\"Move this up\",\"xPercent\":12.5,"
				    "\"yPercent\":100,\"selector\":\"#hero\",\"pagePath\":\"/\","
				    "\"parentId\":\"5B1E7D1C-2F6A-4C1E-9A0B-3C2D1E0F9A8B\"}", &r), 0);
	CU_ASSERT(r.op == WSD_C_ADD && strcmp(r.content, "Move this up") == 0 && r.x == 12.5 && r.y == 100);
	CU_ASSERT_STRING_EQUAL(r.selector, "#hero");
	CU_ASSERT_STRING_EQUAL(r.parent_id, "5b1e7d1c-2f6a-4c1e-9a0b-3c2d1e0f9a8b");
	wsd_comment_req_dispose(&r);
	CU_ASSERT_EQUAL_FATAL(parse("{\"type\":\"design-comment:add\",\"content\":\"x\",\"xPercent\":0,\"yPercent\":0,"
				    "\"selector\":null}", &r), 0);
	CU_ASSERT(r.selector == NULL && r.page_path == NULL && r.parent_id[0] == '\0');
	wsd_comment_req_dispose(&r);
}

static void test_wsd_comment_parse_refuses(void)
{
	struct wsd_comment_req r;
	char *big = malloc(10020 * 3 + 200);
	size_t i, n;

	CU_ASSERT_EQUAL(parse("{\"type\":\"design-comment:add\",\"content\":\"  \",\"xPercent\":1,\"yPercent\":1}", &r),
			SVC_E_VALIDATION);
	CU_ASSERT_EQUAL(parse("{\"type\":\"design-comment:add\",\"xPercent\":1,\"yPercent\":1}", &r), SVC_E_VALIDATION);
	CU_ASSERT_EQUAL(parse("{\"type\":\"design-comment:add\",\"content\":\"a\",\"xPercent\":101,\"yPercent\":1}", &r),
			SVC_E_VALIDATION);
	CU_ASSERT_EQUAL(parse("{\"type\":\"design-comment:add\",\"content\":\"a\",\"xPercent\":-0.1,\"yPercent\":1}", &r),
			SVC_E_VALIDATION);
	CU_ASSERT_EQUAL(parse("{\"type\":\"design-comment:add\",\"content\":\"a\",\"xPercent\":\"5\",\"yPercent\":1}", &r),
			SVC_E_VALIDATION);
	CU_ASSERT_EQUAL(parse("{\"type\":\"design-comment:add\",\"content\":\"a\",\"xPercent\":5,\"yPercent\":1,"
			      "\"parentId\":\"nope\"}", &r), SVC_E_VALIDATION);
	CU_ASSERT_EQUAL(parse("{\"type\":\"design-comment:resolve\"}", &r), SVC_E_VALIDATION);
	CU_ASSERT_EQUAL(parse("{\"type\":\"design-comment:explode\",\"commentId\":\"5b1e7d1c-2f6a-4c1e-9a0b-3c2d1e0f9a8b\"}",
			      &r), SVC_E_VALIDATION);
	CU_ASSERT_EQUAL(parse("[1,2]", &r), SVC_E_VALIDATION);
	CU_ASSERT_EQUAL(parse("not json", &r), SVC_E_VALIDATION);
	/* 10000 code points pass (30000 bytes of U+20AC), 10001 do not */
	CU_ASSERT_FATAL(big != NULL);
	n = (size_t)snprintf(big, 200, "{\"type\":\"design-comment:add\",\"xPercent\":1,\"yPercent\":1,\"content\":\"");
	for (i = 0; i < 10000; i++) {
		memcpy(big + n, "\xe2\x82\xac", 3);
		n += 3;
	}
	memcpy(big + n, "\"}", 3);
	CU_ASSERT_EQUAL(wsd_comment_parse(big, n + 2, &r, (char[100]){0}, 100) == 0 ? (wsd_comment_req_dispose(&r), 0) : -1, 0);
	memcpy(big + n, "a\"}", 4);
	{
		char msg[100];
		CU_ASSERT_EQUAL(wsd_comment_parse(big, n + 3, &r, msg, sizeof msg), SVC_E_VALIDATION);
	}
	free(big);
}

static void test_wsd_comment_parse_moves(void)
{
	struct wsd_comment_req r;

	CU_ASSERT_EQUAL_FATAL(parse("{\"type\":\"design-comment:unresolve\",\"commentId\":\"5b1e7d1c-2f6a-4c1e-9a0b-3c2d1e0f9a8b\"}",
				    &r), 0);
	CU_ASSERT(r.op == WSD_C_UNRESOLVE && strcmp(r.comment_id, "5b1e7d1c-2f6a-4c1e-9a0b-3c2d1e0f9a8b") == 0);
	wsd_comment_req_dispose(&r);
	CU_ASSERT_EQUAL_FATAL(parse("{\"type\":\"design-comment:delete\",\"commentId\":\"5b1e7d1c-2f6a-4c1e-9a0b-3c2d1e0f9a8b\"}",
				    &r), 0);
	CU_ASSERT(r.op == WSD_C_DELETE);
	wsd_comment_req_dispose(&r);
}

static void test_wsd_text_and_hash(void)
{
	char h[65];

	CU_ASSERT_TRUE(wsd_is_text("h\xc3\xa9", 3));
	CU_ASSERT_FALSE(wsd_is_text("a\0b", 3));
	CU_ASSERT_FALSE(wsd_is_text("\xff", 1));
	wsd_sha256_hex("abc", 3, h);
	CU_ASSERT_STRING_EQUAL(h, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

SVC_TEST_SUITE(wsd)
{
	CU_pSuite s = CU_add_suite("wsd", NULL, NULL);

	CU_add_test(s, "test_wsd_varuint_golden", test_wsd_varuint_golden);
	CU_add_test(s, "test_wsd_varuint_refuses_overflow_and_truncation", test_wsd_varuint_refuses_overflow_and_truncation);
	CU_add_test(s, "test_wsd_varbytes_bounded_by_input", test_wsd_varbytes_bounded_by_input);
	CU_add_test(s, "test_wsd_awareness_parse_reference_bytes", test_wsd_awareness_parse_reference_bytes);
	CU_add_test(s, "test_wsd_awareness_parse_refuses_bad_input", test_wsd_awareness_parse_refuses_bad_input);
	CU_add_test(s, "test_wsd_origin_checks", test_wsd_origin_checks);
	CU_add_test(s, "test_wsd_path_project", test_wsd_path_project);
	CU_add_test(s, "test_wsd_cookie_get", test_wsd_cookie_get);
	CU_add_test(s, "test_wsd_comment_parse_add", test_wsd_comment_parse_add);
	CU_add_test(s, "test_wsd_comment_parse_refuses", test_wsd_comment_parse_refuses);
	CU_add_test(s, "test_wsd_comment_parse_moves", test_wsd_comment_parse_moves);
	CU_add_test(s, "test_wsd_text_and_hash", test_wsd_text_and_hash);
}
