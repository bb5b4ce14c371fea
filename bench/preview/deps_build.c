/* deps_build.c: one svc_build_run() of a copy of a project tree, as a publish or preview build runs it, with its log and wall time (bench/README.md "Dependencies"). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/config.h"
#include "core/fsx.h"
#include "core/util.h"
#include "project/build.h"

static void print_log(void *arg, const char *text, size_t len)
{
	(void)arg;
	if (text)
		fwrite(text, 1, len, stdout);
	fflush(stdout);
}

/* deps_build DATA_DIR TREE: builds a copy of TREE under DATA_DIR/builds with the settings of the environment. */
int main(int argc, char **argv)
{
	struct svc_config cfg;
	struct svc_build_opts o;
	char err[256], why[512], dir[4096];
	int64_t t0;
	int r;

	if (argc != 3) {
		fprintf(stderr, "usage: deps_build DATA_DIR TREE\n");
		return 2;
	}
	if (svc_config_load(&cfg, err, sizeof err) < 0) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	svc_build_opts_load(&cfg, 0, &o);
	o.data_dir = argv[1];
	o.workspace_id = "bench";
	snprintf(dir, sizeof dir, "%s/builds/bench-%d", argv[1], (int)getpid());
	if (svc_fsx_copy_tree(argv[2], dir) < 0) {
		fprintf(stderr, "cannot copy %s\n", argv[2]);
		return 1;
	}
	t0 = svc_mono_ms();
	r = svc_build_run(&o, dir, print_log, NULL, why, sizeof why);
	printf("== %s in %lld ms%s%s\n", r == 0 ? "built" : "failed", (long long)(svc_mono_ms() - t0), r ? ": " : "", why);
	svc_fsx_remove_tree(dir);
	svc_config_dispose(&cfg);
	return r < 0;
}
