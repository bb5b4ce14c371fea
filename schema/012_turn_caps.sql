-- 012_turn_caps.sql: whose turn a chat's generation is, so the turns running at once can be
-- capped per user and per workspace (SVC_AI_MAX_TURNS_PER_USER, SVC_AI_MAX_TURNS_PER_WORKSPACE).
ALTER TABLE chat_generations
  ADD COLUMN user_id CHAR(36) NULL AFTER turn_id,
  ADD COLUMN workspace_id CHAR(36) NULL AFTER user_id,
  ADD KEY ix_generations_user (user_id, heartbeat_at),
  ADD KEY ix_generations_workspace (workspace_id, heartbeat_at);
