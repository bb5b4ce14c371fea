/* domains.h: custom domains of projects: plans and their limits, the name rules, the DNS and HTTPS checks, the state machine, the web servers' include of served domains. */
#ifndef SVC_DOMAINS_H
#define SVC_DOMAINS_H

#include <stddef.h>
#include <stdint.h>

#include <ares.h>

#include "core/config.h"
#include "core/outbound.h"
#include "db/db.h"
#include "db/jobs.h"

/*
 * A custom domain (spec "Custom domain", "Custom domain status", "Custom
 * domain endpoints" rules 1-5; docs/api.md "Custom domains"): a row of
 * custom_domains (schema/008_domains.sql) with a status:
 *
 *   pending_dns ──DNS check passes──► pending_verification ──HTTPS check passes──► active
 *        │                                   │
 *        └──────── retry budget spent ───────┴──► error
 *
 * The DNS check (rule 2a) asks SVC_DNS_SERVER (or the system's resolver) for
 * the name's A records: it passes when the CNAME chain reaches
 * SVC_CNAME_TARGET or an A record is SVC_PUBLIC_IPV4. The HTTPS check (rule
 * 2b) fetches https://<domain>/.well-known/svc-site with libcurl pinned to
 * the address the DNS check found and passes when the answer holds the
 * project's id (the marker every published site carries). Domains in
 * pending_verification and active are served by the web servers (their
 * include, svc_sites_write()) and get certificates on demand (GET
 * /internal/tls/ask), since the HTTPS check needs both.
 */

/* Settings of the custom domains (docs/configuration.md "Custom domains"). Strings are borrowed from the config. */
struct svc_domain_settings {
	const char *cname_target;   /* SVC_CNAME_TARGET: what a CNAME must point at; default SVC_DOMAIN */
	const char *public_ipv4;    /* SVC_PUBLIC_IPV4: the A record's value on the direct path; "" = none */
	const char *dns_server;     /* SVC_DNS_SERVER: "host:port" (an address) asked; "" = the system's resolver */
	unsigned https_port;        /* SVC_DOMAIN_HTTPS_PORT: port of the HTTPS check, default 443 */
	const char *check_ca;       /* SVC_DOMAIN_CHECK_CA: CA bundle of the HTTPS check; "" = the system's */
	int64_t timeout_ms;         /* SVC_DOMAIN_CHECK_TIMEOUT: seconds one check may take (DNS, HTTPS), default 10 */
	int64_t retry_base_secs;    /* SVC_DOMAIN_RECHECK_BASE: first delay before svc-worker checks again, default 60 */
	int64_t retry_max_secs;     /* SVC_DOMAIN_RECHECK_MAX: longest delay (it doubles up to this), default 3600 */
	unsigned attempts;          /* SVC_DOMAIN_CHECK_ATTEMPTS: failed checks of one stage before error, default 48 */
	char sites_dir[1024];       /* SVC_SITES_DIR: where the web servers' includes are written, default <data>/sites */
	const char *reload_cmd;     /* SVC_SITES_RELOAD_CMD: run (sh -c) after an include changed; "" = none */
	const char *domain;         /* SVC_DOMAIN */
	const char *reserved;       /* SVC_RESERVED_DOMAINS: names and *.suffix patterns no custom domain may be; "" = none */
	int64_t hold_secs;          /* SVC_DOMAIN_HOLD_DAYS in seconds: how long a removed name stays held, default 7 days */
	int txt_proof;              /* SVC_DOMAIN_TXT_PROOF: 1 = the DNS check also asks for _svc-challenge.<domain> TXT */
	int64_t verify_cooldown_secs; /* SVC_DOMAIN_VERIFY_COOLDOWN_SECS: between two checks asked for by hand, default 15 */
	struct svc_outbound_policy outbound; /* which addresses the HTTPS check may connect to (SVC_OUTBOUND_*) */
};

/* Fills `out` from `cfg` (defaults above). Never fails; out borrows cfg's strings. */
void svc_domain_settings_load(const struct svc_config *cfg, struct svc_domain_settings *out);

/* Returns 1 when `plan` is "free", "pro" or "business", else 0 (NULL too). */
int svc_plan_valid(const char *plan);

/*
 * The number of custom domains a workspace of `plan` may have: the settings
 * SVC_PLAN_DOMAINS_FREE, _PRO, _BUSINESS (defaults 0, 1, 5). 0 for an
 * unknown plan. Spec "Limits".
 */
uint64_t svc_plan_domain_limit(const struct svc_config *cfg, const char *plan);

/*
 * Checks and normalises a custom domain name (spec "Custom domain
 * endpoints" rule 4): `in` lower-cased (ASCII), one trailing dot dropped,
 * into out (max bytes, 254 is enough). It must be a hostname of 2 to 127
 * labels of [a-z0-9-] (1 to 63 characters, no hyphen first or last; IDNs in
 * their xn-- form), at most 253 characters, not an IP address, not
 * `svc_domain` or a name under it, not a public suffix, and at most one label
 * under its registrable domain (libpsl: myapp.example.com is fine,
 * myapp.prod.example.com is not). Returns 0, or SVC_E_VALIDATION with a
 * sentence for the user in why (whymax bytes), or SVC_E_INTERNAL when the
 * public suffix list cannot be loaded (logged).
 */
int svc_domain_normalize(const char *in, const char *svc_domain, char *out, size_t max, char *why, size_t whymax);

/*
 * Whether `name` (normalised by svc_domain_normalize()) is one of the
 * platform's own names, which a custom domain must never be (issue 25,
 * item 1): the host of SVC_APP_URL, SVC_BASE_URL or SVC_WS_URL, SVC_DOMAIN
 * or a name under it (the published sites, the preview domain
 * preview.<SVC_DOMAIN> and its names), SVC_CNAME_TARGET, or an entry of
 * SVC_RESERVED_DOMAINS (comma- or space-separated; "name" is that name,
 * "*.suffix" every name under suffix). Names compare without case and a
 * final dot. Returns 1 with a sentence for the user in why (whymax bytes)
 * when it is reserved, else 0.
 */
int svc_domain_reserved(const struct svc_config *cfg, const char *name, char *why, size_t whymax);

/*
 * A c-ares channel that asks `server` ("host:port", an address; NULL or ""
 * the system's resolver) with a per-try timeout of a third of `timeout_ms`
 * (milliseconds), two tries, no search domains, into *out (ares_destroy()
 * it). Returns 0 or SVC_E_INTERNAL (logged). Shared by the DNS check and
 * git-io's remotes (lib/project/gitio.c).
 */
int svc_dns_channel(const char *server, long timeout_ms, ares_channel *out);

/*
 * Runs `ch`'s queries until *done (set by their callback) or the monotonic
 * time `deadline` (svc_mono_ms()), when the queries are cancelled (their
 * callbacks get ARES_ECANCELLED).
 */
void svc_dns_wait(ares_channel ch, int64_t deadline, const int *done);

/*
 * The DNS check (rule 2a) of `domain`: asks for its A records (c-ares, no
 * search list) and passes when the CNAME chain of the answer reaches
 * s->cname_target or one of its addresses is s->public_ipv4; with
 * s->txt_proof, also asks for the TXT records of
 * SVC_DOMAIN_TXT_LABEL.<domain> and passes only when one of them is
 * `txt_token` (issue 25, item 2; NULL or "" never passes then). On success
 * writes the address the HTTPS check should use into out_addr (addrmax
 * bytes, 16 is enough): s->public_ipv4 when it is among them, else the
 * first. Returns 0; SVC_E_NOT_FOUND with why (whymax bytes) saying what the
 * name resolved to when it does not point at the platform or does not
 * resolve; SVC_E_INTERNAL when c-ares cannot start (logged).
 */
int svc_domain_dns_check(const struct svc_domain_settings *s, const char *domain, const char *txt_token,
			 char *out_addr, size_t addrmax, char *why, size_t whymax);

/*
 * The HTTPS check (rule 2b): GET https://<domain>[:s->https_port]/.well-known/svc-site
 * with the connection pinned to `addr` (CURLOPT_RESOLVE), the certificate
 * checked against s->check_ca (or the system's CAs), no redirects, at most
 * 4 KiB read, within s->timeout_ms. Passes when the status is 200 and the
 * body holds `project_id`. Returns 0, or SVC_E_NOT_FOUND with why (whymax
 * bytes) saying what failed (connection, TLS, status, marker, or an address
 * the SSRF guard refuses: s->outbound, SVC_OUTBOUND_ALLOW_PRIVATE and
 * SVC_OUTBOUND_ALLOW_NETS, lib/core/outbound.h).
 */
int svc_domain_https_check(const struct svc_domain_settings *s, const char *domain, const char *addr,
			   const char *project_id, char *why, size_t whymax);

/*
 * Runs the checks of domain `id` that its status calls for and stores the
 * outcome (the state machine above): pending_dns and error run the DNS check
 * and move to pending_verification when it passes (the HTTPS check follows
 * on the next round, once the web servers serve the name); pending_verification
 * and active run both and move to active when they pass. A failure counts
 * an attempt: the domain is checked again after s->retry_base_secs doubling
 * per attempt up to s->retry_max_secs, and turns to error with the reason
 * once s->attempts failures of one stage are reached. `by_hand` (POST
 * /domains/:domainId/verify) restarts the budget of a domain in error. The
 * project's customDomain becomes its first active domain.
 * *out_served_changed (may be NULL) is set to 1 when the domain entered or
 * left the served set (pending_verification, active), so the caller has the
 * includes rewritten. Returns 0, SVC_E_NOT_FOUND (no such domain), DB errors.
 */
int svc_domain_check(struct svc_db *db, const struct svc_config *cfg, const char *id, int by_hand,
		     int *out_served_changed);

/*
 * svc-worker's round (its slow lane's): checks every domain whose next check
 * is due (at most 20, each claimed first so two workers never check one
 * domain at once), then, when it checked one, queues SVC_JOB_SITES_WRITE
 * (svc_sites_queue()): the includes are written by the worker's quick lane,
 * which also calls svc_sites_write() every SVC_DOMAIN_POLL_INTERVAL, so one
 * process per worker holds what it last applied and no reload is doubled.
 * Returns the number of domains checked, or a DB error.
 */
int svc_domains_recheck_due(struct svc_db *db, const struct svc_config *cfg);

/*
 * Rewrites Apache's map of live sites (svc_publish_map_write(), without the
 * database and without a reload: Apache rereads it), then writes the web
 * servers' includes of the served custom domains (status
 * pending_verification or active, of a published project that is not
 * deleted) into s->sites_dir: lighttpd-domains.conf (var.svc_custom_hosts_re
 * and one $HTTP["host"] block per domain setting its site's document root)
 * and apache-domains.conf (one <VirtualHost> per domain, its files read
 * through the map as the published sites' are), each written to a
 * temporary file and renamed over the old one, only when its content
 * changed; then runs s->reload_cmd (sh -c, at most 60 s) when one did, or
 * when they differ from what this process last saw applied on its host
 * (another host's worker rewrote a shared SVC_SITES_DIR: this host's web
 * server reloads too; issue 19).
 * docs/operations.md "Custom domains". *out_changed (may be NULL) says whether
 * anything was rewritten. Returns 0, SVC_E_INTERNAL (files, the reload
 * command failing; logged), DB errors.
 */
int svc_sites_write(struct svc_db *db, const struct svc_config *cfg, int *out_changed);

/* The least time between two runs of SVC_SITES_RELOAD_CMD on a host, in ms (svc_sites_reload()). */
#define SVC_SITES_RELOAD_GAP_MS 2000

/*
 * Runs `cmd` (SVC_SITES_RELOAD_CMD, with sh -c, at most 60 s) no sooner than
 * SVC_SITES_RELOAD_GAP_MS after the end of the last run by any process that
 * shares `sites_dir` (SVC_SITES_DIR): the time is the mtime of
 * `<sites_dir>/.reload.lock`, held with flock(2) for the run, so runs are
 * one at a time and spaced. Two graceful restarts of lighttpd within a
 * second can leave it waiting on responders it spawned and answering
 * nothing for about 110 s (docs/operations.md "Custom domains"). The first
 * run ever does not wait; without the lock file (it cannot be made) the
 * command runs at once, logged. Returns 0 when the command exits 0, else
 * SVC_E_INTERNAL (logged).
 */
int svc_sites_reload(const char *sites_dir, const char *cmd);

/* The label of the TXT record that proves a domain's owner (SVC_DOMAIN_TXT_PROOF): _svc-challenge.<domain>. */
#define SVC_DOMAIN_TXT_LABEL "_svc-challenge"

/* Checks by hand (POST /domains/:domainId/verify) of one workspace in flight at once (issue 25, item 4). */
#define SVC_DOMAIN_CHECKS_PER_WS 2

/* The job kind of a check asked for by hand (svc_domain_verify_job). */
#define SVC_JOB_DOMAIN_VERIFY "domains.verify"

/*
 * Queues SVC_JOB_DOMAIN_VERIFY for domain `id` (one attempt: the caller set
 * its check_queued_at, which the job clears). Returns 0 or DB errors.
 */
int svc_domain_verify_queue(struct svc_db *db, const char *id);

/*
 * The svc_job_fn of SVC_JOB_DOMAIN_VERIFY (lib/db/jobs.h), run by
 * svc-worker: `ctx` is a struct svc_job_ctx; the payload {"id": "<domain
 * id>"}. Runs svc_domain_check() by hand, clears the domain's
 * check_queued_at whatever the outcome, and rewrites the includes when the
 * served set changed. A domain removed meanwhile is no error. Returns 0,
 * SVC_E_VALIDATION (a payload without an id), DB and include errors.
 */
int svc_domain_verify_job(void *ctx, const struct svc_job *job, char *errmsg, size_t errmax);

/* The job kind that rewrites the includes (svc_sites_job), queued by the API after a change. */
#define SVC_JOB_SITES_WRITE "sites.write"

/*
 * The svc_job_fn of SVC_JOB_SITES_WRITE (lib/db/jobs.h): `ctx` is a
 * struct svc_job_ctx; the payload is ignored. Returns what svc_sites_write() returns.
 */
int svc_sites_job(void *ctx, const struct svc_job *job, char *errmsg, size_t errmax);

/* Queues SVC_JOB_SITES_WRITE (3 attempts). Returns 0 or DB errors. */
int svc_sites_queue(struct svc_db *db);

#endif
