#!/usr/bin/env python3
# test_app_backend_builders.py: the builders' fixes of an app's backend through svc (issue 28 "For builders",
# docs/api.md "The apps' backend: for builders"): one record read, changed (validated against svc.data.json as
# svc-app validates, whatever the site's rules) and deleted; an end user disabled (sign-in refused, sessions ended at
# once) and enabled again; an environment's export. Members read, workspace admins change, a member below admin is
# 403, a public project's viewers 404 (strangers to a project that is not public what GET /projects/:id gives them). Records are made through /_svc/ on the preview as end users.
import json
import os
import secrets
import sys
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from svclib import UNKNOWN_ID, api, check, finish, is_error  # noqa: E402
from test_app_backend import Site, put_file  # noqa: E402
from wslib import Team, create_in  # noqa: E402

DECL = {
    "collections": {
        "todos": {"fields": {"title": {"type": "string", "required": True, "max": 20}, "done": {"type": "boolean"},
                             "n": {"type": "number", "min": 0, "max": 10}, "d": {"type": "datetime"},
                             "t": {"type": "text"}},
                  "indexes": ["done"]},
        # sorted lists (sort=<field>|-<field> on declared indexes, id, createdAt)
        "scores": {"fields": {"name": {"type": "string"}, "score": {"type": "number"}, "tag": {"type": "string"},
                              "t": {"type": "text"}},
                   "indexes": ["score", "tag"]},
        "board": {"fields": {"score": {"type": "number"}}, "indexes": ["score"],
                  "rules": {"list": "public", "get": "public", "create": "user"}},
        # nobody may change these on the site: builders still may
        "locked": {"fields": {"x": {"type": "string"}},
                   "rules": {"list": "user", "get": "user", "create": "user", "update": "none", "delete": "none"}},
    }
}


def end_user(site, tag):
    """A signed-up end user on `site` (its own cookie jar). Returns (site, email, password, id)."""
    s = site.as_user()
    email = "%s-%s@example.com" % (tag, secrets.token_hex(4))
    pw = "pw-" + secrets.token_hex(6)
    r = s.call("POST", "/_svc/auth/signup", {"email": email, "password": pw})
    if r.status != 201:
        raise AssertionError("end-user sign-up failed: %r" % r)
    return s, email, pw, r.body["user"]["id"]


def refused_as_project(t, pid, r):
    """A stranger to a project that is not public gets what GET /projects/:id gives them (403 or 404)."""
    r2 = api("GET", "/projects/%s" % pid, token=t.outsider.token)
    return r.status in (403, 404) and r.status == r2.status and r.body.get("error") == r2.body.get("error")


def base(pid, rest=""):
    return "/projects/%s/backend/test%s" % (pid, rest)


def record_get(t, pid, rec, todo):
    """GET .../data/:collection/:recordId: members read, every error case."""
    path = base(pid, "/data/todos/" + todo["id"])
    r = api("GET", path, token=t.member.token)
    check("test_app_builders_record_get_member_200", r.status == 200 and r.body["id"] == todo["id"]
          and r.body["title"] == todo["title"] and r.body["owner"] == todo["owner"], r)
    r = api("GET", path)
    check("test_app_builders_record_get_anonymous_401", is_error(r, 401, "unauthorized"), r)
    r = api("GET", path, token=t.outsider.token)
    check("test_app_builders_record_get_stranger_refused_as_for_the_project", refused_as_project(t, pid, r), r)
    r = api("GET", base(pid, "/data/todos/" + UNKNOWN_ID), token=t.member.token)
    check("test_app_builders_record_get_unknown_404", is_error(r, 404, "not_found"), r)
    r = api("GET", base(pid, "/data/todos/not-a-uuid"), token=t.member.token)
    check("test_app_builders_record_get_not_uuid_404", r.status == 404, r)
    r = api("GET", base(pid, "/data/nothing/" + todo["id"]), token=t.member.token)
    check("test_app_builders_record_get_undeclared_collection_404", is_error(r, 404, "not_found"), r)
    r = api("GET", base(pid, "/data/locked/" + todo["id"]), token=t.member.token)
    check("test_app_builders_record_get_other_collection_404", is_error(r, 404, "not_found"), r)
    r = api("GET", "/projects/%s/backend/prod/data/todos/%s" % (pid, todo["id"]), token=t.member.token)
    check("test_app_builders_record_get_unknown_env_404", r.status == 404, r)
    r = api("GET", "/projects/%s/backend/live/data/todos/%s" % (pid, todo["id"]), token=t.member.token)
    check("test_app_builders_record_get_other_env_404", is_error(r, 404, "not_found"), r)


def record_patch(t, pid, site_a, todo, locked):
    """PATCH: admins only, validated as svc-app's PATCH, the owner kept, the index rewritten, rules of the site aside."""
    path = base(pid, "/data/todos/" + todo["id"])
    r = api("PATCH", path, {"title": "fixed", "done": True, "n": 3}, token=t.admin.token)
    check("test_app_builders_record_patch_admin_200", r.status == 200 and r.body["title"] == "fixed"
          and r.body["done"] is True and r.body["n"] == 3 and r.body["owner"] == todo["owner"]
          and r.body["updatedAt"] >= todo["updatedAt"], r)
    r = site_a.call("GET", "/_svc/data/todos/" + todo["id"])
    check("test_app_builders_record_patch_seen_by_the_end_user", r.status == 200 and r.body["title"] == "fixed", r)
    r = site_a.call("GET", "/_svc/data/todos?filter=done:true")
    check("test_app_builders_record_patch_index_rewritten", r.status == 200
          and [x["id"] for x in r.body["items"]] == [todo["id"]], r)
    r = api("PATCH", path, {"n": None}, token=t.owner.token)
    check("test_app_builders_record_patch_null_removes_owner_200", r.status == 200 and "n" not in r.body
          and r.body["title"] == "fixed", r)
    r = api("PATCH", path, {"title": "by a member"}, token=t.member.token)
    check("test_app_builders_record_patch_member_403", is_error(r, 403, "forbidden"), r)
    r = api("PATCH", path, {"title": "by a stranger"}, token=t.outsider.token)
    check("test_app_builders_record_patch_stranger_refused_as_for_the_project", refused_as_project(t, pid, r), r)
    r = api("PATCH", path, {"title": "anonymous"})
    check("test_app_builders_record_patch_anonymous_401", is_error(r, 401, "unauthorized"), r)
    bad = (("too_long", {"title": "x" * 21}, "title"), ("wrong_type", {"done": "yes"}, "done"),
           ("required_null", {"title": None}, "title"), ("number_over_max", {"n": 11}, "n"),
           ("bad_datetime", {"d": "yesterday"}, "d"), ("unknown_field", {"colour": "red"}, "colour"),
           ("server_field", {"owner": UNKNOWN_ID}, "owner"))
    for name, body, field in bad:
        r = api("PATCH", path, body, token=t.admin.token)
        check("test_app_builders_record_patch_%s_400" % name, is_error(r, 400, "validation_failed", field), r)
    r = api("PATCH", path, raw="{nope", token=t.admin.token)
    check("test_app_builders_record_patch_invalid_json_400", is_error(r, 400, "invalid_json"), r)
    r = api("PATCH", path, raw="title=x", token=t.admin.token, headers={"Content-Type": "text/plain"})
    check("test_app_builders_record_patch_wrong_type_415", r.status == 415, r)
    r = api("PATCH", path, raw=json.dumps({"t": "y" * (1024 * 1024)}), token=t.admin.token)
    check("test_app_builders_record_patch_over_cap_413", r.status == 413, r)
    r = api("PATCH", path, {"t": "y" * 29990}, token=t.admin.token)
    check("test_app_builders_record_patch_past_quota_413", is_error(r, 413, "payload_too_large")
          and "SVC_APP_MAX_BYTES" in r.body["message"], r)
    r = api("GET", path, token=t.member.token)
    check("test_app_builders_record_patch_refused_changes_nothing", r.status == 200 and r.body["title"] == "fixed"
          and "t" not in r.body and "colour" not in r.body and r.body["owner"] == todo["owner"], r)
    r = api("PATCH", base(pid, "/data/todos/" + UNKNOWN_ID), {"title": "x"}, token=t.admin.token)
    check("test_app_builders_record_patch_unknown_404", is_error(r, 404, "not_found"), r)
    r = api("PATCH", base(pid, "/data/nothing/" + todo["id"]), {"title": "x"}, token=t.admin.token)
    check("test_app_builders_record_patch_undeclared_collection_404", is_error(r, 404, "not_found"), r)
    r = api("PATCH", "/projects/%s/backend/prod/data/todos/%s" % (pid, todo["id"]), {"title": "x"}, token=t.admin.token)
    check("test_app_builders_record_patch_unknown_env_404", r.status == 404, r)
    # the site's rule "none" binds the site, not the builders
    r = site_a.call("PATCH", "/_svc/data/locked/" + locked["id"], {"x": "site"})
    r2 = api("PATCH", base(pid, "/data/locked/" + locked["id"]), {"x": "builder"}, token=t.admin.token)
    check("test_app_builders_record_patch_whatever_the_site_rules", r.status == 403 and r2.status == 200
          and r2.body["x"] == "builder", (r, r2))
    return locked


def record_delete(t, pid, site_a, todo, locked):
    """DELETE: admins only; the record, its index rows and its count gone."""
    path = base(pid, "/data/todos/" + todo["id"])
    before = api("GET", "/projects/%s/backend" % pid, token=t.member.token).body["usage"]["test"]["records"]
    r = api("DELETE", path, token=t.member.token)
    check("test_app_builders_record_delete_member_403", is_error(r, 403, "forbidden"), r)
    r = api("DELETE", path, token=t.outsider.token)
    check("test_app_builders_record_delete_stranger_refused_as_for_the_project", refused_as_project(t, pid, r), r)
    r = api("DELETE", path)
    check("test_app_builders_record_delete_anonymous_401", is_error(r, 401, "unauthorized"), r)
    r = api("DELETE", path, token=t.admin.token)
    r2 = site_a.call("GET", "/_svc/data/todos/" + todo["id"])
    r3 = site_a.call("GET", "/_svc/data/todos?filter=done:true")
    after = api("GET", "/projects/%s/backend" % pid, token=t.member.token).body["usage"]["test"]["records"]
    check("test_app_builders_record_delete_admin_204", r.status == 204 and is_error(r2, 404, "not_found")
          and r3.body["items"] == [] and after == before - 1, (r, r2, r3, before, after))
    r = api("DELETE", path, token=t.admin.token)
    check("test_app_builders_record_delete_again_404", is_error(r, 404, "not_found"), r)
    r = api("DELETE", base(pid, "/data/nothing/" + todo["id"]), token=t.admin.token)
    check("test_app_builders_record_delete_undeclared_collection_404", is_error(r, 404, "not_found"), r)
    r = api("DELETE", base(pid, "/data/locked/" + locked["id"]), token=t.admin.token)
    check("test_app_builders_record_delete_whatever_the_site_rules", r.status == 204, r)


def users_disable(t, pid, site, b):
    """PATCH .../users/:userId {disabled}: the end user's session ends at once, sign-in refused, enabled again."""
    sb, email, pw, bid = b
    path = base(pid, "/users/" + bid)
    r = sb.call("GET", "/_svc/auth/me")
    check("test_app_builders_user_signed_in_before", r.status == 200, r)
    r = api("PATCH", path, {"disabled": True}, token=t.member.token)
    check("test_app_builders_user_disable_member_403", is_error(r, 403, "forbidden"), r)
    r = api("PATCH", path, {"disabled": True}, token=t.outsider.token)
    check("test_app_builders_user_disable_stranger_refused_as_for_the_project", refused_as_project(t, pid, r), r)
    r = api("PATCH", path, {"disabled": True})
    check("test_app_builders_user_disable_anonymous_401", is_error(r, 401, "unauthorized"), r)
    r = api("PATCH", path, {}, token=t.admin.token)
    check("test_app_builders_user_disable_missing_400", is_error(r, 400, "validation_failed", "disabled"), r)
    r = api("PATCH", path, {"disabled": "yes"}, token=t.admin.token)
    check("test_app_builders_user_disable_not_boolean_400", is_error(r, 400, "validation_failed", "disabled"), r)
    r = api("PATCH", base(pid, "/users/" + UNKNOWN_ID), {"disabled": True}, token=t.admin.token)
    check("test_app_builders_user_disable_unknown_404", is_error(r, 404, "not_found"), r)
    r = api("PATCH", "/projects/%s/backend/live/users/%s" % (pid, bid), {"disabled": True}, token=t.admin.token)
    check("test_app_builders_user_disable_other_env_404", is_error(r, 404, "not_found"), r)
    r = sb.call("GET", "/_svc/auth/me")
    check("test_app_builders_user_refused_requests_changed_nothing", r.status == 200, r)
    r = api("PATCH", path, {"disabled": True}, token=t.admin.token)
    check("test_app_builders_user_disable_200", r.status == 200 and r.body["id"] == bid and r.body["disabled"] is True
          and r.body["email"] == email and "password" not in json.dumps(r.body).lower(), r)
    r = sb.call("GET", "/_svc/auth/me")
    check("test_app_builders_user_disabled_session_ended_at_once", is_error(r, 401, "unauthorized"), r)
    r = sb.call("GET", "/_svc/data/todos")
    check("test_app_builders_user_disabled_records_refused", is_error(r, 401, "unauthorized"), r)
    fresh = site.as_user()
    r = fresh.call("POST", "/_svc/auth/login", {"email": email, "password": pw})
    check("test_app_builders_user_disabled_cannot_sign_in", is_error(r, 401, "unauthorized"), r)
    r = api("GET", base(pid, "/users"), token=t.member.token)
    check("test_app_builders_user_listed_disabled", r.status == 200
          and [u["disabled"] for u in r.body["items"] if u["id"] == bid] == [True], r)
    r = api("PATCH", path, {"disabled": False}, token=t.owner.token)
    r2 = fresh.call("POST", "/_svc/auth/login", {"email": email, "password": pw})
    check("test_app_builders_user_enabled_signs_in_again", r.status == 200 and r.body["disabled"] is False
          and r2.status == 200, (r, r2))
    r = api("DELETE", path, token=t.member.token)
    check("test_app_builders_user_delete_member_403", is_error(r, 403, "forbidden"), r)
    r = api("DELETE", path, token=t.outsider.token)
    check("test_app_builders_user_delete_stranger_refused_as_for_the_project", refused_as_project(t, pid, r), r)


def export(t, pid, todo_ids, emails):
    """GET .../export: one JSON document of the environment, end users without their password hashes."""
    r = api("GET", base(pid, "/export"), token=t.member.token)
    body = r.body if r.status == 200 else {}
    got = [x["id"] for x in body.get("collections", {}).get("todos", [])]
    check("test_app_builders_export_member_200", r.status == 200 and body["env"] == "test" and body["project"] == pid
          and sorted(got) == sorted(todo_ids) and sorted(u["email"] for u in body["users"]) == sorted(emails)
          and "attachment" in r.headers.get("content-disposition", ""), r)
    raw = r.raw.decode()
    check("test_app_builders_export_no_password_hashes", "argon2" not in raw and "password" not in raw.lower(), raw[:300])
    r = api("GET", "/projects/%s/backend/live/export" % pid, token=t.member.token)
    check("test_app_builders_export_live_apart", r.status == 200 and r.body["collections"] == {}
          and r.body["users"] == [], r)
    r = api("GET", base(pid, "/export"))
    check("test_app_builders_export_anonymous_401", is_error(r, 401, "unauthorized"), r)
    r = api("GET", base(pid, "/export"), token=t.outsider.token)
    check("test_app_builders_export_stranger_refused_as_for_the_project", refused_as_project(t, pid, r), r)
    r = api("GET", "/projects/%s/backend/prod/export" % pid, token=t.member.token)
    check("test_app_builders_export_unknown_env_404", r.status == 404, r)


def public_viewers(t, pid, rec, uid):
    """A public project's viewers see nothing of its backend: 404 on every route, as for a project that is not."""
    r = api("PATCH", "/projects/%s" % pid, {"visibility": "public"}, token=t.owner.token)
    r2 = api("GET", "/projects/%s" % pid, token=t.outsider.token)
    check("test_app_builders_public_project_readable", r.status == 200 and r2.status == 200, (r, r2))
    for method, rest in (("GET", ""), ("GET", "/users"), ("GET", "/export"), ("GET", "/data/todos"),
                         ("DELETE", "")):
        path = "/projects/%s/backend" % pid + ("/test" + rest if rest or method == "DELETE" else "")
        r = api(method, path, token=t.outsider.token)
        check("test_app_builders_public_viewer_404_%s_%s" % (method.lower(), rest.strip("/").replace("/", "_") or "summary"),
              is_error(r, 404, "not_found"), r)
    for method, rest, body in (("GET", "/data/todos/" + rec["id"], None), ("PATCH", "/data/todos/" + rec["id"], {"title": "x"}),
                               ("DELETE", "/data/todos/" + rec["id"], None), ("PATCH", "/users/" + uid, {"disabled": True}),
                               ("DELETE", "/users/" + uid, None)):
        r = api(method, base(pid, rest), body, token=t.outsider.token)
        check("test_app_builders_public_viewer_404_%s_%s" % (method.lower(), rest.split("/")[1]),
              is_error(r, 404, "not_found"), r)
    r = api("GET", base(pid, "/data/todos/" + rec["id"]), token=t.member.token)
    check("test_app_builders_public_viewer_changed_nothing", r.status == 200 and r.body["title"] == rec["title"], r)


def page_all(site, path, limit=4):
    """Every item of a list, page after page (at most 50 pages). Returns (ids, statuses)."""
    ids, statuses, cursor = [], [], None
    for _ in range(50):
        sep = "&" if "?" in path else "?"
        r = site.call("GET", path + sep + "limit=%d" % limit + ("&cursor=" + cursor if cursor else ""))
        statuses.append(r.status)
        if r.status != 200:
            break
        ids += [x["id"] for x in r.body["items"]]
        cursor = r.body["nextCursor"]
        if not cursor:
            break
    return ids, statuses


def expected(records, field, desc):
    """The order the server promises: records without the field first (ascending), then by value, ties by id."""
    def key(x):
        return (field in x, x.get(field, 0) if field else 0, x["id"])
    return [x["id"] for x in sorted(records, key=key, reverse=desc)]


def sorting(site):
    """sort=<field>|-<field>: every record once, in order, page after page; under owner only the caller's."""
    a, b = site.as_user(), site.as_user()
    for s, tag in ((a, "sa"), (b, "sb")):
        s.call("POST", "/_svc/auth/signup", {"email": "%s-%s@example.com" % (tag, secrets.token_hex(4)),
                                            "password": "pw-" + secrets.token_hex(6)})
    values = [10, 9, -1, 2.5, 9, 9, 100, 0, None, None, 2.5, 1e-3]
    tags = ["b", "a", "c", "a", None, "b", "a", "z", "y", "a", "b", "c"]
    mine = []
    for i, (v, t) in enumerate(zip(values, tags)):
        body = {"name": "r%d" % i}
        if v is not None:
            body["score"] = v
        if t is not None:
            body["tag"] = t
        mine.append(a.call("POST", "/_svc/data/scores", body).body)
    theirs = [b.call("POST", "/_svc/data/scores", {"score": v, "tag": "a"}).body for v in (9, 1, 50)]
    check("test_app_sort_records_made", all(x.get("id") for x in mine + theirs), mine + theirs)
    for field, name in (("score", "number"), ("tag", "string"), ("id", "id")):
        for desc in (False, True):
            ids, st = page_all(a, "/_svc/data/scores?sort=%s%s" % ("-" if desc else "", field))
            want = [x["id"] for x in sorted(mine, key=lambda x: x["id"], reverse=desc)] if field == "id" else \
                expected(mine, field, desc)
            check("test_app_sort_%s_%s_pages_every_record_once_in_order" % (name, "desc" if desc else "asc"),
                  ids == want and len(set(ids)) == len(mine) and all(x == 200 for x in st), (field, desc, ids, want, st))
    ids, _ = page_all(b, "/_svc/data/scores?sort=-score", limit=2)
    check("test_app_sort_under_owner_only_the_callers", ids == expected(theirs, "score", True), ids)
    ids, _ = page_all(a, "/_svc/data/scores?sort=-score&filter=tag:a", limit=1)
    check("test_app_sort_with_a_filter", ids == expected([x for x in mine if x.get("tag") == "a"], "score", True), ids)
    board = [s.call("POST", "/_svc/data/board", {"score": v}).body for s, v in ((a, 3), (b, 1), (a, 2), (b, 3))]
    ids, _ = page_all(site.as_user(), "/_svc/data/board?sort=score", limit=3)
    check("test_app_sort_public_list_every_owners", ids == expected(board, "score", False), ids)
    for q, name in (("sort=name", "not_indexed"), ("sort=t", "text"), ("sort=nothing", "unknown"),
                    ("sort=--score", "double_minus"), ("sort=owner", "owner"), ("sort=" + "x" * 80, "too_long")):
        r = a.call("GET", "/_svc/data/scores?" + q)
        check("test_app_sort_%s_400" % name, is_error(r, 400, "validation_failed", "sort"), r)
    r = a.call("GET", "/_svc/data/scores?sort=score&limit=2")
    cur = r.body.get("nextCursor") or "00"
    for q, name in (("sort=-score", "other_direction"), ("sort=tag", "other_field"), ("sort=createdAt", "created"),
                    ("", "default")):
        r = a.call("GET", "/_svc/data/scores?%s&cursor=%s" % (q, cur))
        check("test_app_sort_cursor_of_another_sort_%s_400" % name, is_error(r, 400, "validation_failed", "cursor"), r)
    r = a.call("GET", "/_svc/data/scores?sort=createdAt&limit=2")
    r = a.call("GET", "/_svc/data/scores?sort=score&cursor=" + (r.body.get("nextCursor") or "00"))
    check("test_app_sort_created_cursor_on_a_sorted_list_400", is_error(r, 400, "validation_failed", "cursor"), r)
    r = a.call("GET", "/_svc/data/scores?sort=score&cursor=" + "41" * 300)
    check("test_app_sort_garbage_cursor_400", is_error(r, 400, "validation_failed", "cursor"), r)


def export_paged(t, pid):
    """The export streams page after page (20 rows each): every record of every collection once, as the counts say."""
    r = api("GET", base(pid, "/export"), token=t.member.token)
    s = api("GET", "/projects/%s/backend" % pid, token=t.member.token)
    cols = r.body.get("collections", {}) if r.status == 200 else {}
    ids = [x["id"] for v in cols.values() for x in v]
    want = {c["name"]: c["records"]["test"] for c in s.body["collections"] if c["records"]["test"]}
    check("test_app_builders_export_streams_every_record_once", r.status == 200 and len(ids) > 20
          and len(ids) == len(set(ids)) and {k: len(v) for k, v in cols.items()} == want
          and all([x["createdAt"] for x in v] == sorted(x["createdAt"] for x in v) for v in cols.values()),
          (len(ids), want, {k: len(v) for k, v in cols.items()}))


def main():
    t = Team("appbb")
    r = create_in(t.owner, t.wid, "Backend builders", template="blank")
    check("test_app_builders_project_created", r.status == 201, r)
    pid = r.body["id"]
    r = put_file(t.owner, pid, "svc.data.json", json.dumps(DECL, indent=2))
    check("test_app_builders_declaration_saved", r.status in (200, 201), r)
    r = api("GET", "/projects/%s/preview" % pid, token=t.owner.token)
    site = Site(urllib.parse.urlsplit(r.body["url"]).netloc if r.status == 200 else "none")
    sa, ea, _, _ = end_user(site, "a")
    b = end_user(site, "b")
    todos = [sa.call("POST", "/_svc/data/todos", {"title": "A %d" % i, "done": False}).body for i in range(2)]
    todos.append(b[0].call("POST", "/_svc/data/todos", {"title": "B 0"}).body)
    locked = sa.call("POST", "/_svc/data/locked", {"x": "site"}).body
    check("test_app_builders_records_made_on_the_site", all(x.get("id") for x in todos + [locked]), todos)

    record_get(t, pid, None, todos[0])
    record_patch(t, pid, sa, todos[0], locked)
    export(t, pid, [x["id"] for x in todos], [ea, b[1]])
    record_delete(t, pid, sa, todos[0], locked)
    users_disable(t, pid, site, b)
    sorting(site)
    export_paged(t, pid)
    public_viewers(t, pid, todos[1], b[3])
    return finish()


if __name__ == "__main__":
    sys.exit(main())
