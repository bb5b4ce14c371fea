/* githttp.c: a project's repository over Git's smart HTTP: git-http-backend run and streamed both ways, the working tree following a push, the branches. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/wait.h>
#include <unistd.h>

#include <git2.h>

#include "core/err.h"
#include "core/fsx.h"
#include "core/log.h"
#include "core/util.h"
#include "project/githttp.h"
#include "project/paths.h"
#include "project/project.h"
#include "project/repo.h"

extern char **environ;

#define CHUNK (64 * 1024)        /* bytes moved per read, each way */
#define HEAD_MAX (16 * 1024)     /* git-http-backend's CGI headers */
#define ENV_MAX 256              /* entries of the program's environment */
#define MAIN_REF "refs/heads/main"

/* ---- the path ---- */

int svc_git_parse_path(const char *rest, const char *query, char *out_id, enum svc_git_service *out_service)
{
	char id[37];
	const char *what;
	size_t i;

	if (!rest || strlen(rest) < 37 || rest[36] == '\0')
		return SVC_E_NOT_FOUND;
	memcpy(id, rest, 36);
	id[36] = '\0';
	if (!svc_uuid_valid(id))
		return SVC_E_NOT_FOUND;
	what = rest + 36;
	if (strncmp(what, ".git/", 5) == 0)
		what += 5;
	else if (*what == '/')
		what += 1;
	else
		return SVC_E_NOT_FOUND;
	for (i = 0; i < 36; i++)
		if (id[i] >= 'A' && id[i] <= 'F')
			id[i] = (char)(id[i] - 'A' + 'a');
	if (strcmp(what, "info/refs") == 0) {
		if (query && strcmp(query, "service=git-upload-pack") == 0)
			*out_service = SVC_GIT_REFS_UPLOAD;
		else if (query && strcmp(query, "service=git-receive-pack") == 0)
			*out_service = SVC_GIT_REFS_RECEIVE;
		else
			return SVC_E_NOT_FOUND; /* the dumb protocol is not served */
	} else if (strcmp(what, "git-upload-pack") == 0) {
		*out_service = SVC_GIT_UPLOAD;
	} else if (strcmp(what, "git-receive-pack") == 0) {
		*out_service = SVC_GIT_RECEIVE;
	} else {
		return SVC_E_NOT_FOUND;
	}
	memcpy(out_id, id, 37);
	return 0;
}

int svc_git_service_writes(enum svc_git_service service)
{
	return service == SVC_GIT_REFS_RECEIVE || service == SVC_GIT_RECEIVE;
}

/* ---- the program's environment ---- */

struct envv {
	char *v[ENV_MAX];
	size_t n;
};

/* Adds "name=value" (copied); a value of NULL adds nothing. Returns 0 or SVC_E_INTERNAL. */
static int env_add(struct envv *e, const char *name, const char *value)
{
	struct svc_buf b;

	if (!value)
		return 0;
	if (e->n + 1 >= ENV_MAX)
		return SVC_E_INTERNAL;
	svc_buf_init(&b, 8192);
	if (svc_buf_addf(&b, "%s=%s", name, value) < 0) {
		svc_buf_dispose(&b);
		return SVC_E_INTERNAL;
	}
	e->v[e->n++] = b.data;
	e->v[e->n] = NULL;
	return 0;
}

static void env_dispose(struct envv *e)
{
	size_t i;

	for (i = 0; i < e->n; i++)
		free(e->v[i]);
	e->n = 0;
}

/* The configuration given to git on its command line's level (git-config(1) GIT_CONFIG_COUNT). */
static int env_git_config(struct envv *e, const char *hooks_dir)
{
	const char *kv[][2] = {
		{ "http.receivepack", "true" },
		{ "http.uploadpack", "true" },
		{ "http.getanyfile", "false" },
		{ "receive.denyCurrentBranch", "ignore" }, /* svc moves the working tree: svc_git_follow_main() */
		{ "receive.fsckObjects", "true" },
		{ "receive.advertisePushOptions", "false" },
		{ "core.hooksPath", hooks_dir },
		{ "uploadpack.allowFilter", "true" },
	};
	char name[32], count[8];
	size_t i;
	int err = 0;

	for (i = 0; i < sizeof kv / sizeof kv[0] && !err; i++) {
		snprintf(name, sizeof name, "GIT_CONFIG_KEY_%zu", i);
		err = env_add(e, name, kv[i][0]);
		snprintf(name, sizeof name, "GIT_CONFIG_VALUE_%zu", i);
		if (!err)
			err = env_add(e, name, kv[i][1] ? kv[i][1] : "");
	}
	snprintf(count, sizeof count, "%zu", sizeof kv / sizeof kv[0]);
	return err ? err : env_add(e, "GIT_CONFIG_COUNT", count);
}

static const char *const service_path[] = {
	[SVC_GIT_REFS_UPLOAD] = "info/refs", [SVC_GIT_REFS_RECEIVE] = "info/refs",
	[SVC_GIT_UPLOAD] = "git-upload-pack", [SVC_GIT_RECEIVE] = "git-receive-pack",
};
static const char *const service_query[] = {
	[SVC_GIT_REFS_UPLOAD] = "service=git-upload-pack", [SVC_GIT_REFS_RECEIVE] = "service=git-receive-pack",
	[SVC_GIT_UPLOAD] = "", [SVC_GIT_RECEIVE] = "",
};

/* The environment of git-http-backend for request `r` (git-http-backend(1) "Environment"). */
static int env_build(const struct svc_config *cfg, const struct svc_git_request *r, struct envv *e)
{
	char root[4096], path[128];
	char **p;
	int err = 0;
	int post = r->service == SVC_GIT_UPLOAD || r->service == SVC_GIT_RECEIVE;

	/* the responder's own settings (the hook loads them), never git's nor HOME */
	for (p = environ; *p && !err; p++) {
		if (strncmp(*p, "GIT_", 4) == 0 || strncmp(*p, "HOME=", 5) == 0 || strncmp(*p, "XDG_", 4) == 0)
			continue;
		if (e->n + 1 >= ENV_MAX / 2)
			break;
		if (!(e->v[e->n] = strdup(*p)))
			return SVC_E_INTERNAL;
		e->v[++e->n] = NULL;
	}
	if (svc_data_path(cfg, "projects", NULL, NULL, root, sizeof root) < 0)
		return SVC_E_INTERNAL;
	snprintf(path, sizeof path, "/%s/%s", r->project_id, service_path[r->service]);
	/* svc decided who may see the repository: export it (no git-daemon-export-ok file) */
	if (env_add(e, "GIT_PROJECT_ROOT", root) < 0 || env_add(e, "GIT_HTTP_EXPORT_ALL", "1") < 0 || env_add(e, "PATH_INFO", path) < 0 ||
	    env_add(e, "QUERY_STRING", service_query[r->service]) < 0 ||
	    env_add(e, "REQUEST_METHOD", post ? "POST" : "GET") < 0 || env_add(e, "REMOTE_USER", r->user_id) < 0 ||
	    env_add(e, "REMOTE_ADDR", r->client_addr) < 0 || env_add(e, "GATEWAY_INTERFACE", "CGI/1.1") < 0 ||
	    env_add(e, "CONTENT_TYPE", post ? r->content_type : NULL) < 0 ||
	    env_add(e, "HTTP_CONTENT_ENCODING", r->content_encoding) < 0 ||
	    env_add(e, "HTTP_GIT_PROTOCOL", r->git_protocol) < 0 || env_add(e, "GIT_CONFIG_NOSYSTEM", "1") < 0 ||
	    env_add(e, "GIT_CONFIG_GLOBAL", "/dev/null") < 0 || env_add(e, "GIT_TERMINAL_PROMPT", "0") < 0 ||
	    env_add(e, "SVC_GIT_PROJECT_ID", r->project_id) < 0 ||
	    env_add(e, "SVC_GIT_WORKSPACE_ID", r->workspace_id) < 0 || env_add(e, "SVC_GIT_USER_ID", r->user_id) < 0 ||
	    env_add(e, "SVC_GIT_GATE_FD", r->service == SVC_GIT_RECEIVE ? "3" : NULL) < 0)
		return SVC_E_INTERNAL;
	return env_git_config(e, r->hooks_dir);
}

/* ---- the program and its two pipes ---- */

struct child {
	pid_t pid;
	int in;   /* its stdin, -1 once closed */
	int out;  /* its stdout, -1 once at its end */
	int gate; /* a push: the write end of the hook's gate (fd 3 in the program), -1 none or once used */
};

static void close_pair(int p[2])
{
	if (p[0] >= 0)
		close(p[0]);
	if (p[1] >= 0)
		close(p[1]);
}

/* Starts the program with pipes on stdin and stdout, and with `gated` the gate's read end as fd 3. */
static int spawn(const struct svc_config *cfg, char *const envp[], int gated, struct child *out)
{
	int in[2] = { -1, -1 }, o[2] = { -1, -1 }, g[2] = { -1, -1 };
	pid_t pid;

	if (pipe2(in, O_CLOEXEC) < 0 || pipe2(o, O_CLOEXEC) < 0 || (gated && pipe2(g, O_CLOEXEC) < 0)) {
		close_pair(in);
		close_pair(o);
		return SVC_E_INTERNAL;
	}
	pid = fork();
	if (pid == 0) {
		char *argv[] = { (char *)cfg->git_http_backend, NULL };
		/* stderr stays the responder's: git's own complaints reach its log */
		dup2(in[0], 0);
		dup2(o[1], 1);
		if (gated)
			dup2(g[0], 3); /* without O_CLOEXEC: receive-pack and its hook inherit it */
		close_range(gated ? 4 : 3, ~0u, 0); /* not the FastCGI connection nor the database's */
		setpgid(0, 0);
		execve(cfg->git_http_backend, argv, envp);
		_exit(127);
	}
	close(in[0]);
	close(o[1]);
	if (g[0] >= 0)
		close(g[0]);
	if (pid < 0) {
		close(in[1]);
		close(o[0]);
		if (g[1] >= 0)
			close(g[1]);
		return SVC_E_INTERNAL;
	}
	fcntl(in[1], F_SETFL, O_NONBLOCK);
	out->pid = pid;
	out->in = in[1];
	out->out = o[0];
	out->gate = g[1];
	return 0;
}

/* Stops the program (its process group: receive-pack, index-pack and the hook with it) and reaps it. */
static int reap(struct child *c, int kill_it)
{
	int status = 0;

	if (c->in >= 0)
		close(c->in);
	if (c->out >= 0)
		close(c->out);
	if (c->gate >= 0)
		close(c->gate); /* an unopened gate: the hook reads its end and refuses */
	c->in = c->out = c->gate = -1;
	if (c->pid <= 0)
		return -1;
	if (kill_it)
		kill(-c->pid, SIGKILL);
	while (waitpid(c->pid, &status, 0) < 0 && errno == EINTR)
		;
	c->pid = 0;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* ---- the CGI headers ---- */

/* Parses the CGI header block `h` (NUL-terminated, "\n" or "\r\n" lines) into the status, the type and the rest. */
static int headers_pass(const struct svc_git_io *io, char *h)
{
	struct svc_buf rest;
	char *line = h, *type = NULL;
	int status = 200, err;

	svc_buf_init(&rest, HEAD_MAX);
	while (line && *line) {
		char *nl = strchr(line, '\n'), *colon;
		if (nl) {
			*nl = '\0';
			if (nl > line && nl[-1] == '\r')
				nl[-1] = '\0';
		}
		colon = strchr(line, ':');
		if (colon) {
			char *v = colon + 1;
			*colon = '\0';
			while (*v == ' ')
				v++;
			if (strcasecmp(line, "Status") == 0) {
				uint64_t s;
				char code[4] = { v[0], v[0] ? v[1] : 0, v[0] && v[1] ? v[2] : 0, 0 };
				if (svc_parse_u64(code, 599, &s) == 0 && s >= 100)
					status = (int)s;
			} else if (strcasecmp(line, "Content-Type") == 0) {
				type = v;
			} else if (strcasecmp(line, "Cache-Control") == 0 || strcasecmp(line, "Expires") == 0 ||
				   strcasecmp(line, "Pragma") == 0) {
				svc_buf_addf(&rest, "%s: %s\r\n", line, v);
			}
		}
		line = nl ? nl + 1 : NULL;
	}
	err = io->begin(io->arg, status, type, rest.data ? rest.data : "");
	svc_buf_dispose(&rest);
	return err;
}

/* ---- the loop ---- */

struct pump {
	const struct svc_git_io *io;
	struct child *c;
	char in[CHUNK];            /* body bytes read from the client, not yet written to the program */
	size_t in_len, in_off;
	int in_done;               /* the client's body has ended */
	uint64_t in_total;
	char head[HEAD_MAX + 1];   /* the program's output until the end of its headers */
	size_t head_len;
	int begun;                 /* headers passed on */
	int status;
};

/* The whole body is in the program: the caller takes what it needs (body_done), then the hook may go on. */
static int open_gate(struct pump *p)
{
	int err = 0;

	if (p->c->gate < 0)
		return 0;
	if (p->io->body_done && (err = p->io->body_done(p->io->arg)) < 0)
		return err; /* the gate closes unopened when the program is reaped: the hook refuses */
	while (write(p->c->gate, "1", 1) < 0 && errno == EINTR)
		;
	close(p->c->gate);
	p->c->gate = -1;
	return 0;
}

/* Moves body bytes: from the client when none wait, then into the program as far as its pipe takes them. */
static int pump_in(struct pump *p, uint64_t max)
{
	if (p->in_off == p->in_len && !p->in_done) {
		long n = p->io->read(p->io->arg, p->in, sizeof p->in);
		if (n < 0)
			return SVC_E_CLIENT_GONE;
		p->in_len = (size_t)n;
		p->in_off = 0;
		p->in_total += (uint64_t)n;
		if (n == 0)
			p->in_done = 1;
		if (p->in_total > max)
			return SVC_E_TOO_LARGE;
	}
	while (p->in_off < p->in_len) {
		ssize_t w = write(p->c->in, p->in + p->in_off, p->in_len - p->in_off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && errno == EAGAIN)
			return 0;
		if (w < 0) {
			/* the program stopped reading (it refused the request): its answer says why */
			p->in_done = 1;
			p->in_off = p->in_len;
			break;
		}
		p->in_off += (size_t)w;
	}
	if (p->in_done && p->in_off == p->in_len && p->c->in >= 0) {
		close(p->c->in);
		p->c->in = -1;
		return open_gate(p);
	}
	return 0;
}

/* Passes on what the program wrote: its headers once complete, then the body as it comes. */
static int pump_out(struct pump *p)
{
	char buf[CHUNK];
	ssize_t n = read(p->c->out, buf, sizeof buf);

	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return 0;
	if (n <= 0) {
		close(p->c->out);
		p->c->out = -1;
		return p->begun ? 0 : SVC_E_INTERNAL;
	}
	if (p->begun)
		return p->io->write(p->io->arg, buf, (size_t)n) < 0 ? SVC_E_CLIENT_GONE : 0;
	if (p->head_len + (size_t)n > HEAD_MAX)
		return SVC_E_INTERNAL;
	memcpy(p->head + p->head_len, buf, (size_t)n);
	p->head_len += (size_t)n;
	p->head[p->head_len] = '\0';
	{
		char *end = strstr(p->head, "\r\n\r\n");
		size_t skip = 4;
		if (!end) {
			end = strstr(p->head, "\n\n");
			skip = 2;
		}
		if (!end)
			return 0;
		*end = '\0';
		p->begun = 1;
		if (headers_pass(p->io, p->head) < 0)
			return SVC_E_CLIENT_GONE;
		n = (ssize_t)(p->head_len - (size_t)(end + skip - p->head));
		if (n > 0 && p->io->write(p->io->arg, end + skip, (size_t)n) < 0)
			return SVC_E_CLIENT_GONE;
	}
	return 0;
}

static int pump_run(struct pump *p, uint64_t max, int64_t deadline_ms)
{
	int err = 0;

	while (p->c->out >= 0) {
		struct pollfd fds[2];
		nfds_t nf = 0;
		int64_t left = deadline_ms - svc_mono_ms();
		int wait_ms;

		if (left <= 0)
			return SVC_E_INTERNAL;
		/* a client's body is read (blocking) only when the program has taken all before it */
		if (p->c->in >= 0 && (err = pump_in(p, max)) < 0)
			return err;
		fds[nf].fd = p->c->out;
		fds[nf++].events = POLLIN;
		if (p->c->in >= 0 && p->in_off < p->in_len) {
			fds[nf].fd = p->c->in;
			fds[nf++].events = POLLOUT;
		}
		/* with the program's pipe drained and more body to come, only look at its output in passing */
		wait_ms = p->c->in >= 0 && p->in_off == p->in_len && !p->in_done ? 0 : (int)(left > 1000 ? 1000 : left);
		if (poll(fds, nf, wait_ms) < 0) {
			if (errno == EINTR)
				continue;
			return SVC_E_INTERNAL;
		}
		if (fds[0].revents && (err = pump_out(p)) < 0)
			return err;
	}
	return 0;
}

int svc_git_http_run(const struct svc_config *cfg, const struct svc_git_request *r, const struct svc_git_io *io,
		     int *out_status)
{
	struct envv env = { { NULL }, 0 };
	struct child c = { 0, -1, -1, -1 };
	struct pump *p = NULL;
	int err, rc;

	*out_status = 0;
	if ((err = env_build(cfg, r, &env)) < 0 || (err = spawn(cfg, env.v, r->service == SVC_GIT_RECEIVE, &c)) < 0)
		goto done;
	if (!(p = calloc(1, sizeof *p))) {
		err = SVC_E_INTERNAL;
		goto done;
	}
	p->io = io;
	p->c = &c;
	if (r->service != SVC_GIT_UPLOAD && r->service != SVC_GIT_RECEIVE) {
		p->in_done = 1; /* a GET has no body */
		close(c.in);
		c.in = -1;
	}
	err = pump_run(p, r->max_body_bytes, svc_mono_ms() + (int64_t)cfg->git_timeout_secs * 1000);
	rc = reap(&c, err < 0);
	if (err == 0 && rc != 0)
		svc_log_warn("git-http-backend for %s exited with %d", r->project_id, rc);
	if (err == SVC_E_TOO_LARGE && p->begun)
		err = SVC_E_CLIENT_GONE; /* too late for a 413: the stream just ends */
	if (err == SVC_E_INTERNAL && !p->begun)
		svc_log_error("git-http-backend for %s gave no answer", r->project_id);
	*out_status = p->begun ? 200 : 0;
done:
	if (c.pid > 0)
		reap(&c, 1);
	free(p);
	env_dispose(&env);
	return err;
}

/* ---- main and the working tree ---- */

static int repo_open(const char *dir, git_repository **out)
{
	if (svc_repo_global_init() < 0 || git_repository_open_ext(out, dir, GIT_REPOSITORY_OPEN_NO_SEARCH, NULL) < 0) {
		const git_error *e = git_error_last();
		svc_log_error("githttp: open %s: %s", dir, e && e->message ? e->message : "?");
		return SVC_E_INTERNAL;
	}
	return 0;
}

int svc_git_main_sha(const char *dir, char *out_sha)
{
	git_repository *repo = NULL;
	git_oid oid;
	int err;

	if ((err = repo_open(dir, &repo)) < 0)
		return err;
	if (git_reference_name_to_id(&oid, repo, MAIN_REF) < 0)
		out_sha[0] = '\0';
	else
		git_oid_tostr(out_sha, 41, &oid);
	git_repository_free(repo);
	return 0;
}

/*
 * The text to write for a file the push changed whose working-tree copy is `disk` (disk_len bytes): the
 * pushed blob when the copy is what main had before (the usual case), else a three-way merge of the
 * copy with the push over main's old blob (git_merge_file; a conflicting hunk takes the push's side), so
 * edits svc-wsd saved but did not commit yet stay. Sets *out (malloc'd, the caller frees) and *out_len.
 */
static int merged_text(git_repository *repo, const git_diff_delta *d, const char *disk, size_t disk_len,
		       const git_blob *pushed, char **out, size_t *out_len)
{
	git_merge_file_input anc, ours, theirs;
	git_merge_file_options o;
	git_merge_file_result res;
	git_blob *old = NULL;
	const char *src = git_blob_rawcontent(pushed);
	size_t len = (size_t)git_blob_rawsize(pushed);
	int err = 0;

	memset(&res, 0, sizeof res);
	if (git_merge_file_input_init(&anc, GIT_MERGE_FILE_INPUT_VERSION) < 0 ||
	    git_merge_file_input_init(&ours, GIT_MERGE_FILE_INPUT_VERSION) < 0 ||
	    git_merge_file_input_init(&theirs, GIT_MERGE_FILE_INPUT_VERSION) < 0 ||
	    git_merge_file_options_init(&o, GIT_MERGE_FILE_OPTIONS_VERSION) < 0)
		return SVC_E_INTERNAL;
	if (disk && git_blob_lookup(&old, repo, &d->old_file.id) == 0 &&
	    !((size_t)git_blob_rawsize(old) == disk_len && memcmp(git_blob_rawcontent(old), disk, disk_len) == 0) &&
	    !git_blob_is_binary(old) && !git_blob_is_binary(pushed)) {
		anc.ptr = git_blob_rawcontent(old);
		anc.size = (size_t)git_blob_rawsize(old);
		ours.ptr = disk;
		ours.size = disk_len;
		theirs.ptr = src;
		theirs.size = len;
		anc.path = ours.path = theirs.path = d->new_file.path;
		o.favor = GIT_MERGE_FILE_FAVOR_THEIRS;
		if (git_merge_file(&res, &anc, &ours, &theirs, &o) == 0) {
			src = res.ptr;
			len = res.len;
		}
	}
	if (!(*out = malloc(len + 1))) {
		err = SVC_E_INTERNAL;
	} else {
		memcpy(*out, src, len);
		*out_len = len;
	}
	git_merge_file_result_free(&res);
	git_blob_free(old);
	return err;
}

/* Writes or deletes the one file a diff delta names, as the new tree has it (merged with what the working tree holds). */
static int follow_delta(git_repository *repo, const char *dir, const git_diff_delta *d, size_t max_bytes)
{
	char rel[SVC_FSX_PATH_MAX + 1];
	git_blob *blob = NULL;
	char *disk = NULL, *text = NULL;
	size_t disk_len = 0, len = 0;
	int err;

	if (d->old_file.path && (d->status == GIT_DELTA_DELETED || d->status == GIT_DELTA_RENAMED) &&
	    svc_fsx_check_path(d->old_file.path, rel) == 0) {
		err = svc_fsx_delete(dir, rel);
		if (err < 0 && err != SVC_E_NOT_FOUND)
			return err;
	}
	if (d->status == GIT_DELTA_DELETED)
		return 0;
	if (d->new_file.mode != GIT_FILEMODE_BLOB && d->new_file.mode != GIT_FILEMODE_BLOB_EXECUTABLE)
		return 0; /* svc's pre-receive check let no other kind in */
	if (svc_fsx_check_path(d->new_file.path, rel) < 0)
		return 0;
	if (git_blob_lookup(&blob, repo, &d->new_file.id) < 0)
		return SVC_E_INTERNAL;
	if (d->status == GIT_DELTA_MODIFIED && svc_fsx_read(dir, rel, max_bytes, &disk, &disk_len) < 0)
		disk = NULL; /* gone or too big to merge: the push's copy */
	if ((err = merged_text(repo, d, disk, disk_len, blob, &text, &len)) == 0)
		err = svc_fsx_write(dir, rel, text, len);
	free(disk);
	free(text);
	git_blob_free(blob);
	return err;
}

/* Writes the files that differ between trees old and new into dir, then makes the index new's tree. */
static int follow_trees(git_repository *repo, const char *dir, git_tree *old_tree, git_tree *new_tree,
			size_t max_bytes)
{
	git_diff *diff = NULL;
	git_index *index = NULL;
	size_t i, n;
	int err = 0;

	if (git_diff_tree_to_tree(&diff, repo, old_tree, new_tree, NULL) < 0)
		return SVC_E_INTERNAL;
	n = git_diff_num_deltas(diff);
	for (i = 0; i < n && err == 0; i++)
		err = follow_delta(repo, dir, git_diff_get_delta(diff, i), max_bytes);
	git_diff_free(diff);
	if (err < 0)
		return err;
	if (git_repository_index(&index, repo) < 0 || git_index_read_tree(index, new_tree) < 0 ||
	    git_index_write(index) < 0)
		err = SVC_E_INTERNAL;
	git_index_free(index);
	return err;
}

int svc_git_follow_main(const struct svc_caller *c, const char *id, const char *dir, const char *old_sha,
			int *out_moved)
{
	git_repository *repo = NULL;
	git_commit *old_c = NULL, *new_c = NULL;
	git_tree *old_t = NULL, *new_t = NULL;
	git_oid old_oid, new_oid;
	int err;

	*out_moved = 0;
	if ((err = repo_open(dir, &repo)) < 0)
		return err;
	if (git_reference_name_to_id(&new_oid, repo, MAIN_REF) < 0)
		goto done; /* no main: nothing to follow */
	if (old_sha[0] && git_oid_fromstr(&old_oid, old_sha) == 0 && git_oid_equal(&old_oid, &new_oid))
		goto done;
	err = SVC_E_INTERNAL;
	if (git_commit_lookup(&new_c, repo, &new_oid) < 0 || git_commit_tree(&new_t, new_c) < 0)
		goto done;
	if (old_sha[0] && (git_oid_fromstr(&old_oid, old_sha) < 0 || git_commit_lookup(&old_c, repo, &old_oid) < 0 ||
			   git_commit_tree(&old_t, old_c) < 0))
		goto done;
	if ((err = follow_trees(repo, dir, old_t, new_t, c->cfg && c->cfg->quota_file_bytes ? c->cfg->quota_file_bytes
											  : (64u << 20))) < 0)
		goto done;
	*out_moved = 1;
done:
	if (err < 0) {
		const git_error *e = git_error_last();
		svc_log_error("githttp: %s: the working tree did not follow main: %s", id,
			      e && e->message ? e->message : svc_err_code(err));
	}
	git_tree_free(old_t);
	git_tree_free(new_t);
	git_commit_free(old_c);
	git_commit_free(new_c);
	git_repository_free(repo);
	if (err == 0 && *out_moved)
		svc_project_changed(c, id);
	return err;
}

/* ---- branches ---- */

static int branch_cmp(const void *a, const void *b)
{
	const struct svc_git_branch *x = a, *y = b;
	int xm = strcmp(x->name, "main") == 0, ym = strcmp(y->name, "main") == 0;

	if (xm != ym)
		return ym - xm;
	return strcmp(x->name, y->name);
}

int svc_git_branches(const char *dir, size_t max, struct svc_git_branch **out, size_t *out_n)
{
	git_repository *repo = NULL;
	git_branch_iterator *it = NULL;
	git_reference *ref = NULL;
	git_branch_t type;
	struct svc_git_branch *list = NULL;
	size_t n = 0, cap = 0;
	int err;

	if ((err = repo_open(dir, &repo)) < 0)
		return err;
	if (git_branch_iterator_new(&it, repo, GIT_BRANCH_LOCAL) < 0) {
		err = SVC_E_INTERNAL;
		goto done;
	}
	while (n < max && git_branch_next(&ref, &type, it) == 0) {
		const char *name = NULL;
		git_commit *commit = NULL;
		git_reference *direct = NULL;

		if (git_branch_name(&name, ref) == 0 && strlen(name) < sizeof list[0].name &&
		    git_reference_resolve(&direct, ref) == 0 &&
		    git_commit_lookup(&commit, repo, git_reference_target(direct)) == 0) {
			if (SVC_ARRAY_GROW(list, cap, n + 1) < 0) {
				err = SVC_E_INTERNAL;
			} else {
				snprintf(list[n].name, sizeof list[n].name, "%s", name);
				git_oid_tostr(list[n].sha, sizeof list[n].sha, git_commit_id(commit));
				list[n].time_ms = (int64_t)git_commit_time(commit) * 1000;
				n++;
			}
		}
		git_commit_free(commit);
		git_reference_free(direct);
		git_reference_free(ref);
		ref = NULL;
		if (err < 0)
			goto done;
	}
	if (n)
		qsort(list, n, sizeof *list, branch_cmp);
	*out = list;
	*out_n = n;
	list = NULL;
done:
	free(list);
	git_branch_iterator_free(it);
	git_repository_free(repo);
	return err;
}
