/* test_deps.c: unit tests of lib/project/deps.c: the key, the store's atomic publish, leases and eviction, the shared npm cache's seed and its merge refusing content whose hash is not its name. */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <CUnit/CUnit.h>
#include <openssl/evp.h>

#include "core/err.h"
#include "core/fsx.h"
#include "core/util.h"
#include "project/deps.h"
#include "unit.h"

/* A fresh directory under /tmp for one test; the caller removes it. */
static void scratch(char *out, size_t max, const char *what)
{
	char rnd[9];

	CU_ASSERT_EQUAL(svc_random_hex(rnd, 4), 0);
	snprintf(out, max, "/tmp/svc-test-deps-%s-%s", what, rnd);
	CU_ASSERT_EQUAL(mkdir(out, 0755), 0);
}

static void put(const char *root, const char *rel, const char *text)
{
	CU_ASSERT_EQUAL(svc_fsx_write(root, rel, text, strlen(text)), 0);
}

static void mkdirs(const char *base, const char *rel)
{
	char path[1024], *p;

	snprintf(path, sizeof path, "%s/%s", base, rel);
	for (p = path + strlen(base) + 1; *p; p++)
		if (*p == '/') {
			*p = '\0';
			mkdir(path, 0755);
			*p = '/';
		}
	mkdir(path, 0755);
}

static void test_deps_key(void)
{
	struct svc_deps_key_in in = { "v20.20.2", "11.19.1", "Linux x86_64", 0, "w1", "{\"a\":1}", 7, "{}", 2 };
	char base[SVC_DEPS_KEY_HEX + 1], k[SVC_DEPS_KEY_HEX + 1], again[SVC_DEPS_KEY_HEX + 1];
	struct svc_deps_key_in v;

	CU_ASSERT_EQUAL(svc_deps_key(&in, base), 0);
	CU_ASSERT_EQUAL(strlen(base), SVC_DEPS_KEY_HEX);
	CU_ASSERT_EQUAL(svc_deps_key(&in, again), 0);
	CU_ASSERT_STRING_EQUAL(base, again); /* the same inputs, the same key */
	/* every input is part of it */
	v = in, v.node_version = "v22.0.0";
	CU_ASSERT_EQUAL(svc_deps_key(&v, k), 0);
	CU_ASSERT_STRING_NOT_EQUAL(k, base);
	v = in, v.npm_version = "11.19.2";
	CU_ASSERT_EQUAL(svc_deps_key(&v, k), 0);
	CU_ASSERT_STRING_NOT_EQUAL(k, base);
	v = in, v.platform = "Linux aarch64";
	CU_ASSERT_EQUAL(svc_deps_key(&v, k), 0);
	CU_ASSERT_STRING_NOT_EQUAL(k, base);
	v = in, v.package_json = "{\"a\":2}";
	CU_ASSERT_EQUAL(svc_deps_key(&v, k), 0);
	CU_ASSERT_STRING_NOT_EQUAL(k, base);
	v = in, v.lock = "{ }", v.lock_len = 3;
	CU_ASSERT_EQUAL(svc_deps_key(&v, k), 0);
	CU_ASSERT_STRING_NOT_EQUAL(k, base);
	v = in, v.lock = NULL, v.lock_len = 0;
	CU_ASSERT_EQUAL(svc_deps_key(&v, k), 0);
	CU_ASSERT_STRING_NOT_EQUAL(k, base);
	/* without install scripts the workspace does not matter: the install is shared */
	v = in, v.workspace_id = "w2";
	CU_ASSERT_EQUAL(svc_deps_key(&v, k), 0);
	CU_ASSERT_STRING_EQUAL(k, base);
	/* with them it is never another workspace's, nor a scriptless install's */
	v = in, v.scripts = 1;
	CU_ASSERT_EQUAL(svc_deps_key(&v, again), 0);
	CU_ASSERT_STRING_NOT_EQUAL(again, base);
	v.workspace_id = "w2";
	CU_ASSERT_EQUAL(svc_deps_key(&v, k), 0);
	CU_ASSERT_STRING_NOT_EQUAL(k, again);
	CU_ASSERT_STRING_NOT_EQUAL(k, base);
}

static void test_deps_host(void)
{
	char node[32], npm[32], platform[64];

	if (access("/usr/bin/npm", X_OK) != 0) {
		fprintf(stderr, "test_deps_host: no /usr/bin/npm; not checked\n");
		return;
	}
	CU_ASSERT_EQUAL(svc_deps_host("/usr/bin/npm", node, npm, platform), 0);
	CU_ASSERT_EQUAL(node[0], 'v');
	CU_ASSERT(strchr(npm, '.') != NULL);
	CU_ASSERT(strstr(platform, "Linux") == platform);
	CU_ASSERT_EQUAL(svc_deps_host("/nonexistent/npm", node, npm, platform), SVC_E_INTERNAL);
}

/* A finished install's tree at base/name: package.json, a file of node_modules, a bin symlink. */
static void make_tree(const char *base, const char *name, const char *version, char *out, size_t max)
{
	char nm[1024];

	snprintf(out, max, "%s/%s", base, name);
	mkdirs(base, name);
	put(out, "package.json", version);
	snprintf(nm, sizeof nm, "%s/node_modules/react", out);
	mkdirs(out, "node_modules/react");
	mkdirs(out, "node_modules/.bin");
	put(nm, "index.js", version);
	snprintf(nm, sizeof nm, "%s/node_modules/.bin/react", out);
	CU_ASSERT_EQUAL(symlink("../react/index.js", nm), 0);
}

static void test_deps_store_publish(void)
{
	char base[256], modules[512], tree[1024], tree2[1024], entry[1024], path[1200], buf[64];
	const char *key = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
	struct stat st;
	char *text = NULL;
	size_t len;
	ssize_t n;

	scratch(base, sizeof base, "publish");
	snprintf(modules, sizeof modules, "%s/modules", base);
	mkdir(modules, 0711);
	make_tree(base, "t1", "first", tree, sizeof tree);
	CU_ASSERT_EQUAL(svc_deps_store_publish(modules, tree, key), 0);
	/* one rename: the tree is gone, the entry whole */
	CU_ASSERT(lstat(tree, &st) < 0);
	snprintf(entry, sizeof entry, "%s/%s", modules, key);
	CU_ASSERT_EQUAL(svc_fsx_read(entry, "node_modules/react/index.js", 64, &text, &len), 0);
	CU_ASSERT(text && strcmp(text, "first") == 0);
	free(text);
	text = NULL;
	/* read-only: no write bit anywhere, nothing for other accounts, root's and the store's group when run as
	 * root; the symlink kept */
	CU_ASSERT(lstat(entry, &st) == 0 && (st.st_mode & 0222) == 0);
	snprintf(path, sizeof path, "%s/node_modules/react", entry);
	CU_ASSERT(lstat(path, &st) == 0 && (st.st_mode & 0777) == 0550);
	snprintf(path, sizeof path, "%s/node_modules/react/index.js", entry);
	CU_ASSERT(lstat(path, &st) == 0 && (st.st_mode & 0777) == 0440);
	if (geteuid() == 0) {
		struct stat mst;
		CU_ASSERT(st.st_uid == 0 && stat(modules, &mst) == 0 && st.st_gid == mst.st_gid);
	}
	snprintf(path, sizeof path, "%s/node_modules/.bin/react", entry);
	n = readlink(path, buf, sizeof buf - 1);
	CU_ASSERT(n > 0 && (buf[n] = '\0', strcmp(buf, "../react/index.js") == 0));
	/* its size is recorded for eviction */
	CU_ASSERT_EQUAL(svc_fsx_read(entry, ".svc-bytes", 64, &text, &len), 0);
	{
		uint64_t bytes = 0;
		CU_ASSERT(text && (text[strcspn(text, "\n")] = '\0', svc_parse_u64(text, UINT64_MAX, &bytes)) == 0 && bytes > 0);
	}
	free(text);
	text = NULL;
	/* a second install of the same key loses the race: the first stays, the second is removed */
	make_tree(base, "t2", "second", tree2, sizeof tree2);
	CU_ASSERT_EQUAL(svc_deps_store_publish(modules, tree2, key), 1);
	CU_ASSERT(lstat(tree2, &st) < 0);
	CU_ASSERT_EQUAL(svc_fsx_read(entry, "node_modules/react/index.js", 64, &text, &len), 0);
	CU_ASSERT(text && strcmp(text, "first") == 0);
	free(text);
	chmod(entry, 0755);
	snprintf(path, sizeof path, "%s/node_modules", entry);
	chmod(path, 0755);
	snprintf(path, sizeof path, "%s/node_modules/react", entry);
	chmod(path, 0755);
	snprintf(path, sizeof path, "%s/node_modules/.bin", entry);
	chmod(path, 0755);
	CU_ASSERT_EQUAL(svc_fsx_remove_tree(base), 0);
}

static void test_deps_store_evict(void)
{
	static const char *const keys[4] = {
		"1111111111111111111111111111111111111111111111111111111111111111",
		"2222222222222222222222222222222222222222222222222222222222222222",
		"3333333333333333333333333333333333333333333333333333333333333333",
		"4444444444444444444444444444444444444444444444444444444444444444",
	};
	char base[256], modules[512], locks[512], tree[1024], entry[1024];
	struct svc_deps_lease lease;
	struct stat st;
	uint64_t one = 0;
	int i, r;

	scratch(base, sizeof base, "evict");
	snprintf(modules, sizeof modules, "%s/modules", base);
	snprintf(locks, sizeof locks, "%s/locks", base);
	mkdir(modules, 0711);
	mkdir(locks, 0700);
	for (i = 0; i < 4; i++) {
		struct timespec t[2] = { { 1000000 + i * 1000, 0 }, { 1000000 + i * 1000, 0 } };
		char name[16];
		snprintf(name, sizeof name, "t%d", i);
		make_tree(base, name, keys[i], tree, sizeof tree);
		CU_ASSERT_EQUAL(svc_deps_store_publish(modules, tree, keys[i]), 0);
		snprintf(entry, sizeof entry, "%s/%s", modules, keys[i]);
		CU_ASSERT_EQUAL(utimensat(AT_FDCWD, entry, t, 0), 0); /* 0 used longest ago, 3 last */
	}
	/* the size of one entry */
	{
		char *text = NULL;
		size_t len;
		snprintf(entry, sizeof entry, "%s/%s", modules, keys[0]);
		CU_ASSERT_EQUAL(svc_fsx_read(entry, ".svc-bytes", 64, &text, &len), 0);
		if (text) {
			text[strcspn(text, "\n")] = '\0';
			CU_ASSERT_EQUAL(svc_parse_u64(text, UINT64_MAX, &one), 0);
		}
		free(text);
	}
	CU_ASSERT(one > 0);
	/* entry 0 is in use by a build: a lease marks it used now, so hand-age it again */
	CU_ASSERT_EQUAL(svc_deps_store_lease(modules, locks, keys[0], &lease), 1);
	CU_ASSERT(lease.fd >= 0);
	CU_ASSERT(strstr(lease.modules, keys[0]) && strstr(lease.modules, "/node_modules"));
	{
		struct timespec t[2] = { { 1000000, 0 }, { 1000000, 0 } };
		CU_ASSERT_EQUAL(utimensat(AT_FDCWD, lease.entry, t, 0), 0);
	}
	{
		struct svc_deps_lease none;
		CU_ASSERT_EQUAL(svc_deps_store_lease(modules, locks,
						     "5555555555555555555555555555555555555555555555555555555555555555", &none), 0);
	}
	/* room for two: 0 is leased, 3 is kept (the one just made), so 1 and 2 go, oldest first */
	r = svc_deps_store_evict(modules, locks, one * 2, keys[3]);
	CU_ASSERT_EQUAL(r, 2);
	for (i = 0; i < 4; i++) {
		snprintf(entry, sizeof entry, "%s/%s", modules, keys[i]);
		CU_ASSERT_EQUAL(lstat(entry, &st) == 0, i == 0 || i == 3);
	}
	/* released, 0 may go too */
	svc_deps_release(&lease);
	CU_ASSERT_EQUAL(lease.fd, -1);
	CU_ASSERT_EQUAL(svc_deps_store_evict(modules, locks, one, keys[3]), 1);
	snprintf(entry, sizeof entry, "%s/%s", modules, keys[0]);
	CU_ASSERT(lstat(entry, &st) < 0);
	/* under the bound nothing goes */
	CU_ASSERT_EQUAL(svc_deps_store_evict(modules, locks, one * 10, NULL), 0);
	/* eviction never takes a leased entry, even past the bound */
	CU_ASSERT_EQUAL(svc_deps_store_lease(modules, locks, keys[3], &lease), 1);
	CU_ASSERT_EQUAL(svc_deps_store_evict(modules, locks, 0, NULL), 0);
	svc_deps_release(&lease);
	CU_ASSERT_EQUAL(svc_deps_store_evict(modules, locks, 0, NULL), 1);
	CU_ASSERT_EQUAL(svc_fsx_remove_tree(base), 0);
}

/* Writes `text` into the cacache `root` at the content path of its own sha512 (or of `as`, when given). */
static void put_content(const char *root, const char *text, const char *as, char *out_hex)
{
	unsigned char md[64];
	unsigned mdlen = 0;
	char hex[129], dir[1024], rel[200];

	EVP_Digest(text, strlen(text), md, &mdlen, EVP_sha512(), NULL);
	svc_hex_encode(md, 64, hex);
	if (as)
		snprintf(hex, sizeof hex, "%s", as);
	snprintf(rel, sizeof rel, "content-v2/sha512/%.2s/%.2s", hex, hex + 2);
	mkdirs(root, rel);
	snprintf(dir, sizeof dir, "%s/%s", root, rel);
	snprintf(rel, sizeof rel, "%s", hex + 4);
	put(dir, rel, text);
	if (out_hex)
		snprintf(out_hex, 129, "%s", hex);
}

static int has_content(const char *root, const char *hex, struct stat *st)
{
	char path[1200];

	snprintf(path, sizeof path, "%s/content-v2/sha512/%.2s/%.2s/%s", root, hex, hex + 2, hex + 4);
	return lstat(path, st) == 0;
}

static void test_deps_cache_merge(void)
{
	char base[256], shared[512], priv[512], good[129], bad[129], old[129], seeded[512];
	const char *liar = "0000000000000000000000000000000000000000000000000000000000000000"
			   "0000000000000000000000000000000000000000000000000000000000000000";
	unsigned added = 9, refused = 9;
	struct stat st, st2;

	scratch(base, sizeof base, "merge");
	snprintf(shared, sizeof shared, "%s/shared", base);
	snprintf(priv, sizeof priv, "%s/priv", base);
	snprintf(seeded, sizeof seeded, "%s/seeded", base);
	mkdir(shared, 0700);
	mkdir(priv, 0755);
	put_content(shared, "already shared", NULL, old);
	{
		char path[1200]; /* as a merge leaves it */
		snprintf(path, sizeof path, "%s/content-v2/sha512/%.2s/%.2s/%s", shared, old, old + 2, old + 4);
		CU_ASSERT_EQUAL(chmod(path, 0440), 0);
	}
	/* the private cache: a new tarball, one whose name is not its hash (a poisoned file), an index entry */
	put_content(priv, "a new tarball", NULL, good);
	put_content(priv, "evil bytes", liar, bad);
	mkdirs(priv, "index-v5/ab/cd");
	{
		char idx[600];
		snprintf(idx, sizeof idx, "%s/index-v5/ab/cd", priv);
		put(idx, "packument", "{\"key\":\"make-fetch-happen:request-cache:https://registry.npmjs.org/react\"}");
	}
	CU_ASSERT_EQUAL(svc_deps_cache_merge(priv, shared, &added, &refused), 0);
	CU_ASSERT_EQUAL(added, 1);
	CU_ASSERT_EQUAL(refused, 1);
	CU_ASSERT(has_content(shared, good, &st));
	CU_ASSERT((st.st_mode & 0777) == 0440);
	if (geteuid() == 0) {
		struct stat sst;
		CU_ASSERT(st.st_uid == 0 && stat(shared, &sst) == 0 && st.st_gid == sst.st_gid); /* shared's group */
	}
	/* a copy, never the private inode the sandbox's user could still write */
	CU_ASSERT(has_content(priv, good, &st2) && st2.st_ino != st.st_ino);
	CU_ASSERT(!has_content(shared, bad, &st));
	{
		char idx[600];
		snprintf(idx, sizeof idx, "%s/index-v5", shared);
		CU_ASSERT(lstat(idx, &st) < 0); /* index entries are never merged */
	}
	/* merging again adds nothing: it is all there */
	CU_ASSERT_EQUAL(svc_deps_cache_merge(priv, shared, &added, &refused), 0);
	CU_ASSERT_EQUAL(added, 0);
	/* a seed hands out hardlinks of the shared files: the same inodes, still read-only */
	CU_ASSERT_EQUAL(svc_deps_cache_seed(shared, seeded, geteuid() == 0 ? 65534 : 0), 0);
	CU_ASSERT(has_content(seeded, old, &st) && has_content(shared, old, &st2));
	CU_ASSERT_EQUAL(st.st_ino, st2.st_ino);
	CU_ASSERT(st.st_uid == st2.st_uid && (st.st_mode & 0222) == 0);
	CU_ASSERT(has_content(seeded, good, &st));
	if (geteuid() == 0) {
		char dir[700];
		snprintf(dir, sizeof dir, "%s/content-v2/sha512/%.2s", seeded, old);
		CU_ASSERT(lstat(dir, &st) == 0 && st.st_uid == 65534); /* the install writes its own directories */
	}
	/* the seed's files are not new: merging the seeded cache back adds nothing */
	CU_ASSERT_EQUAL(svc_deps_cache_merge(seeded, shared, &added, &refused), 0);
	CU_ASSERT_EQUAL(added, 0);
	/* bounded: past the bound the oldest go first */
	{
		struct timespec t[2] = { { 1000, 0 }, { 1000, 0 } };
		char path[1200];
		snprintf(path, sizeof path, "%s/content-v2/sha512/%.2s/%.2s/%s", shared, old, old + 2, old + 4);
		CU_ASSERT_EQUAL(utimensat(AT_FDCWD, path, t, AT_SYMLINK_NOFOLLOW), 0);
	}
	CU_ASSERT_EQUAL(svc_deps_cache_evict(shared, 1 << 30), 0);
	CU_ASSERT_EQUAL(svc_deps_cache_evict(shared, 4096 + 1024), 1);
	CU_ASSERT(!has_content(shared, old, &st));
	CU_ASSERT(has_content(shared, good, &st));
	CU_ASSERT_EQUAL(svc_fsx_remove_tree(base), 0);
}

/* ---- svc_deps_prepare() with a runner that does what npm would ---- */

struct fake {
	int calls, ci, filled;
	char cache_content[129]; /* the hex of what the "install" put into its private cache */
};

static int fake_run(void *arg, const struct svc_deps_step *s, char *why, size_t why_max)
{
	struct fake *f = arg;
	char *lock = NULL, dir[1200];
	size_t len;
	(void)why;
	(void)why_max;

	if (s->kind != SVC_DEPS_STEP_INSTALL || !s->cache)
		return SVC_E_INTERNAL;
	f->calls++;
	f->ci = s->ci;
	if (s->ci && svc_fsx_read(s->root, "package-lock.json", 1 << 20, &lock, &len) == 0)
		f->filled = strstr(lock, "https://registry.npmjs.org/a/-/a-1.0.0.tgz") != NULL;
	free(lock);
	mkdirs(s->root, "node_modules/a");
	snprintf(dir, sizeof dir, "%s/node_modules/a", s->root);
	put(dir, "index.js", "module.exports = 1;\n");
	if (!s->ci)
		put(s->root, "package-lock.json", "{\"name\":\"p\",\"lockfileVersion\":3,\"packages\":{\"\":{}}}\n");
	snprintf(dir, sizeof dir, "%s/_cacache", s->cache);
	put_content(dir, "fetched by this install", NULL, f->cache_content);
	return 0;
}

static void test_deps_prepare(void)
{
	char base[256], data[512], tree[512], tree2[512], tree3[512], lock[1024], integrity[128], hexd[129], shared[700];
	struct svc_deps_opts d = { NULL, "/usr/bin/npm", 64, 64, 65534, 8, "https://registry.npmjs.org/", 1, 0, "w1", NULL, NULL };
	struct svc_deps_lease l1, l2, l3, l4;
	struct fake f = { 0 };
	unsigned char md[64];
	unsigned mdlen = 0;
	char why[256], *text = NULL;
	struct stat st;
	size_t len;

	if (geteuid() != 0 || access("/usr/bin/npm", X_OK) != 0) {
		fprintf(stderr, "test_deps_prepare: not root or no npm; not checked\n");
		return;
	}
	scratch(base, sizeof base, "prepare");
	snprintf(data, sizeof data, "%s/data", base);
	mkdir(data, 0711);
	d.data_dir = data;
	/* the shared cache already holds the tarball the lockfile names (without "resolved") */
	snprintf(shared, sizeof shared, "%s/npm/cache/_cacache", data);
	mkdirs(data, "npm/cache/_cacache");
	put_content(shared, "the tarball of a", NULL, hexd);
	EVP_Digest("the tarball of a", 16, md, &mdlen, EVP_sha512(), NULL);
	snprintf(integrity, sizeof integrity, "sha512-");
	EVP_EncodeBlock((unsigned char *)integrity + 7, md, 64);
	snprintf(lock, sizeof lock, "{\"name\":\"p\",\"lockfileVersion\":3,\"packages\":{\"\":{\"dependencies\":{\"a\":\"1.0.0\"}},"
		 "\"node_modules/a\":{\"version\":\"1.0.0\",\"integrity\":\"%s\"}}}\n", integrity);
	snprintf(tree, sizeof tree, "%s/t1", base);
	mkdir(tree, 0755);
	put(tree, "package.json", "{\"name\":\"p\",\"dependencies\":{\"a\":\"1.0.0\"}}\n");
	put(tree, "package-lock.json", lock);
	/* a miss: installed once, with "resolved" filled in from the cache, stored, leased */
	CU_ASSERT_EQUAL(svc_deps_prepare(&d, tree, fake_run, &f, NULL, NULL, &l1, why, sizeof why), 0);
	CU_ASSERT_EQUAL(f.calls, 1);
	CU_ASSERT(f.ci && f.filled);
	CU_ASSERT(!l1.reused && !l1.lock_made && l1.fd >= 0 && l1.modules[0]);
	CU_ASSERT(lstat(l1.modules, &st) == 0 && (st.st_mode & 0222) == 0);
	CU_ASSERT_EQUAL(svc_fsx_read(l1.entry, "package-lock.json", 1 << 20, &text, &len), 0);
	CU_ASSERT(text && strcmp(text, lock) == 0); /* the entry keeps the project's lockfile, not the filled copy */
	free(text);
	text = NULL;
	CU_ASSERT(has_content(shared, f.cache_content, &st)); /* what the install fetched is shared */
	/* the same package.json and lockfile again: nothing runs */
	CU_ASSERT_EQUAL(svc_deps_prepare(&d, tree, fake_run, &f, NULL, NULL, &l2, why, sizeof why), 0);
	CU_ASSERT_EQUAL(f.calls, 1);
	CU_ASSERT(l2.reused && strcmp(l2.key, l1.key) == 0 && strcmp(l2.modules, l1.modules) == 0);
	/* no lockfile: the install writes one, the entry is stored under the key with it */
	snprintf(tree2, sizeof tree2, "%s/t2", base);
	mkdir(tree2, 0755);
	put(tree2, "package.json", "{\"name\":\"q\"}\n");
	CU_ASSERT_EQUAL(svc_deps_prepare(&d, tree2, fake_run, &f, NULL, NULL, &l3, why, sizeof why), 0);
	CU_ASSERT_EQUAL(f.calls, 2);
	CU_ASSERT(!f.ci && l3.lock_made && l3.installed[0]);
	CU_ASSERT_EQUAL(svc_fsx_read(l3.installed, "package-lock.json", 1 << 20, &text, &len), 0);
	CU_ASSERT(lstat(tree2, &st) == 0);
	/* once the project has that lockfile, its build reuses the entry */
	snprintf(tree3, sizeof tree3, "%s/t3", base);
	mkdir(tree3, 0755);
	put(tree3, "package.json", "{\"name\":\"q\"}\n");
	if (text)
		put(tree3, "package-lock.json", text);
	free(text);
	CU_ASSERT_EQUAL(svc_deps_prepare(&d, tree3, fake_run, &f, NULL, NULL, &l4, why, sizeof why), 0);
	CU_ASSERT_EQUAL(f.calls, 2);
	CU_ASSERT(l4.reused && strcmp(l4.key, l3.key) == 0);
	svc_deps_release(&l1);
	svc_deps_release(&l2);
	svc_deps_release(&l3);
	svc_deps_release(&l4);
	CU_ASSERT_EQUAL(l1.fd, -1);
	CU_ASSERT_EQUAL(svc_fsx_remove_tree(base), 0); /* root: the sealed entries too */
}

/* ---- two builds that need one missing entry at once ---- */

struct race {
	const struct svc_deps_opts *d;
	char tree[512];
	struct svc_deps_lease lease;
	int err;
};

static pthread_mutex_t race_mu = PTHREAD_MUTEX_INITIALIZER;
static int race_calls;

/* An install that takes a while (as npm does), so a second build asks while it runs. */
static int slow_run(void *arg, const struct svc_deps_step *s, char *why, size_t why_max)
{
	struct fake *f = arg;
	int err;

	pthread_mutex_lock(&race_mu);
	race_calls++;
	pthread_mutex_unlock(&race_mu);
	usleep(600 * 1000);
	pthread_mutex_lock(&race_mu);
	err = fake_run(f, s, why, why_max);
	pthread_mutex_unlock(&race_mu);
	return err;
}

static void *race_one(void *arg)
{
	struct race *r = arg;
	struct fake f = { 0 };
	char why[256];

	r->err = svc_deps_prepare(r->d, r->tree, slow_run, &f, NULL, NULL, &r->lease, why, sizeof why);
	return NULL;
}

/*
 * Two build trees of one package.json and lockfile (the package named `name`) in a scratch directory `tag`
 * (`base`, `data`: 256 and 512 bytes of the caller's, d->data_dir set to data), both builds with `d`. Returns 0
 * when the test cannot run here (not root, no npm: says so for `test`), else 1.
 */
static int race_setup(const char *test, const char *tag, const char *name, struct svc_deps_opts *d, char *base,
		      char *data, struct race r[2])
{
	char pkg[128], lock[256];
	int i;

	if (geteuid() != 0 || access("/usr/bin/npm", X_OK) != 0) {
		fprintf(stderr, "%s: not root or no npm; not checked\n", test);
		return 0;
	}
	snprintf(pkg, sizeof pkg, "{\"name\":\"%s\"}\n", name);
	snprintf(lock, sizeof lock, "{\"name\":\"%s\",\"lockfileVersion\":3,\"packages\":{\"\":{}}}\n", name);
	scratch(base, 256, tag);
	snprintf(data, 512, "%s/data", base);
	mkdir(data, 0711);
	d->data_dir = data;
	race_calls = 0;
	for (i = 0; i < 2; i++) {
		memset(&r[i], 0, sizeof r[i]);
		r[i].d = d;
		snprintf(r[i].tree, sizeof r[i].tree, "%s/t%d", base, i);
		mkdir(r[i].tree, 0755);
		put(r[i].tree, "package.json", pkg);
		put(r[i].tree, "package-lock.json", lock);
	}
	return 1;
}

/* Two builds of the same package.json and lockfile at once: one installs, the other waits and reuses its tree. */
static void test_deps_prepare_racing_installs_install_once(void)
{
	struct svc_deps_opts d = { NULL, "/usr/bin/npm", 64, 64, 65534, 8, "https://registry.npmjs.org/", 1, 0, "w1", NULL, NULL };
	struct race r[2];
	pthread_t t[2];
	char base[256], data[512];
	int i;

	if (!race_setup(__func__, "race", "r", &d, base, data, r))
		return;
	for (i = 0; i < 2; i++)
		CU_ASSERT_EQUAL_FATAL(pthread_create(&t[i], NULL, race_one, &r[i]), 0);
	for (i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	CU_ASSERT(r[0].err == 0 && r[1].err == 0);
	CU_ASSERT_EQUAL(race_calls, 1);
	CU_ASSERT_EQUAL(r[0].lease.reused + r[1].lease.reused, 1);
	CU_ASSERT(r[0].lease.modules[0] && strcmp(r[0].lease.modules, r[1].lease.modules) == 0);
	CU_ASSERT(strcmp(r[0].lease.key, r[1].lease.key) == 0);
	for (i = 0; i < 2; i++)
		svc_deps_release(&r[i].lease);
	CU_ASSERT_EQUAL(svc_fsx_remove_tree(base), 0);
}

/* The cancel of a build that waits for another's install: asks are counted; it says stop from the first. */
static int asked_to_stop;

static int stop_now(void *arg)
{
	(void)arg;
	asked_to_stop++;
	return 1;
}

static int64_t later_took_ms;

/* race_one() once the other build installs (holding the install's lock), timed. */
static void *race_later(void *arg)
{
	struct race *r = arg;
	int64_t t0;

	while (__atomic_load_n(&race_calls, __ATOMIC_SEQ_CST) == 0)
		usleep(10 * 1000);
	t0 = svc_mono_ms();
	race_one(r);
	later_took_ms = svc_mono_ms() - t0;
	return NULL;
}

/* A build that may be stopped (a turn's check) ends its wait for another build's install when asked, not after it. */
static void test_deps_prepare_a_stopped_wait_ends_at_once(void)
{
	struct svc_deps_opts d = { NULL, "/usr/bin/npm", 64, 64, 65534, 8, "https://registry.npmjs.org/", 1, 0, "w1", NULL, NULL };
	struct svc_deps_opts stoppable;
	struct race r[2];
	pthread_t t[2];
	char base[256], data[512];
	int i;

	if (!race_setup(__func__, "stopwait", "s", &d, base, data, r))
		return;
	stoppable = d;
	stoppable.cancel = stop_now;
	r[1].d = &stoppable;
	asked_to_stop = 0;
	CU_ASSERT_EQUAL_FATAL(pthread_create(&t[0], NULL, race_one, &r[0]), 0);
	CU_ASSERT_EQUAL_FATAL(pthread_create(&t[1], NULL, race_later, &r[1]), 0); /* once the first installs */
	pthread_join(t[1], NULL);
	CU_ASSERT(later_took_ms < 550); /* before the first's install (600 ms) ended */
	pthread_join(t[0], NULL);
	CU_ASSERT_EQUAL(r[0].err, 0);
	CU_ASSERT_EQUAL(r[1].err, SVC_E_CANCELLED);
	CU_ASSERT_EQUAL(asked_to_stop, 1);
	CU_ASSERT_EQUAL(race_calls, 1);
	for (i = 0; i < 2; i++)
		svc_deps_release(&r[i].lease);
	CU_ASSERT_EQUAL(svc_fsx_remove_tree(base), 0);
}

SVC_TEST_SUITE(deps_suite)
{
	CU_pSuite s = CU_add_suite("deps", NULL, NULL);

	CU_add_test(s, "test_deps_key", test_deps_key);
	CU_add_test(s, "test_deps_host", test_deps_host);
	CU_add_test(s, "test_deps_store_publish", test_deps_store_publish);
	CU_add_test(s, "test_deps_store_evict", test_deps_store_evict);
	CU_add_test(s, "test_deps_cache_merge", test_deps_cache_merge);
	CU_add_test(s, "test_deps_prepare", test_deps_prepare);
	CU_add_test(s, "test_deps_prepare_racing_installs_install_once", test_deps_prepare_racing_installs_install_once);
	CU_add_test(s, "test_deps_prepare_a_stopped_wait_ends_at_once", test_deps_prepare_a_stopped_wait_ends_at_once);
}
