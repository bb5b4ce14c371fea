#!/usr/bin/env python3
# test_build_sandbox.py: builds are contained by cgroups, a disk bound and a registry-only network (issue 27):
# a 1 GiB WebAssembly memory works; a build past the memory, process or disk bound fails with that limit named in
# the deployment's error and the preview's failure page, and leaves no cgroup, mount or file behind; the install
# reaches the real npm registry through svc's proxy and nothing else (a loopback listener of this test, a private
# address, 169.254.169.254, the registry a project's .npmrc names); a dependency outside the registry is refused.
# The stack's bounds (tests/stack.env): SVC_BUILD_MEMORY_MB=1024, SVC_BUILD_DISK_MB=256, SVC_BUILD_PROCS=256.
import json
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from svclib import DATA_DIR, HTTP_PORT, api, check, finish, is_error, request, site_get  # noqa: E402
from wslib import Team, create_in, platform_admin  # noqa: E402

MEMORY_MB, DISK_MB, PROCS = 1024, 256, 256


class Listener:
    """A TCP listener on the host's loopback that counts connections and bytes: nothing of a build may reach it."""

    def __init__(self):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.connections, self.bytes = 0, 0
        threading.Thread(target=self.serve, daemon=True).start()

    def serve(self):
        while True:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            self.connections += 1
            c.settimeout(2)
            try:
                while True:
                    d = c.recv(4096)
                    if not d:
                        break
                    self.bytes += len(d)
            except OSError:
                pass
            c.close()


def put(acct, pid, path, content):
    return api("PUT", "/projects/%s/files/%s" % (pid, path), {"content": content, "overwrite": True}, token=acct.token)


def package(build, deps=None, scripts=None):
    s = {"build": build}
    s.update(scripts or {})
    p = {"name": "probe", "private": True, "version": "0.0.0", "scripts": s}
    if deps:
        p["dependencies"] = deps
    return json.dumps(p) + "\n"


def project(a, wid, name, files):
    """A blank project with `files` (path: content); returns (id, slug)."""
    p = create_in(a, wid, name, template="blank")
    pid, slug = (p.body or {}).get("id"), (p.body or {}).get("slug")
    for path, content in files.items():
        put(a, pid, path, content)
    return pid, slug


def deploy(a, pid):
    r = api("POST", "/deploy/%s" % pid, token=a.token, timeout=180)
    d = (r.body or {}).get("deployment") or {} if isinstance(r.body, dict) else {}
    return r, d


def left_behind(deployment_id):
    """What a build of `deployment_id` left on the host: cgroups named after it, mounts, its build directory."""
    out = []
    if not deployment_id:
        return ["no deployment id"]
    p = subprocess.run(["find", "/sys/fs/cgroup", "-maxdepth", "8", "-type", "d", "-name", "d-%s-*" % deployment_id],
                       stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    out += p.stdout.split()
    with open("/proc/self/mounts") as f:
        out += [line.split()[1] for line in f if deployment_id in line]
    if DATA_DIR and os.path.exists(os.path.join(DATA_DIR, "builds", deployment_id)):
        out.append(os.path.join(DATA_DIR, "builds", deployment_id))
    return out


def preview_failure(a, pid, secs=240.0):
    """The preview's failure page of project `pid` once svc-worker's build of it failed (it waits in the queue)."""
    r = api("GET", "/projects/%s/preview" % pid, token=a.token)
    url = r.body.get("url") if r.status == 200 and isinstance(r.body, dict) else None
    if not url:
        return r
    host = urllib.parse.urlsplit(url).hostname
    end = time.monotonic() + secs
    while True:
        g = request("GET", "http://127.0.0.1:%d/" % HTTP_PORT, None, {"Host": "%s:%d" % (host, HTTP_PORT)})
        if "The build failed" in g.body or time.monotonic() > end:
            return g
        time.sleep(0.5)


def test_limits(a, wid):
    # a 1 GiB WebAssembly memory: no address-space limit, and the cgroup counts what is used
    pid, slug = project(a, wid, "Wasm", {"package.json": package(
        "node -e \"const m = new WebAssembly.Memory({initial: 16384}); require('fs').mkdirSync('dist'); "
        "require('fs').writeFileSync('dist/index.html', 'wasm ' + m.buffer.byteLength)\"")})
    r, d = deploy(a, pid)
    check("test_build_sandbox_wasm_gigabyte_builds", r.status == 200 and d.get("status") == "live"
          and site_get(slug).body == "wasm 1073741824", r)
    cases = (
        ("memory", "node -e \"const a = []; for (;;) a.push(Buffer.alloc(256 << 20).fill(1))\"",
         "the build used more than %d MB of memory" % MEMORY_MB),
        ("processes", "sh -c 'i=0; while [ $i -lt 400 ]; do sleep 20 & i=$((i+1)); done; wait'",
         "the build used more than %d processes" % PROCS),
        ("disk", "node -e \"require('fs').writeFileSync('big', Buffer.alloc(%d << 20))\"" % (DISK_MB + 64),
         "the build used more than %d MB of disk" % DISK_MB),
    )
    pids = {}
    for name, script, want in cases:
        pid, _ = project(a, wid, "Past the %s bound" % name, {"package.json": package(script)})
        pids[name] = pid
        t0 = time.monotonic()
        r, d = deploy(a, pid)
        took = time.monotonic() - t0
        err = d.get("error") or (r.body or {}).get("message", "") if isinstance(r.body, dict) else ""
        check("test_build_sandbox_%s_bound_is_named" % name,
              r.status == 422 and d.get("status") == "failed" and want in (err or ""), (took, r))
        check("test_build_sandbox_%s_bound_leaves_nothing" % name, left_behind(d.get("id")) == [], left_behind(d.get("id")))
        print("# the build past the %s bound failed in %.1f s" % (name, took))
    # the preview (svc-worker's build) says the same on its failure page
    for name, _, want in cases:
        g = preview_failure(a, pids[name])
        check("test_build_sandbox_preview_names_the_%s_bound" % name, g.status == 503 and want in g.body, g)
    if DATA_DIR:
        # svc-worker may be building one of them again (each change queues a build): wait for it to end
        end = time.monotonic() + 120
        while True:
            builds = [b for b in os.listdir(os.path.join(DATA_DIR, "builds"))
                      if any(p in b for p in pids.values())]
            with open("/proc/self/mounts") as f:
                mounts = [line.split()[1] for line in f if any(p in line for p in pids.values())]
            if (not builds and not mounts) or time.monotonic() > end:
                break
            time.sleep(1)
        check("test_build_sandbox_leaves_no_build_tree_or_mount", mounts == [] and builds == [], (mounts, builds))


NET_SCRIPT = r"""
const net = require('net'), fs = require('fs');
const port = +process.argv[2], out = [];
function direct(h, p) {
  return new Promise(r => { const s = net.connect({host: h, port: p}, () => { r(h + ' reached'); s.destroy(); });
    s.on('error', e => r(h + ' ' + e.code)); s.setTimeout(2000, () => { r(h + ' timeout'); s.destroy(); }); });
}
function tunnel(t) {
  return new Promise(r => { let d = ''; const s = net.connect({host: '127.0.0.1', port: 3128},
    () => s.write('CONNECT ' + t + ' HTTP/1.1\r\nHost: ' + t + '\r\n\r\n'));
    s.on('data', b => d += b); s.on('close', () => r(t + ' => ' + d.split('\r\n')[0])); s.on('error', e => r(t + ' ' + e.code)); });
}
(async () => {
  for (const [h, p] of [['127.0.0.1', port], ['10.0.0.1', 80], ['192.168.1.1', 80], ['169.254.169.254', 80]])
    out.push(await direct(h, p));
  for (const t of ['127.0.0.1:' + port, '10.0.0.1:80', '169.254.169.254:80', 'example.com:443'])
    out.push(await tunnel(t));
  fs.writeFileSync('net.txt', out.join('\n') + '\n');
})();
"""


def test_network(t, padmin):
    a, wid = t.owner, t.wid
    lst = Listener()
    api("PUT", "/workspaces/%s/build-settings" % wid, {"allowInstallScripts": True}, token=padmin.token)
    # a real package from the real registry through the proxy, and an install script probing the way out
    pid, slug = project(a, wid, "Registry only", {
        "probe.js": NET_SCRIPT,
        "package.json": package(
            "node -e \"require('is-number'); const fs = require('fs'); fs.mkdirSync('dist'); "
            "fs.copyFileSync('net.txt', 'dist/net.txt')\"",
            deps={"is-number": "7.0.0"}, scripts={"postinstall": "node probe.js %d" % lst.port})})
    r, d = deploy(a, pid)
    log = d.get("logExcerpt") or ""
    check("test_build_sandbox_real_registry_install_through_the_proxy",
          r.status == 200 and d.get("status") == "live" and "(the registry only)" in log, r)
    net = site_get(slug, "/net.txt").body if r.status == 200 else ""
    lines = net.splitlines()
    check("test_build_sandbox_install_script_reaches_no_loopback_private_or_metadata_address",
          len(lines) == 8 and not any(x.endswith(" reached") for x in lines[:4])
          and all("=> HTTP/1.1 403" in x for x in lines[4:]), net)
    check("test_build_sandbox_the_hosts_loopback_listener_got_nothing", lst.connections == 0 and lst.bytes == 0,
          (lst.connections, lst.bytes))
    api("PUT", "/workspaces/%s/build-settings" % wid, {"allowInstallScripts": False}, token=padmin.token)

    # a project's .npmrc cannot move the registry (the files API takes no dot-file: it is written into the
    # working tree as a Git push or the agent's tools could)
    rc = Listener()
    pid, slug = project(a, wid, "Own npmrc", {
        "package.json": package("node -e \"require('is-number'); require('fs').mkdirSync('dist')\"",
                                deps={"is-number": "7.0.0"})})
    if DATA_DIR:
        with open(os.path.join(DATA_DIR, "projects", pid, ".npmrc"), "w") as f:
            f.write("registry=http://127.0.0.1:%d/\n@probe:registry=http://127.0.0.1:%d/\n" % (rc.port, rc.port))
    r, d = deploy(a, pid)
    check("test_build_sandbox_project_npmrc_is_not_used",
          r.status == 200 and "the project's .npmrc is not used" in (d.get("logExcerpt") or ""), r)
    check("test_build_sandbox_npmrc_registry_listener_gets_no_byte", rc.connections == 0 and rc.bytes == 0,
          (rc.connections, rc.bytes))

    # a dependency outside the registry is refused before npm runs, named
    tg = Listener()
    url = "http://127.0.0.1:%d/leak.tgz" % tg.port
    pid, _ = project(a, wid, "Tarball dependency", {"package.json": package("true", deps={"leak": url})})
    r, d = deploy(a, pid)
    err = d.get("error") or ""
    check("test_build_sandbox_url_dependency_is_refused_by_name",
          r.status == 422 and 'the dependency "leak" (package.json dependencies) is not from the registry (%s)' % url
          in err and "svc installs only from https://registry.npmjs.org/" in err, r)
    pid, _ = project(a, wid, "GitHub dependency", {"package.json": package("true", deps={"x": "github:user/repo"})})
    r, d = deploy(a, pid)
    check("test_build_sandbox_github_dependency_is_refused_by_name",
          r.status == 422 and 'the dependency "x"' in (d.get("error") or ""), r)
    lock = {"name": "probe", "lockfileVersion": 3, "requires": True, "packages": {
        "": {"name": "probe", "dependencies": {"is-number": "7.0.0"}},
        "node_modules/is-number": {"version": "7.0.0", "resolved": url}}}
    pid, _ = project(a, wid, "Lockfile elsewhere", {
        "package.json": package("true", deps={"is-number": "7.0.0"}), "package-lock.json": json.dumps(lock)})
    r, d = deploy(a, pid)
    check("test_build_sandbox_lockfile_url_outside_the_registry_is_refused",
          r.status == 422 and 'the dependency "node_modules/is-number" (package-lock.json)' in (d.get("error") or ""), r)
    time.sleep(0.5)
    check("test_build_sandbox_refused_dependency_listener_gets_no_byte", tg.connections == 0, tg.connections)


def main():
    t = Team("buildsandbox")
    padmin = platform_admin("buildsandbox-padmin")
    test_limits(t.owner, t.wid)
    test_network(t, padmin)
    r = api("PUT", "/workspaces/%s/build-settings" % t.wid, {"allowInstallScripts": True}, token=t.owner.token)
    check("test_build_sandbox_scripts_are_a_platform_admin_decision", is_error(r, 403, "forbidden"), r)


if __name__ == "__main__":
    main()
    sys.exit(finish())
