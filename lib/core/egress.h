/* egress.h: the registry-only forward proxy a sandbox's install step reaches the package registry through. */
#ifndef SVC_CORE_EGRESS_H
#define SVC_CORE_EGRESS_H

#include <stddef.h>
#include <sys/socket.h>

#include "core/outbound.h"

/*
 * The shape (issue 27, "The network: only the package registry"): the
 * install step runs in a network namespace of its own (lib/core/netns.h)
 * whose only way out is 127.0.0.1:<port> there, a listener whose descriptor
 * the parent serves. svc_egress_start() serves it in a thread of the parent:
 * it answers `CONNECT <host>:<port> HTTP/1.1` (RFC 9110 §9.3.6) only for a
 * host and port of its allow-list (the registry's, from SVC_NPM_REGISTRY),
 * resolves the host itself, refuses when any address it resolves to is not
 * public (loopback, RFC 1918 and ULA private ranges, link-local 169.254/16
 * and fe80::/10, ... : the SSRF guard of lib/core/outbound.h), connects, and
 * relays bytes both ways (TLS passes through untouched). Everything else
 * (another host or port, `GET http://...` proxying, a malformed request)
 * gets `403 Forbidden` with a one-line reason as its body, and the
 * connection is closed.
 *
 *	int sp[2], lfd;
 *	socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp);
 *	pid = fork();  // the child: svc_netns_isolate(3128, sp[1]), exec npm
 *	               //   with --proxy/--https-proxy http://127.0.0.1:3128
 *	svc_netns_recv_listener(sp[0], 10000, &lfd);
 *	svc_egress_allow_registry("https://registry.npmjs.org/", allow, sizeof allow);
 *	struct svc_egress_opts o = { allow };
 *	svc_egress_start(&o, lfd, &eg);  // eg owns lfd now
 *	waitpid(pid, ...);
 *	svc_egress_stop(eg);
 */

/*
 * A resolver: writes at most `max` addresses of `host` (with `port` set in
 * each) into `out`, their lengths into `lens`, and their number into *n.
 * Returns 0, or -1 when the name does not resolve. The default is
 * getaddrinfo(3); tests give one that maps names to local doubles.
 */
typedef int (*svc_egress_resolve_fn)(void *arg, const char *host, unsigned port, struct sockaddr_storage *out,
				     socklen_t *lens, size_t max, size_t *n);

/* What the proxy allows and how much of it; filled by the caller from its settings. */
struct svc_egress_opts {
	const char *allow;       /* "host[:port]" entries separated by commas or spaces (port 443 when absent),
				    compared without case; e.g. "registry.npmjs.org" (svc_egress_allow_registry()) */
	unsigned max_tunnels;    /* tunnels open at once; one more is answered 503 (0: 32) */
	unsigned idle_secs;      /* a tunnel, or a request being read, with no byte either way for this long is
				    closed (0: 60) */
	unsigned connect_secs;   /* to connect to the registry (0: 15) */
	const struct svc_outbound_policy *policy; /* which addresses the registry's name may resolve to;
						     NULL: public ones only. A test (or an admin's registry
						     mirror on a private network) passes a wider one */
	svc_egress_resolve_fn resolve; /* NULL: getaddrinfo */
	void *resolve_arg;
};

/* What a running proxy has done so far (svc_egress_stats()). */
struct svc_egress_stats {
	unsigned long accepted;  /* connections accepted */
	unsigned long tunnels;   /* CONNECTs relayed */
	unsigned long refused;   /* answered 403 */
	unsigned long failed;    /* allowed, but the registry could not be reached (502) or too many tunnels (503) */
	unsigned long long bytes_up, bytes_down; /* relayed to the registry, and back */
	int open;                /* tunnels open now */
};

struct svc_egress;

/*
 * Writes the allow-list entry of the npm registry `url` into `out` (of
 * `max` bytes): "https://registry.npmjs.org/" gives "registry.npmjs.org:443",
 * "https://npm.example.com:8443/npm/" gives "npm.example.com:8443". Only
 * https registries can be reached through the proxy (npm tunnels https
 * through CONNECT; plain http would be proxied as GET, which is refused).
 * Returns 0, or SVC_E_VALIDATION for anything else (http, no host, user
 * info, a port out of range).
 */
int svc_egress_allow_registry(const char *url, char *out, size_t max);

/*
 * Starts serving connections accepted on `listen_fd` (a listening TCP
 * socket, e.g. from svc_netns_recv_listener(); owned by the proxy from now
 * on, closed by svc_egress_stop(), also on failure) in a thread of its own,
 * and one thread per connection, at most o->max_tunnels. `o` is copied
 * (o->allow, o->policy and o->resolve_arg are borrowed: they must outlive
 * the proxy). Refusals are logged ("egress: refused CONNECT 10.0.0.1:443:
 * ..."). Returns 0 with *out set, SVC_E_VALIDATION for an allow-list entry
 * that does not parse (or none), or SVC_E_INTERNAL.
 */
int svc_egress_start(const struct svc_egress_opts *o, int listen_fd, struct svc_egress **out);

/* Copies the counters of `eg` into `out` (thread-safe). */
void svc_egress_stats(struct svc_egress *eg, struct svc_egress_stats *out);

/*
 * Stops `eg`: closes its listener, ends every open tunnel, waits for its
 * threads and frees it. NULL is allowed. Returns 0.
 */
int svc_egress_stop(struct svc_egress *eg);

#endif
