#!/usr/bin/env python3
# test_turn_caps.py: agent turns running at once are capped per user (SVC_AI_MAX_TURNS_PER_USER, 4)
# and per workspace (SVC_AI_MAX_TURNS_PER_WORKSPACE, 6 in the test stack): one more is 429 with
# Retry-After and leaves nothing behind; a queued first prompt waits for room without using its
# attempts (issue 17, review finding 7).
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from agentlib import fresh_project, new_chat, send_in_thread  # noqa: E402
from svclib import (api, check, created_id, finish, is_error, items_of, setting, signup, sql, timeline,  # noqa: E402
                    types_of)

USER_CAP = int(setting("SVC_AI_MAX_TURNS_PER_USER") or 4)
WS_CAP = int(setting("SVC_AI_MAX_TURNS_PER_WORKSPACE") or 16)


def start_slow(acct, pid, chats):
    """One ten-second turn in each chat; returns the (thread, state, started) of each once all began."""
    runs = [send_in_thread(acct, pid, c, "very slow please", until_delta=True, daemon=True) for c in chats]
    for _, _, started in runs:
        started.wait(30)
    return runs


def stop_all(acct, pid, chats, runs):
    for c in chats:
        api("POST", "/chat/%s/stop" % pid, {"chatId": c}, token=acct.token)
    for th, _, _ in runs:
        th.join(30)


def refused(r):
    return is_error(r, 429, "rate_limited") and r.headers.get("retry-after") == "5"


def main():
    a = signup(tag="caps-a")
    b = signup(tag="caps-b")
    # a team workspace of a and b, so that the workspace's cap is reached by two people
    wid = created_id(api("POST", "/workspaces", {"name": "Caps team"}, token=a.token))
    r = api("POST", "/workspaces/%s/members" % wid, {"email": b.email}, token=a.token) if wid else None
    check("test_turn_caps_team_workspace", wid and r is not None and r.status in (200, 201), r)
    pid = created_id(api("POST", "/workspaces/%s/projects" % wid, {"name": "Caps", "template": "blank"},
                         token=a.token)) if wid else None
    chats = [new_chat(a, pid, "build") for _ in range(USER_CAP + 1)] if pid else []
    if not pid or not all(chats):
        check("test_turn_caps_setup", False, chats)
        return finish()

    # the user's cap: four running, the fifth refused, and nothing of it stored
    runs = start_slow(a, pid, chats[:USER_CAP])
    check("test_turn_caps_a_user_runs_up_to_the_cap_at_once",
          all("assistant.message_delta" in types_of(st["events"]) for _, st, _ in runs),
          [types_of(st["events"])[:3] for _, st, _ in runs])
    r = api("POST", "/chat/%s/messages" % pid, {"chatId": chats[USER_CAP], "text": "one more"}, token=a.token)
    check("test_turn_caps_one_more_of_a_user_is_429_with_retry_after", refused(r), r)
    check("test_turn_caps_refused_turn_stores_nothing",
          "user.message" not in types_of(timeline(a, pid, chats[USER_CAP]) or []))

    # a first prompt queued meanwhile waits for room, without using an attempt
    r = api("POST", "/workspaces/%s/projects" % a.workspace_id,
            {"name": "Waits for room", "template": "blank", "prompt": "write a file please"}, token=a.token)
    # (in a's personal workspace: a's own cap holds it back)
    waiting = created_id(r)
    check("test_turn_caps_first_prompt_still_201", r.status == 201 and waiting, r)
    row = None
    t0 = time.monotonic()
    while waiting and time.monotonic() - t0 < 20:
        out = sql("SELECT state, attempts, IFNULL(last_error, '') FROM jobs WHERE kind = 'chat.first_prompt' "
                  "AND payload LIKE '%%%s%%' ORDER BY id DESC LIMIT 1" % waiting).rstrip("\n")
        row = out.split("\t") if out else None
        if row and row[0] == "queued" and "cap" in row[2]:
            break
        time.sleep(0.2)
    check("test_turn_caps_first_prompt_waits_without_using_an_attempt",
          row and row[0] == "queued" and row[1] == "0" and "cap" in row[2], row)

    # the workspace's cap: b, a member, runs what is left of it; one more is refused though b is under
    # b's own cap
    b_chats = [new_chat(b, pid, "build") for _ in range(WS_CAP - USER_CAP + 1)]
    b_runs = start_slow(b, pid, b_chats[:WS_CAP - USER_CAP])
    r = api("POST", "/chat/%s/messages" % pid, {"chatId": b_chats[-1], "text": "one more"}, token=b.token)
    check("test_turn_caps_over_the_workspace_cap_is_429", refused(r), r)
    # another workspace is not counted: b's own
    bpid, bchat = fresh_project(b)
    r_th, r_st, r_started = send_in_thread(b, bpid, bchat, "hello", daemon=True)
    r_th.join(60)
    check("test_turn_caps_other_workspace_unaffected",
          types_of(r_st["events"])[-1:] == ["session.task_complete"], types_of(r_st["events"])[-5:])

    # room again once turns end: the refused chat runs, the waiting first prompt completes
    stop_all(b, pid, b_chats[:WS_CAP - USER_CAP], b_runs)
    stop_all(a, pid, chats[:USER_CAP], runs)
    r_th, r_st, _ = send_in_thread(a, pid, chats[USER_CAP], "hello", daemon=True)
    r_th.join(60)
    check("test_turn_caps_room_again_after_turns_end",
          types_of(r_st["events"])[-1:] == ["session.task_complete"], types_of(r_st["events"])[-5:])
    chat = (items_of(api("GET", "/projects/%s/chats" % waiting, token=a.token).body) or [{}])[0].get("id")
    types = []
    t0 = time.monotonic()
    while waiting and chat and time.monotonic() - t0 < 60:
        types = types_of(timeline(a, waiting, chat) or [])
        if types[-1:] in (["session.task_complete"], ["error"]):
            break
        time.sleep(0.3)
    check("test_turn_caps_waiting_first_prompt_runs_when_there_is_room", types[-1:] == ["session.task_complete"],
          types[-6:])
    return finish()


if __name__ == "__main__":
    sys.exit(main())
