/* test_wsd.c: CUnit suite "wsd": svc-wsd's codec (lib0 varints, awareness updates, Origin, socket paths, cookies, design-comment requests), its three-way merge and the checks of file content (text, SHA-256). */
#include <stdlib.h>
#include <string.h>

#include "../../wsd/merge.c"
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

/* issue 25 item 7: a state that names a user id must name the socket's own, read as JSON.parse reads it */
static int user_ok(const char *json)
{
	return wsd_aw_state_user_ok((const uint8_t *)json, strlen(json), "5b1e7d1c-2f6a-4c1e-9a0b-3c2d1e0f9a8b");
}

static void test_wsd_awareness_state_user_is_the_sockets(void)
{
	CU_ASSERT_TRUE(user_ok("{\"user\":{\"id\":\"5b1e7d1c-2f6a-4c1e-9a0b-3c2d1e0f9a8b\",\"name\":\"Ann\"},\"cursor\":null}"));
	/* no user id named: nothing to bind (a stock y-websocket client's {} and {user: {name}}) */
	CU_ASSERT_TRUE(user_ok("{}"));
	CU_ASSERT_TRUE(user_ok("{\"user\":{\"name\":\"Ann\"}}"));
	CU_ASSERT_TRUE(user_ok("{\"user\":\"Ann\"}"));
	CU_ASSERT_TRUE(user_ok("[1,2]"));
	/* another person's id, or one that is not the string */
	CU_ASSERT_FALSE(user_ok("{\"user\":{\"id\":\"0b1e7d1c-2f6a-4c1e-9a0b-3c2d1e0f9a8b\",\"name\":\"Ann\"}}"));
	CU_ASSERT_FALSE(user_ok("{\"user\":{\"id\":\"5B1E7D1C-2F6A-4C1E-9A0B-3C2D1E0F9A8B\"}}"));
	CU_ASSERT_FALSE(user_ok("{\"user\":{\"id\":\"5b1e7d1c-2f6a-4c1e-9a0b-3c2d1e0f9a8b \"}}"));
	CU_ASSERT_FALSE(user_ok("{\"user\":{\"id\":\"5b1e7d1c-2f6a-4c1e-9a0b-3c2d1e0f9a8\"}}"));
	CU_ASSERT_FALSE(user_ok("{\"user\":{\"id\":null}}"));
	CU_ASSERT_FALSE(user_ok("{\"user\":{\"id\":42}}"));
	CU_ASSERT_FALSE(user_ok("{\"user\":{\"id\":[\"5b1e7d1c-2f6a-4c1e-9a0b-3c2d1e0f9a8b\"]}}"));
	/* escapes are decoded, and the last of a repeated key counts, as in JSON.parse */
	CU_ASSERT_FALSE(user_ok("{\"us\\u0065r\":{\"\\u0069d\":\"other\"}}"));
	CU_ASSERT_TRUE(user_ok("{\"user\":{\"\\u0069d\":\"5b1e7d1c-2f6a-4c1e-9a0b-3c2d1e0f9a8\\u0062\"}}"));
	CU_ASSERT_FALSE(user_ok("{\"user\":{\"id\":\"5b1e7d1c-2f6a-4c1e-9a0b-3c2d1e0f9a8b\",\"id\":\"other\"}}"));
	CU_ASSERT_TRUE(user_ok("{\"user\":{\"id\":\"other\",\"id\":\"5b1e7d1c-2f6a-4c1e-9a0b-3c2d1e0f9a8b\"}}"));
	CU_ASSERT_FALSE(user_ok("{\"user\":{\"id\":\"5b1e7d1c-2f6a-4c1e-9a0b-3c2d1e0f9a8b\"},\"user\":{\"id\":\"other\"}}"));
	/* an id with a NUL inside is not the same string */
	CU_ASSERT_FALSE(user_ok("{\"user\":{\"id\":\"5b1e7d1c-2f6a-4c1e-9a0b-3c2d1e0f9a8b\\u0000x\"}}"));
	/* what does not parse is refused */
	CU_ASSERT_FALSE(user_ok("{\"user\":"));
	CU_ASSERT_FALSE(user_ok("{\"user\":{}} x"));
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

	/* the upgrade reads the access token with lib/core's svc_cookie_get (edge cases: test_core.c) */
	CU_ASSERT(svc_cookie_get("a=1; svc_access_token=tok; b=2", "svc_access_token", v, sizeof v) == 1);
	CU_ASSERT_STRING_EQUAL(v, "tok");
	CU_ASSERT(svc_cookie_get("svc_access_token=\"q\"", "svc_access_token", v, sizeof v) == 1);
	CU_ASSERT_STRING_EQUAL(v, "q");
	CU_ASSERT(svc_cookie_get("xsvc_access_token=no", "svc_access_token", v, sizeof v) == 0);
	CU_ASSERT(svc_cookie_get("svc_access_token=0123456789abcdefXYZ", "svc_access_token", v, sizeof v) == 0);
	CU_ASSERT(svc_cookie_get("", "svc_access_token", v, sizeof v) == 0);
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

	/* what svc-wsd takes for text and how it hashes files: lib/core's helpers */
	CU_ASSERT_TRUE(svc_utf8_valid("h\xc3\xa9", 3));
	CU_ASSERT_FALSE(svc_utf8_valid("a\0b", 3));
	CU_ASSERT_FALSE(svc_utf8_valid("\xff", 1));
	CU_ASSERT_EQUAL(svc_sha256_hex("abc", 3, h), 0);
	CU_ASSERT_STRING_EQUAL(h, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

/* Applies merge edits to `live` as plain bytes: the merged text, NUL-terminated (free it). */
static char *merged_bytes(const char *live, const struct wsd_merge_edit *e, size_t n)
{
	size_t i, at = 0, len = 0, cap = strlen(live) + 1;
	char *out;

	for (i = 0; i < n; i++)
		cap += e[i].ins_len;
	out = malloc(cap);
	for (i = 0; i < n; i++) {
		CU_ASSERT(e[i].pos >= at);
		memcpy(out + len, live + at, e[i].pos - at);
		len += e[i].pos - at;
		memcpy(out + len, e[i].ins, e[i].ins_len);
		len += e[i].ins_len;
		at = e[i].pos + e[i].del;
	}
	memcpy(out + len, live + at, strlen(live) - at);
	len += strlen(live) - at;
	out[len] = '\0';
	return out;
}

static char *merge_str(const char *base, const char *live, const char *disk, size_t *conflicts)
{
	struct wsd_merge_edit *e = NULL;
	size_t n = 0;
	char *m;

	CU_ASSERT_FATAL(wsd_merge3(base, strlen(base), live, strlen(live), disk, strlen(disk), &e, &n, conflicts) == 0);
	m = merged_bytes(live, e, n);
	free(e);
	return m;
}

static void test_wsd_merge_keeps_both_sides(void)
{
	const char *base = "<h1>Title</h1>\n<p>one</p>\n<p>two</p>\n<p>three</p>\n";
	/* live typed into the first line, disk changed the last one */
	const char *live = "<h1>Title typed</h1>\n<p>one</p>\n<p>two</p>\n<p>three</p>\n";
	const char *disk = "<h1>Title</h1>\n<p>one</p>\n<p>two</p>\n<p>THREE by the agent</p>\n";
	size_t c = 9;
	char *m = merge_str(base, live, disk, &c);

	CU_ASSERT_STRING_EQUAL(m, "<h1>Title typed</h1>\n<p>one</p>\n<p>two</p>\n<p>THREE by the agent</p>\n");
	CU_ASSERT(c == 0);
	free(m);
	/* the same line, apart: characters, not lines, decide */
	m = merge_str("alpha beta gamma delta\n", "XX alpha beta gamma delta\n", "alpha beta gamma DELTA\n", &c);
	CU_ASSERT_STRING_EQUAL(m, "XX alpha beta gamma DELTA\n");
	CU_ASSERT(c == 0);
	free(m);
	/* lines added and removed on both sides */
	m = merge_str("a\nb\nc\nd\ne\nf\n", "a\nb2\nc\nd\ne\nf\nlive\n", "disk\na\nb\nc\ne\nf\n", &c);
	CU_ASSERT_STRING_EQUAL(m, "disk\na\nb2\nc\ne\nf\nlive\n");
	CU_ASSERT(c == 0);
	free(m);
}

static void test_wsd_merge_conflict_disk_wins_region(void)
{
	size_t c = 0;
	char *m = merge_str("one two three\nfour\n", "one TWO three\nfour\n", "one 2 three\nfour!\n", &c);

	/* both changed "two": disk's version of that region; disk's other change comes along */
	CU_ASSERT_STRING_EQUAL(m, "one 2 three\nfour!\n");
	CU_ASSERT(c == 1);
	free(m);
	/* two insertions at one place conflict too */
	m = merge_str("ab", "aXb", "aYb", &c);
	CU_ASSERT_STRING_EQUAL(m, "aYb");
	CU_ASSERT(c == 1);
	free(m);
	/* nothing changed on disk: no edits at all */
	{
		struct wsd_merge_edit *e = NULL;
		size_t n = 5;
		CU_ASSERT(wsd_merge3("x\ny\n", 4, "x\nlive\ny\n", 9, "x\ny\n", 4, &e, &n, NULL) == 0);
		CU_ASSERT(n == 0);
		free(e);
	}
	/* live unchanged: the disk text exactly */
	m = merge_str("k\nl\nm\n", "k\nl\nm\n", "k\nL!\n", &c);
	CU_ASSERT_STRING_EQUAL(m, "k\nL!\n");
	free(m);
	/* empty base (a new file on both sides) */
	m = merge_str("", "live", "disk", &c);
	CU_ASSERT_STRING_EQUAL(m, "disk");
	free(m);
}

static void test_wsd_merge_utf8_boundaries(void)
{
	size_t c = 0;
	/* "é" is c3 a9, "è" c3 a8: they share a first byte; the cut must not split it */
	char *m = merge_str("caf\xc3\xa9 ok\n", "caf\xc3\xa9 ok typed\n", "caf\xc3\xa8 ok\n", &c);

	CU_ASSERT_STRING_EQUAL(m, "caf\xc3\xa8 ok typed\n");
	CU_ASSERT(svc_utf8_valid(m, strlen(m)));
	free(m);
}

/* Random edits of disjoint regions by both sides: both survive, whatever the text. */
static void test_wsd_merge_random_disjoint(void)
{
	unsigned seed = 12345;
	int round;

	for (round = 0; round < 300; round++) {
		char base[400], live[500], disk[500], want[600];
		size_t bn = 50 + (size_t)(round % 300), i, cut, lpos, dpos, ll, dl;
		char *m;
		for (i = 0; i < bn; i++) {
			seed = seed * 1103515245u + 12345u;
			base[i] = (seed >> 16) % 5 == 0 ? '\n' : (char)('a' + (seed >> 16) % 3);
		}
		base[bn] = '\0';
		seed = seed * 1103515245u + 12345u;
		cut = 10 + (seed >> 16) % (bn - 20);
		lpos = (seed >> 8) % (cut - 2);             /* live inserts before the cut */
		dpos = cut + 2 + (seed >> 4) % (bn - cut - 3); /* disk deletes one byte after it */
		ll = (size_t)snprintf(live, sizeof live, "%.*sLIVE%s", (int)lpos, base, base + lpos);
		dl = (size_t)snprintf(disk, sizeof disk, "%.*s%s", (int)dpos, base, base + dpos + 1);
		snprintf(want, sizeof want, "%.*sLIVE%.*s%s", (int)lpos, base, (int)(dpos - lpos), base + lpos,
			 base + dpos + 1);
		(void)ll;
		(void)dl;
		m = merge_str(base, live, disk, NULL);
		CU_ASSERT_STRING_EQUAL(m, want);
		free(m);
	}
}

static void test_wsd_merge_apply_to_ytext(void)
{
	struct svc_yjs_doc *doc = NULL, *peer = NULL;
	struct svc_yjs_buf up = { 0 }, text = { 0 };
	const char *base = "<p>\xf0\x9f\x98\x80 smile</p>\n<p>end</p>\n";
	const char *live = "<p>\xf0\x9f\x98\x80 smile typed</p>\n<p>end</p>\n";
	const char *disk = "<p>\xf0\x9f\x98\x80 smile</p>\n<p>END</p>\n";
	struct wsd_merge_edit *e = NULL;
	size_t n = 0;

	CU_ASSERT_FATAL(svc_yjs_doc_new(&doc, 1) == 0 && svc_yjs_doc_new(&peer, 2) == 0);
	CU_ASSERT(svc_yjs_map_set_text(doc, "files", "a.html", 6, live, strlen(live), &up, NULL) == 0);
	CU_ASSERT(svc_yjs_apply_update(peer, up.data, up.len, NULL, NULL, NULL) == 0);
	up.len = 0;
	CU_ASSERT(wsd_merge3(base, strlen(base), live, strlen(live), disk, strlen(disk), &e, &n, NULL) == 0);
	CU_ASSERT(wsd_merge_apply(doc, "files", "a.html", 6, live, e, n, &up) == 0);
	CU_ASSERT(up.len > 0);
	CU_ASSERT(svc_yjs_text_read(doc, "files", "a.html", 6, &text) == 0);
	CU_ASSERT(text.len == strlen("<p>\xf0\x9f\x98\x80 smile typed</p>\n<p>END</p>\n") &&
		  memcmp(text.data, "<p>\xf0\x9f\x98\x80 smile typed</p>\n<p>END</p>\n", text.len) == 0);
	/* the update carries the same edit to a peer */
	CU_ASSERT(svc_yjs_apply_update(peer, up.data, up.len, NULL, NULL, NULL) == 0);
	text.len = 0;
	CU_ASSERT(svc_yjs_text_read(peer, "files", "a.html", 6, &text) == 0);
	CU_ASSERT(text.len == strlen("<p>\xf0\x9f\x98\x80 smile typed</p>\n<p>END</p>\n"));
	/* a missing key is the core's error */
	CU_ASSERT(wsd_merge_apply(doc, "files", "nope", 4, live, e, n, NULL) < 0);
	free(e);
	svc_yjs_buf_dispose(&up);
	svc_yjs_buf_dispose(&text);
	svc_yjs_doc_free(doc);
	svc_yjs_doc_free(peer);
}

SVC_TEST_SUITE(wsd)
{
	CU_pSuite s = CU_add_suite("wsd", NULL, NULL);

	CU_add_test(s, "test_wsd_varuint_golden", test_wsd_varuint_golden);
	CU_add_test(s, "test_wsd_varuint_refuses_overflow_and_truncation", test_wsd_varuint_refuses_overflow_and_truncation);
	CU_add_test(s, "test_wsd_varbytes_bounded_by_input", test_wsd_varbytes_bounded_by_input);
	CU_add_test(s, "test_wsd_awareness_parse_reference_bytes", test_wsd_awareness_parse_reference_bytes);
	CU_add_test(s, "test_wsd_awareness_parse_refuses_bad_input", test_wsd_awareness_parse_refuses_bad_input);
	CU_add_test(s, "test_wsd_awareness_state_user_is_the_sockets", test_wsd_awareness_state_user_is_the_sockets);
	CU_add_test(s, "test_wsd_origin_checks", test_wsd_origin_checks);
	CU_add_test(s, "test_wsd_path_project", test_wsd_path_project);
	CU_add_test(s, "test_wsd_cookie_get", test_wsd_cookie_get);
	CU_add_test(s, "test_wsd_comment_parse_add", test_wsd_comment_parse_add);
	CU_add_test(s, "test_wsd_comment_parse_refuses", test_wsd_comment_parse_refuses);
	CU_add_test(s, "test_wsd_comment_parse_moves", test_wsd_comment_parse_moves);
	CU_add_test(s, "test_wsd_text_and_hash", test_wsd_text_and_hash);
	CU_add_test(s, "test_wsd_merge_keeps_both_sides", test_wsd_merge_keeps_both_sides);
	CU_add_test(s, "test_wsd_merge_conflict_disk_wins_region", test_wsd_merge_conflict_disk_wins_region);
	CU_add_test(s, "test_wsd_merge_utf8_boundaries", test_wsd_merge_utf8_boundaries);
	CU_add_test(s, "test_wsd_merge_random_disjoint", test_wsd_merge_random_disjoint);
	CU_add_test(s, "test_wsd_merge_apply_to_ytext", test_wsd_merge_apply_to_ytext);
}
