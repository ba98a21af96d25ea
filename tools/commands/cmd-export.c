/*
 * cmd-export.c - `dnntrace export`: traces written out for other tools: a
 * timeline for Perfetto and chrome://tracing, an SQLite database, or CSV
 * tables. This file parses the options and places the traces on one time
 * line; each format is a file of its own (export-*.c).
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "export.h"
#include "tools.h"

static const struct export_format {
	const char *name;
	int (*run)(const struct dt_export_opts *o);
	const char *what;
} formats[] = {
	{ "perfetto", dt_export_perfetto,
	  "a timeline for ui.perfetto.dev and trace_processor\n"
	  "                          (Perfetto's protobuf trace, names and "
	  "arguments\n"
	  "                          interned): calls, kernels, copies, sets, "
	  "cuDNN\n"
	  "                          ops, arrows from launches; to -o, or "
	  "standard\n"
	  "                          output" },
	{ "chrome", dt_export_trace_events,
	  "the same timeline as Chrome Trace Event JSON, for\n"
	  "                          chrome://tracing, DevTools and PyTorch's "
	  "tools\n"
	  "                          (Kineto, HTA); larger and slower to "
	  "write" },
	{ "sqlite", dt_export_sqlite,
	  "one SQLite database in the file -o names: the\n"
	  "                          processes and how their traces ended, "
	  "threads,\n"
	  "                          GPUs, every cuDNN call with its arguments, "
	  "ops\n"
	  "                          with their tensors and engines, kernels, "
	  "copies\n"
	  "                          and sets, under Nsight Systems' table "
	  "names" },
	{ "csv", dt_export_csv,
	  "the same tables as CSV files (a header line, RFC\n"
	  "                          4180 quoting): TABLE.csv in the folder -o "
	  "names" },
	{ NULL, NULL, NULL },
};

static void export_help(FILE *f)
{
	fprintf(f,
		"usage: dnntrace export --format F [-o OUT [--force]] [--from T] "
		"[--to T]\n"
		"                       [--pid PID] [--range NAME] TRACE|FOLDER...\n\n"
		"Writes traces out for other tools. Several traces (the "
		"processes of a job,\nor every *.dnnt in a folder) go into one "
		"output, lined up on the wall clock.\n\n"
		"  --format F  one of:\n");
	for (const struct export_format *x = formats; x->name; x++)
		fprintf(f, "                %-9s %s\n", x->name, x->what);
	fprintf(f,
		"  -o OUT      where to write: a file (perfetto, chrome, sqlite) or a "
		"folder (csv);\n"
		"              (\"-\" or none: standard output, perfetto and "
		"chrome); an existing\n"
		"              file or csv table is not overwritten\n"
		"  --force     replace an existing output\n"
		"  --from T    leave out what ended before T after the first "
		"trace began\n"
		"              (\"2.5s\", \"300ms\", \"40us\", \"100ns\"; a "
		"bare number is seconds)\n"
		"  --to T      leave out what began after T\n"
		"  --pid PID   only the trace of process PID\n"
		"  --range NAME  only the work inside the program's NVTX "
		"ranges NAME\n"
		"              (every one; a shell pattern: 'layer*'); the "
		"ranges are all shown\n"
		"  -h, --help  show this help\n\n"
		"analyzer/EXPORT.md describes each format's contents.\n");
}

/* "2.5s", "300ms", "40us", "100ns", "3" (seconds) -> ns; -1 malformed. */
static int64_t parse_time(const char *s)
{
	static const struct {
		const char *unit;
		double ns;
	} units[] = { { "", 1e9 },  { "s", 1e9 },  { "ms", 1e6 },
		      { "us", 1e3 }, { "ns", 1 } };
	char *end;
	double v = strtod(s, &end);

	if (end == s || !isfinite(v) || v < 0)
		return -1;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (!strcmp(end, units[i].unit) && v * units[i].ns < 9e18)
			return (int64_t)(v * units[i].ns);
	return -1;
}

void dt_export_note(const struct dt_export_trace *t,
		    struct dt_export_note *note)
{
	const struct dt_file_stats *st = dt_session_file(t->s);
	const struct dt_model_stats *ms = dt_session_stats(t->s);

	note->last = ms->t_last ? ms->t_last
				: dt_session_info(t->s)->hdr.start_mono;
	note->complete = dt_trace_complete(st);
	dt_file_end_text(st, note->ended, sizeof(note->ended));
	dt_lost_text(st, ms, " lost", note->lost, sizeof(note->lost));
	note->gpu_dropped = st->gpu_dropped;
	snprintf(note->why, sizeof(note->why),
		 "ended %s; %s; %" PRIu64 " GPU records dropped by CUPTI",
		 note->ended, note->lost, note->gpu_dropped);
}

void dt_export_warn(const struct dt_export_trace *t,
		    const struct dt_export_note *notes, size_t n,
		    uint64_t no_flow)
{
	for (size_t i = 0; i < n; i++)
		if (!notes[i].complete)
			dt_error("warning: %s is incomplete: ended %s; %s; the "
				 "export has what it holds, marked",
				 t[i].path, notes[i].ended, notes[i].lost);
	if (no_flow)
		dt_error("note: %" PRIu64 " kernels have no arrow from "
			 "what launched them (a call long before them, or a "
			 "graph launch not recorded)", no_flow);
}

uint32_t dt_export_pid(const struct dt_export_trace *t, size_t i,
		       uint32_t *pids)
{
	uint32_t pid = t[i].pid;

	for (size_t k = 0; k < i; k++)
		if (pids[k] == pid) {
			pid = (1u << 22) + (uint32_t)i;
			break;
		}
	pids[i] = pid;
	return pid;
}

void dt_export_process_name(const struct dt_export_trace *t, char *buf,
			    size_t size)
{
	const struct dt_file_info *fi = dt_session_info(t->s);
	const char *cmd = dt_info_get(fi, "cmdline");
	const char *host = dt_info_get(fi, "host");

	snprintf(buf, size, "%s%s%.160s (pid %u%s%s)", t->rank ? t->rank : "",
		 t->rank ? " " : "", cmd ? cmd : "?", t->pid, host ? ", " : "",
		 host ? host : "");
}

void dt_export_loss_text(const struct dt_loss *r, char *buf, size_t size)
{
	snprintf(buf, size, "%" PRIu64 " records lost (thread %u, %s)",
		 r->count, r->tid,
		 r->reason == DT_LOSS_CUPTI ? "CUPTI dropped them"
		 : r->reason == DT_LOSS_IO  ? "the file took no more"
					    : "buffers full");
}

const char *dt_export_copy_name(uint8_t k)
{
	/* made once per kind: the Perfetto encoder interns names by where
	 * they live */
	static char names[256][16];

	if (!names[k][0]) {
		const char *dir = dt_copy_kind_name(k);
		snprintf(names[k], sizeof(names[k]), "Memcpy %s",
			 dir ? dir : "?");
	}
	return names[k];
}

const char *dt_export_call_key(const char *library)
{
	static const char *const keys[][2] = {
		{ "cudnn", "cuDNN call" },
		{ "cublas", "cuBLAS call" },
		{ "cublaslt", "cuBLASLt call" },
	};

	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (!library || !strcmp(library, keys[i][0]))
			return keys[i][1];
	return "call";
}

const char *dt_export_callers(const struct dt_export_trace *t)
{
	const struct dt_file_info *fi = dt_session_info(t->s);

	for (uint32_t i = 0; i < fi->n_libraries; i++)
		if (strcmp(fi->libraries[i].name, "cudnn"))
			return "the libraries'";
	return "cuDNN";
}

/* Traces that could not be opened: the export goes on without them and
 * fails in the end, as report does. */
static size_t unreadable;

struct dt_export_trace *dt_export_open(const struct dt_export_opts *o,
				       size_t *n)
{
	struct dt_export_trace *t = calloc(o->n_paths ? o->n_paths : 1,
					   sizeof(*t));
	uint64_t base = UINT64_MAX;

	*n = 0;
	if (!t) {
		dt_error("out of memory");
		return NULL;
	}
	for (size_t i = 0; i < o->n_paths; i++) {
		struct dt_session_opts so = { .range = o->range };
		struct dt_session *s = dt_open_session(o->paths[i], &so);
		if (!s) {
			unreadable++;
			continue;
		}
		const struct dt_file_info *fi = dt_session_info(s);
		if (o->pid >= 0 && fi->hdr.pid != (uint64_t)o->pid) {
			dt_session_close(s);
			continue;
		}
		t[*n] = (struct dt_export_trace){
			.path = o->paths[i],
			.s = s,
			.pid = fi->hdr.pid,
			.rank = dt_rank_of(fi),
		};
		if (fi->hdr.start_real < base)
			base = fi->hdr.start_real;
		(*n)++;
	}
	if (!*n) {
		if (o->pid >= 0 && o->n_paths)
			dt_error("no trace of process %" PRId64, o->pid);
		free(t);
		return NULL;
	}
	/* CLOCK_MONOTONIC is per host: the wall clock at each trace's
	 * start lines processes (and hosts) up */
	for (size_t i = 0; i < *n; i++) {
		const struct dt_file_header *h = &dt_session_info(t[i].s)->hdr;
		/* modulo 2^64 (dt_export_line): no signed overflow on
		 * any clock a trace may claim */
		int64_t to_base =
			(int64_t)(h->start_real - base - h->start_mono);
		int64_t from = (int64_t)(o->from_ns - (uint64_t)to_base);
		int64_t to = (int64_t)(o->to_ns - (uint64_t)to_base);
		t[i].offset = to_base;
		t[i].from = from > 0 ? (uint64_t)from : 0;
		t[i].to = o->to_ns == UINT64_MAX ? UINT64_MAX
			  : to > 0		 ? (uint64_t)to
						 : 0;
	}
	return t;
}

void dt_export_close(struct dt_export_trace *t, size_t n)
{
	for (size_t i = 0; t && i < n; i++) {
		dt_session_close(t[i].s);
		free(t[i].rank);
	}
	free(t);
}

/* The format named into *fmt: -1, or after a usage error that lists the
 * formats there are, its exit status. */
static int pick_format(const char *name, const struct export_format **fmt)
{
	for (*fmt = formats; (*fmt)->name; (*fmt)++)
		if (!strcmp((*fmt)->name, name))
			return -1;
	char list[128] = "";
	for (const struct export_format *x = formats; x->name; x++)
		snprintf(list + strlen(list), sizeof(list) - strlen(list),
			 "%s%s", x == formats ? "" : ", ", x->name);
	return dt_usage_error("export", "--format takes %s", list);
}

/* An option (dt_getopt's ch, with optarg) into o and *fmt: -1, or the
 * exit status when the command ends here (--help, a value it does not
 * take). */
static int export_option(int ch, struct dt_export_opts *o,
			 const struct export_format **fmt)
{
	int64_t v;
	long pid;

	switch (ch) {
	case 'f':
		return pick_format(optarg, fmt);
	case 'o':
		o->output = optarg;
		return -1;
	case 'O':
		o->force = true;
		return -1;
	case 'F':
	case 'T':
		if ((v = parse_time(optarg)) < 0)
			return dt_usage_error("export",
					      "--%s takes a time such as 2.5s "
					      "or 300ms, not '%s'",
					      ch == 'F' ? "from" : "to", optarg);
		*(ch == 'F' ? &o->from_ns : &o->to_ns) = (uint64_t)v;
		return -1;
	case 'p':
		if (dt_parse_int(optarg, 0, INT_MAX, &pid))
			return dt_usage_error("export",
					      "--pid takes a process id");
		o->pid = pid;
		return -1;
	case 'R':
		o->range = optarg;
		return -1;
	case 'h':
		export_help(stdout);
		return 0;
	default:
		return EXIT_USAGE;
	}
}

int cmd_export(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "output", required_argument, NULL, 'o' },
		{ "force", no_argument, NULL, 'O' },
		{ "from", required_argument, NULL, 'F' },
		{ "to", required_argument, NULL, 'T' },
		{ "pid", required_argument, NULL, 'p' },
		{ "range", required_argument, NULL, 'R' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct dt_export_opts o = { .to_ns = UINT64_MAX, .pid = -1 };
	const struct export_format *fmt = NULL;
	int ch, rc;

	while ((ch = dt_getopt("export", argc, argv, "ho:", opts)) != -1)
		if ((rc = export_option(ch, &o, &fmt)) >= 0)
			return rc;
	if (!fmt)
		return dt_usage_error("export", "say which --format");
	if (optind >= argc)
		return dt_usage_error("export", "name the traces to export");
	if (o.to_ns <= o.from_ns)
		return dt_usage_error("export", "--to must come after --from");
	if (fmt->run == dt_export_perfetto && !o.output && isatty(1))
		return dt_usage_error("export", "the perfetto format is binary: "
				      "give -o FILE, or send it to a file or "
				      "a pipe");
	o.paths = dt_collect_inputs(argv + optind, argc - optind, &o.n_paths);
	if (!o.n_paths) {
		free(o.paths);
		return EXIT_USAGE;
	}
	rc = fmt->run(&o);
	if (unreadable && rc == 0) {
		dt_error("%zu of the traces named could not be read: the export "
			 "lacks them", unreadable);
		rc = EXIT_USAGE;
	}
	for (size_t i = 0; i < o.n_paths; i++)
		free(o.paths[i]);
	free(o.paths);
	return rc;
}
