-- 019_integration_scopes.sql: integration credentials scoped to a workspace (issue 25 items 5 and 10):
-- a user's connection belongs to (user, workspace, integration); a platform credential is used only in
-- the workspaces the platform admin allows; a workspace admin may make an enablement read-only; every
-- agent call records which credential kind it used (docs/api.md "Integrations").

-- Connections: existing ones move to their user's personal workspace (the workspace a connect without
-- workspaceId used to answer for); a user without one has nothing to move them to, and connects again.
-- The sealed tokens keep their aad ("<integration>:<user>"): the row's workspace is bound by the key.
ALTER TABLE integration_connections ADD COLUMN workspace_id CHAR(36) NULL AFTER user_id;
UPDATE integration_connections c SET workspace_id = (
  SELECT w.id FROM workspaces w WHERE w.kind = 'personal' AND w.created_by = c.user_id
  ORDER BY w.created_at, w.id LIMIT 1);
DELETE FROM integration_connections WHERE workspace_id IS NULL;
ALTER TABLE integration_connections MODIFY workspace_id CHAR(36) NOT NULL,
  ADD UNIQUE KEY uq_ic_user_ws (user_id, workspace_id, integration_id);
ALTER TABLE integration_connections DROP INDEX uq_ic_user,
  ADD CONSTRAINT fk_icn_workspace FOREIGN KEY (workspace_id) REFERENCES workspaces (id) ON DELETE CASCADE;

-- A connect in progress remembers the workspace it connects for (NULL: started before this migration,
-- stored for the personal workspace).
ALTER TABLE integration_oauth_states ADD COLUMN workspace_id CHAR(36) NULL AFTER user_id;

-- The workspaces a platform credential may be used in: NULL all of them (what every credential stored
-- before could do), else a comma list wrapped in commas (",<id>,<id>,").
ALTER TABLE integration_credentials ADD COLUMN allowed_workspaces TEXT NULL AFTER value;

-- A workspace admin's read-only switch (only GET and HEAD reach the API): NULL the default, which is
-- read-only when the call uses the platform credential and read-write with the user's own connection.
ALTER TABLE integration_workspace_settings ADD COLUMN read_only TINYINT(1) NULL AFTER enabled;

-- Which credential a call used: user (the caller's own connection), platform, or none.
ALTER TABLE integration_calls ADD COLUMN credential VARCHAR(16) NULL AFTER project_id;
