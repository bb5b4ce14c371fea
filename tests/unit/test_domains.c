/* test_domains.c: unit tests of lib/project/domains.c: the custom-domain name rules (hostname, IP, SVC_DOMAIN, libpsl) and the plans. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <CUnit/CUnit.h>

#include "core/err.h"
#include "core/fsx.h"
#include "core/util.h"
#include "project/domains.h"
#include "project/quota.h"
#include "unit.h"

/* normalize(in) with SVC_DOMAIN svc.example.net: the result, or NULL when refused (why then holds the reason). */
static const char *norm(const char *in, char *why)
{
	static char out[256];
	int err = svc_domain_normalize(in, "svc.example.net", out, sizeof out, why, 512);

	CU_ASSERT(err == 0 || err == SVC_E_VALIDATION);
	return err == 0 ? out : NULL;
}

static void test_domains_accepts_one_label_under_registrable(void)
{
	char why[512] = "";

	CU_ASSERT_STRING_EQUAL(norm("myapp.example.com", why), "myapp.example.com");
	CU_ASSERT_STRING_EQUAL(norm("MyApp.Example.COM", why), "myapp.example.com");
	CU_ASSERT_STRING_EQUAL(norm("myapp.example.com.", why), "myapp.example.com");
	CU_ASSERT_STRING_EQUAL(norm("example.com", why), "example.com");
	/* the registrable domain of a name under a multi-label suffix */
	CU_ASSERT_STRING_EQUAL(norm("shop.b.co.uk", why), "shop.b.co.uk");
	CU_ASSERT_STRING_EQUAL(norm("xn--bcher-kva.example.org", why), "xn--bcher-kva.example.org");
	CU_ASSERT_STRING_EQUAL(norm("a-1.example.com", why), "a-1.example.com");
	/* a private suffix of the list: foo.github.io is registrable */
	CU_ASSERT_STRING_EQUAL(norm("foo.github.io", why), "foo.github.io");
	CU_ASSERT_STRING_EQUAL(norm("www.foo.github.io", why), "www.foo.github.io");
}

static void test_domains_refuses_two_labels_under_registrable(void)
{
	char why[512] = "";

	CU_ASSERT_PTR_NULL(norm("myapp.prod.example.com", why));
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "only one label is allowed under example.com"));
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "TLS cipher mismatch"));
	CU_ASSERT_PTR_NULL(norm("a.b.c.example.org", why));
	CU_ASSERT_PTR_NULL(norm("x.a.b.co.uk", why));
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "b.co.uk"));
}

static void test_domains_refuses_ips_and_bad_names(void)
{
	char why[512] = "";
	char long_label[80], long_name[300];

	CU_ASSERT_PTR_NULL(norm("192.0.2.1", why));
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "IP address"));
	CU_ASSERT_PTR_NULL(norm("2001:db8::1", why));
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "IP address"));
	CU_ASSERT_PTR_NULL(norm("[::1]", why));
	CU_ASSERT_PTR_NULL(norm("1.2.3.4.5", why));
	CU_ASSERT_PTR_NULL(norm("", why));
	CU_ASSERT_PTR_NULL(norm(".", why));
	CU_ASSERT_PTR_NULL(norm("localhost", why));
	CU_ASSERT_PTR_NULL(norm("my app.example.com", why));
	CU_ASSERT_PTR_NULL(norm("my_app.example.com", why));
	CU_ASSERT_PTR_NULL(norm("-app.example.com", why));
	CU_ASSERT_PTR_NULL(norm("app-.example.com", why));
	CU_ASSERT_PTR_NULL(norm("app..example.com", why));
	CU_ASSERT_PTR_NULL(norm(".example.com", why));
	CU_ASSERT_PTR_NULL(norm("app.example.com/x", why));
	CU_ASSERT_PTR_NULL(norm("app.example.com:443", why));
	CU_ASSERT_PTR_NULL(norm("b\xc3\xbc" "cher.example.com", why));
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "xn--"));
	memset(long_label, 'a', 64);
	memcpy(long_label + 64, ".example.com", 13);
	CU_ASSERT_PTR_NULL(norm(long_label, why));
	memset(long_name, 'a', 260);
	long_name[260] = '\0';
	CU_ASSERT_PTR_NULL(norm(long_name, why));
	CU_ASSERT_EQUAL(svc_domain_normalize(NULL, "x", long_name, sizeof long_name, why, sizeof why), SVC_E_VALIDATION);
}

static void test_domains_refuses_platform_and_public_suffixes(void)
{
	char why[512] = "";

	CU_ASSERT_PTR_NULL(norm("svc.example.net", why));
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "platform"));
	CU_ASSERT_PTR_NULL(norm("myapp.svc.example.net", why));
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "platform"));
	CU_ASSERT_STRING_EQUAL(norm("xsvc.example.net", why), "xsvc.example.net");
	CU_ASSERT_PTR_NULL(norm("co.uk", why));
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "public suffix"));
	CU_ASSERT_PTR_NULL(norm("github.io", why));
}

static void test_domains_plans(void)
{
	struct svc_config cfg;

	svc_config_defaults(&cfg);
	CU_ASSERT(svc_plan_valid("free"));
	CU_ASSERT(svc_plan_valid("pro"));
	CU_ASSERT(svc_plan_valid("business"));
	CU_ASSERT(!svc_plan_valid("Pro"));
	CU_ASSERT(!svc_plan_valid("enterprise"));
	CU_ASSERT(!svc_plan_valid(NULL));
	CU_ASSERT_EQUAL(svc_plan_domain_limit(&cfg, "free"), 0);
	CU_ASSERT_EQUAL(svc_plan_domain_limit(&cfg, "pro"), 1);
	CU_ASSERT_EQUAL(svc_plan_domain_limit(&cfg, "business"), 5);
	CU_ASSERT_EQUAL(svc_plan_domain_limit(&cfg, "nope"), 0);
	cfg.plan_domains_pro = 3; /* SVC_PLAN_DOMAINS_PRO=3; a malformed value is the table's (test_config) */
	CU_ASSERT_EQUAL(svc_plan_domain_limit(&cfg, "pro"), 3);
}

/* The platform's own names (issue 25, item 1): app, API and socket hosts, SVC_DOMAIN, preview, CNAME target, SVC_RESERVED_DOMAINS. */
static void test_domains_reserved_names(void)
{
	struct svc_config cfg;
	char why[512] = "";

	svc_config_defaults(&cfg);
	cfg.app_url = "https://App.Example.com";
	cfg.base_url = "https://api.example.com:8443/api";
	cfg.ws_url = "wss://live.example.org";
	cfg.domain = "sites.example.net";
	cfg.cname_target = "edge.example.io";
	cfg.reserved_domains = "blog.example.com, *.corp.example.org";
	CU_ASSERT(svc_domain_reserved(&cfg, "app.example.com", why, sizeof why));
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "SVC_APP_URL"));
	CU_ASSERT(svc_domain_reserved(&cfg, "app.example.com.", why, sizeof why));
	CU_ASSERT(svc_domain_reserved(&cfg, "api.example.com", why, sizeof why));
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "SVC_BASE_URL"));
	CU_ASSERT(svc_domain_reserved(&cfg, "live.example.org", why, sizeof why));
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "SVC_WS_URL"));
	CU_ASSERT(svc_domain_reserved(&cfg, "sites.example.net", why, sizeof why));
	CU_ASSERT(svc_domain_reserved(&cfg, "x.sites.example.net", why, sizeof why));
	CU_ASSERT(svc_domain_reserved(&cfg, "preview.sites.example.net", why, sizeof why));
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "preview"));
	CU_ASSERT(svc_domain_reserved(&cfg, "edge.example.io", why, sizeof why));
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "SVC_CNAME_TARGET"));
	CU_ASSERT(svc_domain_reserved(&cfg, "blog.example.com", why, sizeof why));
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "SVC_RESERVED_DOMAINS"));
	CU_ASSERT(svc_domain_reserved(&cfg, "shop.corp.example.org", why, sizeof why));
	CU_ASSERT(!svc_domain_reserved(&cfg, "corp.example.org", why, sizeof why));
	CU_ASSERT(!svc_domain_reserved(&cfg, "myapp.example.com", why, sizeof why));
	CU_ASSERT(!svc_domain_reserved(&cfg, "xapp.example.com", why, sizeof why));
	CU_ASSERT(!svc_domain_reserved(&cfg, "example.com", why, sizeof why));
	CU_ASSERT(!svc_domain_reserved(&cfg, "blog.example.com.evil.org", why, sizeof why));
}

/*
 * tests/fixtures/dns_double.py (real DNS on a loopback port) with the records of `json` written to
 * dir/records.json: its pid into *pid and "127.0.0.1:PORT" into server, or -1 (CU_FAIL) when it does
 * not start. The source tree is $SVC_SRCDIR, else abs_top_srcdir of the build's Makefile.
 */
static int dns_double_start(const char *dir, const char *json, pid_t *pid, char *server, size_t size)
{
	char src[1024] = "", script[1200], records[300], portfile[300], line[1200], exe[1024], *slash;
	const char *env = getenv("SVC_SRCDIR");
	uint64_t port = 0;
	ssize_t n;
	FILE *f;
	int i;

	if (env && *env) {
		snprintf(src, sizeof src, "%s", env);
	} else if ((n = readlink("/proc/self/exe", exe, sizeof exe - 1)) > 0) {
		exe[n] = '\0';
		if ((slash = strrchr(exe, '/')))
			*slash = '\0'; /* <build>/tests/unit */
		snprintf(line, sizeof line, "%.1000s/../../Makefile", exe);
		for (f = fopen(line, "r"); f && fgets(line, sizeof line, f);)
			if (strncmp(line, "abs_top_srcdir = ", 17) == 0) {
				line[strcspn(line, "\n")] = '\0';
				snprintf(src, sizeof src, "%.1000s", line + 17);
			}
		if (f)
			fclose(f);
	}
	snprintf(script, sizeof script, "%.1000s/tests/fixtures/dns_double.py", src);
	snprintf(records, sizeof records, "%s/records.json", dir);
	snprintf(portfile, sizeof portfile, "%s/port", dir);
	if (access(script, R_OK) != 0 || !(f = fopen(records, "w"))) {
		CU_FAIL("tests/fixtures/dns_double.py not found (set SVC_SRCDIR)");
		return -1;
	}
	fputs(json, f);
	fclose(f);
	if ((*pid = fork()) == 0) {
		execlp("python3", "python3", script, "--port-file", portfile, "--records", records, (char *)NULL);
		_exit(127);
	}
	for (i = 0; i < 600 && port == 0; i++) { /* 30 s: python3 on a loaded machine */
		if ((f = fopen(portfile, "r"))) {
			if (fgets(line, sizeof line, f)) {
				line[strcspn(line, "\n")] = '\0';
				svc_parse_u64(line, 65535, &port);
			}
			fclose(f);
		}
		if (port == 0)
			usleep(50 * 1000);
	}
	if (port == 0) {
		CU_FAIL("the DNS double did not start");
		kill(*pid, SIGTERM);
		waitpid(*pid, NULL, 0);
		return -1;
	}
	snprintf(server, size, "127.0.0.1:%llu", (unsigned long long)port);
	return 0;
}

/*
 * The DNS check over real DNS (tests/fixtures/dns_double.py): the A record, the TXT proof of
 * SVC_DOMAIN_TXT_PROOF (issue 25, item 2), and a nameserver that never answers (bounded by the timeout).
 */
static void test_domains_dns_check_txt_proof(void)
{
	char dir[] = "/tmp/svc-dns-double-XXXXXX", server[64], addr[64], why[512], path[300];
	struct svc_domain_settings s;
	struct timespec t0, t1;
	pid_t pid;
	double secs;

	if (!mkdtemp(dir)) {
		CU_FAIL("mkdtemp");
		return;
	}
	if (dns_double_start(dir,
			     "{\"proof.example.org\": {\"A\": [\"127.0.0.9\"]},"
			     " \"_svc-challenge.proof.example.org\": {\"TXT\": [\"tok123\", \"other\"]},"
			     " \"notxt.example.org\": {\"A\": [\"127.0.0.9\"]},"
			     " \"_svc-challenge.notxt.example.org\": {}}",
			     &pid, server, sizeof server) < 0)
		goto out;
	memset(&s, 0, sizeof s);
	s.cname_target = "sites.example.net";
	s.public_ipv4 = "127.0.0.9";
	s.dns_server = server;
	s.timeout_ms = 1500;
	/* without the proof: the A record is enough */
	CU_ASSERT_EQUAL(svc_domain_dns_check(&s, "proof.example.org", NULL, addr, sizeof addr, why, sizeof why), 0);
	CU_ASSERT_STRING_EQUAL(addr, "127.0.0.9");
	s.txt_proof = 1;
	CU_ASSERT_EQUAL(svc_domain_dns_check(&s, "proof.example.org", "tok123", addr, sizeof addr, why, sizeof why), 0);
	why[0] = '\0';
	CU_ASSERT_EQUAL(svc_domain_dns_check(&s, "proof.example.org", "tok124", addr, sizeof addr, why, sizeof why),
			SVC_E_NOT_FOUND);
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "_svc-challenge.proof.example.org"));
	CU_ASSERT_EQUAL(svc_domain_dns_check(&s, "proof.example.org", "", addr, sizeof addr, why, sizeof why),
			SVC_E_NOT_FOUND);
	CU_ASSERT_EQUAL(svc_domain_dns_check(&s, "proof.example.org", NULL, addr, sizeof addr, why, sizeof why),
			SVC_E_NOT_FOUND);
	CU_ASSERT_EQUAL(svc_domain_dns_check(&s, "notxt.example.org", "tok123", addr, sizeof addr, why, sizeof why),
			SVC_E_NOT_FOUND);
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "TXT"));
	/* a name the double never answers: refused within the timeout, not hung */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	CU_ASSERT_EQUAL(svc_domain_dns_check(&s, "silent.example.org", "tok123", addr, sizeof addr, why, sizeof why),
			SVC_E_NOT_FOUND);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	CU_ASSERT(secs < 3.0);
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "does not resolve"));
	kill(pid, SIGTERM);
	waitpid(pid, NULL, 0);
out:
	snprintf(path, sizeof path, "%s/records.json", dir);
	unlink(path);
	snprintf(path, sizeof path, "%s/port", dir);
	unlink(path);
	rmdir(dir);
}

/* Quotas (lib/project/quota.h): the defaults, the instance's setting, a plan's override, a bad value. */
static void test_quota_limits_and_plan_overrides(void)
{
	struct svc_config cfg;

	svc_config_defaults(&cfg);
	CU_ASSERT_EQUAL(svc_quota_limit(&cfg, "free", SVC_QUOTA_PROJECTS), 100);
	CU_ASSERT_EQUAL(svc_quota_limit(&cfg, NULL, SVC_QUOTA_REPO_BYTES), 512ull << 20);
	CU_ASSERT_EQUAL(svc_quota_limit(&cfg, "pro", SVC_QUOTA_SITE_BYTES), 256ull << 20);
	CU_ASSERT_EQUAL(svc_quota_limit(&cfg, "pro", SVC_QUOTA_PREVIEW_BYTES), 256ull << 20);
	cfg.quota[0][0] = 7; /* SVC_QUOTA_PROJECTS=7 */
	cfg.quota[0][2] = 0; /* SVC_QUOTA_PROJECTS_PRO=0 */
	CU_ASSERT_EQUAL(svc_quota_limit(&cfg, "free", SVC_QUOTA_PROJECTS), 7);
	CU_ASSERT_EQUAL(svc_quota_limit(&cfg, "pro", SVC_QUOTA_PROJECTS), 0); /* no limit on pro */
	cfg.quota[0][2] = -1; /* unset, or malformed (logged at load, tests/unit/test_config.c) */
	CU_ASSERT_EQUAL(svc_quota_limit(&cfg, "pro", SVC_QUOTA_PROJECTS), 7); /* the instance's */
	cfg.quota[2][3] = 9; /* SVC_QUOTA_SITE_BYTES_BUSINESS: previews too */
	CU_ASSERT_EQUAL(svc_quota_limit(&cfg, "business", SVC_QUOTA_PREVIEW_BYTES), 9);
}

/* Writes `text` into dir/name. */
static void put_file(const char *dir, const char *name, const char *text)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof path, "%s/%s", dir, name);
	f = fopen(path, "w");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	fputs(text, f);
	fclose(f);
}

/* svc_quota_dir_bytes adds up regular files, hidden ones and subdirectories included, not symlinks. */
static void test_quota_dir_bytes(void)
{
	char dir[] = "/tmp/svc-quota-XXXXXX", path[256];
	uint64_t n = 0;

	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
	put_file(dir, "a.txt", "12345");
	snprintf(path, sizeof path, "%s/.git", dir);
	CU_ASSERT_EQUAL(mkdir(path, 0700), 0);
	put_file(dir, ".git/obj", "1234567890");
	snprintf(path, sizeof path, "%s/link", dir);
	CU_ASSERT_EQUAL(symlink("/etc/passwd", path), 0);
	CU_ASSERT_EQUAL(svc_quota_dir_bytes(dir, &n), 0);
	CU_ASSERT_EQUAL(n, 15);
	snprintf(path, sizeof path, "%s/none", dir);
	CU_ASSERT_EQUAL(svc_quota_dir_bytes(path, &n), SVC_E_NOT_FOUND);
	CU_ASSERT_EQUAL(svc_fsx_remove_tree(dir), 0);
}

/* Seconds since the epoch, with nanoseconds, of each line `date +%s.%N` wrote to `path`; returns how many (at most max). */
static int reload_times(const char *path, double *out, int max)
{
	FILE *f = fopen(path, "r");
	int n = 0;

	if (!f)
		return 0;
	while (n < max && fscanf(f, "%lf", &out[n]) == 1)
		n++;
	fclose(f);
	return n;
}

/* svc_sites_reload: the first run does not wait, the next is SVC_SITES_RELOAD_GAP_MS after it, a failing command is an error */
static void test_domains_sites_reloads_are_spaced(void)
{
	char dir[] = "/tmp/svc-reload-XXXXXX", cmd[256], times[128], lock[128];
	double t[3];
	int64_t t0, first_ms;

	CU_ASSERT_FATAL(mkdtemp(dir) != NULL);
	snprintf(times, sizeof times, "%s/times", dir);
	snprintf(lock, sizeof lock, "%s/.reload.lock", dir);
	snprintf(cmd, sizeof cmd, "date +%%s.%%N >> %s", times);
	t0 = svc_mono_ms();
	CU_ASSERT_EQUAL(svc_sites_reload(dir, cmd), 0);
	first_ms = svc_mono_ms() - t0;
	CU_ASSERT(first_ms < SVC_SITES_RELOAD_GAP_MS / 2); /* the first ever waits for nothing */
	CU_ASSERT_EQUAL(svc_sites_reload(dir, cmd), 0);
	CU_ASSERT_EQUAL(reload_times(times, t, 3), 2);
	CU_ASSERT(t[1] - t[0] >= SVC_SITES_RELOAD_GAP_MS / 1000.0 - 0.05);
	CU_ASSERT(t[1] - t[0] < SVC_SITES_RELOAD_GAP_MS / 1000.0 + 2.0);
	CU_ASSERT_EQUAL(svc_sites_reload(dir, "exit 3"), SVC_E_INTERNAL);
	{
		/* no lock file can be made (no such directory): the command runs at once all the same */
		char gone[160];
		snprintf(gone, sizeof gone, "%s/none", dir);
		t0 = svc_mono_ms();
		CU_ASSERT_EQUAL(svc_sites_reload(gone, cmd), 0);
		CU_ASSERT(svc_mono_ms() - t0 < SVC_SITES_RELOAD_GAP_MS / 2);
		CU_ASSERT_EQUAL(reload_times(times, t, 3), 3);
	}
	unlink(times);
	unlink(lock);
	rmdir(dir);
}


SVC_TEST_SUITE(domains_suite)
{
	CU_pSuite s = CU_add_suite("domains", NULL, NULL);

	CU_add_test(s, "test_domains_accepts_one_label_under_registrable", test_domains_accepts_one_label_under_registrable);
	CU_add_test(s, "test_domains_refuses_two_labels_under_registrable", test_domains_refuses_two_labels_under_registrable);
	CU_add_test(s, "test_domains_refuses_ips_and_bad_names", test_domains_refuses_ips_and_bad_names);
	CU_add_test(s, "test_domains_refuses_platform_and_public_suffixes", test_domains_refuses_platform_and_public_suffixes);
	CU_add_test(s, "test_domains_plans", test_domains_plans);
	CU_add_test(s, "test_domains_sites_reloads_are_spaced", test_domains_sites_reloads_are_spaced);
	CU_add_test(s, "test_domains_reserved_names", test_domains_reserved_names);
	CU_add_test(s, "test_domains_dns_check_txt_proof", test_domains_dns_check_txt_proof);
	CU_add_test(s, "test_quota_limits_and_plan_overrides", test_quota_limits_and_plan_overrides);
	CU_add_test(s, "test_quota_dir_bytes", test_quota_dir_bytes);
}
