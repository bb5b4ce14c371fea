/* auth_ratelimit.c: fixed-window rate limits kept in MariaDB, so every responder process on every host shares them. */
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

int svc_ratelimit_hit(struct svc_db *db, const char *rule, const char *key, const struct svc_rate_rule *r,
		      int64_t now, int64_t *out_retry_after)
{
	char bucket[65];
	struct svc_dbv p[3];
	struct svc_rows *rows = NULL;
	unsigned char coin;
	int64_t start;
	uint64_t hits = 0;
	int err;

	if (!r || r->limit == 0 || r->window_secs <= 0)
		return 0;
	if ((err = bucket_of(rule, key, bucket)) < 0)
		return err;
	start = window_of(r, now);
	p[0] = svc_dbv_str(bucket);
	p[1] = svc_dbv_i64(start);
	p[2] = svc_dbv_i64(start + r->window_secs);
	if ((err = svc_db_run(db, STMT_RATE_HIT, p, 3, NULL, NULL)) < 0)
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
	if (hits > r->limit) {
		if (out_retry_after)
			*out_retry_after = retry_after(r, start, now);
		return SVC_E_RATE_LIMITED;
	}
	return 0;
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
