/* svc-worker.c: the background worker: takes jobs from MariaDB (lib/db/jobs.h) and runs them by kind. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <curl/curl.h>
#include <mysql.h>

#include "agent/turn.h"
#include "auth/auth.h"
#include "core/config.h"
#include "db/db.h"
#include "core/err.h"
#include "db/jobs.h"
#include "core/log.h"
#include "project/project.h"
#include "core/mem.h"
#include "project/preview_build.h"
#include "core/util.h"
#include "project/build.h"
#include "project/paths.h"
#include "project/domains.h"
#include "project/repo.h"
#include "project/thumbnail.h"

#define LEASE_SECS 900     /* a job not finished within this is taken again (its worker died on another host) */
#define RECOVER_MS 30000   /* how often running jobs of dead workers of this host are looked for */
#define IDLE_MS 500        /* wait between looks at an empty queue */

/* What lib/project's jobs run with: the database and settings of the worker's context (set in main()). */
static struct svc_job_ctx project_jobs;

/* What lib/auth's mail jobs run with: the database, settings and auth settings of the worker's context (set in main()). */
static struct svc_auth_job_ctx auth_jobs;

/* SVC_JOB_FIRST_PROMPT: a queued chat turn, run by lib/agent as a chat message would be. */
static int first_prompt_job(void *vctx, const struct svc_job *job, char *errmsg, size_t errmax)
{
	struct svc_ctx *ctx = vctx;

	return svc_agent_chat_queued(ctx->db, &ctx->cfg, job->payload, errmsg, errmax);
}

/* The kinds this worker runs; other issues add theirs here. */
static const struct svc_job_handler handlers[] = {
	{ SVC_JOB_FIRST_PROMPT, first_prompt_job, NULL },
	{ SVC_JOB_THUMBNAIL, svc_thumbnail_job, &project_jobs },
	{ SVC_JOB_PREVIEW_BUILD, svc_preview_build_job, &project_jobs },
	{ SVC_JOB_SITES_WRITE, svc_sites_job, &project_jobs },
	{ SVC_JOB_DOMAIN_VERIFY, svc_domain_verify_job, &project_jobs },
	{ SVC_JOB_RESET_MAIL, svc_auth_job_reset_mail, &auth_jobs },
	{ SVC_JOB_SIGNUP_MAIL, svc_auth_job_signup_mail, &auth_jobs },
};

static volatile sig_atomic_t stopping;

/* SVC_DOMAIN_POLL_INTERVAL: seconds between two looks for custom domains due for a check (default 10). */
static int64_t domain_poll_ms(const struct svc_config *cfg)
{
	return (int64_t)cfg->domain_poll_interval * 1000; /* 1 to 86400 (the settings table) */
}

static void on_signal(int sig)
{
	(void)sig;
	stopping = 1;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

int main(int argc, char **argv)
{
	struct svc_ctx ctx;
	struct sigaction sa;
	char errbuf[256];
	int once = 0, rc = 0, r;
	int64_t recovered_ms = svc_mono_ms() - RECOVER_MS; /* look at once */
	int64_t next_domains = 0, poll_ms;
	struct svc_mem_watch mem = { 0 };

	svc_log_init("svc-worker");
	if (argc == 2 && strcmp(argv[1], "--once") == 0) {
		once = 1;
	} else if (argc != 1) {
		fprintf(stderr, "usage: svc-worker [--once]\n  --once  run the jobs that are ready, then exit\n");
		return 2;
	}
	memset(&ctx, 0, sizeof ctx);
	ctx.name = "svc-worker";
	if (svc_config_load(&ctx.cfg, errbuf, sizeof errbuf) < 0) {
		fprintf(stderr, "svc-worker: %s\n", errbuf);
		return 1;
	}
	/* the mail settings of the auth jobs (SVC_JOB_RESET_MAIL, SVC_JOB_SIGNUP_MAIL) */
	if (svc_auth_config_load(&ctx.cfg, &ctx.auth, errbuf, sizeof errbuf) < 0) {
		fprintf(stderr, "svc-worker: %s\n", errbuf);
		svc_config_dispose(&ctx.cfg);
		return 1;
	}
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK || svc_repo_global_init() < 0) {
		fprintf(stderr, "svc-worker: cannot initialise libcurl or libgit2\n");
		svc_config_dispose(&ctx.cfg);
		return 1;
	}
	/* the data's areas keep their modes (an instance from before 0750/0640: svc-admin fix-modes does the rest) */
	svc_data_modes(&ctx.cfg, 0);
	{
		/* build trees (tmpfs mounts) of builds whose process was killed (issue 27): none outlives its wall clock */
		char builds[2048];
		if (svc_data_path(&ctx.cfg, "builds", NULL, NULL, builds, sizeof builds) == 0)
			svc_build_sweep(builds, ctx.cfg.build_wall_secs + 300);
	}
	poll_ms = domain_poll_ms(&ctx.cfg);
	while (!stopping) {
		if (!ctx.db && svc_db_open(&ctx.cfg, &ctx.db) < 0) {
			svc_log_error("svc-worker: cannot connect to the database; retrying");
			ctx.db = NULL;
			if (once) {
				rc = 1;
				break;
			}
			sleep_ms(2000);
			continue;
		}
		if (svc_mono_ms() >= next_domains) {
			/* custom domains due for a check, then the web servers' includes (lib/project/domains.h) */
			if ((r = svc_domains_recheck_due(ctx.db, &ctx.cfg)) < 0)
				svc_log_error("svc-worker: checking custom domains failed: %s", svc_err_message(r));
			next_domains = svc_mono_ms() + poll_ms;
		}
		/* jobs of a worker of this host that died (SIGKILL, OOM) run again now, not after the lease */
		if (svc_mono_ms() - recovered_ms >= RECOVER_MS) {
			unsigned n = 0;
			if (svc_jobs_recover(ctx.db, &n) == 0)
				recovered_ms = svc_mono_ms();
			else
				svc_log_warn("svc-worker: looking for jobs of dead workers failed");
		}
		project_jobs.db = ctx.db;
		project_jobs.cfg = &ctx.cfg;
		auth_jobs.db = ctx.db;
		auth_jobs.cfg = &ctx.cfg;
		auth_jobs.auth = &ctx.auth;
		r = svc_jobs_run_once(ctx.db, handlers, sizeof handlers / sizeof handlers[0], &ctx, LEASE_SECS);
		svc_mem_release(&mem, 1024 * 1024); /* a job's high-water mark goes back to the kernel (core/mem.h) */
		if (r < 0) {
			svc_log_error("svc-worker: taking a job failed: %s", svc_err_message(r));
			svc_db_close(ctx.db);
			ctx.db = NULL;
			sleep_ms(1000);
			continue;
		}
		if (r == 0) {
			if (once)
				break;
			sleep_ms(IDLE_MS);
		}
	}
	svc_db_close(ctx.db);
	svc_config_dispose(&ctx.cfg);
	curl_global_cleanup();
	mysql_library_end();
	return rc;
}
