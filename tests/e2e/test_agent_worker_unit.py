#!/usr/bin/env python3
# test_agent_worker_unit.py: httpd-conf/svc-worker@.service is a valid unit whose ExecStart runs svc-worker, which stops on SIGTERM
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from svclib import ADMIN_TOOL, TEST_CONFIG, check, finish  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
UNIT = os.path.join(ROOT, "httpd-conf", "svc-worker@.service")


def service_lines(text):
    """The [Service] section as a list of (key, value)."""
    out, section = [], None
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("["):
            section = line
            continue
        if section == "[Service]" and "=" in line:
            k, v = line.split("=", 1)
            out.append((k, v))
    return out


def test_unit_is_valid(text):
    sa = shutil.which("systemd-analyze")
    if not sa:
        check("test_agent_worker_unit_verify_skipped (no systemd-analyze)", True)
        return
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "svc-worker@1.service")
        with open(path, "w") as f:
            f.write(text)
        p = subprocess.run([sa, "verify", path], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=60)
    out = p.stdout.decode("utf-8", "replace")
    check("test_agent_worker_unit_passes_systemd_analyze_verify", p.returncode == 0 and "svc-worker" not in out, out)


def test_exec_start_runs_the_worker(text):
    svc = service_lines(text)
    keys = dict(svc)
    check("test_agent_worker_unit_runs_as_svc_and_restarts",
          keys.get("User") == "svc" and keys.get("Restart") == "on-failure" and keys.get("KillSignal") == "SIGTERM"
          and "/var/lib/svc" in keys.get("ReadWritePaths", ""), keys)
    if not ADMIN_TOOL or not TEST_CONFIG:
        check("test_agent_worker_unit needs SVC_ADMIN_TOOL and SVC_TEST_CONFIG (./svc-dev test)", False)
        return
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "ASAN_OPTIONS": "detect_leaks=0"}
    for k, v in svc:
        if k == "Environment":
            name, value = v.split("=", 1)
            env[name] = value
    # this machine's paths instead of an installed svc's
    env["SVC_CONFIG"] = TEST_CONFIG
    env["SVC_BINDIR"] = os.path.dirname(ADMIN_TOOL)
    cmd = keys.get("ExecStart", "")
    check("test_agent_worker_unit_exec_start_is_a_shell_line", cmd.startswith("/bin/sh -c "), cmd)
    script = cmd[len("/bin/sh -c "):].strip("'")
    p = subprocess.Popen(["/bin/sh", "-c", script], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    time.sleep(2.0)
    alive = p.poll() is None
    check("test_agent_worker_unit_exec_start_keeps_running", alive, p.poll())
    start = time.monotonic()
    if alive:
        p.send_signal(signal.SIGTERM)
    try:
        p.wait(timeout=10)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
    took = time.monotonic() - start
    out = p.stdout.read().decode("utf-8", "replace")
    check("test_agent_worker_unit_sigterm_stops_the_idle_worker (%.2f s)" % took,
          alive and p.returncode == 0 and took < 5, (p.returncode, out[-2000:]))


def main():
    with open(UNIT) as f:
        text = f.read()
    test_unit_is_valid(text)
    test_exec_start_runs_the_worker(text)


if __name__ == "__main__":
    try:
        main()
    except Exception:
        import traceback
        check("test_agent_worker_unit ran to the end", False, traceback.format_exc())
    sys.exit(finish())
