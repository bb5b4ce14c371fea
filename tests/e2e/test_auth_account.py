#!/usr/bin/env python3
# test_auth_account.py: the account settings' endpoints: PATCH /auth/me, POST /auth/password (other sessions end), identities (list, connect, disconnect), the provider key's last four
import os
import re
import secrets
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from svclib import (APP_URL, TIME_RE, api, check, finish, is_error, random_email, signup)  # noqa: E402
from test_auth_oauth import DOUBLE, Flow, cookie_pairs, double, lands  # noqa: E402
from test_auth_ratelimit import fresh_addr, is_429  # noqa: E402
from test_auth_reset import SMTP_URL, forgot, token_of, wait_message  # noqa: E402


def pat(acct, scopes=("admin",), token=None):
    """An API token of acct (the account endpoints are for sessions only)."""
    r = api("POST", "/auth/tokens", {"name": "account test", "scopes": list(scopes)}, token=token or acct.token)
    return r.body.get("token") if r.status == 201 else None


def login(email, password, addr=None):
    return api("POST", "/auth/login", {"email": email, "password": password},
               headers={"X-Forwarded-For": addr} if addr else None)


def change(acct, current, new, token=None, addr=None):
    body = {"newPassword": new}
    if current is not None:
        body["currentPassword"] = current
    return api("POST", "/auth/password", body, token=token or acct.token,
               headers={"X-Forwarded-For": addr} if addr else None)


def test_display_name():
    a = signup(tag="acct-name")
    r = api("PATCH", "/auth/me", {"displayName": "Ada Lovelace"}, token=a.token)
    u = r.body.get("user", {}) if isinstance(r.body, dict) else {}
    check("test_auth_account_me_patch_is_200_with_the_user",
          r.status == 200 and u.get("displayName") == "Ada Lovelace" and u.get("id") == a.user["id"]
          and u.get("email") == a.email and re.match(TIME_RE, u.get("createdAt") or ""), r)
    me = api("GET", "/auth/me", token=a.token)
    check("test_auth_account_me_patch_shows_in_me", me.body.get("user", {}).get("displayName") == "Ada Lovelace", me)
    r = api("PATCH", "/auth/me", {"displayName": "   "}, token=a.token)
    check("test_auth_account_me_patch_blank_clears_the_name",
          r.status == 200 and r.body.get("user", {}).get("displayName") is None, r)
    r = api("PATCH", "/auth/me", {"displayName": None}, token=a.token)
    check("test_auth_account_me_patch_null_clears_the_name",
          r.status == 200 and r.body.get("user", {}).get("displayName") is None, r)
    r = api("PATCH", "/auth/me", {"displayName": "é" * 128}, token=a.token)
    check("test_auth_account_me_patch_128_characters_pass", r.status == 200, r)
    for name, body in (("missing", {}), ("too_long", {"displayName": "n" * 129}), ("not_a_string", {"displayName": 5})):
        r = api("PATCH", "/auth/me", body, token=a.token)
        check("test_auth_account_me_patch_%s_is_400" % name, is_error(r, 400, "validation_failed", "displayName"), r)
    r = api("PATCH", "/auth/me", raw="{nope", token=a.token)
    check("test_auth_account_me_patch_bad_json_is_400", is_error(r, 400, "invalid_json"), r)
    r = api("PATCH", "/auth/me", {"displayName": "x"})
    check("test_auth_account_me_patch_without_session_is_401", is_error(r, 401, "unauthorized"), r)
    tok = pat(a)
    r = api("PATCH", "/auth/me", {"displayName": "by token"}, token=tok)
    check("test_auth_account_me_patch_with_api_token_is_403", is_error(r, 403, "forbidden"), r)
    r = api("PATCH", "/auth/me", {"displayName": "x"}, headers={"Cookie": "svc_access_token=" + a.token,
                                                               "Origin": "http://evil.example"})
    check("test_auth_account_me_patch_cross_site_is_403", is_error(r, 403, "forbidden"), r)


def test_password_change():
    a = signup(tag="acct-pw")
    other = login(a.email, a.password)   # another session of the same account
    check("test_auth_account_password_other_session_signed_in", other.status == 200, other)
    # both sessions' checks are remembered by the responders (for at most 1 s): the change still ends them at once
    warm = {api("GET", "/projects", token=t).status for t in (a.token, other.body.get("accessToken")) for _ in range(6)}
    check("test_auth_account_password_sessions_work_before", warm == {200}, warm)
    new = "pw-new-" + secrets.token_hex(6)
    r = change(a, a.password, new)
    b = r.body if isinstance(r.body, dict) else {}
    cp = cookie_pairs(r)
    check("test_auth_account_password_change_is_200_with_a_new_session",
          r.status == 200 and b.get("user", {}).get("id") == a.user["id"] and b.get("accessToken")
          and b.get("refreshToken") and b.get("expiresIn") and cp.get("svc_access_token") and cp.get("svc_refresh_token"), r)
    check("test_auth_account_password_old_password_no_longer_signs_in",
          is_error(login(a.email, a.password), 401, "unauthorized"), None)
    check("test_auth_account_password_new_password_signs_in", login(a.email, new).status == 200, None)
    r = api("POST", "/auth/refresh", {"refreshToken": other.body.get("refreshToken")})
    check("test_auth_account_password_other_sessions_refresh_token_is_401", is_error(r, 401, "unauthorized"), r)
    r = api("POST", "/auth/refresh", {"refreshToken": a.refresh})
    check("test_auth_account_password_this_sessions_old_refresh_token_is_401", is_error(r, 401, "unauthorized"), r)
    r = api("POST", "/auth/refresh", {"refreshToken": b.get("refreshToken")})
    check("test_auth_account_password_the_new_refresh_token_works", r.status == 200, r)
    r2 = api("POST", "/auth/refresh", {"refreshToken": r.body.get("refreshToken")})
    check("test_auth_account_password_refreshed_tokens_keep_working", r2.status == 200, r2)
    # every request checks the user's generation: an access token from before the change stops at once
    # (review finding 1 of issue 17)
    r = api("GET", "/auth/me", token=other.body.get("accessToken"))
    check("test_auth_account_password_old_access_token_stops_at_once", is_error(r, 401, "unauthorized"), r)
    r = api("GET", "/projects", token=a.token)
    check("test_auth_account_password_this_sessions_old_access_token_stops", is_error(r, 401, "unauthorized"), r)
    # errors
    tok = b.get("accessToken")
    r = change(a, "wrong-" + secrets.token_hex(4), "pw-" + secrets.token_hex(6), token=tok)
    check("test_auth_account_password_wrong_current_is_403", is_error(r, 403, "forbidden"), r)
    check("test_auth_account_password_wrong_current_changes_nothing", login(a.email, new).status == 200, None)
    r = change(a, None, "pw-" + secrets.token_hex(6), token=tok)
    check("test_auth_account_password_missing_current_is_400", is_error(r, 400, "validation_failed", "currentPassword"), r)
    r = change(a, "", "pw-" + secrets.token_hex(6), token=tok)
    check("test_auth_account_password_empty_current_is_400", is_error(r, 400, "validation_failed", "currentPassword"), r)
    for name, body in (("short", {"currentPassword": new, "newPassword": "1234567"}),
                       ("long", {"currentPassword": new, "newPassword": "p" * 1025}),
                       ("missing", {"currentPassword": new}),
                       ("not_a_string", {"currentPassword": new, "newPassword": 12345678})):
        r = api("POST", "/auth/password", body, token=tok)
        check("test_auth_account_password_new_%s_is_400" % name, is_error(r, 400, "validation_failed", "newPassword"), r)
    r = api("POST", "/auth/password", {"currentPassword": 5, "newPassword": "pw-" + secrets.token_hex(6)}, token=tok)
    check("test_auth_account_password_current_not_a_string_is_400",
          is_error(r, 400, "validation_failed", "currentPassword"), r)
    r = api("POST", "/auth/password", {"currentPassword": new, "newPassword": "pw-" + secrets.token_hex(6)})
    check("test_auth_account_password_without_session_is_401", is_error(r, 401, "unauthorized"), r)
    r = change(a, new, "pw-" + secrets.token_hex(6), token=pat(a, token=tok))
    check("test_auth_account_password_with_api_token_is_403", is_error(r, 403, "forbidden"), r)
    check("test_auth_account_password_refusals_changed_nothing", login(a.email, new).status == 200, None)


def test_password_rate_limits():
    a = signup(tag="acct-pw-rl")
    # per address (SVC_RATE_LIMIT_LOGIN_IP, 10 a minute): the 11th request from one address is 429
    addr = fresh_addr()
    rs = [change(a, None, "pw-" + secrets.token_hex(6), addr=addr) for _ in range(11)]
    check("test_auth_account_password_10_a_minute_per_address_pass",
          all(r.status == 400 for r in rs[:10]), [r.status for r in rs])
    check("test_auth_account_password_11th_from_one_address_is_429", is_429(rs[10]), rs[10])
    # per account and address: five wrong current passwords from one address lock that address out of
    # the account (for login too), even the right one waits; other addresses go on (finding 8 of issue 17)
    b = signup(tag="acct-pw-lock")
    addr = fresh_addr()
    rs = [change(b, "wrong-" + secrets.token_hex(4), "pw-" + secrets.token_hex(6), addr=addr) for _ in range(5)]
    check("test_auth_account_password_five_wrong_current_are_403", all(r.status == 403 for r in rs), [r.status for r in rs])
    r = change(b, b.password, "pw-" + secrets.token_hex(6), addr=addr)
    check("test_auth_account_password_sixth_try_is_429_even_with_the_right_password", is_429(r), r)
    r = login(b.email, b.password, addr)
    check("test_auth_account_password_failures_lock_login_too", is_429(r), r)
    r = login(b.email, b.password, fresh_addr())
    check("test_auth_account_password_lock_changed_nothing", r.status == 200, r)


def test_reset_ends_sessions():
    if not SMTP_URL:
        check("test_auth_account_reset_smtp_double_configured", False, "SVC_SMTP_DOUBLE_URL is not set")
        return
    a = signup(tag="acct-reset")
    forgot(a.email)
    token = token_of(wait_message(a.email))
    r = api("POST", "/auth/reset-password", {"token": token, "password": "pw-" + secrets.token_hex(6)})
    check("test_auth_account_reset_is_200", r.status == 200, r)
    r = api("POST", "/auth/refresh", {"refreshToken": a.refresh})
    check("test_auth_account_reset_ends_refresh_tokens", is_error(r, 401, "unauthorized"), r)
    r = api("GET", "/auth/me", token=a.token)
    check("test_auth_account_reset_ends_access_tokens", is_error(r, 401, "unauthorized"), r)
    # a password change makes outstanding reset links stop working
    b = signup(tag="acct-reset2")
    forgot(b.email)
    token = token_of(wait_message(b.email))
    r = change(b, b.password, "pw-" + secrets.token_hex(6))
    check("test_auth_account_password_change_is_200_before_reset", r.status == 200, r)
    r = api("POST", "/auth/reset-password", {"token": token, "password": "pw-" + secrets.token_hex(6)})
    check("test_auth_account_password_change_ends_reset_links",
          r.status == 400 and isinstance(r.body, dict) and r.body.get("error") == "invalid_token", r)


def github_profile(email, verified=True):
    key = "gh-" + secrets.token_hex(4)
    double("POST", "/_profiles", {key: {"id": secrets.randbelow(10 ** 9) + 1, "login": key, "name": "Octo",
                                        "emails": [{"email": email, "verified": verified, "primary": True}]}})
    return key


def test_identities():
    a = signup(tag="acct-id")
    r = api("GET", "/auth/identities", token=a.token)
    check("test_auth_account_identities_fresh_account_has_none_and_a_password",
          r.status == 200 and r.body.get("items") == [] and r.body.get("hasPassword") is True, r)
    # connect GitHub while signed in: an account with another address
    gh_email = random_email("acct-gh")
    key = github_profile(gh_email)
    f = Flow("github", key, path_suffix="/link", session=a.token)
    check("test_auth_account_link_start_is_302_to_the_provider_with_the_sign_in_redirect",
          f.start.status == 302 and f.params.get("redirect_uri", "").endswith("/auth/github/callback")
          and f.params.get("code_challenge_method") == "S256", f.start)
    r = f.finish()
    check("test_auth_account_link_lands_on_account_settings",
          r.status == 302 and r.headers.get("location") == APP_URL + "/settings/account?connected=github", r)
    check("test_auth_account_link_sets_no_session_cookies",
          "svc_access_token" not in cookie_pairs(r) and cookie_pairs(r).get("svc_oauth") == "", r.cookies)
    r = api("GET", "/auth/identities", token=a.token)
    items = r.body.get("items") or []
    check("test_auth_account_identities_lists_the_connected_provider",
          r.status == 200 and len(items) == 1 and items[0].get("provider") == "github" and items[0].get("name") == "GitHub"
          and items[0].get("email") == gh_email and re.match(TIME_RE, items[0].get("createdAt") or "")
          and re.match(TIME_RE, items[0].get("lastLoginAt") or ""), r)
    # that GitHub account now signs in to this account (not a new one with its address)
    r = Flow("github", key).finish()
    me = api("GET", "/auth/me", token=cookie_pairs(r).get("svc_access_token"))
    check("test_auth_account_linked_provider_signs_in_to_the_account",
          lands(r, "/dashboard") and me.body.get("user", {}).get("id") == a.user["id"], (r, me))
    # connecting again the same account: fine; another GitHub account: already_connected
    r = Flow("github", key, path_suffix="/link", session=a.token).finish()
    check("test_auth_account_link_same_account_again_is_fine",
          r.status == 302 and r.headers.get("location") == APP_URL + "/settings/account?connected=github", r)
    key2 = github_profile(random_email("acct-gh2"))
    r = Flow("github", key2, path_suffix="/link", session=a.token).finish()
    check("test_auth_account_link_second_account_of_a_provider_is_already_connected",
          lands(r, "/settings/account", "already_connected"), r)
    # a provider account linked to someone else
    b = signup(tag="acct-id-b")
    r = Flow("github", key, path_suffix="/link", session=b.token).finish()
    check("test_auth_account_link_account_of_another_user_is_identity_taken",
          lands(r, "/settings/account", "identity_taken"), r)
    r = Flow("github", deny=True, path_suffix="/link", session=b.token).finish()
    check("test_auth_account_link_denied_lands_on_account_settings",
          lands(r, "/settings/account", "access_denied"), r)
    f = Flow("github", key2, path_suffix="/link", session=b.token)
    f.session = None
    r = f.finish()
    check("test_auth_account_link_callback_without_the_session_is_invalid_state", lands(r, "/login", "invalid_state"), r)
    f = Flow("github", key2, path_suffix="/link", session=b.token)
    f.session = a.token
    r = f.finish()
    check("test_auth_account_link_callback_with_another_users_session_is_invalid_state",
          lands(r, "/login", "invalid_state"), r)
    r = api("GET", "/auth/github/link")
    check("test_auth_account_link_without_session_is_401", is_error(r, 401, "unauthorized"), r)
    r = api("GET", "/auth/github/link", token=pat(b))
    check("test_auth_account_link_with_api_token_is_403", is_error(r, 403, "forbidden"), r)
    r = api("GET", "/auth/gitlab/link", token=b.token)
    check("test_auth_account_link_unknown_provider_is_404", r.status == 404, r)
    # disconnect
    r = api("DELETE", "/auth/identities/google", token=a.token)
    check("test_auth_account_disconnect_not_connected_is_404", is_error(r, 404, "not_found"), r)
    r = api("DELETE", "/auth/identities/gitlab", token=a.token)
    check("test_auth_account_disconnect_unknown_provider_is_404", is_error(r, 404, "not_found"), r)
    r = api("DELETE", "/auth/identities/github")
    check("test_auth_account_disconnect_without_session_is_401", is_error(r, 401, "unauthorized"), r)
    r = api("DELETE", "/auth/identities/github", token=pat(a))
    check("test_auth_account_disconnect_with_api_token_is_403", is_error(r, 403, "forbidden"), r)
    r = api("DELETE", "/auth/identities/github", token=a.token)
    check("test_auth_account_disconnect_is_204", r.status == 204, r)
    r = api("GET", "/auth/identities", token=a.token)
    check("test_auth_account_disconnected_provider_is_gone", r.status == 200 and r.body.get("items") == [], r)
    r = api("GET", "/auth/identities")
    check("test_auth_account_identities_without_session_is_401", is_error(r, 401, "unauthorized"), r)
    r = api("GET", "/auth/identities", token=pat(a, ("projects:read",)))
    check("test_auth_account_identities_with_api_token_is_403", is_error(r, 403, "forbidden"), r)


def test_oauth_only_account():
    # an account made by GitHub sign-in has no password: its only provider cannot go
    email = random_email("acct-oauth")
    key = github_profile(email)
    r = Flow("github", key).finish()
    tok = cookie_pairs(r).get("svc_access_token")
    check("test_auth_account_oauth_account_signed_in", lands(r, "/dashboard") and tok, r)
    r = api("GET", "/auth/identities", token=tok)
    check("test_auth_account_oauth_account_has_no_password",
          r.status == 200 and r.body.get("hasPassword") is False and len(r.body.get("items") or []) == 1, r)
    r = api("DELETE", "/auth/identities/github", token=tok)
    check("test_auth_account_disconnect_last_way_to_sign_in_is_409", is_error(r, 409, "conflict"), r)
    check("test_auth_account_refused_disconnect_changed_nothing",
          len(api("GET", "/auth/identities", token=tok).body.get("items") or []) == 1, None)
    # it sets a password without a current one; then GitHub may go
    pw = "pw-" + secrets.token_hex(8)
    r = api("POST", "/auth/password", {"newPassword": pw}, token=tok)
    check("test_auth_account_oauth_account_sets_a_password_without_current", r.status == 200, r)
    check("test_auth_account_oauth_account_signs_in_with_the_new_password", login(email, pw).status == 200, None)
    tok = r.body.get("accessToken") or tok
    r = api("DELETE", "/auth/identities/github", token=tok)
    check("test_auth_account_disconnect_with_a_password_is_204", r.status == 204, r)


def test_provider_key_last4():
    a = signup(tag="acct-ai")
    path = "/workspaces/%s/ai-provider" % a.workspace_id
    key = "sk-test-" + secrets.token_hex(10) + "wxyz"
    r = api("PUT", path, {"protocol": "openai", "baseUrl": "https://models.example/v1", "model": "m-1", "apiKey": key},
            token=a.token)
    check("test_auth_account_provider_put_shows_the_keys_last_four_only",
          r.status == 200 and r.body.get("apiKeyLast4") == "wxyz" and r.body.get("hasApiKey") is True
          and key not in r.raw.decode() and key[:-4] not in r.raw.decode(), r)
    r = api("GET", path, token=a.token)
    check("test_auth_account_provider_get_shows_the_keys_last_four_only",
          r.status == 200 and r.body.get("apiKeyLast4") == "wxyz" and key[:-4] not in r.raw.decode(), r)
    r = api("PUT", path, {"protocol": "openai", "baseUrl": "https://models.example/v1", "model": "m-2"}, token=a.token)
    check("test_auth_account_provider_key_kept_when_absent", r.status == 200 and r.body.get("apiKeyLast4") == "wxyz", r)
    r = api("PUT", path, {"protocol": "openai", "baseUrl": "https://models.example/v1", "model": "m-1",
                          "apiKey": "short-k1"}, token=a.token)
    check("test_auth_account_provider_short_key_shows_nothing_of_it",
          r.status == 200 and r.body.get("hasApiKey") is True and r.body.get("apiKeyLast4") is None, r)
    r = api("PUT", path, {"protocol": "openai", "baseUrl": "https://models.example/v1", "model": "m-1", "apiKey": None},
            token=a.token)
    check("test_auth_account_provider_removed_key_has_no_last_four",
          r.status == 200 and r.body.get("hasApiKey") is False and r.body.get("apiKeyLast4") is None, r)
    b = signup(tag="acct-ai2")
    r = api("GET", "/workspaces/%s/ai-provider" % b.workspace_id, token=b.token)
    check("test_auth_account_provider_instance_default_shows_no_key",
          r.status == 200 and r.body.get("source") in ("instance", "none") and r.body.get("apiKeyLast4") is None, r)


def main():
    test_display_name()
    test_password_change()
    test_password_rate_limits()
    test_reset_ends_sessions()
    if not DOUBLE:
        check("test_auth_account_oauth_double_configured", False, "SVC_OAUTH_DOUBLE_URL is not set")
    else:
        test_identities()
        test_oauth_only_account()
    test_provider_key_last4()


if __name__ == "__main__":
    try:
        main()
    except Exception:
        import traceback
        check("test_auth_account ran to the end", False, traceback.format_exc())
    sys.exit(finish())
