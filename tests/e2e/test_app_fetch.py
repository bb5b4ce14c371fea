#!/usr/bin/env python3
# test_app_fetch.py: the apps' server-side secrets and calls (issue 28, docs/app-backend.md "Secrets and calls"):
# the secrets API (PUT/GET/DELETE /api/projects/:id/secrets[/:name]) with its errors and permissions, a secret
# never in a response, the project's repository or the logs; POST /_svc/fetch/:name through svc's outbound guard
# (loopback, private and link-local targets refused, the path kept under the declared URL), a call to a double that
# gets the secret's header while what comes back has the secret's value scrubbed, and the size and time caps.
import glob
import json
import os
import secrets
import subprocess
import sys
import tempfile
import time
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from svclib import DATA_DIR, HTTP_PORT, TIME_RE, api, check, finish, is_error, request  # noqa: E402
from wslib import Team, create_in, platform_admin  # noqa: E402
import re  # noqa: E402

LOGS = os.environ.get("SVC_TEST_LOGS", "")


def secret_value(tag):
    return "sv-%s-%s" % (tag, secrets.token_hex(12))


def secrets_api(t, pid, value):
    """The secrets API's cases and errors as the workspace's owner, admin, member, an outsider and anonymous."""
    path = "/projects/%s/secrets" % pid
    r = api("PUT", path + "/WEATHER_KEY", {"value": value}, token=t.owner.token)
    s = r.body.get("secret", {}) if r.status == 201 else {}
    check("test_fetch_secret_put_new_201", r.status == 201 and s.get("name") == "WEATHER_KEY"
          and s.get("bytes") == len(value) and re.match(TIME_RE, s.get("updatedAt") or "")
          and (s.get("updatedBy") or {}).get("id") == t.owner.user["id"], r)
    check("test_fetch_secret_put_never_returns_the_value", value not in r.raw.decode(), r)
    r = api("PUT", path + "/WEATHER_KEY", {"value": value + "x"}, token=t.admin.token)
    check("test_fetch_secret_put_replaced_200_by_admin", r.status == 200
          and r.body["secret"]["updatedBy"]["id"] == t.admin.user["id"] and r.body["secret"]["bytes"] == len(value) + 1, r)
    r = api("PUT", path + "/WEATHER_KEY", {"value": value}, token=t.owner.token)
    check("test_fetch_secret_put_again_200", r.status == 200, r)
    r = api("GET", path, token=t.member.token)
    names = [x["name"] for x in r.body.get("secrets", [])] if r.status == 200 else []
    check("test_fetch_secret_list_by_member_names_only", names == ["WEATHER_KEY"] and value not in r.raw.decode()
          and set(r.body["secrets"][0]) == {"name", "bytes", "updatedAt", "updatedBy"}, r)
    r = api("GET", "/projects/%s/backend" % pid, token=t.member.token)
    check("test_fetch_backend_summary_lists_secret_names_only", r.status == 200
          and r.body.get("secrets") == ["WEATHER_KEY"] and value not in r.raw.decode(), r)
    r = api("PUT", path + "/OTHER", {"value": secret_value("m")}, token=t.member.token)
    check("test_fetch_secret_put_by_member_403", is_error(r, 403, "forbidden"), r)
    r = api("DELETE", path + "/WEATHER_KEY", token=t.member.token)
    check("test_fetch_secret_delete_by_member_403", is_error(r, 403, "forbidden"), r)
    for who, tok in (("outsider", t.outsider.token),):
        r1 = api("GET", path, token=tok)
        r2 = api("PUT", path + "/X1", {"value": secret_value("o")}, token=tok)
        r3 = api("DELETE", path + "/WEATHER_KEY", token=tok)
        check("test_fetch_secret_%s_404_everywhere" % who, all(is_error(x, 404, "not_found") for x in (r1, r2, r3)),
              (r1, r2, r3))
    r = api("GET", path)
    check("test_fetch_secret_anonymous_401", is_error(r, 401, "unauthorized"), r)
    r = api("PUT", path + "/1BAD", {"value": secret_value("b")}, token=t.owner.token)
    check("test_fetch_secret_bad_name_400", is_error(r, 400, "validation_failed", "name"), r)
    r = api("PUT", path + "/" + "N" * 65, {"value": secret_value("b")}, token=t.owner.token)
    check("test_fetch_secret_long_name_400", is_error(r, 400, "validation_failed", "name"), r)
    r = api("PUT", path + "/BAD-NAME", {"value": secret_value("b")}, token=t.owner.token)
    check("test_fetch_secret_dash_name_400", is_error(r, 400, "validation_failed", "name"), r)
    r = api("PUT", path + "/SHORT", {"value": "short"}, token=t.owner.token)
    check("test_fetch_secret_short_value_400", is_error(r, 400, "validation_failed", "value"), r)
    r = api("PUT", path + "/BIG", {"value": "v" * 4097}, token=t.owner.token)
    check("test_fetch_secret_value_over_cap_400", is_error(r, 400, "validation_failed", "value"), r)
    r = api("PUT", path + "/CRLF", {"value": "abcdefgh\r\nX-Evil: 1"}, token=t.owner.token)
    check("test_fetch_secret_value_crlf_400", is_error(r, 400, "validation_failed", "value"), r)
    r = api("PUT", path + "/NOVALUE", {"value": 12345678}, token=t.owner.token)
    check("test_fetch_secret_value_not_string_400", is_error(r, 400, "validation_failed", "value"), r)
    r = api("PUT", path + "/NOVALUE", {}, token=t.owner.token)
    check("test_fetch_secret_value_missing_400", is_error(r, 400, "validation_failed", "value"), r)
    r = api("PUT", path + "/HUGE", {"value": "v" * 20000}, token=t.owner.token)
    check("test_fetch_secret_body_over_route_cap_413", is_error(r, 413, "payload_too_large"), r)
    r = api("GET", "/projects/6f1c2b9e-3d4a-4b5c-8d6e-7f8091a2b3c4/secrets", token=t.owner.token)
    check("test_fetch_secret_unknown_project_404", is_error(r, 404, "not_found"), r)
    r = api("DELETE", path + "/NOPE", token=t.owner.token)
    check("test_fetch_secret_delete_unknown_404", is_error(r, 404, "not_found"), r)
    tmp = secret_value("tmp")
    r = api("PUT", path + "/TMP_KEY", {"value": tmp}, token=t.owner.token)
    r2 = api("DELETE", path + "/TMP_KEY", token=t.admin.token)
    r3 = api("GET", path, token=t.owner.token)
    check("test_fetch_secret_delete_204_by_admin", r.status == 201 and r2.status == 204
          and "TMP_KEY" not in [x["name"] for x in r3.body["secrets"]], (r, r2, r3))
    r = api("DELETE", path + "/TMP_KEY", token=t.owner.token)
    check("test_fetch_secret_delete_again_404", is_error(r, 404, "not_found"), r)
    return tmp


def public_viewer(t, value):
    """A viewer of a public project (signed in, not a member) learns nothing of its secrets."""
    r = create_in(t.owner, t.wid, "Public fetch %s" % secrets.token_hex(2), visibility="public")
    pid = r.body.get("id")
    api("PUT", "/projects/%s/secrets/PUB_KEY" % pid, {"value": value}, token=t.owner.token)
    r1 = api("GET", "/projects/%s" % pid, token=t.outsider.token)
    r2 = api("GET", "/projects/%s/secrets" % pid, token=t.outsider.token)
    check("test_fetch_secret_public_project_viewer_sees_nothing", r1.status == 200 and is_error(r2, 404, "not_found")
          and "PUB_KEY" not in r2.raw.decode(), (r1, r2))


def audited(t, pid):
    """Setting and deleting are in the admin audit log, by name, never with the value."""
    try:
        admin = platform_admin(tag="fetch-padmin")
    except AssertionError as e:
        check("test_fetch_secret_audited", False, e)
        return ""
    r = api("GET", "/integrations/admin/audit?limit=100", token=admin.token)
    es = [e for e in r.body.get("entries", []) if e.get("resourceId") == pid] if r.status == 200 else []
    acts = [e["action"] for e in es]
    check("test_fetch_secret_audited", "project.secret.set" in acts and "project.secret.delete" in acts
          and any(e["details"].get("name") == "WEATHER_KEY" for e in es), es[:4])
    return r.raw.decode()


def never_stored_in_clear(pid, values, audit_raw):
    """No value in the project's repository (every commit), the audit log or the logs of the test stack."""
    repo = os.path.join(DATA_DIR, "projects", pid)
    hits = []
    for v in values:
        p = subprocess.run(["git", "-C", repo, "log", "--all", "-p", "-S", v], capture_output=True, text=True)
        if p.returncode != 0 or p.stdout.strip():
            hits.append(("repo", p.returncode, p.stdout[:200]))
        p = subprocess.run(["git", "-C", repo, "grep", "-F", v], capture_output=True, text=True)
        if p.returncode != 1:
            hits.append(("worktree", p.returncode))
        if v in audit_raw:
            hits.append(("audit",))
    check("test_fetch_secret_never_in_the_repository_or_audit", os.path.isdir(repo) and not hits, hits)
    found = []
    for f in glob.glob(os.path.join(LOGS, "**", "*"), recursive=True):
        if not os.path.isfile(f):
            continue
        with open(f, "rb") as fh:
            data = fh.read()
        found += [f for v in values if v.encode() in data]
    check("test_fetch_secret_never_in_the_logs", LOGS and not found, found)


def start_double():
    """The outside API the calls reach (tests/fixtures/fetch_double.py on 127.0.0.7, a free port)."""
    d = tempfile.mkdtemp(prefix="fetch-double-")
    pf = os.path.join(d, "port")
    log = open(os.path.join(LOGS or d, "fetch-double.log"), "a")
    proc = subprocess.Popen([sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures",
                                                          "fetch_double.py"), "--port-file", pf], stderr=log)
    for _ in range(100):
        if os.path.exists(pf):
            return proc, int(open(pf).read())
        time.sleep(0.05)
    proc.kill()
    raise AssertionError("the fetch double did not start")


def decl(port):
    api_url = "http://127.0.0.7:%d/v1/" % port
    return {"collections": {}, "fetch": {
        "weather": {"url": api_url, "headers": {"Authorization": "Bearer {{secrets.WEATHER_KEY}}", "X-Plain": "ok"},
                    "methods": ["GET", "POST"], "rule": "user"},
        "open": {"url": api_url, "rule": "public"},
        "loop": {"url": "http://127.0.0.1:%d/" % HTTP_PORT, "rule": "public"},
        "loopname": {"url": "http://localhost:%d/" % HTTP_PORT, "rule": "public"},
        "private": {"url": "http://10.255.255.1/", "rule": "public"},
        "meta": {"url": "http://169.254.169.254/latest/", "rule": "public"},
        "sealed": {"url": api_url, "rule": "none"},
        "missing": {"url": api_url, "headers": {"X-Key": "{{secrets.NOT_SET}}"}, "rule": "public"},
    }}


class Site:
    def __init__(self, host):
        self.host, self.cookie = host, None

    def call(self, name, body=None, origin=True):
        h = {"Host": self.host, "Content-Type": "application/json"}
        if origin:
            h["X-Svc-Client"] = "1"
        if self.cookie:
            h["Cookie"] = "svc_app_session=" + self.cookie
        return request("POST", "http://127.0.0.1:%d/_svc/fetch/%s" % (HTTP_PORT, name), json.dumps(body or {}).encode(), h)

    def sign_up(self):
        h = {"Host": self.host, "Content-Type": "application/json", "X-Svc-Client": "1"}
        r = request("POST", "http://127.0.0.1:%d/_svc/auth/signup" % HTTP_PORT, json.dumps(
            {"email": "f-%s@example.com" % secrets.token_hex(4), "password": "pw-" + secrets.token_hex(6)}).encode(), h)
        for c in r.cookies:
            m = re.match(r"svc_app_session=([^;]*)", c)
            if m:
                self.cookie = m.group(1)
        return r


def put_decl(t, pid, text):
    return api("PUT", "/projects/%s/files/svc.data.json" % pid, {"content": text, "overwrite": True}, token=t.owner.token)


def declaration_checks(t, pid, port):
    """svc.data.json's "fetch" block: an invalid one is refused naming the line; a valid one is saved."""
    good = decl(port)
    bads = {
        "scheme": ("ftp://example.com/", None), "userinfo": ("https://u:p@example.com/", None),
        "dots": ("https://example.com/a/../b/", None), "query": ("https://example.com/a?x=1", None),
        "secret_syntax": (None, {"Authorization": "Bearer {{secret.X}}"}),
        "crlf": (None, {"X-A": "a\r\nX-B: b"}),
    }
    for tag, (url, headers) in bads.items():
        d = json.loads(json.dumps(good))
        call = d["fetch"]["weather"]
        if url:
            call["url"] = url
        if headers:
            call["headers"] = headers
        text = json.dumps(d, indent=2)
        r = put_decl(t, pid, text)
        key = '"url"' if url else '"headers"'
        line = next(i + 1 for i, x in enumerate(text.split("\n")) if "weather" in x)
        check("test_fetch_decl_%s_refused_naming_the_line" % tag, is_error(r, 400, "validation_failed", "content")
              and "svc.data.json line " in r.body["message"] and "fetch.weather" in r.body["message"], (key, line, r))
    for tag, patch in (("owner_rule", {"rule": "owner"}), ("method", {"methods": ["TRACE"]}), ("unknown_key", {"x": 1})):
        d = json.loads(json.dumps(good))
        d["fetch"]["open"].update(patch)
        r = put_decl(t, pid, json.dumps(d, indent=2))
        check("test_fetch_decl_%s_refused" % tag, is_error(r, 400, "validation_failed", "content")
              and "fetch.open" in r.body["message"], r)
    r = put_decl(t, pid, json.dumps(good, indent=2))
    check("test_fetch_decl_saved", r.status in (200, 201), r)


def guard_checks(site):
    """Loopback (by address and by name), a private address and the metadata address are never called."""
    for name in ("loop", "loopname", "private", "meta"):
        t0 = time.time()
        r = site.call(name)
        check("test_fetch_refuses_%s_target_403" % name, is_error(r, 403, "forbidden") and "does not call" in r.body["message"]
              and time.time() - t0 < 5, r)


def path_checks(site):
    """The path stays under the declared URL."""
    for tag, path in (("dotdot", "../x"), ("inner_dotdot", "a/../../x"), ("encoded_dots", "%2e%2e/x"),
                      ("mixed_encoded_dots", ".%2E/x"), ("encoded_slash", "a%2f..%2fx"), ("double_slash", "//evil.example/x"),
                      ("inner_double_slash", "a//b"), ("backslash", "..\\x"), ("query_in_path", "echo?x=1"),
                      ("double_encoded", "%252e%252e/x"), ("dot", "./echo")):
        r = site.call("open", {"path": path})
        check("test_fetch_path_%s_refused_400" % tag, is_error(r, 400, "validation_failed", "path"), (path, r))


def call_checks(site, anon, port, value):
    """A call to the double: the secret's header reaches it, and what comes back has the value scrubbed."""
    r = site.call("weather", {"path": "/echo", "query": {"q": "Zürich", "n": 3}})
    b = r.body if r.status == 200 and isinstance(r.body, dict) else {}
    echoed = json.loads(b.get("body") or "{}") if b.get("status") == 200 else {}
    check("test_fetch_call_200_status_headers_body", b.get("status") == 200 and echoed.get("path") == "/v1/echo"
          and echoed.get("method") == "GET" and "q=Z%C3%BCrich" in echoed.get("query", "")
          and b["headers"].get("content-type") == "application/json" and b["headers"].get("cache-control") == "max-age=5", r)
    last = json.loads(request("GET", "http://127.0.0.7:%d/_last" % port).raw)
    check("test_fetch_secret_header_reaches_the_double", last.get("headers", {}).get("Authorization") == "Bearer " + value
          and last["headers"].get("X-Plain") == "ok" and "Cookie" not in last["headers"], last.get("headers"))
    raw = r.raw.decode()
    check("test_fetch_echoed_secret_scrubbed_from_body_and_headers", value not in raw and "[credential]" in b.get("body", "")
          and "[credential]" in b["headers"].get("etag", ""), raw[:600])
    check("test_fetch_unsafe_headers_not_passed", not ({"set-cookie", "x-leak"} & set(b.get("headers", {}))), b.get("headers"))
    r = site.call("weather", {"method": "POST", "path": "echo", "body": {"a": [1, 2]}})
    echoed = json.loads(r.body["body"]) if r.status == 200 else {}
    check("test_fetch_post_json_body", echoed.get("method") == "POST" and json.loads(echoed.get("body") or "null") == {"a": [1, 2]}
          and echoed["headers"].get("Content-Type") == "application/json", r)
    r = site.call("weather", {"method": "DELETE", "path": "echo"})
    check("test_fetch_method_not_declared_400", is_error(r, 400, "validation_failed", "method"), r)
    r = site.call("weather", {"method": "TRACE"})
    check("test_fetch_unknown_method_400", is_error(r, 400, "validation_failed", "method"), r)
    r = site.call("weather", {"query": {"bad name": "x"}})
    check("test_fetch_bad_query_400", is_error(r, 400, "validation_failed", "query"), r)
    r = anon.call("weather", {"path": "echo"})
    check("test_fetch_user_rule_signed_out_401", is_error(r, 401, "unauthorized"), r)
    r = anon.call("open", {"path": "echo"})
    check("test_fetch_public_rule_signed_out_200", r.status == 200 and r.body["status"] == 200, r)
    r = site.call("sealed")
    check("test_fetch_none_rule_403", is_error(r, 403, "forbidden"), r)
    r = site.call("nosuch")
    check("test_fetch_undeclared_call_404", is_error(r, 404, "not_found"), r)
    r = site.call("missing", {"path": "echo"})
    check("test_fetch_secret_not_set_503", is_error(r, 503, "service_unavailable") and "NOT_SET" in r.body["message"], r)
    r = site.call("open", {"path": "echo"}, origin=False)
    check("test_fetch_cross_site_refused_403", is_error(r, 403, "forbidden"), r)
    r = site.call("open", {"path": "redirect"})
    check("test_fetch_redirect_not_followed", r.status == 200 and r.body["status"] == 302
          and "location" not in r.body["headers"], r)
    r = site.call("open", {"path": "binary"})
    check("test_fetch_binary_body_base64", r.status == 200 and r.body.get("bodyEncoding") == "base64", r)
    r = site.call("open", {"path": "big", "query": {"n": 1000}})
    check("test_fetch_answer_under_cap_200", r.status == 200 and len(r.body["body"]) == 1000, r)
    r = site.call("open", {"path": "big", "query": {"n": 70000}})
    check("test_fetch_answer_over_cap_413", is_error(r, 413, "payload_too_large")
          and "SVC_APP_FETCH_MAX_BYTES" in r.body["message"], r)
    t0 = time.time()
    r = site.call("open", {"path": "slow"})
    check("test_fetch_slow_answer_503_within_timeout", is_error(r, 503, "service_unavailable")
          and "SVC_APP_FETCH_TIMEOUT_MS" in r.body["message"] and time.time() - t0 < 3.9, (time.time() - t0, r))
    r = site.call("open", {"path": "x" * 3000})
    check("test_fetch_path_too_long_400", is_error(r, 400, "validation_failed", "path"), r)


def fetch_checks(t, pid, value):
    try:
        proc, port = start_double()
    except AssertionError as e:
        check("test_fetch_double_started", False, e)
        return
    try:
        declaration_checks(t, pid, port)
        r = api("GET", "/projects/%s/preview" % pid, token=t.owner.token)
        host = urllib.parse.urlsplit(r.body["url"]).netloc if r.status == 200 else "none"
        site, anon = Site(host), Site(host)
        r = site.sign_up()
        check("test_fetch_end_user_signed_up", r.status == 201, r)
        guard_checks(site)
        path_checks(site)
        call_checks(site, anon, port, value)
    finally:
        proc.kill()
        proc.wait()


def main():
    try:
        t = Team("fetch")
    except AssertionError as e:
        check("test_fetch_setup", False, e)
        return
    r = create_in(t.owner, t.wid, "Fetch %s" % secrets.token_hex(2))
    pid = r.body.get("id")
    check("test_fetch_project_created", r.status == 201, r)
    value = secret_value("w")
    tmp = secrets_api(t, pid, value)
    public_viewer(t, secret_value("p"))
    fetch_checks(t, pid, value)
    audit_raw = audited(t, pid)
    never_stored_in_clear(pid, [value, value + "x", tmp], audit_raw)


if __name__ == "__main__":
    main()
    sys.exit(finish())
