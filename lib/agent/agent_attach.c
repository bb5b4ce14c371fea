/* agent_attach.c: attachments of chat messages: images (data URLs checked by decoding them) and elements the user pointed at in the preview. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/agent.h"
#include "auth/crypto.h"
#include "core/err.h"

struct image_type {
	const char *media;
	const char *name;
};

static const struct image_type types[] = {
	{ "image/png", "PNG" },
	{ "image/jpeg", "JPEG" },
	{ "image/webp", "WebP" },
	{ "image/gif", "GIF" },
};

/* Returns 1 when `b` (`n` bytes) starts with the signature of media type `media`. */
static int signature_ok(const char *media, const uint8_t *b, size_t n)
{
	if (strcmp(media, "image/png") == 0)
		return n >= 8 && memcmp(b, "\x89PNG\r\n\x1a\n", 8) == 0;
	if (strcmp(media, "image/jpeg") == 0)
		return n >= 3 && b[0] == 0xff && b[1] == 0xd8 && b[2] == 0xff;
	if (strcmp(media, "image/gif") == 0)
		return n >= 6 && (memcmp(b, "GIF87a", 6) == 0 || memcmp(b, "GIF89a", 6) == 0);
	if (strcmp(media, "image/webp") == 0)
		return n >= 12 && memcmp(b, "RIFF", 4) == 0 && memcmp(b + 8, "WEBP", 4) == 0;
	return 0;
}

/* Checks the image data URL `url` of attachment `i` and appends {mediaType, data} to `list`. Errors as svc_agent_attachments_check(). */
static int image_of(const char *url, size_t i, struct json_object *list, char *msg, size_t msgmax)
{
	struct json_object *img;
	const char *comma, *data;
	uint8_t *bytes = NULL;
	size_t t, mlen, blen = 0;
	int error;

	if (strncmp(url, "data:", 5) != 0 || !(comma = strchr(url, ','))) {
		snprintf(msg, msgmax, "attachment %zu: url must be a data URL", i);
		return SVC_E_VALIDATION;
	}
	mlen = (size_t)(comma - url);
	for (t = 0; t < sizeof types / sizeof types[0]; t++) {
		size_t tl = strlen(types[t].media);

		if (mlen == 5 + tl + 7 && memcmp(url + 5, types[t].media, tl) == 0 && memcmp(url + 5 + tl, ";base64", 7) == 0)
			break;
	}
	if (t == sizeof types / sizeof types[0]) {
		snprintf(msg, msgmax, "attachment %zu: only base64 data URLs of PNG, JPEG, WebP and GIF images are accepted", i);
		return SVC_E_VALIDATION;
	}
	data = comma + 1;
	error = svc_base64_decode(data, strlen(data), SVC_AGENT_IMAGE_MAX, &bytes, &blen);
	if (error == SVC_E_TOO_LARGE) {
		snprintf(msg, msgmax, "attachment %zu: an image may hold at most %d bytes", i, SVC_AGENT_IMAGE_MAX);
		return error;
	}
	if (error < 0 || blen == 0) {
		free(bytes);
		snprintf(msg, msgmax, "attachment %zu: the data is not base64", i);
		return error == SVC_E_INTERNAL ? error : SVC_E_VALIDATION;
	}
	error = signature_ok(types[t].media, bytes, blen) ? 0 : SVC_E_VALIDATION;
	free(bytes);
	if (error < 0) {
		snprintf(msg, msgmax, "attachment %zu: the data is not a %s image", i, types[t].name);
		return error;
	}
	if (!(img = json_object_new_object()) || json_object_array_add(list, img) < 0) {
		json_object_put(img);
		return SVC_E_INTERNAL;
	}
	json_object_object_add(img, "mediaType", json_object_new_string(types[t].media));
	json_object_object_add(img, "data", json_object_new_string(data));
	return 0;
}

/* Whether string member `key` of `a` is there (or may be absent, `optional`) with `min`..`max` bytes. */
static int str_ok(struct json_object *a, const char *key, size_t min, size_t max, int optional)
{
	const char *v = svc_agent__json_str(a, key);
	struct json_object *x;

	if (!v)
		return optional && !json_object_object_get_ex(a, key, &x);
	return strlen(v) >= min && strlen(v) <= max;
}

/* Checks an element attachment (issue 29 "Point at an element") and its image, if any. Errors as svc_agent_attachments_check(). */
static int element_of(struct json_object *a, size_t i, struct json_object *list, char *msg, size_t msgmax)
{
	const char *page = svc_agent__json_str(a, "pagePath"), *image = svc_agent__json_str(a, "image");
	struct json_object *x;

	if (!str_ok(a, "selector", 1, SVC_AGENT_ELEMENT_FIELD_MAX, 0) || !str_ok(a, "html", 0, SVC_AGENT_ELEMENT_HTML_MAX, 1) ||
	    !str_ok(a, "text", 0, SVC_AGENT_ELEMENT_FIELD_MAX, 1) || !str_ok(a, "pagePath", 1, SVC_AGENT_ELEMENT_FIELD_MAX, 0) ||
	    page[0] != '/' || (!image && json_object_object_get_ex(a, "image", &x) && !json_object_is_type(x, json_type_null))) {
		snprintf(msg, msgmax, "attachment %zu must be {type: \"element\", selector (1-%d bytes), html (at most %d "
			 "bytes), text, pagePath (\"/...\"), image (a PNG data URL, optional)}",
			 i, SVC_AGENT_ELEMENT_FIELD_MAX, SVC_AGENT_ELEMENT_HTML_MAX);
		return SVC_E_VALIDATION;
	}
	return image ? image_of(image, i, list, msg, msgmax) : 0;
}

int svc_agent_attachments_check(struct json_object *attachments, struct json_object **out, char *msg, size_t msgmax)
{
	struct json_object *list = NULL, *a;
	const char *type, *url;
	size_t i, n;
	int error = 0;

	if (!(list = json_object_new_array()))
		return SVC_E_INTERNAL;
	if (!attachments || json_object_is_type(attachments, json_type_null))
		goto ok;
	if (!json_object_is_type(attachments, json_type_array)) {
		snprintf(msg, msgmax, "attachments must be an array");
		error = SVC_E_VALIDATION;
		goto done;
	}
	n = json_object_array_length(attachments);
	for (i = 0; i < n; i++) {
		a = json_object_array_get_idx(attachments, i);
		type = svc_agent__json_str(a, "type");
		url = svc_agent__json_str(a, "url");
		if (type && strcmp(type, "element") == 0) {
			if ((error = element_of(a, i, list, msg, msgmax)) < 0)
				goto done;
			continue;
		}
		if (!type || !url || strcmp(type, "image") != 0) {
			snprintf(msg, msgmax, "attachment %zu must be {type: \"image\", url: \"data:image/...;base64,...\"} "
				 "or {type: \"element\", ...}", i);
			error = SVC_E_VALIDATION;
			goto done;
		}
		if ((error = image_of(url, i, list, msg, msgmax)) < 0)
			goto done;
	}
ok:
	*out = list;
	list = NULL;
done:
	json_object_put(list);
	return error;
}

int svc_agent_attachments_elements(struct json_object *attachments, char **out)
{
	struct svc_buf b;
	size_t i, n = attachments && json_object_is_type(attachments, json_type_array) ? json_object_array_length(attachments) : 0;
	int error = 0;

	*out = NULL;
	svc_buf_init(&b, 4 * (SVC_AGENT_ELEMENT_HTML_MAX + 4 * SVC_AGENT_ELEMENT_FIELD_MAX) * 10);
	for (i = 0; i < n && !error; i++) {
		struct json_object *a = json_object_array_get_idx(attachments, i);
		const char *type = svc_agent__json_str(a, "type"), *html = svc_agent__json_str(a, "html"),
			   *text = svc_agent__json_str(a, "text");

		if (!type || strcmp(type, "element") != 0)
			continue;
		if (svc_buf_adds(&b, "\n\n[The user pointed at this element of the page ") < 0 ||
		    svc_buf_adds(&b, svc_agent__json_str(a, "pagePath")) < 0 || svc_buf_adds(&b, "]\nselector: ") < 0 ||
		    svc_buf_adds(&b, svc_agent__json_str(a, "selector")) < 0 ||
		    (text && text[0] && (svc_buf_adds(&b, "\ntext: ") < 0 || svc_buf_adds(&b, text) < 0)) ||
		    (html && html[0] && (svc_buf_adds(&b, "\nHTML:\n```html\n") < 0 || svc_buf_adds(&b, html) < 0 ||
					 svc_buf_adds(&b, "\n```") < 0)))
			error = SVC_E_INTERNAL;
	}
	if (!error && b.len && !(*out = strdup(svc_buf_str(&b))))
		error = SVC_E_INTERNAL;
	svc_buf_dispose(&b);
	return error;
}
