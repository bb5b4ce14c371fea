/* gitcmd.h: running the git command-line program (Debian's git) for what libgit2 does not do: archives, clones, fetches and pushes over HTTPS. */
#ifndef SVC_GITCMD_H
#define SVC_GITCMD_H

#include <stddef.h>
#include <stdint.h>

/*
 * A sink for git's standard output: `len` bytes at `data` (not
 * NUL-terminated). Returns 0 to go on, or a negative svc_err that ends the
 * run (git is killed; svc_git_run() returns it).
 */
typedef int (*svc_git_sink_fn)(void *ctx, const char *data, size_t len);

#define SVC_GIT_MAX_ARGS 48
#define SVC_GIT_MAX_ENV 40

/* One run of git (svc_git_run()). Everything is borrowed for the run's time. */
struct svc_git_run {
	const char *dir;              /* the working directory (git -C), or NULL: the current one */
	const char *args[SVC_GIT_MAX_ARGS]; /* git's arguments after "git", NULL-terminated */
	const char *env[SVC_GIT_MAX_ENV];   /* more "KEY=VALUE" entries of its environment, NULL-terminated */
	svc_git_sink_fn sink;         /* standard output, or NULL: thrown away */
	void *sink_ctx;
	long timeout_ms;              /* > 0: git is killed after this long (SVC_E_UNAVAILABLE) */
	const char *watch_dir;        /* with max_bytes: the directory whose size is watched */
	uint64_t max_bytes;           /* > 0: git is killed once watch_dir holds more (SVC_E_TOO_LARGE) */
};

/*
 * Runs `git` (found on PATH=/usr/bin:/bin) with r->args in r->dir, in an
 * environment of its own: nothing of svc's environment is passed on (no
 * proxies, no credentials, no HOME), no system or global configuration
 * (GIT_CONFIG_NOSYSTEM, GIT_CONFIG_GLOBAL=/dev/null, HOME=/nonexistent), no
 * prompts (GIT_TERMINAL_PROMPT=0, GIT_ASKPASS=/bin/false), LC_ALL=C, plus
 * r->env (which may pass configuration through GIT_CONFIG_COUNT/KEY_n/VALUE_n,
 * so secrets never show in the command line of ps(1)). Standard input is
 * /dev/null; standard output goes to r->sink as it arrives; the last
 * bytes of standard error are kept in `why` (`whymax` bytes, NUL-terminated,
 * control characters made spaces). The child is killed (SIGKILL, its whole
 * process group) on the timeout, on the size cap, or when the sink stops.
 * *out_status (may be NULL) gets git's exit status (or 128 + signal).
 * Returns 0 when git ran and exited (whatever its status), else the sink's
 * error, SVC_E_UNAVAILABLE (timeout), SVC_E_TOO_LARGE (size cap) or
 * SVC_E_INTERNAL (git could not be started).
 */
int svc_git_run(const struct svc_git_run *r, int *out_status, char *why, size_t whymax);

/*
 * Adds "KEY=VALUE" configuration entries for git's environment to `r->env`:
 * GIT_CONFIG_COUNT=n and GIT_CONFIG_KEY_i / GIT_CONFIG_VALUE_i for the `n`
 * pairs keys[i], values[i]. `store` (at least n * 2 * 1100 + 32 bytes)
 * holds the strings for the run's time. Returns 0, or SVC_E_INTERNAL when
 * the entries do not fit (r->env full, a value over 1024 bytes).
 */
int svc_git_config_env(struct svc_git_run *r, const char *const *keys, const char *const *values, size_t n,
		       char *store, size_t store_size);

/*
 * Adds `arg` to r->args after the ones already there. Returns 0, or
 * SVC_E_INTERNAL when SVC_GIT_MAX_ARGS - 1 are already set.
 */
int svc_git_arg(struct svc_git_run *r, const char *arg);

/*
 * Returns 1 when `sha` is 40 lower-case hex digits, else 0.
 */
int svc_git_sha_valid(const char *sha);

#endif
