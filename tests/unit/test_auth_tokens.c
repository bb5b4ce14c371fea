/* test_auth_tokens.c: CUnit suites auth_tokens (API token shape, hashes, scopes per route), auth_ratelimit (MariaDB and host counters) and auth_session (the per-process check cache). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auth/auth.h"
#include "core/config.h"
#include "db/db.h"
#include "core/err.h"
#include "auth/perm.h"
#include "unit.h"
#include "core/util.h"

static void test_auth_tokens_generate_shape_and_uniqueness(void)
{
	char a[SVC_PAT_LEN + 1], b[SVC_PAT_LEN + 1];

	CU_ASSERT_EQUAL_FATAL(svc_pat_generate(a), 0);
	CU_ASSERT_EQUAL_FATAL(svc_pat_generate(b), 0);
	CU_ASSERT_EQUAL(strlen(a), SVC_PAT_LEN);
	CU_ASSERT_EQUAL(strncmp(a, "svc_pat_", 8), 0);
	CU_ASSERT_EQUAL(svc_pat_well_formed(a), 1);
	CU_ASSERT_EQUAL(svc_pat_well_formed(b), 1);
	CU_ASSERT_NOT_EQUAL(strcmp(a, b), 0);
}

static void test_auth_tokens_well_formed_refuses_variants(void)
{
	char t[SVC_PAT_LEN + 2];

	CU_ASSERT_EQUAL_FATAL(svc_pat_generate(t), 0);
	t[SVC_PAT_LEN - 1] = '!';
	CU_ASSERT_EQUAL(svc_pat_well_formed(t), 0);
	CU_ASSERT_EQUAL_FATAL(svc_pat_generate(t), 0);
	t[SVC_PAT_LEN] = 'A';
	t[SVC_PAT_LEN + 1] = '\0';
	CU_ASSERT_EQUAL(svc_pat_well_formed(t), 0);   /* one too long */
	CU_ASSERT_EQUAL(svc_pat_well_formed("svc_pat_short"), 0);
	CU_ASSERT_EQUAL(svc_pat_well_formed("svc_pak_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"), 0);
	CU_ASSERT_EQUAL(svc_pat_well_formed("svc_pat_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"), 1);
	CU_ASSERT_EQUAL(svc_pat_well_formed("eyJhbGciOiJIUzI1NiJ9.e30.sig"), 0);
	CU_ASSERT_EQUAL(svc_pat_well_formed(""), 0);
	CU_ASSERT_EQUAL(svc_pat_well_formed(NULL), 0);
}

/* Tokens are stored as the hex SHA-256 of their text (svc_sha256_hex of lib/core, as svc_pat_authenticate looks them up). */
static void test_auth_tokens_sha256_hex_known_vectors(void)
{
	char out[SVC_SHA256_HEX_LEN + 1];

	/* FIPS 180-2 appendix B.1 and the empty string */
	CU_ASSERT_EQUAL(svc_sha256_hex("abc", strlen("abc"), out), 0);
	CU_ASSERT_STRING_EQUAL(out, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	CU_ASSERT_EQUAL(svc_sha256_hex("", 0, out), 0);
	CU_ASSERT_STRING_EQUAL(out, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

static void test_auth_tokens_scope_names_round_trip(void)
{
	char text[128];
	unsigned s;

	CU_ASSERT_EQUAL(svc_pat_scope_bit("projects:read"), SVC_PAT_PROJECTS_READ);
	CU_ASSERT_EQUAL(svc_pat_scope_bit("admin"), SVC_PAT_ADMIN);
	CU_ASSERT_EQUAL(svc_pat_scope_bit("Admin"), 0);
	CU_ASSERT_EQUAL(svc_pat_scope_bit("projects"), 0);
	CU_ASSERT_EQUAL(svc_pat_scope_bit(NULL), 0);
	CU_ASSERT_STRING_EQUAL(svc_pat_scope_name(SVC_PAT_DEPLOY), "deploy");
	CU_ASSERT_PTR_NULL(svc_pat_scope_name(3));
	CU_ASSERT_EQUAL(svc_pat_scopes_format(SVC_PAT_CHAT | SVC_PAT_PROJECTS_READ, text, sizeof text), 0);
	CU_ASSERT_STRING_EQUAL(text, "projects:read chat");
	s = svc_pat_scopes_parse("chat  projects:read unknown admin");
	CU_ASSERT_EQUAL(s, SVC_PAT_CHAT | SVC_PAT_PROJECTS_READ | SVC_PAT_ADMIN);
	CU_ASSERT_EQUAL(svc_pat_scopes_parse(""), 0);
	CU_ASSERT_EQUAL(svc_pat_scopes_parse(NULL), 0);
	CU_ASSERT_EQUAL(svc_pat_scopes_format(SVC_PAT_ALL, text, sizeof text), 0);
	CU_ASSERT_EQUAL(svc_pat_scopes_parse(text), SVC_PAT_ALL);
	CU_ASSERT_EQUAL(svc_pat_scopes_format(SVC_PAT_ALL, text, 10), SVC_E_INTERNAL);
}

/* route decision: 1 allowed, 0 refused; *perm gets the permission scopes */
static int route(unsigned scopes, int safe, const char *pattern, unsigned *perm)
{
	const char *needed = NULL;
	unsigned p = 0;
	int rc = svc_pat_route_scopes(scopes, safe, pattern, &p, &needed);

	CU_ASSERT_PTR_NOT_NULL(needed);
	if (perm)
		*perm = p;
	return rc == 0;
}

static void test_auth_tokens_route_scopes(void)
{
	unsigned p;

	/* reads */
	CU_ASSERT_EQUAL(route(SVC_PAT_PROJECTS_READ, 1, "/api/projects/:id", &p), 1);
	CU_ASSERT_EQUAL(p, SVC_SCOPE_READ);
	CU_ASSERT_EQUAL(route(SVC_PAT_PROJECTS_WRITE, 1, "/api/projects/:id", NULL), 0);
	CU_ASSERT_EQUAL(route(SVC_PAT_ADMIN, 1, "/api/projects", NULL), 1);
	/* writes */
	CU_ASSERT_EQUAL(route(SVC_PAT_PROJECTS_WRITE, 0, "/api/projects/:id", &p), 1);
	CU_ASSERT_EQUAL(p & SVC_SCOPE_WRITE, SVC_SCOPE_WRITE);
	/* a write loads what it changes first, so on a write route it also reads; GET routes still need projects:read */
	CU_ASSERT_EQUAL(p & SVC_SCOPE_READ, SVC_SCOPE_READ);
	CU_ASSERT_EQUAL(p & SVC_SCOPE_ADMIN, 0);
	CU_ASSERT_EQUAL(route(SVC_PAT_PROJECTS_READ, 0, "/api/projects/:id", NULL), 0);
	CU_ASSERT_EQUAL(route(SVC_PAT_PROJECTS_WRITE, 0, "/api/workspaces/:wid/projects", NULL), 1);
	CU_ASSERT_EQUAL(route(SVC_PAT_PROJECTS_WRITE, 0, "/api/workspaces/:wid/folders", NULL), 1);
	/* workspace management: admin only */
	CU_ASSERT_EQUAL(route(SVC_PAT_PROJECTS_WRITE, 0, "/api/workspaces/:wid", NULL), 0);
	CU_ASSERT_EQUAL(route(SVC_PAT_PROJECTS_WRITE, 0, "/api/workspaces/:wid/members/:userId", NULL), 0);
	CU_ASSERT_EQUAL(route(SVC_PAT_ADMIN, 0, "/api/workspaces/:wid/members", &p), 1);
	CU_ASSERT_EQUAL(p & SVC_SCOPE_ADMIN, SVC_SCOPE_ADMIN);
	CU_ASSERT_EQUAL(p & SVC_SCOPE_CHAT, 0);
	CU_ASSERT_EQUAL(route(SVC_PAT_PROJECTS_WRITE, 0, "/api/projects/:id", &p), 1);
	CU_ASSERT_EQUAL(p & SVC_SCOPE_ADMIN, 0);   /* a visibility change or hard delete needs admin */
	CU_ASSERT_EQUAL(route(SVC_PAT_PROJECTS_READ, 1, "/api/workspaces/:wid/members", NULL), 1);
	/* chat */
	CU_ASSERT_EQUAL(route(SVC_PAT_CHAT, 0, "/api/chat/:projectId/messages", &p), 1);
	CU_ASSERT_EQUAL(p & (SVC_SCOPE_CHAT | SVC_SCOPE_WRITE), SVC_SCOPE_CHAT | SVC_SCOPE_WRITE);
	CU_ASSERT_EQUAL(route(SVC_PAT_PROJECTS_WRITE, 0, "/api/chat/:projectId/messages", NULL), 0);
	CU_ASSERT_EQUAL(route(SVC_PAT_PROJECTS_READ, 1, "/api/chat/:projectId/messages", NULL), 1);
	CU_ASSERT_EQUAL(route(SVC_PAT_PROJECTS_READ, 0, "/api/plan/:projectId", NULL), 0);
	/* chat does not open other writes */
	CU_ASSERT_EQUAL(route(SVC_PAT_CHAT, 0, "/api/projects/:id", NULL), 0);
	/* deploy */
	CU_ASSERT_EQUAL(route(SVC_PAT_DEPLOY, 0, "/api/deploy/:projectId", &p), 1);
	CU_ASSERT_EQUAL(p & SVC_SCOPE_DEPLOY, SVC_SCOPE_DEPLOY);
	CU_ASSERT_EQUAL(route(SVC_PAT_PROJECTS_WRITE, 0, "/api/deploy/:projectId", NULL), 0);
	CU_ASSERT_EQUAL(route(SVC_PAT_DEPLOY, 0, "/api/projects/:id/domains", NULL), 1);
	/* admin areas */
	CU_ASSERT_EQUAL(route(SVC_PAT_ALL & ~SVC_PAT_ADMIN, 1, "/api/admin/users", NULL), 0);
	CU_ASSERT_EQUAL(route(SVC_PAT_ADMIN, 0, "/api/integrations/:id", NULL), 1);
	/* admin reads (issue 25 item 8): xray, the workspace's AI provider and credits need "admin", not "projects:read" */
	CU_ASSERT_EQUAL(route(SVC_PAT_ALL & ~SVC_PAT_ADMIN, 1, "/api/xray/stats", NULL), 0);
	CU_ASSERT_EQUAL(route(SVC_PAT_PROJECTS_READ, 1, "/api/xray/history", NULL), 0);
	CU_ASSERT_EQUAL(route(SVC_PAT_ADMIN, 1, "/api/xray/stats", &p), 1);
	CU_ASSERT_EQUAL(p & SVC_SCOPE_ADMIN, SVC_SCOPE_ADMIN);
	CU_ASSERT_EQUAL(route(SVC_PAT_PROJECTS_READ, 1, "/api/workspaces/:wid/ai-provider", NULL), 0);
	CU_ASSERT_EQUAL(route(SVC_PAT_ADMIN, 1, "/api/workspaces/:wid/ai-provider", NULL), 1);
	CU_ASSERT_EQUAL(route(SVC_PAT_PROJECTS_READ, 1, "/api/workspaces/:wid/credits", NULL), 0);
	CU_ASSERT_EQUAL(route(SVC_PAT_ADMIN, 1, "/api/workspaces/:wid/credits", NULL), 1);
	CU_ASSERT_EQUAL(route(SVC_PAT_PROJECTS_READ, 1, "/api/integrations/admin/audit", NULL), 0);
	CU_ASSERT_EQUAL(route(SVC_PAT_PROJECTS_READ, 1, "/api/integrations", NULL), 0);
	/* the workspace's other reads stay "projects:read" */
	CU_ASSERT_EQUAL(route(SVC_PAT_PROJECTS_READ, 1, "/api/workspaces/:wid/build-settings", NULL), 1);
	CU_ASSERT_EQUAL(route(SVC_PAT_PROJECTS_READ, 1, "/api/workspaces/:wid", NULL), 1);
	/* credentials need a session, whatever the scopes */
	CU_ASSERT_EQUAL(route(SVC_PAT_ALL, 1, "/api/auth/me", NULL), 1);
	CU_ASSERT_EQUAL(route(SVC_PAT_ALL, 1, "/api/auth/tokens", NULL), 0);
	CU_ASSERT_EQUAL(route(SVC_PAT_ALL, 0, "/api/auth/tokens", NULL), 0);
	CU_ASSERT_EQUAL(route(SVC_PAT_ALL, 0, "/api/auth/me", NULL), 0);
	CU_ASSERT_EQUAL(route(SVC_PAT_ALL, 1, "/api/auth/github/assistant", NULL), 0);
	/* no scopes: nothing */
	CU_ASSERT_EQUAL(route(0, 1, "/api/projects", NULL), 0);
}

/* ---- auth_ratelimit: needs the test stack's MariaDB (SVC_CONFIG) ---- */

static struct svc_db *open_db(struct svc_config *cfg)
{
	struct svc_db *db = NULL;
	char errbuf[256];

	if (!getenv("SVC_CONFIG") && !getenv("SVC_DB_SOCKET")) {
		CU_ASSERT_PTR_NULL(getenv("SVC_TEST_REQUIRE_DB"));
		printf("\n  (no SVC_CONFIG / SVC_DB_SOCKET: the rate-limit tests need svc-dev test's MariaDB)\n");
		return NULL;
	}
	if (svc_config_load(cfg, errbuf, sizeof errbuf) < 0 || svc_db_open(cfg, &db) < 0) {
		CU_FAIL("no database");
		return NULL;
	}
	return db;
}

static void test_auth_ratelimit_counts_refuses_and_rolls_over(void)
{
	struct svc_config cfg;
	struct svc_db *db = open_db(&cfg);
	struct svc_rate_rule r = { 3, 60 };
	char key[40];
	int64_t now = 1900000000 - 1900000000 % 60 + 20, retry = 0;   /* 20 s into a minute window */
	int i;

	if (!db)
		return;
	CU_ASSERT_EQUAL_FATAL(svc_random_hex(key, 8), 0);
	for (i = 0; i < 3; i++)
		CU_ASSERT_EQUAL(svc_ratelimit_hit(db, "unit", key, &r, now + i, &retry), 0);
	CU_ASSERT_EQUAL(svc_ratelimit_check(db, "unit", key, &r, now + 3, &retry), SVC_E_RATE_LIMITED);
	CU_ASSERT_EQUAL(retry, 37);   /* 60 - 23 */
	retry = 0;
	CU_ASSERT_EQUAL(svc_ratelimit_hit(db, "unit", key, &r, now + 10, &retry), SVC_E_RATE_LIMITED);
	CU_ASSERT_EQUAL(retry, 30);
	/* other keys and other rules are separate buckets */
	CU_ASSERT_EQUAL(svc_ratelimit_hit(db, "unit", "other-key", &r, now, &retry) == SVC_E_RATE_LIMITED, 0);
	CU_ASSERT_EQUAL(svc_ratelimit_check(db, "unit2", key, &r, now, &retry), 0);
	/* the next window starts from zero */
	CU_ASSERT_EQUAL(svc_ratelimit_check(db, "unit", key, &r, now + 40, &retry), 0);
	CU_ASSERT_EQUAL(svc_ratelimit_hit(db, "unit", key, &r, now + 40, &retry), 0);
	/* clear forgets the bucket */
	CU_ASSERT_EQUAL(svc_ratelimit_hit(db, "unit", key, &r, now + 41, &retry), 0);
	CU_ASSERT_EQUAL(svc_ratelimit_hit(db, "unit", key, &r, now + 42, &retry), 0);
	CU_ASSERT_EQUAL(svc_ratelimit_check(db, "unit", key, &r, now + 43, &retry), SVC_E_RATE_LIMITED);
	CU_ASSERT_EQUAL(svc_ratelimit_clear(db, "unit", key), 0);
	CU_ASSERT_EQUAL(svc_ratelimit_check(db, "unit", key, &r, now + 43, &retry), 0);
	svc_db_close(db);
	svc_config_dispose(&cfg);
}

static void test_auth_ratelimit_limit_zero_is_off(void)
{
	struct svc_rate_rule off = { 0, 60 };
	int64_t retry = 0;
	int i;

	/* never touches the database: a NULL handle is fine */
	for (i = 0; i < 100; i++)
		CU_ASSERT_EQUAL(svc_ratelimit_hit(NULL, "unit", "k", &off, 1900000000, &retry), 0);
	CU_ASSERT_EQUAL(svc_ratelimit_check(NULL, "unit", "k", &off, 1900000000, &retry), 0);
}

/* The host's count (svc_ratelimit_hit_host) refuses at the same hit as MariaDB's, and sends its hits at most once a second. */
static void test_auth_ratelimit_host_same_thresholds(void)
{
	struct svc_config cfg;
	struct svc_db *db = open_db(&cfg);
	struct svc_rate_rule r = { 3, 60 }, two = { 2, 60 }, five = { 5, 60 };
	char key[40];
	int64_t now_ms = (1900000000 - 1900000000 % 60 + 20) * 1000LL, retry = 0;
	int i;

	if (!db)
		return;
	CU_ASSERT_EQUAL_FATAL(svc_shm_attach(&cfg), 0);
	CU_ASSERT_EQUAL_FATAL(svc_random_hex(key, 8), 0);
	for (i = 0; i < 3; i++)
		CU_ASSERT_EQUAL(svc_ratelimit_hit_host(db, "unit", key, &r, now_ms + i * 100, &retry), 0);
	CU_ASSERT_EQUAL(svc_ratelimit_hit_host(db, "unit", key, &r, now_ms + 300, &retry), SVC_E_RATE_LIMITED);
	CU_ASSERT_EQUAL(retry, 40);
	/* MariaDB got the window's first hit at once and the others not yet */
	CU_ASSERT_EQUAL(svc_ratelimit_check(db, "unit", key, &two, now_ms / 1000, &retry), 0);
	/* a second later the host's hits go to MariaDB */
	CU_ASSERT_EQUAL(svc_ratelimit_hit_host(db, "unit", key, &r, now_ms + 1300, &retry), SVC_E_RATE_LIMITED);
	CU_ASSERT_EQUAL(svc_ratelimit_check(db, "unit", key, &five, now_ms / 1000 + 1, &retry), SVC_E_RATE_LIMITED);
	/* the next window starts from zero */
	CU_ASSERT_EQUAL(svc_ratelimit_hit_host(db, "unit", key, &r, now_ms + 40000, &retry), 0);
	svc_shm_detach();
	svc_db_close(db);
	svc_config_dispose(&cfg);
}

/* The other hosts' hits, read from MariaDB when this host sends its own, count toward the limit. */
static void test_auth_ratelimit_host_adds_other_hosts(void)
{
	struct svc_config cfg;
	struct svc_db *db = open_db(&cfg);
	struct svc_rate_rule r = { 5, 60 };
	char key[40];
	int64_t now_ms = (1900000000 - 1900000000 % 60 + 20) * 1000LL, retry = 0;
	int i;

	if (!db)
		return;
	CU_ASSERT_EQUAL_FATAL(svc_shm_attach(&cfg), 0);
	CU_ASSERT_EQUAL_FATAL(svc_random_hex(key, 8), 0);
	for (i = 0; i < 3; i++) /* another host (one without shared memory counts in MariaDB alone) */
		CU_ASSERT_EQUAL(svc_ratelimit_hit(db, "unit", key, &r, now_ms / 1000, &retry), 0);
	CU_ASSERT_EQUAL(svc_ratelimit_hit_host(db, "unit", key, &r, now_ms, &retry), 0);        /* 1 + 3 */
	CU_ASSERT_EQUAL(svc_ratelimit_hit_host(db, "unit", key, &r, now_ms + 100, &retry), 0);  /* 2 + 3 */
	CU_ASSERT_EQUAL(svc_ratelimit_hit_host(db, "unit", key, &r, now_ms + 200, &retry), SVC_E_RATE_LIMITED);
	/* without a segment it is svc_ratelimit_hit(): MariaDB has 3 + the first hit here (the next two wait
	 * for the next second), so 5 passes and 6 does not */
	svc_shm_detach();
	CU_ASSERT_EQUAL(svc_ratelimit_hit_host(db, "unit", key, &r, now_ms + 300, &retry), 0);
	CU_ASSERT_EQUAL(svc_ratelimit_hit_host(db, "unit", key, &r, now_ms + 400, &retry), SVC_E_RATE_LIMITED);
	svc_db_close(db);
	svc_config_dispose(&cfg);
}

/* Fills every slot of `cache` with a check of `c` that passed at monotonic `at_ms`. */
static void cache_fill(struct svc_session_cache *cache, const struct svc_auth_claims *c, int64_t at_ms)
{
	size_t i;

	for (i = 0; i < SVC_SESSION_CACHE_SLOTS; i++) {
		memcpy(cache->e[i].family, c->family, sizeof c->family);
		memcpy(cache->e[i].user_id, c->user_id, sizeof c->user_id);
		cache->e[i].gen = c->gen;
		cache->e[i].checked_ms = at_ms;
		cache->e[i].epoch = svc_shm_epoch();
	}
}

/* A check that passed answers for less than SVC_SESSION_CACHE_MS, never past a revocation on this host or for other claims. */
static void test_auth_session_cache_bound_and_epoch(void)
{
	struct svc_config cfg;
	struct svc_db *db = open_db(&cfg);
	struct svc_session_cache cache;
	struct svc_auth_claims c, other;
	unsigned char id[16];

	if (!db)
		return;
	CU_ASSERT_EQUAL_FATAL(svc_shm_attach(&cfg), 0);
	memset(&c, 0, sizeof c);
	CU_ASSERT_EQUAL_FATAL(svc_random(id, sizeof id), 0);
	svc_uuid_format(id, c.user_id); /* no such user: the database refuses it */
	CU_ASSERT_EQUAL_FATAL(svc_random_hex(c.family, SVC_AUTH_ID_LEN / 2), 0);
	cache_fill(&cache, &c, 10000);
	/* remembered: no database (a NULL handle) */
	CU_ASSERT_EQUAL(svc_session_check_cached(NULL, &cache, &c, 10000 + SVC_SESSION_CACHE_MS - 1), 0);
	/* at the bound the database decides, and a refusal is not remembered */
	CU_ASSERT_EQUAL(svc_session_check_cached(db, &cache, &c, 10000 + SVC_SESSION_CACHE_MS), SVC_E_UNAUTHORIZED);
	CU_ASSERT_EQUAL(svc_session_check_cached(db, &cache, &c, 10100), SVC_E_UNAUTHORIZED);
	/* a revocation on this host (a logout, a password change) drops what every process remembers */
	cache_fill(&cache, &c, 10000);
	svc_shm_epoch_bump();
	CU_ASSERT_EQUAL(svc_session_check_cached(db, &cache, &c, 10100), SVC_E_UNAUTHORIZED);
	/* other claims (another generation, another session) are not the remembered check */
	cache_fill(&cache, &c, 10000);
	other = c;
	other.gen = 1;
	CU_ASSERT_EQUAL(svc_session_check_cached(db, &cache, &other, 10100), SVC_E_UNAUTHORIZED);
	cache_fill(&cache, &c, 10000);
	other = c;
	other.family[0] = other.family[0] == 'a' ? 'b' : 'a';
	CU_ASSERT_EQUAL(svc_session_check_cached(db, &cache, &other, 10100), SVC_E_UNAUTHORIZED);
	/* a monotonic clock does not go back, but an entry from "later" is not trusted either */
	cache_fill(&cache, &c, 10000);
	CU_ASSERT_EQUAL(svc_session_check_cached(db, &cache, &c, 9000), SVC_E_UNAUTHORIZED);
	svc_shm_detach();
	svc_db_close(db);
	svc_config_dispose(&cfg);
}

SVC_TEST_SUITE(auth_tokens)
{
	CU_pSuite s = CU_add_suite("auth_tokens", NULL, NULL);

	CU_add_test(s, "generate_shape_and_uniqueness", test_auth_tokens_generate_shape_and_uniqueness);
	CU_add_test(s, "well_formed_refuses_variants", test_auth_tokens_well_formed_refuses_variants);
	CU_add_test(s, "sha256_hex_known_vectors", test_auth_tokens_sha256_hex_known_vectors);
	CU_add_test(s, "scope_names_round_trip", test_auth_tokens_scope_names_round_trip);
	CU_add_test(s, "route_scopes", test_auth_tokens_route_scopes);
}

SVC_TEST_SUITE(auth_ratelimit)
{
	CU_pSuite s = CU_add_suite("auth_ratelimit", NULL, NULL);

	CU_add_test(s, "counts_refuses_and_rolls_over", test_auth_ratelimit_counts_refuses_and_rolls_over);
	CU_add_test(s, "limit_zero_is_off", test_auth_ratelimit_limit_zero_is_off);
	CU_add_test(s, "host_same_thresholds", test_auth_ratelimit_host_same_thresholds);
	CU_add_test(s, "host_adds_other_hosts", test_auth_ratelimit_host_adds_other_hosts);
}

SVC_TEST_SUITE(auth_session)
{
	CU_pSuite s = CU_add_suite("auth_session", NULL, NULL);

	CU_add_test(s, "cache_bound_and_epoch", test_auth_session_cache_bound_and_epoch);
}
