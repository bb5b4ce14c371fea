#!/usr/bin/env python3
"""test_integrations_agent.py: the agent's integration_request tool and xray (docs/api.md "Integrations",
"The agent's integration tool", "xray").

An integration API double (tests/fixtures/oauth_double.py's /integ/api) is started here on 127.0.0.7, the
address SVC_OUTBOUND_ALLOW_NETS lets through the SSRF guard; the test stack sets SVC_INTEG_ALLOW_HTTP=1
(the double speaks HTTP) and SVC_XRAY_STUCK_SECONDS=2. The provider double answers "integration call
{json}" with an integration_request of those arguments.
"""
import json
import os
import re
import secrets
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from agentlib import double_requests, fresh_project, new_chat, reset_double, send
from svclib import api, check, finish, is_error, request, setting, signup, sql
from wslib import import_catalog, platform_admin

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
API_HOST = "127.0.0.7"


def start_api_double():
    d = tempfile.mkdtemp(prefix="integ-api-")
    port_file = os.path.join(d, "port")
    proc = subprocess.Popen([sys.executable, os.path.join(ROOT, "tests", "fixtures", "oauth_double.py"),
                             "--host", API_HOST, "--port", "0", "--port-file", port_file],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(300):
        if os.path.exists(port_file):
            with open(port_file) as f:
                return proc, int(f.read().strip())
        time.sleep(0.1)
    proc.kill()
    raise AssertionError("the API double did not start")


def import_entries():
    entries = [{"id": "svc-test-api", "displayName": "svc test API", "description": "the API double",
                "authTypes": ["secret_text"], "oauth2": None, "categories": ["DEVELOPER_TOOLS"],
                "apiHosts": [API_HOST]},
               {"id": "svc-test-loop", "displayName": "svc test loopback", "description": None,
                "authTypes": ["secret_text"], "oauth2": None, "categories": [], "apiHosts": ["127.0.0.1"]},
               {"id": "svc-test-peruser", "displayName": "svc test per-user", "description": None,
                "authTypes": ["oauth2", "secret_text"], "oauth2": None, "categories": [], "apiHosts": [API_HOST],
                "perUserOnly": True}]
    return import_catalog(entries)


def call(acct, pid, chat_id, args):
    """One build-mode turn whose model calls integration_request(args). Returns (tool result or error text,
    is_error, events)."""
    events, _, err = send(acct, pid, chat_id, "integration call " + json.dumps(args))
    for ev in events:
        if ev.get("type") == "tool.result":
            return ev.get("result", ""), False, events
        if ev.get("type") == "tool.error":
            return ev.get("error", ""), True, events
    return None, None, (events, err)


def tool_names(req):
    body = req.get("body") if isinstance(req.get("body"), dict) else {}
    names = []
    for t in body.get("tools") or []:
        names.append(t.get("name") or (t.get("function") or {}).get("name"))
    return names


def main():
    proc, port = start_api_double()
    base = "http://%s:%d" % (API_HOST, port)
    try:
        return run(base)
    finally:
        proc.kill()


def run(base):
    rc, out = import_entries()
    check("test_integrations_agent_import", rc == 0, out)
    admin = platform_admin(tag="integ-agent-admin")
    user = signup(tag="integ-agent-user")
    ids = ["svc-test-api", "svc-test-loop", "svc-test-peruser"]
    for which in ("platform-enabled", "enabled"):
        api("POST", "/integrations/admin/%s/bulk" % which, {"integrationIds": ids, "enabled": True}, token=admin.token)
    secret = "integ-api-key-" + secrets.token_hex(16)
    for i in ids:
        r = api("POST", "/integrations/admin/credentials", {"integrationId": i, "authType": "secret_text",
                                                           "value": secret}, token=admin.token)
    check("test_integrations_agent_credentials_set", r.status in (200, 201), r)
    pid, chat_id = fresh_project(user)

    # ---- offered in build mode only ----
    reset_double()
    text, is_err, events = call(user, pid, chat_id, {"integration": "svc-test-api", "method": "GET",
                                                     "url": base + "/integ/api/items?x=1"})
    reqs = double_requests()
    check("test_integrations_agent_tool_offered_in_build_mode",
          reqs and "integration_request" in tool_names(reqs[0]), [tool_names(r) for r in reqs[:1]])
    check("test_integrations_agent_call_200",
          is_err is False and text.startswith("HTTP 200\n") and '"path": "/integ/api/items"' in text, (text, events))
    check("test_integrations_agent_credential_injected_server_side",
          text and "Bearer [credential]" in text and secret not in text, text)
    seen = [r for r in (request("GET", base + "/_requests").body or []) if r["path"] == "/integ/api/items"]
    check("test_integrations_agent_api_double_got_credential",
          seen and seen[-1]["headers"].get("authorization") == "Bearer " + secret, seen[-1:])
    model_saw = json.dumps(double_requests())
    check("test_integrations_agent_model_never_sees_credential", secret not in model_saw)
    for mode in ("plan", "chat"):
        cid = new_chat(user, pid, mode)
        reset_double()
        send(user, pid, cid, "hello there")
        reqs = double_requests()
        check("test_integrations_agent_tool_not_offered_in_%s_mode" % mode,
              reqs and "integration_request" not in tool_names(reqs[0]) and "read_file" in tool_names(reqs[0]),
              [tool_names(r) for r in reqs[:1]])

    # ---- refusals ----
    text, is_err, _ = call(user, pid, chat_id, {"integration": "svc-test-api", "url": "http://example.com/x"})
    check("test_integrations_agent_disallowed_host_refused", is_err and "not an API host" in (text or ""), text)
    text, is_err, _ = call(user, pid, chat_id, {"integration": "svc-test-loop", "url": "http://127.0.0.1:9/x"})
    check("test_integrations_agent_ssrf_guard_refuses_loopback", is_err and "loopback" in (text or ""), text)
    text, is_err, _ = call(user, pid, chat_id, {"integration": "svc-test-api", "url": base + "/integ/api/x",
                                                "headers": {"Authorization": "Bearer stolen"}})
    check("test_integrations_agent_model_cannot_set_authorization", is_err and "may not be set" in (text or ""), text)
    text, is_err, _ = call(user, pid, chat_id, {"integration": "zoom", "url": "https://api.zoom.us/v2/users"})
    check("test_integrations_agent_not_enabled_refused", is_err and "not enabled" in (text or ""), text)
    text, is_err, _ = call(user, pid, chat_id, {"integration": "svc-test-peruser", "url": base + "/integ/api/x"})
    check("test_integrations_agent_per_user_only_never_falls_back", is_err and "no credential" in (text or ""), text)
    text, is_err, _ = call(user, pid, chat_id, {"integration": "svc-test-api", "url": "ftp://" + API_HOST + "/x"})
    check("test_integrations_agent_https_only", is_err and "https" in (text or ""), text)
    text, is_err, _ = call(user, pid, chat_id, {"integration": "svc-test-api", "method": "TRACE", "url": base + "/x"})
    check("test_integrations_agent_bad_method_refused", is_err, text)
    text, is_err, _ = call(user, pid, chat_id, {"integration": "svc-test-api", "url": base + "/integ/api/big"})
    check("test_integrations_agent_size_limit", is_err and "larger than" in (text or ""), text)
    # a platform credential is read-only by default (issue 25 item 5): the workspace's admin allows writes
    r = api("PUT", "/workspaces/%s/integrations/svc-test-api" % user.workspace_id, {"enabled": True, "readOnly": False},
            token=user.token)
    check("test_integrations_agent_writes_allowed_by_workspace_admin", r.status == 200 and r.body.get("readOnly") is False, r)
    text, is_err, _ = call(user, pid, chat_id, {"integration": "svc-test-api", "method": "POST",
                                                "url": base + "/integ/api/status/404", "body": "{\"a\":1}",
                                                "headers": {"Content-Type": "application/json"}})
    check("test_integrations_agent_post_with_body",
          is_err is False and text.startswith("HTTP 404") and '{\\"a\\":1}' in text and '"method": "POST"' in text,
          text)

    # ---- the API hosts a platform admin sets (PUT /integrations/admin/api-hosts/:id) ----
    hosts_path = "/integrations/admin/api-hosts/svc-test-api"
    check("test_integrations_hosts_anonymous_401", is_error(api("GET", hosts_path), 401, "unauthorized"))
    check("test_integrations_hosts_user_403", is_error(api("GET", hosts_path, token=user.token), 403, "forbidden"))
    check("test_integrations_hosts_put_user_403",
          is_error(api("PUT", hosts_path, {"apiHosts": ["x.example.com"]}, token=user.token), 403, "forbidden"))
    check("test_integrations_hosts_unknown_404",
          is_error(api("GET", "/integrations/admin/api-hosts/no-such", token=admin.token), 404, "not_found")
          and is_error(api("PUT", "/integrations/admin/api-hosts/no-such", {"apiHosts": ["a.example.com"]},
                           token=admin.token), 404, "not_found"))
    r = api("GET", hosts_path, token=admin.token)
    check("test_integrations_hosts_get_catalogue",
          r.status == 200 and r.body == {"integrationId": "svc-test-api", "apiHosts": [API_HOST],
                                         "source": "catalogue", "catalogueHosts": [API_HOST]}, r)
    for bad in ({}, {"apiHosts": "x.example.com"}, {"apiHosts": []}, {"apiHosts": ["https://x.example.com"]},
                {"apiHosts": ["a b.example.com"]}, {"apiHosts": ["x.example.com:443"]}, {"apiHosts": ["localhost"]},
                {"apiHosts": [7]}, {"apiHosts": ["h%d.example.com" % i for i in range(17)]}):
        r = api("PUT", hosts_path, bad, token=admin.token)
        check("test_integrations_hosts_put_bad_400 %s" % json.dumps(bad)[:40],
              is_error(r, 400, "validation_failed", "apiHosts"), r)
    r = api("PUT", hosts_path, {"apiHosts": ["API.Example.com", "api.example.com"]}, token=admin.token)
    check("test_integrations_hosts_put_200",
          r.status == 200 and r.body.get("apiHosts") == ["api.example.com"] and r.body.get("source") == "admin"
          and r.body.get("catalogueHosts") == [API_HOST], r)
    text, is_err, _ = call(user, pid, chat_id, {"integration": "svc-test-api", "url": base + "/integ/api/x"})
    check("test_integrations_hosts_admin_list_replaces_catalogue", is_err and "not an API host" in (text or ""), text)
    rc, out = import_entries()
    r = api("GET", hosts_path, token=admin.token)
    check("test_integrations_hosts_survive_catalogue_import",
          rc == 0 and r.body.get("source") == "admin" and r.body.get("apiHosts") == ["api.example.com"], (out, r))
    r = api("PUT", hosts_path, {"apiHosts": None}, token=admin.token)
    check("test_integrations_hosts_null_back_to_catalogue",
          r.status == 200 and r.body.get("source") == "catalogue" and r.body.get("apiHosts") == [API_HOST], r)
    text, is_err, _ = call(user, pid, chat_id, {"integration": "svc-test-api", "url": base + "/integ/api/items"})
    check("test_integrations_hosts_catalogue_again", is_err is False and (text or "").startswith("HTTP 200"), text)
    r = api("GET", "/integrations/admin/audit?limit=10", token=admin.token)
    acts = [e for e in (r.body.get("entries") or []) if e.get("action") == "integrations.api_hosts.update"
            and e.get("resourceId") == "svc-test-api"]
    check("test_integrations_hosts_audited",
          len(acts) >= 2 and acts[0]["details"] == {"apiHosts": None}
          and acts[1]["details"] == {"apiHosts": ["api.example.com"]}, acts)

    # a sealed value moved into another row does not open (the row is bound as associated data): the call
    # fails closed, with the reason in the log (a wrong ENCRYPTION_KEY fails the same way)
    sql("UPDATE integration_credentials SET value = (SELECT v FROM (SELECT value AS v FROM integration_credentials "
        "WHERE integration_id = 'svc-test-api') t) WHERE integration_id = 'svc-test-peruser'")
    sql("UPDATE integrations SET per_user_only = 0 WHERE id = 'svc-test-peruser'")
    text, is_err, _ = call(user, pid, chat_id, {"integration": "svc-test-peruser", "url": base + "/integ/api/x"})
    logs = ""
    for name in ("responders.log",):
        try:
            with open(os.path.join(os.path.dirname(setting("SVC_AUTH_LOG") or "/x/y"), name), errors="replace") as f:
                logs += f.read()
        except OSError:
            pass
    check("test_integrations_agent_moved_sealed_value_fails_closed",
          is_err and "could not be used" in (text or "") and secret not in (text or "")
          and "the platform credential of svc-test-peruser does not open" in logs, text)
    sql("UPDATE integrations SET per_user_only = 1 WHERE id = 'svc-test-peruser'")

    # ---- xray ----
    for path in ("/xray/stats", "/xray/active", "/xray/stuck", "/xray/history"):
        r = api("GET", path)
        check("test_xray_anonymous_401_" + path.split("/")[-1], is_error(r, 401, "unauthorized"), r)
        r = api("GET", path, token=user.token)
        check("test_xray_user_403_" + path.split("/")[-1], is_error(r, 403, "forbidden"), r)
    result = {}

    def slow_turn():
        result["r"] = call(user, pid, chat_id, {"integration": "svc-test-api",
                                                "url": base + "/integ/api/slow?ms=6000"})

    th = threading.Thread(target=slow_turn)
    th.start()
    active = stuck_early = stuck = None
    end = time.time() + 20
    while time.time() < end and not active:
        r = api("GET", "/xray/active", token=admin.token)
        active = [c for c in r.body.get("items", []) if c["path"] == "/integ/api/slow"] if r.status == 200 else None
        time.sleep(0.2)
    r = api("GET", "/xray/stuck", token=admin.token)
    stuck_early = [c for c in r.body.get("items", []) if c["path"] == "/integ/api/slow"] if r.status == 200 else None
    while time.time() < end and not stuck:
        r = api("GET", "/xray/stuck", token=admin.token)
        stuck = [c for c in r.body.get("items", []) if c["path"] == "/integ/api/slow"] if r.status == 200 else None
        time.sleep(0.3)
    check("test_xray_active_shows_call_in_flight",
          active and active[0]["integrationId"] == "svc-test-api" and active[0]["userId"] == user.user["id"]
          and active[0]["projectId"] == pid and active[0]["startedAt"] and active[0]["finishedAt"] is None, active)
    check("test_xray_stuck_after_threshold",
          not stuck_early and stuck and stuck[0]["runningMs"] >= 2000 and r.body.get("thresholdSeconds") == 2,
          (stuck_early, stuck, r.body))
    th.join(60)
    r = api("GET", "/xray/active", token=admin.token)
    check("test_xray_finished_call_leaves_active",
          r.status == 200 and not [c for c in r.body["items"] if c["path"] == "/integ/api/slow"], r)
    r = api("GET", "/xray/stats", token=admin.token)
    st = [s for s in r.body.get("items", []) if s["integrationId"] == "svc-test-api"] if r.status == 200 else []
    n = int(sql("SELECT COUNT(*) FROM integration_calls WHERE integration_id = 'svc-test-api' "
                "AND finished_at IS NOT NULL").strip())
    errs = int(sql("SELECT COUNT(*) FROM integration_calls WHERE integration_id = 'svc-test-api' "
                   "AND finished_at IS NOT NULL AND (error IS NOT NULL OR status >= 400)").strip())
    h = st[0]["lastHour"] if st else {}
    check("test_xray_stats_figures",
          st and h.get("calls") == n and h.get("errors") == errs and errs >= 2 and n >= 4
          and 0 <= h.get("p50Ms", -1) <= h.get("p95Ms", -1) and h["p95Ms"] >= 5000
          and st[0]["lastDay"]["calls"] == n, (st, n, errs))
    r = api("GET", "/xray/history?limit=2", token=admin.token)
    r2 = api("GET", "/xray/history?limit=2&cursor=%s" % (r.body.get("nextCursor") or ""), token=admin.token)
    check("test_xray_history_paged_newest_first",
          r.status == 200 and len(r.body["items"]) == 2 and r.body["items"][0]["path"] == "/integ/api/slow"
          and r.body["items"][0]["durationMs"] >= 5000 and r.body.get("nextCursor") and r2.status == 200
          and r2.body["items"] and r2.body["items"][0]["id"] not in [c["id"] for c in r.body["items"]], (r, r2))
    r = api("GET", "/xray/history?cursor=x", token=admin.token)
    check("test_xray_history_400_cursor", is_error(r, 400, "validation_failed", "cursor"), r)
    r = api("GET", "/xray/history?limit=0", token=admin.token)
    check("test_xray_history_400_limit", is_error(r, 400, "validation_failed", "limit"), r)
    rows = sql("SELECT integration_id, path, error FROM integration_calls WHERE user_id = '%s' ORDER BY seq"
               % user.user["id"]).splitlines()
    check("test_integrations_agent_every_call_recorded",
          len(rows) == 6 and rows[1].split("\t") == ["svc-test-loop", "/x", "refused"]
          and rows[2].split("\t")[2] == "too_large" and rows[4].split("\t")[:2] == ["svc-test-api", "/integ/api/items"],
          rows)  # rows[4]: the call after the admin's hosts were set back (a refused host makes no call)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
