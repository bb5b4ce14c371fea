#!/usr/bin/env python3
# test_auth_lockout.py: review finding 8 of issue 17: failed logins lock (account, address), IPv6 by its /64; past the
# per-account ceiling (SVC_RATE_LIMIT_LOGIN_ACCOUNT_MAX, 20 in 15 minutes) strangers are slowed (one try per 10 s,
# SVC_RATE_LIMIT_LOGIN_SLOW) while the owner's right password from an address they signed in from still works
import os
import secrets
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from svclib import check, finish, random_email, signup  # noqa: E402
from test_auth_ratelimit import burst, fresh_addr, is_429, login  # noqa: E402

CEILING = 20


def test_ipv6_counts_per_64():
    a = signup(tag="lock-v6")
    prefix = "2001:db8:%x:%x" % (secrets.randbits(16), secrets.randbits(16))
    rs = [login(a.email, "wrong-" + secrets.token_hex(4), "%s::%x" % (prefix, i + 1)) for i in range(5)]
    check("test_auth_lockout_five_failures_from_one_64_are_401", all(r.status == 401 for r in rs),
          [r.status for r in rs])
    r = login(a.email, a.password, "%s:1:2:3:4" % prefix)
    check("test_auth_lockout_another_address_of_the_same_64_is_429", is_429(r), r)
    r = login(a.email, a.password, "%s::ffff" % prefix)
    check("test_auth_lockout_same_64_with_the_right_password_is_429", is_429(r), r)
    other = "2001:db8:%x:%x::1" % (secrets.randbits(16), secrets.randbits(16))
    r = login(a.email, a.password, other)
    check("test_auth_lockout_another_64_is_not_locked", r.status == 200, r)
    # IPv4 counts per address: a neighbour is not locked
    b = signup(tag="lock-v4")
    base = "203.0.113.%d"
    n = secrets.randbelow(90) + 1  # (not .98 or .99: test_auth_log.py's injected addresses, checked in the shared log)
    rs = [login(b.email, "wrong-" + secrets.token_hex(4), base % n) for _ in range(5)]
    r = login(b.email, b.password, base % n)
    check("test_auth_lockout_ipv4_address_is_locked", [x.status for x in rs] == [401] * 5 and is_429(r),
          ([x.status for x in rs], r.status))
    r = login(b.email, b.password, base % (n + 1))
    check("test_auth_lockout_ipv4_neighbour_is_not_locked", r.status == 200, r)
    # IPv4-mapped IPv6 is the IPv4 address
    r = login(b.email, b.password, "::ffff:" + base % n)
    check("test_auth_lockout_ipv4_mapped_counts_as_ipv4", is_429(r), r)


def over_the_ceiling(email):
    """CEILING failures of `email`, each from an address of its own (no (account, address) lock)."""
    return [login(email, "wrong-" + secrets.token_hex(4), fresh_addr()).status for _ in range(CEILING)]


def test_ceiling_slows_strangers_not_the_owner():
    a = signup(tag="lock-ceil")
    home = fresh_addr()
    r = login(a.email, a.password, home)   # the owner signs in from home: a known address from now on
    check("test_auth_lockout_owner_signs_in_from_home", r.status == 200, r)
    statuses = over_the_ceiling(a.email)
    check("test_auth_lockout_failures_from_many_addresses_are_401", statuses == [401] * CEILING, statuses)
    r = login(a.email, a.password, home)
    check("test_auth_lockout_owner_from_a_known_address_is_never_locked", r.status == 200, r)
    r = login(a.email, a.password, home)
    check("test_auth_lockout_owner_from_a_known_address_is_not_slowed_either", r.status == 200, r)
    # strangers (and the owner on a new network) get one try per 10 s (a fixed window: inside one)
    first, second = burst(10, lambda: [login(a.email, "wrong-" + secrets.token_hex(4), fresh_addr()),
                                       login(a.email, a.password, fresh_addr())])
    # (when the pair crossed a window and burst() ran it again, the new window's one try is already used)
    check("test_auth_lockout_stranger_gets_a_slow_try", first.status in (401, 429), first)
    check("test_auth_lockout_stranger_is_then_slowed_429", is_429(second), second)
    check("test_auth_lockout_slowed_retry_after_is_short",
          1 <= int(second.headers.get("retry-after", "0") or 0) <= 10, second.headers)
    r = login(a.email, a.password, home)
    check("test_auth_lockout_owner_at_home_unaffected_by_the_slowing", r.status == 200, r)
    # an unknown e-mail address behaves the same (no account to be known from: the 429s tell nothing)
    ghost = random_email("lock-ghost")
    statuses = over_the_ceiling(ghost)
    first, second = burst(10, lambda: [login(ghost, "pw-xxxxxxxx", fresh_addr()),
                                       login(ghost, "pw-xxxxxxxx", fresh_addr())])
    check("test_auth_lockout_unknown_account_is_slowed_alike",
          statuses == [401] * CEILING and first.status in (401, 429) and is_429(second),
          (statuses, first.status, second.status))


def main():
    test_ipv6_counts_per_64()
    test_ceiling_slows_strangers_not_the_owner()


if __name__ == "__main__":
    try:
        main()
    except Exception:
        import traceback
        check("test_auth_lockout ran to the end", False, traceback.format_exc())
    sys.exit(finish())
