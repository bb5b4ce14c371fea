/* auth.h: session tokens (HS256 JWTs, libjwt 1.10), password hashes (Argon2id), API tokens, OAuth, rate limits, the auth log, the mailed links' jobs. */
#ifndef SVC_AUTH_H
#define SVC_AUTH_H

#include <stddef.h>
#include <stdint.h>

struct svc_config;   /* config.h */
struct svc_db;       /* db.h */
struct svc_job;      /* db/jobs.h */

#define SVC_AUTH_TOKEN_MAX 4096  /* longest token accepted, in bytes */
#define SVC_AUTH_HASH_MAX 128    /* size of a buffer for a PHC hash string (crypto_pwhash_STRBYTES) */

/* The two kinds of session token (spec "Authentication" 1-5); never interchangeable. */
enum svc_token_kind {
	SVC_TOKEN_ACCESS = 0,
	SVC_TOKEN_REFRESH = 1,
};

/*
 * Issues an HS256 JWT for `user_id` (a UUID string, 8-4-4-4-12 hex; the
 * `sub` claim) with claims iss=`issuer`, iat=`now`, exp=`now`+`ttl_secs`
 * (seconds since the epoch; `ttl_secs` > 0), jti = 16 random bytes
 * (RAND_bytes) as 32 lowercase hex digits, and "kind": "access" or
 * "refresh" (libjwt 1.10 always writes typ "JWT", so the kind claim keeps
 * the two apart). `secret` is the raw JWT_SECRET of `secret_len` bytes (at
 * least 32). On success *out is a malloc'd NUL-terminated token the caller
 * frees; on error *out is left untouched. Errors: SVC_E_INTERNAL (secret
 * too short, `user_id` not a UUID, NULL argument, exp overflow, out of
 * memory). RFC 7519 §4.1, RFC 7518 §3.2, RFC 8725 §3.12.
 */
int svc_auth_jwt_issue(const char *secret, size_t secret_len, const char *issuer,
		       enum svc_token_kind kind, const char *user_id, int64_t now,
		       int64_t ttl_secs, char **out);

/*
 * svc_auth_jwt_issue() with the claim "gen": `gen` (>= 0) is the user's
 * session generation (users.session_gen), written only when > 0; a password
 * change raises it, and POST /auth/refresh refuses a refresh token whose gen
 * is not the user's (docs/api.md "POST /auth/password"). Same errors, plus
 * SVC_E_INTERNAL for a negative `gen`.
 */
int svc_auth_jwt_issue_gen(const char *secret, size_t secret_len, const char *issuer,
			   enum svc_token_kind kind, const char *user_id, int64_t gen, int64_t now,
			   int64_t ttl_secs, char **out);

#define SVC_AUTH_ID_LEN 32 /* hex digits of a token id (jti) and of a session (refresh-token family) id */

/*
 * svc_auth_jwt_issue_gen() with two more claims: "fam" = `family`, the
 * session (refresh-token family, lib/auth/auth_session.c) the token belongs
 * to, left out when NULL; and "jti" = `jti` when not NULL (the id a refresh
 * token is stored under) instead of a random one. Both must be NULL or
 * SVC_AUTH_ID_LEN lowercase hex digits. Same errors as svc_auth_jwt_issue().
 */
int svc_auth_jwt_issue_session(const char *secret, size_t secret_len, const char *issuer,
			       enum svc_token_kind kind, const char *user_id, int64_t gen, const char *family,
			       const char *jti, int64_t now, int64_t ttl_secs, char **out);

/* The claims of a verified session token (svc_auth_jwt_verify_claims()). */
struct svc_auth_claims {
	char user_id[37];                   /* sub */
	int64_t gen;                        /* gen, 0 when absent */
	int64_t iat;                        /* iat, 0 when absent */
	int64_t exp;                        /* exp, s since the epoch (always present in a verified token) */
	char jti[SVC_AUTH_ID_LEN + 1];      /* "" when absent (not one of svc's ids: refused) */
	char family[SVC_AUTH_ID_LEN + 1];   /* fam, "" when absent (a token from before sessions were stored) */
};

/*
 * Verifies `token` (NUL-terminated, untrusted) issued by svc_auth_jwt_issue:
 * length at most SVC_AUTH_TOKEN_MAX and three non-empty base64url parts;
 * signature with `secret` (`secret_len` >= 32 bytes; never a NULL key:
 * libjwt 1.10 would skip verification); algorithm exactly HS256, both by
 * jwt_get_alg (libjwt accepts HS384/HS512 with the same secret) and by the
 * header's "alg" string (libjwt's match ignores case), so "none", HS384,
 * HS512 are refused; `iss` a string equal to `issuer`; `exp` present, a JSON
 * integer (not a float, string or bool) and > `now` (seconds since the
 * epoch); `kind` equal to `kind`; `sub` a well-formed UUID. On success
 * writes `sub` (36 characters and a NUL) into out_user_id, a buffer of at
 * least 37 bytes, and returns 0; on failure out_user_id is untouched.
 * Every failure, including garbage input and a short secret, is
 * SVC_E_UNAUTHORIZED. RFC 8725 §3.1, §3.8, §3.12.
 */
int svc_auth_jwt_verify(const char *secret, size_t secret_len, const char *issuer,
			enum svc_token_kind kind, const char *token, int64_t now,
			char *out_user_id);

/*
 * svc_auth_jwt_verify() that also writes the token's session generation
 * (the "gen" claim; 0 when absent) into *out_gen. A "gen" that is present
 * but not a JSON integer >= 0 is SVC_E_UNAUTHORIZED. Out-parameters are set
 * only on success.
 */
int svc_auth_jwt_verify_gen(const char *secret, size_t secret_len, const char *issuer,
			    enum svc_token_kind kind, const char *token, int64_t now,
			    char *out_user_id, int64_t *out_gen);

/*
 * svc_auth_jwt_verify() that returns every claim svc uses in *out (set only
 * on success). "jti" and "fam" must be absent or SVC_AUTH_ID_LEN lowercase
 * hex digits, else SVC_E_UNAUTHORIZED.
 */
int svc_auth_jwt_verify_claims(const char *secret, size_t secret_len, const char *issuer,
			       enum svc_token_kind kind, const char *token, int64_t now,
			       struct svc_auth_claims *out);

/*
 * Hashes `password` (`len` bytes, NULs allowed; NULL only when `len` is 0)
 * with Argon2id (libsodium crypto_pwhash_str_alg, opslimit 2, memlimit
 * 19 MiB = 19456 KiB: OWASP's minimum) and a random salt into `out`
 * (SVC_AUTH_HASH_MAX bytes) as a NUL-terminated PHC string
 * "$argon2id$v=19$m=19456,t=2,p=1$<salt>$<hash>". `out` is written only on
 * success. Errors: SVC_E_INTERNAL (out of memory, NULL argument).
 * OWASP Password Storage Cheat Sheet; RFC 9106.
 */
int svc_auth_password_hash(const char *password, size_t len, char *out);

/*
 * Checks `password` (`len` bytes) against the PHC string `hash` (as made by
 * svc_auth_password_hash, NUL-terminated within SVC_AUTH_HASH_MAX bytes).
 * Returns 0 on a match, SVC_E_UNAUTHORIZED otherwise, also for a malformed
 * hash or one that is not Argon2id. When `hash` is NULL (unknown user) a
 * dummy hash with the same parameters (made once, on first use) is verified
 * so the time taken does not tell whether the account exists, and
 * SVC_E_UNAUTHORIZED is returned.
 */
int svc_auth_password_verify(const char *hash, const char *password, size_t len);

/* ---- settings (lib/auth/auth_config.c; docs/configuration.md "Authentication") ---- */

/* One rate limit: at most `limit` hits per fixed window of `window_secs` seconds; limit 0 = no limit. */
struct svc_rate_rule {
	uint64_t limit;
	int64_t window_secs;
};

/* The OAuth providers: the code-hosting one and the general identity one (spec "Authentication" 6). */
enum svc_oauth_id {
	SVC_OAUTH_GITHUB = 0,
	SVC_OAUTH_GOOGLE = 1,
	SVC_OAUTH__MAX
};

/* One provider's settings; every string is "" when unset, never NULL. */
struct svc_oauth_settings {
	const char *client_id;          /* <PROVIDER>_CLIENT_ID; "" = provider not configured (404) */
	const char *client_secret;      /* <PROVIDER>_CLIENT_SECRET */
	const char *redirect_uri;       /* <PROVIDER>_REDIRECT_URI, default {base_url}/auth/<name>/callback */
	const char *authorize_url;      /* SVC_OAUTH_<PROVIDER>_AUTHORIZE_URL, default the provider's */
	const char *token_url;          /* SVC_OAUTH_<PROVIDER>_TOKEN_URL */
	const char *userinfo_url;       /* SVC_OAUTH_<PROVIDER>_USERINFO_URL */
	const char *assistant_client_id;     /* GITHUB_ASSISTANT_CLIENT_ID, default the sign-in client */
	const char *assistant_client_secret; /* GITHUB_ASSISTANT_CLIENT_SECRET */
	const char *assistant_redirect_uri;  /* GITHUB_ASSISTANT_REDIRECT_URI, default {base_url}/auth/github/assistant/callback */
};

/* Settings of the authentication features, read once per process next to struct svc_config. */
struct svc_auth_config {
	struct svc_rate_rule rl_global;        /* SVC_RATE_LIMIT_GLOBAL: any request, per client address */
	struct svc_rate_rule rl_login_ip;      /* SVC_RATE_LIMIT_LOGIN_IP: login attempts per address */
	struct svc_rate_rule rl_login_account; /* SVC_RATE_LIMIT_LOGIN_ACCOUNT: failed logins per (account, address) */
	struct svc_rate_rule rl_login_account_max; /* SVC_RATE_LIMIT_LOGIN_ACCOUNT_MAX: failed logins per account, from
						     * any address; beyond it, addresses the account never signed in
						     * from are slowed to rl_login_slow */
	struct svc_rate_rule rl_login_slow;    /* SVC_RATE_LIMIT_LOGIN_SLOW: logins per account from unknown addresses
						* while the account is over its ceiling */
	struct svc_rate_rule rl_signup_ip;     /* SVC_RATE_LIMIT_SIGNUP_IP */
	struct svc_rate_rule rl_signup_account; /* SVC_RATE_LIMIT_SIGNUP_ACCOUNT: sign-up messages per e-mail address */
	struct svc_rate_rule rl_verify_ip;     /* SVC_RATE_LIMIT_VERIFY_IP: POST /auth/verify-email per address */
	struct svc_rate_rule rl_refresh_ip;    /* SVC_RATE_LIMIT_REFRESH_IP */
	struct svc_rate_rule rl_reset_ip;      /* SVC_RATE_LIMIT_RESET_IP: forgot- and reset-password per address */
	struct svc_rate_rule rl_reset_account; /* SVC_RATE_LIMIT_RESET_ACCOUNT: reset messages per e-mail address */
	struct svc_rate_rule rl_oauth_ip;      /* SVC_RATE_LIMIT_OAUTH_IP: OAuth starts and callbacks per address */
	const char *rate_limit_exempt;  /* SVC_RATE_LIMIT_EXEMPT: addresses/CIDRs never limited */
	const char *trusted_proxies;    /* SVC_TRUSTED_PROXIES: addresses/CIDRs whose X-Forwarded-For is believed */
	const char *auth_log;           /* SVC_AUTH_LOG: file the auth events are appended to; "" = stderr only */
	const char *smtp_url;           /* SVC_SMTP_URL: smtp://host:port or smtps://; "" = no mail is sent */
	const char *smtp_user;          /* SVC_SMTP_USER */
	const char *smtp_password;      /* SVC_SMTP_PASSWORD */
	int smtp_starttls;              /* SVC_SMTP_STARTTLS: 1 (default) = smtp:// must upgrade with STARTTLS */
	const char *mail_from;          /* SVC_MAIL_FROM, default svc@<SVC_DOMAIN> */
	int64_t reset_ttl_secs;         /* SVC_PASSWORD_RESET_TTL, default 1h */
	int signup_verify;              /* SVC_SIGNUP_VERIFY auto|on|off resolved: 1 = a sign-up is created only by
					 * its mailed link (auto: on when SVC_SMTP_URL is set) */
	int64_t signup_verify_ttl_secs; /* SVC_SIGNUP_VERIFY_TTL, default 24h: lifetime of a sign-up's link */
	int64_t oauth_state_ttl_secs;   /* SVC_OAUTH_STATE_TTL, default 10m */
	uint64_t max_tokens_per_user;   /* SVC_API_TOKENS_MAX, default 50 */
	struct svc_oauth_settings oauth[SVC_OAUTH__MAX];
	char buf[SVC_OAUTH__MAX * 2][512]; /* private: default redirect URIs */
};

/*
 * Reads the settings above from the fields of `cfg` (the settings table,
 * lib/core/config_table.c, has their names and defaults). Rate limits are "N/DURATION" ("10/1m",
 * "5/15m") or "0" (off); durations as svc_config_parse_duration(). Strings
 * point into `cfg`'s storage and live as long as it. On a malformed value
 * returns SVC_E_INTERNAL with a message naming the setting in errbuf.
 */
int svc_auth_config_load(const struct svc_config *cfg, struct svc_auth_config *out, char *errbuf,
			 size_t errmax);

/* Parses a rate limit "N/DURATION" or "0" into *out. Returns 0 or SVC_E_VALIDATION. */
int svc_rate_rule_parse(const char *s, struct svc_rate_rule *out);

/* ---- client addresses (lib/auth/auth_client.c) ---- */

#define SVC_ADDR_MAX 64   /* buffer for a textual IPv4/IPv6 address */

/*
 * Returns 1 when `addr` (textual IPv4 or IPv6) is in `list`: comma- or
 * space-separated addresses and CIDR blocks ("127.0.0.1, 10.0.0.0/8,
 * ::1, fd00::/8"); else 0, also for malformed input. IPv4-mapped IPv6
 * addresses compare as IPv4.
 */
int svc_auth_addr_in_list(const char *addr, const char *list);

/*
 * Lower-cases the e-mail address `in` into out (255 bytes) and checks its
 * shape: 3 to 254 bytes, one '@' with something on both sides, a dot in the
 * domain, no spaces, control bytes, quotes, angle brackets or backslashes.
 * Returns 0 or SVC_E_VALIDATION. Used by svc's sign-in and the apps' (lib/app).
 */
int svc_auth_email_normalise(const char *in, char *out);

/*
 * Writes the key rate limits count client address `addr` under into `out`
 * (`size` bytes; SVC_ADDR_MAX is enough): an IPv4 address as itself (an
 * IPv4-mapped IPv6 one too), an IPv6 address as its /64 ("2001:db8:1:2::/64":
 * a subscriber usually holds a whole /64, RFC 6177, and could otherwise take
 * a new address for every try), anything else as it is. Returns 0 or
 * SVC_E_INTERNAL when `out` is too small.
 */
int svc_auth_addr_key(const char *addr, char *out, size_t size);

/* Returns 1 when `list` is well formed (each entry an address or a CIDR block), else 0. */
int svc_auth_addr_list_valid(const char *list);

/*
 * The client's address: `remote` (REMOTE_ADDR, from the web server), unless
 * it is in `trusted` (SVC_TRUSTED_PROXIES); then the X-Forwarded-For header
 * `xff` is read from the right, skipping trusted hops, and the first
 * untrusted well-formed address is the client (a malformed entry stops the
 * walk at the hop before it). Writes at most `max` bytes (SVC_ADDR_MAX is
 * enough) into out; "-" when remote is NULL or empty. Never fails.
 */
void svc_auth_client_addr(const char *remote, const char *xff, const char *trusted, char *out, size_t max);

/* ---- the auth log (lib/auth/auth_log.c) ---- */

/*
 * Writes one auth event (a failure fail2ban counts, or a success it must
 * not count) as
 *   "<RFC 3339 time> <ident>[<pid>]: auth: <event> remote=<addr>[ <extra>]\n"
 * appended with one write(2) to the file `path` (SVC_AUTH_LOG; opened once
 * per process, O_APPEND, mode 0640; skipped when path is "" or NULL), and the
 * same without the time through svc_log() on stderr. `event` is one word
 * (login_failed, refresh_failed, token_rejected, reset_failed, rate_limited,
 * login_ok, ...). The address always comes before anything a user chose, and
 * `extra` must hold only values passed through svc_auth_log_escape().
 * httpd-conf/fail2ban/filter.d/svc-auth.conf matches the failure events.
 */
void svc_auth_log(const char *path, const char *ident, const char *event, const char *remote,
		  const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* Copies `in` into out (max bytes) with quotes, backslashes, spaces-in-runs and control bytes replaced by '?'. */
void svc_auth_log_escape(const char *in, char *out, size_t max);

/* ---- rate limits (lib/auth/auth_ratelimit.c): MariaDB counters shared by every process and host, or per host in shared memory ---- */

/*
 * Counts one hit on bucket (`rule`, `key`) in the fixed window of `r` that
 * holds `now` (seconds since the epoch). Returns 0 while the window holds at
 * most r->limit hits, SVC_E_RATE_LIMITED once it holds more, with
 * *out_retry_after set to the seconds until the window ends (at least 1);
 * DB errors. A rule with limit 0 always returns 0 without touching the DB.
 * `key` (an address, an e-mail) is stored only as SHA-256 with the rule.
 */
int svc_ratelimit_hit(struct svc_db *db, const char *rule, const char *key, const struct svc_rate_rule *r,
		      int64_t now, int64_t *out_retry_after);

/*
 * svc_ratelimit_hit() counted in this host's shared memory (svc_shm_attach)
 * at `now_ms` (ms since the epoch): the decision is this host's hits plus
 * the other hosts' as last read from MariaDB, so one host answers at the
 * same thresholds as svc_ratelimit_hit(). At most once a second per bucket
 * (on the first hit of a window at once) one process adds the host's new
 * hits to MariaDB and reads the sum of all hosts back; the other requests
 * make no database round trip. With several hosts a client may get past the
 * limit by what the other hosts let through in the last two seconds, and
 * never past hosts x limit (docs/scaling.md "Rate limits"). Without a
 * segment, or with no slot free for the bucket, it is svc_ratelimit_hit().
 * Returns as svc_ratelimit_hit().
 */
int svc_ratelimit_hit_host(struct svc_db *db, const char *rule, const char *key, const struct svc_rate_rule *r,
			   int64_t now_ms, int64_t *out_retry_after);

/* As svc_ratelimit_hit() without counting: SVC_E_RATE_LIMITED when the window already holds r->limit hits. */
int svc_ratelimit_check(struct svc_db *db, const char *rule, const char *key, const struct svc_rate_rule *r,
			int64_t now, int64_t *out_retry_after);

/* Forgets bucket (`rule`, `key`) (a successful login clears its failures). Returns 0 or DB errors. */
int svc_ratelimit_clear(struct svc_db *db, const char *rule, const char *key);

/* ---- per-user API tokens (lib/auth/auth_tokens.c; spec "Authentication" 7) ---- */

#define SVC_PAT_PREFIX "svc_pat_"
/* An app end user's session token (lib/app, cookie svc_app_session on the site's origin): never an API credential. */
#define SVC_APP_SESSION_PREFIX "svca_"
#define SVC_APP_SESSION_COOKIE "svc_app_session"
#define SVC_PAT_LEN 48          /* "svc_pat_" + 40 base64url characters (30 random bytes) */
#define SVC_PAT_SHOWN 12        /* characters kept for display: "svc_pat_" and 4 more */

/* Token scopes (a token holds an OR of these). */
#define SVC_PAT_PROJECTS_READ 1u
#define SVC_PAT_PROJECTS_WRITE 2u
#define SVC_PAT_CHAT 4u
#define SVC_PAT_DEPLOY 8u
#define SVC_PAT_ADMIN 16u
#define SVC_PAT_GIT_READ 32u    /* clone and fetch over /api/git/ (docs/git.md) */
#define SVC_PAT_GIT_WRITE 64u   /* push over /api/git/, and clone and fetch */
#define SVC_PAT_ALL 127u

/* Writes a new random token (RAND_bytes) into out (SVC_PAT_LEN + 1 bytes). Returns 0 or SVC_E_INTERNAL. */
int svc_pat_generate(char *out);

/* Returns 1 when `token` has the shape of an API token (prefix, exact length, base64url), else 0. */
int svc_pat_well_formed(const char *token);

/* Returns the bit of scope `name` ("projects:read", "projects:write", "chat", "deploy", "admin", "git:read", "git:write"), or 0. */
unsigned svc_pat_scope_bit(const char *name);

/* Returns the name of scope bit `bit`, or NULL. */
const char *svc_pat_scope_name(unsigned bit);

/* Parses the space-separated scope names stored with a token; unknown names are ignored. */
unsigned svc_pat_scopes_parse(const char *text);

/* Writes the space-separated names of `scopes` into out (max bytes). Returns 0 or SVC_E_INTERNAL. */
int svc_pat_scopes_format(unsigned scopes, char *out, size_t max);

/*
 * Decides whether a request authenticated by an API token with `scopes`
 * may reach route `pattern` (the router's pattern, "/api/chat/:projectId/messages")
 * with a safe (GET/HEAD) or unsafe method, and which permission-module
 * scopes (perm.h SVC_SCOPE_*) the request then carries:
 *   /api/auth/me                read with any scope; every other /api/auth/ route needs a session
 *   /api/chat/ /api/plan/       "chat" (reads also with "projects:read")
 *   /api/deploy/ and .../domains "deploy"
 *   /api/admin/ /api/integrations/ /api/xray/, and the workspace's
 *   ai-provider and credits (reads too)  "admin"
 *   writes under /api/workspaces other than its projects and folders
 *                               "admin" (workspaces, members, transfer, the workspace's provider)
 *   /api/git/ (smart HTTP)      "git:read" to fetch (safe_method), "git:write" to push (and fetch);
 *                               git:read gives SVC_SCOPE_READ, git:write SVC_SCOPE_READ | WRITE there,
 *                               and neither opens any other route
 *   other reads                 "projects:read" or "admin"
 *   other writes                "projects:write" or "admin"
 * "projects:read" gives SVC_SCOPE_READ, "projects:write" SVC_SCOPE_WRITE,
 * "admin" SVC_SCOPE_ADMIN | READ | WRITE, "chat" and "deploy" SVC_SCOPE_CHAT / SVC_SCOPE_DEPLOY
 * and, on their own routes, SVC_SCOPE_READ | SVC_SCOPE_WRITE. The user's
 * role still decides (a token never exceeds its user's rights).
 * Returns 0 and sets *out_perm_scopes and *out_needed (the scope name that
 * was needed, static), or SVC_E_FORBIDDEN with *out_needed set.
 */
int svc_pat_route_scopes(unsigned scopes, int safe_method, const char *pattern, unsigned *out_perm_scopes,
			 const char **out_needed);

/*
 * Looks up API token `token` (presented as "Bearer svc_pat_...") by its
 * SHA-256 and records its use (last_used_at). On success writes the owner
 * into out_user_id (37 bytes), the token id into out_token_id (37 bytes) and
 * its scopes into *out_scopes. Errors: SVC_E_UNAUTHORIZED (malformed,
 * unknown or revoked), DB errors.
 */
int svc_pat_authenticate(struct svc_db *db, const char *token, char *out_user_id, char *out_token_id,
			 unsigned *out_scopes);

/* ---- OAuth 2.0 sign-in (lib/auth/auth_oauth.c; RFC 6749 §4.1, RFC 7636) ---- */

/* What a provider is, and its default endpoints. */
struct svc_oauth_provider {
	enum svc_oauth_id id;
	const char *name;             /* "github", "google": the path segment */
	const char *label;            /* "GitHub", "Google" */
	const char *authorize_url;    /* defaults; SVC_OAUTH_<PROVIDER>_*_URL override them */
	const char *token_url;
	const char *userinfo_url;
	const char *scope;            /* sign-in scopes */
	const char *assistant_scope;  /* scopes of the assistant flow; NULL = no assistant flow */
	int pkce;                     /* 1 = send an S256 code_challenge */
};

/* Returns the provider named `name`, or NULL. */
const struct svc_oauth_provider *svc_oauth_provider_find(const char *name);

/* Returns provider `id` (never NULL for id < SVC_OAUTH__MAX). */
const struct svc_oauth_provider *svc_oauth_provider_get(enum svc_oauth_id id);

#define SVC_OAUTH_STATE_MAX 160   /* state parameter buffer */
#define SVC_OAUTH_COOKIE_MAX 128  /* svc_oauth cookie buffer */
#define SVC_OAUTH_VERIFIER_LEN 43 /* PKCE code_verifier characters (32 random bytes, base64url) */

/*
 * Makes the `state` of an authorization request and the value of the cookie
 * that binds it to the browser: state = "<exp>.<nonce>.<mac>", cookie =
 * "<nonce>.<code_verifier>", where mac = HMAC-SHA256 over the provider name,
 * `flow` ("signin" or "assistant"), `user_id` ("" for sign-in), exp =
 * `now` + `ttl_secs`, and the nonce, keyed with a key derived from
 * `secret` (JWT_SECRET, `secret_len` bytes). The PKCE verifier (RFC 7636
 * §4.1) is written to out_verifier (SVC_OAUTH_VERIFIER_LEN + 1 bytes).
 * Returns 0 or SVC_E_INTERNAL.
 */
int svc_oauth_state_make(const char *secret, size_t secret_len, const char *provider, const char *flow,
			 const char *user_id, int64_t now, int64_t ttl_secs, char *out_state, char *out_cookie,
			 char *out_verifier);

/*
 * Checks a `state` from the provider's redirect against the `cookie` the
 * browser sent and the same provider, flow and user_id: the mac (constant
 * time), exp > `now`, and the cookie's nonce. Writes the PKCE verifier into
 * out_verifier (SVC_OAUTH_VERIFIER_LEN + 1 bytes). Returns 0 or
 * SVC_E_UNAUTHORIZED (missing, malformed, forged, expired, other browser).
 */
int svc_oauth_state_check(const char *secret, size_t secret_len, const char *provider, const char *flow,
			  const char *user_id, const char *state, const char *cookie, int64_t now,
			  char *out_verifier);

/* Writes BASE64URL(SHA256(verifier)) (RFC 7636 §4.2, S256) into out (44 bytes). */
void svc_oauth_pkce_challenge(const char *verifier, char *out);

/*
 * Builds the authorization URL of provider `p` with `settings`: client_id,
 * redirect_uri, response_type=code, scope, state and (when p->pkce) the S256
 * code_challenge of `verifier`, for the sign-in flow or (`assistant` 1) the
 * assistant flow. *out is malloc'd. Returns 0 or SVC_E_INTERNAL.
 */
int svc_oauth_authorize_url(const struct svc_oauth_provider *p, const struct svc_oauth_settings *settings,
			    int assistant, const char *state, const char *verifier, char **out);

/* A provider account, from its profile endpoints. */
struct svc_oauth_profile {
	char subject[256];    /* the provider's stable user id */
	char email[256];      /* "" when none */
	int email_verified;   /* 1 only when the provider says the address is verified */
	char name[129];       /* display name, "" when none */
	char login[256];      /* GitHub login, "" for others */
};

/*
 * Reads a profile: `userinfo` is the JSON text of the userinfo endpoint
 * (GitHub /user: id, login, name, email; Google OpenID userinfo: sub, email,
 * email_verified, name), `emails` the JSON text of GitHub's /user/emails
 * ([{email, verified, primary}], may be NULL): the primary verified address
 * wins, then any verified one; GitHub's public "email" counts as
 * unverified. Returns 0 or SVC_E_VALIDATION (no subject, not JSON).
 */
int svc_oauth_parse_profile(const struct svc_oauth_provider *p, const char *userinfo, const char *emails,
			    struct svc_oauth_profile *out);

/*
 * Exchanges `code` at the token endpoint (POST form, client secret in the
 * body, code_verifier when p->pkce; Accept: application/json), with
 * libcurl, 10 s timeout, http/https only, no redirects, answers up to 64 KiB.
 * On success *out_access_token is malloc'd (free with
 * svc_crypto_free_secret-style cleansing: svc_oauth_free_token). Errors:
 * SVC_E_UNAUTHORIZED (the provider refused the code), SVC_E_UNAVAILABLE
 * (unreachable, not JSON), SVC_E_INTERNAL.
 */
int svc_oauth_exchange(const struct svc_oauth_provider *p, const struct svc_oauth_settings *settings,
		       int assistant, const char *code, const char *verifier, char **out_access_token);

/*
 * Reads the profile of the account behind `access_token` (userinfo, and for
 * GitHub also <userinfo>/emails). Errors: SVC_E_UNAVAILABLE, SVC_E_VALIDATION.
 */
int svc_oauth_fetch_profile(const struct svc_oauth_provider *p, const struct svc_oauth_settings *settings,
			    const char *access_token, struct svc_oauth_profile *out);

/* Cleanses and frees a token returned by svc_oauth_exchange(); NULL is allowed. */
void svc_oauth_free_token(char *token);

/* ---- sessions: refresh-token families (lib/auth/auth_session.c, docs/api.md "POST /auth/refresh") ---- */

/*
 * How long a refresh token stays usable after it was exchanged, in ms: two
 * tabs that refresh with the same token at once both get a new one (the
 * second a sibling in the same session). After it, presenting the old token
 * again is reuse, and ends the session (RFC 6819 §5.2.2.3).
 */
#define SVC_SESSION_REUSE_GRACE_MS 10000

/*
 * Starts a session for `user_id` at `now_ms` (ms since the epoch) whose
 * first refresh token lives `refresh_ttl_secs`: stores the session and the
 * token (and purges up to 100 expired sessions). Writes the session id and
 * the refresh token's jti (SVC_AUTH_ID_LEN hex digits and a NUL each) into
 * out_session and out_jti. Returns 0, SVC_E_INTERNAL or DB errors.
 */
int svc_session_start(struct svc_db *db, const char *user_id, int64_t now_ms, int64_t refresh_ttl_secs,
		      char *out_session, char *out_jti);

/*
 * Exchanges the refresh token whose verified claims are `c` for a new one of
 * the same session: retires c->jti (only one of two racing calls does) and
 * stores a new jti, written into out_jti (SVC_AUTH_ID_LEN + 1 bytes); the
 * user's session generation goes into *out_gen. Refused with
 * SVC_E_UNAUTHORIZED and *out_why set to a fixed word: "unknown" (no such
 * token stored: from before sessions were stored, purged, or forged claims),
 * "revoked" (the session ended: logout, reuse), "password_changed" (the
 * user's generation moved on), "reused" (retired more than `grace_ms` ago:
 * the whole session is ended now, RFC 6819 §5.2.2.3). DB errors otherwise.
 * On Galera its reads wait for the writes of other nodes (svc_db_sync_wait):
 * a token issued through another host a moment ago is known.
 */
int svc_session_rotate(struct svc_db *db, const struct svc_auth_claims *c, int64_t now_ms, int64_t grace_ms,
		       int64_t refresh_ttl_secs, char *out_jti, int64_t *out_gen, const char **out_why);

/*
 * Ends session `session` of `user_id` (its refresh tokens and the access
 * tokens issued with them stop at once), noting `why` ("logout", "reuse";
 * at most 16 ASCII characters), then raises this host's revocation epoch
 * (svc_shm_epoch_bump), so no process here keeps a cached check of it.
 * Ending one that is unknown or already ended is not an error. Returns 0 or
 * DB errors.
 */
int svc_session_revoke(struct svc_db *db, const char *user_id, const char *session, const char *why, int64_t now_ms);

/*
 * The check of every request with an access token whose verified claims are
 * `c`: the user still exists, the token's generation is the user's
 * (users.session_gen: a password change or reset raises it, so it is the
 * account's "tokens valid after"), and its session (c->family) is not
 * ended; a token without a session (issued before they were stored) is
 * checked for the generation only. One primary-key read; on Galera, a miss
 * is read again with svc_db_sync_wait() (a session made through another host
 * a moment ago). Returns 0, SVC_E_UNAUTHORIZED or DB errors.
 */
int svc_session_check(struct svc_db *db, const struct svc_auth_claims *c);


/* ---- mailed links (lib/auth/auth_mail.c; docs/api.md "Password reset", "POST /auth/signup") ---- */

/* Random bytes of a mailed link's token (a password reset, a sign-up); the link carries them as 2 * this lowercase hex digits. */
#define SVC_AUTH_LINK_TOKEN_BYTES 32

/*
 * What the mail jobs below run with, borrowed from svc-worker for the job's run (its main() fills
 * it and names it in its job table): the database connection, the settings (SVC_APP_URL,
 * SVC_DOMAIN) and the auth settings (SMTP, SVC_MAIL_FROM, the links' lifetimes).
 */
struct svc_auth_job_ctx {
	struct svc_db *db;
	const struct svc_config *cfg;
	const struct svc_auth_config *auth;
};

/* The job kind that sends a password-reset link (svc-worker), payload {"email": "<normalised address>"}. */
#define SVC_JOB_RESET_MAIL "auth.reset_mail"

/*
 * The svc_job_fn (db/jobs.h) of SVC_JOB_RESET_MAIL; `ctx` is a struct svc_auth_job_ctx. Looks the
 * address up: no account, nothing (0); an account, a reset token is stored (its SHA-256, with
 * SVC_PASSWORD_RESET_TTL) and the link {app_url}/reset-password?token=<64 hex> is mailed through
 * SVC_SMTP_URL (no SVC_SMTP_URL: a warning, nothing sent, 0). Returns 0, SVC_E_VALIDATION (a payload
 * without email: not retried usefully), SVC_E_UNAVAILABLE (the mail was not sent: retried), DB
 * errors; `errmsg` (`errmax` bytes) says which. Running twice sends a second link.
 */
int svc_auth_job_reset_mail(void *ctx, const struct svc_job *job, char *errmsg, size_t errmax);

/* The job kind that mails a pending sign-up's link (svc-worker), payload {"pending": "<signup_pending id>"}. */
#define SVC_JOB_SIGNUP_MAIL "auth.signup_mail"

/*
 * The svc_job_fn (db/jobs.h) of SVC_JOB_SIGNUP_MAIL; `ctx` is a struct svc_auth_job_ctx. The
 * pending sign-up gone or expired: nothing (0). Its address has an account: the row is deleted and
 * the owner gets "someone tried to sign up with your address" (no link). Else a token (256 bits,
 * stored as its SHA-256 in signup_pending.token_hash) and the link {app_url}/verify?token=<64 hex>
 * are mailed. Returns 0, SVC_E_VALIDATION (a payload without "pending"), SVC_E_UNAVAILABLE (the
 * mail was not sent: retried), DB errors. Running twice mails a new link; the first stops working.
 */
int svc_auth_job_signup_mail(void *ctx, const struct svc_job *job, char *errmsg, size_t errmax);

/*
 * How long, in ms, a process may answer from its memory of a session check
 * that passed: the bound on how late a logout or a password change on
 * another host is seen (docs/security.md "Sessions"). On the host where it
 * happened it is seen at once (the revocation epoch).
 */
#define SVC_SESSION_CACHE_MS 1000
#define SVC_SESSION_CACHE_SLOTS 64 /* sessions one process remembers (direct-mapped by session id) */

/* One session check that passed (svc_session_check_cached()). */
struct svc_session_cache_entry {
	char family[SVC_AUTH_ID_LEN + 1]; /* the claims it passed for: session, user, generation */
	char user_id[37];
	int64_t gen;
	int64_t checked_ms;               /* monotonic ms (svc_mono_ms) when the check began; 0 = empty */
	uint64_t epoch;                   /* svc_shm_epoch() when the check began */
};

/* A responder process's memory of recent session checks; all zero is empty. Lives in its per-process context. */
struct svc_session_cache {
	struct svc_session_cache_entry e[SVC_SESSION_CACHE_SLOTS];
};

/*
 * svc_session_check() without the database when the same claims passed it
 * in this process less than SVC_SESSION_CACHE_MS before `now_ms` (a
 * monotonic clock, svc_mono_ms) and no revocation on this host came after
 * (svc_shm_epoch() unchanged). Otherwise checks in the database and, when
 * the check passes, remembers it in `cache`. A refusal is never remembered.
 * Returns as svc_session_check().
 */
int svc_session_check_cached(struct svc_db *db, struct svc_session_cache *cache, const struct svc_auth_claims *c,
			     int64_t now_ms);

/* ---- the host's shared memory (lib/auth/auth_shm.c) ---- */

/*
 * Maps this host's segment of shared memory for the svc instance of `cfg`
 * (POSIX shm "/svc-<version>-<uid>-<hash of the database settings>", mode 0600,
 * about 460 KiB), creating it when it is the first process: the revocation
 * epoch and the rate-limit counters of svc_ratelimit_hit_host(). Once per
 * process (again is a no-op); a forked child may attach itself or inherit
 * its parent's mapping. A segment of another user or readable by others is
 * refused. Returns 0, SVC_E_UNAVAILABLE (no shared memory: callers fall
 * back to MariaDB alone) or SVC_E_INTERNAL.
 */
int svc_shm_attach(const struct svc_config *cfg);

/* Unmaps the segment (the segment itself stays for the other processes). */
void svc_shm_detach(void);

/* The host's revocation epoch: it changes after every revocation made on this host; 0 when not attached. */
uint64_t svc_shm_epoch(void);

/*
 * Raises the revocation epoch, after a session ended or a user's generation
 * rose (a password change) has been written, so that every process on this
 * host checks sessions in the database again. No-op when not attached.
 */
void svc_shm_epoch_bump(void);

/* What svc_auth__shm_hit() counted: lib/auth internal. */
struct svc_auth__shm_count {
	uint32_t hits;      /* this host's hits in the window, this one included */
	uint32_t others;    /* the other hosts', as MariaDB said at the last flush */
	uint32_t flushed;   /* this host's hits that MariaDB has, once the caller adds `unflushed` */
	uint32_t unflushed; /* hits the caller is to add to MariaDB now (0: another process did lately) */
};

/*
 * lib/auth internal (svc_ratelimit_hit_host): counts one hit of bucket
 * `bucket` ("<rule>\n<key>", under 64 bytes) in the window starting at
 * `window` (s) of `window_secs`, and hands the caller the host's unflushed
 * hits when `flush_ms` passed since they last went to MariaDB.
 * SVC_E_UNAVAILABLE when not attached, the text is too long or no slot is
 * free near the bucket's.
 */
int svc_auth__shm_hit(const char *bucket, int64_t window, int64_t window_secs, int64_t now_ms, int64_t flush_ms,
		      struct svc_auth__shm_count *out);

/* lib/auth internal: records the other hosts' hits of `bucket` in window `window`, read from MariaDB. */
void svc_auth__shm_others(const char *bucket, int64_t window, uint32_t others);

#endif
