#!/usr/bin/env python3
# test_auth_jwt.py: JWT hardening against the real stack (RFC 8725): alg none, RS256, wrong issuer, expired, refresh-as-access, tampering; refresh, logout and me
import hashlib
import hmac
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from svclib import (APP_URL, TEST_CONFIG, api, b64url, b64url_decode, check, finish, is_error, setting,  # noqa: E402
                    signup)


def sign_hs256(secret, header, claims):
    h = b64url(json.dumps(header, separators=(",", ":")).encode())
    p = b64url(json.dumps(claims, separators=(",", ":")).encode())
    s = b64url(hmac.new(secret.encode(), ("%s.%s" % (h, p)).encode(), hashlib.sha256).digest())
    return "%s.%s.%s" % (h, p, s)


def test_hardening(a):
    secret = setting("JWT_SECRET")
    issuer = setting("JWT_ISSUER") or "svc"
    check("test_auth_jwt_stack_secret_readable", bool(secret) and len(secret) >= 32, TEST_CONFIG)
    if not secret:
        return
    head, payload, sig = a.token.split(".")
    claims = json.loads(b64url_decode(payload))
    now = int(time.time())
    good = dict(claims, iat=now, exp=now + 600)
    # A token we sign ourselves with the real secret and the real claims works: the forgeries below
    # fail for the one thing each changes, not because our signing differs from the server's.
    tok = sign_hs256(secret, {"alg": "HS256", "typ": "JWT"}, good)
    r = api("GET", "/auth/me", token=tok)
    check("test_auth_jwt_control_token_signed_with_the_secret_is_accepted", r.status == 200, r)

    cases = {}
    cases["alg_none"] = "%s.%s." % (b64url(b'{"alg":"none","typ":"JWT"}'), b64url(json.dumps(good).encode()))
    cases["alg_none_with_signature"] = "%s.%s.%s" % (b64url(b'{"alg":"none","typ":"JWT"}'),
                                                     b64url(json.dumps(good).encode()), sig)
    # RS256 header: a verifier that took the HMAC secret as a "public key" would accept this.
    rs_h = b64url(json.dumps({"alg": "RS256", "typ": "JWT"}).encode())
    rs_p = b64url(json.dumps(good).encode())
    cases["alg_rs256_hmac_with_secret"] = "%s.%s.%s" % (
        rs_h, rs_p, b64url(hmac.new(secret.encode(), ("%s.%s" % (rs_h, rs_p)).encode(), hashlib.sha256).digest()))
    cases["alg_rs256_random_signature"] = "%s.%s.%s" % (rs_h, rs_p, b64url(os.urandom(256)))
    cases["alg_hs512_same_secret"] = "%s.%s.%s" % (
        b64url(b'{"alg":"HS512","typ":"JWT"}'), rs_p,
        b64url(hmac.new(secret.encode(), ("%s.%s" % (b64url(b'{"alg":"HS512","typ":"JWT"}'), rs_p)).encode(),
                        hashlib.sha512).digest()))
    cases["wrong_issuer"] = sign_hs256(secret, {"alg": "HS256", "typ": "JWT"}, dict(good, iss=issuer + "-other"))
    cases["no_issuer"] = sign_hs256(secret, {"alg": "HS256", "typ": "JWT"},
                                    {k: v for k, v in good.items() if k != "iss"})
    cases["expired"] = sign_hs256(secret, {"alg": "HS256", "typ": "JWT"}, dict(good, iat=now - 1000, exp=now - 10))
    cases["no_exp"] = sign_hs256(secret, {"alg": "HS256", "typ": "JWT"},
                                 {k: v for k, v in good.items() if k != "exp"})
    cases["exp_as_string"] = sign_hs256(secret, {"alg": "HS256", "typ": "JWT"}, dict(good, exp=str(now + 600)))
    cases["refresh_kind_as_access"] = sign_hs256(secret, {"alg": "HS256", "typ": "JWT"}, dict(good, kind="refresh"))
    cases["no_kind"] = sign_hs256(secret, {"alg": "HS256", "typ": "JWT"},
                                  {k: v for k, v in good.items() if k != "kind"})
    cases["refresh_token_from_signup"] = a.refresh
    cases["tampered_payload_sub"] = "%s.%s.%s" % (
        head, b64url(json.dumps(dict(claims, sub="00000000-0000-4000-8000-000000000000")).encode()), sig)
    cases["tampered_payload_exp"] = "%s.%s.%s" % (head, b64url(json.dumps(dict(claims, exp=now + 10 ** 7)).encode()), sig)
    flipped = sig[:-2] + ("A" if sig[-2] != "A" else "B") + sig[-1]
    cases["tampered_signature"] = "%s.%s.%s" % (head, payload, flipped)
    cases["signature_of_other_key"] = sign_hs256("x" * 40, {"alg": "HS256", "typ": "JWT"}, good)
    cases["subject_not_a_user"] = sign_hs256(secret, {"alg": "HS256", "typ": "JWT"},
                                             dict(good, sub="00000000-0000-4000-8000-000000000000"))
    for name, tok in sorted(cases.items()):
        r = api("GET", "/auth/me", token=tok)
        check("test_auth_jwt_%s_is_401" % name, is_error(r, 401, "unauthorized"), r)
        # every request checks the token's session and user (svc_session_check), so a valid
        # signature for a user that does not exist is refused everywhere too
        r = api("GET", "/projects", token=tok)
        check("test_auth_jwt_%s_is_401_on_projects_too" % name, is_error(r, 401, "unauthorized"), r)


def test_refresh_logout_me(a):
    # refresh with the cookie (from the app's origin) and with the body field
    r = api("POST", "/auth/refresh", headers={"Origin": APP_URL, "Cookie": "svc_refresh_token=" + a.refresh})
    b = r.body if isinstance(r.body, dict) else {}
    check("test_auth_refresh_answers_access_refresh_expiresin_and_user",
          r.status == 200 and isinstance(b.get("accessToken"), str) and isinstance(b.get("refreshToken"), str)
          and isinstance(b.get("expiresIn"), int) and isinstance(b.get("user"), dict), r)
    set_cookies = " ".join(r.cookies)
    check("test_auth_refresh_sets_both_cookies",
          "svc_access_token=" in set_cookies and "svc_refresh_token=" in set_cookies, r.cookies)
    me = api("GET", "/auth/me", token=a.token)
    # logout clears the cookies and ends the session: its access and refresh tokens stop at once
    # (review finding 1 of issue 17; tests/e2e/test_auth_sessions.py has the rest)
    r = api("POST", "/auth/logout", headers={"Origin": APP_URL, "Cookie": "svc_access_token=" + a.token})
    check("test_auth_logout_with_cookie_and_origin_is_200", r.status == 200, r)
    check("test_auth_logout_sets_max_age_0_on_both",
          sum(1 for c in r.cookies if "Max-Age=0" in c) == 2, r.cookies)
    r = api("GET", "/auth/me", token=a.token)
    check("test_auth_logout_revokes_the_access_token", is_error(r, 401, "unauthorized"), r)
    r = api("POST", "/auth/refresh", json={"refreshToken": a.refresh})
    check("test_auth_logout_revokes_the_refresh_token", is_error(r, 401, "unauthorized"), r)
    # me: user, default workspace, feature flags from the configuration
    b = me.body if isinstance(me.body, dict) else {}
    f = b.get("features") if isinstance(b.get("features"), dict) else {}
    check("test_auth_me_features_name_oauth_providers_and_password_reset",
          isinstance(f.get("oauth"), dict) and f["oauth"].get("github") is True and f["oauth"].get("google") is True
          and f.get("passwordReset") is True and f.get("apiTokens") is True, b)
    check("test_auth_me_says_session_credential", b.get("credential") == "session", b)
    check("test_auth_me_default_workspace_is_personal",
          isinstance(b.get("workspace"), dict) and b["workspace"].get("id") == a.workspace_id, b)


def main():
    a = signup(tag="jwt")
    test_hardening(a)
    test_refresh_logout_me(a)


if __name__ == "__main__":
    try:
        main()
    except Exception:
        import traceback
        check("test_auth_jwt ran to the end", False, traceback.format_exc())
    sys.exit(finish())
