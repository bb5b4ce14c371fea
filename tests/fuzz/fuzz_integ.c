/*
 * fuzz_integ.c: libFuzzer target for the integration credential templating and
 * the scrubber of the agent's integration_request (lib/integ/inject.h):
 * a stored credential (a token, or the JSON of basic_auth or custom_auth, which
 * a platform admin typed) turned into headers and query parameters by
 * svc_integ_inject(), then an API's answer scrubbed of it by
 * svc_integ_scrub().
 *
 * The first input byte picks the credential kind (svc_integ_cred's enum, mod
 * 5); the rest is "SECRET\nANSWER". Checked: no header holds CR or LF or lacks
 * its "Name: "; the query holds only unreserved characters, '%', '=' and '&';
 * after a scrub that succeeded, no scrubbed text that shares no byte run with
 * the mark (no '[' or ']', not inside "[credential]") is left in the answer;
 * a scrub that failed left the answer empty.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "integ/inject.h"
#include "core/err.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int query_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || strchr("-._~%=&", c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char mark[] = SVC_INTEG_MARK;
	struct svc_integ_inject in;
	struct svc_integ_cred cred;
	const uint8_t *nl;
	struct svc_buf b;
	size_t i, slen;
	int err;

	if (size < 1 || size > 256 * 1024)
		return 0;
	memset(&cred, 0, sizeof cred);
	cred.kind = data[0] % 5;
	data++;
	size--;
	nl = memchr(data, '\n', size);
	slen = nl ? (size_t)(nl - data) : size;
	cred.secret = malloc(slen + 1);
	if (!cred.secret)
		return 0;
	memcpy(cred.secret, data, slen);
	cred.secret[slen] = '\0';
	cred.secret_len = slen;
	err = svc_integ_inject(&cred, &in);
	if (err == 0) {
		for (i = 0; i < in.nheaders; i++)
			if (strpbrk(in.headers[i], "\r\n") || !strstr(in.headers[i], ": "))
				__builtin_trap();
		for (i = 0; i < in.query.len; i++)
			if (!query_char(in.query.data[i]))
				__builtin_trap();
		svc_buf_init(&b, nl ? 2 * (size - slen) + 64 : 64);
		if (nl && svc_buf_add(&b, nl + 1, size - slen - 1) == 0) {
			err = svc_integ_scrub(&in, &b);
			if (err == 0) {
				for (i = 0; i < in.nsecrets; i++) {
					const char *s = in.secrets[i];
					if (strlen(s) < SVC_INTEG_SCRUB_MIN && strlen(s) > 0)
						continue; /* a form shorter than its value cannot be: Base64 and escapes only grow */
					if (!strpbrk(s, "[]") && !strstr(mark, s) && b.len &&
					    memmem(b.data, b.len, s, strlen(s)))
						__builtin_trap();
				}
			} else if (err != SVC_E_TOO_LARGE || b.len != 0) {
				__builtin_trap();
			}
		}
		svc_buf_dispose(&b);
	} else if (err != SVC_E_VALIDATION && err != SVC_E_INTERNAL && err != SVC_E_TOO_LARGE) {
		__builtin_trap();
	}
	svc_integ_inject_dispose(&in);
	free(cred.secret);
	return 0;
}
