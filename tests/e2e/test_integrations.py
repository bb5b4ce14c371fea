#!/usr/bin/env python3
"""test_integrations.py: the integrations catalogue, workspace enablement, the platform admin endpoints,
sealed secrets and the audit log (docs/api.md "Integrations"; spec "Integrations resource",
"Integration admin endpoints", "Authentication" 9 to 11, "Limits").

The stack's catalogue is data/integrations/catalog.json (700 entries), which ./svc-dev imports after
migrating. Integrations used here: asana (oauth2), acumbamail (secret_text), aircall (basic_auth),
activecampaign (custom_auth), gmail (oauth2 and custom_auth), ai (no auth).
"""
import json
import os
import re
import secrets
import subprocess
import sys
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from svclib import TIME_RE, UUID_RE, api, check, finish, is_error, setting, signup, sql
from wslib import Team, platform_admin, svc_admin

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CATALOG = os.path.join(ROOT, "data", "integrations", "catalog.json")
ITEM_KEYS = {"id", "displayName", "description", "logoUrl", "authTypes", "categories", "requiresOAuthApp",
             "enabled", "platformEnabled", "configured"}


def q(path, **query):
    return path + ("?" + urllib.parse.urlencode(query) if query else "")


def get_item(acct, iid, **query):
    r = api("GET", q("/integrations/%s" % iid, **query), token=acct.token)
    return r.body if r.status == 200 else {}


def bulk(acct, which, ids, enabled):
    return api("POST", "/integrations/admin/%s/bulk" % which, {"integrationIds": ids, "enabled": enabled},
               token=acct.token)


def audit(acct, **query):
    r = api("GET", q("/integrations/admin/audit", **query), token=acct.token)
    return r.body.get("entries", []) if r.status == 200 and isinstance(r.body, dict) else []


def db_dump():
    """Every row of every table of the stack's database, as text (mariadb-dump)."""
    sock = setting("SVC_DB_SOCKET")
    db = setting("SVC_DB_NAME") or "svc"
    out = subprocess.run(["mariadb-dump", "--no-defaults", "--socket=" + (sock or ""), "-uroot",
                          "--skip-extended-insert", db], capture_output=True, timeout=120,
                         # binary rows (the apps' file chunks) are kept byte for byte, so a secret in clear
                         # would still show; never --hex-blob, which would hide one stored in a blob
                         text=True, encoding="utf-8", errors="replace")
    if out.returncode != 0:
        raise AssertionError("mariadb-dump failed: " + out.stderr)
    return out.stdout


def logs_text():
    """The responders' logs of the stack (next to the settings file), as text."""
    d = os.path.join(os.path.dirname(setting("SVC_AUTH_LOG") or "/nonexistent/x"))
    text = ""
    for name in ("responders.log", "responders-noprovider.log", "svc-worker.log"):
        try:
            with open(os.path.join(d, name), errors="replace") as f:
                text += f.read()
        except OSError:
            pass
    return text


def main():
    user = signup(tag="integ-user")
    admin = platform_admin(tag="integ-admin")
    team = Team(tag="integ")

    # ---- the catalogue (other files may add test entries: counts come from the database) ----
    n_all = int(sql("SELECT COUNT(*) FROM integrations").strip())
    n_marketing = int(sql("SELECT COUNT(*) FROM integrations WHERE categories LIKE '%,MARKETING,%'").strip())
    n_oauth = int(sql("SELECT COUNT(*) FROM integrations WHERE auth_types LIKE '%,oauth2,%'").strip())
    check("test_integrations_catalogue_imported", n_all >= 700 and n_marketing >= 87 and n_oauth >= 110,
          (n_all, n_marketing, n_oauth))
    r = api("GET", "/integrations")
    check("test_integrations_list_anonymous_401", is_error(r, 401, "unauthorized"), r)
    r = api("GET", "/integrations", token=user.token)
    items = r.body.get("items", []) if isinstance(r.body, dict) else []
    check("test_integrations_list_200_shape",
          r.status == 200 and r.body.get("total") == n_all and len(items) == 50 and r.body.get("nextCursor")
          and all(ITEM_KEYS <= set(i) for i in items), r)
    check("test_integrations_list_item_workspace_fields",
          all(isinstance(i["enabled"], bool) and isinstance(i["platformEnabled"], bool)
              and isinstance(i["configured"], bool) and i.get("workspaceId") == user.workspace_id for i in items),
          items[:2])

    ids, cursor, pages = [], None, 0
    while pages < 20:
        query = {"limit": "100"}
        if cursor:
            query["cursor"] = cursor
        r = api("GET", q("/integrations", **query), token=user.token)
        if r.status != 200:
            break
        ids += [i["id"] for i in r.body["items"]]
        cursor = r.body.get("nextCursor")
        pages += 1
        if not cursor:
            break
    check("test_integrations_list_keyset_paging_covers_catalogue",
          len(ids) == n_all and len(set(ids)) == n_all and ids == sorted(ids) and pages == (n_all + 99) // 100, (len(ids), pages))

    r = api("GET", q("/integrations", q="slack"), token=user.token)
    check("test_integrations_list_q_filters_name_and_description",
          r.status == 200 and "slack" in [i["id"] for i in r.body["items"]] and 0 < r.body["total"] < n_all, r)
    r = api("GET", q("/integrations", q="%"), token=user.token)
    check("test_integrations_list_q_wildcards_are_literal", r.status == 200 and r.body["total"] < n_all, r)
    r = api("GET", q("/integrations", category="MARKETING", limit="100"), token=user.token)
    check("test_integrations_list_category_filter",
          r.status == 200 and r.body["total"] == n_marketing and all("MARKETING" in i["categories"] for i in r.body["items"]), r)
    r = api("GET", q("/integrations", authType="oauth2", limit="100"), token=user.token)
    check("test_integrations_list_authtype_filter",
          r.status == 200 and r.body["total"] == n_oauth
          and all("oauth2" in i["authTypes"] and i["requiresOAuthApp"] for i in r.body["items"]), r)
    r = api("GET", q("/integrations", authType="basic_auth", q="air"), token=user.token)
    check("test_integrations_list_filters_combine",
          r.status == 200 and [i["id"] for i in r.body["items"]] == ["aircall"] and r.body["total"] == 1, r)
    for name, query, field in (("limit_zero", {"limit": "0"}, "limit"), ("limit_over", {"limit": "101"}, "limit"),
                               ("cursor", {"cursor": "NOT A CURSOR"}, "cursor"),
                               ("category", {"category": "no-such"}, "category"),
                               ("authtype", {"authType": "password"}, "authType"),
                               ("workspace", {"workspaceId": "nope"}, "workspaceId")):
        r = api("GET", q("/integrations", **query), token=user.token)
        check("test_integrations_list_400_" + name, is_error(r, 400, "validation_failed", field), r)
    r = api("GET", q("/integrations", workspaceId=team.wid), token=user.token)
    check("test_integrations_list_other_workspace_404", r.status in (403, 404), r)
    r = api("GET", q("/integrations", workspaceId=team.wid), token=team.member.token)
    check("test_integrations_list_member_workspace_200",
          r.status == 200 and all(i["workspaceId"] == team.wid for i in r.body["items"]), r)

    r = api("GET", "/integrations/asana", token=user.token)
    check("test_integrations_get_200",
          r.status == 200 and r.body["id"] == "asana" and r.body["authTypes"] == ["oauth2"]
          and r.body["requiresOAuthApp"] is True and ITEM_KEYS <= set(r.body), r)
    r = api("GET", "/integrations/acumbamail", token=user.token)
    check("test_integrations_get_non_oauth_requires_no_app", r.status == 200 and r.body["requiresOAuthApp"] is False, r)
    r = api("GET", "/integrations/ai", token=user.token)
    check("test_integrations_get_no_auth_is_configured", r.status == 200 and r.body["configured"] is True, r)
    r = api("GET", "/integrations/no-such-integration", token=user.token)
    check("test_integrations_get_unknown_404", is_error(r, 404, "not_found"), r)
    r = api("GET", "/integrations/Bad%20Id", token=user.token)
    check("test_integrations_get_bad_id_404", is_error(r, 404, "not_found"), r)
    r = api("GET", "/integrations/asana")
    check("test_integrations_get_anonymous_401", is_error(r, 401, "unauthorized"), r)

    # ---- permissions of the admin endpoints ----
    admin_calls = [
        ("POST", "/integrations/admin/enabled/bulk", {"integrationIds": ["asana"], "enabled": True}),
        ("POST", "/integrations/admin/platform-enabled/bulk", {"integrationIds": ["asana"], "enabled": True}),
        ("POST", "/integrations/admin/oauth-apps", {"integrationId": "asana", "clientId": "cid-x", "clientSecret": "s",
                                                   "scope": "global"}),
        ("GET", "/integrations/admin/oauth-apps?integrationId=asana", None),
        ("DELETE", "/integrations/admin/oauth-apps/00000000-0000-4000-8000-000000000000", None),
        ("POST", "/integrations/admin/credentials", {"integrationId": "acumbamail", "authType": "secret_text",
                                                    "value": "x"}),
        ("GET", "/integrations/admin/credentials/acumbamail", None),
        ("DELETE", "/integrations/admin/credentials/acumbamail", None),
        ("GET", "/integrations/admin/audit", None),
    ]
    for method, path, body in admin_calls:
        label = method.lower() + path.replace("/integrations/admin", "").split("?")[0].replace("/", "_")[:40]
        r = api(method, path, body)
        check("test_integrations_admin_anonymous_401_" + label, is_error(r, 401, "unauthorized"), r)
        r = api(method, path, body, token=user.token)
        check("test_integrations_admin_user_403_" + label, is_error(r, 403, "forbidden"), r)
        r = api(method, path, body, token=team.owner.token)
        check("test_integrations_admin_workspace_owner_403_" + label, is_error(r, 403, "forbidden"), r)

    # ---- bulk enablement ----
    r = bulk(admin, "platform-enabled", ["x%d" % i for i in range(51)], True)
    check("test_integrations_bulk_51_ids_400", is_error(r, 400, "validation_failed", "integrationIds"), r)
    r = bulk(admin, "enabled", [], True)
    check("test_integrations_bulk_empty_400", is_error(r, 400, "validation_failed", "integrationIds"), r)
    r = api("POST", "/integrations/admin/enabled/bulk", {"integrationIds": ["asana"]}, token=admin.token)
    check("test_integrations_bulk_missing_enabled_400", is_error(r, 400, "validation_failed", "enabled"), r)
    r = bulk(admin, "enabled", [7], True)
    check("test_integrations_bulk_non_string_400", is_error(r, 400, "validation_failed", "integrationIds"), r)
    bulk(admin, "platform-enabled", ["slack", "asana"], False)
    r = bulk(admin, "platform-enabled", ["slack", "nope-one", "asana", "Nope Two"], True)
    check("test_integrations_bulk_unknown_ids_400_named",
          is_error(r, 400, "validation_failed", "integrationIds") and r.body.get("unknownIds") == ["nope-one", "Nope Two"]
          and "nope-one" in r.body.get("message", "") and "Nope Two" in r.body.get("message", ""), r)
    check("test_integrations_bulk_unknown_ids_change_nothing",
          get_item(user, "slack").get("platformEnabled") is False and get_item(user, "asana").get("platformEnabled") is False)
    fifty = ids[:50]
    r = bulk(admin, "platform-enabled", fifty, True)
    check("test_integrations_bulk_50_ids_200",
          r.status == 200 and r.body.get("integrationIds") == fifty and r.body.get("enabled") is True, r)
    r = bulk(admin, "platform-enabled", fifty, True)
    check("test_integrations_bulk_idempotent", r.status == 200, r)
    n = sql("SELECT COUNT(*) FROM integrations WHERE platform_enabled = 1 AND id IN (%s)"
            % ",".join("'%s'" % i for i in fifty)).strip()
    check("test_integrations_bulk_updates_in_place", n == "50", n)
    r = bulk(admin, "platform-enabled", ["slack", "asana", "acumbamail", "aircall", "activecampaign", "gmail"], True)
    check("test_integrations_platform_enabled_bulk_200", r.status == 200, r)
    it = get_item(user, "slack")
    check("test_integrations_platform_enabled_not_enabled_by_default",
          it.get("platformEnabled") is True and it.get("enabled") is False, it)
    r = bulk(admin, "enabled", ["slack"], True)
    it = get_item(user, "slack")
    check("test_integrations_enabled_bulk_200_enables_everywhere",
          r.status == 200 and it.get("enabled") is True and get_item(team.member, "slack", workspaceId=team.wid).get("enabled") is True, (r, it))
    bulk(admin, "enabled", ["asana"], True)
    bulk(admin, "platform-enabled", ["asana"], False)
    check("test_integrations_enabled_needs_platform_enabled", get_item(user, "asana").get("enabled") is False)
    bulk(admin, "platform-enabled", ["asana"], True)

    # ---- workspace admins ----
    path = "/workspaces/%s/integrations/slack" % team.wid
    r = api("PUT", path, {"enabled": False}, token=team.member.token)
    check("test_integrations_ws_member_403", is_error(r, 403, "forbidden"), r)
    r = api("PUT", path, {"enabled": False}, token=user.token)
    check("test_integrations_ws_outsider_403_or_404", r.status in (403, 404), r)
    r = api("PUT", path, {"enabled": False})
    check("test_integrations_ws_anonymous_401", is_error(r, 401, "unauthorized"), r)
    r = api("PUT", path, {}, token=team.admin.token)
    check("test_integrations_ws_missing_enabled_400", is_error(r, 400, "validation_failed", "enabled"), r)
    r = api("PUT", path, {"enabled": False}, token=team.admin.token)
    check("test_integrations_ws_admin_disables_200",
          r.status == 200 and r.body.get("enabled") is False and r.body.get("workspaceId") == team.wid, r)
    check("test_integrations_ws_choice_is_per_workspace", get_item(user, "slack").get("enabled") is True)
    r = api("PUT", path, {"enabled": True}, token=team.owner.token)
    check("test_integrations_ws_owner_enables_200", r.status == 200 and r.body.get("enabled") is True, r)
    r = api("PUT", "/workspaces/%s/integrations/zoom" % team.wid, {"enabled": True}, token=team.admin.token)
    check("test_integrations_ws_not_available_409", is_error(r, 409, "conflict"), r)
    r = api("PUT", "/workspaces/%s/integrations/no-such" % team.wid, {"enabled": True}, token=team.admin.token)
    check("test_integrations_ws_unknown_404", is_error(r, 404, "not_found"), r)
    r = api("PUT", "/workspaces/00000000-0000-4000-8000-000000000000/integrations/slack", {"enabled": True},
            token=team.admin.token)
    check("test_integrations_ws_unknown_workspace_404", is_error(r, 404, "not_found"), r)

    # ---- OAuth apps ----
    secret1, secret2, secret3 = ("oauth-secret-" + secrets.token_hex(12) for _ in range(3))
    app = {"integrationId": "asana", "clientId": "client-id-abcd1234", "clientSecret": secret1, "scope": "global"}
    for name, patch, field in (("unknown_integration", {"integrationId": "no-such"}, "integrationId"),
                               ("not_oauth", {"integrationId": "acumbamail"}, "integrationId"),
                               ("bad_scope", {"scope": "team"}, "scope"),
                               ("workspace_without_id", {"scope": "workspace"}, "workspaceId"),
                               ("global_with_workspace", {"workspaceId": team.wid}, "workspaceId"),
                               ("unknown_workspace", {"scope": "workspace",
                                                      "workspaceId": "00000000-0000-4000-8000-000000000000"}, "workspaceId"),
                               ("empty_secret", {"clientSecret": ""}, "clientSecret"),
                               ("missing_client_id", {"clientId": None}, "clientId")):
        body = dict(app)
        body.update(patch)
        body = {k: v for k, v in body.items() if v is not None}
        r = api("POST", "/integrations/admin/oauth-apps", body, token=admin.token)
        check("test_integrations_oauth_app_400_" + name, is_error(r, 400, "validation_failed", field), r)
    check("test_integrations_not_configured_without_app", get_item(user, "asana").get("configured") is False)
    r = api("POST", "/integrations/admin/oauth-apps", app, token=admin.token)
    check("test_integrations_oauth_app_create_201",
          r.status == 201 and re.match(UUID_RE, r.body.get("id", "")) and r.body.get("clientIdHint") == "1234"
          and r.body.get("scope") == "global" and r.body.get("workspaceId") is None
          and re.match(TIME_RE, r.body.get("updatedAt", "")) and "clientSecret" not in r.body and "clientId" not in r.body, r)
    app_id = r.body.get("id") if r.status == 201 else None
    check("test_integrations_oauth_app_secret_not_returned", secret1 not in json.dumps(r.body), r)
    check("test_integrations_configured_with_global_app",
          get_item(user, "asana").get("configured") is True
          and get_item(team.member, "asana", workspaceId=team.wid).get("configured") is True)
    app2 = dict(app, clientSecret=secret2, clientId="client-id-wxyz")
    r = api("POST", "/integrations/admin/oauth-apps", app2, token=admin.token)
    check("test_integrations_oauth_app_upsert_200_same_id",
          r.status == 200 and r.body.get("id") == app_id and r.body.get("clientIdHint") == "wxyz", r)
    stored = sql("SELECT client_secret FROM integration_oauth_apps WHERE id = '%s'" % app_id).strip()
    check("test_integrations_oauth_app_one_row_per_scope",
          sql("SELECT COUNT(*) FROM integration_oauth_apps WHERE integration_id = 'asana' AND scope = 'global'").strip() == "1")
    check("test_integrations_oauth_app_secret_sealed", stored and secret2 not in stored and secret1 not in stored, stored)
    wapp = {"integrationId": "gmail", "clientId": "ws-client-9876", "clientSecret": secret3, "scope": "workspace",
            "workspaceId": team.wid}
    r = api("POST", "/integrations/admin/oauth-apps", wapp, token=admin.token)
    wapp_id = r.body.get("id") if r.status == 201 else None
    check("test_integrations_oauth_app_workspace_201",
          r.status == 201 and r.body.get("scope") == "workspace" and r.body.get("workspaceId") == team.wid
          and r.body.get("clientIdHint") == "9876", r)
    check("test_integrations_workspace_app_configures_only_its_workspace",
          get_item(team.member, "gmail", workspaceId=team.wid).get("configured") is True
          and get_item(user, "gmail").get("configured") is False)
    r = api("GET", "/integrations/admin/oauth-apps?integrationId=asana", token=admin.token)
    check("test_integrations_oauth_app_list_200",
          r.status == 200 and [a["id"] for a in r.body.get("items", [])] == [app_id]
          and secret2 not in json.dumps(r.body), r)
    r = api("GET", "/integrations/admin/oauth-apps", token=admin.token)
    check("test_integrations_oauth_app_list_400", is_error(r, 400, "validation_failed", "integrationId"), r)
    r = api("DELETE", "/integrations/admin/oauth-apps/%s" % app_id, token=admin.token)
    check("test_integrations_oauth_app_delete_204", r.status == 204, r)
    check("test_integrations_oauth_app_delete_unconfigures_at_once", get_item(user, "asana").get("configured") is False)
    r = api("DELETE", "/integrations/admin/oauth-apps/%s" % app_id, token=admin.token)
    check("test_integrations_oauth_app_delete_again_404", is_error(r, 404, "not_found"), r)
    r = api("DELETE", "/integrations/admin/oauth-apps/not-a-uuid", token=admin.token)
    check("test_integrations_oauth_app_delete_bad_id_404", r.status == 404, r)
    r = api("POST", "/integrations/admin/oauth-apps", app, token=admin.token)
    app_id = r.body.get("id") if r.status == 201 else None
    check("test_integrations_oauth_app_recreate_201_new_id", r.status == 201 and app_id, r)

    # ---- platform credentials ----
    plain_text = "api-key-" + secrets.token_hex(12)
    plain_pw = "pw-" + secrets.token_hex(12)
    plain_custom = "custom-" + secrets.token_hex(12)
    bad = (("secret_text_object", {"integrationId": "acumbamail", "authType": "secret_text", "value": {"a": "b"}}, "value"),
           ("secret_text_empty", {"integrationId": "acumbamail", "authType": "secret_text", "value": ""}, "value"),
           ("missing_value", {"integrationId": "acumbamail", "authType": "secret_text"}, "value"),
           ("basic_no_password", {"integrationId": "aircall", "authType": "basic_auth", "value": {"username": "u"}}, "value"),
           ("basic_string", {"integrationId": "aircall", "authType": "basic_auth", "value": "u:p"}, "value"),
           ("basic_extra_key", {"integrationId": "aircall", "authType": "basic_auth",
                                "value": {"username": "u", "password": "p", "x": "y"}}, "value"),
           ("custom_non_string", {"integrationId": "activecampaign", "authType": "custom_auth", "value": {"n": 5}}, "value"),
           ("custom_empty", {"integrationId": "activecampaign", "authType": "custom_auth", "value": {}}, "value"),
           ("wrong_type_for_integration", {"integrationId": "acumbamail", "authType": "basic_auth",
                                           "value": {"username": "u", "password": "p"}}, "authType"),
           ("unknown_auth_type", {"integrationId": "acumbamail", "authType": "oauth2", "value": "x"}, "authType"),
           ("unknown_integration", {"integrationId": "no-such", "authType": "secret_text", "value": "x"}, "integrationId"))
    for name, body, field in bad:
        r = api("POST", "/integrations/admin/credentials", body, token=admin.token)
        check("test_integrations_credentials_400_" + name, is_error(r, 400, "validation_failed", field), r)
    check("test_integrations_not_configured_without_credential", get_item(user, "acumbamail").get("configured") is False)
    r = api("POST", "/integrations/admin/credentials",
            {"integrationId": "acumbamail", "authType": "secret_text", "value": plain_text}, token=admin.token)
    check("test_integrations_credentials_secret_text_201",
          r.status == 201 and r.body.get("integrationId") == "acumbamail" and r.body.get("authType") == "secret_text"
          and r.body.get("configured") is True and "value" not in r.body and plain_text not in json.dumps(r.body), r)
    r = api("POST", "/integrations/admin/credentials",
            {"integrationId": "acumbamail", "authType": "secret_text", "value": plain_text + "2"}, token=admin.token)
    check("test_integrations_credentials_upsert_200", r.status == 200, r)
    r = api("POST", "/integrations/admin/credentials",
            {"integrationId": "aircall", "authType": "basic_auth", "value": {"username": "me", "password": plain_pw}},
            token=admin.token)
    check("test_integrations_credentials_basic_auth_201", r.status == 201 and plain_pw not in json.dumps(r.body), r)
    r = api("POST", "/integrations/admin/credentials",
            {"integrationId": "activecampaign", "authType": "custom_auth",
             "value": {"apiUrl": "https://x.example", "apiKey": plain_custom}}, token=admin.token)
    check("test_integrations_credentials_custom_auth_201", r.status == 201, r)
    check("test_integrations_configured_with_credential",
          get_item(user, "acumbamail").get("configured") is True and get_item(user, "aircall").get("configured") is True)
    r = api("GET", "/integrations/admin/credentials/aircall", token=admin.token)
    check("test_integrations_credentials_get_200_no_value",
          r.status == 200 and r.body.get("authType") == "basic_auth" and plain_pw not in json.dumps(r.body)
          and "value" not in r.body, r)
    r = api("GET", "/integrations/admin/credentials/asana", token=admin.token)
    check("test_integrations_credentials_get_404", is_error(r, 404, "not_found"), r)

    dump = db_dump()
    leaked = [s for s in (secret1, secret2, secret3, plain_text, plain_text + "2", plain_pw, plain_custom) if s in dump]
    check("test_integrations_database_never_holds_a_secret_in_clear", not leaked and "integration_credentials" in dump,
          leaked)
    logs = logs_text()
    leaked = [s for s in (secret1, secret2, secret3, plain_text, plain_pw, plain_custom) if s in logs]
    check("test_integrations_secrets_never_logged", logs and not leaked, leaked)

    r = api("DELETE", "/integrations/admin/credentials/acumbamail", token=admin.token)
    check("test_integrations_credentials_delete_204", r.status == 204, r)
    check("test_integrations_credentials_delete_unconfigures_at_once",
          get_item(user, "acumbamail").get("configured") is False)
    r = api("DELETE", "/integrations/admin/credentials/acumbamail", token=admin.token)
    check("test_integrations_credentials_delete_again_404", is_error(r, 404, "not_found"), r)
    r = api("DELETE", "/integrations/admin/credentials/No%20Such", token=admin.token)
    check("test_integrations_credentials_delete_bad_id_404", r.status == 404, r)

    # ---- the audit log ----
    entries = audit(admin, limit="100")
    mine = [e for e in entries if e.get("actorId") == admin.user.get("id")] if admin.user else entries
    actions = [e["action"] for e in mine]
    check("test_integrations_audit_newest_first",
          actions[:1] == ["integrations.platform_credentials.delete"], actions[:5])
    want = {"integrations.oauth_app.upsert", "integrations.oauth_app.delete",
            "integrations.platform_credentials.upsert", "integrations.platform_credentials.delete",
            "integrations.enabled.update", "integrations.platform_enabled.update"}
    check("test_integrations_audit_records_every_write", want <= set(actions), sorted(set(actions)))
    up = [e for e in mine if e["action"] == "integrations.oauth_app.upsert"]
    e = up[-1] if up else {}
    check("test_integrations_audit_entry_shape",
          e.get("resourceType") == "integration" and e.get("resourceId") == "asana"
          and e.get("details", {}).get("clientIdTail") == "1234" and e["details"].get("isGlobal") is True
          and "workspaceId" in e["details"] and re.match(UUID_RE, e.get("id", "")) and re.match(TIME_RE, e.get("at", "")), e)
    wup = [e for e in mine if e["action"] == "integrations.oauth_app.upsert" and e["details"].get("workspaceId")]
    check("test_integrations_audit_workspace_app_details",
          wup and wup[0]["details"]["workspaceId"] == team.wid and wup[0]["details"]["isGlobal"] is False, wup[:1])
    ws_entries = [e for e in entries if e["action"] == "integrations.workspace_enabled.update"
                  and e["details"].get("workspaceId") == team.wid]
    check("test_integrations_audit_workspace_choice", len(ws_entries) == 2, ws_entries)
    check("test_integrations_audit_no_secret", not any(s in json.dumps(entries) for s in (secret1, secret2, plain_text)))
    r = api("GET", "/integrations/admin/audit?limit=1", token=admin.token)
    c = r.body.get("nextCursor") if r.status == 200 else None
    r2 = api("GET", q("/integrations/admin/audit", limit="1", cursor=c or ""), token=admin.token)
    check("test_integrations_audit_paging",
          r.status == 200 and len(r.body["entries"]) == 1 and c and r2.status == 200
          and r2.body["entries"][0]["id"] != r.body["entries"][0]["id"], (r, r2))
    r = api("GET", "/integrations/admin/audit?cursor=abc", token=admin.token)
    check("test_integrations_audit_400_cursor", is_error(r, 400, "validation_failed", "cursor"), r)
    r = api("GET", "/integrations/admin/audit?limit=500", token=admin.token)
    check("test_integrations_audit_400_limit", is_error(r, 400, "validation_failed", "limit"), r)

    # ---- the import: idempotent, updates in place, enablement untouched ----
    rc, out = svc_admin("import-catalog", CATALOG)
    check("test_integrations_import_again_ok", rc == 0 and "700" in out, out)
    n = int(sql("SELECT COUNT(*) FROM integrations").strip())
    check("test_integrations_import_idempotent", n == n_all, n)
    check("test_integrations_import_keeps_enablement", get_item(user, "slack").get("enabled") is True)
    tmp = os.path.join(os.environ.get("TMPDIR", "/tmp"), "integ-%s.json" % secrets.token_hex(4))
    with open(tmp, "w") as f:
        json.dump([{"id": "slack", "displayName": "Slack (renamed)", "description": "d", "logoUrl": None,
                    "authTypes": ["oauth2"], "oauth2": {"authUrl": "https://slack.com/oauth/v2/authorize",
                                                        "tokenUrl": "https://slack.com/api/oauth.v2.access",
                                                        "scope": ["chat:write"]}, "categories": []}], f)
    rc, out = svc_admin("import-catalog", tmp)
    it = get_item(user, "slack")
    check("test_integrations_import_updates_in_place",
          rc == 0 and it.get("displayName") == "Slack (renamed)" and it.get("enabled") is True, (out, it))
    with open(tmp, "w") as f:
        f.write('[{"id": "BAD ID", "displayName": "x", "authTypes": ["none"]}]')
    rc, out = svc_admin("import-catalog", tmp)
    check("test_integrations_import_refuses_bad_entry", rc == 1 and "entry" in out, out)
    with open(tmp, "w") as f:
        f.write('{"not": "an array"}')
    rc, out = svc_admin("import-catalog", tmp)
    check("test_integrations_import_refuses_non_array", rc == 1, out)
    os.unlink(tmp)
    rc, out = svc_admin("import-catalog", CATALOG)
    check("test_integrations_import_restores", rc == 0 and get_item(user, "slack").get("displayName") == "Slack", out)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
