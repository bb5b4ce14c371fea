#!/usr/bin/env python3
# test_agent_modes_plans.py: chat modes (build, plan, chat, custom), chat list, structured plans, running a plan
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from agentlib import (double_requests, fresh_project, last_user_text, new_chat, reset_double, send,  # noqa: E402
                      tool_names)
from svclib import TIME_RE, api, check, finish, items_of, signup, sse_all, timeline, types_of  # noqa: E402
import re  # noqa: E402


def file_status(acct, pid, path):
    return api("GET", "/projects/%s/files/%s" % (pid, path), token=acct.token).status


def test_modes(acct, pid):
    for mode in ("plan", "chat", "review-mode"):
        cid = new_chat(acct, pid, mode)
        check("test_agent_mode_%s_chat_created" % mode, cid is not None, cid)
        if not cid:
            continue
        reset_double()
        events, _, err = send(acct, pid, cid, "try to write x.txt")
        errs = [e for e in events if e.get("type") == "tool.error"]
        check("test_agent_mode_%s_denies_write_tools" % mode,
              err is None and errs and "denied" in (errs[0].get("error") or "") and
              types_of(events)[-1:] == ["session.task_complete"], (err, events))
        check("test_agent_mode_%s_wrote_nothing" % mode, file_status(acct, pid, "x.txt") == 404)
        reqs = double_requests()
        names = tool_names(reqs[0]) if reqs else []
        check("test_agent_mode_%s_offers_only_read_only_tools" % mode,
              sorted(names) == ["list_files", "read_file", "search_files"], names)
    cid = new_chat(acct, pid, "build")
    events, _, err = send(acct, pid, cid, "try to write x.txt")
    check("test_agent_mode_build_runs_write_tools",
          any(e.get("type") == "tool.result" for e in events) and file_status(acct, pid, "x.txt") == 200, events)

    r = api("GET", "/projects/%s/chats" % pid, token=acct.token)
    items = items_of(r.body) or []
    check("test_agent_chat_list_has_title_mode_and_times",
          r.status == 200 and items and all("title" in c and c.get("mode") and re.match(TIME_RE, c.get("createdAt") or "")
                                            and re.match(TIME_RE, c.get("updatedAt") or "") for c in items), items)
    ups = [c.get("updatedAt") for c in items]
    check("test_agent_chat_list_newest_first", ups == sorted(ups, reverse=True) and items[0].get("id") == cid, ups)
    check("test_agent_chat_title_defaults_to_first_message",
          items[0].get("title") == "try to write x.txt", items[0])
    modes = {c.get("id"): c.get("mode") for c in items}
    check("test_agent_custom_mode_is_kept", "review-mode" in modes.values(), modes)


def system_text(req):
    """The system prompt of a recorded OpenAI request."""
    msgs = (req.get("body") or {}).get("messages") or []
    return "".join(m.get("content") or "" for m in msgs if m.get("role") == "system")


def test_custom_modes(acct):
    """SVC_AI_MODES (./svc-dev test): review=read with tests/fixtures/agent-review-prompt.txt, scaffold=build."""
    pid, _ = fresh_project(acct)
    marker = "REVIEW-MODE-MARKER"
    cid = new_chat(acct, pid, "review")
    reset_double()
    events, _, err = send(acct, pid, cid, "try to write x.txt")
    reqs = double_requests()
    errs = [e for e in events if e.get("type") == "tool.error"]
    check("test_agent_custom_mode_read_denies_write_tools",
          errs and "denied" in (errs[0].get("error") or "") and file_status(acct, pid, "x.txt") == 404
          and types_of(events)[-1:] == ["session.task_complete"], (err, events))
    check("test_agent_custom_mode_read_offers_only_read_only_tools",
          reqs and sorted(tool_names(reqs[0])) == ["list_files", "read_file", "search_files"],
          [tool_names(q) for q in reqs])
    check("test_agent_custom_mode_prompt_file_reaches_the_system_prompt",
          reqs and marker in system_text(reqs[0]) and "in review mode" in system_text(reqs[0]),
          system_text(reqs[0])[-600:] if reqs else None)

    cid = new_chat(acct, pid, "scaffold")
    reset_double()
    events, _, err = send(acct, pid, cid, "write a file please")
    reqs = double_requests()
    check("test_agent_custom_mode_build_runs_write_tools",
          any(e.get("type") == "tool.result" for e in events) and file_status(acct, pid, "notes/hello.txt") == 200,
          (err, events))
    check("test_agent_custom_mode_build_offers_every_tool",
          reqs and sorted(tool_names(reqs[0])) == ["delete_file", "edit_file", "list_files", "read_file",
                                                   "search_files", "write_file"], [tool_names(q) for q in reqs])
    check("test_agent_custom_mode_build_has_no_read_only_paragraph_or_other_prompt",
          reqs and "read-only" not in system_text(reqs[0]) and marker not in system_text(reqs[0]),
          system_text(reqs[0])[-600:] if reqs else None)

    cid = new_chat(acct, pid, "not-configured")
    reset_double()
    events, _, err = send(acct, pid, cid, "try to write y.txt")
    reqs = double_requests()
    errs = [e for e in events if e.get("type") == "tool.error"]
    check("test_agent_unknown_custom_mode_behaves_as_chat",
          errs and "denied" in (errs[0].get("error") or "") and reqs
          and sorted(tool_names(reqs[0])) == ["list_files", "read_file", "search_files"]
          and marker not in system_text(reqs[0]) and "in not-configured mode" in system_text(reqs[0]),
          (events, system_text(reqs[0])[-400:] if reqs else None))


def test_plans(acct, pid, chat_id):
    r = api("GET", "/plan/%s/%s" % (pid, chat_id), token=acct.token)
    check("test_agent_plan_get_without_plan_is_404", r.status == 404 and r.body.get("error") == "not_found", r)
    r = api("POST", "/plan/%s/%s/run" % (pid, chat_id), token=acct.token, headers={"Accept": "text/event-stream"})
    check("test_agent_plan_run_without_plan_is_404", r.status == 404, r)

    reset_double()
    events, _, err = sse_all("/plan/%s" % pid, {"chatId": chat_id, "text": "plan please: add a footer"}, token=acct.token)
    types = types_of(events)
    check("test_agent_plan_streams_to_task_complete", err is None and types[-1:] == ["session.task_complete"],
          (err, types))
    created = [e for e in events if e.get("type") == "plan.created"]
    plan = created[0].get("plan") if created else {}
    check("test_agent_plan_created_event_carries_the_plan", len(plan.get("steps") or []) == 2, created)
    reqs = double_requests()
    check("test_agent_plan_mode_offers_only_read_only_tools",
          reqs and sorted(tool_names(reqs[0])) == ["list_files", "read_file", "search_files"],
          [tool_names(q) for q in reqs])
    sysmsg = ((reqs[0].get("body") or {}).get("messages") or [{}])[0].get("content", "") if reqs else ""
    check("test_agent_plan_mode_asks_for_a_fenced_json_plan", "```json" in sysmsg, sysmsg[-400:])

    r = api("GET", "/plan/%s/%s" % (pid, chat_id), token=acct.token)
    b = r.body if isinstance(r.body, dict) else {}
    steps = b.get("steps") or []
    check("test_agent_plan_get_answers_the_structured_plan",
          r.status == 200 and [s.get("title") for s in steps] == ["Add a footer", "Style the footer"]
          and [s.get("risk") for s in steps] == ["low", "medium"] and steps[0].get("files") == ["index.html"]
          and all(isinstance(s.get("description"), str) and s.get("description") for s in steps), r)
    check("test_agent_plan_keeps_raw_text", "Here is the plan I suggest." in (b.get("rawText") or "")
          and "Say the word" in (b.get("rawText") or ""), b.get("rawText"))
    r = api("GET", "/projects/%s/chats" % pid, token=acct.token)
    mode = next((c.get("mode") for c in items_of(r.body) or [] if c.get("id") == chat_id), None)
    check("test_agent_plan_makes_the_chat_a_plan_chat", mode == "plan", mode)
    check("test_agent_plan_changed_no_file", api("GET", "/projects/%s/versions" % pid, token=acct.token).status == 200)

    # Running the plan: build mode, the plan as the next user message.
    reset_double()
    events, _, err = sse_all("/plan/%s/%s/run" % (pid, chat_id), {}, token=acct.token)
    types = types_of(events)
    check("test_agent_plan_run_streams_to_task_complete", err is None and types[-1:] == ["session.task_complete"],
          (err, types))
    reqs = double_requests()
    sent = last_user_text(reqs[0]) if reqs else ""
    check("test_agent_plan_run_sends_the_plan_as_the_next_message",
          sent.startswith("Carry out this plan now") and "1. Add a footer" in sent and "2. Style the footer" in sent
          and "index.html" in sent, sent)
    check("test_agent_plan_run_has_write_tools", reqs and "write_file" in tool_names(reqs[0]),
          [tool_names(q) for q in reqs])
    check("test_agent_plan_run_writes_files", file_status(acct, pid, "plan-done.txt") == 200)
    done = events[-1] if events else {}
    check("test_agent_plan_run_commits", done.get("filesChanged") is True and isinstance(done.get("commit"), str), done)
    r = api("GET", "/projects/%s/chats" % pid, token=acct.token)
    mode = next((c.get("mode") for c in items_of(r.body) or [] if c.get("id") == chat_id), None)
    check("test_agent_plan_run_switches_the_chat_to_build", mode == "build", mode)
    users = [e for e in timeline(acct, pid, chat_id) or [] if e.get("type") == "user.message"]
    check("test_agent_plan_run_message_is_in_the_timeline",
          len(users) == 2 and users[-1].get("text", "").startswith("Carry out this plan now"), users)

    # A plan whose JSON is broken in one step keeps the good ones.
    cid = new_chat(acct, pid, "plan")
    events, _, err = sse_all("/plan/%s" % pid, {"chatId": cid, "text": "broken plan please"}, token=acct.token)
    r = api("GET", "/plan/%s/%s" % (pid, cid), token=acct.token)
    titles = [s.get("title") for s in (r.body.get("steps") or [])] if isinstance(r.body, dict) else None
    check("test_agent_plan_broken_json_keeps_the_good_steps", r.status == 200 and titles == ["Keep me", "Keep me too"],
          (titles, r))
    check("test_agent_plan_broken_json_keeps_raw_text", "Broken," in (r.body.get("rawText") or ""), r.body)

    # Errors before the stream.
    r = api("POST", "/plan/%s" % pid, {"chatId": cid}, token=acct.token, headers={"Accept": "text/event-stream"})
    check("test_agent_plan_without_text_is_400", r.status == 400 and r.body.get("field") == "text", r)
    r = api("GET", "/plan/%s/%s" % (pid, "0b7d4c1e-9a2f-4e3b-8c5d-1f2e3a4b5c6d"), token=acct.token)
    check("test_agent_plan_get_unknown_chat_is_404", r.status == 404, r)
    other = signup(tag="plan-other")
    r = api("GET", "/plan/%s/%s" % (pid, chat_id), token=other.token)
    check("test_agent_plan_get_of_another_users_project_is_403", r.status == 403, r)
    r = api("GET", "/plan/%s/%s" % (pid, chat_id))
    check("test_agent_plan_get_without_token_is_401", r.status == 401, r)


def main():
    acct = signup(tag="modes")
    pid, chat_id = fresh_project(acct)
    check("test_agent_modes_project_created", pid is not None and chat_id is not None, (pid, chat_id))
    if not pid:
        return
    test_modes(acct, pid)
    test_custom_modes(acct)
    pid2, chat2 = fresh_project(acct)
    test_plans(acct, pid2, chat2)


if __name__ == "__main__":
    try:
        main()
    except Exception:
        import traceback
        check("test_agent_modes_plans ran to the end", False, traceback.format_exc())
    sys.exit(finish())
