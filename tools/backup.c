/* backup.c: svc-admin backup and restore: the database with mariadb-dump, each project as a git bundle, the sites as a tar file. */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "backup.h"
#include "core/config.h"
#include "core/log.h"
#include "core/util.h"
#include "db/db.h"
#include "project/domains.h"
#include "project/project.h"

#define MANIFEST_MAGIC "svc-backup 1"

/* What SVC_DATA_DIR holds besides the repositories; builds/ and sites/ are made again. */
static const char *const data_areas[] = { "published", "deployments", "thumbnails" };

/*
 * Runs argv[0] (searched in PATH) with stdin from `in` and stdout to `out` (NULL: inherited;
 * `out` is created 0600, truncated). Returns the program's exit status, or -1 when it could not
 * be started or was killed; says which on stderr.
 */
static int run(char *const argv[], const char *in, const char *out)
{
	pid_t pid;
	int status;

	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		perror("svc-admin: fork");
		return -1;
	}
	if (pid == 0) {
		int fd;
		if (in && ((fd = open(in, O_RDONLY | O_CLOEXEC)) < 0 || dup2(fd, 0) < 0))
			_exit(126);
		if (out && ((fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600)) < 0 || dup2(fd, 1) < 0))
			_exit(126);
		execvp(argv[0], argv);
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	if (WIFEXITED(status)) {
		if (WEXITSTATUS(status) == 127)
			fprintf(stderr, "svc-admin: %s is not installed (or not in PATH)\n", argv[0]);
		else if (WEXITSTATUS(status) != 0)
			fprintf(stderr, "svc-admin: %s exited with status %d\n", argv[0], WEXITSTATUS(status));
		return WEXITSTATUS(status);
	}
	fprintf(stderr, "svc-admin: %s was killed by signal %d\n", argv[0], WTERMSIG(status));
	return -1;
}

/*
 * Writes the database connection of `cfg` as a MariaDB client option file into a new 0600
 * temporary file, whose name goes to `path` (PATH_MAX bytes). Returns 0 or -1.
 */
static int client_options(const struct svc_config *cfg, char *path)
{
	FILE *f;
	int fd;

	snprintf(path, 4096, "%s/svc-backup-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if ((fd = mkstemp(path)) < 0 || !(f = fdopen(fd, "w"))) {
		perror("svc-admin: temporary option file");
		if (fd >= 0)
			close(fd);
		return -1;
	}
	fprintf(f, "[client]\nuser=%s\n", cfg->db_user);
	if (cfg->db_password && cfg->db_password[0])
		fprintf(f, "password=%s\n", cfg->db_password);
	if (cfg->db_socket && cfg->db_socket[0])
		fprintf(f, "socket=%s\n", cfg->db_socket);
	else
		fprintf(f, "host=%s\nport=%u\nprotocol=tcp\n", cfg->db_host, cfg->db_port);
	fprintf(f, "default-character-set=utf8mb4\n");
	if (fclose(f) != 0) {
		unlink(path);
		return -1;
	}
	return 0;
}

/* 1 when `key` names a secret whose value a backup leaves out. */
static int secret_key(const char *key, size_t len)
{
	static const char *const words[] = { "SECRET", "KEY", "PASSWORD", "TOKEN" };
	size_t i, w;

	for (w = 0; w < sizeof words / sizeof words[0]; w++) {
		size_t wl = strlen(words[w]);
		for (i = 0; i + wl <= len; i++)
			if (memcmp(key + i, words[w], wl) == 0)
				return 1;
	}
	return 0;
}

/* Copies the settings file to `out` with the secrets' values left out; a missing file is no error. */
static int redacted_settings(const char *out)
{
	const char *file = getenv("SVC_CONFIG");
	char line[8192];
	FILE *in, *o;
	int fd;

	if (!file || !*file)
		file = SVC_SYSCONFDIR "/svc/svc.conf";
	if (!(in = fopen(file, "r")))
		return 0;
	if ((fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600)) < 0 || !(o = fdopen(fd, "w"))) {
		perror("svc-admin: svc.conf");
		fclose(in);
		return -1;
	}
	fprintf(o, "# %s with the values of secrets left out (svc-admin backup)\n", file);
	while (fgets(line, sizeof line, in)) {
		const char *eq = strchr(line, '=');
		if (line[0] != '#' && eq && secret_key(line, (size_t)(eq - line)))
			fprintf(o, "%.*s=\n", (int)(eq - line), line);
		else
			fputs(line, o);
	}
	fclose(in);
	return fclose(o) == 0 ? 0 : -1;
}

/* 1 when `dir` has no entry (or does not exist), 0 when it has one, -1 on another error. */
static int dir_empty(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int empty = 1;

	if (!d)
		return errno == ENOENT ? 1 : -1;
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") && strncmp(e->d_name, ".tmp-", 5)) {
			empty = 0;
			break;
		}
	closedir(d);
	return empty;
}

/* path = a/b into a buffer of 4096 bytes; -1 when it does not fit. */
static int join(char *out, const char *a, const char *b)
{
	int n = snprintf(out, 4096, "%s/%s", a, b);
	return n < 0 || n >= 4096 ? -1 : 0;
}

/* Bundles every project repository under data_dir/projects into dir/repos; the count to *n. */
static int bundle_all(const struct svc_config *cfg, const char *dir, unsigned *n)
{
	char projects[4096], repos[4096], src[4096], out[4096];
	struct dirent *e;
	DIR *d;
	int rc = 0;

	*n = 0;
	if (join(projects, cfg->data_dir, "projects") < 0 || join(repos, dir, "repos") < 0)
		return -1;
	if (mkdir(repos, 0700) < 0) {
		perror("svc-admin: repos/");
		return -1;
	}
	if (!(d = opendir(projects)))
		return errno == ENOENT ? 0 : -1;
	while (rc == 0 && (e = readdir(d))) {
		char *argv[] = { "git", "-C", src, "bundle", "create", "--quiet", out, "--all", NULL };
		char git[4096];
		struct stat st;
		if (!svc_uuid_valid(e->d_name))
			continue; /* ".", "..", a half-made ".tmp-…" */
		if (join(src, projects, e->d_name) < 0 || join(git, src, ".git") < 0 ||
		    snprintf(out, sizeof out, "%s/%s.bundle", repos, e->d_name) >= (int)sizeof out) {
			rc = -1;
			break;
		}
		if (stat(git, &st) < 0)
			continue; /* not a repository (yet) */
		if (run(argv, NULL, NULL) != 0)
			rc = -1;
		else
			(*n)++;
	}
	closedir(d);
	return rc;
}

int svc_backup_run(const char *dir)
{
	struct svc_config cfg;
	char errbuf[256], opts[4096], path[4096], stamp[32];
	unsigned repos = 0;
	int rc = 1, have_opts = 0;
	time_t now = time(NULL);
	FILE *m;

	if (svc_config_load(&cfg, errbuf, sizeof errbuf) < 0) {
		fprintf(stderr, "svc-admin: %s\n", errbuf);
		return 1;
	}
	if (dir_empty(dir) != 1 || (mkdir(dir, 0700) < 0 && errno != EEXIST)) {
		fprintf(stderr, "svc-admin: %s must be a new or empty directory\n", dir);
		goto done;
	}
	if (client_options(&cfg, opts) < 0)
		goto done;
	have_opts = 1;
	{
		char arg[4200];
		char *argv[] = { "mariadb-dump", arg, "--single-transaction", "--quick", "--hex-blob", "--routines",
				 "--triggers", "--skip-comments", (char *)cfg.db_name, NULL };
		snprintf(arg, sizeof arg, "--defaults-extra-file=%s", opts);
		if (join(path, dir, "database.sql") < 0 || run(argv, NULL, path) != 0)
			goto done;
	}
	if (bundle_all(&cfg, dir, &repos) < 0) {
		fprintf(stderr, "svc-admin: a repository could not be bundled\n");
		goto done;
	}
	{
		char *argv[8 + sizeof data_areas / sizeof data_areas[0]];
		size_t i, k = 0;
		struct stat st;
		argv[k++] = "tar";
		argv[k++] = "-C";
		argv[k++] = (char *)cfg.data_dir;
		argv[k++] = "-cf";
		argv[k++] = path;
		for (i = 0; i < sizeof data_areas / sizeof data_areas[0]; i++) {
			char area[4096];
			if (join(area, cfg.data_dir, data_areas[i]) == 0 && stat(area, &st) == 0)
				argv[k++] = (char *)data_areas[i];
		}
		argv[k++] = "--files-from=/dev/null"; /* an archive with no area is still an archive */
		argv[k] = NULL;
		if (join(path, dir, "files.tar") < 0 || run(argv, NULL, NULL) != 0)
			goto done;
	}
	if (join(path, dir, "svc.conf") < 0 || redacted_settings(path) < 0)
		goto done;
	strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
	if (join(path, dir, "MANIFEST") < 0 || !(m = fopen(path, "w"))) {
		perror("svc-admin: MANIFEST");
		goto done;
	}
	fprintf(m, "%s\ncreated %s\ndatabase %s\nrepositories %u\ndata %s\n", MANIFEST_MAGIC, stamp, cfg.db_name, repos,
		cfg.data_dir);
	if (fclose(m) != 0)
		goto done;
	svc_log_info("svc-admin: backup written to %s (%u repositories)", dir, repos);
	printf("backup written to %s: the database, %u repositories, the sites\n", dir, repos);
	rc = 0;
done:
	if (have_opts)
		unlink(opts);
	svc_config_dispose(&cfg);
	return rc;
}

/* 1 when the instance's database has no user (no users table counts as none), 0 when it has, -1 on error. */
static int database_empty(const char *opts, const char *db_name)
{
	char arg[4200], out[4096], buf[64] = "";
	char *argv[] = { "mariadb", arg, "-N", "-B", "-e", NULL, (char *)db_name, NULL };
	FILE *f;
	int rc;

	snprintf(arg, sizeof arg, "--defaults-extra-file=%s", opts);
	if (snprintf(out, sizeof out, "%s.out", opts) >= (int)sizeof out)
		return -1;
	/* does the table exist? then count its rows */
	argv[5] = "SELECT IF(COUNT(*) = 0, 'none', 'table') FROM information_schema.tables "
		  "WHERE table_schema = DATABASE() AND table_name = 'users'";
	if (run(argv, NULL, out) != 0)
		goto fail;
	if (!(f = fopen(out, "r")) || !fgets(buf, sizeof buf, f)) {
		if (f)
			fclose(f);
		goto fail;
	}
	fclose(f);
	if (strncmp(buf, "none", 4) == 0) {
		unlink(out);
		return 1;
	}
	argv[5] = "SELECT COUNT(*) FROM users";
	if (run(argv, NULL, out) != 0 || !(f = fopen(out, "r")))
		goto fail;
	if (fgets(buf, sizeof buf, f)) {
		uint64_t users;
		buf[strcspn(buf, "\n")] = '\0';
		rc = svc_parse_u64(buf, UINT64_MAX, &users) == 0 && users == 0;
	} else {
		rc = -1;
	}
	fclose(f);
	unlink(out);
	return rc;
fail:
	unlink(out);
	return -1;
}

/* Clones each repos/ID.bundle of the backup into data_dir/projects/ID; the count to *n. */
static int unbundle_all(const struct svc_config *cfg, const char *dir, unsigned *n)
{
	char repos[4096], projects[4096], bundle[4096], dst[4096], id[64];
	struct dirent *e;
	DIR *d;
	int rc = 0;

	*n = 0;
	if (join(repos, dir, "repos") < 0 || join(projects, cfg->data_dir, "projects") < 0)
		return -1;
	if (mkdir(projects, 0700) < 0 && errno != EEXIST) {
		perror("svc-admin: projects/");
		return -1;
	}
	if (!(d = opendir(repos)))
		return errno == ENOENT ? 0 : -1;
	while (rc == 0 && (e = readdir(d))) {
		char *argv[] = { "git", "clone", "--quiet", bundle, dst, NULL };
		size_t len = strlen(e->d_name);
		if (len != 36 + 7 || strcmp(e->d_name + 36, ".bundle") != 0)
			continue;
		memcpy(id, e->d_name, 36);
		id[36] = '\0';
		if (!svc_uuid_valid(id))
			continue; /* never a path made of a name the backup directory chose */
		if (join(bundle, repos, e->d_name) < 0 || join(dst, projects, id) < 0 || run(argv, NULL, NULL) != 0)
			rc = -1;
		else
			(*n)++;
	}
	closedir(d);
	return rc;
}

int svc_restore_run(const char *dir)
{
	struct svc_config cfg;
	struct svc_db *db = NULL;
	char errbuf[256], opts[4096], path[4096], line[64] = "", projects[4096];
	unsigned repos = 0;
	int rc = 1, have_opts = 0, changed = 0, empty;
	FILE *m = NULL;

	if (join(path, dir, "MANIFEST") < 0 || !(m = fopen(path, "r")) || !fgets(line, sizeof line, m) ||
	    strncmp(line, MANIFEST_MAGIC "\n", sizeof MANIFEST_MAGIC) != 0) {
		fprintf(stderr, "svc-admin: %s is not a backup of svc-admin backup (no MANIFEST \"%s\")\n", dir,
			MANIFEST_MAGIC);
		if (m)
			fclose(m);
		return 1;
	}
	fclose(m);
	if (svc_config_load(&cfg, errbuf, sizeof errbuf) < 0) {
		fprintf(stderr, "svc-admin: %s\n", errbuf);
		return 1;
	}
	if (client_options(&cfg, opts) < 0)
		goto done;
	have_opts = 1;
	if (join(projects, cfg.data_dir, "projects") < 0 || (empty = database_empty(opts, cfg.db_name)) < 0)
		goto done;
	if (!empty || dir_empty(projects) != 1) {
		fprintf(stderr, "svc-admin: restore needs an empty instance: database %s has users or %s has projects\n",
			cfg.db_name, projects);
		goto done;
	}
	{
		char arg[4200];
		char *argv[] = { "mariadb", arg, (char *)cfg.db_name, NULL };
		snprintf(arg, sizeof arg, "--defaults-extra-file=%s", opts);
		if (join(path, dir, "database.sql") < 0 || run(argv, path, NULL) != 0)
			goto done;
	}
	if (unbundle_all(&cfg, dir, &repos) < 0) {
		fprintf(stderr, "svc-admin: a repository could not be restored\n");
		goto done;
	}
	{
		char *argv[] = { "tar", "-C", (char *)cfg.data_dir, "-xf", path, "--no-same-owner", NULL };
		if (join(path, dir, "files.tar") < 0 || run(argv, NULL, NULL) != 0)
			goto done;
	}
	/* tar keeps the modes of the backup (an older version's 0755/0644): the data's own ones again */
	if (svc_data_modes(&cfg, 1) < 0)
		fprintf(stderr, "svc-admin: some modes could not be set (see the log; svc-admin fix-modes)\n");
	if (svc_db_open(&cfg, &db) < 0 || svc_sites_write(db, &cfg, &changed) < 0) {
		fprintf(stderr, "svc-admin: the custom-domain includes could not be written (svc-admin write-sites)\n");
		goto done;
	}
	svc_log_info("svc-admin: restored %s (%u repositories)", dir, repos);
	printf("restored %s: the database, %u repositories, the sites\n", dir, repos);
	rc = 0;
done:
	if (have_opts)
		unlink(opts);
	svc_db_close(db);
	svc_config_dispose(&cfg);
	return rc;
}
