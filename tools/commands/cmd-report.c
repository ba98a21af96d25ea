/*
 * cmd-report.c - `dnntrace report`: where the time went and how well the
 * GPU was used, for one trace or all the traces of a job.
 *
 * The numbers come from the analyzer's summary (struct dt_summary); this
 * file reads the options, makes the summary and prints its sections in
 * order: aligned text (colours on a terminal), Markdown, one
 * self-contained HTML page with pictures, or JSON in the versioned
 * schema analyzer/REPORT.md documents. The sections are print/'s
 * (report.h).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "dt-analyzer.h"
#include "report.h"
#include "tools.h"

static void report_help(FILE *f)
{
	fprintf(f,
		"usage: dnntrace report [options] FILE|DIR...\n\n"
		"Where the time went and how well the GPU was used: GPU time "
		"split into cuDNN\noperations (by kind), other kernels (by "
		"library) and copies; the operations\ngrouped by problem with "
		"their engine, GPU time, achieved FLOP rate and\nbandwidth "
		"against the device's peaks; host time per cuDNN function; "
		"and\nfindings, each with its cost; chains of kernels one "
		"cuDNN graph could run\nfused, with their saving. Several "
		"traces (all ranks "
		"of a job, or every\n*.dnnt in a folder) are added up, with a "
		"column per rank.\n\n"
		"  --top N              rows per table (default 15, 0 for "
		"all)\n"
		"  --sort KEY           operations by gpu (default), count, "
		"mean, max, host,\n"
		"                       or roof (furthest below the "
		"roofline first)\n"
		"  --format F           text (default), markdown, html (one "
		"page, with\n"
		"                       pictures) or json (schema "
		"dnntrace.report,\n"
		"                       version %d)\n"
		"  -o, --output FILE    write the report to FILE (\"-\": "
		"standard output)\n"
		"  --force              replace FILE when it exists\n"
		"  --peak-bandwidth B   peak memory bandwidth, bytes/s "
		"(4.8T, 900G)\n"
		"  --peak-flops F       peak FLOP/s for every type (989T), or "
		"per type:\n"
		"                       bf16=989T,fp32=67T (fp64 fp32 tf32 "
		"fp16 bf16 fp8 int8)\n"
		"  --wide               do not shorten operation "
		"descriptions\n"
		"  --no-fusion          leave out the fusion section (a "
		"faster read)\n"
		"  --ranks all          a row per trace in Traces; above 16 "
		"traces it shows\n"
		"                       each column's spread and the ranks "
		"that stand out\n"
		"  --range NAME         only the work inside the program's "
		"NVTX ranges NAME\n"
		"                       (every one; a shell pattern: "
		"'layer*')\n"
		"  --with-warmup        the whole run: GPU time, findings, "
		"fusion, operations\n"
		"                       and functions with the start-up "
		"(loading, compiling,\n"
		"                       autotuning, the first steps) kept in\n"
		"  -h, --help           show this help\n\n"
		"By default they are of the program's steady state: the "
		"steps found from\nwhat repeats in each trace, the start-up "
		"before them left out (the report\nsays what it held); the "
		"traces' totals are the whole run's.\n\n"
		"Peaks default to the device record CUPTI wrote into the trace "
		"and a table of\nper-SM rates by architecture; the report says "
		"which it used. Colours only on\na terminal, never with "
		"NO_COLOR set.\n",
		DT_REPORT_SCHEMA_VERSION);
}

static int parse_peak_flops(const char *arg, struct dt_summary_opts *o)
{
	char *copy = strdup(arg), *save = NULL;

	if (!copy)
		return -1;
	for (char *item = strtok_r(copy, ",", &save); item;
	     item = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(item, '=');
		int m = 0;
		if (eq) {
			*eq = 0;
			for (m = 1; m < DT_MATH_COUNT; m++)
				if (!strcmp(item, dt_math_name(m)))
					break;
			if (m == DT_MATH_COUNT) {
				free(copy);
				return -1;
			}
		}
		double v = dt_parse_rate(eq ? eq + 1 : item);
		if (v < dt_flops_range.min || v > dt_flops_range.max) {
			free(copy);
			return -1;
		}
		for (int k = 1; k < DT_MATH_COUNT; k++)
			if (k == m || !m)
				o->peak_flops[k] = v;
	}
	free(copy);
	return 0;
}

/* ---------------------------------------------------------------- main */

/* What the command line asks for. */
struct report_args {
	struct dt_report c;
	struct dt_summary_opts so;
	const char *output;
	bool force;
};

/* An option (dt_getopt's ch, with optarg) into a: -1, or the exit status
 * when the command ends here (--help, a value it does not take). */
static int report_option(int ch, struct report_args *a)
{
	switch (ch) {
	case 't':
		return dt_parse_top("report", optarg, &a->c.top) ? EXIT_USAGE
								 : -1;
	case 's': {
		int k = 0;
		while (dt_report_sort_names[k] &&
		       strcmp(dt_report_sort_names[k], optarg))
			k++;
		if (!dt_report_sort_names[k])
			return dt_usage_error("report",
					      "--sort takes gpu, count, mean, "
					      "max, host or roof");
		a->c.sort = (enum dt_report_sort)k;
		return -1;
	}
	case 'f':
		return dt_parse_format("report", optarg, DT_FORMATS_ALL,
				       &a->c.format)
			       ? EXIT_USAGE
			       : -1;
	case 'o':
		a->output = optarg;
		return -1;
	case 'O':
		a->force = true;
		return -1;
	case 'b':
		return dt_parse_rate_in("report", "--peak-bandwidth", optarg,
					&dt_bandwidth_range,
					&a->so.peak_bandwidth)
			       ? EXIT_USAGE
			       : -1;
	case 'F':
		if (parse_peak_flops(optarg, &a->so) < 0)
			return dt_usage_error(
				"report",
				"--peak-flops takes FLOP/s from 1G to 1000P, "
				"like 989T, or TYPE=VALUE pairs, like "
				"bf16=989T,fp32=67T");
		return -1;
	case 'w':
		a->c.wide = true;
		return -1;
	case 'N':
		a->so.fusion = false;
		return -1;
	case 'r':
		if (strcmp(optarg, "all"))
			return dt_usage_error("report", "--ranks takes all");
		a->c.all_ranks = true;
		return -1;
	case 'R':
		a->so.range = optarg;
		return -1;
	case 'W':
		a->so.whole = true;
		return -1;
	case 'h':
		return report_help(stdout), 0;
	default:
		return EXIT_USAGE;
	}
}

/* The sections of a text, Markdown or HTML report, in their order. */
static void print_sections(const struct dt_report *c)
{
	const struct dt_summary *s = c->s;

	if (c->format == DT_HTML)
		dt_html_begin(c->out, "dnntrace report");
	dt_report_facts(c);
	if (s->n_files > 1)
		dt_report_traces(c->out, s, c->format, c->color, c->all_ranks);
	dt_report_time(c);
	dt_report_ranges(c);
	dt_report_libraries(c->out, s, c->format, c->color);
	dt_report_phases(c->out, s, c->format, c->color);
	dt_report_dram(c->out, s, c->format, c->color, c->top);
	dt_report_findings(c);
	if (s->fusion)
		dt_fusion_text(c->out, s, c->format, c->color, c->top);
	dt_report_ops(c);
	dt_report_apis(c);
	if (c->format == DT_HTML)
		dt_html_end(c->out);
}

int cmd_report(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "top", required_argument, NULL, 't' },
		{ "sort", required_argument, NULL, 's' },
		{ "format", required_argument, NULL, 'f' },
		{ "output", required_argument, NULL, 'o' },
		{ "force", no_argument, NULL, 'O' },
		{ "peak-bandwidth", required_argument, NULL, 'b' },
		{ "peak-flops", required_argument, NULL, 'F' },
		{ "wide", no_argument, NULL, 'w' },
		{ "no-fusion", no_argument, NULL, 'N' },
		{ "ranks", required_argument, NULL, 'r' },
		{ "range", required_argument, NULL, 'R' },
		{ "with-warmup", no_argument, NULL, 'W' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct report_args a = {
		.c = { .top = 15, .sort = SORT_GPU, .format = DT_TEXT },
		.so = { .fusion = true },
	};
	struct dt_report *c = &a.c;
	struct dt_output out;
	int ch, rc;

	optind = 1;
	while ((ch = dt_getopt("report", argc, argv, "ho:", opts)) != -1)
		if ((rc = report_option(ch, &a)) >= 0)
			return rc;
	if (optind >= argc)
		return dt_usage_error("report",
				      "expected a trace file or a folder");

	rc = 0;
	struct dt_summary *s =
		dt_load_summary(argv + optind, argc - optind, &a.so, &rc);
	if (!s)
		return rc;

	c->s = s;
	if (!(c->out = dt_open_output(&out, a.output, a.force))) {
		dt_summary_free(s);
		return EXIT_USAGE;
	}
	c->color = c->format == DT_TEXT && dt_colors(!out.path);
	if (c->format == DT_JSON)
		dt_report_json(c);
	else
		print_sections(c);
	if (dt_close_output(&out, true))
		rc = EXIT_USAGE;
	dt_summary_free(s);
	return rc;
}
