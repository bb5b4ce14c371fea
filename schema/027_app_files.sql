-- 027_app_files.sql: the files of the apps svc builds (issue 28, docs/app-backend.md "Files"), per project and
-- environment like their records. The bytes live in MariaDB, in chunks of at most 1 MiB (lib/app/app_files.c
-- APP_FILE_CHUNK), not on disk: a file written through one host of a cluster is read through another with no
-- shared file system, Galera replicates it with the row that names it, and an upload is one transaction, so a
-- failed one leaves nothing (docs/app-backend.md "How files are stored").

CREATE TABLE app_files (
  project_id CHAR(36) NOT NULL,
  env ENUM('test','live') NOT NULL,
  id CHAR(36) NOT NULL,
  owner CHAR(36) NULL,            -- the end user who uploaded it, NULL when uploaded signed out (rule public)
  content_type VARCHAR(255) NOT NULL,
  size BIGINT NOT NULL,
  chunks INT NOT NULL,
  sha256 CHAR(64) NOT NULL,
  created_at DATETIME(3) NOT NULL,
  PRIMARY KEY (project_id, env, id),
  KEY ix_app_files_owner (project_id, env, owner),
  CONSTRAINT fk_app_files_project FOREIGN KEY (project_id) REFERENCES projects (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE app_file_chunks (
  project_id CHAR(36) NOT NULL,
  env ENUM('test','live') NOT NULL,
  file_id CHAR(36) NOT NULL,
  seq INT NOT NULL,
  data MEDIUMBLOB NOT NULL,
  PRIMARY KEY (project_id, env, file_id, seq),
  CONSTRAINT fk_app_file_chunks_file FOREIGN KEY (project_id, env, file_id)
    REFERENCES app_files (project_id, env, id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

-- What each environment's files hold, against SVC_APP_MAX_FILE_BYTES: moved in the transaction of every upload
-- and delete, beside the records' counts.
ALTER TABLE app_usage
  ADD COLUMN files BIGINT NOT NULL DEFAULT 0,
  ADD COLUMN file_bytes BIGINT NOT NULL DEFAULT 0;
