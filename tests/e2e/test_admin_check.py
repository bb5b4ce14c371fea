#!/usr/bin/env python3
# test_admin_check.py: svc-admin check (settings, database, warnings) and the responders' start-up warning when app_url and SVC_DOMAIN share a registrable domain (issue 17, finding 5: cookie tossing)
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from svclib import ADMIN_TOOL, TEST_CONFIG, check, finish  # noqa: E402

BUILD = os.path.dirname(os.path.dirname(ADMIN_TOOL)) if ADMIN_TOOL else ""


def env_with(**settings):
    """A clean environment: the stack's settings file, and `settings` over it (the environment wins)."""
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "ASAN_OPTIONS": "detect_leaks=0", "SVC_CONFIG": TEST_CONFIG}
    env.update(settings)
    return env


def admin_check(**settings):
    p = subprocess.run([ADMIN_TOOL, "check"], env=env_with(**settings), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, timeout=60)
    return p.returncode, p.stdout, p.stderr


def warnings_of(out):
    return [line for line in out.splitlines() if line.startswith("warning: ")]


def test_check():
    rc, out, err = admin_check()
    check("test_admin_check_test_stack_is_ok_with_no_warning",
          rc == 0 and "ok: settings load" in out and "ok: database answers" in out and out.rstrip().endswith("0 warnings")
          and not warnings_of(out), (rc, out, err))
    shared = (("https://svc.example.com", "sites.example.com", "example.com"),
              ("https://svc.example.com", "example.com", "example.com"),
              ("https://app.foo.co.uk", "sites.foo.co.uk", "foo.co.uk"))
    for app, dom, reg in shared:
        rc, out, err = admin_check(SVC_APP_URL=app, SVC_DOMAIN=dom)
        w = warnings_of(out)
        check("test_admin_check_warns_%s_and_%s_share_%s" % (app.split("//")[1], dom, reg),
              rc == 0 and len(w) == 1 and ("share the registrable domain %s:" % reg) in w[0] and "SVC_DOMAIN (%s)" % dom in w[0]
              and "cookie" in w[0] and out.rstrip().endswith("1 warning"), (rc, out, err))
    apart = (("https://svc.example.com", "sites.example.net"), ("https://app.foo.co.uk", "sites.bar.co.uk"),
             ("https://alice.github.io", "bob.github.io"), ("http://127.0.0.1:8080", "localhost"))
    for app, dom in apart:
        rc, out, err = admin_check(SVC_APP_URL=app, SVC_DOMAIN=dom)
        check("test_admin_check_no_warning_for_%s_and_%s" % (app.split("//")[1], dom),
              rc == 0 and not warnings_of(out) and out.rstrip().endswith("0 warnings"), (rc, out, err))
    # errors: settings that do not load, a database that does not answer
    rc, out, err = admin_check(SVC_SIGNUP_VERIFY="maybe")
    check("test_admin_check_bad_setting_is_an_error_exit_1",
          rc == 1 and "error: settings: SVC_SIGNUP_VERIFY must be auto, on or off" in out, (rc, out, err))
    # the settings table (lib/core/config_table.c): a lenient row's malformed value is a warning and its default
    rc, out, err = admin_check(SVC_BUILD_PROCS="lots")
    w = warnings_of(out)
    check("test_admin_check_lenient_setting_is_a_warning",
          rc == 0 and len(w) == 1 and "SVC_BUILD_PROCS=lots" in w[0] and "using 256" in w[0]
          and out.rstrip().endswith("1 warning"), (rc, out, err))
    p = subprocess.run([ADMIN_TOOL, "check", "--settings"], env=env_with(SVC_BUILD_PROCS="300"), stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, timeout=60)
    lines = p.stdout.splitlines()
    check("test_admin_check_settings_prints_every_setting_secrets_hidden",
          p.returncode == 0 and "JWT_SECRET=(set)  # " in p.stdout and "SVC_BUILD_PROCS=300  # " in p.stdout
          and any(line.startswith("SVC_BUILD_CPU_SECS=300 (default)") for line in lines)
          and not any(line.startswith("JWT_SECRET=") and "(set)" not in line for line in lines), p.stdout[-2000:])
    # builds are contained by cgroups (issue 27): the stack's host has them; without bubblewrap, or under a
    # cgroup parent svc may not use, svc refuses to build and check says why
    rc, out, err = admin_check()
    check("test_admin_check_builds_are_contained", rc == 0 and "ok: builds are contained" in out, (rc, out, err))
    rc, out, err = admin_check(SVC_BUILD_BWRAP="/nonexistent/bwrap")
    w = warnings_of(out)
    check("test_admin_check_warns_when_builds_cannot_be_contained",
          rc == 0 and len(w) == 1 and "svc refuses to build: no bubblewrap at /nonexistent/bwrap" in w[0], (rc, out, err))
    rc, out, err = admin_check(SVC_BUILD_CGROUP="relative/parent")
    w = warnings_of(out)
    check("test_admin_check_warns_when_no_cgroup_can_be_made",
          rc == 0 and len(w) == 1 and "svc refuses to build:" in w[0] and "cgroup" in w[0], (rc, out, err))
    rc, out, err = admin_check(SVC_DB_SOCKET="/nonexistent/mysqld.sock", SVC_DB_CONNECT_TIMEOUT="2")
    check("test_admin_check_database_down_is_an_error_exit_1", rc == 1 and "error: database" in out, (rc, out, err))
    p = subprocess.run([ADMIN_TOOL, "check", "extra"], env=env_with(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, timeout=60)
    check("test_admin_check_usage_lists_check", p.returncode == 2 and "svc-admin check" in p.stderr, p.stderr)
    check("test_admin_check_usage_lists_cgroup_prepare", "svc-admin cgroup-prepare USER" in p.stderr, p.stderr)


def cgroup_prepare(user, **settings):
    p = subprocess.run([ADMIN_TOOL, "cgroup-prepare", user], env=env_with(**settings), stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, timeout=60)
    return p.returncode, p.stdout, p.stderr


def test_cgroup_prepare():
    """svc-admin cgroup-prepare USER (docs/operations.md "cgroup v2 hosts"): only what changes nothing on the host
    (a successful run would hand a cgroup subtree of this machine away): an unknown user, a subtree that is no
    absolute path (refused, or on a host without a v2 hierarchy to prepare, that first)."""
    rc, out, err = cgroup_prepare("no-such-user-svc-e2e")
    check("test_admin_cgroup_prepare_unknown_user_2", rc == 2 and "no user no-such-user-svc-e2e" in err, (rc, out, err))
    rc, out, err = cgroup_prepare("nobody", SVC_BUILD_CGROUP="relative/parent")
    check("test_admin_cgroup_prepare_bad_subtree_refused", rc == 1 and "cgroup-prepare: " in err and (
        "absolute path" in err or "cgroup v2 is not mounted" in err or "does not offer the memory and pids" in err),
        (rc, out, err))


def responder_log(**settings):
    """What svc-auth.fcgi logs when it starts (stdin is no FastCGI socket, so it ends at once)."""
    p = subprocess.run([os.path.join(BUILD, "cgi-bin", "svc-auth.fcgi")], env=env_with(**settings), stdin=subprocess.DEVNULL,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=60)
    return p.stderr


def test_responder_log():
    log = responder_log(SVC_APP_URL="https://svc.example.com", SVC_DOMAIN="sites.example.com")
    lines = [line for line in log.splitlines() if "configuration: SVC_APP_URL" in line]
    check("test_admin_check_responder_logs_the_shared_domain_at_start",
          len(lines) == 1 and "warn" in lines[0] and "share the registrable domain example.com" in lines[0], log)
    log = responder_log(SVC_APP_URL="https://svc.example.com", SVC_DOMAIN="sites.example.net")
    check("test_admin_check_responder_quiet_when_apart", "registrable domain" not in log, log)


def main():
    if not ADMIN_TOOL or not TEST_CONFIG:
        check("test_admin_check needs SVC_ADMIN_TOOL and SVC_TEST_CONFIG (./svc-dev test)", False)
        return
    test_check()
    test_cgroup_prepare()
    test_responder_log()


if __name__ == "__main__":
    try:
        main()
    except Exception:
        import traceback
        check("test_admin_check ran to the end", False, traceback.format_exc())
    sys.exit(finish())
