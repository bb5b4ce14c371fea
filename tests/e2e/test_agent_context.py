#!/usr/bin/env python3
# test_agent_context.py: history paging over turns, compaction, image attachments, and the first prompt run by svc-worker
import base64
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from agentlib import body_text, double_requests, fresh_project, last_user_text, reset_double, send  # noqa: E402
from svclib import (PROVIDER_URL, api, check, created_id, finish, items_of, signup, timeline,  # noqa: E402
                    timeline_page, types_of)

PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89"


def data_url(media, data):
    return "data:%s;base64,%s" % (media, base64.b64encode(data).decode())


def test_history_paging(acct):
    pid, chat_id = fresh_project(acct)
    for i in range(3):
        send(acct, pid, chat_id, "hello number %d" % i)
    full = timeline(acct, pid, chat_id) or []
    users = [e.get("text") for e in full if e.get("type") == "user.message"]
    check("test_agent_history_user_messages_are_timeline_events",
          users == ["hello number 0", "hello number 1", "hello number 2"]
          and all(isinstance(e.get("attachments"), list) for e in full if e.get("type") == "user.message"), full)
    seen, cursor, pages = [], None, 0
    while pages < 100:
        r = timeline_page(acct, pid, chat_id, "&limit=3" + ("&before=" + cursor if cursor else ""))
        if r.status != 200:
            break
        pages += 1
        seen = [e.get("id") for e in items_of(r.body)] + seen
        cursor = r.body.get("nextCursor")
        if cursor is None:
            break
    ids = [e.get("id") for e in full]
    check("test_agent_history_pages_cover_every_event_once_in_order", seen == ids and len(set(ids)) == len(ids),
          (seen, ids))
    check("test_agent_history_last_page_has_null_cursor", cursor is None and pages == (len(ids) + 2) // 3,
          (pages, len(ids)))
    # the model sees the earlier turns
    reset_double()
    send(acct, pid, chat_id, "hello number 3")
    reqs = double_requests()
    check("test_agent_history_is_sent_to_the_model",
          reqs and "hello number 0" in body_text(reqs[0]) and "Hello from the provider double." in body_text(reqs[0]),
          reqs[:1])


def test_compaction(acct):
    pid, chat_id = fresh_project(acct)
    # SVC_AI_CONTEXT_WINDOWS: small-ctx = 1000 tokens; "long answer" reports 5000 input tokens
    events, _, err = send(acct, pid, chat_id, "long answer please", model="small-ctx")
    check("test_agent_compaction_not_needed_for_the_first_turn",
          "session.compaction_start" not in types_of(events) and types_of(events)[-1:] == ["session.task_complete"],
          events)
    reset_double()
    events, _, err = send(acct, pid, chat_id, "hello after the long one", model="small-ctx")
    types = types_of(events)
    check("test_agent_compaction_events_come_before_the_answer",
          "session.compaction_start" in types and "session.compaction_complete" in types
          and types.index("session.compaction_start") < types.index("session.compaction_complete")
          < types.index("assistant.message_delta") and types[-1] == "session.task_complete", types)
    reqs = double_requests()
    check("test_agent_compaction_asks_the_model_for_a_summary_first",
          len(reqs) == 2 and "summarize the conversation so far" in last_user_text(reqs[0]).lower(),
          [last_user_text(q) for q in reqs])
    turn_text = body_text(reqs[1]) if len(reqs) == 2 else ""
    check("test_agent_compaction_replaces_old_turns_with_the_summary",
          "SUMMARY:" in turn_text and "long answer please" not in turn_text and "A long answer." not in turn_text,
          turn_text[:1500])
    reset_double()
    events, _, err = send(acct, pid, chat_id, "third message", model="small-ctx")
    reqs = double_requests()
    text = body_text(reqs[0]) if reqs else ""
    check("test_agent_compaction_summary_is_used_by_later_turns",
          "session.compaction_start" not in types_of(events) and "SUMMARY:" in text
          and "hello after the long one" in text and "long answer please" not in text, (types_of(events), text[:1500]))
    items = timeline(acct, pid, chat_id) or []
    check("test_agent_compaction_events_are_in_the_timeline",
          types_of(items).count("session.compaction_complete") == 1, types_of(items))


def test_attachments(acct):
    pid, chat_id = fresh_project(acct)
    att = [{"type": "image", "url": data_url("image/png", PNG)}]
    reset_double()
    events, _, err = send(acct, pid, chat_id, "what is in this picture", attachments=att)
    check("test_agent_image_message_streams", types_of(events)[-1:] == ["session.task_complete"], (err, events))
    reqs = double_requests()
    msgs = (reqs[0].get("body") or {}).get("messages") if reqs else []
    content = msgs[-1].get("content") if msgs else None
    parts = content if isinstance(content, list) else []
    check("test_agent_image_reaches_openai_as_image_url",
          any(p.get("type") == "image_url" and (p.get("image_url") or {}).get("url") == att[0]["url"] for p in parts)
          and any(p.get("type") == "text" and p.get("text") == "what is in this picture" for p in parts), content)
    items = timeline(acct, pid, chat_id) or []
    u = next((e for e in items if e.get("type") == "user.message"), {})
    check("test_agent_image_is_kept_with_the_user_message", u.get("attachments") == att, u)

    def post(atts):
        return api("POST", "/chat/%s/messages" % pid, {"chatId": chat_id, "text": "look", "attachments": atts},
                   token=acct.token, headers={"Accept": "text/event-stream"}, timeout=60)

    cases = [
        ("png_bytes_labelled_jpeg", [{"type": "image", "url": data_url("image/jpeg", PNG)}], 400),
        ("svg", [{"type": "image", "url": data_url("image/svg+xml", b"<svg/>")}], 400),
        ("not_base64", [{"type": "image", "url": "data:image/png;base64,%%%"}], 400),
        ("http_url", [{"type": "image", "url": "https://example.test/a.png"}], 400),
        ("type_file", [{"type": "file", "url": data_url("image/png", PNG)}], 400),
        ("over_5_mib", [{"type": "image", "url": data_url("image/png", PNG + b"\0" * (5 * 1024 * 1024))}], 413),
    ]
    for label, atts, status in cases:
        reset_double()
        r = post(atts)
        check("test_agent_attachment_%s_is_%d" % (label, status),
              r.status == status and (status == 413 or r.body.get("field") == "attachments")
              and not double_requests(), r)
    for media, data in (("image/jpeg", b"\xff\xd8\xff\xe0rest"), ("image/gif", b"GIF89a-rest"),
                        ("image/webp", b"RIFF\x10\x00\x00\x00WEBPVP8 ")):
        events, _, err = send(acct, pid, chat_id, "look", attachments=[{"type": "image", "url": data_url(media, data)}])
        check("test_agent_attachment_%s_is_accepted" % media.split("/")[1],
              types_of(events)[-1:] == ["session.task_complete"], (err, events[-1:]))

    # Anthropic: image blocks, through a workspace provider
    other = signup(tag="img-anthropic")
    api("PUT", "/workspaces/%s/ai-provider" % other.workspace_id,
        {"protocol": "anthropic", "baseUrl": PROVIDER_URL + "/v1", "model": "claude-double"}, token=other.token)
    opid, ochat = fresh_project(other)
    reset_double()
    events, _, err = send(other, opid, ochat, "what is in this picture", attachments=att)
    reqs = double_requests()
    msgs = (reqs[0].get("body") or {}).get("messages") if reqs else []
    blocks = msgs[-1].get("content") if msgs else []
    check("test_agent_image_reaches_anthropic_as_an_image_block",
          types_of(events)[-1:] == ["session.task_complete"] and isinstance(blocks, list) and any(
              b.get("type") == "image" and (b.get("source") or {}).get("media_type") == "image/png"
              and (b.get("source") or {}).get("data") == base64.b64encode(PNG).decode() for b in blocks), blocks)


def openai_messages(req):
    return (req.get("body") or {}).get("messages") or []


def test_history_keeps_tool_traffic(acct):
    pid, chat_id = fresh_project(acct)
    send(acct, pid, chat_id, "write a file please")
    reset_double()
    events, _, err = send(acct, pid, chat_id, "hello after the tools")
    reqs = double_requests()
    msgs = openai_messages(reqs[0]) if reqs else []
    roles = [m.get("role") for m in msgs]
    check("test_agent_history_has_the_earlier_tool_call_and_result_in_order",
          roles == ["system", "user", "assistant", "tool", "assistant", "user"], roles)
    calls = msgs[2].get("tool_calls") if len(msgs) > 2 else None
    call = calls[0] if isinstance(calls, list) and calls else {}
    fn = call.get("function") or {}
    try:
        args = json.loads(fn.get("arguments") or "")
    except ValueError:
        args = None
    check("test_agent_history_tool_call_keeps_name_and_arguments",
          fn.get("name") == "write_file" and isinstance(args, dict) and args.get("path") == "notes/hello.txt"
          and args.get("content") == "hello from the agent\n", call)
    tool_msg = msgs[3] if len(msgs) > 3 else {}
    check("test_agent_history_tool_result_answers_its_call",
          call.get("id") and tool_msg.get("tool_call_id") == call.get("id")
          and "notes/hello.txt" in (tool_msg.get("content") or ""), (call, tool_msg))
    check("test_agent_history_final_answer_follows_the_tools",
          len(msgs) > 4 and msgs[4].get("content") == "Wrote notes/hello.txt."
          and last_user_text(reqs[0]) == "hello after the tools", msgs[4:] if msgs else None)


def test_history_tool_traffic_anthropic():
    other = signup(tag="tools-history-anthropic")
    api("PUT", "/workspaces/%s/ai-provider" % other.workspace_id,
        {"protocol": "anthropic", "baseUrl": PROVIDER_URL + "/v1", "model": "claude-double"}, token=other.token)
    pid, chat_id = fresh_project(other)
    send(other, pid, chat_id, "write a file please")
    reset_double()
    events, _, err = send(other, pid, chat_id, "hello after the tools")
    reqs = double_requests()
    msgs = openai_messages(reqs[0]) if reqs else []

    def blocks(m, kind):
        c = m.get("content")
        return [b for b in c if isinstance(b, dict) and b.get("type") == kind] if isinstance(c, list) else []
    uses = [b for m in msgs if m.get("role") == "assistant" for b in blocks(m, "tool_use")]
    results = [b for m in msgs if m.get("role") == "user" for b in blocks(m, "tool_result")]
    check("test_agent_history_tool_traffic_reaches_anthropic_as_blocks",
          types_of(events)[-1:] == ["session.task_complete"] and len(uses) == 1 and len(results) == 1
          and uses[0].get("name") == "write_file" and (uses[0].get("input") or {}).get("path") == "notes/hello.txt"
          and results[0].get("tool_use_id") == uses[0].get("id")
          and [m.get("role") for m in msgs] == ["user", "assistant", "user", "assistant", "user"],
          (types_of(events), msgs))


def test_compaction_counts_tool_traffic(acct):
    # a turn whose messages are short and whose reported usage is small (80 + 15, 90 + 6 tokens),
    # but whose tool calls and results carry 80000 bytes: the next turn must not fit 1000 tokens
    pid, chat_id = fresh_project(acct)
    events, _, err = send(acct, pid, chat_id, "big tool output please")
    check("test_agent_big_tool_output_turn_runs",
          types_of(events)[-1:] == ["session.task_complete"]
          and types_of(events).count("tool.result") == 2, (err, types_of(events)))
    reset_double()
    events, _, err = send(acct, pid, chat_id, "hello after the big output", model="small-ctx")
    types = types_of(events)
    check("test_agent_compaction_counts_tool_calls_and_results",
          "session.compaction_start" in types and "session.compaction_complete" in types
          and types[-1] == "session.task_complete", types)
    start = next((e for e in events if e.get("type") == "session.compaction_start"), {})
    check("test_agent_compaction_estimate_includes_the_tool_bytes",
          (start.get("estimatedTokens") or 0) >= 20000, start)
    reqs = double_requests()
    summary_req = reqs[0] if reqs else {}
    text = body_text(summary_req)
    check("test_agent_compaction_summary_request_shows_tool_traffic_as_text",
          "[called write_file" in text and "[result of read_file]" in text
          and all(m.get("role") in ("system", "user", "assistant") for m in openai_messages(summary_req))
          and "tools" not in (summary_req.get("body") or {}), text[:800])
    turn_text = body_text(reqs[1]) if len(reqs) > 1 else ""
    check("test_agent_compaction_drops_the_old_tool_traffic",
          "SUMMARY:" in turn_text and "line 00001 of a big file" not in turn_text, turn_text[:800])
    # the control: the same short turn without tool traffic does not compact
    pid2, chat2 = fresh_project(acct)
    send(acct, pid2, chat2, "hello please")
    events, _, err = send(acct, pid2, chat2, "hello after a short turn", model="small-ctx")
    check("test_agent_compaction_not_needed_without_tool_traffic",
          "session.compaction_start" not in types_of(events) and types_of(events)[-1:] == ["session.task_complete"],
          types_of(events))


def image_parts(msg):
    c = msg.get("content")
    return [p for p in c if isinstance(p, dict) and p.get("type") == "image_url"] if isinstance(c, list) else []


def test_history_images(acct):
    pid, chat_id = fresh_project(acct)
    url = data_url("image/png", PNG)
    send(acct, pid, chat_id, "what is in this picture", attachments=[{"type": "image", "url": url}])
    reset_double()
    events, _, err = send(acct, pid, chat_id, "and what colour is it")
    reqs = double_requests()
    msgs = openai_messages(reqs[0]) if reqs else []
    earlier = [m for m in msgs[:-1] if m.get("role") == "user"]
    check("test_agent_history_image_is_sent_again_with_its_message",
          earlier and [(p.get("image_url") or {}).get("url") for p in image_parts(earlier[0])] == [url]
          and any(p.get("type") == "text" and p.get("text") == "what is in this picture"
                  for p in earlier[0].get("content")), earlier)
    check("test_agent_history_new_message_has_no_image",
          msgs and msgs[-1].get("content") == "and what colour is it", msgs[-1:])

    # only the newest 16 MiB of base64 are sent again: three 5 MiB images are 20 MiB
    pid, chat_id = fresh_project(acct)
    big = [data_url("image/png", PNG + bytes([i]) * (5 * 1024 * 1024 - len(PNG))) for i in range(3)]
    for i, u in enumerate(big):
        events, _, err = send(acct, pid, chat_id, "big picture %d" % i, attachments=[{"type": "image", "url": u}])
    reset_double()
    events, _, err = send(acct, pid, chat_id, "which pictures do you see")
    reqs = double_requests()
    msgs = openai_messages(reqs[0]) if reqs else []
    users = [m for m in msgs if m.get("role") == "user"][:-1]
    sent = [[(p.get("image_url") or {}).get("url") for p in image_parts(m)] for m in users]
    first_text = "".join(p.get("text", "") for p in users[0].get("content")) if users and isinstance(
        users[0].get("content"), list) else (users[0].get("content") if users else "")
    check("test_agent_history_images_are_capped_newest_first",
          len(users) == 3 and sent == [[], [big[1]], [big[2]]] and "no longer shown" in (first_text or ""),
          ([len(x) for x in sent], first_text))

    # Anthropic: image blocks in the earlier user message
    other = signup(tag="img-history-anthropic")
    api("PUT", "/workspaces/%s/ai-provider" % other.workspace_id,
        {"protocol": "anthropic", "baseUrl": PROVIDER_URL + "/v1", "model": "claude-double"}, token=other.token)
    opid, ochat = fresh_project(other)
    send(other, opid, ochat, "what is in this picture", attachments=[{"type": "image", "url": url}])
    reset_double()
    events, _, err = send(other, opid, ochat, "and now")
    reqs = double_requests()
    msgs = openai_messages(reqs[0]) if reqs else []
    blocks = msgs[0].get("content") if msgs and isinstance(msgs[0].get("content"), list) else []
    check("test_agent_history_image_reaches_anthropic_again",
          types_of(events)[-1:] == ["session.task_complete"] and any(
              b.get("type") == "image" and (b.get("source") or {}).get("data") == base64.b64encode(PNG).decode()
              for b in blocks), msgs[:1])


def test_first_prompt(acct):
    start = time.monotonic()
    r = api("POST", "/workspaces/%s/projects" % acct.workspace_id,
            {"name": "First prompt", "template": "blank", "prompt": "write a file please"}, token=acct.token)
    took = time.monotonic() - start
    pid = created_id(r)
    check("test_agent_first_prompt_project_is_201_at_once (%.2f s)" % took, pid is not None and took < 5, r)
    if not pid:
        return
    r = api("GET", "/projects/%s/chats" % pid, token=acct.token)
    chat_id = (items_of(r.body) or [{}])[0].get("id")
    items = timeline(acct, pid, chat_id) or []
    check("test_agent_first_prompt_is_in_the_timeline_at_once",
          items and items[0].get("type") == "user.message" and items[0].get("text") == "write a file please", items)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        items = timeline(acct, pid, chat_id) or []
        if items and items[-1].get("type") in ("session.task_complete", "error"):
            break
        time.sleep(0.3)
    types = types_of(items)
    check("test_agent_first_prompt_runs_in_the_worker",
          types[:1] == ["user.message"] and "tool.result" in types and types[-1] == "session.task_complete"
          and types.count("user.message") == 1, types)
    r = api("GET", "/projects/%s/files/notes/hello.txt" % pid, token=acct.token)
    check("test_agent_first_prompt_changed_the_files", r.status == 200, r)
    done = items[-1] if items else {}
    check("test_agent_first_prompt_is_committed", done.get("filesChanged") is True and done.get("commit"), done)
    r = api("POST", "/workspaces/%s/projects" % acct.workspace_id, {"name": "No prompt", "template": "blank"},
            token=acct.token)
    pid2 = created_id(r)
    r = api("GET", "/projects/%s/chats" % pid2, token=acct.token)
    chat2 = (items_of(r.body) or [{}])[0].get("id")
    time.sleep(1.0)
    check("test_agent_no_prompt_queues_nothing", timeline(acct, pid2, chat2) == [], timeline(acct, pid2, chat2))
    r = api("POST", "/workspaces/%s/projects" % acct.workspace_id,
            {"name": "Blank prompt", "template": "blank", "prompt": "   "}, token=acct.token)
    pid3 = created_id(r)
    r = api("GET", "/projects/%s/chats" % pid3, token=acct.token)
    chat3 = (items_of(r.body) or [{}])[0].get("id")
    check("test_agent_blank_prompt_queues_nothing", timeline(acct, pid3, chat3) == [], json.dumps(r.body)[:300])


def main():
    if not PROVIDER_URL:
        check("test_agent_context needs the provider double", False, "SVC_PROVIDER_URL is not set")
        return
    acct = signup(tag="context")
    test_history_paging(acct)
    test_compaction(acct)
    test_attachments(acct)
    test_history_keeps_tool_traffic(acct)
    test_history_tool_traffic_anthropic()
    test_compaction_counts_tool_traffic(acct)
    test_history_images(acct)
    test_first_prompt(acct)


if __name__ == "__main__":
    try:
        main()
    except Exception:
        import traceback
        check("test_agent_context ran to the end", False, traceback.format_exc())
    sys.exit(finish())
