#!/usr/bin/env python3
# test_auth_csrf.py: cookie-authenticated unsafe requests need the app's Origin (or Referer); Bearer requests are exempt
import os
import sys
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from svclib import (APP_URL, BASE_URL, api, check, create_project, created_id, finish, is_error,  # noqa: E402
                    random_email, signup)


def main():
    a = signup(tag="csrf")
    r = create_project(a, "blank")
    pid = created_id(r)
    check("test_auth_csrf_project_created", pid is not None, r)
    cookie = {"Cookie": "svc_access_token=" + a.token}
    base_origin = "{0.scheme}://{0.netloc}".format(urllib.parse.urlsplit(BASE_URL))
    path = "/projects/%s" % pid

    # cookie + unsafe method: no Origin and no Referer, or a foreign one, is refused before the handler
    for name, extra in (("no_origin", {}), ("evil_origin", {"Origin": "http://evil.example"}),
                        ("null_origin", {"Origin": "null"}),
                        ("origin_prefix_trick", {"Origin": APP_URL + ".evil.example"}),
                        ("evil_referer", {"Referer": "http://evil.example/page"}),
                        ("referer_prefix_trick", {"Referer": APP_URL + ".evil.example/x"})):
        h = dict(cookie, **extra)
        r = api("PATCH", path, json={"name": "csrf-" + name}, headers=h)
        check("test_auth_csrf_cookie_patch_%s_is_403" % name, is_error(r, 403, "forbidden"), r)
    g = api("GET", path, token=a.token)
    check("test_auth_csrf_refused_requests_changed_nothing",
          g.status == 200 and not str(g.body.get("name", "")).startswith("csrf-"), g)
    for name, extra in (("app_origin", {"Origin": APP_URL}), ("base_url_origin", {"Origin": base_origin}),
                        ("app_referer", {"Referer": APP_URL + "/projects/x"})):
        r = api("PATCH", path, json={"name": "ok-" + name}, headers=dict(cookie, **extra))
        check("test_auth_csrf_cookie_patch_with_%s_is_200" % name, r.status == 200, r)
    r = api("DELETE", path, headers=dict(cookie, Origin="http://evil.example"))
    check("test_auth_csrf_cookie_delete_cross_site_is_403", is_error(r, 403, "forbidden"), r)
    r = api("POST", "/workspaces/%s/projects" % a.workspace_id, json={"name": "csrf", "template": "blank"},
            headers=cookie)
    check("test_auth_csrf_cookie_post_without_origin_is_403", is_error(r, 403, "forbidden"), r)
    r = api("GET", path, headers=cookie)
    check("test_auth_csrf_cookie_get_needs_no_origin", r.status == 200, r)

    # Bearer requests are exempt, whatever Origin they carry (a browser never sends the header cross-site by itself)
    r = api("PATCH", path, json={"name": "bearer"}, token=a.token, headers={"Origin": "http://evil.example"})
    check("test_auth_csrf_bearer_with_foreign_origin_is_allowed", r.status == 200, r)
    r = api("PATCH", path, json={"name": "bearer2"}, token=a.token)
    check("test_auth_csrf_bearer_without_origin_is_allowed", r.status == 200, r)

    # the auth flows with cookies
    r = api("POST", "/auth/refresh", headers={"Cookie": "svc_refresh_token=" + a.refresh})
    check("test_auth_csrf_refresh_cookie_without_origin_is_403", is_error(r, 403, "forbidden"), r)
    r = api("POST", "/auth/refresh", headers={"Cookie": "svc_refresh_token=" + a.refresh, "Origin": APP_URL})
    check("test_auth_csrf_refresh_cookie_with_origin_is_200", r.status == 200, r)
    r = api("POST", "/auth/logout", headers={"Cookie": "svc_access_token=" + a.token, "Origin": "http://evil.example"})
    check("test_auth_csrf_logout_cross_site_is_403", is_error(r, 403, "forbidden"), r)
    # login CSRF: a foreign page posting a login form (no cookie) is refused too
    r = api("POST", "/auth/login", {"email": a.email, "password": a.password}, headers={"Origin": "http://evil.example"})
    check("test_auth_csrf_login_from_foreign_origin_is_403", is_error(r, 403, "forbidden") and not r.cookies, r)
    r = api("POST", "/auth/login", {"email": a.email, "password": a.password}, headers={"Origin": APP_URL})
    check("test_auth_csrf_login_from_app_origin_is_200", r.status == 200, r)
    r = api("POST", "/auth/signup", {"email": random_email("csrf"), "password": "long-enough-pw"},
            headers={"Origin": "http://evil.example"})
    check("test_auth_csrf_signup_from_foreign_origin_is_403", is_error(r, 403, "forbidden"), r)
    # scripts without cookies and without Origin are not affected
    r = api("POST", "/auth/login", {"email": a.email, "password": a.password})
    check("test_auth_csrf_login_without_origin_or_cookie_is_200", r.status == 200, r)
    # preflight is not refused
    r = api("OPTIONS", path, headers={"Origin": APP_URL, "Access-Control-Request-Method": "PATCH"})
    check("test_auth_csrf_preflight_is_not_refused", r.status in (200, 204), r)

    # cookie tossing: a second cookie of one of svc's names (planted by a site of a shared parent
    # domain) makes the request fail, whichever comes first; other duplicated cookies do not matter
    b = signup(tag="toss")
    for name, hdr in (("planted_first", "svc_access_token=%s; svc_access_token=%s" % (b.token, a.token)),
                      ("planted_last", "svc_access_token=%s; theme=x; svc_access_token = %s" % (a.token, b.token)),
                      ("refresh", "svc_access_token=%s; svc_refresh_token=x; svc_refresh_token=y" % a.token),
                      ("oauth_state", "svc_oauth=a; svc_access_token=%s; svc_oauth=b" % a.token)):
        r = api("GET", path, headers={"Cookie": hdr})
        check("test_auth_cookie_tossing_%s_is_400" % name,
              is_error(r, 400, "validation_failed") and "two" in (r.body.get("message") or ""), r)
    r = api("PATCH", path, json={"name": "tossed"}, headers={"Cookie": "svc_access_token=%s; svc_access_token=%s"
                                                                        % (b.token, a.token), "Origin": APP_URL})
    check("test_auth_cookie_tossing_write_changes_nothing",
          is_error(r, 400, "validation_failed") and api("GET", path, token=a.token).body.get("name") != "tossed", r)
    r = api("GET", path, headers={"Cookie": "svc_access_token=%s; theme=a; theme=b" % a.token})
    check("test_auth_cookie_duplicate_foreign_cookie_is_ignored", r.status == 200, r)


if __name__ == "__main__":
    try:
        main()
    except Exception:
        import traceback
        check("test_auth_csrf ran to the end", False, traceback.format_exc())
    sys.exit(finish())
