#!/usr/bin/env python3
# test_workspaces.py: workspaces, members and roles, leaving, ownership transfer, folders, against the real stack
import os
import re
import secrets
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from svclib import (TIME_RE, UNKNOWN_ID, UUID_RE, api, at_once, check, created_id, finish, is_error,  # noqa: E402
                    items_of, signup)
from wslib import Team, create_in, list_all  # noqa: E402


def members(token, wid):
    r = api("GET", "/workspaces/%s/members" % wid, token=token)
    return {m["userId"]: m["role"] for m in items_of(r.body) or []} if r.status == 200 else None


def test_workspaces_crud():
    a, b = signup(tag="ws-a"), signup(tag="ws-b")
    r = api("GET", "/workspaces", token=a.token)
    items = items_of(r.body) or []
    check("test_workspaces_list_has_the_personal_workspace",
          r.status == 200 and len(items) == 1 and items[0].get("id") == a.workspace_id
          and items[0].get("kind") == "personal" and items[0].get("role") == "owner"
          and items[0].get("memberCount") == 1, r)
    r = api("POST", "/workspaces", {"name": "Acme team"}, token=a.token)
    w = r.body if isinstance(r.body, dict) else {}
    check("test_workspaces_create_team_answers_201",
          r.status == 201 and re.match(UUID_RE, w.get("id") or "") and w.get("name") == "Acme team"
          and w.get("kind") == "team" and w.get("role") == "owner" and re.match(TIME_RE, w.get("createdAt") or ""), r)
    wid = w.get("id")
    r = api("GET", "/workspaces", token=a.token)
    check("test_workspaces_list_shows_personal_first_then_the_team",
          [x.get("id") for x in items_of(r.body) or []] == [a.workspace_id, wid], r)
    for label, body in (("name_missing", {}), ("name_blank", {"name": "  "}), ("name_too_long", {"name": "n" * 129}),
                        ("name_number", {"name": 3})):
        r = api("POST", "/workspaces", body, token=a.token)
        check("test_workspaces_create_%s_is_400_name" % label, is_error(r, 400, "validation_failed", "name"), r)
    r = api("POST", "/workspaces", {"name": "x"})
    check("test_workspaces_create_without_token_is_401", is_error(r, 401, "unauthorized"), r)
    check("test_workspaces_failed_creates_add_nothing",
          len(items_of(api("GET", "/workspaces", token=a.token).body) or []) == 2)

    r = api("GET", "/workspaces/%s" % wid, token=a.token)
    check("test_workspaces_get_answers_the_workspace", r.status == 200 and r.body.get("id") == wid, r)
    r = api("GET", "/workspaces/%s" % wid, token=b.token)
    check("test_workspaces_get_by_non_member_is_403", is_error(r, 403, "forbidden"), r)
    r = api("GET", "/workspaces/%s" % UNKNOWN_ID, token=a.token)
    check("test_workspaces_get_unknown_is_404", is_error(r, 404, "not_found"), r)
    r = api("GET", "/workspaces/not-a-uuid", token=a.token)
    check("test_workspaces_get_non_uuid_is_404", is_error(r, 404, "not_found"), r)
    r = api("PATCH", "/workspaces/%s" % wid, {"name": "Acme renamed"}, token=a.token)
    check("test_workspaces_rename_by_owner", r.status == 200 and r.body.get("name") == "Acme renamed", r)
    r = api("PATCH", "/workspaces/%s" % wid, {"name": "hijacked"}, token=b.token)
    check("test_workspaces_rename_by_non_member_is_403", is_error(r, 403, "forbidden"), r)
    r = api("PATCH", "/workspaces/%s" % wid, {"name": ""}, token=a.token)
    check("test_workspaces_rename_blank_is_400", is_error(r, 400, "validation_failed", "name"), r)

    # A personal workspace stays single-member.
    r = api("POST", "/workspaces/%s/members" % a.workspace_id, {"email": b.email}, token=a.token)
    check("test_workspaces_personal_workspace_refuses_members_409", is_error(r, 409, "conflict"), r)
    r = api("POST", "/workspaces/%s/leave" % a.workspace_id, token=a.token)
    check("test_workspaces_leaving_ones_personal_workspace_is_409_last_owner", is_error(r, 409, "conflict"), r)


def test_members_and_roles():
    t = Team("roles")
    o, ad, m, x = t.owner, t.admin, t.member, t.outsider
    got = members(o.token, t.wid)
    check("test_workspaces_members_list_shows_every_role",
          got == {o.user["id"]: "owner", ad.user["id"]: "admin", m.user["id"]: "member"}, got)
    r = api("GET", "/workspaces/%s/members" % t.wid, token=m.token)
    mem = (items_of(r.body) or [{}])[0]
    check("test_workspaces_members_list_readable_by_a_member_with_fields",
          r.status == 200 and all(k in mem for k in ("userId", "email", "displayName", "role", "createdAt")), r)
    r = api("GET", "/workspaces/%s/members" % t.wid, token=x.token)
    check("test_workspaces_members_list_by_non_member_is_403", is_error(r, 403, "forbidden"), r)
    r = api("GET", "/workspaces", token=m.token)
    check("test_workspaces_member_sees_the_team_in_its_list",
          t.wid in [w.get("id") for w in items_of(r.body) or []], r)

    # adding
    r = api("POST", "/workspaces/%s/members" % t.wid, {"email": x.email}, token=m.token)
    check("test_workspaces_member_cannot_add_members_403", is_error(r, 403, "forbidden"), r)
    r = api("POST", "/workspaces/%s/members" % t.wid, {"email": x.email, "role": "owner"}, token=ad.token)
    check("test_workspaces_admin_cannot_add_an_owner_403", is_error(r, 403, "forbidden"), r)
    r = api("POST", "/workspaces/%s/members" % t.wid, {"email": "nobody-%s@example.test" % secrets.token_hex(4)},
            token=ad.token)
    check("test_workspaces_add_unknown_email_is_404_email", is_error(r, 404, "not_found", "email"), r)
    r = api("POST", "/workspaces/%s/members" % t.wid, {"email": m.email.upper()}, token=ad.token)
    check("test_workspaces_add_existing_member_is_409", is_error(r, 409, "conflict"), r)
    r = api("POST", "/workspaces/%s/members" % t.wid, {"email": x.email, "role": "king"}, token=ad.token)
    check("test_workspaces_add_with_unknown_role_is_400_role", is_error(r, 400, "validation_failed", "role"), r)
    r = api("POST", "/workspaces/%s/members" % t.wid, {}, token=ad.token)
    check("test_workspaces_add_without_email_is_400_email", is_error(r, 400, "validation_failed", "email"), r)
    r = api("POST", "/workspaces/%s/members" % t.wid, {"email": x.email}, token=ad.token)
    check("test_workspaces_admin_adds_a_member_201",
          r.status == 201 and r.body.get("userId") == x.user["id"] and r.body.get("role") == "member", r)
    r = api("GET", "/workspaces/%s" % t.wid, token=x.token)
    check("test_workspaces_new_member_can_read_the_workspace", r.status == 200 and r.body.get("role") == "member", r)

    # role changes
    r = api("PATCH", "/workspaces/%s/members/%s" % (t.wid, x.user["id"]), {"role": "admin"}, token=m.token)
    check("test_workspaces_member_cannot_change_roles_403", is_error(r, 403, "forbidden"), r)
    r = api("PATCH", "/workspaces/%s/members/%s" % (t.wid, x.user["id"]), {"role": "admin"}, token=ad.token)
    check("test_workspaces_admin_promotes_member_to_admin", r.status == 200 and r.body.get("role") == "admin", r)
    r = api("PATCH", "/workspaces/%s/members/%s" % (t.wid, x.user["id"]), {"role": "owner"}, token=ad.token)
    check("test_workspaces_admin_cannot_make_an_owner_403", is_error(r, 403, "forbidden"), r)
    r = api("PATCH", "/workspaces/%s/members/%s" % (t.wid, o.user["id"]), {"role": "member"}, token=ad.token)
    check("test_workspaces_admin_cannot_demote_the_owner_403", is_error(r, 403, "forbidden"), r)
    r = api("PATCH", "/workspaces/%s/members/%s" % (t.wid, o.user["id"]), {"role": "admin"}, token=o.token)
    check("test_workspaces_last_owner_cannot_step_down_409", is_error(r, 409, "conflict"), r)
    r = api("PATCH", "/workspaces/%s/members/%s" % (t.wid, x.user["id"]), {"role": "boss"}, token=o.token)
    check("test_workspaces_change_to_unknown_role_is_400_role", is_error(r, 400, "validation_failed", "role"), r)
    r = api("PATCH", "/workspaces/%s/members/%s" % (t.wid, UNKNOWN_ID), {"role": "admin"}, token=o.token)
    check("test_workspaces_change_role_of_non_member_is_404", is_error(r, 404, "not_found"), r)
    r = api("PATCH", "/workspaces/%s/members/not-a-uuid" % t.wid, {"role": "admin"}, token=o.token)
    check("test_workspaces_change_role_non_uuid_user_is_404", is_error(r, 404, "not_found"), r)
    check("test_workspaces_refused_role_changes_changed_nothing",
          members(o.token, t.wid) == {o.user["id"]: "owner", ad.user["id"]: "admin", m.user["id"]: "member",
                                      x.user["id"]: "admin"}, members(o.token, t.wid))

    # removing
    r = api("DELETE", "/workspaces/%s/members/%s" % (t.wid, x.user["id"]), token=ad.token)
    check("test_workspaces_admin_cannot_remove_another_admin_403", is_error(r, 403, "forbidden"), r)
    r = api("DELETE", "/workspaces/%s/members/%s" % (t.wid, m.user["id"]), token=x.token)
    check("test_workspaces_admin_removes_a_member", r.status == 200 and r.body.get("removed") is True, r)
    r = api("GET", "/workspaces/%s" % t.wid, token=m.token)
    check("test_workspaces_removed_member_loses_access_403", is_error(r, 403, "forbidden"), r)
    r = api("DELETE", "/workspaces/%s/members/%s" % (t.wid, o.user["id"]), token=o.token)
    check("test_workspaces_last_owner_cannot_remove_itself_409", is_error(r, 409, "conflict"), r)
    r = api("DELETE", "/workspaces/%s/members/%s" % (t.wid, m.user["id"]), token=o.token)
    check("test_workspaces_remove_non_member_is_404", is_error(r, 404, "not_found"), r)

    # leaving
    r = api("POST", "/workspaces/%s/leave" % t.wid, token=x.token)
    check("test_workspaces_admin_leaves", r.status == 200 and r.body.get("userId") == x.user["id"], r)
    r = api("POST", "/workspaces/%s/leave" % t.wid, token=x.token)
    check("test_workspaces_leave_twice_is_403", is_error(r, 403, "forbidden"), r)
    r = api("POST", "/workspaces/%s/leave" % t.wid, token=o.token)
    check("test_workspaces_last_owner_cannot_leave_409", is_error(r, 409, "conflict"), r)

    # ownership transfer
    r = api("POST", "/workspaces/%s/transfer" % t.wid, {"userId": ad.user["id"]}, token=ad.token)
    check("test_workspaces_transfer_by_admin_is_403", is_error(r, 403, "forbidden"), r)
    r = api("POST", "/workspaces/%s/transfer" % t.wid, {"userId": x.user["id"]}, token=o.token)
    check("test_workspaces_transfer_to_non_member_is_404", is_error(r, 404, "not_found"), r)
    r = api("POST", "/workspaces/%s/transfer" % t.wid, {"userId": o.user["id"]}, token=o.token)
    check("test_workspaces_transfer_to_oneself_is_400", is_error(r, 400, "validation_failed", "userId"), r)
    r = api("POST", "/workspaces/%s/transfer" % t.wid, {}, token=o.token)
    check("test_workspaces_transfer_without_user_is_400", is_error(r, 400, "validation_failed", "userId"), r)
    r = api("POST", "/workspaces/%s/transfer" % t.wid, {"userId": ad.user["id"]}, token=o.token)
    got = {mm["userId"]: mm["role"] for mm in items_of(r.body) or []}
    check("test_workspaces_transfer_makes_the_admin_owner_and_the_owner_admin",
          r.status == 200 and got == {o.user["id"]: "admin", ad.user["id"]: "owner"}, r)
    r = api("POST", "/workspaces/%s/leave" % t.wid, token=o.token)
    check("test_workspaces_former_owner_can_now_leave", r.status == 200, r)
    check("test_workspaces_one_owner_remains", members(ad.token, t.wid) == {ad.user["id"]: "owner"},
          members(ad.token, t.wid))


def test_two_owners_demote_each_other_concurrently():
    """The owner rule holds under concurrency: of two owners stepping each other down at once, one fails."""
    t = Team("race")
    r = api("PATCH", "/workspaces/%s/members/%s" % (t.wid, t.admin.user["id"]), {"role": "owner"}, token=t.owner.token)
    check("test_workspaces_owner_makes_a_second_owner", r.status == 200 and r.body.get("role") == "owner", r)

    def step_down(who, other):
        return api("PATCH", "/workspaces/%s/members/%s" % (t.wid, other.user["id"]), {"role": "member"},
                   token=who.token)

    for _ in range(3):
        res = at_once([lambda: step_down(t.owner, t.admin), lambda: step_down(t.admin, t.owner)])
        got = members(t.owner.token, t.wid) or members(t.admin.token, t.wid) or {}
        owners = [u for u, role in got.items() if role == "owner"]
        if len(owners) != 1:
            break
        # make two owners again for the next round
        keeper = t.owner if got.get(t.owner.user["id"]) == "owner" else t.admin
        other = t.admin if keeper is t.owner else t.owner
        api("PATCH", "/workspaces/%s/members/%s" % (t.wid, other.user["id"]), {"role": "owner"}, token=keeper.token)
    check("test_workspaces_concurrent_demotions_leave_exactly_one_owner", len(owners) == 1,
          (got, [repr(x) for x in res]))


def test_folders():
    t = Team("folders")
    o, m, x = t.owner, t.member, t.outsider
    r = api("POST", "/workspaces/%s/folders" % t.wid, {"name": "Clients"}, token=m.token)
    f = r.body if isinstance(r.body, dict) else {}
    check("test_workspaces_member_creates_a_folder",
          r.status == 201 and re.match(UUID_RE, f.get("id") or "") and f.get("name") == "Clients"
          and f.get("workspaceId") == t.wid, r)
    fid = f.get("id")
    r = api("POST", "/workspaces/%s/folders" % t.wid, {"name": "Clients"}, token=o.token)
    check("test_workspaces_duplicate_folder_name_is_409", is_error(r, 409, "conflict"), r)
    r = api("POST", "/workspaces/%s/folders" % t.wid, {"name": " "}, token=o.token)
    check("test_workspaces_blank_folder_name_is_400", is_error(r, 400, "validation_failed", "name"), r)
    r = api("POST", "/workspaces/%s/folders" % t.wid, {"name": "Mine"}, token=x.token)
    check("test_workspaces_non_member_cannot_create_folders_403", is_error(r, 403, "forbidden"), r)
    r = api("POST", "/workspaces/%s/folders" % t.wid, {"name": "Archive"}, token=o.token)
    fid2 = created_id(r)
    r = api("GET", "/workspaces/%s/folders" % t.wid, token=m.token)
    check("test_workspaces_folders_listed_by_name",
          r.status == 200 and [f.get("name") for f in items_of(r.body) or []] == ["Archive", "Clients"], r)
    r = api("GET", "/workspaces/%s/folders" % t.wid, token=x.token)
    check("test_workspaces_folder_list_by_non_member_is_403", is_error(r, 403, "forbidden"), r)
    r = api("PATCH", "/folders/%s" % fid, {"name": "Customers"}, token=m.token)
    check("test_workspaces_rename_folder", r.status == 200 and r.body.get("name") == "Customers", r)
    r = api("PATCH", "/folders/%s" % fid, {"name": "Archive"}, token=m.token)
    check("test_workspaces_rename_folder_to_a_taken_name_is_409", is_error(r, 409, "conflict"), r)
    r = api("PATCH", "/folders/%s" % fid, {"name": "x"}, token=x.token)
    check("test_workspaces_rename_folder_by_non_member_is_403", is_error(r, 403, "forbidden"), r)
    r = api("PATCH", "/folders/%s" % UNKNOWN_ID, {"name": "x"}, token=o.token)
    check("test_workspaces_rename_unknown_folder_is_404", is_error(r, 404, "not_found"), r)

    # projects in folders; moving between folders of the workspace only
    p1 = create_in(m, t.wid, "In folder", folderId=fid)
    check("test_workspaces_create_project_in_a_folder", p1.status == 201 and p1.body.get("folderId") == fid, p1)
    p2 = create_in(m, t.wid, "At root")
    pid1, pid2 = p1.body.get("id"), p2.body.get("id")
    r = api("PATCH", "/projects/%s" % pid2, {"folderId": fid2}, token=m.token)
    check("test_workspaces_move_project_into_a_folder", r.status == 200 and r.body.get("folderId") == fid2, r)
    r = api("PATCH", "/projects/%s" % pid2, {"folderId": None}, token=m.token)
    check("test_workspaces_move_project_to_the_root", r.status == 200 and r.body.get("folderId") is None, r)
    other = api("POST", "/workspaces/%s/folders" % o.workspace_id, {"name": "Elsewhere"}, token=o.token)
    ofid = other.body.get("id") if other.status == 201 else UNKNOWN_ID
    r = api("PATCH", "/projects/%s" % pid2, {"folderId": ofid}, token=o.token)
    check("test_workspaces_move_into_a_folder_of_another_workspace_is_400_folderid",
          is_error(r, 400, "validation_failed", "folderId"), r)
    r = create_in(o, t.wid, "x", folderId=ofid)
    check("test_workspaces_create_in_a_folder_of_another_workspace_is_400_folderid",
          is_error(r, 400, "validation_failed", "folderId"), r)
    check("test_workspaces_folder_filter_lists_the_folders_projects",
          list_all(m.token, workspaceId=t.wid, folderId=fid) == [pid1])
    check("test_workspaces_folder_filter_null_lists_the_root",
          list_all(m.token, workspaceId=t.wid, folderId="null") == [pid2])

    # deleting a folder moves its projects (soft-deleted ones too) to the root
    p3 = create_in(m, t.wid, "Deleted in folder", folderId=fid)
    pid3 = p3.body.get("id")
    api("DELETE", "/projects/%s" % pid3, token=m.token)
    r = api("DELETE", "/folders/%s" % fid, token=x.token)
    check("test_workspaces_delete_folder_by_non_member_is_403", is_error(r, 403, "forbidden"), r)
    r = api("DELETE", "/folders/%s" % fid, token=m.token)
    check("test_workspaces_delete_folder_answers_200_with_moved_count",
          r.status == 200 and r.body.get("deleted") is True and r.body.get("projectsMoved") == 2, r)
    r = api("GET", "/projects/%s" % pid1, token=m.token)
    check("test_workspaces_deleting_a_folder_keeps_its_projects_at_the_root",
          r.status == 200 and r.body.get("folderId") is None, r)
    r = api("POST", "/projects/%s/restore" % pid3, token=m.token)
    check("test_workspaces_soft_deleted_project_of_a_deleted_folder_restores_to_the_root",
          r.status == 200 and r.body.get("folderId") is None, r)
    check("test_workspaces_root_filter_after_folder_delete",
          sorted(list_all(m.token, workspaceId=t.wid, folderId="null") or []) == sorted([pid1, pid2, pid3]))
    r = api("DELETE", "/folders/%s" % fid, token=m.token)
    check("test_workspaces_delete_folder_twice_is_404", is_error(r, 404, "not_found"), r)
    r = api("GET", "/workspaces/%s/folders" % t.wid, token=m.token)
    check("test_workspaces_deleted_folder_is_gone_from_the_list",
          [f.get("id") for f in items_of(r.body) or []] == [fid2], r)


def main():
    test_workspaces_crud()
    test_members_and_roles()
    test_two_owners_demote_each_other_concurrently()
    test_folders()


if __name__ == "__main__":
    try:
        main()
    except Exception:
        import traceback
        check("test_workspaces ran to the end", False, traceback.format_exc())
    sys.exit(finish())
