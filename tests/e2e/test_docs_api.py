#!/usr/bin/env python3
# test_docs_api.py: docs/api.md against the code, both ways, with no stack: its body caps table against the responders' route tables, its list of e2e files against tests/e2e/
"""
Needs nothing running: it reads files of the tree only, so it passes or fails
the same on any machine (run it alone with python3 tests/e2e/test_docs_api.py).

1. Body caps. Every route of cgi-bin/*.c that takes a body (a POST, PUT,
   PATCH or DELETE route that parses JSON, is a signed internal route, or has
   a cap of its own) must have a row `| `METHOD /path` | N KiB |` in the
   "Body caps" section of docs/api.md with the cap the router applies (the
   route's max_body; 0 means the router's default), and every row there must
   be such a route with that cap.
2. The e2e files. Every tests/e2e/test_* file is named in the list at the top
   of docs/api.md, and every test_* file named there exists.
"""
import glob
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from svclib import check, finish  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DOC = os.path.join(ROOT, "docs", "api.md")
BODY_METHODS = ("SVC_POST", "SVC_PUT", "SVC_PATCH", "SVC_DELETE")
UNITS = {"bytes": 1, "KiB": 1024, "MiB": 1024 * 1024}


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def c_int(expr, defines):
    """The value of a C constant expression of integers, *, +, parentheses and
    #define names (`64 * 1024`, `MESSAGE_BODY_MAX`), or None when it is
    something else."""
    for _ in range(8):
        expr = re.sub(r"\b[A-Z_][A-Z0-9_]*\b", lambda m: "(%s)" % defines.get(m.group(0), m.group(0)), expr)
    expr = re.sub(r"\b(\d+)[uUlL]+\b", r"\1", expr)
    if not re.fullmatch(r"[\d\s*+()]+", expr):
        return None
    return eval(expr, {"__builtins__": {}})  # digits, spaces, * + ( ) only


def defines_of(text):
    return {m.group(1): m.group(2).strip() for m in re.finditer(r"^#define\s+([A-Z_][A-Z0-9_]*)\s+(.+?)\s*(?:/\*.*)?$",
                                                               text, re.M)}


def default_cap():
    """The router's cap for a route whose max_body is 0: DEFAULT_MAX_BODY, wherever lib/ defines it."""
    for path in glob.glob(os.path.join(ROOT, "lib", "**", "*.[ch]"), recursive=True):
        d = defines_of(read(path))
        if "DEFAULT_MAX_BODY" in d:
            return c_int(d["DEFAULT_MAX_BODY"], d)
    return None


ROUTE_RE = re.compile(r"^\s*\{\s*([A-Z_ |]+?)\s*,\s*\"([^\"]+)\"\s*,\s*(\w+)\s*,\s*([^,]+?)\s*,\s*([^,]+?)\s*,\s*([^}]+?)\s*\}",
                      re.M)


def route_caps(default):
    """{(method, path without /api): cap in bytes} of every route that takes a body, and the
    list of route lines that could not be read."""
    caps, unread = {}, []
    files = sorted(glob.glob(os.path.join(ROOT, "cgi-bin", "*.c")))
    for path in files:
        text = read(path)
        defs = defines_of(text)
        for m in ROUTE_RE.finditer(text):
            methods, pattern, _handler, flags, max_body, _body = m.groups()
            methods = [x.strip() for x in methods.split("|")]
            cap = c_int(max_body, defs)
            if cap is None:
                unread.append("%s: %s" % (os.path.basename(path), m.group(0).strip()))
                continue
            takes_body = cap != 0 or "SVC_R_JSON" in flags or "SVC_R_INTERNAL" in flags
            if not takes_body:
                continue
            for meth in methods:
                if meth in BODY_METHODS:
                    p = pattern[4:] if pattern.startswith("/api/") else pattern
                    caps[(meth[4:], p)] = cap or default
    return caps, unread, files


def section(text, title):
    """The lines of docs/api.md's section `title` (a heading of any level), up to the next heading."""
    lines = text.splitlines()
    out, inside = [], False
    for line in lines:
        if line.startswith("#"):
            if inside:
                break
            inside = line.lstrip("#").strip() == title
            continue
        if inside:
            out.append(line)
    return out


ROW_RE = re.compile(r"^\|\s*`(GET|POST|PUT|PATCH|DELETE) (/[^`]*)`\s*\|\s*([\d.]+)\s*(bytes|KiB|MiB)\s*\|")


def doc_caps(text):
    caps, bad = {}, []
    for line in section(text, "Body caps"):
        if not line.startswith("|") or line.startswith("|---") or line.startswith("| route"):
            continue
        m = ROW_RE.match(line)
        if not m:
            bad.append(line)
            continue
        caps[(m.group(1), m.group(2))] = int(float(m.group(3)) * UNITS[m.group(4)])
    return caps, bad


def show(cap):
    for unit in ("MiB", "KiB"):
        if cap % UNITS[unit] == 0:
            return "%d %s" % (cap // UNITS[unit], unit)
    return "%d bytes" % cap


def test_body_caps(text):
    default = default_cap()
    check("docs_api_default_cap_found (DEFAULT_MAX_BODY in lib/)", default, "no #define DEFAULT_MAX_BODY under lib/")
    code, unread, files = route_caps(default or 0)
    check("docs_api_route_tables_found", files and code, "no cgi-bin/*.c with a route that takes a body")
    check("docs_api_route_caps_readable", not unread, "\n".join(unread))
    doc, bad = doc_caps(text)
    check("docs_api_caps_rows_readable", doc and not bad,
          "rows of \"Body caps\" that are not | `METHOD /path` | N KiB |:\n" + "\n".join(bad) if bad else
          "no \"Body caps\" table in docs/api.md")
    missing = sorted(k for k in code if k not in doc)
    check("docs_api_caps_every_route_listed", not missing,
          "routes that take a body but have no row in docs/api.md \"Body caps\":\n" +
          "\n".join("| `%s %s` | %s |" % (m, p, show(code[(m, p)])) for m, p in missing))
    extra = sorted(k for k in doc if k not in code)
    check("docs_api_caps_every_row_a_route", not extra,
          "rows of docs/api.md \"Body caps\" that are no route taking a body:\n" +
          "\n".join("%s %s" % k for k in extra))
    wrong = sorted(k for k in doc if k in code and doc[k] != code[k])
    check("docs_api_caps_match", not wrong,
          "\n".join("%s %s: docs/api.md says %s, the route table %s" % (k[0], k[1], show(doc[k]), show(code[k]))
                    for k in wrong))


def test_e2e_list(text):
    intro = text.split("\n## ", 1)[0]
    named = set(re.findall(r"`(test_[a-z0-9_]+\.(?:py|sh))`", intro))
    here = {os.path.basename(p) for p in glob.glob(os.path.join(ROOT, "tests", "e2e", "test_*"))
            if p.endswith((".py", ".sh"))}
    check("docs_api_e2e_list_found", named, "no `test_*.py` names before the first section of docs/api.md")
    check("docs_api_e2e_every_file_listed", not (here - named),
          "tests/e2e files missing from the list at the top of docs/api.md: " + ", ".join(sorted(here - named)))
    check("docs_api_e2e_every_listed_file_exists", not (named - here),
          "files listed at the top of docs/api.md that tests/e2e does not have: " + ", ".join(sorted(named - here)))


def main():
    text = read(DOC)
    test_body_caps(text)
    test_e2e_list(text)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
