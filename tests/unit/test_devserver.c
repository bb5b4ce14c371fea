/* test_devserver.c: CUnit suite "devserver": svc-preview's reading of a dev server's answer by its framing (lib/project/devserver.c, issue 27). */
#include <string.h>

#include "unit.h"

#include "../../lib/project/devserver.c"

static const char CHUNKED[] = "5\r\nhello\r\n6;name=\"v\"\r\n world\r\n0\r\nX-Trailer: 1\r\n\r\n";

/* dechunk() of the string `s`. */
static int dc(const char *s, char *out, size_t *out_len)
{
	return dechunk(s, strlen(s), out, out_len);
}

static void test_devserver_dechunk_decodes_a_whole_body(void)
{
	char out[sizeof CHUNKED];
	size_t len = 0;

	CU_ASSERT_EQUAL_FATAL(dechunk(CHUNKED, sizeof CHUNKED - 1, out, &len), 1);
	CU_ASSERT_EQUAL(len, 11);
	CU_ASSERT(memcmp(out, "hello world", 11) == 0);
	/* no trailer: the last chunk and the empty line */
	CU_ASSERT_EQUAL(dc("3\r\nabc\r\n0\r\n\r\n", out, &len), 1);
	CU_ASSERT_EQUAL(len, 3);
	CU_ASSERT_EQUAL(dc("A\r\n0123456789\r\n0\r\n\r\n", out, &len), 1);
	CU_ASSERT_EQUAL(len, 10);
}

static void test_devserver_dechunk_every_cut_is_incomplete(void)
{
	char out[sizeof CHUNKED];
	size_t n, len = 99;

	for (n = 0; n < sizeof CHUNKED - 1; n++)
		CU_ASSERT_EQUAL(dechunk(CHUNKED, n, out, &len), 0);
	CU_ASSERT_EQUAL(len, 99); /* set only when whole */
}

static void test_devserver_dechunk_refuses_malformed(void)
{
	char out[64];
	size_t len;

	CU_ASSERT_EQUAL(dc("5\r\nhelloXX0\r\n\r\n", out, &len), -1);  /* no CRLF after the data */
	CU_ASSERT_EQUAL(dc("5\nhello\r\n0\r\n\r\n", out, &len), -1);   /* a bare LF */
	CU_ASSERT_EQUAL(dc("x\r\n", out, &len), -1);                   /* no size */
	CU_ASSERT_EQUAL(dc("1000000000000000\r\n", out, &len), -1);   /* 16 digits */
	CU_ASSERT_EQUAL(dc("0\r\nX: 1\n\r\n", out, &len), -1);        /* a trailer line with a bare LF */
}

/* Parses the answer `raw` as svc_devserver_fetch() does once the connection ended; the error. */
static int parse(const char *raw, struct svc_devserver_answer *a)
{
	struct svc_buf b;
	int err;

	svc_buf_init(&b, 1 << 16);
	err = svc_buf_add(&b, raw, strlen(raw));
	if (err == 0)
		err = parse_answer(&b, a);
	svc_buf_dispose(&b);
	return err;
}

static void test_devserver_answer_by_its_framing(void)
{
	struct svc_devserver_answer a;

	CU_ASSERT_EQUAL_FATAL(parse("HTTP/1.1 200 OK\r\nContent-Type: text/javascript\r\nContent-Length: 5\r\n\r\nhello", &a), 0);
	CU_ASSERT(a.status == 200 && !a.cut && a.len == 5 && strcmp(a.body, "hello") == 0);
	CU_ASSERT_STRING_EQUAL(a.type, "text/javascript");
	svc_devserver_answer_dispose(&a);
	/* bytes past the length are not the body's */
	CU_ASSERT_EQUAL_FATAL(parse("HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nhello", &a), 0);
	CU_ASSERT(!a.cut && a.len == 3 && strcmp(a.body, "hel") == 0);
	svc_devserver_answer_dispose(&a);
	/* chunked (its last coding) decoded */
	CU_ASSERT_EQUAL_FATAL(parse("HTTP/1.1 200 OK\r\ntransfer-encoding: gzip, Chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n", &a), 0);
	CU_ASSERT(!a.cut && a.len == 3 && strcmp(a.body, "abc") == 0);
	svc_devserver_answer_dispose(&a);
	/* neither: the body ends with the connection */
	CU_ASSERT_EQUAL_FATAL(parse("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nall of it", &a), 0);
	CU_ASSERT(!a.cut && a.len == 9 && strcmp(a.body, "all of it") == 0);
	svc_devserver_answer_dispose(&a);
	/* a 304 has no body, whatever its length says */
	CU_ASSERT_EQUAL_FATAL(parse("HTTP/1.1 304 Not Modified\r\nETag: \"x\"\r\nContent-Length: 10\r\n\r\n", &a), 0);
	CU_ASSERT(a.status == 304 && !a.cut && a.len == 0 && strcmp(a.etag, "\"x\"") == 0);
	svc_devserver_answer_dispose(&a);
}

static void test_devserver_answer_cut_short_is_marked(void)
{
	struct svc_devserver_answer a;

	CU_ASSERT_EQUAL_FATAL(parse("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nhello", &a), 0);
	CU_ASSERT(a.status == 200 && a.cut);
	svc_devserver_answer_dispose(&a);
	CU_ASSERT_EQUAL_FATAL(parse("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n", &a), 0);
	CU_ASSERT(a.cut);
	svc_devserver_answer_dispose(&a);
	/* a malformed framing is never passed on as whole either */
	CU_ASSERT_EQUAL_FATAL(parse("HTTP/1.1 200 OK\r\nContent-Length: 5x\r\n\r\nhello", &a), 0);
	CU_ASSERT(a.cut);
	svc_devserver_answer_dispose(&a);
	CU_ASSERT_EQUAL_FATAL(parse("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", &a), 0);
	CU_ASSERT(a.cut);
	svc_devserver_answer_dispose(&a);
	/* no head at all: svc-devd is not what answered */
	CU_ASSERT_EQUAL(parse("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n", &a), SVC_E_UNAVAILABLE);
}

SVC_TEST_SUITE(devserver)
{
	CU_pSuite s = CU_add_suite("devserver", NULL, NULL);

	CU_add_test(s, "test_devserver_dechunk_decodes_a_whole_body", test_devserver_dechunk_decodes_a_whole_body);
	CU_add_test(s, "test_devserver_dechunk_every_cut_is_incomplete", test_devserver_dechunk_every_cut_is_incomplete);
	CU_add_test(s, "test_devserver_dechunk_refuses_malformed", test_devserver_dechunk_refuses_malformed);
	CU_add_test(s, "test_devserver_answer_by_its_framing", test_devserver_answer_by_its_framing);
	CU_add_test(s, "test_devserver_answer_cut_short_is_marked", test_devserver_answer_cut_short_is_marked);
}
