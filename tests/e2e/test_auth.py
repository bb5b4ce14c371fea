#!/usr/bin/env python3
# test_auth.py: sign-up, login, refresh, logout and /auth/me against the real stack: happy paths, every error case, forged tokens
# (cookie-authenticated POSTs carry the app's Origin: the CSRF rule, tests/e2e/test_auth_csrf.py)
import base64
import hashlib
import hmac
import json
import os
import re
import secrets
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from svclib import (APP_URL, TIME_RE, UUID_RE, api, at_once, b64url, b64url_decode, check, finish,  # noqa: E402
                    is_error, random_email, signup, skip_rest)


def cookie(r, name):
    """The Set-Cookie line of r that sets `name`, or ""."""
    for c in r.cookies:
        if c.split("=", 1)[0].strip() == name:
            return c
    return ""


def attrs(line):
    """The attributes of a Set-Cookie line, lower-case names -> value ("" for flags)."""
    out = {}
    for part in line.split(";")[1:]:
        k, _, v = part.strip().partition("=")
        out[k.lower()] = v
    return out


def cookie_value(line):
    return line.split(";", 1)[0].split("=", 1)[1] if "=" in line.split(";", 1)[0] else ""


def signup_raw(email, password, display="E2E", **extra):
    body = {"email": email, "password": password}
    if display is not None:
        body["displayName"] = display
    body.update(extra)
    return api("POST", "/auth/signup", body)


def can_login(email, password):
    return api("POST", "/auth/login", {"email": email, "password": password}).status == 200


def test_signup_happy():
    email = random_email("auth")
    password = "pw-" + secrets.token_hex(8)
    r = signup_raw(email, password, "Ada")
    check("test_auth_signup_answers_201", r.status == 201, r)
    b = r.body if isinstance(r.body, dict) else {}
    user = b.get("user") if isinstance(b.get("user"), dict) else {}
    check("test_auth_signup_returns_user_with_uuid_email_and_name",
          bool(re.match(UUID_RE, user.get("id") or "")) and user.get("email") == email
          and user.get("displayName") == "Ada" and re.match(TIME_RE, user.get("createdAt") or ""), b)
    check("test_auth_signup_never_returns_the_password_or_its_hash",
          password not in r.raw.decode("utf-8", "replace") and "argon2" not in r.raw.decode("utf-8", "replace")
          and "passwordHash" not in json.dumps(b) and "password" not in user, b)
    access, refresh = b.get("accessToken"), b.get("refreshToken")
    check("test_auth_signup_returns_both_tokens_in_the_json",
          isinstance(access, str) and access.count(".") == 2 and isinstance(refresh, str)
          and refresh.count(".") == 2 and access != refresh, b)
    ca, cr = cookie(r, "svc_access_token"), cookie(r, "svc_refresh_token")
    check("test_auth_signup_sets_both_cookies_with_the_tokens",
          cookie_value(ca) == access and cookie_value(cr) == refresh, r.cookies)
    for name, line in (("access", ca), ("refresh", cr)):
        a = attrs(line)
        check("test_auth_signup_%s_cookie_is_httponly_samesite_lax" % name,
              "httponly" in a and a.get("samesite", "").lower() == "lax", line)
        check("test_auth_signup_%s_cookie_not_secure_on_http" % name, "secure" not in a, line)
        check("test_auth_signup_%s_cookie_has_a_positive_max_age" % name,
              a.get("max-age", "").isdigit() and int(a["max-age"]) > 0, line)
    check("test_auth_signup_access_cookie_lifetime_is_15m_refresh_7d",
          attrs(ca).get("max-age") == "900" and attrs(cr).get("max-age") == str(7 * 86400), r.cookies)

    me = api("GET", "/auth/me", token=access)
    mb = me.body if isinstance(me.body, dict) else {}
    ws = mb.get("workspace") if isinstance(mb.get("workspace"), dict) else {}
    check("test_auth_me_answers_200_with_the_user", me.status == 200 and
          isinstance(mb.get("user"), dict) and mb["user"].get("id") == user.get("id"), me)
    check("test_auth_signup_creates_a_personal_workspace_owned_by_the_user",
          bool(re.match(UUID_RE, ws.get("id") or "")) and ws.get("kind") == "personal"
          and ws.get("role") == "owner", mb)
    wss = mb.get("workspaces")
    check("test_auth_me_lists_exactly_the_personal_workspace",
          isinstance(wss, list) and len(wss) == 1 and isinstance(wss[0], dict) and wss[0].get("id") == ws.get("id"),
          mb)
    check("test_auth_me_carries_feature_flags", isinstance(mb.get("features"), dict), mb)
    if isinstance(b.get("workspace"), dict):
        check("test_auth_signup_workspace_is_the_me_workspace", b["workspace"].get("id") == ws.get("id"), b)
    return email, password, access, refresh


def test_signup_validation():
    # password: 7 characters refused, 8 accepted; the failed attempt leaves no account.
    email = random_email("auth-pw")
    r = signup_raw(email, "1234567")
    check("test_auth_signup_password_of_7_chars_is_400_password",
          is_error(r, 400, "validation_failed", "password"), r)
    check("test_auth_signup_refused_password_leaves_no_account", not can_login(email, "1234567"))
    r = signup_raw(email, "12345678")
    check("test_auth_signup_password_of_8_chars_is_accepted", r.status == 201, r)
    # Characters, not bytes: seven two-byte characters are still seven.
    r = signup_raw(random_email("auth-pw"), "\u00e9" * 7)
    check("test_auth_signup_password_counts_characters_not_bytes",
          is_error(r, 400, "validation_failed", "password"), r)
    r = api("POST", "/auth/signup", {"email": random_email("auth")})
    check("test_auth_signup_missing_password_is_400_password", is_error(r, 400, "validation_failed", "password"), r)
    r = signup_raw(random_email("auth-pw"), "p" * 1025)
    check("test_auth_signup_password_over_1024_chars_is_400_password",
          is_error(r, 400, "validation_failed", "password"), r)
    r = signup_raw(random_email("auth-pw"), "p" * 1024)
    check("test_auth_signup_password_of_1024_chars_is_accepted", r.status == 201, r)
    r = api("POST", "/auth/signup", {"email": random_email("auth"), "password": 12345678})
    check("test_auth_signup_password_not_a_string_is_400_password",
          is_error(r, 400, "validation_failed", "password"), r)

    r = api("POST", "/auth/signup", {"password": "long-enough-pw"})
    check("test_auth_signup_missing_email_is_400_email", is_error(r, 400, "validation_failed", "email"), r)
    for bad in ("not-an-email", "a@b", "@example.test", "user@", "us er@example.test", "a@@example.test",
                "user@.example.test", "user@example.test."):
        r = signup_raw(bad, "long-enough-pw")
        check("test_auth_signup_bad_email_%r_is_400_email" % bad, is_error(r, 400, "validation_failed", "email"), r)
    r = api("POST", "/auth/signup", {"email": 42, "password": "long-enough-pw"})
    check("test_auth_signup_email_not_a_string_is_400_email", is_error(r, 400, "validation_failed", "email"), r)
    r = api("POST", "/auth/signup", {"email": ["a@example.test"], "password": "long-enough-pw"})
    check("test_auth_signup_email_array_is_400_email", is_error(r, 400, "validation_failed", "email"), r)
    r = api("POST", "/auth/signup", {"email": None, "password": "long-enough-pw"})
    check("test_auth_signup_email_null_is_400_email", is_error(r, 400, "validation_failed", "email"), r)

    email = random_email("auth-dn")
    r = signup_raw(email, "long-enough-pw", display=123)
    check("test_auth_signup_displayname_number_is_400_displayname",
          is_error(r, 400, "validation_failed", "displayName"), r)
    r = signup_raw(email, "long-enough-pw", display={"a": 1})
    check("test_auth_signup_displayname_object_is_400_displayname",
          is_error(r, 400, "validation_failed", "displayName"), r)
    check("test_auth_signup_refused_displayname_leaves_no_account", not can_login(email, "long-enough-pw"))
    r = signup_raw(random_email("auth-dn"), "long-enough-pw", display=None)
    check("test_auth_signup_without_displayname_is_accepted", r.status == 201, r)


def test_signup_duplicate():
    email = random_email("auth-dup")
    r = signup_raw(email, "first-password")
    check("test_auth_signup_first_of_duplicate_pair_is_201", r.status == 201, r)
    r = signup_raw(email, "second-password")
    check("test_auth_signup_duplicate_email_is_409_conflict", is_error(r, 409, "conflict"), r)
    r = signup_raw(email.upper(), "third-password")
    check("test_auth_signup_duplicate_email_other_case_is_409_conflict", is_error(r, 409, "conflict"), r)
    check("test_auth_signup_duplicate_does_not_change_the_password",
          can_login(email, "first-password") and not can_login(email, "second-password")
          and not can_login(email, "third-password"))
    check("test_auth_login_email_is_case_insensitive", can_login(email.upper(), "first-password"))


def test_signup_concurrent_duplicates():
    email = random_email("auth-race")
    res = at_once([lambda i=i: signup_raw(email, "password-%d" % i) for i in range(5)])
    statuses = sorted(r.status for r in res)
    check("test_auth_five_concurrent_signups_one_email_one_201_four_409", statuses == [201, 409, 409, 409, 409],
          [repr(r) for r in res])
    check("test_auth_concurrent_signup_losers_get_conflict",
          all(is_error(r, 409, "conflict") for r in res if r.status != 201), [repr(r) for r in res])


def test_signup_malformed():
    email = random_email("auth-bad")
    body = '{"email": "%s", "password": "long-enough-pw"' % email  # no closing brace
    r = api("POST", "/auth/signup", raw=body)
    check("test_auth_signup_malformed_json_is_400_invalid_json", is_error(r, 400, "invalid_json"), r)
    for name, raw in (("array", '["a"]'), ("string", '"x"'), ("trailing_garbage", '{"email": "x"} x'),
                      ("single_quotes", "{'email': 'x@example.test'}"), ("empty", "")):
        r = api("POST", "/auth/signup", raw=raw)
        check("test_auth_signup_body_%s_is_400_invalid_json" % name, is_error(r, 400, "invalid_json"), r)
    r = api("POST", "/auth/signup", raw=json.dumps({"email": email, "password": "long-enough-pw"}),
            headers={"Content-Type": "text/plain"})
    check("test_auth_signup_text_plain_is_415", is_error(r, 415, "unsupported_media_type"), r)
    r = api("POST", "/auth/signup", raw=json.dumps({"email": email, "password": "long-enough-pw"}),
            headers={"Content-Type": "application/x-www-form-urlencoded"})
    check("test_auth_signup_form_encoded_is_415", is_error(r, 415, "unsupported_media_type"), r)
    r = api("POST", "/auth/signup", raw=json.dumps({"email": email, "password": "long-enough-pw"}),
            headers={"Content-Type": "application/json; charset=utf-8"})
    check("test_auth_signup_json_with_charset_is_accepted", r.status == 201, r)

    email2 = random_email("auth-big")
    big = json.dumps({"email": email2, "password": "long-enough-pw", "displayName": "x" * (65 * 1024)})
    r = api("POST", "/auth/signup", raw=big)
    check("test_auth_signup_body_over_64k_is_413", is_error(r, 413, "payload_too_large"), r)
    check("test_auth_signup_refused_big_body_leaves_no_account", not can_login(email2, "long-enough-pw"))
    r = api("POST", "/auth/login", raw=json.dumps({"email": email2, "password": "x" * (65 * 1024)}))
    check("test_auth_login_body_over_64k_is_413", is_error(r, 413, "payload_too_large"), r)


def test_login(email, password):
    r = api("POST", "/auth/login", {"email": email, "password": password})
    b = r.body if isinstance(r.body, dict) else {}
    check("test_auth_login_answers_200_with_access_token",
          r.status == 200 and isinstance(b.get("accessToken"), str) and b["accessToken"].count(".") == 2, r)
    check("test_auth_login_sets_both_cookies",
          bool(cookie(r, "svc_access_token")) and bool(cookie(r, "svc_refresh_token")), r.cookies)
    if b.get("accessToken"):
        me = api("GET", "/auth/me", token=b["accessToken"])
        check("test_auth_login_token_works_for_me",
              me.status == 200 and isinstance(me.body, dict) and me.body.get("user", {}).get("email") == email, me)
    r = api("POST", "/auth/login", {"email": email, "password": password + "x"})
    check("test_auth_login_wrong_password_is_401", is_error(r, 401, "unauthorized"), r)
    check("test_auth_login_failure_sets_no_cookie", not r.cookies, r.cookies)
    r2 = api("POST", "/auth/login", {"email": random_email("nobody"), "password": password})
    check("test_auth_login_unknown_email_is_401", is_error(r2, 401, "unauthorized"), r2)
    check("test_auth_login_unknown_email_and_wrong_password_say_the_same",
          isinstance(r.body, dict) and isinstance(r2.body, dict) and r.body == r2.body, (r, r2))
    r = api("POST", "/auth/login", {"email": email})
    check("test_auth_login_missing_password_is_400_password", is_error(r, 400, "validation_failed", "password"), r)
    r = api("POST", "/auth/login", {"email": email, "password": ""})
    check("test_auth_login_empty_password_is_400_password", is_error(r, 400, "validation_failed", "password"), r)
    r = api("POST", "/auth/login", raw="{")
    check("test_auth_login_malformed_json_is_400_invalid_json", is_error(r, 400, "invalid_json"), r)
    r = api("POST", "/auth/login", raw="{}", headers={"Content-Type": "text/plain"})
    check("test_auth_login_text_plain_is_415", is_error(r, 415, "unsupported_media_type"), r)
    r = api("GET", "/auth/login")
    check("test_auth_login_get_is_405_with_allow_post",
          is_error(r, 405, "method_not_allowed") and "POST" in r.headers.get("allow", ""), r)


def test_refresh_and_logout(access, refresh):
    r = api("POST", "/auth/refresh", headers={"Origin": APP_URL, "Cookie": "svc_refresh_token=" + refresh})
    b = r.body if isinstance(r.body, dict) else {}
    new_access = b.get("accessToken")
    check("test_auth_refresh_with_cookie_returns_a_new_access_token",
          r.status == 200 and isinstance(new_access, str) and new_access.count(".") == 2 and new_access != access, r)
    check("test_auth_refresh_sets_a_new_access_cookie", cookie_value(cookie(r, "svc_access_token")) == new_access,
          r.cookies)
    if new_access:
        me = api("GET", "/auth/me", token=new_access)
        check("test_auth_refreshed_access_token_works", me.status == 200, me)
    r = api("POST", "/auth/refresh", {"refreshToken": refresh})
    check("test_auth_refresh_with_body_token_works", r.status == 200 and isinstance(r.body, dict)
          and isinstance(r.body.get("accessToken"), str), r)

    r = api("POST", "/auth/refresh")
    check("test_auth_refresh_without_token_is_401", is_error(r, 401, "unauthorized"), r)
    r = api("POST", "/auth/refresh", headers={"Origin": APP_URL, "Cookie": "svc_refresh_token=" + access})
    check("test_auth_refresh_with_access_token_cookie_is_401", is_error(r, 401, "unauthorized"), r)
    r = api("POST", "/auth/refresh", {"refreshToken": access})
    check("test_auth_refresh_with_access_token_in_body_is_401", is_error(r, 401, "unauthorized"), r)
    r = api("POST", "/auth/refresh", token=access)
    check("test_auth_refresh_with_access_token_as_bearer_is_401", is_error(r, 401, "unauthorized"), r)
    r = api("POST", "/auth/refresh", headers={"Origin": APP_URL, "Cookie": "svc_refresh_token=" + refresh[:-3] + "AAA"})
    check("test_auth_refresh_with_forged_refresh_token_is_401", is_error(r, 401, "unauthorized"), r)
    r = api("POST", "/auth/refresh", raw="{not json", headers={"Origin": APP_URL, "Cookie": "svc_refresh_token=" + refresh})
    check("test_auth_refresh_malformed_body_is_400_invalid_json", is_error(r, 400, "invalid_json"), r)

    me = api("GET", "/auth/me", token=refresh)
    check("test_auth_refresh_token_as_bearer_is_401", is_error(me, 401, "unauthorized"), me)
    me = api("GET", "/auth/me", headers={"Cookie": "svc_access_token=" + refresh})
    check("test_auth_refresh_token_as_access_cookie_is_401", is_error(me, 401, "unauthorized"), me)

    r = api("POST", "/auth/logout")
    ca, cr = cookie(r, "svc_access_token"), cookie(r, "svc_refresh_token")
    check("test_auth_logout_answers_200", r.status == 200, r)
    check("test_auth_logout_clears_both_cookies",
          cookie_value(ca) == "" and attrs(ca).get("max-age") == "0" and cookie_value(cr) == ""
          and attrs(cr).get("max-age") == "0", r.cookies)
    check("test_auth_logout_cookie_paths_match_the_login_cookies",
          attrs(ca).get("path") == "/" and attrs(cr).get("path") == "/api/auth", r.cookies)


def test_me_tokens(access):
    r = api("GET", "/auth/me")
    check("test_auth_me_without_token_is_401", is_error(r, 401, "unauthorized"), r)
    check("test_auth_me_401_says_www_authenticate_bearer",
          r.headers.get("www-authenticate", "").lower().startswith("bearer"), r.headers)
    r = api("GET", "/auth/me", headers={"Cookie": "svc_access_token=" + access})
    check("test_auth_me_with_cookie_works", r.status == 200 and isinstance(r.body, dict)
          and isinstance(r.body.get("user"), dict), r)
    r = api("GET", "/auth/me", headers={"Authorization": "bearer " + access})
    check("test_auth_me_bearer_scheme_is_case_insensitive", r.status == 200, r)
    r = api("GET", "/auth/me", headers={"Authorization": "Basic " + base64.b64encode(b"a:b").decode()})
    check("test_auth_me_basic_auth_is_401", is_error(r, 401, "unauthorized"), r)

    head, payload, sig = access.split(".")
    forged = {
        "signature_changed": "%s.%s.%s" % (head, payload, ("A" if sig[0] != "A" else "B") + sig[1:]),
        "signature_removed": "%s.%s." % (head, payload),
        "no_signature_part": "%s.%s" % (head, payload),
        "garbage": "not.a.token",
        "expired_looking_garbage": "eyJhbGciOiJIUzI1NiJ9.eyJleHAiOjF9.c2lnbmF0dXJl",
        "empty_bearer": "",
    }
    claims = json.loads(b64url_decode(payload))
    # alg none with the very claims of a valid token.
    forged["alg_none"] = "%s.%s." % (b64url(json.dumps({"alg": "none", "typ": "JWT"}).encode()), payload)
    forged["alg_None_mixed_case"] = "%s.%s." % (b64url(json.dumps({"alg": "None", "typ": "JWT"}).encode()), payload)
    # HS512 and "hs256" headers with a signature made with some other key.
    for alg, fn, name in (("HS512", hashlib.sha512, "alg_hs512"), ("hs256", hashlib.sha256, "alg_lowercase_hs256")):
        h = b64url(json.dumps({"alg": alg, "typ": "JWT"}).encode())
        s = b64url(hmac.new(b"guessed-secret", ("%s.%s" % (h, payload)).encode(), fn).digest())
        forged[name] = "%s.%s.%s" % (h, payload, s)
    # Claims changed (another subject, a later expiry) under the original signature.
    c2 = dict(claims)
    c2["sub"] = "00000000-0000-4000-8000-000000000000"
    forged["payload_changed_sub"] = "%s.%s.%s" % (head, b64url(json.dumps(c2).encode()), sig)
    c3 = dict(claims)
    c3["exp"] = int(claims.get("exp", 0)) + 10 ** 6
    forged["payload_changed_exp"] = "%s.%s.%s" % (head, b64url(json.dumps(c3).encode()), sig)
    # Properly signed with the wrong secret, and with claims of an expired token.
    h = b64url(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    c4 = dict(claims)
    c4["exp"] = 1
    c4["iat"] = 0
    p4 = b64url(json.dumps(c4).encode())
    forged["expired_signed_with_wrong_key"] = "%s.%s.%s" % (
        h, p4, b64url(hmac.new(b"wrong", ("%s.%s" % (h, p4)).encode(), hashlib.sha256).digest()))
    for name, tok in sorted(forged.items()):
        r = api("GET", "/auth/me", headers={"Authorization": "Bearer " + tok})
        check("test_auth_me_forged_token_%s_is_401" % name, is_error(r, 401, "unauthorized"), r)
        r = api("GET", "/auth/me", headers={"Cookie": "svc_access_token=" + tok})
        check("test_auth_me_forged_cookie_%s_is_401" % name, is_error(r, 401, "unauthorized"), r)
    # A forged Bearer header is refused even when a valid cookie comes with it: the header wins.
    r = api("GET", "/auth/me", headers={"Authorization": "Bearer " + forged["alg_none"],
                                        "Cookie": "svc_access_token=" + access})
    check("test_auth_me_forged_bearer_is_not_rescued_by_a_cookie", is_error(r, 401, "unauthorized"), r)


def main():
    try:
        email, password, access, refresh = test_signup_happy()
    except Exception as e:  # a crash is a failure, reported
        check("test_auth_signup_happy_path_ran", False, repr(e))
        skip_rest("sign-up failed", ["test_auth_rest"])
        return
    test_signup_validation()
    test_signup_duplicate()
    test_signup_concurrent_duplicates()
    test_signup_malformed()
    test_login(email, password)
    if access and refresh:
        test_refresh_and_logout(access, refresh)
        test_me_tokens(access)
    else:
        skip_rest("no tokens from sign-up", ["test_auth_refresh", "test_auth_me_tokens"])
    # svclib's signup still works after all of this (nothing left locked or broken).
    try:
        signup(tag="auth-after")
        check("test_auth_signup_still_works_after_the_error_cases", True)
    except AssertionError as e:
        check("test_auth_signup_still_works_after_the_error_cases", False, e)


if __name__ == "__main__":
    try:
        main()
    except Exception as e:
        check("test_auth ran to the end", False, repr(e))
    sys.exit(finish())
