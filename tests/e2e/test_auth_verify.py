#!/usr/bin/env python3
# test_auth_verify.py: sign-up verified by e-mail (findings 13 and 6 of issue 17): the same 202 for known and unknown addresses, the link, single use, expiry, pre-account takeover, OAuth linking
"""
The no-provider front end of the test stack keeps SVC_SIGNUP_VERIFY at its default (auto: on, since
SVC_SMTP_URL points at tests/fixtures/smtp_double.py); the main front end has it off, so its sign-ups
are 201 as before. Both share one database, and svc-worker (which mails the links) reads the main
front's settings, so a link points at the main app_url.
"""
import hashlib
import os
import re
import secrets
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_auth_reset import SMTP_URL, wait_message  # noqa: E402
from test_auth_oauth import DOUBLE, Flow, cookie_pairs, double, lands, me_of  # noqa: E402
from svclib import (APP_URL, NOPROVIDER_BASE_URL, api, check, finish, is_error, random_email,  # noqa: E402
                    signup, sql)

VBASE = NOPROVIDER_BASE_URL
MAIL_WAIT = 120  # generous: svc-worker's quick lane sends within seconds (test_worker_lanes.py), a loaded CI machine


def su(email, password="pw-" + secrets.token_hex(8), name="Verified", headers=None):
    return api("POST", "/auth/signup", {"email": email, "password": password, "displayName": name}, base=VBASE,
               headers=headers)


def verify(token, base=None, headers=None):
    return api("POST", "/auth/verify-email", {"token": token}, base=base or VBASE, headers=headers)


def wait_mail(to, count=1):
    """The count-th message to `to` (waiting for it), or None."""
    return wait_message(to, MAIL_WAIT, count)


def google_signin(email, name=None):
    """Signs in through the Google double as a new identity whose verified address is `email`; the callback."""
    key = "vg-" + secrets.token_hex(4)
    prof = {"sub": "g-" + secrets.token_hex(6), "email": email, "email_verified": True}
    if name:
        prof["name"] = name
    double("POST", "/_profiles", {key: prof})
    return Flow("google", key).finish()


def link_token(msg):
    m = re.search(r"/verify\?token=([0-9a-f]+)", (msg or {}).get("data", ""))
    return m.group(1) if m else None


def sha(tok):
    return hashlib.sha256(tok.encode()).hexdigest()


def user_count(email):
    return sql("SELECT COUNT(*) FROM users WHERE email = '%s'" % email).strip()


def pending_count(email):
    return sql("SELECT COUNT(*) FROM signup_pending WHERE email = '%s'" % email).strip()


def test_same_answer():
    known = signup(tag="vknown")  # main front: verification off, 201
    new = random_email("vnew")
    r1 = su(known.email, password="attacker-pw-1")
    r2 = su(new)
    check("test_auth_verify_signup_known_address_is_202", r1.status == 202, r1)
    check("test_auth_verify_signup_new_address_is_202", r2.status == 202, r2)
    check("test_auth_verify_signup_answer_is_verification_sent",
          isinstance(r2.body, dict) and r2.body.get("status") == "verification_sent" and r2.body.get("message"), r2)
    check("test_auth_verify_signup_same_body_known_and_new", r1.raw == r2.raw, (r1.raw, r2.raw))
    check("test_auth_verify_signup_sets_no_cookie", not r1.cookies and not r2.cookies, (r1.cookies, r2.cookies))
    check("test_auth_verify_signup_creates_no_account_before_the_link", user_count(new) == "0", user_count(new))
    m1 = wait_mail(known.email)
    check("test_auth_verify_known_address_gets_someone_tried_message",
          m1 is not None and "Subject: Someone tried to sign up with your address" in m1.get("data", "")
          and link_token(m1) is None, m1)
    check("test_auth_verify_known_address_pending_row_dropped", pending_count(known.email) == "0",
          pending_count(known.email))
    r = api("POST", "/auth/login", {"email": known.email, "password": known.password})
    check("test_auth_verify_known_account_keeps_its_password", r.status == 200, r)
    r = api("POST", "/auth/login", {"email": known.email, "password": "attacker-pw-1"})
    check("test_auth_verify_known_account_not_given_the_new_password", is_error(r, 401, "unauthorized"), r)
    return new


def test_link(email):
    msg = wait_mail(email)
    data = (msg or {}).get("data", "")
    check("test_auth_verify_new_address_gets_the_link",
          msg is not None and "Subject: Confirm your svc account" in data and msg.get("from") == "svc@localhost", msg)
    tok = link_token(msg)
    check("test_auth_verify_link_is_app_url_verify_with_64_hex_token",
          tok is not None and len(tok) == 64 and (APP_URL + "/verify?token=" + tok) in data, data)
    if not tok:
        return
    rows = sql("SELECT token_hash, password_hash FROM signup_pending WHERE email = '%s'" % email)
    check("test_auth_verify_token_stored_only_as_sha256", sha(tok) in rows and tok not in rows, rows)
    check("test_auth_verify_pending_password_is_argon2id", "$argon2id$" in rows, rows)
    r = api("POST", "/auth/login", {"email": email, "password": "whatever-pw"}, base=VBASE)
    check("test_auth_verify_pending_sign_up_cannot_log_in", is_error(r, 401, "unauthorized"), r)
    # refused tokens change nothing
    for name, t in (("unknown", secrets.token_hex(32)), ("malformed", "not-a-token"), ("uppercase", tok.upper()),
                    ("short", tok[:63])):
        r = verify(t)
        check("test_auth_verify_%s_token_is_400_invalid_token" % name, is_error(r, 400, "invalid_token"), r)
    r = api("POST", "/auth/verify-email", {}, base=VBASE)
    check("test_auth_verify_missing_token_is_400_token", is_error(r, 400, "validation_failed", "token"), r)
    r = api("POST", "/auth/verify-email", {"token": 5}, base=VBASE)
    check("test_auth_verify_token_not_a_string_is_400_token", is_error(r, 400, "validation_failed", "token"), r)
    r = api("POST", "/auth/verify-email", raw=b"{", headers={"Content-Type": "application/json"}, base=VBASE)
    check("test_auth_verify_bad_json_is_400_invalid_json", is_error(r, 400, "invalid_json"), r)
    r = api("POST", "/auth/verify-email", raw=b"token", headers={"Content-Type": "text/plain"}, base=VBASE)
    check("test_auth_verify_wrong_content_type_is_415", r.status == 415, r)
    check("test_auth_verify_refused_tokens_create_nothing", user_count(email) == "0", user_count(email))
    # the link
    r = verify(tok)
    b = r.body if isinstance(r.body, dict) else {}
    cp = cookie_pairs(r)
    check("test_auth_verify_link_is_200_with_user_workspace_tokens",
          r.status == 200 and b.get("user", {}).get("email") == email and b.get("user", {}).get("displayName") == "Verified"
          and b.get("workspace", {}).get("kind") == "personal" and b.get("accessToken") and b.get("refreshToken"), r)
    check("test_auth_verify_link_sets_both_cookies", bool(cp.get("svc_access_token")) and bool(cp.get("svc_refresh_token")),
          r.cookies)
    me = api("GET", "/auth/me", token=b.get("accessToken"))
    check("test_auth_verify_link_signs_in", me.status == 200 and me.body.get("user", {}).get("email") == email, me)
    uid = b.get("user", {}).get("id", "")
    check("test_auth_verify_sets_email_verified_at",
          sql("SELECT email_verified_at IS NOT NULL FROM users WHERE id = '%s'" % uid).strip() == "1", uid)
    check("test_auth_verify_pending_rows_gone", pending_count(email) == "0", pending_count(email))
    r = verify(tok)
    check("test_auth_verify_used_token_is_400_invalid_token", is_error(r, 400, "invalid_token"), r)
    check("test_auth_verify_used_token_makes_no_second_account", user_count(email) == "1", user_count(email))
    # once the account exists, a new sign-up is answered the same and only tells the owner
    r = su(email)
    check("test_auth_verify_signup_of_verified_address_is_202_again", r.status == 202, r)
    return email, uid


def test_expired():
    email = random_email("vexp")
    su(email)
    tok = link_token(wait_mail(email))
    check("test_auth_verify_expiry_token_arrives", tok is not None)
    if not tok:
        return
    life = sql("SELECT TIMESTAMPDIFF(SECOND, created_at, expires_at) FROM signup_pending WHERE token_hash = '%s'"
               % sha(tok)).strip()
    check("test_auth_verify_link_lifetime_is_24h_by_default", life == "86400", life)
    sql("UPDATE signup_pending SET expires_at = UTC_TIMESTAMP(3) - INTERVAL 1 SECOND WHERE token_hash = '%s'" % sha(tok))
    r = verify(tok)
    check("test_auth_verify_expired_token_is_400_invalid_token", is_error(r, 400, "invalid_token"), r)
    check("test_auth_verify_expired_token_creates_nothing", user_count(email) == "0", user_count(email))


def test_takeover():
    # a stranger signs up first with the owner's address: it blocks nothing, and the owner's own link wins
    email = random_email("vown")
    su(email, password="stranger-pw-1")
    su(email, password="owner-pw-12345")
    m1, m2 = wait_mail(email, 1), wait_mail(email, 2)
    t1, t2 = link_token(m1), link_token(m2)
    check("test_auth_verify_two_pending_sign_ups_two_links", t1 and t2 and t1 != t2, (m1, m2))
    if t1 and t2:
        r = verify(t2)
        check("test_auth_verify_owner_link_creates_the_account", r.status == 200, r)
        r = verify(t1)
        check("test_auth_verify_strangers_link_is_gone_after_owner_verified", is_error(r, 400, "invalid_token"), r)
        r = api("POST", "/auth/login", {"email": email, "password": "owner-pw-12345"})
        check("test_auth_verify_owner_password_logs_in", r.status == 200, r)
        r = api("POST", "/auth/login", {"email": email, "password": "stranger-pw-1"})
        check("test_auth_verify_stranger_password_does_not", is_error(r, 401, "unauthorized"), r)
    # a pending sign-up does not stop the owner signing in with a provider; its link then finds the address taken
    email = random_email("voauth")
    su(email, password="stranger-pw-2")
    tok = link_token(wait_mail(email))
    r = google_signin(email, "Owner")
    me = me_of(r)
    check("test_auth_verify_pending_sign_up_does_not_block_oauth_sign_up",
          lands(r, "/dashboard") and me is not None and me.body.get("user", {}).get("email") == email, (r, me))
    if tok:
        r = verify(tok)
        check("test_auth_verify_link_after_the_address_got_an_account_is_409",
              is_error(r, 409, "conflict", "token") and not r.cookies, r)
        check("test_auth_verify_409_creates_nothing_and_drops_the_pending_rows",
              user_count(email) == "1" and pending_count(email) == "0", (user_count(email), pending_count(email)))


def test_oauth_links_verified(email, uid):
    # the address was shown to be the owner's by the link: a provider with that verified address links to it
    r = google_signin(email, "Linked")
    me = me_of(r)
    check("test_auth_verify_oauth_links_to_the_verified_account",
          lands(r, "/dashboard") and me is not None and me.body.get("user", {}).get("id") == uid, (r, me))
    # an account made with verification off is still not linked (tests/e2e/test_auth_oauth.py has more)
    a = signup(tag="vunver")
    r = google_signin(a.email)
    check("test_auth_verify_unverified_account_still_not_linked", lands(r, "/login", "account_not_verified"), r)


def test_timing_and_limits():
    known = signup(tag="vtk")
    for name, body in (("missing", {"password": "long-enough-pw"}), ("malformed", {"email": "x", "password": "long-enough-pw"})):
        r = api("POST", "/auth/signup", body, base=VBASE)
        check("test_auth_verify_signup_email_%s_is_400_email" % name, is_error(r, 400, "validation_failed", "email"), r)
    r = api("POST", "/auth/signup", {"email": random_email("vpw"), "password": "short"}, base=VBASE)
    check("test_auth_verify_signup_short_password_is_400_password", is_error(r, 400, "validation_failed", "password"), r)
    ks, us = [], []
    for i in range(8):
        pairs = ((ks, known.email), (us, random_email("vtu")))
        for lst, email in (pairs if i % 2 == 0 else pairs[::-1]):
            t0 = time.monotonic()
            r = su(email)
            lst.append(time.monotonic() - t0)
            if r.status != 202:
                check("test_auth_verify_timing_requests_answered", False, r)
                return
    mk, mu = statistics.median(ks), statistics.median(us)
    check("test_auth_verify_known_and_new_take_the_same_time", abs(mk - mu) < max(0.05, 0.25 * min(mk, mu)),
          "median known %.1f ms, new %.1f ms" % (mk * 1000, mu * 1000))
    # rate limits, from addresses that are not exempt (X-Forwarded-For from loopback is believed)
    email = random_email("vrl")
    rs = [su(email, headers={"X-Forwarded-For": "2001:db8:%x::1" % secrets.randbits(16)}) for _ in range(6)]
    check("test_auth_verify_signup_5_messages_per_hour_per_address",
          all(r.status == 202 for r in rs[:5]) and is_error(rs[5], 429, "rate_limited") and rs[5].headers.get("retry-after"),
          [r.status for r in rs])
    addr = "2001:db8:%x::2" % secrets.randbits(16)
    rs = [verify(secrets.token_hex(32), headers={"X-Forwarded-For": addr}) for _ in range(11)]
    check("test_auth_verify_verify_email_10_per_15m_per_address",
          all(is_error(r, 400, "invalid_token") for r in rs[:10]) and is_error(rs[10], 429, "rate_limited"),
          [r.status for r in rs])


def main():
    if not SMTP_URL or not VBASE or not DOUBLE:
        check("test_auth_verify_stack_configured", False, "SVC_SMTP_DOUBLE_URL, SVC_NOPROVIDER_BASE_URL, SVC_OAUTH_DOUBLE_URL")
        return
    new = test_same_answer()
    got = test_link(new)
    test_expired()
    test_takeover()
    if got:
        test_oauth_links_verified(*got)
    test_timing_and_limits()


if __name__ == "__main__":
    try:
        main()
    except Exception:
        import traceback
        check("test_auth_verify ran to the end", False, traceback.format_exc())
    sys.exit(finish())
