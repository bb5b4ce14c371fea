/* config.h: settings from the environment, then from the KEY=VALUE file named by SVC_CONFIG. */
#ifndef SVC_CONFIG_H
#define SVC_CONFIG_H

#include <stddef.h>
#include <stdint.h>

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
	uint64_t wsd_max_conns;        /* SVC_WSD_MAX_CONNECTIONS: sockets in all, default 10000 */
	uint64_t wsd_max_conns_per_user; /* SVC_WSD_MAX_CONNECTIONS_PER_USER, default 32 */
	uint64_t wsd_max_rooms_per_user; /* SVC_WSD_MAX_ROOMS_PER_USER, default 16 */
	uint64_t wsd_send_queue_max;   /* SVC_WSD_SEND_QUEUE_MAX: bytes queued to one slow client before it is dropped, default 16 MiB */
	uint64_t wsd_close_timeout_s;  /* SVC_WSD_CLOSE_TIMEOUT: seconds a closing socket may take to accept its close frame, default 10 */
	uint64_t wsd_save_delay_ms;    /* SVC_WSD_SAVE_DELAY_MS: quiet time before files are written, default 1000 */
	uint64_t wsd_commit_delay_ms;  /* SVC_WSD_COMMIT_DELAY_MS: quiet time after a save before files-changed, default 2000 */
	uint64_t wsd_compact_updates;  /* SVC_WSD_COMPACT_UPDATES: stored updates that trigger a snapshot, default 500 */
	uint64_t wsd_max_file_bytes;   /* SVC_WSD_MAX_FILE_BYTES: larger files stay out of the document, default 1 MiB */
	uint64_t wsd_awareness_timeout_ms; /* SVC_WSD_AWARENESS_TIMEOUT_MS: awareness states not renewed this long go, default 30000 */
	uint64_t wsd_awareness_max_bytes; /* SVC_WSD_AWARENESS_MAX_BYTES: larger awareness states are ignored, default 16384 */
	uint64_t wsd_max_awareness_per_room; /* SVC_WSD_MAX_AWARENESS_PER_ROOM: awareness entries (states and recent removals) a room holds, default 1024 */
	uint64_t wsd_keepalive_ms;     /* SVC_WSD_KEEPALIVE_MS: silence after which a client gets an empty awareness update, default 15000 */
	uint64_t wsd_recheck_secs;     /* SVC_WSD_RECHECK_SECONDS: an open socket's session and access are checked again this often, default 30 */
	uint64_t wsd_lease_secs;       /* SVC_WSD_LEASE_SECONDS: a room's lease (room_leases) lasts this long unrenewed, default 15 */
	uint64_t wsd_pack_min_bytes;   /* SVC_WSD_PACK_MIN_BYTES: cold text pieces this big are kept zstd-compressed, 0 = never, default 4096 */
	void *storage;                 /* private */
};

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

/*
 * Returns setting `key` as svc_config_load() reads it (the environment first,
 * then the SVC_CONFIG file), or `def` when it is set in neither. For modules
 * with their own settings (lib/auth/auth_config.c). The string lives as long as
 * `cfg` (or the environment).
 */
const char *svc_config_get(const struct svc_config *cfg, const char *key, const char *def);

#endif
