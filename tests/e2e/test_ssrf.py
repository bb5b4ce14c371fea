#!/usr/bin/env python3
# test_ssrf.py: a workspace's own AI provider cannot reach loopback, link-local, private or other internal addresses,
# its key never follows a new base URL, and its error bodies are not echoed (review finding 3 of issue 17)
# (lib/core/outbound.h); the test stack allows only the provider double's 127.0.0.7 (SVC_OUTBOUND_ALLOW_NETS)
import os
import sys
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from agentlib import double_stats, fresh_project, reset_double, send  # noqa: E402
from svclib import PROVIDER_URL, api, check, finish, signup, sql, types_of  # noqa: E402

REFUSED_MESSAGE = "The model provider's address is not allowed"

# (label, base URL): every refused range, IPv4 and IPv6, mapped and numeric forms, and names that resolve to loopback
REFUSED = (
    ("loopback", "http://127.0.0.1:%(port)s/v1"),
    ("loopback_other", "http://127.9.9.9:%(port)s/v1"),
    ("localhost_name", "http://localhost:%(port)s/v1"),
    ("decimal_loopback", "http://2130706433:%(port)s/v1"),
    ("short_loopback", "http://127.1:%(port)s/v1"),
    ("ipv6_loopback", "http://[::1]:%(port)s/v1"),
    ("mapped_loopback", "http://[::ffff:127.0.0.1]:%(port)s/v1"),
    ("metadata", "http://169.254.169.254/latest/v1"),
    ("mapped_metadata", "http://[::ffff:169.254.169.254]/v1"),
    ("link_local_v6", "http://[fe80::1]:%(port)s/v1"),
    ("private_10", "http://10.0.0.1:%(port)s/v1"),
    ("private_172", "http://172.16.5.4:%(port)s/v1"),
    ("private_192", "https://192.168.1.1/v1"),
    ("unique_local_v6", "http://[fd00::1]:%(port)s/v1"),
    ("zero", "http://0.0.0.0:%(port)s/v1"),
    ("zero_short", "http://0:%(port)s/v1"),
    ("cgnat", "http://100.64.0.1:%(port)s/v1"),
    ("multicast", "http://224.0.0.1:%(port)s/v1"),
    ("broadcast", "http://255.255.255.255:%(port)s/v1"),
    ("nat64_loopback", "http://[64:ff9b::7f00:1]:%(port)s/v1"),
)


def provider_path(acct):
    return "/workspaces/%s/ai-provider" % acct.workspace_id


def put_provider(acct, url, key="k-ssrf"):
    return api("PUT", provider_path(acct), {"protocol": "openai", "baseUrl": url, "model": "double", "apiKey": key},
               token=acct.token)


def test_saving_refused_urls(acct, port):
    for label, url in REFUSED:
        r = put_provider(acct, url % {"port": port})
        check("test_ssrf_put_%s_is_400_baseUrl" % label,
              r.status == 400 and r.body.get("error") == "validation_failed" and r.body.get("field") == "baseUrl"
              and "internal address" in (r.body.get("message") or ""), r)
    r = put_provider(acct, "http://localhost:%s/v1" % port)
    msg = r.body.get("message") or "" if isinstance(r.body, dict) else ""
    check("test_ssrf_put_refusal_names_the_kind_not_the_address", "loopback" in msg and "127.0.0.1" not in msg, r)
    r = api("GET", provider_path(acct), token=acct.token)
    check("test_ssrf_refused_put_stores_nothing", r.status == 200 and r.body.get("source") == "instance", r)


def test_allowed_net(acct, pid, chat_id):
    r = put_provider(acct, PROVIDER_URL + "/v1")
    check("test_ssrf_allow_nets_address_is_saved", r.status == 200 and r.body.get("source") == "workspace", r)
    reset_double()
    events, _, err = send(acct, pid, chat_id, "hello")
    check("test_ssrf_allow_nets_address_is_reached",
          types_of(events)[-1:] == ["session.task_complete"] and double_stats().get("requests") == 1, (err, events))


def test_connect_time_refusal(acct, pid, chat_id, port):
    """A base URL stored before the check, or a name whose DNS answer changed since it was saved (rebinding):
    the connection itself is refused, whatever the stored URL says."""
    for label, url in REFUSED:
        if label in ("metadata", "private_192", "broadcast", "multicast"):
            continue  # refused just the same; kept out so the loop stays short
        sql("UPDATE workspace_ai_providers SET base_url = '%s' WHERE workspace_id = '%s'"
            % (url % {"port": port}, acct.workspace_id))
        reset_double()
        events, _, err = send(acct, pid, chat_id, "hello")
        e = events[-1] if events else {}
        check("test_ssrf_chat_to_%s_is_model_unavailable" % label,
              err is None and e.get("type") == "error" and e.get("error") == "model_unavailable"
              and (e.get("message") or "").startswith(REFUSED_MESSAGE) and double_stats().get("requests") == 0,
              (url, err, events))
    for label, url in (("metadata", "http://169.254.169.254/latest/v1"), ("broadcast", "http://255.255.255.255/v1")):
        sql("UPDATE workspace_ai_providers SET base_url = '%s' WHERE workspace_id = '%s'" % (url, acct.workspace_id))
        events, _, err = send(acct, pid, chat_id, "hello")
        e = events[-1] if events else {}
        check("test_ssrf_chat_to_%s_is_refused_at_once" % label,
              e.get("error") == "model_unavailable" and (e.get("message") or "").startswith(REFUSED_MESSAGE), events)
    # the message is fixed: it names neither the address nor the key
    sql("UPDATE workspace_ai_providers SET base_url = 'http://localhost:%s/v1' WHERE workspace_id = '%s'"
        % (port, acct.workspace_id))
    events, _, err = send(acct, pid, chat_id, "hello")
    text = repr(events)
    check("test_ssrf_refusal_message_names_no_address", "127.0.0.1" not in text and "::1" not in text
          and "k-ssrf" not in text, events)
    # back to the allowed address: the same workspace works again
    sql("UPDATE workspace_ai_providers SET base_url = '%s/v1' WHERE workspace_id = '%s'"
        % (PROVIDER_URL, acct.workspace_id))
    reset_double()
    events, _, err = send(acct, pid, chat_id, "hello")
    check("test_ssrf_allowed_address_works_after_refusals", types_of(events)[-1:] == ["session.task_complete"], events)


def test_instance_provider_is_trusted():
    """The instance's SVC_AI_BASE_URL (svc.conf) is not checked: it is the double's loopback address too."""
    acct = signup(tag="ssrf-inst")
    pid, chat_id = fresh_project(acct)
    r = api("GET", "/workspaces/%s/ai-provider" % acct.workspace_id, token=acct.token)
    events, _, err = send(acct, pid, chat_id, "hello")
    check("test_ssrf_instance_provider_is_not_checked",
          r.body.get("source") == "instance" and types_of(events)[-1:] == ["session.task_complete"], events)


def test_new_base_url_needs_the_key(acct):
    """Review finding 3 of issue 17: the stored key is the old address's and never follows a new base URL."""
    r = put_provider(acct, PROVIDER_URL + "/v1", key="k-first-0123456789")
    check("test_provider_key_stored", r.status == 200 and r.body.get("hasApiKey") is True, r)
    moved = {"protocol": "openai", "baseUrl": "https://models.example/v1", "model": "double"}
    r = api("PUT", provider_path(acct), moved, token=acct.token)
    check("test_provider_new_base_url_without_key_is_400_apiKey",
          r.status == 400 and r.body.get("error") == "validation_failed" and r.body.get("field") == "apiKey", r)
    r = api("GET", provider_path(acct), token=acct.token)
    check("test_provider_refused_move_keeps_url_and_key",
          r.body.get("baseUrl") == PROVIDER_URL + "/v1" and r.body.get("hasApiKey") is True, r)
    same = {"protocol": "openai", "baseUrl": PROVIDER_URL + "/v1", "model": "double-2"}
    r = api("PUT", provider_path(acct), same, token=acct.token)
    check("test_provider_same_base_url_keeps_the_key", r.status == 200 and r.body.get("hasApiKey") is True
          and r.body.get("model") == "double-2", r)
    r = api("PUT", provider_path(acct), dict(moved, apiKey=None), token=acct.token)
    check("test_provider_new_base_url_with_null_key_has_none",
          r.status == 200 and r.body.get("hasApiKey") is False and r.body.get("baseUrl") == moved["baseUrl"], r)
    r = api("PUT", provider_path(acct), dict(same, apiKey="k-second-0123456789"), token=acct.token)
    check("test_provider_new_base_url_with_a_key_is_200",
          r.status == 200 and r.body.get("hasApiKey") is True and r.body.get("apiKeyLast4") == "6789", r)
    # without a stored key there is nothing to carry: a move needs no key
    r = api("PUT", provider_path(acct), dict(moved, apiKey=None), token=acct.token)
    r = api("PUT", provider_path(acct), dict(same), token=acct.token)
    check("test_provider_move_without_a_stored_key_is_200", r.status == 200 and r.body.get("hasApiKey") is False, r)


def test_provider_errors_are_not_echoed(acct):
    """Review finding 3 of issue 17: a provider's error body (which may be what an inside service answered)
    is logged, never sent to the client: the status and a fixed sentence."""
    pid, chat_id = fresh_project(acct)
    for label, text, code, body_words, fixed in (
            ("500", "server error please", "500", "The server had an error", "the provider failed"),
            ("429", "rate limit please", "429", "Rate limit reached", "rate limit")):
        reset_double()
        events, _, err = send(acct, pid, chat_id, text)
        e = events[-1] if events else {}
        msg = e.get("message") or ""
        check("test_provider_%s_error_has_status_and_fixed_message" % label,
              e.get("error") == "model_unavailable" and code in msg and fixed in msg, events)
        check("test_provider_%s_error_body_is_not_echoed" % label, body_words not in repr(events), events)


def main():
    if not PROVIDER_URL:
        check("test_ssrf needs the provider double", False, "SVC_PROVIDER_URL is not set")
        return
    port = urllib.parse.urlsplit(PROVIDER_URL).port
    acct = signup(tag="ssrf")
    pid, chat_id = fresh_project(acct)
    test_saving_refused_urls(acct, port)
    test_allowed_net(acct, pid, chat_id)
    test_connect_time_refusal(acct, pid, chat_id, port)
    test_instance_provider_is_trusted()
    test_new_base_url_needs_the_key(signup(tag="ssrf-key"))
    test_provider_errors_are_not_echoed(signup(tag="ssrf-errors"))


if __name__ == "__main__":
    main()
    sys.exit(finish())
