#!/usr/bin/env python3
# test_worker_lanes.py: svc-worker's lanes (docs/operations.md "The background worker"): while a preview build
# of twenty seconds runs in the slow lane, a password-reset mail and a sign-up mail arrive within a few seconds
# (the quick lane), and the build goes on in a process of its own.
import os
import secrets
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from svclib import (NOPROVIDER_BASE_URL, api, check, finish, random_email, signup, sql,  # noqa: E402
                    worker_lanes, worker_pid)
from test_auth_reset import SMTP_URL, forgot, token_of, wait_message  # noqa: E402
from wslib import Team, create_in  # noqa: E402

MAIL_WITHIN = 5.0  # seconds from the request to the captured message, whatever the slow lane runs

# A build that sleeps twenty seconds, then writes a page.
SLOW_BUILD = """import { mkdirSync, writeFileSync } from 'node:fs';
await new Promise((r) => setTimeout(r, 20000));
mkdirSync('dist', { recursive: true });
writeFileSync('dist/index.html', '<p>slow</p>');
"""


def put(acct, pid, path, content):
    return api("PUT", "/projects/%s/files/%s" % (pid, path), {"content": content, "overwrite": True}, token=acct.token)


def build_job(pid):
    """(id, state, locked_by) of project pid's newest preview build, or None."""
    out = sql("SELECT id, state, IFNULL(locked_by, '') FROM jobs WHERE kind = 'preview.build' AND payload = "
              "'{\"projectId\":\"%s\"}' ORDER BY id DESC LIMIT 1" % pid).strip()
    return tuple(out.split("\t")) if out else None


def mail_seconds(to, send):
    """Calls send(), then waits (at most 30 s) for the message to `to`. Returns (seconds, message or None)."""
    t0 = time.monotonic()
    send()
    msg = wait_message(to)
    return time.monotonic() - t0, msg


def main():
    if not SMTP_URL:
        check("test_worker_lanes_smtp_double_configured", False, "SVC_SMTP_DOUBLE_URL is not set")
        return
    pid = worker_pid()
    lanes = worker_lanes(pid) if pid else {}
    check("test_worker_lanes_one_process_per_lane", sorted(lanes) == ["quick", "slow"], (pid, lanes))

    t = Team("worker-lanes")
    p = create_in(t.owner, t.wid, "Slow lane build", template="blank")
    project = (p.body or {}).get("id")
    if not project:
        check("test_worker_lanes_project", False, p)
        return
    put(t.owner, project, "slow.mjs", SLOW_BUILD)
    put(t.owner, project, "package-lock.json",
        '{"name": "slow", "lockfileVersion": 3, "requires": true, "packages": {"": {"name": "slow"}}}\n')
    put(t.owner, project, "package.json",
        '{"name": "slow", "private": true, "type": "module", "scripts": {"build": "node slow.mjs"}}\n')
    # the build runs once the slow lane is through what earlier files left it (thumbnails, builds)
    end = time.monotonic() + 240
    job = build_job(project)
    while time.monotonic() < end and not (job and job[1] == "running"):
        time.sleep(0.2)
        job = build_job(project)
    check("test_worker_lanes_build_runs", job is not None and job[1] == "running", job)
    if not job or job[1] != "running":
        return
    lanes = worker_lanes(pid)
    check("test_worker_lanes_build_runs_in_the_slow_lane",
          bool(lanes.get("slow")) and (":%d:" % lanes["slow"]) in job[2], (job, lanes))

    # a reset link while the build runs: in seconds, not after it
    a = signup(tag="lanes")
    secs, msg = mail_seconds(a.email, lambda: forgot(a.email))
    check("test_worker_lanes_reset_mail_within_5_s_of_a_running_build",
          msg is not None and token_of(msg) and secs <= MAIL_WITHIN, (secs, msg))
    # a sign-up's verification mail (the front without a provider verifies sign-ups by mail) too
    email = random_email("lanes-signup")
    secs2, msg2 = mail_seconds(email, lambda: api("POST", "/auth/signup", {
        "email": email, "password": "pw-" + secrets.token_hex(8), "displayName": "Lanes"}, base=NOPROVIDER_BASE_URL))
    check("test_worker_lanes_signup_mail_within_5_s_of_a_running_build", msg2 is not None and secs2 <= MAIL_WITHIN,
          (secs2, msg2))
    # ... and the build was running all the while (so the mail did not wait for its end)
    running = build_job(project)
    check("test_worker_lanes_build_still_ran_when_the_mail_came",
          running is not None and running[0] == job[0] and running[1] == "running", (job, running))
    print("# mail during a build: reset %.2f s, sign-up %.2f s" % (secs, secs2))

    # the build itself finishes in its lane
    end = time.monotonic() + 120
    while time.monotonic() < end and build_job(project)[1] != "done":
        time.sleep(0.5)
    check("test_worker_lanes_build_done", build_job(project)[1] == "done", build_job(project))


if __name__ == "__main__":
    main()
    sys.exit(finish())
