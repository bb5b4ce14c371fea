/* test_fsx.c: CUnit suite "fsx": path confinement traps, atomic writes, list, search, trees, content types. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/err.h"
#include "core/fsx.h"
#include "core/util.h"
#include "unit.h"

/* A scratch area: base/root is the project root, base/outside a directory beside it. */
struct scratch {
	char base[64];
	char root[96];
	char outside[96];
};

static void scratch_open(struct scratch *s)
{
	char tmpl[] = "/tmp/svc-fsx-XXXXXX";

	CU_ASSERT_FATAL(mkdtemp(tmpl) != NULL);
	snprintf(s->base, sizeof s->base, "%s", tmpl);
	snprintf(s->root, sizeof s->root, "%s/root", tmpl);
	snprintf(s->outside, sizeof s->outside, "%s/outside", tmpl);
	CU_ASSERT_FATAL(mkdir(s->root, 0755) == 0);
	CU_ASSERT_FATAL(mkdir(s->outside, 0755) == 0);
}

static void scratch_close(struct scratch *s)
{
	CU_ASSERT(svc_fsx_remove_tree(s->base) == SVC_OK);
}

/* Writes `text` to dir/name with plain stdio (test setup, not the code under test). */
static void put(const char *dir, const char *name, const char *text)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof path, "%s/%s", dir, name);
	f = fopen(path, "w");
	CU_ASSERT_FATAL(f != NULL);
	fputs(text, f);
	fclose(f);
}

/* Returns 1 when dir/name holds exactly `text`. */
static int holds(const char *dir, const char *name, const char *text)
{
	char path[512], buf[4096];
	size_t n;
	FILE *f;

	snprintf(path, sizeof path, "%s/%s", dir, name);
	if (!(f = fopen(path, "r")))
		return 0;
	n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = '\0';
	return n == strlen(text) && memcmp(buf, text, n) == 0;
}

static int exists(const char *dir, const char *name)
{
	char path[512];
	struct stat st;

	snprintf(path, sizeof path, "%s/%s", dir, name);
	return lstat(path, &st) == 0;
}

static void link_to(const char *target, const char *dir, const char *name)
{
	char path[512];

	snprintf(path, sizeof path, "%s/%s", dir, name);
	CU_ASSERT_FATAL(symlink(target, path) == 0);
}

/* Number of entries of `dir` other than . and .. (to spot leftover temporary files). */
static int count_entries(const char *dir)
{
	struct dirent *de;
	DIR *d = opendir(dir);
	int n = 0;

	if (!d)
		return -1;
	while ((de = readdir(d)) != NULL)
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			n++;
	closedir(d);
	return n;
}

static void test_fsx_check_path_normalises(void)
{
	char out[SVC_FSX_PATH_MAX + 1];

	CU_ASSERT(svc_fsx_check_path("a//./b", out) == SVC_OK);
	CU_ASSERT_STRING_EQUAL(out, "a/b");
	CU_ASSERT(svc_fsx_check_path("./src/app.js/", out) == SVC_OK);
	CU_ASSERT_STRING_EQUAL(out, "src/app.js");
	CU_ASSERT(svc_fsx_check_path("caf\xc3\xa9/\xe6\x97\xa5.txt", out) == SVC_OK);
	CU_ASSERT_STRING_EQUAL(out, "caf\xc3\xa9/\xe6\x97\xa5.txt");
	CU_ASSERT(svc_fsx_check_path(".gitignore", out) == SVC_OK);
	CU_ASSERT(svc_fsx_check_path("a/...", out) == SVC_OK);
	CU_ASSERT(svc_fsx_check_path("x.git/y", out) == SVC_OK);
}

static void test_fsx_check_path_refuses(void)
{
	static const char *const bad[] = {
		"", ".", "./", "/", "..", "../x", "a/../../x", "a/..", "/etc/passwd", "//x",
		".git", ".git/config", "x/.GIT/y", "a/.Git", "a\\b", "..\\x", "a\x01z", "a\nb",
		"a\x7f", "\xff", "\xc0\xaf", "\xed\xa0\x80", "\xe6\x97", "a\xc2\x85z",
	};
	char out[SVC_FSX_PATH_MAX + 1];
	size_t i;

	for (i = 0; i < sizeof bad / sizeof bad[0]; i++)
		CU_ASSERT(svc_fsx_check_path(bad[i], out) == SVC_E_VALIDATION);
	CU_ASSERT(svc_fsx_check_path(NULL, out) == SVC_E_VALIDATION);
}

static void test_fsx_check_path_length_limit(void)
{
	char out[SVC_FSX_PATH_MAX + 1];
	char *p = malloc(SVC_FSX_PATH_MAX + 1);

	CU_ASSERT_FATAL(p != NULL);
	/* exactly the maximum is accepted */
	memset(p, 'a', SVC_FSX_PATH_MAX);
	p[SVC_FSX_PATH_MAX] = '\0';
	CU_ASSERT(svc_fsx_check_path(p, out) == SVC_OK);
	CU_ASSERT(strlen(out) == SVC_FSX_PATH_MAX);
	/* one more byte and no terminator inside the buffer: refused without reading past it (ASan) */
	p[SVC_FSX_PATH_MAX] = 'a';
	CU_ASSERT(svc_fsx_check_path(p, out) == SVC_E_VALIDATION);
	free(p);
}

static void test_fsx_nul_cuts_the_path(void)
{
	struct scratch s;
	/* a C API sees only what comes before a NUL: the rest cannot escape */
	static const char rel[] = "ok.txt\0/../../outside/evil";

	scratch_open(&s);
	CU_ASSERT(sizeof rel > strlen(rel) + 1);
	CU_ASSERT(svc_fsx_write(s.root, rel, "x", 1) == SVC_OK);
	CU_ASSERT(holds(s.root, "ok.txt", "x"));
	CU_ASSERT(count_entries(s.outside) == 0);
	CU_ASSERT(svc_fsx_write(s.root, "\0../outside/evil", "x", 1) == SVC_E_VALIDATION);
	CU_ASSERT(count_entries(s.outside) == 0);
	scratch_close(&s);
}

static void test_fsx_traversal_refused(void)
{
	static const char *const bad[] = { "..", "../outside/secret", "a/../../outside/secret",
					   "/etc/passwd", ".git/config", "x/.GIT/y" };
	struct scratch s;
	char path[256], *buf = NULL;
	size_t i, len;

	scratch_open(&s);
	put(s.outside, "secret", "keep");
	snprintf(path, sizeof path, "%s/secret", s.outside);
	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		CU_ASSERT(svc_fsx_read(s.root, bad[i], 1024, &buf, &len) == SVC_E_VALIDATION);
		CU_ASSERT(svc_fsx_write(s.root, bad[i], "gone", 4) == SVC_E_VALIDATION);
		CU_ASSERT(svc_fsx_delete(s.root, bad[i]) == SVC_E_VALIDATION);
	}
	CU_ASSERT(svc_fsx_read(s.root, path, 1024, &buf, &len) == SVC_E_VALIDATION);
	CU_ASSERT(buf == NULL);
	CU_ASSERT(holds(s.outside, "secret", "keep"));
	CU_ASSERT(count_entries(s.root) == 0);
	scratch_close(&s);
}

static void test_fsx_symlink_file_refused(void)
{
	struct scratch s;
	char target[256], *buf = NULL;
	size_t len;

	scratch_open(&s);
	put(s.outside, "secret", "keep");
	snprintf(target, sizeof target, "%s/secret", s.outside);
	link_to(target, s.root, "link");
	link_to("../outside/secret", s.root, "rel-link");
	put(s.root, "inside", "in");
	link_to("inside", s.root, "inner-link"); /* even a link that stays inside */

	CU_ASSERT(svc_fsx_read(s.root, "link", 1024, &buf, &len) == SVC_E_VALIDATION);
	CU_ASSERT(svc_fsx_read(s.root, "rel-link", 1024, &buf, &len) == SVC_E_VALIDATION);
	CU_ASSERT(svc_fsx_read(s.root, "inner-link", 1024, &buf, &len) == SVC_E_VALIDATION);
	CU_ASSERT(buf == NULL);
	CU_ASSERT(svc_fsx_write(s.root, "link", "gone", 4) == SVC_E_VALIDATION);
	CU_ASSERT(svc_fsx_write(s.root, "rel-link", "gone", 4) == SVC_E_VALIDATION);
	CU_ASSERT(svc_fsx_delete(s.root, "link") == SVC_E_VALIDATION);
	CU_ASSERT(svc_fsx_delete(s.root, "rel-link") == SVC_E_VALIDATION);
	CU_ASSERT(holds(s.outside, "secret", "keep"));
	CU_ASSERT(exists(s.root, "link"));
	CU_ASSERT(exists(s.root, "rel-link"));
	CU_ASSERT(count_entries(s.root) == 4); /* no temporary file left behind */
	scratch_close(&s);
}

static void test_fsx_symlink_dir_component_refused(void)
{
	struct scratch s;
	char *buf = NULL;
	size_t len;

	scratch_open(&s);
	put(s.outside, "secret", "keep");
	link_to(s.outside, s.root, "dir");
	CU_ASSERT(svc_fsx_read(s.root, "dir/secret", 1024, &buf, &len) == SVC_E_VALIDATION);
	CU_ASSERT(buf == NULL);
	CU_ASSERT(svc_fsx_write(s.root, "dir/secret", "gone", 4) == SVC_E_VALIDATION);
	CU_ASSERT(svc_fsx_write(s.root, "dir/new/file", "x", 1) == SVC_E_VALIDATION);
	CU_ASSERT(svc_fsx_delete(s.root, "dir/secret") == SVC_E_VALIDATION);
	CU_ASSERT(holds(s.outside, "secret", "keep"));
	CU_ASSERT(count_entries(s.outside) == 1);
	scratch_close(&s);
}

static void test_fsx_write_nested_creates_dirs(void)
{
	struct scratch s;
	char path[256], *buf = NULL;
	struct stat st;
	size_t len = 0;

	scratch_open(&s);
	CU_ASSERT(svc_fsx_write(s.root, "a/b/c.txt", "hello\n", 6) == SVC_OK);
	CU_ASSERT(holds(s.root, "a/b/c.txt", "hello\n"));
	snprintf(path, sizeof path, "%s/a/b", s.root);
	CU_ASSERT(stat(path, &st) == 0 && S_ISDIR(st.st_mode));
	CU_ASSERT(count_entries(path) == 1); /* the temporary file was renamed, not left */
	CU_ASSERT(svc_fsx_read(s.root, "a//b/./c.txt", 1024, &buf, &len) == SVC_OK);
	CU_ASSERT(len == 6 && buf && strcmp(buf, "hello\n") == 0);
	free(buf);
	/* binary data with NULs round-trips */
	CU_ASSERT(svc_fsx_write(s.root, "bin", "a\0b", 3) == SVC_OK);
	buf = NULL;
	CU_ASSERT(svc_fsx_read(s.root, "bin", 3, &buf, &len) == SVC_OK);
	CU_ASSERT(len == 3 && buf && memcmp(buf, "a\0b", 3) == 0 && buf[3] == '\0');
	free(buf);
	scratch_close(&s);
}

static void test_fsx_write_overwrites(void)
{
	struct scratch s;

	scratch_open(&s);
	CU_ASSERT(svc_fsx_write(s.root, "f.txt", "first version", 13) == SVC_OK);
	CU_ASSERT(svc_fsx_write(s.root, "f.txt", "2nd", 3) == SVC_OK);
	CU_ASSERT(holds(s.root, "f.txt", "2nd"));
	CU_ASSERT(svc_fsx_write(s.root, "f.txt", "", 0) == SVC_OK);
	CU_ASSERT(holds(s.root, "f.txt", ""));
	CU_ASSERT(count_entries(s.root) == 1);
	scratch_close(&s);
}

static void test_fsx_write_over_dir_or_through_file_refused(void)
{
	struct scratch s;

	scratch_open(&s);
	CU_ASSERT(svc_fsx_write(s.root, "d/x", "1", 1) == SVC_OK);
	CU_ASSERT(svc_fsx_write(s.root, "d", "1", 1) == SVC_E_VALIDATION);
	CU_ASSERT(svc_fsx_write(s.root, "d/x/y", "1", 1) == SVC_E_VALIDATION);
	CU_ASSERT(holds(s.root, "d/x", "1"));
	CU_ASSERT(svc_fsx_write("/nonexistent-svc-root", "x", "1", 1) == SVC_E_NOT_FOUND);
	scratch_close(&s);
}

static void test_fsx_read_limits_and_missing(void)
{
	struct scratch s;
	char *buf = NULL;
	size_t len = 0;

	scratch_open(&s);
	put(s.root, "ten", "0123456789");
	CU_ASSERT(svc_fsx_read(s.root, "ten", 9, &buf, &len) == SVC_E_TOO_LARGE);
	CU_ASSERT(buf == NULL);
	CU_ASSERT(svc_fsx_read(s.root, "ten", 10, &buf, &len) == SVC_OK);
	CU_ASSERT(len == 10 && buf && strcmp(buf, "0123456789") == 0);
	free(buf);
	buf = NULL;
	CU_ASSERT(svc_fsx_read(s.root, "missing", 10, &buf, &len) == SVC_E_NOT_FOUND);
	CU_ASSERT(svc_fsx_read(s.root, "ten/sub", 10, &buf, &len) == SVC_E_NOT_FOUND);
	CU_ASSERT(svc_fsx_write(s.root, "dir/f", "x", 1) == SVC_OK);
	CU_ASSERT(svc_fsx_read(s.root, "dir", 10, &buf, &len) == SVC_E_NOT_FOUND);
	CU_ASSERT(buf == NULL);
	scratch_close(&s);
}

static void test_fsx_delete(void)
{
	struct scratch s;

	scratch_open(&s);
	put(s.root, "f", "x");
	CU_ASSERT(svc_fsx_delete(s.root, "missing") == SVC_E_NOT_FOUND);
	CU_ASSERT(svc_fsx_delete(s.root, "no/such/dir/f") == SVC_E_NOT_FOUND);
	CU_ASSERT(svc_fsx_delete(s.root, "f") == SVC_OK);
	CU_ASSERT(!exists(s.root, "f"));
	CU_ASSERT(svc_fsx_delete(s.root, "f") == SVC_E_NOT_FOUND);
	CU_ASSERT(svc_fsx_write(s.root, "d/g", "x", 1) == SVC_OK);
	CU_ASSERT(svc_fsx_delete(s.root, "d") == SVC_E_NOT_FOUND); /* not a regular file */
	CU_ASSERT(exists(s.root, "d/g"));
	scratch_close(&s);
}

static void test_fsx_create_never_replaces(void)
{
	struct scratch s;

	scratch_open(&s);
	CU_ASSERT(svc_fsx_create(s.root, "a/b/new.txt", "one", 3) == SVC_OK);
	CU_ASSERT(holds(s.root, "a/b/new.txt", "one"));
	CU_ASSERT(svc_fsx_create(s.root, "a/b/new.txt", "two", 3) == SVC_E_CONFLICT);
	CU_ASSERT(holds(s.root, "a/b/new.txt", "one"));
	CU_ASSERT(svc_fsx_create(s.root, "a/b", "x", 1) == SVC_E_VALIDATION); /* a directory */
	CU_ASSERT(svc_fsx_create(s.root, "../escape", "x", 1) == SVC_E_VALIDATION);
	CU_ASSERT(svc_fsx_create(s.root, ".git/config", "x", 1) == SVC_E_VALIDATION);
	CU_ASSERT(count_entries(s.root) == 1); /* "a": no temporary file left behind */
	scratch_close(&s);
}

static void test_fsx_rename(void)
{
	struct scratch s;
	char target[256];

	scratch_open(&s);
	put(s.root, "f", "x");
	put(s.root, "g", "y");
	put(s.outside, "secret", "keep");
	snprintf(target, sizeof target, "%s/secret", s.outside);
	link_to(target, s.root, "link");
	CU_ASSERT(svc_fsx_rename(s.root, "f", "sub/dir/h") == SVC_OK);
	CU_ASSERT(!exists(s.root, "f"));
	CU_ASSERT(holds(s.root, "sub/dir/h", "x"));
	CU_ASSERT(svc_fsx_rename(s.root, "sub/dir/h", "g") == SVC_E_CONFLICT);
	CU_ASSERT(holds(s.root, "g", "y"));
	CU_ASSERT(holds(s.root, "sub/dir/h", "x"));
	CU_ASSERT(svc_fsx_rename(s.root, "missing", "m") == SVC_E_NOT_FOUND);
	CU_ASSERT(svc_fsx_rename(s.root, "sub", "moved") == SVC_E_NOT_FOUND); /* a directory */
	CU_ASSERT(svc_fsx_rename(s.root, "link", "moved") == SVC_E_VALIDATION);
	CU_ASSERT(svc_fsx_rename(s.root, "g", "../out") == SVC_E_VALIDATION);
	CU_ASSERT(svc_fsx_rename(s.root, "g", ".git/g") == SVC_E_VALIDATION);
	CU_ASSERT(svc_fsx_rename(s.root, "g", "g/inside") == SVC_E_VALIDATION); /* through a file */
	CU_ASSERT(svc_fsx_rename(s.root, "g", "link") == SVC_E_CONFLICT);      /* never over a symlink */
	CU_ASSERT(holds(s.outside, "secret", "keep"));
	CU_ASSERT(holds(s.root, "g", "y"));
	scratch_close(&s);
}

static void test_fsx_list_sorted_skips_git_and_symlinks(void)
{
	struct svc_fsx_entry *list = NULL;
	struct scratch s;
	char path[256];
	size_t n = 0;

	scratch_open(&s);
	put(s.root, "b.txt", "bb");
	put(s.root, "a.txt", "a");
	snprintf(path, sizeof path, "%s/.git", s.root);
	CU_ASSERT_FATAL(mkdir(path, 0755) == 0);
	put(s.root, ".git/config", "x");
	CU_ASSERT(svc_fsx_write(s.root, "src/z.js", "zzz", 3) == SVC_OK);
	CU_ASSERT(svc_fsx_write(s.root, "src/A.js", "", 0) == SVC_OK);
	put(s.outside, "secret", "x");
	link_to(s.outside, s.root, "outdir");
	link_to("a.txt", s.root, "alias.txt");

	CU_ASSERT_FATAL(svc_fsx_list(s.root, 100, &list, &n) == SVC_OK);
	CU_ASSERT_FATAL(n == 4);
	CU_ASSERT_STRING_EQUAL(list[0].path, "a.txt");
	CU_ASSERT_STRING_EQUAL(list[1].path, "b.txt");
	CU_ASSERT_STRING_EQUAL(list[2].path, "src/A.js");
	CU_ASSERT_STRING_EQUAL(list[3].path, "src/z.js");
	CU_ASSERT(list[1].size == 2 && list[3].size == 3 && list[2].size == 0);
	CU_ASSERT(list[0].mtime_ms > 1600000000000LL);
	svc_fsx_list_free(list, n);
	list = NULL;

	CU_ASSERT(svc_fsx_list(s.root, 3, &list, &n) == SVC_E_TOO_LARGE);
	CU_ASSERT(list == NULL);
	CU_ASSERT(svc_fsx_list("/nonexistent-svc-root", 3, &list, &n) == SVC_E_NOT_FOUND);
	svc_fsx_list_free(NULL, 0);
	scratch_close(&s);
}

static void test_fsx_search(void)
{
	struct scratch s;
	char line[400], *out = NULL;

	scratch_open(&s);
	put(s.root, "a.js", "let x = 1;\nfunction todo() {}\n// TODO: later\n");
	CU_ASSERT_FATAL(svc_fsx_write(s.root, "b/c.html", "<p>nothing</p>\r\n<p>TODO list</p>", 32) == SVC_OK);
	CU_ASSERT(svc_fsx_write(s.root, "bin.dat", "TODO\0TODO\n", 10) == SVC_OK);
	put(s.outside, "secret", "TODO outside\n");
	link_to("../outside/secret", s.root, "link");

	CU_ASSERT_FATAL(svc_fsx_search(s.root, "TODO|todo\\(", 100, &out) == SVC_OK);
	CU_ASSERT_STRING_EQUAL(out, "a.js:2: function todo() {}\n"
				    "a.js:3: // TODO: later\n"
				    "b/c.html:2: <p>TODO list</p>\n");
	free(out);
	out = NULL;

	CU_ASSERT_FATAL(svc_fsx_search(s.root, "^(let|<p>)", 2, &out) == SVC_OK);
	CU_ASSERT_STRING_EQUAL(out, "a.js:1: let x = 1;\nb/c.html:1: <p>nothing</p>\n");
	free(out);
	out = NULL;

	CU_ASSERT_FATAL(svc_fsx_search(s.root, "no such text", 10, &out) == SVC_OK);
	CU_ASSERT_STRING_EQUAL(out, "");
	free(out);
	out = NULL;

	/* a long line is cut at 200 bytes */
	memset(line, 'q', sizeof line - 2);
	line[sizeof line - 2] = '\n';
	line[sizeof line - 1] = '\0';
	put(s.root, "long.txt", line);
	CU_ASSERT_FATAL(svc_fsx_search(s.root, "qqq", 10, &out) == SVC_OK);
	CU_ASSERT(strlen(out) == strlen("long.txt:1: ") + 200 + 1);
	free(out);
	out = NULL;

	CU_ASSERT(svc_fsx_search(s.root, "(unclosed", 10, &out) == SVC_E_VALIDATION);
	CU_ASSERT(svc_fsx_search(s.root, "a{2,1}", 10, &out) == SVC_E_VALIDATION);
	CU_ASSERT(out == NULL);
	scratch_close(&s);
}

/* A model chooses the pattern: its cost is bounded (back-references, pattern size, line prefix, time). */
static void test_fsx_search_bounded(void)
{
	struct scratch s;
	char *out = NULL, *big, pat[600];
	const char *note;
	size_t i, len = 1024 * 1024 - 1;

	scratch_open(&s);
	put(s.root, "a.txt", "ab1b\n");
	/* back-references (exponential in glibc) are refused; an escaped backslash before a digit, a
	 * digit in a bracket expression and a class are not back-references */
	CU_ASSERT(svc_fsx_search(s.root, "(a*)*\\1b", 10, &out) == SVC_E_VALIDATION);
	CU_ASSERT(svc_fsx_search(s.root, "(ab)\\1", 10, &out) == SVC_E_VALIDATION);
	CU_ASSERT(svc_fsx_search(s.root, "[]a]\\1", 10, &out) == SVC_E_VALIDATION);
	CU_ASSERT(svc_fsx_search(s.root, "[[:alpha:]]\\2", 10, &out) == SVC_E_VALIDATION);
	CU_ASSERT_FATAL(svc_fsx_search(s.root, "[\\1]b", 10, &out) == SVC_OK);
	CU_ASSERT_STRING_EQUAL(out, "a.txt:1: ab1b\n");
	free(out);
	out = NULL;
	CU_ASSERT_FATAL(svc_fsx_search(s.root, "\\\\1|ab", 10, &out) == SVC_OK);
	free(out);
	out = NULL;
	memset(pat, 'a', sizeof pat - 1);
	pat[sizeof pat - 1] = '\0';
	CU_ASSERT(svc_fsx_search(s.root, pat, 10, &out) == SVC_E_VALIDATION); /* over 512 bytes */

	/* a match past a line's first 4 KiB is not seen */
	big = malloc(len + 1);
	CU_ASSERT_FATAL(big != NULL);
	memset(big, 'a', 5000);
	memcpy(big + 4500, "NEEDLE", 6);
	big[5000] = '\n';
	CU_ASSERT_FATAL(svc_fsx_write(s.root, "wide.txt", big, 5001) == SVC_OK);
	CU_ASSERT_FATAL(svc_fsx_search(s.root, "NEEDLE", 10, &out) == SVC_OK);
	CU_ASSERT_STRING_EQUAL(out, "");
	free(out);
	out = NULL;

	/*
	 * The time limit, asserted by what the search answers, never by how long it took (a loaded
	 * machine may be slow by any factor): a deadline already past searches nothing, not even the
	 * file that matches, and says it stopped; a far one finds the match and says nothing.
	 */
	CU_ASSERT_FATAL(svc_fsx_search_until(s.root, "ab", 10, svc_mono_ms() - 1, &out) == SVC_OK);
	CU_ASSERT_STRING_EQUAL(out, "(the search stopped at its time limit: make the pattern narrower)\n");
	free(out);
	out = NULL;
	CU_ASSERT_FATAL(svc_fsx_search_until(s.root, "ab", 10, svc_mono_ms() + 3600 * 1000, &out) == SVC_OK);
	CU_ASSERT_STRING_EQUAL(out, "a.txt:1: ab1b\n");
	free(out);
	out = NULL;
	/* a quadratic pattern over 1 MiB of 4 KiB lines of 'a' (20 s and more unbounded: far more
	 * than 50 ms at any speed) stops at its limit and says so, as its last line */
	for (i = 0; i < len; i++)
		big[i] = (i % 4096 == 4095) ? '\n' : 'a';
	CU_ASSERT_FATAL(svc_fsx_write(s.root, "slow.txt", big, len) == SVC_OK);
	CU_ASSERT_FATAL(svc_fsx_search_until(s.root, "(a|aa)*b", 10, svc_mono_ms() + 50, &out) == SVC_OK);
	note = strstr(out, "(the search stopped at its time limit: make the pattern narrower)\n");
	CU_ASSERT(note && note[strlen("(the search stopped at its time limit: make the pattern narrower)\n")] == '\0');
	free(out);
	free(big);
	scratch_close(&s);
}

static void test_fsx_copy_and_remove_tree(void)
{
	struct scratch s;
	char src[256], dst[256], path[256];
	struct stat st;

	scratch_open(&s);
	CU_ASSERT(svc_fsx_write(s.root, "index.html", "<h1>hi</h1>", 11) == SVC_OK);
	CU_ASSERT(svc_fsx_write(s.root, "deep/er/file.css", "p{}", 3) == SVC_OK);
	snprintf(path, sizeof path, "%s/.git", s.root);
	CU_ASSERT_FATAL(mkdir(path, 0755) == 0);
	put(s.root, ".git/HEAD", "ref: refs/heads/main\n");
	put(s.outside, "secret", "keep");
	link_to(s.outside, s.root, "outdir");

	snprintf(src, sizeof src, "%s", s.root);
	snprintf(dst, sizeof dst, "%s/copies/one/project", s.base);
	CU_ASSERT_FATAL(svc_fsx_copy_tree(src, dst) == SVC_OK);
	CU_ASSERT(holds(dst, "index.html", "<h1>hi</h1>"));
	CU_ASSERT(holds(dst, "deep/er/file.css", "p{}"));
	CU_ASSERT(holds(dst, ".git/HEAD", "ref: refs/heads/main\n")); /* history goes along */
	CU_ASSERT(!exists(dst, "outdir"));                            /* symlinks do not */
	CU_ASSERT(svc_fsx_copy_tree(src, dst) == SVC_E_CONFLICT);
	CU_ASSERT(svc_fsx_copy_tree("/nonexistent-svc-root", path) == SVC_E_NOT_FOUND);

	/* remove_tree does not follow a symlink out of the tree */
	link_to(s.outside, dst, "outdir");
	CU_ASSERT(svc_fsx_remove_tree(dst) == SVC_OK);
	CU_ASSERT(lstat(dst, &st) == -1 && errno == ENOENT);
	CU_ASSERT(holds(s.outside, "secret", "keep"));
	CU_ASSERT(svc_fsx_remove_tree(dst) == SVC_OK); /* missing is fine */
	scratch_close(&s);
	CU_ASSERT(lstat(s.base, &st) == -1 && errno == ENOENT);
}

static void test_fsx_dir_iterator(void)
{
	struct scratch s;
	struct svc_fsx_dir d;
	const char *name;
	struct stat st;
	char path[256];
	int fd, r, seen_file = 0, seen_dir = 0, seen_link = 0, others = 0;

	scratch_open(&s);
	put(s.root, "a.txt", "x");
	snprintf(path, sizeof path, "%s/sub", s.root);
	CU_ASSERT_FATAL(mkdir(path, 0755) == 0);
	snprintf(path, sizeof path, "%s/link", s.root);
	CU_ASSERT_FATAL(symlink(s.outside, path) == 0);
	fd = open(s.root, O_RDONLY | O_DIRECTORY);
	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT_EQUAL_FATAL(svc_fsx_dir_open(fd, &d), SVC_OK);
	CU_ASSERT_EQUAL(d.fd, fd);
	while ((r = svc_fsx_dir_next(&d, &name, &st)) > 0) {
		if (strcmp(name, "a.txt") == 0)
			seen_file += S_ISREG(st.st_mode) && st.st_size == 1;
		else if (strcmp(name, "sub") == 0)
			seen_dir += S_ISDIR(st.st_mode);
		else if (strcmp(name, "link") == 0)
			seen_link += S_ISLNK(st.st_mode); /* described, not followed */
		else
			others++; /* "." and ".." are never returned */
	}
	CU_ASSERT_EQUAL(r, 0);
	CU_ASSERT_EQUAL(svc_fsx_dir_next(&d, &name, &st), 0); /* stays at the end */
	CU_ASSERT_EQUAL(seen_file, 1);
	CU_ASSERT_EQUAL(seen_dir, 1);
	CU_ASSERT_EQUAL(seen_link, 1);
	CU_ASSERT_EQUAL(others, 0);
	svc_fsx_dir_close(&d);
	svc_fsx_dir_close(&d); /* harmless twice */
	CU_ASSERT(fcntl(fd, F_GETFD) >= 0); /* the caller's descriptor stays open */
	close(fd);
	/* not a directory */
	snprintf(path, sizeof path, "%s/a.txt", s.root);
	fd = open(path, O_RDONLY);
	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT_EQUAL(svc_fsx_dir_open(fd, &d), SVC_E_INTERNAL);
	close(fd);
	scratch_close(&s);
}

static void test_fsx_content_type(void)
{
	CU_ASSERT_STRING_EQUAL(svc_fsx_content_type("index.html"), "text/html; charset=utf-8");
	CU_ASSERT_STRING_EQUAL(svc_fsx_content_type("a/B.HTM"), "text/html; charset=utf-8");
	CU_ASSERT_STRING_EQUAL(svc_fsx_content_type("style.css"), "text/css; charset=utf-8");
	CU_ASSERT_STRING_EQUAL(svc_fsx_content_type("app.js"), "text/javascript; charset=utf-8");
	CU_ASSERT_STRING_EQUAL(svc_fsx_content_type("data.json"), "application/json");
	CU_ASSERT_STRING_EQUAL(svc_fsx_content_type("logo.svg"), "image/svg+xml");
	CU_ASSERT_STRING_EQUAL(svc_fsx_content_type("img/x.png"), "image/png");
	CU_ASSERT_STRING_EQUAL(svc_fsx_content_type("notes.txt"), "text/plain; charset=utf-8");
	CU_ASSERT_STRING_EQUAL(svc_fsx_content_type("archive.xyz"), "application/octet-stream");
	CU_ASSERT_STRING_EQUAL(svc_fsx_content_type("Makefile"), "application/octet-stream");
	CU_ASSERT_STRING_EQUAL(svc_fsx_content_type("dir.html/file"), "application/octet-stream");
	CU_ASSERT_STRING_EQUAL(svc_fsx_content_type("trailing."), "application/octet-stream");
}

/* The mode bits (07777) of `path`, not following a symlink; -1 when missing. */
static long mode_of(const char *path)
{
	struct stat st;

	return lstat(path, &st) < 0 ? -1 : (long)(st.st_mode & 07777);
}

/*
 * Issue 25 item 11: what svc writes is 0750/0640 (nothing for other local
 * accounts, even under umask 022), a copy keeps no mode for others, and
 * svc_fsx_set_modes() fixes an old 0755/0644 tree: directories and files
 * (an executable keeps its execute bits for user and group), the group and
 * the set-group-ID bit on directories, and leaves a symlink's target alone.
 */
static void test_fsx_modes(void)
{
	struct scratch s;
	char path[512], copy[300], target[300];
	mode_t old = umask(022);
	struct stat st;

	scratch_open(&s);
	CU_ASSERT_EQUAL(svc_fsx_write(s.root, "a/b/f.txt", "x", 1), SVC_OK);
	snprintf(path, sizeof path, "%s/a", s.root);
	CU_ASSERT_EQUAL(mode_of(path), 0750);
	snprintf(path, sizeof path, "%s/a/b/f.txt", s.root);
	CU_ASSERT_EQUAL(mode_of(path), 0640);
	CU_ASSERT_EQUAL(chmod(path, 0755), 0); /* a script */
	snprintf(copy, sizeof copy, "%s/copy", s.base);
	CU_ASSERT_EQUAL(svc_fsx_copy_tree(s.root, copy), SVC_OK);
	CU_ASSERT_EQUAL(mode_of(copy), 0750);
	snprintf(path, sizeof path, "%s/a/b", copy);
	CU_ASSERT_EQUAL(mode_of(path), 0750);
	snprintf(path, sizeof path, "%s/a/b/f.txt", copy);
	CU_ASSERT_EQUAL(mode_of(path), 0750);

	/* an old tree: 0755 directories, 0644 files, a symlink to a file outside */
	put(s.outside, "secret.txt", "s");
	snprintf(target, sizeof target, "%s/secret.txt", s.outside);
	CU_ASSERT_EQUAL(chmod(target, 0644), 0);
	snprintf(path, sizeof path, "%s/a/b", copy);
	CU_ASSERT_EQUAL(chmod(path, 0755), 0);
	snprintf(path, sizeof path, "%s/a/b/plain.txt", copy);
	put(copy, "a/b/plain.txt", "p");
	CU_ASSERT_EQUAL(chmod(path, 0644), 0);
	snprintf(path, sizeof path, "%s/link", copy);
	CU_ASSERT_EQUAL(symlink(target, path), 0);
	CU_ASSERT_EQUAL(svc_fsx_set_modes(copy, 0750, 1, 0750, 0640, getegid()), SVC_OK);
	CU_ASSERT_EQUAL(mode_of(copy), 02750);
	snprintf(path, sizeof path, "%s/a/b", copy);
	CU_ASSERT_EQUAL(mode_of(path), 02750);
	snprintf(path, sizeof path, "%s/a/b/plain.txt", copy);
	CU_ASSERT_EQUAL(mode_of(path), 0640);
	CU_ASSERT(stat(path, &st) == 0 && st.st_gid == getegid());
	snprintf(path, sizeof path, "%s/a/b/f.txt", copy);
	CU_ASSERT_EQUAL(mode_of(path), 0750);
	CU_ASSERT_EQUAL(mode_of(target), 0644); /* the symlink was not followed */
	/* a private area: 0700/0600, and a new directory is made */
	CU_ASSERT_EQUAL(svc_fsx_set_modes(copy, 0700, 1, 0700, 0600, (gid_t)-1), SVC_OK);
	snprintf(path, sizeof path, "%s/a/b/plain.txt", copy);
	CU_ASSERT_EQUAL(mode_of(path), 0600);
	snprintf(path, sizeof path, "%s/new/area", s.base);
	CU_ASSERT_EQUAL(svc_fsx_set_modes(path, 0711, 0, 0, 0, (gid_t)-1), SVC_OK);
	CU_ASSERT_EQUAL(mode_of(path), 0711);
	snprintf(path, sizeof path, "%s/link", copy);
	CU_ASSERT_EQUAL(svc_fsx_set_modes(path, 0700, 0, 0, 0, (gid_t)-1), SVC_E_INTERNAL);
	CU_ASSERT_EQUAL(svc_fsx_set_modes("relative", 0700, 0, 0, 0, (gid_t)-1), SVC_E_INTERNAL);
	umask(old);
	scratch_close(&s);
}

SVC_TEST_SUITE(fsx)
{
	CU_pSuite s = CU_add_suite("fsx", NULL, NULL);

	CU_add_test(s, "test_fsx_check_path_normalises", test_fsx_check_path_normalises);
	CU_add_test(s, "test_fsx_check_path_refuses", test_fsx_check_path_refuses);
	CU_add_test(s, "test_fsx_check_path_length_limit", test_fsx_check_path_length_limit);
	CU_add_test(s, "test_fsx_nul_cuts_the_path", test_fsx_nul_cuts_the_path);
	CU_add_test(s, "test_fsx_traversal_refused", test_fsx_traversal_refused);
	CU_add_test(s, "test_fsx_symlink_file_refused", test_fsx_symlink_file_refused);
	CU_add_test(s, "test_fsx_symlink_dir_component_refused", test_fsx_symlink_dir_component_refused);
	CU_add_test(s, "test_fsx_write_nested_creates_dirs", test_fsx_write_nested_creates_dirs);
	CU_add_test(s, "test_fsx_write_overwrites", test_fsx_write_overwrites);
	CU_add_test(s, "test_fsx_write_over_dir_or_through_file_refused",
		    test_fsx_write_over_dir_or_through_file_refused);
	CU_add_test(s, "test_fsx_read_limits_and_missing", test_fsx_read_limits_and_missing);
	CU_add_test(s, "test_fsx_delete", test_fsx_delete);
	CU_add_test(s, "test_fsx_create_never_replaces", test_fsx_create_never_replaces);
	CU_add_test(s, "test_fsx_rename", test_fsx_rename);
	CU_add_test(s, "test_fsx_list_sorted_skips_git_and_symlinks", test_fsx_list_sorted_skips_git_and_symlinks);
	CU_add_test(s, "test_fsx_search", test_fsx_search);
	CU_add_test(s, "test_fsx_search_bounded", test_fsx_search_bounded);
	CU_add_test(s, "test_fsx_copy_and_remove_tree", test_fsx_copy_and_remove_tree);
	CU_add_test(s, "test_fsx_content_type", test_fsx_content_type);
	CU_add_test(s, "test_fsx_dir_iterator", test_fsx_dir_iterator);
	CU_add_test(s, "test_fsx_modes", test_fsx_modes);
}
