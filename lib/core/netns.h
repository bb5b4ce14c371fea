/* netns.h: a network namespace whose only way out is a listener that a process outside serves. */
#ifndef SVC_CORE_NETNS_H
#define SVC_CORE_NETNS_H

/*
 * The shape (docs/operations.md "The thumbnails' network"): a sandboxed
 * process (Chromium, a build step) gets a network namespace of its own with
 * only `lo`, up. Inside it one TCP socket listens on 127.0.0.1:<port>; its
 * descriptor is handed out to the parent, which accepts on it in the host's
 * namespace (a socket keeps the namespace it was made in), so every
 * connection the sandbox makes to 127.0.0.1:<port> reaches the parent's
 * proxy and nothing else leaves: no other address is routed, no UDP, no DNS.
 *
 *	int sp[2];
 *	socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp);
 *	if (fork() == 0) {                  // the child, its uid already dropped
 *		svc_netns_isolate(3128, sp[1]);  // now alone in its own namespace
 *		execve(bwrap, ...);              // without --unshare-net
 *	}
 *	close(sp[1]);
 *	svc_netns_recv_listener(sp[0], 10000, &lfd);  // accept(lfd) serves the sandbox
 */

/*
 * For a child about to exec the sandboxed program (after it dropped to its
 * user): moves the calling process into a new user namespace (mapping only
 * its own uid and gid, setgroups denied; user_namespaces(7)) and a new network
 * namespace (network_namespaces(7)), brings `lo` up, listens on TCP
 * 127.0.0.1:`port` (1..65535) and sends that listening descriptor over the
 * AF_UNIX socket `send_sock` (SCM_RIGHTS, unix(7)), then closes both.
 * Returns 0, or a negative errno (EPERM when user namespaces are off).
 * Not thread-safe: call it in a single-threaded child only.
 */
int svc_netns_isolate(unsigned port, int send_sock);

/*
 * The parent's side: waits at most `timeout_ms` for the listening descriptor
 * svc_netns_isolate() sends on `recv_fd`, and sets *out_fd to it (the
 * caller's to close; close-on-exec). Returns 0, SVC_E_UNAVAILABLE when the
 * child sent none (it failed, or exited first) or the time ran out.
 */
int svc_netns_recv_listener(int recv_fd, long timeout_ms, int *out_fd);

/*
 * For a child about to exec (after it dropped to its user): the first half of
 * svc_netns_isolate(): a new user namespace mapping only its own uid and gid,
 * a new network namespace with `lo` up, and no listener. Everything it and
 * its children make from then on lives there: a TCP listener on 127.0.0.1
 * inside is reachable only through sockets made in this namespace (below).
 * Returns 0 or a negative errno. Not thread-safe: a single-threaded child only.
 */
int svc_netns_alone(void);

/*
 * The socket factory of such a namespace: a process left in it (a child
 * that called svc_netns_alone(), svc-devd's dev servers, docs/operations.md
 * "Dev servers") answers each byte read from the AF_UNIX stream socket
 * `sock` with a fresh, unconnected AF_INET TCP socket made in its namespace
 * (SCM_RIGHTS), so the parent can connect() it to a listener on 127.0.0.1
 * inside (a socket keeps the namespace it was made in; network_namespaces(7)).
 * Polls `stop(arg)` (may be NULL) every 200 ms and returns 0 when it says 1
 * or when `sock` is closed; a negative errno when a call failed. Uses system
 * calls only: fine in a child forked from a threaded process.
 */
int svc_netns_factory_serve(int sock, int (*stop)(void *arg), void *arg);

/*
 * The parent's side of the factory: asks it on `sock` for a socket and waits
 * at most `timeout_ms` for it. Sets *out_fd (the caller's to close;
 * close-on-exec). Returns 0 or SVC_E_UNAVAILABLE (the factory is gone).
 * Blocking: a factory answers within microseconds while it lives.
 */
int svc_netns_factory_socket(int sock, long timeout_ms, int *out_fd);

#endif
