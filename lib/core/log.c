/* log.c: one-line log records on standard error. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "core/log.h"

static const char *log_ident = "svc";

void svc_log_init(const char *ident)
{
	log_ident = ident;
}

void svc_log(const char *level, const char *fmt, ...)
{
	char line[2048];
	int n, m;
	va_list ap;

	n = snprintf(line, sizeof line, "%s[%d]: %s: ", log_ident, (int)getpid(), level);
	if (n < 0 || (size_t)n >= sizeof line)
		return;
	va_start(ap, fmt);
	m = vsnprintf(line + n, sizeof line - (size_t)n - 1, fmt, ap);
	va_end(ap);
	if (m < 0)
		return;
	n += m;
	if ((size_t)n > sizeof line - 2)
		n = (int)sizeof line - 2;
	for (m = 0; m < n; m++)
		if (line[m] == '\n' || line[m] == '\r')
			line[m] = ' ';
	line[n++] = '\n';
	if (write(STDERR_FILENO, line, (size_t)n) < 0)
		return;
}
