#!/usr/bin/env python3
# test_deps.py: dependencies installed only when they change (lib/project/deps.c, docs/operations.md
# "Dependencies"), on the real stack with its sandbox: a dependency that is on no registry, its tarball
# planted in the shared npm cache, installs from the cache by its integrity; a publish after a change
# that does not touch package.json or the lockfile runs no install (its log), one that does installs again
# (a new store entry); a preview build likewise (its failed build's log); a build script cannot write the
# stored node_modules (its own .vite can); a project without a lockfile gets the one its first install wrote,
# committed once as a version.
import gzip
import hashlib
import base64
import io
import json
import os
import re
import secrets
import sys
import tarfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from svclib import DATA_DIR, api, check, finish, signup, site_get, skip_rest, versions  # noqa: E402

DEP = "svc-probe-dep"
DEP_JS = "module.exports = 'probe 1.0.0';\n"

BUILD_MJS = r"""
import fs from 'node:fs';
const dep = fs.readFileSync('node_modules/%(dep)s/index.js', 'utf8');
const tries = {};
const attempts = {
  overwrite: () => fs.writeFileSync('node_modules/%(dep)s/index.js', 'pwned'),
  create: () => fs.writeFileSync('node_modules/pwned.js', 'x'),
  remove: () => fs.rmSync('node_modules/%(dep)s', { recursive: true }),
  chmod: () => fs.chmodSync('node_modules/%(dep)s/index.js', 0o666),
  rename: () => fs.renameSync('node_modules/%(dep)s', 'node_modules/moved'),
  vite: () => fs.writeFileSync('node_modules/.vite/deps.json', '{}'),
};
for (const [k, f] of Object.entries(attempts)) {
  try { f(); tries[k] = 'written'; } catch (e) { tries[k] = e.code || String(e); }
}
fs.mkdirSync('dist', { recursive: true });
fs.writeFileSync('dist/index.html', '<p id="dep">' + dep.trim() + '</p><pre id="tries">' + JSON.stringify(tries) + '</pre>\n');
if (process.env.FAIL_BUILD || fs.existsSync('fail')) { console.log('failing on purpose'); process.exit(7); }
""" % {"dep": DEP}


def tarball():
    """A real npm package tarball (package/package.json, package/index.js), byte for byte the same each run."""
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.USTAR_FORMAT) as tar:
        for name, text in (("package/package.json", json.dumps({"name": DEP, "version": "1.0.0", "main": "index.js"})),
                           ("package/index.js", DEP_JS)):
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size, info.mtime, info.mode = len(data), 0, 0o644
            tar.addfile(info, io.BytesIO(data))
    out = io.BytesIO()
    with gzip.GzipFile(fileobj=out, mode="wb", mtime=0) as gz:
        gz.write(raw.getvalue())
    return out.getvalue()


def plant(data):
    """Puts `data` into the shared npm cache as an install would have (content-v2 path of its sha512, 0444,
    root's); returns its integrity string."""
    digest = hashlib.sha512(data).digest()
    hexd = digest.hex()
    d = os.path.join(DATA_DIR, "npm", "cache", "_cacache", "content-v2", "sha512", hexd[:2], hexd[2:4])
    os.makedirs(d, mode=0o700, exist_ok=True)
    path = os.path.join(d, hexd[4:])
    if not os.path.exists(path):
        with open(path + ".tmp", "wb") as f:
            f.write(data)
        os.chmod(path + ".tmp", 0o444)
        os.rename(path + ".tmp", path)
    return "sha512-" + base64.b64encode(digest).decode()


def lockfile(name, integrity):
    return json.dumps({
        "name": name, "version": "1.0.0", "lockfileVersion": 3, "requires": True,
        "packages": {
            "": {"name": name, "version": "1.0.0", "dependencies": {DEP: "1.0.0"}},
            "node_modules/" + DEP: {"version": "1.0.0",
                                    "resolved": "https://registry.npmjs.org/%s/-/%s-1.0.0.tgz" % (DEP, DEP),
                                    "integrity": integrity},
        },
    }, indent=2) + "\n"


def package_json(name, tag, deps=True):
    pkg = {"name": name, "version": "1.0.0", "private": True, "description": tag,
           "scripts": {"build": "node build.mjs"}}
    if deps:
        pkg["dependencies"] = {DEP: "1.0.0"}
    return json.dumps(pkg, indent=2) + "\n"


def put(acct, pid, path, content):
    return api("PUT", "/projects/%s/files/%s" % (pid, path), {"content": content, "overwrite": True}, token=acct.token)


def deploy(acct, pid):
    r = api("POST", "/deploy/%s" % pid, token=acct.token, timeout=180)
    d = ((r.body or {}).get("deployment") or {}) if isinstance(r.body, dict) else {}
    return r, d, d.get("logExcerpt") or ""


def entries():
    """The store's entries (keys)."""
    d = os.path.join(DATA_DIR, "npm", "modules")
    return sorted(n for n in os.listdir(d) if re.match(r"^[0-9a-f]{64}$", n)) if os.path.isdir(d) else []


def installed(log):
    return "$ npm ci --ignore-scripts" in log or "$ npm install --ignore-scripts" in log


def reused(log):
    return "node_modules reused" in log


def wait(pred, secs=240.0):
    end = time.monotonic() + secs
    while True:
        v = pred()
        if v or time.monotonic() > end:
            return v
        time.sleep(0.5)


def test_publish(a, integrity):
    tag = secrets.token_hex(4)  # a key of this run's own, so the first build installs
    r = api("POST", "/workspaces/%s/projects" % a.workspace_id, {"name": "Deps probe", "template": "blank"},
            token=a.token)
    pid, slug = (r.body or {}).get("id"), (r.body or {}).get("slug")
    check("test_deps_project_created", r.status == 201 and pid, r)
    for path, text in (("build.mjs", BUILD_MJS), ("package-lock.json", lockfile("deps-probe", integrity)),
                       ("package.json", package_json("deps-probe", tag))):
        put(a, pid, path, text)
    r, d, log = deploy(a, pid)
    check("test_deps_first_publish_installs_offline_from_the_cache",
          r.status == 200 and d.get("status") == "live" and installed(log), (r, log))
    page = site_get(slug)
    tries = {}
    m = re.search(r'<pre id="tries">(.*?)</pre>', page.body or "")
    if m:
        tries = json.loads(m.group(1))
    check("test_deps_build_reads_the_dependency", "<p id=\"dep\">module.exports = 'probe 1.0.0';</p>" in (page.body or ""),
          page)
    check("test_deps_build_cannot_write_the_stored_node_modules",
          all(tries.get(k) in ("EROFS", "EACCES", "EPERM") for k in ("overwrite", "create", "remove", "chmod", "rename")),
          tries)
    check("test_deps_build_writes_its_own_vite_cache", tries.get("vite") == "written", tries)
    keys = entries()
    stored = [k for k in keys if os.path.exists(os.path.join(DATA_DIR, "npm", "modules", k, "node_modules", DEP))]
    body = None
    for k in stored:
        with open(os.path.join(DATA_DIR, "npm", "modules", k, "node_modules", DEP, "index.js")) as f:
            body = f.read()
    st = os.stat(os.path.join(DATA_DIR, "npm", "modules", stored[-1], "node_modules", DEP, "index.js")) if stored else None
    check("test_deps_store_entry_unchanged_and_read_only",
          body == DEP_JS and st is not None and (st.st_mode & 0o222) == 0 and (os.geteuid() != 0 or st.st_uid == 0),
          (stored, body, st))

    # A change that touches neither package.json nor the lockfile: no install, the same entry.
    put(a, pid, "build.mjs", BUILD_MJS + "// a change of the build only\n")
    r, d, log = deploy(a, pid)
    check("test_deps_unchanged_dependencies_install_nothing",
          r.status == 200 and d.get("status") == "live" and reused(log) and not installed(log), log)
    check("test_deps_unchanged_dependencies_add_no_entry", set(entries()) == set(keys), (entries(), keys))

    # package.json changed (the lockfile still fits it): installed again, as a new entry.
    put(a, pid, "package.json", package_json("deps-probe", tag + "-2"))
    r, d, log = deploy(a, pid)
    check("test_deps_changed_package_json_installs_again",
          r.status == 200 and d.get("status") == "live" and (installed(log) or reused(log)), log)
    # (the preview build queued by the same change may have installed it first: then the publish reuses it)
    check("test_deps_changed_package_json_is_a_new_entry", len(set(entries()) - set(keys)) == 1, (entries(), keys))
    return pid


def failed_log(pid):
    path = os.path.join(DATA_DIR, "previews", pid, "failed")
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return ""


def test_preview(a, integrity):
    tag = secrets.token_hex(4)
    r = api("POST", "/workspaces/%s/projects" % a.workspace_id, {"name": "Deps preview", "template": "blank"},
            token=a.token)
    pid = (r.body or {}).get("id")
    put(a, pid, "fail", "1\n")  # the build fails on purpose, so the preview keeps its log (previews/<id>/failed)
    put(a, pid, "build.mjs", BUILD_MJS)
    put(a, pid, "package-lock.json", lockfile("deps-preview", integrity))
    put(a, pid, "package.json", package_json("deps-preview", tag))
    first = wait(lambda: failed_log(pid) if "failing on purpose" in failed_log(pid) else "")
    check("test_deps_preview_build_installs", installed(first) and "failing on purpose" in first, first)
    open(os.path.join(DATA_DIR, "previews", pid, "failed"), "w").close()  # so the next build's log is told apart
    put(a, pid, "fail", "2\n")
    second = wait(lambda: failed_log(pid) if "failing on purpose" in failed_log(pid) else "")
    check("test_deps_preview_after_a_change_not_of_package_json_runs_no_install",
          reused(second) and not installed(second), second)
    before = set(entries())
    open(os.path.join(DATA_DIR, "previews", pid, "failed"), "w").close()
    put(a, pid, "package.json", package_json("deps-preview", tag + "-2"))
    third = wait(lambda: failed_log(pid) if "failing on purpose" in failed_log(pid) else "")
    check("test_deps_preview_after_a_package_json_change_installs",
          installed(third) and not reused(third) and len(set(entries()) - before) == 1, (third, entries()))


def test_lockfile_written(a):
    tag = secrets.token_hex(4)
    r = api("POST", "/workspaces/%s/projects" % a.workspace_id, {"name": "Deps no lock", "template": "blank"},
            token=a.token)
    pid = (r.body or {}).get("id")
    put(a, pid, "build.mjs", "import fs from 'node:fs'; fs.mkdirSync('dist'); fs.writeFileSync('dist/index.html', 'ok')\n")
    put(a, pid, "package.json", package_json("deps-nolock", tag, deps=False))
    r, d, log = deploy(a, pid)
    # (the preview build queued by the same change may have installed and committed first: then this one reuses)
    check("test_deps_no_lockfile_first_install", r.status == 200 and (installed(log) or reused(log)), (r, log))
    got = wait(lambda: api("GET", "/projects/%s/files/package-lock.json" % pid, token=a.token), 30)

    def lock_versions():
        return [v for v in versions(a, pid) if "package-lock.json written by the first install" in (v.get("message") or "")]
    vs = wait(lock_versions, 30)
    lock = got.body if got and got.status == 200 and isinstance(got.body, dict) else {}  # the file itself
    check("test_deps_no_lockfile_gets_the_one_npm_wrote",
          lock.get("lockfileVersion") == 3 and lock.get("name") == "deps-nolock" and "" in (lock.get("packages") or {}),
          got)
    check("test_deps_lockfile_committed_once_as_a_version", len(vs or []) == 1, versions(a, pid))
    r, d, log = deploy(a, pid)
    check("test_deps_committed_lockfile_next_build_uses_it",
          r.status == 200 and (reused(log) or "$ npm ci --ignore-scripts" in log) and "$ npm install" not in log, log)


def main():
    if not DATA_DIR or os.geteuid() != 0:
        skip_rest("needs SVC_DATA_DIR and root (the shared cache is root's)", [
            "test_deps_first_publish_installs_offline_from_the_cache"])
        return
    a = signup(tag="deps")
    integrity = plant(tarball())
    test_publish(a, integrity)
    test_preview(a, integrity)
    test_lockfile_written(a)


if __name__ == "__main__":
    main()
    sys.exit(finish())
