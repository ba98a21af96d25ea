/*
 * report-facts.c - the facts at the head of `dnntrace report`: the trace
 * (or the traces of a job) and its program, the GPUs, how the recording
 * ended and what it lost, the totals, CUDA graphs, restored plans,
 * sampling, and the peaks the rates are measured against; as aligned
 * "label value" lines, a Markdown list or an HTML description list.
 *
 * It lays out the analyzer's summary; it works nothing out.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dt-analyzer.h"
#include "dt-steps.h"
#include "report.h"
#include "tools.h"

/* "label value" lines of the header: a list item in Markdown, a term and
 * its description in HTML (an empty label goes on describing the last
 * term), of class cls when not NULL. */
static void vfact(const struct dt_report *c, const char *cls, const char *label,
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

static void fact(const struct dt_report *c, const char *label, const char *fmt,
		 ...) __attribute__((format(printf, 3, 4)));
static void fact(const struct dt_report *c, const char *label, const char *fmt,
		 ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfact(c, NULL, label, fmt, ap);
	va_end(ap);
}

/* What a trace lacks, said where it is seen first. */
static void warn_fact(const struct dt_report *c, const char *label,
		      const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void warn_fact(const struct dt_report *c, const char *label,
		      const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfact(c, "warn", label, fmt, ap);
	va_end(ap);
}

/* CUDA graphs: launches, replays, and what could not be tied to calls. */
static void print_graphs(const struct dt_report *c)
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
		fact(c, "", "%s",
		     "a trace predates CUDA graph records (format 1.0): "
		     "its replayed kernels count as other kernels");
}

/* Execution plans restored from their JSON, and those whose graph the
 * trace does not hold. */
static void print_plans(const struct dt_report *c)
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

/* The program's steps (dt-steps.h): how many, start-up, per step. */
static void print_steps(const struct dt_report *c)
{
	char steps[1024];

	if (!c->s->steps)
		return;
	dt_steps_text(c->s->steps, steps, sizeof(steps));
	fact(c, "steps", "%s", steps);
}

/* Sampled GPU recording: what the GPU numbers below come from. */
static void print_sampling(const struct dt_report *c)
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

/* Whether the libraries whose kernels count as lib's were loaded or
 * called (the first of them is libs[first]). */
static bool lib_used(const struct dt_summary *s, enum dt_lib lib, size_t *first)
{
	bool used = false;

	*first = s->n_libs;
	for (size_t i = 0; i < s->n_libs; i++) {
		const struct dt_sum_lib *l = &s->libs[i];
		if (dt_lib_of_library(l->library) != lib)
			continue;
		used |= l->version || l->file || l->calls;
		if (*first == s->n_libs)
			*first = i;
	}
	return used;
}

/* A line per wrapped library the trace says something of, as info has
 * it: "DTT  10200, /path/libdtt.so.1.2.0"; and for one not loaded and
 * never called whose kernels ran, that it is linked statically. */
static void print_libraries(const struct dt_report *c)
{
	const struct dt_summary *s = c->s;
	char text[320];
	size_t first;

	for (size_t i = 0; i < s->n_libs; i++) {
		const struct dt_sum_lib *l = &s->libs[i];
		enum dt_lib k = dt_lib_of_library(l->library);
		if (l->version || l->file)
			fact(c, l->display, "%s%s%s",
			     l->version ? l->version : "",
			     l->version && l->file ? ", " : "",
			     l->file ? l->file : "");
		else if (k != DT_LIB_OTHER && !lib_used(s, k, &first) &&
			 first == i &&
			 dt_static_text(l->library, s->other_ns[k],
					s->other_count[k], text, sizeof(text)))
			fact(c, l->display, "%s", text);
	}
}

/* What was traced: the trace (or how many), its program and process, the
 * libraries, and the GPUs. */
static void print_traced(const struct dt_report *c)
{
	const struct dt_summary *s = c->s;
	const struct dt_sum_file *f = &s->files[0];
	char b1[32], b2[32];

	if (s->n_files == 1) {
		fact(c, "trace", "%s", f->path);
		if (f->program)
			fact(c, "program", "%s", f->program);
		fact(c, "process", "%s, pid %u%s%s", f->host ? f->host : "?",
		     f->pid, f->rank ? ", " : "", f->rank ? f->rank : "");
		if (dt_sum_cudnn_only(s) && (f->cudnn || f->cudnn_version))
			fact(c, "cuDNN", "%s%s%s",
			     f->cudnn_version ? f->cudnn_version : "",
			     f->cudnn_version && f->cudnn ? ", " : "",
			     f->cudnn ? f->cudnn : "");
		else if (!dt_sum_cudnn_only(s))
			print_libraries(c);
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
}

/* How the traces' recordings ended, added up. */
struct endings {
	uint64_t lost, dropped;
	uint64_t span; /* the longest from first to last call */
	size_t unclean, partial;
	bool lost_exact;
};

static void add_endings(const struct dt_summary *s, struct endings *e)
{
	*e = (struct endings){ .lost_exact = true };
	for (size_t i = 0; i < s->n_files; i++) {
		e->lost += s->files[i].lost;
		e->lost_exact &= s->files[i].lost_exact;
		e->dropped += s->files[i].gpu_dropped;
		e->unclean += s->files[i].end != DT_FILE_CLEAN;
		e->partial += !s->files[i].complete;
		if (s->files[i].t_end > s->files[i].t_begin &&
		    s->files[i].t_end - s->files[i].t_begin > e->span)
			e->span = s->files[i].t_end - s->files[i].t_begin;
	}
}

/* How the recording ended, and what an incomplete trace leaves out. */
static void print_ended(const struct dt_report *c, const struct endings *e)
{
	const struct dt_summary *s = c->s;
	const struct dt_sum_file *f = &s->files[0];

	if (s->n_files == 1 && f->end != DT_FILE_CLEAN) {
		warn_fact(c, "ended", "%s", f->ended);
	} else if (s->n_files == 1) {
		fact(c, "ended", "%s", f->ended);
	} else {
		fact(c, "ended", "%zu of %zu cleanly", s->n_files - e->unclean,
		     s->n_files);
		for (size_t i = 0; i < s->n_files; i++)
			if (!s->files[i].complete)
				warn_fact(c, "", "%s: incomplete, %s",
					  s->files[i].path,
					  dt_incomplete_why(&s->files[i]));
	}
	if (e->partial && s->n_files == 1 && f->end != DT_FILE_CLEAN)
		warn_fact(c, "", "%s",
			  "what the trace lacks is not in the "
			  "numbers below");
	else if (e->partial && s->n_files == 1)
		warn_fact(c, "",
			  "the trace is incomplete, %s: what it lacks is not "
			  "in the numbers below",
			  dt_incomplete_why(f));
	else if (e->partial)
		warn_fact(c, "", "%s",
			  "what incomplete traces lack is not in "
			  "the numbers below");
}

/* "DTT 2, cuDNN 0": op executions by library, the libraries of calls not
 * known left out. */
static const char *ops_by_library(const struct dt_summary *s, char *buf,
				  size_t size)
{
	size_t n = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < s->n_libs && n < size; i++) {
		if (!strcmp(s->libs[i].library, "?"))
			continue;
		int w = snprintf(buf + n, size - n, "%s%s %" PRIu64,
				 n ? ", " : "", s->libs[i].display,
				 s->libs[i].ops);
		n += w > 0 ? (size_t)w : 0;
	}
	return buf;
}

static void print_totals(const struct dt_report *c, const struct endings *e)
{
	const struct dt_summary *s = c->s;
	char own[64] = "", b1[32], by[256];

	if (s->own_calls)
		snprintf(own, sizeof(own), " and %" PRIu64 " of dnntrace's own",
			 s->own_calls);
	if (!dt_sum_cudnn_only(s)) {
		fact(c, "totals",
		     "%" PRIu64 " calls (%" PRIu64 " failed)%s, %" PRIu64
		     " op executions (%s), %" PRIu64 " kernels; %s between "
		     "the first and the last call%s",
		     s->calls, s->failed, own, s->ops,
		     ops_by_library(s, by, sizeof(by)), s->kernels,
		     dt_fmt_ns(e->span, b1, sizeof(b1)),
		     s->n_files > 1 ? " (longest)" : "");
		return;
	}
	fact(c, "totals",
	     "%" PRIu64 " calls (%" PRIu64 " failed)%s, %" PRIu64
	     " cuDNN op executions, %" PRIu64 " kernels; %s between the "
	     "first and the last call%s",
	     s->calls, s->failed, own, s->ops, s->kernels,
	     dt_fmt_ns(e->span, b1, sizeof(b1)),
	     s->n_files > 1 ? " (longest)" : "");
}

static void print_lost(const struct dt_report *c, const struct endings *e)
{
	const struct dt_summary *s = c->s;

	if (s->n_files == 1)
		fact(c, "lost", "%s, %" PRIu64 " GPU records dropped by CUPTI",
		     s->files[0].lost_text, e->dropped);
	else
		fact(c, "lost",
		     "%s%" PRIu64 " records lost, %" PRIu64
		     " GPU records dropped by CUPTI",
		     e->lost_exact ? "" : "at least ", e->lost, e->dropped);
}

/* The peaks the rates are measured against, and where they come from. */
static void print_peaks(const struct dt_report *c)
{
	const struct dt_peaks *pk = dt_summary_peaks(c->s, -1);
	char b1[32], b2[32];

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
}

void dt_report_facts(const struct dt_report *c)
{
	struct endings e;

	if (c->format == DT_MARKDOWN)
		fprintf(c->out, "# dnntrace report\n\n");
	if (c->format == DT_HTML)
		fputs("<dl class=\"facts\">\n", c->out);
	print_traced(c);
	add_endings(c->s, &e);
	print_ended(c, &e);
	print_totals(c, &e);
	print_graphs(c);
	print_plans(c);
	print_sampling(c);
	print_steps(c);
	print_lost(c, &e);
	print_peaks(c);
	if (c->format == DT_HTML)
		fputs("</dl>\n", c->out);
}
