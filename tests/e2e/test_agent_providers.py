#!/usr/bin/env python3
# test_agent_providers.py: reasoning, usage and cost, credits, model override, workspace providers (Anthropic too), provider failures
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from agentlib import double_requests, double_stats, fresh_project, reset_double, send  # noqa: E402
from svclib import NOPROVIDER_BASE_URL, PROVIDER_URL, api, check, finish, signup, timeline, types_of  # noqa: E402

KEY = "ws-secret-key-4711"


def final(events):
    return events[-1] if events else {}


def test_reasoning_usage_cost(acct):
    pid, chat_id = fresh_project(acct)
    reset_double()
    events, _, err = send(acct, pid, chat_id, "think about it")
    reasoning = [e.get("delta") for e in events if e.get("type") == "assistant.reasoning_delta"]
    check("test_agent_reasoning_deltas_are_streamed", reasoning == ["Let me ", "think."], types_of(events))
    msg = [e for e in events if e.get("type") == "assistant.message"]
    check("test_agent_reasoning_is_not_in_the_answer", msg and msg[0].get("text") == "Thought about it.", msg)
    usage = [e for e in events if e.get("type") == "session.usage_info"]
    u = usage[0] if usage else {}
    # SVC_AI_PRICES: double = 1 USD / Mtok in, 2 USD / Mtok out; the double reports 30 in, 9 out
    check("test_agent_usage_info_has_tokens_and_cost_in_usd",
          u.get("inputTokens") == 30 and u.get("outputTokens") == 9 and abs(u.get("cost", -1) - 48e-6) < 1e-9, u)
    items = timeline(acct, pid, chat_id) or []
    check("test_agent_reasoning_is_kept_in_the_timeline",
          [e.get("delta") for e in items if e.get("type") == "assistant.reasoning_delta"] == ["Let me ", "think."],
          items)
    # a model the instance has no price for would cost nothing and slip past the credits: refused
    # (SVC_AI_MODELS is empty in the test stack, so any priced model may be named)
    reset_double()
    r = api("POST", "/chat/%s/messages" % pid, {"chatId": chat_id, "text": "hi", "model": "no-price-model"},
            token=acct.token, headers={"Accept": "text/event-stream"})
    check("test_agent_unpriced_model_is_400_model",
          r.status == 400 and r.body.get("field") == "model" and r.body.get("error") == "validation_failed"
          and "price" in (r.body.get("message") or ""), r)
    check("test_agent_unpriced_model_reaches_no_provider", double_stats().get("requests") == 0, double_stats())
    # SVC_AI_PRICES: small-ctx = 1 USD / Mtok in, 2 out; "hello" reports 25 in, 7 out
    events, _, err = send(acct, pid, chat_id, "hello", model="small-ctx")
    u = next((e for e in events if e.get("type") == "session.usage_info"), {})
    check("test_agent_priced_override_costs_its_price",
          u.get("inputTokens") == 25 and abs(u.get("cost", -1) - (25 * 1 + u.get("outputTokens", 0) * 2) / 1e6) < 1e-9, u)
    reqs = double_requests()
    check("test_agent_model_override_reaches_the_provider",
          reqs and (reqs[-1].get("body") or {}).get("model") == "small-ctx", [q.get("body", {}).get("model") for q in reqs])


def test_credits():
    acct = signup(tag="credit")
    pid, chat_id = fresh_project(acct)
    # "pricey" costs 1,000,000 USD per million tokens: 25 + 7 tokens = 32 USD, over the default 10 USD
    events, _, err = send(acct, pid, chat_id, "hello", model="pricey")
    u = next((e for e in events if e.get("type") == "session.usage_info"), {})
    check("test_agent_credit_turn_under_the_limit_runs", types_of(events)[-1:] == ["session.task_complete"]
          and abs(u.get("cost", 0) - 32.0) < 1e-6, (err, events))
    reset_double()
    events, _, err = send(acct, pid, chat_id, "hello again")
    check("test_agent_credit_exhausted_is_the_only_event",
          err is None and types_of(events) == ["error"] and events[0].get("error") == "credit_exhausted"
          and events[0].get("message"), (err, events))
    check("test_agent_credit_exhausted_makes_no_provider_call", double_stats().get("requests") == 0, double_stats())
    other_pid, other_chat = fresh_project(acct)
    events, _, err = send(acct, other_pid, other_chat, "hello")
    check("test_agent_credit_is_per_workspace_not_per_project", types_of(events) == ["error"], events)
    b = signup(tag="credit-b")
    bpid, bchat = fresh_project(b)
    events, _, err = send(b, bpid, bchat, "hello")
    check("test_agent_credit_of_another_workspace_is_untouched", types_of(events)[-1:] == ["session.task_complete"],
          events)


def test_workspace_provider(acct):
    wid = acct.workspace_id
    r = api("GET", "/workspaces/%s/ai-provider" % wid, token=acct.token)
    check("test_agent_provider_default_is_the_instance", r.status == 200 and r.body.get("source") == "instance", r)
    body = {"protocol": "anthropic", "baseUrl": PROVIDER_URL + "/v1", "model": "claude-double", "apiKey": KEY,
            "allowedModels": ["claude-double", "claude-mini"]}
    r = api("PUT", "/workspaces/%s/ai-provider" % wid, body, token=acct.token)
    check("test_agent_provider_put_answers_without_the_key",
          r.status == 200 and r.body.get("source") == "workspace" and r.body.get("hasApiKey") is True
          and r.body.get("model") == "claude-double" and KEY not in r.raw.decode(), r)
    r = api("GET", "/workspaces/%s/ai-provider" % wid, token=acct.token)
    check("test_agent_provider_get_never_returns_the_key",
          r.status == 200 and KEY not in r.raw.decode() and r.body.get("allowedModels") == ["claude-double", "claude-mini"]
          and r.body.get("protocol") == "anthropic", r)

    pid, chat_id = fresh_project(acct)
    reset_double()
    events, _, err = send(acct, pid, chat_id, "think about it")
    reqs = double_requests()
    req = reqs[0] if reqs else {}
    check("test_agent_provider_workspace_anthropic_is_used",
          req.get("path") == "/v1/messages" and (req.get("body") or {}).get("model") == "claude-double", req)
    check("test_agent_provider_key_is_sent_opened", (req.get("headers") or {}).get("x-api-key") == KEY,
          req.get("headers"))
    check("test_agent_anthropic_thinking_becomes_reasoning_deltas",
          [e.get("delta") for e in events if e.get("type") == "assistant.reasoning_delta"] == ["Let me ", "think."]
          and types_of(events)[-1:] == ["session.task_complete"], events)
    events, _, err = send(acct, pid, chat_id, "write a file please")
    check("test_agent_anthropic_tool_calls_run",
          any(e.get("type") == "tool.result" for e in events) and types_of(events)[-1:] == ["session.task_complete"],
          types_of(events))

    r = api("POST", "/chat/%s/messages" % pid, {"chatId": chat_id, "text": "hi", "model": "gpt-other"},
            token=acct.token, headers={"Accept": "text/event-stream"})
    check("test_agent_model_not_allowed_is_400_model",
          r.status == 400 and r.body.get("field") == "model" and r.body.get("error") == "validation_failed", r)
    reset_double()
    events, _, err = send(acct, pid, chat_id, "hello", model="claude-mini")
    reqs = double_requests()
    check("test_agent_allowed_model_override_is_used",
          types_of(events)[-1:] == ["session.task_complete"] and reqs and reqs[0]["body"].get("model") == "claude-mini",
          events)

    # the key is write-only: a PUT without apiKey keeps it, null removes it
    body2 = dict(body)
    del body2["apiKey"]
    r = api("PUT", "/workspaces/%s/ai-provider" % wid, body2, token=acct.token)
    check("test_agent_provider_put_without_key_keeps_it", r.status == 200 and r.body.get("hasApiKey") is True, r)
    reset_double()
    send(acct, pid, chat_id, "hello")
    reqs = double_requests()
    check("test_agent_provider_kept_key_still_opens",
          reqs and (reqs[0].get("headers") or {}).get("x-api-key") == KEY, reqs[:1])
    body2["apiKey"] = None
    r = api("PUT", "/workspaces/%s/ai-provider" % wid, body2, token=acct.token)
    check("test_agent_provider_put_null_key_removes_it", r.status == 200 and r.body.get("hasApiKey") is False, r)

    for label, bad, field in (("protocol", {"protocol": "grpc"}, "protocol"),
                              ("base_url", {"baseUrl": "ftp://example.test"}, "baseUrl"),
                              ("model_missing", {"model": None}, "model"),
                              ("allowed_models", {"allowedModels": ["a,b"]}, "allowedModels")):
        b = dict(body)
        b.update(bad)
        if b.get("model") is None:
            del b["model"]
        r = api("PUT", "/workspaces/%s/ai-provider" % wid, b, token=acct.token)
        check("test_agent_provider_put_bad_%s_is_400" % label, r.status == 400 and r.body.get("field") == field, r)

    # members see no provider settings; strangers neither
    team = api("POST", "/workspaces", {"name": "Provider team"}, token=acct.token)
    twid = team.body.get("id") if team.status in (200, 201) and isinstance(team.body, dict) else None
    member = signup(tag="prov-member")
    if twid:
        api("POST", "/workspaces/%s/members" % twid, {"email": member.email, "role": "member"}, token=acct.token)
        r = api("GET", "/workspaces/%s/ai-provider" % twid, token=member.token)
        check("test_agent_provider_member_get_is_403", r.status == 403, r)
        r = api("PUT", "/workspaces/%s/ai-provider" % twid, body, token=member.token)
        check("test_agent_provider_member_put_is_403", r.status == 403, r)
        r = api("GET", "/workspaces/%s/ai-provider" % twid, token=acct.token)
        check("test_agent_provider_owner_of_team_gets_200", r.status == 200, r)
    else:
        check("test_agent_provider_team_workspace_created", False, team)
    r = api("GET", "/workspaces/%s/ai-provider" % wid, token=member.token)
    check("test_agent_provider_stranger_is_refused", r.status in (403, 404), r)
    r = api("GET", "/workspaces/%s/ai-provider" % wid)
    check("test_agent_provider_without_token_is_401", r.status == 401, r)
    r = api("GET", "/workspaces/not-a-uuid/ai-provider", token=acct.token)
    check("test_agent_provider_bad_workspace_id_is_404", r.status == 404, r)


def test_no_provider_then_workspace_provider():
    if not NOPROVIDER_BASE_URL:
        check("test_agent_no_provider_front_end_is_configured", False, "SVC_NOPROVIDER_BASE_URL is not set")
        return
    # signed up on the main front (the no-provider front verifies sign-ups by mail); same database
    acct = signup(tag="noprov")
    pid, chat_id = fresh_project(acct, base=NOPROVIDER_BASE_URL)
    events, _, err = send(acct, pid, chat_id, "hello", base=NOPROVIDER_BASE_URL)
    check("test_agent_no_provider_ends_with_no_provider", types_of(events) == ["error"]
          and events[0].get("error") == "no_provider", (err, events))
    r = api("GET", "/workspaces/%s/ai-provider" % acct.workspace_id, token=acct.token, base=NOPROVIDER_BASE_URL)
    check("test_agent_no_provider_get_says_none", r.status == 200 and r.body.get("source") == "none", r)
    r = api("PUT", "/workspaces/%s/ai-provider" % acct.workspace_id,
            {"protocol": "openai", "baseUrl": PROVIDER_URL + "/v1", "model": "double", "apiKey": "k-noprov"},
            token=acct.token, base=NOPROVIDER_BASE_URL)
    check("test_agent_no_provider_workspace_sets_its_own", r.status == 200, r)
    reset_double()
    events, _, err = send(acct, pid, chat_id, "hello", base=NOPROVIDER_BASE_URL)
    reqs = double_requests()
    check("test_agent_workspace_provider_replaces_the_missing_instance_one",
          types_of(events)[-1:] == ["session.task_complete"] and reqs
          and (reqs[0].get("headers") or {}).get("authorization") == "Bearer k-noprov", (events, reqs[:1]))


def test_failures(acct):
    pid, chat_id = fresh_project(acct)
    reset_double()
    start = time.monotonic()
    events, _, err = send(acct, pid, chat_id, "rate once please")
    took = time.monotonic() - start
    check("test_agent_429_with_retry_after_is_retried",
          types_of(events)[-1:] == ["session.task_complete"] and double_stats().get("requests") == 2 and took >= 1.0,
          (took, double_stats(), events))
    reset_double()
    events, _, err = send(acct, pid, chat_id, "rate limit please")
    e = final(events)
    check("test_agent_429_persisting_ends_with_model_unavailable",
          e.get("type") == "error" and e.get("error") == "model_unavailable" and "429" in (e.get("message") or "")
          and double_stats().get("requests") == 3, (events, double_stats()))
    reset_double()
    start = time.monotonic()
    events, _, err = send(acct, pid, chat_id, "rate long please")
    e = final(events)
    check("test_agent_429_with_a_long_retry_after_is_not_waited_for",
          e.get("error") == "model_unavailable" and double_stats().get("requests") == 1
          and time.monotonic() - start < 5, (events, double_stats()))
    for label, text, code in (("500", "server error please", "500"), ("502", "bad gateway please", "502")):
        reset_double()
        events, _, err = send(acct, pid, chat_id, text)
        e = final(events)
        check("test_agent_%s_ends_with_model_unavailable" % label,
              err is None and e.get("error") == "model_unavailable" and code in (e.get("message") or "")
              and double_stats().get("requests") == 1, (events, double_stats()))
    for label, text in (("malformed_chunk", "malformed please"), ("dropped_connection", "drop please")):
        events, _, err = send(acct, pid, chat_id, text)
        e = final(events)
        deltas = "".join(x.get("delta", "") for x in events if x.get("type") == "assistant.message_delta")
        check("test_agent_%s_ends_with_model_unavailable_and_a_message" % label,
              err is None and e.get("error") == "model_unavailable" and e.get("message"), events)
        check("test_agent_%s_streams_what_came_before" % label,
              deltas in ("Partial answer", "Dropped soon"), deltas)
        items = timeline(acct, pid, chat_id) or []
        stored = [x for x in items if x.get("type") in ("assistant.message_delta", "error")][-2:]
        check("test_agent_%s_timeline_keeps_what_was_streamed" % label,
              len(stored) == 2 and stored[0].get("delta") == deltas and stored[1].get("error") == "model_unavailable",
              stored)
    # a provider that accepts the request and then sends nothing: SVC_AI_IDLE_TIMEOUT (15 s in the
    # test stack) ends the turn, instead of the 600 s whole-call limit
    reset_double()
    start = time.monotonic()
    events, _, err = send(acct, pid, chat_id, "never answer please")
    took = time.monotonic() - start
    e = final(events)
    check("test_agent_silent_provider_ends_with_model_unavailable",
          err is None and e.get("error") == "model_unavailable" and "in time" in (e.get("message") or ""), events)
    check("test_agent_silent_provider_ends_within_the_idle_timeout (%.1f s)" % took, 14 <= took <= 35, took)
    deadline = time.monotonic() + 5
    while double_stats().get("client_closed_early", 0) < 1 and time.monotonic() < deadline:
        time.sleep(0.1)
    check("test_agent_silent_provider_connection_is_closed", double_stats().get("client_closed_early", 0) >= 1,
          double_stats())
    events, _, err = send(acct, pid, chat_id, "hello after the failures")
    check("test_agent_chat_works_after_provider_failures", types_of(events)[-1:] == ["session.task_complete"], events)


def main():
    if not PROVIDER_URL:
        check("test_agent_providers needs the provider double", False, "SVC_PROVIDER_URL is not set")
        return
    acct = signup(tag="providers")
    test_reasoning_usage_cost(acct)
    test_credits()
    test_failures(signup(tag="failures"))
    test_workspace_provider(acct)
    test_no_provider_then_workspace_provider()


if __name__ == "__main__":
    try:
        main()
    except Exception:
        import traceback
        check("test_agent_providers ran to the end", False, traceback.format_exc())
    sys.exit(finish())
