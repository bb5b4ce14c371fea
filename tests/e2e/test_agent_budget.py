#!/usr/bin/env python3
# test_agent_budget.py: spending caps (workspace day and month, member (the workspace's and one member's own), project, API token, turn): refused before any provider call, the 80 % warning, a turn stopped at its cap; a spend that cannot be recorded stops the turn (fails closed); GET/PUT /workspaces/:wid/budget, GET /admin/budget
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from agentlib import double_requests, fresh_project, reset_double, send  # noqa: E402
from svclib import (PROVIDER_URL, UNKNOWN_ID, api, check, created_id, default_chat_id, finish, is_error, signup,  # noqa: E402
                    sql, sse_all, types_of)
from wslib import Team, create_in, platform_admin  # noqa: E402

# the double's model "double" costs 1 USD per million input tokens: "spend 800 tokens" is 0.0008 USD
SPEND = "please spend 800 tokens"
STEP_USD = 0.0003  # one step of "loop idle" (300 input tokens)


def budget(who, wid):
    return api("GET", "/workspaces/%s/budget" % wid, token=who.token if who else None)


def set_caps(who, wid, caps):
    return api("PUT", "/workspaces/%s/budget" % wid, {"caps": caps}, token=who.token if who else None)


def of_type(events, t):
    return [e for e in events if e.get("type") == t]


def refused(events, cap):
    return (types_of(events) == ["error"] and events[0].get("error") == "credit_exhausted"
            and events[0].get("cap") == cap and cap_words(cap) in (events[0].get("message") or ""))


def cap_words(cap):
    return {"workspaceDay": "daily cap", "workspaceMonth": "monthly cap", "memberDay": "your daily cap",
            "projectDay": "project's daily cap", "tokenDay": "token's daily cap", "turn": "cap of one turn"}[cap]


def refused_without_a_call(name, send_it, cap):
    """Sends the next message after a cap was reached: refused naming the cap, and the double saw no request."""
    reset_double()
    events, _, err = send_it()
    check(name, refused(events, cap) and double_requests() == [], (err, events, len(double_requests())))


def test_workspace_day():
    acct = signup(tag="budget-day")
    pid, chat = fresh_project(acct)
    r = set_caps(acct, acct.workspace_id, {"workspaceDay": {"limitUsd": 0.001}})
    b = r.body if isinstance(r.body, dict) else {}
    cap = (b.get("caps") or {}).get("workspaceDay") or {}
    check("test_agent_budget_owner_sets_a_day_cap_with_defaults",
          r.status == 200 and cap.get("limitUsd") == 0.001 and cap.get("warnPercent") == 80 and cap.get("block") is True
          and cap.get("updatedAt") and b.get("canEdit") is True, r)
    events, _, err = send(acct, pid, chat, SPEND)
    warn = of_type(events, "session.budget_warning")
    check("test_agent_budget_warning_arrives_at_80_percent",
          types_of(events)[-1:] == ["session.task_complete"] and len(warn) == 1
          and warn[0].get("cap") == "workspaceDay" and warn[0].get("percent") == 80 and warn[0].get("block") is True
          and abs(warn[0].get("spentUsd", 0) - 0.0008) < 1e-9 and warn[0].get("message"), (err, events))
    b = budget(acct, acct.workspace_id).body or {}
    check("test_agent_budget_spend_is_shown_with_its_warning",
          abs((b.get("spent") or {}).get("workspaceDay", 0) - 0.0008) < 1e-9
          and abs((b.get("spent") or {}).get("memberDay", 0) - 0.0008) < 1e-9
          and "workspaceDay" in (b.get("warnings") or []), b)
    events, _, err = send(acct, pid, chat, SPEND)
    check("test_agent_budget_a_turn_under_the_cap_runs_warned_at_its_start",
          types_of(events)[0] == "session.budget_warning" and types_of(events)[-1] == "session.task_complete",
          (err, types_of(events)))
    refused_without_a_call("test_agent_budget_workspace_day_cap_refuses_before_any_provider_call",
                           lambda: send(acct, pid, chat, "hello"), "workspaceDay")
    r = set_caps(acct, acct.workspace_id, {"workspaceDay": {"limitUsd": 0.001, "block": False}})
    events, _, err = send(acct, pid, chat, "hello")
    check("test_agent_budget_a_cap_that_does_not_block_only_warns",
          r.status == 200 and types_of(events)[0] == "session.budget_warning"
          and types_of(events)[-1] == "session.task_complete", (err, events))
    r = set_caps(acct, acct.workspace_id, {"workspaceDay": None})
    b = r.body if isinstance(r.body, dict) else {}
    events, _, err = send(acct, pid, chat, "hello")
    check("test_agent_budget_null_removes_a_cap",
          r.status == 200 and (b.get("caps") or {}).get("workspaceDay", 1) is None
          and "session.budget_warning" not in types_of(events) and types_of(events)[-1] == "session.task_complete",
          (r, events))
    return acct


def test_workspace_month():
    acct = signup(tag="budget-month")
    pid, chat = fresh_project(acct)
    set_caps(acct, acct.workspace_id, {"workspaceMonth": {"limitUsd": 0.0005}})
    send(acct, pid, chat, SPEND)
    refused_without_a_call("test_agent_budget_workspace_month_cap_refuses_before_any_provider_call",
                           lambda: send(acct, pid, chat, "hello"), "workspaceMonth")


def test_member_and_project(team):
    r = set_caps(team.member, team.wid, {"memberDay": {"limitUsd": 1}})
    check("test_agent_budget_member_cannot_set_caps", is_error(r, 403, "forbidden"), r)
    r = set_caps(team.admin, team.wid, {"memberDay": {"limitUsd": 0.0005}, "projectDay": {"limitUsd": 0.0015}})
    check("test_agent_budget_admin_sets_caps", r.status == 200, r)
    pid = created_id(create_in(team.member, team.wid, "Budget member project"))
    chat = default_chat_id(team.member, pid)
    send(team.member, pid, chat, SPEND)
    b = budget(team.member, team.wid).body or {}
    check("test_agent_budget_member_sees_their_own_spend_and_caps",
          abs((b.get("spent") or {}).get("memberDay", 0) - 0.0008) < 1e-9 and b.get("canEdit") is False
          and "today" not in b and (b.get("caps") or {}).get("memberDay", {}).get("limitUsd") == 0.0005
          and "memberDay" in (b.get("warnings") or []), b)
    refused_without_a_call("test_agent_budget_member_day_cap_refuses_before_any_provider_call",
                           lambda: send(team.member, pid, chat, "hello"), "memberDay")
    reset_double()
    events, _, err = send(team.owner, pid, chat, SPEND)
    check("test_agent_budget_member_cap_is_per_member", types_of(events)[-1:] == ["session.task_complete"],
          (err, events))
    b = budget(team.owner, team.wid).body or {}
    members = {m.get("id"): m.get("spentUsd") for m in (b.get("today") or {}).get("members") or []}
    projects = {m.get("id"): m.get("spentUsd") for m in (b.get("today") or {}).get("projects") or []}
    check("test_agent_budget_admins_see_todays_spend_per_member_and_project",
          abs(members.get(team.member.user["id"], 0) - 0.0008) < 1e-9
          and abs(members.get(team.owner.user["id"], 0) - 0.0008) < 1e-9
          and abs(projects.get(pid, 0) - 0.0016) < 1e-9 and b.get("canEdit") is True, b)
    # the project is at 0.0016 of its 0.0015: no one may start a turn in it; another project still runs
    set_caps(team.admin, team.wid, {"memberDay": None})
    refused_without_a_call("test_agent_budget_project_day_cap_refuses_before_any_provider_call",
                           lambda: send(team.owner, pid, chat, "hello"), "projectDay")
    other = created_id(create_in(team.owner, team.wid, "Budget other project"))
    events, _, err = send(team.owner, other, default_chat_id(team.owner, other), "hello")
    check("test_agent_budget_project_cap_is_per_project", types_of(events)[-1:] == ["session.task_complete"],
          (err, events))


def set_members(who, wid, members, caps=None):
    body = {"members": members}
    if caps is not None:
        body["caps"] = caps
    return api("PUT", "/workspaces/%s/budget" % wid, body, token=who.token if who else None)


def test_member_own_cap(team):
    """One member's own day cap (schema 031): it overrides the workspace's per-member default, higher or lower."""
    mid, oid = team.member.user["id"], team.owner.user["id"]
    r = set_members(team.admin, team.wid, {mid: {"limitUsd": 0.0015, "warnPercent": 50}},
                    caps={"memberDay": {"limitUsd": 0.0005}})
    b = r.body if isinstance(r.body, dict) else {}
    rows = {m.get("id"): m for m in b.get("members") or []}
    own = (rows.get(mid) or {}).get("cap") or {}
    check("test_agent_budget_admin_sets_a_members_own_cap",
          r.status == 200 and own.get("limitUsd") == 0.0015 and own.get("warnPercent") == 50
          and own.get("block") is True and own.get("own") is True and own.get("updatedAt")
          and (rows.get(oid) or {}).get("cap", 1) is None and (rows.get(oid) or {}).get("role") == "owner"
          and (b.get("caps") or {}).get("memberDay", {}).get("limitUsd") == 0.0005, r)
    pid = created_id(create_in(team.member, team.wid, "Budget own cap project"))
    chat = default_chat_id(team.member, pid)
    send(team.member, pid, chat, SPEND)
    events, _, err = send(team.member, pid, chat, "hello")
    warn = of_type(events, "session.budget_warning")
    check("test_agent_budget_own_cap_above_the_default_lets_the_member_go_on_warned",
          types_of(events)[0] == "session.budget_warning" and warn[0].get("cap") == "memberDay"
          and warn[0].get("limitUsd") == 0.0015 and "set for you" in (warn[0].get("message") or "")
          and types_of(events)[-1] == "session.task_complete", (err, events))
    b = budget(team.member, team.wid).body or {}
    mine = b.get("memberCap") or {}
    check("test_agent_budget_member_sees_their_own_cap_and_spend",
          mine.get("limitUsd") == 0.0015 and mine.get("own") is True and mine.get("warnPercent") == 50
          and (b.get("spent") or {}).get("memberDay", 0) >= 0.0008 and "memberDay" in (b.get("warnings") or [])
          and b.get("canEdit") is False and "members" not in b and "today" not in b, b)
    b = budget(team.owner, team.wid).body or {}
    mine = b.get("memberCap") or {}
    check("test_agent_budget_others_see_the_workspaces_per_member_cap",
          mine.get("limitUsd") == 0.0005 and mine.get("own") is False, b)
    r = set_members(team.owner, team.wid, {mid: {"limitUsd": 0.0002}}, caps={"memberDay": None})
    rows = {m.get("id"): m for m in (r.body or {}).get("members") or []} if r.status == 200 else {}
    check("test_agent_budget_admins_see_each_members_spend_today_and_cap",
          (rows.get(mid) or {}).get("spentUsd", 0) >= 0.0008
          and ((rows.get(mid) or {}).get("cap") or {}).get("limitUsd") == 0.0002
          and (rows.get(oid) or {}).get("spentUsd", 1) == 0 and (rows.get(mid) or {}).get("email") == team.member.email,
          r)
    reset_double()
    events, _, err = send(team.member, pid, chat, "hello")
    check("test_agent_budget_members_own_cap_refuses_before_any_provider_call",
          refused(events, "memberDay") and "set for you" in (events[0].get("message") or "")
          and double_requests() == [], (err, events, len(double_requests())))
    events, _, err = send(team.owner, pid, chat, "hello")
    check("test_agent_budget_own_cap_holds_for_that_member_only",
          types_of(events)[-1:] == ["session.task_complete"], (err, events))
    r = set_members(team.admin, team.wid, {mid: None})
    rows = {m.get("id"): m for m in (r.body or {}).get("members") or []} if r.status == 200 else {}
    events, _, err = send(team.member, pid, chat, "hello")
    check("test_agent_budget_null_removes_a_members_own_cap",
          r.status == 200 and (rows.get(mid) or {}).get("cap", 1) is None
          and types_of(events)[-1:] == ["session.task_complete"], (r, events))
    # errors: a member may not; a key that is no user id, a user who is no member, a bad value: 400, nothing changes
    r = set_members(team.member, team.wid, {mid: {"limitUsd": 5}})
    check("test_agent_budget_member_cannot_set_own_caps", is_error(r, 403, "forbidden"), r)
    r = set_members(team.owner, team.wid, {"nobody": {"limitUsd": 1}})
    check("test_agent_budget_put_members_key_not_a_user_id_is_400", is_error(r, 400, "validation_failed", "members"), r)
    r = set_members(team.owner, team.wid, {team.outsider.user["id"]: {"limitUsd": 1}})
    check("test_agent_budget_put_members_not_a_member_is_400",
          is_error(r, 400, "validation_failed", "members." + team.outsider.user["id"]), r)
    r = set_members(team.owner, team.wid, {mid: {"limitUsd": -1}}, caps={"workspaceDay": {"limitUsd": 7}})
    b = budget(team.owner, team.wid).body or {}
    rows = {m.get("id"): m for m in b.get("members") or []}
    check("test_agent_budget_put_members_bad_cap_is_400_and_changes_nothing",
          is_error(r, 400, "validation_failed", "members." + mid) and (b.get("caps") or {}).get("workspaceDay") is None
          and (rows.get(mid) or {}).get("cap", 1) is None, (r, b))
    r = set_members(team.owner, team.wid, [])
    check("test_agent_budget_put_members_not_an_object_is_400", is_error(r, 400, "validation_failed", "members"), r)


def test_token():
    acct = signup(tag="budget-token")
    pid, chat = fresh_project(acct)
    r = api("POST", "/auth/tokens", {"name": "ci", "scopes": ["projects:read", "projects:write", "chat"]},
            token=acct.token)
    tok = created_id(r, "token")
    set_caps(acct, acct.workspace_id, {"tokenDay": {"limitUsd": 0.0005}})
    events, _, err = sse_all("/chat/%s/messages" % pid, {"chatId": chat, "text": SPEND}, token=tok)
    check("test_agent_budget_token_turn_runs", tok and types_of(events)[-1:] == ["session.task_complete"],
          (r, err, events))
    refused_without_a_call("test_agent_budget_token_day_cap_refuses_before_any_provider_call",
                           lambda: sse_all("/chat/%s/messages" % pid, {"chatId": chat, "text": "hello"}, token=tok),
                           "tokenDay")
    events, _, err = send(acct, pid, chat, "hello")
    check("test_agent_budget_token_cap_is_per_token", types_of(events)[-1:] == ["session.task_complete"],
          (err, events))


def test_turn():
    acct = signup(tag="budget-turn")
    pid, chat = fresh_project(acct)
    set_caps(acct, acct.workspace_id, {"turn": {"limitUsd": 0}})
    refused_without_a_call("test_agent_budget_turn_cap_refuses_before_any_provider_call",
                           lambda: send(acct, pid, chat, "hello"), "turn")
    # 0.0005 a turn, warned at 50 %: "loop idle" costs 0.0003 a step, so the second call reaches the cap
    set_caps(acct, acct.workspace_id, {"turn": {"limitUsd": 0.0005, "warnPercent": 50}})
    reset_double()
    events, _, err = send(acct, pid, chat, "loop idle")
    stop = of_type(events, "session.budget_stopped")
    warn = of_type(events, "session.budget_warning")
    done = (of_type(events, "session.task_complete") or [{}])[-1]
    calls = len(double_requests())
    check("test_agent_budget_running_turn_stops_at_its_cap_before_the_next_call",
          calls == 2 and len(stop) == 1 and stop[0].get("cap") == "turn"
          and abs(stop[0].get("spentUsd", 0) - 2 * STEP_USD) < 1e-9 and done.get("stopped") is True
          and done.get("reason") == "budget" and types_of(events)[-1] == "session.task_complete",
          (calls, err, types_of(events), stop, done))
    check("test_agent_budget_turn_warning_comes_first", len(warn) == 1 and warn[0].get("cap") == "turn"
          and types_of(events).index("session.budget_warning") < types_of(events).index("session.budget_stopped"),
          warn)
    events, _, err = send(acct, pid, chat, "hello")
    check("test_agent_budget_the_next_turn_starts_afresh", types_of(events)[-1:] == ["session.task_complete"],
          (err, events))


def test_spend_unrecorded():
    """A provider call whose spend cannot be recorded ends the turn before its next call (fails closed). The
    real failure: the member's row of today is at the column's largest value, so adding to it is out of range
    (strict mode) and the whole spend transaction is taken back."""
    acct = signup(tag="budget-lost")
    pid, chat = fresh_project(acct)
    wid, uid = acct.workspace_id, acct.user["id"]
    sql("INSERT INTO agent_spend (workspace_id, day, kind, subject_id, spent_usd, updated_at) VALUES "
        "('%s', UTC_DATE(), 'member', '%s', 99999999.999999, UTC_TIMESTAMP(3))" % (wid, uid))
    reset_double()
    events, _, err = send(acct, pid, chat, "loop idle")
    calls = len(double_requests())
    last = events[-1] if events else {}
    check("test_agent_budget_unrecorded_spend_stops_the_turn_before_its_next_provider_call",
          calls == 1 and last.get("type") == "error" and last.get("error") == "service_unavailable"
          and "could not be recorded" in (last.get("message") or "")
          and "session.task_complete" not in types_of(events) and "tool.call" not in types_of(events),
          (calls, err, types_of(events), last))
    spent = (budget(acct, wid).body or {}).get("spent") or {}
    credit = sql("SELECT COALESCE(SUM(spent_usd), 0) FROM workspace_credits WHERE workspace_id = '%s'" % wid).strip()
    check("test_agent_budget_unrecorded_spend_leaves_nothing_half_recorded",
          spent.get("workspaceDay") == 0 and float(credit or 0) == 0, (spent, credit))
    sql("DELETE FROM agent_spend WHERE workspace_id = '%s' AND kind = 'member'" % wid)
    events, _, err = send(acct, pid, chat, "hello")
    check("test_agent_budget_turns_run_again_once_spend_is_recorded",
          types_of(events)[-1:] == ["session.task_complete"], (err, events))


def test_errors(team, padmin, spender):
    for label, caps, field in (("unknown_cap", {"everything": {"limitUsd": 1}}, "caps"),
                               ("limit_missing", {"workspaceDay": {}}, "caps.workspaceDay"),
                               ("limit_string", {"workspaceDay": {"limitUsd": "1"}}, "caps.workspaceDay"),
                               ("limit_negative", {"workspaceDay": {"limitUsd": -1}}, "caps.workspaceDay"),
                               ("limit_too_big", {"workspaceDay": {"limitUsd": 1e9}}, "caps.workspaceDay"),
                               ("warn_over_100", {"turn": {"limitUsd": 1, "warnPercent": 101}}, "caps.turn"),
                               ("warn_fraction", {"turn": {"limitUsd": 1, "warnPercent": 5.5}}, "caps.turn"),
                               ("block_not_bool", {"tokenDay": {"limitUsd": 1, "block": 1}}, "caps.tokenDay"),
                               ("unknown_field", {"tokenDay": {"limitUsd": 1, "hard": True}}, "caps.tokenDay"),
                               ("not_an_object", {"memberDay": 3}, "caps.memberDay")):
        r = set_caps(team.owner, team.wid, caps)
        check("test_agent_budget_put_%s_is_400" % label, is_error(r, 400, "validation_failed", field), r)
    r = api("PUT", "/workspaces/%s/budget" % team.wid, {}, token=team.owner.token)
    check("test_agent_budget_put_without_caps_is_400", is_error(r, 400, "validation_failed", "caps"), r)
    r = set_caps(team.owner, team.wid, {"workspaceDay": {"limitUsd": 5}, "turn": {"limitUsd": -1}})
    b = budget(team.owner, team.wid).body or {}
    check("test_agent_budget_refused_put_changes_nothing",
          r.status == 400 and (b.get("caps") or {}).get("workspaceDay") is None, b)
    check("test_agent_budget_outsider_is_403", is_error(budget(team.outsider, team.wid), 403, "forbidden"))
    check("test_agent_budget_outsider_put_is_403",
          is_error(set_caps(team.outsider, team.wid, {"turn": None}), 403, "forbidden"))
    check("test_agent_budget_anonymous_is_401", budget(None, team.wid).status == 401)
    check("test_agent_budget_anonymous_put_is_401", set_caps(None, team.wid, {"turn": None}).status == 401)
    check("test_agent_budget_unknown_workspace_is_404", budget(team.owner, UNKNOWN_ID).status == 404)
    check("test_agent_budget_put_unknown_workspace_is_404",
          set_caps(padmin, UNKNOWN_ID, {"turn": None}).status == 404)
    check("test_agent_budget_malformed_workspace_is_404", budget(team.owner, "not-a-uuid").status == 404)
    r = api("PUT", "/workspaces/%s/budget" % team.wid, raw=b"{", token=team.owner.token,
            headers={"Content-Type": "application/json"})
    check("test_agent_budget_put_bad_json_is_400", is_error(r, 400, "invalid_json"), r)
    r = api("PUT", "/workspaces/%s/budget" % team.wid, raw=b'{"caps": {"x": "' + b"a" * 9000 + b'"}}',
            token=team.owner.token, headers={"Content-Type": "application/json"})
    check("test_agent_budget_put_over_8_KiB_is_413", is_error(r, 413, "payload_too_large"), r)
    r = api("GET", "/admin/budget", token=padmin.token)
    items = {i.get("workspaceId"): i for i in (r.body or {}).get("items") or []} if r.status == 200 else {}
    row = items.get(spender.workspace_id) or {}
    today = ((budget(spender, spender.workspace_id).body or {}).get("spent") or {}).get("workspaceDay", -1)
    check("test_agent_budget_platform_admin_sees_every_workspaces_spend",
          r.status == 200 and team.wid in items and today > 0.0016 and abs(row.get("todayUsd", 0) - today) < 1e-9
          and abs(row.get("monthUsd", 0) - today) < 1e-9 and abs(row.get("totalUsd", 0) - today) < 1e-9
          and row.get("limitUsd") == 10, (row, today, r.status))
    r = api("GET", "/admin/budget", token=team.owner.token)
    check("test_agent_budget_admin_list_is_403_for_others", is_error(r, 403, "forbidden"), r)
    check("test_agent_budget_admin_list_anonymous_is_401", api("GET", "/admin/budget").status == 401)


def main():
    if not PROVIDER_URL:
        check("test_agent_budget needs the provider double", False, "SVC_PROVIDER_URL is not set")
        return
    team = Team(tag="budget")
    padmin = platform_admin(tag="budget-padmin")
    spender = test_workspace_day()
    test_workspace_month()
    test_member_and_project(team)
    test_member_own_cap(Team(tag="budget-own"))
    test_token()
    test_turn()
    test_spend_unrecorded()
    test_errors(Team(tag="budget-errors"), padmin, spender)


if __name__ == "__main__":
    try:
        main()
    except Exception:
        import traceback
        check("test_agent_budget ran to the end", False, traceback.format_exc())
    sys.exit(finish())
