-- 006_sessions.sql: a user's session generation, raised by a password change so that older refresh tokens stop working.
ALTER TABLE users ADD COLUMN session_gen INT UNSIGNED NOT NULL DEFAULT 0 AFTER password_hash;
