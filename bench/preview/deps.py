#!/usr/bin/env python3
# bench/preview/deps.py: what reusing node_modules saves (lib/project/deps.c), against a running stack
# (./svc-dev up): the React template published twice (the second after a change of src/ only), then a second
# project with the same lockfile (another package.json name: another key) installing from the shared cache.
# Prints each publish's wall time and its install line. With SVC_BUILD_NETWORK=0 on the stack the second
# project must install from the cache alone.
#
#   python3 bench/preview/deps.py [BASE_URL]      (default http://127.0.0.1:8080/api)
import os
import re
import secrets
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "e2e"))
if len(sys.argv) > 1:
    os.environ["SVC_BASE_URL"] = sys.argv[1]
from svclib import api as _api, signup  # noqa: E402

TEMPLATE_DIRS = ("templates/react", "bench/preview/react-template")


def api(method, path, body=None, token=None, timeout=300):
    r = _api(method, path, body, token=token, timeout=timeout)
    return r.status, r.body


def files_of(root):
    for d, _, names in os.walk(root):
        for n in names:
            p = os.path.join(d, n)
            yield os.path.relpath(p, root), open(p, encoding="utf-8").read()


def project(token, wid, name, root, rename=None):
    s, p = api("POST", "/workspaces/%s/projects" % wid, {"name": name, "template": "blank"}, token)
    pid = p["id"]
    for rel, text in sorted(files_of(root), key=lambda f: f[0] == "package.json"):
        if rel == "package.json" and rename:
            text = re.sub(r'"name": "[^"]*"', '"name": "%s"' % rename, text, count=1)
        api("PUT", "/projects/%s/files/%s" % (pid, rel), {"content": text, "overwrite": True}, token)
    return pid


def publish(token, pid, what):
    t0 = time.monotonic()
    s, r = api("POST", "/deploy/%s" % pid, None, token)
    took = time.monotonic() - t0
    log = ((r or {}).get("deployment") or {}).get("logExcerpt") or ""
    lines = [l for l in log.splitlines() if re.search(r"node_modules reused|^\$ npm (ci|install)|added \d+ packages|installed in", l)]
    print("%-52s %6.1f s  %s" % (what, took, " | ".join(lines) or "(status %s)" % s))
    return took


def main():
    root = next((d for d in TEMPLATE_DIRS if os.path.isdir(d)), None)
    if not root:
        sys.exit("run from the repository's top: no templates/react or bench/preview/react-template")
    acct = signup(tag="bench-deps")
    token, wid = acct.token, acct.workspace_id
    tag = secrets.token_hex(3)
    a = project(token, wid, "deps bench A", root, rename="bench-a-" + tag)
    publish(token, a, "A: first publish (installs)")
    api("PUT", "/projects/%s/files/src/bench.txt" % a, {"content": tag, "overwrite": True}, token)
    publish(token, a, "A: after a change of src/ only (reuses)")
    b = project(token, wid, "deps bench B", root, rename="bench-b-" + tag)
    publish(token, b, "B: same lockfile, another package.json (cache)")


if __name__ == "__main__":
    main()
