#!/usr/bin/env python3
# test_auth_sessions.py: review finding 1 of issue 17: refresh tokens stored by jti and rotated, a retired one presented
# again ends its whole session (RFC 6819 §5.2.2.3) after a 10 s grace for two tabs, logout ends the session, and every
# access and refresh token is checked against its session and the user's generation (users.session_gen)
import hashlib
import hmac
import json
import os
import secrets
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from svclib import (APP_URL, api, at_once, b64url, b64url_decode, check, finish, is_error, setting, signup,  # noqa: E402
                    sql)


def claims_of(token):
    return json.loads(b64url_decode(token.split(".")[1]))


def sign(claims):
    secret = setting("JWT_SECRET") or ""
    h = b64url(b'{"alg":"HS256","typ":"JWT"}')
    p = b64url(json.dumps(claims, separators=(",", ":")).encode())
    s = b64url(hmac.new(secret.encode(), ("%s.%s" % (h, p)).encode(), hashlib.sha256).digest())
    return "%s.%s.%s" % (h, p, s)


def refresh(tok):
    return api("POST", "/auth/refresh", {"refreshToken": tok})


def login(acct):
    r = api("POST", "/auth/login", {"email": acct.email, "password": acct.password})
    return r.body if r.status == 200 else {}


def me_status(access):
    return api("GET", "/auth/me", token=access).status


def age_retirement(jti, ms=60000):
    """Moves a retired refresh token's retirement `ms` into the past (instead of sleeping out the grace)."""
    sql("UPDATE auth_refresh_tokens SET retired_at = retired_at - %d WHERE jti = '%s'" % (ms, jti))


def test_rotation(a):
    first = a.refresh
    r = refresh(first)
    b = r.body if isinstance(r.body, dict) else {}
    second = b.get("refreshToken")
    check("test_auth_sessions_refresh_rotates_the_refresh_token",
          r.status == 200 and second and second != first and claims_of(second)["jti"] != claims_of(first)["jti"], r)
    check("test_auth_sessions_rotation_keeps_the_session",
          second and claims_of(second).get("fam") == claims_of(first).get("fam")
          and claims_of(b.get("accessToken")).get("fam") == claims_of(first).get("fam"), b)
    rows = sql("SELECT retired_at IS NOT NULL FROM auth_refresh_tokens WHERE jti = '%s'" % claims_of(first)["jti"])
    check("test_auth_sessions_exchanged_token_is_retired", rows.strip() == "1", rows)
    r = refresh(second)
    third = r.body.get("refreshToken") if r.status == 200 else None
    check("test_auth_sessions_the_new_refresh_token_works", r.status == 200 and third, r)
    # within the grace (two tabs refreshing with one token): a sibling, not a reuse
    r = refresh(second)
    check("test_auth_sessions_retired_token_within_grace_is_200", r.status == 200, r)
    check("test_auth_sessions_grace_answer_is_a_new_token",
          r.status == 200 and claims_of(r.body["refreshToken"])["jti"] not in (claims_of(second)["jti"],
                                                                              claims_of(third)["jti"]), r)
    return third, b.get("accessToken")


def test_reuse_ends_the_session(a):
    other = login(a)   # a second session of the same account must survive
    first = a.refresh
    r = refresh(first)
    newest = r.body.get("refreshToken") if r.status == 200 else None
    access = r.body.get("accessToken") if r.status == 200 else None
    check("test_auth_sessions_reuse_setup", r.status == 200 and newest and access, r)
    age_retirement(claims_of(first)["jti"])
    r = refresh(first)
    check("test_auth_sessions_retired_token_after_grace_is_401", is_error(r, 401, "unauthorized"), r)
    check("test_auth_sessions_reuse_message_says_so", "used before" in (r.body.get("message") or ""), r)
    r = refresh(newest)
    check("test_auth_sessions_reuse_ends_the_newest_refresh_token", is_error(r, 401, "unauthorized"), r)
    check("test_auth_sessions_reuse_ends_the_sessions_access_tokens",
          me_status(access) == 401 and me_status(a.token) == 401, None)
    rows = sql("SELECT revoked_why FROM auth_sessions WHERE id = '%s'" % claims_of(first)["fam"])
    check("test_auth_sessions_reuse_is_recorded", rows.strip() == "reuse", rows)
    check("test_auth_sessions_reuse_leaves_other_sessions",
          other.get("accessToken") and me_status(other["accessToken"]) == 200
          and refresh(other["refreshToken"]).status == 200, other)


def test_concurrent_refresh(a):
    tok = a.refresh
    rs = at_once([lambda: refresh(tok), lambda: refresh(tok)])
    check("test_auth_sessions_two_tabs_refreshing_at_once_both_get_tokens",
          [r.status for r in rs] == [200, 200], [r.status for r in rs])
    jtis = {claims_of(r.body["refreshToken"])["jti"] for r in rs if r.status == 200}
    check("test_auth_sessions_two_tabs_get_different_tokens", len(jtis) == 2, jtis)
    check("test_auth_sessions_both_tabs_tokens_work",
          all(r.status == 200 and refresh(r.body["refreshToken"]).status == 200 for r in rs), None)


def test_logout(a):
    other = login(a)
    # the web app's way: both cookies, from the app's origin
    r = api("POST", "/auth/logout", headers={"Origin": APP_URL, "Cookie": "svc_access_token=%s; svc_refresh_token=%s"
                                                                          % (a.token, a.refresh)})
    check("test_auth_sessions_logout_is_200", r.status == 200, r)
    check("test_auth_sessions_logout_ends_the_refresh_token", is_error(refresh(a.refresh), 401, "unauthorized"), None)
    check("test_auth_sessions_logout_ends_the_access_token", me_status(a.token) == 401, None)
    check("test_auth_sessions_logout_leaves_other_sessions",
          me_status(other.get("accessToken")) == 200 and refresh(other.get("refreshToken")).status == 200, other)
    # with the refresh token in the body only
    s = login(a)
    r = api("POST", "/auth/logout", {"refreshToken": s.get("refreshToken")})
    check("test_auth_sessions_logout_with_body_token_is_200", r.status == 200, r)
    check("test_auth_sessions_logout_with_body_token_ends_the_session",
          me_status(s.get("accessToken")) == 401 and refresh(s.get("refreshToken")).status == 401, None)
    # with the access token only (a client that keeps its refresh token elsewhere)
    s = login(a)
    r = api("POST", "/auth/logout", token=s.get("accessToken"))
    check("test_auth_sessions_logout_with_access_token_only_is_200", r.status == 200, r)
    check("test_auth_sessions_logout_with_access_token_only_ends_the_session",
          me_status(s.get("accessToken")) == 401 and refresh(s.get("refreshToken")).status == 401, None)
    # twice, or without any token: still 200, nothing to end
    r = api("POST", "/auth/logout", {"refreshToken": s.get("refreshToken")})
    check("test_auth_sessions_logout_again_is_200", r.status == 200, r)
    r = api("POST", "/auth/logout", raw="{nope", headers={"Content-Type": "application/json"})
    check("test_auth_sessions_logout_malformed_body_is_400", is_error(r, 400, "invalid_json"), r)
    # a forged refresh token cannot end somebody's session
    o = login(a)
    forged = o.get("refreshToken", "..")[:-3] + "AAA"
    api("POST", "/auth/logout", {"refreshToken": forged})
    check("test_auth_sessions_logout_with_forged_token_ends_nothing", refresh(o.get("refreshToken")).status == 200, o)


def test_forged_and_old_tokens(a):
    if not setting("JWT_SECRET"):
        check("test_auth_sessions_stack_secret_readable", False, "JWT_SECRET")
        return
    base = claims_of(a.refresh)
    now = int(time.time())
    # a refresh token from before sessions were stored (no fam): sign in again
    legacy = {k: v for k, v in base.items() if k != "fam"}
    legacy.update(iat=now, exp=now + 600, jti=secrets.token_hex(16))
    r = refresh(sign(legacy))
    check("test_auth_sessions_refresh_token_without_session_is_401", is_error(r, 401, "unauthorized"), r)
    # the right session but a jti never stored (a signing key that leaked would still not mint refreshes)
    r = refresh(sign(dict(base, iat=now, exp=now + 600, jti=secrets.token_hex(16))))
    check("test_auth_sessions_refresh_token_with_unknown_jti_is_401", is_error(r, 401, "unauthorized"), r)
    # an access token from before sessions were stored (no fam) is checked for the generation only
    acc = claims_of(a.token)
    old = {k: v for k, v in acc.items() if k != "fam"}
    old.update(iat=now, exp=now + 600)
    check("test_auth_sessions_access_token_without_session_works", me_status(sign(old)) == 200, old)
    check("test_auth_sessions_access_token_of_another_generation_is_401",
          me_status(sign(dict(old, gen=acc.get("gen", 0) + 5))) == 401, None)
    check("test_auth_sessions_access_token_of_unknown_session_is_401",
          me_status(sign(dict(acc, iat=now, exp=now + 600, fam=secrets.token_hex(16)))) == 401, None)
    check("test_auth_sessions_access_token_with_malformed_session_is_401",
          me_status(sign(dict(acc, iat=now, exp=now + 600, fam="not-hex"))) == 401, None)
    # a session id of another user's session does not count for this user
    b = signup(tag="sess-b")
    check("test_auth_sessions_access_token_with_another_users_session_is_401",
          me_status(sign(dict(acc, iat=now, exp=now + 600, fam=claims_of(b.token)["fam"]))) == 401, None)


def statuses(access, n=6):
    """The answers to n reads through svc-auth and n through svc-projects: every process of each, likely."""
    return {api("GET", "/auth/me", token=access).status for _ in range(n)} | \
        {api("GET", "/projects", token=access).status for _ in range(n)}


def test_logout_with_remembered_checks(a):
    """Each responder process remembers a session check that passed for at most 1 s (docs/security.md "Sessions");
    a logout on this host drops what every process here remembers at once, and after 1 s nothing anywhere does."""
    s = login(a)
    check("test_auth_sessions_remembered_checks_pass", statuses(s.get("accessToken")) == {200}, s)
    r = api("POST", "/auth/logout", token=s.get("accessToken"))
    got = statuses(s.get("accessToken"))
    check("test_auth_sessions_logout_refused_at_once_by_every_process", r.status == 200 and got == {401}, got)
    time.sleep(1.1)
    got = statuses(s.get("accessToken"))
    check("test_auth_sessions_logout_refused_after_the_1s_bound", got == {401}, got)


def main():
    a = signup(tag="sess")
    check("test_auth_sessions_signup_tokens_carry_a_session",
          len(claims_of(a.refresh).get("fam", "")) == 32 and claims_of(a.token).get("fam") == claims_of(a.refresh).get("fam"),
          claims_of(a.refresh))
    test_rotation(a)
    test_reuse_ends_the_session(signup(tag="sess-reuse"))
    test_concurrent_refresh(signup(tag="sess-tabs"))
    test_logout(signup(tag="sess-logout"))
    test_logout_with_remembered_checks(signup(tag="sess-remembered"))
    test_forged_and_old_tokens(signup(tag="sess-forged"))


if __name__ == "__main__":
    try:
        main()
    except Exception:
        import traceback
        check("test_auth_sessions ran to the end", False, traceback.format_exc())
    sys.exit(finish())
