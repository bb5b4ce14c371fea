/* budget.c: the agent's spending caps, the spend per day they are held against (recorded with the credit in one transaction), and a workspace's instructions to the agent. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/budget.h"
#include "core/err.h"
#include "core/json.h"
#include "core/log.h"
#include "core/util.h"

/* Per cap: its API name, its name in workspace_budget_caps.cap, its label for a person. */
static const struct {
	const char *api, *sql, *label;
} caps[SVC_AGENT_CAP__MAX] = {
	[SVC_AGENT_CAP_WORKSPACE_DAY] = { "workspaceDay", "workspace_day", "the workspace's daily cap" },
	[SVC_AGENT_CAP_WORKSPACE_MONTH] = { "workspaceMonth", "workspace_month", "the workspace's monthly cap" },
	[SVC_AGENT_CAP_MEMBER_DAY] = { "memberDay", "member_day", "your daily cap in this workspace" },
	[SVC_AGENT_CAP_PROJECT_DAY] = { "projectDay", "project_day", "this project's daily cap" },
	[SVC_AGENT_CAP_TOKEN_DAY] = { "tokenDay", "token_day", "this API token's daily cap" },
	[SVC_AGENT_CAP_TURN] = { "turn", "turn", "the cap of one turn" },
};

const char *svc_agent_cap_name(enum svc_agent_cap cap)
{
	return caps[cap].api;
}

int svc_agent_cap_by_name(const char *name)
{
	int i;

	for (i = 0; name && i < SVC_AGENT_CAP__MAX; i++) {
		if (strcmp(caps[i].api, name) == 0)
			return i;
	}
	return -1;
}

const char *svc_agent_cap_label(enum svc_agent_cap cap)
{
	return caps[cap].label;
}

/* A DECIMAL cell as a double; 0 when NULL or not a number. */
static double decimal(const char *s)
{
	char *end;
	double d;

	if (!s || !*s)
		return 0;
	d = strtod(s, &end);
	return *end || !isfinite(d) ? 0 : d;
}

/* Rounds to whole micro-dollars, the columns' precision. */
static double micro(double usd)
{
	return round(usd * 1e6) / 1e6;
}

/* One cap's cells of row `r` (limit, warn percent, block, updated at in columns col..col+3) into *s, set. */
static void cap_from_row(const struct svc_rows *rows, size_t r, int col, struct svc_agent_cap_setting *s)
{
	const char *updated = svc_rows_get(rows, r, col + 3), *block = svc_rows_get(rows, r, col + 2);
	uint64_t warn;

	s->set = 1;
	s->limit_usd = micro(decimal(svc_rows_get(rows, r, col)));
	s->warn_percent = svc_parse_u64(svc_rows_get(rows, r, col + 1), 100, &warn) == 0 ? (unsigned)warn : 0;
	s->block = block && strcmp(block, "1") == 0;
	snprintf(s->updated_at, sizeof s->updated_at, "%s", updated ? updated : "");
}

int svc_agent_budget_load(struct svc_db *db, const char *wid, struct svc_agent_budget *out)
{
	struct svc_dbv p = svc_dbv_str(wid);
	struct svc_rows *rows = NULL;
	struct svc_agent_budget b;
	size_t r;
	int err, i;

	if ((err = svc_db_run(db, STMT_BUDGET_CAPS, &p, 1, &rows, NULL)) < 0)
		return err;
	memset(&b, 0, sizeof b);
	for (r = 0; rows && r < rows->nrows; r++) {
		const char *name = svc_rows_get(rows, r, BCCOL_CAP);

		for (i = 0; i < SVC_AGENT_CAP__MAX && (!name || strcmp(caps[i].sql, name) != 0); i++)
			;
		if (i < SVC_AGENT_CAP__MAX)
			cap_from_row(rows, r, BCCOL_LIMIT, &b.caps[i]);
	}
	svc_rows_free(rows);
	*out = b;
	return 0;
}

void svc_agent_budget_instance(const struct svc_config *cfg, struct svc_agent_budget *b)
{
	struct svc_agent_cap_setting *t = &b->caps[SVC_AGENT_CAP_TURN];

	if (!(cfg->agent_turn_max_usd > 0))
		return;
	if (t->set && t->block && t->limit_usd <= cfg->agent_turn_max_usd)
		return;
	t->set = 1;
	t->limit_usd = cfg->agent_turn_max_usd;
	t->block = 1;
	if (!t->warn_percent)
		t->warn_percent = SVC_AGENT_CAP_WARN_DEFAULT;
}

/* The parameters of one cap's upsert from `s` into p[0..3] (limit, warn percent, block, changed by), its limit's text in `limit`. */
static int cap_params(const struct svc_agent_cap_setting *s, const char *user_id, char limit[64], struct svc_dbv p[4])
{
	if (snprintf(limit, 64, "%.6f", s->limit_usd) >= 64)
		return SVC_E_INTERNAL;
	p[0] = svc_dbv_str(limit);
	p[1] = svc_dbv_i64(s->warn_percent);
	p[2] = svc_dbv_i64(s->block ? 1 : 0);
	p[3] = user_id && user_id[0] ? svc_dbv_str(user_id) : svc_dbv_null();
	return 0;
}

int svc_agent_budget_set(struct svc_db *db, const char *wid, const struct svc_agent_budget *b, unsigned mask,
			 const struct svc_agent_member_cap *members, size_t nmembers, const char *user_id)
{
	struct svc_dbv p[SVC_AGENT_CAP__MAX][6], *mp = NULL;
	struct svc_db_step *steps;
	char limit[SVC_AGENT_CAP__MAX][64], (*mlimit)[64] = NULL;
	size_t n = 0, m;
	int i, err = 0;

	if (!(steps = calloc(SVC_AGENT_CAP__MAX + nmembers, sizeof *steps)) ||
	    (nmembers && (!(mp = calloc(nmembers * 6, sizeof *mp)) || !(mlimit = calloc(nmembers, sizeof *mlimit))))) {
		err = SVC_E_INTERNAL;
		goto done;
	}
	for (i = 0; i < SVC_AGENT_CAP__MAX; i++) {
		const struct svc_agent_cap_setting *s = &b->caps[i];

		if (!(mask & (1u << i)))
			continue;
		p[i][0] = svc_dbv_str(wid);
		p[i][1] = svc_dbv_str(caps[i].sql);
		if (!s->set) {
			steps[n++] = (struct svc_db_step){ STMT_BUDGET_CAP_DELETE, p[i], 2, NULL };
			continue;
		}
		if ((err = cap_params(s, user_id, limit[i], &p[i][2])) < 0)
			goto done;
		steps[n++] = (struct svc_db_step){ STMT_BUDGET_CAP_PUT, p[i], 6, NULL };
	}
	for (m = 0; m < nmembers; m++) {
		struct svc_dbv *q = &mp[m * 6];

		if (!members[m].cap.set) {
			q[0] = svc_dbv_str(wid);
			q[1] = svc_dbv_str(members[m].user_id);
			steps[n++] = (struct svc_db_step){ STMT_MEMBER_CAP_DELETE, q, 2, NULL };
			continue;
		}
		if ((err = cap_params(&members[m].cap, user_id, mlimit[m], q)) < 0)
			goto done;
		q[4] = svc_dbv_str(wid);
		q[5] = svc_dbv_str(members[m].user_id);
		steps[n++] = (struct svc_db_step){ STMT_MEMBER_CAP_PUT, q, 6, NULL };
	}
	err = n ? svc_db_tx_steps(db, steps, n) : 0;
done:
	free(steps);
	free(mp);
	free(mlimit);
	return err;
}

int svc_agent_budget_member(struct svc_db *db, const char *wid, const char *user_id, struct svc_agent_budget *b)
{
	struct svc_dbv p[2] = { svc_dbv_str(wid), svc_dbv_str(user_id) };
	struct svc_rows *rows = NULL;
	struct svc_agent_cap_setting *s = &b->caps[SVC_AGENT_CAP_MEMBER_DAY];
	int err;

	if (!user_id || !user_id[0])
		return 0;
	if ((err = svc_db_run(db, STMT_MEMBER_CAP_GET, p, 2, &rows, NULL)) < 0)
		return err;
	if (rows && rows->nrows == 1) {
		memset(s, 0, sizeof *s);
		cap_from_row(rows, 0, MPCOL_LIMIT, s);
		s->own = 1;
	}
	svc_rows_free(rows);
	return 0;
}

int svc_agent_budget_members(struct svc_db *db, const char *wid, struct json_object **out)
{
	struct svc_dbv p = svc_dbv_str(wid);
	struct svc_rows *rows = NULL;
	struct json_object *list, *e;
	struct svc_agent_cap_setting c;
	size_t r;
	int err;

	if ((err = svc_db_run(db, STMT_MEMBER_CAP_LIST, &p, 1, &rows, NULL)) < 0)
		return err;
	if (!(list = json_object_new_array())) {
		svc_rows_free(rows);
		return SVC_E_INTERNAL;
	}
	for (r = 0; rows && r < rows->nrows; r++) {
		e = json_object_new_object();
		svc_json_add_str(e, "id", svc_rows_get(rows, r, MQCOL_USER));
		svc_json_add_str(e, "email", svc_rows_get(rows, r, MQCOL_EMAIL));
		svc_json_add_str(e, "name", svc_rows_get(rows, r, MQCOL_NAME));
		svc_json_add_str(e, "role", svc_rows_get(rows, r, MQCOL_ROLE));
		json_object_object_add(e, "spentUsd", json_object_new_double(micro(decimal(svc_rows_get(rows, r, MQCOL_SPENT)))));
		memset(&c, 0, sizeof c);
		if (svc_rows_get(rows, r, MQCOL_LIMIT)) {
			cap_from_row(rows, r, MQCOL_LIMIT, &c);
			c.own = 1;
		}
		json_object_object_add(e, "cap", svc_agent_cap_json(&c, SVC_AGENT_CAP_MEMBER_DAY));
		json_object_array_add(list, e);
	}
	svc_rows_free(rows);
	*out = list;
	return 0;
}

int svc_agent_budget_spent(struct svc_db *db, const struct svc_agent_spender *who, double out[SVC_AGENT_CAP__MAX])
{
	static const int cols[SVC_AGENT_CAP_TURN] = { BSCOL_WS_DAY, BSCOL_WS_MONTH, BSCOL_MEMBER_DAY, BSCOL_PROJECT_DAY,
						      BSCOL_TOKEN_DAY };
	struct svc_dbv p[4];
	struct svc_rows *rows = NULL;
	int err, i;

	p[0] = svc_dbv_str(who->user_id ? who->user_id : "");
	p[1] = svc_dbv_str(who->project_id ? who->project_id : "");
	p[2] = svc_dbv_str(who->token_id ? who->token_id : "");
	p[3] = svc_dbv_str(who->workspace_id);
	/* the sums must see the spend that other hosts committed (Galera: wsrep_sync_wait) */
	if ((err = svc_db_sync_wait(db)) < 0 || (err = svc_db_run(db, STMT_BUDGET_SPENT, p, 4, &rows, NULL)) < 0)
		return err;
	for (i = 0; i < SVC_AGENT_CAP__MAX; i++)
		out[i] = 0;
	for (i = 0; rows && rows->nrows == 1 && i < SVC_AGENT_CAP_TURN; i++)
		out[i] = micro(decimal(svc_rows_get(rows, 0, cols[i])));
	if (!who->token_id || !who->token_id[0])
		out[SVC_AGENT_CAP_TOKEN_DAY] = 0;
	svc_rows_free(rows);
	return 0;
}

int svc_agent_budget_record(struct svc_db *db, const struct svc_agent_spender *who, double cost_usd)
{
	static const char *const kinds[4] = { "workspace", "member", "project", "token" };
	const char *subjects[4] = { who->workspace_id, who->user_id, who->project_id, who->token_id };
	struct svc_dbv credit[2], spend[4][4];
	struct svc_db_step steps[5];
	char text[64];
	size_t n = 0, i;
	int err;

	if (!(cost_usd > 0) || !isfinite(cost_usd))
		return 0;
	snprintf(text, sizeof text, "%.6f", cost_usd);
	credit[0] = svc_dbv_str(who->workspace_id);
	credit[1] = svc_dbv_str(text);
	steps[n++] = (struct svc_db_step){ STMT_AGENT_CREDIT_ADD, credit, 2, NULL };
	for (i = 0; i < 4; i++) {
		if (!subjects[i] || !subjects[i][0])
			continue;
		spend[i][0] = svc_dbv_str(who->workspace_id);
		spend[i][1] = svc_dbv_str(kinds[i]);
		spend[i][2] = svc_dbv_str(subjects[i]);
		spend[i][3] = svc_dbv_str(text);
		steps[n++] = (struct svc_db_step){ STMT_BUDGET_SPEND_ADD, spend[i], 4, NULL };
	}
	if ((err = svc_db_tx_steps(db, steps, n)) < 0)
		svc_log_error("chat: cannot record a spend of %s USD for workspace %s", text, who->workspace_id);
	return err;
}

int svc_agent_budget_blocked(const struct svc_agent_budget *b, const double spent[SVC_AGENT_CAP__MAX])
{
	int i;

	for (i = 0; i < SVC_AGENT_CAP__MAX; i++) {
		if (b->caps[i].set && b->caps[i].block && micro(spent[i]) >= micro(b->caps[i].limit_usd))
			return i;
	}
	return -1;
}

int svc_agent_budget_warns(const struct svc_agent_budget *b, enum svc_agent_cap cap, double spent)
{
	const struct svc_agent_cap_setting *s = &b->caps[cap];

	if (!s->set || !s->warn_percent)
		return 0;
	return micro(spent) >= micro(s->limit_usd * (double)s->warn_percent / 100.0);
}

/* An amount for a person: two decimals from a dollar up, else up to six significant digits (0.0008). */
static void usd(double v, char *out, size_t max)
{
	snprintf(out, max, v >= 1 || v == 0 ? "%.2f" : "%.6g", micro(v));
}

struct json_object *svc_agent_budget_event(const struct svc_agent_budget *b, enum svc_agent_cap cap, double spent,
					   const char *what, char *msg, size_t msgmax)
{
	const struct svc_agent_cap_setting *s = &b->caps[cap];
	struct json_object *o = json_object_new_object();
	double percent = s->limit_usd > 0 ? floor(spent * 100.0 / s->limit_usd) : 100;
	char text[300], limit[32], used[32];

	if (!o)
		return NULL;
	usd(s->limit_usd, limit, sizeof limit);
	usd(spent, used, sizeof used);
	snprintf(text, sizeof text, "%s: %s of %s USD is %s (%s USD spent, %.0f %%).", what,
		 s->own ? "your daily cap in this workspace (set for you)" : caps[cap].label, limit,
		 spent >= s->limit_usd ? "used up" : "nearly used", used, percent);
	if (msg && msgmax)
		snprintf(msg, msgmax, "%s", text);
	svc_json_add_str(o, "cap", caps[cap].api);
	json_object_object_add(o, "limitUsd", json_object_new_double(s->limit_usd));
	json_object_object_add(o, "spentUsd", json_object_new_double(micro(spent)));
	json_object_object_add(o, "percent", json_object_new_double(percent));
	json_object_object_add(o, "block", json_object_new_boolean(s->block));
	svc_json_add_str(o, "message", text);
	return o;
}

struct json_object *svc_agent_cap_json(const struct svc_agent_cap_setting *s, enum svc_agent_cap cap)
{
	struct json_object *c;

	if (!s->set || !(c = json_object_new_object()))
		return NULL;
	json_object_object_add(c, "limitUsd", json_object_new_double(s->limit_usd));
	json_object_object_add(c, "warnPercent", json_object_new_int((int)s->warn_percent));
	json_object_object_add(c, "block", json_object_new_boolean(s->block));
	svc_json_add_time(c, "updatedAt", s->updated_at[0] ? s->updated_at : NULL);
	if (cap == SVC_AGENT_CAP_MEMBER_DAY)
		json_object_object_add(c, "own", json_object_new_boolean(s->own));
	return c;
}

struct json_object *svc_agent_budget_json(const struct svc_agent_budget *b)
{
	struct json_object *o = json_object_new_object();
	int i;

	for (i = 0; o && i < SVC_AGENT_CAP__MAX; i++)
		json_object_object_add(o, caps[i].api, svc_agent_cap_json(&b->caps[i], i));
	return o;
}

/* ---- a workspace's instructions ---- */

int svc_agent_instructions_get(struct svc_db *db, const char *wid, char **out_text, char *updated, size_t umax)
{
	struct svc_dbv p = svc_dbv_str(wid);
	struct svc_rows *rows = NULL;
	const char *text = NULL, *when = NULL;
	char *copy = NULL;
	int err;

	if ((err = svc_db_run(db, STMT_WS_INSTRUCTIONS_GET, &p, 1, &rows, NULL)) < 0)
		return err;
	if (rows && rows->nrows == 1) {
		text = svc_rows_get(rows, 0, WICOL_TEXT);
		when = svc_rows_get(rows, 0, WICOL_UPDATED);
	}
	if (text && text[0] && !(copy = strdup(text))) {
		svc_rows_free(rows);
		return SVC_E_INTERNAL;
	}
	if (umax)
		snprintf(updated, umax, "%s", when ? when : "");
	svc_rows_free(rows);
	*out_text = copy;
	return 0;
}

int svc_agent_instructions_set(struct svc_db *db, const char *wid, const char *text, const char *user_id)
{
	struct svc_dbv p[3] = { svc_dbv_str(wid), svc_dbv_str(text),
				user_id && user_id[0] ? svc_dbv_str(user_id) : svc_dbv_null() };

	if (!text[0])
		return svc_db_run(db, STMT_WS_INSTRUCTIONS_DELETE, p, 1, NULL, NULL);
	return svc_db_run(db, STMT_WS_INSTRUCTIONS_PUT, p, 3, NULL, NULL);
}
