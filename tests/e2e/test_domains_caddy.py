#!/usr/bin/env python3
"""test_domains_caddy.py: Caddy in front with on-demand TLS, offline (docs/operations.md "Custom domains").

Starts Caddy (Debian `caddy`) with the structure of httpd-conf/caddy/Caddyfile, its internal CA in place of
the ACME issuer (`tls internal`, no network) and ports of its own, asking the test stack's
GET /api/internal/tls/ask before each new certificate. A custom domain the web servers serve and a
published <slug>.<SVC_DOMAIN> get a certificate (checked against Caddy's root) and their site through
lighttpd; a name svc does not know fails the handshake.
"""
import os
import shutil
import socket
import ssl
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from svclib import (BASE_URL, DOMAIN, HTTP_PORT, api, check, create_project, finish, items_of, request, signup,
                    site_get)
from wslib import svc_admin

CADDYFILE = """{
	admin off
	storage file_system %(dir)s/data
	http_port %(http)d
	https_port %(https)d
	skip_install_trust
	on_demand_tls {
		ask %(ask)s
	}
}
https:// {
	tls internal {
		on_demand
	}
	reverse_proxy 127.0.0.1:%(upstream)d
}
"""


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def https_get(port, name, root, path="/"):
    """GET https://name:port/path through 127.0.0.1:port (SNI and Host name), the certificate checked
    against Caddy's root. Returns (status, body) or raises ssl.SSLError / OSError."""
    ctx = ssl.create_default_context(cafile=root) if root else ssl._create_unverified_context()
    with socket.create_connection(("127.0.0.1", port), timeout=20) as raw:
        with ctx.wrap_socket(raw, server_hostname=name) as s:
            s.sendall(("GET %s HTTP/1.0\r\nHost: %s\r\nConnection: close\r\n\r\n" % (path, name)).encode())
            data = b""
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    break
                data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head.split(b" ", 2)[1]), body


def main():
    caddy = shutil.which("caddy")
    if not check("test_caddy_installed", caddy is not None, "apt-get install caddy (svc-dev's packages)"):
        return finish()
    owner = signup(tag="caddy")
    rc, out = svc_admin("set-plan", owner.workspace_id, "pro")
    check("test_caddy_plan_set", rc == 0, out)
    pid = create_project(owner, template="blank").body["id"]
    r = api("POST", "/deploy/%s" % pid, token=owner.token)
    slug = r.body["slug"]
    r = api("POST", "/domains/project/%s" % pid, {"domain": "served.example.org"}, token=owner.token)
    check("test_caddy_domain_added", r.status == 201, r)
    end = time.time() + 40
    status = None
    while time.time() < end:
        d = {x["domain"]: x for x in items_of(api("GET", "/domains/project/%s" % pid, token=owner.token).body) or []}
        status = d.get("served.example.org", {}).get("status")
        if status in ("pending_verification", "active"):
            break
        time.sleep(0.5)
    check("test_caddy_domain_served", status in ("pending_verification", "active"), status)
    site = site_get(slug).raw
    end = time.time() + 30
    while time.time() < end and request("GET", "http://127.0.0.1:%d/" % HTTP_PORT, None,
                                        {"Host": "served.example.org"}).raw != site:
        time.sleep(0.5)   # svc-worker rewrites the include and reloads lighttpd

    tmp = tempfile.mkdtemp(prefix="svc-caddy.")
    https, http = free_port(), free_port()
    conf = os.path.join(tmp, "Caddyfile")
    with open(conf, "w") as f:
        f.write(CADDYFILE % {"dir": tmp, "http": http, "https": https, "upstream": HTTP_PORT,
                             "ask": BASE_URL + "/internal/tls/ask"})
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": tmp, "XDG_DATA_HOME": tmp,
           "XDG_CONFIG_HOME": tmp}
    log = open(os.path.join(tmp, "caddy.log"), "w")
    proc = subprocess.Popen([caddy, "run", "--config", conf, "--adapter", "caddyfile"], env=env, stdout=log,
                            stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    try:
        up = False
        for _ in range(200):
            try:
                socket.create_connection(("127.0.0.1", https), timeout=1).close()
                up = True
                break
            except OSError:
                time.sleep(0.1)
        if not check("test_caddy_starts", up and proc.poll() is None, open(os.path.join(tmp, "caddy.log")).read()):
            return finish()
        root = os.path.join(tmp, "data", "pki", "authorities", "local", "root.crt")
        try:
            st, body = https_get(https, "served.example.org", None)
            ok = st == 200 and body == site
        except (OSError, ssl.SSLError) as e:
            ok, st, body = False, 0, repr(e)
        check("test_caddy_custom_domain_gets_certificate_and_site", ok, (st, body[:300]))
        try:
            st, body = https_get(https, "served.example.org", root if os.path.exists(root) else None,
                                 "/.well-known/svc-site")
            ok = st == 200 and pid in body.decode()
        except (OSError, ssl.SSLError) as e:
            ok, body = False, repr(e)
        check("test_caddy_certificate_verifies_and_marker_served", ok and os.path.exists(root), body)
        host = "%s.%s" % (slug, DOMAIN)
        try:
            st, body = https_get(https, host, None)
            ok = st == 200 and body == site
        except (OSError, ssl.SSLError) as e:
            ok, st, body = False, 0, repr(e)
        check("test_caddy_published_slug_gets_certificate_and_site", ok, (st, body[:300]))
        refused = False
        try:
            https_get(https, "nothere.example.com", None)
        except (OSError, ssl.SSLError):
            refused = True
        check("test_caddy_unknown_name_fails_the_handshake", refused)
        refused = False
        try:
            https_get(https, "elsewhere.example.org", None)
        except (OSError, ssl.SSLError):
            refused = True
        check("test_caddy_name_svc_does_not_serve_fails_the_handshake", refused)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()
        shutil.rmtree(tmp, ignore_errors=True)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
