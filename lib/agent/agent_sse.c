/* agent_sse.c: an incremental server-sent events splitter for the model providers' streams. */
#include <string.h>

#include "agent/agent.h"
#include "core/err.h"

void svc_agent__sse_init(struct svc_agent__sse *s, size_t max_line, svc_agent__sse_fn fn, void *ctx)
{
	svc_buf_init(&s->line, max_line);
	svc_buf_init(&s->data, max_line);
	s->event[0] = '\0';
	s->has_data = 0;
	s->after_cr = 0;
	s->fn = fn;
	s->ctx = ctx;
}

void svc_agent__sse_dispose(struct svc_agent__sse *s)
{
	svc_buf_dispose(&s->line);
	svc_buf_dispose(&s->data);
}

static int dispatch(struct svc_agent__sse *s)
{
	int error = 0;

	if (s->has_data)
		error = s->fn(s->ctx, s->event, svc_buf_str(&s->data), s->data.len);
	svc_buf_reset(&s->data);
	s->has_data = 0;
	s->event[0] = '\0';
	return error;
}

/* One complete line (without its end) per "Interpreting an event stream". */
static int process_line(struct svc_agent__sse *s, const char *line, size_t len)
{
	const char *colon, *value;
	size_t name_len, value_len;
	int error;

	if (len == 0)
		return dispatch(s);
	if (line[0] == ':')
		return 0;
	colon = memchr(line, ':', len);
	if (colon) {
		name_len = (size_t)(colon - line);
		value = colon + 1;
		value_len = len - name_len - 1;
		if (value_len && value[0] == ' ') {
			value++;
			value_len--;
		}
	} else {
		name_len = len;
		value = "";
		value_len = 0;
	}
	if (name_len == 4 && memcmp(line, "data", 4) == 0) {
		if (s->has_data && (error = svc_buf_add(&s->data, "\n", 1)) < 0)
			return error;
		if ((error = svc_buf_add(&s->data, value, value_len)) < 0)
			return error;
		s->has_data = 1;
	} else if (name_len == 5 && memcmp(line, "event", 5) == 0) {
		if (value_len >= sizeof(s->event))
			value_len = sizeof(s->event) - 1;
		memcpy(s->event, value, value_len);
		s->event[value_len] = '\0';
	}
	/* "id", "retry" and unknown fields are ignored */
	return 0;
}

int svc_agent__sse_feed(struct svc_agent__sse *s, const char *bytes, size_t len)
{
	size_t i = 0, start;
	int error;

	while (i < len) {
		if (s->after_cr) {
			s->after_cr = 0;
			if (bytes[i] == '\n') {
				i++;
				continue;
			}
		}
		start = i;
		while (i < len && bytes[i] != '\n' && bytes[i] != '\r')
			i++;
		if ((error = svc_buf_add(&s->line, bytes + start, i - start)) < 0)
			return error;
		if (i == len)
			break;
		if (bytes[i] == '\r')
			s->after_cr = 1;
		i++;
		error = process_line(s, svc_buf_str(&s->line), s->line.len);
		svc_buf_reset(&s->line);
		if (error < 0)
			return error;
	}
	return 0;
}

int svc_agent__sse_finish(struct svc_agent__sse *s)
{
	int error;

	if (s->line.len) {
		error = process_line(s, svc_buf_str(&s->line), s->line.len);
		svc_buf_reset(&s->line);
		if (error < 0)
			return error;
	}
	return dispatch(s);
}
