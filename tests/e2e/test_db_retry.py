#!/usr/bin/env python3
# test_db_retry.py: a real deadlock (error 1213, what a Galera certification failure looks like to
# the application) in a request's transaction runs the transaction again (lib/db/db.c svc_db_tx),
# the request succeeds, and metric db_tx_retries counts it (svc-admin metrics; issue 19).
#
# A mariadb client holds the workspace's row and then asks for the user's row while the chat's
# turn claim (lib/api/api_chat.c: the user's row, then the workspace's) holds the user's and waits
# for the workspace's: InnoDB rolls back the lighter transaction, the claim.
import os
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from agentlib import fresh_project, send  # noqa: E402
from svclib import ADMIN_TOOL, TEST_CONFIG, check, finish, setting, signup, types_of  # noqa: E402


def metrics():
    """svc-admin metrics as {name: value}."""
    env = dict(os.environ, SVC_CONFIG=TEST_CONFIG)
    p = subprocess.run([ADMIN_TOOL, "metrics"], env=env, capture_output=True, text=True, timeout=60)
    out = {}
    for line in p.stdout.splitlines():
        parts = line.split()
        if len(parts) >= 2 and parts[1].isdigit():
            out[parts[0]] = int(parts[1])
    return p.returncode, out, p.stdout + p.stderr


class Client:
    """An interactive mariadb client: statements in, one line of output per marker SELECT."""

    def __init__(self):
        self.p = subprocess.Popen(["mariadb", "--no-defaults", "--socket=" + setting("SVC_DB_SOCKET"), "-uroot",
                                   "-N", "-B", "--unbuffered", setting("SVC_DB_NAME") or "svc"],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def run(self, sql, marker):
        """Runs `sql`, then SELECT marker; returns (seconds until the marker came back, the lines before it)."""
        t0 = time.monotonic()
        self.p.stdin.write(sql + "\nSELECT '%s';\n" % marker)
        self.p.stdin.flush()
        lines = []
        while True:
            line = self.p.stdout.readline()
            if not line:
                return None, lines
            if line.strip() == marker:
                return time.monotonic() - t0, lines
            lines.append(line)

    def close(self):
        self.p.stdin.close()
        try:
            self.p.wait(10)
        except subprocess.TimeoutExpired:
            self.p.kill()
        return self.p.stderr.read()


def main():
    if not ADMIN_TOOL or not TEST_CONFIG:
        check("test_db_retry needs SVC_ADMIN_TOOL and SVC_TEST_CONFIG (./svc-dev test)", False)
        return
    acct = signup(tag="dbretry")
    uid = (acct.user or {}).get("id")
    pid, chat = fresh_project(acct, "blank")
    check("test_db_retry_setup", bool(uid and pid and chat), (uid, pid, chat))
    if not (uid and pid and chat):
        return
    rc, before, out = metrics()
    check("test_db_retry_svc_admin_metrics_runs", rc == 0, out)

    c = Client()
    # the client: several rows changed (so it is the heavier transaction), then the workspace's row
    secs, _ = c.run("START TRANSACTION;"
                    "INSERT INTO db_metrics (name, instance, value, updated_at) VALUES "
                    "('e2e_w1', 'e2e-deadlock', 1, UTC_TIMESTAMP(3)), ('e2e_w2', 'e2e-deadlock', 1, UTC_TIMESTAMP(3)), "
                    "('e2e_w3', 'e2e-deadlock', 1, UTC_TIMESTAMP(3)), ('e2e_w4', 'e2e-deadlock', 1, UTC_TIMESTAMP(3)) "
                    "ON DUPLICATE KEY UPDATE value = value + 1;"
                    "UPDATE workspaces SET turn_claims = turn_claims + 1 WHERE id = '%s';" % acct.workspace_id, "held")
    check("test_db_retry_client_holds_the_workspace_row", secs is not None)

    result = {}

    def turn():
        result["events"], _, result["error"] = send(acct, pid, chat, "hello there")
    th = threading.Thread(target=turn, daemon=True)
    th.start()
    time.sleep(1.5)  # the claim holds the user's row and waits for the workspace's
    # now the client wants the user's row: a deadlock; InnoDB rolls back the claim, which runs again
    secs, lines = c.run("UPDATE users SET turn_claims = turn_claims + 1 WHERE id = '%s';" % uid, "locked")
    check("test_db_retry_client_won_the_deadlock (took %.2f s)" % (secs or -1), secs is not None and secs < 10, lines)
    time.sleep(0.3)  # the claim's second run now waits for the client again
    secs, _ = c.run("COMMIT;", "committed")
    err = c.close()
    check("test_db_retry_client_saw_no_error", "ERROR" not in err, err)
    th.join(60)
    events = result.get("events") or []
    check("test_db_retry_the_turn_ran_after_its_claim_ran_again",
          not th.is_alive() and "assistant.message_delta" in types_of(events) and "error" not in types_of(events),
          (types_of(events)[:6], result.get("error")))
    rc, after, out = metrics()
    n = after.get("db_tx_retries", 0) - before.get("db_tx_retries", 0)
    check("test_db_retry_metric_db_tx_retries_counted_it (%d more)" % n, n >= 1, (before, after))
    check("test_db_retry_nothing_given_up", after.get("db_tx_gave_up", 0) == before.get("db_tx_gave_up", 0),
          (before, after))


if __name__ == "__main__":
    try:
        main()
    except Exception:
        import traceback
        check("test_db_retry ran to the end", False, traceback.format_exc())
    sys.exit(finish())
