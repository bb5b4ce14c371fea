#!/usr/bin/env python3
# test_files_write.py: creating, overwriting, renaming and deleting a project's files through the API
# (PUT, PATCH, DELETE /projects/:id/files/<path>, the editor's file tree): one commit per change, the
# agent's path confinement, and every error (400 path, 401, 403, 404, 409, 413).
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from svclib import UNKNOWN_ID, api, check, finish, is_error, items_of, versions  # noqa: E402
from wslib import Team, create_in  # noqa: E402


def url(pid, path):
    return "/projects/%s/files/%s" % (pid, path)


def read(acct, pid, path):
    r = api("GET", url(pid, path), token=acct.token)
    return r.raw if r.status == 200 else None


def paths(acct, pid):
    r = api("GET", "/projects/%s/files" % pid, token=acct.token)
    return [f["path"] for f in items_of(r.body) or []]


def main():
    t = Team("files")
    a, member, outsider = t.owner, t.member, t.outsider
    pid = (create_in(a, t.wid, "File tree", template="todo-app").body or {}).get("id")
    pub = (create_in(a, t.wid, "Public tree", template="todo-app", visibility="public").body or {}).get("id")
    check("test_files_write_projects_created", pid and pub)
    if not (pid and pub):
        return
    n0 = len(versions(a, pid))

    # create
    r = api("PUT", url(pid, "pages/about.html"), {"content": "<h1>About</h1>\n"}, token=member.token)
    check("test_files_write_create_is_201_with_path_and_sha",
          r.status == 201 and r.body.get("path") == "pages/about.html" and len(r.body.get("sha") or "") == 40, r)
    check("test_files_write_created_file_reads_back", read(a, pid, "pages/about.html") == b"<h1>About</h1>\n")
    vs = versions(a, pid)
    check("test_files_write_create_is_one_commit",
          len(vs) == n0 + 1 and vs[0].get("message") == "Create pages/about.html" and vs[0].get("sha") == r.body.get("sha")
          and vs[0].get("authorEmail") == member.email, vs[:2])
    r = api("PUT", url(pid, "empty.txt"), {"content": ""}, token=a.token)
    check("test_files_write_create_empty_file", r.status == 201 and read(a, pid, "empty.txt") == b"", r)
    r = api("PUT", url(pid, "caf%C3%A9%20menu.md"), {"content": "# Café ☕\n"}, token=a.token)
    check("test_files_write_create_percent_encoded_utf8_path",
          r.status == 201 and r.body.get("path") == "café menu.md" and "café menu.md" in paths(a, pid), r)

    # 409: exists, without overwrite; overwrite replaces (200)
    r = api("PUT", url(pid, "pages/about.html"), {"content": "other"}, token=a.token)
    check("test_files_write_create_existing_is_409", is_error(r, 409, "conflict", "path"), r)
    check("test_files_write_409_changes_nothing", read(a, pid, "pages/about.html") == b"<h1>About</h1>\n")
    n1 = len(versions(a, pid))
    r = api("PUT", url(pid, "pages/about.html"), {"content": "<h1>About us</h1>\n", "overwrite": True}, token=a.token)
    check("test_files_write_overwrite_is_200", r.status == 200 and len(r.body.get("sha") or "") == 40, r)
    vs = versions(a, pid)
    check("test_files_write_overwrite_is_one_commit_named_edit",
          len(vs) == n1 + 1 and vs[0].get("message") == "Edit pages/about.html", vs[:2])
    r = api("PUT", url(pid, "pages/about.html"), {"content": "<h1>About us</h1>\n", "overwrite": True}, token=a.token)
    check("test_files_write_overwrite_with_same_content_makes_no_commit",
          r.status == 200 and r.body.get("sha") is None and len(versions(a, pid)) == n1 + 1, r)
    r = api("PUT", url(pid, "new-by-overwrite.css"), {"content": "a{}", "overwrite": True}, token=a.token)
    check("test_files_write_overwrite_of_missing_file_creates_it_201", r.status == 201, r)

    # rename
    n2 = len(versions(a, pid))
    r = api("PATCH", url(pid, "pages/about.html"), {"path": "about/index.html"}, token=member.token)
    check("test_files_write_rename_is_200_with_both_paths",
          r.status == 200 and r.body.get("path") == "about/index.html" and r.body.get("oldPath") == "pages/about.html"
          and len(r.body.get("sha") or "") == 40, r)
    ps = paths(a, pid)
    check("test_files_write_rename_moves_the_file",
          "about/index.html" in ps and "pages/about.html" not in ps
          and read(a, pid, "about/index.html") == b"<h1>About us</h1>\n", ps)
    vs = versions(a, pid)
    check("test_files_write_rename_is_one_commit",
          len(vs) == n2 + 1 and vs[0].get("message") == "Rename pages/about.html to about/index.html", vs[:2])
    r = api("PATCH", url(pid, "about/index.html"), {"path": "index.html"}, token=a.token)
    check("test_files_write_rename_onto_existing_is_409", is_error(r, 409, "conflict", "path"), r)
    check("test_files_write_rename_409_changes_nothing",
          read(a, pid, "about/index.html") == b"<h1>About us</h1>\n" and b"<h1>About us" not in (read(a, pid, "index.html") or b""))
    r = api("PATCH", url(pid, "no-such.html"), {"path": "x.html"}, token=a.token)
    check("test_files_write_rename_missing_is_404", is_error(r, 404, "not_found", "oldPath"), r)
    r = api("PATCH", url(pid, "about"), {"path": "x"}, token=a.token)
    check("test_files_write_rename_directory_is_404", is_error(r, 404, "not_found", "oldPath"), r)
    r = api("PATCH", url(pid, "about/index.html"), {}, token=a.token)
    check("test_files_write_rename_without_path_is_400", is_error(r, 400, "validation_failed", "path"), r)

    # delete
    n3 = len(versions(a, pid))
    r = api("DELETE", url(pid, "about/index.html"), token=member.token)
    check("test_files_write_delete_is_200", r.status == 200 and r.body.get("path") == "about/index.html"
          and len(r.body.get("sha") or "") == 40, r)
    check("test_files_write_deleted_file_is_gone", "about/index.html" not in paths(a, pid)
          and api("GET", url(pid, "about/index.html"), token=a.token).status == 404)
    vs = versions(a, pid)
    check("test_files_write_delete_is_one_commit", len(vs) == n3 + 1 and vs[0].get("message") == "Delete about/index.html", vs[:2])
    r = api("DELETE", url(pid, "about/index.html"), token=a.token)
    check("test_files_write_delete_missing_is_404", is_error(r, 404, "not_found", "path"), r)
    r = api("DELETE", url(pid, "no/such/dir/f.js"), token=a.token)
    check("test_files_write_delete_in_missing_dir_is_404", is_error(r, 404, "not_found", "path"), r)

    # 400: refused paths (the agent's rules: lib/core/fsx), for every method; nothing leaves the project
    for label, path in (("dotdot_encoded", "..%2Fescape.txt"),
                        ("dotdot_encoded_dots", "%2e%2e/%2e%2e/escape.txt"),
                        ("absolute_encoded", "%2Ftmp%2Fescape.txt"),
                        ("git_config_encoded_dot", "%2Egit/config"),
                        ("git_upper", "x/%2EGIT/HEAD"),
                        ("backslash", "a%5Cb.txt"),
                        ("control_char", "a%01b.txt"),
                        ("nul_byte", "index.html%00.txt")):
        r = api("PUT", url(pid, path), {"content": "x"}, token=a.token)
        check("test_files_write_put_path_%s_is_400" % label,
              (is_error(r, 400, "validation_failed", "path") or r.status in (400, 403)) and r.status != 201, r)
        r = api("DELETE", url(pid, path), token=a.token)
        check("test_files_write_delete_path_%s_is_refused" % label, r.status in (400, 403, 404) and r.status != 200, r)
    for label, to in (("dotdot", "../escape.txt"), ("absolute", "/etc/escape"), ("git", ".git/hooks/pre-commit"),
                      ("backslash", "a\\b"), ("empty", "")):
        r = api("PATCH", url(pid, "style.css"), {"path": to}, token=a.token)
        check("test_files_write_rename_to_%s_is_400" % label, is_error(r, 400, "validation_failed", "path"), r)
    check("test_files_write_refused_paths_left_the_tree_alone", "style.css" in paths(a, pid)
          and not any("escape" in p for p in paths(a, pid)))
    r = api("PUT", url(pid, "index.html/inner.txt"), {"content": "x"}, token=a.token)
    check("test_files_write_through_a_file_is_400", is_error(r, 400, "validation_failed", "path"), r)
    r = api("PUT", url(pid, "x.txt"), {"content": 5}, token=a.token)
    check("test_files_write_content_not_a_string_is_400", is_error(r, 400, "validation_failed", "content"), r)
    r = api("PUT", url(pid, "x.txt"), {}, token=a.token)
    check("test_files_write_content_missing_is_400", is_error(r, 400, "validation_failed", "content"), r)

    # 401 without a token; 403 for a viewer of a public project and a non-member; 404 unknown project
    for method, body in (("PUT", {"content": "x"}), ("PATCH", {"path": "y.txt"}), ("DELETE", None)):
        r = api(method, url(pub, "style.css"), body)
        check("test_files_write_%s_anonymous_is_401" % method.lower(), is_error(r, 401, "unauthorized"), r)
        r = api(method, url(pub, "style.css"), body, token=outsider.token)
        check("test_files_write_%s_by_public_viewer_is_403" % method.lower(), is_error(r, 403, "forbidden"), r)
        r = api(method, url(pid, "style.css"), body, token=outsider.token)
        check("test_files_write_%s_by_non_member_is_403" % method.lower(), is_error(r, 403, "forbidden"), r)
        r = api(method, url(UNKNOWN_ID, "style.css"), body, token=a.token)
        check("test_files_write_%s_unknown_project_is_404" % method.lower(), is_error(r, 404, "not_found"), r)
    check("test_files_write_public_project_unchanged_after_refusals", "style.css" in paths(a, pub)
          and "y.txt" not in paths(a, pub))

    # 413: a body over 1 MiB
    r = api("PUT", url(pid, "big.txt"), {"content": "x" * (1024 * 1024 + 10)}, token=a.token)
    check("test_files_write_body_over_1mib_is_413", is_error(r, 413, "payload_too_large"), r)
    check("test_files_write_413_wrote_nothing", "big.txt" not in paths(a, pid))
    r = api("PUT", url(pid, "almost.txt"), {"content": "y" * (1000 * 1000)}, token=a.token)
    check("test_files_write_body_under_1mib_is_fine", r.status == 201, r)
    r = api("PUT", url(pid, "x.txt"), raw="content=x", headers={"Content-Type": "text/plain"}, token=a.token)
    check("test_files_write_not_json_is_415", is_error(r, 415, "unsupported_media_type"), r)


if __name__ == "__main__":
    try:
        main()
    finally:
        finish()
