-- 010_job_owner.sql: which worker process holds a running job ("host:pid:start"), so a worker
-- that starts on the same host hands back at once the jobs of one that died (lib/db/jobs.h).
ALTER TABLE jobs ADD COLUMN locked_by VARCHAR(160) NULL AFTER locked_until;
