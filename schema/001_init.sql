-- 001_init.sql: users, workspaces, members, folders, projects, chats and their event timelines.
CREATE TABLE users (
  id CHAR(36) NOT NULL PRIMARY KEY,
  email VARCHAR(254) NOT NULL,
  password_hash VARCHAR(255) NULL,
  display_name VARCHAR(128) NULL,
  is_platform_admin TINYINT(1) NOT NULL DEFAULT 0,
  created_at DATETIME(3) NOT NULL,
  updated_at DATETIME(3) NOT NULL,
  UNIQUE KEY uq_users_email (email)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE workspaces (
  id CHAR(36) NOT NULL PRIMARY KEY,
  name VARCHAR(128) NOT NULL,
  kind ENUM('personal','team') NOT NULL,
  created_by CHAR(36) NOT NULL,
  created_at DATETIME(3) NOT NULL,
  updated_at DATETIME(3) NOT NULL,
  KEY ix_workspaces_created_by (created_by),
  CONSTRAINT fk_workspaces_user FOREIGN KEY (created_by) REFERENCES users (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE workspace_members (
  workspace_id CHAR(36) NOT NULL,
  user_id CHAR(36) NOT NULL,
  role ENUM('member','admin','owner') NOT NULL,
  created_at DATETIME(3) NOT NULL,
  PRIMARY KEY (workspace_id, user_id),
  KEY ix_members_user (user_id),
  CONSTRAINT fk_members_workspace FOREIGN KEY (workspace_id) REFERENCES workspaces (id) ON DELETE CASCADE,
  CONSTRAINT fk_members_user FOREIGN KEY (user_id) REFERENCES users (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE folders (
  id CHAR(36) NOT NULL PRIMARY KEY,
  workspace_id CHAR(36) NOT NULL,
  name VARCHAR(128) NOT NULL,
  created_at DATETIME(3) NOT NULL,
  updated_at DATETIME(3) NOT NULL,
  KEY ix_folders_workspace (workspace_id),
  CONSTRAINT fk_folders_workspace FOREIGN KEY (workspace_id) REFERENCES workspaces (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE projects (
  id CHAR(36) NOT NULL PRIMARY KEY,
  workspace_id CHAR(36) NOT NULL,
  folder_id CHAR(36) NULL,
  slug VARCHAR(64) NOT NULL,
  name VARCHAR(128) NOT NULL,
  description TEXT NULL,
  template VARCHAR(64) NULL,
  visibility ENUM('private','workspace','public') NOT NULL DEFAULT 'workspace',
  thumbnail_url VARCHAR(512) NULL,
  published_at DATETIME(3) NULL,
  custom_domain VARCHAR(253) NULL,
  created_by CHAR(36) NOT NULL,
  created_at DATETIME(3) NOT NULL,
  updated_at DATETIME(3) NOT NULL,
  deleted_at DATETIME(3) NULL,
  UNIQUE KEY uq_projects_slug (slug),
  KEY ix_projects_list (workspace_id, deleted_at, created_at, id),
  KEY ix_projects_folder (folder_id),
  FULLTEXT KEY ft_projects_text (name, description),
  CONSTRAINT fk_projects_workspace FOREIGN KEY (workspace_id) REFERENCES workspaces (id) ON DELETE CASCADE,
  CONSTRAINT fk_projects_folder FOREIGN KEY (folder_id) REFERENCES folders (id) ON DELETE SET NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE chats (
  id CHAR(36) NOT NULL PRIMARY KEY,
  project_id CHAR(36) NOT NULL,
  title VARCHAR(200) NULL,
  mode VARCHAR(32) NOT NULL,
  created_by CHAR(36) NOT NULL,
  created_at DATETIME(3) NOT NULL,
  updated_at DATETIME(3) NOT NULL,
  KEY ix_chats_project (project_id, updated_at, id),
  CONSTRAINT fk_chats_project FOREIGN KEY (project_id) REFERENCES projects (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

-- The timeline: every event streamed for a chat, in order (id is the order).
CREATE TABLE chat_events (
  id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY,
  chat_id CHAR(36) NOT NULL,
  turn_id CHAR(36) NOT NULL,
  type VARCHAR(64) NOT NULL,
  payload MEDIUMTEXT NOT NULL,
  created_at DATETIME(3) NOT NULL,
  KEY ix_events_chat (chat_id, id),
  CONSTRAINT fk_events_chat FOREIGN KEY (chat_id) REFERENCES chats (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

-- One running generation per chat; shared by every chat responder process.
CREATE TABLE chat_generations (
  chat_id CHAR(36) NOT NULL PRIMARY KEY,
  turn_id CHAR(36) NOT NULL,
  started_at DATETIME(3) NOT NULL,
  heartbeat_at DATETIME(3) NOT NULL,
  stop_requested TINYINT(1) NOT NULL DEFAULT 0,
  CONSTRAINT fk_generations_chat FOREIGN KEY (chat_id) REFERENCES chats (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;
