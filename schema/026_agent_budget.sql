-- 026_agent_budget.sql: the agent's spending caps and what each turn spent per day (issue 29), and a
-- workspace's instructions to the agent. lib/agent/budget.c reads and writes them; docs/agent.md
-- "Spending caps" says how they are checked.
--
-- A workspace's caps: one row per cap it sets (none: no cap), in US dollars like workspace_credits.
CREATE TABLE workspace_budget_caps (
  workspace_id CHAR(36) NOT NULL,
  cap ENUM('workspace_day','workspace_month','member_day','project_day','token_day','turn') NOT NULL,
  limit_usd DECIMAL(14,6) NOT NULL,
  warn_percent TINYINT UNSIGNED NOT NULL DEFAULT 80,
  block TINYINT(1) NOT NULL DEFAULT 1,
  updated_by CHAR(36) NULL,
  updated_at DATETIME(3) NOT NULL,
  PRIMARY KEY (workspace_id, cap),
  CONSTRAINT fk_budget_caps_workspace FOREIGN KEY (workspace_id) REFERENCES workspaces (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

-- What the agent's model calls cost, per UTC day, for the workspace itself (subject_id = the
-- workspace), each member, each project and each API token. Rows are added to in the same
-- transaction as workspace_credits.spent_usd, one upsert each (INSERT ... ON DUPLICATE KEY UPDATE).
CREATE TABLE agent_spend (
  workspace_id CHAR(36) NOT NULL,
  day DATE NOT NULL,
  kind ENUM('workspace','member','project','token') NOT NULL,
  subject_id CHAR(36) NOT NULL,
  spent_usd DECIMAL(14,6) NOT NULL DEFAULT 0,
  updated_at DATETIME(3) NOT NULL,
  PRIMARY KEY (workspace_id, day, kind, subject_id),
  KEY ix_agent_spend_day (day, kind),
  CONSTRAINT fk_agent_spend_workspace FOREIGN KEY (workspace_id) REFERENCES workspaces (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

-- A workspace's instructions to the agent (at most 16 KiB of text), put into every turn's system prompt.
CREATE TABLE workspace_instructions (
  workspace_id CHAR(36) NOT NULL PRIMARY KEY,
  instructions MEDIUMTEXT NOT NULL,
  updated_by CHAR(36) NULL,
  updated_at DATETIME(3) NOT NULL,
  CONSTRAINT fk_instructions_workspace FOREIGN KEY (workspace_id) REFERENCES workspaces (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

-- Models without tool calls (toolMode "text", docs/agent.md "Models without tool calls"): a
-- workspace's provider may be taught the tools as markup instead.
ALTER TABLE workspace_ai_providers ADD COLUMN tool_mode ENUM('native','text') NOT NULL DEFAULT 'native';
