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
	const char *ai_base_url;       /* SVC_AI_BASE_URL: "" = no instance provider */
	const char *ai_api_key;        /* SVC_AI_API_KEY */
	const char *ai_model;          /* SVC_AI_MODEL */
	const char *ai_protocol;       /* SVC_AI_PROTOCOL: openai (default) or anthropic */
	double ai_price_input;         /* SVC_AI_PRICE_INPUT: USD per million input tokens, default 0 */
	double ai_price_output;        /* SVC_AI_PRICE_OUTPUT: USD per million output tokens, default 0 */
	int secure_cookies;            /* 1 when base_url is https */
	void *storage;                 /* private */
};

/*
 * Loads the settings: each name from the environment first, then from the
 * file named by SVC_CONFIG (or SVC_SYSCONFDIR/svc/svc.conf when that exists).
 * File syntax: KEY=VALUE lines, '#' comments, blank lines, optional double
 * quotes around the value; at most 64 KiB. On a missing required setting or
 * a malformed value, returns SVC_E_INTERNAL and writes a message naming the
 * setting into errbuf (errmax bytes). On success the caller owns `out` and
 * frees it with svc_config_dispose().
 */
int svc_config_load(struct svc_config *out, char *errbuf, size_t errmax);

/* Frees what svc_config_load() allocated. */
void svc_config_dispose(struct svc_config *cfg);

/*
 * Parses a duration "900", "900s", "15m", "12h", "7d" into seconds (at most
 * ten years). Returns 0 or SVC_E_VALIDATION.
 */
int svc_config_parse_duration(const char *s, int64_t *out_secs);

#endif
