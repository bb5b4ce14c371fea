-- 030_agent_check.sql: the agent looks at its work (issue 29): a workspace's own bound on the fix
-- rounds a turn may run on its preview check's errors (docs/agent.md "Fix rounds"). NULL, or no
-- row: the instance's SVC_AGENT_FIX_ROUNDS; a workspace may only lower it (the lower holds).
CREATE TABLE workspace_agent_checks (
  workspace_id CHAR(36) NOT NULL PRIMARY KEY,
  fix_rounds TINYINT UNSIGNED NULL,
  updated_by CHAR(36) NULL,
  updated_at DATETIME(3) NOT NULL,
  CONSTRAINT fk_agent_checks_workspace FOREIGN KEY (workspace_id) REFERENCES workspaces (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;
