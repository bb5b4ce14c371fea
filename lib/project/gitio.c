/* gitio.c: Git in and out of svc (docs/git.md): remotes checked and pinned, imports from a Git URL or a ZIP, the mirror to a forge. */
#include <arpa/inet.h>
#include <ares.h>
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>
#include <openssl/crypto.h>
#include <zip.h>

#include "auth/crypto.h"
#include "auth/internal.h"
#include "core/err.h"
#include "core/fsx.h"
#include "core/json.h"
#include "core/log.h"
#include "core/outbound.h"
#include "core/util.h"
#include "db/jobs.h"
#include "project/domains.h"
#include "project/gitcmd.h"
#include "project/gitio.h"
#include "project/paths.h"
#include "project/preview_build.h"
#include "project/quota.h"
#include "project/thumbnail.h"

#define RESOLVE_TIMEOUT_MS 10000
#define TREE_LIST_MAX (64u * 1024 * 1024) /* bytes of `git ls-tree -r -z` read */
#define MIRROR_ATTEMPTS 6

/* ---- remotes ---- */

/* The last label of host name `h` (after its last '.', a trailing '.' left out). */
static const char *url_host_last_label(const char *h)
{
	size_t n = strlen(h);
	const char *p;

	if (n > 0 && h[n - 1] == '.')
		n--;
	for (p = h + n; p > h && p[-1] != '.'; p--)
		;
	return p;
}

int svc_gitio_url_parse(const char *url, struct svc_gitio_remote *out, char *why, size_t whymax)
{
	const char *p, *host, *end;
	size_t len = strlen(url), hlen, i;

	memset(out, 0, sizeof *out);
	if (len > SVC_GITIO_URL_MAX) {
		snprintf(why, whymax, "the URL is too long");
		return SVC_E_VALIDATION;
	}
	for (i = 0; i < len; i++)
		if ((unsigned char)url[i] <= 0x20 || url[i] == 0x7f || url[i] == '\\') {
			snprintf(why, whymax, "the URL must not hold spaces, backslashes or control characters");
			return SVC_E_VALIDATION;
		}
	if (strncasecmp(url, "https://", 8) != 0) {
		snprintf(why, whymax, "only https:// Git URLs are allowed");
		return SVC_E_VALIDATION;
	}
	if (strchr(url, '?') || strchr(url, '#')) {
		snprintf(why, whymax, "the URL must not have a query or a fragment");
		return SVC_E_VALIDATION;
	}
	host = url + 8;
	end = host + strcspn(host, "/");
	if (memchr(host, '@', (size_t)(end - host))) {
		snprintf(why, whymax, "put the user name and token in their own fields, not in the URL");
		return SVC_E_VALIDATION;
	}
	out->port = 443;
	if (*host == '[') {
		p = memchr(host, ']', (size_t)(end - host));
		if (!p) {
			snprintf(why, whymax, "the URL's host is not valid");
			return SVC_E_VALIDATION;
		}
		hlen = (size_t)(p - host - 1);
		host++;
		p++;
	} else {
		p = memchr(host, ':', (size_t)(end - host));
		hlen = (size_t)((p ? p : end) - host);
	}
	if (p && p < end && *p == ':') {
		char port[8];
		uint64_t v;
		size_t plen = (size_t)(end - p - 1);
		if (plen == 0 || plen >= sizeof port) {
			snprintf(why, whymax, "the URL's port is not valid");
			return SVC_E_VALIDATION;
		}
		memcpy(port, p + 1, plen);
		port[plen] = '\0';
		if (svc_parse_u64(port, 65535, &v) < 0 || v == 0) {
			snprintf(why, whymax, "the URL's port is not valid");
			return SVC_E_VALIDATION;
		}
		out->port = (unsigned)v;
	} else if (p && p != end) {
		snprintf(why, whymax, "the URL's host is not valid");
		return SVC_E_VALIDATION;
	}
	if (hlen == 0 || hlen >= sizeof out->host) {
		snprintf(why, whymax, "the URL has no host");
		return SVC_E_VALIDATION;
	}
	for (i = 0; i < hlen; i++) {
		char c = host[i];
		if (c >= 'A' && c <= 'Z')
			c = (char)(c - 'A' + 'a');
		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '-' || c == ':')) {
			snprintf(why, whymax, "the URL's host is not valid");
			return SVC_E_VALIDATION;
		}
		out->host[i] = c;
	}
	out->host[hlen] = '\0';
	if (*url_host_last_label(out->host) >= '0' && *url_host_last_label(out->host) <= '9' &&
	    !strchr(out->host, ':')) {
		/* a name no TLD can have: curl reads "2130706433", "0x7f.1" or "127.1" as 127.0.0.1, which the
		 * guard's lookup of the name would never see, so only a dotted quad is taken */
		struct in_addr a4;
		if (inet_pton(AF_INET, out->host, &a4) != 1) {
			snprintf(why, whymax, "the URL's host is not valid");
			return SVC_E_VALIDATION;
		}
	}
	memcpy(out->url, url, len + 1);
	return 0;
}

/* What the c-ares lookup found. */
struct lookup {
	int done, status;
	struct ares_addrinfo *res;
};

static void on_addrinfo(void *arg, int status, int timeouts, struct ares_addrinfo *res)
{
	struct lookup *l = arg;

	(void)timeouts;
	l->status = status;
	l->res = res;
	l->done = 1;
}

/* Resolves `host` through c-ares (SVC_DNS_SERVER when set) into l->res. Returns 0 or SVC_E_INTERNAL. */
static int lookup_host(const struct svc_config *cfg, const char *host, struct lookup *l)
{
	struct ares_addrinfo_hints hints;
	ares_channel ch = NULL;
	int err;

	if ((err = svc_dns_channel(cfg->dns_server, RESOLVE_TIMEOUT_MS, &ch)) < 0)
		return err;
	memset(&hints, 0, sizeof hints);
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	ares_getaddrinfo(ch, host, "443", &hints, on_addrinfo, l);
	svc_dns_wait(ch, svc_mono_ms() + RESOLVE_TIMEOUT_MS, &l->done);
	ares_destroy(ch);
	return 0;
}

int svc_gitio_resolve(const struct svc_config *cfg, struct svc_gitio_remote *rm, char *why, size_t whymax)
{
	struct svc_outbound_policy policy;
	struct lookup l = { 0, ARES_ENOTFOUND, NULL };
	struct ares_addrinfo_node *n;
	int err;

	svc_outbound_policy_load(cfg, &policy);
	if ((err = lookup_host(cfg, rm->host, &l)) < 0)
		return err;
	if (l.status != ARES_SUCCESS || !l.res || !l.res->nodes) {
		snprintf(why, whymax, "%s does not resolve", rm->host);
		err = SVC_E_VALIDATION;
		goto done;
	}
	rm->addr[0] = '\0';
	for (n = l.res->nodes; n; n = n->ai_next) {
		char text[64] = "";
		const void *a = n->ai_family == AF_INET ? (const void *)&((struct sockaddr_in *)n->ai_addr)->sin_addr
							 : (const void *)&((struct sockaddr_in6 *)n->ai_addr)->sin6_addr;
		inet_ntop(n->ai_family, a, text, sizeof text);
		if (!svc_outbound_allowed(&policy, n->ai_addr, n->ai_addrlen)) {
			enum svc_net_kind kind = svc_net_classify(n->ai_addr, n->ai_addrlen);
			svc_log_warn("gitio: %s refused: %s is a %s address", rm->host, text, svc_net_kind_name(kind));
			snprintf(why, whymax, "%s is a %s address", rm->host, svc_net_kind_name(kind));
			err = SVC_E_FORBIDDEN;
			goto done;
		}
		if (!rm->addr[0])
			snprintf(rm->addr, sizeof rm->addr, "%s", text);
	}
	err = 0;
done:
	if (l.res)
		ares_freeaddrinfo(l.res);
	return err;
}

/* The configuration every git run against a remote gets (through its environment), in `store`. */
struct remote_env {
	char store[24 * 1024];
	char resolve[400], header[2200], ca[1100];
};

static int remote_env(const struct svc_config *cfg, const struct svc_gitio_remote *rm, struct svc_git_run *run,
		      struct remote_env *e)
{
	const char *keys[12], *values[12];
	size_t n = 0;
	int err;

	if (strchr(rm->addr, ':'))
		snprintf(e->resolve, sizeof e->resolve, "%s:%u:[%s]", rm->host, rm->port, rm->addr);
	else
		snprintf(e->resolve, sizeof e->resolve, "%s:%u:%s", rm->host, rm->port, rm->addr);
	keys[n] = "http.curloptResolve", values[n++] = e->resolve;
	keys[n] = "http.followRedirects", values[n++] = "false";
	keys[n] = "http.proxy", values[n++] = "";
	keys[n] = "credential.helper", values[n++] = "";
	keys[n] = "protocol.allow", values[n++] = "never";
	keys[n] = "protocol.https.allow", values[n++] = "always";
	keys[n] = "core.hooksPath", values[n++] = "/dev/null";
	keys[n] = "http.lowSpeedLimit", values[n++] = "1";
	keys[n] = "http.lowSpeedTime", values[n++] = "60";
	if (cfg->git_ca_file && *cfg->git_ca_file) {
		snprintf(e->ca, sizeof e->ca, "%s", cfg->git_ca_file);
		keys[n] = "http.sslCAInfo", values[n++] = e->ca;
	}
	if (rm->token && *rm->token) {
		char cred[1100], *b64 = NULL;
		int len = snprintf(cred, sizeof cred, "%s:%s", rm->username && *rm->username ? rm->username : "svc",
				   rm->token);
		if (len < 0 || (size_t)len >= sizeof cred || svc_base64_encode((const uint8_t *)cred, (size_t)len, &b64) < 0) {
			OPENSSL_cleanse(cred, sizeof cred);
			return SVC_E_VALIDATION;
		}
		snprintf(e->header, sizeof e->header, "Authorization: Basic %s", b64);
		OPENSSL_cleanse(cred, sizeof cred);
		OPENSSL_cleanse(b64, strlen(b64));
		free(b64);
		keys[n] = "http.extraHeader", values[n++] = e->header;
	}
	err = svc_git_config_env(run, keys, values, n, e->store, sizeof e->store);
	return err;
}

/* Wipes what remote_env() held (the token's header). */
static void remote_env_wipe(struct remote_env *e)
{
	OPENSSL_cleanse(e, sizeof *e);
}

/* Makes git's last message fit for a person: its last line that says something. */
static void git_message(const char *why, const char *what, char *out, size_t max)
{
	const char *p, *best = NULL;

	for (p = why; (p = strstr(p, "fatal: ")); p += 7)
		best = p;
	for (p = why; !best && (p = strstr(p, "error: ")); p += 7)
		best = p;
	snprintf(out, max, "%s: %s", what, best ? best : *why ? why : "git failed");
}

/* ---- trees ---- */

/* Collects `git ls-tree` output. */
static int collect_sink(void *ctx, const char *data, size_t len)
{
	return svc_buf_add(ctx, data, len) < 0 ? SVC_E_TOO_LARGE : 0;
}

/* Adds the size of one `git ls-tree -l` entry ("<mode> blob <sha> <size>\t") from e up to tab to *total. */
static int tree_entry_size(const char *e, const char *tab, uint64_t *total)
{
	const char *p = tab;
	char num[24];
	uint64_t v;

	while (p > e && p[-1] != ' ')
		p--;
	if (*p == '-')
		return 0; /* a tree or a commit has no size */
	if ((size_t)(tab - p) == 0 || (size_t)(tab - p) >= sizeof num)
		return SVC_E_INTERNAL;
	memcpy(num, p, (size_t)(tab - p));
	num[tab - p] = '\0';
	if (svc_parse_u64(num, UINT64_MAX / 2, &v) < 0)
		return SVC_E_INTERNAL;
	*total += v;
	return 0;
}

/*
 * Checks the tree of commit `sha` of the repository in `dir`: no symlink,
 * no submodule, every path one svc_fsx_check_path() allows, and its files
 * together at most `max_bytes` once checked out (the pack is compressed: a
 * small fetch can hold a tree that unpacks far past the import's cap).
 * Returns 0, SVC_E_VALIDATION (the first refused entry named in why),
 * SVC_E_TOO_LARGE (why says so), SVC_E_INTERNAL.
 */
static int tree_check(const char *dir, const char *sha, uint64_t max_bytes, char *why, size_t whymax)
{
	uint64_t total = 0;
	struct svc_git_run run = { 0 };
	struct svc_buf b;
	char norm[SVC_FSX_PATH_MAX + 1], err_text[256];
	size_t off = 0;
	int err, status = 0;

	svc_buf_init(&b, TREE_LIST_MAX);
	run.dir = dir;
	run.args[0] = "ls-tree";
	run.args[1] = "-r";
	run.args[2] = "-z";
	run.args[3] = "--full-tree";
	run.args[4] = "-l";
	run.args[5] = sha;
	run.sink = collect_sink;
	run.sink_ctx = &b;
	run.timeout_ms = 120000;
	if ((err = svc_git_run(&run, &status, err_text, sizeof err_text)) < 0 || status != 0) {
		svc_log_error("gitio: ls-tree %s: %d %s", sha, status, err_text);
		err = err == SVC_E_TOO_LARGE ? SVC_E_TOO_LARGE : SVC_E_INTERNAL;
		goto done;
	}
	while (off < b.len) {
		const char *e = b.data + off, *tab = memchr(e, '\t', b.len - off), *nul;
		if (!tab || !(nul = memchr(tab, '\0', b.len - (size_t)(tab - b.data))))
			break;
		if (strncmp(e, "120000 ", 7) == 0) {
			snprintf(why, whymax, "the tree holds a symlink (%.200s); svc refuses symlinks", tab + 1);
			err = SVC_E_VALIDATION;
			goto done;
		}
		if (strncmp(e, "160000 ", 7) == 0) {
			snprintf(why, whymax, "the tree holds a submodule (%.200s); svc cannot import submodules", tab + 1);
			err = SVC_E_VALIDATION;
			goto done;
		}
		if (svc_fsx_check_path(tab + 1, norm) < 0) {
			snprintf(why, whymax, "the tree holds a path svc refuses (%.200s)", tab + 1);
			err = SVC_E_VALIDATION;
			goto done;
		}
		if ((err = tree_entry_size(e, tab, &total)) < 0 || total > max_bytes) {
			if (err == 0 || err == SVC_E_TOO_LARGE) {
				snprintf(why, whymax, "the tree's files are larger than %llu MiB",
					 (unsigned long long)(max_bytes >> 20));
				err = SVC_E_TOO_LARGE;
			}
			goto done;
		}
		off = (size_t)(nul - b.data) + 1;
	}
	err = 0;
done:
	svc_buf_dispose(&b);
	return err;
}

/* Runs git with `args` (NULL-terminated) in `dir` without a remote; returns 0 when it exited 0, else SVC_E_INTERNAL (logged). */
static int git_local(const char *dir, const char *const *args, char *out, size_t outmax)
{
	struct svc_git_run run = { 0 };
	struct svc_buf b;
	char why[512];
	size_t i;
	int err, status = 0;

	svc_buf_init(&b, 4096);
	run.dir = dir;
	for (i = 0; args[i] && i < SVC_GIT_MAX_ARGS - 1; i++)
		run.args[i] = args[i];
	run.sink = collect_sink;
	run.sink_ctx = &b;
	run.timeout_ms = 120000;
	err = svc_git_run(&run, &status, why, sizeof why);
	if (err == 0 && status != 0)
		err = SVC_E_INTERNAL;
	if (err < 0)
		svc_log_error("gitio: git %s in %s: %d %s", args[0], dir, status, why);
	if (err == 0 && out) {
		size_t n = b.len < outmax - 1 ? b.len : outmax - 1;
		memcpy(out, b.data ? b.data : "", n);
		out[n] = '\0';
		while (n > 0 && (out[n - 1] == '\n' || out[n - 1] == '\r'))
			out[--n] = '\0';
	}
	svc_buf_dispose(&b);
	return err;
}

/* The sha `rev` names in the repository of `dir` into out (41 bytes); SVC_E_NOT_FOUND when none. */
static int rev_parse(const char *dir, const char *rev, char *out)
{
	char spec[300], text[128];
	const char *args[] = { "rev-parse", "--verify", "--quiet", spec, NULL };

	snprintf(spec, sizeof spec, "%s^{commit}", rev);
	if (git_local(dir, args, text, sizeof text) < 0 || !svc_git_sha_valid(text))
		return SVC_E_NOT_FOUND;
	memcpy(out, text, 41);
	return 0;
}

/* Runs git against remote `rm` with `args` in `dir` (size cap and timeout of the import settings). */
static int git_remote(const struct svc_config *cfg, const struct svc_gitio_remote *rm, const char *dir,
		      const char *const *args, const char *watch, uint64_t max_bytes, char *why, size_t whymax,
		      int *out_status)
{
	struct svc_git_run run = { 0 };
	struct remote_env *e = calloc(1, sizeof *e);
	size_t i;
	int err;

	if (!e)
		return SVC_E_INTERNAL;
	run.dir = dir;
	for (i = 0; args[i] && i < SVC_GIT_MAX_ARGS - 1; i++)
		run.args[i] = args[i];
	run.timeout_ms = (long)cfg->import_timeout_secs * 1000;
	run.watch_dir = watch;
	run.max_bytes = max_bytes;
	if ((err = remote_env(cfg, rm, &run, e)) == 0)
		err = svc_git_run(&run, out_status, why, whymax);
	remote_env_wipe(e);
	free(e);
	return err;
}

/* ---- ZIP ---- */

/* Drops the one top folder every entry of a forge's ZIP shares: its length with the '/', or 0. */
static size_t zip_common_top(zip_t *z, zip_int64_t n)
{
	const char *first = NULL;
	size_t top = 0;
	zip_int64_t i;

	for (i = 0; i < n; i++) {
		const char *name = zip_get_name(z, (zip_uint64_t)i, ZIP_FL_ENC_GUESS);
		const char *slash;
		if (!name)
			return 0;
		if (!first) {
			first = name;
			char seg[SVC_FSX_PATH_MAX + 1], norm[SVC_FSX_PATH_MAX + 1];
			slash = strchr(name, '/');
			if (!slash || slash == name || (size_t)(slash - name) > SVC_FSX_PATH_MAX)
				return 0;
			top = (size_t)(slash - name) + 1;
			memcpy(seg, name, top - 1);
			seg[top - 1] = '\0';
			if (svc_fsx_check_path(seg, norm) < 0 || strcmp(seg, ".") == 0 || strcmp(norm, seg) != 0)
				return 0; /* "..", ".git", "/": not a folder to drop, a name to refuse */
		}
		if (strncmp(name, first, top) != 0)
			return 0;
	}
	return top;
}

/* Checks one entry's name and kind; writes its path into norm, or "" for a directory. */
static int zip_entry_check(zip_t *z, zip_uint64_t i, size_t top, char *norm, char *why, size_t whymax)
{
	const char *name = zip_get_name(z, i, ZIP_FL_ENC_GUESS);
	zip_uint8_t opsys;
	zip_uint32_t attr;
	size_t len;

	if (!name || strlen(name) <= top) {
		norm[0] = '\0';
		return 0; /* the top folder itself */
	}
	name += top;
	len = strlen(name);
	if (zip_file_get_external_attributes(z, i, 0, &opsys, &attr) == 0 && opsys == ZIP_OPSYS_UNIX) {
		unsigned mode = (attr >> 16) & 0170000;
		if (mode != 0 && mode != 0100000 && mode != 0040000) {
			snprintf(why, whymax, "the ZIP holds a symlink or special file (%.200s); svc refuses them", name);
			return SVC_E_VALIDATION;
		}
	}
	if (name[len - 1] == '/') {
		char dir[SVC_FSX_PATH_MAX + 2];
		if (len > SVC_FSX_PATH_MAX) {
			snprintf(why, whymax, "the ZIP holds a path that is too long");
			return SVC_E_VALIDATION;
		}
		memcpy(dir, name, len - 1);
		dir[len - 1] = '\0';
		if (svc_fsx_check_path(dir, norm) < 0) {
			snprintf(why, whymax, "the ZIP holds a path outside the project (%.200s)", name);
			return SVC_E_VALIDATION;
		}
		norm[0] = '\0';
		return 0;
	}
	if (svc_fsx_check_path(name, norm) < 0) {
		snprintf(why, whymax, "the ZIP holds a path outside the project (%.200s)", name);
		return SVC_E_VALIDATION;
	}
	return 0;
}

/* Reads one entry whole, at most `left` bytes. */
static int zip_entry_read(zip_t *z, zip_uint64_t i, uint64_t left, char **out, size_t *out_len)
{
	struct svc_buf b;
	zip_file_t *f = zip_fopen_index(z, i, 0);
	char chunk[65536];
	zip_int64_t got;
	int err = 0;

	if (!f)
		return SVC_E_VALIDATION;
	svc_buf_init(&b, left > SIZE_MAX / 2 ? SIZE_MAX / 2 : (size_t)left);
	while ((got = zip_fread(f, chunk, sizeof chunk)) > 0)
		if (svc_buf_add(&b, chunk, (size_t)got) < 0) {
			err = SVC_E_TOO_LARGE;
			break;
		}
	if (got < 0)
		err = SVC_E_VALIDATION;
	zip_fclose(f);
	if (err < 0) {
		svc_buf_dispose(&b);
		return err;
	}
	*out = svc_buf_detach(&b, out_len);
	return *out ? 0 : SVC_E_INTERNAL;
}

int svc_gitio_zip_extract(const struct svc_config *cfg, const void *data, size_t len, const char *dest, char *why,
			  size_t whymax)
{
	uint64_t left = cfg->import_max_mb * 1024 * 1024;
	char norm[SVC_FSX_PATH_MAX + 1];
	zip_source_t *src;
	zip_error_t zerr;
	zip_t *z = NULL;
	zip_int64_t n, i;
	size_t top;
	int err = 0;

	zip_error_init(&zerr);
	if (!(src = zip_source_buffer_create(data, len, 0, &zerr)) ||
	    !(z = zip_open_from_source(src, ZIP_RDONLY | ZIP_CHECKCONS, &zerr))) {
		if (src)
			zip_source_free(src);
		zip_error_fini(&zerr);
		snprintf(why, whymax, "the body is not a ZIP archive");
		return SVC_E_VALIDATION;
	}
	zip_error_fini(&zerr);
	n = zip_get_num_entries(z, 0);
	if (n < 0 || (uint64_t)n > cfg->import_zip_entries) {
		snprintf(why, whymax, "the ZIP holds more than %llu entries", (unsigned long long)cfg->import_zip_entries);
		err = SVC_E_TOO_LARGE;
		goto done;
	}
	top = zip_common_top(z, n);
	for (i = 0; i < n && err == 0; i++) {
		struct zip_stat st;
		char *bytes = NULL;
		size_t blen = 0;

		if ((err = zip_entry_check(z, (zip_uint64_t)i, top, norm, why, whymax)) < 0 || !norm[0])
			continue;
		if (zip_stat_index(z, (zip_uint64_t)i, 0, &st) == 0 && (st.valid & ZIP_STAT_ENCRYPTION_METHOD) &&
		    st.encryption_method != ZIP_EM_NONE) {
			snprintf(why, whymax, "the ZIP holds an encrypted entry (%.200s)", norm);
			err = SVC_E_VALIDATION;
			break;
		}
		if ((err = zip_entry_read(z, (zip_uint64_t)i, left, &bytes, &blen)) < 0) {
			if (err == SVC_E_TOO_LARGE)
				snprintf(why, whymax, "the ZIP unpacks to more than %llu MiB",
					 (unsigned long long)cfg->import_max_mb);
			else
				snprintf(why, whymax, "the ZIP entry %.200s cannot be read", norm);
			break;
		}
		left -= blen;
		err = svc_fsx_write(dest, norm, bytes ? bytes : "", blen);
		free(bytes);
		if (err < 0)
			snprintf(why, whymax, "the ZIP entry %.200s cannot be written (a file and a folder of one name?)",
				 norm);
	}
done:
	zip_discard(z);
	return err;
}

/* ---- import from a Git URL ---- */

int svc_gitio_import_begin(struct svc_db *db, const char *id, void *arg)
{
	const struct svc_gitio_import *im = arg;
	struct json_object *job;
	struct svc_dbv p[6];
	char *sealed = NULL;
	int err;

	if (im->token && *im->token &&
	    (err = svc_crypto_seal_secret(db, im->cfg, im->workspace_id, "project_imports", "token_sealed", id, im->token,
					  strlen(im->token), &sealed)) < 0)
		return err;
	p[0] = svc_dbv_str(id);
	p[1] = svc_dbv_str(im->url);
	p[2] = svc_dbv_str(im->ref);
	p[3] = svc_dbv_str(im->username);
	p[4] = svc_dbv_str(sealed);
	p[5] = svc_dbv_str(im->user_id);
	err = svc_db_run(db, STMT_GITIO_IMPORT_INSERT, p, 6, NULL, NULL);
	free(sealed);
	if (err < 0)
		return err;
	job = json_object_new_object();
	svc_json_add_str(job, "projectId", id);
	err = svc_jobs_enqueue(db, SVC_JOB_GIT_IMPORT, json_object_to_json_string_ext(job, JSON_C_TO_STRING_PLAIN), 1,
			       NULL);
	json_object_put(job);
	return err;
}

/* The project id of a job's payload {projectId} into out (37 bytes). */
static int job_project(const struct svc_job *job, char *out)
{
	struct json_object *o = json_tokener_parse(job->payload);
	const char *id = o ? svc_json_str(o, "projectId") : NULL;
	int err = id && svc_uuid_valid(id) ? 0 : SVC_E_VALIDATION;

	if (err == 0)
		snprintf(out, 37, "%s", id);
	json_object_put(o);
	return err;
}

/* After the files of project `id` changed outside a request: updatedAt, svc-wsd, the preview, the thumbnail. */
static void files_changed(struct svc_db *db, const struct svc_config *cfg, const char *id)
{
	struct svc_dbv p = svc_dbv_str(id);

	svc_db_run(db, STMT_PROJECT_TOUCH, &p, 1, NULL, NULL);
	svc_internal_notify_files(cfg, db, id);
	svc_preview_build_request(db, cfg, id);
	svc_thumbnail_request(db, id);
}

/*
 * Fetches rm's `ref` (or HEAD) into main of the repository in dir, checks it and checks it out; the
 * directory may grow to `max_bytes` (SVC_IMPORT_MAX_MB, or less when the project's quotas leave less).
 */
static int import_fetch_checkout(const struct svc_config *cfg, const struct svc_gitio_remote *rm, const char *dir,
				 const char *ref, uint64_t max_bytes, char *why, size_t whymax)
{
	char spec[600], gitwhy[1024], sha[41];
	const char *fetch[] = { "fetch", "--no-tags", "--update-head-ok", "--quiet", "--", rm->url, spec, NULL };
	const char *checkout[] = { "checkout", "--quiet", "--force", "main", NULL };
	int err, status = 0, lock;

	snprintf(spec, sizeof spec, "+%s:refs/heads/main", ref && *ref ? ref : "HEAD");
	err = git_remote(cfg, rm, dir, fetch, dir, max_bytes, gitwhy, sizeof gitwhy, &status);
	if (err == SVC_E_TOO_LARGE) {
		snprintf(why, whymax, "the repository is larger than %llu MiB%s", (unsigned long long)(max_bytes >> 20),
			 max_bytes < cfg->import_max_mb * 1024 * 1024 ? " (what the project's quota leaves)" : "");
		return err;
	}
	if (err == SVC_E_UNAVAILABLE) {
		snprintf(why, whymax, "the clone took longer than %llu s", (unsigned long long)cfg->import_timeout_secs);
		return err;
	}
	if (err < 0 || status != 0) {
		git_message(gitwhy, "git fetch failed", why, whymax);
		return err < 0 ? err : SVC_E_UNAVAILABLE;
	}
	if ((err = rev_parse(dir, "refs/heads/main", sha)) < 0) {
		snprintf(why, whymax, "the remote has no such ref");
		return err;
	}
	if ((err = tree_check(dir, sha, max_bytes, why, whymax)) < 0)
		return err;
	if ((lock = svc_project_lock(dir)) < 0)
		return lock;
	err = git_local(dir, checkout, NULL, 0);
	close(lock);
	if (err < 0)
		snprintf(why, whymax, "the files could not be checked out");
	return err;
}

/* import_fetch_checkout(); a failure puts main back and drops what was fetched, so a refused tree leaves no trace. */
static int import_fetch(const struct svc_config *cfg, const struct svc_gitio_remote *rm, const char *dir,
			const char *ref, uint64_t max_bytes, char *why, size_t whymax)
{
	char before[41];
	const char *reset[] = { "update-ref", "refs/heads/main", before, NULL };
	const char *expire[] = { "reflog", "expire", "--expire=now", "--all", NULL };
	const char *gc[] = { "gc", "--quiet", "--prune=now", NULL };
	int err, had = rev_parse(dir, "refs/heads/main", before) == 0;

	if ((err = import_fetch_checkout(cfg, rm, dir, ref, max_bytes, why, whymax)) < 0 && had) {
		git_local(dir, reset, NULL, 0);
		git_local(dir, expire, NULL, 0);
		git_local(dir, gc, NULL, 0);
	}
	return err;
}

int svc_gitio_import_job(void *vctx, const struct svc_job *job, char *errmsg, size_t errmax)
{
	struct svc_job_ctx *ctx = vctx;
	struct svc_rows *rows = NULL;
	struct svc_gitio_remote rm;
	struct svc_dbv p[3];
	char id[37], dir[2048], why[1000] = "", fetch_head[2100], *token = NULL;
	size_t token_len = 0;
	int err;

	if ((err = job_project(job, id)) < 0) {
		snprintf(errmsg, errmax, "bad payload");
		return err;
	}
	p[0] = svc_dbv_str(id);
	if ((err = svc_db_run(ctx->db, STMT_GITIO_IMPORT_GET, p, 1, &rows, NULL)) < 0)
		return err;
	if (!rows || rows->nrows != 1 || strcmp(svc_rows_get(rows, 0, GICOL_STATE), "importing") != 0) {
		svc_rows_free(rows);
		return 0; /* gone, or ended by an earlier run */
	}
	if (svc_gitio_url_parse(svc_rows_get(rows, 0, GICOL_URL), &rm, why, sizeof why) < 0)
		goto end;
	if (svc_rows_get(rows, 0, GICOL_TOKEN) &&
	    svc_crypto_open_secret(ctx->db, ctx->cfg, svc_rows_get(rows, 0, GICOL_WORKSPACE), "project_imports",
				   "token_sealed", id, svc_rows_get(rows, 0, GICOL_TOKEN), &token, &token_len) < 0) {
		snprintf(why, sizeof why, "the token could not be read (ENCRYPTION_KEY changed?)");
		goto end;
	}
	rm.token = token;
	rm.username = svc_rows_get(rows, 0, GICOL_USERNAME);
	if (svc_gitio_resolve(ctx->cfg, &rm, why, sizeof why) < 0 ||
	    svc_project_dir(ctx->cfg, id, dir, sizeof dir) < 0)
		goto end;
	{
		uint64_t cap = ctx->cfg->import_max_mb * 1024 * 1024, now = 0, left = UINT64_MAX;
		if (svc_quota_repo_room(ctx->db, ctx->cfg, svc_rows_get(rows, 0, GICOL_WORKSPACE), id, dir, &now, &left) == 0 &&
		    left != UINT64_MAX && now + left < cap)
			cap = now + left; /* SVC_QUOTA_REPO_BYTES and SVC_QUOTA_WORKSPACE_BYTES */
		if (import_fetch(ctx->cfg, &rm, dir, svc_rows_get(rows, 0, GICOL_REF), cap, why, sizeof why) == 0) {
			why[0] = '\0';
			svc_quota_repo_room(ctx->db, ctx->cfg, svc_rows_get(rows, 0, GICOL_WORKSPACE), id, dir, &now, &left);
		}
	}
	snprintf(fetch_head, sizeof fetch_head, "%s/.git/FETCH_HEAD", dir);
	unlink(fetch_head); /* it names the URL */
end:
	svc_crypto_free_secret(token, token_len);
	p[0] = svc_dbv_str(why[0] ? "failed" : "done");
	p[1] = svc_dbv_str(why[0] ? why : NULL);
	p[2] = svc_dbv_str(id);
	err = svc_db_run(ctx->db, STMT_GITIO_IMPORT_END, p, 3, NULL, NULL);
	if (why[0])
		svc_log_warn("gitio: import of %s failed: %s", id, why);
	else
		files_changed(ctx->db, ctx->cfg, id);
	svc_rows_free(rows);
	if (err < 0)
		snprintf(errmsg, errmax, "the import's end could not be recorded");
	return err;
}

/* ---- the mirror ---- */

int svc_gitio_mirror_queue(struct svc_db *db, const char *project_id)
{
	struct svc_rows *rows = NULL;
	struct json_object *job;
	struct svc_dbv p = svc_dbv_str(project_id);
	int err;

	if ((err = svc_db_run(db, STMT_GITIO_REMOTE_EXISTS, &p, 1, &rows, NULL)) < 0 || !rows || rows->nrows == 0) {
		svc_rows_free(rows);
		return 0;
	}
	svc_rows_free(rows);
	job = json_object_new_object();
	svc_json_add_str(job, "projectId", project_id);
	if ((err = svc_jobs_enqueue(db, SVC_JOB_GIT_MIRROR_PUSH, json_object_to_json_string_ext(job, JSON_C_TO_STRING_PLAIN),
				    MIRROR_ATTEMPTS, NULL)) < 0)
		svc_log_error("gitio: the mirror push of %s could not be queued", project_id);
	json_object_put(job);
	return 0;
}

/* Loads project `id`'s remote into *rm with its token opened (*token, freed by the caller) and its branch. */
static int remote_load(struct svc_db *db, const struct svc_config *cfg, const char *id, struct svc_gitio_remote *rm,
		       char *branch, size_t bmax, char **token, size_t *token_len, char *why, size_t whymax)
{
	struct svc_rows *rows = NULL;
	struct svc_dbv p = svc_dbv_str(id);
	int err;

	if ((err = svc_db_run(db, STMT_GITIO_REMOTE_GET, &p, 1, &rows, NULL)) < 0)
		return err;
	if (!rows || rows->nrows != 1) {
		snprintf(why, whymax, "the project has no remote");
		err = SVC_E_NOT_FOUND;
		goto done;
	}
	if ((err = svc_gitio_url_parse(svc_rows_get(rows, 0, GRCOL_URL), rm, why, whymax)) < 0)
		goto done;
	snprintf(branch, bmax, "%s", svc_rows_get(rows, 0, GRCOL_BRANCH));
	if ((err = svc_crypto_open_secret(db, cfg, svc_rows_get(rows, 0, GRCOL_WORKSPACE), "project_git_remotes",
					  "token_sealed", id, svc_rows_get(rows, 0, GRCOL_TOKEN), token, token_len)) < 0) {
		snprintf(why, whymax, "the remote's token could not be read (ENCRYPTION_KEY changed?)");
		goto done;
	}
	/* the user name outlives `rows`: keep it with the token */
	if (svc_rows_get(rows, 0, GRCOL_USERNAME)) {
		char *u = strdup(svc_rows_get(rows, 0, GRCOL_USERNAME));
		rm->username = u;
	}
	rm->token = *token;
	err = svc_gitio_resolve(cfg, rm, why, whymax);
done:
	svc_rows_free(rows);
	return err;
}

int svc_gitio_push(struct svc_db *db, const struct svc_config *cfg, const char *project_id, const char *branch,
		   char *why, size_t whymax)
{
	struct svc_gitio_remote rm;
	struct svc_dbv p[4];
	char dir[2048], rbranch[256] = "main", spec[400], sha[41] = "", gitwhy[1024], *token = NULL;
	const char *push[] = { "push", "--quiet", "--", rm.url, spec, NULL };
	size_t token_len = 0;
	int err, status = 0, ok;

	memset(&rm, 0, sizeof rm);
	why[0] = '\0';
	if ((err = remote_load(db, cfg, project_id, &rm, rbranch, sizeof rbranch, &token, &token_len, why, whymax)) < 0)
		goto record;
	if ((err = svc_project_dir(cfg, project_id, dir, sizeof dir)) < 0 || (err = rev_parse(dir, "refs/heads/main", sha)) < 0)
		goto record;
	snprintf(spec, sizeof spec, "%s:refs/heads/%s", sha, branch ? branch : rbranch);
	push[3] = rm.url;
	err = git_remote(cfg, &rm, dir, push, NULL, 0, gitwhy, sizeof gitwhy, &status);
	if (err == 0 && status != 0) {
		git_message(gitwhy, "git push failed", why, whymax);
		err = strstr(gitwhy, "rejected") || strstr(gitwhy, "non-fast-forward") || strstr(gitwhy, "fetch first")
			      ? SVC_E_CONFLICT
			      : SVC_E_UNAVAILABLE;
	} else if (err == SVC_E_UNAVAILABLE) {
		snprintf(why, whymax, "the push took longer than %llu s", (unsigned long long)cfg->import_timeout_secs);
	} else if (err == 0) {
		snprintf(why, whymax, "pushed %.12s to %s", sha, branch ? branch : rbranch);
	}
record:
	svc_crypto_free_secret(token, token_len);
	free((char *)rm.username);
	if (err == SVC_E_NOT_FOUND && !rm.url[0])
		return err; /* no remote: nothing to record */
	if (!branch) {
		ok = err == 0;
		p[0] = svc_dbv_i64(ok);
		p[1] = svc_dbv_str(sha[0] ? sha : NULL);
		p[2] = svc_dbv_str(why[0] ? why : (ok ? "pushed" : "the push failed"));
		p[3] = svc_dbv_str(project_id);
		svc_db_run(db, STMT_GITIO_REMOTE_RESULT, p, 4, NULL, NULL);
	}
	return err;
}

int svc_gitio_mirror_push_job(void *vctx, const struct svc_job *job, char *errmsg, size_t errmax)
{
	struct svc_job_ctx *ctx = vctx;
	char id[37], why[1000];
	int err;

	if ((err = job_project(job, id)) < 0) {
		snprintf(errmsg, errmax, "bad payload");
		return err;
	}
	err = svc_gitio_push(ctx->db, ctx->cfg, id, NULL, why, sizeof why);
	if (err == SVC_E_NOT_FOUND || err == SVC_E_CONFLICT || err == SVC_E_FORBIDDEN)
		return 0; /* no remote now, diverged, or refused by the guard: trying again changes nothing */
	if (err < 0)
		snprintf(errmsg, errmax, "%s", why);
	return err;
}

/* Asks git whether `a` is an ancestor of `b` in dir: 1 yes, 0 no, or an error. */
static int is_ancestor(const char *dir, const char *a, const char *b)
{
	struct svc_git_run run = { 0 };
	char why[256];
	int status = 0, err;

	run.dir = dir;
	run.args[0] = "merge-base";
	run.args[1] = "--is-ancestor";
	run.args[2] = a;
	run.args[3] = b;
	run.timeout_ms = 120000;
	if ((err = svc_git_run(&run, &status, why, sizeof why)) < 0)
		return err;
	return status == 0 ? 1 : status == 1 ? 0 : SVC_E_INTERNAL;
}

/* Moves main of dir to `sha` (a descendant) with the working tree, under the project's lock. */
static int fast_forward(const char *dir, const char *sha)
{
	const char *merge[] = { "merge", "--ff-only", "--quiet", sha, NULL };
	int lock, err;

	if ((lock = svc_project_lock(dir)) < 0)
		return lock;
	err = git_local(dir, merge, NULL, 0);
	close(lock);
	return err;
}

int svc_gitio_pull(struct svc_db *db, const struct svc_config *cfg, const char *project_id,
		   struct svc_gitio_pull_result *out, char *why, size_t whymax)
{
	struct svc_gitio_remote rm;
	char dir[2048], rbranch[256] = "main", spec[400], gitwhy[1024], *token = NULL;
	const char *fetch[] = { "fetch", "--no-tags", "--quiet", "--", rm.url, spec, NULL };
	size_t token_len = 0;
	int err, status = 0, anc;

	memset(&rm, 0, sizeof rm);
	memset(out, 0, sizeof *out);
	why[0] = '\0';
	if ((err = remote_load(db, cfg, project_id, &rm, rbranch, sizeof rbranch, &token, &token_len, why, whymax)) < 0 ||
	    (err = svc_project_dir(cfg, project_id, dir, sizeof dir)) < 0 ||
	    (err = rev_parse(dir, "refs/heads/main", out->local)) < 0)
		goto done;
	snprintf(spec, sizeof spec, "+refs/heads/%s:refs/svc/mirror", rbranch);
	fetch[4] = rm.url;
	err = git_remote(cfg, &rm, dir, fetch, dir, cfg->import_max_mb * 1024 * 1024, gitwhy, sizeof gitwhy, &status);
	if (err == 0 && status != 0) {
		git_message(gitwhy, "git fetch failed", why, whymax);
		err = strstr(gitwhy, "couldn't find remote ref") ? SVC_E_NOT_FOUND : SVC_E_UNAVAILABLE;
	}
	if (err < 0 || (err = rev_parse(dir, "refs/svc/mirror", out->remote)) < 0)
		goto done;
	memcpy(out->head, out->local, 41);
	if (strcmp(out->local, out->remote) == 0 || (anc = is_ancestor(dir, out->remote, out->local)) == 1) {
		snprintf(out->result, sizeof out->result, "up-to-date");
		goto done;
	}
	if (anc < 0 || (anc = is_ancestor(dir, out->local, out->remote)) < 0) {
		err = anc;
		goto done;
	}
	if (anc == 0) {
		snprintf(why, whymax,
			 "main and the remote's %s have diverged: svc's main is at %.12s, the remote's %s at %.12s; "
			 "push svc's main to a new branch of the remote and merge there",
			 rbranch, out->local, rbranch, out->remote);
		err = SVC_E_CONFLICT;
		goto done;
	}
	if ((err = tree_check(dir, out->remote, cfg->import_max_mb * 1024 * 1024, why, whymax)) < 0 ||
	    (err = fast_forward(dir, out->remote)) < 0)
		goto done;
	memcpy(out->head, out->remote, 41);
	snprintf(out->result, sizeof out->result, "fast-forward");
	files_changed(db, cfg, project_id);
done:
	svc_crypto_free_secret(token, token_len);
	free((char *)rm.username);
	return err;
}
