#!/usr/bin/env python3
# test_backup.py: svc-admin backup DIR and restore DIR (docs/operations.md "Backups"): a backup of the
# test stack holds the database, each project as a git bundle, the published sites and the settings
# without secrets; restored into a second, empty instance (its own database and data directory) it
# gives the same users, projects, versions, files and sites; restore refuses an instance that is not
# empty, and backup a directory that is not.
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from svclib import ADMIN_TOOL, TEST_CONFIG, api, check, create_project, finish, setting, signup, sql  # noqa: E402


def admin(config, *args):
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "SVC_CONFIG": config, "ASAN_OPTIONS": "detect_leaks=0"}
    p = subprocess.run([ADMIN_TOOL] + list(args), env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       timeout=300)
    return p.returncode, p.stdout.decode("utf-8", "replace")


def sql_in(db, query):
    sock = setting("SVC_DB_SOCKET")
    out = subprocess.run(["mariadb", "--no-defaults", "--socket=" + sock, "-uroot", "-N", "-B", db, "-e", query],
                         capture_output=True, text=True, timeout=60)
    if out.returncode != 0:
        raise AssertionError("mariadb failed: " + out.stderr)
    return out.stdout


def tree(root):
    """{relative path: bytes} of the regular files under root, .git excluded."""
    out = {}
    for d, dirs, files in os.walk(root):
        dirs[:] = [x for x in dirs if x != ".git"]
        for f in files:
            p = os.path.join(d, f)
            if os.path.isfile(p) and not os.path.islink(p):
                with open(p, "rb") as fh:
                    out[os.path.relpath(p, root)] = fh.read()
    return out


def main():
    if not ADMIN_TOOL or not TEST_CONFIG:
        check("test_backup needs SVC_ADMIN_TOOL and SVC_TEST_CONFIG (./svc-dev test)", False)
        return
    a = signup(tag="backup")
    p = create_project(a, template="blank", name="Backed up")
    pid, slug = p.body["id"], p.body["slug"]
    r = api("PUT", "/projects/%s/files/notes/today.md" % pid, {"content": "# kept\n", "overwrite": True},
            token=a.token)
    check("test_backup_file_written", r.status in (200, 201), r)
    r = api("POST", "/deploy/%s" % pid, token=a.token, timeout=120)
    check("test_backup_published", r.status == 200, r)
    data_dir = setting("SVC_DATA_DIR")
    work = tempfile.mkdtemp(prefix="svc-backup-test-")
    try:
        run_checks(a, pid, slug, data_dir, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
        try:
            sql("DROP DATABASE IF EXISTS svc_restored")
        except AssertionError:
            pass


def run_checks(a, pid, slug, data_dir, work):
    bdir = os.path.join(work, "backup")
    rc, out = admin(TEST_CONFIG, "backup", bdir)
    check("test_backup_backup_exits_0", rc == 0, out)
    names = sorted(os.listdir(bdir)) if os.path.isdir(bdir) else []
    check("test_backup_has_its_parts", names == ["MANIFEST", "database.sql", "files.tar", "repos", "svc.conf"], names)
    check("test_backup_dir_is_private", os.path.isdir(bdir) and (os.stat(bdir).st_mode & 0o077) == 0,
          oct(os.stat(bdir).st_mode) if os.path.isdir(bdir) else None)
    check("test_backup_project_is_a_bundle", os.path.isfile(os.path.join(bdir, "repos", pid + ".bundle")), names)
    if os.path.isfile(os.path.join(bdir, "repos", pid + ".bundle")):
        empty = os.path.join(work, "verify")  # git bundle verify needs a repository, any will do
        subprocess.run(["git", "init", "-q", empty], check=True)
        v = subprocess.run(["git", "bundle", "verify", os.path.join(bdir, "repos", pid + ".bundle")],
                           capture_output=True, text=True, cwd=empty)
        check("test_backup_bundle_verifies", v.returncode == 0, v.stderr)
    conf = open(os.path.join(bdir, "svc.conf")).read() if "svc.conf" in names else ""
    secret = setting("JWT_SECRET") or ""
    check("test_backup_settings_without_secrets", conf and "JWT_SECRET=\n" in conf and secret not in conf,
          conf[:300])
    with open(os.path.join(bdir, "database.sql"), "rb") as f:
        dump = f.read()
    check("test_backup_dump_has_the_user", a.email.encode() in dump, len(dump))

    rc, out = admin(TEST_CONFIG, "backup", bdir)
    check("test_backup_refuses_a_directory_that_is_not_empty", rc == 1 and "empty directory" in out, (rc, out))
    rc, out = admin(TEST_CONFIG, "restore", bdir)
    check("test_backup_restore_refuses_an_instance_with_users", rc == 1 and "empty instance" in out, (rc, out))
    rc, out = admin(TEST_CONFIG, "restore", work)
    check("test_backup_restore_refuses_what_is_not_a_backup", rc == 1 and "MANIFEST" in out, (rc, out))

    # a second, empty instance: its own database (migrated, as a fresh install is) and data directory
    sql("DROP DATABASE IF EXISTS svc_restored")
    sql("CREATE DATABASE svc_restored CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci")
    data2 = os.path.join(work, "data2")
    os.makedirs(data2)
    conf2 = os.path.join(work, "svc2.conf")
    with open(TEST_CONFIG) as f, open(conf2, "w") as o:
        for line in f:
            if line.startswith(("SVC_DB_NAME=", "SVC_DATA_DIR=", "SVC_SITES_RELOAD_CMD=")):
                continue
            o.write(line)
        o.write("SVC_DB_NAME=svc_restored\nSVC_DATA_DIR=%s\n" % data2)
    migrate = os.path.join(os.path.dirname(ADMIN_TOOL), "svc-migrate")
    m = subprocess.run([migrate], env={"PATH": os.environ.get("PATH", ""), "SVC_CONFIG": conf2,
                                       "ASAN_OPTIONS": "detect_leaks=0"}, capture_output=True, text=True, timeout=120)
    check("test_backup_second_instance_migrated", m.returncode == 0, m.stderr[-500:])
    rc, out = admin(conf2, "restore", bdir)
    check("test_backup_restore_exits_0", rc == 0, out)

    q = "SELECT COUNT(*) FROM users; SELECT COUNT(*) FROM projects; SELECT COUNT(*) FROM deployments; SELECT COUNT(*) FROM chats"
    check("test_backup_restored_database_matches", sql_in("svc_restored", q) == sql(q),
          (sql_in("svc_restored", q), sql(q)))
    one = "SELECT email FROM users WHERE email = '%s'" % a.email
    check("test_backup_restored_user_is_there", sql_in("svc_restored", one).strip() == a.email)
    src, dst = os.path.join(data_dir, "projects", pid), os.path.join(data2, "projects", pid)
    check("test_backup_restored_files_match", os.path.isdir(dst) and tree(dst) == tree(src),
          sorted(tree(dst)) if os.path.isdir(dst) else None)
    heads = [subprocess.run(["git", "-C", d, "rev-parse", "HEAD"], capture_output=True, text=True).stdout
             for d in (src, dst)]
    check("test_backup_restored_history_matches", heads[0] and heads[0] == heads[1], heads)
    s1, s2 = os.path.join(data_dir, "published", slug), os.path.join(data2, "published", slug)
    check("test_backup_restored_site_matches", os.path.isdir(s2) and tree(s2) == tree(s1),
          sorted(tree(s2)) if os.path.isdir(s2) else None)
    rc, out = admin(conf2, "restore", bdir)
    check("test_backup_restore_twice_is_refused", rc == 1 and "empty instance" in out, (rc, out))


if __name__ == "__main__":
    main()
    sys.exit(finish())
