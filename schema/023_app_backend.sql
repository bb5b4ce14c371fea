-- 023_app_backend.sql: the backend of the apps svc builds (issue 28, docs/app-backend.md): end users,
-- their sessions and the records of the collections a project declares in svc.data.json, each per
-- project and environment (test: the preview's, live: the published sites'). Fixed tables, no DDL at
-- run time: a record's fields are one JSON document that svc-app validated against the declaration
-- (and the CHECK below keeps valid JSON); owner and timestamps are columns.
--
-- Declared indexes go through app_record_index, one row per (record, indexed field) with the value
-- in a canonical text form, rather than generated columns: a generated column needs a fixed JSON
-- path, so one per declared field would be DDL whenever a declaration changes; a fixed set of slot
-- columns would tie the meaning of each slot to the declaration's order. The table takes any
-- number of indexes, and an equality filter is one lookup of its primary key.

-- The last valid svc.data.json of each project: what svc-app uses while the file in the working
-- tree is invalid (a collaborative edit or a push that got past the checks at save time).
CREATE TABLE app_declarations (
  project_id CHAR(36) NOT NULL PRIMARY KEY,
  sha256 CHAR(64) NOT NULL,
  body MEDIUMTEXT NOT NULL,
  updated_at DATETIME(3) NOT NULL,
  CONSTRAINT ck_app_declarations_json CHECK (JSON_VALID(body)),
  CONSTRAINT fk_app_declarations_project FOREIGN KEY (project_id) REFERENCES projects (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE app_users (
  id CHAR(36) NOT NULL PRIMARY KEY,
  project_id CHAR(36) NOT NULL,
  env ENUM('test','live') NOT NULL,
  email VARCHAR(254) NOT NULL,
  password_hash VARCHAR(128) NOT NULL,
  disabled TINYINT(1) NOT NULL DEFAULT 0,
  created_at DATETIME(3) NOT NULL,
  UNIQUE KEY uq_app_users_email (project_id, env, email),
  CONSTRAINT fk_app_users_project FOREIGN KEY (project_id) REFERENCES projects (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

-- A signed-in end user: the cookie svc_app_session holds the token, this table only its SHA-256.
CREATE TABLE app_sessions (
  token_sha256 CHAR(64) NOT NULL PRIMARY KEY,
  user_id CHAR(36) NOT NULL,
  project_id CHAR(36) NOT NULL,
  env ENUM('test','live') NOT NULL,
  created_at DATETIME(3) NOT NULL,
  expires_at DATETIME(3) NOT NULL,
  KEY ix_app_sessions_user (user_id),
  KEY ix_app_sessions_expiry (expires_at),
  CONSTRAINT fk_app_sessions_user FOREIGN KEY (user_id) REFERENCES app_users (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE app_records (
  project_id CHAR(36) NOT NULL,
  env ENUM('test','live') NOT NULL,
  collection VARCHAR(64) NOT NULL,
  id CHAR(36) NOT NULL,
  owner CHAR(36) NULL,
  fields MEDIUMTEXT NOT NULL,
  created_at DATETIME(3) NOT NULL,
  updated_at DATETIME(3) NOT NULL,
  PRIMARY KEY (project_id, env, collection, id),
  -- an owner's records in creation order (the `owner` list rule) and everyone's (public, user)
  KEY ix_app_records_owner (project_id, env, collection, owner, created_at, id),
  KEY ix_app_records_created (project_id, env, collection, created_at, id),
  CONSTRAINT ck_app_records_json CHECK (JSON_VALID(fields)),
  CONSTRAINT fk_app_records_project FOREIGN KEY (project_id) REFERENCES projects (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE app_record_index (
  project_id CHAR(36) NOT NULL,
  env ENUM('test','live') NOT NULL,
  collection VARCHAR(64) NOT NULL,
  field VARCHAR(64) NOT NULL,
  value VARCHAR(191) COLLATE utf8mb4_bin NOT NULL,
  record_id CHAR(36) NOT NULL,
  PRIMARY KEY (project_id, env, collection, field, value, record_id),
  KEY ix_app_record_index_record (project_id, env, collection, record_id),
  CONSTRAINT fk_app_record_index_project FOREIGN KEY (project_id) REFERENCES projects (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

-- What each project's environment holds, against SVC_APP_MAX_RECORDS, SVC_APP_MAX_BYTES and
-- SVC_APP_MAX_USERS: moved in the transaction of every write, so a write past a quota changes nothing.
CREATE TABLE app_usage (
  project_id CHAR(36) NOT NULL,
  env ENUM('test','live') NOT NULL,
  records BIGINT NOT NULL DEFAULT 0,
  bytes BIGINT NOT NULL DEFAULT 0,
  users BIGINT NOT NULL DEFAULT 0,
  PRIMARY KEY (project_id, env),
  CONSTRAINT fk_app_usage_project FOREIGN KEY (project_id) REFERENCES projects (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;
