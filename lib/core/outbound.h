/* outbound.h: the SSRF guard of outward requests to names users choose (which addresses may be reached). */
#ifndef SVC_OUTBOUND_H
#define SVC_OUTBOUND_H

#include <stddef.h>

#include <curl/curl.h>
#include <sys/socket.h>

#include "core/config.h"

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

#endif
