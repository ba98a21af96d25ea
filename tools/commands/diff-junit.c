/*
 * diff-junit.c - `dnntrace diff --junit FILE`: the gate's verdicts as the
 * JUnit XML CI systems read (analyzer/DIFF.md, "JUnit").
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diff.h"
#include "dt-steps.h"

/* --------------------------------------------------------------- junit */

/* JUnit XML, as CI systems read test reports: a test case per quantity
 * the gate can judge (each input's completeness, each operation compared)
 * and per total, which no gate judges. A case fails where the gate trips,
 * is an error where it could not judge (an incomplete input with
 * --incomplete error: exit status 2), and is skipped where no gate
 * judges. */
enum outcome { CASE_PASS, CASE_FAILURE, CASE_ERROR, CASE_SKIPPED };
static const char *const outcome_tags[] = { NULL, "failure", "error",
					    "skipped" };

struct junit {
	FILE *f;
	size_t counts[4]; /* by outcome; CASE_PASS: every test case */
	bool count_only;  /* a first pass counts, for the suite's attributes */
};

static char *xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	va_end(ap);
	return s;
}

static void xml_attr(FILE *f, const char *name, const char *v)
{
	fprintf(f, " %s=\"", name);
	dt_html_escape(f, v);
	fputc('"', f);
}

/* One test case: its outcome, why (a failure's type, an error's or a
 * skip's reason) and the numbers a failure or an error carries. */
static void junit_case(struct junit *j, const char *cls, const char *name,
		       enum outcome o, const char *why, const char *numbers)
{
	const char *tag = outcome_tags[o];

	j->counts[CASE_PASS]++;
	if (o != CASE_PASS)
		j->counts[o]++;
	if (j->count_only)
		return;
	fputs("    <testcase", j->f);
	xml_attr(j->f, "classname", cls);
	xml_attr(j->f, "name", name);
	if (o == CASE_PASS) {
		fputs(" time=\"0\"/>\n", j->f);
		return;
	}
	fprintf(j->f, " time=\"0\">\n      <%s", tag);
	xml_attr(j->f, "message", why);
	if (o == CASE_SKIPPED) {
		fputs("/>\n", j->f);
	} else {
		xml_attr(j->f, "type", why);
		fputs(">", j->f);
		dt_html_escape(j->f, numbers);
		fprintf(j->f, "</%s>\n", tag);
	}
	fputs("    </testcase>\n", j->f);
}

static void junit_complete(struct junit *j, const struct diff_ctx *c,
			   enum gate g, const char *label, const char *name,
			   const struct dt_summary *s)
{
	static const char cls[] = "dnntrace.diff.complete";
	static const char lacks[] = "a trace is cut short or damaged, or "
				    "records were lost or dropped";
	char *n = xasprintf("%s %s", label, name);

	if (g == GATE_NONE)
		junit_case(j, cls, n, CASE_SKIPPED, "not gated: no --fail-on",
			   NULL);
	else if (c->incomplete == INC_ALLOW)
		junit_case(j, cls, n, CASE_SKIPPED,
			   "not gated: --incomplete allow", NULL);
	else if (dt_summary_complete(s))
		junit_case(j, cls, n, CASE_PASS, NULL, NULL);
	else if (c->incomplete == INC_ERROR)
		junit_case(j, cls, n, CASE_ERROR,
			   "incomplete: not judged (exit status 2)", lacks);
	else
		junit_case(j, cls, n, CASE_FAILURE, "incomplete", lacks);
	free(n);
}

static void junit_op(struct junit *j, const struct diff_ctx *c, enum gate g,
		     const struct dt_diff_op *o)
{
	const struct dt_diff *d = c->d;
	const char *trips = diff_op_trips(o, g);
	char cls[64], b[6][40], e1[24], e2[24];
	char *name = xasprintf("%s%s%s", dt_op_kind_key(o->kind),
			       *o->brief ? " " : "", o->brief);
	char *numbers = NULL;

	snprintf(cls, sizeof(cls), "dnntrace.diff.op.%s",
		 dt_op_kind_key(o->kind));
	if (trips)
		numbers = xasprintf(
			"%s: base median %s, new median %s, change %+.1f%% "
			"(%s per execution); threshold %.0f%% and %s; base "
			"range %s..%s; executions %" PRIu64 "/%" PRIu64
			"; engine %s -> %s",
			trips, dt_fmt_ns(o->base.median_ns, b[0], sizeof(b[0])),
			dt_fmt_ns(o->next.median_ns, b[1], sizeof(b[1])),
			100 * o->change,
			diff_delta_str(o->delta_ns, b[2], sizeof(b[2])),
			100 * d->opts.threshold,
			dt_fmt_ns(d->opts.min_ns, b[3], sizeof(b[3])),
			dt_fmt_ns(o->base.min_ns, b[4], sizeof(b[4])),
			dt_fmt_ns(o->base.max_ns, b[5], sizeof(b[5])),
			o->base.count, o->next.count,
			diff_engine_str(o, &o->base, e1, sizeof(e1)),
			diff_engine_str(o, &o->next, e2, sizeof(e2)));
	if (g == GATE_NONE)
		junit_case(j, cls, name, CASE_SKIPPED,
			   "not gated: no --fail-on", NULL);
	else
		junit_case(j, cls, name, trips ? CASE_FAILURE : CASE_PASS,
			   trips, numbers);
	free(numbers);
	free(name);
}

static void junit_qty(struct junit *j, const struct diff_ctx *c, enum gate g,
		      const struct dt_diff_qty *q)
{
	const struct dt_diff *d = c->d;
	const char *trips = diff_qty_trips(q, g);
	char cls[64], b[4][32];
	char *numbers = NULL;

	snprintf(cls, sizeof(cls), "dnntrace.diff.%s", dt_qty_key(q->kind));
	if (trips)
		numbers = xasprintf(
			"%s: base %s, new %s per step, change %+.1f%%; "
			"threshold %.0f%% and %s per step; step-to-step "
			"noise %s",
			trips, dt_fmt_ns((uint64_t)q->base, b[0], sizeof(b[0])),
			dt_fmt_ns((uint64_t)q->next, b[1], sizeof(b[1])),
			100 * q->change, 100 * d->opts.threshold,
			dt_fmt_ns((uint64_t)q->floor_ns, b[2], sizeof(b[2])),
			dt_fmt_ns((uint64_t)q->noise_ns, b[3], sizeof(b[3])));
	if (g == GATE_NONE)
		junit_case(j, cls, q->name, CASE_SKIPPED,
			   "not gated: no --fail-on", NULL);
	else
		junit_case(j, cls, q->name, trips ? CASE_FAILURE : CASE_PASS,
			   trips, numbers);
	free(numbers);
}

static void junit_total(struct junit *j, const char *what, uint64_t b,
			uint64_t n, bool time)
{
	char x[32], y[32];
	char *why;

	if (time)
		why = xasprintf("not gated: base %s, new %s",
				dt_fmt_ns(b, x, sizeof(x)),
				dt_fmt_ns(n, y, sizeof(y)));
	else
		why = xasprintf("not gated: base %" PRIu64 ", new %" PRIu64, b,
				n);
	junit_case(j, "dnntrace.diff.total", what, CASE_SKIPPED, why, NULL);
	free(why);
}

static void junit_cases(struct junit *j, const struct diff_ctx *c, enum gate g)
{
	const struct dt_summary *b = c->d->base, *n = c->d->next;

	junit_complete(j, c, g, "base", c->base_name, b);
	junit_complete(j, c, g, "new", c->next_name, n);
	for (size_t i = 0; i < c->d->n_qty; i++)
		junit_qty(j, c, g, &c->d->qty[i]);
	for (size_t i = 0; i < c->d->n_ops; i++)
		junit_op(j, c, g, &c->d->ops[i]);
	junit_total(j, "GPU time in cuDNN operations", b->cudnn_ns, n->cudnn_ns,
		    true);
	junit_total(j, "GPU time in other kernels", diff_other_ns(b),
		    diff_other_ns(n), true);
	junit_total(j, "memory copies and sets", b->copy_ns, n->copy_ns, true);
	junit_total(j, "host time inside cuDNN calls", b->host_ns, n->host_ns,
		    true);
	junit_total(j, "cuDNN calls", b->calls, n->calls, false);
	junit_total(j, "cuDNN op executions", b->ops, n->ops, false);
}

void diff_junit(const struct diff_ctx *c, enum gate g, FILE *f)
{
	struct junit j = { .f = f, .count_only = true };
	char *suite =
		xasprintf("dnntrace diff --fail-on %s", diff_gate_names[g]);

	junit_cases(&j, c, g);
	fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n", f);
	for (int level = 0; level < 2; level++) {
		fprintf(f, "%s<%s", level ? "  " : "",
			level ? "testsuite" : "testsuites");
		xml_attr(f, "name", suite);
		fprintf(f,
			" tests=\"%zu\" failures=\"%zu\" errors=\"%zu\" "
			"skipped=\"%zu\" time=\"0\">\n",
			j.counts[CASE_PASS], j.counts[CASE_FAILURE],
			j.counts[CASE_ERROR], j.counts[CASE_SKIPPED]);
	}
	j = (struct junit){ .f = f };
	junit_cases(&j, c, g);
	fputs("  </testsuite>\n</testsuites>\n", f);
	free(suite);
}
