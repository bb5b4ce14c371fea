/* test_gitio.c: CUnit suite "gitio": Git remotes' URLs and the guard, ZIP imports' checks, and the git CLI runner (lib/project/gitio.c, gitcmd.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zip.h>

#include "core/err.h"
#include "core/fsx.h"
#include "project/gitcmd.h"
#include "project/gitio.h"
#include "unit.h"

static void test_gitio_url_parse(void)
{
	struct svc_gitio_remote rm;
	char why[256];
	static const char *const bad[] = {
		"http://example.com/x.git", "ssh://example.com/x.git", "file:///etc", "git://example.com/x",
		"https://user:pw@example.com/x.git", "https://tok@example.com/x.git", "https://example.com/x.git?a=b",
		"https://example.com/x.git#f", "https://exa mple.com/x.git", "https://example.com:0/x.git",
		"https://example.com:65536/x.git", "https://example.com:x/x.git", "https://:443/x.git", "https:///x.git",
		"https://exa_mple.com/x", "https://[::1/x.git", "https://example.com\\@evil/x", "",
		/* hosts curl reads as an IPv4 address (127.0.0.1) though they are no dotted quad */
		"https://2130706433/x.git", "https://0x7f.1/x.git", "https://127.1/x.git", "https://0177.0.0.1/x.git",
		"https://127.0.0.1./x.git", "https://a.0x7f000001/x.git",
	};
	size_t i;

	CU_ASSERT_EQUAL(svc_gitio_url_parse("https://GitHub.com/me/app.git", &rm, why, sizeof why), 0);
	CU_ASSERT_STRING_EQUAL(rm.host, "github.com");
	CU_ASSERT_EQUAL(rm.port, 443);
	CU_ASSERT_STRING_EQUAL(rm.url, "https://GitHub.com/me/app.git");
	CU_ASSERT_EQUAL(svc_gitio_url_parse("https://git.example.com:8443/a/b.git", &rm, why, sizeof why), 0);
	CU_ASSERT_STRING_EQUAL(rm.host, "git.example.com");
	CU_ASSERT_EQUAL(rm.port, 8443);
	CU_ASSERT_EQUAL(svc_gitio_url_parse("https://[2001:db8::1]:444/x.git", &rm, why, sizeof why), 0);
	CU_ASSERT_STRING_EQUAL(rm.host, "2001:db8::1");
	CU_ASSERT_EQUAL(rm.port, 444);
	CU_ASSERT_EQUAL(svc_gitio_url_parse("https://example.com", &rm, why, sizeof why), 0);
	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		why[0] = '\0';
		CU_ASSERT_EQUAL(svc_gitio_url_parse(bad[i], &rm, why, sizeof why), SVC_E_VALIDATION);
		CU_ASSERT(why[0] != '\0');
	}
}

static void test_gitio_resolve_refuses_internal_addresses(void)
{
	struct svc_config cfg;
	struct svc_gitio_remote rm;
	char why[256];
	static const char *const refused[] = {
		"https://127.0.0.1/x.git", "https://[::1]/x.git", "https://169.254.169.254/x.git", "https://10.1.2.3/x.git",
		"https://192.168.1.1/x.git", "https://[::ffff:127.0.0.1]/x.git", "https://0.0.0.0/x.git",
	};
	size_t i;

	memset(&cfg, 0, sizeof cfg);
	cfg.dns_server = "";
	cfg.outbound_allow_nets = "";
	for (i = 0; i < sizeof refused / sizeof refused[0]; i++) {
		CU_ASSERT_EQUAL_FATAL(svc_gitio_url_parse(refused[i], &rm, why, sizeof why), 0);
		CU_ASSERT_EQUAL(svc_gitio_resolve(&cfg, &rm, why, sizeof why), SVC_E_FORBIDDEN);
		CU_ASSERT(strstr(why, " address") != NULL);
	}
	/* a public address literal resolves to itself, pinned */
	CU_ASSERT_EQUAL_FATAL(svc_gitio_url_parse("https://192.0.43.10/x.git", &rm, why, sizeof why), 0);
	CU_ASSERT_EQUAL(svc_gitio_resolve(&cfg, &rm, why, sizeof why), 0);
	CU_ASSERT_STRING_EQUAL(rm.addr, "192.0.43.10");
	/* the operator's exception opens that network only */
	cfg.outbound_allow_nets = "127.0.0.10/32";
	CU_ASSERT_EQUAL_FATAL(svc_gitio_url_parse("https://127.0.0.10:9/x.git", &rm, why, sizeof why), 0);
	CU_ASSERT_EQUAL(svc_gitio_resolve(&cfg, &rm, why, sizeof why), 0);
	CU_ASSERT_EQUAL_FATAL(svc_gitio_url_parse("https://127.0.0.1:9/x.git", &rm, why, sizeof why), 0);
	CU_ASSERT_EQUAL(svc_gitio_resolve(&cfg, &rm, why, sizeof why), SVC_E_FORBIDDEN);
}

/* A ZIP in memory of `n` entries {name, text}; a NULL text is a symlink to "/etc/passwd". */
static void *zip_make(const char *const (*entries)[2], size_t n, size_t *out_len)
{
	char path[] = "/tmp/svc-gitio-zip-XXXXXX";
	int fd = mkstemp(path), err = 0;
	zip_t *z;
	size_t i;
	void *data = NULL;
	FILE *f;
	long len;

	CU_ASSERT_FATAL(fd >= 0);
	close(fd);
	z = zip_open(path, ZIP_TRUNCATE, &err);
	CU_ASSERT_FATAL(z != NULL);
	for (i = 0; i < n; i++) {
		const char *text = entries[i][1] ? entries[i][1] : "/etc/passwd";
		zip_source_t *src = zip_source_buffer(z, text, strlen(text), 0);
		zip_int64_t idx = zip_file_add(z, entries[i][0], src, ZIP_FL_ENC_UTF_8);
		CU_ASSERT_FATAL(idx >= 0);
		if (!entries[i][1])
			zip_file_set_external_attributes(z, (zip_uint64_t)idx, 0, ZIP_OPSYS_UNIX, (zip_uint32_t)0120777 << 16);
	}
	CU_ASSERT_FATAL(zip_close(z) == 0);
	f = fopen(path, "rb");
	CU_ASSERT_FATAL(f != NULL);
	fseek(f, 0, SEEK_END);
	len = ftell(f);
	fseek(f, 0, SEEK_SET);
	data = malloc((size_t)len);
	CU_ASSERT_FATAL(fread(data, 1, (size_t)len, f) == (size_t)len);
	fclose(f);
	unlink(path);
	*out_len = (size_t)len;
	return data;
}

/* Extracts the ZIP of `entries` into a fresh directory; returns what svc_gitio_zip_extract() did and the directory. */
static int zip_try(const char *const (*entries)[2], size_t n, uint64_t max_mb, char *dir)
{
	struct svc_config cfg;
	char why[256];
	size_t len;
	void *data = zip_make(entries, n, &len);
	int err;

	memset(&cfg, 0, sizeof cfg);
	cfg.import_max_mb = max_mb;
	cfg.import_zip_entries = 4;
	snprintf(dir, 64, "%s", "/tmp/svc-gitio-dir-XXXXXX");
	CU_ASSERT_FATAL(mkdtemp(dir) != NULL);
	err = svc_gitio_zip_extract(&cfg, data, len, dir, why, sizeof why);
	free(data);
	return err;
}

static int exists(const char *dir, const char *rel)
{
	char p[512];
	struct stat st;

	snprintf(p, sizeof p, "%s/%s", dir, rel);
	return lstat(p, &st) == 0;
}

static void test_gitio_zip_extract(void)
{
	static const char *const forge[][2] = { { "app-main/index.html", "<h1>x</h1>" }, { "app-main/css/a.css", "p{}" } };
	static const char *const flat[][2] = { { "index.html", "x" }, { "js/app.js", "y" } };
	char dir[64];

	CU_ASSERT_EQUAL(zip_try(forge, 2, 1, dir), 0);
	CU_ASSERT(exists(dir, "index.html") && exists(dir, "css/a.css") && !exists(dir, "app-main"));
	svc_fsx_remove_tree(dir);
	CU_ASSERT_EQUAL(zip_try(flat, 2, 1, dir), 0);
	CU_ASSERT(exists(dir, "index.html") && exists(dir, "js/app.js"));
	svc_fsx_remove_tree(dir);
}

static void test_gitio_zip_refusals(void)
{
	static const char *const dotdot[][2] = { { "../evil", "x" } };
	static const char *const deep[][2] = { { "a/../../evil", "x" }, { "a/b", "x" } };
	static const char *const abs[][2] = { { "/etc/evil", "x" } };
	static const char *const git[][2] = { { ".git/config", "x" } };
	static const char *const gitdeep[][2] = { { "top/.git/hooks/x", "x" }, { "top/a", "x" } };
	static const char *const link[][2] = { { "index.html", "x" }, { "passwd", NULL } };
	static const char *const many[][2] = { { "a", "1" }, { "b", "2" }, { "c", "3" }, { "d", "4" }, { "e", "5" } };
	char dir[64];

	CU_ASSERT_EQUAL(zip_try(dotdot, 1, 1, dir), SVC_E_VALIDATION);
	CU_ASSERT(!exists(dir, "evil"));
	svc_fsx_remove_tree(dir);
	CU_ASSERT_EQUAL(zip_try(deep, 2, 1, dir), SVC_E_VALIDATION);
	svc_fsx_remove_tree(dir);
	CU_ASSERT_EQUAL(zip_try(abs, 1, 1, dir), SVC_E_VALIDATION);
	svc_fsx_remove_tree(dir);
	CU_ASSERT_EQUAL(zip_try(git, 1, 1, dir), SVC_E_VALIDATION);
	CU_ASSERT(!exists(dir, "config"));
	svc_fsx_remove_tree(dir);
	CU_ASSERT_EQUAL(zip_try(gitdeep, 2, 1, dir), SVC_E_VALIDATION);
	svc_fsx_remove_tree(dir);
	CU_ASSERT_EQUAL(zip_try(link, 2, 1, dir), SVC_E_VALIDATION);
	CU_ASSERT(!exists(dir, "passwd"));
	svc_fsx_remove_tree(dir);
	CU_ASSERT_EQUAL(zip_try(many, 5, 1, dir), SVC_E_TOO_LARGE);
	svc_fsx_remove_tree(dir);
	{
		struct svc_config cfg;
		char why[128], d2[] = "/tmp/svc-gitio-dir-XXXXXX";
		memset(&cfg, 0, sizeof cfg);
		cfg.import_max_mb = 1;
		cfg.import_zip_entries = 10;
		CU_ASSERT_FATAL(mkdtemp(d2) != NULL);
		CU_ASSERT_EQUAL(svc_gitio_zip_extract(&cfg, "not a zip", 9, d2, why, sizeof why), SVC_E_VALIDATION);
		svc_fsx_remove_tree(d2);
	}
}

/* Collects a run's standard output. */
static int collect(void *ctx, const char *data, size_t len)
{
	char *out = ctx;
	size_t have = strlen(out);

	if (have + len >= 256)
		return SVC_E_TOO_LARGE;
	memcpy(out + have, data, len);
	out[have + len] = '\0';
	return 0;
}

static void test_gitcmd_run_environment_and_limits(void)
{
	struct svc_git_run run = { 0 };
	char out[256] = "", why[256], store[4096];
	const char *keys[] = { "svc.test" }, *values[] = { "from-env" };
	int status = -1;

	/* configuration comes only from what the run passes, never from HOME or /etc */
	run.args[0] = "config";
	run.args[1] = "--get";
	run.args[2] = "svc.test";
	run.sink = collect;
	run.sink_ctx = out;
	run.timeout_ms = 30000;
	CU_ASSERT_EQUAL_FATAL(svc_git_config_env(&run, keys, values, 1, store, sizeof store), 0);
	CU_ASSERT_EQUAL(svc_git_run(&run, &status, why, sizeof why), 0);
	CU_ASSERT_EQUAL(status, 0);
	CU_ASSERT_STRING_EQUAL(out, "from-env\n");
	/* a failing command: its status and its message */
	memset(&run, 0, sizeof run);
	run.args[0] = "rev-parse";
	run.args[1] = "--verify";
	run.args[2] = "no-such-ref";
	run.dir = "/";
	CU_ASSERT_EQUAL(svc_git_run(&run, &status, why, sizeof why), 0);
	CU_ASSERT(status != 0);
	CU_ASSERT(strstr(why, "fatal") != NULL);
	CU_ASSERT(strchr(why, '\n') == NULL);
	/* svc_git_arg fills up to its limit */
	memset(&run, 0, sizeof run);
	{
		int i, ok = 0;
		for (i = 0; i < SVC_GIT_MAX_ARGS + 2; i++)
			ok += svc_git_arg(&run, "x") == 0;
		CU_ASSERT_EQUAL(ok, SVC_GIT_MAX_ARGS - 1);
	}
	CU_ASSERT(svc_git_sha_valid("0123456789abcdef0123456789abcdef01234567"));
	CU_ASSERT(!svc_git_sha_valid("0123456789ABCDEF0123456789abcdef01234567"));
	CU_ASSERT(!svc_git_sha_valid("0123456789abcdef"));
}

SVC_TEST_SUITE(gitio)
{
	CU_pSuite s = CU_add_suite("gitio", NULL, NULL);

	CU_add_test(s, "test_gitio_url_parse", test_gitio_url_parse);
	CU_add_test(s, "test_gitio_resolve_refuses_internal_addresses", test_gitio_resolve_refuses_internal_addresses);
	CU_add_test(s, "test_gitio_zip_extract", test_gitio_zip_extract);
	CU_add_test(s, "test_gitio_zip_refusals", test_gitio_zip_refusals);
	CU_add_test(s, "test_gitcmd_run_environment_and_limits", test_gitcmd_run_environment_and_limits);
}
