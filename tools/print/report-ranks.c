/*
 * report-ranks.c - the report's Traces section, for the traces of a job:
 * one row per trace, ranks in their numeric order; above a screenful of
 * them, the columns' least, median and greatest values and the ranks that
 * stand out, every row only on request. Text, Markdown and HTML tables;
 * the JSON's "files" are report-json.c's.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "tools.h"

#define RANK_ROWS   16 /* a screenful: every trace up to this many */
#define OUTLIER_TOP 3  /* the slowest and the fastest listed */
#define UNCLEAN_TOP 8  /* traces that did not end clean, listed */

/* The rank a trace's environment gave it ("RANK=3" -> 3), or -1. */
static long rank_number(const struct dt_sum_file *f)
{
	const char *eq = f->rank ? strchr(f->rank, '=') : NULL;
	char *end;
	long r;

	if (!eq || !eq[1])
		return -1;
	r = strtol(eq + 1, &end, 10);
	return *end || r < 0 ? -1 : r;
}

static int by_rank(const void *a, const void *b, void *arg)
{
	const struct dt_sum_file *files = arg;
	const struct dt_sum_file *x = &files[*(const size_t *)a],
				 *y = &files[*(const size_t *)b];
	long rx = rank_number(x), ry = rank_number(y);

	/* traces without a rank (a launcher) first, then rank 0, 1, 2, ... */
	if (rx != ry)
		return rx < ry ? -1 : 1;
	return strverscmp(x->path, y->path);
}

size_t *dt_rank_order(const struct dt_summary *s)
{
	size_t *ix = malloc((s->n_files + 1) * sizeof(*ix));

	if (!ix)
		return NULL;
	for (size_t i = 0; i < s->n_files; i++)
		ix[i] = i;
	qsort_r(ix, s->n_files, sizeof(*ix), by_rank, s->files);
	return ix;
}

static bool has_comm(const struct dt_summary *s)
{
	for (size_t i = 0; i < s->n_files; i++)
		if (s->files[i].comm_ns)
			return true;
	return false;
}

/* The Traces table's columns, kept by the caller while the table lives;
 * "why" the row is listed, for the ranks that stand out. */
struct cols {
	const char *hdr[14];
	char align[14];
};

static struct dt_table *files_table(struct cols *c, bool comm, bool why)
{
	const char **hdr = c->hdr;
	char *align = c->align;
	size_t h = 0;

#define COL_(name, a) (hdr[h] = (name), align[h++] = (a))
	COL_("rank", 'l');
	COL_("host", 'l');
	COL_("pid", 'r');
	COL_("calls", 'r');
	COL_("ops", 'r');
	COL_("GPU time", 'r');
	COL_("in cuDNN", 'r');
	if (comm) /* the time a rank waited for the others, in a job */
		COL_("communication", 'r');
	COL_("ended", 'l');
	COL_("lost", 'r');
	if (why)
		COL_("listed as", 'l');
	COL_("file", 'l');
#undef COL_
	hdr[h] = NULL;
	align[h] = 0;
	return dt_table_new(hdr, align);
}

static void file_row(struct dt_table *t, const struct dt_sum_file *f, bool comm,
		     const char *why)
{
	char b1[32], b2[32], b3[32];

	dt_table_cell(t, "%s", dt_rank_label(f, b3, sizeof(b3)));
	dt_table_cell(t, "%s", f->host ? f->host : "?");
	dt_table_cell(t, "%u", f->pid);
	dt_table_cell(t, "%" PRIu64, f->calls);
	dt_table_cell(t, "%" PRIu64, f->ops);
	dt_table_cell(t, "%s", dt_fmt_ns(f->gpu_ns, b1, sizeof(b1)));
	dt_table_cell(t, "%s", dt_fmt_ns(f->cudnn_gpu_ns, b2, sizeof(b2)));
	if (comm)
		dt_table_cell(t, "%s", dt_fmt_ns(f->comm_ns, b2, sizeof(b2)));
	dt_table_cell(t, "%s",
		      f->end == DT_FILE_CLEAN    ? "clean"
		      : f->end == DT_FILE_NO_END ? "no end"
						 : dt_file_end_name(f->end));
	dt_table_cell(t, "%" PRIu64, f->lost);
	if (why)
		dt_table_cell(t, "%s", why);
	dt_table_cell(t, "%s", f->path);
}

/* ------------------------------------------------------- summarized */

/* A rank's own work: its GPU time outside communication, which is the
 * others' waiting for it. */
static uint64_t work_ns(const struct dt_sum_file *f)
{
	return f->gpu_ns - (f->comm_ns < f->gpu_ns ? f->comm_ns : f->gpu_ns);
}

static int by_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

enum stat_col { ST_CALLS, ST_OPS, ST_GPU, ST_CUDNN, ST_COMM, ST_LOST, ST_N };

static uint64_t stat_of(const struct dt_sum_file *f, enum stat_col c)
{
	switch (c) {
	case ST_CALLS:
		return f->calls;
	case ST_OPS:
		return f->ops;
	case ST_GPU:
		return f->gpu_ns;
	case ST_CUDNN:
		return f->cudnn_gpu_ns;
	case ST_COMM:
		return f->comm_ns;
	case ST_LOST:
	default:
		return f->lost;
	}
}

/* Each column's least, median and greatest value over the traces. */
static void print_spread(FILE *out, const struct dt_summary *s,
			 enum dt_format fmt, bool color, bool comm)
{
	static const char *const all[] = { "",         "calls",
					   "ops",      "GPU time",
					   "in cuDNN", "communication",
					   "lost",     NULL };
	static const char *const no_comm[] = { "",         "calls",    "ops",
					       "GPU time", "in cuDNN", "lost",
					       NULL };
	struct dt_table *t =
		dt_table_new(comm ? all : no_comm, comm ? "lrrrrrr" : "lrrrrr");
	uint64_t *v = malloc(s->n_files * sizeof(*v));
	uint64_t q[ST_N][3];
	char b[32];

	if (!t || !v) {
		dt_table_free(t);
		free(v);
		return;
	}
	for (int c = 0; c < ST_N; c++) {
		for (size_t i = 0; i < s->n_files; i++)
			v[i] = stat_of(&s->files[i], (enum stat_col)c);
		qsort(v, s->n_files, sizeof(*v), by_u64);
		q[c][0] = v[0];
		q[c][1] = v[(s->n_files - 1) / 2];
		q[c][2] = v[s->n_files - 1];
	}
	static const char *const rows[] = { "least", "median", "most" };
	for (int r = 0; r < 3; r++) {
		dt_table_cell(t, "%s", rows[r]);
		for (int c = 0; c < ST_N; c++) {
			bool time =
				c == ST_GPU || c == ST_CUDNN || c == ST_COMM;
			if (c == ST_COMM && !comm)
				continue;
			if (time)
				dt_table_cell(t, "%s",
					      dt_fmt_ns(q[c][r], b, sizeof(b)));
			else
				dt_table_cell(t, "%" PRIu64, q[c][r]);
		}
	}
	dt_table_print(t, out, fmt, color);
	dt_table_free(t);
	free(v);
}

/* The rank the straggler finding names: of the traces with communication
 * kernels, the one that spent the least time in them. */
static size_t straggler(const struct dt_summary *s)
{
	size_t lo = SIZE_MAX;
	bool found = false;

	for (size_t i = 0; i < s->n_findings; i++)
		found |= s->findings[i].type == DT_FIND_STRAGGLER;
	for (size_t i = 0; found && i < s->n_files; i++)
		if (s->files[i].comm_ns &&
		    (lo == SIZE_MAX ||
		     s->files[i].comm_ns < s->files[lo].comm_ns))
			lo = i;
	return lo;
}

static int by_work(const void *a, const void *b, void *arg)
{
	const struct dt_sum_file *files = arg;
	uint64_t x = work_ns(&files[*(const size_t *)a]),
		 y = work_ns(&files[*(const size_t *)b]);

	if (x != y)
		return x < y ? 1 : -1;
	return by_rank(a, b, arg);
}

/* The ranks that stand out: the slowest and the fastest few by their own
 * work, the straggler, and traces that did not end clean. */
static void print_outliers(FILE *out, const struct dt_summary *s,
			   enum dt_format fmt, bool color, bool comm)
{
	struct cols cols;
	struct dt_table *t = files_table(&cols, comm, true);
	size_t *ix = dt_rank_order(s), n = s->n_files, unclean = 0, more = 0;
	size_t lag = straggler(s);

	if (!t || !ix) {
		dt_table_free(t);
		free(ix);
		return;
	}
	qsort_r(ix, n, sizeof(*ix), by_work, s->files);
	for (size_t k = 0; k < n; k++) {
		size_t i = ix[k];
		const struct dt_sum_file *f = &s->files[i];
		const char *why = i == lag               ? "straggler"
				  : k < OUTLIER_TOP      ? "slowest"
				  : k >= n - OUTLIER_TOP ? "fastest"
							 : NULL;
		if (!why && f->end != DT_FILE_CLEAN) {
			if (unclean++ >= UNCLEAN_TOP) {
				more++;
				continue;
			}
			why = "not clean";
		}
		if (why)
			file_row(t, f, comm, why);
	}
	dt_heading(out, fmt, "###", color,
		   "Ranks that stand out: the %d slowest and fastest by GPU "
		   "time outside communication%s%s",
		   OUTLIER_TOP, lag != SIZE_MAX ? ", the straggler" : "",
		   unclean ? ", traces that did not end clean" : "");
	dt_table_print(t, out, fmt, color);
	if (more)
		dt_para(out, fmt, NULL, "(%zu more did not end clean)\n", more);
	dt_table_free(t);
	free(ix);
}

/* ------------------------------------------------------------ section */

void dt_report_traces(FILE *out, const struct dt_summary *s, enum dt_format fmt,
		      bool color, bool all)
{
	bool comm = has_comm(s);

	if (!all && s->n_files > RANK_ROWS) {
		dt_heading(out, fmt, "##", color,
			   "Traces: %zu, summarized (--ranks all lists each)",
			   s->n_files);
		print_spread(out, s, fmt, color, comm);
		print_outliers(out, s, fmt, color, comm);
	} else {
		struct cols cols;
		struct dt_table *t = files_table(&cols, comm, false);
		size_t *ix = dt_rank_order(s);
		if (t && ix) {
			dt_heading(out, fmt, "##", color, "Traces");
			for (size_t k = 0; k < s->n_files; k++)
				file_row(t, &s->files[ix[k]], comm, NULL);
			dt_table_print(t, out, fmt, color);
		}
		dt_table_free(t);
		free(ix);
	}
	if (fmt == DT_HTML)
		dt_html_ranks(out, s);
}
