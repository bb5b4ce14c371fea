/*
 * fuzz_app_fetch.c: libFuzzer target for a call's path of POST /_svc/fetch/:name (lib/project/app_fetch_decl.c,
 * svc_app_fetch_path), the part of the apps' server-side calls that reads bytes from the page. The input's
 * first line is a call's URL (svc_app_fetch_url_set; "https://api.example.com/v1/" when it is refused), the
 * rest the path. What is accepted must start with the declared URL and, after it, hold no "." or ".."
 * segment, no "//", no '\\', '?', '#', no encoded '/', '\\', '.' or '%' and only printable ASCII.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/err.h"
#include "project/app_fetch_decl.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Traps when the tail `t` (after the declared URL) could leave it. */
static void tail_check(const char *t)
{
	const char *seg = t, *p;

	for (p = t;; p++) {
		if (*p == '/' || !*p) {
			size_t n = (size_t)(p - seg);
			if ((*p == '/' && n == 0) || (n == 1 && seg[0] == '.') || (n == 2 && seg[0] == '.' && seg[1] == '.'))
				__builtin_trap();
			if (!*p)
				break;
			seg = p + 1;
		}
		if ((unsigned char)*p <= 0x20 || (unsigned char)*p >= 0x7f || *p == '\\' || *p == '?' || *p == '#')
			__builtin_trap();
		if (*p == '%' && (strncasecmp(p, "%2f", 3) == 0 || strncasecmp(p, "%5c", 3) == 0 ||
				  strncasecmp(p, "%2e", 3) == 0 || strncasecmp(p, "%25", 3) == 0))
			__builtin_trap();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct svc_app_fetch f;
	char text[8192], out[SVC_APP_FETCH_URL_MAX + SVC_APP_FETCH_PATH_MAX + 8], why[256], *nl;
	const char *path = text;

	if (size >= sizeof text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	memset(&f, 0, sizeof f);
	if ((nl = strchr(text, '\n')) != NULL) {
		*nl = '\0';
		path = nl + 1;
		if (svc_app_fetch_url_set(&f, text, why, sizeof why) == 0) {
			if (strncmp(f.url, "https://", 8) != 0 && strncmp(f.url, "http://", 7) != 0)
				__builtin_trap();
			if (f.url[strlen(f.url) - 1] != '/')
				__builtin_trap();
			tail_check(f.url + f.prefix_len + 1);
		} else if (svc_app_fetch_url_set(&f, "https://api.example.com/v1/", why, sizeof why) != 0) {
			__builtin_trap();
		}
	} else if (svc_app_fetch_url_set(&f, "https://api.example.com/v1/", why, sizeof why) != 0) {
		__builtin_trap();
	}
	if (svc_app_fetch_path(&f, path, out, sizeof out, why, sizeof why) == 0) {
		size_t n = strlen(f.url);
		if (strncmp(out, f.url, n) != 0)
			__builtin_trap();
		tail_check(out + n);
	}
	return 0;
}
