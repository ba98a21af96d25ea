/*
 * cmd-demo.c - `dnntrace demo`: records the bundled cuDNN sample program
 * (dnntrace-sample) and shows the trace with `info` and `report`, and says
 * how to see every record. On a machine without a GPU the sample's
 * descriptor calls still run and the calls that need a GPU are skipped;
 * the trace says so, and the demo then also reports the sample's trace as
 * recorded on a GPU, bundled with dnntrace, so that a first run shows what
 * a report holds wherever it runs. The trace goes to the build folder when
 * the demo runs from one, else to the temporary folder: never into the
 * source tree.
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dt-analyzer.h"
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
		"and 'dnntrace report' of its trace. Where that trace holds "
		"no GPU work (no GPU),\nit says why and also reports the "
		"sample as a GPU recorded it, from a trace\ninstalled with "
		"dnntrace.\n\n"
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

/* The sample's trace recorded on a GPU (tests/data/): beside dnntrace in
 * the build tree, else where it is installed. */
#define GPU_TRACE "h200-sample.dnnt"
static const char *find_gpu_trace(char *buf)
{
	static const char *const dirs[] = { ".", DT_BIN_TO_DATADIR };

	return dt_find_beside(dirs, sizeof(dirs) / sizeof(*dirs), GPU_TRACE,
			      R_OK, buf);
}

/* What a trace says of its GPU: the first device recorded, how much GPU
 * work (kernels, copies, sets) it holds, and its GPU recording state. */
struct demo_gpu {
	char name[96];
	uint64_t work;
	char state[512];
};

static void on_device(void *arg, const struct dt_device *d)
{
	struct demo_gpu *g = arg;

	if (!g->name[0])
		snprintf(g->name, sizeof(g->name), "%s", d->name);
}

static int read_gpu(const char *path, struct demo_gpu *g)
{
	struct dt_session *ss = dt_open_session(path, NULL);
	struct dt_consumer c = { .arg = g, .device = on_device };

	if (!ss)
		return -1;
	dt_session_add(ss, &c);
	dt_session_run(ss);
	const struct dt_model_stats *ms = dt_session_stats(ss);
	g->work = ms->kernels + ms->copies;
	snprintf(g->state, sizeof(g->state), "%s", ms->gpu_state);
	dt_session_close(ss);
	return 0;
}

static void print_report(const char *path)
{
	char *argv[] = { "report", (char *)path, NULL };

	printf("\n$ dnntrace report %s\n", path);
	fflush(stdout);
	cmd_report(2, argv);
	fflush(stdout);
}

/* A recording without GPU work has a report without GPU time: say why,
 * from the trace, and report the sample as a GPU recorded it. */
static void show_gpu_recording(const struct demo_gpu *own)
{
	struct demo_gpu gpu = { 0 };
	char path[PATH_MAX];

	printf("\nThe report above has no GPU time: GPU trace %s.\n",
	       dt_text(own->state[0] ? own->state : "unknown"));
	if (!find_gpu_trace(path) || read_gpu(path, &gpu) != 0) {
		printf("The sample's trace recorded on a GPU (" GPU_TRACE
		       ") is not installed with this dnntrace.\n");
		return;
	}
	printf("Here is the same sample program recorded on a machine with "
	       "a GPU (%s),\nfrom the trace bundled with dnntrace:\n",
	       dt_text(gpu.name[0] ? gpu.name : "unnamed GPU"));
	print_report(path);
	printf("\nEach operation of it with its tensors and engine:\n"
	       "  dnntrace ops %s\n",
	       path);
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
	struct demo_gpu own = { 0 };
	uint64_t gpu_work = 0; /* in all the traces the sample wrote */
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
		print_report(path);
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
		if (read_gpu(path, &own) == 0)
			gpu_work += own.work;
	}
	if (res.n_paths && !gpu_work)
		show_gpu_recording(&own);
	dt_record_free(&res);
	return rc ? 1 : 0;
}
