/* api_chat.c: chat and plan turns answered as server-sent event streams by the agent, stop, the timeline, and the queued first prompt's turn. */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/agent.h"
#include "agent/history.h"
#include "api/api.h"
#include "api/api_agent.h"
#include "core/err.h"
#include "auth/internal.h"
#include "core/json.h"
#include "core/log.h"
#include "project/publish.h"
#include "project/quota.h"
#include "project/repo.h"

/*
 * A comment line after 1 s of silence. lighttpd and Apache learn that a
 * client left only when a write to it fails, and only then close our FastCGI
 * connection (which tick() watches): without a write, a model that thinks
 * silently would go on generating for nothing. The comments also keep
 * lighttpd's server.max-write-idle and proxies' idle timeouts from ending a
 * quiet stream. docs/operations.md "Chat streams and cancellation".
 */
#define KEEPALIVE_MS 1000
#define HEARTBEAT_MS 10000      /* generation lock refresh; a lock older than 90 s is stale */
#define STOP_POLL_MS 500        /* how often a stop request from another process is looked for */
#define DELTA_STORE_MAX (1024 * 1024)
#define TEXT_MAX 100000         /* code points of a user message */
#define PLAN_MESSAGE_MAX (256 * 1024)

/* State of one turn, shared by the agent's callbacks; resp is NULL when svc-worker runs it. */
struct turn {
	struct svc_db *db;
	const struct svc_config *cfg;
	struct svc_resp *resp;
	int fcgi_fd;                   /* the FastCGI connection, watched for the client leaving; -1 when none */
	const char *chat_id;
	char turn_id[37];
	int client_gone;
	int stop_requested;
	int64_t last_heartbeat_ms;
	int64_t last_stop_poll_ms;
	struct svc_buf deltas;         /* consecutive assistant.message_delta text, stored as one row */
	char *final_text;              /* the assistant.message text, for plans */
};

/* What one turn is asked to do. */
struct turn_spec {
	const char *project_id, *workspace_id, *chat_id, *user_id;
	const char *text;               /* the user message */
	const char *model;              /* the message's model override, or NULL */
	const char *mode;               /* the mode this turn runs in */
	struct json_object *attachments; /* as sent, kept in the user.message event; may be NULL */
	struct json_object *images;      /* as checked by svc_agent_attachments_check(); may be NULL */
	int plan;                        /* parse the final message into the chat's plan */
	int user_stored;                 /* the user.message is in the timeline already (queued first prompt) */
};

static int store_event(struct turn *t, const char *type, struct json_object *event)
{
	return svc_chat_event_store(t->db, t->chat_id, t->turn_id, type, event);
}

/* Stores the text deltas gathered so far as one assistant.message_delta event of the timeline. */
static void flush_deltas(struct turn *t)
{
	struct json_object *o;

	if (!t->deltas.len)
		return;
	o = json_object_new_object();
	json_object_object_add(o, "delta", json_object_new_string_len(t->deltas.data, (int)t->deltas.len));
	json_object_object_add(o, "type", json_object_new_string("assistant.message_delta"));
	if (store_event(t, "assistant.message_delta", o) < 0)
		svc_log_error("chat: cannot store deltas of turn %s", t->turn_id);
	json_object_put(o);
	svc_buf_reset(&t->deltas);
}

/* Sends one event to the client (unless it has gone or there is none) and records it in the timeline. */
static int emit(void *ctx, const char *type, struct json_object *payload)
{
	struct turn *t = ctx;
	struct json_object *ev = json_object_new_object();
	int err = 0;

	json_object_object_foreach(payload, key, val)
		json_object_object_add(ev, key, json_object_get(val));
	if (strcmp(type, "assistant.message_delta") == 0) {
		const char *d = svc_json_str(payload, "delta");
		if (d && svc_buf_adds(&t->deltas, d) == SVC_E_TOO_LARGE) {
			flush_deltas(t);
			svc_buf_adds(&t->deltas, d);
		}
	} else {
		flush_deltas(t);
		json_object_object_add(ev, "type", json_object_new_string(type));
		if (store_event(t, type, ev) < 0)
			svc_log_error("chat: cannot store %s of turn %s", type, t->turn_id);
		if (strcmp(type, "assistant.message") == 0 && svc_json_str(payload, "text")) {
			free(t->final_text);
			t->final_text = strdup(svc_json_str(payload, "text"));
		}
	}
	if (t->resp && !t->client_gone && svc_sse_event(t->resp, type, ev) < 0)
		t->client_gone = 1;
	json_object_put(ev);
	if (t->client_gone)
		err = SVC_E_CLIENT_GONE;
	return err;
}

/*
 * Whether the web server closed our FastCGI connection (its client left):
 * lighttpd closes it at once, which shows as POLLRDHUP/POLLHUP. The request
 * body has been read, so pending input is at most the empty end-of-stdin
 * record or an FCGI_ABORT_REQUEST, neither of which alone means "gone".
 */
static int peer_closed(int fd)
{
	struct pollfd pfd;

	if (fd < 0)
		return 0;
	pfd.fd = fd;
	pfd.events = POLLIN | POLLRDHUP;
	pfd.revents = 0;
	if (poll(&pfd, 1, 0) <= 0)
		return 0;
	return (pfd.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL)) != 0;
}

static int tick(void *ctx)
{
	struct turn *t = ctx;
	int64_t now = svc_mono_ms();
	struct svc_dbv p[2];

	if (t->resp && !t->client_gone &&
	    (peer_closed(t->fcgi_fd) || svc_sse_keepalive(t->resp, KEEPALIVE_MS) < 0))
		t->client_gone = 1;
	if (t->client_gone)
		return SVC_E_CLIENT_GONE;
	p[0] = svc_dbv_str(t->chat_id);
	p[1] = svc_dbv_str(t->turn_id);
	if (now - t->last_heartbeat_ms >= HEARTBEAT_MS) {
		t->last_heartbeat_ms = now;
		svc_db_run(t->db, STMT_GEN_HEARTBEAT, p, 2, NULL, NULL);
	}
	if (now - t->last_stop_poll_ms >= STOP_POLL_MS) {
		struct svc_rows *rows = NULL;
		t->last_stop_poll_ms = now;
		if (svc_db_run(t->db, STMT_GEN_STOP_REQUESTED, p, 2, &rows, NULL) == 0 && rows &&
		    rows->nrows == 1 && svc_rows_get(rows, 0, GSCOL_STOP_REQUESTED) &&
		    strcmp(svc_rows_get(rows, 0, GSCOL_STOP_REQUESTED), "1") == 0)
			t->stop_requested = 1;
		svc_rows_free(rows);
	}
	return t->stop_requested ? SVC_E_CANCELLED : 0;
}

/* A chat title from the first message: its first line, at most 60 characters. */
static void title_from(const char *text, char *out, size_t max)
{
	size_t o = 0, cps = 0;

	while (*text == ' ' || *text == '\n' || *text == '\t' || *text == '\r')
		text++;
	for (; *text && *text != '\n' && o + 4 < max; text++) {
		if (((unsigned char)*text & 0xc0) != 0x80 && ++cps > 60)
			break;
		out[o++] = *text;
	}
	out[o] = '\0';
}

static int chat_get(struct svc_db *db, const char *chat_id, const char *project_id, struct svc_rows **out)
{
	struct svc_dbv p[2] = { svc_dbv_str(chat_id), svc_dbv_str(project_id) };
	struct svc_rows *rows = NULL;
	int err = svc_db_run(db, STMT_CHAT_GET, p, 2, &rows, NULL);

	if (err < 0)
		return err;
	if (!rows || rows->nrows != 1) {
		svc_rows_free(rows);
		return SVC_E_NOT_FOUND;
	}
	*out = rows;
	return 0;
}

static int chat_in_project(struct svc_req *req, const char *chat_id, const char *project_id, struct svc_rows **out)
{
	return chat_get(req->ctx->db, chat_id, project_id, out);
}

/* Emits the final `error` event {error, message}. */
static void emit_error(struct turn *t, int code, const char *message)
{
	struct json_object *e = json_object_new_object();

	json_object_object_add(e, "error", json_object_new_string(svc_err_code(code)));
	json_object_object_add(e, "message", json_object_new_string(message && message[0] ? message : svc_err_message(code)));
	emit(t, "error", e);
	json_object_put(e);
}

/*
 * What the chat's mode means for this turn (SVC_AI_MODES, docs/agent.md
 * "Custom modes"): sets at->all_tools and, for a custom mode with a prompt
 * file, *out_extra (malloc'd, at most SVC_AGENT_PROMPT_EXTRA_MAX bytes; the
 * caller frees it). A malformed table or an unreadable file is logged and the
 * turn goes on as chat would / without the addition.
 */
static void apply_mode(const struct svc_config *cfg, const char *mode, struct svc_agent_turn *at, char **out_extra)
{
	struct svc_agent_mode m;
	char msg[256], *text = NULL;
	size_t n;
	FILE *f;

	*out_extra = NULL;
	if (svc_agent_mode_lookup(cfg->ai_modes, mode, &m, msg, sizeof msg) < 0) {
		svc_log_error("chat: %s; mode %s runs as chat", msg, mode ? mode : "(none)");
		return;
	}
	at->all_tools = m.build;
	if (!m.prompt_file[0])
		return;
	if (!(f = fopen(m.prompt_file, "rb")) || !(text = malloc(SVC_AGENT_PROMPT_EXTRA_MAX + 1))) {
		svc_log_error("chat: cannot read the prompt file %s of mode %s", m.prompt_file, m.name);
		if (f)
			fclose(f);
		return;
	}
	n = fread(text, 1, SVC_AGENT_PROMPT_EXTRA_MAX, f);
	if (ferror(f)) {
		svc_log_error("chat: cannot read the prompt file %s of mode %s", m.prompt_file, m.name);
		n = 0;
	}
	fclose(f);
	text[n] = '\0';
	*out_extra = text;
}

/*
 * Everything between "the lock is held and the user message is stored" and
 * the final event: credits, compaction, the agent, the commit, spend, plan.
 */
static void turn_body(struct turn *t, const struct turn_spec *sp, const struct svc_ai_provider *prov,
		      struct json_object **history, size_t history_chars, int64_t up_to, const char *dir)
{
	struct svc_agent_turn at;
	struct svc_agent_integ integ = { t->db, t->cfg, sp->user_id, sp->project_id, sp->workspace_id };
	struct svc_agent_result result, spent;
	struct svc_outbound_policy outbound;
	struct json_object *done_ev;
	const char *model = sp->model ? sp->model : prov->model;
	char cmsg[200], first[80], sha[41] = "", limit_text[64], *prompt_extra = NULL;
	double pin, pout, limit;
	int rc, changed = 0;

	memset(&result, 0, sizeof result);
	memset(&spent, 0, sizeof spent);
	if (!prov->base_url[0]) {
		emit_error(t, SVC_E_NO_PROVIDER, "No AI provider is configured for this workspace.");
		return;
	}
	if (svc_credit_exhausted(t->db, t->cfg, sp->workspace_id, &limit)) {
		snprintf(limit_text, sizeof limit_text, "The workspace has used its credit of %.2f USD.", limit);
		emit_error(t, SVC_E_CREDIT, limit_text);
		return;
	}
	svc_config_model_price(t->cfg, model, &pin, &pout);
	memset(&at, 0, sizeof at);
	at.provider.protocol = prov->protocol;
	at.provider.base_url = prov->base_url;
	at.provider.api_key = prov->api_key;
	at.provider.model = model;
	at.provider.price_input_per_mtok = pin;
	at.provider.price_output_per_mtok = pout;
	if (prov->from_workspace) {
		/* a workspace's own base URL is a name its admin chose: SSRF guard (docs/operations.md) */
		svc_outbound_policy_load(t->cfg, &outbound);
		at.provider.outbound = &outbound;
	}
	at.project_dir = dir;
	/* the agent's writes stay within the repository quota and what the workspace's quota leaves
	 * (SVC_QUOTA_WORKSPACE_BYTES, as the turn starts; a tool error past it) */
	{
		uint64_t now = 0, left = UINT64_MAX;
		if (svc_quota_repo_room(t->db, t->cfg, sp->workspace_id, sp->project_id, dir, &now, &left) < 0)
			at.repo_quota_bytes = svc_quota_limit(t->cfg, NULL, SVC_QUOTA_REPO_BYTES);
		else
			at.repo_quota_bytes = left == UINT64_MAX ? 0 : now + left;
	}
	at.mode = sp->mode;
	apply_mode(t->cfg, sp->mode, &at, &prompt_extra);
	at.prompt_extra = prompt_extra;
	at.history = *history;
	at.user_text = sp->text;
	at.images = sp->images;
	at.retry_max_secs = t->cfg->ai_retry_max_secs > 0 ? t->cfg->ai_retry_max_secs : -1;
	at.idle_secs = (long)t->cfg->ai_idle_secs;
	at.emit = emit;
	at.tick = tick;
	at.ctx = t;
	at.integ = &integ;
	rc = t->client_gone ? SVC_E_CLIENT_GONE : 0;
	if (rc == 0)
		rc = svc_agent_compact(t->db, t->chat_id, &at, svc_config_model_context(t->cfg, model), history_chars,
				       up_to, history, &spent, result.message, sizeof result.message);
	if (rc == 0)
		rc = svc_agent_run(&at, &result);
	free(prompt_extra);
	flush_deltas(t);
	spent.input_tokens += result.input_tokens;
	spent.output_tokens += result.output_tokens;
	svc_credit_add_spend(t->db, sp->workspace_id, (double)spent.input_tokens * pin / 1e6 + (double)spent.output_tokens * pout / 1e6);

	/* Whatever the outcome, files already written become one commit: nothing is lost. */
	title_from(sp->text, first, sizeof first);
	snprintf(cmsg, sizeof cmsg, "Agent: %s", first);
	if (svc_repo_commit_all(dir, cmsg, "svc agent", "agent@svc.invalid", sha, &changed) < 0)
		svc_log_error("chat: commit of turn %s failed", t->turn_id);
	if (changed) {
		struct svc_dbv p = svc_dbv_str(sp->project_id);
		svc_db_run(t->db, STMT_PROJECT_TOUCH, &p, 1, NULL, NULL);
		svc_internal_notify_files(t->cfg, t->db, sp->project_id); /* the live document takes the change (svc-wsd) */
		svc_preview_build_request(t->db, t->cfg, sp->project_id);
	}
	if (rc == 0 && sp->plan) {
		struct json_object *plan = NULL, *ev;
		struct svc_dbv p[3];

		if (svc_agent_plan_parse(t->final_text ? t->final_text : "", &plan) == 0) {
			p[0] = svc_dbv_str(t->chat_id);
			p[1] = svc_dbv_str(t->turn_id);
			p[2] = svc_dbv_str(json_object_to_json_string_ext(plan, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
			if (svc_db_run(t->db, STMT_AGENT_PLAN_INSERT, p, 3, NULL, NULL) < 0)
				svc_log_error("chat: cannot store the plan of turn %s", t->turn_id);
			ev = json_object_new_object();
			json_object_object_add(ev, "plan", plan);
			emit(t, "plan.created", ev);
			json_object_put(ev);
		}
	}
	if (rc == SVC_E_NO_PROVIDER || rc == SVC_E_MODEL_UNAVAILABLE || rc == SVC_E_CREDIT ||
	    (rc < 0 && rc != SVC_E_CLIENT_GONE && rc != SVC_E_CANCELLED)) {
		int code = (rc == SVC_E_NO_PROVIDER || rc == SVC_E_MODEL_UNAVAILABLE || rc == SVC_E_CREDIT) ? rc
													  : SVC_E_INTERNAL;
		emit_error(t, code, result.message);
	} else {
		/* also after the client left: the timeline records how the turn ended */
		done_ev = json_object_new_object();
		json_object_object_add(done_ev, "stopped", json_object_new_boolean(rc == SVC_E_CANCELLED || rc == SVC_E_CLIENT_GONE));
		if (rc == SVC_E_CLIENT_GONE)
			json_object_object_add(done_ev, "reason", json_object_new_string("client_gone"));
		json_object_object_add(done_ev, "filesChanged", json_object_new_boolean(changed));
		json_object_object_add(done_ev, "commit", changed ? json_object_new_string(sha) : NULL);
		emit(t, "session.task_complete", done_ev);
		json_object_put(done_ev);
	}
}

/*
 * Checks a model override: the provider's default model and the models of its
 * allowed list pass; with no list, the instance's provider takes only models
 * with a price (SVC_AI_PRICES), so no turn escapes the credits by naming a
 * model that would cost 0 (a workspace's own provider bills the workspace).
 * Returns 0, or SVC_E_VALIDATION with resp's message set.
 */
static int model_allowed(const struct svc_config *cfg, const struct svc_ai_provider *prov, const char *model,
			 struct svc_resp *resp)
{
	if (!model || !prov->base_url[0] || strcmp(model, prov->model) == 0)
		return 0;
	if (prov->allowed_models[0]) {
		if (svc_config_list_has(prov->allowed_models, model))
			return 0;
		return svc_resp_error(resp, SVC_E_VALIDATION, "model", "model %.200s is not one of the provider's allowed models",
				      model);
	}
	if (prov->from_workspace || svc_config_model_priced(cfg, model))
		return 0;
	return svc_resp_error(resp, SVC_E_VALIDATION, "model",
			      "model %.200s has no price on this instance (an admin adds it to SVC_AI_PRICES)", model);
}

/* Takes the chat's generation lock for turn `turn_id`. Returns 0, SVC_E_CONFLICT or a DB error. */
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

/*
 * Takes the chat's generation lock for turn `turn_id` of `user_id` in
 * `workspace_id`: one generation per chat (SVC_E_CONFLICT), at most
 * SVC_AI_MAX_TURNS_PER_USER running for the user and
 * SVC_AI_MAX_TURNS_PER_WORKSPACE in the workspace (SVC_E_RATE_LIMITED), the
 * counts and the insert in one transaction with the user's and the
 * workspace's rows locked, so two requests cannot both take the last place.
 */
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

static int lock_chat(struct svc_db *db, const struct svc_config *cfg, const char *chat_id, const char *turn_id,
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

static void unlock_chat(struct svc_db *db, const char *chat_id, const char *turn_id)
{
	struct svc_dbv p[2] = { svc_dbv_str(chat_id), svc_dbv_str(turn_id) };

	svc_db_run(db, STMT_GEN_DELETE, p, 2, NULL, NULL);
}

/* Stores the user.message event and names an untitled chat after it. */
static int store_user_message(struct turn *t, const struct turn_spec *sp)
{
	struct json_object *ev = json_object_new_object();
	struct svc_dbv p[2];
	char title[256];
	int err;

	json_object_object_add(ev, "text", json_object_new_string(sp->text));
	json_object_object_add(ev, "attachments", sp->attachments ? json_object_get(sp->attachments) : json_object_new_array());
	json_object_object_add(ev, "type", json_object_new_string("user.message"));
	err = store_event(t, "user.message", ev);
	json_object_put(ev);
	if (err < 0)
		return err;
	title_from(sp->text, title, sizeof title);
	p[0] = svc_dbv_str(title);
	p[1] = svc_dbv_str(t->chat_id);
	svc_db_run(t->db, STMT_CHAT_TOUCH, p, 2, NULL, NULL);
	return 0;
}

/*
 * A streamed turn for an HTTP client: everything after the request was
 * validated and the project and chat found. Answers 400 (model), 409, or the
 * stream. `set_mode` (may be NULL) becomes the chat's mode once the lock is held.
 */
static int stream_turn(struct svc_req *req, struct svc_resp *resp, struct turn_spec *sp, const char *set_mode)
{
	const struct svc_config *cfg = &req->ctx->cfg;
	struct svc_ai_provider prov;
	struct json_object *history = NULL;
	struct turn t;
	char dir[2048];
	size_t hchars = 0;
	int64_t up_to;
	int err, locked = 0, have_prov = 0;

	memset(&t, 0, sizeof t);
	svc_buf_init(&t.deltas, DELTA_STORE_MAX);
	t.db = req->ctx->db;
	t.cfg = cfg;
	t.resp = resp;
	t.fcgi_fd = req->fcgi ? req->fcgi->ipcFd : -1;
	t.chat_id = sp->chat_id;
	if ((err = svc_project_dir(cfg, sp->project_id, dir, sizeof dir)) < 0 || (err = svc_uuid_v4(t.turn_id)) < 0)
		goto done;
	if ((err = svc_ai_provider_resolve(t.db, cfg, sp->workspace_id, &prov)) < 0) {
		if (err == SVC_E_UNAVAILABLE || err == SVC_E_VALIDATION) {
			err = SVC_E_UNAVAILABLE;
			svc_resp_error(resp, err, NULL, "The workspace's AI provider key cannot be read.");
		}
		goto done;
	}
	have_prov = 1;
	if ((err = model_allowed(cfg, &prov, sp->model, resp)) < 0)
		goto done;
	/* One generation per chat, across every responder process; a few per user and workspace. */
	if ((err = lock_chat(t.db, cfg, t.chat_id, t.turn_id, sp->user_id, sp->workspace_id)) < 0) {
		if (err == SVC_E_CONFLICT)
			svc_resp_error(resp, err, NULL, "A generation is already running in this chat.");
		else if (err == SVC_E_RATE_LIMITED) {
			svc_resp_header(resp, "Retry-After", "5");
			svc_resp_error(resp, err, NULL,
				       "Too many answers are being written at once for you or your workspace; "
				       "wait for one to finish.");
		}
		goto done;
	}
	locked = 1;
	if (set_mode) {
		struct svc_dbv p[2] = { svc_dbv_str(set_mode), svc_dbv_str(t.chat_id) };
		if ((err = svc_db_run(t.db, STMT_AGENT_CHAT_SET_MODE, p, 2, NULL, NULL)) < 0)
			goto done;
	}
	/* a timeline that cannot be read is a 503 (Retry-After), never a turn without its history */
	if ((err = svc_agent_history_load(t.db, t.chat_id, &history, &hchars)) < 0 ||
	    (err = svc_agent_history_last_event(t.db, t.chat_id, &up_to)) < 0)
		goto done;
	if ((err = store_user_message(&t, sp)) < 0)
		goto done;
	if (svc_sse_begin(resp) < 0)
		t.client_gone = 1;
	t.last_heartbeat_ms = t.last_stop_poll_ms = svc_mono_ms();
	turn_body(&t, sp, &prov, &history, hchars, up_to, dir);
	err = 0;
done:
	if (locked)
		unlock_chat(t.db, t.chat_id, t.turn_id);
	if (have_prov)
		svc_ai_provider_dispose(&prov);
	json_object_put(history);
	free(t.final_text);
	svc_buf_dispose(&t.deltas);
	return err;
}

/* The body of a chat or plan message (checked by the router). */
static const struct svc_field message_fields[] = {
	{ "chatId", SVC_V_UUID, SVC_F_REQUIRED, 0, 0, NULL },
	{ "text", SVC_V_TEXT, SVC_F_REQUIRED, 1, TEXT_MAX, NULL },
	{ "model", SVC_V_STR, SVC_F_NULLABLE, 1, 200, NULL },
	{ "attachments", SVC_V_ARRAY, SVC_F_NULLABLE, 0, 10, NULL },
};
const struct svc_body svc_api_chat_send_body = SVC_BODY(message_fields);
const struct svc_body svc_api_plan_send_body = SVC_BODY(message_fields);

/* Fills sp's chat id, text, model and attachments (NULL when absent or null) from the checked body. */
static void message_unpack(struct svc_req *req, struct turn_spec *sp)
{
	sp->chat_id = svc_json_str(req->json, "chatId");
	sp->text = svc_json_str(req->json, "text");
	sp->model = svc_json_str(req->json, "model");
	sp->attachments = NULL;
	json_object_object_get_ex(req->json, "attachments", &sp->attachments);
	if (sp->attachments && json_object_is_type(sp->attachments, json_type_null))
		sp->attachments = NULL;
}

/* The parts of a message turn after its fields: project, chat, attachments, then the stream. */
static enum svc_err message_turn(struct svc_req *req, struct svc_resp *resp, int plan)
{
	const char *project_id = svc_req_param(req, "projectId");
	struct svc_rows *project = NULL, *chat = NULL;
	struct turn_spec sp;
	char msg[256];
	int err;

	memset(&sp, 0, sizeof sp);
	message_unpack(req, &sp);
	if ((err = svc_project_load(req, project_id, SVC_ACT_WRITE, &project)) < 0)
		return err;
	if ((err = chat_in_project(req, sp.chat_id, project_id, &chat)) < 0) {
		svc_resp_error(resp, err, "chatId", "No chat with this id in this project.");
		goto done;
	}
	if ((err = svc_agent_attachments_check(sp.attachments, &sp.images, msg, sizeof msg)) < 0) {
		svc_resp_error(resp, err, "attachments", "%s", msg);
		goto done;
	}
	sp.project_id = project_id;
	sp.workspace_id = svc_rows_get(project, 0, PCOL_WORKSPACE);
	sp.user_id = req->user_id;
	sp.plan = plan;
	sp.mode = plan ? "plan" : svc_rows_get(chat, 0, CCOL_MODE);
	err = stream_turn(req, resp, &sp, plan ? "plan" : NULL);
done:
	json_object_put(sp.images);
	svc_rows_free(chat);
	svc_rows_free(project);
	return err;
}

/*
 * POST /chat/:projectId/messages {chatId, text, model?, attachments?}: 200
 * text/event-stream; before the stream: 400 validation_failed (also a model
 * the provider does not allow, a bad attachment), 403, 404 (project or
 * chat), 409 (a generation is already running in this chat), 413 (an image
 * over 5 MiB).
 */
enum svc_err svc_api_chat_send(struct svc_req *req, struct svc_resp *resp)
{
	return message_turn(req, resp, 0);
}

/* POST /plan/:projectId {chatId, text, model?, attachments?}: as svc_api_chat_send, in plan mode. */
enum svc_err svc_api_plan_send(struct svc_req *req, struct svc_resp *resp)
{
	return message_turn(req, resp, 1);
}

/* Loads the newest plan of a chat as a new object. Returns 0, SVC_E_NOT_FOUND or a DB error. */
static int plan_latest(struct svc_db *db, const char *chat_id, struct json_object **out, char *created, size_t max)
{
	struct svc_dbv p = svc_dbv_str(chat_id);
	struct svc_rows *rows = NULL;
	const char *text;
	int err;

	if ((err = svc_db_run(db, STMT_AGENT_PLAN_LATEST, &p, 1, &rows, NULL)) < 0)
		return err;
	err = SVC_E_NOT_FOUND;
	if (rows && rows->nrows == 1 && (text = svc_rows_get(rows, 0, PLCOL_PLAN)) &&
	    svc_json_parse_object(text, strlen(text), out) == 0) {
		snprintf(created, max, "%s", svc_rows_get(rows, 0, PLCOL_CREATED) ? svc_rows_get(rows, 0, PLCOL_CREATED) : "");
		err = 0;
	}
	svc_rows_free(rows);
	return err;
}

/* GET /plan/:projectId/:chatId: 200 {steps, rawText, chatId, createdAt}; 403; 404 (project, chat, no plan). */
enum svc_err svc_api_plan_get(struct svc_req *req, struct svc_resp *resp)
{
	const char *project_id = svc_req_param(req, "projectId"), *chat_id = svc_req_param(req, "chatId");
	struct svc_rows *project = NULL, *chat = NULL;
	struct json_object *plan = NULL;
	char created[64];
	int err;

	if ((err = svc_project_load(req, project_id, SVC_ACT_READ, &project)) < 0)
		return err;
	if ((err = chat_in_project(req, chat_id, project_id, &chat)) < 0)
		goto done;
	if ((err = plan_latest(req->ctx->db, chat_id, &plan, created, sizeof created)) < 0) {
		if (err == SVC_E_NOT_FOUND)
			svc_resp_error(resp, err, NULL, "This chat has no plan yet.");
		goto done;
	}
	svc_json_add_str(plan, "chatId", chat_id);
	svc_json_add_time(plan, "createdAt", created[0] ? created : NULL);
	svc_resp_json(resp, 200, plan);
done:
	svc_rows_free(chat);
	svc_rows_free(project);
	return err;
}

/*
 * POST /plan/:projectId/:chatId/run: the chat switches to build mode and the
 * plan becomes the next user message; 200 stream; 403; 404 (no plan); 409.
 */
enum svc_err svc_api_plan_run(struct svc_req *req, struct svc_resp *resp)
{
	const char *project_id = svc_req_param(req, "projectId"), *chat_id = svc_req_param(req, "chatId");
	struct svc_rows *project = NULL, *chat = NULL;
	struct json_object *plan = NULL;
	struct turn_spec sp;
	char created[64], *text = NULL;
	int err;

	memset(&sp, 0, sizeof sp);
	if ((err = svc_project_load(req, project_id, SVC_ACT_WRITE, &project)) < 0)
		return err;
	if ((err = chat_in_project(req, chat_id, project_id, &chat)) < 0)
		goto done;
	if ((err = plan_latest(req->ctx->db, chat_id, &plan, created, sizeof created)) < 0 ||
	    (err = svc_agent_plan_message(plan, PLAN_MESSAGE_MAX, &text)) < 0) {
		if (err == SVC_E_NOT_FOUND || err == SVC_E_TOO_LARGE) {
			err = SVC_E_NOT_FOUND;
			svc_resp_error(resp, err, NULL, "This chat has no plan to run.");
		}
		goto done;
	}
	sp.project_id = project_id;
	sp.workspace_id = svc_rows_get(project, 0, PCOL_WORKSPACE);
	sp.chat_id = chat_id;
	sp.user_id = req->user_id;
	sp.text = text;
	sp.mode = "build";
	err = stream_turn(req, resp, &sp, "build");
done:
	free(text);
	json_object_put(plan);
	svc_rows_free(chat);
	svc_rows_free(project);
	return err;
}

static const struct svc_field stop_fields[] = {
	{ "chatId", SVC_V_UUID, SVC_F_REQUIRED, 0, 0, NULL },
};
const struct svc_body svc_api_chat_stop_body = SVC_BODY(stop_fields);

/* POST /chat/:projectId/stop {chatId}: 200 {chatId, stopRequested}; 400; 403; 404. */
enum svc_err svc_api_chat_stop(struct svc_req *req, struct svc_resp *resp)
{
	const char *project_id = svc_req_param(req, "projectId"), *chat_id;
	struct svc_rows *project = NULL, *chat = NULL;
	struct json_object *o;
	struct svc_dbv p;
	uint64_t affected = 0;
	int err;

	chat_id = svc_json_str(req->json, "chatId");
	if ((err = svc_project_load(req, project_id, SVC_ACT_WRITE, &project)) < 0)
		return err;
	if ((err = chat_in_project(req, chat_id, project_id, &chat)) < 0) {
		svc_resp_error(resp, err, "chatId", "No chat with this id in this project.");
		goto done;
	}
	p = svc_dbv_str(chat_id);
	if ((err = svc_db_run(req->ctx->db, STMT_GEN_REQUEST_STOP, &p, 1, NULL, &affected)) < 0)
		goto done;
	o = json_object_new_object();
	svc_json_add_str(o, "chatId", chat_id);
	json_object_object_add(o, "stopRequested", json_object_new_boolean(affected > 0));
	svc_resp_json(resp, 200, o);
done:
	svc_rows_free(chat);
	svc_rows_free(project);
	return err;
}

/*
 * GET /chat/:projectId/messages?chatId&before&limit: 200 {items, nextCursor}
 * (items oldest first within the page; nextCursor is the `before` of the
 * next, older page, null at the start); 400; 403; 404.
 */
enum svc_err svc_api_chat_history(struct svc_req *req, struct svc_resp *resp)
{
	const char *project_id = svc_req_param(req, "projectId");
	char chat_id[64], before[32], lim[16];
	uint64_t limit = 50, before_id = (uint64_t)INT64_MAX;
	struct svc_rows *project = NULL, *chat = NULL, *rows = NULL;
	struct json_object *body, *items;
	struct svc_dbv p[3];
	size_t shown, i;
	int err, q;

	if ((q = svc_req_query(req, "chatId", chat_id, sizeof chat_id)) <= 0 || !svc_uuid_valid(chat_id))
		return svc_resp_error(resp, SVC_E_VALIDATION, "chatId", "chatId must be a UUID");
	if ((q = svc_req_query(req, "limit", lim, sizeof lim)) < 0 ||
	    (q && (svc_parse_u64(lim, 200, &limit) < 0 || limit == 0)))
		return svc_resp_error(resp, SVC_E_VALIDATION, "limit", "limit must be an integer from 1 to 200");
	if ((q = svc_req_query(req, "before", before, sizeof before)) < 0 ||
	    (q && svc_parse_u64(before, (uint64_t)INT64_MAX, &before_id) < 0))
		return svc_resp_error(resp, SVC_E_VALIDATION, "before", "before is not a cursor this API returned");
	if ((err = svc_project_load(req, project_id, SVC_ACT_READ, &project)) < 0)
		return err;
	if ((err = chat_in_project(req, chat_id, project_id, &chat)) < 0)
		goto done;
	p[0] = svc_dbv_str(chat_id);
	p[1] = svc_dbv_i64((int64_t)before_id);
	p[2] = svc_dbv_i64((int64_t)limit + 1);
	if ((err = svc_db_run(req->ctx->db, STMT_EVENT_PAGE, p, 3, &rows, NULL)) < 0)
		goto done;
	body = json_object_new_object();
	items = json_object_new_array();
	shown = rows ? (rows->nrows > limit ? limit : rows->nrows) : 0;
	for (i = shown; i > 0; i--) {
		struct json_object *ev = NULL;
		const char *payload = svc_rows_get(rows, i - 1, ECOL_PAYLOAD);
		if (!payload || svc_json_parse_object(payload, strlen(payload), &ev) < 0)
			ev = json_object_new_object();
		json_object_object_add(ev, "type", json_object_new_string(svc_rows_get(rows, i - 1, ECOL_TYPE)));
		json_object_object_add(ev, "id", json_object_new_string(svc_rows_get(rows, i - 1, ECOL_ID)));
		svc_json_add_str(ev, "turnId", svc_rows_get(rows, i - 1, ECOL_TURN));
		svc_json_add_time(ev, "createdAt", svc_rows_get(rows, i - 1, ECOL_CREATED));
		json_object_array_add(items, ev);
	}
	json_object_object_add(body, "items", items);
	if (rows && rows->nrows > limit)
		json_object_object_add(body, "nextCursor", json_object_new_string(svc_rows_get(rows, shown - 1, ECOL_ID)));
	else
		json_object_object_add(body, "nextCursor", NULL);
	svc_resp_json(resp, 200, body);
done:
	svc_rows_free(rows);
	svc_rows_free(chat);
	svc_rows_free(project);
	return err;
}

int svc_chat_job_first_prompt(void *ctx, const struct svc_job *job, char *errmsg, size_t errmax)
{
	struct svc_ctx *sctx = ctx;
	struct svc_db *db = sctx->db;
	struct json_object *payload = NULL, *history = NULL;
	struct svc_rows *project = NULL, *chat = NULL;
	struct svc_ai_provider prov;
	struct turn_spec sp;
	struct turn t;
	struct svc_dbv p[5];
	const char *turn_id;
	char dir[2048];
	size_t hchars = 0;
	int64_t up_to;
	int err, locked = 0, have_prov = 0;

	memset(&t, 0, sizeof t);
	memset(&sp, 0, sizeof sp);
	svc_buf_init(&t.deltas, DELTA_STORE_MAX);
	t.db = db;
	t.cfg = &sctx->cfg;
	t.fcgi_fd = -1;
	if (svc_json_parse_object(job->payload, strlen(job->payload), &payload) < 0) {
		snprintf(errmsg, errmax, "the payload is not a JSON object");
		err = SVC_E_VALIDATION;
		goto done;
	}
	sp.project_id = svc_json_str(payload, "projectId");
	sp.chat_id = svc_json_str(payload, "chatId");
	sp.user_id = svc_json_str(payload, "userId");
	sp.text = svc_json_str(payload, "text");
	turn_id = svc_json_str(payload, "turnId");
	if (!sp.project_id || !sp.chat_id || !sp.user_id || !sp.text || !turn_id || !svc_uuid_valid(turn_id)) {
		snprintf(errmsg, errmax, "the payload lacks projectId, chatId, userId, turnId or text");
		err = SVC_E_VALIDATION;
		goto done;
	}
	memcpy(t.turn_id, turn_id, 37);
	t.chat_id = sp.chat_id;
	p[0] = svc_dbv_str(sp.user_id);
	p[1] = svc_dbv_str(sp.user_id);
	p[2] = svc_dbv_str(sp.project_id);
	p[3] = svc_dbv_i64(0);
	p[4] = svc_dbv_i64(0);
	if ((err = svc_db_run(db, STMT_PROJECT_GET_STATE, p, 5, &project, NULL)) < 0)
		goto done;
	if (!project || project->nrows != 1 || chat_get(db, sp.chat_id, sp.project_id, &chat) < 0) {
		err = 0; /* deleted since: nothing to do */
		goto done;
	}
	sp.workspace_id = svc_rows_get(project, 0, PCOL_WORKSPACE);
	sp.mode = svc_rows_get(chat, 0, CCOL_MODE);
	sp.user_stored = 1;
	if ((err = svc_project_dir(t.cfg, sp.project_id, dir, sizeof dir)) < 0)
		goto done;
	if ((err = svc_ai_provider_resolve(db, t.cfg, sp.workspace_id, &prov)) < 0) {
		snprintf(errmsg, errmax, "the workspace's provider cannot be read");
		goto done;
	}
	have_prov = 1;
	if ((err = lock_chat(db, t.cfg, t.chat_id, t.turn_id, sp.user_id, sp.workspace_id)) < 0) {
		if (err == SVC_E_RATE_LIMITED) /* the job waits without using an attempt (lib/db/jobs.h) */
			snprintf(errmsg, errmax, "the user's or workspace's turns running at once are at their cap");
		else
			snprintf(errmsg, errmax, "another generation runs in chat %s", t.chat_id);
		goto done;
	}
	locked = 1;
	if ((err = svc_agent_history_load(db, t.chat_id, &history, &hchars)) < 0 ||
	    (err = svc_agent_history_last_event(db, t.chat_id, &up_to)) < 0) {
		snprintf(errmsg, errmax, "the chat's timeline cannot be read: %s", svc_err_code(err));
		goto done; /* run again later (lib/db/jobs.h), never without the history */
	}
	/* the queued user.message is already stored: it is the last history entry; the agent adds it itself */
	if (json_object_array_length(history) > 0)
		json_object_array_del_idx(history, json_object_array_length(history) - 1, 1);
	t.last_heartbeat_ms = t.last_stop_poll_ms = svc_mono_ms();
	turn_body(&t, &sp, &prov, &history, hchars, up_to, dir);
	err = 0;
done:
	if (locked)
		unlock_chat(db, t.chat_id, t.turn_id);
	if (have_prov)
		svc_ai_provider_dispose(&prov);
	json_object_put(history);
	json_object_put(payload);
	free(t.final_text);
	svc_buf_dispose(&t.deltas);
	svc_rows_free(chat);
	svc_rows_free(project);
	return err;
}
