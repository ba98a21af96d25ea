/*
 * diff.h - what the parts of `dnntrace diff` share: the gate, how an
 * incomplete input counts, what a diff is printed with, and the words
 * the text and the JUnit file both use (cmd-diff.c, diff-junit.c).
 */
#ifndef DT_DIFF_CMD_H
#define DT_DIFF_CMD_H

#include <stdbool.h>
#include <stdio.h>

#include "dt-analyzer.h"
#include "tools.h"

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
/* What of an operation or a quantity per step trips gate g, in words;
 * NULL when nothing. */
const char *diff_op_trips(const struct dt_diff_op *o, enum gate g);
const char *diff_qty_trips(const struct dt_diff_qty *q, enum gate g);
const char *diff_engine_str(const struct dt_diff_op *o,
			    const struct dt_diff_side *s, char *buf,
			    size_t size);
const char *diff_delta_str(int64_t ns, char *buf, size_t size);
uint64_t diff_other_ns(const struct dt_summary *s);

/* The gate's verdicts as JUnit XML (diff-junit.c). */
void diff_junit(const struct diff_ctx *c, enum gate g, FILE *f);

#endif /* DT_DIFF_CMD_H */
