/* gitcmd.c: running the git command-line program with an environment of its own, a timeout, a size cap and a streamed standard output. */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/err.h"
#include "core/log.h"
#include "core/util.h"
#include "project/gitcmd.h"

#define GIT_BIN "/usr/bin/git"
#define WATCH_EVERY_MS 300

int svc_git_arg(struct svc_git_run *r, const char *arg)
{
	size_t i;

	for (i = 0; i < SVC_GIT_MAX_ARGS - 1; i++) {
		if (!r->args[i]) {
			r->args[i] = arg;
			r->args[i + 1] = NULL;
			return 0;
		}
	}
	return SVC_E_INTERNAL;
}

int svc_git_config_env(struct svc_git_run *r, const char *const *keys, const char *const *values, size_t n,
		       char *store, size_t store_size)
{
	size_t used = 0, nenv = 0, i;

	while (nenv < SVC_GIT_MAX_ENV && r->env[nenv])
		nenv++;
	if (nenv + 1 + 2 * n >= SVC_GIT_MAX_ENV)
		return SVC_E_INTERNAL;
	for (i = 0; i <= 2 * n; i++) {
		int len;
		if (i == 2 * n)
			len = snprintf(store + used, store_size - used, "GIT_CONFIG_COUNT=%zu", n);
		else if (i % 2 == 0)
			len = snprintf(store + used, store_size - used, "GIT_CONFIG_KEY_%zu=%s", i / 2, keys[i / 2]);
		else
			len = snprintf(store + used, store_size - used, "GIT_CONFIG_VALUE_%zu=%s", i / 2,
				       values[i / 2]);
		if (len < 0 || (size_t)len >= store_size - used || len > 1100)
			return SVC_E_INTERNAL;
		r->env[nenv++] = store + used;
		used += (size_t)len + 1;
	}
	r->env[nenv] = NULL;
	return 0;
}

int svc_git_sha_valid(const char *sha)
{
	size_t i;

	for (i = 0; i < 40; i++)
		if (!((sha[i] >= '0' && sha[i] <= '9') || (sha[i] >= 'a' && sha[i] <= 'f')))
			return 0;
	return sha[40] == '\0';
}

/* The bytes of regular files under the watched directory (nftw has no context argument). */
static __thread uint64_t tree_bytes;

static int count_file(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)path;
	(void)ftw;
	if (flag == FTW_F)
		tree_bytes += (uint64_t)st->st_size;
	return 0;
}

static uint64_t dir_bytes(const char *dir)
{
	tree_bytes = 0;
	nftw(dir, count_file, 16, FTW_PHYS);
	return tree_bytes;
}

/* Keeps the last bytes of git's standard error in why (whymax bytes). */
static void keep_err(char *why, size_t whymax, size_t *len, const char *data, size_t n)
{
	size_t i;

	if (whymax < 2)
		return;
	if (n >= whymax - 1) {
		data += n - (whymax - 1);
		n = whymax - 1;
	}
	if (*len + n > whymax - 1) {
		size_t drop = *len + n - (whymax - 1);
		memmove(why, why + drop, *len - drop);
		*len -= drop;
	}
	for (i = 0; i < n; i++)
		why[(*len)++] = ((unsigned char)data[i] < 0x20 || data[i] == 0x7f) ? ' ' : data[i];
	why[*len] = '\0';
}

/* The child's side: never returns. */
static void child_exec(const struct svc_git_run *r, int outfd, int errfd)
{
	const char *argv[SVC_GIT_MAX_ARGS + 4];
	const char *envp[SVC_GIT_MAX_ENV + 12];
	size_t n = 0, e = 0, i;
	int null = open("/dev/null", O_RDWR);

	setpgid(0, 0);
	if (null < 0 || dup2(null, 0) < 0 || dup2(outfd >= 0 ? outfd : null, 1) < 0 || dup2(errfd, 2) < 0)
		_exit(127);
	close_range(3, ~0u, 0);
	if (r->dir && chdir(r->dir) < 0)
		_exit(127);
	argv[n++] = "git";
	for (i = 0; i < SVC_GIT_MAX_ARGS && r->args[i]; i++)
		argv[n++] = r->args[i];
	argv[n] = NULL;
	envp[e++] = "PATH=/usr/bin:/bin";
	envp[e++] = "HOME=/nonexistent";
	envp[e++] = "LC_ALL=C";
	envp[e++] = "GIT_CONFIG_NOSYSTEM=1";
	envp[e++] = "GIT_CONFIG_GLOBAL=/dev/null";
	envp[e++] = "GIT_TERMINAL_PROMPT=0";
	envp[e++] = "GIT_ASKPASS=/bin/false";
	envp[e++] = "SSH_ASKPASS=/bin/false";
	envp[e++] = "GIT_PROTOCOL_FROM_USER=0";
	for (i = 0; i < SVC_GIT_MAX_ENV && r->env[i]; i++)
		envp[e++] = r->env[i];
	envp[e] = NULL;
	execve(GIT_BIN, (char *const *)argv, (char *const *)envp);
	_exit(127);
}

/* Kills git's process group and reaps it; returns its wait status. */
static int kill_reap(pid_t pid)
{
	int st = 0;

	kill(-pid, SIGKILL);
	kill(pid, SIGKILL);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	return st;
}

int svc_git_run(const struct svc_git_run *r, int *out_status, char *why, size_t whymax)
{
	int op[2] = { -1, -1 }, ep[2] = { -1, -1 }, err = 0, st = 0, done = 0;
	int64_t start = svc_mono_ms(), last_watch = start;
	size_t errlen = 0;
	char buf[65536];
	pid_t pid;

	if (whymax)
		why[0] = '\0';
	if (pipe2(op, O_CLOEXEC) < 0 || pipe2(ep, O_CLOEXEC) < 0) {
		err = SVC_E_INTERNAL;
		goto done;
	}
	pid = fork();
	if (pid == 0)
		child_exec(r, op[1], ep[1]);
	close(op[1]);
	close(ep[1]);
	op[1] = ep[1] = -1;
	if (pid < 0) {
		svc_log_error("gitcmd: fork: %s", strerror(errno));
		err = SVC_E_INTERNAL;
		goto done;
	}
	while (op[0] >= 0 || ep[0] >= 0) {
		struct pollfd fds[2] = { { op[0], POLLIN, 0 }, { ep[0], POLLIN, 0 } };
		int64_t now = svc_mono_ms();
		int k;

		if (r->timeout_ms > 0 && now - start > r->timeout_ms) {
			err = SVC_E_UNAVAILABLE;
			break;
		}
		if (r->max_bytes && r->watch_dir && now - last_watch >= WATCH_EVERY_MS) {
			last_watch = now;
			if (dir_bytes(r->watch_dir) > r->max_bytes) {
				err = SVC_E_TOO_LARGE;
				break;
			}
		}
		k = poll(fds, 2, 100);
		if (k < 0 && errno != EINTR) {
			err = SVC_E_INTERNAL;
			break;
		}
		for (k = 0; k < 2; k++) {
			ssize_t got;
			if (fds[k].fd < 0 || !(fds[k].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			got = read(fds[k].fd, buf, sizeof buf);
			if (got < 0 && errno == EINTR)
				continue;
			if (got <= 0) {
				close(fds[k].fd);
				if (k == 0)
					op[0] = -1;
				else
					ep[0] = -1;
				continue;
			}
			if (k == 1)
				keep_err(why, whymax, &errlen, buf, (size_t)got);
			else if (r->sink && (err = r->sink(r->sink_ctx, buf, (size_t)got)) < 0)
				break;
		}
		if (err < 0)
			break;
	}
	if (err < 0) {
		st = kill_reap(pid);
	} else {
		while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
			;
		done = 1;
	}
	if (r->max_bytes && r->watch_dir && done && dir_bytes(r->watch_dir) > r->max_bytes)
		err = SVC_E_TOO_LARGE;
	if (out_status)
		*out_status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
done:
	if (op[0] >= 0)
		close(op[0]);
	if (ep[0] >= 0)
		close(ep[0]);
	if (op[1] >= 0)
		close(op[1]);
	if (ep[1] >= 0)
		close(ep[1]);
	return err;
}
