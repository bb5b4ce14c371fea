/* svc-worker.c: the background worker: one process per lane (quick, slow), each running its kinds' jobs from MariaDB (lib/db/jobs.h). */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/wait.h>

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
#include "project/gitio.h"
#include "project/repo.h"
#include "project/thumbnail.h"

#define LEASE_SECS 900     /* a job not finished within this is taken again (its worker died on another host) */
#define RECOVER_MS 30000   /* how often running jobs of dead workers of this host are looked for */
#define IDLE_MS 500        /* wait between looks at an empty queue */
#define LANE_STEADY_MS 10000  /* a lane that ran this long before it ended is started again at once */
#define LANE_BACKOFF_MAX_MS 30000 /* the longest wait before a lane that keeps dying is started again */

/* What lib/project's jobs run with: the database and settings of the worker's context (set in work()). */
static struct svc_job_ctx project_jobs;

/* What lib/auth's mail jobs run with: the database, settings and auth settings of the worker's context (set in work()). */
static struct svc_auth_job_ctx auth_jobs;

/* SVC_JOB_FIRST_PROMPT: a queued chat turn, run by lib/agent as a chat message would be. */
static int first_prompt_job(void *vctx, const struct svc_job *job, char *errmsg, size_t errmax)
{
	struct svc_ctx *ctx = vctx;

	return svc_agent_chat_queued(ctx->db, &ctx->cfg, job->payload, errmsg, errmax);
}

/*
 * The lanes (docs/operations.md "The background worker"): each kind runs in one, and each lane is a
 * process of its own that takes only its kinds (svc_jobs_run_once()), so what a person waits for in
 * seconds never queues behind the minutes of a build. Quick: the reset and sign-up mail, the web
 * servers' includes after a change, a custom domain's check asked for by hand (a DNS and an HTTPS look,
 * each at most SVC_DOMAIN_CHECK_TIMEOUT). Slow: a project's first prompt (a model turn), thumbnails
 * (Chromium), preview builds (npm in the sandbox), Git imports and mirror pushes (the network).
 */
static const struct svc_job_handler quick_handlers[] = {
	{ SVC_JOB_RESET_MAIL, svc_auth_job_reset_mail, &auth_jobs },
	{ SVC_JOB_SIGNUP_MAIL, svc_auth_job_signup_mail, &auth_jobs },
	{ SVC_JOB_SITES_WRITE, svc_sites_job, &project_jobs },
	{ SVC_JOB_DOMAIN_VERIFY, svc_domain_verify_job, &project_jobs },
};

static const struct svc_job_handler slow_handlers[] = {
	{ SVC_JOB_FIRST_PROMPT, first_prompt_job, NULL },
	{ SVC_JOB_THUMBNAIL, svc_thumbnail_job, &project_jobs },
	{ SVC_JOB_PREVIEW_BUILD, svc_preview_build_job, &project_jobs },
	{ SVC_JOB_GIT_IMPORT, svc_gitio_import_job, &project_jobs },
	{ SVC_JOB_GIT_MIRROR_PUSH, svc_gitio_mirror_push_job, &project_jobs },
};

struct lane {
	const char *name;  /* in the log */
	const char *comm;  /* the process's name (prctl(2) PR_SET_NAME, at most 15 bytes: ps, top) */
	const struct svc_job_handler *handlers;
	size_t n;
	int checks;        /* runs the periodic checks of custom domains (svc_domains_recheck_due()) */
	int includes;      /* writes the web servers' includes every poll interval (svc_sites_write()) */
	/* the supervisor's record of the lane's process */
	pid_t pid;                /* 0: none running */
	int64_t started_ms;       /* svc_mono_ms() when it was started */
	int64_t start_at_ms;      /* when to start it (again) */
	unsigned short_lives;     /* how many times in a row it ended within LANE_STEADY_MS */
};

/*
 * The periodic domain checks go to the slow lane (up to 20 domains a round, each up to twice
 * SVC_DOMAIN_CHECK_TIMEOUT), which queues a sites.write when it checked one; the quick lane alone writes the
 * includes (lib/project/domains.c: what a process last applied), and looks at them every poll interval.
 */
static struct lane lanes[] = {
	{ "quick", "svc-lane-quick", quick_handlers, sizeof quick_handlers / sizeof quick_handlers[0], 0, 1, 0, 0, 0, 0 },
	{ "slow", "svc-lane-slow", slow_handlers, sizeof slow_handlers / sizeof slow_handlers[0], 1, 0, 0, 0, 0, 0 },
};
#define NLANES (sizeof lanes / sizeof lanes[0])

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

static void on_child(int sig)
{
	(void)sig; /* only so that SIGCHLD is never discarded: supervise() takes it with sigtimedwait() */
}

/* A worker's signals: SIGTERM and SIGINT end it after the job it runs, a closed socket is only an error. */
static void work_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/*
 * Runs the jobs of lanes `ls` (`nl` of them: one in a lane's process, all with --once) until SIGTERM or
 * SIGINT, or with `once` until none of their kinds is ready, taking one job of each lane in turn.
 * Returns the process's exit status.
 */
static int work(struct svc_ctx *ctx, const struct lane *ls, size_t nl, int once)
{
	int rc = 0, r, ran, checks = 0, includes = 0;
	int64_t recovered_ms = svc_mono_ms() - RECOVER_MS; /* look at once */
	int64_t next_domains = 0, poll_ms = domain_poll_ms(&ctx->cfg);
	struct svc_mem_watch mem = { 0 };
	size_t i;

	work_signals();
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK || svc_repo_global_init() < 0) {
		fprintf(stderr, "svc-worker: cannot initialise libcurl or libgit2\n");
		return 1;
	}
	for (i = 0; i < nl; i++) {
		checks |= ls[i].checks;
		includes |= ls[i].includes;
	}
	while (!stopping) {
		if (!ctx->db && svc_db_open(&ctx->cfg, &ctx->db) < 0) {
			svc_log_error("svc-worker: cannot connect to the database; retrying");
			ctx->db = NULL;
			if (once) {
				rc = 1;
				break;
			}
			sleep_ms(2000);
			continue;
		}
		if ((checks || includes) && svc_mono_ms() >= next_domains) {
			/* custom domains due for a check; the web servers' includes, also when another host rewrote
			 * them (lib/project/domains.h) */
			if (checks && (r = svc_domains_recheck_due(ctx->db, &ctx->cfg)) < 0)
				svc_log_error("svc-worker: checking custom domains failed: %s", svc_err_message(r));
			if (includes && (r = svc_sites_write(ctx->db, &ctx->cfg, NULL)) < 0)
				svc_log_error("svc-worker: writing the web servers' includes failed: %s", svc_err_message(r));
			next_domains = svc_mono_ms() + poll_ms;
		}
		/* jobs of a worker of this host that died (SIGKILL, OOM; another lane's too) run again now, not after
		 * the lease: each lane takes back its own kinds */
		if (svc_mono_ms() - recovered_ms >= RECOVER_MS) {
			unsigned n = 0;
			if (svc_jobs_recover(ctx->db, &n) == 0)
				recovered_ms = svc_mono_ms();
			else
				svc_log_warn("svc-worker: looking for jobs of dead workers failed");
		}
		project_jobs.db = ctx->db;
		project_jobs.cfg = &ctx->cfg;
		auth_jobs.db = ctx->db;
		auth_jobs.cfg = &ctx->cfg;
		auth_jobs.auth = &ctx->auth;
		for (i = 0, ran = 0, r = 0; i < nl && !stopping; i++) {
			r = svc_jobs_run_once(ctx->db, ls[i].handlers, ls[i].n, ctx, LEASE_SECS);
			svc_mem_release(&mem, 1024 * 1024); /* a job's high-water mark goes back to the kernel (core/mem.h) */
			if (r < 0)
				break;
			ran |= r;
		}
		if (r < 0) {
			svc_log_error("svc-worker: taking a job failed: %s", svc_err_message(r));
			svc_db_close(ctx->db);
			ctx->db = NULL;
			sleep_ms(1000);
			continue;
		}
		if (!ran) {
			if (once)
				break;
			sleep_ms(IDLE_MS);
		}
	}
	svc_db_close(ctx->db);
	ctx->db = NULL;
	curl_global_cleanup();
	mysql_library_end();
	return rc;
}

/* Starts lane `l`'s process (the supervisor's signals, blocked in `blocked`, are unblocked in it). */
static void lane_start(struct svc_ctx *ctx, struct lane *l, const sigset_t *blocked)
{
	pid_t parent = getpid(), pid;
	char kinds[1024];
	int rc;

	if ((pid = fork()) < 0) {
		svc_log_error("svc-worker: cannot start the %s lane: %s; trying again in 1 s", l->name, strerror(errno));
		l->start_at_ms = svc_mono_ms() + 1000;
		return;
	}
	if (pid == 0) {
		/* the lane goes with the supervisor when that is killed (SIGKILL: systemd's, svc-dev's after 10 s) */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 || getppid() != parent)
			_exit(1);
		prctl(PR_SET_NAME, l->comm, 0, 0, 0);
		signal(SIGCHLD, SIG_DFL);
		work_signals();
		sigprocmask(SIG_UNBLOCK, blocked, NULL);
		if (svc_jobs_kinds(l->handlers, l->n, kinds, sizeof kinds) < 0)
			kinds[0] = '\0';
		svc_log_info("svc-worker: the %s lane runs %s", l->name, kinds);
		rc = work(ctx, l, 1, 0);
		svc_config_dispose(&ctx->cfg);
		exit(rc);
	}
	l->pid = pid;
	l->started_ms = svc_mono_ms();
}

/* Records that lane process `pid` ended with `status` (waitpid(2)) and when to start it again. */
static void lane_ended(pid_t pid, int status)
{
	char how[64];
	int64_t now = svc_mono_ms(), delay = 0;
	size_t i;

	for (i = 0; i < NLANES && lanes[i].pid != pid; i++)
		;
	if (i == NLANES)
		return; /* no lane's: the supervisor forks nothing else, but be safe */
	if (WIFSIGNALED(status))
		snprintf(how, sizeof how, "was killed by signal %d", WTERMSIG(status));
	else
		snprintf(how, sizeof how, "exited with status %d", WEXITSTATUS(status));
	lanes[i].pid = 0;
	if (stopping) {
		svc_log_info("svc-worker: the %s lane (%ld) %s", lanes[i].name, (long)pid, how);
		return;
	}
	if (now - lanes[i].started_ms >= LANE_STEADY_MS) {
		lanes[i].short_lives = 0;
	} else {
		/* one that keeps dying at start (the database refuses it, a broken install) is started less often */
		lanes[i].short_lives++;
		delay = lanes[i].short_lives >= 6 ? LANE_BACKOFF_MAX_MS : (int64_t)1000 << (lanes[i].short_lives - 1);
		if (delay > LANE_BACKOFF_MAX_MS)
			delay = LANE_BACKOFF_MAX_MS;
	}
	lanes[i].start_at_ms = now + delay;
	svc_log_error("svc-worker: the %s lane (%ld) %s; starting it again in %lld ms", lanes[i].name, (long)pid, how,
		      (long long)delay);
}

/*
 * The supervisor: starts one process per lane, starts a lane again when it ends (at once, or after a
 * growing delay when it keeps ending soon after its start), and on SIGTERM or SIGINT passes SIGTERM on to
 * the lanes (each finishes its job) and returns 0 once they have all ended. Signals are taken with
 * sigtimedwait(2), so none is lost between two looks.
 */
static int supervise(struct svc_ctx *ctx)
{
	struct sigaction sa;
	sigset_t set;
	siginfo_t si;
	int64_t now, wait;
	int sig, status, running;
	pid_t pid;
	size_t i;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_child;
	sigaction(SIGCHLD, &sa, NULL);
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGCHLD);
	sigprocmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);
	for (;;) {
		now = svc_mono_ms();
		wait = 1000;
		running = 0;
		for (i = 0; i < NLANES; i++) {
			if (!stopping && !lanes[i].pid && lanes[i].start_at_ms <= now)
				lane_start(ctx, &lanes[i], &set);
			if (lanes[i].pid)
				running++;
			else if (!stopping && lanes[i].start_at_ms - now < wait)
				wait = lanes[i].start_at_ms - now;
		}
		if (stopping && !running)
			break;
		if (wait < 1)
			wait = 1;
		{
			struct timespec ts = { (time_t)(wait / 1000), (long)(wait % 1000) * 1000000L };
			sig = sigtimedwait(&set, &si, &ts);
		}
		if ((sig == SIGTERM || sig == SIGINT) && !stopping) {
			stopping = 1;
			svc_log_info("svc-worker: stopping: each lane finishes its job");
			for (i = 0; i < NLANES; i++)
				if (lanes[i].pid)
					kill(lanes[i].pid, SIGTERM);
		}
		while ((pid = waitpid(-1, &status, WNOHANG)) > 0)
			lane_ended(pid, status);
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct svc_ctx ctx;
	char errbuf[256];
	int once = 0, rc;

	svc_log_init("svc-worker");
	if (argc == 2 && strcmp(argv[1], "--once") == 0) {
		once = 1;
	} else if (argc != 1) {
		fprintf(stderr, "usage: svc-worker [--once]\n  --once  run the jobs that are ready (every lane's, in this process), then exit\n");
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
	/* the data's areas keep their modes (an instance from before 0750/0640: svc-admin fix-modes does the rest) */
	svc_data_modes(&ctx.cfg, 0);
	{
		/* build trees (tmpfs mounts) of builds whose process was killed (issue 27): none outlives its wall clock */
		char builds[2048];
		if (svc_data_path(&ctx.cfg, "builds", NULL, NULL, builds, sizeof builds) == 0)
			svc_build_sweep(builds, ctx.cfg.build_wall_secs + 300);
		svc_deps_sweep(ctx.cfg.data_dir, ctx.cfg.build_wall_secs + 300); /* and installs' (lib/project/deps.h) */
	}
	rc = once ? work(&ctx, lanes, NLANES, 1) : supervise(&ctx);
	svc_config_dispose(&ctx.cfg);
	return rc;
}
