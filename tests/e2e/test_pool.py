#!/usr/bin/env python3
# test_pool.py: open chat streams hold only the chat pool; sign-in and project requests still answer fast
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from agentlib import send_in_thread  # noqa: E402
from svclib import api, check, create_project, created_id, finish, items_of, signup, skip_rest, types_of  # noqa: E402

STREAMS = 3


def main():
    try:
        acct = signup()
    except AssertionError as e:
        check("sign up", False, e)
        return
    r = create_project(acct, "blank")
    pid = created_id(r)
    check("create a blank project", pid is not None, r)
    if not pid:
        skip_rest("no project", ["pool"])
        return

    # One user, project and chat per stream: a chat runs one generation at a time, and one user
    # only SVC_AI_MAX_TURNS_PER_USER (test_turn_caps.py), so filling the pool takes several people.
    owners = [(acct, pid)]
    while len(owners) < STREAMS:
        other = signup()
        opid = created_id(create_project(other, "blank"))
        if not opid:
            break
        owners.append((other, opid))
    chat_ids = []
    for who, p in owners:
        items = items_of(api("GET", "/projects/%s/chats" % p, token=who.token).body) or []
        if items:
            chat_ids.append(items[0].get("id"))
    check("%d chats to stream in" % STREAMS, len(chat_ids) == STREAMS and all(chat_ids), chat_ids)
    if len(chat_ids) != STREAMS:
        return

    streams = [send_in_thread(owners[i][0], owners[i][1], chat_ids[i], "slow stream %d" % i, daemon=True)
               for i in range(STREAMS)]
    threads = [th for th, _, _ in streams]

    def results():
        """What each stream got so far: its event types, or the exception that ended it."""
        return [state.get("err") or types_of(state["events"]) for _, state, _ in streams]

    for _, _, started in streams:
        started.wait(10)
    busy = all(th.is_alive() for th in threads)
    check("%d slow streams are open at once" % STREAMS, busy, results())

    # While they hold their responders: sign-in and a project read.
    t0 = time.monotonic()
    r = api("POST", "/auth/login", {"email": acct.email, "password": acct.password}, timeout=10)
    dt = time.monotonic() - t0
    check("POST /api/auth/login answers within 1 s during the streams (%.3f s)" % dt,
          r.status == 200 and dt < 1.0, r)
    t0 = time.monotonic()
    r = api("GET", "/projects/%s" % pid, token=acct.token, timeout=10)
    dt = time.monotonic() - t0
    check("GET /api/projects/:id answers within 1 s during the streams (%.3f s)" % dt,
          r.status == 200 and dt < 1.0, r)
    still = all(th.is_alive() for th in threads)
    check("the streams were still open while those answered", still, results())

    for th in threads:
        th.join(60)
    check("every stream completed",
          all(not th.is_alive() and "err" not in state and types_of(state["events"])[-1:] == ["session.task_complete"]
              for th, state, _ in streams), results())


def socket_modes():
    """The --listen pools Apache reaches (svc-dev puts them in <data dir>/../run-apache): mode 0660,
    group www-data when the stack runs as root, so no other local user can send them requests."""
    import grp
    import stat
    run = os.path.join(os.path.dirname(os.environ.get("SVC_DATA_DIR", "").rstrip("/")), "run-apache")
    socks = sorted(f for f in os.listdir(run) if f.endswith(".sock")) if os.path.isdir(run) else []
    check("the responder pools' sockets exist (%s)" % ", ".join(socks), len(socks) >= 5, run)
    for f in socks:
        st = os.stat(os.path.join(run, f))
        check("%s has mode 0660" % f, stat.S_IMODE(st.st_mode) == 0o660, oct(st.st_mode))
        if os.getuid() == 0:
            check("%s belongs to group www-data" % f, grp.getgrgid(st.st_gid).gr_name == "www-data", st.st_gid)


if __name__ == "__main__":
    main()
    if not os.environ.get("SVC_TEST_PREFIX"):
        socket_modes()
    sys.exit(finish())
