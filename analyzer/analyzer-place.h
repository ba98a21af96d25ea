/*
 * analyzer-place.h - the time an op or a piece of GPU work is placed by
 * against the steady state's cut (analyzer/REPORT.md, STEADY STATE): the
 * summary's cut points, the views that list what it counts
 * (dt_sum_op_t, dt_activity.placed) and the fusion analysis place it
 * alike, so that each puts it on the same side. GPU work's is worked out
 * once, by the model, as it hands each activity out. Private to
 * analyzer/; where the cut falls is analyzer-summary-cut.c's.
 */
#ifndef DT_ANALYZER_PLACE_H
#define DT_ANALYZER_PLACE_H

#include <stdint.h>

#include "dt-ops.h"
#include "dt-session.h"

/* An op: its GPU work's time, on the side of the cut its kernels are (a
 * replay's call is old), else its call's. */
static inline uint64_t dt_place_op(const struct dt_op *op)
{
	return op->kernels && op->gpu_start ? op->gpu_start : op->t_begin;
}

/* The op executions (else calls) whose work was seen last: their first
 * kernel's start. Zeroed when a trace begins; fed every timed activity,
 * in the order consumers see them. */
struct dt_place_calls {
	struct {
		uint64_t call, t;
	} last[64];
};

/* GPU work: when the first kernel seen of its op execution started, else
 * of its call's: a's start for the first, that of the first for the others
 * (a call's kernels may come between other streams'). A kernel replayed
 * from a CUDA graph has the call that captured it, long before: one of no
 * execution is on its own. */
static inline uint64_t dt_place_work(struct dt_place_calls *pc,
				     const struct dt_activity *a)
{
	uint64_t key = a->exec ? a->exec << 1 | 1 : a->call << 1;
	size_t i = key % (sizeof(pc->last) / sizeof(pc->last[0]));

	if (!a->call || (!a->exec && a->kernel && a->kernel->graph_id))
		return a->start;
	if (pc->last[i].call != key) {
		pc->last[i].call = key;
		pc->last[i].t = a->start;
	}
	return pc->last[i].t;
}

#endif /* DT_ANALYZER_PLACE_H */
