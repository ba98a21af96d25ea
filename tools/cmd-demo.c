/*
 * cmd-demo.c - `dnntrace demo`: records the bundled cuDNN sample program
 * (dnntrace-sample) and shows the trace with `info` and `report`, and says
 * how to see every record. On a machine without a GPU the sample's
 * descriptor calls still run and the calls that need a GPU are skipped;
 * the trace says so. The trace goes to the build folder when the demo runs
 * from one, else to the temporary folder: never into the source tree.
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dt-config.h"
#include "tools.h"

/* Where the demo's trace goes: demo/ in the build folder when this is a
 * build tree's dnntrace (tools/ beside meson-private/), else $TMPDIR or
 * /tmp. */
static const char *demo_dir(char *buf, size_t size)
{
	const char *tmp = getenv("TMPDIR");
	char probe[PATH_MAX];

	snprintf(probe, sizeof(probe), "%s/../meson-private", dt_self_dir());
	if (access(probe, F_OK) == 0 && realpath(probe, buf) &&
	    strlen(buf) < size - 2) {
		strcpy(strrchr(buf, '/'), "/demo");
		return buf;
	}
	snprintf(buf, size, "%s", tmp && *tmp ? tmp : "/tmp");
	return buf;
}

/* The default folder is told as a rule, not as where this copy would
 * write: the same text makes the manual page. */
static void demo_help(FILE *f)
{
	fprintf(f,
		"usage: dnntrace demo [-o TEMPLATE] [-n ITERATIONS] "
		"[--dump]\n\n"
		"Records the bundled cuDNN sample program (legacy "
		"convolution, activation,\npooling, softmax, and a backend "
		"convolution graph), then prints 'dnntrace info'\n"
		"and 'dnntrace report' of its trace.\n\n"
		"  -o, --output TEMPLATE  trace file name (default "
		"dnntrace-demo-%%p.dnnt in demo/ of\n"
		"                         the build folder, or in $TMPDIR "
		"once installed)\n"
		"  -n N                   iterations of the sample's compute "
		"calls (default 3)\n"
		"      --dump             print every record too "
		"('dnntrace dump')\n"
		"  -h, --help             show this help\n");
}

/* The sample: beside dnntrace in the build tree, else where it is
 * installed. */
static const char *find_sample(char *buf)
{
	static const char *const dirs[] = { ".", DT_BIN_TO_LIBEXECDIR };

	return dt_find_beside(dirs, sizeof(dirs) / sizeof(*dirs),
			      "dnntrace-sample", X_OK, buf);
}

int cmd_demo(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "dump", no_argument, NULL, 'd' },
		{ "no-dump", no_argument, NULL, 'D' }, /* the old default */
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *tmpl = NULL, *iters = "3";
	bool dump = false;
	char sample[PATH_MAX], deftmpl[PATH_MAX];
	struct dt_record_result res;
	long n;
	int c, rc;

	optind = 1;
	while ((c = dt_getopt("demo", argc, argv, "o:n:h", opts)) != -1) {
		switch (c) {
		case 'o':
			tmpl = optarg;
			break;
		case 'n':
			if (dt_parse_int(optarg, 1, 1000000, &n))
				return dt_usage_error(
					"demo", "-n takes a number of "
						"iterations from 1 to 1000000");
			iters = optarg;
			break;
		case 'd':
		case 'D':
			dump = c == 'd';
			break;
		case 'h':
			demo_help(stdout);
			return 0;
		default:
			return EXIT_USAGE;
		}
	}
	if (optind != argc)
		return dt_usage_error("demo", "unexpected argument '%s'",
				      argv[optind]);
	if (!find_sample(sample)) {
		dt_error("the sample program dnntrace-sample was not built "
			 "(it needs libcudnn and the CUDA runtime)");
		return 1;
	}
	if (!tmpl) {
		char dir[PATH_MAX];
		snprintf(deftmpl, sizeof(deftmpl), "%s/dnntrace-demo-%%p.dnnt",
			 demo_dir(dir, sizeof(dir)));
		tmpl = deftmpl;
	}
	char *cmd[] = { sample, "-n", (char *)iters, NULL };
	printf("$ dnntrace record -o %s -- %s -n %s\n", tmpl, sample, iters);
	fflush(stdout);
	rc = dt_record_run(cmd, tmpl, &res);
	if (rc < 0)
		return EXIT_USAGE;
	dt_record_say(&res, true);
	if (rc != 0)
		dt_error("the sample program failed (exit status %d)", rc);
	if (res.n_paths == 0) {
		dt_error("the sample wrote no trace");
		rc = rc ? rc : 1;
	}
	for (size_t i = 0; i < res.n_paths; i++) {
		const char *path = res.paths[i];
		printf("\n$ dnntrace info %s\n", path);
		fflush(stdout);
		dt_info_file(path, 10);
		printf("\n$ dnntrace report %s\n", path);
		fflush(stdout);
		char *rargv[] = { "report", (char *)path, NULL };
		cmd_report(2, rargv);
		fflush(stdout);
		if (dump) {
			printf("\n$ dnntrace dump %s\n", path);
			fflush(stdout);
			dt_dump_file(path, false, false);
		}
		printf("\nThe trace is %s. Every call and kernel in it:\n"
		       "  dnntrace dump %s\n"
		       "each operation with its tensors and engine:\n"
		       "  dnntrace ops %s\n",
		       path, path, path);
	}
	dt_record_free(&res);
	return rc ? 1 : 0;
}
