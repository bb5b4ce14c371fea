-- 009_sessions.sql: sign-in sessions (refresh-token families) and their refresh tokens, so a refresh rotates,
-- a retired token presented again ends its whole session (RFC 6819 §5.2.2.3), and logout ends a session.

-- One sign-in: a login, a sign-up, an OAuth sign-in or a password change starts one; every refresh token of it
-- and every access token issued with them carry its id (the "fam" claim). Times in ms since the epoch.
CREATE TABLE auth_sessions (
  id CHAR(32) CHARACTER SET ascii NOT NULL PRIMARY KEY,
  user_id CHAR(36) NOT NULL,
  created_at BIGINT NOT NULL,
  expires_at BIGINT NOT NULL,
  revoked_at BIGINT NULL,
  revoked_why VARCHAR(16) CHARACTER SET ascii NULL,
  KEY ix_sessions_user (user_id),
  KEY ix_sessions_expires (expires_at),
  CONSTRAINT fk_sessions_user FOREIGN KEY (user_id) REFERENCES users (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

-- Every refresh token issued, by its jti; retired_at is set when it was exchanged for the next one.
CREATE TABLE auth_refresh_tokens (
  jti CHAR(32) CHARACTER SET ascii NOT NULL PRIMARY KEY,
  session_id CHAR(32) CHARACTER SET ascii NOT NULL,
  created_at BIGINT NOT NULL,
  retired_at BIGINT NULL,
  KEY ix_refresh_session (session_id),
  CONSTRAINT fk_refresh_session FOREIGN KEY (session_id) REFERENCES auth_sessions (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=ascii;
