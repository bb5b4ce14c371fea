#!/usr/bin/env python3
# test_data_modes.py: issue 25 item 11: after a build, a preview build, a thumbnail and a publish, nothing under
# SVC_DATA_DIR is readable by another local account: the areas' modes (docs/operations.md "Files and their modes"),
# the served areas in the web server's group, and the site still served by lighttpd and by Apache (www-data).
import grp
import os
import stat
import sys
import time
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from svclib import DATA_DIR, api, check, finish, setting, signup, site_get  # noqa: E402
from wslib import create_in  # noqa: E402

APACHE_URL = os.environ.get("SVC_TEST_APACHE_URL", "")
PRIVATE = {"projects": 0o700, "previews": 0o700, "thumbnails": 0o700, "builds": 0o711}
SERVED = ("deployments", "published", "sites")


def wait_for(path, secs=180):
    end = time.monotonic() + secs
    while not os.path.exists(path) and time.monotonic() < end:
        time.sleep(0.5)
    return os.path.exists(path)


def walk(top):
    """(path, lstat) of top and of everything below it, symlinks not followed."""
    yield top, os.lstat(top)
    for root, dirs, files in os.walk(top):
        for n in dirs + files:
            p = os.path.join(root, n)
            try:
                yield p, os.lstat(p)
            except FileNotFoundError:
                pass


def main():
    if not DATA_DIR or not os.path.isdir(DATA_DIR):
        check("test_data_modes_needs_the_stack's_data_dir", False, "SVC_DATA_DIR is not set")
        return
    a = signup(tag="modes")
    r = create_in(a, a.workspace_id, "Modes site", template="vite-vanilla")
    pid, slug = (r.body or {}).get("id"), (r.body or {}).get("slug")
    check("test_data_modes_project_created", r.status == 201 and pid, r)
    if not pid:
        return
    # a change queues a preview build and a thumbnail; the publish builds in builds/<deploymentId>
    w = api("PUT", "/projects/%s/files/README.md" % pid, {"content": "# Modes\n", "overwrite": True}, token=a.token)
    check("test_data_modes_file_written", w.status in (200, 201), w)
    d = api("POST", "/deploy/%s" % pid, token=a.token, timeout=180)
    check("test_data_modes_published", d.status == 200 and ((d.body or {}).get("deployment") or {}).get("status")
          == "live", d)
    check("test_data_modes_preview_built", wait_for(os.path.join(DATA_DIR, "previews", pid, "site")))
    check("test_data_modes_thumbnail_stored", wait_for(os.path.join(DATA_DIR, "thumbnails", pid + ".png")))

    sites = setting("SVC_SITES_DIR") or os.path.join(DATA_DIR, "sites")
    tops = dict((os.path.join(DATA_DIR, k), v) for k, v in PRIVATE.items())
    served = [os.path.join(DATA_DIR, k) for k in SERVED[:2]] + [sites]
    web_gid = grp.getgrnam(setting("SVC_WEB_GROUP") or "www-data").gr_gid

    m = stat.S_IMODE(os.lstat(DATA_DIR).st_mode)
    check("test_data_modes_data_dir_is_0711 (%o)" % m, m == 0o711, m)
    for top, want in sorted(tops.items()):
        m = stat.S_IMODE(os.lstat(top).st_mode)
        check("test_data_modes_%s_is_%o (%o)" % (os.path.basename(top), want, m), m == want, m)
    for top in served:
        st = os.lstat(top)
        check("test_data_modes_%s_is_2750_of_the_web_servers_group (%o, gid %d)" % (
              os.path.basename(top), stat.S_IMODE(st.st_mode), st.st_gid),
              stat.S_IMODE(st.st_mode) == 0o2750 and st.st_gid == web_gid, st)

    # nothing below gives other accounts any access, but passing through the data dir and builds/
    leaks = []
    for p, st in walk(DATA_DIR):
        if stat.S_ISLNK(st.st_mode) or p in (DATA_DIR, os.path.join(DATA_DIR, "builds")):
            continue
        if st.st_mode & 0o007:
            leaks.append("%s %o" % (p, stat.S_IMODE(st.st_mode)))
    check("test_data_modes_nothing_is_open_to_other_accounts (%d)" % len(leaks), not leaks, leaks[:20])

    # in the served areas: directories 2750, files at most 0640 (0750 when executable; a lock file 0600), all of
    # the web server's group
    wrong = []
    for top in served:
        for p, st in walk(top):
            if stat.S_ISLNK(st.st_mode):
                continue
            m = stat.S_IMODE(st.st_mode)
            ok = (m == 0o2750) if stat.S_ISDIR(st.st_mode) else (m & 0o027) == 0 and (m & 0o600) == 0o600
            if not ok or st.st_gid != web_gid:
                wrong.append("%s %o gid %d" % (p, m, st.st_gid))
    check("test_data_modes_served_areas_are_2750_and_0640_of_the_web_servers_group (%d)" % len(wrong), not wrong,
          wrong[:20])
    png = os.lstat(os.path.join(DATA_DIR, "thumbnails", pid + ".png"))
    check("test_data_modes_thumbnail_is_0600 (%o)" % stat.S_IMODE(png.st_mode), stat.S_IMODE(png.st_mode) == 0o600)

    # both web servers still serve the site: lighttpd, and Apache whose children run as www-data
    page = site_get(slug)
    check("test_data_modes_site_served_by_lighttpd", page.status == 200 and "<div id=\"app\">" in page.body, page)
    if APACHE_URL:
        page = site_get(slug, port=urllib.parse.urlsplit(APACHE_URL).port)
        check("test_data_modes_site_served_by_apache", page.status == 200 and "<div id=\"app\">" in page.body, page)


if __name__ == "__main__":
    main()
    sys.exit(finish())
