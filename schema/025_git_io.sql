-- 025_git_io.sql: Git in and out (issue 30, docs/git.md): a project imported from a Git URL while
-- svc-worker clones it (its state, the reason it failed, the sealed token it clones with until then),
-- and a project's mirror on a forge (the remote, its sealed token, the last push's result).
CREATE TABLE project_imports (
  project_id CHAR(36) NOT NULL PRIMARY KEY,
  state ENUM('importing','failed','done') NOT NULL,
  error VARCHAR(1000) NULL,
  url VARCHAR(2048) NULL,
  ref VARCHAR(255) NULL,
  username VARCHAR(255) NULL,
  token_sealed TEXT NULL,
  created_by CHAR(36) NOT NULL,
  created_at DATETIME(3) NOT NULL,
  updated_at DATETIME(3) NOT NULL,
  CONSTRAINT fk_project_imports_project FOREIGN KEY (project_id) REFERENCES projects (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE project_git_remotes (
  project_id CHAR(36) NOT NULL PRIMARY KEY,
  url VARCHAR(2048) NOT NULL,
  branch VARCHAR(255) NOT NULL DEFAULT 'main',
  username VARCHAR(255) NULL,
  token_sealed TEXT NOT NULL,
  last_push_at DATETIME(3) NULL,
  last_push_ok TINYINT NULL,
  last_push_sha CHAR(40) NULL,
  last_push_message VARCHAR(1000) NULL,
  created_by CHAR(36) NOT NULL,
  created_at DATETIME(3) NOT NULL,
  updated_at DATETIME(3) NOT NULL,
  CONSTRAINT fk_project_git_remotes_project FOREIGN KEY (project_id) REFERENCES projects (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;
