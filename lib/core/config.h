/* config.h: settings from the environment, then from the KEY=VALUE file named by SVC_CONFIG. */
#ifndef SVC_CONFIG_H
#define SVC_CONFIG_H

#include <stddef.h>
#include <stdint.h>

#define SVC_CONFIG_QUOTA_KINDS 4     /* PROJECTS, REPO_BYTES, SITE_BYTES, WORKSPACE_BYTES */
#define SVC_CONFIG_PLANS 3           /* FREE, PRO, BUSINESS */
#define SVC_CONFIG_OAUTH_PROVIDERS 2 /* GITHUB, GOOGLE (lib/auth's enum svc_oauth_id) */

/* One sign-in provider's settings, <PROVIDER>_* ("" = unset: lib/auth applies its defaults). */
struct svc_config_oauth {
	const char *client_id, *client_secret, *redirect_uri;
	const char *authorize_url, *token_url, *userinfo_url; /* SVC_OAUTH_<PROVIDER>_*_URL */
	const char *assistant_client_id, *assistant_client_secret, *assistant_redirect_uri;
};

/*
 * The settings every process of the suite reads (docs/configuration.md lists
 * them all). Strings point into storage owned by the config and stay valid
 * until svc_config_dispose(); a missing optional string is "" (never NULL).
 */
struct svc_config {
	const char *jwt_secret;        /* JWT_SECRET (required, at least 32 bytes) */
	size_t jwt_secret_len;
	const char *jwt_issuer;        /* JWT_ISSUER, default "svc" */
	int64_t access_ttl_secs;       /* JWT_ACCESS_TOKEN_EXPIRES_IN, default 15m */
	int64_t refresh_ttl_secs;      /* JWT_REFRESH_TOKEN_EXPIRES_IN, default 7d */
	const char *internal_secret;   /* INTERNAL_SECRET */
	const char *data_dir;          /* SVC_DATA_DIR (required, absolute) */
	const char *templates_dir;     /* SVC_TEMPLATES_DIR, default <datadir>/svc/templates */
	const char *schema_dir;        /* SVC_SCHEMA_DIR, default <datadir>/svc/schema (svc-migrate) */
	const char *base_url;          /* SVC_BASE_URL, default http://127.0.0.1:8080/api */
	const char *app_url;           /* SVC_APP_URL, default http://127.0.0.1:8080 */
	const char *ws_url;            /* SVC_WS_URL, default ws://127.0.0.1:8080 */
	const char *domain;            /* SVC_DOMAIN, default localhost */
	const char *http_port;         /* SVC_HTTP_PORT: the port published sites are linked with; default from app_url */
	const char *cors_origins;      /* SVC_CORS_ORIGINS: comma-separated; default app_url */
	const char *db_socket;         /* SVC_DB_SOCKET */
	const char *db_host;           /* SVC_DB_HOST, default localhost */
	unsigned db_port;              /* SVC_DB_PORT, default 3306 */
	const char *db_user;           /* SVC_DB_USER, default svc */
	const char *db_password;       /* SVC_DB_PASSWORD */
	const char *db_name;           /* SVC_DB_NAME, default svc */
	unsigned db_connect_timeout;   /* SVC_DB_CONNECT_TIMEOUT: seconds a connection may take, default 3 */
	unsigned db_timeout;           /* SVC_DB_TIMEOUT: seconds a read or write of a query may wait, default 5 */
	const char *db_hosts;          /* SVC_DB_HOSTS: "host:port,/path/to/socket,..." tried in order; "" = SVC_DB_SOCKET or SVC_DB_HOST */
	uint64_t db_tx_retries;        /* SVC_DB_TX_RETRIES: runs again of a transaction after a deadlock or certification failure, default 6 */
	const char *instance_id;       /* SVC_INSTANCE_ID: this process's name in shared tables; "" = hostname:pid */
	const char *ai_base_url;       /* SVC_AI_BASE_URL: "" = no instance provider */
	const char *ai_api_key;        /* SVC_AI_API_KEY */
	const char *ai_model;          /* SVC_AI_MODEL */
	const char *ai_protocol;       /* SVC_AI_PROTOCOL: openai (default) or anthropic */
	const char *chromium;          /* SVC_CHROMIUM: the Chromium of thumbnails (default "chromium"; "" turns it off) */
	const char *thumbnail_font;    /* SVC_THUMBNAIL_FONT: TrueType font of generated thumbnails */
	double ai_price_input;         /* SVC_AI_PRICE_INPUT: USD per million input tokens, default 0 */
	double ai_price_output;        /* SVC_AI_PRICE_OUTPUT: USD per million output tokens, default 0 */
	const char *ai_models;         /* SVC_AI_MODELS: comma-separated models a message may ask for; "" = any */
	const char *ai_prices;         /* SVC_AI_PRICES: "model=in:out,..." USD per million tokens (svc_config_model_price) */
	const char *ai_context_windows; /* SVC_AI_CONTEXT_WINDOWS: "model=tokens,..." (svc_config_model_context) */
	int64_t ai_context_default;    /* SVC_AI_CONTEXT_DEFAULT: tokens for a model not in the table; 0 (default) = no limit */
	int64_t ai_retry_max_secs;     /* SVC_AI_RETRY_MAX: longest Retry-After a 429 is waited for, default 10 s */
	int64_t ai_idle_secs;          /* SVC_AI_IDLE_TIMEOUT: seconds a provider may send nothing, default 120 */
	uint64_t ai_max_turns_user;    /* SVC_AI_MAX_TURNS_PER_USER: agent turns one user may run at once, default 4, 0 = no cap */
	uint64_t ai_max_turns_workspace; /* SVC_AI_MAX_TURNS_PER_WORKSPACE: at once in one workspace, default 16, 0 = no cap */
	double default_credit_usd;     /* SVC_DEFAULT_CREDIT_USD: a workspace's credit limit, default 10 */
	/* the agent's bounds of issue 29 (docs/agent.md "Spending caps", "Loop breaker", "Project instructions") */
	const char *ai_tool_mode;      /* SVC_AI_TOOL_MODE: "native" (default) or "text": how the instance's provider gets its tools */
	double agent_turn_max_usd;     /* SVC_AGENT_TURN_MAX_USD: what one turn may spend, USD; 0 (default) = no cap */
	unsigned agent_idle_steps;     /* SVC_AGENT_IDLE_STEPS: build-mode steps without a file change before the turn stops, default 6; 0 = never */
	uint64_t agent_instructions_max; /* SVC_AGENT_INSTRUCTIONS_MAX_BYTES: bytes of AGENTS.md and of the workspace's instructions, default 16 KiB */
	/* the agent looks at its work (issue 29, docs/agent.md "The preview check") */
	unsigned agent_check_secs;     /* SVC_AGENT_CHECK_SECS: seconds one preview check may take, default 20; 0 = no check */
	unsigned agent_check_build_secs; /* SVC_AGENT_CHECK_BUILD_SECS: seconds a package.json project's build before its check may take, default 120 */
	unsigned agent_fix_rounds;     /* SVC_AGENT_FIX_ROUNDS: fix rounds a turn may run on the check's errors, default 2 */
	int agent_check_images;        /* SVC_AGENT_CHECK_IMAGES: 1 (default): the screenshot goes to the model with the errors */
	const char *encryption_key;    /* ENCRYPTION_KEY: 64 hex digits (AES-256 instance key); "" = none (lib/auth/crypto.h) */
	const char *encryption_key_previous; /* ENCRYPTION_KEY_PREVIOUS: the key before a rotation, opens only; "" = none */
	int envelope_encryption;       /* SVC_ENVELOPE_ENCRYPTION: 1 = per-workspace data keys sealed by ENCRYPTION_KEY */
	int secure_cookies;            /* 1 when base_url is https */
	/* svc-wsd, the collaboration daemon (docs/configuration.md "svc-wsd") */
	const char *ws_host;           /* SVC_WS_HOST: address svc-wsd listens on, default 127.0.0.1 */
	unsigned ws_port;              /* SVC_WS_PORT: its port, default 8081 */
	const char *wsd_internal_url;  /* SVC_WSD_INTERNAL_URL: how the API reaches it; "" = http://127.0.0.1:<ws_port> */
	uint64_t wsd_max_message;      /* SVC_WSD_MAX_MESSAGE: largest WebSocket message, bytes, default 1 MiB */
	uint64_t wsd_max_rooms;        /* SVC_WSD_MAX_ROOMS: open rooms (projects), default 1000 */
	/* the apps' backend (lib/app), per project and environment; 0 = no limit */
	uint64_t app_max_records;      /* SVC_APP_MAX_RECORDS */
	uint64_t app_max_bytes;        /* SVC_APP_MAX_BYTES: of the records' fields */
	uint64_t app_max_users;        /* SVC_APP_MAX_USERS: end users */
	/* appfetch: the apps' server-side calls (POST /_svc/fetch/:name, lib/app/app_fetch.c) */
	uint64_t app_fetch_timeout_ms; /* SVC_APP_FETCH_TIMEOUT_MS: the whole call */
	uint64_t app_fetch_max_bytes;  /* SVC_APP_FETCH_MAX_BYTES: of the answer's body */
	int app_fetch_allow_http;      /* SVC_APP_FETCH_ALLOW_HTTP: 1 = http:// calls too (tests only) */
	uint64_t app_max_file_bytes;   /* SVC_APP_MAX_FILE_BYTES: of the files (/_svc/files) */
	unsigned app_file_max_mb;      /* SVC_APP_FILE_MAX_MB: the largest file one upload may be, MiB */
	uint64_t wsd_max_conns;        /* SVC_WSD_MAX_CONNECTIONS: sockets in all, default 10000 */
	uint64_t wsd_max_conns_per_user; /* SVC_WSD_MAX_CONNECTIONS_PER_USER, default 32 */
	uint64_t wsd_max_rooms_per_user; /* SVC_WSD_MAX_ROOMS_PER_USER, default 16 */
	uint64_t wsd_send_queue_max;   /* SVC_WSD_SEND_QUEUE_MAX: bytes queued to one slow client before it is dropped, default 16 MiB */
	uint64_t wsd_close_timeout_s;  /* SVC_WSD_CLOSE_TIMEOUT: seconds a closing socket may take to accept its close frame, default 10 */
	uint64_t wsd_save_delay_ms;    /* SVC_WSD_SAVE_DELAY_MS: quiet time before files are written, default 1000 */
	uint64_t wsd_commit_delay_ms;  /* SVC_WSD_COMMIT_DELAY_MS: quiet time after a save before files-changed, default 2000 */
	uint64_t wsd_compact_updates;  /* SVC_WSD_COMPACT_UPDATES: stored updates that trigger a snapshot, default 500 */
	uint64_t quota_file_bytes;     /* SVC_QUOTA_FILE_BYTES: the largest file a push may hold (docs/git.md), default 8 MiB */
	const char *git_http_backend;  /* SVC_GIT_HTTP_BACKEND: git-http-backend(1), the CGI svc-git runs */
	uint64_t git_timeout_secs;     /* SVC_GIT_TIMEOUT: longest one clone, fetch or push may take, default 600 */
	uint64_t wsd_max_file_bytes;   /* SVC_WSD_MAX_FILE_BYTES: larger files stay out of the document, default 1 MiB */
	uint64_t wsd_awareness_timeout_ms; /* SVC_WSD_AWARENESS_TIMEOUT_MS: awareness states not renewed this long go, default 30000 */
	uint64_t wsd_awareness_max_bytes; /* SVC_WSD_AWARENESS_MAX_BYTES: larger awareness states are ignored, default 16384 */
	uint64_t wsd_max_awareness_per_room; /* SVC_WSD_MAX_AWARENESS_PER_ROOM: awareness entries (states and recent removals) a room holds, default 1024 */
	uint64_t wsd_keepalive_ms;     /* SVC_WSD_KEEPALIVE_MS: silence after which a client gets an empty awareness update, default 15000 */
	uint64_t wsd_recheck_secs;     /* SVC_WSD_RECHECK_SECONDS: an open socket's session and access are checked again this often, default 30 */
	uint64_t wsd_lease_secs;       /* SVC_WSD_LEASE_SECONDS: a room's lease (room_leases) lasts this long unrenewed, default 15 */
	uint64_t wsd_pack_min_bytes;   /* SVC_WSD_PACK_MIN_BYTES: cold text pieces this big are kept zstd-compressed, 0 = never, default 4096 */
	/* the rest, one field per row of the settings table (lib/core/config_table.c has each one's doc) */
	const char *secrets_file;      /* SVC_SECRETS_FILE */
	int64_t preview_ttl_secs;      /* SVC_PREVIEW_TTL */
	const char *web_group;         /* SVC_WEB_GROUP */
	const char *ai_modes;          /* SVC_AI_MODES */
	int outbound_allow_private;    /* SVC_OUTBOUND_ALLOW_PRIVATE */
	const char *outbound_allow_nets; /* SVC_OUTBOUND_ALLOW_NETS */
	unsigned build_network, build_wall_secs, build_cpu_secs, build_memory_mb, build_procs, build_tmp_mb;
	unsigned build_uid, thumb_uid; /* SVC_BUILD_UID, SVC_THUMB_UID */
	const char *build_bwrap, *build_npm;
	unsigned build_cpu_percent, build_disk_mb; /* SVC_BUILD_CPU_PERCENT, SVC_BUILD_DISK_MB (issue 27) */
	const char *npm_registry, *build_cgroup;    /* SVC_NPM_REGISTRY, SVC_BUILD_CGROUP */
	unsigned npm_modules_max_mb, npm_cache_max_mb; /* SVC_NPM_MODULES_MAX_MB, SVC_NPM_CACHE_MAX_MB (deps) */
	/* dev servers (svc-devd, docs/operations.md "Dev servers") */
	const char *devd_host;         /* SVC_DEVD_HOST: where svc-devd listens, default 127.0.0.1 */
	unsigned devd_port;            /* SVC_DEVD_PORT: its port, default 8082 */
	unsigned devserver_max;        /* SVC_DEVSERVER_MAX: dev servers on a host at once, 0 none */
	unsigned devserver_idle_secs;  /* SVC_DEVSERVER_IDLE_SECS: without a viewer before one stops */
	unsigned devserver_start_secs; /* SVC_DEVSERVER_START_SECS: an install and start may take */
	unsigned deployments_kept, deployments_grace_secs;
	uint64_t integ_timeout_secs, integ_max_response_bytes, xray_stuck_secs;
	int integ_allow_http;
	uint64_t plan_domains_free, plan_domains_pro, plan_domains_business;
	const char *cname_target, *reserved_domains, *public_ipv4, *dns_server, *domain_check_ca;
	uint64_t domain_hold_days, domain_txt_proof, domain_verify_cooldown_secs, domain_https_port;
	uint64_t domain_check_timeout, domain_recheck_base, domain_recheck_max, domain_check_attempts;
	uint64_t domain_poll_interval;
	const char *sites_dir, *sites_reload_cmd;
	/* git-io (docs/git.md): SVC_IMPORT_MAX_MB, SVC_IMPORT_TIMEOUT_SECS, SVC_IMPORT_ZIP_ENTRIES, SVC_GIT_CA_FILE */
	uint64_t import_max_mb, import_timeout_secs, import_zip_entries;
	const char *git_ca_file;
	/* SVC_QUOTA_<KIND> and SVC_QUOTA_<KIND>_<PLAN>: [kind][0] the default, [kind][1 + plan] a plan's; -1 = unset */
	int64_t quota[SVC_CONFIG_QUOTA_KINDS][1 + SVC_CONFIG_PLANS];
	struct svc_config_oauth oauth[SVC_CONFIG_OAUTH_PROVIDERS];
	int64_t oauth_state_ttl_secs;  /* SVC_OAUTH_STATE_TTL */
	const char *smtp_url, *smtp_user, *smtp_password, *mail_from;
	int smtp_starttls;
	int64_t password_reset_ttl_secs, signup_verify_ttl_secs;
	const char *signup_verify;     /* SVC_SIGNUP_VERIFY: auto, on or off */
	uint64_t api_tokens_max;
	const char *auth_log, *trusted_proxies, *rate_limit_exempt;
	const char *rate_global, *rate_login_ip, *rate_login_account, *rate_login_account_max, *rate_login_slow;
	const char *rate_signup_ip, *rate_signup_account, *rate_verify_ip, *rate_refresh_ip, *rate_reset_ip;
	const char *rate_reset_account, *rate_oauth_ip; /* SVC_RATE_LIMIT_*: "N/DURATION" or 0 (lib/auth checks them) */
	void *storage;                 /* private */
};

/*
 * The settings table (lib/core/config_table.c): one row per setting, which
 * svc_config_load() walks to fill struct svc_config, svc-admin check prints,
 * and a unit test compares with docs/configuration.md both ways.
 */
enum svc_setting_type {
	SVC_SET_STR,         /* text (const char *); min..max: its length in bytes (max 0: any). Set but empty is "" */
	SVC_SET_PATH,        /* an absolute path, or "" (const char *) */
	SVC_SET_CHOICE,      /* one of the words of `unit`, separated by '|' (const char *) */
	SVC_SET_BOOL,        /* 0 or 1 (int) */
	SVC_SET_UINT,        /* a whole number min..max (unsigned) */
	SVC_SET_U64,         /* a whole number min..max (uint64_t) */
	SVC_SET_I64,         /* a whole number min..max (int64_t); empty or unset with no default: -1 */
	SVC_SET_DURATION,    /* "900", "900s", "15m", "12h", "7d": seconds min..max (int64_t) */
	SVC_SET_PRICE,       /* a decimal number 0..max (double) */
	SVC_SET_PRICE_TABLE, /* "model=in:out,..." of prices (const char *) */
	SVC_SET_TOKEN_TABLE, /* "model=tokens,..." (const char *) */
	SVC_SET__MAX
};

#define SVC_SET_REQUIRED 1u /* unset or empty stops start-up */
#define SVC_SET_LENIENT 2u  /* a malformed value is logged (svc-admin check: a warning) and the default used */
#define SVC_SET_SECRET 4u   /* never printed (svc-admin check says "set") */

/* One row of the settings table. */
struct svc_setting {
	const char *name;           /* exactly as docs/configuration.md (and the spec) name it */
	enum svc_setting_type type;
	size_t offset;              /* of its field in struct svc_config */
	const char *def;            /* the default, as text; "" = none */
	const char *def_from;       /* NULL, or the (earlier) setting whose value is the default */
	uint64_t min, max;          /* bounds of a number; of a text's length */
	const char *unit;           /* what a number counts, or the choices of SVC_SET_CHOICE ("auto|on|off") */
	unsigned flags;             /* SVC_SET_* */
	const char *doc;            /* one line; docs/configuration.md has the whole story */
};

/* The table: returns its rows and writes their number into *out_count. */
const struct svc_setting *svc_config_settings(size_t *out_count);

/* The row of setting `name`, or NULL when there is none. */
const struct svc_setting *svc_config_setting(const char *name);

/* Returns 1 when setting `name` was given (environment or file) with a non-empty value, else 0. */
int svc_config_is_set(const struct svc_config *cfg, const char *name);

/*
 * The `i`-th complaint about a malformed SVC_SET_LENIENT setting of the last
 * load ("SVC_BUILD_PROCS=lots is not a whole number from 4 to 1000000; using
 * 256"), or NULL past the last. svc_config_load() logs them too.
 */
const char *svc_config_warning(const struct svc_config *cfg, size_t i);

/*
 * Writes the value setting `s` has in `cfg` as text into `out` (`max`
 * bytes): a number, a string, or "(set)"/"(not set)" for a secret.
 */
void svc_config_format(const struct svc_config *cfg, const struct svc_setting *s, char *out, size_t max);

/*
 * Loads the settings: each name from the environment first, then from the
 * file named by SVC_CONFIG (or SVC_SYSCONFDIR/svc/svc.conf when that exists).
 * File syntax: KEY=VALUE lines, '#' comments, blank lines, optional double
 * quotes around the value; at most 64 KiB. On a missing required setting or
 * a malformed value, returns SVC_E_INTERNAL and writes a message naming the
 * setting into errbuf (errmax bytes). On success the caller owns `out` and
 * frees it with svc_config_dispose(). Every svc program calls it first, so it
 * also sets the process's umask to 027: what svc or a library it uses
 * (libgit2's repositories, tar in a restore) makes is never open to other
 * local accounts (docs/operations.md "Files and their modes").
 */
int svc_config_load(struct svc_config *out, char *errbuf, size_t errmax);

/*
 * Fills `out` with every setting's default from the table, reading neither
 * the environment nor a file (the required ones are then ""): for tests and
 * tools that build a configuration by hand. Allocates nothing; needs no
 * svc_config_dispose().
 */
void svc_config_defaults(struct svc_config *out);

/* Frees what svc_config_load() allocated. */
void svc_config_dispose(struct svc_config *cfg);

/*
 * The price of `model` from SVC_AI_PRICES ("gpt-4o=2.5:10,claude=3:15": USD
 * per million input and output tokens). A model not in the table costs 0,
 * except the instance model SVC_AI_MODEL, which falls back to
 * SVC_AI_PRICE_INPUT / SVC_AI_PRICE_OUTPUT. Writes both prices; never fails.
 */
void svc_config_model_price(const struct svc_config *cfg, const char *model, double *out_in, double *out_out);

/* Returns 1 when `model` (NULL allowed: 0) has an entry in SVC_AI_PRICES, else 0. */
int svc_config_model_priced(const struct svc_config *cfg, const char *model);

/*
 * The context window of `model` in tokens from SVC_AI_CONTEXT_WINDOWS
 * ("gpt-4o=128000,small=8192"), else SVC_AI_CONTEXT_DEFAULT; 0 = unlimited.
 */
int64_t svc_config_model_context(const struct svc_config *cfg, const char *model);

/* Returns 1 when `item` is one of the comma-separated entries of `list` (spaces around entries ignored), else 0. */
int svc_config_list_has(const char *list, const char *item);

/*
 * Parses a duration "900", "900s", "15m", "12h", "7d" into seconds (at most
 * ten years). Returns 0 or SVC_E_VALIDATION.
 */
int svc_config_parse_duration(const char *s, int64_t *out_secs);


#endif
