#!/usr/bin/env python3
"""soak.py: mixed load on a running svc stack for a while; per-kind throughput, latency and errors, and process RSS.

Usage: bench/soak/soak.py --base http://127.0.0.1:PORT --var VAR_DIR --build BUILD_DIR --seconds S [--out DIR]
(bench/soak/run.sh starts the stack and the provider double and calls this; see bench/README.md, "Soak").

Side by side for S seconds:
  http    wrk -s mix.lua: reads, writes, sign-ins (one connection per thread, paced)
  chat    CHAT_STREAMS threads, each looping POST /api/chat/:pid/messages (SSE) on its own chat
  collab  wsd-drive (bench/wsd/drive.c) through the web server's /ws/: ROOMS rooms x CLIENTS typists
and every SAMPLE_S seconds the RSS (/proc/PID/status VmRSS) of every process of the stack, found from
VAR_DIR's pid files: lighttpd and its children (the responders, by program), or Apache and its
children and the responders' --listen pools (run-apache/), MariaDB, svc-wsd, svc-worker (its
Chromium children apart). "start" is the sample after the warm-up, "end" the last one
before the load stops. Writes soak-<time>.json and .md to --out and prints the .md.
Python 3 stdlib only.
"""
import argparse
import datetime
import http.client
import json
import os
import re
import subprocess
import sys
import threading
import time
import urllib.parse
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))


# ---------------------------------------------------------------- API

class Api:
    """One keep-alive connection to the stack's /api."""

    def __init__(self, base, timeout=60):
        u = urllib.parse.urlsplit(base)
        self.host, self.port = u.hostname, u.port or 80
        self.timeout = timeout
        self.conn = None

    def call(self, method, path, body=None, token=None, headers=None):
        h = {"Content-Type": "application/json"} if body is not None else {}
        if token:
            h["Authorization"] = "Bearer " + token
        h.update(headers or {})
        data = json.dumps(body).encode() if body is not None else (b"" if method != "GET" else None)
        for attempt in (0, 1):
            if self.conn is None:
                self.conn = http.client.HTTPConnection(self.host, self.port, timeout=self.timeout)
            try:
                self.conn.request(method, "/api" + path, body=data, headers=h)
                r = self.conn.getresponse()
                raw = r.read()
                break
            except (OSError, http.client.HTTPException):
                self.conn.close()
                self.conn = None
                if attempt:
                    raise
        try:
            j = json.loads(raw) if raw else None
        except ValueError:
            j = None
        return r.status, j


def must(status, j, want, what):
    if status not in want:
        sys.exit("soak: setup: %s answered %s %s" % (what, status, json.dumps(j)[:300]))
    return j


def signup(api, label):
    email = "soak-%s-%s@example.test" % (label, uuid.uuid4().hex[:10])
    password = "soak-" + uuid.uuid4().hex
    j = must(*api.call("POST", "/auth/signup", {"email": email, "password": password, "displayName": "Soak " + label}),
             (201,), "sign-up")
    return {"email": email, "password": password, "token": j["accessToken"], "wid": j["workspace"]["id"]}


def new_project(api, user, name):
    j = must(*api.call("POST", "/workspaces/%s/projects" % user["wid"], {"name": name, "template": "blank"},
                       user["token"]), (201,), "project create")
    return j["id"]


def default_chat(api, user, pid):
    j = must(*api.call("GET", "/projects/%s/chats" % pid, token=user["token"]), (200,), "chat list")
    return j["items"][0]["id"]


def lua_str(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def setup(base, n_users, n_rooms, out_dir):
    api = Api(base)
    users = []
    for i in range(n_users):
        u = signup(api, "u%d" % i)
        u["pid"] = new_project(api, u, "soak writes %d" % i)
        u["chat_pid"] = new_project(api, u, "soak chat %d" % i)
        u["chat_id"] = default_chat(api, u, u["chat_pid"])
        users.append(u)
    collab = signup(api, "collab")
    rooms = [new_project(api, collab, "soak room %d" % i) for i in range(n_rooms)]
    # Sign-ins arrive from TEST-NET-2 addresses (RFC 5737) through X-Forwarded-For.
    addrs = ["198.51.100.%d" % (i + 1) for i in range(int(os.environ.get("SOAK_ADDRS", "8")))]
    data = os.path.join(out_dir, "data.lua")
    with open(data, "w") as f:
        f.write("return { users = {\n")
        for u in users:
            f.write("  { %s },\n" % ", ".join("%s = %s" % (k, lua_str(u[k])) for k in
                                             ("email", "password", "token", "wid", "pid", "chat_pid", "chat_id")))
        f.write("}, addrs = { %s } }\n" % ", ".join(lua_str(a) for a in addrs))
    rooms_file = os.path.join(out_dir, "rooms.txt")
    with open(rooms_file, "w") as f:
        f.write("\n".join(rooms) + "\n")
    return users, collab, data, rooms_file


# ---------------------------------------------------------------- chat streams

def percentile(sorted_vals, q):
    if not sorted_vals:
        return None
    return sorted_vals[min(len(sorted_vals) - 1, int(q * len(sorted_vals)))]


class Chat:
    """CHAT_STREAMS threads; each loops turns on its user's chat until the deadline."""

    def __init__(self, base, users, streams, deadline, pause):
        self.base, self.deadline, self.pause = base, deadline, pause
        self.users = users[:streams]
        self.lock = threading.Lock()
        self.first, self.total = [], []
        self.ok = 0
        self.errors = {}
        self.samples = []
        self.threads = [threading.Thread(target=self.loop, args=(u, i), daemon=True) for i, u in enumerate(self.users)]

    def error(self, what, detail):
        with self.lock:
            self.errors[what] = self.errors.get(what, 0) + 1
            if len(self.samples) < 5:
                self.samples.append("%s: %s" % (what, str(detail)[:200]))

    def turn(self, conn, u, text):
        body = json.dumps({"chatId": u["chat_id"], "text": text}).encode()
        t0 = time.monotonic()
        conn.request("POST", "/api/chat/%s/messages" % u["chat_pid"], body=body, headers={
            "Authorization": "Bearer " + u["token"], "Content-Type": "application/json",
            "Accept": "text/event-stream"})
        r = conn.getresponse()
        if r.status != 200:
            self.error("http %d" % r.status, r.read())
            return
        first, last = None, None
        while True:
            line = r.readline()
            if not line:
                break
            if not line.startswith(b"data:"):
                continue
            if first is None:
                first = time.monotonic() - t0
            try:
                last = json.loads(line[5:])
            except ValueError:
                self.error("bad event", line)
                return
            if last.get("type") in ("session.task_complete", "error"):
                r.read()
                break
        total = time.monotonic() - t0
        if not last or last.get("type") != "session.task_complete" or last.get("stopped"):
            self.error("turn ended with %s" % ((last or {}).get("error") or (last or {}).get("type")), last)
            return
        with self.lock:
            self.ok += 1
            self.first.append(first)
            self.total.append(total)

    def loop(self, u, i):
        u = dict(u)
        api = Api(self.base)
        signed_in = time.monotonic()
        n = 0
        u_host = urllib.parse.urlsplit(self.base)
        while time.monotonic() < self.deadline:
            n += 1
            if time.monotonic() - signed_in > 600:  # access tokens live 15 minutes
                st, j = api.call("POST", "/auth/login", {"email": u["email"], "password": u["password"]})
                if st == 200:
                    u["token"], signed_in = j["accessToken"], time.monotonic()
            # every fifth turn the agent edits index.html (a tool call, a commit, a thumbnail job)
            text = "add a footer (soak %d.%d)" % (i, n) if n % 5 == 0 else "hello from the soak, turn %d.%d" % (i, n)
            conn = http.client.HTTPConnection(u_host.hostname, u_host.port, timeout=120)
            try:
                self.turn(conn, u, text)
            except (OSError, http.client.HTTPException) as e:
                self.error("connection", repr(e))
                time.sleep(0.5)
            finally:
                conn.close()
            time.sleep(self.pause)

    def start(self):
        for t in self.threads:
            t.start()

    def join(self):
        for t in self.threads:
            t.join(timeout=180)


# ---------------------------------------------------------------- processes and RSS

def read_pid(path):
    try:
        with open(path) as f:
            return int(f.read().strip())
    except (OSError, ValueError):
        return None


def proc_table():
    """{pid: (ppid, program name)} of every process."""
    t = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % d) as f:
                s = f.read()
            ppid = int(s[s.rindex(")") + 2:].split()[1])
            try:
                name = os.path.basename(os.readlink("/proc/%s/exe" % d))
            except OSError:
                name = s[s.index("(") + 1:s.rindex(")")]
            t[int(d)] = (ppid, name)
        except (OSError, ValueError):
            continue
    return t


def rss_kb(pid):
    """(VmRSS, RssAnon) of pid in kB, or (None, None): RssAnon is the heap, stacks and private mappings,
    the rest of VmRSS the pages of mapped files (libraries) and shared memory."""
    rss = anon = None
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    rss = int(line.split()[1])
                elif line.startswith("RssAnon:"):
                    anon = int(line.split()[1])
    except OSError:
        pass
    return rss, anon


def descendants(table, root):
    out, todo = [], [root]
    while todo:
        p = todo.pop()
        kids = [c for c, (pp, _) in table.items() if pp == p]
        out += kids
        todo += kids
    return out


def sample_rss(var):
    """{kind: {"procs": n, "sum_kb": .., "max_kb": .., "pids": [...]}} for the stack in VAR."""
    table = proc_table()
    kinds = {}

    def add(kind, pid):
        kb, anon = rss_kb(pid)
        if kb is None:
            return
        k = kinds.setdefault(kind, {"procs": 0, "sum_kb": 0, "anon_kb": 0, "max_kb": 0, "pids": [], "kb": {},
                                    "anon": {}})
        k["procs"] += 1
        k["sum_kb"] += kb
        k["anon_kb"] += anon or 0
        k["max_kb"] = max(k["max_kb"], kb)
        k["pids"].append(pid)
        k["kb"][str(pid)] = kb
        k["anon"][str(pid)] = anon or 0

    def responder(pid):
        name = table[pid][1]
        return "responder " + (name[:-5] if name.endswith(".fcgi") else name)

    lp = read_pid(os.path.join(var, "run/lighttpd.pid"))
    if lp:
        add("lighttpd", lp)
        for c in descendants(table, lp):
            add(responder(c), c)
    # Apache (SVC_DEV_SERVER=apache): its processes, and the responders' pools (the --listen parent and
    # its children) from run-apache/'s pid files
    ap = read_pid(os.path.join(var, "apache/apache2.pid"))
    if ap and ap in table:
        add("apache2", ap)
        for c in descendants(table, ap):
            add("apache2", c)
        rd = os.path.join(var, "run-apache")
        for n in sorted(os.listdir(rd)) if os.path.isdir(rd) else []:
            p = read_pid(os.path.join(rd, n)) if n.endswith(".pid") else None
            if p and p in table:
                for c in [p] + descendants(table, p):
                    add(responder(c), c)
    for kind, pf in (("mariadbd", "mariadb/mariadbd.pid"), ("svc-wsd", "run/svc-wsd.pid"),
                     ("svc-worker", "run/svc-worker.pid")):
        p = read_pid(os.path.join(var, pf))
        if p:
            add(kind, p)
            if kind == "svc-worker":
                for c in descendants(table, p):
                    add("svc-worker's children (Chromium, transient)", c)
    return kinds


def sample_rss_low(var, n=10, gap=0.5):
    """sample_rss's n samples gap seconds apart, each process at its lowest of them (kinds' sums and largest
    from those): the resident memory without what a request in flight holds for a moment (svc-auth's
    19 MiB Argon2id block, a chat turn's history); a pooled process under load is between two requests
    at least once in a few seconds."""
    low = None
    for i in range(n):
        if i:
            time.sleep(gap)
        s = sample_rss(var)
        if low is None:
            low = s
            continue
        for k, v in s.items():
            if k not in low:
                low[k] = v
                continue
            for pid, kb in v["kb"].items():
                low[k]["kb"][pid] = min(low[k]["kb"].get(pid, kb), kb)
                low[k]["anon"][pid] = min(low[k]["anon"].get(pid, v["anon"][pid]), v["anon"][pid])
    for v in (low or {}).values():
        v["pids"] = sorted(int(p) for p in v["kb"])
        v["procs"] = len(v["kb"])
        v["sum_kb"] = sum(v["kb"].values())
        v["anon_kb"] = sum(v["anon"].values())
        v["max_kb"] = max(v["kb"].values())
    return low


def loadavg():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


# ---------------------------------------------------------------- report

def hist_percentiles(hist):
    items = sorted((float(b), c) for b, c in hist.items())
    n = sum(c for _, c in items)
    out = {}
    for q in (0.5, 0.99):
        want, acc = q * n, 0
        for b, c in items:
            acc += c
            if acc >= want:
                out[q] = b / 1000.0
                break
    return out.get(0.5), out.get(0.99)


def fmt(v, digits=None):
    """A latency in ms with about two significant digits (the histograms keep two)."""
    if v is None:
        return "-"
    if digits is None:
        digits = 0 if v >= 100 else 1 if v >= 10 else 2
    return "%.*f" % (digits, v)


def pct(a, b):
    return None if not a else 100.0 * (b - a) / a


def report(res):
    L = []
    L.append("soak: %d s of mixed load, %s UTC, commit %s, load average %s at the start, %s at the end (%d cores)" % (
        res["seconds"], res["started"], res["commit"], res["load_start"], res["load_end"], os.cpu_count() or 0))
    L.append("")
    L.append("| kind | requests | per s | p50 ms | p99 ms | errors | designed 429 |")
    L.append("|---|--:|--:|--:|--:|--:|--:|")
    w = res.get("http") or {}
    secs = (w.get("duration_us") or 1) / 1e6
    tot_n = tot_err = 0
    for k in ("get_project", "list_projects", "list_files", "timeline", "get_file", "patch_project", "folder",
              "put_file", "direct_save", "signin"):
        s = (w.get("kinds") or {}).get(k)
        if not s:
            continue
        p50, p99 = hist_percentiles(s["hist"])
        errs = sum(s["errors"].values()) if s["errors"] else 0
        tot_n += s["n"]
        tot_err += errs
        e = "%d" % errs + (" (%s)" % ", ".join("%s: %d" % kv for kv in sorted(s["errors"].items())) if errs else "")
        L.append("| http %s | %d | %.1f | %s | %s | %s | %s |" % (k, s["n"], s["n"] / secs, fmt(p50), fmt(p99), e,
                                                              s["limited"] if k == "signin" else "-"))
    # wrk's "status" errors are the answers >= 400, counted per kind above (designed 429s apart)
    sock = {k: v for k, v in (w.get("socket_errors") or {}).items() if k != "status"}
    L.append("| **http, all** | %d | %.1f | | | %d (of them socket errors and timeouts: %s) | |" % (
        tot_n, tot_n / secs, tot_err + sum(sock.values()),
        ", ".join("%s %d" % (k, v) for k, v in sorted(sock.items())) or "-"))
    c = res.get("chat") or {}
    if c:
        f, t = sorted(c["first_s"]), sorted(c["total_s"])
        L.append("| chat turn (SSE, %d streams), first event | %d | %.2f | %s | %s | %d%s | - |" % (
            c["streams"], c["ok"], c["ok"] / res["seconds"], fmt(percentile(f, 0.5) and percentile(f, 0.5) * 1000),
            fmt(percentile(f, 0.99) and percentile(f, 0.99) * 1000), sum(c["errors"].values()),
            " " + json.dumps(c["errors"]) if c["errors"] else ""))
        L.append("| chat turn, whole turn | | | %s | %s | | |" % (
            fmt(percentile(t, 0.5) and percentile(t, 0.5) * 1000), fmt(percentile(t, 0.99) and percentile(t, 0.99) * 1000)))
    d = res.get("collab") or {}
    if d.get("updatesPerSec") is not None:
        L.append("| collab edit (%d rooms x %d typists), update -> every client | %d updates, %d deliveries (%.2f %%) | %.0f /s | %s | %s | %d sockets closed | - |" % (
            d["rooms"], d["clients"], round(d["updatesPerSec"] * d["seconds"]), round(d["deliveredPerSec"] * d["seconds"]),
            100 * d["deliveryRatio"], d["updatesPerSec"], fmt(d["p50ms"]), fmt(d["p99ms"]), d["closed"]))
    elif d:
        L.append("| collab edit | failed: %s | | | | | |" % d.get("error"))
    L.append("")
    L.append("RSS (VmRSS from /proc, each process at its lowest of ten readings in 5 s) after the %d s warm-up "
             "and at the end of the load:" % res["warmup"])
    L.append("")
    L.append("| process | procs start/end (new) | sum start | sum end | change | of it anonymous (heap, stacks) "
             "| max start | max end | change | largest change of one process |")
    L.append("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|")
    a, b = res["rss_start"], res["rss_end"]
    for k in sorted(set(a) | set(b)):
        x, y = a.get(k, {}), b.get(k, {})
        new = len(set(y.get("pids", [])) - set(x.get("pids", [])))
        # each process that lived from start to end against itself (a new process is no growth)
        xk, yk = x.get("kb") or {}, y.get("kb") or {}
        own = [pct(xk[p], yk[p]) for p in xk if p in yk and xk[p]]
        L.append("| %s | %s/%s (%d) | %s | %s | %s | %s -> %s | %s | %s | %s | %s |" % (
            k, x.get("procs", 0), y.get("procs", 0), new, mib(x.get("sum_kb")), mib(y.get("sum_kb")),
            sign(pct(x.get("sum_kb"), y.get("sum_kb")), k), mib(x.get("anon_kb")), mib(y.get("anon_kb")),
            mib(x.get("max_kb")), mib(y.get("max_kb")),
            sign(pct(x.get("max_kb"), y.get("max_kb")), k), sign(max(own, key=abs) if own else None, k)))
    L.append("")
    L.append("Thumbnails svc-worker rendered during the soak: %s." % res.get("thumbnails_rendered"))
    lt = res.get("log_trouble") or {}
    L.append("Log lines that look like trouble (error, warn, timeout, ...): " + (", ".join(
        "%s %d (first: %s)" % (k, len(v), v[0][:160]) for k, v in sorted(lt.items())) or "none") + ".")
    samples = (w.get("error_samples") or []) + ((c or {}).get("samples") or [])
    if samples:
        L.append("")
        L.append("First errors: " + " | ".join(str(s) for s in samples[:8]))
    return "\n".join(L) + "\n"


def thumbnails_since(var, before):
    n = "svc-worker.log"
    try:
        with open(os.path.join(var, "logs", n), "rb") as f:
            f.seek(before.get(n, 0))
            return sum(1 for l in f if b"thumbnail: project=" in l)
    except OSError:
        return None


def mib(kb):
    return "-" if kb is None else "%.1f MiB" % (kb / 1024.0)


def sign(p, kind=""):
    return "-" if p is None or "transient" in kind else "%+.1f %%" % p


def log_sizes(var):
    """{name: bytes} of the stack's logs."""
    d = os.path.join(var, "logs")
    return {n: os.path.getsize(os.path.join(d, n)) for n in (sorted(os.listdir(d)) if os.path.isdir(d) else [])
            if n.endswith(".log")}


TROUBLE = re.compile(rb"error|warn|fatal|crit|sanitizer|abort|segv|timeout|timed out|unavailable", re.I)


def log_trouble(var, before):
    """{name: [lines written since the sizes in before that look like trouble]} (access logs aside)."""
    out = {}
    for n, size in log_sizes(var).items():
        if "access" in n or n.startswith("provider-double"):
            continue
        with open(os.path.join(var, "logs", n), "rb") as f:
            f.seek(before.get(n, 0))
            # the designed 429s of the sign-ins are logged as warnings: counted in the table, not here
            bad = [l.decode("utf-8", "replace").rstrip() for l in f if TROUBLE.search(l) and b"rate_limited" not in l]
        if bad:
            out[n] = bad
    return out


# ---------------------------------------------------------------- main

def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base", required=True, help="the web server, e.g. http://127.0.0.1:8080")
    ap.add_argument("--var", required=True, help="the stack's state directory (pid files)")
    ap.add_argument("--build", required=True, help="the build holding bench/wsd/wsd-drive")
    ap.add_argument("--seconds", type=int, default=600)
    ap.add_argument("--out", default=None)
    o = ap.parse_args()
    env = os.environ
    threads = int(env.get("SOAK_HTTP_THREADS", "8"))
    streams = int(env.get("SOAK_CHAT_STREAMS", "4"))
    rooms, clients = int(env.get("SOAK_ROOMS", "4")), int(env.get("SOAK_CLIENTS", "4"))
    rate = float(env.get("SOAK_EDIT_RATE", "5"))  # edits a second per typist
    warmup = int(env.get("SOAK_WARMUP_S", str(max(15, min(60, o.seconds // 10)))))
    sample_s = int(env.get("SOAK_SAMPLE_S", "30"))
    out = o.out or os.path.join(o.var, "soak")
    os.makedirs(out, exist_ok=True)
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H%M%SZ")
    base = o.base.rstrip("/")
    try:
        commit = subprocess.run(["git", "-C", HERE, "rev-parse", "--short", "HEAD"], capture_output=True,
                                text=True).stdout.strip()
    except OSError:
        commit = "?"

    print("soak: setting up %d users (2 projects each) and %d rooms" % (max(threads, streams), rooms), file=sys.stderr)
    users, collab, data, rooms_file = setup(base + "/api", max(threads, streams), rooms, out)

    res = {"started": stamp.replace("T", " ")[:-1], "seconds": o.seconds, "commit": commit, "warmup": warmup,
           "config": {"http_threads": threads, "http_delay_ms": int(env.get("SOAK_HTTP_DELAY_MS", "20")),
                      "chat_streams": streams, "rooms": rooms, "clients": clients, "edit_rate": rate,
                      "keep_bytes": int(env.get("SOAK_KEEP_BYTES", "2000"))}}
    rss_idle = sample_rss(o.var)
    logs0 = log_sizes(o.var)
    res["load_start"] = loadavg()
    t0 = time.monotonic()
    deadline = t0 + o.seconds
    procs = []

    # collaborative edits: wsd-drive through the web server's /ws/ (lighttpd proxies to svc-wsd)
    drive = os.path.join(o.build, "bench/wsd/wsd-drive")
    u = urllib.parse.urlsplit(base)
    wsd_pid = read_pid(os.path.join(o.var, "run/svc-wsd.pid"))
    dout = open(os.path.join(out, "collab.json"), "w")
    derr = open(os.path.join(out, "collab.log"), "w")
    if os.access(drive, os.X_OK):
        procs.append(("collab", subprocess.Popen(
            [drive, "--host", u.hostname, "--port", str(u.port), "--path", "/ws/project", "--token", collab["token"],
             "--room-ids", rooms_file, "--rooms", str(rooms), "--clients", str(clients), "--rate", str(rate),
             "--seconds", str(o.seconds), "--doc-bytes", env.get("SOAK_DOC_BYTES", "50000"), "--settle-ms", "500",
             "--keep-bytes", env.get("SOAK_KEEP_BYTES", "2000")]
            + (["--server-pid", str(wsd_pid)] if wsd_pid else []), stdout=dout, stderr=derr)))
    else:
        print("soak: %s is not built: no collaborative edits" % drive, file=sys.stderr)

    # HTTP: wrk with mix.lua
    wrk_out = os.path.join(out, "http.json")
    wenv = dict(env, SOAK_DATA=data, SOAK_WRK_OUT=wrk_out)
    wlog = open(os.path.join(out, "wrk.log"), "w")
    procs.append(("http", subprocess.Popen(
        ["wrk", "-t", str(threads), "-c", str(threads), "-d", "%ds" % o.seconds, "--timeout", "10s",
         "-s", os.path.join(HERE, "mix.lua"), base], env=wenv, stdout=wlog, stderr=subprocess.STDOUT)))

    chat = Chat(base, users, streams, deadline, float(env.get("SOAK_CHAT_PAUSE_S", "1")))
    chat.start()

    # RSS: after the warm-up ("start"), every sample_s, and just before the end ("end")
    timeline = []
    next_at = t0 + warmup
    rss_start = rss_end = None
    while True:
        now = time.monotonic()
        if now >= deadline - 4:
            rss_end = sample_rss_low(o.var)
            timeline.append({"t": round(now - t0), "load": loadavg(),
                             "rss_kb": {k: v["sum_kb"] for k, v in rss_end.items()},
                             "anon_kb": {k: v["anon_kb"] for k, v in rss_end.items()}})
            break
        if now >= next_at:
            s = sample_rss_low(o.var)
            if rss_start is None:
                rss_start = s
            timeline.append({"t": round(now - t0), "load": loadavg(), "rss_kb": {k: v["sum_kb"] for k, v in s.items()},
                             "anon_kb": {k: v["anon_kb"] for k, v in s.items()}})
            print("soak: %4d s  load %s  %s" % (now - t0, loadavg(), "  ".join(
                "%s %.0fM" % (k.replace("responder ", ""), v["sum_kb"] / 1024) for k, v in sorted(s.items())
                if "transient" not in k)), file=sys.stderr)
            next_at += sample_s
        time.sleep(min(1.0, max(0.05, min(next_at, deadline - 4) - now)))
    res["load_end"] = loadavg()
    chat.join()
    for name, p in procs:
        try:
            p.wait(timeout=120)
        except subprocess.TimeoutExpired:
            p.kill()
            print("soak: %s did not finish; killed" % name, file=sys.stderr)
    dout.close()
    derr.close()
    res["rss_idle"], res["rss_start"], res["rss_end"] = rss_idle, rss_start or rss_end, rss_end
    res["rss_timeline"] = timeline
    try:
        with open(wrk_out) as f:
            res["http"] = json.load(f)
    except (OSError, ValueError) as e:
        res["http"] = {"error": repr(e)}
    try:
        with open(os.path.join(out, "collab.json")) as f:
            res["collab"] = json.loads(f.read().strip().splitlines()[-1])
    except (OSError, ValueError, IndexError) as e:
        res["collab"] = {"error": "%r (see %s)" % (e, os.path.join(out, "collab.log"))}
    res["chat"] = {"streams": len(chat.users), "ok": chat.ok, "errors": chat.errors, "samples": chat.samples,
                   "first_s": chat.first, "total_s": chat.total}
    res["log_trouble"] = log_trouble(o.var, logs0)
    res["thumbnails_rendered"] = thumbnails_since(o.var, logs0)
    text = report(res)
    base_name = os.path.join(out, "soak-" + stamp)
    with open(base_name + ".json", "w") as f:
        json.dump(res, f, indent=1)
    with open(base_name + ".md", "w") as f:
        f.write(text)
    sys.stdout.write(text)
    print("\nsoak: results in %s.json and .md" % base_name, file=sys.stderr)


if __name__ == "__main__":
    main()
