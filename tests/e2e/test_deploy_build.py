#!/usr/bin/env python3
# test_deploy_build.py: publishing a package.json project: the sandboxed build of the vite-vanilla template
# (offline: the stack has SVC_BUILD_NETWORK=0), its log as server-sent events, a failing build and one out of
# time (the previous site stays live), a build that tries to read outside its directory or a secret (denied),
# the deployments list, a restore without a build, and every 400/401/403/404/409 of these routes.
import json
import os
import re
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from svclib import (DATA_DIR, HTTP_PORT, TEST_CONFIG, UNKNOWN_ID, api, check, finish, is_error, items_of,  # noqa: E402
                    setting, site_get, sse_all)
from wslib import Team, create_in, platform_admin  # noqa: E402

SHA_RE = r"^[0-9a-f]{40}$"
TIME_RE = r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$"


def put(acct, pid, path, content):
    return api("PUT", "/projects/%s/files/%s" % (pid, path), {"content": content, "overwrite": True}, token=acct.token)


def set_build(acct, pid, script):
    """Makes the project's build script `script` (package.json's scripts.build)."""
    pkg = '{"name": "probe", "private": true, "version": "0.0.0", "scripts": {"build": %s}}\n' % (
        json.dumps(script))
    return put(acct, pid, "package.json", pkg)


def site_after_switch(slug, path="/", differs_from=None, equals=None, secs=4.0):
    """GETs a site until its answer differs from / equals the given bytes: the web server may answer
    from its stat cache for about a second after a switch (docs/api.md "Published sites")."""
    end = time.monotonic() + secs
    while True:
        r = site_get(slug, path)
        ok = (differs_from is None or r.raw != differs_from) and (equals is None or r.raw == equals)
        if ok or time.monotonic() > end:
            return r
        time.sleep(0.2)


def deployments(acct, pid):
    r = api("GET", "/projects/%s/deployments" % pid, token=acct.token)
    return items_of(r.body) if r.status == 200 else None


def test_vite_vanilla(a, wid):
    p = create_in(a, wid, "Vite site", template="vite-vanilla")
    pid, slug = (p.body or {}).get("id"), (p.body or {}).get("slug")
    check("test_deploy_build_vite_vanilla_project_created", p.status == 201 and pid, p)
    t0 = time.monotonic()
    r = api("POST", "/deploy/%s" % pid, token=a.token, timeout=120)
    took = time.monotonic() - t0
    print("# vite-vanilla: publish with its sandboxed build took %.1f s" % took)
    d = (r.body or {}).get("deployment") or {} if isinstance(r.body, dict) else {}
    check("test_deploy_build_vite_vanilla_publishes", r.status == 200 and d.get("status") == "live", r)
    page = site_get(slug)
    m = re.search(r'src="/assets/(main-[0-9a-f]{8}\.js)"', page.body)
    check("test_deploy_build_vite_vanilla_serves_the_built_index", page.status == 200 and m, page)
    if m:
        js = site_get(slug, "/assets/" + m.group(1))
        check("test_deploy_build_vite_vanilla_serves_hashed_assets",
              js.status == 200 and "setupCounter" in js.body and "./counter-" in js.body, js)
    r = site_get(slug, "/build.mjs")
    check("test_deploy_build_serves_dist_only", r.status == 404, r)
    r = site_get(slug, "/.well-known/svc-site")
    check("test_deploy_build_site_has_its_marker", r.status == 200 and r.body == pid, r)
    check("test_deploy_build_deployment_fields",
          re.match(SHA_RE, d.get("commitSha") or "") and re.match(TIME_RE, d.get("startedAt") or "")
          and re.match(TIME_RE, d.get("finishedAt") or "") and d.get("error") is None
          and (d.get("createdBy") or {}).get("id") == (a.user or {}).get("id") and d.get("restorable") is True
          and "npm run build" in (d.get("logExcerpt") or "") and d.get("projectId") == pid, d)
    if DATA_DIR:
        check("test_deploy_build_leaves_no_build_directory",
              not os.path.exists(os.path.join(DATA_DIR, "builds", d.get("id") or "x")))
    return pid, slug, took


def test_stream(a, pid, slug):
    put(a, pid, "src/counter.js", "export function setupCounter(e) { e.textContent = 'streamed' }\n")
    events, _, err = sse_all("/deploy/%s" % pid, {}, token=a.token, timeout=120)
    types = [e.get("type") for e in events]
    check("test_deploy_build_stream_ends_with_done", err is None and types and types[0] == "deployment"
          and types[-1] == "done", (types, err))
    text = "".join(e.get("text") or "" for e in events if e.get("type") == "log")
    check("test_deploy_build_stream_carries_the_build_log",
          "$ npm ci" in text and "$ npm run build" in text and "build.mjs: the site is in dist/" in text, text)
    done = events[-1] if events else {}
    check("test_deploy_build_stream_done_has_url_and_deployment",
          isinstance(done.get("url"), str) and (done.get("deployment") or {}).get("status") == "live"
          and done.get("slug") == slug and (done.get("deployment") or {}).get("id") == (events[0].get("deployment") or {}).get("id"),
          done)
    # lighttpd keeps what it learnt of a path (stat-cache-engine "simple") for up to a second, so a
    # publish that ends within the second of the last request for the site shows a moment later
    # (docs/operations.md "Builds and publishing"); builds without an install take well under that
    deadline, shown, js = time.time() + 3, False, ""
    while not shown and time.time() < deadline:
        page = site_get(slug)
        m = re.search(r'src="/assets/(main-[0-9a-f]{8}\.js)"', page.body)
        js = site_get(slug, "/assets/" + (m.group(1) if m else "x")).body
        cm = re.search(r"(counter-[0-9a-f]{8}\.js)", js)
        shown = bool(cm) and "streamed" in site_get(slug, "/assets/" + cm.group(1)).body
        if not shown:
            time.sleep(0.2)
    check("test_deploy_build_stream_publishes_the_change", shown, js)


def test_failing_build(a, pid, slug):
    before = site_get(slug).raw
    put(a, pid, "build-fail.mjs", "console.log('about to fail'); process.exit(3)\n")
    r = set_build(a, pid, "node build-fail.mjs")
    r = api("POST", "/deploy/%s" % pid, token=a.token, timeout=120)
    d = (r.body or {}).get("deployment") or {} if isinstance(r.body, dict) else {}
    check("test_deploy_build_failing_build_is_422_build_failed",
          r.status == 422 and r.body.get("error") == "build_failed" and "npm run build" in (r.body.get("message") or "")
          and d.get("status") == "failed", r)
    check("test_deploy_build_failing_build_says_why",
          "about to fail" in (d.get("logExcerpt") or "") and "npm run build exited" in (d.get("error") or ""), d)
    after = site_get(slug)
    check("test_deploy_build_failing_build_leaves_the_previous_site", after.status == 200 and after.raw == before,
          after)
    items = deployments(a, pid) or []
    check("test_deploy_build_list_shows_failed_and_live",
          items and items[0].get("status") == "failed" and items[0].get("restorable") is False
          and any(i.get("status") == "live" for i in items[1:]), [(i.get("status"), i.get("error")) for i in items])
    # The stream says it too, as its final error event.
    events, _, err = sse_all("/deploy/%s" % pid, {}, token=a.token, timeout=120)
    last = events[-1] if events else {}
    check("test_deploy_build_failing_build_stream_ends_with_error",
          err is None and last.get("type") == "error" and last.get("error") == "build_failed"
          and (last.get("deployment") or {}).get("status") == "failed", (last, err))


def test_timeout(a, wid):
    p = create_in(a, wid, "Endless build", template="vite-vanilla")
    pid, slug = (p.body or {}).get("id"), (p.body or {}).get("slug")
    api("POST", "/deploy/%s" % pid, token=a.token, timeout=120)
    before = site_get(slug).raw
    set_build(a, pid, "node -e \"setInterval(() => {}, 1000)\"")
    t0 = time.monotonic()
    wall = int(setting("SVC_BUILD_WALL_SECS") or 30)
    r = api("POST", "/deploy/%s" % pid, token=a.token, timeout=wall + 120)
    took = time.monotonic() - t0
    check("test_deploy_build_wall_clock_limit_stops_the_build",
          r.status == 422 and "out of time (%d s)" % wall in (r.body.get("message") or "") and took < wall + 60,
          (took, wall, r))
    check("test_deploy_build_timeout_leaves_the_previous_site", site_get(slug).raw == before)


PROBE = r"""
import fs from 'node:fs'
import net from 'node:net'
const out = {}
const tryRead = (name, p) => { try { fs.readFileSync(p); out[name] = 'READ' } catch (e) { out[name] = e.code || String(e) } }
const tryList = (name, p) => { try { fs.readdirSync(p); out[name] = 'LISTED' } catch (e) { out[name] = e.code || String(e) } }
const tryWrite = (name, p) => { try { fs.writeFileSync(p, 'x'); out[name] = 'WROTE' } catch (e) { out[name] = e.code || String(e) } }
tryRead('settings', %(config)s)
tryRead('other_project', %(other)s)
tryList('data_dir', %(data)s)
tryRead('etc_passwd', '/etc/passwd')
tryRead('etc_shadow', '/etc/shadow')
tryRead('ssh_key', '/root/.ssh/id_rsa')
tryWrite('usr', '/usr/svc-probe')
tryWrite('outside', '/svc-probe')
out.env = Object.keys(process.env).filter((k) => /SECRET|KEY|SVC_|JWT|PASSWORD/.test(k))
out.uid = process.getuid()
const done = (r) => {
  out.network = r
  fs.mkdirSync('dist', { recursive: true })
  fs.writeFileSync('dist/probe.json', JSON.stringify(out))
  fs.writeFileSync('dist/index.html', '<p>probe</p>')
}
const s = net.connect(%(port)d, '127.0.0.1')
s.on('connect', () => { s.destroy(); done('CONNECTED') })
s.on('error', (e) => done(e.code || String(e)))
"""


def test_sandbox(a, wid, other_pid):
    p = create_in(a, wid, "Probe", template="vite-vanilla")
    pid, slug = (p.body or {}).get("id"), (p.body or {}).get("slug")
    js = PROBE % {"config": repr(TEST_CONFIG or "/nonexistent/svc.conf"),
                  "other": repr(os.path.join(DATA_DIR or "/nonexistent", "projects", other_pid or "x", "index.html")),
                  "data": repr(DATA_DIR or "/nonexistent"), "port": HTTP_PORT}
    put(a, pid, "probe.mjs", js)
    set_build(a, pid, "node probe.mjs")
    r = api("POST", "/deploy/%s" % pid, token=a.token, timeout=120)
    check("test_deploy_build_probe_builds", r.status == 200, r)
    pr = site_get(slug, "/probe.json")
    try:
        res = json.loads(pr.raw)
    except ValueError:
        res = {}
    check("test_deploy_build_sandbox_cannot_read_the_settings", res.get("settings") == "ENOENT", res)
    check("test_deploy_build_sandbox_cannot_read_another_project", res.get("other_project") == "ENOENT", res)
    check("test_deploy_build_sandbox_cannot_see_the_data_dir", res.get("data_dir") == "ENOENT", res)
    check("test_deploy_build_sandbox_cannot_read_system_secrets",
          all(res.get(k) in ("ENOENT", "EACCES") for k in ("etc_passwd", "etc_shadow", "ssh_key")), res)
    check("test_deploy_build_sandbox_system_is_read_only", res.get("usr") in ("EROFS", "EACCES")
          and res.get("outside") in ("EROFS", "EACCES"), res)
    check("test_deploy_build_sandbox_environment_has_no_secrets", res.get("env") == [], res)
    check("test_deploy_build_sandbox_has_no_network", res.get("network") not in (None, "CONNECTED"), res)
    if os.geteuid() == 0:
        check("test_deploy_build_sandbox_runs_unprivileged", res.get("uid") not in (None, 0), res)


def test_restore(a, outsider, pid, slug):
    items = deployments(a, pid) or []
    live = [i for i in items if i.get("status") == "live"]
    old = [i for i in items if i.get("status") == "superseded" and i.get("restorable")]
    check("test_deploy_build_list_newest_first_with_one_live",
          len(live) == 1 and [i.get("startedAt") for i in items] == sorted([i.get("startedAt") for i in items], reverse=True),
          [(i.get("status"), i.get("startedAt")) for i in items])
    if not (live and old):
        check("test_deploy_build_restore_has_something_to_restore", False, items)
        return
    target = old[-1]
    before = site_get(slug).raw
    t0 = time.monotonic()
    r = api("POST", "/projects/%s/deployments/%s/restore" % (pid, target["id"]), token=a.token)
    print("# restore answered in %.3f s" % (time.monotonic() - t0))
    check("test_deploy_build_restore_answers_200_live",
          r.status == 200 and (r.body.get("deployment") or {}).get("status") == "live"
          and re.match(TIME_RE, r.body.get("publishedAt") or ""), r)
    after = site_after_switch(slug, differs_from=before)
    check("test_deploy_build_restore_serves_the_earlier_site", after.status == 200 and after.raw != before, after)
    items2 = deployments(a, pid) or []
    st = {i["id"]: i.get("status") for i in items2}
    check("test_deploy_build_restore_supersedes_the_live_one",
          st.get(target["id"]) == "live" and st.get(live[0]["id"]) == "superseded"
          and list(st.values()).count("live") == 1, st)
    r = api("POST", "/projects/%s/deployments/%s/restore" % (pid, target["id"]), token=a.token)
    check("test_deploy_build_restore_of_the_live_one_is_200", r.status == 200 and site_get(slug).raw == after.raw, r)
    r = api("POST", "/projects/%s/deployments/%s/restore" % (pid, live[0]["id"]), token=a.token)
    check("test_deploy_build_restore_back_again",
          r.status == 200 and site_after_switch(slug, equals=before).raw == before, r)
    failed = [i for i in items2 if i.get("status") == "failed"]
    if failed:
        r = api("POST", "/projects/%s/deployments/%s/restore" % (pid, failed[0]["id"]), token=a.token)
        check("test_deploy_build_restore_failed_is_409", is_error(r, 409, "conflict"), r)
    # errors
    r = api("POST", "/projects/%s/deployments/%s/restore" % (pid, UNKNOWN_ID), token=a.token)
    check("test_deploy_build_restore_unknown_deployment_is_404", is_error(r, 404, "not_found"), r)
    r = api("POST", "/projects/%s/deployments/not-a-uuid/restore" % pid, token=a.token)
    check("test_deploy_build_restore_malformed_deployment_is_404", is_error(r, 404, "not_found"), r)
    r = api("POST", "/projects/%s/deployments/%s/restore" % (UNKNOWN_ID, target["id"]), token=a.token)
    check("test_deploy_build_restore_unknown_project_is_404", is_error(r, 404, "not_found"), r)
    r = api("POST", "/projects/%s/deployments/%s/restore" % (pid, target["id"]), token=outsider.token)
    check("test_deploy_build_restore_by_outsider_is_403", is_error(r, 403, "forbidden"), r)
    r = api("POST", "/projects/%s/deployments/%s/restore" % (pid, target["id"]))
    check("test_deploy_build_restore_without_token_is_401", is_error(r, 401, "unauthorized"), r)
    r = api("GET", "/projects/%s/deployments/%s/restore" % (pid, target["id"]), token=a.token)
    check("test_deploy_build_restore_get_is_405", is_error(r, 405, "method_not_allowed"), r)
    r = api("GET", "/projects/%s/deployments" % pid, token=outsider.token)
    check("test_deploy_build_list_by_outsider_is_403", is_error(r, 403, "forbidden"), r)
    r = api("GET", "/projects/%s/deployments" % pid)
    check("test_deploy_build_list_without_token_is_401", is_error(r, 401, "unauthorized"), r)
    r = api("GET", "/projects/%s/deployments" % UNKNOWN_ID, token=a.token)
    check("test_deploy_build_list_unknown_project_is_404", is_error(r, 404, "not_found"), r)
    r = api("GET", "/projects/not-a-uuid/deployments", token=a.token)
    check("test_deploy_build_list_malformed_project_is_404", is_error(r, 404, "not_found"), r)
    r = api("GET", "/projects/%s/deployments" % pid, token=a.token,
            headers={"Cookie": "svc_access_token=a; svc_access_token=b"})
    check("test_deploy_build_list_two_session_cookies_is_400", r.status == 400, r)
    r = api("POST", "/deploy/%s" % pid, token=a.token, headers={"Cookie": "svc_access_token=a; svc_access_token=b"})
    check("test_deploy_build_deploy_two_session_cookies_is_400", r.status == 400, r)


def test_pruned(a, wid):
    """SVC_DEPLOYMENTS_KEPT=3 in the test stack: the fourth-newest site is gone; its restore is 409."""
    p = create_in(a, wid, "Many deploys", template="blank")
    pid = (p.body or {}).get("id")
    for n in range(5):
        put(a, pid, "index.html", "<p>deploy %d</p>\n" % n)
        api("POST", "/deploy/%s" % pid, token=a.token, timeout=120)
    items = deployments(a, pid) or []
    kept = [i.get("restorable") for i in items]
    check("test_deploy_build_keeps_the_newest_three_sites", kept == [True, True, True, False, False], kept)
    kdir = os.path.join(DATA_DIR or "", "deployments", pid)
    if DATA_DIR and len(items) == 5:
        # a pruned site stays on disk for SVC_DEPLOYMENTS_GRACE_SECS (5 s here) after it was last live, for the
        # requests that found a file in it; the next publish after that removes it
        on_disk = sorted(x for x in os.listdir(kdir) if not x.startswith("."))
        check("test_deploy_build_pruned_sites_stay_for_their_grace",
              set(on_disk) >= {i["id"] for i in items[:3]} and set(on_disk) <= {i["id"] for i in items}, on_disk)
        time.sleep(6)
        put(a, pid, "index.html", "<p>deploy 5</p>\n")
        api("POST", "/deploy/%s" % pid, token=a.token, timeout=120)
        items = deployments(a, pid) or []
        check("test_deploy_build_pruned_sites_are_removed",
              sorted(x for x in os.listdir(kdir) if not x.startswith(".")) == sorted(i["id"] for i in items[:3]),
              os.listdir(kdir))
    if len(items) >= 5:
        r = api("POST", "/projects/%s/deployments/%s/restore" % (pid, items[4]["id"]), token=a.token)
        check("test_deploy_build_restore_of_a_pruned_site_is_409",
              is_error(r, 409, "conflict") and "no longer kept" in r.body.get("message", ""), r)
    # a hard delete takes the kept sites along
    api("DELETE", "/projects/%s?hard=true" % pid, token=a.token)
    if DATA_DIR:
        check("test_deploy_build_hard_delete_removes_the_kept_sites",
              not os.path.exists(os.path.join(DATA_DIR, "deployments", pid)))


def test_conflict(a, wid):
    """A second publish while one builds is 409; the first finishes."""
    p = create_in(a, wid, "Slow build", template="vite-vanilla")
    pid = (p.body or {}).get("id")
    put(a, pid, "slow.mjs", "import fs from 'node:fs'\nsetTimeout(() => { fs.mkdirSync('dist'); "
        "fs.writeFileSync('dist/index.html', 'slow') }, 6000)\n")
    set_build(a, pid, "node slow.mjs")
    res = {}

    def first():
        res["r"] = api("POST", "/deploy/%s" % pid, token=a.token, timeout=120)

    th = threading.Thread(target=first)
    th.start()
    time.sleep(3)
    r = api("POST", "/deploy/%s" % pid, token=a.token, timeout=120)
    check("test_deploy_build_second_publish_while_building_is_409", is_error(r, 409, "conflict"), r)
    items = deployments(a, pid) or []
    check("test_deploy_build_list_shows_building",
          items and items[0].get("status") == "building" and items[0].get("finishedAt") is None, items[:1])
    th.join()
    check("test_deploy_build_first_publish_finishes", res.get("r") is not None and res["r"].status == 200, res.get("r"))


def test_install_scripts(t):
    """Install scripts run only where a platform admin allows them for the workspace (PUT
    /workspaces/:wid/build-settings): not even the workspace's owner may (issue 27)."""
    a, wid = t.owner, t.wid
    padmin = platform_admin("deploybuild-padmin")
    url = "/workspaces/%s/build-settings" % wid
    r = api("GET", url, token=a.token)
    check("test_deploy_build_settings_default_off", r.status == 200 and r.body == {"allowInstallScripts": False}, r)
    p = create_in(a, wid, "Scripts", template="vite-vanilla")
    pid, slug = (p.body or {}).get("id"), (p.body or {}).get("slug")
    pkg = json.dumps({"name": "scripts", "private": True, "version": "0.0.0", "scripts": {
        "postinstall": "node -e \"require('fs').writeFileSync('ran.txt', 'yes')\"",
        "build": "node -e \"const fs = require('fs'); fs.mkdirSync('dist'); "
                 "fs.writeFileSync('dist/scripts.txt', fs.existsSync('ran.txt') ? 'ran' : 'off')\""}})
    put(a, pid, "package.json", pkg)
    r = api("POST", "/deploy/%s" % pid, token=a.token, timeout=120)
    check("test_deploy_build_install_scripts_off_by_default",
          r.status == 200 and site_get(slug, "/scripts.txt").body == "off", (r, site_get(slug, "/scripts.txt")))
    r = api("PUT", url, {"allowInstallScripts": True}, token=t.member.token)
    check("test_deploy_build_settings_put_by_member_is_403", is_error(r, 403, "forbidden"), r)
    r = api("PUT", url, {"allowInstallScripts": "yes"}, token=padmin.token)
    check("test_deploy_build_settings_put_not_boolean_is_400", is_error(r, 400, "validation_failed"), r)
    r = api("PUT", url, {}, token=padmin.token)
    check("test_deploy_build_settings_put_empty_is_400", is_error(r, 400, "validation_failed"), r)
    for who, acct in (("admin", t.admin), ("owner", a)):
        r = api("PUT", url, {"allowInstallScripts": True}, token=acct.token)
        check("test_deploy_build_settings_put_by_workspace_%s_is_403" % who,
              is_error(r, 403, "forbidden") and "platform admins" in r.body.get("message", ""), r)
    r = api("GET", url, token=a.token)
    check("test_deploy_build_settings_refused_put_changed_nothing",
          r.status == 200 and r.body == {"allowInstallScripts": False}, r)
    r = api("PUT", url, {"allowInstallScripts": True}, token=padmin.token)
    check("test_deploy_build_settings_put_by_platform_admin", r.status == 200 and r.body == {"allowInstallScripts": True},
          r)
    r = api("POST", "/deploy/%s" % pid, token=a.token, timeout=120)
    got = site_after_switch(slug, "/scripts.txt", equals=b"ran")
    check("test_deploy_build_install_scripts_run_when_allowed", r.status == 200 and got.body == "ran", (r, got))
    r = api("GET", url, token=t.outsider.token)
    check("test_deploy_build_settings_get_by_outsider_is_403", is_error(r, 403, "forbidden"), r)
    r = api("GET", url)
    check("test_deploy_build_settings_get_without_token_is_401", is_error(r, 401, "unauthorized"), r)
    r = api("GET", "/workspaces/%s/build-settings" % UNKNOWN_ID, token=a.token)
    check("test_deploy_build_settings_unknown_workspace_is_404", is_error(r, 404, "not_found"), r)
    api("PUT", url, {"allowInstallScripts": False}, token=padmin.token)


def main():
    t = Team("deploybuild")
    a, outsider = t.owner, t.outsider
    pid, slug, took = test_vite_vanilla(a, t.wid)
    if not pid:
        return
    test_stream(a, pid, slug)
    test_failing_build(a, pid, slug)
    test_restore(a, outsider, pid, slug)
    test_sandbox(a, t.wid, pid)
    test_pruned(a, t.wid)
    test_conflict(a, t.wid)
    test_install_scripts(t)
    test_timeout(a, t.wid)


if __name__ == "__main__":
    main()
    sys.exit(finish())
