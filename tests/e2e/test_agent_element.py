#!/usr/bin/env python3
# test_agent_element.py: Point at an element: a chat message's {type: "element", selector, html, text, pagePath, image} attachment reaches the provider's request as text and an image, the system prompt says to change that element, and bad element attachments are 400
import base64
import os
import struct
import sys
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from agentlib import double_requests, fresh_project, reset_double, send  # noqa: E402
from svclib import PROVIDER_URL, SSEError, check, finish, is_error, signup, sse_all, types_of  # noqa: E402


def png_1x1():
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xffffffff)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(b"\x00\xff\x00\x00")) + chunk(b"IEND", b""))


IMAGE = "data:image/png;base64," + base64.b64encode(png_1x1()).decode()
ELEMENT = {"type": "element", "selector": "main > h1.title", "html": '<h1 class="title">Todos</h1>', "text": "Todos",
           "pagePath": "/index.html", "image": IMAGE}


def main():
    if not PROVIDER_URL:
        check("test_agent_element needs the provider double", False, "SVC_PROVIDER_URL is not set")
        return
    acct = signup(tag="element")
    pid, chat = fresh_project(acct)
    reset_double()
    events, _, err = send(acct, pid, chat, "make this heading red", attachments=[ELEMENT])
    reqs = double_requests()
    msgs = ((reqs[0].get("body") or {}).get("messages") or []) if reqs else []
    user = msgs[-1] if msgs else {}
    parts = user.get("content") if isinstance(user.get("content"), list) else []
    text = "".join(p.get("text", "") for p in parts if p.get("type") == "text")
    images = [p for p in parts if p.get("type") == "image_url"]
    check("test_agent_element_reaches_the_provider_with_its_selector_and_html",
          "make this heading red" in text and "main > h1.title" in text and '<h1 class="title">Todos</h1>' in text
          and "/index.html" in text, (err, user))
    check("test_agent_element_image_reaches_the_provider",
          len(images) == 1 and (images[0].get("image_url") or {}).get("url") == IMAGE, images)
    system = (msgs[0] or {}).get("content") if msgs else ""
    check("test_agent_element_system_prompt_says_to_change_it", "pointed at an element" in (system or ""), system[-300:])
    stored = next((e for e in events if e.get("type") == "user.message"), None)
    check("test_agent_element_turn_runs", types_of(events)[-1:] == ["session.task_complete"], (err, types_of(events)))
    reset_double()
    send(acct, pid, chat, "hello")
    reqs = double_requests()
    system = (((reqs[0].get("body") or {}).get("messages") or [{}])[0] or {}).get("content") if reqs else ""
    check("test_agent_element_only_its_own_turn_is_told", "pointed at an element" not in (system or ""), stored)

    bad = (("no_selector", {"type": "element", "pagePath": "/"}),
           ("no_page", {"type": "element", "selector": "h1"}),
           ("relative_page", {"type": "element", "selector": "h1", "pagePath": "index.html"}),
           ("html_over_4_KiB", {"type": "element", "selector": "h1", "pagePath": "/", "html": "x" * 4097}),
           ("image_not_png_data", {"type": "element", "selector": "h1", "pagePath": "/", "image": "data:image/png;base64,AAAA"}),
           ("image_not_a_string", {"type": "element", "selector": "h1", "pagePath": "/", "image": 5}))
    for label, att in bad:
        reset_double()
        _, _, err = sse_all("/chat/%s/messages" % pid, {"chatId": chat, "text": "x", "attachments": [att]}, token=acct.token)
        r = err.response if isinstance(err, SSEError) else None
        check("test_agent_element_%s_is_400" % label,
              r is not None and is_error(r, 400, "validation_failed", "attachments") and double_requests() == [], r)


if __name__ == "__main__":
    try:
        main()
    except Exception:
        import traceback
        check("test_agent_element ran to the end", False, traceback.format_exc())
    sys.exit(finish())
