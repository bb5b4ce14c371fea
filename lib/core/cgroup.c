/* cgroup.c: one cgroup (v2 or v1) per sandboxed run, its bounds, which bound ended it, and its removal (cgroup.h). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/cgroup.h"
#include "core/err.h"
#include "core/log.h"
#include "core/util.h"

#define CG_PATH_MAX 1024
#define CG_NAME_MAX 64
#define CG_CPU_PERIOD_US 100000u
#define CG_REMOVE_MS 5000

/* The hierarchies a group lives in: v2 uses only H_MEMORY (the one unified directory). */
enum { H_MEMORY = 0, H_PIDS, H_CPU, H__MAX };

struct svc_cgroup {
	enum svc_cgroup_version version;
	unsigned memory_mb, procs, cpu_percent;
	char dir[H__MAX][CG_PATH_MAX];   /* "" where the group has no directory in that hierarchy */
	char procs_file[H__MAX][CG_PATH_MAX + 16];
};

/* Where one hierarchy is mounted and where svc's own cgroup is in it. */
struct hier {
	char mount[CG_PATH_MAX]; /* "" when not mounted */
	char root[CG_PATH_MAX];  /* the mount's root inside the hierarchy (mountinfo field 4) */
	char own[CG_PATH_MAX];   /* svc's cgroup in the hierarchy (/proc/self/cgroup) */
};

struct layout {
	struct hier v2, mem, pids, cpu;
};

/* ---- small file helpers ---- */

/* Reads at most `max` - 1 bytes of `path` into `buf`, NUL-terminated. Returns the length, or -errno. */
static ssize_t read_small(const char *path, char *buf, size_t max)
{
	size_t got = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	while (got < max - 1) {
		ssize_t r = read(fd, buf + got, max - 1 - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	close(fd);
	buf[got] = '\0';
	return (ssize_t)got;
}

/* Writes `s` to the control file `path` in one write. Returns 0 or -errno. */
static int write_str(const char *path, const char *s)
{
	size_t len = strlen(s);
	int fd = open(path, O_WRONLY | O_CLOEXEC), e = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, s, len) != (ssize_t)len)
		e = -errno;
	close(fd);
	return e;
}

/* Joins `dir` and `file` into `out` (of `max` bytes). Returns 0, or -ENAMETOOLONG. */
static int join_path(char *out, size_t max, const char *dir, const char *file)
{
	int n = snprintf(out, max, "%s/%s", dir, file);

	return (n < 0 || (size_t)n >= max) ? -ENAMETOOLONG : 0;
}

/* Writes `value` to the control file `file` of `dir`. Returns 0 or -errno. */
static int write_ctl(const char *dir, const char *file, const char *value)
{
	char path[CG_PATH_MAX + 64];

	if (join_path(path, sizeof path, dir, file) < 0)
		return -ENAMETOOLONG;
	return write_str(path, value);
}

/* Reads the value of `key` in the flat-keyed file `file` of `dir` ("key value" lines). Returns 0, or -1 when absent. */
static int read_key(const char *dir, const char *file, const char *key, uint64_t *out)
{
	char path[CG_PATH_MAX + 64], buf[4096], *line, *nl;
	size_t klen = strlen(key);

	if (join_path(path, sizeof path, dir, file) < 0 || read_small(path, buf, sizeof buf) < 0)
		return -1;
	for (line = buf; *line; line = nl ? nl + 1 : line + strlen(line)) {
		nl = strchr(line, '\n');
		if (nl)
			*nl = '\0';
		if (strncmp(line, key, klen) == 0 && line[klen] == ' ')
			return svc_parse_u64(line + klen + 1, UINT64_MAX, out) < 0 ? -1 : 0;
		if (!nl)
			break;
	}
	return -1;
}

/* Reads the single number in `file` of `dir`. Returns 0, or -1. */
static int read_u64(const char *dir, const char *file, uint64_t *out)
{
	char path[CG_PATH_MAX + 64], buf[64];
	ssize_t n;

	if (join_path(path, sizeof path, dir, file) < 0 || (n = read_small(path, buf, sizeof buf)) <= 0)
		return -1;
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = '\0';
	return svc_parse_u64(buf, UINT64_MAX, out) < 0 ? -1 : 0;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* ---- finding the hierarchies ---- */

/* Whether the comma-separated list `list` holds `item`. */
static int list_has(const char *list, const char *item)
{
	size_t n = strlen(item);
	const char *p = list;

	while (p && *p) {
		const char *end = strchr(p, ',');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		if (len == n && strncmp(p, item, n) == 0)
			return 1;
		p = end ? end + 1 : NULL;
	}
	return 0;
}

/* Copies the NUL-terminated `s` into `out` (CG_PATH_MAX); 0, or -1 when too long. */
static int copy_path(char *out, const char *s)
{
	size_t n = strlen(s);

	if (n >= CG_PATH_MAX)
		return -1;
	memcpy(out, s, n + 1);
	return 0;
}

/*
 * Fills the mount points of `l` from /proc/self/mountinfo (proc(5): "id
 * parent maj:min root mountpoint options [optional...] - fstype source
 * superoptions"). Mount points with escaped characters are skipped.
 */
static void find_mounts(struct layout *l)
{
	char line[4096];
	FILE *f = fopen("/proc/self/mountinfo", "re");

	if (!f)
		return;
	while (fgets(line, sizeof line, f)) {
		char *field[6], *p = line, *dash, *fstype, *super, *sp;
		size_t i;

		line[strcspn(line, "\n")] = '\0';
		for (i = 0; i < 6 && p; i++) {
			field[i] = p;
			p = strchr(p, ' ');
			if (p)
				*p++ = '\0';
		}
		if (i < 6 || !p || !(dash = strstr(p, "- ")))
			continue;
		fstype = dash + 2;
		if (!(sp = strchr(fstype, ' ')))
			continue;
		*sp = '\0';
		super = strchr(sp + 1, ' '); /* after the source */
		super = super ? super + 1 : "";
		if (strchr(field[4], '\\'))
			continue;
		if (strcmp(fstype, "cgroup2") == 0) {
			if (!l->v2.mount[0] && copy_path(l->v2.mount, field[4]) == 0)
				copy_path(l->v2.root, field[3]);
		} else if (strcmp(fstype, "cgroup") == 0) {
			struct hier *h[3] = { &l->mem, &l->pids, &l->cpu };
			static const char *const names[3] = { "memory", "pids", "cpu" };
			for (i = 0; i < 3; i++)
				if (!h[i]->mount[0] && list_has(super, names[i]) && copy_path(h[i]->mount, field[4]) == 0)
					copy_path(h[i]->root, field[3]);
		}
	}
	fclose(f);
}

/* Fills the `own` paths of `l` from /proc/self/cgroup ("id:controllers:path" lines; v2 is "0::path"). */
static void find_own(struct layout *l)
{
	char line[4096];
	FILE *f = fopen("/proc/self/cgroup", "re");

	if (!f)
		return;
	while (fgets(line, sizeof line, f)) {
		char *c1 = strchr(line, ':'), *c2, *path;

		line[strcspn(line, "\n")] = '\0';
		if (!c1 || !(c2 = strchr(c1 + 1, ':')))
			continue;
		*c2 = '\0';
		path = c2 + 1;
		if (c1[1] == '\0' && strncmp(line, "0:", 2) == 0)
			copy_path(l->v2.own, path);
		if (list_has(c1 + 1, "memory"))
			copy_path(l->mem.own, path);
		if (list_has(c1 + 1, "pids"))
			copy_path(l->pids.own, path);
		if (list_has(c1 + 1, "cpu"))
			copy_path(l->cpu.own, path);
	}
	fclose(f);
}

/* Whether `p` is an absolute path without "." or ".." components. */
static int path_ok(const char *p)
{
	const char *s = p;

	if (p[0] != '/')
		return 0;
	while (*s) {
		const char *e;
		s++;
		e = strchr(s, '/');
		if (!e)
			e = s + strlen(s);
		if ((e - s == 1 && s[0] == '.') || (e - s == 2 && s[0] == '.' && s[1] == '.'))
			return 0;
		s = e;
	}
	return 1;
}

/*
 * Writes into `out` the directory of `h` that holds svc's groups' parent:
 * the mount point plus `parent` (or svc's own cgroup, made relative to the
 * mount's root). Returns 0, or -1 when there is none.
 */
static int parent_dir(const struct hier *h, const char *parent, char *out)
{
	const char *rel = parent && parent[0] ? parent : h->own;
	size_t rl = strlen(h->root);
	int n;

	if (!h->mount[0] || !path_ok(rel))
		return -1;
	if (!(parent && parent[0]) && strcmp(h->root, "/") != 0) {
		/* a mount of part of the hierarchy: svc's cgroup must be below it */
		if (strncmp(rel, h->root, rl) != 0 || (rel[rl] != '/' && rel[rl] != '\0'))
			return -1;
		rel += rl;
	}
	while (rel[0] == '/')
		rel++;
	n = snprintf(out, CG_PATH_MAX, rel[0] ? "%s/%s" : "%s", h->mount, rel);
	if (n < 0 || n >= CG_PATH_MAX - CG_NAME_MAX - 8)
		return -1;
	return 0;
}

/* Whether the v2 directory `dir` has the memory and pids controllers available (cgroup.controllers). */
static int v2_usable(const char *dir)
{
	char path[CG_PATH_MAX + 64], buf[512], *tok, *save = NULL;
	int mem = 0, pids = 0;

	if (join_path(path, sizeof path, dir, "cgroup.controllers") < 0 || read_small(path, buf, sizeof buf) < 0)
		return 0;
	for (tok = strtok_r(buf, " \n", &save); tok; tok = strtok_r(NULL, " \n", &save)) {
		mem |= strcmp(tok, "memory") == 0;
		pids |= strcmp(tok, "pids") == 0;
	}
	return mem && pids;
}

/* ---- making, emptying and removing groups ---- */

/* Makes `dir` when missing. Returns 0 or -errno. */
static int make_dir(const char *dir)
{
	if (mkdir(dir, 0755) == 0 || errno == EEXIST)
		return 0;
	return -errno;
}

/* Enables `ctl` ("memory") for the children of the v2 group `dir` unless it is on. Returns 0 or -errno. */
static int v2_enable(const char *dir, const char *ctl)
{
	char path[CG_PATH_MAX + 64], buf[512], want[32], *tok, *save = NULL;

	if (join_path(path, sizeof path, dir, "cgroup.subtree_control") < 0)
		return -ENAMETOOLONG;
	if (read_small(path, buf, sizeof buf) >= 0)
		for (tok = strtok_r(buf, " \n", &save); tok; tok = strtok_r(NULL, " \n", &save))
			if (strcmp(tok, ctl) == 0)
				return 0;
	snprintf(want, sizeof want, "+%s", ctl);
	return write_str(path, want);
}

/* Kills every process listed in `dir`'s cgroup.procs. Returns how many were listed, or -1 when unreadable. */
static int kill_listed(const char *dir)
{
	char path[CG_PATH_MAX + 64], buf[16384], *p, *nl;
	int n = 0;

	if (join_path(path, sizeof path, dir, "cgroup.procs") < 0 || read_small(path, buf, sizeof buf) < 0)
		return -1;
	for (p = buf; *p; p = nl + 1) {
		uint64_t pid;
		nl = strchr(p, '\n');
		if (!nl)
			break;
		*nl = '\0';
		if (svc_parse_u64(p, 0x7fffffff, &pid) == 0 && pid > 1) {
			kill((pid_t)pid, SIGKILL);
			n++;
		}
	}
	return n;
}

/* Empties and removes the group directory `dir` within `deadline_ms` (svc_mono_ms). Returns 0 or -errno. */
static int remove_dir(const char *dir, int v2, int64_t deadline_ms)
{
	if (v2)
		write_ctl(dir, "cgroup.kill", "1"); /* Linux 5.14: the whole group at once; older kernels lack the file */
	for (;;) {
		int n = kill_listed(dir);
		if (n < 0)
			return errno == ENOENT ? 0 : -errno;
		if (n == 0 && rmdir(dir) == 0)
			return 0;
		if (n == 0 && errno != EBUSY)
			return errno == ENOENT ? 0 : -errno;
		if (svc_mono_ms() >= deadline_ms)
			return -EBUSY;
		sleep_ms(10);
	}
}

static int name_ok(const char *name)
{
	size_t i, n = strlen(name);

	if (n == 0 || n > CG_NAME_MAX || name[0] == '.')
		return 0;
	for (i = 0; i < n; i++) {
		char c = name[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
		      c == '-'))
			return 0;
	}
	return 1;
}

/*
 * For svc's own v2 cgroup, which holds svc's processes and so cannot hand
 * controllers down (cgroup-v2.rst "No Internal Process Constraint"; the
 * case of a systemd unit with Delegate=yes): moves every process of `dir`
 * into the leaf <dir>/main, as systemd's DelegateSubgroup= would. They stay
 * inside the same delegated subtree. Returns 0 once `dir` is empty, or -errno.
 */
static int v2_vacate(const char *dir)
{
	char leaf[CG_PATH_MAX], path[CG_PATH_MAX + 64], buf[16384];
	int round;

	if (join_path(leaf, sizeof leaf, dir, "main") < 0 || make_dir(leaf) < 0 ||
	    join_path(path, sizeof path, dir, "cgroup.procs") < 0)
		return -EINVAL;
	for (round = 0; round < 20; round++) {
		char *p, *nl;
		if (read_small(path, buf, sizeof buf) < 0)
			return -errno;
		if (buf[0] == '\0') {
			svc_log_info("cgroup: moved svc's processes from %s into %s to delegate controllers", dir, leaf);
			return 0;
		}
		for (p = buf; (nl = strchr(p, '\n')); p = nl + 1) {
			*nl = '\0';
			write_ctl(leaf, "cgroup.procs", p); /* a process that exited meanwhile: ESRCH, fine */
		}
	}
	return -EBUSY;
}

/*
 * Makes <parent>/svc/<name> in one hierarchy into cg->dir[h] (v2: `v2` set,
 * controllers enabled; `own`: the parent is svc's own cgroup). Returns 0 or -errno.
 */
static int make_group(struct svc_cgroup *cg, int h, const char *pdir, const char *name, int v2, int own, char *why,
		      size_t why_max)
{
	char svc[CG_PATH_MAX];
	int e;

	if (join_path(svc, sizeof svc, pdir, "svc") < 0)
		return -ENAMETOOLONG;
	if (v2) {
		/* the parent must hand the controllers down: only possible there when it has no processes of its own
		 * (cgroup-v2.rst "No Internal Process Constraint"), so a delegated parent usually has them on */
		e = v2_enable(pdir, "memory");
		if (e == -EBUSY && own && v2_vacate(pdir) == 0)
			e = v2_enable(pdir, "memory");
		if (e < 0 || (e = v2_enable(pdir, "pids")) < 0) {
			snprintf(why, why_max,
				 "cannot enable the memory and pids controllers in %s/cgroup.subtree_control: %s (run svc in a "
				 "delegated cgroup, e.g. systemd's Delegate=yes, or set its cgroup parent)",
				 pdir, strerror(-e));
			return e;
		}
		if (cg->cpu_percent)
			v2_enable(pdir, "cpu");
	}
	if ((e = make_dir(svc)) < 0) {
		snprintf(why, why_max, "cannot make a cgroup in %s: %s", pdir, strerror(-e));
		return e;
	}
	if (v2) {
		if ((e = v2_enable(svc, "memory")) < 0 || (e = v2_enable(svc, "pids")) < 0) {
			snprintf(why, why_max, "cannot enable the memory and pids controllers in %s/cgroup.subtree_control: %s",
				 svc, strerror(-e));
			return e;
		}
		if (cg->cpu_percent && (e = v2_enable(svc, "cpu")) < 0) {
			snprintf(why, why_max, "cannot enable the cpu controller in %s/cgroup.subtree_control: %s", svc,
				 strerror(-e));
			return e;
		}
	}
	if (join_path(cg->dir[h], CG_PATH_MAX, svc, name) < 0) {
		snprintf(why, why_max, "the cgroup path under %s is too long", svc);
		cg->dir[h][0] = '\0';
		return -ENAMETOOLONG;
	}
	e = mkdir(cg->dir[h], 0755) == 0 ? 0 : -errno;
	if (e == -EEXIST) {
		/* left by a run that died before removing it */
		remove_dir(cg->dir[h], v2, svc_mono_ms() + CG_REMOVE_MS);
		e = mkdir(cg->dir[h], 0755) == 0 ? 0 : -errno;
	}
	if (e < 0) {
		snprintf(why, why_max, "cannot make a cgroup in %s: %s", svc, strerror(-e));
		cg->dir[h][0] = '\0';
		return e;
	}
	{
		size_t n = strlen(cg->dir[h]); /* < CG_PATH_MAX: fits with "/cgroup.procs" */
		memcpy(cg->procs_file[h], cg->dir[h], n);
		memcpy(cg->procs_file[h] + n, "/cgroup.procs", sizeof "/cgroup.procs");
	}
	return 0;
}

/* Writes one bound; a failure names the file. `optional`: a missing file is fine. Returns 0 or -errno. */
static int set_bound(const struct svc_cgroup *cg, int h, const char *file, const char *value, int optional, char *why,
		     size_t why_max)
{
	int e = write_ctl(cg->dir[h], file, value);

	if (e == 0 || (optional && (e == -ENOENT || e == -EACCES || e == -EINVAL)))
		return 0;
	snprintf(why, why_max, "cannot set %s of %s: %s", file, cg->dir[h], strerror(-e));
	return e;
}

static int set_bounds(const struct svc_cgroup *cg, char *why, size_t why_max)
{
	char v[64];
	int e = 0;

	if (cg->version == SVC_CGROUP_V2) {
		if (cg->memory_mb) {
			snprintf(v, sizeof v, "%llu", (unsigned long long)cg->memory_mb << 20);
			if ((e = set_bound(cg, H_MEMORY, "memory.max", v, 0, why, why_max)) < 0 ||
			    (e = set_bound(cg, H_MEMORY, "memory.swap.max", "0", 1, why, why_max)) < 0)
				return e;
		}
		/* an OOM kill ends the whole run, not one process of it that the rest may wait for forever */
		if ((e = set_bound(cg, H_MEMORY, "memory.oom.group", "1", 1, why, why_max)) < 0)
			return e;
		if (cg->procs) {
			snprintf(v, sizeof v, "%u", cg->procs);
			if ((e = set_bound(cg, H_MEMORY, "pids.max", v, 0, why, why_max)) < 0)
				return e;
		}
		if (cg->cpu_percent) {
			snprintf(v, sizeof v, "%llu %u", (unsigned long long)cg->cpu_percent * (CG_CPU_PERIOD_US / 100),
				 CG_CPU_PERIOD_US);
			e = set_bound(cg, H_MEMORY, "cpu.max", v, 0, why, why_max);
		}
		return e;
	}
	if (cg->memory_mb) {
		snprintf(v, sizeof v, "%llu", (unsigned long long)cg->memory_mb << 20);
		if ((e = set_bound(cg, H_MEMORY, "memory.limit_in_bytes", v, 0, why, why_max)) < 0 ||
		    (e = set_bound(cg, H_MEMORY, "memory.memsw.limit_in_bytes", v, 1, why, why_max)) < 0)
			return e;
	}
	if (cg->procs) {
		snprintf(v, sizeof v, "%u", cg->procs);
		if ((e = set_bound(cg, H_PIDS, "pids.max", v, 0, why, why_max)) < 0)
			return e;
	}
	if (cg->cpu_percent && cg->dir[H_CPU][0]) {
		snprintf(v, sizeof v, "%u", CG_CPU_PERIOD_US);
		if ((e = set_bound(cg, H_CPU, "cpu.cfs_period_us", v, 0, why, why_max)) < 0)
			return e;
		snprintf(v, sizeof v, "%llu", (unsigned long long)cg->cpu_percent * (CG_CPU_PERIOD_US / 100));
		e = set_bound(cg, H_CPU, "cpu.cfs_quota_us", v, 0, why, why_max);
	}
	return e;
}

/*
 * Chooses the hierarchy for groups under `parent` and writes the parent
 * directories into pdir[H__MAX] ("" where unused). Returns the version, or
 * SVC_CGROUP_NONE with `why` set.
 */
static enum svc_cgroup_version choose(const char *parent, int want_cpu, char pdir[H__MAX][CG_PATH_MAX], char *why,
				      size_t why_max)
{
	struct layout l;

	memset(&l, 0, sizeof l);
	memset(pdir, 0, (size_t)H__MAX * CG_PATH_MAX);
	if (parent && parent[0] && !path_ok(parent)) {
		snprintf(why, why_max, "the cgroup parent %s is not an absolute path", parent);
		return SVC_CGROUP_NONE;
	}
	find_mounts(&l);
	find_own(&l);
	if (parent_dir(&l.v2, parent, pdir[H_MEMORY]) == 0) {
		size_t n = strlen(pdir[H_MEMORY]);
		/* svc already in the leaf v2_vacate() made: its groups go beside it, under the delegated cgroup */
		if (!(parent && parent[0]) && n > 5 && strcmp(pdir[H_MEMORY] + n - 5, "/main") == 0)
			pdir[H_MEMORY][n - 5] = '\0';
		if (v2_usable(pdir[H_MEMORY]))
			return SVC_CGROUP_V2;
	}
	pdir[H_MEMORY][0] = '\0';
	if (parent_dir(&l.mem, parent, pdir[H_MEMORY]) == 0 && parent_dir(&l.pids, parent, pdir[H_PIDS]) == 0) {
		if (want_cpu && parent_dir(&l.cpu, parent, pdir[H_CPU]) < 0) {
			snprintf(why, why_max, "cgroup v1 has no cpu controller mounted (for the CPU bound)");
			return SVC_CGROUP_NONE;
		}
		return SVC_CGROUP_V1;
	}
	memset(pdir, 0, (size_t)H__MAX * CG_PATH_MAX);
	snprintf(why, why_max,
		 "no cgroup hierarchy with the memory and pids controllers is available to svc (cgroup v2 %s, cgroup v1 %s)",
		 l.v2.mount[0] ? "has not delegated them" : "is not mounted",
		 l.mem.mount[0] || l.pids.mount[0] ? "lacks one of them" : "is not mounted");
	return SVC_CGROUP_NONE;
}

int svc_cgroup_new(const struct svc_cgroup_opts *o, const char *name, struct svc_cgroup **out, char *why,
		   size_t why_max)
{
	char pdir[H__MAX][CG_PATH_MAX];
	struct svc_cgroup *cg;
	int h, e;

	if (why_max)
		why[0] = '\0';
	if (!name_ok(name)) {
		snprintf(why, why_max, "bad cgroup name");
		return SVC_E_VALIDATION;
	}
	cg = calloc(1, sizeof *cg);
	if (!cg) {
		snprintf(why, why_max, "out of memory");
		return SVC_E_UNAVAILABLE;
	}
	cg->memory_mb = o->memory_mb;
	cg->procs = o->procs;
	cg->cpu_percent = o->cpu_percent;
	cg->version = choose(o->parent, o->cpu_percent != 0, pdir, why, why_max);
	if (cg->version == SVC_CGROUP_NONE) {
		free(cg);
		return SVC_E_UNAVAILABLE;
	}
	for (h = 0; h < H__MAX; h++) {
		int k, shared = -1;
		if (!pdir[h][0] || (cg->version == SVC_CGROUP_V1 && h == H_CPU && !cg->cpu_percent))
			continue;
		/* controllers mounted together (v1 "memory,pids") share one directory: bounds only, joined once */
		for (k = 0; k < h; k++)
			if (shared < 0 && cg->dir[k][0] && strcmp(pdir[k], pdir[h]) == 0)
				shared = k;
		if (shared >= 0)
			memcpy(cg->dir[h], cg->dir[shared], CG_PATH_MAX);
		else if ((e = make_group(cg, h, pdir[h], name, cg->version == SVC_CGROUP_V2,
						 o->vacate && !(o->parent && o->parent[0]), why, why_max)) < 0)
			goto fail;
	}
	if ((e = set_bounds(cg, why, why_max)) < 0)
		goto fail;
	*out = cg;
	return 0;
fail:
	svc_cgroup_free(cg);
	return SVC_E_UNAVAILABLE;
}

int svc_cgroup_check(const char *parent, char *why, size_t why_max)
{
	struct svc_cgroup_opts o = { parent, 0, 0, 0, 0 };
	struct svc_cgroup *cg = NULL;
	char name[32];
	enum svc_cgroup_version v;
	int e;

	snprintf(name, sizeof name, "check-%ld", (long)getpid());
	if ((e = svc_cgroup_new(&o, name, &cg, why, why_max)) < 0)
		return SVC_E_UNAVAILABLE;
	v = cg->version;
	if (svc_cgroup_free(cg) < 0) {
		snprintf(why, why_max, "cannot remove a cgroup svc made");
		return SVC_E_UNAVAILABLE;
	}
	return (int)v;
}

/* ---- a delegated v2 subtree made by the operator (svc-admin cgroup-prepare) ---- */

/* The controllers a prepared subtree hands down: memory and pids always, cpu where the hierarchy has it. */
static const char *const prep_ctls[] = { "memory", "pids", "cpu" };
/* What delegating a v2 cgroup to a user gives it (cgroup-v2.rst "Model of Delegation"). */
static const char *const prep_files[] = { "cgroup.procs", "cgroup.threads", "cgroup.subtree_control" };

/* Whether the cgroup.controllers of `dir` lists `ctl`. */
static int v2_offers(const char *dir, const char *ctl)
{
	char path[CG_PATH_MAX + 64], buf[512], *tok, *save = NULL;

	if (join_path(path, sizeof path, dir, "cgroup.controllers") < 0 || read_small(path, buf, sizeof buf) < 0)
		return 0;
	for (tok = strtok_r(buf, " \n", &save); tok; tok = strtok_r(NULL, " \n", &save))
		if (strcmp(tok, ctl) == 0)
			return 1;
	return 0;
}

/* Hands the controllers of prep_ctls (cpu when offered) to the children of `dir`; 0, or -errno with `why`. */
static int prep_enable(const char *dir, char *why, size_t why_max)
{
	size_t i;
	int e;

	for (i = 0; i < sizeof prep_ctls / sizeof prep_ctls[0]; i++) {
		if (i == 2 && !v2_offers(dir, prep_ctls[i]))
			continue;
		if ((e = v2_enable(dir, prep_ctls[i])) < 0) {
			snprintf(why, why_max, "cannot enable the %s controller in %s/cgroup.subtree_control: %s%s", prep_ctls[i],
				 dir, strerror(-e), e == -EBUSY ? " (it has processes of its own: cgroup-v2's no internal "
								 "process rule; move them into a leaf)" : "");
			return e;
		}
	}
	return 0;
}

/* Chowns the v2 group `dir` and its delegated files (prep_files) to uid:gid; 0, or -errno with `why`. */
static int prep_chown(const char *dir, unsigned uid, unsigned gid, char *why, size_t why_max)
{
	char path[CG_PATH_MAX + 64];
	size_t i;

	if (chown(dir, uid, gid) < 0) {
		snprintf(why, why_max, "cannot hand %s to uid %u: %s", dir, uid, strerror(errno));
		return -errno;
	}
	for (i = 0; i < sizeof prep_files / sizeof prep_files[0]; i++)
		if (join_path(path, sizeof path, dir, prep_files[i]) < 0 || chown(path, uid, gid) < 0) {
			snprintf(why, why_max, "cannot hand %s/%s to uid %u: %s", dir, prep_files[i], uid, strerror(errno));
			return -EPERM;
		}
	return 0;
}

/* Writes the v2 mount point into `out` (`mount` when given, else /proc/self/mountinfo's); 0, or -1 with `why`. */
static int prep_mount(const char *mount, char *out, char *why, size_t why_max)
{
	struct layout l;

	memset(&l, 0, sizeof l);
	if (!mount) {
		find_mounts(&l);
		mount = l.v2.mount;
	}
	if (!mount[0] || copy_path(out, mount) < 0) {
		snprintf(why, why_max, "cgroup v2 is not mounted here");
		return -1;
	}
	if (!v2_usable(out)) {
		snprintf(why, why_max, "the cgroup v2 hierarchy at %s does not offer the memory and pids controllers (they are "
			 "cgroup v1's on this host: nothing to prepare)", out);
		return -1;
	}
	return 0;
}

/* Writes mount + subtree into `out` after checking `subtree` (absolute, below the root); 0, or -1 with `why`. */
static int prep_dir(const char *mnt, const char *subtree, char *out, char *why, size_t why_max)
{
	int n;

	if (!subtree || !path_ok(subtree) || strspn(subtree, "/") == strlen(subtree) ||
	    strspn(subtree, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-/") != strlen(subtree)) {
		snprintf(why, why_max, "the cgroup subtree must be an absolute path below the root of [A-Za-z0-9._-] "
			 "names, such as /svc");
		return -1;
	}
	n = snprintf(out, CG_PATH_MAX, "%s%s", mnt, subtree);
	if (n < 0 || n >= CG_PATH_MAX - CG_NAME_MAX - 16) {
		snprintf(why, why_max, "the cgroup path %s%s is too long", mnt, subtree);
		return -1;
	}
	while (n > 1 && out[n - 1] == '/')
		out[--n] = '\0';
	return 0;
}

int svc_cgroup_prepare(const char *mount, const char *subtree, unsigned uid, unsigned gid, char *why, size_t why_max)
{
	char mnt[CG_PATH_MAX], dir[CG_PATH_MAX], cur[CG_PATH_MAX], leaf[CG_PATH_MAX], names[CG_PATH_MAX], *name, *save = NULL;
	int e;

	snprintf(why, why_max, "%s", "");
	if (prep_mount(mount, mnt, why, why_max) < 0 || prep_dir(mnt, subtree, dir, why, why_max) < 0)
		return SVC_E_UNAVAILABLE;
	/* from the root down: each cgroup on the way hands the controllers to its children, then the next is made */
	memcpy(cur, mnt, strlen(mnt) + 1);
	memcpy(names, dir + strlen(mnt), strlen(dir + strlen(mnt)) + 1);
	for (name = strtok_r(names, "/", &save); name; name = strtok_r(NULL, "/", &save)) {
		char next[CG_PATH_MAX];
		if (prep_enable(cur, why, why_max) < 0 || join_path(next, sizeof next, cur, name) < 0)
			return SVC_E_UNAVAILABLE;
		memcpy(cur, next, strlen(next) + 1);
		if ((e = make_dir(cur)) < 0) {
			snprintf(why, why_max, "cannot make the cgroup %s: %s", cur, strerror(-e));
			return SVC_E_UNAVAILABLE;
		}
	}
	/* the subtree hands them on to svc's groups, and `main` is the leaf for svc's own processes */
	if (prep_enable(dir, why, why_max) < 0 || join_path(leaf, sizeof leaf, dir, "main") < 0)
		return SVC_E_UNAVAILABLE;
	if ((e = make_dir(leaf)) < 0) {
		snprintf(why, why_max, "cannot make the cgroup %s: %s", leaf, strerror(-e));
		return SVC_E_UNAVAILABLE;
	}
	if (prep_chown(dir, uid, gid, why, why_max) < 0 || prep_chown(leaf, uid, gid, why, why_max) < 0)
		return SVC_E_UNAVAILABLE;
	svc_log_info("cgroup: %s delegated to uid %u (controllers memory, pids%s; svc's processes in %s)", dir, uid,
		     v2_offers(dir, "cpu") ? ", cpu" : "", leaf);
	return 0;
}

int svc_cgroup_delegation(const char *mount, const char *subtree, char *out, size_t max)
{
	char mnt[CG_PATH_MAX], dir[CG_PATH_MAX], path[CG_PATH_MAX + 64];
	struct stat st, f;
	size_t i;

	if (prep_mount(mount, mnt, out, max) < 0)
		return -1;
	if (!subtree || !subtree[0]) {
		snprintf(out, max, "cgroup v2: builds and dev servers make their groups in the cgroup svc runs in (the units' "
			 "Delegate=yes); without systemd, `svc-admin cgroup-prepare USER` and SVC_BUILD_CGROUP=/svc");
		return 1;
	}
	if (prep_dir(mnt, subtree, dir, out, max) < 0)
		return 0;
	if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode)) {
		snprintf(out, max, "cgroup v2: SVC_BUILD_CGROUP %s does not exist (%s): run `svc-admin cgroup-prepare USER`",
			 subtree, dir);
		return 0;
	}
	if (!v2_usable(dir)) {
		snprintf(out, max, "cgroup v2: SVC_BUILD_CGROUP %s is not handed the memory and pids controllers: run "
			 "`svc-admin cgroup-prepare USER`", subtree);
		return 0;
	}
	for (i = 0; i < sizeof prep_files / sizeof prep_files[0]; i++)
		if (join_path(path, sizeof path, dir, prep_files[i]) < 0 || stat(path, &f) < 0 || f.st_uid != st.st_uid) {
			snprintf(out, max, "cgroup v2: SVC_BUILD_CGROUP %s is not delegated whole (%s is not owned by uid %u): "
				 "run `svc-admin cgroup-prepare USER`", subtree, prep_files[i], (unsigned)st.st_uid);
			return 0;
		}
	snprintf(out, max, "cgroup v2: SVC_BUILD_CGROUP %s is delegated to uid %u (memory, pids%s)", subtree,
		 (unsigned)st.st_uid, v2_offers(dir, "cpu") ? ", cpu" : "");
	return 1;
}

int svc_cgroup_join(const struct svc_cgroup *cg)
{
	int h;

	for (h = 0; h < H__MAX; h++) {
		int fd;
		if (!cg->procs_file[h][0])
			continue;
		fd = open(cg->procs_file[h], O_WRONLY | O_CLOEXEC);
		if (fd < 0)
			return -errno;
		/* "0" is the writing process itself (cgroup_procs_write_start()), whatever its PID namespace */
		if (write(fd, "0", 1) != 1) {
			int e = -errno;
			close(fd);
			return e;
		}
		close(fd);
	}
	return 0;
}

int svc_cgroup_add(const struct svc_cgroup *cg, pid_t pid)
{
	char v[32];
	int h, e;

	snprintf(v, sizeof v, "%ld", (long)pid);
	for (h = 0; h < H__MAX; h++)
		if (cg->procs_file[h][0] && (e = write_str(cg->procs_file[h], v)) < 0)
			return e;
	return 0;
}

enum svc_cgroup_limit svc_cgroup_limit_hit(const struct svc_cgroup *cg)
{
	uint64_t n = 0;
	const char *pids = cg->version == SVC_CGROUP_V2 ? cg->dir[H_MEMORY] : cg->dir[H_PIDS];

	if (cg->version == SVC_CGROUP_V2) {
		if ((read_key(cg->dir[H_MEMORY], "memory.events", "oom_kill", &n) == 0 && n > 0) ||
		    (read_key(cg->dir[H_MEMORY], "memory.events", "oom_group_kill", &n) == 0 && n > 0))
			return SVC_CGROUP_LIMIT_MEMORY;
	} else if (read_key(cg->dir[H_MEMORY], "memory.oom_control", "oom_kill", &n) == 0) {
		if (n > 0)
			return SVC_CGROUP_LIMIT_MEMORY;
	} else if (read_key(cg->dir[H_MEMORY], "memory.oom_control", "under_oom", &n) == 0 && n > 0) {
		return SVC_CGROUP_LIMIT_MEMORY; /* kernels before 4.13 count no kills */
	}
	if (pids[0] && read_key(pids, "pids.events", "max", &n) == 0 && n > 0)
		return SVC_CGROUP_LIMIT_PROCS;
	return SVC_CGROUP_LIMIT_NONE;
}

const char *svc_cgroup_limit_name(enum svc_cgroup_limit limit)
{
	switch (limit) {
	case SVC_CGROUP_LIMIT_MEMORY:
		return "memory";
	case SVC_CGROUP_LIMIT_PROCS:
		return "processes";
	default:
		return "";
	}
}

int svc_cgroup_describe(const struct svc_cgroup *cg, enum svc_cgroup_limit limit, char *out, size_t max)
{
	if (max)
		out[0] = '\0';
	if (limit == SVC_CGROUP_LIMIT_MEMORY) {
		if (cg->memory_mb)
			snprintf(out, max, "more than %u MB of memory", cg->memory_mb);
		else
			snprintf(out, max, "more memory than the host allows");
		return 0;
	}
	if (limit == SVC_CGROUP_LIMIT_PROCS) {
		snprintf(out, max, "more than %u processes", cg->procs);
		return 0;
	}
	return SVC_E_VALIDATION;
}

unsigned long long svc_cgroup_memory_bytes(const struct svc_cgroup *cg)
{
	uint64_t n = 0;

	if (read_u64(cg->dir[H_MEMORY], cg->version == SVC_CGROUP_V2 ? "memory.current" : "memory.usage_in_bytes", &n) < 0)
		return 0;
	return (unsigned long long)n;
}

const char *svc_cgroup_dir(const struct svc_cgroup *cg)
{
	return cg->dir[H_MEMORY];
}

enum svc_cgroup_version svc_cgroup_version(const struct svc_cgroup *cg)
{
	return cg->version;
}

int svc_cgroup_free(struct svc_cgroup *cg)
{
	int64_t deadline = svc_mono_ms() + CG_REMOVE_MS;
	int h, err = 0;

	if (!cg)
		return 0;
	for (h = 0; h < H__MAX; h++) {
		int e;
		if (!cg->procs_file[h][0]) /* no directory of its own (shared, or never made) */
			continue;
		if ((e = remove_dir(cg->dir[h], cg->version == SVC_CGROUP_V2, deadline)) < 0) {
			svc_log_error("cgroup: cannot remove %s: %s", cg->dir[h], strerror(-e));
			err = SVC_E_UNAVAILABLE;
		}
	}
	free(cg);
	return err;
}
