/* test_agent_plan.c: structured plans from model text, the plan's run message, image attachments, model tables. */
#include <stdlib.h>
#include <string.h>

#include <CUnit/CUnit.h>

#include "agent/agent.h"
#include "core/config.h"
#include "auth/crypto.h"
#include "core/err.h"
#include "unit.h"

static struct json_object *parse(const char *text)
{
	struct json_object *plan = NULL;

	CU_ASSERT_EQUAL_FATAL(svc_agent_plan_parse(text, &plan), 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(plan);
	return plan;
}

static struct json_object *steps_of(struct json_object *plan)
{
	struct json_object *steps = NULL;

	CU_ASSERT_FATAL(json_object_object_get_ex(plan, "steps", &steps));
	return steps;
}

static const char *step_str(struct json_object *plan, size_t i, const char *key)
{
	return svc_agent__json_str(json_object_array_get_idx(steps_of(plan), i), key);
}

static void test_agent_plan_fenced_json_with_prose(void)
{
	const char *text = "Here is my plan.\n\n```json\n{\"steps\": [{\"title\": \"Add footer\", \"description\": \"A footer\", "
			   "\"files\": [\"index.html\", \"css/site.css\"], \"risk\": \"low\"}, {\"title\": \"Restyle\", "
			   "\"description\": \"Colors\", \"files\": [], \"risk\": \"high\"}]}\n```\n\nTell me if that works.";
	struct json_object *plan = parse(text), *files;

	CU_ASSERT_EQUAL(json_object_array_length(steps_of(plan)), 2);
	CU_ASSERT_STRING_EQUAL(step_str(plan, 0, "title"), "Add footer");
	CU_ASSERT_STRING_EQUAL(step_str(plan, 0, "risk"), "low");
	CU_ASSERT_STRING_EQUAL(step_str(plan, 1, "risk"), "high");
	CU_ASSERT(json_object_object_get_ex(json_object_array_get_idx(steps_of(plan), 0), "files", &files));
	CU_ASSERT_EQUAL(json_object_array_length(files), 2);
	CU_ASSERT_STRING_EQUAL(svc_agent__json_str(plan, "rawText"), text);
	json_object_put(plan);
}

static void test_agent_plan_without_fence(void)
{
	struct json_object *plan = parse("Plan: {\"steps\":[{\"title\":\"One\",\"risk\":\"medium\"}]} done");

	CU_ASSERT_EQUAL(json_object_array_length(steps_of(plan)), 1);
	CU_ASSERT_STRING_EQUAL(step_str(plan, 0, "description"), "");
	json_object_put(plan);
	plan = parse("[{\"title\": \"Bare array\", \"risk\": \"low\"}]");
	CU_ASSERT_EQUAL(json_object_array_length(steps_of(plan)), 1);
	json_object_put(plan);
}

static void test_agent_plan_malformed_steps_are_dropped(void)
{
	struct json_object *plan = parse("```json\n{\"steps\": [{\"title\": \"Good\", \"risk\": \"extreme\", \"files\": [1, \"a.js\"]},"
					 " \"not a step\", {\"description\": \"no title\"}, {\"title\": \"\"}, 42]}\n```");
	struct json_object *files;

	CU_ASSERT_EQUAL(json_object_array_length(steps_of(plan)), 1);
	CU_ASSERT_STRING_EQUAL(step_str(plan, 0, "risk"), "medium");
	CU_ASSERT(json_object_object_get_ex(json_object_array_get_idx(steps_of(plan), 0), "files", &files));
	CU_ASSERT_EQUAL(json_object_array_length(files), 1);
	json_object_put(plan);
}

static void test_agent_plan_broken_json_keeps_good_steps(void)
{
	/* the second step lacks a closing quote; the first and third parse on their own */
	struct json_object *plan = parse("```json\n{\"steps\": [{\"title\": \"First\", \"risk\": \"low\"}, "
					 "{\"title\": \"Broken, \"risk\": \"low\"}, {\"title\": \"Third\", \"risk\": \"high\"}\n```");

	CU_ASSERT(json_object_array_length(steps_of(plan)) >= 1);
	CU_ASSERT_STRING_EQUAL(step_str(plan, 0, "title"), "First");
	json_object_put(plan);
}

static void test_agent_plan_no_json_keeps_raw_text(void)
{
	struct json_object *plan = parse("I would first look at the files, then add a footer.");

	CU_ASSERT_EQUAL(json_object_array_length(steps_of(plan)), 0);
	CU_ASSERT_STRING_EQUAL(svc_agent__json_str(plan, "rawText"), "I would first look at the files, then add a footer.");
	json_object_put(plan);
}

static void test_agent_plan_message_lists_steps(void)
{
	struct json_object *plan = parse("```json\n{\"steps\": [{\"title\": \"Add footer\", \"description\": \"d1\", "
					 "\"files\": [\"index.html\"], \"risk\": \"low\"}]}\n```");
	char *msg = NULL;

	CU_ASSERT_EQUAL(svc_agent_plan_message(plan, 4096, &msg), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(msg ? msg : "", "1. Add footer"));
	CU_ASSERT_PTR_NOT_NULL(strstr(msg ? msg : "", "index.html"));
	free(msg);
	msg = NULL;
	CU_ASSERT_EQUAL(svc_agent_plan_message(plan, 10, &msg), SVC_E_TOO_LARGE);
	json_object_put(plan);
	plan = parse("");
	CU_ASSERT_EQUAL(svc_agent_plan_message(plan, 4096, &msg), SVC_E_NOT_FOUND);
	json_object_put(plan);
}

/* A data URL of `len` bytes of `bytes` as `media`. */
static struct json_object *attachment(const char *media, const uint8_t *bytes, size_t len)
{
	struct json_object *arr = json_object_new_array(), *a = json_object_new_object();
	char *b64 = NULL, *url;
	size_t n;

	CU_ASSERT_EQUAL_FATAL(svc_base64_encode(bytes, len, &b64), 0);
	n = strlen(b64) + strlen(media) + 32;
	url = malloc(n);
	snprintf(url, n, "data:%s;base64,%s", media, b64);
	json_object_object_add(a, "type", json_object_new_string("image"));
	json_object_object_add(a, "url", json_object_new_string(url));
	json_object_array_add(arr, a);
	free(b64);
	free(url);
	return arr;
}

static void test_agent_attachments_accepts_the_four_types(void)
{
	static const uint8_t png[] = "\x89PNG\r\n\x1a\n\0\0\0\rIHDR";
	static const uint8_t gif[] = "GIF89a\x01\0\x01\0";
	static const uint8_t jpg[] = "\xff\xd8\xff\xe0\0\x10JFIF";
	static const uint8_t webp[] = "RIFF\x10\0\0\0WEBPVP8 ";
	const struct { const char *m; const uint8_t *b; size_t n; } ok[] = {
		{ "image/png", png, sizeof png }, { "image/gif", gif, sizeof gif },
		{ "image/jpeg", jpg, sizeof jpg }, { "image/webp", webp, sizeof webp },
	};
	struct json_object *in, *out = NULL;
	char msg[256];
	size_t i;

	for (i = 0; i < 4; i++) {
		in = attachment(ok[i].m, ok[i].b, ok[i].n);
		CU_ASSERT_EQUAL(svc_agent_attachments_check(in, &out, msg, sizeof msg), 0);
		CU_ASSERT_EQUAL(json_object_array_length(out), 1);
		CU_ASSERT_STRING_EQUAL(svc_agent__json_str(json_object_array_get_idx(out, 0), "mediaType"), ok[i].m);
		json_object_put(out);
		out = NULL;
		json_object_put(in);
	}
}

static void test_agent_attachments_refuses_wrong_data(void)
{
	static const uint8_t png[] = "\x89PNG\r\n\x1a\nrest";
	struct json_object *in, *out = NULL, *a;
	uint8_t *big;
	char msg[256];

	in = attachment("image/jpeg", png, sizeof png); /* PNG bytes labelled JPEG */
	CU_ASSERT_EQUAL(svc_agent_attachments_check(in, &out, msg, sizeof msg), SVC_E_VALIDATION);
	json_object_put(in);
	in = attachment("image/svg+xml", png, sizeof png);
	CU_ASSERT_EQUAL(svc_agent_attachments_check(in, &out, msg, sizeof msg), SVC_E_VALIDATION);
	json_object_put(in);
	in = json_object_new_array();
	a = json_object_new_object();
	json_object_object_add(a, "type", json_object_new_string("image"));
	json_object_object_add(a, "url", json_object_new_string("data:image/png;base64,@@@@"));
	json_object_array_add(in, a);
	CU_ASSERT_EQUAL(svc_agent_attachments_check(in, &out, msg, sizeof msg), SVC_E_VALIDATION);
	json_object_put(in);
	in = json_object_new_array();
	a = json_object_new_object();
	json_object_object_add(a, "type", json_object_new_string("file"));
	json_object_object_add(a, "url", json_object_new_string("https://example.test/x.png"));
	json_object_array_add(in, a);
	CU_ASSERT_EQUAL(svc_agent_attachments_check(in, &out, msg, sizeof msg), SVC_E_VALIDATION);
	json_object_put(in);
	big = calloc(1, SVC_AGENT_IMAGE_MAX + 1);
	memcpy(big, png, 8);
	in = attachment("image/png", big, SVC_AGENT_IMAGE_MAX + 1);
	CU_ASSERT_EQUAL(svc_agent_attachments_check(in, &out, msg, sizeof msg), SVC_E_TOO_LARGE);
	json_object_put(in);
	in = attachment("image/png", big, SVC_AGENT_IMAGE_MAX);
	CU_ASSERT_EQUAL(svc_agent_attachments_check(in, &out, msg, sizeof msg), 0);
	json_object_put(out);
	json_object_put(in);
	free(big);
	CU_ASSERT_EQUAL(svc_agent_attachments_check(NULL, &out, msg, sizeof msg), 0);
	CU_ASSERT_EQUAL(json_object_array_length(out), 0);
	json_object_put(out);
}

static void test_agent_plan_model_tables(void)
{
	struct svc_config cfg;
	double in, out;

	memset(&cfg, 0, sizeof cfg);
	cfg.ai_prices = "gpt-x=2.5:10, cheap = 0.1:0.2";
	cfg.ai_context_windows = "small=1000,big=200000";
	cfg.ai_context_default = 5;
	cfg.ai_model = "inst";
	cfg.ai_price_input = 7;
	cfg.ai_price_output = 8;
	svc_config_model_price(&cfg, "gpt-x", &in, &out);
	CU_ASSERT_DOUBLE_EQUAL(in, 2.5, 1e-9);
	CU_ASSERT_DOUBLE_EQUAL(out, 10, 1e-9);
	svc_config_model_price(&cfg, "cheap", &in, &out);
	CU_ASSERT_DOUBLE_EQUAL(out, 0.2, 1e-9);
	svc_config_model_price(&cfg, "unknown", &in, &out);
	CU_ASSERT_DOUBLE_EQUAL(in + out, 0, 1e-12);
	svc_config_model_price(&cfg, "inst", &in, &out);
	CU_ASSERT_DOUBLE_EQUAL(in, 7, 1e-9);
	svc_config_model_price(&cfg, "gpt", &in, &out); /* a prefix is not a match */
	CU_ASSERT_DOUBLE_EQUAL(in, 0, 1e-12);
	CU_ASSERT_EQUAL(svc_config_model_context(&cfg, "small"), 1000);
	CU_ASSERT_EQUAL(svc_config_model_context(&cfg, "other"), 5);
	CU_ASSERT(svc_config_list_has("a, b ,c", "b"));
	CU_ASSERT(!svc_config_list_has("a,bb,c", "b"));
	CU_ASSERT(!svc_config_list_has("", "a"));
}

SVC_TEST_SUITE(agent_plan)
{
	CU_pSuite s = CU_add_suite("agent_plan", NULL, NULL);

	CU_add_test(s, "test_agent_plan_fenced_json_with_prose", test_agent_plan_fenced_json_with_prose);
	CU_add_test(s, "test_agent_plan_without_fence", test_agent_plan_without_fence);
	CU_add_test(s, "test_agent_plan_malformed_steps_are_dropped", test_agent_plan_malformed_steps_are_dropped);
	CU_add_test(s, "test_agent_plan_broken_json_keeps_good_steps", test_agent_plan_broken_json_keeps_good_steps);
	CU_add_test(s, "test_agent_plan_no_json_keeps_raw_text", test_agent_plan_no_json_keeps_raw_text);
	CU_add_test(s, "test_agent_plan_message_lists_steps", test_agent_plan_message_lists_steps);
	CU_add_test(s, "test_agent_attachments_accepts_the_four_types", test_agent_attachments_accepts_the_four_types);
	CU_add_test(s, "test_agent_attachments_refuses_wrong_data", test_agent_attachments_refuses_wrong_data);
	CU_add_test(s, "test_agent_plan_model_tables", test_agent_plan_model_tables);
}
