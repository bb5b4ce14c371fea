/* credits.c: what the agent's turns may spend and run at once: a workspace's AI credit (spend, limit, remaining) and the generation lock with its caps. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/credits.h"
#include "core/err.h"
#include "core/log.h"
#include "core/util.h"

/* A DECIMAL column as a double; `dflt` when NULL or not a number. */
static double decimal(const char *s, double dflt)
{
	char *end;
	double d;

	if (!s || !*s)
		return dflt;
	d = strtod(s, &end);
	return *end || !isfinite(d) ? dflt : d;
}

/* Rounds to whole micro-dollars, the column's precision, so 0.1 + 0.2 reads back as 0.3. */
static double micro(double usd)
{
	return round(usd * 1e6) / 1e6;
}

int svc_agent_credit_show(struct svc_db *db, const struct svc_config *cfg, const char *wid, struct svc_agent_credit *out)
{
	struct svc_dbv p = svc_dbv_str(wid);
	struct svc_rows *rows = NULL;
	const char *limit_text = NULL, *updated = NULL;
	double limit, spent = 0;
	int err;

	if ((err = svc_db_run(db, STMT_AGENT_CREDIT_SHOW, &p, 1, &rows, NULL)) < 0)
		return err;
	if (rows && rows->nrows == 1) {
		limit_text = svc_rows_get(rows, 0, CSCOL_LIMIT);
		spent = decimal(svc_rows_get(rows, 0, CSCOL_SPENT), 0);
		updated = svc_rows_get(rows, 0, CSCOL_UPDATED);
	}
	limit = decimal(limit_text, cfg->default_credit_usd);
	memset(out, 0, sizeof *out);
	out->limit_usd = micro(limit);
	out->spent_usd = micro(spent);
	out->remaining_usd = spent >= limit ? 0 : micro(limit - spent);
	out->exhausted = spent >= limit;
	out->default_limit = limit_text == NULL;
	snprintf(out->updated_at, sizeof out->updated_at, "%s", updated ? updated : "");
	svc_rows_free(rows);
	return 0;
}

int svc_agent_credit_set_limit(struct svc_db *db, const char *wid, int use_default, double limit_usd)
{
	struct svc_dbv p[2];
	char text[64];

	if (!use_default && snprintf(text, sizeof text, "%.6f", limit_usd) >= (int)sizeof text)
		return SVC_E_INTERNAL;
	p[0] = svc_dbv_str(wid);
	p[1] = use_default ? svc_dbv_null() : svc_dbv_str(text);
	return svc_db_run(db, STMT_AGENT_CREDIT_SET_LIMIT, p, 2, NULL, NULL);
}

int svc_agent_credit_exhausted(struct svc_db *db, const struct svc_config *cfg, const char *wid, double *out_limit)
{
	struct svc_dbv p = svc_dbv_str(wid);
	struct svc_rows *rows = NULL;
	double limit = cfg->default_credit_usd, spent = 0;

	if (svc_db_run(db, STMT_AGENT_CREDIT_GET, &p, 1, &rows, NULL) == 0 && rows && rows->nrows == 1) {
		limit = decimal(svc_rows_get(rows, 0, CRCOL_LIMIT), cfg->default_credit_usd);
		spent = decimal(svc_rows_get(rows, 0, CRCOL_SPENT), 0);
	}
	svc_rows_free(rows);
	*out_limit = limit;
	return spent >= limit;
}

/* ---- the generation lock and its caps ---- */

/* Counts rows of statement `id` for `key` (a COUNT(*)) into *out. */
static int count_of(struct svc_db *db, enum svc_stmt id, const char *key, uint64_t *out)
{
	struct svc_dbv p = svc_dbv_str(key);
	struct svc_rows *rows = NULL;
	int err;

	if ((err = svc_db_run(db, id, &p, 1, &rows, NULL)) < 0)
		return err;
	err = rows && rows->nrows == 1 && svc_parse_u64(svc_rows_get(rows, 0, GNCOL_COUNT), UINT64_MAX, out) == 0
		      ? 0 : SVC_E_INTERNAL;
	svc_rows_free(rows);
	return err;
}

/* What the claim's transaction needs. */
struct claim {
	const struct svc_config *cfg;
	struct svc_dbv p[4]; /* chat, turn, user, workspace */
};

/* The claim, one transaction of svc_db_tx(): locks in one order everywhere: the user's row, the
 * workspace's row, then the insert. */
static int claim_tx(struct svc_db *db, void *arg)
{
	static const enum svc_stmt lock[2] = { STMT_GEN_LOCK_USER, STMT_GEN_LOCK_WORKSPACE };
	static const enum svc_stmt count[2] = { STMT_GEN_COUNT_USER, STMT_GEN_COUNT_WORKSPACE };
	struct claim *c = arg;
	uint64_t cap[2] = { c->cfg->ai_max_turns_user, c->cfg->ai_max_turns_workspace }, n;
	size_t i;
	int err;

	for (i = 0; i < 2; i++) {
		if (!cap[i])
			continue;
		if ((err = svc_db_run(db, lock[i], &c->p[2 + i], 1, NULL, NULL)) < 0 ||
		    (err = count_of(db, count[i], c->p[2 + i].s, &n)) < 0)
			return err;
		if (n >= cap[i])
			return SVC_E_RATE_LIMITED;
	}
	return svc_db_run(db, STMT_GEN_INSERT, c->p, 4, NULL, NULL);
}

int svc_agent_generation_claim(struct svc_db *db, const struct svc_config *cfg, const char *chat_id, const char *turn_id,
			       const char *user_id, const char *workspace_id)
{
	struct claim c = { cfg, { svc_dbv_str(chat_id), svc_dbv_str(turn_id), svc_dbv_str(user_id),
				  svc_dbv_str(workspace_id) } };
	uint64_t affected = 0;
	int err;

	/* The chat's generation is this very turn: a queued turn (first prompt) run again after its
	 * worker died holds the job now (lib/db/jobs.h), so it takes the turn's lock over at once
	 * instead of waiting out the dead worker's heartbeat (90 s). A request's new turn never
	 * matches: its turn id is new. */
	if (svc_db_run(db, STMT_GEN_HEARTBEAT, c.p, 2, NULL, &affected) == 0 && affected == 1)
		return 0;
	/* a dead generation of this chat goes first, on its own (no gap lock held into the transaction) */
	svc_db_run(db, STMT_GEN_CLEAR_STALE, c.p, 1, NULL, NULL);
	/* the counts must see the turns that other hosts claimed (Galera: wsrep_sync_wait) */
	if ((err = svc_db_sync_wait(db)) < 0)
		return err;
	return svc_db_tx(db, claim_tx, &c);
}

int svc_agent_project_busy(struct svc_db *db, const char *project_id, int *out_busy)
{
	struct svc_dbv p = svc_dbv_str(project_id);
	struct svc_rows *rows = NULL;
	const char *n;
	int err;

	if ((err = svc_db_sync_wait(db)) < 0 || (err = svc_db_run(db, STMT_GEN_COUNT_PROJECT, &p, 1, &rows, NULL)) < 0)
		return err;
	n = rows && rows->nrows ? svc_rows_get(rows, 0, GNCOL_COUNT) : NULL;
	*out_busy = n && strcmp(n, "0") != 0;
	svc_rows_free(rows);
	return 0;
}

void svc_agent_generation_release(struct svc_db *db, const char *chat_id, const char *turn_id)
{
	struct svc_dbv p[2] = { svc_dbv_str(chat_id), svc_dbv_str(turn_id) };

	svc_db_run(db, STMT_GEN_DELETE, p, 2, NULL, NULL);
}
