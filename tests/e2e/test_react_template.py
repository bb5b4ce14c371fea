#!/usr/bin/env python3
# test_react_template.py: the react template (React, TypeScript, Vite, Tailwind CSS; issue 27) through the real
# stack: a project made from it has the template's files and lockfile; its preview (the dev server, or the
# build-on-save preview) shows the app and then a saved change; publishing runs npm ci with the real packages
# from the npm registry and vite build in the sandbox (cgroup-bounded: vite's WebAssembly needs no address-space
# limit) and serves dist/ with Tailwind's generated CSS; the agent's system prompt describes the template's
# layout and names only files the project has.
import json
import os
import re
import sys
import time
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from svclib import HTTP_PORT, api, check, finish, items_of, request, site_get  # noqa: E402
from agentlib import system_prompt_of  # noqa: E402
from wslib import Team, create_in  # noqa: E402

HEAD = "Start building"     # the heading src/App.tsx renders
CHANGED = "Recipes of the day"
TEMPLATE_FILES = ("index.html", "package.json", "package-lock.json", "tsconfig.json", "vite.config.ts",
                  "src/main.tsx", "src/App.tsx", "src/index.css", "src/components/Counter.tsx", "public/favicon.svg")


def pget(url, path="/"):
    host = urllib.parse.urlsplit(url).hostname
    return request("GET", "http://127.0.0.1:%d%s" % (HTTP_PORT, path), None, {"Host": "%s:%d" % (host, HTTP_PORT)},
                   timeout=60)


def put(acct, pid, path, content):
    return api("PUT", "/projects/%s/files/%s" % (pid, path), {"content": content, "overwrite": True}, token=acct.token)


def file_text(acct, pid, path):
    """The file's bytes as text ('' when it cannot be read): GET /projects/:id/files/<path> answers the raw bytes."""
    r = api("GET", "/projects/%s/files/%s" % (pid, path), token=acct.token)
    return r.raw.decode("utf-8", "replace") if r.status == 200 and isinstance(r.raw, bytes) else ""


def preview_url(acct, pid):
    r = api("GET", "/projects/%s/preview" % pid, token=acct.token)
    return r.body.get("url") if r.status == 200 and isinstance(r.body, dict) else None


def app_text(url, page):
    """What the preview's page runs, as text: a dev server's page (Vite's client, /src/main.tsx) gives the
    transformed src/App.tsx and src/components/Counter.tsx; a built page gives its /assets/ scripts and styles."""
    if "/@vite/client" in page.body or "/src/main.tsx" in page.body:
        parts = [pget(url, p) for p in ("/src/App.tsx", "/src/components/Counter.tsx", "/src/index.css")]
        return "dev", "".join(r.body for r in parts if r.status == 200)
    assets = re.findall(r'(?:src|href)="(/assets/[^"]+\.(?:js|css))"', page.body)
    return "build", "".join(pget(url, a).body for a in assets)


def wait_app(url, want, secs):
    """GETs the preview until its app's text holds `want`; (kind, seconds, last page, text)."""
    t0 = time.monotonic()
    kind, text, r = None, "", None
    while time.monotonic() - t0 < secs:
        r = pget(url)
        if r.status == 200:
            kind, text = app_text(url, r)
            if want in text:
                break
        if "The build failed" in (r.body or ""):
            break
        time.sleep(0.5)
    return kind, time.monotonic() - t0, r, text


def test_files(a, pid):
    r = api("GET", "/projects/%s/files" % pid, token=a.token)
    paths = [x.get("path") for x in items_of(r.body)] if r.status == 200 else []
    check("test_react_template_has_its_files", all(p in paths for p in TEMPLATE_FILES),
          sorted(set(TEMPLATE_FILES) - set(paths)))
    check("test_react_template_no_node_modules_or_dist", not any(p.startswith(("node_modules/", "dist/"))
                                                                  for p in paths), paths)
    try:
        doc = json.loads(file_text(a, pid, "package.json"))
    except ValueError:
        doc = {}
    deps = dict(doc.get("dependencies") or {}, **(doc.get("devDependencies") or {}))
    check("test_react_template_is_the_fields_stack",
          re.match(r"^\^?(18|19)\.", deps.get("react", "")) and "vite" in deps and "typescript" in deps
          and "tailwindcss" in deps and (doc.get("scripts") or {}).get("dev") and (doc.get("scripts") or {}).get("build"),
          doc)
    try:
        pk = json.loads(file_text(a, pid, "package-lock.json")).get("packages") or {}
    except ValueError:
        pk = {}
    # every package pinned to a version, its registry tarball and its hash (those bundled inside another come with it)
    loose = [k for k, v in pk.items() if k and not v.get("inBundle") and not (
        v.get("version") and v.get("integrity", "").startswith("sha512-")
        and v.get("resolved", "").startswith("https://registry.npmjs.org/"))]
    check("test_react_template_lockfile_pins_every_package", len(pk) > 50 and not loose, (len(pk), loose[:5]))
    check("test_react_template_native_binaries_are_optional_dependencies",
          all((pk.get("node_modules/" + n) or {}).get("optional") for n in
              ("@tailwindcss/oxide-linux-x64-gnu", "@esbuild/linux-x64", "@rollup/rollup-linux-x64-gnu")), None)
    return paths


def test_preview(a, pid):
    url = preview_url(a, pid)
    check("test_react_template_preview_url", bool(url), url)
    if not url:
        return
    # The first preview installs the real packages and starts Vite (or builds): minutes at most on a busy machine.
    kind, took, r, text = wait_app(url, HEAD, 300)
    print("# react: first preview (%s) in %.1f s" % (kind, took))
    check("test_react_template_preview_shows_the_app", HEAD in text, (kind, r, text[:300]))
    check("test_react_template_preview_has_tailwinds_css", "bg-indigo-600" in text or "--color-indigo-600" in text,
          (kind, text[:300]))
    put(a, pid, "src/App.tsx", file_text(a, pid, "src/App.tsx").replace(HEAD, CHANGED))
    kind, took, r, text = wait_app(url, CHANGED, 180)
    print("# react: a saved change in the preview (%s) after %.1f s" % (kind, took))
    check("test_react_template_preview_shows_a_saved_change", CHANGED in text, (kind, r, text[:300]))


def test_publish(a, pid, slug):
    t0 = time.monotonic()
    r = api("POST", "/deploy/%s" % pid, token=a.token, timeout=600)
    print("# react: publish took %.1f s" % (time.monotonic() - t0))
    d = (r.body or {}).get("deployment") or {} if isinstance(r.body, dict) else {}
    check("test_react_template_publishes", r.status == 200 and d.get("status") == "live", r)
    log = d.get("logExcerpt") or ""
    check("test_react_template_publish_ran_npm_and_vite", "npm ci" in log and "npm run build" in log
          and "vite" in log, log[-800:])
    page = site_get(slug)
    assets = re.findall(r'(?:src|href)="(/assets/[^"]+\.(js|css))"', page.body or "")
    check("test_react_template_site_serves_the_built_page",
          page.status == 200 and '<div id="root">' in page.body and {k for _, k in assets} == {"js", "css"}, page)
    js = "".join(site_get(slug, p).body for p, k in assets if k == "js")
    css = "".join(site_get(slug, p).body for p, k in assets if k == "css")
    check("test_react_template_site_has_the_change_and_react", CHANGED in js and HEAD not in js and "createRoot" in js,
          js[:200])
    check("test_react_template_site_has_tailwinds_generated_css",
          "bg-indigo-600" in css and ".min-h-screen" in css and "@tailwind" not in css, css[:300])
    check("test_react_template_site_serves_dist_only", site_get(slug, "/src/App.tsx").status == 404
          and site_get(slug, "/package.json").status == 404)
    check("test_react_template_site_serves_public", site_get(slug, "/favicon.svg").status == 200)


def test_system_prompt(a, pid, paths):
    marker = "react-template-prompt-%d" % os.getpid()
    events, err, system = system_prompt_of(a, pid, "What is in this project? " + marker)
    check("test_react_template_chat_turn_runs", err is None and events and events[-1].get("type") ==
          "session.task_complete", (err, [e.get("type") for e in events or []]))
    check("test_react_template_system_prompt_describes_the_layout",
          "React" in system and "src/App.tsx" in system and "Tailwind" in system and "dist/" in system
          and "static web app" not in system, system[:400])
    named = set(re.findall(r"\b((?:src|public)/[\w./-]+\.\w+|index\.html|vite\.config\.ts|tsconfig\.json)\b", system))
    check("test_react_template_system_prompt_names_only_its_files", named and named <= set(paths),
          sorted(named - set(paths)))


def main():
    t = Team("react-tmpl")
    a = t.owner
    p = create_in(a, t.wid, "React app", template="react")
    pid, slug = (p.body or {}).get("id"), (p.body or {}).get("slug")
    check("test_react_template_project_created", p.status == 201 and pid and p.body.get("template") == "react", p)
    if not pid:
        return finish()
    paths = test_files(a, pid)
    test_system_prompt(a, pid, paths)
    test_preview(a, pid)
    test_publish(a, pid, slug)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
