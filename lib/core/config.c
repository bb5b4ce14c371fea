/* config.c: reads the settings of the table (config_table.c) from the environment, then from the SVC_CONFIG file. */
#include <assert.h>
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>

#include "core/config.h"
#include "core/err.h"
#include "core/log.h"
#include "core/util.h"

#define CONFIG_FILE_MAX (64 * 1024)
#define MAX_KEYS 256
#define MAX_SETTINGS 256 /* rows of the settings table (config_table.c) */
#define MAX_WARNINGS 16

struct kv {
	char *key;
	char *value;
};

struct storage {
	struct kv kvs[MAX_KEYS];
	size_t n;
	char *files[2];  /* the files' text (SVC_CONFIG, then SVC_SECRETS_FILE), cut into keys and values in place */
	size_t nfiles;
	const struct svc_setting *table; /* svc_config_settings() */
	size_t nrows;
	unsigned char set[MAX_SETTINGS]; /* per row: given with a non-empty value */
	char warnings[MAX_WARNINGS][256];
	size_t nwarnings;
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

/* ---- the table walk ---- */

/* One parsed value, as the field of its type holds it. */
union value {
	const char *str;
	int b;
	unsigned u;
	uint64_t u64;
	int64_t i64;
	double d;
};

/* Writes what a value of row `s` must look like ("a whole number from 1 to 600 (seconds)") into `out`. */
static void expectation(const struct svc_setting *s, char *out, size_t max)
{
	const char *unit = s->unit ? s->unit : "";
	unsigned long long lo = (unsigned long long)s->min, hi = (unsigned long long)s->max;

	switch (s->type) {
	case SVC_SET_STR:
		if (s->max)
			snprintf(out, max, "at most %llu bytes long", hi);
		else
			snprintf(out, max, "at least %llu bytes long", lo);
		break;
	case SVC_SET_PATH:
		snprintf(out, max, "an absolute path");
		break;
	case SVC_SET_CHOICE: {
		const char *bar = strrchr(unit, '|');
		size_t i, o = 0;

		for (i = 0; unit[i] && o + 5 < max; i++) {
			if (unit[i] != '|') {
				out[o++] = unit[i];
				continue;
			}
			if (&unit[i] == bar) {
				memcpy(out + o, " or ", 4);
				o += 4;
			} else {
				memcpy(out + o, ", ", 2);
				o += 2;
			}
		}
		out[o] = '\0';
		break;
	}
	case SVC_SET_BOOL:
		snprintf(out, max, "0 or 1");
		break;
	case SVC_SET_DURATION:
		snprintf(out, max, "a duration like 15m, from %llu to %llu seconds", lo, hi);
		break;
	case SVC_SET_PRICE:
		snprintf(out, max, "a number from 0 to %llu%s%s", hi, *unit ? " " : "", unit);
		break;
	case SVC_SET_PRICE_TABLE:
	case SVC_SET_TOKEN_TABLE:
		snprintf(out, max, "like %s", unit);
		break;
	default:
		snprintf(out, max, "a whole number from %llu to %llu%s%s%s", lo, hi, *unit ? " (" : "", unit, *unit ? ")" : "");
		break;
	}
}

/* Parses `v`, the text of row `s`, into `out`. Returns 0 or SVC_E_VALIDATION. */
static int parse_value(const struct svc_setting *s, const char *v, union value *out)
{
	uint64_t n;
	int64_t secs;
	const char *w;
	size_t len = strlen(v);

	switch (s->type) {
	case SVC_SET_STR:
		if (len < s->min || (s->max && len > s->max))
			return SVC_E_VALIDATION;
		out->str = v;
		return 0;
	case SVC_SET_PATH:
		if (*v && *v != '/')
			return SVC_E_VALIDATION;
		out->str = v;
		return 0;
	case SVC_SET_CHOICE:
		for (w = strchr(v, '|') ? NULL : s->unit; w && *w; w += strcspn(w, "|"), w += *w == '|') {
			if (len && strncmp(w, v, len) == 0 && (w[len] == '|' || w[len] == '\0')) {
				out->str = v;
				return 0;
			}
		}
		return SVC_E_VALIDATION;
	case SVC_SET_BOOL:
		if (strcmp(v, "0") != 0 && strcmp(v, "1") != 0)
			return SVC_E_VALIDATION;
		out->b = v[0] == '1';
		return 0;
	case SVC_SET_UINT:
	case SVC_SET_U64:
	case SVC_SET_I64:
		if (s->type == SVC_SET_I64 && !*v) {
			out->i64 = -1; /* unset, no default */
			return 0;
		}
		if (svc_parse_u64(v, s->max, &n) < 0 || n < s->min)
			return SVC_E_VALIDATION;
		if (s->type == SVC_SET_UINT)
			out->u = (unsigned)n;
		else if (s->type == SVC_SET_U64)
			out->u64 = n;
		else
			out->i64 = (int64_t)n;
		return 0;
	case SVC_SET_DURATION:
		if (svc_config_parse_duration(v, &secs) < 0 || (uint64_t)secs < s->min || (uint64_t)secs > s->max)
			return SVC_E_VALIDATION;
		out->i64 = secs;
		return 0;
	case SVC_SET_PRICE:
		if (parse_price(v, &out->d) < 0 || out->d > (double)s->max)
			return SVC_E_VALIDATION;
		return 0;
	case SVC_SET_PRICE_TABLE:
	case SVC_SET_TOKEN_TABLE:
		if (table_valid(v, s->type == SVC_SET_TOKEN_TABLE) < 0)
			return SVC_E_VALIDATION;
		out->str = v;
		return 0;
	default:
		return SVC_E_VALIDATION;
	}
}

/* Stores `val` into the field of row `s` in `c`. */
static void store(struct svc_config *c, const struct svc_setting *s, const union value *val)
{
	char *f = (char *)c + s->offset;

	switch (s->type) {
	case SVC_SET_BOOL: memcpy(f, &val->b, sizeof val->b); break;
	case SVC_SET_UINT: memcpy(f, &val->u, sizeof val->u); break;
	case SVC_SET_U64: memcpy(f, &val->u64, sizeof val->u64); break;
	case SVC_SET_I64:
	case SVC_SET_DURATION: memcpy(f, &val->i64, sizeof val->i64); break;
	case SVC_SET_PRICE: memcpy(f, &val->d, sizeof val->d); break;
	default: memcpy(f, &val->str, sizeof val->str); break;
	}
}

/* Adds one complaint about a lenient setting (kept for svc_config_warning(), and logged). */
static void warn(struct storage *st, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void warn(struct storage *st, const char *fmt, ...)
{
	va_list ap;
	char *w = st->warnings[st->nwarnings < MAX_WARNINGS ? st->nwarnings : MAX_WARNINGS - 1];

	va_start(ap, fmt);
	vsnprintf(w, sizeof st->warnings[0], fmt, ap);
	va_end(ap);
	if (st->nwarnings < MAX_WARNINGS)
		st->nwarnings++;
	svc_log_warn("configuration: %s", w);
}

/* 1 when a setting of `type` is held as its text (const char *), else 0. */
static int is_text(enum svc_setting_type type)
{
	return type == SVC_SET_STR || type == SVC_SET_PATH || type == SVC_SET_CHOICE || type == SVC_SET_PRICE_TABLE ||
	       type == SVC_SET_TOKEN_TABLE;
}

/* Reads row `i` of the table into `c`. Returns 0, or SVC_E_INTERNAL with a message naming the setting. */
static int load_row(struct storage *st, size_t i, struct svc_config *c, char *errbuf, size_t errmax)
{
	const struct svc_setting *s = &st->table[i];
	const char *v = get(st, s->name, NULL), *def = s->def;
	const struct svc_setting *from = s->def_from ? svc_config_setting(s->def_from) : NULL;
	union value val;
	char want[160];
	int text = is_text(s->type);

	if (from)
		memcpy(&def, (const char *)c + from->offset, sizeof def);
	st->set[i] = v && *v;
	if (!v || (!text && !*v))
		v = def; /* unset (a number also when empty): the default */
	if ((s->flags & SVC_SET_REQUIRED) && !*v) {
		expectation(s, want, sizeof want);
		snprintf(errbuf, errmax, "%s is missing (it must be %s)", s->name, want);
		return SVC_E_INTERNAL;
	}
	if (parse_value(s, v, &val) == 0) {
		store(c, s, &val);
		return 0;
	}
	expectation(s, want, sizeof want);
	if (!(s->flags & SVC_SET_LENIENT) || parse_value(s, def, &val) < 0) {
		snprintf(errbuf, errmax, "%s must be %s", s->name, want);
		return SVC_E_INTERNAL;
	}
	warn(st, "%s=%.64s is not %s; using %s", s->name, v, want, *def ? def : "none");
	store(c, s, &val);
	return 0;
}

int svc_config_load(struct svc_config *out, char *errbuf, size_t errmax)
{
	struct storage *st = calloc(1, sizeof *st);
	struct svc_config c;
	const char *file;
	size_t i;
	int err = SVC_E_INTERNAL;

	umask(027); /* nothing svc makes is open to other local accounts */
	memset(&c, 0, sizeof c);
	if (!st) {
		snprintf(errbuf, errmax, "out of memory");
		return SVC_E_INTERNAL;
	}
	st->table = svc_config_settings(&st->nrows);
	assert(st->nrows <= MAX_SETTINGS);
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
	for (i = 0; i < st->nrows; i++)
		if ((err = load_row(st, i, &c, errbuf, errmax)) < 0)
			goto done;
	c.jwt_secret_len = strlen(c.jwt_secret);
	c.secure_cookies = strncmp(c.base_url, "https:", 6) == 0;
	c.storage = st;
	*out = c;
	return 0;
done:
	storage_free(st);
	return err;
}

void svc_config_defaults(struct svc_config *out)
{
	const struct svc_setting *rows, *from;
	const char *def;
	union value val;
	size_t i, n;

	memset(out, 0, sizeof *out);
	rows = svc_config_settings(&n);
	for (i = 0; i < n; i++) {
		def = rows[i].def;
		if (rows[i].def_from && (from = svc_config_setting(rows[i].def_from)))
			memcpy(&def, (const char *)out + from->offset, sizeof def);
		if (parse_value(&rows[i], def, &val) == 0) { /* tests/unit/test_config.c: every default does */
			store(out, &rows[i], &val);
		} else if (is_text(rows[i].type)) { /* a required one: "" */
			val.str = def;
			store(out, &rows[i], &val);
		}
	}
	out->jwt_secret_len = strlen(out->jwt_secret);
	out->secure_cookies = strncmp(out->base_url, "https:", 6) == 0;
}

int svc_config_is_set(const struct svc_config *cfg, const char *name)
{
	const struct storage *st = cfg ? cfg->storage : NULL;
	const struct svc_setting *s = svc_config_setting(name);

	return st && s && st->set[s - st->table];
}

const char *svc_config_warning(const struct svc_config *cfg, size_t i)
{
	const struct storage *st = cfg ? cfg->storage : NULL;

	return st && i < st->nwarnings ? st->warnings[i] : NULL;
}

void svc_config_format(const struct svc_config *cfg, const struct svc_setting *s, char *out, size_t max)
{
	const char *f = (const char *)cfg + s->offset, *str;
	union value v;

	if (s->flags & SVC_SET_SECRET) {
		memcpy(&str, f, sizeof str);
		snprintf(out, max, "%s", str && *str ? "(set)" : "(not set)");
		return;
	}
	switch (s->type) {
	case SVC_SET_BOOL: memcpy(&v.b, f, sizeof v.b); snprintf(out, max, "%d", v.b); break;
	case SVC_SET_UINT: memcpy(&v.u, f, sizeof v.u); snprintf(out, max, "%u", v.u); break;
	case SVC_SET_U64: memcpy(&v.u64, f, sizeof v.u64); snprintf(out, max, "%llu", (unsigned long long)v.u64); break;
	case SVC_SET_I64:
	case SVC_SET_DURATION:
		memcpy(&v.i64, f, sizeof v.i64);
		if (v.i64 < 0)
			snprintf(out, max, "(not set)");
		else
			snprintf(out, max, "%lld%s", (long long)v.i64, s->type == SVC_SET_DURATION ? "s" : "");
		break;
	case SVC_SET_PRICE: memcpy(&v.d, f, sizeof v.d); snprintf(out, max, "%g", v.d); break;
	default: memcpy(&str, f, sizeof str); snprintf(out, max, "%s", str ? str : ""); break;
	}
}

void svc_config_dispose(struct svc_config *cfg)
{
	struct storage *st = cfg->storage;

	storage_free(st);
	memset(cfg, 0, sizeof *cfg);
}
