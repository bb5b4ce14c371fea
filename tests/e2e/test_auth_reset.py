#!/usr/bin/env python3
# test_auth_reset.py: forgot-password (always 202, same body, same timing) and reset-password (single use, expiry, hashes) with the SMTP double
import hashlib
import json
import os
import re
import secrets
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from svclib import APP_URL, api, check, finish, is_error, random_email, request, signup, sql  # noqa: E402

SMTP_URL = os.environ.get("SVC_SMTP_DOUBLE_URL", "").rstrip("/")


def messages():
    r = request("GET", SMTP_URL + "/_messages")
    return json.loads(r.raw) if r.status == 200 else []


def wait_message(to, timeout=30, count=None):
    """The newest captured message to `to` (with count, the count-th), waiting for it (svc-worker's quick lane
    sends after the answer, within a second or two; 30 s by default for a loaded CI machine:
    test_worker_lanes.py holds the mail to a tight bound)."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        mine = [m for m in messages() if to in m.get("to", [])]
        if len(mine) >= (count or 1):
            return mine[count - 1] if count else mine[-1]
        time.sleep(0.1)
    return None


def token_of(msg):
    m = re.search(r"/reset-password\?token=([0-9a-f]+)", (msg or {}).get("data", ""))
    return m.group(1) if m else None


def forgot(email):
    return api("POST", "/auth/forgot-password", {"email": email})


def test_forgot_and_reset():
    a = signup(tag="reset")
    r1 = forgot(a.email)
    r2 = forgot(random_email("nobody"))
    check("test_auth_forgot_known_address_is_202", r1.status == 202, r1)
    check("test_auth_forgot_unknown_address_is_202", r2.status == 202, r2)
    check("test_auth_forgot_same_body_for_known_and_unknown", r1.raw == r2.raw and r1.body == r2.body, (r1, r2))
    check("test_auth_forgot_sets_no_cookie", not r1.cookies and not r2.cookies, (r1.cookies, r2.cookies))
    msg = wait_message(a.email)
    check("test_auth_forgot_sends_a_message_through_smtp", msg is not None, messages()[-3:])
    data = (msg or {}).get("data", "")
    check("test_auth_forgot_message_headers",
          msg is not None and msg.get("from") == "svc@localhost" and "Subject: Reset your svc password" in data
          and "To: " + a.email in data and re.search(r"^Date: ", data, re.M) and "Message-ID: <" in data, data)
    tok = token_of(msg)
    check("test_auth_forgot_message_has_an_app_link_with_a_token",
          tok is not None and len(tok) == 64 and (APP_URL + "/reset-password?token=" + tok) in data, data)
    check("test_auth_forgot_unknown_address_gets_no_message",
          not [m for m in messages() if any("nobody-" in t for t in m.get("to", []))], messages()[-3:])
    if not tok:
        return
    # stored as a hash only
    rows = sql("SELECT token_hash FROM password_resets WHERE user_id = '%s'" % a.user["id"])
    check("test_auth_reset_token_is_stored_only_as_sha256",
          hashlib.sha256(tok.encode()).hexdigest() in rows and tok not in rows, rows)
    # validation before the token is spent
    r = api("POST", "/auth/reset-password", {"token": tok, "password": "short"})
    check("test_auth_reset_password_of_5_chars_is_400_password", is_error(r, 400, "validation_failed", "password"), r)
    r = api("POST", "/auth/reset-password", {"token": tok})
    check("test_auth_reset_missing_password_is_400_password", is_error(r, 400, "validation_failed", "password"), r)
    r = api("POST", "/auth/reset-password", {"password": "long-enough-pw"})
    check("test_auth_reset_missing_token_is_400_token", is_error(r, 400, "validation_failed", "token"), r)
    # a second request gives a second token; the reset uses one and the other stops working too
    forgot(a.email)
    msg2 = wait_message(a.email, count=2)
    tok2 = token_of(msg2)
    check("test_auth_forgot_twice_gives_two_tokens", tok2 is not None and tok2 != tok, msg2)
    new_pw = "new-" + secrets.token_hex(8)
    r = api("POST", "/auth/reset-password", {"token": tok, "password": new_pw})
    check("test_auth_reset_with_the_token_is_200", r.status == 200 and isinstance(r.body, dict) and r.body.get("ok") is True, r)
    r = api("POST", "/auth/login", {"email": a.email, "password": new_pw})
    check("test_auth_reset_new_password_logs_in", r.status == 200, r)
    r = api("POST", "/auth/login", {"email": a.email, "password": a.password})
    check("test_auth_reset_old_password_no_longer_works", is_error(r, 401, "unauthorized"), r)
    r = api("POST", "/auth/reset-password", {"token": tok, "password": "another-password"})
    check("test_auth_reset_used_token_is_400_invalid_token", is_error(r, 400, "invalid_token"), r)
    if tok2:
        r = api("POST", "/auth/reset-password", {"token": tok2, "password": "another-password"})
        check("test_auth_reset_other_outstanding_token_is_invalidated", is_error(r, 400, "invalid_token"), r)
    for name, t in (("unknown", secrets.token_hex(32)), ("malformed", "not-a-token"), ("uppercase", tok.upper())):
        r = api("POST", "/auth/reset-password", {"token": t, "password": "another-password"})
        check("test_auth_reset_%s_token_is_400_invalid_token" % name, is_error(r, 400, "invalid_token"), r)
    r = api("POST", "/auth/login", {"email": a.email, "password": "another-password"})
    check("test_auth_reset_refused_resets_changed_nothing", is_error(r, 401, "unauthorized"), r)

    # expiry: a token whose expiry has passed is refused
    forgot(a.email)
    tok3 = token_of(wait_message(a.email, count=3))
    check("test_auth_forgot_third_token_arrives", tok3 is not None)
    if tok3:
        exp = sql("SELECT TIMESTAMPDIFF(SECOND, created_at, expires_at) FROM password_resets WHERE token_hash = '%s'"
                  % hashlib.sha256(tok3.encode()).hexdigest()).strip()
        check("test_auth_reset_token_lifetime_is_1h_by_default", exp == "3600", exp)
        sql("UPDATE password_resets SET expires_at = UTC_TIMESTAMP(3) - INTERVAL 1 SECOND WHERE token_hash = '%s'"
            % hashlib.sha256(tok3.encode()).hexdigest())
        r = api("POST", "/auth/reset-password", {"token": tok3, "password": "another-password"})
        check("test_auth_reset_expired_token_is_400_invalid_token", is_error(r, 400, "invalid_token"), r)


def test_forgot_validation_and_timing():
    for name, body in (("missing", {}), ("not_string", {"email": 5}), ("malformed", {"email": "not-an-address"})):
        r = api("POST", "/auth/forgot-password", body)
        check("test_auth_forgot_email_%s_is_400_email" % name, is_error(r, 400, "validation_failed", "email"), r)
    # the same timing within noise: the message goes out after the answer
    a = signup(tag="reset-t")
    known, unknown = [], []
    for i in range(6):
        for lst, email in ((known, a.email), (unknown, random_email("nobody"))):
            t0 = time.monotonic()
            r = forgot(email)
            lst.append(time.monotonic() - t0)
            if r.status != 202:
                check("test_auth_forgot_timing_requests_answered", False, r)
                return
    mk, mu = statistics.median(known), statistics.median(unknown)
    check("test_auth_forgot_known_and_unknown_take_the_same_time_within_50ms", abs(mk - mu) < 0.05,
          "median known %.1f ms, unknown %.1f ms" % (mk * 1000, mu * 1000))


def main():
    if not SMTP_URL:
        check("test_auth_reset_smtp_double_configured", False, "SVC_SMTP_DOUBLE_URL is not set")
        return
    test_forgot_and_reset()
    test_forgot_validation_and_timing()


if __name__ == "__main__":
    try:
        main()
    except Exception:
        import traceback
        check("test_auth_reset ran to the end", False, traceback.format_exc())
    sys.exit(finish())
