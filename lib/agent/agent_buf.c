/* agent_buf.c: the agent module's bounded byte buffer and UTF-8 helpers. */
#include <stdlib.h>
#include <string.h>

#include "agent/agent.h"
#include "core/err.h"

void svc_agent__buf_init(struct svc_agent__buf *b, size_t max)
{
	b->p = NULL;
	b->len = 0;
	b->cap = 0;
	b->max = max;
}

int svc_agent__buf_add(struct svc_agent__buf *b, const char *data, size_t len)
{
	size_t need, cap;
	char *p;

	if (len > b->max || b->len > b->max - len)
		return SVC_E_TOO_LARGE;
	need = b->len + len + 1;
	if (need > b->cap) {
		cap = b->cap ? b->cap : 256;
		while (cap < need)
			cap = cap > SIZE_MAX / 2 ? need : cap * 2;
		if (cap > b->max + 1)
			cap = b->max + 1;
		p = realloc(b->p, cap);
		if (!p)
			return SVC_E_INTERNAL;
		b->p = p;
		b->cap = cap;
	}
	if (len)
		memcpy(b->p + b->len, data, len);
	b->len += len;
	b->p[b->len] = '\0';
	return 0;
}

int svc_agent__buf_adds(struct svc_agent__buf *b, const char *s)
{
	return svc_agent__buf_add(b, s, strlen(s));
}

const char *svc_agent__buf_str(const struct svc_agent__buf *b)
{
	return b->p ? b->p : "";
}

void svc_agent__buf_dispose(struct svc_agent__buf *b)
{
	free(b->p);
	b->p = NULL;
	b->len = 0;
	b->cap = 0;
}

/* Length of the UTF-8 sequence starting at s[0] if valid (RFC 3629 section 4), else 0. */
static size_t utf8_seq(const unsigned char *s, size_t len)
{
	unsigned char c = s[0];

	if (c >= 0x01 && c <= 0x7f)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		return len >= 2 && (s[1] & 0xc0) == 0x80 ? 2 : 0;
	if (c >= 0xe0 && c <= 0xef) {
		if (len < 3 || (s[1] & 0xc0) != 0x80 || (s[2] & 0xc0) != 0x80)
			return 0;
		if (c == 0xe0 && s[1] < 0xa0)
			return 0;
		if (c == 0xed && s[1] > 0x9f)
			return 0;
		return 3;
	}
	if (c >= 0xf0 && c <= 0xf4) {
		if (len < 4 || (s[1] & 0xc0) != 0x80 || (s[2] & 0xc0) != 0x80 || (s[3] & 0xc0) != 0x80)
			return 0;
		if (c == 0xf0 && s[1] < 0x90)
			return 0;
		if (c == 0xf4 && s[1] > 0x8f)
			return 0;
		return 4;
	}
	return 0;
}

int svc_agent__utf8_valid(const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, n;

	while (i < len) {
		n = utf8_seq(p + i, len - i);
		if (!n)
			return 0;
		i += n;
	}
	return 1;
}

size_t svc_agent__utf8_cut(const char *s, size_t len, size_t max)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n;

	if (len <= max)
		return len;
	n = max;
	/* step back over continuation bytes to the start of the sequence that crosses `max` */
	while (n > 0 && (p[n] & 0xc0) == 0x80)
		n--;
	return n;
}
