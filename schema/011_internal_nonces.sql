-- 011_internal_nonces.sql: the nonces of signed internal calls (X-Svc-Nonce) seen in the last ten
-- minutes, so a captured call cannot be sent again inside its timestamp window (lib/auth/internal.h).
CREATE TABLE internal_nonces (
  nonce CHAR(32) CHARACTER SET ascii COLLATE ascii_bin NOT NULL PRIMARY KEY,
  seen_at DATETIME(3) NOT NULL,
  KEY ix_internal_nonces_seen (seen_at)
) ENGINE=InnoDB;
