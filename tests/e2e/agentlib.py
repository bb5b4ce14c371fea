# agentlib.py: helpers shared by the tests/e2e/test_agent_*.py tests (python3 stdlib only)
import json as jsonlib
import time

from svclib import PROVIDER_URL, api, create_project, default_chat_id, items_of, provider, sse_all


def types_of(events):
    return [e.get("type") for e in events]


def fresh_project(acct, template="blank", base=None):
    """Creates a project; returns (project_id, default_chat_id) or (None, None)."""
    r = create_project(acct, template, base=base)
    pid = r.body.get("id") if r.status == 201 and isinstance(r.body, dict) else None
    return pid, (default_chat_id(acct, pid, base=base) if pid else None)


def new_chat(acct, pid, mode, base=None):
    r = api("POST", "/projects/%s/chats" % pid, {"mode": mode}, token=acct.token, base=base)
    return r.body.get("id") if r.status == 201 and isinstance(r.body, dict) else None


def send(acct, pid, chat_id, text, base=None, **extra):
    """One chat message, streamed to the end: (events, times, error)."""
    body = {"chatId": chat_id, "text": text}
    body.update(extra)
    return sse_all("/chat/%s/messages" % pid, body, token=acct.token, base=base)


def timeline(acct, pid, chat_id, base=None, limit=200):
    r = api("GET", "/chat/%s/messages?chatId=%s&limit=%d" % (pid, chat_id, limit), token=acct.token, base=base)
    return items_of(r.body) if r.status == 200 else None


def reset_double():
    if PROVIDER_URL:
        provider("POST", "/_reset")


def double_requests():
    """The requests the provider double saw since the last reset: [{path, headers, body}]."""
    if not PROVIDER_URL:
        return []
    r = provider("GET", "/_requests")
    return r.body if isinstance(r.body, list) else []


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
