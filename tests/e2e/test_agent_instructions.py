#!/usr/bin/env python3
# test_agent_instructions.py: the workspace's instructions and the project's AGENTS.md in every turn's system prompt (workspace first, each cut at 16 KiB with a note), GET/PUT /workspaces/:wid/instructions
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from agentlib import double_requests, fresh_project, reset_double, send  # noqa: E402
from svclib import PROVIDER_URL, UNKNOWN_ID, api, check, finish, is_error, signup  # noqa: E402
from wslib import Team  # noqa: E402

MAX = 16 * 1024  # SVC_AGENT_INSTRUCTIONS_MAX_BYTES's default


def system_prompt(req):
    """The system prompt of a recorded OpenAI request (its first message)."""
    msgs = (req.get("body") or {}).get("messages") or []
    first = msgs[0] if msgs else {}
    return first.get("content") if first.get("role") == "system" and isinstance(first.get("content"), str) else ""


def last_prompt(acct, pid, chat, text="hello"):
    reset_double()
    events, _, err = send(acct, pid, chat, text)
    reqs = double_requests()
    return (system_prompt(reqs[-1]) if reqs else ""), events


def instructions(who, wid):
    return api("GET", "/workspaces/%s/instructions" % wid, token=who.token if who else None)


def put(who, wid, text):
    return api("PUT", "/workspaces/%s/instructions" % wid, {"text": text}, token=who.token if who else None)


def test_prompt():
    acct = signup(tag="instr")
    pid, chat = fresh_project(acct)
    r = put(acct, acct.workspace_id, "Always answer in French. WS-MARK-7431")
    b = r.body if isinstance(r.body, dict) else {}
    check("test_agent_instructions_owner_sets_the_workspaces",
          r.status == 200 and b.get("text") == "Always answer in French. WS-MARK-7431" and b.get("maxBytes") == MAX
          and b.get("updatedAt") and b.get("canEdit") is True, r)
    r = api("PUT", "/projects/%s/files/AGENTS.md" % pid, {"content": "# Rules\nUse tabs. PROJECT-MARK-5519\n"},
            token=acct.token)
    check("test_agent_instructions_agents_md_is_a_normal_commit", r.status == 201, r)
    prompt, events = last_prompt(acct, pid, chat)
    ws, pr = prompt.find("WS-MARK-7431"), prompt.find("PROJECT-MARK-5519")
    check("test_agent_instructions_both_are_in_the_system_prompt_workspace_first",
          0 < ws < pr and "AGENTS.md" in prompt, prompt[-600:])
    put(acct, acct.workspace_id, "")
    prompt, _ = last_prompt(acct, pid, chat)
    check("test_agent_instructions_empty_text_removes_them",
          "WS-MARK-7431" not in prompt and "PROJECT-MARK-5519" in prompt
          and (instructions(acct, acct.workspace_id).body or {}).get("text") == "", prompt[-300:])
    # a 1 MiB AGENTS.md, written by the agent itself: cut at 16 KiB with a note
    reset_double()
    send(acct, pid, chat, "write big agents")
    prompt, _ = last_prompt(acct, pid, chat)
    check("test_agent_instructions_a_1_MiB_agents_md_is_cut_with_a_note",
          "AGENTS-HEAD" in prompt and "AGENTS-TAIL" not in prompt and "were cut at %d bytes" % MAX in prompt
          and "1048576 bytes long" in prompt and len(prompt.encode()) < MAX + 8 * 1024, len(prompt))
    big = "é" * (MAX // 2 - 10) + "WS-BIG-END"
    r = put(acct, acct.workspace_id, big)
    check("test_agent_instructions_16_KiB_of_workspace_text_is_taken", r.status == 200, r.status)
    prompt, _ = last_prompt(acct, pid, chat)
    check("test_agent_instructions_workspace_text_reaches_the_prompt_whole", "WS-BIG-END" in prompt, len(prompt))


def test_errors(team):
    r = put(team.owner, team.wid, "x" * (MAX + 1))
    check("test_agent_instructions_over_16_KiB_is_400", is_error(r, 400, "validation_failed", "text"), r)
    r = put(team.owner, team.wid, "é" * (MAX // 2 + 1))
    check("test_agent_instructions_over_16_KiB_in_bytes_is_400", is_error(r, 400, "validation_failed", "text"), r)
    r = put(team.admin, team.wid, "Team rules")
    check("test_agent_instructions_admin_sets_them", r.status == 200, r)
    r = put(team.member, team.wid, "mine")
    check("test_agent_instructions_member_cannot_set_them", is_error(r, 403, "forbidden"), r)
    r = instructions(team.member, team.wid)
    check("test_agent_instructions_member_reads_them",
          r.status == 200 and r.body.get("text") == "Team rules" and r.body.get("canEdit") is False, r)
    check("test_agent_instructions_outsider_is_403", is_error(instructions(team.outsider, team.wid), 403, "forbidden"))
    check("test_agent_instructions_outsider_put_is_403", is_error(put(team.outsider, team.wid, "x"), 403, "forbidden"))
    check("test_agent_instructions_anonymous_is_401", instructions(None, team.wid).status == 401)
    check("test_agent_instructions_anonymous_put_is_401", put(None, team.wid, "x").status == 401)
    check("test_agent_instructions_unknown_workspace_is_404", instructions(team.owner, UNKNOWN_ID).status == 404)
    check("test_agent_instructions_put_unknown_workspace_is_404", put(team.owner, UNKNOWN_ID, "x").status == 404)
    r = api("PUT", "/workspaces/%s/instructions" % team.wid, {"text": 5}, token=team.owner.token)
    check("test_agent_instructions_text_not_a_string_is_400", is_error(r, 400, "validation_failed", "text"), r)
    r = api("PUT", "/workspaces/%s/instructions" % team.wid, {}, token=team.owner.token)
    check("test_agent_instructions_text_missing_is_400", is_error(r, 400, "validation_failed", "text"), r)
    r = api("PUT", "/workspaces/%s/instructions" % team.wid, raw=b"[", token=team.owner.token,
            headers={"Content-Type": "application/json"})
    check("test_agent_instructions_bad_json_is_400", is_error(r, 400, "invalid_json"), r)
    r = api("PUT", "/workspaces/%s/instructions" % team.wid, raw=b'{"text": "' + b"a" * (100 * 1024) + b'"}',
            token=team.owner.token, headers={"Content-Type": "application/json"})
    check("test_agent_instructions_body_over_96_KiB_is_413", is_error(r, 413, "payload_too_large"), r)


def main():
    if not PROVIDER_URL:
        check("test_agent_instructions needs the provider double", False, "SVC_PROVIDER_URL is not set")
        return
    test_prompt()
    test_errors(Team(tag="instr"))


if __name__ == "__main__":
    try:
        main()
    except Exception:
        import traceback
        check("test_agent_instructions ran to the end", False, traceback.format_exc())
    sys.exit(finish())
