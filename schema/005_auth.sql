-- 005_auth.sql: OAuth identities, password-reset tokens, per-user API tokens, rate-limit counters, assistant tokens.

-- One row per external account linked to a user (provider "github" or "google", subject = the provider's user id).
CREATE TABLE auth_identities (
  provider VARCHAR(32) NOT NULL,
  subject VARCHAR(255) NOT NULL,
  user_id CHAR(36) NOT NULL,
  email VARCHAR(254) NULL,
  created_at DATETIME(3) NOT NULL,
  last_login_at DATETIME(3) NOT NULL,
  PRIMARY KEY (provider, subject),
  KEY ix_identities_user (user_id),
  CONSTRAINT fk_identities_user FOREIGN KEY (user_id) REFERENCES users (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

-- Password-reset tokens, stored only as SHA-256 (hex) of the token; single use (used_at), expiring.
CREATE TABLE password_resets (
  token_hash CHAR(64) CHARACTER SET ascii NOT NULL PRIMARY KEY,
  user_id CHAR(36) NOT NULL,
  created_at DATETIME(3) NOT NULL,
  expires_at DATETIME(3) NOT NULL,
  used_at DATETIME(3) NULL,
  KEY ix_resets_user (user_id),
  KEY ix_resets_expires (expires_at),
  CONSTRAINT fk_resets_user FOREIGN KEY (user_id) REFERENCES users (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

-- Per-user API tokens ("svc_pat_..."): SHA-256 (hex) of the whole token, the first characters for display, scopes.
CREATE TABLE api_tokens (
  id CHAR(36) NOT NULL PRIMARY KEY,
  user_id CHAR(36) NOT NULL,
  name VARCHAR(128) NOT NULL,
  token_hash CHAR(64) CHARACTER SET ascii NOT NULL,
  token_prefix VARCHAR(16) CHARACTER SET ascii NOT NULL,
  scopes VARCHAR(255) CHARACTER SET ascii NOT NULL,
  created_at DATETIME(3) NOT NULL,
  last_used_at DATETIME(3) NULL,
  UNIQUE KEY uq_api_tokens_hash (token_hash),
  KEY ix_api_tokens_user (user_id, created_at),
  CONSTRAINT fk_api_tokens_user FOREIGN KEY (user_id) REFERENCES users (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

-- Fixed-window counters shared by every responder on every host: bucket = SHA-256 (hex) of "<rule>\n<key>".
CREATE TABLE auth_rate_limits (
  bucket CHAR(64) CHARACTER SET ascii NOT NULL PRIMARY KEY,
  window_start BIGINT NOT NULL,
  hits INT UNSIGNED NOT NULL,
  expires_at BIGINT NOT NULL,
  KEY ix_rate_limits_expires (expires_at)
) ENGINE=InnoDB DEFAULT CHARSET=ascii;

-- A member's own assistant token from the code-hosting provider, AES-256-GCM sealed (lib/crypto.h), never returned.
CREATE TABLE assistant_tokens (
  user_id CHAR(36) NOT NULL,
  provider VARCHAR(32) NOT NULL,
  sealed_token TEXT CHARACTER SET ascii NOT NULL,
  provider_login VARCHAR(255) NULL,
  created_at DATETIME(3) NOT NULL,
  updated_at DATETIME(3) NOT NULL,
  PRIMARY KEY (user_id, provider),
  CONSTRAINT fk_assistant_tokens_user FOREIGN KEY (user_id) REFERENCES users (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;
