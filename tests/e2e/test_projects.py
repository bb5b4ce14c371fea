#!/usr/bin/env python3
# test_projects.py: projects, files, versions, publishing and chats against the real stack: every field, every error case, nothing left behind
import os
import re
import secrets
import sys
import time
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from svclib import (APP_URL, DATA_DIR, DOMAIN, HTTP_PORT, PROJECT_FIELDS, PROVIDER_URL, TIME_RE,  # noqa: E402
                    UNKNOWN_ID, UUID_RE, api, at_once, check, created_id, default_chat_id, finish, is_error, items_of,
                    provider, request, signup, site_get, skip_rest, sse_all, timeline_page, types_of, versions)
from wslib import list_all  # noqa: E402

SHA_RE = r"^[0-9a-f]{40}$"
SLUG_RE = r"^[a-z0-9]([a-z0-9-]*[a-z0-9])?$"


def project_dirs():
    """The entries of SVC_DATA_DIR/projects/ (including temporary ones), or None without a data dir."""
    if not DATA_DIR:
        return None
    d = os.path.join(DATA_DIR, "projects")
    return set(os.listdir(d)) if os.path.isdir(d) else set()


def ws_project_ids(acct, wid=None):
    """Ids of every project listed in the workspace (acct's own by default), or None on an error status."""
    return list_all(acct.token, workspaceId=wid or acct.workspace_id)


def create(acct, body, wid=None):
    return api("POST", "/workspaces/%s/projects" % (wid or acct.workspace_id), body, token=acct.token)


def test_create(a, b):
    before = project_dirs()
    r = create(a, {"name": "Blank one", "template": "blank"})
    p = r.body if isinstance(r.body, dict) else {}
    check("test_projects_create_blank_answers_201", r.status == 201, r)
    missing = [f for f in PROJECT_FIELDS if f not in p]
    check("test_projects_create_returns_every_project_field", not missing, "missing %s: %r" % (missing, r))
    types_ok = (re.match(UUID_RE, p.get("id") or "") and p.get("workspaceId") == a.workspace_id
                and p.get("folderId") is None and isinstance(p.get("slug"), str) and re.match(SLUG_RE, p["slug"])
                and p.get("name") == "Blank one" and p.get("description") is None and p.get("template") == "blank"
                and p.get("thumbnailUrl") is None and p.get("publishedAt") is None
                and p.get("customDomain") is None and re.match(TIME_RE, p.get("createdAt") or "")
                and re.match(TIME_RE, p.get("updatedAt") or ""))
    check("test_projects_create_fields_have_the_right_types_and_values", bool(types_ok), p)
    check("test_projects_default_visibility_is_workspace", p.get("visibility") == "workspace", p)
    blank = p.get("id")
    if blank and DATA_DIR:
        d = os.path.join(DATA_DIR, "projects", blank)
        check("test_projects_create_writes_the_template_and_a_git_repo",
              os.path.isfile(os.path.join(d, "index.html")) and os.path.isdir(os.path.join(d, ".git")), d)
    if before is not None:
        after = project_dirs()
        check("test_projects_create_adds_exactly_one_directory", after - before == {blank}, after - before)

    r = create(a, {"name": "Todo one", "template": "todo-app", "description": "a list"})
    t = r.body if isinstance(r.body, dict) else {}
    check("test_projects_create_todo_app_answers_201",
          r.status == 201 and t.get("template") == "todo-app" and t.get("description") == "a list", r)
    todo = t.get("id")

    r = create(a, {"name": "No template"})
    check("test_projects_create_without_template_uses_blank",
          r.status == 201 and isinstance(r.body, dict) and r.body.get("template") == "blank", r)

    name = "Same Name " + secrets.token_hex(3)
    r1, r2 = create(a, {"name": name}), create(a, {"name": name})
    s1 = r1.body.get("slug") if isinstance(r1.body, dict) else None
    s2 = r2.body.get("slug") if isinstance(r2.body, dict) else None
    check("test_projects_same_name_twice_gets_two_slugs",
          r1.status == 201 and r2.status == 201 and s1 and s2 and s1 != s2, (r1, r2))
    r3 = create(b, {"name": name})
    s3 = r3.body.get("slug") if isinstance(r3.body, dict) else None
    check("test_projects_slugs_are_unique_across_workspaces", r3.status == 201 and s3 not in (s1, s2), (s1, s2, s3))
    r = create(a, {"name": "!!! ???"})
    check("test_projects_slug_of_a_name_without_letters_is_still_url_safe",
          r.status == 201 and re.match(SLUG_RE, r.body.get("slug") or ""), r)

    name = "\U0001F600" * 128
    r = create(a, {"name": name, "description": "caf\u00e9 \u65e5\u672c \U0001F680"})
    g = api("GET", "/projects/%s" % r.body.get("id"), token=a.token) if r.status == 201 else r
    check("test_projects_name_of_128_four_byte_characters_round_trips",
          g.status == 200 and g.body.get("name") == name and g.body.get("description") == "caf\u00e9 \u65e5\u672c \U0001F680"
          and re.match(SLUG_RE, g.body.get("slug") or ""), g)

    # Every failed create: the right error, and no row and no directory left behind.
    listed_before = ws_project_ids(a)
    dirs_before = project_dirs()
    cases = [
        ("unknown_template", a, {"name": "x", "template": "no-such-template"}, None, 400, "validation_failed", "template"),
        ("template_path_traversal", a, {"name": "x", "template": "../blank"}, None, 400, "validation_failed", "template"),
        ("template_not_a_string", a, {"name": "x", "template": 7}, None, 400, "validation_failed", "template"),
        ("name_missing", a, {"template": "blank"}, None, 400, "validation_failed", "name"),
        ("name_empty", a, {"name": ""}, None, 400, "validation_failed", "name"),
        ("name_whitespace_only", a, {"name": " \t\n "}, None, 400, "validation_failed", "name"),
        ("name_too_long", a, {"name": "n" * 129}, None, 400, "validation_failed", "name"),
        ("name_not_a_string", a, {"name": ["x"]}, None, 400, "validation_failed", "name"),
        ("name_null", a, {"name": None}, None, 400, "validation_failed", "name"),
        ("folderid_unknown", a, {"name": "x", "folderId": UNKNOWN_ID}, None, 400, "validation_failed", "folderId"),
        ("folderid_not_a_uuid", a, {"name": "x", "folderId": "abc"}, None, 400, "validation_failed", "folderId"),
        ("description_not_a_string", a, {"name": "x", "description": 5}, None, 400, "validation_failed",
         "description"),
        ("workspace_of_another_user", a, {"name": "x"}, b.workspace_id, 403, "forbidden", None),
        ("unknown_workspace", a, {"name": "x"}, UNKNOWN_ID, 404, "not_found", None),
        ("workspace_not_a_uuid", a, {"name": "x"}, "not-a-uuid", 404, "not_found", None),
    ]
    for label, acct, body, wid, status, code, field in cases:
        r = create(acct, body, wid)
        check("test_projects_create_%s_is_%d%s" % (label, status, " " + field if field else ""),
              is_error(r, status, code, field), r)
    r = api("POST", "/workspaces/%s/projects" % a.workspace_id, raw='{"name": "x"', token=a.token)
    check("test_projects_create_malformed_json_is_400_invalid_json", is_error(r, 400, "invalid_json"), r)
    r = api("POST", "/workspaces/%s/projects" % a.workspace_id, raw='{"name": "x"}', token=a.token,
            headers={"Content-Type": "text/plain"})
    check("test_projects_create_text_plain_is_415", is_error(r, 415, "unsupported_media_type"), r)
    r = api("POST", "/workspaces/%s/projects" % a.workspace_id, {"name": "x"})
    check("test_projects_create_without_token_is_401", is_error(r, 401, "unauthorized"), r)
    r = api("POST", "/workspaces/%s/projects" % a.workspace_id,
            raw='{"name": "big", "description": "%s"}' % ("d" * (1024 * 1024 + 10)), token=a.token)
    check("test_projects_create_body_over_1mib_is_413", is_error(r, 413, "payload_too_large"), r)
    check("test_projects_failed_creates_leave_no_listed_project", ws_project_ids(a) == listed_before,
          (listed_before, ws_project_ids(a)))
    if dirs_before is not None:
        check("test_projects_failed_creates_leave_no_directory", project_dirs() == dirs_before,
              project_dirs() ^ dirs_before)
    else:
        check("test_projects_failed_creates_leave_no_directory", False, "SVC_DATA_DIR is not set")
    check("test_projects_other_user_workspace_got_no_project", ws_project_ids(b) == [r3.body.get("id")],
          ws_project_ids(b))
    return blank, todo


def test_list_paging(c):
    ids = []
    for i in range(3):
        r = create(c, {"name": "Paged %d" % i})
        if r.status == 201:
            ids.append(r.body["id"])
    check("test_projects_three_projects_for_paging_created", len(ids) == 3, ids)
    r = api("GET", "/projects?workspaceId=%s" % c.workspace_id, token=c.token)
    b = r.body if isinstance(r.body, dict) else {}
    check("test_projects_list_answers_items_and_next_cursor",
          r.status == 200 and isinstance(b.get("items"), list) and "nextCursor" in b, r)
    check("test_projects_list_of_3_has_null_next_cursor_and_newest_first",
          b.get("nextCursor") is None and [p.get("id") for p in b.get("items", [])] == ids[::-1], b)
    check("test_projects_list_items_carry_every_project_field",
          all(all(f in p for f in PROJECT_FIELDS) for p in b.get("items", [])), b)
    r = api("GET", "/projects", token=c.token)
    check("test_projects_list_without_workspace_lists_the_callers_projects",
          r.status == 200 and sorted(p.get("id") for p in items_of(r.body) or []) == sorted(ids), r)

    seen, cursor, pages = [], None, 0
    while pages < 10:
        q = "/projects?workspaceId=%s&limit=1" % c.workspace_id
        if cursor:
            q += "&cursor=" + urllib.parse.quote(cursor)
        r = api("GET", q, token=c.token)
        if r.status != 200:
            break
        pages += 1
        items = items_of(r.body) or []
        seen += [p.get("id") for p in items]
        if len(items) != 1:
            break
        cursor = r.body.get("nextCursor")
        if cursor is None:
            break
    check("test_projects_paging_limit_1_returns_each_project_once_in_order",
          seen == ids[::-1], (seen, ids[::-1], r))
    check("test_projects_paging_ends_with_null_cursor_after_3_pages", pages == 3 and cursor is None, (pages, cursor))

    for lim in ("0", "101", "abc", "-1", "1.5", ""):
        r = api("GET", "/projects?workspaceId=%s&limit=%s" % (c.workspace_id, lim), token=c.token)
        check("test_projects_list_limit_%r_is_400_limit" % lim, is_error(r, 400, "validation_failed", "limit"), r)
    r = api("GET", "/projects?workspaceId=%s&limit=100" % c.workspace_id, token=c.token)
    check("test_projects_list_limit_100_is_accepted", r.status == 200, r)
    for cur in ("abc", "zz", "00", "deadbeef", "%27%20OR%201%3D1"):
        r = api("GET", "/projects?workspaceId=%s&cursor=%s" % (c.workspace_id, cur), token=c.token)
        check("test_projects_list_bad_cursor_%r_is_400_cursor" % cur,
              is_error(r, 400, "validation_failed", "cursor"), r)
    r = api("GET", "/projects?workspaceId=not-a-uuid", token=c.token)
    check("test_projects_list_workspace_not_a_uuid_is_400_workspaceid",
          is_error(r, 400, "validation_failed", "workspaceId"), r)
    r = api("GET", "/projects")
    check("test_projects_list_without_token_is_401", is_error(r, 401, "unauthorized"), r)
    # Changed with issue 6: a workspace the caller is not in lists its public projects (none for an
    # unknown one), so the answer does not tell which workspaces exist.
    r = api("GET", "/projects?workspaceId=%s" % UNKNOWN_ID, token=c.token)
    check("test_projects_list_unknown_workspace_is_an_empty_200_like_a_foreign_one",
          r.status == 200 and items_of(r.body) == [] and r.body.get("nextCursor") is None, r)
    return ids


def test_get_patch_delete(a, b, pid):
    r = api("GET", "/projects/%s" % pid, token=a.token)
    check("test_projects_get_answers_the_project", r.status == 200 and isinstance(r.body, dict)
          and r.body.get("id") == pid and all(f in r.body for f in PROJECT_FIELDS), r)
    orig = r.body if isinstance(r.body, dict) else {}
    r = api("GET", "/projects/%s" % pid, token=b.token)
    check("test_projects_get_other_users_project_is_403", is_error(r, 403, "forbidden"), r)
    r = api("GET", "/projects/%s" % UNKNOWN_ID, token=a.token)
    check("test_projects_get_unknown_id_is_404", is_error(r, 404, "not_found"), r)
    for bad in ("not-a-uuid", "123", UNKNOWN_ID.upper().replace("-", ""), "' OR 1=1 --"):
        r = api("GET", "/projects/%s" % urllib.parse.quote(bad), token=a.token)
        check("test_projects_get_non_uuid_id_%r_is_404" % bad, is_error(r, 404, "not_found"), r)
    r = api("GET", "/projects/%s" % pid)
    check("test_projects_get_without_token_is_401", is_error(r, 401, "unauthorized"), r)

    time.sleep(0.02)
    r = api("PATCH", "/projects/%s" % pid, {"name": "Renamed", "description": "new text", "visibility": "private"},
            token=a.token)
    p = r.body if isinstance(r.body, dict) else {}
    check("test_projects_patch_answers_the_updated_project",
          r.status == 200 and p.get("name") == "Renamed" and p.get("description") == "new text"
          and p.get("visibility") == "private", r)
    check("test_projects_patch_changes_updated_at",
          isinstance(p.get("updatedAt"), str) and p.get("updatedAt") > orig.get("updatedAt", "~"), (orig, p))
    check("test_projects_patch_keeps_slug_and_created_at",
          p.get("slug") == orig.get("slug") and p.get("createdAt") == orig.get("createdAt"), (orig, p))
    r = api("PATCH", "/projects/%s" % pid, {"description": None}, token=a.token)
    check("test_projects_patch_description_null_clears_it",
          r.status == 200 and isinstance(r.body, dict) and r.body.get("description") is None
          and r.body.get("name") == "Renamed", r)
    before = api("GET", "/projects/%s" % pid, token=a.token).body
    for label, body, field in (("visibility_secret", {"visibility": "secret"}, "visibility"),
                               ("visibility_number", {"visibility": 1}, "visibility"),
                               ("name_empty", {"name": ""}, "name"),
                               ("name_whitespace", {"name": "   "}, "name"),
                               ("name_too_long", {"name": "n" * 129}, "name"),
                               ("name_null", {"name": None}, "name"),
                               ("folderid_unknown", {"folderId": UNKNOWN_ID}, "folderId")):
        r = api("PATCH", "/projects/%s" % pid, body, token=a.token)
        check("test_projects_patch_%s_is_400_%s" % (label, field), is_error(r, 400, "validation_failed", field), r)
    r = api("PATCH", "/projects/%s" % pid, raw="{", token=a.token)
    check("test_projects_patch_malformed_json_is_400_invalid_json", is_error(r, 400, "invalid_json"), r)
    check("test_projects_failed_patches_change_nothing", api("GET", "/projects/%s" % pid, token=a.token).body == before,
          before)
    r = api("PATCH", "/projects/%s" % UNKNOWN_ID, {"name": "x"}, token=a.token)
    check("test_projects_patch_unknown_id_is_404", is_error(r, 404, "not_found"), r)
    r = api("PATCH", "/projects/%s" % pid, {"name": "taken over"}, token=b.token)
    check("test_projects_patch_by_non_member_is_403", is_error(r, 403, "forbidden"), r)

    # Public: readable by anyone signed in, still writable only by members.
    r = api("PATCH", "/projects/%s" % pid, {"visibility": "public"}, token=a.token)
    check("test_projects_patch_visibility_public", r.status == 200 and r.body.get("visibility") == "public", r)
    r = api("GET", "/projects/%s" % pid, token=b.token)
    check("test_projects_public_project_is_readable_by_a_non_member",
          r.status == 200 and isinstance(r.body, dict) and r.body.get("id") == pid, r)
    r = api("GET", "/projects/%s/files" % pid, token=b.token)
    check("test_projects_public_project_files_are_readable_by_a_non_member", r.status == 200, r)
    # docs/api.md "Project endpoints": chats and design comments are open without a token, the timeline is not
    chat = default_chat_id(a, pid)
    r = api("GET", "/projects/%s/chats" % pid)
    check("test_projects_public_project_chats_are_readable_without_a_token",
          r.status == 200 and chat in [c.get("id") for c in items_of(r.body) or []], r)
    r = api("GET", "/projects/%s/design-comments" % pid)
    check("test_projects_public_project_design_comments_are_readable_without_a_token",
          r.status == 200 and items_of(r.body) == [], r)
    r = timeline_page(b, pid, chat)
    check("test_projects_public_project_timeline_is_readable_by_a_non_member", r.status == 200, r)
    r = api("GET", "/chat/%s/messages?chatId=%s" % (pid, chat))
    check("test_projects_public_project_timeline_without_a_token_is_401", is_error(r, 401, "unauthorized"), r)
    r = api("PATCH", "/projects/%s" % pid, {"name": "taken over"}, token=b.token)
    check("test_projects_patch_public_project_by_non_member_is_403", is_error(r, 403, "forbidden"), r)
    r = api("DELETE", "/projects/%s" % pid, token=b.token)
    check("test_projects_delete_public_project_by_non_member_is_403", is_error(r, 403, "forbidden"), r)
    r = api("DELETE", "/projects/%s?hard=true" % pid, token=b.token)
    check("test_projects_hard_delete_by_non_owner_is_403", is_error(r, 403, "forbidden"), r)
    r = api("POST", "/deploy/%s" % pid, token=b.token)
    check("test_projects_deploy_public_project_by_non_member_is_403", is_error(r, 403, "forbidden"), r)
    r = api("POST", "/projects/%s/chats" % pid, {"mode": "chat"}, token=b.token)
    check("test_projects_create_chat_in_public_project_by_non_member_is_403", is_error(r, 403, "forbidden"), r)
    r = api("GET", "/projects/%s" % pid, token=a.token)
    check("test_projects_refused_writes_changed_nothing",
          r.status == 200 and r.body.get("name") == "Renamed" and r.body.get("publishedAt") is None, r)
    # Changed with issue 6: a non-member's list of a workspace holds its public projects only.
    r = api("GET", "/projects?workspaceId=%s" % a.workspace_id, token=b.token)
    listed = items_of(r.body) or []
    check("test_projects_list_of_another_users_workspace_shows_only_public_projects",
          r.status == 200 and pid in [p.get("id") for p in listed]
          and all(p.get("visibility") == "public" and p.get("workspaceId") == a.workspace_id for p in listed), r)

    # Soft delete: gone from the API, files kept.
    r = api("DELETE", "/projects/%s?hard=maybe" % pid, token=a.token)
    check("test_projects_delete_hard_not_a_boolean_is_400_hard", is_error(r, 400, "validation_failed", "hard"), r)
    r = api("DELETE", "/projects/%s" % pid, token=a.token)
    check("test_projects_soft_delete_answers_200",
          r.status == 200 and isinstance(r.body, dict) and r.body.get("id") == pid
          and r.body.get("deleted") is True and r.body.get("hard") is False, r)
    r = api("GET", "/projects/%s" % pid, token=a.token)
    check("test_projects_soft_deleted_project_is_404", is_error(r, 404, "not_found"), r)
    check("test_projects_soft_deleted_project_is_not_listed", pid not in (ws_project_ids(a) or [pid]))
    r = api("GET", "/projects/%s" % pid, token=b.token)
    check("test_projects_soft_deleted_public_project_is_404_for_others", is_error(r, 404, "not_found"), r)
    r = api("DELETE", "/projects/%s" % pid, token=a.token)
    check("test_projects_delete_twice_is_404", is_error(r, 404, "not_found"), r)
    for path in ("/projects/%s/files", "/projects/%s/versions", "/projects/%s/chats"):
        r = api("GET", path % pid, token=a.token)
        check("test_projects_soft_deleted_%s_is_404" % path.split("/")[-1], is_error(r, 404, "not_found"), r)
    if DATA_DIR:
        check("test_projects_soft_delete_keeps_the_files",
              os.path.isdir(os.path.join(DATA_DIR, "projects", pid)))
    r = api("DELETE", "/projects/%s" % UNKNOWN_ID, token=a.token)
    check("test_projects_delete_unknown_id_is_404", is_error(r, 404, "not_found"), r)
    r = api("DELETE", "/projects/not-a-uuid", token=a.token)
    check("test_projects_delete_non_uuid_id_is_404", is_error(r, 404, "not_found"), r)


def test_files(a, b, pid):
    r = api("GET", "/projects/%s/files" % pid, token=a.token)
    items = items_of(r.body) or []
    paths = [f.get("path") for f in items if isinstance(f, dict)]
    check("test_projects_files_lists_the_template_files",
          r.status == 200 and "index.html" in paths and "app.js" in paths and "style.css" in paths, r)
    check("test_projects_files_items_have_path_size_updated_at",
          bool(items) and all(isinstance(f.get("path"), str) and isinstance(f.get("size"), int) and f["size"] >= 0
                              and re.match(TIME_RE, f.get("updatedAt") or "") for f in items), items)
    check("test_projects_files_never_lists_git", not any(p == ".git" or p.startswith(".git/") or "/.git" in p
                                                          for p in paths), paths)
    r = api("GET", "/projects/%s/files" % pid, token=b.token)
    check("test_projects_files_of_other_users_project_is_403", is_error(r, 403, "forbidden"), r)
    r = api("GET", "/projects/%s/files" % UNKNOWN_ID, token=a.token)
    check("test_projects_files_of_unknown_project_is_404", is_error(r, 404, "not_found"), r)

    r = api("GET", "/projects/%s/files/index.html" % pid, token=a.token)
    size = next((f.get("size") for f in items if f.get("path") == "index.html"), None)
    check("test_projects_file_content_is_served_raw",
          r.status == 200 and isinstance(r.body, str) and "<html" in r.body.lower() and len(r.raw) == size, r)
    check("test_projects_file_html_has_an_html_content_type",
          r.headers.get("content-type", "").startswith("text/html"), r.headers)
    check("test_projects_file_carries_nosniff", r.headers.get("x-content-type-options") == "nosniff", r.headers)
    check("test_projects_file_is_an_attachment_never_rendered_on_the_api_origin",
          r.headers.get("content-disposition", "").startswith("attachment")
          and "default-src 'none'" in r.headers.get("content-security-policy", ""), r.headers)
    for name, ctype in (("style.css", "text/css"), ("app.js", "javascript")):
        r = api("GET", "/projects/%s/files/%s" % (pid, name), token=a.token)
        check("test_projects_file_%s_content_type" % name.replace(".", "_"),
              r.status == 200 and ctype in r.headers.get("content-type", ""), r.headers)
    r = api("GET", "/projects/%s/files/index.html" % pid, token=b.token)
    check("test_projects_file_of_other_users_project_is_403", is_error(r, 403, "forbidden"), r)
    r = api("GET", "/projects/%s/files/no-such-file.txt" % pid, token=a.token)
    check("test_projects_unknown_file_is_404", is_error(r, 404, "not_found"), r)
    r = api("GET", "/projects/%s/files/no/such/dir/x.js" % pid, token=a.token)
    check("test_projects_file_in_unknown_dir_is_404", is_error(r, 404, "not_found"), r)

    # Escapes: never file content, always an error (400/403/404), JSON when it comes from the API. The web
    # server removes decoded dot segments first: a path that so leaves /api/ is a client-side route of the
    # web app, which answers its index.html (never a file of the project or the host).
    app_index = request("GET", APP_URL + "/")
    for label, path in (("dotdot_encoded", "..%2Fetc%2Fpasswd"),
                        ("dotdot_encoded_deep", "..%2F..%2F..%2F..%2F..%2F..%2Fetc%2Fpasswd"),
                        ("dotdot_encoded_dots", "%2e%2e/%2e%2e/%2e%2e/%2e%2e/etc/passwd"),
                        ("absolute_encoded", "%2Fetc%2Fpasswd"),
                        ("git_config", ".git/config"),
                        ("git_config_encoded_slash", ".git%2Fconfig"),
                        ("git_config_encoded_dot", "%2Egit/config"),
                        ("git_head_via_dotdot", "x/..%2F.git%2FHEAD"),
                        ("nul_byte", "index.html%00.txt")):
        r = api("GET", "/projects/%s/files/%s" % (pid, path), token=a.token)
        leaked = "root:" in r.raw.decode("utf-8", "replace") or "[core]" in r.raw.decode("utf-8", "replace") \
            or "ref: refs/" in r.raw.decode("utf-8", "replace")
        check("test_projects_file_path_%s_is_refused" % label,
              (r.status in (400, 403, 404) or (r.status == 200 and r.raw == app_index.raw)) and not leaked, r)


def test_versions_checkout(a, b, pid, chat_id):
    r = api("GET", "/projects/%s/versions" % pid, token=a.token)
    items = items_of(r.body) or []
    check("test_projects_versions_has_one_commit_after_create", r.status == 200 and len(items) == 1, r)
    v = items[0] if items and isinstance(items[0], dict) else {}
    check("test_projects_version_has_sha_message_author_created_at",
          re.match(SHA_RE, v.get("sha") or "") and v.get("message") == "Create project from template todo-app"
          and isinstance(v.get("author"), str) and v["author"] and re.match(TIME_RE, v.get("createdAt") or ""), v)
    first = v.get("sha")
    r = api("GET", "/projects/%s/versions" % pid, token=b.token)
    check("test_projects_versions_of_other_users_project_is_403", is_error(r, 403, "forbidden"), r)
    r = api("GET", "/projects/%s/versions" % UNKNOWN_ID, token=a.token)
    check("test_projects_versions_of_unknown_project_is_404", is_error(r, 404, "not_found"), r)

    for label, sha in (("unknown", "0" * 40), ("unknown_other", "1234567890abcdef1234567890abcdef12345678"),
                       ("garbage", "not-a-sha"), ("short_garbage", "zz"), ("branch_name", "HEAD"),
                       ("ref_path", "refs%2Fheads%2Fmain")):
        r = api("POST", "/projects/%s/versions/%s/checkout" % (pid, sha), token=a.token)
        # Apache refuses an encoded slash itself (AllowEncodedSlashes Off): a 404 of its own.
        front_end = "%2F" in sha and r.status == 404 and not isinstance(r.body, dict)
        check("test_projects_checkout_%s_sha_is_404" % label, is_error(r, 404, "not_found") or front_end, r)
    r = api("POST", "/projects/%s/versions/%s/checkout" % (pid, first), token=b.token)
    check("test_projects_checkout_by_non_member_is_403", is_error(r, 403, "forbidden"), r)
    r = api("POST", "/projects/%s/versions/%s/checkout" % (UNKNOWN_ID, first), token=a.token)
    check("test_projects_checkout_in_unknown_project_is_404", is_error(r, 404, "not_found"), r)
    r = api("GET", "/projects/%s/versions" % pid, token=a.token)
    check("test_projects_refused_checkouts_add_no_version", len(items_of(r.body) or []) == 1, r)

    # A change through the agent, then a checkout of the first version on top.
    if not PROVIDER_URL or not chat_id:
        skip_rest("no provider double (SVC_PROVIDER_URL) or no chat",
                  ["test_projects_checkout_restores_first_version_as_new_commit"])
        return
    provider("POST", "/_reset")
    events, _, err = sse_all("/chat/%s/messages" % pid, {"chatId": chat_id, "text": "add a footer"}, token=a.token)
    r = api("GET", "/projects/%s/files/index.html" % pid, token=a.token)
    check("test_projects_agent_turn_changed_index_html",
          err is None and r.status == 200 and "<footer" in r.body, (err, types_of(events)))
    r = api("GET", "/projects/%s/versions" % pid, token=a.token)
    items = items_of(r.body) or []
    check("test_projects_agent_turn_added_one_version", len(items) == 2 and items[1].get("sha") == first, items)
    time.sleep(0.01)
    r = api("POST", "/projects/%s/versions/%s/checkout" % (pid, first), token=a.token)
    body = r.body if isinstance(r.body, dict) else {}
    check("test_projects_checkout_first_version_answers_200_with_new_sha",
          r.status == 200 and re.match(SHA_RE, body.get("sha") or "") and body.get("sha") != first
          and body.get("restoredFrom") == first, r)
    r = api("GET", "/projects/%s/versions" % pid, token=a.token)
    items = items_of(r.body) or []
    check("test_projects_checkout_is_a_new_version_on_top_history_kept",
          len(items) == 3 and items[0].get("sha") == body.get("sha") and items[2].get("sha") == first, items)
    r = api("GET", "/projects/%s/files/index.html" % pid, token=a.token)
    check("test_projects_checkout_restored_the_files", r.status == 200 and "<footer" not in r.body, r)
    # A unique prefix of 7+ hex digits names the commit too; the answer names it in full.
    r = api("POST", "/projects/%s/versions/%s/checkout" % (pid, first[:7]), token=a.token)
    body = r.body if isinstance(r.body, dict) else {}
    check("test_projects_checkout_by_sha_prefix_answers_200", r.status == 200 and re.match(SHA_RE, body.get("sha") or ""),
          r)
    check("test_projects_checkout_restored_from_is_the_full_sha", body.get("restoredFrom") == first, (first, body))


def test_deploy(a, b, pid):
    r = api("POST", "/deploy/%s" % pid, token=a.token)
    body = r.body if isinstance(r.body, dict) else {}
    slug = body.get("slug") or (api("GET", "/projects/%s" % pid, token=a.token).body or {}).get("slug")
    want = "http://%s.%s:%d/" % (slug, DOMAIN, HTTP_PORT) if HTTP_PORT != 80 else "http://%s.%s/" % (slug, DOMAIN)
    check("test_projects_deploy_answers_url_and_published_at",
          r.status == 200 and body.get("url") == want and re.match(TIME_RE, body.get("publishedAt") or ""), r)
    p = api("GET", "/projects/%s" % pid, token=a.token).body
    check("test_projects_deploy_sets_published_at_on_the_project",
          isinstance(p, dict) and p.get("publishedAt") == body.get("publishedAt"), p)
    r = site_get(slug)
    check("test_projects_published_site_answers_on_its_host",
          r.status == 200 and "<html" in r.body.lower(), r)
    r2 = site_get(slug, host_port=False)
    check("test_projects_published_site_answers_without_port_in_host", r2.status == 200 and r2.raw == r.raw, r2)
    r = site_get(slug, "/style.css")
    check("test_projects_published_site_serves_other_files", r.status == 200, r)
    r = site_get("no-such-site-" + secrets.token_hex(4))
    check("test_projects_unknown_slug_is_404", r.status == 404, r)
    for path in ("/.git/config", "/.git/HEAD", "/.git/", "/.git"):
        r = site_get(slug, path)
        check("test_projects_published_site_never_serves_%s" % path.strip("/").replace("/", "_").replace(".", ""),
              r.status in (403, 404) and "[core]" not in r.body and "ref: " not in r.body, r)
    if DATA_DIR:
        d = os.path.join(DATA_DIR, "published", slug or "?")
        check("test_projects_published_dir_has_no_git", os.path.isdir(d) and not os.path.exists(os.path.join(d, ".git")),
              d)
    r = site_get(slug, "/../../../../etc/passwd")
    check("test_projects_published_site_path_traversal_refused", "root:" not in r.body and r.status != 200, r)
    r = site_get(slug, "/api/auth/me")
    check("test_projects_published_host_does_not_reach_the_api", r.status == 404 and "unauthorized" not in r.body, r)
    r = api("POST", "/deploy/%s" % UNKNOWN_ID, token=a.token)
    check("test_projects_deploy_unknown_project_is_404", is_error(r, 404, "not_found"), r)
    r = api("POST", "/deploy/not-a-uuid", token=a.token)
    check("test_projects_deploy_non_uuid_is_404", is_error(r, 404, "not_found"), r)
    r = api("POST", "/deploy/%s" % pid, token=b.token)
    check("test_projects_deploy_by_non_member_is_403", is_error(r, 403, "forbidden"), r)
    r = api("POST", "/deploy/%s" % pid)
    check("test_projects_deploy_without_token_is_401", is_error(r, 401, "unauthorized"), r)
    # Publishing again replaces the site (one rename); the other slug still 404.
    r = api("POST", "/deploy/%s" % pid, token=a.token)
    check("test_projects_deploy_twice_works", r.status == 200 and site_get(slug).status == 200, r)
    return slug


def test_hard_delete(a, pid, slug):
    r = api("DELETE", "/projects/%s?hard=true" % pid, token=a.token)
    check("test_projects_hard_delete_by_owner_answers_200",
          r.status == 200 and isinstance(r.body, dict) and r.body.get("hard") is True, r)
    r = api("GET", "/projects/%s" % pid, token=a.token)
    check("test_projects_hard_deleted_project_is_404", is_error(r, 404, "not_found"), r)
    if DATA_DIR:
        check("test_projects_hard_delete_removes_the_directory",
              not os.path.exists(os.path.join(DATA_DIR, "projects", pid)))
        check("test_projects_hard_delete_removes_the_published_site",
              not os.path.exists(os.path.join(DATA_DIR, "published", slug)))
    else:
        check("test_projects_hard_delete_removes_the_directory", False, "SVC_DATA_DIR is not set")
    # lighttpd's stat cache may serve the removed site for about a second.
    r = wait_site_status(slug, 404)
    check("test_projects_hard_deleted_site_is_404", r.status == 404, r)


def test_chats(a, b, pid):
    r = api("GET", "/projects/%s/chats" % pid, token=a.token)
    items = items_of(r.body) or []
    check("test_projects_chats_list_has_the_default_chat", r.status == 200 and len(items) == 1, r)
    c = items[0] if items and isinstance(items[0], dict) else {}
    check("test_projects_default_chat_is_build_mode_with_fields",
          re.match(UUID_RE, c.get("id") or "") and c.get("mode") == "build" and "title" in c
          and re.match(TIME_RE, c.get("createdAt") or "") and re.match(TIME_RE, c.get("updatedAt") or ""), c)
    r = api("POST", "/projects/%s/chats" % pid, {"mode": "plan"}, token=a.token)
    n = r.body if isinstance(r.body, dict) else {}
    check("test_projects_create_chat_plan_answers_201",
          r.status == 201 and re.match(UUID_RE, n.get("id") or "") and n.get("mode") == "plan"
          and re.match(TIME_RE, n.get("createdAt") or ""), r)
    r = api("POST", "/projects/%s/chats" % pid, {"mode": "my-mode_2", "title": "Custom"}, token=a.token)
    check("test_projects_create_chat_custom_mode_with_title",
          r.status == 201 and r.body.get("mode") == "my-mode_2" and r.body.get("title") == "Custom", r)
    r = api("GET", "/projects/%s/chats" % pid, token=a.token)
    check("test_projects_chats_list_shows_the_new_chats", len(items_of(r.body) or []) == 3, r)
    for label, body, field in (("mode_missing", {}, "mode"), ("mode_empty", {"mode": ""}, "mode"),
                               ("mode_whitespace", {"mode": "  "}, "mode"), ("mode_number", {"mode": 3}, "mode"),
                               ("mode_bad_chars", {"mode": "Plan Mode!"}, "mode"),
                               ("mode_too_long", {"mode": "m" * 33}, "mode"),
                               ("title_number", {"mode": "chat", "title": 5}, "title")):
        r = api("POST", "/projects/%s/chats" % pid, body, token=a.token)
        check("test_projects_create_chat_%s_is_400_%s" % (label, field), is_error(r, 400, "validation_failed", field),
              r)
    r = api("POST", "/projects/%s/chats" % pid, raw="mode=plan", token=a.token)
    check("test_projects_create_chat_malformed_json_is_400_invalid_json", is_error(r, 400, "invalid_json"), r)
    r = api("GET", "/projects/%s/chats" % pid, token=a.token)
    check("test_projects_failed_chat_creates_add_no_chat", len(items_of(r.body) or []) == 3, r)
    r = api("GET", "/projects/%s/chats" % pid, token=b.token)
    check("test_projects_chats_of_other_users_project_is_403", is_error(r, 403, "forbidden"), r)
    r = api("POST", "/projects/%s/chats" % pid, {"mode": "plan"}, token=b.token)
    check("test_projects_create_chat_by_non_member_is_403", is_error(r, 403, "forbidden"), r)
    r = api("GET", "/projects/%s/chats" % UNKNOWN_ID, token=a.token)
    check("test_projects_chats_of_unknown_project_is_404", is_error(r, 404, "not_found"), r)
    r = api("POST", "/projects/not-a-uuid/chats", {"mode": "plan"}, token=a.token)
    check("test_projects_create_chat_non_uuid_project_is_404", is_error(r, 404, "not_found"), r)
    return c.get("id")


def test_router(a, pid):
    for path in ("/projects/%s/nonsense" % pid, "/nonsense", "/projects/%s/files/" % pid, "/workspace",
                 "/projects/%s/versions/abc" % pid):
        r = api("GET", path, token=a.token)
        check("test_projects_unknown_route_%s_is_404_json" % path.replace(pid, "ID"), is_error(r, 404, "not_found")
              and r.headers.get("content-type", "").startswith("application/json"), r)
    for method, path, allow in (("PUT", "/projects/%s" % pid, ("GET", "PATCH", "DELETE")),
                                ("POST", "/projects/%s" % pid, ("GET", "PATCH", "DELETE")),
                                ("DELETE", "/projects", ("GET",)),
                                ("GET", "/workspaces/%s/projects" % a.workspace_id, ("POST",)),
                                ("GET", "/deploy/%s" % pid, ("POST",)),
                                ("GET", "/projects/%s/versions/%s/checkout" % (pid, "0" * 40), ("POST",))):
        r = api(method, path, json=None if method == "GET" else {}, token=a.token)
        got = [m.strip() for m in r.headers.get("allow", "").split(",")]
        check("test_projects_%s_%s_is_405_with_allow" % (method, path.replace(pid, "ID").replace(a.workspace_id, "WID")),
              is_error(r, 405, "method_not_allowed") and all(m in got for m in allow) and method not in got, r)


def wait_site_status(slug, status, secs=5):
    """GETs the site until it answers `status` (lighttpd's stat cache may lag about a second)."""
    deadline = time.monotonic() + secs
    r = site_get(slug)
    while r.status != status and time.monotonic() < deadline:
        time.sleep(0.25)
        r = site_get(slug)
    return r


def test_soft_delete_unpublishes(a):
    """Intended: a soft-deleted project's site goes offline (its files stay on disk for a restore)."""
    r = create(a, {"name": "Soon deleted"})
    pid = created_id(r)
    d = api("POST", "/deploy/%s" % pid, token=a.token) if pid else r
    slug = d.body.get("slug") if d.status == 200 and isinstance(d.body, dict) else None
    check("test_projects_published_before_soft_delete", bool(slug) and site_get(slug).status == 200, d)
    if not slug:
        return
    r = api("DELETE", "/projects/%s" % pid, token=a.token)
    check("test_projects_soft_delete_of_published_project_answers_200", r.status == 200, r)
    r = wait_site_status(slug, 404)
    check("test_projects_soft_deleted_project_site_is_offline", r.status == 404, r)


def test_concurrent_creates(a):
    name = "Concurrent " + secrets.token_hex(3)
    res = at_once([lambda: create(a, {"name": name})] * 6)
    slugs = [r.body.get("slug") for r in res if r.status == 201 and isinstance(r.body, dict)]
    check("test_projects_six_concurrent_creates_with_one_name_all_succeed", len(slugs) == 6, res)
    check("test_projects_six_concurrent_creates_get_six_slugs", len(set(slugs)) == 6, slugs)


def timeline(acct, pid, chat_id):
    """The (type, text-ish payload) of every stored event of a chat, oldest first."""
    r = timeline_page(acct, pid, chat_id, "&limit=200")
    if r.status != 200:
        return None
    return [(e.get("type"), e.get("text"), e.get("delta")) for e in items_of(r.body) or []]


def test_duplicate(a, b, pid):
    """Duplicate copies the files, the whole Git history and the default chat with its timeline."""
    src = api("GET", "/projects/%s" % pid, token=a.token).body
    src_versions = [v.get("sha") for v in versions(a, pid)]
    src_files = {f["path"]: f["size"] for f in items_of(api("GET", "/projects/%s/files" % pid, token=a.token).body) or []}
    src_chat = default_chat_id(a, pid)
    src_timeline = timeline(a, pid, src_chat)
    r = api("POST", "/projects/%s/duplicate" % pid, {"name": "The copy"}, token=a.token)
    d = r.body if isinstance(r.body, dict) else {}
    check("test_projects_duplicate_answers_201_with_a_new_project",
          r.status == 201 and re.match(UUID_RE, d.get("id") or "") and d.get("id") != pid
          and d.get("name") == "The copy" and d.get("slug") != src.get("slug") and re.match(SLUG_RE, d.get("slug") or "")
          and d.get("workspaceId") == a.workspace_id and d.get("duplicatedFrom") == pid
          and d.get("visibility") == src.get("visibility") and d.get("publishedAt") is None, r)
    did = d.get("id")
    if not did:
        return
    dup_versions = [v.get("sha") for v in versions(a, did)]
    check("test_projects_duplicate_copies_the_whole_git_history", len(src_versions) >= 2 and dup_versions == src_versions,
          (src_versions, dup_versions))
    files = {f["path"]: f["size"] for f in items_of(api("GET", "/projects/%s/files" % did, token=a.token).body) or []}
    check("test_projects_duplicate_copies_every_file", files == src_files and files, (src_files, files))
    r1 = api("GET", "/projects/%s/files/index.html" % pid, token=a.token)
    r2 = api("GET", "/projects/%s/files/index.html" % did, token=a.token)
    check("test_projects_duplicate_file_content_is_identical", r1.status == 200 and r1.raw == r2.raw, r2)
    chats = items_of(api("GET", "/projects/%s/chats" % did, token=a.token).body) or []
    check("test_projects_duplicate_has_one_chat_the_default_one",
          len(chats) == 1 and chats[0].get("mode") == "build" and chats[0].get("id") != src_chat, chats)
    dup_timeline = timeline(a, did, chats[0].get("id")) if chats else None
    check("test_projects_duplicate_copies_the_default_chats_timeline",
          src_timeline is not None and (len(src_timeline) > 0 or not PROVIDER_URL) and dup_timeline == src_timeline,
          (src_timeline, dup_timeline))
    if DATA_DIR:
        s1 = os.stat(os.path.join(DATA_DIR, "projects", pid, "index.html"))
        s2 = os.stat(os.path.join(DATA_DIR, "projects", did, "index.html"))
        g = os.path.join(DATA_DIR, "projects", did, ".git")
        check("test_projects_duplicate_shares_nothing_on_disk",
              s1.st_ino != s2.st_ino and s2.st_nlink == 1 and os.path.isdir(g) and not os.path.islink(g))
    r = api("POST", "/projects/%s/duplicate" % pid, {}, token=a.token)
    check("test_projects_duplicate_without_name_is_named_copy",
          r.status == 201 and r.body.get("name") == src.get("name") + " (copy)", r)
    # permissions: read access to the source, member access to the target
    r = api("POST", "/projects/%s/duplicate" % pid, {"workspaceId": b.workspace_id}, token=b.token)
    check("test_projects_duplicate_without_read_access_is_403", is_error(r, 403, "forbidden"), r)
    r = api("POST", "/projects/%s/duplicate" % pid, {"workspaceId": b.workspace_id}, token=a.token)
    check("test_projects_duplicate_into_a_foreign_workspace_is_403", is_error(r, 403, "forbidden"), r)
    r = api("POST", "/projects/%s/duplicate" % pid, {"workspaceId": UNKNOWN_ID}, token=a.token)
    check("test_projects_duplicate_into_unknown_workspace_is_404", is_error(r, 404, "not_found"), r)
    for label, body, field in (("name_blank", {"name": " "}, "name"), ("name_too_long", {"name": "n" * 129}, "name"),
                               ("workspace_not_uuid", {"workspaceId": "x"}, "workspaceId")):
        r = api("POST", "/projects/%s/duplicate" % pid, body, token=a.token)
        check("test_projects_duplicate_%s_is_400_%s" % (label, field), is_error(r, 400, "validation_failed", field), r)
    r = api("POST", "/projects/%s/duplicate" % UNKNOWN_ID, {}, token=a.token)
    check("test_projects_duplicate_unknown_source_is_404", is_error(r, 404, "not_found"), r)
    r = api("POST", "/projects/%s/duplicate" % pid, {})
    check("test_projects_duplicate_without_token_is_401", is_error(r, 401, "unauthorized"), r)
    api("PATCH", "/projects/%s" % pid, {"visibility": "public"}, token=a.token)
    r = api("POST", "/projects/%s/duplicate" % pid, {"workspaceId": b.workspace_id, "name": "Mine now"}, token=b.token)
    check("test_projects_duplicate_of_a_public_project_into_ones_own_workspace",
          r.status == 201 and r.body.get("workspaceId") == b.workspace_id, r)
    if r.status == 201:
        g = api("GET", "/projects/%s/versions" % r.body["id"], token=b.token)
        check("test_projects_duplicate_by_another_user_is_theirs", g.status == 200, g)
    api("PATCH", "/projects/%s" % pid, {"visibility": src.get("visibility")}, token=a.token)


def test_restore(a, b):
    r = create(a, {"name": "Restore me"})
    pid = r.body.get("id")
    slug = r.body.get("slug")
    r = api("POST", "/projects/%s/restore" % pid, token=a.token)
    check("test_projects_restore_of_an_active_project_is_409", is_error(r, 409, "conflict"), r)
    api("DELETE", "/projects/%s" % pid, token=a.token)
    r = create(a, {"name": "Restore me"})
    check("test_projects_soft_deleted_slug_stays_reserved", r.status == 201 and r.body.get("slug") != slug, r)
    r = api("POST", "/projects/%s/restore" % pid, token=b.token)
    check("test_projects_restore_by_non_member_is_403", is_error(r, 403, "forbidden"), r)
    r = api("POST", "/projects/%s/restore" % pid)
    check("test_projects_restore_without_token_is_401", is_error(r, 401, "unauthorized"), r)
    r = api("POST", "/projects/%s/restore" % UNKNOWN_ID, token=a.token)
    check("test_projects_restore_unknown_is_404", is_error(r, 404, "not_found"), r)
    r = api("POST", "/projects/%s/restore" % pid, token=a.token)
    check("test_projects_restore_answers_the_project",
          r.status == 200 and r.body.get("id") == pid and r.body.get("slug") == slug, r)
    check("test_projects_restored_project_is_listed_again", pid in (ws_project_ids(a) or []))
    r = api("GET", "/projects/%s/files/index.html" % pid, token=a.token)
    check("test_projects_restored_project_has_its_files", r.status == 200, r)
    api("DELETE", "/projects/%s" % pid, token=a.token)
    r = api("DELETE", "/projects/%s?hard=true" % pid, token=a.token)
    check("test_projects_owner_hard_deletes_a_soft_deleted_project", r.status == 200 and r.body.get("hard") is True, r)
    r = api("POST", "/projects/%s/restore" % pid, token=a.token)
    check("test_projects_hard_deleted_project_cannot_be_restored_404", is_error(r, 404, "not_found"), r)
    if DATA_DIR:
        check("test_projects_hard_delete_of_a_soft_deleted_project_removes_files",
              not os.path.exists(os.path.join(DATA_DIR, "projects", pid)))


def main():
    try:
        a, b, c = signup(tag="proj-a"), signup(tag="proj-b"), signup(tag="proj-c")
    except AssertionError as e:
        check("test_projects_sign_up_three_users", False, e)
        return
    blank, todo = test_create(a, b)
    test_list_paging(c)
    test_concurrent_creates(c)
    test_soft_delete_unpublishes(c)
    if not blank or not todo:
        skip_rest("create failed", ["test_projects_rest"])
        return
    test_router(a, todo)
    chat_id = test_chats(a, b, todo)
    test_files(a, b, todo)
    test_versions_checkout(a, b, todo, chat_id)
    slug = test_deploy(a, b, todo)
    test_duplicate(a, b, todo)
    test_restore(a, b)
    test_get_patch_delete(a, b, blank)
    if slug:
        test_hard_delete(a, todo, slug)


if __name__ == "__main__":
    try:
        main()
    except Exception:
        import traceback
        check("test_projects ran to the end", False, traceback.format_exc())
    sys.exit(finish())
