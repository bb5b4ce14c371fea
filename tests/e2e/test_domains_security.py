#!/usr/bin/env python3
"""test_domains_security.py: custom domains cannot take the platform's own names, cannot be squatted or
taken over while their records dangle, and their checks run off the request path (issue 25, items 1, 2, 4
and 13's features.customDomains; docs/api.md "Custom domains", docs/operations.md "Custom domains").

Runs against ./svc-dev test's stack: SVC_CNAME_TARGET=sites.example.net, SVC_DOMAIN=localhost, app_url
http://127.0.0.1:<port>, SVC_RESERVED_DOMAINS=blog.example.com,*.example.net, SVC_DOMAIN_VERIFY_COOLDOWN_SECS=3;
dnsmasq answers held.example.org (CNAME sites.example.net, the HTTPS front holds its certificate) and
forwards hang1.example.org and hang2.example.org to tests/fixtures/dns_double.py, which never answers.
"""
import os
import re
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from svclib import (DATA_DIR, HTTP_PORT, TIME_RE, api, check, finish, is_error, items_of, request, signup, sql)
from wslib import Team, create_in, svc_admin

APACHE_URL = os.environ.get("SVC_TEST_APACHE_URL", "")


def publish(acct, pid):
    r = api("POST", "/deploy/%s" % pid, token=acct.token)
    if r.status != 200:
        raise AssertionError("deploy failed: %r" % r)
    return r.body["slug"]


def business_team(tag):
    """A team workspace on the business plan with one published project: (team, project id, slug)."""
    team = Team(tag)
    rc, out = svc_admin("set-plan", team.wid, "business")
    if rc != 0:
        raise AssertionError("set-plan failed: " + out)
    pid = create_in(team.owner, team.wid, "Domains " + tag, template="blank").body["id"]
    return team, pid, publish(team.owner, pid)


def add(acct, pid, name):
    return api("POST", "/domains/project/%s" % pid, {"domain": name}, token=acct.token)


def domains_of(acct, pid):
    r = api("GET", "/domains/project/%s" % pid, token=acct.token)
    return {d["domain"]: d for d in (items_of(r.body) or [])} if r.status == 200 else {}


def wait_status(acct, pid, name, want, secs=40):
    end = time.time() + secs
    d = None
    while time.time() < end:
        d = domains_of(acct, pid).get(name)
        if d and d["status"] in want:
            return d
        time.sleep(0.5)
    return d


def host_get(base, host, path="/"):
    return request("GET", base + path, None, {"Host": host})


def test_reserved_names(team, pid):
    """Item 1: the API refuses the platform's own names with a reason."""
    for tag, name, words in (
            ("cname_target", "sites.example.net", "SVC_CNAME_TARGET"),
            ("cname_target_upper_case", "Sites.Example.NET.", "SVC_CNAME_TARGET"),
            ("reserved_name", "blog.example.com", "SVC_RESERVED_DOMAINS"),
            ("reserved_suffix", "shop.example.net", "SVC_RESERVED_DOMAINS"),
            ("preview_domain", "preview.localhost", "platform"),
            ("app_host", "127.0.0.1", "IP address")):
        r = add(team.owner, pid, name)
        check("test_domains_add_refuses_%s_400" % tag,
              is_error(r, 400, "validation_failed", "domain") and words in r.body.get("message", ""), r)
    r = add(team.owner, pid, "blog2.example.com")
    check("test_domains_add_near_reserved_name_201", r.status == 201, r)
    if r.status == 201:
        api("DELETE", "/domains/%s" % r.body["id"], token=team.owner.token)


def test_rows_never_take_the_app(pid):
    """Item 1: rows holding the app's host and SVC_DOMAIN, written into the database directly, are never served."""
    base = "http://127.0.0.1:%d" % HTTP_PORT
    app_page = host_get(base, "127.0.0.1:%d" % HTTP_PORT).raw
    ids = []
    for name in ("127.0.0.1", "localhost"):
        rid = "00000000-0000-4000-8000-%012d" % (len(ids) + 250)
        ids.append(rid)
        sql("INSERT INTO custom_domains (id, project_id, domain, status, created_by, created_at, updated_at) "
            "SELECT '%s', id, '%s', 'active', created_by, UTC_TIMESTAMP(3), UTC_TIMESTAMP(3) FROM projects "
            "WHERE id = '%s'" % (rid, name, pid))
    try:
        rc, out = svc_admin("write-sites")
        with open(os.path.join(DATA_DIR, "sites", "lighttpd-domains.conf")) as f:
            conf = f.read()
        check("test_domains_include_never_writes_reserved_rows",
              rc == 0 and "127\\.0\\.0\\.1)(:[0-9]+)?$\" {" not in conf and "^localhost(" not in conf, (rc, out, conf))
        time.sleep(1.5)  # the graceful reloads of SVC_SITES_RELOAD_CMD
        r = host_get(base, "127.0.0.1:%d" % HTTP_PORT)
        check("test_domains_lighttpd_app_host_row_still_serves_app", r.status == 200 and r.raw == app_page, r)
        r = host_get(base, "127.0.0.1:%d" % HTTP_PORT, "/.well-known/svc-site")
        check("test_domains_lighttpd_app_host_row_serves_no_site_marker", pid.encode() not in r.raw, r)
        r = host_get(base, "localhost:%d" % HTTP_PORT, "/.well-known/svc-site")
        check("test_domains_lighttpd_svc_domain_row_serves_no_site", pid.encode() not in r.raw, r)
        r = api("GET", "/auth/me")
        check("test_domains_lighttpd_app_host_row_keeps_the_api", is_error(r, 401, "unauthorized"), r)
        if APACHE_URL:
            aport = APACHE_URL.rsplit(":", 1)[1]
            apage = host_get(APACHE_URL, "127.0.0.1:" + aport).raw
            r = host_get(APACHE_URL, "127.0.0.1:" + aport, "/.well-known/svc-site")
            check("test_domains_apache_app_host_row_serves_no_site_marker", pid.encode() not in r.raw, r)
            r = host_get(APACHE_URL, "localhost:" + aport, "/.well-known/svc-site")
            check("test_domains_apache_svc_domain_row_serves_no_site", pid.encode() not in r.raw, r)
            r = host_get(APACHE_URL, "127.0.0.1:" + aport)
            check("test_domains_apache_app_host_row_still_serves_app", r.status == 200 and r.raw == apage, r)
    finally:
        sql("DELETE FROM custom_domains WHERE id IN ('%s')" % "','".join(ids))
        svc_admin("write-sites")


def test_squatting_and_holds(a, apid, b, bpid):
    """Item 2: pending names do not block others; served names and removed served names do."""
    r = add(a.owner, apid, "squat.example.org")
    r2 = add(b.owner, bpid, "squat.example.org")
    check("test_domains_pending_name_elsewhere_does_not_block_201", r.status == 201 and r2.status == 201, (r, r2))
    for x, resp in ((a, r), (b, r2)):
        if resp.status == 201:
            api("DELETE", "/domains/%s" % resp.body["id"], token=x.owner.token)
    r = add(a.owner, apid, "squat.example.org")
    r2 = add(b.owner, bpid, "squat.example.org")
    check("test_domains_removed_pending_name_is_not_held", r.status == 201 and r2.status == 201, (r, r2))
    for x, resp in ((a, r), (b, r2)):
        if resp.status == 201:
            api("DELETE", "/domains/%s" % resp.body["id"], token=x.owner.token)

    r = add(a.owner, apid, "held.example.org")
    held_id = r.body.get("id") if r.status == 201 else None
    d = wait_status(a.owner, apid, "held.example.org", ("active",))
    check("test_domains_held_name_becomes_active", d and d["status"] == "active", d)
    r = add(b.owner, bpid, "held.example.org")
    check("test_domains_add_name_active_elsewhere_409",
          is_error(r, 409, "conflict", "domain") and "another workspace" in r.body.get("message", ""), r)
    r = api("DELETE", "/domains/%s" % held_id, token=a.owner.token)
    check("test_domains_delete_served_name_200", r.status == 200, r)
    r = add(b.owner, bpid, "held.example.org")
    check("test_domains_add_name_held_for_remover_409",
          is_error(r, 409, "conflict", "domain") and "removed from another workspace" in r.body.get("message", ""), r)
    rows = sql("SELECT workspace_id, TIMESTAMPDIFF(HOUR, UTC_TIMESTAMP(3), held_until) FROM domain_holds "
               "WHERE domain = 'held.example.org'").split()
    check("test_domains_hold_lasts_hold_days", rows[:1] == [a.wid] and 7 * 24 - 2 <= int(rows[1]) <= 7 * 24, rows)
    r = add(a.owner, apid, "held.example.org")
    check("test_domains_remover_may_add_held_name_again_201", r.status == 201, r)
    if r.status == 201:
        api("DELETE", "/domains/%s" % r.body["id"], token=a.owner.token)
    sql("UPDATE domain_holds SET held_until = UTC_TIMESTAMP(3) - INTERVAL 1 SECOND WHERE domain = 'held.example.org'")
    r = add(b.owner, bpid, "held.example.org")
    check("test_domains_add_name_after_hold_ends_201", r.status == 201, r)
    if r.status == 201:
        api("DELETE", "/domains/%s" % r.body["id"], token=b.owner.token)


def test_checks_off_the_request_path(team, pid):
    """Item 4: a nameserver that never answers; 20 verifies at once; the API keeps answering."""
    ids = {}
    for name in ("hang1.example.org", "hang2.example.org", "third.example.org"):
        r = add(team.owner, pid, name)
        ids[name] = r.body.get("id") if r.status == 201 else None
    check("test_domains_hang_names_added", all(ids.values()), ids)
    time.sleep(3.5)  # past the cooldown of anything the worker's round did not ask for (it asks nothing)
    answers, lock = [], threading.Lock()

    def one(i):
        name = list(ids)[i % 3]
        t0 = time.time()
        r = api("POST", "/domains/%s/verify" % ids[name], token=team.owner.token, timeout=60)
        with lock:
            answers.append((name, r, time.time() - t0))

    threads = [threading.Thread(target=one, args=(i,)) for i in range(20)]
    for t in threads:
        t.start()
    # while the 20 are in flight (before this change each held a responder for the DNS timeout, 10 s)
    slow_me, slow_projects = [], []
    for _ in range(10):
        t0 = time.time()
        r = api("GET", "/auth/me", token=team.owner.token)
        slow_me.append((round(time.time() - t0, 3), r.status))
        t0 = time.time()
        r = api("GET", "/projects", token=team.owner.token)
        slow_projects.append((round(time.time() - t0, 3), r.status))
        time.sleep(0.05)
    for t in threads:
        t.join()
    print("# /auth/me during 20 verifies (s, status): %r" % slow_me)
    print("# /projects during 20 verifies (s, status): %r" % slow_projects)
    # median under 100 ms, none over 1 s (the test machine is shared: one sample may wait for a core)
    for tag, samples in (("auth_me", slow_me), ("projects", slow_projects)):
        times = sorted(d for d, _ in samples)
        check("test_domains_verify_parallel_%s_under_100ms" % tag,
              all(s == 200 for _, s in samples) and times[len(times) // 2] < 0.1 and times[-1] < 1.0, samples)
    statuses = [r.status for _, r, _ in answers]
    print("# verify answer times (s): %r" % sorted(round(d, 3) for _, _, d in answers))
    check("test_domains_verify_parallel_answers_202_or_429_at_once",
          len(answers) == 20 and set(statuses) <= {202, 429} and max(d for _, _, d in answers) < 5, answers)
    queued = {n for n, r, _ in answers if r.status == 202}
    check("test_domains_verify_at_most_two_per_workspace", 1 <= len(queued) <= 2, answers)
    ok = [r for _, r, _ in answers if r.status == 202]
    check("test_domains_verify_202_shape",
          all(re.match(TIME_RE, r.body.get("checkQueuedAt") or "") and r.body.get("status") == "pending_dns"
              for r in ok), ok)
    limited = [r for _, r, _ in answers if r.status == 429]
    check("test_domains_verify_429_retry_after",
          limited and all(is_error(r, 429, "rate_limited") and 1 <= int(r.headers.get("retry-after", "0")) <= 3
                          for r in limited), limited)
    # the cooldown of one domain: asked again at once
    name = sorted(queued)[0] if queued else "hang1.example.org"
    r = api("POST", "/domains/%s/verify" % ids[name], token=team.owner.token)
    check("test_domains_verify_cooldown_429", is_error(r, 429, "rate_limited")
          and 1 <= int(r.headers.get("retry-after", "0")) <= 3, r)
    # past the cooldown, a verify of a domain whose check is still queued or running answers that one
    first = [r for n, r, _ in answers if n == name and r.status == 202]
    time.sleep(3.5)
    r = api("POST", "/domains/%s/verify" % ids[name], token=team.owner.token)
    check("test_domains_verify_in_flight_answers_the_same_check",
          r.status == 202 and first and r.body.get("checkQueuedAt") == first[0].body.get("checkQueuedAt"), (r, first))
    # the worker's check ends (SVC_DOMAIN_CHECK_TIMEOUT) and the status tells: still pending_dns, with why
    end, d = time.time() + 60, None
    while time.time() < end:
        d = domains_of(team.owner, pid).get(name)
        if d and d.get("reason") and d.get("checkedAt"):
            break
        time.sleep(1)
    check("test_domains_verify_worker_records_the_outcome",
          d and d["status"] == "pending_dns" and "does not resolve" in (d.get("reason") or ""), d)
    for i in ids.values():
        if i:
            api("DELETE", "/domains/%s" % i, token=team.owner.token)


def test_features_custom_domains():
    """Item 13: features.customDomains follows the plan of the caller's workspace."""
    solo = signup(tag="domsec-solo")
    r = api("GET", "/auth/me", token=solo.token)
    check("test_auth_me_features_custom_domains_false_on_free",
          r.status == 200 and r.body["features"]["customDomains"] is False, r)
    wid = (r.body.get("workspace") or {}).get("id")
    rc, out = svc_admin("set-plan", wid, "pro")
    r = api("GET", "/auth/me", token=solo.token)
    check("test_auth_me_features_custom_domains_true_on_pro",
          rc == 0 and r.status == 200 and r.body["features"]["customDomains"] is True, (out, r))


def main():
    a, apid, _ = business_team("domsec-a")
    b, bpid, _ = business_team("domsec-b")
    test_reserved_names(a, apid)
    test_rows_never_take_the_app(apid)
    test_squatting_and_holds(a, apid, b, bpid)
    test_checks_off_the_request_path(b, bpid)
    test_features_custom_domains()
    return finish()


if __name__ == "__main__":
    sys.exit(main())
