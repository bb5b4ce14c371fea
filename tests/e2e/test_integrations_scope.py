#!/usr/bin/env python3
"""test_integrations_scope.py: integration credentials scoped to the workspace the agent runs in (issue 25
items 5, 6 and 10; docs/api.md "Integrations").

A user's OAuth connection belongs to (user, workspace): a turn in a workspace the user was invited into never
spends the connection made for their own. A platform credential is used only in the workspaces the platform
admin allows; a workspace admin may make an enablement read-only (GET and HEAD), the default with a platform
credential. Connecting and disconnecting are in the admin audit log; every call records the credential kind.
Secrets an API echoes (raw, Base64, percent-encoded, JSON-escaped) never reach the model, for basic_auth and
custom_auth as for tokens.

The token endpoint is the stack's OAuth double (SVC_OAUTH_DOUBLE_URL); the API is a double of the same
program started here on 127.0.0.7 (test_integrations_agent.py), whose /integ/api/echo echoes what it got.
"""
import base64
import json
import os
import secrets
import sys
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from agentlib import double_requests, fresh_project, reset_double
from svclib import api, check, default_chat_id, finish, is_error, request, sql
from test_integrations_agent import API_HOST, call, start_api_double
from test_integrations_oauth import DOUBLE, callback, cookie_of, double
from wslib import Team, create_in, import_catalog, platform_admin

OAUTH = "svc-scope-oauth"
KEY = "svc-scope-key"
BASIC = "svc-scope-basic"
CUSTOM = "svc-scope-custom"


def import_entries():
    entries = [{"id": OAUTH, "displayName": "svc scope OAuth", "description": None, "authTypes": ["oauth2"],
                "oauth2": {"authUrl": DOUBLE + "/integ/authorize", "tokenUrl": DOUBLE + "/integ/token",
                           "scope": ["read"]},
                "categories": [], "apiHosts": [API_HOST], "perUserOnly": True},
               {"id": KEY, "displayName": "svc scope key", "description": None, "authTypes": ["secret_text"],
                "oauth2": None, "categories": [], "apiHosts": [API_HOST]},
               {"id": BASIC, "displayName": "svc scope basic", "description": None, "authTypes": ["basic_auth"],
                "oauth2": None, "categories": [], "apiHosts": [API_HOST]},
               {"id": CUSTOM, "displayName": "svc scope custom", "description": None, "authTypes": ["custom_auth"],
                "oauth2": None, "categories": [], "apiHosts": [API_HOST]}]
    return import_catalog(entries)


def connect_for(acct, wid, login="scope-login"):
    """Runs connect for workspace wid, the provider's page and the callback. Returns (connect answer, callback
    answer or None)."""
    r = api("GET", "/integrations/%s/connect?workspaceId=%s" % (OAUTH, wid), token=acct.token)
    if r.status != 302:
        return r, None
    p = request("GET", r.headers.get("location", "") + "&" + urllib.parse.urlencode({"login": login}))
    cb = p.headers.get("location") if p.status == 302 else None
    return r, (callback(cb, cookie_of(r, "svc_integ_state")) if cb else None)


def api_seen(base, path):
    """What the API double received on `path`, oldest first."""
    return [x for x in (request("GET", base + "/_requests").body or []) if x["path"] == path]


def forms(v):
    """A secret as an API may echo it (the double's /integ/api/echo writes these)."""
    raw = v.encode()
    b64 = base64.b64encode(raw).decode()
    return {v, b64, b64.rstrip("="), base64.urlsafe_b64encode(raw).decode().rstrip("="),
            urllib.parse.quote(v, safe=""), urllib.parse.quote_plus(v, safe=""), json.dumps(v)[1:-1]}


def leaks(text, values):
    """The encoded forms of `values` that occur in text (or in its JSON-escaped form)."""
    out = []
    for v in values:
        for f in forms(v):
            if f in text or json.dumps(f)[1:-1] in text:
                out.append(f)
    return out


def audit(admin, action, n=100):
    r = api("GET", "/integrations/admin/audit?limit=%d" % n, token=admin.token)
    return [e for e in (r.body.get("entries") or []) if e.get("action") == action] if r.status == 200 else []


def main():
    if not DOUBLE:
        check("test_integrations_scope_double_configured", False, "SVC_OAUTH_DOUBLE_URL is not set")
        return finish()
    proc, port = start_api_double()
    try:
        return run("http://%s:%d" % (API_HOST, port))
    finally:
        proc.kill()


def run(base):
    rc, out = import_entries()
    check("test_integrations_scope_import", rc == 0, out)
    admin = platform_admin(tag="integ-scope-admin")
    ids = [OAUTH, KEY, BASIC, CUSTOM]
    for which in ("platform-enabled", "enabled"):
        api("POST", "/integrations/admin/%s/bulk" % which, {"integrationIds": ids, "enabled": True}, token=admin.token)
    client_id, client_secret = "scope-client-" + secrets.token_hex(4), "scope-secret-" + secrets.token_hex(12)
    double("POST", "/_integ_clients", {client_id: {"secret": client_secret, "expires_in": 3600}})
    double("POST", "/_profiles", {"scope-login": {"sub": "scope-1"}})
    r = api("POST", "/integrations/admin/oauth-apps", {"integrationId": OAUTH, "clientId": client_id,
                                                       "clientSecret": client_secret, "scope": "global"},
            token=admin.token)
    check("test_integrations_scope_oauth_app", r.status in (200, 201), r)
    team = Team(tag="integ-scope")
    user = team.member                  # invited into the team workspace T; owner of their personal P
    P, T = user.workspace_id, team.wid
    pid_p, chat_p = fresh_project(user)
    r = create_in(user, T, "scope in team", template="blank")
    pid_t = r.body.get("id") if r.status == 201 else None
    chat_t = default_chat_id(user, pid_t) if pid_t else None
    check("test_integrations_scope_projects", pid_p and chat_p and pid_t and chat_t, r)

    # ---- item 5: a connection belongs to (user, workspace) ----
    r, cb = connect_for(user, P)
    check("test_integrations_scope_connect_for_personal",
          cb is not None and cb.status == 302 and "connected=" + OAUTH in cb.headers.get("location", ""), (r, cb))
    rp = api("GET", "/integrations/%s?workspaceId=%s" % (OAUTH, P), token=user.token)
    rt = api("GET", "/integrations/%s?workspaceId=%s" % (OAUTH, T), token=user.token)
    check("test_integrations_scope_connected_only_in_its_workspace",
          rp.body.get("connected") is True and rt.body.get("connected") is False, (rp, rt))
    r = api("GET", "/integrations/%s/connection?workspaceId=%s" % (OAUTH, T), token=user.token)
    check("test_integrations_scope_connection_get_other_workspace_404", is_error(r, 404, "not_found"), r)
    r = api("GET", "/integrations/%s/connection?workspaceId=%s" % (OAUTH, P), token=user.token)
    check("test_integrations_scope_connection_get_names_workspace",
          r.status == 200 and r.body.get("workspaceId") == P, r)
    text, is_err, _ = call(user, pid_p, chat_p, {"integration": OAUTH, "url": base + "/integ/api/mine"})
    seen = api_seen(base, "/integ/api/mine")
    personal_token = seen[-1]["headers"].get("authorization") if seen else None
    check("test_integrations_scope_turn_in_own_workspace_uses_connection",
          is_err is False and (text or "").startswith("HTTP 200") and personal_token
          and personal_token.startswith("Bearer "), (text, seen[-1:]))
    text, is_err, _ = call(user, pid_t, chat_t, {"integration": OAUTH, "url": base + "/integ/api/theirs"})
    check("test_integrations_scope_turn_in_invited_workspace_has_no_connection",
          is_err and "no credential" in (text or "") and not api_seen(base, "/integ/api/theirs"), text)
    outsider_ws = team.outsider.workspace_id
    r = api("GET", "/integrations/%s/connect?workspaceId=%s" % (OAUTH, outsider_ws), token=user.token)
    check("test_integrations_scope_connect_foreign_workspace_refused", r.status in (403, 404), r)
    r, cb = connect_for(user, T)
    check("test_integrations_scope_connect_for_team",
          cb is not None and cb.status == 302 and "connected=" + OAUTH in cb.headers.get("location", ""), (r, cb))
    text, is_err, _ = call(user, pid_t, chat_t, {"integration": OAUTH, "url": base + "/integ/api/theirs"})
    seen = api_seen(base, "/integ/api/theirs")
    check("test_integrations_scope_turn_uses_the_workspace_connection",
          is_err is False and seen and seen[-1]["headers"].get("authorization", "").startswith("Bearer ")
          and seen[-1]["headers"].get("authorization") != personal_token, (text, seen[-1:]))
    n = sql("SELECT COUNT(*) FROM integration_connections WHERE user_id = '%s'" % user.user["id"]).strip()
    check("test_integrations_scope_two_connections", n == "2", n)
    r = api("DELETE", "/integrations/%s/connection?workspaceId=%s" % (OAUTH, T), token=user.token)
    r2 = api("GET", "/integrations/%s/connection?workspaceId=%s" % (OAUTH, P), token=user.token)
    r3 = api("GET", "/integrations/%s/connection?workspaceId=%s" % (OAUTH, T), token=user.token)
    check("test_integrations_scope_disconnect_one_workspace_keeps_other",
          r.status == 204 and r2.status == 200 and r3.status == 404, (r, r2, r3))
    r = api("DELETE", "/integrations/%s/connection?workspaceId=%s" % (OAUTH, T), token=user.token)
    check("test_integrations_scope_disconnect_again_404", is_error(r, 404, "not_found"), r)

    # ---- item 10: connecting and disconnecting are audited (who, what, which workspace; no secret) ----
    created = [e for e in audit(admin, "integrations.connection.create") if e.get("actorId") == user.user["id"]]
    deleted = [e for e in audit(admin, "integrations.connection.delete") if e.get("actorId") == user.user["id"]]
    check("test_integrations_scope_connect_audited",
          len(created) == 2 and {e["details"].get("workspaceId") for e in created} == {P, T}
          and all(e["resourceId"] == OAUTH and e["details"].get("userId") == user.user["id"] and e.get("at")
                  for e in created), created)
    check("test_integrations_scope_disconnect_audited",
          len(deleted) == 1 and deleted[0]["details"] == {"workspaceId": T, "userId": user.user["id"]}, deleted)
    check("test_integrations_scope_audit_holds_no_token",
          personal_token and personal_token[7:] not in json.dumps(created + deleted), created)

    # ---- item 5: a platform credential only where the platform admin allows it ----
    key = "scope-platform-key-" + secrets.token_hex(12)
    r = api("POST", "/integrations/admin/credentials", {"integrationId": KEY, "authType": "secret_text",
                                                        "value": key, "workspaceIds": [P]}, token=admin.token)
    check("test_integrations_scope_credential_with_workspaces",
          r.status == 201 and r.body.get("workspaceIds") == [P] and key not in json.dumps(r.body), r)
    text, is_err, _ = call(user, pid_t, chat_t, {"integration": KEY, "url": base + "/integ/api/key-t"})
    check("test_integrations_scope_platform_credential_not_in_other_workspace",
          is_err and "no credential" in (text or "") and not api_seen(base, "/integ/api/key-t"), text)
    rt = api("GET", "/integrations/%s?workspaceId=%s" % (KEY, T), token=user.token)
    rp = api("GET", "/integrations/%s?workspaceId=%s" % (KEY, P), token=user.token)
    check("test_integrations_scope_configured_per_workspace",
          rt.body.get("configured") is False and rp.body.get("configured") is True, (rt, rp))
    text, is_err, _ = call(user, pid_p, chat_p, {"integration": KEY, "url": base + "/integ/api/key-p"})
    seen = api_seen(base, "/integ/api/key-p")
    check("test_integrations_scope_platform_credential_in_allowed_workspace",
          is_err is False and seen and seen[-1]["headers"].get("authorization") == "Bearer " + key, (text, seen[-1:]))
    wpath = "/integrations/admin/credentials/%s/workspaces" % KEY
    check("test_integrations_scope_credential_workspaces_user_403",
          is_error(api("PUT", wpath, {"workspaceIds": None}, token=user.token), 403, "forbidden"))
    check("test_integrations_scope_credential_workspaces_anonymous_401",
          is_error(api("PUT", wpath, {"workspaceIds": None}), 401, "unauthorized"))
    for bad in ({}, {"workspaceIds": "all"}, {"workspaceIds": ["nope"]}, {"workspaceIds": [7]},
                {"workspaceIds": ["00000000-0000-4000-8000-000000000000"]}):
        r = api("PUT", wpath, bad, token=admin.token)
        check("test_integrations_scope_credential_workspaces_400 %s" % json.dumps(bad)[:40],
              is_error(r, 400, "validation_failed", "workspaceIds"), r)
    r = api("PUT", "/integrations/admin/credentials/%s/workspaces" % BASIC, {"workspaceIds": None}, token=admin.token)
    check("test_integrations_scope_credential_workspaces_none_404", is_error(r, 404, "not_found"), r)
    r = api("PUT", wpath, {"workspaceIds": [P, T]}, token=admin.token)
    check("test_integrations_scope_credential_workspaces_200",
          r.status == 200 and sorted(r.body.get("workspaceIds") or []) == sorted([P, T]), r)
    r = api("GET", "/integrations/admin/credentials/%s" % KEY, token=admin.token)
    check("test_integrations_scope_credential_get_shows_workspaces",
          r.status == 200 and sorted(r.body.get("workspaceIds") or []) == sorted([P, T]), r)
    text, is_err, _ = call(user, pid_t, chat_t, {"integration": KEY, "url": base + "/integ/api/key-t"})
    check("test_integrations_scope_platform_credential_once_allowed", is_err is False and api_seen(base, "/integ/api/key-t"),
          text)
    r = api("PUT", wpath, {"workspaceIds": None}, token=admin.token)
    check("test_integrations_scope_credential_workspaces_all", r.status == 200 and r.body.get("workspaceIds") is None, r)
    acts = [e for e in audit(admin, "integrations.platform_credentials.workspaces.update") if e["resourceId"] == KEY]
    check("test_integrations_scope_credential_workspaces_audited",
          len(acts) == 2 and acts[0]["details"] == {"workspaceIds": None}
          and sorted(acts[1]["details"]["workspaceIds"]) == sorted([P, T]), acts)

    # ---- item 5: read-only enablements (GET and HEAD only), the default with a platform credential ----
    post = {"integration": KEY, "method": "POST", "url": base + "/integ/api/write-key", "body": "{}"}
    text, is_err, _ = call(user, pid_p, chat_p, post)
    check("test_integrations_scope_platform_credential_read_only_by_default",
          is_err and "read-only" in (text or "") and not api_seen(base, "/integ/api/write-key"), text)
    r = api("PUT", "/workspaces/%s/integrations/%s" % (T, KEY), {"enabled": True, "readOnly": False},
            token=user.token)
    check("test_integrations_scope_read_only_member_403", is_error(r, 403, "forbidden"), r)
    r = api("PUT", "/workspaces/%s/integrations/%s" % (P, KEY), {"enabled": True, "readOnly": "no"}, token=user.token)
    check("test_integrations_scope_read_only_400", is_error(r, 400, "validation_failed", "readOnly"), r)
    r = api("PUT", "/workspaces/%s/integrations/%s" % (P, KEY), {"enabled": True, "readOnly": False}, token=user.token)
    check("test_integrations_scope_read_only_off", r.status == 200 and r.body.get("readOnly") is False, r)
    text, is_err, _ = call(user, pid_p, chat_p, post)
    check("test_integrations_scope_writes_once_allowed",
          is_err is False and (text or "").startswith("HTTP 200") and api_seen(base, "/integ/api/write-key"), text)
    r = api("PUT", "/workspaces/%s/integrations/%s" % (P, KEY), {"enabled": True}, token=user.token)
    check("test_integrations_scope_read_only_kept_when_absent", r.status == 200 and r.body.get("readOnly") is False, r)
    r = api("PUT", "/workspaces/%s/integrations/%s" % (P, OAUTH), {"enabled": True, "readOnly": True},
            token=user.token)
    text, is_err, _ = call(user, pid_p, chat_p, {"integration": OAUTH, "method": "DELETE",
                                                 "url": base + "/integ/api/write-oauth"})
    check("test_integrations_scope_read_only_applies_to_own_connection",
          r.status == 200 and r.body.get("readOnly") is True and is_err and "read-only" in (text or "")
          and not api_seen(base, "/integ/api/write-oauth"), (r, text))
    r = api("PUT", "/workspaces/%s/integrations/%s" % (P, OAUTH), {"enabled": True, "readOnly": None},
            token=user.token)
    check("test_integrations_scope_read_only_null_is_default", r.status == 200 and r.body.get("readOnly") is None, r)
    text, is_err, _ = call(user, pid_p, chat_p, {"integration": OAUTH, "method": "POST", "body": "{}",
                                                 "url": base + "/integ/api/write-oauth"})
    check("test_integrations_scope_own_connection_writes_by_default",
          is_err is False and api_seen(base, "/integ/api/write-oauth"), text)
    acts = [e for e in audit(admin, "integrations.workspace_enabled.update")
            if e["details"].get("workspaceId") == P and "readOnly" in e["details"]]
    check("test_integrations_scope_read_only_audited",
          len(acts) == 3 and acts[0]["details"]["readOnly"] is None and acts[1]["details"]["readOnly"] is True
          and acts[2]["details"]["readOnly"] is False and acts[2]["actorId"] == user.user["id"], acts)

    # ---- item 10: every call records the credential kind it used ----
    rows = sql("SELECT integration_id, credential FROM integration_calls WHERE user_id = '%s' ORDER BY seq"
               % user.user["id"]).splitlines()
    kinds = {tuple(x.split("\t")) for x in rows}
    check("test_integrations_scope_call_records_credential_kind",
          (OAUTH, "user") in kinds and (KEY, "platform") in kinds and all(len(k) == 2 and k[1] in ("user", "platform")
                                                                          for k in kinds), rows)
    r = api("GET", "/xray/history?limit=100", token=admin.token)
    mine = [c for c in (r.body.get("items") or []) if c.get("userId") == user.user["id"]] if r.status == 200 else []
    check("test_xray_history_shows_credential_kind",
          mine and {c.get("credential") for c in mine} == {"user", "platform"}, mine[:3])

    # ---- item 6: echoed basic_auth and custom_auth secrets never reach the model ----
    uname, pw = "scope-user-" + secrets.token_hex(6), "p@ss/w rd+=" + secrets.token_hex(8)
    hkey, qkey, tok = "k/ey+" + secrets.token_hex(10), "q y&z/" + secrets.token_hex(10), "tok-" + secrets.token_hex(12)
    r1 = api("POST", "/integrations/admin/credentials", {"integrationId": BASIC, "authType": "basic_auth",
                                                         "value": {"username": uname, "password": pw}},
             token=admin.token)
    r2 = api("POST", "/integrations/admin/credentials", {"integrationId": CUSTOM, "authType": "custom_auth",
                                                         "value": {"header:X-Svc-Key": hkey, "query:api_key": qkey,
                                                                   "token": tok}}, token=admin.token)
    check("test_integrations_scope_echo_credentials_set", r1.status == 201 and r2.status == 201, (r1, r2))
    reset_double()
    text_b, is_err_b, _ = call(user, pid_p, chat_p, {"integration": BASIC, "url": base + "/integ/api/echo"})
    text_c, is_err_c, _ = call(user, pid_p, chat_p, {"integration": CUSTOM, "url": base + "/integ/api/echo?x=1"})
    model_saw = json.dumps(double_requests())
    seen = api_seen(base, "/integ/api/echo")
    got = seen[-1] if seen else {}
    check("test_integrations_custom_auth_header_and_query_injected",
          got.get("headers", {}).get("x-svc-key") == hkey and got.get("query", {}).get("api_key") == qkey
          and got.get("query", {}).get("x") == "1" and got.get("headers", {}).get("authorization") == "Bearer " + tok,
          got)
    basic_values = [uname, pw, uname + ":" + pw]
    check("test_integrations_basic_auth_echo_scrubbed",
          is_err_b is False and "[credential]" in (text_b or "") and not leaks(text_b or "", basic_values),
          (leaks(text_b or "", basic_values), (text_b or "")[:600]))
    check("test_integrations_custom_auth_echo_scrubbed",
          is_err_c is False and "[credential]" in (text_c or "") and not leaks(text_c or "", [hkey, qkey, tok]),
          (leaks(text_c or "", [hkey, qkey, tok]), (text_c or "")[:600]))
    check("test_integrations_echoed_secrets_never_reach_the_model",
          not leaks(model_saw, basic_values + [hkey, qkey, tok]), leaks(model_saw, basic_values + [hkey, qkey, tok]))
    r = api("GET", "/xray/history?limit=5", token=admin.token)
    check("test_integrations_injected_query_not_recorded",
          r.status == 200 and all(qkey not in json.dumps(c) and "api_key" not in json.dumps(c)
                                  for c in r.body.get("items", [])), r)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
