-- 017_integration_api_hosts.sql: the API hosts a platform admin sets for an integration's agent tool
-- (PUT /integrations/admin/api-hosts/:id, docs/api.md). NULL: the catalogue's (api_hosts, which
-- svc-admin import-catalog rewrites on every import, so an admin's choice lives in its own column).
ALTER TABLE integrations ADD COLUMN api_hosts_admin VARCHAR(1024) NULL AFTER api_hosts;
