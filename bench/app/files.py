#!/usr/bin/env python3
# files.py: the apps' files (svc-app's /_svc/files, issue 28) on a running stack: one end user on a project's preview
# uploads, reads back and deletes files of a few sizes, one request at a time, and the latency of each step is
# printed (p50, p99, and MB/s of the upload and the read). The bytes go through the web server, svc-app and MariaDB
# (rows of 256 KiB); this measures that path, not a load.
#
# usage: set -a; . var-test/test.env; set +a; python3 bench/app/files.py [--rounds N] [--sizes KIB,KIB...]
#   against the test stack ./svc-dev test leaves with SVC_TEST_KEEP=1 (SVC_BASE_URL, SVC_HTTP_PORT, SVC_DOMAIN);
#   sizes at most SVC_APP_FILE_MAX_MB (1 MiB on the test stack), default 16,256,1024 KiB, 30 rounds each.
import argparse
import json
import os
import secrets
import sys
import time
import urllib.parse

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "e2e"))
from svclib import HTTP_PORT, api, create_project, request, signup  # noqa: E402


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100.0 * (len(xs) - 1))))]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=30)
    ap.add_argument("--sizes", default="16,256,1024")
    args = ap.parse_args()
    a = signup(tag="bench-files")
    pid = create_project(a, template="blank").body["id"]
    api("PUT", "/projects/%s/files/svc.data.json" % pid, {"content": json.dumps({"files": {}})}, token=a.token)
    host = urllib.parse.urlsplit(api("GET", "/projects/%s/preview" % pid, token=a.token).body["url"]).netloc
    base = "http://127.0.0.1:%d" % HTTP_PORT
    h = {"Host": host, "Origin": "http://" + host, "Content-Type": "application/json"}
    r = request("POST", base + "/_svc/auth/signup", json.dumps({"email": "bench-%s@example.com" % secrets.token_hex(4),
                                                                 "password": "pw-" + secrets.token_hex(6)}).encode(), h)
    h["Cookie"] = next(c for c in r.cookies if c.startswith("svc_app_session=")).split(";")[0]
    print("| size | upload p50 / p99 | get p50 / p99 | delete p50 / p99 | upload, get MB/s (p50) |")
    print("|---|---|---|---|---|")
    for kib in [int(x) for x in args.sizes.split(",")]:
        data = secrets.token_bytes(kib * 1024)
        up, get, dele = [], [], []
        for _ in range(args.rounds):
            t0 = time.perf_counter()
            r = request("POST", base + "/_svc/files", data, dict(h, **{"Content-Type": "application/octet-stream"}))
            t1 = time.perf_counter()
            g = request("GET", base + "/_svc/files/" + r.body["id"], None, h)
            t2 = time.perf_counter()
            d = request("DELETE", base + "/_svc/files/" + r.body["id"], None, h)
            t3 = time.perf_counter()
            if r.status != 201 or g.raw != data or d.status != 204:
                sys.exit("bench/app/files.py: a round failed: %r %r %r" % (r, g.status, d))
            up.append(t1 - t0)
            get.append(t2 - t1)
            dele.append(t3 - t2)
        ms = lambda xs: "%.1f / %.1f ms" % (pct(xs, 50) * 1000, pct(xs, 99) * 1000)  # noqa: E731
        mbs = kib / 1024.0
        print("| %d KiB | %s | %s | %s | %.0f, %.0f |" % (kib, ms(up), ms(get), ms(dele), mbs / pct(up, 50),
                                                         mbs / pct(get, 50)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
