/* auth_tokens.c: per-user API tokens "svc_pat_...": generation, SHA-256 storage form, scopes, lookup. */
#include <string.h>

#include <openssl/crypto.h>

#include "auth/auth.h"
#include "db/db.h"
#include "core/err.h"
#include "auth/perm.h"
#include "core/util.h"

#define PAT_RANDOM_BYTES 30   /* 240 bits, 40 base64url characters */

static const char b64url[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

static const struct {
	unsigned bit;
	const char *name;
} scope_names[] = {
	{ SVC_PAT_PROJECTS_READ, "projects:read" },
	{ SVC_PAT_PROJECTS_WRITE, "projects:write" },
	{ SVC_PAT_CHAT, "chat" },
	{ SVC_PAT_DEPLOY, "deploy" },
	{ SVC_PAT_ADMIN, "admin" },
	{ SVC_PAT_GIT_READ, "git:read" },
	{ SVC_PAT_GIT_WRITE, "git:write" },
};

int svc_pat_generate(char *out)
{
	unsigned char rnd[PAT_RANDOM_BYTES];
	size_t i, o = sizeof(SVC_PAT_PREFIX) - 1;

	_Static_assert(sizeof(SVC_PAT_PREFIX) - 1 + PAT_RANDOM_BYTES / 3 * 4 == SVC_PAT_LEN, "token length");
	if (svc_random(rnd, sizeof rnd) < 0)
		return SVC_E_INTERNAL;
	memcpy(out, SVC_PAT_PREFIX, o);
	for (i = 0; i < PAT_RANDOM_BYTES; i += 3) {
		unsigned v = (unsigned)rnd[i] << 16 | (unsigned)rnd[i + 1] << 8 | rnd[i + 2];
		out[o++] = b64url[(v >> 18) & 63];
		out[o++] = b64url[(v >> 12) & 63];
		out[o++] = b64url[(v >> 6) & 63];
		out[o++] = b64url[v & 63];
	}
	out[o] = '\0';
	OPENSSL_cleanse(rnd, sizeof rnd);
	return 0;
}

int svc_pat_well_formed(const char *token)
{
	size_t i, plen = sizeof(SVC_PAT_PREFIX) - 1;

	if (!token || strncmp(token, SVC_PAT_PREFIX, plen) != 0)
		return 0;
	for (i = plen; i < SVC_PAT_LEN; i++)
		if (!token[i] || !strchr(b64url, token[i]))
			return 0;
	return token[SVC_PAT_LEN] == '\0';
}

unsigned svc_pat_scope_bit(const char *name)
{
	size_t i;

	for (i = 0; name && i < sizeof scope_names / sizeof scope_names[0]; i++)
		if (strcmp(scope_names[i].name, name) == 0)
			return scope_names[i].bit;
	return 0;
}

const char *svc_pat_scope_name(unsigned bit)
{
	size_t i;

	for (i = 0; i < sizeof scope_names / sizeof scope_names[0]; i++)
		if (scope_names[i].bit == bit)
			return scope_names[i].name;
	return NULL;
}

unsigned svc_pat_scopes_parse(const char *text)
{
	unsigned scopes = 0;
	const char *p = text;

	while (p && *p) {
		char word[32];
		const char *e;

		while (*p == ' ')
			p++;
		e = p;
		while (*e && *e != ' ')
			e++;
		if (e > p && (size_t)(e - p) < sizeof word) {
			memcpy(word, p, (size_t)(e - p));
			word[e - p] = '\0';
			scopes |= svc_pat_scope_bit(word);
		}
		p = e;
	}
	return scopes;
}

int svc_pat_scopes_format(unsigned scopes, char *out, size_t max)
{
	size_t i, o = 0;

	if (max == 0)
		return SVC_E_INTERNAL;
	out[0] = '\0';
	for (i = 0; i < sizeof scope_names / sizeof scope_names[0]; i++) {
		size_t n;

		if (!(scopes & scope_names[i].bit))
			continue;
		n = strlen(scope_names[i].name);
		if (o + (o ? 1 : 0) + n + 1 > max)
			return SVC_E_INTERNAL;
		if (o)
			out[o++] = ' ';
		memcpy(out + o, scope_names[i].name, n + 1);
		o += n;
	}
	return 0;
}

static int starts(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

/*
 * The routes only the "admin" scope opens, whatever the method: the admin and
 * integration endpoints, xray, and the workspace settings only admins read
 * (its AI provider, its credits). A pattern ending in '/' is a prefix; the
 * others match exactly. Issue 25 item 8: these reads were "projects:read".
 */
static const char *const admin_routes[] = {
	"/api/admin/",
	"/api/integrations/",
	"/api/integrations",
	"/api/xray/",
	"/api/workspaces/:wid/ai-provider",
	"/api/workspaces/:wid/credits",
};

/* Returns 1 when `pattern` is one of admin_routes, else 0. */
static int admin_route(const char *pattern)
{
	size_t i, n;

	for (i = 0; i < sizeof admin_routes / sizeof admin_routes[0]; i++) {
		n = strlen(admin_routes[i]);
		if (admin_routes[i][n - 1] == '/' ? starts(pattern, admin_routes[i]) : strcmp(pattern, admin_routes[i]) == 0)
			return 1;
	}
	return 0;
}

/* The permission-module scopes of a token's own scopes, on any route. */
static unsigned perm_scopes(unsigned scopes)
{
	unsigned p = 0;

	if (scopes & SVC_PAT_PROJECTS_READ)
		p |= SVC_SCOPE_READ;
	if (scopes & SVC_PAT_PROJECTS_WRITE)
		p |= SVC_SCOPE_WRITE;
	if (scopes & SVC_PAT_ADMIN)
		p |= SVC_SCOPE_ADMIN | SVC_SCOPE_READ | SVC_SCOPE_WRITE;   /* admin also reads and writes */
	if (scopes & SVC_PAT_CHAT)
		p |= SVC_SCOPE_CHAT;
	if (scopes & SVC_PAT_DEPLOY)
		p |= SVC_SCOPE_DEPLOY;
	return p;
}

int svc_pat_route_scopes(unsigned scopes, int safe_method, const char *pattern, unsigned *out_perm_scopes,
			 const char **out_needed)
{
	unsigned p = perm_scopes(scopes);

	*out_needed = NULL;
	if (!pattern)
		pattern = "";
	if (starts(pattern, "/api/auth/")) {
		if (safe_method && strcmp(pattern, "/api/auth/me") == 0) {
			*out_needed = "any scope";
			*out_perm_scopes = p;
			return 0;
		}
		*out_needed = "a session (sign in; API tokens cannot manage credentials)";
		return SVC_E_FORBIDDEN;
	}
	if (starts(pattern, "/api/git/")) {
		/* smart HTTP (svc-git): a fetch reads, a push (git-receive-pack) changes the project */
		*out_needed = safe_method ? "git:read" : "git:write";
		if (scopes & SVC_PAT_GIT_WRITE) {
			*out_perm_scopes = SVC_SCOPE_READ | SVC_SCOPE_WRITE;
			return 0;
		}
		if (safe_method && (scopes & SVC_PAT_GIT_READ)) {
			*out_perm_scopes = SVC_SCOPE_READ;
			return 0;
		}
		return SVC_E_FORBIDDEN;
	}
	if (starts(pattern, "/api/chat/") || starts(pattern, "/api/plan/")) {
		*out_needed = "chat";
		if (scopes & SVC_PAT_CHAT) {
			/* chat handlers load the project for SVC_ACT_WRITE today: the chat scope covers that here */
			*out_perm_scopes = p | SVC_SCOPE_READ | SVC_SCOPE_WRITE;
			return 0;
		}
		if (safe_method && (scopes & SVC_PAT_PROJECTS_READ)) {
			*out_perm_scopes = p;
			return 0;
		}
		return SVC_E_FORBIDDEN;
	}
	if (starts(pattern, "/api/deploy/") || strstr(pattern, "/domains") || strstr(pattern, "/deployments")) {
		*out_needed = "deploy";
		if (scopes & SVC_PAT_DEPLOY) {
			*out_perm_scopes = p | SVC_SCOPE_READ | SVC_SCOPE_WRITE;
			return 0;
		}
		if (safe_method && (scopes & SVC_PAT_PROJECTS_READ)) {
			*out_perm_scopes = p;
			return 0;
		}
		return SVC_E_FORBIDDEN;
	}
	if (admin_route(pattern)) {
		*out_needed = "admin";
		if (scopes & SVC_PAT_ADMIN) {
			*out_perm_scopes = p;
			return 0;
		}
		return SVC_E_FORBIDDEN;
	}
	if (!safe_method && starts(pattern, "/api/workspaces") && !strstr(pattern, "/projects") &&
	    !strstr(pattern, "/folders")) {
		/* creating, renaming, leaving, transferring workspaces; members; the workspace's provider */
		*out_needed = "admin";
		if (scopes & SVC_PAT_ADMIN) {
			*out_perm_scopes = p;
			return 0;
		}
		return SVC_E_FORBIDDEN;
	}
	if (safe_method) {
		*out_needed = "projects:read";
		if (scopes & (SVC_PAT_PROJECTS_READ | SVC_PAT_ADMIN)) {
			*out_perm_scopes = p | SVC_SCOPE_READ;
			return 0;
		}
		return SVC_E_FORBIDDEN;
	}
	*out_needed = "projects:write";
	if (scopes & (SVC_PAT_PROJECTS_WRITE | SVC_PAT_ADMIN)) {
		/* a write loads what it changes (the project, its workspace) first: that read comes with it */
		*out_perm_scopes = p | SVC_SCOPE_READ;
		return 0;
	}
	return SVC_E_FORBIDDEN;
}

int svc_pat_authenticate(struct svc_db *db, const char *token, char *out_user_id, char *out_token_id,
			 unsigned *out_scopes)
{
	char hash[65];
	struct svc_dbv p;
	struct svc_rows *rows = NULL;
	const char *uid, *tid;
	int err;

	if (!svc_pat_well_formed(token))
		return SVC_E_UNAUTHORIZED;
	if ((err = svc_sha256_hex(token, strlen(token), hash)) < 0)
		return err;
	p = svc_dbv_str(hash);
	if ((err = svc_db_run(db, STMT_TOKEN_BY_HASH, &p, 1, &rows, NULL)) < 0)
		return err;
	if (!rows || rows->nrows != 1) {
		svc_rows_free(rows);
		return SVC_E_UNAUTHORIZED;
	}
	tid = svc_rows_get(rows, 0, THCOL_ID);
	uid = svc_rows_get(rows, 0, THCOL_USER);
	if (!tid || !uid || !svc_uuid_valid(tid) || !svc_uuid_valid(uid)) {
		svc_rows_free(rows);
		return SVC_E_UNAUTHORIZED;
	}
	memcpy(out_user_id, uid, 37);
	memcpy(out_token_id, tid, 37);
	*out_scopes = svc_pat_scopes_parse(svc_rows_get(rows, 0, THCOL_SCOPES));
	svc_rows_free(rows);
	p = svc_dbv_str(out_token_id);
	svc_db_run(db, STMT_TOKEN_TOUCH, &p, 1, NULL, NULL);   /* best effort: lastUsedAt */
	return 0;
}
