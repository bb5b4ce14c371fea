/* test_app.c: unit tests of the apps' backend: svc.data.json's parser and its messages (lib/project/app_decl.c), the rule checks, record validation. */
#include <stdio.h>
#include <string.h>

#include <CUnit/CUnit.h>

#include "core/err.h"
#include "project/app_decl.h"
#include "unit.h"

/* Parses `text`; the message of a refusal into msg (512 bytes). Returns the declaration or NULL. */
static struct svc_app_decl *parse(const char *text, char *msg)
{
	struct svc_app_decl *d = NULL;
	int err;

	msg[0] = '\0';
	err = svc_app_decl_parse(text, strlen(text), &d, msg, 512);
	CU_ASSERT(err == 0 || err == SVC_E_VALIDATION);
	CU_ASSERT((err == 0) == (d != NULL));
	return d;
}

/* 1 when `text` is refused with a message that holds `line` ("line 3:") and `what`. */
static int refused(const char *text, const char *line, const char *what)
{
	char msg[512];
	struct svc_app_decl *d = parse(text, msg);
	int ok = !d && strstr(msg, line) && strstr(msg, what);

	if (!ok)
		fprintf(stderr, "refused(%s): got \"%s\"\n", text, msg);
	svc_app_decl_free(d);
	return ok;
}

static void test_app_decl_parses_the_issue_example(void)
{
	char msg[512];
	struct svc_app_decl *d = parse(
		"{\"collections\": {\"todos\": {\"fields\": {\"title\": {\"type\": \"string\", \"required\": true, \"max\": 200},"
		" \"done\": {\"type\": \"boolean\"}}, \"rules\": {\"list\": \"owner\", \"get\": \"owner\", \"create\": \"user\","
		" \"update\": \"owner\", \"delete\": \"owner\"}, \"indexes\": [\"done\"]}}}", msg);
	const struct svc_app_collection *c = svc_app_decl_collection(d, "todos");
	const struct svc_app_field *title = svc_app_decl_field(c, "title"), *done = svc_app_decl_field(c, "done");

	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	CU_ASSERT_PTR_NOT_NULL_FATAL(title);
	CU_ASSERT_PTR_NOT_NULL_FATAL(done);
	CU_ASSERT_EQUAL(c->nfields, 2);
	CU_ASSERT(title->type == SVC_APP_STRING && title->required && title->max_len == 200 && !title->indexed);
	CU_ASSERT(done->type == SVC_APP_BOOLEAN && !done->required && done->indexed);
	CU_ASSERT(c->rules[SVC_APP_CREATE] == SVC_APP_SIGNED_IN && c->rules[SVC_APP_LIST] == SVC_APP_OWNER);
	CU_ASSERT_EQUAL(strlen(d->sha256), 64);
	CU_ASSERT_PTR_NULL(svc_app_decl_collection(d, "nothing"));
	svc_app_decl_free(d);
}

static void test_app_decl_rules_default_to_owner(void)
{
	char msg[512];
	struct svc_app_decl *d = parse("{\"collections\": {\"a\": {\"fields\": {}},"
				       " \"b\": {\"fields\": {}, \"rules\": {\"list\": \"public\"}}}}", msg);
	const struct svc_app_collection *a = svc_app_decl_collection(d, "a"), *b = svc_app_decl_collection(d, "b");
	int op;

	CU_ASSERT_PTR_NOT_NULL_FATAL(a);
	CU_ASSERT_PTR_NOT_NULL_FATAL(b);
	for (op = 0; op < SVC_APP_OP__MAX; op++) {
		CU_ASSERT(a->rules[op] == SVC_APP_OWNER);
		CU_ASSERT(b->rules[op] == (op == SVC_APP_LIST ? SVC_APP_PUBLIC : SVC_APP_OWNER));
	}
	svc_app_decl_free(d);
}

static void test_app_decl_messages_name_the_line(void)
{
	CU_ASSERT(refused("{\n\"collections\": {\n \"t\": {\n  \"fields\": {\n   \"x\": {\"type\": \"strin\"}\n}}}}",
			  "line 5:", "collections.t.fields.x.type: unknown type \"strin\""));
	CU_ASSERT(refused("{\n\"collections\": {\n \"t\": {\"fields\": {},\n  \"rules\": {\"list\": \"everyone\"}}}}",
			  "line 4:", "collections.t.rules.list: unknown rule"));
	CU_ASSERT(refused("{\n\"collections\": {\n \"t\": {\"fields\": {\"a\": {\"type\": \"text\"}},\n"
			  "  \"indexes\": [\n\"a\"]}}}", "line 5:", "cannot be indexed"));
	CU_ASSERT(refused("{\n\"collections\": {\n \"t\": {\"fields\": {},\n  \"indexes\": [\"nope\"]}}}", "line 4:",
			  "is not a declared field"));
	CU_ASSERT(refused("{\"collections\": {\n\n \"t\": {\"fields\": {\"id\": {\"type\": \"string\"}}}}}", "line 3:",
			  "set by the server"));
	CU_ASSERT(refused("{\"collections\": {\"t\": {\"fields\": {\n\"n\": {\"type\": \"number\", \"min\": 5, \"max\": 1}}}}}",
			  "line 2:", "min is greater than max"));
	CU_ASSERT(refused("{\"collections\": {\"t\": {\"fields\": {\"b\": {\"type\": \"boolean\",\n \"max\": 3}}}}}",
			  "line 2:", "not a bound"));
	CU_ASSERT(refused("{\"collections\": {\"t\": {\"fields\": {\"s\": {\"type\": \"string\", \"max\": 0}}}}}",
			  "line 1:", "integer from 1"));
	CU_ASSERT(refused("{\"collections\": {\"9x\": {\"fields\": {}}}}", "line 1:", "collection's name"));
	CU_ASSERT(refused("{\"collections\": {\"t\": {\"fields\": {}, \"extra\": 1}}}", "line 1:", "collections.t.extra"));
	CU_ASSERT(refused("{\"collections\": {\"t\": {}}}", "line 1:", "fields is required"));
	CU_ASSERT(refused("{}", "line 1:", "collections is required"));
	CU_ASSERT(refused("[]", "line 1:", "JSON object"));
	/* syntax errors: the line where the parser stopped */
	CU_ASSERT(refused("{\n\"collections\": {\n\"t\": {\"fields\": {},}\n}}", "line 3:", "not valid JSON"));
	CU_ASSERT(refused("{\"collections\": {}} trailing", "line 1:", "not valid JSON"));
	CU_ASSERT(refused("{\"collections\": {}", "line 1:", "not valid JSON"));
}

static void test_app_decl_guard_only_checks_the_declaration(void)
{
	char msg[512];

	CU_ASSERT_EQUAL(svc_app_decl_guard("index.html", "{not json", 9, msg, sizeof msg), 0);
	CU_ASSERT_EQUAL(svc_app_decl_guard("sub/svc.data.json", "{not json", 9, msg, sizeof msg), 0);
	CU_ASSERT_EQUAL(svc_app_decl_guard("svc.data.json", "{not json", 9, msg, sizeof msg), SVC_E_VALIDATION);
	CU_ASSERT(strstr(msg, "svc.data.json line 1") != NULL);
	CU_ASSERT_EQUAL(svc_app_decl_guard("svc.data.json", "{\"collections\": {}}", 19, msg, sizeof msg), 0);
}

static void test_app_rule_checks(void)
{
	const char *a = "6f1c2b9e-3d4a-4b5c-8d6e-7f8091a2b3c4", *b = "0d3f0c9a-1b2c-4d5e-8f90-a1b2c3d4e5f6";

	/* public: anyone, any record */
	CU_ASSERT_EQUAL(svc_app_rule_check(SVC_APP_PUBLIC, "", NULL), 0);
	CU_ASSERT_EQUAL(svc_app_rule_check(SVC_APP_PUBLIC, NULL, b), 0);
	/* user: signed in */
	CU_ASSERT_EQUAL(svc_app_rule_check(SVC_APP_SIGNED_IN, "", NULL), SVC_E_UNAUTHORIZED);
	CU_ASSERT_EQUAL(svc_app_rule_check(SVC_APP_SIGNED_IN, a, b), 0);
	/* owner: signed in, and a record only its owner's; another's is not found */
	CU_ASSERT_EQUAL(svc_app_rule_check(SVC_APP_OWNER, "", NULL), SVC_E_UNAUTHORIZED);
	CU_ASSERT_EQUAL(svc_app_rule_check(SVC_APP_OWNER, NULL, a), SVC_E_UNAUTHORIZED);
	CU_ASSERT_EQUAL(svc_app_rule_check(SVC_APP_OWNER, a, NULL), 0);
	CU_ASSERT_EQUAL(svc_app_rule_check(SVC_APP_OWNER, a, a), 0);
	CU_ASSERT_EQUAL(svc_app_rule_check(SVC_APP_OWNER, a, b), SVC_E_NOT_FOUND);
	CU_ASSERT_EQUAL(svc_app_rule_check(SVC_APP_OWNER, a, ""), SVC_E_NOT_FOUND);
	/* none: nobody on the site */
	CU_ASSERT_EQUAL(svc_app_rule_check(SVC_APP_NONE, a, a), SVC_E_FORBIDDEN);
	CU_ASSERT_EQUAL(svc_app_rule_check(SVC_APP_NONE, "", NULL), SVC_E_FORBIDDEN);
}

/* Checks record `body` against the typed collection; the failing field or "" into field. */
static int record(const char *body, int partial, char *field)
{
	static const char decl[] =
		"{\"collections\": {\"t\": {\"fields\": {\"s\": {\"type\": \"string\", \"max\": 3, \"required\": true},"
		" \"n\": {\"type\": \"number\", \"min\": 1, \"max\": 2}, \"b\": {\"type\": \"boolean\"},"
		" \"d\": {\"type\": \"datetime\"}, \"j\": {\"type\": \"json\", \"max\": 10}, \"u\": {\"type\": \"user\"}}}}}";
	char msg[512];
	struct svc_app_decl *d = parse(decl, msg);
	struct json_object *o = json_tokener_parse(body);
	const char *f = NULL;
	int err;

	CU_ASSERT_PTR_NOT_NULL_FATAL(d);
	err = svc_app_record_check(svc_app_decl_collection(d, "t"), o, partial, &f, msg, sizeof msg);
	snprintf(field, 64, "%s", err == 0 || !f ? "" : f);
	json_object_put(o);
	svc_app_decl_free(d);
	return err;
}

static void test_app_record_check_per_type(void)
{
	char f[64];

	CU_ASSERT_EQUAL(record("{\"s\": \"abc\", \"n\": 1.5, \"b\": false, \"d\": \"2026-11-22T01:22:11.123Z\", \"j\": [1],"
			       " \"u\": \"6f1c2b9e-3d4a-4b5c-8d6e-7f8091a2b3c4\"}", 0, f), 0);
	CU_ASSERT(record("{\"s\": \"abcd\"}", 0, f) == SVC_E_VALIDATION && strcmp(f, "s") == 0);
	CU_ASSERT(record("{\"s\": \"\xc3\xa9\xc3\xa9\xc3\xa9\"}", 0, f) == 0); /* code points, not bytes */
	CU_ASSERT(record("{\"s\": \"a\", \"n\": 3}", 0, f) == SVC_E_VALIDATION && strcmp(f, "n") == 0);
	CU_ASSERT(record("{\"s\": \"a\", \"n\": \"1\"}", 0, f) == SVC_E_VALIDATION && strcmp(f, "n") == 0);
	CU_ASSERT(record("{\"s\": \"a\", \"b\": 1}", 0, f) == SVC_E_VALIDATION && strcmp(f, "b") == 0);
	CU_ASSERT(record("{\"s\": \"a\", \"d\": \"2026-02-30T00:00:00Z\"}", 0, f) == SVC_E_VALIDATION && strcmp(f, "d") == 0);
	CU_ASSERT(record("{\"s\": \"a\", \"d\": \"2026-02-03T00:00:00\"}", 0, f) == SVC_E_VALIDATION);
	CU_ASSERT(record("{\"s\": \"a\", \"d\": \"2026-02-03T00:00:00-05:30\"}", 0, f) == 0);
	CU_ASSERT(record("{\"s\": \"a\", \"j\": \"0123456789\"}", 0, f) == SVC_E_VALIDATION && strcmp(f, "j") == 0);
	CU_ASSERT(record("{\"s\": \"a\", \"u\": \"me\"}", 0, f) == SVC_E_VALIDATION && strcmp(f, "u") == 0);
	CU_ASSERT(record("{\"s\": \"a\", \"x\": 1}", 0, f) == SVC_E_VALIDATION && strcmp(f, "x") == 0);
	CU_ASSERT(record("{\"s\": \"a\", \"createdAt\": 1}", 0, f) == SVC_E_VALIDATION && strcmp(f, "createdAt") == 0);
	/* required: missing or null on create; a PATCH may leave it out but not null it */
	CU_ASSERT(record("{\"n\": 1}", 0, f) == SVC_E_VALIDATION && strcmp(f, "s") == 0);
	CU_ASSERT(record("{\"s\": null}", 0, f) == SVC_E_VALIDATION && strcmp(f, "s") == 0);
	CU_ASSERT(record("{\"n\": 1}", 1, f) == 0);
	CU_ASSERT(record("{\"s\": null}", 1, f) == SVC_E_VALIDATION);
	CU_ASSERT(record("{\"s\": \"a\", \"n\": null}", 0, f) == 0);
	CU_ASSERT(record("[1]", 0, f) == SVC_E_VALIDATION);
}

static void test_app_index_values_are_canonical(void)
{
	struct svc_app_field num = { .name = "n", .type = SVC_APP_NUMBER }, flag = { .name = "b", .type = SVC_APP_BOOLEAN };
	struct json_object *one = json_object_new_int(1), *onef = json_object_new_double(1.0), *t = json_object_new_boolean(1);
	char a[200], b[200];

	CU_ASSERT(svc_app_index_value(&num, one, a, sizeof a) == 0 && svc_app_index_value(&num, onef, b, sizeof b) == 0);
	CU_ASSERT_STRING_EQUAL(a, b); /* 1 and 1.0 are one value */
	CU_ASSERT(svc_app_index_value(&flag, t, a, sizeof a) == 0 && strcmp(a, "true") == 0);
	CU_ASSERT_EQUAL(svc_app_index_value(&flag, one, a, sizeof a), SVC_E_VALIDATION);
	CU_ASSERT_EQUAL(svc_app_index_value(&num, NULL, a, sizeof a), SVC_E_VALIDATION);
	json_object_put(one);
	json_object_put(onef);
	json_object_put(t);
}

/* ---- the "files" block (appfiles) ---- */

static void test_app_decl_files_block(void)
{
	char msg[512];
	struct svc_app_decl *d;

	/* declared rules, and owner for the operation left out */
	d = parse("{\"collections\": {}, \"files\": {\"rules\": {\"get\": \"public\", \"create\": \"user\"}}}", msg);
	CU_ASSERT_PTR_NOT_NULL_FATAL(d);
	CU_ASSERT_EQUAL(svc_app_decl_file_rule(d, SVC_APP_GET), SVC_APP_PUBLIC);
	CU_ASSERT_EQUAL(svc_app_decl_file_rule(d, SVC_APP_CREATE), SVC_APP_SIGNED_IN);
	CU_ASSERT_EQUAL(svc_app_decl_file_rule(d, SVC_APP_DELETE), SVC_APP_OWNER);
	svc_app_decl_free(d);
	/* "files" alone declares no collections */
	d = parse("{\"files\": {\"rules\": {\"delete\": \"none\"}}}", msg);
	CU_ASSERT_PTR_NOT_NULL_FATAL(d);
	CU_ASSERT_EQUAL(d->ncollections, 0);
	CU_ASSERT_EQUAL(svc_app_decl_file_rule(d, SVC_APP_DELETE), SVC_APP_NONE);
	svc_app_decl_free(d);
	/* no block, an empty one, no declaration at all: owner for every operation */
	d = parse("{\"collections\": {}}", msg);
	CU_ASSERT_PTR_NOT_NULL_FATAL(d);
	CU_ASSERT_EQUAL(svc_app_decl_file_rule(d, SVC_APP_GET), SVC_APP_OWNER);
	CU_ASSERT_EQUAL(svc_app_decl_file_rule(d, SVC_APP_CREATE), SVC_APP_OWNER);
	svc_app_decl_free(d);
	d = parse("{\"files\": {}}", msg);
	CU_ASSERT_PTR_NOT_NULL_FATAL(d);
	CU_ASSERT_EQUAL(svc_app_decl_file_rule(d, SVC_APP_GET), SVC_APP_OWNER);
	svc_app_decl_free(d);
	CU_ASSERT_EQUAL(svc_app_decl_file_rule(NULL, SVC_APP_DELETE), SVC_APP_OWNER);
	/* refusals name the line and the place */
	CU_ASSERT(refused("{\"collections\": {},\n \"files\": {\"rules\": {\n\"list\": \"public\"}}}", "line 3:",
			  "files.rules.list: unknown operation of files (create, get, delete)"));
	CU_ASSERT(refused("{\"files\": {\"rules\": {\"update\": \"owner\"}}}", "line 1:", "unknown operation of files"));
	CU_ASSERT(refused("{\"files\": {\"rules\": {\"get\":\n \"everyone\"}}}", "line 1:",
			  "files.rules.get: unknown rule \"everyone\""));
	CU_ASSERT(refused("{\"files\": {\n\"rules\": {}, \"max\": 3}}", "line 2:", "files.max: unknown key (rules)"));
	CU_ASSERT(refused("{\"files\": []}", "line 1:", "files is an object"));
	CU_ASSERT(refused("{\"files\": {\"rules\": \"public\"}}", "line 1:", "rules is an object"));
	CU_ASSERT(refused("{\"collections\": {}, \"file\": {}}", "line 1:", "unknown key (collections, files"));
}

SVC_TEST_SUITE(app_suite)
{
	CU_pSuite s = CU_add_suite("app", NULL, NULL);

	CU_add_test(s, "test_app_decl_parses_the_issue_example", test_app_decl_parses_the_issue_example);
	CU_add_test(s, "test_app_decl_rules_default_to_owner", test_app_decl_rules_default_to_owner);
	CU_add_test(s, "test_app_decl_messages_name_the_line", test_app_decl_messages_name_the_line);
	CU_add_test(s, "test_app_decl_guard_only_checks_the_declaration", test_app_decl_guard_only_checks_the_declaration);
	CU_add_test(s, "test_app_rule_checks", test_app_rule_checks);
	CU_add_test(s, "test_app_record_check_per_type", test_app_record_check_per_type);
	CU_add_test(s, "test_app_index_values_are_canonical", test_app_index_values_are_canonical);
	CU_add_test(s, "test_app_decl_files_block", test_app_decl_files_block);
}
