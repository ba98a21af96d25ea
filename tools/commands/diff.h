/*
 * diff.h - what the parts of `dnntrace diff` share: the gate, how an
 * incomplete input counts, what a diff is printed with, and the words
 * the text, the JSON and the JUnit file use (cmd-diff.c, diff-json.c,
 * diff-junit.c).
 */
#ifndef DT_DIFF_CMD_H
#define DT_DIFF_CMD_H

#include <stdbool.h>
#include <stdio.h>

#include "dt-analyzer.h"
#include "tools.h"

#define DIFF_SCHEMA_VERSION 1

enum gate { GATE_NONE, GATE_REGRESSION, GATE_ENGINE, GATE_ANY };

extern const char *const diff_gate_names[];

/* What an incomplete input (dt_trace_complete()) does to the gate. */
enum incomplete { INC_FAIL, INC_ERROR, INC_ALLOW };
extern const char *const diff_incomplete_names[];

struct diff_ctx {
	FILE *out;
	enum dt_format format;
	bool color;
	long top;
	const struct dt_diff *d;
	const char *base_name, *next_name;
	enum incomplete incomplete;
};

bool diff_incomplete(const struct dt_diff *d);
/* Whether gate g trips on d (an incomplete input trips it unless inc
 * says otherwise). */
bool diff_gate_tripped(const struct dt_diff *d, enum gate g,
		       enum incomplete inc);
/* What of an operation or a quantity per step trips gate g, in words;
 * NULL when nothing. */
const char *diff_op_trips(const struct dt_diff_op *o, enum gate g);
const char *diff_qty_trips(const struct dt_diff_qty *q, enum gate g);
const char *diff_engine_str(const struct dt_diff_op *o,
			    const struct dt_diff_side *s, char *buf,
			    size_t size);
const char *diff_delta_str(int64_t ns, char *buf, size_t size);
uint64_t diff_other_ns(const struct dt_summary *s);

/* The diff as JSON, schema dnntrace.diff (diff-json.c). */
void diff_json(const struct diff_ctx *c, enum gate g);
/* The gate's verdicts as JUnit XML (diff-junit.c). */
void diff_junit(const struct diff_ctx *c, enum gate g, FILE *f);

#endif /* DT_DIFF_CMD_H */
