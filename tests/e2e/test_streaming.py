#!/usr/bin/env python3
# test_streaming.py: chat deltas reach the client as the provider sends them; no_provider and model_unavailable end the stream
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from svclib import (NOPROVIDER_BASE_URL, PROVIDER_URL, check, create_project, created_id, default_chat_id,  # noqa: E402
                    finish, provider, signup, skip_rest, sse_all, timeline_page, types_of)


def final_error(events):
    return events[-1] if events and events[-1].get("type") == "error" else {}


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
        skip_rest("no project", ["slow stream", "no_provider", "model_unavailable"])
        return
    chat_id = default_chat_id(acct, pid)
    check("the project has a default chat", chat_id is not None, chat_id)

    # "slow": the double sends ten deltas 300 ms apart (about 3 s). Unbuffered,
    # the first arrives about 2.7 s before the end; a buffering hop would
    # deliver them all at once when the provider finishes.
    events, times, err = sse_all("/chat/%s/messages" % pid, {"chatId": chat_id, "text": "slow please"},
                                 token=acct.token)
    types = types_of(events)
    check("slow stream ends with session.task_complete", err is None and types[-1:] == ["session.task_complete"],
          err or types)
    deltas = [t for t, e in zip(times, events) if e.get("type") == "assistant.message_delta"]
    check("slow stream carries the ten deltas", len(deltas) == 10, types)
    if deltas:
        lead = times[-1] - deltas[0]
        check("the first delta arrives at least 1.5 s before the stream ends (%.2f s): nothing buffers" % lead,
              lead >= 1.5, "first delta %.3f, end %.3f" % (deltas[0], times[-1]))
        gaps = [b - a for a, b in zip(deltas, deltas[1:])]
        check("deltas arrive spread out, not in one burst",
              sum(1 for g in gaps if g >= 0.15) >= 5, ["%.3f" % g for g in gaps])
        text = "".join(e.get("delta", "") for e in events if e.get("type") == "assistant.message_delta")
        check("the deltas join to the provider's text", text.startswith("tick 1 ") and "tick 10" in text, text)

    # No provider configured (a second front end over the same database).
    if not NOPROVIDER_BASE_URL:
        check("SVC_NOPROVIDER_BASE_URL is set", False, "the no_provider checks need it")
    else:
        before = provider("GET", "/_stats").body.get("requests") if PROVIDER_URL else None
        events, times, err = sse_all("/chat/%s/messages" % pid, {"chatId": chat_id, "text": "hello"},
                                     token=acct.token, base=NOPROVIDER_BASE_URL)
        fe = final_error(events)
        check("no provider: the stream's last event is error no_provider", fe.get("error") == "no_provider",
              err or events)
        check("no provider: the error event has a message",
              isinstance(fe.get("message"), str) and fe.get("message", "").strip() != "", fe)
        if PROVIDER_URL:
            after = provider("GET", "/_stats").body.get("requests")
            check("no provider: no model was called", before == after, (before, after))

    # The provider answers 429.
    events, times, err = sse_all("/chat/%s/messages" % pid, {"chatId": chat_id, "text": "rate limit me"},
                                 token=acct.token)
    fe = final_error(events)
    check("provider 429: the stream's last event is error model_unavailable",
          fe.get("error") == "model_unavailable", err or events)
    check("provider 429: the error event has a message",
          isinstance(fe.get("message"), str) and fe.get("message", "").strip() != "", fe)

    # The chat still works afterwards (the failed turn released the chat).
    events, times, err = sse_all("/chat/%s/messages" % pid, {"chatId": chat_id, "text": "hello again"},
                                 token=acct.token)
    types = types_of(events)
    check("a turn after the failed one completes", types[-1:] == ["session.task_complete"], err or types)

    # The timeline keeps what was streamed.
    r = timeline_page(acct, pid, chat_id)
    check("the chat timeline answers 200", r.status == 200, r)


if __name__ == "__main__":
    main()
    sys.exit(finish())
