/* outbound.h: every outward libcurl transfer (HTTP and SMTP): the one handle constructor, timeouts, the user agent,
 * the capped answer with its one write callback, and the SSRF guard of requests to names users choose. */
#ifndef SVC_OUTBOUND_H
#define SVC_OUTBOUND_H

#include <stddef.h>

#include <curl/curl.h>
#include <sys/socket.h>

#include "core/config.h"
#include "core/util.h"

/*
 * What an address is, as far as reaching it from svc goes. Only
 * SVC_NET_PUBLIC is reachable by default; SVC_NET_PRIVATE also with
 * SVC_OUTBOUND_ALLOW_PRIVATE=1; any address also when it is inside one of the
 * policy's exception networks (SVC_OUTBOUND_ALLOW_NETS).
 */
enum svc_net_kind {
	SVC_NET_PUBLIC = 0,
	SVC_NET_PRIVATE,     /* 10/8, 172.16/12, 192.168/16 (RFC 1918), fc00::/7 (RFC 4193), fec0::/10 */
	SVC_NET_LOOPBACK,    /* 127/8, ::1 */
	SVC_NET_LINKLOCAL,   /* 169.254/16 (the cloud metadata address), fe80::/10 */
	SVC_NET_UNSPECIFIED, /* 0.0.0.0/8 ("this network": Linux connects 0.0.0.0 to the host itself), :: */
	SVC_NET_SHARED,      /* 100.64/10, carrier-grade NAT (RFC 6598) */
	SVC_NET_MULTICAST,   /* 224/4, ff00::/8 */
	SVC_NET_RESERVED,    /* 240/4 with 255.255.255.255, 192.0.0/24, 198.18/15, ::/96 (IPv4-compatible), other families */
	SVC_NET__MAX
};

/* One network: an IPv6 address (IPv4 as ::ffff:a.b.c.d) and its prefix length, 0..128. */
struct svc_net {
	unsigned char addr[16];
	unsigned prefix;
};

#define SVC_OUTBOUND_MAX_NETS 32

/* Which addresses outward requests to users' names may reach (svc_outbound_policy_load()). */
struct svc_outbound_policy {
	int allow_private;                         /* 1: SVC_NET_PRIVATE is allowed */
	size_t nnets;
	struct svc_net nets[SVC_OUTBOUND_MAX_NETS]; /* always allowed, whatever their kind */
};

/*
 * Classifies the address `sa` of `len` bytes (AF_INET or AF_INET6). An
 * IPv6 address that carries an IPv4 one is classified by the IPv4 address:
 * IPv4-mapped ::ffff:0:0/96 (an AF_INET6 socket reaches the IPv4 address),
 * NAT64 64:ff9b::/96 (RFC 6052) and 6to4 2002::/16 (RFC 3056). Anything
 * else, or a short `len`, is SVC_NET_RESERVED. RFC 6890 (special-purpose
 * address registries).
 */
enum svc_net_kind svc_net_classify(const struct sockaddr *sa, size_t len);

/* A short lower-case name of `kind` for messages and logs ("loopback", "link-local", ...). */
const char *svc_net_kind_name(enum svc_net_kind kind);

/*
 * Parses one network of `len` bytes at `s`: "a.b.c.d/n" (n 0..32),
 * "x:y::z/n" (n 0..128), or a bare address (a host: /32 or /128). IPv4 is
 * stored mapped (::ffff:a.b.c.d/96+n). Host bits beyond the prefix are
 * cleared. Returns 0 and fills `out`, or SVC_E_VALIDATION.
 */
int svc_net_parse(const char *s, size_t len, struct svc_net *out);

/* Returns 1 when the address `sa` of `len` bytes is inside `net`, else 0. */
int svc_net_contains(const struct svc_net *net, const struct sockaddr *sa, size_t len);

/*
 * Fills `out` from `allow_private` and `nets`, a list of networks separated
 * by commas or white space (svc_net_parse() each; "" = none). Returns 0, or
 * SVC_E_VALIDATION for a network that does not parse or more than
 * SVC_OUTBOUND_MAX_NETS of them (`out` is then left with the ones before).
 */
int svc_outbound_policy_parse(int allow_private, const char *nets, struct svc_outbound_policy *out);

/*
 * Fills `out` from the settings SVC_OUTBOUND_ALLOW_PRIVATE (1 = allow
 * private ranges; default 0) and SVC_OUTBOUND_ALLOW_NETS of `cfg`. A list
 * that does not parse is logged and its bad entries ignored (the policy
 * stays as strict as the part that parsed). Returns 0.
 */
int svc_outbound_policy_load(const struct svc_config *cfg, struct svc_outbound_policy *out);

/* Returns 1 when `policy` allows connecting to the address `sa` of `len` bytes, else 0. */
int svc_outbound_allowed(const struct svc_outbound_policy *policy, const struct sockaddr *sa, size_t len);

/*
 * What one guarded transfer refused. Filled by the socket callback that
 * svc_outbound_curl() installs; the caller owns it, and it must live as long
 * as the handle may connect.
 */
struct svc_outbound_guard {
	const struct svc_outbound_policy *policy; /* borrowed */
	int refused;                              /* number of addresses refused */
	enum svc_net_kind kind;                   /* the last refused address's kind */
	char addr[48];                            /* the last refused address, as text */
};

/*
 * Guards the transfers of `curl`: every socket libcurl opens for a
 * connection (to each address a name resolves to, on redirects too, and
 * Happy Eyeballs' second family) goes through a callback that refuses an
 * address `guard->policy` does not allow, so the check is on the address
 * actually connected to and DNS rebinding cannot change it. Also turns off
 * proxies from the environment (the proxy would connect instead of svc).
 * `guard` is reset. Call it after curl_easy_reset(), before
 * curl_easy_perform(). A refused connection ends the transfer with
 * CURLE_COULDNT_CONNECT and `guard->refused` > 0. Returns 0 or
 * SVC_E_INTERNAL (a libcurl option failed).
 */
int svc_outbound_curl(CURL *curl, const struct svc_outbound_policy *policy, struct svc_outbound_guard *guard);

/*
 * Checks the host of `url` (http or https) now, for an early answer when
 * the URL is saved: resolves it (getaddrinfo; the system's resolver
 * timeout) and returns SVC_E_FORBIDDEN when any of its addresses is not
 * allowed by `policy`, with the host and the address's kind written into
 * `why` (of `why_size` bytes) as "localhost is a loopback address" (the
 * address itself is only logged: it would map the instance's network). A name
 * that does not resolve now, or a URL without a host, returns 0: the
 * connection is checked again whenever it is made (svc_outbound_curl()).
 * Returns 0, SVC_E_FORBIDDEN or SVC_E_INTERNAL.
 */
int svc_outbound_check_url(const struct svc_outbound_policy *policy, const char *url, char *why, size_t why_size);

/* ---- the one HTTP client ---- */

/*
 * Whose address a transfer goes to, which decides whether the SSRF guard
 * checks its connections. Every request says it (the zero value is the
 * guarded one, so a forgotten field fails closed: no policy, no transfer).
 */
enum svc_outbound_reach {
	SVC_OUTBOUND_GUARDED = 0, /* a name a user chose (a workspace's provider, an integration host, a custom
				   * domain, an integration's token endpoint): every connection is checked
				   * against `policy` (svc_outbound_curl()), and proxies from the environment
				   * are not used */
	SVC_OUTBOUND_OPERATOR,    /* an address from the instance's settings (sign-in OAuth endpoints, the
				   * instance's model provider, the SMTP server): the operator's choice, which
				   * may well be on the LAN or loopback; not checked */
	SVC_OUTBOUND_INTERNAL,    /* svc's own daemon (svc-wsd's /internal/ endpoints, usually on loopback,
				   * SVC_WSD_INTERNAL_URL): deliberately not checked */
};

/*
 * A sink for a streamed answer: gets each piece of the body as it arrives
 * (`len` bytes at `data`, not NUL-terminated), after the body cap was
 * checked. Returns 0 to go on, or a negative svc_err that ends the transfer
 * at once (svc_outbound_perform() returns it).
 */
typedef int (*svc_outbound_sink_fn)(void *ctx, const char *data, size_t len);

#define SVC_OUTBOUND_USER_AGENT "svc"
#define SVC_OUTBOUND_CONNECT_TIMEOUT_MS 10000L /* when a request gives none */
#define SVC_OUTBOUND_TIMEOUT_MS 30000L         /* when a request gives none */

/* One outward HTTP request (svc_outbound_setup()). Everything is borrowed for the transfer's time. */
struct svc_outbound_req {
	const char *url;                          /* http:// or https:// */
	const char *method;                       /* NULL: POST when `body` is set, else GET; "HEAD" sends no body back */
	const char *body;                         /* NULL: none */
	size_t body_len;                          /* bytes of `body` */
	const struct curl_slist *headers;         /* extra request headers, or NULL */
	const char *protocols;                    /* libcurl's list: NULL = "http,https"; "https" for https only */
	enum svc_outbound_reach reach;            /* whose address it is */
	const struct svc_outbound_policy *policy; /* SVC_OUTBOUND_GUARDED: required; else ignored */
	long connect_timeout_ms;                  /* 0: SVC_OUTBOUND_CONNECT_TIMEOUT_MS */
	long timeout_ms;                          /* the whole transfer; 0: SVC_OUTBOUND_TIMEOUT_MS */
	long low_speed_secs;                      /* > 0: ends a transfer that receives nothing for this long */
	size_t max_body;                          /* bytes of answer body accepted (required, > 0); more ends the
						   * transfer with SVC_E_TOO_LARGE */
	svc_outbound_sink_fn sink;                /* NULL: the body is collected into the transfer's `body` */
	void *sink_ctx;                           /* passed to `sink` */
	const char *user_agent;                   /* NULL: SVC_OUTBOUND_USER_AGENT */
};

/*
 * One transfer's state and outcome, owned by the caller; it must stay where
 * it is from svc_outbound_setup() until the transfer ends (libcurl holds
 * pointers into it), and be disposed with svc_outbound_xfer_dispose().
 */
struct svc_outbound_xfer {
	CURL *curl;                        /* the handle (borrowed; owned by svc_outbound_request() itself) */
	struct svc_outbound_guard guard;   /* what the SSRF guard refused (guarded requests) */
	struct svc_buf body;               /* the answer, NUL-terminated, when no sink was given */
	size_t received;                   /* body bytes received */
	size_t max_body;
	svc_outbound_sink_fn sink;
	void *sink_ctx;
	int too_large;                     /* 1: the body passed max_body */
	int sink_error;                    /* what the sink returned when it stopped the transfer */
	CURLcode rc;                       /* libcurl's answer, for messages (curl_easy_strerror) */
	long status;                       /* the HTTP status; 0 when none arrived */
	char content_type[128];            /* the answer's Content-Type, "" when none */
	char error[CURL_ERROR_SIZE];       /* libcurl's message of a failure, "" when none */
};

/*
 * Returns a new libcurl handle with the options every svc transfer shares
 * (no signals, the default timeouts, the user agent), or NULL when out of
 * memory. The one curl_easy_init() of the tree (tests/lint.sh): HTTP
 * requests go on through svc_outbound_setup(); the SMTP sender (mail.c) adds
 * its own options. Free it with curl_easy_cleanup().
 */
CURL *svc_outbound_handle(void);

/*
 * Prepares `curl` (from svc_outbound_handle(); reset first, so a handle may
 * serve several requests and keep its connections) for `req`: the URL,
 * method, body and headers, the protocols (redirects are never followed),
 * the timeouts, the user agent, the SSRF guard when `req->reach` is
 * SVC_OUTBOUND_GUARDED, and the one write callback, which caps the body at
 * `req->max_body` and collects it into `x->body` or passes it to
 * `req->sink`. `x` is reset. The caller may set more options afterwards
 * (header and progress callbacks) and then calls svc_outbound_perform().
 * Returns 0, or SVC_E_INTERNAL (a guarded request without a policy, no URL,
 * no body cap, or a libcurl option failed).
 */
int svc_outbound_setup(CURL *curl, const struct svc_outbound_req *req, struct svc_outbound_xfer *x);

/*
 * Runs the transfer prepared by svc_outbound_setup() and fills x->rc,
 * x->status, x->content_type and x->error. Returns 0 when an answer arrived
 * whole (whatever its HTTP status), else: the sink's error; SVC_E_TOO_LARGE
 * (the body passed its cap); SVC_E_FORBIDDEN (the guard refused an address
 * and no connection was made: x->guard says which); SVC_E_UNAVAILABLE (timeout, no connection,
 * TLS or protocol failure: x->rc and x->error say which).
 */
int svc_outbound_perform(struct svc_outbound_xfer *x);

/*
 * svc_outbound_handle(), svc_outbound_setup() and svc_outbound_perform() of
 * one request on a handle of its own, which is freed before it returns
 * (x->curl is then NULL). Returns as svc_outbound_perform(), or
 * SVC_E_INTERNAL. Dispose `x` afterwards either way.
 */
int svc_outbound_request(const struct svc_outbound_req *req, struct svc_outbound_xfer *x);

/* Frees the collected body of `x`, cleansing its bytes (an answer may hold tokens). Does not free x->curl. */
void svc_outbound_xfer_dispose(struct svc_outbound_xfer *x);

#endif
