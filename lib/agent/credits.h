/* credits.h: what the agent's turns may spend and run at once: a workspace's AI credit, and the generation lock with its per-user and per-workspace caps. */
#ifndef SVC_AGENT_CREDITS_H
#define SVC_AGENT_CREDITS_H

#include "core/config.h"
#include "db/db.h"

/*
 * ---- A workspace's AI credit ----
 * US dollars, stored with 6 decimals (DECIMAL(14,6)) in workspace_credits;
 * a workspace without a limit of its own has SVC_DEFAULT_CREDIT_USD.
 */

#define SVC_AGENT_CREDIT_LIMIT_MAX 99999999.0 /* the largest limit DECIMAL(14,6) holds, in US dollars */

/* A workspace's credit as GET /workspaces/:wid/credits shows it; amounts in US dollars. */
struct svc_agent_credit {
	double limit_usd;        /* the workspace's limit, or SVC_DEFAULT_CREDIT_USD */
	double spent_usd;        /* what its turns spent so far */
	double remaining_usd;    /* what is left, 0 once exhausted */
	int exhausted;           /* 1: spent >= limit (compared before rounding) */
	int default_limit;       /* 1: the workspace has no limit of its own */
	char updated_at[40];     /* DATETIME(3) text of the last change, "" when none */
};

/*
 * Reads the credit of workspace `wid` into *out, the amounts rounded to whole
 * micro-dollars, the column's precision, so 0.1 + 0.2 reads back as 0.3.
 * Returns 0 or a DB error (*out untouched).
 */
int svc_agent_credit_show(struct svc_db *db, const struct svc_config *cfg, const char *wid, struct svc_agent_credit *out);

/*
 * Sets the limit of workspace `wid`: `limit_usd` (0 to
 * SVC_AGENT_CREDIT_LIMIT_MAX, checked by the caller) or, when `use_default`
 * is 1, none of its own (SVC_DEFAULT_CREDIT_USD). Returns 0, SVC_E_INTERNAL
 * or a DB error.
 */
int svc_agent_credit_set_limit(struct svc_db *db, const char *wid, int use_default, double limit_usd);

/*
 * Returns 1 when workspace `wid` has spent its limit or more, else 0, and
 * writes the limit into *out_limit (SVC_DEFAULT_CREDIT_USD when the workspace
 * has none, or when the credit cannot be read, which counts as nothing spent).
 */
int svc_agent_credit_exhausted(struct svc_db *db, const struct svc_config *cfg, const char *wid, double *out_limit);

/* What a turn spends is added by svc_agent_budget_record() (lib/agent/budget.h), with its caps' rows. */

/*
 * ---- The generation lock and the caps on turns running at once ----
 */

/*
 * Takes chat `chat_id`'s generation lock for turn `turn_id` of `user_id` in
 * `workspace_id`: one generation per chat (SVC_E_CONFLICT), at most
 * SVC_AI_MAX_TURNS_PER_USER running for the user and
 * SVC_AI_MAX_TURNS_PER_WORKSPACE in the workspace (SVC_E_RATE_LIMITED), the
 * counts and the insert in one transaction with the user's and the
 * workspace's rows locked, so two requests cannot both take the last place.
 * A generation whose heartbeat is older than 90 s is cleared first; a
 * queued turn run again (the same `turn_id`) takes its own lock over at once.
 * Returns 0, SVC_E_CONFLICT, SVC_E_RATE_LIMITED or a DB error.
 */
int svc_agent_generation_claim(struct svc_db *db, const struct svc_config *cfg, const char *chat_id, const char *turn_id,
			       const char *user_id, const char *workspace_id);

/*
 * Whether an agent turn runs on project `project_id` now: a live generation
 * lock (heartbeat within 90 s) of any of its chats. Sets *out_busy to 1 or 0.
 * A push over smart HTTP is refused while one runs (docs/git.md "What a push
 * may not do"). Returns 0 or a DB error.
 */
int svc_agent_project_busy(struct svc_db *db, const char *project_id, int *out_busy);

/* Releases the lock svc_agent_generation_claim() took (a failure is ignored: the lock goes stale). */
void svc_agent_generation_release(struct svc_db *db, const char *chat_id, const char *turn_id);

#endif
