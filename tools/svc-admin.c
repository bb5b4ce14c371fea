/* svc-admin.c: operator commands: check the settings; prepare a cgroup v2 subtree for builds; grant or revoke the platform-admin flag of a user by e-mail; set a workspace's plan; write the custom-domain includes; check one custom domain now; backup and restore (backup.c); import the integrations catalogue; rotate the instance key. */
#include <pwd.h>
#include <stdio.h>
#include <string.h>

#include "core/cgroup.h"
#include "core/config.h"
#include "db/db.h"
#include "core/err.h"
#include "core/log.h"
#include "core/psl.h"
#include "auth/auth.h"
#include "auth/crypto.h"
#include "core/util.h"
#include "project/domains.h"
#include "project/project.h"
#include "project/sandbox.h"
#include "backup.h"
#include "integ/integ.h"

static int usage(void)
{
	fprintf(stderr, "usage: svc-admin check [--settings]\n"
			"       svc-admin grant-platform-admin EMAIL\n"
			"       svc-admin revoke-platform-admin EMAIL\n"
			"       svc-admin set-plan WORKSPACE_ID free|pro|business\n"
			"       svc-admin write-sites\n"
			"       svc-admin check-domain DOMAIN_ID\n"
			"       svc-admin fix-modes\n"
			"       svc-admin backup DIR\n"
			"       svc-admin restore DIR\n"
			"       svc-admin import-catalog FILE\n"
			"       svc-admin metrics\n"
			"       svc-admin rotate-key [--check]\n"
			"       svc-admin cgroup-prepare USER\n");
	return 2;
}

/* Loads the settings and connects to the database; on failure says why, frees what it made and returns 1. */
static int open_db(struct svc_config *cfg, struct svc_db **db)
{
	char errbuf[256];

	if (svc_config_load(cfg, errbuf, sizeof errbuf) < 0) {
		fprintf(stderr, "svc-admin: %s\n", errbuf);
		return 1;
	}
	if (svc_db_open(cfg, db) < 0) {
		fprintf(stderr, "svc-admin: cannot connect to the database\n");
		svc_config_dispose(cfg);
		return 1;
	}
	return 0;
}

/* svc-admin write-sites: (re)writes the web servers' includes of custom domains (svc_sites_write); 0 or 1. */
static int write_sites(void)
{
	struct svc_config cfg;
	struct svc_db *db = NULL;
	int rc = 1, changed = 0;

	if (open_db(&cfg, &db))
		return 1;
	if (svc_sites_write(db, &cfg, &changed) < 0) {
		fprintf(stderr, "svc-admin: the includes could not be written (see the log)\n");
	} else {
		printf("custom-domain includes %s\n", changed ? "written" : "unchanged");
		rc = 0;
	}
	svc_db_close(db);
	svc_config_dispose(&cfg);
	return rc;
}

/*
 * svc-admin check-domain DOMAIN_ID: runs the checks of one custom domain now, by hand (as POST
 * /domains/:id/verify has svc-worker do), has svc-worker rewrite the includes when its served
 * state changed (svc_sites_queue()), and prints "<domain> <status>" and the reason of a failure;
 * 0, or 1 (unknown domain, errors).
 */
static int check_domain(const char *id)
{
	struct svc_config cfg;
	struct svc_db *db = NULL;
	struct svc_rows *rows = NULL;
	struct svc_dbv p = svc_dbv_str(id);
	int rc = 1, err, changed = 0;

	if (open_db(&cfg, &db))
		return 1;
	/* the includes are svc-worker's to rewrite (one writer, so the web servers reload once), as after the API's changes */
	if ((err = svc_domain_check(db, &cfg, id, 1, &changed)) == 0 && changed)
		err = svc_sites_queue(db);
	if (err == SVC_E_NOT_FOUND)
		fprintf(stderr, "svc-admin: no custom domain %s\n", id);
	else if (err < 0 || svc_db_run(db, STMT_DOMAIN_GET, &p, 1, &rows, NULL) < 0 || !rows || rows->nrows != 1)
		fprintf(stderr, "svc-admin: the check of domain %s failed (see the log)\n", id);
	else {
		const char *reason = svc_rows_get(rows, 0, CDGCOL_REASON);

		printf("%s %s\n", svc_rows_get(rows, 0, CDGCOL_DOMAIN), svc_rows_get(rows, 0, CDGCOL_STATUS));
		if (reason && reason[0])
			printf("%s\n", reason);
		rc = 0;
	}
	svc_rows_free(rows);
	svc_db_close(db);
	svc_config_dispose(&cfg);
	return rc;
}

/* svc-admin fix-modes: SVC_DATA_DIR's areas and everything in them get their modes and group (svc_data_modes()); 0 or 1. */
static int fix_modes(void)
{
	struct svc_config cfg;
	char errbuf[256];
	int rc;

	if (svc_config_load(&cfg, errbuf, sizeof errbuf) < 0) {
		fprintf(stderr, "svc-admin: %s\n", errbuf);
		return 1;
	}
	rc = svc_data_modes(&cfg, 1) < 0;
	if (rc)
		fprintf(stderr, "svc-admin: some modes could not be set (see the log)\n");
	else
		printf("modes of %s set\n", cfg.data_dir);
	svc_config_dispose(&cfg);
	return rc;
}

/* svc-admin import-catalog FILE: loads the integrations catalogue (svc_integ_import, idempotent); 0 or 1. */
static int import_catalog(const char *path)
{
	struct svc_config cfg;
	struct svc_db *db = NULL;
	struct svc_buf text;
	char chunk[65536], why[256];
	size_t n, count = 0;
	FILE *f;
	int rc = 1;

	svc_buf_init(&text, 64u * 1024 * 1024);
	if (!(f = fopen(path, "rb"))) {
		fprintf(stderr, "svc-admin: cannot open %s\n", path);
		return 1;
	}
	while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
		if (svc_buf_add(&text, chunk, n) < 0)
			break;
	if (ferror(f) || !feof(f)) {
		fprintf(stderr, "svc-admin: cannot read %s (or it is over 64 MiB)\n", path);
		fclose(f);
		goto out;
	}
	fclose(f);
	if (open_db(&cfg, &db))
		goto out;
	if (svc_integ_import(db, svc_buf_str(&text), text.len, &count, why, sizeof why) < 0) {
		fprintf(stderr, "svc-admin: the catalogue was not imported: %s\n", *why ? why : "see the log");
	} else {
		svc_log_info("svc-admin: imported %zu integrations from %s", count, path);
		printf("%zu integrations imported\n", count);
		rc = 0;
	}
	svc_db_close(db);
	svc_config_dispose(&cfg);
out:
	svc_buf_dispose(&text);
	return rc;
}

/* svc-admin set-plan WORKSPACE_ID PLAN: the workspace's plan (docs/api.md "Plans"); 0, 1 (failed), 2 (usage). */
static int set_plan(const char *wid, const char *plan)
{
	struct svc_config cfg;
	struct svc_db *db = NULL;
	struct svc_rows *ws = NULL;
	struct svc_dbv p[2];
	int rc = 1;

	if (!svc_uuid_valid(wid)) {
		fprintf(stderr, "svc-admin: not a workspace id: %s\n", wid);
		return 2;
	}
	if (!svc_plan_valid(plan)) {
		fprintf(stderr, "svc-admin: not a plan: %s (free, pro or business)\n", plan);
		return 2;
	}
	if (open_db(&cfg, &db))
		return 1;
	p[0] = svc_dbv_str(wid);
	if (svc_db_run(db, STMT_WS_PLAN_GET, p, 1, &ws, NULL) < 0 || !ws || ws->nrows != 1) {
		fprintf(stderr, "svc-admin: no workspace %s\n", wid);
		goto done;
	}
	p[0] = svc_dbv_str(plan);
	p[1] = svc_dbv_str(wid);
	if (svc_db_run(db, STMT_WS_PLAN_SET, p, 2, NULL, NULL) < 0) {
		fprintf(stderr, "svc-admin: the update failed\n");
		goto done;
	}
	svc_log_info("svc-admin: workspace %s plan %s (was %s)", wid, plan, svc_rows_get(ws, 0, WPCOL_PLAN));
	printf("%s: plan %s (%llu custom domains)\n", wid, plan, (unsigned long long)svc_plan_domain_limit(&cfg, plan));
	rc = 0;
done:
	svc_rows_free(ws);
	svc_db_close(db);
	svc_config_dispose(&cfg);
	return rc;
}

/* Prints every row of the settings table: "NAME=value" (secrets as "(set)"), then its unit and doc. */
static void print_settings(const struct svc_config *cfg)
{
	const struct svc_setting *rows;
	size_t i, n;
	char value[512];

	rows = svc_config_settings(&n);
	for (i = 0; i < n; i++) {
		svc_config_format(cfg, &rows[i], value, sizeof value);
		printf("%s=%s%s  # %s%s%s%s\n", rows[i].name, value, svc_config_is_set(cfg, rows[i].name) ? "" : " (default)",
		       rows[i].doc, rows[i].unit && rows[i].type != SVC_SET_CHOICE ? " [" : "",
		       rows[i].unit && rows[i].type != SVC_SET_CHOICE ? rows[i].unit : "",
		       rows[i].unit && rows[i].type != SVC_SET_CHOICE ? "]" : "");
	}
}

/*
 * svc-admin check [--settings]: the settings load (as the responders read them, through the
 * settings table), the database answers, and what is allowed but unwise is said, one
 * "warning: ..." line each: a malformed setting that falls back to its default (the table's
 * lenient rows), app_url and SVC_DOMAIN sharing a registrable domain (cookie tossing; issue 17,
 * finding 5), no cgroup hierarchy or bubblewrap to contain builds (svc_sandbox_check(); issue 27), on a
 * cgroup v2 host a SVC_BUILD_CGROUP not delegated (svc_cgroup_delegation(): svc-admin cgroup-prepare). Prints "ok: ..." lines and a count; --settings first prints every setting's value.
 * Returns 0 (warnings or none) or 1 (an error: the settings or the database).
 */
static int check(int show)
{
	struct svc_config cfg;
	struct svc_auth_config auth;
	struct svc_db *db = NULL;
	const struct svc_setting *rows;
	const char *w;
	char errbuf[256], warning[1024], deleg[1024];
	int warnings = 0, contained, delegated;
	size_t i, n, set = 0;

	if (svc_config_load(&cfg, errbuf, sizeof errbuf) < 0) {
		printf("error: settings: %s\n", errbuf);
		return 1;
	}
	if (svc_auth_config_load(&cfg, &auth, errbuf, sizeof errbuf) < 0) {
		printf("error: settings: %s\n", errbuf);
		svc_config_dispose(&cfg);
		return 1;
	}
	printf("ok: settings load (SVC_APP_URL %s, SVC_DOMAIN %s)\n", cfg.app_url, cfg.domain);
	if (show)
		print_settings(&cfg);
	rows = svc_config_settings(&n);
	for (i = 0; i < n; i++)
		set += (size_t)svc_config_is_set(&cfg, rows[i].name);
	printf("ok: %zu settings known, %zu set\n", n, set);
	for (i = 0; (w = svc_config_warning(&cfg, i)); i++) {
		printf("warning: %s\n", w);
		warnings++;
	}
	if (svc_psl_shared_site_warning(cfg.app_url, cfg.domain, warning, sizeof warning)) {
		printf("warning: %s\n", warning);
		warnings++;
	}
	/* builds and dev servers need a cgroup hierarchy (issue 27): without one svc refuses to build; on a cgroup v2
	 * host, the subtree svc's groups go in, delegated (svc-admin cgroup-prepare): one warning for one problem */
	contained = svc_sandbox_check(cfg.build_bwrap, cfg.build_cgroup[0] ? cfg.build_cgroup : NULL, warning,
				      sizeof warning) == 0;
	delegated = svc_cgroup_delegation(NULL, cfg.build_cgroup, deleg, sizeof deleg);
	if (!contained) {
		printf("warning: builds: svc refuses to build: %s%s%s (docs/operations.md \"The build sandbox\")\n", warning,
		       delegated == 0 ? "; " : "", delegated == 0 ? deleg : "");
		warnings++;
	} else {
		printf("ok: builds are contained (bubblewrap, a cgroup per run, as this user)\n");
	}
	if (delegated == 1) {
		printf("ok: builds: %s\n", deleg);
	} else if (delegated == 0 && contained) {
		printf("warning: builds: %s (docs/operations.md \"cgroup v2 hosts\")\n", deleg);
		warnings++;
	}
	if (svc_db_open(&cfg, &db) < 0) {
		printf("error: database: cannot connect (SVC_DB_*)\n");
		svc_config_dispose(&cfg);
		return 1;
	}
	printf("ok: database answers\n");
	printf("%d warning%s\n", warnings, warnings == 1 ? "" : "s");
	svc_db_close(db);
	svc_config_dispose(&cfg);
	return 0;
}

/*
 * svc-admin cgroup-prepare USER: on a cgroup v2 host where systemd does not delegate a subtree to svc,
 * makes SVC_BUILD_CGROUP (default /svc) with the memory, pids and cpu controllers handed down to it
 * and delegates it to USER (svc_cgroup_prepare(); docs/operations.md "cgroup v2 hosts"). Run as root.
 * Returns 0, 1 (failed), 2 (usage: no such user).
 */
static int cgroup_prepare(const char *user)
{
	struct svc_config cfg;
	struct passwd *pw = getpwnam(user);
	char why[1024];
	const char *subtree;
	int rc = 0;

	if (!pw) {
		fprintf(stderr, "svc-admin: no user %s\n", user);
		return 2;
	}
	if (svc_config_load(&cfg, why, sizeof why) < 0) {
		fprintf(stderr, "svc-admin: settings: %s\n", why);
		return 1;
	}
	subtree = cfg.build_cgroup[0] ? cfg.build_cgroup : "/svc";
	if (svc_cgroup_prepare(NULL, subtree, (unsigned)pw->pw_uid, (unsigned)pw->pw_gid, why, sizeof why) < 0) {
		fprintf(stderr, "svc-admin: cgroup-prepare: %s\n", why);
		rc = 1;
	} else {
		printf("ok: the cgroup %s is delegated to %s (uid %u); start svc's processes in %s/main", subtree, user,
		       (unsigned)pw->pw_uid, subtree);
		if (!cfg.build_cgroup[0])
			printf(", or set SVC_BUILD_CGROUP=%s", subtree);
		printf("\n");
	}
	svc_config_dispose(&cfg);
	return rc;
}

/* svc-admin metrics: the database layer's counters (table db_metrics), summed over every process of every host. */
static int metrics(void)
{
	struct svc_config cfg;
	struct svc_db *db = NULL;
	struct svc_rows *rows = NULL;
	size_t r;
	int rc = 1;

	if (open_db(&cfg, &db))
		return 1;
	if (svc_db_run(db, STMT_METRICS_SUM, NULL, 0, &rows, NULL) < 0) {
		fprintf(stderr, "svc-admin: cannot read the metrics\n");
		goto done;
	}
	for (r = 0; rows && r < rows->nrows; r++)
		printf("%s %s (%s processes)\n", svc_rows_get(rows, r, MTCOL_NAME), svc_rows_get(rows, r, MTCOL_VALUE),
		       svc_rows_get(rows, r, MTCOL_INSTANCES));
	rc = 0;
done:
	svc_rows_free(rows);
	svc_db_close(db);
	svc_config_dispose(&cfg);
	return rc;
}

/* Names a stored secret that no key opens (table, column, row label; never the value). */
static void note_unreadable(void *arg, const char *table, const char *column, const char *row)
{
	(void)arg;
	printf("unreadable: %s.%s of %s\n", table, column, row);
}

/*
 * svc-admin rotate-key [--check]: re-seals every stored secret still sealed by
 * ENCRYPTION_KEY_PREVIOUS with ENCRYPTION_KEY, while the service runs
 * (docs/operations.md "Rotating ENCRYPTION_KEY"); --check only counts. Up to
 * three passes, for values the service rewrote meanwhile. Returns 0 when
 * every value opens with ENCRYPTION_KEY (or a data key) alone, 1 when some
 * do not (still on the previous key, or unreadable) or on errors, 2 (usage).
 */
static int rotate_key(int write)
{
	struct svc_config cfg;
	struct svc_db *db = NULL;
	struct svc_crypto_rotation r;
	unsigned long rotated = 0;
	int pass, rc = 1;

	if (open_db(&cfg, &db))
		return 1;
	for (pass = 0; pass < (write ? 3 : 1); pass++) {
		if (svc_crypto_rotate(db, &cfg, write, pass == 0 ? note_unreadable : NULL, NULL, &r) < 0) {
			fprintf(stderr, "svc-admin: rotate-key failed (see the log)\n");
			goto done;
		}
		rotated += r.rotated;
		if (r.previous == 0)
			break;
	}
	printf("%s: %lu on ENCRYPTION_KEY (%lu re-sealed now), %lu under workspace data keys, "
	       "%lu still on ENCRYPTION_KEY_PREVIOUS, %lu unreadable\n",
	       write ? "rotate-key" : "rotate-key --check", r.current + r.rotated, rotated, r.data_key, r.previous,
	       r.unreadable);
	if (write)
		svc_log_info("svc-admin: rotate-key re-sealed=%lu unreadable=%lu", rotated, r.unreadable);
	rc = r.previous || r.unreadable ? 1 : 0;
done:
	svc_db_close(db);
	svc_config_dispose(&cfg);
	return rc;
}

int main(int argc, char **argv)
{
	struct svc_config cfg;
	struct svc_db *db = NULL;
	struct svc_dbv p[2];
	char email[256];
	struct svc_rows *user = NULL;
	size_t i, len;
	int grant, rc = 1;

	svc_log_init("svc-admin");
	if (argc == 2 && strcmp(argv[1], "check") == 0)
		return check(0);
	if (argc == 3 && strcmp(argv[1], "check") == 0 && strcmp(argv[2], "--settings") == 0)
		return check(1);
	if (argc == 4 && strcmp(argv[1], "set-plan") == 0)
		return set_plan(argv[2], argv[3]);
	if (argc == 2 && strcmp(argv[1], "write-sites") == 0)
		return write_sites();
	if (argc == 3 && strcmp(argv[1], "check-domain") == 0)
		return check_domain(argv[2]);
	if (argc == 2 && strcmp(argv[1], "fix-modes") == 0)
		return fix_modes();
	if (argc == 3 && strcmp(argv[1], "backup") == 0)
		return svc_backup_run(argv[2]);
	if (argc == 3 && strcmp(argv[1], "restore") == 0)
		return svc_restore_run(argv[2]);
	if (argc == 3 && strcmp(argv[1], "import-catalog") == 0)
		return import_catalog(argv[2]);
	if (argc == 3 && strcmp(argv[1], "cgroup-prepare") == 0)
		return cgroup_prepare(argv[2]);
	if (argc == 2 && strcmp(argv[1], "metrics") == 0)
		return metrics();
	if (argc == 2 && strcmp(argv[1], "rotate-key") == 0)
		return rotate_key(1);
	if (argc == 3 && strcmp(argv[1], "rotate-key") == 0 && strcmp(argv[2], "--check") == 0)
		return rotate_key(0);
	if (argc != 3)
		return usage();
	if (strcmp(argv[1], "grant-platform-admin") == 0)
		grant = 1;
	else if (strcmp(argv[1], "revoke-platform-admin") == 0)
		grant = 0;
	else
		return usage();
	len = strlen(argv[2]);
	if (len < 3 || len >= sizeof email || !strchr(argv[2], '@')) {
		fprintf(stderr, "svc-admin: not an e-mail address: %s\n", argv[2]);
		return 2;
	}
	/* e-mails are stored in lower case (POST /auth/signup) */
	for (i = 0; i <= len; i++)
		email[i] = (char)((argv[2][i] >= 'A' && argv[2][i] <= 'Z') ? argv[2][i] - 'A' + 'a' : argv[2][i]);
	if (open_db(&cfg, &db))
		return 1;
	p[0] = svc_dbv_str(email);
	if (svc_db_run(db, STMT_USER_BY_EMAIL, p, 1, &user, NULL) < 0) {
		fprintf(stderr, "svc-admin: the lookup failed\n");
		goto done;
	}
	if (!user || user->nrows != 1) {
		fprintf(stderr, "svc-admin: no user with the e-mail %s\n", email);
		goto done;
	}
	p[0] = svc_dbv_i64(grant);
	p[1] = svc_dbv_str(email);
	if (svc_db_run(db, STMT_USER_SET_PLATFORM_ADMIN, p, 2, NULL, NULL) < 0) {
		fprintf(stderr, "svc-admin: the update failed\n");
		goto done;
	}
	svc_log_info("svc-admin: %s platform admin user=\"%s\"", grant ? "granted" : "revoked", email);
	printf("%s: platform admin %s\n", email, grant ? "granted" : "revoked");
	rc = 0;
done:
	svc_rows_free(user);
	svc_db_close(db);
	svc_config_dispose(&cfg);
	return rc;
}
