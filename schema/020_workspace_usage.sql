-- 020_workspace_usage.sql: the bytes each project holds on disk, per area, so that a workspace's
-- total (SVC_QUOTA_WORKSPACE_BYTES, issue 25 item 15) is one SUM in SQL instead of a walk of every
-- project's directories on every write. lib/project/quota.c keeps a row up to date each time it
-- measures that area (a file write, a direct save, an agent's write, a publish, a preview build,
-- a save of svc-wsd), with the size the change leaves behind.
CREATE TABLE project_usage (
  project_id CHAR(36) NOT NULL,
  area ENUM('repo','site','preview') NOT NULL,
  bytes BIGINT UNSIGNED NOT NULL,
  updated_at DATETIME(3) NOT NULL,
  PRIMARY KEY (project_id, area),
  CONSTRAINT fk_project_usage_project FOREIGN KEY (project_id) REFERENCES projects (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;
