-- 009_login_addresses.sql: the addresses an account has signed in from, so the per-account ceiling on failed logins
-- only slows strangers and never the owner's right password from a known address (review finding 8 of issue 17).
CREATE TABLE auth_known_addresses (
  user_id CHAR(36) NOT NULL,
  addr_hash CHAR(64) CHARACTER SET ascii NOT NULL,
  last_seen BIGINT NOT NULL,
  PRIMARY KEY (user_id, addr_hash),
  CONSTRAINT fk_known_addresses_user FOREIGN KEY (user_id) REFERENCES users (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;
