/* test_config.c: the settings table: its rows against docs/configuration.md both ways, its defaults, lenient rows. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <CUnit/CUnit.h>

#include "core/config.h"
#include "core/err.h"
#include "unit.h"

/*
 * Settings of the table that docs/configuration.md names outside its "## Settings" tables, on purpose
 * (keep this short): SVC_SECRETS_FILE is read before every other setting, so the opening paragraphs
 * explain it with SVC_CONFIG.
 */
static const char *const documented_in_prose[] = { "SVC_SECRETS_FILE", NULL };

#define DOC_MAX (256 * 1024)
#define NAMES_MAX 512

/* Reads docs/configuration.md of the source tree ($SVC_SRCDIR, else abs_top_srcdir of the build's Makefile). */
static char *read_doc(void)
{
	const char *env = getenv("SVC_SRCDIR");
	char exe[1024], path[2200], line[1200], *slash, *text = NULL;
	ssize_t n;
	size_t len;
	FILE *f;

	path[0] = '\0';
	if (env && env[0]) {
		snprintf(path, sizeof path, "%.900s/docs/configuration.md", env);
	} else if ((n = readlink("/proc/self/exe", exe, sizeof exe - 1)) > 0) {
		exe[n] = '\0';
		if ((slash = strrchr(exe, '/')))
			*slash = '\0'; /* .../tests/unit */
		snprintf(path, sizeof path, "%.1000s/../../Makefile", exe);
		f = fopen(path, "r");
		path[0] = '\0';
		while (f && fgets(line, sizeof line, f)) {
			if (strncmp(line, "abs_top_srcdir = ", 17) == 0) {
				line[strcspn(line, "\n")] = '\0';
				snprintf(path, sizeof path, "%.1000s/docs/configuration.md", line + 17);
				break;
			}
		}
		if (f)
			fclose(f);
	}
	if (!path[0] || !(f = fopen(path, "r")))
		return NULL;
	text = malloc(DOC_MAX + 1);
	len = text ? fread(text, 1, DOC_MAX, f) : 0;
	fclose(f);
	if (text)
		text[len] = '\0';
	return text;
}

/* Adds `name` with every <PROVIDER>, <KIND> and <PLAN> in it replaced by each of their values. */
static void add_expanded(const char *name, char names[][96], size_t *count)
{
	static const struct {
		const char *mark;
		const char *const values[5];
	} marks[] = {
		{ "<PROVIDER>", { "GITHUB", "GOOGLE", NULL } },
		{ "<KIND>", { "PROJECTS", "REPO_BYTES", "SITE_BYTES", "WORKSPACE_BYTES", NULL } },
		{ "<PLAN>", { "FREE", "PRO", "BUSINESS", NULL } },
	};
	size_t m, v;
	const char *at;
	char out[96];

	for (m = 0; m < sizeof marks / sizeof marks[0]; m++) {
		if (!(at = strstr(name, marks[m].mark)))
			continue;
		for (v = 0; marks[m].values[v]; v++) {
			snprintf(out, sizeof out, "%.*s%s%s", (int)(at - name), name, marks[m].values[v],
				 at + strlen(marks[m].mark));
			add_expanded(out, names, count);
		}
		return;
	}
	if (*count < NAMES_MAX)
		snprintf(names[(*count)++], 96, "%s", name);
}

/*
 * The names docs/configuration.md's "## Settings" part documents: every `NAME` in the first cell of a
 * table row, with <PROVIDER>, <KIND> and <PLAN> expanded. Returns how many.
 */
static size_t documented(const char *doc, char names[][96])
{
	const char *start = strstr(doc, "\n## Settings"), *end, *line, *cell_end, *p, *q;
	size_t count = 0;

	if (!start)
		return 0;
	end = strstr(start + 1, "\n## ");
	for (line = start; line && (!end || line < end); line = strchr(line + 1, '\n')) {
		if (strncmp(line, "\n| `", 4) != 0)
			continue;
		cell_end = strchr(line + 3, '|');
		for (p = line + 3; cell_end && (p = memchr(p, '`', (size_t)(cell_end - p))); p = q + 1) {
			char name[96];

			q = memchr(p + 1, '`', (size_t)(cell_end - p - 1));
			if (!q)
				break;
			if (q - p - 1 > 0 && q - p - 1 < (long)sizeof name &&
			    ((p[1] >= 'A' && p[1] <= 'Z') || p[1] == '<')) {
				memcpy(name, p + 1, (size_t)(q - p - 1));
				name[q - p - 1] = '\0';
				add_expanded(name, names, &count);
			}
		}
	}
	return count;
}

/* Every setting the documentation's tables name is a row of the table, and every row is documented. */
static void test_config_table_matches_the_documentation(void)
{
	static char names[NAMES_MAX][96];
	const struct svc_setting *rows;
	char *doc = read_doc();
	size_t n, count, i, j;

	CU_ASSERT_PTR_NOT_NULL_FATAL(doc);
	count = documented(doc, names);
	CU_ASSERT(count > 100);
	for (i = 0; i < count; i++) {
		if (!svc_config_setting(names[i])) {
			fprintf(stderr, "\ndocs/configuration.md documents %s, which is not in the settings table\n", names[i]);
			CU_FAIL("a documented setting is not in the table (lib/core/config_table.c)");
		}
	}
	rows = svc_config_settings(&n);
	for (i = 0; i < n; i++) {
		int found = 0;

		for (j = 0; j < count && !found; j++)
			found = strcmp(names[j], rows[i].name) == 0;
		for (j = 0; documented_in_prose[j] && !found; j++)
			found = strcmp(documented_in_prose[j], rows[i].name) == 0 && strstr(doc, rows[i].name) != NULL;
		if (!found) {
			fprintf(stderr, "\nthe settings table has %s, which docs/configuration.md does not document\n",
				rows[i].name);
			CU_FAIL("a setting of the table is not documented in docs/configuration.md");
		}
	}
	free(doc);
}

/* The table is well-formed: unique names, a doc for each, def_from naming an earlier text row. */
static void test_config_table_rows(void)
{
	const struct svc_setting *rows;
	size_t n, i, j;

	rows = svc_config_settings(&n);
	CU_ASSERT(n > 100 && n <= 256);
	for (i = 0; i < n; i++) {
		CU_ASSERT_PTR_NOT_NULL(rows[i].doc);
		CU_ASSERT(rows[i].doc && rows[i].doc[0]);
		CU_ASSERT(rows[i].type < SVC_SET__MAX);
		CU_ASSERT_PTR_EQUAL(svc_config_setting(rows[i].name), &rows[i]);
		for (j = 0; j < i; j++)
			CU_ASSERT(strcmp(rows[i].name, rows[j].name) != 0);
		if (rows[i].def_from) {
			const struct svc_setting *from = svc_config_setting(rows[i].def_from);
			CU_ASSERT_PTR_NOT_NULL(from);
			CU_ASSERT(from && from < &rows[i] && from->type == SVC_SET_STR);
		}
		if (rows[i].type == SVC_SET_CHOICE)
			CU_ASSERT_PTR_NOT_NULL(rows[i].unit);
	}
	CU_ASSERT_PTR_NULL(svc_config_setting("SVC_NO_SUCH_SETTING"));
}

/* Runs svc_config_load with the environment's svc settings replaced by `text` (a settings file). */
static int load_text(const char *text, struct svc_config *cfg, char *errbuf, size_t max)
{
	const struct svc_setting *rows;
	char path[] = "/tmp/svc-config-XXXXXX";
	char *saved[260] = { 0 }, *saved_cfg = getenv("SVC_CONFIG") ? strdup(getenv("SVC_CONFIG")) : NULL;
	size_t n, i;
	int fd = mkstemp(path), err;
	FILE *f;

	if (fd < 0)
		return -100;
	f = fdopen(fd, "w");
	fputs(text, f);
	fclose(f);
	rows = svc_config_settings(&n);
	for (i = 0; i < n && i < 260; i++) {
		saved[i] = getenv(rows[i].name) ? strdup(getenv(rows[i].name)) : NULL;
		unsetenv(rows[i].name);
	}
	setenv("SVC_CONFIG", path, 1);
	err = svc_config_load(cfg, errbuf, max);
	for (i = 0; i < n && i < 260; i++) {
		if (saved[i])
			setenv(rows[i].name, saved[i], 1);
		free(saved[i]);
	}
	if (saved_cfg)
		setenv("SVC_CONFIG", saved_cfg, 1);
	else
		unsetenv("SVC_CONFIG");
	free(saved_cfg);
	unlink(path);
	return err;
}

static void test_config_durations(void)
{
	int64_t s = 0;

	CU_ASSERT_EQUAL(svc_config_parse_duration("15m", &s), 0);
	CU_ASSERT_EQUAL(s, 900);
	CU_ASSERT_EQUAL(svc_config_parse_duration("7d", &s), 0);
	CU_ASSERT_EQUAL(s, 604800);
	CU_ASSERT_EQUAL(svc_config_parse_duration("90", &s), 0);
	CU_ASSERT_EQUAL(s, 90);
	CU_ASSERT_EQUAL(svc_config_parse_duration("12h", &s), 0);
	CU_ASSERT_EQUAL(s, 43200);
	CU_ASSERT_EQUAL(svc_config_parse_duration("0m", &s), SVC_E_VALIDATION);
	CU_ASSERT_EQUAL(svc_config_parse_duration("m", &s), SVC_E_VALIDATION);
	CU_ASSERT_EQUAL(svc_config_parse_duration("15w", &s), SVC_E_VALIDATION);
	CU_ASSERT_EQUAL(svc_config_parse_duration("-5m", &s), SVC_E_VALIDATION);
	CU_ASSERT_EQUAL(svc_config_parse_duration("99999d", &s), SVC_E_VALIDATION);
}

/* SVC_SECRETS_FILE: a second file, read after SVC_CONFIG, whose settings win; a missing one is an error. */
static void test_config_secrets_file(void)
{
	struct svc_config cfg;
	char errbuf[256], secrets[] = "/tmp/svc-secrets-XXXXXX", text[512];
	int fd = mkstemp(secrets);
	FILE *f;

	CU_ASSERT_FATAL(fd >= 0);
	f = fdopen(fd, "w");
	fputs("JWT_SECRET=fedcba9876543210fedcba9876543210\nSVC_DB_PASSWORD=from-secrets\n", f);
	fclose(f);
	snprintf(text, sizeof text, "SVC_DATA_DIR=/tmp/x\nSVC_DB_PASSWORD=from-main\nSVC_SECRETS_FILE=%s\n", secrets);
	CU_ASSERT_EQUAL(load_text(text, &cfg, errbuf, sizeof errbuf), 0);
	CU_ASSERT_STRING_EQUAL(cfg.jwt_secret, "fedcba9876543210fedcba9876543210");
	CU_ASSERT_STRING_EQUAL(cfg.db_password, "from-secrets");
	CU_ASSERT_STRING_EQUAL(cfg.data_dir, "/tmp/x");
	svc_config_dispose(&cfg);
	unlink(secrets);
	CU_ASSERT_EQUAL(load_text(text, &cfg, errbuf, sizeof errbuf), SVC_E_INTERNAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(errbuf, secrets));
}

static void test_config_file_and_required(void)
{
	struct svc_config cfg;
	char errbuf[256];

	CU_ASSERT_EQUAL(load_text("# comment\n\nJWT_SECRET=\"0123456789abcdef0123456789abcdef\"\n"
				       "SVC_DATA_DIR = /tmp/x\nJWT_ACCESS_TOKEN_EXPIRES_IN=5m\n",
				       &cfg, errbuf, sizeof errbuf), 0);
	CU_ASSERT_STRING_EQUAL(cfg.jwt_issuer, "svc");
	CU_ASSERT_EQUAL(cfg.access_ttl_secs, 300);
	CU_ASSERT_EQUAL(cfg.refresh_ttl_secs, 7 * 86400);
	CU_ASSERT_STRING_EQUAL(cfg.data_dir, "/tmp/x");
	CU_ASSERT_STRING_EQUAL(cfg.domain, "localhost");
	CU_ASSERT_STRING_EQUAL(cfg.ai_base_url, "");
	CU_ASSERT_EQUAL(cfg.secure_cookies, 0);
	CU_ASSERT_EQUAL(cfg.db_connect_timeout, 3);
	CU_ASSERT_EQUAL(cfg.db_timeout, 5);
	svc_config_dispose(&cfg);

	/* the database timeouts: whole seconds, never 0 (which would mean "wait for ever") */
	CU_ASSERT_EQUAL(load_text("JWT_SECRET=0123456789abcdef0123456789abcdef\nSVC_DATA_DIR=/x\n"
				       "SVC_DB_TIMEOUT=7\nSVC_DB_CONNECT_TIMEOUT=2\n", &cfg, errbuf, sizeof errbuf), 0);
	CU_ASSERT_EQUAL(cfg.db_timeout, 7);
	CU_ASSERT_EQUAL(cfg.db_connect_timeout, 2);
	svc_config_dispose(&cfg);
	CU_ASSERT_EQUAL(load_text("JWT_SECRET=0123456789abcdef0123456789abcdef\nSVC_DATA_DIR=/x\n"
				       "SVC_DB_TIMEOUT=0\n", &cfg, errbuf, sizeof errbuf), SVC_E_INTERNAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(errbuf, "SVC_DB_TIMEOUT"));
	CU_ASSERT_EQUAL(load_text("JWT_SECRET=0123456789abcdef0123456789abcdef\nSVC_DATA_DIR=/x\n"
				       "SVC_DB_CONNECT_TIMEOUT=3s\n", &cfg, errbuf, sizeof errbuf), SVC_E_INTERNAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(errbuf, "SVC_DB_CONNECT_TIMEOUT"));

	CU_ASSERT_EQUAL(load_text("SVC_DATA_DIR=/tmp/x\n", &cfg, errbuf, sizeof errbuf), SVC_E_INTERNAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(errbuf, "JWT_SECRET"));
	CU_ASSERT_EQUAL(load_text("JWT_SECRET=short\nSVC_DATA_DIR=/tmp/x\n", &cfg, errbuf, sizeof errbuf),
			SVC_E_INTERNAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(errbuf, "JWT_SECRET"));
	CU_ASSERT_EQUAL(load_text("JWT_SECRET=0123456789abcdef0123456789abcdef\nSVC_DATA_DIR=relative\n",
				       &cfg, errbuf, sizeof errbuf), SVC_E_INTERNAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(errbuf, "SVC_DATA_DIR"));
	CU_ASSERT_EQUAL(load_text("JWT_SECRET=0123456789abcdef0123456789abcdef\nSVC_DATA_DIR=/x\n"
				       "SVC_AI_PROTOCOL=grpc\n", &cfg, errbuf, sizeof errbuf), SVC_E_INTERNAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(errbuf, "SVC_AI_PROTOCOL"));
	CU_ASSERT_EQUAL(load_text("no equals sign\n", &cfg, errbuf, sizeof errbuf), SVC_E_INTERNAL);
}

#define BASE "JWT_SECRET=0123456789abcdef0123456789abcdef\nSVC_DATA_DIR=/x\n"

/* With nothing but the required settings, every row takes its default, and the defaults are within bounds. */
static void test_config_defaults_load(void)
{
	struct svc_config cfg;
	char errbuf[256], value[256];
	const struct svc_setting *rows;
	size_t n, i;

	CU_ASSERT_EQUAL_FATAL(load_text(BASE, &cfg, errbuf, sizeof errbuf), 0);
	CU_ASSERT_PTR_NULL(svc_config_warning(&cfg, 0));
	CU_ASSERT_EQUAL(cfg.build_procs, 256);
	CU_ASSERT_EQUAL(cfg.deployments_kept, 5);
	CU_ASSERT_EQUAL(cfg.preview_ttl_secs, 1800);
	CU_ASSERT_EQUAL(cfg.quota[0][0], 100);
	CU_ASSERT_EQUAL(cfg.quota[3][0], 2147483648LL);
	CU_ASSERT_EQUAL(cfg.quota[0][2], -1);
	CU_ASSERT_STRING_EQUAL(cfg.rate_login_ip, "10/1m");
	CU_ASSERT_STRING_EQUAL(cfg.signup_verify, "auto");
	CU_ASSERT_EQUAL(cfg.smtp_starttls, 1);
	CU_ASSERT_STRING_EQUAL(cfg.cors_origins, cfg.app_url); /* def_from */
	CU_ASSERT_STRING_EQUAL(cfg.web_group, "www-data");
	CU_ASSERT_EQUAL(svc_config_is_set(&cfg, "JWT_SECRET"), 1);
	CU_ASSERT_EQUAL(svc_config_is_set(&cfg, "SVC_WS_URL"), 0);
	rows = svc_config_settings(&n);
	for (i = 0; i < n; i++)
		svc_config_format(&cfg, &rows[i], value, sizeof value);
	svc_config_format(&cfg, svc_config_setting("JWT_SECRET"), value, sizeof value);
	CU_ASSERT_STRING_EQUAL(value, "(set)");
	svc_config_format(&cfg, svc_config_setting("SVC_BUILD_PROCS"), value, sizeof value);
	CU_ASSERT_STRING_EQUAL(value, "256");
	svc_config_dispose(&cfg);
	/* the same defaults without loading anything (a configuration built by hand) */
	svc_config_defaults(&cfg);
	CU_ASSERT_STRING_EQUAL(cfg.jwt_secret, "");
	CU_ASSERT_EQUAL(cfg.build_procs, 256);
	CU_ASSERT_EQUAL(cfg.quota[0][1], -1);
	CU_ASSERT_STRING_EQUAL(cfg.cors_origins, "http://127.0.0.1:8080");
	CU_ASSERT_EQUAL(cfg.access_ttl_secs, 900);
	CU_ASSERT_PTR_NULL(cfg.storage);
}

/* A malformed lenient setting is a warning and its default; a malformed strict one stops the load, naming it. */
static void test_config_lenient_and_strict(void)
{
	struct svc_config cfg;
	char errbuf[256];

	CU_ASSERT_EQUAL_FATAL(load_text(BASE "SVC_BUILD_PROCS=lots\nSVC_QUOTA_PROJECTS_PRO=x\nSVC_QUOTA_SITE_BYTES_FREE=7\n"
					    "SVC_CORS_ORIGINS=\nSVC_WS_URL=ws://h\nSVC_DEPLOYMENTS_GRACE_SECS=86401\n",
					    &cfg, errbuf, sizeof errbuf), 0);
	CU_ASSERT_EQUAL(cfg.build_procs, 256);
	CU_ASSERT_EQUAL(cfg.quota[0][2], -1);
	CU_ASSERT_EQUAL(cfg.quota[2][1], 7);
	CU_ASSERT_STRING_EQUAL(cfg.cors_origins, ""); /* set, even empty: kept */
	CU_ASSERT_EQUAL(svc_config_is_set(&cfg, "SVC_WS_URL"), 1);
	CU_ASSERT_PTR_NOT_NULL(svc_config_warning(&cfg, 0));
	CU_ASSERT_PTR_NOT_NULL(strstr(svc_config_warning(&cfg, 0), "SVC_BUILD_PROCS=lots"));
	CU_ASSERT_PTR_NOT_NULL(svc_config_warning(&cfg, 1));
	CU_ASSERT_PTR_NOT_NULL(svc_config_warning(&cfg, 2));
	CU_ASSERT_PTR_NULL(svc_config_warning(&cfg, 3));
	CU_ASSERT_EQUAL(cfg.deployments_grace_secs, 60);
	svc_config_dispose(&cfg);
	CU_ASSERT_EQUAL(load_text(BASE "SVC_SIGNUP_VERIFY=maybe\n", &cfg, errbuf, sizeof errbuf), SVC_E_INTERNAL);
	CU_ASSERT_STRING_EQUAL(errbuf, "SVC_SIGNUP_VERIFY must be auto, on or off");
	CU_ASSERT_EQUAL(load_text(BASE "SVC_PREVIEW_TTL=10s\n", &cfg, errbuf, sizeof errbuf), SVC_E_INTERNAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(errbuf, "SVC_PREVIEW_TTL"));
	CU_ASSERT_EQUAL(load_text(BASE "SVC_WS_PORT=0\n", &cfg, errbuf, sizeof errbuf), SVC_E_INTERNAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(errbuf, "SVC_WS_PORT"));
	CU_ASSERT_EQUAL(load_text(BASE "SVC_AI_PRICES=gpt=1\n", &cfg, errbuf, sizeof errbuf), SVC_E_INTERNAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(errbuf, "model=input:output"));
	CU_ASSERT_EQUAL(load_text(BASE "SVC_AUTH_LOG=relative.log\n", &cfg, errbuf, sizeof errbuf), SVC_E_INTERNAL);
	CU_ASSERT_STRING_EQUAL(errbuf, "SVC_AUTH_LOG must be an absolute path");
	CU_ASSERT_EQUAL(load_text("SVC_DATA_DIR=/x\n", &cfg, errbuf, sizeof errbuf), SVC_E_INTERNAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(errbuf, "JWT_SECRET is missing"));
}

SVC_TEST_SUITE(config_suite)
{
	CU_pSuite s = CU_add_suite("config", NULL, NULL);
	CU_add_test(s, "test_config_table_matches_the_documentation", test_config_table_matches_the_documentation);
	CU_add_test(s, "test_config_table_rows", test_config_table_rows);
	CU_add_test(s, "test_config_defaults_load", test_config_defaults_load);
	CU_add_test(s, "test_config_lenient_and_strict", test_config_lenient_and_strict);
	CU_add_test(s, "test_config_durations", test_config_durations);
	CU_add_test(s, "test_config_file_and_required", test_config_file_and_required);
	CU_add_test(s, "test_config_secrets_file", test_config_secrets_file);
}
