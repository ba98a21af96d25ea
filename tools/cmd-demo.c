/*
 * cmd-demo.c - `dnntrace demo`: records the bundled cuDNN sample program
 * (dnntrace-sample) and shows the trace with `info` and `dump`. On a
 * machine without a GPU the sample's descriptor calls still run and the
 * calls that need a GPU are skipped; the trace says so.
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dt-config.h"
#include "dt-tools.h"

static void demo_help(FILE *f)
{
	fprintf(f,
		"usage: dnntrace demo [-o TEMPLATE] [-n ITERATIONS] "
		"[--no-dump]\n\n"
		"Records the bundled cuDNN sample program (legacy "
		"convolution, activation,\npooling, softmax, and a backend "
		"convolution graph), then prints 'dnntrace info',\n"
		"'dnntrace report' and 'dnntrace dump' of its trace.\n\n"
		"  -o, --output TEMPLATE  trace file name (default "
		"dnntrace-demo-%%p.dnnt)\n"
		"  -n N                   iterations of the sample's compute "
		"calls (default 3)\n"
		"      --no-dump          print only 'info' and 'report'\n"
		"  -h, --help             show this help\n");
}

static const char *find_sample(char *buf, size_t size)
{
	snprintf(buf, size, "%s/dnntrace-sample", dt_self_dir());
	if (access(buf, X_OK) == 0)
		return buf;
	snprintf(buf, size, "%s/dnntrace-sample", DT_LIBEXECDIR);
	return access(buf, X_OK) == 0 ? buf : NULL;
}

int cmd_demo(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "no-dump", no_argument, NULL, 'D' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *tmpl = "dnntrace-demo-%p.dnnt", *iters = "3";
	bool dump = true;
	char sample[PATH_MAX];
	struct dt_record_result res;
	int c, rc;

	optind = 1;
	while ((c = getopt_long(argc, argv, "o:n:h", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			tmpl = optarg;
			break;
		case 'n':
			iters = optarg;
			break;
		case 'D':
			dump = false;
			break;
		case 'h':
			demo_help(stdout);
			return 0;
		default:
			return dt_usage_error("demo", "unknown option");
		}
	}
	if (optind != argc)
		return dt_usage_error("demo", "unexpected argument '%s'",
				      argv[optind]);
	if (!find_sample(sample, sizeof(sample))) {
		dt_error("the sample program dnntrace-sample was not built "
			 "(it needs libcudnn and the CUDA runtime)");
		return 1;
	}
	char *cmd[] = { sample, "-n", (char *)iters, NULL };
	printf("$ dnntrace record -o %s -- %s -n %s\n", tmpl, sample, iters);
	fflush(stdout);
	rc = dt_record_run(cmd, tmpl, &res);
	if (rc < 0)
		return EXIT_USAGE;
	dt_record_say(&res, true);
	char **paths = res.paths;
	size_t n = res.n_paths;
	if (rc != 0)
		dt_error("the sample program failed (exit status %d)", rc);
	if (n == 0) {
		dt_error("the sample wrote no trace");
		rc = rc ? rc : 1;
	}
	for (size_t i = 0; i < n; i++) {
		printf("\n$ dnntrace info %s\n", paths[i]);
		fflush(stdout);
		dt_info_file(paths[i], 10);
		printf("\n$ dnntrace report %s\n", paths[i]);
		fflush(stdout);
		char *rargv[] = { "report", paths[i], NULL };
		cmd_report(2, rargv);
		fflush(stdout);
		if (dump) {
			printf("\n$ dnntrace dump %s\n", paths[i]);
			fflush(stdout);
			dt_dump_file(paths[i], false);
		}
	}
	dt_record_free(&res);
	return rc ? 1 : 0;
}
