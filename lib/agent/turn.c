/* turn.c: one chat turn, from the stored user message to its final event: lock, provider, credit, history, the agent, commit, spend, plan; streamed to a client or run for a queued job. */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/agent.h"
#include "agent/budget.h"
#include "agent/check.h"
#include "agent/credits.h"
#include "agent/history.h"
#include "agent/turn.h"
#include "auth/internal.h"
#include "core/err.h"
#include "core/fsx.h"
#include "core/json.h"
#include "core/log.h"
#include "core/outbound.h"
#include "project/project.h"
#include "project/gitio.h"
#include "project/preview_build.h"
#include "project/preview_check.h"
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

/* State of one turn, shared by the agent's callbacks; resp is NULL when no client watches (a queued turn). */
struct svc_agent_chat {
	struct svc_db *db;
	const struct svc_config *cfg;
	struct svc_agent_chat_spec spec;
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
	struct svc_agent_provider_choice prov;
	int have_prov, locked;
	struct json_object *history;   /* the conversation before this turn (svc_agent_history_load()) */
	size_t history_chars;
	int64_t up_to;                 /* the last event before this turn */
	char dir[2048];                /* the project's files */
	/* spending caps (lib/agent/budget.h, docs/agent.md "Spending caps") */
	struct svc_agent_spender who;
	struct svc_agent_budget budget;
	double spent[SVC_AGENT_CAP__MAX];  /* as the turn started, then after each provider call; [TURN] the turn's own */
	int warned[SVC_AGENT_CAP__MAX];    /* a session.budget_warning of that cap was sent in this turn */
	int stop_cap;                      /* the blocking cap the turn reached (on_spend()), -1 while none */
	int spend_lost;                    /* a provider call's spend could not be recorded: the turn ended (on_spend()) */
	double pin, pout;                  /* the model's prices, USD per million tokens */
	/* instructions (docs/agent.md "Project instructions") */
	char *ws_instructions, *agents_md;
	char *user_text;                   /* the message with the elements it points at (svc_agent_attachments_elements()) */
	char agents_note[200];
	int build;                         /* the turn's mode has every tool (the preview check follows its changes) */
	struct json_object *images;        /* the message's images and the crops of the elements it points at; NULL: spec.images */
};

/* What a turn's run produced, passed between its steps. */
struct outcome {
	int rc;                        /* what the agent (or compaction) returned */
	struct svc_agent_result result;
	int changed;                   /* the commit changed files */
	char sha[41];
};

static int store_event(struct svc_agent_chat *t, const char *type, struct json_object *event)
{
	return svc_chat_event_store(t->db, t->chat_id, t->turn_id, type, event);
}

/* Stores the text deltas gathered so far as one assistant.message_delta event of the timeline. */
static void flush_deltas(struct svc_agent_chat *t)
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
	struct svc_agent_chat *t = ctx;
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

/* The agent's tick: the client still there, the lock's heartbeat, a stop requested from any process. */
static int tick(void *ctx)
{
	struct svc_agent_chat *t = ctx;
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

int svc_agent_chat_get(struct svc_db *db, const char *chat_id, const char *project_id, struct svc_rows **out)
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

/* Emits the final `error` event {error, message}. */
static void emit_error(struct svc_agent_chat *t, int code, const char *message)
{
	struct json_object *e = json_object_new_object();

	json_object_object_add(e, "error", json_object_new_string(svc_err_code(code)));
	json_object_object_add(e, "message", json_object_new_string(message && message[0] ? message : svc_err_message(code)));
	emit(t, "error", e);
	json_object_put(e);
}

/* ---- spending caps (lib/agent/budget.h, docs/agent.md "Spending caps") ---- */

/* Whether the turn has any cap to hold its spend against. */
static int budget_any(const struct svc_agent_chat *t)
{
	int i;

	for (i = 0; i < SVC_AGENT_CAP__MAX; i++) {
		if (t->budget.caps[i].set)
			return 1;
	}
	return 0;
}

/* Emits session.budget_warning once a turn for each cap at or over its warning level (a blocking cap reached is not a warning). */
static void budget_warnings(struct svc_agent_chat *t)
{
	struct json_object *ev;
	int i;

	for (i = 0; i < SVC_AGENT_CAP__MAX; i++) {
		if (t->warned[i] || !svc_agent_budget_warns(&t->budget, i, t->spent[i]) ||
		    (t->budget.caps[i].block && t->spent[i] >= t->budget.caps[i].limit_usd))
			continue;
		t->warned[i] = 1;
		if ((ev = svc_agent_budget_event(&t->budget, i, t->spent[i], "Warning", NULL, 0))) {
			emit(t, "session.budget_warning", ev);
			json_object_put(ev);
		}
	}
}

/*
 * Before any provider call: the caps of the workspace (the member's own daily cap in place of
 * its per-member one, and SVC_AGENT_TURN_MAX_USD) against what was spent; a blocking cap
 * reached ends the turn with credit_exhausted {error, message, cap} naming it. Caps that
 * cannot be read end it with service_unavailable. Returns 0 or -1 (ended).
 */
static int budget_check(struct svc_agent_chat *t)
{
	struct json_object *ev, *e;
	char msg[400];
	int cap;

	t->who.workspace_id = t->spec.workspace_id;
	t->who.user_id = t->spec.user_id;
	t->who.project_id = t->spec.project_id;
	t->who.token_id = t->spec.token_id;
	if (svc_agent_budget_load(t->db, t->spec.workspace_id, &t->budget) < 0 ||
	    svc_agent_budget_member(t->db, t->spec.workspace_id, t->spec.user_id, &t->budget) < 0 ||
	    svc_agent_budget_spent(t->db, &t->who, t->spent) < 0) {
		emit_error(t, SVC_E_UNAVAILABLE, "The workspace's spending caps cannot be read; try again shortly.");
		return -1;
	}
	svc_agent_budget_instance(t->cfg, &t->budget);
	if ((cap = svc_agent_budget_blocked(&t->budget, t->spent)) >= 0) {
		ev = svc_agent_budget_event(&t->budget, cap, t->spent[cap], "Refused", msg, sizeof msg);
		json_object_put(ev);
		e = json_object_new_object();
		svc_json_add_str(e, "error", svc_err_code(SVC_E_CREDIT));
		svc_json_add_str(e, "message", msg);
		svc_json_add_str(e, "cap", svc_agent_cap_name(cap));
		emit(t, "error", e);
		json_object_put(e);
		return -1;
	}
	budget_warnings(t);
	return 0;
}

/*
 * The agent's spend callback (svc_agent_spend_fn), also run for a compaction: records the call's
 * cost with the credit in one transaction, reads the spend back when a cap is set (other hosts'
 * turns count too), warns, and returns 1 when a blocking cap is reached (t->stop_cap), so no
 * further provider call is made; else 0. finish() tells the client (session.budget_stopped).
 * A spend that cannot be recorded fails closed: SVC_E_UNAVAILABLE (t->spend_lost) ends the turn
 * before the call's tools and any further call, and finish() sends the error that says so.
 */
static int on_spend(void *ctx, int64_t input_tokens, int64_t output_tokens)
{
	struct svc_agent_chat *t = ctx;
	double cost = (double)input_tokens * t->pin / 1e6 + (double)output_tokens * t->pout / 1e6, turn;
	int cap, i;

	if (!(cost > 0))
		return 0;
	if (svc_agent_budget_record(t->db, &t->who, cost) < 0) {
		svc_log_error("chat: turn %s stops: the spend of its last provider call was not recorded", t->turn_id);
		t->spend_lost = 1;
		return SVC_E_UNAVAILABLE;
	}
	turn = t->spent[SVC_AGENT_CAP_TURN] + cost;
	if (!budget_any(t))
		return 0;
	if (svc_agent_budget_spent(t->db, &t->who, t->spent) < 0) {
		for (i = 0; i < SVC_AGENT_CAP_TURN; i++)
			t->spent[i] += cost;
	}
	t->spent[SVC_AGENT_CAP_TURN] = turn;
	budget_warnings(t);
	if ((cap = svc_agent_budget_blocked(&t->budget, t->spent)) < 0)
		return 0;
	t->stop_cap = cap;
	return 1;
}

#define AGENTS_MD_READ_MAX (4 * 1024 * 1024) /* bytes of AGENTS.md read at all; SVC_AGENT_INSTRUCTIONS_MAX_BYTES of it are used */

/* The workspace's instructions and the project's AGENTS.md for the system prompt (docs/agent.md "Project instructions"). */
static void load_instructions(struct svc_agent_chat *t)
{
	size_t len = 0;
	int err;

	if (svc_agent_instructions_get(t->db, t->spec.workspace_id, &t->ws_instructions, NULL, 0) < 0)
		svc_log_error("chat: the instructions of workspace %s cannot be read", t->spec.workspace_id);
	err = svc_fsx_read(t->dir, "AGENTS.md", AGENTS_MD_READ_MAX, &t->agents_md, &len);
	if (err == SVC_E_TOO_LARGE)
		snprintf(t->agents_note, sizeof t->agents_note,
			 "[svc: the project's AGENTS.md is larger than %d MiB and was left out of these instructions.]",
			 AGENTS_MD_READ_MAX >> 20);
	if (err == 0 && !svc_utf8_valid(t->agents_md, len)) {
		free(t->agents_md);
		t->agents_md = NULL;
		snprintf(t->agents_note, sizeof t->agents_note,
			 "[svc: the project's AGENTS.md is not valid UTF-8 text and was left out of these instructions.]");
	}
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

/* ---- the steps of a turn's run, in order (run_turn) ---- */

/* Whether the turn may run at all: a provider, credit left. Emits the final error and returns -1 when not. */
static int can_run(struct svc_agent_chat *t)
{
	char limit_text[64];
	double limit;

	if (!t->prov.base_url[0]) {
		emit_error(t, SVC_E_NO_PROVIDER, "No AI provider is configured for this workspace.");
		return -1;
	}
	if (svc_agent_credit_exhausted(t->db, t->cfg, t->spec.workspace_id, &limit)) {
		snprintf(limit_text, sizeof limit_text, "The workspace has used its credit of %.2f USD.", limit);
		emit_error(t, SVC_E_CREDIT, limit_text);
		return -1;
	}
	return budget_check(t);
}

/*
 * The bytes the agent's writes may fill: the repository quota and what the workspace's quota leaves
 * (SVC_QUOTA_WORKSPACE_BYTES, as the turn starts; a tool error past it); 0 = no limit.
 */
static uint64_t repo_quota(struct svc_agent_chat *t)
{
	uint64_t now = 0, left = UINT64_MAX;

	if (svc_quota_repo_room(t->db, t->cfg, t->spec.workspace_id, t->spec.project_id, t->dir, &now, &left) < 0)
		return svc_quota_limit(t->cfg, NULL, SVC_QUOTA_REPO_BYTES);
	return left == UINT64_MAX ? 0 : now + left;
}

/* The message followed by the elements it points at into t->user_text (NULL when it points at none). Returns 0 or SVC_E_INTERNAL. */
static int with_elements(struct svc_agent_chat *t)
{
	char *elements = NULL;
	size_t n;
	int err;

	free(t->user_text);
	t->user_text = NULL;
	if ((err = svc_agent_attachments_elements(t->spec.attachments, &elements)) < 0 || !elements)
		return err;
	n = strlen(t->spec.text);
	if ((t->user_text = malloc(n + strlen(elements) + 1))) {
		memcpy(t->user_text, t->spec.text, n);
		memcpy(t->user_text + n, elements, strlen(elements) + 1);
	}
	free(elements);
	return t->user_text ? 0 : SVC_E_INTERNAL;
}

#define ELEMENT_SHOTS_MAX 3 /* element attachments without an image that get a crop made */

/*
 * Issue 29 "Point at an element": an element attachment without `image` (the web app cannot crop
 * the preview's frame, another origin) gets one made here: the element's box on its page in the
 * preview check's Chromium (svc_preview_element_shot()), added to the turn's images. Failures are
 * logged; the turn goes on with the element as text.
 */
static void element_images(struct svc_agent_chat *t)
{
	struct json_object *att = t->spec.attachments;
	size_t i, n = att && json_object_is_type(att, json_type_array) ? json_object_array_length(att) : 0, made = 0;

	for (i = 0; i < n && made < ELEMENT_SHOTS_MAX; i++) {
		struct json_object *a = json_object_array_get_idx(att, i), *img;
		const char *type = svc_json_str(a, "type"), *sel = svc_json_str(a, "selector"), *page = svc_json_str(a, "pagePath");
		struct svc_check_report r;
		char why[256];
		size_t k;

		if (!type || strcmp(type, "element") || !sel || !page || svc_json_str(a, "image"))
			continue;
		made++;
		memset(&r, 0, sizeof r);
		if (svc_preview_element_shot(t->cfg, t->dir, page, sel, (long)(t->cfg->agent_check_secs ? t->cfg->agent_check_secs : 20) * 1000,
					     &r, why, sizeof why) < 0 || !r.png_base64) {
			svc_log_warn("element: project=%s: no image of %s: %s", t->spec.project_id, sel, why);
			svc_preview_check_dispose(&r);
			continue;
		}
		if (!t->images) {
			t->images = json_object_new_array();
			for (k = 0; t->spec.images && k < json_object_array_length(t->spec.images); k++)
				json_object_array_add(t->images, json_object_get(json_object_array_get_idx(t->spec.images, k)));
		}
		img = json_object_new_object();
		svc_json_add_str(img, "mediaType", "image/png");
		svc_json_add_str(img, "data", r.png_base64);
		json_object_array_add(t->images, img);
		svc_preview_check_dispose(&r);
	}
}

/* Fills the agent's turn `at` for model `model` at prices `pin`/`pout`; *out_extra as apply_mode(). */
static void agent_turn_of(struct svc_agent_chat *t, const char *model, double pin, double pout,
			  struct svc_outbound_policy *outbound, const struct svc_agent_integ *integ,
			  struct svc_agent_turn *at, char **out_extra)
{
	memset(at, 0, sizeof *at);
	at->provider.protocol = t->prov.protocol;
	at->provider.base_url = t->prov.base_url;
	at->provider.api_key = t->prov.api_key;
	at->provider.model = model;
	at->provider.price_input_per_mtok = pin;
	at->provider.price_output_per_mtok = pout;
	at->provider.text_tools = t->prov.text_tools;
	if (t->prov.from_workspace) {
		/* a workspace's own base URL is a name its admin chose: SSRF guard (docs/operations.md) */
		svc_outbound_policy_load(t->cfg, outbound);
		at->provider.outbound = outbound;
	}
	at->project_dir = t->dir;
	at->repo_quota_bytes = repo_quota(t);
	at->mode = t->spec.mode;
	apply_mode(t->cfg, t->spec.mode, at, out_extra);
	at->prompt_extra = *out_extra;
	at->history = t->history;
	at->user_text = t->spec.text;
	/* issue 29: an element the user pointed at follows the text, and the prompt says to change it */
	if (with_elements(t) == 0 && t->user_text) {
		at->user_text = t->user_text;
		at->element = 1;
	}
	at->images = t->images ? t->images : t->spec.images;
	at->retry_max_secs = t->cfg->ai_retry_max_secs > 0 ? t->cfg->ai_retry_max_secs : -1;
	at->idle_secs = (long)t->cfg->ai_idle_secs;
	at->emit = emit;
	at->tick = tick;
	at->ctx = t;
	at->integ = integ;
	/* issue 29: spend per provider call, the loop breaker, instructions */
	at->spend = on_spend;
	at->idle_steps = t->cfg->agent_idle_steps;
	at->ws_instructions = t->ws_instructions;
	at->project_instructions = t->agents_md;
	at->project_instructions_note = t->agents_note;
	at->instructions_max = (size_t)t->cfg->agent_instructions_max;
}

/* Compaction when the history outgrows the model's window, then the agent; the tokens of both are charged. */
static void run_agent(struct svc_agent_chat *t, struct outcome *oc)
{
	const char *model = t->spec.model ? t->spec.model : t->prov.model;
	struct svc_agent_integ integ = { t->db, t->cfg, t->spec.user_id, t->spec.project_id, t->spec.workspace_id };
	struct svc_outbound_policy outbound;
	struct svc_agent_result spent;
	struct svc_agent_turn at;
	char *prompt_extra = NULL;
	double pin, pout;
	int r;

	memset(&spent, 0, sizeof spent);
	svc_config_model_price(t->cfg, model, &pin, &pout);
	t->pin = pin;
	t->pout = pout;
	load_instructions(t);
	element_images(t);
	agent_turn_of(t, model, pin, pout, &outbound, &integ, &at, &prompt_extra);
	t->build = at.all_tools;
	oc->rc = t->client_gone ? SVC_E_CLIENT_GONE : 0;
	if (oc->rc == 0)
		oc->rc = svc_agent_compact(t->db, t->chat_id, &at, svc_config_model_context(t->cfg, model), t->history_chars,
					   t->up_to, &t->history, &spent, oc->result.message, sizeof oc->result.message);
	/* the agent's own calls are charged one by one (on_spend); the compaction's here, before them */
	r = on_spend(t, spent.input_tokens, spent.output_tokens);
	if (r < 0 && oc->rc == 0)
		oc->rc = r;
	else if (r == 1 && oc->rc == 0)
		snprintf(oc->result.stopped, sizeof oc->result.stopped, "budget");
	else if (oc->rc == 0)
		oc->rc = svc_agent_run(&at, &oc->result);
	free(prompt_extra);
	flush_deltas(t);
}

/* ---- the preview check and its fix rounds (issue 29, docs/agent.md "The preview check") ---- */

/* Sends the assistant's short note to the user (assistant.message {text}). */
static void emit_note(struct svc_agent_chat *t, const char *text)
{
	struct json_object *o = json_object_new_object();

	svc_json_add_str(o, "text", text);
	emit(t, "assistant.message", o);
	json_object_put(o);
}

/*
 * One check of the project's preview, emitted as check.result and stored in the timeline:
 * *out_ev gets its payload (the caller puts it), *out_images the screenshot for the model when
 * the errors go to it (NULL otherwise), `note` (max bytes) what to tell the user when the fixing
 * ends on errors ("" otherwise). `prev` is the previous check's payload (NULL after the turn's own
 * changes). Returns 0, 1 when the preview could not be checked (logged; nothing emitted), or the
 * tick's error (the client left, a stop).
 */
static int check_once(struct svc_agent_chat *t, unsigned round, unsigned rounds, struct json_object *prev,
		      struct json_object **out_ev, struct json_object **out_images, char *note, size_t max)
{
	struct svc_check_report r;
	struct json_object *ev, *img;
	char why[256], url[1024] = "";
	int err, fixing = 0;

	memset(&r, 0, sizeof r);
	note[0] = '\0';
	err = svc_preview_check(t->db, t->cfg, t->spec.project_id, t->spec.workspace_id, t->dir,
				(long)t->cfg->agent_check_secs * 1000, tick, t, &r, why, sizeof why);
	if (err != 0) {
		svc_preview_check_dispose(&r);
		if (err == SVC_E_CLIENT_GONE || err == SVC_E_CANCELLED)
			return err;
		svc_log_warn("check: project=%s turn=%s: %s", t->spec.project_id, t->turn_id, why);
		return 1;
	}
	if (r.png && svc_agent_check_store(t->cfg, t->spec.project_id, r.png, r.png_len, url, sizeof url) < 0)
		url[0] = '\0';
	ev = svc_agent_check_event(&r, url, round, 0);
	if (r.nerrors && !(prev && svc_agent_check_same(prev, ev, note, max))) {
		if (round < rounds)
			fixing = 1;
		else
			snprintf(note, max, "The preview still shows %zu error%s after my fixes, and this turn has no fix "
					    "round left. Tell me how you would like to go on.",
				 r.nerrors + r.more, r.nerrors + r.more == 1 ? "" : "s");
	}
	json_object_object_add(ev, "fixing", json_object_new_boolean(fixing));
	emit(t, "check.result", ev);
	*out_images = NULL;
	if (fixing && t->cfg->agent_check_images && r.png_base64) {
		*out_images = json_object_new_array();
		img = json_object_new_object();
		svc_json_add_str(img, "mediaType", "image/png");
		svc_json_add_str(img, "data", r.png_base64);
		json_object_array_add(*out_images, img);
	}
	svc_preview_check_dispose(&r);
	*out_ev = ev;
	return 0;
}

/*
 * One fix round: the conversation so far read back from the timeline (the check.result that asked
 * for it becomes `text`, the round's user message, with `images`), then the agent again. Its usage
 * is the turn's (on_spend). Returns whether the round changed files.
 */
static int run_round(struct svc_agent_chat *t, struct outcome *oc, const char *text, struct json_object *images)
{
	const char *model = t->spec.model ? t->spec.model : t->prov.model;
	struct svc_agent_integ integ = { t->db, t->cfg, t->spec.user_id, t->spec.project_id, t->spec.workspace_id };
	struct svc_outbound_policy outbound;
	struct svc_agent_result r;
	struct svc_agent_turn at;
	struct json_object *last;
	char *prompt_extra = NULL;
	size_t n;

	json_object_put(t->history);
	t->history = NULL;
	if (svc_agent_history_load(t->db, t->chat_id, &t->history, &t->history_chars) < 0) {
		oc->rc = SVC_E_UNAVAILABLE;
		snprintf(oc->result.message, sizeof oc->result.message, "The chat's timeline cannot be read.");
		return 0;
	}
	n = json_object_array_length(t->history);
	last = n ? json_object_array_get_idx(t->history, n - 1) : NULL;
	if (last && svc_json_str(last, "role") && strcmp(svc_json_str(last, "role"), "user") == 0)
		json_object_array_del_idx(t->history, n - 1, 1); /* the round's own message, given as user_text */
	agent_turn_of(t, model, t->pin, t->pout, &outbound, &integ, &at, &prompt_extra);
	at.user_text = text;
	at.images = images;
	at.element = 0;
	memset(&r, 0, sizeof r);
	oc->rc = svc_agent_run(&at, &r);
	oc->result.input_tokens += r.input_tokens;
	oc->result.output_tokens += r.output_tokens;
	oc->result.files_changed |= r.files_changed;
	memcpy(oc->result.message, r.message, sizeof r.message);
	memcpy(oc->result.stopped, r.stopped, sizeof r.stopped);
	free(prompt_extra);
	flush_deltas(t);
	return r.files_changed;
}

/*
 * After a build-mode run that changed files: the preview check, and while it finds errors and
 * rounds are left, a fix round on them. The same error still there after a round (or a round that
 * changed nothing) ends the fixing with a note to the user and no further provider call.
 */
static void check_and_fix(struct svc_agent_chat *t, struct outcome *oc)
{
	struct json_object *prev = NULL, *ev = NULL, *images = NULL;
	unsigned round = 0, rounds;
	int changed = oc->result.files_changed, rc, ws_rounds = -1;
	char note[1400], *text;

	if (!t->build || !t->cfg->agent_check_secs || !changed)
		return;
	if (svc_agent_fix_rounds_get(t->db, t->spec.workspace_id, &ws_rounds) < 0)
		svc_log_error("check: the fix rounds of workspace %s cannot be read", t->spec.workspace_id);
	rounds = svc_agent_fix_rounds(t->cfg, ws_rounds);
	while (oc->rc == 0 && !oc->result.stopped[0] && t->stop_cap < 0 && changed) {
		/* open editors take the turn's files now, not only at its commit after the check (seconds later):
		 * svc-wsd merges the disk into the live documents (a merge, never a save of its own) */
		svc_internal_notify_files(t->cfg, t->db, t->spec.project_id);
		if ((rc = check_once(t, round, rounds, prev, &ev, &images, note, sizeof note)) != 0) {
			oc->rc = rc < 0 ? rc : 0;
			break;
		}
		if (note[0])
			emit_note(t, note);
		if (!json_object_get_boolean(json_object_object_get(ev, "fixing")))
			break;
		if (!(text = svc_agent_check_message(ev)))
			break;
		json_object_put(prev);
		prev = ev;
		ev = NULL;
		changed = run_round(t, oc, text, images);
		free(text);
		json_object_put(images);
		images = NULL;
		round++;
		if (!changed && oc->rc == 0 && !oc->result.stopped[0])
			emit_note(t, "I stopped fixing: my fix round changed no file, so the preview's errors are still "
				     "there. Tell me how you would like to go on.");
	}
	json_object_put(prev);
	json_object_put(ev);
	json_object_put(images);
}

/* Whatever the outcome, files already written become one commit: nothing is lost. */
static void commit_files(struct svc_agent_chat *t, struct outcome *oc)
{
	char cmsg[200], first[80];
	int lock;

	title_from(t->spec.text, first, sizeof first);
	snprintf(cmsg, sizeof cmsg, "Agent: %s", first);
	/* under the project's lock: never between a push's move of main and its working tree's (docs/git.md) */
	lock = svc_project_lock(t->dir);
	if (svc_repo_commit_all(t->dir, cmsg, "svc agent", "agent@svc.invalid", oc->sha, &oc->changed) < 0)
		svc_log_error("chat: commit of turn %s failed", t->turn_id);
	if (lock >= 0)
		close(lock);
	if (oc->changed) {
		struct svc_dbv p = svc_dbv_str(t->spec.project_id);
		svc_db_run(t->db, STMT_PROJECT_TOUCH, &p, 1, NULL, NULL);
		svc_internal_notify_files(t->cfg, t->db, t->spec.project_id); /* the live document takes the change (svc-wsd) */
		svc_preview_build_request(t->db, t->cfg, t->spec.project_id);
		svc_gitio_mirror_queue(t->db, t->spec.project_id); /* git-io: the mirror gets the turn's version */
	}
}

/* A plan turn's final message becomes the chat's plan (plan.created {plan}). */
static void store_plan(struct svc_agent_chat *t)
{
	struct json_object *plan = NULL, *ev;
	struct svc_dbv p[3];

	if (svc_agent_plan_parse(t->final_text ? t->final_text : "", &plan) < 0)
		return;
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

/* The final event: `error` for a failure, else session.task_complete (also after the client left: the timeline records how the turn ended). */
static void finish(struct svc_agent_chat *t, const struct outcome *oc)
{
	struct json_object *done_ev;
	int rc = oc->rc;

	if (t->spend_lost && rc < 0 && rc != SVC_E_CLIENT_GONE && rc != SVC_E_CANCELLED) {
		emit_error(t, SVC_E_UNAVAILABLE, "Stopped: what the last model call cost could not be recorded, so the turn "
			   "made no further call (what it wrote is kept). Try again shortly.");
		return;
	}
	if (rc == SVC_E_NO_PROVIDER || rc == SVC_E_MODEL_UNAVAILABLE || rc == SVC_E_CREDIT ||
	    (rc < 0 && rc != SVC_E_CLIENT_GONE && rc != SVC_E_CANCELLED)) {
		int code = (rc == SVC_E_NO_PROVIDER || rc == SVC_E_MODEL_UNAVAILABLE || rc == SVC_E_CREDIT) ? rc
													  : SVC_E_INTERNAL;
		emit_error(t, code, oc->result.message);
		return;
	}
	if (strcmp(oc->result.stopped, "budget") == 0 && t->stop_cap >= 0 &&
	    (done_ev = svc_agent_budget_event(&t->budget, t->stop_cap, t->spent[t->stop_cap], "Stopped", NULL, 0))) {
		emit(t, "session.budget_stopped", done_ev);
		json_object_put(done_ev);
	}
	done_ev = json_object_new_object();
	json_object_object_add(done_ev, "stopped", json_object_new_boolean(rc == SVC_E_CANCELLED || rc == SVC_E_CLIENT_GONE ||
									   oc->result.stopped[0]));
	if (rc == SVC_E_CLIENT_GONE)
		json_object_object_add(done_ev, "reason", json_object_new_string("client_gone"));
	else if (oc->result.stopped[0]) /* "budget" (a spending cap) or "loop" (the loop breaker) */
		json_object_object_add(done_ev, "reason", json_object_new_string(oc->result.stopped));
	json_object_object_add(done_ev, "filesChanged", json_object_new_boolean(oc->changed));
	json_object_object_add(done_ev, "commit", oc->changed ? json_object_new_string(oc->sha) : NULL);
	emit(t, "session.task_complete", done_ev);
	json_object_put(done_ev);
}

/*
 * Everything between "the lock is held and the user message is stored" and
 * the final event: credits, compaction, the agent, the commit, spend, plan.
 */
static void run_turn(struct svc_agent_chat *t)
{
	struct outcome oc;

	memset(&oc, 0, sizeof oc);
	t->last_heartbeat_ms = t->last_stop_poll_ms = svc_mono_ms();
	if (can_run(t) < 0)
		return;
	run_agent(t, &oc);
	check_and_fix(t, &oc);
	commit_files(t, &oc);
	if (oc.rc == 0 && t->spec.plan)
		store_plan(t);
	finish(t, &oc);
}

/* ---- before the stream ---- */

/* A new turn's state for `spec` (turn id `turn_id`, or a new one when NULL) with the project's directory. */
static int chat_new(struct svc_db *db, const struct svc_config *cfg, const struct svc_agent_chat_spec *spec,
		    const char *turn_id, struct svc_agent_chat **out)
{
	struct svc_agent_chat *t = calloc(1, sizeof *t);
	int err;

	if (!t)
		return SVC_E_INTERNAL;
	svc_buf_init(&t->deltas, DELTA_STORE_MAX);
	t->db = db;
	t->cfg = cfg;
	t->spec = *spec;
	t->fcgi_fd = -1;
	t->stop_cap = -1;
	t->chat_id = spec->chat_id;
	if (turn_id)
		snprintf(t->turn_id, sizeof t->turn_id, "%s", turn_id);
	if ((err = svc_project_dir(cfg, spec->project_id, t->dir, sizeof t->dir)) < 0 ||
	    (!turn_id && (err = svc_uuid_v4(t->turn_id)) < 0)) {
		svc_agent_chat_close(t);
		return err;
	}
	*out = t;
	return 0;
}

/*
 * The conversation before this turn and its last event. Any failure to read them is
 * SVC_E_UNAVAILABLE (503 with Retry-After before a stream; a queued turn runs again later): a
 * read that failed for another reason than a lost or stalled connection (the soak of
 * bench/README.md met a temporary table removed under MariaDB, which lib/db logs and answers
 * SVC_E_INTERNAL) is as safe to try again, and a turn never runs without its history.
 */
static int load_history(struct svc_agent_chat *t)
{
	int err;

	if ((err = svc_agent_history_load(t->db, t->chat_id, &t->history, &t->history_chars)) < 0 ||
	    (err = svc_agent_history_last_event(t->db, t->chat_id, &t->up_to)) < 0)
		return SVC_E_UNAVAILABLE;
	return 0;
}

/* Stores the user.message event and names an untitled chat after it. */
static int store_user_message(struct svc_agent_chat *t)
{
	struct json_object *ev = json_object_new_object();
	struct svc_dbv p[2];
	char title[256];
	int err;

	json_object_object_add(ev, "text", json_object_new_string(t->spec.text));
	json_object_object_add(ev, "attachments",
			       t->spec.attachments ? json_object_get(t->spec.attachments) : json_object_new_array());
	json_object_object_add(ev, "type", json_object_new_string("user.message"));
	err = store_event(t, "user.message", ev);
	json_object_put(ev);
	if (err < 0)
		return err;
	title_from(t->spec.text, title, sizeof title);
	p[0] = svc_dbv_str(title);
	p[1] = svc_dbv_str(t->chat_id);
	svc_db_run(t->db, STMT_CHAT_TOUCH, p, 2, NULL, NULL);
	return 0;
}

/* The provider and the model override, for a client: errors as svc_agent_chat_open() says. */
static int open_provider(struct svc_agent_chat *t, const char **out_field, char *msg, size_t msgmax)
{
	int err;

	if ((err = svc_agent_provider_choose(t->db, t->cfg, t->spec.workspace_id, &t->prov)) < 0) {
		if (err == SVC_E_UNAVAILABLE || err == SVC_E_VALIDATION) {
			err = SVC_E_UNAVAILABLE;
			snprintf(msg, msgmax, "The workspace's AI provider key cannot be read.");
		}
		return err;
	}
	t->have_prov = 1;
	if ((err = svc_agent_provider_check_model(t->cfg, &t->prov, t->spec.model, msg, msgmax)) < 0)
		*out_field = "model";
	return err;
}

/* One generation per chat, across every responder process; a few per user and workspace. */
static int open_lock(struct svc_agent_chat *t, char *msg, size_t msgmax)
{
	int err = svc_agent_generation_claim(t->db, t->cfg, t->chat_id, t->turn_id, t->spec.user_id, t->spec.workspace_id);

	if (err == SVC_E_CONFLICT)
		snprintf(msg, msgmax, "A generation is already running in this chat.");
	else if (err == SVC_E_RATE_LIMITED)
		snprintf(msg, msgmax, "Too many answers are being written at once for you or your workspace; "
				      "wait for one to finish.");
	if (err == 0)
		t->locked = 1;
	return err;
}

int svc_agent_chat_open(struct svc_db *db, const struct svc_config *cfg, const struct svc_agent_chat_spec *spec,
			struct svc_agent_chat **out, const char **out_field, char *msg, size_t msgmax)
{
	struct svc_agent_chat *t = NULL;
	int err;

	*out_field = NULL;
	if (msgmax)
		msg[0] = '\0';
	if ((err = chat_new(db, cfg, spec, NULL, &t)) < 0)
		return err;
	if ((err = open_provider(t, out_field, msg, msgmax)) < 0 || (err = open_lock(t, msg, msgmax)) < 0)
		goto fail;
	if (spec->set_mode) {
		struct svc_dbv p[2] = { svc_dbv_str(spec->set_mode), svc_dbv_str(t->chat_id) };
		if ((err = svc_db_run(db, STMT_AGENT_CHAT_SET_MODE, p, 2, NULL, NULL)) < 0)
			goto fail;
	}
	/* a timeline that cannot be read is a 503 (Retry-After), never a turn without its history */
	if ((err = load_history(t)) < 0 || (err = store_user_message(t)) < 0)
		goto fail;
	*out = t;
	return 0;
fail:
	svc_agent_chat_close(t);
	return err;
}

void svc_agent_chat_stream(struct svc_agent_chat *c, struct svc_resp *resp, int fcgi_fd)
{
	c->resp = resp;
	c->fcgi_fd = fcgi_fd;
	if (svc_sse_begin(resp) < 0)
		c->client_gone = 1;
	run_turn(c);
}

void svc_agent_chat_close(struct svc_agent_chat *c)
{
	if (!c)
		return;
	if (c->locked)
		svc_agent_generation_release(c->db, c->chat_id, c->turn_id);
	if (c->have_prov)
		svc_agent_provider_choice_dispose(&c->prov);
	json_object_put(c->history);
	json_object_put(c->images);
	free(c->ws_instructions);
	free(c->user_text);
	free(c->agents_md);
	free(c->final_text);
	svc_buf_dispose(&c->deltas);
	free(c);
}

/* ---- a queued turn (svc-worker) ---- */

/* What a queued turn's payload names: the project and chat as they are now, or 1 when either is gone. */
struct queued {
	struct json_object *payload;
	struct svc_rows *project, *chat;
	struct svc_agent_chat_spec spec;
	const char *turn_id;
};

/* Reads the payload into q->spec. Returns 0 or SVC_E_VALIDATION with errmsg set. */
static int queued_parse(struct queued *q, const char *payload, char *errmsg, size_t errmax)
{
	if (svc_json_parse_object(payload, strlen(payload), &q->payload) < 0) {
		snprintf(errmsg, errmax, "the payload is not a JSON object");
		return SVC_E_VALIDATION;
	}
	q->spec.project_id = svc_json_str(q->payload, "projectId");
	q->spec.chat_id = svc_json_str(q->payload, "chatId");
	q->spec.user_id = svc_json_str(q->payload, "userId");
	q->spec.text = svc_json_str(q->payload, "text");
	q->turn_id = svc_json_str(q->payload, "turnId");
	if (!q->spec.project_id || !q->spec.chat_id || !q->spec.user_id || !q->spec.text || !q->turn_id ||
	    !svc_uuid_valid(q->turn_id)) {
		snprintf(errmsg, errmax, "the payload lacks projectId, chatId, userId, turnId or text");
		return SVC_E_VALIDATION;
	}
	return 0;
}

/* Loads the project (as its user sees it) and the chat. Returns 0, 1 when either was deleted since, or a DB error. */
static int queued_load(struct svc_db *db, struct queued *q)
{
	struct svc_dbv p[5];
	int err;

	p[0] = svc_dbv_str(q->spec.user_id);
	p[1] = svc_dbv_str(q->spec.user_id);
	p[2] = svc_dbv_str(q->spec.project_id);
	p[3] = svc_dbv_i64(0);
	p[4] = svc_dbv_i64(0);
	if ((err = svc_db_run(db, STMT_PROJECT_GET_STATE, p, 5, &q->project, NULL)) < 0)
		return err;
	if (!q->project || q->project->nrows != 1 || svc_agent_chat_get(db, q->spec.chat_id, q->spec.project_id, &q->chat) < 0)
		return 1;
	q->spec.workspace_id = svc_rows_get(q->project, 0, PCOL_WORKSPACE);
	q->spec.mode = svc_rows_get(q->chat, 0, CCOL_MODE);
	return 0;
}

/* The provider, the lock and the history of a queued turn, with the job's messages. */
static int queued_open(struct svc_agent_chat *t, char *errmsg, size_t errmax)
{
	int err;

	if ((err = svc_agent_provider_choose(t->db, t->cfg, t->spec.workspace_id, &t->prov)) < 0) {
		snprintf(errmsg, errmax, "the workspace's provider cannot be read");
		return err;
	}
	t->have_prov = 1;
	if ((err = svc_agent_generation_claim(t->db, t->cfg, t->chat_id, t->turn_id, t->spec.user_id,
					      t->spec.workspace_id)) < 0) {
		if (err == SVC_E_RATE_LIMITED) /* the job waits without using an attempt (lib/db/jobs.h) */
			snprintf(errmsg, errmax, "the user's or workspace's turns running at once are at their cap");
		else
			snprintf(errmsg, errmax, "another generation runs in chat %s", t->chat_id);
		return err;
	}
	t->locked = 1;
	if ((err = load_history(t)) < 0) {
		snprintf(errmsg, errmax, "the chat's timeline cannot be read: %s", svc_err_code(err));
		return err; /* run again later (lib/db/jobs.h), never without the history */
	}
	/* the queued user.message is already stored: it is the last history entry; the agent adds it itself */
	if (json_object_array_length(t->history) > 0)
		json_object_array_del_idx(t->history, json_object_array_length(t->history) - 1, 1);
	return 0;
}

int svc_agent_chat_queued(struct svc_db *db, const struct svc_config *cfg, const char *payload, char *errmsg,
			  size_t errmax)
{
	struct svc_agent_chat *t = NULL;
	struct queued q;
	int err;

	memset(&q, 0, sizeof q);
	if ((err = queued_parse(&q, payload, errmsg, errmax)) < 0 || (err = queued_load(db, &q)) < 0)
		goto done;
	if (err == 1) {
		err = 0; /* deleted since: nothing to do */
		goto done;
	}
	if ((err = chat_new(db, cfg, &q.spec, q.turn_id, &t)) < 0 || (err = queued_open(t, errmsg, errmax)) < 0)
		goto done;
	run_turn(t);
	err = 0;
done:
	svc_agent_chat_close(t);
	json_object_put(q.payload);
	svc_rows_free(q.chat);
	svc_rows_free(q.project);
	return err;
}
