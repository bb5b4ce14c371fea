/* test_preview_check.c: the preview check (lib/project/preview_check.c) with the real Chromium in the thumbnails' sandbox. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <CUnit/CUnit.h>

#include "core/err.h"
#include "core/fsx.h"
#include "core/util.h"
#include "project/preview_check.h"
#include "unit.h"

static const struct svc_thumb_sandbox sandbox = { "/usr/bin/bwrap", 65533, 2048, 256, 100, NULL };

static int put(const char *dir, const char *name, const char *text)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof path, "%s/%s", dir, name);
	if (!(f = fopen(path, "w")))
		return -1;
	fputs(text, f);
	fclose(f);
	return 0;
}

/* The error of kind `kind` whose message holds `needle`, or NULL. */
static const struct svc_check_error *find(const struct svc_check_report *r, const char *kind, const char *needle)
{
	size_t i;

	for (i = 0; i < r->nerrors; i++)
		if (strcmp(r->errors[i].kind, kind) == 0 && strstr(r->errors[i].message, needle))
			return &r->errors[i];
	return NULL;
}

static int have_chromium(void)
{
	if (access("/usr/bin/chromium", X_OK) == 0 && access(sandbox.bwrap, X_OK) == 0)
		return 1;
	fprintf(stderr, "test_preview_check: chromium or bwrap not installed; the check is not run\n");
	return 0;
}

static void test_preview_check_add_keeps_each_error_once_and_counts_the_rest(void)
{
	struct svc_check_report r;
	char big[2000];
	int i;

	memset(&r, 0, sizeof r);
	svc_preview_check_add(&r, "console", "a", "/x.js", 3);
	svc_preview_check_add(&r, "console", "a", "/x.js", 3);
	CU_ASSERT_EQUAL(r.nerrors, 1);
	memset(big, 'y', sizeof big - 1);
	big[sizeof big - 1] = '\0';
	svc_preview_check_add(&r, "exception", big, "/x.js", -2);
	CU_ASSERT_EQUAL(strlen(r.errors[1].message), SVC_CHECK_MESSAGE_MAX - 1);
	CU_ASSERT_EQUAL(r.errors[1].line, 0);
	for (i = 0; i < SVC_CHECK_ERRORS_MAX + 3; i++) {
		char m[16];
		snprintf(m, sizeof m, "m%d", i);
		svc_preview_check_add(&r, "console", m, "", 0);
	}
	CU_ASSERT_EQUAL(r.nerrors, SVC_CHECK_ERRORS_MAX);
	CU_ASSERT_EQUAL(r.more, 5);
	svc_preview_check_dispose(&r);
}

static void test_preview_check_no_index_is_not_found(void)
{
	char dir[] = "/tmp/svc-check-test-XXXXXX", why[256];
	struct svc_check_report r;

	memset(&r, 0, sizeof r);
	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
	CU_ASSERT_EQUAL(svc_preview_check_run("chromium", &sandbox, dir, 5000, 500, NULL, NULL, &r, why, sizeof why),
			SVC_E_NOT_FOUND);
	svc_preview_check_dispose(&r);
	svc_fsx_remove_tree(dir);
}

/*
 * A page whose script throws on line 4, logs a console.error, leaves a promise rejected, and
 * asks for a missing image and a missing script of its own origin (and an image of another
 * host, which is no error of the preview's): each is reported with its source and line, and the
 * screenshot is a PNG of the page's size.
 */
static void test_preview_check_reports_the_page_errors_and_a_screenshot(void)
{
	char dir[] = "/tmp/svc-check-test-XXXXXX", why[256];
	struct svc_check_report r;
	const struct svc_check_error *e;
	int err;

	if (!have_chromium())
		return;
	memset(&r, 0, sizeof r);
	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
	CU_ASSERT_EQUAL(put(dir, "index.html",
			    "<!doctype html><html><body><h1>Hi</h1>\n<img src=\"missing.png\">\n"
			    "<img src=\"http://elsewhere.example/x.png\">\n<script src=\"app.js\"></script>\n"
			    "<script src=\"gone.js\"></script>\n</body></html>\n"), 0);
	CU_ASSERT_EQUAL(put(dir, "app.js",
			    "// app\nconsole.error('the list is empty');\nPromise.reject(new Error('no data'));\n"
			    "undefinedFunction();\n"), 0);
	err = svc_preview_check_run("chromium", &sandbox, dir, 60000, 1000, NULL, NULL, &r, why, sizeof why);
	CU_ASSERT_EQUAL(err, 0);
	if (err)
		fprintf(stderr, "test_preview_check: %s\n", why);
	CU_ASSERT(r.loaded);
	e = find(&r, "exception", "undefinedFunction is not defined");
	CU_ASSERT_PTR_NOT_NULL(e);
	if (e) {
		CU_ASSERT_STRING_EQUAL(e->source, "/app.js");
		CU_ASSERT_EQUAL(e->line, 4);
	}
	e = find(&r, "console", "the list is empty");
	CU_ASSERT(e && strcmp(e->source, "/app.js") == 0 && e->line == 2);
	CU_ASSERT_PTR_NOT_NULL(find(&r, "rejection", "no data"));
	e = find(&r, "request", "/missing.png");
	CU_ASSERT(e && strstr(e->message, "404") && strcmp(e->source, "/missing.png") == 0);
	CU_ASSERT_PTR_NOT_NULL(find(&r, "request", "/gone.js"));
	CU_ASSERT_PTR_NULL(find(&r, "request", "elsewhere"));
	CU_ASSERT(r.png && r.png_len > 24 && memcmp(r.png, "\x89PNG", 4) == 0 && r.png_base64);
	if (r.png && r.png_len > 24) { /* IHDR: width and height, big-endian, at bytes 16 and 20 */
		unsigned w = (unsigned)r.png[16] << 24 | (unsigned)r.png[17] << 16 | (unsigned)r.png[18] << 8 | r.png[19];
		unsigned h = (unsigned)r.png[20] << 24 | (unsigned)r.png[21] << 16 | (unsigned)r.png[22] << 8 | r.png[23];
		CU_ASSERT(w == SVC_CHECK_SHOT_W && h == SVC_CHECK_SHOT_H);
	}
	svc_preview_check_dispose(&r);
	svc_fsx_remove_tree(dir);
}

/* A clean page: no error at all, and the check ends after the quiet, not at its deadline. */
static void test_preview_check_clean_page_has_no_errors(void)
{
	char dir[] = "/tmp/svc-check-test-XXXXXX", why[256];
	struct svc_check_report r;
	int64_t t0;
	int err;

	if (!have_chromium())
		return;
	memset(&r, 0, sizeof r);
	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
	CU_ASSERT_EQUAL(put(dir, "index.html", "<!doctype html><html><body><p>fine</p><script>1 + 1;</script></body></html>"),
			0);
	t0 = svc_mono_ms();
	err = svc_preview_check_run("chromium", &sandbox, dir, 60000, 1000, NULL, NULL, &r, why, sizeof why);
	CU_ASSERT_EQUAL(err, 0);
	if (err)
		fprintf(stderr, "test_preview_check: %s\n", why);
	CU_ASSERT(r.loaded);
	CU_ASSERT_EQUAL(r.nerrors, 0);
	if (r.nerrors)
		fprintf(stderr, "test_preview_check: %s %s %s\n", r.errors[0].kind, r.errors[0].message, r.errors[0].source);
	CU_ASSERT(svc_mono_ms() - t0 < 55000);
	CU_ASSERT_PTR_NOT_NULL(r.png);
	svc_preview_check_dispose(&r);
	svc_fsx_remove_tree(dir);
}

/* The PNG's width and height (IHDR), or 0 x 0. */
static void png_size(const struct svc_check_report *r, unsigned *w, unsigned *h)
{
	*w = *h = 0;
	if (!r->png || r->png_len < 24)
		return;
	*w = (unsigned)r->png[16] << 24 | (unsigned)r->png[17] << 16 | (unsigned)r->png[18] << 8 | r->png[19];
	*h = (unsigned)r->png[20] << 24 | (unsigned)r->png[21] << 16 | (unsigned)r->png[22] << 8 | r->png[23];
}

/* The Select element image: the element's box, found on the page named, below the fold too; none when absent. */
static void test_preview_check_element_shot_is_the_elements_box(void)
{
	char dir[] = "/tmp/svc-check-test-XXXXXX", why[256];
	struct svc_check_report r;
	unsigned w, h;
	int err;

	if (!have_chromium())
		return;
	memset(&r, 0, sizeof r);
	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
	CU_ASSERT_EQUAL(put(dir, "index.html", "<!doctype html><p>home</p>"), 0);
	CU_ASSERT_EQUAL(put(dir, "about.html",
			    "<!doctype html><html><body style=\"margin:0\"><div style=\"height:1500px\"></div>"
			    "<div class=\"card\" style=\"width:200px;height:100px;background:#c00\">Card</div></body></html>"), 0);
	err = svc_preview_element_run("chromium", &sandbox, dir, "/about.html", "div.card", 60000, &r, why, sizeof why);
	CU_ASSERT_EQUAL(err, 0);
	if (err)
		fprintf(stderr, "test_preview_check: %s\n", why);
	png_size(&r, &w, &h);
	CU_ASSERT(w == 200 && h == 100);
	svc_preview_check_dispose(&r);
	memset(&r, 0, sizeof r);
	CU_ASSERT_EQUAL(svc_preview_element_run("chromium", &sandbox, dir, "/about.html", "#nothing", 60000, &r, why,
						sizeof why), SVC_E_NOT_FOUND);
	CU_ASSERT_PTR_NULL(r.png);
	svc_preview_check_dispose(&r);
	svc_fsx_remove_tree(dir);
}

/* ---- a failed build's output (svc_preview_check_build_log) ---- */

/* Vite 6's output for a syntax error in a .tsx file, as the build's log has it (the sandbox's /build, CI=1 colours). */
static const char vite_syntax[] =
	"$ npm run build --ignore-scripts (no network)\n"
	"\n> react-app@0.0.0 build\n> vite build\n\n"
	"\x1b[36mvite v6.4.6 \x1b[32mbuilding for production...\x1b[36m\x1b[39m\n"
	"transforming...\n"
	"\x1b[32m\xe2\x9c\x93\x1b[39m 3 modules transformed.\n"
	"\x1b[31m\xe2\x9c\x97\x1b[39m Build failed in 58ms\n"
	"\x1b[31merror during build:\n"
	"\x1b[31m[vite:esbuild] Transform failed with 1 error:\n"
	"/build/src/App.tsx:7:46: ERROR: Expected \")\" but found \"}\"\x1b[31m\n"
	"file: \x1b[36m/build/src/App.tsx:7:46\x1b[31m\n"
	"\x1b[33m\n"
	"\x1b[33mExpected \")\" but found \"}\"\x1b[33m\n"
	"5  |        <h1 className=\"text-2xl font-bold\">Recipes</h1>\n"
	"7  |          {items.map((i) => <li key={i}>{i}</li>}\n"
	"   |                                                ^\n"
	"\x1b[31m\n"
	"    at failureErrorWithLog (/build/node_modules/esbuild/lib/main.js:1467:15)\n"
	"    at /build/node_modules/esbuild/lib/main.js:736:50\x1b[39m\n"
	"npm run build exited with status 1\n";

/* Vite's (Rollup's) unresolved import: a file, no line; as svc_publish_clean_text() leaves it (ESC as '?'). */
static const char vite_resolve[] =
	"?[31merror during build:\n"
	"?[31mCould not resolve \"./components/Missing\" from \"src/App.tsx\"?[31m\n"
	"file: ?[36m/build/src/App.tsx?[31m\n"
	"    at getRollupError (file:///build/node_modules/rollup/dist/es/shared/parseAst.js:355:41)\n"
	"    at file:///build/node_modules/rollup/dist/es/shared/node-entry.js:23654:26?[39m\n"
	"npm run build exited with status 1\n";

/* Vite's two failures: a syntax error (esbuild's file and line), an unresolved import (a file, no line). */
static void test_preview_check_build_log_vite_errors_have_their_file_and_line(void)
{
	static const struct {
		const char *log, *message, *source;
		int line;
	} cases[] = {
		{ vite_syntax, "Expected \")\" but found \"}\"", "src/App.tsx", 7 },
		{ vite_resolve, "Could not resolve \"./components/Missing\" from \"src/App.tsx\"", "src/App.tsx", 0 },
	};
	struct svc_check_report r;
	size_t i;

	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		memset(&r, 0, sizeof r);
		CU_ASSERT_EQUAL(svc_preview_check_build_log(cases[i].log, strlen(cases[i].log), "/build/", &r), 1);
		CU_ASSERT_EQUAL_FATAL(r.nerrors, 1);
		CU_ASSERT_STRING_EQUAL(r.errors[0].kind, "build");
		CU_ASSERT_STRING_EQUAL(r.errors[0].message, cases[i].message);
		CU_ASSERT_STRING_EQUAL(r.errors[0].source, cases[i].source);
		CU_ASSERT_EQUAL(r.errors[0].line, cases[i].line);
	}
}

static void test_preview_check_build_log_tsc_and_esbuild_formats(void)
{
	static const char log[] =
		"src/App.tsx(1,21): error TS2307: Cannot find module './components/Missing' or its corresponding type "
		"declarations.\n"
		"\x1b[96msrc/t.ts\x1b[0m:\x1b[93m12\x1b[0m:\x1b[93m7\x1b[0m - \x1b[91merror\x1b[0m\x1b[90m TS2322: \x1b[0mType "
		"'string' is not assignable to type 'number'.\n"
		"\n"
		"\xe2\x9c\x98 [ERROR] Expected \";\" but found \"x\"\n"
		"\n"
		"    ./src/main.ts:3:8:\n"
		"      3 \xe2\x94\x82 let a b\n"
		"./lib/x.js:40:2: ERROR:   Unterminated string literal   \n";
	struct svc_check_report r;

	memset(&r, 0, sizeof r);
	CU_ASSERT_EQUAL(svc_preview_check_build_log(log, strlen(log), "/build/", &r), 4);
	CU_ASSERT_EQUAL_FATAL(r.nerrors, 4);
	CU_ASSERT_STRING_EQUAL(r.errors[0].source, "src/App.tsx");
	CU_ASSERT_EQUAL(r.errors[0].line, 1);
	CU_ASSERT_STRING_EQUAL(r.errors[0].message,
			       "TS2307: Cannot find module './components/Missing' or its corresponding type declarations.");
	CU_ASSERT_STRING_EQUAL(r.errors[1].source, "src/t.ts");
	CU_ASSERT_EQUAL(r.errors[1].line, 12);
	CU_ASSERT_STRING_EQUAL(r.errors[1].message, "TS2322: Type 'string' is not assignable to type 'number'.");
	CU_ASSERT_STRING_EQUAL(r.errors[2].source, "src/main.ts");
	CU_ASSERT_EQUAL(r.errors[2].line, 3);
	CU_ASSERT_STRING_EQUAL(r.errors[2].message, "Expected \";\" but found \"x\"");
	CU_ASSERT_STRING_EQUAL(r.errors[3].source, "lib/x.js");
	CU_ASSERT_EQUAL(r.errors[3].line, 40);
	CU_ASSERT_STRING_EQUAL(r.errors[3].message, "Unterminated string literal");
}

static void test_preview_check_build_log_without_a_file(void)
{
	static const char npm[] = "$ npm ci --ignore-scripts (the registry only)\n"
				  "npm error code E404\n"
				  "npm error 404 Not Found - GET https://registry.npmjs.org/no-such-pkg - Not found\n"
				  "npm error A complete log of this run can be found in: /build/.svc-home/x.log\n"
				  "npm ci exited with status 1\n";
	static const char plain[] = "$ npm run build (no network)\nSegmentation fault\nnpm run build exited with status 139\n";
	static const char unplaced[] = "\xe2\x9c\x98 [ERROR] Cannot use JSX\nerror during build:\nboom\nfile: /build/src/d.tsx:2:3\n";
	struct svc_check_report r;
	char big[3000];
	size_t i;

	memset(&r, 0, sizeof r);
	CU_ASSERT_EQUAL(svc_preview_check_build_log(npm, strlen(npm), "/build/", &r), 1);
	CU_ASSERT_EQUAL_FATAL(r.nerrors, 1);
	CU_ASSERT_STRING_EQUAL(r.errors[0].message,
			       "npm error 404 Not Found - GET https://registry.npmjs.org/no-such-pkg - Not found");
	CU_ASSERT_STRING_EQUAL(r.errors[0].source, "");
	CU_ASSERT_EQUAL(r.errors[0].line, 0);
	memset(&r, 0, sizeof r);
	CU_ASSERT_EQUAL(svc_preview_check_build_log(plain, strlen(plain), "/build/", &r), 0);
	CU_ASSERT_EQUAL(r.nerrors, 0);
	CU_ASSERT_EQUAL(svc_preview_check_build_log(NULL, 0, "/build/", &r), 0);
	/* a long message is cut to the report's field; a path with a space is no location */
	memset(big, 'm', sizeof big);
	memcpy(big, "src/a.ts:1:1: ERROR: ", 21);
	memcpy(big + sizeof big - 40, "\nmy file.ts:2:3: ERROR: spaced\n", 31);
	CU_ASSERT_EQUAL(svc_preview_check_build_log(big, sizeof big - 9, "/build/", &r), 1);
	CU_ASSERT_EQUAL_FATAL(r.nerrors, 1);
	CU_ASSERT_EQUAL(strlen(r.errors[0].message), SVC_CHECK_MESSAGE_MAX - 1);
	CU_ASSERT_STRING_EQUAL(r.errors[0].source, "src/a.ts");
	/* a line longer than is read, of two-byte characters: cut between them, never inside one */
	memset(&r, 0, sizeof r);
	memcpy(big, "src/b.ts:1:1: ERROR: xy", 23); /* 2 + 2n bytes of message: its 511th is inside a character */
	for (i = 23; i + 2 < sizeof big; i += 2)
		memcpy(big + i, "\xc3\xa9", 2);
	CU_ASSERT_EQUAL(svc_preview_check_build_log(big, i, "/build/", &r), 1);
	CU_ASSERT_EQUAL_FATAL(r.nerrors, 1);
	CU_ASSERT(svc_utf8_valid(r.errors[0].message, strlen(r.errors[0].message)));
	/* esbuild's message whose next line is no place: that line is read for itself */
	memset(&r, 0, sizeof r);
	CU_ASSERT_EQUAL(svc_preview_check_build_log(unplaced, strlen(unplaced), "/build/", &r), 1);
	CU_ASSERT_EQUAL_FATAL(r.nerrors, 1);
	CU_ASSERT_STRING_EQUAL(r.errors[0].message, "boom");
	CU_ASSERT_STRING_EQUAL(r.errors[0].source, "src/d.tsx");
	CU_ASSERT_EQUAL(r.errors[0].line, 2);
}

SVC_TEST_SUITE(preview_check)
{
	CU_pSuite s = CU_add_suite("preview_check", NULL, NULL);

	CU_add_test(s, "test_preview_check_add_keeps_each_error_once_and_counts_the_rest",
		    test_preview_check_add_keeps_each_error_once_and_counts_the_rest);
	CU_add_test(s, "test_preview_check_no_index_is_not_found", test_preview_check_no_index_is_not_found);
	CU_add_test(s, "test_preview_check_reports_the_page_errors_and_a_screenshot",
		    test_preview_check_reports_the_page_errors_and_a_screenshot);
	CU_add_test(s, "test_preview_check_clean_page_has_no_errors", test_preview_check_clean_page_has_no_errors);
	CU_add_test(s, "test_preview_check_element_shot_is_the_elements_box", test_preview_check_element_shot_is_the_elements_box);
	CU_add_test(s, "test_preview_check_build_log_vite_errors_have_their_file_and_line",
		    test_preview_check_build_log_vite_errors_have_their_file_and_line);
	CU_add_test(s, "test_preview_check_build_log_tsc_and_esbuild_formats", test_preview_check_build_log_tsc_and_esbuild_formats);
	CU_add_test(s, "test_preview_check_build_log_without_a_file", test_preview_check_build_log_without_a_file);
}
