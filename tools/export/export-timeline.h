/*
 * export-timeline.h - the timeline's layout, which `--format chrome` and
 * `--format perfetto` share. Private to tools/.
 *
 * The layout takes a trace's session and decides what is on the timeline:
 * which track each event goes to (tracks are named by the keys below),
 * which events the window keeps, where dnntrace's marks (records lost,
 * trace incomplete) and the gaps in GPU recording go, and in what order
 * the end of a trace comes (ranges, gap, mark). An encoder (one per
 * format) is handed these events and writes them: it decides how a track,
 * a slice, its arguments and an arrow are spelled, never what is there.
 */
#ifndef EXPORT_TIMELINE_H
#define EXPORT_TIMELINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dt-analyzer.h"
#include "export.h"

/* Track keys, unique within a process: a host thread's is its tid (below
 * 2^22, pid_max's most); the others are above any a kernel hands out. */
#define DT_TL_GPU         (1u << 30)
#define DT_TL_OPS         (1u << 19) /* or'ed into a stream's: its op track */
#define DT_TL_STREAM_MASK (DT_TL_OPS - 1)
#define DT_TL_LAUNCHES    (DT_TL_GPU - 1) /* CUDA graph launches */
#define DT_TL_GPU_STATE   (DT_TL_GPU - 2) /* GPU recording gaps */
#define DT_TL_MARKS       (DT_TL_GPU - 3) /* dnntrace's own marks */
#define DT_TL_DRAM        (DT_TL_GPU - 4) /* + 2 per GPU: read, written */
#define DT_TL_RANGES      (DT_TL_GPU - 5) /* a process's start/end NVTX ranges */
#define DT_TL_PROCESS     0

/* The track of a GPU stream's kernels, copies and sets. */
static inline uint32_t dt_tl_stream(uint32_t device, uint32_t stream)
{
	return DT_TL_GPU | (device & 0x3ff) << 20 |
	       (stream & DT_TL_STREAM_MASK);
}

/* What an encoder is handed, trace after trace; enc is its state. Times
 * are the trace's CLOCK_MONOTONIC ns (dt_export_ns places them). */
struct dt_tl_encoder {
	/* trace number i of the export begins, as process pid */
	void (*trace_begin)(void *enc, const struct dt_export_trace *t,
			    uint32_t pid, size_t i);
	/* the session is read through: what waits is written now */
	void (*trace_end)(void *enc);
	/* a GPU the trace ran on; NULL: not wanted */
	void (*device)(void *enc, const struct dt_device *d);
	/* a host thread's name, name_len bytes */
	void (*thread)(void *enc, uint32_t tid, const char *name,
		       size_t name_len);
	/* every call and graph launch, where arrows to their kernels start;
	 * shown: in the window, a slice on its thread (or on
	 * DT_TL_LAUNCHES) */
	void (*call)(void *enc, const struct dt_call *c, bool shown);
	void (*launch)(void *enc, const struct dt_graph_launch *l, bool shown);
	/* a kernel, copy or set on track (dt_tl_stream), with an arrow from
	 * its call or graph launch */
	void (*gpu)(void *enc, const struct dt_activity *a, uint32_t track);
	/* an op execution on track (its first kernel's stream | DT_TL_OPS) */
	void (*op)(void *enc, const struct dt_op *op, uint32_t track);
	/* a GPU's DRAM GB/s read and written from t */
	void (*dram)(void *enc, uint64_t t, uint32_t device,
		     const double gbps[2]);
	/* an instant on the process: what went missing */
	void (*mark)(void *enc, uint64_t t, const char *name, const char *what);
	/* GPU not recorded from from to until, on DT_TL_GPU_STATE */
	void (*gap)(void *enc, uint64_t from, uint64_t until, const char *why);
	/* an NVTX range, the i-th of the session's */
	void (*range)(void *enc, const struct dt_range *r, size_t i);
};

/* Lay out the n traces of t, in order, through e; pids gets the pid each
 * is exported as, notes how each ended. Returns an exit code. */
int dt_tl_export(const struct dt_tl_encoder *e, void *enc,
		 const struct dt_export_trace *t, size_t n, uint32_t *pids,
		 struct dt_export_note *notes);

#endif /* EXPORT_TIMELINE_H */
