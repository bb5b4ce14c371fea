#!/usr/bin/env python3
# test_deploy_preview.py: the preview of a package.json project is its latest sandboxed build (svc-worker builds it
# after each change; no dev server): a "Building the preview" page until the first build, then the built dist/,
# rebuilt after a change, a failed build's reason while none worked, and a plain project's working tree as before;
# builds of one project coalesce: looks at the "Building" page add none, changes during a build make one more that
# builds the newest tree, and a build waits while another of the same project runs (another worker's).
import os
import re
import sys
import time
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from svclib import DOMAIN, HTTP_PORT, api, check, finish, request, sql  # noqa: E402
from wslib import Team, create_in  # noqa: E402


def pget(url, path="/"):
    host = urllib.parse.urlsplit(url).hostname
    return request("GET", "http://127.0.0.1:%d%s" % (HTTP_PORT, path), None, {"Host": "%s:%d" % (host, HTTP_PORT)})


def wait_for(url, pred, path="/", secs=240.0):
    """GETs the preview until pred(answer) holds or `secs` pass; returns the last answer. The builds wait in
    svc-worker's slow lane behind the other tests' jobs (thumbnails, first prompts, the endless build of
    SVC_BUILD_WALL_SECS), hence the minutes."""
    end = time.monotonic() + secs
    while True:
        r = pget(url, path)
        if pred(r) or time.monotonic() > end:
            return r
        time.sleep(0.5)


def put(acct, pid, path, content):
    return api("PUT", "/projects/%s/files/%s" % (pid, path), {"content": content, "overwrite": True}, token=acct.token)


def preview_url(acct, pid):
    r = api("GET", "/projects/%s/preview" % pid, token=acct.token)
    return r.body.get("url") if r.status == 200 and isinstance(r.body, dict) else None


def main():
    t = Team("preview-build")
    a = t.owner
    p = create_in(a, t.wid, "Built preview", template="vite-vanilla")
    pid = (p.body or {}).get("id")
    url = preview_url(a, pid) if pid else None
    check("test_deploy_preview_project_and_url", p.status == 201 and url and ".preview.%s" % DOMAIN in url, (p, url))
    if not url:
        return
    first = pget(url)
    check("test_deploy_preview_first_answer_is_the_build_or_building_page",
          (first.status == 503 and "Building the preview" in first.body and first.headers.get("refresh") == "2")
          or (first.status == 200 and "/assets/main-" in first.body), first)
    t0 = time.monotonic()
    r = wait_for(url, lambda r: r.status == 200 and "/assets/main-" in r.body)
    print("# the first preview build was served %.1f s after the first look" % (time.monotonic() - t0))
    check("test_deploy_preview_serves_the_build", r.status == 200 and "/assets/main-" in r.body
          and "/src/main.js" not in r.body, r)
    m = re.search(r'src="(/assets/main-[0-9a-f]{8}\.js)"', r.body)
    js = pget(url, m.group(1)) if m else None
    check("test_deploy_preview_serves_built_assets", js is not None and js.status == 200 and "setupCounter" in js.body, js)
    check("test_deploy_preview_does_not_serve_sources", pget(url, "/build.mjs").status == 404)

    # A change is built again (the worker, debounced by its queue), and shown.
    before = r.raw
    put(a, pid, "index.html", open_template_index().replace("Hello, Vite vanilla", "Hello again"))
    r = wait_for(url, lambda r: r.status == 200 and "Hello again" in r.body)
    check("test_deploy_preview_rebuilt_after_a_change", r.status == 200 and "Hello again" in r.body and r.raw != before, r)

    # A build that fails before any worked: the reason; after a fix, the build.
    q = create_in(a, t.wid, "Broken preview", template="vite-vanilla")
    qid = (q.body or {}).get("id")
    put(a, qid, "package.json", '{"name": "broken", "private": true, "scripts": {"build": "node -e \\"process.exit(4)\\""}}\n')
    qurl = preview_url(a, qid)
    r = wait_for(qurl, lambda r: "The build failed" in r.body)
    check("test_deploy_preview_failed_build_says_why",
          r.status == 503 and "npm run build exited with status 4" in r.body, r)
    put(a, qid, "package.json", '{"name": "fixed", "private": true, "scripts": {"build": "node build.mjs"}}\n')
    r = wait_for(qurl, lambda r: r.status == 200 and "/assets/main-" in r.body)
    check("test_deploy_preview_fixed_build_is_served", r.status == 200 and "/assets/main-" in r.body, r)

    # A project without package.json: its working tree, at once.
    b = create_in(a, t.wid, "Plain preview", template="todo-app")
    burl = preview_url(a, (b.body or {}).get("id"))
    r = pget(burl) if burl else None
    check("test_deploy_preview_plain_project_serves_its_files", r is not None and r.status == 200
          and "<html" in r.body.lower(), r)

    coalescing(t, a)


# A build that takes a few seconds (so looks and changes arrive while it runs) and shows note.txt.
SLOW_BUILD = """import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
await new Promise((r) => setTimeout(r, 10000));
mkdirSync('dist', { recursive: true });
writeFileSync('dist/index.html', '<p>note: ' + readFileSync('note.txt', 'utf8').trim() + '</p>');
"""


def jobs_of(pid):
    """[(id, state, last_error)] of the preview builds of project pid, oldest first."""
    payload = '{"projectId":"%s"}' % pid
    rows = sql("SELECT id, state, IFNULL(last_error, '') FROM jobs WHERE kind = 'preview.build' AND payload = '%s' "
               "ORDER BY id" % payload)
    return [tuple(line.split("\t")) for line in rows.splitlines() if line]


def wait_jobs(pid, pred, secs=240.0):
    end = time.monotonic() + secs
    while True:
        j = jobs_of(pid)
        if pred(j) or time.monotonic() > end:
            return j
        time.sleep(0.2)


def coalescing(t, a):
    p = create_in(a, t.wid, "Coalesced preview", template="blank")
    pid = (p.body or {}).get("id")
    if not pid:
        check("test_deploy_preview_coalesce_project", False, p)
        return
    put(a, pid, "note.txt", "first\n")
    put(a, pid, "slow.mjs", SLOW_BUILD)
    put(a, pid, "package-lock.json", '{"name": "slow", "lockfileVersion": 3, "requires": true, "packages": {"": {"name": "slow"}}}\n')
    put(a, pid, "package.json", '{"name": "slow", "private": true, "type": "module", "scripts": {"build": "node slow.mjs"}}\n')
    url = preview_url(a, pid)
    j = wait_jobs(pid, lambda j: any(s == "running" for _, s, _ in j))
    running = [x for x in j if x[1] == "running"]
    # while the first build runs, looks at the preview ("Building the preview", Refresh: 2) queue nothing
    looks = [pget(url) for _ in range(3)]
    j = jobs_of(pid)
    check("test_deploy_preview_looks_during_the_first_build_queue_nothing",
          len(running) == 1 and all(r.status == 503 and "Building the preview" in r.body for r in looks)
          and [x[0] for x in j] == [running[0][0]], (j, [r.status for r in looks]))
    # changes while it runs: one build more (the tree as it is when that one runs), however many changes
    for n in ("second", "third"):
        put(a, pid, "note.txt", n + "\n")
    j = jobs_of(pid)
    check("test_deploy_preview_changes_during_a_build_queue_one", len(j) == 2 and j[1][1] == "queued", j)
    r = wait_for(url, lambda r: r.status == 200 and "note: third" in r.body)
    j = wait_jobs(pid, lambda j: all(s == "done" for _, s, _ in j))
    check("test_deploy_preview_pending_build_builds_the_newest_tree",
          r.status == 200 and "note: third" in r.body and len(j) == 2 and all(s == "done" for _, s, _ in j), (r, j))

    # a build of the project runs elsewhere (another worker's, its lease live): this one waits its turn
    payload = '{"projectId":"%s"}' % pid
    sql("INSERT INTO jobs (kind, payload, state, attempts, max_attempts, run_after, locked_until, locked_by, "
        "created_at, updated_at) VALUES ('preview.build', '%s', 'running', 1, 3, UTC_TIMESTAMP(3), "
        "UTC_TIMESTAMP(3) + INTERVAL 1 HOUR, 'e2e-other-worker', UTC_TIMESTAMP(3), UTC_TIMESTAMP(3))" % payload)
    put(a, pid, "note.txt", "fourth\n")
    j = wait_jobs(pid, lambda j: any("another build" in e for _, _, e in j))
    r = pget(url)
    check("test_deploy_preview_build_waits_for_the_running_one",
          any(s == "queued" and "another build" in e for _, s, e in j) and "note: third" in r.body, (j, r))
    sql("UPDATE jobs SET state = 'done', locked_until = NULL WHERE locked_by = 'e2e-other-worker' AND payload = '%s'"
        % payload)
    r = wait_for(url, lambda r: r.status == 200 and "note: fourth" in r.body)
    check("test_deploy_preview_waiting_build_runs_after_it", r.status == 200 and "note: fourth" in r.body, r)


def open_template_index():
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "..", "..", "templates", "vite-vanilla", "index.html")) as f:
        return f.read()


if __name__ == "__main__":
    main()
    sys.exit(finish())
