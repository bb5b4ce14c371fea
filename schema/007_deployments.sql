-- 007_deployments.sql: each publish of a project is a deployment (its build, its state, its kept site), and a workspace may allow install scripts in builds.
CREATE TABLE deployments (
  id CHAR(36) NOT NULL PRIMARY KEY,
  project_id CHAR(36) NOT NULL,
  status ENUM('building','live','failed','superseded') NOT NULL,
  commit_sha CHAR(40) NULL,
  created_by CHAR(36) NULL,
  started_at DATETIME(3) NOT NULL,
  finished_at DATETIME(3) NULL,
  error TEXT NULL,
  log_excerpt MEDIUMTEXT NULL,
  kept TINYINT(1) NOT NULL DEFAULT 0,
  KEY ix_deployments_project (project_id, started_at, id),
  KEY ix_deployments_status (project_id, status),
  CONSTRAINT fk_deployments_project FOREIGN KEY (project_id) REFERENCES projects (id) ON DELETE CASCADE,
  CONSTRAINT fk_deployments_user FOREIGN KEY (created_by) REFERENCES users (id) ON DELETE SET NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

ALTER TABLE workspaces ADD COLUMN build_scripts TINYINT(1) NOT NULL DEFAULT 0;
