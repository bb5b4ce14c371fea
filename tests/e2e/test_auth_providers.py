#!/usr/bin/env python3
# test_auth_providers.py: GET /auth/providers (the sign-in buttons of the login page) and /auth/me's features.collaboration, on a front end with OAuth and svc-wsd and on one without
import os
import sys
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from svclib import BASE_URL, NOPROVIDER_BASE_URL, api, check, finish, signup  # noqa: E402


def main():
    r = api("GET", "/auth/providers")
    ok = r.status == 200 and isinstance(r.body, dict) and isinstance(r.body.get("items"), list)
    check("test_auth_providers_public_200", ok, r)
    items = r.body.get("items", []) if ok else []
    check("test_auth_providers_lists_the_configured_ones", [p.get("id") for p in items] == ["github", "google"], items)
    check("test_auth_providers_items_have_exactly_the_fields",
          all(set(p) == {"id", "name", "url"} for p in items), items)
    check("test_auth_providers_names_for_people", [p.get("name") for p in items] == ["GitHub", "Google"], items)
    check("test_auth_providers_url_starts_the_oauth_flow",
          all(p.get("url") == "%s/auth/%s" % (BASE_URL, p.get("id")) for p in items), items)
    if items:
        s = api("GET", urllib.parse.urlsplit(items[0]["url"]).path[len(urllib.parse.urlsplit(BASE_URL).path):])
        check("test_auth_providers_url_redirects_to_the_provider", s.status == 302 and "client_id=" in
              s.headers.get("location", ""), s)
    check("test_auth_providers_sets_no_cookie", not r.cookies, r.headers)
    r = api("POST", "/auth/providers", {})
    check("test_auth_providers_post_405", r.status == 405 and r.body.get("error") == "method_not_allowed", r)
    r = api("GET", "/auth/providers", token="x.y.z")
    check("test_auth_providers_ignores_a_bad_token", r.status == 200, r)

    a = signup(tag="feat")
    me = api("GET", "/auth/me", token=a.token)
    check("test_auth_me_collaboration_true_with_svc_wsd",
          me.status == 200 and me.body.get("features", {}).get("collaboration") is True, me)
    if not NOPROVIDER_BASE_URL:
        check("test_auth_providers_bare_front_end_is_configured", False, "SVC_NOPROVIDER_BASE_URL is not set")
        return finish()
    r = api("GET", "/auth/providers", base=NOPROVIDER_BASE_URL)
    check("test_auth_providers_none_configured_empty_list", r.status == 200 and r.body == {"items": []}, r)
    b = signup(tag="feat-bare")  # on the main front: the bare one verifies sign-ups by mail (same database)
    me = api("GET", "/auth/me", token=b.token, base=NOPROVIDER_BASE_URL)
    check("test_auth_me_collaboration_false_without_svc_wsd",
          me.status == 200 and me.body.get("features", {}).get("collaboration") is False, me)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
