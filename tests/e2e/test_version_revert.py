#!/usr/bin/env python3
# test_version_revert.py: POST /projects/:id/versions/:sha/revert (take back one version alone: a 3-way revert keeps later changes to other lines, a conflict changes nothing and names the files; agent turns and saves alike) and the diff's +/- counts
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from agentlib import send  # noqa: E402
from svclib import (PROVIDER_URL, UNKNOWN_ID, api, check, create_project, default_chat_id, finish, is_error,  # noqa: E402
                    signup, versions)

LINES = ["line %d\n" % i for i in range(1, 13)]


def text(lines):
    return "".join(lines)


def save(a, pid, content):
    return api("PUT", "/projects/%s/files/page.txt" % pid, {"content": content, "overwrite": True}, token=a.token)


def read(a, pid, path="page.txt"):
    r = api("GET", "/projects/%s/files/%s" % (pid, path), token=a.token)
    return r.raw.decode() if r.status == 200 else None


def head(a, pid):
    return versions(a, pid)[0]["sha"]


def revert(who, pid, sha):
    return api("POST", "/projects/%s/versions/%s/revert" % (pid, sha), token=who.token if who else None)


def changed(lines, i, value):
    out = list(lines)
    out[i] = value
    return out


def main():
    a = signup(tag="revert")
    p = create_project(a, "blank")
    if p.status != 201:
        check("test_version_revert_setup", False, p)
        return
    pid = p.body["id"]
    first = versions(a, pid)[-1]["sha"]
    save(a, pid, text(LINES))
    turn = None
    if PROVIDER_URL:
        events, _, _ = send(a, pid, default_chat_id(a, pid), "write a file")
        turn = next((e.get("commit") for e in events if e.get("type") == "session.task_complete"), None)
    older = save(a, pid, text(changed(LINES, 1, "line two, older\n"))).body.get("sha")
    later_lines = changed(changed(LINES, 1, "line two, older\n"), 9, "line ten, later\n")
    later = save(a, pid, text(later_lines)).body.get("sha")

    d = api("GET", "/projects/%s/versions/%s/diff" % (pid, older), token=a.token).body or {}
    f = (d.get("files") or [{}])[0]
    check("test_version_revert_diff_counts_lines", f.get("additions") == 1 and f.get("deletions") == 1, f)

    r = revert(a, pid, older)
    b = r.body if isinstance(r.body, dict) else {}
    check("test_version_revert_older_save_is_taken_back_alone",
          r.status == 200 and b.get("reverted") == older and b.get("sha") == head(a, pid)
          and read(a, pid) == text(changed(LINES, 9, "line ten, later\n")), (r, read(a, pid)))
    check("test_version_revert_is_a_new_version_on_top", versions(a, pid)[1]["sha"] == later, versions(a, pid)[:3])

    if turn:
        r = revert(a, pid, turn)
        check("test_version_revert_an_agent_turn_keeps_later_saves",
              r.status == 200 and read(a, pid, "notes/hello.txt") is None
              and read(a, pid) == text(changed(LINES, 9, "line ten, later\n")), (r, read(a, pid)))
    else:
        check("test_version_revert_an_agent_turn needs the provider double", False, "SVC_PROVIDER_URL is not set")

    # the same line changed later: a conflict, and nothing changes
    base = read(a, pid)
    x = save(a, pid, base.replace("line 5\n", "line five, x\n")).body.get("sha")
    save(a, pid, base.replace("line 5\n", "line five, y\n"))
    before, content = head(a, pid), read(a, pid)
    r = revert(a, pid, x)
    check("test_version_revert_conflict_is_409_naming_the_files",
          is_error(r, 409, "conflict") and "page.txt" in (r.body.get("message") or ""), r)
    check("test_version_revert_conflict_changes_nothing", head(a, pid) == before and read(a, pid) == content,
          (head(a, pid), before))

    r = revert(a, pid, first)
    check("test_version_revert_first_version_is_400", is_error(r, 400, "validation_failed"), r)
    check("test_version_revert_unknown_sha_is_404", is_error(revert(a, pid, "0" * 40), 404, "not_found"))
    check("test_version_revert_malformed_sha_is_404", revert(a, pid, "xyz").status == 404)
    check("test_version_revert_unknown_project_is_404", revert(a, UNKNOWN_ID, later).status == 404)
    check("test_version_revert_anonymous_is_401", revert(None, pid, later).status == 401)
    other = signup(tag="revert-other")
    r = revert(other, pid, later)
    check("test_version_revert_non_member_is_refused", r.status in (403, 404), r)
    # a public project: the outsider may read its versions, but taking one back is a change (403)
    pub = api("PATCH", "/projects/%s" % pid, {"visibility": "public"}, token=a.token)
    seen = api("GET", "/projects/%s/versions/%s/diff" % (pid, later), token=other.token)
    r = revert(other, pid, later)
    check("test_version_revert_reader_of_a_public_project_is_403",
          pub.status == 200 and seen.status == 200 and is_error(r, 403, "forbidden"), (pub, seen, r))
    check("test_version_revert_refusals_change_nothing", head(a, pid) == before, head(a, pid))


if __name__ == "__main__":
    try:
        main()
    except Exception:
        import traceback
        check("test_version_revert ran to the end", False, traceback.format_exc())
    sys.exit(finish())
