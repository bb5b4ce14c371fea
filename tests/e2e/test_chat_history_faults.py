#!/usr/bin/env python3
# test_chat_history_faults.py: a chat turn whose history cannot be read answers 503 (Retry-After) and
# stores nothing, and a queued first prompt is run again later, never without its history (issue 17:
# the soak of bench/README.md found a turn that ran without its history and ended as a success).
#
# A root session of the stack's MariaDB holds LOCK TABLES ... WRITE on the table the history reads, so
# the responder's read waits out SVC_DB_TIMEOUT; the rest of the stack goes on.
import os
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from agentlib import double_requests, fresh_project, reset_double, send  # noqa: E402
from svclib import (SSEError, api, check, created_id, finish, is_error, items_of, setting, signup,  # noqa: E402
                    sql, timeline, types_of, worker_lanes, worker_pid)

DB_TIMEOUT = int(setting("SVC_DB_TIMEOUT") or 5)
LIMIT = DB_TIMEOUT + 3.0


class TableLock:
    """Holds LOCK TABLES <table> WRITE in a mariadb client of its own until release()."""

    def __init__(self, table):
        sock = setting("SVC_DB_SOCKET")
        db = setting("SVC_DB_NAME") or "svc"
        self.p = subprocess.Popen(["mariadb", "--no-defaults", "--socket=" + (sock or ""), "-uroot", "-N", "-B", "--unbuffered", db],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        self.p.stdin.write("LOCK TABLES %s WRITE;\nSELECT 'locked';\n" % table)
        self.p.stdin.flush()
        self.held = self.p.stdout.readline().strip() == "locked"

    def release(self):
        try:
            self.p.stdin.write("UNLOCK TABLES;\n")
            self.p.stdin.close()
        except OSError:
            pass
        self.p.wait(30)


def user_texts(acct, pid, chat):
    return [e.get("text") for e in (timeline(acct, pid, chat) or []) if e.get("type") == "user.message"]


def stream_answer(acct, pid, chat, text):
    """(status, response or None, seconds) of one chat message."""
    t0 = time.monotonic()
    events, _, err = send(acct, pid, chat, text)
    secs = time.monotonic() - t0
    if isinstance(err, SSEError):
        return err.response.status, err.response, secs
    return (200 if err is None else 0), events, secs


def main():
    acct = signup(tag="histfault")
    pid, chat = fresh_project(acct)
    events, _, err = send(acct, pid, chat, "remember the word marmalade")
    check("test_chat_history_first_turn_completes",
          err is None and types_of(events)[-1:] == ["session.task_complete"], (err, types_of(events)))

    # ---- the history's reads wait out the DB timeout: 503 with Retry-After, nothing stored
    for table in ("chat_summaries", "chat_events"):
        reset_double()
        lock = TableLock(table)
        check("test_chat_history_lock_%s_held" % table, lock.held)
        try:
            status, resp, secs = stream_answer(acct, pid, chat, "second message while %s is locked" % table)
        finally:
            lock.release()
        check("test_chat_history_unreadable_%s_is_503" % table,
              status == 503 and is_error(resp, 503, "service_unavailable"), (status, resp))
        check("test_chat_history_unreadable_%s_retry_after" % table,
              status == 503 and (resp.headers.get("retry-after") or "").isdigit(),
              getattr(resp, "headers", None))
        check("test_chat_history_unreadable_%s_within_%.0f_s (took %.1f s)" % (table, LIMIT, secs), secs <= LIMIT,
              secs)
        check("test_chat_history_unreadable_%s_no_model_call" % table, double_requests() == [], double_requests())
        texts = user_texts(acct, pid, chat)
        check("test_chat_history_unreadable_%s_stores_nothing" % table,
              texts == ["remember the word marmalade"], texts)

    # ---- afterwards the next message runs with its whole history
    reset_double()
    events, _, err = send(acct, pid, chat, "what was the word?")
    reqs = double_requests()
    check("test_chat_history_next_turn_completes",
          err is None and types_of(events)[-1:] == ["session.task_complete"], (err, types_of(events)))
    check("test_chat_history_next_turn_has_its_history",
          bool(reqs) and "marmalade" in str((reqs[0].get("body") or {}).get("messages")), reqs[:1])

    # ---- a queued first prompt whose history cannot be read runs again later, with it. svc-worker is
    # paused while the project is created (creating its chat waits for the lock too: chat_summaries has a
    # foreign key on chats), then meets the lock. svc-worker's slow lane runs first prompts (stopping the
    # lanes' supervisor would not stop it).
    worker = worker_lanes(worker_pid()).get("slow")
    check("test_chat_history_job_worker_lane_found", worker is not None, worker_pid())
    os.kill(worker, signal.SIGSTOP)
    try:
        r = api("POST", "/workspaces/%s/projects" % acct.workspace_id,
                {"name": "History fault job", "template": "blank", "prompt": "write a file please"},
                token=acct.token)
        pid2 = created_id(r)
        check("test_chat_history_job_project_created", pid2 is not None, r)
        lock = TableLock("chat_summaries")
    finally:
        os.kill(worker, signal.SIGCONT)
    check("test_chat_history_job_lock_held", lock.held)
    job = None
    try:
        deadline = time.monotonic() + 240
        while pid2 and time.monotonic() < deadline:
            out = sql("SELECT id, state, attempts, IFNULL(last_error, '') FROM jobs WHERE kind = 'chat.first_prompt' "
                      "AND payload LIKE '%%%s%%'" % pid2).rstrip("\n")
            row = out.split("\t") if out else []
            if len(row) == 4 and row[3]:
                job = row
                break
            time.sleep(0.3)
    finally:
        lock.release()
    check("test_chat_history_job_fails_while_unreadable",
          job is not None and job[1] == "queued" and job[2] == "1" and "timeline" in job[3], job)
    chat2 = (items_of(api("GET", "/projects/%s/chats" % pid2, token=acct.token).body) or [{}])[0].get("id")
    types = []
    deadline = time.monotonic() + 240
    while pid2 and chat2 and time.monotonic() < deadline:
        types = types_of(timeline(acct, pid2, chat2) or [])
        if types[-1:] in (["session.task_complete"], ["error"]):
            break
        time.sleep(0.3)
    check("test_chat_history_job_retried_completes", types[-1:] == ["session.task_complete"], types)
    out = sql("SELECT state, attempts FROM jobs WHERE id = %s" % (job[0] if job else 0)).split()
    check("test_chat_history_job_done_on_attempt_2", out == ["done", "2"], out)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
