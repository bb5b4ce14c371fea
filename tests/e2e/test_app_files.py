#!/usr/bin/env python3
# test_app_files.py: the apps' files under /_svc/files (svc-app, lib/app/app_files.c, docs/app-backend.md "Files") on a
# published site and on the preview: upload, get and delete; the headers per type (an image inline, SVG and the rest
# attachments, nosniff, a sandbox); two end users who never get or delete each other's files; the rules of
# svc.data.json's "files" block (owner by default, public signed out, user, none); the size cap and the quota, past
# which nothing is written; a record's `file` field that names an unknown or foreign file; test and live apart;
# cross-site uploads refused; the builders' summary, an end user deleted with their files, the test data emptied;
# each security header once (svc-app's, not the site's), on a custom domain too; conditional GETs (ETag,
# Last-Modified, 304) only for a caller who may get the file.
import email.utils
import hashlib
import json
import os
import re
import secrets
import sys
import time
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from svclib import (DOMAIN, HTTP_PORT, UUID_RE, api, check, create_project, finish, is_error, request,  # noqa: E402
                    signup)
from test_app_backend import API_HEADERS, Site, header_problems, on_custom_domain, put_file, sign_up  # noqa: E402

MIB = 1024 * 1024
FILE_MAX = 1 * MIB          # SVC_APP_FILE_MAX_MB=1 (tests/stack.env)
QUOTA = 2500000             # SVC_APP_MAX_FILE_BYTES (tests/stack.env)
PNG = bytes.fromhex("89504e470d0a1a0a0000000d4948445200000001000000010806000000"
                    "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082")
SVG = b'<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>'
FILE_CSP = "sandbox; default-src 'none'; img-src 'self' data:; style-src 'unsafe-inline'; frame-ancestors 'none'"

DECL = {
    "collections": {
        "docs": {"fields": {"title": {"type": "string"}, "att": {"type": "file"}},
                 "rules": {"list": "owner", "get": "owner", "create": "user", "update": "owner", "delete": "owner"}},
    },
    "files": {},  # no rule: owner for create, get and delete
}
PUBLIC = {"files": {"rules": {"create": "public", "get": "public", "delete": "user"}}}


def upload(site, data, ctype="application/octet-stream", headers=None, origin=True):
    """POST /_svc/files with `data` as the body, of type `ctype` (None: no Content-Type), as site.call() sends."""
    h = {"Host": site.host}
    if ctype is not None:
        h["Content-Type"] = ctype
    if origin:
        h["Origin"] = site.origin
    if site.cookie:
        h["Cookie"] = "svc_app_session=" + site.cookie
    h.update(headers or {})
    return request("POST", "http://127.0.0.1:%d/_svc/files" % HTTP_PORT, data, h)


def nosniff(h):
    """X-Content-Type-Options is nosniff, once (svc-app's: the site's host adds none under /_svc/)."""
    return h.get("x-content-type-options") == "nosniff"


def site_of(a, pid, slug, env):
    if env == "live":
        return Site("%s.%s:%d" % (slug, DOMAIN, HTTP_PORT))
    r = api("GET", "/projects/%s/preview" % pid, token=a.token)
    return Site(urllib.parse.urlsplit(r.body["url"]).netloc if r.status == 200 else "none")


def project(a, decl, publish=True):
    r = create_project(a, template="blank")
    pid, slug = r.body["id"], r.body["slug"]
    r = put_file(a, pid, "svc.data.json", json.dumps(decl, indent=2))
    check("test_app_files_declaration_saved_%s" % ("public" if decl is PUBLIC else "owner"), r.status in (200, 201), r)
    if publish:
        r = api("POST", "/deploy/%s" % pid, token=a.token, timeout=120)
        check("test_app_files_published_%s" % ("public" if decl is PUBLIC else "owner"), r.status == 200, r)
    return pid, slug


def round_trip(env, a):
    """Upload, get with the headers of each type, delete."""
    r = upload(a, PNG, "image/png")
    check("test_app_files_%s_upload_201_id_url" % env, r.status == 201 and re.match(UUID_RE, r.body.get("id", ""))
          and r.body.get("url") == "/_svc/files/" + r.body["id"], r)
    png = r.body.get("id", "none")
    r = a.call("GET", "/_svc/files/" + png)
    h = r.headers
    check("test_app_files_%s_get_bytes_and_type" % env, r.status == 200 and r.raw == PNG
          and h.get("content-type") == "image/png"
          and h.get("content-length") in (None, str(len(PNG))), h)  # Apache may send it chunked
    check("test_app_files_%s_image_inline_nosniff_sandbox" % env,
          h.get("content-disposition") == "inline" and nosniff(h)
          and "sandbox" in h.get("content-security-policy", "") and "private" in h.get("cache-control", ""), h)
    for tag, data, ctype, served in (("svg", SVG, "image/svg+xml", "image/svg+xml"),
                                     ("html", b"<script>alert(1)</script>", "Text/HTML; charset=utf-8",
                                      "text/html; charset=utf-8"),
                                     ("untyped", b"\x00\x01bytes", None, "application/octet-stream")):
        r = upload(a, data, ctype)
        fid = r.body.get("id", "none") if r.status == 201 else "none"
        r2 = a.call("GET", "/_svc/files/" + fid)
        check("test_app_files_%s_%s_served_as_attachment" % (env, tag), r.status == 201 and r2.status == 200
              and r2.raw == data and r2.headers.get("content-type") == served
              and r2.headers.get("content-disposition") == "attachment"
              and nosniff(r2.headers)
              and "sandbox" in r2.headers.get("content-security-policy", ""), (r, r2.headers))
        a.call("DELETE", "/_svc/files/" + fid)
    r = upload(a, b"x", "nonsense")
    check("test_app_files_%s_bad_content_type_400" % env, is_error(r, 400, "validation_failed", "Content-Type"), r)
    r = upload(a, b"x", "text/" + "p" * 130)
    check("test_app_files_%s_long_content_type_400" % env, is_error(r, 400, "validation_failed", "Content-Type"), r)
    r = upload(a, b"", "text/plain")
    check("test_app_files_%s_empty_body_400" % env, is_error(r, 400, "validation_failed", "body"), r)
    r = upload(a, b"y" * (FILE_MAX + 1))
    check("test_app_files_%s_over_size_cap_413" % env, is_error(r, 413, "payload_too_large")
          and "SVC_APP_FILE_MAX_MB" in r.body["message"], r)
    big = secrets.token_bytes(FILE_MAX)  # four chunks
    r = upload(a, big)
    r2 = a.call("GET", "/_svc/files/" + (r.body.get("id", "none") if r.status == 201 else "none"))
    check("test_app_files_%s_largest_file_round_trip" % env, r.status == 201 and r2.status == 200 and r2.raw == big,
          (r, r2.status, len(r2.raw)))
    r3 = a.call("DELETE", "/_svc/files/" + r.body.get("id", "none"))
    r4 = a.call("GET", "/_svc/files/" + r.body.get("id", "none"))
    check("test_app_files_%s_delete_204_then_404" % env, r3.status == 204 and is_error(r4, 404, "not_found"), (r3, r4))
    r = a.call("DELETE", "/_svc/files/" + r.body.get("id", "none"))
    check("test_app_files_%s_delete_again_404" % env, is_error(r, 404, "not_found"), r)
    r = a.call("GET", "/_svc/files/not-a-uuid")
    check("test_app_files_%s_bad_id_404" % env, r.status == 404, r)
    return png


def headers_once(env, site):
    """A file served and a file's 404 carry each security header once, svc-app's (test_app_backend.py headers_once):
    a file its sandbox policy, which stands for X-Frame-Options, never the site's SAMEORIGIN. `site` is signed in."""
    r = upload(site, PNG, "image/png")
    fid = r.body.get("id", "none") if r.status == 201 else "none"
    for tag, path, status, want in (
            ("file", "/_svc/files/" + fid, 200,
             {"x-content-type-options": "nosniff", "referrer-policy": "no-referrer", "x-frame-options": None,
              "content-security-policy": FILE_CSP, "cross-origin-opener-policy": None, "content-type": "image/png",
              "cache-control": "private, no-cache"}),
            ("file_404", "/_svc/files/11111111-2222-4333-8444-555555555555", 404,
             dict(API_HEADERS, **{"cache-control": "no-store", "content-type": "application/json"}))):
        r = site.call("GET", path)
        bad = header_problems(r, want)
        check("test_app_files_%s_headers_once_%s" % (env, tag), r.status == status and not bad, (r.status, bad))
    site.call("DELETE", "/_svc/files/" + fid)


def conditional(env, a, b, anon, a_file):
    """GET /_svc/files/:id's validators (RFC 9110 §8.8, §13): a strong ETag of the file's SHA-256, Last-Modified its
    upload, 304 with no body on If-None-Match (weak comparison, lists, *) or If-Modified-Since (ignored when
    If-None-Match is there, or not a date); under the owner rule another end user or the signed-out get the 404 or
    401 they got before, never a 304."""
    r = a.call("GET", "/_svc/files/" + a_file)
    etag, lm = r.headers.get("etag", ""), r.headers.get("last-modified", "")
    try:
        lm_at = email.utils.parsedate_to_datetime(lm).timestamp()
    except (TypeError, ValueError):
        lm_at = 0
    check("test_app_files_%s_etag_strong_of_the_bytes" % env, r.status == 200
          and etag == '"%s"' % hashlib.sha256(PNG).hexdigest(), r.headers)
    check("test_app_files_%s_last_modified_the_upload" % env, r.status == 200 and lm.endswith(" GMT")
          and abs(time.time() - lm_at) < 900, r.headers)
    check("test_app_files_%s_cache_control_private_revalidated" % env,
          r.headers.get("cache-control") == "private, no-cache", r.headers)
    want304 = {"x-content-type-options": "nosniff", "referrer-policy": "no-referrer", "x-frame-options": None,
               "content-security-policy": FILE_CSP, "cache-control": "private, no-cache", "etag": etag,
               "last-modified": lm}
    for tag, h in (("if_none_match", {"If-None-Match": etag}),
                   ("if_none_match_weak", {"If-None-Match": "W/" + etag}),
                   ("if_none_match_list", {"If-None-Match": '"other", W/"x",%s' % etag}),
                   ("if_none_match_star", {"If-None-Match": "*"}),
                   ("if_modified_since_same", {"If-Modified-Since": lm}),
                   ("if_modified_since_later", {"If-Modified-Since": "Fri, 31 Dec 2100 23:59:59 GMT"})):
        r = a.call("GET", "/_svc/files/" + a_file, headers=h)
        bad = header_problems(r, want304)
        check("test_app_files_%s_304_%s" % (env, tag), r.status == 304 and r.raw == b""
              and r.headers.get("content-length") in (None, str(len(PNG))) and not bad, (r.status, r.headers, bad))
    for tag, h in (("other_etag", {"If-None-Match": '"%s"' % ("0" * 64)}),
                   ("if_modified_since_before", {"If-Modified-Since": "Sun, 06 Nov 1994 08:49:37 GMT"}),
                   ("if_modified_since_not_a_date", {"If-Modified-Since": "yesterday"}),
                   ("if_none_match_wins", {"If-None-Match": '"other"', "If-Modified-Since": lm}),
                   ("malformed_if_none_match", {"If-None-Match": etag[1:]})):
        r = a.call("GET", "/_svc/files/" + a_file, headers=h)
        check("test_app_files_%s_200_%s" % (env, tag), r.status == 200 and r.raw == PNG
              and r.headers.get("etag") == etag, (r.status, r.headers))
    for tag, who, status, code in (("other_end_user_404", b, 404, "not_found"),
                                   ("signed_out_401", anon, 401, "unauthorized")):
        for h in ({"If-None-Match": etag}, {"If-None-Match": "*"}, {"If-Modified-Since": lm}):
            r = who.call("GET", "/_svc/files/" + a_file, headers=h)
            check("test_app_files_%s_conditional_%s_%s" % (env, tag, list(h)[0].lower().replace("-", "_")),
                  is_error(r, status, code) and "etag" not in r.headers and "last-modified" not in r.headers, r)
    r = upload(a, b"soon gone", "text/plain")
    gone = r.body.get("id", "none") if r.status == 201 else "none"
    a.call("DELETE", "/_svc/files/" + gone)
    r = a.call("GET", "/_svc/files/" + gone, headers={"If-None-Match": "*"})
    check("test_app_files_%s_conditional_deleted_404" % env, is_error(r, 404, "not_found"), r)


def owners_apart(env, a, b, anon, a_file):
    """The default owner rule: B never gets or deletes A's file; signed out is 401."""
    r = b.call("GET", "/_svc/files/" + a_file)
    check("test_app_files_%s_b_get_a_404" % env, is_error(r, 404, "not_found") and PNG not in r.raw, r)
    r = b.call("DELETE", "/_svc/files/" + a_file)
    check("test_app_files_%s_b_delete_a_404" % env, is_error(r, 404, "not_found"), r)
    r = a.call("GET", "/_svc/files/" + a_file)
    check("test_app_files_%s_a_file_still_there" % env, r.status == 200 and r.raw == PNG, r)
    r = anon.call("GET", "/_svc/files/" + a_file)
    check("test_app_files_%s_anonymous_get_401" % env, is_error(r, 401, "unauthorized"), r)
    r = upload(anon, b"anon", "text/plain")
    check("test_app_files_%s_anonymous_upload_401" % env, is_error(r, 401, "unauthorized"), r)
    r = anon.call("DELETE", "/_svc/files/" + a_file)
    check("test_app_files_%s_anonymous_delete_401" % env, is_error(r, 401, "unauthorized"), r)
    r = upload(a, b"csrf", "text/plain", headers={"Origin": "http://evil.example"})
    check("test_app_files_%s_cross_origin_upload_403" % env, is_error(r, 403, "forbidden"), r)
    r = a.call("DELETE", "/_svc/files/" + a_file, headers={"Origin": "http://evil.example"})
    check("test_app_files_%s_cross_origin_delete_403" % env, is_error(r, 403, "forbidden"), r)
    r = upload(a, b"no origin", "text/plain", origin=False)
    check("test_app_files_%s_no_origin_no_client_header_403" % env, is_error(r, 403, "forbidden"), r)
    r = upload(a, b"client.js", "text/plain", origin=False, headers={"X-Svc-Client": "1"})
    check("test_app_files_%s_client_header_upload_ok" % env, r.status == 201, r)


def file_fields(env, a, a_file, foreign):
    """A record's file field: a file of this project and environment, nothing else."""
    r = a.call("POST", "/_svc/data/docs", {"title": "with a file", "att": a_file})
    check("test_app_files_%s_record_with_file_201" % env, r.status == 201 and r.body.get("att") == a_file, r)
    rec = r.body.get("id", "none")
    for tag, fid in [("unknown", "11111111-2222-4333-8444-555555555555")] + foreign:
        r = a.call("POST", "/_svc/data/docs", {"title": "x", "att": fid})
        check("test_app_files_%s_record_with_%s_file_400" % (env, tag), is_error(r, 400, "validation_failed", "att"), r)
        r = a.call("PATCH", "/_svc/data/docs/" + rec, {"att": fid})
        check("test_app_files_%s_update_with_%s_file_400" % (env, tag), is_error(r, 400, "validation_failed", "att"), r)
    r = a.call("GET", "/_svc/data/docs/" + rec)
    check("test_app_files_%s_refused_update_changed_nothing" % env, r.status == 200 and r.body.get("att") == a_file, r)
    r = a.call("POST", "/_svc/data/docs", {"title": "x", "att": "not-a-file"})
    check("test_app_files_%s_record_with_non_id_400" % env, is_error(r, 400, "validation_failed", "att"), r)


def public_rules(a, pid, slug):
    """files.rules: create and get public work signed out, delete under user is 401 signed out; none is 403."""
    live, test = site_of(a, pid, slug, "live"), site_of(a, pid, slug, "test")
    r = upload(live, b"public bytes", "text/plain")
    fid = r.body.get("id", "none") if r.status == 201 else "none"
    r2 = live.as_user().call("GET", "/_svc/files/" + fid)
    check("test_app_files_public_upload_and_get_signed_out", r.status == 201 and r2.status == 200
          and r2.raw == b"public bytes", (r, r2))
    check("test_app_files_public_cache_control_public_revalidated", r2.headers.get("cache-control") == "public, no-cache",
          r2.headers)
    r3 = live.as_user().call("GET", "/_svc/files/" + fid, headers={"If-None-Match": r2.headers.get("etag", "none")})
    check("test_app_files_public_304_signed_out", r3.status == 304 and r3.raw == b""
          and r3.headers.get("cache-control") == "public, no-cache", (r3.status, r3.headers))
    r = test.call("GET", "/_svc/files/" + fid)
    check("test_app_files_live_file_not_on_preview", is_error(r, 404, "not_found"), r)
    r = live.call("DELETE", "/_svc/files/" + fid)
    check("test_app_files_delete_under_user_signed_out_401", is_error(r, 401, "unauthorized"), r)
    u = live.as_user()
    sign_up(u, "fu")
    r = u.call("DELETE", "/_svc/files/" + fid)
    check("test_app_files_delete_under_user_any_end_user_204", r.status == 204, r)
    r = upload(test, b"test bytes", "text/plain")
    tid = r.body.get("id", "none") if r.status == 201 else "none"
    r = live.call("GET", "/_svc/files/" + tid)
    check("test_app_files_preview_file_not_on_live", is_error(r, 404, "not_found"), r)
    r = api("DELETE", "/projects/%s/backend/test" % pid, token=a.token)
    r2 = test.call("GET", "/_svc/files/" + tid)
    r3 = api("GET", "/projects/%s/backend" % pid, token=a.token)
    check("test_app_files_test_data_emptied_with_files", r.status == 204 and is_error(r2, 404, "not_found")
          and r3.status == 200 and r3.body["usage"]["test"]["files"] == 0 and r3.body["usage"]["test"]["fileBytes"] == 0,
          (r, r2, r3))
    none = {"files": {"rules": {"create": "none", "get": "public"}}}
    put_file(a, pid, "svc.data.json", json.dumps(none))
    r = upload(u, b"nobody", "text/plain")
    check("test_app_files_create_none_403", is_error(r, 403, "forbidden"), r)
    return fid


def quota(a):
    """SVC_APP_MAX_FILE_BYTES on a project of its own: past it 413 naming it, nothing written; a delete frees room."""
    pid, slug = project(a, PUBLIC, publish=False)
    site = site_of(a, pid, slug, "test")
    sign_up(site, "q")  # delete is under the rule user
    made = [upload(site, secrets.token_bytes(FILE_MAX)) for _ in range(2)]
    r = upload(site, secrets.token_bytes(FILE_MAX))
    check("test_app_files_quota_413_naming_it", all(x.status == 201 for x in made) and is_error(r, 413, "payload_too_large")
          and "SVC_APP_MAX_FILE_BYTES" in r.body["message"], (made, r))
    r = api("GET", "/projects/%s/backend" % pid, token=a.token)
    u = r.body.get("usage", {}).get("test", {}) if r.status == 200 else {}
    check("test_app_files_quota_nothing_written_past_it", u.get("files") == 2 and u.get("fileBytes") == 2 * FILE_MAX
          and r.body["quotas"].get("fileBytes") == QUOTA and r.body["quotas"].get("fileMaxBytes") == FILE_MAX, r)
    r = site.call("DELETE", "/_svc/files/" + made[0].body["id"])
    r2 = upload(site, secrets.token_bytes(FILE_MAX))
    check("test_app_files_quota_delete_frees_room", r.status == 204 and r2.status == 201, (r, r2))


def main():
    a = signup(tag="appfiles")
    pid, slug = project(a, DECL)
    qpid, qslug = project(a, PUBLIC)
    # a file of another project (public rules there), for the foreign-id checks
    other = upload(site_of(a, qpid, qslug, "live"), b"other project's", "text/plain").body.get("id", "none")
    files = {}
    for env in ("live", "test"):
        site = site_of(a, pid, slug, env)
        sign_up(site, "a")
        b = site.as_user()
        sign_up(b, "b")
        png = round_trip(env, site)
        headers_once(env, site)
        owners_apart(env, site, b, site.as_user(), png)
        conditional(env, site, b, site.as_user(), png)
        foreign = [("other_project", other)] + ([("live", files["live"])] if env == "test" else [])
        file_fields(env, site, png, foreign)
        r = upload(b, b"B's file", "text/plain")
        files[env] = png
        if env == "live":
            live = site
            b_live = b.call("GET", "/_svc/auth/me").body["user"]["id"]
            b_size = len(b"B's file") if r.status == 201 else 0

    # the builders' summary; an end user deleted with their files
    r = api("GET", "/projects/%s/backend" % pid, token=a.token)
    before = r.body["usage"]["live"] if r.status == 200 else {}
    check("test_app_files_builders_summary", r.status == 200 and before.get("files", 0) >= 3
          and before.get("fileBytes", 0) >= len(PNG) and r.body["quotas"].get("fileBytes") == QUOTA, r)
    r = api("DELETE", "/projects/%s/backend/live/users/%s" % (pid, b_live), token=a.token)
    r2 = api("GET", "/projects/%s/backend" % pid, token=a.token)
    after = r2.body["usage"]["live"] if r2.status == 200 else {}
    check("test_app_files_user_deleted_with_files", r.status == 204 and after.get("files") == before.get("files", 0) - 1
          and after.get("fileBytes") == before.get("fileBytes", 0) - b_size, (before, after))

    on_custom_domain("app_files", pid, live, headers_once)
    public_rules(a, qpid, qslug)
    quota(a)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
