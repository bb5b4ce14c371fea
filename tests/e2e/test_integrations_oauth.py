#!/usr/bin/env python3
"""test_integrations_oauth.py: users' own OAuth connections to integrations (docs/api.md "Integrations",
"Per-user OAuth"): connect with state and PKCE, the callback, refresh before expiry, disconnect.

The provider is the integration provider of tests/fixtures/oauth_double.py (/integ, SVC_OAUTH_DOUBLE_URL);
the test adds catalogue entries pointing at it with svc-admin import-catalog.
"""
import base64
import json
import os
import re
import secrets
import sys
import tempfile
import time
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from svclib import APP_URL, BASE_URL, api, check, finish, is_error, request, signup, sql
from wslib import platform_admin, svc_admin

DOUBLE = os.environ.get("SVC_OAUTH_DOUBLE_URL", "").rstrip("/")
INTEG = "svc-test-oauth"
REDIRECT = BASE_URL + "/integrations/oauth/callback"


def double(method, path, body=None):
    data = json.dumps(body).encode() if body is not None else None
    return request(method, DOUBLE + path, data, {"Content-Type": "application/json"})


def import_test_entries():
    entries = [{"id": INTEG, "displayName": "svc test OAuth", "description": "the integration double",
                "logoUrl": None, "authTypes": ["oauth2"],
                "oauth2": {"authUrl": DOUBLE + "/integ/authorize", "tokenUrl": DOUBLE + "/integ/token",
                           "scope": ["read", "write"]}, "categories": ["DEVELOPER_TOOLS"]},
               {"id": "svc-test-oauth-off", "displayName": "svc test OAuth (off)", "description": None,
                "logoUrl": None, "authTypes": ["oauth2"],
                "oauth2": {"authUrl": DOUBLE + "/integ/authorize", "tokenUrl": DOUBLE + "/integ/token", "scope": []},
                "categories": []}]
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(entries, f)
    try:
        return svc_admin("import-catalog", f.name)
    finally:
        os.unlink(f.name)


def cookie_of(r, name):
    for c in r.cookies:
        m = re.match(r"%s=([^;]*)" % re.escape(name), c)
        if m:
            return m.group(1)
    return None


def connect(acct, integ=INTEG, login="integ-login", deny=False):
    """Runs connect and the provider's page. Returns (connect response, the callback URL the provider
    sent the browser to or None, the state cookie)."""
    r = api("GET", "/integrations/%s/connect" % integ, token=acct.token)
    if r.status != 302:
        return r, None, None
    loc = r.headers.get("location", "")
    extra = {"login": login}
    if deny:
        extra["deny"] = "1"
    p = request("GET", loc + "&" + urllib.parse.urlencode(extra))
    return r, p.headers.get("location") if p.status == 302 else None, cookie_of(r, "svc_integ_state")


def callback(url, cookie, token=None):
    """Calls the callback URL (absolute) with the state cookie as the browser would."""
    h = {}
    if cookie:
        h["Cookie"] = "svc_integ_state=" + cookie
    if token:
        h["Authorization"] = "Bearer " + token
    return request("GET", url, None, h)


def token_requests():
    r = double("GET", "/_requests")
    return [x for x in (r.body or []) if x.get("path") == "/integ/token"]


def main():
    if not DOUBLE:
        check("test_integrations_oauth_double_configured", False, "SVC_OAUTH_DOUBLE_URL is not set")
        return finish()
    rc, out = import_test_entries()
    check("test_integrations_oauth_import_test_entries", rc == 0, out)
    admin = platform_admin(tag="integ-oauth-admin")
    user = signup(tag="integ-oauth-user")
    other = signup(tag="integ-oauth-other")
    double("POST", "/_profiles", {"integ-login": {"sub": "integ-1"}})

    r = api("POST", "/integrations/admin/platform-enabled/bulk", {"integrationIds": [INTEG], "enabled": True},
            token=admin.token)
    r2 = api("POST", "/integrations/admin/enabled/bulk", {"integrationIds": [INTEG], "enabled": True},
             token=admin.token)
    check("test_integrations_oauth_enable", r.status == 200 and r2.status == 200, (r, r2))

    # ---- connect: errors ----
    r = api("GET", "/integrations/%s/connect" % INTEG)
    check("test_integrations_connect_anonymous_401", is_error(r, 401, "unauthorized"), r)
    r = api("GET", "/integrations/no-such/connect", token=user.token)
    check("test_integrations_connect_unknown_404", is_error(r, 404, "not_found"), r)
    r = api("GET", "/integrations/%s/connect" % INTEG, token=user.token)
    check("test_integrations_connect_without_app_409", is_error(r, 409, "conflict"), r)
    r = api("GET", "/integrations/svc-test-oauth-off/connect", token=user.token)
    check("test_integrations_connect_not_enabled_409", is_error(r, 409, "conflict"), r)
    api("POST", "/integrations/admin/platform-enabled/bulk", {"integrationIds": ["acumbamail"], "enabled": True},
        token=admin.token)
    api("POST", "/integrations/admin/enabled/bulk", {"integrationIds": ["acumbamail"], "enabled": True},
        token=admin.token)
    r = api("GET", "/integrations/acumbamail/connect", token=user.token)
    check("test_integrations_connect_not_oauth_409", is_error(r, 409, "conflict"), r)
    r = api("GET", "/integrations/%s/connect?workspaceId=nope" % INTEG, token=user.token)
    check("test_integrations_connect_bad_workspace_400", is_error(r, 400, "validation_failed", "workspaceId"), r)

    client_id, client_secret = "integ-client-" + secrets.token_hex(4), "integ-secret-" + secrets.token_hex(12)
    double("POST", "/_integ_clients", {client_id: {"secret": client_secret, "expires_in": 3600}})
    r = api("POST", "/integrations/admin/oauth-apps", {"integrationId": INTEG, "clientId": client_id,
                                                       "clientSecret": client_secret, "scope": "global"},
            token=admin.token)
    app_id = r.body.get("id") if r.status in (200, 201) else None
    check("test_integrations_oauth_app_for_double", app_id, r)

    # ---- connect and callback ----
    r, cb, cookie = connect(user)
    loc = r.headers.get("location", "")
    q = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(loc).query))
    check("test_integrations_connect_302_authorize_url",
          r.status == 302 and loc.startswith(DOUBLE + "/integ/authorize?") and q.get("client_id") == client_id
          and q.get("redirect_uri") == REDIRECT and q.get("response_type") == "code" and q.get("scope") == "read write"
          and len(q.get("state", "")) >= 32 and q.get("code_challenge_method") == "S256"
          and len(q.get("code_challenge", "")) == 43, (r, q))
    check("test_integrations_connect_state_cookie",
          cookie == q.get("state") and any("HttpOnly" in c and "Path=/api/integrations/oauth" in c for c in r.cookies),
          r.cookies)
    check("test_integrations_connect_state_stored_hashed",
          sql("SELECT COUNT(*) FROM integration_oauth_states WHERE state_hash = '%s'" % q.get("state", "x")).strip() == "0")
    check("test_integrations_provider_redirects_to_callback", cb and cb.startswith(REDIRECT + "?"), cb)
    before = len(token_requests())
    r = callback(cb, cookie)
    check("test_integrations_callback_302_connected",
          r.status == 302 and r.headers.get("location") == APP_URL + "/integrations?connected=" + INTEG, r)
    check("test_integrations_callback_clears_cookie",
          any(c.startswith("svc_integ_state=;") and "Max-Age=0" in c for c in r.cookies), r.cookies)
    reqs = token_requests()[before:]
    form = reqs[0]["form"] if reqs else {}
    check("test_integrations_callback_code_exchange_with_pkce",
          len(reqs) == 1 and form.get("grant_type") == "authorization_code" and form.get("redirect_uri") == REDIRECT
          and form.get("client_id") == client_id and len(form.get("code_verifier", "")) >= 43, reqs)
    r = api("GET", "/integrations/%s" % INTEG, token=user.token)
    check("test_integrations_connected_flag", r.status == 200 and r.body.get("connected") is True, r)
    r = api("GET", "/integrations/%s" % INTEG, token=other.token)
    check("test_integrations_connected_is_per_user", r.status == 200 and r.body.get("connected") is False, r)
    row = sql("SELECT access_token, refresh_token FROM integration_connections c JOIN users u ON u.id = c.user_id "
              "WHERE u.email = '%s'" % user.email)
    check("test_integrations_user_token_sealed",
          row.strip() and "it_" not in row and "ir_" not in row, row)
    r = api("GET", "/integrations/%s/connection" % INTEG, token=user.token)
    check("test_integrations_connection_get_200",
          r.status == 200 and r.body.get("connected") is True and r.body.get("scope") == "read write"
          and r.body.get("expiresAt") and "accessToken" not in r.body and "it_" not in json.dumps(r.body), r)
    r = api("GET", "/integrations/%s/connection" % INTEG, token=other.token)
    check("test_integrations_connection_get_none_404", is_error(r, 404, "not_found"), r)
    r = api("GET", "/integrations/%s/connection" % INTEG)
    check("test_integrations_connection_get_anonymous_401", is_error(r, 401, "unauthorized"), r)

    # ---- the callback's refusals ----
    r = callback(cb, cookie)
    check("test_integrations_callback_state_single_use",
          r.status == 302 and r.headers.get("location", "").endswith("/integrations?error=invalid_state"), r)
    r, cb2, cookie2 = connect(user)
    r = callback(cb2, None)
    check("test_integrations_callback_without_cookie_refused",
          r.status == 302 and "error=invalid_state" in r.headers.get("location", ""), r)
    r, cb3, cookie3 = connect(user)
    r = callback(cb3, cookie2)
    check("test_integrations_callback_other_browsers_cookie_refused",
          r.status == 302 and "error=invalid_state" in r.headers.get("location", ""), r)
    r, cb4, cookie4 = connect(user)
    r = callback(cb4, cookie4, token=other.token)
    check("test_integrations_callback_state_bound_to_user",
          r.status == 302 and "error=wrong_user" in r.headers.get("location", "")
          and sql("SELECT COUNT(*) FROM integration_connections c JOIN users u ON u.id = c.user_id WHERE u.email = '%s'"
                  % other.email).strip() == "0", r)
    r, cb5, cookie5 = connect(user, deny=True)
    r = callback(cb5, cookie5)
    check("test_integrations_callback_denied",
          r.status == 302 and "error=access_denied" in r.headers.get("location", "")
          and "integration=" + INTEG in r.headers.get("location", ""), r)
    r, cb6, cookie6 = connect(user)
    bad = re.sub(r"code=[^&]*", "code=forged", cb6 or "")
    r = callback(bad, cookie6)
    check("test_integrations_callback_refused_code",
          r.status == 302 and "error=exchange_failed" in r.headers.get("location", ""), r)
    r = request("GET", REDIRECT + "?code=x&state=" + "0" * 64, None, {"Cookie": "svc_integ_state=" + "0" * 64})
    check("test_integrations_callback_unknown_state",
          r.status == 302 and "error=invalid_state" in r.headers.get("location", ""), r)
    sql("UPDATE integration_oauth_states SET expires_at = UTC_TIMESTAMP(3) - INTERVAL 1 SECOND "
        "WHERE state_hash = SHA2('%s', 256)" % cookie3)
    r = callback(cb3, cookie3)
    check("test_integrations_callback_expired_state",
          r.status == 302 and "error=invalid_state" in r.headers.get("location", ""), r)

    # ---- a client secret this server cannot open (another ENCRYPTION_KEY): the browser still lands on the page ----
    r, cb8, cookie8 = connect(other)
    saved = sql("SELECT client_secret FROM integration_oauth_apps WHERE id = '%s'" % app_id).strip()
    forged = base64.b64encode(b"\x01\x00\x00\x00\x00" + secrets.token_bytes(12 + 20 + 16)).decode()
    sql("UPDATE integration_oauth_apps SET client_secret = '%s' WHERE id = '%s'" % (forged, app_id))
    try:
        r = callback(cb8, cookie8)
    finally:
        sql("UPDATE integration_oauth_apps SET client_secret = '%s' WHERE id = '%s'" % (saved, app_id))
    check("test_integrations_callback_secret_not_opening_redirects",
          r.status == 302 and "error=not_configured" in r.headers.get("location", "")
          and api("GET", "/integrations/%s" % INTEG, token=other.token).body.get("connected") is False, r)

    # ---- refresh before expiry ----
    short_id, short_secret = "integ-short-" + secrets.token_hex(4), "integ-short-secret-" + secrets.token_hex(8)
    double("POST", "/_integ_clients", {short_id: {"secret": short_secret, "expires_in": 30}})
    r = api("POST", "/integrations/admin/oauth-apps", {"integrationId": INTEG, "clientId": short_id,
                                                       "clientSecret": short_secret, "scope": "global"},
            token=admin.token)
    check("test_integrations_oauth_app_replaced_for_refresh", r.status == 200 and r.body.get("id") == app_id, r)
    r, cb7, cookie7 = connect(other)
    r = callback(cb7, cookie7)
    check("test_integrations_connect_short_lived", r.status == 302 and "connected=" in r.headers.get("location", ""), r)
    first = api("GET", "/integrations/%s/connection" % INTEG, token=other.token)
    n0 = len([x for x in token_requests() if x["form"].get("grant_type") == "refresh_token"])
    time.sleep(0.05)
    second = api("GET", "/integrations/%s/connection" % INTEG, token=other.token)
    refreshes = [x for x in token_requests() if x["form"].get("grant_type") == "refresh_token"]
    check("test_integrations_refresh_before_expiry",
          first.status == 200 and second.status == 200 and len(refreshes) == n0 + 1
          and refreshes[-1]["form"].get("client_id") == short_id
          and refreshes[-1]["form"].get("refresh_token", "").startswith("ir_")
          and second.body.get("updatedAt") != first.body.get("updatedAt"), (first, second, refreshes[-1:]))
    r = api("GET", "/integrations/%s/connection" % INTEG, token=user.token)
    check("test_integrations_no_refresh_when_fresh",
          r.status == 200 and len([x for x in token_requests() if x["form"].get("grant_type") == "refresh_token"])
          == len(refreshes), r)

    # ---- deleting the app leaves users' tokens; a refresh then fails ----
    r = api("DELETE", "/integrations/admin/oauth-apps/%s" % app_id, token=admin.token)
    check("test_integrations_app_delete_keeps_user_tokens",
          r.status == 204 and api("GET", "/integrations/%s" % INTEG, token=user.token).body.get("connected") is True)
    r = api("GET", "/integrations/%s/connection" % INTEG, token=other.token)
    check("test_integrations_refresh_without_app_409", is_error(r, 409, "conflict"), r)

    # ---- disconnect ----
    r = api("DELETE", "/integrations/%s/connection" % INTEG)
    check("test_integrations_disconnect_anonymous_401", is_error(r, 401, "unauthorized"), r)
    r = api("DELETE", "/integrations/%s/connection" % INTEG, token=user.token)
    check("test_integrations_disconnect_204", r.status == 204, r)
    r = api("GET", "/integrations/%s" % INTEG, token=user.token)
    check("test_integrations_disconnected", r.status == 200 and r.body.get("connected") is False, r)
    r = api("DELETE", "/integrations/%s/connection" % INTEG, token=user.token)
    check("test_integrations_disconnect_again_404", is_error(r, 404, "not_found"), r)
    r = api("DELETE", "/integrations/Bad%20Id/connection", token=user.token)
    check("test_integrations_disconnect_bad_id_404", r.status == 404, r)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
