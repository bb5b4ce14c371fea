-- 031_member_caps.sql: one member's own daily cap in a workspace (issue 29), set by the workspace's
-- admins and owners; it overrides the workspace's per-member default (workspace_budget_caps,
-- cap 'member_day') for that member, more or less. lib/agent/budget.c reads and writes it;
-- docs/api.md "Spending caps and instructions" and docs/agent.md "Spending caps" say how it holds.
-- A member who leaves the workspace loses it (the foreign key to workspace_members).
CREATE TABLE workspace_member_caps (
  workspace_id CHAR(36) NOT NULL,
  user_id CHAR(36) NOT NULL,
  limit_usd DECIMAL(14,6) NOT NULL,
  warn_percent TINYINT UNSIGNED NOT NULL DEFAULT 80,
  block TINYINT(1) NOT NULL DEFAULT 1,
  updated_by CHAR(36) NULL,
  updated_at DATETIME(3) NOT NULL,
  PRIMARY KEY (workspace_id, user_id),
  CONSTRAINT fk_member_caps_member FOREIGN KEY (workspace_id, user_id)
    REFERENCES workspace_members (workspace_id, user_id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;
