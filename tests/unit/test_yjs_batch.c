/* test_yjs_batch.c: CUnit suite for lib/yjs remote batches (several remote updates as one transaction). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "unit.h"
#include "yjs/yjs.h"

/* A client document with files/<key> = text, and the update that made it. */
static struct svc_yjs_doc *client(uint64_t id, const char *key, const char *text, struct svc_yjs_buf *u)
{
	struct svc_yjs_doc *d = NULL;

	CU_ASSERT_FATAL(svc_yjs_doc_new(&d, id) == 0);
	CU_ASSERT_FATAL(svc_yjs_map_set_text(d, "files", key, strlen(key), text, strlen(text), u, NULL) == 0);
	return d;
}

static int same_state(struct svc_yjs_doc *a, struct svc_yjs_doc *b)
{
	struct svc_yjs_buf x = { 0 }, y = { 0 };
	int same;

	svc_yjs_encode_state(a, NULL, 0, &x, NULL);
	svc_yjs_encode_state(b, NULL, 0, &y, NULL);
	same = x.len == y.len && memcmp(x.data, y.data, x.len) == 0;
	svc_yjs_buf_dispose(&x);
	svc_yjs_buf_dispose(&y);
	return same;
}

static int text_is(struct svc_yjs_doc *d, const char *key, const char *want)
{
	struct svc_yjs_buf t = { 0 };
	int ok = svc_yjs_text_read(d, "files", key, strlen(key), &t) == 0 && t.len == strlen(want) &&
		 (t.len == 0 || memcmp(t.data, want, t.len) == 0);

	svc_yjs_buf_dispose(&t);
	return ok;
}

/* Three clients' updates in one batch: one committed update that brings a replica to the same state. */
static void test_yjs_batch_commit_equals_individual_updates(void)
{
	struct svc_yjs_buf u[3] = { { 0 } }, out = { 0 };
	struct svc_yjs_doc *c[3], *server = NULL, *single = NULL, *replica = NULL;
	struct svc_yjs_report rep = { 0 };
	const char *keys[3] = { "a.txt", "b.txt", "c.txt" };
	int i, changed = -1;

	for (i = 0; i < 3; i++)
		c[i] = client(100 + (uint64_t)i, keys[i], "héllo 😀 world", &u[i]);
	CU_ASSERT_FATAL(svc_yjs_doc_new(&server, 1) == 0);
	CU_ASSERT_FATAL(svc_yjs_doc_new(&single, 2) == 0);
	CU_ASSERT_FATAL(svc_yjs_doc_new(&replica, 3) == 0);
	CU_ASSERT(svc_yjs_batch_open(server) == 0);
	CU_ASSERT_FATAL(svc_yjs_batch_begin(server) == 0);
	CU_ASSERT(svc_yjs_batch_open(server) == 1);
	for (i = 0; i < 3; i++) {
		CU_ASSERT(svc_yjs_batch_apply(server, u[i].data, u[i].len, &changed, NULL) == 0);
		CU_ASSERT(changed == 1);
		CU_ASSERT(svc_yjs_apply_update(single, u[i].data, u[i].len, NULL, NULL, NULL) == 0);
	}
	/* readers see the batch's content before the commit */
	CU_ASSERT(text_is(server, "b.txt", "héllo 😀 world"));
	CU_ASSERT(svc_yjs_batch_commit(server, &out, &rep) == 0);
	CU_ASSERT(svc_yjs_batch_open(server) == 0);
	CU_ASSERT(out.len > 0);
	CU_ASSERT(rep.n == 3);
	CU_ASSERT(same_state(server, single));
	CU_ASSERT(svc_yjs_apply_update(replica, out.data, out.len, NULL, NULL, NULL) == 0);
	CU_ASSERT(same_state(replica, single));
	CU_ASSERT(text_is(replica, "c.txt", "héllo 😀 world"));
	for (i = 0; i < 3; i++) {
		svc_yjs_buf_dispose(&u[i]);
		svc_yjs_doc_free(c[i]);
	}
	svc_yjs_buf_dispose(&out);
	svc_yjs_report_dispose(&rep);
	svc_yjs_doc_free(server);
	svc_yjs_doc_free(single);
	svc_yjs_doc_free(replica);
}

/* The committed update holds the batch's deletes and only what the batch added. */
static void test_yjs_batch_carries_deletes_and_only_new_content(void)
{
	struct svc_yjs_buf u0 = { 0 }, u1 = { 0 }, u2 = { 0 }, out = { 0 };
	struct svc_yjs_doc *a, *server = NULL, *replica = NULL;
	int changed = -1;

	a = client(7, "f.txt", "0123456789", &u0);
	CU_ASSERT_FATAL(svc_yjs_doc_new(&server, 1) == 0);
	CU_ASSERT_FATAL(svc_yjs_doc_new(&replica, 2) == 0);
	CU_ASSERT(svc_yjs_apply_update(server, u0.data, u0.len, NULL, NULL, NULL) == 0);
	CU_ASSERT(svc_yjs_apply_update(replica, u0.data, u0.len, NULL, NULL, NULL) == 0);
	CU_ASSERT(svc_yjs_text_delete(a, "files", "f.txt", 5, 2, 3, &u1, NULL) == 0);
	CU_ASSERT(svc_yjs_text_insert(a, "files", "f.txt", 5, 0, "X", 1, &u2, NULL) == 0);
	CU_ASSERT_FATAL(svc_yjs_batch_begin(server) == 0);
	CU_ASSERT(svc_yjs_batch_apply(server, u1.data, u1.len, &changed, NULL) == 0);
	CU_ASSERT(changed == 1);
	/* an update the server already has changes nothing */
	CU_ASSERT(svc_yjs_batch_apply(server, u0.data, u0.len, &changed, NULL) == 0);
	CU_ASSERT(changed == 0);
	CU_ASSERT(svc_yjs_batch_apply(server, u2.data, u2.len, &changed, NULL) == 0);
	CU_ASSERT(changed == 1);
	CU_ASSERT(svc_yjs_batch_commit(server, &out, NULL) == 0);
	/* smaller than the full state: the 10-character insert is not in it */
	CU_ASSERT(out.len < u0.len + u2.len);
	CU_ASSERT(svc_yjs_apply_update(replica, out.data, out.len, NULL, NULL, NULL) == 0);
	CU_ASSERT(text_is(replica, "f.txt", "X0156789"));
	CU_ASSERT(text_is(server, "f.txt", "X0156789"));
	CU_ASSERT(same_state(server, a));
	svc_yjs_buf_dispose(&u0);
	svc_yjs_buf_dispose(&u1);
	svc_yjs_buf_dispose(&u2);
	svc_yjs_buf_dispose(&out);
	svc_yjs_doc_free(a);
	svc_yjs_doc_free(server);
	svc_yjs_doc_free(replica);
}

/* A malformed update is refused inside a batch without changing anything; the batch goes on. */
static void test_yjs_batch_malformed_update_changes_nothing(void)
{
	struct svc_yjs_buf u = { 0 }, before = { 0 }, after = { 0 }, out = { 0 };
	struct svc_yjs_doc *a, *server = NULL;
	static const uint8_t junk[] = { 0x05, 0x01, 0xff, 0xff, 0xff };
	size_t off = 0;
	int changed = -1;

	a = client(9, "g.txt", "abc", &u);
	CU_ASSERT_FATAL(svc_yjs_doc_new(&server, 1) == 0);
	CU_ASSERT_FATAL(svc_yjs_batch_begin(server) == 0);
	svc_yjs_encode_state(server, NULL, 0, &before, NULL);
	CU_ASSERT(svc_yjs_batch_apply(server, junk, sizeof junk, &changed, &off) == SVC_E_VALIDATION);
	CU_ASSERT(changed == -1);
	svc_yjs_encode_state(server, NULL, 0, &after, NULL);
	CU_ASSERT(before.len == after.len && memcmp(before.data, after.data, before.len) == 0);
	CU_ASSERT(svc_yjs_batch_apply(server, u.data, u.len, &changed, NULL) == 0);
	CU_ASSERT(changed == 1);
	CU_ASSERT(svc_yjs_batch_commit(server, &out, NULL) == 0);
	CU_ASSERT(text_is(server, "g.txt", "abc"));
	svc_yjs_buf_dispose(&u);
	svc_yjs_buf_dispose(&before);
	svc_yjs_buf_dispose(&after);
	svc_yjs_buf_dispose(&out);
	svc_yjs_doc_free(a);
	svc_yjs_doc_free(server);
}

/* An update whose dependency comes later in the same batch waits as pending, then integrates. */
static void test_yjs_batch_pending_until_dependency(void)
{
	struct svc_yjs_buf u0 = { 0 }, u1 = { 0 }, out = { 0 };
	struct svc_yjs_doc *a, *server = NULL, *replica = NULL;
	int changed = -1;

	a = client(11, "h.txt", "base", &u0);
	CU_ASSERT(svc_yjs_text_insert(a, "files", "h.txt", 5, 4, "+more", 5, &u1, NULL) == 0);
	CU_ASSERT_FATAL(svc_yjs_doc_new(&server, 1) == 0);
	CU_ASSERT_FATAL(svc_yjs_doc_new(&replica, 2) == 0);
	CU_ASSERT_FATAL(svc_yjs_batch_begin(server) == 0);
	CU_ASSERT(svc_yjs_batch_apply(server, u1.data, u1.len, &changed, NULL) == 0);
	CU_ASSERT(changed == 0);
	CU_ASSERT(svc_yjs_has_pending(server) == 1);
	CU_ASSERT(svc_yjs_batch_apply(server, u0.data, u0.len, &changed, NULL) == 0);
	CU_ASSERT(changed == 1);
	CU_ASSERT(svc_yjs_has_pending(server) == 0);
	CU_ASSERT(svc_yjs_batch_commit(server, &out, NULL) == 0);
	CU_ASSERT(svc_yjs_apply_update(replica, out.data, out.len, NULL, NULL, NULL) == 0);
	CU_ASSERT(text_is(replica, "h.txt", "base+more"));
	svc_yjs_buf_dispose(&u0);
	svc_yjs_buf_dispose(&u1);
	svc_yjs_buf_dispose(&out);
	svc_yjs_doc_free(a);
	svc_yjs_doc_free(server);
	svc_yjs_doc_free(replica);
}

/* While a batch is open, local edits and other transactions are refused; misuse is SVC_E_CONFLICT. */
static void test_yjs_batch_refuses_local_edits_and_misuse(void)
{
	struct svc_yjs_buf u = { 0 }, out = { 0 };
	struct svc_yjs_doc *a, *server = NULL;

	a = client(13, "k.txt", "abc", &u);
	CU_ASSERT_FATAL(svc_yjs_doc_new(&server, 1) == 0);
	CU_ASSERT(svc_yjs_batch_commit(server, &out, NULL) == SVC_E_CONFLICT);
	CU_ASSERT(svc_yjs_batch_apply(server, u.data, u.len, NULL, NULL) == SVC_E_CONFLICT);
	CU_ASSERT_FATAL(svc_yjs_batch_begin(server) == 0);
	CU_ASSERT(svc_yjs_batch_begin(server) == SVC_E_CONFLICT);
	CU_ASSERT(svc_yjs_batch_apply(server, u.data, u.len, NULL, NULL) == 0);
	CU_ASSERT(svc_yjs_apply_update(server, u.data, u.len, NULL, NULL, NULL) == SVC_E_CONFLICT);
	CU_ASSERT(svc_yjs_txn_begin(server) == SVC_E_CONFLICT);
	CU_ASSERT(svc_yjs_txn_commit(server, NULL, NULL) == SVC_E_CONFLICT);
	CU_ASSERT(svc_yjs_text_insert(server, "files", "k.txt", 5, 0, "x", 1, NULL, NULL) == SVC_E_CONFLICT);
	CU_ASSERT(svc_yjs_text_delete(server, "files", "k.txt", 5, 0, 1, NULL, NULL) == SVC_E_CONFLICT);
	CU_ASSERT(svc_yjs_text_replace(server, "files", "k.txt", 5, "xyz", 3, NULL, NULL) == SVC_E_CONFLICT);
	CU_ASSERT(svc_yjs_map_set_text(server, "files", "n.txt", 5, "x", 1, NULL, NULL) == SVC_E_CONFLICT);
	CU_ASSERT(svc_yjs_map_set_json(server, "meta", "k", 1, "1", 1, NULL, NULL) == SVC_E_CONFLICT);
	CU_ASSERT(svc_yjs_map_delete(server, "files", "k.txt", 5, NULL, NULL) == SVC_E_CONFLICT);
	CU_ASSERT(svc_yjs_batch_commit(server, &out, NULL) == 0);
	CU_ASSERT(text_is(server, "k.txt", "abc"));
	/* after the commit local edits work again */
	CU_ASSERT(svc_yjs_text_insert(server, "files", "k.txt", 5, 3, "d", 1, NULL, NULL) == 0);
	CU_ASSERT(text_is(server, "k.txt", "abcd"));
	/* and an explicit local transaction cannot be ended as a batch */
	CU_ASSERT(svc_yjs_txn_begin(server) == 0);
	CU_ASSERT(svc_yjs_batch_commit(server, NULL, NULL) == SVC_E_CONFLICT);
	CU_ASSERT(svc_yjs_txn_commit(server, NULL, NULL) == 0);
	svc_yjs_buf_dispose(&u);
	svc_yjs_buf_dispose(&out);
	svc_yjs_doc_free(a);
	svc_yjs_doc_free(server);
}

/* An update listing more clients than the batch's small on-stack table (10 here) is handled too. */
static void test_yjs_batch_update_of_many_clients(void)
{
	struct svc_yjs_buf u[10] = { { 0 } }, merged = { 0 }, out = { 0 };
	const uint8_t *ups[10];
	size_t lens[10], bad = 0;
	struct svc_yjs_doc *c[10], *server = NULL, *replica = NULL;
	char key[32];
	int i, changed = -1;

	for (i = 0; i < 10; i++) {
		snprintf(key, sizeof key, "m%d.txt", i);
		c[i] = client(200 + (uint64_t)i, key, "many", &u[i]);
		ups[i] = u[i].data;
		lens[i] = u[i].len;
	}
	CU_ASSERT_FATAL(svc_yjs_merge_updates(ups, lens, 10, &merged, &bad, NULL) == 0);
	CU_ASSERT_FATAL(svc_yjs_doc_new(&server, 1) == 0);
	CU_ASSERT_FATAL(svc_yjs_doc_new(&replica, 2) == 0);
	CU_ASSERT_FATAL(svc_yjs_batch_begin(server) == 0);
	CU_ASSERT(svc_yjs_batch_apply(server, merged.data, merged.len, &changed, NULL) == 0);
	CU_ASSERT(changed == 1);
	CU_ASSERT(svc_yjs_batch_apply(server, merged.data, merged.len, &changed, NULL) == 0);
	CU_ASSERT(changed == 0);
	CU_ASSERT(svc_yjs_batch_commit(server, &out, NULL) == 0);
	CU_ASSERT(svc_yjs_apply_update(replica, out.data, out.len, NULL, NULL, NULL) == 0);
	CU_ASSERT(text_is(replica, "m9.txt", "many"));
	CU_ASSERT(same_state(server, replica));
	for (i = 0; i < 10; i++) {
		svc_yjs_buf_dispose(&u[i]);
		svc_yjs_doc_free(c[i]);
	}
	svc_yjs_buf_dispose(&merged);
	svc_yjs_buf_dispose(&out);
	svc_yjs_doc_free(server);
	svc_yjs_doc_free(replica);
}

SVC_TEST_SUITE(yjs_batch)
{
	CU_pSuite s = CU_add_suite("yjs_batch", NULL, NULL);

	CU_add_test(s, "test_yjs_batch_commit_equals_individual_updates", test_yjs_batch_commit_equals_individual_updates);
	CU_add_test(s, "test_yjs_batch_carries_deletes_and_only_new_content",
		    test_yjs_batch_carries_deletes_and_only_new_content);
	CU_add_test(s, "test_yjs_batch_malformed_update_changes_nothing", test_yjs_batch_malformed_update_changes_nothing);
	CU_add_test(s, "test_yjs_batch_pending_until_dependency", test_yjs_batch_pending_until_dependency);
	CU_add_test(s, "test_yjs_batch_refuses_local_edits_and_misuse", test_yjs_batch_refuses_local_edits_and_misuse);
	CU_add_test(s, "test_yjs_batch_update_of_many_clients", test_yjs_batch_update_of_many_clients);
}
