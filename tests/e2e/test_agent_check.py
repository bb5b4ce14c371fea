#!/usr/bin/env python3
# test_agent_check.py: the agent looks at its work (issue 29): after a build turn that changed files the preview is loaded in the sandboxed Chromium, check.result lists its errors with a screenshot, a fix round hands them to the model, and the same error twice stops the fixing with a note and no further provider call
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from agentlib import double_requests, fresh_project, last_user_text, new_chat, reset_double, send  # noqa: E402
from svclib import DATA_DIR, PROVIDER_URL, UNKNOWN_ID, api, check, finish, is_error, signup, timeline, types_of  # noqa: E402

PREFIX = "The preview shows these errors after your changes:"


def of_type(events, t):
    return [e for e in events if e.get("type") == t]


def calls_after_a_pause():
    """The provider calls the double saw, counted again after a second: a call after the end would show."""
    time.sleep(1.0)
    return len(double_requests())


def image_parts(req):
    """The images of the last user message of a recorded OpenAI request."""
    msgs = (req.get("body") or {}).get("messages") or []
    for m in reversed(msgs):
        if m.get("role") == "user":
            c = m.get("content")
            return [p for p in c if isinstance(p, dict) and p.get("type") == "image_url"] if isinstance(c, list) else []
    return []


def test_fixed(acct, pid, chat):
    reset_double()
    events, _, err = send(acct, pid, chat, "write a throwing page")
    checks = of_type(events, "check.result")
    calls = calls_after_a_pause()
    reqs = double_requests()
    print("# the double saw %d provider calls for a throwing page fixed in one round" % calls)
    first = checks[0] if checks else {}
    exc = [e for e in first.get("errors") or [] if e.get("kind") == "exception"]
    check("test_agent_check_lists_the_exception_with_its_line",
          len(exc) == 1 and exc[0].get("source") == "/app.js" and exc[0].get("line") == 3
          and "null" in (exc[0].get("message") or "") and first.get("fixing") is True and first.get("round") == 0,
          (err, types_of(events), checks))
    fix = [r for r in reqs if last_user_text(r).startswith(PREFIX)]
    check("test_agent_check_the_double_is_called_again_with_the_error",
          len(fix) >= 1 and "app.js line 3" in last_user_text(fix[0]) and "null" in last_user_text(fix[0]),
          [last_user_text(r)[:200] for r in reqs])
    check("test_agent_check_the_screenshot_goes_to_the_model",
          bool(fix) and len(image_parts(fix[0])) == 1
          and image_parts(fix[0])[0]["image_url"]["url"].startswith("data:image/png;base64,"), fix[:1] and image_parts(fix[0]))
    check("test_agent_check_after_the_fix_the_next_check_is_clean",
          len(checks) == 2 and checks[1].get("errors") == [] and checks[1].get("round") == 1
          and checks[1].get("fixing") is False, checks)
    done = (of_type(events, "session.task_complete") or [{}])[-1]
    check("test_agent_check_the_turn_ends_as_usual_with_one_commit",
          types_of(events)[-1] == "session.task_complete" and done.get("filesChanged") is True and done.get("commit")
          and calls == 4, (done, calls))
    url = first.get("screenshotUrl") or ""
    r = api("GET", url, token=acct.token) if url.startswith("http://") else None
    check("test_agent_check_the_screenshot_is_served_to_members",
          r is not None and r.status == 200 and r.headers.get("content-type") == "image/png"
          and r.raw[:4] == b"\x89PNG", (url, r))
    other = signup(tag="checkother")
    r2 = api("GET", url, token=other.token) if url else None
    check("test_agent_check_the_screenshot_is_refused_to_others",
          r2 is not None and r2.status in (403, 404), r2)
    r3 = api("GET", url) if url else None
    check("test_agent_check_the_screenshot_needs_a_sign_in_for_a_private_project",
          r3 is not None and r3.status in (401, 404), r3)
    r4 = api("GET", "/projects/%s/checks/%s.png" % (pid, UNKNOWN_ID), token=acct.token)
    r5 = api("GET", "/projects/%s/checks/..%%2Fx.png" % pid, token=acct.token)
    check("test_agent_check_an_unknown_screenshot_is_404", r4.status == 404 and r5.status == 404, (r4, r5))
    kept = timeline(acct, pid, chat)
    kept_checks = [e for e in kept if e.get("type") == "check.result"]
    check("test_agent_check_results_are_in_the_timeline",
          len(kept_checks) == 2 and kept_checks[0].get("errors") == first.get("errors"), kept_checks)


def png_size(data_url):
    """The width and height of a PNG data URL (its IHDR), or None."""
    import base64
    raw = base64.b64decode(data_url.split(",", 1)[1])
    return (int.from_bytes(raw[16:20], "big"), int.from_bytes(raw[20:24], "big")) if raw[:4] == b"\x89PNG" else None


def test_element_image(acct, pid, chat):
    """Select element without an image (the web app cannot crop the preview's frame): svc crops it itself."""
    reset_double()
    el = {"type": "element", "selector": "h1", "pagePath": "/index.html", "html": "<h1>Items</h1>", "text": "Items"}
    events, _, err = send(acct, pid, chat, "hello there", attachments=[el])
    reqs = double_requests()
    parts = image_parts(reqs[0]) if reqs else []
    size = png_size(parts[0]["image_url"]["url"]) if parts else None
    check("test_agent_check_an_element_without_image_gets_a_crop_of_its_box",
          len(parts) == 1 and size is not None and 0 < size[0] <= 1280 and 0 < size[1] < 200
          and "h1" in last_user_text(reqs[0]), (err, types_of(events), size))
    reset_double()
    gone = dict(el, selector="#no-such-element")
    events, _, err = send(acct, pid, chat, "hello there", attachments=[gone])
    reqs = double_requests()
    check("test_agent_check_an_element_not_on_the_page_goes_as_text_only",
          len(reqs) == 1 and image_parts(reqs[0]) == [] and "#no-such-element" in last_user_text(reqs[0])
          and types_of(events)[-1] == "session.task_complete", (err, types_of(events)))


def test_breaker(acct, pid, chat):
    reset_double()
    events, _, err = send(acct, pid, chat, "write a stubborn page")
    checks = of_type(events, "check.result")
    calls = calls_after_a_pause()
    print("# the double saw %d provider calls for an error it never fixes (the same-error breaker)" % calls)
    fix = [r for r in double_requests() if last_user_text(r).startswith(PREFIX)]
    notes = [e.get("text") or "" for e in of_type(events, "assistant.message")]
    check("test_agent_check_the_same_error_stops_after_one_round",
          len(checks) == 2 and checks[0].get("fixing") is True and checks[1].get("fixing") is False
          and checks[1].get("errors") and "I stopped fixing" in notes[-1] and "/app.js" in notes[-1],
          (err, types_of(events), checks, notes))
    check("test_agent_check_no_provider_call_after_the_breaker", calls == 4 and len(fix) == 2, (calls, len(fix)))
    shots = os.path.join(DATA_DIR, "checks", pid) if DATA_DIR else ""
    had = bool(shots) and os.path.isdir(shots) and len(os.listdir(shots)) == 2
    r = api("DELETE", "/projects/%s?hard=true" % pid, token=acct.token)
    check("test_agent_check_a_hard_delete_removes_the_screenshots",
          had and r.status in (200, 204) and not os.path.exists(shots), (had, r, shots))


def test_requests_and_console(acct, pid, chat):
    reset_double()
    events, _, err = send(acct, pid, chat, "write a page with failing requests")
    checks = of_type(events, "check.result")
    errors = (checks[0] if checks else {}).get("errors") or []
    kinds = {(e.get("kind"), e.get("source")) for e in errors}
    console = [e for e in errors if e.get("kind") == "console"]
    check("test_agent_check_lists_failed_same_origin_requests",
          ("request", "/missing.png") in kinds and ("request", "/missing.js") in kinds
          and all("404" in e["message"] for e in errors if e.get("kind") == "request"), (err, errors))
    check("test_agent_check_lists_console_errors_with_their_line",
          len(console) == 1 and "the list is empty" in console[0].get("message")
          and console[0].get("source") == "/index.html" and console[0].get("line") == 8, console)
    calls = calls_after_a_pause()
    print("# the double saw %d provider calls for a fix round that changed nothing" % calls)
    notes = [e.get("text") or "" for e in of_type(events, "assistant.message")]
    check("test_agent_check_a_round_without_a_change_stops_the_fixing",
          len(checks) == 1 and calls == 3 and "changed no file" in notes[-1], (calls, notes))


def test_no_change(acct, pid, chat):
    reset_double()
    events, _, err = send(acct, pid, chat, "hello there")
    check("test_agent_check_a_turn_that_changed_nothing_makes_no_check",
          not of_type(events, "check.result") and types_of(events)[-1] == "session.task_complete"
          and len(double_requests()) == 1, (err, types_of(events)))


def test_read_only_mode(acct, pid):
    chat = new_chat(acct, pid, "chat")
    reset_double()
    events, _, err = send(acct, pid, chat, "write a throwing page")
    check("test_agent_check_read_only_modes_make_no_check", not of_type(events, "check.result"),
          (err, types_of(events)))


def test_workspace_fix_rounds(acct, pid, chat):
    wid = acct.workspace_id
    r = api("GET", "/workspaces/%s/budget" % wid, token=acct.token)
    check("test_agent_check_budget_shows_the_fix_rounds",
          r.status == 200 and r.body.get("fixRounds") is None and r.body.get("instanceFixRounds") == 2, r)
    bad = api("PUT", "/workspaces/%s/budget" % wid, {"caps": {}, "fixRounds": 11}, token=acct.token)
    bad2 = api("PUT", "/workspaces/%s/budget" % wid, {"caps": {}, "fixRounds": "one"}, token=acct.token)
    check("test_agent_check_fix_rounds_out_of_range_is_400",
          is_error(bad, 400, "validation_failed", "fixRounds") and is_error(bad2, 400, "validation_failed", "fixRounds"),
          (bad, bad2))
    after_bad = api("GET", "/workspaces/%s/budget" % wid, token=acct.token)
    check("test_agent_check_a_refused_fix_rounds_changes_nothing", after_bad.body.get("fixRounds") is None, after_bad)
    r = api("PUT", "/workspaces/%s/budget" % wid, {"caps": {}, "fixRounds": 0}, token=acct.token)
    check("test_agent_check_a_workspace_sets_its_fix_rounds", r.status == 200 and r.body.get("fixRounds") == 0, r)
    reset_double()
    events, _, err = send(acct, pid, chat, "write a throwing page")
    checks = of_type(events, "check.result")
    calls = calls_after_a_pause()
    notes = [e.get("text") or "" for e in of_type(events, "assistant.message")]
    check("test_agent_check_with_no_fix_round_the_errors_are_shown_not_fixed",
          len(checks) == 1 and checks[0].get("fixing") is False and checks[0].get("errors") and calls == 2
          and "no fix round left" in notes[-1], (err, checks, calls, notes))
    r = api("PUT", "/workspaces/%s/budget" % wid, {"caps": {}, "fixRounds": None}, token=acct.token)
    check("test_agent_check_fix_rounds_null_is_the_instances_again", r.status == 200 and r.body.get("fixRounds") is None,
          r)


def main():
    if not PROVIDER_URL:
        check("test_agent_check needs the provider double", False, "SVC_PROVIDER_URL is not set")
        return
    acct = signup(tag="check")
    pid, chat = fresh_project(acct)
    test_no_change(acct, pid, chat)
    test_fixed(acct, pid, chat)
    test_element_image(acct, pid, chat)
    pid, chat = fresh_project(acct)
    test_breaker(acct, pid, chat)
    pid, chat = fresh_project(acct)
    test_requests_and_console(acct, pid, chat)
    test_read_only_mode(acct, pid)
    pid, chat = fresh_project(acct)
    test_workspace_fix_rounds(acct, pid, chat)


if __name__ == "__main__":
    main()
    sys.exit(finish())
