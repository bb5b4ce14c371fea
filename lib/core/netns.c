/* netns.c: a network namespace with only lo, and a listener inside it that the parent serves (netns.h). */
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/err.h"
#include "core/netns.h"
#include "core/util.h"

/* Writes `text` to the /proc file `path`; 0 or -errno. */
static int write_proc(const char *path, const char *text)
{
	size_t len = strlen(text);
	int fd = open(path, O_WRONLY | O_CLOEXEC), e = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, text, len) != (ssize_t)len)
		e = -errno;
	close(fd);
	return e ? e : 0;
}

/* Brings the loopback interface of the current network namespace up (netdevice(7) SIOCSIFFLAGS); 0 or -errno. */
static int loopback_up(void)
{
	struct ifreq ifr;
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), e = 0;

	if (s < 0)
		return -errno;
	memset(&ifr, 0, sizeof ifr);
	memcpy(ifr.ifr_name, "lo", 3);
	if (ioctl(s, SIOCGIFFLAGS, &ifr) < 0)
		e = -errno;
	else {
		ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
		if (ioctl(s, SIOCSIFFLAGS, &ifr) < 0)
			e = -errno;
	}
	close(s);
	return e;
}

/* Sends descriptor `fd` over the AF_UNIX socket `sock` (one byte with SCM_RIGHTS); 0 or -errno. */
static int send_fd(int sock, int fd)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int))];
	} c;
	char byte = 'L';
	struct iovec iov = { &byte, 1 };
	struct msghdr m;
	struct cmsghdr *h;

	memset(&m, 0, sizeof m);
	memset(&c, 0, sizeof c);
	m.msg_iov = &iov;
	m.msg_iovlen = 1;
	m.msg_control = c.buf;
	m.msg_controllen = sizeof c.buf;
	h = CMSG_FIRSTHDR(&m);
	h->cmsg_level = SOL_SOCKET;
	h->cmsg_type = SCM_RIGHTS;
	h->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(h), &fd, sizeof fd);
	return sendmsg(sock, &m, MSG_NOSIGNAL) == 1 ? 0 : -errno;
}

int svc_netns_isolate(unsigned port, int send_sock)
{
	char map[64];
	struct sockaddr_in a;
	uid_t uid = geteuid();
	gid_t gid = getegid();
	int lfd = -1, e, one = 1;

	if (port == 0 || port > 65535)
		return -EINVAL;
	/* a user namespace of its own gives the capability to make the network one without being root; a
	 * process that just changed its user is not dumpable, and its /proc/self files are root's then */
	if (prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) < 0 || unshare(CLONE_NEWUSER | CLONE_NEWNET) < 0)
		return -errno;
	snprintf(map, sizeof map, "%u %u 1\n", (unsigned)uid, (unsigned)uid);
	if ((e = write_proc("/proc/self/setgroups", "deny")) < 0 || (e = write_proc("/proc/self/uid_map", map)) < 0)
		return e;
	snprintf(map, sizeof map, "%u %u 1\n", (unsigned)gid, (unsigned)gid);
	if ((e = write_proc("/proc/self/gid_map", map)) < 0 || (e = loopback_up()) < 0)
		return e;
	memset(&a, 0, sizeof a);
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	a.sin_port = htons((unsigned short)port);
	lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (lfd < 0 || setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0 ||
	    bind(lfd, (struct sockaddr *)&a, sizeof a) < 0 || listen(lfd, 64) < 0)
		e = -errno;
	else
		e = send_fd(send_sock, lfd);
	if (lfd >= 0)
		close(lfd);
	close(send_sock);
	return e;
}

int svc_netns_recv_listener(int recv_fd, long timeout_ms, int *out_fd)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int))];
	} c;
	char byte;
	struct iovec iov = { &byte, 1 };
	struct msghdr m;
	struct cmsghdr *h;
	struct pollfd p = { recv_fd, POLLIN, 0 };
	int64_t deadline = svc_mono_ms() + timeout_ms;
	int fd, r;

	for (;;) {
		int64_t left = deadline - svc_mono_ms();
		if (left <= 0)
			return SVC_E_UNAVAILABLE;
		r = poll(&p, 1, (int)(left > 1000 ? 1000 : left));
		if (r > 0)
			break;
		if (r < 0 && errno != EINTR)
			return SVC_E_UNAVAILABLE;
	}
	memset(&m, 0, sizeof m);
	m.msg_iov = &iov;
	m.msg_iovlen = 1;
	m.msg_control = c.buf;
	m.msg_controllen = sizeof c.buf;
	if (recvmsg(recv_fd, &m, MSG_CMSG_CLOEXEC) != 1 || (m.msg_flags & MSG_CTRUNC))
		return SVC_E_UNAVAILABLE;
	h = CMSG_FIRSTHDR(&m);
	if (!h || h->cmsg_level != SOL_SOCKET || h->cmsg_type != SCM_RIGHTS || h->cmsg_len != CMSG_LEN(sizeof(int)))
		return SVC_E_UNAVAILABLE;
	memcpy(&fd, CMSG_DATA(h), sizeof fd);
	*out_fd = fd;
	return 0;
}
