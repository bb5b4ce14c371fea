/* bench_core.c: lib/yjs benchmark: replay an editing trace as local edits, encode, decode, and apply it as remote updates. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "yjs/yjs.h"

/* edits file (from prepare.mjs): one line per edit "POS DEL HEXTEXT" (HEXTEXT may be empty) */
struct edit {
	unsigned long pos, del;
	char *ins;
	size_t n;
};

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static long peak_kb(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss;
}

int main(int argc, char **argv)
{
	FILE *f;
	struct edit *e = NULL;
	size_t ne = 0, cap = 0, i;
	char line[4096];
	struct svc_yjs_doc *doc, *doc2, *doc3;
	struct svc_yjs_buf enc = {0}, text = {0};
	struct svc_yjs_buf *ups;
	double t0, t_replay, t_enc, t_dec, t_remote, t_capture;
	long rss_replay;
	if (argc != 3 || !(f = fopen(argv[1], "r")))
		return 2;
	while (fgets(line, sizeof(line), f)) {
		char *p = line, *h;
		size_t k;
		if (ne == cap) {
			cap = cap ? cap * 2 : 1024;
			e = realloc(e, cap * sizeof(*e));
		}
		e[ne].pos = strtoul(p, &p, 10);
		e[ne].del = strtoul(p, &p, 10);
		while (*p == ' ')
			p++;
		h = p;
		e[ne].n = 0;
		e[ne].ins = malloc(strlen(h) / 2 + 1);
		for (k = 0; h[k] && h[k + 1] && h[k] != '\n'; k += 2) {
			char t[3] = { h[k], h[k + 1], 0 };
			e[ne].ins[e[ne].n++] = (char)strtoul(t, NULL, 16);
		}
		ne++;
	}
	fclose(f);
	/* replay as local edits */
	svc_yjs_doc_new(&doc, 1);
	t0 = now();
	svc_yjs_map_set_text(doc, "files", "paper.tex", 9, "", 0, NULL, NULL);
	for (i = 0; i < ne; i++) {
		if (e[i].del)
			svc_yjs_text_delete(doc, "files", "paper.tex", 9, e[i].pos, e[i].del, NULL, NULL);
		if (e[i].n)
			svc_yjs_text_insert(doc, "files", "paper.tex", 9, e[i].pos, e[i].ins, e[i].n, NULL, NULL);
	}
	t_replay = now() - t0;
	rss_replay = peak_kb();
	t0 = now();
	svc_yjs_encode_state(doc, NULL, 0, &enc, NULL);
	t_enc = now() - t0;
	svc_yjs_doc_new(&doc2, 2);
	t0 = now();
	svc_yjs_apply_update(doc2, enc.data, enc.len, NULL, NULL, NULL);
	svc_yjs_text_read(doc2, "files", "paper.tex", 9, &text);
	t_dec = now() - t0;
	/* capture each edit as its own update, then apply them all to a fresh doc (the daemon's job) */
	svc_yjs_doc_free(doc);
	svc_yjs_doc_new(&doc, 1);
	ups = calloc(ne + 1, sizeof(*ups));
	t0 = now();
	svc_yjs_map_set_text(doc, "files", "paper.tex", 9, "", 0, &ups[ne], NULL);
	for (i = 0; i < ne; i++) {
		if (e[i].del)
			svc_yjs_text_delete(doc, "files", "paper.tex", 9, e[i].pos, e[i].del, &ups[i], NULL);
		if (e[i].n)
			svc_yjs_text_insert(doc, "files", "paper.tex", 9, e[i].pos, e[i].ins, e[i].n, &ups[i], NULL);
	}
	t_capture = now() - t0;
	svc_yjs_doc_new(&doc3, 3);
	t0 = now();
	svc_yjs_apply_update(doc3, ups[ne].data, ups[ne].len, NULL, NULL, NULL);
	for (i = 0; i < ne; i++)
		svc_yjs_apply_update(doc3, ups[i].data, ups[i].len, NULL, NULL, NULL);
	t_remote = now() - t0;
	if (argv[2][0] == '1') {
		fwrite(enc.data, 1, enc.len, stderr);
	}
	printf("{\"impl\":\"core\",\"edits\":%zu,\"replay_ms\":%.1f,\"encode_ms\":%.2f,\"decode_ms\":%.2f,"
	       "\"bytes\":%zu,\"text_bytes\":%zu,\"rss_after_replay_kb\":%ld,\"capture_ms\":%.1f,"
	       "\"remote_apply_ms\":%.1f,\"peak_rss_kb\":%ld}\n",
	       ne, t_replay * 1e3, t_enc * 1e3, t_dec * 1e3, enc.len, text.len, rss_replay,
	       t_capture * 1e3, t_remote * 1e3, peak_kb());
	return 0;
}
