/* auth_ratelimit.c: fixed-window rate limits kept in MariaDB, so every responder process on every host shares them, or counted per host in shared memory with MariaDB for the sum of the hosts. */
#include <stdio.h>
#include <string.h>

#include "auth/auth.h"
#include "db/db.h"
#include "core/err.h"
#include "core/util.h"

/* One purge of expired buckets per this many hits (from the random bytes), so the table stays small. */
#define PURGE_ONE_IN 64

/* The bucket id: hex SHA-256 of "<rule>\n<key>" (keys such as e-mail addresses are not stored). */
static int bucket_of(const char *rule, const char *key, char *out)
{
	char text[1024];
	int n = snprintf(text, sizeof text, "%s\n%s", rule, key ? key : "");

	if (n < 0 || (size_t)n >= sizeof text)
		return SVC_E_INTERNAL;
	return svc_sha256_hex(text, (size_t)n, out);
}

static int64_t window_of(const struct svc_rate_rule *r, int64_t now)
{
	return now - (now % r->window_secs);
}

static int64_t retry_after(const struct svc_rate_rule *r, int64_t start, int64_t now)
{
	int64_t left = start + r->window_secs - now;

	return left < 1 ? 1 : left;
}

/* Adds `n` hits to `bucket`'s window that starts at `start` and writes the window's hits on every host into *out_hits. */
static int add_hits(struct svc_db *db, const char *bucket, int64_t start, const struct svc_rate_rule *r, uint32_t n,
		    int64_t now, uint64_t *out_hits)
{
	struct svc_dbv p[4];
	struct svc_rows *rows = NULL;
	unsigned char coin;
	uint64_t hits = 0;
	int err;

	p[0] = svc_dbv_str(bucket);
	p[1] = svc_dbv_i64(start);
	p[2] = svc_dbv_i64(n);
	p[3] = svc_dbv_i64(start + r->window_secs);
	if ((err = svc_db_run(db, STMT_RATE_HIT, p, 4, NULL, NULL)) < 0)
		return err;
	if ((err = svc_db_run(db, STMT_RATE_GET, p, 1, &rows, NULL)) < 0)
		return err;
	if (rows && rows->nrows == 1 && svc_rows_get(rows, 0, RCOL_HITS))
		svc_parse_u64(svc_rows_get(rows, 0, RCOL_HITS), UINT64_MAX, &hits);
	svc_rows_free(rows);
	if (svc_random(&coin, 1) == 0 && coin % PURGE_ONE_IN == 0) {
		struct svc_dbv q = svc_dbv_i64(now);
		svc_db_run(db, STMT_RATE_PURGE, &q, 1, NULL, NULL);
	}
	*out_hits = hits;
	return 0;
}

/* SVC_E_RATE_LIMITED with *out_retry_after when `hits` are over the limit of `r`, else 0. */
static int verdict(const struct svc_rate_rule *r, uint64_t hits, int64_t start, int64_t now, int64_t *out_retry_after)
{
	if (hits <= r->limit)
		return 0;
	if (out_retry_after)
		*out_retry_after = retry_after(r, start, now);
	return SVC_E_RATE_LIMITED;
}

int svc_ratelimit_hit(struct svc_db *db, const char *rule, const char *key, const struct svc_rate_rule *r,
		      int64_t now, int64_t *out_retry_after)
{
	char bucket[65];
	int64_t start;
	uint64_t hits = 0;
	int err;

	if (!r || r->limit == 0 || r->window_secs <= 0)
		return 0;
	if ((err = bucket_of(rule, key, bucket)) < 0)
		return err;
	start = window_of(r, now);
	if ((err = add_hits(db, bucket, start, r, 1, now, &hits)) < 0)
		return err;
	return verdict(r, hits, start, now, out_retry_after);
}

/* How often, at most, a host sends a bucket's new hits to MariaDB and reads the other hosts' back (ms). */
#define HOST_FLUSH_MS 1000

int svc_ratelimit_hit_host(struct svc_db *db, const char *rule, const char *key, const struct svc_rate_rule *r,
			   int64_t now_ms, int64_t *out_retry_after)
{
	char text[256], bucket[65];
	struct svc_auth__shm_count c;
	int64_t now = now_ms / 1000, start;
	uint64_t total;
	int n, err;

	if (!r || r->limit == 0 || r->window_secs <= 0)
		return 0;
	/* the host's slot is found by the bucket's text; its hash (bucket_of) is made only for MariaDB */
	n = snprintf(text, sizeof text, "%s\n%s", rule, key ? key : "");
	if (n < 0 || (size_t)n >= sizeof text)
		return SVC_E_INTERNAL;
	start = window_of(r, now);
	err = svc_auth__shm_hit(text, start, r->window_secs, now_ms, HOST_FLUSH_MS, &c);
	if (err == SVC_E_UNAVAILABLE) /* no segment, or no slot free near this bucket's: MariaDB alone */
		return svc_ratelimit_hit(db, rule, key, r, now, out_retry_after);
	if (err < 0)
		return err;
	if (c.unflushed) {
		if ((err = bucket_of(rule, key, bucket)) < 0 ||
		    (err = add_hits(db, bucket, start, r, c.unflushed, now, &total)) < 0)
			return err;
		/* what MariaDB holds beyond this host's part came from the other hosts */
		total = total > c.flushed ? total - c.flushed : 0;
		c.others = total > UINT32_MAX ? UINT32_MAX : (uint32_t)total;
		svc_auth__shm_others(text, start, c.others);
	}
	return verdict(r, (uint64_t)c.hits + c.others, start, now, out_retry_after);
}

int svc_ratelimit_check(struct svc_db *db, const char *rule, const char *key, const struct svc_rate_rule *r,
			int64_t now, int64_t *out_retry_after)
{
	char bucket[65];
	struct svc_dbv p;
	struct svc_rows *rows = NULL;
	uint64_t hits = 0, start = 0;
	int err;

	if (!r || r->limit == 0 || r->window_secs <= 0)
		return 0;
	if ((err = bucket_of(rule, key, bucket)) < 0)
		return err;
	p = svc_dbv_str(bucket);
	if ((err = svc_db_run(db, STMT_RATE_GET, &p, 1, &rows, NULL)) < 0)
		return err;
	if (rows && rows->nrows == 1 && svc_rows_get(rows, 0, RCOL_WINDOW_START) && svc_rows_get(rows, 0, RCOL_HITS)) {
		svc_parse_u64(svc_rows_get(rows, 0, RCOL_WINDOW_START), INT64_MAX, &start);
		svc_parse_u64(svc_rows_get(rows, 0, RCOL_HITS), UINT64_MAX, &hits);
	}
	svc_rows_free(rows);
	if ((int64_t)start != window_of(r, now))
		return 0;   /* an older window: nothing counts any more */
	if (hits >= r->limit) {
		if (out_retry_after)
			*out_retry_after = retry_after(r, (int64_t)start, now);
		return SVC_E_RATE_LIMITED;
	}
	return 0;
}

int svc_ratelimit_clear(struct svc_db *db, const char *rule, const char *key)
{
	char bucket[65];
	struct svc_dbv p;
	int err;

	if ((err = bucket_of(rule, key, bucket)) < 0)
		return err;
	p = svc_dbv_str(bucket);
	return svc_db_run(db, STMT_RATE_CLEAR, &p, 1, NULL, NULL);
}
