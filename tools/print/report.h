/*
 * report.h - the parts of `dnntrace report`, private to tools/: what the
 * command (commands/cmd-report.c) hands the printers of its sections,
 * and those sections: the facts at its head (report-facts.c), the GPU
 * time, findings, operations, functions and ranges in text, Markdown or
 * HTML (report-sections.c), and the whole report as JSON
 * (report-json.c). The sections other views share (report-gpu.c,
 * report-ranks.c, report-dram.c, the pictures of report-html.c and
 * report-roofline.c) are declared in tools.h.
 */
#ifndef REPORT_H
#define REPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "dt-analyzer.h"
#include "tools.h"

enum dt_report_sort {
	SORT_GPU,
	SORT_COUNT,
	SORT_MEAN,
	SORT_MAX,
	SORT_HOST,
	SORT_ROOF
};

/* --sort's words, NULL after the last; and the headings' */
extern const char *const dt_report_sort_names[];
extern const char *const dt_report_sort_words[];

/* What the report is printed from, and how. */
struct dt_report {
	FILE *out;
	enum dt_format format;
	bool color;
	bool wide;
	bool all_ranks; /* a Traces row per rank however many */
	long top;
	enum dt_report_sort sort;
	const struct dt_summary *s;
};

/* part as a percentage of whole, 0 when whole is */
double dt_report_share(uint64_t part, uint64_t whole);

/* The problems in report order (c->sort), *n of them; the functions by
 * host time, longest first. Indices into s->problems and s->apis, for
 * the caller to free; NULL when memory is short. */
uint32_t *dt_report_problem_order(const struct dt_report *c, size_t *n);
uint32_t *dt_report_api_order(const struct dt_summary *s);

/* The facts at the report's head: the trace (or traces), GPUs, how the
 * recording ended, totals, what was lost, the peaks (report-facts.c). */
void dt_report_facts(const struct dt_report *c);

/* The report's sections (report-sections.c): GPU time, NVTX ranges (only
 * when the traces hold some), findings, operations by problem, cuDNN
 * functions by host time. */
void dt_report_time(const struct dt_report *c);
void dt_report_ranges(const struct dt_report *c);
void dt_report_findings(const struct dt_report *c);
void dt_report_ops(const struct dt_report *c);
void dt_report_apis(const struct dt_report *c);

/* The whole report as JSON, schema dnntrace.report (report-json.c). */
void dt_report_json(const struct dt_report *c);

#endif /* REPORT_H */
