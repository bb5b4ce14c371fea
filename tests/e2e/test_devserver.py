#!/usr/bin/env python3
# test_devserver.py: dev servers on demand (svc-devd, docs/operations.md "Dev servers"): the first view starts one, changes reach it without a restart, its websocket passes lighttpd and Apache, it has no network and cannot write the tree, it stops after its idle time and the next view starts it again, the third of two stops the least recently viewed, a crash is restarted once and then the preview is the build with the error shown
import base64
import hashlib
import hmac
import json
import os
import secrets
import socket
import sys
import time
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from svclib import (DOMAIN, HTTP_PORT, api, check, create_project, finish, request, setting, signup,  # noqa: E402
                    skip_rest)

DEVD_URL = os.environ.get("SVC_TEST_DEVD_URL", "")
APACHE_URL = os.environ.get("SVC_TEST_APACHE_URL", "")
IDLE = int(setting("SVC_DEVSERVER_IDLE_SECS") or 300)
MAX = int(setting("SVC_DEVSERVER_MAX") or 8)

# A dev server without dependencies: node's own http module, on the PORT and HOST svc-devd gives it. /data says
# what it saw, /probe what the sandbox lets it do, /crash ends it, and a websocket upgrade gets one text frame.
SERVER = r"""
import http from 'node:http';
import fs from 'node:fs';
import net from 'node:net';
import crypto from 'node:crypto';
const started = Date.now();
function probeNet(port) {
  return new Promise((done) => {
    const s = net.connect({ host: '127.0.0.1', port }, () => { s.destroy(); done('connected'); });
    s.on('error', (e) => done(e.code));
    setTimeout(() => { s.destroy(); done('timeout'); }, 2000);
  });
}
const server = http.createServer(async (req, res) => {
  if (req.url === '/crash') { res.end('bye'); setTimeout(() => process.exit(3), 20); return; }
  if (req.url.startsWith('/data')) {
    res.setHeader('Content-Type', 'application/json');
    res.end(JSON.stringify({ url: req.url, host: req.headers.host, pid: process.pid, started, uid: process.getuid() }));
    return;
  }
  if (req.url.startsWith('/probe')) {
    let write = 'written';
    try { fs.writeFileSync('probe.txt', 'x'); } catch (e) { write = e.code; }
    const port = Number(new URL(req.url, 'http://x').searchParams.get('port'));
    res.setHeader('Content-Type', 'application/json');
    res.end(JSON.stringify({ write, net: await probeNet(port), external: await probeNet(80) }));
    return;
  }
  const msg = fs.readFileSync('msg.txt', 'utf8');
  res.setHeader('Content-Type', 'text/html; charset=utf-8');
  res.end('<!doctype html><title>dev</title><p id="msg">' + msg + '</p>');
});
server.on('upgrade', (req, sock) => {
  const accept = crypto.createHash('sha1').update(req.headers['sec-websocket-key'] + '258EAFA5-E914-47DA-95CA-C5AB0DC85B11').digest('base64');
  sock.write('HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ' + accept + '\r\n\r\n');
  const text = Buffer.from('hello ' + req.url);
  sock.write(Buffer.concat([Buffer.from([0x81, text.length]), text]));
});
server.listen(Number(process.env.PORT), process.env.HOST);
"""
BUILD = "import fs from 'node:fs';\nfs.mkdirSync('dist', { recursive: true });\n" \
        "fs.writeFileSync('dist/index.html', '<!doctype html><title>built</title><p id=\"msg\">the build</p>\\n');\n"
PACKAGE = {"name": "dev-e2e", "private": True, "version": "0.0.0", "type": "module",
           "scripts": {"dev": "node server.mjs", "build": "node build.mjs"}}
LOCK = {"name": "dev-e2e", "version": "0.0.0", "lockfileVersion": 3, "requires": True,
        "packages": {"": {"name": "dev-e2e", "version": "0.0.0"}}}


def put(a, pid, path, text):
    return api("PUT", "/projects/%s/files/%s" % (pid, path), {"content": text, "overwrite": True}, token=a.token)


def dev_project(a, msg):
    """A blank project made a dev-server project: package.json with a dev script, its server, msg.txt."""
    r = create_project(a, template="blank")
    pid = (r.body or {}).get("id") if isinstance(r.body, dict) else None
    if not pid:
        return None
    for path, text in (("server.mjs", SERVER), ("build.mjs", BUILD), ("msg.txt", msg),
                       ("package-lock.json", json.dumps(LOCK)), ("package.json", json.dumps(PACKAGE))):
        if put(a, pid, path, text).status not in (200, 201):
            return None
    return pid


def preview_host(a, pid):
    r = api("GET", "/projects/%s/preview" % pid, token=a.token)
    url = r.body["url"] if r.status == 200 else None
    return urllib.parse.urlsplit(url).netloc if url else None


def pget(host, path="/", base=None, accept="text/html"):
    base = base or "http://127.0.0.1:%d" % HTTP_PORT
    return request("GET", base + path, None, {"Host": host, "Accept": accept})


def wait_running(host, secs=90, base=None, keep=()):
    """Views the preview until the dev server answers (not "Starting the dev server"), viewing the `keep` hosts
    too (so their idle time does not run out meanwhile); the last answer and the time it took."""
    t0 = time.time()
    r = None
    while time.time() - t0 < secs:
        r = pget(host, "/data", base=base, accept="application/json")
        if r.status == 200 and isinstance(r.body, dict) and "pid" in r.body:
            return r, time.time() - t0
        for k in keep:
            pget(k, "/data", accept="application/json")
        time.sleep(0.25)
    return r, time.time() - t0


def status():
    """svc-devd's GET /internal/status, signed as the internal calls are (docs/conventions.md "Internal calls")."""
    ts = str(int(time.time()))
    nonce = secrets.token_hex(16)
    msg = "GET\n/internal/status\n%s\n%s\n%s" % (ts, nonce, hashlib.sha256(b"").hexdigest())
    sig = hmac.new((setting("INTERNAL_SECRET") or "").encode(), msg.encode(), hashlib.sha256).hexdigest()
    r = request("GET", DEVD_URL + "/internal/status", None,
                {"X-Svc-Timestamp": ts, "X-Svc-Nonce": nonce, "X-Svc-Signature": "v2=" + sig})
    return {s["projectId"]: s for s in (r.body or {}).get("servers", [])} if r.status == 200 else None


def ws_hello(host, port, path="/hmr"):
    """A websocket upgrade through the front end on `port`: the status line and the first frame's text."""
    key = base64.b64encode(os.urandom(16)).decode()
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    try:
        s.sendall(("GET %s HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                   "Sec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n\r\n" % (path, host, key)).encode())
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = s.recv(4096)
            if not chunk:
                break
            data += chunk
        head, _, rest = data.partition(b"\r\n\r\n")
        line = head.split(b"\r\n", 1)[0].decode(errors="replace")
        want = base64.b64encode(hashlib.sha1((key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").encode()).digest())
        if " 101 " not in line:
            return line, None
        deadline = time.time() + 5
        while len(rest) < 2 and time.time() < deadline:
            rest += s.recv(4096)
        n = rest[1] & 0x7f if len(rest) >= 2 else 0
        while len(rest) < 2 + n and time.time() < deadline:
            rest += s.recv(4096)
        ok_accept = want in head
        return line, rest[2:2 + n].decode(errors="replace") if ok_accept else "bad accept"
    finally:
        s.close()


def other_host(host):
    """The same preview host with its token's last character changed: a forged token."""
    label, rest = host.split(".", 1)
    return label[:-1] + ("b" if label[-1] != "b" else "c") + "." + rest


def test_start(a, pid, host):
    r = pget(host, "/")
    check("test_devserver_first_view_says_starting",
          r.status == 503 and b"Starting the dev server" in r.raw and r.headers.get("refresh") == "1", r)
    r, took = wait_running(host)
    print("# first dev server answered %.1f s after the first view" % took)
    check("test_devserver_starts_on_demand", r is not None and r.status == 200, r)
    if r is None or r.status != 200:
        return None
    d = r.body
    check("test_devserver_gets_a_host_it_accepts", d.get("host") == "127.0.0.1:5173", d)
    check("test_devserver_runs_as_the_build_user", d.get("uid") == int(setting("SVC_BUILD_UID") or 65534), d)
    q = pget(host, "/data/x?import&v=1", accept="application/json")
    check("test_devserver_gets_the_query", q.status == 200 and (q.body or {}).get("url") == "/data/x?import&v=1", q)
    page = pget(host, "/")
    check("test_devserver_page_has_the_preview_script",
          page.status == 200 and b'<p id="msg">one</p>' in page.raw and b"<script>" in page.raw[page.raw.index(b"</p>"):], page)
    check("test_devserver_answers_cross_origin", page.headers.get("access-control-allow-origin") == "*", page.headers)
    st = status() or {}
    check("test_devserver_status_lists_it_running", st.get(pid, {}).get("state") == "running", st)
    check("test_devserver_status_has_its_memory", st.get(pid, {}).get("memoryBytes", 0) > 1 << 20, st)
    return d


def test_change(a, pid, host, first):
    t0 = time.time()
    put(a, pid, "msg.txt", "two")
    seen = None
    while time.time() - t0 < 10:
        r = pget(host, "/")
        if r.status == 200 and b'<p id="msg">two</p>' in r.raw:
            seen = time.time() - t0
            break
        time.sleep(0.05)
    print("# a saved change reached the dev server in %s s" % ("%.2f" % seen if seen is not None else "never"))
    check("test_devserver_sees_a_saved_change", seen is not None and seen < 3, seen)
    d = pget(host, "/data", accept="application/json").body or {}
    check("test_devserver_change_needs_no_restart", d.get("pid") == first.get("pid") and d.get("started") == first.get("started"), d)


def test_websocket(host):
    line, text = ws_hello(host, HTTP_PORT, "/hmr?token=x")
    check("test_devserver_websocket_through_lighttpd", " 101 " in line and text == "hello /hmr?token=x", (line, text))
    if APACHE_URL:
        port = urllib.parse.urlsplit(APACHE_URL).port
        ahost = host.rsplit(":", 1)[0] + ":%d" % port
        line, text = ws_hello(ahost, port, "/hmr")
        check("test_devserver_websocket_through_apache", " 101 " in line and text == "hello /hmr", (line, text))
        r = pget(ahost, "/data", base=APACHE_URL, accept="application/json")
        check("test_devserver_http_through_apache", r.status == 200 and "pid" in (r.body or {}), r)
    line, text = ws_hello(other_host(host), HTTP_PORT)
    check("test_devserver_websocket_forged_token_403", " 403 " in line and text is None, line)
    r = pget(other_host(host), "/data", accept="application/json")
    check("test_devserver_http_forged_token_403", r.status == 403, r)


def test_sandbox(host):
    r = pget(host, "/probe?port=%d" % HTTP_PORT, accept="application/json")
    d = r.body if r.status == 200 and isinstance(r.body, dict) else {}
    check("test_devserver_cannot_write_the_tree", d.get("write") in ("EROFS", "EACCES"), r)
    check("test_devserver_cannot_reach_the_host", d.get("net") in ("ECONNREFUSED", "ENETUNREACH", "timeout"), r)
    check("test_devserver_cannot_reach_outside", d.get("external") in ("ECONNREFUSED", "ENETUNREACH", "timeout"), r)


def test_status_unsigned():
    r = request("GET", DEVD_URL + "/internal/status", None, {})
    check("test_devserver_status_unsigned_401", r.status == 401, r)
    r = pget("localhost:%d" % HTTP_PORT, "/data")
    check("test_devserver_not_a_preview_host_is_not_proxied", r.status != 200 or "pid" not in (r.body or {}), r)


def test_idle(a, pid, host, first):
    time.sleep(IDLE + 2)
    st = status() or {}
    check("test_devserver_stops_after_its_idle_time", pid not in st, st)
    r, took = wait_running(host)
    d = r.body if r is not None and r.status == 200 else {}
    check("test_devserver_next_view_starts_it_again", d.get("pid") is not None and d.get("started") != first.get("started"), r)


def test_lru(a, hosts, pids):
    """MAX servers run; the next one stops the least recently viewed."""
    for i, h in enumerate(hosts[:MAX]):
        wait_running(h, keep=hosts[:i])
    # view every one but the first again, so the first is the least recently viewed
    time.sleep(0.3)
    for h in hosts[1:MAX]:
        pget(h, "/data", accept="application/json")
    st = status() or {}
    check("test_devserver_max_run_at_once", all(st.get(p, {}).get("state") == "running" for p in pids[:MAX]), st)
    pget(hosts[MAX], "/")
    st = status() or {}
    check("test_devserver_next_stops_the_least_recently_viewed",
          pids[0] not in st and all(p in st for p in pids[1:MAX + 1]), st)
    r, _ = wait_running(hosts[MAX], keep=hosts[1:MAX])
    check("test_devserver_next_one_runs", r is not None and r.status == 200, r)
    st = status() or {}
    check("test_devserver_never_more_than_max", len([s for s in st.values() if s["state"] != "failed"]) <= MAX, st)


def test_crash(a, pid, host):
    wait_running(host)
    first = pget(host, "/data", accept="application/json").body or {}
    pget(host, "/crash")
    time.sleep(0.5)
    r, _ = wait_running(host, 60)
    d = r.body if r is not None and r.status == 200 else {}
    st = status() or {}
    check("test_devserver_crash_restarted_once", d.get("pid") and d.get("started") != first.get("started")
          and st.get(pid, {}).get("restarts") == 1, (d, st))
    pget(host, "/crash")
    time.sleep(1)
    st = status() or {}
    check("test_devserver_second_crash_fails", st.get(pid, {}).get("state") == "failed"
          and "status 3" in st.get(pid, {}).get("error", ""), st)
    # the preview falls back to the build, saying why
    t0 = time.time()
    page = None
    while time.time() - t0 < 90:
        page = pget(host, "/")
        if page.status == 200:
            break
        time.sleep(0.5)
    check("test_devserver_fallback_serves_the_build", page is not None and page.status == 200 and b"the build" in page.raw, page)
    check("test_devserver_fallback_shows_the_error", page is not None and b"svc-devserver-failed" in page.raw
          and b"The dev server stopped" in page.raw and b"status 3" in page.raw, page)


def main():
    names = ["test_devserver_first_view_says_starting", "test_devserver_starts_on_demand"]
    if not DEVD_URL:
        skip_rest("no svc-devd in this stack", names)
        return finish()
    a = signup(tag="devserver")
    pids, hosts = [], []
    for i in range(MAX + 1):
        pid = dev_project(a, "one")
        check("test_devserver_project_%d_made" % i, pid is not None, pid)
        if not pid:
            return finish()
        pids.append(pid)
        hosts.append(preview_host(a, pid))
    test_status_unsigned()
    first = test_start(a, pids[0], hosts[0])
    if first:
        test_change(a, pids[0], hosts[0], first)
        test_websocket(hosts[0])
        test_sandbox(hosts[0])
        test_idle(a, pids[0], hosts[0], first)
        test_lru(a, hosts, pids)
        test_crash(a, pids[1], hosts[1])
    return finish()


if __name__ == "__main__":
    sys.exit(main())
