#!/usr/bin/env python3
# test_auth_log.py: the auth log (SVC_AUTH_LOG) through fail2ban-regex with httpd-conf/fail2ban: every failure line matches, no success line does
import os
import re
import secrets
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from svclib import api, check, finish, random_email, signup  # noqa: E402

AUTH_LOG = os.environ.get("SVC_TEST_AUTH_LOG", "")
F2B_DIR = os.environ.get("SVC_TEST_FAIL2BAN_DIR", "")
FAILURES = {"login_failed", "refresh_failed", "token_rejected", "reset_failed", "rate_limited"}
LINE_RE = re.compile(r"^(\S+) (svc-[a-z-]+)\[(\d+)\]: auth: (\S+) remote=(\S+)(?: (.*))?$")


def make_events():
    """Failures and successes from known addresses, with hostile user names; returns {event: address}."""
    a = signup(tag="f2b")
    x = {}
    for ev in ("login_failed", "login_ok", "refresh_failed", "refresh_ok", "token_rejected", "reset_failed",
               "signup_ok", "injection"):
        x[ev] = "2001:db8:f2b:%x::%x" % (secrets.randbits(16), secrets.randbits(16) or 1)
    api("POST", "/auth/login", {"email": a.email, "password": "wrong"}, headers={"X-Forwarded-For": x["login_failed"]})
    api("POST", "/auth/login", {"email": a.email, "password": a.password}, headers={"X-Forwarded-For": x["login_ok"]})
    api("POST", "/auth/refresh", {"refreshToken": "a.b.c"}, headers={"X-Forwarded-For": x["refresh_failed"]})
    api("POST", "/auth/refresh", {"refreshToken": a.refresh}, headers={"X-Forwarded-For": x["refresh_ok"]})
    api("GET", "/projects", token="forged.token.here", headers={"X-Forwarded-For": x["token_rejected"]})
    api("POST", "/auth/reset-password", {"token": "0" * 64, "password": "long-enough-pw"},
        headers={"X-Forwarded-For": x["reset_failed"]})
    api("POST", "/auth/signup", {"email": random_email("f2b"), "password": "long-enough-pw"},
        headers={"X-Forwarded-For": x["signup_ok"]})
    # a user name that tries to name another address, with quotes, spaces and a newline
    evil = 'x" remote=203.0.113.99 user="y\nsvc-auth[1]: auth: login_failed remote=203.0.113.98'
    api("POST", "/auth/login", {"email": evil, "password": "p"}, headers={"X-Forwarded-For": x["injection"]})
    return x, a


def read_lines():
    with open(AUTH_LOG, encoding="utf-8", errors="replace") as f:
        return [line.rstrip("\n") for line in f if line.strip()]


def main():
    if not AUTH_LOG or not F2B_DIR:
        check("test_auth_log_configured", False, "SVC_TEST_AUTH_LOG / SVC_TEST_FAIL2BAN_DIR not set")
        return
    x, a = make_events()
    time.sleep(0.3)
    lines = read_lines()
    parsed = [(line, LINE_RE.match(line)) for line in lines]
    check("test_auth_log_every_line_has_the_fixed_form", all(m for _, m in parsed),
          [line for line, m in parsed if not m][:5])
    check("test_auth_log_lines_start_with_an_rfc3339_time",
          all(re.match(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$", m.group(1)) for _, m in parsed if m), lines[:3])
    by_addr = {}
    for line, m in parsed:
        if m:
            by_addr.setdefault(m.group(5), []).append(m.group(4))
    for ev in ("login_failed", "login_ok", "refresh_failed", "refresh_ok", "token_rejected", "reset_failed", "signup_ok"):
        check("test_auth_log_records_%s_with_the_forwarded_client_address" % ev, ev in by_addr.get(x[ev], []),
              (x[ev], by_addr.get(x[ev])))
    check("test_auth_log_never_holds_a_password_or_token",
          a.password not in "\n".join(lines) and a.token not in "\n".join(lines) and a.refresh not in "\n".join(lines))
    inj = [line for line, m in parsed if m and m.group(5) == x["injection"]]
    check("test_auth_log_hostile_user_name_stays_on_one_line_after_the_address",
          len(inj) == 1 and re.search(r' user="[^" ]*" reason=password$', inj[0]) is not None, inj)
    check("test_auth_log_no_line_names_the_injected_addresses",
          "203.0.113.99" not in by_addr and "203.0.113.98" not in by_addr, sorted(by_addr)[:10])

    filt = os.path.join(F2B_DIR, "filter.d", "svc-auth.conf")
    jail = os.path.join(F2B_DIR, "jail.d", "svc-auth.conf")
    check("test_auth_log_fail2ban_jail_names_the_filter",
          os.path.exists(jail) and re.search(r"^filter\s*=\s*svc-auth\s*$", open(jail).read(), re.M) is not None, jail)
    try:
        out = subprocess.run(["fail2ban-regex", "-o", "msg", AUTH_LOG, filt], capture_output=True, text=True,
                             timeout=120)
    except FileNotFoundError:
        check("test_auth_log_fail2ban_regex_installed", False, "fail2ban-regex not found (Debian package fail2ban)")
        return
    check("test_auth_log_fail2ban_regex_runs", out.returncode == 0, out.stderr[-2000:])
    # -o msg prints every matched line as it is in the log
    matched = set(row.strip() for row in out.stdout.splitlines() if row.strip())
    failures = [line for line, m in parsed if m and m.group(4) in FAILURES]
    successes = [line for line, m in parsed if m and m.group(4) not in FAILURES]
    check("test_auth_log_has_failure_and_success_lines", len(failures) >= 5 and len(successes) >= 3,
          (len(failures), len(successes)))
    missed = [f for f in failures if f not in matched]
    check("test_auth_log_fail2ban_matches_every_failure_line", not missed and len(failures) > 0, missed[:5])
    wrong = [s for s in successes if s in matched]
    check("test_auth_log_fail2ban_matches_no_success_line", not wrong, wrong[:5])
    # and the address it bans is the logged client, not the injected one
    out3 = subprocess.run(["fail2ban-regex", "-o", "ip", AUTH_LOG, filt], capture_output=True, text=True, timeout=120)
    ips = set(l.strip() for l in out3.stdout.splitlines() if l.strip())
    check("test_auth_log_fail2ban_bans_the_client_addresses",
          x["login_failed"] in ips and x["token_rejected"] in ips and x["injection"] in ips
          and "203.0.113.99" not in ips and "203.0.113.98" not in ips and x["login_ok"] not in ips,
          sorted(ips)[:20])


if __name__ == "__main__":
    try:
        main()
    except Exception:
        import traceback
        check("test_auth_log ran to the end", False, traceback.format_exc())
    sys.exit(finish())
