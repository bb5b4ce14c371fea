/* auth_config.c: the settings of sign-in, API tokens, password reset, rate limits and the auth log. */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "auth/auth.h"
#include "core/config.h"
#include "core/err.h"
#include "core/util.h"

int svc_rate_rule_parse(const char *s, struct svc_rate_rule *out)
{
	char num[24];
	const char *slash;
	uint64_t n;
	int64_t secs;
	size_t len;

	if (!s)
		return SVC_E_VALIDATION;
	if (strcmp(s, "0") == 0 || strcmp(s, "off") == 0) {
		out->limit = 0;
		out->window_secs = 60;
		return 0;
	}
	slash = strchr(s, '/');
	if (!slash)
		return SVC_E_VALIDATION;
	len = (size_t)(slash - s);
	if (len == 0 || len >= sizeof num)
		return SVC_E_VALIDATION;
	memcpy(num, s, len);
	num[len] = '\0';
	if (svc_parse_u64(num, 1000000000ULL, &n) < 0 || svc_config_parse_duration(slash + 1, &secs) < 0)
		return SVC_E_VALIDATION;
	out->limit = n;
	out->window_secs = secs;
	return 0;
}

/* The limits, their setting names and defaults (docs/configuration.md "Rate limits"). */
static const struct {
	const char *name;
	size_t off;
	const char *def;
} rules[] = {
	{ "SVC_RATE_LIMIT_GLOBAL", offsetof(struct svc_auth_config, rl_global), "600/1m" },
	{ "SVC_RATE_LIMIT_LOGIN_IP", offsetof(struct svc_auth_config, rl_login_ip), "10/1m" },
	{ "SVC_RATE_LIMIT_LOGIN_ACCOUNT", offsetof(struct svc_auth_config, rl_login_account), "5/15m" },
	{ "SVC_RATE_LIMIT_LOGIN_ACCOUNT_MAX", offsetof(struct svc_auth_config, rl_login_account_max), "20/15m" },
	{ "SVC_RATE_LIMIT_LOGIN_SLOW", offsetof(struct svc_auth_config, rl_login_slow), "1/10s" },
	{ "SVC_RATE_LIMIT_SIGNUP_IP", offsetof(struct svc_auth_config, rl_signup_ip), "10/1h" },
	{ "SVC_RATE_LIMIT_SIGNUP_ACCOUNT", offsetof(struct svc_auth_config, rl_signup_account), "5/1h" },
	{ "SVC_RATE_LIMIT_VERIFY_IP", offsetof(struct svc_auth_config, rl_verify_ip), "10/15m" },
	{ "SVC_RATE_LIMIT_REFRESH_IP", offsetof(struct svc_auth_config, rl_refresh_ip), "60/1m" },
	{ "SVC_RATE_LIMIT_RESET_IP", offsetof(struct svc_auth_config, rl_reset_ip), "5/15m" },
	{ "SVC_RATE_LIMIT_RESET_ACCOUNT", offsetof(struct svc_auth_config, rl_reset_account), "3/1h" },
	{ "SVC_RATE_LIMIT_OAUTH_IP", offsetof(struct svc_auth_config, rl_oauth_ip), "30/1m" },
};

/* Upper-case name of provider `p` for setting names: "GITHUB". */
static void upper(const char *in, char *out, size_t max)
{
	size_t i;

	for (i = 0; in[i] && i + 1 < max; i++)
		out[i] = (in[i] >= 'a' && in[i] <= 'z') ? (char)(in[i] - 32) : in[i];
	out[i] = '\0';
}

/* Reads one provider's settings; builds default redirect URIs into out->buf. */
static int load_provider(const struct svc_config *cfg, struct svc_auth_config *out, enum svc_oauth_id id,
			 char *errbuf, size_t errmax)
{
	const struct svc_oauth_provider *p = svc_oauth_provider_get(id);
	struct svc_oauth_settings *o = &out->oauth[id];
	char up[16], key[96];
	char *def_signin = out->buf[2 * id], *def_assist = out->buf[2 * id + 1];
	int n;

	upper(p->name, up, sizeof up);
	n = snprintf(def_signin, sizeof out->buf[0], "%s/auth/%s/callback", cfg->base_url, p->name);
	if (n < 0 || (size_t)n >= sizeof out->buf[0])
		goto too_long;
	n = snprintf(def_assist, sizeof out->buf[0], "%s/auth/%s/assistant/callback", cfg->base_url, p->name);
	if (n < 0 || (size_t)n >= sizeof out->buf[0])
		goto too_long;
#define GET(field, fmt, def)                                          \
	do {                                                          \
		snprintf(key, sizeof key, fmt, up);                   \
		o->field = svc_config_get(cfg, key, def);             \
	} while (0)
	GET(client_id, "%s_CLIENT_ID", "");
	GET(client_secret, "%s_CLIENT_SECRET", "");
	GET(redirect_uri, "%s_REDIRECT_URI", def_signin);
	GET(authorize_url, "SVC_OAUTH_%s_AUTHORIZE_URL", p->authorize_url);
	GET(token_url, "SVC_OAUTH_%s_TOKEN_URL", p->token_url);
	GET(userinfo_url, "SVC_OAUTH_%s_USERINFO_URL", p->userinfo_url);
	GET(assistant_client_id, "%s_ASSISTANT_CLIENT_ID", o->client_id);
	GET(assistant_client_secret, "%s_ASSISTANT_CLIENT_SECRET", o->client_secret);
	GET(assistant_redirect_uri, "%s_ASSISTANT_REDIRECT_URI", def_assist);
#undef GET
	if (o->client_id[0] && !o->client_secret[0]) {
		snprintf(errbuf, errmax, "%s_CLIENT_ID is set but %s_CLIENT_SECRET is not", up, up);
		return SVC_E_INTERNAL;
	}
	if (strncmp(o->authorize_url, "http", 4) != 0 || strncmp(o->token_url, "http", 4) != 0 ||
	    strncmp(o->userinfo_url, "http", 4) != 0) {
		snprintf(errbuf, errmax, "SVC_OAUTH_%s_*_URL must be http:// or https:// URLs", up);
		return SVC_E_INTERNAL;
	}
	return 0;
too_long:
	snprintf(errbuf, errmax, "SVC_BASE_URL is too long");
	return SVC_E_INTERNAL;
}

int svc_auth_config_load(const struct svc_config *cfg, struct svc_auth_config *out, char *errbuf,
			 size_t errmax)
{
	struct svc_auth_config c;
	const char *v;
	size_t i;
	int id;

	memset(&c, 0, sizeof c);
	for (i = 0; i < sizeof rules / sizeof rules[0]; i++) {
		v = svc_config_get(cfg, rules[i].name, rules[i].def);
		if (svc_rate_rule_parse(v, (struct svc_rate_rule *)((char *)&c + rules[i].off)) < 0) {
			snprintf(errbuf, errmax, "%s must look like 10/1m (hits per duration) or 0", rules[i].name);
			return SVC_E_INTERNAL;
		}
	}
	c.rate_limit_exempt = svc_config_get(cfg, "SVC_RATE_LIMIT_EXEMPT", "");
	c.trusted_proxies = svc_config_get(cfg, "SVC_TRUSTED_PROXIES", "");
	if (!svc_auth_addr_list_valid(c.rate_limit_exempt) || !svc_auth_addr_list_valid(c.trusted_proxies)) {
		snprintf(errbuf, errmax, "SVC_RATE_LIMIT_EXEMPT and SVC_TRUSTED_PROXIES must list IP addresses or CIDR blocks");
		return SVC_E_INTERNAL;
	}
	c.auth_log = svc_config_get(cfg, "SVC_AUTH_LOG", "");
	if (c.auth_log[0] && c.auth_log[0] != '/') {
		snprintf(errbuf, errmax, "SVC_AUTH_LOG must be an absolute path");
		return SVC_E_INTERNAL;
	}
	c.smtp_url = svc_config_get(cfg, "SVC_SMTP_URL", "");
	if (c.smtp_url[0] && strncmp(c.smtp_url, "smtp://", 7) != 0 && strncmp(c.smtp_url, "smtps://", 8) != 0) {
		snprintf(errbuf, errmax, "SVC_SMTP_URL must start with smtp:// or smtps://");
		return SVC_E_INTERNAL;
	}
	c.smtp_user = svc_config_get(cfg, "SVC_SMTP_USER", "");
	c.smtp_password = svc_config_get(cfg, "SVC_SMTP_PASSWORD", "");
	v = svc_config_get(cfg, "SVC_SMTP_STARTTLS", "1");
	if (strcmp(v, "0") != 0 && strcmp(v, "1") != 0) {
		snprintf(errbuf, errmax, "SVC_SMTP_STARTTLS must be 0 or 1");
		return SVC_E_INTERNAL;
	}
	c.smtp_starttls = strcmp(v, "1") == 0;
	c.mail_from = svc_config_get(cfg, "SVC_MAIL_FROM", "");
	if (svc_config_parse_duration(svc_config_get(cfg, "SVC_PASSWORD_RESET_TTL", "1h"), &c.reset_ttl_secs) < 0 ||
	    c.reset_ttl_secs > 7 * 86400) {
		snprintf(errbuf, errmax, "SVC_PASSWORD_RESET_TTL must be a duration like 1h (at most 7d)");
		return SVC_E_INTERNAL;
	}
	/* sign-up verification (docs/api.md "POST /auth/signup"): auto = on when mail can be sent */
	v = svc_config_get(cfg, "SVC_SIGNUP_VERIFY", "auto");
	if (strcmp(v, "auto") == 0) {
		c.signup_verify = c.smtp_url[0] != '\0';
	} else if (strcmp(v, "on") == 0 || strcmp(v, "off") == 0) {
		c.signup_verify = strcmp(v, "on") == 0;
	} else {
		snprintf(errbuf, errmax, "SVC_SIGNUP_VERIFY must be auto, on or off");
		return SVC_E_INTERNAL;
	}
	if (c.signup_verify && !c.smtp_url[0]) {
		snprintf(errbuf, errmax, "SVC_SIGNUP_VERIFY=on needs SVC_SMTP_URL (the verification link is mailed)");
		return SVC_E_INTERNAL;
	}
	if (svc_config_parse_duration(svc_config_get(cfg, "SVC_SIGNUP_VERIFY_TTL", "24h"), &c.signup_verify_ttl_secs) < 0 ||
	    c.signup_verify_ttl_secs == 0 || c.signup_verify_ttl_secs > 7 * 86400) {
		snprintf(errbuf, errmax, "SVC_SIGNUP_VERIFY_TTL must be a duration like 24h (at most 7d)");
		return SVC_E_INTERNAL;
	}
	if (svc_config_parse_duration(svc_config_get(cfg, "SVC_OAUTH_STATE_TTL", "10m"), &c.oauth_state_ttl_secs) < 0 ||
	    c.oauth_state_ttl_secs > 3600) {
		snprintf(errbuf, errmax, "SVC_OAUTH_STATE_TTL must be a duration like 10m (at most 1h)");
		return SVC_E_INTERNAL;
	}
	if (svc_parse_u64(svc_config_get(cfg, "SVC_API_TOKENS_MAX", "50"), 100000, &c.max_tokens_per_user) < 0 ||
	    c.max_tokens_per_user == 0) {
		snprintf(errbuf, errmax, "SVC_API_TOKENS_MAX must be a number from 1 to 100000");
		return SVC_E_INTERNAL;
	}
	for (id = 0; id < SVC_OAUTH__MAX; id++)
		if (load_provider(cfg, &c, (enum svc_oauth_id)id, errbuf, errmax) < 0)
			return SVC_E_INTERNAL;
	*out = c;
	/* the defaults point into c.buf: re-point them into out->buf */
	for (id = 0; id < SVC_OAUTH__MAX; id++) {
		struct svc_oauth_settings *o = &out->oauth[id];
		if (o->redirect_uri == c.buf[2 * id])
			o->redirect_uri = out->buf[2 * id];
		if (o->assistant_redirect_uri == c.buf[2 * id + 1])
			o->assistant_redirect_uri = out->buf[2 * id + 1];
	}
	return 0;
}
