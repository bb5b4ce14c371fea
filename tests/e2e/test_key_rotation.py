#!/usr/bin/env python3
# test_key_rotation.py: svc-admin rotate-key while the service runs (issue 16, "rotation while serving";
# docs/operations.md "Rotating ENCRYPTION_KEY"), envelope mode, and a truly different key failing closed.
#
# It changes the keys of the no-provider front end (its own lighttpd and responders, settings file
# svc-noprovider.conf) and restarts that front's responders, as an admin would after editing the
# settings; the main front keeps the stack's key. At the end the keys are rotated back and the file
# restored, so the stack is as before. Must run alone: ./svc-dev test runs the e2e files one at a time.
import base64
import os
import secrets
import signal
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from svclib import ADMIN_TOOL, NOPROVIDER_BASE_URL, PROVIDER_URL, TEST_CONFIG, api, check, finish, signup, sql  # noqa: E402

VAR = os.path.dirname(TEST_CONFIG)
NP_CONF = os.path.join(VAR, "svc-noprovider.conf")
NP_PID = os.path.join(VAR, "run-noprovider", "lighttpd.pid")
KEY1 = "sk-rotate-one-" + secrets.token_hex(8)
KEY2 = "sk-rotate-two-" + secrets.token_hex(8)


def admin(*args):
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "SVC_CONFIG": NP_CONF, "ASAN_OPTIONS": "detect_leaks=0"}
    p = subprocess.run([ADMIN_TOOL] + list(args), env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       timeout=300)
    return p.returncode, p.stdout.decode("utf-8", "replace")


def write_conf(text):
    tmp = NP_CONF + ".tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(text)
    os.rename(tmp, NP_CONF)


def with_keys(original, current, previous=None, envelope=False):
    lines = [ln for ln in original.splitlines()
             if not ln.startswith(("ENCRYPTION_KEY=", "ENCRYPTION_KEY_PREVIOUS=", "SVC_ENVELOPE_ENCRYPTION="))]
    lines.append("ENCRYPTION_KEY=" + current)
    if previous:
        lines.append("ENCRYPTION_KEY_PREVIOUS=" + previous)
    lines.append("SVC_ENVELOPE_ENCRYPTION=" + ("1" if envelope else "0"))
    return "\n".join(lines) + "\n"


def children(parent):
    out = []
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % p) as f:
                if int(f.read().rsplit(")", 1)[1].split()[1]) == parent:
                    out.append(int(p))
        except (OSError, ValueError, IndexError):
            pass
    return out


def restart_responders():
    """Kills the no-provider front's responders; lighttpd starts new ones, which read the settings again."""
    with open(NP_PID) as f:
        parent = int(f.read().strip())
    for p in children(parent):
        try:
            os.kill(p, signal.SIGKILL)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            r = api("GET", "/auth/me", base=NOPROVIDER_BASE_URL, timeout=5)
            if r.status == 401:
                return True
        except Exception:
            pass
        time.sleep(0.2)
    return False


def last4(acct, base=NOPROVIDER_BASE_URL):
    r = api("GET", "/workspaces/%s/ai-provider" % acct.workspace_id, token=acct.token, base=base)
    return r.status, r.body.get("apiKeyLast4") if isinstance(r.body, dict) else None


def put_key(acct, key, base=None):
    body = {"protocol": "openai", "baseUrl": PROVIDER_URL + "/v1", "model": "double", "apiKey": key}
    return api("PUT", "/workspaces/%s/ai-provider" % acct.workspace_id, body, token=acct.token, base=base)


def stored(wid):
    return sql("SELECT api_key FROM workspace_ai_providers WHERE workspace_id = '%s'" % wid).strip()


def key_id(b64):
    raw = base64.b64decode(b64)
    return int.from_bytes(raw[1:5], "big")


def main():
    if not (ADMIN_TOOL and TEST_CONFIG and NOPROVIDER_BASE_URL and os.path.exists(NP_PID)):
        check("test_rotate_stack_is_there", False, "needs SVC_ADMIN_TOOL, SVC_TEST_CONFIG and the no-provider front")
        return finish()
    original = open(NP_CONF).read()
    key_a = [ln.split("=", 1)[1] for ln in original.splitlines() if ln.startswith("ENCRYPTION_KEY=")][-1]
    key_b, key_c = secrets.token_hex(32), secrets.token_hex(32)
    one, two = signup(tag="rotate-a"), signup(tag="rotate-b")
    r = put_key(one, KEY1)
    check("test_rotate_key_stored_by_the_stack_key", r.status == 200 and r.body.get("hasApiKey") is True, r)
    sealed_a = stored(one.workspace_id)
    check("test_rotate_sealed_by_the_instance_key", key_id(sealed_a) == 0 and KEY1 not in sealed_a, sealed_a)
    try:
        # 1. the new key with the old as previous: values sealed by the old one still open
        write_conf(with_keys(original, key_b, key_a))
        check("test_rotate_responders_restarted", restart_responders())
        check("test_rotate_previous_key_opens_old_values", last4(one) == (200, KEY1[-4:]), last4(one))
        rc, out = admin("rotate-key", "--check")
        check("test_rotate_check_counts_values_on_the_previous_key",
              rc == 1 and " 0 still on ENCRYPTION_KEY_PREVIOUS" not in out and "still on ENCRYPTION_KEY_PREVIOUS" in out,
              out)

        # 2. rotate-key while the front serves reads and writes of the secret
        stop, bad, reads, writes = threading.Event(), [], [0], [0]

        def load():
            i = 0
            while not stop.is_set():
                i += 1
                if i % 5 == 0:
                    r = put_key(one, KEY1, base=NOPROVIDER_BASE_URL)
                    writes[0] += 1
                    if r.status != 200:
                        bad.append(("put", r.status))
                got = last4(one)
                reads[0] += 1
                if got != (200, KEY1[-4:]):
                    bad.append(("get", got))

        t = threading.Thread(target=load)
        t.start()
        time.sleep(0.5)
        runs = [admin("rotate-key") for _ in range(3)]
        time.sleep(0.5)
        stop.set()
        t.join(60)
        check("test_rotate_while_serving_no_request_failed", not bad and reads[0] > 10,
              {"bad": bad[:5], "reads": reads[0], "writes": writes[0]})
        check("test_rotate_key_leaves_nothing_on_the_previous_key",
              all(" 0 still on ENCRYPTION_KEY_PREVIOUS" in out for _, out in runs), [o for _, o in runs])
        check("test_rotate_key_output_never_holds_a_secret",
              all(KEY1 not in out and key_a not in out and key_b not in out for _, out in runs))
        sealed_b = stored(one.workspace_id)
        check("test_rotate_value_resealed", sealed_b != sealed_a and key_id(sealed_b) == 0)

        # 3. the new key alone: everything opens; the old values are gone
        write_conf(with_keys(original, key_b))
        restart_responders()
        check("test_rotate_new_key_alone_opens", last4(one) == (200, KEY1[-4:]), last4(one))
        rc, out = admin("rotate-key", "--check")
        check("test_rotate_check_after_rotation", " 0 still on ENCRYPTION_KEY_PREVIOUS" in out
              and "workspace_ai_providers.api_key of %s" % one.workspace_id not in out, out)

        # 4. envelope mode: a workspace's secret under its own data key, sealed by the instance key
        write_conf(with_keys(original, key_b, envelope=True))
        restart_responders()
        r = put_key(two, KEY2, base=NOPROVIDER_BASE_URL)
        check("test_envelope_put", r.status == 200, r)
        sealed_two = stored(two.workspace_id)
        check("test_envelope_value_under_a_data_key", key_id(sealed_two) >= 1 and KEY2 not in sealed_two, sealed_two)
        wkeys = sql("SELECT COUNT(*) FROM workspace_keys WHERE workspace_id = '%s'" % two.workspace_id).strip()
        check("test_envelope_data_key_stored_sealed", wkeys == "1", wkeys)
        check("test_envelope_value_opens", last4(two) == (200, KEY2[-4:]), last4(two))
        check("test_envelope_other_workspace_stays_on_instance_key", last4(one) == (200, KEY1[-4:]))

        # 5. a truly different key: nothing opens, nothing is shown, the check names the rows
        write_conf(with_keys(original, key_c))
        restart_responders()
        check("test_wrong_key_fails_closed", last4(one) == (200, None) and last4(two) == (200, None),
              (last4(one), last4(two)))
        rc, out = admin("rotate-key", "--check")
        check("test_wrong_key_check_names_unreadable_rows",
              rc == 1 and "unreadable: workspace_ai_providers.api_key of %s" % one.workspace_id in out
              and "unreadable: workspace_keys.sealed_key of %s:1" % two.workspace_id in out, out)
        check("test_wrong_key_check_never_shows_a_secret", KEY1 not in out and KEY2 not in out)

        # 6. back to the stack's key, by rotation: the data key follows, the value under it stays
        write_conf(with_keys(original, key_a, key_b))
        restart_responders()
        rc, out = admin("rotate-key")
        check("test_rotate_back", " 0 still on ENCRYPTION_KEY_PREVIOUS" in out, out)
        check("test_rotate_data_key_value_untouched", stored(two.workspace_id) == sealed_two)
    finally:
        write_conf(original)
        restart_responders()
    check("test_rotate_stack_key_opens_again", last4(one, base=None) == (200, KEY1[-4:])
          and last4(two, base=None) == (200, KEY2[-4:]), (last4(one, base=None), last4(two, base=None)))
    return finish()


if __name__ == "__main__":
    sys.exit(main())
