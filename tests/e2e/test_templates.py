#!/usr/bin/env python3
# test_templates.py: GET /templates, the templates the New project dialog offers, each one that a project can be created from
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from svclib import api, check, finish, signup  # noqa: E402


def main():
    a = signup(tag="tmpl")
    r = api("GET", "/templates", token=a.token)
    ok = r.status == 200 and isinstance(r.body, dict) and isinstance(r.body.get("items"), list)
    check("test_templates_list_200", ok, r)
    if not ok:
        return finish()
    items = r.body["items"]
    names = [t.get("name") for t in items]
    check("test_templates_has_blank_and_todo_app", "blank" in names and "todo-app" in names, names)
    check("test_templates_has_react", "react" in names, names)
    check("test_templates_items_have_exactly_the_fields",
          all(set(t) == {"name", "title", "description", "previewUrl"} for t in items), items)
    check("test_templates_titles_and_descriptions_are_text",
          all(isinstance(t["title"], str) and t["title"].strip() and
              (t["description"] is None or isinstance(t["description"], str)) for t in items), items)
    check("test_templates_preview_url_null_or_a_path",
          all(t["previewUrl"] is None or (isinstance(t["previewUrl"], str) and t["previewUrl"].startswith(("/", "http")))
              for t in items), items)
    by = {t["name"]: t for t in items}
    check("test_templates_metadata_read", by.get("todo-app", {}).get("title") == "Todo app"
          and "todo" in (by.get("todo-app", {}).get("description") or "").lower(), by.get("todo-app"))
    # react (the field's stack, issue 27) leads, then blank
    check("test_templates_ordered_react_then_blank", names[:2] == ["react", "blank"], names)
    check("test_templates_metadata_files_are_not_templates", not any(n.endswith(".json") for n in names), names)
    # every template listed can be used, and its metadata file is not copied into the project
    for name in names:
        p = api("POST", "/workspaces/%s/projects" % a.workspace_id, {"name": "From " + name, "template": name},
                token=a.token)
        check("test_templates_%s_creates_a_project" % name, p.status == 201 and p.body.get("template") == name, p)
        if p.status == 201:
            f = api("GET", "/projects/%s/files" % p.body["id"], token=a.token)
            paths = [x["path"] for x in f.body.get("items", [])] if f.status == 200 else None
            check("test_templates_%s_metadata_not_in_the_project" % name,
                  paths is not None and paths and not any(x.endswith(".json") and x.startswith(name) for x in paths),
                  paths)
    # errors: no token, a bad token, a wrong method
    r = api("GET", "/templates")
    check("test_templates_anonymous_401", r.status == 401 and r.body.get("error") == "unauthorized", r)
    r = api("GET", "/templates", token="x.y.z")
    check("test_templates_bad_token_401", r.status == 401 and r.body.get("error") == "unauthorized", r)
    r = api("POST", "/templates", {"name": "x"}, token=a.token)
    check("test_templates_post_405", r.status == 405 and r.body.get("error") == "method_not_allowed"
          and "GET" in r.headers.get("allow", ""), r)
    r = api("GET", "/templates/blank", token=a.token)
    check("test_templates_no_item_path_404", r.status == 404 and r.body.get("error") == "not_found", r)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
