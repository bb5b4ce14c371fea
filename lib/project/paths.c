/* paths.c: where a project's files live under SVC_DATA_DIR, making and locking those directories, the areas' modes. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/err.h"
#include "core/fsx.h"
#include "core/log.h"
#include "project/paths.h"

int svc_project_dir(const struct svc_config *cfg, const char *id, char *out, size_t max)
{
	int n = snprintf(out, max, "%s/projects/%s", cfg->data_dir, id);

	return (n < 0 || (size_t)n >= max) ? SVC_E_INTERNAL : 0;
}

int svc_data_path(const struct svc_config *cfg, const char *area, const char *a, const char *b, char *out,
		  size_t max)
{
	int n = snprintf(out, max, "%s/%s%s%s%s%s", cfg->data_dir, area, a ? "/" : "", a ? a : "", b ? "/" : "",
			 b ? b : "");

	return (n < 0 || (size_t)n >= max) ? SVC_E_INTERNAL : 0;
}

int svc_project_published_dir(const struct svc_config *cfg, const char *slug, char *out, size_t max)
{
	int n = snprintf(out, max, "%s/published/%s", cfg->data_dir, slug);

	return (n < 0 || (size_t)n >= max) ? SVC_E_INTERNAL : 0;
}

int svc_sites_dir(const struct svc_config *cfg, char *out, size_t max)
{
	const char *dir = cfg->sites_dir;
	int n = *dir ? snprintf(out, max, "%s", dir) : snprintf(out, max, "%s/sites", cfg->data_dir);

	return (n < 0 || (size_t)n >= max) ? SVC_E_INTERNAL : 0;
}

int svc_project_mkdirs(const char *path)
{
	char tmp[4096];
	size_t i, len = strlen(path);

	if (len >= sizeof tmp)
		return SVC_E_INTERNAL;
	memcpy(tmp, path, len + 1);
	for (i = 1; i <= len; i++) {
		if (tmp[i] == '/' || tmp[i] == '\0') {
			char c = tmp[i];
			tmp[i] = '\0';
			if (mkdir(tmp, SVC_FSX_DIR_MODE) < 0 && errno != EEXIST)
				return SVC_E_INTERNAL;
			tmp[i] = c;
		}
	}
	return 0;
}

int svc_project_lock(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		return SVC_E_INTERNAL;
	if (flock(fd, LOCK_EX) < 0) {
		close(fd);
		return SVC_E_INTERNAL;
	}
	return fd;
}

/* The group SVC_WEB_GROUP names, or (gid_t)-1 for none (empty, or unknown: logged). */
static gid_t web_gid(const struct svc_config *cfg)
{
	const char *name = cfg->web_group;
	struct group g, *found = NULL;
	char buf[4096];

	if (!*name)
		return (gid_t)-1;
	if (getgrnam_r(name, &g, buf, sizeof buf, &found) != 0 || !found) {
		svc_log_warn("data: SVC_WEB_GROUP %s is no group of this host; the served areas keep their group", name);
		return (gid_t)-1;
	}
	return found->gr_gid;
}

int svc_data_modes(const struct svc_config *cfg, int trees)
{
	static const struct {
		const char *area;
		mode_t top;
		int tree;   /* its contents get modes too (with `trees`) */
		int served; /* read by the web server: its group's */
	} areas[] = {
		{ "projects", SVC_FSX_PRIVATE_DIR_MODE, 1, 0 }, { "builds", 0711, 0, 0 }, { "npm", 0710, 0, 0 },
		{ "previews", SVC_FSX_PRIVATE_DIR_MODE, 1, 0 }, { "thumbnails", SVC_FSX_PRIVATE_DIR_MODE, 1, 0 },
		{ "deployments", SVC_FSX_DIR_MODE, 1, 1 },      { "published", SVC_FSX_DIR_MODE, 1, 1 },
	};
	char path[2048], sites[1024];
	gid_t gid = web_gid(cfg);
	size_t i;
	int err, first = 0;
	int sites_ok = svc_sites_dir(cfg, sites, sizeof sites) == 0;

	if ((err = svc_fsx_set_modes(cfg->data_dir, 0711, 0, 0, 0, (gid_t)-1)) < 0) {
		svc_log_error("data: cannot set the mode of %s: %s", cfg->data_dir, strerror(errno));
		first = err;
	}
	for (i = 0; i <= sizeof areas / sizeof areas[0]; i++) {
		int last = i == sizeof areas / sizeof areas[0], served = last || areas[i].served;
		int n = last ? (sites_ok ? snprintf(path, sizeof path, "%s", sites) : -1)
			     : snprintf(path, sizeof path, "%s/%s", cfg->data_dir, areas[i].area);

		if (n < 0 || (size_t)n >= sizeof path)
			err = SVC_E_INTERNAL;
		else if (served)
			err = svc_fsx_set_modes(path, SVC_FSX_DIR_MODE, trees, SVC_FSX_DIR_MODE, SVC_FSX_FILE_MODE, gid);
		else
			err = svc_fsx_set_modes(path, areas[i].top, trees && areas[i].tree, SVC_FSX_PRIVATE_DIR_MODE,
						SVC_FSX_PRIVATE_FILE_MODE, (gid_t)-1);
		if (err < 0) {
			svc_log_error("data: cannot set the modes of %s: %s", path, strerror(errno));
			if (!first)
				first = err;
		}
	}
	return first;
}
