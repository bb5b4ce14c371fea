/* servers.c: svc-devd's dev servers: their start off the loop, readiness, idle stop, least-recently-viewed eviction, one restart after a crash (devd.h). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/cgroup.h"
#include "core/err.h"
#include "core/fsx.h"
#include "core/log.h"
#include "core/util.h"
#include "devd/devd.h"
#include "project/build.h"
#include "project/paths.h"

#define LOG_TAIL 600 /* bytes of a dev server's output kept for its error */
#define DEVD_SYNC_MS 100 /* how often a running server's mirror is brought in step */

static struct devd_server **servers; /* each allocated alone: threads and connections point at them */
static size_t nservers, cap_servers;

size_t devd_servers_count(void)
{
	return nservers;
}

struct devd_server *devd_server_at(size_t i)
{
	return i < nservers ? servers[i] : NULL;
}

/* The server of project `id`, or NULL. */
static struct devd_server *find(const char *id)
{
	size_t i;

	for (i = 0; i < nservers; i++)
		if (strcmp(servers[i]->id, id) == 0)
			return servers[i];
	return NULL;
}

/* The time a server counts as last viewed: now while a viewer's connection is open. */
static int64_t viewed(const struct devd_server *s, int64_t now)
{
	return s->conns > 0 ? now : s->last_view_ms;
}

/* Writes the end of the server's log (its last output) into `out`, lines joined, for its error. */
static void log_tail(const struct devd_server *s, char *out, size_t max)
{
	char path[2200], buf[LOG_TAIL + 1];
	ssize_t n = 0;
	off_t end;
	int fd, i;

	out[0] = '\0';
	snprintf(path, sizeof path, "%s/log", s->dir);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	end = lseek(fd, 0, SEEK_END);
	if (end > 0 && lseek(fd, end > LOG_TAIL ? end - LOG_TAIL : 0, SEEK_SET) >= 0)
		n = read(fd, buf, LOG_TAIL);
	close(fd);
	if (n <= 0)
		return;
	buf[n] = '\0';
	for (i = 0; i < n; i++)
		if ((unsigned char)buf[i] < 0x20)
			buf[i] = ' ';
	snprintf(out, max, "%s", buf);
}

/* The store's install output into the dev server's log (svc_build_log_fn; NULL text: a keep-alive tick). */
static void install_log(void *arg, const char *text, size_t len)
{
	const int *fd = arg;

	if (text && len && *fd >= 0 && write(*fd, text, len) < 0) {
		/* a log that cannot be written is no reason to stop the install */
	}
}

/* Prepares the server's directories: dev-<id>/{app,cache/vite,cache/vite-temp}, the mirror in step. */
static int prepare(const struct svc_config *cfg, struct devd_server *s, char *why, size_t why_max)
{
	char app[2200], cache[2200], nm[2300], svcdir[2200];
	struct svc_build_opts o;
	int err, i;

	snprintf(app, sizeof app, "%s/app", s->dir);
	snprintf(cache, sizeof cache, "%s/cache", s->dir);
	snprintf(svcdir, sizeof svcdir, "%s/svc", s->dir);
	if (svc_project_mkdirs(app) < 0 || svc_project_mkdirs(cache) < 0 || svc_project_mkdirs(svcdir) < 0) {
		snprintf(why, why_max, "the dev server's directory could not be made");
		return SVC_E_INTERNAL;
	}
	/* the sandbox's user passes through to what it mounts (bubblewrap opens the sources as that user) */
	if (chmod(s->dir, 0711) < 0 || chmod(app, 0755) < 0 || chmod(cache, 0711) < 0) {
		snprintf(why, why_max, "the dev server's directory could not be made");
		return SVC_E_INTERNAL;
	}
	if ((err = svc_devserver_sync(s->src, app)) < 0) {
		snprintf(why, why_max, err == SVC_E_NOT_FOUND ? "the project is gone" : "the project's files could not be copied");
		return err;
	}
	/* node_modules: the store's tree for this package.json and lockfile (lib/project/deps.h, shared with the
	 * builds), leased while the dev server runs; an install only when no stored tree has that key (a project
	 * the store does not take, npm workspaces, installs into the mirror itself) */
	svc_deps_release(&s->proc.lease);
	svc_build_opts_load(cfg, 0, &o);
	o.wall_secs = cfg->devserver_start_secs;
	if ((err = svc_build_deps(&o, app, install_log, &s->log_fd, &s->proc.lease, why, why_max)) < 0)
		return err;
	snprintf(nm, sizeof nm, "%s/node_modules", app);
	if (s->proc.lease.modules[0] && mkdir(nm, 0755) < 0 && errno != EEXIST)
		return SVC_E_INTERNAL; /* the mount point of the store's tree */
	/* Vite's caches: mount points in the mirror, writable folders outside it */
	for (i = 0; i < 2; i++) {
		char dir[2400];
		snprintf(dir, sizeof dir, "%s/%s", cache, i ? "vite-temp" : "vite");
		if (mkdir(dir, 0700) < 0 && errno != EEXIST)
			return SVC_E_INTERNAL;
		if (geteuid() == 0 && chown(dir, cfg->build_uid, cfg->build_uid) < 0)
			return SVC_E_INTERNAL;
		snprintf(dir, sizeof dir, "%s/node_modules%s", app, i ? "/.vite-temp" : "");
		if ((mkdir(dir, 0755) < 0 && errno != EEXIST) || chmod(dir, 0755) < 0)
			return SVC_E_INTERNAL;
		if (!i) {
			snprintf(dir, sizeof dir, "%s/node_modules/.vite", app);
			if ((mkdir(dir, 0755) < 0 && errno != EEXIST) || chmod(dir, 0755) < 0)
				return SVC_E_INTERNAL;
		}
	}
	return 0;
}

/* Waits until the dev server answers HTTP, it ends, or the deadline passes. */
static int wait_ready(struct devd_server *s, int64_t deadline, char *why, size_t why_max)
{
	int status;

	while (svc_mono_ms() < deadline) {
		if (svc_devserver_ended(&s->proc, &status)) {
			snprintf(why, why_max, "the dev server exited with status %d before it listened", status);
			return SVC_E_VALIDATION;
		}
		if (svc_devserver_ready(&s->proc, 500))
			return 0;
		usleep(100 * 1000);
	}
	snprintf(why, why_max, "the dev server did not listen within %d s", (int)((deadline - s->started_ms) / 1000));
	return SVC_E_VALIDATION;
}

/* The start, on a thread of its own: mirror, install, sandbox, readiness; then wakes the loop. */
static void *start_thread(void *arg)
{
	struct devd_server *s = arg;
	const struct svc_config *cfg = devd_cfg();
	enum svc_devserver_kind kind;
	char app[2200];
	int64_t deadline = s->started_ms + (int64_t)cfg->devserver_start_secs * 1000;
	int err;

	snprintf(app, sizeof app, "%s/app", s->dir);
	s->start_err = 0;
	if ((err = prepare(cfg, s, s->why, sizeof s->why)) < 0)
		goto done;
	kind = svc_devserver_kind(app);
	if (kind == SVC_DEVSERVER_NONE) {
		snprintf(s->why, sizeof s->why, "the project has no dev script any more");
		err = SVC_E_VALIDATION;
		goto done;
	}
	/* the sandbox is forked by the loop's thread: a child's parent-death signal (bubblewrap's
	 * --die-with-parent) fires when the thread that forked it ends, and this one ends soon */
	pthread_mutex_lock(&s->launch_mu);
	s->launch_kind = kind;
	s->launch = 1;
	devd_wake();
	while (s->launch == 1)
		pthread_cond_wait(&s->launch_cv, &s->launch_mu);
	err = s->launch_err;
	pthread_mutex_unlock(&s->launch_mu);
	if (err < 0)
		goto done;
	if ((err = wait_ready(s, deadline, s->why, sizeof s->why)) < 0) {
		svc_devserver_stop(&s->proc);
		goto done;
	}
done:
	s->start_err = err;
	__atomic_store_n(&s->thread_done, 1, __ATOMIC_RELEASE);
	devd_wake();
	return NULL;
}

/* The loop's part of a start: forks the sandbox its start thread asked for, and lets the thread go on. */
static void launch(struct devd_server *s)
{
	char name[64], app[2200], cache[2200], svcdir[2200];

	snprintf(app, sizeof app, "%s/app", s->dir);
	snprintf(cache, sizeof cache, "%s/cache", s->dir);
	snprintf(svcdir, sizeof svcdir, "%s/svc", s->dir);
	snprintf(name, sizeof name, "dev-%s", s->id);
	pthread_mutex_lock(&s->launch_mu);
	s->launch_err = svc_devserver_start(devd_cfg(), s->launch_kind, name, app, cache, svcdir, s->log_fd, &s->proc,
					    s->launch_why, sizeof s->launch_why);
	if (s->launch_err < 0)
		snprintf(s->why, sizeof s->why, "%s", s->launch_why);
	s->launch = 2;
	pthread_cond_signal(&s->launch_cv);
	pthread_mutex_unlock(&s->launch_mu);
}

/* Starts server `s` (new, or after a crash or idle stop): its log truncated, its thread started. */
static void start(struct devd_server *s)
{
	char path[2200];

	s->state = DEVD_STARTING;
	s->started_ms = svc_mono_ms();
	s->why[0] = '\0';
	svc_deps_release(&s->proc.lease); /* an earlier run's, when it ended without svc_devserver_stop() */
	memset(&s->proc, 0, sizeof s->proc);
	s->proc.dirfd = -1;
	s->proc.lease.fd = -1;
	if (s->log_fd >= 0)
		close(s->log_fd);
	snprintf(path, sizeof path, "%s/log", s->dir);
	svc_project_mkdirs(s->dir);
	s->log_fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0640);
	__atomic_store_n(&s->thread_done, 0, __ATOMIC_RELEASE);
	s->launch = 0;
	if (pthread_create(&s->thread, NULL, start_thread, s) != 0) {
		s->state = DEVD_FAILED;
		snprintf(s->why, sizeof s->why, "the dev server could not be started");
		return;
	}
	s->thread_live = 1;
	svc_log_info("devd: starting the dev server of %s", s->id);
}

/* Stops server `s` (RUNNING or FAILED, never one with a live thread) and forgets it. */
static void forget(struct devd_server *s, const char *reason)
{
	size_t i;

	if (s->state == DEVD_RUNNING)
		svc_devserver_stop(&s->proc);
	svc_deps_release(&s->proc.lease);
	svc_log_info("devd: dev server of %s stopped (%s)", s->id, reason);
	devd_conns_drop(s);
	if (s->log_fd >= 0)
		close(s->log_fd);
	svc_sandbox_claim_release(s->dir, s->claim_fd);
	pthread_mutex_destroy(&s->launch_mu);
	pthread_cond_destroy(&s->launch_cv);
	for (i = 0; i < nservers; i++)
		if (servers[i] == s) {
			servers[i] = servers[--nservers];
			break;
		}
	free(s);
}

/* Frees a place for one more: stops the least recently viewed running server (not one starting). */
static int evict_one(int64_t now)
{
	struct devd_server *lru = NULL;
	size_t i, live = 0;

	for (i = 0; i < nservers; i++) {
		struct devd_server *s = servers[i];
		if (s->state == DEVD_FAILED)
			continue;
		live++;
		if (s->state == DEVD_RUNNING && (!lru || viewed(s, now) < viewed(lru, now)))
			lru = s;
	}
	if (live < devd_cfg()->devserver_max)
		return 0;
	if (!lru)
		return SVC_E_UNAVAILABLE;
	forget(lru, "least recently viewed, to make room");
	return 0;
}

int devd_server_view(const char *id, const char *src, struct devd_server **out)
{
	const struct svc_config *cfg = devd_cfg();
	int64_t now = svc_mono_ms();
	struct devd_server *s = find(id);
	int err;

	/* a failed one is tried again once the project changed (its author fixed it) */
	if (s && s->state == DEVD_FAILED && now - s->stamp_ms >= 1000) {
		s->stamp_ms = now;
		if (svc_devserver_tree_stamp(s->src) != s->stamp) {
			forget(s, "the project changed since it failed: trying again");
			s = NULL;
		}
	}
	if (!s) {
		if ((err = evict_one(now)) < 0)
			return err;
		if (nservers == cap_servers && SVC_ARRAY_GROW(servers, cap_servers, nservers + 1) < 0)
			return SVC_E_INTERNAL;
		if (!(s = calloc(1, sizeof *s)))
			return SVC_E_INTERNAL;
		s->log_fd = -1;
		s->claim_fd = -1;
		s->proc.dirfd = -1;
		s->proc.lease.fd = -1;
		snprintf(s->id, sizeof s->id, "%s", id);
		snprintf(s->src, sizeof s->src, "%s", src);
		if (svc_data_path(cfg, "builds", NULL, NULL, s->dir, sizeof s->dir - 48) < 0) {
			free(s);
			return SVC_E_INTERNAL;
		}
		snprintf(s->dir + strlen(s->dir), sizeof s->dir - strlen(s->dir), "/dev-%s", id);
		/* the tree is this server's while it exists: svc-worker's start-up sweep leaves it alone */
		if ((err = svc_project_mkdirs(s->dir)) < 0 || (err = svc_sandbox_claim(s->dir, &s->claim_fd)) < 0) {
			svc_log_error("devd: cannot claim %s%s", s->dir, err == SVC_E_CONFLICT ? ": another process holds it" : "");
			free(s);
			return err == SVC_E_CONFLICT ? SVC_E_UNAVAILABLE : SVC_E_INTERNAL;
		}
		pthread_mutex_init(&s->launch_mu, NULL);
		pthread_cond_init(&s->launch_cv, NULL);
		servers[nservers++] = s;
		start(s);
	}
	s->last_view_ms = now;
	*out = s;
	return 0;
}

/* Marks `s` failed: its preview is the build from now on, until the project changes. */
static void failed(struct devd_server *s)
{
	s->state = DEVD_FAILED;
	s->failed_ms = s->stamp_ms = svc_mono_ms();
	s->stamp = svc_devserver_tree_stamp(s->src);
}

/* After a crash or a failed start: one restart is allowed, then the preview is the build. */
static void restart_or_fail(struct devd_server *s)
{
	if (s->restarts == 0) {
		s->restarts++;
		start(s);
		return;
	}
	failed(s);
}

/* A start thread ended: the server runs, or it failed (once more after a crash: its preview falls back). */
static void start_done(struct devd_server *s)
{
	pthread_join(s->thread, NULL);
	s->thread_live = 0;
	if (s->start_err == 0) {
		s->state = DEVD_RUNNING;
		s->ready_ms = svc_mono_ms();
		s->next_sync_ms = s->ready_ms;
		svc_log_info("devd: dev server of %s ready in %lld ms", s->id, (long long)(s->ready_ms - s->started_ms));
		return;
	}
	{
		char tail[LOG_TAIL + 1];
		log_tail(s, tail, sizeof tail);
		if (tail[0] && strlen(s->why) + 3 < sizeof s->why)
			snprintf(s->why + strlen(s->why), sizeof s->why - strlen(s->why), ": %s", tail);
	}
	svc_log_info("devd: dev server of %s failed: %s", s->id, s->why);
	restart_or_fail(s);
}

/* A running server's process ended (exit status `status`): restart it once, else it failed. */
static void crashed(struct devd_server *s, int status)
{
	char tail[LOG_TAIL + 1];

	devd_conns_drop(s);
	log_tail(s, tail, sizeof tail);
	snprintf(s->why, sizeof s->why, "the dev server exited with status %d%s%s", status, tail[0] ? ": " : "", tail);
	svc_log_info("devd: dev server of %s crashed: %s", s->id, s->why);
	restart_or_fail(s);
}

void devd_servers_tick(void)
{
	const struct svc_config *cfg = devd_cfg();
	int64_t now = svc_mono_ms();
	size_t i;

	for (i = 0; i < nservers; i++) {
		struct devd_server *s = servers[i];
		int status;

		if (s->state == DEVD_STARTING) {
			int want;
			pthread_mutex_lock(&s->launch_mu);
			want = s->launch == 1;
			pthread_mutex_unlock(&s->launch_mu);
			if (want)
				launch(s);
			if (s->thread_live && __atomic_load_n(&s->thread_done, __ATOMIC_ACQUIRE))
				start_done(s);
			continue;
		}
		if (s->state == DEVD_FAILED && now - s->last_view_ms > (int64_t)cfg->devserver_idle_secs * 1000) {
			forget(s, "failed and no longer viewed");
			i--;
			continue;
		}
		if (s->state != DEVD_RUNNING)
			continue;
		if (svc_devserver_ended(&s->proc, &status)) {
			crashed(s, status);
			continue;
		}
		if (s->conns == 0 && now - s->last_view_ms > (int64_t)cfg->devserver_idle_secs * 1000) {
			forget(s, "idle");
			i--;
			continue;
		}
		if (now >= s->next_sync_ms) {
			/* the working tree's changes (editor, agent, direct save) into the mirror the dev server watches */
			char app[2200];
			snprintf(app, sizeof app, "%s/app", s->dir);
			if (svc_devserver_sync(s->src, app) == SVC_E_NOT_FOUND) {
				forget(s, "the project is gone");
				i--;
				continue;
			}
			s->next_sync_ms = now + DEVD_SYNC_MS;
		}
	}
}

void devd_servers_stop_all(void)
{
	while (nservers) {
		struct devd_server *s = servers[nservers - 1];
		if (s->thread_live) {
			while (!__atomic_load_n(&s->thread_done, __ATOMIC_ACQUIRE)) {
				int want;
				pthread_mutex_lock(&s->launch_mu);
				want = s->launch == 1;
				pthread_mutex_unlock(&s->launch_mu);
				if (want)
					launch(s);
				usleep(10 * 1000);
			}
			pthread_join(s->thread, NULL);
			s->thread_live = 0;
			if (s->start_err == 0)
				s->state = DEVD_RUNNING;
		}
		if (s->state == DEVD_STARTING)
			s->state = DEVD_FAILED;
		forget(s, "svc-devd stops");
	}
	free(servers);
	servers = NULL;
	cap_servers = 0;
}
