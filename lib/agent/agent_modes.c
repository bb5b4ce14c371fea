/* agent_modes.c: custom chat modes from SVC_AI_MODES: which tools a mode has and its system-prompt addition. */
#include <stdio.h>
#include <string.h>

#include "agent/agent.h"
#include "core/err.h"

static int name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
}

/* Checks one "name=read|build[:/path]" entry of `len` bytes; fills out when its name is `mode`. */
static int entry(const char *e, size_t len, const char *mode, struct svc_agent_mode *out, int *found, char *msg,
		 size_t msgmax)
{
	const char *eq = memchr(e, '=', len), *set, *colon;
	size_t nlen, slen, plen, i;

	if (!eq || eq == e) {
		snprintf(msg, msgmax, "SVC_AI_MODES: \"%.*s\" is not name=read or name=build[:prompt file]", (int)(len > 64 ? 64 : len), e);
		return SVC_E_VALIDATION;
	}
	nlen = (size_t)(eq - e);
	for (i = 0; i < nlen; i++) {
		if (!name_char(e[i]) || nlen > SVC_AGENT_MODE_NAME_MAX) {
			snprintf(msg, msgmax, "SVC_AI_MODES: mode name \"%.*s\" must be 1 to %d of a-z, 0-9, '-', '_'",
				 (int)(nlen > 64 ? 64 : nlen), e, SVC_AGENT_MODE_NAME_MAX);
			return SVC_E_VALIDATION;
		}
	}
	if ((nlen == 5 && memcmp(e, "build", 5) == 0) || (nlen == 4 && memcmp(e, "plan", 4) == 0) ||
	    (nlen == 4 && memcmp(e, "chat", 4) == 0)) {
		snprintf(msg, msgmax, "SVC_AI_MODES: the built-in mode %.*s cannot be redefined", (int)nlen, e);
		return SVC_E_VALIDATION;
	}
	set = eq + 1;
	colon = memchr(set, ':', len - nlen - 1);
	slen = colon ? (size_t)(colon - set) : len - nlen - 1;
	if (!((slen == 4 && memcmp(set, "read", 4) == 0) || (slen == 5 && memcmp(set, "build", 5) == 0))) {
		snprintf(msg, msgmax, "SVC_AI_MODES: mode %.*s: the tool set must be read or build", (int)nlen, e);
		return SVC_E_VALIDATION;
	}
	plen = colon ? len - nlen - 1 - slen - 1 : 0;
	if (colon && (plen == 0 || colon[1] != '/' || plen >= sizeof out->prompt_file || memchr(colon + 1, '\0', plen))) {
		snprintf(msg, msgmax, "SVC_AI_MODES: mode %.*s: the prompt file must be an absolute path under %zu bytes",
			 (int)nlen, e, sizeof out->prompt_file);
		return SVC_E_VALIDATION;
	}
	if (*found || strlen(mode) != nlen || memcmp(mode, e, nlen) != 0)
		return 0;
	*found = 1;
	memcpy(out->name, e, nlen);
	out->name[nlen] = '\0';
	out->build = slen == 5;
	out->custom = 1;
	memcpy(out->prompt_file, colon ? colon + 1 : "", plen);
	out->prompt_file[plen] = '\0';
	return 0;
}

int svc_agent_mode_lookup(const char *table, const char *mode, struct svc_agent_mode *out, char *msg, size_t msgmax)
{
	struct svc_agent_mode m;
	const char *p = table ? table : "", *end;
	int found = 0, error;
	size_t len;

	memset(&m, 0, sizeof m);
	if (msgmax)
		msg[0] = '\0';
	if (!mode)
		mode = "";
	while (*p) {
		end = strchr(p, ';');
		len = end ? (size_t)(end - p) : strlen(p);
		while (len && (*p == ' ' || *p == '\t')) {
			p++;
			len--;
		}
		while (len && (p[len - 1] == ' ' || p[len - 1] == '\t'))
			len--;
		if (len && (error = entry(p, len, mode, &m, &found, msg, msgmax)) < 0)
			return error;
		if (!end)
			break;
		p = end + 1;
	}
	/* the built-in modes, then what the table says, else chat */
	if (!found || strcmp(mode, "build") == 0 || strcmp(mode, "plan") == 0 || strcmp(mode, "chat") == 0) {
		len = strlen(mode);
		memset(&m, 0, sizeof m);
		memcpy(m.name, mode, len < SVC_AGENT_MODE_NAME_MAX ? len : SVC_AGENT_MODE_NAME_MAX);
		m.build = strcmp(mode, "build") == 0;
	}
	*out = m;
	return 0;
}
