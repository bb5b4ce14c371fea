/* replay.c: runs a libFuzzer target over files without libFuzzer (corpus regression under ASan/UBSan with gcc). */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	unsigned char *buf;
	long n;
	if (!f)
		return -1;
	if (fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0 ||
	    n > 16 * 1024 * 1024) {
		fclose(f);
		return -1;
	}
	buf = malloc((size_t)n + 1);
	if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		fclose(f);
		return -1;
	}
	fclose(f);
	LLVMFuzzerTestOneInput(buf, (size_t)n);
	free(buf);
	return 0;
}

/* replay PATH...: each PATH is a file or a directory of files. Prints the count. */
int main(int argc, char **argv)
{
	int i, count = 0;
	for (i = 1; i < argc; i++) {
		struct stat st;
		if (stat(argv[i], &st) != 0) {
			fprintf(stderr, "replay: %s: cannot stat\n", argv[i]);
			return 1;
		}
		if (S_ISDIR(st.st_mode)) {
			DIR *d = opendir(argv[i]);
			struct dirent *e;
			char path[4096];
			if (!d)
				return 1;
			while ((e = readdir(d))) {
				int w;
				if (e->d_name[0] == '.')
					continue;
				w = snprintf(path, sizeof(path), "%s/%s", argv[i], e->d_name);
				if (w < 0 || (size_t)w >= sizeof(path))
					continue;
				if (run_file(path) == 0)
					count++;
			}
			closedir(d);
		} else if (run_file(argv[i]) == 0) {
			count++;
		}
	}
	fprintf(stderr, "replay: %d inputs\n", count);
	return 0;
}
