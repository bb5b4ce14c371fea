/* domains.c: custom domains: plans, the name rules (libpsl), the DNS (c-ares) and HTTPS (libcurl) checks, the state machine, the web servers' includes. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/select.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <ares.h>
#include <curl/curl.h>
#include <libpsl.h>

#include "core/err.h"
#include "core/fsx.h"
#include "core/json.h"
#include "core/log.h"
#include "core/outbound.h"
#include "core/psl.h"
#include "core/util.h"
#include "project/domains.h"
#include "project/paths.h"
#include "project/publish.h"

extern char **environ;

/* ---- settings ---- */

void svc_domain_settings_load(const struct svc_config *cfg, struct svc_domain_settings *out)
{
	memset(out, 0, sizeof *out);
	out->domain = cfg->domain;
	/* bounds and defaults: the settings table (lib/core/config_table.c) */
	out->cname_target = cfg->cname_target;
	if (!*out->cname_target)
		out->cname_target = cfg->domain;
	out->public_ipv4 = cfg->public_ipv4;
	out->dns_server = cfg->dns_server;
	out->https_port = (unsigned)cfg->domain_https_port;
	out->check_ca = cfg->domain_check_ca;
	out->timeout_ms = (int64_t)cfg->domain_check_timeout * 1000;
	out->retry_base_secs = (int64_t)cfg->domain_recheck_base;
	out->retry_max_secs = (int64_t)cfg->domain_recheck_max;
	out->attempts = (unsigned)cfg->domain_check_attempts;
	if (out->attempts == 0)
		out->attempts = 1;
	if (out->timeout_ms == 0)
		out->timeout_ms = 1000;
	svc_sites_dir(cfg, out->sites_dir, sizeof out->sites_dir); /* cut to fit when too long */
	out->reload_cmd = cfg->sites_reload_cmd;
	out->reserved = cfg->reserved_domains;
	out->hold_secs = (int64_t)cfg->domain_hold_days * 86400;
	out->txt_proof = cfg->domain_txt_proof == 1;
	out->verify_cooldown_secs = (int64_t)cfg->domain_verify_cooldown_secs;
	svc_outbound_policy_load(cfg, &out->outbound);
}

/* ---- plans ---- */

int svc_plan_valid(const char *plan)
{
	return plan && (strcmp(plan, "free") == 0 || strcmp(plan, "pro") == 0 || strcmp(plan, "business") == 0);
}

uint64_t svc_plan_domain_limit(const struct svc_config *cfg, const char *plan)
{
	if (!svc_plan_valid(plan))
		return 0;
	if (strcmp(plan, "pro") == 0)
		return cfg->plan_domains_pro;
	if (strcmp(plan, "business") == 0)
		return cfg->plan_domains_business;
	return cfg->plan_domains_free;
}

/* ---- the name rules ---- */

static size_t count_labels(const char *name)
{
	size_t n = 1;

	for (; *name; name++)
		n += *name == '.';
	return n;
}

/* Whether `name` is a hostname of LDH labels (RFC 1123 §2.1, RFC 5890 for xn-- labels); why says what is not. */
static int hostname_ok(const char *name, char *why, size_t whymax)
{
	const char *p = name, *label = name;
	int all_digits = 1;

	for (;; p++) {
		if (*p == '.' || *p == '\0') {
			size_t len = (size_t)(p - label);
			if (len == 0) {
				snprintf(why, whymax, "%s has an empty label", name);
				return 0;
			}
			if (len > 63) {
				snprintf(why, whymax, "a label of %s is longer than 63 characters", name);
				return 0;
			}
			if (label[0] == '-' || p[-1] == '-') {
				snprintf(why, whymax, "a label of %s starts or ends with a hyphen", name);
				return 0;
			}
			if (*p == '\0')
				break;
			label = p + 1;
			all_digits = 1;
			continue;
		}
		if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '-')) {
			snprintf(why, whymax, "%s is not a valid hostname: only letters, digits, hyphens and dots "
				 "(an internationalised name in its xn-- form)", name);
			return 0;
		}
		if (!(*p >= '0' && *p <= '9'))
			all_digits = 0;
	}
	if (all_digits) {
		/* the last label is all digits: an address (1.2.3.4), or no name under any top-level domain */
		snprintf(why, whymax, "%s is an IP address, not a domain name", name);
		return 0;
	}
	return 1;
}

int svc_domain_normalize(const char *in, const char *svc_domain, char *out, size_t max, char *why, size_t whymax)
{
	char name[256];
	struct in6_addr a6;
	const psl_ctx_t *ctx;
	const char *reg;
	size_t len, i, dlen;

	if (!in || !*in) {
		snprintf(why, whymax, "domain must not be empty");
		return SVC_E_VALIDATION;
	}
	len = strlen(in);
	if (len > 0 && in[len - 1] == '.')
		len--; /* the root's dot: "example.com." is "example.com" */
	if (len == 0 || len > 253 || len >= max) {
		snprintf(why, whymax, "domain must be a hostname of 1 to 253 characters");
		return SVC_E_VALIDATION;
	}
	for (i = 0; i < len; i++)
		name[i] = (char)((in[i] >= 'A' && in[i] <= 'Z') ? in[i] - 'A' + 'a' : in[i]);
	name[len] = '\0';
	if (inet_pton(AF_INET6, name, &a6) == 1 || inet_pton(AF_INET, name, &a6) == 1) {
		snprintf(why, whymax, "%s is an IP address, not a domain name", name);
		return SVC_E_VALIDATION;
	}
	if (!hostname_ok(name, why, whymax))
		return SVC_E_VALIDATION;
	if (count_labels(name) < 2) {
		snprintf(why, whymax, "%s is not a full domain name (say myapp.example.com)", name);
		return SVC_E_VALIDATION;
	}
	dlen = svc_domain ? strlen(svc_domain) : 0;
	if (dlen && (strcmp(name, svc_domain) == 0 ||
		     (len > dlen && name[len - dlen - 1] == '.' && strcmp(name + len - dlen, svc_domain) == 0))) {
		snprintf(why, whymax, "%s is under %s, the platform's own domain: its sites are published there already",
			 name, svc_domain);
		return SVC_E_VALIDATION;
	}
	if (!(ctx = svc_psl())) {
		svc_log_error("domains: cannot load the public suffix list (the publicsuffix package)");
		return SVC_E_INTERNAL;
	}
	if (psl_is_public_suffix(ctx, name)) {
		snprintf(why, whymax, "%s is a public suffix, which nobody owns: use a name under it", name);
		return SVC_E_VALIDATION;
	}
	reg = psl_registrable_domain(ctx, name);
	if (!reg) {
		snprintf(why, whymax, "%s is not under a registrable domain", name);
		return SVC_E_VALIDATION;
	}
	if (count_labels(name) > count_labels(reg) + 1) {
		/* spec "Custom domain endpoints" rule 4 and "Errors" 5 */
		snprintf(why, whymax, "only one label is allowed under %s: use a name like myapp.%s, not %s "
			 "(a deeper name fails in browsers with a TLS cipher mismatch)", reg, reg, name);
		return SVC_E_VALIDATION;
	}
	memcpy(out, name, len + 1);
	return 0;
}

/* ---- the platform's own names ---- */

/* Whether a and b are one name: without case and a final dot. */
static int same_name(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);

	if (la && a[la - 1] == '.')
		la--;
	if (lb && b[lb - 1] == '.')
		lb--;
	return la == lb && strncasecmp(a, b, la) == 0;
}

/* Whether `name` is a name under `suffix` (at least one label more), without case and a final dot. */
static int name_under(const char *name, const char *suffix)
{
	size_t ln = strlen(name), ls = strlen(suffix);

	if (ln && name[ln - 1] == '.')
		ln--;
	if (ls && suffix[ls - 1] == '.')
		ls--;
	return ls > 0 && ln > ls + 1 && name[ln - ls - 1] == '.' && strncasecmp(name + ln - ls, suffix, ls) == 0;
}

/* The host of `url` (IPv6 without brackets) into out (size bytes). Returns 0, or -1 when it has none. */
static int url_host(const char *url, char *out, size_t size)
{
	CURLU *u = curl_url();
	char *host = NULL;
	int rc = -1;

	if (u && url && *url && curl_url_set(u, CURLUPART_URL, url, CURLU_NON_SUPPORT_SCHEME) == CURLUE_OK &&
	    curl_url_get(u, CURLUPART_HOST, &host, 0) == CURLUE_OK && host && *host) {
		size_t len = strlen(host);
		const char *h = host;
		if (h[0] == '[' && len > 2 && h[len - 1] == ']') {
			h++;
			len -= 2;
		}
		if (len < size) {
			memcpy(out, h, len);
			out[len] = '\0';
			rc = 0;
		}
	}
	curl_free(host);
	curl_url_cleanup(u);
	return rc;
}

int svc_domain_reserved(const struct svc_config *cfg, const char *name, char *why, size_t whymax)
{
	static const char *const what[] = { "the address of the app (SVC_APP_URL)",
					    "the address of the API (SVC_BASE_URL)",
					    "the address of the collaboration socket (SVC_WS_URL)" };
	const char *url_of[3] = { cfg->app_url, cfg->base_url, cfg->ws_url };
	const char *target = cfg->cname_target, *list, *p;
	char host[256], entry[256], preview[300];
	size_t i;

	for (i = 0; i < 3; i++)
		if (url_host(url_of[i], host, sizeof host) == 0 && same_name(name, host)) {
			snprintf(why, whymax, "%s is the platform's own host name, %s: a custom domain cannot take it", name,
				 what[i]);
			return 1;
		}
	if (cfg->domain && *cfg->domain) {
		snprintf(preview, sizeof preview, "preview.%s", cfg->domain);
		if (same_name(name, preview) || name_under(name, preview)) {
			snprintf(why, whymax, "%s is the platform's preview domain (preview.SVC_DOMAIN): a custom domain "
				 "cannot take it", name);
			return 1;
		}
		if (same_name(name, cfg->domain) || name_under(name, cfg->domain)) {
			snprintf(why, whymax, "%s is under %s, the platform's own domain: its sites are published there "
				 "already", name, cfg->domain);
			return 1;
		}
	}
	if (*target && same_name(name, target)) {
		snprintf(why, whymax, "%s is the platform's own host name, the target of custom domains' CNAME records "
			 "(SVC_CNAME_TARGET): a custom domain cannot take it", name);
		return 1;
	}
	list = cfg->reserved_domains;
	for (p = list; *p;) {
		size_t len = strcspn(p, ", \t");
		if (len > 0 && len < sizeof entry) {
			memcpy(entry, p, len);
			entry[len] = '\0';
			if ((entry[0] == '*' && entry[1] == '.' && name_under(name, entry + 2)) ||
			    (entry[0] != '*' && same_name(name, entry))) {
				snprintf(why, whymax, "%s is reserved by the platform's operator (SVC_RESERVED_DOMAINS: %s) "
					 "for a site of their own: a custom domain cannot take it", name, entry);
				return 1;
			}
		}
		p += len;
		p += strspn(p, ", \t");
	}
	return 0;
}

/* ---- the DNS check (c-ares) ---- */

struct dns_answer {
	int done;
	int status;                   /* ARES_SUCCESS, ARES_ENOTFOUND, ... */
	int target_in_chain;          /* the CNAME chain reached the target */
	char addrs[8][INET_ADDRSTRLEN];
	int naddrs;
	char canonical[256];          /* the last name of the chain */
	const char *target;
	const char *query;
};

static void on_dns(void *arg, int status, int timeouts, unsigned char *abuf, int alen)
{
	struct dns_answer *a = arg;
	struct ares_addrttl ttls[8];
	struct hostent *host = NULL;
	int n = 8, i;

	(void)timeouts;
	a->done = 1;
	a->status = status;
	if (status != ARES_SUCCESS)
		return;
	a->status = ares_parse_a_reply(abuf, alen, &host, ttls, &n);
	if (a->status != ARES_SUCCESS)
		return;
	/* h_name is where the CNAME chain ends; h_aliases the names along it (the query included) */
	snprintf(a->canonical, sizeof a->canonical, "%s", host->h_name ? host->h_name : "");
	if (host->h_name && !same_name(host->h_name, a->query) && same_name(host->h_name, a->target))
		a->target_in_chain = 1;
	for (i = 0; host->h_aliases && host->h_aliases[i]; i++)
		if (!same_name(host->h_aliases[i], a->query) && same_name(host->h_aliases[i], a->target))
			a->target_in_chain = 1;
	for (i = 0; i < n && i < 8; i++)
		if (inet_ntop(AF_INET, &ttls[i].ipaddr, a->addrs[a->naddrs], INET_ADDRSTRLEN))
			a->naddrs++;
	ares_free_hostent(host);
}

/* A TXT answer: whether one of the strings is `want`. */
struct txt_answer {
	int done;
	int status;
	int found;
	const char *want;
};

static void on_txt(void *arg, int status, int timeouts, unsigned char *abuf, int alen)
{
	struct txt_answer *a = arg;
	struct ares_txt_ext *txt = NULL, *t;

	(void)timeouts;
	a->done = 1;
	a->status = status;
	if (status != ARES_SUCCESS)
		return;
	if ((a->status = ares_parse_txt_reply_ext(abuf, alen, &txt)) != ARES_SUCCESS)
		return;
	for (t = txt; t; t = t->next)
		if (a->want && *a->want && t->length == strlen(a->want) && memcmp(t->txt, a->want, t->length) == 0)
			a->found = 1;
	ares_free_data(txt);
}

int svc_dns_channel(const char *server, long timeout_ms, ares_channel *out)
{
	struct ares_options opts;
	ares_channel ch = NULL;
	int rc;

	memset(&opts, 0, sizeof opts);
	opts.timeout = (int)(timeout_ms / 3 > 0 ? timeout_ms / 3 : 1);
	opts.tries = 2;
	opts.flags = ARES_FLAG_NOSEARCH;
	if ((rc = ares_init_options(&ch, &opts, ARES_OPT_TIMEOUTMS | ARES_OPT_TRIES | ARES_OPT_FLAGS)) != ARES_SUCCESS) {
		svc_log_error("dns: c-ares: %s", ares_strerror(rc));
		return SVC_E_INTERNAL;
	}
	if (server && *server && (rc = ares_set_servers_ports_csv(ch, server)) != ARES_SUCCESS) {
		svc_log_error("dns: SVC_DNS_SERVER=%s: %s", server, ares_strerror(rc));
		ares_destroy(ch);
		return SVC_E_INTERNAL;
	}
	*out = ch;
	return 0;
}

void svc_dns_wait(ares_channel ch, int64_t deadline, const int *done)
{
	while (!*done) {
		fd_set r, w;
		struct timeval tv, *tvp, max_tv;
		int64_t left = deadline - svc_mono_ms();
		int nfds;

		if (left <= 0) {
			ares_cancel(ch); /* calls the callback with ARES_ECANCELLED */
			break;
		}
		FD_ZERO(&r);
		FD_ZERO(&w);
		nfds = ares_fds(ch, &r, &w);
		if (nfds == 0)
			break;
		max_tv.tv_sec = (time_t)(left / 1000);
		max_tv.tv_usec = (suseconds_t)((left % 1000) * 1000);
		tvp = ares_timeout(ch, &max_tv, &tv);
		if (select(nfds, &r, &w, NULL, tvp) < 0 && errno != EINTR)
			break;
		ares_process(ch, &r, &w);
	}
}

/*
 * Asks for the records of `type` (1 A, 16 TXT) of `name`, waiting at most timeout_ms; `cb` gets the
 * answer with `arg` and sets *done. Returns 0 (*status ARES_ETIMEOUT when none came), or SVC_E_INTERNAL.
 */
static int dns_query(const struct svc_domain_settings *s, const char *name, int type, ares_callback cb, void *arg,
		     int *done, int *status)
{
	ares_channel ch = NULL;
	int err;

	if ((err = svc_dns_channel(s->dns_server, s->timeout_ms, &ch)) < 0)
		return err;
	ares_query(ch, name, 1 /* C_IN */, type, cb, arg);
	svc_dns_wait(ch, svc_mono_ms() + s->timeout_ms, done);
	if (!*done)
		*status = ARES_ETIMEOUT;
	ares_destroy(ch);
	return 0;
}

int svc_domain_dns_check(const struct svc_domain_settings *s, const char *domain, const char *txt_token,
			 char *out_addr, size_t addrmax, char *why, size_t whymax)
{
	struct dns_answer a;
	struct txt_answer t;
	char txt_name[300];
	int err, i, pick = 0, ip_match = 0;

	memset(&a, 0, sizeof a);
	a.target = s->cname_target;
	a.query = domain;
	if ((err = dns_query(s, domain, 1 /* T_A */, on_dns, &a, &a.done, &a.status)) < 0)
		return err;
	if (a.status != ARES_SUCCESS || a.naddrs == 0) {
		snprintf(why, whymax, "%s does not resolve (%s): set a CNAME record to %s%s%s", domain,
			 a.status == ARES_SUCCESS ? "no address" : ares_strerror(a.status), s->cname_target,
			 *s->public_ipv4 ? " or an A record to " : "", s->public_ipv4);
		return SVC_E_NOT_FOUND;
	}
	for (i = 0; i < a.naddrs; i++)
		if (*s->public_ipv4 && strcmp(a.addrs[i], s->public_ipv4) == 0) {
			ip_match = 1;
			pick = i;
		}
	if (!a.target_in_chain && !ip_match) {
		snprintf(why, whymax, "%s resolves to %s (%s), not to %s%s%s", domain, a.addrs[0], a.canonical,
			 s->cname_target, *s->public_ipv4 ? " or " : "", s->public_ipv4);
		return SVC_E_NOT_FOUND;
	}
	if (s->txt_proof) {
		/* the name points here; whoever added it must also control its zone (issue 25, item 2) */
		memset(&t, 0, sizeof t);
		t.want = txt_token;
		snprintf(txt_name, sizeof txt_name, "%s.%s", SVC_DOMAIN_TXT_LABEL, domain);
		if ((err = dns_query(s, txt_name, 16 /* T_TXT */, on_txt, &t, &t.done, &t.status)) < 0)
			return err;
		if (!t.found) {
			snprintf(why, whymax, "%s has no TXT record holding this domain's token (%s): add the TXT record "
				 "shown with the DNS records", txt_name,
				 t.status == ARES_SUCCESS ? "other values" : ares_strerror(t.status));
			return SVC_E_NOT_FOUND;
		}
	}
	snprintf(out_addr, addrmax, "%s", a.addrs[pick]);
	return 0;
}

/* ---- the HTTPS check (libcurl) ---- */

#define MARKER_MAX 4096
#define SITES_MAX (64u << 20) /* bytes of one include */

int svc_domain_https_check(const struct svc_domain_settings *s, const char *domain, const char *addr,
			   const char *project_id, char *why, size_t whymax)
{
	struct svc_outbound_xfer x;
	struct svc_outbound_req req;
	char url[400], pin[400], port[16] = "";
	struct curl_slist *resolve = NULL;
	CURL *c = NULL;
	long status = 0;
	int err = SVC_E_NOT_FOUND, rc;

	memset(&x, 0, sizeof x);
	if (s->https_port != 443)
		snprintf(port, sizeof port, ":%u", s->https_port);
	snprintf(url, sizeof url, "https://%s%s/.well-known/svc-site", domain, port);
	snprintf(pin, sizeof pin, "%s:%u:%s", domain, s->https_port, addr);
	/* the name is the user's: only addresses the SSRF guard allows (issue 17, lib/core/outbound.h) */
	memset(&req, 0, sizeof req);
	req.url = url;
	req.protocols = "https";
	req.reach = SVC_OUTBOUND_GUARDED;
	req.policy = &s->outbound;
	req.connect_timeout_ms = (long)(s->timeout_ms / 2 > 0 ? s->timeout_ms / 2 : 1);
	req.timeout_ms = (long)s->timeout_ms;
	req.max_body = MARKER_MAX;
	req.user_agent = "svc-domain-check";
	if (!(c = svc_outbound_handle()) || !(resolve = curl_slist_append(NULL, pin)) ||
	    svc_outbound_setup(c, &req, &x) < 0 || curl_easy_setopt(c, CURLOPT_RESOLVE, resolve) != CURLE_OK ||
	    (*s->check_ca && curl_easy_setopt(c, CURLOPT_CAINFO, s->check_ca) != CURLE_OK)) {
		snprintf(why, whymax, "the HTTPS check could not start");
		err = SVC_E_INTERNAL;
		goto done;
	}
	rc = svc_outbound_perform(&x);
	if (rc == SVC_E_FORBIDDEN) {
		svc_log_warn("domains: %s resolves to %s, which the outbound policy refuses", domain, x.guard.addr);
		snprintf(why, whymax, "%s resolves to a %s address, which svc does not connect to", domain,
			 svc_net_kind_name(x.guard.kind));
		goto done;
	}
	if (rc < 0) {
		snprintf(why, whymax, "https://%s%s/ does not answer over HTTPS at %s: %s", domain, port, addr,
			 curl_easy_strerror(x.rc));
		goto done;
	}
	status = x.status;
	if (status != 200) {
		snprintf(why, whymax, "https://%s%s/.well-known/svc-site answers HTTP %ld, not the site's marker", domain,
			 port, status);
		goto done;
	}
	if (!strstr(svc_buf_str(&x.body), project_id)) {
		snprintf(why, whymax, "https://%s%s/ serves another site (the marker does not name this project)", domain,
			 port);
		goto done;
	}
	err = 0;
done:
	curl_slist_free_all(resolve);
	if (c)
		curl_easy_cleanup(c);
	svc_outbound_xfer_dispose(&x);
	return err;
}

/* ---- the state machine ---- */

static int served(const char *status)
{
	return strcmp(status, "pending_verification") == 0 || strcmp(status, "active") == 0;
}

/* Seconds before the next check after `attempts` failures: base doubling, at most max. */
static int64_t backoff(const struct svc_domain_settings *s, unsigned attempts)
{
	int64_t d = s->retry_base_secs;
	unsigned i;

	for (i = 1; i < attempts && d < s->retry_max_secs; i++)
		d *= 2;
	return d < s->retry_max_secs ? d : s->retry_max_secs;
}

/* Whether another row of `domain` than `id` is served: 1, 0, or a DB error. */
static int served_elsewhere(struct svc_db *db, const char *domain, const char *id)
{
	struct svc_rows *rows = NULL;
	struct svc_dbv p[2] = { svc_dbv_str(domain), svc_dbv_str(id) };
	int err;

	if ((err = svc_db_run(db, STMT_DOMAIN_SERVED_ELSEWHERE, p, 2, &rows, NULL)) < 0)
		return err;
	err = rows && rows->nrows == 1 && strcmp(svc_rows_get(rows, 0, CDECOL_COUNT), "0") != 0;
	svc_rows_free(rows);
	return err;
}

int svc_domain_check(struct svc_db *db, const struct svc_config *cfg, const char *id, int by_hand,
		     int *out_served_changed)
{
	struct svc_domain_settings s;
	struct svc_rows *rows = NULL;
	struct svc_dbv p[6];
	char addr[64] = "", why[512] = "";
	const char *status, *domain, *project, *next_status;
	uint64_t attempts = 0;
	int64_t next = -1; /* seconds to the next check; -1 = none */
	int err, live;

	svc_domain_settings_load(cfg, &s);
	p[0] = svc_dbv_str(id);
	if ((err = svc_db_run(db, STMT_DOMAIN_GET, p, 1, &rows, NULL)) < 0)
		return err;
	if (!rows || rows->nrows != 1) {
		err = SVC_E_NOT_FOUND;
		goto done;
	}
	status = svc_rows_get(rows, 0, CDGCOL_STATUS);
	domain = svc_rows_get(rows, 0, CDGCOL_DOMAIN);
	project = svc_rows_get(rows, 0, CDGCOL_PROJECT);
	live = strcmp(svc_rows_get(rows, 0, CDGCOL_LIVE), "1") == 0;
	svc_parse_u64(svc_rows_get(rows, 0, CDGCOL_ATTEMPTS), UINT32_MAX, &attempts);
	if (by_hand && strcmp(status, "error") == 0)
		attempts = 0;

	if ((err = svc_domain_dns_check(&s, domain, svc_rows_get(rows, 0, CDGCOL_TOKEN), addr, sizeof addr, why,
					sizeof why)) == SVC_E_NOT_FOUND) {
		next_status = "pending_dns";
	} else if (err < 0) {
		goto done;
	} else if ((err = served_elsewhere(db, domain, id)) != 0) {
		if (err < 0)
			goto done;
		/* one name is served for one project only: the first whose DNS check passed keeps it (item 2) */
		next_status = "pending_dns";
		snprintf(why, sizeof why, "%s is served for another project already", domain);
		err = SVC_E_NOT_FOUND;
	} else if (!served(status)) {
		/* the name points here: have the web servers serve it, then check HTTPS on the next round */
		next_status = "pending_verification";
		attempts = 0;
		next = 0;
	} else if (!live) {
		next_status = "pending_verification";
		snprintf(why, sizeof why, "the project is not published");
		err = SVC_E_NOT_FOUND;
	} else if ((err = svc_domain_https_check(&s, domain, addr, project, why, sizeof why)) == 0) {
		next_status = "active";
		attempts = 0;
	} else if (err == SVC_E_NOT_FOUND) {
		next_status = strcmp(status, "active") == 0 ? "active" : "pending_verification";
	} else {
		goto done;
	}
	if (err == SVC_E_NOT_FOUND) {
		attempts++;
		if (attempts >= s.attempts) {
			next_status = "error";
			next = -1;
		} else {
			next = backoff(&s, (unsigned)attempts);
		}
		if (strcmp(next_status, "active") == 0)
			next_status = "pending_verification"; /* an active domain that fails is checked again */
		svc_log_info("domains: %s (%s) check %llu failed: %s", domain, id, (unsigned long long)attempts, why);
	} else if (strcmp(next_status, "active") == 0 && strcmp(status, "active") != 0) {
		svc_log_info("domains: %s (%s) is active", domain, id);
	}
	p[0] = svc_dbv_str(next_status);
	p[1] = err == SVC_E_NOT_FOUND ? svc_dbv_str(why) : svc_dbv_null();
	p[2] = svc_dbv_i64((int64_t)attempts);
	p[3] = *addr ? svc_dbv_str(addr) : svc_dbv_null();
	p[4] = next >= 0 ? svc_dbv_i64(next) : svc_dbv_null();
	p[5] = svc_dbv_str(id);
	if ((err = svc_db_run(db, STMT_DOMAIN_SET_STATE, p, 6, NULL, NULL)) < 0)
		goto done;
	p[0] = svc_dbv_str(project);
	if ((err = svc_db_run(db, STMT_DOMAIN_SYNC_PROJECT, p, 1, NULL, NULL)) < 0)
		goto done;
	if (out_served_changed)
		*out_served_changed = served(status) != served(next_status);
done:
	svc_rows_free(rows);
	return err;
}

int svc_domains_recheck_due(struct svc_db *db, const struct svc_config *cfg)
{
	struct svc_domain_settings s;
	struct svc_rows *due = NULL;
	struct svc_dbv p[2];
	uint64_t affected;
	size_t i;
	int err, n = 0;

	svc_domain_settings_load(cfg, &s);
	if ((err = svc_db_run(db, STMT_DOMAIN_DUE, NULL, 0, &due, NULL)) < 0)
		return err;
	for (i = 0; due && i < due->nrows; i++) {
		const char *id = svc_rows_get(due, i, CDDCOL_ID);
		affected = 0;
		/* claimed for longer than a check can take; the check sets the real next time */
		p[0] = svc_dbv_i64(s.timeout_ms / 1000 * 3 + 60);
		p[1] = svc_dbv_str(id);
		if ((err = svc_db_run(db, STMT_DOMAIN_CLAIM, p, 2, NULL, &affected)) < 0)
			goto done;
		if (affected != 1)
			continue;
		if ((err = svc_domain_check(db, cfg, id, 0, NULL)) < 0 && err != SVC_E_NOT_FOUND)
			goto done;
		n++;
	}
	/* the includes are written by one process of a worker (its quick lane), which alone knows what it applied */
	if (n > 0 && (err = svc_sites_queue(db)) < 0)
		goto done;
	err = n;
done:
	svc_rows_free(due);
	return err;
}

/* ---- the web servers' includes ---- */

/* Appends `name` (a checked hostname: [a-z0-9.-]) as a regular expression: dots escaped. */
static int add_re(struct svc_buf *b, const char *name)
{
	int err = 0;

	for (; *name && err == 0; name++)
		err = *name == '.' ? svc_buf_adds(b, "\\.") : svc_buf_add(b, name, 1);
	return err;
}

/*
 * Whether a served row is safe to write into a web server's configuration: names and slugs were
 * checked on the way in, but a row that holds one of the platform's own names (written before
 * issue 25, or into the database by hand) is never written, so it can never take the app's host.
 */
static int row_ok(const struct svc_config *cfg, const char *domain, const char *slug)
{
	char why[512];
	const char *p;

	if (!domain || !slug || !*domain || !*slug || slug[0] == '.')
		return 0;
	for (p = domain; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '-' || *p == '.'))
			return 0;
	for (p = slug; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '-'))
			return 0;
	if (svc_domain_reserved(cfg, domain, why, sizeof why)) {
		svc_log_warn("domains: not serving a custom domain row: %s", why);
		return 0;
	}
	return 1;
}

/*
 * lighttpd's guard of the app's own hosts (var.svc_app_hosts_re, used by lighttpd-svc.conf before
 * the custom hosts): a regular expression that matches any Host but those of SVC_APP_URL,
 * SVC_BASE_URL and SVC_WS_URL (with or without a port). Hosts of other characters than
 * [a-z0-9.-] (an IPv6 address) are left out of it; row_ok() still keeps them out of the include.
 */
static int add_app_guard(const struct svc_config *cfg, struct svc_buf *b)
{
	const char *url_of[3] = { cfg->app_url, cfg->base_url, cfg->ws_url };
	char hosts[3][256];
	size_t i, j, n = 0;
	int err = svc_buf_adds(b, "var.svc_app_hosts_re = \"^(?!(");

	for (i = 0; i < 3; i++) {
		char *h, *host = hosts[n];
		if (url_host(url_of[i], host, sizeof hosts[0]) < 0)
			continue;
		for (h = host; *h; h++)
			if (*h >= 'A' && *h <= 'Z')
				*h = (char)(*h - 'A' + 'a');
		if (host[strspn(host, "abcdefghijklmnopqrstuvwxyz0123456789.-")] != '\0')
			continue;
		for (j = 0; j < n && strcmp(hosts[j], host) != 0; j++)
			;
		if (j < n)
			continue; /* app_url, base_url and ws_url usually share their host */
		if (n++)
			err |= svc_buf_adds(b, "|");
		err |= add_re(b, host);
	}
	err |= svc_buf_adds(b, n ? ")(:[0-9]+)?$)\"\n" : "\\.none))\"\n");
	return err;
}

static int build_lighttpd(const struct svc_config *cfg, const struct svc_rows *rows, struct svc_buf *b)
{
	size_t i, n = 0;
	int err = 0;

	err |= svc_buf_adds(b, "# lighttpd-domains.conf: the custom domains svc serves, written by svc (lib/project/domains.c); "
			       "do not edit.\n# Included by httpd-conf/lighttpd-svc.conf (var.svc_custom_domains_conf).\n"
			       "# var.svc_app_hosts_re: any Host but the app's own (SVC_APP_URL, SVC_BASE_URL, SVC_WS_URL), "
			       "matched before the custom hosts.\n");
	err |= add_app_guard(cfg, b);
	err |= svc_buf_adds(b, "var.svc_custom_hosts_re = \"^(");
	for (i = 0; rows && i < rows->nrows; i++) {
		const char *d = svc_rows_get(rows, i, CDSCOL_DOMAIN);
		if (!row_ok(cfg, d, svc_rows_get(rows, i, CDSCOL_SLUG)))
			continue;
		if (n++)
			err |= svc_buf_adds(b, "|");
		err |= add_re(b, d);
	}
	/* no domain: a name no Host can carry (lighttpd refuses a Host that starts with a dot) */
	err |= svc_buf_adds(b, n ? ")(:[0-9]+)?$\"\n" : "\\.none)$\"\n");
	for (i = 0; rows && i < rows->nrows; i++) {
		const char *d = svc_rows_get(rows, i, CDSCOL_DOMAIN), *slug = svc_rows_get(rows, i, CDSCOL_SLUG);
		if (!row_ok(cfg, d, slug))
			continue;
		err |= svc_buf_adds(b, "$HTTP[\"host\"] =~ \"^");
		err |= add_re(b, d);
		err |= svc_buf_addf(b, "(:[0-9]+)?$\" {\n\tserver.document-root = var.svc_data_dir + \"/published/%s/\"\n}\n",
				    slug);
	}
	return err ? SVC_E_TOO_LARGE : 0;
}

static int build_apache(const struct svc_config *cfg, const struct svc_rows *rows, struct svc_buf *b)
{
	size_t i;
	int err = 0;

	err |= svc_buf_adds(b, "# apache-domains.conf: the custom domains svc serves, written by svc (lib/project/domains.c); "
			       "do not edit.\n# Included by httpd-conf/apache-svc.conf (Define SVC_SITES_DIR).\n");
	if (!rows || rows->nrows == 0)
		err |= svc_buf_adds(b, "# (none yet)\n");
	for (i = 0; rows && i < rows->nrows; i++) {
		const char *d = svc_rows_get(rows, i, CDSCOL_DOMAIN), *slug = svc_rows_get(rows, i, CDSCOL_SLUG);
		if (!row_ok(cfg, d, slug))
			continue;
		/*
		 * as the published sites' virtual host of apache-svc.conf, for one name and its site: the files
		 * from the live deployment's own directory (Apache's map, svc_publish_map_write()), else the symlink
		 */
		err |= svc_buf_addf(b,
			"<VirtualHost *:${SVC_HTTP_PORT}>\n"
			"\tServerName %s\n"
			"\tDocumentRoot \"${SVC_DATA_DIR}/published/%s\"\n"
			"\tDirectoryIndex index.html\n"
			/* the site's backend (docs/app-backend.md): /_svc/ is svc-app's, never a file */
			"\tProxyFCGIBackendType GENERIC\n"
			"\tProxyPass \"/_svc/\" \"unix:${SVC_RUN_DIR}/svc-app.sock|fcgi://svc-app/_svc/\" timeout=60\n"
			"\t<IfFile \"${SVC_SITES_DIR}/" SVC_PUBLISH_MAP "\">\n"
			"\t\tRewriteEngine On\n"
			"\t\tRewriteRule \"^/_svc/\" \"-\" [L]\n"
			"\t\tRewriteMap svcsites \"txt:${SVC_SITES_DIR}/" SVC_PUBLISH_MAP "\"\n"
			"\t\tRewriteCond \"${svcsites:%s}\" \"^([0-9a-f-]{36}/[0-9a-f-]{36})$\"\n"
			"\t\tRewriteRule \"^/(.*)$\" \"${SVC_DATA_DIR}/deployments/%%1/$1\" [L]\n"
			"\t</IfFile>\n"
			"\t<Directory \"${SVC_DATA_DIR}/deployments\">\n"
			"\t\tOptions -Indexes -FollowSymLinks\n"
			"\t\tAllowOverride None\n"
			"\t\tRequire all granted\n"
			"\t</Directory>\n"
			"\t<Directory \"${SVC_DATA_DIR}/published\">\n"
			"\t\tOptions -Indexes -FollowSymLinks +SymLinksIfOwnerMatch\n"
			"\t\tAllowOverride None\n"
			"\t\tRequire all granted\n"
			"\t</Directory>\n"
			"\t# dotfiles are never served, except /.well-known/ (the site's marker, which the HTTPS check reads)\n"
			"\t<LocationMatch \"^(?!/\\.well-known/(?!\\.)(?!.*/\\.)).*/\\.\">\n"
			"\t\tRequire all denied\n"
			"\t</LocationMatch>\n"
			"\t<Location \"/.well-known/svc-site\">\n"
			"\t\tForceType \"text/plain; charset=utf-8\"\n"
			"\t</Location>\n"
			"\tCustomLog \"${SVC_LOG_DIR}/svc-access.log\" \"%%h %%l %%u %%t \\\"%%r\\\" %%>s %%b %%{Host}i\"\n"
			/* the site's files only: svc-app sets the headers of /_svc/ (docs/app-backend.md "How it is kept safe") */
			"\t<IfModule mod_headers.c>\n"
			"\t\t<If \"%%{REQUEST_URI} !~ m#^/_svc/#\">\n"
			"\t\t\tHeader always set X-Content-Type-Options \"nosniff\"\n"
			"\t\t\tHeader always set Referrer-Policy \"strict-origin-when-cross-origin\"\n"
			"\t\t\tHeader always set X-Frame-Options \"SAMEORIGIN\"\n"
			"\t\t</If>\n"
			"\t</IfModule>\n"
			"</VirtualHost>\n", d, slug, slug);
	}
	return err ? SVC_E_TOO_LARGE : 0;
}

/* Writes `text` to `name` in dir when it differs from what is there. *changed |= 1 when written. */
static int write_if_changed(const char *dir, const char *name, const struct svc_buf *text, int *changed)
{
	char *old = NULL;
	size_t old_len = 0;
	int err;

	if (svc_fsx_read(dir, name, SITES_MAX, &old, &old_len) == 0 && old_len == text->len &&
	    memcmp(old, svc_buf_str(text), old_len) == 0) {
		free(old);
		return 0;
	}
	free(old);
	if ((err = svc_fsx_write(dir, name, svc_buf_str(text), text->len)) < 0) {
		svc_log_error("domains: cannot write %s/%s: %s", dir, name, svc_err_message(err));
		return SVC_E_INTERNAL;
	}
	*changed = 1;
	return 0;
}

/* Runs `cmd` with sh -c, waiting at most 60 s. Returns 0 when it exits 0, else SVC_E_INTERNAL (logged). */
static int run_reload(const char *cmd)
{
	char *argv[] = { "sh", "-c", (char *)cmd, NULL };
	int64_t deadline = svc_mono_ms() + 60000;
	pid_t pid;
	int status = 0, rc;

	if ((rc = posix_spawn(&pid, "/bin/sh", NULL, NULL, argv, environ)) != 0) {
		svc_log_error("domains: cannot run SVC_SITES_RELOAD_CMD: %s", strerror(rc));
		return SVC_E_INTERNAL;
	}
	for (;;) {
		pid_t w = waitpid(pid, &status, WNOHANG);
		if (w == pid)
			break;
		if (w < 0 && errno != EINTR) {
			svc_log_error("domains: waiting for SVC_SITES_RELOAD_CMD: %s", strerror(errno));
			return SVC_E_INTERNAL;
		}
		if (svc_mono_ms() > deadline) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			svc_log_error("domains: SVC_SITES_RELOAD_CMD ran over 60 s and was killed");
			return SVC_E_INTERNAL;
		}
		poll(NULL, 0, 50);
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		svc_log_error("domains: SVC_SITES_RELOAD_CMD failed (status %d)", status);
		return SVC_E_INTERNAL;
	}
	return 0;
}

int svc_sites_reload(const char *sites_dir, const char *cmd)
{
	char path[4096];
	struct stat st;
	struct timespec now;
	int fd, err;

	if (snprintf(path, sizeof path, "%s/.reload.lock", sites_dir) >= (int)sizeof path)
		return run_reload(cmd);
	if ((fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0640)) >= 0) {
		/* a new lock file: no reload ran before this one (its time is the epoch, so nothing waits) */
		const struct timespec epoch[2] = { { 0, 0 }, { 0, 0 } };
		struct stat d;
		futimens(fd, epoch);
		/* made by root (svc-admin write-sites, a restore): the file is the directory owner's, svc-worker's */
		if (geteuid() == 0 && stat(sites_dir, &d) == 0 && fchown(fd, d.st_uid, d.st_gid) < 0)
			svc_log_warn("domains: cannot give %s to the owner of %s: %s", path, sites_dir, strerror(errno));
	} else if (errno != EEXIST || (fd = open(path, O_RDWR | O_CLOEXEC)) < 0) {
		svc_log_warn("domains: cannot open %s (%s): the reload is not spaced from others", path, strerror(errno));
		return run_reload(cmd);
	}
	while (flock(fd, LOCK_EX) < 0 && errno == EINTR)
		;
	if (fstat(fd, &st) == 0 && clock_gettime(CLOCK_REALTIME, &now) == 0) {
		int64_t since = ((int64_t)now.tv_sec - st.st_mtim.tv_sec) * 1000 + (now.tv_nsec - st.st_mtim.tv_nsec) / 1000000;
		if (since >= 0 && since < SVC_SITES_RELOAD_GAP_MS)
			poll(NULL, 0, (int)(SVC_SITES_RELOAD_GAP_MS - since));
	}
	err = run_reload(cmd);
	futimens(fd, NULL); /* the time of this reload's end, for the next one */
	close(fd);          /* and the lock goes with it */
	return err;
}

/*
 * The includes (SHA-256 of both) that this process last saw applied on its host: reloaded by
 * it, or already there when it first looked. With SVC_SITES_DIR on storage that several hosts
 * share, another host's worker may have rewritten the files; this host's web server still
 * wants its reload (issue 19). Of svc-worker's lanes only the quick one writes them (its
 * sites.write and domains.verify jobs, and its look every SVC_DOMAIN_POLL_INTERVAL): a second
 * writer on the host would reload again for what the first applied.
 */
static char host_applied[65];

int svc_sites_write(struct svc_db *db, const struct svc_config *cfg, int *out_changed)
{
	struct svc_domain_settings s;
	struct svc_rows *rows = NULL;
	struct svc_buf l, a;
	char sha_l[65], sha_a[65], both[130], sha[65];
	int err, changed = 0;

	svc_domain_settings_load(cfg, &s);
	svc_buf_init(&l, SITES_MAX);
	svc_buf_init(&a, SITES_MAX);
	/* Apache's map of live sites first: it needs no database */
	if ((err = svc_publish_map_write(cfg)) < 0)
		goto done;
	if ((err = svc_db_run(db, STMT_DOMAIN_SERVED, NULL, 0, &rows, NULL)) < 0)
		goto done;
	if ((err = build_lighttpd(cfg, rows, &l)) < 0 || (err = build_apache(cfg, rows, &a)) < 0)
		goto done;
	if ((err = svc_project_mkdirs(s.sites_dir)) < 0 ||
	    (err = write_if_changed(s.sites_dir, "lighttpd-domains.conf", &l, &changed)) < 0 ||
	    (err = write_if_changed(s.sites_dir, "apache-domains.conf", &a, &changed)) < 0)
		goto done;
	if ((err = svc_sha256_hex(svc_buf_str(&l), l.len, sha_l)) < 0 || (err = svc_sha256_hex(svc_buf_str(&a), a.len, sha_a)) < 0)
		goto done;
	memcpy(both, sha_l, 64);
	memcpy(both + 64, sha_a, 65);
	if ((err = svc_sha256_hex(both, 128, sha)) < 0)
		goto done;
	if (changed)
		svc_log_info("domains: the web servers' includes were rewritten (%zu served domains)", rows ? rows->nrows : 0);
	else if (host_applied[0] && strcmp(host_applied, sha) != 0)
		svc_log_info("domains: the includes were rewritten by another host; reloading this one's web server");
	if (changed || (host_applied[0] && strcmp(host_applied, sha) != 0)) {
		if (*s.reload_cmd && (err = svc_sites_reload(s.sites_dir, s.reload_cmd)) < 0)
			goto done;
	}
	memcpy(host_applied, sha, sizeof sha);
	if (out_changed)
		*out_changed = changed;
done:
	svc_rows_free(rows);
	svc_buf_dispose(&l);
	svc_buf_dispose(&a);
	return err;
}

int svc_sites_job(void *ctx, const struct svc_job *job, char *errmsg, size_t errmax)
{
	const struct svc_job_ctx *c = ctx;
	int err;

	(void)job;
	if ((err = svc_sites_write(c->db, c->cfg, NULL)) < 0)
		snprintf(errmsg, errmax, "the web servers' includes could not be written");
	return err;
}

int svc_sites_queue(struct svc_db *db)
{
	return svc_jobs_enqueue(db, SVC_JOB_SITES_WRITE, "{}", 3, NULL);
}

int svc_domain_verify_queue(struct svc_db *db, const char *id)
{
	struct json_object *o = json_object_new_object();
	int err;

	svc_json_add_str(o, "id", id);
	err = svc_jobs_enqueue(db, SVC_JOB_DOMAIN_VERIFY, json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN), 1,
			       NULL);
	json_object_put(o);
	return err;
}

int svc_domain_verify_job(void *ctx, const struct svc_job *job, char *errmsg, size_t errmax)
{
	const struct svc_job_ctx *c = ctx;
	struct json_object *o = NULL;
	struct svc_dbv p;
	const char *id;
	int err, done_err, changed = 0;

	if (!job->payload || svc_json_parse_object(job->payload, strlen(job->payload), &o) < 0 ||
	    !(id = json_object_get_string(json_object_object_get(o, "id"))) || !*id) {
		snprintf(errmsg, errmax, "the job names no domain");
		json_object_put(o);
		return SVC_E_VALIDATION;
	}
	err = svc_domain_check(c->db, c->cfg, id, 1, &changed);
	if (err == SVC_E_NOT_FOUND)
		err = 0; /* removed meanwhile */
	p = svc_dbv_str(id);
	done_err = svc_db_run(c->db, STMT_DOMAIN_VERIFY_DONE, &p, 1, NULL, NULL);
	if (err == 0)
		err = done_err;
	if (err == 0 && changed)
		err = svc_sites_write(c->db, c->cfg, NULL);
	if (err < 0)
		snprintf(errmsg, errmax, "the check of domain %s failed: %s", id, svc_err_message(err));
	json_object_put(o);
	return err;
}
