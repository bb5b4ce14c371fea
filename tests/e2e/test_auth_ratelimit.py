#!/usr/bin/env python3
# test_auth_ratelimit.py: 429 rate_limited with Retry-After: login per address and per account, sign-up, reset, refresh, the global limit
"""
The test stack exempts loopback (SVC_RATE_LIMIT_EXEMPT) so the rest of the suite is never
throttled, and believes X-Forwarded-For from loopback (SVC_TRUSTED_PROXIES): each check here
acts as its own client from a fresh address in 2001:db8::/32 (RFC 3849) or 198.51.100.0/24.
The limits are the defaults (10 logins a minute per address, 5 failures per account and address
in 15 minutes, ...; tests/e2e/test_auth_lockout.py has the rest of the account lockout) except SVC_RATE_LIMIT_GLOBAL, which the stack sets to 120/1m. Windows are fixed,
so a burst that crosses a window boundary is run again once.
"""
import os
import secrets
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from svclib import api, check, finish, random_email, signup  # noqa: E402


def fresh_addr():
    return "2001:db8:%x:%x::%x" % (secrets.randbits(16), secrets.randbits(16), secrets.randbits(16) or 1)


def is_429(r):
    b = r.body if isinstance(r.body, dict) else {}
    ra = r.headers.get("retry-after", "")
    return r.status == 429 and b.get("error") == "rate_limited" and ra.isdigit() and int(ra) >= 1


def burst(window, fn):
    """Runs fn() (a list of responses) inside one fixed window of `window` seconds; again once if it crossed one."""
    for _ in range(2):
        t0 = time.time()
        out = fn()
        if int(t0 // window) == int(time.time() // window):
            return out
    return out


def login(email, password, addr):
    return api("POST", "/auth/login", {"email": email, "password": password}, headers={"X-Forwarded-For": addr})


def test_login_per_address(a):
    def run():
        addr = fresh_addr()
        return [login(a.email, a.password, addr) for _ in range(11)], addr

    rs, addr = burst(60, run)
    check("test_auth_ratelimit_login_10_per_minute_per_address_pass", all(r.status == 200 for r in rs[:10]),
          [r.status for r in rs])
    check("test_auth_ratelimit_login_11th_from_one_address_is_429", is_429(rs[10]), rs[10])
    ra = int(rs[10].headers.get("retry-after", "0") or 0)
    check("test_auth_ratelimit_login_retry_after_within_the_window", 1 <= ra <= 60, rs[10].headers)
    check("test_auth_ratelimit_429_sets_no_cookie", not rs[10].cookies, rs[10].cookies)
    r = login(a.email, a.password, fresh_addr())
    check("test_auth_ratelimit_login_other_address_still_passes", r.status == 200, r)
    # X-Forwarded-For from a trusted proxy: the rightmost untrusted hop is the client
    r = login(a.email, a.password, addr + ", 127.0.0.1")
    check("test_auth_ratelimit_xff_trusted_hops_are_skipped", is_429(r), r)
    r = login(a.email, a.password, addr + ", " + fresh_addr())
    check("test_auth_ratelimit_xff_only_the_nearest_untrusted_hop_counts", r.status == 200, r)


def test_login_per_account():
    """Review finding 8 of issue 17: failures lock (account, address), never the account for everyone."""
    b = signup(tag="rl-acct")
    attacker = fresh_addr()
    rs = [login(b.email, "wrong-" + secrets.token_hex(4), attacker) for _ in range(5)]
    check("test_auth_ratelimit_five_failures_from_one_address_are_401", all(r.status == 401 for r in rs),
          [r.status for r in rs])
    r = login(b.email, b.password, attacker)
    check("test_auth_ratelimit_sixth_attempt_from_that_address_is_429_even_with_the_right_password", is_429(r), r)
    check("test_auth_ratelimit_account_lock_retry_after_up_to_15m",
          1 <= int(r.headers.get("retry-after", "0") or 0) <= 900, r.headers)
    r = login(b.email.upper(), b.password, attacker)
    check("test_auth_ratelimit_account_lock_ignores_case_of_the_email", is_429(r), r)
    r = login(b.email, b.password, fresh_addr())
    check("test_auth_ratelimit_the_owner_from_another_address_is_not_locked_out", r.status == 200, r)
    c = signup(tag="rl-acct2")
    r = login(c.email, c.password, attacker)
    check("test_auth_ratelimit_other_account_is_not_locked", r.status == 200, r)
    # loopback is exempt (SVC_RATE_LIMIT_EXEMPT): the locked account still signs in from there
    r = api("POST", "/auth/login", {"email": b.email, "password": b.password})
    check("test_auth_ratelimit_exempt_address_is_not_limited", r.status == 200, r)
    # the lock does not tell whether the account exists: an unknown address locks the same way
    ghost = random_email("rl-ghost")
    addr = fresh_addr()
    rs = [login(ghost, "pw-xxxxxxxx", addr) for _ in range(6)]
    check("test_auth_ratelimit_unknown_account_locks_alike", [r.status for r in rs] == [401] * 5 + [429],
          [r.status for r in rs])


def test_other_routes():
    def signups():
        addr = fresh_addr()
        return [api("POST", "/auth/signup", {"email": random_email("rl-su"), "password": "long-enough-pw"},
                    headers={"X-Forwarded-For": addr}) for _ in range(11)]

    rs = burst(3600, signups)
    check("test_auth_ratelimit_signup_10_per_hour_per_address", all(r.status == 201 for r in rs[:10]) and is_429(rs[10]),
          [r.status for r in rs])

    def forgots():
        addr = fresh_addr()
        return [api("POST", "/auth/forgot-password", {"email": random_email("rl-fp")},
                    headers={"X-Forwarded-For": addr}) for _ in range(6)]

    rs = burst(900, forgots)
    check("test_auth_ratelimit_forgot_password_5_per_15m_per_address",
          all(r.status == 202 for r in rs[:5]) and is_429(rs[5]), [r.status for r in rs])

    def forgots_one_email():
        email = random_email("rl-fp1")
        return [api("POST", "/auth/forgot-password", {"email": email}, headers={"X-Forwarded-For": fresh_addr()})
                for _ in range(4)]

    rs = burst(3600, forgots_one_email)
    check("test_auth_ratelimit_forgot_password_3_per_hour_per_email",
          all(r.status == 202 for r in rs[:3]) and is_429(rs[3]), [r.status for r in rs])

    def refreshes():
        addr = fresh_addr()
        return [api("POST", "/auth/refresh", {"refreshToken": "x.y.z"}, headers={"X-Forwarded-For": addr})
                for _ in range(61)]

    rs = burst(60, refreshes)
    check("test_auth_ratelimit_refresh_60_per_minute_per_address",
          all(r.status == 401 for r in rs[:60]) and is_429(rs[60]), [r.status for r in rs][-3:])


def test_global():
    def run():
        addr = fresh_addr()
        return [api("GET", "/projects", headers={"X-Forwarded-For": addr}) for _ in range(121)]

    rs = burst(60, run)
    check("test_auth_ratelimit_global_120_per_minute_pass_then_429",
          all(r.status == 401 for r in rs[:120]) and is_429(rs[120]), [r.status for r in rs][-3:])
    r = api("GET", "/projects")
    check("test_auth_ratelimit_global_exempt_loopback_unaffected", r.status == 401, r)


def main():
    a = signup(tag="rl")
    test_login_per_address(a)
    test_login_per_account()
    test_other_routes()
    test_global()


if __name__ == "__main__":
    try:
        main()
    except Exception:
        import traceback
        check("test_auth_ratelimit ran to the end", False, traceback.format_exc())
    sys.exit(finish())
