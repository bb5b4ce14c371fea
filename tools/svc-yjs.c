/* svc-yjs.c: inspect and convert stored Yjs updates (v1) with lib/yjs: json, sv, encode, diff. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "core/err.h"
#include "core/util.h"
#include "yjs/yjs.h"

#define MAX_FILE (1024UL * 1024UL * 1024UL)

static int usage(void)
{
	fprintf(stderr,
		"usage: svc-yjs json UPDATE_FILE...\n"
		"       svc-yjs sv UPDATE_FILE...\n"
		"       svc-yjs encode UPDATE_FILE...\n"
		"       svc-yjs diff UPDATE_FILE SV_FILE\n");
	return 2;
}

/* Reads all of `path` into *out (malloc'd, *len bytes). */
static int read_file(const char *path, uint8_t **out, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	size_t n = 0, cap = 0;
	if (!f) {
		fprintf(stderr, "svc-yjs: %s: %s\n", path, strerror(errno));
		return -1;
	}
	for (;;) {
		size_t got;
		if (SVC_ARRAY_GROW(buf, cap, n < 65536 ? 65536 : n + 1) < 0) {
			fprintf(stderr, "svc-yjs: %s: out of memory\n", path);
			goto fail;
		}
		got = fread(buf + n, 1, cap - n, f);
		n += got;
		if (got == 0)
			break;
		if (n > MAX_FILE) {
			fprintf(stderr, "svc-yjs: %s: larger than %lu bytes\n", path, MAX_FILE);
			goto fail;
		}
	}
	if (ferror(f)) {
		fprintf(stderr, "svc-yjs: %s: read error\n", path);
		goto fail;
	}
	fclose(f);
	*out = buf;
	*len = n;
	return 0;
fail:
	free(buf);
	fclose(f);
	return -1;
}

static int apply_files(struct svc_yjs_doc *doc, char **paths, int n)
{
	int i;
	for (i = 0; i < n; i++) {
		uint8_t *data;
		size_t len, off = 0;
		int err;
		if (read_file(paths[i], &data, &len) < 0)
			return -1;
		err = svc_yjs_apply_update(doc, data, len, NULL, NULL, &off);
		free(data);
		if (err < 0) {
			fprintf(stderr, "svc-yjs: %s: malformed update at byte offset %zu (%s)\n",
				paths[i], off, svc_err_message(err));
			return -1;
		}
	}
	return 0;
}

static int write_out(const struct svc_yjs_buf *b)
{
	if (b->len && fwrite(b->data, 1, b->len, stdout) != b->len)
		return -1;
	return fflush(stdout) == 0 ? 0 : -1;
}

/* Prints the state vector as JSON: decodes the encoded vector written by the core. */
static void print_sv(const struct svc_yjs_buf *sv)
{
	size_t pos = 0;
	uint64_t n, i, v[2];
	int k;
	/* the core wrote it: well-formed varUints */
	for (n = 0, k = 0; pos < sv->len; pos++) {
		n |= (uint64_t)(sv->data[pos] & 0x7f) << (7 * k++);
		if (!(sv->data[pos] & 0x80)) {
			pos++;
			break;
		}
	}
	struct json_object *o = json_object_new_object();

	for (i = 0; o && i < n; i++) {
		char client[24];
		int j;
		for (j = 0; j < 2; j++) {
			v[j] = 0;
			k = 0;
			while (pos < sv->len) {
				uint8_t b = sv->data[pos++];
				v[j] |= (uint64_t)(b & 0x7f) << (7 * k++);
				if (!(b & 0x80))
					break;
			}
		}
		snprintf(client, sizeof client, "%llu", (unsigned long long)v[0]);
		json_object_object_add(o, client, json_object_new_uint64(v[1]));
	}
	printf("%s\n", o ? json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN) : "null");
	json_object_put(o);
}

int main(int argc, char **argv)
{
	struct svc_yjs_doc *doc = NULL;
	struct svc_yjs_buf out = {0};
	int rc = 1;
	if (argc < 3)
		return usage();
	if (svc_yjs_doc_new(&doc, 0) < 0)
		return 1;
	if (!strcmp(argv[1], "json")) {
		if (apply_files(doc, argv + 2, argc - 2) < 0)
			goto done;
		{
			struct svc_yjs_buf files = {0}, meta = {0};
			svc_yjs_map_json(doc, "files", &files);
			svc_yjs_map_json(doc, "meta", &meta);
			/* the two maps are JSON already: only joined here */
			fputs("{\"files\":", stdout);
			fwrite(files.data, 1, files.len, stdout);
			fputs(",\"meta\":", stdout);
			fwrite(meta.data, 1, meta.len, stdout);
			fputs("}\n", stdout);
			svc_yjs_buf_dispose(&files);
			svc_yjs_buf_dispose(&meta);
		}
		rc = 0;
	} else if (!strcmp(argv[1], "sv")) {
		if (apply_files(doc, argv + 2, argc - 2) < 0)
			goto done;
		svc_yjs_state_vector(doc, &out);
		print_sv(&out);
		rc = 0;
	} else if (!strcmp(argv[1], "encode")) {
		if (apply_files(doc, argv + 2, argc - 2) < 0)
			goto done;
		svc_yjs_encode_state(doc, NULL, 0, &out, NULL);
		rc = write_out(&out) < 0 ? 1 : 0;
	} else if (!strcmp(argv[1], "diff")) {
		uint8_t *sv;
		size_t svlen, off = 0;
		int err;
		if (argc != 4) {
			rc = usage();
			goto done;
		}
		if (apply_files(doc, argv + 2, 1) < 0 || read_file(argv[3], &sv, &svlen) < 0)
			goto done;
		err = svc_yjs_encode_state(doc, sv, svlen, &out, &off);
		free(sv);
		if (err < 0) {
			fprintf(stderr, "svc-yjs: %s: malformed state vector at byte offset %zu\n",
				argv[3], off);
			goto done;
		}
		rc = write_out(&out) < 0 ? 1 : 0;
	} else {
		rc = usage();
	}
done:
	svc_yjs_buf_dispose(&out);
	svc_yjs_doc_free(doc);
	return rc;
}
