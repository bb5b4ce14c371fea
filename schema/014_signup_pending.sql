-- 014_signup_pending.sql: sign-ups waiting for their e-mail link (findings 13 and 6 of issue 17). With sign-up
-- verification on, POST /auth/signup creates no account: it stores a row here and queues auth.signup_mail;
-- svc-worker mails a link (an address without an account) or drops the row (an address with one). The account
-- is created when the link is used, so a stranger's pending sign-up never blocks or claims the owner's address.
CREATE TABLE signup_pending (
  id CHAR(36) NOT NULL PRIMARY KEY,
  email VARCHAR(254) NOT NULL,
  password_hash VARCHAR(255) NOT NULL,
  display_name VARCHAR(128) NULL,
  token_hash CHAR(64) CHARACTER SET ascii NULL,
  created_at DATETIME(3) NOT NULL,
  expires_at DATETIME(3) NOT NULL,
  UNIQUE KEY uq_signup_token (token_hash),
  KEY ix_signup_email (email),
  KEY ix_signup_expires (expires_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;
