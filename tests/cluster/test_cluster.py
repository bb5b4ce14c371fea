#!/usr/bin/env python3
# test_cluster.py: svc on the loopback cluster (tests/cluster/run.sh, docs/scaling.md): state shared by the hosts,
# one project edited through both at once, a Galera node killed under a write load, two workers and one job each,
# a dev-server preview through HAProxy served by the svc-devd of one host, the apps' backend across hosts (an end user, a file, a record)
"""
Environment: cluster.env's SVC_CLUSTER_FRONT, SVC_CLUSTER_HOSTS, SVC_CLUSTER_NODES, SVC_CLUSTER_RUN,
SVC_CLUSTER_CONFIGS, SVC_CLUSTER_DEVD; SVC_ROOT (the checkout); SVC_PROVIDER_URL (the model double).
Prints "ok - cluster: ..." / "not ok - cluster: ..." and "# figure: ..." lines with what was measured
(docs/scaling.md quotes them).
"""

import hashlib
import hmac
import json
import os
import secrets
import subprocess
import sys
import threading
import time
import urllib.parse

ROOT = os.environ["SVC_ROOT"]
FRONT = os.environ["SVC_CLUSTER_FRONT"]
HOSTS = os.environ["SVC_CLUSTER_HOSTS"].split()
NODES = os.environ["SVC_CLUSTER_NODES"].split()
RUN = os.environ["SVC_CLUSTER_RUN"]
CONFIGS = os.environ["SVC_CLUSTER_CONFIGS"].split()
DEVD = os.environ.get("SVC_CLUSTER_DEVD", "").split()
os.environ["SVC_BASE_URL"] = FRONT + "/api"
os.environ["SVC_APP_URL"] = FRONT
os.environ["SVC_TEST_PREFIX"] = "cluster: "
os.environ["SVC_TEST_CONFIG"] = CONFIGS[0]
sys.path.insert(0, os.path.join(ROOT, "tests", "e2e"))
from svclib import PROVIDER_URL, api, check, finish, items_of, provider, request, setting, signup  # noqa: E402

A = HOSTS[0] + "/api"
B = HOSTS[1] + "/api"
F = FRONT + "/api"


def figure(text):
    """A measured figure, printed for the log (not a check)."""
    print("# figure: " + text, flush=True)


def node_sql(i, query, timeout=10):
    """Runs SQL on Galera node i (0-based) in database svc; stdout, or None when the node does not answer."""
    try:
        out = subprocess.run(["mariadb", "--no-defaults", "--socket=" + NODES[i], "-uroot", "-N", "-B", "svc",
                              "-e", query], capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None
    return out.stdout if out.returncode == 0 else None


def node_status(i, name):
    out = node_sql(i, "SHOW STATUS LIKE '%s'" % name)
    return out.split("\t")[1].strip() if out and "\t" in out else None


def metric(name):
    """The sum of a db_metrics counter over every process (schema 016), or None before that table exists."""
    out = node_sql(0, "SELECT COALESCE(SUM(value), 0) FROM db_metrics WHERE name = '%s'" % name)
    return int(out.strip()) if out and out.strip().isdigit() else None


def pid_of(name):
    try:
        with open(os.path.join(RUN, name + ".pid")) as f:
            return int(f.read().strip())
    except (OSError, ValueError):
        return None


def test_hosts_share_sessions():
    """Sign up through host A, sign in and refresh through host B; a logout on A holds on B."""
    try:
        acct = signup(base=A, tag="cluster")
    except AssertionError as e:
        check("sign up through host A", False, e)
        return
    check("sign up through host A", True)
    r = api("POST", "/auth/login", {"email": acct.email, "password": acct.password}, base=B)
    b = r.body if isinstance(r.body, dict) else {}
    check("sign in through host B with the account made on host A", r.status == 200 and b.get("accessToken"), r)
    refresh = b.get("refreshToken")
    r = api("POST", "/auth/refresh", {"refreshToken": refresh}, base=B)
    access = r.body.get("accessToken") if isinstance(r.body, dict) else None
    check("refresh through host B", r.status == 200 and bool(access), r)
    r = api("GET", "/auth/me", token=access, base=A)
    check("the access token refreshed on host B works on host A",
          r.status == 200 and isinstance(r.body, dict) and (r.body.get("user") or {}).get("email") == acct.email, r)
    r = api("GET", "/auth/me", token=access, base=B)   # host B's processes may remember this check (up to 1 s)
    check("the access token works on host B", r.status == 200, r)
    r = api("POST", "/auth/logout", token=access, base=A)
    check("log out through host A", r.status == 200, r)
    # another host sees a logout within SVC_SESSION_CACHE_MS (1 s, docs/security.md "Sessions")
    time.sleep(1.0)
    r = api("GET", "/auth/me", token=access, base=B)
    check("host B refuses the session logged out on host A within 1 s", r.status == 401, r)


def test_concurrent_edits():
    """One project edited through both hosts at once: files (Git on the shared data dir) and its row."""
    acct = signup(base=F, tag="cluster")
    r = api("POST", "/workspaces/%s/projects" % acct.workspace_id, {"name": "Both hosts", "template": "blank"},
            token=acct.token, base=F)
    pid = r.body.get("id") if isinstance(r.body, dict) else None
    if not check("create a project through the front", r.status == 201 and pid, r):
        return
    before = metric("db_tx_retries")
    n = 10
    results = []
    lock = threading.Lock()

    def files(host, tag):
        for i in range(n):
            r = api("PUT", "/projects/%s/files/%s-%d.txt" % (pid, tag, i), {"content": "%s %d\n" % (tag, i)},
                    token=acct.token, base=host)
            with lock:
                results.append(("file", tag, i, r.status, r))

    def rows(host, tag):
        for i in range(n):
            r = api("PATCH", "/projects/%s" % pid, {"description": "%s %d" % (tag, i)}, token=acct.token, base=host)
            with lock:
                results.append(("row", tag, i, r.status, r))

    threads = [threading.Thread(target=files, args=(A, "a")), threading.Thread(target=files, args=(B, "b"))]
    threads += [threading.Thread(target=rows, args=(h, "%s%d" % (t, k))) for k in range(3) for h, t in ((A, "a"), (B, "b"))]
    t0 = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    secs = time.monotonic() - t0
    bad = [x for x in results if x[0] == "file" and x[3] not in (200, 201)]
    check("%d file writes through host A and %d through host B at once all succeed" % (n, n), not bad,
          [x[4] for x in bad[:3]])
    bad = [x for x in results if x[0] == "row" and x[3] != 200]
    check("60 updates of the project's row through both hosts at once all succeed (1213 run again)", not bad,
          [x[4] for x in bad[:3]])
    r = api("GET", "/projects/%s/files" % pid, token=acct.token, base=B)
    listing = r.body if isinstance(r.body, (list, dict)) else {}
    names = set()

    def walk(x):
        if isinstance(x, dict):
            if isinstance(x.get("path"), str):
                names.add(x["path"])
            for v in x.values():
                walk(v)
        elif isinstance(x, list):
            for v in x:
                walk(v)
    walk(listing)
    want = {"%s-%d.txt" % (t, i) for t in "ab" for i in range(n)}
    check("every file written is in the project (no lost update)", want <= names, sorted(want - names))
    wrong = []
    for t, host in (("a", B), ("b", A)):
        for i in range(n):
            r = api("GET", "/projects/%s/files/%s-%d.txt" % (pid, t, i), token=acct.token, base=host)
            if r.status != 200 or r.body != "%s %d\n" % (t, i):
                wrong.append(r)
    check("each file reads back through the other host", not wrong, wrong[:3])
    r = api("GET", "/projects/%s/versions?limit=100" % pid, token=acct.token, base=A)
    vs = items_of(r.body) or []
    check("one version per write: %d (the template and %d writes)" % (1 + 2 * n, 2 * n), len(vs) == 1 + 2 * n,
          "%d versions: %r" % (len(vs), r))
    r = api("GET", "/projects/%s" % pid, token=acct.token, base=B)
    last = {x[1] + " " + str(x[2]) for x in results if x[0] == "row"}
    check("the project's description is one of the updates", isinstance(r.body, dict)
          and r.body.get("description") in last, r)
    after = metric("db_tx_retries")
    figure("concurrent edits: %d requests through both hosts in %.1f s" % (len(results), secs))
    if after is None:
        figure("metric db_tx_retries: no db_metrics table on this schema")
    else:
        figure("metric db_tx_retries: %d during the concurrent edits (%d in all)" % (after - (before or 0), after))
        check("the transactions run again are counted in metric db_tx_retries", after >= (before or 0), after)


def test_node_killed():
    """A Galera node SIGKILLed under a write load through the front; it rejoins by IST and the nodes converge."""
    acct = signup(base=F, tag="cluster")
    writers = 4
    pids = []
    for k in range(writers):
        r = api("POST", "/workspaces/%s/projects" % acct.workspace_id, {"name": "Load %d" % k, "template": "blank"},
                token=acct.token, base=F)
        if r.status != 201:
            check("create the projects of the write load", False, r)
            return
        pids.append(r.body["id"])
    victim = 1                          # node 2: host b's first server
    gpid = pid_of("galera-2")
    if not check("node 2 runs (run/galera-2.pid)", gpid and os.path.exists("/proc/%d" % gpid), gpid):
        return
    results = []
    lock = threading.Lock()
    stop = threading.Event()
    killed_at = [None]

    def load(k):
        i = 0
        while not stop.is_set():
            t0 = time.monotonic()
            r = api("PATCH", "/projects/%s" % pids[k], {"description": "w%d-%d" % (k, i)}, token=acct.token,
                    base=F, timeout=20)
            with lock:
                results.append((t0, time.monotonic(), r.status, k, i))
            i += 1

    threads = [threading.Thread(target=load, args=(k,)) for k in range(writers)]
    t_start = time.monotonic()
    for t in threads:
        t.start()
    time.sleep(2)
    log_off = os.path.getsize(os.path.join(os.path.dirname(NODES[victim]), "error.log"))
    os.kill(gpid, 9)
    killed_at[0] = time.monotonic()
    time.sleep(8)
    stop.set()
    for t in threads:
        t.join()
    kill = killed_at[0]
    errors = [x for x in results if x[2] != 200]
    after = [x for x in results if x[0] > kill]
    late_errors = [x for x in errors if x[0] > kill + 5]
    figure("node kill: %d writes in %.1f s, %d before the kill, %d after; %d errors (%s)" % (
        len(results), time.monotonic() - t_start, len(results) - len(after), len(after), len(errors),
        ", ".join("%d at +%.2f s" % (x[2], x[0] - kill) for x in errors[:10])))
    near = [x for x in results if kill - 2 <= x[0] <= kill + 2]
    figure("node kill: the longest write around the kill took %.2f s (commits wait until the others drop the node)"
           % max((x[1] - x[0] for x in near), default=0))
    last_err = max((x[1] for x in errors), default=kill)
    figure("node kill: last failed write ended %.2f s after the SIGKILL" % (last_err - kill))
    # in flight on node 2 when it died: at most one request per writer, plus one per responder process of host b
    # that held a connection to it (its next request finds the connection dead)
    check("a Galera node SIGKILLed: errors only around the kill (%d, at most %d)" % (len(errors), writers + 4),
          len(errors) <= writers + 4, errors[:10])
    check("no failed write later than 5 s after the kill", not late_errors, late_errors[:5])
    ok_after = [x for x in after if x[2] == 200 and x[0] > kill + 1]
    check("writes go on through the front while node 2 is down (%d)" % len(ok_after), len(ok_after) >= writers, len(ok_after))
    size = node_status(0, "wsrep_cluster_size")
    check("the cluster has 2 nodes while node 2 is down", size == "2", size)

    # node 2 again, as 'cluster up' starts it (position recovered from InnoDB, its pid file in run/): it asks
    # the others for the write sets it missed
    t0 = time.monotonic()
    out = subprocess.run([os.path.join(ROOT, "svc-dev"), "cluster", "start", "galera-2"], capture_output=True, text=True,
                         timeout=150, env={"PATH": os.environ["PATH"], "HOME": os.environ.get("HOME", "/root"),
                                           "SVC_CLUSTER_VAR": os.environ["SVC_CLUSTER_VAR"],
                                           "SVC_CLUSTER_PORT": os.environ["SVC_CLUSTER_PORT"],
                                           "SVC_CLUSTER_BUILD": os.environ["SVC_CLUSTER_BUILD"]})
    rejoin = time.monotonic() - t0
    state = node_status(victim, "wsrep_local_state_comment")
    check("./svc-dev cluster start galera-2 answers", out.returncode == 0, out.stderr[-2000:])
    check("node 2 restarted rejoins and is Synced (%.1f s)" % rejoin, state == "Synced", state)
    figure("node kill: node 2 restarted, Synced %.1f s later" % rejoin)
    with open(os.path.join(os.path.dirname(NODES[victim]), "error.log"), errors="replace") as f:
        f.seek(log_off)
        tail = f.read()
    ist = [ln for ln in tail.splitlines() if "IST received" in ln or "Receiving IST" in ln]
    check("node 2 caught up by IST (incremental), not a full copy", any("IST received" in ln for ln in ist), ist[-2:])
    figure("node kill: " + (ist[-1].split("] ", 1)[-1] if ist else "no IST line"))

    # converged: the same last committed write set and the same rows on all three nodes
    t0 = time.monotonic()
    seen = []
    while time.monotonic() - t0 < 30:
        seen = [node_status(i, "wsrep_last_committed") for i in range(3)]
        if None not in seen and len(set(seen)) == 1:
            break
        time.sleep(0.2)
    check("all three nodes at the same wsrep_last_committed", None not in seen and len(set(seen)) == 1, seen)
    q = ("SELECT (SELECT COUNT(*) FROM users), (SELECT COUNT(*) FROM projects), (SELECT COUNT(*) FROM auth_sessions), "
         "(SELECT GROUP_CONCAT(description ORDER BY id) FROM projects WHERE id IN (%s))"
         % ", ".join("'%s'" % p for p in pids))
    rows = [node_sql(i, q) for i in range(3)]
    check("all three nodes hold the same rows (users, projects, sessions, the loaded projects)",
          rows[0] is not None and rows[0] == rows[1] == rows[2], rows)
    size = node_status(0, "wsrep_cluster_size")
    check("the cluster has 3 nodes again", size == "3", size)
    failovers = metric("db_failovers")
    if failovers is not None:
        figure("metric db_failovers: %d" % failovers)


def job_rows(project_ids):
    out = node_sql(0, "SELECT payload, state, attempts, IFNULL(locked_by, '') FROM jobs WHERE kind = 'chat.first_prompt'")
    rows = {}
    for line in (out or "").splitlines():
        parts = line.split("\t")
        for p in project_ids:
            if len(parts) == 4 and p in parts[0]:
                rows.setdefault(p, []).append(parts[1:])
    return rows


def test_workers_run_each_job_once():
    """Two svc-workers (one per host, each on its own Galera node) and a burst of queued first prompts."""
    if not PROVIDER_URL:
        check("two workers run each job once", False, "no SVC_PROVIDER_URL")
        return
    acct = signup(base=F, tag="cluster")
    provider("POST", "/_reset")
    k = 6
    pids = []
    for i in range(k):
        r = api("POST", "/workspaces/%s/projects" % acct.workspace_id,
                {"name": "Queued %d" % i, "template": "todo-app", "prompt": "add a footer"},
                token=acct.token, base=(A, B)[i % 2])
        if r.status != 201:
            check("create projects with a first prompt", False, r)
            return
        pids.append(r.body["id"])
    t0 = time.monotonic()
    rows = {}
    while time.monotonic() - t0 < 120:
        rows = job_rows(pids)
        if len(rows) == k and all(r[0][0] in ("done", "failed") for r in rows.values()):
            break
        time.sleep(0.5)
    figure("workers: %d queued first prompts done in %.1f s" % (k, time.monotonic() - t0))
    check("one job per project, each done", len(rows) == k and all(len(r) == 1 and r[0][0] == "done"
                                                                   for r in rows.values()), rows)
    check("each job claimed once (attempts 1)", all(r[0][1] == "1" for r in rows.values()), rows)
    owners = {r[0][2].split(":")[0] + ":" + r[0][2].split(":")[1] if r[0][2].count(":") else r[0][2]
              for r in rows.values()}
    figure("workers: jobs taken by %s" % sorted(owners))
    reqs = provider("GET", "/_requests").body
    n = len(reqs) if isinstance(reqs, list) else -1
    check("the model was asked %d times: two calls per turn, no turn twice" % (2 * k), n == 2 * k, n)
    twice = []
    for p in pids:
        r = api("GET", "/projects/%s/versions" % p, token=acct.token, base=F)
        vs = items_of(r.body) or []
        if len(vs) != 2:
            twice.append((p, len(vs)))
    check("each project has two versions: the template and one agent turn", not twice, twice)


# A dev server without dependencies: what `npm run dev` starts listens where svc-devd's relay expects it.
DEV_SERVER = """import { createServer } from 'node:http';
createServer((q, r) => { r.writeHead(200, { 'Content-Type': 'text/html' }); r.end('<p>served by the dev server</p>'); })
  .listen(Number(process.env.PORT || 5173), process.env.HOST || '127.0.0.1');
"""


def devd_status(base):
    """{projectId: server} of the svc-devd at base (its signed GET /internal/status), or None."""
    ts, nonce = str(int(time.time())), secrets.token_hex(16)
    msg = "GET\n/internal/status\n%s\n%s\n%s" % (ts, nonce, hashlib.sha256(b"").hexdigest())
    sig = hmac.new((setting("INTERNAL_SECRET") or "").encode(), msg.encode(), hashlib.sha256).hexdigest()
    r = request("GET", base + "/internal/status", None,
                {"X-Svc-Timestamp": ts, "X-Svc-Nonce": nonce, "X-Svc-Signature": "v2=" + sig})
    return {x["projectId"]: x for x in (r.body or {}).get("servers", [])} if r.status == 200 else None


def test_preview_reaches_one_hosts_dev_server():
    """A dev-server project's preview through HAProxy: its dev server runs on one host's svc-devd, and every
    request of the preview (the hash of the token's project part) reaches that host's dev server."""
    if len(DEVD) != len(HOSTS):
        check("an svc-devd per host (SVC_CLUSTER_DEVD)", False, DEVD)
        return
    s = signup(base=F, tag="cluster-devd")
    r = api("POST", "/workspaces/%s/projects" % s.workspace_id, {"name": "Dev server", "template": "blank"},
            token=s.token, base=F)
    pid = (r.body or {}).get("id")
    if not check("create a project through the front", r.status == 201 and pid, r):
        return
    files = [("server.mjs", DEV_SERVER),
             ("package-lock.json", '{"name": "d", "lockfileVersion": 3, "requires": true, "packages": {"": {"name": "d"}}}\n'),
             ("package.json", '{"name": "d", "private": true, "type": "module", "scripts": {"dev": "node server.mjs"}}\n')]
    for path, content in files:
        api("PUT", "/projects/%s/files/%s" % (pid, path), {"content": content, "overwrite": True},
            token=s.token, base=F)
    r = api("GET", "/projects/%s/preview" % pid, token=s.token, base=F)
    url = (r.body or {}).get("url") if isinstance(r.body, dict) else None
    if not check("the preview of a dev-server project through the front", r.status == 200 and url
                 and r.body.get("devServer") is True, r):
        return
    host = urllib.parse.urlsplit(url).netloc
    t0, answers = time.monotonic(), []
    while time.monotonic() - t0 < 240:
        a = request("GET", FRONT + "/", None, {"Host": host})
        answers.append(a.status)
        if a.status == 200 and "served by the dev server" in a.body:
            break
        time.sleep(0.5)
    figure("a dev server's first answer through HAProxy after %.1f s" % (time.monotonic() - t0))
    check("the preview through HAProxy is the dev server's answer", a.status == 200 and "served by the dev server"
          in a.body, (a, answers[-5:]))
    more = [request("GET", FRONT + "/?n=%d" % i, None, {"Host": host}) for i in range(6)]
    check("every request of the preview reaches it", all(m.status == 200 and "served by the dev server" in m.body
                                                           for m in more), [m.status for m in more])
    seen = [devd_status(d) for d in DEVD]
    on = [HOSTS[i] for i, st in enumerate(seen) if st and pid in st]
    check("its dev server runs on one host's svc-devd, and no other host started one",
          None not in seen and len(on) == 1 and seen[HOSTS.index(on[0])][pid]["state"] == "running",
          (on, seen))


def test_app_backend_across_hosts():
    """The apps' backend (issue 28): an end user, a file and a record written through host A are read through
    host B at once (the file's bytes are MariaDB rows, docs/app-backend.md "How files are stored")."""
    acct = signup(base=F, tag="cluster-app")
    r = api("POST", "/workspaces/%s/projects" % acct.workspace_id, {"name": "App both hosts", "template": "blank"},
            token=acct.token, base=F)
    pid = r.body.get("id") if isinstance(r.body, dict) else None
    decl = {"collections": {"docs": {"fields": {"att": {"type": "file"}}}}}
    r2 = api("PUT", "/projects/%s/files/svc.data.json" % pid, {"content": json.dumps(decl)}, token=acct.token, base=F)
    r3 = api("GET", "/projects/%s/preview" % pid, token=acct.token, base=F)
    if not check("cluster app: a project with svc.data.json and its preview", r.status == 201 and r2.status in (200, 201)
                 and r3.status == 200, (r, r2, r3)):
        return
    host = urllib.parse.urlsplit(r3.body["url"]).netloc
    jar = {}

    def call(base, method, path, body=None, ctype="application/json"):
        h = {"Host": host, "Origin": "http://" + host}
        if body is not None:
            h["Content-Type"] = ctype
        if jar.get("c"):
            h["Cookie"] = "svc_app_session=" + jar["c"]
        data = json.dumps(body).encode() if isinstance(body, dict) else body
        res = request(method, base + path, data, h)
        for c in res.cookies:
            if c.startswith("svc_app_session="):
                jar["c"] = c.split(";")[0].split("=", 1)[1]
        return res

    a, b = HOSTS[0], HOSTS[1]
    r = call(a, "POST", "/_svc/auth/signup", {"email": "c-%d@example.com" % os.getpid(), "password": "pw-cluster-1"})
    r2 = call(b, "GET", "/_svc/auth/me")
    check("cluster app: an end user signed up through host A is signed in through host B", r.status == 201
          and r2.status == 200, (r, r2))
    data = os.urandom(700 * 1024)  # three chunks
    r = call(a, "POST", "/_svc/files", data, "application/octet-stream")
    fid = r.body.get("id", "none") if r.status == 201 and isinstance(r.body, dict) else "none"
    r2 = call(b, "GET", "/_svc/files/" + fid)
    check("cluster app: a file uploaded through host A is read whole through host B", r.status == 201
          and r2.status == 200 and r2.raw == data, (r, r2.status, len(r2.raw)))
    r = call(b, "POST", "/_svc/data/docs", {"att": fid})
    rid = r.body.get("id", "none") if r.status == 201 and isinstance(r.body, dict) else "none"
    r2 = call(a, "GET", "/_svc/data/docs/" + rid)
    check("cluster app: a record written through host B (naming that file) is read through host A", r.status == 201
          and r2.status == 200 and r2.body.get("att") == fid, (r, r2))
    r = call(a, "DELETE", "/_svc/files/" + fid)
    r2 = call(b, "GET", "/_svc/files/" + fid)
    check("cluster app: a file deleted through host A is gone through host B", r.status == 204 and r2.status == 404,
          (r, r2))


def main():
    for t in (test_hosts_share_sessions, test_concurrent_edits, test_app_backend_across_hosts, test_node_killed,
              test_workers_run_each_job_once, test_preview_reaches_one_hosts_dev_server):
        try:
            t()
        except Exception as e:  # a crash of one part is one failure; the next part still runs
            check(t.__name__ + " ran to its end", False, repr(e))


if __name__ == "__main__":
    main()
    sys.exit(finish())
