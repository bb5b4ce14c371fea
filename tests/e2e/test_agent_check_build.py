#!/usr/bin/env python3
# test_agent_check_build.py: the preview check of a package.json project (issue 29): in a project of the react template the
# turn's files are built as the preview is (npm ci from the registry through svc's proxy, vite build, in the build sandbox);
# a syntax error in src/App.tsx is a check error of kind "build" with its file and line, the double gets it in a fix round,
# fixes it, and the next check builds and loads the page clean; a Stop during the check's build ends it at once.
import glob
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from agentlib import double_requests, fresh_project, last_user_text, reset_double, send, send_in_thread  # noqa: E402
from svclib import DATA_DIR, PROVIDER_URL, api, check, finish, signup, types_of  # noqa: E402

PREFIX = "The preview shows these errors after your changes:"
TEMPLATES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "templates")


def of_type(events, t):
    return [e for e in events if e.get("type") == t]


def check_trees(pid):
    """The check's build trees of project `pid` on disk (SVC_DATA_DIR/builds/check-<pid>-<random>)."""
    return glob.glob(os.path.join(DATA_DIR, "builds", "check-%s-*" % pid)) if DATA_DIR else []


def file_text(acct, pid, path):
    r = api("GET", "/projects/%s/files/%s" % (pid, path), token=acct.token)
    return r.raw.decode("utf-8", "replace") if r.status == 200 and isinstance(r.raw, bytes) else ""


def has_image(req):
    msgs = (req.get("body") or {}).get("messages") or []
    for m in reversed(msgs):
        if m.get("role") == "user":
            c = m.get("content")
            return isinstance(c, list) and any(isinstance(p, dict) and p.get("type") == "image_url" for p in c)
    return False


def test_build_error_fixed(acct, pid, chat):
    """The project's first build: its npm ci reaches the registry through svc's proxy (SVC_BUILD_NETWORK=1)."""
    reset_double()
    t0 = time.monotonic()
    events, _, err = send(acct, pid, chat, "write a broken component")
    took = time.monotonic() - t0
    checks = of_type(events, "check.result")
    time.sleep(1.0)
    reqs = double_requests()
    print("# the double saw %d provider calls for a build error fixed in one round (turn took %.1f s)" % (len(reqs), took))
    first = checks[0] if checks else {}
    build = [e for e in first.get("errors") or [] if e.get("kind") == "build"]
    check("test_agent_check_build_error_has_its_file_and_line",
          len(build) == 1 and build[0].get("source") == "src/App.tsx" and build[0].get("line") == 7
          and 'Expected ")" but found "}"' == build[0].get("message") and first.get("fixing") is True
          and first.get("round") == 0, (err, types_of(events), checks))
    check("test_agent_check_build_error_has_no_screenshot", bool(first) and first.get("screenshotUrl") is None, first)
    fix = [r for r in reqs if last_user_text(r).startswith(PREFIX)]  # the round's two calls (write, text)
    check("test_agent_check_build_the_double_is_called_again_with_the_build_error",
          len(fix) == 2 and 'build in src/App.tsx line 7: Expected ")" but found "}"' in last_user_text(fix[0])
          and not has_image(fix[0]), [last_user_text(r)[:300] for r in reqs])
    second = checks[1] if len(checks) > 1 else {}
    check("test_agent_check_build_after_the_fix_the_built_page_checks_clean",
          len(checks) == 2 and second.get("errors") == [] and second.get("round") == 1 and second.get("fixing") is False
          and (second.get("screenshotUrl") or "").startswith("http"), checks)
    done = (of_type(events, "session.task_complete") or [{}])[-1]
    check("test_agent_check_build_four_provider_calls_and_one_commit",
          types_of(events)[-1:] == ["session.task_complete"] and done.get("commit") and len(reqs) == 4,
          (done, len(reqs)))
    check("test_agent_check_build_the_fix_is_in_the_project", "</li>)}" in file_text(acct, pid, "src/App.tsx"),
          file_text(acct, pid, "src/App.tsx")[:300])
    url = second.get("screenshotUrl") or ""
    r = api("GET", url, token=acct.token) if url else None
    check("test_agent_check_build_the_built_page_has_its_screenshot",
          r is not None and r.status == 200 and r.raw[:4] == b"\x89PNG", (url, r))
    check("test_agent_check_build_leaves_no_build_tree", DATA_DIR and not check_trees(pid), check_trees(pid))


def test_stop_during_build(acct, pid, chat):
    """The double writes a vite.config.ts whose build waits 30 s; a Stop while the check builds ends the turn at once."""
    reset_double()
    th, state, ready = send_in_thread(acct, pid, chat, "write a slow build", until_delta=True)
    ready.wait(60)
    t0, trees = time.monotonic(), []
    while time.monotonic() - t0 < 60 and not trees and th.is_alive():
        trees = check_trees(pid)
        time.sleep(0.2)
    time.sleep(3)  # past the install (node_modules from the store), into vite's wait
    building = th.is_alive() and bool(check_trees(pid))
    r = api("POST", "/chat/%s/stop" % pid, {"chatId": chat}, token=acct.token)
    stopped_at = time.monotonic()
    th.join(60)
    events, times = state["events"], state["times"]
    last = events[-1] if events else {}
    took = times[-1] - stopped_at if times else 99
    print("# a Stop during the check's build ended the turn %.2f s later" % took)
    check("test_agent_check_build_a_stop_reaches_the_running_build",
          building and r.status == 200 and r.body.get("stopRequested") is True, (building, trees, r))
    check("test_agent_check_build_a_stop_ends_the_build_at_once (%.2f s)" % took,
          "err" not in state and last.get("type") == "session.task_complete" and last.get("stopped") is True
          and took <= 5.0, (state.get("err"), took, events[-3:]))
    check("test_agent_check_build_a_stopped_build_sends_no_check_result_and_leaves_no_tree",
          not of_type(events, "check.result") and not check_trees(pid), (types_of(events), check_trees(pid)))
    check("test_agent_check_build_a_stopped_turn_keeps_its_files",
          last.get("filesChanged") is True and "UNTIL" in file_text(acct, pid, "vite.config.ts"), last)
    # the template's vite.config.ts again, so the preview builds svc-worker runs next do not wait in it
    with open(os.path.join(TEMPLATES, "react", "vite.config.ts"), encoding="utf-8") as f:
        api("PUT", "/projects/%s/files/vite.config.ts" % pid, {"content": f.read(), "overwrite": True}, token=acct.token)


def main():
    if not PROVIDER_URL or not DATA_DIR:
        check("test_agent_check_build needs the provider double and SVC_DATA_DIR", False, (PROVIDER_URL, DATA_DIR))
        return
    acct = signup(tag="checkbuild")
    pid, chat = fresh_project(acct, template="react")
    check("test_agent_check_build_react_project_created", bool(pid and chat), (pid, chat))
    if not pid:
        return
    test_build_error_fixed(acct, pid, chat)
    test_stop_during_build(acct, pid, chat)


if __name__ == "__main__":
    main()
    sys.exit(finish())
