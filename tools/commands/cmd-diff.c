/*
 * cmd-diff.c - `dnntrace diff BASE NEW`: what changed between two runs, and
 * a gate for CI. The comparison is the analyzer's (dt_diff_new()); this file
 * lays it out as text, Markdown (for a job summary or a pull-request
 * comment), one HTML page (the runs' bars side by side, changes
 * highlighted) or JSON (schema dnntrace.diff, analyzer/DIFF.md).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dt-analyzer.h"
#include "dt-steps.h"
#include "tools.h"
#include "diff.h"

const char *const diff_gate_names[] = { "none", "regression", "engine-change",
					"any" };
const char *const diff_incomplete_names[] = { "fail", "error", "allow" };

static void diff_help(FILE *f)
{
	fprintf(f,
		"usage: dnntrace diff [options] BASE NEW\n\n"
		"Compares two runs. The whole program per step of each run's "
		"steady state\n(steps found from what repeats in the trace): "
		"step time, GPU time, and GPU\ntime by library, operation "
		"family and kernel. cuDNN's operations, matched\nby what "
		"they computed (function, shapes, types, layout, parameters), "
		"not by\ncall order: executions, median GPU time per "
		"execution of the engine it\nsettled on, the change, and "
		"whether it is within the spread of the\nexecutions; engine, "
		"knob and workspace changes; operations added and\nremoved; "
		"totals. BASE and NEW are trace files or folders of them (all "
		"ranks\nof a job).\n\n"
		"  --threshold P     relative change that counts (default "
		"5%%)\n"
		"  --min-time T      absolute change per step that counts "
		"(default 10us; for a\n"
		"                    library, family or kernel at least 1%% "
		"of the GPU time\n"
		"                    per step)\n"
		"                    a change counts when it passes both, "
		"and a step time\n"
		"                    beyond the runs' step-to-step spread\n"
		"  --fail-on G       exit 1 when: regression (an operation, "
		"the step time,\n"
		"                    GPU time, a library, family or kernel "
		"got slower),\n"
		"                    engine-change, any (slower, faster, "
		"added, removed,\n"
		"                    engine or workspace changed); default: "
		"never\n"
		"  --top N           rows per section (default 20, 0 for "
		"all)\n"
		"  --format F        text (default), markdown, html (one page, "
		"the runs side\n"
		"                    by side) or json (schema dnntrace.diff, "
		"version %d)\n"
		"  --incomplete H    what an incomplete trace (cut short, "
		"damaged, records\n"
		"                    lost or dropped) does to the gate:\n"
		"                    fail (default: the gate trips), error "
		"(exit 2) or\n"
		"                    allow (the gate judges what was read)\n"
		"  -o, --output FILE write to FILE (\"-\": standard output)\n"
		"  --junit FILE      also write the gate's verdicts as JUnit "
		"XML, a test case\n"
		"                    per input's completeness, quantity per "
		"step, operation\n"
		"                    and total (\"-\": standard output)\n"
		"  --force           replace FILE (and the --junit file) when "
		"it exists\n"
		"  --range NAME      compare only the work inside the "
		"program's NVTX ranges\n"
		"                    NAME (every one; a shell pattern: "
		"'layer*')\n"
		"  --with-warmup     the whole runs, start-up kept in (steps: "
		"steady state's)\n"
		"  -h, --help        show this help\n\n"
		"Exit status: 0, or 1 when the --fail-on gate trips; 2 for bad "
		"usage,\nunreadable input, output that could not be written, "
		"or an incomplete input\nwith --incomplete error.\n",
		DIFF_SCHEMA_VERSION);
}

/* "10us", "1.5ms", "500ns", "2s", "10000" (ns) -> ns; -1 when malformed. */
static double parse_time(const char *s)
{
	char *end;
	double v = strtod(s, &end);

	if (end == s || !isfinite(v) || v < 0)
		return -1;
	if (!*end || !strcmp(end, "ns"))
		return v;
	if (!strcmp(end, "us"))
		return v * 1e3;
	if (!strcmp(end, "ms"))
		return v * 1e6;
	if (!strcmp(end, "s"))
		return v * 1e9;
	return -1;
}

/* "5%", "5", "0.05" (a fraction when below 1) -> 0.05; -1 malformed. */
static double parse_fraction(const char *s)
{
	char *end;
	double v = strtod(s, &end);

	if (end == s || !isfinite(v) || v < 0)
		return -1;
	if (!strcmp(end, "%"))
		return v / 100;
	if (*end)
		return -1;
	return v < 1 ? v : v / 100;
}

/* A trace of either run is incomplete. */
bool diff_incomplete(const struct dt_diff *d)
{
	return !dt_summary_complete(d->base) || !dt_summary_complete(d->next);
}

/* A verdict only --fail-on any trips on, in words; NULL for the others. */
static const char *changed_word(enum dt_verdict v)
{
	return v == DT_FASTER    ? "faster"
	       : v == DT_ADDED   ? "added"
	       : v == DT_REMOVED ? "removed"
				 : NULL;
}

/* What of one operation trips gate g, in words; NULL when nothing. */
const char *diff_op_trips(const struct dt_diff_op *o, enum gate g)
{
	if (g == GATE_NONE)
		return NULL;
	if (o->verdict == DT_SLOWER && g != GATE_ENGINE)
		return "slower";
	if (o->engine_changed && g != GATE_REGRESSION)
		return "engine changed";
	if (g != GATE_ANY)
		return NULL;
	const char *w = changed_word(o->verdict);
	return w ? w : o->workspace_changed ? "workspace changed" : NULL;
}

/* What of a quantity per step trips gate g; NULL when nothing. */
const char *diff_qty_trips(const struct dt_diff_qty *q, enum gate g)
{
	if (g == GATE_NONE || g == GATE_ENGINE)
		return NULL;
	if (q->verdict == DT_SLOWER)
		return "slower";
	return g == GATE_ANY ? changed_word(q->verdict) : NULL;
}

bool diff_gate_tripped(const struct dt_diff *d, enum gate g,
		       enum incomplete inc)
{
	if (g != GATE_NONE && inc == INC_FAIL && diff_incomplete(d))
		return true;
	for (size_t i = 0; i < d->n_ops; i++)
		if (diff_op_trips(&d->ops[i], g))
			return true;
	for (size_t i = 0; i < d->n_qty; i++)
		if (diff_qty_trips(&d->qty[i], g))
			return true;
	return false;
}

/* ------------------------------------------------------------- words */

const char *diff_engine_str(const struct dt_diff_op *o,
			    const struct dt_diff_side *s, char *buf,
			    size_t size)
{
	const char *kind =
		strcmp(o->api, "cudnnBackendExecute") ? "algo" : "eng";

	if (!s->present)
		snprintf(buf, size, "-");
	else if (s->engine < 0)
		snprintf(buf, size, "?");
	else
		snprintf(buf, size, "%s%" PRId64, kind, s->engine);
	return buf;
}

static const char *change_str(double change, char *buf, size_t size)
{
	snprintf(buf, size, "%+.1f%%", 100 * change);
	return buf;
}

const char *diff_delta_str(int64_t ns, char *buf, size_t size)
{
	char t[32];
	dt_fmt_ns((uint64_t)(ns < 0 ? -ns : ns), t, sizeof(t));
	snprintf(buf, size, "%s%s", ns < 0 ? "-" : "+", t);
	return buf;
}

static const char *cudnn_of(const struct dt_sum_file *f)
{
	return f->cudnn_version ? f->cudnn_version : f->cudnn ? f->cudnn : "?";
}

/* One run in a line: traces, program, GPU, cuDNN. */
static void run_line(const struct diff_ctx *c, const char *label,
		     const char *name, const struct dt_summary *s)
{
	const struct dt_sum_file *f = &s->files[0];

	dt_para(c->out, c->format, NULL,
		"%s%-5s %s: %zu trace%s, %s; %s; cuDNN %s%s%s\n",
		c->format == DT_MARKDOWN ? "- " : "", label, name, s->n_files,
		s->n_files == 1 ? "" : "s", f->program ? f->program : "?",
		s->n_devices ? s->devices[0].name : "GPU unknown",
		f->cudnn_version ? f->cudnn_version
		: f->cudnn       ? f->cudnn
				 : "?",
		f->cuda ? "; CUDA " : "", f->cuda ? f->cuda : "");
}

/* A run recorded with sampled GPU activity: what its GPU numbers are. */
static void sampled_line(const struct diff_ctx *c, const char *label,
			 const struct dt_summary *s)
{
	const struct dt_gpu_sampling *sm = &s->sampling;
	char t[32];

	if (!sm->one_in)
		return;
	dt_para(c->out, c->format, "warn",
		"%ssampled: %s recorded GPU activity in %" PRIu64
		" window%s (%s, one in %u): its GPU totals are the windows', "
		"not comparable, and its medians come from the %" PRIu64
		" of %" PRIu64 " executions timed\n",
		c->format == DT_MARKDOWN ? "- " : "", label, sm->windows,
		sm->windows == 1 ? "" : "s",
		dt_fmt_ns(sm->window_ns, t, sizeof(t)), sm->one_in,
		s->ops - sm->unsampled_ops, s->ops);
}

static bool sampled(const struct dt_diff *d)
{
	return d->base->sampling.one_in || d->next->sampling.one_in;
}

uint64_t diff_other_ns(const struct dt_summary *s)
{
	uint64_t n = 0;
	for (int l = 0; l < DT_LIB_COUNT; l++)
		n += s->other_ns[l];
	return n;
}

/* A row of the totals; "sampled" for a GPU total when a run's GPU
 * activity was recorded in windows only. */
static void total_row(struct dt_table *t, const char *what, uint64_t b,
		      uint64_t n, bool time, bool windows_only)
{
	char x[32], y[32];

	dt_table_cell(t, "%s", what);
	if (time) {
		dt_table_cell(t, "%s", dt_fmt_ns(b, x, sizeof(x)));
		dt_table_cell(t, "%s", dt_fmt_ns(n, y, sizeof(y)));
	} else {
		dt_table_cell(t, "%" PRIu64, b);
		dt_table_cell(t, "%" PRIu64, n);
	}
	if (windows_only)
		dt_table_cell(t, "%s", "sampled");
	else if (b)
		dt_table_cell(t, "%+.1f%%",
			      100.0 * ((double)n - (double)b) / (double)b);
	else
		dt_table_cell(t, "%s", n ? "new" : "-");
}

/* The runs side by side, for HTML: a pair of bars per row, the base's
 * filled and tagged "base", the new run's outlined and tagged "new". */
struct pair {
	char label[64];
	uint64_t ns[2];
	char note[24]; /* after the new run's value: the change */
};

static void html_pairs(const struct diff_ctx *c, const char *title,
		       const char *desc, const struct pair *p, size_t n)
{
	struct dt_svg_bar *b = calloc(2 * n + 1, sizeof(*b));
	char(*text)[64] = calloc(2 * n + 1, sizeof(*text));

	if (b && text && n) {
		for (size_t i = 0; i < 2 * n; i++) {
			const struct pair *q = &p[i / 2];
			char t[32];
			int k = (int)(i % 2);
			dt_fmt_ns(q->ns[k], t, sizeof(t));
			snprintf(text[i], sizeof(text[0]), "%s%s%s", t,
				 k && q->note[0] ? " " : "", k ? q->note : "");
			b[i] = (struct dt_svg_bar){ .label =
							    k ? NULL : q->label,
						    .tag = k ? "new" : "base",
						    .text = text[i],
						    .value = (double)q->ns[k],
						    .series = k };
		}
		fputs("<figure>\n", c->out);
		dt_svg_bars(c->out, title, desc, b, 2 * n);
		fputs("<figcaption>Base filled, new outlined: the table's "
		      "numbers, drawn.</figcaption>\n</figure>\n",
		      c->out);
	}
	free(b);
	free(text);
}

static void pair_change(struct pair *p)
{
	if (p->ns[0])
		snprintf(p->note, sizeof(p->note), "(%+.1f%%)",
			 100.0 * ((double)p->ns[1] - (double)p->ns[0]) /
				 (double)p->ns[0]);
}

/* Both runs wrapped cuDNN alone: totals say cuDNN, as they always have;
 * else they are of every library's calls. */
static bool cudnn_only(const struct dt_diff *d)
{
	return dt_sum_cudnn_only(d->base) && dt_sum_cudnn_only(d->next);
}

static const char *callers(const struct dt_diff *d)
{
	return cudnn_only(d) ? "cuDNN" : "the libraries'";
}

/* GPU time of the ops of those calls. */
static uint64_t ops_ns(const struct dt_diff *d, const struct dt_summary *s)
{
	return cudnn_only(d) ? s->cudnn_ns : dt_sum_share_ns(s);
}

static void html_totals(const struct diff_ctx *c)
{
	const struct dt_summary *b = c->d->base, *n = c->d->next;
	const char *who = callers(c->d);
	struct pair p[] = {
		{ "", { ops_ns(c->d, b), ops_ns(c->d, n) } },
		{ "GPU time in other kernels",
		  { diff_other_ns(b), diff_other_ns(n) } },
		{ "", { b->copy_ns, n->copy_ns } },
	};

	snprintf(p[0].label, sizeof(p[0].label), "GPU time in %s operations",
		 who);
	snprintf(p[2].label, sizeof(p[2].label),
		 "memory copies and sets outside %s calls", who);

	for (size_t i = 0; i < sizeof(p) / sizeof(p[0]); i++)
		pair_change(&p[i]);
	html_pairs(c, "GPU time, base and new",
		   "For each part of the GPU time, two bars: the base run's "
		   "and the new "
		   "run's, with their values and the change written beside "
		   "them.",
		   p, sizeof(p) / sizeof(p[0]));
}

static void print_totals(const struct diff_ctx *c)
{
	static const char *const hdr[] = { "", "base", "new", "change", NULL };
	const struct dt_summary *b = c->d->base, *n = c->d->next;
	struct dt_table *t = dt_table_new(hdr, "lrrr");

	if (!t)
		return;
	dt_heading(c->out, c->format, "###", c->color, "Totals");
	bool w = sampled(c->d);
	const char *who = callers(c->d);
	char what[96];
	snprintf(what, sizeof(what), "GPU time in %s operations", who);
	total_row(t, what, ops_ns(c->d, b), ops_ns(c->d, n), true, w);
	total_row(t, "GPU time in other kernels", diff_other_ns(b),
		  diff_other_ns(n), true, w);
	snprintf(what, sizeof(what), "memory copies and sets outside %s calls",
		 who);
	total_row(t, what, b->copy_ns, n->copy_ns, true, w);
	snprintf(what, sizeof(what), "host time inside %s calls", who);
	total_row(t, what, b->host_ns, n->host_ns, true, false);
	snprintf(what, sizeof(what), "%s calls", who);
	total_row(t, what, b->host_calls, n->host_calls, false, false);
	snprintf(what, sizeof(what), "%s op executions", who);
	total_row(t, what, dt_sum_ops(b), dt_sum_ops(n), false, false);
	dt_table_print(t, c->out, c->format, c->color);
	dt_table_free(t);
	if (c->format == DT_HTML)
		html_totals(c);
}

/* ---------------------------------------------------------- per step */

#define NAME_WIDTH 64

static const char *const qty_kinds[] = {
	[DT_Q_STEP] = "",
	[DT_Q_GPU] = "",
	[DT_Q_LIBRARY] = "library ",
	[DT_Q_FAMILY] = "family ",
	[DT_Q_KERNEL] = "kernel ",
};

/* A run's steps, in a line. */
static void steps_line(const struct diff_ctx *c, const char *label,
		       const struct dt_summary *s)
{
	char text[1024];

	if (!s->steps)
		return;
	dt_steps_text(s->steps, text, sizeof(text));
	dt_para(c->out, c->format, NULL, "%s%s steps: %s\n",
		c->format == DT_MARKDOWN ? "- " : "", label, text);
	if (dt_sum_startup_text(s, text, sizeof(text)))
		dt_para(c->out, c->format, NULL, "%s%s start-up: %s\n",
			c->format == DT_MARKDOWN ? "- " : "", label, text);
}

static void qty_row(const struct diff_ctx *c, struct dt_table *t,
		    const struct dt_diff_qty *q)
{
	char x[32], y[32], z[32];

	/* a kernel's whole name is in the JSON and JUnit outputs */
	if (strlen(q->name) > NAME_WIDTH)
		dt_table_cell(t, "%s%.*s...", qty_kinds[q->kind],
			      NAME_WIDTH - 3, q->name);
	else
		dt_table_cell(t, "%s%s", qty_kinds[q->kind], q->name);
	dt_table_cell(t, "%s",
		      q->base > 0 ? dt_fmt_ns((uint64_t)q->base, x, sizeof(x))
				  : "-");
	dt_table_cell(t, "%s",
		      q->next > 0 ? dt_fmt_ns((uint64_t)q->next, y, sizeof(y))
				  : "-");
	if (q->base > 0 && q->next > 0)
		dt_table_cell(t, "%+.1f%%", 100 * q->change);
	else
		dt_table_cell(t, "%s", "-");
	dt_table_cell(t, "%s", dt_fmt_ns((uint64_t)q->noise_ns, z, sizeof(z)));
	dt_table_cell(t, "%s", dt_verdict_key(q->verdict));
	(void)c;
}

/* The whole program per step: step time and GPU time always, the parts
 * of the GPU time that changed. */
static void print_steps(const struct diff_ctx *c)
{
	static const char *const hdr[] = { "per step", "base",  "new",
					   "change",   "noise", "verdict",
					   NULL };
	const struct dt_diff *d = c->d;

	dt_heading(c->out, c->format, "###", c->color, "Steps");
	steps_line(c, "base", d->base);
	steps_line(c, "new", d->next);
	if (!d->n_qty) {
		dt_para(c->out, c->format, NULL, "%snot compared: %s\n",
			c->format == DT_MARKDOWN ? "- " : "",
			sampled(d) ? "GPU activity was recorded in windows "
				     "only"
				   : "one run has a repeating structure, the "
				     "other not");
		return;
	}
	struct dt_table *t = dt_table_new(hdr, "lrrrrl");
	if (!t)
		return;
	if (c->format == DT_MARKDOWN)
		fputc('\n', c->out); /* a table after a list needs a line */
	long shown = 0;
	for (size_t i = 0; i < d->n_qty; i++) {
		const struct dt_diff_qty *q = &d->qty[i];
		if (q->kind > DT_Q_GPU &&
		    (q->verdict == DT_SAME || (c->top && shown >= c->top)))
			continue;
		shown += q->kind > DT_Q_GPU;
		qty_row(c, t, q);
	}
	dt_table_print(t, c->out, c->format, c->color);
	dt_table_free(t);
}

/* Functions whose call counts differ. */
static void print_calls(const struct diff_ctx *c)
{
	static const char *const hdr[] = { "base calls", "new calls",
					   "function", NULL };
	const struct dt_summary *b = c->d->base, *n = c->d->next;
	struct dt_table *t = dt_table_new(hdr, "rrl");
	long shown = 0, more = 0;

	if (!t)
		return;
	for (int run = 0; run < 2; run++) {
		const struct dt_summary *s = run ? n : b, *o = run ? b : n;
		for (size_t i = 0; i < s->n_apis; i++) {
			uint64_t other = 0;
			bool found = false;
			for (size_t k = 0; k < o->n_apis && !found; k++)
				if (!strcmp(o->apis[k].name, s->apis[i].name)) {
					other = o->apis[k].calls;
					found = true;
				}
			/* each function once: from the base, or new */
			if ((run && found) || other == s->apis[i].calls)
				continue;
			if (c->top && shown >= c->top) {
				more++;
				continue;
			}
			dt_table_cell(t, "%" PRIu64,
				      run ? 0 : s->apis[i].calls);
			dt_table_cell(t, "%" PRIu64,
				      run ? s->apis[i].calls : other);
			dt_table_cell(t, "%s", s->apis[i].name);
			shown++;
		}
	}
	if (shown) {
		dt_heading(c->out, c->format, "###", c->color,
			   "Functions called a different number of times");
		dt_table_print(t, c->out, c->format, c->color);
		if (more)
			dt_para(c->out, c->format, NULL,
				"(%ld more; --top 0 lists all)\n", more);
	}
	dt_table_free(t);
}

static bool is_change(const struct dt_diff_op *o)
{
	return o->verdict == DT_SLOWER || o->verdict == DT_FASTER ||
	       o->verdict == DT_NOISE;
}

static void operation_cell(const struct diff_ctx *c, struct dt_table *t,
			   const struct dt_diff_op *o)
{
	int max = c->format == DT_MARKDOWN ? 80 : 110;
	dt_table_cell(t, "%s %.*s%s", dt_op_kind_key(o->kind), max, o->brief,
		      (int)strlen(o->brief) > max ? "..." : "");
}

/* The changed operations' medians, base and new, as the table shows
 * them (the first --top). */
static void html_changes(const struct diff_ctx *c)
{
	const struct dt_diff *d = c->d;
	struct pair *p = calloc(d->n_ops + 1, sizeof(*p));
	size_t n = 0;

	if (!p)
		return;
	for (size_t i = 0; i < d->n_ops; i++) {
		const struct dt_diff_op *o = &d->ops[i];
		if (!is_change(o) || (c->top && n >= (size_t)c->top))
			continue;
		snprintf(p[n].label, sizeof(p[n].label), "%s %s %.36s",
			 o->verdict == DT_SLOWER   ? "SLOWER"
			 : o->verdict == DT_FASTER ? "faster"
						   : "noise",
			 dt_op_kind_key(o->kind), o->brief);
		p[n].ns[0] = o->base.median_ns;
		p[n].ns[1] = o->next.median_ns;
		pair_change(&p[n]);
		n++;
	}
	html_pairs(c, "Median GPU time per execution, base and new",
		   "For each operation whose time changed, its verdict and "
		   "two bars: the base run's median and the new run's, with "
		   "their values and the change written beside them.",
		   p, n);
	free(p);
}

static void print_changes(const struct diff_ctx *c)
{
	static const char *const hdr[] = { "",           "base median",
					   "new median", "change",
					   "per exec",   "base range",
					   "calls",      "engine",
					   "operation",  NULL };
	const struct dt_diff *d = c->d;
	struct dt_table *t = dt_table_new(hdr, "lrrrrrrll");
	long shown = 0, more = 0;

	if (!t)
		return;
	for (size_t i = 0; i < d->n_ops; i++) {
		const struct dt_diff_op *o = &d->ops[i];
		char b[6][40];
		if (!is_change(o))
			continue;
		if (c->top && shown >= c->top) {
			more++;
			continue;
		}
		dt_table_row_class(t, o->verdict == DT_SLOWER   ? "slower"
				      : o->verdict == DT_FASTER ? "faster"
								: "noise");
		dt_table_cell(t, "%s",
			      o->verdict == DT_SLOWER   ? "SLOWER"
			      : o->verdict == DT_FASTER ? "faster"
							: "noise");
		dt_table_cell(t, "%s",
			      dt_fmt_ns(o->base.median_ns, b[0], sizeof(b[0])));
		dt_table_cell(t, "%s",
			      dt_fmt_ns(o->next.median_ns, b[1], sizeof(b[1])));
		dt_table_cell(t, "%s",
			      change_str(o->change, b[2], sizeof(b[2])));
		dt_table_cell(t, "%s",
			      diff_delta_str(o->delta_ns, b[3], sizeof(b[3])));
		dt_table_cell(t, "%s..%s",
			      dt_fmt_ns(o->base.min_ns, b[4], sizeof(b[4])),
			      dt_fmt_ns(o->base.max_ns, b[5], sizeof(b[5])));
		if (sampled(d))
			dt_table_cell(t,
				      "%" PRIu64 "/%" PRIu64 " (timed %" PRIu64
				      "/%" PRIu64 ")",
				      o->base.count, o->next.count,
				      o->base.timed, o->next.timed);
		else
			dt_table_cell(t, "%" PRIu64 "/%" PRIu64, o->base.count,
				      o->next.count);
		char e1[24], e2[24];
		diff_engine_str(o, &o->base, e1, sizeof(e1));
		diff_engine_str(o, &o->next, e2, sizeof(e2));
		if (o->engine_changed)
			dt_table_cell(t, "%s->%s", e1, e2);
		else
			dt_table_cell(t, "%s", e2);
		operation_cell(c, t, o);
		shown++;
	}
	char m[32];
	dt_heading(c->out, c->format, "###", c->color,
		   "Operations whose GPU time changed (median per execution; "
		   "counted from %.0f%% and %s per step)",
		   100 * d->opts.threshold,
		   dt_fmt_ns(d->opts.min_ns, m, sizeof(m)));
	if (!shown)
		dt_para(c->out, c->format, NULL, "none\n");
	else
		dt_table_print(t, c->out, c->format, c->color);
	if (more)
		dt_para(c->out, c->format, NULL,
			"(%ld more; --top 0 lists all)\n", more);
	if (d->noise)
		dt_para(c->out, c->format, NULL,
			"%snoise: past the thresholds, but each run's median "
			"lies within the other's\nrange of executions\n",
			c->format == DT_MARKDOWN ? "\n" : "");
	dt_table_free(t);
	if (c->format == DT_HTML)
		html_changes(c);
}

static void print_engines(const struct diff_ctx *c)
{
	const struct dt_diff *d = c->d;
	long shown = 0;

	if (!d->engine_changes && !d->workspace_changes)
		return;
	dt_heading(c->out, c->format, "###", c->color,
		   "Engine and workspace changes");
	for (size_t i = 0; i < d->n_ops; i++) {
		const struct dt_diff_op *o = &d->ops[i];
		char e1[24], e2[24], w1[32], w2[32];
		if (!o->engine_changed && !o->workspace_changed)
			continue;
		if (c->top && shown++ >= c->top)
			break;
		dt_para(c->out, c->format, NULL, "%s%s %.100s\n",
			c->format == DT_MARKDOWN ? "- " : "  ",
			dt_op_kind_key(o->kind), o->brief);
		if (o->engine_changed)
			dt_para(c->out, c->format, "sub",
				"%sengine %s%s%s%s -> %s%s%s%s\n",
				c->format == DT_MARKDOWN ? "  - " : "      ",
				diff_engine_str(o, &o->base, e1, sizeof(e1)),
				o->base.knobs ? " {" : "",
				o->base.knobs ? o->base.knobs : "",
				o->base.knobs ? "}" : "",
				diff_engine_str(o, &o->next, e2, sizeof(e2)),
				o->next.knobs ? " {" : "",
				o->next.knobs ? o->next.knobs : "",
				o->next.knobs ? "}" : "");
		if (o->workspace_changed)
			dt_para(c->out, c->format, "sub",
				"%sworkspace %s -> %s\n",
				c->format == DT_MARKDOWN ? "  - " : "      ",
				dt_fmt_bytes((uint64_t)o->base.workspace, w1,
					     sizeof(w1)),
				dt_fmt_bytes((uint64_t)o->next.workspace, w2,
					     sizeof(w2)));
	}
}

/* A replay's engine and its time: "eng7 {TILE_SIZE=2} 12.3 us". */
static const char *replayed_str(const struct dt_diff_replay *r, int64_t engine,
				const char *knobs, uint64_t ns, char *buf,
				size_t size)
{
	char t[32];

	if (engine < 0) {
		snprintf(buf, size, "-");
		return buf;
	}
	snprintf(buf, size, "%s%" PRId64 "%s%s%s %s",
		 r->legacy ? "algo" : "eng", engine, knobs ? " {" : "",
		 knobs ? knobs : "", knobs ? "}" : "",
		 ns ? dt_fmt_ns(ns, t, sizeof(t)) : "untimed");
	return buf;
}

/* What the replays beside both runs measured: the recorded engine's
 * replayed time and the best engine, each run's. */
static void print_replays(const struct diff_ctx *c)
{
	static const char *const hdr[] = { "base: recorded", "base: best",
					   "new: recorded",  "new: best",
					   "change",         "verdict",
					   "problem",        NULL };
	const struct dt_diff *d = c->d;
	struct dt_table *t;
	long shown = 0;

	if (!d->n_replays || !(t = dt_table_new(hdr, "lllllll")))
		return;
	for (size_t i = 0; i < d->n_replays; i++) {
		const struct dt_diff_replay *r = &d->replays[i];
		const struct dt_diff_replay_side *s[2] = { &r->base, &r->next };
		char b[4][192], ch[24];
		int max = c->format == DT_MARKDOWN ? 60 : 80;
		const char *what = r->brief ? r->brief : r->key;
		if (c->top && shown++ >= c->top)
			break;
		if (r->verdict == DT_SLOWER || r->verdict == DT_FASTER)
			dt_table_row_class(t, dt_verdict_key(r->verdict));
		for (int k = 0; k < 2; k++) {
			/* a run without the problem: no engine */
			bool in = s[k]->present;
			dt_table_cell(t, "%s",
				      replayed_str(r, in ? s[k]->engine : -1,
						   s[k]->knobs, s[k]->median_ns,
						   b[2 * k], sizeof(b[0])));
			dt_table_cell(t, "%s",
				      replayed_str(r, in ? s[k]->best : -1,
						   s[k]->best_knobs,
						   s[k]->best_ns, b[2 * k + 1],
						   sizeof(b[0])));
		}
		dt_table_cell(t, "%s",
			      r->base.present && r->next.present &&
					      r->base.median_ns &&
					      r->next.median_ns
				      ? change_str(r->change, ch, sizeof(ch))
				      : "-");
		dt_table_cell(t, "%s%s", dt_verdict_key(r->verdict),
			      r->best_changed ? ", best changed" : "");
		dt_table_cell(t, "%.*s%s", max, what,
			      (int)strlen(what) > max ? "..." : "");
	}
	dt_heading(c->out, c->format, "###", c->color,
		   "Replays: %zu problem%s, %zu recorded engine%s moved, "
		   "%zu best engine%s changed",
		   d->n_replays, d->n_replays == 1 ? "" : "s", d->replay_moves,
		   d->replay_moves == 1 ? "" : "s", d->best_changes,
		   d->best_changes == 1 ? "" : "s");
	dt_table_print(t, c->out, c->format, c->color);
	dt_table_free(t);
}

static void print_added(const struct diff_ctx *c, enum dt_verdict v)
{
	static const char *const hdr[] = { "calls", "GPU time", "median",
					   "operation", NULL };
	const struct dt_diff *d = c->d;
	struct dt_table *t = dt_table_new(hdr, "rrrl");
	long shown = 0, more = 0;
	size_t n = v == DT_ADDED ? d->added : d->removed;

	if (!t)
		return;
	if (!n) {
		dt_table_free(t);
		return;
	}
	for (size_t i = 0; i < d->n_ops; i++) {
		const struct dt_diff_op *o = &d->ops[i];
		const struct dt_diff_side *s =
			v == DT_ADDED ? &o->next : &o->base;
		char b[2][32];
		if (o->verdict != v)
			continue;
		if (c->top && shown >= c->top) {
			more++;
			continue;
		}
		dt_table_row_class(t, v == DT_ADDED ? "added" : "removed");
		dt_table_cell(t, "%" PRIu64, s->count);
		dt_table_cell(t, "%s",
			      dt_fmt_ns(s->gpu_ns, b[0], sizeof(b[0])));
		dt_table_cell(t, "%s",
			      dt_fmt_ns(s->median_ns, b[1], sizeof(b[1])));
		operation_cell(c, t, o);
		shown++;
	}
	dt_heading(c->out, c->format, "###", c->color,
		   "%s: %zu operation%s only in %s",
		   v == DT_ADDED ? "Added" : "Removed", n, n == 1 ? "" : "s",
		   v == DT_ADDED ? "NEW" : "BASE");
	dt_table_print(t, c->out, c->format, c->color);
	if (more)
		dt_para(c->out, c->format, NULL,
			"(%ld more; --top 0 lists all)\n", more);
	dt_table_free(t);
}

static void print_verdict(const struct diff_ctx *c, enum gate g)
{
	const struct dt_diff *d = c->d;
	bool tripped = diff_gate_tripped(d, g, c->incomplete);
	bool partial = diff_incomplete(d);

	dt_heading(c->out, c->format, "###", c->color, "Verdict");
	dt_para(c->out, c->format, NULL,
		"%zu slower, %zu faster, %zu within noise, %zu engine "
		"change%s, %zu workspace change%s, %zu added, %zu removed "
		"(of %zu operations)\n",
		d->slower, d->faster, d->noise, d->engine_changes,
		d->engine_changes == 1 ? "" : "s", d->workspace_changes,
		d->workspace_changes == 1 ? "" : "s", d->added, d->removed,
		d->n_ops);
	if (d->n_qty)
		dt_para(c->out, c->format, NULL,
			"%sper step: %zu slower, %zu faster, %zu within noise "
			"(of %zu quantities: step time, GPU time, libraries, "
			"families, kernels)\n",
			c->format == DT_MARKDOWN ? "\n" : "", d->qty_slower,
			d->qty_faster, d->qty_noise, d->n_qty);
	if (g != GATE_NONE && partial && c->incomplete == INC_ERROR)
		dt_para(c->out, c->format, "failed",
			"%sgate --fail-on %s: NOT JUDGED%s (exit status 2): a "
			"trace is incomplete\n",
			c->format == DT_MARKDOWN ? "\n**" : "",
			diff_gate_names[g],
			c->format == DT_MARKDOWN ? "**" : "");
	else if (g != GATE_NONE)
		dt_para(c->out, c->format, tripped ? "failed" : "passed",
			"%sgate --fail-on %s: %s%s%s%s\n",
			c->format == DT_MARKDOWN ? "\n**" : "",
			diff_gate_names[g], tripped ? "FAILED" : "passed",
			c->format == DT_MARKDOWN ? "**" : "",
			tripped ? " (exit status 1)" : "",
			!partial ? ""
			: c->incomplete == INC_FAIL
				? ": a trace is incomplete"
				: " on what the traces hold (--incomplete "
				  "allow): a trace is incomplete");
}

/* ---------------------------------------------------------------- main */

/* What the command line asks for. */
struct args {
	struct dt_diff_opts dopts;
	struct dt_summary_opts so;
	enum gate gate;
	const char *output, *junit;
	bool force;
	char **paths; /* BASE and NEW */
};

/* Parse the options into a and c; returns -1 to go on, else the exit
 * status (0 after --help). */
static int parse_args(int argc, char **argv, struct args *a, struct diff_ctx *c)
{
	static const struct option opts[] = {
		{ "threshold", required_argument, NULL, 'p' },
		{ "min-time", required_argument, NULL, 'm' },
		{ "fail-on", required_argument, NULL, 'g' },
		{ "top", required_argument, NULL, 't' },
		{ "format", required_argument, NULL, 'f' },
		{ "output", required_argument, NULL, 'o' },
		{ "force", no_argument, NULL, 'O' },
		{ "incomplete", required_argument, NULL, 'i' },
		{ "range", required_argument, NULL, 'R' },
		{ "with-warmup", no_argument, NULL, 'W' },
		{ "junit", required_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int ch;

	optind = 1;
	while ((ch = dt_getopt("diff", argc, argv, "ho:", opts)) != -1) {
		double v;
		switch (ch) {
		case 'p':
			if ((v = parse_fraction(optarg)) <= 0 || v > 10)
				return dt_usage_error(
					"diff",
					"--threshold takes a percentage "
					"above 0 and up to 1000%%, like 5%%");
			a->dopts.threshold = v;
			break;
		case 'm':
			if ((v = parse_time(optarg)) < 0 || v > 3600e9)
				return dt_usage_error(
					"diff", "--min-time takes a time up "
						"to 3600s, like 10us or 1ms");
			a->dopts.min_ns = v < 1 ? 1 : (uint64_t)v;
			break;
		case 'g': {
			int k = 1;
			while (k < 4 && strcmp(diff_gate_names[k], optarg))
				k++;
			if (k == 4)
				return dt_usage_error(
					"diff", "--fail-on takes regression, "
						"engine-change or any");
			a->gate = (enum gate)k;
			break;
		}
		case 't':
			if (dt_parse_top("diff", optarg, &c->top))
				return EXIT_USAGE;
			break;
		case 'f':
			if (dt_parse_format("diff", optarg, DT_FORMATS_ALL,
					    &c->format))
				return EXIT_USAGE;
			break;
		case 'o':
			a->output = optarg;
			break;
		case 'O':
			a->force = true;
			break;
		case 'i': {
			int k = 0;
			while (k < 3 &&
			       strcmp(diff_incomplete_names[k], optarg))
				k++;
			if (k == 3)
				return dt_usage_error(
					"diff", "--incomplete takes fail, "
						"error or allow");
			c->incomplete = (enum incomplete)k;
			break;
		}
		case 'R':
			a->so.range = optarg;
			break;
		case 'W':
			a->so.whole = true;
			break;
		case 'j':
			a->junit = optarg;
			break;
		case 'h':
			return diff_help(stdout), 0;
		default:
			return EXIT_USAGE;
		}
	}
	if (argc - optind != 2)
		return dt_usage_error("diff", "expected BASE and NEW (trace "
					      "files or folders)");
	a->paths = argv + optind;
	return -1;
}

/* What a reader must know before the numbers: traces cut short, other
 * GPUs, other cuDNN libraries. */
static void print_caveats(const struct diff_ctx *c)
{
	const struct dt_diff *d = c->d;
	const struct dt_summary *base = d->base, *next = d->next;
	const char *lead =
		c->format == DT_MARKDOWN ? "- warning: " : "warning: ";

	if (dt_print_unclean(c->out, c->format, base, lead) +
	    dt_print_unclean(c->out, c->format, next, lead))
		dt_para(c->out, c->format, "warn",
			"%soperations counted as added or removed may "
			"only be missing from an incomplete trace\n",
			lead);
	if (d->other_gpu)
		dt_para(c->out, c->format, NULL,
			"%snote: the runs were on different GPUs (%s, "
			"%s): their times differ for that too\n",
			c->format == DT_MARKDOWN ? "- " : "",
			base->devices[0].name, next->devices[0].name);
	if (d->other_cudnn)
		dt_para(c->out, c->format, NULL,
			"%snote: the runs used different cuDNN "
			"libraries (%s, %s)\n",
			c->format == DT_MARKDOWN ? "- " : "",
			cudnn_of(&base->files[0]), cudnn_of(&next->files[0]));
}

/* Text, Markdown or HTML: the runs, then section by section. */
static void print_sections(const struct diff_ctx *c, enum gate g)
{
	if (c->format == DT_MARKDOWN)
		fprintf(c->out, "## dnntrace diff\n\n");
	if (c->format == DT_HTML)
		dt_html_begin(c->out, "dnntrace diff");
	run_line(c, "base", c->base_name, c->d->base);
	run_line(c, "new", c->next_name, c->d->next);
	sampled_line(c, "base", c->d->base);
	sampled_line(c, "new", c->d->next);
	print_caveats(c);
	print_totals(c);
	print_steps(c);
	print_changes(c);
	print_engines(c);
	print_added(c, DT_ADDED);
	print_added(c, DT_REMOVED);
	print_replays(c);
	if (c->format == DT_TEXT || c->format == DT_HTML)
		print_calls(c);
	print_verdict(c, g);
	if (c->format == DT_HTML)
		dt_html_end(c->out);
}

/* The comparison to its output and the JUnit file; the exit status. */
static int write_outputs(struct diff_ctx *c, const struct args *a)
{
	struct dt_output out, jout;
	int rc = 0;

	if (!(c->out = dt_open_output(&out, a->output, a->force)))
		return EXIT_USAGE;
	c->color = c->format == DT_TEXT && dt_colors(!out.path);
	if (c->format == DT_JSON)
		diff_json(c, a->gate);
	else
		print_sections(c, a->gate);
	if (dt_close_output(&out, true))
		rc = EXIT_USAGE;
	if (a->junit) {
		FILE *f = dt_open_output(&jout, a->junit, a->force);
		if (f)
			diff_junit(c, a->gate, f);
		if (!f || dt_close_output(&jout, true))
			rc = EXIT_USAGE;
	}
	return rc;
}

int cmd_diff(int argc, char **argv)
{
	struct diff_ctx c = { .top = 20, .format = DT_TEXT };
	struct args a = { 0 };
	int rc = parse_args(argc, argv, &a, &c), rc2;

	if (rc >= 0)
		return rc;
	struct dt_summary *base = dt_load_summary(a.paths, 1, &a.so, &rc);
	if (!base)
		return rc;
	struct dt_summary *next = dt_load_summary(a.paths + 1, 1, &a.so, &rc2);
	if (!next) {
		dt_summary_free(base);
		return rc2;
	}
	if (rc2)
		rc = rc2; /* some input could not be read: exit 2 */
	struct dt_diff *d = dt_diff_new(base, next, &a.dopts);
	if (!d) {
		dt_error("out of memory");
		dt_summary_free(base);
		dt_summary_free(next);
		return 1;
	}
	c.d = d;
	c.base_name = a.paths[0];
	c.next_name = a.paths[1];
	rc2 = write_outputs(&c, &a);
	if (rc2)
		rc = rc2;
	if (!rc && a.gate != GATE_NONE && c.incomplete == INC_ERROR &&
	    diff_incomplete(d))
		rc = EXIT_USAGE;
	else if (!rc && diff_gate_tripped(d, a.gate, c.incomplete))
		rc = 1;
	dt_diff_free(d);
	dt_summary_free(base);
	dt_summary_free(next);
	return rc;
}
