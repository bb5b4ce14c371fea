#!/usr/bin/env python3
# test_thumbnails.py: GET /thumbnails/:id.png and POST /thumbnails/:id/regenerate against the real stack; svc-worker re-renders after a change
import os
import struct
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from svclib import BASE_URL, UNKNOWN_ID, api, check, created_id, finish, is_error, signup  # noqa: E402
from wslib import create_in  # noqa: E402


def png_size(raw):
    """(width, height) of a PNG, or None when raw is not one."""
    if len(raw) < 24 or raw[:8] != b"\x89PNG\r\n\x1a\n" or raw[12:16] != b"IHDR":
        return None
    return struct.unpack(">II", raw[16:24])


def thumb(pid, token=None, headers=None):
    return api("GET", "/thumbnails/%s.png" % pid, token=token, headers=headers)


def wait_source(pid, token, source, old_etag, secs=120):
    """GETs the thumbnail until it comes from `source` with an ETag other than old_etag; the last answer."""
    deadline = time.monotonic() + secs
    while True:
        g = thumb(pid, token)
        if (g.headers.get("x-thumbnail-source") == source and g.headers.get("etag") != old_etag) \
                or time.monotonic() > deadline:
            return g
        time.sleep(0.5)


def main():
    a, b = signup(tag="th-a"), signup(tag="th-b")
    r = create_in(a, a.workspace_id, "Thumbnail project", template="todo-app")
    pid = created_id(r)
    check("test_thumbnails_project_created", pid is not None and r.body.get("thumbnailUrl") is None, r)
    if not pid:
        return

    r = thumb(pid, a.token)
    size = png_size(r.raw)
    check("test_thumbnails_get_answers_a_png", r.status == 200 and r.headers.get("content-type") == "image/png"
          and size == (600, 315), (r.status, r.headers, size))
    etag = r.headers.get("etag", "")
    check("test_thumbnails_get_has_a_strong_etag", etag.startswith('"') and etag.endswith('"') and len(etag) == 34,
          r.headers)
    check("test_thumbnails_get_has_cache_control_private_for_a_non_public_project",
          "private, max-age=60" in r.headers.get("cache-control", ""), r.headers)
    check("test_thumbnails_get_says_its_source", r.headers.get("x-thumbnail-source") in ("fallback", "chromium"),
          r.headers)
    p = api("GET", "/projects/%s" % pid, token=a.token).body
    check("test_thumbnails_project_thumbnail_url_is_set",
          p.get("thumbnailUrl") == "%s/thumbnails/%s.png" % (BASE_URL, pid), p)
    r2 = thumb(pid, a.token, {"If-None-Match": etag})
    check("test_thumbnails_if_none_match_is_304", r2.status == 304 and r2.raw == b"" and r2.headers.get("etag") == etag,
          r2)
    r2 = thumb(pid, a.token, {"If-None-Match": '"0000"'})
    check("test_thumbnails_other_etag_is_200", r2.status == 200 and r2.raw == r.raw, r2.status)

    # regeneration: a Chromium render queued for svc-worker (the request does not wait for it), then
    # the generated image on request
    t0 = time.monotonic()
    r = api("POST", "/thumbnails/%s/regenerate" % pid, token=a.token)
    secs = time.monotonic() - t0
    body = r.body if isinstance(r.body, dict) else {}
    check("test_thumbnails_regenerate_is_202_queued",
          r.status == 202 and body.get("status") == "queued" and body.get("projectId") == pid
          and body.get("width") == 600 and body.get("height") == 315, r)
    check("test_thumbnails_regenerate_answers_at_once (took %.1f s)" % secs, secs < 3, secs)
    check("test_thumbnails_regenerate_names_the_thumbnail_served_meanwhile",
          body.get("etag") == etag and body.get("source") in ("fallback", "chromium")
          and body.get("url") == "%s/thumbnails/%s.png" % (BASE_URL, pid), body)
    g = wait_source(pid, a.token, "chromium", etag)
    check("test_thumbnails_worker_renders_the_queued_chromium_image",
          g.status == 200 and g.headers.get("x-thumbnail-source") == "chromium" and g.headers.get("etag") != etag
          and png_size(g.raw) == (600, 315) and g.raw != r2.raw, g.headers)
    chromium_etag = g.headers.get("etag")
    r = api("POST", "/thumbnails/%s/regenerate?renderer=fallback" % pid, token=a.token)
    check("test_thumbnails_regenerate_fallback_says_why",
          r.status == 200 and r.body.get("source") == "fallback" and isinstance(r.body.get("reason"), str), r)
    g = thumb(pid, a.token)
    check("test_thumbnails_fallback_image_is_served",
          g.headers.get("x-thumbnail-source") == "fallback" and g.headers.get("etag") != chromium_etag, g.headers)
    r = api("POST", "/thumbnails/%s/regenerate?renderer=gpu" % pid, token=a.token)
    check("test_thumbnails_regenerate_unknown_renderer_is_400", is_error(r, 400, "validation_failed", "renderer"), r)

    # permissions: the project's read permission for the image, write for regeneration
    r = thumb(pid, b.token)
    check("test_thumbnails_get_by_non_member_is_403", is_error(r, 403, "forbidden"), r)
    r = thumb(pid)
    check("test_thumbnails_get_anonymous_is_401", is_error(r, 401, "unauthorized"), r)
    r = api("POST", "/thumbnails/%s/regenerate" % pid, token=b.token)
    check("test_thumbnails_regenerate_by_non_member_is_403", is_error(r, 403, "forbidden"), r)
    r = api("POST", "/thumbnails/%s/regenerate" % pid)
    check("test_thumbnails_regenerate_anonymous_is_401", is_error(r, 401, "unauthorized"), r)
    api("PATCH", "/projects/%s" % pid, {"visibility": "public"}, token=a.token)
    r = thumb(pid)
    check("test_thumbnails_public_project_image_is_anonymous_and_cacheable",
          r.status == 200 and "public, max-age=60" in r.headers.get("cache-control", ""), r.headers)
    r = api("POST", "/thumbnails/%s/regenerate" % pid, token=b.token)
    check("test_thumbnails_regenerate_public_project_by_non_member_is_403", is_error(r, 403, "forbidden"), r)
    for label, name in (("unknown_project", UNKNOWN_ID + ".png"), ("not_png", pid + ".jpg"), ("no_extension", pid),
                        ("not_a_uuid", "abc.png"), ("double_extension", pid + ".png.png")):
        r = api("GET", "/thumbnails/%s" % name, token=a.token)
        check("test_thumbnails_get_%s_is_404" % label, is_error(r, 404, "not_found"), r)
    r = api("POST", "/thumbnails/%s/regenerate" % UNKNOWN_ID, token=a.token)
    check("test_thumbnails_regenerate_unknown_project_is_404", is_error(r, 404, "not_found"), r)

    # after a change, svc-worker renders again without anyone asking (the request does not wait for it)
    fallback_etag = thumb(pid, a.token).headers.get("etag")
    api("POST", "/thumbnails/%s/regenerate" % pid, token=a.token)
    before = wait_source(pid, a.token, "chromium", fallback_etag).headers.get("etag")
    t0 = time.monotonic()
    r = api("POST", "/direct-save/%s" % pid, {"filePath": "index.html", "patches": [
        {"selector": "h1", "property": "text", "value": "Changed for the thumbnail"},
        {"selector": "h1", "property": "style.font-size", "value": "90px"}]}, token=a.token)
    check("test_thumbnails_direct_save_answers_before_any_render", r.status == 200 and time.monotonic() - t0 < 10, r)
    after, src = before, None
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        g = thumb(pid, a.token)
        after, src = g.headers.get("etag"), g.headers.get("x-thumbnail-source")
        if after != before:
            break
        time.sleep(1)
    check("test_thumbnails_worker_renders_again_after_files_change", after != before and src == "chromium",
          (before, after, src))

    # hard delete removes the image
    api("DELETE", "/projects/%s?hard=true" % pid, token=a.token)
    r = thumb(pid, a.token)
    check("test_thumbnails_hard_deleted_project_has_none", is_error(r, 404, "not_found"), r)


if __name__ == "__main__":
    try:
        main()
    except Exception:
        import traceback
        check("test_thumbnails ran to the end", False, traceback.format_exc())
    sys.exit(finish())
