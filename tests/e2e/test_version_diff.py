#!/usr/bin/env python3
# test_version_diff.py: GET /projects/:id/versions/:sha/diff: what a version changed, a unified diff per file, the first version against nothing, and the errors
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from svclib import UNKNOWN_ID, api, check, create_project, finish, is_error, signup, versions  # noqa: E402

FILE_FIELDS = {"path", "oldPath", "status", "binary", "diff", "truncated", "additions", "deletions"}


def shas(a, pid):
    return [v["sha"] for v in versions(a, pid)]


def main():
    a = signup(tag="diff")
    p = create_project(a, "todo-app")
    if p.status != 201:
        check("test_version_diff_setup", False, p)
        return finish()
    pid = p.body["id"]
    first = shas(a, pid)[0]
    # a second version: a visual edit of index.html's title
    r = api("POST", "/direct-save/%s" % pid, {"filePath": "index.html", "patches": [
        {"selector": "h1", "property": "textContent", "value": "Diffed todos"}]}, token=a.token)
    check("test_version_diff_setup_edit", r.status == 200 and r.body.get("changed"), r)
    second = shas(a, pid)[0]

    r = api("GET", "/projects/%s/versions/%s/diff" % (pid, second), token=a.token)
    ok = r.status == 200 and isinstance(r.body, dict) and {"sha", "files"} <= set(r.body)
    check("test_version_diff_200", ok, r)
    if ok:
        check("test_version_diff_names_the_version_and_its_parent",
              r.body["sha"] == second and r.body.get("parent") == first, r.body)
        files = r.body["files"]
        check("test_version_diff_one_file_changed", [f["path"] for f in files] == ["index.html"], files)
        f = files[0] if files else {}
        check("test_version_diff_file_fields", set(f) == FILE_FIELDS, f)
        check("test_version_diff_status_modified", f.get("status") == "modified" and f.get("oldPath") is None, f)
        d = f.get("diff") or ""
        check("test_version_diff_is_a_unified_diff",
              "--- a/index.html\n+++ b/index.html\n" in d and "\n@@ -" in d and "+" in d and
              any(line.startswith("+") and "Diffed todos" in line for line in d.splitlines()) and
              any(line.startswith("-") and "Diffed todos" not in line and "<h1" in line for line in d.splitlines()),
              d)
        check("test_version_diff_not_truncated", f.get("truncated") is False and r.body.get("truncated") is False, r.body)
    # the first version: every file added, against nothing
    r = api("GET", "/projects/%s/versions/%s/diff" % (pid, first), token=a.token)
    files = r.body.get("files", []) if r.status == 200 else []
    check("test_version_diff_first_version_adds_every_file",
          r.status == 200 and r.body.get("parent") is None and files and all(f["status"] == "added" for f in files)
          and {"index.html", "app.js", "style.css"} <= {f["path"] for f in files}, r)
    # a unique prefix names the version, like checkout
    r = api("GET", "/projects/%s/versions/%s/diff" % (pid, second[:8].upper()), token=a.token)
    check("test_version_diff_prefix_and_case", r.status == 200 and r.body.get("sha") == second, r)

    # errors: unknown and malformed shas, the project, the caller
    for name, sha in (("zeros", "0" * 40), ("not_hex", "not-a-sha"), ("head", "HEAD"), ("short", "abc"),
                      ("too_long", second + "0")):
        r = api("GET", "/projects/%s/versions/%s/diff" % (pid, sha), token=a.token)
        check("test_version_diff_sha_%s_404" % name, is_error(r, 404, "not_found"), r)
    # a commit of another project is not one of this project's versions
    other = create_project(a, "blank")
    if other.status == 201:
        r = api("GET", "/projects/%s/versions/%s/diff" % (pid, shas(a, other.body["id"])[0]), token=a.token)
        check("test_version_diff_other_projects_sha_404", is_error(r, 404, "not_found"), r)
    r = api("GET", "/projects/%s/versions/%s/diff" % (UNKNOWN_ID, second), token=a.token)
    check("test_version_diff_unknown_project_404", is_error(r, 404, "not_found"), r)
    r = api("GET", "/projects/not-a-uuid/versions/%s/diff" % second, token=a.token)
    check("test_version_diff_malformed_project_id_404", is_error(r, 404, "not_found"), r)
    r = api("GET", "/projects/%s/versions/%s/diff" % (pid, second))
    check("test_version_diff_anonymous_401", is_error(r, 401, "unauthorized"), r)
    b = signup(tag="diff-other")
    r = api("GET", "/projects/%s/versions/%s/diff" % (pid, second), token=b.token)
    check("test_version_diff_non_member_403", is_error(r, 403, "forbidden"), r)
    r = api("POST", "/projects/%s/versions/%s/diff" % (pid, second), token=a.token, raw=b"")
    check("test_version_diff_post_405", is_error(r, 405, "method_not_allowed"), r)
    # a public project's versions are readable without a token, diffs too
    api("PATCH", "/projects/%s" % pid, {"visibility": "public"}, token=a.token)
    r = api("GET", "/projects/%s/versions/%s/diff" % (pid, second))
    check("test_version_diff_public_project_anonymous", r.status == 200 and r.body.get("sha") == second, r)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
