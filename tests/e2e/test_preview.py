#!/usr/bin/env python3
# test_preview.py: the preview origin <token>.preview.<SVC_DOMAIN>: GET /projects/:id/preview, svc-preview's files, tokens that are expired, forged or another project's, and a preview page's lack of any hold on the viewer's session
import base64
import datetime
import hashlib
import hmac
import os
import re
import secrets
import shutil
import struct
import sys
import time
import urllib.parse
import uuid

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from svclib import (APP_URL, DATA_DIR, DOMAIN, HTTP_PORT, UNKNOWN_ID, api, check, create_project, finish,  # noqa: E402
                    request, setting, signup, site_get, skip_rest)

APP_ORIGIN = "{0.scheme}://{0.netloc}".format(urllib.parse.urlsplit(APP_URL))
LABEL_RE = re.compile(r"^[a-z2-7]{60}$")
# the preview origin's script, inline at the end of every HTML page it serves (lib/api/preview_script.js)
SCRIPT_RE = re.compile(rb"^<script>\(function \(APP_ORIGIN\) \{\n.*'svc-preview'.*\n\}\)\n\(\"%s\"\);</script>\n$"
                       % re.escape(APP_ORIGIN.replace("/", "\\/")).encode(), re.S)


def is_page(r, raw):
    """r is the preview's answer for a page whose file is `raw`: those bytes unchanged, then the script."""
    return r.status == 200 and r.raw.startswith(raw) and SCRIPT_RE.match(r.raw[len(raw):]) is not None


def jwt_secret():
    """JWT_SECRET of the stack, to mint tokens the way svc does (lib/auth/preview.h)."""
    v = setting("JWT_SECRET")
    return v.strip().strip('"').encode() if v else None


def mint(secret, project_id, expires, mac_of=None):
    """A preview token: base32(ver || uuid || expiry || HMAC-SHA256(K, ver || uuid || expiry)[:16]) in lower case,
    K = HMAC-SHA256(JWT_SECRET, "svc preview token v1"). mac_of: the project id the mac is computed for."""
    key = hmac.new(secret, b"svc preview token v1", hashlib.sha256).digest()
    body = bytes([1]) + uuid.UUID(project_id).bytes + struct.pack(">I", expires)
    mac_body = bytes([1]) + uuid.UUID(mac_of or project_id).bytes + struct.pack(">I", expires)
    mac = hmac.new(key, mac_body, hashlib.sha256).digest()[:16]
    return base64.b32encode(body + mac).decode().rstrip("=").lower()


def pget(label, path="/", headers=None, method="GET"):
    """A request to the preview origin <label>.preview.<SVC_DOMAIN>:<port> through the front end."""
    h = {"Host": "%s.preview.%s:%d" % (label, DOMAIN, HTTP_PORT)}
    h.update(headers or {})
    return request(method, "http://127.0.0.1:%d%s" % (HTTP_PORT, path), None, h)


def label_of(url):
    host = urllib.parse.urlsplit(url).hostname or ""
    return host.split(".", 1)[0]


def no_cookie_set(r):
    return not r.cookies and "set-cookie" not in r.headers


def is_svc_preview_page(r, status):
    """An answer of svc-preview (not of the published sites' rule or the app): its status and its frame policy."""
    return r.status == status and r.headers.get("content-security-policy") == "frame-ancestors " + APP_ORIGIN


def test_url(a, pid):
    r = api("GET", "/projects/%s/preview" % pid, token=a.token)
    ok = r.status == 200 and isinstance(r.body, dict) and set(r.body) == {"url", "expiresAt", "devServer"}
    check("test_preview_url_answers_url_and_expiry", ok, r)
    if not ok:
        return None
    url = r.body["url"]
    want = re.compile(r"^http://[a-z2-7]{60}\.preview\.%s(:%d)?/$" % (re.escape(DOMAIN), HTTP_PORT))
    check("test_preview_url_is_a_token_label_under_preview_domain", want.match(url), url)
    check("test_preview_url_label_fits_a_dns_label", len(label_of(url)) <= 63, url)
    exp = datetime.datetime.strptime(r.body["expiresAt"], "%Y-%m-%dT%H:%M:%S.%fZ").replace(
        tzinfo=datetime.timezone.utc).timestamp()
    now = time.time()
    check("test_preview_url_expires_in_about_thirty_minutes", now + 29 * 60 <= exp <= now + 32 * 60,
          (r.body["expiresAt"], now))
    check("test_preview_url_expiry_is_whole_minutes", r.body["expiresAt"].endswith(":00.000Z"), r.body)
    r2 = api("GET", "/projects/%s/preview" % pid, token=a.token)
    check("test_preview_url_is_stable_within_a_minute_or_renewed",
          r2.status == 200 and (r2.body["url"] == url or r2.body["expiresAt"] != r.body["expiresAt"]), r2)
    return label_of(url)


def test_serving(a, pid, label):
    want = api("GET", "/projects/%s/files/index.html" % pid, token=a.token)
    r = pget(label)
    check("test_preview_serves_the_projects_index_html", want.status == 200 and is_page(r, want.raw), (r, want))
    tail = r.raw[len(want.raw):]
    check("test_preview_script_is_one_inline_script_at_the_end",
          tail.count(b"</script") == 1 and b"<!--" not in tail and b"src=" not in tail.split(b"\n", 1)[0], tail[:200])
    check("test_preview_files_api_has_no_preview_script", b"svc-preview" not in want.raw, want)
    check("test_preview_html_content_type", r.headers.get("content-type", "").startswith("text/html"), r.headers)
    check("test_preview_csp_lets_only_app_url_frame_it",
          r.headers.get("content-security-policy") == "frame-ancestors " + APP_ORIGIN, r.headers)
    check("test_preview_sets_no_cookie", no_cookie_set(r), r.headers)
    check("test_preview_not_refused_framing_by_x_frame_options", "x-frame-options" not in r.headers, r.headers)
    check("test_preview_cors_any_origin_without_credentials",
          r.headers.get("access-control-allow-origin") == "*" and "access-control-allow-credentials" not in r.headers,
          r.headers)
    check("test_preview_not_cached", "no-store" in r.headers.get("cache-control", ""), r.headers)
    check("test_preview_nosniff", r.headers.get("x-content-type-options") == "nosniff", r.headers)
    r = pget(label, "/index.html")
    check("test_preview_index_html_by_name", is_page(r, want.raw), r)
    css = api("GET", "/projects/%s/files/style.css" % pid, token=a.token)
    r = pget(label, "/style.css")
    check("test_preview_other_files_unchanged", css.status == 200 and r.status == 200 and r.raw == css.raw, r)
    for path, ctype in (("/style.css", "text/css"), ("/app.js", "text/javascript")):
        r = pget(label, path)
        check("test_preview_content_type_%s" % path.rsplit(".", 1)[1],
              r.status == 200 and r.headers.get("content-type", "").startswith(ctype), r)
    # the viewer's cookies change nothing: the token alone authorises, and nothing is set
    r = pget(label, "/", {"Cookie": "svc_access_token=%s; svc_refresh_token=%s" % (a.token, a.refresh)})
    check("test_preview_ignores_the_app_cookies", is_page(r, want.raw) and no_cookie_set(r), r)
    r = pget(label, "/nope.html")
    check("test_preview_missing_file_404_page", is_svc_preview_page(r, 404) and "text/html" in
          r.headers.get("content-type", "") and no_cookie_set(r), r)
    # the API is not on the preview origin
    r = pget(label, "/api/auth/me", {"Cookie": "svc_access_token=" + a.token, "Authorization": "Bearer " + a.token})
    check("test_preview_origin_has_no_api", r.status == 404 and "@" not in r.raw.decode("utf-8", "replace"), r)
    r = pget(label, "/", method="POST")
    check("test_preview_post_refused", r.status in (403, 405), r)


def test_tree(a, pid, label):
    """Directories, dot files, symlinks and escapes, with files put straight into the project directory."""
    names = ["test_preview_directory_without_slash_redirects", "test_preview_directory_index",
             "test_preview_dotfile_never_served", "test_preview_symlink_not_followed",
             "test_preview_dot_dot_escape_refused"]
    pdir = os.path.join(DATA_DIR, "projects", pid) if DATA_DIR else ""
    if not pdir or not os.path.isdir(pdir):
        skip_rest("SVC_DATA_DIR/projects/<id> not found", names)
        return
    os.makedirs(os.path.join(pdir, "sub dir"), exist_ok=True)
    with open(os.path.join(pdir, "sub dir", "index.html"), "w") as f:
        f.write("<p>sub page</p>\n")
    with open(os.path.join(pdir, ".env"), "w") as f:
        f.write("SECRET=preview-must-not-serve-this\n")
    link = os.path.join(pdir, "leak.txt")
    if os.path.lexists(link):
        os.remove(link)
    os.symlink("/etc/passwd", link)
    try:
        r = pget(label, "/sub%20dir")
        check(names[0], r.status == 301 and r.headers.get("location", "").endswith("/sub%20dir/"), r)
        r = pget(label, "/sub%20dir/")
        check(names[1], is_page(r, b"<p>sub page</p>\n"), r)
        r = pget(label, "/.env")
        check(names[2], r.status in (403, 404) and b"preview-must-not-serve-this" not in r.raw, r)
        r = pget(label, "/leak.txt")
        check(names[3], r.status == 404 and b"root:" not in r.raw, r)
        bad = [pget(label, p) for p in ("/../../../../etc/passwd", "/%2e%2e/%2e%2e/etc/passwd",
                                        "/sub%20dir/..%2f..%2f..%2fetc/passwd", "/.git/config")]
        check(names[4], all(x.status in (400, 403, 404) and b"root:" not in x.raw and b"[core]" not in x.raw
                            for x in bad), bad)
    finally:
        shutil.rmtree(os.path.join(pdir, "sub dir"), ignore_errors=True)
        for p in (link, os.path.join(pdir, ".env")):
            if os.path.lexists(p):
                os.remove(p)


def test_tokens(a, pid, other_pid, label):
    secret = jwt_secret()
    names = ["test_preview_token_derivation_matches", "test_preview_expired_token_403",
             "test_preview_forged_mac_403", "test_preview_token_with_another_projects_id_403",
             "test_preview_token_from_another_key_403"]
    forged = label[:-2] + ("a" if label[-2] != "a" else "b") + label[-1]
    r = pget(forged)
    check("test_preview_altered_label_403", is_svc_preview_page(r, 403) and no_cookie_set(r), r)
    r = pget(secrets.choice("abcdefgh") + "".join(secrets.choice("abcdefghijklmnopqrstuvwxyz234567") for _ in range(59)))
    check("test_preview_random_label_403", is_svc_preview_page(r, 403), r)
    r = pget("abc")
    check("test_preview_short_label_403", r.status == 403 and b"<h1>" in r.raw.lower(), r)
    r = pget("not-a-token1")
    check("test_preview_label_outside_the_alphabet_403_not_the_app", r.status == 403 and b"svc test build" not in r.raw
          and b"/assets/" not in r.raw, r)
    r = pget(label.upper())
    check("test_preview_label_in_upper_case_is_the_same_host", r.status == 200, r)
    r = pget(label + ".x")
    check("test_preview_deeper_host_not_served", r.status == 403 and b"<h1>" in r.raw.lower(), r)
    if not secret:
        skip_rest("no JWT_SECRET in SVC_TEST_CONFIG", names)
        return
    now = int(time.time())
    r = pget(mint(secret, pid, now + 600))
    check(names[0], r.status == 200 and b"<html" in r.raw.lower(), r)
    r = pget(mint(secret, pid, now - 5))
    check(names[1], is_svc_preview_page(r, 403) and no_cookie_set(r) and b"expired" in r.raw, r)
    good = mint(secret, pid, now + 600)
    r = pget(good[:-3] + ("a" if good[-3] != "a" else "b") + good[-2:])
    check(names[2], is_svc_preview_page(r, 403), r)
    # the bytes of another project's id under this project's mac: never that project, never this one
    r = pget(mint(secret, other_pid, now + 600, mac_of=pid))
    check(names[3], is_svc_preview_page(r, 403), r)
    r = pget(mint(b"another-instance-secret-0123456789abcdef", pid, now + 600))
    check(names[4], is_svc_preview_page(r, 403), r)


def test_permissions(a, pid):
    r = api("GET", "/projects/%s/preview" % pid)
    check("test_preview_url_anonymous_401", r.status == 401 and r.body.get("error") == "unauthorized", r)
    other = signup(tag="prev-other")
    r = api("GET", "/projects/%s/preview" % pid, token=other.token)
    check("test_preview_url_non_member_403", r.status == 403 and r.body.get("error") == "forbidden", r)
    r = api("GET", "/projects/%s/preview" % UNKNOWN_ID, token=a.token)
    check("test_preview_url_unknown_project_404", r.status == 404 and r.body.get("error") == "not_found", r)
    r = api("GET", "/projects/not-a-uuid/preview", token=a.token)
    check("test_preview_url_malformed_id_404", r.status == 404 and r.body.get("error") == "not_found", r)
    r = api("POST", "/projects/%s/preview" % pid, token=a.token, raw=b"")
    check("test_preview_url_post_405", r.status == 405 and r.body.get("error") == "method_not_allowed", r)
    r = api("GET", "/projects/%s/preview" % pid, token="not.a.token")
    check("test_preview_url_bad_token_401", r.status == 401, r)
    # a public project can be previewed by anyone who may read it
    pub = create_project(a, "blank")
    if pub.status != 201:
        check("test_preview_url_public_project_anonymous", False, pub)
        return
    api("PATCH", "/projects/%s" % pub.body["id"], {"visibility": "public"}, token=a.token)
    r = api("GET", "/projects/%s/preview" % pub.body["id"])
    check("test_preview_url_public_project_anonymous", r.status == 200 and "url" in r.body, r)


def test_other_project(a, label_a):
    """Each token serves its own project only: B's token shows B's files, A's token A's."""
    b = create_project(a, "blank")
    if b.status != 201:
        check("test_preview_each_token_serves_its_own_project", False, b)
        return None
    bid = b.body["id"]
    r = api("GET", "/projects/%s/preview" % bid, token=a.token)
    label_b = label_of(r.body["url"]) if r.status == 200 else ""
    ra, rb = pget(label_a), pget(label_b)
    want_b = api("GET", "/projects/%s/files/index.html" % bid, token=a.token)
    check("test_preview_each_token_serves_its_own_project",
          label_b and is_page(rb, want_b.raw) and ra.status == 200 and ra.raw != rb.raw, (ra, rb))
    # after a (soft) delete the token no longer shows anything
    api("DELETE", "/projects/%s" % bid, token=a.token)
    r = pget(label_b)
    check("test_preview_deleted_project_404", is_svc_preview_page(r, 404), r)
    return bid


def test_session_isolation(a, label):
    """A page of the preview origin cannot read the API as the viewer: the session cookies are host-only on
    app_url (a browser never sends them to the preview host) and CORS does not allow the preview origin (nor the
    sandboxed frame's opaque origin "null"), so a cross-origin fetch with credentials cannot be read."""
    signup_cookies = a.response.cookies
    session = [c for c in signup_cookies if c.split("=", 1)[0] in ("svc_access_token", "svc_refresh_token")]
    check("test_preview_session_cookies_are_host_only",
          len(session) == 2 and all("domain=" not in c.lower() for c in session), signup_cookies)
    origin = "http://%s.preview.%s:%d" % (label, DOMAIN, HTTP_PORT)
    for name, o in (("preview_origin", origin), ("opaque_origin", "null")):
        r = api("GET", "/auth/me", headers={"Origin": o, "Cookie": "svc_access_token=" + a.token})
        check("test_preview_%s_gets_no_cors_for_auth_me" % name,
              "access-control-allow-origin" not in r.headers and "access-control-allow-credentials" not in r.headers,
              r.headers)
        r = api("OPTIONS", "/auth/me", headers={"Origin": o, "Access-Control-Request-Method": "GET",
                                               "Access-Control-Request-Headers": "authorization"})
        check("test_preview_%s_preflight_not_allowed" % name,
              "access-control-allow-origin" not in r.headers, r.headers)
        r = api("POST", "/auth/refresh", headers={"Origin": o, "Cookie": "svc_refresh_token=" + (a.refresh or "")})
        check("test_preview_%s_cannot_refresh_the_session" % name,
              r.status == 403 and "access-control-allow-origin" not in r.headers, r)


def test_published_site_has_no_script(a, pid):
    """Publishing copies the project's files: the preview's script is not one of them, so the site never has it."""
    r = api("POST", "/deploy/%s" % pid, token=a.token)
    slug = r.body.get("slug") if r.status == 200 and isinstance(r.body, dict) else None
    check("test_preview_setup_publish", slug, r)
    if not slug:
        return
    want = api("GET", "/projects/%s/files/index.html" % pid, token=a.token)
    site = site_get(slug, "/")
    check("test_preview_published_site_has_no_preview_script",
          site.status == 200 and site.raw == want.raw and b"svc-preview" not in site.raw and b"APP_ORIGIN" not in site.raw,
          site)


def main():
    a = signup(tag="preview")
    proj = create_project(a, "todo-app")
    if proj.status != 201:
        check("test_preview_setup_project", False, proj)
        return finish()
    pid = proj.body["id"]
    label = test_url(a, pid)
    if not label:
        skip_rest("no preview URL", ["test_preview_serves_the_projects_index_html"])
        return finish()
    test_serving(a, pid, label)
    test_tree(a, pid, label)
    other = create_project(a, "blank")
    test_tokens(a, pid, other.body["id"] if other.status == 201 else UNKNOWN_ID, label)
    test_permissions(a, pid)
    test_other_project(a, label)
    test_session_isolation(a, label)
    test_published_site_has_no_script(a, pid)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
