/* agent_text.c: the text tool protocol for models without tool calls (toolMode "text"): the <svc-…> markup hidden from the streamed text as it arrives, and parsed into the same tool calls (docs/agent.md "Models without tool calls"). */
#include <stdio.h>
#include <string.h>

#include "agent/agent.h"
#include "core/err.h"

#define OPEN "<svc-"
#define OPEN_LEN 5

/* The end of the block that starts at `b` (an OPEN) in `s` of `len` bytes, scanning for its close from `from`: the offset after it, or 0 when it is not complete yet. */
static size_t block_end(const char *s, size_t len, size_t b, size_t from)
{
	const char *gt = memchr(s + b, '>', len - b), *close;
	char want[32];
	size_t name_len, n;

	if (!gt)
		return 0;
	if (gt > s + b && gt[-1] == '/')
		return (size_t)(gt - s) + 1; /* <svc-read path="…"/> */
	name_len = strcspn(s + b + OPEN_LEN, " \t\r\n/>");
	if (name_len == 0 || name_len > 16)
		return (size_t)(gt - s) + 1; /* not one of ours: the tag alone is hidden */
	n = (size_t)snprintf(want, sizeof want, "</svc-%.*s>", (int)name_len, s + b + OPEN_LEN);
	if (from < (size_t)(gt - s) + 1)
		from = (size_t)(gt - s) + 1;
	close = n <= len - from ? memmem(s + from, len - from, want, n) : NULL;
	return close ? (size_t)(close - s) + n : 0;
}

int svc_agent__text_shown(struct svc_agent__step *st, int final, const char **out, size_t *out_len)
{
	const char *s = svc_buf_str(&st->text);
	size_t len = st->text.len, p = st->text_pos, start;

	*out = s + p;
	*out_len = 0;
	for (;;) {
		if (st->text_block) {
			size_t end = block_end(s, len, st->text_block_at, st->text_scan);

			if (!end) {
				/* the close may begin in the last bytes: look again from a little before the end */
				st->text_scan = len > 32 ? len - 32 : 0;
				st->text_pos = len;
				return 0;
			}
			st->text_block = 0;
			p = end;
			st->text_pos = p;
			*out = s + p;
		}
		start = p;
		while (p < len) {
			const char *lt = memchr(s + p, '<', len - p);
			size_t have;

			if (!lt) {
				p = len;
				break;
			}
			p = (size_t)(lt - s);
			have = len - p < OPEN_LEN ? len - p : OPEN_LEN;
			if (memcmp(s + p, OPEN, have) != 0) {
				p++;
				continue;
			}
			if (have < OPEN_LEN && !final) {
				/* maybe the start of a block: hold it back until more arrives */
				*out = s + start;
				*out_len = p - start;
				st->text_pos = p;
				return 0;
			}
			if (have < OPEN_LEN) {
				p = len;
				break;
			}
			break;
		}
		*out = s + start;
		*out_len = p - start;
		st->text_pos = p;
		if (p < len && *out_len == 0) {
			st->text_block = 1;
			st->text_block_at = p;
			st->text_scan = p;
			continue;
		}
		return 0;
	}
}

/* The value of attribute `name` in the tag s[0..tag_len) into a new JSON string, or NULL. */
static struct json_object *attr(const char *s, size_t tag_len, const char *name)
{
	char key[32];
	const char *v, *q;
	size_t n = (size_t)snprintf(key, sizeof key, " %s=\"", name);

	v = memmem(s, tag_len, key, n);
	if (!v)
		return NULL;
	v += n;
	q = memchr(v, '"', tag_len - (size_t)(v - s));
	return q ? json_object_new_string_len(v, (int)(q - v)) : NULL;
}

/* The text between <tag> and </tag> inside body[0..len), one newline after the opening and before the closing dropped; NULL when missing. */
static struct json_object *part(const char *body, size_t len, const char *tag)
{
	char open[32], close[32];
	size_t no = (size_t)snprintf(open, sizeof open, "<%s>", tag), nc = (size_t)snprintf(close, sizeof close, "</%s>", tag);
	const char *a = memmem(body, len, open, no), *b;

	if (!a)
		return NULL;
	a += no;
	b = memmem(a, len - (size_t)(a - body), close, nc);
	if (!b)
		return NULL;
	if (a < b && *a == '\n')
		a++;
	if (b > a && b[-1] == '\n')
		b--;
	return json_object_new_string_len(a, (int)(b - a));
}

/* The arguments of block `name` (tag s[0..tag_len), body[0..body_len)), and the tool it means, into *out_tool. */
static struct json_object *block_args(const char *name, size_t name_len, const char *s, size_t tag_len, const char *body,
				      size_t body_len, const char **out_tool)
{
	struct json_object *a = json_object_new_object(), *v;

#define IS(lit) (name_len == sizeof(lit) - 1 && memcmp(name, lit, name_len) == 0)
	*out_tool = NULL;
	if (IS("read") || IS("delete") || IS("write") || IS("edit")) {
		*out_tool = IS("read") ? "read_file" : IS("delete") ? "delete_file" : IS("write") ? "write_file" : "edit_file";
		if ((v = attr(s, tag_len, "path")))
			json_object_object_add(a, "path", v);
	} else if (IS("list")) {
		*out_tool = "list_files";
	} else if (IS("search")) {
		*out_tool = "search_files";
		if ((v = attr(s, tag_len, "pattern")))
			json_object_object_add(a, "pattern", v);
	}
	if (IS("write") && body) {
		if (body_len && *body == '\n')
			body++, body_len--;
		json_object_object_add(a, "content", json_object_new_string_len(body, (int)body_len));
	}
	if (IS("edit") && body) {
		if ((v = part(body, body_len, "search")))
			json_object_object_add(a, "old_string", v);
		if ((v = part(body, body_len, "replace")))
			json_object_object_add(a, "new_string", v);
	}
#undef IS
	return a;
}

int svc_agent__text_calls(struct svc_agent__step *st)
{
	const char *s = svc_buf_str(&st->text);
	size_t len = st->text.len, p = 0;

	while (p < len) {
		const char *b = memmem(s + p, len - p, OPEN, OPEN_LEN), *gt, *tool, *body = NULL;
		size_t at, end, name_len, tag_len, body_len = 0;
		struct svc_agent__call *c;
		struct json_object *args;
		char id[32];

		if (!b)
			break;
		at = (size_t)(b - s);
		if (!(end = block_end(s, len, at, at)) || !(gt = memchr(b, '>', len - at)))
			break; /* an unfinished block is not run */
		name_len = strcspn(b + OPEN_LEN, " \t\r\n/>");
		tag_len = (size_t)(gt - b) + 1;
		if (gt[-1] != '/' && end - at >= tag_len + name_len + 7) {
			body = gt + 1;
			body_len = end - at - tag_len - (name_len + 7); /* less "</svc-" name ">" */
		}
		p = end;
		args = block_args(b + OPEN_LEN, name_len, b, tag_len, body, body_len, &tool);
		snprintf(id, sizeof id, "text_%zu", st->ncalls + 1);
		if (!(c = svc_agent__step_call(st, (long)st->ncalls, id, tool ? tool : "unknown_markup"))) {
			json_object_put(args);
			return SVC_E_MODEL_UNAVAILABLE;
		}
		if (svc_buf_adds(&c->args, json_object_to_json_string_ext(args, JSON_C_TO_STRING_PLAIN)) < 0) {
			json_object_put(args);
			return svc_agent__step_fail(st, "the arguments of a tool call are longer than %d bytes", SVC_AGENT__MAX_ARGS);
		}
		json_object_put(args);
	}
	return 0;
}

#define PROMPT_TEXT_TOOLS \
	"\n\nThis model has no tool calls: use these tools by writing markup in your answer instead (it is run as " \
	"you write it and hidden from the user; wait for the results, which come back as the next message starting " \
	"with " SVC_AGENT__TEXT_RESULTS "):\n" \
	"<svc-list/> lists the files. <svc-read path=\"index.html\"/> reads one. " \
	"<svc-search pattern=\"text\"/> searches them.\n"

static const char prompt_text_all[] = PROMPT_TEXT_TOOLS
	"<svc-write path=\"css/site.css\">\nthe whole new content of the file\n</svc-write> writes a file.\n"
	"<svc-edit path=\"index.html\"><search>exact text that occurs once</search><replace>its replacement"
	"</replace></svc-edit> changes part of one.\n"
	"<svc-delete path=\"old.html\"/> deletes one.\n"
	"Write the markup exactly so, with paths relative to the project's root; do not put it in code fences.";
static const char prompt_text_ro[] = PROMPT_TEXT_TOOLS "Write the markup exactly so; do not put it in code fences.";

const char *svc_agent__text_prompt(int read_only)
{
	return read_only ? prompt_text_ro : prompt_text_all;
}
