-- 013_integrations.sql: the integrations catalogue, its enablement, OAuth apps and platform credentials
-- (sealed, lib/auth/crypto.h), per-user connections, the admin audit log and the agent's recorded calls
-- (issue 16; docs/api.md "Integrations").

-- One row per catalogue entry (data/integrations/catalog.json, loaded by svc-admin import-catalog,
-- which updates the catalogue columns in place and never the enablement). auth_types and categories
-- are comma lists wrapped in commas (",oauth2,secret_text,") so a filter is one LIKE.
-- platform_enabled: the platform made it available to workspaces; enabled: on by default in every
-- workspace (a workspace admin may switch it off or on, integration_workspace_settings).
-- api_hosts: the hosts the agent's integration_request may call (comma list), from the OAuth URLs
-- unless set by the catalogue; per_user_only: never falls back to the platform credential.
CREATE TABLE integrations (
  id VARCHAR(64) NOT NULL PRIMARY KEY,
  display_name VARCHAR(200) NOT NULL,
  description TEXT NULL,
  logo_url VARCHAR(512) NULL,
  auth_types VARCHAR(128) NOT NULL,
  categories VARCHAR(512) NOT NULL,
  oauth_authorize_url VARCHAR(1024) NULL,
  oauth_token_url VARCHAR(1024) NULL,
  oauth_scope VARCHAR(2048) NULL,
  api_hosts VARCHAR(1024) NOT NULL DEFAULT '',
  per_user_only TINYINT(1) NOT NULL DEFAULT 0,
  enabled TINYINT(1) NOT NULL DEFAULT 0,
  platform_enabled TINYINT(1) NOT NULL DEFAULT 0,
  created_at DATETIME(3) NOT NULL,
  updated_at DATETIME(3) NOT NULL,
  KEY ix_integrations_name (display_name, id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

-- A workspace admin's choice for their workspace (only for platform-enabled integrations).
CREATE TABLE integration_workspace_settings (
  workspace_id CHAR(36) NOT NULL,
  integration_id VARCHAR(64) NOT NULL,
  enabled TINYINT(1) NOT NULL,
  updated_by CHAR(36) NOT NULL,
  updated_at DATETIME(3) NOT NULL,
  PRIMARY KEY (workspace_id, integration_id),
  CONSTRAINT fk_iws_workspace FOREIGN KEY (workspace_id) REFERENCES workspaces (id) ON DELETE CASCADE,
  CONSTRAINT fk_iws_integration FOREIGN KEY (integration_id) REFERENCES integrations (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

-- OAuth apps: one per (integration, scope, workspace); scope_key is '' for a global app and the
-- workspace id otherwise, so the unique key holds for both. client_secret is sealed (base64 of
-- lib/auth/crypto.h's format) with the aad "integration_oauth_apps/client_secret/<integration>:<scope_key or global>".
CREATE TABLE integration_oauth_apps (
  id CHAR(36) NOT NULL PRIMARY KEY,
  integration_id VARCHAR(64) NOT NULL,
  scope ENUM('global','workspace') NOT NULL,
  workspace_id CHAR(36) NULL,
  scope_key VARCHAR(36) NOT NULL DEFAULT '',
  client_id VARCHAR(512) NOT NULL,
  client_secret TEXT NOT NULL,
  updated_by CHAR(36) NOT NULL,
  created_at DATETIME(3) NOT NULL,
  updated_at DATETIME(3) NOT NULL,
  UNIQUE KEY uq_ioa_scope (integration_id, scope_key),
  CONSTRAINT fk_ioa_integration FOREIGN KEY (integration_id) REFERENCES integrations (id) ON DELETE CASCADE,
  CONSTRAINT fk_ioa_workspace FOREIGN KEY (workspace_id) REFERENCES workspaces (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

-- The platform credential of an integration (secret_text, basic_auth, custom_auth): `value` is the
-- sealed JSON of what was given, aad "integration_credentials/value/<integration>:global".
CREATE TABLE integration_credentials (
  integration_id VARCHAR(64) NOT NULL PRIMARY KEY,
  auth_type ENUM('secret_text','basic_auth','custom_auth') NOT NULL,
  value MEDIUMTEXT NOT NULL,
  updated_by CHAR(36) NOT NULL,
  created_at DATETIME(3) NOT NULL,
  updated_at DATETIME(3) NOT NULL,
  CONSTRAINT fk_ic_integration FOREIGN KEY (integration_id) REFERENCES integrations (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

-- The admin audit log of integrations (spec "Authentication" 11), newest first by seq.
CREATE TABLE integration_audit (
  seq BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY,
  id CHAR(36) NOT NULL,
  action VARCHAR(64) NOT NULL,
  resource_id VARCHAR(64) NOT NULL,
  details TEXT NOT NULL,
  actor_id CHAR(36) NOT NULL,
  created_at DATETIME(3) NOT NULL,
  UNIQUE KEY uq_integration_audit_id (id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

-- A user's own OAuth token for an integration; the tokens are sealed with the aad
-- "integration_connections/<column>/<id>:<user>".
CREATE TABLE integration_connections (
  id CHAR(36) NOT NULL PRIMARY KEY,
  user_id CHAR(36) NOT NULL,
  integration_id VARCHAR(64) NOT NULL,
  access_token MEDIUMTEXT NOT NULL,
  refresh_token MEDIUMTEXT NULL,
  scope VARCHAR(2048) NULL,
  expires_at DATETIME(3) NULL,
  created_at DATETIME(3) NOT NULL,
  updated_at DATETIME(3) NOT NULL,
  UNIQUE KEY uq_ic_user (user_id, integration_id),
  CONSTRAINT fk_icn_user FOREIGN KEY (user_id) REFERENCES users (id) ON DELETE CASCADE,
  CONSTRAINT fk_icn_integration FOREIGN KEY (integration_id) REFERENCES integrations (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

-- A connect in progress: the state's SHA-256, bound to the user; the PKCE verifier sealed
-- (aad "integration_oauth_states/verifier/<state_hash>:<user>"); used once, 10 minutes.
CREATE TABLE integration_oauth_states (
  state_hash CHAR(64) NOT NULL PRIMARY KEY,
  user_id CHAR(36) NOT NULL,
  integration_id VARCHAR(64) NOT NULL,
  app_id CHAR(36) NOT NULL,
  verifier TEXT NOT NULL,
  expires_at DATETIME(3) NOT NULL,
  KEY ix_ios_expires (expires_at),
  CONSTRAINT fk_ios_user FOREIGN KEY (user_id) REFERENCES users (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

-- Every call of the agent's integration_request (xray): running while finished_at is NULL.
CREATE TABLE integration_calls (
  seq BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY,
  id CHAR(36) NOT NULL,
  integration_id VARCHAR(64) NOT NULL,
  user_id CHAR(36) NOT NULL,
  project_id CHAR(36) NULL,
  method VARCHAR(8) NOT NULL,
  host VARCHAR(253) NOT NULL,
  path VARCHAR(2048) NOT NULL,
  status INT NULL,
  error VARCHAR(64) NULL,
  started_at DATETIME(3) NOT NULL,
  finished_at DATETIME(3) NULL,
  duration_ms INT UNSIGNED NULL,
  UNIQUE KEY uq_integration_calls_id (id),
  KEY ix_integration_calls_started (started_at),
  KEY ix_integration_calls_running (finished_at, started_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;
