/* auth_log.c: one line per authentication event in SVC_AUTH_LOG (and on stderr), in the form fail2ban's filter reads. */
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "auth/auth.h"
#include "core/log.h"
#include "core/util.h"

#define LINE_MAX_BYTES 1024

static int log_fd = -1;
static char log_path[512];
static pid_t log_pid;
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;

void svc_auth_log_escape(const char *in, char *out, size_t max)
{
	size_t i, o = 0;

	if (max == 0)
		return;
	for (i = 0; in && in[i] && o + 1 < max; i++) {
		unsigned char c = (unsigned char)in[i];
		out[o++] = (c < 0x20 || c == 0x7f || c == '"' || c == '\\' || c == ' ') ? '?' : (char)c;
	}
	out[o] = '\0';
}

/* The file descriptor of `path`, opened once per process (again after a fork or a new path); -1 when it cannot be. */
static int auth_fd(const char *path)
{
	pid_t pid = getpid();

	if (log_fd >= 0 && log_pid == pid && strcmp(log_path, path) == 0)
		return log_fd;
	if (log_fd >= 0 && log_pid == pid)
		close(log_fd);
	log_fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOCTTY, 0640);
	log_pid = pid;
	snprintf(log_path, sizeof log_path, "%s", path);
	return log_fd;
}

/* Keeps only characters that cannot break the line or the filter: no control bytes. */
static void clean(char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			*s = '?';
}

void svc_auth_log(const char *path, const char *ident, const char *event, const char *remote,
		  const char *fmt, ...)
{
	char extra[LINE_MAX_BYTES / 2] = "", ts[32], line[LINE_MAX_BYTES], addr[SVC_ADDR_MAX];
	int n, failure;
	va_list ap;

	if (fmt && *fmt) {
		va_start(ap, fmt);
		n = vsnprintf(extra, sizeof extra, fmt, ap);
		va_end(ap);
		if (n < 0)
			extra[0] = '\0';
	}
	clean(extra);
	svc_auth_log_escape(remote && *remote ? remote : "-", addr, sizeof addr);
	failure = strstr(event, "failed") || strcmp(event, "token_rejected") == 0 ||
		  strcmp(event, "rate_limited") == 0;
	if (failure)
		svc_log_warn("auth: %s remote=%s%s%s", event, addr, extra[0] ? " " : "", extra);
	else
		svc_log_info("auth: %s remote=%s%s%s", event, addr, extra[0] ? " " : "", extra);
	if (!path || !*path)
		return;
	svc_time_format(svc_now_ms(), ts);
	n = snprintf(line, sizeof line, "%s %s[%d]: auth: %s remote=%s%s%s\n", ts, ident ? ident : "svc",
		     (int)getpid(), event, addr, extra[0] ? " " : "", extra);
	if (n < 0)
		return;
	if ((size_t)n >= sizeof line) {
		n = (int)sizeof line - 1;
		line[n - 1] = '\n';
	}
	pthread_mutex_lock(&log_lock);
	{
		int fd = auth_fd(path);
		/* a failed write leaves the stderr record standing; nothing more to do */
		ssize_t w = fd >= 0 ? write(fd, line, (size_t)n) : -1;
		(void)w;
	}
	pthread_mutex_unlock(&log_lock);
}
