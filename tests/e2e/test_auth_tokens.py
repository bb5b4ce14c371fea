#!/usr/bin/env python3
# test_auth_tokens.py: per-user API tokens: create (shown once), list, use as Bearer, scopes, the user's own rights, revoke
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from svclib import (TIME_RE, UUID_RE, api, check, create_project, created_id, default_chat_id, finish,  # noqa: E402
                    is_error, signup)
from wslib import platform_admin  # noqa: E402

TOKEN_RE = r"^svc_pat_[A-Za-z0-9_-]{40}$"


def make(acct, name, scopes):
    r = api("POST", "/auth/tokens", {"name": name, "scopes": scopes}, token=acct.token)
    return r, created_id(r, "token")


def test_create_list_revoke(a):
    r, tok = make(a, "ci deploys", ["projects:read", "deploy"])
    b = r.body if isinstance(r.body, dict) else {}
    check("test_auth_tokens_create_is_201_with_the_token_once", r.status == 201 and re.match(TOKEN_RE, tok or ""), r)
    check("test_auth_tokens_create_echoes_fields",
          re.match(UUID_RE, b.get("id") or "") and b.get("name") == "ci deploys"
          and sorted(b.get("scopes") or []) == ["deploy", "projects:read"] and re.match(TIME_RE, b.get("createdAt") or "")
          and b.get("lastUsedAt") is None and isinstance(b.get("prefix"), str) and tok and tok.startswith(b["prefix"])
          and len(b["prefix"]) < len(tok) - 20, b)
    lst = api("GET", "/auth/tokens", token=a.token)
    items = lst.body.get("items") if isinstance(lst.body, dict) else None
    mine = [i for i in items or [] if i.get("id") == b.get("id")]
    check("test_auth_tokens_list_has_the_token", lst.status == 200 and len(mine) == 1, lst)
    check("test_auth_tokens_list_never_shows_the_secret",
          tok is not None and tok not in lst.raw.decode() and tok[len(b.get("prefix", "")):] not in lst.raw.decode()
          and all("token" not in i for i in items or []), lst)
    # use: Bearer svc_pat_... works where its scopes allow, and lastUsedAt is recorded
    me = api("GET", "/auth/me", token=tok)
    check("test_auth_tokens_bearer_works_for_me", me.status == 200 and me.body.get("user", {}).get("id") == a.user["id"]
          and me.body.get("credential") == "apiToken", me)
    lst = api("GET", "/auth/tokens", token=a.token)
    mine = [i for i in (lst.body.get("items") or []) if i.get("id") == b.get("id")]
    check("test_auth_tokens_last_used_at_is_set_after_use",
          len(mine) == 1 and re.match(TIME_RE, mine[0].get("lastUsedAt") or ""), lst)
    # the token cannot manage tokens (no escalation to more scopes), nor be used as the session cookie
    r = api("POST", "/auth/tokens", {"name": "more", "scopes": ["admin"]}, token=tok)
    check("test_auth_tokens_api_token_cannot_create_tokens", is_error(r, 403, "forbidden"), r)
    r = api("GET", "/auth/tokens", token=tok)
    check("test_auth_tokens_api_token_cannot_list_tokens", is_error(r, 403, "forbidden"), r)
    r = api("GET", "/auth/me", headers={"Cookie": "svc_access_token=" + tok})
    check("test_auth_tokens_api_token_as_cookie_is_401", is_error(r, 401, "unauthorized"), r)
    # revoke: 204, then 401 at once; a second revoke is 404; another user's token id is 404
    other = signup(tag="pat-other")
    r = api("DELETE", "/auth/tokens/%s" % b.get("id"), token=other.token)
    check("test_auth_tokens_revoke_other_users_token_is_404", is_error(r, 404, "not_found"), r)
    r = api("DELETE", "/auth/tokens/%s" % b.get("id"), token=a.token)
    check("test_auth_tokens_revoke_is_204", r.status == 204, r)
    r = api("GET", "/auth/me", token=tok)
    check("test_auth_tokens_revoked_token_is_401", is_error(r, 401, "unauthorized"), r)
    r = api("DELETE", "/auth/tokens/%s" % b.get("id"), token=a.token)
    check("test_auth_tokens_second_revoke_is_404", is_error(r, 404, "not_found"), r)
    r = api("DELETE", "/auth/tokens/not-a-uuid", token=a.token)
    check("test_auth_tokens_revoke_bad_id_is_404", r.status == 404, r)
    # forged and malformed tokens
    for name, t in (("unknown", "svc_pat_" + "A" * 40), ("short", "svc_pat_abc"), ("long", "svc_pat_" + "A" * 41),
                    ("bad_chars", "svc_pat_" + "!" * 40), ("changed_one_char", tok[:-1] + ("A" if tok[-1] != "A" else "B"))):
        r = api("GET", "/auth/me", token=t)
        check("test_auth_tokens_%s_token_is_401" % name, is_error(r, 401, "unauthorized"), r)


def test_validation(a):
    for name, body, field in (("missing_name", {"scopes": ["chat"]}, "name"),
                              ("blank_name", {"name": "  ", "scopes": ["chat"]}, "name"),
                              ("long_name", {"name": "n" * 129, "scopes": ["chat"]}, "name"),
                              ("missing_scopes", {"name": "x"}, "scopes"),
                              ("empty_scopes", {"name": "x", "scopes": []}, "scopes"),
                              ("unknown_scope", {"name": "x", "scopes": ["root"]}, "scopes"),
                              ("scope_not_string", {"name": "x", "scopes": [1]}, "scopes"),
                              ("scopes_not_array", {"name": "x", "scopes": "chat"}, "scopes")):
        r = api("POST", "/auth/tokens", body, token=a.token)
        check("test_auth_tokens_create_%s_is_400" % name, is_error(r, 400, "validation_failed", field), r)
    r = api("POST", "/auth/tokens", {"name": "x", "scopes": ["chat"]})
    check("test_auth_tokens_create_without_session_is_401", is_error(r, 401, "unauthorized"), r)


def test_scopes(a, b_user):
    p = create_project(a, "blank")
    pid = p.body.get("id") if p.status == 201 else None
    check("test_auth_tokens_scope_project_created", pid is not None, p)
    chat_id = default_chat_id(a, pid) if pid else None
    toks = {}
    for s in ("projects:read", "projects:write", "chat", "deploy", "admin"):
        r, toks[s] = make(a, "only " + s, [s])
        check("test_auth_tokens_create_%s_token" % s.replace(":", "_"), toks[s] is not None, r)
    ws = "/workspaces/%s/projects" % a.workspace_id
    cases = [
        # (label, method, path, body, scope -> expected "ok" or "forbidden")
        ("read_project", "GET", "/projects/%s" % pid, None,
         {"projects:read": "ok", "projects:write": "forbidden", "chat": "forbidden", "deploy": "forbidden", "admin": "ok"}),
        ("list_projects", "GET", "/projects", None,
         {"projects:read": "ok", "projects:write": "forbidden", "chat": "forbidden", "deploy": "forbidden", "admin": "ok"}),
        ("create_project", "POST", ws, {"name": "via token", "template": "blank"},
         {"projects:read": "forbidden", "projects:write": "ok", "chat": "forbidden", "deploy": "forbidden"}),
        ("deploy", "POST", "/deploy/%s" % pid, None,
         {"projects:read": "forbidden", "projects:write": "forbidden", "chat": "forbidden", "deploy": "ok"}),
        # an empty chat message: the router lets the chat scope through to the handler (400), others stop at 403
        ("chat_send", "POST", "/chat/%s/messages" % pid, {"chatId": chat_id, "text": ""},
         {"projects:read": "forbidden", "projects:write": "forbidden", "chat": "passes", "deploy": "forbidden"}),
        ("chat_history", "GET", "/chat/%s/messages?chatId=%s" % (pid, chat_id), None,
         {"projects:read": "ok", "chat": "ok", "deploy": "forbidden", "projects:write": "forbidden"}),
        ("rename_workspace", "PATCH", "/workspaces/%s" % a.workspace_id, {"name": "renamed by token"},
         {"projects:write": "forbidden", "projects:read": "forbidden", "admin": "ok"}),
    ]
    for label, method, path, body, want in cases:
        for scope, expect in sorted(want.items()):
            r = api(method, path, json=body, token=toks[scope])
            if expect == "ok":
                ok = 200 <= r.status < 300
            elif expect == "passes":
                ok = r.status not in (401, 403)
            else:
                ok = is_error(r, 403, "forbidden")
            check("test_auth_tokens_scope_%s_with_%s_is_%s" % (label, scope.replace(":", "_"), expect), ok, r)
    # a token never exceeds its user's rights: another user's all-scope token sees nothing of A's
    r, btok = make(b_user, "all of it", ["projects:read", "projects:write", "chat", "deploy", "admin"])
    check("test_auth_tokens_all_scopes_token_created", btok is not None, r)
    for label, method, path, body in (("get", "GET", "/projects/%s" % pid, None),
                                      ("patch", "PATCH", "/projects/%s" % pid, {"name": "stolen"}),
                                      ("deploy", "POST", "/deploy/%s" % pid, None),
                                      ("create_in_workspace", "POST", ws, {"name": "x", "template": "blank"}),
                                      ("rename_workspace", "PATCH", "/workspaces/%s" % a.workspace_id, {"name": "x"})):
        r = api(method, path, json=body, token=btok)
        check("test_auth_tokens_other_users_token_%s_is_refused" % label, r.status in (403, 404), r)
    g = api("GET", "/projects/%s" % pid, token=a.token)
    check("test_auth_tokens_refused_requests_changed_nothing", g.status == 200 and g.body.get("name") != "stolen", g)


def test_admin_scope(a):
    """Issue 25 item 8: xray, the workspace's AI provider and its credits are admin reads: a projects:read token
    gets 403, an admin token of a user allowed to read them gets 200."""
    admin = platform_admin(tag="pat-padmin")
    toks = {}
    for who, acct in (("owner", a), ("padmin", admin)):
        for s in ("projects:read", "admin"):
            r, toks[who, s] = make(acct, "%s %s" % (who, s), [s])
            check("test_auth_tokens_admin_scope_%s_%s_token_created" % (who, s.replace(":", "_")),
                  toks[who, s] is not None and (r.body or {}).get("scopes") == [s], r)
    cases = [
        ("xray_stats", "padmin", "/xray/stats"),
        ("xray_active", "padmin", "/xray/active"),
        ("xray_stuck", "padmin", "/xray/stuck"),
        ("xray_history", "padmin", "/xray/history"),
        ("integrations_audit", "padmin", "/integrations/admin/audit"),
        ("ai_provider", "owner", "/workspaces/%s/ai-provider" % a.workspace_id),
        ("credits", "owner", "/workspaces/%s/credits" % a.workspace_id),
    ]
    for label, who, path in cases:
        r = api("GET", path, token=toks[who, "projects:read"])
        check("test_auth_tokens_%s_with_projects_read_is_forbidden" % label, is_error(r, 403, "forbidden"), r)
        r = api("GET", path, token=toks[who, "admin"])
        check("test_auth_tokens_%s_with_admin_is_ok" % label, r.status == 200, r)
    # the admin scope never exceeds the user's rights: a workspace owner's admin token is no platform admin
    r = api("GET", "/xray/stats", token=toks["owner", "admin"])
    check("test_auth_tokens_xray_with_admin_of_non_platform_admin_is_forbidden", is_error(r, 403, "forbidden"), r)
    # the workspace's ordinary reads still take projects:read
    r = api("GET", "/workspaces/%s" % a.workspace_id, token=toks["owner", "projects:read"])
    check("test_auth_tokens_workspace_get_with_projects_read_is_ok", r.status == 200, r)


def main():
    a = signup(tag="pat")
    b = signup(tag="pat-b")
    test_create_list_revoke(a)
    test_validation(a)
    test_scopes(a, b)
    test_admin_scope(a)


if __name__ == "__main__":
    try:
        main()
    except Exception:
        import traceback
        check("test_auth_tokens ran to the end", False, traceback.format_exc())
    sys.exit(finish())
