#!/usr/bin/env python3
# test_permissions.py: the permission matrix of spec "Authentication" 10 against the real stack, every cell
"""
Actors: anonymous, non-member, member, admin, owner of a team workspace, and a
platform admin who is not a member. Actions: list, get, create, update,
delete (soft), hard-delete, change visibility. Projects: private, workspace,
public, each created by the owner (so the member is never the creator).
Every cell is one check named test_permissions_<action>_<visibility>_by_<actor>.
The expected outcome comes from the rules in docs/api.md ("Permissions").
"""
import os
import secrets
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from svclib import api, check, created_id, finish, is_error  # noqa: E402
from wslib import Team, create_in, list_all, platform_admin, svc_admin  # noqa: E402

VISIBILITIES = ("private", "workspace", "public")
ACTORS = ("anonymous", "nonmember", "member", "admin", "owner", "platformadmin")
OTHER_VIS = {"private": "workspace", "workspace": "public", "public": "private"}


def reads(actor, vis):
    """May `actor` read a project of visibility `vis` created by the owner?"""
    if vis == "public":
        return True
    if actor in ("admin", "owner", "platformadmin"):
        return True
    return actor == "member" and vis == "workspace"


def writes(actor, vis):
    """Update and soft delete: read access without the public exception for outsiders."""
    if actor in ("admin", "owner", "platformadmin"):
        return True
    return actor == "member" and vis != "private"


def denied_status(actor):
    return 401 if actor == "anonymous" else 403


def expect(r, ok_status, allowed, actor):
    if allowed:
        return r.status == ok_status
    return is_error(r, denied_status(actor), "unauthorized" if actor == "anonymous" else "forbidden")


def main():
    try:
        t = Team("perm")
        padmin = platform_admin()
    except AssertionError as e:
        check("test_permissions_setup", False, e)
        return
    tokens = {"anonymous": None, "nonmember": t.outsider.token, "member": t.member.token, "admin": t.admin.token,
              "owner": t.owner.token, "platformadmin": padmin.token}

    # One project per visibility, created by the owner.
    projects = {}
    for vis in VISIBILITIES:
        r = create_in(t.owner, t.wid, "Matrix %s %s" % (vis, secrets.token_hex(2)), visibility=vis)
        check("test_permissions_owner_creates_a_%s_project" % vis,
              r.status == 201 and r.body.get("visibility") == vis, r)
        projects[vis] = created_id(r)
    if not all(projects.values()):
        return

    for actor in ACTORS:
        tok = tokens[actor]
        # list: one request per actor, one check per visibility
        listed = list_all(tok, workspaceId=t.wid) if tok else None
        if actor == "anonymous":
            r = api("GET", "/projects?workspaceId=%s" % t.wid)
            for vis in VISIBILITIES:
                check("test_permissions_list_%s_by_anonymous_is_401" % vis, is_error(r, 401, "unauthorized"), r)
        else:
            for vis in VISIBILITIES:
                want = reads(actor, vis)
                check("test_permissions_list_%s_by_%s_%s" % (vis, actor, "shows_it" if want else "hides_it"),
                      listed is not None and (projects[vis] in listed) == want, listed)

        for vis in VISIBILITIES:
            pid = projects[vis]
            # get
            r = api("GET", "/projects/%s" % pid, token=tok)
            want = reads(actor, vis)
            check("test_permissions_get_%s_by_%s_%s" % (vis, actor, "is_200" if want else "is_%d" % denied_status(actor)),
                  expect(r, 200, want, actor) and (not want or r.body.get("id") == pid), r)
            # create (with that visibility), in the team workspace
            r = create_in(tok, t.wid, "Created by %s" % actor, visibility=vis)
            want = actor in ("member", "admin", "owner", "platformadmin")
            check("test_permissions_create_%s_by_%s_%s" % (vis, actor, "is_201" if want else "is_%d" % denied_status(actor)),
                  expect(r, 201, want, actor) and (not want or r.body.get("visibility") == vis), r)
            # update
            new_name = "Renamed by %s" % actor
            r = api("PATCH", "/projects/%s" % pid, {"name": new_name}, token=tok)
            want = writes(actor, vis)
            check("test_permissions_update_%s_by_%s_%s" % (vis, actor, "is_200" if want else "is_%d" % denied_status(actor)),
                  expect(r, 200, want, actor) and (not want or r.body.get("name") == new_name), r)
            # change visibility (and back, by the owner)
            r = api("PATCH", "/projects/%s" % pid, {"visibility": OTHER_VIS[vis]}, token=tok)
            want = actor in ("admin", "owner", "platformadmin")
            check("test_permissions_visibility_%s_by_%s_%s" % (vis, actor, "is_200" if want else "is_%d" % denied_status(actor)),
                  expect(r, 200, want, actor) and (not want or r.body.get("visibility") == OTHER_VIS[vis]), r)
            back = api("PATCH", "/projects/%s" % pid, {"visibility": vis}, token=t.owner.token)
            cur = api("GET", "/projects/%s" % pid, token=t.owner.token)
            check("test_permissions_visibility_%s_after_%s_is_%s" % (vis, actor, vis),
                  back.status == 200 and cur.body.get("visibility") == vis, cur)
            # soft delete (and restore, by the owner)
            r = api("DELETE", "/projects/%s" % pid, token=tok)
            want = writes(actor, vis)
            check("test_permissions_delete_%s_by_%s_%s" % (vis, actor, "is_200" if want else "is_%d" % denied_status(actor)),
                  expect(r, 200, want, actor), r)
            if want:
                r = api("POST", "/projects/%s/restore" % pid, token=t.owner.token)
                check("test_permissions_restore_%s_after_delete_by_%s" % (vis, actor), r.status == 200, r)
            r = api("GET", "/projects/%s" % pid, token=t.owner.token)
            check("test_permissions_%s_project_still_there_after_%s" % (vis, actor), r.status == 200, r)
            # hard delete, on a project of its own
            r = create_in(t.owner, t.wid, "Hard %s %s" % (vis, actor), visibility=vis)
            hid = created_id(r)
            r = api("DELETE", "/projects/%s?hard=true" % hid, token=tok)
            want = actor in ("owner", "platformadmin")
            check("test_permissions_hard_delete_%s_by_%s_%s" % (vis, actor, "is_200" if want else "is_%d" % denied_status(actor)),
                  hid is not None and expect(r, 200, want, actor), r)
            g = api("GET", "/projects/%s" % hid, token=t.owner.token)
            check("test_permissions_hard_delete_%s_by_%s_%s" % (vis, actor, "removed_it" if want else "kept_it"),
                  g.status == (404 if want else 200), g)
            if not want:
                api("DELETE", "/projects/%s?hard=true" % hid, token=t.owner.token)

    # A member's own private project: theirs to read, change and re-scope; other members' not.
    r = create_in(t.member, t.wid, "Member private", visibility="private")
    mine = created_id(r)
    check("test_permissions_member_creates_a_private_project", mine is not None, r)
    r = api("GET", "/projects/%s" % mine, token=t.member.token)
    check("test_permissions_private_project_is_readable_by_its_creator", r.status == 200, r)
    r = api("PATCH", "/projects/%s" % mine, {"visibility": "workspace"}, token=t.member.token)
    check("test_permissions_creator_member_may_change_visibility", r.status == 200, r)
    r = api("PATCH", "/projects/%s" % mine, {"visibility": "private"}, token=t.member.token)
    check("test_permissions_creator_member_may_make_it_private_again", r.status == 200, r)
    check("test_permissions_private_project_is_listed_for_its_creator",
          mine in (list_all(t.member.token, workspaceId=t.wid) or []))
    r = api("GET", "/projects/%s" % mine, token=t.admin.token)
    check("test_permissions_members_private_project_is_readable_by_an_admin", r.status == 200, r)
    r = api("DELETE", "/projects/%s?hard=true" % mine, token=t.member.token)
    check("test_permissions_creator_member_may_not_hard_delete", is_error(r, 403, "forbidden"), r)

    # Reads beyond get: files, versions, chats follow the same rule.
    for vis in VISIBILITIES:
        for actor in ("anonymous", "nonmember", "member"):
            want = reads(actor, vis)
            r = api("GET", "/projects/%s/files" % projects[vis], token=tokens[actor])
            check("test_permissions_files_%s_by_%s_%s" % (vis, actor, "is_200" if want else "is_refused"),
                  expect(r, 200, want, actor), r)
    # Listing without workspaceId never shows another workspace's public project to a non-member.
    check("test_permissions_list_without_workspace_is_only_my_workspaces",
          projects["public"] not in (list_all(t.outsider.token) or []))
    # A revoked platform admin is an ordinary user again.
    rc, out = svc_admin("revoke-platform-admin", padmin.email)
    check("test_permissions_svc_admin_revoke_exits_0", rc == 0, out)
    r = api("GET", "/projects/%s" % projects["private"], token=padmin.token)
    check("test_permissions_revoked_platform_admin_is_403", is_error(r, 403, "forbidden"), r)
    rc, out = svc_admin("grant-platform-admin", "nobody-%s@example.test" % secrets.token_hex(4))
    check("test_permissions_svc_admin_unknown_email_fails", rc != 0 and "no user" in out, out)
    rc, out = svc_admin("make-me-admin", padmin.email)
    check("test_permissions_svc_admin_unknown_command_is_usage", rc == 2 and "usage" in out, out)
    me = api("GET", "/auth/me", token=padmin.token)
    check("test_permissions_me_shows_platform_admin_flag",
          me.status == 200 and me.body.get("user", {}).get("isPlatformAdmin") is False, me)


if __name__ == "__main__":
    try:
        main()
    except Exception:
        import traceback
        check("test_permissions ran to the end", False, traceback.format_exc())
    sys.exit(finish())
