-- 003_agent.sql: the agent's tables: plans, compaction summaries, workspace credits and providers, data keys, jobs.

-- Structured plans parsed from the final message of a plan turn; the newest row of a chat is its plan.
CREATE TABLE chat_plans (
  id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY,
  chat_id CHAR(36) NOT NULL,
  turn_id CHAR(36) NOT NULL,
  plan MEDIUMTEXT NOT NULL,
  created_at DATETIME(3) NOT NULL,
  KEY ix_plans_chat (chat_id, id),
  CONSTRAINT fk_plans_chat FOREIGN KEY (chat_id) REFERENCES chats (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

-- Compaction: the summary of every event of a chat up to and including up_to_event_id.
CREATE TABLE chat_summaries (
  id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY,
  chat_id CHAR(36) NOT NULL,
  up_to_event_id BIGINT UNSIGNED NOT NULL,
  summary MEDIUMTEXT NOT NULL,
  created_at DATETIME(3) NOT NULL,
  KEY ix_summaries_chat (chat_id, id),
  CONSTRAINT fk_summaries_chat FOREIGN KEY (chat_id) REFERENCES chats (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

-- Credits: a workspace's limit (NULL = SVC_DEFAULT_CREDIT_USD) and what its model calls cost, in US dollars.
CREATE TABLE workspace_credits (
  workspace_id CHAR(36) NOT NULL PRIMARY KEY,
  limit_usd DECIMAL(14,6) NULL,
  spent_usd DECIMAL(14,6) NOT NULL DEFAULT 0,
  updated_at DATETIME(3) NOT NULL,
  CONSTRAINT fk_credits_workspace FOREIGN KEY (workspace_id) REFERENCES workspaces (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

-- A workspace's own model provider; api_key is sealed (lib/crypto.h), base64 text.
CREATE TABLE workspace_ai_providers (
  workspace_id CHAR(36) NOT NULL PRIMARY KEY,
  protocol VARCHAR(16) NOT NULL,
  base_url VARCHAR(2000) NOT NULL,
  model VARCHAR(200) NOT NULL,
  allowed_models TEXT NULL,
  api_key TEXT NULL,
  updated_by CHAR(36) NOT NULL,
  updated_at DATETIME(3) NOT NULL,
  CONSTRAINT fk_aiprov_workspace FOREIGN KEY (workspace_id) REFERENCES workspaces (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

-- Per-workspace data keys (SVC_ENVELOPE_ENCRYPTION=1), sealed by ENCRYPTION_KEY, base64 text.
CREATE TABLE workspace_keys (
  workspace_id CHAR(36) NOT NULL,
  key_id INT UNSIGNED NOT NULL,
  sealed_key TEXT NOT NULL,
  created_at DATETIME(3) NOT NULL,
  PRIMARY KEY (workspace_id, key_id),
  CONSTRAINT fk_wkeys_workspace FOREIGN KEY (workspace_id) REFERENCES workspaces (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

-- Background work for svc-worker (lib/jobs.h), taken with SELECT ... FOR UPDATE SKIP LOCKED.
CREATE TABLE jobs (
  id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY,
  kind VARCHAR(64) NOT NULL,
  payload MEDIUMTEXT NOT NULL,
  state ENUM('queued','running','done','failed') NOT NULL DEFAULT 'queued',
  attempts INT UNSIGNED NOT NULL DEFAULT 0,
  max_attempts INT UNSIGNED NOT NULL DEFAULT 3,
  run_after DATETIME(3) NOT NULL,
  locked_until DATETIME(3) NULL,
  last_error VARCHAR(1000) NULL,
  created_at DATETIME(3) NOT NULL,
  updated_at DATETIME(3) NOT NULL,
  KEY ix_jobs_ready (state, run_after, id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;
