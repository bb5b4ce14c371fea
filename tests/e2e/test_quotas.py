#!/usr/bin/env python3
# test_quotas.py: per-workspace quotas (issue 17, finding 7; docs/api.md "Quotas"): the number of projects
# (403 quota_exceeded), the size of a project's repository (413 on a file write or a direct save) and of its
# published site (413 on deploy), each refused with nothing half-written; and the bytes of all of a
# workspace's projects together (SVC_QUOTA_WORKSPACE_BYTES, issue 25 item 15).
#
# The test stack gives the business plan small quotas (svc-dev: SVC_QUOTA_*_BUSINESS): 3 projects, 400 000
# bytes of repository, 100 000 bytes of site, 1 000 000 bytes for a workspace; this test puts its own
# workspaces on that plan.
import base64
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from agentlib import send  # noqa: E402
from svclib import (api, check, created_id, default_chat_id, finish, is_error, items_of, setting, signup,  # noqa: E402
                    site_get, types_of)
from wslib import create_in, svc_admin  # noqa: E402

PROJECTS = int(setting("SVC_QUOTA_PROJECTS_BUSINESS") or 3)
REPO = int(setting("SVC_QUOTA_REPO_BYTES_BUSINESS") or 400000)
SITE = int(setting("SVC_QUOTA_SITE_BYTES_BUSINESS") or 100000)
WORKSPACE = int(setting("SVC_QUOTA_WORKSPACE_BYTES_BUSINESS") or 1000000)


def noise(n, seed):
    """n characters of incompressible text (base64 of seeded random bytes)."""
    rnd = random.Random(seed)
    return base64.b64encode(bytes(rnd.getrandbits(8) for _ in range(n * 3 // 4 + 3))).decode()[:n]


def project_ids(acct):
    r = api("GET", "/projects?workspaceId=%s&limit=100" % acct.workspace_id, token=acct.token)
    return sorted(p["id"] for p in (items_of(r.body) or []))


def versions(acct, pid):
    return items_of(api("GET", "/projects/%s/versions" % pid, token=acct.token).body) or []


def dir_bytes(pid):
    """The bytes of the regular files of project pid's directory, .git included (as lib/project/quota.c counts)."""
    total = 0
    for root, _, files in os.walk(os.path.join(setting("SVC_DATA_DIR"), "projects", pid)):
        for f in files:
            p = os.path.join(root, f)
            if os.path.isfile(p) and not os.path.islink(p):
                total += os.lstat(p).st_size
    return total


def workspace_total():
    """Projects each within their own quota cannot together take a workspace past SVC_QUOTA_WORKSPACE_BYTES."""
    acct = signup(tag="quota-ws")
    rc, out = svc_admin("set-plan", acct.workspace_id, "business")
    check("test_quotas_workspace_total_on_business_plan", rc == 0, out)
    a, b, c = (created_id(create_in(acct, acct.workspace_id, "Total %d" % i, template="blank")) for i in range(3))
    ok = True
    for i, pid in enumerate((a, b)):
        # about 300 000 bytes each with its history: under the project's 400 000
        ok = ok and api("PUT", "/projects/%s/files/big.txt" % pid, {"content": noise(190000, 10 + i)},
                        token=acct.token).status == 201
        # a second write measures the project again, its big file's history included
        ok = ok and api("PUT", "/projects/%s/files/touch.txt" % pid, {"content": "x"}, token=acct.token).status == 201
    check("test_quotas_workspace_total_two_projects_fill_up_201", ok)
    used, c_now = dir_bytes(a) + dir_bytes(b), dir_bytes(c)
    n = WORKSPACE - used - c_now + 30000
    check("test_quotas_workspace_total_write_fits_the_project", 0 < n and c_now + n < REPO, (used, c_now, n))
    r = api("PUT", "/projects/%s/files/big.txt" % c, {"content": noise(n, 12)}, token=acct.token)
    check("test_quotas_workspace_total_over_413", is_error(r, 413, "payload_too_large"), r)
    msg = (r.body or {}).get("message", "")
    check("test_quotas_workspace_total_413_names_the_workspace_quota", str(WORKSPACE) in msg and "workspace" in msg,
          msg)
    r = api("GET", "/projects/%s/files/big.txt" % c, token=acct.token)
    check("test_quotas_workspace_total_refused_file_not_written", is_error(r, 404, "not_found"), r)
    # writes that fit go in, until less than 60 000 bytes are left (each commit's history counts too)
    fits, left = [], WORKSPACE - used - dir_bytes(c)
    for i in range(8):
        if left < 60000:
            break
        size = min(left - 50000, 60000)
        fits.append(api("PUT", "/projects/%s/files/fits%d.txt" % (c, i), {"content": noise(size, 20 + i)},
                        token=acct.token).status)
        left = WORKSPACE - used - dir_bytes(c)
    check("test_quotas_workspace_total_what_fits_201", fits and all(st == 201 for st in fits) and left < 60000,
          (fits, left))
    # a direct save that the project's own quota allows but the workspace's does not
    r = api("POST", "/direct-save/%s" % c, {"filePath": "index.html", "patches": [
        {"selector": "body", "property": "text", "value": noise(left + 20000, 14)}]}, token=acct.token)
    check("test_quotas_workspace_total_direct_save_over_413", is_error(r, 413, "payload_too_large") and
          "workspace" in (r.body or {}).get("message", ""), r)
    # a project deleted for good gives its bytes back
    api("DELETE", "/projects/%s?hard=true" % a, token=acct.token)
    r = api("POST", "/direct-save/%s" % c, {"filePath": "index.html", "patches": [
        {"selector": "body", "property": "text", "value": noise(left + 20000, 14)}]}, token=acct.token)
    check("test_quotas_workspace_total_hard_delete_makes_room_200", r.status == 200, r)


def main():
    workspace_total()
    acct = signup(tag="quota")
    rc, out = svc_admin("set-plan", acct.workspace_id, "business")
    check("test_quotas_workspace_on_business_plan", rc == 0, out)

    # ---- the number of projects
    pids = []
    for i in range(PROJECTS):
        pids.append(created_id(create_in(acct, acct.workspace_id, "Quota %d" % i, template="blank")))
    check("test_quotas_projects_up_to_the_quota_201", all(pids) and len(pids) == PROJECTS, pids)
    before = project_ids(acct)
    r = create_in(acct, acct.workspace_id, "One too many", template="blank")
    check("test_quotas_projects_over_quota_403", is_error(r, 403, "quota_exceeded"), r)
    r = api("POST", "/projects/%s/duplicate" % pids[0], {}, token=acct.token)
    check("test_quotas_projects_duplicate_over_quota_403", is_error(r, 403, "quota_exceeded"), r)
    check("test_quotas_projects_nothing_created", project_ids(acct) == before, (before, project_ids(acct)))
    r = api("POST", "/workspaces/%s/projects" % acct.workspace_id,
            {"name": "Prompted", "template": "blank", "prompt": "hello"}, token=acct.token)
    check("test_quotas_projects_with_prompt_over_quota_403", is_error(r, 403, "quota_exceeded"), r)
    api("DELETE", "/projects/%s" % pids[2], token=acct.token)
    r = create_in(acct, acct.workspace_id, "After a soft delete", template="blank")
    check("test_quotas_projects_trash_still_counts_403", is_error(r, 403, "quota_exceeded"), r)
    api("DELETE", "/projects/%s?hard=true" % pids[2], token=acct.token)
    r = create_in(acct, acct.workspace_id, "After a hard delete", template="blank")
    check("test_quotas_projects_hard_delete_makes_room_201", r.status == 201, r)
    pids[2] = created_id(r)

    # ---- the repository of a project: files API and direct save
    pid = pids[0]
    r = api("PUT", "/projects/%s/files/big1.txt" % pid, {"content": noise(150000, 1)}, token=acct.token)
    check("test_quotas_repo_write_under_quota_201", r.status == 201, r)
    n_versions = len(versions(acct, pid))
    r = api("PUT", "/projects/%s/files/big2.txt" % pid, {"content": noise(200000, 2)}, token=acct.token)
    check("test_quotas_repo_write_over_quota_413", is_error(r, 413, "payload_too_large"), r)
    check("test_quotas_repo_413_names_the_quota", str(REPO) in (r.body or {}).get("message", ""), r)
    r = api("GET", "/projects/%s/files/big2.txt" % pid, token=acct.token)
    check("test_quotas_repo_refused_file_not_written", is_error(r, 404, "not_found"), r)
    check("test_quotas_repo_refused_write_no_commit", len(versions(acct, pid)) == n_versions,
          (n_versions, len(versions(acct, pid))))
    r = api("PUT", "/projects/%s/files/big1.txt" % pid, {"content": "small now", "overwrite": True},
            token=acct.token)
    check("test_quotas_repo_shrinking_overwrite_200", r.status == 200, r)
    # the history keeps the big file: a large write that would fit without it is refused
    r = api("PUT", "/projects/%s/files/big3.txt" % pid, {"content": noise(300000, 3)}, token=acct.token)
    check("test_quotas_repo_history_counts_413", is_error(r, 413, "payload_too_large"), r)
    # a write just under the quota is allowed; its commit takes the project over, so the next growth is refused
    r = api("PUT", "/projects/%s/files/filler.txt" % pid, {"content": noise(200000, 6)}, token=acct.token)
    check("test_quotas_repo_write_just_under_quota_201", r.status == 201, r)
    r = api("POST", "/direct-save/%s" % pid, {"filePath": "index.html", "patches": [
        {"selector": "body", "property": "text", "value": noise(2000, 4)}]}, token=acct.token)
    check("test_quotas_direct_save_over_quota_413", is_error(r, 413, "payload_too_large"), r)
    r = api("GET", "/projects/%s/files/index.html" % pid, token=acct.token)
    check("test_quotas_direct_save_refused_file_untouched",
          r.status == 200 and noise(2000, 4)[:64] not in str(r.body), r.status)
    # the agent's write_file over the quota is a tool error the model sees; the turn goes on
    events, _, err = send(acct, pid, default_chat_id(acct, pid), "write a file please")
    errors = [e for e in events if e.get("type") == "tool.error"]
    check("test_quotas_agent_write_over_quota_is_a_tool_error",
          err is None and errors and "quota" in str(errors[0].get("error")), (err, errors[:1]))
    check("test_quotas_agent_turn_still_completes", types_of(events)[-1:] == ["session.task_complete"],
          types_of(events))
    r = api("GET", "/projects/%s/files/notes/hello.txt" % pid, token=acct.token)
    check("test_quotas_agent_refused_file_not_written", is_error(r, 404, "not_found"), r)
    r = api("DELETE", "/projects/%s/files/filler.txt" % pid, token=acct.token)
    check("test_quotas_repo_delete_allowed_over_quota", r.status in (200, 204), r)
    r = api("POST", "/direct-save/%s" % pid, {"filePath": "index.html", "patches": [
        {"selector": "body", "property": "style.color", "value": "red"}]}, token=acct.token)
    check("test_quotas_direct_save_small_edit_under_quota_200", r.status == 200, r)

    # ---- the published site of a project
    pid = pids[1]
    r = api("POST", "/deploy/%s" % pid, token=acct.token)
    check("test_quotas_site_small_publish_200", r.status == 200, r)
    slug = (r.body or {}).get("slug")
    r = api("PUT", "/projects/%s/files/payload.txt" % pid, {"content": noise(SITE + 20000, 5)}, token=acct.token)
    check("test_quotas_site_file_fits_the_repository_201", r.status == 201, r)
    r = api("POST", "/deploy/%s" % pid, token=acct.token)
    check("test_quotas_site_over_quota_413", is_error(r, 413, "payload_too_large"), r)
    check("test_quotas_site_413_names_the_quota", str(SITE) in (r.body or {}).get("message", ""), r)
    deps = items_of(api("GET", "/projects/%s/deployments" % pid, token=acct.token).body) or []
    check("test_quotas_site_refused_deployment_recorded_failed",
          bool(deps) and deps[0].get("status") == "failed" and str(SITE) in (deps[0].get("error") or ""), deps[:1])
    if slug:
        s = site_get(slug, "/payload.txt")
        check("test_quotas_site_live_site_unchanged", s.status == 404 and site_get(slug, "/").status == 200,
              s.status)
    r = api("DELETE", "/projects/%s/files/payload.txt" % pid, token=acct.token)
    r = api("POST", "/deploy/%s" % pid, token=acct.token)
    check("test_quotas_site_under_quota_again_200", r.status == 200, r)

    # ---- other plans keep the instance's quotas (default 100 projects): another workspace is not limited
    other = signup(tag="quota-free")
    ok = all(create_in(other, other.workspace_id, "Free %d" % i, template="blank").status == 201
             for i in range(PROJECTS + 1))
    check("test_quotas_free_plan_not_limited_by_business_quota", ok)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
