#!/usr/bin/env python3
# test_security.py: security headers, CORS origins, cookie flags, and error bodies that never leak SQL, paths or stack traces
import json
import os
import re
import sys
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from svclib import (APP_URL, BASE_URL, UNKNOWN_ID, api, check, create_project, created_id,  # noqa: E402
                    default_chat_id, finish, random_email, request, setting, signup, site_get)

# What must never show in an error body: SQL, database and library names, stack traces, file paths.
LEAK_RE = re.compile(r"(?i)\b(select|insert|update|delete)\b.+\b(from|into|set|where)\b|sql|mysql|mariadb|syntax error|"
                     r"traceback|segmentation|stack|\bat line\b|errno|/work/|/tmp/|/var/|/usr/|\.c:\d+|libgit2|json-c|"
                     r"duplicate entry|uq_|fk_|jwt_|sodium")


def error_body_clean(r, front_end_may_refuse=False):
    """An error answer's body is exactly {error, message[, field]} with nothing that leaks internals.
    With front_end_may_refuse, the web server's own error page (it refuses control characters in
    URLs, Apache also bad escapes, before any responder runs) is accepted too, when it leaks nothing."""
    b = r.body if isinstance(r.body, dict) else None
    if b is None:
        return (front_end_may_refuse and r.status in (400, 404) and isinstance(r.body, str)
                and not LEAK_RE.search(r.body))
    if set(b) - {"error", "message", "field"} or not isinstance(b.get("error"), str):
        return False
    return not LEAK_RE.search(json.dumps(b))


def test_headers(a, pid, slug):
    probes = {
        "json_200": api("GET", "/auth/me", token=a.token),
        "json_201": create_project(a, "blank"),
        "error_401": api("GET", "/auth/me"),
        "error_404_router": api("GET", "/nonsense", token=a.token),
        "error_405": api("PUT", "/projects/%s" % pid, json={}, token=a.token),
        "error_400": api("POST", "/auth/login", raw="{"),
        "error_413": api("POST", "/auth/signup", raw="x" * (70 * 1024)),
        "raw_file": api("GET", "/projects/%s/files/index.html" % pid, token=a.token),
        "chat_error": api("POST", "/chat/%s/messages" % pid, {"chatId": "x", "text": "y"}, token=a.token),
        "web_app": request("GET", APP_URL + "/"),
    }
    if slug:
        probes["published_site"] = site_get(slug)
    for name, r in sorted(probes.items()):
        check("test_security_%s_has_nosniff" % name, r.headers.get("x-content-type-options") == "nosniff",
              (r.status, r.headers))
    for name in ("json_200", "error_401", "raw_file", "chat_error"):
        r = probes[name]
        check("test_security_api_%s_is_not_cacheable" % name, "no-store" in r.headers.get("cache-control", ""),
              r.headers)
        check("test_security_api_%s_refuses_framing" % name,
              r.headers.get("x-frame-options", "").upper() == "DENY"
              or "frame-ancestors 'none'" in r.headers.get("content-security-policy", ""), r.headers)
    r = probes["raw_file"]
    check("test_security_project_file_served_under_a_csp_sandbox_or_none",
          "default-src 'none'" in r.headers.get("content-security-policy", "")
          or "sandbox" in r.headers.get("content-security-policy", ""), r.headers)
    for name in ("error_401", "error_404_router", "error_405", "error_400", "error_413", "chat_error"):
        r = probes[name]
        check("test_security_%s_is_json" % name, r.headers.get("content-type", "").startswith("application/json"),
              r.headers)


def test_cors(a):
    app = APP_URL.rstrip("/")
    u = urllib.parse.urlsplit(app)
    evil = ["http://evil.example", "null", app + ".evil.example", "http://evil.example/" + app,
            app.replace("127.0.0.1", "localhost"), app.replace("http://", "https://"), app + "/", "*",
            "http://%s" % u.hostname, app.upper()]
    for origin in evil:
        for method, path, body, token in (("GET", "/auth/me", None, a.token),
                                          ("POST", "/auth/login", {"email": "x@example.test", "password": "p"}, None),
                                          ("OPTIONS", "/projects", None, None)):
            h = {"Origin": origin}
            if method == "OPTIONS":
                h["Access-Control-Request-Method"] = "GET"
            r = api(method, path, json=body, token=token, headers=h)
            acao = r.headers.get("access-control-allow-origin")
            check("test_security_cors_origin_%r_%s_not_allowed" % (origin, method),
                  acao is None and "access-control-allow-credentials" not in r.headers, (origin, r.headers))
    r = api("GET", "/auth/me", token=a.token, headers={"Origin": app})
    check("test_security_cors_app_origin_is_allowed_with_credentials",
          r.headers.get("access-control-allow-origin") == app
          and r.headers.get("access-control-allow-credentials") == "true"
          and "origin" in r.headers.get("vary", "").lower(), r.headers)
    r = api("OPTIONS", "/projects", headers={"Origin": app, "Access-Control-Request-Method": "GET",
                                              "Access-Control-Request-Headers": "authorization, content-type"})
    check("test_security_cors_preflight_from_app_origin",
          r.status in (200, 204) and r.headers.get("access-control-allow-origin") == app
          and "GET" in r.headers.get("access-control-allow-methods", "")
          and "authorization" in r.headers.get("access-control-allow-headers", "").lower(), r)
    r = api("GET", "/auth/me", token=a.token)
    check("test_security_no_cors_headers_without_origin", "access-control-allow-origin" not in r.headers, r.headers)


def test_cookies():
    for path, body in (("/auth/signup", {"email": random_email("sec"), "password": "long-enough-pw"}),):
        r = api("POST", path, body)
        check("test_security_cookies_set_on_signup", len(r.cookies) == 2, r)
        email, password = body["email"], body["password"]
    r2 = api("POST", "/auth/login", {"email": email, "password": password})
    r3 = api("POST", "/auth/logout")
    for name, resp in (("signup", r), ("login", r2), ("logout", r3)):
        for line in resp.cookies:
            flags = [p.strip().lower() for p in line.split(";")[1:]]
            check("test_security_%s_cookie_%s_httponly_lax_not_secure_on_http" % (name, line.split("=")[0]),
                  "httponly" in flags and "samesite=lax" in flags and "secure" not in flags
                  and BASE_URL.startswith("http://"), line)
    check("test_security_login_body_never_echoes_the_password", password not in r2.raw.decode("utf-8", "replace"), r2)


def test_error_bodies(a, pid):
    chat_id = default_chat_id(a, pid) or UNKNOWN_ID
    inj = "' OR '1'='1' -- ;DROP TABLE users; \" \\ \x01"
    inj_url = "' OR '1'='1' -- ;DROP TABLE users; \" \\ <script>"
    probes = [
        ("login_sql_injection_email", "POST", "/auth/login", {"email": inj, "password": inj}, None, None),
        ("login_sql_injection_like_email", "POST", "/auth/login",
         {"email": "a'--@example.test", "password": "x' OR 1=1 --"}, None, None),
        ("signup_quote_email", "POST", "/auth/signup", {"email": "o'brien\"@example.test", "password": "long-enough-pw"},
         None, None),
        ("signup_email_too_long", "POST", "/auth/signup", {"email": "a" * 250 + "@example.test", "password": "x" * 9},
         None, None),
        ("signup_deep_json", "POST", "/auth/signup", None, "[" * 5000 + "]" * 5000, None),
        ("signup_nested_object", "POST", "/auth/signup", None, '{"email": {"$gt": ""}, "password": "long-enough-pw"}',
         None),
        ("signup_invalid_utf8", "POST", "/auth/signup", None, b'{"email": "\xff\xfe@example.test", "password": "p"}',
         None),
        ("signup_nul_in_string", "POST", "/auth/signup", None,
         '{"email": "a\\u0000b@example.test", "password": "long-enough-pw"}', None),
        ("project_name_injection", "POST", "/workspaces/%s/projects" % a.workspace_id, {"name": "n" * 200 + inj},
         None, a.token),
        ("project_cursor_injection", "GET", "/projects?cursor=" + urllib.parse.quote(inj_url), None, None, a.token),
        ("project_workspace_injection", "GET", "/projects?workspaceId=" + urllib.parse.quote(inj_url), None, None, a.token),
        ("project_limit_huge", "GET", "/projects?limit=99999999999999999999999", None, None, a.token),
        ("project_id_injection", "GET", "/projects/" + urllib.parse.quote(inj_url, safe=""), None, None, a.token),
        ("project_id_uppercase_uuid", "GET", "/projects/" + UNKNOWN_ID.upper(), None, None, a.token),
        ("file_path_long", "GET", "/projects/%s/files/%s" % (pid, "a/" * 2000 + "x"), None, None, a.token),
        ("checkout_sha_injection", "POST", "/projects/%s/versions/%s/checkout" % (pid, urllib.parse.quote(inj_url, safe="")),
         None, None, a.token),
        ("checkout_sha_long", "POST", "/projects/%s/versions/%s/checkout" % (pid, "a" * 3000), None, None, a.token),
        ("chat_text_control_chars", "POST", "/chat/%s/messages" % UNKNOWN_ID, {"chatId": chat_id, "text": inj}, None,
         a.token),
        ("history_before_huge", "GET", "/chat/%s/messages?chatId=%s&before=99999999999999999999999" % (pid, chat_id),
         None, None, a.token),
        ("patch_visibility_injection", "PATCH", "/projects/%s" % pid, {"visibility": inj}, None, a.token),
        ("bad_percent_escape", "GET", "/projects/%zz", None, None, a.token),
        ("encoded_nul_in_path", "GET", "/projects/%00", None, None, a.token),
        ("content_length_lie", "POST", "/auth/login", None, '{"email": "a@example.test"', None),
    ]
    for label, method, path, body, raw, token in probes:
        r = api(method, path, json=body, raw=raw, token=token)
        check("test_security_%s_is_a_4xx" % label, 400 <= r.status < 500, r)
        check("test_security_%s_error_body_is_clean_json" % label, error_body_clean(r, "%00" in path or "%zz" in path), r)
    # A Bearer token with CR/LF or a huge header never reaches a 500.
    r = api("GET", "/auth/me", headers={"Authorization": "Bearer " + "a" * 7000})
    check("test_security_huge_bearer_token_is_401", r.status == 401 and error_body_clean(r), r)
    r = api("GET", "/auth/me", headers={"Cookie": "svc_access_token=" + "b" * 7000})
    check("test_security_huge_cookie_token_is_401", r.status == 401 and error_body_clean(r), r)


def signed_internal(method, path, body, nonce=None):
    """The headers of a signed internal call (docs/conventions.md "Internal calls"), as svc-wsd signs it."""
    import hashlib
    import hmac
    import secrets
    import time
    ts = str(int(time.time()))
    nonce = nonce or secrets.token_hex(16)
    msg = "%s\n%s\n%s\n%s\n%s" % (method, path, ts, nonce, hashlib.sha256(body).hexdigest())
    sig = hmac.new((setting("INTERNAL_SECRET") or "").encode(), msg.encode(), hashlib.sha256).hexdigest()
    return {"X-Svc-Timestamp": ts, "X-Svc-Nonce": nonce, "X-Svc-Signature": "v2=" + sig,
            "Content-Type": "application/json"}


def test_internal_not_local(pid):
    """An SVC_R_INTERNAL route answers 404 to a client that is not on the host, even with a good signature: the
    stack believes X-Forwarded-For from loopback (SVC_TRUSTED_PROXIES), so a hop named there is the client."""
    path = "/api/internal/projects/%s/presence" % pid
    body = json.dumps({"users": []}).encode()
    r = request("POST", APP_URL + path, body, signed_internal("POST", path, body))
    check("test_security_internal_signed_from_the_host_is_answered", r.status == 200, r)
    for label, xff in (("outside", "203.0.113.7"), ("outside_behind_a_spoofed_loopback", "127.0.0.1, 203.0.113.7"),
                       ("private_network", "10.1.2.3"), ("outside_ipv6", "2001:db8::7")):
        h = signed_internal("POST", path, body)
        h["X-Forwarded-For"] = xff
        r = request("POST", APP_URL + path, body, h)
        b = r.body if isinstance(r.body, dict) else {}
        check("test_security_internal_from_%s_is_404" % label, r.status == 404 and b.get("error") == "not_found"
              and error_body_clean(r), r)
    # unsigned from the host: 401 (the path exists for it), from outside still 404 (it does not)
    r = request("POST", APP_URL + path, body, {"Content-Type": "application/json"})
    check("test_security_internal_unsigned_from_the_host_is_401", r.status == 401, r)
    r = request("POST", APP_URL + path, body, {"Content-Type": "application/json", "X-Forwarded-For": "203.0.113.7"})
    check("test_security_internal_unsigned_from_outside_is_404", r.status == 404, r)


def main():
    try:
        a = signup(tag="sec")
    except AssertionError as e:
        check("test_security_sign_up", False, e)
        return
    r = create_project(a, "todo-app")
    pid = created_id(r)
    check("test_security_project_created", pid is not None, r)
    slug = None
    if pid:
        d = api("POST", "/deploy/%s" % pid, token=a.token)
        slug = d.body.get("slug") if d.status == 200 and isinstance(d.body, dict) else None
        check("test_security_project_published", slug is not None, d)
    test_headers(a, pid or UNKNOWN_ID, slug)
    test_cors(a)
    test_cookies()
    test_error_bodies(a, pid or UNKNOWN_ID)
    test_internal_not_local(pid or UNKNOWN_ID)


if __name__ == "__main__":
    try:
        main()
    except Exception:
        import traceback
        check("test_security ran to the end", False, traceback.format_exc())
    sys.exit(finish())
