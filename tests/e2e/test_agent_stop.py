#!/usr/bin/env python3
# test_agent_stop.py: stop from another request, files kept on stop, a closed client cancels the provider call, one generation per chat
import http.client
import json
import os
import sys
import time
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from agentlib import double_stats, fresh_project, reset_double, send, send_in_thread, wait_closed_early  # noqa: E402
from svclib import BASE_URL, api, check, finish, signup, timeline, types_of  # noqa: E402


def test_stop(acct):
    pid, chat_id = fresh_project(acct)
    reset_double()
    th, state, first = send_in_thread(acct, pid, chat_id, "very slow please", until_delta=True)
    first.wait(30)
    r = api("POST", "/chat/%s/stop" % pid, {"chatId": chat_id}, token=acct.token)
    stopped_at = time.monotonic()
    check("test_agent_stop_answers_200_stop_requested",
          r.status == 200 and r.body.get("stopRequested") is True and r.body.get("chatId") == chat_id, r)
    th.join(30)
    events, times = state["events"], state["times"]
    last = events[-1] if events else {}
    check("test_agent_stop_ends_with_task_complete_stopped",
          "err" not in state and last.get("type") == "session.task_complete" and last.get("stopped") is True,
          (state.get("err"), events[-3:]))
    took = times[-1] - stopped_at if times else 99
    check("test_agent_stop_takes_effect_within_one_second (%.2f s)" % took, took <= 1.0, took)
    deltas = [e for e in events if e.get("type") == "assistant.message_delta"]
    check("test_agent_stop_cut_the_answer_short", 1 <= len(deltas) < 40, len(deltas))
    ok, waited = wait_closed_early(1, 3.0)
    check("test_agent_stop_closes_the_provider_connection", ok, (waited, double_stats()))
    items = timeline(acct, pid, chat_id) or []
    check("test_agent_stop_is_in_the_timeline",
          items and items[-1].get("type") == "session.task_complete" and items[-1].get("stopped") is True, items[-2:])
    # the lock is released: the next message runs
    events, _, err = send(acct, pid, chat_id, "hello after the stop")
    check("test_agent_stop_releases_the_chat", types_of(events)[-1:] == ["session.task_complete"], (err, events))
    r = api("POST", "/chat/%s/stop" % pid, {"chatId": chat_id}, token=acct.token)
    check("test_agent_stop_when_idle_answers_stop_requested_false",
          r.status == 200 and r.body.get("stopRequested") is False, r)


def test_stop_keeps_written_files(acct):
    pid, chat_id = fresh_project(acct)
    reset_double()
    th, state, first = send_in_thread(acct, pid, chat_id, "write then slow", until_delta=True)
    first.wait(30)
    r = api("POST", "/chat/%s/stop" % pid, {"chatId": chat_id}, token=acct.token)
    th.join(30)
    last = state["events"][-1] if state["events"] else {}
    check("test_agent_stop_after_a_write_reports_the_commit",
          last.get("stopped") is True and last.get("filesChanged") is True and len(last.get("commit") or "") == 40,
          last)
    r = api("GET", "/projects/%s/files/notes/partial.txt" % pid, token=acct.token)
    check("test_agent_stop_keeps_the_file_written_before_it", r.status == 200, r)
    r = api("GET", "/projects/%s/versions" % pid, token=acct.token)
    text = json.dumps(r.body)
    check("test_agent_stop_commit_is_in_the_history", last.get("commit") and last.get("commit") in text, r)


def test_stop_errors(acct, other):
    pid, chat_id = fresh_project(acct)
    r = api("POST", "/chat/%s/stop" % pid, {}, token=acct.token)
    check("test_agent_stop_without_chatid_is_400", r.status == 400 and r.body.get("field") == "chatId", r)
    r = api("POST", "/chat/%s/stop" % pid, {"chatId": "0b7d4c1e-9a2f-4e3b-8c5d-1f2e3a4b5c6d"}, token=acct.token)
    check("test_agent_stop_unknown_chat_is_404", r.status == 404, r)
    r = api("POST", "/chat/%s/stop" % pid, {"chatId": chat_id}, token=other.token)
    check("test_agent_stop_another_users_chat_is_403", r.status == 403, r)
    r = api("POST", "/chat/%s/stop" % pid, {"chatId": chat_id})
    check("test_agent_stop_without_token_is_401", r.status == 401, r)


def open_stream(acct, pid, chat_id, text):
    """Starts a message on a raw connection and reads up to its first delta; returns (conn, got_delta, status)."""
    u = urllib.parse.urlsplit(BASE_URL)
    conn = http.client.HTTPConnection(u.hostname, u.port or 80, timeout=30)
    conn.request("POST", "%s/chat/%s/messages" % (u.path, pid),
                 body=json.dumps({"chatId": chat_id, "text": text}).encode(),
                 headers={"Accept": "text/event-stream", "Content-Type": "application/json",
                          "Authorization": "Bearer " + acct.token})
    r = conn.getresponse()
    got_delta = False
    while True:
        line = r.readline()
        if not line:
            break
        if b"assistant.message_delta" in line:
            got_delta = True
            break
    return conn, got_delta, r.status


def wait_task_complete(acct, pid, chat_id, secs=15):
    deadline = time.monotonic() + secs
    items = []
    while time.monotonic() < deadline:
        items = timeline(acct, pid, chat_id) or []
        if items and items[-1].get("type") == "session.task_complete":
            break
        time.sleep(0.2)
    return items


def test_client_close_during_silence_cancels(acct):
    """The client leaves while the model streams nothing (a model thinking silently for 10 s): there is no
    delta to forward, and lighttpd and Apache notice a client that left only when a write to it fails; the
    responder's comment line after each second of silence makes that happen within about two seconds."""
    pid, chat_id = fresh_project(acct)
    reset_double()
    conn, got_delta, status = open_stream(acct, pid, chat_id, "quiet pause please")
    check("test_agent_client_close_in_silence_stream_started", status == 200 and got_delta, status)
    conn.sock.close()
    conn.close()
    ok, waited = wait_closed_early(1, 8.0)
    check("test_agent_client_close_in_silence_cancels_the_provider_call (%.2f s)" % waited, ok and waited <= 5.0,
          (waited, double_stats()))
    items = wait_task_complete(acct, pid, chat_id)
    check("test_agent_client_close_in_silence_is_recorded_as_stopped",
          items and items[-1].get("type") == "session.task_complete" and items[-1].get("stopped") is True
          and items[-1].get("reason") == "client_gone", items[-2:])


def test_client_close_cancels(acct):
    pid, chat_id = fresh_project(acct)
    reset_double()
    u = urllib.parse.urlsplit(BASE_URL)
    conn = http.client.HTTPConnection(u.hostname, u.port or 80, timeout=30)
    conn.request("POST", "%s/chat/%s/messages" % (u.path, pid),
                 body=json.dumps({"chatId": chat_id, "text": "very slow please"}).encode(),
                 headers={"Accept": "text/event-stream", "Content-Type": "application/json",
                          "Authorization": "Bearer " + acct.token})
    r = conn.getresponse()
    got_delta = False
    while True:
        line = r.readline()
        if not line:
            break
        if b"assistant.message_delta" in line:
            got_delta = True
            break
    check("test_agent_client_close_stream_started", r.status == 200 and got_delta, r.status)
    conn.sock.close()
    conn.close()
    closed_at = time.monotonic()
    ok, waited = wait_closed_early(1, 5.0)
    check("test_agent_client_close_cancels_the_provider_call (%.2f s)" % waited, ok and waited <= 2.0, double_stats())
    # the turn ends and the chat takes the next message
    deadline = closed_at + 10
    items = []
    while time.monotonic() < deadline:
        items = timeline(acct, pid, chat_id) or []
        if items and items[-1].get("type") == "session.task_complete":
            break
        time.sleep(0.2)
    check("test_agent_client_close_is_recorded_as_stopped",
          items and items[-1].get("type") == "session.task_complete" and items[-1].get("stopped") is True, items[-2:])
    deltas = [e for e in items if e.get("type") == "assistant.message_delta"]
    check("test_agent_client_close_keeps_what_was_streamed", deltas and "tick 1" in deltas[0].get("delta", ""), deltas)
    events, _, err = send(acct, pid, chat_id, "hello after the close")
    check("test_agent_client_close_releases_the_chat", types_of(events)[-1:] == ["session.task_complete"], (err, events))


def test_busy_chat_409(acct):
    pid, chat_id = fresh_project(acct)
    th, state, first = send_in_thread(acct, pid, chat_id, "slow please", until_delta=True)
    first.wait(30)
    r = api("POST", "/chat/%s/messages" % pid, {"chatId": chat_id, "text": "hello"}, token=acct.token,
            headers={"Accept": "text/event-stream"})
    check("test_agent_second_message_while_generating_is_409", r.status == 409 and r.body.get("error") == "conflict", r)
    r = api("POST", "/plan/%s" % pid, {"chatId": chat_id, "text": "plan please"}, token=acct.token,
            headers={"Accept": "text/event-stream"})
    check("test_agent_plan_while_generating_is_409", r.status == 409, r)
    th.join(30)


def main():
    acct = signup(tag="stop")
    other = signup(tag="stop-other")
    test_stop(acct)
    test_stop_keeps_written_files(acct)
    test_stop_errors(acct, other)
    test_client_close_cancels(acct)
    test_client_close_during_silence_cancels(acct)
    test_busy_chat_409(acct)


if __name__ == "__main__":
    try:
        main()
    except Exception:
        import traceback
        check("test_agent_stop ran to the end", False, traceback.format_exc())
    sys.exit(finish())
