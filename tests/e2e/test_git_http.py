#!/usr/bin/env python3
# test_git_http.py: clone, fetch and push a project over Git's smart HTTP (/git/<projectId>.git, svc-git) with the real git CLI: tokens and scopes, a push as a change to the project, what a push may not do, 401/403/404
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from svclib import (BASE_URL, DATA_DIR, DOMAIN, HTTP_PORT, UNKNOWN_ID, api, check, create_project,  # noqa: E402
                    created_id, default_chat_id, finish, request, setting, signup, sql, versions)
from agentlib import reset_double, send, send_in_thread  # noqa: E402

TMP = tempfile.mkdtemp(prefix="svc-git-e2e-")
HOME = os.path.join(TMP, "home")
os.makedirs(HOME)
GIT_ENV = dict(os.environ, HOME=HOME, GIT_CONFIG_NOSYSTEM="1", GIT_TERMINAL_PROMPT="0", LC_ALL="C",
               GIT_AUTHOR_NAME="Ada Lovelace", GIT_AUTHOR_EMAIL="ada@example.test",
               GIT_COMMITTER_NAME="Ada Lovelace", GIT_COMMITTER_EMAIL="ada@example.test")
for k in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"):
    GIT_ENV.pop(k, None)


def git(*args, cwd=None, timeout=120):
    """Runs the git CLI; returns (exit status, stdout + stderr as text)."""
    p = subprocess.run(["git"] + list(args), cwd=cwd, env=GIT_ENV, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       timeout=timeout)
    return p.returncode, p.stdout.decode("utf-8", "replace")


def token(acct, scopes):
    r = api("POST", "/auth/tokens", {"name": "git " + " ".join(scopes), "scopes": scopes}, token=acct.token)
    return created_id(r, "token")


def url(pid, tok=None, user="git"):
    u = urllib.parse.urlsplit(BASE_URL)
    cred = "%s:%s@" % (user, tok) if tok else ""
    return "%s://%s%s%s/git/%s.git" % (u.scheme, cred, u.netloc, u.path, pid)


def clone(pid, tok, name):
    d = os.path.join(TMP, name)
    st, out = git("clone", url(pid, tok), d)
    return (d if st == 0 else None), out


def main_sha(acct, pid):
    r = api("GET", "/projects/%s/branches" % pid, token=acct.token)
    for b in (r.body.get("items") if isinstance(r.body, dict) else None) or []:
        if b.get("main"):
            return b.get("sha")
    return None


def on_disk(pid, path):
    try:
        with open(os.path.join(DATA_DIR, "projects", pid, path), "rb") as f:
            return f.read()
    except OSError:
        return None


def commit_file(d, path, content, message):
    full = os.path.join(d, path)
    os.makedirs(os.path.dirname(full), exist_ok=True)
    with open(full, "w") as f:
        f.write(content)
    git("add", path, cwd=d)
    return git("commit", "-q", "-m", message, cwd=d)


def test_clone_and_push(a, pid, read_tok, write_tok):
    d, out = clone(pid, read_tok, "read")
    check("test_git_http_clone_with_a_git_read_token", d is not None and os.path.exists(os.path.join(d, "index.html")), out)
    if not d:
        return None
    st, log = git("log", "--format=%H", cwd=d)
    listed = [v.get("sha") for v in versions(a, pid)]
    check("test_git_http_clone_has_the_versions_as_commits", st == 0 and log.split() == listed, (log, listed))

    commit_file(d, "hello.txt", "hello from git\n", "Add hello.txt from git")
    st, out = git("push", "origin", "main", cwd=d)
    check("test_git_http_push_with_a_read_token_is_refused", st != 0 and "403" in out, out)
    check("test_git_http_refused_push_changes_nothing", on_disk(pid, "hello.txt") is None and
          versions(a, pid)[0].get("sha") == listed[0], out)

    d2, out = clone(pid, write_tok, "write")
    check("test_git_http_clone_with_a_git_write_token", d2 is not None, out)
    if not d2:
        return None
    marker = "pushed-%d" % time.time_ns()
    commit_file(d2, "hello.txt", marker + "\n", "Add hello.txt from git")
    before = api("GET", "/projects/%s" % pid, token=a.token).body.get("updatedAt")
    started = sql("SELECT DATE_FORMAT(UTC_TIMESTAMP(3), '%Y-%m-%d %H:%i:%s.%f')").strip()
    st, out = git("push", "origin", "main", cwd=d2)
    check("test_git_http_push_with_a_git_write_token", st == 0, out)
    after = api("GET", "/projects/%s" % pid, token=a.token).body.get("updatedAt")
    jobs = sql("SELECT COUNT(*) FROM jobs WHERE kind = 'thumbnail.regenerate' AND payload = '{\"projectId\":\"%s\"}' "
               "AND (state = 'queued' OR updated_at >= '%s')" % (pid, started)).strip()
    check("test_git_http_push_touches_the_project_and_renews_its_thumbnail",
          after and before and after > before and jobs not in ("", "0"), (before, after, jobs))
    v = versions(a, pid)
    top = v[0] if v else {}
    check("test_git_http_push_is_a_version_with_its_author_and_message",
          top.get("message", "").startswith("Add hello.txt from git") and top.get("author") == "Ada Lovelace" and
          top.get("authorEmail") == "ada@example.test", top)
    _, head = git("rev-parse", "HEAD", cwd=d2)
    check("test_git_http_push_moves_main", main_sha(a, pid) == head.strip() == top.get("sha"), (head, top))
    check("test_git_http_push_reaches_the_working_tree", on_disk(pid, "hello.txt") == (marker + "\n").encode(),
          on_disk(pid, "hello.txt"))
    r = api("GET", "/projects/%s/files/hello.txt" % pid, token=a.token)
    check("test_git_http_pushed_file_is_served_by_the_files_api", r.status == 200 and marker in r.raw.decode(), r)
    check_preview(a, pid, marker)
    return d2


def check_preview(a, pid, marker):
    r = api("GET", "/projects/%s/preview" % pid, token=a.token)
    label = urllib.parse.urlsplit(r.body.get("url", "")).hostname.split(".", 1)[0] if r.status == 200 else ""
    got = None
    for _ in range(50):
        got = request("GET", "http://127.0.0.1:%d/hello.txt" % HTTP_PORT, None,
                      {"Host": "%s.preview.%s:%d" % (label, DOMAIN, HTTP_PORT)})
        if got.status == 200 and marker in got.raw.decode("utf-8", "replace"):
            break
        time.sleep(0.2)
    check("test_git_http_pushed_file_is_served_by_the_preview",
          got is not None and got.status == 200 and marker in got.raw.decode("utf-8", "replace"), got)


def refused_push(a, pid, d, name, expect_re, prepare):
    """prepare(d) makes a local commit; its push must fail with git printing svc's message, and change nothing."""
    before = main_sha(a, pid)
    nv = len(versions(a, pid))
    git("reset", "-q", "--hard", "origin/main", cwd=d)
    prepare(d)
    st, out = git("push", "origin", "HEAD:main", cwd=d)
    check("test_git_http_push_refused_" + name, st != 0 and re.search(expect_re, out) is not None, out)
    check("test_git_http_push_refused_%s_changes_nothing" % name,
          main_sha(a, pid) == before and len(versions(a, pid)) == nv, (before, main_sha(a, pid)))
    git("reset", "-q", "--hard", "origin/main", cwd=d)


def symlink_commit(d):
    os.symlink("/etc/passwd", os.path.join(d, "passwd"))
    git("add", "passwd", cwd=d)
    git("commit", "-q", "-m", "a symlink", cwd=d)


def dotgit_commit(d):
    """A commit whose tree holds .git/hooks/post-update (git add refuses such a path: plumbing makes it)."""
    p = subprocess.run(["git", "hash-object", "-w", "--stdin"], cwd=d, env=GIT_ENV, input=b"#!/bin/sh\nid\n",
                       stdout=subprocess.PIPE)
    blob = p.stdout.decode().strip()

    def mktree(text):
        q = subprocess.run(["git", "mktree"], cwd=d, env=GIT_ENV, input=text.encode(), stdout=subprocess.PIPE)
        return q.stdout.decode().strip()
    hooks = mktree("100755 blob %s\tpost-update\n" % blob)
    dotgit = mktree("040000 tree %s\thooks\n" % hooks)
    _, ls = git("ls-tree", "HEAD", cwd=d)
    root = mktree(ls + "040000 tree %s\t.git\n" % dotgit)
    _, c = git("commit-tree", root, "-p", "HEAD", "-m", "a path under .git", cwd=d)
    git("reset", "-q", "--soft", c.strip(), cwd=d)


def test_refusals(a, pid, d):
    refused_push(a, pid, d, "symlink", r"remote: svc: passwd is a symlink", symlink_commit)
    # git's own fsck of the pushed objects (receive.fsckObjects) or svc's check: either says why
    refused_push(a, pid, d, "path_under_dot_git", r"remote: (svc: \.git is under \.git|.*hasDotgit: contains '\.git')",
                 dotgit_commit)

    # a non-fast-forward of main: the clone rewrites the last commit and forces
    def rewrite(dd):
        git("reset", "-q", "--hard", "HEAD~1", cwd=dd)
        commit_file(dd, "other.txt", "another history\n", "rewritten history")
    before = main_sha(a, pid)
    git("reset", "-q", "--hard", "origin/main", cwd=d)
    rewrite(d)
    st, out = git("push", "--force", "origin", "HEAD:main", cwd=d)
    check("test_git_http_push_refused_non_fast_forward", st != 0 and "main only moves forward" in out, out)
    check("test_git_http_push_refused_non_fast_forward_changes_nothing",
          main_sha(a, pid) == before and on_disk(pid, "other.txt") is None, out)
    # other branches may be pushed, forced too, and are listed; only main is the project
    st, out = git("push", "--force", "origin", "HEAD:refs/heads/experiment", cwd=d)
    r = api("GET", "/projects/%s/branches" % pid, token=a.token)
    names = [b.get("name") for b in (r.body.get("items") if isinstance(r.body, dict) else None) or []]
    check("test_git_http_other_branches_are_pushed_and_listed", st == 0 and names[:1] == ["main"] and
          "experiment" in names and main_sha(a, pid) == before and on_disk(pid, "other.txt") is None, (out, r))
    # main's svc.data.json must be a valid declaration of the apps' backend: an invalid one is refused with
    # the parser's message naming the line, and a valid one goes in (docs/git.md "What a push may not do")
    broken = '{"collections": {"todos": {"fields": {"title": {"type": "strin"}}}}}\n'
    refused_push(a, pid, d, "invalid_svc_data_json", r"remote: svc: svc\.data\.json line \d+",
                 lambda dd: commit_file(dd, "svc.data.json", broken, "a broken backend"))
    check("test_git_http_invalid_svc_data_json_is_not_in_the_tree", on_disk(pid, "svc.data.json") is None)
    git("reset", "-q", "--hard", "origin/main", cwd=d)
    valid = '{"collections": {"todos": {"fields": {"title": {"type": "string", "max": 200}}}}}\n'
    commit_file(d, "svc.data.json", valid, "a backend")
    st, out = git("push", "origin", "HEAD:main", cwd=d)
    check("test_git_http_valid_svc_data_json_is_pushed", st == 0 and on_disk(pid, "svc.data.json") == valid.encode(),
          (out, on_disk(pid, "svc.data.json")))
    git("reset", "-q", "--hard", "origin/main", cwd=d)


def test_sizes(a, pid, d):
    """A push past git's http.postBuffer goes chunked through the web server; a file over
    SVC_QUOTA_FILE_BYTES is refused."""
    git("reset", "-q", "--hard", "origin/main", cwd=d)
    blob = os.urandom(3 << 20)
    with open(os.path.join(d, "assets.bin"), "wb") as f:
        f.write(blob)
    git("add", "assets.bin", cwd=d)
    git("commit", "-q", "-m", "a 3 MiB file", cwd=d)
    st, out = git("push", "origin", "main", cwd=d)
    check("test_git_http_push_larger_than_the_post_buffer", st == 0 and on_disk(pid, "assets.bin") == blob, out)
    limit = int(setting("SVC_QUOTA_FILE_BYTES") or 8388608)

    def big(dd):
        with open(os.path.join(dd, "big.bin"), "wb") as f:
            f.write(os.urandom(limit + 1))
        git("add", "big.bin", cwd=dd)
        git("commit", "-q", "-m", "a file over the quota", cwd=dd)
    refused_push(a, pid, d, "file_over_quota_file_bytes",
                 r"remote: svc: big\.bin is %d bytes, over the largest file" % (limit + 1), big)


def test_branches_errors(a, b, pid):
    r = api("GET", "/projects/%s/branches" % UNKNOWN_ID, token=a.token)
    check("test_git_http_branches_unknown_project_404", r.status == 404, r)
    r = api("GET", "/projects/%s/branches" % pid, token=b.token)
    check("test_git_http_branches_of_a_project_not_visible_404", r.status in (403, 404), r)
    r = api("GET", "/projects/%s/branches" % pid)
    check("test_git_http_branches_anonymous_401", r.status == 401, r)
    r = api("GET", "/projects/%s/branches" % pid, token=a.token)
    items = r.body.get("items") if isinstance(r.body, dict) else None
    check("test_git_http_branches_lists_main", r.status == 200 and items and items[0].get("name") == "main" and
          items[0].get("main") is True and re.match(r"^[0-9a-f]{40}$", items[0].get("sha", "")) and
          items[0].get("sha") == versions(a, pid)[0].get("sha"), r)


def test_turns(a, pid, d):
    chat = default_chat_id(a, pid)
    reset_double()
    th, _, started = send_in_thread(a, pid, chat, "very slow", until_delta=True, daemon=True)
    started.wait(20)
    commit_file(d, "during-turn.txt", "x\n", "during a turn")
    st, out = git("push", "origin", "main", cwd=d)
    check("test_git_http_push_refused_while_a_turn_runs",
          st != 0 and "the agent is working on this project; push again when its turn ends" in out, out)
    check("test_git_http_push_refused_while_a_turn_runs_changes_nothing", on_disk(pid, "during-turn.txt") is None, out)
    th.join(60)
    git("reset", "-q", "--hard", "origin/main", cwd=d)
    events, _, err = send(a, pid, chat, "write a file")
    st, out = git("pull", "-q", "--ff-only", "origin", "main", cwd=d)
    _, msg = git("log", "-1", "--format=%s", cwd=d)
    check("test_git_http_pull_brings_a_turns_commit",
          st == 0 and os.path.exists(os.path.join(d, "notes", "hello.txt")) and
          main_sha(a, pid) == git("rev-parse", "HEAD", cwd=d)[1].strip(), (out, msg, err))


def test_auth_errors(a, b, pid, read_tok):
    path = urllib.parse.urlsplit(url(pid)).path + "/info/refs?service=git-upload-pack"
    origin = "http://127.0.0.1:%d" % HTTP_PORT
    r = request("GET", origin + path)
    check("test_git_http_no_credential_401_basic_challenge",
          r.status == 401 and r.headers.get("www-authenticate", "").startswith('Basic realm="svc"'), r)
    bad = "svc_pat_" + "A" * 40
    r = request("GET", origin + path, None, {"Authorization": "Basic " + b64("git:" + bad)})
    check("test_git_http_wrong_token_401", r.status == 401 and "basic" in r.headers.get("www-authenticate", "").lower(), r)
    r = request("GET", origin + path, None, {"Authorization": "Basic " + b64("git:not-a-token")})
    check("test_git_http_malformed_password_401", r.status == 401, r)
    r = request("GET", origin + path, None, {"Authorization": "Basic " + b64("git:" + read_tok)})
    check("test_git_http_refs_with_a_token_200", r.status == 200 and
          r.headers.get("content-type") == "application/x-git-upload-pack-advertisement", r)
    r = request("GET", origin + path, None, {"Authorization": "Bearer " + a.token})
    check("test_git_http_session_may_fetch", r.status == 200, r)
    r = request("GET", origin + path, None, {"Cookie": "svc_access_token=" + a.token})
    check("test_git_http_session_cookie_may_fetch", r.status == 200, r)
    # the session cookie never pushes or fetches for another site: the router's cross-site check (403)
    post = urllib.parse.urlsplit(url(pid)).path + "/git-upload-pack"
    r = request("POST", origin + post, b"0000", {"Cookie": "svc_access_token=" + a.token, "Origin": "http://evil.example",
                                                 "Content-Type": "application/x-git-upload-pack-request"})
    check("test_git_http_cross_site_post_with_the_cookie_403", r.status == 403, r)
    other = token(b, ["git:write"])
    r = request("GET", origin + path, None, {"Authorization": "Basic " + b64("x:" + other)})
    check("test_git_http_project_not_visible_404", r.status == 404, r)
    st, out = git("clone", url(pid, other), os.path.join(TMP, "not-visible"))
    check("test_git_http_clone_of_a_project_not_visible_fails", st != 0 and ("404" in out or "not found" in out), out)
    unknown = urllib.parse.urlsplit(url(UNKNOWN_ID)).path + "/info/refs?service=git-upload-pack"
    r = request("GET", origin + unknown, None, {"Authorization": "Basic " + b64("x:" + read_tok)})
    check("test_git_http_unknown_project_404", r.status == 404, r)
    r = request("GET", origin + urllib.parse.urlsplit(url(pid)).path + "/HEAD", None,
                {"Authorization": "Basic " + b64("x:" + read_tok)})
    check("test_git_http_dumb_protocol_path_404", r.status == 404, r)
    r = request("GET", origin + urllib.parse.urlsplit(url(pid)).path + "/git-upload-pack", None,
                {"Authorization": "Basic " + b64("x:" + read_tok)})
    check("test_git_http_get_of_a_post_service_405", r.status == 405 and r.headers.get("allow") == "POST", r)
    proj_tok = token(a, ["projects:read"])
    r = request("GET", origin + path, None, {"Authorization": "Basic " + b64("x:" + proj_tok)})
    check("test_git_http_token_without_git_scope_403", r.status == 403, r)
    push_path = urllib.parse.urlsplit(url(pid)).path + "/info/refs?service=git-receive-pack"
    r = request("GET", origin + push_path, None, {"Authorization": "Basic " + b64("x:" + read_tok)})
    check("test_git_http_read_token_may_not_push_403", r.status == 403, r)


def b64(s):
    import base64
    return base64.b64encode(s.encode()).decode()


def main():
    a = signup(tag="git")
    b = signup(tag="git-other")
    pid = created_id(create_project(a, "blank"))
    read_tok = token(a, ["git:read"])
    write_tok = token(a, ["git:write"])
    if not (pid and read_tok and write_tok):
        check("test_git_http_setup", False, (pid, read_tok, write_tok))
        return finish()
    test_auth_errors(a, b, pid, read_tok)
    d = test_clone_and_push(a, pid, read_tok, write_tok)
    if d:
        test_refusals(a, pid, d)
        test_sizes(a, pid, d)
        test_turns(a, pid, d)
    test_branches_errors(a, b, pid)
    shutil.rmtree(TMP, ignore_errors=True)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
