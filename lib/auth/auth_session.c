/* auth_session.c: sign-in sessions: refresh tokens stored by jti, rotation with reuse detection, logout, the per-request check and its per-process cache. */
#include <stdio.h>
#include <string.h>

#include "auth/auth.h"
#include "core/err.h"
#include "core/util.h"
#include "db/db.h"

/* A new id: SVC_AUTH_ID_LEN lowercase hex digits and a NUL. */
static int new_id(char *out)
{
	return svc_random_hex(out, SVC_AUTH_ID_LEN / 2) < 0 ? SVC_E_INTERNAL : 0;
}

/* Reads the integer cell (col) of row 0 into *out; NULL is -1. Returns 0 or SVC_E_INTERNAL. */
static int cell_i64(const struct svc_rows *rows, int col, int64_t *out)
{
	const char *v = svc_rows_get(rows, 0, col);
	uint64_t n;

	if (!v) {
		*out = -1;
		return 0;
	}
	if (svc_parse_u64(v, INT64_MAX, &n) < 0)
		return SVC_E_INTERNAL;
	*out = (int64_t)n;
	return 0;
}

/* Stores refresh token `jti` of `session` and moves the session's expiry to its end. */
static int store_token(struct svc_db *db, const char *session, const char *jti, int64_t now_ms, int64_t ttl_secs)
{
	struct svc_dbv p[3];
	int err;

	p[0] = svc_dbv_str(jti);
	p[1] = svc_dbv_str(session);
	p[2] = svc_dbv_i64(now_ms);
	if ((err = svc_db_run(db, STMT_REFRESH_INSERT, p, 3, NULL, NULL)) < 0)
		return err;
	p[0] = svc_dbv_i64(now_ms + ttl_secs * 1000);
	p[1] = svc_dbv_str(session);
	return svc_db_run(db, STMT_SESSION_EXTEND, p, 2, NULL, NULL);
}

int svc_session_start(struct svc_db *db, const char *user_id, int64_t now_ms, int64_t refresh_ttl_secs,
		      char *out_session, char *out_jti)
{
	char session[SVC_AUTH_ID_LEN + 1], jti[SVC_AUTH_ID_LEN + 1];
	struct svc_dbv p[4];
	int err;

	if (refresh_ttl_secs <= 0 || refresh_ttl_secs > INT64_MAX / 1000 - now_ms / 1000)
		return SVC_E_INTERNAL;
	if ((err = new_id(session)) < 0 || (err = new_id(jti)) < 0)
		return err;
	p[0] = svc_dbv_i64(now_ms);
	svc_db_run(db, STMT_SESSION_PURGE, p, 1, NULL, NULL); /* housekeeping: a failure changes nothing here */
	p[0] = svc_dbv_str(session);
	p[1] = svc_dbv_str(user_id);
	p[2] = svc_dbv_i64(now_ms);
	p[3] = svc_dbv_i64(now_ms + refresh_ttl_secs * 1000);
	if ((err = svc_db_run(db, STMT_SESSION_INSERT, p, 4, NULL, NULL)) < 0 ||
	    (err = store_token(db, session, jti, now_ms, refresh_ttl_secs)) < 0)
		return err;
	memcpy(out_session, session, sizeof session);
	memcpy(out_jti, jti, sizeof jti);
	return 0;
}

int svc_session_rotate(struct svc_db *db, const struct svc_auth_claims *c, int64_t now_ms, int64_t grace_ms,
		       int64_t refresh_ttl_secs, char *out_jti, int64_t *out_gen, const char **out_why)
{
	struct svc_rows *rows = NULL;
	struct svc_dbv p[2];
	char jti[SVC_AUTH_ID_LEN + 1];
	const char *session, *user;
	int64_t retired, revoked, gen;
	uint64_t won = 0;
	int err;

	*out_why = "unknown";
	if (!c->jti[0] || !c->family[0])
		return SVC_E_UNAUTHORIZED;
	/* the token may have been issued through another host a moment ago (Galera: wsrep_sync_wait) */
	if ((err = svc_db_sync_wait(db)) < 0)
		return err;
	p[0] = svc_dbv_i64(now_ms);
	p[1] = svc_dbv_str(c->jti);
	if ((err = svc_db_run(db, STMT_REFRESH_RETIRE, p, 2, NULL, &won)) < 0)
		return err;
	if ((err = svc_db_run(db, STMT_REFRESH_STATE, p + 1, 1, &rows, NULL)) < 0)
		return err;
	err = SVC_E_UNAUTHORIZED;
	if (!rows || rows->nrows != 1)
		goto done;
	session = svc_rows_get(rows, 0, RTCOL_SESSION);
	user = svc_rows_get(rows, 0, RTCOL_USER);
	if (!session || strcmp(session, c->family) != 0 || !user || strcmp(user, c->user_id) != 0)
		goto done;
	if (cell_i64(rows, RTCOL_RETIRED, &retired) < 0 || cell_i64(rows, RTCOL_REVOKED, &revoked) < 0 ||
	    cell_i64(rows, RTCOL_GEN, &gen) < 0) {
		err = SVC_E_INTERNAL;
		goto done;
	}
	if (revoked >= 0) {
		*out_why = "revoked";
		goto done;
	}
	if (gen != c->gen) {
		*out_why = "password_changed";
		goto done;
	}
	if (!won && (retired < 0 || now_ms - retired > grace_ms)) {
		/* a token exchanged before came back: one of the two holders is not the user; end the session */
		*out_why = "reused";
		if ((err = svc_session_revoke(db, c->user_id, c->family, "reuse", now_ms)) == 0)
			err = SVC_E_UNAUTHORIZED;
		goto done;
	}
	if ((err = new_id(jti)) < 0 || (err = store_token(db, c->family, jti, now_ms, refresh_ttl_secs)) < 0)
		goto done;
	memcpy(out_jti, jti, sizeof jti);
	*out_gen = gen;
	*out_why = NULL;
	err = 0;
done:
	svc_rows_free(rows);
	return err;
}

int svc_session_revoke(struct svc_db *db, const char *user_id, const char *session, const char *why, int64_t now_ms)
{
	struct svc_dbv p[4];
	int err;

	p[0] = svc_dbv_i64(now_ms);
	p[1] = svc_dbv_str(why);
	p[2] = svc_dbv_str(session);
	p[3] = svc_dbv_str(user_id);
	if ((err = svc_db_run(db, STMT_SESSION_REVOKE, p, 4, NULL, NULL)) < 0)
		return err;
	/* after the write: a check that began before it is not kept by any process on this host */
	svc_shm_epoch_bump();
	return 0;
}

int svc_session_check(struct svc_db *db, const struct svc_auth_claims *c)
{
	struct svc_rows *rows = NULL;
	struct svc_dbv p[2];
	int64_t gen, revoked;
	int err;

	p[0] = c->family[0] ? svc_dbv_str(c->family) : svc_dbv_null();
	p[1] = svc_dbv_str(c->user_id);
	if ((err = svc_db_run(db, STMT_SESSION_ACCESS, p, 2, &rows, NULL)) < 0)
		return err;
	if (svc_db_is_galera(db) && (!rows || rows->nrows != 1 || (c->family[0] && !svc_rows_get(rows, 0, SACOL_SESSION)))) {
		/* a session signed in through another host a moment ago: read again once that host's
		 * write is applied here (wsrep_sync_wait), only on a miss, so a hit costs nothing more */
		svc_rows_free(rows);
		rows = NULL;
		if ((err = svc_db_sync_wait(db)) < 0 ||
		    (err = svc_db_run(db, STMT_SESSION_ACCESS, p, 2, &rows, NULL)) < 0)
			return err;
	}
	err = SVC_E_UNAUTHORIZED;
	if (!rows || rows->nrows != 1 || cell_i64(rows, SACOL_GEN, &gen) < 0 || gen != c->gen)
		goto done;
	if (c->family[0] && (!svc_rows_get(rows, 0, SACOL_SESSION) ||
			     cell_i64(rows, SACOL_REVOKED, &revoked) < 0 || revoked >= 0))
		goto done;
	err = 0;
done:
	svc_rows_free(rows);
	return err;
}

/* The cache slot of a token's session (of its user for a token without one). */
static size_t cache_slot(const struct svc_auth_claims *c)
{
	const char *k = c->family[0] ? c->family : c->user_id;
	uint32_t h = 2166136261u; /* FNV-1a: the ids are random already */

	for (; *k; k++)
		h = (h ^ (unsigned char)*k) * 16777619u;
	return h % SVC_SESSION_CACHE_SLOTS;
}

int svc_session_check_cached(struct svc_db *db, struct svc_session_cache *cache, const struct svc_auth_claims *c,
			     int64_t now_ms)
{
	struct svc_session_cache_entry *e = &cache->e[cache_slot(c)];
	uint64_t epoch = svc_shm_epoch();
	int err;

	if (e->checked_ms && now_ms >= e->checked_ms && now_ms - e->checked_ms < SVC_SESSION_CACHE_MS &&
	    e->epoch == epoch && e->gen == c->gen && strcmp(e->family, c->family) == 0 &&
	    strcmp(e->user_id, c->user_id) == 0)
		return 0;
	/* the epoch and the time are taken before the read: a revocation after them drops or outlives the entry */
	e->checked_ms = 0;
	if ((err = svc_session_check(db, c)) < 0)
		return err;
	memcpy(e->family, c->family, sizeof e->family);
	memcpy(e->user_id, c->user_id, sizeof e->user_id);
	e->gen = c->gen;
	e->epoch = epoch;
	e->checked_ms = now_ms;
	return 0;
}
