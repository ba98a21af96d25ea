/*
 * cmd-report.c - `dnntrace report`: where the time went and how well the
 * GPU was used, for one trace or all the traces of a job.
 *
 * The numbers come from the analyzer's summary (struct dt_summary); this file
 * only lays them out: aligned text (colours on a terminal), Markdown, one
 * self-contained HTML page with pictures (report-html.c draws them), or
 * JSON in the versioned schema analyzer/REPORT.md documents.
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
#include "tools.h"

#define RANK_COLUMNS 8 /* per-rank columns up to this many files */

enum sort_key {
	SORT_GPU,
	SORT_COUNT,
	SORT_MEAN,
	SORT_MAX,
	SORT_HOST,
	SORT_ROOF
};

static const char *const sort_names[] = { "gpu",  "count", "mean", "max",
					  "host", "roof",  NULL };
static const char *const sort_words[] = {
	"GPU time",          "executions", "mean GPU time",
	"longest execution", "host time",  "distance below the roofline",
};

struct ctx {
	FILE *out;
	enum dt_format format;
	bool color;
	bool wide;
	bool all_ranks; /* a Traces row per rank however many */
	long top;
	enum sort_key sort;
	const struct dt_summary *s;
};

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
		"  -h, --help           show this help\n\n"
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

/* ------------------------------------------------------------ numbers */

static double share(uint64_t part, uint64_t whole)
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

static double sort_value(const struct ctx *c, const struct dt_sum_problem *p)
{
	struct dt_rates r;

	switch (c->sort) {
	case SORT_COUNT:
		return (double)p->count;
	case SORT_MEAN:
		return p->count > p->unsampled ? (double)p->gpu_ns /
							 (double)(p->count -
								  p->unsampled)
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
	const struct ctx *c = arg;
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
static uint32_t *problem_order(const struct ctx *c, size_t *n)
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

static uint32_t *api_order(const struct dt_summary *s)
{
	uint32_t *ix = malloc((s->n_apis + 1) * sizeof(*ix));

	if (!ix)
		return NULL;
	for (size_t i = 0; i < s->n_apis; i++)
		ix[i] = (uint32_t)i;
	qsort_r(ix, s->n_apis, sizeof(*ix), by_api_ns, s->apis);
	return ix;
}

/* ---------------------------------------------------------------- text */

/* "label value" lines of the header: a list item in Markdown, a term and
 * its description in HTML (an empty label goes on describing the last
 * term), of class cls when not NULL. */
static void vfact(const struct ctx *c, const char *cls, const char *label,
		  const char *fmt, va_list ap)
{
	if (c->format == DT_HTML) {
		char *v = NULL;
		if (vasprintf(&v, fmt, ap) < 0)
			v = NULL;
		if (*label) {
			fputs("<dt>", c->out);
			dt_html_escape(c->out, label);
			fputs("</dt>", c->out);
		}
		if (cls)
			fprintf(c->out, "<dd class=\"%s\">", cls);
		else
			fputs("<dd>", c->out);
		dt_html_escape(c->out, v);
		fputs("</dd>\n", c->out);
		free(v);
		return;
	}
	if (c->format == DT_MARKDOWN)
		fprintf(c->out, "- **%s**: ", label);
	else
		fprintf(c->out, "%-10s", label);
	dt_vprint_text(c->out, false, fmt, ap);
	fputc('\n', c->out);
}

static void fact(const struct ctx *c, const char *label, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void fact(const struct ctx *c, const char *label, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfact(c, NULL, label, fmt, ap);
	va_end(ap);
}

/* What a trace lacks, said where it is seen first. */
static void warn_fact(const struct ctx *c, const char *label,
		      const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void warn_fact(const struct ctx *c, const char *label,
		      const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfact(c, "warn", label, fmt, ap);
	va_end(ap);
}

/* CUDA graphs: launches, replays, and what could not be tied to calls. */
static void print_graphs(const struct ctx *c)
{
	const struct dt_summary *s = c->s;
	const struct dt_graph_stats *g = &s->graphs;
	bool old = false;
	char b[32], l[160];

	for (size_t i = 0; i < s->n_files; i++)
		old |= !s->files[i].graph_records && s->files[i].graphs.kernels;
	if (!g->kernels && !g->captured && !g->launches)
		return;
	if (g->launches)
		snprintf(l, sizeof(l),
			 "%" PRIu64 " CUDA graph launches (%s of host time)",
			 g->launches, dt_fmt_ns(g->launch_ns, b, sizeof(b)));
	else
		snprintf(l, sizeof(l),
			 "%" PRIu64 " CUDA graph launches (seen in their "
			 "kernels; their host time was not recorded)",
			 g->launched);
	fact(c, "graphs",
	     "%s; %" PRIu64 " cuDNN op executions replayed from %" PRIu64
	     " calls captured into graphs; %" PRIu64
	     " kernels replayed, %" PRIu64 " of them cuDNN's",
	     l, g->replays, g->captured, g->kernels, g->attributed);
	if (g->unknown)
		fact(c, "",
		     "%" PRIu64 " kernels came from executable graphs whose "
		     "making the trace does not show (a CUDA runtime linked "
		     "statically?): cuDNN's among them count as other kernels",
		     g->unknown);
	if (g->unresolved)
		fact(c, "",
		     "%" PRIu64 " kernels ran in child graphs whose nodes the "
		     "trace does not tie to calls (copied before it saw "
		     "them): cuDNN's among them count as other kernels",
		     g->unresolved);
	if (g->mismatch)
		fact(c, "",
		     "%" PRIu64 " replayed kernels did not match the kernel "
		     "their graph node had: left out of cuDNN's",
		     g->mismatch);
	if (g->partial)
		fact(c, "",
		     "%" PRIu64 " replays lack some of their kernels "
		     "(records lost, or a graph changed after capture)",
		     g->partial);
	if (old)
		fact(c, "",
		     "%s", "a trace predates CUDA graph records (format 1.0): "
		     "its replayed kernels count as other kernels");
}

/* Execution plans restored from their JSON, and those whose graph the
 * trace does not hold. */
static void print_plans(const struct ctx *c)
{
	const struct dt_plan_stats *p = &c->s->plans;

	if (!p->restored && !p->opaque && !p->unknown_runs)
		return;
	fact(c, "plans",
	     "%" PRIu64 " built; %" PRIu64 " restored from their JSON "
	     "representation, their graph read from it",
	     p->built, p->restored);
	if (p->opaque)
		fact(c, "",
		     "%" PRIu64 " restored plans' JSON gave no graph (cut "
		     "short, of another schema version, or unreadable): "
		     "`dnntrace ops` says why",
		     p->opaque);
	if (p->unknown_runs)
		fact(c, "",
		     "%" PRIu64 " executions of plans whose graph the trace "
		     "does not hold: no kind, FLOPs or bytes for them",
		     p->unknown_runs);
}

/* Sampled GPU recording: what the GPU numbers below come from. */
static void print_sampling(const struct ctx *c)
{
	const struct dt_summary *s = c->s;
	char b1[32];

	const struct dt_gpu_sampling *sm = &s->sampling;

	if (!sm->one_in)
		return;
	warn_fact(c, "sampled",
		  "GPU activity recorded in %" PRIu64 " window%s (%s, %.1f%% "
		  "of the recorded time, one in %u): GPU times are those of "
		  "the windows; per-operation times come from the %" PRIu64
		  " of %" PRIu64 " executions that ran inside one (\"timed\")",
		  sm->windows, sm->windows == 1 ? "" : "s",
		  dt_fmt_ns(sm->window_ns, b1, sizeof(b1)),
		  dt_pct_of(sm->window_ns, s->sampled_traces_ns), sm->one_in,
		  s->ops - sm->unsampled_ops, s->ops);
}

static void print_identity(const struct ctx *c)
{
	const struct dt_summary *s = c->s;
	const struct dt_sum_file *f = &s->files[0];
	char b1[32], b2[32];

	if (c->format == DT_MARKDOWN)
		fprintf(c->out, "# dnntrace report\n\n");
	if (c->format == DT_HTML)
		fputs("<dl class=\"facts\">\n", c->out);
	if (s->n_files == 1) {
		fact(c, "trace", "%s", f->path);
		if (f->program)
			fact(c, "program", "%s", f->program);
		fact(c, "process", "%s, pid %u%s%s", f->host ? f->host : "?",
		     f->pid, f->rank ? ", " : "", f->rank ? f->rank : "");
		if (f->cudnn || f->cudnn_version)
			fact(c, "cuDNN", "%s%s%s",
			     f->cudnn_version ? f->cudnn_version : "",
			     f->cudnn_version && f->cudnn ? ", " : "",
			     f->cudnn ? f->cudnn : "");
		if (f->cuda)
			fact(c, "CUDA", "%s", f->cuda);
		if (f->gpu_state)
			fact(c, "activity", "%s", f->gpu_state);
	} else {
		fact(c, "traces", "%zu", s->n_files);
		if (f->program)
			fact(c, "program", "%s%s", f->program,
			     " (of the first trace)");
	}
	for (size_t d = 0; d < s->n_devices; d++) {
		const struct dt_device *dv = &s->devices[d];
		fact(c, "GPU", "%s: sm_%u%u, %u SMs, %.2f GHz, %s, %sB/s",
		     dv->name, dv->cc_major, dv->cc_minor, dv->sms,
		     (double)dv->clock_khz / 1e6,
		     dt_fmt_bytes(dv->global_mem, b1, sizeof(b1)),
		     dt_fmt_si((double)dv->mem_bandwidth_kBps * 1e3, b2,
			       sizeof(b2)));
	}
	uint64_t lost = 0, dropped = 0, span = 0;
	size_t unclean = 0, partial = 0;
	bool lost_exact = true;
	for (size_t i = 0; i < s->n_files; i++) {
		lost += s->files[i].lost;
		lost_exact &= s->files[i].lost_exact;
		dropped += s->files[i].gpu_dropped;
		unclean += s->files[i].end != DT_FILE_CLEAN;
		partial += !s->files[i].complete;
		if (s->files[i].t_end > s->files[i].t_begin &&
		    s->files[i].t_end - s->files[i].t_begin > span)
			span = s->files[i].t_end - s->files[i].t_begin;
	}
	if (s->n_files == 1 && f->end != DT_FILE_CLEAN) {
		warn_fact(c, "ended", "%s", f->ended);
	} else if (s->n_files == 1) {
		fact(c, "ended", "%s", f->ended);
	} else {
		fact(c, "ended", "%zu of %zu cleanly", s->n_files - unclean,
		     s->n_files);
		for (size_t i = 0; i < s->n_files; i++)
			if (!s->files[i].complete)
				warn_fact(c, "", "%s: incomplete, %s",
				     s->files[i].path,
				     dt_incomplete_why(&s->files[i]));
	}
	if (partial && s->n_files == 1 && f->end != DT_FILE_CLEAN)
		warn_fact(c, "", "%s", "what the trace lacks is not in the "
			  "numbers below");
	else if (partial && s->n_files == 1)
		warn_fact(c, "",
			  "the trace is incomplete, %s: what it lacks is not "
			  "in the numbers below",
			  dt_incomplete_why(f));
	else if (partial)
		warn_fact(c, "", "%s", "what incomplete traces lack is not in "
			  "the numbers below");
	char own[64] = "";
	if (s->own_calls)
		snprintf(own, sizeof(own), " and %" PRIu64 " of dnntrace's own",
			 s->own_calls);
	fact(c, "totals",
	     "%" PRIu64 " calls (%" PRIu64 " failed)%s, %" PRIu64
	     " cuDNN op executions, %" PRIu64 " kernels; %s between the "
	     "first and the last call%s",
	     s->calls, s->failed, own, s->ops, s->kernels,
	     dt_fmt_ns(span, b1, sizeof(b1)),
	     s->n_files > 1 ? " (longest)" : "");
	print_graphs(c);
	print_plans(c);
	print_sampling(c);
	if (s->n_files == 1)
		fact(c, "lost", "%s, %" PRIu64 " GPU records dropped by CUPTI",
		     f->lost_text, dropped);
	else
		fact(c, "lost",
		     "%s%" PRIu64 " records lost, %" PRIu64
		     " GPU records dropped by CUPTI",
		     lost_exact ? "" : "at least ", lost, dropped);

	const struct dt_peaks *pk = dt_summary_peaks(s, -1);
	if (pk->bandwidth > 0 || pk->flops[DT_MATH_FP32] > 0) {
		char line[512];
		int n = snprintf(line, sizeof(line), "%sB/s; FLOP/s:",
				 pk->bandwidth > 0 ? dt_fmt_si(pk->bandwidth,
							       b1, sizeof(b1))
						   : "? ");
		for (int m = 1; m < DT_MATH_COUNT && n < (int)sizeof(line); m++)
			n += snprintf(line + n, sizeof(line) - (size_t)n,
				      "%s %s %s", m > 1 ? "," : "",
				      dt_math_name(m),
				      dt_fmt_si(pk->flops[m], b2, sizeof(b2)));
		fact(c, "peaks", "%s", line);
	}
	fact(c, c->format == DT_MARKDOWN ? "peaks from" : "", "%s%s%s",
	     c->format == DT_MARKDOWN ? "" : "(", pk->source,
	     c->format == DT_MARKDOWN ? "" : ")");
	if (c->format == DT_HTML)
		fputs("</dl>\n", c->out);
}

static int by_kind_ns(const void *a, const void *b, void *arg)
{
	const uint64_t *ns = arg;
	int x = *(const int *)a, y = *(const int *)b;
	if (ns[x] != ns[y])
		return ns[x] < ns[y] ? 1 : -1;
	return x - y;
}

static void print_time(const struct ctx *c)
{
	static const char *const hdr[] = { "", "time", "share", "count", NULL };
	const struct dt_summary *s = c->s;
	struct dt_table *t = dt_table_new(hdr, "lrrr");
	/* HTML keeps no blanks: no-break spaces */
	const char *ind = c->format == DT_MARKDOWN ? "&nbsp;&nbsp;"
			  : c->format == DT_HTML   ? "\u00a0\u00a0"
						   : "  ";
	char b1[32], b2[32];
	uint64_t other = 0, other_n = 0;

	if (!t)
		return;
	dt_heading(c->out, c->format, "##", c->color,
		   "GPU time");
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
	for (int l = 0; l < DT_LIB_COUNT; l++) {
		other += s->other_ns[l];
		other_n += s->other_count[l];
	}
	dt_table_cell(t, "kernels, copies and sets, summed");
	dt_table_cell(t, "%s", dt_fmt_ns(s->gpu_ns, b1, sizeof(b1)));
	dt_table_cell(t, "100%%");
	dt_table_cell(t, "%s", "");
	/* the work inside each library's calls */
	for (size_t i = 0; i < s->n_libs; i++) {
		const struct dt_sum_lib *l = &s->libs[i];
		dt_table_cell(t, "%s%s operations", ind,
			      dt_library_display(l->library));
		dt_table_cell(t, "%s", dt_fmt_ns(l->gpu_ns, b1, sizeof(b1)));
		dt_table_cell(
			t, "%s",
			dt_fmt_pct(share(l->gpu_ns, s->gpu_ns), b2, sizeof(b2)));
		dt_table_cell(t, "%" PRIu64, l->ops);
	}
	/* the kinds by time, largest first */
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
		dt_table_cell(t, "%s",
			      dt_fmt_pct(share(s->kind_ns[k], s->gpu_ns), b2,
					 sizeof(b2)));
		dt_table_cell(t, "%" PRIu64, s->kind_count[k]);
	}
	if (other_n) {
		dt_table_cell(t, "%sother kernels", ind);
		dt_table_cell(t, "%s", dt_fmt_ns(other, b1, sizeof(b1)));
		dt_table_cell(
			t, "%s",
			dt_fmt_pct(share(other, s->gpu_ns), b2, sizeof(b2)));
		dt_table_cell(t, "%" PRIu64, other_n);
	}
	for (int l = 0; l < DT_LIB_COUNT; l++) {
		uint64_t n = s->other_count[l], ns = s->other_ns[l];
		if (!n)
			continue;
		dt_table_cell(t, "%s%s%s", ind, ind, dt_lib_name(l));
		dt_table_cell(t, "%s", dt_fmt_ns(ns, b1, sizeof(b1)));
		dt_table_cell(t, "%s",
			      dt_fmt_pct(share(ns, s->gpu_ns), b2, sizeof(b2)));
		dt_table_cell(t, "%" PRIu64, n);
	}
	if (s->copies) {
		dt_table_cell(t, "%smemory copies and sets outside cuDNN calls",
			      ind);
		dt_table_cell(t, "%s", dt_fmt_ns(s->copy_ns, b1, sizeof(b1)));
		dt_table_cell(t, "%s",
			      dt_fmt_pct(share(s->copy_ns, s->gpu_ns), b2,
					 sizeof(b2)));
		dt_table_cell(t, "%" PRIu64, s->copies);
	}
	dt_table_cell(t, "GPU busy (any activity)");
	dt_table_cell(t, "%s", dt_fmt_ns(s->busy_ns, b1, sizeof(b1)));
	dt_table_cell(
		t, "%s",
		dt_fmt_pct(share(s->busy_ns, s->span_ns), b2, sizeof(b2)));
	dt_table_cell(t, "of %s", dt_fmt_ns(s->span_ns, b1, sizeof(b1)));
	dt_table_cell(t, "%s",
		      s->sampling.one_in
			      ? "GPU idle in the sampling windows"
			      : "GPU idle between its first and last activity");
	dt_table_cell(t, "%s",
		      dt_fmt_ns(s->span_ns - s->busy_ns, b1, sizeof(b1)));
	dt_table_cell(t, "%s",
		      dt_fmt_pct(share(s->span_ns - s->busy_ns, s->span_ns), b2,
				 sizeof(b2)));
	dt_table_cell(t, "%s", "");
	dt_table_cell(t, "host time inside %s calls", dt_sum_callers(s));
	dt_table_cell(t, "%s", dt_fmt_ns(s->host_ns, b1, sizeof(b1)));
	dt_table_cell(t, "%s", "");
	dt_table_cell(t, "%" PRIu64, s->calls);
	dt_table_print(t, c->out, c->format, c->color);
	dt_table_free(t);
	if (c->format == DT_HTML) {
		dt_html_time_bars(c->out, s);
		dt_html_timeline(c->out, s);
	}
}

/* The findings as a list, each with its evidence (whole: a browser
 * wraps it). */
static void html_findings(const struct ctx *c)
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

static void print_findings(const struct ctx *c)
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

static void print_ops(const struct ctx *c)
{
	const struct dt_summary *s = c->s;
	bool ranks = s->n_files > 1;
	bool per_rank = ranks && s->n_files <= RANK_COLUMNS;
	const char *hdr[16 + RANK_COLUMNS + 2];
	char align[40];
	char rank_hdr[RANK_COLUMNS][32];
	size_t h = 0, n;
	static const char *const fixed[] = {
		"count",  "GPU time",  "of cuDNN", "tuning",
		"mean",   "median",    "min",      "max",
		"engine", "workspace", "FLOP/s",   "%peak",
		"B/s",    "%peak",     "FLOP/B",   "bound"
	};

	for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++) {
		hdr[h] = fixed[i];
		align[h++] = 'r';
	}
	if (s->sampling.one_in) {
		/* sampled: how many executions the times come from, and how
		 * far the mean may be off */
		hdr[h] = "timed";
		align[h++] = 'r';
		hdr[h] = "mean ±95%";
		align[h++] = 'r';
	}
	size_t col_file[RANK_COLUMNS]; /* the ranks in the Traces' order */
	if (per_rank) {
		size_t *ro = dt_rank_order(s);
		for (size_t k = 0; k < s->n_files; k++) {
			char b[24];
			col_file[k] = ro ? ro[k] : k;
			snprintf(rank_hdr[k], sizeof(rank_hdr[k]), "rank %s",
				 dt_rank_label(&s->files[col_file[k]], b,
					       sizeof(b)));
			hdr[h] = rank_hdr[k];
			align[h++] = 'r';
		}
		free(ro);
	} else if (ranks) {
		hdr[h] = "slowest rank";
		align[h++] = 'r';
		hdr[h] = "fastest rank";
		align[h++] = 'r';
	}
	hdr[h] = "operation";
	align[h++] = 'l';
	hdr[h] = NULL;
	align[h] = 0;

	uint32_t *ix = problem_order(c, &n);
	struct dt_table *t = dt_table_new(hdr, align);
	if (!ix || !t) {
		free(ix);
		dt_table_free(t);
		return;
	}
	size_t shown = c->top && (size_t)c->top < n ? (size_t)c->top : n;
	dt_heading(c->out, c->format, "##", c->color,
		   "Operations by problem: %s%zu of %zu, by %s",
		   shown < n ? "top " : "", shown, n, sort_words[c->sort]);
	if (!n) {
		dt_para(c->out, c->format, NULL,
			"no operation ran on the GPU through cuDNN\n");
		free(ix);
		dt_table_free(t);
		return;
	}
	for (size_t i = 0; i < shown; i++) {
		const struct dt_sum_problem *p = &s->problems[ix[i]];
		struct dt_rates r;
		char b[8][40];
		dt_problem_rates(s, p, &r);
		dt_table_cell(t, "%" PRIu64, p->count);
		dt_table_cell(t, "%s",
			      dt_fmt_ns(p->gpu_ns, b[0], sizeof(b[0])));
		dt_table_cell(t, "%s",
			      dt_fmt_pct(share(p->gpu_ns, s->cudnn_ns), b[1],
					 sizeof(b[1])));
		dt_table_cell(t, "%s",
			      p->tune_count ? dt_fmt_ns(p->tune_ns, b[6],
							sizeof(b[6]))
					    : "-");
		dt_table_cell(
			t, "%s",
			dt_fmt_ns(p->settled_count
					  ? p->settled_ns / p->settled_count
					  : 0,
				  b[2], sizeof(b[2])));
		dt_table_cell(t, "%s",
			      dt_fmt_ns(p->median_ns, b[3], sizeof(b[3])));
		dt_table_cell(t, "%s",
			      dt_fmt_ns(p->min_ns, b[4], sizeof(b[4])));
		dt_table_cell(t, "%s",
			      dt_fmt_ns(p->max_ns, b[5], sizeof(b[5])));
		dt_table_cell(t, "%s", engine_str(p, b[6], sizeof(b[6])));
		dt_table_cell(t, "%s",
			      p->workspace < 0
				      ? "?"
				      : dt_fmt_bytes((uint64_t)p->workspace,
						     b[7], sizeof(b[7])));
		dt_table_cell(t, "%s",
			      dt_fmt_si(r.flops_per_s, b[0], sizeof(b[0])));
		dt_table_cell(t, "%s",
			      dt_fmt_pct(r.pct_flops, b[1], sizeof(b[1])));
		dt_table_cell(t, "%s",
			      dt_fmt_si(r.bytes_per_s, b[2], sizeof(b[2])));
		dt_table_cell(t, "%s",
			      dt_fmt_pct(r.pct_bandwidth, b[3], sizeof(b[3])));
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
		if (per_rank) {
			for (size_t k = 0; k < s->n_files; k++) {
				size_t f = col_file[k];
				dt_table_cell(
					t, "%s",
					f < p->cap_per_file &&
							p->per_file[f].count
						? dt_fmt_ns(p->per_file[f].ns,
							    b[4], sizeof(b[4]))
						: "-");
			}
		} else if (ranks) {
			size_t lo = SIZE_MAX, hi = SIZE_MAX;
			for (size_t f = 0;
			     f < s->n_files && f < p->cap_per_file; f++) {
				if (!p->per_file[f].count)
					continue;
				if (hi == SIZE_MAX ||
				    p->per_file[f].ns > p->per_file[hi].ns)
					hi = f;
				if (lo == SIZE_MAX ||
				    p->per_file[f].ns < p->per_file[lo].ns)
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
						dt_fmt_ns(p->per_file[f].ns,
							  b[4], sizeof(b[4])),
						dt_rank_label(&s->files[f], lb,
							   sizeof(lb)));
			}
		}
		int max = c->wide ? 1 << 20 : 110;
		dt_table_cell(
			t, "%s %s%s%.*s%s%s", dt_op_kind_key(p->kind),
			p->math != DT_MATH_UNKNOWN ? dt_math_name(p->math) : "",
			p->math != DT_MATH_UNKNOWN ? " " : "", max, p->brief,
			(int)strlen(p->brief) > max ? "..." : "",
			p->failed ? " (FAILED runs)" : "");
	}
	dt_table_print(t, c->out, c->format, c->color);
	dt_table_free(t);
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
	if (c->format == DT_HTML)
		dt_html_roofline(c->out, s, ix, n, c->top);
	free(ix);
}

static void print_apis(const struct ctx *c)
{
	static const char *const hdr[] = { "calls",    "failed", "host time",
					   "avg",      "min",    "max",
					   "function", NULL };
	const struct dt_summary *s = c->s;
	uint32_t *ix = api_order(s);
	struct dt_table *t = dt_table_new(hdr, "rrrrrrl");
	size_t shown = c->top && (size_t)c->top < s->n_apis ? (size_t)c->top
							    : s->n_apis;
	char b[4][32];

	if (!ix || !t) {
		free(ix);
		dt_table_free(t);
		return;
	}
	dt_heading(c->out, c->format, "##", c->color,
		   "cuDNN functions by host time: %s%zu of %zu",
		   shown < s->n_apis ? "top " : "", shown, s->n_apis);
	if (!s->n_apis) {
		/* a line saying why, not a table of no rows */
		dt_para(c->out, c->format, NULL,
			"no cuDNN call was recorded\n");
		free(ix);
		dt_table_free(t);
		return;
	}
	for (size_t i = 0; i < shown; i++) {
		const struct dt_sum_api *a = &s->apis[ix[i]];
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
	free(ix);
}

/* The program's NVTX ranges by name, most GPU time first: only when the
 * traces hold some. */
static void print_ranges(const struct ctx *c)
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

/* ---------------------------------------------------------------- json */

static void json_ranges(struct dt_json *j, const struct dt_summary *s)
{
	if (!s->n_ranges)
		return;
	dt_json_key_nl(j, "ranges", 1);
	dt_json_open(j, '[', 2);
	for (size_t i = 0; i < s->n_ranges; i++) {
		const struct dt_range_stat *r = &s->ranges[i];
		dt_json_open(j, '{', -1);
		dt_json_ks(j, "name", r->name);
		dt_json_key(j, "domain");
		if (r->domain)
			dt_json_str(j, r->domain);
		else
			dt_json_null(j);
		dt_json_ku(j, "count", r->count);
		dt_json_ku(j, "open", r->open);
		dt_json_ku(j, "host_ns", r->host_ns);
		dt_json_ku(j, "calls", r->calls);
		dt_json_ku(j, "kernels", r->kernels);
		dt_json_ku(j, "gpu_ns", r->gpu_ns);
		dt_json_close(j, -1);
	}
	dt_json_close(j, -1);
}

static void json_peaks(struct dt_json *j, const struct dt_peaks *pk)
{
	dt_json_open(j, '{', -1);
	dt_json_kn(j, "bandwidth", pk->bandwidth);
	dt_json_key(j, "flops");
	dt_json_open(j, '{', -1);
	for (int m = 1; m < DT_MATH_COUNT; m++) {
		dt_json_key(j, dt_math_name(m));
		dt_json_num(j, pk->flops[m]);
	}
	dt_json_close(j, -1);
	dt_json_key(j, "source");
	dt_json_str(j, pk->source);
	dt_json_close(j, -1);
}

/* A member of an object, by type. */
static void json_files(struct dt_json *j, const struct dt_summary *s)
{
	dt_json_key_nl(j, "files", 1);
	dt_json_open(j, '[', 2);
	for (size_t i = 0; i < s->n_files; i++) {
		const struct dt_sum_file *f = &s->files[i];
		dt_json_open(j, '{', -1);
		dt_json_ks(j, "path", f->path);
		dt_json_ks(j, "host", f->host);
		dt_json_ku(j, "pid", f->pid);
		dt_json_ks(j, "rank", f->rank);
		dt_json_ks(j, "program", f->program);
		dt_json_ks(j, "cudnn", f->cudnn);
		dt_json_ks(j, "cudnn_version", f->cudnn_version);
		dt_json_ks(j, "cuda", f->cuda);
		dt_json_ks(j, "recording", f->gpu_state);
		dt_json_trace_end(j, f);
		dt_json_ku(j, "calls", f->calls);
		dt_json_ku(j, "own_calls", f->own_calls);
		dt_json_ku(j, "records", f->records);
		dt_json_ku(j, "ops", f->ops);
		dt_json_ku(j, "kernels", f->kernels);
		dt_json_ku(j, "copies", f->copies);
		dt_json_ku(j, "duration_ns",
		   f->t_end > f->t_begin ? f->t_end - f->t_begin : 0);
		dt_json_ku(j, "gpu_ns", f->gpu_ns);
		dt_json_ku(j, "cudnn_gpu_ns", f->cudnn_gpu_ns);
		dt_json_ku(j, "comm_ns", f->comm_ns);
		if (f->sampling.one_in) /* record --gpu-sample */
			dt_json_gpu_sample(j, &f->sampling);
		dt_json_close(j, -1);
	}
	dt_json_close(j, -1);
}

static void json_devices(struct dt_json *j, const struct dt_summary *s)
{
	char cc[16];

	dt_json_key_nl(j, "devices", 1);
	dt_json_open(j, '[', 2);
	for (size_t d = 0; d < s->n_devices; d++) {
		const struct dt_device *dv = &s->devices[d];
		dt_json_open(j, '{', -1);
		dt_json_ks(j, "name", dv->name);
		snprintf(cc, sizeof(cc), "%u.%u", dv->cc_major, dv->cc_minor);
		dt_json_ks(j, "cc", cc);
		dt_json_ku(j, "sms", dv->sms);
		dt_json_ku(j, "clock_khz", dv->clock_khz);
		dt_json_ku(j, "memory", dv->global_mem);
		dt_json_key(j, "peaks");
		json_peaks(j, &s->peaks[d]);
		dt_json_close(j, -1);
	}
	dt_json_close(j, -1);
	dt_json_key_nl(j, "peaks", 1);
	json_peaks(j, dt_summary_peaks(s, -1));
}

/* Version 1's "other_kernels": kernels outside cuDNN calls in its five
 * families (GEMM libraries, NCCL, ggml, ATen, XLA) and the rest (cuDNN's
 * own outside its calls and unknown ones among them). */
static void json_other_kernels(struct dt_json *j, const struct dt_summary *s)
{
	static const struct {
		const char *key;
		int lib[6]; /* ended by -1 */
	} v1[] = {
		{ "gemm", { DT_LIB_CUBLAS, DT_LIB_CUTLASS, -1 } },
		{ "nccl", { DT_LIB_NCCL, -1 } },
		{ "ggml", { DT_LIB_GGML, -1 } },
		{ "aten", { DT_LIB_ATEN, -1 } },
		{ "xla", { DT_LIB_XLA, -1 } },
		{ "other",
		  { DT_LIB_CUDNN, DT_LIB_FLASH, DT_LIB_TRITON, DT_LIB_CUB,
		    DT_LIB_OTHER, -1 } },
	};

	dt_json_key_nl(j, "other_kernels", 2);
	dt_json_open(j, '[', -1);
	for (size_t i = 0; i < sizeof(v1) / sizeof(*v1); i++) {
		uint64_t ns = 0, n = 0;
		for (const int *l = v1[i].lib; *l >= 0; l++) {
			ns += s->other_ns[*l];
			n += s->other_count[*l];
		}
		if (!n)
			continue;
		dt_json_open(j, '{', -1);
		dt_json_ks(j, "family", v1[i].key);
		dt_json_ku(j, "ns", ns);
		dt_json_ku(j, "kernels", n);
		dt_json_close(j, -1);
	}
	dt_json_close(j, -1);
}

/* All GPU time by library, each with its operation families, and by
 * operation family alone. */
static void json_libraries(struct dt_json *j, const struct dt_summary *s)
{
	uint64_t n, ns;

	dt_json_key_nl(j, "libraries", 2);
	dt_json_open(j, '[', -1);
	for (int l = 0; l < DT_LIB_COUNT; l++) {
		ns = dt_sum_lib_ns(s, l, -1, &n);
		if (!n)
			continue;
		dt_json_open(j, '{', -1);
		dt_json_ks(j, "library", dt_lib_key(l));
		dt_json_ku(j, "ns", ns);
		dt_json_ku(j, "count", n);
		dt_json_key(j, "families");
		dt_json_open(j, '[', -1);
		for (int f = 0; f < DT_OPF_COUNT; f++) {
			if (!s->lib_count[l][f])
				continue;
			dt_json_open(j, '{', -1);
			dt_json_ks(j, "family", dt_opfam_key(f));
			dt_json_ku(j, "ns", s->lib_ns[l][f]);
			dt_json_ku(j, "count", s->lib_count[l][f]);
			dt_json_close(j, -1);
		}
		dt_json_close(j, -1);
		dt_json_close(j, -1);
	}
	dt_json_close(j, -1);
	/* what told each one's library, in ns of GPU time */
	dt_json_key_nl(j, "attributed_by", 2);
	dt_json_open(j, '{', -1);
	for (int b = 0; b < DT_BY_COUNT; b++)
		dt_json_ku(j, dt_owner_by_key(b), s->by_ns[b]);
	dt_json_close(j, -1);
	dt_json_key_nl(j, "families", 2);
	dt_json_open(j, '[', -1);
	for (int f = 0; f < DT_OPF_COUNT; f++) {
		ns = dt_sum_lib_ns(s, -1, f, &n);
		if (!n)
			continue;
		dt_json_open(j, '{', -1);
		dt_json_ks(j, "family", dt_opfam_key(f));
		dt_json_ku(j, "ns", ns);
		dt_json_ku(j, "count", n);
		dt_json_close(j, -1);
	}
	dt_json_close(j, -1);
	dt_json_key_nl(j, "phases", 2);
	dt_json_open(j, '[', -1);
	for (int p = 0; p < DT_PHASE_COUNT; p++) {
		const struct dt_sum_phase *ph = &s->phases[p];
		if (!ph->count)
			continue;
		dt_json_open(j, '{', -1);
		dt_json_ks(j, "phase", dt_phase_key(p));
		dt_json_ku(j, "ns", ph->ns);
		dt_json_ku(j, "count", ph->count);
		dt_json_ku(j, "copy_ns", ph->copy_ns);
		dt_json_ku(j, "copy_bytes", ph->copy_bytes);
		dt_json_ku(j, "graph_launches", ph->steps);
		dt_json_key(j, "families");
		dt_json_open(j, '[', -1);
		for (int f = 0; f < DT_OPF_COUNT; f++) {
			if (!ph->fam_count[f])
				continue;
			dt_json_open(j, '{', -1);
			dt_json_ks(j, "family", dt_opfam_key(f));
			dt_json_ku(j, "ns", ph->fam_ns[f]);
			dt_json_ku(j, "count", ph->fam_count[f]);
			dt_json_close(j, -1);
		}
		dt_json_close(j, -1);
		dt_json_close(j, -1);
	}
	dt_json_close(j, -1);
}

static void json_gpu(struct dt_json *j, const struct dt_summary *s)
{
	dt_json_key_nl(j, "gpu", 1);
	dt_json_open(j, '{', -1);
	dt_json_ku(j, "total_ns", s->gpu_ns);
	dt_json_ku(j, "busy_ns", s->busy_ns);
	dt_json_ku(j, "span_ns", s->span_ns);
	dt_json_ku(j, "cudnn_ns", s->cudnn_ns);
	dt_json_ku(j, "copies_ns", s->copy_ns);
	dt_json_ku(j, "copies", s->copies);
	dt_json_ku(j, "copy_bytes", s->copy_bytes);
	dt_json_ku(j, "work", s->work);
	dt_json_key_nl(j, "cudnn_by_kind", 2);
	dt_json_open(j, '[', -1);
	for (int k = 0; k < DT_KIND_COUNT; k++) {
		if (!s->kind_count[k])
			continue;
		dt_json_open(j, '{', -1);
		dt_json_ks(j, "kind", dt_op_kind_key(k));
		dt_json_ku(j, "ns", s->kind_ns[k]);
		dt_json_ku(j, "count", s->kind_count[k]);
		dt_json_close(j, -1);
	}
	dt_json_close(j, -1);
	json_other_kernels(j, s);
	json_libraries(j, s);
	dt_json_close(j, -1);
	dt_json_key_nl(j, "host_cudnn_ns", 1);
	dt_json_u64(j, s->host_ns);
	dt_json_key_nl(j, "graphs", 1);
	dt_json_graphs(j, &s->graphs);
	dt_json_key_nl(j, "plans", 1);
	dt_json_plans(j, &s->plans);
	dt_json_dram(j, s);
}

static void json_problem(struct dt_json *j, const struct dt_summary *s,
			 const struct dt_sum_problem *p)
{
	struct dt_rates r;

	dt_problem_rates(s, p, &r);
	dt_json_open(j, '{', -1);
	dt_json_ks(j, "api", p->api);
	dt_json_ks(j, "kind", dt_op_kind_key(p->kind));
	dt_json_ks(j, "math", dt_math_name(p->math));
	dt_json_key(j, "tensor_cores");
	dt_json_tri(j, p->tensor_cores);
	dt_json_ks(j, "brief", p->brief);
	dt_json_ks(j, "problem", p->key);
	dt_json_ku(j, "count", p->count);
	dt_json_ku(j, "replays", p->replays);
	dt_json_ku(j, "captured", p->captured);
	dt_json_ku(j, "failed", p->failed);
	dt_json_ku(j, "gpu_ns", p->gpu_ns);
	dt_json_ku(j, "host_ns", p->host_ns);
	dt_json_ku(j, "kernels", p->kernels);
	uint64_t timed = p->count - p->unsampled;
	dt_json_ku(j, "mean_ns", timed ? p->gpu_ns / timed : 0);
	if (s->sampling.one_in) {
		double spread = dt_problem_spread(p);
		dt_json_ku(j, "timed", timed);
		dt_json_ku(j, "settled_mean_ns",
			   p->settled_count ? p->settled_ns / p->settled_count
					    : 0);
		dt_json_key(j, "spread");
		if (spread < 0)
			dt_json_null(j);
		else
			dt_json_num(j, spread);
	}
	dt_json_ku(j, "median_ns", p->median_ns);
	dt_json_ku(j, "min_ns", p->min_ns);
	dt_json_ku(j, "max_ns", p->max_ns);
	dt_json_kn(j, "share", share(p->gpu_ns, s->cudnn_ns) / 100);
	dt_json_ki(j, "engine", p->last_engine);
	dt_json_key(j, "engines");
	dt_json_open(j, '[', -1);
	for (uint32_t e = 0; e < p->n_engines; e++) {
		dt_json_open(j, '{', -1);
		dt_json_ki(j, "engine", p->engines[e].engine);
		dt_json_ks(j, "knobs", p->engines[e].knobs);
		dt_json_ku(j, "count", p->engines[e].count);
		dt_json_ku(j, "gpu_ns", p->engines[e].gpu_ns);
		dt_json_close(j, -1);
	}
	dt_json_close(j, -1);
	dt_json_ki(j, "workspace", p->workspace);
	dt_json_ks(j, "knobs", p->n_engines ? p->engines[p->last_choice].knobs : NULL);
	dt_json_ks(j, "notes", p->notes);
	dt_json_kn(j, "flops", p->flops);
	dt_json_ku(j, "bytes", p->bytes);
	dt_json_kn(j, "achieved_flops", r.flops_per_s);
	dt_json_kn(j, "achieved_bandwidth", r.bytes_per_s);
	dt_json_kn(j, "intensity", r.intensity);
	dt_json_key(j, "pct_peak_flops");
	dt_json_opt(j, r.pct_flops);
	dt_json_key(j, "pct_peak_bandwidth");
	dt_json_opt(j, r.pct_bandwidth);
	dt_json_key(j, "pct_roofline");
	dt_json_opt(j, r.roof_pct);
	dt_json_ks(j, "bound",
	   r.bound == 1   ? "compute"
	   : r.bound == 0 ? "memory"
			  : NULL);
	dt_json_key(j, "tuning");
	dt_json_open(j, '{', -1);
	dt_json_ku(j, "runs", p->tune_count);
	dt_json_ku(j, "gpu_ns", p->tune_ns);
	dt_json_ku(j, "rounds", p->tune_rounds);
	dt_json_close(j, -1);
	dt_json_ku(j, "layout_conversion_ns", p->convert_ns);
	dt_json_key(j, "per_file");
	dt_json_open(j, '[', -1);
	for (size_t f = 0; f < s->n_files; f++) {
		bool have = f < p->cap_per_file;
		dt_json_open(j, '{', -1);
		dt_json_ku(j, "gpu_ns", have ? p->per_file[f].ns : 0);
		dt_json_ku(j, "count", have ? p->per_file[f].count : 0);
		dt_json_close(j, -1);
	}
	dt_json_close(j, -1);
	dt_json_close(j, -1);
}

static void json_apis(struct dt_json *j, const struct dt_summary *s)
{
	uint32_t *ix = api_order(s);

	dt_json_key_nl(j, "apis", 1);
	dt_json_open(j, '[', 2);
	for (size_t i = 0; ix && i < s->n_apis; i++) {
		const struct dt_sum_api *a = &s->apis[ix[i]];
		dt_json_open(j, '{', -1);
		dt_json_ks(j, "name", a->name);
		dt_json_ku(j, "calls", a->calls);
		dt_json_ku(j, "failed", a->failed);
		dt_json_ku(j, "total_ns", a->ns);
		dt_json_ku(j, "avg_ns", a->calls ? a->ns / a->calls : 0);
		dt_json_ku(j, "min_ns", a->min);
		dt_json_ku(j, "max_ns", a->max);
		dt_json_close(j, -1);
	}
	dt_json_close(j, -1);
	free(ix);
}

static void json_findings(struct dt_json *j, const struct dt_summary *s)
{
	dt_json_key_nl(j, "findings", 1);
	dt_json_open(j, '[', 2);
	for (size_t i = 0; i < s->n_findings; i++) {
		const struct dt_finding *f = &s->findings[i];
		dt_json_open(j, '{', -1);
		dt_json_ks(j, "type", dt_finding_key(f->type));
		dt_json_ku(j, "cost_ns", f->cost_ns);
		dt_json_ks(j, "clock", f->host ? "host" : "gpu");
		dt_json_ks(j, "title", f->title);
		dt_json_key(j, "evidence");
		dt_json_open(j, '[', -1);
		for (const char *e = f->evidence; e && *e;) {
			size_t len = strcspn(e, "\n");
			dt_json_strn(j, e, len);
			e += len;
			if (*e)
				e++;
		}
		dt_json_close(j, -1);
		dt_json_close(j, -1);
	}
	dt_json_close(j, -1);
}

static void print_json(const struct ctx *c)
{
	const struct dt_summary *s = c->s;
	struct dt_json j;
	size_t n;

	dt_json_init(&j, c->out);
	dt_json_open(&j, '{', -1);
	dt_json_ks(&j, "schema", "dnntrace.report");
	dt_json_ku(&j, "version", DT_REPORT_SCHEMA_VERSION);
	/* every trace read to its end, nothing skipped or cut */
	dt_json_key(&j, "complete");
	dt_json_bool(&j, dt_summary_complete(s));
	json_files(&j, s);
	json_devices(&j, s);
	json_gpu(&j, s);
	dt_json_key_nl(&j, "ops", 1);
	dt_json_open(&j, '[', 2);
	uint32_t *ix = problem_order(c, &n);
	for (size_t i = 0; ix && i < n; i++)
		json_problem(&j, s, &s->problems[ix[i]]);
	free(ix);
	dt_json_close(&j, -1);
	json_apis(&j, s);
	json_ranges(&j, s);
	json_findings(&j, s);
	dt_json_key_nl(&j, "fusion", 1);
	dt_fusion_json(&j, s);
	dt_json_close(&j, -1);
	fputc('\n', c->out);
}

/* ---------------------------------------------------------------- main */

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
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct dt_summary_opts so = { .fusion = true };
	struct ctx c = { .top = 15, .sort = SORT_GPU, .format = DT_TEXT };
	const char *output = NULL;
	struct dt_output out;
	bool force = false;
	int ch;

	optind = 1;
	while ((ch = dt_getopt("report", argc, argv, "ho:", opts)) != -1) {
		switch (ch) {
		case 't':
			if (dt_parse_top("report", optarg, &c.top))
				return EXIT_USAGE;
			break;
		case 's': {
			int k = 0;
			while (sort_names[k] && strcmp(sort_names[k], optarg))
				k++;
			if (!sort_names[k])
				return dt_usage_error(
					"report",
					"--sort takes gpu, count, mean, max, "
					"host or roof");
			c.sort = (enum sort_key)k;
			break;
		}
		case 'f':
			if (dt_parse_format("report", optarg, DT_FORMATS_ALL,
					    &c.format))
				return EXIT_USAGE;
			break;
		case 'o':
			output = optarg;
			break;
		case 'O':
			force = true;
			break;
		case 'b':
			if (dt_parse_rate_in("report", "--peak-bandwidth",
					     optarg, &dt_bandwidth_range,
					     &so.peak_bandwidth))
				return EXIT_USAGE;
			break;
		case 'F':
			if (parse_peak_flops(optarg, &so) < 0)
				return dt_usage_error(
					"report",
					"--peak-flops takes FLOP/s from 1G to "
					"1000P, like 989T, or TYPE=VALUE "
					"pairs, like bf16=989T,fp32=67T");
			break;
		case 'w':
			c.wide = true;
			break;
		case 'N':
			so.fusion = false;
			break;
		case 'r':
			if (strcmp(optarg, "all"))
				return dt_usage_error("report",
						      "--ranks takes all");
			c.all_ranks = true;
			break;
		case 'R':
			so.range = optarg;
			break;
		case 'h':
			return report_help(stdout), 0;
		default:
			return EXIT_USAGE;
		}
	}
	if (optind >= argc)
		return dt_usage_error("report",
				      "expected a trace file or a folder");

	int rc = 0;
	struct dt_summary *s =
		dt_load_summary(argv + optind, argc - optind, &so, &rc);
	if (!s)
		return rc;

	c.s = s;
	if (!(c.out = dt_open_output(&out, output, force))) {
		dt_summary_free(s);
		return EXIT_USAGE;
	}
	c.color = c.format == DT_TEXT && dt_colors(!out.path);
	if (c.format == DT_JSON) {
		print_json(&c);
	} else {
		if (c.format == DT_HTML)
			dt_html_begin(c.out, "dnntrace report");
		print_identity(&c);
		if (s->n_files > 1)
			dt_report_traces(c.out, s, c.format, c.color,
					 c.all_ranks);
		print_time(&c);
		print_ranges(&c);
		dt_report_libraries(c.out, s, c.format, c.color);
		dt_report_phases(c.out, s, c.format, c.color);
		dt_report_dram(c.out, s, c.format, c.color, c.top);
		print_findings(&c);
		if (s->fusion)
			dt_fusion_text(c.out, s, c.format, c.color, c.top);
		print_ops(&c);
		print_apis(&c);
		if (c.format == DT_HTML)
			dt_html_end(c.out);
	}
	if (dt_close_output(&out, true))
		rc = EXIT_USAGE;
	dt_summary_free(s);
	return rc;
}
