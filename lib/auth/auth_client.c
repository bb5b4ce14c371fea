/* auth_client.c: the client's address (REMOTE_ADDR, X-Forwarded-For from trusted proxies only) and address lists. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <ctype.h>
#include <string.h>

#include "auth/auth.h"
#include "core/err.h"
#include "core/util.h"

/* An address as 16 bytes (IPv4 as its IPv4-mapped IPv6 form), so one compare covers both families. */
struct addr {
	unsigned char b[16];
};

static const unsigned char v4mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

/* Parses `len` bytes at `s` as an IPv4 or IPv6 address. *is4 is 1 for dotted IPv4. Returns 1 on success. */
static int parse_addr(const char *s, size_t len, struct addr *out, int *is4)
{
	char tmp[SVC_ADDR_MAX];
	struct in_addr a4;

	if (len == 0 || len >= sizeof tmp)
		return 0;
	memcpy(tmp, s, len);
	tmp[len] = '\0';
	if (inet_pton(AF_INET, tmp, &a4) == 1) {
		memcpy(out->b, v4mapped, 12);
		memcpy(out->b + 12, &a4, 4);
		*is4 = 1;
		return 1;
	}
	if (inet_pton(AF_INET6, tmp, out->b) == 1) {
		*is4 = 0;
		return 1;
	}
	return 0;
}

/* Parses one list entry "addr" or "addr/prefix" into the address and the prefix length in bits of the 16-byte form. */
static int parse_entry(const char *s, size_t len, struct addr *out, unsigned *bits)
{
	const char *slash = memchr(s, '/', len);
	size_t alen = slash ? (size_t)(slash - s) : len;
	uint64_t pfx;
	char num[8];
	int is4;

	if (!parse_addr(s, alen, out, &is4))
		return 0;
	if (!slash) {
		*bits = 128;
		return 1;
	}
	if (len - alen - 1 == 0 || len - alen - 1 >= sizeof num)
		return 0;
	memcpy(num, slash + 1, len - alen - 1);
	num[len - alen - 1] = '\0';
	if (svc_parse_u64(num, is4 ? 32 : 128, &pfx) < 0)
		return 0;
	*bits = (unsigned)pfx + (is4 ? 96 : 0);
	return 1;
}

static int prefix_match(const struct addr *a, const struct addr *net, unsigned bits)
{
	unsigned full = bits / 8, rest = bits % 8;

	if (memcmp(a->b, net->b, full) != 0)
		return 0;
	if (rest) {
		unsigned char mask = (unsigned char)(0xff << (8 - rest));
		if ((a->b[full] & mask) != (net->b[full] & mask))
			return 0;
	}
	return 1;
}

static int is_sep(char c)
{
	return c == ',' || c == ' ' || c == '\t';
}

/*
 * Walks the entries of `list`; for each calls parse_entry. With `a` set,
 * returns 1 at the first entry that holds it; without, returns 1 when every
 * entry parses. Malformed entries never match.
 */
static int walk(const char *list, const struct addr *a)
{
	const char *p = list;

	while (p && *p) {
		const char *e;
		struct addr net;
		unsigned bits;
		int ok;

		while (is_sep(*p))
			p++;
		if (!*p)
			break;
		e = p;
		while (*e && !is_sep(*e))
			e++;
		ok = parse_entry(p, (size_t)(e - p), &net, &bits);
		if (a && ok && prefix_match(a, &net, bits))
			return 1;
		if (!a && !ok)
			return 0;
		p = e;
	}
	return a ? 0 : 1;
}

int svc_auth_addr_in_list(const char *addr, const char *list)
{
	struct addr a;
	int is4;

	if (!addr || !list || !parse_addr(addr, strlen(addr), &a, &is4))
		return 0;
	return walk(list, &a);
}

int svc_auth_addr_list_valid(const char *list)
{
	return list ? walk(list, NULL) : 1;
}

/* Copies `len` bytes at `s` into out (max bytes), or "-" when it does not fit or is empty. */
static void put(const char *s, size_t len, char *out, size_t max)
{
	if (max == 0)
		return;
	if (len == 0 || len >= max) {
		if (max >= 2) {
			out[0] = '-';
			out[1] = '\0';
		} else {
			out[0] = '\0';
		}
		return;
	}
	memcpy(out, s, len);
	out[len] = '\0';
}

void svc_auth_client_addr(const char *remote, const char *xff, const char *trusted, char *out, size_t max)
{
	const char *end, *start, *best;
	size_t best_len;
	struct addr a;
	int is4;

	if (!remote || !*remote) {
		put("", 0, out, max);
		return;
	}
	best = remote;
	best_len = strlen(remote);
	if (!xff || !*xff || !trusted || !*trusted || !svc_auth_addr_in_list(remote, trusted)) {
		put(best, best_len, out, max);
		return;
	}
	/* From the right: each hop added the address of the one before it. */
	end = xff + strlen(xff);
	while (end > xff) {
		const char *s, *e;
		char tmp[SVC_ADDR_MAX];

		start = end;
		while (start > xff && start[-1] != ',')
			start--;
		s = start;
		e = end;
		while (s < e && (*s == ' ' || *s == '\t'))
			s++;
		while (e > s && (e[-1] == ' ' || e[-1] == '\t'))
			e--;
		if (!parse_addr(s, (size_t)(e - s), &a, &is4))
			break;   /* garbage: believe nothing further left */
		best = s;
		best_len = (size_t)(e - s);
		put(s, best_len, tmp, sizeof tmp);
		if (!svc_auth_addr_in_list(tmp, trusted))
			break;   /* the first untrusted hop is the client */
		end = start > xff ? start - 1 : xff;
	}
	put(best, best_len, out, max);
}

int svc_auth_addr_key(const char *addr, char *out, size_t size)
{
	struct addr a;
	int is4 = 0, n;

	if (!addr || !parse_addr(addr, strlen(addr), &a, &is4)) {
		n = snprintf(out, size, "%s", addr ? addr : "-");
		return n < 0 || (size_t)n >= size ? SVC_E_INTERNAL : 0;
	}
	if (is4 || memcmp(a.b, v4mapped, 12) == 0)
		n = snprintf(out, size, "%u.%u.%u.%u", a.b[12], a.b[13], a.b[14], a.b[15]);
	else /* one subscriber usually holds a whole /64 (RFC 6177): it counts as one address */
		n = snprintf(out, size, "%x:%x:%x:%x::/64", a.b[0] << 8 | a.b[1], a.b[2] << 8 | a.b[3],
			     a.b[4] << 8 | a.b[5], a.b[6] << 8 | a.b[7]);
	return n < 0 || (size_t)n >= size ? SVC_E_INTERNAL : 0;
}

int svc_auth_email_normalise(const char *in, char *out)
{
	size_t i, len = strlen(in), at = 0, ats = 0;

	if (len < 3 || len > 254)
		return SVC_E_VALIDATION;
	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)in[i];
		if (c <= ' ' || c == 0x7f || c == '"' || c == '<' || c == '>' || c == '\\')
			return SVC_E_VALIDATION;
		if (c == '@') {
			at = i;
			ats++;
		}
		out[i] = (char)tolower(c);
	}
	out[len] = '\0';
	if (ats != 1 || at == 0 || at == len - 1 || !strchr(out + at + 1, '.') ||
	    out[len - 1] == '.' || out[at + 1] == '.')
		return SVC_E_VALIDATION;
	return 0;
}
