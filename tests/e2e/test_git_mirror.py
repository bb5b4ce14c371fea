#!/usr/bin/env python3
# test_git_mirror.py: a project's mirror on a forge (the forge double): the remote set and shown without its token, every new version pushed by svc-worker, Push now, a fast-forward pull, divergence refused with both heads, a new branch, and the errors
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from svclib import (UNKNOWN_ID, api, check, create_project, finish, is_error, setting, signup, sql,  # noqa: E402
                    versions)
from gitlib import LOOP_HOST, Forge  # noqa: E402


def wait_head(forge, repo, sha, timeout=60):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if forge.head(repo) == sha:
            return True
        time.sleep(0.5)
    return False


def main():
    a = signup(tag="mirror")
    p = create_project(a, "blank")
    if p.status != 201:
        check("test_git_mirror_setup", False, p)
        return finish()
    pid = p.body["id"]
    forge = Forge()
    try:
        run(a, pid, forge)
        dirty_case(a, forge)
    finally:
        forge.stop()
    return finish()


def dirty_case(a, forge):
    """A pull while the working tree holds a change not committed yet (collaborative edits before their
    debounced commit): the change is saved as a version first, so the pull is a divergence (409), never a
    500 nor a lost edit."""
    pid = create_project(a, "blank").body["id"]
    base = "/projects/%s/git" % pid
    forge.make_repo("dirty-mirror", [{"README.md": "forge side\n"}])
    os.system("git --git-dir %s branch -q -m main other" % forge.path("dirty-mirror"))
    api("PUT", base + "/remote", {"url": forge.url("dirty-mirror"), "username": forge.user,
                                  "token": forge.password}, token=a.token)
    api("POST", base + "/push", {}, token=a.token)
    forge.commit_on("dirty-mirror", {"index.html": "<p>forge</p>\n"})
    with open(os.path.join(setting("SVC_DATA_DIR"), "projects", pid, "index.html"), "w") as f:
        f.write("<p>svc, not committed yet</p>\n")
    r = api("POST", base + "/pull", token=a.token)
    vs = versions(a, pid)
    check("test_git_mirror_pull_uncommitted_change_is_saved_then_409",
          is_error(r, 409, "conflict") and vs[0]["message"].startswith("Save before a pull"), (r, vs[:2]))
    f = api("GET", "/projects/%s/files/index.html" % pid, token=a.token)
    check("test_git_mirror_pull_uncommitted_change_kept", f.status == 200 and "not committed yet" in f.body, f)


def run(a, pid, forge):
    forge.make_repo("private-mirror", [{"README.md": "forge side\n"}])
    # an empty remote branch to start with: the repository has only another branch
    os.system("git --git-dir %s branch -q -m main other" % forge.path("private-mirror"))
    base = "/projects/%s/git" % pid

    r = api("GET", base + "/remote", token=a.token)
    check("test_git_mirror_get_none", r.status == 200 and r.body.get("remote") is None, r)
    r = api("PUT", base + "/remote", {"url": forge.url("private-mirror"), "username": forge.user,
                                      "token": forge.password}, token=a.token)
    ok = r.status == 200 and isinstance(r.body.get("remote"), dict)
    check("test_git_mirror_put_200", ok, r)
    check("test_git_mirror_token_never_returned", forge.password not in r.raw.decode() and
          r.body.get("remote", {}).get("hasToken") is True, r)
    stored = sql("SELECT token_sealed FROM project_git_remotes WHERE project_id = '%s'" % pid)
    check("test_git_mirror_token_sealed_at_rest", stored.strip() and forge.password not in stored, stored)
    audit = sql("SELECT action, details FROM integration_audit WHERE resource_id = '%s'" % pid)
    check("test_git_mirror_audited", "git.remote.set" in audit and forge.password not in audit, audit)

    # Push now: main goes to the remote's main
    r = api("POST", base + "/push", {}, token=a.token)
    head = versions(a, pid)[0]["sha"]
    check("test_git_mirror_push_now", r.status == 200 and forge.head("private-mirror") == head, (r, forge.head("private-mirror")))

    # every new version is pushed by svc-worker
    r = api("PUT", "/projects/%s/files/page.html" % pid, {"content": "<p>v2</p>\n"}, token=a.token)
    head = versions(a, pid)[0]["sha"]
    check("test_git_mirror_new_version_pushed", r.status in (200, 201) and wait_head(forge, "private-mirror", head),
          forge.head("private-mirror"))
    time.sleep(1)
    r = api("GET", base + "/remote", token=a.token)
    last = (r.body.get("remote") or {}).get("lastPush") or {}
    check("test_git_mirror_last_push_shown", last.get("ok") is True and last.get("sha") == head and last.get("at"), r)
    r = api("POST", "/projects/%s/versions/%s/checkout" % (pid, versions(a, pid)[-1]["sha"]), token=a.token)
    head = versions(a, pid)[0]["sha"]
    check("test_git_mirror_checkout_pushed", r.status == 200 and wait_head(forge, "private-mirror", head))

    # pull: up to date, then a fast-forward of a commit made on the forge
    r = api("POST", base + "/pull", token=a.token)
    check("test_git_mirror_pull_up_to_date", r.status == 200 and r.body.get("result") == "up-to-date", r)
    theirs = forge.commit_on("private-mirror", {"from-forge.txt": "made on the forge\n"})
    r = api("POST", base + "/pull", token=a.token)
    check("test_git_mirror_pull_fast_forward", r.status == 200 and r.body.get("result") == "fast-forward" and
          r.body.get("sha") == theirs and versions(a, pid)[0]["sha"] == theirs, r)
    f = api("GET", "/projects/%s/files/from-forge.txt" % pid, token=a.token)
    check("test_git_mirror_pull_working_tree", f.status == 200 and "made on the forge" in f.body, f)

    # divergence: both sides commit; pull is refused naming both heads, and the push records the refusal
    forge.commit_on("private-mirror", {"forge-only.txt": "forge\n"})
    api("PUT", "/projects/%s/files/svc-only.txt" % pid, {"content": "svc\n"}, token=a.token)
    ours = versions(a, pid)[0]["sha"]
    theirs = forge.head("private-mirror")
    r = api("POST", base + "/pull", token=a.token)
    check("test_git_mirror_diverged_409", is_error(r, 409, "conflict") and ours[:12] in r.body.get("message", "") and
          theirs[:12] in r.body.get("message", ""), r)
    check("test_git_mirror_diverged_changes_nothing", versions(a, pid)[0]["sha"] == ours)
    r = api("POST", base + "/push", {}, token=a.token)
    check("test_git_mirror_push_diverged_409", is_error(r, 409, "conflict"), r)
    r = api("GET", base + "/remote", token=a.token)
    last = (r.body.get("remote") or {}).get("lastPush") or {}
    check("test_git_mirror_last_push_failed_shown", last.get("ok") is False and last.get("message"), r)
    # svc's main to a new branch of the remote
    r = api("POST", base + "/push", {"branch": "svc-main"}, token=a.token)
    check("test_git_mirror_push_new_branch", r.status == 200 and forge.head("private-mirror", "svc-main") == ours,
          (r, forge.head("private-mirror", "svc-main")))
    logs = os.path.dirname(setting("SVC_AUTH_LOG") or "/nonexistent")
    leaked = [n for n in (os.listdir(logs) if os.path.isdir(logs) else [])
              if os.path.isfile(os.path.join(logs, n)) and
              forge.password.encode() in open(os.path.join(logs, n), "rb").read()]
    check("test_git_mirror_token_not_in_logs", os.path.isdir(logs) and not leaked, leaked)
    # nor anywhere in the project's repository (.git/config, FETCH_HEAD, reflogs): git got it through its environment
    repo = os.path.join(setting("SVC_DATA_DIR") or "/nonexistent", "projects", pid)
    in_repo = [os.path.join(d, n) for d, _, names in os.walk(repo) for n in names
               if forge.password.encode() in open(os.path.join(d, n), "rb").read()]
    check("test_git_mirror_token_not_in_the_repository", os.path.isdir(os.path.join(repo, ".git")) and not in_repo,
          (repo, in_repo))

    # errors
    for name, url in (("http", "http://git.example.com/x.git"), ("loopback", forge.url("x", host=LOOP_HOST)),
                      ("loopback_address", "https://127.0.0.1:%d/x.git" % forge.port),
                      ("credentials", "https://u:p@git.example.com/x.git")):
        r = api("PUT", base + "/remote", {"url": url, "token": "t"}, token=a.token)
        check("test_git_mirror_put_%s_400" % name, is_error(r, 400, "validation_failed", "url"), r)
    r = api("PUT", base + "/remote", {"url": forge.url("x")}, token=a.token)
    check("test_git_mirror_put_no_token_400", is_error(r, 400, "validation_failed", "token"), r)
    r = api("PUT", base + "/remote", {"url": forge.url("x"), "token": "t", "branch": "../x"}, token=a.token)
    check("test_git_mirror_put_bad_branch_400", is_error(r, 400, "validation_failed", "branch"), r)
    r = api("POST", base + "/push", {"branch": "-f"}, token=a.token)
    check("test_git_mirror_push_bad_branch_400", is_error(r, 400, "validation_failed", "branch"), r)
    b = signup(tag="mirror-other")
    for m, path, body in (("GET", "/remote", None), ("PUT", "/remote", {"url": forge.url("x"), "token": "t"}),
                          ("DELETE", "/remote", None), ("POST", "/push", {}), ("POST", "/pull", None)):
        r = api(m, base + path, body, token=b.token)
        check("test_git_mirror_stranger_%s_%s" % (m.lower(), path.strip("/")), r.status in (403, 404), r)
        r = api(m, "/projects/%s/git%s" % (UNKNOWN_ID, path), body, token=a.token)
        check("test_git_mirror_unknown_%s_%s_404" % (m.lower(), path.strip("/")), is_error(r, 404, "not_found"), r)
        r = api(m, base + path, body)
        check("test_git_mirror_anonymous_%s_%s_401" % (m.lower(), path.strip("/")), r.status == 401, r)
    r = api("DELETE", base + "/remote", token=a.token)
    check("test_git_mirror_delete_204", r.status == 204, r)
    r = api("DELETE", base + "/remote", token=a.token)
    check("test_git_mirror_delete_again_404", is_error(r, 404, "not_found"), r)
    for m, path in (("POST", "/push"), ("POST", "/pull")):
        r = api(m, base + path, {} if path == "/push" else None, token=a.token)
        check("test_git_mirror_no_remote_%s_404" % path.strip("/"), is_error(r, 404, "not_found"), r)


if __name__ == "__main__":
    sys.exit(main())
