-- 028_app_fetch.sql: the apps' server-side secrets (issue 28, docs/app-backend.md "Secrets and calls"):
-- a project's secrets by name, each value sealed with ENCRYPTION_KEY (or its workspace's data key) under
-- the label "project_secrets/value_sealed/<project id>:<name>"; never in the repository, never returned.
CREATE TABLE project_secrets (
  project_id CHAR(36) NOT NULL,
  name VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  value_sealed MEDIUMTEXT NOT NULL,
  value_bytes INT UNSIGNED NOT NULL,
  created_by CHAR(36) NULL,
  updated_by CHAR(36) NULL,
  created_at DATETIME(3) NOT NULL,
  updated_at DATETIME(3) NOT NULL,
  PRIMARY KEY (project_id, name),
  CONSTRAINT fk_project_secrets_project FOREIGN KEY (project_id) REFERENCES projects (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;
