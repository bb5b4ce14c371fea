#!/usr/bin/env python3
# test_build_teardown.py: a build's tmpfs (svc_sandbox_disk_mount(), source "svc-build") outlives a build whose
# process was killed; what tears a stack down removes those under its own data dir only: svc-worker's start-up sweep
# (at once when the mount's owner no longer runs, a live build's left alone), and `./svc-dev down` / the test stack's
# teardown (dev/common.sh unmount_builds, once its processes stopped). Needs root (mounts); the stack's svc-worker.
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from svclib import ADMIN_TOOL, TEST_CONFIG, check, finish  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))


def mounts():
    """The mount points of the "svc-build" tmpfs mounts now (/proc/self/mountinfo)."""
    out = set()
    with open("/proc/self/mountinfo") as f:
        for line in f:
            left, _, right = line.partition(" - ")
            fields, rest = left.split(), right.split()
            if len(rest) >= 2 and rest[0] == "tmpfs" and rest[1] == "svc-build":
                out.add(fields[4].replace("\\040", " "))
    return out


def mount(path, owner=None):
    """A build's tmpfs at path, as svc_sandbox_disk_mount() makes it, its owner file "<pid> <start>" when given."""
    os.makedirs(path, mode=0o700)
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=8m,mode=0700", "svc-build", path], check=True)
    with open(os.path.join(path, "left-by-the-build"), "w") as f:
        f.write("x")
    if owner:
        with open(path + ".owner", "w") as f:
            f.write(owner)


def start_time(pid):
    """Field 22 of /proc/<pid>/stat: the process's start time, as the owner files hold it."""
    with open("/proc/%d/stat" % pid) as f:
        return f.read().rpartition(")")[2].split()[19]


def dead_owner():
    """An owner that no longer runs: a process that has ended, its start time as it was."""
    p = subprocess.Popen(["sleep", "5"])
    owner = "%d %s\n" % (p.pid, start_time(p.pid))
    p.kill()
    p.wait()
    return owner


def unmount_all(paths):
    for p in paths:
        subprocess.run(["umount", "-l", p], capture_output=True)


def test_worker_sweep(top):
    """svc-worker's start-up sweep of its data dir's builds/: the dead owner's tree goes, the rest stays."""
    data, other = os.path.join(top, "data"), os.path.join(top, "data-other")
    builds = os.path.join(data, "builds")
    os.makedirs(builds, mode=0o711)
    dead, live = os.path.join(builds, "preview-dead"), os.path.join(builds, "preview-live")
    young, outside = os.path.join(builds, "preview-young"), os.path.join(other, "builds", "preview-dead")
    mount(dead, dead_owner())
    mount(live, "%d %s\n" % (os.getpid(), start_time(os.getpid())))
    mount(outside, dead_owner())
    os.makedirs(young)
    # a settings file of its own: this data dir, and no database (the worker sweeps, then cannot connect and ends)
    conf = os.path.join(top, "svc.conf")
    with open(TEST_CONFIG) as f:
        lines = [ln for ln in f if not ln.startswith(("SVC_DATA_DIR=", "SVC_DB_SOCKET=", "SVC_DB_HOST"))]
    with open(conf, "w") as f:
        f.writelines(lines + ["SVC_DATA_DIR=%s\n" % data, "SVC_DB_SOCKET=%s\n" % os.path.join(top, "no.sock")])
    os.chmod(conf, 0o600)
    worker = os.path.join(os.path.dirname(ADMIN_TOOL), "svc-worker")
    # the settings of the environment win over the file's: none of the runner's (its SVC_DATA_DIR is the stack's)
    env = {k: v for k, v in os.environ.items() if not k.startswith("SVC_")}
    env["SVC_CONFIG"] = conf
    r = subprocess.run([worker, "--once"], env=env, capture_output=True, text=True, timeout=120)
    now = mounts()
    check("test_build_teardown_worker_sweep_takes_a_killed_builds_tree",
          dead not in now and not os.path.exists(dead) and not os.path.exists(dead + ".owner"),
          (sorted(now), r.stderr[-2000:]))
    check("test_build_teardown_worker_sweep_leaves_a_running_builds_tree",
          live in now and os.path.exists(os.path.join(live, "left-by-the-build")) and os.path.isdir(young),
          (sorted(now), r.stderr[-2000:]))
    check("test_build_teardown_worker_sweep_stays_in_its_data_dir", outside in now, sorted(now))
    unmount_all([live, outside])


def test_stack_teardown(top):
    """dev/common.sh unmount_builds DIR (./svc-dev down, tests/stack.sh's teardown): every svc-build tmpfs under
    DIR, whatever its owner, and none elsewhere (a sibling with the same prefix, another stack's)."""
    var, sibling = os.path.join(top, "var-test"), os.path.join(top, "var-test2")
    inside = [os.path.join(var, "data", "builds", "preview-a"), os.path.join(var, "data", "npm", "tmp", "x.disk"),
              os.path.join(var, "data", "builds", "with space")]
    elsewhere = os.path.join(sibling, "data", "builds", "preview-b")
    for p in inside:
        mount(p)
    mount(elsewhere)
    script = 'log() { printf "%s\\n" "$*" >&2; }; . "$ROOT/dev/common.sh"; unmount_builds "$1"'
    r = subprocess.run(["bash", "-c", script, "unmount_builds", var], env=dict(os.environ, ROOT=ROOT),
                       capture_output=True, text=True, timeout=60)
    now = mounts()
    check("test_build_teardown_unmounts_every_build_under_its_dir",
          r.returncode == 0 and not any(p in now for p in inside), (r.returncode, r.stderr, sorted(now)))
    check("test_build_teardown_leaves_other_dirs_mounted", elsewhere in now, sorted(now))
    r = subprocess.run(["rm", "-rf", var], capture_output=True, text=True)
    check("test_build_teardown_dir_can_be_removed_after", r.returncode == 0 and not os.path.exists(var), r.stderr)
    unmount_all([elsewhere])


def main():
    if os.geteuid() != 0:
        print("# not root: no tmpfs can be mounted here; the teardown's unmounts are not checked")
        return
    top = tempfile.mkdtemp(prefix="svc-e2e-teardown-")
    try:
        test_worker_sweep(top)
        test_stack_teardown(top)
    finally:
        unmount_all(sorted((m for m in mounts() if m.startswith(top + "/")), reverse=True))
        subprocess.run(["rm", "-rf", top])


if __name__ == "__main__":
    main()
    sys.exit(finish())
