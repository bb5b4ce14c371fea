#!/usr/bin/env python3
# test_agent_credits.py: GET/PUT /workspaces/:wid/credits: spend, limit and remaining for members, the limit for platform admins only
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from agentlib import double_stats, fresh_project, reset_double, send  # noqa: E402
from svclib import PROVIDER_URL, UNKNOWN_ID, api, check, finish, is_error, signup, types_of  # noqa: E402
from wslib import Team, platform_admin  # noqa: E402

DEFAULT_LIMIT = 10.0  # SVC_DEFAULT_CREDIT_USD's default; ./svc-dev test does not set it


def credits(who, wid):
    return api("GET", "/workspaces/%s/credits" % wid, token=who.token if who else None)


def set_limit(who, wid, body):
    return api("PUT", "/workspaces/%s/credits" % wid, body, token=who.token if who else None)


def close(a, b):
    return isinstance(a, (int, float)) and abs(a - b) < 1e-6


def test_reading(team):
    for role, who in (("member", team.member), ("admin", team.admin), ("owner", team.owner)):
        r = credits(who, team.wid)
        b = r.body if isinstance(r.body, dict) else {}
        check("test_agent_credits_%s_reads_spend_limit_and_remaining" % role,
              r.status == 200 and b.get("workspaceId") == team.wid and close(b.get("limitUsd"), DEFAULT_LIMIT)
              and close(b.get("spentUsd"), 0) and close(b.get("remainingUsd"), DEFAULT_LIMIT)
              and b.get("defaultLimit") is True and b.get("exhausted") is False, r)
    check("test_agent_credits_non_member_is_403", is_error(credits(team.outsider, team.wid), 403, "forbidden"),
          credits(team.outsider, team.wid))
    check("test_agent_credits_anonymous_is_401", credits(None, team.wid).status == 401, credits(None, team.wid))
    check("test_agent_credits_unknown_workspace_is_404", credits(team.owner, UNKNOWN_ID).status == 404,
          credits(team.owner, UNKNOWN_ID))
    check("test_agent_credits_malformed_workspace_id_is_404", credits(team.owner, "not-a-uuid").status == 404,
          credits(team.owner, "not-a-uuid"))


def test_changing(team, padmin):
    for role, who in (("member", team.member), ("admin", team.admin), ("owner", team.owner),
                      ("non_member", team.outsider)):
        r = set_limit(who, team.wid, {"limitUsd": 1000})
        check("test_agent_credits_%s_cannot_change_the_limit" % role, is_error(r, 403, "forbidden"), r)
    r = set_limit(None, team.wid, {"limitUsd": 1000})
    check("test_agent_credits_anonymous_change_is_401", r.status == 401, r)
    b = credits(team.owner, team.wid).body or {}
    check("test_agent_credits_refused_changes_change_nothing", close(b.get("limitUsd"), DEFAULT_LIMIT), b)
    r = set_limit(padmin, team.wid, {"limitUsd": 25.5})
    b = r.body if isinstance(r.body, dict) else {}
    check("test_agent_credits_platform_admin_sets_the_limit",
          r.status == 200 and close(b.get("limitUsd"), 25.5) and close(b.get("remainingUsd"), 25.5)
          and b.get("defaultLimit") is False and b.get("updatedAt"), r)
    b = credits(team.member, team.wid).body or {}
    check("test_agent_credits_members_see_the_new_limit", close(b.get("limitUsd"), 25.5), b)
    for label, body in (("string", {"limitUsd": "25"}), ("negative", {"limitUsd": -1}),
                        ("too_big", {"limitUsd": 1e9}), ("missing", {}), ("bool", {"limitUsd": True})):
        r = set_limit(padmin, team.wid, body)
        check("test_agent_credits_limit_%s_is_400" % label, is_error(r, 400, "validation_failed", "limitUsd"), r)
    r = set_limit(padmin, UNKNOWN_ID, {"limitUsd": 5})
    check("test_agent_credits_change_of_unknown_workspace_is_404", r.status == 404, r)
    r = set_limit(padmin, team.wid, {"limitUsd": None})
    b = r.body if isinstance(r.body, dict) else {}
    check("test_agent_credits_null_restores_the_default",
          r.status == 200 and close(b.get("limitUsd"), DEFAULT_LIMIT) and b.get("defaultLimit") is True, r)


def test_spend_and_raise(padmin):
    acct = signup(tag="credits-spend")
    wid = acct.workspace_id
    pid, chat_id = fresh_project(acct)
    # "pricey" costs 1,000,000 USD per million tokens: the double reports 25 + 7 tokens = 32 USD
    events, _, err = send(acct, pid, chat_id, "hello", model="pricey")
    cost = next((e.get("cost") for e in events if e.get("type") == "session.usage_info"), None)
    b = credits(acct, wid).body or {}
    check("test_agent_credits_spend_is_the_sum_of_turn_costs",
          close(cost, 32.0) and close(b.get("spentUsd"), 32.0) and close(b.get("remainingUsd"), 0)
          and b.get("exhausted") is True, (cost, b))
    r = set_limit(acct, wid, {"limitUsd": 1000})
    check("test_agent_credits_owner_of_a_personal_workspace_cannot_raise_it", is_error(r, 403, "forbidden"), r)
    reset_double()
    events, _, err = send(acct, pid, chat_id, "hello again")
    check("test_agent_credits_exhausted_blocks_the_next_turn",
          types_of(events) == ["error"] and events[0].get("error") == "credit_exhausted"
          and double_stats().get("requests") == 0, events)
    r = set_limit(padmin, wid, {"limitUsd": 100})
    b = r.body if isinstance(r.body, dict) else {}
    check("test_agent_credits_raised_limit_keeps_the_spend",
          r.status == 200 and close(b.get("spentUsd"), 32.0) and close(b.get("remainingUsd"), 68.0)
          and b.get("exhausted") is False, r)
    events, _, err = send(acct, pid, chat_id, "hello once more")
    check("test_agent_credits_raised_limit_lets_turns_run", types_of(events)[-1:] == ["session.task_complete"],
          (err, events))
    r = set_limit(padmin, wid, {"limitUsd": 0})
    events, _, err = send(acct, pid, chat_id, "and again")
    check("test_agent_credits_zero_limit_blocks_every_turn",
          r.status == 200 and types_of(events) == ["error"] and events[0].get("error") == "credit_exhausted",
          (r, events))


def main():
    if not PROVIDER_URL:
        check("test_agent_credits needs the provider double", False, "SVC_PROVIDER_URL is not set")
        return
    team = Team(tag="credits")
    padmin = platform_admin(tag="credits-padmin")
    test_reading(team)
    test_changing(team, padmin)
    test_spend_and_raise(padmin)


if __name__ == "__main__":
    try:
        main()
    except Exception:
        import traceback
        check("test_agent_credits ran to the end", False, traceback.format_exc())
    sys.exit(finish())
