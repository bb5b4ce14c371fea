/* fuzz_gitio.c: libFuzzer target of Git in and out's parsers of bytes from users: svc_gitio_url_parse (a remote's URL) and svc_gitio_zip_extract (a ZIP to import). */
/*
 * Input: one byte of mode, then the rest. Mode even: the rest (NUL bytes cut it, as a JSON string
 * cannot hold them) is a Git URL; one that parses is https, has a lower-case host of [a-z0-9.:-] and a
 * port 1 to 65535, and parses again to the same. Mode odd: the rest is a ZIP, unpacked into a fresh
 * directory; whatever it holds, nothing is written outside that directory and no symlink is made
 * (the directory's parent keeps only it; every entry under it is a file or a directory).
 */
#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/config.h"
#include "core/err.h"
#include "core/fsx.h"
#include "project/gitio.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int bad_entries;

static int walk(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)path;
	(void)ftw;
	if (flag != FTW_F && flag != FTW_D && flag != FTW_DP)
		bad_entries++;
	else if (!S_ISREG(st->st_mode) && !S_ISDIR(st->st_mode))
		bad_entries++;
	return 0;
}

static void fuzz_url(const uint8_t *data, size_t size)
{
	struct svc_gitio_remote rm, again;
	char in[SVC_GITIO_URL_MAX + 64], why[256];
	size_t n = size < sizeof in - 1 ? size : sizeof in - 1, i;

	memcpy(in, data, n);
	in[n] = '\0';
	if (svc_gitio_url_parse(in, &rm, why, sizeof why) != 0)
		return;
	if (strncasecmp(rm.url, "https://", 8) != 0 || !rm.host[0] || rm.port == 0 || rm.port > 65535)
		abort();
	for (i = 0; rm.host[i]; i++)
		if (!strchr("abcdefghijklmnopqrstuvwxyz0123456789.:-", rm.host[i]))
			abort();
	if (svc_gitio_url_parse(rm.url, &again, why, sizeof why) != 0 || strcmp(again.host, rm.host) != 0 ||
	    again.port != rm.port)
		abort();
}

static void fuzz_zip(const uint8_t *data, size_t size)
{
	static char base[64];
	char dir[96], why[256];
	struct svc_config cfg;
	int entries = 0;

	if (!base[0]) {
		snprintf(base, sizeof base, "/tmp/svc-fuzz-gitio-XXXXXX");
		if (!mkdtemp(base))
			abort();
	}
	snprintf(dir, sizeof dir, "%s/d", base);
	if (mkdir(dir, 0700) < 0)
		abort();
	memset(&cfg, 0, sizeof cfg);
	cfg.import_max_mb = 1;
	cfg.import_zip_entries = 64;
	svc_gitio_zip_extract(&cfg, data, size, dir, why, sizeof why);
	bad_entries = 0;
	nftw(dir, walk, 16, FTW_PHYS);
	if (bad_entries)
		abort(); /* a symlink or a special file was made */
	{
		/* the parent holds only the directory: nothing escaped it */
		struct svc_fsx_entry *list = NULL;
		size_t n = 0;
		(void)entries;
		if (svc_fsx_remove_tree(dir) < 0)
			abort();
		if (svc_fsx_list(base, 10, &list, &n) == 0 && n != 0)
			abort();
		svc_fsx_list_free(list, n);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	if (data[0] % 2 == 0)
		fuzz_url(data + 1, size - 1);
	else
		fuzz_zip(data + 1, size - 1);
	return 0;
}
