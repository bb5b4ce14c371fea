#!/usr/bin/env python3
# test_chat_errors.py: chat requests refused before the stream (plain HTTP errors, no provider call, no event stored) and the timeline's paging
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from agentlib import send_in_thread  # noqa: E402
from svclib import (PROVIDER_URL, TIME_RE, UNKNOWN_ID, api, check, create_project, created_id,  # noqa: E402
                    default_chat_id, finish, is_error, items_of, provider, signup, skip_rest, sse_all, timeline_page,
                    types_of)


def send(pid, body=None, token=None, raw=None, headers=None):
    """POSTs a chat message as a plain request (no SSE parsing): errors come back before any stream."""
    h = {"Accept": "text/event-stream"}
    h.update(headers or {})
    return api("POST", "/chat/%s/messages" % pid, json=body, raw=raw, token=token, headers=h, timeout=60)


def provider_requests():
    if not PROVIDER_URL:
        return None
    r = provider("GET", "/_stats")
    return r.body.get("requests") if isinstance(r.body, dict) else None


def test_send_errors(a, b, pid, chat_id, other_chat, b_pid):
    if PROVIDER_URL:
        provider("POST", "/_reset")
    ok = {"chatId": chat_id, "text": "hello"}
    cases = [
        ("unknown_project", UNKNOWN_ID, ok, a.token, 404, "not_found", None),
        ("project_not_a_uuid", "not-a-uuid", ok, a.token, 404, "not_found", None),
        ("unknown_chat", pid, {"chatId": UNKNOWN_ID, "text": "hello"}, a.token, 404, "not_found", None),
        ("chat_of_another_project", pid, {"chatId": other_chat, "text": "hello"}, a.token, 404, "not_found", None),
        ("chatid_not_a_uuid", pid, {"chatId": "chat-1", "text": "hello"}, a.token, 400, "validation_failed", "chatId"),
        ("chatid_missing", pid, {"text": "hello"}, a.token, 400, "validation_failed", "chatId"),
        ("chatid_number", pid, {"chatId": 12, "text": "hello"}, a.token, 400, "validation_failed", "chatId"),
        ("text_whitespace_only", pid, {"chatId": chat_id, "text": " \n\t  "}, a.token, 400, "validation_failed", "text"),
        ("text_empty", pid, {"chatId": chat_id, "text": ""}, a.token, 400, "validation_failed", "text"),
        ("text_missing", pid, {"chatId": chat_id}, a.token, 400, "validation_failed", "text"),
        ("text_not_a_string", pid, {"chatId": chat_id, "text": ["hi"]}, a.token, 400, "validation_failed", "text"),
        ("text_null", pid, {"chatId": chat_id, "text": None}, a.token, 400, "validation_failed", "text"),
        ("attachments_not_an_array", pid, {"chatId": chat_id, "text": "hi", "attachments": "x"}, a.token, 400,
         "validation_failed", "attachments"),
        ("model_not_a_string", pid, {"chatId": chat_id, "text": "hi", "model": 3}, a.token, 400,
         "validation_failed", "model"),
        ("text_over_100000_chars", pid, {"chatId": chat_id, "text": "x" * 100001}, a.token, 400, "validation_failed",
         "text"),
        ("eleven_attachments", pid, {"chatId": chat_id, "text": "hi", "attachments": [{}] * 11}, a.token, 400,
         "validation_failed", "attachments"),
        ("no_token", pid, ok, None, 401, "unauthorized", None),
        ("forged_token", pid, ok, a.token[:-4] + "AAAA", 401, "unauthorized", None),
        ("another_users_project", b_pid, ok, a.token, 403, "forbidden", None),
    ]
    for label, p, body, token, status, code, field in cases:
        r = send(p, body, token)
        check("test_chat_send_%s_is_%d%s" % (label, status, " " + field if field else ""),
              is_error(r, status, code, field) and r.headers.get("content-type", "").startswith("application/json"),
              r)
    r = send(pid, raw='{"chatId": "%s", "text": "hello"' % chat_id, token=a.token)
    check("test_chat_send_malformed_json_is_400_invalid_json", is_error(r, 400, "invalid_json"), r)
    r = send(pid, raw="text=hello", token=a.token)
    check("test_chat_send_body_not_json_is_400_invalid_json", is_error(r, 400, "invalid_json"), r)
    r = send(pid, raw='{"chatId": "%s", "text": "hello"}' % chat_id, token=a.token,
             headers={"Content-Type": "text/plain"})
    check("test_chat_send_text_plain_is_415", is_error(r, 415, "unsupported_media_type"), r)
    # message bodies may carry image attachments: the cap is 8 MiB, under the web server's 16 MiB backstop
    r = send(pid, raw='{"chatId": "%s", "text": "%s"}' % (chat_id, "x" * (8 * 1024 * 1024 + 1)), token=a.token)
    check("test_chat_send_body_over_8mib_is_413", is_error(r, 413, "payload_too_large"), r)
    r = api("GET", "/chat/%s/nonexistent" % pid, token=a.token)
    check("test_chat_unknown_route_is_404", r.status == 404, r)
    r = api("GET", "/chat/%s/stop" % pid, token=a.token)
    check("test_chat_get_stop_is_405_with_allow_post",
          is_error(r, 405, "method_not_allowed") and "POST" in r.headers.get("allow", ""), r)
    r = api("PUT", "/chat/%s/messages" % pid, json={}, token=a.token)
    check("test_chat_put_messages_is_405_with_allow",
          is_error(r, 405, "method_not_allowed") and "POST" in r.headers.get("allow", "")
          and "GET" in r.headers.get("allow", ""), r)

    n = provider_requests()
    if PROVIDER_URL:
        check("test_chat_refused_requests_never_reach_the_provider", n == 0, n)
    else:
        check("test_chat_refused_requests_never_reach_the_provider", False, "SVC_PROVIDER_URL is not set")
    r = timeline_page(a, pid, chat_id)
    check("test_chat_refused_requests_store_no_event", r.status == 200 and items_of(r.body) == [], r)
    r = api("GET", "/projects/%s/chats" % pid, token=a.token)
    chat = next((c for c in items_of(r.body) or [] if c.get("id") == chat_id), {})
    check("test_chat_refused_requests_leave_the_chat_title_unset", chat.get("title") in (None, "Main chat"), chat)


def test_history_errors(a, b, pid, chat_id, b_pid, b_chat):
    r = api("GET", "/chat/%s/messages" % pid, token=a.token)
    check("test_chat_history_without_chatid_is_400_chatid", is_error(r, 400, "validation_failed", "chatId"), r)
    r = timeline_page(a, pid, "abc")
    check("test_chat_history_chatid_not_a_uuid_is_400_chatid", is_error(r, 400, "validation_failed", "chatId"), r)
    for lim in ("201", "0", "abc", "-5", ""):
        r = timeline_page(a, pid, chat_id, "&limit=" + lim)
        check("test_chat_history_limit_%r_is_400_limit" % lim, is_error(r, 400, "validation_failed", "limit"), r)
    r = timeline_page(a, pid, chat_id, "&limit=200")
    check("test_chat_history_limit_200_is_accepted", r.status == 200, r)
    for before in ("abc", "-1", "1.5"):
        r = timeline_page(a, pid, chat_id, "&before=" + before)
        check("test_chat_history_before_%r_is_400_before" % before, is_error(r, 400, "validation_failed", "before"), r)
    r = timeline_page(a, UNKNOWN_ID, chat_id)
    check("test_chat_history_unknown_project_is_404", is_error(r, 404, "not_found"), r)
    r = timeline_page(a, pid, UNKNOWN_ID)
    check("test_chat_history_unknown_chat_is_404", is_error(r, 404, "not_found"), r)
    r = timeline_page(a, pid, b_chat)
    check("test_chat_history_chat_of_another_project_is_404", is_error(r, 404, "not_found"), r)
    r = timeline_page(a, b_pid, b_chat)
    check("test_chat_history_of_another_users_project_is_403", is_error(r, 403, "forbidden"), r)
    r = api("GET", "/chat/%s/messages?chatId=%s" % (pid, chat_id))
    check("test_chat_history_without_token_is_401", is_error(r, 401, "unauthorized"), r)
    r = api("GET", "/chat/not-a-uuid/messages?chatId=%s" % chat_id, token=a.token)
    check("test_chat_history_project_not_a_uuid_is_404", is_error(r, 404, "not_found"), r)


def test_timeline_paging(a, pid, chat_id):
    if PROVIDER_URL:
        provider("POST", "/_reset")
    events, _, err = sse_all("/chat/%s/messages" % pid, {"chatId": chat_id, "text": "hello there"}, token=a.token)
    types = types_of(events)
    check("test_chat_one_turn_streams_to_task_complete_or_error",
          err is None and bool(types) and types[-1] in ("session.task_complete", "error"), (err, types))
    r = timeline_page(a, pid, chat_id, "&limit=200")
    full = items_of(r.body) or []
    check("test_chat_timeline_answers_items_and_null_cursor",
          r.status == 200 and len(full) >= 2 and r.body.get("nextCursor") is None, r)
    first = full[0] if full else {}
    check("test_chat_timeline_starts_with_the_user_message",
          first.get("type") == "user.message" and first.get("text") == "hello there", first)
    check("test_chat_timeline_items_have_id_type_turn_and_time",
          all(isinstance(e.get("id"), str) and e.get("type") and e.get("turnId") and re.match(TIME_RE, e.get("createdAt")
              or "") for e in full), full)
    stored = [e.get("type") for e in full if e.get("type") != "user.message"]
    streamed = [t for t in types]
    collapsed = [t for i, t in enumerate(streamed) if not (t == "assistant.message_delta" and i and
                                                             streamed[i - 1] == "assistant.message_delta")]
    check("test_chat_timeline_holds_the_streamed_events_in_order", stored == collapsed, (stored, streamed))
    check("test_chat_timeline_ends_with_the_final_event", full and full[-1].get("type") == types[-1] if types else False,
          full[-1:] if full else full)

    pages, seen, cursor = 0, [], None
    while pages < len(full) + 2:
        r = timeline_page(a, pid, chat_id, "&limit=1" + ("&before=" + cursor if cursor else ""))
        if r.status != 200:
            break
        pages += 1
        items = items_of(r.body) or []
        seen = [e.get("id") for e in items] + seen
        cursor = r.body.get("nextCursor")
        if not cursor or len(items) != 1:
            break
    ids = [e.get("id") for e in full]
    check("test_chat_timeline_paging_limit_1_returns_each_event_once", seen == ids and len(set(seen)) == len(seen),
          (seen, ids, r))
    check("test_chat_timeline_paging_ends_with_null_cursor", pages == len(full) and cursor is None, (pages, cursor))
    # The same pages again: stable.
    r1 = timeline_page(a, pid, chat_id, "&limit=2")
    r2 = timeline_page(a, pid, chat_id, "&limit=2")
    check("test_chat_timeline_pages_are_stable", r1.status == 200 and r1.body == r2.body, (r1, r2))
    if r1.status == 200 and r1.body.get("nextCursor"):
        r3 = timeline_page(a, pid, chat_id, "&limit=2&before=" + r1.body["nextCursor"])
        ids3 = [e.get("id") for e in items_of(r3.body) or []]
        ids1 = [e.get("id") for e in items_of(r1.body) or []]
        check("test_chat_timeline_older_page_comes_before_newer", ids3 + ids1 == ids[-(len(ids3) + len(ids1)):],
              (ids3, ids1, ids))


def test_title_from_first_message(a, pid):
    """A chat created without a title takes the first line of its first message (at most 60 characters)."""
    r = api("POST", "/projects/%s/chats" % pid, {"mode": "chat"}, token=a.token)
    cid = created_id(r)
    check("test_chat_created_without_title_has_null_title", cid is not None and r.body.get("title") is None, r)
    if not cid:
        return
    text = "\U0001F600 " + "word " * 30 + "\nsecond line"
    events, _, err = sse_all("/chat/%s/messages" % pid, {"chatId": cid, "text": text}, token=a.token)
    r = api("GET", "/projects/%s/chats" % pid, token=a.token)
    chat = next((c for c in items_of(r.body) or [] if c.get("id") == cid), {})
    want = text.split("\n")[0][:60]
    check("test_chat_title_is_the_first_60_characters_of_the_first_line", chat.get("title") == want, (want, chat))


def test_busy_chat(a):
    """A second message while a generation runs in the same chat: 409 before any stream."""
    if not PROVIDER_URL:
        skip_rest("no provider double", ["test_chat_second_message_while_generating_is_409"])
        return
    r = create_project(a, "blank")
    pid = created_id(r)
    chat_id = default_chat_id(a, pid) if pid else None
    if not chat_id:
        skip_rest("no project", ["test_chat_second_message_while_generating_is_409"])
        return
    t, state, started = send_in_thread(a, pid, chat_id, "slow")
    started.wait(20)
    r = send(pid, {"chatId": chat_id, "text": "hello"}, a.token)
    check("test_chat_second_message_while_generating_is_409", is_error(r, 409, "conflict"), r)
    t.join(60)
    check("test_chat_first_stream_finishes_despite_the_refused_one",
          "err" not in state and (types_of(state["events"]) or [""])[-1] == "session.task_complete", state)
    r = send(pid, {"chatId": chat_id, "text": "hello"}, a.token)
    check("test_chat_next_message_after_the_turn_is_accepted", r.status == 200, r)


def main():
    try:
        a, b = signup(tag="chat-a"), signup(tag="chat-b")
    except AssertionError as e:
        check("test_chat_sign_up_two_users", False, e)
        return
    ids = []
    for acct in (a, a, b):
        r = create_project(acct, "blank")
        ids.append(created_id(r))
    pid, pid2, b_pid = ids
    chats = [default_chat_id(acct, p) if p else None for acct, p in ((a, pid), (a, pid2), (b, b_pid))]
    if not all(ids) or not all(chats):
        check("test_chat_projects_and_default_chats_exist", False, (ids, chats))
        return
    chat_id, other_chat, b_chat = chats
    test_send_errors(a, b, pid, chat_id, other_chat, b_pid)
    test_history_errors(a, b, pid, chat_id, b_pid, b_chat)
    test_timeline_paging(a, pid, chat_id)
    test_title_from_first_message(a, pid)
    test_busy_chat(a)
    # A soft-deleted project takes no more messages.
    r = api("DELETE", "/projects/%s" % pid2, token=a.token)
    r = send(pid2, {"chatId": other_chat, "text": "hello"}, a.token)
    check("test_chat_send_to_a_deleted_project_is_404", is_error(r, 404, "not_found"), r)


if __name__ == "__main__":
    try:
        main()
    except Exception:
        import traceback
        check("test_chat_errors ran to the end", False, traceback.format_exc())
    sys.exit(finish())
