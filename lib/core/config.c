/* config.c: reads settings from the environment, then from the SVC_CONFIG file. */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>

#include "core/config.h"
#include "core/err.h"
#include "core/util.h"

#define CONFIG_FILE_MAX (64 * 1024)
#define MAX_KEYS 256

struct kv {
	char *key;
	char *value;
};

struct storage {
	struct kv kvs[MAX_KEYS];
	size_t n;
	char *files[2];  /* the files' text (SVC_CONFIG, then SVC_SECRETS_FILE), cut into keys and values in place */
	size_t nfiles;
};

static char *trim(char *s)
{
	char *e;

	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
		*--e = '\0';
	return s;
}

static int read_file(struct storage *st, const char *path, char *errbuf, size_t errmax)
{
	FILE *f = fopen(path, "rb");
	size_t len;
	char *line, *next, *text;

	if (!f) {
		snprintf(errbuf, errmax, "cannot open the settings file %s: %s", path, strerror(errno));
		return SVC_E_INTERNAL;
	}
	if (st->nfiles == sizeof st->files / sizeof st->files[0] || !(text = malloc(CONFIG_FILE_MAX + 1))) {
		fclose(f);
		return SVC_E_INTERNAL;
	}
	st->files[st->nfiles++] = text;
	len = fread(text, 1, CONFIG_FILE_MAX + 1, f);
	fclose(f);
	if (len > CONFIG_FILE_MAX) {
		snprintf(errbuf, errmax, "SVC_CONFIG file %s is larger than 64 KiB", path);
		return SVC_E_INTERNAL;
	}
	text[len] = '\0';
	for (line = text; line && *line; line = next) {
		char *eq, *k, *v;
		size_t vl;

		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		line = trim(line);
		if (!*line || *line == '#')
			continue;
		eq = strchr(line, '=');
		if (!eq) {
			snprintf(errbuf, errmax, "SVC_CONFIG file %s: line without '='", path);
			return SVC_E_INTERNAL;
		}
		*eq = '\0';
		k = trim(line);
		v = trim(eq + 1);
		vl = strlen(v);
		if (vl >= 2 && ((v[0] == '"' && v[vl - 1] == '"') || (v[0] == '\'' && v[vl - 1] == '\''))) {
			v[vl - 1] = '\0';
			v++;
		}
		if (st->n == MAX_KEYS) {
			snprintf(errbuf, errmax, "SVC_CONFIG file %s has too many settings", path);
			return SVC_E_INTERNAL;
		}
		st->kvs[st->n].key = k;
		st->kvs[st->n].value = v;
		st->n++;
	}
	return 0;
}

static void storage_free(struct storage *st)
{
	size_t i;

	if (!st)
		return;
	for (i = 0; i < st->nfiles; i++)
		free(st->files[i]);
	free(st);
}

static const char *get(struct storage *st, const char *key, const char *def)
{
	const char *v = getenv(key);
	size_t i;

	if (v)
		return v;
	for (i = st->n; i > 0; i--)
		if (strcmp(st->kvs[i - 1].key, key) == 0)
			return st->kvs[i - 1].value;
	return def;
}

int svc_config_parse_duration(const char *s, int64_t *out_secs)
{
	char num[24];
	size_t len = strlen(s);
	uint64_t v, mult = 1;

	if (len == 0 || len >= sizeof num)
		return SVC_E_VALIDATION;
	memcpy(num, s, len + 1);
	switch (num[len - 1]) {
	case 's': mult = 1; num[--len] = '\0'; break;
	case 'm': mult = 60; num[--len] = '\0'; break;
	case 'h': mult = 3600; num[--len] = '\0'; break;
	case 'd': mult = 86400; num[--len] = '\0'; break;
	default: break;
	}
	if (svc_parse_u64(num, 10ULL * 366 * 86400, &v) < 0 || v == 0)
		return SVC_E_VALIDATION;
	if (v * mult > 10ULL * 366 * 86400)
		return SVC_E_VALIDATION;
	*out_secs = (int64_t)(v * mult);
	return 0;
}

static int parse_price(const char *s, double *out)
{
	char *end;
	double d;

	if (!*s) {
		*out = 0;
		return 0;
	}
	errno = 0;
	d = strtod(s, &end);
	if (errno || *end || d < 0 || d > 1e6)
		return SVC_E_VALIDATION;
	*out = d;
	return 0;
}

/* Finds `model` in a "name=value,name=value" table; points *val and *vlen at its value. Returns 1 when found. */
static int table_find(const char *table, const char *model, const char **val, size_t *vlen)
{
	size_t mlen = strlen(model);
	const char *p = table, *end, *eq, *k, *ke;

	while (p && *p) {
		end = strchr(p, ',');
		if (!end)
			end = p + strlen(p);
		eq = memchr(p, '=', (size_t)(end - p));
		if (eq) {
			k = p;
			ke = eq;
			while (k < ke && *k == ' ')
				k++;
			while (ke > k && ke[-1] == ' ')
				ke--;
			if ((size_t)(ke - k) == mlen && memcmp(k, model, mlen) == 0) {
				*val = eq + 1;
				*vlen = (size_t)(end - eq - 1);
				return 1;
			}
		}
		p = *end ? end + 1 : NULL;
	}
	return 0;
}

/* Parses a price "in:out" of `len` bytes. Returns 0 or SVC_E_VALIDATION. */
static int parse_price_pair(const char *v, size_t len, double *in, double *out)
{
	char tmp[64], *colon;

	if (len == 0 || len >= sizeof tmp)
		return SVC_E_VALIDATION;
	memcpy(tmp, v, len);
	tmp[len] = '\0';
	colon = strchr(tmp, ':');
	if (!colon)
		return SVC_E_VALIDATION;
	*colon = '\0';
	if (!tmp[0] || !colon[1] || parse_price(trim(tmp), in) < 0 || parse_price(trim(colon + 1), out) < 0)
		return SVC_E_VALIDATION;
	return 0;
}

static int parse_tokens(const char *v, size_t len, int64_t *out)
{
	char tmp[24];
	uint64_t n;
	char *t;

	if (len == 0 || len >= sizeof tmp)
		return SVC_E_VALIDATION;
	memcpy(tmp, v, len);
	tmp[len] = '\0';
	t = trim(tmp);
	if (svc_parse_u64(t, 1000000000ULL, &n) < 0)
		return SVC_E_VALIDATION;
	*out = (int64_t)n;
	return 0;
}

/* Checks every entry of a table: prices "in:out" (tokens 0) or token counts (tokens 1). */
static int table_valid(const char *table, int tokens)
{
	const char *p = table, *end, *eq;
	double a, b;
	int64_t n;

	while (p && *p) {
		end = strchr(p, ',');
		if (!end)
			end = p + strlen(p);
		eq = memchr(p, '=', (size_t)(end - p));
		if (!eq || eq == p)
			return SVC_E_VALIDATION;
		if (tokens ? parse_tokens(eq + 1, (size_t)(end - eq - 1), &n) < 0
			   : parse_price_pair(eq + 1, (size_t)(end - eq - 1), &a, &b) < 0)
			return SVC_E_VALIDATION;
		p = *end ? end + 1 : NULL;
	}
	return 0;
}

void svc_config_model_price(const struct svc_config *cfg, const char *model, double *out_in, double *out_out)
{
	const char *v;
	size_t len;

	*out_in = 0;
	*out_out = 0;
	if (!model)
		return;
	if (cfg->ai_prices && table_find(cfg->ai_prices, model, &v, &len)) {
		if (parse_price_pair(v, len, out_in, out_out) < 0) {
			*out_in = 0;
			*out_out = 0;
		}
		return;
	}
	if (cfg->ai_model && cfg->ai_model[0] && strcmp(cfg->ai_model, model) == 0) {
		*out_in = cfg->ai_price_input;
		*out_out = cfg->ai_price_output;
	}
}

int svc_config_model_priced(const struct svc_config *cfg, const char *model)
{
	const char *v;
	size_t len;

	return model && cfg->ai_prices && table_find(cfg->ai_prices, model, &v, &len);
}

int64_t svc_config_model_context(const struct svc_config *cfg, const char *model)
{
	const char *v;
	size_t len;
	int64_t n;

	if (model && cfg->ai_context_windows && table_find(cfg->ai_context_windows, model, &v, &len) &&
	    parse_tokens(v, len, &n) == 0)
		return n;
	return cfg->ai_context_default;
}

int svc_config_list_has(const char *list, const char *item)
{
	size_t ilen = strlen(item);
	const char *p = list, *end, *k, *ke;

	while (p && *p) {
		end = strchr(p, ',');
		if (!end)
			end = p + strlen(p);
		k = p;
		ke = end;
		while (k < ke && (*k == ' ' || *k == '\t'))
			k++;
		while (ke > k && (ke[-1] == ' ' || ke[-1] == '\t'))
			ke--;
		if ((size_t)(ke - k) == ilen && ilen && memcmp(k, item, ilen) == 0)
			return 1;
		p = *end ? end + 1 : NULL;
	}
	return 0;
}

/* The settings of svc-wsd: numbers within their bounds (docs/configuration.md "svc-wsd"). */
static int load_wsd(struct storage *st, struct svc_config *c, char *errbuf, size_t errmax)
{
	static const struct {
		const char *name;
		size_t off;
		uint64_t def, min, max;
	} nums[] = {
		{ "SVC_WSD_MAX_MESSAGE", offsetof(struct svc_config, wsd_max_message), 1048576, 1024, 256u << 20 },
		{ "SVC_WSD_MAX_ROOMS", offsetof(struct svc_config, wsd_max_rooms), 1000, 1, 1000000 },
		{ "SVC_WSD_MAX_CONNECTIONS", offsetof(struct svc_config, wsd_max_conns), 10000, 1, 1000000 },
		{ "SVC_WSD_MAX_CONNECTIONS_PER_USER", offsetof(struct svc_config, wsd_max_conns_per_user), 32, 1, 1000000 },
		{ "SVC_WSD_MAX_ROOMS_PER_USER", offsetof(struct svc_config, wsd_max_rooms_per_user), 16, 1, 1000000 },
		{ "SVC_WSD_SEND_QUEUE_MAX", offsetof(struct svc_config, wsd_send_queue_max), 16u << 20, 65536, 1u << 30 },
		{ "SVC_WSD_CLOSE_TIMEOUT", offsetof(struct svc_config, wsd_close_timeout_s), 10, 1, 3600 },
		{ "SVC_WSD_SAVE_DELAY_MS", offsetof(struct svc_config, wsd_save_delay_ms), 1000, 10, 600000 },
		{ "SVC_WSD_COMMIT_DELAY_MS", offsetof(struct svc_config, wsd_commit_delay_ms), 2000, 0, 3600000 },
		{ "SVC_WSD_COMPACT_UPDATES", offsetof(struct svc_config, wsd_compact_updates), 500, 1, 10000000 },
		{ "SVC_WSD_MAX_FILE_BYTES", offsetof(struct svc_config, wsd_max_file_bytes), 1048576, 1, 64u << 20 },
		{ "SVC_WSD_AWARENESS_TIMEOUT_MS", offsetof(struct svc_config, wsd_awareness_timeout_ms), 30000, 100, 3600000 },
		{ "SVC_WSD_AWARENESS_MAX_BYTES", offsetof(struct svc_config, wsd_awareness_max_bytes), 16384, 64, 1048576 },
		{ "SVC_WSD_MAX_AWARENESS_PER_ROOM", offsetof(struct svc_config, wsd_max_awareness_per_room), 1024, 8, 65536 },
		{ "SVC_WSD_KEEPALIVE_MS", offsetof(struct svc_config, wsd_keepalive_ms), 15000, 100, 3600000 },
		{ "SVC_WSD_LEASE_SECONDS", offsetof(struct svc_config, wsd_lease_secs), 15, 3, 3600 },
		{ "SVC_WSD_RECHECK_SECONDS", offsetof(struct svc_config, wsd_recheck_secs), 30, 1, 86400 },
		{ "SVC_WSD_PACK_MIN_BYTES", offsetof(struct svc_config, wsd_pack_min_bytes), 4096, 0, 64u << 20 },
		{ "SVC_AI_MAX_TURNS_PER_USER", offsetof(struct svc_config, ai_max_turns_user), 4, 0, 100000 },
		{ "SVC_AI_MAX_TURNS_PER_WORKSPACE", offsetof(struct svc_config, ai_max_turns_workspace), 16, 0, 100000 },
		{ "SVC_DB_TX_RETRIES", offsetof(struct svc_config, db_tx_retries), 6, 0, 20 },
	};
	uint64_t v;
	size_t i;

	c->ws_host = get(st, "SVC_WS_HOST", "127.0.0.1");
	if (svc_parse_u64(get(st, "SVC_WS_PORT", "8081"), 65535, &v) < 0 || v == 0) {
		snprintf(errbuf, errmax, "SVC_WS_PORT is not a port number");
		return SVC_E_INTERNAL;
	}
	c->ws_port = (unsigned)v;
	c->wsd_internal_url = get(st, "SVC_WSD_INTERNAL_URL", "");
	for (i = 0; i < sizeof nums / sizeof nums[0]; i++) {
		const char *s = get(st, nums[i].name, "");
		v = nums[i].def;
		if (*s && (svc_parse_u64(s, nums[i].max, &v) < 0 || v < nums[i].min)) {
			snprintf(errbuf, errmax, "%s must be a whole number from %llu to %llu", nums[i].name,
				 (unsigned long long)nums[i].min, (unsigned long long)nums[i].max);
			return SVC_E_INTERNAL;
		}
		memcpy((char *)c + nums[i].off, &v, sizeof v);
	}
	return 0;
}

int svc_config_load(struct svc_config *out, char *errbuf, size_t errmax)
{
	struct storage *st = calloc(1, sizeof *st);
	struct svc_config c;
	const char *file, *v;
	uint64_t port, secs;
	int err = SVC_E_INTERNAL;

	umask(027); /* nothing svc makes is open to other local accounts */
	memset(&c, 0, sizeof c);
	if (!st) {
		snprintf(errbuf, errmax, "out of memory");
		return SVC_E_INTERNAL;
	}
	file = getenv("SVC_CONFIG");
	if (file && *file) {
		if ((err = read_file(st, file, errbuf, errmax)) < 0)
			goto done;
	} else {
		FILE *f = fopen(SVC_SYSCONFDIR "/svc/svc.conf", "rb");
		if (f) {
			fclose(f);
			if ((err = read_file(st, SVC_SYSCONFDIR "/svc/svc.conf", errbuf, errmax)) < 0)
				goto done;
		}
	}
	/* the secrets may live in a file of their own (the Debian package's /etc/svc/secrets.conf:
	 * svc.conf stays a conffile that upgrades may replace, the generated secrets never are) */
	file = get(st, "SVC_SECRETS_FILE", "");
	if (*file && (err = read_file(st, file, errbuf, errmax)) < 0)
		goto done;
	err = SVC_E_INTERNAL;

	c.jwt_secret = get(st, "JWT_SECRET", "");
	c.jwt_secret_len = strlen(c.jwt_secret);
	if (c.jwt_secret_len < 32) {
		snprintf(errbuf, errmax, "JWT_SECRET is missing or shorter than 32 characters");
		goto done;
	}
	c.jwt_issuer = get(st, "JWT_ISSUER", "svc");
	if (svc_config_parse_duration(get(st, "JWT_ACCESS_TOKEN_EXPIRES_IN", "15m"), &c.access_ttl_secs) < 0) {
		snprintf(errbuf, errmax, "JWT_ACCESS_TOKEN_EXPIRES_IN is not a duration like 15m");
		goto done;
	}
	if (svc_config_parse_duration(get(st, "JWT_REFRESH_TOKEN_EXPIRES_IN", "7d"), &c.refresh_ttl_secs) < 0) {
		snprintf(errbuf, errmax, "JWT_REFRESH_TOKEN_EXPIRES_IN is not a duration like 7d");
		goto done;
	}
	c.internal_secret = get(st, "INTERNAL_SECRET", "");
	c.data_dir = get(st, "SVC_DATA_DIR", "");
	if (c.data_dir[0] != '/') {
		snprintf(errbuf, errmax, "SVC_DATA_DIR is missing or not an absolute path");
		goto done;
	}
	c.templates_dir = get(st, "SVC_TEMPLATES_DIR", SVC_DATADIR "/svc/templates");
	c.schema_dir = get(st, "SVC_SCHEMA_DIR", SVC_DATADIR "/svc/schema");
	c.base_url = get(st, "SVC_BASE_URL", "http://127.0.0.1:8080/api");
	c.app_url = get(st, "SVC_APP_URL", "http://127.0.0.1:8080");
	c.ws_url = get(st, "SVC_WS_URL", "ws://127.0.0.1:8080");
	c.domain = get(st, "SVC_DOMAIN", "localhost");
	c.http_port = get(st, "SVC_HTTP_PORT", "");
	c.cors_origins = get(st, "SVC_CORS_ORIGINS", c.app_url);
	c.db_socket = get(st, "SVC_DB_SOCKET", "");
	c.db_host = get(st, "SVC_DB_HOST", "localhost");
	v = get(st, "SVC_DB_PORT", "3306");
	if (svc_parse_u64(v, 65535, &port) < 0) {
		snprintf(errbuf, errmax, "SVC_DB_PORT is not a port number");
		goto done;
	}
	c.db_port = (unsigned)port;
	c.db_user = get(st, "SVC_DB_USER", "svc");
	c.db_password = get(st, "SVC_DB_PASSWORD", "");
	c.db_name = get(st, "SVC_DB_NAME", "svc");
	v = get(st, "SVC_DB_CONNECT_TIMEOUT", "3");
	if (svc_parse_u64(v, 600, &secs) < 0 || secs == 0) {
		snprintf(errbuf, errmax, "SVC_DB_CONNECT_TIMEOUT must be seconds from 1 to 600");
		goto done;
	}
	c.db_connect_timeout = (unsigned)secs;
	v = get(st, "SVC_DB_TIMEOUT", "5");
	if (svc_parse_u64(v, 3600, &secs) < 0 || secs == 0) {
		snprintf(errbuf, errmax, "SVC_DB_TIMEOUT must be seconds from 1 to 3600");
		goto done;
	}
	c.db_timeout = (unsigned)secs;
	c.db_hosts = get(st, "SVC_DB_HOSTS", "");
	c.instance_id = get(st, "SVC_INSTANCE_ID", "");
	if (strlen(c.instance_id) > 128) {
		snprintf(errbuf, errmax, "SVC_INSTANCE_ID is longer than 128 bytes");
		goto done;
	}
	c.ai_base_url = get(st, "SVC_AI_BASE_URL", "");
	c.ai_api_key = get(st, "SVC_AI_API_KEY", "");
	c.ai_model = get(st, "SVC_AI_MODEL", "");
	c.ai_protocol = get(st, "SVC_AI_PROTOCOL", "openai");
	c.chromium = get(st, "SVC_CHROMIUM", "chromium");
	c.thumbnail_font = get(st, "SVC_THUMBNAIL_FONT", "/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf");
	if (strcmp(c.ai_protocol, "openai") != 0 && strcmp(c.ai_protocol, "anthropic") != 0) {
		snprintf(errbuf, errmax, "SVC_AI_PROTOCOL must be openai or anthropic");
		goto done;
	}
	if (parse_price(get(st, "SVC_AI_PRICE_INPUT", ""), &c.ai_price_input) < 0 ||
	    parse_price(get(st, "SVC_AI_PRICE_OUTPUT", ""), &c.ai_price_output) < 0) {
		snprintf(errbuf, errmax, "SVC_AI_PRICE_INPUT / SVC_AI_PRICE_OUTPUT must be numbers");
		goto done;
	}
	c.ai_models = get(st, "SVC_AI_MODELS", "");
	c.ai_prices = get(st, "SVC_AI_PRICES", "");
	if (table_valid(c.ai_prices, 0) < 0) {
		snprintf(errbuf, errmax, "SVC_AI_PRICES must look like model=input:output,model2=input:output");
		goto done;
	}
	c.ai_context_windows = get(st, "SVC_AI_CONTEXT_WINDOWS", "");
	if (table_valid(c.ai_context_windows, 1) < 0) {
		snprintf(errbuf, errmax, "SVC_AI_CONTEXT_WINDOWS must look like model=tokens,model2=tokens");
		goto done;
	}
	v = get(st, "SVC_AI_CONTEXT_DEFAULT", "0");
	if (parse_tokens(v, strlen(v), &c.ai_context_default) < 0) {
		snprintf(errbuf, errmax, "SVC_AI_CONTEXT_DEFAULT must be a number of tokens");
		goto done;
	}
	v = get(st, "SVC_AI_RETRY_MAX", "10");
	if (parse_tokens(v, strlen(v), &c.ai_retry_max_secs) < 0 || c.ai_retry_max_secs > 600) {
		snprintf(errbuf, errmax, "SVC_AI_RETRY_MAX must be seconds from 0 to 600");
		goto done;
	}
	v = get(st, "SVC_AI_IDLE_TIMEOUT", "120");
	if (parse_tokens(v, strlen(v), &c.ai_idle_secs) < 0 || c.ai_idle_secs < 1 || c.ai_idle_secs > 3600) {
		snprintf(errbuf, errmax, "SVC_AI_IDLE_TIMEOUT must be seconds from 1 to 3600");
		goto done;
	}
	if (parse_price(get(st, "SVC_DEFAULT_CREDIT_USD", "10"), &c.default_credit_usd) < 0) {
		snprintf(errbuf, errmax, "SVC_DEFAULT_CREDIT_USD must be a number of US dollars");
		goto done;
	}
	c.encryption_key = get(st, "ENCRYPTION_KEY", "");
	c.encryption_key_previous = get(st, "ENCRYPTION_KEY_PREVIOUS", "");
	v = get(st, "SVC_ENVELOPE_ENCRYPTION", "0");
	if (strcmp(v, "0") != 0 && strcmp(v, "1") != 0 && v[0]) {
		snprintf(errbuf, errmax, "SVC_ENVELOPE_ENCRYPTION must be 0 or 1");
		goto done;
	}
	c.envelope_encryption = strcmp(v, "1") == 0;
	c.secure_cookies = strncmp(c.base_url, "https:", 6) == 0;
	if ((err = load_wsd(st, &c, errbuf, errmax)) < 0)
		goto done;
	err = SVC_E_INTERNAL;
	c.storage = st;
	*out = c;
	return 0;
done:
	storage_free(st);
	return err;
}

void svc_config_dispose(struct svc_config *cfg)
{
	struct storage *st = cfg->storage;

	storage_free(st);
	memset(cfg, 0, sizeof *cfg);
}

const char *svc_config_get(const struct svc_config *cfg, const char *key, const char *def)
{
	static struct storage empty;

	return get(cfg && cfg->storage ? (struct storage *)cfg->storage : &empty, key, def);
}
