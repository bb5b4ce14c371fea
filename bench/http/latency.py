#!/usr/bin/env python3
"""latency.py: median and p95 latency of GET /api/projects/:id and POST /api/auth/login through the web server.

Usage: bench/http/latency.py [BASE_URL] [N]   (default: $SVC_BASE_URL or http://127.0.0.1:8080/api, 200)
Signs up a fresh user, creates a project, then times N sequential requests of each kind over one
keep-alive connection (what a browser does), and prints one line per endpoint.
"""
import http.client, json, os, statistics, sys, time, urllib.parse, uuid

base = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("SVC_BASE_URL", "http://127.0.0.1:8080/api")
n = int(sys.argv[2]) if len(sys.argv) > 2 else 200
u = urllib.parse.urlsplit(base)
conn = http.client.HTTPConnection(u.hostname, u.port or 80, timeout=30)


def call(method, path, body=None, token=None):
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = "Bearer " + token
    data = json.dumps(body).encode() if body is not None else b""
    t0 = time.perf_counter()
    conn.request(method, u.path + path, body=data, headers=headers)
    r = conn.getresponse()
    payload = r.read()
    return r.status, payload, time.perf_counter() - t0


email = "bench-%s@example.test" % uuid.uuid4().hex[:12]
st, body, _ = call("POST", "/auth/signup", {"email": email, "password": "bench-password"})
assert st == 201, (st, body)
s = json.loads(body)
token, wid = s["accessToken"], s["workspace"]["id"]
st, body, _ = call("POST", "/workspaces/%s/projects" % wid, {"name": "bench", "template": "blank"}, token)
assert st == 201, (st, body)
pid = json.loads(body)["id"]


def measure(label, method, path, body=None, tok=None):
    times = []
    for _ in range(n):
        st, payload, dt = call(method, path, body, tok)
        assert st == 200, (st, payload)
        times.append(dt * 1000)
    times.sort()
    print("%-28s n=%d median=%.2f ms p95=%.2f ms min=%.2f ms" % (
        label, n, statistics.median(times), times[int(0.95 * (n - 1))], times[0]))


measure("GET /api/projects/:id", "GET", "/projects/" + pid, None, token)
measure("POST /api/auth/login", "POST", "/auth/login", {"email": email, "password": "bench-password"})
