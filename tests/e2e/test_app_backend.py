#!/usr/bin/env python3
# test_app_backend.py: the apps' backend under /_svc/ (svc-app, docs/app-backend.md) on a published site and on the
# preview: end users' sign-up, sign-in and sign-out, records under svc.data.json's rules (two end users who never
# reach each other's records), validation per field type, svc.data.json refused when invalid with the old one in
# force, test and live apart, svc's cookie and the site's kept apart, cross-site requests refused, client.js, every
# security header once on every kind of answer (svc-app's, not the site's), on a custom domain too
import json
import os
import re
import secrets
import sys
import time
import urllib.parse
import uuid

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from svclib import (DATA_DIR, DOMAIN, HTTP_PORT, PROVIDER_URL, UUID_RE, api, check, create_project, finish,  # noqa: E402
                    is_error, request, signup, sql)
from wslib import svc_admin  # noqa: E402

DECL = {
    "collections": {
        # no rules: every operation is owner's
        "todos": {"fields": {"title": {"type": "string", "required": True, "max": 20}, "done": {"type": "boolean"}},
                  "indexes": ["done"]},
        "notes": {"fields": {"text": {"type": "string"}, "tag": {"type": "string"}},
                  "rules": {"list": "public", "get": "public", "create": "public", "update": "owner",
                            "delete": "owner"},
                  "indexes": ["tag"]},
        "typed": {"fields": {"s": {"type": "string", "max": 5}, "t": {"type": "text", "max": 10},
                             "n": {"type": "number", "min": 0, "max": 10}, "b": {"type": "boolean"},
                             "d": {"type": "datetime"}, "j": {"type": "json", "max": 20}, "f": {"type": "file"},
                             "u": {"type": "user"}},
                  "rules": {"list": "user", "get": "user", "create": "user", "update": "user", "delete": "user"}},
        "sealed": {"fields": {"x": {"type": "string"}}, "rules": {"list": "none", "create": "none"}},
    }
}


class Site:
    """One site origin: the Host it is reached by and the cookie jar of one end user there."""

    def __init__(self, host):
        self.host = host
        self.origin = "http://" + host
        self.cookie = None

    def call(self, method, path, body=None, headers=None, cookie=True, origin=True):
        h = {"Host": self.host}
        if body is not None:
            h["Content-Type"] = "application/json"
        if origin and method not in ("GET", "HEAD"):
            h["Origin"] = self.origin
        if cookie and self.cookie:
            h["Cookie"] = "svc_app_session=" + self.cookie
        h.update(headers or {})
        data = json.dumps(body).encode() if body is not None and not isinstance(body, bytes) else body
        r = request(method, "http://127.0.0.1:%d%s" % (HTTP_PORT, path), data, h)
        for c in r.cookies:
            m = re.match(r"svc_app_session=([^;]*)", c)
            if m and cookie:
                self.cookie = m.group(1) or None
        return r

    def as_user(self):
        """The same origin with an empty cookie jar (another end user, another browser)."""
        return Site(self.host)


def put_file(a, pid, path, content):
    return api("PUT", "/projects/%s/files/%s" % (pid, path), {"content": content, "overwrite": True}, token=a.token)


def sign_up(site, tag):
    email = "%s-%s@example.com" % (tag, secrets.token_hex(4))
    r = site.call("POST", "/_svc/auth/signup", {"email": email, "password": "pw-" + secrets.token_hex(6)})
    return r, email


def auth_flow(env, site):
    """Sign-up, me, sign-out, sign-in on one origin. Returns (site of A, password, email)."""
    email = "a-%s@example.com" % secrets.token_hex(4)
    pw = "pw-" + secrets.token_hex(6)
    r = site.call("POST", "/_svc/auth/signup", {"email": email, "password": pw})
    check("test_app_%s_signup_201_user" % env, r.status == 201 and re.match(UUID_RE, r.body["user"]["id"])
          and r.body["user"]["email"] == email, r)
    cookie = next((c for c in r.cookies if c.startswith("svc_app_session=")), "")
    attrs = [x.strip().lower() for x in cookie.split(";")]
    # the preview's is partitioned (CHIPS), for the editor's frame of another site (docs/security.md "The preview
    # frame"; the stack's SVC_DOMAIN is localhost, where browsers take Secure over http)
    same_site = ["samesite=none", "secure", "partitioned"] if env == "test" else ["samesite=lax"]
    check("test_app_%s_session_cookie_host_only_httponly_%s" % (env, "partitioned" if env == "test" else "lax"),
          "httponly" in attrs and all(x in attrs for x in same_site) and not any(x.startswith("domain") for x in attrs)
          and "path=/_svc/" in attrs and site.cookie and site.cookie.startswith("svca_"), cookie)
    if env == "live":
        check("test_app_live_session_cookie_not_partitioned", "partitioned" not in attrs and "samesite=none" not in attrs,
              cookie)
    r = site.call("GET", "/_svc/auth/me")
    check("test_app_%s_me_signed_in" % env, r.status == 200 and r.body["user"]["email"] == email, r)
    r = site.call("POST", "/_svc/auth/signup", {"email": email, "password": pw})
    check("test_app_%s_signup_taken_409" % env, is_error(r, 409, "conflict", "email"), r)
    r = site.call("POST", "/_svc/auth/signup", {"email": "nope", "password": pw})
    check("test_app_%s_signup_bad_email_400" % env, is_error(r, 400, "validation_failed", "email"), r)
    r = site.call("POST", "/_svc/auth/signup", {"email": "x" + email, "password": "short"})
    check("test_app_%s_signup_short_password_400" % env, is_error(r, 400, "validation_failed", "password"), r)
    old = site.cookie
    r = site.call("POST", "/_svc/auth/logout")
    check("test_app_%s_logout_204_clears_cookie" % env, r.status == 204 and site.cookie is None, r)
    site.cookie = old
    r = site.call("GET", "/_svc/auth/me")
    check("test_app_%s_session_ended_after_logout" % env, is_error(r, 401, "unauthorized"), r)
    site.cookie = None
    r = site.call("POST", "/_svc/auth/login", {"email": email, "password": pw + "x"})
    check("test_app_%s_login_wrong_pair_401" % env, is_error(r, 401, "unauthorized") and site.cookie is None, r)
    r = site.call("POST", "/_svc/auth/login", {"email": "nobody-%s@example.com" % secrets.token_hex(3), "password": pw})
    check("test_app_%s_login_unknown_401" % env, is_error(r, 401, "unauthorized"), r)
    r = site.call("POST", "/_svc/auth/login", {"email": email.upper(), "password": pw})
    check("test_app_%s_login_200_user" % env, r.status == 200 and r.body["user"]["email"] == email and site.cookie, r)
    r = site.call("GET", "/_svc/auth/me")
    check("test_app_%s_me_after_login" % env, r.status == 200, r)
    return pw, email


def owners_apart(env, a, b):
    """End user B never reads, lists, updates or deletes A's records (the default owner rule)."""
    r = a.call("POST", "/_svc/data/todos", {"title": "A's", "done": False})
    check("test_app_%s_create_201_record" % env, r.status == 201 and r.body["title"] == "A's"
          and r.body["owner"] and re.match(UUID_RE, r.body["id"]) and r.body["createdAt"] and r.body["updatedAt"], r)
    rec = r.body
    aid = rec.get("owner")
    r = b.call("POST", "/_svc/data/todos", {"title": "B's", "done": False})
    check("test_app_%s_b_creates_own" % env, r.status == 201 and r.body["owner"] != aid, r)
    r = a.call("GET", "/_svc/data/todos")
    check("test_app_%s_a_lists_own" % env, r.status == 200 and [x["id"] for x in r.body["items"]] == [rec["id"]], r)
    seen = set()
    for q in ("", "?filter=owner:%s" % aid, "?filter=id:%s" % rec["id"], "?sort=-createdAt", "?filter=done:false",
              "?limit=1", "?filter=createdAt:%s" % urllib.parse.quote(rec["createdAt"])):
        r = b.call("GET", "/_svc/data/todos" + q)
        ids = [x["id"] for x in r.body.get("items", [])] if r.status == 200 else None
        seen.update(ids or [])
        check("test_app_%s_b_list_never_a_%s" % (env, re.sub(r"\W+", "_", q.split(":")[0]).strip("_") or "plain"),
              r.status == 200 and rec["id"] not in ids, r)
    # A's cursor in B's hands lists B's records only
    r = a.call("GET", "/_svc/data/todos?limit=1")
    r2 = b.call("GET", "/_svc/data/todos?limit=1&cursor=" + (r.body.get("nextCursor") or "00"))
    check("test_app_%s_b_with_a_cursor_never_a" % env, r2.status in (200, 400) and rec["id"] not in json.dumps(r2.body), r2)
    r = b.call("GET", "/_svc/data/todos/" + rec["id"])
    check("test_app_%s_b_get_a_404" % env, is_error(r, 404, "not_found"), r)
    r = b.call("PATCH", "/_svc/data/todos/" + rec["id"], {"title": "mine now"})
    check("test_app_%s_b_update_a_404" % env, is_error(r, 404, "not_found"), r)
    r = b.call("PATCH", "/_svc/data/todos/" + rec["id"], {"title": 7})
    check("test_app_%s_b_bad_update_a_still_404" % env, is_error(r, 404, "not_found"), r)
    r = b.call("DELETE", "/_svc/data/todos/" + rec["id"])
    check("test_app_%s_b_delete_a_404" % env, is_error(r, 404, "not_found"), r)
    r = a.call("GET", "/_svc/data/todos/" + rec["id"])
    check("test_app_%s_a_record_untouched" % env, r.status == 200 and r.body["title"] == "A's", r)
    r = a.call("PATCH", "/_svc/data/todos/" + rec["id"], {"done": True})
    check("test_app_%s_a_updates_own" % env, r.status == 200 and r.body["done"] is True and r.body["title"] == "A's", r)
    r = a.call("GET", "/_svc/data/todos?filter=done:true")
    check("test_app_%s_filter_on_index_after_update" % env,
          r.status == 200 and [x["id"] for x in r.body["items"]] == [rec["id"]], r)
    r = a.call("GET", "/_svc/data/todos?filter=title:A")
    check("test_app_%s_filter_not_indexed_400" % env, is_error(r, 400, "validation_failed", "filter"), r)
    r = a.call("GET", "/_svc/data/todos?sort=title")
    check("test_app_%s_sort_unknown_400" % env, is_error(r, 400, "validation_failed", "sort"), r)
    r = a.call("GET", "/_svc/data/todos?limit=0")
    check("test_app_%s_limit_0_400" % env, is_error(r, 400, "validation_failed", "limit"), r)
    r = a.call("GET", "/_svc/data/todos?cursor=zz")
    check("test_app_%s_cursor_bad_400" % env, is_error(r, 400, "validation_failed", "cursor"), r)
    r = a.call("GET", "/_svc/data/todos/not-a-uuid")
    check("test_app_%s_get_bad_id_404" % env, r.status == 404, r)
    r = a.call("GET", "/_svc/data/nothing")
    check("test_app_%s_unknown_collection_404" % env, is_error(r, 404, "not_found"), r)
    return rec


def anonymous(env, site, rec):
    anon = site.as_user()
    for method, path, body in (("GET", "/_svc/data/todos", None), ("POST", "/_svc/data/todos", {"title": "x"}),
                               ("GET", "/_svc/data/todos/" + rec["id"], None),
                               ("PATCH", "/_svc/data/todos/" + rec["id"], {"title": "x"}),
                               ("DELETE", "/_svc/data/todos/" + rec["id"], None),
                               ("GET", "/_svc/data/typed", None), ("GET", "/_svc/auth/me", None)):
        r = anon.call(method, path, body)
        check("test_app_%s_anonymous_%s_%s_401" % (env, method.lower(), path.split("/")[3] if path.count("/") > 2
                                                  else "me") + ("_id" if path.count("/") > 3 else ""),
              is_error(r, 401, "unauthorized"), r)
    r = anon.call("POST", "/_svc/data/notes", {"text": "hello", "tag": "t1"})
    check("test_app_%s_public_create_signed_out" % env, r.status == 201 and r.body["owner"] is None, r)
    r = anon.call("GET", "/_svc/data/notes")
    check("test_app_%s_public_list_signed_out" % env, r.status == 200 and len(r.body["items"]) >= 1, r)
    r = anon.call("GET", "/_svc/data/sealed")
    check("test_app_%s_rule_none_403" % env, is_error(r, 403, "forbidden"), r)


def validation(env, a):
    cases = [("s", "toolong"), ("s", 5), ("t", "x" * 11), ("n", -1), ("n", 11), ("n", "3"), ("b", "yes"),
             ("d", "2026-13-01T00:00:00Z"), ("d", "yesterday"), ("j", {"k": "x" * 30}), ("f", "file-1"), ("u", 42),
             ("zz", 1), ("id", "6f1c2b9e-3d4a-4b5c-8d6e-7f8091a2b3c4"), ("owner", "me")]
    for field, value in cases:
        r = a.call("POST", "/_svc/data/typed", {field: value})
        check("test_app_%s_validation_%s_%s" % (env, field, re.sub(r"\W+", "", str(value))[:12] or "obj"),
              is_error(r, 400, "validation_failed", field), r)
    # a file field takes a file of this site and environment (test_app_files.py has the refusals)
    up = a.call("POST", "/_svc/files", b"a file", headers={"Content-Type": "text/plain"})
    ok = {"s": "abc", "t": "text", "n": 10, "b": True, "d": "2026-11-22T01:22:11.123+02:00", "j": [1, 2],
          "f": up.body.get("id", "none") if up.status == 201 else "none", "u": "6f1c2b9e-3d4a-4b5c-8d6e-7f8091a2b3c4"}
    r = a.call("POST", "/_svc/data/typed", ok)
    check("test_app_%s_validation_every_type_ok" % env, r.status == 201 and all(r.body[k] == v for k, v in ok.items()), r)
    r = a.call("POST", "/_svc/data/todos", {"done": True})
    check("test_app_%s_validation_required_missing" % env, is_error(r, 400, "validation_failed", "title"), r)
    r = a.call("POST", "/_svc/data/todos", {"title": None})
    check("test_app_%s_validation_required_null" % env, is_error(r, 400, "validation_failed", "title"), r)
    r = a.call("POST", "/_svc/data/todos", b"[1]")
    check("test_app_%s_body_not_object_400" % env, r.status == 400, r)
    r = a.call("POST", "/_svc/data/todos", b"{", )
    check("test_app_%s_body_invalid_json_400" % env, is_error(r, 400, "invalid_json"), r)


def paging(env, site):
    anon = site.as_user()
    tag = "p" + secrets.token_hex(3)
    made = [anon.call("POST", "/_svc/data/notes", {"text": str(i), "tag": tag}).body["id"] for i in range(5)]
    for sort in ("createdAt", "-createdAt"):
        got, cursor, pages = [], None, 0
        while pages < 10:
            q = "?filter=tag:%s&limit=2&sort=%s" % (tag, sort) + ("&cursor=" + cursor if cursor else "")
            r = anon.call("GET", "/_svc/data/notes" + q)
            if r.status != 200:
                break
            got += [x["id"] for x in r.body["items"]]
            cursor, pages = r.body["nextCursor"], pages + 1
            if not cursor:
                break
        want = made if sort == "createdAt" else made[::-1]
        check("test_app_%s_keyset_pages_%s" % (env, sort.replace("-", "desc_")), got == want and pages == 3, (got, want))
    r = anon.call("GET", "/_svc/data/notes?filter=tag:%s&limit=2&sort=createdAt" % tag)
    r2 = anon.call("GET", "/_svc/data/notes?sort=-createdAt&cursor=" + (r.body.get("nextCursor") or ""))
    check("test_app_%s_cursor_of_other_sort_400" % env, is_error(r2, 400, "validation_failed", "cursor"), r2)


def cross_site(env, site, a):
    evil = {"Origin": "http://evil.example"}
    r = a.call("POST", "/_svc/data/todos", {"title": "csrf"}, headers=evil)
    check("test_app_%s_cross_origin_post_403" % env, is_error(r, 403, "forbidden"), r)
    r = a.call("POST", "/_svc/auth/logout", headers=evil)
    check("test_app_%s_cross_origin_logout_403" % env, is_error(r, 403, "forbidden"), r)
    r = a.call("POST", "/_svc/data/todos", {"title": "no origin"}, origin=False)
    check("test_app_%s_no_origin_no_client_header_403" % env, is_error(r, 403, "forbidden"), r)
    r = a.call("POST", "/_svc/data/todos", {"title": "client.js"}, origin=False, headers={"X-Svc-Client": "1"})
    check("test_app_%s_client_header_without_origin_ok" % env, r.status == 201, r)
    r = a.call("GET", "/_svc/data/todos", headers=evil)
    check("test_app_%s_no_cors_headers" % env,
          r.status == 200 and not any(k.startswith("access-control-") for k in r.headers), r.headers)
    r = a.call("OPTIONS", "/_svc/data/todos", headers=dict(evil, **{"Access-Control-Request-Method": "POST"}))
    check("test_app_%s_preflight_no_allow_origin" % env, "access-control-allow-origin" not in r.headers, r.headers)


# The security headers of an answer under /_svc/ (docs/app-backend.md "How it is kept safe"): svc-app sets each, once;
# the web servers' site headers (Referrer-Policy strict-origin-when-cross-origin, X-Frame-Options SAMEORIGIN,
# Cross-Origin-Opener-Policy) never reach /_svc/, through lighttpd, Apache and a custom domain's include alike.
SECURITY_HEADERS = ("x-content-type-options", "referrer-policy", "x-frame-options", "content-security-policy",
                    "cache-control", "cross-origin-opener-policy", "content-type")
API_HEADERS = {"x-content-type-options": "nosniff", "referrer-policy": "no-referrer", "x-frame-options": "DENY",
               "content-security-policy": "default-src 'none'; frame-ancestors 'none'",
               "cross-origin-opener-policy": None}


def header_problems(r, want):
    """What is wrong with the security headers of answer r: a header of SECURITY_HEADERS sent more than once, one of
    `want` ({name: value, or None for absent}) missing or with another value. [] when all is well."""
    got = {}
    for k, v in r.header_list:
        got.setdefault(k, []).append(v)
    bad = ["%s sent %d times: %r" % (k, len(got[k]), got[k]) for k in SECURITY_HEADERS if len(got.get(k, [])) > 1]
    for k, v in want.items():
        if v is None and k in got:
            bad.append("%s should be absent: %r" % (k, got[k]))
        elif v is not None and got.get(k) != [v]:
            bad.append("%s should be %r: %r" % (k, v, got.get(k)))
    return bad


def headers_once(env, site):
    """Every kind of answer under /_svc/ (client.js, auth, data, the router's errors) carries each header once, svc-app's.
    `site` is signed in."""
    anon = site.as_user()
    json_api = dict(API_HEADERS, **{"cache-control": "no-store", "content-type": "application/json"})
    for tag, who, method, path, body, status, want in (
            ("client_js", anon, "GET", "/_svc/client.js", None, 200,
             dict(API_HEADERS, **{"cache-control": "no-cache", "content-type": "text/javascript; charset=utf-8"})),
            ("auth_me", site, "GET", "/_svc/auth/me", None, 200, json_api),
            ("auth_me_signed_out", anon, "GET", "/_svc/auth/me", None, 401, json_api),
            ("login_refused", anon, "POST", "/_svc/auth/login", {"email": "nobody@example.com", "password": "x" * 9},
             401, json_api),
            ("data_list", site, "GET", "/_svc/data/todos", None, 200, json_api),
            ("data_create", site, "POST", "/_svc/data/todos", {"title": "headers"}, 201, json_api),
            ("data_get_404", site, "GET", "/_svc/data/todos/11111111-2222-4333-8444-555555555555", None, 404, json_api),
            ("data_invalid_400", site, "POST", "/_svc/data/todos", {"title": 5}, 400, json_api),
            ("unknown_path_404", site, "GET", "/_svc/nothing-here", None, 404, json_api),
            ("method_405", site, "PUT", "/_svc/data/todos", {"title": "x"}, 405, json_api)):
        r = who.call(method, path, body)
        bad = header_problems(r, want)
        check("test_app_%s_headers_once_%s" % (env, tag), r.status == status and not bad, (r, bad))


def on_custom_domain(tag, pid, live, fn):
    """fn("custom_domain", site) on a custom domain of published project `pid` (an active row, as
    test_domains_security.py writes one, with the web servers' includes rewritten: lighttpd's custom hosts and the
    domain's Apache virtual host that lib/project/domains.c writes), signed in as the live site `live`'s end user (a
    custom domain shares the project's live end users). The row is gone afterwards, the includes rewritten later."""
    name = "hdr-%s.example.org" % secrets.token_hex(4)
    rid = str(uuid.uuid4())
    sql("INSERT INTO custom_domains (id, project_id, domain, status, created_by, created_at, updated_at) "
        "SELECT '%s', id, '%s', 'active', created_by, UTC_TIMESTAMP(3), UTC_TIMESTAMP(3) FROM projects WHERE id = '%s'"
        % (rid, name, pid))
    try:
        rc, out = svc_admin("write-sites")
        site = Site("%s:%d" % (name, HTTP_PORT))
        site.cookie = live.cookie
        end = time.time() + 20
        while True:  # the graceful reloads of SVC_SITES_RELOAD_CMD
            r = site.call("GET", "/_svc/auth/me")
            if r.status == 200 or time.time() > end:
                break
            time.sleep(0.3)
        check("test_%s_custom_domain_served" % tag, rc == 0 and r.status == 200, (rc, out, r))
        fn("custom_domain", site)
    finally:
        # The row goes; the includes keep naming the domain until the next svc_sites_write() of any test (svc-app
        # answers 404 for it meanwhile). No second reload here: two graceful restarts of lighttpd within a second or
        # two can leave it waiting ~110 s for responders it stopped while they started (lib/http/http.c
        # on_term_spawned covers only part of that).
        sql("DELETE FROM custom_domains WHERE id = '%s'" % rid)


def client_js(env, site):
    r = site.call("GET", "/_svc/client.js")
    check("test_app_%s_client_js" % env, r.status == 200 and r.headers.get("content-type", "").startswith("text/javascript")
          and "export const auth" in r.body and "export const data" in r.body and "<" not in r.body.split("\n")[0], r)


def quotas(a):
    """SVC_APP_MAX_RECORDS, _BYTES and _USERS of the stack (40, 30000, 12; tests/stack.env), on a project of
    their own: one past each is 413 naming it, and nothing of it is written."""
    decl = {"collections": {"notes": {"fields": {"text": {"type": "text"}},
                                      "rules": {"list": "public", "create": "public", "delete": "public",
                                                "update": "public"}}}}
    r = create_project(a, template="blank")
    pid = r.body["id"]
    put_file(a, pid, "svc.data.json", json.dumps(decl))
    r = api("GET", "/projects/%s/preview" % pid, token=a.token)
    site = Site(urllib.parse.urlsplit(r.body["url"]).netloc)
    r = site.call("POST", "/_svc/data/notes", {"text": "x" * 29990})
    check("test_app_quota_bytes_413", is_error(r, 413, "payload_too_large") and "SVC_APP_MAX_BYTES" in r.body["message"], r)
    made = [site.call("POST", "/_svc/data/notes", {"text": "n%d" % i}) for i in range(40)]
    r = site.call("POST", "/_svc/data/notes", {"text": "one more"})
    check("test_app_quota_records_413", all(x.status == 201 for x in made) and is_error(r, 413, "payload_too_large")
          and "SVC_APP_MAX_RECORDS" in r.body["message"], r)
    r = site.call("GET", "/_svc/data/notes?limit=100")
    check("test_app_quota_nothing_written_past_it", r.status == 200 and len(r.body["items"]) == 40, r)
    r = site.call("PATCH", "/_svc/data/notes/" + made[0].body["id"], {"text": "y" * 29700})
    check("test_app_quota_bytes_on_update_413", is_error(r, 413, "payload_too_large"), r)
    r = site.call("DELETE", "/_svc/data/notes/" + made[0].body["id"])
    r2 = site.call("POST", "/_svc/data/notes", {"text": "room again"})
    check("test_app_quota_delete_frees_room", r.status == 204 and r2.status == 201, (r, r2))
    users = [sign_up(site.as_user(), "q")[0] for _ in range(12)]
    r, _ = sign_up(site.as_user(), "q")
    check("test_app_quota_users_413", all(u.status == 201 for u in users) and is_error(r, 413, "payload_too_large")
          and "SVC_APP_MAX_USERS" in r.body["message"], r)


def builders(a, pid, live_user_email, b_live_id):
    """The builders' view (GET /projects/:id/backend...): members only, every end user's records, emptying the test data."""
    r = api("GET", "/projects/%s/backend" % pid, token=a.token)
    todos = next((c for c in r.body.get("collections", []) if c["name"] == "todos"), None) if r.status == 200 else None
    check("test_app_builders_summary", todos and todos["records"]["live"] >= 2 and todos["records"]["test"] >= 2
          and todos["rules"]["list"] == "owner" and todos["fields"]["done"] == "boolean"
          and r.body["usage"]["live"]["users"] >= 2 and r.body["quotas"]["records"] == 40, r)
    stranger = signup(tag="appbe-x")
    r = api("GET", "/projects/%s/backend" % pid, token=stranger.token)
    r2 = api("GET", "/projects/%s" % pid, token=stranger.token)
    check("test_app_builders_stranger_refused_as_for_the_project", r.status in (403, 404) and r.status == r2.status,
          (r, r2))
    r = api("GET", "/projects/%s/backend" % pid)
    check("test_app_builders_anonymous_401", r.status == 401, r)
    r = api("PATCH", "/projects/%s" % pid, {"visibility": "public"}, token=a.token)
    r2 = api("GET", "/projects/%s/backend" % pid, token=stranger.token)
    r3 = api("GET", "/projects/%s/backend/live/users" % pid, token=stranger.token)
    check("test_app_builders_public_project_viewer_sees_nothing", r.status == 200 and r2.status in (403, 404)
          and r3.status in (403, 404) and live_user_email not in r3.raw.decode(), (r, r2, r3))
    r = api("GET", "/projects/%s/backend/live/data/todos?limit=100" % pid, token=a.token)
    owners = {x["owner"] for x in r.body.get("items", [])} if r.status == 200 else set()
    check("test_app_builders_records_of_every_owner", b_live_id in owners and len(owners) >= 2, r)
    r = api("GET", "/projects/%s/backend/live/data/todos?limit=1" % pid, token=a.token)
    r2 = api("GET", "/projects/%s/backend/live/data/todos?limit=1&cursor=%s" % (pid, r.body.get("nextCursor")), token=a.token)
    check("test_app_builders_records_paged", r.status == 200 and r2.status == 200 and r.body["nextCursor"]
          and r2.body["items"][0]["id"] != r.body["items"][0]["id"], (r, r2))
    r = api("GET", "/projects/%s/backend/live/data/todos?cursor=zz" % pid, token=a.token)
    check("test_app_builders_records_bad_cursor_400", is_error(r, 400, "validation_failed", "cursor"), r)
    r = api("GET", "/projects/%s/backend/prod/data/todos" % pid, token=a.token)
    check("test_app_builders_unknown_env_404", r.status == 404, r)
    r = api("GET", "/projects/%s/backend/live/users" % pid, token=a.token)
    check("test_app_builders_users", r.status == 200 and live_user_email in [u["email"] for u in r.body["items"]], r)
    r = api("DELETE", "/projects/%s/backend/live" % pid, token=a.token)
    check("test_app_builders_live_not_emptied_400", is_error(r, 400, "validation_failed", "env"), r)
    r = api("DELETE", "/projects/%s/backend/test" % pid, token=stranger.token)
    check("test_app_builders_stranger_cannot_empty", r.status in (403, 404), r)
    r = api("DELETE", "/projects/%s/backend/test" % pid, token=a.token)
    r2 = api("GET", "/projects/%s/backend" % pid, token=a.token)
    r3 = api("GET", "/projects/%s/backend/test/users" % pid, token=a.token)
    todos = next(c for c in r2.body["collections"] if c["name"] == "todos")
    check("test_app_builders_test_data_emptied", r.status == 204 and todos["records"]["test"] == 0
          and todos["records"]["live"] >= 2 and r3.body["items"] == [] and r2.body["usage"]["test"]["records"] == 0, (r, r2))
    r = api("DELETE", "/projects/%s/backend/live/users/%s" % (pid, b_live_id), token=a.token)
    r2 = api("GET", "/projects/%s/backend/live/data/todos?limit=100" % pid, token=a.token)
    check("test_app_builders_user_deleted_with_records", r.status == 204
          and b_live_id not in {x["owner"] for x in r2.body["items"]}, (r, r2))
    r = api("DELETE", "/projects/%s/backend/live/users/%s" % (pid, b_live_id), token=a.token)
    check("test_app_builders_user_delete_again_404", r.status == 404, r)
    r = api("DELETE", "/projects/%s/backend/live/users/%s" % (pid, b_live_id), token=stranger.token)
    check("test_app_builders_stranger_cannot_delete_users", r.status in (403, 404), r)


def agent_refused(a):
    """The agent's write_file of an invalid svc.data.json is refused with the line, and nothing is written."""
    if not PROVIDER_URL:
        return
    from agentlib import double_requests, fresh_project, reset_double, send
    pid, chat_id = fresh_project(a)
    reset_double()
    send(a, pid, chat_id, "write a bad declaration")
    reqs = double_requests()
    tool_text = json.dumps(reqs[-1]) if reqs else ""
    check("test_app_agent_write_of_invalid_declaration_refused",
          "not written: svc.data.json line 3" in tool_text and "strin" in tool_text, tool_text[-600:])
    r = api("GET", "/projects/%s/files/svc.data.json" % pid, token=a.token)
    check("test_app_agent_invalid_declaration_not_on_disk", r.status == 404, r)


def main():
    a = signup(tag="appbe")
    r = create_project(a, template="blank")
    pid, slug = r.body["id"], r.body["slug"]
    check("test_app_project_created", r.status == 201, r)
    r = put_file(a, pid, "svc.data.json", json.dumps(DECL, indent=2))
    check("test_app_declaration_saved", r.status in (200, 201), r)
    # a file of the site that would sit at /_svc/ never shadows the backend
    put_file(a, pid, "_svc/client.js", "SHADOW")
    bad = json.dumps(DECL, indent=2).replace('"boolean"', '"bool"', 1)
    r = put_file(a, pid, "svc.data.json", bad)
    line = next(i + 1 for i, t in enumerate(bad.split("\n")) if '"bool"' in t)
    check("test_app_invalid_declaration_refused_naming_the_line",
          is_error(r, 400, "validation_failed", "content") and ("line %d:" % line) in r.body["message"]
          and "bool" in r.body["message"], (line, r))
    r = put_file(a, pid, "svc.data.json", '{"collections": {"x": ')
    check("test_app_declaration_syntax_error_refused", is_error(r, 400, "validation_failed", "content")
          and "line 1" in r.body["message"], r)
    r = put_file(a, pid, "draft.json", bad)
    r = api("PATCH", "/projects/%s/files/draft.json" % pid, {"path": "svc.data.json"}, token=a.token)
    check("test_app_invalid_declaration_renamed_in_refused", is_error(r, 400, "validation_failed", "path")
          and ("line %d:" % line) in r.body["message"], r)
    r = api("GET", "/projects/%s/files/svc.data.json" % pid, token=a.token)
    check("test_app_old_declaration_kept_on_disk", r.status == 200 and '"boolean"' in json.dumps(r.body), r)
    r = api("POST", "/deploy/%s" % pid, token=a.token, timeout=120)
    check("test_app_published", r.status == 200, r)
    r = api("GET", "/projects/%s/preview" % pid, token=a.token)
    preview_host = urllib.parse.urlsplit(r.body["url"]).netloc if r.status == 200 else "none"
    live = Site("%s.%s:%d" % (slug, DOMAIN, HTTP_PORT))
    test = Site(preview_host)
    for env, site in (("live", live), ("test", test)):
        client_js(env, site)
        pw, email = auth_flow(env, site)
        b = site.as_user()
        r, _ = sign_up(b, "b")
        rec = owners_apart(env, site, b)
        b_id = b.call("GET", "/_svc/auth/me").body["user"]["id"]
        anonymous(env, site, rec)
        validation(env, site)
        paging(env, site)
        cross_site(env, site, site)
        headers_once(env, site)
        if env == "live":
            live_pw, live_email, live_rec, b_live = pw, email, rec, b_id

    # lock-out as svc's own sign-in: five failures of one account from one address (a client behind the
    # trusted proxy, so not the stack's exempt loopback), then even the right password is 429 there
    addr = "203.0.113.%d" % (secrets.randbelow(90) + 100)
    lk = live.as_user()
    rs = [lk.call("POST", "/_svc/auth/login", {"email": live_email, "password": "wrong-" + secrets.token_hex(3)},
                  headers={"X-Forwarded-For": addr}) for _ in range(5)]
    r = lk.call("POST", "/_svc/auth/login", {"email": live_email, "password": live_pw}, headers={"X-Forwarded-For": addr})
    check("test_app_login_lockout_429", [x.status for x in rs] == [401] * 5 and is_error(r, 429, "rate_limited")
          and r.headers.get("retry-after"), ([x.status for x in rs], r))
    r = lk.call("POST", "/_svc/auth/login", {"email": live_email, "password": live_pw},
                headers={"X-Forwarded-For": "198.51.100.%d" % (secrets.randbelow(200) + 1)})
    check("test_app_login_lockout_other_address_ok", r.status == 200, r)

    # test and live apart: the live end user is not one of the preview's, nor are its records
    t2 = test.as_user()
    r = t2.call("POST", "/_svc/auth/login", {"email": live_email, "password": live_pw})
    check("test_app_live_user_unknown_on_preview", is_error(r, 401, "unauthorized"), r)
    r = test.call("GET", "/_svc/data/todos/" + live_rec["id"])
    check("test_app_live_record_not_on_preview", is_error(r, 404, "not_found"), r)
    t3 = test.as_user()
    t3.cookie = live.cookie
    r = t3.call("GET", "/_svc/auth/me")
    check("test_app_live_cookie_not_on_preview", is_error(r, 401, "unauthorized"), r)

    # another site's cookie never signs in here
    r = create_project(a, template="blank")
    pid2, slug2 = r.body["id"], r.body["slug"]
    put_file(a, pid2, "svc.data.json", json.dumps(DECL))
    api("POST", "/deploy/%s" % pid2, token=a.token, timeout=120)
    other = Site("%s.%s:%d" % (slug2, DOMAIN, HTTP_PORT))
    other.cookie = live.cookie
    r = other.call("GET", "/_svc/auth/me")
    check("test_app_cookie_of_one_site_not_on_another", is_error(r, 401, "unauthorized"), r)
    r = other.call("GET", "/_svc/data/todos")
    check("test_app_other_site_records_need_its_own_sign_in", is_error(r, 401, "unauthorized"), r)

    # svc's own session on the site, and the site's on /api
    r = live.call("GET", "/_svc/auth/me", cookie=False,
                  headers={"Cookie": "svc_access_token=" + a.token, "Authorization": "Bearer " + a.token})
    check("test_app_svc_session_not_accepted_on_site", is_error(r, 401, "unauthorized"), r)
    r = api("GET", "/auth/me", headers={"Cookie": "svc_app_session=" + live.cookie})
    check("test_app_site_cookie_not_accepted_on_api", is_error(r, 401, "unauthorized"), r)
    r = api("GET", "/auth/me", token=live.cookie)
    check("test_app_site_session_as_bearer_not_accepted_on_api", is_error(r, 401, "unauthorized"), r)

    # the declaration in force while the file on disk is invalid (an edit that got past the save-time checks)
    path = os.path.join(DATA_DIR, "projects", pid, "svc.data.json")
    if DATA_DIR and os.path.exists(path):
        with open(path) as f:
            good = f.read()
        with open(path, "w") as f:
            f.write("{ not json")
        r = live.call("GET", "/_svc/data/todos")
        check("test_app_last_valid_declaration_in_force", r.status == 200 and len(r.body["items"]) >= 1, r)
        with open(path, "w") as f:
            f.write(good)

    on_custom_domain("app", pid, live, headers_once)
    quotas(a)
    agent_refused(a)
    builders(a, pid, live_email, b_live)

    r = request("GET", "http://127.0.0.1:%d/_svc/client.js" % HTTP_PORT, None,
                {"Host": "no-such-site-%s.%s:%d" % (secrets.token_hex(3), DOMAIN, HTTP_PORT)})
    check("test_app_unknown_site_404", r.status == 404, r)
    r = request("GET", "http://127.0.0.1:%d/_svc/auth/me" % HTTP_PORT, None, {"Host": "127.0.0.1:%d" % HTTP_PORT})
    check("test_app_not_on_the_app_host", r.status != 200 or "user" not in str(r.body), r)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
