#!/usr/bin/env python3
# test_trash.py: GET /projects?deleted=true, the trash: the caller's soft-deleted projects with deletedAt, newest deletion first, keyset paging, who sees what, and errors
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from svclib import (PROJECT_FIELDS, TIME_RE, UNKNOWN_ID, api, check, create_project, finish, is_error,  # noqa: E402
                    signup)


def trash(acct, query="", token=None):
    return api("GET", "/projects?deleted=true" + query, token=token or acct.token)


def ids(r):
    return [p["id"] for p in r.body.get("items", [])] if r.status == 200 and isinstance(r.body, dict) else None


def walk(acct, query, limit):
    """Every page of the trash with `limit`: the ids in order, or None on an error."""
    out, cursor = [], None
    for _ in range(50):
        r = trash(acct, query + "&limit=%d" % limit + ("&cursor=" + cursor if cursor else ""))
        if r.status != 200:
            return None
        out += ids(r)
        cursor = r.body.get("nextCursor")
        if not cursor:
            return out
    return None


def main():
    a = signup(tag="trash")
    r = trash(a)
    check("test_trash_empty_at_first", r.status == 200 and r.body == {"items": [], "nextCursor": None}, r)
    made = []
    for i in range(5):
        p = create_project(a, "blank", name="Trash %d" % i)
        if p.status != 201:
            check("test_trash_setup", False, p)
            return finish()
        made.append(p.body["id"])
    kept = create_project(a, "blank", name="Kept").body["id"]
    # deleted in the order 2, 0, 4, 1, 3: the trash shows the newest deletion first
    order = [made[2], made[0], made[4], made[1], made[3]]
    for pid in order:
        d = api("DELETE", "/projects/%s" % pid, token=a.token)
        check("test_trash_setup_delete", d.status == 200, d)
    r = trash(a)
    got = ids(r)
    check("test_trash_lists_the_deleted_projects", got is not None and set(got) == set(made), (got, made))
    check("test_trash_newest_deletion_first", got == list(reversed(order)), (got, list(reversed(order))))
    check("test_trash_does_not_list_active_projects", got is not None and kept not in got, got)
    items = r.body.get("items", []) if r.status == 200 else []
    check("test_trash_items_are_projects_with_deleted_at",
          items and all(set(PROJECT_FIELDS) | {"deletedAt"} == set(p) and re.match(TIME_RE, p["deletedAt"] or "")
                        for p in items), items[:1])
    check("test_trash_deleted_at_descending", [p["deletedAt"] for p in items] ==
          sorted([p["deletedAt"] for p in items], reverse=True), [p["deletedAt"] for p in items])
    r = api("GET", "/projects", token=a.token)
    check("test_trash_normal_listing_unchanged", r.status == 200 and set(ids(r)) == {kept}, ids(r))
    for v in ("false", "0"):
        r = api("GET", "/projects?deleted=" + v, token=a.token)
        check("test_trash_deleted_%s_is_the_normal_listing" % v, r.status == 200 and set(ids(r)) == {kept}, r)
    r = trash(a, "", None)
    r1 = api("GET", "/projects?deleted=1", token=a.token)
    check("test_trash_deleted_1_is_true", ids(r1) == ids(r), (ids(r1), ids(r)))

    # keyset paging: every page size walks the same list, nothing twice or missing
    for limit in (1, 2, 3):
        check("test_trash_paging_limit_%d" % limit, walk(a, "", limit) == list(reversed(order)), limit)
    # paging is stable while more projects are deleted (they are newer, so never on later pages)
    r = trash(a, "&limit=2")
    extra = create_project(a, "blank", name="Late").body["id"]
    api("DELETE", "/projects/%s" % extra, token=a.token)
    rest = trash(a, "&limit=10&cursor=" + (r.body.get("nextCursor") or ""))
    check("test_trash_paging_stable_under_new_deletions",
          ids(r) + (ids(rest) or []) == list(reversed(order)), (ids(r), ids(rest)))

    # filters of the normal listing apply: the workspace
    r = trash(a, "&workspaceId=" + a.workspace_id)
    check("test_trash_workspace_filter", r.status == 200 and set(ids(r)) == set(made) | {extra}, ids(r))

    # restoring takes a project out of the trash
    api("POST", "/projects/%s/restore" % made[0], token=a.token)
    r = trash(a)
    check("test_trash_restored_project_leaves_the_trash", r.status == 200 and made[0] not in ids(r), ids(r))
    # a hard-deleted one is gone for good
    api("DELETE", "/projects/%s?hard=true" % made[1], token=a.token)
    r = trash(a)
    check("test_trash_hard_deleted_project_not_listed", r.status == 200 and made[1] not in ids(r), ids(r))

    # who sees what: not a stranger, even with the workspace id; a member sees what a member may restore
    b = signup(tag="trash-other")
    r = trash(b)
    check("test_trash_other_users_see_nothing_of_it", r.status == 200 and not (set(ids(r) or []) & set(made)), r)
    r = trash(b, "&workspaceId=" + a.workspace_id)
    check("test_trash_stranger_with_workspace_id_sees_nothing", r.status == 200 and ids(r) == [], r)
    pub = create_project(a, "blank", name="Public gone").body["id"]
    api("PATCH", "/projects/%s" % pub, {"visibility": "public"}, token=a.token)
    api("DELETE", "/projects/%s" % pub, token=a.token)
    r = trash(b, "&workspaceId=" + a.workspace_id)
    check("test_trash_strangers_never_see_deleted_public_projects", r.status == 200 and ids(r) == [], r)
    # a team workspace with b as a member
    team = api("POST", "/workspaces", {"name": "Trash team"}, token=a.token)
    tid = team.body.get("id") if team.status in (200, 201) and isinstance(team.body, dict) else None
    add = api("POST", "/workspaces/%s/members" % tid, {"email": b.email, "role": "member"}, token=a.token)
    if tid and add.status in (200, 201):
        def team_project(name, visibility):
            r = api("POST", "/workspaces/%s/projects" % tid, {"name": name, "visibility": visibility}, token=a.token)
            api("DELETE", "/projects/%s" % r.body["id"], token=a.token)
            return r.body["id"]
        shared = team_project("Team shared", "workspace")
        priv = team_project("Owner private", "private")
        r = trash(b, "&workspaceId=" + tid)
        got = ids(r) or []
        check("test_trash_member_sees_workspace_projects", r.status == 200 and shared in got, got)
        check("test_trash_member_does_not_see_anothers_private_project", priv not in got, got)
        r = trash(b)
        check("test_trash_member_without_workspace_id_sees_the_team_trash", shared in (ids(r) or [])
              and priv not in (ids(r) or []) and not (set(ids(r) or []) & set(made)), ids(r))
        r = trash(a, "&workspaceId=" + tid)
        check("test_trash_owner_sees_every_deleted_project", set(ids(r) or []) == {shared, priv}, ids(r))
    else:
        check("test_trash_member_sees_workspace_projects", False, (team, add))

    # errors
    r = api("GET", "/projects?deleted=true")
    check("test_trash_anonymous_401", is_error(r, 401, "unauthorized"), r)
    for bad in ("yes", "", "TRUE", "2"):
        r = api("GET", "/projects?deleted=" + bad, token=a.token)
        check("test_trash_deleted_%s_400" % (bad or "empty"), is_error(r, 400, "validation_failed", "deleted"), r)
    r = trash(a, "&q=trash")
    check("test_trash_with_q_400", is_error(r, 400, "validation_failed", "q"), r)
    r = trash(a, "&cursor=nonsense")
    check("test_trash_bad_cursor_400", is_error(r, 400, "validation_failed", "cursor"), r)
    r = trash(a, "&limit=0")
    check("test_trash_bad_limit_400", is_error(r, 400, "validation_failed", "limit"), r)
    r = trash(a, "&workspaceId=nope")
    check("test_trash_bad_workspace_400", is_error(r, 400, "validation_failed", "workspaceId"), r)
    r = trash(a, "&workspaceId=" + UNKNOWN_ID)
    check("test_trash_unknown_workspace_empty", r.status == 200 and ids(r) == [], r)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
