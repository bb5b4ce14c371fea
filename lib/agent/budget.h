/* budget.h: the agent's spending caps (per workspace a day and a month, per member, project and API token a day, per turn), the spend they are held against, and a workspace's instructions to the agent. */
#ifndef SVC_AGENT_BUDGET_H
#define SVC_AGENT_BUDGET_H

#include <stddef.h>

#include <json-c/json.h>

#include "core/config.h"
#include "db/db.h"

/*
 * ---- Caps ----
 * US dollars, like the credit (lib/agent/credits.h), stored with 6 decimals in
 * workspace_budget_caps (schema/026_agent_budget.sql). Days and months are UTC.
 * docs/agent.md "Spending caps".
 */

/* The caps, in the order their checks run and their names appear. */
enum svc_agent_cap {
	SVC_AGENT_CAP_WORKSPACE_DAY,
	SVC_AGENT_CAP_WORKSPACE_MONTH,
	SVC_AGENT_CAP_MEMBER_DAY,
	SVC_AGENT_CAP_PROJECT_DAY,
	SVC_AGENT_CAP_TOKEN_DAY,
	SVC_AGENT_CAP_TURN,
	SVC_AGENT_CAP__MAX
};

#define SVC_AGENT_CAP_WARN_DEFAULT 80 /* percent of a cap at which a warning is given, unless set */

/* One cap of a workspace. */
struct svc_agent_cap_setting {
	int set;                 /* 0: the workspace has no such cap (the other fields are 0) */
	double limit_usd;        /* 0 to SVC_AGENT_CREDIT_LIMIT_MAX */
	unsigned warn_percent;   /* 1..100: warn at this share of the limit; 0: never warn */
	int block;               /* 1: no turn starts at or over the limit, a running turn stops; 0: warn only */
	char updated_at[40];     /* DATETIME(3) text, "" when not set */
	int own;                 /* memberDay only: 1 when it is the member's own cap (svc_agent_budget_member()) */
};

/* One member's own daily cap for svc_agent_budget_set(): cap.set 0 removes it. Borrowed. */
struct svc_agent_member_cap {
	const char *user_id;
	struct svc_agent_cap_setting cap;
};

/* The caps of one workspace, indexed by enum svc_agent_cap. */
struct svc_agent_budget {
	struct svc_agent_cap_setting caps[SVC_AGENT_CAP__MAX];
};

/* Who a turn spends for: the workspace, the member, the project, the API token ("" or NULL: none). Borrowed. */
struct svc_agent_spender {
	const char *workspace_id, *user_id, *project_id, *token_id;
};

/* The API name of cap `cap` ("workspaceDay", "workspaceMonth", "memberDay", "projectDay", "tokenDay", "turn"). */
const char *svc_agent_cap_name(enum svc_agent_cap cap);

/* The cap whose API name is `name`; -1 when none is. */
int svc_agent_cap_by_name(const char *name);

/* A sentence naming cap `cap` for a person: "the workspace's daily cap", "your daily cap in this workspace", ... */
const char *svc_agent_cap_label(enum svc_agent_cap cap);

/*
 * Reads workspace `wid`'s caps into *out (caps it does not set have set = 0).
 * Returns 0 or a DB error (*out untouched).
 */
int svc_agent_budget_load(struct svc_db *db, const char *wid, struct svc_agent_budget *out);

/*
 * Puts member `user_id`'s own daily cap in workspace `wid` (schema/031_member_caps.sql), when an
 * admin set one, into b->caps[SVC_AGENT_CAP_MEMBER_DAY] (own = 1), in place of the workspace's
 * per-member default, higher or lower; else leaves `b` as it is. Nothing for a NULL or "" user.
 * Returns 0 or a DB error (`b` untouched).
 */
int svc_agent_budget_member(struct svc_db *db, const char *wid, const char *user_id, struct svc_agent_budget *b);

/*
 * Every member of workspace `wid` (at most 1000, the oldest members first) with their spend
 * today and their own daily cap, as docs/api.md "GET /workspaces/:wid/budget" shows them:
 * *out a new array [{id, email, name, role, spentUsd, cap: {limitUsd, warnPercent, block,
 * updatedAt, own} or null}] the caller puts. Returns 0, SVC_E_INTERNAL (out of memory) or a DB error.
 */
int svc_agent_budget_members(struct svc_db *db, const char *wid, struct json_object **out);

/*
 * Applies the instance's per-turn cap (SVC_AGENT_TURN_MAX_USD, blocking, warning at
 * SVC_AGENT_CAP_WARN_DEFAULT %) to `b`: the lower of it and the workspace's own turn cap holds.
 * Nothing when the setting is 0.
 */
void svc_agent_budget_instance(const struct svc_config *cfg, struct svc_agent_budget *b);

/*
 * Sets the caps of workspace `wid` named in `mask` (bit 1 << cap) to b->caps[cap]
 * (limit_usd, warn_percent, block; checked by the caller), or removes those whose `set` is 0,
 * and the members' own daily caps `members[0..nmembers)` likewise (one of a user who is not a
 * member of `wid` is not stored), all in one transaction; `user_id` is recorded as who changed
 * them. Returns 0, SVC_E_INTERNAL when out of memory, or a DB error.
 */
int svc_agent_budget_set(struct svc_db *db, const char *wid, const struct svc_agent_budget *b, unsigned mask,
			 const struct svc_agent_member_cap *members, size_t nmembers, const char *user_id);

/*
 * What `who` has spent, per cap, into out[SVC_AGENT_CAP__MAX] in US dollars (rounded to
 * micro-dollars): the workspace today and this month, the member, the project and the token
 * today (0 without a token); out[SVC_AGENT_CAP_TURN] is 0 (a turn keeps its own). Reads after
 * svc_db_sync_wait(), so it sees what other hosts committed. Returns 0 or a DB error.
 */
int svc_agent_budget_spent(struct svc_db *db, const struct svc_agent_spender *who, double out[SVC_AGENT_CAP__MAX]);

/*
 * Records `cost_usd` spent by `who`: the workspace's credit (workspace_credits.spent_usd) and the
 * day's rows of the workspace, the member, the project and the token, in one transaction
 * (svc_db_tx_steps(): run again after a deadlock or a Galera certification failure), so a cap
 * and the credit never disagree. Nothing for 0 or less. Returns 0 or a DB error (logged).
 */
int svc_agent_budget_record(struct svc_db *db, const struct svc_agent_spender *who, double cost_usd);

/*
 * The first blocking cap of `b` that `spent` (as svc_agent_budget_spent() fills it, the turn's
 * own in [SVC_AGENT_CAP_TURN]) is at or over, or -1 when none is.
 */
int svc_agent_budget_blocked(const struct svc_agent_budget *b, const double spent[SVC_AGENT_CAP__MAX]);

/*
 * Whether cap `cap` of `b` is at or over its warning level with `spent` US dollars spent: 1 or 0
 * (0 for an unset cap or one without a warning).
 */
int svc_agent_budget_warns(const struct svc_agent_budget *b, enum svc_agent_cap cap, double spent);

/*
 * The event payload {cap, limitUsd, spentUsd, percent, block, message} of cap `cap` of `b` at
 * `spent` US dollars; `what` begins the message ("Refused", "Warning", "Stopped"). A new object the
 * caller puts; NULL when out of memory. The message is also written into `msg` (`msgmax` bytes)
 * when `msg` is not NULL.
 */
struct json_object *svc_agent_budget_event(const struct svc_agent_budget *b, enum svc_agent_cap cap, double spent,
					   const char *what, char *msg, size_t msgmax);

/* One cap as the API shows it: {limitUsd, warnPercent, block, updatedAt}, with own (true/false) for memberDay; NULL for an unset one. A new object. */
struct json_object *svc_agent_cap_json(const struct svc_agent_cap_setting *s, enum svc_agent_cap cap);

/* The caps of `b` as the API shows them: {workspaceDay: {limitUsd, warnPercent, block, updatedAt} or null, ...}. A new object. */
struct json_object *svc_agent_budget_json(const struct svc_agent_budget *b);

/*
 * ---- A workspace's instructions to the agent ----
 */

#define SVC_AGENT_WS_INSTRUCTIONS_MAX (16 * 1024) /* bytes of a workspace's instructions */

/*
 * Reads workspace `wid`'s instructions: *out_text malloc'd (NULL when it has none; the caller
 * frees it), its last change into `updated` (`umax` bytes, "" when none). Returns 0 or a DB error.
 */
int svc_agent_instructions_get(struct svc_db *db, const char *wid, char **out_text, char *updated, size_t umax);

/* Sets them to `text` ("" removes them), changed by `user_id`. Returns 0 or a DB error. */
int svc_agent_instructions_set(struct svc_db *db, const char *wid, const char *text, const char *user_id);

#endif
