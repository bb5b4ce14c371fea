/* test_thumbnail.c: unit tests of lib/project/thumbnail.c: the generated PNG, Chromium failures, and the confining page server. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <signal.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CUnit/CUnit.h>
#include <png.h>

#include "core/err.h"
#include "core/fsx.h"
#include "core/util.h"
#include "project/thumbnail.h"
#include "unit.h"

#define FONT "/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf"
#define ID1 "11111111-1111-4111-8111-111111111111"
#define ID2 "22222222-2222-4222-8222-222222222222"

/* Decodes a PNG in memory to RGB; returns the pixels (malloc'd) and sets w, h; NULL when it is not a PNG. */
static unsigned char *decode(const unsigned char *png, size_t len, unsigned *w, unsigned *h)
{
	png_image img;
	unsigned char *buf;

	memset(&img, 0, sizeof img);
	img.version = PNG_IMAGE_VERSION;
	if (!png_image_begin_read_from_memory(&img, png, len))
		return NULL;
	img.format = PNG_FORMAT_RGB;
	buf = malloc(PNG_IMAGE_SIZE(img));
	if (!buf || !png_image_finish_read(&img, NULL, buf, 0, NULL)) {
		free(buf);
		png_image_free(&img);
		return NULL;
	}
	*w = img.width;
	*h = img.height;
	return buf;
}

static const unsigned char *px(const unsigned char *rgb, unsigned w, unsigned x, unsigned y)
{
	return rgb + ((size_t)y * w + x) * 3;
}

static void test_thumbnail_fallback_is_a_png_of_the_thumbnail_size(void)
{
	unsigned char *png = NULL, *rgb;
	size_t len = 0;
	unsigned w = 0, h = 0;

	CU_ASSERT_EQUAL(svc_thumbnail_fallback(ID1, "Todo app", FONT, &png, &len), 0);
	CU_ASSERT(len > 8 && png && memcmp(png, "\x89PNG\r\n\x1a\n", 8) == 0);
	rgb = png ? decode(png, len, &w, &h) : NULL;
	CU_ASSERT_PTR_NOT_NULL(rgb);
	CU_ASSERT_EQUAL(w, SVC_THUMB_W);
	CU_ASSERT_EQUAL(h, SVC_THUMB_H);
	free(rgb);
	free(png);
}

static void test_thumbnail_fallback_colour_comes_from_the_id_and_text_is_drawn(void)
{
	unsigned char *p1 = NULL, *p2 = NULL, *p3 = NULL, *r1, *r2, *r3;
	size_t l1 = 0, l2 = 0, l3 = 0, x, y, white = 0;
	unsigned w, h;

	CU_ASSERT_EQUAL(svc_thumbnail_fallback(ID1, "Hello", FONT, &p1, &l1), 0);
	CU_ASSERT_EQUAL(svc_thumbnail_fallback(ID2, "Hello", FONT, &p2, &l2), 0);
	CU_ASSERT_EQUAL(svc_thumbnail_fallback(ID1, "Hello", "/nonexistent/font.ttf", &p3, &l3), 0);
	r1 = decode(p1, l1, &w, &h);
	r2 = decode(p2, l2, &w, &h);
	r3 = decode(p3, l3, &w, &h);
	CU_ASSERT(r1 && r2 && r3);
	if (r1 && r2 && r3) {
		/* the same id gives the same image; another id another background */
		CU_ASSERT(memcmp(px(r1, w, 0, 0), px(r2, w, 0, 0), 3) != 0);
		CU_ASSERT(memcmp(px(r1, w, 0, 0), px(r3, w, 0, 0), 3) == 0);
		/* white text in the middle band, none without a font */
		for (y = h / 3; y < 2 * h / 3; y++)
			for (x = 0; x < w; x++)
				white += px(r1, w, (unsigned)x, (unsigned)y)[0] == 255 && px(r1, w, (unsigned)x, (unsigned)y)[2] == 255;
		CU_ASSERT(white > 200);
		for (y = 0; y < h; y++)
			for (x = 0; x < w; x++)
				if (memcmp(px(r3, w, (unsigned)x, (unsigned)y), px(r3, w, 0, 0), 3) != 0)
					CU_FAIL("the image without a font is not one colour");
	}
	free(r1);
	free(r2);
	free(r3);
	free(p1);
	free(p2);
	free(p3);
}

static void test_thumbnail_fallback_long_and_unicode_names(void)
{
	char name[600];
	unsigned char *png = NULL;
	size_t len = 0, i;

	for (i = 0; i + 4 < sizeof name; i += 4)
		memcpy(name + i, "\xF0\x9F\x98\x80", 4);
	name[i] = '\0';
	CU_ASSERT_EQUAL(svc_thumbnail_fallback(ID1, name, FONT, &png, &len), 0);
	free(png);
	png = NULL;
	CU_ASSERT_EQUAL(svc_thumbnail_fallback(ID1, "Caf\xC3\xA9 \xE6\x97\xA5\xE6\x9C\xAC with a very long name that does not fit on one line at all, not even close",
					       FONT, &png, &len), 0);
	free(png);
	png = NULL;
	CU_ASSERT_EQUAL(svc_thumbnail_fallback(ID1, "", FONT, &png, &len), 0);
	free(png);
}

/* Makes a temporary project directory holding index.html with `html`; returns 0 and the path in dir. */
/* The sandbox of the tests: Debian's bubblewrap, and nobody when the tests run as root. */
/* SVC_THUMB_UID's default, and the builds' default bounds (SVC_BUILD_MEMORY_MB, _PROCS, _CPU_PERCENT) */
static const struct svc_thumb_sandbox sandbox = { "/usr/bin/bwrap", 65533, 2048, 256, 100, NULL };

static int make_site(char *dir, const char *html)
{
	char path[256];
	FILE *f;

	if (!mkdtemp(dir))
		return -1;
	snprintf(path, sizeof path, "%s/index.html", dir);
	f = fopen(path, "w");
	if (!f)
		return -1;
	fputs(html, f);
	fclose(f);
	return 0;
}

static void test_thumbnail_chromium_failures(void)
{
	char dir[] = "/tmp/svc-thumb-test-XXXXXX", why[256];
	unsigned char *png = NULL;
	size_t len = 0;

	CU_ASSERT_EQUAL(make_site(dir, "<p>x</p>"), 0);
	CU_ASSERT_EQUAL(svc_thumbnail_chromium("/nonexistent/chromium", &sandbox, dir, 5000, &png, &len, why, sizeof why),
			SVC_E_UNAVAILABLE);
	CU_ASSERT(strstr(why, "could not be started") != NULL);
	CU_ASSERT_PTR_NULL(png);
	CU_ASSERT_EQUAL(svc_thumbnail_chromium("/bin/false", &sandbox, dir, 5000, &png, &len, why, sizeof why), SVC_E_UNAVAILABLE);
	CU_ASSERT(strstr(why, "status 1") != NULL);
	CU_ASSERT_EQUAL(svc_thumbnail_chromium("/bin/sleep", &sandbox, dir, 300, &png, &len, why, sizeof why), SVC_E_UNAVAILABLE);
	{
		/* without bubblewrap Chromium is not run at all (never unconfined) */
		const struct svc_thumb_sandbox none = { "/nonexistent/bwrap", 65534, 0, 0, 0, NULL };
		CU_ASSERT_EQUAL(svc_thumbnail_chromium("/bin/true", &none, dir, 5000, &png, &len, why, sizeof why),
				SVC_E_UNAVAILABLE);
		CU_ASSERT(strstr(why, "bubblewrap") != NULL);
	}
	svc_fsx_remove_tree(dir);
	CU_ASSERT_EQUAL(svc_thumbnail_chromium("chromium", &sandbox, dir, 5000, &png, &len, why, sizeof why), SVC_E_NOT_FOUND);
}

/*
 * With the real Chromium (when installed): the page is rendered, and a file
 * outside the project (here a green page in a sibling directory) cannot be
 * framed: the page is red, a loaded frame would make the middle green.
 */
static void test_thumbnail_chromium_renders_and_cannot_reach_local_files(void)
{
	char dir[] = "/tmp/svc-thumb-test-XXXXXX", other[] = "/tmp/svc-thumb-other-XXXXXX", why[256], html[512];
	char green[300];
	unsigned char *png = NULL, *rgb = NULL;
	const unsigned char *mid;
	size_t len = 0;
	unsigned w = 0, h = 0;
	FILE *f;
	int err;

	if (access("/usr/bin/chromium", X_OK) != 0) {
		fprintf(stderr, "test_thumbnail: /usr/bin/chromium not installed; Chromium rendering not checked\n");
		return;
	}
	CU_ASSERT_PTR_NOT_NULL(mkdtemp(other));
	snprintf(green, sizeof green, "%s/green.html", other);
	f = fopen(green, "w");
	CU_ASSERT_PTR_NOT_NULL(f);
	if (f) {
		fputs("<html><body style=\"margin:0;background:#00ff00\"></body></html>", f);
		fclose(f);
	}
	snprintf(html, sizeof html,
		 "<html><body style=\"margin:0;background:#ff0000\">"
		 "<iframe src=\"file://%s\" style=\"position:fixed;top:0;left:0;width:100%%;height:100%%;border:0\"></iframe>"
		 "<img src=\"http://127.0.0.1:1/x.png\"></body></html>", green);
	CU_ASSERT_EQUAL(make_site(dir, html), 0);
	/* what is checked is the picture, not the time: a minute (Chromium starting on a loaded machine
	 * was seen to take over the product's 20 s) */
	err = svc_thumbnail_chromium("chromium", &sandbox, dir, 60000, &png, &len, why, sizeof why);
	CU_ASSERT_EQUAL(err, 0);
	if (err)
		fprintf(stderr, "test_thumbnail: %s\n", why);
	rgb = png ? decode(png, len, &w, &h) : NULL;
	CU_ASSERT(rgb && w == SVC_THUMB_W && h == SVC_THUMB_H);
	if (rgb) {
		mid = px(rgb, w, w / 2, h / 2);
		CU_ASSERT(!(mid[1] > 200 && mid[0] < 60)); /* not the green local file */
		mid = px(rgb, w, 5, h - 5);
		CU_ASSERT(mid[0] > 200 && mid[1] < 60 && mid[2] < 60); /* the page itself, red */
	}
	free(rgb);
	free(png);
	svc_fsx_remove_tree(dir);
	svc_fsx_remove_tree(other);
}

/* Reads /proc/<pid>/cmdline with NULs turned to spaces into out (max bytes); 0 or -1. */
static int proc_cmdline(const char *pid, char *out, size_t max)
{
	char path[300];
	size_t n, i;
	FILE *f;

	snprintf(path, sizeof path, "/proc/%s/cmdline", pid);
	if (!(f = fopen(path, "r")))
		return -1;
	n = fread(out, 1, max - 1, f);
	fclose(f);
	for (i = 0; i < n; i++)
		if (out[i] == '\0')
			out[i] = ' ';
	out[n] = '\0';
	return 0;
}

/* The real user id of process `pid` (from /proc/<pid>/status), or -1. */
static long proc_uid(const char *pid)
{
	char path[300], line[256];
	long uid = -1;
	FILE *f;

	snprintf(path, sizeof path, "/proc/%s/status", pid);
	if (!(f = fopen(path, "r")))
		return -1;
	while (fgets(line, sizeof line, f))
		if (strncmp(line, "Uid:", 4) == 0) {
			const char *t = line + 4 + strspn(line + 4, " \t");
			char num[16];
			uint64_t v;

			snprintf(num, sizeof num, "%.*s", (int)strspn(t, "0123456789"), t);
			if (svc_parse_u64(num, UINT32_MAX, &v) == 0)
				uid = (long)v;
			break;
		}
	fclose(f);
	return uid;
}

/*
 * Finding 11 of issue 17: Chromium never runs as root and sees nothing of the
 * host but /usr and its fonts. While a render runs (in a child), every
 * Chromium process is found in /proc: its user is SVC_THUMB_UID's (not root, not the builds'), and through
 * /proc/<pid>/root the project's directory, this test's "secret" file and
 * /etc/passwd are not there, while /usr is. The render still gives a picture.
 */
static void test_thumbnail_chromium_runs_unprivileged_in_a_sandbox(void)
{
	char dir[] = "/tmp/svc-thumb-test-XXXXXX", secret[] = "/tmp/svc-thumb-secret-XXXXXX", why[256];
	char path[512], cmd[4096];
	unsigned char *png = NULL;
	size_t len = 0;
	unsigned seen = 0, as_root = 0, other_user = 0, sees_host = 0, sees_usr = 0;
	int status = 0, fd;
	pid_t child;

	if (access("/usr/bin/chromium", X_OK) != 0 || access(sandbox.bwrap, X_OK) != 0) {
		fprintf(stderr, "test_thumbnail: chromium or bwrap not installed; the sandbox is not checked\n");
		return;
	}
	CU_ASSERT_EQUAL_FATAL(make_site(dir, "<html><body style=\"margin:0;background:#0000ff\">"
					     "<iframe src=\"file:///etc/passwd\"></iframe></body></html>"), 0);
	fd = mkstemp(secret);
	CU_ASSERT_FATAL(fd >= 0);
	close(fd);
	child = fork();
	CU_ASSERT_FATAL(child >= 0);
	if (child == 0) {
		int err = svc_thumbnail_chromium("chromium", &sandbox, dir, 60000, &png, &len, why, sizeof why);
		if (err)
			fprintf(stderr, "test_thumbnail: %s\n", why);
		_exit(err == 0 && png && len > 0 ? 0 : 1);
	}
	while (waitpid(child, &status, WNOHANG) == 0) {
		DIR *d = opendir("/proc");
		struct dirent *e;

		while (d && (e = readdir(d))) {
			if (e->d_name[0] < '0' || e->d_name[0] > '9' || proc_cmdline(e->d_name, cmd, sizeof cmd) < 0 ||
			    !strstr(cmd, "svc-thumb.invalid") || strstr(cmd, "bwrap"))
				continue; /* only Chromium's own process (bubblewrap's outer process lives outside) */
			seen++;
			if (proc_uid(e->d_name) == 0)
				as_root++;
			/* as root, the user of the sandbox (SVC_THUMB_UID), not the builds' (SVC_BUILD_UID) */
			if (geteuid() == 0 && proc_uid(e->d_name) != (long)sandbox.uid)
				other_user++;
			snprintf(path, sizeof path, "/proc/%s/root%s/index.html", e->d_name, dir);
			sees_host += access(path, F_OK) == 0;
			snprintf(path, sizeof path, "/proc/%s/root%s", e->d_name, secret);
			sees_host += access(path, F_OK) == 0;
			snprintf(path, sizeof path, "/proc/%s/root/etc/passwd", e->d_name);
			sees_host += access(path, F_OK) == 0;
			snprintf(path, sizeof path, "/proc/%s/root/usr/bin", e->d_name);
			sees_usr += access(path, F_OK) == 0;
		}
		if (d)
			closedir(d);
		usleep(20000);
	}
	CU_ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0); /* it still renders */
	CU_ASSERT(seen > 0);
	CU_ASSERT_EQUAL(as_root, 0);
	CU_ASSERT_EQUAL(other_user, 0);
	CU_ASSERT_EQUAL(sees_host, 0);
	CU_ASSERT(sees_usr > 0);
	if (seen == 0 || as_root || other_user || sees_host)
		fprintf(stderr, "test_thumbnail: sandbox: seen %u, as root %u, as another user %u, host paths seen %u\n",
			seen, as_root, other_user, sees_host);
	unlink(secret);
	svc_fsx_remove_tree(dir);
}

/*
 * Renders the site `dir` with the real Chromium in the sandbox (a minute at most: the picture is
 * checked, not the time) and asserts a PNG of the thumbnail's size came back; its RGB pixels
 * (malloc'd, SVC_THUMB_W x SVC_THUMB_H), or NULL.
 */
static unsigned char *render_checked(const char *dir)
{
	unsigned char *png = NULL, *rgb = NULL;
	unsigned w = 0, h = 0;
	size_t len = 0;
	char why[256];
	int err = svc_thumbnail_chromium("chromium", &sandbox, dir, 60000, &png, &len, why, sizeof why);

	CU_ASSERT_EQUAL(err, 0);
	if (err)
		fprintf(stderr, "test_thumbnail: %s\n", why);
	rgb = png ? decode(png, len, &w, &h) : NULL;
	CU_ASSERT(rgb && w == SVC_THUMB_W && h == SVC_THUMB_H);
	free(png);
	if (rgb && (w != SVC_THUMB_W || h != SVC_THUMB_H)) {
		free(rgb);
		rgb = NULL;
	}
	return rgb;
}

/* A socket of `type` bound to 127.0.0.1 on a free port (listening when TCP); *out_port gets the port. -1 on failure. */
static int loopback_socket(int type, unsigned *out_port)
{
	struct sockaddr_in a;
	socklen_t alen = sizeof a;
	int fd = socket(AF_INET, type | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

	memset(&a, 0, sizeof a);
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) < 0 ||
	    (type == SOCK_STREAM && listen(fd, 16) < 0) || getsockname(fd, (struct sockaddr *)&a, &alen) < 0) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	*out_port = ntohs(a.sin_port);
	return fd;
}

/*
 * Item 12 of issue 25: a project page cannot send UDP (a WebRTC STUN request)
 * or open TCP connections to the host's addresses. The test listens on a
 * loopback UDP and TCP port; the page asks a RTCPeerConnection to gather
 * candidates with that STUN server, fetches from the TCP port, and loads an
 * image and a websocket from it. Neither listener receives anything, and the
 * page still renders (red).
 */
static void test_thumbnail_chromium_page_sends_no_udp_and_reaches_no_host_port(void)
{
	char dir[] = "/tmp/svc-thumb-test-XXXXXX", html[2048], buf[2048];
	unsigned char *rgb = NULL;
	unsigned uport = 0, tport = 0;
	int ufd, tfd, cfd;
	ssize_t got;

	if (access("/usr/bin/chromium", X_OK) != 0 || access(sandbox.bwrap, X_OK) != 0) {
		fprintf(stderr, "test_thumbnail: chromium or bwrap not installed; the page's network is not checked\n");
		return;
	}
	ufd = loopback_socket(SOCK_DGRAM, &uport);
	tfd = loopback_socket(SOCK_STREAM, &tport);
	CU_ASSERT_FATAL(ufd >= 0 && tfd >= 0);
	snprintf(html, sizeof html,
		 "<html><body style=\"margin:0;background:#ff0000\"><script>\n"
		 "try {\n"
		 "  var pc = new RTCPeerConnection({iceServers: [{urls: 'stun:127.0.0.1:%u'},"
		 " {urls: 'turn:127.0.0.1:%u?transport=udp', username: 'u', credential: 'p'}]});\n"
		 "  pc.createDataChannel('x');\n"
		 "  pc.createOffer().then(function (o) { return pc.setLocalDescription(o); });\n"
		 "} catch (e) {}\n"
		 "fetch('http://127.0.0.1:%u/fetch').catch(function () {});\n"
		 "try { new WebSocket('ws://127.0.0.1:%u/ws'); } catch (e) {}\n"
		 "</script><img src=\"http://127.0.0.1:%u/img.png\"></body></html>",
		 uport, uport, tport, tport, tport);
	CU_ASSERT_EQUAL_FATAL(make_site(dir, html), 0);
	rgb = render_checked(dir);
	if (rgb) {
		const unsigned char *mid = px(rgb, SVC_THUMB_W, SVC_THUMB_W / 2, SVC_THUMB_H / 2);
		CU_ASSERT(mid[0] > 200 && mid[1] < 60 && mid[2] < 60); /* the page, red */
	}
	got = recv(ufd, buf, sizeof buf, MSG_DONTWAIT);
	CU_ASSERT(got < 0);
	if (got >= 0)
		fprintf(stderr, "test_thumbnail: the page sent %zd bytes of UDP to 127.0.0.1:%u\n", got, uport);
	cfd = accept(tfd, NULL, NULL);
	CU_ASSERT(cfd < 0);
	if (cfd >= 0) {
		fprintf(stderr, "test_thumbnail: the page connected to 127.0.0.1:%u\n", tport);
		close(cfd);
	}
	free(rgb);
	close(ufd);
	close(tfd);
	svc_fsx_remove_tree(dir);
}

SVC_TEST_SUITE(thumbnail)
{
	CU_pSuite s = CU_add_suite("thumbnail", NULL, NULL);

	CU_add_test(s, "test_thumbnail_fallback_is_a_png_of_the_thumbnail_size", test_thumbnail_fallback_is_a_png_of_the_thumbnail_size);
	CU_add_test(s, "test_thumbnail_fallback_colour_comes_from_the_id_and_text_is_drawn",
		    test_thumbnail_fallback_colour_comes_from_the_id_and_text_is_drawn);
	CU_add_test(s, "test_thumbnail_fallback_long_and_unicode_names", test_thumbnail_fallback_long_and_unicode_names);
	CU_add_test(s, "test_thumbnail_chromium_failures", test_thumbnail_chromium_failures);
	CU_add_test(s, "test_thumbnail_chromium_renders_and_cannot_reach_local_files",
		    test_thumbnail_chromium_renders_and_cannot_reach_local_files);
	CU_add_test(s, "test_thumbnail_chromium_runs_unprivileged_in_a_sandbox",
		    test_thumbnail_chromium_runs_unprivileged_in_a_sandbox);
	CU_add_test(s, "test_thumbnail_chromium_page_sends_no_udp_and_reaches_no_host_port",
		    test_thumbnail_chromium_page_sends_no_udp_and_reaches_no_host_port);
}
