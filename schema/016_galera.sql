-- 016_galera.sql: what several hosts on one MariaDB Galera cluster need (issue 19, docs/scaling.md).
-- db_metrics: counters of the database layer (transactions run again after a deadlock or a
-- certification failure, connections that failed over to another server), one row per process
-- (`instance`: SVC_INSTANCE_ID or hostname:pid), so no two hosts ever write one row; `svc-admin
-- metrics` adds them up.
CREATE TABLE db_metrics (
  name VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  instance VARCHAR(160) NOT NULL,
  value BIGINT UNSIGNED NOT NULL DEFAULT 0,
  updated_at DATETIME(3) NOT NULL,
  PRIMARY KEY (name, instance)
) ENGINE=InnoDB;
-- The turn claim (lib/api/api_chat.c) wrote nothing to the user's and the workspace's rows it
-- locked (SELECT ... FOR UPDATE): Galera certifies only writes, so two hosts could both take the
-- last place. It now bumps these counters, a write that two nodes' claims conflict on (1213, run
-- again by svc_db_tx()).
ALTER TABLE users ADD COLUMN turn_claims BIGINT UNSIGNED NOT NULL DEFAULT 0;
ALTER TABLE workspaces ADD COLUMN turn_claims BIGINT UNSIGNED NOT NULL DEFAULT 0;
