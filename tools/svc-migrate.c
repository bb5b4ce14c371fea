/* svc-migrate.c: applies the numbered SQL migrations of schema/ in order, each once. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <mysql.h>

#include "core/config.h"
#include "db/db.h"
#include "core/err.h"
#include "core/fsx.h"
#include "core/log.h"

#define MIGRATION_MAX (1024 * 1024)
#define MAX_FILES 1000
#define MIGRATE_TIMEOUT 600u /* seconds a migration statement may run */

static int cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A migration file name: NNN_name.sql with three digits. */
static int is_migration(const char *n)
{
	size_t len = strlen(n);

	return len > 8 && n[0] >= '0' && n[0] <= '9' && n[1] >= '0' && n[1] <= '9' && n[2] >= '0' &&
	       n[2] <= '9' && n[3] == '_' && strcmp(n + len - 4, ".sql") == 0;
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	size_t n;

	if (!f)
		return NULL;
	buf = malloc(MIGRATION_MAX + 1);
	if (!buf) {
		fclose(f);
		return NULL;
	}
	n = fread(buf, 1, MIGRATION_MAX + 1, f);
	fclose(f);
	if (n > MIGRATION_MAX) {
		free(buf);
		return NULL;
	}
	buf[n] = '\0';
	return buf;
}

int main(int argc, char **argv)
{
	struct svc_config cfg;
	struct svc_db *db = NULL;
	struct svc_rows *done = NULL;
	const char *dir = NULL;
	char errbuf[256], *names[MAX_FILES];
	size_t n = 0, i, r, applied = 0;
	struct svc_fsx_dir d;
	const char *entry;
	struct stat st;
	int dfd, rc = 1;

	svc_log_init("svc-migrate");
	if (argc == 3 && strcmp(argv[1], "--schema-dir") == 0)
		dir = argv[2];
	else if (argc != 1) {
		fprintf(stderr, "usage: svc-migrate [--schema-dir DIR]\n");
		return 2;
	}
	if (svc_config_load(&cfg, errbuf, sizeof errbuf) < 0) {
		fprintf(stderr, "svc-migrate: %s\n", errbuf);
		return 1;
	}
	if (!dir)
		dir = cfg.schema_dir;
	/* A migration may rebuild a large table: its statements get ten minutes, not the
	 * seconds of SVC_DB_TIMEOUT a request gets (connecting still fails fast). */
	if (cfg.db_timeout < MIGRATE_TIMEOUT)
		cfg.db_timeout = MIGRATE_TIMEOUT;
	if (svc_db_open(&cfg, &db) < 0) {
		fprintf(stderr, "svc-migrate: cannot connect to the database\n");
		goto out;
	}
	if (svc_db_exec_script(db, "CREATE TABLE IF NOT EXISTS schema_migrations ("
				   "name VARCHAR(255) NOT NULL PRIMARY KEY, applied_at DATETIME(3) NOT NULL)"
				   " ENGINE=InnoDB") < 0)
		goto out;
	if (svc_db_run(db, STMT_MIGRATION_APPLIED, NULL, 0, &done, NULL) < 0)
		goto out;
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0 || svc_fsx_dir_open(dfd, &d) < 0) {
		fprintf(stderr, "svc-migrate: cannot open schema directory %s\n", dir);
		if (dfd >= 0)
			close(dfd);
		goto out;
	}
	while (n < MAX_FILES && svc_fsx_dir_next(&d, &entry, &st) > 0)
		if (is_migration(entry))
			names[n++] = strdup(entry);
	svc_fsx_dir_close(&d);
	close(dfd);
	qsort(names, n, sizeof names[0], cmp);
	for (i = 0; i < n; i++) {
		char path[4096], *sql;
		struct svc_dbv name = svc_dbv_str(names[i]);
		int seen = 0;

		for (r = 0; done && r < done->nrows; r++)
			if (strcmp(svc_rows_get(done, r, MGCOL_NAME), names[i]) == 0)
				seen = 1;
		if (seen)
			continue;
		snprintf(path, sizeof path, "%s/%s", dir, names[i]);
		sql = slurp(path);
		if (!sql) {
			fprintf(stderr, "svc-migrate: cannot read %s\n", path);
			goto free_names;
		}
		/* DDL commits implicitly in MariaDB: a migration is recorded once it has run. */
		if (svc_db_exec_script(db, sql) < 0) {
			fprintf(stderr, "svc-migrate: %s failed (see the log line above)\n", names[i]);
			free(sql);
			goto free_names;
		}
		free(sql);
		if (svc_db_run(db, STMT_MIGRATION_RECORD, &name, 1, NULL, NULL) < 0)
			goto free_names;
		printf("svc-migrate: applied %s\n", names[i]);
		applied++;
	}
	printf("svc-migrate: %zu applied, %zu migrations in all\n", applied, n);
	rc = 0;
free_names:
	for (i = 0; i < n; i++)
		free(names[i]);
out:
	svc_rows_free(done);
	svc_db_close(db);
	svc_config_dispose(&cfg);
	return rc;
}
