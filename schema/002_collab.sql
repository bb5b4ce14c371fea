-- 002_collab.sql: collaboration documents (snapshot + update log), their disk state, design comments, presence, thumbnail requests.

-- One row per project whose collaboration document exists: the compacted state
-- (a Yjs update v1 holding the whole document) and the last update it covers.
CREATE TABLE collab_documents (
  project_id CHAR(36) NOT NULL PRIMARY KEY,
  snapshot LONGBLOB NOT NULL,
  snapshot_seq BIGINT UNSIGNED NOT NULL,
  last_saved_at DATETIME(3) NULL,
  created_at DATETIME(3) NOT NULL,
  updated_at DATETIME(3) NOT NULL,
  CONSTRAINT fk_collab_documents_project FOREIGN KEY (project_id) REFERENCES projects (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

-- The update log after the snapshot: every update svc-wsd integrated, in order.
CREATE TABLE collab_updates (
  project_id CHAR(36) NOT NULL,
  seq BIGINT UNSIGNED NOT NULL,
  data MEDIUMBLOB NOT NULL,
  created_at DATETIME(3) NOT NULL,
  PRIMARY KEY (project_id, seq),
  CONSTRAINT fk_collab_updates_project FOREIGN KEY (project_id) REFERENCES projects (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

-- What svc-wsd last wrote to or read from disk, per file (SHA-256 of the
-- content): tells a disk change made by someone else from an unsaved edit.
CREATE TABLE collab_files (
  project_id CHAR(36) NOT NULL,
  path VARBINARY(1024) NOT NULL,
  sha256 CHAR(64) NOT NULL,
  updated_at DATETIME(3) NOT NULL,
  PRIMARY KEY (project_id, path),
  CONSTRAINT fk_collab_files_project FOREIGN KEY (project_id) REFERENCES projects (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

-- Design comments (spec "Design comment"): open or resolved; deleted ones keep a row with deleted_at.
CREATE TABLE design_comments (
  id CHAR(36) NOT NULL PRIMARY KEY,
  project_id CHAR(36) NOT NULL,
  user_id CHAR(36) NOT NULL,
  parent_id CHAR(36) NULL,
  content TEXT NOT NULL,
  x_percent DOUBLE NOT NULL,
  y_percent DOUBLE NOT NULL,
  selector VARCHAR(1024) NULL,
  page_path VARCHAR(1024) NULL,
  status ENUM('open','resolved') NOT NULL DEFAULT 'open',
  resolved_by CHAR(36) NULL,
  resolved_at DATETIME(3) NULL,
  created_at DATETIME(3) NOT NULL,
  updated_at DATETIME(3) NOT NULL,
  deleted_at DATETIME(3) NULL,
  KEY ix_design_comments_project (project_id, deleted_at, created_at, id),
  CONSTRAINT fk_design_comments_project FOREIGN KEY (project_id) REFERENCES projects (id) ON DELETE CASCADE,
  CONSTRAINT fk_design_comments_user FOREIGN KEY (user_id) REFERENCES users (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

-- Who is in a project's room now, as svc-wsd last reported it (JSON array of users).
CREATE TABLE collab_presence (
  project_id CHAR(36) NOT NULL PRIMARY KEY,
  users TEXT NOT NULL,
  updated_at DATETIME(3) NOT NULL,
  CONSTRAINT fk_collab_presence_project FOREIGN KEY (project_id) REFERENCES projects (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

-- Projects whose thumbnail should be made again (collaborative edits changed files).
CREATE TABLE thumbnail_requests (
  project_id CHAR(36) NOT NULL PRIMARY KEY,
  requested_at DATETIME(3) NOT NULL,
  CONSTRAINT fk_thumbnail_requests_project FOREIGN KEY (project_id) REFERENCES projects (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;
