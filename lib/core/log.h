/* log.h: one-line log records on standard error (the web server's error log or the journal). */
#ifndef SVC_LOG_H
#define SVC_LOG_H

/* Sets the program name that prefixes every record ("svc-auth"); borrowed, must outlive logging. */
void svc_log_init(const char *ident);

/*
 * Writes "<ident>[pid]: <level>: <message>\n" to stderr in one write(2).
 * Never pass secrets or tokens. CR and LF inside the message are replaced by
 * spaces so a record is always one line (fail2ban reads them).
 */
void svc_log(const char *level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define svc_log_info(...) svc_log("info", __VA_ARGS__)
#define svc_log_warn(...) svc_log("warn", __VA_ARGS__)
#define svc_log_error(...) svc_log("error", __VA_ARGS__)

#endif
