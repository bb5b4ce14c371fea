#!/usr/bin/env python3
# test_auth_oauth.py: OAuth sign-in with GitHub- and Google-like doubles: state bound to a cookie, PKCE, linking by verified email, failures, the assistant token
import base64
import hashlib
import json
import os
import secrets
import sys
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_auth_reset import forgot, token_of, wait_message  # noqa: E402
from svclib import (APP_URL, BASE_URL, NOPROVIDER_BASE_URL, api, check, finish, random_email, request,  # noqa: E402
                    signup, sql)

DOUBLE = os.environ.get("SVC_OAUTH_DOUBLE_URL", "").rstrip("/")


def double(method, path, body=None):
    data = json.dumps(body).encode() if body is not None else None
    r = request(method, DOUBLE + path, data, {"Content-Type": "application/json"})
    return json.loads(r.raw) if r.raw else None


def cookie_pairs(r):
    """name -> value of the Set-Cookie lines of r."""
    out = {}
    for line in r.cookies:
        k, _, v = line.split(";", 1)[0].partition("=")
        out[k.strip()] = v
    return out


def query_of(url):
    return dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(url).query, keep_blank_values=True))


class Flow:
    """One browser going through a sign-in: start, the provider's redirect, the callback."""

    def __init__(self, provider, key=None, deny=False, path_suffix="", session=None, base=None):
        self.base = base or BASE_URL
        h = {"Cookie": "svc_access_token=" + session} if session else {}
        self.start = api("GET", "/auth/%s%s" % (provider, path_suffix), headers=h, base=self.base)
        self.location = self.start.headers.get("location", "")
        self.params = query_of(self.location)
        self.cookie = cookie_pairs(self.start).get("svc_oauth", "")
        self.session = session
        self.back = None
        if self.start.status == 302 and (key or deny):
            url = self.location + ("&deny=1" if deny else "&login=" + urllib.parse.quote(key))
            self.back = request("GET", url)

    def callback_url(self):
        return self.back.headers.get("location", "") if self.back is not None else ""

    def finish(self, url=None, cookie=None):
        cookies = []
        c = self.cookie if cookie is None else cookie
        if c:
            cookies.append("svc_oauth=" + c)
        if self.session:
            cookies.append("svc_access_token=" + self.session)
        h = {"Cookie": "; ".join(cookies)} if cookies else {}
        return request("GET", url or self.callback_url(), None, h)


def lands(r, page, error=None):
    loc = r.headers.get("location", "")
    if r.status != 302 or not loc.startswith(APP_URL + page):
        return False
    return query_of(loc).get("error") == error


def me_of(r):
    tok = cookie_pairs(r).get("svc_access_token")
    return api("GET", "/auth/me", token=tok) if tok else None


def test_github_new_user():
    key = "gh-" + secrets.token_hex(4)
    email = random_email("gh")
    double("POST", "/_profiles", {key: {"id": secrets.randbelow(10 ** 9) + 1, "login": key, "name": "Octo Cat",
                                        "email": None, "emails": [{"email": "other-" + email, "verified": False, "primary": False},
                                                                  {"email": email, "verified": True, "primary": True}]}})
    double("POST", "/_reset")
    f = Flow("github", key)
    check("test_auth_oauth_github_start_is_302_to_the_provider",
          f.start.status == 302 and f.location.startswith(DOUBLE + "/github/login/oauth/authorize?"), f.start)
    p = f.params
    check("test_auth_oauth_github_authorize_has_client_redirect_scope_state",
          p.get("client_id") == "svc-test-client" and p.get("redirect_uri") == BASE_URL + "/auth/github/callback"
          and p.get("response_type") == "code" and "user:email" in p.get("scope", "") and len(p.get("state", "")) > 40, p)
    check("test_auth_oauth_github_uses_pkce_s256",
          p.get("code_challenge_method") == "S256" and len(p.get("code_challenge", "")) == 43, p)
    attrs = [c for c in f.start.cookies if c.startswith("svc_oauth=")]
    check("test_auth_oauth_state_cookie_is_httponly_lax_short_lived",
          len(attrs) == 1 and "HttpOnly" in attrs[0] and "SameSite=Lax" in attrs[0] and "Path=/api/auth" in attrs[0]
          and "Max-Age=600" in attrs[0], f.start.cookies)
    check("test_auth_oauth_state_cookie_does_not_hold_the_state", f.cookie and p.get("state", "") not in f.cookie,
          f.cookie)
    r = f.finish()
    check("test_auth_oauth_github_callback_lands_on_dashboard", lands(r, "/dashboard"), r)
    cp = cookie_pairs(r)
    check("test_auth_oauth_github_callback_sets_both_session_cookies_and_clears_state",
          bool(cp.get("svc_access_token")) and bool(cp.get("svc_refresh_token")) and cp.get("svc_oauth") == "", r.cookies)
    me = me_of(r)
    mb = me.body if me is not None and isinstance(me.body, dict) else {}
    check("test_auth_oauth_github_creates_the_user_with_the_verified_primary_email",
          me is not None and me.status == 200 and mb.get("user", {}).get("email") == email
          and mb.get("user", {}).get("displayName") == "Octo Cat", me)
    check("test_auth_oauth_github_new_user_has_a_personal_workspace",
          isinstance(mb.get("workspace"), dict) and mb["workspace"].get("kind") == "personal", mb)
    uid = mb.get("user", {}).get("id", "")
    check("test_auth_oauth_github_new_user_address_counts_as_verified",
          sql("SELECT email_verified_at IS NOT NULL FROM users WHERE id = '%s'" % uid).strip() == "1", uid)
    reqs = [q for q in double("GET", "/_requests") if q["path"] == "/github/login/oauth/access_token"]
    form = reqs[-1]["form"] if reqs else {}
    verifier = form.get("code_verifier", "")
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    check("test_auth_oauth_code_exchange_sends_secret_redirect_and_matching_verifier",
          form.get("client_secret") == "svc-test-secret" and form.get("redirect_uri") == p.get("redirect_uri")
          and challenge == p.get("code_challenge") and len(verifier) == 43, form)
    # again: the same identity signs in to the same account
    f2 = Flow("github", key)
    r2 = f2.finish()
    me2 = me_of(r2)
    check("test_auth_oauth_github_second_sign_in_same_user",
          lands(r2, "/dashboard") and me2 is not None and me2.body.get("user", {}).get("id") == mb.get("user", {}).get("id"),
          (r2, me2))
    # the code is single use: replaying the callback fails
    r3 = f2.finish()
    check("test_auth_oauth_replayed_callback_fails_exchange", lands(r3, "/login", "exchange_failed")
          and "svc_access_token" not in cookie_pairs(r3), r3)


def test_linking():
    # a password account that never showed its address to be its own: Google with that verified address is
    # not linked to it (whoever signed up may not own the address: pre-account takeover, finding 6 of issue 17)
    a = signup(tag="link")
    key0 = "go-" + secrets.token_hex(4)
    double("POST", "/_profiles", {key0: {"sub": "g-" + secrets.token_hex(6), "email": a.email, "email_verified": True,
                                         "name": "Early"}})
    r = Flow("google", key0).finish()
    check("test_auth_oauth_unverified_account_is_not_linked_account_not_verified",
          lands(r, "/login", "account_not_verified") and "svc_access_token" not in cookie_pairs(r), r)
    out = sql("SELECT COUNT(*) FROM auth_identities WHERE user_id = '%s'" % a.user["id"]).strip()
    check("test_auth_oauth_unverified_account_got_no_identity", out == "0", out)
    # a used reset link shows the address is the account's: from then on the provider links to it
    forgot(a.email)
    msg = wait_message(a.email)
    tok = token_of(msg) if msg else None
    r = api("POST", "/auth/reset-password", {"token": tok or "0" * 64, "password": "pw-" + secrets.token_hex(6)})
    check("test_auth_oauth_reset_link_verifies_the_address", r.status == 200 and sql(
        "SELECT email_verified_at IS NOT NULL FROM users WHERE id = '%s'" % a.user["id"]).strip() == "1", r)
    # then Google with the same verified address: linked to it, not a new account
    key = "go-" + secrets.token_hex(4)
    double("POST", "/_profiles", {key: {"sub": "g-" + secrets.token_hex(6), "email": a.email, "email_verified": True,
                                        "name": "Linked"}})
    f = Flow("google", key)
    check("test_auth_oauth_google_start_is_302_with_pkce",
          f.start.status == 302 and f.location.startswith(DOUBLE + "/google/o/oauth2/v2/auth?")
          and f.params.get("code_challenge_method") == "S256" and "email" in f.params.get("scope", ""), f.start)
    r = f.finish()
    me = me_of(r)
    check("test_auth_oauth_verified_email_links_to_the_existing_account",
          lands(r, "/dashboard") and me is not None and me.body.get("user", {}).get("id") == a.user["id"], (r, me))
    # an unverified address never links to (nor takes over) an existing account
    b = signup(tag="nolink")
    key2 = "go-" + secrets.token_hex(4)
    double("POST", "/_profiles", {key2: {"sub": "g-" + secrets.token_hex(6), "email": b.email, "email_verified": False}})
    r = Flow("google", key2).finish()
    check("test_auth_oauth_unverified_email_is_refused_email_not_verified",
          lands(r, "/login", "email_not_verified") and "svc_access_token" not in cookie_pairs(r), r)
    key3 = "gh-" + secrets.token_hex(4)
    double("POST", "/_profiles", {key3: {"id": secrets.randbelow(10 ** 9) + 1, "login": key3, "email": b.email,
                                         "emails": [{"email": b.email, "verified": False, "primary": True}]}})
    r = Flow("github", key3).finish()
    check("test_auth_oauth_github_public_or_unverified_email_never_links",
          lands(r, "/login", "email_not_verified") and "svc_access_token" not in cookie_pairs(r), r)
    out = sql("SELECT COUNT(*) FROM auth_identities WHERE user_id = '%s'" % b.user["id"]).strip()
    check("test_auth_oauth_refused_link_left_no_identity", out == "0", out)


def test_failures():
    key = "gh-" + secrets.token_hex(4)
    double("POST", "/_profiles", {key: {"id": secrets.randbelow(10 ** 9) + 1, "login": key,
                                        "emails": [{"email": random_email("ghf"), "verified": True, "primary": True}]}})
    f = Flow("github", key)
    url = f.callback_url()
    r = f.finish(cookie="")
    check("test_auth_oauth_callback_without_state_cookie_is_invalid_state", lands(r, "/login", "invalid_state"), r)
    other = Flow("github")   # another browser's cookie
    r = f.finish(cookie=other.cookie)
    check("test_auth_oauth_callback_with_another_browsers_cookie_is_invalid_state", lands(r, "/login", "invalid_state"), r)
    q = query_of(url)
    st = q.get("state", "")
    tampered = st[:-1] + ("A" if st[-1] != "A" else "B")
    bad = url.replace("state=" + urllib.parse.quote(st, safe=""), "state=" + tampered)
    r = f.finish(url=bad)
    check("test_auth_oauth_callback_with_tampered_state_is_invalid_state", lands(r, "/login", "invalid_state"), r)
    exp, _, rest = st.partition(".")
    expired = url.replace("state=" + urllib.parse.quote(st, safe=""), "state=" + str(int(exp) - 3600) + "." + rest)
    r = f.finish(url=expired)
    check("test_auth_oauth_callback_with_changed_expiry_is_invalid_state", lands(r, "/login", "invalid_state"), r)
    g = Flow("google")
    r = request("GET", BASE_URL + "/auth/google/callback?" + urllib.parse.urlencode({"code": "x", "state": f.params.get("state", "")}),
                None, {"Cookie": "svc_oauth=" + f.cookie})
    check("test_auth_oauth_github_state_is_refused_by_google", lands(r, "/login", "invalid_state"), r)
    _ = g
    # the untouched flow still works after all of that (nothing was spent)
    r = f.finish()
    check("test_auth_oauth_valid_callback_after_refused_ones_works", lands(r, "/dashboard"), r)
    d = Flow("github", deny=True)
    r = d.finish()
    check("test_auth_oauth_user_denies_is_access_denied", lands(r, "/login", "access_denied"), r)
    r = request("GET", BASE_URL + "/auth/github/callback?code=nope&state=" + urllib.parse.quote(f.params.get("state", "")),
                None, {"Cookie": "svc_oauth=" + f.cookie})
    check("test_auth_oauth_unknown_code_is_exchange_failed_or_state", lands(r, "/login", "exchange_failed"), r)
    r = api("GET", "/auth/github/callback")
    check("test_auth_oauth_callback_without_parameters_is_invalid_state", lands(r, "/login", "invalid_state"), r)
    r = api("GET", "/auth/gitlab")
    check("test_auth_oauth_unknown_provider_is_404", r.status == 404, r)
    if NOPROVIDER_BASE_URL:
        r = api("GET", "/auth/github", base=NOPROVIDER_BASE_URL)
        b = r.body if isinstance(r.body, dict) else {}
        check("test_auth_oauth_unconfigured_provider_is_404_with_a_clear_message",
              r.status == 404 and b.get("error") == "not_found" and "not configured" in b.get("message", ""), r)
        r = api("GET", "/auth/google/callback?code=x&state=y", base=NOPROVIDER_BASE_URL)
        check("test_auth_oauth_unconfigured_callback_is_404", r.status == 404, r)
        me = api("GET", "/auth/me", token=signup(tag="noauth").token, base=NOPROVIDER_BASE_URL)
        check("test_auth_me_features_show_unconfigured_providers",
              me.status == 200 and me.body.get("features", {}).get("oauth") == {"github": False, "google": False}, me)


def test_assistant():
    a = signup(tag="assist")
    key = "gh-" + secrets.token_hex(4)
    double("POST", "/_profiles", {key: {"id": secrets.randbelow(10 ** 9) + 1, "login": key,
                                        "emails": [{"email": random_email("asst"), "verified": True, "primary": True}]}})
    r = api("GET", "/auth/github/assistant")
    check("test_auth_assistant_start_needs_a_session", r.status == 401, r)
    f = Flow("github", key, path_suffix="/assistant", session=a.token)
    check("test_auth_assistant_start_is_302_with_its_own_redirect",
          f.start.status == 302 and f.params.get("redirect_uri") == BASE_URL + "/auth/github/assistant/callback", f.start)
    double("POST", "/_reset")
    r = f.finish()
    check("test_auth_assistant_callback_lands_on_settings", lands(r, "/settings?assistant=connected") or (
        r.status == 302 and r.headers.get("location") == APP_URL + "/settings?assistant=connected"), r)
    issued = [q for q in double("GET", "/_requests") if q["path"] == "/github/user"]
    tok = (issued[-1]["headers"].get("authorization", "").split(" ", 1) + [""])[1] if issued else ""
    stored = sql("SELECT sealed_token FROM assistant_tokens WHERE user_id = '%s' AND provider = 'github'" % a.user["id"]).strip()
    check("test_auth_assistant_token_is_stored_sealed_not_in_clear",
          bool(tok) and bool(stored) and tok not in stored and tok.encode() not in base64.b64decode(stored + "==="),
          (tok[:8], stored[:40]))
    audit = sql("SELECT CONCAT_WS('|', action, resource_id, actor_id, details) FROM integration_audit "
                "WHERE action = 'auth.assistant_token.store' AND actor_id = '%s'" % a.user["id"]).strip()
    check("test_auth_assistant_token_stored_is_audited_without_the_token",
          audit.count("\n") == 0 and audit.startswith("auth.assistant_token.store|github|%s|" % a.user["id"])
          and bool(tok) and tok not in audit, audit)
    me = api("GET", "/auth/me", token=a.token)
    check("test_auth_assistant_me_shows_connected_never_the_token",
          me.status == 200 and me.body.get("assistant", {}).get("connected") is True
          and me.body.get("assistant", {}).get("login") == key and tok not in me.raw.decode(), me)
    # another member's session cannot finish this member's flow
    b = signup(tag="assist-b")
    f2 = Flow("github", key, path_suffix="/assistant", session=a.token)
    f2.session = b.token
    r = f2.finish()
    check("test_auth_assistant_callback_for_another_session_is_invalid_state",
          r.status == 302 and query_of(r.headers.get("location", "")).get("error") == "invalid_state", r)
    f3 = Flow("github", key, path_suffix="/assistant", session=a.token)
    f3.session = None
    r = f3.finish()
    check("test_auth_assistant_callback_without_session_is_session_required",
          r.status == 302 and query_of(r.headers.get("location", "")).get("error") == "session_required", r)
    # the sign-in callback does not accept an assistant state, and the other way round
    f4 = Flow("github", key, path_suffix="/assistant", session=a.token)
    r = f4.finish(url=f4.callback_url().replace("/assistant/callback", "/callback"))
    check("test_auth_assistant_state_is_refused_by_the_sign_in_callback", lands(r, "/login", "invalid_state"), r)


def main():
    if not DOUBLE:
        check("test_auth_oauth_double_configured", False, "SVC_OAUTH_DOUBLE_URL is not set")
        return
    test_github_new_user()
    test_linking()
    test_failures()
    test_assistant()


if __name__ == "__main__":
    try:
        main()
    except Exception:
        import traceback
        check("test_auth_oauth ran to the end", False, traceback.format_exc())
    sys.exit(finish())
