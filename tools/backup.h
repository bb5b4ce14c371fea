/* backup.h: svc-admin backup and restore (docs/operations.md "Backups"). */
#ifndef SVC_TOOLS_BACKUP_H
#define SVC_TOOLS_BACKUP_H

/*
 * svc-admin backup DIR: writes a consistent backup of the instance whose
 * settings svc_config_load() finds into the directory DIR, which must not
 * exist or be empty (made with mode 0700):
 *   MANIFEST          "svc-backup 1", when, what it holds
 *   database.sql      mariadb-dump --single-transaction (one snapshot of every table)
 *   repos/ID.bundle   each project's repository, `git bundle create --all`, taken after the dump
 *                     (repositories only grow, so every version the dump names is in its bundle)
 *   files.tar         SVC_DATA_DIR's published/, deployments/ and thumbnails/
 *   svc.conf          the settings file with the values of secrets left out (keys named *SECRET*,
 *                     *KEY*, *PASSWORD*, *TOKEN*: keep those, ENCRYPTION_KEY above all, apart)
 * Runs mariadb-dump, git and tar from PATH with argument vectors (no shell); the database
 * password reaches mariadb-dump in a 0600 temporary option file, never on a command line.
 * Returns the exit status: 0, 1 (failed; what it wrote stays, the reason is on stderr), 2 (usage).
 */
int svc_backup_run(const char *dir);

/*
 * svc-admin restore DIR: restores a backup written by svc_backup_run() into an empty instance:
 * its database has no users (migrated or not) and SVC_DATA_DIR/projects has no project. Loads
 * database.sql with the mariadb client, clones each bundle into SVC_DATA_DIR/projects/ID,
 * unpacks files.tar into SVC_DATA_DIR and rewrites the custom-domain includes. Run svc-migrate
 * afterwards when the backup comes from an older svc. Bundle names are checked as project ids
 * before any path is made of them. Returns 0, 1 (refused or failed, reason on stderr) or 2.
 */
int svc_restore_run(const char *dir);

#endif
