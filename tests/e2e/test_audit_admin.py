#!/usr/bin/env python3
# test_audit_admin.py: the admin audit log records who set or cleared a workspace's AI-provider key and who created or revoked an API token, never the secret (issue 25 item 10)
import os
import secrets
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from svclib import PROVIDER_URL, TIME_RE, api, check, created_id, finish, signup  # noqa: E402
from wslib import platform_admin  # noqa: E402
import re  # noqa: E402


def entries(admin, n=100):
    """The newest n entries of the admin audit log (through the API, as a platform admin)."""
    r = api("GET", "/integrations/admin/audit?limit=%d" % n, token=admin.token)
    if r.status != 200:
        raise AssertionError("reading the audit log failed: %r" % r)
    return r, r.body.get("entries") or []


def find(es, action, resource):
    return [e for e in es if e.get("action") == action and e.get("resourceId") == resource]


def well_formed(e, actor, rtype):
    return (e.get("actorId") == actor and e.get("resourceType") == rtype and re.match(TIME_RE, e.get("at") or "")
            and isinstance(e.get("details"), dict))


def test_ai_provider_key(admin, a):
    wid = a.workspace_id
    key = "sk-audit-" + secrets.token_hex(12)
    body = {"protocol": "openai", "baseUrl": PROVIDER_URL + "/v1", "model": "gpt-double", "apiKey": key}
    r = api("PUT", "/workspaces/%s/ai-provider" % wid, body, token=a.token)
    check("test_audit_ai_provider_key_set_answers_200", r.status == 200, r)
    raw, es = entries(admin)
    got = find(es, "workspaces.ai_provider.key_set", wid)
    check("test_audit_ai_provider_key_set_is_recorded", len(got) == 1 and well_formed(got[0], a.user["id"], "workspace"),
          got or es[:3])
    check("test_audit_ai_provider_key_never_in_the_log", key not in raw.raw.decode() and key[9:] not in raw.raw.decode())
    # a change that keeps the key is no key event
    body.pop("apiKey")
    body["model"] = "gpt-other"
    r = api("PUT", "/workspaces/%s/ai-provider" % wid, body, token=a.token)
    _, es = entries(admin)
    check("test_audit_ai_provider_kept_key_is_not_a_key_event",
          r.status == 200 and len(find(es, "workspaces.ai_provider.key_set", wid)) == 1
          and not find(es, "workspaces.ai_provider.key_cleared", wid), r)
    body["apiKey"] = None
    r = api("PUT", "/workspaces/%s/ai-provider" % wid, body, token=a.token)
    _, es = entries(admin)
    got = find(es, "workspaces.ai_provider.key_cleared", wid)
    check("test_audit_ai_provider_key_cleared_is_recorded",
          r.status == 200 and len(got) == 1 and well_formed(got[0], a.user["id"], "workspace"), got or r)
    # a refused change records nothing
    r = api("PUT", "/workspaces/%s/ai-provider" % wid, dict(body, apiKey="bad key\u00e9", baseUrl="ftp://x"),
            token=a.token)
    _, es2 = entries(admin)
    check("test_audit_ai_provider_refused_change_is_not_recorded", r.status == 400 and es2[:1] == es[:1], r)


def test_api_tokens(admin, a):
    r = api("POST", "/auth/tokens", {"name": "audited", "scopes": ["projects:read", "deploy"]}, token=a.token)
    tid, secret = created_id(r), created_id(r, "token")
    check("test_audit_token_created", tid is not None and secret is not None, r)
    raw, es = entries(admin)
    got = find(es, "auth.tokens.create", tid)
    check("test_audit_token_create_is_recorded",
          len(got) == 1 and well_formed(got[0], a.user["id"], "api_token")
          and sorted(got[0]["details"].get("scopes") or []) == ["deploy", "projects:read"]
          and got[0]["details"].get("name") == "audited", got or es[:3])
    check("test_audit_token_secret_never_in_the_log", bool(secret) and secret not in raw.raw.decode()
          and secret[8:] not in raw.raw.decode())
    r = api("DELETE", "/auth/tokens/%s" % tid, token=a.token)
    _, es = entries(admin)
    got = find(es, "auth.tokens.revoke", tid)
    check("test_audit_token_revoke_is_recorded",
          r.status == 204 and len(got) == 1 and well_formed(got[0], a.user["id"], "api_token"), got or r)
    # revoking a token that is gone records nothing
    r = api("DELETE", "/auth/tokens/%s" % tid, token=a.token)
    _, es = entries(admin)
    check("test_audit_token_revoke_of_unknown_is_404_and_not_recorded",
          r.status == 404 and len(find(es, "auth.tokens.revoke", tid)) == 1, r)


def main():
    admin = platform_admin(tag="audit-padmin")
    a = signup(tag="audit")
    test_ai_provider_key(admin, a)
    test_api_tokens(admin, a)


if __name__ == "__main__":
    try:
        main()
    except Exception:
        import traceback
        check("test_audit_admin ran to the end", False, traceback.format_exc())
    sys.exit(finish())
