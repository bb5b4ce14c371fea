/* auth_oauth.c: OAuth 2.0 sign-in: signed state bound to a cookie, PKCE S256, code exchange and profiles with libcurl. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>
#include <json-c/json.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>

#include "auth/auth.h"
#include "core/err.h"
#include "core/json.h"
#include "core/outbound.h"
#include "core/util.h"

#define NONCE_BYTES 16
#define NONCE_LEN 22          /* base64url of 16 bytes */
#define MAC_LEN 43            /* base64url of 32 bytes */
#define HTTP_TIMEOUT_SECS 10L
#define HTTP_ANSWER_MAX (64 * 1024)

static const struct svc_oauth_provider providers[SVC_OAUTH__MAX] = {
	[SVC_OAUTH_GITHUB] = {
		SVC_OAUTH_GITHUB, "github", "GitHub",
		"https://github.com/login/oauth/authorize",
		"https://github.com/login/oauth/access_token",
		"https://api.github.com/user",
		"read:user user:email", "read:user", 1,
	},
	[SVC_OAUTH_GOOGLE] = {
		SVC_OAUTH_GOOGLE, "google", "Google",
		"https://accounts.google.com/o/oauth2/v2/auth",
		"https://oauth2.googleapis.com/token",
		"https://openidconnect.googleapis.com/v1/userinfo",
		"openid email profile", NULL, 1,
	},
};

const struct svc_oauth_provider *svc_oauth_provider_get(enum svc_oauth_id id)
{
	return (unsigned)id < SVC_OAUTH__MAX ? &providers[id] : NULL;
}

const struct svc_oauth_provider *svc_oauth_provider_find(const char *name)
{
	size_t i;

	for (i = 0; name && i < SVC_OAUTH__MAX; i++)
		if (strcmp(providers[i].name, name) == 0)
			return &providers[i];
	return NULL;
}

/* base64url without padding (RFC 4648 §5) of `len` bytes into out (4 * ceil(len / 3) + 1 bytes). */
static void b64url(const unsigned char *in, size_t len, char *out)
{
	static const char a[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
	size_t i, o = 0;

	for (i = 0; i + 2 < len; i += 3) {
		unsigned v = (unsigned)in[i] << 16 | (unsigned)in[i + 1] << 8 | in[i + 2];
		out[o++] = a[(v >> 18) & 63];
		out[o++] = a[(v >> 12) & 63];
		out[o++] = a[(v >> 6) & 63];
		out[o++] = a[v & 63];
	}
	if (len - i == 1) {
		unsigned v = (unsigned)in[i] << 16;
		out[o++] = a[(v >> 18) & 63];
		out[o++] = a[(v >> 12) & 63];
	} else if (len - i == 2) {
		unsigned v = (unsigned)in[i] << 16 | (unsigned)in[i + 1] << 8;
		out[o++] = a[(v >> 18) & 63];
		out[o++] = a[(v >> 12) & 63];
		out[o++] = a[(v >> 6) & 63];
	}
	out[o] = '\0';
}

static int random_b64url(size_t nbytes, char *out)
{
	unsigned char rnd[32];

	if (nbytes > sizeof rnd || svc_random(rnd, nbytes) < 0)
		return SVC_E_INTERNAL;
	b64url(rnd, nbytes, out);
	OPENSSL_cleanse(rnd, sizeof rnd);
	return 0;
}

void svc_oauth_pkce_challenge(const char *verifier, char *out)
{
	unsigned char md[SHA256_DIGEST_LENGTH];

	SHA256((const unsigned char *)verifier, strlen(verifier), md);
	b64url(md, sizeof md, out);
}

/* The state MAC: HMAC-SHA256 under a key derived from JWT_SECRET, over every field the state binds. */
static int state_mac(const char *secret, size_t secret_len, const char *provider, const char *flow,
		     const char *user_id, const char *exp, const char *nonce, char *out)
{
	static const char label[] = "svc oauth state key v1";
	unsigned char key[EVP_MAX_MD_SIZE], mac[EVP_MAX_MD_SIZE];
	unsigned keylen = 0, maclen = 0;
	char text[512];
	int n;

	n = snprintf(text, sizeof text, "svc-oauth-state\n%s\n%s\n%s\n%s\n%s", provider, flow,
		     user_id ? user_id : "", exp, nonce);
	if (n < 0 || (size_t)n >= sizeof text || secret_len > 1024)
		return SVC_E_INTERNAL;
	if (!HMAC(EVP_sha256(), secret, (int)secret_len, (const unsigned char *)label, sizeof label - 1, key, &keylen) ||
	    !HMAC(EVP_sha256(), key, (int)keylen, (const unsigned char *)text, (size_t)n, mac, &maclen) ||
	    maclen != 32) {
		OPENSSL_cleanse(key, sizeof key);
		return SVC_E_INTERNAL;
	}
	b64url(mac, 32, out);
	OPENSSL_cleanse(key, sizeof key);
	OPENSSL_cleanse(mac, sizeof mac);
	return 0;
}

int svc_oauth_state_make(const char *secret, size_t secret_len, const char *provider, const char *flow,
			 const char *user_id, int64_t now, int64_t ttl_secs, char *out_state, char *out_cookie,
			 char *out_verifier)
{
	char nonce[NONCE_LEN + 1], verifier[SVC_OAUTH_VERIFIER_LEN + 1], mac[MAC_LEN + 1], exp[24];
	int err;

	if (!secret || !provider || !flow || ttl_secs <= 0 || now > INT64_MAX - ttl_secs)
		return SVC_E_INTERNAL;
	snprintf(exp, sizeof exp, "%lld", (long long)(now + ttl_secs));
	if ((err = random_b64url(NONCE_BYTES, nonce)) < 0 || (err = random_b64url(32, verifier)) < 0)
		return err;
	if ((err = state_mac(secret, secret_len, provider, flow, user_id, exp, nonce, mac)) < 0)
		return err;
	snprintf(out_state, SVC_OAUTH_STATE_MAX, "%s.%s.%s", exp, nonce, mac);
	snprintf(out_cookie, SVC_OAUTH_COOKIE_MAX, "%s.%s", nonce, verifier);
	memcpy(out_verifier, verifier, sizeof verifier);
	OPENSSL_cleanse(verifier, sizeof verifier);
	return 0;
}

int svc_oauth_state_check(const char *secret, size_t secret_len, const char *provider, const char *flow,
			  const char *user_id, const char *state, const char *cookie, int64_t now,
			  char *out_verifier)
{
	char exp[24], nonce[NONCE_LEN + 1], mac[MAC_LEN + 1], want[MAC_LEN + 1];
	const char *d1, *d2, *cd;
	uint64_t e;
	size_t elen;

	if (!state || !cookie || strlen(state) >= SVC_OAUTH_STATE_MAX || strlen(cookie) >= SVC_OAUTH_COOKIE_MAX)
		return SVC_E_UNAUTHORIZED;
	d1 = strchr(state, '.');
	d2 = d1 ? strchr(d1 + 1, '.') : NULL;
	if (!d1 || !d2 || strchr(d2 + 1, '.'))
		return SVC_E_UNAUTHORIZED;
	elen = (size_t)(d1 - state);
	if (elen == 0 || elen >= sizeof exp || (size_t)(d2 - d1 - 1) != NONCE_LEN || strlen(d2 + 1) != MAC_LEN)
		return SVC_E_UNAUTHORIZED;
	memcpy(exp, state, elen);
	exp[elen] = '\0';
	memcpy(nonce, d1 + 1, NONCE_LEN);
	nonce[NONCE_LEN] = '\0';
	memcpy(mac, d2 + 1, MAC_LEN + 1);
	if (svc_parse_u64(exp, INT64_MAX, &e) < 0)
		return SVC_E_UNAUTHORIZED;
	if (state_mac(secret, secret_len, provider, flow, user_id, exp, nonce, want) < 0 ||
	    CRYPTO_memcmp(want, mac, MAC_LEN) != 0)
		return SVC_E_UNAUTHORIZED;
	if ((int64_t)e <= now)
		return SVC_E_UNAUTHORIZED;
	/* the browser that started the flow: its cookie holds the same nonce and the PKCE verifier */
	cd = strchr(cookie, '.');
	if (!cd || (size_t)(cd - cookie) != NONCE_LEN || CRYPTO_memcmp(cookie, nonce, NONCE_LEN) != 0 ||
	    strlen(cd + 1) != SVC_OAUTH_VERIFIER_LEN)
		return SVC_E_UNAUTHORIZED;
	memcpy(out_verifier, cd + 1, SVC_OAUTH_VERIFIER_LEN + 1);
	return 0;
}

/* Appends "name=value" percent-encoded (RFC 3986 unreserved kept) with a leading '&' unless first. */
static int add_param(struct svc_buf *b, const char *name, const char *value)
{
	static const char hex[] = "0123456789ABCDEF";
	int err;
	size_t i;

	if (b->len && b->data[b->len - 1] != '?' && (err = svc_buf_adds(b, "&")) < 0)
		return err;
	if ((err = svc_buf_adds(b, name)) < 0 || (err = svc_buf_adds(b, "=")) < 0)
		return err;
	for (i = 0; value[i]; i++) {
		unsigned char c = (unsigned char)value[i];
		char enc[3];

		if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
		    c == '.' || c == '_' || c == '~') {
			err = svc_buf_add(b, &value[i], 1);
		} else {
			enc[0] = '%';
			enc[1] = hex[c >> 4];
			enc[2] = hex[c & 15];
			err = svc_buf_add(b, enc, 3);
		}
		if (err < 0)
			return err;
	}
	return 0;
}

int svc_oauth_authorize_url(const struct svc_oauth_provider *p, const struct svc_oauth_settings *settings,
			    int assistant, const char *state, const char *verifier, char **out)
{
	struct svc_buf b;
	char challenge[44];
	int err;

	svc_buf_init(&b, 8192);
	err = svc_buf_adds(&b, settings->authorize_url);
	if (err == 0)
		err = svc_buf_adds(&b, strchr(settings->authorize_url, '?') ? "&" : "?");
	if (err == 0)
		err = add_param(&b, "client_id", assistant ? settings->assistant_client_id : settings->client_id);
	if (err == 0)
		err = add_param(&b, "redirect_uri", assistant ? settings->assistant_redirect_uri : settings->redirect_uri);
	if (err == 0)
		err = add_param(&b, "response_type", "code");
	if (err == 0)
		err = add_param(&b, "scope", assistant && p->assistant_scope ? p->assistant_scope : p->scope);
	if (err == 0)
		err = add_param(&b, "state", state);
	if (err == 0 && p->pkce) {
		svc_oauth_pkce_challenge(verifier, challenge);
		err = add_param(&b, "code_challenge", challenge);
		if (err == 0)
			err = add_param(&b, "code_challenge_method", "S256");
	}
	if (err == 0 && p->id == SVC_OAUTH_GOOGLE)
		err = add_param(&b, "prompt", "select_account");
	if (err < 0) {
		svc_buf_dispose(&b);
		return SVC_E_INTERNAL;
	}
	*out = svc_buf_detach(&b, NULL);
	return *out ? 0 : SVC_E_INTERNAL;
}

/* ---- profiles ---- */

static void copy_str(char *out, size_t max, const char *s)
{
	snprintf(out, max, "%s", s ? s : "");
}

static json_object *parse_json(const char *text)
{
	json_tokener *tok;
	json_object *o;

	if (!text)
		return NULL;
	tok = json_tokener_new_ex(SVC_JSON_DEPTH_MAX);
	if (!tok)
		return NULL;
	o = json_tokener_parse_ex(tok, text, (int)strnlen(text, HTTP_ANSWER_MAX));
	if (json_tokener_get_error(tok) != json_tokener_success) {
		json_object_put(o);
		o = NULL;
	}
	json_tokener_free(tok);
	return o;
}

static const char *obj_str(json_object *o, const char *key)
{
	json_object *v;

	if (!o || !json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
		return NULL;
	return json_object_get_string(v);
}

/* A JSON true, or the string "true" (some providers send email_verified as text). */
static int obj_true(json_object *o, const char *key)
{
	json_object *v;

	if (!o || !json_object_object_get_ex(o, key, &v))
		return 0;
	if (json_object_is_type(v, json_type_boolean))
		return json_object_get_boolean(v);
	return json_object_is_type(v, json_type_string) && strcmp(json_object_get_string(v), "true") == 0;
}

/* GitHub's /user/emails: the primary verified address, else the first verified one. */
static void github_email(json_object *arr, struct svc_oauth_profile *out)
{
	size_t i, n;
	const char *first = NULL;

	if (!arr || !json_object_is_type(arr, json_type_array))
		return;
	n = json_object_array_length(arr);
	for (i = 0; i < n; i++) {
		json_object *e = json_object_array_get_idx(arr, i);
		const char *addr = obj_str(e, "email");

		if (!addr || !obj_true(e, "verified"))
			continue;
		if (obj_true(e, "primary")) {
			copy_str(out->email, sizeof out->email, addr);
			out->email_verified = 1;
			return;
		}
		if (!first)
			first = addr;
	}
	if (first) {
		copy_str(out->email, sizeof out->email, first);
		out->email_verified = 1;
	}
}

int svc_oauth_parse_profile(const struct svc_oauth_provider *p, const char *userinfo, const char *emails,
			    struct svc_oauth_profile *out)
{
	struct svc_oauth_profile prof;
	json_object *u = parse_json(userinfo), *v;
	int err = SVC_E_VALIDATION;

	memset(&prof, 0, sizeof prof);
	if (!u || !json_object_is_type(u, json_type_object))
		goto done;
	if (p->id == SVC_OAUTH_GITHUB) {
		json_object *arr;

		if (!json_object_object_get_ex(u, "id", &v))
			goto done;
		if (json_object_is_type(v, json_type_int) && json_object_get_int64(v) > 0)
			snprintf(prof.subject, sizeof prof.subject, "%lld", (long long)json_object_get_int64(v));
		else if (json_object_is_type(v, json_type_string))
			copy_str(prof.subject, sizeof prof.subject, json_object_get_string(v));
		copy_str(prof.login, sizeof prof.login, obj_str(u, "login"));
		copy_str(prof.name, sizeof prof.name, obj_str(u, "name"));
		/* the public profile address is not known to be verified */
		copy_str(prof.email, sizeof prof.email, obj_str(u, "email"));
		arr = parse_json(emails);
		github_email(arr, &prof);
		json_object_put(arr);
	} else {
		copy_str(prof.subject, sizeof prof.subject, obj_str(u, "sub"));
		copy_str(prof.email, sizeof prof.email, obj_str(u, "email"));
		prof.email_verified = prof.email[0] && obj_true(u, "email_verified");
		copy_str(prof.name, sizeof prof.name, obj_str(u, "name"));
	}
	if (!prof.subject[0] || svc_is_blank(prof.subject))
		goto done;
	*out = prof;
	err = 0;
done:
	json_object_put(u);
	return err;
}

/* ---- HTTP (lib/core/outbound.h) ---- */

/*
 * One request: GET `url`, or POST `form` (application/x-www-form-urlencoded)
 * when form is set; `bearer` adds Authorization. The answer goes into `out`
 * (HTTP_ANSWER_MAX bytes at most), the status into *status. The endpoints are
 * the operator's settings (SVC_OAUTH_<PROVIDER>_*_URL), so not address-checked.
 */
static int http_call(const char *url, const char *form, const char *bearer, struct svc_buf *out, long *status)
{
	struct svc_outbound_req req = {
		.url = url, .body = form, .body_len = form ? strlen(form) : 0, .reach = SVC_OUTBOUND_OPERATOR,
		.connect_timeout_ms = 5000, .timeout_ms = HTTP_TIMEOUT_SECS * 1000, .max_body = HTTP_ANSWER_MAX,
	};
	struct svc_outbound_xfer x;
	struct curl_slist *h = NULL, *n;
	char auth[4200];
	int err = SVC_E_UNAVAILABLE;

	memset(&x, 0, sizeof x);
	auth[0] = '\0';
	if (!(h = curl_slist_append(NULL, "Accept: application/json")))
		return SVC_E_INTERNAL;
	if (bearer) {
		int len = snprintf(auth, sizeof auth, "Authorization: Bearer %s", bearer);
		if (len < 0 || (size_t)len >= sizeof auth || !(n = curl_slist_append(h, auth))) {
			err = SVC_E_INTERNAL;
			goto done;
		}
		h = n;
	}
	req.headers = h;
	if (svc_outbound_request(&req, &x) < 0)
		goto done;
	*status = x.status;
	if (svc_buf_add(out, svc_buf_str(&x.body), x.body.len) < 0)   /* NUL-terminated */
		goto done;
	err = 0;
done:
	OPENSSL_cleanse(auth, sizeof auth);
	for (n = h; n; n = n->next)
		OPENSSL_cleanse(n->data, strlen(n->data));
	curl_slist_free_all(h);
	svc_outbound_xfer_dispose(&x);
	return err;
}

void svc_oauth_free_token(char *token)
{
	if (token) {
		OPENSSL_cleanse(token, strlen(token));
		free(token);
	}
}

int svc_oauth_exchange(const struct svc_oauth_provider *p, const struct svc_oauth_settings *settings,
		       int assistant, const char *code, const char *verifier, char **out_access_token)
{
	struct svc_buf form, answer;
	json_object *o = NULL;
	const char *tok;
	long status = 0;
	int err;

	svc_buf_init(&form, 16384);
	svc_buf_init(&answer, HTTP_ANSWER_MAX);
	if (!code || !*code || strlen(code) > 2048) {
		err = SVC_E_UNAUTHORIZED;
		goto done;
	}
	err = add_param(&form, "grant_type", "authorization_code");
	if (err == 0)
		err = add_param(&form, "code", code);
	if (err == 0)
		err = add_param(&form, "redirect_uri", assistant ? settings->assistant_redirect_uri : settings->redirect_uri);
	if (err == 0)
		err = add_param(&form, "client_id", assistant ? settings->assistant_client_id : settings->client_id);
	if (err == 0)
		err = add_param(&form, "client_secret", assistant ? settings->assistant_client_secret : settings->client_secret);
	if (err == 0 && p->pkce)
		err = add_param(&form, "code_verifier", verifier);
	if (err < 0) {
		err = SVC_E_INTERNAL;
		goto done;
	}
	if ((err = http_call(settings->token_url, form.data, NULL, &answer, &status)) < 0)
		goto done;
	o = parse_json(answer.data);
	if (!o || !json_object_is_type(o, json_type_object)) {
		err = SVC_E_UNAVAILABLE;
		goto done;
	}
	tok = obj_str(o, "access_token");
	if (status != 200 || !tok || !*tok || obj_str(o, "error")) {
		/* RFC 6749 §5.2: invalid_grant and friends; GitHub answers 200 with "error" */
		err = obj_str(o, "error") || (status >= 400 && status < 500) ? SVC_E_UNAUTHORIZED : SVC_E_UNAVAILABLE;
		goto done;
	}
	if (strlen(tok) > 4000) {
		err = SVC_E_UNAVAILABLE;
		goto done;
	}
	*out_access_token = strdup(tok);
	err = *out_access_token ? 0 : SVC_E_INTERNAL;
done:
	json_object_put(o);
	svc_buf_wipe(&form);
	svc_buf_wipe(&answer);
	return err;
}

int svc_oauth_fetch_profile(const struct svc_oauth_provider *p, const struct svc_oauth_settings *settings,
			    const char *access_token, struct svc_oauth_profile *out)
{
	struct svc_buf user, emails;
	char url[1024];
	long status = 0;
	int err, n;

	svc_buf_init(&user, HTTP_ANSWER_MAX);
	svc_buf_init(&emails, HTTP_ANSWER_MAX);
	if ((err = http_call(settings->userinfo_url, NULL, access_token, &user, &status)) < 0)
		goto done;
	if (status != 200) {
		err = SVC_E_UNAVAILABLE;
		goto done;
	}
	if (p->id == SVC_OAUTH_GITHUB) {
		/* https://api.github.com/user -> https://api.github.com/user/emails */
		n = snprintf(url, sizeof url, "%s/emails", settings->userinfo_url);
		if (n < 0 || (size_t)n >= sizeof url) {
			err = SVC_E_INTERNAL;
			goto done;
		}
		status = 0;
		if (http_call(url, NULL, access_token, &emails, &status) < 0 || status != 200)
			svc_buf_reset(&emails);   /* no verified address then */
	}
	err = svc_oauth_parse_profile(p, user.data, emails.len ? emails.data : NULL, out);
done:
	svc_buf_dispose(&user);
	svc_buf_dispose(&emails);
	return err;
}
