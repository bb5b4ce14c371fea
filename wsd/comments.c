/* comments.c: svc-wsd's design comments of a room (message 100): requests checked against the room's comments, stored through the API, then broadcast. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "core/err.h"
#include "comments.h"
#include "conn.h"
#include "proto.h"
#include "room.h"
#include "wsd.h"
#include "wsd_store.h"

/* A comment of the room, as the API stored it. */
struct wsd_comment {
	char id[37];
	char parent_id[37];
	char user_id[37];    /* its author */
	int resolved;
	int busy;            /* an internal call for it is running */
	char *added_json;    /* the design-comment:added message, sent to joiners while open */
};

/* A room's comments. */
struct comments_room {
	struct wsd_comment *comments;
	size_t ncomments, capcomments;
};

static int comments_id;

static struct comments_room *comments_of(struct wsd_room *r)
{
	return wsd_room_part(r, comments_id);
}

static struct wsd_comment *comment_find(struct wsd_room *r, const char *id)
{
	struct comments_room *cr = comments_of(r);
	size_t i;

	for (i = 0; i < cr->ncomments; i++)
		if (strcmp(cr->comments[i].id, id) == 0)
			return &cr->comments[i];
	return NULL;
}

/* Appends a comment of user_id to the room's list; takes added_json (the design-comment:added message). */
static struct wsd_comment *comment_add(struct wsd_room *r, const char *id, const char *parent_id, const char *user_id,
				       char *added_json)
{
	struct comments_room *cr = comments_of(r);
	struct wsd_comment *c;

	WSD_GROW(cr->comments, cr->capcomments, cr->ncomments + 1);
	c = &cr->comments[cr->ncomments++];
	memset(c, 0, sizeof *c);
	snprintf(c->id, sizeof c->id, "%s", id);
	snprintf(c->parent_id, sizeof c->parent_id, "%s", parent_id);
	snprintf(c->user_id, sizeof c->user_id, "%s", user_id ? user_id : "");
	c->added_json = added_json;
	return c;
}

/* [100, varString(json)] */
static struct wsd_msg *comment_msg(const char *json)
{
	struct svc_yjs_buf b = { 0 };
	struct wsd_msg *m;

	wsd_write_varuint(&b, WSD_MSG_DESIGN_COMMENT);
	wsd_write_varbytes(&b, json, strlen(json));
	m = wsd_msg_new(b.data, b.len);
	svc_yjs_buf_dispose(&b);
	return m;
}

static void comment_error(struct wsd_sess *s, const char *code, const char *message)
{
	struct json_object *o = json_object_new_object();
	struct wsd_msg *m;

	json_object_object_add(o, "type", json_object_new_string("error"));
	json_object_object_add(o, "error", json_object_new_string(code));
	json_object_object_add(o, "message", json_object_new_string(message));
	m = comment_msg(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
	json_object_put(o);
	wsd_sess_send(s, m);
	wsd_msg_release_if_unused(m);
}

static void comment_done(struct wsd_comment_job *j)
{
	struct wsd_room *r = j->room;
	struct comments_room *cr = comments_of(r);
	struct wsd_sess *s = wsd_sess_find(j->sess_id);
	struct wsd_comment *c;

	r->jobs--;
	c = comment_find(r, j->comment_id);
	if (c)
		c->busy = 0;
	if (j->status < 200 || j->status > 299) {
		if (s && s->state == WSD_S_OPEN)
			comment_error(s, j->status == 404 ? "not_found" : "internal_error",
				      j->status == 404 ? "No comment with this id in this project."
						       : "The comment could not be stored; try again.");
		return;
	}
	switch (j->op) {
	case WSD_C_ADD:
		c = comment_add(r, j->comment_id, j->parent_id, j->user_id, j->broadcast);
		j->broadcast = NULL;
		wsd_room_broadcast(r, comment_msg(c->added_json));
		return;
	case WSD_C_RESOLVE:
	case WSD_C_UNRESOLVE:
		if (c)
			c->resolved = j->op == WSD_C_RESOLVE;
		break;
	case WSD_C_DELETE:
		if (c) {
			free(c->added_json);
			*c = cr->comments[--cr->ncomments];
		}
		break;
	}
	wsd_room_broadcast(r, comment_msg(j->broadcast));
}

/* A design-comment request (its JSON text) from s: checked against the room's comments, then stored through the API. */
static void comments_rx(struct wsd_sess *s, const uint8_t *json, size_t len)
{
	struct wsd_room *r = s->room;
	struct wsd_comment_req req;
	struct wsd_comment *c = NULL;
	char msg[200];

	if (wsd_comment_parse((const char *)json, len, &req, msg, sizeof msg) < 0) {
		comment_error(s, "validation_failed", msg);
		return;
	}
	if (!s->can_write) {
		comment_error(s, "forbidden", "Only members of the project's workspace can comment.");
		goto done;
	}
	if (req.op == WSD_C_ADD) {
		if (req.parent_id[0] && !comment_find(r, req.parent_id)) {
			comment_error(s, "validation_failed", "parentId must be the id of a comment of this project.");
			goto done;
		}
	} else {
		c = comment_find(r, req.comment_id);
		if (!c) {
			comment_error(s, "not_found", "No comment with this id in this project.");
			goto done;
		}
		if (c->busy) {
			comment_error(s, "conflict", "The comment is being changed; try again.");
			goto done;
		}
		if (req.op == WSD_C_RESOLVE && c->resolved) {
			comment_error(s, "conflict", "The comment is already resolved.");
			goto done;
		}
		if (req.op == WSD_C_UNRESOLVE && !c->resolved) {
			comment_error(s, "conflict", "The comment is not resolved.");
			goto done;
		}
		/* anyone who may write resolves and reopens; a comment is deleted by its author or an admin */
		if (req.op == WSD_C_DELETE && strcmp(c->user_id, s->user_id) != 0 && !s->can_moderate) {
			comment_error(s, "forbidden", "Only its author or an admin of the workspace can delete a comment.");
			goto done;
		}
		c->busy = 1;
	}
	r->jobs++;
	wsd_store_comment(&wsd_g->io_worker, r->project_id, r, s->id, s->user_id, s->user_name, &req,
			  comment_done);
done:
	wsd_comment_req_dispose(&req);
}

/* on_load: the comments the load found (res->comments' JSON taken, set to NULL). */
static void comments_load(struct wsd_room *r, struct wsd_load_result *res)
{
	size_t i;

	for (i = 0; i < res->ncomments; i++) {
		struct wsd_loaded_comment *lc = &res->comments[i];
		struct wsd_comment *c = comment_add(r, lc->id, lc->parent_id, lc->user_id, lc->added_json);
		c->resolved = lc->resolved;
		lc->added_json = NULL;
	}
}

/* on_join: every open comment as design-comment:added. */
static void comments_join(struct wsd_room *r, struct wsd_sess *s)
{
	struct comments_room *cr = comments_of(r);
	size_t i;

	for (i = 0; i < cr->ncomments; i++)
		if (!cr->comments[i].resolved && cr->comments[i].added_json) {
			struct wsd_msg *cm = comment_msg(cr->comments[i].added_json);
			wsd_sess_send(s, cm);
			wsd_msg_release_if_unused(cm);
		}
}

/* on_message: a design-comment request [100, varString(JSON)]. */
static int comments_message(struct wsd_sess *s, uint64_t type, struct wsd_reader *rd)
{
	const uint8_t *payload;
	size_t plen;

	if (type != WSD_MSG_DESIGN_COMMENT)
		return WSD_PART_PASS;
	if (wsd_read_varbytes(rd, &payload, &plen) < 0)
		return SVC_E_VALIDATION;
	comments_rx(s, payload, plen);
	return 0;
}

static void comments_dispose(struct wsd_room *r)
{
	struct comments_room *cr = comments_of(r);
	size_t i;

	for (i = 0; i < cr->ncomments; i++)
		free(cr->comments[i].added_json);
	free(cr->comments);
	cr->comments = NULL;
	cr->ncomments = cr->capcomments = 0;
}

static const struct wsd_part comments_part = {
	.name = "comments",
	.state_size = sizeof(struct comments_room),
	.on_load = comments_load,
	.on_join = comments_join,
	.on_message = comments_message,
	.on_dispose = comments_dispose,
};

void wsd_comments_register(void)
{
	comments_id = wsd_room_add_part(&comments_part);
}
