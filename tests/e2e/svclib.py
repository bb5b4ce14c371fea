# svclib.py: helpers for the end-to-end tests (python3 stdlib only): HTTP, SSE, sign-up, TAP-ish checks
"""
The stack's addresses come from the environment that ./svc-dev test exports:

  SVC_BASE_URL             http://127.0.0.1:18080/api   (the API)
  SVC_APP_URL              http://127.0.0.1:18080       (the web app; published sites on the same port)
  SVC_HTTP_PORT            18080
  SVC_DOMAIN               localhost                    (published sites: <slug>.SVC_DOMAIN)
  SVC_DATA_DIR             the responders' data directory (read to check files on disk)
  SVC_PROVIDER_URL         http://127.0.0.1:<port>      (the provider double; /_requests, /_reset, /_stats)
  SVC_NOPROVIDER_BASE_URL  the API of a second front end with no provider configured
  SVC_TEST_PREFIX          prefix for every check name ("apache: " when run through Apache)
  SVC_TEST_CONFIG          the stack's settings file (read by setting() and sql())
  SVC_ADMIN_TOOL           the built tools/svc-admin (svc-worker is next to it)

agentlib.py adds the helpers of the agent tests (the provider double, chat turns),
wslib.py those of workspaces, teams and platform admins; each helper lives in one place.

Every check prints "ok - <name>" or "not ok - <name>" (plus indented detail);
finish() prints a one-line summary and returns the exit status.
"""

import base64
import http.client
import json as jsonlib
import os
import secrets
import subprocess
import sys
import threading
import time
import urllib.parse

BASE_URL = os.environ.get("SVC_BASE_URL", "http://127.0.0.1:8080/api").rstrip("/")
APP_URL = os.environ.get("SVC_APP_URL", "http://127.0.0.1:8080").rstrip("/")
HTTP_PORT = int(os.environ.get("SVC_HTTP_PORT") or urllib.parse.urlsplit(APP_URL).port or 80)
DOMAIN = os.environ.get("SVC_DOMAIN", "localhost")
DATA_DIR = os.environ.get("SVC_DATA_DIR", "")
PROVIDER_URL = os.environ.get("SVC_PROVIDER_URL", "").rstrip("/")
NOPROVIDER_BASE_URL = os.environ.get("SVC_NOPROVIDER_BASE_URL", "").rstrip("/")
PREFIX = os.environ.get("SVC_TEST_PREFIX", "")
TEST_CONFIG = os.environ.get("SVC_TEST_CONFIG", "")
ADMIN_TOOL = os.environ.get("SVC_ADMIN_TOOL", "")

UUID_RE = r"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$"
TIME_RE = r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$"
UNKNOWN_ID = "6f1c2b9e-3d4a-4b5c-8d6e-7f8091a2b3c4"   # a well-formed id that names nothing
PROJECT_FIELDS = ("id", "workspaceId", "folderId", "slug", "name", "description", "template",
                  "visibility", "thumbnailUrl", "publishedAt", "customDomain", "createdAt", "updatedAt",
                  "importState", "importError")

_failed = 0
_passed = 0


class Response:
    """An HTTP answer: status (int), headers (dict, lower-case names; repeated
    headers joined with ", " except set-cookie, kept as a list in cookies),
    header_list (every header line as sent: (lower-case name, value) pairs in
    order, for counting a repeated header), body (parsed JSON when the type is
    JSON and it parses, else text) and raw (bytes)."""

    def __init__(self, status, headers, cookies, raw, header_list=None):
        self.status = status
        self.headers = headers
        self.header_list = header_list or []
        self.cookies = cookies
        self.raw = raw
        ctype = headers.get("content-type", "")
        text = raw.decode("utf-8", "replace")
        self.body = text
        if "json" in ctype:
            try:
                self.body = jsonlib.loads(text)
            except ValueError:
                pass

    def __iter__(self):
        # status, headers, body = api(...)
        return iter((self.status, self.headers, self.body))

    def __repr__(self):
        return "HTTP %d %s" % (self.status, self.raw[:300].decode("utf-8", "replace"))


def _split(url):
    u = urllib.parse.urlsplit(url)
    if u.scheme != "http":
        raise ValueError("only http:// is supported: " + url)
    path = u.path or "/"
    if u.query:
        path += "?" + u.query
    return u.hostname, u.port or 80, path


def _url(path, base):
    if path.startswith("http://"):
        return path
    return (base or BASE_URL) + path


def request(method, url, body=None, headers=None, timeout=30):
    """Sends one request to an absolute URL; body is bytes or None. Returns a Response."""
    host, port, path = _split(url)
    conn = http.client.HTTPConnection(host, port, timeout=timeout)
    try:
        conn.request(method, path, body=body, headers=headers or {})
        r = conn.getresponse()
        raw = r.read()
        hdrs = {}
        cookies = []
        pairs = [(k.lower(), v) for k, v in r.getheaders()]
        for k, v in pairs:
            if k == "set-cookie":
                cookies.append(v)
            hdrs[k] = hdrs[k] + ", " + v if k in hdrs else v
        return Response(r.status, hdrs, cookies, raw, pairs)
    finally:
        conn.close()


def api(method, path, json=None, token=None, headers=None, raw=None, base=None, timeout=30):
    """Calls the API: path is relative to base (SVC_BASE_URL) or an absolute
    http:// URL. json is sent as a JSON body; raw (bytes or str) is sent as is
    (for malformed-input tests). token adds "Authorization: Bearer". Returns a
    Response, which unpacks as (status, headers, body)."""
    h = {"Accept": "application/json"}
    body = None
    if json is not None:
        body = jsonlib.dumps(json).encode()
        h["Content-Type"] = "application/json"
    if raw is not None:
        body = raw.encode() if isinstance(raw, str) else raw
        h.setdefault("Content-Type", "application/json")
    if token:
        h["Authorization"] = "Bearer " + token
    h.update(headers or {})
    return request(method, _url(path, base), body, h, timeout)


def is_error(r, status, code, field=None):
    """True when r is `status` with the JSON error body {error: code, message, [field]}
    (message a non-empty string; field checked only when given)."""
    b = r.body if isinstance(r.body, dict) else {}
    ok = (r.status == status and b.get("error") == code and isinstance(b.get("message"), str)
          and bool(b.get("message")))
    if field is not None:
        ok = ok and b.get("field") == field
    return ok


def created_id(r, key="id"):
    """body[key] of a 201 answer with a JSON object body, else None."""
    return r.body.get(key) if r.status == 201 and isinstance(r.body, dict) else None


class SSEError(Exception):
    """The stream endpoint answered with something other than a 200 event stream."""

    def __init__(self, response):
        Exception.__init__(self, repr(response))
        self.response = response


def sse(path, body, token=None, base=None, timeout=120, headers=None):
    """POSTs body (JSON) to a streaming endpoint and yields (t, event) for
    every server-sent event as it arrives: t is time.monotonic() at arrival,
    event the parsed JSON of its data (a dict with "type"; an "event:" field
    fills "type" when the data has none). Comment lines (heartbeats) are
    skipped. Raises SSEError when the answer is not a 200 text/event-stream."""
    host, port, p = _split(_url(path, base))
    conn = http.client.HTTPConnection(host, port, timeout=timeout)
    h = {"Accept": "text/event-stream", "Content-Type": "application/json"}
    if token:
        h["Authorization"] = "Bearer " + token
    h.update(headers or {})
    try:
        conn.request("POST", p, body=jsonlib.dumps(body).encode(), headers=h)
        r = conn.getresponse()
        ctype = r.getheader("Content-Type", "")
        if r.status != 200 or not ctype.startswith("text/event-stream"):
            hdrs = {k.lower(): v for k, v in r.getheaders()}
            raise SSEError(Response(r.status, hdrs, [], r.read()))
        data = []
        name = None
        while True:
            line = r.readline()
            if not line:
                break
            line = line.decode("utf-8").rstrip("\r\n")
            if line == "":
                if data:
                    text = "\n".join(data)
                    try:
                        ev = jsonlib.loads(text)
                    except ValueError:
                        ev = {"type": "_unparsable", "data": text}
                    if not isinstance(ev, dict):
                        ev = {"type": "_unparsable", "data": text}
                    if name and "type" not in ev:
                        ev["type"] = name
                    yield time.monotonic(), ev
                data = []
                name = None
            elif line.startswith(":"):
                continue
            elif line.startswith("data:"):
                data.append(line[5:].lstrip(" ") if line[5:6] == " " else line[5:])
            elif line.startswith("event:"):
                name = line[6:].strip()
    finally:
        conn.close()


def sse_all(path, body, token=None, base=None, timeout=120):
    """Runs sse() to the end. Returns (events, times, error): error is the
    SSEError or other exception that stopped it, else None."""
    events, times = [], []
    try:
        for t, ev in sse(path, body, token, base, timeout):
            times.append(t)
            events.append(ev)
    except Exception as e:  # the check that follows reports it
        return events, times, e
    return events, times, None


def types_of(events):
    """The "type" of each event, in order."""
    return [e.get("type") for e in events]


def stream_in_thread(path, body, token=None, ready=None, base=None, daemon=False):
    """Runs sse(path, body) in a thread of its own. Returns (thread, state, started): state["events"]
    and state["times"] grow as events arrive, state["err"] is set to the exception that ended the
    stream when one did; started (a threading.Event) is set at the first event for which ready(event)
    is true (the first event at all when ready is None), and when the stream ends."""
    state = {"events": [], "times": []}
    started = threading.Event()

    def run():
        try:
            for t, ev in sse(path, body, token, base):
                state["events"].append(ev)
                state["times"].append(t)
                if ready is None or ready(ev):
                    started.set()
        except Exception as e:  # the check that follows reports it
            state["err"] = e
        started.set()

    th = threading.Thread(target=run, daemon=daemon)
    th.start()
    return th, state, started


def at_once(calls):
    """Runs every function of `calls` (no arguments) in a thread of its own, all started before any
    is waited for. Returns their results in the order of `calls`."""
    results = [None] * len(calls)

    def run(i):
        results[i] = calls[i]()

    ths = [threading.Thread(target=run, args=(i,)) for i in range(len(calls))]
    for th in ths:
        th.start()
    for th in ths:
        th.join()
    return results


def random_email(tag="e2e"):
    return "%s-%s@example.test" % (tag, secrets.token_hex(6))


def _find_workspace_id(obj):
    """Finds the personal workspace id in a signup or /auth/me answer."""
    if not isinstance(obj, dict):
        return None
    for key in ("workspaceId", "defaultWorkspaceId", "personalWorkspaceId"):
        if isinstance(obj.get(key), str):
            return obj[key]
    for key in ("workspace", "defaultWorkspace", "personalWorkspace"):
        if isinstance(obj.get(key), dict) and isinstance(obj[key].get("id"), str):
            return obj[key]["id"]
    ws = obj.get("workspaces")
    if isinstance(ws, list) and ws and isinstance(ws[0], dict) and isinstance(ws[0].get("id"), str):
        return ws[0]["id"]
    for key in ("user", "data"):
        found = _find_workspace_id(obj.get(key))
        if found:
            return found
    return None


class Account:
    """A signed-up user: email, password, token (access), refresh, user (dict), workspace_id."""

    def __init__(self, email, password, token, refresh, user, workspace_id, response):
        self.email = email
        self.password = password
        self.token = token
        self.refresh = refresh
        self.user = user
        self.workspace_id = workspace_id
        self.response = response


def signup(base=None, tag="e2e"):
    """Signs up a fresh user and finds their workspace (from the signup answer
    or GET /auth/me). Raises AssertionError with the answer when it fails."""
    email = random_email(tag)
    password = "pw-" + secrets.token_hex(8)
    r = api("POST", "/auth/signup", {"email": email, "password": password, "displayName": "E2E"}, base=base)
    if r.status not in (200, 201) or not isinstance(r.body, dict) or not r.body.get("accessToken"):
        raise AssertionError("signup failed: %r" % r)
    token = r.body["accessToken"]
    wid = _find_workspace_id(r.body)
    if not wid:
        me = api("GET", "/auth/me", token=token, base=base)
        wid = _find_workspace_id(me.body)
        if not wid:
            raise AssertionError("no workspace id in signup or /auth/me: %r" % me)
    return Account(email, password, token, r.body.get("refreshToken"), r.body.get("user"), wid, r)


def items_of(body):
    """The list in a list answer: a bare array or {items: [...]}."""
    if isinstance(body, list):
        return body
    if isinstance(body, dict) and isinstance(body.get("items"), list):
        return body["items"]
    return None


def create_project(acct, template="todo-app", name=None, base=None):
    """Creates a project in acct's workspace. Returns the Response."""
    name = name or "E2E %s %s" % (template, secrets.token_hex(3))
    return api("POST", "/workspaces/%s/projects" % acct.workspace_id,
               {"name": name, "template": template}, token=acct.token, base=base)


def default_chat_id(acct, project_id, base=None):
    """The id of the project's first chat, or None."""
    r = api("GET", "/projects/%s/chats" % project_id, token=acct.token, base=base)
    items = items_of(r.body) if r.status == 200 else None
    if not items or not isinstance(items[0], dict):
        return None
    return items[0].get("id")


def versions(acct, pid, base=None):
    """The versions of a project, newest first (GET /projects/:id/versions), or [] on an error status."""
    return items_of(api("GET", "/projects/%s/versions" % pid, token=acct.token, base=base).body) or []


def timeline_page(acct, pid, chat_id, query="", base=None):
    """GET /chat/:pid/messages?chatId=<chat_id><query> as acct; query is "" or "&limit=..."
    etc. Returns the Response."""
    return api("GET", "/chat/%s/messages?chatId=%s%s" % (pid, chat_id, query), token=acct.token, base=base)


def timeline(acct, pid, chat_id, base=None, limit=200):
    """The newest `limit` stored events of a chat, oldest first, or None on an error status."""
    r = timeline_page(acct, pid, chat_id, "&limit=%d" % limit, base)
    return items_of(r.body) if r.status == 200 else None


def site_get(slug, path="/", host_port=True, port=None, headers=None):
    """GETs a published site through the front end: the request goes to
    127.0.0.1:<port> with Host <slug>.<SVC_DOMAIN>[:port]."""
    port = port or HTTP_PORT
    host = "%s.%s" % (slug, DOMAIN)
    if host_port:
        host += ":%d" % port
    h = {"Host": host}
    h.update(headers or {})
    return request("GET", "http://127.0.0.1:%d%s" % (port, path), None, h)


def provider(method, path, json=None):
    """Talks to the provider double (SVC_PROVIDER_URL): /_requests, /_reset, /_stats."""
    if not PROVIDER_URL:
        raise AssertionError("SVC_PROVIDER_URL is not set")
    body = jsonlib.dumps(json).encode() if json is not None else None
    return request(method, PROVIDER_URL + path, body, {"Content-Type": "application/json"})


def setting(name):
    """A value from the stack's settings file (SVC_TEST_CONFIG), or None."""
    try:
        with open(TEST_CONFIG) as f:
            for line in f:
                if line.startswith(name + "="):
                    return line.rstrip("\n").split("=", 1)[1]
    except OSError:
        return None
    return None


def sql(query):
    """Runs SQL against the stack's database (the settings file names its socket). Returns stdout
    (tab-separated, no column names); raises AssertionError when mariadb fails."""
    sock = setting("SVC_DB_SOCKET")
    db = setting("SVC_DB_NAME") or "svc"
    out = subprocess.run(["mariadb", "--no-defaults", "--socket=" + (sock or ""), "-uroot", "-N", "-B", db,
                          "-e", query], capture_output=True, text=True, timeout=30)
    if out.returncode != 0:
        raise AssertionError("mariadb failed: " + out.stderr)
    return out.stdout


def worker_pid():
    """The pid of the stack's svc-worker (its supervisor, tools/svc-worker.c), or None."""
    try:
        with open(os.path.join(os.path.dirname(TEST_CONFIG), "run", "svc-worker.pid")) as f:
            return int(f.read().strip())
    except (OSError, ValueError):
        return None


def worker_lanes(pid):
    """{lane: pid} of the lanes of svc-worker `pid`: its children named svc-lane-<lane> ("quick", "slow";
    docs/operations.md "The background worker")."""
    lanes = {}
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % p) as f:
                stat = f.read()
        except OSError:
            continue
        comm = stat[stat.find("(") + 1:stat.rfind(")")]
        rest = stat[stat.rfind(")") + 1:].split()
        if len(rest) > 1 and rest[0] != "Z" and rest[1] == str(pid) and comm.startswith("svc-lane-"):
            lanes[comm[len("svc-lane-"):]] = int(p)
    return lanes


def b64url(data):
    """base64url of bytes without padding (RFC 4648 section 5), as text."""
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def b64url_decode(s):
    """The bytes of unpadded base64url text."""
    return base64.urlsafe_b64decode(s + "=" * (-len(s) % 4))


def _short(x, n=600):
    s = x if isinstance(x, str) else repr(x)
    return s if len(s) <= n else s[:n] + "..."


def check(name, cond, detail=None):
    """Prints "ok - <prefix><name>" or "not ok - <prefix><name>" with the
    detail indented below a failure. Returns bool(cond)."""
    global _failed, _passed
    name = PREFIX + name
    if cond:
        _passed += 1
        print("ok - " + name, flush=True)
    else:
        _failed += 1
        print("not ok - " + name, flush=True)
        if detail is not None:
            for line in _short(detail, 2000).splitlines() or [""]:
                print("    " + line, flush=True)
    return bool(cond)


def skip_rest(reason, names):
    """Marks the checks that cannot run after a failed step as failed."""
    for n in names:
        check(n, False, "not run: " + reason)


def failed():
    return _failed


def finish():
    """Prints the summary line and returns the exit status (1 on any failure)."""
    print("# %s: %d passed, %d failed" % (os.path.basename(sys.argv[0]), _passed, _failed), flush=True)
    return 1 if _failed else 0
