/* known.c: what svc-wsd last saw on disk for a room: file path -> SHA-256 (wsd_store.h "known disk state"). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wsd.h"
#include "wsd_store.h"

const char *wsd_known_get(const struct wsd_known *k, const char *path)
{
	size_t i;

	for (i = 0; i < k->n; i++)
		if (strcmp(k->e[i].path, path) == 0)
			return k->e[i].hash;
	return NULL;
}

void wsd_known_set(struct wsd_known *k, const char *path, const char *hash)
{
	size_t i;

	for (i = 0; i < k->n; i++)
		if (strcmp(k->e[i].path, path) == 0) {
			snprintf(k->e[i].hash, sizeof k->e[i].hash, "%s", hash);
			return;
		}
	WSD_GROW(k->e, k->cap, k->n + 1);
	k->e[k->n].path = strdup(path);
	if (!k->e[k->n].path)
		abort();
	snprintf(k->e[k->n].hash, sizeof k->e[k->n].hash, "%s", hash);
	k->n++;
}

void wsd_known_del(struct wsd_known *k, const char *path)
{
	size_t i;

	for (i = 0; i < k->n; i++)
		if (strcmp(k->e[i].path, path) == 0) {
			free(k->e[i].path);
			k->e[i] = k->e[--k->n];
			return;
		}
}

void wsd_known_dispose(struct wsd_known *k)
{
	size_t i;

	for (i = 0; i < k->n; i++)
		free(k->e[i].path);
	free(k->e);
	memset(k, 0, sizeof *k);
}
