/* yjs-driver.c: drives lib/yjs from the node conformance tests over a line protocol on stdin/stdout (hex payloads). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "yjs/yjs.h"
#include "yjs/yjs_int.h"

/*
 * With SVC_YJS_PACK=1 every string of the document is packed (zstd, lib/yjs
 * svc_yjs_doc_pack) before every command, so the checks run on packed content.
 * One command per line, fields separated by one space, byte strings in hex:
 *   new CLIENT                  fresh document with that client id
 *   apply HEX                   apply an update -> "ok HEX(broadcast update)" | "err OFFSET"
 *   settext KEY HEX             files[KEY] = new Y.Text(text)        -> "ok HEX(update)"
 *   insert KEY INDEX HEX        insert into files[KEY]               -> "ok HEX(update)"
 *   delete KEY INDEX COUNT      delete from files[KEY]               -> "ok HEX(update)"
 *   replace KEY HEX             replace-text helper on files[KEY]    -> "ok HEX(update)"
 *   setjson ROOT KEY HEX        ROOT[KEY] = JSON value               -> "ok HEX(update)"
 *   mapdel ROOT KEY             delete ROOT[KEY]                     -> "ok HEX(update)"
 *   begin / commit              explicit transaction; commit answers "ok HEX(update)"
 *   json                        -> "ok {"files":...,"meta":...}"
 *   sv                          -> "ok HEX(state vector)"
 *   encode [HEX(sv)]            -> "ok HEX(update)"
 *   text KEY                    -> "ok HEX(utf8)"
 * KEY and ROOT are hex too. Anything else answers "err ...".
 */

static size_t unhex(const char *h, size_t n, uint8_t *out)
{
	size_t i;
	for (i = 0; i + 1 < n; i += 2) {
		char t[3] = { h[i], h[i + 1], 0 };
		out[i / 2] = (uint8_t)strtoul(t, NULL, 16);
	}
	return n / 2;
}

static void put_hex(const uint8_t *p, size_t n)
{
	static const char hx[] = "0123456789abcdef";
	size_t i;
	for (i = 0; i < n; i++) {
		putchar(hx[p[i] >> 4]);
		putchar(hx[p[i] & 15]);
	}
}

static void ok_buf(const struct svc_yjs_buf *b)
{
	fputs("ok ", stdout);
	put_hex(b->data, b->len);
	putchar('\n');
}

/* Splits line into at most `max` space-separated fields. */
static int fields(char *line, char **f, int max)
{
	int n = 0;
	char *p = line;
	while (*p && n < max) {
		f[n++] = p;
		while (*p && *p != ' ')
			p++;
		if (*p)
			*p++ = 0;
	}
	return n;
}

struct field {
	uint8_t *p;
	size_t n;
};

static struct field hexf(const char *s)
{
	struct field f;
	size_t n = strlen(s);
	f.p = malloc(n / 2 + 1);
	if (!f.p)
		abort();
	f.n = unhex(s, n, f.p);
	f.p[f.n] = 0;
	return f;
}

int main(void)
{
	struct svc_yjs_doc *doc = NULL;
	char *line = NULL;
	size_t cap = 0;
	ssize_t got;
	int explicit = 0;
	const char *pk = getenv("SVC_YJS_PACK");
	int packed = pk && strcmp(pk, "1") == 0;
	svc_yjs_doc_new(&doc, 1);
	while ((got = getline(&line, &cap, stdin)) > 0) {
		char *f[5];
		int nf, err = 0;
		struct svc_yjs_buf out = {0};
		struct svc_yjs_buf *up = explicit ? NULL : &out;
		if (line[got - 1] == '\n')
			line[--got] = 0;
		nf = fields(line, f, 5);
		if (nf == 0)
			continue;
		if (doc && packed) {
			/* SVC_YJS_PACK=1: every command runs on fully packed string content */
			doc->pack_always = 1;
			svc_yjs_doc_pack(doc, 1, SIZE_MAX);
			svc_yjs_doc_pack(doc, 1, SIZE_MAX);
		}
		if (!strcmp(f[0], "new") && nf == 2) {
			svc_yjs_doc_free(doc);
			svc_yjs_doc_new(&doc, strtoull(f[1], NULL, 10));
			explicit = 0;
			puts("ok");
		} else if (!strcmp(f[0], "apply") && nf == 2) {
			struct field u = hexf(f[1]);
			size_t off = 0;
			err = svc_yjs_apply_update(doc, u.p, u.n, &out, NULL, &off);
			free(u.p);
			if (err < 0)
				printf("err %zu\n", off);
			else
				ok_buf(&out);
		} else if (!strcmp(f[0], "settext") && nf == 3) {
			struct field k = hexf(f[1]), t = hexf(f[2]);
			err = svc_yjs_map_set_text(doc, "files", (char *)k.p, k.n, (char *)t.p, t.n, up, NULL);
			free(k.p);
			free(t.p);
			if (err < 0)
				printf("err %d\n", err);
			else
				ok_buf(&out);
		} else if (!strcmp(f[0], "insert") && nf == 4) {
			struct field k = hexf(f[1]), t = hexf(f[3]);
			err = svc_yjs_text_insert(doc, "files", (char *)k.p, k.n, strtoull(f[2], NULL, 10),
						  (char *)t.p, t.n, up, NULL);
			free(k.p);
			free(t.p);
			if (err < 0)
				printf("err %d\n", err);
			else
				ok_buf(&out);
		} else if (!strcmp(f[0], "delete") && nf == 4) {
			struct field k = hexf(f[1]);
			err = svc_yjs_text_delete(doc, "files", (char *)k.p, k.n, strtoull(f[2], NULL, 10),
						  strtoull(f[3], NULL, 10), up, NULL);
			free(k.p);
			if (err < 0)
				printf("err %d\n", err);
			else
				ok_buf(&out);
		} else if (!strcmp(f[0], "replace") && nf == 3) {
			struct field k = hexf(f[1]), t = hexf(f[2]);
			err = svc_yjs_text_replace(doc, "files", (char *)k.p, k.n, (char *)t.p, t.n, up, NULL);
			free(k.p);
			free(t.p);
			if (err < 0)
				printf("err %d\n", err);
			else
				ok_buf(&out);
		} else if (!strcmp(f[0], "setjson") && nf == 4) {
			struct field r = hexf(f[1]), k = hexf(f[2]), j = hexf(f[3]);
			err = svc_yjs_map_set_json(doc, (char *)r.p, (char *)k.p, k.n, (char *)j.p, j.n, up, NULL);
			free(r.p);
			free(k.p);
			free(j.p);
			if (err < 0)
				printf("err %d\n", err);
			else
				ok_buf(&out);
		} else if (!strcmp(f[0], "mapdel") && nf == 3) {
			struct field r = hexf(f[1]), k = hexf(f[2]);
			err = svc_yjs_map_delete(doc, (char *)r.p, (char *)k.p, k.n, up, NULL);
			free(r.p);
			free(k.p);
			if (err < 0)
				printf("err %d\n", err);
			else
				ok_buf(&out);
		} else if (!strcmp(f[0], "begin")) {
			err = svc_yjs_txn_begin(doc);
			explicit = err == 0;
			puts(err < 0 ? "err begin" : "ok");
		} else if (!strcmp(f[0], "commit")) {
			err = svc_yjs_txn_commit(doc, &out, NULL);
			explicit = 0;
			if (err < 0)
				puts("err commit");
			else
				ok_buf(&out);
		} else if (!strcmp(f[0], "json")) {
			struct svc_yjs_buf a = {0}, b = {0};
			svc_yjs_map_json(doc, "files", &a);
			svc_yjs_map_json(doc, "meta", &b);
			printf("ok {\"files\":%.*s,\"meta\":%.*s}\n", (int)a.len, (char *)a.data, (int)b.len,
			       (char *)b.data);
			svc_yjs_buf_dispose(&a);
			svc_yjs_buf_dispose(&b);
		} else if (!strcmp(f[0], "sv")) {
			svc_yjs_state_vector(doc, &out);
			ok_buf(&out);
		} else if (!strcmp(f[0], "encode")) {
			if (nf == 2) {
				struct field s = hexf(f[1]);
				err = svc_yjs_encode_state(doc, s.p, s.n, &out, NULL);
				free(s.p);
			} else {
				err = svc_yjs_encode_state(doc, NULL, 0, &out, NULL);
			}
			if (err < 0)
				puts("err encode");
			else
				ok_buf(&out);
		} else if (!strcmp(f[0], "text") && nf == 2) {
			struct field k = hexf(f[1]);
			err = svc_yjs_text_read(doc, "files", (char *)k.p, k.n, &out);
			free(k.p);
			if (err < 0)
				printf("err %d\n", err);
			else
				ok_buf(&out);
		} else {
			puts("err unknown command");
		}
		svc_yjs_buf_dispose(&out);
		fflush(stdout);
	}
	free(line);
	svc_yjs_doc_free(doc);
	return 0;
}
