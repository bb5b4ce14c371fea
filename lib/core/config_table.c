/* config_table.c: the settings table: every setting's name, type, default, bounds, unit and doc (docs/configuration.md). */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "core/config.h"

#define F(field) offsetof(struct svc_config, field)
#define ROW(name, type, field, def, min, max, unit, flags, doc) { name, type, F(field), def, NULL, min, max, unit, flags, doc }
#define STR(name, field, def, doc) ROW(name, SVC_SET_STR, field, def, 0, 0, NULL, 0, doc)
#define SECRET(name, field, doc) ROW(name, SVC_SET_STR, field, "", 0, 0, NULL, SVC_SET_SECRET, doc)
/* a whole number that stops start-up when malformed, and one that is logged and replaced by its default */
#define U64(name, field, def, min, max, unit, doc) ROW(name, SVC_SET_U64, field, def, min, max, unit, 0, doc)
#define SOFT(name, type, field, def, min, max, unit, doc) ROW(name, type, field, def, min, max, unit, SVC_SET_LENIENT, doc)
#define YEARS10 (10ULL * 366 * 86400)

#define OAUTH(P, i)                                                                                                  \
	STR(P "_CLIENT_ID", oauth[i].client_id, "", "the OAuth client id; unset: sign-in with it is 404"),           \
	SECRET(P "_CLIENT_SECRET", oauth[i].client_secret, "its secret; required when the id is set"),              \
	STR(P "_REDIRECT_URI", oauth[i].redirect_uri, "", "the redirect address; unset: {base_url}/auth/<p>/callback"), \
	STR("SVC_OAUTH_" P "_AUTHORIZE_URL", oauth[i].authorize_url, "", "the authorize endpoint; unset: the provider's"), \
	STR("SVC_OAUTH_" P "_TOKEN_URL", oauth[i].token_url, "", "the token endpoint; unset: the provider's"),         \
	STR("SVC_OAUTH_" P "_USERINFO_URL", oauth[i].userinfo_url, "", "the user endpoint; unset: the provider's"),    \
	STR(P "_ASSISTANT_CLIENT_ID", oauth[i].assistant_client_id, "", "the assistant-token client; unset: the sign-in one"), \
	SECRET(P "_ASSISTANT_CLIENT_SECRET", oauth[i].assistant_client_secret, "its secret; unset: the sign-in one"),   \
	STR(P "_ASSISTANT_REDIRECT_URI", oauth[i].assistant_redirect_uri, "",                                        \
	    "its redirect address; unset: {base_url}/auth/<p>/assistant/callback")

#define QUOTA(K, k, def, unit, doc)                                                                                  \
	SOFT("SVC_QUOTA_" K, SVC_SET_I64, quota[k][0], def, 0, INT64_MAX, unit, doc),                                \
	SOFT("SVC_QUOTA_" K "_FREE", SVC_SET_I64, quota[k][1], "", 0, INT64_MAX, unit, "the same for the free plan"), \
	SOFT("SVC_QUOTA_" K "_PRO", SVC_SET_I64, quota[k][2], "", 0, INT64_MAX, unit, "the same for the pro plan"),   \
	SOFT("SVC_QUOTA_" K "_BUSINESS", SVC_SET_I64, quota[k][3], "", 0, INT64_MAX, unit, "the same for the business plan")

#define RATE(name, field, def, doc) ROW(name, SVC_SET_STR, field, def, 1, 32, "N/DURATION or 0", 0, doc)

/* In load order: a row with def_from comes after the row it names. */
static const struct svc_setting table[] = {
	/* the second settings file (read before the others; listed so svc-admin check shows it) */
	STR("SVC_SECRETS_FILE", secrets_file, "", "a second KEY=VALUE file, read after SVC_CONFIG; its settings win"),
	/* secrets */
	ROW("JWT_SECRET", SVC_SET_STR, jwt_secret, "", 32, 0, "bytes", SVC_SET_REQUIRED | SVC_SET_SECRET,
	    "HS256 key of the session tokens; at least 32 bytes"),
	STR("JWT_ISSUER", jwt_issuer, "svc", "iss claim written into and required of every token"),
	ROW("JWT_ACCESS_TOKEN_EXPIRES_IN", SVC_SET_DURATION, access_ttl_secs, "15m", 1, YEARS10, "seconds", 0,
	    "access-token lifetime"),
	ROW("JWT_REFRESH_TOKEN_EXPIRES_IN", SVC_SET_DURATION, refresh_ttl_secs, "7d", 1, YEARS10, "seconds", 0,
	    "refresh-token lifetime"),
	SECRET("INTERNAL_SECRET", internal_secret, "HMAC key of the internal calls between svc-wsd and the API"),
	SECRET("ENCRYPTION_KEY", encryption_key, "instance key (64 hex digits) that seals stored credentials"),
	SECRET("ENCRYPTION_KEY_PREVIOUS", encryption_key_previous, "during a key rotation: the key before"),
	ROW("SVC_ENVELOPE_ENCRYPTION", SVC_SET_BOOL, envelope_encryption, "0", 0, 1, NULL, 0,
	    "1: per-workspace data keys sealed by ENCRYPTION_KEY"),
	/* addresses */
	STR("SVC_BASE_URL", base_url, "http://127.0.0.1:8080/api", "where the API is reached (base_url)"),
	STR("SVC_APP_URL", app_url, "http://127.0.0.1:8080", "the web application (app_url)"),
	STR("SVC_WS_URL", ws_url, "ws://127.0.0.1:8080", "the collaboration socket (ws_url)"),
	STR("SVC_DOMAIN", domain, "localhost", "published sites answer to <slug>.SVC_DOMAIN"),
	STR("SVC_HTTP_PORT", http_port, "", "the port published-site URLs are written with; unset: app_url's"),
	{ "SVC_CORS_ORIGINS", SVC_SET_STR, F(cors_origins), "", "SVC_APP_URL", 0, 0, NULL, 0,
	  "comma-separated origins that get CORS headers with credentials" },
	ROW("SVC_PREVIEW_TTL", SVC_SET_DURATION, preview_ttl_secs, "30m", 60, 86400, "seconds", 0,
	    "how long a preview URL works"),
	/* storage */
	ROW("SVC_DATA_DIR", SVC_SET_PATH, data_dir, "", 0, 0, NULL, SVC_SET_REQUIRED, "project files and published sites"),
	STR("SVC_WEB_GROUP", web_group, "www-data", "the web server's group, of what it reads; empty: none"),
	STR("SVC_TEMPLATES_DIR", templates_dir, SVC_DATADIR "/svc/templates", "project templates"),
	STR("SVC_SCHEMA_DIR", schema_dir, SVC_DATADIR "/svc/schema", "migrations for svc-migrate"),
	STR("SVC_DB_SOCKET", db_socket, "", "MariaDB unix socket; when set, host and port are not used"),
	STR("SVC_DB_HOST", db_host, "localhost", "MariaDB host"),
	ROW("SVC_DB_PORT", SVC_SET_UINT, db_port, "3306", 0, 65535, "port", 0, "MariaDB port"),
	STR("SVC_DB_USER", db_user, "svc", "MariaDB user"),
	SECRET("SVC_DB_PASSWORD", db_password, "MariaDB password"),
	STR("SVC_DB_NAME", db_name, "svc", "database"),
	ROW("SVC_DB_CONNECT_TIMEOUT", SVC_SET_UINT, db_connect_timeout, "3", 1, 600, "seconds", 0,
	    "seconds a connection to MariaDB may take"),
	ROW("SVC_DB_TIMEOUT", SVC_SET_UINT, db_timeout, "5", 1, 3600, "seconds", 0,
	    "seconds each read or write of a query may wait"),
	STR("SVC_DB_HOSTS", db_hosts, "", "the MariaDB servers in order, comma-separated"),
	U64("SVC_DB_TX_RETRIES", db_tx_retries, "6", 0, 20, "times", "runs again of a transaction after a deadlock"),
	ROW("SVC_INSTANCE_ID", SVC_SET_STR, instance_id, "", 0, 128, "bytes", 0, "this process's name in shared tables"),
	/* the model */
	STR("SVC_AI_BASE_URL", ai_base_url, "", "provider base URL; empty: no instance provider"),
	SECRET("SVC_AI_API_KEY", ai_api_key, "the provider's API key"),
	STR("SVC_AI_MODEL", ai_model, "", "model name sent with every request"),
	ROW("SVC_AI_PROTOCOL", SVC_SET_CHOICE, ai_protocol, "openai", 0, 0, "openai|anthropic", 0, "the provider's protocol"),
	ROW("SVC_AI_PRICE_INPUT", SVC_SET_PRICE, ai_price_input, "0", 0, 1000000, "USD per million tokens", 0,
	    "price of input tokens"),
	ROW("SVC_AI_PRICE_OUTPUT", SVC_SET_PRICE, ai_price_output, "0", 0, 1000000, "USD per million tokens", 0,
	    "price of output tokens"),
	STR("SVC_AI_MODELS", ai_models, "", "comma-separated models a message may ask for"),
	ROW("SVC_AI_PRICES", SVC_SET_PRICE_TABLE, ai_prices, "", 0, 0, "model=input:output,model2=input:output", 0,
	    "prices per model, USD per million input/output tokens"),
	ROW("SVC_AI_CONTEXT_WINDOWS", SVC_SET_TOKEN_TABLE, ai_context_windows, "", 0, 0, "model=tokens,model2=tokens", 0,
	    "context windows per model"),
	ROW("SVC_AI_CONTEXT_DEFAULT", SVC_SET_I64, ai_context_default, "0", 0, 1000000000, "tokens", 0,
	    "context window of a model not in the table; 0: never compact"),
	U64("SVC_AI_MAX_TURNS_PER_USER", ai_max_turns_user, "4", 0, 100000, "turns", "agent turns one user may run at once"),
	U64("SVC_AI_MAX_TURNS_PER_WORKSPACE", ai_max_turns_workspace, "16", 0, 100000, "turns",
	    "agent turns one workspace may run at once"),
	ROW("SVC_AI_IDLE_TIMEOUT", SVC_SET_I64, ai_idle_secs, "120", 1, 3600, "seconds", 0,
	    "seconds a model provider may send nothing"),
	ROW("SVC_AI_RETRY_MAX", SVC_SET_I64, ai_retry_max_secs, "10", 0, 600, "seconds", 0,
	    "longest Retry-After a 429 is waited out"),
	ROW("SVC_DEFAULT_CREDIT_USD", SVC_SET_PRICE, default_credit_usd, "10", 0, 1000000, "USD", 0,
	    "a workspace's credit limit"),
	/* the agent's caps, loop breaker and instructions (issue 29) */
	ROW("SVC_AI_TOOL_MODE", SVC_SET_CHOICE, ai_tool_mode, "native", 0, 0, "native|text", 0,
	    "how the instance's provider gets its tools: native tool calls or markup in the text"),
	ROW("SVC_AGENT_TURN_MAX_USD", SVC_SET_PRICE, agent_turn_max_usd, "0", 0, 1000000, "USD", 0,
	    "what one agent turn may spend; 0: no cap"),
	SOFT("SVC_AGENT_IDLE_STEPS", SVC_SET_UINT, agent_idle_steps, "6", 0, 1000, "steps",
	     "build-mode steps without a file change before a turn stops; 0: never"),
	SOFT("SVC_AGENT_INSTRUCTIONS_MAX_BYTES", SVC_SET_U64, agent_instructions_max, "16384", 256, 1048576, "bytes",
	     "bytes of AGENTS.md and of a workspace's instructions in the system prompt"),
	/* the agent looks at its work: the preview check and its fix rounds (issue 29) */
	SOFT("SVC_AGENT_CHECK_SECS", SVC_SET_UINT, agent_check_secs, "20", 0, 300, "seconds",
	     "seconds a preview check after a build turn may take; 0: no check"),
	SOFT("SVC_AGENT_CHECK_BUILD_SECS", SVC_SET_UINT, agent_check_build_secs, "120", 1, 3600, "seconds",
	     "seconds the build of a package.json project before its preview check may take, install included"),
	SOFT("SVC_AGENT_FIX_ROUNDS", SVC_SET_UINT, agent_fix_rounds, "2", 0, 10, "rounds",
	     "rounds a turn may spend fixing the errors its preview check found"),
	SOFT("SVC_AGENT_CHECK_IMAGES", SVC_SET_BOOL, agent_check_images, "1", 0, 1, NULL,
	     "1: the check's screenshot goes to the model with its errors"),
	STR("SVC_AI_MODES", ai_modes, "", "custom chat modes, name=read|build[:prompt file];..."),
	SOFT("SVC_OUTBOUND_ALLOW_PRIVATE", SVC_SET_BOOL, outbound_allow_private, "0", 0, 1, NULL,
	     "1: names users choose may also reach private ranges"),
	STR("SVC_OUTBOUND_ALLOW_NETS", outbound_allow_nets, "", "networks such names may reach whatever their kind"),
	/* thumbnails */
	STR("SVC_CHROMIUM", chromium, "chromium", "the headless Chromium of thumbnails; empty: none"),
	STR("SVC_THUMBNAIL_FONT", thumbnail_font, "/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf",
	    "the TrueType font of generated thumbnails"),
	/* builds and publishing */
	SOFT("SVC_BUILD_NETWORK", SVC_SET_UINT, build_network, "1", 0, 1, NULL, "1: the install step has the network"),
	SOFT("SVC_BUILD_WALL_SECS", SVC_SET_UINT, build_wall_secs, "600", 1, 86400, "seconds", "wall-clock limit of a build"),
	SOFT("SVC_BUILD_CPU_SECS", SVC_SET_UINT, build_cpu_secs, "300", 1, 86400, "seconds", "CPU seconds of each process"),
	SOFT("SVC_BUILD_MEMORY_MB", SVC_SET_UINT, build_memory_mb, "2048", 64, 1048576, "MiB",
	     "memory of a sandbox's processes together (its cgroup)"),
	SOFT("SVC_BUILD_PROCS", SVC_SET_UINT, build_procs, "256", 4, 1000000, "processes",
	     "processes and threads of a sandbox at once (pids.max)"),
	/* issue 27: cgroups, disk bound, registry-only network */
	SOFT("SVC_BUILD_CPU_PERCENT", SVC_SET_UINT, build_cpu_percent, "100", 1, 10000, "percent",
	     "CPU of a sandbox, percent of one core"),
	SOFT("SVC_BUILD_DISK_MB", SVC_SET_UINT, build_disk_mb, "2048", 1, 1048576, "MiB",
	     "what a build may write (its tmpfs and RLIMIT_FSIZE)"),
	STR("SVC_NPM_REGISTRY", npm_registry, "https://registry.npmjs.org/", "the only registry installs reach"),
	STR("SVC_BUILD_CGROUP", build_cgroup, "", "the parent cgroup of sandboxes; empty: svc's own"),
	SOFT("SVC_BUILD_TMP_MB", SVC_SET_UINT, build_tmp_mb, "256", 1, 1048576, "MiB", "size of the sandbox's /tmp"),
	SOFT("SVC_BUILD_UID", SVC_SET_UINT, build_uid, "65534", 1, 4294967294u, "uid", "the user builds run as under root"),
	SOFT("SVC_THUMB_UID", SVC_SET_UINT, thumb_uid, "65533", 1, 4294967294u, "uid",
	     "the user the thumbnails' Chromium runs as under root"),
	STR("SVC_BUILD_BWRAP", build_bwrap, "/usr/bin/bwrap", "bubblewrap"),
	STR("SVC_BUILD_NPM", build_npm, "/usr/bin/npm", "npm as the sandbox sees it"),
	/* deps: node_modules reused, npm's cache shared (lib/project/deps.h) */
	SOFT("SVC_NPM_MODULES_MAX_MB", SVC_SET_UINT, npm_modules_max_mb, "4096", 0, 16777216, "MiB",
	     "installed node_modules kept; 0: none"),
	SOFT("SVC_NPM_CACHE_MAX_MB", SVC_SET_UINT, npm_cache_max_mb, "4096", 16, 16777216, "MiB", "the shared npm cache"),
	/* dev servers (svc-devd) */
	STR("SVC_DEVD_HOST", devd_host, "127.0.0.1", "address svc-devd listens on"),
	ROW("SVC_DEVD_PORT", SVC_SET_UINT, devd_port, "8082", 1, 65535, "port", 0, "svc-devd's port"),
	SOFT("SVC_DEVSERVER_MAX", SVC_SET_UINT, devserver_max, "8", 0, 1000, "dev servers",
	     "dev servers on a host at once; 0: previews are builds only"),
	SOFT("SVC_DEVSERVER_IDLE_SECS", SVC_SET_UINT, devserver_idle_secs, "300", 1, 86400, "seconds",
	     "seconds without a viewer before a dev server stops"),
	SOFT("SVC_DEVSERVER_START_SECS", SVC_SET_UINT, devserver_start_secs, "300", 5, 3600, "seconds",
	     "seconds a dev server's install and start may take"),
	SOFT("SVC_DEPLOYMENTS_KEPT", SVC_SET_UINT, deployments_kept, "5", 1, 100, "sites", "kept sites per project"),
	SOFT("SVC_DEPLOYMENTS_GRACE_SECS", SVC_SET_UINT, deployments_grace_secs, "60", 0, 86400, "seconds",
	     "seconds a pruned site stays on disk"),
	/* integrations */
	SOFT("SVC_INTEG_TIMEOUT_SECS", SVC_SET_U64, integ_timeout_secs, "20", 1, 600, "seconds",
	     "seconds one integration call may take"),
	SOFT("SVC_INTEG_MAX_RESPONSE_BYTES", SVC_SET_U64, integ_max_response_bytes, "1048576", 1, 64u << 20, "bytes",
	     "bytes of an integration's answer"),
	SOFT("SVC_INTEG_ALLOW_HTTP", SVC_SET_BOOL, integ_allow_http, "0", 0, 1, NULL, "1: integration calls may use http://"),
	SOFT("SVC_XRAY_STUCK_SECONDS", SVC_SET_U64, xray_stuck_secs, "30", 0, 86400, "seconds",
	     "an integration call running this long is stuck"),
	/* plans and custom domains */
	SOFT("SVC_PLAN_DOMAINS_FREE", SVC_SET_U64, plan_domains_free, "0", 0, 100000, "domains", "custom domains of free"),
	SOFT("SVC_PLAN_DOMAINS_PRO", SVC_SET_U64, plan_domains_pro, "1", 0, 100000, "domains", "custom domains of pro"),
	SOFT("SVC_PLAN_DOMAINS_BUSINESS", SVC_SET_U64, plan_domains_business, "5", 0, 100000, "domains",
	     "custom domains of business"),
	STR("SVC_CNAME_TARGET", cname_target, "", "the name a custom domain's CNAME must point at; empty: SVC_DOMAIN"),
	STR("SVC_RESERVED_DOMAINS", reserved_domains, "", "names no custom domain may be"),
	SOFT("SVC_DOMAIN_HOLD_DAYS", SVC_SET_U64, domain_hold_days, "7", 0, 3650, "days", "days a removed domain stays held"),
	SOFT("SVC_DOMAIN_TXT_PROOF", SVC_SET_U64, domain_txt_proof, "0", 0, 1, NULL, "1: the DNS check asks for a TXT record"),
	SOFT("SVC_DOMAIN_VERIFY_COOLDOWN_SECS", SVC_SET_U64, domain_verify_cooldown_secs, "15", 0, 86400, "seconds",
	     "seconds between two checks asked for by hand"),
	STR("SVC_PUBLIC_IPV4", public_ipv4, "", "the server's public IPv4 address"),
	STR("SVC_DNS_SERVER", dns_server, "", "host:port of the resolver the DNS check asks"),
	SOFT("SVC_DOMAIN_HTTPS_PORT", SVC_SET_U64, domain_https_port, "443", 0, 65535, "port", "port of the HTTPS check"),
	STR("SVC_DOMAIN_CHECK_CA", domain_check_ca, "", "a CA bundle the HTTPS check verifies with"),
	/* git-io: import, mirror (docs/git.md) */
	SOFT("SVC_IMPORT_MAX_MB", SVC_SET_U64, import_max_mb, "500", 1, 1000000, "MiB",
	     "the most a project imported from Git or a ZIP may take"),
	SOFT("SVC_IMPORT_TIMEOUT_SECS", SVC_SET_U64, import_timeout_secs, "600", 1, 86400, "seconds",
	     "seconds a Git import, push or pull may take"),
	SOFT("SVC_IMPORT_ZIP_ENTRIES", SVC_SET_U64, import_zip_entries, "10000", 1, 1000000, "entries",
	     "entries a ZIP imported may hold"),
	STR("SVC_GIT_CA_FILE", git_ca_file, "", "a CA bundle Git remotes' certificates are verified with"),
	SOFT("SVC_DOMAIN_CHECK_TIMEOUT", SVC_SET_U64, domain_check_timeout, "10", 0, 600, "seconds",
	     "seconds one check may take"),
	SOFT("SVC_DOMAIN_RECHECK_BASE", SVC_SET_U64, domain_recheck_base, "60", 0, 86400, "seconds",
	     "first delay before a pending domain is checked again"),
	SOFT("SVC_DOMAIN_RECHECK_MAX", SVC_SET_U64, domain_recheck_max, "3600", 0, 7 * 86400, "seconds", "the longest delay"),
	SOFT("SVC_DOMAIN_CHECK_ATTEMPTS", SVC_SET_U64, domain_check_attempts, "48", 0, 10000, "checks",
	     "failed checks of one stage before error"),
	SOFT("SVC_DOMAIN_POLL_INTERVAL", SVC_SET_U64, domain_poll_interval, "10", 1, 86400, "seconds",
	     "seconds between svc-worker's looks for domains due"),
	STR("SVC_SITES_DIR", sites_dir, "", "where the web servers' includes are written; empty: SVC_DATA_DIR/sites"),
	STR("SVC_SITES_RELOAD_CMD", sites_reload_cmd, "", "a command that reloads the web server"),
	/* quotas */
	QUOTA("PROJECTS", 0, "100", "projects", "projects one workspace may have"),
	QUOTA("REPO_BYTES", 1, "536870912", "bytes", "bytes one project's directory may hold"),
	QUOTA("SITE_BYTES", 2, "268435456", "bytes", "bytes one published site or preview may hold"),
	QUOTA("WORKSPACE_BYTES", 3, "2147483648", "bytes", "bytes all of a workspace's projects may hold"),
	/* the apps' backend (lib/app, docs/app-backend.md "Quotas"), per project and environment */
	SOFT("SVC_APP_MAX_RECORDS", SVC_SET_U64, app_max_records, "100000", 0, UINT64_MAX, "records",
	     "records of one project's environment"),
	SOFT("SVC_APP_MAX_BYTES", SVC_SET_U64, app_max_bytes, "268435456", 0, UINT64_MAX, "bytes",
	     "bytes of the records' fields of one project's environment"),
	SOFT("SVC_APP_MAX_USERS", SVC_SET_U64, app_max_users, "10000", 0, UINT64_MAX, "users",
	     "end users of one project's environment"),
	/* appfetch: the apps' server-side calls (docs/app-backend.md "Secrets and calls") */
	SOFT("SVC_APP_FETCH_TIMEOUT_MS", SVC_SET_U64, app_fetch_timeout_ms, "10000", 100, 120000, "milliseconds",
	     "milliseconds one call of /_svc/fetch may take"),
	SOFT("SVC_APP_FETCH_MAX_BYTES", SVC_SET_U64, app_fetch_max_bytes, "1048576", 1, 16u << 20, "bytes",
	     "bytes of the answer's body a call of /_svc/fetch takes"),
	SOFT("SVC_APP_FETCH_ALLOW_HTTP", SVC_SET_BOOL, app_fetch_allow_http, "0", 0, 1, NULL,
	     "1: /_svc/fetch may call http:// URLs"),
	/* the apps' files (lib/app/app_files.c, docs/app-backend.md "Files") */
	SOFT("SVC_APP_MAX_FILE_BYTES", SVC_SET_U64, app_max_file_bytes, "1073741824", 0, UINT64_MAX, "bytes",
	     "bytes of the files of one project's environment"),
	SOFT("SVC_APP_FILE_MAX_MB", SVC_SET_UINT, app_file_max_mb, "10", 1, 16, "MiB",
	     "the largest file one upload to /_svc/files may be"),
	/* Git over smart HTTP (svc-git, docs/git.md) */
	U64("SVC_QUOTA_FILE_BYTES", quota_file_bytes, "8388608", 1, INT64_MAX, "bytes", "largest file a push may hold"),
	STR("SVC_GIT_HTTP_BACKEND", git_http_backend, "/usr/lib/git-core/git-http-backend", "Git's smart HTTP CGI program"),
	U64("SVC_GIT_TIMEOUT", git_timeout_secs, "600", 1, 86400, "seconds", "longest one clone, fetch or push may take"),
	/* svc-wsd */
	STR("SVC_WS_HOST", ws_host, "127.0.0.1", "address svc-wsd listens on"),
	ROW("SVC_WS_PORT", SVC_SET_UINT, ws_port, "8081", 1, 65535, "port", 0, "svc-wsd's port"),
	STR("SVC_WSD_INTERNAL_URL", wsd_internal_url, "", "how the API reaches svc-wsd; empty: http://127.0.0.1:<port>"),
	U64("SVC_WSD_MAX_MESSAGE", wsd_max_message, "1048576", 1024, 256u << 20, "bytes", "largest WebSocket message"),
	U64("SVC_WSD_MAX_ROOMS", wsd_max_rooms, "1000", 1, 1000000, "rooms", "projects open at once"),
	U64("SVC_WSD_MAX_CONNECTIONS", wsd_max_conns, "10000", 1, 1000000, "sockets", "sockets in all"),
	U64("SVC_WSD_MAX_CONNECTIONS_PER_USER", wsd_max_conns_per_user, "32", 1, 1000000, "sockets", "sockets of one user"),
	U64("SVC_WSD_MAX_ROOMS_PER_USER", wsd_max_rooms_per_user, "16", 1, 1000000, "rooms", "projects one user has open"),
	U64("SVC_WSD_SEND_QUEUE_MAX", wsd_send_queue_max, "16777216", 65536, 1u << 30, "bytes",
	    "bytes queued to a slow client before it is dropped"),
	U64("SVC_WSD_CLOSE_TIMEOUT", wsd_close_timeout_s, "10", 1, 3600, "seconds", "seconds a closing socket may take"),
	U64("SVC_WSD_SAVE_DELAY_MS", wsd_save_delay_ms, "1000", 10, 600000, "ms", "quiet time before files are written"),
	U64("SVC_WSD_COMMIT_DELAY_MS", wsd_commit_delay_ms, "2000", 0, 3600000, "ms", "quiet time before files-changed"),
	U64("SVC_WSD_COMPACT_UPDATES", wsd_compact_updates, "500", 1, 10000000, "updates",
	    "stored updates that trigger a snapshot"),
	U64("SVC_WSD_MAX_FILE_BYTES", wsd_max_file_bytes, "1048576", 1, 64u << 20, "bytes",
	    "larger files stay out of the document"),
	U64("SVC_WSD_AWARENESS_TIMEOUT_MS", wsd_awareness_timeout_ms, "30000", 100, 3600000, "ms",
	    "awareness states not renewed this long go"),
	U64("SVC_WSD_AWARENESS_MAX_BYTES", wsd_awareness_max_bytes, "16384", 64, 1048576, "bytes",
	    "larger awareness states are ignored"),
	U64("SVC_WSD_MAX_AWARENESS_PER_ROOM", wsd_max_awareness_per_room, "1024", 8, 65536, "entries",
	    "awareness entries a room holds"),
	U64("SVC_WSD_KEEPALIVE_MS", wsd_keepalive_ms, "15000", 100, 3600000, "ms", "silence before an empty awareness update"),
	U64("SVC_WSD_LEASE_SECONDS", wsd_lease_secs, "15", 3, 3600, "seconds", "a room's lease"),
	U64("SVC_WSD_RECHECK_SECONDS", wsd_recheck_secs, "30", 1, 86400, "seconds", "how often open sockets are checked"),
	U64("SVC_WSD_PACK_MIN_BYTES", wsd_pack_min_bytes, "4096", 0, 64u << 20, "bytes", "cold text pieces kept compressed"),
	/* sign-in providers */
	OAUTH("GITHUB", 0),
	OAUTH("GOOGLE", 1),
	ROW("SVC_OAUTH_STATE_TTL", SVC_SET_DURATION, oauth_state_ttl_secs, "10m", 1, 3600, "seconds", 0,
	    "how long a started sign-in may take"),
	/* authentication */
	STR("SVC_SMTP_URL", smtp_url, "", "the mailer, smtp://host:587 or smtps://host:465"),
	STR("SVC_SMTP_USER", smtp_user, "", "SMTP AUTH user"),
	SECRET("SVC_SMTP_PASSWORD", smtp_password, "SMTP AUTH password"),
	ROW("SVC_SMTP_STARTTLS", SVC_SET_BOOL, smtp_starttls, "1", 0, 1, NULL, 0, "1: smtp:// must upgrade with STARTTLS"),
	STR("SVC_MAIL_FROM", mail_from, "", "sender address; empty: svc@<SVC_DOMAIN>"),
	ROW("SVC_PASSWORD_RESET_TTL", SVC_SET_DURATION, password_reset_ttl_secs, "1h", 1, 7 * 86400, "seconds", 0,
	    "lifetime of a reset link"),
	ROW("SVC_SIGNUP_VERIFY", SVC_SET_CHOICE, signup_verify, "auto", 0, 0, "auto|on|off", 0,
	    "whether a sign-up is verified by mail"),
	ROW("SVC_SIGNUP_VERIFY_TTL", SVC_SET_DURATION, signup_verify_ttl_secs, "24h", 1, 7 * 86400, "seconds", 0,
	    "lifetime of a sign-up's link"),
	U64("SVC_API_TOKENS_MAX", api_tokens_max, "50", 1, 100000, "tokens", "API tokens one user may hold"),
	ROW("SVC_AUTH_LOG", SVC_SET_PATH, auth_log, "", 0, 0, NULL, 0, "absolute path of the auth log fail2ban reads"),
	STR("SVC_TRUSTED_PROXIES", trusted_proxies, "", "proxies whose X-Forwarded-For is believed"),
	/* rate limits */
	RATE("SVC_RATE_LIMIT_GLOBAL", rate_global, "600/1m", "every API request per client address"),
	RATE("SVC_RATE_LIMIT_LOGIN_IP", rate_login_ip, "10/1m", "login attempts per client address"),
	RATE("SVC_RATE_LIMIT_LOGIN_ACCOUNT", rate_login_account, "5/15m", "failed logins per account and address"),
	RATE("SVC_RATE_LIMIT_LOGIN_ACCOUNT_MAX", rate_login_account_max, "20/15m", "failed logins per account"),
	RATE("SVC_RATE_LIMIT_LOGIN_SLOW", rate_login_slow, "1/10s", "logins over the ceiling from unknown addresses"),
	RATE("SVC_RATE_LIMIT_SIGNUP_IP", rate_signup_ip, "10/1h", "sign-ups per client address"),
	RATE("SVC_RATE_LIMIT_SIGNUP_ACCOUNT", rate_signup_account, "5/1h", "sign-up messages per e-mail address"),
	RATE("SVC_RATE_LIMIT_VERIFY_IP", rate_verify_ip, "10/15m", "verify-email requests per client address"),
	RATE("SVC_RATE_LIMIT_REFRESH_IP", rate_refresh_ip, "60/1m", "refreshes per client address"),
	RATE("SVC_RATE_LIMIT_RESET_IP", rate_reset_ip, "5/15m", "password-reset requests per client address"),
	RATE("SVC_RATE_LIMIT_RESET_ACCOUNT", rate_reset_account, "3/1h", "reset messages per e-mail address"),
	RATE("SVC_RATE_LIMIT_OAUTH_IP", rate_oauth_ip, "30/1m", "OAuth starts and callbacks per client address"),
	STR("SVC_RATE_LIMIT_EXEMPT", rate_limit_exempt, "", "addresses and CIDR blocks never limited"),
};

const struct svc_setting *svc_config_settings(size_t *out_count)
{
	*out_count = sizeof table / sizeof table[0];
	return table;
}

const struct svc_setting *svc_config_setting(const char *name)
{
	size_t i;

	for (i = 0; name && i < sizeof table / sizeof table[0]; i++)
		if (strcmp(table[i].name, name) == 0)
			return &table[i];
	return NULL;
}
