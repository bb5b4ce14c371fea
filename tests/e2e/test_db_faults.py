#!/usr/bin/env python3
# test_db_faults.py: a stalled or restarted MariaDB makes requests fail fast with 503, and the
# stack recovers by itself (issue 17, "Fail fast and recover"; docs/operations.md "Failure modes").
#
# It pauses the test stack's own MariaDB (SIGSTOP) and restarts it (SIGTERM, then the same
# command line again), so it must run alone: ./svc-dev test runs the e2e files one after another.
import os
import signal
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from svclib import (TEST_CONFIG, api, check, create_project, created_id, finish, is_error, items_of,  # noqa: E402
                    setting, signup, timeline, types_of)

DB_TIMEOUT = int(setting("SVC_DB_TIMEOUT") or 5)
DB_CONNECT_TIMEOUT = int(setting("SVC_DB_CONNECT_TIMEOUT") or 3)
# A request against a stalled server may wait for one read timeout, or for a connect timeout when
# its responder had no connection; the slack covers lighttpd, ASan and a loaded machine.
LIMIT = max(DB_TIMEOUT, DB_CONNECT_TIMEOUT) + 3.0


def mariadb_pid():
    sock = setting("SVC_DB_SOCKET")
    with open(os.path.join(os.path.dirname(sock), "mariadbd.pid")) as f:
        return int(f.read().strip())


def db_answers():
    sock = setting("SVC_DB_SOCKET")
    out = subprocess.run(["mariadb", "--no-defaults", "--socket=" + sock, "-uroot", "-N", "-B",
                          "--connect-timeout=2", "-e", "SELECT 1"], capture_output=True, text=True, timeout=10)
    return out.returncode == 0 and out.stdout.strip() == "1"


def timed(method, path, acct, body=None):
    t0 = time.monotonic()
    r = api(method, path, body, token=acct.token, timeout=120)
    return r, time.monotonic() - t0


def wait_ok(path, acct, within):
    """Repeats GET path until it answers 200; returns (seconds it took, last response)."""
    t0 = time.monotonic()
    r = None
    while time.monotonic() - t0 < within:
        r = api("GET", path, token=acct.token, timeout=30)
        if r.status == 200:
            break
        time.sleep(0.2)
    return time.monotonic() - t0, r


def main():
    acct = signup(tag="dbfault")
    r = create_project(acct, name="DB faults")
    pid_project = created_id(r)
    path = "/projects/%s" % pid_project
    # every responder of the pool gets a connection before the pause
    for _ in range(8):
        api("GET", path, token=acct.token)
    check("the stack answers before the fault", api("GET", path, token=acct.token).status == 200)

    # ---- MariaDB stalls (SIGSTOP) for longer than the timeouts
    pid = mariadb_pid()
    results = []
    os.kill(pid, signal.SIGSTOP)
    try:
        def one(method, p, body=None):
            results.append((method, p) + timed(method, p, acct, body))
        calls = [threading.Thread(target=one, args=("GET", path)),
                 threading.Thread(target=one, args=("GET", "/projects")),
                 threading.Thread(target=one, args=("PATCH", path, {"name": "renamed while stalled"})),
                 threading.Thread(target=one, args=("POST", "/auth/login",
                                                    {"email": acct.email, "password": acct.password}))]
        for t in calls:
            t.start()
        for t in calls:
            t.join(120)
    finally:
        os.kill(pid, signal.SIGCONT)
    for method, p, resp, secs in sorted(results, key=lambda x: x[0] + x[1]):
        name = "%s %s while MariaDB is stalled" % (method, p.replace(pid_project, ":id"))
        check(name + ": 503 service_unavailable", is_error(resp, 503, "service_unavailable"), resp)
        check(name + ": within %.0f s (took %.1f s)" % (LIMIT, secs), secs <= LIMIT, secs)
        check(name + ": Retry-After", (resp.headers.get("retry-after") or "").isdigit(), resp.headers)
    check("four requests were answered", len(results) == 4, results)

    secs, resp = wait_ok(path, acct, 15)
    check("after SIGCONT the service resumes by itself within 3 s (took %.1f s)" % secs,
          resp is not None and resp.status == 200 and secs <= 3.0, resp)
    # (the write sent during the stall may still have been applied when MariaDB woke up: a
    # timed-out request is ambiguous, as with any database client; its row is whole either way)
    check("the project reads whole after the stall",
          resp is not None and resp.status == 200 and resp.body.get("name") in ("DB faults", "renamed while stalled"),
          resp)
    r = api("PATCH", path, {"name": "after the stall"}, token=acct.token)
    check("a write after the stall succeeds", r.status == 200 and r.body.get("name") == "after the stall", r)

    # ---- MariaDB restarts: the responders keep dead connections, which must be replaced at once
    with open("/proc/%d/cmdline" % pid, "rb") as f:
        argv = [a.decode() for a in f.read().split(b"\0") if a]
    os.kill(pid, signal.SIGTERM)
    t0 = time.monotonic()
    while time.monotonic() - t0 < 60:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.1)
    gone = time.monotonic() - t0 < 60
    check("MariaDB stopped (SIGTERM)", gone)
    r = api("GET", path, token=acct.token, timeout=60)
    check("while MariaDB is down: 503 service_unavailable", is_error(r, 503, "service_unavailable"), r)
    subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                     start_new_session=True)
    t0 = time.monotonic()
    while time.monotonic() - t0 < 60 and not db_answers():
        time.sleep(0.2)
    check("MariaDB is back (same command line)", db_answers())

    # the first request of each responder meets a dead connection: it reconnects and answers
    statuses = [api("GET", path, token=acct.token).status for _ in range(8)]
    check("after the restart every request succeeds without restarting responders",
          statuses == [200] * 8, statuses)
    r = api("PATCH", path, {"name": "after the restart"}, token=acct.token)
    check("a write after the restart succeeds", r.status == 200 and r.body.get("name") == "after the restart", r)
    r = api("POST", "/auth/login", {"email": acct.email, "password": acct.password})
    check("sign-in after the restart succeeds", r.status == 200, r)

    # the daemons lived through both faults and svc-worker takes jobs again (a first prompt)
    run = os.path.join(os.path.dirname(TEST_CONFIG), "run")
    for name in ("svc-wsd", "svc-worker"):
        try:
            with open(os.path.join(run, name + ".pid")) as f:
                os.kill(int(f.read().strip()), 0)
            alive = True
        except (OSError, ValueError):
            alive = False
        check("%s is still running after the stall and the restart" % name, alive)
    r = api("POST", "/workspaces/%s/projects" % acct.workspace_id,
            {"name": "After the restart", "template": "blank", "prompt": "write a file please"}, token=acct.token)
    pid2 = created_id(r)
    chat = (items_of(api("GET", "/projects/%s/chats" % pid2, token=acct.token).body) or [{}])[0].get("id")
    types = []
    deadline = time.monotonic() + 60
    while pid2 and chat and time.monotonic() < deadline:
        types = types_of(timeline(acct, pid2, chat) or [])
        if types[-1:] in (["session.task_complete"], ["error"]):
            break
        time.sleep(0.3)
    check("svc-worker runs a first prompt after the restart", types[-1:] == ["session.task_complete"], types)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
