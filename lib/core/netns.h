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

#endif
