/* agent_attach.c: image attachments of chat messages: data URLs checked by decoding them. */
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

int svc_agent_attachments_check(struct json_object *attachments, struct json_object **out, char *msg, size_t msgmax)
{
	struct json_object *list = NULL, *a, *img;
	const char *type, *url, *comma, *data;
	uint8_t *bytes = NULL;
	size_t i, n, t, mlen, blen = 0;
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
		if (!type || !url || strcmp(type, "image") != 0) {
			snprintf(msg, msgmax, "attachment %zu must be {type: \"image\", url: \"data:image/...;base64,...\"}", i);
			error = SVC_E_VALIDATION;
			goto done;
		}
		if (strncmp(url, "data:", 5) != 0 || !(comma = strchr(url, ','))) {
			snprintf(msg, msgmax, "attachment %zu: url must be a data URL", i);
			error = SVC_E_VALIDATION;
			goto done;
		}
		mlen = (size_t)(comma - url);
		for (t = 0; t < sizeof types / sizeof types[0]; t++) {
			size_t tl = strlen(types[t].media);

			if (mlen == 5 + tl + 7 && memcmp(url + 5, types[t].media, tl) == 0 &&
			    memcmp(url + 5 + tl, ";base64", 7) == 0)
				break;
		}
		if (t == sizeof types / sizeof types[0]) {
			snprintf(msg, msgmax, "attachment %zu: only base64 data URLs of PNG, JPEG, WebP and GIF images are accepted", i);
			error = SVC_E_VALIDATION;
			goto done;
		}
		data = comma + 1;
		error = svc_base64_decode(data, strlen(data), SVC_AGENT_IMAGE_MAX, &bytes, &blen);
		if (error == SVC_E_TOO_LARGE) {
			snprintf(msg, msgmax, "attachment %zu: an image may hold at most %d bytes", i, SVC_AGENT_IMAGE_MAX);
			goto done;
		}
		if (error < 0 || blen == 0) {
			snprintf(msg, msgmax, "attachment %zu: the data is not base64", i);
			error = error == SVC_E_INTERNAL ? error : SVC_E_VALIDATION;
			goto done;
		}
		if (!signature_ok(types[t].media, bytes, blen)) {
			snprintf(msg, msgmax, "attachment %zu: the data is not a %s image", i, types[t].name);
			error = SVC_E_VALIDATION;
			goto done;
		}
		free(bytes);
		bytes = NULL;
		if (!(img = json_object_new_object()) || json_object_array_add(list, img) < 0) {
			json_object_put(img);
			error = SVC_E_INTERNAL;
			goto done;
		}
		json_object_object_add(img, "mediaType", json_object_new_string(types[t].media));
		json_object_object_add(img, "data", json_object_new_string(data));
	}
ok:
	*out = list;
	list = NULL;
done:
	free(bytes);
	json_object_put(list);
	return error;
}
