#!/usr/bin/env python3
"""test_domains.py: plans, custom domains and on-demand TLS (docs/api.md "Plans", "Custom domains").

Runs against ./svc-dev test's stack: dnsmasq answers the names below (SVC_DNS_SERVER), the HTTPS
front tests/fixtures/tls_endpoint.py holds a certificate of the test CA for cname.example.org,
direct.example.com, served.example.org and wrong.example.com (not nocert.example.com), svc-worker
checks pending domains every second with at most 4 failures of a stage, and
SVC_SITES_RELOAD_CMD reloads lighttpd and Apache after the includes change.

  cname.example.org     CNAME sites.example.net (SVC_CNAME_TARGET) -> 127.0.0.9 (the HTTPS front)
  served.example.org    CNAME sites.example.net
  direct.example.com    A 127.0.0.9 (SVC_PUBLIC_IPV4)
  nocert.example.com    A 127.0.0.9, but the HTTPS front has no certificate for it
  wrong.example.com     A 192.0.2.7
  elsewhere.example.org CNAME other.example.net -> 192.0.2.8
  anything else         refused
"""
import os
import re
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from svclib import (DATA_DIR, DOMAIN, HTTP_PORT, TIME_RE, UNKNOWN_ID, UUID_RE, api, check, create_project,
                    finish, is_error, items_of, request, signup, site_get)
from wslib import Team, create_in, platform_admin, svc_admin

APACHE_URL = os.environ.get("SVC_TEST_APACHE_URL", "")


def publish(acct, pid):
    """Publishes project pid (the site gets its marker .well-known/svc-site); returns its slug."""
    r = api("POST", "/deploy/%s" % pid, token=acct.token)
    if r.status != 200:
        raise AssertionError("deploy failed: %r" % r)
    return r.body["slug"]


def domains_of(acct, pid):
    r = api("GET", "/domains/project/%s" % pid, token=acct.token)
    return {d["domain"]: d for d in (items_of(r.body) or [])} if r.status == 200 else {}


def wait_status(acct, pid, name, want, secs=40):
    """Polls the project's domains until `name` has a status in `want`; returns its last entry."""
    end = time.time() + secs
    d = None
    while time.time() < end:
        d = domains_of(acct, pid).get(name)
        if d and d["status"] in want:
            return d
        time.sleep(0.5)
    return d


def verify(acct, domain_id):
    """POST /domains/:id/verify, asking again after Retry-After while the cooldown lasts (SVC_DOMAIN_VERIFY_COOLDOWN_SECS)."""
    for _ in range(10):
        r = api("POST", "/domains/%s/verify" % domain_id, token=acct.token)
        if r.status != 429:
            return r
        time.sleep(float(r.headers.get("retry-after", "1")))
    return r


def wait_reason(acct, pid, name, words, secs=40):
    """Polls the project's domains until `name`'s reason holds `words`; returns its last entry."""
    end = time.time() + secs
    d = None
    while time.time() < end:
        d = domains_of(acct, pid).get(name)
        if d and words in (d.get("reason") or ""):
            return d
        time.sleep(0.5)
    return d


def host_get(base, host, path="/"):
    return request("GET", base + path, None, {"Host": host})


def ask(name, headers=None):
    return api("GET", "/internal/tls/ask?domain=" + name, headers=headers)


def main():
    padmin = platform_admin("dom-padmin")
    team = Team("dom")
    owner = team.owner

    # ---- plans -------------------------------------------------------------------------------
    path = "/admin/workspaces/%s" % team.wid
    check("test_plans_patch_anonymous_401", is_error(api("PATCH", path, {"plan": "pro"}), 401, "unauthorized"))
    r = api("PATCH", path, {"plan": "pro"}, token=owner.token)
    check("test_plans_patch_owner_403", is_error(r, 403, "forbidden"), r)
    check("test_plans_patch_unknown_workspace_404",
          is_error(api("PATCH", "/admin/workspaces/%s" % UNKNOWN_ID, {"plan": "pro"}, token=padmin.token), 404,
                   "not_found"))
    check("test_plans_patch_bad_plan_400",
          is_error(api("PATCH", path, {"plan": "gold"}, token=padmin.token), 400, "validation_failed", "plan"))
    check("test_plans_patch_missing_plan_400",
          is_error(api("PATCH", path, {}, token=padmin.token), 400, "validation_failed", "plan"))
    r = api("PATCH", path, {"plan": "pro"}, token=padmin.token)
    check("test_plans_patch_platform_admin_200",
          r.status == 200 and r.body.get("plan") == "pro" and r.body.get("customDomainLimit") == 1
          and r.body.get("id") == team.wid, r)
    rc, out = svc_admin("set-plan", team.wid, "gold")
    check("test_plans_svc_admin_bad_plan", rc == 2, out)
    rc, out = svc_admin("set-plan", UNKNOWN_ID, "pro")
    check("test_plans_svc_admin_unknown_workspace", rc == 1, out)

    # ---- adding: permissions, publishing, plan limit -----------------------------------------
    r = create_in(owner, team.wid, "Domains one", template="blank")
    pid = r.body["id"]
    add = "/domains/project/%s" % pid
    check("test_domains_add_anonymous_401", is_error(api("POST", add, {"domain": "cname.example.org"}), 401,
                                                     "unauthorized"))
    check("test_domains_add_outsider_403", is_error(api("POST", add, {"domain": "cname.example.org"},
                                                        token=team.outsider.token), 403, "forbidden"))
    check("test_domains_add_member_403", is_error(api("POST", add, {"domain": "cname.example.org"},
                                                      token=team.member.token), 403, "forbidden"))
    check("test_domains_add_unknown_project_404",
          is_error(api("POST", "/domains/project/%s" % UNKNOWN_ID, {"domain": "cname.example.org"},
                       token=owner.token), 404, "not_found"))
    check("test_domains_add_malformed_project_id_404",
          is_error(api("POST", "/domains/project/not-a-uuid", {"domain": "cname.example.org"}, token=owner.token),
                   404, "not_found"))
    r = api("POST", add, {"domain": "cname.example.org"}, token=team.admin.token)
    check("test_domains_add_before_publish_409_not_published", is_error(r, 409, "not_published"), r)
    slug = publish(owner, pid)

    # the name rules (400 domain)
    for tag, name, words in (
            ("two_labels_under_registrable", "myapp.prod.example.com", "TLS cipher mismatch"),
            ("ipv4", "192.0.2.1", "IP address"),
            ("ipv6", "2001:db8::1", "IP address"),
            ("under_svc_domain", "myapp." + DOMAIN, "platform"),
            ("svc_domain_itself", DOMAIN, ""),
            ("underscore", "my_app.example.com", "hostname"),
            ("space", "my app.example.com", "hostname"),
            ("public_suffix", "co.uk", "public suffix"),
            ("single_label", "intranet", ""),
            ("long_label", "a" * 64 + ".example.com", "63"),
            ("empty", "", ""),
            ("url", "https://myapp.example.com/", "")):
        r = api("POST", add, {"domain": name}, token=owner.token)
        check("test_domains_add_refuses_%s_400" % tag,
              is_error(r, 400, "validation_failed", "domain") and words in r.body.get("message", ""), r)
    check("test_domains_add_missing_domain_400",
          is_error(api("POST", add, {}, token=owner.token), 400, "validation_failed", "domain"))
    check("test_domains_add_domain_not_string_400",
          is_error(api("POST", add, {"domain": 7}, token=owner.token), 400, "validation_failed", "domain"))
    check("test_domains_add_not_json_415",
          api("POST", add, raw="domain=x", headers={"Content-Type": "text/plain"}, token=owner.token).status == 415)

    # free plan: none
    solo = signup(tag="dom-solo")
    spid = create_project(solo, template="blank").body["id"]
    publish(solo, spid)
    r = api("POST", "/domains/project/%s" % spid, {"domain": "served.example.org"}, token=solo.token)
    check("test_domains_add_free_plan_403_plan_limit", is_error(r, 403, "plan_limit") and "free" in r.body["message"],
          r)

    # pro (1): the first one is added as pending_dns, with the records to set
    r = api("POST", add, {"domain": "CNAME.Example.ORG."}, token=team.admin.token)
    b = r.body if isinstance(r.body, dict) else {}
    check("test_domains_add_201_pending_dns_with_records",
          r.status == 201 and re.match(UUID_RE, b.get("id") or "") and b.get("domain") == "cname.example.org"
          and b.get("status") == "pending_dns"
          and b.get("dnsRecords") == [{"type": "CNAME", "name": "cname.example.org", "value": "sites.example.net"},
                                      {"type": "A", "name": "cname.example.org", "value": "127.0.0.9"}], r)
    cname_id = b.get("id")
    r = api("POST", add, {"domain": "direct.example.com"}, token=owner.token)
    check("test_domains_add_pro_second_403_plan_limit", is_error(r, 403, "plan_limit") and "pro" in r.body["message"],
          r)
    rc, out = svc_admin("set-plan", team.wid, "business")
    check("test_plans_svc_admin_set_plan", rc == 0 and "business" in out, out)
    r = api("POST", add, {"domain": "cname.example.org"}, token=owner.token)
    check("test_domains_add_same_name_same_project_409", is_error(r, 409, "conflict", "domain"), r)
    pid2 = create_in(owner, team.wid, "Domains two", template="blank").body["id"]
    slug2 = publish(owner, pid2)
    r = api("POST", "/domains/project/%s" % pid2, {"domain": "cname.example.org"}, token=owner.token)
    check("test_domains_add_same_name_other_project_409", is_error(r, 409, "conflict", "domain"), r)

    ids = {}
    for name, p in (("direct.example.com", pid2), ("wrong.example.com", pid), ("elsewhere.example.org", pid),
                    ("nocert.example.com", pid2)):
        r = api("POST", "/domains/project/%s" % p, {"domain": name}, token=owner.token)
        ids[name] = r.body.get("id") if r.status == 201 else None
        check("test_domains_add_%s_201" % name.split(".")[0], r.status == 201, r)

    # ---- listing -------------------------------------------------------------------------------
    lst = "/domains/project/%s" % pid
    check("test_domains_list_anonymous_401", is_error(api("GET", lst), 401, "unauthorized"))
    check("test_domains_list_outsider_403", is_error(api("GET", lst, token=team.outsider.token), 403, "forbidden"))
    check("test_domains_list_unknown_project_404",
          is_error(api("GET", "/domains/project/%s" % UNKNOWN_ID, token=owner.token), 404, "not_found"))
    r = api("GET", lst, token=team.member.token)
    items = items_of(r.body) or []
    check("test_domains_list_member_200_shape",
          r.status == 200 and [d["domain"] for d in items] == ["cname.example.org", "wrong.example.com",
                                                              "elsewhere.example.org"]
          and all(set(d) == {"id", "domain", "status", "reason", "checkedAt", "dnsRecords"} for d in items)
          and items[0]["dnsRecords"][0] == {"type": "CNAME", "name": "cname.example.org", "value": "sites.example.net"},
          r)

    # ---- verify: permissions and the DNS check ---------------------------------------------------
    v = "/domains/%s/verify" % cname_id
    check("test_domains_verify_anonymous_401", is_error(api("POST", v), 401, "unauthorized"))
    check("test_domains_verify_member_403", is_error(api("POST", v, token=team.member.token), 403, "forbidden"))
    check("test_domains_verify_unknown_404",
          is_error(api("POST", "/domains/%s/verify" % UNKNOWN_ID, token=owner.token), 404, "not_found"))
    # the checks run on svc-worker (issue 25, item 4): 202 with the status as it is, then the list tells
    r = verify(owner, ids["wrong.example.com"])
    d = wait_reason(owner, pid, "wrong.example.com", "192.0.2.7")
    check("test_domains_verify_wrong_address_stays_pending_dns",
          r.status == 202 and r.body.get("status") in ("pending_dns", "error")
          and re.match(TIME_RE, r.body.get("checkQueuedAt") or "")
          and d and d["status"] in ("pending_dns", "error") and "192.0.2.7" in (d.get("reason") or "")
          and re.match(TIME_RE, d.get("checkedAt") or ""), (r, d))
    r = verify(owner, ids["elsewhere.example.org"])
    d = wait_reason(owner, pid, "elsewhere.example.org", "sites.example.net")
    # (svc-worker's own rounds may have spent the domain's budget by now: error, never further on)
    check("test_domains_verify_wrong_cname_stays_pending_dns",
          r.status == 202 and r.body.get("status") in ("pending_dns", "error") and d
          and d["status"] in ("pending_dns", "error") and "sites.example.net" in (d.get("reason") or ""), (r, d))

    # ---- the state machine through active --------------------------------------------------------
    r = verify(team.admin, cname_id)
    d = wait_status(owner, pid, "cname.example.org", ("pending_verification", "active"))
    check("test_domains_verify_cname_moves_on",
          r.status == 202 and r.body.get("domain") == "cname.example.org" and d
          and d["status"] in ("pending_verification", "active"), (r, d))
    d = wait_status(owner, pid, "cname.example.org", ("active",))
    check("test_domains_cname_becomes_active", d and d["status"] == "active" and d["reason"] is None, d)
    d = wait_status(owner, pid2, "direct.example.com", ("active",))
    check("test_domains_a_record_becomes_active", d and d["status"] == "active", d)
    r = api("GET", "/projects/%s" % pid, token=owner.token)
    check("test_domains_project_custom_domain", r.body.get("customDomain") == "cname.example.org", r)
    r = verify(owner, cname_id)
    check("test_domains_verify_active_stays_active", r.status == 202 and r.body.get("status") == "active"
          and r.body.get("domain") == "cname.example.org" and len(r.body.get("dnsRecords") or []) == 2, r)

    # ---- and through error ------------------------------------------------------------------------
    d = wait_status(owner, pid, "wrong.example.com", ("error",))
    check("test_domains_wrong_address_ends_in_error",
          d and d["status"] == "error" and "192.0.2.7" in (d["reason"] or ""), d)
    d = wait_status(owner, pid2, "nocert.example.com", ("error",))
    check("test_domains_https_failure_ends_in_error",
          d and d["status"] == "error" and "HTTPS" in (d["reason"] or ""), d)
    r = verify(owner, ids["wrong.example.com"])
    d = wait_status(owner, pid, "wrong.example.com", ("pending_dns",))
    check("test_domains_verify_error_restarts_the_checks",
          r.status == 202 and d and d["status"] == "pending_dns", (r, d))

    # ---- the web servers serve active domains -----------------------------------------------------
    site = site_get(slug)
    base = "http://127.0.0.1:%d" % HTTP_PORT
    r = host_get(base, "cname.example.org:%d" % HTTP_PORT)
    check("test_domains_lighttpd_serves_custom_host", r.status == 200 and r.raw == site.raw, r)
    r = host_get(base, "cname.example.org")
    check("test_domains_lighttpd_serves_custom_host_without_port", r.status == 200 and r.raw == site.raw, r)
    r = host_get(base, "cname.example.org", "/.well-known/svc-site")
    check("test_domains_lighttpd_serves_the_marker", r.status == 200 and pid in r.raw.decode()
          and r.headers.get("content-type", "").startswith("text/plain"), r)
    r = host_get(base, "cname.example.org", "/api/auth/me")
    check("test_domains_lighttpd_custom_host_has_no_api", r.status == 404, r)
    r = host_get(base, "direct.example.com")
    check("test_domains_lighttpd_serves_second_site", r.status == 200 and r.raw == site_get(slug2).raw, r)
    if APACHE_URL:
        r = host_get(APACHE_URL, "cname.example.org")
        check("test_domains_apache_serves_custom_host", r.status == 200 and r.raw == site.raw, r)
        r = host_get(APACHE_URL, "cname.example.org", "/.well-known/svc-site")
        check("test_domains_apache_serves_the_marker", r.status == 200 and pid in r.raw.decode()
              and r.headers.get("content-type", "").startswith("text/plain"), r)
        r = host_get(APACHE_URL, "cname.example.org", "/.git/config")
        check("test_domains_apache_no_dotfiles", r.status in (403, 404), r)
    r = host_get(base, "cname.example.org", "/.git/config")
    check("test_domains_lighttpd_no_dotfiles", r.status in (403, 404), r)
    with open(os.path.join(DATA_DIR, "sites", "lighttpd-domains.conf")) as f:
        conf = f.read()
    check("test_domains_include_lists_served_only",
          "cname\\.example\\.org" in conf and "direct\\.example\\.com" in conf and "wrong\\.example" not in conf,
          conf)

    # ---- on-demand TLS: the ask endpoint -----------------------------------------------------------
    check("test_tls_ask_active_domain_200", ask("cname.example.org").status == 200)
    check("test_tls_ask_upper_case_200", ask("CNAME.example.org").status == 200)
    check("test_tls_ask_published_slug_200", ask("%s.%s" % (slug, DOMAIN)).status == 200)
    unpub = create_project(owner, template="blank").body
    check("test_tls_ask_unpublished_slug_404", is_error(ask("%s.%s" % (unpub["slug"], DOMAIN)), 404, "not_found"))
    check("test_tls_ask_two_labels_under_domain_404", ask("a.%s.%s" % (slug, DOMAIN)).status == 404)
    check("test_tls_ask_pending_domain_404", ask("elsewhere.example.org").status == 404)
    check("test_tls_ask_unknown_domain_404", ask("nothere.example.com").status == 404)
    check("test_tls_ask_missing_domain_400", is_error(api("GET", "/internal/tls/ask"), 400, "validation_failed",
                                                      "domain"))
    r = ask("cname.example.org", headers={"X-Forwarded-For": "203.0.113.9"})
    check("test_tls_ask_refuses_remote_clients_404", is_error(r, 404, "not_found"), r)

    # ---- removing --------------------------------------------------------------------------------
    dl = "/domains/%s" % cname_id
    check("test_domains_delete_anonymous_401", is_error(api("DELETE", dl), 401, "unauthorized"))
    check("test_domains_delete_member_403", is_error(api("DELETE", dl, token=team.member.token), 403, "forbidden"))
    check("test_domains_delete_unknown_404",
          is_error(api("DELETE", "/domains/%s" % UNKNOWN_ID, token=owner.token), 404, "not_found"))
    r = api("DELETE", dl, token=team.admin.token)
    check("test_domains_delete_admin_200", r.status == 200 and r.body.get("deleted") is True
          and r.body.get("domain") == "cname.example.org", r)
    check("test_domains_delete_twice_404", is_error(api("DELETE", dl, token=owner.token), 404, "not_found"))
    check("test_domains_delete_gone_from_list", "cname.example.org" not in domains_of(owner, pid))
    check("test_domains_delete_clears_custom_domain",
          api("GET", "/projects/%s" % pid, token=owner.token).body.get("customDomain") is None)
    check("test_tls_ask_removed_domain_404", ask("cname.example.org").status == 404)
    end = time.time() + 20
    while time.time() < end and host_get(base, "cname.example.org").raw == site.raw:
        time.sleep(0.5)
    r = host_get(base, "cname.example.org")
    check("test_domains_lighttpd_stops_serving_removed_domain", r.raw != site.raw, r)
    if APACHE_URL:
        r = host_get(APACHE_URL, "cname.example.org")
        check("test_domains_apache_stops_serving_removed_domain", r.raw != site.raw, r)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
