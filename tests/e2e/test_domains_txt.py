#!/usr/bin/env python3
"""test_domains_txt.py: the custom domain's TXT proof (SVC_DOMAIN_TXT_PROOF=1, lib/project/domains.c) end to end,
over real DNS: a domain is verified once its _svc-challenge TXT record holds its token; a wrong token is refused.

The stack runs with the proof off, so this file starts its own nameserver, tests/fixtures/dns_double.py with a
records file it rewrites, and runs the check by hand with `svc-admin check-domain` and the proof on
(SVC_DOMAIN_TXT_PROOF=1, SVC_DNS_SERVER the double) against the stack's database. The stack's svc-worker, whose
resolver does not know these names, is kept off the domains (their next check an hour away) so that only these
checks decide.
"""
import json
import os
import subprocess
import sys
import tempfile
import time
import uuid

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from svclib import ADMIN_TOOL, TEST_CONFIG, api, check, finish, sql  # noqa: E402
from wslib import Team, create_in, svc_admin  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PUBLIC_IPV4 = "127.0.0.9"  # SVC_PUBLIC_IPV4 of the test stack (tests/stack.env)


class Nameserver:
    """The DNS double on a loopback port, answering the records of a JSON file reread on every query."""

    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="svc-txt-")
        self.records = os.path.join(self.dir, "records.json")
        self.set({})
        port_file = os.path.join(self.dir, "port")
        self.log = open(os.path.join(self.dir, "dns.log"), "w")
        self.proc = subprocess.Popen([sys.executable, os.path.join(ROOT, "tests", "fixtures", "dns_double.py"),
                                      "--port-file", port_file, "--records", self.records],
                                     stdout=self.log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        for _ in range(100):
            if os.path.exists(port_file) and open(port_file).read().strip():
                break
            time.sleep(0.1)
        self.port = int(open(port_file).read().split()[0])

    def set(self, records):
        tmp = self.records + ".tmp"
        with open(tmp, "w") as f:
            json.dump(records, f)
        os.replace(tmp, self.records)

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.log.close()


def check_by_hand(ns, domain_id):
    """svc-admin check-domain with the TXT proof on and the double as the resolver: (exit status, its stdout;
    its stderr, the log, after a NUL when there is any)."""
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "SVC_CONFIG": TEST_CONFIG, "ASAN_OPTIONS": "detect_leaks=0",
           "SVC_DOMAIN_TXT_PROOF": "1", "SVC_DNS_SERVER": "127.0.0.1:%d" % ns.port}
    p = subprocess.run([ADMIN_TOOL, "check-domain", domain_id], env=env, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=60)
    out = p.stdout.decode("utf-8", "replace")
    return p.returncode, out + ("\0" + p.stderr.decode("utf-8", "replace") if p.stderr else "")


def park(domain_id):
    """Keeps the stack's svc-worker (proof off, another resolver) from checking the domain for an hour."""
    sql("UPDATE custom_domains SET next_check_at = DATE_ADD(UTC_TIMESTAMP(3), INTERVAL 1 HOUR) WHERE id = '%s'"
        % domain_id)


def row(domain_id):
    """(status, txt_token) of the domain as stored."""
    out = sql("SELECT status, txt_token FROM custom_domains WHERE id = '%s'" % domain_id).strip().split("\t")
    return (out + ["", ""])[:2]


def add_domain(owner, pid, name):
    r = api("POST", "/domains/project/%s" % pid, {"domain": name}, token=owner.token)
    if r.status != 201:
        raise AssertionError("adding %s failed: %r" % (name, r))
    park(r.body["id"])
    return r.body["id"]


def main():
    if not ADMIN_TOOL or not TEST_CONFIG:
        check("test_domains_txt needs svc-admin and the stack's settings", False, "run through ./svc-dev test")
        return
    team = Team("domtxt")
    owner = team.owner
    rc, out = svc_admin("set-plan", team.wid, "business")
    if rc != 0:
        raise AssertionError("set-plan failed: %s" % out)
    pid = create_in(owner, team.wid, "TXT proof", template="blank").body["id"]
    r = api("POST", "/deploy/%s" % pid, token=owner.token)
    if r.status != 200:
        raise AssertionError("deploy failed: %r" % r)
    tag = uuid.uuid4().hex[:8]
    good, bad = "proof-%s.example.org" % tag, "wrongproof-%s.example.org" % tag
    ns = Nameserver()
    try:
        good_id, bad_id = add_domain(owner, pid, good), add_domain(owner, pid, bad)
        token, bad_token = row(good_id)[1], row(bad_id)[1]
        check("test_domains_txt_each_domain_has_a_token_of_32_hex_digits",
              len(token) == 32 and all(c in "0123456789abcdef" for c in token) and len(bad_token) == 32
              and token != bad_token, (token, bad_token))

        # the A record alone does not pass while the proof is on
        ns.set({good: {"A": [PUBLIC_IPV4]}, "_svc-challenge." + good: {}, bad: {"A": [PUBLIC_IPV4]}})
        rc, out = check_by_hand(ns, good_id)
        park(good_id)
        check("test_domains_txt_without_the_record_the_dns_check_fails",
              rc == 0 and out.startswith(good + " pending_dns") and "_svc-challenge." + good in out
              and "TXT" in out and row(good_id)[0] == "pending_dns", (rc, out))

        # its record with the token (among others) verifies it; another domain's token does not
        ns.set({good: {"A": [PUBLIC_IPV4]}, "_svc-challenge." + good: {"TXT": ["v=other", token]},
                bad: {"A": [PUBLIC_IPV4]}, "_svc-challenge." + bad: {"TXT": [token, bad_token[:31] + "x"]}})
        rc, out = check_by_hand(ns, good_id)
        status = row(good_id)[0]
        park(good_id)
        check("test_domains_txt_the_record_with_its_token_verifies_the_domain",
              rc == 0 and out.split("\0")[0] == good + " pending_verification\n" and status == "pending_verification",
              (rc, out, status))
        d = {x["id"]: x for x in (api("GET", "/domains/project/%s" % pid, token=owner.token).body or {})
             .get("items") or []}
        check("test_domains_txt_the_api_shows_the_verified_domain",
              (d.get(good_id) or {}).get("status") == "pending_verification", d)
        rc, out = check_by_hand(ns, bad_id)
        park(bad_id)
        check("test_domains_txt_a_wrong_token_is_refused",
              rc == 0 and out.startswith(bad + " pending_dns") and "TXT" in out and row(bad_id)[0] == "pending_dns",
              (rc, out))
        rc, out = check_by_hand(ns, str(uuid.uuid4()))
        check("test_domains_txt_svc_admin_check_domain_unknown_is_1", rc == 1 and "no custom domain" in out, (rc, out))
    finally:
        ns.stop()
        for i in (good_id, bad_id) if "bad_id" in locals() else ():
            api("DELETE", "/domains/%s" % i, token=owner.token)


if __name__ == "__main__":
    try:
        main()
    except Exception:
        import traceback
        check("test_domains_txt ran to the end", False, traceback.format_exc())
    sys.exit(finish())
