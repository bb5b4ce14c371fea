#!/usr/bin/env python3
# test_pool.py: open chat streams hold only the chat pool; sign-in and project requests still answer fast
import os
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from svclib import api, check, create_project, finish, items_of, signup, skip_rest, sse  # noqa: E402

STREAMS = 3


def main():
    try:
        acct = signup()
    except AssertionError as e:
        check("sign up", False, e)
        return
    r = create_project(acct, "blank")
    pid = r.body.get("id") if r.status == 201 and isinstance(r.body, dict) else None
    check("create a blank project", pid is not None, r)
    if not pid:
        skip_rest("no project", ["pool"])
        return

    # One chat per stream: a chat runs one generation at a time.
    chat_ids = []
    r = api("GET", "/projects/%s/chats" % pid, token=acct.token)
    items = items_of(r.body) or []
    if items:
        chat_ids.append(items[0].get("id"))
    while len(chat_ids) < STREAMS:
        r = api("POST", "/projects/%s/chats" % pid, {"mode": "build", "title": "pool %d" % len(chat_ids)},
                token=acct.token)
        if r.status not in (200, 201) or not isinstance(r.body, dict):
            break
        chat_ids.append(r.body.get("id"))
    check("%d chats to stream in" % STREAMS, len(chat_ids) == STREAMS and all(chat_ids), chat_ids)
    if len(chat_ids) != STREAMS:
        return

    started = [threading.Event() for _ in range(STREAMS)]
    results = [None] * STREAMS

    def run(i):
        types = []
        try:
            for t, ev in sse("/chat/%s/messages" % pid, {"chatId": chat_ids[i], "text": "slow stream %d" % i},
                             token=acct.token):
                types.append(ev.get("type"))
                started[i].set()
            results[i] = types
        except Exception as e:
            results[i] = e
        finally:
            started[i].set()

    threads = [threading.Thread(target=run, args=(i,), daemon=True) for i in range(STREAMS)]
    for th in threads:
        th.start()
    for ev in started:
        ev.wait(10)
    busy = all(th.is_alive() for th in threads)
    check("%d slow streams are open at once" % STREAMS, busy, results)

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
    check("the streams were still open while those answered", still, results)

    for th in threads:
        th.join(60)
    check("every stream completed",
          all(isinstance(x, list) and x[-1:] == ["session.task_complete"] for x in results), results)


if __name__ == "__main__":
    main()
    sys.exit(finish())
