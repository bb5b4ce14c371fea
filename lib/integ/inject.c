/* inject.c: what an integration's credential adds to a call (headers, query parameters) and the scrubbing of those values out of the answer (docs/agent.md "Integrations"). */
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

#include "auth/crypto.h"
#include "core/err.h"
#include "core/json.h"
#include "core/util.h"
#include "integ/inject.h"
#include "integ/integ.h"

int svc_integ_header_name_valid(const char *h)
{
	size_t i;

	for (i = 0; h[i]; i++)
		if (!((h[i] >= 'a' && h[i] <= 'z') || (h[i] >= 'A' && h[i] <= 'Z') || (h[i] >= '0' && h[i] <= '9') ||
		      h[i] == '-' || h[i] == '_'))
			return 0;
	return i > 0 && i <= 64;
}

/* Takes the malloc'd text `s` into the array `arr` (n used, cap allocated); frees it on failure. */
static int take_text(char ***arr, size_t *n, size_t *cap, char *s)
{
	if (!s)
		return SVC_E_INTERNAL;
	if (SVC_ARRAY_GROW(*arr, *cap, *n + 1) < 0) {
		OPENSSL_cleanse(s, strlen(s));
		free(s);
		return SVC_E_INTERNAL;
	}
	(*arr)[(*n)++] = s;
	return 0;
}

/* Adds `v` (n bytes) to the texts to scrub unless it is empty or already there. */
static int scrub_add(struct svc_integ_inject *in, const char *v, size_t n)
{
	size_t i;

	if (n == 0)
		return 0;
	for (i = 0; i < in->nsecrets; i++)
		if (strlen(in->secrets[i]) == n && memcmp(in->secrets[i], v, n) == 0)
			return 0;
	return take_text(&in->secrets, &in->nsecrets, &in->cap_secrets, strndup(v, n));
}

/* Percent-encodes `v` (RFC 3986 section 2.1: all but the unreserved characters) into b, hex in `digits`, ' ' as `space` when not 0. */
static int pct_encode(struct svc_buf *b, const char *v, const char *digits, char space)
{
	const unsigned char *u = (const unsigned char *)v;
	int err = 0;

	for (; *u && err == 0; u++) {
		if ((*u >= 'a' && *u <= 'z') || (*u >= 'A' && *u <= 'Z') || (*u >= '0' && *u <= '9') || *u == '-' ||
		    *u == '.' || *u == '_' || *u == '~') {
			err = svc_buf_add(b, u, 1);
		} else if (*u == ' ' && space) {
			err = svc_buf_add(b, &space, 1);
		} else {
			char e[3] = { '%', digits[*u >> 4], digits[*u & 15] };
			err = svc_buf_add(b, e, 3);
		}
	}
	return err;
}

/* Adds injected value `v` and its encoded forms (svc_integ_inject()) to the texts to scrub. */
static int scrub_forms(struct svc_integ_inject *in, const char *v)
{
	size_t n = strlen(v), k, i;
	struct json_object *js;
	char *b64 = NULL;
	struct svc_buf e;
	int err;

	if (n < SVC_INTEG_SCRUB_MIN)
		return 0;
	if ((err = scrub_add(in, v, n)) < 0)
		return err;
	/* Base64 with padding, without it, and base64url */
	if ((err = svc_base64_encode((const uint8_t *)v, n, &b64)) < 0)
		return err;
	k = strlen(b64);
	if ((err = scrub_add(in, b64, k)) == 0) {
		while (k > 0 && b64[k - 1] == '=')
			k--;
		err = scrub_add(in, b64, k);
	}
	for (i = 0; i < k; i++)
		b64[i] = b64[i] == '+' ? '-' : b64[i] == '/' ? '_' : b64[i];
	if (err == 0)
		err = scrub_add(in, b64, k);
	OPENSSL_cleanse(b64, strlen(b64));
	free(b64);
	/* percent-encoded: upper and lower case hex, and the form encoding's '+' for a space */
	svc_buf_init(&e, 3 * n + 1);
	if (err == 0 && (err = pct_encode(&e, v, "0123456789ABCDEF", 0)) == 0)
		err = scrub_add(in, e.data ? e.data : "", e.len);
	svc_buf_reset(&e);
	if (err == 0 && (err = pct_encode(&e, v, "0123456789abcdef", 0)) == 0)
		err = scrub_add(in, e.data ? e.data : "", e.len);
	svc_buf_reset(&e);
	if (err == 0 && (err = pct_encode(&e, v, "0123456789ABCDEF", '+')) == 0)
		err = scrub_add(in, e.data ? e.data : "", e.len);
	svc_buf_wipe(&e);
	/* JSON-escaped, as an API that answers JSON writes it ("a/b" is "a\/b" to json-c) */
	if (err == 0 && (js = json_object_new_string_len(v, (int)n)) != NULL) {
		const char *t = json_object_to_json_string_ext(js, JSON_C_TO_STRING_PLAIN);
		size_t tn = t ? strlen(t) : 0;
		if (tn >= 2)
			err = scrub_add(in, t + 1, tn - 2);
		if (t)
			OPENSSL_cleanse((void *)t, tn);
		json_object_put(js);
	}
	return err;
}

/* Adds header "name: value" and scrubs the value. */
static int inject_header(struct svc_integ_inject *in, const char *name, const char *value)
{
	struct svc_buf b;
	int err;

	if (strpbrk(value, "\r\n"))
		return SVC_E_VALIDATION;
	svc_buf_init(&b, 65536);
	if ((err = svc_buf_addf(&b, "%s: %s", name, value)) < 0) {
		svc_buf_wipe(&b);
		return err;
	}
	if ((err = take_text(&in->headers, &in->nheaders, &in->cap_headers, svc_buf_detach(&b, NULL))) < 0)
		return err;
	return 0;
}

/* Adds "Authorization: Bearer <token>" and scrubs the token. */
static int inject_bearer(struct svc_integ_inject *in, const char *token)
{
	struct svc_buf v;
	int err;

	svc_buf_init(&v, SVC_INTEG_TOKEN_MAX + 16);
	if ((err = svc_buf_addf(&v, "Bearer %s", token)) == 0)
		err = inject_header(in, "Authorization", svc_buf_str(&v));
	svc_buf_wipe(&v);
	return err < 0 ? err : scrub_forms(in, token);
}

/* Orders the texts to scrub longest first, so a value inside a longer one (its Base64) goes with the longer. */
static int by_length_desc(const void *a, const void *b)
{
	size_t x = strlen(*(char *const *)a), y = strlen(*(char *const *)b);
	return x < y ? 1 : x > y ? -1 : 0;
}

int svc_integ_inject(const struct svc_integ_cred *cred, struct svc_integ_inject *out)
{
	struct json_object *o = NULL;
	int err = 0;

	memset(out, 0, sizeof *out);
	svc_buf_init(&out->query, 65536);
	if (cred->kind == SVC_INTEG_CRED_NONE)
		return 0;
	if (cred->secret && memchr(cred->secret, '\0', cred->secret_len))
		return SVC_E_VALIDATION;
	if (cred->kind == SVC_INTEG_CRED_USER || cred->kind == SVC_INTEG_CRED_SECRET) {
		err = inject_bearer(out, cred->secret ? cred->secret : "");
		goto sort;
	}
	if (!cred->secret || svc_json_parse_object(cred->secret, cred->secret_len, &o) < 0)
		return SVC_E_INTERNAL;
	if (cred->kind == SVC_INTEG_CRED_BASIC) {
		const char *u = svc_json_str(o, "username"), *pw = svc_json_str(o, "password");
		struct svc_buf up, v;
		char *b64 = NULL;

		svc_buf_init(&up, 32768);
		svc_buf_init(&v, 65536);
		if (u && strchr(u, ':'))
			err = SVC_E_VALIDATION; /* RFC 7617 section 2: a user-id holds no colon */
		if (err == 0 && (err = svc_buf_addf(&up, "%s:%s", u ? u : "", pw ? pw : "")) == 0 &&
		    (err = svc_base64_encode((const uint8_t *)svc_buf_str(&up), up.len, &b64)) == 0 &&
		    (err = svc_buf_addf(&v, "Basic %s", b64)) == 0 &&
		    (err = inject_header(out, "Authorization", svc_buf_str(&v))) == 0 &&
		    (err = scrub_forms(out, svc_buf_str(&up))) == 0 && (err = scrub_forms(out, u ? u : "")) == 0)
			err = scrub_forms(out, pw ? pw : "");
		if (b64) {
			OPENSSL_cleanse(b64, strlen(b64));
			free(b64);
		}
		svc_buf_wipe(&up);
		svc_buf_wipe(&v);
	} else {
		json_object_object_foreach(o, key, val)
		{
			const char *s = json_object_get_string(val);
			if (err < 0 || !s || !json_object_is_type(val, json_type_string))
				continue;
			if (strlen(s) != (size_t)json_object_get_string_len(val)) {
				err = SVC_E_VALIDATION;
			} else if (strncmp(key, "header:", 7) == 0 && svc_integ_header_name_valid(key + 7)) {
				if ((err = inject_header(out, key + 7, s)) == 0)
					err = scrub_forms(out, s);
			} else if (strncmp(key, "query:", 6) == 0 && svc_integ_header_name_valid(key + 6)) {
				if ((err = svc_buf_adds(&out->query, out->query.len ? "&" : "")) == 0 &&
				    (err = svc_integ_url_param(&out->query, key + 6, s)) == 0)
					err = scrub_forms(out, s);
			} else if (strcmp(key, "token") == 0 || strcmp(key, "apiKey") == 0) {
				err = inject_bearer(out, s);
			}
		}
	}
	json_object_put(o);
sort:
	if (err == 0 && out->nsecrets > 1)
		qsort(out->secrets, out->nsecrets, sizeof *out->secrets, by_length_desc);
	return err;
}

static void wipe_texts(char **arr, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		OPENSSL_cleanse(arr[i], strlen(arr[i]));
		free(arr[i]);
	}
	free(arr);
}

void svc_integ_inject_dispose(struct svc_integ_inject *in)
{
	wipe_texts(in->headers, in->nheaders);
	wipe_texts(in->secrets, in->nsecrets);
	svc_buf_wipe(&in->query);
	memset(in, 0, sizeof *in);
}

int svc_integ_scrub(const struct svc_integ_inject *in, struct svc_buf *b)
{
	static const char mark[] = SVC_INTEG_MARK;
	size_t i;
	int err = 0;

	for (i = 0; i < in->nsecrets && b->len > 0; i++) {
		const char *secret = in->secrets[i], *at, *from;
		size_t n = strlen(secret);
		struct svc_buf out;

		if (!memmem(b->data, b->len, secret, n))
			continue;
		svc_buf_init(&out, b->max);
		from = b->data;
		while (err == 0 && (at = memmem(from, b->len - (size_t)(from - b->data), secret, n)) != NULL) {
			if ((err = svc_buf_add(&out, from, (size_t)(at - from))) == 0)
				err = svc_buf_add(&out, mark, sizeof mark - 1);
			from = at + n;
		}
		if (err == 0)
			err = svc_buf_add(&out, from, b->len - (size_t)(from - b->data));
		if (err == 0)
			err = svc_buf_add(&out, "", 0); /* NUL-terminated, as the caller reads it as text */
		svc_buf_wipe(b);
		if (err < 0) {
			svc_buf_wipe(&out);
			return err;
		}
		*b = out;
	}
	return 0;
}
