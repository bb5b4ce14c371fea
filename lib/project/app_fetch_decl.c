/* app_fetch_decl.c: secret names and values, a call's URL and headers, and a call's path kept under its URL (app_fetch_decl.h). */
#include <stdio.h>
#include <string.h>

#include "core/err.h"
#include "core/util.h"
#include "project/app_fetch_decl.h"

static int is_alpha(int c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
}

static int is_digit(int c)
{
	return c >= '0' && c <= '9';
}

int svc_app_secret_name_valid(const char *s)
{
	size_t i, n = strnlen(s, SVC_APP_SECRET_NAME_MAX + 1);

	if (n == 0 || n > SVC_APP_SECRET_NAME_MAX || !(is_alpha(s[0]) || s[0] == '_'))
		return 0;
	for (i = 1; i < n; i++)
		if (!(is_alpha(s[i]) || is_digit(s[i]) || s[i] == '_'))
			return 0;
	return 1;
}

int svc_app_secret_value_check(const char *v, size_t len, char *msg, size_t max)
{
	size_t i;

	if (len < SVC_APP_SECRET_MIN || len > SVC_APP_SECRET_MAX) {
		snprintf(msg, max, "value must be %d to %d bytes", SVC_APP_SECRET_MIN, SVC_APP_SECRET_MAX);
		return SVC_E_VALIDATION;
	}
	if (!svc_utf8_valid(v, len)) {
		snprintf(msg, max, "value must be UTF-8 text");
		return SVC_E_VALIDATION;
	}
	for (i = 0; i < len; i++)
		if ((unsigned char)v[i] < 0x20 || v[i] == 0x7f) {
			snprintf(msg, max, "value may not hold control characters (it is sent in a header line)");
			return SVC_E_VALIDATION;
		}
	return 0;
}

/* The host and port of an authority `a` of `n` bytes: a name, an IPv4 address or "[IPv6]", then ":port". */
static int authority_ok(const char *a, size_t n)
{
	size_t i = 0, host_end;

	if (n == 0)
		return 0;
	if (a[0] == '[') {
		for (i = 1; i < n && a[i] != ']'; i++)
			if (!(is_digit(a[i]) || (a[i] >= 'a' && a[i] <= 'f') || (a[i] >= 'A' && a[i] <= 'F') || a[i] == ':' ||
			      a[i] == '.'))
				return 0;
		if (i >= n || i == 1)
			return 0;
		i++;
	} else {
		for (; i < n && a[i] != ':'; i++)
			if (!(is_alpha(a[i]) || is_digit(a[i]) || a[i] == '-' || a[i] == '.'))
				return 0;
		if (i == 0 || a[0] == '.' || a[0] == '-')
			return 0;
	}
	host_end = i;
	if (host_end < n) {
		uint64_t port = 0;
		char p[8];
		if (a[host_end] != ':' || n - host_end - 1 == 0 || n - host_end - 1 > 5)
			return 0;
		memcpy(p, a + host_end + 1, n - host_end - 1);
		p[n - host_end - 1] = '\0';
		for (i = 0; p[i]; i++)
			if (!is_digit(p[i]))
				return 0;
		if (svc_parse_u64(p, 65535, &port) < 0 || port == 0)
			return 0;
	}
	return 1;
}

static int refuse(char *why, size_t max, const char *text)
{
	snprintf(why, max, "%s", text);
	return SVC_E_VALIDATION;
}

int svc_app_fetch_url_set(struct svc_app_fetch *out, const char *url, char *why, size_t max)
{
	size_t n = strnlen(url, SVC_APP_FETCH_URL_MAX + 1), skip, i, auth_end;
	const char *path;

	if (n > SVC_APP_FETCH_URL_MAX)
		return refuse(why, max, "the URL is too long");
	if (n >= 8 && strncasecmp(url, "https://", 8) == 0) {
		skip = 8;
		out->https = 1;
	} else if (n >= 7 && strncasecmp(url, "http://", 7) == 0) {
		skip = 7;
		out->https = 0;
	} else {
		return refuse(why, max, "must be an https:// URL");
	}
	for (auth_end = skip; auth_end < n && url[auth_end] != '/'; auth_end++)
		if (url[auth_end] == '@' || url[auth_end] == '?' || url[auth_end] == '#')
			return refuse(why, max, "must be https://host[:port]/path/, with no user, query or fragment");
	if (!authority_ok(url + skip, auth_end - skip))
		return refuse(why, max, "must name a host (letters, digits, '-', '.'; or an IP address) and a port 1 to 65535");
	path = url + auth_end;
	for (i = 0; path[i]; i++) {
		unsigned char c = (unsigned char)path[i];
		if (c <= 0x20 || c >= 0x7f || c == '?' || c == '#' || c == '%' || c == '\\')
			return refuse(why, max, "the URL's path may hold no space, '?', '#', '%' or '\\'");
		if (c == '/' && path[i + 1] == '/')
			return refuse(why, max, "the URL's path may not hold \"//\"");
		if (c == '/' && path[i + 1] == '.' && (path[i + 2] == '/' || !path[i + 2] ||
						      (path[i + 2] == '.' && (path[i + 3] == '/' || !path[i + 3]))))
			return refuse(why, max, "the URL's path may not hold \".\" or \"..\" segments");
	}
	memcpy(out->url, out->https ? "https://" : "http://", skip);
	for (i = skip; i < auth_end; i++)
		out->url[i] = (url[i] >= 'A' && url[i] <= 'Z') ? (char)(url[i] - 'A' + 'a') : url[i];
	out->prefix_len = auth_end;
	if (!*path) {
		out->url[i++] = '/';
	} else {
		memcpy(out->url + i, path, strlen(path));
		i += strlen(path);
		if (out->url[i - 1] != '/')
			out->url[i++] = '/';
	}
	out->url[i] = '\0';
	return 0;
}

int svc_app_fetch_header_value_check(const char *v, char *why, size_t max)
{
	const char *p = v;

	for (; *p; p++)
		if (*p == '\r' || *p == '\n')
			return refuse(why, max, "a header's value may not hold CR or LF");
	for (p = strstr(v, "{{"); p; p = strstr(p, "{{")) {
		char name[SVC_APP_SECRET_NAME_MAX + 1];
		const char *end;
		size_t n;
		if (strncmp(p, "{{secrets.", 10) != 0 || !(end = strstr(p + 10, "}}")))
			return refuse(why, max, "{{ opens {{secrets.NAME}} only");
		n = (size_t)(end - (p + 10));
		if (n == 0 || n > SVC_APP_SECRET_NAME_MAX)
			return refuse(why, max, "{{secrets.NAME}}: NAME is a secret's name");
		memcpy(name, p + 10, n);
		name[n] = '\0';
		if (!svc_app_secret_name_valid(name))
			return refuse(why, max, "{{secrets.NAME}}: NAME is 1 to 64 letters, digits and _, not starting with a digit");
		p = end + 2;
	}
	return 0;
}

unsigned svc_app_fetch_method_bit(const char *m)
{
	static const char *const names[] = { "GET", "POST", "PUT", "PATCH", "DELETE" };
	size_t i;

	for (i = 0; i < sizeof names / sizeof names[0]; i++)
		if (strcmp(m, names[i]) == 0)
			return 1u << i;
	return 0;
}

/* 1 for RFC 3986's unreserved characters (section 2.3): what a path may hold decoded. */
static int unreserved(int c)
{
	return is_alpha(c) || is_digit(c) || c == '-' || c == '.' || c == '_' || c == '~';
}

/* Whether the segment that ends at out[n] (it started after the last '/') is "." or "..". */
static int dot_segment(const char *out, size_t n, size_t seg_start)
{
	size_t len = n - seg_start;

	return (len == 1 && out[seg_start] == '.') || (len == 2 && out[seg_start] == '.' && out[seg_start + 1] == '.');
}

static int path_refuse(char *why, size_t max, const char *text)
{
	snprintf(why, max, "%s", text);
	return SVC_E_FORBIDDEN;
}

int svc_app_fetch_path(const struct svc_app_fetch *f, const char *path, char *out, size_t max, char *why,
		       size_t why_max)
{
	size_t base = strlen(f->url), n, i, seg;

	if (!path)
		path = "";
	if (path[0] == '/' && path[1] == '/')
		return path_refuse(why, why_max, "path may not start with //");
	if (path[0] == '/')
		path++;
	if (base + 1 > max)
		return SVC_E_TOO_LARGE;
	memcpy(out, f->url, base);
	n = seg = base;
	for (i = 0; path[i]; i++) {
		int c = (unsigned char)path[i];
		if (c <= 0x20 || c >= 0x7f || c == '\\' || c == '?' || c == '#')
			return path_refuse(why, why_max, "path may hold only printable ASCII, no space, '\\', '?' or '#' "
							 "(the query goes in query)");
		if (c == '%') {
			int h = svc_hex_digit(path[i + 1]), l = h < 0 ? -1 : svc_hex_digit(path[i + 2]);
			if (h < 0 || l < 0)
				return path_refuse(why, why_max, "path holds a '%' that is no percent-encoding");
			c = h * 16 + l;
			if (c == '/' || c == '\\' || c == '.' || c == '%' || c < 0x20 || c >= 0x7f)
				return path_refuse(why, why_max, "path may not encode '/', '\\', '.', '%' or control characters");
			if (!unreserved(c)) {
				/* kept encoded as it came (upper-case hex) */
				if (n + 3 >= max || n + 3 > SVC_APP_FETCH_PATH_MAX + base)
					return SVC_E_TOO_LARGE;
				n += (size_t)snprintf(out + n, 4, "%%%02X", c);
				i += 2;
				continue;
			}
			i += 2;
		}
		if (c == '/') {
			if (n == seg)
				return path_refuse(why, why_max, "path may not hold //");
			if (dot_segment(out, n, seg))
				return path_refuse(why, why_max, "path may not hold . or .. segments");
		}
		if (n + 1 >= max || n + 1 > SVC_APP_FETCH_PATH_MAX + base)
			return SVC_E_TOO_LARGE;
		out[n++] = (char)c;
		if (c == '/')
			seg = n;
	}
	if (dot_segment(out, n, seg))
		return path_refuse(why, why_max, "path may not hold . or .. segments");
	out[n] = '\0';
	return 0;
}
