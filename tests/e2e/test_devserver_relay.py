#!/usr/bin/env python3
# test_devserver_relay.py: large answers through the dev-server relay whole (issue 27): hundreds of fetches, several at once, of a module larger than 1 MB through the preview origin (svc-preview, svc-devd, the relay in the dev server's Node process), sent in one write as Vite's send() does, streamed with a Content-Length as a static file is, and chunked, every body byte-identical, also to a reader of svc-devd that stalls near the end; an answer the dev server cuts short is never a 200 that looks whole
import concurrent.futures
import http.client
import json
import os
import re
import socket
import sys
import time
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from svclib import HTTP_PORT, check, create_project, finish, signup, skip_rest  # noqa: E402
from test_devserver import DEVD_URL, LOCK, preview_host, put  # noqa: E402

APACHE_URL = os.environ.get("SVC_TEST_APACHE_URL", "")
SIZE = 1113580      # the size of react-dom_client.js in Vite's deps of the bench's project (issue 27)
CUT_AT = 600000     # where the cut answers stop
FETCHES = 240       # of each whole answer through lighttpd
AT_ONCE = 6

# The module: lines of JavaScript up to SIZE bytes, made the same way here and in the dev server (the files API takes
# at most 1 MiB a file, and the sandbox's tree is read-only).
MODULE_JS = r"""
const SIZE = %d;
export function moduleText() {
  const parts = [];
  let n = 0;
  for (let i = 0; n < SIZE - 64; i++) {
    const line = 'export const v' + i + ' = ' + ((i * 2654435761) %% 4294967296) + ';\n';
    parts.push(line);
    n += line.length;
  }
  parts.push('//' + 'x'.repeat(SIZE - n - 3) + '\n');
  return Buffer.from(parts.join(''));
}
""" % SIZE

# A dev server without dependencies (node's http module on the PORT and HOST svc-devd gives it):
#   /ready        {"pid"}
#   /big.js       the module in one end() with its Content-Length, as Vite's send() answers a transformed module
#   /stream.js    the module in 64 KiB writes after a Content-Length, as a static file is streamed
#   /chunked.js   the module in writes of 50,000 bytes without a length: chunked
#   /cut.js       a Content-Length of the whole module, CUT_AT bytes of it, then the connection ended (FIN)
#   /cut-chunked.js  chunked, CUT_AT bytes, then the connection ended without the last chunk
SERVER = r"""
import http from 'node:http';
import { moduleText } from './module.mjs';
const BIG = moduleText();
const CUT_AT = %d;
function pieces(res, buf, step, then) {
  let o = 0;
  const more = () => {
    while (o < buf.length) {
      const p = buf.subarray(o, o + step);
      o += p.length;
      if (!res.write(p)) { res.once('drain', more); return; }
    }
    then();
  };
  more();
}
const server = http.createServer((req, res) => {
  const path = req.url.split('?')[0];
  if (path === '/ready') {
    res.setHeader('Content-Type', 'application/json');
    res.end(JSON.stringify({ pid: process.pid, size: BIG.length }));
    return;
  }
  res.setHeader('Content-Type', 'text/javascript');
  res.setHeader('Cache-Control', 'no-cache');
  if (path === '/big.js') { res.end(BIG); return; }
  if (path === '/stream.js') { res.setHeader('Content-Length', BIG.length); pieces(res, BIG, 65536, () => res.end()); return; }
  if (path === '/chunked.js') { pieces(res, BIG, 50000, () => res.end()); return; }
  if (path === '/cut.js') {
    res.setHeader('Content-Length', BIG.length);
    pieces(res, BIG.subarray(0, CUT_AT), 65536, () => res.socket.end());
    return;
  }
  if (path === '/cut-chunked.js') { pieces(res, BIG.subarray(0, CUT_AT), 50000, () => res.socket.end()); return; }
  res.statusCode = 404;
  res.end('no such thing\n');
});
server.listen(Number(process.env.PORT), process.env.HOST);
""" % CUT_AT

PACKAGE = {"name": "dev-e2e", "private": True, "version": "0.0.0", "type": "module",
           "scripts": {"dev": "node server.mjs"}}


def module_text():
    """The module's bytes, as moduleText() of MODULE_JS makes them."""
    parts, n, i = [], 0, 0
    while n < SIZE - 64:
        line = "export const v%d = %d;\n" % (i, (i * 2654435761) % 4294967296)
        parts.append(line)
        n += len(line)
        i += 1
    parts.append("//" + "x" * (SIZE - n - 3) + "\n")
    return "".join(parts).encode()


BIG = module_text()


def relay_project(a):
    """A blank project made a dev-server project that serves the module (SERVER)."""
    r = create_project(a, template="blank")
    pid = (r.body or {}).get("id") if isinstance(r.body, dict) else None
    if not pid:
        return None
    for path, text in (("module.mjs", MODULE_JS), ("server.mjs", SERVER), ("package-lock.json", json.dumps(LOCK)),
                       ("package.json", json.dumps(PACKAGE))):
        if put(a, pid, path, text).status not in (200, 201):
            return None
    return pid


def fetch(host, path, base=None):
    """GET `path` of the preview `host` through the front end at `base` (lighttpd by default), read to its end:
    (status, body, error), error "" when the answer was whole by its own framing, else what http.client said
    (IncompleteRead: the connection ended before the Content-Length or the last chunk)."""
    u = urllib.parse.urlsplit(base or "http://127.0.0.1:%d" % HTTP_PORT)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=120)
    try:
        conn.request("GET", path, headers={"Host": host, "Accept": "*/*", "Sec-Fetch-Dest": "script"})
        r = conn.getresponse()
        try:
            return r.status, r.read(), ""
        except (http.client.HTTPException, OSError) as e:
            return r.status, getattr(e, "partial", b""), type(e).__name__
    except (http.client.HTTPException, OSError) as e:
        return None, b"", type(e).__name__
    finally:
        conn.close()


def wait_running(host, secs=120):
    t0 = time.time()
    while time.time() - t0 < secs:
        status, body, _ = fetch(host, "/ready")
        if status == 200 and body.startswith(b"{"):
            return json.loads(body)
        time.sleep(0.25)
    return None


def many(host, paths, base=None):
    """Fetches every path of `paths`, AT_ONCE at a time; the answers in order."""
    with concurrent.futures.ThreadPoolExecutor(AT_ONCE) as ex:
        return list(ex.map(lambda p: fetch(host, p, base), paths))


def bad_of(answers):
    """The answers that are not a whole 200 with the module's bytes: (status, length, error), at most 8."""
    bad = [(s, len(b), e) for s, b, e in answers if s != 200 or e or b != BIG]
    return len(bad), bad[:8]


def test_whole(host):
    t0 = time.time()
    # each fetch asks a URL of its own (?n=), as a browser's module graph asks many
    answers = many(host, ["/%s?n=%d" % ("big.js" if i % 2 else "stream.js", i) for i in range(2 * FETCHES)])
    print("# %d fetches of a %d-byte module, %d at once, in %.1f s" % (len(answers), SIZE, AT_ONCE, time.time() - t0))
    n, bad = bad_of(answers[1::2])
    check("test_devserver_relay_module_in_one_write_whole", n == 0, "%d of %d not whole: %r" % (n, FETCHES, bad))
    n, bad = bad_of(answers[0::2])
    check("test_devserver_relay_streamed_module_whole", n == 0, "%d of %d not whole: %r" % (n, FETCHES, bad))


def slow_fetch(host, path, pause):
    """GET `path` straight from svc-devd (as the web servers' websocket proxy reaches it), read quickly up to
    900,000 bytes, then after `pause` seconds (svc-devd and the relay back up behind a busy reader) to the end:
    (status, body by its Content-Length, "" or "short")."""
    u = urllib.parse.urlsplit(DEVD_URL)
    s = socket.create_connection((u.hostname, u.port), timeout=60)
    try:
        s.sendall(("GET %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n" % (path, host)).encode())
        data, paused = b"", False
        while True:
            if not paused and len(data) > 900000:
                time.sleep(pause)
                paused = True
            b = s.recv(65536)
            if not b:
                break
            data += b
    finally:
        s.close()
    head, _, body = data.partition(b"\r\n\r\n")
    m = re.search(rb"\r\ncontent-length: *(\d+)", head, re.I)
    status = int(head.split(b" ", 2)[1]) if head.startswith(b"HTTP/1.") else None
    return status, body, "" if m and len(body) == int(m.group(1)) else "short"


def test_slow_reader(host):
    with concurrent.futures.ThreadPoolExecutor(4) as ex:
        answers = list(ex.map(lambda i: slow_fetch(host, "/%s?slow=%d" % ("big.js" if i % 2 else "stream.js", i), 0.3),
                              range(16)))
    n, bad = bad_of(answers)
    check("test_devserver_relay_whole_to_a_slow_reader", n == 0, "%d of %d not whole: %r" % (n, len(answers), bad))


def test_chunked(host):
    answers = many(host, ["/chunked.js?n=%d" % i for i in range(24)])
    n, bad = bad_of(answers)
    check("test_devserver_relay_chunked_answer_whole_and_decoded", n == 0, "%d of %d not whole: %r" % (n, len(answers), bad))


def test_cut(host):
    """An answer the dev server ends before its length or its last chunk: a 502, or a connection that ends before
    the framing the browser got says it is whole; never a 200 that looks complete."""
    for path in ("/cut.js", "/cut-chunked.js"):
        answers = many(host, ["%s?n=%d" % (path, i) for i in range(12)])
        looks_whole = [(s, len(b), e) for s, b, e in answers if s == 200 and not e]
        name = "chunked_" if "chunked" in path else ""
        check("test_devserver_relay_cut_%sanswer_is_not_a_short_200" % name, not looks_whole,
              "%d of %d looked whole: %r" % (len(looks_whole), len(answers), looks_whole[:8]))
        check("test_devserver_relay_cut_%sanswer_is_a_502" % name, all(s == 502 for s, _, _ in answers),
              [(s, len(b), e) for s, b, e in answers][:8])
    n, bad = bad_of(many(host, ["/big.js?after-cut=%d" % i for i in range(12)]))
    check("test_devserver_relay_whole_again_after_a_cut", n == 0, bad)


def test_apache(host):
    if not APACHE_URL:
        return
    port = urllib.parse.urlsplit(APACHE_URL).port
    ahost = host.rsplit(":", 1)[0] + ":%d" % port
    n, bad = bad_of(many(ahost, ["/%s?apache=%d" % ("big.js" if i % 2 else "chunked.js", i) for i in range(24)],
                         base=APACHE_URL))
    check("test_devserver_relay_whole_through_apache", n == 0, bad)


def main():
    names = ["test_devserver_relay_dev_server_runs"]
    if not DEVD_URL:
        skip_rest("no svc-devd in this stack", names)
        return finish()
    a = signup(tag="devrelay")
    pid = relay_project(a)
    check("test_devserver_relay_project_made", pid is not None, pid)
    if not pid:
        return finish()
    host = preview_host(a, pid)
    ready = wait_running(host)
    check("test_devserver_relay_dev_server_runs", ready is not None and ready.get("size") == SIZE, ready)
    if not ready:
        return finish()
    test_whole(host)
    test_slow_reader(host)
    test_chunked(host)
    test_cut(host)
    test_apache(host)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
