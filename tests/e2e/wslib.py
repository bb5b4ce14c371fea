# wslib.py: helpers of the workspace, permission, listing, direct-save and thumbnail e2e tests (python3 stdlib only)
"""
svc_admin() runs SVC_ADMIN_TOOL with SVC_TEST_CONFIG (both read by svclib) as SVC_CONFIG.
"""

import json
import os
import subprocess
import tempfile
import urllib.parse

from svclib import ADMIN_TOOL, TEST_CONFIG, api, items_of, signup


def svc_admin(*args):
    """Runs svc-admin with the stack's settings. Returns (exit status, stdout + stderr)."""
    if not ADMIN_TOOL or not TEST_CONFIG:
        raise AssertionError("SVC_ADMIN_TOOL / SVC_TEST_CONFIG are not set (run through ./svc-dev test)")
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "SVC_CONFIG": TEST_CONFIG,
           "ASAN_OPTIONS": "detect_leaks=0"}
    p = subprocess.run([ADMIN_TOOL] + list(args), env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       timeout=60)
    return p.returncode, p.stdout.decode("utf-8", "replace")


def import_catalog(entries):
    """Loads integration catalogue entries (a list of dicts) with svc-admin import-catalog. Returns (exit
    status, output)."""
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(entries, f)
    try:
        return svc_admin("import-catalog", f.name)
    finally:
        os.unlink(f.name)


def platform_admin(tag="padmin"):
    """Signs up a user and makes them a platform admin with svc-admin."""
    acct = signup(tag=tag)
    rc, out = svc_admin("grant-platform-admin", acct.email)
    if rc != 0:
        raise AssertionError("svc-admin grant-platform-admin failed: %s" % out)
    return acct


class Team:
    """A team workspace: owner, admin, member (accounts), plus a non-member; wid is its id."""

    def __init__(self, tag="team"):
        self.owner = signup(tag=tag + "-owner")
        r = api("POST", "/workspaces", {"name": "Team " + tag}, token=self.owner.token)
        if r.status != 201:
            raise AssertionError("creating a team workspace failed: %r" % r)
        self.wid = r.body["id"]
        self.admin = signup(tag=tag + "-admin")
        self.member = signup(tag=tag + "-member")
        self.outsider = signup(tag=tag + "-outsider")
        for acct, role in ((self.admin, "admin"), (self.member, "member")):
            r = api("POST", "/workspaces/%s/members" % self.wid, {"email": acct.email, "role": role},
                    token=self.owner.token)
            if r.status != 201:
                raise AssertionError("adding %s failed: %r" % (role, r))


def create_in(who, wid, name, **fields):
    """Creates a project in workspace wid; who is an Account, a token, or None (anonymous)."""
    body = {"name": name}
    body.update(fields)
    token = who if who is None or isinstance(who, str) else who.token
    return api("POST", "/workspaces/%s/projects" % wid, body, token=token)


def list_all(token, **query):
    """Every project id GET /projects lists with `query`, following nextCursor. None on an error status."""
    ids, cursor = [], None
    for _ in range(200):
        q = dict(query)
        q.setdefault("limit", "100")
        if cursor:
            q["cursor"] = cursor
        r = api("GET", "/projects?" + urllib.parse.urlencode(q), token=token)
        if r.status != 200:
            return None
        ids += [p.get("id") for p in items_of(r.body) or []]
        cursor = r.body.get("nextCursor")
        if not cursor:
            return ids
    return None
