/*
 * cmd-kernels.c - `dnntrace kernels`: the GPU kernels of one or more
 * traces, one row per kernel name: how often it ran, its time in all
 * (and as a share of every kernel's), mean, median, shortest and longest
 * run, and its launch shape when every launch had the same. What
 * `nsys stats`' cuda_gpu_kern_sum lists, read from dnntrace's traces.
 *
 * A consumer of the session's activity events, nothing more: copies and
 * sets are not kernels and are left out; kernels CUPTI could not time are
 * counted, not listed. Names are shown as C++ writes them (the model's
 * demangled name), or as recorded with --mangled. Of each trace's steady
 * state, as report's (steady.c), unless --with-warmup.
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dt-analyzer.h"
#include "tools.h"

#define KERNELS_SCHEMA_VERSION 2

/* A kernel's run times, for its median: the first TIMES_EXACT kept as
 * they are, later ones in buckets 1% wide, so that memory does not grow
 * with the runs of a long trace. */
#define TIMES_EXACT 4096
#define TIME_BUCKETS 2546 /* 1 ns to 100 s */

struct kernel_row {
	const char *name; /* as recorded; owned */
	const char *shown;
	uint64_t hash;
	uint64_t count, ns, min, max;
	int32_t grid[3], block[3];
	bool one_grid, one_block; /* every launch had the shape above */
	uint64_t *times;
	uint32_t n_times;
	uint32_t *buckets;
	uint64_t median;
};

struct kernels {
	struct dt_steady *st; /* each run kept until the cut is known */
	struct kernel_row *rows;
	size_t n_rows, cap_rows;
	size_t *index; /* open addressing by name hash: row + 1, 0 empty */
	size_t cap_index;
	uint64_t ns, runs, untimed;
	bool failed; /* out of memory */
};

static uint32_t bucket_of(uint64_t ns)
{
	double b = ns > 1 ? log((double)ns) / log(1.01) : 0;

	return b >= TIME_BUCKETS - 1 ? TIME_BUCKETS - 1 : (uint32_t)b;
}

static void add_time(struct kernel_row *r, uint64_t ns)
{
	if (r->n_times < TIMES_EXACT) {
		if (!r->times)
			r->times = malloc(TIMES_EXACT * sizeof(*r->times));
		if (r->times)
			r->times[r->n_times++] = ns;
		return;
	}
	if (!r->buckets)
		r->buckets = calloc(TIME_BUCKETS, sizeof(*r->buckets));
	if (r->buckets)
		r->buckets[bucket_of(ns)]++;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The median run: exact while every run is kept, else the middle of the
 * bucket that holds it, within the shortest and longest. */
static void settle_median(struct kernel_row *r)
{
	uint32_t n = r->n_times;

	if (!n)
		return;
	qsort(r->times, n, sizeof(*r->times), cmp_u64);
	if (!r->buckets || r->count <= n) {
		/* of an even count, the upper of the middle two, as report's
		 * and diff's medians are */
		r->median = r->times[n / 2];
		return;
	}
	uint64_t want = r->count / 2, seen = 0;
	uint32_t k = 0;
	for (uint32_t b = 0; b < TIME_BUCKETS; b++) {
		seen += r->buckets[b];
		while (k < n && bucket_of(r->times[k]) == b)
			seen++, k++;
		if (seen > want) {
			uint64_t v = (uint64_t)(pow(1.01, b + 0.5) + 0.5);
			r->median = v < r->min ? r->min
				    : v > r->max ? r->max
						 : v;
			return;
		}
	}
}

/* The row of a kernel name, made the first time it is seen. */
static struct kernel_row *row_of(struct kernels *k,
				 const struct dt_kernel_class *kc)
{
	size_t mask = k->cap_index - 1, j;

	if (k->cap_index)
		for (j = kc->hash & mask; k->index[j]; j = (j + 1) & mask) {
			struct kernel_row *r = &k->rows[k->index[j] - 1];
			if (r->hash == kc->hash && !strcmp(r->name, kc->name))
				return r;
		}
	if ((k->n_rows + 1) * 2 > k->cap_index) {
		size_t cap = k->cap_index ? k->cap_index * 2 : 256;
		size_t *index = calloc(cap, sizeof(*index));
		if (!index)
			return NULL;
		for (size_t i = 0; i < k->n_rows; i++) {
			for (j = k->rows[i].hash & (cap - 1); index[j];
			     j = (j + 1) & (cap - 1))
				;
			index[j] = i + 1;
		}
		free(k->index);
		k->index = index;
		k->cap_index = cap;
	}
	if (k->n_rows == k->cap_rows) {
		size_t cap = k->cap_rows ? k->cap_rows * 2 : 64;
		void *rows = realloc(k->rows, cap * sizeof(*k->rows));
		if (!rows)
			return NULL;
		k->rows = rows;
		k->cap_rows = cap;
	}
	char *name = malloc(kc->len + 1 + strlen(kc->demangled) + 1);
	if (!name)
		return NULL;
	memcpy(name, kc->name, kc->len + 1);
	strcpy(name + kc->len + 1, kc->demangled);
	struct kernel_row *r = &k->rows[k->n_rows];
	*r = (struct kernel_row){ .name = name,
				  .shown = name + kc->len + 1,
				  .hash = kc->hash,
				  .one_grid = true,
				  .one_block = true };
	mask = k->cap_index - 1;
	for (j = kc->hash & mask; k->index[j]; j = (j + 1) & mask)
		;
	k->index[j] = ++k->n_rows;
	return r;
}

/* Whether a launch's dim3 is the one kept; the first launch sets it. */
static bool same_dim3(int32_t *kept, bool first, int32_t x, int32_t y,
		      int32_t z)
{
	if (first) {
		kept[0] = x, kept[1] = y, kept[2] = z;
		return true;
	}
	return kept[0] == x && kept[1] == y && kept[2] == z;
}

/* A kernel's run as it is kept until the steady state is known (the
 * session's kernel names live as long as it does). */
struct run {
	const struct dt_kernel_class *kc;
	uint64_t ns;
	int32_t grid[3], block[3];
};

static void on_activity(void *arg, const struct dt_activity *a)
{
	struct kernels *k = arg;

	if (a->kind != DT_ACT_KERNEL || !a->kc)
		return;
	if (!a->timed) {
		k->untimed++;
		return;
	}
	const struct dt_rec_kernel *rec = a->kernel;
	struct run run = {
		a->kc,
		a->gpu_end > a->gpu_start ? a->gpu_end - a->gpu_start : 0,
		{ rec->grid_x, rec->grid_y, rec->grid_z },
		{ rec->block_x, rec->block_y, rec->block_z },
	};
	dt_steady_keep(k->st, a->placed, &run, sizeof(run));
}

/* A run of the steady state into its kernel's row. */
static void add_run(void *arg, const void *p, size_t len)
{
	struct kernels *k = arg;
	struct run run;

	(void)len;
	memcpy(&run, p, sizeof(run));
	struct kernel_row *r = row_of(k, run.kc);
	if (!r) {
		k->failed = true;
		return;
	}
	uint64_t ns = run.ns;
	bool first = !r->count;

	r->one_grid &= same_dim3(r->grid, first, run.grid[0], run.grid[1],
				 run.grid[2]);
	r->one_block &= same_dim3(r->block, first, run.block[0],
				  run.block[1], run.block[2]);
	if (first || ns < r->min)
		r->min = ns;
	if (ns > r->max)
		r->max = ns;
	r->count++;
	r->ns += ns;
	add_time(r, ns);
	k->ns += ns;
	k->runs++;
}

static int by_time(const void *a, const void *b)
{
	const struct kernel_row *x = a, *y = b;

	if (x->ns != y->ns)
		return x->ns < y->ns ? 1 : -1;
	return strcmp(x->name, y->name);
}

/* ------------------------------------------------------------ output */

struct kernels_out {
	FILE *out;
	const struct dt_summary *s; /* what the start-ups held */
	enum dt_format fmt;
	bool mangled;
	size_t top; /* rows printed */
	char **paths;
	size_t n_paths;
	int8_t *state; /* per path: TRACE_* */
};

enum { TRACE_UNREAD, TRACE_COMPLETE, TRACE_INCOMPLETE };

static const char *row_name(const struct kernels_out *o,
			    const struct kernel_row *r)
{
	return o->mangled ? r->name : r->shown;
}

/* "[x, y, z]", or "-" when launches differed */
static const char *dim3_text(const int32_t *d, bool one, char *buf,
			     size_t size)
{
	if (!one)
		return "-";
	snprintf(buf, size, "[%d, %d, %d]", d[0], d[1], d[2]);
	return buf;
}

static void print_text(const struct kernels_out *o, const struct kernels *k)
{
	static const char *const headers[] = {
		"of kernels", "total", "count", "mean",   "median", "min",
		"max",        "grid",  "block", "kernel", NULL,
	};
	struct dt_table *t = dt_table_new(headers, "rrrrrrrrrl");
	char b[6][32], pct[16], up[1024];

	if (!t) {
		dt_error("out of memory");
		return;
	}
	for (size_t i = 0; i < o->top; i++) {
		const struct kernel_row *r = &k->rows[i];
		dt_table_cell(t, "%s",
			      dt_fmt_pct(dt_pct_of((double)r->ns,
						   (double)k->ns),
					 pct, sizeof(pct)));
		dt_table_cell(t, "%s", dt_fmt_ns(r->ns, b[0], sizeof(b[0])));
		dt_table_cell(t, "%" PRIu64, r->count);
		dt_table_cell(t, "%s",
			      dt_fmt_ns(r->ns / r->count, b[1], sizeof(b[1])));
		dt_table_cell(t, "%s", dt_fmt_ns(r->median, b[2], sizeof(b[2])));
		dt_table_cell(t, "%s", dt_fmt_ns(r->min, b[3], sizeof(b[3])));
		dt_table_cell(t, "%s", dt_fmt_ns(r->max, b[4], sizeof(b[4])));
		dt_table_cell(t, "%s", dim3_text(r->grid, r->one_grid, b[5],
						  sizeof(b[5])));
		dt_table_cell(t, "%s", dim3_text(r->block, r->one_block, b[0],
						  sizeof(b[0])));
		dt_table_cell(t, "%s", row_name(o, r));
	}
	dt_table_print(t, o->out, DT_TEXT, false);
	dt_table_free(t);
	fprintf(o->out,
		"# %" PRIu64 " kernel runs of %zu kernels, %s in all%s",
		k->runs, k->n_rows, dt_fmt_ns(k->ns, b[0], sizeof(b[0])),
		o->top < k->n_rows ? "; " : "\n");
	if (o->top < k->n_rows)
		fprintf(o->out, "the %zu longest listed\n", o->top);
	if (k->untimed)
		fprintf(o->out,
			"# %" PRIu64 " kernels CUPTI could not time are "
			"not counted\n",
			k->untimed);
	if (dt_sum_startup_text(o->s, up, sizeof(up)))
		fprintf(o->out, "# start-up: %s\n", up);
	for (size_t i = 0; i < o->n_paths; i++)
		if (o->state[i] == TRACE_INCOMPLETE)
			fprintf(o->out,
				"# %s is incomplete: the kernels it lacks are "
				"not counted\n",
				dt_text(o->paths[i]));
}

/* A CSV field (RFC 4180): quoted, quotes doubled; a text a spreadsheet
 * would run as a formula with a ' before it, as the CSV export does. */
static void csv_quoted(FILE *out, const char *s)
{
	fputc('"', out);
	if (dt_csv_formula(s, strlen(s)))
		fputc('\'', out);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', out);
		fputc(*s, out);
	}
	fputc('"', out);
}

static void print_csv(const struct kernels_out *o, const struct kernels *k)
{
	char g[32], bl[32];

	fputs("time_pct,total_ns,count,mean_ns,median_ns,min_ns,max_ns,grid,"
	      "block,name\n",
	      o->out);
	for (size_t i = 0; i < o->top; i++) {
		const struct kernel_row *r = &k->rows[i];
		fprintf(o->out,
			"%.2f,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
			",%" PRIu64 ",%" PRIu64 ",",
			k->ns ? 100.0 * (double)r->ns / (double)k->ns : 0.0,
			r->ns, r->count, r->ns / r->count, r->median, r->min,
			r->max);
		csv_quoted(o->out, r->one_grid ? dim3_text(r->grid, true, g,
							   sizeof(g))
					       : "");
		fputc(',', o->out);
		csv_quoted(o->out, r->one_block ? dim3_text(r->block, true, bl,
							    sizeof(bl))
						: "");
		fputc(',', o->out);
		csv_quoted(o->out, row_name(o, r));
		fputc('\n', o->out);
	}
}

static void json_dim3(struct dt_json *j, const char *key, const int32_t *d,
		      bool one)
{
	dt_json_key(j, key);
	if (!one) {
		dt_json_null(j);
		return;
	}
	dt_json_open(j, '[', -1);
	for (int i = 0; i < 3; i++)
		dt_json_i64(j, d[i]);
	dt_json_close(j, -1);
}

static void print_json(const struct kernels_out *o, const struct kernels *k)
{
	struct dt_json *j = malloc(sizeof(*j));

	if (!j) {
		dt_error("out of memory");
		return;
	}
	dt_json_init(j, o->out);
	dt_json_open(j, '{', -1);
	dt_json_ks(j, "schema", "dnntrace.kernels");
	dt_json_ku(j, "version", KERNELS_SCHEMA_VERSION);
	dt_json_key(j, "files");
	dt_json_open(j, '[', 2);
	for (size_t i = 0; i < o->n_paths; i++) {
		if (o->state[i] == TRACE_UNREAD)
			continue;
		dt_json_open(j, '{', -1);
		dt_json_ks(j, "path", o->paths[i]);
		dt_json_key(j, "complete");
		dt_json_bool(j, o->state[i] == TRACE_COMPLETE);
		dt_json_close(j, -1);
	}
	dt_json_close(j, -1);
	dt_json_startup(j, o->s);
	dt_json_ku(j, "total_ns", k->ns);
	dt_json_ku(j, "runs", k->runs);
	dt_json_ku(j, "untimed", k->untimed);
	dt_json_ku(j, "distinct", k->n_rows);
	dt_json_key_nl(j, "kernels", 0);
	dt_json_open(j, '[', 2);
	for (size_t i = 0; i < o->top; i++) {
		const struct kernel_row *r = &k->rows[i];
		dt_json_open(j, '{', -1);
		dt_json_ks(j, "name", r->shown);
		dt_json_ks(j, "mangled", r->name);
		dt_json_ku(j, "count", r->count);
		dt_json_ku(j, "total_ns", r->ns);
		dt_json_kg(j, "share", k->ns ? (double)r->ns / (double)k->ns
					     : 0);
		dt_json_ku(j, "mean_ns", r->ns / r->count);
		dt_json_ku(j, "median_ns", r->median);
		dt_json_ku(j, "min_ns", r->min);
		dt_json_ku(j, "max_ns", r->max);
		json_dim3(j, "grid", r->grid, r->one_grid);
		json_dim3(j, "block", r->block, r->one_block);
		dt_json_close(j, -1);
	}
	dt_json_close(j, 0);
	dt_json_close(j, 0);
	fputc('\n', o->out);
	free(j);
}

/* ----------------------------------------------------------- command */

static void kernels_help(FILE *f)
{
	fprintf(f,
		"usage: dnntrace kernels [--top N] [--format text|json|csv] "
		"[--mangled] [-o FILE [--force]]\n"
		"                        [--with-warmup] TRACE|FOLDER...\n\n"
		"Lists the GPU kernels of the traces, one row per kernel "
		"name, longest total\ntime first: how often it ran, its time "
		"in all and as a share of every kernel's,\nmean, median, "
		"shortest and longest run, and its grid and block when every\n"
		"launch had the same. Names as C++ writes them "
		"(demangled). Only each trace's\nsteady state's, as "
		"report's: the start-up before it (loading, compiling,\n"
		"autotuning, the first steps) is said in one line.\n\n"
		"  --top N        list the N kernels with the most time "
		"(default all)\n"
		"  --format FMT   text (default), json or csv (times in ns)\n"
		"  --mangled      kernel names as recorded (mangled)\n"
		"  -o FILE        write to FILE instead of standard output\n"
		"  --force        replace FILE when it exists\n"
		"  --with-warmup  the whole runs, start-up included\n"
		"  -h, --help     show this help\n");
}

/* Read each trace into k, and how each was into state[]: 0, EXIT_USAGE
 * when some could not be read (said on stderr), 1 out of memory. */
static int read_traces(struct kernels *k, char **paths, size_t n,
		       int8_t *state)
{
	int rc = 0;

	for (size_t i = 0; i < n && !k->failed; i++) {
		struct dt_session *ss = dt_open_session(paths[i], NULL);
		if (!ss) {
			rc = EXIT_USAGE;
			continue;
		}
		struct dt_consumer c = { .arg = k, .activity = on_activity };
		if (dt_session_add(ss, &c) < 0)
			k->failed = true;
		else if (dt_steady_read(k->st, ss) < 0 ||
			 dt_steady_each(k->st, add_run, k) < 0)
			rc = EXIT_USAGE;
		state[i] = dt_trace_complete(dt_session_file(ss))
				   ? TRACE_COMPLETE
				   : TRACE_INCOMPLETE;
		dt_session_close(ss);
	}
	if (k->failed) {
		dt_error("out of memory");
		return 1;
	}
	return rc;
}

static void kernels_free(struct kernels *k)
{
	for (size_t i = 0; i < k->n_rows; i++) {
		free((void *)k->rows[i].name);
		free(k->rows[i].times);
		free(k->rows[i].buckets);
	}
	free(k->rows);
	free(k->index);
	dt_steady_free(k->st);
}

/* What the command line asks for, beside o's format and names. */
struct kernels_args {
	const char *output;
	bool force;
	bool whole; /* --with-warmup */
	long top;
};

/* The options into o and a: -1, or the exit status when the command ends
 * here (--help, a value it does not take). */
static int kernels_options(int argc, char **argv, struct kernels_out *o,
			   struct kernels_args *a)
{
	static const struct option opts[] = {
		{ "top", required_argument, NULL, 't' },
		{ "format", required_argument, NULL, 'f' },
		{ "mangled", no_argument, NULL, 'm' },
		{ "output", required_argument, NULL, 'o' },
		{ "force", no_argument, NULL, 'O' },
		{ "with-warmup", no_argument, NULL, 'W' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	optind = 1;
	while ((c = dt_getopt("kernels", argc, argv, "ho:", opts)) != -1) {
		switch (c) {
		case 't':
			if (dt_parse_top("kernels", optarg, &a->top))
				return EXIT_USAGE;
			break;
		case 'f':
			if (dt_parse_format("kernels", optarg,
					    DT_FORMATS_PLAIN | 1u << DT_CSV,
					    &o->fmt))
				return EXIT_USAGE;
			break;
		case 'm':
			o->mangled = true;
			break;
		case 'o':
			a->output = optarg;
			break;
		case 'O':
			a->force = true;
			break;
		case 'W':
			a->whole = true;
			break;
		case 'h':
			kernels_help(stdout);
			return 0;
		default:
			return EXIT_USAGE;
		}
	}
	if (optind == argc)
		return dt_usage_error("kernels", "expected a trace or a folder");
	return -1;
}

/* The rows, longest total time first, --top of them, to the output in
 * o's format: rc, or EXIT_USAGE when the output could not be written. */
static int list_kernels(struct kernels_out *o, struct kernels *k,
			const struct kernels_args *a, int rc)
{
	struct dt_output file;

	for (size_t i = 0; i < k->n_rows; i++)
		settle_median(&k->rows[i]);
	qsort(k->rows, k->n_rows, sizeof(*k->rows), by_time);
	o->top = a->top && (size_t)a->top < k->n_rows ? (size_t)a->top
						       : k->n_rows;
	o->out = dt_open_output(&file, a->output, a->force);
	if (!o->out)
		return EXIT_USAGE;
	if (o->fmt == DT_JSON)
		print_json(o, k);
	else if (o->fmt == DT_CSV)
		print_csv(o, k);
	else
		print_text(o, k);
	if (dt_close_output(&file, true))
		rc = EXIT_USAGE;
	return rc;
}

int cmd_kernels(int argc, char **argv)
{
	struct kernels_out o = { .fmt = DT_TEXT };
	struct kernels_args a = { 0 };
	int rc = kernels_options(argc, argv, &o, &a);

	if (rc >= 0)
		return rc;
	o.paths = dt_collect_inputs(argv + optind, argc - optind, &o.n_paths);
	if (!o.n_paths) {
		free(o.paths);
		return EXIT_USAGE;
	}
	struct kernels k = { .st = dt_steady_new(a.whole) };
	o.state = calloc(o.n_paths, sizeof(*o.state));
	rc = o.state && k.st ? read_traces(&k, o.paths, o.n_paths, o.state)
			     : 1;
	o.s = k.st ? dt_steady_summary(k.st) : NULL;
	size_t read = 0;
	for (size_t i = 0; o.state && i < o.n_paths; i++)
		read += o.state[i] != TRACE_UNREAD;
	if (!read && rc != 1)
		rc = EXIT_USAGE; /* nothing to list: said already */
	else if (rc != 1)
		rc = list_kernels(&o, &k, &a, rc);
	kernels_free(&k);
	for (size_t i = 0; i < o.n_paths; i++)
		free(o.paths[i]);
	free(o.paths);
	free(o.state);
	return rc;
}
