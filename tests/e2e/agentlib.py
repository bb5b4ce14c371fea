# agentlib.py: helpers shared by the tests/e2e/test_agent_*.py tests (python3 stdlib only)
import json as jsonlib
import time

from svclib import (PROVIDER_URL, api, create_project, created_id, default_chat_id, provider, sse_all,
                    stream_in_thread)


def fresh_project(acct, template="blank", base=None):
    """Creates a project; returns (project_id, default_chat_id) or (None, None)."""
    pid = created_id(create_project(acct, template, base=base))
    return pid, (default_chat_id(acct, pid, base=base) if pid else None)


def new_chat(acct, pid, mode, base=None):
    return created_id(api("POST", "/projects/%s/chats" % pid, {"mode": mode}, token=acct.token, base=base))


def send(acct, pid, chat_id, text, base=None, **extra):
    """One chat message, streamed to the end: (events, times, error)."""
    body = {"chatId": chat_id, "text": text}
    body.update(extra)
    return sse_all("/chat/%s/messages" % pid, body, token=acct.token, base=base)


def send_in_thread(acct, pid, chat_id, text, until_delta=False, daemon=False, base=None):
    """One chat message streamed in a thread of its own: svclib.stream_in_thread(), whose `started`
    is set at the first event, or with until_delta at the first assistant.message_delta."""
    ready = (lambda ev: ev.get("type") == "assistant.message_delta") if until_delta else None
    return stream_in_thread("/chat/%s/messages" % pid, {"chatId": chat_id, "text": text}, acct.token, ready, base,
                            daemon)


def reset_double():
    if PROVIDER_URL:
        provider("POST", "/_reset")


def double_requests():
    """The requests the provider double saw since the last reset: [{path, headers, body}]."""
    if not PROVIDER_URL:
        return []
    r = provider("GET", "/_requests")
    return r.body if isinstance(r.body, list) else []


def system_prompt_of(acct, pid, text):
    """Sends `text` (which holds a marker of the caller's) in the project's first chat: (events, error, the system
    prompt of the provider request that held it, as one string: '' when none did)."""
    chat_id = default_chat_id(acct, pid)
    events, _, err = send(acct, pid, chat_id, text)
    reqs = [q for q in double_requests() if text in jsonlib.dumps(q.get("body"))]
    body = reqs[-1].get("body") if reqs else {}
    msgs = body.get("messages") or []
    system = body.get("system") or next((m.get("content") for m in msgs if m.get("role") == "system"), "") or ""
    if isinstance(system, list):  # Anthropic's blocks
        system = "".join(b.get("text", "") for b in system if isinstance(b, dict))
    return events, err, system


def double_stats():
    r = provider("GET", "/_stats")
    return r.body if isinstance(r.body, dict) else {}


def wait_closed_early(n=1, secs=5.0):
    """Waits until the double saw `n` streams closed early by their client; returns (ok, seconds waited)."""
    start = time.monotonic()
    while time.monotonic() - start < secs:
        if double_stats().get("client_closed_early", 0) >= n:
            return True, time.monotonic() - start
        time.sleep(0.05)
    return False, time.monotonic() - start


def last_user_text(req):
    """The text of the last user message of a recorded provider request (OpenAI or Anthropic body)."""
    msgs = (req.get("body") or {}).get("messages") or []
    for m in reversed(msgs):
        if m.get("role") != "user":
            continue
        c = m.get("content")
        if isinstance(c, str):
            return c
        if isinstance(c, list):
            text = "".join(p.get("text", "") for p in c if isinstance(p, dict) and p.get("type") == "text")
            if text:
                return text
    return ""


def body_text(req):
    return jsonlib.dumps(req.get("body"))


def tool_names(req):
    tools = (req.get("body") or {}).get("tools") or []
    names = []
    for t in tools:
        if isinstance(t, dict):
            names.append((t.get("function") or {}).get("name") or t.get("name"))
    return names
