#!/usr/bin/env python3
# measure.py: what a dev server costs (svc-devd, docs/operations.md "Dev servers"): the time from the first
# view of a React project's preview to its dev server's first answer, the memory of each running dev server
# (its cgroup's, from svc-devd's signed GET /internal/status) and the host's MemAvailable before and with N
# of them running. Against a running stack: the environment of tests/e2e (set -a; . var-test/test.env) or
# ./svc-dev up's (SVC_BASE_URL, SVC_HTTP_PORT, SVC_DATA_DIR, SVC_CONFIG or SVC_TEST_CONFIG for the secrets),
# SVC_TEST_DEVD_URL (default http://127.0.0.1:8082). svc-devd must allow N at once (SVC_DEVSERVER_MAX) and
# keep them (SVC_DEVSERVER_IDLE_SECS above the run's length).
# usage: bench/devserver/measure.py [N] [--seed NODE_MODULES_DIR]
#   --seed: copies NODE_MODULES_DIR (the template's installed node_modules) into svc-devd's copy of each
#   project before its first view, so the figures are the dev server's own, without the install (which is
#   the deps store's: bench/preview/ measures it).
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "e2e"))
os.environ.setdefault("SVC_TEST_DEVD_URL", "http://127.0.0.1:8082")
import test_devserver as td  # noqa: E402  (its status() signs the call)
from svclib import DATA_DIR, api, signup  # noqa: E402

TEMPLATE = next(d for d in (os.path.join(ROOT, "templates", "react"), os.path.join(ROOT, "bench", "preview", "react-template"))
                if os.path.exists(os.path.join(d, "package.json")))


def mem_available_mb():
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) // 1024
    return 0


def react_project(a):
    r = api("POST", "/workspaces/%s/projects" % a.workspace_id, {"name": "Bench dev %d" % time.time_ns(), "template": "blank"},
            token=a.token)
    pid = r.body["id"]
    api("DELETE", "/projects/%s/files/index.html" % pid, token=a.token)
    paths = []
    for d, _, names in os.walk(TEMPLATE):
        for n in names:
            rel = os.path.relpath(os.path.join(d, n), TEMPLATE)
            if not n.startswith(".") and n != "README.md" and "node_modules" not in rel:
                paths.append(rel)
    for rel in sorted(paths, key=lambda p: p == "package.json"):
        with open(os.path.join(TEMPLATE, rel)) as f:
            td.put(a, pid, rel, f.read())
    return pid


def seed(pid, modules):
    import hashlib
    with open(os.path.join(TEMPLATE, "package.json"), "rb") as f:
        pkg = f.read()
    with open(os.path.join(TEMPLATE, "package-lock.json"), "rb") as f:
        lock = f.read()
    key = hashlib.sha256(pkg + b"\0" + lock + b"\0").hexdigest()
    d = os.path.join(DATA_DIR, "builds", "dev-" + pid)
    os.makedirs(os.path.join(d, "app"), exist_ok=True)
    subprocess.run(["cp", "-a", modules, os.path.join(d, "app", "node_modules")], check=True)
    subprocess.run(["chown", "-R", "%s:%s" % (td.setting("SVC_BUILD_UID") or 65534, td.setting("SVC_BUILD_UID") or 65534),
                    os.path.join(d, "app", "node_modules")], check=True)
    with open(os.path.join(d, "deps.key"), "w") as f:
        f.write(key)


def main():
    args = sys.argv[1:]
    modules = None
    if "--seed" in args:
        i = args.index("--seed")
        modules = args[i + 1]
        del args[i:i + 2]
    n = int(args[0]) if args else 8
    a = signup(tag="benchdev")
    before = mem_available_mb()
    out = {"n": n, "seeded": bool(modules), "memAvailableBeforeMb": before, "startMs": [], "memoryMb": []}
    hosts, pids = [], []
    for _ in range(n):
        pid = react_project(a)
        if modules:
            seed(pid, modules)
        pids.append(pid)
        hosts.append(td.preview_host(a, pid))
    for i, h in enumerate(hosts):
        t0 = time.time()
        while time.time() - t0 < 600:
            r = td.pget(h, "/", accept="text/html")
            if r.status == 200 and b"/@vite/client" in r.raw:
                break
            for k in hosts[:i]:
                td.pget(k, "/", accept="text/html")
            time.sleep(0.5)
        out["startMs"].append(int((time.time() - t0) * 1000))
        print("# dev server %d answered after %.1f s" % (i + 1, time.time() - t0), flush=True)
    # the first page load makes Vite transform and pre-bundle: load each app's modules once
    for h in hosts:
        for path in ("/src/main.tsx", "/src/App.tsx", "/@vite/client", "/@react-refresh"):
            td.pget(h, path, accept="*/*")
    time.sleep(2)
    st = td.status() or {}
    out["memoryMb"] = [round(st[p]["memoryBytes"] / 1048576, 1) for p in pids if p in st]
    out["running"] = len([p for p in pids if st.get(p, {}).get("state") == "running"])
    out["memAvailableWithMb"] = mem_available_mb()
    out["devdStartMs"] = [st[p]["startMs"] for p in pids if p in st]
    print(json.dumps(out))


if __name__ == "__main__":
    main()
