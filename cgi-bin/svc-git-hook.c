/* svc-git-hook.c: svc's pre-receive hook (installed as git-hooks/pre-receive beside svc-git.fcgi, core.hooksPath): refuses a push that would break the project, with a sentence git prints as "remote: ...". */
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <mysql.h>

#include "agent/credits.h"
#include "core/config.h"
#include "core/err.h"
#include "core/log.h"
#include "core/util.h"
#include "db/db.h"
#include "project/githttp.h"
#include "project/paths.h"
#include "project/quota.h"

#define INPUT_MAX (1u << 20) /* the push's "<old> <new> <ref>" lines */

static int refuse(const char *why)
{
	fprintf(stderr, "%s\n", why);
	return 1;
}

/* Reads the commands git hands the hook on stdin into buf (max bytes); their length, or -1. */
static long read_commands(char *buf, size_t max)
{
	size_t len = 0;

	for (;;) {
		ssize_t n = read(0, buf + len, max - len);
		if (n < 0)
			return -1;
		if (n == 0)
			return (long)len;
		len += (size_t)n;
		if (len == max)
			return -1;
	}
}

/*
 * Waits on the gate svc-git gave as fd SVC_GIT_GATE_FD for its one byte: written once the push's body is
 * in and svc-git holds the project's lock, so no ref moves before it does (lib/project/githttp.h).
 * Returns 0, or -1 when the gate closed unopened, is missing, or stays shut past `timeout_secs`.
 */
static int wait_gate(uint64_t timeout_secs)
{
	const char *fd_s = getenv("SVC_GIT_GATE_FD");
	struct pollfd p = { 3, POLLIN, 0 };
	char byte = 0;

	if (!fd_s || strcmp(fd_s, "3") != 0)
		return -1;
	if (poll(&p, 1, timeout_secs > 86400 ? 86400000 : (int)timeout_secs * 1000) != 1 || read(3, &byte, 1) != 1)
		return -1;
	return byte == '1' ? 0 : -1;
}

/* The checks that need svc: no agent turn running, the room the quotas leave; then the repository's own. */
static int check(const struct svc_config *cfg, struct svc_db *db, const char *pid, const char *wid, const char *input,
		 size_t len)
{
	char dir[4096], git_dir[PATH_MAX], quarantine[PATH_MAX], why[1024];
	const char *q = getenv("GIT_QUARANTINE_PATH"), *gd = getenv("GIT_DIR");
	struct svc_git_limits l = { cfg->quota_file_bytes, UINT64_MAX, NULL };
	uint64_t now = 0;
	int busy = 0;

	if (wait_gate(cfg->git_timeout_secs) < 0)
		return refuse("svc: the push was not taken in whole; try again");
	if (svc_agent_project_busy(db, pid, &busy) < 0)
		return refuse("svc: the push could not be checked (the database did not answer); try again");
	if (busy)
		return refuse("the agent is working on this project; push again when its turn ends");
	if (svc_project_dir(cfg, pid, dir, sizeof dir) < 0 ||
	    svc_quota_repo_room(db, cfg, wid, pid, dir, &now, &l.room_bytes) < 0)
		return refuse("svc: the push could not be checked (the project's size); try again");
	if (!realpath(gd && *gd ? gd : ".", git_dir))
		return refuse("svc: the push could not be checked (no repository); try again");
	if (q && *q && realpath(q, quarantine))
		l.quarantine = quarantine;
	if (svc_git_prereceive(git_dir, input, len, &l, why, sizeof why) < 0)
		return refuse(why);
	return 0;
}

int main(void)
{
	struct svc_config cfg;
	struct svc_db *db = NULL;
	char errbuf[256];
	const char *pid = getenv("SVC_GIT_PROJECT_ID"), *wid = getenv("SVC_GIT_WORKSPACE_ID");
	char *input;
	long len;
	int rc;

	svc_log_init("svc-git-hook");
	if (!pid || !svc_uuid_valid(pid) || !wid || !svc_uuid_valid(wid))
		return refuse("svc: pushes reach a project only through svc");
	if (!(input = malloc(INPUT_MAX)))
		return refuse("svc: out of memory");
	if ((len = read_commands(input, INPUT_MAX)) < 0) {
		free(input);
		return refuse("svc: the push's commands could not be read");
	}
	if (svc_config_load(&cfg, errbuf, sizeof errbuf) < 0) {
		svc_log_error("configuration: %s", errbuf);
		free(input);
		return refuse("svc: the push could not be checked (configuration); tell the administrator");
	}
	if (mysql_library_init(0, NULL, NULL) || svc_db_open(&cfg, &db) < 0) {
		rc = refuse("svc: the push could not be checked (the database did not answer); try again");
	} else {
		rc = check(&cfg, db, pid, wid, input, (size_t)len);
	}
	svc_db_close(db);
	svc_config_dispose(&cfg);
	free(input);
	return rc;
}
