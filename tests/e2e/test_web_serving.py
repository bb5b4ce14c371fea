#!/usr/bin/env python3
# test_web_serving.py: the web server's serving of the built web app at app_url: hashed /assets/ cached for good, index.html revalidated, client-side routes answered with index.html, and /api, /ws, /docs, published sites and previews left alone
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from svclib import APP_URL, UNKNOWN_ID, api, check, create_project, finish, request, signup, site_get  # noqa: E402

ROUTES = ["/dashboard", "/login?next=%2Fdashboard", "/projects/3e4f5a6b-7c8d-4e9f-a0b1-c2d3e4f5a6b7",
          "/reset?token=abc", "/a/deeply/nested/client/route", "/settings/", "/no-such-page.html"]


def get(path, headers=None):
    return request("GET", APP_URL + path, None, headers or {})


def cache_directives(r):
    """The Cache-Control directives of an answer (several header lines join into one list)."""
    return {d.strip().lower() for d in r.headers.get("cache-control", "").split(",") if d.strip()}


def test_index(index):
    check("test_web_root_serves_index_html", index.status == 200 and index.headers.get("content-type", "").startswith(
        "text/html") and b"<html" in index.raw.lower(), index)
    check("test_web_index_html_revalidated", "no-cache" in cache_directives(index), index.headers)
    check("test_web_index_html_not_immutable", "immutable" not in cache_directives(index), index.headers)
    check("test_web_index_html_nosniff", index.headers.get("x-content-type-options") == "nosniff", index.headers)
    r = get("/index.html")
    check("test_web_index_html_by_name", r.status == 200 and r.raw == index.raw and "no-cache" in cache_directives(r),
          r.headers)


def test_assets(index):
    refs = [b"/" + m for m in re.findall(rb'(?:src|href)="(?:\./|/)?(assets/[^"?#]+)"', index.raw)]
    if not check("test_web_index_references_hashed_assets", refs, index.raw[:400]):
        return
    for ref in refs[:4]:
        path = ref.decode()
        r = get(path)
        d = cache_directives(r)
        check("test_web_asset_%s_served" % os.path.basename(path), r.status == 200 and r.raw and b"<html" not in
              r.raw[:200].lower(), r)
        check("test_web_asset_%s_cached_immutable_for_a_year" % os.path.basename(path),
              {"public", "max-age=31536000", "immutable"} <= d, r.headers)
    ext = refs[0].decode().rsplit(".", 1)[-1]
    r = get("/assets/no-such-file-0000.%s" % ext)
    check("test_web_missing_asset_is_404_not_index_html", r.status == 404 and b"/assets/" not in r.raw, r)
    check("test_web_missing_asset_404_not_cached_for_a_year", "max-age=31536000" not in cache_directives(r), r.headers)


def test_fallback(index):
    for path in ROUTES:
        r = get(path)
        check("test_web_client_route_%s_answers_index_html" % path.split("?")[0].strip("/").replace("/", "_"),
              r.status == 200 and r.raw == index.raw and "no-cache" in cache_directives(r)
              and "immutable" not in cache_directives(r), (r.status, r.headers))


def test_not_swallowed(a):
    r = api("GET", "/no/such/endpoint", token=a.token)
    check("test_web_unknown_api_path_stays_json_404", r.status == 404 and isinstance(r.body, dict)
          and r.body.get("error") == "not_found", r)
    r = api("GET", "/auth/me")
    check("test_web_api_auth_still_401", r.status == 401 and isinstance(r.body, dict), r)
    r = api("GET", "/auth/me", token=a.token)
    check("test_web_api_answers_json", r.status == 200 and isinstance(r.body, dict) and "user" in r.body, r)
    for path in ("/api", "/ws", "/ws/project/3e4f5a6b-7c8d-4e9f-a0b1-c2d3e4f5a6b7"):
        r = get(path)
        check("test_web_%s_is_not_the_app" % path.strip("/").split("/")[0] + ("_path" if path.count("/") > 1 else ""),
              r.status != 200 or b"<html" not in r.raw.lower(), r)
    r = get("/docs/api.md")
    check("test_web_docs_still_served", r.status == 200 and r.raw.startswith(b"# svc HTTP API"), r)
    r = get("/.git/config")
    check("test_web_dotfiles_refused", r.status in (403, 404) and b"[core]" not in r.raw, r)
    # the web server's backstop: no body over 16 MiB reaches anything (lighttpd
    # server.max-request-size, Apache LimitRequestBody); under it the responders' own 413
    r = api("POST", "/projects/%s/duplicate" % UNKNOWN_ID, token=a.token, raw=b"x" * (17 << 20),
            headers={"Content-Type": "application/json"}, timeout=60)
    check("test_web_body_over_16_mib_is_413", r.status == 413, (r.status, r.raw[:200]))
    r = api("POST", "/auth/login", raw=b"{" + b" " * (2 << 20) + b"}", headers={"Content-Type": "application/json"})
    check("test_web_body_over_the_route_cap_is_the_api_413", r.status == 413 and isinstance(r.body, dict)
          and r.body.get("error"), r)


def test_other_hosts(a):
    """Published sites and previews are other hosts: never the app, never its fallback."""
    p = create_project(a, "blank")
    if p.status != 201:
        check("test_web_published_site_has_no_app_fallback", False, p)
        return
    api("POST", "/deploy/%s" % p.body["id"], token=a.token, raw=b"")
    r = site_get(p.body["slug"], "/dashboard")
    check("test_web_published_site_has_no_app_fallback", r.status == 404 and b"/assets/" not in r.raw, r)
    r = site_get(p.body["slug"], "/")
    check("test_web_published_site_still_served", r.status == 200 and b"/assets/" not in r.raw, r)
    r = site_get("no-such-slug-" + "x" * 6, "/")
    check("test_web_unknown_slug_404", r.status == 404, r)


# /api paths whose encoded dot segments climb out of /api (issue 25 item 13): %2f, %2e%2e, mixed case, double-encoded
DOT_PATHS = [
    ("encoded_slashes", "/api/projects/..%2f..%2fetc%2fpasswd"),
    ("encoded_slashes_upper", "/api/projects/..%2F..%2Fetc%2Fpasswd"),
    ("encoded_dots", "/api/projects/%2e%2e/%2e%2e/etc/passwd"),
    ("encoded_dots_mixed_case", "/api/projects/%2E%2e/.%2E/etc/passwd"),
    ("encoded_dots_to_client_route", "/api/%2e%2e/dashboard"),
    ("encoded_dots_to_root", "/api/%2e%2e/"),
    ("encoded_dots_and_slashes", "/api/projects/%2e%2e%2f%2e%2e%2fetc%2fpasswd"),
    ("double_encoded_dots", "/api/projects/%252e%252e/%252e%252e/etc/passwd"),
    ("plain_dots", "/api/projects/../../etc/passwd"),
]
# These stay under /api once decoded (a "%2f" or "\\" inside one segment): the web server's dotfile rule may
# refuse them (403) before the API's router answers 404; never the app, never a file.
DOT_PATHS_INSIDE = [
    ("double_encoded_slashes", "/api/projects/..%252f..%252fetc%252fpasswd"),
    ("backslashes", "/api/projects/..%5c..%5cetc%5cpasswd"),
]


def test_api_dot_segments():
    """An /api path never answers the web app's page: whatever its encoded dot segments, the API's 404 JSON."""
    for label, path in DOT_PATHS:
        r = get(path)
        b = r.body if isinstance(r.body, dict) else {}
        check("test_web_api_%s_is_the_api_404" % label,
              r.status == 404 and b.get("error") == "not_found" and isinstance(b.get("message"), str)
              and r.headers.get("content-type", "").startswith("application/json")
              and b"<html" not in r.raw.lower() and b"root:" not in r.raw, (path, r.status, r.raw[:200]))
    for label, path in DOT_PATHS_INSIDE:
        r = get(path)
        check("test_web_api_%s_is_refused_not_the_app" % label,
              r.status in (403, 404) and b"<!doctype html>\n<!-- web/index.html" not in r.raw.lower()
              and b"/assets/" not in r.raw and b"root:" not in r.raw, (path, r.status, r.raw[:200]))


# The directives app_url's Content-Security-Policy must hold (issue 25 item 9, docs/web.md "Content-Security-Policy")
CSP_NEEDS = {
    "script-src": ["'self'"],
    "object-src": ["'none'"],
    "base-uri": ["'none'"],
    "frame-ancestors": ["'none'"],
    "img-src": ["'self'", "data:", "blob:"],
}


def csp_of(r):
    """The Content-Security-Policy of an answer as {directive: [sources]} (one header line expected)."""
    out = {}
    for part in r.headers.get("content-security-policy", "").split(";"):
        words = part.split()
        if words:
            out[words[0].lower()] = words[1:]
    return out


def test_csp(a):
    ws = os.environ.get("SVC_WS_URL", "")
    ws_origin = re.sub(r"^(wss?://[^/]+).*$", r"\1", ws)
    for label, path in (("index", "/"), ("client_route", "/dashboard"), ("login", "/login")):
        r = get(path)
        csp = csp_of(r)
        ok = r.status == 200 and all(csp.get(d) == v for d, v in CSP_NEEDS.items())
        # connect-src: itself and ws_url; frame-src: the preview origin; never 'unsafe-inline' or 'unsafe-eval' for scripts
        ok = ok and csp.get("connect-src", [""])[0] == "'self'" and (not ws or ws_origin in csp.get("connect-src", []))
        ok = ok and any(".preview." in s for s in csp.get("frame-src", []))
        ok = ok and not any("unsafe" in s for s in csp.get("script-src", []) + csp.get("default-src", []))
        check("test_web_csp_on_app_%s" % label, ok, (r.status, r.headers.get("content-security-policy")))
    idx = get("/")
    m = re.search(rb'/assets/[^"]+\.js', idx.raw)
    r = get(m.group(0).decode()) if m else None
    check("test_web_index_has_no_inline_script",
          m is not None and not re.search(rb"<script(?![^>]*\bsrc=)[^>]*>", idx.raw), idx.raw[:400])
    check("test_web_csp_on_app_assets", r is not None and r.status == 200 and csp_of(r).get("script-src") == ["'self'"],
          r and (r.status, r.headers.get("content-security-policy")))
    # the app's policy is not the published sites' (their own scripts must keep running), nor the API's
    p = create_project(a, "blank")
    if p.status == 201:
        api("POST", "/deploy/%s" % p.body["id"], token=a.token, raw=b"")
        r = site_get(p.body["slug"], "/")
        check("test_web_csp_not_on_published_site", r.status == 200 and "content-security-policy" not in r.headers,
              (r.status, r.headers))
    else:
        check("test_web_csp_not_on_published_site", False, p)


def main():
    a = signup(tag="web")
    index = get("/")
    test_index(index)
    test_assets(index)
    test_fallback(index)
    test_not_swallowed(a)
    test_other_hosts(a)
    test_api_dot_segments()
    test_csp(a)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
