#!/usr/bin/env python3
# test_deploy_site.py: what a published site serves: its marker /.well-known/svc-site (the project's id,
# written by publish, never a file of the project), the rest of /.well-known/, and never .git/ or any
# other dotfile; run through lighttpd and again through Apache (./svc-dev test).
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from svclib import APP_URL, DATA_DIR, api, check, create_project, finish, request, signup, site_get  # noqa: E402

MARKER = "/.well-known/svc-site"


def put(pid, path, content):
    """Writes a file into the project's working tree on disk (the web server keeps dot paths from the API)."""
    full = os.path.join(DATA_DIR, "projects", pid, path)
    os.makedirs(os.path.dirname(full), exist_ok=True)
    with open(full, "w") as f:
        f.write(content)
    return os.path.isfile(full)


def main():
    a = signup(tag="site")
    p = create_project(a, template="todo-app", name="Marker site")
    pid, slug = (p.body or {}).get("id"), (p.body or {}).get("slug")
    check("test_deploy_site_project_created", p.status == 201 and pid and slug, p)
    if not (pid and slug and DATA_DIR):
        return
    # The project's own files: a forged marker, another .well-known file, dotfiles.
    for path, content in ((".well-known/svc-site", "forged"), (".well-known/security.txt", "Contact: a@b.c\n"),
                          (".env", "SECRET=1\n"), (".well-known/.hidden/x", "no\n"), ("dir/.secret", "no\n")):
        check("test_deploy_site_project_file_%s_written" % path.replace("/", "_").replace(".", ""),
              put(pid, path, content), path)
    r = api("POST", "/deploy/%s" % pid, token=a.token)
    check("test_deploy_site_published", r.status == 200, r)

    r = site_get(slug, MARKER)
    check("test_deploy_site_marker_holds_the_project_id", r.status == 200 and r.body == pid, r)
    check("test_deploy_site_marker_is_text_plain",
          (r.headers.get("content-type") or "").replace(" ", "").startswith("text/plain"), r.headers)
    r = site_get(slug, "/.well-known/security.txt")
    check("test_deploy_site_serves_other_well_known_files", r.status == 200 and "Contact:" in r.body, r)
    for path in ("/.env", "/.git/config", "/.git/HEAD", "/.well-known/.hidden/x", "/dir/.secret",
                 "/%2egit/config", "/%2eenv", "/.well-known/%2ehidden/x", "/.well-known/../.git/config",
                 "/.well-known/../.env", "/x/../.env"):
        r = site_get(slug, path)
        check("test_deploy_site_never_serves_%s" % path.strip("/").replace("/", "_").replace(".", "").replace("%", ""),
              r.status in (403, 404) and "SECRET" not in r.body and "[core]" not in r.body and "no\n" != r.body,
              (path, r))
    # Publishing again writes the marker again (a new site, the same id).
    r = api("POST", "/deploy/%s" % pid, token=a.token)
    r2 = site_get(slug, MARKER)
    check("test_deploy_site_marker_after_republish", r.status == 200 and r2.status == 200 and r2.body == pid, r2)
    # Only site hosts serve /.well-known/: the app's host does not.
    r = request("GET", APP_URL + MARKER)
    check("test_deploy_site_app_host_does_not_serve_well_known", r.status in (403, 404) and pid not in r.body, r)


if __name__ == "__main__":
    main()
    sys.exit(finish())
