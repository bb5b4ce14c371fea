/* test_direct_save.c: unit tests of lib/project/direct_save.c: byte-exact HTML and CSS patches, selectors, refusals. */
#include <stdlib.h>
#include <string.h>

#include <CUnit/CUnit.h>

#include "project/direct_save.h"
#include "core/err.h"
#include "unit.h"

struct result {
	int err;
	char *out;
	size_t failed;
	char msg[400];
	struct svc_ds_change ch[8];
};

static void run(struct result *r, enum svc_ds_kind kind, const char *src, const struct svc_ds_patch *p, size_t n)
{
	size_t len = 0;

	memset(r, 0, sizeof *r);
	r->failed = (size_t)-1;
	r->err = svc_ds_apply(kind, src, strlen(src), p, n, &r->out, &len, r->ch, &r->failed, r->msg, sizeof r->msg);
	if (r->err == 0)
		CU_ASSERT_EQUAL(len, strlen(r->out));
}

static void done(struct result *r)
{
	free(r->out);
	svc_ds_changes_free(r->ch, 8);
}

/* One HTML patch: checks the exact output (or the failure when `want` is NULL). */
static void html1(const char *src, const char *sel, const char *prop, const char *val, const char *want)
{
	struct svc_ds_patch p = { sel, prop, val };
	struct result r;

	run(&r, SVC_DS_HTML, src, &p, 1);
	if (want) {
		CU_ASSERT_EQUAL(r.err, 0);
		if (r.err == 0) {
			CU_ASSERT_STRING_EQUAL(r.out, want);
		}
	} else {
		CU_ASSERT_EQUAL(r.err, SVC_E_VALIDATION);
		CU_ASSERT_EQUAL(r.failed, 0);
		CU_ASSERT_PTR_NULL(r.out);
		CU_ASSERT(strncmp(r.msg, "patch 0: ", 9) == 0);
	}
	done(&r);
}

#define PAGE "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n  <title>T</title>\n</head>\n<body>\n" \
	"  <h1 id=\"title\" class=\"big  red\">Hello <b>you</b></h1>\n" \
	"  <ul class=list><li>One</li><li data-x='a b'>Two</li><li>Three</li></ul>\n" \
	"  <a href='old.html' title=x>link</a>\n  <img src=\"a.png\">\n  <input disabled>\n" \
	"  <p style=\"color: red;margin:0\">para</p>\n</body>\n</html>\n"

static void test_direct_save_text_replaces_only_the_content(void)
{
	html1(PAGE, "#title", "text", "Hi & <bye>",
	      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n  <title>T</title>\n</head>\n<body>\n"
	      "  <h1 id=\"title\" class=\"big  red\">Hi &amp; &lt;bye&gt;</h1>\n"
	      "  <ul class=list><li>One</li><li data-x='a b'>Two</li><li>Three</li></ul>\n"
	      "  <a href='old.html' title=x>link</a>\n  <img src=\"a.png\">\n  <input disabled>\n"
	      "  <p style=\"color: red;margin:0\">para</p>\n</body>\n</html>\n");
}

static void test_direct_save_attribute_replace_add_and_valueless(void)
{
	const char *a_new = "  <a href=\"new.html?a=1&amp;b=2\" title=x>link</a>\n";
	struct svc_ds_patch p = { "a", "href", "new.html?a=1&b=2" };
	struct result r;

	run(&r, SVC_DS_HTML, PAGE, &p, 1);
	CU_ASSERT_EQUAL(r.err, 0);
	CU_ASSERT_PTR_NOT_NULL(r.out && strstr(r.out, a_new) ? r.out : NULL);
	CU_ASSERT_STRING_EQUAL(r.ch[0].old_value ? r.ch[0].old_value : "", "old.html");
	CU_ASSERT_EQUAL(strlen(r.out ? r.out : ""), strlen(PAGE) - strlen("'old.html'") + strlen("\"new.html?a=1&amp;b=2\""));
	done(&r);

	p = (struct svc_ds_patch){ "img", "alt", "A \"cat\"" };
	run(&r, SVC_DS_HTML, PAGE, &p, 1);
	CU_ASSERT_EQUAL(r.err, 0);
	CU_ASSERT_PTR_NOT_NULL(r.out ? strstr(r.out, "<img alt=\"A &quot;cat&quot;\" src=\"a.png\">") : NULL);
	CU_ASSERT_PTR_NULL(r.ch[0].old_value);
	done(&r);

	p = (struct svc_ds_patch){ "input", "disabled", "disabled" };
	run(&r, SVC_DS_HTML, PAGE, &p, 1);
	CU_ASSERT_EQUAL(r.err, 0);
	CU_ASSERT_PTR_NOT_NULL(r.out ? strstr(r.out, "<input disabled=\"disabled\">") : NULL);
	done(&r);
}

static void test_direct_save_class_and_style(void)
{
	struct svc_ds_patch p = { "h1", "class", "small" };
	struct result r;

	run(&r, SVC_DS_HTML, PAGE, &p, 1);
	CU_ASSERT_EQUAL(r.err, 0);
	CU_ASSERT_PTR_NOT_NULL(r.out ? strstr(r.out, "<h1 id=\"title\" class=\"small\">") : NULL);
	CU_ASSERT_STRING_EQUAL(r.ch[0].old_value ? r.ch[0].old_value : "", "big  red");
	done(&r);

	p = (struct svc_ds_patch){ "p", "style.color", "blue" };
	run(&r, SVC_DS_HTML, PAGE, &p, 1);
	CU_ASSERT_PTR_NOT_NULL(r.out ? strstr(r.out, "<p style=\"color: blue; margin:0\">") : NULL);
	CU_ASSERT_STRING_EQUAL(r.ch[0].old_value ? r.ch[0].old_value : "", "red");
	done(&r);

	p = (struct svc_ds_patch){ "p", "style.font-size", "12px" };
	run(&r, SVC_DS_HTML, PAGE, &p, 1);
	CU_ASSERT_PTR_NOT_NULL(r.out ? strstr(r.out, "<p style=\"color: red; margin:0; font-size: 12px\">") : NULL);
	done(&r);

	p = (struct svc_ds_patch){ "p", "style.color", "" };
	run(&r, SVC_DS_HTML, PAGE, &p, 1);
	CU_ASSERT_PTR_NOT_NULL(r.out ? strstr(r.out, "<p style=\"margin:0\">") : NULL);
	done(&r);

	p = (struct svc_ds_patch){ "h1", "style.color", "red" };
	run(&r, SVC_DS_HTML, PAGE, &p, 1);
	CU_ASSERT_PTR_NOT_NULL(r.out ? strstr(r.out, "<h1 style=\"color: red\" id=\"title\"") : NULL);
	done(&r);
}

static void test_direct_save_selectors(void)
{
	const char *two = "  <ul class=list><li>One</li><li data-x='a b'>2</li><li>Three</li></ul>\n";
	const char *sels[] = { "li:nth-of-type(2)", "ul > li:nth-of-type(2)", "body ul li[data-x]", "[data-x=\"a b\"]",
			       "li[data-x~=b]", "li[data-x^=a]", "li[data-x$=b]", "li[data-x*=' ']", "ul.list > li[data-x]",
			       "html body > ul li:nth-of-type(2)", "*[data-x]" };
	size_t i;

	for (i = 0; i < sizeof sels / sizeof sels[0]; i++) {
		struct svc_ds_patch p = { sels[i], "text", "2" };
		struct result r;
		run(&r, SVC_DS_HTML, PAGE, &p, 1);
		CU_ASSERT_EQUAL(r.err, 0);
		CU_ASSERT_PTR_NOT_NULL(r.out ? strstr(r.out, two) : NULL);
		done(&r);
	}
	/* several, none, and selectors this editor does not take */
	html1(PAGE, "li", "text", "x", NULL);
	html1(PAGE, "body > li", "text", "x", NULL);
	html1(PAGE, "#nope", "text", "x", NULL);
	html1(PAGE, "li:nth-of-type(4)", "text", "x", NULL);
	html1(PAGE, "li:nth-of-type(0)", "text", "x", NULL);
	html1(PAGE, "li:first-child", "text", "x", NULL);
	html1(PAGE, "h1, p", "text", "x", NULL);
	html1(PAGE, "h1 + ul", "text", "x", NULL);
	html1(PAGE, "", "text", "x", NULL);
	html1(PAGE, "ul >", "text", "x", NULL);
	html1(PAGE, "[data-x", "text", "x", NULL);
	html1(PAGE, "p::before", "text", "x", NULL);
}

static void test_direct_save_refusals(void)
{
	html1(PAGE, "a", "onclick", "alert(1)", NULL);
	html1(PAGE, "a", "OnMouseOver", "alert(1)", NULL);
	html1(PAGE, "a", "href", "javascript:alert(1)", NULL);
	html1(PAGE, "a", "href", " JaVa\tScRiPt:alert(1)", NULL);
	html1(PAGE, "a", "href", "vbscript:x", NULL);
	html1(PAGE, "a", "href", "data:text/html,<script>", NULL);
	html1(PAGE, "a", "style", "color:red", NULL);
	html1(PAGE, "a", "srcdoc", "<b>", NULL);
	html1(PAGE, "a", "bad name", "x", NULL);
	html1(PAGE, "a", "x\"y", "x", NULL);
	html1(PAGE, "p", "style.color", "red; background: url(javascript:x)", NULL);
	html1(PAGE, "p", "style.color", "expression(alert(1))", NULL);
	html1(PAGE, "p", "style.co lor", "red", NULL);
	html1(PAGE, "title", "text", "x", "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n  <title>x</title>"
					  "\n</head>\n<body>\n"
					  "  <h1 id=\"title\" class=\"big  red\">Hello <b>you</b></h1>\n"
					  "  <ul class=list><li>One</li><li data-x='a b'>Two</li><li>Three</li></ul>\n"
					  "  <a href='old.html' title=x>link</a>\n  <img src=\"a.png\">\n  <input disabled>\n"
					  "  <p style=\"color: red;margin:0\">para</p>\n</body>\n</html>\n");
	/* no end tag, inferred elements, code */
	html1("<ul><li>a<li>b</ul>", "li:nth-of-type(1)", "text", "x", NULL);
	html1("<p>no html tag</p>", "body", "class", "x", NULL);
	html1("<div><script>var a;</script></div>", "script", "text", "x", NULL);
	html1("<div><style>p{}</style></div>", "style", "text", "x", NULL);
}

static void test_direct_save_patches_apply_in_order_and_fail_as_a_whole(void)
{
	struct svc_ds_patch ok[2] = { { "h1", "class", "new" }, { ".new", "text", "Renamed" } };
	struct svc_ds_patch bad[3] = { { "h1", "text", "changed" }, { "p", "title", "t" }, { "li", "text", "x" } };
	struct result r;

	run(&r, SVC_DS_HTML, PAGE, ok, 2);
	CU_ASSERT_EQUAL(r.err, 0);
	CU_ASSERT_PTR_NOT_NULL(r.out ? strstr(r.out, "<h1 id=\"title\" class=\"new\">Renamed</h1>") : NULL);
	CU_ASSERT_STRING_EQUAL(r.ch[1].old_value ? r.ch[1].old_value : "", "Hello you");
	done(&r);
	run(&r, SVC_DS_HTML, PAGE, bad, 3);
	CU_ASSERT_EQUAL(r.err, SVC_E_VALIDATION);
	CU_ASSERT_EQUAL(r.failed, 2);
	CU_ASSERT_PTR_NULL(r.out);
	CU_ASSERT(strstr(r.msg, "patch 2") != NULL && strstr(r.msg, "3 elements") != NULL);
	done(&r);
}

#define CSS "/* site */\nbody { margin: 0; color: #333 }\n.card,\n.panel {\n  padding: 4px;\n  color: red\n}\n" \
	"@media (max-width: 600px) {\n  .nav { display: none; }\n}\n@font-face { font-family: x; src: url(a.woff) }\n" \
	"h1 { }\n.x { color: red; color: blue; }\n"

static void css1(const char *sel, const char *prop, const char *val, const char *want_fragment, const char *old)
{
	struct svc_ds_patch p = { sel, prop, val };
	struct result r;

	run(&r, SVC_DS_CSS, CSS, &p, 1);
	if (want_fragment) {
		CU_ASSERT_EQUAL(r.err, 0);
		CU_ASSERT_PTR_NOT_NULL(r.out ? strstr(r.out, want_fragment) : NULL);
		if (old) {
			CU_ASSERT_STRING_EQUAL(r.ch[0].old_value ? r.ch[0].old_value : "(none)", old);
		} else {
			CU_ASSERT_PTR_NULL(r.ch[0].old_value);
		}
		/* everything before the rule is untouched */
		CU_ASSERT(r.out && strncmp(r.out, "/* site */\n", 11) == 0);
	} else {
		CU_ASSERT_EQUAL(r.err, SVC_E_VALIDATION);
		CU_ASSERT_PTR_NULL(r.out);
	}
	done(&r);
}

static void test_direct_save_css_rules(void)
{
	css1("body", "color", "#000", "body { margin: 0; color: #000 }\n.card", "#333");
	css1("body", "padding", "1em", "body { margin: 0; color: #333; padding: 1em; }\n", NULL);
	css1(".card, .panel", "color", "green", "  padding: 4px;\n  color: green\n}", "red");
	css1(".card,\n  .panel", "margin", "0", "  color: red;\n  margin: 0;\n}", NULL);
	css1(".nav", "display", "block", "  .nav { display: block; }\n", "none");
	css1("h1", "color", "red", "h1 { color: red; }\n", NULL);
	css1(".x", "color", "green", ".x { color: red; color: green; }", "blue");
	css1("BODY", "color", "red", NULL, NULL);
	css1(".nope", "color", "red", NULL, NULL);
	css1("body", "color", "red; } script { x", NULL, NULL);
	css1("body", "color", "", NULL, NULL);
	css1("body", "col or", "red", NULL, NULL);
	css1("body", "background", "url(javascript:alert(1))", NULL, NULL);
	css1("body {", "color", "red", NULL, NULL);
	/* @font-face has declarations, not rules; selector text never matches inside it */
	css1("font-family", "x", "y", NULL, NULL);
}

static void test_direct_save_kind_of(void)
{
	CU_ASSERT_EQUAL(svc_ds_kind_of("index.html"), SVC_DS_HTML);
	CU_ASSERT_EQUAL(svc_ds_kind_of("a/b/page.HTM"), SVC_DS_HTML);
	CU_ASSERT_EQUAL(svc_ds_kind_of("style.css"), SVC_DS_CSS);
	CU_ASSERT_EQUAL(svc_ds_kind_of("app.js"), SVC_DS_NONE);
	CU_ASSERT_EQUAL(svc_ds_kind_of("html"), SVC_DS_NONE);
	CU_ASSERT_EQUAL(svc_ds_kind_of("a.css/x"), SVC_DS_NONE);
}

SVC_TEST_SUITE(direct_save)
{
	CU_pSuite s = CU_add_suite("direct_save", NULL, NULL);

	CU_add_test(s, "test_direct_save_text_replaces_only_the_content", test_direct_save_text_replaces_only_the_content);
	CU_add_test(s, "test_direct_save_attribute_replace_add_and_valueless",
		    test_direct_save_attribute_replace_add_and_valueless);
	CU_add_test(s, "test_direct_save_class_and_style", test_direct_save_class_and_style);
	CU_add_test(s, "test_direct_save_selectors", test_direct_save_selectors);
	CU_add_test(s, "test_direct_save_refusals", test_direct_save_refusals);
	CU_add_test(s, "test_direct_save_patches_apply_in_order_and_fail_as_a_whole",
		    test_direct_save_patches_apply_in_order_and_fail_as_a_whole);
	CU_add_test(s, "test_direct_save_css_rules", test_direct_save_css_rules);
	CU_add_test(s, "test_direct_save_kind_of", test_direct_save_kind_of);
}
