#!/usr/bin/env python3
# test_git_import.py: POST /workspaces/:wid/projects/import: from a Git URL (the forge double, with and without a token) on svc-worker, from a ZIP, and every refusal
import io
import os
import sys
import zipfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from svclib import DATA_DIR, UNKNOWN_ID, api, check, finish, is_error, signup, sql, versions  # noqa: E402
from gitlib import LOOP_HOST, Forge, git, wait_import  # noqa: E402
from wslib import svc_admin  # noqa: E402


def imp(a, body, wid=None, **kw):
    return api("POST", "/workspaces/%s/projects/import" % (wid or a.workspace_id), body, token=a.token, **kw)


def zip_bytes(entries, symlink=None):
    """A ZIP of {name: text}; `symlink` (name, target) adds a Unix symlink entry."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for n, t in entries.items():
            z.writestr(n, t)
        if symlink:
            info = zipfile.ZipInfo(symlink[0])
            info.create_system = 3
            info.external_attr = (0o120777 << 16)
            z.writestr(info, symlink[1])
    return buf.getvalue()


def zip_import(a, data, name="Zipped"):
    return api("POST", "/workspaces/%s/projects/import?name=%s" % (a.workspace_id, name), token=a.token, raw=data,
               headers={"Content-Type": "application/zip"})


def git_cases(a, forge):
    head = forge.make_repo("site", [{"index.html": "<h1>one</h1>\n"}, {"app.js": "console.log(2)\n"},
                                    {"index.html": "<h1>three</h1>\n"}])
    forge.make_repo("private-site", [{"index.html": "<h1>secret</h1>\n"}, {"b.txt": "b\n"}])
    forge.make_repo("linky", [{"index.html": "x\n"}])
    # a symlink in the history's tip: refused
    work = os.path.join(forge.dir, "linkwork")
    git("clone", "-q", forge.path("linky"), work)
    os.symlink("/etc/passwd", os.path.join(work, "passwd"))
    git("add", "-A", cwd=work)
    git("commit", "-q", "-m", "a link", cwd=work)
    git("push", "-q", "origin", "main", cwd=work)

    # public repository, no token: 201 importing, then done with the whole history
    r = imp(a, {"name": "From git", "gitUrl": forge.url("site")})
    check("test_git_import_url_201_importing", r.status == 201 and r.body.get("importState") == "importing" and
          r.body.get("importError") is None, r)
    if r.status == 201:
        pid = r.body["id"]
        p = wait_import(api, a, pid)
        check("test_git_import_url_done", p and p.get("importState") is None and p.get("importError") is None, p)
        vs = versions(a, pid)
        check("test_git_import_url_full_history", [v["sha"] for v in vs][:1] == [head] and len(vs) == 3 and
              vs[0]["author"] == "Forge Person", vs)
        r = api("GET", "/projects/%s/files/index.html" % pid, token=a.token)
        check("test_git_import_url_working_tree", r.status == 200 and "three" in r.body, r)
        cfg = open(os.path.join(DATA_DIR, "projects", pid, ".git", "config")).read()
        check("test_git_import_url_not_in_config", "git.example.com" not in cfg, cfg)

    # private repository with a token: done; without one: failed with the reason
    r = imp(a, {"name": "Private", "gitUrl": forge.url("private-site"), "username": forge.user,
                "token": forge.password})
    if check("test_git_import_token_201", r.status == 201, r):
        pid = r.body["id"]
        p = wait_import(api, a, pid)
        check("test_git_import_token_done", p and p.get("importState") is None, p)
        check("test_git_import_token_files", len(versions(a, pid)) == 2, versions(a, pid))
        cfg = open(os.path.join(DATA_DIR, "projects", pid, ".git", "config")).read()
        check("test_git_import_token_not_in_repo_config", forge.password not in cfg, cfg)
        fetch_head = os.path.join(DATA_DIR, "projects", pid, ".git", "FETCH_HEAD")
        check("test_git_import_no_fetch_head", not os.path.exists(fetch_head))
        r = api("GET", "/projects/%s" % pid, token=a.token)
        check("test_git_import_token_never_returned", forge.password not in r.raw.decode(), r)
    check("test_git_import_forge_saw_the_user", "private-site.git/info/refs %s 200" % forge.user in forge.requests(),
          forge.requests())
    r = imp(a, {"name": "No token", "gitUrl": forge.url("private-site")})
    if check("test_git_import_no_token_201", r.status == 201, r):
        p = wait_import(api, a, r.body["id"])
        check("test_git_import_no_token_failed_with_reason", p and p.get("importState") == "failed" and
              "fetch failed" in (p.get("importError") or ""), p)
    r = imp(a, {"name": "Wrong token", "gitUrl": forge.url("private-site"), "token": "wrong"})
    if r.status == 201:
        p = wait_import(api, a, r.body["id"])
        check("test_git_import_wrong_token_failed", p and p.get("importState") == "failed", p)
    # a ref, and an unknown one
    r = imp(a, {"name": "Ref", "gitUrl": forge.url("site"), "ref": "refs/heads/main"})
    if r.status == 201:
        p = wait_import(api, a, r.body["id"])
        check("test_git_import_ref_done", p and p.get("importState") is None, p)
    r = imp(a, {"name": "No ref", "gitUrl": forge.url("site"), "ref": "nope"})
    if r.status == 201:
        p = wait_import(api, a, r.body["id"])
        check("test_git_import_unknown_ref_failed", p and p.get("importState") == "failed", p)
    # a symlink in the tree: failed, nothing checked out
    r = imp(a, {"name": "Linky", "gitUrl": forge.url("linky")})
    if r.status == 201:
        pid = r.body["id"]
        p = wait_import(api, a, pid)
        check("test_git_import_symlink_failed", p and p.get("importState") == "failed" and
              "symlink" in (p.get("importError") or ""), p)
        check("test_git_import_symlink_not_checked_out",
              not os.path.lexists(os.path.join(DATA_DIR, "projects", pid, "passwd")))

    # refused at once: loopback (by name and by address), http, credentials in the URL, a bad ref
    for name, url, field in (
            ("loopback_address", "https://127.0.0.1:%d/site.git" % forge.port, "gitUrl"),
            ("loopback_name", forge.url("site", host=LOOP_HOST), "gitUrl"),
            ("ipv6_loopback", "https://[::1]:%d/site.git" % forge.port, "gitUrl"),
            ("link_local", "https://169.254.169.254/latest.git", "gitUrl"),
            ("http", "http://git.example.com:%d/site.git" % forge.port, "gitUrl"),
            ("ssh", "ssh://git.example.com/site.git", "gitUrl"),
            ("file", "file:///etc", "gitUrl"),
            ("credentials_in_url", "https://u:p@git.example.com:%d/site.git" % forge.port, "gitUrl"),
            ("unresolvable", "https://nowhere.invalid/site.git", "gitUrl")):
        r = imp(a, {"name": "Refused", "gitUrl": url})
        check("test_git_import_refused_%s_400" % name, is_error(r, 400, "validation_failed", field), r)
    r = imp(a, {"name": "Bad ref", "gitUrl": forge.url("site"), "ref": "--upload-pack=evil"})
    check("test_git_import_bad_ref_400", is_error(r, 400, "validation_failed", "ref"), r)


def quota_case(forge):
    """An import past the project's quota (the test stack's business plan: 400 000 bytes a repository) fails and
    leaves nothing of it."""
    c = signup(tag="import-quota")
    rc, out = svc_admin("set-plan", c.workspace_id, "business")
    check("test_git_import_quota_setup", rc == 0, out)
    forge.make_repo("big", [{"index.html": "x\n", "blob.txt": os.urandom(600000).hex()}])
    r = imp(c, {"name": "Too big", "gitUrl": forge.url("big")})
    if check("test_git_import_quota_201", r.status == 201, r):
        p = wait_import(api, c, r.body["id"])
        check("test_git_import_quota_failed", p and p.get("importState") == "failed" and
              "larger than" in (p.get("importError") or ""), p)
        vs = versions(c, r.body["id"])
        check("test_git_import_quota_leaves_no_history", len(vs) == 1 and vs[0]["author"] != "Forge Person", vs)
    # a ZIP past the same quota: 413, and no project
    count = "SELECT COUNT(*) FROM projects WHERE workspace_id = '%s'" % c.workspace_id
    before = sql(count)
    r = zip_import(c, zip_bytes({"top/index.html": "x\n", "top/blob.txt": os.urandom(300000).hex()}))
    check("test_git_import_zip_past_quota_413", is_error(r, 413, "payload_too_large") and
          "quota" in (r.body or {}).get("message", ""), r)
    after = sql(count)
    check("test_git_import_zip_past_quota_makes_no_project", after == before, (before, after))
    # a pack of a few KiB whose tree unpacks to 3 MB: refused before the checkout, not after it
    forge.make_repo("bomb", [{"index.html": "x\n", "zeros.txt": "0" * 3000000}])
    r = imp(c, {"name": "Compressed", "gitUrl": forge.url("bomb")})
    if check("test_git_import_quota_compressed_201", r.status == 201, r):
        p = wait_import(api, c, r.body["id"])
        check("test_git_import_quota_compressed_failed", p and p.get("importState") == "failed" and
              "larger than" in (p.get("importError") or ""), p)


def zip_cases(a):
    data = zip_bytes({"top/index.html": "<p>zip</p>\n", "top/css/a.css": "p{}\n"})
    r = zip_import(a, data)
    ok = check("test_git_import_zip_201", r.status == 201 and r.body.get("name") == "Zipped" and
               r.body.get("importState") is None, r)
    if ok:
        pid = r.body["id"]
        f = api("GET", "/projects/%s/files" % pid, token=a.token)
        paths = sorted(i["path"] for i in f.body.get("items", [])) if f.status == 200 else []
        check("test_git_import_zip_files_without_top_folder", paths == ["css/a.css", "index.html"], f)
        vs = versions(a, pid)
        check("test_git_import_zip_one_version", len(vs) == 1, vs)
    for name, entries, link in (("dotdot", {"../evil.txt": "x"}, None), ("nested_dotdot", {"a/../../evil": "x"}, None),
                                ("absolute", {"/etc/evil": "x"}, None), ("dot_git", {".git/config": "x"}, None),
                                ("symlink", {"index.html": "x"}, ("passwd", "/etc/passwd"))):
        r = zip_import(a, zip_bytes(entries, link), name="Evil-" + name)
        check("test_git_import_zip_%s_400" % name, is_error(r, 400, "validation_failed"), r)
    r = api("GET", "/projects?q=Evil", token=a.token)
    check("test_git_import_zip_refused_made_nothing",
          r.status == 200 and not [p for p in r.body.get("items", []) if p["name"].startswith("Evil")], r)
    r = zip_import(a, b"this is not a zip")
    check("test_git_import_zip_not_a_zip_400", is_error(r, 400, "validation_failed"), r)
    r = zip_import(a, zip_bytes({"a.txt": "x"}), name="%20%20")
    check("test_git_import_zip_blank_name_400", is_error(r, 400, "validation_failed", "name"), r)


def error_cases(a):
    r = api("POST", "/workspaces/%s/projects/import" % a.workspace_id, raw="x", token=a.token,
            headers={"Content-Type": "text/plain"})
    check("test_git_import_other_type_415", is_error(r, 415, "unsupported_media_type"), r)
    r = api("POST", "/workspaces/%s/projects/import" % a.workspace_id, raw="{", token=a.token)
    check("test_git_import_bad_json_400", is_error(r, 400, "invalid_json"), r)
    r = imp(a, {"gitUrl": "https://git.example.com/x.git"})
    check("test_git_import_no_name_400", is_error(r, 400, "validation_failed", "name"), r)
    r = imp(a, {"name": "x"})
    check("test_git_import_no_url_400", is_error(r, 400, "validation_failed", "gitUrl"), r)
    r = imp(a, {"name": "x", "gitUrl": "https://git.example.com/x.git"}, wid=UNKNOWN_ID)
    check("test_git_import_unknown_workspace_404", is_error(r, 404, "not_found"), r)
    b = signup(tag="import-other")
    r = imp(b, {"name": "x", "gitUrl": "https://git.example.com/x.git"}, wid=a.workspace_id)
    check("test_git_import_not_member_403_or_404", r.status in (403, 404), r)
    r = api("POST", "/workspaces/%s/projects/import" % a.workspace_id, {"name": "x", "gitUrl": "https://x/y.git"})
    check("test_git_import_anonymous_401", is_error(r, 401, "unauthorized"), r)
    r = zip_import(a, b"\0" * (17 * 1024 * 1024))
    check("test_git_import_zip_too_large_413", r.status == 413, r)


def main():
    a = signup(tag="import")
    forge = Forge()
    try:
        git_cases(a, forge)
        quota_case(forge)
        zip_cases(a)
        error_cases(a)
    finally:
        forge.stop()
    return finish()


if __name__ == "__main__":
    sys.exit(main())
