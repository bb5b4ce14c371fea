#!/usr/bin/env python3
# test_agent_loop.py: the loop breaker: the same tool call three times, or SVC_AGENT_IDLE_STEPS (6) build-mode steps without a file change, stop the turn with session.loop_stopped and no further provider call
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from agentlib import double_requests, fresh_project, new_chat, reset_double, send  # noqa: E402
from svclib import PROVIDER_URL, check, finish, signup, timeline, types_of  # noqa: E402

IDLE_STEPS = 6  # SVC_AGENT_IDLE_STEPS's default; ./svc-dev test does not set it


def of_type(events, t):
    return [e for e in events if e.get("type") == t]


def calls_after_a_pause():
    """The provider calls the double saw, counted again after a second: a call after the stop would show."""
    time.sleep(1.0)
    return len(double_requests())


def test_repeated_call(acct, pid, chat):
    reset_double()
    events, _, err = send(acct, pid, chat, "loop same call")
    stop = of_type(events, "session.loop_stopped")
    done = (of_type(events, "session.task_complete") or [{}])[-1]
    calls = calls_after_a_pause()
    print("# the double saw %d provider calls for three identical tool calls" % calls)
    check("test_agent_loop_three_identical_calls_stop_the_turn",
          len(stop) == 1 and stop[0].get("reason") == "repeated_call" and stop[0].get("tool") == "read_file"
          and stop[0].get("args") == {"path": "index.html"} and stop[0].get("count") == 3
          and done.get("stopped") is True and done.get("reason") == "loop", (err, types_of(events), stop, done))
    check("test_agent_loop_the_third_identical_call_is_not_run_and_no_call_follows",
          calls == 3 and len(of_type(events, "tool.call")) == 2 and len(of_type(events, "tool.result")) == 2, calls)
    msg = (of_type(events, "assistant.message") or [{}])[-1].get("text") or ""
    check("test_agent_loop_the_user_reads_why", "same read_file call 3 times" in msg, msg)
    kept = [e.get("type") for e in timeline(acct, pid, chat)]
    check("test_agent_loop_the_stop_is_in_the_timeline", "session.loop_stopped" in kept, kept[-8:])


def test_idle_steps(acct, pid, chat):
    reset_double()
    events, _, err = send(acct, pid, chat, "loop idle")
    stop = of_type(events, "session.loop_stopped")
    done = (of_type(events, "session.task_complete") or [{}])[-1]
    calls = calls_after_a_pause()
    print("# the double saw %d provider calls for steps without a file change" % calls)
    check("test_agent_loop_idle_steps_stop_the_turn",
          len(stop) == 1 and stop[0].get("reason") == "idle_steps" and stop[0].get("steps") == IDLE_STEPS
          and done.get("reason") == "loop" and types_of(events)[-1] == "session.task_complete",
          (err, types_of(events), stop))
    check("test_agent_loop_no_provider_call_after_the_idle_breaker", calls == IDLE_STEPS, calls)


def test_files_change_keeps_going(acct, pid, chat):
    reset_double()
    events, _, err = send(acct, pid, chat, "write a file")
    check("test_agent_loop_a_normal_turn_is_not_stopped",
          not of_type(events, "session.loop_stopped") and (of_type(events, "session.task_complete") or [{}])[-1]
          .get("stopped") is False, (err, types_of(events)))


def test_read_only_mode(acct, pid):
    chat = new_chat(acct, pid, "chat")
    reset_double()
    events, _, err = send(acct, pid, chat, "loop idle")
    stop = of_type(events, "session.loop_stopped")
    check("test_agent_loop_idle_steps_apply_to_build_mode_only",
          not stop and len(double_requests()) == 25 and "limit of 25 model calls" in
          ((of_type(events, "assistant.message") or [{}])[-1].get("text") or ""), (err, stop, len(double_requests())))


def main():
    if not PROVIDER_URL:
        check("test_agent_loop needs the provider double", False, "SVC_PROVIDER_URL is not set")
        return
    acct = signup(tag="loop")
    pid, chat = fresh_project(acct)
    test_repeated_call(acct, pid, chat)
    test_idle_steps(acct, pid, chat)
    test_files_change_keeps_going(acct, pid, chat)
    test_read_only_mode(acct, pid)


if __name__ == "__main__":
    try:
        main()
    except Exception:
        import traceback
        check("test_agent_loop ran to the end", False, traceback.format_exc())
    sys.exit(finish())
