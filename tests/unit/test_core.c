/* test_core.c: the core helpers of libsvc: util, config, json validation and the error table. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <CUnit/CUnit.h>

#include "core/config.h"
#include "core/err.h"
#include "core/json.h"
#include "core/psl.h"
#include "unit.h"
#include "core/util.h"

static void test_util_buf_bounded(void)
{
	struct svc_buf b;

	svc_buf_init(&b, 8);
	CU_ASSERT_EQUAL(svc_buf_adds(&b, "abcd"), 0);
	CU_ASSERT_EQUAL(svc_buf_addf(&b, "%d", 1234), 0);
	CU_ASSERT_STRING_EQUAL(b.data, "abcd1234");
	CU_ASSERT_EQUAL(svc_buf_adds(&b, "x"), SVC_E_TOO_LARGE);
	CU_ASSERT_EQUAL(b.len, 8);
	CU_ASSERT_STRING_EQUAL(b.data, "abcd1234");
	svc_buf_reset(&b);
	CU_ASSERT_EQUAL(b.len, 0);
	CU_ASSERT_STRING_EQUAL(svc_buf_str(&b), "");
	svc_buf_dispose(&b);
	CU_ASSERT_PTR_NULL(b.data);
	CU_ASSERT_STRING_EQUAL(svc_buf_str(&b), ""); /* never NULL, even before anything was added */
	/* a wiped buffer is empty, keeps its maximum, and an empty one wipes too */
	CU_ASSERT_EQUAL(svc_buf_adds(&b, "secret"), 0);
	svc_buf_wipe(&b);
	CU_ASSERT_PTR_NULL(b.data);
	CU_ASSERT_EQUAL(b.len, 0);
	CU_ASSERT_EQUAL(b.max, 8);
	svc_buf_wipe(&b);
	CU_ASSERT_EQUAL(svc_buf_adds(&b, "abcd1234"), 0);
	CU_ASSERT_EQUAL(svc_buf_adds(&b, "x"), SVC_E_TOO_LARGE);
	CU_ASSERT_EQUAL(b.max, 8);
	svc_buf_dispose(&b);
}

static void test_util_array_grow(void)
{
	uint32_t *a = NULL;
	size_t cap = 0, i;
	char *big = NULL;
	size_t bigcap = 0;

	CU_ASSERT_EQUAL(SVC_ARRAY_GROW(a, cap, 0), 0); /* nothing needed, nothing allocated */
	CU_ASSERT_PTR_NULL(a);
	CU_ASSERT_EQUAL(cap, 0);
	for (i = 0; i < 1000; i++) {
		CU_ASSERT_EQUAL_FATAL(SVC_ARRAY_GROW(a, cap, i + 1), 0);
		CU_ASSERT_FATAL(cap >= i + 1);
		a[i] = (uint32_t)i * 7;
	}
	CU_ASSERT_EQUAL(cap, 1024); /* 16 doubled six times */
	for (i = 0; i < 1000; i++)
		CU_ASSERT_EQUAL(a[i], (uint32_t)i * 7);
	CU_ASSERT_EQUAL(SVC_ARRAY_GROW(a, cap, 5000), 0); /* more than twice: exactly what is needed */
	CU_ASSERT_EQUAL(cap, 5000);
	CU_ASSERT_EQUAL(a[999], 999 * 7);
	/* sizes past SIZE_MAX (or PTRDIFF_MAX) fail and leave the array as it was */
	CU_ASSERT_EQUAL(SVC_ARRAY_GROW(a, cap, SIZE_MAX / 2), SVC_E_INTERNAL);
	CU_ASSERT_EQUAL(cap, 5000);
	CU_ASSERT_EQUAL(a[999], 999 * 7);
	free(a);
	CU_ASSERT_EQUAL(SVC_ARRAY_GROW(big, bigcap, 3), 0);
	CU_ASSERT_EQUAL(bigcap, 16);
	CU_ASSERT_EQUAL(SVC_ARRAY_GROW(big, bigcap, SIZE_MAX), SVC_E_INTERNAL); /* no object is that large */
	CU_ASSERT_EQUAL(bigcap, 16);
	free(big);
}

static void test_util_hex(void)
{
	static const unsigned char raw[] = { 0x00, 0x01, 0x7f, 0x80, 0xab, 0xff };
	unsigned char back[6];
	char out[13];

	svc_hex_encode(raw, sizeof raw, out);
	CU_ASSERT_STRING_EQUAL(out, "00017f80abff");
	svc_hex_encode(raw, 0, out);
	CU_ASSERT_STRING_EQUAL(out, "");
	CU_ASSERT_EQUAL(svc_hex_decode("00017F80abFF", 12, back), 0);
	CU_ASSERT_EQUAL(memcmp(back, raw, sizeof raw), 0);
	CU_ASSERT_EQUAL(svc_hex_decode("abc", 3, back), SVC_E_VALIDATION);  /* odd */
	CU_ASSERT_EQUAL(svc_hex_decode("0g", 2, back), SVC_E_VALIDATION);   /* not a digit */
	CU_ASSERT_EQUAL(svc_hex_decode("", 0, back), 0);
	CU_ASSERT_EQUAL(svc_hex_digit('0'), 0);
	CU_ASSERT_EQUAL(svc_hex_digit('9'), 9);
	CU_ASSERT_EQUAL(svc_hex_digit('a'), 10);
	CU_ASSERT_EQUAL(svc_hex_digit('F'), 15);
	CU_ASSERT_EQUAL(svc_hex_digit('g'), -1);
	CU_ASSERT_EQUAL(svc_hex_digit('/'), -1);
	CU_ASSERT_EQUAL(svc_hex_digit(0), -1);
}

static void test_util_sha256_hex(void)
{
	char out[SVC_SHA256_HEX_LEN + 1];

	/* FIPS 180-2 appendix B.1 and the empty string */
	CU_ASSERT_EQUAL(svc_sha256_hex("abc", 3, out), 0);
	CU_ASSERT_STRING_EQUAL(out, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	CU_ASSERT_EQUAL(svc_sha256_hex("", 0, out), 0);
	CU_ASSERT_STRING_EQUAL(out, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	CU_ASSERT_EQUAL(svc_sha256_hex(NULL, 0, out), 0);
	CU_ASSERT_STRING_EQUAL(out, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	/* FIPS 180-2 appendix B.2, the two-block message */
	CU_ASSERT_EQUAL(svc_sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", 56, out), 0);
	CU_ASSERT_STRING_EQUAL(out, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
	/* bytes, not a C string: the NUL counts */
	CU_ASSERT_EQUAL(svc_sha256_hex("a\0b", 3, out), 0);
	CU_ASSERT_EQUAL(strlen(out), SVC_SHA256_HEX_LEN);
	CU_ASSERT_STRING_NOT_EQUAL(out, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

static void test_util_uuid(void)
{
	char a[37], b[37];

	CU_ASSERT_EQUAL(svc_uuid_v4(a), 0);
	CU_ASSERT_EQUAL(svc_uuid_v4(b), 0);
	CU_ASSERT_TRUE(svc_uuid_valid(a));
	CU_ASSERT_NOT_EQUAL(strcmp(a, b), 0);
	CU_ASSERT_EQUAL(a[14], '4');
	CU_ASSERT_TRUE(strchr("89ab", a[19]) != NULL);
	CU_ASSERT_TRUE(svc_uuid_valid("123E4567-E89B-42D3-A456-426614174000"));
	CU_ASSERT_FALSE(svc_uuid_valid("123e4567-e89b-42d3-a456-42661417400"));
	CU_ASSERT_FALSE(svc_uuid_valid("123e4567-e89b-42d3-a456-4266141740000"));
	CU_ASSERT_FALSE(svc_uuid_valid("123e4567xe89b-42d3-a456-426614174000"));
	CU_ASSERT_FALSE(svc_uuid_valid("g23e4567-e89b-42d3-a456-426614174000"));
	CU_ASSERT_FALSE(svc_uuid_valid(""));
	CU_ASSERT_FALSE(svc_uuid_valid(NULL));
}

static void test_util_uuid_bytes(void)
{
	static const unsigned char b[16] = { 0x12, 0x3e, 0x45, 0x67, 0xe8, 0x9b, 0x42, 0xd3,
					     0xa4, 0x56, 0x42, 0x66, 0x14, 0x17, 0x40, 0x00 };
	unsigned char back[16];
	char text[37];

	svc_uuid_format(b, text);
	CU_ASSERT_STRING_EQUAL(text, "123e4567-e89b-42d3-a456-426614174000");
	CU_ASSERT_EQUAL(svc_uuid_parse("123E4567-E89B-42D3-A456-426614174000", back), 0); /* either case */
	CU_ASSERT_EQUAL(memcmp(back, b, 16), 0);
	CU_ASSERT_EQUAL(svc_uuid_parse("123e4567-e89b-42d3-a456-42661417400", back), SVC_E_VALIDATION);
	CU_ASSERT_EQUAL(svc_uuid_parse("123e4567e89b42d3a456426614174000", back), SVC_E_VALIDATION);
	CU_ASSERT_EQUAL(svc_uuid_parse(NULL, back), SVC_E_VALIDATION);
}

static void test_util_parse_u64_strict(void)
{
	uint64_t v = 7;

	CU_ASSERT_EQUAL(svc_parse_u64("0", 10, &v), 0);
	CU_ASSERT_EQUAL(v, 0);
	CU_ASSERT_EQUAL(svc_parse_u64("100", 100, &v), 0);
	CU_ASSERT_EQUAL(v, 100);
	CU_ASSERT_EQUAL(svc_parse_u64("101", 100, &v), SVC_E_VALIDATION);
	CU_ASSERT_EQUAL(svc_parse_u64("", 100, &v), SVC_E_VALIDATION);
	CU_ASSERT_EQUAL(svc_parse_u64("-1", 100, &v), SVC_E_VALIDATION);
	CU_ASSERT_EQUAL(svc_parse_u64("+1", 100, &v), SVC_E_VALIDATION);
	CU_ASSERT_EQUAL(svc_parse_u64(" 1", 100, &v), SVC_E_VALIDATION);
	CU_ASSERT_EQUAL(svc_parse_u64("1x", 100, &v), SVC_E_VALIDATION);
	CU_ASSERT_EQUAL(svc_parse_u64("18446744073709551615", UINT64_MAX, &v), 0);
	CU_ASSERT_EQUAL(v, UINT64_MAX);
	CU_ASSERT_EQUAL(svc_parse_u64("18446744073709551616", UINT64_MAX, &v), SVC_E_VALIDATION);
	CU_ASSERT_EQUAL(v, UINT64_MAX);
}

static void test_util_utf8(void)
{
	CU_ASSERT_TRUE(svc_utf8_valid("h\xc3\xa9llo \xf0\x9f\x98\x80", 11));
	CU_ASSERT_FALSE(svc_utf8_valid("\xc0\xaf", 2));          /* overlong '/' */
	CU_ASSERT_FALSE(svc_utf8_valid("\xed\xa0\x80", 3));      /* surrogate */
	CU_ASSERT_FALSE(svc_utf8_valid("\xf4\x90\x80\x80", 4));  /* above U+10FFFF */
	CU_ASSERT_FALSE(svc_utf8_valid("\xe2\x82", 2));          /* truncated */
	CU_ASSERT_FALSE(svc_utf8_valid("a\0b", 3));              /* NUL */
	CU_ASSERT_EQUAL(svc_utf8_count("h\xc3\xa9\xf0\x9f\x98\x80", 7), 3);
	CU_ASSERT_TRUE(svc_is_blank(" \t\r\n"));
	CU_ASSERT_TRUE(svc_is_blank(""));
	CU_ASSERT_FALSE(svc_is_blank(" a "));
}

static void test_util_utf8_decode(void)
{
	static const struct {
		const char *s;
		size_t len, n;
		uint32_t cp;
	} cases[] = {
		{ "A", 1, 1, 0x41 },
		{ "", 1, 1, 0 },                      /* U+0000 is one valid byte */
		{ "\x7f", 1, 1, 0x7f },
		{ "\xc2\x80", 2, 2, 0x80 },            /* the smallest two-byte form */
		{ "\xdf\xbf", 2, 2, 0x7ff },
		{ "\xe0\xa0\x80", 3, 3, 0x800 },
		{ "\xed\x9f\xbf", 3, 3, 0xd7ff },      /* just below the surrogates */
		{ "\xee\x80\x80", 3, 3, 0xe000 },      /* just above them */
		{ "\xef\xbf\xbf", 3, 3, 0xffff },
		{ "\xf0\x90\x80\x80", 4, 4, 0x10000 },
		{ "\xf4\x8f\xbf\xbf", 4, 4, 0x10ffff },
		{ "\xc3\xa9z", 3, 2, 0xe9 },          /* only the first sequence */
		{ "\xc0\xaf", 2, 0, 0 },               /* overlong '/' */
		{ "\xc1\xbf", 2, 0, 0 },               /* overlong */
		{ "\xe0\x9f\xbf", 3, 0, 0 },          /* overlong three-byte */
		{ "\xf0\x8f\xbf\xbf", 4, 0, 0 },      /* overlong four-byte */
		{ "\xed\xa0\x80", 3, 0, 0 },          /* a surrogate */
		{ "\xf4\x90\x80\x80", 4, 0, 0 },      /* above U+10FFFF */
		{ "\xf5\x80\x80\x80", 4, 0, 0 },      /* a byte never used */
		{ "\x80", 1, 0, 0 },                    /* a lone continuation byte */
		{ "\xe2\x82", 2, 0, 0 },               /* cut short */
		{ "\xe2\x82\xac", 2, 0, 0 },           /* cut short by len, not by the bytes */
		{ "\xe2\x28\xac", 3, 0, 0 },           /* a bad continuation */
		{ "A", 0, 0, 0 },                     /* nothing to decode */
	};
	size_t i;

	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		uint32_t cp = 0xdeadbeef;
		size_t n = svc_utf8_decode(cases[i].s, cases[i].len, &cp);
		CU_ASSERT_EQUAL(n, cases[i].n);
		if (n != cases[i].n)
			fprintf(stderr, "utf8 case %zu: %zu bytes\n", i, n);
		CU_ASSERT_EQUAL(cp, cases[i].n ? cases[i].cp : 0xdeadbeef); /* untouched when invalid */
	}
	CU_ASSERT_EQUAL(svc_utf8_decode("\xe2\x82\xac", 3, NULL), 3);
	CU_ASSERT_TRUE(svc_utf8_valid("", 0));
	CU_ASSERT_TRUE(svc_utf8_valid("\xf4\x8f\xbf\xbf\xe2\x82\xac", 7));
	CU_ASSERT_FALSE(svc_utf8_valid("ab\xc3", 3));
}

static void test_util_utf8_cut(void)
{
	const char *s = "ab\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80"; /* a b é € 😀: 1 1 2 3 4 bytes */

	CU_ASSERT_EQUAL(svc_utf8_cut(s, 11, 11), 11);
	CU_ASSERT_EQUAL(svc_utf8_cut(s, 11, 100), 11);
	CU_ASSERT_EQUAL(svc_utf8_cut(s, 11, 10), 7);  /* inside the emoji */
	CU_ASSERT_EQUAL(svc_utf8_cut(s, 11, 8), 7);   /* right after its lead byte */
	CU_ASSERT_EQUAL(svc_utf8_cut(s, 11, 7), 7);   /* at its start */
	CU_ASSERT_EQUAL(svc_utf8_cut(s, 11, 6), 4);   /* inside the euro sign */
	CU_ASSERT_EQUAL(svc_utf8_cut(s, 11, 3), 2);   /* inside é */
	CU_ASSERT_EQUAL(svc_utf8_cut(s, 11, 2), 2);
	CU_ASSERT_EQUAL(svc_utf8_cut(s, 11, 0), 0);
	CU_ASSERT_EQUAL(svc_utf8_cut("\x80\x80\x80", 3, 2), 2); /* stray continuation bytes: cut where asked */
}

static void test_util_cookie_get(void)
{
	const char *h = "theme=dark; svc_access_token=tok.en.value ; other=\"q\"; empty=; sp = x y ";
	char v[16];

	CU_ASSERT_EQUAL(svc_cookie_get(h, "theme", v, sizeof v), 1);
	CU_ASSERT_STRING_EQUAL(v, "dark");
	CU_ASSERT_EQUAL(svc_cookie_get(h, "svc_access_token", v, sizeof v), 1);
	CU_ASSERT_STRING_EQUAL(v, "tok.en.value");
	CU_ASSERT_EQUAL(svc_cookie_get(h, "other", v, sizeof v), 1);  /* DQUOTE form */
	CU_ASSERT_STRING_EQUAL(v, "q");
	CU_ASSERT_EQUAL(svc_cookie_get(h, "empty", v, sizeof v), 1);
	CU_ASSERT_STRING_EQUAL(v, "");
	CU_ASSERT_EQUAL(svc_cookie_get(h, "sp", v, sizeof v), 1);     /* white space around name and value */
	CU_ASSERT_STRING_EQUAL(v, "x y");
	CU_ASSERT_EQUAL(svc_cookie_get(h, "svc_access", v, sizeof v), 0); /* a prefix is not the name */
	CU_ASSERT_EQUAL(svc_cookie_get(h, "token", v, sizeof v), 0);
	CU_ASSERT_EQUAL(svc_cookie_get(h, "nope", v, sizeof v), 0);
	CU_ASSERT_EQUAL(svc_cookie_get(h, "", v, sizeof v), 0);
	CU_ASSERT_EQUAL(svc_cookie_get("a=1; a=2", "a", v, sizeof v), 1); /* the first wins */
	CU_ASSERT_STRING_EQUAL(v, "1");
	CU_ASSERT_EQUAL(svc_cookie_get("a=0123456789abcdef", "a", v, sizeof v), 0); /* does not fit */
	CU_ASSERT_EQUAL(svc_cookie_get("a=0123456789abcde", "a", v, sizeof v), 1);  /* 15 bytes and the NUL */
	CU_ASSERT_EQUAL(svc_cookie_get("", "a", v, sizeof v), 0);
	CU_ASSERT_EQUAL(svc_cookie_get(NULL, "a", v, sizeof v), 0);
	CU_ASSERT_EQUAL(svc_cookie_get("a==b", "a", v, sizeof v), 1); /* only the first "=" splits */
	CU_ASSERT_STRING_EQUAL(v, "=b");

	/* counting pairs of one name (cookie tossing: two svc_access_token cookies) */
	CU_ASSERT_EQUAL(svc_cookie_count(h, "svc_access_token"), 1);
	CU_ASSERT_EQUAL(svc_cookie_count(h, "nope"), 0);
	CU_ASSERT_EQUAL(svc_cookie_count("a=1; b=2;a = 3 ;", "a"), 2);
	CU_ASSERT_EQUAL(svc_cookie_count("a=1; aa=2; xa=3; a", "a"), 1); /* names match whole; "a" alone has no "=" */
	CU_ASSERT_EQUAL(svc_cookie_count(NULL, "a"), 0);
	CU_ASSERT_EQUAL(svc_cookie_count("a=1", ""), 0);
}

/* The end of the header, where lib/http and svc-wsd's copies used to differ. */
static void test_util_cookie_header_end(void)
{
	char v[16];

	/* the last pair needs no ";" */
	CU_ASSERT_EQUAL(svc_cookie_get("x=1; a=last", "a", v, sizeof v), 1);
	CU_ASSERT_STRING_EQUAL(v, "last");
	/* a trailing ";" (and white space after it) is an empty pair, ignored */
	CU_ASSERT_EQUAL(svc_cookie_get("x=1; a=last;", "a", v, sizeof v), 1);
	CU_ASSERT_STRING_EQUAL(v, "last");
	CU_ASSERT_EQUAL(svc_cookie_get("a=last; \t", "a", v, sizeof v), 1);
	CU_ASSERT_STRING_EQUAL(v, "last");
	CU_ASSERT_EQUAL(svc_cookie_get("x=1;", "a", v, sizeof v), 0);
	CU_ASSERT_EQUAL(svc_cookie_get(";;", "a", v, sizeof v), 0);
	/* white space at the very end belongs to no value */
	CU_ASSERT_EQUAL(svc_cookie_get("x=1; a=last \t", "a", v, sizeof v), 1);
	CU_ASSERT_STRING_EQUAL(v, "last");
	/* the name alone at the end, without "=": no cookie (RFC 6265 §5.2) */
	CU_ASSERT_EQUAL(svc_cookie_get("x=1; a", "a", v, sizeof v), 0);
	CU_ASSERT_EQUAL(svc_cookie_get("x=1; a ", "a", v, sizeof v), 0);
	/* an empty value at the end */
	CU_ASSERT_EQUAL(svc_cookie_get("x=1; a=", "a", v, sizeof v), 1);
	CU_ASSERT_STRING_EQUAL(v, "");
	/* a lone quote at the end is kept: no DQUOTE pair */
	CU_ASSERT_EQUAL(svc_cookie_get("a=\"", "a", v, sizeof v), 1);
	CU_ASSERT_STRING_EQUAL(v, "\"");
}

static void test_util_time_format(void)
{
	char out[25];

	svc_time_format(1795310531123LL, out);
	CU_ASSERT_STRING_EQUAL(out, "2026-11-22T01:22:11.123Z");
	CU_ASSERT_EQUAL(svc_time_from_db("2026-11-22 01:22:11.123000", out), 0);
	CU_ASSERT_STRING_EQUAL(out, "2026-11-22T01:22:11.123Z");
	CU_ASSERT_EQUAL(svc_time_from_db("2026-11-22 01:22:11", out), 0);
	CU_ASSERT_STRING_EQUAL(out, "2026-11-22T01:22:11.000Z");
	CU_ASSERT_EQUAL(svc_time_from_db("2026-11-22T01:22:11", out), SVC_E_INTERNAL);
	CU_ASSERT_EQUAL(svc_time_from_db("yesterday", out), SVC_E_INTERNAL);
	CU_ASSERT_TRUE(svc_secret_equal("abc", 3, "abc", 3));
	CU_ASSERT_FALSE(svc_secret_equal("abc", 3, "abd", 3));
	CU_ASSERT_FALSE(svc_secret_equal("abc", 3, "abcd", 4));
}

static void test_json_parse_object(void)
{
	struct json_object *o = NULL;

	CU_ASSERT_EQUAL(svc_json_parse_object("{\"a\": 1} \n", 10, &o), 0);
	json_object_put(o);
	CU_ASSERT_EQUAL(svc_json_parse_object("{\"a\": 1", 7, &o), SVC_E_INVALID_JSON);
	CU_ASSERT_EQUAL(svc_json_parse_object("[1]", 3, &o), SVC_E_INVALID_JSON);
	CU_ASSERT_EQUAL(svc_json_parse_object("{} {}", 5, &o), SVC_E_INVALID_JSON);
	CU_ASSERT_EQUAL(svc_json_parse_object("{'a': 1}", 8, &o), SVC_E_INVALID_JSON);
	CU_ASSERT_EQUAL(svc_json_parse_object("", 0, &o), SVC_E_INVALID_JSON);
	{
		/* nesting deeper than SVC_JSON_DEPTH_MAX is refused */
		char deep[200];
		size_t i, n = 0;
		deep[n++] = '{';
		deep[n++] = '"';
		deep[n++] = 'a';
		deep[n++] = '"';
		deep[n++] = ':';
		for (i = 0; i < 40; i++)
			deep[n++] = '[';
		for (i = 0; i < 40; i++)
			deep[n++] = ']';
		deep[n++] = '}';
		CU_ASSERT_EQUAL(svc_json_parse_object(deep, n, &o), SVC_E_INVALID_JSON);
	}
}

static void test_json_validate_fields(void)
{
	static const char *const modes[] = { "a", "b", NULL };
	static const struct svc_field f[] = {
		{ "name", SVC_V_TEXT, SVC_F_REQUIRED, 1, 5, NULL },
		{ "n", SVC_V_UINT, 0, 1, 10, NULL },
		{ "id", SVC_V_UUID, SVC_F_NULLABLE, 0, 0, NULL },
		{ "mode", SVC_V_ENUM, 0, 0, 0, modes },
		{ "list", SVC_V_ARRAY, 0, 1, 2, NULL },
	};
	static const struct { const char *json; int ok; const char *field; } cases[] = {
		{ "{\"name\": \"abc\"}", 1, NULL },
		{ "{\"name\": \"h\\u00e9llo\", \"n\": 10, \"id\": null, \"mode\": \"b\", \"list\": [1,2]}", 1, NULL },
		{ "{}", 0, "name" },
		{ "{\"name\": 5}", 0, "name" },
		{ "{\"name\": \"   \"}", 0, "name" },
		{ "{\"name\": \"toolong\"}", 0, "name" },
		{ "{\"name\": \"a\\u0000b\"}", 0, "name" },
		{ "{\"name\": null}", 0, "name" },
		{ "{\"name\": \"a\", \"n\": 0}", 0, "n" },
		{ "{\"name\": \"a\", \"n\": 11}", 0, "n" },
		{ "{\"name\": \"a\", \"n\": \"5\"}", 0, "n" },
		{ "{\"name\": \"a\", \"n\": 1.5}", 0, "n" },
		{ "{\"name\": \"a\", \"id\": \"nope\"}", 0, "id" },
		{ "{\"name\": \"a\", \"mode\": \"c\"}", 0, "mode" },
		{ "{\"name\": \"a\", \"list\": [1,2,3]}", 0, "list" },
		{ "{\"name\": \"a\", \"list\": {}}", 0, "list" },
		{ "{\"name\": \"a\", \"list\": []}", 0, "list" },
		{ "{\"name\": \"a\", \"list\": [1]}", 1, NULL },
	};
	size_t i;

	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct json_object *o = NULL;
		const char *field = NULL;
		char msg[128];
		int err;

		CU_ASSERT_EQUAL_FATAL(svc_json_parse_object(cases[i].json, strlen(cases[i].json), &o), 0);
		err = svc_json_validate(o, f, 5, &field, msg, sizeof msg);
		if (cases[i].ok) {
			CU_ASSERT_EQUAL(err, 0);
		} else {
			CU_ASSERT_EQUAL(err, SVC_E_VALIDATION);
			CU_ASSERT_PTR_NOT_NULL(field);
			if (field)
				CU_ASSERT_STRING_EQUAL(field, cases[i].field);
			CU_ASSERT_TRUE(strlen(msg) > 0);
		}
		json_object_put(o);
	}
}

static void test_err_table(void)
{
	CU_ASSERT_EQUAL(svc_err_status(SVC_E_NOT_FOUND), 404);
	CU_ASSERT_STRING_EQUAL(svc_err_code(SVC_E_NOT_FOUND), "not_found");
	CU_ASSERT_EQUAL(svc_err_status(SVC_E_VALIDATION), 400);
	CU_ASSERT_STRING_EQUAL(svc_err_code(SVC_E_VALIDATION), "validation_failed");
	CU_ASSERT_EQUAL(svc_err_status(SVC_E_TOO_LARGE), 413);
	CU_ASSERT_STRING_EQUAL(svc_err_code(SVC_E_MEDIA_TYPE), "unsupported_media_type");
	CU_ASSERT_STRING_EQUAL(svc_err_code(SVC_E_NO_PROVIDER), "no_provider");
	CU_ASSERT_STRING_EQUAL(svc_err_code(SVC_E_MODEL_UNAVAILABLE), "model_unavailable");
	CU_ASSERT_STRING_EQUAL(svc_err_code(-999), "internal_error");
	CU_ASSERT_EQUAL(svc_err_status(-999), 500);
	CU_ASSERT_EQUAL(svc_err_status(SVC_OK), 200);
}

/* Every svc_err value has its own row: a value added to the enum without one would read as "ok"/NULL. */
static void test_err_table_complete(void)
{
	int e, f;

	for (e = 0; e > -SVC_E__MAX; e--) {
		CU_ASSERT_PTR_NOT_NULL_FATAL(svc_err_code(e));
		CU_ASSERT_PTR_NOT_NULL(svc_err_message(e));
		CU_ASSERT(svc_err_status(e) >= 200 && svc_err_status(e) < 600);
		for (f = 0; f > e; f--)
			CU_ASSERT_STRING_NOT_EQUAL(svc_err_code(e), svc_err_code(f));
	}
	CU_ASSERT_STRING_EQUAL(svc_err_code(SVC_E_CANCELLED), "cancelled");
	CU_ASSERT_STRING_EQUAL(svc_err_code(SVC_E_INVALID_JSON), "invalid_json");
	CU_ASSERT_STRING_EQUAL(svc_err_code(-SVC_E__MAX), "internal_error");
	CU_ASSERT_STRING_EQUAL(svc_err_code(1), "internal_error");
}

/* app_url and SVC_DOMAIN sharing a registrable domain (issue 17, finding 5): by the public suffix list */
static void test_psl_shared_site(void)
{
	static const struct {
		const char *app, *domain, *reg; /* reg NULL: nothing shared */
	} cases[] = {
		{ "https://svc.example.com", "sites.example.com", "example.com" },
		{ "https://svc.example.com/", "example.com", "example.com" },
		{ "https://example.com:8443", "sites.Example.COM.", "example.com" },
		{ "https://app.foo.co.uk", "sites.foo.co.uk", "foo.co.uk" },
		{ "https://svc.example.com", "sites.example.net", NULL },
		{ "https://app.foo.co.uk", "sites.bar.co.uk", NULL },        /* co.uk is a public suffix */
		{ "https://alice.github.io", "bob.github.io", NULL },        /* so is github.io (the private part) */
		{ "http://127.0.0.1:8080", "localhost", NULL },              /* the development defaults */
		{ "http://localhost:8080", "localhost", NULL },
		{ "http://[::1]:8080", "localhost", NULL },
		{ "not a url", "example.com", NULL },
		{ "https://svc.example.com", "", NULL },
	};
	char reg[256], text[1024];
	size_t i;

	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		snprintf(reg, sizeof reg, "-");
		CU_ASSERT_EQUAL(svc_psl_shared_site(cases[i].app, cases[i].domain, reg, sizeof reg), cases[i].reg ? 1 : 0);
		CU_ASSERT_STRING_EQUAL(reg, cases[i].reg ? cases[i].reg : "-");
	}
	CU_ASSERT_EQUAL(svc_psl_shared_site_warning("https://svc.example.com", "sites.example.com", text, sizeof text), 1);
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "share the registrable domain example.com"));
	CU_ASSERT_EQUAL(svc_psl_shared_site_warning("https://svc.example.com", "sites.example.net", text, sizeof text), 0);
}

SVC_TEST_SUITE(core_suite)
{
	CU_pSuite s = CU_add_suite("core", NULL, NULL);
	CU_add_test(s, "test_util_buf_bounded", test_util_buf_bounded);
	CU_add_test(s, "test_util_array_grow", test_util_array_grow);
	CU_add_test(s, "test_util_hex", test_util_hex);
	CU_add_test(s, "test_util_sha256_hex", test_util_sha256_hex);
	CU_add_test(s, "test_util_uuid", test_util_uuid);
	CU_add_test(s, "test_util_uuid_bytes", test_util_uuid_bytes);
	CU_add_test(s, "test_util_parse_u64_strict", test_util_parse_u64_strict);
	CU_add_test(s, "test_util_utf8", test_util_utf8);
	CU_add_test(s, "test_util_utf8_decode", test_util_utf8_decode);
	CU_add_test(s, "test_util_utf8_cut", test_util_utf8_cut);
	CU_add_test(s, "test_util_cookie_get", test_util_cookie_get);
	CU_add_test(s, "test_util_cookie_header_end", test_util_cookie_header_end);
	CU_add_test(s, "test_util_time_format", test_util_time_format);
	CU_add_test(s, "test_json_parse_object", test_json_parse_object);
	CU_add_test(s, "test_json_validate_fields", test_json_validate_fields);
	CU_add_test(s, "test_err_table", test_err_table);
	CU_add_test(s, "test_err_table_complete", test_err_table_complete);
	CU_add_test(s, "test_psl_shared_site", test_psl_shared_site);
}
