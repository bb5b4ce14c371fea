#!/usr/bin/env python3
# test_templates.py: GET /templates, the templates the New project dialog offers, each one that a project can be created from
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
TEMPLATES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "templates")
from svclib import api, check, finish, signup  # noqa: E402
from agentlib import system_prompt_of  # noqa: E402


# the templates with an app backend (issue 28): their svc.data.json is valid and in force, a "todos" collection
# private to each end user (list, get, update, delete owner; create any signed-in end user)
BACKEND_TEMPLATES = {"react-backend": ("svc.data.json", "src/svc.ts", "src/components/SignIn.tsx",
                                       "src/components/Todos.tsx", "package-lock.json"),
                     "todo-app": ("svc.data.json", "app.js")}


def backend_template(a, name, pid, paths):
    check("test_templates_%s_has_its_backend_files" % name, set(BACKEND_TEMPLATES[name]) <= set(paths), paths)
    r = api("GET", "/projects/%s/backend" % pid, token=a.token)
    todos = next((c for c in (r.body or {}).get("collections", []) if c.get("name") == "todos"), None) \
        if r.status == 200 and isinstance(r.body, dict) else None
    check("test_templates_%s_declares_todos_private_to_each_end_user" % name,
          todos is not None and todos.get("rules") == {"list": "owner", "get": "owner", "create": "user",
                                                       "update": "owner", "delete": "owner"}
          and todos.get("fields", {}).get("title") == "string", r)
    if name == "react-backend":
        system_prompt(a, pid, paths)
        # the react template's dependencies, byte for byte: one install (deps store, npm cache) serves both
        same = all(file_of(a, pid, f) == open(os.path.join(TEMPLATES, "react", f), "rb").read()
                   for f in ("package.json", "package-lock.json"))
        check("test_templates_react_backend_has_the_react_dependencies", same)


def system_prompt(a, pid, paths):
    """The agent's system prompt documents svc.data.json and client.js enough for a signed-in app, in bounded size."""
    marker = "backend-template-prompt-%d" % os.getpid()
    events, err, system = system_prompt_of(a, pid, "What is in this project? " + marker)
    check("test_templates_react_backend_chat_turn_runs", err is None and events and events[-1].get("type") ==
          "session.task_complete", (err, [e.get("type") for e in events or []]))
    need = ("svc.data.json", "/_svc/client.js", "auth.signUp(email, password)", "auth.signIn", "auth.signOut()",
            "auth.user()", "auth.onChange", "data.collection(", ".list(", ".create(", ".update(", ".delete(",
            "nextCursor", "@vite-ignore", "owner", "public", "none", "validation_failed", "HttpOnly",
            "files.upload(", "{{secrets.", "await fetch(")
    check("test_templates_system_prompt_documents_the_backend", all(w in system for w in need),
          [w for w in need if w not in system])
    # bounded: the backend's paragraphs (lib/agent/agent.c prompt_backend), up to the project's kind that follows
    start = system.find("When the app needs accounts")
    end = system.find("\nThe project is ", start)
    check("test_templates_system_prompt_backend_part_bounded", 0 <= start < end and end - start <= 3000,
          (start, end))
    named = set(re.findall(r"\b((?:src|public)/[\w./-]+\.\w+|index\.html|vite\.config\.ts|tsconfig\.json)\b", system))
    check("test_templates_react_backend_system_prompt_names_only_its_files", named <= set(paths),
          sorted(named - set(paths)))


def file_of(a, pid, path):
    r = api("GET", "/projects/%s/files/%s" % (pid, path), token=a.token)
    return r.raw if r.status == 200 else None


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
    check("test_templates_has_react_backend", "react-backend" in names, names)
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
    # react (the field's stack, issue 27) leads, then react-backend (the same with sign-in and data, issue 28), then blank
    check("test_templates_ordered_react_then_react_backend_then_blank",
          names[:3] == ["react", "react-backend", "blank"], names)
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
            if name in BACKEND_TEMPLATES:
                backend_template(a, name, p.body["id"], paths or [])
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
