#!/usr/bin/env python3
# test_listing.py: GET /projects filters (workspaceId, folderId, visibility, q), limits and keyset paging under concurrent writes
import os
import sys
import threading
import time
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from svclib import UNKNOWN_ID, api, check, finish, is_error, items_of, signup  # noqa: E402
from wslib import Team, create_in, list_all  # noqa: E402


def test_visibility_filter():
    t = Team("listvis")
    ids = {}
    for vis in ("private", "workspace", "public"):
        r = create_in(t.owner, t.wid, "Vis %s" % vis, visibility=vis)
        ids[vis] = r.body.get("id")
    for vis in ("private", "workspace", "public"):
        check("test_listing_visibility_%s_filter_for_the_owner" % vis,
              list_all(t.owner.token, workspaceId=t.wid, visibility=vis) == [ids[vis]])
    check("test_listing_visibility_private_filter_shows_a_member_nothing_of_others",
          list_all(t.member.token, workspaceId=t.wid, visibility="private") == [])
    check("test_listing_outsider_sees_only_the_public_project",
          list_all(t.outsider.token, workspaceId=t.wid) == [ids["public"]])
    for bad in ("secret", "", "PUBLIC"):
        r = api("GET", "/projects?visibility=%s" % bad, token=t.owner.token)
        check("test_listing_visibility_%r_is_400_visibility" % bad,
              is_error(r, 400, "validation_failed", "visibility"), r)
    for bad in ("abc", "nul", "NULL1"):
        r = api("GET", "/projects?folderId=%s" % bad, token=t.owner.token)
        check("test_listing_folder_id_%r_is_400_folderid" % bad, is_error(r, 400, "validation_failed", "folderId"), r)
    r = api("GET", "/projects?folderId=%s" % UNKNOWN_ID, token=t.owner.token)
    check("test_listing_unknown_folder_lists_nothing", r.status == 200 and items_of(r.body) == [], r)
    check("test_listing_without_workspace_covers_every_workspace_of_the_caller",
          set(list_all(t.owner.token) or []) >= set(ids.values()))


def test_search():
    a = signup(tag="search")
    wid = a.workspace_id
    made = {}
    for key, name, desc in (("kanban", "Kanban board", "drag cards between columns"),
                            ("recipes", "Recipe book", "a cookbook for the family"),
                            ("weather", "Weather station", "charts of temperature and humidity"),
                            ("unicode", "Café Überblick", "ünïcödé words")):
        r = create_in(a, wid, name, description=desc)
        made[key] = r.body.get("id")

    def q(text, **extra):
        return list_all(a.token, workspaceId=wid, q=text, **extra)

    check("test_listing_q_matches_a_name_word", q("kanban") == [made["kanban"]], q("kanban"))
    check("test_listing_q_matches_a_description_word", q("cookbook") == [made["recipes"]], q("cookbook"))
    check("test_listing_q_is_case_insensitive", q("WEATHER") == [made["weather"]], q("WEATHER"))
    check("test_listing_q_prefix_words_match", q("temper") == [made["weather"]], q("temper"))
    check("test_listing_q_all_words_are_required", q("kanban cookbook") == [], q("kanban cookbook"))
    check("test_listing_q_two_words_of_one_project", q("drag columns") == [made["kanban"]], q("drag columns"))
    check("test_listing_q_non_ascii_words", q("überblick") == [made["unicode"]], q("überblick"))
    check("test_listing_q_no_match_is_empty", q("zeppelin") == [], q("zeppelin"))
    check("test_listing_q_operators_are_not_passed_on", q('kanban -board "x" (y) ~z @w') == [made["kanban"]],
          q('kanban -board "x" (y) ~z @w'))
    check("test_listing_q_short_words_are_ignored", q("ka kanban") == [made["kanban"]], q("ka kanban"))
    check("test_listing_q_stopwords_are_ignored", q("the kanban") == [made["kanban"]], q("the kanban"))
    for bad in ("ab", "a b", "the", "--", ""):
        r = api("GET", "/projects?workspaceId=%s&q=%s" % (wid, urllib.parse.quote(bad)), token=a.token)
        check("test_listing_q_%r_without_a_searchable_word_is_400_q" % bad, is_error(r, 400, "validation_failed", "q"), r)
    r = api("GET", "/projects?q=%s" % ("x" * 600), token=a.token)
    check("test_listing_q_over_500_bytes_is_400_q", is_error(r, 400, "validation_failed", "q"), r)
    # a rename is searchable as soon as it is committed
    api("PATCH", "/projects/%s" % made["recipes"], {"name": "Zeppelin cookbook"}, token=a.token)
    check("test_listing_q_sees_a_rename_at_once", q("zeppelin") == [made["recipes"]], q("zeppelin"))
    # q combines with the other filters and pages like any list
    check("test_listing_q_with_visibility_filter", q("kanban", visibility="private") == [], q("kanban", visibility="private"))
    r = api("GET", "/projects?workspaceId=%s&q=a%%C3%%A9b%%C3%%A9c&limit=1" % wid, token=a.token)
    check("test_listing_q_non_ascii_without_match_is_200", r.status == 200, r)
    b = signup(tag="search-b")
    check("test_listing_q_never_shows_other_workspaces", list_all(b.token, q="kanban") == [])
    api("DELETE", "/projects/%s" % made["kanban"], token=a.token)
    check("test_listing_q_hides_soft_deleted_projects", q("kanban") == [], q("kanban"))


def test_paging_under_concurrent_writes():
    a = signup(tag="paging")
    wid = a.workspace_id
    existing = []
    for i in range(24):
        r = create_in(a, wid, "Existing %02d" % i)
        if r.status == 201:
            existing.append(r.body["id"])
    check("test_listing_24_projects_created", len(existing) == 24, len(existing))
    stop = threading.Event()
    churn = {"created": 0, "deleted": 0}

    def writer():
        while not stop.is_set():
            r = create_in(a, wid, "Churn %d" % churn["created"])
            if r.status == 201:
                churn["created"] += 1
                if churn["created"] % 2 == 0:
                    if api("DELETE", "/projects/%s" % r.body["id"], token=a.token).status == 200:
                        churn["deleted"] += 1

    def wait_for_create(n, secs=15):
        """Waits until the writer has created n projects (a create takes seconds on a loaded machine)."""
        end = time.monotonic() + secs
        while churn["created"] < n and time.monotonic() < end:
            time.sleep(0.02)

    th = threading.Thread(target=writer)
    th.start()
    seen, cursor, pages = [], None, 0
    try:
        wait_for_create(1)
        while pages < 200:
            q = {"workspaceId": wid, "limit": "4"}
            if cursor:
                q["cursor"] = cursor
            r = api("GET", "/projects?" + urllib.parse.urlencode(q), token=a.token)
            if r.status != 200:
                break
            pages += 1
            seen += [p["id"] for p in items_of(r.body) or []]
            cursor = r.body.get("nextCursor")
            if not cursor:
                break
            wait_for_create(churn["created"] + 1)   # a write between every two pages
    finally:
        stop.set()
        th.join()
    check("test_listing_writes_happened_while_paging", churn["created"] >= 2, churn)
    check("test_listing_paging_never_repeats_a_project", len(seen) == len(set(seen)),
          [x for x in seen if seen.count(x) > 1])
    missing = [x for x in existing if x not in seen]
    check("test_listing_paging_never_skips_an_existing_project", not missing, missing)
    order = [x for x in seen if x in existing]
    check("test_listing_paging_keeps_newest_first_order", order == existing[::-1], order)


def test_limits():
    a = signup(tag="limits")
    for i in range(3):
        create_in(a, a.workspace_id, "L%d" % i)
    r = api("GET", "/projects?workspaceId=%s" % a.workspace_id, token=a.token)
    check("test_listing_default_limit_answers_all_three", r.status == 200 and len(items_of(r.body)) == 3, r)
    for lim in ("101", "1000", "0"):
        r = api("GET", "/projects?limit=%s" % lim, token=a.token)
        check("test_listing_limit_%s_is_400" % lim, is_error(r, 400, "validation_failed", "limit"), r)
    r = api("GET", "/projects?limit=2&workspaceId=%s" % a.workspace_id, token=a.token)
    check("test_listing_limit_2_gives_a_cursor", len(items_of(r.body) or []) == 2 and r.body.get("nextCursor"), r)
    cur = r.body.get("nextCursor") or ""
    r = api("GET", "/projects?limit=2&workspaceId=%s&cursor=%s" % (a.workspace_id, cur[:-2]), token=a.token)
    check("test_listing_truncated_cursor_is_400_cursor", is_error(r, 400, "validation_failed", "cursor"), r)


def main():
    test_visibility_filter()
    test_search()
    test_paging_under_concurrent_writes()
    test_limits()


if __name__ == "__main__":
    try:
        main()
    except Exception:
        import traceback
        check("test_listing ran to the end", False, traceback.format_exc())
    sys.exit(finish())
