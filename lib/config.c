/* config.c: reads settings from the environment, then from the SVC_CONFIG file. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "err.h"
#include "util.h"

#define CONFIG_FILE_MAX (64 * 1024)
#define MAX_KEYS 256

struct kv {
	char *key;
	char *value;
};

struct storage {
	struct kv kvs[MAX_KEYS];
	size_t n;
	char *file;      /* the file's text, cut into keys and values in place */
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
	char *line, *next;

	if (!f) {
		snprintf(errbuf, errmax, "cannot open SVC_CONFIG file %s: %s", path, strerror(errno));
		return SVC_E_INTERNAL;
	}
	st->file = malloc(CONFIG_FILE_MAX + 1);
	if (!st->file) {
		fclose(f);
		return SVC_E_INTERNAL;
	}
	len = fread(st->file, 1, CONFIG_FILE_MAX + 1, f);
	fclose(f);
	if (len > CONFIG_FILE_MAX) {
		snprintf(errbuf, errmax, "SVC_CONFIG file %s is larger than 64 KiB", path);
		return SVC_E_INTERNAL;
	}
	st->file[len] = '\0';
	for (line = st->file; line && *line; line = next) {
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

int svc_config_load(struct svc_config *out, char *errbuf, size_t errmax)
{
	struct storage *st = calloc(1, sizeof *st);
	struct svc_config c;
	const char *file, *v;
	uint64_t port;
	int err = SVC_E_INTERNAL;

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
	c.ai_base_url = get(st, "SVC_AI_BASE_URL", "");
	c.ai_api_key = get(st, "SVC_AI_API_KEY", "");
	c.ai_model = get(st, "SVC_AI_MODEL", "");
	c.ai_protocol = get(st, "SVC_AI_PROTOCOL", "openai");
	if (strcmp(c.ai_protocol, "openai") != 0 && strcmp(c.ai_protocol, "anthropic") != 0) {
		snprintf(errbuf, errmax, "SVC_AI_PROTOCOL must be openai or anthropic");
		goto done;
	}
	if (parse_price(get(st, "SVC_AI_PRICE_INPUT", ""), &c.ai_price_input) < 0 ||
	    parse_price(get(st, "SVC_AI_PRICE_OUTPUT", ""), &c.ai_price_output) < 0) {
		snprintf(errbuf, errmax, "SVC_AI_PRICE_INPUT / SVC_AI_PRICE_OUTPUT must be numbers");
		goto done;
	}
	c.secure_cookies = strncmp(c.base_url, "https:", 6) == 0;
	c.storage = st;
	*out = c;
	return 0;
done:
	free(st->file);
	free(st);
	return err;
}

void svc_config_dispose(struct svc_config *cfg)
{
	struct storage *st = cfg->storage;

	if (st) {
		free(st->file);
		free(st);
	}
	memset(cfg, 0, sizeof *cfg);
}
