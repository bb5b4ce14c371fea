-- 018_domain_holds.sql: custom domains against squatting and dangling records, and checks off the request path
-- (issue 25, items 2 and 4; docs/api.md "Custom domains", docs/operations.md "Custom domains").
--
-- A name is no longer unique across the instance: a workspace that only added a name (pending_dns)
-- must not keep its real owner out. A name is refused (409) when another workspace serves it
-- (pending_verification, active) or holds it after removing it (domain_holds); the state machine
-- never serves one name for two rows.
-- txt_token is the value of the TXT record _svc-challenge.<domain> (SVC_DOMAIN_TXT_PROOF=1).
-- check_queued_at: a check asked for by hand (POST /domains/:domainId/verify) that svc-worker has not
-- finished yet (NULL: none); verify_asked_at: when the last one was asked for (the cooldown).
ALTER TABLE custom_domains
  DROP INDEX uq_custom_domains_domain,
  ADD KEY ix_custom_domains_domain (domain),
  ADD COLUMN txt_token CHAR(32) NULL AFTER address,
  ADD COLUMN check_queued_at DATETIME(3) NULL AFTER next_check_at,
  ADD COLUMN verify_asked_at DATETIME(3) NULL AFTER check_queued_at;

-- A removed name stays held for the workspace that removed it until held_until
-- (SVC_DOMAIN_HOLD_DAYS): only that workspace may add it again meanwhile.
CREATE TABLE domain_holds (
  domain VARCHAR(253) NOT NULL PRIMARY KEY,
  workspace_id CHAR(36) NOT NULL,
  held_until DATETIME(3) NOT NULL,
  created_at DATETIME(3) NOT NULL,
  KEY ix_domain_holds_until (held_until)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;
