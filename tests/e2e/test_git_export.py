#!/usr/bin/env python3
# test_git_export.py: GET /projects/:id/export.zip: a version's tree as the ZIP `git archive` makes of it, its name, who may have it, and the errors
import io
import os
import subprocess
import sys
import zipfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from svclib import (DATA_DIR, UNKNOWN_ID, api, check, create_project, finish, is_error, signup,  # noqa: E402
                    versions)


def git_archive(pid, sha):
    """`git archive --format=zip` of commit sha of the project's own repository (the real git CLI)."""
    return subprocess.run(["git", "-C", os.path.join(DATA_DIR, "projects", pid), "archive", "--format=zip", sha],
                          capture_output=True, timeout=60).stdout


def main():
    a = signup(tag="export")
    p = create_project(a, "todo-app")
    if p.status != 201:
        check("test_git_export_setup", False, p)
        return finish()
    pid, slug = p.body["id"], p.body["slug"]
    first = versions(a, pid)[0]["sha"]
    r = api("PUT", "/projects/%s/files/extra.txt" % pid, {"content": "second version\n"}, token=a.token)
    check("test_git_export_setup_second_version", r.status in (200, 201), r)
    latest = versions(a, pid)[0]["sha"]

    # the latest version by default, named <slug>-<short sha>.zip, the same bytes git archive makes of it
    r = api("GET", "/projects/%s/export.zip" % pid, token=a.token)
    check("test_git_export_200_zip", r.status == 200 and r.headers.get("content-type") == "application/zip", r)
    check("test_git_export_named_slug_short_sha",
          r.headers.get("content-disposition") == 'attachment; filename="%s-%s.zip"' % (slug, latest[:7]), r.headers)
    check("test_git_export_latest_matches_git_archive", r.raw == git_archive(pid, latest) and len(r.raw) > 100,
          "%d bytes" % len(r.raw))
    names = zipfile.ZipFile(io.BytesIO(r.raw)).namelist() if r.status == 200 else []
    check("test_git_export_latest_holds_the_new_file", "extra.txt" in names and "index.html" in names, names)

    # an older version, by full sha and by prefix in either case
    r = api("GET", "/projects/%s/export.zip?sha=%s" % (pid, first), token=a.token)
    check("test_git_export_version_matches_git_archive", r.status == 200 and r.raw == git_archive(pid, first), r)
    names = zipfile.ZipFile(io.BytesIO(r.raw)).namelist() if r.status == 200 else []
    check("test_git_export_version_is_that_tree", "extra.txt" not in names and "index.html" in names, names)
    r = api("GET", "/projects/%s/export.zip?sha=%s" % (pid, first[:9].upper()), token=a.token)
    check("test_git_export_prefix", r.status == 200 and
          r.headers.get("content-disposition", "").endswith('-%s.zip"' % first[:7]), r)

    # who may read the files may export; a stranger gets 404 (the project is not theirs to see), anonymous 401
    b = signup(tag="export-other")
    r = api("GET", "/projects/%s/export.zip" % pid, token=b.token)
    check("test_git_export_stranger_404", is_error(r, 404, "not_found") or is_error(r, 403, "forbidden"), r)
    r = api("GET", "/projects/%s/export.zip" % pid)
    check("test_git_export_anonymous_private_401", r.status in (401, 404) and r.status != 200, r)
    r = api("PATCH", "/projects/%s" % pid, {"visibility": "public"}, token=a.token)
    if r.status == 200:
        r = api("GET", "/projects/%s/export.zip" % pid)
        check("test_git_export_public_anonymous_200", r.status == 200 and r.raw == git_archive(pid, latest), r)

    # errors: unknown project, malformed and unknown shas
    r = api("GET", "/projects/%s/export.zip" % UNKNOWN_ID, token=a.token)
    check("test_git_export_unknown_project_404", is_error(r, 404, "not_found"), r)
    r = api("GET", "/projects/not-a-uuid/export.zip", token=a.token)
    check("test_git_export_malformed_project_404", is_error(r, 404, "not_found"), r)
    for name, sha in (("unknown", "0" * 40), ("malformed", "not-a-sha"), ("short", "abc"), ("too_long", latest + "0"),
                      ("head", "HEAD"), ("ref", "main")):
        r = api("GET", "/projects/%s/export.zip?sha=%s" % (pid, sha), token=a.token)
        check("test_git_export_sha_%s_404" % name, is_error(r, 404, "not_found"), r)
    r = api("POST", "/projects/%s/export.zip" % pid, token=a.token)
    check("test_git_export_post_405", r.status == 405, r)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
