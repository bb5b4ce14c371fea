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

/* The limits: the setting's field (its name and default are in the settings table) and the rule's field. */
#define RULE(name, cfgf, f) { name, offsetof(struct svc_config, cfgf), offsetof(struct svc_auth_config, f) }
static const struct {
	const char *name;
	size_t cfg_off;
	size_t off;
} rules[] = {
	RULE("SVC_RATE_LIMIT_GLOBAL", rate_global, rl_global),
	RULE("SVC_RATE_LIMIT_LOGIN_IP", rate_login_ip, rl_login_ip),
	RULE("SVC_RATE_LIMIT_LOGIN_ACCOUNT", rate_login_account, rl_login_account),
	RULE("SVC_RATE_LIMIT_LOGIN_ACCOUNT_MAX", rate_login_account_max, rl_login_account_max),
	RULE("SVC_RATE_LIMIT_LOGIN_SLOW", rate_login_slow, rl_login_slow),
	RULE("SVC_RATE_LIMIT_SIGNUP_IP", rate_signup_ip, rl_signup_ip),
	RULE("SVC_RATE_LIMIT_SIGNUP_ACCOUNT", rate_signup_account, rl_signup_account),
	RULE("SVC_RATE_LIMIT_VERIFY_IP", rate_verify_ip, rl_verify_ip),
	RULE("SVC_RATE_LIMIT_REFRESH_IP", rate_refresh_ip, rl_refresh_ip),
	RULE("SVC_RATE_LIMIT_RESET_IP", rate_reset_ip, rl_reset_ip),
	RULE("SVC_RATE_LIMIT_RESET_ACCOUNT", rate_reset_account, rl_reset_account),
	RULE("SVC_RATE_LIMIT_OAUTH_IP", rate_oauth_ip, rl_oauth_ip),
};
#undef RULE

_Static_assert(SVC_OAUTH__MAX == SVC_CONFIG_OAUTH_PROVIDERS && SVC_OAUTH_GITHUB == 0 && SVC_OAUTH_GOOGLE == 1,
	       "cfg->oauth[] is indexed by enum svc_oauth_id (lib/core/config_table.c: GITHUB, then GOOGLE)");

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
	const struct svc_config_oauth *set = &cfg->oauth[id]; /* the settings table's rows of <PROVIDER>_* */
	struct svc_oauth_settings *o = &out->oauth[id];
	char up[16];
	char *def_signin = out->buf[2 * id], *def_assist = out->buf[2 * id + 1];
	int n;

	upper(p->name, up, sizeof up);
	n = snprintf(def_signin, sizeof out->buf[0], "%s/auth/%s/callback", cfg->base_url, p->name);
	if (n < 0 || (size_t)n >= sizeof out->buf[0])
		goto too_long;
	n = snprintf(def_assist, sizeof out->buf[0], "%s/auth/%s/assistant/callback", cfg->base_url, p->name);
	if (n < 0 || (size_t)n >= sizeof out->buf[0])
		goto too_long;
#define GET(field, def) (o->field = set->field && *set->field ? set->field : (def))
	GET(client_id, "");
	GET(client_secret, "");
	GET(redirect_uri, def_signin);
	GET(authorize_url, p->authorize_url);
	GET(token_url, p->token_url);
	GET(userinfo_url, p->userinfo_url);
	GET(assistant_client_id, o->client_id);
	GET(assistant_client_secret, o->client_secret);
	GET(assistant_redirect_uri, def_assist);
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
	/* names, defaults and the plain checks (numbers, durations, choices): the settings table */
	for (i = 0; i < sizeof rules / sizeof rules[0]; i++) {
		memcpy(&v, (const char *)cfg + rules[i].cfg_off, sizeof v);
		if (svc_rate_rule_parse(v, (struct svc_rate_rule *)((char *)&c + rules[i].off)) < 0) {
			snprintf(errbuf, errmax, "%s must look like 10/1m (hits per duration) or 0", rules[i].name);
			return SVC_E_INTERNAL;
		}
	}
	c.rate_limit_exempt = cfg->rate_limit_exempt;
	c.trusted_proxies = cfg->trusted_proxies;
	if (!svc_auth_addr_list_valid(c.rate_limit_exempt) || !svc_auth_addr_list_valid(c.trusted_proxies)) {
		snprintf(errbuf, errmax, "SVC_RATE_LIMIT_EXEMPT and SVC_TRUSTED_PROXIES must list IP addresses or CIDR blocks");
		return SVC_E_INTERNAL;
	}
	c.auth_log = cfg->auth_log;
	c.smtp_url = cfg->smtp_url;
	if (c.smtp_url[0] && strncmp(c.smtp_url, "smtp://", 7) != 0 && strncmp(c.smtp_url, "smtps://", 8) != 0) {
		snprintf(errbuf, errmax, "SVC_SMTP_URL must start with smtp:// or smtps://");
		return SVC_E_INTERNAL;
	}
	c.smtp_user = cfg->smtp_user;
	c.smtp_password = cfg->smtp_password;
	c.smtp_starttls = cfg->smtp_starttls;
	c.mail_from = cfg->mail_from;
	c.reset_ttl_secs = cfg->password_reset_ttl_secs;
	/* sign-up verification (docs/api.md "POST /auth/signup"): auto = on when mail can be sent */
	if (strcmp(cfg->signup_verify, "auto") == 0)
		c.signup_verify = c.smtp_url[0] != '\0';
	else
		c.signup_verify = strcmp(cfg->signup_verify, "on") == 0;
	if (c.signup_verify && !c.smtp_url[0]) {
		snprintf(errbuf, errmax, "SVC_SIGNUP_VERIFY=on needs SVC_SMTP_URL (the verification link is mailed)");
		return SVC_E_INTERNAL;
	}
	c.signup_verify_ttl_secs = cfg->signup_verify_ttl_secs;
	c.oauth_state_ttl_secs = cfg->oauth_state_ttl_secs;
	c.max_tokens_per_user = cfg->api_tokens_max;
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
