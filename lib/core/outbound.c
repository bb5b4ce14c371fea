/* outbound.c: every outward libcurl transfer: the one handle constructor, the one write callback with the body cap,
 * and the SSRF guard (address classification, allowed networks, libcurl's socket callback). */
#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "core/err.h"
#include "core/log.h"
#include "core/outbound.h"

static const char *const kind_names[SVC_NET__MAX] = {
	[SVC_NET_PUBLIC] = "public",       [SVC_NET_PRIVATE] = "private",
	[SVC_NET_LOOPBACK] = "loopback",   [SVC_NET_LINKLOCAL] = "link-local",
	[SVC_NET_UNSPECIFIED] = "unspecified", [SVC_NET_SHARED] = "shared (carrier-grade NAT)",
	[SVC_NET_MULTICAST] = "multicast", [SVC_NET_RESERVED] = "reserved",
};

const char *svc_net_kind_name(enum svc_net_kind kind)
{
	return kind >= 0 && kind < SVC_NET__MAX ? kind_names[kind] : "reserved";
}

/* Classifies an IPv4 address given as its four bytes. RFC 6890 §2.2.2. */
static enum svc_net_kind classify_v4(const unsigned char *b)
{
	if (b[0] == 0)
		return SVC_NET_UNSPECIFIED;
	if (b[0] == 127)
		return SVC_NET_LOOPBACK;
	if (b[0] == 10 || (b[0] == 172 && (b[1] & 0xf0) == 16) || (b[0] == 192 && b[1] == 168))
		return SVC_NET_PRIVATE;
	if (b[0] == 169 && b[1] == 254)
		return SVC_NET_LINKLOCAL;
	if (b[0] == 100 && (b[1] & 0xc0) == 64)
		return SVC_NET_SHARED;
	if ((b[0] & 0xf0) == 224)
		return SVC_NET_MULTICAST;
	if ((b[0] & 0xf0) == 240 || (b[0] == 192 && b[1] == 0 && b[2] == 0) || (b[0] == 198 && (b[1] & 0xfe) == 18))
		return SVC_NET_RESERVED; /* 240/4 holds 255.255.255.255 */
	return SVC_NET_PUBLIC;
}

/* Classifies an IPv6 address given as its 16 bytes. RFC 6890 §2.2.3. */
static enum svc_net_kind classify_v6(const unsigned char *b)
{
	static const unsigned char mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
	static const unsigned char nat64[12] = { 0, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0 };
	static const unsigned char zero[15] = { 0 };

	if (memcmp(b, mapped, 12) == 0 || memcmp(b, nat64, 12) == 0)
		return classify_v4(b + 12);
	if (b[0] == 0x20 && b[1] == 0x02)
		return classify_v4(b + 2);
	if (memcmp(b, zero, 15) == 0)
		return b[15] == 1 ? SVC_NET_LOOPBACK : b[15] == 0 ? SVC_NET_UNSPECIFIED : SVC_NET_RESERVED;
	if (memcmp(b, zero, 12) == 0)
		return SVC_NET_RESERVED; /* IPv4-compatible ::a.b.c.d, deprecated (RFC 4291 §2.5.5.1) */
	if (b[0] == 0xff)
		return SVC_NET_MULTICAST;
	if (b[0] == 0xfe && (b[1] & 0xc0) == 0x80)
		return SVC_NET_LINKLOCAL;
	if ((b[0] & 0xfe) == 0xfc || (b[0] == 0xfe && (b[1] & 0xc0) == 0xc0))
		return SVC_NET_PRIVATE;
	return SVC_NET_PUBLIC;
}

/* Copies the address of `sa` into `out` as 16 bytes (IPv4 mapped); returns 0, or -1 for another family. */
static int addr16(const struct sockaddr *sa, size_t len, unsigned char out[16])
{
	if (!sa)
		return -1;
	if (sa->sa_family == AF_INET && len >= sizeof(struct sockaddr_in)) {
		memset(out, 0, 10);
		out[10] = out[11] = 0xff;
		memcpy(out + 12, &((const struct sockaddr_in *)(const void *)sa)->sin_addr, 4);
		return 0;
	}
	if (sa->sa_family == AF_INET6 && len >= sizeof(struct sockaddr_in6)) {
		memcpy(out, &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr, 16);
		return 0;
	}
	return -1;
}

enum svc_net_kind svc_net_classify(const struct sockaddr *sa, size_t len)
{
	unsigned char b[16];

	if (addr16(sa, len, b) < 0)
		return SVC_NET_RESERVED;
	return classify_v6(b);
}

/* Keeps the first `prefix` bits of `a`. */
static void mask(unsigned char a[16], unsigned prefix)
{
	unsigned i;

	for (i = 0; i < 16; i++) {
		if (prefix >= 8) {
			prefix -= 8;
			continue;
		}
		a[i] &= (unsigned char)(0xff00u >> prefix);
		prefix = 0;
	}
}

int svc_net_parse(const char *s, size_t len, struct svc_net *out)
{
	char text[64];
	const char *slash;
	size_t alen;
	unsigned prefix = 0, max, digits = 0;
	struct svc_net n;
	struct in_addr v4;

	if (!s || len == 0 || len >= sizeof text)
		return SVC_E_VALIDATION;
	slash = memchr(s, '/', len);
	alen = slash ? (size_t)(slash - s) : len;
	memcpy(text, s, alen);
	text[alen] = '\0';
	memset(&n, 0, sizeof n);
	if (inet_pton(AF_INET, text, &v4) == 1) {
		n.addr[10] = n.addr[11] = 0xff;
		memcpy(n.addr + 12, &v4, 4);
		max = 32;
	} else if (inet_pton(AF_INET6, text, n.addr) == 1) {
		max = 128;
	} else {
		return SVC_E_VALIDATION;
	}
	if (slash) {
		const char *p;

		for (p = slash + 1; p < s + len; p++) {
			if (*p < '0' || *p > '9' || ++digits > 3)
				return SVC_E_VALIDATION;
			prefix = prefix * 10 + (unsigned)(*p - '0');
		}
		if (digits == 0 || prefix > max)
			return SVC_E_VALIDATION;
	} else {
		prefix = max;
	}
	n.prefix = prefix + (128 - max);
	mask(n.addr, n.prefix);
	*out = n;
	return 0;
}

int svc_net_contains(const struct svc_net *net, const struct sockaddr *sa, size_t len)
{
	unsigned char b[16];

	if (addr16(sa, len, b) < 0)
		return 0;
	mask(b, net->prefix);
	return memcmp(b, net->addr, 16) == 0;
}

int svc_outbound_policy_parse(int allow_private, const char *nets, struct svc_outbound_policy *out)
{
	const char *p = nets ? nets : "", *end;
	int error = 0;

	memset(out, 0, sizeof *out);
	out->allow_private = allow_private ? 1 : 0;
	while (*p) {
		while (*p == ',' || *p == ' ' || *p == '\t')
			p++;
		if (!*p)
			break;
		for (end = p; *end && *end != ',' && *end != ' ' && *end != '\t'; end++)
			;
		if (out->nnets == SVC_OUTBOUND_MAX_NETS)
			return SVC_E_VALIDATION;
		if (svc_net_parse(p, (size_t)(end - p), &out->nets[out->nnets]) == 0)
			out->nnets++;
		else
			error = SVC_E_VALIDATION;
		p = end;
	}
	return error;
}

int svc_outbound_policy_load(const struct svc_config *cfg, struct svc_outbound_policy *out)
{
	const char *nets = cfg->outbound_allow_nets ? cfg->outbound_allow_nets : "";

	if (svc_outbound_policy_parse(cfg->outbound_allow_private, nets, out) < 0)
		svc_log_error("SVC_OUTBOUND_ALLOW_NETS: \"%s\" holds a network that does not parse (or more than %d); "
			      "using the %zu that parsed", nets, SVC_OUTBOUND_MAX_NETS, out->nnets);
	return 0;
}

int svc_outbound_allowed(const struct svc_outbound_policy *policy, const struct sockaddr *sa, size_t len)
{
	enum svc_net_kind kind = svc_net_classify(sa, len);
	size_t i;

	if (sa && sa->sa_family != AF_INET && sa->sa_family != AF_INET6)
		return 0;
	for (i = 0; i < policy->nnets; i++) {
		if (svc_net_contains(&policy->nets[i], sa, len))
			return 1;
	}
	return kind == SVC_NET_PUBLIC || (kind == SVC_NET_PRIVATE && policy->allow_private);
}

/* Writes the address of `sa` as text into `out` ("?" when it has none). */
static void addr_text(const struct sockaddr *sa, size_t len, char *out, size_t size)
{
	const void *a = NULL;

	if (sa && sa->sa_family == AF_INET && len >= sizeof(struct sockaddr_in))
		a = &((const struct sockaddr_in *)(const void *)sa)->sin_addr;
	else if (sa && sa->sa_family == AF_INET6 && len >= sizeof(struct sockaddr_in6))
		a = &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr;
	if (!a || !inet_ntop(sa->sa_family, a, out, (socklen_t)size))
		snprintf(out, size, "?");
}

/* libcurl's CURLOPT_OPENSOCKETFUNCTION: opens the socket only for an allowed address. */
static curl_socket_t open_socket(void *data, curlsocktype purpose, struct curl_sockaddr *a)
{
	struct svc_outbound_guard *g = data;

	if (purpose != CURLSOCKTYPE_IPCXN || !svc_outbound_allowed(g->policy, &a->addr, a->addrlen)) {
		g->refused++;
		g->kind = svc_net_classify(&a->addr, a->addrlen);
		addr_text(&a->addr, a->addrlen, g->addr, sizeof g->addr);
		return CURL_SOCKET_BAD;
	}
	return socket(a->family, a->socktype | SOCK_CLOEXEC, a->protocol);
}

int svc_outbound_curl(CURL *curl, const struct svc_outbound_policy *policy, struct svc_outbound_guard *guard)
{
	memset(guard, 0, sizeof *guard);
	guard->policy = policy;
	if (curl_easy_setopt(curl, CURLOPT_OPENSOCKETFUNCTION, open_socket) != CURLE_OK ||
	    curl_easy_setopt(curl, CURLOPT_OPENSOCKETDATA, guard) != CURLE_OK ||
	    curl_easy_setopt(curl, CURLOPT_PROXY, "") != CURLE_OK)
		return SVC_E_INTERNAL;
	return 0;
}

int svc_outbound_check_url(const struct svc_outbound_policy *policy, const char *url, char *why, size_t why_size)
{
	CURLU *u = curl_url();
	char *host = NULL, *h;
	struct addrinfo hints, *res = NULL, *ai;
	size_t hlen;
	const char *kind;
	char text[48];
	int error = 0;

	if (why_size)
		why[0] = '\0';
	if (!u)
		return SVC_E_INTERNAL;
	if (curl_url_set(u, CURLUPART_URL, url, 0) != CURLUE_OK || curl_url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK)
		goto done;
	h = host;
	hlen = strlen(h);
	if (hlen >= 2 && h[0] == '[' && h[hlen - 1] == ']') {
		h[hlen - 1] = '\0';
		h++;
	}
	memset(&hints, 0, sizeof hints);
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	if (getaddrinfo(h, NULL, &hints, &res) != 0)
		goto done;
	for (ai = res; ai; ai = ai->ai_next) {
		if (svc_outbound_allowed(policy, ai->ai_addr, ai->ai_addrlen))
			continue;
		addr_text(ai->ai_addr, ai->ai_addrlen, text, sizeof text);
		kind = svc_net_kind_name(svc_net_classify(ai->ai_addr, ai->ai_addrlen));
		svc_log_info("outbound: %s resolves to %s (%s), which is not allowed", h, text, kind);
		if (why_size)
			snprintf(why, why_size, "%s is a %s address", h, kind);
		error = SVC_E_FORBIDDEN;
		break;
	}
done:
	if (res)
		freeaddrinfo(res);
	curl_free(host);
	curl_url_cleanup(u);
	return error;
}

/* ---- the one HTTP client ---- */

/* Sets the options every handle shares (after curl_easy_init() or curl_easy_reset()). */
static int common_options(CURL *c)
{
	if (curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L) != CURLE_OK ||
	    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, SVC_OUTBOUND_CONNECT_TIMEOUT_MS) != CURLE_OK ||
	    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, SVC_OUTBOUND_TIMEOUT_MS) != CURLE_OK ||
	    curl_easy_setopt(c, CURLOPT_USERAGENT, SVC_OUTBOUND_USER_AGENT) != CURLE_OK)
		return SVC_E_INTERNAL;
	return 0;
}

CURL *svc_outbound_handle(void)
{
	CURL *c = curl_easy_init();

	if (c && common_options(c) < 0) {
		curl_easy_cleanup(c);
		return NULL;
	}
	return c;
}

/* libcurl's CURLOPT_WRITEFUNCTION of every svc transfer: the body cap, then the sink or the buffer. */
static size_t on_write(char *ptr, size_t size, size_t nmemb, void *data)
{
	struct svc_outbound_xfer *x = data;
	size_t n = size * nmemb;
	int error;

	if (n > x->max_body - x->received) {
		x->too_large = 1;
		return 0; /* CURLE_WRITE_ERROR: the transfer ends at once */
	}
	x->received += n;
	if (x->sink) {
		if ((error = x->sink(x->sink_ctx, ptr, n)) < 0) {
			x->sink_error = error;
			return 0;
		}
		return n;
	}
	if ((error = svc_buf_add(&x->body, ptr, n)) < 0) {
		if (error == SVC_E_TOO_LARGE)
			x->too_large = 1;
		else
			x->sink_error = error;
		return 0;
	}
	return n;
}

int svc_outbound_setup(CURL *curl, const struct svc_outbound_req *req, struct svc_outbound_xfer *x)
{
	const char *method = req->method ? req->method : req->body ? "POST" : "GET";
	unsigned e = CURLE_OK; /* the OR of every option's CURLcode: 0 when all were set */

	memset(x, 0, sizeof *x);
	x->curl = curl;
	x->max_body = req->max_body;
	x->sink = req->sink;
	x->sink_ctx = req->sink_ctx;
	svc_buf_init(&x->body, req->max_body);
	if (!curl || !req->url || req->max_body == 0 || (req->reach == SVC_OUTBOUND_GUARDED && !req->policy))
		return SVC_E_INTERNAL;
	curl_easy_reset(curl);
	if (common_options(curl) < 0)
		return SVC_E_INTERNAL;
	if (req->reach == SVC_OUTBOUND_GUARDED && svc_outbound_curl(curl, req->policy, &x->guard) < 0)
		return SVC_E_INTERNAL;
	if (req->connect_timeout_ms > 0)
		e |= curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, req->connect_timeout_ms);
	if (req->timeout_ms > 0)
		e |= curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, req->timeout_ms);
	if (req->low_speed_secs > 0) {
		e |= curl_easy_setopt(curl, CURLOPT_LOW_SPEED_LIMIT, 1L);
		e |= curl_easy_setopt(curl, CURLOPT_LOW_SPEED_TIME, req->low_speed_secs);
	}
	if (req->user_agent)
		e |= curl_easy_setopt(curl, CURLOPT_USERAGENT, req->user_agent);
	e |= curl_easy_setopt(curl, CURLOPT_URL, req->url);
	e |= curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, req->protocols ? req->protocols : "http,https");
	e |= curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 0L);
	e |= curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, x->error);
	if (req->headers)
		e |= curl_easy_setopt(curl, CURLOPT_HTTPHEADER, req->headers);
	if (req->body) {
		e |= curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)req->body_len);
		e |= curl_easy_setopt(curl, CURLOPT_POSTFIELDS, req->body);
		if (strcmp(method, "POST") != 0)
			e |= curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, method);
	} else if (strcmp(method, "HEAD") == 0) {
		e |= curl_easy_setopt(curl, CURLOPT_NOBODY, 1L);
	} else if (strcmp(method, "POST") == 0) {
		e |= curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)0);
		e |= curl_easy_setopt(curl, CURLOPT_POSTFIELDS, "");
	} else if (strcmp(method, "GET") != 0) {
		e |= curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, method);
	}
	e |= curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_write);
	e |= curl_easy_setopt(curl, CURLOPT_WRITEDATA, x);
	return e == CURLE_OK ? 0 : SVC_E_INTERNAL;
}

int svc_outbound_perform(struct svc_outbound_xfer *x)
{
	char *ct = NULL;

	x->rc = curl_easy_perform(x->curl);
	curl_easy_getinfo(x->curl, CURLINFO_RESPONSE_CODE, &x->status);
	if (curl_easy_getinfo(x->curl, CURLINFO_CONTENT_TYPE, &ct) == CURLE_OK && ct)
		snprintf(x->content_type, sizeof x->content_type, "%s", ct);
	curl_easy_setopt(x->curl, CURLOPT_ERRORBUFFER, NULL); /* x may move or go once this returns */
	if (x->rc == CURLE_OK)
		return 0;
	if (x->sink_error < 0)
		return x->sink_error;
	if (x->too_large)
		return SVC_E_TOO_LARGE;
	if (x->guard.refused)
		return SVC_E_FORBIDDEN;
	return SVC_E_UNAVAILABLE;
}

int svc_outbound_request(const struct svc_outbound_req *req, struct svc_outbound_xfer *x)
{
	CURL *c = svc_outbound_handle();
	int error;

	if ((error = svc_outbound_setup(c, req, x)) == 0)
		error = svc_outbound_perform(x);
	if (c)
		curl_easy_cleanup(c);
	x->curl = NULL;
	return error;
}

void svc_outbound_xfer_dispose(struct svc_outbound_xfer *x)
{
	svc_buf_wipe(&x->body);
}
