-- 008_domains.sql: workspace plans and the custom domains of projects (issue 15; docs/api.md "Custom domains").
ALTER TABLE workspaces ADD COLUMN plan ENUM('free','pro','business') NOT NULL DEFAULT 'free' AFTER kind;

-- One row per custom domain. `domain` is lower case and unique across the instance.
-- status follows the spec's "Custom domain status"; reason says why the last check failed;
-- attempts counts failed checks since the domain was added or last verified by hand;
-- address is the IPv4 address the DNS check found (the HTTPS check is pinned to it);
-- next_check_at is when svc-worker checks a pending domain again (NULL: never).
CREATE TABLE custom_domains (
  id CHAR(36) NOT NULL PRIMARY KEY,
  project_id CHAR(36) NOT NULL,
  domain VARCHAR(253) NOT NULL,
  status ENUM('pending_dns','pending_verification','active','error') NOT NULL DEFAULT 'pending_dns',
  reason VARCHAR(512) NULL,
  attempts INT UNSIGNED NOT NULL DEFAULT 0,
  address VARCHAR(64) NULL,
  checked_at DATETIME(3) NULL,
  next_check_at DATETIME(3) NULL,
  created_by CHAR(36) NOT NULL,
  created_at DATETIME(3) NOT NULL,
  updated_at DATETIME(3) NOT NULL,
  UNIQUE KEY uq_custom_domains_domain (domain),
  KEY ix_custom_domains_project (project_id, created_at),
  KEY ix_custom_domains_due (next_check_at),
  CONSTRAINT fk_custom_domains_project FOREIGN KEY (project_id) REFERENCES projects (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;
