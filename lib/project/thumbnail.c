/* thumbnail.c: project thumbnails: headless Chromium behind a confining local proxy, a FreeType fallback, PNG via libpng. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <time.h>
#include <unistd.h>

#include <ft2build.h>
#include FT_FREETYPE_H
#include <openssl/sha.h>
#include <png.h>

#include "core/err.h"
#include "core/fsx.h"
#include "core/json.h"
#include "db/jobs.h"
#include "core/log.h"
#include "project/build.h"
#include "project/paths.h"
#include "project/sandbox.h"
#include "project/thumbnail.h"
#include "core/util.h"

#define SERVE_FILE_MAX (10u * 1024 * 1024)
#define SHOT_DIM_MAX 4000
#define PAGE_HOST SVC_THUMB_PAGE_HOST
/* the page server's port on the loopback of Chromium's own network namespace */
#define PROXY_PORT 3128
#define PROXY_PORT_S "3128"

const char *svc_thumbnail_source_name(enum svc_thumb_source s)
{
	return s == SVC_THUMB_CHROMIUM ? "chromium" : "fallback";
}

/* ---- PNG ---- */

/* Encodes w x h RGB pixels as a PNG into a malloc'd *out (libpng's simplified API, png.h "png_image"). */
static int png_encode(const unsigned char *rgb, unsigned w, unsigned h, unsigned char **out, size_t *out_len)
{
	png_image img;
	png_alloc_size_t size = 0;
	unsigned char *buf;

	memset(&img, 0, sizeof img);
	img.version = PNG_IMAGE_VERSION;
	img.width = w;
	img.height = h;
	img.format = PNG_FORMAT_RGB;
	if (!png_image_write_to_memory(&img, NULL, &size, 0, rgb, 0, NULL) || size == 0)
		return SVC_E_INTERNAL;
	buf = malloc(size);
	if (!buf)
		return SVC_E_INTERNAL;
	if (!png_image_write_to_memory(&img, buf, &size, 0, rgb, 0, NULL)) {
		free(buf);
		return SVC_E_INTERNAL;
	}
	*out = buf;
	*out_len = size;
	return 0;
}

/* Decodes the PNG file `path` into RGB pixels (malloc'd *out, *w x *h; at most SHOT_DIM_MAX each way). */
static int png_decode_file(const char *path, unsigned char **out, unsigned *w, unsigned *h)
{
	png_image img;
	unsigned char *buf;

	memset(&img, 0, sizeof img);
	img.version = PNG_IMAGE_VERSION;
	if (!png_image_begin_read_from_file(&img, path))
		return SVC_E_INTERNAL;
	if (img.width == 0 || img.height == 0 || img.width > SHOT_DIM_MAX || img.height > SHOT_DIM_MAX) {
		png_image_free(&img);
		return SVC_E_INTERNAL;
	}
	img.format = PNG_FORMAT_RGB;
	buf = malloc(PNG_IMAGE_SIZE(img));
	if (!buf) {
		png_image_free(&img);
		return SVC_E_INTERNAL;
	}
	if (!png_image_finish_read(&img, NULL, buf, 0, NULL)) {
		free(buf);
		png_image_free(&img);
		return SVC_E_INTERNAL;
	}
	*out = buf;
	*w = img.width;
	*h = img.height;
	return 0;
}

/* Scales sw x sh RGB to dw x dh by averaging the source box under each target pixel. */
static void box_scale(const unsigned char *src, unsigned sw, unsigned sh, unsigned char *dst, unsigned dw, unsigned dh)
{
	unsigned x, y, c;

	for (y = 0; y < dh; y++) {
		unsigned y0 = y * sh / dh, y1 = (y + 1) * sh / dh;
		if (y1 <= y0)
			y1 = y0 + 1;
		for (x = 0; x < dw; x++) {
			unsigned x0 = x * sw / dw, x1 = (x + 1) * sw / dw, sx, sy;
			unsigned long sum[3] = { 0, 0, 0 }, n = 0;
			if (x1 <= x0)
				x1 = x0 + 1;
			for (sy = y0; sy < y1 && sy < sh; sy++)
				for (sx = x0; sx < x1 && sx < sw; sx++) {
					for (c = 0; c < 3; c++)
						sum[c] += src[((size_t)sy * sw + sx) * 3 + c];
					n++;
				}
			for (c = 0; c < 3; c++)
				dst[((size_t)y * dw + x) * 3 + c] = (unsigned char)(n ? sum[c] / n : 0);
		}
	}
}

/* ---- the generated thumbnail ---- */

static void hsl_to_rgb(double h, double s, double l, unsigned char *rgb)
{
	double c = (1 - (2 * l - 1 < 0 ? -(2 * l - 1) : 2 * l - 1)) * s, hp = h / 60.0, x, r = 0, g = 0, b = 0, m;
	double f = hp - 2 * (double)(long)(hp / 2);

	x = c * (1 - (f - 1 < 0 ? -(f - 1) : f - 1));
	if (hp < 1) { r = c; g = x; }
	else if (hp < 2) { r = x; g = c; }
	else if (hp < 3) { g = c; b = x; }
	else if (hp < 4) { g = x; b = c; }
	else if (hp < 5) { r = x; b = c; }
	else { r = c; b = x; }
	m = l - c / 2;
	rgb[0] = (unsigned char)((r + m) * 255 + 0.5);
	rgb[1] = (unsigned char)((g + m) * 255 + 0.5);
	rgb[2] = (unsigned char)((b + m) * 255 + 0.5);
}

/* Width in pixels of `count` code points of `cps` at the face's current size, plus an ellipsis when `dots`. */
static long text_width(FT_Face face, const unsigned long *cps, size_t count, int dots)
{
	long w = 0;
	size_t i;

	for (i = 0; i < count + (dots ? 1 : 0); i++) {
		unsigned long cp = i < count ? cps[i] : 0x2026;
		if (FT_Load_Char(face, cp, FT_LOAD_DEFAULT) == 0)
			w += face->glyph->advance.x >> 6;
	}
	return w;
}

/* Draws the name centred in white onto the RGB image. */
static void draw_name(unsigned char *rgb, unsigned w, unsigned h, const char *name, const char *font_path)
{
	FT_Library lib = NULL;
	FT_Face face = NULL;
	unsigned long cps[256];
	size_t n = 0, shown, i, len = strlen(name), seq;
	unsigned px = 56;
	long width, pen_x, base_y;
	int dots = 0;

	for (i = 0; i < len && n < sizeof cps / sizeof cps[0]; i += seq) {
		uint32_t cp;
		if (!(seq = svc_utf8_decode(name + i, len - i, &cp))) {
			cp = 0xfffd; /* the API stores valid UTF-8; a stray byte shows as U+FFFD */
			seq = 1;
		}
		cps[n++] = cp;
	}
	if (!n || FT_Init_FreeType(&lib) != 0)
		return;
	if (FT_New_Face(lib, font_path, 0, &face) != 0)
		goto done;
	/* shrink to fit, down to 24 px, then cut with an ellipsis */
	shown = n;
	for (;;) {
		FT_Set_Pixel_Sizes(face, 0, px);
		width = text_width(face, cps, shown, dots);
		if (width <= (long)w - 48)
			break;
		if (px > 24) {
			px -= 4;
			continue;
		}
		if (shown <= 1)
			break;
		shown--;
		dots = 1;
	}
	pen_x = ((long)w - width) / 2;
	base_y = ((long)h + (long)px * 7 / 10) / 2;
	for (i = 0; i < shown + (dots ? 1 : 0); i++) {
		unsigned long cp = i < shown ? cps[i] : 0x2026;
		FT_GlyphSlot g;
		unsigned r, c;
		if (FT_Load_Char(face, cp, FT_LOAD_RENDER) != 0)
			continue;
		g = face->glyph;
		for (r = 0; r < g->bitmap.rows; r++)
			for (c = 0; c < g->bitmap.width; c++) {
				long x = pen_x + g->bitmap_left + (long)c, y = base_y - g->bitmap_top + (long)r;
				unsigned a = g->bitmap.buffer[(size_t)r * (size_t)g->bitmap.pitch + c], k;
				unsigned char *d;
				if (x < 0 || y < 0 || x >= (long)w || y >= (long)h || !a)
					continue;
				d = rgb + ((size_t)y * w + (size_t)x) * 3;
				for (k = 0; k < 3; k++)
					d[k] = (unsigned char)((d[k] * (255 - a) + 255 * a) / 255);
			}
		pen_x += g->advance.x >> 6;
	}
done:
	if (face)
		FT_Done_Face(face);
	FT_Done_FreeType(lib);
}

int svc_thumbnail_fallback(const char *id, const char *name, const char *font_path, unsigned char **out,
			   size_t *out_len)
{
	unsigned char digest[SHA256_DIGEST_LENGTH], bg[3], *rgb;
	size_t i, npix = (size_t)SVC_THUMB_W * SVC_THUMB_H;
	int err;

	SHA256((const unsigned char *)id, strlen(id), digest);
	hsl_to_rgb((double)((digest[0] << 8 | digest[1]) % 360), 0.55, 0.42, bg);
	rgb = malloc(npix * 3);
	if (!rgb)
		return SVC_E_INTERNAL;
	for (i = 0; i < npix; i++)
		memcpy(rgb + i * 3, bg, 3);
	if (name && font_path && *font_path)
		draw_name(rgb, SVC_THUMB_W, SVC_THUMB_H, name, font_path);
	err = png_encode(rgb, SVC_THUMB_W, SVC_THUMB_H, out, out_len);
	free(rgb);
	return err;
}

/* ---- the page server: Chromium's proxy and the only origin it can reach ---- */

static void write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);
		if (w <= 0)
			return;
		p += w;
		n -= (size_t)w;
	}
}

static void answer(int fd, int status, const char *type, const char *body, size_t len)
{
	char head[256];
	int n = snprintf(head, sizeof head,
			 "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\nConnection: close\r\n"
			 "Cache-Control: no-store\r\n\r\n",
			 status, status == 200 ? "OK" : status == 403 ? "Forbidden" : "Not Found", type, len);

	if (n > 0 && (size_t)n < sizeof head)
		write_all(fd, head, (size_t)n);
	if (len)
		write_all(fd, body, len);
}

/* Serves one request: GET of a file of `dir` on PAGE_HOST (absolute-form, as a proxy gets it, or origin-form). */
static void serve_one(int fd, const char *dir)
{
	char req[8192], path[SVC_FSX_PATH_MAX + 1], norm[SVC_FSX_PATH_MAX + 1], *data = NULL;
	const char *t, *e, *host_end;
	size_t got = 0, o = 0, len = 0;
	struct timeval tv = { 2, 0 };

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	while (got < sizeof req - 1) {
		ssize_t r = read(fd, req + got, sizeof req - 1 - got);
		if (r <= 0)
			break;
		got += (size_t)r;
		req[got] = '\0';
		if (strstr(req, "\r\n\r\n"))
			break;
	}
	req[got] = '\0';
	if (strncmp(req, "GET ", 4) != 0) {
		answer(fd, 403, "text/plain", "", 0); /* CONNECT (https, websockets) and every other method */
		return;
	}
	t = req + 4;
	if (strncmp(t, "http://", 7) == 0) {
		t += 7;
		host_end = strpbrk(t, "/ ");
		if (!host_end || (size_t)(host_end - t) != strlen(PAGE_HOST) || strncmp(t, PAGE_HOST, strlen(PAGE_HOST)) != 0) {
			answer(fd, 404, "text/plain", "", 0); /* any other host: nothing */
			return;
		}
		t = host_end;
	}
	if (*t != '/') {
		answer(fd, 404, "text/plain", "", 0);
		return;
	}
	t++;
	e = t;
	while (*e && *e != ' ' && *e != '?' && *e != '#')
		e++;
	for (; t < e && o < SVC_FSX_PATH_MAX - 16; t++) {
		if (*t == '%' && t + 2 < e && svc_hex_digit(t[1]) >= 0 && svc_hex_digit(t[2]) >= 0) {
			path[o++] = (char)(svc_hex_digit(t[1]) * 16 + svc_hex_digit(t[2]));
			t += 2;
		} else {
			path[o++] = *t;
		}
	}
	path[o] = '\0';
	if (o == 0 || path[o - 1] == '/') {
		memcpy(path + o, "index.html", 11);
		o += 10;
	}
	if (svc_fsx_check_path(path, norm) < 0 || svc_fsx_read(dir, norm, SERVE_FILE_MAX, &data, &len) < 0) {
		answer(fd, 404, "text/plain", "", 0);
		return;
	}
	answer(fd, 200, svc_fsx_content_type(norm), data, len);
	free(data);
}

void svc_thumbnail__serve(int lfd, const char *dir, int64_t deadline_ms)
{
	while (svc_mono_ms() < deadline_ms) {
		struct pollfd pfd = { lfd, POLLIN, 0 };
		int fd;
		if (poll(&pfd, 1, 200) <= 0)
			continue;
		fd = accept(lfd, NULL, NULL);
		if (fd < 0)
			continue;
		serve_one(fd, dir);
		close(fd);
	}
}

/* ---- Chromium ---- */

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* Waits for the sandboxed Chromium until `deadline_ms`, then ends what is left of it. Returns its exit status, -1 on timeout. */
static int wait_until(struct svc_sandbox *run, int64_t deadline_ms)
{
	struct svc_sandbox_result r;
	int timed_out = 0;

	while (!svc_sandbox_poll(run)) {
		if (svc_mono_ms() >= deadline_ms) {
			timed_out = 1;
			break;
		}
		sleep_ms(50);
	}
	svc_sandbox_stop(run, 0); /* helpers Chromium left behind in its cgroup */
	svc_sandbox_wait(run, &r);
	if (timed_out)
		return -1;
	if (r.limit != SVC_SANDBOX_LIMIT_NONE && r.limit != SVC_SANDBOX_LIMIT_STOPPED)
		svc_log_info("thumbnail: chromium used %s", r.limit_text);
	return r.status > 128 ? 128 : r.status;
}

/* Whether `prog` (a path, or a name looked up in the sandbox's PATH) exists as a program. */
static int program_exists(const char *prog)
{
	static const char *const dirs[] = { "/usr/local/bin", "/usr/bin", "/bin" };
	char path[1024];
	size_t i;

	if (strchr(prog, '/'))
		return access(prog, X_OK) == 0;
	for (i = 0; i < sizeof dirs / sizeof dirs[0]; i++) {
		snprintf(path, sizeof path, "%s/%s", dirs[i], prog);
		if (access(path, X_OK) == 0)
			return 1;
	}
	return 0;
}

int svc_thumbnail__start(const struct svc_thumb_sandbox *sb, const char *chromium, const char *tmp,
			 const char *const *extra, const char *url, const char *prefix, const int *pass_fds,
			 struct svc_sandbox **out, char *why, size_t whymax)
{
	static const char *const env[] = { "HOME=/out", "XDG_CONFIG_HOME=/out", NULL };
	static const char *const flags[] = {
		"--headless=new", "--disable-gpu", "--disable-dev-shm-usage", "--hide-scrollbars", "--mute-audio",
		"--no-first-run", "--no-default-browser-check", "--disable-extensions",
		"--disable-background-networking", "--disable-sync", "--disable-component-update",
		"--disable-features=Translate,MediaRouter,OptimizationHints", "--user-data-dir=/out/profile",
		"--proxy-bypass-list=<-loopback>", "--force-webrtc-ip-handling-policy=disable_non_proxied_udp",
		("--proxy-server=http://127.0.0.1:" PROXY_PORT_S), /* one element (clang -Wstring-concatenation) */
	};
	const struct svc_sandbox_mount mounts[] = {
		{ "/etc/fonts", "/etc/fonts", 0, 1 }, { "/etc/chromium.d", "/etc/chromium.d", 0, 1 }, { tmp, "/out", 1, 0 },
	};
	const char *argv[48];
	struct svc_sandbox_spec s;
	char name[32], rnd[17];
	size_t n = 0, i;

	(void)sizeof(char[PROXY_PORT == SVC_SANDBOX_PROXY_PORT ? 1 : -1]);
	argv[n++] = chromium;
	for (i = 0; i < sizeof flags / sizeof flags[0]; i++)
		argv[n++] = flags[i];
	for (i = 0; extra && extra[i] && n < sizeof argv / sizeof argv[0] - 2; i++)
		argv[n++] = extra[i];
	argv[n++] = url;
	argv[n] = NULL;
	if (svc_random_hex(rnd, 8) < 0)
		return SVC_E_INTERNAL;
	snprintf(name, sizeof name, "%s-%s", prefix, rnd);
	memset(&s, 0, sizeof s);
	s.bwrap = sb->bwrap;
	s.argv = argv;
	s.env = env;
	s.mounts = mounts;
	s.nmounts = sizeof mounts / sizeof mounts[0];
	s.network = SVC_SANDBOX_NET_LISTENER;
	s.tmp_mb = 256; /* --disable-dev-shm-usage: its shared memory lives in /tmp */
	/* no RLIMIT_AS (Chromium reserves terabytes of address space): the cgroup bounds its memory */
	s.memory_mb = sb->memory_mb;
	s.procs = sb->procs;
	s.cpu_percent = sb->cpu_percent;
	s.cgroup_parent = sb->cgroup_parent;
	s.name = name;
	s.uid = sb->uid;
	if (pass_fds) {
		s.pass_fds[0] = pass_fds[0];
		s.pass_fds[1] = pass_fds[1];
		s.npass_fds = 2;
	}
	return svc_sandbox_start(&s, -1, out, why, whymax);
}

/* What a thumbnail's Chromium adds to svc_thumbnail__start()'s flags: the size, a screenshot once the page settled. */
static const char *const shot_flags[] = { "--window-size=1200,630", "--virtual-time-budget=3000",
					  "--screenshot=/out/shot.png", NULL };

int svc_thumbnail_chromium(const char *chromium, const struct svc_thumb_sandbox *sb, const char *dir,
			   long timeout_ms, unsigned char **out, size_t *out_len, char *why, size_t whymax)
{
	char tmp[] = "/tmp/svc-thumb-XXXXXX", shot[64], index_path[2100];
	unsigned char *rgb = NULL, *small = NULL;
	unsigned w = 0, h = 0;
	int err = SVC_E_UNAVAILABLE, rc, made_tmp = 0;
	struct svc_sandbox *run = NULL;
	char swhy[256];
	pid_t server = -1;
	int64_t deadline = svc_mono_ms() + timeout_ms;
	struct stat st;

	snprintf(why, whymax, "chromium failed");
	snprintf(index_path, sizeof index_path, "%s/index.html", dir);
	if (stat(index_path, &st) < 0 || !S_ISREG(st.st_mode)) {
		snprintf(why, whymax, "the project has no index.html");
		return SVC_E_NOT_FOUND;
	}
	if (!program_exists(chromium)) {
		snprintf(why, whymax, "chromium could not be started (%s is not installed)", chromium);
		return SVC_E_UNAVAILABLE;
	}
	if (access(sb->bwrap, X_OK) != 0) {
		snprintf(why, whymax, "chromium could not be started (no bubblewrap at %s)", sb->bwrap);
		return SVC_E_UNAVAILABLE;
	}
	if (!mkdtemp(tmp))
		return SVC_E_INTERNAL;
	made_tmp = 1;
	/* the sandbox's user writes the profile and the screenshot there, and nothing else */
	if (geteuid() == 0 && chown(tmp, sb->uid, sb->uid) < 0) {
		err = SVC_E_INTERNAL;
		goto done;
	}
	snprintf(shot, sizeof shot, "%s/shot.png", tmp);

	if ((rc = svc_thumbnail__start(sb, chromium, tmp, shot_flags, "http://" PAGE_HOST "/index.html", "thumb", NULL, &run,
					swhy, sizeof swhy)) < 0) {
		snprintf(why, whymax, "chromium could not be started (%s)", swhy[0] ? swhy : "the sandbox failed");
		run = NULL;
		goto done;
	}
	server = fork();
	if (server < 0) {
		err = SVC_E_INTERNAL;
		goto done;
	}
	if (server == 0) {
		svc_thumbnail__serve(svc_sandbox_listener(run), dir, deadline);
		_exit(0);
	}
	rc = wait_until(run, deadline);
	run = NULL;
	if (rc != 0) {
		snprintf(why, whymax, rc < 0 ? "chromium timed out" : "chromium exited with status %d", rc);
		goto done;
	}
	if (png_decode_file(shot, &rgb, &w, &h) < 0) {
		snprintf(why, whymax, "chromium wrote no readable screenshot");
		goto done;
	}
	small = malloc((size_t)SVC_THUMB_W * SVC_THUMB_H * 3);
	if (!small) {
		err = SVC_E_INTERNAL;
		goto done;
	}
	box_scale(rgb, w, h, small, SVC_THUMB_W, SVC_THUMB_H);
	err = png_encode(small, SVC_THUMB_W, SVC_THUMB_H, out, out_len);
	if (err == 0)
		why[0] = '\0';
done:
	if (run)
		wait_until(run, 0); /* started, then the page server could not be: killed */
	if (server > 0) {
		kill(server, SIGKILL);
		waitpid(server, NULL, 0);
	}
	free(rgb);
	free(small);
	if (made_tmp)
		svc_fsx_remove_tree(tmp);
	return err;
}

/* ---- storing ---- */

int svc_thumbnail_path(const struct svc_config *cfg, const char *id, char *out, size_t max)
{
	int n = snprintf(out, max, "%s/thumbnails/%s.png", cfg->data_dir, id);

	return (n < 0 || (size_t)n >= max) ? SVC_E_INTERNAL : 0;
}

/* Writes `len` bytes to `path` through a temporary file renamed into place. */
static int write_file(const char *path, const void *data, size_t len)
{
	char tmp[2200], rnd[9];
	int fd;

	if (svc_random_hex(rnd, 4) < 0)
		return SVC_E_INTERNAL;
	snprintf(tmp, sizeof tmp, "%s.tmp-%s", path, rnd);
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, SVC_FSX_PRIVATE_FILE_MODE);
	if (fd < 0)
		return SVC_E_INTERNAL;
	write_all(fd, data, len);
	if (fsync(fd) < 0 || close(fd) < 0 || rename(tmp, path) < 0) {
		unlink(tmp);
		return SVC_E_INTERNAL;
	}
	return 0;
}

/*
 * The sandbox of the thumbnails' Chromium: the build sandbox's bubblewrap (SVC_BUILD_BWRAP) and a
 * user of its own (SVC_THUMB_UID): a build's RLIMIT_NPROC counts every process of its user on the
 * host, and Chromium's threads under the same user made npm fail with EAGAIN.
 */
void svc_thumbnail__sandbox(const struct svc_config *cfg, struct svc_thumb_sandbox *out)
{
	struct svc_build_opts o;

	svc_build_opts_load(cfg, 0, &o);
	out->bwrap = o.bwrap;
	out->uid = o.thumb_uid;
	out->memory_mb = o.memory_mb;
	out->procs = o.procs;
	out->cpu_percent = o.cpu_percent;
	out->cgroup_parent = o.cgroup_parent;
}

int svc_thumbnail_render(const struct svc_config *cfg, const char *id, const char *name, const char *dir,
			 int allow_chromium, enum svc_thumb_source *out_source, char *why, size_t whymax)
{
	const char *chromium = cfg->chromium, *font = cfg->thumbnail_font;
	struct svc_thumb_sandbox sb;
	unsigned char *png = NULL;
	size_t len = 0;
	char path[2048], side[2100], tdir[2048];
	enum svc_thumb_source src = SVC_THUMB_FALLBACK;
	int err;

	why[0] = '\0';
	snprintf(tdir, sizeof tdir, "%s/thumbnails", cfg->data_dir);
	if (mkdir(tdir, SVC_FSX_PRIVATE_DIR_MODE) < 0 && errno != EEXIST) /* served by the API, not the web server */
		return SVC_E_INTERNAL;
	if ((err = svc_thumbnail_path(cfg, id, path, sizeof path)) < 0)
		return err;
	if (!allow_chromium)
		snprintf(why, whymax, "chromium was not asked for");
	else if (!*chromium)
		snprintf(why, whymax, "chromium is turned off (SVC_CHROMIUM is empty)");
	else {
		svc_thumbnail__sandbox(cfg, &sb);
		err = svc_thumbnail_chromium(chromium, &sb, dir, SVC_THUMB_TIMEOUT_MS, &png, &len, why, whymax);
		if (err == 0)
			src = SVC_THUMB_CHROMIUM;
		else if (err == SVC_E_UNAVAILABLE && allow_chromium == SVC_THUMB_CHROMIUM_OR_KEEP)
			return err; /* the stored image stays; the caller tries again later */
	}
	if (src == SVC_THUMB_FALLBACK) {
		if (allow_chromium && *chromium)
			svc_log_warn("thumbnail: project=%s: %s; using the generated image", id, why);
		if ((err = svc_thumbnail_fallback(id, name, font, &png, &len)) < 0)
			return err;
	}
	snprintf(side, sizeof side, "%s/thumbnails/%s.source", cfg->data_dir, id);
	err = write_file(path, png, len);
	if (err == 0)
		err = write_file(side, svc_thumbnail_source_name(src), strlen(svc_thumbnail_source_name(src)));
	free(png);
	if (err == 0)
		*out_source = src;
	return err;
}

int svc_thumbnail_request(struct svc_db *db, const char *project_id)
{
	struct json_object *job;
	const char *payload;
	struct svc_dbv p[2];
	struct svc_rows *rows = NULL;
	int err, waiting;

	/* {"projectId":"<id>"}, byte for byte as the waiting-job lookup compares it */
	if (!(job = json_object_new_object()))
		return SVC_E_INTERNAL;
	svc_json_add_str(job, "projectId", project_id);
	payload = json_object_to_json_string_ext(job, JSON_C_TO_STRING_PLAIN);
	p[0] = svc_dbv_str(SVC_JOB_THUMBNAIL);
	p[1] = svc_dbv_str(payload);
	if ((err = svc_db_run(db, STMT_THUMB_JOB_WAITING, p, 2, &rows, NULL)) == 0) {
		waiting = rows && rows->nrows;
		svc_rows_free(rows);
		err = waiting ? 0 : svc_jobs_enqueue(db, SVC_JOB_THUMBNAIL, payload, 3, NULL);
	}
	json_object_put(job);
	return err;
}

int svc_thumbnail_set_url(struct svc_db *db, const struct svc_config *cfg, const char *id)
{
	char url[1024];
	struct svc_dbv p[2];
	int n = snprintf(url, sizeof url, "%s/thumbnails/%s.png", cfg->base_url, id);

	if (n < 0 || (size_t)n >= sizeof url)
		return SVC_E_INTERNAL;
	p[0] = svc_dbv_str(url);
	p[1] = svc_dbv_str(id);
	return svc_db_run(db, STMT_PROJECT_SET_THUMBNAIL, p, 2, NULL, NULL);
}

int svc_thumbnail_job(void *ctx, const struct svc_job *job, char *errmsg, size_t errmax)
{
	const struct svc_job_ctx *c = ctx;
	struct json_object *o = NULL;
	struct svc_rows *rows = NULL;
	struct svc_dbv p;
	enum svc_thumb_source src;
	const char *id;
	char dir[2048], why[256];
	int err;

	if (svc_json_parse_object(job->payload, strlen(job->payload), &o) < 0 ||
	    !(id = svc_json_str(o, "projectId")) || !svc_uuid_valid(id)) {
		snprintf(errmsg, errmax, "payload without a projectId");
		json_object_put(o);
		return SVC_E_VALIDATION;
	}
	p = svc_dbv_str(id);
	if ((err = svc_db_run(c->db, STMT_THUMB_PROJECT, &p, 1, &rows, NULL)) < 0)
		goto done;
	if (!rows || rows->nrows != 1)
		goto done; /* deleted since: nothing to do */
	if ((err = svc_project_dir(c->cfg, id, dir, sizeof dir)) < 0)
		goto done;
	/* a Chromium that failed (a loaded host, a slow start) keeps the last image and is tried again while
	 * attempts remain; the last attempt stores the generated image */
	if ((err = svc_thumbnail_render(c->cfg, id, svc_rows_get(rows, 0, TPCOL_NAME), dir,
					job->attempts < job->max_attempts ? SVC_THUMB_CHROMIUM_OR_KEEP : 1, &src, why,
					sizeof why)) < 0) {
		snprintf(errmsg, errmax, "rendering failed: %s", why[0] ? why : svc_err_code(err));
		goto done;
	}
	err = svc_thumbnail_set_url(c->db, c->cfg, id);
	svc_log_info("thumbnail: project=%s source=%s", id, svc_thumbnail_source_name(src));
done:
	svc_rows_free(rows);
	json_object_put(o);
	return err;
}
