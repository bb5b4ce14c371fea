#!/usr/bin/env python3
# test_direct_save.py: POST /direct-save/:projectId against the real stack: byte-exact HTML and CSS edits, one commit, 422s that change nothing
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from svclib import (PROVIDER_URL, UNKNOWN_ID, api, check, created_id, finish, is_error, provider, signup,  # noqa: E402
                    versions)
from wslib import create_in  # noqa: E402


def file_of(acct, pid, path):
    r = api("GET", "/projects/%s/files/%s" % (pid, path), token=acct.token)
    return r.raw if r.status == 200 else None


def save(acct, pid, path, patches):
    return api("POST", "/direct-save/%s" % pid, {"filePath": path, "patches": patches}, token=acct.token)


def main():
    a, b = signup(tag="ds-a"), signup(tag="ds-b")
    r = create_in(a, a.workspace_id, "Direct save", template="todo-app")
    pid = created_id(r)
    check("test_direct_save_project_created", pid is not None, r)
    if not pid:
        return
    html = file_of(a, pid, "index.html")
    css = file_of(a, pid, "style.css")
    check("test_direct_save_template_has_an_h1_and_a_stylesheet", html and b"<h1" in html and css, html)
    if PROVIDER_URL:
        provider("POST", "/_reset")
    before = versions(a, pid)

    # HTML: text, attribute, class and style in one request, one commit
    r = save(a, pid, "index.html", [
        {"selector": "h1", "property": "text", "value": "My <list> & more"},
        {"selector": "h1", "property": "title", "value": "Main \"heading\""},
        {"selector": "h1", "property": "class", "value": "headline big"},
        {"selector": ".headline", "property": "style.color", "value": "rebeccapurple"},
    ])
    body = r.body if isinstance(r.body, dict) else {}
    ch = body.get("changes") or []
    check("test_direct_save_html_answers_200_with_the_changes",
          r.status == 200 and body.get("changed") is True and isinstance(body.get("sha"), str)
          and len(body["sha"]) == 40 and len(ch) == 4 and ch[0].get("index") == 0
          and ch[0].get("newValue") == "My <list> & more" and ch[0].get("property") == "text"
          and isinstance(ch[0].get("oldValue"), str) and ch[0]["oldValue"], r)
    after = file_of(a, pid, "index.html")
    h1_start = html.find(b"<h1")
    h1_end = html.find(b"</h1>", h1_start) + len(b"</h1>")
    new_h1_end = after.find(b"</h1>", h1_start) + len(b"</h1>") if after else -1
    check("test_direct_save_html_bytes_before_the_element_are_identical",
          after is not None and after[:h1_start] == html[:h1_start])
    check("test_direct_save_html_bytes_after_the_element_are_identical",
          after is not None and after[new_h1_end:] == html[h1_end:], (after or b"")[new_h1_end:new_h1_end + 200])
    check("test_direct_save_html_element_carries_every_patch",
          after is not None and b"My &lt;list&gt; &amp; more</h1>" in after and b'title="Main &quot;heading&quot;"' in after
          and b'class="headline big"' in after and b'style="color: rebeccapurple"' in after,
          (after or b"")[h1_start:new_h1_end])
    vs = versions(a, pid)
    check("test_direct_save_makes_exactly_one_commit_named_after_the_file",
          len(vs) == len(before) + 1 and vs[0].get("message") == "Visual edit: index.html" and vs[0].get("sha") == body.get("sha"),
          vs[:2])
    if PROVIDER_URL:
        st = provider("GET", "/_requests")
        check("test_direct_save_calls_no_provider", st.status == 200 and st.body == [], st)

    # CSS: change a declaration, add one
    # a rule whose selector appears once (the template's ":root" appears twice: light and dark)
    lines = css.decode().splitlines()
    sels = [ln.strip()[:-1].strip() for i, ln in enumerate(lines)
            if ln.strip().endswith("{") and not ln.strip().startswith("@") and "," not in ln
            and not (i and lines[i - 1].strip().endswith(","))]
    rule = next((x for x in sels if sels.count(x) == 1), None)
    twice = next((x for x in sels if sels.count(x) > 1), None)
    if twice:
        r = save(a, pid, "style.css", [{"selector": twice, "property": "color", "value": "red"}])
        check("test_direct_save_css_selector_of_two_rules_is_422", r.status == 422 and r.body.get("patchIndex") == 0, r)
    r = save(a, pid, "style.css", [{"selector": rule, "property": "outline", "value": "1px solid red"}])
    after_css = file_of(a, pid, "style.css")
    check("test_direct_save_css_adds_a_declaration",
          r.status == 200 and after_css and b"outline: 1px solid red;" in after_css and r.body["changes"][0]["oldValue"] is None,
          (rule, r))
    r = save(a, pid, "style.css", [{"selector": rule, "property": "outline", "value": "2px dashed blue"}])
    after2 = file_of(a, pid, "style.css")
    check("test_direct_save_css_changes_a_declaration_in_place",
          r.status == 200 and after2 == after_css.replace(b"1px solid red", b"2px dashed blue")
          and r.body["changes"][0]["oldValue"] == "1px solid red", r)
    r = save(a, pid, "style.css", [{"selector": rule, "property": "outline", "value": "2px dashed blue"}])
    check("test_direct_save_same_value_again_commits_nothing",
          r.status == 200 and r.body.get("changed") is False and r.body.get("sha") is None
          and versions(a, pid)[0].get("message") == "Visual edit: style.css", r)

    # Every refusal: 422 naming the patch, file and history untouched
    snap_html, snap_css, snap_v = file_of(a, pid, "index.html"), file_of(a, pid, "style.css"), len(versions(a, pid))
    ok = {"selector": "h1", "property": "text", "value": "fine"}
    cases = [
        ("bad_selector", "index.html", [ok, {"selector": "h1 <<", "property": "text", "value": "x"}], 1),
        ("no_match", "index.html", [{"selector": "#does-not-exist", "property": "text", "value": "x"}], 0),
        ("several_matches", "index.html", [ok, ok, {"selector": "*", "property": "class", "value": "x"}], 2),
        ("event_handler", "index.html", [ok, {"selector": "h1", "property": "onclick", "value": "alert(1)"}], 1),
        ("javascript_url", "index.html", [{"selector": "h1", "property": "href", "value": " JAVASCRIPT:alert(1)"}], 0),
        ("style_attribute_whole", "index.html", [{"selector": "h1", "property": "style", "value": "x:y"}], 0),
        ("style_value_escape", "index.html", [{"selector": "h1", "property": "style.color", "value": "red;}"}], 0),
        ("value_not_string", "index.html", [ok, {"selector": "h1", "property": "text", "value": 5}], 1),
        ("patch_not_object", "index.html", [ok, "h1"], 1),
        ("css_unknown_rule", "style.css", [{"selector": ".nope-nope", "property": "color", "value": "red"}], 0),
        ("css_value_injection", "style.css", [{"selector": rule, "property": "color", "value": "red} body{x:y"}], 0),
    ]
    for label, path, patches, index in cases:
        r = save(a, pid, path, patches)
        b_ = r.body if isinstance(r.body, dict) else {}
        check("test_direct_save_%s_is_422_naming_patch_%d" % (label, index),
              r.status == 422 and b_.get("error") == "validation_failed" and b_.get("patchIndex") == index
              and b_.get("field") == "patches[%d]" % index and isinstance(b_.get("message"), str), r)
    check("test_direct_save_refused_patches_leave_the_files_and_history_untouched",
          file_of(a, pid, "index.html") == snap_html and file_of(a, pid, "style.css") == snap_css
          and len(versions(a, pid)) == snap_v)

    # request errors
    for label, body, field in (("file_missing", {"patches": [ok]}, "filePath"),
                               ("patches_missing", {"filePath": "index.html"}, "patches"),
                               ("patches_empty", {"filePath": "index.html", "patches": []}, "patches"),
                               ("patches_not_array", {"filePath": "index.html", "patches": {}}, "patches"),
                               ("too_many_patches", {"filePath": "index.html", "patches": [ok] * 101}, "patches"),
                               ("js_file", {"filePath": "app.js", "patches": [ok]}, "filePath"),
                               ("dotdot", {"filePath": "../x.html", "patches": [ok]}, "filePath"),
                               ("git", {"filePath": ".git/x.html", "patches": [ok]}, "filePath")):
        r = api("POST", "/direct-save/%s" % pid, body, token=a.token)
        check("test_direct_save_%s_is_400_%s" % (label, field), is_error(r, 400, "validation_failed", field), r)
    r = save(a, pid, "nope.html", [ok])
    check("test_direct_save_unknown_file_is_404", is_error(r, 404, "not_found"), r)
    r = save(b, pid, "index.html", [ok])
    check("test_direct_save_by_non_member_is_403", is_error(r, 403, "forbidden"), r)
    r = api("POST", "/direct-save/%s" % pid, {"filePath": "index.html", "patches": [ok]})
    check("test_direct_save_without_token_is_401", is_error(r, 401, "unauthorized"), r)
    r = save(a, UNKNOWN_ID, "index.html", [ok])
    check("test_direct_save_unknown_project_is_404", is_error(r, 404, "not_found"), r)
    r = api("POST", "/direct-save/%s" % pid, raw="{", token=a.token)
    check("test_direct_save_malformed_json_is_400", is_error(r, 400, "invalid_json"), r)
    check("test_direct_save_request_errors_leave_the_files_untouched",
          file_of(a, pid, "index.html") == snap_html and len(versions(a, pid)) == snap_v)


if __name__ == "__main__":
    try:
        main()
    except Exception:
        import traceback
        check("test_direct_save ran to the end", False, traceback.format_exc())
    sys.exit(finish())
