/*
 * report-sections.c - the sections of `dnntrace report` in text,
 * Markdown or HTML: GPU time split by kind and library, the program's
 * NVTX ranges, the findings, the operations by problem (in --sort's
 * order, with their rates against the roofline and a column per rank),
 * and the cuDNN functions by host time.
 *
 * It lays out the analyzer's summary; the sections other views share,
 * the pictures, and the JSON report are elsewhere (report.h says where).
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dt-analyzer.h"
#include "report.h"
#include "tools.h"

#define RANK_COLUMNS 8 /* per-rank columns up to this many files */

const char *const dt_report_sort_names[] = { "gpu",  "count", "mean", "max",
					     "host", "roof",  NULL };
const char *const dt_report_sort_words[] = {
	"GPU time",          "executions", "mean GPU time",
	"longest execution", "host time",  "distance below the roofline",
};

/* ------------------------------------------------------------ numbers */

double dt_report_share(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0;
}

static const char *engine_str(const struct dt_sum_problem *p, char *buf,
			      size_t size)
{
	const char *kind =
		strcmp(p->api, "cudnnBackendExecute") ? "algo" : "eng";
	int n;

	if (p->last_engine < 0)
		n = snprintf(buf, size, "?");
	else
		n = snprintf(buf, size, "%s%" PRId64, kind, p->last_engine);
	if (p->n_engines > 1 && n > 0 && (size_t)n < size)
		snprintf(buf + n, size - (size_t)n, "+%u", p->n_engines - 1);
	return buf;
}

/* ------------------------------------------------------------- sorting */

static double sort_value(const struct dt_report *c,
			 const struct dt_sum_problem *p)
{
	struct dt_rates r;

	switch (c->sort) {
	case SORT_COUNT:
		return (double)p->count;
	case SORT_MEAN:
		return p->count > p->unsampled
			       ? (double)p->gpu_ns /
					 (double)(p->count - p->unsampled)
			       : 0;
	case SORT_MAX:
		return (double)p->max_ns;
	case SORT_HOST:
		return (double)p->host_ns;
	case SORT_ROOF:
		dt_problem_rates(c->s, p, &r);
		/* furthest below first; unknown last */
		return r.roof_pct < 0 ? -1e300 : -r.roof_pct;
	case SORT_GPU:
	default:
		return (double)p->gpu_ns;
	}
}

static int by_sort(const void *a, const void *b, void *arg)
{
	const struct dt_report *c = arg;
	const struct dt_sum_problem *x = &c->s->problems[*(const uint32_t *)a],
				    *y = &c->s->problems[*(const uint32_t *)b];
	double vx = sort_value(c, x), vy = sort_value(c, y);

	if (vx != vy)
		return vx < vy ? 1 : -1;
	if (x->gpu_ns != y->gpu_ns)
		return x->gpu_ns < y->gpu_ns ? 1 : -1;
	int k = strcmp(x->api, y->api);
	return k ? k : strcmp(x->key, y->key);
}

/* The problems in report order: those that ran on the GPU through cuDNN. */
uint32_t *dt_report_problem_order(const struct dt_report *c, size_t *n)
{
	const struct dt_summary *s = c->s;
	uint32_t *ix = malloc((s->n_problems + 1) * sizeof(*ix));

	*n = 0;
	if (!ix)
		return NULL;
	for (size_t i = 0; i < s->n_problems; i++)
		ix[(*n)++] = (uint32_t)i;
	qsort_r(ix, *n, sizeof(*ix), by_sort, (void *)c);
	return ix;
}

static int by_api_ns(const void *a, const void *b, void *arg)
{
	const struct dt_sum_api *apis = arg;
	const struct dt_sum_api *x = &apis[*(const uint32_t *)a],
				*y = &apis[*(const uint32_t *)b];
	if (x->ns != y->ns)
		return x->ns < y->ns ? 1 : -1;
	return strcmp(x->name, y->name);
}

uint32_t *dt_report_api_order(const struct dt_summary *s)
{
	uint32_t *ix = malloc((s->n_apis + 1) * sizeof(*ix));

	if (!ix)
		return NULL;
	for (size_t i = 0; i < s->n_apis; i++)
		ix[i] = (uint32_t)i;
	qsort_r(ix, s->n_apis, sizeof(*ix), by_api_ns, s->apis);
	return ix;
}

static int by_kind_ns(const void *a, const void *b, void *arg)
{
	const uint64_t *ns = arg;
	int x = *(const int *)a, y = *(const int *)b;
	if (ns[x] != ns[y])
		return ns[x] < ns[y] ? 1 : -1;
	return x - y;
}

/* GPU time's rows for the libraries' operations: the work inside each
 * library's calls, then each kind of op by time, largest first. */
static void time_libraries(struct dt_table *t, const struct dt_summary *s,
			   const char *ind)
{
	char b1[32], b2[32];

	for (size_t i = 0; i < s->n_libs; i++) {
		const struct dt_sum_lib *l = &s->libs[i];
		dt_table_cell(t, "%s%s operations", ind, l->display);
		dt_table_cell(t, "%s", dt_fmt_ns(l->gpu_ns, b1, sizeof(b1)));
		dt_table_cell(t, "%s",
			      dt_fmt_pct(dt_report_share(l->gpu_ns, s->gpu_ns),
					 b2, sizeof(b2)));
		dt_table_cell(t, "%" PRIu64, l->runs);
	}
	int kinds[DT_KIND_COUNT], n_kinds = 0;
	for (int k = 0; k < DT_KIND_COUNT; k++)
		if (s->kind_count[k])
			kinds[n_kinds++] = k;
	qsort_r(kinds, (size_t)n_kinds, sizeof(kinds[0]), by_kind_ns,
		(void *)s->kind_ns);
	for (int i = 0; i < n_kinds; i++) {
		int k = kinds[i];
		dt_table_cell(t, "%s%s%s", ind, ind, dt_op_kind_name(k));
		dt_table_cell(t, "%s",
			      dt_fmt_ns(s->kind_ns[k], b1, sizeof(b1)));
		dt_table_cell(
			t, "%s",
			dt_fmt_pct(dt_report_share(s->kind_ns[k], s->gpu_ns),
				   b2, sizeof(b2)));
		dt_table_cell(t, "%" PRIu64, s->kind_count[k]);
	}
}

/* GPU time's rows for the rest: other kernels, by library, and copies
 * and sets outside cuDNN calls. */
static void time_other(struct dt_table *t, const struct dt_summary *s,
		       const char *ind)
{
	uint64_t other = 0, other_n = 0;
	char b1[32], b2[32];

	for (int l = 0; l < DT_LIB_COUNT; l++) {
		other += s->other_ns[l];
		other_n += s->other_count[l];
	}
	if (other_n) {
		dt_table_cell(t, "%sother kernels", ind);
		dt_table_cell(t, "%s", dt_fmt_ns(other, b1, sizeof(b1)));
		dt_table_cell(t, "%s",
			      dt_fmt_pct(dt_report_share(other, s->gpu_ns), b2,
					 sizeof(b2)));
		dt_table_cell(t, "%" PRIu64, other_n);
	}
	for (int l = 0; l < DT_LIB_COUNT; l++) {
		uint64_t n = s->other_count[l], ns = s->other_ns[l];
		if (!n)
			continue;
		dt_table_cell(t, "%s%s%s", ind, ind, dt_lib_name(l));
		dt_table_cell(t, "%s", dt_fmt_ns(ns, b1, sizeof(b1)));
		dt_table_cell(t, "%s",
			      dt_fmt_pct(dt_report_share(ns, s->gpu_ns), b2,
					 sizeof(b2)));
		dt_table_cell(t, "%" PRIu64, n);
	}
	if (s->copies) {
		dt_table_cell(t, "%smemory copies and sets outside cuDNN calls",
			      ind);
		dt_table_cell(t, "%s", dt_fmt_ns(s->copy_ns, b1, sizeof(b1)));
		dt_table_cell(t, "%s",
			      dt_fmt_pct(dt_report_share(s->copy_ns, s->gpu_ns),
					 b2, sizeof(b2)));
		dt_table_cell(t, "%" PRIu64, s->copies);
	}
}

/* GPU time's last rows: how busy the GPU was, and the host's time in
 * cuDNN. */
static void time_busy(struct dt_table *t, const struct dt_summary *s)
{
	char b1[32], b2[32];

	dt_table_cell(t, "GPU busy (any activity)");
	dt_table_cell(t, "%s", dt_fmt_ns(s->busy_ns, b1, sizeof(b1)));
	dt_table_cell(t, "%s",
		      dt_fmt_pct(dt_report_share(s->busy_ns, s->span_ns), b2,
				 sizeof(b2)));
	dt_table_cell(t, "of %s", dt_fmt_ns(s->span_ns, b1, sizeof(b1)));
	dt_table_cell(t, "%s",
		      s->sampling.one_in
			      ? "GPU idle in the sampling windows"
			      : "GPU idle between its first and last activity");
	dt_table_cell(t, "%s",
		      dt_fmt_ns(s->span_ns - s->busy_ns, b1, sizeof(b1)));
	dt_table_cell(
		t, "%s",
		dt_fmt_pct(dt_report_share(s->span_ns - s->busy_ns, s->span_ns),
			   b2, sizeof(b2)));
	dt_table_cell(t, "%s", "");
	dt_table_cell(t, "host time inside %s calls", dt_sum_callers(s));
	dt_table_cell(t, "%s", dt_fmt_ns(s->host_ns, b1, sizeof(b1)));
	dt_table_cell(t, "%s", "");
	dt_table_cell(t, "%" PRIu64, s->host_calls);
}

void dt_report_time(const struct dt_report *c)
{
	static const char *const hdr[] = { "", "time", "share", "count", NULL };
	const struct dt_summary *s = c->s;
	struct dt_table *t = dt_table_new(hdr, "lrrr");
	/* HTML keeps no blanks: no-break spaces */
	const char *ind = c->format == DT_MARKDOWN ? "&nbsp;&nbsp;"
			  : c->format == DT_HTML   ? "\u00a0\u00a0"
						   : "  ";
	char b1[32];

	if (!t)
		return;
	dt_heading(c->out, c->format, "##", c->color, "GPU time");
	if (!s->gpu_ns) {
		dt_para(c->out, c->format, NULL,
			"no GPU activity in %s (the activity line "
			"says why)\n",
			s->n_files == 1 ? "this trace" : "these traces");
		dt_para(c->out, c->format, NULL,
			"host time inside %s calls: %s\n", dt_sum_callers(s),
			dt_fmt_ns(s->host_ns, b1, sizeof(b1)));
		dt_table_free(t);
		return;
	}
	dt_table_cell(t, "kernels, copies and sets, summed");
	dt_table_cell(t, "%s", dt_fmt_ns(s->gpu_ns, b1, sizeof(b1)));
	dt_table_cell(t, "100%%");
	dt_table_cell(t, "%s", "");
	time_libraries(t, s, ind);
	time_other(t, s, ind);
	time_busy(t, s);
	dt_table_print(t, c->out, c->format, c->color);
	dt_table_free(t);
	if (c->format == DT_HTML) {
		dt_html_time_bars(c->out, s);
		dt_html_timeline(c->out, s);
	}
}

/* The findings as a list, each with its evidence (whole: a browser
 * wraps it). */
static void html_findings(const struct dt_report *c)
{
	const struct dt_summary *s = c->s;
	char b1[32];

	fputs("<ol class=\"findings\">\n", c->out);
	for (size_t i = 0; i < s->n_findings; i++) {
		const struct dt_finding *f = &s->findings[i];
		fprintf(c->out, "<li><strong>%s %s</strong>: ",
			dt_fmt_ns(f->cost_ns, b1, sizeof(b1)),
			f->host ? "host" : "GPU");
		dt_html_escape(c->out, f->title);
		fputs("\n<ul>\n", c->out);
		for (const char *e = f->evidence; e && *e;) {
			size_t n = strcspn(e, "\n");
			char *line = strndup(e, n);
			fputs("<li>", c->out);
			dt_html_escape(c->out, line);
			fputs("</li>\n", c->out);
			free(line);
			e += n;
			if (*e)
				e++;
		}
		fputs("</ul></li>\n", c->out);
	}
	fputs("</ol>\n", c->out);
}

void dt_report_findings(const struct dt_report *c)
{
	const struct dt_summary *s = c->s;
	char b1[32];

	dt_heading(c->out, c->format, "##", c->color,
		   "Findings, largest cost first");
	if (!s->n_findings) {
		dt_para(c->out, c->format, NULL,
			"none: no autotuning, plan rebuilds, layout "
			"conversions, FP32 without tensor cores,\nops far "
			"below the roofline, failed calls, copies, idle GPU "
			"or work far below the\nbandwidth roof were seen\n");
		return;
	}
	if (c->format == DT_HTML) {
		html_findings(c);
		return;
	}
	for (size_t i = 0; i < s->n_findings; i++) {
		const struct dt_finding *f = &s->findings[i];
		dt_fmt_ns(f->cost_ns, b1, sizeof(b1));
		if (c->format == DT_MARKDOWN)
			fprintf(c->out, "%zu. **%s %s**: %s\n", i + 1, b1,
				f->host ? "host" : "GPU", dt_text(f->title));
		else
			fprintf(c->out, "%s%2zu. [%s %s]%s %s\n",
				c->color ? "\033[33m" : "", i + 1, b1,
				f->host ? "host" : "GPU",
				c->color ? "\033[0m" : "", dt_text(f->title));
		for (const char *e = f->evidence; e && *e;) {
			size_t n = strcspn(e, "\n");
			size_t max = c->wide || n < 150 ? n : 150;
			char *line = strndup(e, max);
			fprintf(c->out, "%s%s%s\n",
				c->format == DT_MARKDOWN ? "    - " : "      ",
				line ? dt_text(line) : "",
				max < n ? "..." : "");
			free(line);
			e += n;
			if (*e)
				e++;
		}
	}
}

/* The columns of the operations table. */
struct ops_columns {
	const char *hdr[16 + RANK_COLUMNS + 2];
	char align[40];
	char rank_hdr[RANK_COLUMNS][32];
	size_t col_file[RANK_COLUMNS]; /* the ranks in the Traces' order */
	bool ranks;                    /* several traces */
	bool per_rank; /* a column each, else the slowest and fastest */
};

static void ops_columns(const struct dt_summary *s, struct ops_columns *oc)
{
	static const char *const fixed[] = {
		"count",  "GPU time",  "of cuDNN", "tuning",
		"mean",   "median",    "min",      "max",
		"engine", "workspace", "FLOP/s",   "%peak",
		"B/s",    "%peak",     "FLOP/B",   "bound"
	};
	const char **hdr = oc->hdr;
	char *align = oc->align;
	size_t h = 0;

	oc->ranks = s->n_files > 1;
	oc->per_rank = oc->ranks && s->n_files <= RANK_COLUMNS;
	for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++) {
		hdr[h] = fixed[i];
		align[h++] = 'r';
	}
	if (!dt_sum_cudnn_only(s)) /* the share of every library's */
		hdr[2] = "of libraries";
	if (s->sampling.one_in) {
		/* sampled: how many executions the times come from, and how
		 * far the mean may be off */
		hdr[h] = "timed";
		align[h++] = 'r';
		hdr[h] = "mean ±95%";
		align[h++] = 'r';
	}
	if (oc->per_rank) {
		size_t *ro = dt_rank_order(s);
		for (size_t k = 0; k < s->n_files; k++) {
			char b[24];
			oc->col_file[k] = ro ? ro[k] : k;
			snprintf(oc->rank_hdr[k], sizeof(oc->rank_hdr[k]),
				 "rank %s",
				 dt_rank_label(&s->files[oc->col_file[k]], b,
					       sizeof(b)));
			hdr[h] = oc->rank_hdr[k];
			align[h++] = 'r';
		}
		free(ro);
	} else if (oc->ranks) {
		hdr[h] = "slowest rank";
		align[h++] = 'r';
		hdr[h] = "fastest rank";
		align[h++] = 'r';
	}
	hdr[h] = "operation";
	align[h++] = 'l';
	hdr[h] = NULL;
	align[h] = 0;
}

/* A problem's GPU times, engine, workspace and rates against the
 * device's peaks; when sampled, how many runs were timed. */
static void ops_times(struct dt_table *t, const struct dt_summary *s,
		      const struct dt_sum_problem *p)
{
	struct dt_rates r;
	char b[8][40];

	dt_problem_rates(s, p, &r);
	dt_table_cell(t, "%" PRIu64, p->count);
	dt_table_cell(t, "%s", dt_fmt_ns(p->gpu_ns, b[0], sizeof(b[0])));
	dt_table_cell(t, "%s",
		      dt_fmt_pct(dt_report_share(p->gpu_ns, dt_sum_share_ns(s)),
				 b[1], sizeof(b[1])));
	dt_table_cell(t, "%s",
		      p->tune_count ? dt_fmt_ns(p->tune_ns, b[6], sizeof(b[6]))
				    : "-");
	dt_table_cell(t, "%s",
		      dt_fmt_ns(p->settled_count
					? p->settled_ns / p->settled_count
					: 0,
				b[2], sizeof(b[2])));
	dt_table_cell(t, "%s", dt_fmt_ns(p->median_ns, b[3], sizeof(b[3])));
	dt_table_cell(t, "%s", dt_fmt_ns(p->min_ns, b[4], sizeof(b[4])));
	dt_table_cell(t, "%s", dt_fmt_ns(p->max_ns, b[5], sizeof(b[5])));
	dt_table_cell(t, "%s", engine_str(p, b[6], sizeof(b[6])));
	dt_table_cell(t, "%s",
		      p->workspace < 0 ? "?"
				       : dt_fmt_bytes((uint64_t)p->workspace,
						      b[7], sizeof(b[7])));
	dt_table_cell(t, "%s", dt_fmt_si(r.flops_per_s, b[0], sizeof(b[0])));
	dt_table_cell(t, "%s", dt_fmt_pct(r.pct_flops, b[1], sizeof(b[1])));
	dt_table_cell(t, "%s", dt_fmt_si(r.bytes_per_s, b[2], sizeof(b[2])));
	dt_table_cell(t, "%s", dt_fmt_pct(r.pct_bandwidth, b[3], sizeof(b[3])));
	if (r.intensity > 0)
		dt_table_cell(t, "%.1f", r.intensity);
	else
		dt_table_cell(t, "-");
	dt_table_cell(t, "%s",
		      r.bound == 1   ? "compute"
		      : r.bound == 0 ? "memory"
				     : "-");
	if (s->sampling.one_in) {
		double spread = dt_problem_spread(p);
		dt_table_cell(t, "%" PRIu64 "/%" PRIu64,
			      p->count - p->unsampled, p->count);
		if (spread < 0)
			dt_table_cell(t, "-");
		else
			dt_table_cell(t, "%.1f%%", 100 * spread);
	}
}

/* A problem's GPU time on each rank, or on its slowest and fastest. */
static void ops_ranks(struct dt_table *t, const struct dt_summary *s,
		      const struct dt_sum_problem *p,
		      const struct ops_columns *oc)
{
	char b[40];

	if (oc->per_rank) {
		for (size_t k = 0; k < s->n_files; k++) {
			size_t f = oc->col_file[k];
			dt_table_cell(t, "%s",
				      f < p->cap_per_file &&
						      p->per_file[f].count
					      ? dt_fmt_ns(p->per_file[f].ns, b,
							  sizeof(b))
					      : "-");
		}
		return;
	}
	if (!oc->ranks)
		return;
	size_t lo = SIZE_MAX, hi = SIZE_MAX;
	for (size_t f = 0; f < s->n_files && f < p->cap_per_file; f++) {
		if (!p->per_file[f].count)
			continue;
		if (hi == SIZE_MAX || p->per_file[f].ns > p->per_file[hi].ns)
			hi = f;
		if (lo == SIZE_MAX || p->per_file[f].ns < p->per_file[lo].ns)
			lo = f;
	}
	for (int k = 0; k < 2; k++) {
		size_t f = k ? lo : hi;
		char lb[24];
		if (f == SIZE_MAX)
			dt_table_cell(t, "-");
		else
			dt_table_cell(
				t, "%s (%s)",
				dt_fmt_ns(p->per_file[f].ns, b, sizeof(b)),
				dt_rank_label(&s->files[f], lb, sizeof(lb)));
	}
}

/* What the times of a problem that was autotuned are. */
static void ops_tuning_note(const struct dt_report *c)
{
	const struct dt_summary *s = c->s;

	for (size_t i = 0; i < s->n_problems; i++)
		if (s->problems[i].tune_count) {
			dt_para(c->out, c->format, NULL,
				"mean, median, min, max and the rates are "
				"those of the engine each problem\n"
				"settled on (the last it ran with); tuning is "
				"the GPU time of its runs with\nother engines, "
				"counted in GPU time\n");
			break;
		}
}

void dt_report_ops(const struct dt_report *c)
{
	const struct dt_summary *s = c->s;
	struct ops_columns oc;
	size_t n;

	ops_columns(s, &oc);
	uint32_t *ix = dt_report_problem_order(c, &n);
	struct dt_table *t = dt_table_new(oc.hdr, oc.align);
	if (!ix || !t) {
		free(ix);
		dt_table_free(t);
		return;
	}
	size_t shown = c->top && (size_t)c->top < n ? (size_t)c->top : n;
	dt_heading(c->out, c->format, "##", c->color,
		   "Operations by problem: %s%zu of %zu, by %s",
		   shown < n ? "top " : "", shown, n,
		   dt_report_sort_words[c->sort]);
	if (!n) {
		dt_para(c->out, c->format, NULL,
			dt_sum_cudnn_only(s)
				? "no operation ran on the GPU through cuDNN\n"
				: "no operation ran on the GPU through the "
				  "libraries' calls\n");
		free(ix);
		dt_table_free(t);
		return;
	}
	for (size_t i = 0; i < shown; i++) {
		const struct dt_sum_problem *p = &s->problems[ix[i]];
		int max = c->wide ? 1 << 20 : 110;
		ops_times(t, s, p);
		ops_ranks(t, s, p, &oc);
		dt_table_cell(
			t, "%s %s%s%.*s%s%s", dt_op_kind_key(p->kind),
			p->math != DT_MATH_UNKNOWN ? dt_math_name(p->math) : "",
			p->math != DT_MATH_UNKNOWN ? " " : "", max, p->brief,
			(int)strlen(p->brief) > max ? "..." : "",
			p->failed ? " (FAILED runs)" : "");
	}
	dt_table_print(t, c->out, c->format, c->color);
	dt_table_free(t);
	ops_tuning_note(c);
	if (c->format == DT_HTML)
		dt_html_roofline(c->out, s, ix, n, c->top);
	free(ix);
}

/* The functions of library lib (an index in s->libs; -1: all) by host
 * time, under heading "<whose> functions by host time". */
static void apis_table(const struct dt_report *c, const uint32_t *ix, long lib,
		       const char *whose)
{
	static const char *const hdr[] = { "calls",    "failed", "host time",
					   "avg",      "min",    "max",
					   "function", NULL };
	const struct dt_summary *s = c->s;
	struct dt_table *t = dt_table_new(hdr, "rrrrrrl");
	size_t n = 0, shown;
	char b[4][32];

	if (!t)
		return;
	for (size_t i = 0; i < s->n_apis; i++)
		n += lib < 0 || s->apis[i].lib == (size_t)lib;
	shown = c->top && (size_t)c->top < n ? (size_t)c->top : n;
	dt_heading(c->out, c->format, "##", c->color,
		   "%s functions by host time: %s%zu of %zu", whose,
		   shown < n ? "top " : "", shown, n);
	if (!n) {
		/* a line saying why, not a table of no rows */
		dt_para(c->out, c->format, NULL, "no %s call was recorded\n",
			whose);
		dt_table_free(t);
		return;
	}
	for (size_t i = 0, k = 0; i < s->n_apis && k < shown; i++) {
		const struct dt_sum_api *a = &s->apis[ix[i]];
		if (lib >= 0 && a->lib != (size_t)lib)
			continue;
		k++;
		dt_table_cell(t, "%" PRIu64, a->calls);
		dt_table_cell(t, "%" PRIu64, a->failed);
		dt_table_cell(t, "%s", dt_fmt_ns(a->ns, b[0], sizeof(b[0])));
		dt_table_cell(t, "%s",
			      dt_fmt_ns(a->calls ? a->ns / a->calls : 0, b[1],
					sizeof(b[1])));
		dt_table_cell(t, "%s", dt_fmt_ns(a->min, b[2], sizeof(b[2])));
		dt_table_cell(t, "%s", dt_fmt_ns(a->max, b[3], sizeof(b[3])));
		dt_table_cell(t, "%s", a->name);
	}
	dt_table_print(t, c->out, c->format, c->color);
	dt_table_free(t);
}

/* The functions by host time: cuDNN's, or where the traces wrapped other
 * libraries, one table per library that was called. */
void dt_report_apis(const struct dt_report *c)
{
	const struct dt_summary *s = c->s;
	uint32_t *ix = dt_report_api_order(s);

	if (!ix && s->n_apis)
		return;
	if (dt_sum_cudnn_only(s)) {
		apis_table(c, ix, -1, "cuDNN");
	} else {
		for (size_t l = 0; l < s->n_libs; l++)
			if (s->libs[l].calls)
				apis_table(c, ix, (long)l, s->libs[l].display);
	}
	free(ix);
}

/* The program's NVTX ranges by name, most GPU time first: only when the
 * traces hold some. */
void dt_report_ranges(const struct dt_report *c)
{
	static const char *const hdr[] = { "count",   "host time", "calls",
					   "kernels", "GPU time",  "range",
					   NULL };
	const struct dt_summary *s = c->s;
	size_t shown = c->top && (size_t)c->top < s->n_ranges ? (size_t)c->top
							      : s->n_ranges;
	struct dt_table *t;
	char b[2][32];

	if (!s->n_ranges || !(t = dt_table_new(hdr, "rrrrrl")))
		return;
	dt_heading(c->out, c->format, "##", c->color,
		   "GPU time by range: %s%zu of %zu",
		   shown < s->n_ranges ? "top " : "", shown, s->n_ranges);
	dt_para(c->out, c->format, NULL,
		"NVTX ranges by name: the calls made inside them (a push "
		"range's on its thread, a start/end range's on any) and the "
		"GPU work tied to those calls; kernels launched outside "
		"recorded calls are not tied to a range\n");
	for (size_t i = 0; i < shown; i++) {
		const struct dt_range_stat *r = &s->ranges[i];
		dt_table_cell(t, "%" PRIu64 "%s", r->count,
			      r->open ? " (+open)" : "");
		dt_table_cell(t, "%s",
			      dt_fmt_ns(r->host_ns, b[0], sizeof(b[0])));
		dt_table_cell(t, "%" PRIu64, r->calls);
		dt_table_cell(t, "%" PRIu64, r->kernels);
		dt_table_cell(t, "%s",
			      dt_fmt_ns(r->gpu_ns, b[1], sizeof(b[1])));
		dt_table_cell(t, "%s%s%s", r->domain ? r->domain : "",
			      r->domain ? "::" : "", r->name);
	}
	dt_table_print(t, c->out, c->format, c->color);
	dt_table_free(t);
}
