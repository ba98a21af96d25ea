/*
 * cmd-replay.c - `dnntrace replay`: its options, and each trace handed to
 * replay/ (dt_replay), which rebuilds the trace's problems on this
 * machine's GPU and writes what it measured beside the trace. What the
 * measurements mean to a report is analyzer-findings.c's.
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dt-replay.h"
#include "tools.h"

/* The budget when none is given: enough for a few dozen problems. */
#define BUDGET_S 300.0

static void replay_help(FILE *f)
{
	fprintf(f,
		"usage: dnntrace replay [-o RESULTS] [--top N | --op SEQ] "
		"[--budget SECONDS]\n"
		"                       [--engines heuristic|all] "
		"[--cold-cache] [--any-gpu] [--list]\n"
		"                       [-q] TRACE|FOLDER...\n\n"
		"Rebuilds each problem a trace ran (cuDNN backend graphs and "
		"legacy calls,\ncuBLAS and cuBLASLt GEMMs through cuBLASLt) "
		"on this machine's GPU from what\nthe trace recorded, and "
		"times the engine (or algorithm) the program ran against\nthe "
		"others its library offers; each candidate's outputs are "
		"compared with the\nrecorded engine's. Each chain `dnntrace "
		"fusion`\ncalls fusable is built as one cuDNN graph and timed "
		"against its steps\nunfused. What it measured goes beside the "
		"trace (run.dnnt: run.replay.jsonl),\nwhere `dnntrace report` "
		"and `dnntrace fusion` read it; a replay there already\nis "
		"continued. Needs a GPU of the model the "
		"trace was\nrecorded on, the CUDA driver and cuDNN 9 "
		"(libcudnn.so.9 on the loader's path);\nGEMMs, cuBLASLt "
		"(libcublasLt.so.13).\nExit status 3: this machine cannot "
		"replay (no GPU, no "
		"CUDA or cuDNN, another\nGPU model).\n\n"
		"  -o FILE           write the results to FILE (one trace "
		"only)\n"
		"  --top N           the N problems with the most GPU time "
		"(default all)\n"
		"  --op SEQ          only the problem of the op of call SEQ "
		"(dnntrace ops)\n"
		"  --budget SECONDS  time for the whole replay (default "
		"300)\n"
		"  --engines WHICH   heuristic (default): the recorded engine "
		"and what cuDNN's\n"
		"                    heuristics offer; all: every engine of "
		"the graph (every\n"
		"                    cuBLASLt algorithm) too\n"
		"  --cold-cache      flush the GPU's L2 cache before each "
		"timed run\n"
		"  --any-gpu         replay on a GPU of another model than "
		"the trace's\n"
		"  --list            list the problems and fusion what-ifs "
		"and whether they can\n"
		"                    be built; no GPU\n"
		"  -q, --quiet       no progress on stderr\n"
		"  -h, --help        show this help\n");
}

/* The options into o: -1, or the exit status when the command ends
 * here. */
static int replay_options(int argc, char **argv, struct dt_replay_opts *o)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "top", required_argument, NULL, 't' },
		{ "op", required_argument, NULL, 'p' },
		{ "budget", required_argument, NULL, 'b' },
		{ "engines", required_argument, NULL, 'e' },
		{ "cold-cache", no_argument, NULL, 'c' },
		{ "any-gpu", no_argument, NULL, 'a' },
		{ "list", no_argument, NULL, 'l' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	long top = 0;
	char *end;
	int c;

	optind = 1;
	while ((c = dt_getopt("replay", argc, argv, "ho:q", opts)) != -1) {
		switch (c) {
		case 'o':
			o->results = optarg;
			break;
		case 't':
			if (dt_parse_top("replay", optarg, &top))
				return EXIT_USAGE;
			o->top = (uint32_t)top;
			break;
		case 'p':
			o->op = strtoull(optarg, &end, 10);
			if (*end || !o->op)
				return dt_usage_error("replay",
						      "--op takes the seq of a "
						      "call, not '%s'",
						      optarg);
			break;
		case 'b':
			o->budget_s = strtod(optarg, &end);
			if (*end || !(o->budget_s > 0) || o->budget_s > 1e6)
				return dt_usage_error("replay",
						      "--budget takes seconds "
						      "(up to 1000000), not "
						      "'%s'",
						      optarg);
			break;
		case 'e':
			if (strcmp(optarg, "heuristic") &&
			    strcmp(optarg, "all"))
				return dt_usage_error("replay",
						      "--engines takes "
						      "heuristic or all, not "
						      "'%s'",
						      optarg);
			o->all_engines = !strcmp(optarg, "all");
			break;
		case 'c':
			o->cold_cache = true;
			break;
		case 'a':
			o->any_gpu = true;
			break;
		case 'l':
			o->list = true;
			break;
		case 'q':
			o->quiet = true;
			break;
		case 'h':
			replay_help(stdout);
			return 0;
		default:
			return EXIT_USAGE;
		}
	}
	if (optind == argc)
		return dt_usage_error("replay", "expected a trace or a folder");
	if (o->top && o->op)
		return dt_usage_error("replay", "--top and --op exclude each "
						"other");
	return -1;
}

int cmd_replay(int argc, char **argv)
{
	struct dt_replay_opts o = { .budget_s = BUDGET_S };
	int rc = replay_options(argc, argv, &o);
	size_t n = 0;
	char err[1024];

	if (rc >= 0)
		return rc;
	char **paths = dt_collect_inputs(argv + optind, argc - optind, &n);
	if (!n) {
		free(paths);
		return EXIT_USAGE;
	}
	if (o.results && n > 1) {
		rc = dt_usage_error("replay",
				    "-o names the results of one "
				    "trace, not of %zu",
				    n);
		n = 0;
	} else {
		rc = 0;
	}
	/* the budget is the whole command's: each trace its share of what
	 * the ones before it left */
	double end = dt_replay_now_s() + o.budget_s;
	for (size_t i = 0; i < n; i++) {
		o.budget_s = fmax(0, end - dt_replay_now_s()) / (double)(n - i);
		int r = dt_replay(paths[i], &o, err, sizeof(err));
		if (r) {
			dt_error("%s", err);
			rc = r;
			if (r == DT_REPLAY_NO_GPU)
				break; /* so are the other traces */
		}
	}
	for (size_t i = 0; i < n; i++)
		free(paths[i]);
	free(paths);
	return rc;
}
