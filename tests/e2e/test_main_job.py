#!/usr/bin/env python3
# test_main_job.py: the main job end to end: sign up, todo-app project, an agent turn that edits a file, versions, publish, the site
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from svclib import (APP_URL, DATA_DIR, PROJECT_FIELDS, PROVIDER_URL, TIME_RE, UUID_RE, api, check,  # noqa: E402
                    default_chat_id, finish, items_of, provider, request, signup, site_get, skip_rest, sse_all,
                    types_of)


def main():
    # The web application answers at app_url.
    r = request("GET", APP_URL + "/")
    check("app_url serves the web application", r.status == 200 and "svc" in r.body, r)
    check("static files carry X-Content-Type-Options nosniff",
          r.headers.get("x-content-type-options") == "nosniff", r.headers)

    try:
        acct = signup()
    except AssertionError as e:
        check("sign up", False, e)
        skip_rest("sign-up failed", ["create from todo-app"])
        return
    check("sign up returns tokens and a workspace", bool(acct.token and acct.workspace_id), acct.response)

    # A project from the todo-app template.
    r = api("POST", "/workspaces/%s/projects" % acct.workspace_id,
            {"name": "Todo main job", "template": "todo-app"}, token=acct.token)
    check("create from todo-app answers 201", r.status == 201, r)
    p = r.body if isinstance(r.body, dict) else {}
    missing = [f for f in PROJECT_FIELDS if f not in p]
    check("project JSON has every field of the spec's Project table", not missing, "missing: %s\n%r" % (missing, r))
    pid = p.get("id", "")
    slug = p.get("slug") or ""
    check("project id is a UUID v4", bool(re.match(UUID_RE, pid)), pid)
    check("project template is todo-app, workspace is the caller's",
          p.get("template") == "todo-app" and p.get("workspaceId") == acct.workspace_id, p)
    check("project timestamps are RFC 3339 UTC with milliseconds",
          all(isinstance(p.get(k), str) and re.match(TIME_RE, p[k]) for k in ("createdAt", "updatedAt")), p)
    check("a new project is not published", p.get("publishedAt") is None, p)
    check("slug is url-safe", bool(re.match(r"^[a-z0-9]([a-z0-9-]*[a-z0-9])?$", slug)), slug)
    if not pid:
        skip_rest("no project", ["default chat", "agent turn", "versions", "publish"])
        return

    r = api("GET", "/projects/%s/files/index.html" % pid, token=acct.token)
    before = r.body if isinstance(r.body, str) else ""
    check("the template's index.html is there", r.status == 200 and "<html" in before.lower(), r)
    check("the template has no footer yet", "<footer" not in before.lower(), before[:300])

    # The default chat, created with the project.
    r = api("GET", "/projects/%s/chats" % pid, token=acct.token)
    chats = items_of(r.body) or []
    check("the project has its default chat", r.status == 200 and len(chats) >= 1, r)
    chat = chats[0] if chats and isinstance(chats[0], dict) else {}
    check("chat items carry id, title, mode, createdAt, updatedAt",
          all(k in chat for k in ("id", "title", "mode", "createdAt", "updatedAt")), chat)
    check("the default chat is in build mode", chat.get("mode") == "build", chat)
    chat_id = chat.get("id") or default_chat_id(acct, pid)

    # An agent turn: the double answers "add a footer" with an edit_file call.
    if PROVIDER_URL:
        provider("POST", "/_reset")
    events, times, err = sse_all("/chat/%s/messages" % pid, {"chatId": chat_id, "text": "add a footer"},
                                 token=acct.token)
    types = types_of(events)
    check("the chat stream opens and ends cleanly", err is None, err)
    check("the stream starts with assistant.message_delta",
          bool(types) and types[0] == "assistant.message_delta", types)

    def first(t):
        return types.index(t) if t in types else -1

    call_i = first("tool.call")
    call = events[call_i] if call_i >= 0 else {}
    check("tool.call edit_file with an id and args",
          call.get("tool") == "edit_file" and bool(call.get("id")) and isinstance(call.get("args"), dict), call)
    res_i = next((i for i, e in enumerate(events) if e.get("type") == "tool.result" and e.get("id") == call.get("id")), -1)
    check("tool.result for that call follows it", res_i > call_i >= 0, types)
    check("no tool.error in the turn", "tool.error" not in types, [e for e in events if e.get("type") == "tool.error"])
    msg_i = first("assistant.message")
    check("assistant.message after the tool result, with text",
          msg_i > res_i >= 0 and isinstance(events[msg_i].get("text"), str) and events[msg_i]["text"] != "", types)
    use_i = first("session.usage_info")
    use = events[use_i] if use_i >= 0 else {}
    check("session.usage_info after the message, tokens as the provider reported (320 in, 42 out)",
          use_i > msg_i and use.get("inputTokens") == 320 and use.get("outputTokens") == 42, use)
    check("session.task_complete is the last event", bool(types) and types[-1] == "session.task_complete", types)
    check("no error event", "error" not in types, [e for e in events if e.get("type") == "error"])

    # What the provider was asked: streamed Chat Completions with the tools,
    # the instance key, and a second call carrying the tool result.
    if PROVIDER_URL:
        reqs = provider("GET", "/_requests").body
        reqs = reqs if isinstance(reqs, list) else []
        check("the turn made two provider calls (before and after the tool)", len(reqs) == 2, reqs)
        if reqs:
            b = reqs[0].get("body") if isinstance(reqs[0].get("body"), dict) else {}
            names = [t.get("function", {}).get("name") for t in b.get("tools") or [] if isinstance(t, dict)]
            check("provider call: /v1/chat/completions, Bearer key, model, stream true",
                  reqs[0].get("path") == "/v1/chat/completions"
                  and reqs[0].get("headers", {}).get("authorization") == "Bearer test-key"
                  and b.get("model") == "double" and b.get("stream") is True, reqs[0])
            check("provider call offers the build tools",
                  {"list_files", "read_file", "write_file", "edit_file", "delete_file", "search_files"} <= set(names),
                  names)
        if len(reqs) == 2:
            msgs = reqs[1].get("body", {}).get("messages") if isinstance(reqs[1].get("body"), dict) else None
            check("the second call carries the tool result",
                  isinstance(msgs, list) and any(isinstance(m, dict) and m.get("role") == "tool" for m in msgs), msgs)

    # The edit is on disk and served by the files API.
    r = api("GET", "/projects/%s/files/index.html" % pid, token=acct.token)
    after = r.body if isinstance(r.body, str) else ""
    check("GET files/index.html now contains <footer", r.status == 200 and "<footer" in after.lower(), r)
    check("files/index.html is served with an HTML content type",
          r.headers.get("content-type", "").startswith("text/html"), r.headers)
    if DATA_DIR and os.path.isdir(DATA_DIR):
        path = os.path.join(DATA_DIR, "projects", pid, "index.html")
        try:
            with open(path, encoding="utf-8") as f:
                disk = f.read()
        except OSError as e:
            disk = "(%s)" % e
        check("index.html changed on disk", "<footer" in disk.lower(), path)

    # Versions: the creation commit and the agent turn, newest first.
    r = api("GET", "/projects/%s/versions" % pid, token=acct.token)
    vs = items_of(r.body) or []
    check("versions list has 2 entries (create + agent turn)", r.status == 200 and len(vs) == 2, r)
    if len(vs) == 2:
        check("version items carry sha, message, author, createdAt",
              all(all(k in v for k in ("sha", "message", "author", "createdAt")) for v in vs), vs)
        check("version shas are 40 hex digits", all(re.match(r"^[0-9a-f]{40}$", str(v.get("sha"))) for v in vs), vs)
        check("versions are newest first: the oldest is the template commit",
              "template" in str(vs[1].get("message", "")).lower() and str(vs[0].get("createdAt")) >= str(vs[1].get("createdAt")),
              vs)

    # Publish, then the site answers on <slug>.<SVC_DOMAIN>.
    r = api("POST", "/deploy/%s" % pid, token=acct.token)
    d = r.body if isinstance(r.body, dict) else {}
    check("publish answers with url and publishedAt",
          r.status in (200, 201) and isinstance(d.get("url"), str) and isinstance(d.get("publishedAt"), str), r)
    check("the published url names the slug host", slug != "" and ("//%s." % slug) in str(d.get("url")), d)
    r = api("GET", "/projects/%s" % pid, token=acct.token)
    check("the project's publishedAt is set", isinstance(r.body, dict) and isinstance(r.body.get("publishedAt"), str), r)

    if slug:
        r = site_get(slug, "/")
        check("GET http://<slug>.localhost:<port>/ serves the page with the footer",
              r.status == 200 and "<footer" in r.body.lower(), r)
        check("the published page is text/html with nosniff",
              r.headers.get("content-type", "").startswith("text/html")
              and r.headers.get("x-content-type-options") == "nosniff", r.headers)
        r = site_get(slug, "/", host_port=False)
        check("the site also answers to Host without the port", r.status == 200 and "<footer" in r.body.lower(), r)
        r = site_get(slug, "/api/auth/me")
        check("the API is not reachable on a site host", r.status == 404, r)
        r = site_get(slug, "/.git/config")
        check("dotfiles are not served from a site", r.status in (403, 404), r)
        r = site_get("no-such-site-" + pid[:8], "/")
        check("an unknown slug is 404", r.status == 404, r)


if __name__ == "__main__":
    main()
    sys.exit(finish())
