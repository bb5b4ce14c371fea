#!/usr/bin/env python3
# test_agent_text_tools.py: models without tool calls (toolMode "text"): the double builds the todo app with <svc-…> markup only, and the events and files match a native run; the markup is hidden from the text; read-only modes keep their subset; a native model's markup is not run; toolMode in the AI-provider settings
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from agentlib import double_requests, fresh_project, new_chat, reset_double, send  # noqa: E402
from svclib import PROVIDER_URL, api, check, finish, is_error, signup, types_of  # noqa: E402

FILES = ("index.html", "app.js")


def calls(events):
    return [(e.get("tool"), e.get("args")) for e in events if e.get("type") == "tool.call"]


def results(events):
    return [e.get("result") for e in events if e.get("type") == "tool.result"]


def final_text(events):
    return next((e.get("text") for e in events if e.get("type") == "assistant.message"), None)


def shown(events):
    return "".join(e.get("delta", "") for e in events if e.get("type") == "assistant.message_delta")


def files_of(acct, pid):
    out = {}
    for path in FILES:
        r = api("GET", "/projects/%s/files/%s" % (pid, path), token=acct.token)
        out[path] = r.raw.decode() if r.status == 200 else None
    return out


def set_text_mode(acct, mode="text"):
    body = {"protocol": "openai", "baseUrl": PROVIDER_URL + "/v1", "model": "double", "apiKey": None}
    if mode:
        body["toolMode"] = mode
    return api("PUT", "/workspaces/%s/ai-provider" % acct.workspace_id, body, token=acct.token)


def main():
    if not PROVIDER_URL:
        check("test_agent_text_tools needs the provider double", False, "SVC_PROVIDER_URL is not set")
        return
    native = signup(tag="text-native")
    npid, nchat = fresh_project(native)
    reset_double()
    nev, _, err = send(native, npid, nchat, "build the todo app")
    nreq = double_requests()
    check("test_agent_text_tools_native_run_builds", len(calls(nev)) == 2 and (nreq[0]["body"] or {}).get("tools"),
          (err, types_of(nev)))

    acct = signup(tag="text-mode")
    r = set_text_mode(acct)
    check("test_agent_text_tools_provider_takes_tool_mode", r.status == 200 and r.body.get("toolMode") == "text", r)
    r = api("GET", "/workspaces/%s/ai-provider" % acct.workspace_id, token=acct.token)
    check("test_agent_text_tools_provider_shows_tool_mode", r.status == 200 and r.body.get("toolMode") == "text", r)
    pid, chat = fresh_project(acct)
    reset_double()
    ev, _, err = send(acct, pid, chat, "build the todo app")
    reqs = double_requests()
    body = (reqs[0].get("body") or {}) if reqs else {}
    system = ((body.get("messages") or [{}])[0] or {}).get("content") or ""
    check("test_agent_text_tools_request_has_no_tools_and_teaches_the_markup",
          len(reqs) == 2 and not body.get("tools") and "<svc-write" in system and "<svc-edit" in system, body.keys())
    check("test_agent_text_tools_same_tool_calls_as_native", calls(ev) == calls(nev) and len(calls(ev)) == 2,
          (calls(ev), calls(nev)))
    check("test_agent_text_tools_same_results_as_native", results(ev) == results(nev), (results(ev), results(nev)))
    check("test_agent_text_tools_same_files_as_native",
          files_of(acct, pid) == files_of(native, npid) and all(files_of(acct, pid).values()), files_of(acct, pid))
    check("test_agent_text_tools_same_final_text_and_end",
          final_text(ev) == final_text(nev) and types_of(ev)[-1] == "session.task_complete"
          and ev[-1].get("filesChanged") is True, (final_text(ev), final_text(nev)))
    check("test_agent_text_tools_markup_is_hidden_from_the_stream",
          "<svc" not in shown(ev) and "svc-write" not in shown(ev) and shown(ev) == final_text(ev), shown(ev))
    second = ((reqs[1].get("body") or {}).get("messages") or []) if len(reqs) > 1 else []
    check("test_agent_text_tools_results_come_back_as_a_user_message",
          second and second[-1].get("role") == "user" and second[-1].get("content", "").startswith("[svc tool results]")
          and "[write_file index.html]" in second[-1].get("content", "")
          and "<svc-write" in (second[-2].get("content") or ""), second[-2:])

    ro = new_chat(acct, pid, "chat")
    ev, _, err = send(acct, pid, ro, "build the todo app")
    errs = [e for e in ev if e.get("type") == "tool.error"]
    check("test_agent_text_tools_read_only_modes_keep_their_subset",
          len(errs) == 2 and all("denied" in (e.get("error") or "") or "read-only" in (e.get("error") or "")
                                 for e in errs), (types_of(ev), errs))

    reset_double()
    ev, _, err = send(native, npid, nchat, "answer with markup")
    r = api("GET", "/projects/%s/files/markup.txt" % npid, token=native.token)
    check("test_agent_text_tools_native_markup_is_not_run",
          not calls(ev) and r.status == 404 and "<svc-write" in (final_text(ev) or ""), (types_of(ev), r.status))

    r = api("PUT", "/workspaces/%s/ai-provider" % acct.workspace_id,
            {"protocol": "openai", "baseUrl": PROVIDER_URL + "/v1", "model": "double", "apiKey": None,
             "toolMode": "xml"}, token=acct.token)
    check("test_agent_text_tools_unknown_tool_mode_is_400", is_error(r, 400, "validation_failed", "toolMode"), r)
    r = set_text_mode(acct, None)
    check("test_agent_text_tools_absent_tool_mode_is_native", r.status == 200 and r.body.get("toolMode") == "native", r)


if __name__ == "__main__":
    try:
        main()
    except Exception:
        import traceback
        check("test_agent_text_tools ran to the end", False, traceback.format_exc())
    sys.exit(finish())
